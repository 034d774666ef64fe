"""Winograd F(2x2, 3x3) convolutions (ops/winograd.cpp, kernels/winograd.cl): 3x3 filters at
stride 1, undilated, one group, float32, for 32 channels or more (64 on CPU devices); here the
tuning entry "conv/winograd" lowers that to one channel. Output, input gradient,
weight gradient and bias gradient against the CPU: paddings 0-2 and unequal ones, odd sizes
(partial 2x2 tiles), channels_last and strided inputs, transposed convolutions, chunks of
samples, slices of the weight gradient's tiles; shapes Winograd declines agree too."""
import pytest
import torch
import torch.nn.functional as F

from torch_ocl import _C

from .conftest import requires_ocl
from .conv_util import assert_invalid_entry_warns, compare, randn as _randn, tuning_entry

pytestmark = requires_ocl

KEY = "conv/winograd"
KERNELS = ("winograd_input_tf", "winograd_filter_tf", "winograd_output_tf", "winograd_grad_tf", "winograd_weight_tf")


@pytest.fixture
def winograd():
    """Winograd on for any channel count; the test may add keys through the returned setter."""
    def set_entry(extra=""):
        _C._tuning_set(0, KEY, f"ENABLE=1 MIN_CHANNELS=1 {extra}")
    with tuning_entry(KEY, "ENABLE=1 MIN_CHANNELS=1"):
        yield set_entry


def _check(f, x, w, b=None, *, winograd_runs=True, **kw):
    """f on ocl against the CPU; winograd_runs: whether the Winograd kernels must (True) or must
    not (False) have run."""
    counts = compare(f, x, w, b, dict(atol=3e-4, rtol=3e-4), **kw)
    ran = [k for k in KERNELS if counts.get(k, 0) > 0]
    if winograd_runs:
        assert sorted(ran) == sorted(KERNELS), f"Winograd kernels that ran: {ran}"
    else:
        assert not ran, f"Winograd ran for a shape it must decline: {ran}"


