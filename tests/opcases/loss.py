"""Cases for losses (csrc/ops/loss.cpp): nll_loss / nll_loss2d (reductions, class weights,
ignore_index hits, 0-dim/1-D inputs, empty batches, uint8 targets, out-of-range targets that
must raise IndexError), the fused cross_entropy_loss (weights, label smoothing, ignore_index,
spatial and no-batch inputs, out-of-range targets), mse_loss, smooth_l1_loss, huber_loss and
binary_cross_entropy, all with gradients."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

NLL = ["aten::nll_loss_forward.output", "aten::nll_loss_backward.grad_input"]
NLL2D = ["aten::nll_loss2d_forward.output", "aten::nll_loss2d_forward", "aten::nll_loss2d_backward.grad_input",
         "aten::nll_loss2d_backward"]
MSE = ["aten::mse_loss.out", "aten::mse_loss_backward.grad_input", "aten::mse_loss_backward"]
BCE = ["aten::binary_cross_entropy.out", "aten::binary_cross_entropy", "aten::binary_cross_entropy_backward.grad_input",
       "aten::binary_cross_entropy_backward"]
SMOOTH_L1 = ["aten::smooth_l1_loss.out", "aten::smooth_l1_loss_backward.grad_input"]
HUBER = ["aten::huber_loss", "aten::huber_loss.out", "aten::huber_loss_backward.out"]
REDUCTIONS = ("mean", "sum", "none")


def _target(shape, C, seed=0, ignore=None, dtype=torch.int64):
    t = make(shape, torch.int64, low=0, high=C, seed=seed)
    if ignore is not None and t.numel():
        t.view(-1)[::3] = ignore
    return t.to(dtype)


def _nll(x, t, w=None, reduction="mean", ignore_index=-100):
    return F.nll_loss(x, t, weight=None if w is None else w.detach(), reduction=reduction, ignore_index=ignore_index)


def _float_reference(fn):
    """fn, except that the CPU reference is computed in float32 and rounded to the input's dtype
    once. The CPU's 16-bit nll_loss keeps its partial sums in the 16-bit type (a bfloat16 'sum'
    of 6 samples was up to 0.09 off the exact sum, 2-3 ulps), and its 16-bit cross_entropy also
    rounds log_softmax to 16 bits (a spatial bfloat16 mean 0.03 off); the device sums in float
    and stays within rounding, so a 16-bit CPU result failed the tolerance for ~3% of inputs."""
    def run(x, t, w=None, *args, **kw):
        if x.device.type == "cpu":
            return fn(x.float(), t, None if w is None else w.float(), *args, **kw).to(x.dtype)
        return fn(x, t, w, *args, **kw)
    return run


def _nll_samples(dtype):
    for r in REDUCTIONS:
        yield Sample((make((6, 5), dtype), _target((6,), 5)), {"reduction": r}, tag=f"plain {r}")
        yield Sample((make((7, 4), dtype), _target((7,), 4, ignore=-100), make((4,), dtype, low=0.1, high=2)),
                     {"reduction": r}, tag=f"weights + ignore {r}")
        yield Sample((make((5,), dtype), _target((), 5)), {"reduction": r}, tag=f"1-D input {r}")
        yield Sample((make((0, 3), dtype), _target((0,), 3)), {"reduction": r}, tag=f"empty batch {r}")
    yield Sample((make((5, 3), dtype), _target((5,), 3, ignore=2)), {"ignore_index": 2}, tag="ignore a class")
    yield Sample((make((4, 6), dtype, noncontig=True), _target((4,), 6)), tag="noncontig input")
    yield Sample((make((6, 4), dtype).t(), _target((4,), 6), make((6,), dtype, low=0.5, high=1.5)),
                 {"reduction": "none"}, tag="transposed input, weights")
    yield Sample((make((5, 3), dtype), _target((5,), 3, dtype=torch.uint8)), tag="uint8 target")
    yield Sample((make((3, 3), dtype), _target((3,), 3, ignore=-100)), {"reduction": "mean"}, tag="all but 1 ignored")
    yield Sample((make((2, 3), dtype), torch.full((2,), -100)), tag="all ignored: 0/0")
    yield Sample((make((300, 7), dtype), _target((300,), 7, ignore=-100)), tag="many samples")


def _raise_after_sync(fn):
    # The device reports a bad target at the next synchronization point.
    def run(*args, **kwargs):
        out = fn(*args, **kwargs)
        if out.device.type != "cpu":
            torch.ocl.synchronize()
        return out
    return run


def _bad_target_samples(dtype):
    yield Sample((make((4, 3), dtype), torch.tensor([0, 3, 1, 2])), tag="target == C")
    yield Sample((make((4, 3), dtype), torch.tensor([0, -1, 1, 2])), {"reduction": "none"}, tag="negative target")
    yield Sample((make((1, 3, 2, 2), dtype), torch.tensor([[[0, 1], [7, 2]]])), tag="2d target out of range")


def _nll2d_samples(dtype):
    for r in REDUCTIONS:
        yield Sample((make((2, 3, 4, 5), dtype), _target((2, 4, 5), 3)), {"reduction": r}, tag=f"plain {r}")
        yield Sample((make((2, 4, 3, 3), dtype), _target((2, 3, 3), 4, ignore=-100),
                      make((4,), dtype, low=0.1, high=2)), {"reduction": r}, tag=f"weights + ignore {r}")
    yield Sample((make((2, 3, 4, 1), dtype), _target((2, 4, 1), 3)), {"reduction": "none"}, tag="W == 1")
    yield Sample((make((0, 3, 2, 2), dtype), _target((0, 2, 2), 3)), {"reduction": "sum"}, tag="empty batch")
    yield Sample((make((2, 3, 5), dtype), _target((2, 5), 3)), {"reduction": "none"}, tag="3-D input (nll_loss_nd)")
    yield Sample((make((2, 3, 2, 2, 3), dtype), _target((2, 2, 2, 3), 3, ignore=-100)), tag="5-D input")


def _cross_entropy(x, t, w=None, **kw):
    return F.cross_entropy(x, t, weight=None if w is None else w.detach(), **kw)


def _ce_samples(dtype):
    w = make((5,), dtype, low=0.2, high=2)
    for r in REDUCTIONS:
        yield Sample((make((6, 5), dtype), _target((6,), 5, ignore=-100)), {"reduction": r}, tag=f"ignore {r}")
        yield Sample((make((6, 5), dtype), _target((6,), 5, ignore=-100), w), {"reduction": r, "label_smoothing": 0.1},
                     tag=f"weights + label smoothing {r}")
        yield Sample((make((5,), dtype), _target((), 5)), {"reduction": r}, tag=f"1-D input {r}")
        yield Sample((make((0, 5), dtype), _target((0,), 5)), {"reduction": r}, tag=f"empty batch {r}")
    yield Sample((make((4, 5000), dtype, low=-10, high=10), _target((4,), 5000)), tag="long rows")
    yield Sample((make((3, 64), dtype), _target((3,), 64)), {"label_smoothing": 0.2}, tag="C % 4 == 0")
    yield Sample((make((5, 6), dtype).t(), _target((6,), 5)), {"reduction": "none"}, tag="transposed")
    yield Sample((make((2, 4, 3, 3), dtype), _target((2, 3, 3), 4)), tag="spatial")
    yield Sample((make((2, 3, 5), dtype), _target((2, 5), 3, ignore=-100)), {"reduction": "none"}, tag="3-D input")
    yield Sample((make((5, 3), dtype), _target((5,), 3, dtype=torch.uint8)), tag="uint8 target")
    yield Sample((make((4, 3), dtype), torch.tensor([0, 3, 1, 2])), tag="target == C")


def _mse_samples(dtype):
    for r in REDUCTIONS:
        yield Sample((make((5, 3), dtype), make((5, 3), dtype, seed=1)), {"reduction": r}, tag=f"2-D {r}")
        yield Sample((make((), dtype), make((), dtype, seed=1)), {"reduction": r}, tag=f"0-dim {r}")
        yield Sample((make((0, 3), dtype), make((0, 3), dtype, seed=1)), {"reduction": r}, tag=f"empty {r}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6, 4), dtype).t()), tag="noncontig")
    yield Sample((make((65, 129), dtype), make((65, 129), dtype, seed=1)), {"reduction": "sum"}, tag="large")


def _mse(x, y, reduction="mean"):
    return F.mse_loss(x, y, reduction=reduction)


def _robust_samples(dtype):
    """mse_loss's shapes (inputs in [-3, 3]: both sides of beta and delta), the boundaries
    themselves (|x - y| = 0, 0.5, 1, 2) and a broadcast target."""
    yield from _mse_samples(dtype)
    zeros = torch.zeros(9, dtype=dtype)
    yield Sample((torch.tensor([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, -3.0], dtype=dtype), zeros),
                 {"reduction": "none"}, tag="boundaries")
    yield Sample((make((5, 3), dtype), make((3,), dtype, seed=1)), tag="broadcast target")


def _pair_sample(dtype):
    return [Sample((make((3,), dtype), make((3,), dtype, seed=1)))]


def _smooth_l1(x, y, reduction="mean"):
    return tuple(F.smooth_l1_loss(x, y, reduction=reduction, beta=b) for b in (1.0, 0.5, 0.0))


def _huber(x, y, reduction="mean"):
    return tuple(F.huber_loss(x, y, reduction=reduction, delta=d) for d in (1.0, 0.5, 2.0))


def _robust_out(x, y, g):
    """The out= forms, the backward ops called directly, and the parameter checks' errors."""
    aten = torch.ops.aten
    out1, out2, out3 = (torch.empty(2, dtype=x.dtype, device=x.device) for _ in range(3))
    aten.smooth_l1_loss.out(x, y, 0, 0.5, out=out1)
    aten.huber_loss.out(x, y, 2, 0.5, out=out2)
    aten.smooth_l1_loss_backward.grad_input(g, x, y, 0, 0.5, grad_input=out3)
    return (out1, out2, out3, aten.smooth_l1_loss_backward(g, x, y, 1, 1.0), aten.huber_loss_backward(g, x, y, 1, 0.5),
            aten.huber_loss_backward(g, x, y, 0, 2.0))


