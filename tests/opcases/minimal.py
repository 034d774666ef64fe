"""Cases for the minimal op set (csrc/aten/Minimal.cpp): fill, zero, views, copies."""
import torch

from ..cases import ALL, HALFS, SHAPES, OpCase, Sample, make, unary_samples


def _fill_samples(dtype):
    for s in SHAPES:
        yield Sample((make(s, dtype), 3), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), 1), tag="noncontig")
    yield Sample((make((5,), dtype), make((), dtype)), tag="tensor value")


def _view_samples(dtype):
    yield Sample((make((4, 6), dtype), (6, 4)))
    yield Sample((make((4, 6), dtype), (-1,)))
    yield Sample((make((0, 3), dtype), (3, 0)))
    yield Sample((make((), dtype), (1, 1)))


def _unfold_samples(dtype):
    yield Sample((make((10,), dtype), 0, 3, 2))
    yield Sample((make((4, 7), dtype), 1, 2, 1))
    yield Sample((make((4, 7), dtype, noncontig=True), 0, 4, 3))


def _copy_samples(dtype):
    for s in SHAPES:
        yield Sample((make(s, torch.float32), make(s, dtype)), tag=f"shape{s}")
    yield Sample((make((4, 6), torch.float64, noncontig=True), make((6, 4), dtype).t()), tag="noncontig both")
    yield Sample((make((4, 5), torch.int32), make((5,), dtype)), tag="broadcast src")


def _copy(dst, src):
    return dst.copy_(src)


def _fill(x, v):
    return x.fill_(v)


CASES = [
    OpCase("fill_", ["aten::fill_.Scalar", "aten::fill_.Tensor"], _fill, _fill_samples, dtypes=ALL + HALFS),
    OpCase("zero_", ["aten::zero_"], lambda x: x.zero_(), unary_samples, dtypes=ALL),
    OpCase("efficientzerotensor", ["aten::_efficientzerotensor"],
           lambda x: x + torch._efficientzerotensor(x.shape, dtype=x.dtype, device=x.device), unary_samples,
           dtypes=ALL),
    OpCase("view", ["aten::view"], lambda x, s: x.view(s), _view_samples, dtypes=ALL, grad=True),
    OpCase("reshape_alias", ["aten::_reshape_alias"], lambda x, s: x.t().reshape(s), _view_samples, dtypes=ALL),
    OpCase("unfold", ["aten::unfold"], lambda x, d, sz, st: x.unfold(d, sz, st), _unfold_samples, dtypes=ALL),
    OpCase("copy_", [], _copy, _copy_samples, dtypes=ALL + HALFS),
]
