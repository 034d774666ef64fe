"""Cases for complex64/complex128 tensors (csrc/aten/Complex.h): storage, copies and dtype
conversions, fill_, the conjugate and negative bits, view_as_real/view_as_complex, and the
pointwise ops with a complex form (arithmetic, abs/angle/sgn, exp/log/sqrt/reciprocal,
comparisons, where, complex()/polar()). Ops without a complex form raise NotImplementedError
(tests/test_complex.py checks that); ops without a native kernel run on the CPU fallback.
"""
import torch

from ..cases import COMPLEX, FLOATS, INTS, OpCase, Sample, binary_samples, make, unary_samples


def _arith(a, b):
    return a + b, a - b, a * b, a / b


def _arith_alpha(a, b):
    return torch.add(a, b, alpha=0.5 - 2j), torch.sub(a, b, alpha=3), torch.add(a, b, alpha=2.5)


def _mixed_samples(dtype):
    yield from binary_samples(dtype, scalars=(2, 1.5 - 0.5j))
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    yield Sample((make((4, 5), dtype), make((5,), real, seed=1)), tag="complex op real")
    yield Sample((make((4, 5), real), make((4, 1), dtype, seed=2)), tag="real op complex")
    yield Sample((make((3, 4), dtype), make((), torch.int64, seed=3)), tag="int 0-dim")


def _unary(a):
    return (-a, a.abs(), a.angle(), a.sgn(), a.reciprocal(), a.exp(), a.log(), a.sqrt(), a.conj_physical(),
            torch.isnan(a), a == a.conj(), a != a)


def _unary_samples(dtype):
    yield from unary_samples(dtype)
    real = torch.finfo(torch.float64 if dtype == torch.complex128 else torch.float32)
    special = torch.tensor([0, -0.0, 1j, -1j, -4 + 0j, -4 - 0.0j, 3 + 4j, complex("nan"), complex(float("inf"), 1),
                            complex(1, float("-inf")), complex(real.max, real.max), complex(real.tiny, 0)], dtype=dtype)
    yield Sample((special,), tag="special values")


def _out_forms(a, b):
    real = torch.float64 if a.dtype == torch.complex128 else torch.float32
    r1 = torch.empty(0, dtype=real, device=a.device)
    torch.abs(a, out=r1)  # complex -> real out, resized
    r2 = torch.empty(7, dtype=a.dtype, device=a.device)
    torch.angle(a, out=r2)  # a complex out keeps a zero imaginary part
    r3 = torch.empty(2, 2, dtype=a.dtype, device=a.device)
    torch.mul(a, b, out=r3)
    y = a.clone()
    y.mul_(b).add_(1 - 1j).div_(b)
    z = a.clone()
    z.conj_physical_()
    return r1, r2, r3, y, z


def _out_samples(dtype):
    yield Sample((make((3, 4), dtype), make((3, 4), dtype, seed=1)), tag="contiguous")
    yield Sample((make((3, 4), dtype, noncontig=True), make((4,), dtype, seed=2)), tag="noncontig+broadcast")


def _bits(a):
    """The lazy conjugate/negative bits read through copies and ops."""
    c = a.conj()
    n = c.imag  # a negative-bit real view
    out = c.clone()
    d = torch.empty_like(a)
    d.copy_(c)
    e = torch.zeros_like(a).conj()
    e.copy_(a)  # a conjugate-bit destination: stores conj(a)
    return c, n, n * 2, out, d, e.resolve_conj(), c.resolve_conj(), torch._neg_view(a).resolve_neg(), c * a


def _views(a, r):
    v = torch.view_as_real(a)
    w = torch.view_as_complex(r)
    return v, v * 2, w, w + 1, a.real, a.imag, a.real * a.imag


def _views_samples(dtype):
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    for i, s in enumerate([(), (0,), (5,), (3, 4), (2, 3, 7)]):
        yield Sample((make(s, dtype, seed=i), make(s + (2,), real, seed=10 + i)), tag=f"shape{s}")
    base = make((6, 8), real)
    yield Sample((make((4, 6), dtype, noncontig=True), base[::2].unflatten(-1, (4, 2))), tag="strided")


def _conversions(a):
    real = torch.float64 if a.dtype == torch.complex128 else torch.float32
    other = torch.complex64 if a.dtype == torch.complex128 else torch.complex128
    t = a.t() if a.dim() == 2 else a
    return (a.to(other), a.to(real), a.to(torch.float16), a.to(torch.int32), a.to(torch.bool), t.contiguous(),
            a.real.to(a.dtype), torch.zeros(3, 2, dtype=a.dtype, device=a.device).fill_(2 - 1j),
            torch.full((2, 3), 1.5j, dtype=a.dtype, device=a.device))


