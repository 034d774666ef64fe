"""The convolutions' implicit GEMMs (kernels/conv.cl: conv2d_fwd for the forward and the
stride-1 input gradient, conv2d_bwd_weight for the weight gradient), the GPU default, forced
through the tuning entry "conv/forward" on whatever device runs the tests, in the default
tiles and two others. Compared with the CPU: 1-D and 2-D, strides, paddings, dilations,
groups, output channels that are not a multiple of 4, transposed convolutions, channels_last
and strided inputs, float64; channel counts per group that are not a multiple of the K step
(through the tap table); 3-D convolutions (the same kernels with DEPTH)."""
import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl
from .conv_util import assert_invalid_entry_warns, compare, randn as _randn, run as _run, tuning_entry

pytestmark = requires_ocl

KEY = "conv/forward"
CONFIGS = ["KERNEL=implicit", "KERNEL=implicit TILE_N=128 WPT_N=8", "KERNEL=implicit TILE_M=32 TILE_N=32 TILE_K=8 WPT_M=4"]


@pytest.fixture(autouse=True)
def _no_winograd():
    # These tests are about conv.cl's kernels; Winograd (test_conv_winograd.py), the default
    # for 3x3 stride-1 layers of 32 channels or more (64 on CPU devices), is off here.
    with tuning_entry("conv/winograd", "ENABLE=0"):
        yield


@pytest.fixture(params=CONFIGS, ids=["default", "wide", "narrow"])
def implicit(request):
    with tuning_entry(KEY, request.param):
        yield request.param


def _check(f, x, w, b=None, *, launched=(), **kw):
    tol = dict(atol=1e-10, rtol=1e-10) if x.dtype == torch.float64 else dict(atol=3e-4, rtol=3e-4)
    counts = compare(f, x, w, b, tol, **kw)
    for kernel in launched:
        assert counts.get(kernel, 0) > 0, f"{kernel} did not run: {counts}"


CASES = [  # (x shape, w shape, conv kwargs, the implicit kernels expected to run)
    ((2, 16, 9, 11), (24, 16, 3, 3), dict(padding=1), ("conv2d_fwd", "conv2d_bwd_weight")),  # 16-column tiles
    ((2, 64, 9, 11), (32, 64, 3, 3), dict(padding=1), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 64, 10, 9), (70, 64, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
     ("conv2d_fwd", "conv2d_bwd_weight")),
    ((3, 128, 6, 5), (70, 64, 3, 3), dict(padding=2, dilation=2, groups=2), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 128, 7, 7), (64, 128, 1, 1), dict(), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 64, 8, 8), (16, 64, 3, 3), dict(stride=3), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 64, 5, 5), (8, 64, 5, 5), dict(padding=4), ("conv2d_fwd", "conv2d_bwd_weight")),  # windows mostly padding
    ((1, 16, 40, 37), (16, 16, 3, 3), dict(padding=1), ("conv2d_fwd", "conv2d_bwd_weight")),  # many tiles
    # Input channels per group not a multiple of the K step: the tap table, K padded with zeros
    ((2, 3, 9, 9), (16, 3, 3, 3), dict(padding=1), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 3, 23, 21), (64, 3, 7, 7), dict(stride=2, padding=3), ("conv2d_fwd", "conv2d_bwd_weight")),  # a stem
    ((2, 32, 8, 9), (32, 8, 3, 3), dict(padding=1, groups=4), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 10, 9, 8), (14, 5, 3, 2), dict(stride=(2, 1), padding=(2, 1), dilation=(2, 3), groups=2),
     ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 24, 7, 7), (20, 24, 1, 1), dict(), ("conv2d_fwd", "conv2d_bwd_weight")),
    # 128 output channels over many positions: 128x64 tiles unless the entry fixes the tiles
    ((2, 64, 24, 24), (128, 64, 3, 3), dict(padding=1), ("conv2d_fwd", "conv2d_bwd_weight")),
    ((2, 64, 10, 10), (128, 64, 1, 1), dict(), ("conv2d_fwd", "conv2d_bwd_weight")),  # sliced weight gradient
]


