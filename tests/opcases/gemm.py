"""Cases for matrix products (csrc/ops/gemm.cpp): mm, addmm, bmm, baddbmm, addmv/mv, dot,
vdot, addr, and linear/matmul/einsum through them. Shapes cover 1x1, empty M/N/K, odd sizes
that straddle tile edges, the matrix-vector paths (M == 1 or N == 1), every transpose
combination, fully strided operands, broadcast (stride-0) batches and biases, beta/alpha
(incl. beta == 0 ignoring NaNs in self), out= with a wrong-shaped out, and in-place forms."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, INTS, OpCase, Sample, make

# (M, K, N): 1x1, empty M / K / N, matrix-vector, odd sizes across tile edges.
MKN = [(1, 1, 1), (0, 3, 4), (3, 0, 4), (3, 4, 0), (5, 7, 3), (1, 37, 20), (20, 37, 1), (40, 9, 1),
       (17, 33, 65), (70, 130, 91)]


def _mat(shape, dtype, seed, layout):
    """A (rows, cols) matrix: 'n' row-major, 't' column-major (a transposed view),
    's' fully strided (every other element of both dims)."""
    r, c = shape
    if layout == "t":
        return make((c, r), dtype, seed=seed).t()
    if layout == "s":
        return make((2 * r, c), dtype, seed=seed, noncontig=True)[::2]
    return make((r, c), dtype, seed=seed)


def _mm_samples(dtype):
    for i, (m, k, n) in enumerate(MKN):
        yield Sample((_mat((m, k), dtype, i, "n"), _mat((k, n), dtype, 50 + i, "n")), tag=f"{m}x{k}x{n} nn")
    for la in "nts":
        for lb in "nts":
            yield Sample((_mat((19, 23), dtype, 1, la), _mat((23, 21), dtype, 2, lb)), tag=f"{la}{lb}")
    yield Sample((_mat((1, 23), dtype, 3, "t"), _mat((23, 21), dtype, 4, "t")), tag="row-vector tt")
    yield Sample((_mat((40, 23), dtype, 5, "t"), _mat((23, 1), dtype, 6, "s")), tag="column-major gemv")
    yield Sample((make((2, 3), dtype), make((4, 5), dtype)), tag="shape mismatch")


def _mm_out(a, b, out):
    return torch.mm(a, b, out=out)


def _mm_out_samples(dtype):
    yield Sample((make((5, 7), dtype), make((7, 3), dtype), make((2, 2), dtype)), tag="resized out")
    yield Sample((make((4, 4), dtype), make((4, 4), dtype), make((4, 4), dtype).t()), tag="transposed out")


def _mm_alias(a, b):
    # out aliases an input: must be computed as if into a fresh tensor. (The CPU kernel
    # itself gets this wrong, so the CPU side computes the unaliased product as reference.)
    if a.device.type == "cpu":
        return torch.mm(a, b)
    return torch.mm(a, b, out=a)


def _addmm_samples(dtype):
    fp = dtype.is_floating_point
    ba = [(1, 1), (0.5, 2.0), (0, 1)] if fp else [(1, 1), (2, 3), (0, 1)]
    for j, (beta, alpha) in enumerate(ba):
        for i, bias_shape in enumerate([(21,), (19, 21), (1, 21), (19, 1), ()]):
            bias = make(bias_shape, dtype, seed=i + 10 * j)
            if beta == 0 and fp and bias.numel() > 0:
                bias = bias.clone().fill_(float("nan"))  # beta == 0 ignores self entirely
            yield Sample((bias, _mat((19, 23), dtype, i, "nt"[i % 2]), _mat((23, 21), dtype, j, "tn"[j % 2])),
                         dict(beta=beta, alpha=alpha), tag=f"bias{bias_shape} beta={beta} alpha={alpha}")
    yield Sample((make((4,), dtype), make((3, 0), dtype), make((0, 4), dtype)), tag="empty K")
    yield Sample((make((1,), dtype), make((1, 5), dtype), make((5, 1), dtype)), tag="1x1")
    yield Sample((make((5,), dtype), make((1, 8), dtype), make((8, 5), dtype).t().contiguous().t()),
                 tag="gemv M=1")


def _addmm_activation_out(bias, a, b, use_gelu):
    out = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.ops.aten._addmm_activation.out(bias, a, b, use_gelu=use_gelu, out=out)
    return out


def _addmm_inplace(bias, a, b, **kw):
    return bias.clone().addmm_(a, b, **kw)


def _addmm_inplace_samples(dtype):
    yield Sample((make((19, 21), dtype), make((19, 23), dtype), make((23, 21), dtype)), dict(beta=2, alpha=1))
    yield Sample((make((21, 19), dtype).t(), make((23, 19), dtype).t(), make((23, 21), dtype)), tag="transposed self")


def _addmm_out(bias, a, b, out):
    return torch.addmm(bias, a, b, out=out)


def _addmm_out_samples(dtype):
    yield Sample((make((21,), dtype), make((19, 23), dtype), make((23, 21), dtype), make((3,), dtype)),
                 tag="bias, resized out")


def _bmm_samples(dtype):
    yield Sample((make((3, 5, 7), dtype), make((3, 7, 4), dtype)))
    yield Sample((make((2, 17, 33), dtype), make((2, 65, 33), dtype).transpose(1, 2)), tag="nt")
    yield Sample((make((2, 33, 17), dtype).transpose(1, 2), make((2, 33, 65), dtype)), tag="tn")
    yield Sample((make((1, 9, 6), dtype).expand(4, 9, 6), make((4, 6, 1), dtype)), tag="broadcast batch, N=1")
    yield Sample((make((4, 1, 6), dtype), make((6, 8), dtype).expand(4, 6, 8)), tag="M=1, broadcast batch")
    yield Sample((make((0, 3, 4), dtype), make((0, 4, 5), dtype)), tag="empty batch")
    yield Sample((make((2, 3, 0), dtype), make((2, 0, 5), dtype)), tag="empty K")
    yield Sample((make((2, 3, 4), dtype), make((3, 4, 5), dtype)), tag="batch mismatch")


def _baddbmm_samples(dtype):
    fp = dtype.is_floating_point
    for i, shape in enumerate([(3, 5, 4), (5, 4), (4,), (1, 5, 1)]):
        kw = dict(beta=0.5, alpha=-1.5) if fp else dict(beta=2, alpha=-1)
        yield Sample((make(shape, dtype, seed=i), make((3, 5, 7), dtype), make((3, 4, 7), dtype).transpose(1, 2)), kw,
                     tag=f"self{shape}")
    yield Sample((make((3, 5, 4), dtype), make((3, 5, 0), dtype), make((3, 0, 4), dtype)), tag="empty K")


def _addmv_samples(dtype):
    fp = dtype.is_floating_point
    kw = dict(beta=0.5, alpha=2.0) if fp else dict(beta=2, alpha=3)
    yield Sample((make((6,), dtype), make((6, 9), dtype), make((9,), dtype)), kw)
    yield Sample((make((40,), dtype), make((9, 40), dtype).t(), make((18,), dtype, noncontig=True)[:9]), kw,
                 tag="column-major mat, strided vec")
    yield Sample((make((6,), dtype), make((6, 0), dtype), make((0,), dtype)), tag="empty K")
    yield Sample((make((), dtype), make((6, 4), dtype), make((4,), dtype)), tag="0-dim self")
    yield Sample((make((1,), dtype), make((1, 1), dtype), make((1,), dtype)), tag="1x1")


def _dot_samples(dtype):
    for i, n in enumerate([0, 1, 7, 1031]):
        yield Sample((make((n,), dtype, seed=i), make((n,), dtype, seed=9 + i)), tag=f"n={n}")
    yield Sample((make((5,), dtype, noncontig=True), make((5,), dtype)), tag="noncontig")
    yield Sample((make((5,), dtype), make((4,), dtype)), tag="size mismatch")


def _addr_samples(dtype):
    fp = dtype.is_floating_point
    kw = dict(beta=0.5, alpha=2.0) if fp else dict(beta=2, alpha=3)
    yield Sample((make((5, 7), dtype), make((5,), dtype), make((7,), dtype)), kw)
    yield Sample((make((7,), dtype), make((10,), dtype, noncontig=True)[:5], make((7,), dtype)), tag="broadcast self")
    yield Sample((make((0, 3), dtype), make((0,), dtype), make((3,), dtype)), tag="empty")


def _linear_samples(dtype):
    yield Sample((make((2, 7, 24), dtype), make((13, 24), dtype), make((13,), dtype)), tag="3-D input, bias")
    yield Sample((make((5, 24), dtype), make((13, 24), dtype), None), tag="no bias")
    yield Sample((make((24,), dtype), make((13, 24), dtype), make((13,), dtype)), tag="1-D input")


def _einsum(a, b):
    return torch.einsum("bij,bjk->bik", a, b), torch.einsum("ij,kj->ik", a[0], b[0].t())


def _einsum_samples(dtype):
    yield Sample((make((3, 5, 6), dtype), make((3, 6, 4), dtype)))


def _matmul_samples(dtype):
    yield Sample((make((2, 3, 5, 6), dtype), make((6, 4), dtype)), tag="4-D @ 2-D")
    yield Sample((make((6,), dtype), make((2, 6, 4), dtype)), tag="1-D @ 3-D")
    yield Sample((make((2, 1, 5, 6), dtype), make((3, 6, 4), dtype)), tag="broadcast batch")


INT_FLOATS = FLOATS + INTS
CASES = [
    OpCase("mm", ["aten::mm.out"], torch.mm, _mm_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("mm_half", ["aten::mm.out"], torch.mm, lambda dt: (Sample((make((17, 33), dt, low=-1, high=1),
                                                                      make((33, 20), dt, low=-1, high=1))),),
           dtypes=HALFS),
    OpCase("mm_out", ["aten::mm.out"], _mm_out, _mm_out_samples, dtypes=FLOATS),
    OpCase("mm_out_alias", ["aten::mm.out"], lambda a, b: _mm_alias(a.clone(), b),
           lambda dt: (Sample((make((6, 6), dt), make((6, 6), dt))),), dtypes=FLOATS),
    OpCase("addmm", ["aten::addmm.out"], torch.addmm, _addmm_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("addmm_", ["aten::addmm.out"], _addmm_inplace, _addmm_inplace_samples, dtypes=FLOATS),
    OpCase("addmm_out", ["aten::addmm.out"], _addmm_out, _addmm_out_samples, dtypes=FLOATS),
    OpCase("addmm_relu", ["aten::_addmm_activation.out"], lambda *a, **k: torch._addmm_activation(*a, **k),
           _addmm_samples, dtypes=INT_FLOATS),
    OpCase("addmm_gelu", ["aten::_addmm_activation.out"],
           lambda *a, **k: torch._addmm_activation(*a, use_gelu=True, **k), _addmm_samples, dtypes=FLOATS),
    OpCase("addmm_activation_out", ["aten::_addmm_activation.out"], _addmm_activation_out,
           lambda dt: (Sample((make((5,), dt), make((4, 3), dt), make((3, 5), dt)), dict(use_gelu=g), tag=f"gelu={g}")
                       for g in (False, True)), dtypes=FLOATS),
    OpCase("bmm", ["aten::bmm.out"], torch.bmm, _bmm_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("baddbmm", ["aten::baddbmm.out"], torch.baddbmm, _baddbmm_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("addmv", ["aten::addmv.out"], torch.addmv, _addmv_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("mv", ["aten::addmv.out"], torch.mv,
           lambda dt: (Sample((make((7, 5), dt), make((5,), dt))), Sample((make((5, 7), dt).t(), make((5,), dt))),),
           dtypes=FLOATS, grad=True),
    OpCase("dot", ["aten::dot"], torch.dot, _dot_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("vdot", ["aten::vdot"], torch.vdot, _dot_samples, dtypes=FLOATS),
    OpCase("addr", ["aten::addr.out"], torch.addr, _addr_samples, dtypes=INT_FLOATS, grad=True),
    OpCase("linear", ["aten::addmm.out", "aten::mm.out"], F.linear, _linear_samples, dtypes=FLOATS, grad=True),
    OpCase("matmul", ["aten::mm.out", "aten::bmm.out"], torch.matmul, _matmul_samples, dtypes=FLOATS, grad=True),
    OpCase("einsum", ["aten::bmm.out"], _einsum, _einsum_samples, dtypes=FLOATS, grad=True),
]
