"""2-D max and average pooling (and the 1-D forms ATen runs through them): kernel, stride,
padding, dilation, ceil_mode, count_include_pad, divisor_override; unbatched, empty batch and
non-contiguous inputs; windows of only -inf (the index is the window's first input element, as
on the CPU), NaN and ties; indices and gradients."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

MAX_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1)), "dilation"),
    (dict(kernel_size=3, stride=2, ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), "ceil_mode dilation"),
]
AVG_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), "exclude pad"),
    (dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), "ceil_mode exclude pad"),
    (dict(kernel_size=3, stride=2, padding=1, divisor_override=5), "divisor_override"),
]


def _inputs(dtype):
    yield make((2, 3, 9, 8), dtype), ""
    yield make((3, 7, 6), dtype, seed=1), " unbatched"
    yield make((2, 3, 8, 9), dtype, noncontig=True, seed=2), " noncontig"
    yield make((0, 3, 6, 6), dtype), " empty batch"
    yield make((4, 16, 33, 31), dtype, seed=3), " large"


def _max_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in MAX_ARGS:
            yield Sample((F.max_pool2d, x), dict(kwargs, return_indices=True), tag=tag + where)
    yield Sample((F.max_pool1d, make((2, 3, 11), dtype, seed=4)), dict(kernel_size=3, stride=2, return_indices=True),
                 tag="1d")
    if dtype.is_floating_point:
        inf = torch.full((1, 2, 4, 4), -float("inf"), dtype=dtype)
        yield Sample((F.max_pool2d, inf), dict(kernel_size=3, stride=1, padding=1, return_indices=True), tag="-inf")
        nan = make((1, 2, 4, 4), dtype, seed=5)
        nan[0, 0, 1, 1] = float("nan")
        yield Sample((F.max_pool2d, nan), dict(kernel_size=2, stride=1), tag="NaN")
    yield Sample((F.max_pool2d, torch.ones(1, 2, 4, 4, dtype=dtype)), dict(kernel_size=2, stride=1, return_indices=True),
                 tag="ties")


def _avg_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in AVG_ARGS:
            yield Sample((F.avg_pool2d, x), kwargs, tag=tag + where)
    yield Sample((F.avg_pool1d, make((2, 3, 11), dtype, seed=4)), dict(kernel_size=3, stride=2, padding=1), tag="1d")


def _pool(f, x, **kwargs):
    return f(x, **kwargs)


CASES = [
    OpCase("max_pool2d", ["aten::max_pool2d_with_indices.out", "aten::max_pool2d_with_indices_backward.grad_input"],
           _pool, _max_samples, dtypes=FLOATS, grad=True),
    OpCase("max_pool2d_other_dtypes", [], _pool, _max_samples, dtypes=HALFS + (torch.int64, torch.int32)),
    OpCase("avg_pool2d", ["aten::avg_pool2d.out", "aten::avg_pool2d_backward.grad_input"], _pool, _avg_samples,
           dtypes=FLOATS, grad=True),
    OpCase("avg_pool2d_other_dtypes", [], _pool, _avg_samples, dtypes=HALFS + (torch.int64,)),
]
