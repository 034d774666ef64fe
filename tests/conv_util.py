"""What the convolution test files share: seeded inputs, and a convolution's output and
gradients on one device, compared with another's."""
import torch


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
