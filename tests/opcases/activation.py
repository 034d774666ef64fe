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


def _each_inplace(x, fns):
    """Each in-place function applied to its own clone of x."""
    outs = []
    for f in fns:
        y = x.clone()
        f(y)
        outs.append(y)
    return outs


def _activations_inplace(x):
    return _each_inplace(x, (F.relu_, lambda t: F.leaky_relu_(t, 0.1), lambda t: F.elu_(t, 0.7),
                             lambda t: F.hardtanh_(t, -1, 0.5), lambda t: F.silu(t, inplace=True),
                             lambda t: F.mish(t, inplace=True), lambda t: F.threshold_(t, 0, 2.0), torch.sigmoid_,
                             torch.tanh_))


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



def _shrinks_and_hard(x):
    return (F.hardsigmoid(x), F.hardswish(x), F.softshrink(x), F.softshrink(x, 1.5), F.hardshrink(x),
            F.hardshrink(x, 0.3), F.logsigmoid(x))


def _shrinks_and_hard_inplace(x):
    return _each_inplace(x, (lambda t: F.hardsigmoid(t, inplace=True), lambda t: F.hardswish(t, inplace=True)))


def _shrinks_and_hard_out(x):
    outs = []
    for op, args in ((aten.hardsigmoid.out, ()), (aten.hardswish.out, ()), (aten.softshrink.out, (0.7,)),
                     (aten.hardshrink.out, (0.3,))):
        out = torch.empty(3, dtype=x.dtype, device=x.device)
        op(x, *args, out=out)
        outs.append(out)
    # log_sigmoid's buffer is the CPU's (exp(-|x|)) and empty on ocl (as on CUDA): not compared.
    output, buffer = torch.empty(5, dtype=x.dtype, device=x.device), torch.empty(0, dtype=x.dtype, device=x.device)
    aten.log_sigmoid_forward.output(x, output=output, buffer=buffer)
    return outs + [output, aten.log_sigmoid_forward(x)[0]]


def _boundary_samples(dtype):
    """_act_samples plus each op's boundaries (lambd 0.3, 0.5, 1.5; hardsigmoid/hardswish's +-3)
    in the dtype itself: a half input at half(0.3) is inside hardshrink(x, 0.3)'s zero band."""
    yield from _act_samples(dtype)
    yield Sample((torch.tensor([0.3, -0.3, 0.5, -0.5, 1.5, -1.5, 3.0, -3.0, 2.999, -2.999], dtype=dtype),),
                 tag="boundaries")


def _glu_samples(dtype):
    for i, (shape, dim) in enumerate((((4,), 0), ((3, 6), -1), ((3, 6), 1), ((4, 5), 0), ((2, 4, 3), 1), ((0, 4), 1),
                                      ((2, 0, 6), -1), ((65, 258), 1))):
        yield Sample((make(shape, dtype, seed=i),), {"dim": dim}, tag=f"{shape} dim {dim}")
    yield Sample((make((3, 8), dtype, noncontig=True),), {"dim": 1}, tag="noncontig")
    yield Sample((make((8, 3), dtype).t(),), {"dim": 1}, tag="transposed")
    yield Sample((make((), dtype),), {"dim": 0}, tag="0-dim raises")
    yield Sample((make((3, 5), dtype),), {"dim": 1}, tag="odd dim raises")


def _glu_direct(x, dim):
    """glu.out and both glu_backward forms called directly (autograd calls the functional one)."""
    out = torch.empty(1, dtype=x.dtype, device=x.device)
    torch.ops.aten.glu.out(x, dim, out=out)
    g = torch.ones_like(out) * 0.5
    grad_input = torch.empty(0, dtype=x.dtype, device=x.device)
    aten.glu_backward.grad_input(g, x, dim, grad_input=grad_input)
    return out, grad_input, aten.glu_backward(g, x, dim)


def _shrink_bad_lambda(x):
    return F.softshrink(x, -1.0)


def _shrink_bad_lambda_out(x):
    return aten.softshrink.out(x, -0.5, out=torch.empty_like(x))


