"""Cases for the indexing ops (csrc/ops/index.cpp): index_select, gather, scatter family,
index_add, advanced indexing and index_put, nonzero, masked ops, embedding backward, embedding_bag."""
import torch
import torch.nn.functional as F

from ..cases import ALL, FLOAT, FLOATS, HALFS, INTS, OpCase, Sample, make

IDX_DTYPES = ALL + HALFS


def _idx(values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype)


def _rand_idx(shape, high, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, high, shape, generator=g)


# ---- index_select -----------------------------------------------------------------------
def _index_select_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _idx([4, 0, 2, 2])), tag="rows dup")
    yield Sample((make((5, 7), dtype), 1, _idx([6, 1], torch.int32)), tag="cols int32")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), -1, _idx([5, 0, 3])), tag="noncontig")
    yield Sample((make((3, 4, 6), dtype), 1, _idx([], torch.int64)), tag="empty index")
    yield Sample((make((), dtype), 0, _idx([0, 0])), tag="0-dim self")
    yield Sample((make((300, 33), dtype), 0, _rand_idx((257,), 300)), tag="large")
    yield Sample((make((4, 5), dtype), 0, _idx(2)), tag="0-dim index")


def _index_select_out(x, d, i):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    r = torch.index_select(x, d, i, out=out)
    return r, torch.index_select(x, d, i)


# ---- gather / scatter ---------------------------------------------------------------------
def _gather_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _rand_idx((3, 7), 5)), tag="dim0")
    yield Sample((make((5, 7), dtype), 1, _rand_idx((5, 9), 7, 1)), tag="dim1 dup")
    yield Sample((make((4, 6, 3), dtype, noncontig=True), 1, _rand_idx((4, 2, 3), 6, 2)), tag="noncontig")
    yield Sample((make((4, 6), dtype), 1, _rand_idx((4, 12), 6, 3)[:, ::2]), tag="noncontig index")
    yield Sample((make((4, 6), dtype), 0, _rand_idx((0, 6), 4)), tag="empty")
    yield Sample((make((), dtype), 0, _idx(0)), tag="0-dim")
    yield Sample((make((64, 130), dtype), 1, _rand_idx((64, 130), 130, 4)), tag="large")


def _gather(x, d, i):
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    return torch.gather(x, d, i), torch.gather(x, d, i, out=out)


def _perm_index(shape, dim, size, seed=0):
    """Index of `shape` whose entries along dim are distinct (no duplicate targets)."""
    g = torch.Generator().manual_seed(seed)
    n = shape[dim]
    moved = list(shape)
    moved[dim], moved[-1] = moved[-1], moved[dim]
    rows = torch.stack([torch.randperm(size, generator=g)[:n] for _ in range(max(1, int(torch.tensor(moved[:-1]).prod())))])
    return rows.reshape(moved).transpose(dim, -1).contiguous()


def _scatter_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _perm_index((3, 7), 0, 5), make((4, 8), dtype)), tag="dim0")
    yield Sample((make((5, 7), dtype), 1, _perm_index((5, 4), 1, 7, 1), make((5, 4), dtype)), tag="dim1")
    yield Sample((make((4, 6), dtype, noncontig=True), 1, _perm_index((4, 3), 1, 6, 2), make((4, 3), dtype).t().contiguous().t()),
                 tag="noncontig")
    yield Sample((make((4, 6), dtype), 0, _rand_idx((0, 6), 4), make((0, 6), dtype)), tag="empty")
    yield Sample((make((4, 6), dtype), 0, _perm_index((2, 6), 0, 4, 3), 3), tag="value")


def _scatter(x, d, i, s):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    y = x.clone()
    return torch.scatter(x, d, i, s), y.scatter_(d, i, s), torch.scatter(x, d, i, s, out=out)


def _dup_samples(dtype, with_value=True):
    yield Sample((make((5, 7), dtype), 0, _rand_idx((6, 7), 5), make((6, 7), dtype)), tag="dim0 dup")
    yield Sample((make((5, 7), dtype), 1, _rand_idx((5, 11), 7, 1), make((5, 12), dtype)), tag="dim1 dup")
    yield Sample((make((4, 6), dtype, noncontig=True), 1, _rand_idx((4, 9), 6, 2), make((4, 9), dtype)),
                 tag="noncontig")
    yield Sample((make((50, 40), dtype), 0, _rand_idx((300, 40), 50, 3), make((300, 40), dtype)), tag="large")
    yield Sample((make((4, 6), dtype), 0, _rand_idx((0, 6), 4), make((0, 6), dtype)), tag="empty")
    yield Sample((make((), dtype), 0, _idx(0), make((), dtype)), tag="0-dim")
    if with_value:
        yield Sample((make((5, 7), dtype), 0, _rand_idx((6, 7), 5, 5), 2), tag="value dup")


