"""Depthwise convolutions (ops/depthwise_conv.cpp, kernels/depthwise_conv.cl): groups equal to
the input channels, one input channel per filter, on every device. Output, input gradient,
weight gradient and bias gradient against the CPU: channel multipliers, strides, paddings and
dilations per dim, even and rectangular filters, channels_last and strided inputs, float64,
1-D and transposed convolutions, many samples (the weight gradient's slices); shapes the kernels
decline (more than 64 taps, 3-D) agree too. The vector kernels (channels-last, 4-vectors of
channels) against the CPU pass by pass, with the kernels each pass ran: their tiles, their
fallbacks for tensors they decline (odd channel counts, misaligned views, multipliers), and
their optimized builds."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl
from .conv_util import assert_invalid_entry_warns, compare, randn as _randn, tuning_entry

pytestmark = requires_ocl

KERNELS = ("depthwise_conv_fwd", "depthwise_conv_bwd_input", "depthwise_conv_bwd_weight")
# The weight gradient of a channels-last input runs depthwise_conv_bwd_weight_cl, or with 4-vectors
# of channels depthwise_conv_bwd_weight_vec; the forward depthwise_conv_fwd_vec: each counted as
# its scalar kernel in _check.
WEIGHT_CL = "depthwise_conv_bwd_weight_cl"
FWD_VEC, WEIGHT_VEC = "depthwise_conv_fwd_vec", "depthwise_conv_bwd_weight_vec"


def _check(f, x, w, b=None, *, runs=True, **kw):
    """f on ocl against the CPU. runs: whether the depthwise kernels must run (the input gradient
    by depthwise_conv_bwd_input where the channel multiplier exceeds 1 or a dim is both strided
    and dilated, else by the forward over flipped filters, once per phase of the stride) or must
    not."""
    tol = dict(atol=1e-10, rtol=1e-10) if x.dtype == torch.float64 else dict(atol=1e-4, rtol=1e-4)
    counts = compare(f, x, w, b, tol, **kw)
    for name, alias in ((WEIGHT_CL, "depthwise_conv_bwd_weight"), (WEIGHT_VEC, "depthwise_conv_bwd_weight"),
                        (FWD_VEC, "depthwise_conv_fwd")):
        counts[alias] = counts.get(alias, 0) + counts.get(name, 0)
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
@pytest.mark.parametrize("layout", ["nchw", "channels_last", "channels_last_inner", "channels_last_vec"])
def test_depthwise_conv2d(xs, mult, k, kw, bias, layout):
    # channels_last: the per-channel weight gradient kernel; _inner: the forward and the input
    # gradient with work-items along channels too (the GPU default for the scalar kernels),
    # forced by the tuning entry; _vec: the vector forward where it applies (a multiple of 4
    # channels, one filter each; compare()'s NCHW output gradient keeps the gradients scalar).
    C = xs[1]
    x = _randn(*xs, seed=1)
    if layout != "nchw":
        x = x.contiguous(memory_format=torch.channels_last)
    entry = "VEC=1" if layout == "channels_last_vec" else f"VEC=0 CHANNELS_INNER={int(layout == 'channels_last_inner')}"
    with tuning_entry("conv/depthwise", entry):
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


def _ran():
    """The depthwise kernels launched since the last reset."""
    return {k for k, v in torch.ocl._launch_counts().items() if v and k.startswith("depthwise_conv")}


def _passes(make, *, gy_cl=True, **kw):
    """F.conv2d(x, w, b, groups=C, **kw) for (x, w, b) = make(device), its input gradient and its
    weight gradient for the output gradient linspace(-1, 1) (channels_last where gy_cl), each
    pass on its own, on ocl against the CPU. make builds the same views on either device (ocl
    tensors keep their storage offsets and strides that way). Returns the depthwise kernels each
    ocl pass ran: (forward, input gradient, weight gradient)."""
    results = {}
    for dev in ("cpu", "ocl"):
        x, w, b = make(dev)
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        torch.ocl._reset_launch_counts()
        y = F.conv2d(x, w, b, groups=x.shape[1], **kw)
        ran = [_ran()]
        gy = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
        gy = gy.contiguous(memory_format=torch.channels_last if gy_cl else torch.contiguous_format).to(dev)
        torch.ocl._reset_launch_counts()
        (gx,) = torch.autograd.grad(y, x, gy, retain_graph=True)
        ran.append(_ran())
        torch.ocl._reset_launch_counts()
        (gw,) = torch.autograd.grad(y, w, gy)
        ran.append(_ran())
        results[dev] = [t.detach().cpu() for t in (y, gx, gw)], ran
    tol = dict(atol=1e-10, rtol=1e-10) if results["cpu"][0][0].dtype == torch.float64 else dict(atol=1e-4, rtol=1e-4)
    for name, r, g in zip(["output", "grad_input", "grad_weight"], results["cpu"][0], results["ocl"][0]):
        assert g.abs().sum() > 0 or r.abs().sum() == 0, name
        torch.testing.assert_close(g, r, **tol, msg=lambda m: f"{name}: {m}")
    return results["ocl"][1]


def _channels_last(xs, k, *, dtype=torch.float32, bias=True):
    """make() for _passes: a channels-last input of shape xs, C filters k, a bias or none."""
    C = xs[1]

    def make(dev):
        x = _randn(*xs, dtype=dtype, seed=1).contiguous(memory_format=torch.channels_last).to(dev)
        b = _randn(C, dtype=dtype, seed=3).to(dev) if bias else None
        return x, _randn(C, 1, *k, dtype=dtype, seed=2).to(dev), b
    return make


def _expect_vector(ran, kw):
    """Every pass ran a vector kernel: the input gradient the vector forward over its phases,
    unless a dim is both strided and dilated (then depthwise_conv_bwd_input gathers)."""
    pair = (lambda v: v if isinstance(v, tuple) else (v, v))
    gather = any(s > 1 and d > 1 for s, d in zip(pair(kw.get("stride", 1)), pair(kw.get("dilation", 1))))
    assert ran == [{FWD_VEC}, {"depthwise_conv_bwd_input"} if gather else {FWD_VEC}, {WEIGHT_VEC}], ran


VECTOR_CASES = [
    ((2, 8, 9, 11), (3, 3), dict(padding=1)),
    ((2, 8, 11, 10), (3, 3), dict(stride=2, padding=1)),
    ((2, 12, 9, 13), (5, 5), dict(padding=2)),
    ((1, 4, 12, 13), (7, 7), dict(padding=3)),  # 49 taps: the weight gradient splits the filter rows
    ((2, 8, 10, 9), (3, 3), dict(dilation=2, padding=2)),
    ((2, 8, 9, 9), (3, 3), dict(stride=(2, 1), dilation=(1, 2), padding=2)),
    ((2, 8, 9, 13), (5, 4), dict(stride=(3, 2), padding=(2, 1))),
    ((2, 4, 10, 9), (2, 3), dict(stride=(3, 2), padding=(0, 1))),  # a row phase no tap reaches
    ((2, 4, 6, 6), (2, 2), dict(stride=3, dilation=2)),  # strided and dilated: dX gathers
    ((3, 8, 10, 7), (5, 3), dict(stride=(2, 3), padding=(2, 1), dilation=(1, 2))),
    ((2, 16, 20, 17), (8, 8), dict(padding=3)),  # 64 taps: three parts of filter rows
    ((2, 8, 5, 6), (1, 1), dict()),
    ((2, 8, 4, 4), (3, 3), dict(padding=4)),  # windows mostly padding
    ((1, 4, 1, 1), (3, 3), dict(padding=1)),
    ((2, 24, 7, 30), (3, 3), dict(padding=(0, 2))),  # long rows: several tiles, a partial last one
]


@pytest.mark.parametrize("xs, k, kw", VECTOR_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
def test_vector_kernels(xs, k, kw, dtype):
    with tuning_entry("conv/depthwise", "VEC=1"):
        _expect_vector(_passes(_channels_last(xs, k, dtype=dtype), **kw), kw)


@pytest.mark.parametrize("tiles", ["TILE_W=1 TILE_H=1", "TILE_W=3 TILE_H=3", "TILE_W=8 TILE_H=4",
                                   "TILE_W=5 TILE_H=1 WEIGHT_ITEMS=64", "WEIGHT_ITEMS=8192"])
@pytest.mark.parametrize("case", [0, 1, 5, 14])
def test_vector_tiles(tiles, case):
    # Tiles that do not divide the rows or columns; slices of one tile (WEIGHT_ITEMS=8192) or many.
    xs, k, kw = VECTOR_CASES[case]
    with tuning_entry("conv/depthwise", "VEC=1 " + tiles):
        _expect_vector(_passes(_channels_last(xs, k), **kw), kw)


@pytest.mark.parametrize("items", [64, 8192])
def test_vector_weight_slices(items):
    # Many samples of 5x5 positions: slices of tiles split samples and rows, and a work-group
    # sums slices of several samples (or, past the last one, empty slices).
    with tuning_entry("conv/depthwise", f"VEC=1 WEIGHT_ITEMS={items}"):
        _expect_vector(_passes(_channels_last((300, 8, 5, 5), (3, 3)), padding=1), {})


def _strided_view(dev):
    """A channels-last (2, 8, 9, 10) input on dev, one element into its storage (misaligned)."""
    x = _randn(2, 8, 9, 10, seed=1).contiguous(memory_format=torch.channels_last)
    flat = torch.zeros(x.numel() + 1)
    flat[1:] = x.permute(0, 2, 3, 1).reshape(-1)
    return flat.to(dev).as_strided(x.shape, x.stride(), 1)


def _cl(*xs, offset=0):
    """For FALLBACKS: dev -> a channels-last input of shape xs, less its first `offset` channels."""
    return lambda dev: _randn(*xs, seed=1).contiguous(memory_format=torch.channels_last).to(dev)[:, offset:]


# Per case: make() for _passes, the convolution's arguments, and the depthwise kernels each pass
# runs with VEC=1.
PAD = dict(padding=1)
FALLBACKS = {
    # 6 channels: not whole 4-vectors; the scalar kernels throughout
    "odd_channels": (lambda dev: (_cl(2, 6, 9, 10)(dev), _randn(6, 1, 3, 3, seed=2).to(dev),
                                  _randn(6, seed=3).to(dev)), PAD,
                     ["depthwise_conv_fwd", "depthwise_conv_fwd", WEIGHT_CL]),
    # two filters per channel
    "multiplier": (lambda dev: (_cl(2, 4, 9, 10)(dev), _randn(8, 1, 3, 3, seed=2).to(dev), None), PAD,
                   ["depthwise_conv_fwd", "depthwise_conv_bwd_input", WEIGHT_CL]),
    # channels 1..8 of 9: an offset of one element; the input gradient (fresh tensors) stays vector
    "channel_view": (lambda dev: (_cl(2, 9, 9, 10, offset=1)(dev), _randn(8, 1, 3, 3, seed=2).to(dev), None), PAD,
                     ["depthwise_conv_fwd", FWD_VEC, WEIGHT_CL]),
    # a storage offset of one element
    "storage_offset": (lambda dev: (_strided_view(dev), _randn(8, 1, 3, 3, seed=2).to(dev), None), PAD,
                       ["depthwise_conv_fwd", FWD_VEC, WEIGHT_CL]),
    # rows 1.. of a channels-last tensor: offset and strides multiples of 4, still vectors
    "row_view": (lambda dev: (_cl(2, 8, 10, 10)(dev)[:, :, 1:], _randn(8, 1, 3, 3, seed=2).to(dev),
                              _randn(8, seed=3).to(dev)), PAD, [FWD_VEC, FWD_VEC, WEIGHT_VEC]),
    # a bias one element into its storage
    "bias_offset": (lambda dev: (_cl(2, 8, 9, 10)(dev), _randn(8, 1, 3, 3, seed=2).to(dev),
                                 _randn(9, seed=3).to(dev)[1:]), PAD, ["depthwise_conv_fwd", FWD_VEC, WEIGHT_VEC]),
    # dilation 16: windows wider than the vector kernels unroll over
    "wide_dilation": (lambda dev: (_cl(2, 8, 36, 36)(dev), _randn(8, 1, 3, 3, seed=2).to(dev), None),
                      dict(padding=16, dilation=16), ["depthwise_conv_fwd", "depthwise_conv_fwd", WEIGHT_CL]),
    # an NCHW input: the scalar kernels along positions (as before the vector kernels)
    "nchw": (lambda dev: (_randn(2, 8, 9, 10, seed=1).to(dev), _randn(8, 1, 3, 3, seed=2).to(dev), None), PAD,
             ["depthwise_conv_fwd", "depthwise_conv_fwd", "depthwise_conv_bwd_weight"]),
}


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_vector_fallbacks(case):
    make, kw, expected = FALLBACKS[case]
    with tuning_entry("conv/depthwise", "VEC=1"):
        ran = _passes(make, gy_cl=case != "nchw", **kw)
    assert ran == [{k} for k in expected], ran


def test_vector_off_and_nchw_gradient():
    make = _channels_last((2, 8, 9, 10), (3, 3))
    # VEC=0: the scalar kernels on an input the vector ones take
    with tuning_entry("conv/depthwise", "VEC=0"):
        assert _passes(make, stride=2, padding=1) == [{"depthwise_conv_fwd"}, {"depthwise_conv_fwd"}, {WEIGHT_CL}]
    # an NCHW output gradient: the forward stays vector, the gradients read gy through its strides
    with tuning_entry("conv/depthwise", "VEC=1"):
        assert _passes(make, gy_cl=False, padding=1) == [{FWD_VEC}, {"depthwise_conv_fwd"}, {WEIGHT_CL}]


def test_vector_empty_batch():
    x = torch.zeros(0, 8, 6, 6, device="ocl").contiguous(memory_format=torch.channels_last).requires_grad_()
    w = torch.ones(8, 1, 3, 3, device="ocl", requires_grad=True)
    with tuning_entry("conv/depthwise", "VEC=1"):
        y = F.conv2d(x, w, groups=8, padding=1)
        y.sum().backward()
    assert y.shape == (0, 8, 6, 6) and x.grad.shape == x.shape
    assert torch.equal(w.grad.cpu(), torch.zeros(8, 1, 3, 3))


OPTIMIZED_CHECK = r"""
import torch
import torch.nn.functional as F
import torch_ocl
from tests.test_conv_depthwise import _channels_last, _expect_vector, _passes
torch_ocl._C._tuning_set(0, "conv/depthwise", "VEC=1")
# One geometry (the optimizer's builds are most of this check's time; a 7x7 filter alone took
# about a minute on a 2-core VM): stride and dilation along different dims, with a batch large
# enough for several groups of weight-gradient slices, so the group sum's barriers run.
kw = dict(stride=(2, 1), dilation=(1, 2), padding=2)
_expect_vector(_passes(_channels_last((40, 8, 11, 10), (3, 3)), **kw), kw)
print("ok")
"""


def test_vector_kernels_optimized():
    # The suite builds PoCL programs unoptimized (conftest); the vector kernels lean on the
    # optimizer (unrolled loops, dead loads, a group sum with barriers), so check its build too.
    env = dict(os.environ, TORCH_OCL_BUILD_OPTIONS="")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", OPTIMIZED_CHECK], env=env, capture_output=True, text=True, timeout=300,
                       cwd=root)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