@pytest.mark.parametrize("xs, ws, padding", [
    ((2, 8, 8, 8), (16, 8), 1),
    ((2, 8, 7, 9), (5, 8), 1),  # odd sizes: partial tiles on both edges
    ((3, 5, 6, 5), (7, 5), 0),
    ((1, 4, 3, 3), (4, 4), 2),  # most of every patch is padding
    ((2, 6, 9, 4), (6, 6), (2, 0)),
    ((1, 3, 1, 1), (2, 3), 1),  # one pixel
    ((1, 3, 4, 5), (2, 3), 3),  # the input gradient's padding 2 - 3 is negative
    ((2, 64, 14, 14), (64, 64), 1),
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(winograd, xs, ws, padding, bias):
    w = _randn(ws[0], ws[1], 3, 3, seed=2)
    b = _randn(ws[0], seed=3) if bias else None
    _check(F.conv2d, _randn(*xs, seed=1), w, b, padding=padding)


@pytest.mark.parametrize("case", ["input", "weight", "both"])
def test_channels_last(winograd, case):
    cl = torch.channels_last
    x, w = _randn(2, 12, 9, 10, seed=1), _randn(8, 12, 3, 3, seed=2)
    if case in ("input", "both"):
        x = x.contiguous(memory_format=cl)
    if case in ("weight", "both"):
        w = w.contiguous(memory_format=cl)
    _check(F.conv2d, x, w, _randn(8, seed=3), padding=1)
    # The output and the gradients take the CPU's memory format.
    y = F.conv2d(x.to("ocl"), w.to("ocl"), padding=1)
    assert y.is_contiguous(memory_format=cl) == F.conv2d(x, w, padding=1).is_contiguous(memory_format=cl)


def test_strided_views(winograd):
    # Inputs, weights and gradients that are views with offsets and gaps are read in place.
    xv = _randn(2, 10, 14, 25, seed=1)[:, 1:9, 1::2, ::3]
    wv = _randn(12, 8, 5, 5, seed=2)[::2, :, 1:4, 1:4]
    x, w = xv.to("ocl"), wv.to("ocl")
    torch.testing.assert_close(F.conv2d(x, w, padding=1).cpu(), F.conv2d(xv, wv, padding=1), atol=3e-4, rtol=3e-4)
    gy = _randn(2, 6, 7, 9, seed=3)[:, :, :, ::1].transpose(2, 3).contiguous().transpose(2, 3)
    args = ([1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
    got = torch.ops.aten.convolution_backward(gy.to("ocl"), x, w, None, *args)
    ref = torch.ops.aten.convolution_backward(gy, xv, wv, None, *args)
    for g, r in zip(got[:2], ref[:2]):
        torch.testing.assert_close(g.cpu(), r, atol=3e-4, rtol=3e-4)


def test_conv_transpose2d(winograd):
    # The transposed convolution's forward is the convolution's input gradient, its input
    # gradient the forward, its weight gradient the weight gradient with roles swapped.
    _check(F.conv_transpose2d, _randn(2, 8, 7, 6, seed=1), _randn(8, 6, 3, 3, seed=2), _randn(6, seed=3), padding=1)
    _check(F.conv_transpose2d, _randn(2, 8, 5, 5, seed=1), _randn(8, 6, 3, 3, seed=2), None, padding=0)


@pytest.mark.parametrize("entry", ["CHUNK_TILES=7", "CHUNK_TILES=1", "SLICES=3", "SLICES=1000",
                                   "CHUNK_TILES=20 SLICES=2"])
@pytest.mark.parametrize("cl", [False, True], ids=["nchw", "channels_last"])
def test_chunks_and_slices(winograd, entry, cl):
    # Samples in chunks (each chunk its own transforms and product; the weight gradient's chunks
    # add up in the output transform), the weight gradient's tiles in slices, more slices than
    # tiles; tile-innermost and (channels_last) channel-innermost transforms.
    winograd(entry)
    x = _randn(5, 6, 9, 7, seed=1)
    _check(F.conv2d, x.contiguous(memory_format=torch.channels_last) if cl else x, _randn(4, 6, 3, 3, seed=2),
           _randn(4, seed=3), padding=1)


@pytest.mark.parametrize("case", ["float64", "stride", "dilation", "groups", "5x5", "conv1d", "conv3d", "few_channels"])
def test_declined_shapes_agree(winograd, case):
    if case == "few_channels":
        winograd("MIN_CHANNELS=16")
    x, w, kw, f = _randn(2, 8, 9, 9, seed=1), _randn(4, 8, 3, 3, seed=2), dict(padding=1), F.conv2d
    if case == "float64":
        x, w = x.double(), w.double()
    elif case == "stride":
        kw["stride"] = 2
    elif case == "dilation":
        kw["dilation"] = 2
    elif case == "groups":
        w, kw["groups"] = w[:, :4], 2
    elif case == "5x5":
        w = _randn(4, 8, 5, 5, seed=2)
    elif case == "conv1d":
        x, w, f = x[:, :, 0], w[:, :, 0], F.conv1d
    elif case == "conv3d":
        x, w, f = _randn(2, 8, 4, 5, 5, seed=1), _randn(4, 8, 3, 3, 3, seed=2), F.conv3d
    _check(f, x, w, winograd_runs=False, **kw)


def test_empty_batch(winograd):
    x, w = torch.zeros(0, 4, 6, 6), _randn(3, 4, 3, 3, seed=2)
    y = F.conv2d(x.to("ocl"), w.to("ocl"), padding=1)
    assert y.shape == (0, 3, 6, 6)


def test_invalid_tuning_entry_warns():
    assert_invalid_entry_warns(KEY, "ENABLE=2", _randn(1, 4, 5, 5, seed=1), _randn(4, 4, 3, 3, seed=2),
                               dict(atol=3e-4, rtol=3e-4))
