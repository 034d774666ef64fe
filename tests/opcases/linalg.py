"""Dense linear algebra against the CPU's LAPACK: LU factors and pivots (square, tall, wide,
batched, empty, 1 x 1, exactly singular, non-contiguous and transposed inputs, sizes past the
unblocked limit so the blocked path with the GEMM update runs), lu_solve (left/right,
adjoint, broadcast batches), lu_unpack, linalg.lu, solve / inv / det / slogdet with their
gradients, solve_triangular in every mode, out= forms, and the CPU's errors (non-square,
singular with check_errors, 16-bit and integer dtypes)."""
import torch

from ..cases import FLOAT, FLOATS, OpCase, Sample, make

# Sizes past linalg.cpp's kUnblocked (128) take the blocked paths.
BIG = 150


def _perm(n, seed):
    g = torch.Generator().manual_seed(1000 + seed)
    return torch.randperm(n, generator=g)


def _wellcond(shape, dtype, seed=0):
    """A random matrix with a dominant diagonal, rows permuted: condition number near 1,
    yet partial pivoting has rows to swap."""
    n = shape[-1]
    a = make(shape, dtype, seed=seed) + 4.0 * (3 * n) ** 0.5 * torch.eye(n, dtype=dtype)
    return a[..., _perm(n, seed), :].contiguous()


def _singular(dtype):
    """Exactly singular matrices whose elimination is exact in floating point both as given
    and transposed (multipliers are powers of two), so the zero pivot is exactly zero on
    either side: a repeated row, a zero column, a column twice another, all zeros."""
    yield torch.tensor([[1., 2., 4.], [1., 2., 4.], [4., 8., 2.]], dtype=dtype), "repeated row"
    yield torch.tensor([[0., 2., 3.], [0., 1., 5.], [0., 5., 6.]], dtype=dtype), "zero column"
    yield torch.tensor([[1., 2., 4.], [2., 4., 1.], [4., 8., 2.]], dtype=dtype), "dependent column"
    yield torch.zeros(4, 4, dtype=dtype), "zeros"


# ---- LU factorisation ----------------------------------------------------------------------

def _lu_factor_ex(a, **kw):
    return torch.linalg.lu_factor_ex(a, **kw)


def _lu_factor_samples(dtype):
    for i, shape in enumerate([(1, 1), (2, 2), (5, 5), (17, 17), (6, 3), (3, 6), (2, 3, 4, 4), (0, 3, 3), (0, 0),
                               (3, 0, 0), (4, 0), (0, 5), (2, 1, 7)]):
        yield Sample((make(shape, dtype, seed=i),), tag=f"{shape}")
    yield Sample((make((7, 7), dtype, noncontig=True, seed=20),), tag="noncontig")
    yield Sample((make((6, 6), dtype, seed=21).mT,), tag="transposed (column-major)")
    yield Sample((make((5, 4, 3), dtype, seed=22).permute(1, 0, 2),), tag="permuted batch")
    yield Sample((make((3, 3), dtype, seed=23).expand(2, 3, 3),), tag="expanded batch")
    for a, tag in _singular(dtype):
        yield Sample((a,), tag="singular " + tag)
    yield Sample((torch.stack([a for a, _ in _singular(dtype)][:3]),), tag="singular batch")


def _lu_factor_big_samples(dtype):
    yield Sample((_wellcond((BIG, BIG), dtype, 1),), tag="blocked square")
    yield Sample((_wellcond((2, BIG, BIG), dtype, 2).mT,), tag="blocked batch transposed")
    yield Sample((make((BIG + 20, BIG - 10), dtype, seed=3),), tag="blocked tall")
    yield Sample((make((BIG - 10, BIG + 40), dtype, seed=4),), tag="blocked wide")


def _lu_factor_grad_samples(dtype):
    yield Sample((_wellcond((4, 4), dtype, 1),), tag="square")
    yield Sample((_wellcond((2, 5, 5), dtype, 2),), tag="batch")