def _same_shape(samples):
    """Samples whose src has the index's shape (autograd requires it for the gradient)."""
    for s in samples:
        if isinstance(s.args[3], torch.Tensor) and s.args[3].shape == s.args[2].shape:
            yield s


def _scatter_reduce_old(x, d, i, s):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    return (torch.scatter(x, d, i, s, reduce="add"), torch.scatter(x, d, i, s, reduce="multiply"),
            torch.scatter(x, d, i, s, reduce="add", out=out))


def _scatter_add(x, d, i, s):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    y = x.clone()
    return torch.scatter_add(x, d, i, s), y.scatter_add_(d, i, s), torch.scatter_add(x, d, i, s, out=out)


def _scatter_reduce_two(x, d, i, s):
    outs = []
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            outs.append(torch.scatter_reduce(x, d, i, s, red, include_self=inc))
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    outs.append(torch.scatter_reduce(x, d, i, s, "sum", out=out))
    return outs


def _scatter_reduce_grad(x, d, i, s):
    return torch.scatter_reduce(x, d, i, s, "sum", include_self=True)


# ---- index_add -----------------------------------------------------------------------------
def _index_add_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _idx([4, 0, 2, 2, 4, 4]), make((6, 7), dtype)), tag="dup")
    yield Sample((make((5, 7), dtype), 1, _idx([6, 1, 1], torch.int32), make((5, 3), dtype)), tag="dim1 int32")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), -1, _idx([5, 0, 5]), make((3, 4, 3), dtype)),
                 tag="noncontig")
    yield Sample((make((3, 4), dtype), 0, _idx([], torch.int64), make((0, 4), dtype)), tag="empty")
    yield Sample((make((100, 33), dtype), 0, _rand_idx((257,), 100), make((257, 33), dtype)), tag="large")


def _index_add(x, d, i, s):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    y = x.clone()
    alpha = 2 if not x.dtype.is_floating_point else 0.5
    return (torch.index_add(x, d, i, s), y.index_add_(d, i, s, alpha=alpha),
            torch.index_add(x, d, i, s, alpha=alpha, out=out))


def _index_reduce(x, d, i, s):
    # Every reduction with and without self's values, in place and out=.
    res = []
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            res.append(torch.index_reduce(x, d, i, s, reduce, include_self=include_self))
    y, out = x.clone(), torch.empty(0, dtype=x.dtype, device=x.device)
    res.append(y.index_reduce_(d, i, s, "amax", include_self=False))
    res.append(torch.index_reduce(x, d, i, s, "mean", out=out))
    return tuple(res)


# ---- advanced indexing ----------------------------------------------------------------------
def _index_samples(dtype):
    x = make((5, 6, 7), dtype)
    yield Sample((x, (_idx([4, 0, 2, 2]),)), tag="first dim")
    yield Sample((x, (slice(None), _idx([[5, 0], [-1, 2]]))), tag="middle 2-D negative")
    yield Sample((x, (_idx([0, 1, 4]), _idx([2, 3, 5]))), tag="two adjacent")
    yield Sample((x, (_idx([0, 1, 4]), slice(None), _idx([6]))), tag="non-adjacent broadcast")
    yield Sample((x, (slice(None), slice(1, 4), _idx([[0], [6]]))), tag="trailing with slice")
    yield Sample((x, (make((5, 6), torch.bool, seed=3),)), tag="bool mask")
    yield Sample((x, (slice(None), make((6,), torch.bool, seed=4), _idx([1]))), tag="mask + index")
    yield Sample((make((5, 6, 7), dtype, noncontig=True), (Ellipsis, _idx([6, 1]))), tag="noncontig last")
    yield Sample((x, (_idx([], torch.int64),)), tag="empty index")
    yield Sample((make((200, 30), dtype), (_rand_idx((400,), 200),)), tag="large")
    yield Sample((x, (_idx(3), _idx([1, 2]))), tag="0-dim + 1-D")