def _robust_out_samples(dtype):
    yield Sample((make((5, 3), dtype), make((5, 3), dtype, seed=1), make((5, 3), dtype, seed=2)), tag="2-D")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6, 4), dtype, seed=1).t(), make((4, 6), dtype, seed=2)),
                 tag="noncontig")


def _bce(x, t, w=None, reduction="mean"):
    return F.binary_cross_entropy(x, t.detach(), weight=None if w is None else w.detach(), reduction=reduction)


def _bce_samples(dtype):
    for r in REDUCTIONS:
        yield Sample((make((5, 3), dtype, low=0.05, high=0.95), make((5, 3), dtype, low=0, high=1, seed=1)),
                     {"reduction": r}, tag=f"plain {r}")
        yield Sample((make((4, 3), dtype, low=0.05, high=0.95), make((4, 3), dtype, low=0, high=1, seed=1),
                      make((3,), dtype, low=0.5, high=2)), {"reduction": r}, tag=f"broadcast weight {r}")
    yield Sample((torch.tensor([0.0, 1.0, 0.5], dtype=dtype), torch.tensor([1.0, 0.0, 1.0], dtype=dtype)),
                 {"reduction": "none"}, tag="log clamp at 0 and 1")
    yield Sample((make((0,), dtype, low=0.1, high=0.9), make((0,), dtype)), tag="empty mean")
    yield Sample((make((4, 6), dtype, low=0.1, high=0.9, noncontig=True), make((6, 4), dtype, low=0, high=1).t()),
                 tag="noncontig")


