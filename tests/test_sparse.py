"""Sparse COO tensors on ocl (csrc/ops/sparse.cpp) against the CPU: creation, transfers,
coalesce, conversions, arithmetic, sums, matrix products, printing, save/load, sparse embedding
gradients, the optimizers that use them, and the errors. Tests name the SparsePrivateUse1 ops
they exercise with @covers; tests/test_coverage.py fails when a registered one has none."""
import copy
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from .conftest import requires_ocl
from .test_autoload import ok, run_py

# ATen warns (once) that sparse invariant checks are off, on the CPU too.
INVARIANTS_WARNING = "Sparse invariant checks are implicitly disabled"
pytestmark = [requires_ocl, pytest.mark.filterwarnings(f"ignore:{INVARIANTS_WARNING}")]

DEV = "ocl"
def coverage_registry():
    """A dict "aten::op.overload" -> names of the tests that exercise it, and the decorator
    `covers(*ops)` that fills it (tests/test_coverage.py checks it against the registrations)."""
    covered = {}

    def covers(*ops):
        def mark(fn):
            for op in ops:
                covered.setdefault(op, []).append(fn.__name__)
            return fn
        return mark
    return covered, covers


COVERED, covers = coverage_registry()


@pytest.fixture(autouse=True)
def _all_native():
    """Every sparse op here runs natively: a CPU fallback would hide a missing kernel."""
    with torch.ocl._no_fallback():
        yield


# float16 sums round once on ocl (accumulated in float) where the CPU rounds every partial sum.
TOL = {torch.float32: (1e-5, 1.3e-5), torch.float64: (1e-7, 1e-7), torch.float16: (2e-3, 1e-3)}


def _sparse(indices, values, size, dtype=torch.float32):
    return torch.sparse_coo_tensor(torch.tensor(indices, dtype=torch.int64), values.to(dtype), size)


def samples(dtype=torch.float32):
    """(tag, CPU sparse tensor): duplicates, empty, hybrid, 0-size dims, non-contiguous values."""
    g = torch.Generator().manual_seed(0)

    def vals(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)
    yield "dup2d", _sparse([[0, 3, 1, 0, 3, 2, 0], [4, 1, 1, 4, 1, 0, 2]], vals(7), (4, 5), dtype)
    yield "empty", _sparse([[], []], vals(0), (3, 4), dtype)
    yield "1d", _sparse([[5, 1, 5, 5, 0]], vals(5), (6,), dtype)
    yield "3d", _sparse([[0, 1, 1, 0], [2, 0, 0, 2], [1, 3, 3, 1]], vals(4), (2, 3, 4), dtype)
    yield "hybrid", _sparse([[2, 0, 2, 4]], vals(4, 3), (5, 3), dtype)
    yield "hybrid2", _sparse([[1, 0, 1], [2, 2, 2]], vals(3, 2, 2), (2, 3, 2, 2), dtype)
    yield "zero-size", _sparse([[], []], vals(0), (0, 4), dtype)
    yield "zero-dense", _sparse([[1, 0, 1]], vals(3, 0), (3, 0), dtype)
    yield "noncontig", _sparse([[0, 2, 0, 1], [1, 1, 1, 0]], vals(4, 2)[:, 0], (3, 2), dtype)
    yield "coalesced", _sparse([[0, 1, 2], [1, 0, 2]], vals(3), (3, 3), dtype).coalesce()


