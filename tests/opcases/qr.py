"""Householder QR against the CPU's LAPACK: geqrf (reflectors and tau in LAPACK's storage and
signs), householder_product, ormqr (every side and transpose), linalg.qr in every mode with
its gradient, lstsq with the gels driver (tall, wide, vector and broadcast right-hand sides)
and matrix_exp (every Taylor degree, scaling and squaring, batches, gradients); batches,
empty and 1 x 1 matrices, non-contiguous, transposed and expanded inputs, exactly
rank-deficient inputs, out= forms with wrongly shaped outs, sizes past the unblocked limit so
the blocked path with the GEMM update runs, and the CPU's errors."""
import torch

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make

DOUBLE = (torch.float64,)
# Big samples: past qr.cpp's kUnblocked (64) columns, so panels, T factors and GEMM updates run.
BIG_SHAPES = [(300, 200), (130, 130)]
# float32 QR of large random matrices: LAPACK's blocking and ours round differently, by ~1e-5 of R's scale.
BIG32 = dict(atol=1e-3, rtol=1e-3)
# float32 factors of the smaller samples (up to 70 columns) still sum dozens of rounded terms.
TOL32 = dict(atol=1e-4, rtol=1e-4)

SHAPES = [(1, 1), (2, 2), (5, 3), (3, 5), (4, 4), (17, 17), (2, 3, 6, 4), (3, 4, 7), (0, 3, 3), (0, 0), (0, 3),
          (3, 0), (1, 5), (5, 1), (2, 70, 40), (40, 70)]


def _rank_deficient(dtype):
    """Matrices whose QR is exact structure, not rounding noise (so the CPU and the device make
    the same reflectors): a zero column in a random matrix (it stays exactly zero, tau = 0),
    all zeros, upper triangular (every tau 0, R = A, negative diagonal kept), zero rows."""
    a = make((5, 4), dtype, seed=40)
    a[:, 1] = 0
    yield a, "zero column"
    yield torch.zeros(4, 3, dtype=dtype), "zeros"
    yield torch.tensor([[-2., 1., 3.], [0., 4., -5.], [0., 0., -6.]], dtype=dtype), "upper triangular"
    yield torch.tensor([[1., 2., 3.], [0., 0., 0.], [0., 0., 0.], [0., 0., 0.]], dtype=dtype), "zero rows"
    b = make((6, 3), dtype, seed=41)
    b[1:, 0] = 0
    yield b, "first column already reduced"


def _inputs(dtype):
    for i, shape in enumerate(SHAPES):
        yield make(shape, dtype, seed=i), f"{shape}"
    yield make((7, 5), dtype, noncontig=True, seed=20), "noncontig"
    yield make((4, 6), dtype, seed=21).mT, "transposed (column-major)"
    yield make((5, 3, 4), dtype, seed=22).permute(1, 0, 2), "permuted batch"
    yield make((4, 3), dtype, seed=23).expand(2, 4, 3), "expanded batch"
    yield from _rank_deficient(dtype)


# ---- geqrf ---------------------------------------------------------------------------------

def _geqrf(a):
    return torch.geqrf(a)


def _geqrf_samples(dtype):
    for a, tag in _inputs(dtype):
        yield Sample((a,), tag=tag)


def _big_samples(dtype):
    for i, shape in enumerate(BIG_SHAPES):
        yield Sample((make(shape, dtype, seed=50 + i),), tag=f"blocked {shape}")
    yield Sample((make((2, 100, 90), dtype, seed=53).mT,), tag="blocked wide batch, transposed")


def _huge_samples(dtype):
    yield Sample((make((513, 513), dtype, seed=60),), tag="513 x 513")


def _geqrf_out(a):
    qr = torch.empty(3, dtype=a.dtype, device=a.device)  # wrong shape: resized
    tau = torch.empty(2, 2, dtype=a.dtype, device=a.device)
    torch.geqrf(a, out=(qr, tau))
    qr2 = torch.empty(a.shape, dtype=a.dtype, device=a.device)  # right shape, row-major
    tau2 = torch.empty(0, dtype=a.dtype, device=a.device)
    torch.geqrf(a, out=(qr2, tau2))
    return qr, tau, qr2, tau2


