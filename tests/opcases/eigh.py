"""Symmetric eigendecomposition and SVD (csrc/ops/eigh.cpp, one-sided Jacobi) against the CPU's
LAPACK: linalg.eigh / eigvalsh (UPLO L and U, only that triangle read), linalg.svd / svdvals
(full_matrices, compute_uv), torch.svd, their out= forms, the composites over them (pinv,
matrix_rank, matrix_norm ord 2 / -2 / 'nuc', cond, norm), gradients, and the CPU's errors.

Eigenvectors and singular vectors are unique only up to sign (and up to a rotation within a
repeated value), so the device need not match LAPACK's: cases compare canonical forms (each
vector's sign fixed by its largest entry, projectors onto the spans of repeated values and of
full_matrices' extra columns, products U diag(S) Vh) computed on the CPU, and gradients of
gauge-invariant outputs. Vector cases use well-separated spectra (random orthogonal factors
around chosen values); repeated and zero values are checked through the invariant outputs.
Shapes cover 1 x 1, odd sizes, tall / wide / square, batches, empty batches and matrices,
and sizes past eigh.cpp's kSingleGroupCols (64) that take the multi-group blocked path."""
import torch

from ..cases import _SEED_SALT, FLOATS, OpCase, Sample, make

# Past kSingleGroupCols: several work-groups per matrix, column blocks in rounds.
BIG = 100


def _orth(n, dtype, seed):
    """A random orthogonal n x n matrix (Q of a QR, signs fixed)."""
    g = torch.Generator().manual_seed(5000 + seed + 100003 * _SEED_SALT)
    q, r = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    return (q * torch.sign(torch.diagonal(r)).unsqueeze(-2)).to(dtype)


def _sym(vals, dtype, seed=0, batch=()):
    """Symmetric matrices Q diag(vals) Q^T (float64 products, then dtype), one Q per batch item."""
    n = len(vals)
    lam = torch.tensor(vals, dtype=torch.float64)
    count = 1
    for b in batch:
        count *= b
    mats = []
    for i in range(count):
        q = _orth(n, torch.float64, seed * 100 + i)
        mats.append(q @ torch.diag(lam) @ q.mT)
    a = torch.stack(mats).reshape(batch + (n, n)) if count else torch.empty(batch + (n, n), dtype=torch.float64)
    return ((a + a.mT) / 2).to(dtype)


def _spread(n, seed=0):
    """n eigenvalues in [-n/2, n/2] at least 0.5 apart (shuffled order, signs mixed)."""
    g = torch.Generator().manual_seed(7000 + seed + 100003 * _SEED_SALT)
    base = torch.arange(n, dtype=torch.float64) - (n - 1) / 2
    return (base + 0.4 * torch.rand(n, generator=g, dtype=torch.float64))[torch.randperm(n, generator=g)].tolist()


def _gen(m, n, svals, dtype, seed=0, batch=()):
    """m x n matrices U diag(svals) V^T with random orthogonal U, V."""
    k = min(m, n)
    s = torch.zeros(m, n, dtype=torch.float64)
    s[range(k), range(k)] = torch.tensor(svals, dtype=torch.float64)
    count = 1
    for b in batch:
        count *= b
    mats = [_orth(m, torch.float64, 2 * (seed * 100 + i)) @ s @ _orth(n, torch.float64, 2 * (seed * 100 + i) + 1).mT
            for i in range(count)]
    if not count:
        return torch.empty(batch + (m, n), dtype=dtype)
    return torch.stack(mats).reshape(batch + (m, n)).to(dtype)


def _svals(k, seed=0):
    """k singular values in [1, 1 + k], at least 0.5 apart."""
    g = torch.Generator().manual_seed(8000 + seed + 100003 * _SEED_SALT)
    vals = 1 + torch.arange(k, dtype=torch.float64) + 0.4 * torch.rand(k, generator=g, dtype=torch.float64)
    return vals.flip(0).tolist()


# ---- canonical forms (on the CPU) -----------------------------------------------------------

