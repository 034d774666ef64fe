"""complex64/complex128 on ocl beyond the per-op cases (tests/opcases/complex.py): ops without a
complex kernel run on the CPU fallback (csrc/aten/Routing.h) and agree with the CPU, lazy
conjugate/negative bits reach no kernel unresolved, and autograd, FFTs and torch.save work
with complex tensors."""
import io

import pytest
import torch

DEV = "ocl"


def _c(shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=dtype, generator=g)


def _fell_back(before):
    return {k for k, v in torch.ocl.fallback_counts().items() if v != before.get(k, 0)}


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_ops_match_cpu(dtype):
    a, b = _c((6, 5), dtype, 1), _c((5, 4), dtype, 2)
    cases = {
        "sin": lambda x, y: torch.sin(x),
        "asin": lambda x, y: torch.asin(x),
        "mm": lambda x, y: x @ y,
        "mm_conj": lambda x, y: x.conj() @ y,
        "sum": lambda x, y: x.sum(0),
        "mean": lambda x, y: x.mean(),
        "cat": lambda x, y: torch.cat([x, x * 2], 1),
        "index_select": lambda x, y: x.index_select(0, torch.tensor([4, 0, 2], device=x.device)),
        "tanh": lambda x, y: torch.tanh(x),
        "cumsum": lambda x, y: x.cumsum(0),
        "pow": lambda x, y: x ** 2.5,
    }
    for name, fn in cases.items():
        expected = fn(a, b)
        before = torch.ocl.fallback_counts()
        actual = fn(a.to(DEV), b.to(DEV))
        assert actual.device.type == DEV, name
        torch.testing.assert_close(actual.cpu(), expected, msg=name)
        # Those in `native` run on the device; the rest is routed to the CPU and counted like
        # any other fallback.
        native = ("sin", "tanh", "mm", "mm_conj", "sum", "mean", "cat", "index_select", "cumsum")
        assert bool(_fell_back(before)) == (name not in native), name


def test_real_kernels_never_see_complex_or_bits():
    # A real tensor with the negative bit (x.conj().imag) into ops ATen passes bits through to.
    x = _c((4, 4), seed=3)
    n = x.conj().imag
    assert n.is_neg()
    w = torch.randn(4, 3)
    nd = x.to(DEV).conj().imag
    assert nd.is_neg()
    torch.testing.assert_close((nd @ w.to(DEV)).cpu(), n @ w)
    torch.testing.assert_close(torch.mv(nd, w[:, 0].to(DEV)).cpu(), torch.mv(n, w[:, 0]))
    a = torch.eye(4) * 2 + torch.triu(torch.randn(4, 4), 1)
    torch.testing.assert_close(torch.linalg.solve_triangular(a.to(DEV), nd, upper=True).cpu(),
                               torch.linalg.solve_triangular(a, n, upper=True))


def test_complex_autograd():
    z = _c((3, 4), seed=4)
    w = _c((4,), seed=5)

    def loss(z, w):
        y = (z * w).exp() / (z.abs() + 1)
        return (y * y.conj()).real.sum() + torch.view_as_real(z.sqrt()).sum()

    zc, wc = z.clone().requires_grad_(), w.clone().requires_grad_()
    loss(zc, wc).backward()
    zd, wd = z.to(DEV).requires_grad_(), w.to(DEV).requires_grad_()
    loss(zd, wd).backward()
    torch.testing.assert_close(zd.grad.cpu(), zc.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad, rtol=1e-4, atol=1e-5)


def test_fft_round_trip():
    x = torch.randn(4, 64)
    X = torch.fft.rfft(x.to(DEV))
    assert X.device.type == DEV and X.dtype == torch.complex64
    torch.testing.assert_close(X.cpu(), torch.fft.rfft(x), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch.fft.irfft(X, n=64).cpu(), x, rtol=1e-4, atol=1e-4)
    z = _c((8, 16), seed=6)
    torch.testing.assert_close(torch.fft.ifft(torch.fft.fft(z.to(DEV))).cpu(), z, rtol=1e-4, atol=1e-5)


def test_save_load_complex():
    z = _c((3, 5), torch.complex128, seed=7).to(DEV)
    buf = io.BytesIO()
    torch.save({"z": z, "zc": z.conj()}, buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["z"].device.type == DEV and back["z"].dtype == torch.complex128
    torch.testing.assert_close(back["z"].cpu(), z.cpu())
    torch.testing.assert_close(back["zc"].resolve_conj().cpu(), z.cpu().conj())


def test_complex_half_is_refused():
    with pytest.raises((NotImplementedError, RuntimeError)):
        torch.zeros(3, dtype=torch.complex32, device=DEV)
    # The device stays usable.
    assert torch.ones(2, device=DEV).sum().item() == 2


def test_complex_random_draws_on_device():
    # ATen's normal_/uniform_ draw complex tensors through view_as_real: each part N(mean, std^2/2)
    # (so E|z|^2 = std^2) or U[from, to).
    before = torch.ocl.fallback_counts()
    torch.manual_seed(0)
    z = torch.randn(200000, dtype=torch.complex64, device=DEV)
    u = torch.rand(200000, dtype=torch.complex128, device=DEV)
    assert not _fell_back(before)
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs((z.abs() ** 2).mean().item() - 1.0) < 0.02
    assert 0 <= u.real.min().item() and u.imag.max().item() < 1 and abs(u.imag.mean().item() - 0.5) < 0.01
    torch.manual_seed(0)
    torch.testing.assert_close(torch.randn(200000, dtype=torch.complex64, device=DEV).cpu(), z.cpu())