def _geqrf_out_samples(dtype):
    yield Sample((make((5, 3), dtype),), tag="tall")
    yield Sample((make((2, 3, 4), dtype, seed=1),), tag="batch wide")
    yield Sample((make((0, 3), dtype),), tag="empty")


def _geqrf_out_cast(a):
    """A float32 out for a float64 input is allowed (a safe cast), an int32 one raises."""
    qr = torch.empty(0, dtype=torch.float32, device=a.device)
    tau = torch.empty(0, dtype=torch.float64, device=a.device)
    torch.geqrf(a, out=(qr, tau))
    return qr, tau


def _raise(fn, *args, **kw):
    return fn(*args, **kw)


def _geqrf_error_samples(dtype):
    yield Sample((torch.geqrf, make((3,), dtype)), tag="1-D raises")
    for t in HALFS + (torch.int64,):
        yield Sample((torch.geqrf, make((3, 3), t)), tag=f"{t} raises")
    yield Sample((_geqrf_out_cast, make((3, 3), torch.float64)), tag="float32 out of float64: cast")
    yield Sample((lambda a: torch.geqrf(a, out=(torch.empty(0, dtype=torch.int32, device=a.device),
                                                torch.empty(0, dtype=a.dtype, device=a.device))),
                  make((3, 3), dtype)), tag="int32 out raises")


# ---- householder_product ---------------------------------------------------------------------

def _reflectors(shape, dtype, seed=0, k=None):
    """geqrf's output for a random (..., m, n) matrix, m >= n, and its tau cut to k reflectors."""
    a, tau = torch.geqrf(make(shape, dtype, seed=seed))
    return a, tau if k is None else tau[..., :k].contiguous()


def _householder(a, tau):
    return torch.linalg.householder_product(a, tau)


def _householder_samples(dtype):
    for i, shape in enumerate([(1, 1), (4, 4), (5, 3), (2, 3, 6, 4), (0, 4, 3), (4, 0), (0, 0), (70, 40)]):
        yield Sample(_reflectors(shape, dtype, i), tag=f"{shape}")
    yield Sample(_reflectors((6, 4), dtype, 10, k=2), tag="fewer reflectors than columns")
    yield Sample(_reflectors((6, 4), dtype, 11, k=0), tag="no reflectors: identity")
    yield Sample(_reflectors((80, 70), dtype, 12, k=50), tag="blocked, k < n")
    a, tau = _reflectors((7, 5), dtype, 13)
    yield Sample((a.mT.contiguous().mT, tau), tag="column-major input")
    base = make((7, 10), dtype, seed=14)
    base[:, ::2] = a
    yield Sample((base[:, ::2], tau), tag="noncontig input")
    yield Sample((make((5, 3), dtype, seed=15), make((3,), dtype, seed=16)), tag="arbitrary reflectors")


def _householder_grad_samples(dtype):
    yield Sample(_reflectors((5, 3), dtype, 1), tag="tall")
    yield Sample(_reflectors((2, 4, 4), dtype, 2, k=3), tag="batch, k < n")


def _householder_out(a, tau):
    out = torch.empty(1, dtype=a.dtype, device=a.device)
    torch.linalg.householder_product(a, tau, out=out)
    out2 = torch.empty(a.shape, dtype=a.dtype, device=a.device)
    torch.linalg.householder_product(a, tau, out=out2)
    out3 = torch.empty(0, dtype=torch.float32, device=a.device)  # a safe cast for float64
    torch.linalg.householder_product(a, tau, out=out3)
    return out, out2, out3


