"""Cases for the random ops (csrc/ops/random.cpp). Draws cannot match the CPU value by value,
so most cases compare shape/dtype only (values_unspecified) and the argument checks (the
CPU's exception types); where the distribution is degenerate (p in {0, 1}, one-hot
probabilities) or a canonical form exists (a sorted permutation), values are compared."""
import torch

from ..cases import FLOAT, FLOATS, HALFS, INTS, SHAPES, OpCase, Sample, make

DRAW_SHAPES = [(), (0,), (7,), (5, 3), (1031,)]
NAN, INF = float("nan"), float("inf")


def _fill_samples(*params, bad=None):
    def samples(dtype):
        for s in DRAW_SHAPES:
            yield Sample((make(s, dtype), *params), tag=f"shape{s}")
        yield Sample((make((4, 6), dtype, noncontig=True), *params), tag="noncontig")
        yield Sample((make((6, 4), dtype).t(), *params), tag="transposed")
        if bad is not None:
            yield Sample((make((3,), dtype), *bad), tag="invalid parameters")
    return samples


def _random_samples(dtype):
    for s in DRAW_SHAPES:
        yield Sample((make(s, dtype),), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True),), tag="noncontig")


def _random_range_samples(dtype):
    yield Sample((make((1031,), dtype), 3, 9), tag="[3, 9)")
    yield Sample((make((4, 6), dtype, noncontig=True), 0, 2), tag="noncontig")
    yield Sample((make((5,), dtype), -2, None), tag="to=None")
    yield Sample((make((5,), dtype), 4, 4), tag="from == to")


def _in_range(lo, hi):
    def canon(x):
        x = x.cpu()
        return ((x >= lo) & (x < hi)).all().reshape(1)
    return canon


def _bernoulli_p_samples(dtype):
    # Probabilities 0 and 1 make the draw deterministic.
    for s in [(0,), (7,), (5, 3), (1031,)]:
        p = make(s, torch.float32, low=0, high=2).floor().clamp(0, 1)
        yield Sample((make(s, dtype), p), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6,), torch.float64, low=0, high=2).floor()), tag="broadcast p")


def _bernoulli_out_samples(dtype):
    for s in [(7,), (5, 3), (65, 33)]:
        p = make(s, dtype, low=0, high=2).floor().clamp(0, 1)
        yield Sample((p,), {"out": make((2,), dtype)}, tag=f"shape{s}")


def _normal_tensor_samples(dtype):
    yield Sample((make((5, 3), dtype), make((5, 3), dtype, low=0, high=2)), tag="tensor tensor")
    yield Sample((make((5, 3), dtype), 2.0), tag="tensor float")
    yield Sample((1.0, make((7,), dtype, low=0, high=2)), tag="float tensor")
    yield Sample((make((4, 1), dtype), make((3,), dtype, low=0, high=1)), tag="broadcast")


def _normal_tensor_out_samples(dtype):
    for s in _normal_tensor_samples(dtype):
        yield Sample(s.args, {"out": make((1,), dtype)}, tag=s.tag + " out=")


def _dropout_samples(dtype):
    for s in SHAPES:
        for p in (0.0, 1.0):
            yield Sample((make(s, dtype), p, True), tag=f"shape{s} p={p}")
    yield Sample((make((4, 6), dtype, noncontig=True), 0.0, None), tag="noncontig")
    yield Sample((make((5, 3), dtype), 0.3, False), tag="eval")


def _dropout_stat_samples(dtype):
    yield Sample((make((65, 33), dtype), 0.3, True), tag="p=0.3")


def _dropout_bwd_samples(dtype):
    for s in SHAPES:
        yield Sample((make(s, dtype), make(s, torch.bool), 2.0), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((4, 6), torch.bool), 0.5), tag="noncontig")


def _one_hot(rows, ncat, seed=0):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, ncat, (rows,), generator=g)
    p = torch.zeros(rows, ncat)
    p[torch.arange(rows), idx] = torch.rand(rows, generator=g) + 0.5
    return p