def _signfix(v):
    """Each column of v (..., m, k) times the sign of its largest-|.| entry; and those signs."""
    if v.numel() == 0:
        return v, torch.ones(v.shape[:-2] + (1, v.shape[-1]), dtype=v.dtype)
    idx = v.abs().argmax(dim=-2, keepdim=True)
    sign = torch.sign(torch.gather(v, -2, idx))
    sign = torch.where(sign == 0, torch.ones_like(sign), sign)
    return v * sign, sign


def _cpu(x):
    return x.detach().cpu()


def _eigh_canon(out):
    w, v = (_cpu(x) for x in out)
    return w, _signfix(v)[0]


def _eigh_invariant(out):
    """Eigenvalues, V diag(w) V^T (= A's symmetric part) and V^T V (= I): with repeated values."""
    w, v = (_cpu(x) for x in out)
    return w, (v * w.unsqueeze(-2)) @ v.mT, v.mT @ v


def _svd_canon(out):
    """Signs fixed together on U's columns and Vh's rows (by U's), U[..., :k] and Vh[..., :k, :];
    the projectors onto the extra columns / rows of full_matrices."""
    u, s, vh = (_cpu(x) for x in out)
    k = s.shape[-1]
    uk, sign = _signfix(u[..., :, :k])
    vk = vh[..., :k, :] * sign.mT
    u2, v2 = u[..., :, k:], vh[..., k:, :]
    return uk, s, vk, u2 @ u2.mT, v2.mT @ v2


def _svd_invariant(out):
    """S, U diag(S) Vh (= A), U^T U and Vh Vh^T (= I): with repeated and zero values."""
    u, s, vh = (_cpu(x) for x in out)
    k = s.shape[-1]
    rec = (u[..., :, :k] * s.unsqueeze(-2)) @ vh[..., :k, :]
    return s, rec, u.mT @ u, vh @ vh.mT


# ---- eigh ------------------------------------------------------------------------------------

def _eigh(a, uplo="L"):
    return torch.linalg.eigh(a, UPLO=uplo)


def _other_triangle_garbage(a, uplo):
    """a with the triangle that UPLO does not name overwritten (it must never be read)."""
    g = 7.0 * torch.ones_like(a)
    return a.tril() + g.triu(1) if uplo == "L" else a.triu() + g.tril(-1)


def _eigh_samples(dtype):
    for uplo in ("L", "U"):
        for i, n in enumerate([1, 2, 3, 7, 33]):
            yield Sample((_other_triangle_garbage(_sym(_spread(n, i), dtype, i), uplo), uplo), tag=f"n={n} {uplo}")
    yield Sample((_sym(_spread(5, 1), dtype, 1, (2, 3)),), tag="batch (2, 3)")
    yield Sample((_sym(_spread(4, 2), dtype, 2, (0,)),), tag="empty batch")
    yield Sample((torch.empty(0, 0, dtype=dtype),), tag="0 x 0")
    yield Sample((torch.empty(3, 0, 0, dtype=dtype),), tag="batch of 0 x 0")
    a = _sym(_spread(6, 3), dtype, 3)
    yield Sample((a.mT.contiguous().mT,), tag="column-major")
    base = torch.zeros(6, 12, dtype=dtype)
    base[:, ::2] = a
    yield Sample((base[:, ::2], "U"), tag="noncontig U")
    yield Sample((_sym(_spread(5, 4), dtype, 4).expand(3, 5, 5),), tag="expanded batch")
    b = _sym(_spread(4, 5), dtype, 5, (3, 2))
    yield Sample((b.permute(1, 0, 2, 3),), tag="permuted batch")


def _eigh_big_samples(dtype):
    for uplo in ("L", "U"):
        yield Sample((_sym(_spread(BIG, 1), dtype, 1), uplo), tag=f"blocked n={BIG} {uplo}")
    yield Sample((_sym(_spread(65, 2), dtype, 2, (2,)),), tag="blocked batch n=65")


def _eigvalsh(a, uplo="L"):
    return torch.linalg.eigvalsh(a, UPLO=uplo)