def _conversion_samples(dtype):
    yield Sample((make((3, 5), dtype),), tag="2-D")
    yield Sample((make((4, 6), dtype, noncontig=True),), tag="noncontig")
    yield Sample((torch.tensor([0, 1j, 2.7 - 0.5j, -3.5 + 0j], dtype=dtype),), tag="exact")


def _real_to_complex(x):
    return x.to(torch.complex64), x.to(torch.complex128), torch.zeros(x.shape, dtype=torch.complex64, device=x.device).copy_(x)


def _where(m, a, b):
    return torch.where(m, a, b), torch.where(m, a, 2j), torch.where(m, 1.5, b)


def _where_samples(dtype):
    yield Sample((make((4, 5), torch.bool), make((4, 5), dtype), make((5,), dtype, seed=1)), tag="broadcast")
    yield Sample((make((3, 4), torch.bool, noncontig=True), make((3, 4), dtype, noncontig=True), make((), dtype)),
                 tag="noncontig")


def _parts(a, b):
    out = torch.empty(0, dtype=torch.complex128 if a.dtype == torch.float64 else torch.complex64, device=a.device)
    torch.polar(a, b, out=out)
    return torch.complex(a, b), torch.polar(a, b), out


def _parts_samples(dtype):
    for i, s in enumerate([(), (0,), (7,), (3, 4)]):
        yield Sample((make(s, dtype, seed=i), make(s, dtype, seed=20 + i)), tag=f"shape{s}")
    yield Sample((make((4, 1), dtype), make((5,), dtype, seed=1)), tag="broadcast")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6, 4), dtype).t()), tag="noncontig")
    yield Sample((torch.tensor([0.0, -1.0, float("inf"), float("nan")], dtype=dtype),
                  torch.tensor([0.0, 3.0, 1.0, 0.5], dtype=dtype)), tag="special")


def _parts_errors(a, b):
    return torch.complex(a, b)


def _parts_error_samples(dtype):
    yield Sample((make((3,), torch.float32), make((3,), torch.float64)), tag="mixed dtypes")
    yield Sample((make((3,), torch.int64), make((3,), torch.int64)), tag="integers")


def _polar_wrong_out(a, b):
    out = torch.empty(3, dtype=torch.complex128, device=a.device)
    return torch.polar(a, b, out=out)


def _angle_real(x):
    return torch.angle(x)


def _angle_real_samples(dtype):
    yield from unary_samples(dtype)
    if dtype.is_floating_point:
        yield Sample((torch.tensor([-1.0, -0.0, 0.0, 2.0, float("nan"), float("-inf")], dtype=dtype),), tag="special")


CASES = [
    OpCase("complex_arith", [], _arith, lambda dt: _mixed_samples(dt), dtypes=COMPLEX),
    OpCase("complex_arith_alpha", [], _arith_alpha, lambda dt: binary_samples(dt), dtypes=COMPLEX),
    OpCase("complex_unary", ["aten::angle", "aten::angle.out", "aten::conj_physical.out", "aten::conj_physical_"], _unary, _unary_samples,
           dtypes=COMPLEX),
    OpCase("complex_out_forms", [], _out_forms, _out_samples, dtypes=COMPLEX),
    OpCase("complex_bits", [], _bits, lambda dt: unary_samples(dt), dtypes=COMPLEX),
    OpCase("complex_views", ["aten::view_as_real", "aten::view_as_complex"], _views, _views_samples, dtypes=COMPLEX),
    OpCase("complex_conversions", [], _conversions, _conversion_samples, dtypes=COMPLEX),
    OpCase("real_to_complex", [], _real_to_complex, lambda dt: unary_samples(dt), dtypes=FLOATS + (torch.int64,)),
    OpCase("complex_where", [], _where, _where_samples, dtypes=COMPLEX),
    OpCase("complex_parts", ["aten::complex.out", "aten::polar.out"], _parts, _parts_samples, dtypes=FLOATS),
    OpCase("complex_parts_errors", [], _parts_errors, _parts_error_samples),
    OpCase("polar_wrong_out", [], _polar_wrong_out, lambda dt: _parts_samples(dt)),
    OpCase("angle_real", [], _angle_real, _angle_real_samples, dtypes=FLOATS + INTS[:2]),
]


# ---- products (csrc/ops/gemm.cpp: complex_bmm, and lazy bits on real operands) -------------

def _products(a, b, c):
    out = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.mm(a, b, out=out)
    return (a @ b, a.conj() @ b, a @ b.conj(), a.conj() @ b.conj(), a.mH.mH @ b.mT.mT, out,
            torch.addmm(c, a, b, beta=0.5 - 1j, alpha=2j), torch.addmm(c.conj(), a, b),
            torch.bmm(a.unsqueeze(0).expand(3, -1, -1), b.conj().unsqueeze(0).expand(3, -1, -1)),
            torch.baddbmm(c.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), alpha=-1),
            torch.matmul(a.unsqueeze(0), b))