def _multinomial_samples(dtype):
    yield Sample((_one_hot(1, 7)[0].to(dtype), 1, False), tag="1-D one-hot")
    yield Sample((_one_hot(4, 300).to(dtype), 5, True), tag="2-D one-hot, replacement")
    yield Sample((_one_hot(3, 5).to(dtype), 1, False), tag="2-D one-hot, no replacement")
    yield Sample((make((3, 4), dtype, low=0, high=1), 4, False), tag="all categories")
    yield Sample((torch.tensor([[0.5, 0.5], [0.0, 0.0]], dtype=dtype), 1, True), tag="zero row")
    yield Sample((torch.tensor([0.5, -0.1], dtype=dtype), 1, False), tag="negative")
    yield Sample((make((4,), dtype, low=0, high=1), 5, False), tag="too many without replacement")
    yield Sample((make((4,), dtype, low=0, high=1), 0, True), tag="no samples")


def _multinomial(p, n, r):
    out = torch.multinomial(p, n, r)
    return out.cpu()  # synchronizes, so device-detected errors surface here


def _multinomial_canon(out):
    # Without replacement every row holds distinct categories: compare the sorted rows.
    return out.sort(-1).values


def _multinomial_out(p, n, r):
    out = torch.empty(1, dtype=torch.long, device=p.device)
    torch.multinomial(p, n, r, out=out)
    return out.cpu()


def _randperm_samples(dtype):
    for n in (0, 1, 7, 512, 513, 3000):
        yield Sample((n, dtype, torch.device("cpu")), tag=f"n={n}")
    yield Sample((300, torch.int8, torch.device("cpu")), tag="too large for int8")


def _randperm(n, dtype, device):
    out = torch.empty(3, dtype=dtype, device=device)
    return torch.randperm(n, out=out)


def _randperm_canon(x):
    return x.cpu().sort().values


CASES = [
    OpCase("normal_", ["aten::normal_"], lambda x, m, s: x.normal_(m, s), _fill_samples(2.0, 3.0, bad=(0.0, -1.0)),
           dtypes=FLOATS + HALFS, values_unspecified=True),
    OpCase("uniform_", ["aten::uniform_"], lambda x, a, b: x.uniform_(a, b), _fill_samples(-1.0, 4.0, bad=(2.0, 1.0)),
           dtypes=FLOATS + HALFS, values_unspecified=True),
    OpCase("uniform_range", [], lambda x, a, b: x.clone().uniform_(a, b), _fill_samples(-1.0, 4.0),
           dtypes=FLOAT, canonicalize=_in_range(-1, 4)),
    OpCase("exponential_", ["aten::exponential_"], lambda x, l: x.exponential_(l), _fill_samples(2.0, bad=(-1.0,)),
           dtypes=FLOAT, values_unspecified=True),
    OpCase("log_normal_", ["aten::log_normal_"], lambda x, m, s: x.log_normal_(m, s), _fill_samples(0.0, 0.5, bad=(0.0, 0.0)),
           dtypes=FLOAT, values_unspecified=True),
    OpCase("cauchy_", ["aten::cauchy_"], lambda x, m, s: x.cauchy_(m, s), _fill_samples(0.0, 1.0, bad=(0.0, -1.0)),
           dtypes=FLOAT, values_unspecified=True),
    OpCase("geometric_", ["aten::geometric_"], lambda x, p: x.geometric_(p), _fill_samples(0.3, bad=(1.5,)),
           dtypes=(torch.float32, torch.int64), values_unspecified=True),
    OpCase("random_", ["aten::random_"], lambda x: x.random_(), _random_samples,
           dtypes=FLOATS + INTS + (torch.bool,), values_unspecified=True),
    OpCase("random_from_to", ["aten::random_.from"], lambda x, a, b: x.random_(a, b), _random_range_samples,
           dtypes=(torch.float32, torch.int64, torch.int8), values_unspecified=True),
    OpCase("random_from_to_range", [], lambda x, a, b: x.clone().random_(a, b), lambda d: [Sample((make((1031,), d), 3, 9))],
           dtypes=(torch.float32, torch.int32), canonicalize=_in_range(3, 9)),
    OpCase("random_to", ["aten::random_.to"], lambda x, b: x.random_(b), lambda d: [Sample((make((7, 5), d), 6)),
           Sample((make((3,), d), 0), tag="to=0")], dtypes=(torch.float32, torch.int64), values_unspecified=True),
    OpCase("bernoulli_float", ["aten::bernoulli_.float"], lambda x, p: x.bernoulli_(p),
           _fill_samples(0.5, bad=(1.5,)), dtypes=(torch.float32, torch.bool, torch.int64), values_unspecified=True),
    OpCase("bernoulli_float_degenerate", [], lambda x, p: x.bernoulli_(p),
           lambda d: [Sample((make((1031,), d), 1.0)), Sample((make((5, 3), d), 0.0))], dtypes=(torch.float32, torch.bool)),
    OpCase("bernoulli_tensor", ["aten::bernoulli_.Tensor"], lambda x, p: x.bernoulli_(p), _bernoulli_p_samples,
           dtypes=(torch.float32, torch.float64, torch.bool)),
    OpCase("bernoulli_out", ["aten::bernoulli.out"], lambda p, out: torch.bernoulli(p, out=out),
           _bernoulli_out_samples, dtypes=(torch.float32,)),
    OpCase("bernoulli", [], lambda p: torch.bernoulli(p), lambda d: [Sample((make((9, 4), d, low=0, high=2).floor(),))],
           dtypes=FLOAT),
    OpCase("normal_tensor", ["aten::normal.Tensor_Tensor", "aten::normal.Tensor_float", "aten::normal.float_Tensor"],
           torch.normal, _normal_tensor_samples, dtypes=FLOAT, values_unspecified=True),
    OpCase("normal_tensor_out", ["aten::normal.Tensor_Tensor_out", "aten::normal.Tensor_float_out",
                                 "aten::normal.float_Tensor_out"],
           torch.normal, _normal_tensor_out_samples, dtypes=FLOAT, values_unspecified=True),
    OpCase("native_dropout", ["aten::native_dropout"], torch.ops.aten.native_dropout, _dropout_samples,
           dtypes=FLOATS + HALFS),
    OpCase("native_dropout_random", [], torch.ops.aten.native_dropout, _dropout_stat_samples, dtypes=FLOAT,
           values_unspecified=True),
    OpCase("native_dropout_backward", ["aten::native_dropout_backward"], torch.ops.aten.native_dropout_backward,
           _dropout_bwd_samples, dtypes=FLOATS + HALFS),
    OpCase("multinomial", ["aten::multinomial"], _multinomial, _multinomial_samples, dtypes=(torch.float32, torch.float64),
           canonicalize=_multinomial_canon),
    OpCase("multinomial_out", ["aten::multinomial.out"], _multinomial_out,
           lambda d: [Sample((_one_hot(3, 9).to(d), 4, True))], dtypes=FLOAT),
    OpCase("randperm", ["aten::randperm.generator_out"], _randperm, _randperm_samples,
           dtypes=(torch.int64, torch.float32, torch.int32), canonicalize=_randperm_canon),
]

