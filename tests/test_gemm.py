"""Matrix-product behaviour the op cases cannot see (csrc/ops/gemm.cpp): fused epilogues
(linear and addmm are one kernel launch, the bias added in the GEMM's store) and
transposed operands read in place (no copy kernels)."""
import torch
import torch.nn.functional as F

from .conftest import requires_ocl

pytestmark = requires_ocl


def _launches(fn):
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    out = fn()
    torch.ocl.synchronize()
    return out, torch.ocl._launch_counts()


def test_linear_with_bias_is_one_launch():
    x, w, b = torch.randn(2, 9, 24), torch.randn(13, 24), torch.randn(13)
    xd, wd, bd = x.to("ocl"), w.to("ocl"), b.to("ocl")
    out, counts = _launches(lambda: F.linear(xd, wd, bd))
    gemm = {k: v for k, v in counts.items() if k.startswith(("gemm", "gemv"))}
    assert sum(counts.values()) == 1 and sum(gemm.values()) == 1, counts
    torch.testing.assert_close(out.cpu(), F.linear(x, w, b), atol=1e-5, rtol=1e-5)


def test_transposed_operands_are_not_copied():
    a, b, c = torch.randn(20, 17), torch.randn(23, 20), torch.randn(23, 17)
    ad, bd, cd = a.to("ocl"), b.to("ocl"), c.to("ocl")
    out, counts = _launches(lambda: torch.addmm(cd, bd.t().t(), ad, beta=0.5, alpha=2.0))
    assert sum(counts.values()) == 1, counts
    out, counts = _launches(lambda: torch.addmm(cd.t(), ad.t(), bd.t(), beta=0.5, alpha=2.0))
    assert sum(counts.values()) == 1, counts
    torch.testing.assert_close(out.cpu(), torch.addmm(c.t(), a.t(), b.t(), beta=0.5, alpha=2.0), atol=1e-5, rtol=1e-5)


def test_matrix_vector_products_use_gemv():
    w, x = torch.randn(40, 33), torch.randn(33)
    wd, xd = w.to("ocl"), x.to("ocl")
    out, counts = _launches(lambda: torch.mv(wd, xd))
    assert set(counts) <= {"gemv_rows_fwd", "gemv_cols_fwd"} and sum(counts.values()) == 1, counts
    torch.testing.assert_close(out.cpu(), w @ x, atol=1e-5, rtol=1e-5)
    out, counts = _launches(lambda: xd @ wd.t())  # a row times a transposed matrix (M == 1)
    assert set(counts) <= {"gemv_rows_fwd", "gemv_cols_fwd"}, counts
    torch.testing.assert_close(out.cpu(), x @ w.t(), atol=1e-5, rtol=1e-5)
