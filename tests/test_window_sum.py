"""The sliding-window adjoint (kernels/windows.cl) behind F.fold, the transposed convolutions
and the convolutions' input gradient, in both of its kernels:
one work-item per element (the GPU default) and one per row (the CPU default), each forced
through the tuning entry "windows/sum_back" on whatever device runs the tests. Compared with
the CPU: 1-3 spatial dims, strides, dilations, paddings, rows longer than the row kernel's
64-position chunk, 16-bit and integer dtypes."""
import pytest
import torch
import torch.nn.functional as F

from torch_ocl import _C

from .conftest import requires_ocl

pytestmark = requires_ocl

KEY = "windows/sum_back"


@pytest.fixture(params=["elements", "rows"])
def kernel(request):
    _C._tuning_set(0, KEY, f"KERNEL={request.param}")
    try:
        yield request.param
    finally:
        _C._tuning_set(0, KEY, "")


def _randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


FOLDS = [  # (column shape's (C, H, W), fold kwargs)
    ((3, 7, 8), dict(kernel_size=2)),
    ((2, 9, 11), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))),
    ((2, 5, 150), dict(kernel_size=3, padding=1)),  # rows of 150: three chunks
    ((2, 6, 131), dict(kernel_size=(2, 5), padding=(0, 3), stride=(1, 3), dilation=(1, 2))),
    ((1, 4, 4), dict(kernel_size=4)),  # one window
]


@pytest.mark.parametrize("shape, kwargs", FOLDS, ids=range(len(FOLDS)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_fold(kernel, shape, kwargs, dtype):
    c, h, w = shape
    blocks = F.unfold(torch.zeros(2, c, h, w), **kwargs).shape
    cols = _randn(*blocks, dtype=dtype, seed=1)
    # 16-bit sums in float32, rounded once (the device's and CUDA's col2im; the CPU rounds each add).
    ref = F.fold(cols.float() if dtype == torch.float16 else cols, (h, w), **kwargs).to(dtype)
    out = F.fold(cols.to("ocl"), (h, w), **kwargs)
    torch.testing.assert_close(out.cpu(), ref)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride, padding, dilation", [(1, 0, 1), (2, 1, 1), (3, 2, 2)])
def test_conv_transpose(kernel, nd, stride, padding, dilation):
    size = {1: (70,), 2: (9, 67), 3: (4, 5, 66)}[nd]
    x = _randn(2, 3, *size, seed=2)
    w = _randn(3, 4, *([3] * nd), seed=3)
    f = getattr(F, f"conv_transpose{nd}d")
    ref = f(x, w, stride=stride, padding=padding, dilation=dilation)
    out = f(x.to("ocl"), w.to("ocl"), stride=stride, padding=padding, dilation=dilation)
    torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)


def test_conv_transpose_integer(kernel):
    x = torch.arange(2 * 3 * 5 * 70).view(2, 3, 5, 70) % 7 - 3
    w = torch.arange(3 * 4 * 3 * 3).view(3, 4, 3, 3) % 5 - 2
    ref = F.conv_transpose2d(x, w, stride=2, padding=1)
    torch.testing.assert_close(F.conv_transpose2d(x.to("ocl"), w.to("ocl"), stride=2, padding=1).cpu(), ref)


def test_conv_input_gradient(kernel):
    x = _randn(2, 4, 13, 75, seed=6).requires_grad_()
    w = _randn(5, 4, 3, 3, seed=7).requires_grad_()
    xd, wd = x.detach().to("ocl").requires_grad_(), w.detach().to("ocl").requires_grad_()
    F.conv2d(x, w, stride=(1, 2), padding=(2, 1), dilation=(2, 1)).square().sum().backward()
    F.conv2d(xd, wd, stride=(1, 2), padding=(2, 1), dilation=(2, 1)).square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(wd.grad.cpu(), w.grad, atol=1e-4, rtol=1e-4)


def test_empty(kernel):
    cols = torch.zeros(0, 12, 20)
    assert F.fold(cols.to("ocl"), (5, 6), 2).shape == F.fold(cols, (5, 6), 2).shape


def test_bad_tuning_entry_warns_and_keeps_default():
    _C._tuning_set(0, KEY, "KERNEL=diagonal")
    try:
        cols = _randn(1, 12, 20, seed=8)
        with pytest.warns(UserWarning, match="windows/sum_back"):
            out = F.fold(cols.to("ocl"), (5, 6), 2)
        torch.testing.assert_close(out.cpu(), F.fold(cols, (5, 6), 2))
    finally:
        _C._tuning_set(0, KEY, "")
