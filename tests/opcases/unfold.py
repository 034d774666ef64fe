"""F.unfold / F.fold (im2col / col2im): kernel, dilation, padding, stride, batched and unbatched,
non-contiguous and empty-batch inputs, in both directions with gradients (each is the other's
backward)."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1)), "dilation/padding/stride"),
    (dict(kernel_size=3, padding=1), "same size"),
]


def _unfold_samples(dtype):
    for kwargs, tag in ARGS:
        yield Sample((make((2, 3, 7, 8), dtype),), kwargs, tag=tag)
        yield Sample((make((3, 7, 8), dtype, seed=1),), kwargs, tag=tag + " unbatched")
        yield Sample((make((2, 3, 8, 7), dtype, noncontig=True, seed=2),), kwargs, tag=tag + " noncontig")
    yield Sample((make((0, 3, 7, 8), dtype),), dict(kernel_size=2), tag="empty batch")
    yield Sample((make((4, 16, 31, 33), dtype, seed=3),), dict(kernel_size=3, padding=1, stride=2), tag="large")


def _fold_samples(dtype):
    for kwargs, tag in ARGS:
        x = F.unfold(make((2, 3, 7, 8), dtype, seed=4), **kwargs)  # the matching column shape
        yield Sample((make(tuple(x.shape), dtype, seed=5),), dict(kwargs, output_size=(7, 8)), tag=tag)
        yield Sample((make(tuple(x.shape[1:]), dtype, seed=6),), dict(kwargs, output_size=(7, 8)), tag=tag + " unbatched")


def _unfold(x, **kwargs):
    return F.unfold(x, **kwargs)


def _fold(x, **kwargs):
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        # The CPU sums overlapping columns in the 16-bit dtype, rounding at every add; the
        # device (like CUDA's col2im) sums in float32 and rounds once.
        return F.fold(x.float(), **kwargs).to(x.dtype)
    return F.fold(x, **kwargs)


CASES = [
    OpCase("unfold_im2col", ["aten::im2col", "aten::im2col.out"], _unfold, _unfold_samples, dtypes=FLOATS + HALFS,
           grad=True),
    OpCase("fold_col2im", ["aten::col2im", "aten::col2im.out"], _fold, _fold_samples, dtypes=FLOATS + HALFS, grad=True),
]
