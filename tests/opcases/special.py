"""Cases for the special functions (csrc/ops/special.cpp): torch.special's Bessel, Airy,
normal-distribution and zeta functions, the orthogonal polynomials, igamma / igammac, and the
Gamma / Dirichlet samplers' reparameterized gradients. Inputs cover each function's branches
(Cephes switches at 5, 8, 2, 2.09, ...), poles, infinities, NaN, large arguments for the
asymptotic forms, integer inputs (promoted to float, as on the CPU), the CPU's errors for 16-bit
dtypes, broadcasting, the Scalar overloads (CompositeExplicitAutograd wrappers of the Tensor
ones), out= (resized when wrongly shaped) and gradients where the CPU has derivatives."""
import torch

from ..cases import FLOATS, HALFS, SHAPES, OpCase, Sample, make, unary_samples

INT_INPUTS = (torch.int64, torch.uint8, torch.bool)
# Integer inputs give float32 results: float32's tolerances (test_ops has none for integer dtypes).
F32_TOL = dict(atol=1e-5, rtol=1.3e-5)
NAN, INF = float("nan"), float("inf")

# ---- unary functions -------------------------------------------------------------------------

# Each function's branch points and special arguments, and a range for random inputs.
UNARY = {
    "special_ndtri": (torch.special.ndtri, [0.0, 1.0, 0.5, 1e-300, 1e-30, 1e-10, 0.01, 0.13533528323661269, 0.135,
                                            0.136, 0.864, 0.8646647167633873, 0.99, 1 - 1e-10, -0.1, 1.1, -INF, INF,
                                            NAN], (0.0, 1.0)),
    "special_log_ndtr": (torch.special.log_ndtr, [0.0, -1.0, -0.999, -1.001, 1.0, 5.0, 10.0, 40.0, -5.0, -10.0,
                                                  -40.0, -1e3, -1e10, INF, -INF, NAN], (-20.0, 10.0)),
    "special_erfcx": (torch.special.erfcx, [0.0, -0.0, 0.5, 1.0, 3.9, 4.0, 4.1, 10.0, 26.0, 50.0, 51.0, 1e4, 5e7,
                                            1e9, 1e300, -1.0, -6.0, -6.2, -9.0, -9.5, -26.0, -27.0, INF, -INF, NAN],
                      (-6.0, 30.0)),
    "special_bessel_j0": (torch.special.bessel_j0, [0.0, -0.0, 1e-6, 4.99, 5.0, 5.01, -5.01, 2.404825557695773,
                                                    30.0, 1e3, 1e6, INF, -INF, NAN], (-40.0, 40.0)),
    "special_bessel_j1": (torch.special.bessel_j1, [0.0, -0.0, 1e-6, 4.99, 5.0, 5.01, -5.01, 3.8317059702075125,
                                                    30.0, -1e3, 1e6, INF, -INF, NAN], (-40.0, 40.0)),
    "special_bessel_y0": (torch.special.bessel_y0, [0.0, -0.0, -1.0, 1e-6, 4.99, 5.0, 5.01, 0.8935769662791675,
                                                    30.0, 1e3, 1e6, INF, -INF, NAN], (-2.0, 40.0)),
    "special_bessel_y1": (torch.special.bessel_y1, [0.0, -0.0, -1.0, 1e-6, 4.99, 5.0, 5.01, 2.197141326031017,
                                                    30.0, 1e3, 1e6, INF, -INF, NAN], (-2.0, 40.0)),
    "special_modified_bessel_i0": (torch.special.modified_bessel_i0, [0.0, -0.0, 1.0, -1.0, 7.99, 8.0, 8.01, -8.01,
                                                                      30.0, -80.0, 700.0, INF, -INF, NAN],
                                   (-30.0, 30.0)),
    "special_modified_bessel_i1": (torch.special.modified_bessel_i1, [0.0, -0.0, 1.0, -1.0, 7.99, 8.0, 8.01, -8.01,
                                                                      30.0, -80.0, 700.0, INF, -INF, NAN],
                                   (-30.0, 30.0)),
    "special_modified_bessel_k0": (torch.special.modified_bessel_k0, [0.0, -0.0, -1.0, 1e-8, 1.99, 2.0, 2.01, 30.0,
                                                                      700.0, 800.0, INF, -INF, NAN], (-1.0, 20.0)),
    "special_modified_bessel_k1": (torch.special.modified_bessel_k1, [0.0, -0.0, -1.0, 1e-8, 1.99, 2.0, 2.01, 30.0,
                                                                      700.0, 800.0, INF, -INF, NAN], (-1.0, 20.0)),
    "special_scaled_modified_bessel_k0": (torch.special.scaled_modified_bessel_k0,
                                          [0.0, -1.0, 1e-8, 1.99, 2.0, 2.01, 30.0, 800.0, 1e10, INF, -INF, NAN],
                                          (-1.0, 50.0)),
    "special_scaled_modified_bessel_k1": (torch.special.scaled_modified_bessel_k1,
                                          [0.0, -1.0, 1e-8, 1.99, 2.0, 2.01, 30.0, 800.0, 1e10, INF, -INF, NAN],
                                          (-1.0, 50.0)),
    "special_spherical_bessel_j0": (torch.special.spherical_bessel_j0, [0.0, -0.0, 0.49, 0.5, 0.51, -0.5, 3.14159,
                                                                        1e3, 1e8, INF, -INF, NAN], (-30.0, 30.0)),
    "special_airy_ai": (torch.special.airy_ai, [0.0, 1.0, -1.0, 2.08, 2.09, 2.1, -2.08, -2.09, -2.1, 8.32, 8.33,
                                                50.0, 103.8, 103.9, -50.0, -1e3, INF, -INF, NAN], (-20.0, 20.0)),
}