def _householder_error_samples(dtype):
    a, tau = _reflectors((5, 3), dtype)
    hp = torch.linalg.householder_product
    yield Sample((hp, a[:, 0], tau), tag="1-D raises")
    yield Sample((hp, a.mT, tau), tag="wide raises")
    yield Sample((hp, a, make((4,), dtype)), tag="tau too long raises")
    yield Sample((hp, a.expand(2, 5, 3), tau), tag="tau ndim raises")
    yield Sample((hp, a.expand(2, 5, 3), tau.expand(3, 3)), tag="tau batch raises")
    yield Sample((hp, a, tau.to(torch.float32 if dtype == torch.float64 else torch.float64)), tag="tau dtype raises")
    yield Sample((hp, a.half(), tau.half()), tag="float16 raises")
    yield Sample((hp, a.long(), tau.long()), tag="int64 raises")
    yield Sample((lambda x, t: hp(x, t, out=torch.empty(0, dtype=torch.int32, device=x.device)), a, tau),
                 tag="int32 out raises")


# ---- ormqr ---------------------------------------------------------------------------------

def _ormqr(a, tau, c, left, transpose):
    return torch.ormqr(a, tau, c, left=left, transpose=transpose)


def _ormqr_samples(dtype):
    for left in (True, False):
        for tr in (False, True):
            kw = f"left={left} transpose={tr}"
            for i, (ashape, cother) in enumerate([((5, 3), 4), ((4, 4), 2), ((3, 5), 6), ((2, 6, 4), 3),
                                                  ((1, 1), 1), ((0, 3, 2), 2), ((70, 40), 3), ((80, 50), 70)]):
                a, tau = _reflectors(ashape, dtype, i)
                m, batch = ashape[-2], ashape[:-2]
                c = make(batch + ((m, cother) if left else (cother, m)), dtype, seed=10 + i)
                yield Sample((a, tau, c, left, tr), tag=f"{ashape} {kw}")
            a, tau = _reflectors((6, 4), dtype, 20)
            c = make((5, 6), dtype, seed=21).mT if left else make((6, 5), dtype, seed=21).mT
            yield Sample((a.mT.contiguous().mT, tau, c, left, tr), tag=f"transposed other {kw}")
            c = make((6, 6), dtype, noncontig=True, seed=22)
            yield Sample((a, tau, c, left, tr), tag=f"noncontig other {kw}")


def _ormqr_grad_samples(dtype):
    for left in (True, False):
        for tr in (False, True):
            a, tau = _reflectors((5, 3), dtype, 1)
            yield Sample((a, tau, make((5, 2) if left else (2, 5), dtype, seed=2), left, tr),
                         tag=f"left={left} transpose={tr}")


def _ormqr_out(a, tau, c, left, transpose):
    out = torch.empty(2, 2, dtype=a.dtype, device=a.device)
    torch.ormqr(a, tau, c, left=left, transpose=transpose, out=out)
    out2 = torch.empty(c.shape, dtype=a.dtype, device=a.device)
    torch.ormqr(a, tau, c, left=left, transpose=transpose, out=out2)
    return out, out2


def _ormqr_error_samples(dtype):
    a, tau = _reflectors((5, 3), dtype)
    c = make((5, 2), dtype, seed=1)
    yield Sample((torch.ormqr, a[:, 0], tau, c), tag="1-D input raises")
    yield Sample((torch.ormqr, a, tau, c[:, 0]), tag="1-D other raises")
    yield Sample((torch.ormqr, a, tau, make((4, 2), dtype)), tag="rows mismatch raises")
    yield Sample((torch.ormqr, a, tau[:2], c), tag="tau shorter than min(m, n) raises")
    yield Sample((torch.ormqr, a, make((4,), dtype), c), tag="tau longer than n raises")
    yield Sample((torch.ormqr, a.expand(2, 5, 3), tau.expand(2, 3), c), tag="other ndim raises")
    yield Sample((torch.ormqr, a.expand(2, 5, 3), tau.expand(2, 3), c.expand(1, 5, 2)), tag="other batch raises")
    yield Sample((torch.ormqr, a, tau, c.to(torch.float32 if dtype == torch.float64 else torch.float64)),
                 tag="other dtype raises")
    yield Sample((lambda *x: torch.ormqr(*x, out=torch.empty(0, dtype=torch.int32, device=c.device)), a, tau, c),
                 tag="out dtype raises")
    yield Sample((torch.ormqr, a.half(), tau.half(), c.half()), tag="float16 raises")