def _index(x, idx):
    return x[idx]


def _index_put_samples(dtype):
    x = make((5, 6, 7), dtype)
    yield Sample((x, (_idx([4, 0, 2]),), make((3, 6, 7), dtype)), tag="rows")
    yield Sample((x, (slice(None), _idx([5, 0]), _idx([1, -1])), make((2,), dtype)), tag="two indices")
    yield Sample((x, (_idx([0, 4]), slice(None), _idx([6])), make((1, 6), dtype)), tag="non-adjacent broadcast value")
    yield Sample((x, (make((5, 6), torch.bool, seed=3),), make((), dtype)), tag="mask scalar value")
    yield Sample((make((5, 6), dtype, noncontig=True), (slice(None), _idx([3, 1])), make((5, 2), dtype)),
                 tag="noncontig self")
    yield Sample((make((200, 30), dtype), (torch.randperm(200, generator=torch.Generator().manual_seed(0))[:90],),
                  make((90, 30), dtype)), tag="large")


def _index_put(x, idx, v):
    y = x.clone()
    y[idx] = v
    return y


def _index_put_acc_samples(dtype):
    x = make((5, 6, 7), dtype)
    yield Sample((x, (_idx([4, 0, 2, 2, 4, 4]),), make((6, 6, 7), dtype)), tag="rows dup")
    yield Sample((x, (_idx([1, 1, 1]), _idx([5, 5, 0]), _idx([2, 2, 2])), make((3,), dtype)), tag="elements dup")
    yield Sample((x, (_idx([0, 4, 0]), slice(None), _idx([[6], [6]])), make((2, 3, 6), dtype)),
                 tag="non-adjacent dup")
    yield Sample((x, (make((5, 6), torch.bool, seed=3),), make((), dtype)), tag="mask")
    yield Sample((make((5, 6), dtype, noncontig=True), (slice(None), _idx([3, 3])), make((5, 2), dtype)),
                 tag="noncontig self")
    yield Sample((make((60, 30), dtype), (_rand_idx((300,), 60),), make((300, 30), dtype)), tag="large dup")


def _index_put_accumulate(x, idx, v):
    y = x.clone()
    return torch.ops.aten.index_put(y, [i if isinstance(i, torch.Tensor) else None for i in idx], v, True)


# ---- nonzero / masked -----------------------------------------------------------------------
def _nonzero_samples(dtype):
    for i, s in enumerate([(), (0,), (7,), (5, 3), (2, 3, 4), (3, 0, 2), (1031,), (65, 129)]):
        yield Sample((make(s, dtype, low=-1, high=2, seed=i),), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, low=-1, high=2, noncontig=True),), tag="noncontig")
    if dtype.is_floating_point:
        yield Sample((torch.tensor([0.0, -0.0, float("nan"), 1.0], dtype=dtype),), tag="signed zero nan")


def _nonzero(x):
    out = torch.empty(3, 3, dtype=torch.long, device=x.device)
    return torch.nonzero(x), torch.nonzero(x, out=out), torch.nonzero(x, as_tuple=True)


def _nonzero_static(x):
    return torch.nonzero_static(x, size=4), torch.nonzero_static(x, size=0), torch.nonzero_static(x, size=50,
                                                                                                 fill_value=7)


def _masked_samples(dtype):
    yield Sample((make((5, 6), dtype), make((5, 6), torch.bool)), tag="same shape")
    yield Sample((make((5, 6), dtype), make((6,), torch.bool, seed=1)), tag="broadcast mask")
    yield Sample((make((5, 1), dtype), make((5, 6), torch.bool, seed=2)), tag="broadcast self")
    yield Sample((make((4, 6), dtype, noncontig=True), make((4, 6), torch.bool, seed=3)), tag="noncontig")
    yield Sample((make((0, 6), dtype), make((0, 6), torch.bool)), tag="empty")
    yield Sample((make((), dtype), torch.tensor(True)), tag="0-dim")
    yield Sample((make((70, 130), dtype), make((70, 130), torch.bool, seed=4)), tag="large")


def _masked_select(x, m):
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    return torch.masked_select(x, m), torch.masked_select(x, m, out=out)