def _lu_factor_out(a):
    lu = torch.empty(2, dtype=a.dtype, device=a.device)  # wrong shape: resized
    piv = torch.empty(1, dtype=torch.int32, device=a.device)
    info = torch.empty(3, 3, dtype=torch.int32, device=a.device).mT  # non-contiguous after resize? still written
    torch.linalg.lu_factor_ex(a, out=(lu, piv, info))
    lu2 = torch.empty(a.shape, dtype=a.dtype, device=a.device)  # row-major out: a temporary, copied back
    piv2 = torch.empty(a.shape[:-1], dtype=torch.int32, device=a.device)
    info2 = torch.empty(a.shape[:-2], dtype=torch.int32, device=a.device)
    torch.linalg.lu_factor_ex(a, out=(lu2, piv2, info2))
    return lu, piv, info, lu2, piv2, info2


def _lu_factor_out_samples(dtype):
    yield Sample((make((5, 5), dtype),), tag="square")
    yield Sample((make((3, 4, 6), dtype, seed=1),), tag="batch wide")


def _lu_factor_errors(fn, *args, **kw):
    return fn(*args, **kw)


def _lu_factor_error_samples(dtype):
    sing = next(_singular(dtype))[0]
    yield Sample((torch.linalg.lu_factor, sing), tag="singular raises LinAlgError")
    yield Sample((torch.linalg.lu_factor_ex, sing), dict(check_errors=True), tag="check_errors raises")
    yield Sample((torch.linalg.lu_factor_ex, torch.stack([make((3, 3), dtype), sing])), dict(check_errors=True),
                 tag="batched check_errors raises")
    yield Sample((torch.linalg.lu_factor_ex, make((3, 3), dtype)), dict(check_errors=True), tag="valid")
    yield Sample((torch.linalg.lu_factor, make((3,), dtype)), tag="1-D raises")
    yield Sample((torch.linalg.lu_factor, make((3, 3), dtype)), dict(pivot=False), tag="no pivoting raises")
    for t in (torch.float16, torch.bfloat16, torch.int64):
        yield Sample((torch.linalg.lu_factor, make((3, 3), t)), tag=f"{t} raises")


# ---- lu_solve, lu_unpack, linalg.lu --------------------------------------------------------

def _lu_solve(a, b, left, adjoint):
    lu, piv = torch.linalg.lu_factor(a)
    return torch.linalg.lu_solve(lu, piv, b, left=left, adjoint=adjoint)


def _lu_solve_samples(dtype):
    for left in (True, False):
        for adjoint in (False, True):
            kw = f"left={left} adjoint={adjoint}"
            yield Sample((_wellcond((5, 5), dtype, 1), make((5, 3) if left else (3, 5), dtype, seed=2), left, adjoint),
                         tag=kw)
            yield Sample((_wellcond((2, 1, 4, 4), dtype, 3), make((3, 4, 2) if left else (3, 2, 4), dtype, seed=4),
                          left, adjoint), tag=kw + " broadcast")
            yield Sample((_wellcond((BIG, BIG), dtype, 5), make((BIG, 3) if left else (3, BIG), dtype, seed=6), left,
                          adjoint), tag=kw + " blocked")
    yield Sample((_wellcond((6, 6), dtype, 7), make((6, 4), dtype, noncontig=True, seed=8), True, False),
                 tag="noncontig B")
    yield Sample((_wellcond((3, 3), dtype, 9), make((3, 0), dtype), True, False), tag="no columns")
    yield Sample((make((0, 0), dtype), make((0, 2), dtype), True, False), tag="0 x 0")
    yield Sample((_wellcond((1, 1), dtype, 10), make((1, 1), dtype), True, True), tag="1 x 1")


def _lu_solve_direct(lu, piv, b, **kw):
    return torch.linalg.lu_solve(lu, piv, b, **kw)


def _lu_solve_direct_samples(dtype):
    a = _wellcond((4, 4), dtype, 1)
    lu, piv = torch.linalg.lu_factor(a)
    yield Sample((lu, piv, make((4, 2), dtype)), tag="valid")
    yield Sample((lu, piv.long(), make((4, 2), dtype)), tag="int64 pivots raise")
    yield Sample((lu, piv, make((3, 2), dtype)), tag="size mismatch raises")
    yield Sample((lu, piv, make((4, 2), torch.float64 if dtype == torch.float32 else torch.float32)),
                 tag="dtype mismatch raises")
    yield Sample((lu.to(torch.float16), piv, make((4, 2), torch.float16)), tag="float16 raises")