def _unary_samples(values, rng):
    lo, hi = rng

    def samples(dtype):
        if dtype in INT_INPUTS:
            yield from unary_samples(dtype)
            return
        yield from unary_samples(dtype, low=lo, high=hi)
        yield Sample((torch.tensor(values, dtype=dtype),), tag="special values")
        yield Sample((make((400,), dtype, low=lo, high=hi, seed=7),), tag="range")
        if lo < 0:  # magnitudes across the exponent range, both signs
            yield Sample((torch.logspace(-30, 30, 121, dtype=dtype) * torch.tensor([1.0, -1.0]).repeat(61)[:121].to(
                dtype),), tag="magnitudes")
        else:
            yield Sample((torch.logspace(-30, 30, 121, dtype=dtype),), tag="magnitudes")
    return samples


def _unary_forms(fn):
    """out= (wrong shape: resized; a float64 out for a float input: cast) for float inputs."""
    def forms(x):
        out = torch.empty(1, dtype=x.dtype, device=x.device)
        fn(x, out=out)
        out64 = torch.empty(0, dtype=torch.float64, device=x.device)
        fn(x, out=out64)
        return out, out64
    return forms


def _bad_16bit(dtype):
    yield Sample((make((5,), dtype, low=0.1, high=0.9),), tag="16-bit raises")


CASES = []
for _name, (_fn, _values, _rng) in UNARY.items():
    _covers = [f"aten::{_name}.out"]
    CASES += [
        OpCase(_name, _covers, _fn, _unary_samples(_values, _rng), dtypes=FLOATS),
        OpCase(f"{_name}_int", _covers, _fn, _unary_samples(_values, _rng), dtypes=INT_INPUTS, **F32_TOL),
        OpCase(f"{_name}_forms", _covers, _unary_forms(_fn),
               lambda dt, rng=_rng: [Sample((make((3, 4), dt, low=rng[0], high=rng[1]),))], dtypes=FLOATS),
        OpCase(f"{_name}_half", _covers, _fn, _bad_16bit, dtypes=HALFS),
    ]
    if _name in ("special_ndtri", "special_log_ndtr", "special_erfcx"):
        # The CPU's derivatives (exp of the result's square, ...): over the random range, not the
        # magnitudes, where they cancel (log_ndtr(x) + x^2 / 2 at x = -3e6) to far below the
        # forward's rounding.
        CASES.append(OpCase(f"{_name}_grad", _covers, _fn, lambda dt, rng=_rng: unary_samples(dt, low=rng[0],
                                                                                               high=rng[1]),
                            dtypes=FLOATS, grad=True))

