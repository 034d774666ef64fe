"""Depthwise convolutions (ops/depthwise_conv.cpp, kernels/depthwise_conv.cl): groups equal to
the input channels, one input channel per filter, on every device. Output, input gradient,
weight gradient and bias gradient against the CPU: channel multipliers, strides, paddings and
dilations per dim, even and rectangular filters, channels_last and strided inputs, float64,
1-D and transposed convolutions, many samples (the weight gradient's slices); shapes the kernels
decline (more than 64 taps, 3-D) agree too."""
import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl
from .conv_util import assert_invalid_entry_warns, compare, randn as _randn, tuning_entry

pytestmark = requires_ocl

KERNELS = ("depthwise_conv_fwd", "depthwise_conv_bwd_input", "depthwise_conv_bwd_weight")
# The weight gradient of a channels-last input runs depthwise_conv_bwd_weight_cl; counted as
# depthwise_conv_bwd_weight below.
WEIGHT_CL = "depthwise_conv_bwd_weight_cl"


def _check(f, x, w, b=None, *, runs=True, **kw):
    """f on ocl against the CPU. runs: whether the depthwise kernels must run (the input gradient
    by depthwise_conv_bwd_input where the channel multiplier exceeds 1 or a dim is both strided
    and dilated, else by the forward over flipped filters, once per phase of the stride) or must
    not."""
    tol = dict(atol=1e-10, rtol=1e-10) if x.dtype == torch.float64 else dict(atol=1e-4, rtol=1e-4)
    counts = compare(f, x, w, b, tol, **kw)
    counts["depthwise_conv_bwd_weight"] = counts.get("depthwise_conv_bwd_weight", 0) + counts.get(WEIGHT_CL, 0)
    ran = [k for k in KERNELS if counts.get(k, 0) > 0]
    if not runs:
        assert ran == [], f"depthwise kernels that ran: {ran}"
        return
    pair = (lambda v: v if isinstance(v, tuple) else (v, v))
    strided_dilated = any(s > 1 and d > 1 for s, d in zip(pair(kw.get("stride", 1)), pair(kw.get("dilation", 1))))
    gather = w.shape[0] != x.shape[1] or strided_dilated
    expected = [k for k in KERNELS if k != "depthwise_conv_bwd_input" or gather]
    assert ran == expected, f"depthwise kernels that ran: {ran}"


@pytest.mark.parametrize("xs, mult, k, kw", [
    ((2, 5, 9, 11), 1, (3, 3), dict(padding=1)),
    ((2, 4, 9, 8), 2, (3, 3), dict(stride=2, padding=1)),
    ((3, 3, 10, 7), 3, (5, 3), dict(stride=(2, 3), padding=(2, 1), dilation=(1, 2))),
    ((1, 6, 7, 7), 1, (7, 7), dict(padding=3)),
    ((2, 4, 6, 6), 1, (2, 2), dict(stride=3, dilation=2)),  # taps that no output reaches
    # one filter per channel, strided: the input gradient per phase of the stride
    ((2, 5, 11, 10), 1, (3, 3), dict(stride=2, padding=1)),
    ((2, 4, 9, 13), 1, (5, 4), dict(stride=(3, 2), padding=(2, 1))),
    ((2, 3, 10, 9), 1, (2, 3), dict(stride=(3, 2), padding=(0, 1))),  # a row phase no tap reaches
    ((2, 4, 9, 9), 1, (3, 3), dict(stride=(2, 1), dilation=(1, 2), padding=2)),
    ((1, 2, 1, 1), 1, (3, 3), dict(padding=1)),
    ((2, 8, 5, 6), 1, (1, 1), dict()),
    ((2, 3, 4, 4), 1, (3, 3), dict(padding=4)),  # windows mostly padding
    ((2, 32, 20, 17), 1, (8, 8), dict(padding=3)),  # 64 taps, the most the kernels take
])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("layout", ["nchw", "channels_last", "channels_last_inner"])
def test_depthwise_conv2d(xs, mult, k, kw, bias, layout):
    # channels_last: the per-channel weight gradient kernel; _inner: the forward and the input
    # gradient with work-items along channels too (the GPU default), forced by the tuning entry.
    C = xs[1]
    x = _randn(*xs, seed=1)
    if layout != "nchw":
        x = x.contiguous(memory_format=torch.channels_last)
    with tuning_entry("conv/depthwise", f"CHANNELS_INNER={int(layout == 'channels_last_inner')}"):
        _check(F.conv2d, x, _randn(C * mult, 1, *k, seed=2), _randn(C * mult, seed=3) if bias else None, groups=C,
               **kw)