def _lu_unpack(lu, piv, unpack_data=True, unpack_pivots=True):
    return torch.lu_unpack(lu, piv, unpack_data=unpack_data, unpack_pivots=unpack_pivots)


def _lu_unpack_samples(dtype):
    for i, shape in enumerate([(4, 4), (6, 3), (3, 6), (2, 3, 5, 5), (1, 1), (0, 4, 4)]):
        lu, piv = torch.linalg.lu_factor(make(shape, dtype, seed=i))
        for ud, up in ((True, True), (True, False), (False, True)):
            yield Sample((lu, piv, ud, up), tag=f"{shape} data={ud} pivots={up}")
    lu, piv = torch.linalg.lu_factor(make((5, 5), dtype, seed=9))
    yield Sample((lu.mT.contiguous().mT, piv), tag="row-major LU")


def _lu_unpack_int_samples(dtype):
    """lu_unpack takes LU of any dtype (only tril/triu and the permutation)."""
    lu = make((2, 4, 3), dtype)
    piv = torch.tensor([[2, 3, 3], [1, 4, 3]], dtype=torch.int32)
    for ud, up in ((True, True), (True, False), (False, True)):
        yield Sample((lu, piv, ud, up), tag=f"data={ud} pivots={up}")


def _linalg_lu(a):
    return torch.linalg.lu(a)


def _linalg_lu_samples(dtype):
    for i, shape in enumerate([(4, 4), (6, 3), (3, 6), (2, 3, 5, 5), (1, 1), (0, 3, 3)]):
        yield Sample((make(shape, dtype, seed=i),), tag=f"{shape}")
    yield Sample((make((5, 5), dtype, noncontig=True, seed=7),), tag="noncontig")


def _linalg_lu_errors(a, **kw):
    return torch.linalg.lu(a, **kw)


def _linalg_lu_error_samples(dtype):
    yield Sample((make((3, 3), dtype),), dict(pivot=False), tag="no pivoting raises")
    yield Sample((make((3,), dtype),), tag="1-D raises")


def _linalg_lu_out(a):
    p, l, u = (torch.empty(1, dtype=a.dtype, device=a.device) for _ in range(3))
    torch.linalg.lu(a, out=(p, l, u))
    return p, l, u


# ---- solve, inverse, determinants ---------------------------------------------------------

def _solve(a, b, **kw):
    return torch.linalg.solve(a, b, **kw)


def _solve_samples(dtype):
    yield Sample((_wellcond((5, 5), dtype, 1), make((5, 3), dtype, seed=2)), tag="matrix rhs")
    yield Sample((_wellcond((5, 5), dtype, 3), make((5,), dtype, seed=4)), tag="vector rhs")
    yield Sample((_wellcond((5, 5), dtype, 5), make((2, 5), dtype, seed=6)), dict(left=False), tag="left=False")
    yield Sample((_wellcond((2, 1, 4, 4), dtype, 7), make((3, 4, 2), dtype, seed=8)), tag="broadcast")
    yield Sample((_wellcond((3, 4, 4), dtype, 9), make((3, 4), dtype, seed=10)), tag="batched vector rhs")
    yield Sample((_wellcond((6, 6), dtype, 11).mT, make((6, 2), dtype, seed=12)), tag="column-major A")
    yield Sample((_wellcond((1, 1), dtype, 13), make((1, 1), dtype, seed=14)), tag="1 x 1")
    yield Sample((make((0, 0), dtype), make((0, 2), dtype)), tag="0 x 0")
    yield Sample((_wellcond((0, 3, 3), dtype, 15), make((0, 3, 1), dtype)), tag="empty batch")


def _solve_big_samples(dtype):
    yield Sample((_wellcond((BIG, BIG), dtype, 1), make((BIG, 4), dtype, seed=2)), tag="blocked")
    yield Sample((_wellcond((BIG, BIG), dtype, 3).mT, make((BIG, 2), dtype, seed=4)), dict(left=True),
                 tag="blocked column-major A")