def _product_samples(dtype):
    for i, (m, k, n) in enumerate([(5, 7, 3), (1, 1, 1), (0, 4, 2), (4, 0, 3), (33, 65, 17)]):
        yield Sample((make((m, k), dtype, seed=i), make((k, n), dtype, seed=10 + i), make((m, n), dtype, seed=20 + i)),
                     tag=f"{m}x{k}x{n}")
    yield Sample((make((6, 8), dtype).t(), make((6, 4), dtype, noncontig=True), make((1, 4), dtype)),
                 tag="transposed, strided, broadcast bias")


def _neg_bit_products(x, w):
    n = x.conj().imag  # real, with the negative bit: ATen lets it through to mm/addmm/bmm
    return n @ w, torch.addmm(w[:1], n, w), torch.bmm(n.unsqueeze(0), w.unsqueeze(0)), w.t() @ n.t()


def _neg_bit_samples(dtype):
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    yield Sample((make((5, 5), dtype), make((5, 5), real, seed=1)), tag="5x5")


CASES += [
    OpCase("complex_products", [], _products, _product_samples, dtypes=COMPLEX, atol=1e-4, rtol=1e-4),
    OpCase("neg_bit_products", [], _neg_bit_products, _neg_bit_samples, dtypes=COMPLEX),
]


# ---- reductions (csrc/ops/reduce.cpp: complex_sum_or_mean) ----------------------------------

def _sums(a):
    wide = torch.complex128 if a.dtype == torch.complex64 else torch.complex64
    out = torch.empty(5, dtype=a.dtype, device=a.device)
    torch.sum(a, -1, out=out)
    return (a.sum(), a.mean(), a.sum(0), a.mean(-1, keepdim=True), a.sum((0, -1)), a.sum(dtype=wide),
            a.conj().sum(0), a.mean((0,)), out)


def _sum_samples(dtype):
    for i, s in enumerate([(3, 4), (2, 3, 5), (1, 0), (7, 1), (4, 65)]):
        yield Sample((make(s, dtype, seed=i),), tag=f"shape{s}")
    yield Sample((make((6, 4), dtype, noncontig=True),), tag="noncontig")


def _sum_to_real(a):
    return a.sum(dtype=torch.float32)


def _cumsums(a):
    wide = torch.complex128 if a.dtype == torch.complex64 else torch.complex64
    out = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.cumsum(a, -1, out=out)
    return (a.cumsum(0), a.cumsum(-1), a.cumsum(0, dtype=wide), a.conj().cumsum(0), out, a.sum(0).cumsum(0),
            a[0, 0].cumsum(0))


def _cumsum_to_real(a):
    return a.cumsum(0, dtype=torch.float64), torch.cumsum(a, -1, out=torch.empty(0, device=a.device))


def _norms(a):
    wide = torch.complex128 if a.dtype == torch.complex64 else torch.complex64
    return (torch.linalg.vector_norm(a), torch.linalg.vector_norm(a, 1, -1), torch.linalg.vector_norm(a, 3, 0, True),
            torch.linalg.vector_norm(a, float("inf")), torch.linalg.vector_norm(a, -float("inf"), -1),
            torch.linalg.vector_norm(a, 0), torch.linalg.vector_norm(a, dtype=wide), torch.linalg.norm(a[0]),
            torch.linalg.vector_norm(a, 2.5, (0, 1)))


def _norm_real_dtype(a):
    return torch.linalg.vector_norm(a, dtype=torch.float64)  # RuntimeError, as on the CPU


def _nonempty_sum_samples(dtype):
    return [s for s in _sum_samples(dtype) if s.args[0].numel() > 0]


CASES += [
    OpCase("complex_cumsums", ["aten::cumsum.out"], _cumsums, _nonempty_sum_samples, dtypes=COMPLEX, atol=1e-4,
           rtol=1e-5),
    OpCase("complex_cumsum_to_real", [], _cumsum_to_real, _nonempty_sum_samples, dtypes=COMPLEX, atol=1e-4,
           rtol=1e-5),
    OpCase("complex_vector_norms", ["aten::linalg_vector_norm.out"], _norms, _nonempty_sum_samples, dtypes=COMPLEX,
           atol=1e-4, rtol=1e-5),
    OpCase("complex_norm_real_dtype", [], _norm_real_dtype, lambda dt: list(unary_samples(dt))[:1], dtypes=COMPLEX),
    OpCase("complex_sums", [], _sums, _sum_samples, dtypes=COMPLEX, atol=1e-4, rtol=1e-5),
    OpCase("complex_sum_to_real", [], _sum_to_real, lambda dt: unary_samples(dt), dtypes=COMPLEX, atol=1e-5, rtol=1.3e-5),
]