@pytest.mark.parametrize("xs, ws, kw, launched", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(implicit, xs, ws, kw, launched, bias):
    b = _randn(ws[0], seed=3) if bias else None
    w = _randn(*ws, seed=2)
    _check(F.conv2d, _randn(*xs, seed=1), w, b, launched=launched, **kw)


@pytest.mark.parametrize("kw", [dict(padding=2), dict(stride=3, padding=1, dilation=2)])
@pytest.mark.parametrize("channels", [64, 3])
def test_conv1d(implicit, kw, channels):
    w = _randn(20, channels, 5, seed=2)
    _check(F.conv1d, _randn(2, channels, 50, seed=1), w, _randn(20, seed=3),
           launched=("conv2d_fwd", "conv2d_bwd_weight"), **kw)


@pytest.mark.parametrize("case", ["channels_last", "float64", "view", "cl_groups", "cl_offset", "cl_3d"])
def test_tap_table_layouts(implicit, case):
    # The tap table holds c * (the input's channel stride): channels-last (stride 1) and a
    # channel-strided view read through it as well as NCHW does. Channels-last groups of a
    # multiple of 4 channels read 4-vectors of channels through it (forward and weight gradient),
    # a misaligned view scalars.
    cl = torch.channels_last
    if case == "cl_groups":
        _check(F.conv2d, _randn(2, 32, 9, 10, seed=1).contiguous(memory_format=cl), _randn(24, 8, 3, 3, seed=2),
               _randn(24, seed=3), padding=1, stride=(1, 2), groups=4, launched=("conv2d_fwd", "conv2d_bwd_weight"))
        return
    if case == "cl_offset":
        # Sliced on the device: 4-aligned strides, but data 2 elements past an aligned start.
        big, w = _randn(2, 36, 9, 10, seed=1).contiguous(memory_format=cl), _randn(24, 8, 3, 3, seed=2)
        grads = []
        for dev in ("cpu", "ocl"):
            bd = big.to(dev).detach().requires_grad_()
            wd = w.to(dev).detach().requires_grad_()
            y = F.conv2d(bd[:, 2:34], wd, padding=1, groups=4)
            (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(dev)).sum().backward()
            grads.append([t.detach().cpu() for t in (y, bd.grad, wd.grad)])
        for r, g in zip(*grads):
            torch.testing.assert_close(g, r, atol=3e-4, rtol=3e-4)
        return
    if case == "cl_3d":
        x = _randn(2, 12, 4, 6, 5, seed=1).contiguous(memory_format=torch.channels_last_3d)
        _check(F.conv3d, x, _randn(8, 12, 2, 3, 3, seed=2), _randn(8, seed=3), padding=1,
               launched=("conv2d_fwd", "conv2d_bwd_weight"))
        return
    dtype = torch.float64 if case == "float64" else torch.float32
    x = _randn(2, 6, 11, 10, dtype=dtype, seed=1)
    if case == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    if case == "view":
        x = _randn(2, 12, 11, 10, seed=1)[:, ::2]
    _check(F.conv2d, x, _randn(12, 6, 5, 3, dtype=dtype, seed=2), _randn(12, dtype=dtype, seed=3), stride=(2, 1),
           padding=(2, 1), launched=("conv2d_fwd", "conv2d_bwd_weight"))


def test_tap_table_padding_reads_nothing(implicit):
    # K = 27 is padded to whole steps with zero weights; the padded depths must not load the input
    # (an infinity there times a zero weight would be NaN).
    x = _randn(1, 3, 6, 6, seed=1)
    x[0, 2, 5, 5] = float("inf")
    x[0, 0, 0, 0] = float("-inf")
    w = _randn(8, 3, 3, 3, seed=2)
    got = F.conv2d(x.to("ocl"), w.to("ocl"), padding=1).cpu()
    torch.testing.assert_close(got, F.conv2d(x, w, padding=1), atol=3e-4, rtol=3e-4, equal_nan=True)
    assert torch.isfinite(got[0, :, 2:4, 2:4]).all()


@pytest.mark.parametrize("stride", [1, 2])
def test_conv_transpose2d(implicit, stride):
    # The transposed convolution's forward is a stride-`stride` convolution's input gradient
    # (conv2d_fwd at stride 1), its input gradient that convolution's forward.
    _check(F.conv_transpose2d, _randn(2, 64, 7, 8, seed=1), _randn(64, 16, 3, 3, seed=2), _randn(16, seed=3),
           launched=("conv2d_fwd",), stride=stride, padding=1)


def test_layouts_and_float64(implicit):
    x = _randn(2, 32, 9, 9, seed=1)
    _check(F.conv2d, x.to(memory_format=torch.channels_last), _randn(32, 32, 3, 3, seed=2), padding=1,
           launched=("conv2d_fwd",))
    _check(F.conv2d, x.double(), _randn(32, 32, 3, 3, dtype=torch.float64, seed=2), _randn(32, dtype=torch.float64),
           padding=1, launched=("conv2d_fwd",))
    # A strided view of the input, read in place.
    xv = _randn(2, 32, 12, 20, seed=4)[:, :, 1::2, ::3]
    w = _randn(16, 32, 3, 3, seed=5)
    torch.testing.assert_close(F.conv2d(xv.to("ocl"), w.to("ocl"), padding=1).cpu(), F.conv2d(xv, w, padding=1),
                               atol=3e-4, rtol=3e-4)


@pytest.mark.parametrize("case", ["nhwc", "nhwc64", "weight_cl", "offset", "odd_m", "float64", "strided_c",
                                  "transposed"])
def test_channel_vector_reads(implicit, case):
    # Channels-last inputs (and gradients) are read as 4-vectors of channels where the other
    # strides and the offset are 4-aligned; a misaligned view, a channel stride other than 1 or
    # an output channel count not a multiple of 4 (the weight gradient) take the scalar reads.
    # Both must agree with the CPU.
    cl = torch.channels_last
    dtype = torch.float64 if case == "float64" else torch.float32
    if case == "transposed":
        x = _randn(2, 64, 7, 8, seed=1).contiguous(memory_format=cl)
        _check(F.conv_transpose2d, x, _randn(64, 16, 3, 3, seed=2), _randn(16, seed=3), stride=2, padding=1,
               launched=("conv2d_fwd",))
        return
    c = 64 if case in ("nhwc64", "odd_m", "float64") else 32
    m = 30 if case == "odd_m" else 24
    x = _randn(2, c + (1 if case == "offset" else 0), 7, 9, dtype=dtype, seed=1).contiguous(memory_format=cl)
    if case == "offset":
        x = x[:, 1:]  # channels still unit-stride, the data one element past an aligned start
    if case == "strided_c":
        x = _randn(2, 9, 7, 2 * c, seed=1).permute(0, 3, 1, 2)[:, ::2]  # channel stride 2
    w = _randn(m, c, 3, 3, dtype=dtype, seed=2)
    if case == "weight_cl":
        w = w.contiguous(memory_format=cl)
    launched = ("conv2d_fwd", "conv2d_bwd_weight")
    _check(F.conv2d, x, w, _randn(m, dtype=dtype, seed=3), padding=1, stride=(1, 2) if case == "nhwc64" else 1,
           launched=launched)


def _format(t):
    if t.is_contiguous():
        return "contiguous"
    for mf in (torch.channels_last, torch.channels_last_3d):
        if t.dim() == (4 if mf == torch.channels_last else 5) and t.is_contiguous(memory_format=mf):
            return str(mf)
    return "strided"


@pytest.mark.parametrize("kernel", ["implicit", "im2col"])
@pytest.mark.parametrize("case", ["input", "weight", "neither", "transposed", "3d"])
def test_memory_formats_match_cpu(kernel, case):
    # The output and the gradients convolution_backward returns take the CPU's memory format:
    # channels-last when the input or the weight is (autograd would restride a leaf's gradient,
    # so the backward is called directly).
    cl = torch.channels_last_3d if case == "3d" else torch.channels_last
    x, w = (_randn(2, 32, 4, 6, 5, seed=1), _randn(16, 32, 3, 3, 3, seed=2)) if case == "3d" else \
        (_randn(2, 32, 7, 6, seed=1), _randn(32 if case == "transposed" else 16, 16 if case == "transposed" else 32,
                                               3, 3, seed=2))
    if case in ("input", "transposed", "3d"):
        x = x.contiguous(memory_format=cl)
    if case == "weight":
        w = w.contiguous(memory_format=cl)
    transposed = case == "transposed"
    args = ([1] * (x.dim() - 2), [1] * (x.dim() - 2), [1] * (x.dim() - 2), transposed, [0] * (x.dim() - 2), 1)
    with tuning_entry(KEY, f"KERNEL={kernel}"):
        got, ref = [], []
        for dev, out in (("cpu", ref), ("ocl", got)):
            xd, wd = x.to(dev), w.to(dev)
            y = torch.ops.aten.convolution(xd, wd, None, *args)
            gy = torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(dev).contiguous(memory_format=cl)
            gi, gw, _ = torch.ops.aten.convolution_backward(gy, xd, wd, None, *args, [True, True, False])
            out.extend([y, gi, gw])
        for name, r, g in zip(["output", "grad_input", "grad_weight"], ref, got):
            assert _format(g) == _format(r), f"{name}: {_format(g)} on ocl, {_format(r)} on the CPU"
            torch.testing.assert_close(g.cpu(), r, atol=3e-4, rtol=3e-4)


def test_strided_bias(implicit):
    # A bias that is a strided view on the device (conv2d_fwd reads it contiguous).
    x, w = _randn(2, 16, 7, 7, seed=1), _randn(8, 16, 3, 3, seed=2)
    b = _randn(16, seed=3).to("ocl")[::2]
    torch.testing.assert_close(F.conv2d(x.to("ocl"), w.to("ocl"), b, padding=1).cpu(),
                               F.conv2d(x, w, b.cpu(), padding=1), atol=3e-4, rtol=3e-4)


CASES_3D = [  # (x shape, w shape, conv kwargs)
    ((2, 16, 4, 5, 6), (8, 16, 3, 3, 3), dict(padding=1)),
    ((2, 32, 5, 6, 7), (20, 32, 3, 1, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1))),
    ((2, 3, 6, 7, 5), (16, 3, 3, 3, 3), dict(stride=2, padding=1)),  # the tap table
    ((1, 12, 5, 5, 6), (9, 4, 2, 3, 3), dict(padding=(2, 1, 0), dilation=(2, 1, 1), groups=3)),
    ((2, 16, 3, 4, 4), (16, 16, 1, 1, 1), dict()),
]