def _solve_ex(a, b):
    return torch.linalg.solve_ex(a, b)


def _solve_ex_samples(dtype):
    yield Sample((_wellcond((4, 4), dtype, 1), make((4, 2), dtype, seed=2)), tag="valid")
    yield Sample((torch.stack([_wellcond((3, 3), dtype, 3), torch.zeros(3, 3, dtype=dtype)]),
                  make((2, 3, 1), dtype, seed=4)), tag="one singular: info")


def _solve_ex_info(a, b):
    return torch.linalg.solve_ex(a, b)[1]


def _noncontig_wellcond(n, dtype, seed):
    base = make((n, 2 * n), dtype, seed=seed)
    base[:, ::2] += 4 * n * torch.eye(n, dtype=dtype)
    return base[:, ::2]


def _inv(a):
    return torch.linalg.inv(a)


def _inv_samples(dtype):
    for i, shape in enumerate([(1, 1), (2, 2), (5, 5), (3, 4, 4), (0, 3, 3), (0, 0)]):
        yield Sample((_wellcond(shape, dtype, i),), tag=f"{shape}")
    yield Sample((_wellcond((6, 6), dtype, 7).mT,), tag="column-major")
    yield Sample((_noncontig_wellcond(4, dtype, 8),), tag="noncontig")


def _inv_big_samples(dtype):
    yield Sample((_wellcond((BIG, BIG), dtype, 1),), tag="blocked")


def _inv_ex_info(a):
    return torch.linalg.inv_ex(a)[1]


def _inv_error_samples(dtype):
    for a, tag in _singular(dtype):
        yield Sample((a,), tag="singular raises LinAlgError: " + tag)
    yield Sample((make((3, 4), dtype),), tag="non-square raises")
    yield Sample((make((3,), dtype),), tag="1-D raises")
    yield Sample((make((3, 3), torch.float16),), tag="float16 raises")
    yield Sample((make((3, 3), torch.int64),), tag="int64 raises")


def _inv_out(a):
    out = torch.empty(2, dtype=a.dtype, device=a.device)
    info = torch.empty(2, dtype=torch.int32, device=a.device)
    torch.linalg.inv_ex(a, out=(out, info))
    return out, info


def _det(a):
    return torch.linalg.det(a)


def _det_samples(dtype):
    for i, shape in enumerate([(1, 1), (2, 2), (5, 5), (3, 4, 4), (0, 3, 3), (0, 0), (2, 0, 0)]):
        yield Sample((_wellcond(shape, dtype, i) / 4,), tag=f"{shape}")
    yield Sample((_wellcond((6, 6), dtype, 7).mT / 4,), tag="column-major")
    yield Sample((make((5, 5), dtype, seed=8),), tag="random")
    yield Sample((-_wellcond((3, 3), dtype, 9),), tag="negative")


def _det_singular_samples(dtype):
    for a, tag in _singular(dtype):
        yield Sample((a,), tag=tag)


def _det_big_samples(dtype):
    yield Sample((_wellcond((BIG, BIG), dtype, 1) / 40,), tag="blocked")


def _slogdet(a):
    return torch.linalg.slogdet(a)


def _det_ops(a):
    """The ATen ops behind det / slogdet with their LU and pivots outputs."""
    return torch.ops.aten._linalg_det(a), torch.ops.aten._linalg_slogdet(a)


def _det_error_samples(dtype):
    yield Sample((make((3, 4), dtype),), tag="non-square raises")
    yield Sample((make((3, 3), torch.float16),), tag="float16 raises")
    yield Sample((make((3, 3), torch.int64),), tag="int64 raises")


def _det_out(a):
    det = torch.empty(3, dtype=a.dtype, device=a.device)
    sign, logabs = torch.empty(3, dtype=a.dtype, device=a.device), torch.empty(0, dtype=a.dtype, device=a.device)
    torch.linalg.det(a, out=det)
    torch.linalg.slogdet(a, out=(sign, logabs))
    return det, sign, logabs