# ---- orthogonal polynomials ----------------------------------------------------------------------

POLYNOMIALS = {
    # name: (torch fn, x range for random inputs)
    "chebyshev_polynomial_t": (torch.special.chebyshev_polynomial_t, (-1.2, 1.2)),
    "chebyshev_polynomial_u": (torch.special.chebyshev_polynomial_u, (-1.2, 1.2)),
    "chebyshev_polynomial_v": (torch.special.chebyshev_polynomial_v, (-1.2, 1.2)),
    "chebyshev_polynomial_w": (torch.special.chebyshev_polynomial_w, (-1.2, 1.2)),
    "shifted_chebyshev_polynomial_t": (torch.special.shifted_chebyshev_polynomial_t, (-0.1, 1.1)),
    "shifted_chebyshev_polynomial_u": (torch.special.shifted_chebyshev_polynomial_u, (-0.1, 1.1)),
    "shifted_chebyshev_polynomial_v": (torch.special.shifted_chebyshev_polynomial_v, (-0.1, 1.1)),
    "shifted_chebyshev_polynomial_w": (torch.special.shifted_chebyshev_polynomial_w, (-0.1, 1.1)),
    "hermite_polynomial_h": (torch.special.hermite_polynomial_h, (-3.0, 3.0)),
    "hermite_polynomial_he": (torch.special.hermite_polynomial_he, (-3.0, 3.0)),
    "laguerre_polynomial_l": (torch.special.laguerre_polynomial_l, (-2.0, 8.0)),
    "legendre_polynomial_p": (torch.special.legendre_polynomial_p, (-1.2, 1.2)),
}
# End points and centres of every family, 0 (the Laguerre shortcut) and infinities. NaN only with
# degrees up to 1 (POLY_NAN): for larger ones most of the CPU's recurrences return an uninitialized
# value when x is NaN.
POLY_X = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 0.75, 2.0, -2.0, 1.0001, -0.9999, INF, -INF]
POLY_NAN = ([NAN] * 4, [-1.0, 0.0, 1.0, 0.5])
# Negative, fractional (truncated) degrees and the closed-form thresholds (> 4, > 6, > 8); then
# large ones: the Hermite limits (128 float, 512 double) and degrees treated as negative (out of
# int64's range, infinite, NaN: 0), where a recurrence's n rounding steps (and a compiler's fma
# contractions in them) need looser float tolerances.
POLY_N = [-3.0, -1.0, -0.5, 0.0, 0.7, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0, 2.5]
POLY_N_LARGE = [40.0, 128.0, 129.0, 512.0, 513.0, 1e20, INF, -INF, NAN]