def _masked_scatter_samples(dtype):
    yield Sample((make((5, 6), dtype), make((5, 6), torch.bool), make((40,), dtype)), tag="same shape")
    yield Sample((make((5, 6), dtype), make((6,), torch.bool, seed=1), make((5, 6), dtype)), tag="broadcast mask")
    yield Sample((make((4, 6), dtype, noncontig=True), make((4, 6), torch.bool, seed=3), make((2, 20), dtype)),
                 tag="noncontig")
    yield Sample((make((0, 6), dtype), make((0, 6), torch.bool), make((0,), dtype)), tag="empty")
    yield Sample((make((70, 130), dtype), make((70, 130), torch.bool, seed=4), make((70, 130), dtype)), tag="large")


def _masked_scatter(x, m, s):
    y = x.clone()
    return y.masked_scatter_(m, s), torch.masked_scatter(x, m, s)


# ---- embedding -------------------------------------------------------------------------------
def _embedding_samples(dtype):
    yield Sample((_idx([[1, 3, 1], [0, 3, 3]]), make((5, 4), dtype)), tag="dup")
    yield Sample((_idx([[1, 3, 1], [0, 3, 3]]), make((5, 4), dtype)), {"padding_idx": 3}, tag="padding_idx")
    yield Sample((_idx([1, 3, 1, 1, 0]), make((5, 4), dtype)), {"scale_grad_by_freq": True}, tag="freq")
    yield Sample((_idx([2, 2, 4], torch.int32), make((6, 3), dtype, noncontig=True)), tag="int32 noncontig")
    yield Sample((_rand_idx((8, 64), 97), make((97, 48), dtype)), tag="large")
    yield Sample((_idx([], torch.int64), make((5, 4), dtype)), tag="empty")


def _embedding(i, w, **kw):
    return F.embedding(i, w, **kw)


# ---- embedding_bag ---------------------------------------------------------------------------
_BAG_IDX = [1, 2, 4, 5, 4, 3, 2, 9, 4, 7]


def _embedding_bag_samples(dtype):
    for mode in ("sum", "mean", "max"):
        # bags [0, 4), [4, 4) (empty), [4, 8), [8, 10)
        yield Sample((_idx(_BAG_IDX), make((10, 5), dtype), _idx([0, 4, 4, 8]), None, mode), tag=mode)
        yield Sample((_idx(_BAG_IDX, torch.int32), make((10, 5), dtype), _idx([0, 4, 4, 8], torch.int32), None, mode),
                     tag=f"{mode} int32")
        yield Sample((_idx(_BAG_IDX), make((10, 5), dtype), _idx([0, 4, 4, 8, 10]), None, mode),
                     {"include_last_offset": True}, tag=f"{mode} include_last_offset")
        yield Sample((_idx(_BAG_IDX), make((10, 5), dtype), _idx([0, 4, 4, 8]), None, mode), {"padding_idx": 4},
                     tag=f"{mode} padding_idx")
        yield Sample((_idx([[1, 2, 3], [4, 5, 6]]), make((7, 3), dtype), None, None, mode), tag=f"{mode} 2-D input")
        yield Sample((_idx([2, 0, 5, 1]), make((6, 12), dtype, noncontig=True), _idx([0, 1]), None, mode),
                     tag=f"{mode} strided weight")
        yield Sample((_rand_idx((1000,), 97), make((97, 96), dtype), _idx(list(range(0, 1000, 15))), None, mode),
                     tag=f"{mode} large")
        yield Sample((_idx([]), make((5, 4), dtype), _idx([0, 0]), None, mode), tag=f"{mode} no indices")
    yield Sample((_idx(_BAG_IDX), make((10, 5), dtype), _idx([0, 4, 4, 8]), make((10,), dtype, seed=3), "sum"),
                 tag="per_sample_weights")
    yield Sample((_idx(_BAG_IDX), make((10, 5), dtype), _idx([0, 4, 4, 8]), make((10,), dtype, seed=3), "sum"),
                 {"padding_idx": 2}, tag="per_sample_weights padding_idx")
    for mode in ("sum", "mean"):
        # Repeats only at the largest index: ATen's CPU kernel divides other rows by the wrong
        # count (pytorch/pytorch#190063), so mixed counts are checked in test_edge_semantics.
        yield Sample((_idx([0, 2, 5, 5, 1, 5]), make((6, 4), dtype), _idx([0, 3]), None, mode),
                     {"scale_grad_by_freq": True}, tag=f"{mode} scale_grad_by_freq")


def _embedding_bag(i, w, offsets, psw, mode, **kw):
    return F.embedding_bag(i, w, offsets, mode=mode, per_sample_weights=psw, **kw)