# ---- triangular solves --------------------------------------------------------------------

def _tri(n, dtype, seed, batch=()):
    """A well-conditioned matrix whose either triangle makes a good triangular factor."""
    return make(batch + (n, n), dtype, seed=seed) / n ** 0.5 + 3 * torch.eye(n, dtype=dtype)


def _solve_triangular(a, b, **kw):
    return torch.linalg.solve_triangular(a, b, **kw)


def _solve_triangular_samples(dtype):
    for upper in (False, True):
        for left in (True, False):
            for unit in (False, True):
                kw = dict(upper=upper, left=left, unitriangular=unit)
                tag = f"upper={upper} left={left} unit={unit}"
                yield Sample((_tri(5, dtype, 1), make((5, 3) if left else (3, 5), dtype, seed=2)), kw, tag=tag)
                yield Sample((_tri(4, dtype, 3, (2, 1)), make((3, 4, 2) if left else (3, 2, 4), dtype, seed=4)), kw,
                             tag=tag + " broadcast")
    kw = dict(upper=True)
    yield Sample((_tri(6, dtype, 5).mT, make((6, 4), dtype, noncontig=True, seed=6)), kw, tag="transposed A noncontig B")
    yield Sample((_tri(1, dtype, 7), make((1, 1), dtype, seed=8)), kw, tag="1 x 1")
    yield Sample((make((0, 0), dtype), make((0, 3), dtype)), kw, tag="0 x 0")
    yield Sample((_tri(3, dtype, 9), make((3, 0), dtype)), kw, tag="no columns")
    yield Sample((_tri(3, dtype, 9, (0,)), make((0, 3, 2), dtype)), kw, tag="empty batch")


def _solve_triangular_big_samples(dtype):
    for upper in (False, True):
        for left in (True, False):
            kw = dict(upper=upper, left=left)
            yield Sample((_tri(BIG, dtype, 1), make((BIG, 3) if left else (3, BIG), dtype, seed=2)), kw,
                         tag=f"blocked upper={upper} left={left}")


def _solve_triangular_out(a, b, **kw):
    out = torch.empty(1, dtype=a.dtype, device=a.device)
    torch.linalg.solve_triangular(a, b, out=out, **kw)
    out2 = torch.empty(b.shape[::-1], dtype=a.dtype, device=a.device).mT  # a column-major out of the right shape
    torch.linalg.solve_triangular(a, b, out=out2, **kw)
    return out, out2


def _solve_triangular_error_samples(dtype):
    kw = dict(upper=True)
    yield Sample((make((3, 4), dtype), make((3, 2), dtype)), kw, tag="non-square raises")
    yield Sample((make((3, 3), dtype), make((4, 2), dtype)), kw, tag="size mismatch raises")
    yield Sample((make((3, 3), dtype) + 3 * torch.eye(3, dtype=dtype),
                  make((3, 2), torch.float64 if dtype == torch.float32 else torch.float32)), kw,
                 tag="B of another dtype: converted to A's")
    yield Sample((make((3, 3), torch.float16), make((3, 2), torch.float16)), kw, tag="float16 raises")
    yield Sample((make((3, 3), torch.int64), make((3, 2), torch.int64)), kw, tag="int64 raises")


# ---- Cholesky -----------------------------------------------------------------------------

def _spd(shape, dtype, seed=0):
    """A symmetric positive-definite matrix (well conditioned)."""
    n = shape[-1]
    a = make(shape, dtype, seed=seed) / n ** 0.5
    return a @ a.mT + torch.eye(n, dtype=dtype)


def _cholesky(a, **kw):
    return torch.linalg.cholesky_ex(a, **kw)