# ---- Gamma, Dirichlet, Poisson and Binomial samplers ----------------------------------------------
# Draws are compared by shape and dtype (values_unspecified: their statistics are checked in
# tests/test_random.py), plus the cases whose value is determined (a zero rate or concentration,
# p in {0, 1}, n <= 0, NaN) and the CPU's errors. Results are read back (.cpu()) so that a
# device-side error (poisson's invalid rate) surfaces inside the call.


def _sampler_samples(low, high):
    def samples(dtype):
        for i, s in enumerate(DRAW_SHAPES + [(3, 0, 2)]):
            yield Sample((make(s, dtype, low=low, high=high, seed=i),), tag=f"shape{s}")
        yield Sample((make((4, 6), dtype, low=low, high=high, noncontig=True),), tag="noncontig")
        yield Sample((make((6, 4), dtype, low=low, high=high).t(),), tag="transposed")
        yield Sample((make((3, 1), dtype, low=low, high=high).expand(3, 5),), tag="expanded")
    return samples


def _read(f):
    return lambda *args: f(*args).cpu()


def _gamma_determined(dtype):
    # alpha = 0 gives 0, NaN gives NaN: both then clamped to the smallest normal number.
    yield Sample((torch.tensor([0.0, NAN, 0.0], dtype=dtype),), tag="zero and NaN")


def _dirichlet_determined(dtype):
    # All-zero concentrations: equal (clamped) draws, so every share is 1/K; a 0-dim concentration is 1.
    yield Sample((torch.zeros(3, 4, dtype=dtype),), tag="zeros")
    yield Sample((torch.tensor(2.5, dtype=dtype),), tag="0-dim")
    yield Sample((torch.tensor([[NAN, NAN]], dtype=dtype),), tag="NaN")


def _poisson_determined(dtype):
    yield Sample((torch.zeros(5, 3, dtype=dtype),), tag="zero rates")


def _poisson_errors(dtype):
    yield Sample((torch.tensor([1.0, -1.0, 2.0], dtype=dtype),), tag="negative rate")
    yield Sample((torch.tensor([NAN, 1.0], dtype=dtype),), tag="NaN rate")