def quietly(make):
    """list(make()) without the invariants warning (at import: tests/test_coverage.py imports this)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=INVARIANTS_WARNING)
        return list(make())


SAMPLES = quietly(samples)
IDS = [tag for tag, _ in SAMPLES]


def assert_sparse_close(actual, expected, tol=None):
    """actual (on ocl) equals expected (CPU): same layout, sizes, dims and dtype, and the same
    entries once both are coalesced (indices exactly, values at dtype tolerance)."""
    assert actual.device.type == DEV and actual.is_sparse, (actual.device, actual.layout)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert (actual.sparse_dim(), actual.dense_dim()) == (expected.sparse_dim(), expected.dense_dim())
    if expected.numel() == 0:  # entries of an empty tensor hold nothing (the CPU may drop them)
        return
    a, e = actual.cpu().coalesce(), expected.coalesce()
    assert torch.equal(a.indices(), e.indices()), (a.indices(), e.indices())
    atol, rtol = tol or TOL.get(e.dtype, (0, 0))
    torch.testing.assert_close(a.values(), e.values(), atol=atol, rtol=rtol)


def assert_dense_close(actual, expected, tol=None):
    assert actual.device.type == DEV and not actual.is_sparse
    atol, rtol = tol or TOL.get(expected.dtype, (0, 0))
    torch.testing.assert_close(actual.cpu(), expected, atol=atol, rtol=rtol, equal_nan=True)


def same_error(fn, *args):
    """fn raises on the CPU arguments and on their ocl copies, with the same exception type."""
    with pytest.raises(Exception) as cpu:
        fn(*args)
    with pytest.raises(type(cpu.value)):
        fn(*[a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args])
    torch.ones(2, device=DEV).add_(1).cpu()  # the device stays usable


# ---- creation, metadata, transfers -------------------------------------------------------------

@covers("aten::_sparse_coo_tensor_with_dims_and_tensors", "aten::sparse_dim", "aten::dense_dim", "aten::_dimI",
        "aten::_dimV", "aten::_nnz", "aten::_indices", "aten::_values", "aten::is_coalesced")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_create_and_metadata(tag, s):
    i, v = s._indices(), s._values()
    for d in (torch.sparse_coo_tensor(i, v, s.shape, device=DEV),
              torch.sparse_coo_tensor(i.to(DEV), v.to(DEV), s.shape),
              torch.ops.aten._sparse_coo_tensor_unsafe(i.to(DEV), v.to(DEV), list(s.shape)),
              s.to(DEV)):
        assert d.device.type == DEV and d.layout == torch.sparse_coo
        assert (d.sparse_dim(), d.dense_dim(), d._nnz()) == (s.sparse_dim(), s.dense_dim(), s._nnz())
        assert (torch.ops.aten._dimI(d), torch.ops.aten._dimV(d)) == (s.sparse_dim(), s.dense_dim())
        assert d._indices().device.type == DEV and torch.equal(d._indices().cpu(), i)
        torch.testing.assert_close(d._values().cpu(), v)
    assert s.to(DEV).is_coalesced() == s.is_coalesced()
    if s._nnz():  # sizes inferred from the indices (a host read, as on the CPU)
        assert torch.sparse_coo_tensor(i, v, device=DEV).shape == torch.sparse_coo_tensor(i, v).shape


@covers("aten::empty.memory_format", "aten::zero_", "aten::zeros.out", "aten::_sparse_coo_tensor_with_dims",
        "aten::sparse_resize_", "aten::sparse_resize_and_clear_", "aten::resize_as_sparse_")
def test_empty_zeros_and_resize():
    for make in (torch.empty, torch.zeros):
        d, c = make((2, 3), layout=torch.sparse_coo, device=DEV), make((2, 3), layout=torch.sparse_coo)
        assert d.is_sparse and d.shape == c.shape and d._nnz() == 0 and d.sparse_dim() == c.sparse_dim()
    d = torch.ops.aten._sparse_coo_tensor_with_dims(1, 1, [3, 4], dtype=torch.float64, layout=torch.sparse_coo,
                                                    device=DEV)
    assert (d.shape, d.sparse_dim(), d.dense_dim(), d.dtype) == ((3, 4), 1, 1, torch.float64)
    s = SAMPLES[0][1]
    d = s.to(DEV).sparse_resize_((5, 6), 2, 0)  # grows sizes, keeps entries
    assert d.shape == (5, 6) and d._nnz() == s._nnz()
    assert_dense_close(d.to_dense()[:4, :5], s.to_dense())
    d.sparse_resize_and_clear_((2, 2, 2), 1, 2)
    assert (d.shape, d.sparse_dim(), d.dense_dim(), d._nnz()) == ((2, 2, 2), 1, 2, 0)
    torch.ops.aten.resize_as_sparse_(d, s.to(DEV))
    assert (d.shape, d.sparse_dim(), d.dense_dim()) == (s.shape, 2, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_transfer_and_dtype_round_trip(dtype):
    for tag, s in samples(dtype):
        d = s.to(DEV)
        assert_sparse_close(d, s)
        back = d.cpu()
        assert back.device.type == "cpu" and back.is_coalesced() == s.is_coalesced()
        assert torch.equal(back._indices(), s._indices()) and torch.equal(back._values(), s._values()), tag
        assert_sparse_close(d.to(torch.float64), s.to(torch.float64))
        assert_sparse_close(d.to(torch.float32), s.to(torch.float32))


# ---- coalesce ----------------------------------------------------------------------------------

@covers("aten::_coalesce", "aten::_coalesced_", "aten::indices", "aten::values")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_coalesce(dtype):
    for tag, s in samples(dtype):
        c, d = s.coalesce(), s.to(DEV).coalesce()
        assert d.is_coalesced() and d._nnz() == c._nnz(), tag
        assert torch.equal(d.indices().cpu(), c.indices()), tag
        atol, rtol = TOL.get(dtype, (0, 0))
        torch.testing.assert_close(d.values().cpu(), c.values(), atol=atol, rtol=rtol, msg=tag)
    d = SAMPLES[0][1].to(DEV)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        d.indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        d.values()
    assert d._coalesced_(True).is_coalesced() and not d._coalesced_(False).is_coalesced()


def test_coalesce_many_duplicates():
    g = torch.Generator().manual_seed(1)
    i = torch.randint(0, 30, (2, 3000), generator=g)
    s = torch.sparse_coo_tensor(i, torch.randn(3000, 2, generator=g), (30, 30, 2))
    assert_sparse_close(s.to(DEV).coalesce(), s.coalesce(), tol=(1e-4, 1e-5))


# ---- clone, copy, like ---------------------------------------------------------------------------

@covers("aten::clone", "aten::copy_", "aten::copy_sparse_to_sparse_", "aten::empty_like")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_clone_copy_like(tag, s):
    d = s.to(DEV)
    e = d.clone()
    assert_sparse_close(e, s)
    assert e.is_coalesced() == s.is_coalesced()
    assert e._values().numel() == 0 or e._values().data_ptr() != d._values().data_ptr()
    target = torch.zeros(s.shape, layout=torch.sparse_coo, device=DEV)
    assert_sparse_close(target.copy_(d), s)
    assert_sparse_close(torch.zeros(s.shape, layout=torch.sparse_coo, device=DEV).copy_(s), s)  # from the CPU
    assert_sparse_close(torch.ops.aten.copy_sparse_to_sparse_(target, d * 2), s * 2)
    for like in (torch.empty_like(d), torch.zeros_like(d)):
        assert like.is_sparse and like.device.type == DEV and like.shape == s.shape and like._nnz() == 0
        assert (like.sparse_dim(), like.dense_dim()) == (s.sparse_dim(), s.dense_dim())
    assert torch.empty_like(d, layout=torch.strided).shape == s.shape


def test_copy_between_dense_and_sparse_refused():
    s = SAMPLES[0][1]
    same_error(lambda a, b: a.copy_(b), torch.zeros(s.shape), s)
    same_error(lambda a, b: a.copy_(b), s.clone(), torch.zeros(s.shape))


# ---- conversions ---------------------------------------------------------------------------------

@covers("aten::_to_dense")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
def test_to_dense(dtype):
    for tag, s in samples(dtype):
        assert_dense_close(s.to(DEV).to_dense(), s.to_dense())


@covers("aten::_to_sparse", "aten::_to_sparse.sparse_dim")
def test_to_sparse():
    x = torch.tensor([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 3.5]])
    y = torch.zeros(2, 3, 2)
    y[1, 0] = torch.tensor([1.0, 0.0])
    cases = [(x, ()), (x, (1,)), (y, ()), (y, (1,)), (y, (2,)), (torch.zeros(3, 4), ()), (torch.tensor(2.5), ()),
             (x.t(), ()), (torch.zeros(0, 3), ())]
    for t, args in cases:
        d = t.to(DEV).to_sparse(*args)
        assert_sparse_close(d, t.to_sparse(*args))
        assert d.is_coalesced()
        assert_dense_close(d.to_dense(), t)
    d = x.to(DEV).to_sparse()
    assert d.to_sparse() is d  # sparse -> sparse is the identity, as on the CPU
    assert_sparse_close(d.to_sparse(2), x.to_sparse())
    assert_sparse_close(x.to(DEV).to_sparse(layout=torch.sparse_coo), x.to_sparse())
    same_error(lambda t: t.to_sparse(1), x.to_sparse())  # a different sparse_dim
    same_error(lambda t: t.to_sparse(3), x)


# ---- arithmetic -----------------------------------------------------------------------------------

def _pairs(dtype=torch.float32):
    """(tag, a, b): sparse pairs of one shape, with partly shared, duplicated and disjoint entries."""
    g = torch.Generator().manual_seed(2)
    yield "dup", _sparse([[0, 1, 0, 2], [1, 1, 1, 3]], torch.randn(4, generator=g), (3, 4), dtype), \
        _sparse([[1, 0, 2, 2], [1, 1, 0, 0]], torch.randn(4, generator=g), (3, 4), dtype)
    yield "coalesced", _sparse([[0, 1], [1, 2]], torch.randn(2, generator=g), (2, 3), dtype).coalesce(), \
        _sparse([[0, 1, 1], [1, 0, 2]], torch.randn(3, generator=g), (2, 3), dtype).coalesce()
    yield "hybrid", _sparse([[3, 0, 3]], torch.randn(3, 2, generator=g), (4, 2), dtype), \
        _sparse([[0, 1]], torch.randn(2, 2, generator=g), (4, 2), dtype)
    yield "empty-lhs", _sparse([[], []], torch.randn(0, generator=g), (2, 2), dtype), \
        _sparse([[1], [0]], torch.randn(1, generator=g), (2, 2), dtype)
    yield "empty-rhs", _sparse([[1], [0]], torch.randn(1, generator=g), (2, 2), dtype), \
        _sparse([[], []], torch.randn(0, generator=g), (2, 2), dtype)
    yield "disjoint", _sparse([[0]], torch.randn(1, generator=g), (3,), dtype), \
        _sparse([[2]], torch.randn(1, generator=g), (3,), dtype)


PAIRS = quietly(_pairs)
PAIR_IDS = [p[0] for p in PAIRS]


@covers("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out", "aten::sub.Tensor", "aten::sub_.Tensor",
        "aten::sub.out")
@pytest.mark.parametrize("tag, a, b", PAIRS, ids=PAIR_IDS)
def test_add_sub_sparse_sparse(tag, a, b):
    da, db = a.to(DEV), b.to(DEV)
    assert_sparse_close(da + db, a + b)
    assert_sparse_close(torch.add(da, db, alpha=-2.5), torch.add(a, b, alpha=-2.5))
    assert_sparse_close(da - db, a - b)
    assert_sparse_close(torch.sub(da, db, alpha=3), torch.sub(a, b, alpha=3))
    out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
    assert_sparse_close(torch.add(da, db, alpha=0.5, out=out), torch.add(a, b, alpha=0.5))
    assert_sparse_close(torch.sub(da, db, out=out), a - b)
    c, dc = a.clone(), da.clone()
    c.add_(b, alpha=2)
    dc.add_(db, alpha=2)
    assert_sparse_close(dc, c)
    c.sub_(b)
    dc.sub_(db)
    assert_sparse_close(dc, c)
    assert_sparse_close(da.double() + db, a.double() + b)  # dtype promotion


def test_add_sparse_accumulation_stays_bounded():
    a = SAMPLES[0][1]
    acc, dacc = a.clone(), a.to(DEV)
    for _ in range(6):  # concatenated entries, coalesced once they outnumber the elements
        acc.add_(a)
        dacc.add_(a.to(DEV))
        assert dacc._nnz() <= dacc.numel()
    assert_sparse_close(dacc, acc)


@covers("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_add_dense_sparse(dtype):
    for tag, s in samples(dtype):
        x = torch.randn(s.shape, dtype=torch.float64).to(dtype)
        dx, ds = x.to(DEV), s.to(DEV)
        assert_dense_close(dx + ds, x + s)
        assert_dense_close(torch.add(dx, ds, alpha=-0.5), torch.add(x, s, alpha=-0.5))
        y, dy = x.clone(), dx.clone()
        y.add_(s, alpha=3)
        dy.add_(ds, alpha=3)
        assert_dense_close(dy, y)
        if x.dim() == 2:  # into a non-contiguous out
            out = torch.zeros(x.shape[1], x.shape[0], dtype=dtype).t()
            dout = out.to(DEV).t().contiguous().t()
            torch.add(x, s, out=out)
            torch.add(dx, ds, out=dout)
            assert_dense_close(dout, out)
    s = SAMPLES[0][1]
    x = torch.randn(s.shape, dtype=torch.float64)
    assert_dense_close(x.to(DEV) + s.to(DEV), x + s)  # float64 + float32 promotes


def test_add_errors_like_cpu():
    s, x = SAMPLES[0][1], torch.ones(4, 5)
    same_error(lambda a, b: a + b, s, x)  # add(sparse, dense)
    same_error(lambda a, b: a + b, x[:3], s)  # no broadcasting
    same_error(lambda a, b: a + b, s, s.to_dense()[:3].to_sparse())
    same_error(lambda a, b: a.add_(b), torch.ones(4, 5, dtype=torch.int64), s)  # float into int
    with pytest.raises(RuntimeError, match="same device"):
        x.to(DEV) + s


@covers("aten::mul.Tensor", "aten::mul_.Tensor", "aten::mul.out", "aten::div.Tensor", "aten::div_.Tensor",
        "aten::div.out", "aten::neg", "aten::neg_", "aten::neg.out", "aten::pow.Tensor_Scalar",
        "aten::pow.Tensor_Scalar_out")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_scalar_arithmetic(tag, s):
    d = s.to(DEV)
    assert_sparse_close(d * 2.5, s * 2.5)
    assert_sparse_close(3 * d, 3 * s)
    assert_sparse_close(d * torch.tensor(-2.0, device=DEV), s * torch.tensor(-2.0))
    assert_sparse_close(d / 4, s / 4)
    assert_sparse_close(-d, -s)
    assert_sparse_close(d.pow(2), s.pow(2))
    assert_sparse_close(d.pow(3), s.pow(3))
    c, dc = s.clone(), d.clone()
    for f in (lambda t: t.mul_(1.5), lambda t: t.div_(-2), lambda t: t.neg_()):
        f(c)
        f(dc)
        assert_sparse_close(dc, c)
    for fn, want in ((lambda o: torch.neg(d, out=o), -s), (lambda o: torch.div(d, 2, out=o), s / 2),
                     (lambda o: torch.pow(d, 2, out=o), s.pow(2)), (lambda o: torch.mul(d, 2, out=o), s * 2)):
        assert_sparse_close(fn(torch.empty(0, layout=torch.sparse_coo, device=DEV)), want)
    si = s.to(torch.int64)
    assert_sparse_close(si.to(DEV) / 2, si / 2)  # integer division gives the default dtype


@covers("aten::div.Tensor_mode", "aten::div_.Tensor_mode", "aten::div.out_mode")
def test_div_rounding_modes():
    s = _sparse([[0, 1, 0], [1, 1, 1]], torch.tensor([3.0, -5.0, 3.0]), (2, 2))
    d = s.to(DEV)
    for mode in ("floor", "trunc"):  # floor division of an uncoalesced tensor coalesces it first
        assert_sparse_close(torch.div(d, 2, rounding_mode=mode), torch.div(s, 2, rounding_mode=mode))
        out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
        assert_sparse_close(torch.div(d, 2, rounding_mode=mode, out=out), torch.div(s, 2, rounding_mode=mode))
        c, dc = s.clone(), d.clone()
        c.div_(2, rounding_mode=mode)
        dc.div_(2, rounding_mode=mode)
        assert_sparse_close(dc, c)


def test_div_and_pow_errors_like_cpu():
    s = SAMPLES[0][1]
    same_error(lambda a: a / torch.ones(4, 5, device=a.device), s)  # a non-scalar divisor
    same_error(lambda a: a.pow(0), s)


@covers("aten::mul.Tensor", "aten::mul.out")
@pytest.mark.parametrize("tag, a, b", PAIRS, ids=PAIR_IDS)
def test_mul_sparse_sparse_and_dense(tag, a, b):
    da, db = a.to(DEV), b.to(DEV)
    # The CPU's product may keep explicit zeros where only one operand has an entry; ocl keeps
    # the entries both have. Compared densely, with ocl's entries checked to be the common ones.
    prod = da * db
    assert prod.is_sparse and prod.is_coalesced() and prod.shape == a.shape
    assert_dense_close(prod.to_dense(), (a * b).to_dense())
    entries = lambda t: {tuple(c) for c in t.coalesce().indices().t().tolist()}  # noqa: E731
    assert prod._nnz() == len(entries(a) & entries(b))
    x = torch.randn(a.shape)
    assert_sparse_close(da * x.to(DEV), a * x)
    assert_sparse_close(x.to(DEV) * da, x * a)
    dx = x.to(DEV)
    dx.mul_(da)  # dense *= sparse: the dense tensor holds the (dense) product
    assert_dense_close(dx, (x * a).to_dense())


def test_mul_errors():
    s = SAMPLES[0][1]
    same_error(lambda a, b: a * b, s, _sparse([[0], [0]], torch.ones(1), (4, 6)))
    with pytest.raises(NotImplementedError, match="broadcasting"):  # the CPU broadcasts
        s.to(DEV) * torch.ones(5, device=DEV)


# ---- sparse_mask, sums, matrix products -----------------------------------------------------------

@covers("aten::sparse_mask")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_sparse_mask(tag, s):
    x = torch.randn(s.shape)
    for mask in (s, s.coalesce()):
        assert_sparse_close(x.to(DEV).sparse_mask(mask.to(DEV)), x.sparse_mask(mask))
    t = (s + s).coalesce() if s._nnz() else s  # a sparse self: its values where mask has entries
    other = _sparse([[0]] * t.sparse_dim(), torch.ones(1, *t.shape[t.sparse_dim():]), t.shape) if t.numel() else t
    for src, mask in ((t, other.coalesce()), (other, t.coalesce()), (s, s.coalesce())):
        r = src.to(DEV).sparse_mask(mask.to(DEV))
        assert_sparse_close(r, src.sparse_mask(mask))
        assert r.is_coalesced() == mask.is_coalesced()


def test_sparse_mask_errors_like_cpu():
    s = SAMPLES[0][1].coalesce()
    same_error(lambda a, b: a.sparse_mask(b), torch.ones(4, 6), s)
    same_error(lambda a, b: a.sparse_mask(b), SAMPLES[4][1], _sparse([[0], [0]], torch.ones(1), (5, 3)).coalesce())


@covers("aten::sum", "aten::sum.dim_IntList")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_sums(tag, s):
    d = s.to(DEV)
    assert_dense_close(torch.sparse.sum(d), torch.sparse.sum(s))
    assert_dense_close(d.sum(), s.sum())
    assert_dense_close(d.to(torch.int64).sum(), s.to(torch.int64).sum())
    for dim in range(s.dim()):
        want = torch.sparse.sum(s, dim)
        got = torch.sparse.sum(d, dim)
        (assert_sparse_close if want.is_sparse else assert_dense_close)(got, want)
        want = s.sum(dim)
        (assert_sparse_close if want.is_sparse else assert_dense_close)(d.sum(dim), want)
    if s.dim() >= 2:
        want = torch.sparse.sum(s, (0, 1))
        (assert_sparse_close if want.is_sparse else assert_dense_close)(torch.sparse.sum(d, (0, 1)), want)


@covers("aten::mm", "aten::mm.out", "aten::addmm", "aten::addmm_", "aten::addmm.out")
def test_mm_addmm():
    g = torch.Generator().manual_seed(3)
    for tag, s in SAMPLES:
        if s.sparse_dim() != 2 or s.dense_dim() != 0:
            continue
        x = torch.randn(s.shape[1], 3, generator=g)
        t = torch.randn(s.shape[0], 3, generator=g)
        ds, dx, dt = s.to(DEV), x.to(DEV), t.to(DEV)
        assert_dense_close(torch.sparse.mm(ds, dx), torch.sparse.mm(s, x))
        assert_dense_close(ds @ dx, s @ x)
        out = torch.empty(0, device=DEV)
        assert_dense_close(torch.mm(ds, dx, out=out), s @ x)
        assert_dense_close(torch.addmm(dt, ds, dx, beta=0.5, alpha=-2), torch.addmm(t, s, x, beta=0.5, alpha=-2))
        assert_dense_close(torch.addmm(dt[:1], ds, dx), torch.addmm(t[:1], s, x))  # self broadcasts
        assert_dense_close(torch.addmm(dt, ds, dx, out=out), torch.addmm(t, s, x))
        t2, dt2 = t.clone(), dt.clone()
        t2.addmm_(s, x, alpha=3)
        dt2.addmm_(ds, dx, alpha=3)
        assert_dense_close(dt2, t2)
        nan = torch.full_like(t, float("nan"))  # beta=0 ignores self
        assert_dense_close(torch.addmm(nan.to(DEV), ds, dx, beta=0), torch.addmm(nan, s, x, beta=0))
    s = SAMPLES[0][1].double()
    assert_dense_close(s.to(DEV) @ torch.ones(5, 2, dtype=torch.float64, device=DEV), s @ torch.ones(5, 2).double())


@covers("aten::addmm", "aten::sparse_mask")
def test_transpose_dense_at_sparse_and_mm_gradients():
    # Composite paths that reach the registered kernels: .t() and dense @ sparse by transposes,
    # and torch.sparse.mm's backward (sparse_mask of the dense gradient for the sparse input).
    g = torch.Generator().manual_seed(5)
    s, x, y = SAMPLES[0][1], torch.randn(3, 4, generator=g), torch.randn(5, 2, generator=g)
    ds = s.to(DEV)
    assert_sparse_close(ds.t(), s.t())
    assert_dense_close(x.to(DEV) @ ds, x @ s)
    a, da = s.clone().requires_grad_(), ds.clone().requires_grad_()
    b, db = y.clone().requires_grad_(), y.to(DEV).requires_grad_()
    torch.sparse.mm(a, b).pow(2).sum().backward()
    torch.sparse.mm(da, db).pow(2).sum().backward()
    assert_sparse_close(da.grad, a.grad)
    assert_dense_close(db.grad, b.grad)


def test_mm_errors_like_cpu():
    s = SAMPLES[0][1]
    same_error(lambda a, b: torch.sparse.mm(a, b), s, torch.ones(4, 2))  # inner sizes
    same_error(lambda a, b: torch.addmm(torch.ones(4, 2, device=b.device), a, b), SAMPLES[4][1], torch.ones(3, 2))
    same_error(lambda a, b: torch.sparse.mm(a, b), s, torch.ones(5, 2, dtype=torch.float64))
    same_error(lambda a, b: a.addmm_(b, torch.ones(5, 2, device=a.device)), torch.ones(1, 2), s)


# ---- unary math, shapes, selections -------------------------------------------------------------

# Zero-preserving unary ops with an in-place and an out= form: ATen coalesces, then maps the values.
UNARY = ["abs", "asin", "atan", "asinh", "atanh", "ceil", "deg2rad", "rad2deg", "erf", "erfinv", "expm1", "floor", "frac", "log1p",
         "round", "sign", "sgn", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]


def _squashed(s, positive=False):
    """s with its values in (-0.3, 0.3) (or [0, 0.3)): coalesced (up to 3 duplicates summed), inside
    every UNARY op's domain."""
    v = torch.tanh(s._values().double()).mul(0.3).to(s.dtype)
    return torch.sparse_coo_tensor(s._indices(), v.abs() if positive else v, s.shape)._coalesced_(s.is_coalesced())