# ---- linalg.qr -----------------------------------------------------------------------------

def _qr(a, mode="reduced"):
    return torch.linalg.qr(a, mode=mode)


def _qr_samples(dtype):
    for mode in ("reduced", "complete", "r"):
        for a, tag in _inputs(dtype):
            yield Sample((a, mode), tag=f"{tag} {mode}")


def _qr_big_samples(dtype):
    for s in _big_samples(dtype):
        for mode in ("reduced", "complete"):
            yield Sample(s.args + (mode,), tag=f"{s.tag} {mode}")


def _qr_huge_samples(dtype):
    for s in _huge_samples(dtype):
        yield Sample(s.args + ("reduced",), tag=s.tag)


def _qr_grad_samples(dtype):
    """Full-rank inputs: QR with LAPACK's signs is unique, so Q, R and their gradients agree."""
    for i, shape in enumerate([(4, 4), (6, 3), (3, 5), (2, 5, 4)]):
        yield Sample((make(shape, dtype, seed=i), "reduced"), tag=f"{shape} reduced")
    yield Sample((make((4, 4), dtype, seed=5), "complete"), tag="square complete")
    yield Sample((make((3, 5), dtype, seed=6), "complete"), tag="wide complete")
    yield Sample((make((5, 3), dtype, seed=7), "complete"), tag="tall complete: backward raises")
    yield Sample((make((5, 3), dtype, seed=8), "r"), tag="mode r: backward raises")


def _qr_out(a, mode):
    q = torch.empty(2, dtype=a.dtype, device=a.device)
    r = torch.empty(5, 5, dtype=a.dtype, device=a.device)
    torch.linalg.qr(a, mode=mode, out=(q, r))
    q2, r2 = torch.linalg.qr(a, mode=mode)
    q3 = torch.empty(q2.shape, dtype=a.dtype, device=a.device)  # row-major outs of the right shape
    r3 = torch.empty(r2.shape, dtype=a.dtype, device=a.device)
    torch.linalg.qr(a, mode=mode, out=(q3, r3))
    return q, r, q3, r3


def _qr_out_samples(dtype):
    for mode in ("reduced", "complete", "r"):
        for i, shape in enumerate([(5, 3), (3, 5), (2, 4, 4)]):
            yield Sample((make(shape, dtype, seed=i), mode), tag=f"{shape} {mode}")


def _qr_error_samples(dtype):
    yield Sample((_qr, make((4, 3), dtype), "bogus"), tag="bad mode raises")
    yield Sample((_qr, make((4,), dtype)), tag="1-D raises")
    yield Sample((_qr, make((4, 3), torch.int64)), tag="int64 raises")
    for t in HALFS:
        yield Sample((_qr, make((4, 3), t)), tag=f"{t} raises")
    yield Sample((lambda a: torch.linalg.qr(a, out=(torch.empty(0, dtype=torch.float16, device=a.device),
                                                    torch.empty(0, dtype=a.dtype, device=a.device))),
                  make((4, 3), dtype)), tag="out of another dtype raises")


def _qr_legacy(a, some=True):
    return torch.qr(a, some=some)


# ---- lstsq ---------------------------------------------------------------------------------

def _wellcond(shape, dtype, seed):
    """A random (..., m, n) matrix with a boosted diagonal: full rank, condition near 1."""
    a = make(shape, dtype, seed=seed)
    k = min(shape[-2], shape[-1])
    idx = torch.arange(k)
    a[..., idx, idx] += 3 * max(shape[-2], shape[-1]) ** 0.5
    return a


