"""nn.LSTM, nn.GRU and nn.RNN as whole sequences, padded or packed (csrc/ops/rnn_sequence.cpp):
outputs, final states and every gradient against the CPU over layers, directions, batch_first,
biases, strided inputs, shrinking and unsorted packed batches and dtypes; gradients from each
output alone; dropout between layers (finite differences under a fixed seed); double backward;
frozen weights; inference mode; the launch count per step; and the calls that go to ATen's
composite (projections, bad arguments)."""
import functools

import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl

CLASSES = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN": functools.partial(torch.nn.RNN, nonlinearity="tanh"),
           "RNN_RELU": functools.partial(torch.nn.RNN, nonlinearity="relu")}
KINDS = list(CLASSES)


def _pair(kind, dtype=torch.float64, seed=0, **kw):
    torch.manual_seed(seed)
    ref = CLASSES[kind](kw.pop("input_size", 6), kw.pop("hidden_size", 5), **kw).to(dtype)
    dev = CLASSES[kind](ref.input_size, ref.hidden_size, **{k: getattr(ref, k) for k in (
        "num_layers", "bias", "batch_first", "dropout", "bidirectional")}).to(dtype).to("ocl")
    dev.load_state_dict(ref.state_dict())
    return ref, dev


def _states(h):
    return h if isinstance(h, tuple) else (h,)


def _state0(kind, ref, batch, dtype, seed=5):
    g = torch.Generator().manual_seed(seed)
    shape = (ref.num_layers * (2 if ref.bidirectional else 1), batch, ref.hidden_size)
    h0 = torch.randn(shape, generator=g, dtype=dtype)
    return (h0, torch.randn(shape, generator=g, dtype=dtype)) if kind == "LSTM" else h0


def _to(h, device, grad=False):
    if isinstance(h, tuple):
        return tuple(_to(t, device, grad) for t in h)
    return h.detach().to(device).requires_grad_(grad)


def _run(module, x, h0, loss_of):
    y, h = module(x, h0) if h0 is not None else module(x)
    loss_of(y, _states(h)).backward()
    return y, h


def _compare(kind, kwargs, *, x_shape=(7, 4, 6), with_h0=True, loss="all", dtype=torch.float64, x_view=None):
    ref, dev = _pair(kind, dtype, **kwargs)
    view = x_view or (lambda t: t)
    base = torch.randn(*x_shape, dtype=dtype)
    x = view(base.clone()).requires_grad_()
    xd = view(base.to("ocl")).requires_grad_()  # the same view on the device, strides and all
    batch = x.shape[0] if ref.batch_first else x.shape[1]
    h0 = _state0(kind, ref, batch, dtype) if with_h0 else None
    h0r = _to(h0, "cpu", True) if with_h0 else None
    h0d = _to(h0, "ocl", True) if with_h0 else None

    def loss_of(y, hs):
        terms = {"output": y.square().sum(), "h": hs[0].square().sum() * 0.5,
                 "c": hs[-1].square().sum() * 0.25}
        if loss == "all":
            return sum(terms.values())
        return terms[loss]

    torch.ocl.reset_fallback_counts()
    y, h = _run(ref, x, h0r, loss_of)
    yd, hd = _run(dev, xd, h0d, loss_of)
    _check(list(zip((yd,) + _states(hd), (y,) + _states(h))), xd, x, h0d, h0r, dev, ref, dtype)
    assert torch.ocl.fallback_counts() == {}


def _check(outputs, xd, x, h0d, h0r, dev, ref, dtype):
    """(device, CPU) output pairs, then the gradients of the input, the initial state (if
    given) and every parameter."""
    tol = dict(atol=1e-10, rtol=1e-9) if dtype == torch.float64 else dict(atol=2e-5, rtol=1e-4)
    for a, b in outputs:
        torch.testing.assert_close(a.cpu(), b, **tol)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, **tol)
    if h0d is not None:
        for a, b in zip(_states(h0d), _states(h0r)):
            torch.testing.assert_close(a.grad.cpu(), b.grad, **tol)
    for (name, p), q in zip(ref.named_parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, **tol, msg=lambda m: f"{name}: {m}")