CASES = [
    OpCase("nll_loss", NLL, _nll, _nll_samples, dtypes=FLOATS, grad=True),
    OpCase("nll_loss_half", NLL, _float_reference(_nll), lambda dt: (s for s in _nll_samples(dt) if "1-D" not in s.tag),
           dtypes=HALFS, grad=True, atol=1e-2, rtol=1e-2),
    OpCase("nll_loss_bad_target", NLL + NLL2D[:2], _raise_after_sync(_nll), _bad_target_samples),
    OpCase("nll_loss2d", NLL2D + NLL, _nll, _nll2d_samples, dtypes=FLOATS, grad=True),
    # No gradient: the CPU's nll_loss2d backward rejects non-contiguous inputs.
    OpCase("nll_loss2d_channels_last", NLL2D[:1], _nll,
           lambda dt: [Sample((make((2, 5, 3, 4), dt).permute(0, 3, 1, 2), _target((2, 5, 3), 4)), {"reduction": r})
                       for r in REDUCTIONS], dtypes=FLOATS),
    # Fused (csrc/ops/cross_entropy.cpp); tests/test_cross_entropy.py covers it in depth.
    OpCase("cross_entropy", ["aten::cross_entropy_loss"], _raise_after_sync(_cross_entropy), _ce_samples,
           dtypes=FLOATS, grad=True, atol=1e-5, rtol=1e-4),
    OpCase("cross_entropy_half", ["aten::cross_entropy_loss"], _float_reference(_cross_entropy),
           lambda dt: (s for s in _ce_samples(dt) if s.tag != "target == C"), dtypes=HALFS, grad=True, atol=1e-2,
           rtol=1e-2),
    OpCase("mse_loss", MSE, _mse, _mse_samples, dtypes=FLOATS, grad=True),
    OpCase("mse_loss_half", MSE, _mse, lambda dt: (s for s in _mse_samples(dt) if s.tag != "large"), dtypes=HALFS,
           grad=True, atol=2e-2, rtol=2e-2),
    OpCase("mse_loss_out", MSE[:1], lambda x, y, out: torch.ops.aten.mse_loss.out(x, y, 1, out=out),
           lambda dt: [Sample((make((3, 4), dt), make((3, 4), dt, seed=1), make((2,), dt)))], dtypes=FLOATS),
    OpCase("binary_cross_entropy", BCE, _bce, _bce_samples, dtypes=FLOATS, grad=True),
    OpCase("smooth_l1_loss", SMOOTH_L1, _smooth_l1, _robust_samples, dtypes=FLOATS, grad=True),
    OpCase("huber_loss", HUBER, _huber, _robust_samples, dtypes=FLOATS, grad=True),
    OpCase("smooth_l1_huber_half", SMOOTH_L1 + HUBER, lambda x, y, **kw: _smooth_l1(x, y, **kw) + _huber(x, y, **kw),
           lambda dt: (s for s in _robust_samples(dt) if s.tag != "large"), dtypes=HALFS, grad=True, atol=2e-2,
           rtol=2e-2),
    OpCase("smooth_l1_huber_out", SMOOTH_L1 + ["aten::huber_loss.out", "aten::huber_loss_backward.out"], _robust_out,
           _robust_out_samples, dtypes=FLOATS),
    OpCase("smooth_l1_negative_beta", SMOOTH_L1[:1], lambda x, y: F.smooth_l1_loss(x, y, beta=-1.0),
           _pair_sample),
    OpCase("huber_nonpositive_delta", HUBER[:2], lambda x, y: F.huber_loss(x, y, delta=0.0),
           _pair_sample),
    OpCase("huber_out_nonpositive_delta", HUBER[1:2],
           lambda x, y: torch.ops.aten.huber_loss.out(x, y, 1, -1.0, out=torch.empty_like(x)),
           _pair_sample),
    OpCase("smooth_l1_int", SMOOTH_L1[:1], F.smooth_l1_loss, _pair_sample, dtypes=(torch.int64,)),
    OpCase("huber_int", HUBER[:1], F.huber_loss, _pair_sample, dtypes=(torch.int64,)),
]