def _embedding_bag_no_grad(i, w, offsets, psw, mode, **kw):
    with torch.no_grad():  # ATen's embedding_bag takes _embedding_bag_forward_only then
        return F.embedding_bag(i, w, offsets, mode=mode, per_sample_weights=psw, **kw)


def _deterministic(fn):
    """fn under torch.use_deterministic_algorithms(True): the sorted (atomic-free) path."""
    def run(*args, **kwargs):
        prev = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.use_deterministic_algorithms(prev)
    return run


# ---- index_copy / index_fill / take / put_ ----------------------------------------------
def _index_copy_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _idx([4, 0, 2]), make((3, 7), dtype)), tag="rows")
    yield Sample((make((5, 7), dtype), -1, _idx([6, 1]), make((5, 2), dtype)), tag="cols")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), 2, _idx([5, 0, 3]), make((3, 4, 3), dtype, noncontig=True)),
                 tag="noncontig")
    yield Sample((make((3, 4), dtype), 1, _idx(2), make((3, 1), dtype)), tag="0-dim index")
    yield Sample((make((4,), dtype), 0, _idx([1]), make((), dtype)), tag="0-dim source")
    yield Sample((make((), dtype), 0, _idx([0]), make((), dtype)), tag="0-dim self")
    yield Sample((make((3, 4), dtype), 0, _idx([], torch.int64), make((0, 4), dtype)), tag="empty index")
    yield Sample((make((300, 33), dtype), 0, torch.randperm(300, generator=torch.Generator().manual_seed(1))[:257],
                  make((257, 33), dtype)), tag="large")


def _index_copy(x, d, i, s):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    y = x.clone()
    return torch.index_copy(x, d, i, s), y.index_copy_(d, i, s), torch.index_copy(x, d, i, s, out=out)


def _index_fill_samples(dtype):
    yield Sample((make((5, 7), dtype), 0, _idx([4, 0, 4])), tag="rows dup")
    yield Sample((make((5, 7), dtype), 1, _idx([-1, 2])), tag="negative")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), -1, _idx([5, 0])), tag="noncontig")
    yield Sample((make((3, 4), dtype), 0, _idx(1)), tag="0-dim index")
    yield Sample((make((), dtype), 0, _idx([0])), tag="0-dim self")
    yield Sample((make((3, 4), dtype), 1, _idx([], torch.int64)), tag="empty index")
    yield Sample((make((0, 4), dtype), 1, _idx([7])), tag="empty self (no index checked)")
    yield Sample((make((300, 33), dtype), 0, _rand_idx((57,), 300)), tag="large")


def _index_fill(x, d, i):
    value = True if x.dtype == torch.bool else 2
    t = torch.tensor(value, dtype=torch.float64 if x.dtype.is_floating_point else torch.int64)
    return x.clone().index_fill_(d, i, value), torch.index_fill(x, d, i, t), x.clone().index_fill_(d, i, t.to(x.device))


def _take_samples(dtype):
    yield Sample((make((5, 7), dtype), _idx([[34, 0], [-1, 7]])), tag="2-D index, negative")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), _idx([5, 70, 23, -72])), tag="noncontig")
    yield Sample((make((), dtype), _idx([0, -1])), tag="0-dim self")
    yield Sample((make((3, 4), dtype), _idx(5)), tag="0-dim index")
    yield Sample((make((3, 4), dtype), _idx([], torch.int64)), tag="empty index")
    yield Sample((make((300, 33), dtype), _rand_idx((1000,), 9900)), tag="large")


def _take(x, i):
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    return torch.take(x, i), torch.take(x, i, out=out)


def _put_samples(dtype, accumulate=False):
    # Distinct targets (-1 is 34): which of two writes to one element wins is unspecified.
    yield Sample((make((5, 7), dtype), _idx([[33, 0], [-1, 7]]), make((2, 2), dtype)), tag="2-D index, negative")
    yield Sample((make((3, 4, 6), dtype, noncontig=True), _idx([5, 70, 23, -71]), make((4,), dtype)), tag="noncontig")
    yield Sample((make((), dtype), _idx([0]), make((1,), dtype)), tag="0-dim self")
    yield Sample((make((3, 4), dtype), _idx([], torch.int64), make((0,), dtype)), tag="empty index")
    if accumulate:
        yield Sample((make((5, 7), dtype), _idx([3, 3, -32, 3]), make((4,), dtype)), tag="duplicates")
        yield Sample((make((30, 33), dtype), _rand_idx((1000,), 990), make((1000,), dtype)), tag="large")
    else:
        yield Sample((make((30, 33), dtype), torch.randperm(990, generator=torch.Generator().manual_seed(2))[:500],
                      make((500,), dtype)), tag="large")


