"""Sparse compressed (CSR, CSC) tensors on ocl (csrc/ops/sparse_csr.cpp) against the CPU: creation,
transfers, conversions, metadata, unary math, add, mul, sums, matrix products, printing and the
errors. Tests name the SparseCsrPrivateUse1 (and dense-key) ops they exercise with @covers;
tests/test_coverage.py fails when a registered one has none."""
import pytest
import torch

from .conftest import requires_ocl
from .test_autoload import ok, run_py
from .test_sparse import _all_native  # noqa: F401  (autouse: every op here runs natively)
from .test_sparse import DEV, INVARIANTS_WARNING, assert_dense_close, coverage_registry, quietly, same_error

pytestmark = [requires_ocl, pytest.mark.filterwarnings(f"ignore:{INVARIANTS_WARNING}"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta"),
              pytest.mark.filterwarnings("ignore:Sparse CSC tensor support is in beta")]

COVERED, covers = coverage_registry()


TOL = {torch.float32: (1e-5, 1.3e-5), torch.float64: (1e-7, 1e-7)}


def dense_samples(dtype=torch.float32):
    """(tag, CPU dense matrix): duplicates-free patterns incl. empty rows, all zeros, zero size."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=g, dtype=torch.float64)
    x[x.abs() < 0.7] = 0
    x[2] = 0  # an empty row
    yield "4x5", x.to(dtype)
    yield "zeros", torch.zeros(3, 2, dtype=dtype)
    yield "zero-size", torch.zeros(0, 3, dtype=dtype)
    yield "1x1", torch.tensor([[2.5]], dtype=torch.float64).to(dtype)
    yield "full", torch.arange(1, 7, dtype=torch.float64).reshape(2, 3).to(dtype)


SAMPLES = quietly(dense_samples)
IDS = [t for t, _ in SAMPLES]
LAYOUTS = {"csr": (torch.sparse_csr, lambda t: t.to_sparse_csr()), "csc": (torch.sparse_csc, lambda t: t.to_sparse_csc())}


def assert_compressed_close(actual, expected, tol=None):
    """actual (on ocl) equals expected (CPU): same layout, shape, dtype, indices; values at tolerance."""
    assert actual.device.type == DEV and actual.layout == expected.layout, (actual.device, actual.layout)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if expected.layout == torch.sparse_csr:
        pairs = ((actual.crow_indices(), expected.crow_indices()), (actual.col_indices(), expected.col_indices()))
    else:
        pairs = ((actual.ccol_indices(), expected.ccol_indices()), (actual.row_indices(), expected.row_indices()))
    for a, e in pairs:
        assert a.device.type == DEV and a.dtype == e.dtype and torch.equal(a.cpu(), e), (a, e)
    atol, rtol = tol or TOL.get(expected.dtype, (0, 0))
    torch.testing.assert_close(actual.values().cpu(), expected.values(), atol=atol, rtol=rtol)


# ---- creation, metadata, transfers ---------------------------------------------------------------

@covers("aten::sparse_dim", "aten::dense_dim", "aten::_nnz", "aten::values", "aten::crow_indices",
        "aten::col_indices", "aten::ccol_indices", "aten::row_indices", "aten::_to_dense")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_create_transfer_and_metadata(dtype):
    for tag, x in dense_samples(dtype):
        c = x.to_sparse_csr()
        made = (torch.sparse_csr_tensor(c.crow_indices(), c.col_indices(), c.values(), c.shape, device=DEV),
                torch.sparse_csr_tensor(c.crow_indices().to(DEV), c.col_indices().to(DEV), c.values().to(DEV),
                                        c.shape),
                c.to(DEV))
        for d in made:
            assert_compressed_close(d, c)
            assert (d.sparse_dim(), d.dense_dim(), d._nnz()) == (c.sparse_dim(), c.dense_dim(), c._nnz())
            assert_dense_close(d.to_dense(), x)
            back = d.cpu()
            assert back.layout == torch.sparse_csr and torch.equal(back.to_dense(), x), tag
        k = x.to_sparse_csc()
        d = k.to(DEV)
        assert_compressed_close(d, k)
        assert_dense_close(d.to_dense(), x)
    x = SAMPLES[0][1]
    i32 = torch.sparse_csr_tensor(x.to_sparse_csr().crow_indices().int(), x.to_sparse_csr().col_indices().int(),
                                  x.to_sparse_csr().values(), x.shape)
    assert_compressed_close(i32.to(DEV), i32)  # int32 indices stay int32
    assert_dense_close(i32.to(DEV).to_dense(), x)


def test_hybrid_and_batched_transfer():
    x = torch.zeros(2, 3, 4)
    x[0, 1], x[1, 2] = 1.0, torch.arange(4.0)
    h = x.to_sparse_csr(dense_dim=1)  # (3, 4) values per entry: hybrid
    d = h.to(DEV)
    assert (d.sparse_dim(), d.dense_dim()) == (2, 1)
    assert_compressed_close(d, h)
    assert_dense_close(d.to_dense(), x)
    b = torch.stack([SAMPLES[4][1], SAMPLES[4][1] * 2]).to_sparse_csr()  # batched
    assert_compressed_close(b.to(DEV), b)
    assert torch.equal(b.to(DEV).cpu().to_dense(), b.to_dense())


@covers("aten::_to_sparse_csr", "aten::_to_sparse_csc", "aten::_to_sparse", "aten::_to_sparse.sparse_dim",
        "aten::_convert_indices_from_coo_to_csr", "aten::_convert_indices_from_csr_to_coo")
@pytest.mark.parametrize("tag, x", SAMPLES, ids=IDS)
def test_conversions(tag, x):
    dx = x.to(DEV)
    for name, (layout, to) in LAYOUTS.items():
        assert_compressed_close(to(dx), to(x))
        assert_compressed_close(dx.to_sparse(layout=layout), x.to_sparse(layout=layout))
        assert_compressed_close(to(x.to_sparse().to(DEV)), to(x.to_sparse()))  # COO -> compressed
        d = to(x).to(DEV)
        coo = d.to_sparse()
        assert coo.layout == torch.sparse_coo and coo.device.type == DEV
        assert torch.equal(coo.cpu().to_dense(), x) and torch.equal(d.to_sparse(2).cpu().to_dense(), x)
        for other, (other_layout, to_other) in LAYOUTS.items():  # CSR <-> CSC
            assert_compressed_close(to_other(d), to_other(to(x)))
            assert_compressed_close(d.to_sparse(layout=other_layout), to(x).to_sparse(layout=other_layout))


@covers("aten::_convert_indices_from_coo_to_csr", "aten::_convert_indices_from_coo_to_csr.out",
        "aten::_convert_indices_from_csr_to_coo", "aten::_convert_indices_from_csr_to_coo.out")
def test_index_conversions():
    A = torch.ops.aten
    rows = torch.tensor([0, 0, 2, 2, 2])
    for dt, out_int32 in ((torch.int64, False), (torch.int32, True), (torch.int64, True)):
        want = A._convert_indices_from_coo_to_csr(rows.to(dt), 4, out_int32=out_int32)
        got = A._convert_indices_from_coo_to_csr(rows.to(dt).to(DEV), 4, out_int32=out_int32)
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
        out = torch.empty(0, dtype=want.dtype, device=DEV)
        A._convert_indices_from_coo_to_csr(rows.to(dt).to(DEV), 4, out_int32=out_int32, out=out)
        assert torch.equal(out.cpu(), want)
    crow, col = torch.tensor([0, 2, 2, 5]), torch.tensor([1, 3, 0, 1, 2])
    for transpose in (False, True):
        for out_int32 in (False, True):
            want = A._convert_indices_from_csr_to_coo(crow, col, out_int32=out_int32, transpose=transpose)
            got = A._convert_indices_from_csr_to_coo(crow.to(DEV), col.to(DEV), out_int32=out_int32,
                                                     transpose=transpose)
            assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
    out = torch.empty(0, dtype=torch.int64, device=DEV)
    A._convert_indices_from_csr_to_coo(crow.to(DEV), col.to(DEV), out=out)
    assert torch.equal(out.cpu(), A._convert_indices_from_csr_to_coo(crow, col))
    same_error(lambda r: A._convert_indices_from_coo_to_csr(r, 4), torch.tensor([[0]]))
    same_error(lambda r: A._convert_indices_from_coo_to_csr(r, 4), torch.tensor([0.0]))
    same_error(lambda c, k: A._convert_indices_from_csr_to_coo(c, k), crow[None], col)


@covers("aten::_to_sparse_bsr", "aten::_to_sparse_bsc")
def test_blocked_layouts_unsupported():
    x = SAMPLES[4][1]
    with pytest.raises(NotImplementedError, match="to_sparse.layout=SparseBsr"):
        x.to(DEV).to_sparse(layout=torch.sparse_bsr, blocksize=(1, 1))
    with pytest.raises(NotImplementedError, match="_to_sparse_bsr"):
        x.to_sparse_csr().to(DEV).to_sparse_bsr((1, 1))
    with pytest.raises(NotImplementedError, match="_to_sparse_bsc"):
        x.to(DEV).to_sparse_bsc((1, 1))
    with pytest.raises(NotImplementedError, match="_to_sparse_bsr"):
        x.to(DEV).to_sparse_bsr((1, 1))
    torch.ones(2, device=DEV).add_(1).cpu()  # the device stays usable


@covers("aten::empty.memory_format", "aten::empty_like", "aten::clone", "aten::copy_", "aten::zero_",
        "aten::resize_as_sparse_", "aten::resize_", "aten::fill_.Scalar", "aten::normal_")
def test_empty_clone_copy_fill():
    x = SAMPLES[0][1]
    c, d = x.to_sparse_csr(), x.to_sparse_csr().to(DEV)
    e = torch.empty((3, 4), layout=torch.sparse_csr, device=DEV)
    assert e.layout == torch.sparse_csr and e.shape == (3, 4) and e._nnz() == 0 and e.device.type == DEV
    like = torch.empty_like(d)
    assert like.layout == torch.sparse_csr and like.shape == d.shape and like.device.type == DEV
    assert_compressed_close(d.clone(), c)
    assert d.clone().values().data_ptr() != d.values().data_ptr()
    t = torch.empty_like(d)
    t.copy_(d)
    assert_compressed_close(t, c)
    t.copy_(c)  # from the CPU
    assert_compressed_close(t, c)
    t2, c2 = d.clone(), c.clone()
    assert_compressed_close(t2.zero_(), c2.zero_())
    assert_compressed_close(d.clone().fill_(2.5), c.clone().fill_(2.5))
    r = torch.empty(0, 0, layout=torch.sparse_csr, device=DEV)
    r.resize_as_sparse_(d)
    assert r.shape == d.shape and r._nnz() == d._nnz()
    r2 = torch.empty((2, 2), layout=torch.sparse_csr, device=DEV)
    r2.resize_(4, 4)
    assert r2.shape == (4, 4)
    n = d.clone().normal_()
    assert torch.equal(n.crow_indices().cpu(), c.crow_indices()) and n.values().isfinite().all().item()
    assert not torch.equal(n.values().cpu(), c.values())


def test_repr_matches_cpu():
    for tag, x in SAMPLES:
        for layout, to in LAYOUTS.values():
            text = repr(to(x).to(DEV))
            assert "device='ocl:0'" in text, text
            same = " ".join(text.replace("device='ocl:0', ", "").split()) == " ".join(repr(to(x)).split())
            assert same, tag  # the same up to line wrapping


# ---- math ---------------------------------------------------------------------------------------

UNARY = ["abs", "asin", "atan", "asinh", "atanh", "ceil", "deg2rad", "rad2deg", "erf", "erfinv", "expm1", "floor", "frac", "log1p",
         "neg", "round", "sgn", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]


@covers(*[f"aten::{op}{sfx}" for op in UNARY for sfx in ("", "_", ".out")])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_unary_math(layout):
    to = LAYOUTS[layout][1]
    for tag, x in SAMPLES:
        for op in UNARY:
            y = torch.tanh(x) * 0.9
            y = y.abs() if op in ("sqrt", "log1p") else y
            c = to(y)
            d = c.to(DEV)
            fn = getattr(torch, op)
            assert_compressed_close(fn(d), fn(c))
            if layout == "csr":  # ATen's out= and in-place forms assert a CSR input
                assert_compressed_close(fn(d, out=torch.empty_like(d)), fn(c))
                assert_compressed_close(getattr(d.clone(), op + "_")(), getattr(c.clone(), op + "_")())


@covers("aten::relu", "aten::relu_", "aten::threshold_backward", "aten::threshold_backward.grad_input",
        "aten::signbit", "aten::signbit.out", "aten::isposinf", "aten::isposinf.out", "aten::isneginf",
        "aten::isneginf.out", "aten::isnan", "aten::isinf")
def test_predicates_and_relu():
    x = torch.tensor([[1.0, 0, float("nan")], [-float("inf"), float("inf"), -2.0]])
    c, d = x.to_sparse_csr(), x.to_sparse_csr().to(DEV)
    for fn in (torch.isnan, torch.isinf, torch.isposinf, torch.isneginf, torch.signbit):
        assert_compressed_close(fn(d), fn(c))
    for fn in (torch.isposinf, torch.isneginf, torch.signbit):
        out = torch.empty_like(d, dtype=torch.bool)
        assert_compressed_close(fn(d, out=out), fn(c))
    y = torch.tensor([[1.0, 0, -3.0], [2.0, 0.5, -2.0]]).to_sparse_csr()
    assert_compressed_close(torch.relu(y.to(DEV)), torch.relu(y))
    assert_compressed_close(y.to(DEV).relu_(), y.clone().relu_())
    tb = torch.ops.aten.threshold_backward
    g = y * 3
    assert_compressed_close(tb(g.to(DEV), y.to(DEV), 0.0), tb(g, y, 0.0))
    assert_compressed_close(tb(g.to(DEV), y.to(DEV), 0.0, grad_input=torch.empty_like(y.to(DEV))), tb(g, y, 0.0))


@covers("aten::add.Tensor", "aten::add_.Tensor", "aten::add.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("layout", ["csr"])
def test_add(dtype, layout):
    to = LAYOUTS[layout][1]
    g = torch.Generator().manual_seed(1)
    for tag, x in dense_samples(dtype):
        y = torch.randn(x.shape, generator=g, dtype=torch.float64).to(dtype)
        y[y.abs() < 0.8] = 0
        a, b = to(x), to(y)
        da, db = a.to(DEV), b.to(DEV)
        assert_compressed_close(da + db, a + b)
        assert_compressed_close(torch.add(da, db, alpha=-2.5), torch.add(a, b, alpha=-2.5))
        assert_dense_close(y.to(DEV) + da, y + a)
        assert_dense_close(torch.add(y.to(DEV), da, alpha=3), torch.add(y, a, alpha=3))
        assert_dense_close(da + y.to(DEV), a + y)
        c, dc = a.clone(), da.clone()
        c.add_(b)
        dc.add_(db)
        assert_compressed_close(dc, c)
        z, dz = y.clone(), y.to(DEV)
        z.add_(a)
        dz.add_(da)
        assert_dense_close(dz, z)


def test_add_errors_like_cpu():
    a = SAMPLES[0][1].to_sparse_csr()
    same_error(lambda p, q: p + q, a, SAMPLES[4][1].to_sparse_csr())  # sizes
    same_error(lambda p, q: p + q, a.int(), a.int())  # no integer compressed + compressed on the CPU either


@covers("aten::mul.Tensor", "aten::mul_.Tensor", "aten::mul.out", "aten::mul.Scalar", "aten::mul_.Scalar")
@pytest.mark.parametrize("tag, x", SAMPLES, ids=IDS)
def test_mul(tag, x):
    c = x.to_sparse_csr()
    d = c.to(DEV)
    assert_compressed_close(d * 2.5, c * 2.5)
    assert_compressed_close(torch.ops.aten.mul.Scalar(d, 3), torch.ops.aten.mul.Scalar(c, 3))
    assert_compressed_close(torch.ops.aten.mul_.Scalar(d.clone(), 3), torch.ops.aten.mul_.Scalar(c.clone(), 3))
    assert_compressed_close(d * torch.tensor(-2.0, device=DEV), c * torch.tensor(-2.0))
    assert_compressed_close(d.clone().mul_(4), c.clone().mul_(4))
    assert_dense_close((d * d).to_dense(), (c * c).to_dense())
    out = torch.empty_like(d)
    assert_dense_close(torch.mul(d, d, out=out).to_dense(), (c * c).to_dense())


@covers("aten::sum")
@pytest.mark.parametrize("tag, x", SAMPLES, ids=IDS)
def test_sum(tag, x):
    for layout, to in LAYOUTS.values():
        assert_dense_close(to(x).to(DEV).sum(), to(x).sum())
    assert_dense_close(x.long().to_sparse_csr().to(DEV).sum(), x.long().to_sparse_csr().sum())


@covers("aten::mm", "aten::addmm", "aten::addmm.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("layout", ["csr"])
def test_mm_addmm(dtype, layout):
    to = LAYOUTS[layout][1]
    g = torch.Generator().manual_seed(3)
    for tag, x in dense_samples(dtype):
        a = to(x)
        da = a.to(DEV)
        m = torch.randn(x.shape[1], 3, generator=g, dtype=dtype)
        t = torch.randn(x.shape[0], 3, generator=g, dtype=dtype)
        assert_dense_close(da @ m.to(DEV), a @ m)
        assert_dense_close(torch.mm(da, m.to(DEV)), torch.mm(a, m))
        out = torch.empty(0, dtype=dtype, device=DEV)
        assert_dense_close(torch.addmm(t.to(DEV), da, m.to(DEV), beta=0.5, alpha=-2),
                           torch.addmm(t, a, m, beta=0.5, alpha=-2))
        assert_dense_close(torch.addmm(t[:1].to(DEV), da, m.to(DEV)), torch.addmm(t[:1], a, m))  # self broadcasts
        assert_dense_close(torch.addmm(t.to(DEV), da, m.to(DEV), out=out), torch.addmm(t, a, m))
        nan = torch.full_like(t, float("nan"))  # beta=0 ignores self
        assert_dense_close(torch.addmm(nan.to(DEV), da, m.to(DEV), beta=0), torch.addmm(nan, a, m, beta=0))


def assert_same_entries(actual, expected):
    """actual (on ocl) has expected's (CPU) entries, explicit zeros included, in any order within a
    row: the CPU's CSR @ CSR (MKL) leaves the column indices of a row unsorted, ocl sorts them."""
    assert actual.device.type == DEV and actual.layout == expected.layout
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    compressed = torch.Tensor.crow_indices if expected.layout == torch.sparse_csr else torch.Tensor.ccol_indices
    assert torch.equal(compressed(actual).cpu(), compressed(expected))
    def entries(t):  # a fresh COO tensor is uncoalesced, so coalesce() sorts it
        c = t.to_sparse()
        return torch.sparse_coo_tensor(c._indices(), c._values(), c.shape).coalesce()
    a, e = entries(actual.cpu()), entries(expected)
    assert torch.equal(a.indices(), e.indices()), (a.indices(), e.indices())
    torch.testing.assert_close(a.values(), e.values(), atol=TOL[e.dtype][0], rtol=TOL[e.dtype][1])


def sparse_right(x, cols, seed, dtype):
    """A CPU dense (x.shape[1], cols) matrix with zeros, whose products with x cancel in places."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(x.shape[1], cols, generator=g, dtype=torch.float64)
    y[y.abs() < 0.6] = 0
    if x.shape[1] > 1 and cols > 1:
        y[-1] = 0  # an empty row
    return y.to(dtype)


@covers("aten::mm", "aten::addmm", "aten::addmm.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sparse_at_sparse(dtype):
    g = torch.Generator().manual_seed(5)
    for tag, x in dense_samples(dtype):
        y = sparse_right(x, 4, 7, dtype)
        for (l1, to1), (l2, to2) in ((LAYOUTS["csr"], LAYOUTS["csr"]), (LAYOUTS["csr"], LAYOUTS["csc"]),
                                     (LAYOUTS["csc"], LAYOUTS["csc"]), (LAYOUTS["csc"], LAYOUTS["csr"])):
            a, b = to1(x), to2(y)
            da, db = a.to(DEV), b.to(DEV)
            want = a @ b
            assert want.layout == torch.sparse_csr
            assert_same_entries(da @ db, want)  # entries that cancel to 0 stay, as on the CPU
            if (l1, l2) != (torch.sparse_csr, torch.sparse_csc):  # the CPU refuses that one
                got = torch.sparse.mm(da, db)  # (the CPU's CSC @ CSC here has no entries: wrong, so
                assert got.layout == torch.sparse.mm(a, b).layout  # compare with the dense product)
                assert_dense_close(got.to_dense(), x.double().mm(y.double()).to(dtype))
        a, b = x.to_sparse_csr(), y.to_sparse_csr()
        da, db = a.to(DEV), b.to(DEV)
        t = torch.randn(x.shape[0], 4, generator=g, dtype=torch.float64).to(dtype)
        t[t.abs() < 1] = 0
        st = t.to_sparse_csr()  # entries where the product has none, too
        for beta, alpha in ((1, 1), (0.5, -2), (0, 3)):
            assert_same_entries(torch.addmm(st.to(DEV), da, db, beta=beta, alpha=alpha),
                                torch.addmm(st, a, b, beta=beta, alpha=alpha))
            got = torch.addmm(t.to(DEV), da, db, beta=beta, alpha=alpha)  # dense self: dense result
            assert got.layout == torch.strided
            assert_dense_close(got, torch.addmm(t, a, b, beta=beta, alpha=alpha))
        empty = torch.zeros(x.shape[0], x.shape[1], dtype=dtype).to_sparse_csr()
        for beta in (0, 2):  # a factor without entries: beta * self (nothing when beta is 0)
            assert_same_entries(torch.addmm(st.to(DEV), empty.to(DEV), db, beta=beta),
                                torch.addmm(st, empty, b, beta=beta))


@covers("aten::mm", "aten::addmm", "aten::addmm.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dense_at_sparse_and_csc_at_dense(dtype):
    g = torch.Generator().manual_seed(9)
    for tag, x in dense_samples(dtype):
        for layout, (_, to) in LAYOUTS.items():
            a = to(x)
            da = a.to(DEV)
            left = torch.randn(x.shape[0], 3, generator=g, dtype=dtype).t()  # non-contiguous (3, rows)
            right = torch.randn(3, x.shape[1], generator=g, dtype=dtype).t()  # non-contiguous (cols, 3)
            for got, want in ((left.to(DEV) @ da, left @ a), (da @ right.to(DEV), a @ right),
                              (left.contiguous().to(DEV) @ da, left.contiguous() @ a)):
                assert got.layout == torch.strided and got.is_contiguous()
                assert_dense_close(got, want)
            t = torch.randn(3, x.shape[1], generator=g, dtype=dtype)
            assert_dense_close(torch.addmm(t.to(DEV), left.to(DEV), da, beta=0.5, alpha=2),
                               torch.addmm(t, left, a, beta=0.5, alpha=2))
            assert_dense_close(torch.addmm(t[:1].to(DEV), left.to(DEV), da), torch.addmm(t[:1], left, a))
            out = torch.empty(0, dtype=dtype, device=DEV)
            torch.addmm(t.to(DEV), left.to(DEV), da, out=out)
            assert_dense_close(out, torch.addmm(t, left, a))


def test_product_gradients():
    """CSR @ CSR (through a CSC transpose and its conversion back: to_sparse(layout=) in backward),
    dense @ CSR and CSR * dense: the gradients match the CPU's (the CPU has none for the dense
    factor of CSR * dense: autograd refuses the CSR gradient it gets there)."""
    x = SAMPLES[0][1]  # (4, 5)
    g = torch.Generator().manual_seed(2)
    cases = (("csr@csr", None, lambda a, d: (a @ a.t().to_sparse_csr()).to_dense().pow(2).sum()),
             ("dense@csr", torch.randn(3, 4, generator=g), lambda a, d: (d @ a).pow(2).sum()),
             ("csr*dense", torch.randn(4, 5, generator=g), lambda a, d: (a * d.detach()).to_dense().pow(2).sum()))
    for name, dense, loss in cases:
        grads = []
        for dev in ("cpu", DEV):
            a = x.to_sparse_csr().to(dev).requires_grad_()
            d = None if dense is None else dense.clone().to(dev).requires_grad_()  # a leaf on both
            loss(a, d).backward()
            grads.append([a.grad] + ([] if d is None or d.grad is None else [d.grad]))
        assert len(grads[1]) == len(grads[0]) == (2 if name == "dense@csr" else 1), name
        for got, want in zip(grads[1], grads[0]):
            assert got is not None and got.layout == want.layout, name
            assert_dense_close(got.to_dense(), want.to_dense())


def test_mm_errors_like_cpu():
    a = SAMPLES[0][1].to_sparse_csr()
    same_error(lambda p, q: p @ q, a, torch.ones(4, 2))  # inner sizes
    same_error(lambda p, q: p @ q, a, torch.ones(5, 2, dtype=torch.float64))  # dtypes
    same_error(lambda p, q: p @ q, a.long(), torch.ones(5, 2, dtype=torch.int64))  # not for integers on the CPU
    same_error(lambda p, q: p @ q, a, a)  # inner sizes, sparse @ sparse
    same_error(lambda p, q: p @ q, a, a.t().double().to_sparse_csr())  # dtypes
    same_error(lambda p, q: p @ q, a.long(), a.t().long().to_sparse_csr())  # integers
    same_error(lambda p, q: p @ q, torch.ones(2, 3), a)  # dense @ sparse, inner sizes
    same_error(lambda s, p, q: torch.addmm(s, p, q), a, a, torch.ones(5, 5))  # CSR self with a dense factor
    same_error(lambda p, q: p @ q, a, a.t().to_sparse())  # CSR @ COO
    same_error(lambda p, q: p @ q, a.t().to_sparse(), a)  # COO @ CSR
    torch.ones(2, device=DEV).add_(1).cpu()


@covers("aten::sparse_mask", "aten::mul.Tensor", "aten::mul_.Tensor", "aten::mul.out")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mul_dense_and_sparse_mask(dtype):
    g = torch.Generator().manual_seed(11)
    for tag, x in dense_samples(dtype):
        c = x.to_sparse_csr()
        d = c.to(DEV)
        y = torch.randn(x.shape[1], x.shape[0], generator=g, dtype=dtype).t()  # non-contiguous
        assert_compressed_close(d * y.to(DEV), c * y)
        assert_compressed_close(y.to(DEV) * d, y * c)
        assert_compressed_close(d.clone().mul_(y.to(DEV)), c.clone().mul_(y))
        assert_compressed_close(d * y.double().to(DEV), c * y.double())  # promotes
        assert_compressed_close(y.to(DEV).sparse_mask(d), y.sparse_mask(c))
        k = x.to_sparse_csc()
        assert_compressed_close(y.to(DEV).sparse_mask(k.to(DEV)), y.sparse_mask(k))  # in CSC order
        other = (x * 2 + 1).to_sparse_csr()  # a sparse self: its values where the mask has entries
        assert_compressed_close(other.to(DEV).sparse_mask(d), other.sparse_mask(c))
    x = torch.randn(4, 3, 2, generator=g, dtype=dtype)  # hybrid: (2,) values per entry
    x[x[..., 0].abs() < 0.5] = 0
    y = torch.randn(3, 4, 2, generator=g, dtype=dtype).transpose(0, 1)  # non-contiguous
    for to in (lambda t: t.to_sparse_csr(dense_dim=1), lambda t: t.to_sparse_csc(dense_dim=1)):
        m = to(x)
        assert_compressed_close(y.to(DEV).sparse_mask(m.to(DEV)), y.sparse_mask(m))
    m = x.to_sparse_csr(dense_dim=1)
    assert_compressed_close((y * 2).to_sparse_csr(dense_dim=1).to(DEV).sparse_mask(m.to(DEV)),
                            (y * 2).to_sparse_csr(dense_dim=1).sparse_mask(m))
    assert_dense_close((m.to(DEV) * y.to(DEV)).to_dense(), (m * y).to_dense())
    c = SAMPLES[0][1].to_sparse_csr()
    same_error(lambda p, q: p * q, c, torch.ones(1, 5))  # no broadcasting, on the CPU either
    same_error(lambda p, q: p.sparse_mask(q), torch.ones(4, 4), c)


@covers("aten::sum.dim_IntList", "aten::_sparse_csr_sum.dim_dtype")
@pytest.mark.parametrize("tag, x", SAMPLES, ids=IDS)
def test_sum_dim(tag, x):
    y = x.clone()
    if y.numel():
        y[0, 0], y[-1, -1] = 1.5, -1.5  # a column that sums to zero keeps its entry
    for src in (y, y.double(), y.int(), y.long()):
        c = src.to_sparse_csr()
        d = c.to(DEV)
        for dims in ((0,), (1,), (-1,)):
            assert_compressed_close(d.sum(dims, keepdim=True), c.sum(dims, keepdim=True))
        got, want = d.sum((0, 1), keepdim=True), src.sum((0, 1), keepdim=True)  # (the CPU's CSR result has
        assert got.layout == torch.sparse_csr and got.dtype == want.dtype       # 0-D values when nnz is 0)
        assert_dense_close(got.to_dense(), want)
        assert_compressed_close(torch.sum(d, (0,), keepdim=True, dtype=torch.float64),
                                torch.sum(c, (0,), keepdim=True, dtype=torch.float64))
        assert_compressed_close(torch.sum(d, (1,), keepdim=True, dtype=torch.int32),  # int64, as on the CPU
                                torch.sum(c, (1,), keepdim=True, dtype=torch.int32))
        if c._nnz():  # no dims: all of them
            assert_compressed_close(d.sum((), keepdim=True), c.sum((), keepdim=True))
    c = y.to_sparse_csr()
    c32 = torch.sparse_csr_tensor(c.crow_indices().int(), c.col_indices().int(), c.values(), c.shape)
    assert_compressed_close(c32.to(DEV).sum(1, keepdim=True), c32.sum(1, keepdim=True))  # int32 indices stay
    same_error(lambda t: t.sum(0), c)  # keepdim=False: not on the CPU either
    same_error(lambda t: t.sum(0, keepdim=True), c.bool())
    same_error(lambda t: t.sum(0, keepdim=True), y.to_sparse_csc())  # only CSR
    same_error(lambda t: t.sum(2, keepdim=True), c)


@covers("aten::select.int")
@pytest.mark.parametrize("tag, x", SAMPLES, ids=IDS)
def test_select(tag, x):
    """ATen's select: a row of CSR (a column of CSC) is a view of the values; across the other dim it
    is one only when the entries it picks are evenly spaced, else select raises, on the CPU too."""
    for layout, (_, to) in LAYOUTS.items():
        c = to(x)
        d = c.to(DEV)
        for dim in (0, 1, -1):
            for i in sorted({0, x.shape[dim] - 1, -1}):
                try:
                    want = c.select(dim, i)
                except (RuntimeError, IndexError):
                    same_error(lambda t: t.select(dim, i), c)
                    continue
                got = d.select(dim, i)
                assert got.layout == want.layout and got.device.type == DEV
                assert torch.equal(got.cpu().to_dense(), want.to_dense())
        if x.shape[0]:
            same_error(lambda t: t.select(0, x.shape[0]), c)
    if x.shape[0]:
        assert torch.equal(x.to_sparse_csr().to(DEV)[0].cpu().to_dense(), x[0])


MULTI_DEVICE = """
    import warnings, torch
    warnings.simplefilter("ignore")
    if torch.ocl.device_count() < 2:
        print("SKIP only", torch.ocl.device_count(), "device")
        raise SystemExit(0)
    x = torch.tensor([[1., 0., 2.], [0., 0., 3.]])
    dev = "ocl:1"
    c = x.to_sparse_csr().to(dev)
    m = torch.ones(3, 2, device=dev)
    made = [c, x.to(dev).to_sparse_csr(), x.to(dev).to_sparse_csc(), c + c, c * 2, c.abs(), c @ m, c.to_sparse(),
            x.to_sparse().to(dev).to_sparse_csr(), torch.empty((2, 2), layout=torch.sparse_csr, device=dev),
            torch.sparse_csr_tensor([0, 1], [0], [1.], (1, 1), device=dev), c.to_dense(), c.clone(),
            c @ c.t().to_sparse_csr(), torch.ones(2, 2, device=dev) @ c, c.to_sparse_csc() @ m, c * x.to(dev), c.sum(0, keepdim=True), c[1],
            x.to(dev).sparse_mask(c)]
    devs = {str(t.device) for t in made} | {str(t.values().device) for t in made if t.layout != torch.strided
                                            and t.layout != torch.sparse_coo}
    print("devices", sorted(devs))
    print("values", torch.equal(c.to_dense().cpu(), x), "current", torch.ocl.current_device())
"""


def test_compressed_tensors_stay_on_their_device():
    out = ok(run_py(MULTI_DEVICE, env={"POCL_DEVICES": "pthread pthread", "TORCH_OCL_DEVICES": ""}))
    if out.startswith("SKIP"):
        pytest.skip(out.strip())
    assert "devices ['ocl:1']" in out and "values True current 0" in out, out
