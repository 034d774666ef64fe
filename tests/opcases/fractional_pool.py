"""Fractional max pooling (nn.FractionalMaxPool2d / 3d) with the caller's random samples (the
same on both devices): output sizes from 1 to the whole input, odd sizes, samples 0 and near 1,
non-contiguous samples and a samples batch larger than the input's; unbatched, empty batch,
non-contiguous and channels_last inputs; NaN (the last NaN wins), ties, -inf; float16 and
bfloat16 windows computed in their precision as the CPU does; gradients; out= forms; the CPU's
errors, an index outside the plane in the backward included."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

OP2 = torch.ops.aten.fractional_max_pool2d
OP3 = torch.ops.aten.fractional_max_pool3d


def _pool(op, x, kernel_size, output_size, samples):
    return op(x, kernel_size, output_size, samples)


def _samples(shape, dtype, seed=0):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).to(dtype)


def _frac2d_samples(dtype):
    x = make((2, 3, 9, 8), dtype)
    s = _samples((2, 3, 2), dtype)
    for k, o in (([2, 2], [4, 4]), ([3, 2], [5, 6]), ([2, 3], [1, 1]), ([1, 1], [9, 8]), ([4, 1], [6, 8])):
        yield Sample((OP2, x, k, o, s), tag=f"k{k} out{o}")
    yield Sample((OP2, make((3, 9, 8), dtype, seed=1), [2, 2], [5, 4], s[:1]), tag="unbatched")
    yield Sample((OP2, make((2, 3, 9, 8), dtype, noncontig=True, seed=2), [2, 2], [5, 4], s), tag="noncontig")
    yield Sample((OP2, x.contiguous(memory_format=torch.channels_last), [3, 2], [5, 6], s), tag="channels_last")
    yield Sample((OP2, make((0, 3, 9, 8), dtype), [2, 2], [4, 4], s[:0]), tag="empty batch")
    yield Sample((OP2, x, [2, 2], [0, 4], s), tag="zero output size")
    yield Sample((OP2, x, [2, 2], [4, 4], _samples((2, 2, 3), dtype, 3).transpose(1, 2)), tag="strided samples")
    yield Sample((OP2, x, [2, 2], [4, 4], _samples((5, 3, 2), dtype, 4)), tag="more samples than batches")
    edge = s.clone()
    edge[0, :, 0] = 0
    edge[1, :, 1] = 0.999
    yield Sample((OP2, x, [2, 3], [5, 4], edge), tag="samples 0 and 0.999")
    big = make((4, 16, 61, 57), dtype, seed=5)
    sb = _samples((4, 16, 2), dtype, 6)
    for k, o in (([3, 2], [29, 33]), ([2, 2], [40, 50]), ([5, 3], [20, 31])):
        yield Sample((OP2, big, k, o, sb), tag=f"large k{k} out{o}")
    yield Sample((F.fractional_max_pool2d, x), dict(kernel_size=2, output_ratio=0.5, _random_samples=s,
                                                      return_indices=True), tag="F.fractional_max_pool2d")
    ties = torch.randint(0, 3, (2, 3, 9, 8), generator=torch.Generator().manual_seed(7)).to(dtype)
    yield Sample((OP2, ties, [3, 3], [4, 4], s), tag="ties")
    nan = make((2, 3, 9, 8), dtype, seed=8)
    nan[0, 0, 1, 1] = nan[0, 0, 2, 2] = nan[1, 2, 8, 7] = float("nan")
    nan[1, 1] = -float("inf")
    yield Sample((OP2, nan, [3, 3], [4, 4], s), tag="NaN, -inf")
    # The CPU's errors.
    yield Sample((OP2, x, [2, 2], [4, 4], s[0]), tag="2-d samples raises")
    yield Sample((OP2, x, [2, 2], [4, 4], _samples((2, 3, 3), dtype)), tag="3 samples a plane raises")
    yield Sample((OP2, x, [2, 2], [4, 4], s[:1]), tag="fewer samples than batches raises")
    yield Sample((OP2, x, [2, 2], [4, 4], s[:, :2]), tag="samples of other channels raises")
    yield Sample((OP2, x, [2, 2], [4, 4], s.to(torch.float64 if dtype != torch.float64 else torch.float32)),
                 tag="samples of another dtype raises")
    yield Sample((OP2, x, [7, 2], [4, 4], s), tag="pool too large raises")
    yield Sample((OP2, make((2, 0, 9, 8), dtype), [2, 2], [4, 4], s[:, :0]), tag="zero channels raises")
    yield Sample((OP2, x[0, 0], [2, 2], [4, 4], s), tag="2-d input raises")
    yield Sample((OP2, x.long(), [2, 2], [4, 4], s.long()), tag="int64 raises")


def _frac3d_samples(dtype):
    x = make((2, 3, 7, 9, 8), dtype)
    s = _samples((2, 3, 3), dtype)
    for k, o in (([2, 2, 2], [3, 4, 4]), ([3, 2, 1], [4, 6, 7]), ([2, 3, 2], [1, 1, 1]), ([1, 1, 1], [7, 9, 8])):
        yield Sample((OP3, x, k, o, s), tag=f"k{k} out{o}")
    yield Sample((OP3, make((3, 7, 9, 8), dtype, seed=1), [2, 2, 2], [4, 5, 4], s[:1]), tag="unbatched")
    yield Sample((OP3, make((2, 3, 7, 9, 8), dtype, noncontig=True, seed=2), [2, 2, 2], [4, 5, 4], s),
                 tag="noncontig")
    yield Sample((OP3, x.contiguous(memory_format=torch.channels_last_3d), [3, 2, 1], [4, 6, 7], s),
                 tag="channels_last_3d")
    yield Sample((OP3, make((0, 3, 7, 9, 8), dtype), [2, 2, 2], [3, 4, 4], s[:0]), tag="empty batch")
    yield Sample((OP3, x, [2, 2, 2], [3, 4, 4], _samples((2, 3, 3), dtype, 3).transpose(1, 2).contiguous()
                  .transpose(1, 2)), tag="strided samples")
    big = make((2, 4, 21, 23, 19), dtype, seed=5)
    yield Sample((OP3, big, [2, 3, 2], [11, 13, 9], _samples((2, 4, 3), dtype, 6)), tag="large")
    yield Sample((F.fractional_max_pool3d, x), dict(kernel_size=2, output_ratio=0.5, _random_samples=s,
                                                      return_indices=True), tag="F.fractional_max_pool3d")
    nan = make((2, 3, 7, 9, 8), dtype, seed=8)
    nan[0, 0, 1, 1, 1] = nan[0, 0, 1, 2, 2] = nan[1, 2, 6, 8, 7] = float("nan")
    nan[1, 1] = -float("inf")
    yield Sample((OP3, nan, [3, 3, 3], [3, 4, 4], s), tag="NaN, -inf")
    # The CPU's errors.
    yield Sample((OP3, x, [2, 2, 2], [3, 4, 4], _samples((2, 3, 2), dtype)), tag="2 samples a plane raises")
    yield Sample((OP3, x, [6, 2, 2], [3, 4, 4], s), tag="pool too large raises")
    yield Sample((OP3, make((2, 0, 7, 9, 8), dtype), [2, 2, 2], [3, 4, 4], s[:, :0]), tag="zero channels raises")
    yield Sample((OP3, x[0, 0], [2, 2, 2], [3, 4, 4], s), tag="3-d input raises")
    yield Sample((OP3, x, [2, 2], [3, 4, 4], s), tag="2 kernel sizes raises")


def _backward(op, gy, x, kernel_size, output_size, indices):
    gi = op(gy, x, kernel_size, output_size, indices)
    if gi.device.type != "cpu":
        torch.ocl.synchronize()  # an index out of range is reported here
    return gi


def _backward_samples(dtype):
    b2 = torch.ops.aten.fractional_max_pool2d_backward
    x = make((2, 3, 9, 8), dtype)
    idx = OP2(x, [3, 2], [5, 6], _samples((2, 3, 2), dtype))[1]
    yield Sample((b2, make((2, 3, 5, 6), dtype, seed=1), x, [3, 2], [5, 6], idx), tag="2-d")
    # Strided grad only: the CPU (2.13) reads strided indices as if contiguous.
    yield Sample((b2, make((2, 3, 6, 5), dtype, seed=2).transpose(2, 3), x, [3, 2], [5, 6], idx),
                 tag="2-d strided grad")
    yield Sample((b2, make((2, 3, 5, 6), dtype, seed=3), x.contiguous(memory_format=torch.channels_last), [3, 2],
                  [5, 6], idx), tag="2-d channels_last input")
    yield Sample((b2, make((2, 3, 5, 6), dtype, seed=1), x, [3, 2], [5, 7], idx), tag="2-d wrong output size raises")
    yield Sample((b2, make((2, 3, 5, 6), dtype, seed=1), x, [3, 2], [5, 6], idx + 1000), tag="2-d bad index raises")
    b3 = torch.ops.aten.fractional_max_pool3d_backward
    x3 = make((2, 3, 7, 9, 8), dtype)
    idx3 = OP3(x3, [2, 2, 2], [3, 4, 4], _samples((2, 3, 3), dtype))[1]
    yield Sample((b3, make((2, 3, 3, 4, 4), dtype, seed=4), x3, [2, 2, 2], [3, 4, 4], idx3), tag="3-d")
    yield Sample((b3, make((2, 3, 4, 4, 3), dtype, seed=5).transpose(2, 4), x3, [2, 2, 2], [3, 4, 4], idx3),
                 tag="3-d strided grad")
    yield Sample((b3, make((3, 3, 4, 4), dtype, seed=6), x3[0], [2, 2, 2], [3, 4, 4], idx3[0]), tag="3-d unbatched")
    yield Sample((b3, make((2, 3, 3, 4, 4), dtype, seed=4), x3, [2, 2, 2], [3, 4, 5], idx3),
                 tag="3-d wrong output size raises")
    yield Sample((b3, make((2, 3, 3, 4, 4), dtype, seed=4), x3, [2, 2, 2], [3, 4, 4], idx3 - 10000),
                 tag="3-d bad index raises")


def _out(x, kernel_size, output_size, samples):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    idx = torch.empty(0, dtype=torch.long, device=x.device)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    if x.dim() == 4:
        torch.ops.aten.fractional_max_pool2d.output(x, kernel_size, output_size, samples, output=out, indices=idx)
        torch.ops.aten.fractional_max_pool2d_backward.grad_input(out * 2 + 1, x, kernel_size, output_size, idx,
                                                                 grad_input=gi)
    else:
        torch.ops.aten.fractional_max_pool3d.output(x, kernel_size, output_size, samples, output=out, indices=idx)
        torch.ops.aten.fractional_max_pool3d_backward.grad_input(out * 2 + 1, x, kernel_size, output_size, idx,
                                                                 grad_input=gi)
    return out, idx, gi


def _out_samples(dtype):
    yield Sample((make((2, 3, 9, 8), dtype), [3, 2], [5, 6], _samples((2, 3, 2), dtype)), tag="2-d")
    yield Sample((make((2, 3, 7, 9, 8), dtype), [2, 2, 2], [3, 4, 4], _samples((2, 3, 3), dtype)), tag="3-d")


CASES = [
    OpCase("fractional_max_pool2d", ["aten::fractional_max_pool2d.output",
                                     "aten::fractional_max_pool2d_backward.grad_input"],
           _pool, _frac2d_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("fractional_max_pool3d", ["aten::fractional_max_pool3d.output", "aten::fractional_max_pool3d_backward"],
           _pool, _frac3d_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("fractional_max_pool_backward", [], _backward, _backward_samples, dtypes=FLOATS + HALFS),
    OpCase("fractional_max_pool_out", ["aten::fractional_max_pool3d_backward.grad_input"], _out, _out_samples,
           dtypes=FLOATS + HALFS),
]