def _poly_samples(rng, max_n=12):
    lo, hi = rng

    def samples(dtype):
        if dtype in INT_INPUTS:  # integer x and n: promoted to float
            yield Sample((make((5, 3), dtype, low=-2, high=3), make((5, 3), dtype, low=0, high=6)), tag="ints")
            yield Sample((make((6,), torch.float32, low=lo, high=hi), make((6,), dtype, low=0, high=9)),
                         tag="float x, integer n")
            return
        x = torch.tensor(POLY_X, dtype=dtype)
        n = torch.tensor(POLY_N, dtype=dtype)
        yield Sample((x[:, None], n[None, :]), tag="special values (broadcast grid)")
        yield Sample(tuple(torch.tensor(v, dtype=dtype) for v in POLY_NAN), tag="NaN x")
        yield Sample((make((200,), dtype, low=lo, high=hi), make((200,), dtype, low=-1, high=max_n).floor()),
                     tag="range")
        yield Sample((make((4, 6), dtype, low=lo, high=hi, noncontig=True), make((6, 4), dtype, low=0, high=9).t()),
                     tag="noncontig")
        for i, s in enumerate(SHAPES):
            yield Sample((make(s, dtype, low=lo, high=hi, seed=i), make(s, dtype, low=0, high=10, seed=50 + i)),
                         tag=f"shape{s}")
        yield Sample((make((3, 4), dtype, low=lo, high=hi), 5), tag="n Scalar (n_scalar)")
        yield Sample((make((3, 4), dtype, low=lo, high=hi), 3.7), tag="n float Scalar")
        yield Sample((0.5, make((3, 4), dtype, low=0, high=10).floor()), tag="x Scalar (x_scalar)")
        yield Sample((make((3, 4), dtype, low=lo, high=hi), torch.tensor(4, dtype=torch.int64)), tag="0-dim int n")
    return samples


def _poly_forms(fn):
    """The out= forms of the three overloads (wrongly shaped outs are resized)."""
    def forms(x, n):
        o1 = torch.empty(1, dtype=x.dtype, device=x.device)
        fn(x, n, out=o1)
        o2 = torch.empty(0, dtype=x.dtype, device=x.device)
        fn(x, 4, out=o2)
        o3 = torch.empty(2, 2, dtype=x.dtype, device=x.device)
        fn(0.3, n, out=o3)
        return o1, o2, o3
    return forms


for _name, (_fn, _rng) in POLYNOMIALS.items():
    _covers = [f"aten::special_{_name}.out"]
    CASES += [
        # Degrees from 7 or 9 on take the CPU's closed forms (cos(n acos x), ...), ill-conditioned near
        # the end points in float: 5e-5 covers the two libms' rounding there.
        OpCase(f"special_{_name}", _covers, _fn, _poly_samples(_rng), dtypes=FLOATS, atol=5e-5, rtol=5e-5),
        # Degrees up to 40 on random x: the closed forms cos(n acos x) / sin(...) amplify the
        # float rounding of acos(x) n-fold (both here and on the CPU, with different libms).
        OpCase(f"special_{_name}_high_degree", _covers, _fn,
               lambda dt, rng=_rng: [Sample((make((300,), dt, low=rng[0], high=rng[1], seed=3),
                                             make((300,), dt, low=10, high=40, seed=4).floor())),
                                     Sample((torch.tensor(POLY_X, dtype=dt)[:, None],
                                             torch.tensor(POLY_N_LARGE, dtype=dt)[None, :]),
                                            tag="special values (broadcast grid)")],
               dtypes=FLOATS, atol=3e-4, rtol=3e-4),
        OpCase(f"special_{_name}_int", _covers, _fn, _poly_samples(_rng), dtypes=INT_INPUTS, **F32_TOL),
        OpCase(f"special_{_name}_forms", _covers, _poly_forms(_fn),
               lambda dt, rng=_rng: [Sample((make((3, 4), dt, low=rng[0], high=rng[1]),
                                             make((3, 4), dt, low=0, high=9).floor()))], dtypes=FLOATS),
        OpCase(f"special_{_name}_half", _covers, _fn,
               lambda dt: [Sample((make((5,), dt, low=-1, high=1), make((5,), dt, low=0, high=5).floor()))],
               dtypes=HALFS),
    ]

# ---- Hurwitz zeta ----------------------------------------------------------------------------------