def _cholesky_samples(dtype):
    for upper in (False, True):
        kw = dict(upper=upper)
        for i, shape in enumerate([(1, 1), (2, 2), (5, 5), (17, 17), (2, 3, 4, 4), (0, 3, 3), (0, 0)]):
            yield Sample((_spd(shape, dtype, i),), kw, tag=f"{shape} upper={upper}")
        yield Sample((_spd((6, 6), dtype, 8).mT.contiguous().mT,), kw, tag=f"column-major upper={upper}")
        base = make((5, 10), dtype, seed=9)
        base[:, ::2] = _spd((5, 5), dtype, 10)
        yield Sample((base[:, ::2],), kw, tag=f"noncontig upper={upper}")
        # Only the triangle named by `upper` is read: garbage in the other one.
        g = _spd((4, 4), dtype, 11)
        g = g.triu(1) * 7 + g.tril() if not upper else g.tril(-1) * 7 + g.triu()
        yield Sample((g,), kw, tag=f"other triangle ignored upper={upper}")


def _cholesky_big_samples(dtype):
    for upper in (False, True):
        yield Sample((_spd((BIG, BIG), dtype, 1),), dict(upper=upper), tag=f"blocked upper={upper}")


def _cholesky_info(a, **kw):
    return torch.linalg.cholesky_ex(a, **kw)[1]


def _cholesky_info_samples(dtype):
    for upper in (False, True):
        kw = dict(upper=upper)
        yield Sample((-torch.eye(3, dtype=dtype),), kw, tag=f"negative upper={upper}")
        a = _spd((5, 5), dtype, 1)
        a[3, 3] = -20
        yield Sample((a,), kw, tag=f"minor 4 not PD upper={upper}")
        yield Sample((torch.stack([_spd((4, 4), dtype, 2), torch.zeros(4, 4, dtype=dtype)]),), kw,
                     tag=f"batch: second singular upper={upper}")
        b = _spd((BIG, BIG), dtype, 3)
        b[100, 100] = -1
        yield Sample((b,), kw, tag=f"blocked: minor 101 not PD upper={upper}")


def _cholesky_error_samples(dtype):
    yield Sample((-torch.eye(3, dtype=dtype),), tag="not PD raises LinAlgError")
    yield Sample((make((3, 4), dtype),), tag="non-square raises")
    yield Sample((make((3, 3), torch.float16),), tag="float16 raises")
    yield Sample((make((3, 3), torch.int64),), tag="int64 raises")


def _cholesky_raising(a, **kw):
    return torch.linalg.cholesky(a, **kw)


def _cholesky_legacy(a, upper=False):
    return torch.cholesky(a, upper=upper)


def _cholesky_out(a, **kw):
    L = torch.empty(1, dtype=a.dtype, device=a.device)
    info = torch.empty(1, dtype=torch.int32, device=a.device)
    torch.linalg.cholesky_ex(a, out=(L, info), **kw)
    L2 = torch.empty(a.shape, dtype=a.dtype, device=a.device)  # row-major: a temporary, copied back
    torch.linalg.cholesky(a, out=L2, **kw)
    return L, info, L2


def _cholesky_solve(b, a, upper=False):
    L = torch.linalg.cholesky(a, upper=upper)
    return torch.cholesky_solve(b, L, upper=upper)


def _cholesky_solve_samples(dtype):
    for upper in (False, True):
        yield Sample((make((5, 3), dtype, seed=1), _spd((5, 5), dtype, 2), upper), tag=f"upper={upper}")
        yield Sample((make((3, 4, 2), dtype, seed=3), _spd((2, 1, 4, 4), dtype, 4), upper),
                     tag=f"broadcast upper={upper}")
        yield Sample((make((BIG, 2), dtype, seed=5), _spd((BIG, BIG), dtype, 6), upper), tag=f"blocked upper={upper}")
    yield Sample((make((0, 2), dtype), make((0, 0), dtype), False), tag="0 x 0")


def _cholesky_inverse(a, upper=False):
    L = torch.linalg.cholesky(a, upper=upper)
    return torch.cholesky_inverse(L, upper=upper)


def _cholesky_inverse_out(a, upper=False):
    L = torch.linalg.cholesky(a, upper=upper)
    out = torch.empty(1, dtype=a.dtype, device=a.device)
    torch.cholesky_inverse(L, upper=upper, out=out)
    return out