def _put(x, i, s):
    return x.clone().put_(i, s), torch.put(x, i, s)


def _put_accumulate(x, i, s):
    return x.clone().put_(i, s, accumulate=True), torch.put(x, i, s, accumulate=True)


CASES = [
    OpCase("index_select", ["aten::index_select", "aten::index_select.out"], _index_select_out, _index_select_samples,
           dtypes=IDX_DTYPES, grad=True),
    OpCase("gather", ["aten::gather.out"], _gather, _gather_samples, dtypes=IDX_DTYPES, grad=True),
    OpCase("scatter", ["aten::scatter.src_out", "aten::scatter.value_out"], _scatter, _scatter_samples,
           dtypes=IDX_DTYPES),
    OpCase("scatter_grad", [], lambda x, d, i, s: torch.scatter(x, d, i, s), lambda t: _same_shape(_scatter_samples(t)), dtypes=FLOAT, grad=True),
    OpCase("scatter_reduce_old", ["aten::scatter.reduce_out", "aten::scatter.value_reduce_out"], _scatter_reduce_old,
           _dup_samples, dtypes=FLOATS + (torch.int64, torch.int32)),
    OpCase("scatter_add", ["aten::scatter_add.out"], _scatter_add, lambda t: _dup_samples(t, False),
           dtypes=FLOATS + INTS + HALFS, grad=True),
    OpCase("scatter_reduce_two", ["aten::scatter_reduce.two_out"], _scatter_reduce_two,
           lambda t: _dup_samples(t, False), dtypes=FLOATS + (torch.int64, torch.int32, torch.bfloat16)),
    OpCase("scatter_reduce_grad", [], _scatter_reduce_grad, lambda t: _same_shape(_dup_samples(t, False)), dtypes=FLOAT, grad=True),
    OpCase("index_add", ["aten::index_add.out"], _index_add, _index_add_samples, dtypes=FLOATS + INTS + HALFS,
           grad=True),
    OpCase("index_reduce", ["aten::index_reduce.out"], _index_reduce, _index_add_samples,
           dtypes=FLOATS + (torch.int64, torch.int32, torch.bfloat16), grad=True),
    OpCase("index", ["aten::index.Tensor_out"], _index, _index_samples, dtypes=IDX_DTYPES, grad=True),
    OpCase("index_put", ["aten::_index_put_impl_"], _index_put, _index_put_samples, dtypes=IDX_DTYPES),
    OpCase("index_put_accumulate", [], _index_put_accumulate, _index_put_acc_samples,
           dtypes=FLOATS + (torch.int64, torch.int32), grad=True),
    # The CPU rounds to half after every add; the device accumulates in float.
    OpCase("index_put_accumulate_half", [], _index_put_accumulate, _index_put_acc_samples, dtypes=(torch.float16,), atol=2e-2,
           rtol=2e-2),
    OpCase("index_copy", ["aten::index_copy.out"], _index_copy, _index_copy_samples, dtypes=IDX_DTYPES, grad=True),
    OpCase("index_fill", ["aten::index_fill_.int_Scalar", "aten::index_fill_.int_Tensor"], _index_fill,
           _index_fill_samples, dtypes=IDX_DTYPES),
    OpCase("take", ["aten::take", "aten::take.out"], _take, _take_samples, dtypes=IDX_DTYPES, grad=True),
    OpCase("put", ["aten::put_"], _put, _put_samples, dtypes=IDX_DTYPES),
    OpCase("put_accumulate", [], _put_accumulate, lambda t: _put_samples(t, True), dtypes=FLOATS + (torch.int64,)),
    OpCase("nonzero", ["aten::nonzero", "aten::nonzero.out"], _nonzero, _nonzero_samples, dtypes=IDX_DTYPES),
    OpCase("nonzero_static", ["aten::nonzero_static"], _nonzero_static, _nonzero_samples, dtypes=FLOAT + INTS[:1]),
    OpCase("masked_select", ["aten::masked_select", "aten::masked_select.out"], _masked_select, _masked_samples,
           dtypes=IDX_DTYPES, grad=True),
    OpCase("masked_scatter", ["aten::masked_scatter_"], _masked_scatter, _masked_scatter_samples, dtypes=IDX_DTYPES),
    OpCase("embedding", ["aten::embedding_dense_backward"], _embedding, _embedding_samples, dtypes=FLOATS + HALFS,
           grad=True),
    OpCase("embedding_bag", ["aten::_embedding_bag", "aten::_embedding_bag_backward",
                             "aten::_embedding_bag_dense_backward", "aten::_embedding_bag_per_sample_weights_backward"],
           _embedding_bag, _embedding_bag_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("embedding_bag_forward_only", ["aten::_embedding_bag_forward_only"], _embedding_bag_no_grad,
           _embedding_bag_samples, dtypes=FLOATS + HALFS),
    # Sums onto float32/float64/int32/int64 use atomics unless deterministic algorithms are on.
    OpCase("scatter_add_deterministic", [], _deterministic(_scatter_add), lambda t: _dup_samples(t, False),
           dtypes=FLOAT + (torch.int64,), grad=True),
    OpCase("index_add_deterministic", [], _deterministic(_index_add), _index_add_samples, dtypes=FLOAT + (torch.int32,)),
    OpCase("index_put_accumulate_deterministic", [], _deterministic(_index_put_accumulate), _index_put_acc_samples,
           dtypes=FLOAT + (torch.int64,)),
]


# ---- embedding_renorm_ ----------------------------------------------------------------------
def _renorm_(w, idx, max_norm, p):
    """embedding_renorm_ in place (the harness compares w after the call); synchronizes so a
    device-detected bad index raises here."""
    out = torch.embedding_renorm_(w, idx, max_norm, p)
    if w.device.type != "cpu":
        torch.ocl.synchronize()
    return out


def _renorm_samples(dtype):
    dup = _idx([[1, 3, 1], [0, 3, 3]])
    for p in (2.0, 1.0, 3.0, 0.5, float("inf"), float("-inf"), 0.0):
        for max_norm in (1.0, 4.0):
            yield Sample((make((5, 4), dtype), dup, max_norm, p), tag=f"p={p} max_norm={max_norm}")
    yield Sample((make((6, 3), dtype), _idx([2, 2, 4, -1], torch.int32), 1.5, 2.0), tag="int32, negative index")
    yield Sample((make((3, 6), dtype).t(), _idx([0, 5, 1]), 1.0, 2.0), tag="transposed weight")
    yield Sample((make((6, 8), dtype, noncontig=True), _idx([[4], [5]]), 1.0, 2.0), tag="noncontig weight")
    yield Sample((make((97, 300), dtype, low=-0.2, high=0.2), _rand_idx((8, 64), 97), 2.0, 2.0), tag="large")
    yield Sample((make((5, 4), dtype), _idx([], torch.int64), 1.0, 2.0), tag="no indices")
    yield Sample((make((5, 0), dtype), _idx([1, 2]), 1.0, 2.0), tag="empty rows")
    yield Sample((make((5, 4), dtype), _idx([1, 2]), 100.0, 2.0), tag="below max_norm")


def _renorm_error_samples(dtype):
    yield Sample((make((5, 4), dtype), _idx([1, 5]), 1.0, 2.0), tag="index == num_weights raises")
    yield Sample((make((5, 4), dtype), _idx([-6, 0]), 1.0, 2.0), tag="index < -num_weights raises")
    yield Sample((make((5,), dtype), _idx([1]), 1.0, 2.0), tag="1-d weight raises")
    yield Sample((make((5, 4), dtype), torch.tensor([1.0]), 1.0, 2.0), tag="float indices raise")


def _embedding_max_norm(i, w, **kw):
    return F.embedding(i, w, max_norm=1.5, **kw)


CASES += [
    OpCase("embedding_renorm", ["aten::embedding_renorm_"], _renorm_, _renorm_samples, dtypes=FLOATS + HALFS),
    OpCase("embedding_renorm_errors", ["aten::embedding_renorm_"], _renorm_, _renorm_error_samples, dtypes=FLOAT),
    OpCase("embedding_max_norm", ["aten::embedding_renorm_"], _embedding_max_norm,
           _embedding_samples, dtypes=FLOATS + HALFS, grad=True),
]