def _lstsq(a, b, **kw):
    return torch.linalg.lstsq(a, b, **kw)


def _lstsq_shapes():
    yield (5, 3), (5, 2), "tall"
    yield (3, 5), (3, 2), "wide: minimum norm"
    yield (4, 4), (4, 3), "square"
    yield (5, 3), (5,), "tall, vector rhs"
    yield (3, 5), (3,), "wide, vector rhs"
    yield (2, 6, 4), (2, 6), "batch of vectors"
    yield (2, 6, 4), (2, 6, 3), "batch"
    yield (2, 3, 5), (2, 3, 2), "wide batch"
    yield (2, 1, 6, 4), (1, 3, 6, 2), "broadcast batch"
    yield (1, 5, 3), (5, 2), "batch taken from b's rows (the CPU's broadcasting)"
    yield (0, 5, 3), (0, 5, 2), "empty batch"
    yield (0, 3), (0, 2), "no rows: zero solution"
    yield (4, 0), (4, 2), "no unknowns"
    yield (4, 3), (4, 0), "no right-hand sides"
    yield (1, 1), (1, 1), "1 x 1"
    yield (90, 70), (90, 3), "blocked tall"
    yield (70, 90), (70, 2), "blocked wide"
    yield (100, 20), (100, 80), "many right-hand sides"


def _lstsq_samples(dtype):
    for i, (sa, sb, tag) in enumerate(_lstsq_shapes()):
        yield Sample((_wellcond(sa, dtype, i), make(sb, dtype, seed=100 + i)), dict(driver="gels"), tag=tag)
    yield Sample((_wellcond((4, 6), dtype, 30).mT, make((3, 6), dtype, seed=31).mT), dict(driver="gels"),
                 tag="transposed inputs")
    yield Sample((_wellcond((6, 4), dtype, 32), make((6, 6), dtype, noncontig=True, seed=33)), dict(driver="GELS"),
                 tag="noncontig rhs, driver in capitals")
    yield Sample((_wellcond((6, 4), dtype, 34).expand(3, 6, 4), make((3, 6, 2), dtype, seed=35)),
                 dict(driver="gels", rcond=0.5), tag="expanded input, rcond (unused by gels)")


def _lstsq_solution(a, b, **kw):
    """The default driver: gels on ocl (as on CUDA), gelsy on the CPU; the solutions agree for
    full-rank input (the other outputs are driver-specific)."""
    return torch.linalg.lstsq(a, b, **kw).solution


def _lstsq_default_samples(dtype):
    for i, (sa, sb, tag) in enumerate(list(_lstsq_shapes())[:9]):
        yield Sample((_wellcond(sa, dtype, i), make(sb, dtype, seed=100 + i)), tag=tag)


def _lstsq_out(a, b):
    dev, dt = a.device, a.dtype
    outs = [torch.empty(0, dtype=dt, device=dev), torch.empty(0, dtype=dt, device=dev),
            torch.empty(0, dtype=torch.int64, device=dev), torch.empty(0, dtype=dt, device=dev)]
    torch.linalg.lstsq(a, b, driver="gels", out=tuple(outs))  # empty outs: filled in their own storage
    wrong = [torch.empty(7, dtype=dt, device=dev), torch.empty(3, dtype=dt, device=dev),
             torch.empty(2, dtype=torch.int64, device=dev), torch.empty(4, dtype=dt, device=dev)]
    torch.linalg.lstsq(a, b, driver="gels", out=tuple(wrong))  # wrongly shaped: resized (rank, S emptied)
    kept = [torch.empty(0, dtype=dt, device=dev), torch.empty(3, dtype=dt, device=dev).fill_(3),
            torch.empty(2, dtype=torch.int64, device=dev).fill_(7), torch.empty(4, dtype=dt, device=dev).fill_(5)]
    torch.linalg.lstsq(a, b, driver="gels", out=tuple(kept))  # empty solution: rank and S left alone
    m, n = a.shape[-2:]
    rows = [torch.empty(b.shape[:-2] + (b.shape[-1], max(m, n)), dtype=dt, device=dev).mT if b.dim() == a.dim()
            else torch.empty(b.shape[:-1] + (max(m, n),), dtype=dt, device=dev),
            torch.empty(0, dtype=dt, device=dev), torch.empty(2, dtype=torch.int64, device=dev).fill_(7),
            torch.empty(0, dtype=dt, device=dev)]
    torch.linalg.lstsq(a, b, driver="gels", out=tuple(rows))  # LAPACK's (max(m, n), nrhs) layout
    return outs + wrong + kept + rows


