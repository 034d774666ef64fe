"""Cases for the sorting ops (csrc/ops/sort.cpp): stable sort / argsort (short rows in local
memory, long rows through the global merge), topk, unique (also along a dim), unique_consecutive,
bincount, searchsorted and bucketize, kthvalue / median / nanmedian / mode, and histc."""
import torch

from ..cases import ALL, FLOAT, FLOATS, HALFS, INTS, OpCase, Sample, make


def _sort_samples(dtype):
    small = dict(low=-3, high=4)  # many ties: stability is checked
    for i, s in enumerate([(), (0,), (1,), (7,), (5, 3), (2, 3, 4), (3, 0, 2), (1031,), (65, 129)]):
        yield Sample((make(s, dtype, seed=i, **small), -1, False), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True, **small), 0, True), tag="noncontig dim0 descending")
    yield Sample((make((3, 5, 4), dtype, **small), 1, True), tag="middle dim descending")
    yield Sample((make((3, 3000), dtype, seed=7), 1, False), tag="long rows (global merge)")
    yield Sample((make((5000,), dtype, seed=8, **small), 0, True), tag="long descending ties")
    if dtype.is_floating_point:
        x = make((3, 40), dtype, seed=9)
        x[0, 3] = x[1, 7] = x[1, 8] = x[2, 0] = float("nan")
        x[2, 5] = float("inf")
        x[0, 9] = -float("inf")
        yield Sample((x, 1, False), tag="nan ascending")
        yield Sample((x, 1, True), tag="nan descending")


def _sort(x, d, desc):
    v = torch.empty(0, dtype=x.dtype, device=x.device)
    i = torch.empty(0, dtype=torch.long, device=x.device)
    return (torch.sort(x, dim=d, descending=desc, stable=True),
            torch.sort(x, dim=d, descending=desc, stable=True, out=(v, i)))


def _argsort(x, d, desc):
    return torch.argsort(x, dim=d, descending=desc, stable=True)


