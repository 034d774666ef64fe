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


# ---- multi_margin_loss / multilabel_margin_loss ----------------------------------------------

MULTI_MARGIN = ["aten::multi_margin_loss.out", "aten::multi_margin_loss", "aten::multi_margin_loss_backward.grad_input",
                "aten::multi_margin_loss_backward"]
MULTILABEL = ["aten::multilabel_margin_loss_forward.output", "aten::multilabel_margin_loss_forward",
              "aten::multilabel_margin_loss_backward.grad_input", "aten::multilabel_margin_loss_backward"]


def _multi_margin(x, t, w=None, **kw):
    return F.multi_margin_loss(x, t, weight=None if w is None else w.detach(), **kw)


def _multi_margin_samples(dtype):
    w = make((5,), dtype, low=0.2, high=2, seed=7)
    for r in REDUCTIONS:
        for p in (1, 2):
            yield Sample((make((6, 5), dtype), _target((6,), 5)), {"p": p, "reduction": r}, tag=f"p={p} {r}")
            yield Sample((make((6, 5), dtype), _target((6,), 5), w), {"p": p, "margin": 0.5, "reduction": r},
                         tag=f"p={p} margin 0.5 weights {r}")
        yield Sample((make((5,), dtype), _target((), 5)), {"reduction": r}, tag=f"1-D input, 0-D target {r}")
        yield Sample((make((5,), dtype), _target((1,), 5)), {"p": 2, "reduction": r}, tag=f"1-D input, (1,) target {r}")
        yield Sample((make((), dtype), torch.tensor(0)), {"reduction": r}, tag=f"0-D input {r}")
        yield Sample((make((1, 4), dtype), _target((), 4)), {"reduction": r}, tag=f"one sample, 0-D target {r}")
    yield Sample((make((0, 5), dtype), _target((0,), 5)), {"reduction": "none"}, tag="empty batch")
    yield Sample((make((4, 6), dtype, noncontig=True), _target((4,), 6)), {"margin": 2.5}, tag="noncontig")
    yield Sample((make((6, 4), dtype).t(), _target((4,), 6), make((6,), dtype, low=0.5, high=1.5, noncontig=True)),
                 {"p": 2, "reduction": "none"}, tag="transposed, noncontig weight")
    yield Sample((make((7, 300), dtype), _target((7,), 300)), {"margin": 3.0, "reduction": "sum"}, tag="300 classes")
    yield Sample((make((200, 3), dtype), _target((200,), 3)), {"p": 2}, tag="200 samples")
    yield Sample((make((3, 4), dtype), _target((3,), 4)), {"p": 2, "margin": 0}, tag="margin 0")
    nan = make((3, 4), dtype)
    nan[0, 1] = nan[1, 2] = float("nan")
    yield Sample((nan, torch.tensor([1, 0, 3])), {"reduction": "none"}, tag="NaN: the target's and another")


def _multi_margin_out(x, t, go, w=None):
    """The out= and grad_input= forms (wrongly sized outs are resized) and the backward op called
    directly, per-sample and scalar grad_output."""
    aten = torch.ops.aten
    res = []
    for r in (0, 1, 2):
        for p in (1, 2):
            out = torch.empty(3, dtype=x.dtype, device=x.device)
            res.append(aten.multi_margin_loss.out(x, t, p, 0.7, w, r, out=out))
            gi = torch.empty(0, dtype=x.dtype, device=x.device)
            g = go if r == 0 else go[0]
            res.append(aten.multi_margin_loss_backward.grad_input(g, x, t, p, 0.7, w, r, grad_input=gi))
            res.append(aten.multi_margin_loss_backward(g, x, t, p, 1.3, w, r))
    res.append(aten.multi_margin_loss_backward(go[0], x, t, 1, 1.0, w, 0))  # 0-D grad_output for 'none'
    res.append(aten.multi_margin_loss(x, t, 1.5, 0.0, w, 0))  # p = 1.5 is p = 1 (F.multi_margin_loss rejects it)
    return res


def _multi_margin_out_samples(dtype):
    yield Sample((make((5, 4), dtype), _target((5,), 4), make((5,), dtype, seed=3)), tag="plain")
    yield Sample((make((5, 4), dtype), _target((5,), 4), make((5,), dtype, seed=3), make((4,), dtype, low=0.1, high=2)),
                 tag="weights")
    yield Sample((make((4, 5), dtype).t(), _target((5,), 4), make((10,), dtype, seed=3)[::2]), tag="strided")


def _multi_margin_errors(x, t, p=1, margin=1.0, w=None, reduction=1):
    return torch.ops.aten.multi_margin_loss(x, t, p, margin, w, reduction)