def _eigvalsh_samples(dtype):
    yield from _eigh_samples(dtype)
    yield Sample((torch.zeros(4, 4, dtype=dtype),), tag="zeros")
    yield Sample((torch.eye(5, dtype=dtype) * -2,), tag="-2 I")
    yield Sample((_sym([1.0, -1.0, 1.0, -1.0, 0.0], dtype, 6),), tag="+-1 repeated")
    yield Sample((_sym([3.0, 3.0, 3.0, -2.0, 0.0, 0.0], dtype, 7),), tag="repeated and zero")
    x = make((6, 1), dtype, seed=8)
    yield Sample((-(x @ x.mT),), tag="negative rank 1")
    yield Sample((_sym([1e-3, 1.0, 1e3], dtype, 9),), tag="graded")
    yield Sample((_sym([0.0] * 40 + [5.0, -5.0], dtype, 10),), tag="rank 2, n=42")
    yield Sample((make((7, 7), dtype, seed=11),), tag="random (lower triangle)")
    yield Sample((make((70, 70), dtype, seed=12), "U"), tag="random blocked (upper triangle)")
    a = _sym(_spread(5, 13), dtype, 13)
    upper = torch.ones(5, 5, dtype=torch.bool).triu(1)
    yield Sample((a.masked_fill(upper, float("nan")),), tag="NaN in the triangle not read (L)")
    yield Sample((a.masked_fill(upper.mT, float("nan")), "U"), tag="NaN in the triangle not read (U)")
    yield Sample((a * 1e30,), tag="scaled by 1e30")
    yield Sample((a * 1e-30,), tag="scaled by 1e-30")


def _eigh_repeated_samples(dtype):
    yield Sample((_sym([1.0, -1.0, 1.0, -1.0, 0.0], dtype, 6),), tag="+-1 repeated")
    yield Sample((_sym([3.0, 3.0, 3.0, -2.0, 0.0, 0.0], dtype, 7),), tag="repeated and zero")
    yield Sample((torch.eye(3, dtype=dtype),), tag="identity")
    yield Sample((torch.zeros(2, 3, 3, dtype=dtype),), tag="zeros")
    yield Sample((_sym([2.0] * 30 + [-1.0] * 40, dtype, 8),), tag="two clusters, blocked n=70")


def _eigh_out(a, uplo="L"):
    w = torch.empty(3, dtype=a.dtype, device=a.device)  # wrong shapes: resized
    v = torch.empty(2, 2, dtype=a.dtype, device=a.device)
    torch.linalg.eigh(a, UPLO=uplo, out=(w, v))
    n = a.shape[-1]
    batch = a.shape[:-2]
    # A row-major eigenvector out and a strided eigenvalue out: written through temporaries.
    w2 = torch.empty(batch + (2 * n,), dtype=a.dtype, device=a.device)[..., ::2]
    v2 = torch.empty(batch + (n, n), dtype=a.dtype, device=a.device)
    torch.linalg.eigh(a, UPLO=uplo, out=(w2, v2))
    # Batch dimensions that do not flatten into one stride.
    v3 = torch.empty((n, n) + batch, dtype=a.dtype, device=a.device).permute(*range(2, 2 + len(batch)), 0, 1)
    w3 = torch.empty(batch + (n,), dtype=a.dtype, device=a.device)
    torch.linalg.eigh(a, UPLO=uplo, out=(w3, v3))
    l4 = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.linalg.eigvalsh(a, UPLO=uplo, out=l4)
    return (w, _signfix(_cpu(v))[0], w2, _signfix(_cpu(v2))[0], w3, _signfix(_cpu(v3))[0], l4)


def _eigh_out_samples(dtype):
    yield Sample((_sym(_spread(5, 1), dtype, 1),), tag="5 x 5")
    yield Sample((_sym(_spread(4, 2), dtype, 2, (2, 3)), "U"), tag="batch (2, 3) U")


def _eigh_ops(a, uplo="L", compute_v=True):
    """The ATen op itself, compute_v False included (eigenvectors then empty)."""
    w, v = torch.ops.aten._linalg_eigh(a, uplo, compute_v)
    return (w, _signfix(_cpu(v))[0]) if compute_v else (w, v)


