"""Kernels with work-group barriers, built with the device compiler's optimizer. The suite
builds PoCL programs unoptimized (conftest), and PoCL's optimized build of one barrier layout
never finished: multi_margin_loss's kernels returned early (an invalid target) and skipped
elements with `continue` before their group sum, which hung every call. These run in a
subprocess with TORCH_OCL_BUILD_OPTIONS cleared, against the CPU, with a time limit."""
import os
import subprocess
import sys

from .conftest import requires_ocl

pytestmark = requires_ocl

CHECK = r"""
import torch
import torch.nn.functional as F
g = torch.Generator().manual_seed(0)
for p in (1, 2):
    for weight in (None, torch.rand(7, generator=g)):
        for reduction in ("mean", "sum", "none"):
            x = torch.randn(5, 7, generator=g, requires_grad=True)
            t = torch.randint(0, 7, (5,), generator=g)
            xd = x.detach().to("ocl").requires_grad_()
            kw = dict(p=p, margin=0.7, weight=weight, reduction=reduction)
            y = F.multi_margin_loss(x, t, **kw)
            yd = F.multi_margin_loss(xd, t.to("ocl"), **dict(kw, weight=None if weight is None else weight.to("ocl")))
            y.sum().backward()
            yd.sum().backward()
            assert torch.allclose(yd.detach().cpu(), y.detach(), atol=1e-6), (p, reduction)
            assert torch.allclose(xd.grad.cpu(), x.grad, atol=1e-6), (p, reduction)
try:
    F.multi_margin_loss(torch.randn(3, 4, device="ocl"), torch.tensor([0, 9, 1], device="ocl")).item()
    raise SystemExit("an out-of-range target did not raise")
except RuntimeError:
    pass
x = torch.randn(4, 5, generator=g, requires_grad=True)
t = torch.tensor([[1, 2, -1, 0, 0], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 0, 0, 0, 0]])
xd = x.detach().to("ocl").requires_grad_()
F.multilabel_margin_loss(x, t).backward()
yd = F.multilabel_margin_loss(xd, t.to("ocl"))
yd.backward()
assert torch.allclose(yd.detach().cpu(), F.multilabel_margin_loss(x.detach(), t), atol=1e-6)
assert torch.allclose(xd.grad.cpu(), x.grad, atol=1e-6)
print("ok")
"""


def test_margin_losses_optimized():
    env = dict(os.environ, TORCH_OCL_BUILD_OPTIONS="")
    r = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=150)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
