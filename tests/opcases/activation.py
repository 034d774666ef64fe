"""Cases for csrc/ops/activation.cpp: activations (functional, in-place, out=) and, through
autograd (grad=True), their backward kernels; the backward ops are also called directly once
so each registration is exercised with out= too."""
import torch
import torch.nn.functional as F

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make, unary_samples

aten = torch.ops.aten


def _act_samples(dtype):
    yield from unary_samples(dtype, low=-4.0, high=4.0)
    if dtype.is_floating_point:
        # (no infinities: the CPU's vectorized kernels give NaN for some of them, e.g. gelu(inf))
        yield Sample((torch.tensor([0.0, -0.0, 1.0, -1.0, 25.0, -25.0, float("nan"), 1e-20, -30.0], dtype=dtype),),
                     tag="special values")


def _activations(x):
    return (F.relu(x), F.leaky_relu(x), F.leaky_relu(x, 0.2), F.elu(x), F.elu(x, alpha=0.5), F.selu(x),
            F.silu(x), F.mish(x), F.hardtanh(x), F.hardtanh(x, -0.5, 2.0), F.softplus(x), F.softplus(x, beta=2,
                                                                                                      threshold=3),
            F.gelu(x), F.gelu(x, approximate="tanh"), torch.sigmoid(x), torch.tanh(x), F.threshold(x, 0.5, -1.0),
            F.relu6(x), F.celu(x))


def _activations_inplace(x):
    outs = []
    for f in (F.relu_, lambda t: F.leaky_relu_(t, 0.1), lambda t: F.elu_(t, 0.7), lambda t: F.hardtanh_(t, -1, 0.5),
              lambda t: F.silu(t, inplace=True), lambda t: F.mish(t, inplace=True), lambda t: F.threshold_(t, 0, 2.0),
              torch.sigmoid_, torch.tanh_):
        y = x.clone()
        f(y)
        outs.append(y)
    return outs


def _activations_out(x):
    outs = []
    for op, args in ((aten.leaky_relu.out, (0.1,)), (aten.elu.out, (1.0, 1.0, 1.0)), (aten.silu.out, ()),
                     (aten.mish.out, ()), (aten.hardtanh.out, (-1.0, 1.0)), (aten.softplus.out, (1.0, 20.0)),
                     (aten.gelu.out, ()), (aten.threshold.out, (0.0, 5.0))):
        out = torch.empty(3, dtype=x.dtype, device=x.device)
        op(x, *args, out=out)
        outs.append(out)
    return outs


def _int_activations(x):
    return F.relu(x), F.hardtanh(x, -2, 3), F.threshold(x, 1, 20), x.clone().relu_()


def _backward_samples(dtype):
    for i, s in enumerate(((), (0,), (7,), (65, 129))):
        yield Sample((make(s, dtype, seed=i), make(s, dtype, low=-4, high=4, seed=10 + i)), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), make((6, 4), dtype, low=-4, high=4).t()), tag="noncontig")


def _backwards(g, x):
    """Every registered backward op called directly (autograd covers them in the cases above)."""
    y = torch.sigmoid(x)
    t = torch.tanh(x)
    p = torch.sigmoid(x)
    out = torch.empty(2, dtype=x.dtype, device=x.device)
    aten.gelu_backward.grad_input(g, x, approximate="tanh", grad_input=out)
    out2 = torch.empty(0, dtype=x.dtype, device=x.device)
    aten.hardtanh_backward.grad_input(g, x, -0.5, 0.5, grad_input=out2)
    return (aten.threshold_backward(g, x, 0.5), aten.sigmoid_backward(g, y), aten.tanh_backward(g, t),
            aten.silu_backward(g, x), aten.gelu_backward(g, x), aten.gelu_backward(g, x, approximate="tanh"), out,
            aten.leaky_relu_backward(g, x, 0.1, False), aten.leaky_relu_backward(g, F.leaky_relu(x, 0.1), 0.1, True),
            aten.elu_backward(g, 1.3, 1.1, 0.9, False, x), aten.elu_backward(g, 1.3, 1.1, 0.9, True, F.elu(x, 1.3)),
            aten.mish_backward(g, x), aten.hardtanh_backward(g, x, -1.0, 2.0), out2,
            aten.softplus_backward(g, x, 1.5, 3.0), aten.logit_backward(g, p), aten.logit_backward(g, p, 0.2),
            aten.logit_backward(g, x))


CASES = [
    OpCase("activations", ["aten::relu", "aten::leaky_relu.out", "aten::elu.out", "aten::silu.out", "aten::mish.out",
                           "aten::hardtanh", "aten::softplus.out", "aten::gelu.out", "aten::threshold.out",
                           "aten::threshold_backward.grad_input", "aten::sigmoid_backward.grad_input",
                           "aten::tanh_backward.grad_input", "aten::silu_backward.grad_input",
                           "aten::gelu_backward.grad_input", "aten::leaky_relu_backward.grad_input",
                           "aten::elu_backward.grad_input", "aten::mish_backward", "aten::hardtanh_backward",
                           "aten::softplus_backward.grad_input"],
           _activations, _act_samples, dtypes=FLOAT, grad=True),
    OpCase("activations_f64", ["aten::gelu.out", "aten::silu.out"],
           lambda x: (F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.elu(x), F.softplus(x), F.mish(x)),
           _act_samples, dtypes=(torch.float64,) + HALFS, grad=True),
    OpCase("activations_inplace", ["aten::relu_", "aten::hardtanh_"], _activations_inplace, _act_samples,
           dtypes=FLOAT),
    OpCase("activations_out", ["aten::hardtanh.out", "aten::gelu.out"], _activations_out, _act_samples,
           dtypes=FLOAT),
    OpCase("activations_int", ["aten::relu", "aten::relu_", "aten::hardtanh", "aten::threshold.out"],
           _int_activations, unary_samples, dtypes=(torch.int64, torch.bool)),
    OpCase("activations_float_only", ["aten::gelu.out", "aten::silu.out"], lambda x: (F.gelu(x),),
           unary_samples, dtypes=(torch.int64,)),
    OpCase("activation_backwards", ["aten::threshold_backward.grad_input", "aten::sigmoid_backward.grad_input",
                                    "aten::tanh_backward.grad_input", "aten::silu_backward.grad_input",
                                    "aten::gelu_backward.grad_input", "aten::leaky_relu_backward.grad_input",
                                    "aten::elu_backward.grad_input", "aten::mish_backward",
                                    "aten::hardtanh_backward", "aten::hardtanh_backward.grad_input",
                                    "aten::softplus_backward.grad_input", "aten::logit_backward.grad_input"],
           _backwards, _backward_samples, dtypes=FLOATS),
]