def _binomial_samples(dtype):
    yield Sample((make((5, 3), dtype, low=0, high=50).floor(), make((5, 3), dtype, low=0, high=1)), tag="tensors")
    yield Sample((make((1031,), dtype, low=0, high=300).floor(), make((1031,), dtype, low=0, high=1)), tag="large")
    yield Sample((make((4, 1), dtype, low=0, high=20).floor(), make((3,), dtype, low=0, high=1)), tag="broadcast")
    yield Sample((make((1,), dtype, low=0, high=20).floor(), make((3,), dtype, low=0, high=1)),
                 tag="count smaller than prob: resized")
    yield Sample((make((4, 6), dtype, low=0, high=40, noncontig=True).floor(), make((6, 4), dtype, low=0, high=1).t()),
                 tag="noncontig")
    yield Sample((make((0, 3), dtype), make((0, 3), dtype)), tag="empty")


def _binomial_determined(dtype):
    # (An infinite count gives inf or NaN on the CPU, by the draw; NaN here.)
    count = torch.tensor([5.0, 7.0, 0.0, -3.0, 4.0, 9.0, 6.0, 5.0, INF], dtype=dtype)
    prob = torch.tensor([0.0, 1.0, 0.5, 0.5, 1.5, -0.5, NAN, 1.0, 0.0], dtype=dtype)
    yield Sample((count, prob), tag="p in {0, 1}, out of range, n <= 0, NaN p")


def _binomial_errors(dtype):
    yield Sample((make((3,), torch.int64, low=0, high=9), make((3,), torch.float32, low=0, high=1)), tag="int count")
    yield Sample((make((3,), torch.float32, low=0, high=9), make((3,), torch.int64, low=0, high=1)), tag="int prob")
    yield Sample((make((3,), torch.float32, low=0, high=9), make((3,), torch.float64, low=0, high=1)),
                 tag="mixed dtypes")
    yield Sample((make((3,), torch.float16, low=0, high=9), make((3,), torch.float16, low=0, high=1)), tag="float16")


def _sampler_dtype_errors(dtype):
    # The CPU builds the Gamma and Dirichlet samplers for float and double, poisson for every
    # floating type.
    fns = (torch._standard_gamma, torch._sample_dirichlet) + ((torch.poisson,) if not dtype.is_floating_point else ())
    for f in fns:
        yield Sample((f, make((3,), dtype, low=1, high=3)), tag=f.__name__)


CASES += [
    OpCase("standard_gamma", ["aten::_standard_gamma"], torch._standard_gamma, _sampler_samples(0.05, 20.0),
           dtypes=FLOATS, values_unspecified=True),
    OpCase("standard_gamma_determined", ["aten::_standard_gamma"], _read(torch._standard_gamma), _gamma_determined,
           dtypes=FLOATS),
    OpCase("sample_dirichlet", ["aten::_sample_dirichlet"], torch._sample_dirichlet, _sampler_samples(0.05, 20.0),
           dtypes=FLOATS, values_unspecified=True),
    OpCase("sample_dirichlet_determined", ["aten::_sample_dirichlet"], _read(torch._sample_dirichlet),
           _dirichlet_determined, dtypes=FLOATS),
    OpCase("poisson", ["aten::poisson"], torch.poisson, _sampler_samples(0.0, 30.0), dtypes=FLOATS + HALFS,
           values_unspecified=True),
    OpCase("poisson_determined", ["aten::poisson"], _read(torch.poisson), _poisson_determined, dtypes=FLOATS + HALFS),
    OpCase("poisson_invalid_rate", ["aten::poisson"], _read(torch.poisson), _poisson_errors, dtypes=FLOATS),
    OpCase("binomial", ["aten::binomial"], torch.binomial, _binomial_samples, dtypes=FLOATS, values_unspecified=True),
    OpCase("binomial_determined", ["aten::binomial"], _read(torch.binomial), _binomial_determined, dtypes=FLOATS),
    OpCase("binomial_errors", ["aten::binomial"], torch.binomial, _binomial_errors),
    OpCase("sampler_dtype_errors", ["aten::_standard_gamma", "aten::_sample_dirichlet", "aten::poisson"],
           lambda f, x: f(x), _sampler_dtype_errors, dtypes=(torch.int64, torch.float16, torch.bfloat16)),
]