@pytest.mark.parametrize("xs, ws, kw", CASES_3D, ids=range(len(CASES_3D)))
def test_conv3d(implicit, xs, ws, kw):
    # 3-D convolutions: the forward, the input gradient (per phase of the stride, along depth too)
    # and the weight gradient on conv.cl's kernels, with no window sum (col2im).
    w = _randn(*ws, seed=2)
    launched = ("conv2d_fwd", "conv2d_bwd_weight")
    ref = _run(F.conv3d, _randn(*xs, seed=1), w, _randn(ws[0], seed=3), "cpu", **kw)
    torch.ocl._reset_launch_counts()
    got = _run(F.conv3d, _randn(*xs, seed=1), w, _randn(ws[0], seed=3), "ocl", **kw)
    counts = torch.ocl._launch_counts()
    for name, r, g in zip(["output", "grad_input", "grad_weight", "grad_bias"], ref, got):
        torch.testing.assert_close(g, r, atol=3e-4, rtol=3e-4, msg=lambda m: f"{name}: {m}")
    assert all(counts.get(k, 0) > 0 for k in launched), counts
    if not (xs[1] == ws[1] < 8):  # one group of fewer than 8 input channels: the input gradient on the columns
        assert not any("window" in k for k in counts), counts


@pytest.mark.parametrize("case", ["channels_last_3d", "float64", "transposed", "view"])
def test_conv3d_layouts(implicit, case):
    dtype = torch.float64 if case == "float64" else torch.float32
    x = _randn(2, 16, 5, 6, 4, dtype=dtype, seed=1)
    w = _randn(12, 16, 3, 2, 3, dtype=dtype, seed=2)
    if case == "channels_last_3d":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    if case == "view":
        x = _randn(2, 16, 10, 6, 4, seed=1)[:, :, ::2]
    if case == "transposed":
        _check(F.conv_transpose3d, x, _randn(16, 8, 3, 3, 2, seed=2), _randn(8, seed=3), stride=(2, 1, 2),
               padding=1, launched=("conv2d_fwd",))
        return
    _check(F.conv3d, x, w, _randn(12, dtype=dtype, seed=3), padding=(1, 0, 1), stride=(1, 2, 1),
           launched=("conv2d_fwd", "conv2d_bwd_weight"))