def _cholesky_inverse_samples(dtype):
    for upper in (False, True):
        for i, shape in enumerate([(1, 1), (4, 4), (2, 3, 3), (0, 2, 2)]):
            yield Sample((_spd(shape, dtype, i), upper), tag=f"{shape} upper={upper}")


def _cholesky_inverse_direct(f, upper=False):
    return torch.cholesky_inverse(f, upper=upper)


def _cholesky_inverse_error_samples(dtype):
    f = torch.tensor([[2., 0., 0.], [1., 0., 0.], [3., 1., 4.]], dtype=dtype)
    yield Sample((f,), tag="zero on the diagonal raises LinAlgError")
    yield Sample((torch.stack([torch.eye(3, dtype=dtype), f]), True), tag="batched, upper: raises")
    yield Sample((f + torch.eye(3, dtype=dtype),), tag="valid")
    yield Sample((make((3, 4), dtype),), tag="non-square raises")


def _triangular_solve(b, a, **kw):
    return torch.triangular_solve(b, a, **kw)


def _triangular_solve_samples(dtype):
    for upper in (False, True):
        for transpose in (False, True):
            for unit in (False, True):
                kw = dict(upper=upper, transpose=transpose, unitriangular=unit)
                yield Sample((make((4, 3), dtype, seed=1), _tri(4, dtype, 2)), kw, tag=f"{kw}")
    yield Sample((make((3, 4, 2), dtype, seed=3), _tri(4, dtype, 4, (2, 1))), tag="broadcast")
    yield Sample((make((0, 2), dtype), make((0, 0), dtype)), tag="0 x 0")


# Solves and inverses of the big blocked samples accumulate rounding over 150 terms.
BIG_TOL = dict(atol=1e-4, rtol=1e-4)