def _shrinks_and_hard_backwards(g, x):
    """The backward ops called directly (with out=), besides autograd's calls in the cases above."""
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    aten.softshrink_backward.grad_input(g, x, 0.5, grad_input=out)
    buffer = aten.log_sigmoid_forward(x)[1]  # what each device's backward expects (empty on ocl)
    out2 = torch.empty(3, dtype=x.dtype, device=x.device)
    aten.log_sigmoid_backward.grad_input(g, x, buffer, grad_input=out2)
    return (aten.hardsigmoid_backward(g, x), aten.hardswish_backward(g, x), aten.softshrink_backward(g, x, 1.5), out,
            aten.hardshrink_backward(g, x, 0.3), aten.log_sigmoid_backward(g, x, buffer), out2)

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
    OpCase("activations_hard_shrink", ["aten::hardsigmoid.out", "aten::hardswish", "aten::softshrink.out",
                                       "aten::hardshrink.out", "aten::log_sigmoid_forward",
                                       "aten::hardsigmoid_backward.grad_input", "aten::hardswish_backward",
                                       "aten::softshrink_backward.grad_input", "aten::hardshrink_backward.grad_input",
                                       "aten::log_sigmoid_backward"],
           _shrinks_and_hard, _boundary_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("activations_hard_shrink_inplace", ["aten::hardsigmoid.out", "aten::hardswish_"], _shrinks_and_hard_inplace,
           _act_samples, dtypes=FLOAT),
    OpCase("activations_hard_shrink_out", ["aten::hardsigmoid.out", "aten::hardswish.out", "aten::softshrink.out",
                                           "aten::hardshrink.out", "aten::log_sigmoid_forward.output"],
           _shrinks_and_hard_out, _act_samples, dtypes=FLOATS),
    OpCase("activations_hard_shrink_float_only", ["aten::hardswish", "aten::hardsigmoid.out"],
           lambda x: (F.hardswish(x),), unary_samples, dtypes=(torch.int64,)),
    OpCase("softshrink_bad_lambda", ["aten::softshrink.out"], _shrink_bad_lambda, unary_samples, dtypes=FLOAT),
    OpCase("softshrink_bad_lambda_out", ["aten::softshrink.out"], _shrink_bad_lambda_out, unary_samples, dtypes=FLOAT),
    OpCase("activation_backwards_hard_shrink", ["aten::hardsigmoid_backward.grad_input", "aten::hardswish_backward",
                                                "aten::softshrink_backward.grad_input",
                                                "aten::hardshrink_backward.grad_input",
                                                "aten::log_sigmoid_backward", "aten::log_sigmoid_backward.grad_input"],
           _shrinks_and_hard_backwards, _backward_samples, dtypes=FLOATS),
    OpCase("glu", ["aten::glu.out", "aten::glu_backward"], F.glu, _glu_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("glu_direct", ["aten::glu.out", "aten::glu_backward", "aten::glu_backward.grad_input"], _glu_direct,
           _glu_samples, dtypes=FLOATS),
    OpCase("glu_int", ["aten::glu.out"], F.glu, unary_samples, dtypes=(torch.int64,)),
]


# ---- prelu ---------------------------------------------------------------------------------

def _prelu_samples(dtype):
    """F.prelu: one weight or one per channel (dim 1), inputs of rank 0 to 4, non-contiguous,
    channels_last, expanded and empty inputs, a non-contiguous weight, special values."""
    w1 = make((1,), dtype, low=-1, high=1, seed=50)
    for i, s in enumerate(((), (0,), (1,), (7,), (5, 3), (2, 3, 4), (2, 3, 5, 4), (0, 3, 2), (65, 129))):
        yield Sample((make(s, dtype, seed=i), w1), tag=f"shape{s} one weight")
        if len(s) >= 2:
            yield Sample((make(s, dtype, seed=i), make((s[1],), dtype, low=-1, high=1, seed=60 + i)),
                         tag=f"shape{s} per channel")
    yield Sample((make((2, 3, 5, 4), dtype, seed=1).contiguous(memory_format=torch.channels_last),
                  make((3,), dtype, low=-1, high=1, seed=2)), tag="channels_last")
    yield Sample((make((4, 6), dtype, noncontig=True, seed=3), make((6,), dtype, noncontig=True, seed=4)),
                 tag="noncontig input and weight")
    yield Sample((make((3, 1), dtype, seed=5).expand(3, 5), make((5,), dtype, seed=6)), tag="expanded")
    yield Sample((make((6, 4), dtype, seed=7).t(), make((6,), dtype, seed=8)), tag="transposed")
    if dtype.is_floating_point:
        x = torch.tensor([[0.0, -0.0, 1.0, -1.0, float("nan"), -25.0, 1e-20, float("inf"), -float("inf")]],
                         dtype=dtype)
        yield Sample((x, torch.tensor([0.25], dtype=dtype)), tag="special values")


def _prelu_error_samples(dtype):
    yield Sample((make((2, 3), dtype), make((4,), dtype)), tag="weight size mismatch raises")
    yield Sample((make((2, 3), dtype), make((3,), torch.float64)), tag="dtype mismatch raises")
    yield Sample((make((2, 3), dtype), make((1, 3), dtype)), tag="2-d weight raises")
    yield Sample((make((), dtype), make((3,), dtype)), tag="0-d input with 3 weights raises")
    yield Sample((make((2, 3), torch.int64), make((3,), torch.int64)), tag="int64 raises")


def _prelu_module(x, w):
    m = torch.nn.PReLU(num_parameters=w.numel()).to(device=x.device, dtype=x.dtype)
    with torch.no_grad():
        m.weight.copy_(w)
    return m(x)


def _prelu_direct(g, x, w):
    """The kernels called directly: the weight's gradient comes back in the broadcast shape."""
    return (aten._prelu_kernel(x, w),) + tuple(aten._prelu_kernel_backward(g, x, w))


def _prelu_direct_samples(dtype):
    yield Sample((make((2, 3, 4), dtype, seed=1), make((2, 3, 4), dtype, seed=2), make((1, 3, 1), dtype, seed=3)),
                 tag="per channel")
    yield Sample((make((5, 3), dtype, seed=1), make((6, 5), dtype, seed=2).t()[:, :3], make((1, 1), dtype, seed=3)),
                 tag="noncontig grad, one weight")
    yield Sample((make((0, 3), dtype), make((0, 3), dtype), make((1, 3), dtype)), tag="empty")


CASES += [
    OpCase("prelu", ["aten::_prelu_kernel", "aten::_prelu_kernel_backward"], F.prelu, _prelu_samples,
           dtypes=FLOATS + HALFS, grad=True),
    OpCase("prelu_module", ["aten::_prelu_kernel", "aten::_prelu_kernel_backward"], _prelu_module,
           lambda dt: (s for s in _prelu_samples(dt) if "one weight" in s.tag), dtypes=FLOAT, grad=True),
    OpCase("prelu_direct", ["aten::_prelu_kernel", "aten::_prelu_kernel_backward"], _prelu_direct,
           _prelu_direct_samples, dtypes=FLOATS + HALFS),
    OpCase("prelu_errors", ["aten::_prelu_kernel"], F.prelu, _prelu_error_samples, dtypes=FLOAT),
]


# ---- rrelu -----------------------------------------------------------------------------------
def _rrelu_train_checks(x, lower, upper):
    """rrelu_with_noise in training mode, reduced to facts that hold for any draw: the noise is
    1 where x > 0 and within [lower, upper] elsewhere, the output is x * noise, the in-place
    and out= forms agree with that, the input's gradient is the noise, and over many draws the
    slopes average (lower + upper) / 2. The noise tensors are contiguous: the CPU writes a
    non-contiguous one as if it were contiguous (torch 2.13). bfloat16: the CPU multiplies by
    the float draw, then rounds the noise, so x * noise matches its output to a rounding."""
    tol = 1e-2 if x.dtype == torch.bfloat16 else 0.0

    def same(a, b):
        return bool(((a - b).abs() <= tol * b.abs()).all())

    xg = x.detach().clone().requires_grad_(True)
    noise = torch.full(x.shape, -7.0, dtype=x.dtype, device=x.device)
    out = aten.rrelu_with_noise(xg, noise, lower, upper, True)
    (grad,) = torch.autograd.grad(out, xg, torch.ones_like(out))
    neg = x <= 0
    eps = torch.finfo(x.dtype).eps * 4
    checks = [same(out.detach(), torch.where(neg, x * noise, x)),
              bool(((noise == 1) | neg).all()),
              bool((~neg | ((noise >= lower - eps) & (noise <= upper + eps))).all()),
              bool((grad == noise).all())]
    n2, y = torch.empty(x.shape, dtype=x.dtype, device=x.device), x.clone()
    aten.rrelu_with_noise_(y, n2, lower, upper, True)
    checks.append(same(y, torch.where(neg, x * n2, x)))
    n3, o3 = torch.empty(x.shape, dtype=x.dtype, device=x.device), torch.empty_like(x)
    aten.rrelu_with_noise.out(x, n3, lower, upper, True, None, out=o3)
    checks.append(same(o3, torch.where(neg, x * n3, x)))
    if neg.sum() > 1000:
        checks.append(abs(float(noise[neg].double().mean()) - (lower + upper) / 2) < 0.01 * (upper - lower) + 0.01)
    return torch.tensor(checks)


def _rrelu_train_samples(dtype):
    for i, s in enumerate(((), (0,), (7,), (5, 3), (65, 129))):
        yield Sample((make(s, dtype, seed=i), 0.125, 1 / 3), tag=f"shape{s}")
    yield Sample((make((4, 6), dtype, noncontig=True), 0.1, 0.3), tag="noncontig")
    yield Sample((make((6, 4), dtype).t(), 0.5, 0.5), tag="transposed, lower == upper")
    yield Sample((torch.tensor([0.0, -0.0, float("nan"), -float("inf"), 3.0], dtype=dtype), 0.2, 0.4),
                 tag="special values")


def _rrelu_eval(x):
    n = torch.empty_like(x)
    y = x.clone()
    aten.rrelu_with_noise_(y, n, 0.1, 0.3, False)
    return F.rrelu(x), F.rrelu(x, 0.2, 0.6), aten.rrelu_with_noise(x, n, 0.25, 0.5, False), y


def _rrelu_errors(x, noise, training):
    return aten.rrelu_with_noise(x, noise, 0.1, 0.3, training)


def _rrelu_error_samples(dtype):
    yield Sample((make((5,), dtype), make((4,), dtype), True), tag="noise shape raises")
    yield Sample((make((5,), dtype), make((4,), dtype), False), tag="noise shape raises (eval)")
    yield Sample((make((5,), dtype), make((5,), torch.float64), True), tag="noise dtype raises")
    yield Sample((make((5,), torch.float16), make((5,), torch.float16), True), tag="float16 training raises")
    yield Sample((make((5,), torch.int64), make((5,), torch.int64), True), tag="int64 raises")
    yield Sample((make((5,), torch.int64), make((5,), torch.int64), False), tag="int64 eval raises")


def _rrelu_bad_range(x):
    return aten.rrelu_with_noise(x, torch.empty_like(x), 0.4, 0.3, True)


def _rrelu_eval_out(x):
    n, o = torch.empty_like(x), torch.empty(2, dtype=x.dtype, device=x.device)
    aten.rrelu_with_noise.out(x, n, 0.1, 0.3, False, None, out=o)
    return o


CASES += [
    OpCase("rrelu_train", ["aten::rrelu_with_noise", "aten::rrelu_with_noise_", "aten::rrelu_with_noise.out"],
           _rrelu_train_checks, _rrelu_train_samples, dtypes=FLOATS + (torch.bfloat16,)),
    OpCase("rrelu_eval", ["aten::rrelu_with_noise", "aten::rrelu_with_noise_", "aten::rrelu_with_noise.out"],
           _rrelu_eval, _act_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("rrelu_errors", ["aten::rrelu_with_noise"], _rrelu_errors, _rrelu_error_samples, dtypes=FLOAT),
    OpCase("rrelu_bad_range", ["aten::rrelu_with_noise"], _rrelu_bad_range,
           lambda dt: [Sample((torch.tensor([-1.0, 2.0, -3.0, 0.5], dtype=dt),), tag="lower > upper raises")],
           dtypes=FLOAT),
    OpCase("rrelu_eval_out", ["aten::rrelu_with_noise.out"], _rrelu_eval_out, _act_samples, dtypes=FLOATS + HALFS),
]