def _zeta_samples(dtype):
    if dtype in INT_INPUTS:
        yield Sample((make((4, 3), dtype, low=2, high=6), make((4, 3), dtype, low=1, high=9)), tag="ints")
        return
    x = torch.tensor([1.0, 0.5, -1.0, 1.0001, 2.0, 3.0, 2.5, 7.0, 30.0, 50.0, INF, NAN], dtype=dtype)
    q = torch.tensor([1.0, 2.0, 0.5, 1e-3, 9.0, 10.0, 1e4, 0.0, -1.0, -2.5, -0.5, 7.5, INF, -INF, NAN], dtype=dtype)
    yield Sample((x[:, None], q[None, :]), tag="special values (broadcast grid)")
    yield Sample((make((300,), dtype, low=1.01, high=12.0), make((300,), dtype, low=0.05, high=30.0)), tag="range")
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, dtype, low=1.5, high=6, seed=i), make(s, dtype, low=0.2, high=5, seed=60 + i)),
                     tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, low=1.5, high=6, noncontig=True), make((6, 4), dtype, low=0.5, high=3).t()),
                 tag="noncontig")
    yield Sample((make((3, 4), dtype, low=1.5, high=6), 2.0), tag="other Scalar (other_scalar)")
    yield Sample((3.0, make((3, 4), dtype, low=0.5, high=6)), tag="self Scalar (self_scalar)")


def _zeta_forms(x, q):
    o1 = torch.empty(1, dtype=x.dtype, device=x.device)
    torch.special.zeta(x, q, out=o1)
    o2 = torch.empty(0, dtype=x.dtype, device=x.device)
    torch.special.zeta(x, 1.5, out=o2)
    o3 = torch.empty(0, dtype=x.dtype, device=x.device)
    torch.special.zeta(2.0, q, out=o3)
    return o1, o2, o3


def _zeta_grad_q(q):
    """The CPU differentiates zeta in q only; x is a Python number (the self_scalar overload)."""
    return torch.special.zeta(3.0, q), torch.special.zeta(torch.tensor(2.5, dtype=q.dtype), q)


ZETA = ["aten::special_zeta.out"]
CASES += [
    OpCase("special_zeta", ZETA, torch.special.zeta, _zeta_samples, dtypes=FLOATS),
    OpCase("special_zeta_int", ZETA, torch.special.zeta, _zeta_samples, dtypes=INT_INPUTS, **F32_TOL),
    OpCase("special_zeta_forms", ZETA, _zeta_forms,
           lambda dt: [Sample((make((3, 4), dt, low=1.5, high=5), make((3, 4), dt, low=0.5, high=4)))], dtypes=FLOATS),
    OpCase("special_zeta_grad", ZETA, _zeta_grad_q, lambda dt: [Sample((make((5, 3), dt, low=0.3, high=4.0),))],
           dtypes=FLOATS, grad=True),
    OpCase("special_zeta_x_grad_raises", ZETA, torch.special.zeta,
           lambda dt: [Sample((make((3,), dt, low=2, high=3), make((3,), dt, low=1, high=2)))], dtypes=FLOATS,
           grad=True),
    OpCase("special_zeta_half", ZETA, torch.special.zeta,
           lambda dt: [Sample((make((5,), dt, low=2, high=3), make((5,), dt, low=1, high=2)))], dtypes=HALFS),
]

# ---- regularized incomplete gamma functions ------------------------------------------------------