@covers(*[f"aten::{op}{sfx}" for op in UNARY for sfx in ("", "_", ".out")])
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_unary_math(tag, s):
    for op in UNARY:
        x = _squashed(s, positive=op in ("sqrt", "log1p"))
        d = x.to(DEV)
        fn = getattr(torch, op)
        assert_sparse_close(fn(d), fn(x))
        assert fn(d).is_coalesced()
        out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
        assert_sparse_close(fn(d, out=out), fn(x))
        c, dc = x.coalesce(), d.coalesce()
        getattr(c, op + "_")()
        getattr(dc, op + "_")()
        assert_sparse_close(dc, c)
    if s._nnz() > 1 and not s.is_coalesced():  # in place needs a coalesced input, on the CPU too
        same_error(lambda t: t.abs_(), s)


def test_unary_math_dtypes():
    s = SAMPLES[0][1]
    for dtype in (torch.float64, torch.int64):
        x = (s * 3).to(dtype)
        for op in ("abs", "sign", "sgn", "neg", "sqrt", "floor", "sin"):
            x_ = x.abs() if op == "sqrt" else x  # an integer input gives a float result
            assert_sparse_close(getattr(torch, op)(x_.to(DEV)), getattr(torch, op)(x_))


@covers("aten::isnan", "aten::isinf", "aten::isposinf", "aten::isposinf.out", "aten::isneginf", "aten::isneginf.out",
        "aten::signbit", "aten::signbit.out", "aten::nan_to_num", "aten::nan_to_num_", "aten::nan_to_num.out",
        "aten::relu", "aten::relu_", "aten::threshold_backward", "aten::threshold_backward.grad_input",
        "aten::conj_physical.out")