def _lstsq_out_samples(dtype):
    yield Sample((_wellcond((5, 3), dtype, 1), make((5, 2), dtype, seed=2)), tag="tall")
    yield Sample((_wellcond((3, 5), dtype, 3), make((3, 2), dtype, seed=4)), tag="wide")
    yield Sample((_wellcond((2, 5, 3), dtype, 5), make((2, 5), dtype, seed=6)), tag="batch of vectors")
    yield Sample((_wellcond((2, 5, 3), dtype, 7), make((2, 5, 2), dtype, seed=8)), tag="batch")
    yield Sample((_wellcond((2, 3, 5), dtype, 9), make((2, 3, 2), dtype, seed=10)), tag="wide batch")


def _lstsq_driver(a, b, driver):
    """A driver other than gels: the CPU runs it, ocl raises as PyTorch does on CUDA (the only
    driver there is gels); the CPU side raises the same RuntimeError so that the two agree."""
    if a.device.type == "cpu":
        torch.linalg.lstsq(a, b, driver=driver)  # the CPU accepts it
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on ocl")
    return torch.linalg.lstsq(a, b, driver=driver)


def _lstsq_driver_samples(dtype):
    for drv in ("gelsy", "gelsd", "gelss"):
        yield Sample((_wellcond((5, 3), dtype, 1), make((5, 2), dtype, seed=2), drv), tag=f"{drv} raises")


def _lstsq_error_samples(dtype):
    a, b = _wellcond((5, 3), dtype, 1), make((5, 2), dtype, seed=2)
    other = torch.float32 if dtype == torch.float64 else torch.float64
    yield Sample((_lstsq, a[:, 0], b), tag="1-D input raises")
    yield Sample((_lstsq, a, make((), dtype)), tag="0-D rhs raises")
    yield Sample((_lstsq, a, b.to(other)), tag="dtype mismatch raises")
    yield Sample((_lstsq, a, b[:4]), tag="rows mismatch raises")
    yield Sample((_lstsq, a, b[:4, 0]), tag="vector rows mismatch raises")
    yield Sample((_lstsq, a, b.expand(2, 2, 5, 2)), tag="rhs with more dims raises")
    yield Sample((_lstsq, a.expand(2, 5, 3), b.expand(3, 5, 2)), tag="batch mismatch raises")
    yield Sample((_lstsq, a, b), dict(driver="nonsense"), tag="unknown driver raises")
    yield Sample((_lstsq, a.half(), b.half()), tag="float16 raises (RuntimeError: no default rcond)")
    yield Sample((_lstsq, a.half(), b.half()), dict(rcond=0.1), tag="float16 with rcond raises NotImplementedError")
    yield Sample((_lstsq, a.long(), b.long()), tag="int64 raises")
    yield Sample((lambda x, y: torch.linalg.lstsq(x, y, out=(torch.empty(0, dtype=torch.int32, device=x.device),
                                                             torch.empty(0, dtype=x.dtype, device=x.device),
                                                             torch.empty(0, dtype=torch.int64, device=x.device),
                                                             torch.empty(0, dtype=x.dtype, device=x.device))), a, b),
                 tag="int32 solution out raises")


# ---- matrix_exp ----------------------------------------------------------------------------

def _matrix_exp(a):
    return torch.linalg.matrix_exp(a)