def _igamma_samples(dtype):
    # The boundaries (0, inf, NaN, negative), and a and x on both sides of the series / continued
    # fraction / asymptotic switches (x = 0.5, 1, 1.1; a = 20, 200; |x - a| / a = 0.3, 4.5/sqrt(a)).
    a = torch.tensor([0.0, 1e-3, 0.5, 1.0, 2.5, 10.0, 19.0, 21.0, 60.0, 199.0, 201.0, 1e3, 1e5, INF, NAN, -1.0],
                     dtype=dtype)
    x = torch.tensor([0.0, 1e-5, 0.3, 0.5, 0.7, 1.0, 1.1, 2.0, 15.0, 21.0, 45.0, 60.0, 190.0, 210.0, 950.0, 1e5,
                      INF, NAN, -1.0], dtype=dtype)
    yield Sample((a[:, None], x[None, :]), tag="special values (broadcast grid)")
    yield Sample((make((300,), dtype, low=0.01, high=30.0), make((300,), dtype, low=0.0, high=40.0)), tag="range")
    a2 = make((300,), dtype, low=20.0, high=600.0, seed=5)
    yield Sample((a2, a2 * make((300,), dtype, low=0.75, high=1.25, seed=6)), tag="a near x (asymptotic)")
    for i, s in enumerate(SHAPES):
        yield Sample((make(s, dtype, low=0.1, high=8, seed=i), make(s, dtype, low=0.0, high=10, seed=70 + i)),
                     tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, low=0.1, high=8, noncontig=True), make((6, 4), dtype, low=0.0, high=10).t()),
                 tag="noncontig")
    yield Sample((make((3, 4), dtype, low=0.5, high=5), make((), dtype, low=0.5, high=5)), tag="0-dim other")


def _igamma_both(a, x):
    return torch.igamma(a, x), torch.igammac(a, x), torch.special.gammainc(a, x), torch.special.gammaincc(a, x)


def _igamma_forms(a, x):
    o1, o2 = torch.empty(1, dtype=a.dtype, device=a.device), torch.empty(0, dtype=a.dtype, device=a.device)
    torch.igamma(a, x, out=o1)
    torch.igammac(a, x, out=o2)
    b, c = a.clone(), a.clone()
    b.igamma_(x)
    c.igammac_(x)
    return o1, o2, b, c


def _igamma_mixed_samples(dtype):
    # An integer a with a floating x promotes to the float type (and keeps a out of the gradients).
    yield Sample((make((5, 3), torch.int64, low=1, high=9), make((5, 3), dtype, low=0.1, high=8.0)), tag="int a")
    yield Sample((make((4,), torch.int32, low=1, high=5), make((3, 1), dtype, low=0.1, high=6.0)), tag="broadcast")


IGAMMA = ["aten::igamma.out", "aten::igammac.out"]
CASES += [
    OpCase("igamma", IGAMMA, _igamma_both, _igamma_samples, dtypes=FLOATS + HALFS),
    OpCase("igamma_forms", IGAMMA, _igamma_forms,
           lambda dt: [Sample((make((3, 4), dt, low=0.5, high=6), make((3, 4), dt, low=0.1, high=8)))],
           dtypes=FLOATS + HALFS),
    # The CPU differentiates in x only: d/dx P(a, x) = x^(a-1) e^-x / Gamma(a).
    OpCase("igamma_grad_x", IGAMMA, _igamma_both, _igamma_mixed_samples, dtypes=FLOATS, grad=True),
    OpCase("igamma_grad_a_raises", IGAMMA, _igamma_both,
           lambda dt: [Sample((make((3,), dt, low=1, high=3), make((3,), dt, low=1, high=2)))], dtypes=FLOATS,
           grad=True),
    OpCase("igamma_int_raises", IGAMMA, torch.igamma,
           lambda dt: [Sample((make((3,), dt, low=1, high=4), make((3,), dt, low=1, high=4)))],
           dtypes=(torch.int64, torch.bool)),
    OpCase("igammac_int_raises", IGAMMA, torch.igammac,
           lambda dt: [Sample((make((3,), dt, low=1, high=4), make((3,), dt, low=1, high=4)))],
           dtypes=(torch.int64, torch.uint8)),
]

# ---- the samplers' reparameterized gradients ---------------------------------------------------