@pytest.mark.parametrize("cl", [False, True], ids=["nchw", "channels_last"])
def test_many_samples(cl):
    # Positions over many samples: the weight gradient's slices split inside a sample.
    x = _randn(300, 2, 5, 5, seed=1)
    _check(F.conv2d, x.contiguous(memory_format=torch.channels_last) if cl else x, _randn(2, 1, 3, 3, seed=2), None,
           groups=2, padding=1)


@pytest.mark.parametrize("case", ["channels_last", "weight_cl", "strided", "float64"])
def test_layouts_and_float64(case):
    x, w = _randn(2, 6, 9, 10, seed=1), _randn(6, 1, 3, 3, seed=2)
    if case == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif case == "weight_cl":
        w = w.contiguous(memory_format=torch.channels_last)
    elif case == "strided":
        x = _randn(2, 12, 19, 31, seed=1)[:, ::2, 1::2, ::3]
    elif case == "float64":
        x, w = x.double(), w.double()
    torch.ocl._reset_launch_counts()
    _check(F.conv2d, x, w, _randn(6, dtype=x.dtype, seed=3), groups=6, padding=1)
    # A channels-last input's weight gradient runs a work-item per channel.
    assert (torch.ocl._launch_counts().get(WEIGHT_CL, 0) > 0) == (case == "channels_last")
    if case != "strided":
        y = F.conv2d(x.to("ocl"), w.to("ocl"), groups=6, padding=1)
        assert y.is_contiguous(memory_format=torch.channels_last) == \
            F.conv2d(x, w, groups=6, padding=1).is_contiguous(memory_format=torch.channels_last)


def test_conv1d_and_transposed():
    _check(F.conv1d, _randn(2, 6, 30, seed=1), _randn(12, 1, 5, seed=2), _randn(12, seed=3), groups=6, stride=2,
           padding=2)
    # A transposed depthwise convolution is the input gradient of one: the same three kernels.
    _check(F.conv_transpose2d, _randn(2, 6, 7, 8, seed=1), _randn(6, 1, 3, 3, seed=2), _randn(6, seed=3), groups=6,
           stride=2, padding=1, output_padding=1)


@pytest.mark.parametrize("case", ["9x9", "conv3d", "two_channels_per_group"])
def test_declined_shapes_agree(case):
    if case == "9x9":
        _check(F.conv2d, _randn(2, 4, 12, 12, seed=1), _randn(4, 1, 9, 9, seed=2), groups=4, padding=4, runs=False)
    elif case == "conv3d":
        _check(F.conv3d, _randn(2, 4, 5, 6, 6, seed=1), _randn(4, 1, 3, 3, 3, seed=2), groups=4, padding=1,
               runs=False)
    else:
        _check(F.conv2d, _randn(2, 8, 7, 7, seed=1), _randn(4, 2, 3, 3, seed=2), groups=4, padding=1, runs=False)


def test_invalid_tuning_entry_warns():
    x = _randn(2, 4, 6, 6, seed=1).contiguous(memory_format=torch.channels_last)
    assert_invalid_entry_warns("conv/depthwise", "CHANNELS_INNER=2", x, _randn(4, 1, 3, 3, seed=2),
                               dict(atol=1e-4, rtol=1e-4), groups=4)


def test_empty_batch():
    y = F.conv2d(torch.zeros(0, 4, 6, 6, device="ocl"), torch.ones(4, 1, 3, 3, device="ocl"), groups=4, padding=1)
    assert y.shape == (0, 4, 6, 6)