def _eigh_ops_samples(dtype):
    for cv in (True, False):
        yield Sample((_sym(_spread(6, 1), dtype, 1), "U", cv), tag=f"compute_v={cv}")
        yield Sample((_sym(_spread(3, 2), dtype, 2, (4,)), "l", cv), tag=f"batch, lowercase uplo, compute_v={cv}")


def _eigh_grad(a, uplo="L"):
    """Gauge-invariant outputs: eigenvalues, V diag(exp(w / 4)) V^T, |V|."""
    w, v = torch.linalg.eigh(a, UPLO=uplo)
    return w, (v * torch.exp(w / 4).unsqueeze(-2)) @ v.mT, v.abs()


def _eigh_grad_samples(dtype):
    yield Sample((_sym(_spread(4, 1), dtype, 1),), tag="4 x 4 L")
    yield Sample((_sym(_spread(5, 2), dtype, 2), "U"), tag="5 x 5 U")
    yield Sample((_sym(_spread(3, 3), dtype, 3, (2,)),), tag="batch")
    yield Sample((_sym([2.0], dtype, 4),), tag="1 x 1")


def _eigvalsh_grad_samples(dtype):
    yield Sample((_sym(_spread(5, 1), dtype, 1),), tag="5 x 5")
    yield Sample((_sym(_spread(4, 2), dtype, 2, (3,)), "U"), tag="batch U")


def _raises(fn, *args, **kw):
    return fn(*args, **kw)


def _eigh_error_samples(dtype):
    yield Sample((torch.linalg.eigh, make((3, 4), dtype)), tag="non-square raises")
    yield Sample((torch.linalg.eigh, make((3,), dtype)), tag="1-D raises")
    yield Sample((torch.linalg.eigh, make((3, 3), dtype)), dict(UPLO="X"), tag="bad UPLO raises")
    yield Sample((torch.linalg.eigh, make((3, 3), dtype)), dict(UPLO="LU"), tag="long UPLO raises")
    yield Sample((torch.linalg.eigvalsh, make((3, 3), dtype)), dict(UPLO="u"), tag="lowercase u valid")
    for t in (torch.float16, torch.bfloat16, torch.int64):
        yield Sample((torch.linalg.eigh, make((3, 3), t)), tag=f"{t} raises")
    yield Sample((torch.linalg.eigvalsh, make((0, 3, 3), torch.float16)), tag="empty float16: no error")
    w = torch.empty(3, dtype=torch.float64 if dtype == torch.float32 else torch.float32)
    yield Sample((torch.linalg.eigvalsh, make((3, 3), dtype)), dict(out=w), tag="out of another dtype raises")


def _nan_or_raises(fn, a):
    """True when fn raises (the CPU's LAPACK, for NaN) or returns NaN values (the device, and
    the CPU for some inf inputs): either is the documented behaviour for non-finite input."""
    try:
        out = fn(a)
    except RuntimeError:
        return torch.tensor(True)
    outs = out if isinstance(out, tuple) else (out,)
    return torch.tensor(bool(_cpu(outs[1] if len(outs) == 3 else outs[0]).isnan().all()))


def _nonfinite_samples(dtype):
    a = _sym(_spread(4, 1), dtype, 1)
    nan = a.clone()
    nan[1, 2] = nan[2, 1] = float("nan")
    inf = a.clone()
    inf[0, 0] = float("inf")
    for fn in (torch.linalg.eigh, torch.linalg.eigvalsh, torch.linalg.svd, torch.linalg.svdvals):
        yield Sample((fn, nan), tag=f"{fn.__name__} nan")
        yield Sample((fn, inf), tag=f"{fn.__name__} inf")