# 1-norms of (4, 4) matrices that land in each Taylor degree's range (float and double thetas)
# and past them (scaling and squaring).
SCALES = [1e-18, 1e-9, 1e-5, 1e-2, 0.1, 0.5, 2.0, 20.0]


def _scaled(shape, dtype, scale, seed):
    a = make(shape, torch.float64, seed=seed)
    n = a.abs().sum(-2).amax(-1, keepdim=True).unsqueeze(-1)
    return (a / n * scale).to(dtype)


def _matrix_exp_samples(dtype):
    for i, s in enumerate(SCALES):
        yield Sample((_scaled((4, 4), dtype, s, i),), tag=f"norm {s}")
    yield Sample((torch.stack([_scaled((3, 3), dtype, s, 10 + i) for i, s in enumerate(SCALES)]),),
                 tag="batch of every norm: squarings per matrix")
    yield Sample((_scaled((2, 3, 5, 5), dtype, 1.5, 20),), tag="batch")
    yield Sample((make((3, 1, 1), dtype, seed=21),), tag="1 x 1")
    yield Sample((make((0, 0), dtype),), tag="0 x 0")
    yield Sample((make((0, 3, 3), dtype),), tag="empty batch")
    yield Sample((_scaled((5, 5), dtype, 3.0, 22).mT,), tag="transposed")
    yield Sample((_scaled((2, 5, 5), dtype, 0.7, 23)[..., ::2, ::2],), tag="noncontig")
    yield Sample((_scaled((3, 3), dtype, 1.0, 24).expand(2, 3, 3),), tag="expanded batch")
    yield Sample((torch.zeros(3, 3, dtype=dtype),), tag="zeros")
    yield Sample((torch.tensor([[0., 1.], [-1., 0.]], dtype=dtype) * 3,), tag="rotation")
    yield Sample((torch.tensor([[float("nan"), 1.], [0., 1.]], dtype=dtype),), tag="nan: all nan")
    yield Sample((_scaled((70, 70), dtype, 4.0, 25),), tag="70 x 70")


def _matrix_exp_grad_samples(dtype):
    for i, s in enumerate([0.01, 0.5, 3.0]):
        yield Sample((_scaled((3, 3), dtype, s, i),), tag=f"norm {s}")
    yield Sample((_scaled((2, 4, 4), dtype, 1.0, 5),), tag="batch")


def _matrix_exp_16(a):
    """float16 / bfloat16: the CPU of torch 2.13 returns inf / nan / garbage for these (its
    16-bit evaluation overflows), so the reference is the float32 result rounded; ocl computes in
    float32 and rounds."""
    if a.device.type == "cpu":
        return torch.linalg.matrix_exp(a.float()).to(a.dtype)
    return torch.linalg.matrix_exp(a)


def _matrix_exp_16_samples(dtype):
    for i, s in enumerate([1e-3, 0.3, 2.0]):
        yield Sample((_scaled((2, 4, 4), dtype, s, i),), tag=f"norm {s}")
    yield Sample((make((2, 1, 1), dtype),), tag="1 x 1")


def _matrix_exp_error_samples(dtype):
    yield Sample((_matrix_exp, make((3, 4), dtype)), tag="non-square raises")
    yield Sample((_matrix_exp, make((3,), dtype)), tag="1-D raises")
    yield Sample((_matrix_exp, make((3, 3), torch.int64)), tag="int64 raises")
    yield Sample((torch.matrix_exp, _scaled((3, 3), dtype, 1.0, 1)), tag="torch.matrix_exp alias")