def _multi_margin_error_samples(dtype):
    x = make((4, 5), dtype)
    yield Sample((x, torch.tensor([0, 5, 1, 2])), tag="target == C")
    yield Sample((x, torch.tensor([0, 1, -1, 2]), 2, 1.0, None, 0), tag="negative target")
    yield Sample((x, _target((4,), 5), 3), tag="p = 3")
    yield Sample((x, _target((3,), 5)), tag="target size")
    yield Sample((x, _target((1, 4), 5)), tag="2-D target")
    yield Sample((x, _target((4,), 5), 1, 1.0, make((4,), dtype)), tag="weight size")
    yield Sample((x, _target((4,), 5), 1, 1.0, make((5,), torch.float64 if dtype != torch.float64 else torch.float32)),
                 tag="weight dtype")
    yield Sample((x, _target((4,), 5, dtype=torch.int32)), tag="int32 target")
    yield Sample((make((3, 0), dtype), _target((3,), 1)), tag="no classes")
    yield Sample((make((2, 3, 4), dtype), _target((2,), 3)), tag="3-D input")


def _multilabel_target(rows, C, seed=0):
    """Targets with -1 terminators at varied places, duplicates, none and all classes."""
    g = torch.Generator().manual_seed(seed)
    t = torch.full((rows, C), -1, dtype=torch.int64)
    for i in range(rows):
        k = i % (C + 1)  # 0 .. C targets
        t[i, :k] = torch.randperm(C, generator=g)[:k]
        if k >= 2 and i % 3 == 0:
            t[i, 1] = t[i, 0]  # a duplicate target
        if k + 1 < C and i % 2 == 0:
            t[i, k + 1] = (i * 7) % C  # a value after the terminator: ignored
    return t


def _multilabel(x, t, **kw):
    return F.multilabel_margin_loss(x, t, **kw)


def _multilabel_samples(dtype):
    for r in REDUCTIONS:
        yield Sample((make((9, 5), dtype), _multilabel_target(9, 5)), {"reduction": r}, tag=f"2-D {r}")
        yield Sample((make((6,), dtype), _multilabel_target(1, 6, seed=1)[0]), {"reduction": r}, tag=f"1-D {r}")
        yield Sample((make((), dtype), torch.tensor(0)), {"reduction": r}, tag=f"0-D {r}")
        yield Sample((make((), dtype), torch.tensor(-1)), {"reduction": r}, tag=f"0-D no target {r}")
    yield Sample((make((0, 5), dtype), torch.zeros(0, 5, dtype=torch.int64)), {"reduction": "none"}, tag="empty batch")
    yield Sample((make((4, 6), dtype, noncontig=True), _multilabel_target(4, 6, seed=2)), tag="noncontig")
    yield Sample((make((6, 4), dtype).t(), _multilabel_target(4, 6, seed=3)), {"reduction": "sum"}, tag="transposed")
    yield Sample((make((5, 300), dtype), _multilabel_target(5, 300, seed=4)), tag="300 classes")
    yield Sample((make((301, 3), dtype), _multilabel_target(301, 3, seed=5)), {"reduction": "none"},
                 tag="301 samples")
    nan = make((3, 4), dtype)
    nan[0, 1] = nan[1, 2] = float("nan")
    yield Sample((nan, torch.tensor([[1, -1, 0, 0], [0, 3, -1, 0], [2, -1, 0, 0]])), {"reduction": "none"}, tag="NaN")


def _multilabel_forward(x, t, r):
    return torch.ops.aten.multilabel_margin_loss_forward(x, t, r)


def _multilabel_forward_samples(dtype):
    for r in (0, 1, 2):
        yield Sample((make((9, 5), dtype), _multilabel_target(9, 5), r), tag=f"reduction {r}")
        yield Sample((make((5,), dtype), _multilabel_target(1, 5, seed=1)[0], r), tag=f"1-D reduction {r}")


def _multilabel_out(x, t, go, ist):
    """The out forms (wrongly sized outs are resized) and the backward op called directly with
    the forward's is_target, a halved one and one of zeros, per-sample and scalar grad_output."""
    aten = torch.ops.aten
    res = []
    for r in (0, 1, 2):
        out, it = (torch.empty(2, dtype=x.dtype, device=x.device) for _ in range(2))
        res += list(aten.multilabel_margin_loss_forward.output(x, t, r, output=out, is_target=it))
        g = go if r == 0 else go[0]
        for i in (it, ist, torch.zeros_like(ist)):
            gi = torch.empty(0, dtype=x.dtype, device=x.device)
            res.append(aten.multilabel_margin_loss_backward.grad_input(g, x, t, r, i, grad_input=gi))
            res.append(aten.multilabel_margin_loss_backward(g, x, t, r, i))
    res.append(aten.multilabel_margin_loss_backward(go[0], x, t, 0, ist))  # 0-D grad_output for 'none'
    return res


def _multilabel_out_samples(dtype):
    yield Sample((make((7, 5), dtype), _multilabel_target(7, 5), make((7,), dtype, seed=3),
                  torch.full((7, 5), 0.5, dtype=dtype)), tag="plain")
    yield Sample((make((5, 7), dtype).t(), _multilabel_target(7, 5, seed=1), make((14,), dtype, seed=3)[::2],
                  (torch.rand(7, 5, generator=torch.Generator().manual_seed(0)) < 0.5).to(dtype)), tag="strided")