def _nonfinite_batch(a):
    """A NaN in the first matrix of a batch: its values are NaN (or the call raises, as the
    CPU's), and the second matrix's are those of the second matrix alone."""
    out = []
    for fn in (torch.linalg.eigvalsh, torch.linalg.svdvals):
        try:
            v = fn(a)
            out += [v[1], torch.tensor(bool(_cpu(v[0]).isnan().all()))]
        except RuntimeError:
            out += [fn(a[1]), torch.tensor(True)]
    return tuple(out)


def _nonfinite_batch_samples(dtype):
    a = _sym(_spread(4, 1), dtype, 1, (2,))
    a[0, 1, 1] = float("nan")
    yield Sample((a,), tag="first of two has a NaN")


# ---- SVD -------------------------------------------------------------------------------------

def _svd(a, full_matrices=False):
    return torch.linalg.svd(a, full_matrices=full_matrices)


_SVD_SHAPES = [(1, 1), (2, 2), (5, 3), (3, 5), (7, 7), (33, 20), (20, 33), (40, 3), (1, 6)]


def _svd_samples(dtype):
    for full in (False, True):
        for i, (m, n) in enumerate(_SVD_SHAPES):
            yield Sample((_gen(m, n, _svals(min(m, n), i), dtype, i), full), tag=f"{m} x {n} full={full}")
        yield Sample((_gen(4, 3, _svals(3, 1), dtype, 1, (2, 3)), full), tag=f"batch (2, 3) full={full}")
        for m, n in ((0, 3), (3, 0), (0, 0)):
            yield Sample((torch.empty(m, n, dtype=dtype), full), tag=f"{m} x {n} full={full}")
        yield Sample((torch.empty(0, 3, 4, dtype=dtype), full), tag=f"empty batch full={full}")
    a = _gen(6, 4, _svals(4, 2), dtype, 2)
    yield Sample((a.mT.contiguous().mT,), tag="column-major")
    yield Sample((a.mT,), tag="transposed (wide)")
    base = torch.zeros(6, 8, dtype=dtype)
    base[:, ::2] = a
    yield Sample((base[:, ::2], True), tag="noncontig full")
    yield Sample((_gen(3, 5, _svals(3, 3), dtype, 3).expand(2, 3, 5),), tag="expanded batch")
    b = _gen(5, 4, _svals(4, 4), dtype, 4, (3, 2))
    yield Sample((b.permute(1, 0, 2, 3), True), tag="permuted batch full")


def _svd_big_samples(dtype):
    for full in (False, True):
        yield Sample((_gen(BIG, 70, _svals(70, 1), dtype, 1), full), tag=f"blocked {BIG} x 70 full={full}")
        yield Sample((_gen(66, BIG, _svals(66, 2), dtype, 2), full), tag=f"blocked 66 x {BIG} full={full}")


def _svd_invariant_samples(dtype):
    for full in (False, True):
        yield Sample((torch.zeros(4, 3, dtype=dtype), full), tag=f"zeros full={full}")
        yield Sample((_gen(5, 4, [3.0, 3.0, 1.0, 0.0], dtype, 1), full), tag=f"repeated and zero full={full}")
        yield Sample((_gen(3, 6, [2.0, 0.0, 0.0], dtype, 2), full), tag=f"rank 1 wide full={full}")
        x = make((7, 1), dtype, seed=3)
        yield Sample((x @ make((1, 5), dtype, seed=4), full), tag=f"outer product full={full}")
        c = make((6, 3), dtype, seed=5)
        yield Sample((torch.cat([c, c], dim=-1), full), tag=f"duplicated columns full={full}")
        yield Sample((_orth(5, dtype, 6), full), tag=f"orthogonal (all 1) full={full}")
        yield Sample((_gen(80, 70, [1.0] * 30 + [0.0] * 40, dtype, 7), full), tag=f"blocked rank 30 full={full}")
    yield Sample((make((9, 9), dtype, seed=8),), tag="random")
    yield Sample((_gen(12, 10, [10.0 ** -i for i in range(10)], dtype, 9),), tag="graded 1 .. 1e-9")
    yield Sample((_gen(4, 3, _svals(3, 10), dtype, 10) * 1e30,), tag="scaled by 1e30")
    yield Sample((_gen(4, 3, _svals(3, 11), dtype, 11) * 1e-30,), tag="scaled by 1e-30")