def test_predicates_relu_nan_to_num():
    v = torch.tensor([1.0, float("nan"), -float("inf"), float("inf"), -2.0, 0.5])
    s = _sparse([[0, 1, 2, 3, 0, 4], [1, 1, 0, 2, 1, 0]], v, (5, 3))
    d = s.to(DEV)
    for fn in (torch.isnan, torch.isinf, torch.isposinf, torch.isneginf, torch.signbit, torch.relu,
               lambda t: torch.nan_to_num(t), lambda t: torch.nan_to_num(t, nan=0.5, posinf=9.0, neginf=-9.0),
               torch.conj_physical):
        got, want = fn(d).cpu().coalesce(), fn(s).coalesce()
        assert got.dtype == want.dtype and torch.equal(got.indices(), want.indices())
        torch.testing.assert_close(got.values(), want.values(), equal_nan=True)
    for fn in (torch.isposinf, torch.isneginf, torch.signbit):
        out = torch.empty(0, dtype=torch.bool, layout=torch.sparse_coo, device=DEV)
        assert_sparse_close(fn(d, out=out), fn(s))
    out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
    assert_sparse_close(torch.nan_to_num(d, out=out), torch.nan_to_num(s))
    got, want = torch.conj_physical(d, out=out).cpu().coalesce(), torch.conj_physical(s).coalesce()
    torch.testing.assert_close(got.values(), want.values(), equal_nan=True)
    c, dc = s.coalesce(), d.coalesce()
    assert_sparse_close(dc.nan_to_num_(posinf=1.0), c.nan_to_num_(posinf=1.0))
    assert_sparse_close(dc.relu_(), c.relu_())
    g = _sparse([[0, 4, 3], [1, 0, 2]], torch.tensor([2.0, 3.0, 4.0]), (5, 3))
    x = _sparse([[0, 4, 3], [1, 0, 2]], torch.tensor([-1.0, 3.0, 0.0]), (5, 3))
    tb = torch.ops.aten.threshold_backward
    assert_sparse_close(tb(g.to(DEV), x.to(DEV), 0.0), tb(g, x, 0.0))
    out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
    assert_sparse_close(tb(g.to(DEV), x.to(DEV), 0.0, grad_input=out), tb(g, x, 0.0))