CONFIGS = [
    dict(),
    dict(num_layers=3),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(bias=False, num_layers=2),
    dict(batch_first=True, bias=False, bidirectional=True),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("kwargs", CONFIGS, ids=str)
def test_sequence_matches_cpu(kind, kwargs):
    _compare(kind, kwargs, x_shape=(4, 7, 6) if kwargs.get("batch_first") else (7, 4, 6))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loss", ["output", "h", "c"])
def test_gradient_from_one_output(kind, loss):
    # The other outputs' gradients are undefined in the backward.
    _compare(kind, dict(num_layers=2, bidirectional=True), loss=loss)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape, kwargs", [
    ((1, 3, 6), dict(num_layers=2, bidirectional=True)),     # one step
    ((5, 1, 6), dict(bidirectional=True)),                   # batch of one
    ((3, 2, 1), dict(input_size=1, hidden_size=1, num_layers=2)),
    ((33, 9, 6), dict(input_size=6, hidden_size=40)),        # odd sizes, more than a work-group
], ids=str)
def test_odd_shapes(kind, shape, kwargs):
    _compare(kind, kwargs, x_shape=shape)


@pytest.mark.parametrize("kind", KINDS)
def test_default_state_and_strided_input(kind):
    _compare(kind, dict(num_layers=2), with_h0=False)
    # A transposed input (batch-major memory for a time-major module) and a stepped view.
    _compare(kind, dict(bidirectional=True), x_shape=(4, 7, 6), x_view=lambda t: t.transpose(0, 1))
    _compare(kind, dict(batch_first=True), x_shape=(4, 7, 12), x_view=lambda t: t[..., ::2])


@pytest.mark.parametrize("kind", KINDS)
def test_float32(kind):
    _compare(kind, dict(num_layers=2, bidirectional=True), dtype=torch.float32)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit(kind, dtype):
    # The CPU in float32 on the same (rounded) values; the device keeps 16-bit storage between
    # steps, so the tolerance is the dtype's.
    ref, dev = _pair(kind, torch.float32, num_layers=2)
    dev = dev.to(dtype)
    ref.load_state_dict({k: v.to(dtype).float() for k, v in ref.state_dict().items()})
    x = torch.randn(6, 3, 6).to(dtype)
    xr = x.float().requires_grad_()
    xd = x.to("ocl").requires_grad_()
    y, _ = ref(xr)
    yd, hd = dev(xd)
    assert yd.dtype == dtype and _states(hd)[0].dtype == dtype
    y.sum().backward()
    yd.float().sum().backward()
    tol = dict(atol=3e-2, rtol=3e-2)
    torch.testing.assert_close(yd.float().cpu(), y, **tol)
    torch.testing.assert_close(xd.grad.float().cpu(), xr.grad, **tol)
    for p, q in zip(ref.parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.float().cpu(), p.grad, **tol)