def _multilabel_error_samples(dtype):
    x = make((3, 4), dtype)
    yield Sample((x, torch.tensor([[0, 4, -1, 0], [1, -1, 0, 0], [2, -1, 0, 0]])), tag="target == C")
    yield Sample((x, torch.tensor([[0, -1, 9, 0], [1, -1, 0, 0], [2, -1, 0, 0]])), tag="target == 9 after -1")
    yield Sample((x, torch.tensor([[0, -2, 1, 0], [1, -1, 0, 0], [2, -1, 0, 0]])), tag="target -2")
    yield Sample((x, torch.zeros(3, 3, dtype=torch.int64)), tag="target shape")
    yield Sample((x[0], torch.zeros(1, 4, dtype=torch.int64)), tag="1-D input, 2-D target")
    yield Sample((x, torch.zeros(3, 4, dtype=torch.int32)), tag="int32 target")
    yield Sample((make((3, 0), dtype), torch.zeros(3, 0, dtype=torch.int64)), tag="no classes")


def _multilabel_backward_errors(go, x, t, ist, r=1):
    return torch.ops.aten.multilabel_margin_loss_backward(go, x, t, r, ist)


def _multilabel_backward_error_samples(dtype):
    x, t = make((3, 4), dtype), torch.tensor([[0, 1, -1, 0], [1, -1, 0, 0], [2, -1, 0, 0]])
    go, ist = make((), dtype), torch.zeros(3, 4, dtype=dtype)
    yield Sample((go, x, t, torch.full((3, 4), 2.0, dtype=dtype)), tag="is_target 2")
    yield Sample((go, x, t, torch.full((3, 4), -1.0, dtype=dtype)), tag="is_target -1")
    yield Sample((go, x, t, ist[:, :3]), tag="is_target size")
    yield Sample((go, x, torch.tensor([[0, 4, -1, 0], [1, -1, 0, 0], [2, -1, 0, 0]]), ist), tag="target == C")
    yield Sample((make((2,), dtype), x, t, ist, 0), tag="grad_output size")
    yield Sample((make((3, 1), dtype), x, t, ist, 0), tag="2-D grad_output")
    yield Sample((go.double() if dtype != torch.float64 else go.float(), x, t, ist), tag="grad_output dtype")


def _multi_margin_backward_errors(go, x, t, r=1):
    return torch.ops.aten.multi_margin_loss_backward(go, x, t, 1, 1.0, None, r)


def _multi_margin_backward_error_samples(dtype):
    x = make((3, 4), dtype)
    yield Sample((make((), dtype), x, torch.tensor([0, 4, 1])), tag="target == C")
    yield Sample((make((3, 1), dtype), x, _target((3,), 4), 0), tag="2-D grad_output")
    yield Sample((make((), torch.float64 if dtype != torch.float64 else torch.float32), x, _target((3,), 4)),
                 tag="grad_output dtype")


def _half_not_implemented(dtype):
    yield Sample((make((3, 4), dtype), _target((3,), 4)), tag="multi_margin")


CASES += [
    OpCase("multi_margin_loss", MULTI_MARGIN[:2] + MULTI_MARGIN[3:], _multi_margin, _multi_margin_samples,
           dtypes=FLOATS, grad=True),
    OpCase("multi_margin_loss_out", MULTI_MARGIN, _multi_margin_out, _multi_margin_out_samples, dtypes=FLOATS),
    OpCase("multi_margin_loss_errors", MULTI_MARGIN[1:2], _raise_after_sync(_multi_margin_errors),
           _multi_margin_error_samples, dtypes=FLOATS),
    OpCase("multi_margin_loss_backward_errors", MULTI_MARGIN[3:], _raise_after_sync(_multi_margin_backward_errors),
           _multi_margin_backward_error_samples),
    OpCase("multi_margin_loss_half", MULTI_MARGIN[1:2], _multi_margin, _half_not_implemented, dtypes=HALFS),
    OpCase("multilabel_margin_loss", MULTILABEL[1:2] + MULTILABEL[3:], _multilabel, _multilabel_samples,
           dtypes=FLOATS, grad=True),
    OpCase("multilabel_margin_loss_forward", MULTILABEL[1:2], _multilabel_forward, _multilabel_forward_samples,
           dtypes=FLOATS),
    OpCase("multilabel_margin_loss_out", MULTILABEL, _multilabel_out, _multilabel_out_samples, dtypes=FLOATS),
    OpCase("multilabel_margin_loss_errors", MULTILABEL[1:2], _raise_after_sync(_multilabel),
           _multilabel_error_samples),
    OpCase("multilabel_margin_loss_backward_errors", MULTILABEL[3:], _raise_after_sync(_multilabel_backward_errors),
           _multilabel_backward_error_samples),
    OpCase("multilabel_margin_loss_half", MULTILABEL[1:2], _multilabel,
           lambda dt: [Sample((make((3, 4), dt), _multilabel_target(3, 4)))], dtypes=HALFS),
]
