"""Cases for reductions and scans (csrc/ops/reduce.cpp, csrc/ops/scan.cpp).

Every reduction runs over: full reductions of SHAPES (0-dim, empty, odd, large), single and
multiple dims (negative, keepdim), reductions over an empty dim (identity) and over a non-empty
dim of an empty tensor (empty result), non-contiguous, transposed and expanded inputs, a column
reduction (dims outer, as in a bias gradient) and two sizes that take the split (partials +
finish) path. Each distinct (op, dtype) builds one kernel program, so dtype lists are chosen
to cover every accumulation path (float, double, int64, half/bfloat16 via float) without
compiling programs no case needs."""
import torch

from ..cases import FLOAT, SHAPES, OpCase, Sample, make

F32 = (torch.float32,)
FLOATS = (torch.float32, torch.float64)
HALFS = (torch.float16, torch.bfloat16)


def _dim_samples(dtype, *, low=None, high=None, full=True, empty_dim=True, split=True, multi=True):
    """(x, kwargs) samples; kwargs hold dim/keepdim for fns of the form f(x, **kw)."""
    mk = lambda s, **kw: make(s, dtype, low=low, high=high, **kw)  # noqa: E731
    if full:
        for i, s in enumerate(SHAPES):
            yield Sample((make(s, dtype, low=low, high=high, seed=i),), {}, tag=f"all {s}")
    yield Sample((mk((65, 129)),), {"dim": 1}, tag="rows")
    yield Sample((mk((65, 129)),), {"dim": 0}, tag="columns")
    yield Sample((mk((5, 3)),), {"dim": -1, "keepdim": True}, tag="keepdim")
    yield Sample((mk(()),), {"dim": 0}, tag="0-dim dim=0")
    yield Sample((mk((4, 6), noncontig=True),), {"dim": 1}, tag="noncontig rows")
    yield Sample((mk((4, 6), noncontig=True),), {"dim": 0}, tag="noncontig columns")
    yield Sample((mk((6, 4)).t(),), {"dim": 1}, tag="transposed")
    yield Sample((mk((3, 1)).expand(3, 5),), {"dim": 1}, tag="expanded")
    yield Sample((mk((3, 0, 2)),), {"dim": 0}, tag="empty result")
    if empty_dim:
        yield Sample((mk((3, 0, 2)),), {"dim": 1}, tag="empty dim")
    if multi:
        yield Sample((mk((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}, tag="dims (0,2) keepdim")
        yield Sample((mk((9, 17, 5)),), {"dim": (0, 2)}, tag="dims (0,2)")
        yield Sample((mk((4, 6, 5)).permute(2, 0, 1),), {"dim": (1, 2)}, tag="permuted dims")
    if split and dtype in (torch.float32, torch.int64, torch.int32):
        yield Sample((mk((2, 20000)),), {"dim": 1}, tag="split rows")
        yield Sample((mk((4000, 3)),), {"dim": 0}, tag="split columns")


def _sum_samples(dtype):
    yield from _dim_samples(dtype)
    if dtype == torch.float32:
        yield Sample((make((8, 5), torch.float16),), {"dim": 1, "dtype": torch.float32}, tag="half -> float32")
        yield Sample((make((8, 5), dtype),), {"dim": 0, "dtype": torch.float64}, tag="dtype=float64")
        yield Sample((make((8, 5), dtype),), {"dtype": torch.int64}, tag="dtype=int64 truncates")
    if dtype == torch.int32:
        yield Sample((make((8, 5), dtype),), {"dim": 1, "dtype": torch.float32}, tag="int -> float32")


def _sum_out(x, out, **kw):
    return torch.sum(x, out=out, **kw)


def _sum_out_samples(dtype):
    yield Sample((make((5, 7), dtype), make((3,), dtype)), {"dim": 1}, tag="resize out")
    yield Sample((make((5, 7), dtype), make((7, 4), dtype)[:, 1]), {"dim": 0}, tag="strided out")
    x = make((4, 4), dtype)
    yield Sample((x, x[0]), {"dim": 0}, tag="out aliases input")


def _mean_samples(dtype):
    yield from _dim_samples(dtype)
    if dtype == torch.float32:
        yield Sample((make((8, 5), dtype),), {"dim": 1, "dtype": torch.float64}, tag="dtype=float64")
    yield Sample((make((3, 4), torch.int64),), {"dim": 1}, tag="int input raises")


def _mean_out(x, out, **kw):
    return torch.mean(x, out=out, **kw)


def _nansum_samples(dtype):
    x = make((6, 7), dtype)
    if dtype.is_floating_point:
        x[1, 2] = float("nan")
        x[3, :] = float("nan")
    yield Sample((x,), {}, tag="all")
    yield Sample((x,), {"dim": 1}, tag="rows")
    yield Sample((x.t(),), {"dim": 0, "keepdim": True}, tag="transposed")


def _nansum_out(x, out, **kw):
    return torch.nansum(x, out=out, **kw)


def _prod_samples(dtype):
    lo, hi = (-2, 3) if not dtype.is_floating_point else (0.5, 1.5)
    yield from _dim_samples(dtype, low=lo, high=hi, multi=False, split=False)


def _prod(x, **kw):
    if "dim" in kw:
        return torch.prod(x, kw["dim"], keepdim=kw.get("keepdim", False))
    return torch.prod(x)


def _prod_dtype(x):
    return torch.prod(x, dtype=torch.float64), torch.prod(x, 1, dtype=torch.float64)


def _minmax_samples(dtype):
    yield from _dim_samples(dtype, empty_dim=False)
    yield Sample((make((3, 0, 2), dtype),), {"dim": 1}, tag="empty dim raises")
    if dtype.is_floating_point:
        x = make((4, 9), dtype)
        x[1, 3] = float("nan")
        x[2, :] = float("-inf")
        yield Sample((x,), {"dim": 1}, tag="nan and -inf")
        yield Sample((x,), {}, tag="nan all")


def _ties(dtype):
    # Small integer-valued data: many ties, first index must win like on the CPU.
    return make((7, 33), dtype, low=0, high=3)


def _maxdim_samples(dtype):
    for s in _dim_samples(dtype, full=False, empty_dim=False, multi=False):
        yield s
    yield Sample((make((3, 0, 2), dtype),), {"dim": 1}, tag="empty dim raises")
    yield Sample((_ties(dtype),), {"dim": 1}, tag="ties rows")
    yield Sample((_ties(dtype),), {"dim": 0, "keepdim": True}, tag="ties columns")
    if dtype.is_floating_point:
        x = make((4, 9), dtype)
        x[1, 3] = float("nan")
        x[1, 6] = float("nan")
        yield Sample((x,), {"dim": 1}, tag="nan")


def _argmax_samples(dtype):
    yield from _maxdim_samples(dtype)
    yield Sample((_ties(dtype),), {}, tag="ties flattened")
    yield Sample((_ties(dtype).t(),), {}, tag="ties flattened transposed")
    yield Sample((_ties(dtype),), {"keepdim": True}, tag="dim=None keepdim")
    yield Sample((make((0,), dtype),), {}, tag="empty raises")
    yield Sample((make((), dtype),), {}, tag="0-dim")


def _maxdim(x, **kw):
    return torch.max(x, kw.pop("dim"), **kw)


def _mindim(x, **kw):
    return torch.min(x, kw.pop("dim"), **kw)


def _maxdim_out(x, **kw):
    n = x.shape[kw["dim"]] if x.dim() else 1
    v = torch.empty(0, dtype=x.dtype, device=x.device)
    i = torch.empty(n + 3, dtype=torch.long, device=x.device)[::2]
    return torch.max(x, kw["dim"], out=(v, i))


def _full_minmax(x, **kw):
    if kw:
        return x.amax(**kw), x.amin(**kw)
    return torch.max(x), torch.min(x)


def _minmax_out(x, **kw):
    o1 = torch.empty(3, dtype=x.dtype, device=x.device)
    o2 = torch.empty((), dtype=x.dtype, device=x.device)
    if kw:
        return torch.amax(x, out=o1, **kw), torch.amin(x, out=o2, **kw)
    return torch.max(x, out=o1), torch.min(x, out=o2)


def _bool_samples(dtype):
    x = make((6, 5), dtype, low=0, high=2)
    yield from _dim_samples(dtype, low=0, high=2, split=False)
    yield Sample((torch.zeros(3, 4, dtype=dtype),), {"dim": 1}, tag="zeros")
    yield Sample((torch.ones(3, 4, dtype=dtype),), {"dim": (0, 1)}, tag="ones")
    yield Sample((x.t(),), {"dim": 0, "keepdim": True}, tag="transposed")


def _all_any(x, **kw):
    if "dim" in kw and isinstance(kw["dim"], int):
        return torch.all(x, kw["dim"], kw.get("keepdim", False)), torch.any(x, kw["dim"], kw.get("keepdim", False))
    return torch.all(x, **kw), torch.any(x, **kw)


def _all_any_out(x, **kw):
    dt = torch.uint8 if x.dtype == torch.uint8 else torch.bool
    o1 = torch.empty(5, dtype=dt, device=x.device)
    o2 = torch.empty(5, dtype=dt, device=x.device)
    if not kw:
        return torch.all(x, out=o1), torch.any(x, out=o2)
    return torch.all(x, out=o1, **kw), torch.any(x, out=o2, **kw)


def _count_nonzero(x, **kw):
    kw.pop("keepdim", None)
    return torch.count_nonzero(x, **kw)


def _count_samples(dtype):
    for s in _dim_samples(dtype, low=-1, high=2, split=False):
        if not s.kwargs.get("keepdim") and s.tag != "0-dim dim=0":
            yield s


NORM_ORDS = (2, 1, float("inf"), float("-inf"), 0, 3, -1.5)


def _norm_samples(dtype):
    for ordv in NORM_ORDS:
        yield Sample((make((65, 129), dtype), ordv), {"dim": 1}, tag=f"ord {ordv} rows")
        yield Sample((make((5, 3), dtype), ordv), {}, tag=f"ord {ordv} all")
        yield Sample((make((4, 6), dtype, noncontig=True), ordv), {"dim": 0, "keepdim": True},
                     tag=f"ord {ordv} columns")
        yield Sample((make((3, 0, 2), dtype), ordv), {"dim": 1}, tag=f"ord {ordv} empty dim")
    yield Sample((make((), dtype), 2), {}, tag="0-dim")
    yield Sample((make((2, 3, 4), dtype), 2), {"dim": (0, 2)}, tag="dims (0,2)")
    yield Sample((torch.zeros(3, 4, dtype=dtype), 2), {"dim": 1}, tag="zeros")
    if dtype == torch.float32:
        yield Sample((make((2, 20000), dtype), 2), {"dim": 1}, tag="split")
        yield Sample((make((5, 6), dtype), 2), {"dim": 1, "dtype": torch.float64}, tag="dtype=float64")
        yield Sample((make((5, 6), torch.float16), 2), {"dim": 1, "dtype": torch.float32}, tag="half in float32")
        yield Sample((make((5, 6), torch.int64), 2), {"dim": 1}, tag="int raises")


def _vector_norm(x, ordv, **kw):
    return torch.linalg.vector_norm(x, ordv, **kw)


def _norm_legacy(x, ordv, **kw):
    dim = kw.get("dim", tuple(range(x.dim())))
    r = [torch.norm(x, ordv, dim=dim, keepdim=kw.get("keepdim", False))]
    if "dtype" not in kw and x.dim() > 0 and ordv == 2:
        r.append(torch.norm(x, ordv, dim=dim, dtype=torch.float64))
    return r


def _norm_out(x, ordv, **kw):
    out = torch.empty(7, dtype=kw.get("dtype", x.dtype), device=x.device)
    return torch.linalg.vector_norm(x, ordv, out=out, **kw)


def _var_samples(dtype):
    yield from _dim_samples(dtype, low=10.0, high=12.0)
    yield Sample((make((6, 7), dtype),), {"dim": 1, "correction": 0}, tag="correction 0")
    yield Sample((make((6, 7), dtype),), {"dim": 0, "correction": 2.5}, tag="correction 2.5")
    yield Sample((make((1, 7), dtype),), {"dim": 0}, tag="one sample (nan)")
    yield Sample((make((2, 7), dtype),), {"dim": 0, "correction": 3}, tag="dof < 0 (inf)")
    yield Sample((make((3, 4), torch.int64),), {"dim": 1}, tag="int raises")


def _var_std(x, **kw):
    return torch.var(x, **kw), torch.std(x, **kw), torch.var_mean(x, **kw), torch.std_mean(x, **kw)


def _var_std_out(x, **kw):
    o1 = torch.empty(3, dtype=x.dtype, device=x.device)
    o2 = torch.empty(3, dtype=x.dtype, device=x.device)
    return torch.var(x, out=o1, **kw), torch.std(x, out=o2, **kw)


def _lse_samples(dtype):
    for s in _dim_samples(dtype, full=False, split=dtype == torch.float32):
        yield s
    yield Sample((make((5, 3, 2), dtype),), {"dim": (0, 1, 2)}, tag="all dims")
    x = make((4, 9), dtype)
    x[0, :] = float("-inf")
    x[1, 2] = float("inf")
    x[2, 4] = float("nan")
    x[3, 1] = 80.0  # exp would overflow without the running max
    yield Sample((x,), {"dim": 1}, tag="inf/-inf/nan/large")
    if dtype == torch.float32:
        yield Sample((make((4, 5), torch.int64),), {"dim": 1}, tag="int input -> float")


def _lse(x, **kw):
    return torch.logsumexp(x, **kw)


def _lse_out(x, **kw):
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    return torch.logsumexp(x, out=out, **kw)


SUMS = (torch.float32, torch.float64, torch.int32, torch.int64, torch.bool) + HALFS

def _trace_samples(dtype):
    yield Sample((make((4, 4), dtype, requires_grad=dtype.is_floating_point),), tag="square")
    yield Sample((make((3, 7), dtype, seed=1),), tag="wide")
    yield Sample((make((9, 2), dtype, seed=2),), tag="tall")
    yield Sample((make((6, 5), dtype, seed=3).t(),), tag="transposed")
    yield Sample((make((5, 8), dtype, noncontig=True, seed=4),), tag="noncontig")
    yield Sample((make((0, 3), dtype),), tag="empty")
    yield Sample((make((2, 2, 2), dtype),), tag="3-d raises")
    yield Sample((make((3,), dtype),), tag="1-d raises")


CASES = [
    # int32 and bool: sum's promotion to int64; bool raises NotImplementedError, as on the CPU.
    OpCase("trace", ["aten::trace"], torch.trace, _trace_samples,
           dtypes=FLOAT + (torch.float64, torch.int64, torch.int32, torch.bool), grad=True),
    OpCase("sum", ["aten::sum.IntList_out"], lambda x, **kw: torch.sum(x, **kw), _sum_samples, dtypes=SUMS,
           grad=True),
    OpCase("sum_out", ["aten::sum.IntList_out"], _sum_out, _sum_out_samples, dtypes=(torch.float32, torch.int64)),
    OpCase("mean", ["aten::mean.out"], lambda x, **kw: torch.mean(x, **kw), _mean_samples,
           dtypes=FLOATS + HALFS, grad=True),
    OpCase("mean_out", ["aten::mean.out"], _mean_out, _sum_out_samples, dtypes=F32),
    OpCase("nansum", ["aten::nansum", "aten::nansum.out"], lambda x, **kw: torch.nansum(x, **kw),
           _nansum_samples, dtypes=(torch.float32, torch.int32), grad=True),
    OpCase("nansum_out", ["aten::nansum.out"], _nansum_out, _sum_out_samples, dtypes=F32),
    OpCase("prod", ["aten::prod", "aten::prod.int_out"], _prod, _prod_samples,
           dtypes=(torch.float32, torch.float64, torch.int64), grad=True),
    OpCase("prod_dtype", ["aten::prod", "aten::prod.int_out"], _prod_dtype,
           lambda dt: [Sample((make((3, 4), dt, low=0.5, high=1.5),))], dtypes=F32),
    OpCase("amax_amin", ["aten::amax.out", "aten::amin.out", "aten::max", "aten::min"], _full_minmax,
           _minmax_samples, dtypes=(torch.float32, torch.float64, torch.int32, torch.uint8, torch.bool, torch.float16),
           grad=True),
    OpCase("amax_amin_out", ["aten::amax.out", "aten::amin.out", "aten::max.unary_out", "aten::min.unary_out"],
           _minmax_out, lambda dt: [Sample((make((4, 6), dt),), {}), Sample((make((4, 6), dt),), {"dim": 1})],
           dtypes=F32),
    OpCase("max_dim", ["aten::max.dim_max"], _maxdim, _maxdim_samples,
           dtypes=(torch.float32, torch.float64, torch.int64, torch.bfloat16), grad=True),
    OpCase("min_dim", ["aten::min.dim_min"], _mindim, _maxdim_samples, dtypes=(torch.float32, torch.int64),
           grad=True),
    OpCase("max_dim_out", ["aten::max.dim_max"], _maxdim_out, lambda dt: [Sample((make((5, 6), dt),), {"dim": 1})],
           dtypes=F32),
    OpCase("argmax", ["aten::argmax.out"], lambda x, **kw: torch.argmax(x, **kw), _argmax_samples,
           dtypes=(torch.float32, torch.int64)),
    OpCase("argmin", ["aten::argmin.out"], lambda x, **kw: torch.argmin(x, **kw), _argmax_samples,
           dtypes=(torch.float32, torch.int64)),
    OpCase("all_any", ["aten::all.out", "aten::all.dims_out", "aten::all.all_out", "aten::any.out",
                       "aten::any.dims_out", "aten::any.all_out"], _all_any, _bool_samples,
           dtypes=(torch.bool, torch.uint8, torch.float32, torch.int32)),
    OpCase("all_any_out", ["aten::all.out", "aten::all.dims_out", "aten::all.all_out", "aten::any.out",
                           "aten::any.dims_out", "aten::any.all_out"], _all_any_out,
           lambda dt: [Sample((make((4, 6), dt, low=0, high=2),), {}),
                       Sample((make((4, 6), dt, low=0, high=2),), {"dim": 1}),
                       Sample((make((4, 6), dt, low=0, high=2),), {"dim": (0, 1)})],
           dtypes=(torch.bool, torch.uint8)),
    OpCase("count_nonzero", ["aten::count_nonzero.dim_IntList"], _count_nonzero, _count_samples,
           dtypes=(torch.float32, torch.int32)),
    OpCase("vector_norm", ["aten::linalg_vector_norm.out"], _vector_norm, _norm_samples, dtypes=FLOATS, grad=True),
    OpCase("vector_norm_half", ["aten::linalg_vector_norm.out"], _vector_norm,
           lambda dt: [Sample((make((9, 33), dt), 2), {"dim": 1}), Sample((make((9, 33), dt), 1), {})],
           dtypes=HALFS),
    OpCase("norm", ["aten::norm.out", "aten::norm.dtype_out"], _norm_legacy,
           lambda dt: (s for s in _norm_samples(dt) if "dtype" not in s.kwargs and "raises" not in s.tag),
           dtypes=F32, grad=True),
    OpCase("vector_norm_out", ["aten::linalg_vector_norm.out"], _norm_out,
           lambda dt: [Sample((make((4, 6), dt), 2), {"dim": 1}), Sample((make((4, 6), dt), 1), {})], dtypes=F32),
    OpCase("var_std", ["aten::var.correction", "aten::std.correction", "aten::var_mean.correction",
                       "aten::std_mean.correction"], _var_std, _var_samples, dtypes=FLOATS + HALFS, grad=True,
           ),
    OpCase("var_std_out", ["aten::var.correction_out", "aten::std.correction_out"], _var_std_out,
           lambda dt: [Sample((make((4, 6), dt),), {"dim": 1}), Sample((make((4, 6), dt),), {})], dtypes=F32),
    OpCase("logsumexp", ["aten::logsumexp", "aten::logsumexp.out"], _lse, _lse_samples, dtypes=FLOATS, grad=True),
    OpCase("logsumexp_out", ["aten::logsumexp.out"], _lse_out,
           lambda dt: [Sample((make((4, 6), dt),), {"dim": 1}), Sample((make((4, 6), dt),), {"dim": (0, 1)})],
           dtypes=F32),
]


# ---- scans (csrc/ops/scan.cpp) ------------------------------------------------------------

def _scan_samples(dtype):
    for i, s in enumerate(SHAPES):
        if s:
            yield Sample((make(s, dtype, seed=i), -1), tag=f"last dim {s}")
    yield Sample((make((), dtype), 0), tag="0-dim")
    yield Sample((make((65, 129), dtype), 0), tag="dim 0, 129 rows (row kernel)")
    yield Sample((make((300, 7), dtype).t(), 0), tag="strided scan dim, many rows")
    yield Sample((make((5, 300), dtype), 0), tag="columns kernel")
    yield Sample((make((200, 300), dtype, low=-1, high=1), 0), tag="columns kernel, scan dim in blocks")
    yield Sample((make((4, 6), dtype, noncontig=True), 1), tag="noncontig")
    yield Sample((make((3, 1), dtype).expand(3, 5), 1), tag="expanded")
    yield Sample((make((2, 3, 4), dtype), 1), tag="middle dim")
    yield Sample((make((3, 2500), dtype, low=-1, high=1), 1), tag="several tiles")


def _prod_scan_samples(dtype):
    for s in _scan_samples(dtype):
        x, d = s.args
        if x.dtype.is_floating_point:
            x = x.abs() * 0.03 + 0.96  # long products stay O(1), so the backward is well conditioned
        else:
            x = x.clamp(-2, 2)
        yield Sample((x, d), tag=s.tag)


def _cumsum(x, d):
    return torch.cumsum(x, d)


def _cum_inplace_out(x, d):
    y = x.clone()
    y.cumsum_(d)
    out = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.cumprod(x, d, out=out)
    return y, out, torch.cumsum(x, d, dtype=torch.float64)


CASES += [
    OpCase("cumsum", ["aten::cumsum.out"], _cumsum, _scan_samples,
           dtypes=(torch.float32, torch.float64, torch.int32, torch.bool, torch.float16), grad=True),
    OpCase("cumprod", ["aten::cumprod.out"], lambda x, d: torch.cumprod(x, d), _prod_scan_samples,
           dtypes=(torch.float32, torch.int64), grad=True, atol=1e-4, rtol=1e-4),
    OpCase("cum_inplace_out", ["aten::cumsum.out", "aten::cumprod.out"], _cum_inplace_out,
           lambda dt: [Sample((make((4, 9), dt, low=0.5, high=1.5), 1)),
                       Sample((make((9, 4), dt, low=0.5, high=1.5), 0))], dtypes=F32),
]


# ---- aminmax (csrc/ops/reduce.cpp) and cummax/cummin/logcumsumexp (csrc/ops/scan.cpp) --------

def _aminmax_samples(dtype):
    # Full reductions of SHAPES (the empty ones raise like the CPU), one int dim (negative,
    # keepdim, 0-dim, strided, expanded, empty result, split path).
    yield from _dim_samples(dtype, empty_dim=False, multi=False)
    yield Sample((make((3, 0, 2), dtype),), {"dim": 1}, tag="empty dim raises")
    yield Sample((make((2, 3, 4), dtype),), {"keepdim": True}, tag="dim=None keepdim")
    yield Sample((make((2, 3, 4), dtype),), {"dim": -2}, tag="dim -2")
    if dtype.is_floating_point:
        x = make((4, 9), dtype)
        x[1, 3] = float("nan")
        x[2, :] = float("-inf")
        x[3, 0] = float("inf")
        yield Sample((x,), {"dim": 1}, tag="nan and infs")
        yield Sample((x.t(),), {"dim": 0, "keepdim": True}, tag="nan and infs, columns")
        yield Sample((x,), {}, tag="nan all")


def _aminmax_out(x, **kw):
    lo = torch.empty(3, dtype=x.dtype, device=x.device)           # wrong size: resized
    hi = torch.empty(7, 2, dtype=x.dtype, device=x.device)[:, 0]  # strided, wrong size
    return torch.aminmax(x, out=(lo, hi), **kw)


def _cum_ties(dtype, shape=(7, 33)):
    # Few distinct values: ties everywhere, so the index rule (the later element wins) matters.
    return make(shape, dtype, low=0, high=3)


def _cummaxmin_samples(dtype):
    yield from _scan_samples(dtype)
    yield Sample((_cum_ties(dtype), 1), tag="ties rows")
    yield Sample((_cum_ties(dtype), 0), tag="ties columns")
    yield Sample((_cum_ties(dtype, (300, 5)).t(), 1), tag="ties, strided scan dim")
    # Few long rows are cut into blocks (reduce-then-scan) when they cannot fill the device.
    yield Sample((_cum_ties(dtype, (2, 9000)), 1), tag="ties, multi-block")
    if dtype == torch.float32:
        yield Sample((make((2, 9000), dtype), -1), tag="multi-block")
    yield Sample((make((3, 0, 2), dtype), 1), tag="empty")
    yield Sample((make((2, 3, 4), dtype), -3), tag="dim -3")
    if dtype.is_floating_point:
        x = make((5, 9), dtype)
        x[0, 3] = x[0, 6] = float("nan")   # NaN wins and the later NaN takes the index
        x[1, 0] = float("nan")
        x[2, :] = float("-inf")
        x[3, 4] = float("inf")
        x[4, :] = 0.0
        x[4, 3] = -0.0                      # equal to 0.0: a tie
        yield Sample((x, 1), tag="nan, infs, signed zeros")
        yield Sample((x.t().contiguous(), 0), tag="nan, infs, columns")
        y = make((2, 9000), dtype)
        y[0, 4000] = float("nan")
        y[1, 8999] = float("nan")
        yield Sample((y, 1), tag="nan, multi-block")


def _cummax(x, d):
    return torch.cummax(x, d)


def _cummin(x, d):
    return torch.cummin(x, d)


def _cummaxmin_out(x, d):
    v = torch.empty(3, dtype=x.dtype, device=x.device)
    i = torch.empty(x.numel() * 2 + 1, dtype=torch.long, device=x.device)[::2]
    torch.cummax(x, d, out=(v, i))
    v2 = torch.empty(x.shape[::-1], dtype=x.dtype, device=x.device).t()  # strided out
    i2 = torch.empty(0, dtype=torch.long, device=x.device)
    torch.cummin(x, d, out=(v2, i2))
    return v, i, v2, i2


def _lcse_samples(dtype):
    yield from _scan_samples(dtype)
    yield Sample((make((2, 9000), dtype), -1), tag="multi-block")
    yield Sample((make((3, 0, 2), dtype), 1), tag="empty")
    x = make((5, 9), dtype)
    x[0, :] = float("-inf")
    x[1, 2] = float("inf")
    x[1, 5] = float("inf")
    x[2, 4] = float("nan")
    x[3, 1] = 80.0   # exp would overflow without rescaling
    x[4, 6] = -80.0
    yield Sample((x, 1), tag="infs, nan, large")
    if dtype == torch.float32:
        yield Sample((make((4, 5), torch.int64), 1), tag="int raises")


def _lcse(x, d):
    return torch.logcumsumexp(x, d)


def _lcse_inf_free(dtype):
    # Gradient samples: no infinities/NaN (their gradients are NaN on both, but 0 * inf forms
    # are compared elementwise and differ in sign conventions only by accident).
    for s in _lcse_samples(dtype):
        if "infs" not in s.tag and "raises" not in s.tag:
            yield s


def _lcse_out(x, d):
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    torch.logcumsumexp(x, d, out=out)
    y = x.clone()
    torch.logcumsumexp(y, d, out=y)  # out is the input: in place
    return out, y


def _overlap_out(x, which):
    # The CPU rejects outputs that partially overlap the input (or, for the scans, themselves).
    if which == "cumsum partial":
        torch.cumsum(x[:-1], 0, out=x[1:])
    elif which == "cumsum internal":
        torch.cumsum(x[:3], 0, out=x[3:4].expand(3))
    elif which == "logcumsumexp partial":
        torch.logcumsumexp(x[:-1], 0, out=x[1:])
    elif which == "aminmax partial":
        torch.aminmax(x[:8].view(2, 4), dim=0, out=(x[1:5], x[6:10]))
    return x


CASES += [
    OpCase("scan_aminmax_overlap", ["aten::cumsum.out", "aten::_logcumsumexp.out", "aten::aminmax.out"],
           _overlap_out, lambda dt: [Sample((make((10,), dt), w), tag=w) for w in
                                     ("cumsum partial", "cumsum internal", "logcumsumexp partial", "aminmax partial")],
           dtypes=F32),
    OpCase("aminmax", ["aten::aminmax.out"], lambda x, **kw: torch.aminmax(x, **kw), _aminmax_samples,
           dtypes=(torch.float32, torch.float64, torch.int64, torch.bool, torch.float16, torch.bfloat16), grad=True),
    OpCase("aminmax_out", ["aten::aminmax.out"], _aminmax_out,
           lambda dt: [Sample((make((4, 6), dt),), {"dim": 1}), Sample((make((4, 6), dt),), {}),
                       Sample((make((4, 6), dt),), {"dim": 0, "keepdim": True})], dtypes=F32),
    OpCase("cummax", ["aten::_cummax_helper"], _cummax, _cummaxmin_samples,
           dtypes=(torch.float32, torch.float64, torch.int32, torch.uint8, torch.bool, torch.float16,
                   torch.bfloat16), grad=True),
    OpCase("cummin", ["aten::_cummin_helper"], _cummin, _cummaxmin_samples,
           dtypes=(torch.float32, torch.int64), grad=True),
    OpCase("cummax_cummin_out", ["aten::_cummax_helper", "aten::_cummin_helper"], _cummaxmin_out,
           lambda dt: [Sample((make((4, 9), dt), 1)), Sample((make((9, 4), dt), 0)), Sample((make((), dt), 0))],
           dtypes=F32),
    OpCase("logcumsumexp", ["aten::_logcumsumexp", "aten::_logcumsumexp.out"], _lcse, _lcse_samples,
           dtypes=FLOATS + HALFS),
    OpCase("logcumsumexp_grad", ["aten::_logcumsumexp"], _lcse, _lcse_inf_free, dtypes=FLOATS, grad=True),
    OpCase("logcumsumexp_out", ["aten::_logcumsumexp.out"], _lcse_out,
           lambda dt: [Sample((make((4, 9), dt), 1)), Sample((make((9, 4), dt), 0)),
                       Sample((make((2, 3000), dt), -1))], dtypes=F32),
]


# ---- renorm ----------------------------------------------------------------------------------
def _renorm_samples(dtype):
    for p in (2, 1, 3.5, 0.5, float("inf")):
        for dim in (0, 1, -1):
            yield Sample((make((4, 5), dtype), p, dim, 2.0), tag=f"p={p} dim {dim}")
    yield Sample((make((3, 4, 5), dtype), 2, 1, 3.0), tag="3-d dim 1")
    yield Sample((make((3, 4, 5), dtype), 2, 2, 100.0), tag="below maxnorm")
    yield Sample((make((3, 4, 5), dtype), 2, 0, 0.0), tag="maxnorm 0")
    yield Sample((make((4, 6), dtype, noncontig=True), 2, 0, 1.0), tag="noncontig")
    yield Sample((make((6, 4), dtype).t(), 2, 1, 1.0), tag="transposed")
    yield Sample((make((3, 1), dtype).expand(3, 5), 2, 0, 1.0), tag="expanded")
    yield Sample((make((0, 5), dtype), 2, 0, 1.0), tag="empty dim")
    yield Sample((make((4, 0), dtype), 2, 0, 1.0), tag="empty rows")
    yield Sample((make((65, 129), dtype), 2, 1, 4.0), tag="large")


def _renorm_forms(x, p, dim, maxnorm):
    y = x.clone()
    y.renorm_(p, dim, maxnorm)
    out = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.renorm(x, p, dim, maxnorm, out=out)
    return y, out


def _renorm_error_samples(dtype):
    yield Sample((make((4,), dtype), 2, 0, 1.0), tag="1-d raises")
    yield Sample((make((4, 5), dtype), 0, 0, 1.0), tag="p=0 raises")
    yield Sample((make((4, 5), dtype), -1, 0, 1.0), tag="p<0 raises")
    yield Sample((make((4, 5), dtype), 2, 0, -1.0), tag="negative maxnorm raises")
    yield Sample((make((4, 5), dtype), 2, 2, 1.0), tag="dim out of range raises")
    yield Sample((make((4, 5), torch.int64), 2, 0, 1.0), tag="int64 raises")


CASES += [
    OpCase("renorm", ["aten::renorm.out"], torch.renorm, _renorm_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("renorm_forms", ["aten::renorm.out"], _renorm_forms, _renorm_samples, dtypes=FLOATS),
    OpCase("renorm_errors", ["aten::renorm.out"], torch.renorm, _renorm_error_samples, dtypes=FLOAT),
]