CASES = [
    OpCase("linalg_lu_factor_ex", ["aten::linalg_lu_factor_ex.out"], _lu_factor_ex, _lu_factor_samples, dtypes=FLOATS),
    # Random (not well-conditioned) tall and wide matrices: float32 rounding grows to ~1e-4.
    OpCase("linalg_lu_factor_ex_big", [], _lu_factor_ex, _lu_factor_big_samples, dtypes=FLOAT, atol=1e-3, rtol=1e-3),
    OpCase("linalg_lu_factor_ex_big64", [], _lu_factor_ex, _lu_factor_big_samples, dtypes=(torch.float64,)),
    OpCase("linalg_lu_factor_grad", [], _lu_factor_ex, _lu_factor_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_lu_factor_out", [], _lu_factor_out, _lu_factor_out_samples, dtypes=FLOATS),
    OpCase("linalg_lu_factor_errors", [], _lu_factor_errors, _lu_factor_error_samples, dtypes=FLOATS),
    OpCase("linalg_lu_solve", ["aten::linalg_lu_solve.out"], _lu_solve, _lu_solve_samples, dtypes=FLOATS, **BIG_TOL),
    OpCase("linalg_lu_solve_direct", [], _lu_solve_direct, _lu_solve_direct_samples, dtypes=FLOATS),
    OpCase("lu_unpack", ["aten::lu_unpack.out"], _lu_unpack, _lu_unpack_samples, dtypes=FLOATS),
    OpCase("lu_unpack_int", [], _lu_unpack, _lu_unpack_int_samples, dtypes=(torch.int64, torch.int32)),
    OpCase("linalg_lu", ["aten::linalg_lu.out"], _linalg_lu, _linalg_lu_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_lu_errors", [], _linalg_lu_errors, _linalg_lu_error_samples, dtypes=FLOATS),
    OpCase("linalg_lu_out", [], _linalg_lu_out, _linalg_lu_samples, dtypes=FLOATS),
    OpCase("linalg_solve", ["aten::_linalg_solve_ex.result"], _solve, _solve_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_solve_big", [], _solve, _solve_big_samples, dtypes=FLOATS, **BIG_TOL),
    OpCase("linalg_solve_ex", [], _solve_ex, lambda dt: list(_solve_ex_samples(dt))[:1], dtypes=FLOATS),
    OpCase("linalg_solve_ex_info", [], _solve_ex_info, _solve_ex_samples, dtypes=FLOATS),
    OpCase("linalg_inv", ["aten::linalg_inv_ex.inverse"], _inv, _inv_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_inv_big", [], _inv, _inv_big_samples, dtypes=FLOATS, **BIG_TOL),
    OpCase("linalg_inv_ex_info", [], _inv_ex_info,
           lambda dt: [Sample((a,), tag=t) for a, t in _singular(dt)] + list(_inv_samples(dt)), dtypes=FLOATS),
    OpCase("linalg_inv_errors", [], _inv, _inv_error_samples, dtypes=FLOATS),
    OpCase("linalg_inv_out", [], _inv_out, _inv_samples, dtypes=FLOATS),
    OpCase("linalg_det", ["aten::_linalg_det.result"], _det, _det_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_det_singular", [], _det, _det_singular_samples, dtypes=FLOATS),
    OpCase("linalg_det_big", [], _det, _det_big_samples, dtypes=FLOATS, atol=1e-4, rtol=1e-3),
    OpCase("linalg_slogdet", ["aten::_linalg_slogdet.sign"], _slogdet, _det_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_slogdet_singular", [], _slogdet, _det_singular_samples, dtypes=FLOATS),
    OpCase("linalg_det_ops", [], _det_ops, _det_samples, dtypes=FLOATS),
    OpCase("linalg_det_errors", [], _det, _det_error_samples, dtypes=FLOATS),
    OpCase("linalg_slogdet_errors", [], _slogdet, _det_error_samples, dtypes=FLOATS),
    OpCase("linalg_det_out", [], _det_out, lambda dt: list(_det_samples(dt))[:5], dtypes=FLOATS),
    OpCase("linalg_solve_triangular", ["aten::linalg_solve_triangular", "aten::linalg_solve_triangular.out"],
           _solve_triangular, _solve_triangular_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_solve_triangular_big", [], _solve_triangular, _solve_triangular_big_samples, dtypes=FLOATS),
    OpCase("linalg_solve_triangular_out", [], _solve_triangular_out, _solve_triangular_samples, dtypes=FLOATS),
    OpCase("linalg_solve_triangular_errors", [], _solve_triangular, _solve_triangular_error_samples, dtypes=FLOATS),
    OpCase("triangular_solve", ["aten::triangular_solve.X"], _triangular_solve, _triangular_solve_samples,
           dtypes=FLOATS, grad=True),
    OpCase("linalg_cholesky_ex", ["aten::linalg_cholesky_ex.L"], _cholesky, _cholesky_samples, dtypes=FLOATS,
           grad=True),
    OpCase("linalg_cholesky_big", [], _cholesky, _cholesky_big_samples, dtypes=FLOATS, **BIG_TOL),
    OpCase("linalg_cholesky_info", [], _cholesky_info, _cholesky_info_samples, dtypes=FLOATS),
    OpCase("linalg_cholesky_errors", [], _cholesky_raising, _cholesky_error_samples, dtypes=FLOATS),
    OpCase("linalg_cholesky_out", [], _cholesky_out, _cholesky_samples, dtypes=FLOATS),
    OpCase("cholesky_legacy", ["aten::cholesky", "aten::cholesky.out"], _cholesky_legacy,
           lambda dt: [Sample((_spd((4, 4), dt, 1), u), tag=f"upper={u}") for u in (False, True)] +
           [Sample((-torch.eye(2, dtype=dt),), tag="not PD raises")], dtypes=FLOATS),
    OpCase("cholesky_solve", ["aten::_cholesky_solve_helper"], _cholesky_solve, _cholesky_solve_samples,
           dtypes=FLOATS, grad=True, **BIG_TOL),
    OpCase("cholesky_inverse", ["aten::cholesky_inverse", "aten::cholesky_inverse.out"], _cholesky_inverse,
           _cholesky_inverse_samples, dtypes=FLOATS, grad=True),
    OpCase("cholesky_inverse_errors", [], _cholesky_inverse_direct, _cholesky_inverse_error_samples, dtypes=FLOATS),
    OpCase("cholesky_inverse_out", [], _cholesky_inverse_out, _cholesky_inverse_samples, dtypes=FLOATS),
]
