"""Cases for the sorting ops (csrc/ops/sort.cpp): stable sort / argsort (short rows in local
memory, long rows through the global merge), topk, unique, unique_consecutive, bincount,
searchsorted and bucketize."""
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
    return (torch.searchsorted(bd, 1), torch.searchsorted(bd, 0.5, right=True), out, torch.bucketize(2, bd),
            torch.bucketize(-1.5, bd, right=True, out_int32=True))


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


CASES = [
    OpCase("sort", ["aten::sort.values_stable"], _sort, _sort_samples, dtypes=ALL + HALFS, grad=True),
    OpCase("argsort", [], _argsort, _sort_samples, dtypes=FLOAT + (torch.int64,)),
    OpCase("topk", ["aten::topk.values"], _topk, _topk_samples, dtypes=FLOATS + INTS + HALFS, grad=True),
    OpCase("unique", ["aten::_unique2"], _unique, _unique_samples, dtypes=FLOATS + INTS + (torch.bool,)),
    OpCase("unique_consecutive", ["aten::unique_consecutive"], _unique_consecutive, _consecutive_samples,
           dtypes=FLOAT + INTS[:2]),
    OpCase("bincount", ["aten::bincount"], _bincount, _bincount_samples, dtypes=(torch.int64, torch.int32,
                                                                                 torch.uint8)),
    OpCase("searchsorted", SEARCHSORTED[:2], _searchsorted, _search_samples, dtypes=FLOATS + INTS + HALFS),
    OpCase("searchsorted_sorter", SEARCHSORTED[:1], _searchsorted_sorter,
           lambda dt: [s for s in _search_samples(dt) if s.args[0].numel() and "NaN" not in s.tag], dtypes=FLOAT),
    OpCase("searchsorted_scalar", SEARCHSORTED[2:] + BUCKETIZE[2:], _search_scalar,
           lambda dt: _search_1d_samples(dt)[:1], dtypes=FLOATS + (torch.int64,)),
    OpCase("bucketize", BUCKETIZE[:2], _bucketize, _search_1d_samples, dtypes=FLOATS + INTS),
    OpCase("searchsorted_errors", SEARCHSORTED[:1], _search_error_fns, _search_error_samples, dtypes=FLOAT),
    OpCase("searchsorted_bool", SEARCHSORTED[:1], lambda bd, v: torch.searchsorted(bd, v),
           lambda dt: [Sample((torch.tensor([False, True]), torch.tensor([True, False])))], dtypes=(torch.bool,)),
]
