"""nn.LSTM, nn.GRU, nn.RNN and their Cell modules on the device against the CPU: outputs, final
states and every gradient (the cells are tests/opcases/rnn.py's fused ops; the rest is GEMM and
pointwise work), with no op falling back to the CPU."""
import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl

MODULES = [
    (torch.nn.LSTM, dict(num_layers=2)),
    (torch.nn.LSTM, dict(bidirectional=True, batch_first=True)),
    (torch.nn.LSTM, dict(bias=False, proj_size=3)),
    (torch.nn.GRU, dict(num_layers=2, bidirectional=True)),
    (torch.nn.GRU, dict(bias=False, batch_first=True)),
    (torch.nn.RNN, dict(nonlinearity="tanh", num_layers=2)),
    (torch.nn.RNN, dict(nonlinearity="relu", bidirectional=True)),
]


def _state_sum(h):
    return sum(t.sum() for t in h) if isinstance(h, tuple) else h.sum()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("cls, kwargs", MODULES, ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_recurrent_module_matches_cpu(cls, kwargs, dtype):
    torch.ocl.reset_fallback_counts()
    torch.manual_seed(0)
    ref = cls(6, 5, **kwargs).to(dtype)
    dev = cls(6, 5, **kwargs).to(dtype).to("ocl")
    dev.load_state_dict(ref.state_dict())
    x = torch.randn(7, 4, 6, dtype=dtype, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    y, h = ref(x)
    yd, hd = dev(xd)
    (y.square().sum() + _state_sum(h)).backward()
    (yd.square().sum() + _state_sum(hd)).backward()
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(yd.cpu(), y, **tol)
    for a, b in zip(hd if isinstance(hd, tuple) else (hd,), h if isinstance(h, tuple) else (h,)):
        torch.testing.assert_close(a.cpu(), b, **tol)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, **tol)
    for (name, p), q in zip(ref.named_parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, **tol, msg=lambda m: f"{name}: {m}")
    assert torch.ocl.fallback_counts() == {}


@pytest.mark.parametrize("cls", [torch.nn.LSTMCell, torch.nn.GRUCell, torch.nn.RNNCell])
@pytest.mark.parametrize("batched", [True, False])
def test_recurrent_cell_matches_cpu(cls, batched):
    torch.ocl.reset_fallback_counts()
    torch.manual_seed(1)
    ref = cls(6, 5)
    dev = cls(6, 5).to("ocl")
    dev.load_state_dict(ref.state_dict())
    x = torch.randn(3, 6) if batched else torch.randn(6)
    steps_ref, steps_dev = [], []
    state_ref = state_dev = None
    for _ in range(3):  # state carried across steps, as in a decoding loop
        state_ref = ref(x, state_ref)
        state_dev = dev(x.to("ocl"), state_dev)
        steps_ref.append(state_ref[0] if isinstance(state_ref, tuple) else state_ref)
        steps_dev.append(state_dev[0] if isinstance(state_dev, tuple) else state_dev)
    sum(s.sum() for s in steps_ref).backward()
    sum(s.sum() for s in steps_dev).backward()
    for a, b in zip(steps_dev, steps_ref):
        torch.testing.assert_close(a.cpu(), b, atol=1e-5, rtol=1e-4)
    for p, q in zip(ref.parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-5, rtol=1e-4)
    assert torch.ocl.fallback_counts() == {}