def _distinct(shape, dtype, seed=0):
    """Values without ties (topk's order among ties is unspecified)."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    hi = 100 if dtype in (torch.int8, torch.uint8) else n
    vals = torch.randperm(max(n, 1), generator=g)[:n] % max(hi, 1)
    if dtype.is_floating_point:
        return (vals.to(torch.float64) / 8 - n / 16).to(dtype).reshape(shape)
    return vals.to(dtype).reshape(shape)


def _topk_samples(dtype):
    yield Sample((_distinct((20,), dtype), 5, -1, True), tag="1-D largest")
    yield Sample((_distinct((6, 9), dtype, 1), 3, 1, False), tag="smallest")
    yield Sample((_distinct((6, 9), dtype, 2), 6, 0, True), tag="dim0 full")
    yield Sample((_distinct((4, 50), dtype, 3)[:, ::2], 4, 1, True), tag="noncontig")
    if dtype not in (torch.int8, torch.uint8):  # no room for 2000 distinct values
        yield Sample((_distinct((2, 2000), dtype, 4), 10, 1, True), tag="long rows")
        yield Sample((_distinct((2, 9000), dtype, 7), 10, 1, False), tag="candidate path (rows > local chunk)")
    yield Sample((_distinct((3, 5), dtype, 5), 0, 1, True), tag="k=0")
    yield Sample((_distinct((), dtype, 6), 1, 0, True), tag="0-dim")


def _topk(x, k, d, largest):
    v = torch.empty(0, dtype=x.dtype, device=x.device)
    i = torch.empty(0, dtype=torch.long, device=x.device)
    return torch.topk(x, k, d, largest), torch.topk(x, k, d, largest, out=(v, i))


def _unique_samples(dtype):
    for i, s in enumerate([(0,), (1,), (7,), (5, 3), (2, 3, 4), (1031,), (65, 129)]):
        yield Sample((make(s, dtype, seed=i, low=-5, high=6),), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True, low=0, high=3),), tag="noncontig")
    yield Sample((make((), dtype),), tag="0-dim")


def _unique(x):
    return (torch.unique(x), torch.unique(x, return_inverse=True, return_counts=True),
            torch.unique(x, sorted=True, return_counts=True))


def _unique_consecutive(x):
    return (torch.unique_consecutive(x), torch.unique_consecutive(x, return_inverse=True, return_counts=True))


def _unique_dim_samples(dtype):
    # Few distinct values, so slices repeat; slices along the first, a middle and the last dim.
    for i, (shape, dim) in enumerate([((7, 3), 0), ((7, 3), 1), ((4, 5, 3), 1), ((4, 5, 3), -1), ((9,), 0),
                                      ((300, 2), 0), ((2, 50, 4), 0)]):
        yield Sample((make(shape, dtype, seed=i, low=0, high=2), dim), tag=f"{shape} dim {dim}")
    yield Sample((make((6, 8), dtype, noncontig=True, low=0, high=2), 0), tag="noncontig")
    yield Sample((make((0, 3), dtype), 0), tag="empty selected dim")
    yield Sample((make((3, 0), dtype), 1), tag="empty selected dim 1")


def _unique_dim(x, dim):
    return torch.unique(x, dim=dim, return_inverse=True, return_counts=True), torch.unique(x, dim=dim)


def _consecutive_samples(dtype):
    for s in _unique_samples(dtype):
        yield s
    yield Sample((torch.tensor([1, 1, 2, 2, 2, 1, 3, 3]).to(dtype),), tag="runs")


def _bincount_samples(dtype):
    yield Sample((make((20,), dtype, low=0, high=9),), tag="plain")
    yield Sample((make((20,), dtype, low=0, high=9), make((20,), torch.float32)), tag="float weights")
    yield Sample((make((20,), dtype, low=0, high=9), make((20,), torch.float64)), tag="double weights")
    yield Sample((make((20,), dtype, low=0, high=9), make((20,), torch.int32)), tag="int weights")
    yield Sample((make((20,), dtype, low=0, high=5), None, 12), tag="minlength")
    yield Sample((make((0,), dtype), None, 3), tag="empty")
    yield Sample((make((3000,), dtype, low=0, high=100), make((3000,), torch.float32)), tag="large")
    yield Sample((make((20,), dtype, noncontig=True, low=0, high=9),), tag="noncontig")


def _bincount(x, w=None, minlength=0):
    return torch.bincount(x, w, minlength)



SEARCHSORTED = ["aten::searchsorted.Tensor", "aten::searchsorted.Tensor_out", "aten::searchsorted.Scalar",
                "aten::searchsorted.Scalar_out"]
BUCKETIZE = ["aten::bucketize.Tensor", "aten::bucketize.Tensor_out", "aten::bucketize.Scalar"]


def _sorted(shape, dtype, seed=0):
    return torch.sort(make(shape, dtype, seed=seed, low=-3, high=4), dim=-1)[0]  # many ties


def _search_samples(dtype):
    bd = _sorted((9,), dtype)
    yield Sample((bd, make((4, 5), dtype, seed=1, low=-5, high=6)), tag="1-D boundaries, 2-D values")
    yield Sample((bd, make((), dtype, seed=2, low=-5, high=6)), tag="0-dim value")
    yield Sample((bd, bd.clone()), tag="values equal to boundaries")
    yield Sample((_sorted((3, 8), dtype), make((3, 6), dtype, seed=3, low=-5, high=6)), tag="row-wise boundaries")
    yield Sample((_sorted((2, 3, 5), dtype), make((2, 3, 4), dtype, seed=4, low=-5, high=6)), tag="3-D rows")
    yield Sample((_sorted((0,), dtype), make((3,), dtype, seed=5)), tag="empty boundaries")
    yield Sample((bd, make((0, 3), dtype, seed=6)), tag="empty values")
    yield Sample((_sorted((6, 3), dtype).t().contiguous().t(), make((6, 4), dtype, seed=7, noncontig=True)),
                 tag="strided operands")
    yield Sample((_sorted((1001,), dtype), make((3000,), dtype, seed=8, low=-5, high=6)), tag="long")
    if dtype.is_floating_point:
        nan = float("nan")
        bd_nan = torch.tensor([-1.0, 0.0, 2.0, nan], dtype=dtype)
        yield Sample((bd_nan, torch.tensor([nan, -2.0, 2.0, 5.0], dtype=dtype)), tag="NaN boundary and value")
        yield Sample((bd, make((4,), torch.int64, seed=9)), tag="integer values (promoted)")


def _searchsorted(bd, v):
    out = torch.empty(1, dtype=torch.int64, device=v.device)
    torch.searchsorted(bd, v, out=out)
    out_t = torch.empty(v.shape[::-1], dtype=torch.int32, device=v.device).t() if v.dim() == 2 else None
    extra = (torch.searchsorted(bd, v, out_int32=True, right=True, out=out_t),) if out_t is not None else ()
    return (torch.searchsorted(bd, v), torch.searchsorted(bd, v, right=True), torch.searchsorted(bd, v, side="right"),
            torch.searchsorted(bd, v, out_int32=True), out) + extra


def _searchsorted_sorter(bd, v):
    perm = torch.argsort(torch.rand(bd.shape, generator=torch.Generator().manual_seed(0)), dim=-1).to(bd.device)
    shuffled = torch.gather(bd, -1, perm)  # unsorted rows; sorter puts them back in order
    sorter = torch.argsort(shuffled, dim=-1, stable=True)
    return (torch.searchsorted(shuffled, v, sorter=sorter),
            torch.searchsorted(shuffled, v, sorter=sorter, side="right"))


def _search_scalar(bd, v):
    out = torch.empty(0, dtype=torch.int64, device=bd.device)
    torch.searchsorted(bd, 1, right=True, out=out)
    # bucketize.Scalar_out is CompositeExplicitAutograd (bucketize.Scalar, then a copy into out):
    # nothing to register, but it must not fall back.
    out_b = torch.empty(0, dtype=torch.int32, device=bd.device)
    torch.ops.aten.bucketize.Scalar_out(0.5, bd, out_int32=True, right=True, out=out_b)
    return (torch.searchsorted(bd, 1), torch.searchsorted(bd, 0.5, right=True), out, torch.bucketize(2, bd),
            torch.bucketize(-1.5, bd, right=True, out_int32=True), out_b)


def _bucketize(bd, v):
    out = torch.empty(2, dtype=torch.int32, device=v.device)
    torch.bucketize(v, bd, out_int32=True, out=out)
    return torch.bucketize(v, bd), torch.bucketize(v, bd, right=True), out


def _search_1d_samples(dtype):
    return [s for s in _search_samples(dtype) if s.args[0].dim() == 1]


def _search_error_samples(dtype):
    bd, v = _sorted((5,), dtype), make((3,), dtype, seed=1)
    yield Sample((bd, v), tag="side opposite to right")
    yield Sample((_sorted((2, 5), dtype), make((3, 4), dtype)), tag="leading dims differ")
    yield Sample((make((), dtype), v), tag="0-dim boundaries")


def _search_error_fns(bd, v):
    if bd.dim() == 1:
        return torch.searchsorted(bd, v, right=True, side="left")
    return torch.searchsorted(bd, v)


# ---- kthvalue, median, nanmedian, mode -----------------------------------------------------
# Among equal values the CPU's index is whatever std::nth_element (median, kthvalue) or an
# unstable std::sort (mode, rows over 16) leaves, so the tie cases compare the values and
# the elements at the returned indices (x.gather(dim, indices) == values); cases of distinct
# values compare the indices exactly, and their gradients.
NAN = float("nan")


def _picked(x, d, keepdim, i):
    """The elements of x at indices i (a reduction's indices along d)."""
    if x.dim() == 0:
        return x.reshape(1)[i.reshape(1)].reshape(())
    return x.gather(d, i if keepdim else i.unsqueeze(d))


def _outs(x, shape_like, strided):
    """Empty out= tensors, or (strided) pre-sized transposed ones that must be written in place."""
    if strided and shape_like.dim() == 2:
        return (torch.empty(shape_like.shape[::-1], dtype=x.dtype, device=x.device).t(),
                torch.empty(shape_like.shape[::-1], dtype=torch.long, device=x.device).t())
    return torch.empty(0, dtype=x.dtype, device=x.device), torch.empty(0, dtype=torch.long, device=x.device)


def _with_nans(x, seed):
    """x with NaN rows (all NaN, one NaN, several) along its last dim."""
    x = x.clone()
    if x.dim() >= 1 and x.numel():
        g = torch.Generator().manual_seed(seed)
        flat = x.reshape(-1, x.shape[-1])
        mask = torch.rand(flat.shape, generator=g) < 0.2
        flat[mask] = NAN
        flat[0] = NAN
        if flat.shape[0] > 1:
            flat[1, 0] = NAN
        x = flat.reshape(x.shape)
    return x


def _reduce_samples(dtype, ties=True, nans=True):
    """(x, dim, keepdim) samples of the dim-reducing selections."""
    kw = dict(low=-3, high=4) if ties else {}
    mk = make if ties else (lambda s, dt, seed=0, **_: _distinct(s, dt, seed))
    yield Sample((mk((), dtype, seed=1, **kw), 0, False), tag="0-dim")
    yield Sample((mk((), dtype, seed=1, **kw), -1, True), tag="0-dim keepdim")
    yield Sample((mk((1,), dtype, seed=2, **kw), 0, False), tag="one element")
    yield Sample((mk((7,), dtype, seed=3, **kw), -1, False), tag="odd row")
    yield Sample((mk((8,), dtype, seed=4, **kw), 0, True), tag="even row keepdim")
    yield Sample((mk((5, 3), dtype, seed=5, **kw), 0, False), tag="dim0")
    yield Sample((mk((2, 3, 4), dtype, seed=6, **kw), 1, True), tag="middle dim keepdim")
    yield Sample((mk((2, 3, 4), dtype, seed=7, **kw), -3, False), tag="negative dim")
    yield Sample((mk((3, 0, 2), dtype, seed=8, **kw), 2, False), tag="empty result")
    yield Sample((mk((65, 129), dtype, seed=9, **kw), 1, False), tag="odd rows")
    yield Sample((mk((3, 1031), dtype, seed=10, **kw), -1, True), tag="rows longer than a work-group")
    if dtype not in (torch.int8, torch.uint8) or ties:
        yield Sample((mk((2, 5000), dtype, seed=11, **kw), 1, False), tag="long rows (global merge)")
    yield Sample((make((6, 4), dtype, seed=12, **kw).t() if ties else _distinct((6, 4), dtype, 12).t(), 1, False),
                 tag="transposed")
    strided = make((4, 10), dtype, seed=13, noncontig=True, **kw) if ties else _distinct((4, 20), dtype, 13)[:, ::2]
    yield Sample((strided, 1, True), tag="strided")
    if nans and dtype.is_floating_point:
        yield Sample((_with_nans(make((6, 9), dtype, seed=14, **kw), 1), 1, False), tag="NaN rows")
        yield Sample((_with_nans(make((4, 1500), dtype, seed=15, **kw), 2), -1, False), tag="long NaN rows")
        yield Sample((_with_nans(make((5, 8), dtype, seed=16, **kw), 3).t(), 0, True), tag="NaN columns")


def _distinct_samples(samples):
    """The samples whose tensor holds no equal values (in its dtype), so every index is defined."""
    return [s for s in samples if torch.unique(s.args[0]).numel() == s.args[0].numel()]


def _median_dim(x, d, keepdim):
    outs = []
    for op in (torch.median, torch.nanmedian):
        v, i = op(x, d, keepdim)
        vo, io = _outs(x, v, strided=True)
        op(x, d, keepdim, out=(vo, io))
        outs += [v, _picked(x, d, keepdim, i), vo, _picked(x, d, keepdim, io)]
    return outs


def _median_dim_exact(x, d, keepdim):
    return torch.median(x, d, keepdim), torch.nanmedian(x, d, keepdim)


def _median_all(x, *_):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    torch.ops.aten.median.out(x, out=out)
    return torch.median(x), torch.nanmedian(x), out


def _median_all_samples(dtype):
    for s in _reduce_samples(dtype, nans=True):
        yield s
    yield Sample((make((0,), dtype), 0, False), tag="empty (NaN as the dtype)")
    yield Sample((make((2, 0, 3), dtype), 0, False), tag="empty 3-D")
    yield Sample((make((100000,), dtype, seed=17), 0, False), tag="large")
    if dtype.is_floating_point:
        yield Sample((torch.full((5,), NAN, dtype=dtype), 0, False), tag="all NaN")


def _nan_index_samples(dtype):
    """Distinct values plus NaN: the CPU's median index is the first NaN, nanmedian's is exact."""
    x = _distinct((5, 9), dtype, 20)
    x[0, 3] = x[1, 0] = x[1, 8] = x[2, 2] = x[2, 5] = x[2, 7] = NAN
    yield Sample((x, 1, False), tag="NaN rows, distinct values")
    yield Sample((x.t(), 0, True), tag="NaN columns, distinct values")


def _kth_samples(dtype, ties=True):
    for s in _reduce_samples(dtype, ties=ties, nans=ties):
        x, d, keepdim = s.args
        n = x.shape[d] if x.dim() else 1
        if n == 0:
            continue
        for k in sorted({1, (n + 1) // 2, n}):
            yield Sample((x, k, d, keepdim), tag=f"{s.tag} k={k}")
    x = make((3, 9000), dtype, seed=18, low=-3, high=4) if ties else _distinct((3, 9000), dtype, 18)
    if ties or dtype not in (torch.int8, torch.uint8, torch.int16):
        yield Sample((x, 3, 1, False), tag="small k of long rows (candidate path)")


def _kthvalue(x, k, d, keepdim):
    v, i = torch.kthvalue(x, k, d, keepdim)
    vo, io = _outs(x, v, strided=True)
    torch.kthvalue(x, k, d, keepdim, out=(vo, io))
    return v, _picked(x, d, keepdim, i), vo, _picked(x, d, keepdim, io)


def _kthvalue_exact(x, k, d, keepdim):
    return torch.kthvalue(x, k, d, keepdim)


def _mode_samples(dtype, short=False):
    if dtype == torch.bool:
        yield Sample((make((6, 11), dtype), 1, False), tag="bool rows")
        yield Sample((make((3, 2000), dtype, seed=1), 1, True), tag="bool long rows")
        yield Sample((make((7, 4), dtype, seed=2), 0, False), tag="bool dim0")
        return
    for s in _reduce_samples(dtype, nans=False):
        x = s.args[0]
        if short and x.dim() and x.shape[s.args[1]] > 16:
            continue
        yield s
    yield Sample((torch.tensor([[3, 3, 1, 1, 2, 2], [5, 4, 4, 5, 0, 9], [7, 7, 7, 7, 7, 7]]).to(dtype), 1, False),
                 tag="equally frequent values: the smallest")
    if dtype.is_floating_point:
        x = torch.tensor([[NAN, 1, 1, NAN, NAN], [NAN, NAN, NAN, NAN, NAN], [2, 0, 2, 3, NAN], [-0.0, 0.0, 1, 0.0, 2]])
        yield Sample((x.to(dtype), 1, False), tag="NaN (each NaN its own value) and signed zeros")


def _mode(x, d, keepdim):
    v, i = torch.mode(x, d, keepdim)
    vo, io = _outs(x, v, strided=True)
    torch.mode(x, d, keepdim, out=(vo, io))
    return v, _picked(x, d, keepdim, i), vo, _picked(x, d, keepdim, io)


def _mode_exact(x, d, keepdim):
    return torch.mode(x, d, keepdim)


def _select_error_samples(dtype):
    yield Sample(("median", make((3, 0), dtype), 1), tag="median of an empty dim: IndexError")
    yield Sample(("nanmedian", make((0,), dtype), 0), tag="nanmedian of an empty dim")
    yield Sample(("mode", make((2, 0), dtype), -1), tag="mode of an empty dim")
    yield Sample(("kthvalue", make((0, 3), dtype), 0), tag="kthvalue of an empty dim")
    yield Sample(("kthvalue k=0", make((4, 3), dtype), 1), tag="k out of range (RuntimeError)")
    yield Sample(("kthvalue k=4", make((4, 3), dtype), 1), tag="k past the slice")
    yield Sample(("kthvalue k=2", make((), dtype), 0), tag="k=2 of a 0-dim tensor")
    yield Sample(("median", make((4, 3), dtype), 2), tag="dim out of range")
    yield Sample(("median", make((), dtype), 1), tag="dim out of range of a 0-dim tensor")
    yield Sample(("median values dtype", make((4, 3), dtype), 1), tag="values out of another dtype")
    yield Sample(("median indices dtype", make((4, 3), dtype), 1), tag="int32 indices out")
    yield Sample(("mode values dtype", make((4, 3), dtype), 1), tag="mode values out of another dtype")
    yield Sample(("kthvalue values dtype", make((4, 3), dtype), 1), tag="kthvalue values out of another dtype")
    yield Sample(("median", make((4, 3), torch.bool), 1), tag="median of bool: NotImplementedError")
    yield Sample(("median all", make((4, 3), torch.bool), 1), tag="whole median of bool")
    yield Sample(("kthvalue k=1", make((4, 3), torch.bool), 1), tag="kthvalue of bool")


def _select_error(what, x, d):
    other = torch.float64 if x.dtype != torch.float64 else torch.float32
    lng = torch.empty(0, dtype=torch.long, device=x.device)
    if what == "median all":
        return torch.median(x)
    if what.startswith("kthvalue k="):
        return torch.kthvalue(x, int(what.split("=")[1]), d)
    if what == "median values dtype":
        return torch.median(x, d, out=(torch.empty(0, dtype=other, device=x.device), lng))
    if what == "median indices dtype":
        return torch.median(x, d, out=(torch.empty(0, dtype=x.dtype, device=x.device),
                                       torch.empty(0, dtype=torch.int32, device=x.device)))
    if what == "mode values dtype":
        return torch.mode(x, d, out=(torch.empty(0, dtype=other, device=x.device), lng))
    if what == "kthvalue values dtype":
        return torch.kthvalue(x, 1, d, out=(torch.empty(0, dtype=other, device=x.device), lng))
    if what == "kthvalue":
        return torch.kthvalue(x, 1, d)
    return getattr(torch, what)(x, d)


# ---- histc ---------------------------------------------------------------------------------
# Counts are exact integers on the device. The CPU counts in the dtype, which saturates a
# bfloat16 bin at 256 (float16: 2048), so the half cases keep every bin below that.
def _cpu_defined(x, bins, lo=None, hi=None):
    """x without the values whose bin the CPU computes past the last one (float16 / bfloat16
    rounding of (x - lo) * bins / (hi - lo) in the dtype, as the CPU rounds each operation): the
    CPU then writes outside its histogram (undefined; the device puts them in the last bin).
    lo, hi: None for the data's range."""
    for _ in range(8):
        lo_t = x.min() if lo is None else torch.tensor(lo, dtype=torch.float64).to(x.dtype)
        hi_t = x.max() if hi is None else torch.tensor(hi, dtype=torch.float64).to(x.dtype)
        if lo_t == hi_t:
            lo_t, hi_t = lo_t - 1, hi_t + 1
        q = ((x - lo_t) * torch.tensor(bins, dtype=x.dtype) / (hi_t - lo_t)).float()
        bad = (x >= lo_t) & (x <= hi_t) & ~(q < bins + 1)
        if not bad.any():
            return x
        x = x[~bad]
    raise AssertionError("no stable sample")


def _near_edges(dtype, bins, lo, hi):
    """The bin edges of [lo, hi] in dtype, the middles, and the neighbouring values of each edge
    (for float16 / bfloat16: every value of the dtype around the range, thinned so that no bin
    gets near the CPU's saturation)."""
    edges = torch.linspace(lo, hi, bins + 1, dtype=dtype)
    mids = ((edges[1:].double() + edges[:-1].double()) / 2).to(dtype)
    if dtype in HALFS:
        every = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype)
        f, span = every.float(), hi - lo
        near = every[f.isfinite() & (f >= lo - span / 10) & (f <= hi + span / 10) & (f.abs() >= span / 500)]
        limit = 2048 if dtype == torch.float16 else 256
        while torch.histc(near.float(), bins, lo, hi).max() > limit / 2:
            near = near[::2]
    else:
        inf = torch.tensor(float("inf"), dtype=dtype)
        near = torch.cat([torch.nextafter(edges, inf), torch.nextafter(edges, -inf)])
    return torch.cat([edges, mids, near, edges])


def _histc_samples(dtype):
    small = dtype in HALFS
    yield Sample((make((1031,), dtype, seed=1), 100, 0, 0), tag="default bins, the data's range")
    yield Sample((make((5, 7), dtype, seed=2), 10, -1, 1), tag="given range, values outside ignored")
    yield Sample((make((6, 8), dtype, seed=3).t(), 7, -2.5, 2), tag="transposed")
    yield Sample((make((4, 9), dtype, seed=4, noncontig=True), 5, -3, 3), tag="strided")
    yield Sample((make((), dtype, seed=5), 4, 0, 0), tag="0-dim: range widened by 1")
    yield Sample((make((0,), dtype), 3, 0, 0), tag="empty, no range: [-1, 1]")
    yield Sample((make((0, 4), dtype), 5, 1, 2), tag="empty with a range")
    yield Sample((torch.full((9,), 2.5, dtype=dtype), 4, 0, 0), tag="constant data: widened")
    yield Sample((torch.tensor([1.0, 5.0, 3.0], dtype=dtype), 4, 3, 3), tag="min == max != 0: the data's range")
    for bins, lo, hi in [(4, 0, 4), (7, -1.3, 2.9), (10, 0.1, 0.7), (171, -0.27, 5.78), (3, -1e-3, 1e-3),
                         (100, -7.31, 13.5)]:
        x = _near_edges(dtype, bins, lo, hi)
        yield Sample((x, bins, lo, hi), tag=f"values at and next to the edges, {bins} bins of [{lo}, {hi}]")
        yield Sample((x, bins, 0, 0), tag=f"values at and next to the edges, {bins} bins of the data's range")
    x = make((20,), dtype, seed=6)
    x[3] = x[11] = NAN
    x[5] = float("inf")
    x[6] = -float("inf")
    yield Sample((x, 6, -2, 2), tag="NaN and infinities ignored")
    n = 20000 if small else 300000
    yield Sample((make((n,), dtype, seed=7), 4000 if small else 1000, -3, 3), tag="many elements, local bins")
    if dtype != torch.float16:  # 200000 is no float16 number (the CPU's arithmetic overflows)
        yield Sample((make((1000,), dtype, seed=8), 200000, -3, 3), tag="bins past local memory (global atomics)")
    yield Sample((make((200 if small else 3000,), dtype, seed=9), 1, 0, 0), tag="one bin")


def _histc_cases(dtype):
    for s in _histc_samples(dtype):
        x, bins, lo, hi = s.args
        if dtype in HALFS and x.numel():
            x = _cpu_defined(x, bins, None if lo == hi else lo, None if lo == hi else hi)
        yield Sample((x, bins, lo, hi), tag=s.tag)


def _histc(x, bins, lo, hi):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    torch.histc(x, bins, lo, hi, out=out)
    strided = torch.empty(2 * bins, dtype=x.dtype, device=x.device)[::2]  # sized: written in place
    torch.histc(x, bins, lo, hi, out=strided)
    return torch.histc(x, bins, lo, hi), out, strided


def _histc_error_samples(dtype):
    x = make((5,), dtype)
    yield Sample((x, 0, 0, 0), tag="bins=0")
    yield Sample((x, -3, 0, 1), tag="bins<0")
    yield Sample((x, 3, 2, 1), tag="min > max")
    yield Sample((x, 3, 0, float("inf")), tag="infinite max")
    yield Sample((x, 3, float("nan"), 1), tag="NaN min")
    yield Sample((torch.tensor([1.0, NAN]).to(dtype), 3, 0, 0), tag="NaN in the data, no range")
    yield Sample((torch.tensor([-float("inf"), 1.0]).to(dtype), 3, 0, 0), tag="infinite data, no range")
    yield Sample((x, 3, 0, 1e39 if dtype == torch.float32 else 1e300 if dtype == torch.float64 else 1e6),
                 tag="max overflows the dtype")
    yield Sample((x.to(torch.int64), 3, 0, 1), tag="int64: NotImplementedError")
    yield Sample((x.to(torch.uint8), 3, 0, 0), tag="uint8")
    yield Sample((x.to(torch.bool), 3, 0, 1), tag="bool")
    yield Sample((x, 3, 0, 1, torch.float64 if dtype != torch.float64 else torch.float32), tag="out of another dtype")


def _histc_error(x, bins, lo, hi, out_dtype=None):
    if out_dtype is not None:
        return torch.histc(x, bins, lo, hi, out=torch.empty(0, dtype=out_dtype, device=x.device))
    return torch.histc(x, bins, lo, hi)


def _repeat_samples(dtype):
    yield Sample((torch.tensor([1, 0, 2, 3], dtype=dtype),), tag="counts")
    yield Sample((torch.tensor([0, 0], dtype=dtype),), tag="all zero")
    yield Sample((torch.tensor([], dtype=dtype),), tag="empty")
    g = torch.Generator().manual_seed(0)
    yield Sample((torch.randint(0, 6, (1000,), generator=g).to(dtype),), tag="large")
    yield Sample((torch.tensor([2, 1], dtype=dtype),), dict(output_size=3), tag="output_size")
    yield Sample((torch.tensor([2, 1], dtype=dtype),), dict(output_size=4), tag="wrong output_size raises")
    yield Sample((torch.tensor([], dtype=dtype),), dict(output_size=1), tag="empty, wrong output_size raises")
    yield Sample((torch.tensor([2, -1, 3], dtype=dtype),), tag="negative raises")
    yield Sample((torch.tensor([[1, 2]], dtype=dtype),), tag="2-d raises")


MEDIAN = ["aten::median.dim_values", "aten::nanmedian.dim_values"]

CASES = [
    OpCase("sort", ["aten::sort.values_stable"], _sort, _sort_samples, dtypes=ALL + HALFS, grad=True),
    OpCase("argsort", [], _argsort, _sort_samples, dtypes=FLOAT + (torch.int64,)),
    OpCase("topk", ["aten::topk.values"], _topk, _topk_samples, dtypes=FLOATS + INTS + HALFS, grad=True),
    OpCase("unique", ["aten::_unique2"], _unique, _unique_samples, dtypes=FLOATS + INTS + (torch.bool,)),
    OpCase("unique_dim", ["aten::unique_dim"], _unique_dim, _unique_dim_samples,
           dtypes=FLOATS + INTS + HALFS + (torch.bool,)),
    OpCase("unique_consecutive", ["aten::unique_consecutive"], _unique_consecutive, _consecutive_samples,
           dtypes=FLOAT + INTS[:2]),
    OpCase("bincount", ["aten::bincount"], _bincount, _bincount_samples, dtypes=(torch.int64, torch.int32,
                                                                                 torch.uint8)),
    # The index form (torch.repeat_interleave(repeats)); float repeats raise NotImplementedError.
    OpCase("repeat_interleave_tensor", ["aten::repeat_interleave.Tensor"], torch.repeat_interleave, _repeat_samples,
           dtypes=(torch.int64, torch.int32, torch.float32)),
    OpCase("searchsorted", SEARCHSORTED[:2], _searchsorted, _search_samples, dtypes=FLOATS + INTS + HALFS),
    OpCase("searchsorted_sorter", SEARCHSORTED[:1], _searchsorted_sorter,
           lambda dt: [s for s in _search_samples(dt) if s.args[0].numel() and "NaN" not in s.tag], dtypes=FLOAT),
    OpCase("searchsorted_scalar", SEARCHSORTED[2:] + BUCKETIZE[2:], _search_scalar,
           lambda dt: _search_1d_samples(dt)[:1], dtypes=FLOATS + (torch.int64,)),
    OpCase("bucketize", BUCKETIZE[:2], _bucketize, _search_1d_samples, dtypes=FLOATS + INTS),
    OpCase("searchsorted_errors", SEARCHSORTED[:1], _search_error_fns, _search_error_samples, dtypes=FLOAT),
    OpCase("searchsorted_bool", SEARCHSORTED[:1], lambda bd, v: torch.searchsorted(bd, v),
           lambda dt: [Sample((torch.tensor([False, True]), torch.tensor([True, False])))], dtypes=(torch.bool,)),
    OpCase("median_dim", MEDIAN, _median_dim, _reduce_samples, dtypes=FLOATS + INTS + HALFS),
    OpCase("median_dim_exact", MEDIAN, _median_dim_exact,
           lambda dt: _distinct_samples(_reduce_samples(dt, ties=False, nans=False)),
           dtypes=FLOATS + HALFS + (torch.int64, torch.int16), grad=True),
    OpCase("median_nan_index", MEDIAN, _median_dim_exact, _nan_index_samples, dtypes=FLOATS, grad=True),
    OpCase("median_all", ["aten::median", "aten::nanmedian"], _median_all, _median_all_samples,
           dtypes=FLOATS + INTS + HALFS, grad=True),
    OpCase("kthvalue", ["aten::kthvalue.values"], _kthvalue, _kth_samples, dtypes=FLOATS + INTS + HALFS),
    OpCase("kthvalue_exact", ["aten::kthvalue.values"], _kthvalue_exact,
           lambda dt: _distinct_samples(_kth_samples(dt, ties=False)),
           dtypes=FLOATS + (torch.int32,), grad=True),
    OpCase("mode", ["aten::mode", "aten::mode.values"], _mode, _mode_samples, dtypes=ALL + HALFS),
    # Rows of at most 16: the CPU's std::sort is an insertion sort there, stable, so its index
    # (the last occurrence) is defined and the gradients must match too.
    OpCase("mode_exact", ["aten::mode"], _mode_exact, lambda dt: _mode_samples(dt, short=True),
           dtypes=FLOATS + HALFS + (torch.int64, torch.uint8), grad=True),
    OpCase("select_errors", MEDIAN + ["aten::kthvalue.values", "aten::mode", "aten::median"], _select_error,
           lambda dt: _select_error_samples(dt), dtypes=FLOAT + (torch.int64,)),
    OpCase("histc", ["aten::histc", "aten::histc.out"], _histc, _histc_cases, dtypes=FLOATS + HALFS),
    OpCase("histc_errors", ["aten::histc", "aten::histc.out"], _histc_error, _histc_error_samples,
           dtypes=FLOATS + HALFS),
]


# ---- isin ------------------------------------------------------------------------------------
ISIN = ["aten::isin.Tensor_Tensor_out", "aten::isin.Tensor_Scalar_out", "aten::isin.Scalar_Tensor_out"]


def _isin_samples(dtype):
    nan = float("nan")
    vals = make((4, 6), dtype, low=-4, high=4, seed=1)
    if dtype.is_floating_point:
        vals = vals.round()
    yield Sample((vals, vals.reshape(-1)[::5].clone()), tag="some present")
    yield Sample((vals, make((3,), dtype, low=20, high=30, seed=2)), tag="none present")
    yield Sample((vals, vals[:0]), tag="empty test elements")
    yield Sample((vals[:0], vals), tag="empty elements")
    yield Sample((vals.t(), vals[1]), dict(invert=True), tag="transposed, invert")
    yield Sample((vals, vals[0].to(torch.int64)), tag="mixed dtypes (promoted)")
    yield Sample((vals, 2), tag="scalar test element")
    yield Sample((vals, 1), dict(invert=True), tag="scalar test element, invert")
    if dtype.is_floating_point:
        v = torch.tensor([1.0, nan, 3.0, float("-inf")], dtype=dtype)
        yield Sample((v, torch.tensor([nan, 3.0], dtype=dtype)), tag="NaN matches nothing")
        yield Sample((v, torch.tensor([nan, nan], dtype=dtype)), tag="all-NaN test elements")


def _isin_out(e, t, **kw):
    out = torch.empty(0, dtype=torch.bool, device=e.device)
    torch.isin(e, t, out=out, **kw)
    return out


CASES += [
    OpCase("isin", ISIN, torch.isin, _isin_samples, dtypes=FLOATS + (torch.int64, torch.int32, torch.uint8, torch.float16)),
    OpCase("isin_scalar_element", ISIN, lambda t: torch.isin(2, t), lambda dt: (Sample((make((5,), dt, low=0, high=4, seed=3).round(),)),),
           dtypes=(torch.float32, torch.int64)),
    OpCase("isin_out", ISIN, _isin_out, lambda dt: (s for s in _isin_samples(dt) if isinstance(s.args[1], torch.Tensor)),
           dtypes=(torch.float32,)),
    OpCase("isin_bool_raises", ISIN, torch.isin, lambda dt: (Sample((torch.tensor([True]), torch.tensor([True]))),),
           dtypes=(torch.bool,)),
]
