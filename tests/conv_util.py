"""What the convolution test files share: seeded inputs, a convolution's output and gradients on
one device compared with the CPU's, and tuning entries set for a block."""
import contextlib
import warnings

import torch
import torch.nn.functional as F


def randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def run(f, x, w, b, dev, **kw):
    """f(x, w, b, **kw)'s output and the gradients of x, w and b (b may be None) on `dev`, as CPU
    tensors, for the output gradient linspace(-1, 1); x and w keep their memory format."""
    xs = x.to(dev).detach().requires_grad_()
    ws = w.to(dev).detach().requires_grad_()
    bs = b.to(dev).detach().requires_grad_() if b is not None else None
    y = f(xs, ws, bs, **kw)
    gy = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape).to(dev)
    (y * gy).sum().backward()
    grads = (xs.grad, ws.grad, bs.grad if bs is not None else None)
    return [t.detach().cpu() if t is not None else None for t in (y, *grads)]


def assert_match(got, ref, **tol):
    """run()'s results on two devices agree (those that exist)."""
    for name, r, g in zip(["output", "grad_input", "grad_weight", "grad_bias"], ref, got):
        if r is not None:
            torch.testing.assert_close(g, r, **tol, msg=lambda m: f"{name}: {m}")


def compare(f, x, w, b, tol, **kw):
    """run() on ocl agrees with the CPU within tol; returns the ocl run's kernel launch counts."""
    ref = run(f, x, w, b, "cpu", **kw)
    torch.ocl._reset_launch_counts()
    got = run(f, x, w, b, "ocl", **kw)
    counts = torch.ocl._launch_counts()
    assert_match(got, ref, **tol)
    return counts


@contextlib.contextmanager
def tuning_entry(key, value):
    """ocl:0's tuning entry `key` set to `value` for the block, then cleared."""
    from torch_ocl import _C
    _C._tuning_set(0, key, value)
    try:
        yield
    finally:
        _C._tuning_set(0, key, "")


def assert_invalid_entry_warns(key, value, x, w, tol, **kw):
    """With the tuning entry `key` set to the invalid `value`, F.conv2d(x, w, **kw) on ocl still
    agrees with the CPU, and a warning names the entry."""
    with tuning_entry(key, value), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(F.conv2d(x.to("ocl"), w.to("ocl"), **kw).cpu(), F.conv2d(x, w, **kw), **tol)
    assert any(key in str(c.message) for c in caught), [str(c.message) for c in caught]