# ---- data movement (kernels move raw words: csrc/ops/words.h) --------------------------------

def _movement(a, b):
    idx = torch.tensor([2, 0, 2], device=a.device)
    out = torch.empty(1, dtype=a.dtype, device=a.device)
    torch.cat([a, b[:1]], 0, out=out)
    return (torch.cat([a, b], 0), torch.cat([a, torch.empty(0, dtype=a.dtype, device=a.device), b], 0),
            torch.cat([a.t(), b.t().conj()], 1), out, a.flip(0), a.flip(0, 1), torch.roll(a, 2, 1),
            torch.roll(a, -1), torch.fft.fftshift(a), a.tril(), a.triu(1), a.index_select(0, idx),
            a.index_select(1, idx), a[0, 0].index_select(0, idx[1:2]), a[idx], a[:, idx[:2]], a[a.real > 0],
            torch.gather(a, 1, idx[:2].expand(a.shape[0], 2)), torch.masked_select(a, a.imag < 0))


def _movement_samples(dtype):
    yield Sample((make((3, 4), dtype), make((5, 4), dtype, seed=1)), tag="contiguous")
    yield Sample((make((3, 8), dtype, noncontig=True), make((5, 4), dtype).t().contiguous().t()),
                 tag="strided")
    yield Sample((make((3, 5), dtype), make((2, 5), dtype, seed=2)), tag="odd")


def _index_ops(a, b):
    d = a.device
    # Repeated positions only where values accumulate (otherwise the winner is unspecified).
    rows = torch.tensor([2, 0, 2], device=d)
    vals = b[:3, : a.shape[1]]
    put = a.clone().index_put_((rows[1:],), vals[1:])
    acc = a.clone().index_put_((rows,), vals, accumulate=True)
    acc_mask = a.clone()
    acc_mask[a.real > 0] += 1j
    flat = torch.tensor([0, a.numel() - 1, 1, 1], device=d)
    z = a.clone()
    z[1] = 0
    z[0, 0] = 3j
    return (put, acc, acc_mask, a.index_copy(0, torch.tensor([1, 0], device=d), b[:2, : a.shape[1]]),
            a.clone().index_fill_(1, torch.tensor([0, 2], device=d), 2 - 1j),
            a.clone().index_fill_(0, torch.tensor([1], device=d), torch.tensor(0.5j, dtype=a.dtype, device=d)),
            torch.take(a, flat), a.clone().put_(flat[:3], b.reshape(-1)[:3]),
            a.clone().put_(flat, b.reshape(-1)[:4], accumulate=True), torch.nonzero(z), torch.nonzero(z.t()),
            torch.nonzero_static(z, size=z.numel() + 2),
            a.clone().masked_scatter_(a.imag > 0, b.reshape(-1)),
            a.scatter(1, torch.tensor([[1, 0], [2, 3], [0, 1]], device=d)[: a.shape[0]], b[: a.shape[0]]),  # no repeats
            a.scatter_add(0, torch.tensor([[2, 0, 2, 1]] * 2, device=d)[:, : a.shape[1]], b[:2]),
            torch.scatter_add(a, 1, torch.tensor([[0, 0, 1]] * a.shape[0], device=d), b[: a.shape[0], :3]))


CASES += [
    OpCase("complex_movement", [], _movement, _movement_samples, dtypes=COMPLEX),
    OpCase("complex_index_ops", ["aten::_index_put_impl_", "aten::index_copy.out", "aten::index_fill_.int_Scalar",
                                 "aten::index_fill_.int_Tensor", "aten::take", "aten::put_", "aten::nonzero",
                                 "aten::nonzero_static", "aten::masked_scatter_", "aten::scatter.src_out",
                                 "aten::scatter_add.out"],
           _index_ops, _movement_samples, dtypes=COMPLEX),
]


# ---- trigonometric and hyperbolic functions (kernels/complex.clh) ------------------------------

def _trig(a):
    return a.sin(), a.cos(), a.sinh(), a.cosh(), a.tanh()


def _trig_samples(dtype):
    yield from unary_samples(dtype)
    big = 100.0 if dtype == torch.complex64 else 720.0  # past the point where sinh/cosh overflow
    yield Sample((torch.tensor([0, -0.0, 1j, -2.5 + 0.5j, big + 0.001j, -big - 1e-3j, 0.3 + big * 1j, 15 - 2j,
                                -30 + 1j, 1e-20 + 1e-20j], dtype=dtype),), tag="special values")


CASES += [
    OpCase("complex_trig", [], _trig, _trig_samples, dtypes=COMPLEX, atol=1e-5, rtol=2e-5),
]
