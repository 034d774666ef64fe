"""Kernels with work-group barriers, built with the device compiler's optimizer. The suite
builds PoCL programs unoptimized (conftest), and PoCL's optimized build of one barrier layout
never finished: multi_margin_loss's kernels returned early (an invalid target) and skipped
elements with `continue` before their group sum, which hung every call. These run in a
subprocess with TORCH_OCL_BUILD_OPTIONS cleared, against the CPU, with a time limit: the margin
losses, and the barrier kernels of GroupNorm (NCHW and channels-last), BatchNorm, the
implicit-GEMM convolutions and the depthwise weight gradient."""
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


NORM_CONV_CHECK = r"""
import torch
import torch.nn.functional as F
import torch_ocl
g = torch.Generator().manual_seed(0)
def fwd_bwd(f, *ts):
    outs = []
    for dev in ("cpu", "ocl"):
        xs = [t.detach().to(dev).requires_grad_() for t in ts]
        y = f(*xs)
        (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(dev)).sum().backward()
        outs.append([y] + [x.grad for x in xs])
    for a, b in zip(outs[1], outs[0]):
        assert torch.allclose(a.detach().cpu(), b.detach(), atol=2e-4, rtol=2e-4), (a.detach().cpu() - b).abs().max()
x = torch.randn(4, 32, 9, 7, generator=g)
w, b = torch.rand(32, generator=g) + 0.5, torch.randn(32, generator=g)
fwd_bwd(lambda x, w, b: F.group_norm(x, 8, w, b), x, w, b)
fwd_bwd(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), x, w, b)
rm, rv = torch.randn(32, generator=g), torch.rand(32, generator=g) + 0.5
fwd_bwd(lambda x, w, b: F.batch_norm(x, rm.to(x.device), rv.to(x.device), w, b, training=False), x, w, b)
# channels-last BatchNorm (bn_partial_cl, bn_affine_cl); a gradient in the input's layout
xc = torch.randn(4, 70, 5, 6, generator=g).contiguous(memory_format=torch.channels_last)
wc, bc = torch.rand(70, generator=g) + 0.5, torch.randn(70, generator=g)
fwd_bwd(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), xc, wc, bc)
fwd_bwd(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True).movedim(1, -1).contiguous(), xc, wc, bc)
# channels-last GroupNorm (group_norm_cl_*): 70 channels in 7 groups, a gradient in the input's
# layout, channels_last_3d, and many positions per sample (sliced partials; 256 here, where the
# CPU's own float32 sums stay within the tolerance)
torch.ocl._reset_launch_counts()
fwd_bwd(lambda x, w, b: F.group_norm(x, 7, w, b), xc, wc, bc)
fwd_bwd(lambda x, w, b: F.group_norm(x, 7, w, b).movedim(1, -1).contiguous(), xc, wc, bc)
x3 = torch.randn(2, 12, 3, 4, 5, generator=g).contiguous(memory_format=torch.channels_last_3d)
fwd_bwd(lambda x, w, b: F.group_norm(x, 4, w, b), x3, wc[:12], bc[:12])
xl = torch.randn(1, 20, 16, 16, generator=g).contiguous(memory_format=torch.channels_last)
fwd_bwd(lambda x, w, b: F.group_norm(x, 5, w, b).movedim(1, -1).contiguous(), xl, wc[:20], bc[:20])
counts = torch.ocl._launch_counts()
assert all(counts.get("group_norm_cl_" + k) for k in ("part", "stats", "affine", "bwd_part", "bwd_coef", "bwd_dx")), counts
torch_ocl._C._tuning_set(0, "conv/forward", "KERNEL=implicit")
cx, cw = torch.randn(2, 64, 9, 7, generator=g), torch.randn(16, 64, 3, 3, generator=g) * 0.1
torch.ocl._reset_launch_counts()
for kw in (dict(padding=1), dict(stride=2, padding=1)):
    fwd_bwd(lambda x, w: F.conv2d(x, w, **kw), cx, cw)
counts = torch.ocl._launch_counts()
assert counts.get("conv2d_fwd") and counts.get("conv2d_bwd_weight"), counts
# depthwise convolutions (depthwise_conv_bwd_weight: a group sum per tap)
torch.ocl._reset_launch_counts()
fwd_bwd(lambda x, w: F.conv2d(x, w, groups=64, padding=2, stride=2), cx, torch.randn(64, 1, 5, 5, generator=g))
assert torch.ocl._launch_counts().get("depthwise_conv_bwd_weight"), torch.ocl._launch_counts()
print("ok")
"""


def test_norm_and_conv_kernels_optimized():
    env = dict(os.environ, TORCH_OCL_BUILD_OPTIONS="")
    r = subprocess.run([sys.executable, "-c", NORM_CONV_CHECK], env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