@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck(kind):
    ref, dev = _pair(kind, torch.float64, input_size=3, hidden_size=2, num_layers=2, bidirectional=True)
    x = torch.randn(3, 2, 3, dtype=torch.float64, device="ocl", requires_grad=True)
    params = list(dev.parameters())

    def f(x, *ps):
        with torch.no_grad():
            for p, v in zip(params, ps):
                p.set_(v)
        y, h = torch.func.functional_call(dev, dict(zip([n for n, _ in dev.named_parameters()], ps)), (x,))
        return (y,) + _states(h)

    # functional_call swaps the parameters for the inputs, so the Function sees them as inputs.
    inputs = (x,) + tuple(p.detach().clone().requires_grad_() for p in params)
    assert torch.autograd.gradcheck(lambda x, *ps: f(x, *ps), inputs, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_dropout_between_layers(kind):
    ref, dev = _pair(kind, torch.float64, input_size=3, hidden_size=4, num_layers=3, dropout=0.5)
    x = torch.randn(4, 2, 3, dtype=torch.float64)
    # Evaluation mode: no dropout, the CPU's result.
    dev.eval(), ref.eval()
    torch.testing.assert_close(dev(x.to("ocl"))[0].cpu(), ref(x)[0], atol=1e-10, rtol=1e-9)
    dev.train()
    xd = x.to("ocl").requires_grad_()

    def f(xd):
        torch.manual_seed(123)
        return dev(xd)[0]

    y1, y2 = f(xd), f(xd)
    torch.testing.assert_close(y1, y2)  # same seed, same masks
    torch.manual_seed(7)
    assert not torch.equal(dev(xd)[0], y1)  # another seed drops other units
    # The masks and their scale in the backward: finite differences under the fixed seed.
    assert torch.autograd.gradcheck(f, (xd,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_double_backward(kind):
    ref, dev = _pair(kind, torch.float64, num_layers=2, bidirectional=True)
    x = torch.randn(5, 3, 6, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    for m, inp in ((ref, x), (dev, xd)):
        y, _ = m(inp)
        (g,) = torch.autograd.grad(y.square().sum(), inp, create_graph=True)
        g.square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad, atol=1e-9, rtol=1e-8)
    for p, q in zip(ref.parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-9, rtol=1e-8)


def test_double_backward_with_dropout_raises():
    dev = torch.nn.LSTM(3, 4, num_layers=2, dropout=0.3).double().to("ocl")
    x = torch.randn(4, 2, 3, dtype=torch.float64, device="ocl", requires_grad=True)
    y, _ = dev(x)
    with pytest.raises(NotImplementedError, match="double backward"):
        torch.autograd.grad(y.sum(), x, create_graph=True)
    dev.eval()  # no dropout in evaluation mode: supported
    y, _ = dev(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()


@pytest.mark.parametrize("kind", KINDS)
def test_frozen_weights_and_plain_input(kind):
    ref, dev = _pair(kind, torch.float64, num_layers=2)
    for m in (ref, dev):
        m.weight_ih_l0.requires_grad_(False)
        m.bias_hh_l1.requires_grad_(False)
    x = torch.randn(5, 3, 6, dtype=torch.float64)  # no gradient wanted for the input
    ref(x)[0].sum().backward()
    dev(x.to("ocl"))[0].sum().backward()
    for (name, p), q in zip(ref.named_parameters(), dev.parameters()):
        if p.requires_grad:
            torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-10, rtol=1e-9)
        else:
            assert q.grad is None, name


@pytest.mark.parametrize("kind", KINDS)
def test_inference_mode_and_no_grad(kind):
    ref, dev = _pair(kind, torch.float64, num_layers=2, bidirectional=True)
    x = torch.randn(5, 3, 6, dtype=torch.float64)
    y = ref(x)[0]
    with torch.inference_mode():
        yd = dev(x.to("ocl"))[0]
    assert yd.grad_fn is None
    torch.testing.assert_close(yd.cpu(), y, atol=1e-10, rtol=1e-9)
    with torch.no_grad():
        yd = dev(x.to("ocl").requires_grad_())[0]
    assert yd.grad_fn is None and not yd.requires_grad
    torch.testing.assert_close(yd.cpu(), y, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("batch_first", [False, True])
def test_output_modified_in_place_is_caught(batch_first):
    dev = torch.nn.GRU(3, 4, batch_first=batch_first).to("ocl")
    y, _ = dev(torch.randn(5, 2, 3, device="ocl", requires_grad=True))
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("kind", KINDS)
def test_launches_per_step(kind):
    # Per layer and direction: forward one input product + per step a product and a cell;
    # backward per step a cell and a product, plus a fixed number of products and sums.
    # (CPU devices pack a GEMM operand in a launch of its own: products are counted as
    # gemm_* launches other than gemm_pack_*.)
    T = 12
    m = CLASSES[kind](8, 16).to("ocl")
    x = torch.randn(T, 4, 8, device="ocl", requires_grad=True)

    def counts(fn, cell):
        torch.ocl.synchronize()
        torch.ocl._reset_launch_counts()
        out = fn()
        torch.ocl.synchronize()
        c = {k: v for k, v in torch.ocl._launch_counts().items() if v and not k.startswith("gemm_pack")}
        products = sum(v for k, v in c.items() if k.startswith("gemm_"))
        return out, c.get(cell, 0), products, sum(c.values())

    cell = {"LSTM": "lstm_cell", "GRU": "gru_cell"}.get(kind, "rnn_cell")
    y, cells, products, total = counts(lambda: m(x)[0], cell + "_fwd")
    assert (cells, products) == (T, T + 1) and total <= 2 * T + 4, (cells, products, total)
    _, cells, products, total = counts(lambda: y.sum().backward(), cell + "_bwd")
    assert cells == T and products <= T + 4 and total <= 2 * T + 10, (cells, products, total)


def test_packed_sequence_matches_cpu():
    # Through pad_packed_sequence, as model code uses it.
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    ref, dev = _pair("LSTM", torch.float64, num_layers=2, bidirectional=True)
    x = torch.randn(6, 3, 6, dtype=torch.float64)
    lengths = torch.tensor([6, 4, 2])
    y, _ = ref(pack_padded_sequence(x, lengths))
    yd, _ = dev(pack_padded_sequence(x.to("ocl"), lengths))
    torch.testing.assert_close(pad_packed_sequence(yd)[0].cpu(), pad_packed_sequence(y)[0], atol=1e-10, rtol=1e-9)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


@pytest.mark.parametrize("case", ["hx dtype", "hx shape", "param count", "weight shape", "empty seq"])
def test_bad_arguments_raise_as_on_cpu(case):
    # Direct calls, past nn.LSTM's own checks; they take ATen's composite, as on the CPU
    # without oneDNN (whose kernel checks differently).
    torch.manual_seed(0)
    m = torch.nn.LSTM(3, 4)
    params = [p.detach() for p in m._flat_weights]

    def call(device):
        x = torch.randn(5, 2, 3, device=device)
        hx = [torch.zeros(1, 2, 4, device=device), torch.zeros(1, 2, 4, device=device)]
        ps = [p.to(device) for p in params]
        if case == "hx dtype":
            hx = [h.double() for h in hx]
        elif case == "hx shape":
            hx = [torch.zeros(1, 3, 4, device=device)] * 2
        elif case == "param count":
            ps = ps[:3]
        elif case == "weight shape":
            ps[1] = ps[1][:, :3]
        elif case == "empty seq":
            x = x[:0]
        return torch.lstm(x, hx, ps, True, 1, 0.0, False, False, False)

    with torch.backends.mkldnn.flags(enabled=False):
        expected = _error(lambda: call("cpu"))
    assert expected is not None
    assert _error(lambda: call("ocl")) == expected
    torch.ones(2, device="ocl").sum().item()  # the device stays usable


@pytest.mark.parametrize("kind", KINDS)
def test_unbatched_input(kind):
    # nn.LSTM / nn.GRU take a 2-D (time, features) input as a batch of one.
    ref, dev = _pair(kind, torch.float64, num_layers=2)
    x = torch.randn(5, 6, dtype=torch.float64)
    y, h = ref(x)
    yd, hd = dev(x.to("ocl"))
    torch.testing.assert_close(yd.cpu(), y, atol=1e-10, rtol=1e-9)
    for a, b in zip(_states(hd), _states(h)):
        torch.testing.assert_close(a.cpu(), b, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_autocast(kind):
    # As CUDA's cuDNN RNN: the whole layer stack in the autocast dtype, gradients to float32 weights.
    ref, dev = _pair(kind, torch.float32, num_layers=2)
    x = torch.randn(6, 3, 6)
    with torch.autocast("ocl", dtype=torch.float16):
        yd, hd = dev(x.to("ocl"))
    assert yd.dtype == torch.float16 and _states(hd)[0].dtype == torch.float16
    yd.float().sum().backward()
    y, _ = ref(x)
    y.sum().backward()
    torch.testing.assert_close(yd.float().cpu(), y, atol=1e-2, rtol=1e-2)
    for p, q in zip(ref.parameters(), dev.parameters()):
        assert q.grad.dtype == torch.float32
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("kind", KINDS)
def test_expanded_initial_state(kind):
    # A broadcast (zero-stride) initial state, as code passing one learned state per layer does.
    ref, dev = _pair(kind, torch.float64, num_layers=2, bidirectional=True)
    x = torch.randn(5, 3, 6, dtype=torch.float64)
    outs = []
    for m, device in ((ref, "cpu"), (dev, "ocl")):
        base = torch.linspace(-1, 1, 5, dtype=torch.float64, device=device).requires_grad_()
        h0 = base.expand(4, 3, 5)
        state = (h0, h0 * 0.5) if kind == "LSTM" else h0
        y, _ = m(x.to(device), state)
        y.square().sum().backward()
        outs.append((y, base.grad))
    for a, b in zip(outs[1], outs[0]):
        torch.testing.assert_close(a.cpu(), b, atol=1e-10, rtol=1e-9)


def _packed_compare(kind, lengths, enforce_sorted=True, loss="all", with_h0=True, dtype=torch.float64, **kwargs):
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    ref, dev = _pair(kind, dtype, **kwargs)
    T, B = max(lengths), len(lengths)
    x = torch.randn(T, B, 6, dtype=dtype, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    h0 = _state0(kind, ref, B, dtype) if with_h0 else None
    h0r = _to(h0, "cpu", True) if with_h0 else None
    h0d = _to(h0, "ocl", True) if with_h0 else None
    outs = []
    torch.ocl.reset_fallback_counts()
    for m, inp, state in ((ref, x, h0r), (dev, xd, h0d)):
        packed = pack_padded_sequence(inp, torch.tensor(lengths), enforce_sorted=enforce_sorted)
        y, h = m(packed, state) if with_h0 else m(packed)
        padded, _ = pad_packed_sequence(y)
        hs = _states(h)
        terms = {"output": padded.square().sum(), "h": hs[0].square().sum() * 0.5, "c": hs[-1].square().sum() * 0.25}
        (sum(terms.values()) if loss == "all" else terms[loss]).backward()
        outs.append((padded, hs))
    assert torch.ocl.fallback_counts() == {}
    (y, hs), (yd, hsd) = outs
    _check(list(zip((yd,) + hsd, (y,) + hs)), xd, x, h0d, h0r, dev, ref, dtype)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("kwargs", [dict(), dict(num_layers=2, bidirectional=True), dict(bias=False, num_layers=2)],
                         ids=str)
def test_packed_sequence(kind, kwargs):
    # Lengths that shrink one, several and no rows at a step.
    _packed_compare(kind, [7, 7, 5, 2, 2, 1], **kwargs)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("loss", ["output", "h", "c"])
def test_packed_sequence_one_output(kind, loss):
    _packed_compare(kind, [5, 3, 3, 1], loss=loss, num_layers=2, bidirectional=True)


@pytest.mark.parametrize("kind", KINDS)
def test_packed_sequence_unsorted_and_equal_lengths(kind):
    _packed_compare(kind, [2, 6, 4, 6], enforce_sorted=False, bidirectional=True)
    _packed_compare(kind, [4, 4, 4], with_h0=False, num_layers=2)
    _packed_compare(kind, [3], bidirectional=True)  # a batch of one
    _packed_compare(kind, [1, 1], num_layers=2, bidirectional=True)  # one step


def test_packed_sequence_dropout_and_float32():
    _packed_compare("LSTM", [6, 4, 1], dtype=torch.float32, num_layers=2, bidirectional=True)
    from torch.nn.utils.rnn import pack_padded_sequence
    m = torch.nn.GRU(6, 5, num_layers=3, dropout=0.5).double().to("ocl")
    x = torch.randn(5, 3, 6, dtype=torch.float64, device="ocl", requires_grad=True)

    def f(x):
        torch.manual_seed(3)
        return m(pack_padded_sequence(x, torch.tensor([5, 4, 2])))[0].data

    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_launches(kind):
    # One product and one cell per step as for padded input, plus a few copies where rows stop.
    from torch.nn.utils.rnn import pack_padded_sequence
    m = CLASSES[kind](8, 16).to("ocl")
    x = torch.randn(10, 4, 8, device="ocl")
    packed = pack_padded_sequence(x, torch.tensor([10, 8, 8, 3]))
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    m(packed)
    torch.ocl.synchronize()
    counts = {k: v for k, v in torch.ocl._launch_counts().items() if v}
    assert counts.get(kind.lower() + "_cell_fwd") == 10, counts
