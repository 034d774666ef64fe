"""torch.fft on ocl beyond the per-op cases (tests/opcases/fft.py): accuracy against a float64
reference (float32 errors grow like log n, as pocketfft/MKL's do), the recursive four-step path
of very long transforms, empty batches (which the CPU's MKL refuses, so they cannot be compared
with it), gradients of complex leaves (the op harness differentiates real leaves only), and
that nothing falls back to the CPU."""
import math

import pytest
import torch

from .conftest import requires_ocl

DEV = "ocl"
pytestmark = requires_ocl


def _rel(a, ref):
    a = a.cpu().to(ref.dtype)
    return ((a - ref).norm() / ref.norm()).item()


# 4095 = 3^2 5 7 13 fits local memory but not a work-item's registers (four-step); 8192: a
# real transform packed as 4096 complex points, its 4097 outputs one more than the work-items
# hold; 4096: one work-group.
@pytest.mark.parametrize("n", [2, 16, 97, 1024, 1009, 4095, 4096, 4099, 8192, 19683, 65536, 65521])
def test_float32_accuracy_grows_like_log_n(n):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(3, n, dtype=torch.complex64, generator=g)
    ref = torch.fft.fft(x.to(torch.complex128))
    # 2-3e-7 at n = 2^16 here (the CPU's float32 FFT: about the same); the bound leaves room.
    bound = 6e-8 * (1 + math.log2(n))
    assert _rel(torch.fft.fft(x.to(DEV)), ref) < bound
    r = x.real.contiguous()
    assert _rel(torch.fft.rfft(r.to(DEV)), torch.fft.rfft(r.double())) < bound
    spec = torch.fft.rfft(r)
    assert _rel(torch.fft.irfft(spec.to(DEV), n=n), torch.fft.irfft(spec.to(torch.complex128), n=n)) < bound


def test_recursive_four_step():
    # 3^13 points of complex128: no split into two factors that each fit one work-group (2048
    # points), so the second factor (3^7) is split again.
    n = 3**13
    x = torch.randn(1, n, dtype=torch.complex128)
    torch.testing.assert_close(torch.fft.fft(x.to(DEV), norm="ortho").cpu(), torch.fft.fft(x, norm="ortho"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_empty_batches(dtype):
    cdt = torch.complex64 if dtype == torch.float32 else torch.complex128
    x = torch.zeros(0, 10, dtype=dtype, device=DEV)
    z = torch.zeros(0, 6, dtype=cdt, device=DEV)
    assert torch.fft.fft(z).shape == (0, 6) and torch.fft.fft(z).dtype == cdt
    assert torch.fft.rfft(x).shape == (0, 6)
    assert torch.fft.irfft(z).shape == (0, 10) and torch.fft.irfft(z).dtype == dtype
    assert torch.fft.fft2(torch.zeros(2, 0, 5, 3, dtype=cdt, device=DEV)).shape == (2, 0, 5, 3)
    assert torch.fft.rfftn(torch.zeros(0, 4, 5, dtype=dtype, device=DEV), dim=(1, 2)).shape == (0, 4, 3)
    out = torch.empty(3, dtype=cdt, device=DEV)
    torch.fft.fft(z, out=out)
    assert out.shape == (0, 6)
    # A transform over a size-0 dim is refused, as the front end refuses it on every device.
    with pytest.raises(RuntimeError):
        torch.fft.fft(torch.zeros(3, 0, dtype=cdt, device=DEV))


def test_complex_leaf_gradients():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(3, 12, dtype=torch.complex64, generator=g)
    w = torch.randn(12, dtype=torch.complex64, generator=g)

    def loss(z, w):
        a = torch.fft.fft(z) * w
        b = torch.fft.irfft(z, n=21)
        c = torch.fft.ifft2(z, norm="ortho")
        d = torch.fft.hfft(z)
        return (a * a.conj()).real.sum() + b.pow(2).sum() + c.abs().sum() + d.sin().sum()

    zc = z.clone().requires_grad_()
    loss(zc, w).backward()
    zd = z.to(DEV).requires_grad_()
    loss(zd, w.to(DEV)).backward()
    torch.testing.assert_close(zd.grad.cpu(), zc.grad, rtol=1e-4, atol=1e-4)


def test_no_fallback():
    x = torch.randn(2, 3, 40)
    with torch.ocl._no_fallback():
        xd = x.to(DEV)
        z = torch.fft.fftn(xd, dim=(0, 2))
        torch.fft.irfftn(torch.fft.rfftn(xd), s=x.shape)
        torch.fft.ihfftn(xd)
        torch.fft.hfft2(z)
        w = torch.hann_window(16, device=DEV)
        s = torch.stft(xd[0], 16, 4, window=w, return_complex=True)
        torch.istft(s, 16, 4, window=w, length=40)
    assert z.device.type == DEV


def test_equal_across_devices_raises():
    with pytest.raises(RuntimeError):
        torch.equal(torch.ones(2, device=DEV), torch.ones(2))
