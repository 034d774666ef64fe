"""TORCH_OCL_PROFILE=1: torch.ocl._kernel_times() reports launches and device time per kernel
for every launch path (launch(), the pointwise engine, the multi-tensor kernels),
_kernel_span_ms() the device time from the first kernel's start to the last one's end, and
_reset_launch_counts() drops what was recorded before it."""
import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import requires_ocl

pytestmark = requires_ocl

SCRIPT = textwrap.dedent("""
    import torch
    a = torch.randn(64, 64, device="ocl")
    for _ in range(3):
        torch.mm(a, a)
    torch.ocl._reset_launch_counts()
    (a + 1).sum(0)                     # pointwise engine + reduction
    torch.mm(a, a)                     # launch()
    torch._foreach_mul_([a, a.clone()], 2.0)  # multi-tensor kernels
    times = torch.ocl._kernel_times()
    # the warm-up launches were dropped (a CPU device also packs an operand: one kernel more)
    gemm = [n for k, (n, _) in times.items() if k.startswith("gemm")]
    assert 1 <= len(gemm) <= 2 and all(n == 1 for n in gemm), times
    assert sum(n for n, _ in times.values()) >= 4, times
    assert all(ms >= 0.0 for _, ms in times.values()), times
    assert sum(ms for _, ms in times.values()) > 0.0, times
    # The span runs from the first kernel's start to the last one's end: at least the longest
    # kernel; the in-order queue runs kernels one after another, so at least their sum too
    # (minus clock rounding).
    span = torch.ocl._kernel_span_ms()
    assert span >= 0.999 * sum(ms for _, ms in times.values()) - 1e-3, (span, times)
    torch.ocl._reset_launch_counts()
    assert torch.ocl._kernel_span_ms() == 0.0
    print("ok")
""")


def test_kernel_times_cover_every_launch_path():
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=dict(os.environ, TORCH_OCL_PROFILE="1"),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


@pytest.mark.skipif(os.environ.get("TORCH_OCL_PROFILE") == "1",
                    reason="this test process runs with TORCH_OCL_PROFILE on")
def test_kernel_times_without_profiling_report_launches_only():
    import torch
    a = torch.randn(8, 8, device="ocl")
    torch.ocl._reset_launch_counts()
    torch.mm(a, a)
    times = torch.ocl._kernel_times()
    packs = times.pop("gemm_pack_panels_n", (0, 0.0))[0]  # CPU devices pack B first
    assert packs <= 1 and sum(n for n, _ in times.values()) == 1, times
    assert all(ms == 0.0 for _, ms in times.values()), times
    assert torch.ocl._kernel_span_ms() == 0.0