@covers("aten::floor_divide", "aten::floor_divide_.Tensor", "aten::floor_divide.out")
def test_floor_divide():
    s = _sparse([[0, 1, 0], [1, 1, 1]], torch.tensor([7.0, -5.0, 3.0]), (2, 2))
    d = s.to(DEV)
    assert_sparse_close(torch.floor_divide(d, 2), torch.floor_divide(s, 2))
    out = torch.empty(0, layout=torch.sparse_coo, device=DEV)
    assert_sparse_close(torch.floor_divide(d, 2, out=out), torch.floor_divide(s, 2))
    c, dc = s.clone(), d.clone()
    assert_sparse_close(dc.floor_divide_(torch.tensor(-2.0, device=DEV)), c.floor_divide_(torch.tensor(-2.0)))
    si = s.long()
    assert_sparse_close(torch.floor_divide(si.to(DEV), 2), torch.floor_divide(si, 2))


@covers("aten::cat", "aten::unsqueeze", "aten::permute", "aten::narrow_copy", "aten::_sparse_broadcast_to")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_shape_ops(tag, s):
    d = s.to(DEV)
    for dim in range(s.dim()):
        assert_sparse_close(torch.cat([d, d * 2], dim), torch.cat([s, s * 2], dim))
        if s.shape[dim] >= 2:
            assert_sparse_close(d.narrow_copy(dim, 1, s.shape[dim] - 1), s.narrow_copy(dim, 1, s.shape[dim] - 1))
    for dim in range(-s.dim() - 1, s.dim() + 1):
        assert_sparse_close(d.unsqueeze(dim), s.unsqueeze(dim))
    perm = list(range(s.sparse_dim()))[::-1] + list(range(s.sparse_dim(), s.dim()))
    assert_sparse_close(d.permute(perm), s.permute(perm))
    assert_sparse_close(torch._sparse_broadcast_to(d, (2, *s.shape)), torch._sparse_broadcast_to(s, (2, *s.shape)))


