import os

import pytest
import torch

# Every test talks to the autoloaded backend; keep PoCL's kernel cache and ours warm across
# test processes (they are keyed by content, so sharing is safe).
os.environ.setdefault("POCL_KERNEL_CACHE", "1")

requires_ocl = pytest.mark.skipif(
    not (hasattr(torch, "ocl") and torch.ocl.is_available()), reason="no OpenCL device")