def _svdvals(a):
    return torch.linalg.svdvals(a)


def _svdvals_samples(dtype):
    for s in _svd_samples(dtype):
        yield Sample((s.args[0],), tag=s.tag)
    for s in _svd_invariant_samples(dtype):
        yield Sample((s.args[0],), tag=s.tag)


def _svd_ops(a, full_matrices=False, compute_uv=True):
    """The ATen op itself: compute_uv False leaves U and Vh empty."""
    out = torch.ops.aten._linalg_svd(a, full_matrices, compute_uv)
    return _svd_canon(out) if compute_uv else out


def _svd_ops_samples(dtype):
    for full in (False, True):
        for cuv in (True, False):
            for m, n in ((5, 3), (3, 5)):
                yield Sample((_gen(m, n, _svals(3, m), dtype, m), full, cuv), tag=f"{m} x {n} full={full} uv={cuv}")


def _torch_svd(a, some=True, compute_uv=True):
    u, s, v = torch.svd(a, some=some, compute_uv=compute_uv)
    if not compute_uv:
        return u, s, v
    return _svd_canon((u, s, v.mT))


def _torch_svd_samples(dtype):
    for some in (True, False):
        for cuv in (True, False):
            for m, n in ((5, 3), (3, 5)):
                yield Sample((_gen(m, n, _svals(3, m), dtype, m), some, cuv), tag=f"{m} x {n} some={some} uv={cuv}")


def _svd_out(a, full_matrices=False):
    u, s, vh = (torch.empty(1, dtype=a.dtype, device=a.device) for _ in range(3))
    torch.linalg.svd(a, full_matrices=full_matrices, out=(u, s, vh))
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    uc = m if full_matrices else k
    vr = n if full_matrices else k
    # Row-major U, strided S, Vh whose batch dimensions do not flatten: temporaries copied back.
    u2 = torch.empty(batch + (m, uc), dtype=a.dtype, device=a.device)
    s2 = torch.empty(batch + (2 * k,), dtype=a.dtype, device=a.device)[..., ::2]
    vh2 = torch.empty((vr, n) + batch, dtype=a.dtype, device=a.device).permute(*range(2, 2 + len(batch)), 0, 1)
    torch.linalg.svd(a, full_matrices=full_matrices, out=(u2, s2, vh2))
    s3 = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.linalg.svdvals(a, out=s3)
    u4, s4, v4 = (torch.empty(1, dtype=a.dtype, device=a.device) for _ in range(3))
    torch.svd(a, some=not full_matrices, out=(u4, s4, v4))
    return _svd_canon((u, s, vh)) + _svd_canon((u2, s2, vh2)) + (s3,) + _svd_canon((u4, s4, v4.mT))


def _svd_out_samples(dtype):
    for full in (False, True):
        yield Sample((_gen(5, 3, _svals(3, 1), dtype, 1), full), tag=f"tall full={full}")
        yield Sample((_gen(3, 4, _svals(3, 2), dtype, 2, (2, 2)), full), tag=f"wide batch full={full}")


def _svd_grad(a, full_matrices=False):
    """Gauge-invariant outputs: S, |U|, |Vh| (separated values) and U Vh (the polar factor)."""
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return s, u[..., :, :k].abs(), vh[..., :k, :].abs(), u[..., :, :k] @ vh[..., :k, :]


def _svd_grad_samples(dtype):
    yield Sample((_gen(4, 3, _svals(3, 1), dtype, 1),), tag="tall")
    yield Sample((_gen(3, 5, _svals(3, 2), dtype, 2),), tag="wide")
    yield Sample((_gen(4, 4, _svals(4, 3), dtype, 3, (2,)),), tag="batch square")
    yield Sample((_gen(1, 1, [2.0], dtype, 4),), tag="1 x 1")


def _svdvals_grad_samples(dtype):
    yield Sample((_gen(5, 3, _svals(3, 1), dtype, 1),), tag="tall")
    yield Sample((_gen(3, 4, _svals(3, 2), dtype, 2, (2,)),), tag="wide batch")