def test_shape_ops_errors_like_cpu():
    s, h = SAMPLES[0][1], SAMPLES[4][1]
    same_error(lambda a, b: torch.cat([a, b]), s, h)  # different sparse/dense dims
    same_error(lambda a, b: torch.cat([a, b], 1), s, _sparse([[0], [0]], torch.ones(1), (3, 5)))
    same_error(lambda a: a.permute(0, 0), s)
    same_error(lambda a: a.narrow_copy(0, 3, 4), s)
    same_error(lambda a: a.unsqueeze(4), s)


@covers("aten::any", "aten::native_norm", "aten::native_norm.ScalarOpt_dim_dtype", "aten::norm.ScalarOpt_dim_dtype",
        "aten::norm.ScalarOpt_dim", "aten::mv")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_reductions_and_mv(tag, s):
    d = s.to(DEV)
    assert_dense_close(d.any(), s.any())
    assert_dense_close(d.norm(), s.norm())
    assert_dense_close(torch.ops.aten.native_norm(d, 3), torch.ops.aten.native_norm(s, 3))
    assert_dense_close(torch.norm(d, p=1, dim=list(range(s.dim()))), torch.norm(s, p=1, dim=list(range(s.dim()))))
    same_error(lambda t: torch.norm(t, 2, list(range(s.dim())), dtype=torch.float64), s)  # not for sparse
    if s.sparse_dim() == 2 and s.dense_dim() == 0:
        v = torch.randn(s.shape[1])
        assert_dense_close(torch.mv(d, v.to(DEV)), torch.mv(s, v))


@covers("aten::index_select")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_index_select(tag, s):
    d = s.to(DEV)
    for dim in range(s.dim()):
        n = s.shape[dim]
        choices = [[], [n - 1, 0, n - 1]] + ([[1, n - 1, 1, 0]] if n >= 2 else [])
        if dim < s.sparse_dim() and n >= 2:  # negative indices wrap along sparse dims only, as on the CPU
            choices.append([1, -1, 1, 0, -n])
        for idx in choices if n else [[]]:
            index = torch.tensor(idx, dtype=torch.int64)
            got, want = d.index_select(dim, index.to(DEV)), s.index_select(dim, index)
            assert_sparse_close(got, want)
            assert_dense_close(got.to_dense(), want.to_dense())


def test_index_select_errors_like_cpu():
    s, h = SAMPLES[0][1], SAMPLES[4][1]
    same_error(lambda a, i: a.index_select(0, i), s, torch.tensor([4]))  # out of range
    same_error(lambda a, i: a.index_select(1, i), s, torch.tensor([1, -6]))
    same_error(lambda a, i: a.index_select(0, i), s, torch.tensor([1], dtype=torch.int32))  # long only
    same_error(lambda a, i: a.index_select(0, i), s, torch.tensor([[1]]))
    same_error(lambda a, i: a.index_select(1, i), h, torch.tensor([3]))  # a dense dim, out of range
    same_error(lambda a, i: a.index_select(1, i), h, torch.tensor([-1]))  # no wrapping along a dense dim
    with pytest.raises(IndexError, match="contains 4 that is out of range"):
        s.to(DEV).index_select(0, torch.tensor([0, 4], device=DEV))


@covers("aten::_sparse_sum_backward")
@pytest.mark.parametrize("tag, s", SAMPLES, ids=IDS)
def test_sparse_sum_backward(tag, s):
    dims = [[d] for d in range(s.dim())] + ([[0, s.dim() - 1]] if s.dim() >= 2 else []) + [list(range(s.dim()))]
    for dim in dims:
        a, da = s.clone().requires_grad_(), s.to(DEV).requires_grad_()
        ys, dys = torch.sparse.sum(a, dim), torch.sparse.sum(da, dim)
        w = torch.randn(ys.shape, generator=torch.Generator().manual_seed(len(dim)))
        for y, x, dev in ((ys, a, "cpu"), (dys, da, DEV)):
            (y.to_dense() if y.is_sparse else y).mul(w.to(dev)).sum().backward()
        assert_sparse_close(da.grad, a.grad)


def test_sparse_sum_backward_direct():
    s = SAMPLES[3][1]  # 3-D, duplicates
    g = torch.sparse.sum(s, [1]).coalesce() * 3
    f = torch.ops.aten._sparse_sum_backward
    assert_sparse_close(f(g.to(DEV), s.to(DEV), [1]), f(g, s, [1]))
    empty_g = torch.sparse_coo_tensor(torch.empty(2, 0, dtype=torch.int64), torch.empty(0), g.shape)
    assert_sparse_close(f(empty_g.to(DEV), s.to(DEV), [1]), f(empty_g, s, [1]))
    same_error(lambda a, b: f(a, b, [1]), g.to_dense(), s)  # a dense grad when sparse dims remain


def _mm_pairs():
    g = torch.Generator().manual_seed(6)
    a = _sparse([[0, 2, 0, 3, 2], [1, 0, 1, 4, 3]], torch.randn(5, generator=g), (4, 5))
    b = _sparse([[1, 3, 0, 1, 4], [2, 0, 1, 2, 2]], torch.randn(5, generator=g), (5, 3))
    yield "dup", a, b
    yield "coalesced", a.coalesce(), b.coalesce()
    yield "no-meeting", _sparse([[0], [0]], torch.ones(1), (2, 2)), _sparse([[1], [1]], torch.ones(1), (2, 3))
    yield "empty", _sparse([[], []], torch.ones(0), (2, 2)), _sparse([[0], [1]], torch.ones(1), (2, 3))
    yield "zero-size", _sparse([[], []], torch.ones(0), (0, 2)), _sparse([[0], [1]], torch.ones(1), (2, 3))


MM_PAIRS = quietly(_mm_pairs)


@covers("aten::_sparse_sparse_matmul", "aten::mm", "aten::_sparse_mask_projection")
@pytest.mark.parametrize("tag, a, b", MM_PAIRS, ids=[p[0] for p in MM_PAIRS])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sparse_at_sparse(tag, a, b, dtype):
    a, b = a.to(dtype), b.to(dtype)
    got, want = torch.sparse.mm(a.to(DEV), b.to(DEV)), torch.sparse.mm(a, b)
    assert_sparse_close(got, want)
    assert got.is_coalesced() and got._nnz() == want._nnz()
    assert_sparse_close(a.to(DEV) @ b.to(DEV), a @ b)
    if a._nnz() and b._nnz():  # gradients of both sparse inputs (sparse_mask of the products)
        ga, gb = a.clone().requires_grad_(), b.clone().requires_grad_()
        dga, dgb = a.to(DEV).requires_grad_(), b.to(DEV).requires_grad_()
        torch.sparse.mm(ga, gb).to_dense().pow(2).sum().backward()
        torch.sparse.mm(dga, dgb).to_dense().pow(2).sum().backward()
        assert_sparse_close(dga.grad, ga.grad)
        assert_sparse_close(dgb.grad, gb.grad)