CASES = [
    OpCase("geqrf", ["aten::geqrf"], _geqrf, _geqrf_samples, dtypes=DOUBLE),
    OpCase("geqrf_f32", [], _geqrf, _geqrf_samples, dtypes=FLOAT, **TOL32),
    OpCase("geqrf_big", [], _geqrf, _big_samples, dtypes=FLOAT, **BIG32),
    OpCase("geqrf_big64", [], _geqrf, _big_samples, dtypes=DOUBLE),
    OpCase("geqrf_out", ["aten::geqrf.a"], _geqrf_out, _geqrf_out_samples, dtypes=FLOATS, **TOL32),
    OpCase("geqrf_errors", [], _raise, _geqrf_error_samples, dtypes=FLOATS),
    OpCase("linalg_householder_product", ["aten::linalg_householder_product"], _householder, _householder_samples,
           dtypes=DOUBLE),
    OpCase("linalg_householder_product_f32", [], _householder, _householder_samples, dtypes=FLOAT, **TOL32),
    OpCase("linalg_householder_product_grad", [], _householder, _householder_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_householder_product_out", ["aten::linalg_householder_product.out"], _householder_out,
           _householder_samples, dtypes=DOUBLE),
    OpCase("linalg_householder_product_errors", [], _raise, _householder_error_samples, dtypes=FLOATS),
    OpCase("ormqr", ["aten::ormqr"], _ormqr, _ormqr_samples, dtypes=DOUBLE),
    OpCase("ormqr_f32", [], _ormqr, _ormqr_samples, dtypes=FLOAT, **TOL32),
    OpCase("ormqr_grad", [], _ormqr, _ormqr_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("ormqr_out", ["aten::ormqr.out"], _ormqr_out, lambda dt: list(_ormqr_samples(dt))[::5], dtypes=FLOATS,
           **TOL32),
    OpCase("ormqr_errors", [], _raise, _ormqr_error_samples, dtypes=FLOATS),
    OpCase("linalg_qr", ["aten::linalg_qr.out"], _qr, _qr_samples, dtypes=DOUBLE),
    OpCase("linalg_qr_f32", [], _qr, _qr_samples, dtypes=FLOAT, **TOL32),
    OpCase("linalg_qr_big", [], _qr, _qr_big_samples, dtypes=FLOAT, **BIG32),
    OpCase("linalg_qr_big64", [], _qr, _qr_big_samples, dtypes=DOUBLE),
    OpCase("linalg_qr_513", [], _qr, _qr_huge_samples, dtypes=FLOAT, **BIG32),
    OpCase("linalg_qr_grad", [], _qr, _qr_grad_samples, dtypes=FLOATS, grad=True),
    OpCase("linalg_qr_out", [], _qr_out, _qr_out_samples, dtypes=FLOATS, **TOL32),
    OpCase("linalg_qr_errors", [], _raise, _qr_error_samples, dtypes=FLOATS),
    OpCase("qr_legacy", [], _qr_legacy,
           lambda dt: [Sample((make((5, 3), dt), s), tag=f"some={s}") for s in (True, False)], dtypes=FLOATS),
    OpCase("linalg_lstsq", ["aten::linalg_lstsq.out"], _lstsq, _lstsq_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_lstsq_default_driver", [], _lstsq_solution, _lstsq_default_samples, dtypes=FLOATS, atol=1e-5,
           rtol=1e-4),
    OpCase("linalg_lstsq_out", [], _lstsq_out, _lstsq_out_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-4),
    OpCase("linalg_lstsq_other_drivers", [], _lstsq_driver, _lstsq_driver_samples, dtypes=FLOATS),
    OpCase("linalg_lstsq_errors", [], _raise, _lstsq_error_samples, dtypes=FLOATS),
    OpCase("linalg_matrix_exp", ["aten::linalg_matrix_exp"], _matrix_exp, _matrix_exp_samples, dtypes=FLOATS,
           atol=1e-5, rtol=1e-4),
    OpCase("linalg_matrix_exp_grad", [], _matrix_exp, _matrix_exp_grad_samples, dtypes=FLOATS, grad=True,
           atol=1e-5, rtol=1e-4),
    OpCase("linalg_matrix_exp_16bit", [], _matrix_exp_16, _matrix_exp_16_samples, dtypes=HALFS),
    OpCase("linalg_matrix_exp_errors", [], _raise, _matrix_exp_error_samples, dtypes=FLOATS),
]