def _svd_error_samples(dtype):
    yield Sample((torch.linalg.svd, make((3,), dtype)), tag="1-D raises")
    yield Sample((torch.linalg.svd, make((4, 3), dtype)), dict(driver="gesvd"), tag="driver raises")
    yield Sample((torch.linalg.svdvals, make((4, 3), dtype)), dict(driver="gesvdj"), tag="svdvals driver raises")
    yield Sample((torch.linalg.svd, make((0, 3), dtype)), dict(driver="gesvda"), tag="driver, empty: no error")
    yield Sample((torch.linalg.svd, make((4, 3), torch.int64)), tag="int64 raises")
    for t in (torch.float16, torch.bfloat16):
        yield Sample((torch.linalg.svd, make((3, 3), t)), tag=f"{t} raises")
    yield Sample((torch.svd, make((3,), dtype)), tag="torch.svd 1-D raises")


# ---- composites over svd / eigh --------------------------------------------------------------

def _pinv(a, **kw):
    return torch.linalg.pinv(a, **kw)


def _pinv_samples(dtype):
    yield Sample((_gen(5, 3, _svals(3, 1), dtype, 1),), tag="tall")
    yield Sample((_gen(3, 5, _svals(3, 2), dtype, 2, (2,)),), tag="wide batch")
    yield Sample((_gen(4, 4, [3.0, 2.0, 1.0, 0.0], dtype, 3),), tag="singular")
    yield Sample((_gen(4, 4, [3.0, 2.0, 1.0, 1e-3], dtype, 4),), dict(rtol=0.01), tag="rtol cuts")
    yield Sample((_gen(4, 4, [3.0, 2.0, 1.0, 1e-3], dtype, 4),), dict(atol=0.5), tag="atol cuts")
    yield Sample((_sym(_spread(5, 5), dtype, 5),), dict(hermitian=True), tag="hermitian")
    yield Sample((_sym([2.0, -1.0, 0.0, 0.5], dtype, 6),), dict(hermitian=True), tag="hermitian singular")
    yield Sample((torch.empty(0, 3, dtype=dtype),), tag="empty")


def _pinv_grad_samples(dtype):
    yield Sample((_gen(4, 3, _svals(3, 1), dtype, 1),), tag="tall")
    yield Sample((_sym(_spread(4, 2), dtype, 2),), dict(hermitian=True), tag="hermitian")


def _matrix_rank(a, **kw):
    return torch.linalg.matrix_rank(a, **kw)


def _matrix_rank_samples(dtype):
    yield Sample((_gen(5, 4, [3.0, 2.0, 0.0, 0.0], dtype, 1),), tag="rank 2")
    yield Sample((_gen(4, 6, [3.0, 2.0, 1.0, 1e-4], dtype, 2),), dict(rtol=1e-2), tag="rtol")
    yield Sample((_gen(4, 6, [3.0, 2.0, 1.0, 1e-4], dtype, 2),), dict(atol=1.5), tag="atol")
    yield Sample((torch.zeros(2, 3, 3, dtype=dtype),), tag="zeros batch")
    yield Sample((_sym([2.0, -1.0, 0.0, 0.0], dtype, 3),), dict(hermitian=True), tag="hermitian rank 2")
    yield Sample((torch.eye(7, dtype=dtype),), tag="identity")


def _matrix_norm(a, ord):
    return torch.linalg.matrix_norm(a, ord=ord), torch.linalg.norm(a, ord=ord)


def _matrix_norm_samples(dtype):
    for ord in (2, -2, "nuc"):
        yield Sample((_gen(5, 3, _svals(3, 1), dtype, 1), ord), tag=f"tall ord={ord}")
        yield Sample((_gen(3, 4, _svals(3, 2), dtype, 2, (2,)), ord), tag=f"wide batch ord={ord}")
        yield Sample((make((6, 6), dtype, seed=3), ord), tag=f"random ord={ord}")


def _cond(a, p=None):
    return torch.linalg.cond(a, p=p)