def test_sparse_mask_projection():
    t = _sparse([[0, 1, 2, 1]], torch.tensor([10.0, 20.0, 30.0, 5.0]), (4,))
    m = _sparse([[1, 3, 1]], torch.tensor([1.0, 2.0, 3.0]), (4,))
    f = torch.ops.aten._sparse_mask_projection
    for a, b in ((t, m), (m, t), (t.coalesce(), m), (t, m.coalesce()), (t, _sparse([[]], torch.ones(0), (4,)))):
        for acc in (False, True):
            got, want = f(a.to(DEV), b.to(DEV), acc), f(a, b, acc)
            assert_sparse_close(got, want)
            assert got.is_coalesced() == want.is_coalesced()


def test_sparse_at_sparse_errors_like_cpu():
    a, b = MM_PAIRS[0][1], MM_PAIRS[0][2]
    same_error(lambda x, y: torch.sparse.mm(x, y), a, a)  # shapes
    same_error(lambda x, y: torch.sparse.mm(x, y), a.double(), b)  # dtypes
    same_error(lambda x, y: torch.sparse.mm(x, y), a.long(), b.long())  # not for integers, on the CPU either


@covers("aten::bmm", "aten::bmm.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_bmm(dtype):
    g = torch.Generator().manual_seed(7)
    s = _sparse([[0, 1, 1, 0, 1], [2, 0, 0, 1, 2], [1, 3, 3, 0, 2]], torch.randn(5, generator=g), (2, 3, 4), dtype)
    x = torch.randn(2, 4, 3, generator=g).mul(4).to(dtype)
    assert_dense_close(torch.bmm(s.to(DEV), x.to(DEV)), torch.bmm(s, x))
    out = torch.empty(0, dtype=dtype, device=DEV)
    assert_dense_close(torch.bmm(s.to(DEV), x.to(DEV), out=out), torch.bmm(s, x))
    e = _sparse([[], [], []], torch.ones(0), (2, 3, 4), dtype)
    assert_dense_close(torch.bmm(e.to(DEV), x.to(DEV)), torch.bmm(e, x))


def test_bmm_errors_like_cpu():
    s = _sparse([[0], [2], [1]], torch.ones(1), (2, 3, 4))
    same_error(lambda a, b: torch.bmm(a, b), s, torch.ones(2, 3, 3))
    same_error(lambda a, b: torch.bmm(a, b), s, torch.ones(2, 4, 3, dtype=torch.float64))
    same_error(lambda a, b: torch.bmm(a, b), s.bool(), torch.ones(2, 4, 3, dtype=torch.bool))


# ---- printing, serialization ----------------------------------------------------------------------

def test_repr_matches_cpu():
    for tag, s in SAMPLES:
        text = repr(s.to(DEV))
        assert "device='ocl:0'" in text and f"nnz={s._nnz()}" in text, text
        assert text.replace("device='ocl:0', ", "") == repr(s), tag


@pytest.mark.parametrize("weights_only", [True, False])
def test_save_load_round_trip(weights_only):
    for tag, s in SAMPLES:
        buf = io.BytesIO()
        torch.save({"t": s.to(DEV)}, buf)
        buf.seek(0)
        back = torch.load(buf, weights_only=weights_only)["t"]
        assert_sparse_close(back, s)
        assert back.is_coalesced() == s.is_coalesced()
        buf.seek(0)
        on_cpu = torch.load(buf, map_location="cpu", weights_only=weights_only)["t"]
        assert on_cpu.device.type == "cpu" and torch.equal(on_cpu.to_dense(), s.to_dense())


# ---- sparse gradients ------------------------------------------------------------------------------

def _grads(make_module, calls):
    """The weight gradients after running each call (a function of the module) forward and
    backward, accumulated, on the CPU and on ocl."""
    torch.manual_seed(0)
    m = make_module()
    dm = copy.deepcopy(m).to(DEV)
    for call in calls:
        call(m, "cpu").sum().backward()
        call(dm, DEV).sum().backward()
    return dm.weight.grad, m.weight.grad


def _idx(values, device):
    return torch.tensor(values, device=device)


@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_sparse_grad(padding_idx, dtype):
    make = lambda: nn.Embedding(10, 3, sparse=True, padding_idx=padding_idx).to(dtype)  # noqa: E731
    first = lambda m, dev: m(_idx([[1, 2, 1], [3, 3, 9]], dev)) * 1.5  # noqa: E731
    second = lambda m, dev: m(_idx([2, 2, 0], dev).to(torch.int32))  # noqa: E731
    got, want = _grads(make, [first])
    assert_sparse_close(got, want)
    got, want = _grads(make, [first, second])  # accumulation: sparse + sparse into .grad
    assert_sparse_close(got, want)
    w = torch.randn(6, 4, dtype=dtype, requires_grad=True)
    dw = w.detach().to(DEV).requires_grad_()
    F.embedding(_idx([5, 0, 5], "cpu"), w, sparse=True).pow(2).sum().backward()
    F.embedding(_idx([5, 0, 5], DEV), dw, sparse=True).pow(2).sum().backward()
    assert_sparse_close(dw.grad, w.grad)
    if padding_idx is not None:  # every entry dropped: an empty gradient
        got, want = _grads(make, [lambda m, dev: m(_idx([2, 2], dev))])
        assert_sparse_close(got, want)
        assert got._nnz() == 0


@pytest.mark.parametrize("mode, padding_idx, psw, last", [
    ("sum", None, False, False), ("mean", None, False, False), ("sum", 1, False, False), ("mean", 1, False, False),
    ("sum", None, True, False), ("sum", None, False, True), ("mean", None, False, True)])
def test_embedding_bag_sparse_grad(mode, padding_idx, psw, last):
    make = lambda: nn.EmbeddingBag(8, 3, mode=mode, sparse=True, padding_idx=padding_idx,  # noqa: E731
                                   include_last_offset=last)
    w = torch.tensor([0.5, -1.0, 2.0, 1.0, 3.0, 0.25])

    def call(m, dev):
        kw = {"per_sample_weights": w.to(dev)} if psw else {}
        offsets = _idx([0, 2, 2, 6] if last else [0, 2, 2, 5], dev)  # an empty bag
        out = m(_idx([1, 4, 1, 0, 7, 1], dev), offsets, **kw)  # (bags, 3)
        return out * torch.arange(1.0, out.shape[0] + 1, device=dev)[:, None]  # a gradient per bag
    got, want = _grads(make, [call])
    assert_sparse_close(got, want)
    got, want = _grads(make, [call, call])
    assert_sparse_close(got, want)


def test_sparse_embedding_refusals_like_cpu():
    idx = torch.tensor([1, 2])
    for dev in ("cpu", DEV):
        e = nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True).to(dev)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq"):
            e(idx.to(dev)).sum().backward()
        b = nn.EmbeddingBag(5, 2, sparse=True, mode="sum", scale_grad_by_freq=True).to(dev)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq"):
            b(idx.to(dev), torch.tensor([0]).to(dev)).sum().backward()
        with pytest.raises(ValueError, match="max mode"):
            nn.EmbeddingBag(5, 2, sparse=True, mode="max").to(dev)(idx.to(dev), torch.tensor([0]).to(dev))


