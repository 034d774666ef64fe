import os
import zlib

import pytest
import torch

# Every test talks to the autoloaded backend; keep PoCL's kernel cache and ours warm across
# test processes (they are keyed by content, so sharing is safe).
os.environ.setdefault("POCL_KERNEL_CACHE", "1")


def _on_pocl():
    if not (hasattr(torch, "ocl") and torch.ocl.is_available()):
        return False
    return "Portable Computing Language" in torch.ocl.get_device_properties(0).platform_name


# The suite builds on the order of a thousand distinct kernel programs from a cold cache (one
# per op x dtype combination), and on PoCL, LLVM's optimizer costs 5-20x more time than the
# tests spend running them (softmax: 8.7 s optimized vs 0.4 s). Tests check semantics, which
# the optimization level does not change, so on PoCL they build unoptimized programs. The
# benchmarks, train.py and users keep the default. Set TORCH_OCL_BUILD_OPTIONS to override.
if _on_pocl():
    os.environ.setdefault("TORCH_OCL_BUILD_OPTIONS", "-cl-opt-disable")
    # Subprocesses started by tests inherit it (autoload, multi-device, train CLI tests).

requires_ocl = pytest.mark.skipif(
    not (hasattr(torch, "ocl") and torch.ocl.is_available()), reason="no OpenCL device")


@pytest.fixture(autouse=True)
def _seed_cpu_rng(request):
    """Seeds the CPU generator from the test's id before each test, so a test drawing inputs
    with an unseeded torch.randn sees the same ones whatever ran before it in its process
    (which, under pytest-xdist, changes from run to run). Only the CPU generator: seeding
    devices would initialize the backend before tests that check lazy initialization.
    TORCH_OCL_TEST_SEED salts it as it salts tests/cases.py:make."""
    key = request.node.nodeid + "|" + os.environ.get("TORCH_OCL_TEST_SEED", "0")
    torch.random.default_generator.manual_seed(zlib.crc32(key.encode()))