def _cond_samples(dtype):
    for p in (None, 2, -2, "nuc", "fro", 1, float("inf")):
        yield Sample((_gen(4, 4, _svals(4, 1), dtype, 1), p), tag=f"p={p}")
    yield Sample((_gen(5, 3, _svals(3, 2), dtype, 2),), tag="tall")
    yield Sample((torch.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 0.0], [5.0, 6.0, 0.0]], dtype=dtype),),
                 tag="zero column: inf")


CASES = [
    OpCase("linalg_eigh", ["aten::_linalg_eigh.eigenvalues"], _eigh, _eigh_samples, dtypes=FLOATS,
           canonicalize=_eigh_canon, atol=1e-5, rtol=1e-4),
    # Vectors of n = 100 in float32: Jacobi on the shifted matrix loses some eps * ||A|| / gap.
    OpCase("linalg_eigh_big", [], _eigh, _eigh_big_samples, dtypes=FLOATS, canonicalize=_eigh_canon, atol=2e-4,
           rtol=1e-4),
    OpCase("linalg_eigvalsh", [], _eigvalsh, _eigvalsh_samples, dtypes=FLOATS, atol=5e-5, rtol=1e-4),
    OpCase("linalg_eigh_repeated", [], _eigh, _eigh_repeated_samples, dtypes=FLOATS, canonicalize=_eigh_invariant,
           atol=5e-5, rtol=1e-4),
    OpCase("linalg_eigh_out", [], _eigh_out, _eigh_out_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_eigh_ops", [], _eigh_ops, _eigh_ops_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_eigh_grad", [], _eigh_grad, _eigh_grad_samples, dtypes=FLOATS, grad=True, atol=1e-5, rtol=1e-4),
    OpCase("linalg_eigvalsh_grad", [], _eigvalsh, _eigvalsh_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_eigh_errors", [], _raises, _eigh_error_samples, dtypes=FLOATS),
    OpCase("linalg_nonfinite", [], _nan_or_raises, _nonfinite_samples, dtypes=FLOATS),
    OpCase("linalg_nonfinite_batch", [], _nonfinite_batch, _nonfinite_batch_samples, dtypes=FLOATS),
    OpCase("linalg_svd", ["aten::_linalg_svd.U"], _svd, _svd_samples, dtypes=FLOATS, canonicalize=_svd_canon,
           atol=1e-5, rtol=1e-4),
    OpCase("linalg_svd_big", [], _svd, _svd_big_samples, dtypes=FLOATS, canonicalize=_svd_canon, atol=2e-4,
           rtol=1e-4),
    OpCase("linalg_svd_invariant", [], _svd, _svd_invariant_samples, dtypes=FLOATS, canonicalize=_svd_invariant,
           atol=5e-5, rtol=1e-4),
    OpCase("linalg_svdvals", [], _svdvals, _svdvals_samples, dtypes=FLOATS, atol=5e-5, rtol=1e-4),
    OpCase("linalg_svd_ops", [], _svd_ops, _svd_ops_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("torch_svd", [], _torch_svd, _torch_svd_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_svd_out", [], _svd_out, _svd_out_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_svd_grad", [], _svd_grad, _svd_grad_samples, dtypes=FLOATS, grad=True, atol=1e-5, rtol=1e-4),
    OpCase("linalg_svdvals_grad", [], _svdvals, _svdvals_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_svd_errors", [], _raises, _svd_error_samples, dtypes=FLOATS),
    OpCase("linalg_pinv", [], _pinv, _pinv_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_pinv_grad", [], _pinv, _pinv_grad_samples, dtypes=FLOATS, grad=True, atol=1e-5, rtol=1e-4),
    OpCase("linalg_matrix_rank", [], _matrix_rank, _matrix_rank_samples, dtypes=FLOATS),
    OpCase("linalg_matrix_norm_svd", [], _matrix_norm, _matrix_norm_samples, dtypes=FLOATS, grad=True, atol=1e-5,
           rtol=1e-4),
    OpCase("linalg_cond", [], _cond, _cond_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
]