# ---- optimizers --------------------------------------------------------------------------------------

class SparseModel(nn.Module):
    def __init__(self, dense_head):
        super().__init__()
        self.emb = nn.Embedding(12, 4, sparse=True)
        self.bag = nn.EmbeddingBag(12, 4, mode="mean", sparse=True)
        self.head = nn.Linear(4, 1) if dense_head else None

    def forward(self, x):  # x: (B, 3) token ids
        h = self.emb(x).sum(1) + self.bag(x)  # (B, 4)
        return self.head(h) if self.head is not None else h.sum(1, keepdim=True)


OPTIMIZERS = {
    "sgd": (True, lambda p: torch.optim.SGD(p, lr=0.1)),
    "sgd-momentum": (True, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    "sgd-nesterov": (True, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True)),
    "sgd-dampening-single": (True, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.3, foreach=False)),
    "sgd-maximize": (True, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, maximize=True)),
    "adagrad": (True, lambda p: torch.optim.Adagrad(p, lr=0.1)),
    "adagrad-decay": (True, lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.2)),
    "sparse-adam": (False, lambda p: torch.optim.SparseAdam(p, lr=0.05)),
    "sparse-adam-maximize": (False, lambda p: torch.optim.SparseAdam(p, lr=0.05, betas=(0.8, 0.9), maximize=True)),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("zero_grad", ["none", "zero"])
def test_optimizer_trajectory(name, zero_grad):
    dense_head, make_opt = OPTIMIZERS[name]
    torch.manual_seed(0)
    model = SparseModel(dense_head)
    dmodel = copy.deepcopy(model).to(DEV)
    opt, dopt = make_opt(model.parameters()), make_opt(dmodel.parameters())
    g = torch.Generator().manual_seed(4)
    for step in range(4):
        x = torch.randint(0, 12, (5, 3), generator=g)
        x[0, :2] = x[1, 0]  # repeated rows: uncoalesced gradients
        y = torch.randn(5, 1, generator=g)
        for m, o, dev in ((model, opt, "cpu"), (dmodel, dopt, DEV)):
            if zero_grad == "none":
                m.zero_grad()
            else:
                o.zero_grad(set_to_none=False)
            F.mse_loss(m(x.to(dev)), y.to(dev)).backward()
            o.step()
        for (n, p), dp in zip(model.named_parameters(), dmodel.parameters()):
            torch.testing.assert_close(dp.detach().cpu(), p.detach(), atol=2e-5, rtol=2e-5,
                                       msg=lambda msg: f"step {step}, {n}: {msg}")
    if zero_grad == "zero":
        assert dmodel.emb.weight.grad.is_sparse and dmodel.emb.weight.grad.device.type == DEV


def test_optimizer_refusals_like_cpu():
    for dev in ("cpu", DEV):
        torch.manual_seed(0)
        m = SparseModel(dense_head=False).to(dev)
        m(torch.tensor([[1, 2, 1]], device=dev)).sum().backward()
        for make, exc in ((lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.1), RuntimeError),
                          (lambda p: torch.optim.Adagrad(p, lr=0.1, weight_decay=0.1), RuntimeError),
                          (lambda p: torch.optim.Adam(p, lr=0.1), RuntimeError)):
            with pytest.raises(exc):
                make(m.parameters()).step()
        with pytest.raises(NotImplementedError):  # no norm of a sparse tensor, on the CPU either
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)


# ---- several devices ----------------------------------------------------------------------------------

MULTI_DEVICE = """
    import warnings, torch
    warnings.simplefilter("ignore")
    if torch.ocl.device_count() < 2:
        print("SKIP only", torch.ocl.device_count(), "device")
        raise SystemExit(0)
    s = torch.sparse_coo_tensor(torch.tensor([[0, 1, 0], [1, 0, 1]]), torch.tensor([1., 2., 3.]), (2, 2))
    d = s.to("ocl:1")
    x = torch.ones(2, 2, device="ocl:1")
    made = [d, d.coalesce(), d + d, d * d, d * 2, x + d, x.sparse_mask(d.coalesce()), torch.sparse.mm(d, x),
            torch.zeros(2, 2, layout=torch.sparse_coo, device="ocl:1"), torch.zeros_like(d), x.to_sparse(),
            torch.zeros(2, 2, device="ocl:1").to_sparse(), torch.sparse_coo_tensor([[0]], [1.], (2,), device="ocl:1")]
    m = torch.nn.EmbeddingBag(5, 2, sparse=True).to("ocl:1")
    m(torch.tensor([1, 1, 3], device="ocl:1"), torch.tensor([0], device="ocl:1")).sum().backward()
    torch.optim.SparseAdam(m.parameters()).step()
    made += [m.weight.grad, m.weight]
    print("devices", sorted({str(t.device) for t in made} | {str(t._values().device) for t in made if t.is_sparse}))
    print("values", torch.equal(d.coalesce().cpu().to_dense(), s.to_dense()), "current", torch.ocl.current_device())
"""


def test_sparse_tensors_stay_on_their_device():
    # A new SparseTensorImpl starts on the current device: the registrations must set it.
    out = ok(run_py(MULTI_DEVICE, env={"POCL_DEVICES": "pthread pthread", "TORCH_OCL_DEVICES": ""}))
    if out.startswith("SKIP"):
        pytest.skip(out.strip())
    assert "devices ['ocl:1']" in out and "values True current 0" in out, out


# ---- what is not implemented -------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Sparse BSR tensor support is in beta")  # the CPU's to_sparse_bsr
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_unimplemented_sparse_ops_raise_clearly():
    s = SAMPLES[0][1]
    d = s.to(DEV)
    same_error(lambda t: t.exp(), s)  # no sparse exp on the CPU either
    for name, fn in (("_sparse_softmax", lambda t: torch.sparse.softmax(t, 0)),
                     ("hspmm", lambda t: torch.hspmm(t, torch.ones(5, 2, device=t.device))),
                     ("_to_sparse_bsr", lambda t: t.to_sparse_bsr((2, 1)))):
        fn(s)  # the CPU has these
        with pytest.raises(NotImplementedError, match=name):
            fn(d)
    d.add_(d).cpu()  # the device and the tensor stay usable
