"""float32 products on tensor cores (kernels/gemm_mma.cl) under PyTorch's "high" matmul
precision. On NVIDIA sm_80+ the tests run the PTX kernels; elsewhere (PoCL) the same kernels
with MMA=emu, which computes each lane's C fragment from the local tiles with float FMAs: the
staging, the tf32 rounding, the fragment-to-output layout and the epilogue are all exercised.

Under "high" every operand is rounded to tf32 (10 explicit mantissa bits, nearest, ties away)
and the products are accumulated in float32, so the reference is the float64 product of the
rounded operands; under "highest" (the default) nothing is rounded."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from torch_ocl import _C

from .conftest import requires_ocl
from .test_gemm import _launches

pytestmark = requires_ocl

KEYS = ("gemm/float32/small", "gemm/float32/large")


def _native_mma():
    return "MMA=ptx" in _C._gemm_config(0, torch.float32, 1, 256, 256)


@pytest.fixture
def mma(request):
    """Tensor-core products under "high" precision: the PTX kernels where the device has them,
    else the emulation. The parameter (a config string) is added to both shape classes."""
    extra = getattr(request, "param", "")
    items = ("" if _native_mma() else "MMA=emu ") + extra
    for k in KEYS:
        _C._tuning_set(0, k, items.strip())
    torch.set_float32_matmul_precision("high")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision("highest")
        for k in KEYS:
            _C._tuning_set(0, k, "")


def _mma_launches(counts):
    return sum(v for k, v in counts.items() if k.startswith("gemm_mma_"))


def tf32(x):
    """x rounded to tf32 (cvt.rna.tf32.f32), as float32."""
    u = x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    special = (u & 0x7F800000) == 0x7F800000
    r = torch.where(special, u, (u + 0x1000) & 0xFFFFE000)
    return torch.where(r >= 2**31, r - 2**32, r).to(torch.int32).view(torch.float32).view(x.shape)


def _rel_err(out, ref):
    return ((out.double() - ref).abs().max() / ref.abs().max().clamp_min(1.0)).item()


def _operand(rows, cols, transposed):
    return torch.randn(cols, rows).t() if transposed else torch.randn(rows, cols)


# M, N, K: whole tiles, partial tiles, K not a multiple of the 16-deep step, K < 8, long K.
SHAPES = [(64, 64, 16), (128, 256, 32), (132, 68, 36), (200, 72, 4), (72, 136, 300)]


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)],
                         ids=["rr", "kr", "rk", "kk"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tf32_product_layouts(mma, shape, ta, tb):
    M, N, K = shape
    # ta: A stored K x M (its rows contiguous), else M x K (k-contiguous); likewise tb for B.
    a, b = _operand(M, K, ta), _operand(K, N, tb)
    out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
    assert _mma_launches(counts) == 1, counts
    ref = tf32(a).double() @ tf32(b).double()
    assert _rel_err(out.cpu(), ref) < 2e-6
    # and the rounding did happen: plain float32 operands give a visibly different product
    assert _rel_err(out.cpu(), a.double() @ b.double()) > 1e-5


def test_tf32_epilogue_bias_alpha_beta_and_strided_out(mma):
    M, N, K = 100, 96, 48
    a, b, bias = torch.randn(M, K), torch.randn(K, N), torch.randn(N)
    ref = tf32(a).double() @ tf32(b).double()
    ad, bd = a.to("ocl"), b.to("ocl")
    # nn.Linear's bias: C broadcast along rows (row stride 0), float2 stores
    out, counts = _launches(lambda: torch.addmm(bias.to("ocl"), ad, bd, beta=0.5, alpha=2.0))
    assert _mma_launches(counts) == 1, counts
    assert _rel_err(out.cpu(), 2.0 * ref + 0.5 * bias.double()) < 2e-6
    # a full C and a transposed out (column stride M: element stores)
    c = torch.randn(M, N)
    out_t = torch.empty(N, M, device="ocl")
    _, counts = _launches(lambda: torch.addmm(c.to("ocl"), ad, bd, beta=-1.0, out=out_t.t()))
    assert _mma_launches(counts) == 1, counts
    assert _rel_err(out_t.t().cpu(), ref - c.double()) < 2e-6
    # an out whose rows are not 4-aligned (row stride 99): element stores along the rows
    big = torch.zeros(M, 99, device="ocl")
    torch.mm(ad, bd, out=big[:, 1:97])
    assert _rel_err(big[:, 1:97].cpu(), ref) < 2e-6
    assert big[:, 0].abs().sum().item() == 0 and big[:, 97:].abs().sum().item() == 0


def test_tf32_batched_and_broadcast_batches(mma):
    a, b = torch.randn(3, 40, 24), torch.randn(24, 56)
    out, counts = _launches(lambda: torch.matmul(a.to("ocl"), b.to("ocl")))  # b broadcast over the batch
    assert _mma_launches(counts) >= 1, counts
    assert _rel_err(out.cpu(), tf32(a).double() @ tf32(b).double()) < 2e-6
    x, y = torch.randn(4, 36, 20), torch.randn(4, 36, 44)
    out, counts = _launches(lambda: torch.bmm(x.to("ocl").transpose(1, 2), y.to("ocl")))
    assert _mma_launches(counts) == 1, counts
    assert _rel_err(out.cpu(), tf32(x).double().transpose(1, 2) @ tf32(y).double()) < 2e-6


def test_tf32_special_values_and_empty_depth(mma):
    a, b = torch.randn(64, 32), torch.randn(32, 64)
    a[3, 5], a[7, 0], b[2, 9] = float("inf"), float("nan"), -float("inf")
    out = (a.to("ocl") @ b.to("ocl")).cpu()
    ref = tf32(a) @ tf32(b)  # float32 on the CPU: the same non-finite pattern
    assert torch.equal(out.isnan(), ref.isnan()) and torch.equal(out.isinf(), ref.isinf())
    assert torch.equal(out[out.isinf()].sign(), ref[ref.isinf()].sign())
    # K == 0: out = beta * C
    c = torch.randn(8, 12)
    out = torch.addmm(c.to("ocl"), torch.empty(8, 0, device="ocl"), torch.empty(0, 12, device="ocl"), beta=3.0)
    torch.testing.assert_close(out.cpu(), 3.0 * c)


def test_unaligned_layouts_fall_back_to_the_float32_kernels(mma):
    a, b = torch.randn(30, 18), torch.randn(18, 22)  # K and N not multiples of 4
    out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
    assert _mma_launches(counts) == 0, counts
    torch.testing.assert_close(out.cpu(), a @ b, atol=1e-5, rtol=1e-5)


def test_highest_precision_never_rounds():
    a, b = torch.randn(128, 64), torch.randn(64, 128)
    for k in KEYS:
        _C._tuning_set(0, k, "" if _native_mma() else "MMA=emu")
    try:
        out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
    finally:
        for k in KEYS:
            _C._tuning_set(0, k, "")
    assert _mma_launches(counts) == 0, counts
    assert _rel_err(out.cpu(), a.double() @ b.double()) < 2e-6


def _reset_precision():
    for backend in (torch.backends.cuda.matmul, torch.backends.mkldnn.matmul, torch.backends):
        backend.fp32_precision = "none"
    torch.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("api", ["generic", "cuda_matmul", "medium"])
def test_precision_apis(api):
    """torch.backends.fp32_precision, the per-backend matmul setting cuBLAS follows, and the
    legacy "medium" all allow TF32."""
    a, b = torch.randn(64, 32), torch.randn(32, 64)
    for k in KEYS:
        _C._tuning_set(0, k, "" if _native_mma() else "MMA=emu")
    for backend in (torch.backends.cuda.matmul, torch.backends.mkldnn.matmul, torch.backends):
        backend.fp32_precision = "none"
    try:
        if api == "generic":
            torch.backends.fp32_precision = "tf32"
        elif api == "cuda_matmul":
            torch.backends.cuda.matmul.fp32_precision = "tf32"
        else:
            torch.set_float32_matmul_precision("medium")
        _, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
        assert _mma_launches(counts) == 1, counts
    finally:
        _reset_precision()
        for k in KEYS:
            _C._tuning_set(0, k, "")
    assert torch.get_float32_matmul_precision() == "highest"
    _, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
    assert _mma_launches(counts) == 0, counts


@pytest.mark.parametrize("mma", ["MMA_PASSES=3"], indirect=True)
def test_3xtf32_is_near_float32(mma):
    a, b = torch.randn(132, 36), torch.randn(36, 64)
    out, counts = _launches(lambda: torch.mm(a.to("ocl"), b.to("ocl")))
    assert _mma_launches(counts) == 1, counts
    assert _rel_err(out.cpu(), a.double() @ b.double()) < 2e-6


@pytest.mark.parametrize("mma", ["MMA_TILE_M=64 MMA_TILE_N=128 MMA_WARPS_M=2 MMA_WARPS_N=2",
                                 "MMA_TILE_M=32 MMA_TILE_N=32 MMA_WARPS_M=1 MMA_WARPS_N=2"], indirect=True)
def test_other_tiles(mma):
    for ta, tb in [(False, False), (True, False), (False, True), (True, True)]:
        a, b = _operand(100, 40, ta), _operand(40, 72, tb)
        out, counts = _launches(lambda: a.to("ocl") @ b.to("ocl"))
        assert _mma_launches(counts) == 1, counts
        assert _rel_err(out.cpu(), tf32(a).double() @ tf32(b).double()) < 2e-6


def test_linear_training_step_under_tf32(mma):
    torch.manual_seed(0)
    lin = torch.nn.Linear(48, 40)
    x = torch.randn(3, 20, 48, requires_grad=True)
    lin_d = torch.nn.Linear(48, 40).to("ocl")
    lin_d.load_state_dict(lin.state_dict())
    xd = x.detach().to("ocl").requires_grad_()
    torch.ocl._reset_launch_counts()
    F.gelu(lin_d(xd)).square().sum().backward()
    torch.ocl.synchronize()
    assert _mma_launches(torch.ocl._launch_counts()) == 3  # forward, dX, dW
    F.gelu(lin(x)).square().sum().backward()
    # tf32 operands: ~1e-3 relative per product
    tol = dict(rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, **tol)
    torch.testing.assert_close(lin_d.weight.grad.cpu(), lin.weight.grad, **tol)
    torch.testing.assert_close(lin_d.bias.grad.cpu(), lin.bias.grad, **tol)


@pytest.mark.parametrize("setting,message", [("MMA=emu MMA_TILE_M=100", "MMA_TILE_M must be a multiple of 16"),
                                             ("MMA=ptx", "MMA=ptx needs an NVIDIA GPU")], ids=["tile", "ptx"])
def test_bad_mma_settings_are_rejected_with_a_warning(setting, message):
    if setting == "MMA=ptx" and _native_mma():
        pytest.skip("the device runs MMA=ptx")
    default = _C._gemm_config(0, torch.float32, 1, 256, 256)
    for k in KEYS:  # 256x256 is the small class on a GPU, the large one on a 2-core CPU
        _C._tuning_set(0, k, setting)
    a = torch.randn(256, 256)
    try:
        with pytest.warns(UserWarning, match=message):
            out = a.to("ocl") @ a.to("ocl")
        torch.testing.assert_close(out.cpu(), a @ a, atol=1e-4, rtol=1e-5)
        assert _C._gemm_config(0, torch.float32, 1, 256, 256) == default
    finally:
        for k in KEYS:
            _C._tuning_set(0, k, "")


SPLIT_SCRIPT = r"""
import torch
torch.set_float32_matmul_precision("high")
torch.ocl._reset_launch_counts()
a, b = torch.randn(72, 640), torch.randn(640, 40)
out = (a.to("ocl") @ b.to("ocl")).cpu()
counts = torch.ocl._launch_counts()
assert "gemm_splitk_reduce" in counts and sum(v for k, v in counts.items() if k.startswith("gemm_mma_")) >= 1, counts
def tf32(x):
    u = x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    r = torch.where((u & 0x7F800000) == 0x7F800000, u, (u + 0x1000) & 0xFFFFE000)
    return torch.where(r >= 2**31, r - 2**32, r).to(torch.int32).view(torch.float32).view(x.shape)
ref = tf32(a).double() @ tf32(b).double()
err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
assert err < 2e-6, err
print("ok")
"""


def test_split_k_slices_run_on_tensor_cores():
    env = dict(os.environ, TORCH_OCL_GEMM_SPLIT_K="3")
    if not _native_mma():
        env["TORCH_OCL_GEMM_CONFIG"] = "MMA=emu"
    r = subprocess.run([sys.executable, "-c", SPLIT_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