@pytest.mark.parametrize("slice_groups", [1, 64])
@pytest.mark.parametrize("groups", [1, 2])
def test_weight_gradient_slices(slice_groups, groups):
    # SLICE_GROUPS sets how many slices of the positions the weight gradient sums: one, or as
    # many as the 16-step minimum allows; with groups, each group's slices are summed apart.
    with tuning_entry(KEY, f"KERNEL=implicit SLICE_GROUPS={slice_groups}"):
        _check(F.conv2d, _randn(3, 64, 11, 13, seed=1), _randn(32, 64 // groups, 3, 3, seed=2), padding=1,
               groups=groups, launched=("conv2d_bwd_weight",))


def test_invalid_tuning_entry_warns():
    assert_invalid_entry_warns(KEY, "KERNEL=implicit WPT_M=3", _randn(1, 16, 5, 5, seed=1),
                               _randn(4, 16, 3, 3, seed=2), dict(atol=3e-4, rtol=3e-4))


@pytest.mark.parametrize("xs, ws, kw", [
    ((2, 64, 9, 9), (32, 64, 3, 3), dict(stride=2, padding=1)),
    ((2, 64, 10, 11), (32, 64, 1, 1), dict(stride=2)),  # three of four phases get no tap: zeros
    ((2, 64, 10, 11), (32, 64, 3, 2), dict(stride=(3, 2), padding=(1, 0))),
    ((2, 64, 8, 8), (16, 64, 3, 3), dict(stride=(1, 2), dilation=(2, 1), padding=2)),
    ((2, 64, 13), (16, 64, 4), dict(stride=3, padding=2)),
    ((2, 8, 9, 10), (10, 8, 3, 3), dict(stride=2, padding=1)),  # 10 output channels: phases on the tap table
    ((2, 12, 11, 9), (6, 4, 5, 3), dict(stride=(2, 3), padding=(2, 1), groups=3)),
], ids=range(7))
def test_strided_input_gradient(implicit, xs, ws, kw):
    # A strided convolution's input gradient runs one conv2d_fwd per phase of the stride and no
    # col2im (window sum).
    x, w = _randn(*xs, seed=1), _randn(*ws, seed=2)
    f = F.conv2d if len(xs) == 4 else F.conv1d
    ref = _run(f, x, w, None, "cpu", **kw)
    xo = x.to("ocl").requires_grad_()
    y = f(xo, w.to("ocl"), **kw)
    gy = torch.linspace(-1, 1, y.numel()).reshape(y.shape).to("ocl")
    torch.ocl._reset_launch_counts()
    (y * gy).sum().backward()
    counts = torch.ocl._launch_counts()
    torch.testing.assert_close(xo.grad.cpu(), ref[1], atol=3e-4, rtol=3e-4)
    assert counts.get("conv2d_fwd", 0) >= 1 and not any("window" in k for k in counts), counts
