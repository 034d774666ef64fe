"""Convolutions through convolution_overrideable / convolution_backward_overrideable: conv1d,
conv2d, conv3d and their transposes with stride, padding (numbers and "same"), dilation,
groups (depthwise included), output_padding, bias or none, 1x1 kernels, unbatched and empty
batches and non-contiguous inputs; gradients of input, weight and bias."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make


def _conv_samples(dtype):
    def w(*shape, seed=1):
        return make(shape, dtype, seed=seed, low=-1 if dtype.is_floating_point else -2, high=1 if dtype.is_floating_point else 3)

    x = make((2, 4, 9, 8), dtype, seed=2)
    yield Sample((F.conv2d, x, w(6, 4, 3, 3), w(6, seed=3)), tag="2d")
    yield Sample((F.conv2d, x, w(6, 4, 3, 2), w(6, seed=3)), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1)),
                 tag="2d stride/padding/dilation")
    yield Sample((F.conv2d, x, w(6, 2, 3, 3), None), dict(groups=2, padding=1), tag="2d groups")
    yield Sample((F.conv2d, x, w(8, 1, 5, 5), None), dict(groups=4, padding="same"), tag="2d depthwise same")
    yield Sample((F.conv2d, x, w(3, 4, 1, 1), None), tag="2d 1x1")
    yield Sample((F.conv2d, make((2, 4, 8, 9), dtype, noncontig=True, seed=4), w(3, 4, 2, 2), None), tag="2d noncontig")
    # Unpadded windows are views of the input at its own strides.
    yield Sample((F.conv2d, make((2, 4, 8, 9), dtype, noncontig=True, seed=11), w(3, 4, 1, 1), w(3, seed=3)),
                 dict(stride=2), tag="2d 1x1 stride noncontig")
    yield Sample((F.conv2d, make((2, 4, 9, 8), dtype, seed=12).contiguous(memory_format=torch.channels_last),
                  w(5, 4, 3, 2), None), dict(dilation=(1, 2)), tag="2d channels_last")
    yield Sample((F.conv2d, make((4, 6, 6), dtype, seed=5), w(3, 4, 2, 2), None), tag="2d unbatched")
    yield Sample((F.conv2d, make((0, 4, 6, 6), dtype), w(3, 4, 2, 2), None), tag="2d empty batch")
    yield Sample((F.conv1d, make((3, 4, 17), dtype, seed=6), w(5, 4, 3), w(5, seed=3)), dict(stride=2, padding=1),
                 tag="1d")
    yield Sample((F.conv3d, make((2, 4, 5, 6, 4), dtype, seed=7), w(6, 2, 3, 3, 2), w(6, seed=3)),
                 dict(stride=(1, 2, 1), padding=1, groups=2), tag="3d")
    yield Sample((F.conv_transpose2d, x, w(4, 3, 3, 3), w(3, seed=3)), dict(stride=2, padding=1, output_padding=1),
                 tag="transposed 2d")
    yield Sample((F.conv_transpose2d, x, w(4, 3, 2, 3), None),
                 dict(stride=(1, 2), padding=(0, 1), dilation=(2, 1), groups=2), tag="transposed 2d groups")
    yield Sample((F.conv_transpose1d, make((2, 4, 7), dtype, seed=8), w(4, 5, 4), None),
                 dict(stride=3, output_padding=2), tag="transposed 1d")
    yield Sample((F.conv_transpose3d, make((1, 2, 3, 3, 3), dtype, seed=9), w(2, 3, 2, 2, 2), None), dict(stride=2),
                 tag="transposed 3d")
    yield Sample((F.conv2d, make((4, 8, 33, 31), dtype, seed=10), w(16, 8, 3, 3), w(16, seed=3)), dict(padding=1),
                 tag="large")


def _conv(f, x, weight, bias, **kwargs):
    return f(x, weight, bias, **kwargs)


CASES = [
    OpCase("convolution", ["aten::convolution_overrideable", "aten::convolution_backward_overrideable"], _conv,
           _conv_samples, dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("convolution_half", [], _conv, _conv_samples, dtypes=HALFS, atol=5e-2, rtol=2e-2),
    OpCase("convolution_int", [], _conv, _conv_samples, dtypes=(torch.int64,)),
]