def _gamma_grad_samples(dtype):
    # Every branch: x < 0.8 (Taylor), alpha > 8 near and away from x = alpha (saddle point), else
    # the rational approximation; plus zeros, NaN and broadcasting.
    g = torch.Generator().manual_seed(0)
    alpha = torch.exp(torch.rand(400, generator=g, dtype=torch.float64) * 7 - 2)
    x = torch._standard_gamma(alpha, generator=g).clamp_min(1e-6)
    yield Sample((alpha.to(dtype), x.to(dtype)), tag="Gamma draws")
    a = torch.tensor([0.5, 1.0, 2.0, 9.0, 9.0, 9.0, 20.0, 100.0, 3.0, 0.1, 5.0, 5.0], dtype=dtype)
    v = torch.tensor([0.1, 0.79, 0.81, 8.5, 9.9, 5.0, 30.0, 100.0, 0.0, NAN, 1e-30, 40.0], dtype=dtype)
    yield Sample((a, v), tag="branches and special values")
    yield Sample((make((4, 1), dtype, low=0.5, high=10), make((3,), dtype, low=0.5, high=10)), tag="broadcast")
    yield Sample((make((0, 3), dtype, low=1, high=2), make((0, 3), dtype, low=1, high=2)), tag="empty")
    yield Sample((make((4, 6), dtype, low=1, high=12, noncontig=True), make((6, 4), dtype, low=0.2, high=12).t()),
                 tag="noncontig")


def _dirichlet_grad_samples(dtype):
    g = torch.Generator().manual_seed(1)
    for lo, hi in ((-2.0, 4.0), (-5.0, 1.0), (1.0, 6.0)):
        conc = torch.exp(torch.rand(150, 3, generator=g, dtype=torch.float64) * (hi - lo) + lo)
        x = torch._sample_dirichlet(conc, generator=g).clamp(1e-12, 1 - 1e-7)
        total = conc.sum(-1, keepdim=True).expand_as(conc)
        yield Sample((x.to(dtype), conc.to(dtype), total.to(dtype)), tag=f"Dirichlet draws, log alpha in [{lo}, {hi}]")
    yield Sample((make((2, 3), dtype, low=0.05, high=0.95), make((3,), dtype, low=0.5, high=4),
                  make((2, 1), dtype, low=5, high=9)), tag="broadcast")
    yield Sample((make((0,), dtype), make((0,), dtype), make((0,), dtype)), tag="empty")


def _sampler_grad_errors(dtype):
    yield Sample((torch._standard_gamma_grad, make((3,), torch.float16, low=1, high=2),
                  make((3,), torch.float16, low=1, high=2)), tag="float16 raises")
    yield Sample((torch._standard_gamma_grad, make((3,), torch.float32, low=1, high=2),
                  make((3,), torch.float64, low=1, high=2)), tag="mixed dtypes raise")
    yield Sample((torch._standard_gamma_grad, make((3,), torch.int64, low=1, high=2),
                  make((3,), torch.int64, low=1, high=2)), tag="int64 raises")
    yield Sample((torch._dirichlet_grad, make((3,), torch.bfloat16, low=0, high=1),
                  make((3,), torch.bfloat16, low=1, high=2), make((3,), torch.bfloat16, low=3, high=4)),
                 tag="bfloat16 raises")
    yield Sample((torch._dirichlet_grad, make((3,), torch.float32, low=0, high=1),
                  make((3,), torch.float32, low=1, high=2), make((3,), torch.float64, low=3, high=4)),
                 tag="mixed dtypes raise")


CASES += [
    OpCase("standard_gamma_grad", ["aten::_standard_gamma_grad"], torch._standard_gamma_grad, _gamma_grad_samples,
           dtypes=FLOATS),
    # float: computed in double as on the CPU, which however sums its near-0 / near-1 Taylor
    # series in float: 1e-4 relative differences there.
    OpCase("dirichlet_grad", ["aten::_dirichlet_grad"], torch._dirichlet_grad, _dirichlet_grad_samples,
           dtypes=FLOATS, atol=1e-5, rtol=3e-4),
    OpCase("sampler_grad_errors", ["aten::_standard_gamma_grad", "aten::_dirichlet_grad"],
           lambda f, *args: f(*args), _sampler_grad_errors),
]
