"""Cases for the multi-tensor ops (csrc/ops/foreach.cpp) and the fused optimizer / GradScaler
ops (csrc/ops/optim.cpp). Lists mix sizes (empty, 0-dim, odd, several work-groups) and more
tensors than one launch takes, so chunking is exercised; a non-contiguous list and an integer
list take the per-tensor path."""
import torch

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make

LIST_SHAPES = [(), (0,), (7,), (5, 3), (4097,), (1,), (2, 3, 4), (9,), (33, 65), (3,)]


def tlist(dtype, seed=0, low=None, high=None, shapes=LIST_SHAPES, noncontig=False):
    return [make(s, dtype, seed=seed * 100 + i, low=low, high=high, noncontig=noncontig) for i, s in enumerate(shapes)]


def _lists(n, low=None, high=None, noncontig=False):
    def samples(dtype):
        yield Sample(tuple(tlist(dtype, seed=k, low=low, high=high) for k in range(n)), tag="mixed sizes")
        if noncontig:
            yield Sample(tuple(tlist(dtype, seed=k, low=low, high=high, shapes=[(4, 6)] * 2, noncontig=True)
                               for k in range(n)), tag="noncontig (per-tensor path)")
    return samples


def _with(extra, n=1, low=None, high=None, noncontig=False):
    """Samples of n lists followed by the extra arguments made by extra(dtype, size)."""
    def samples(dtype):
        for s in _lists(n, low, high, noncontig)(dtype):
            yield Sample(s.args + tuple(extra(dtype, len(s.args[0]))), tag=s.tag)
    return samples


def _scalar(v):
    return lambda dtype, n: [v]


def _scalars(dtype, n):
    return [[0.5 + 0.25 * i for i in range(n)]]


def _inplace(fn):
    def run(*args):
        fn(*args)
        return args[0]
    return run


F = getattr
CASES = []


def add_pair(name, overload, ns, samples, dtypes=FLOAT, **kw):
    """Out-of-place and in-place cases of torch._foreach_<name>.<overload>."""
    op = F(torch.ops.aten, f"_foreach_{name}")
    op_ = F(torch.ops.aten, f"_foreach_{name}_")
    ov = overload or "default"
    cov = f".{overload}" if overload else ""
    CASES.append(OpCase(f"foreach_{name}_{ov}", [f"aten::_foreach_{name}{cov}"], F(op, ov), samples, dtypes=dtypes, **kw))
    CASES.append(OpCase(f"foreach_{name}__{ov}", [f"aten::_foreach_{name}_{cov}"], _inplace(F(op_, ov)), samples,
                        dtypes=dtypes, **kw))


# Every dtype and the per-tensor path on a few representative ops; float32 elsewhere (one
# program per dtype serves every op, so the others add no kernel coverage).
WIDE = dict(dtypes=FLOATS + HALFS)
add_pair("add", "Scalar", 1, _with(_scalar(1.5), noncontig=True), **WIDE)
add_pair("add", "ScalarList", 1, _with(_scalars))
for name in ("sub", "mul", "div", "clamp_min", "clamp_max", "maximum"):
    add_pair(name, "Scalar", 1, _with(_scalar(1.5)))
    add_pair(name, "ScalarList", 1, _with(_scalars))
for name in ("mul", "div", "clamp_min", "clamp_max", "maximum"):
    add_pair(name, "List", 2, _lists(2, low=0.5, high=3) if name == "div" else _lists(2))
for name in ("add", "sub"):
    add_pair(name, "List", 2, _with(lambda d, n: [], n=2))
    CASES.append(OpCase(f"foreach_{name}_List_alpha", [], lambda a, b, op=F(torch.ops.aten, f"_foreach_{name}"):
                        op.List(a, b, alpha=-2.5), _lists(2)))


def _tensor_scalar_samples(dtype):
    for s in _lists(1)(dtype):
        yield Sample(s.args + (torch.tensor(0.75, dtype=dtype).to(torch.float32),), tag=s.tag)
        yield Sample(s.args + (torch.tensor(2.0, dtype=torch.float64),), tag=s.tag + " f64 scalar")


add_pair("mul", "Tensor", 1, _tensor_scalar_samples, **WIDE)
add_pair("div", "Tensor", 1, _tensor_scalar_samples)
add_pair("add", "Tensor", 1, _tensor_scalar_samples)
add_pair("lerp", "Scalar", 2, _with(_scalar(0.3), n=2), **WIDE)
add_pair("lerp", "ScalarList", 2, _with(lambda d, n: [[0.1 * i for i in range(n)]], n=2))
add_pair("lerp", "List", 3, _lists(3, low=0, high=1))
for name in ("addcmul", "addcdiv"):
    lo = 0.5 if name == "addcdiv" else None
    add_pair(name, "Scalar", 3, _with(_scalar(-0.5), n=3, low=lo, high=3 if lo else None, noncontig=True), **WIDE)
    add_pair(name, "ScalarList", 3, _with(_scalars, n=3, low=lo, high=3 if lo else None))
    # The packed scalars live on the CPU (ATen requires it); the case builds them inside fn so
    # the harness does not move them to the device.
    op, op_ = F(torch.ops.aten, f"_foreach_{name}").Tensor, F(torch.ops.aten, f"_foreach_{name}_").Tensor
    tsamples = _with(lambda d, n: [[-1 + 0.25 * i for i in range(n)]], n=3, low=lo, high=3 if lo else None)
    CASES.append(OpCase(f"foreach_{name}_Tensor", [f"aten::_foreach_{name}.Tensor"],
                        lambda a, b, c, v, op=op: op(a, b, c, torch.tensor(v, dtype=torch.float64)), tsamples))
    CASES.append(OpCase(f"foreach_{name}__Tensor", [f"aten::_foreach_{name}_.Tensor"],
                        _inplace(lambda a, b, c, v, op=op_: op(a, b, c, torch.tensor(v, dtype=torch.float64))), tsamples))
add_pair("sqrt", None, 1, _lists(1, low=0, high=4), **WIDE)
add_pair("neg", None, 1, _lists(1))


def _norm_samples(dtype):
    for o in (2, 1, 0, 3.5, float("inf"), float("-inf")):
        yield Sample((tlist(dtype), o), tag=f"ord {o}")
    yield Sample((tlist(dtype, shapes=[(4, 6)] * 2, noncontig=True),), tag="noncontig")


def _int_samples(dtype):
    yield Sample((tlist(torch.int64),), tag="int64 (slow path)")


CASES += [
    OpCase("foreach_add_Scalar_int", [], lambda x: torch._foreach_add(x, 2), _int_samples),
    OpCase("foreach_zero_", ["aten::_foreach_zero_"], _inplace(torch._foreach_zero_), _lists(1)),
    OpCase("foreach_copy_", ["aten::_foreach_copy_"], _inplace(torch._foreach_copy_), _lists(2)),
    OpCase("foreach_copy_cross_dtype", [], _inplace(torch._foreach_copy_),
           lambda d: [Sample((tlist(d), tlist(torch.float64)))], dtypes=FLOAT),
    OpCase("foreach_norm", ["aten::_foreach_norm.Scalar"], torch._foreach_norm, _norm_samples, dtypes=FLOATS,
           atol=1e-4, rtol=1e-4),
    OpCase("foreach_norm_half", [], torch._foreach_norm, _norm_samples, dtypes=HALFS, rtol=2e-2),
    OpCase("foreach_norm_dtype", [], lambda x: torch._foreach_norm(x, 2, dtype=torch.float32),
           lambda d: [Sample((tlist(d),))], dtypes=HALFS, atol=1e-3, rtol=1e-3),
]


# ---- GradScaler ops ---------------------------------------------------------------------------
def _unscale(xs, found_inf, inv_scale):
    torch._amp_foreach_non_finite_check_and_unscale_(xs, found_inf, inv_scale)
    return xs, found_inf


def _unscale_samples(dtype):
    xs = tlist(dtype)
    yield Sample((xs, torch.zeros(1), torch.tensor([0.25])), tag="finite")
    ys = tlist(dtype)
    ys[4][17] = float("inf")
    yield Sample((ys, torch.zeros(1), torch.tensor([0.5])), tag="inf")
    zs = tlist(dtype)
    zs[8][3, 5] = float("nan")
    yield Sample((zs, torch.zeros(1), torch.tensor([1.0])), tag="nan, inv_scale 1")
    yield Sample((tlist(dtype, shapes=[(4, 6)] * 2, noncontig=True), torch.zeros(1), torch.tensor([2.0])),
                 tag="noncontig")
    yield Sample(([make((5,), dtype), make((3, 2), torch.float32)], torch.zeros(1), torch.tensor([0.5])),
                 tag="mixed dtypes")


def _update_scale(scale, tracker, found_inf, growth, backoff, interval):
    torch._amp_update_scale_(scale, tracker, found_inf, growth, backoff, interval)
    return scale, tracker


def _update_scale_samples(dtype):
    for found in (0.0, 1.0):
        for t in (0, 1, 2):
            yield Sample((torch.tensor([1024.0]), torch.tensor([t], dtype=torch.int32), torch.tensor([found]),
                          2.0, 0.5, 3), tag=f"found_inf={found} tracker={t}")
    yield Sample((torch.tensor([3e38]), torch.tensor([2], dtype=torch.int32), torch.tensor([0.0]), 2.0, 0.5, 3),
                 tag="growth overflows")


CASES += [
    OpCase("amp_unscale", ["aten::_amp_foreach_non_finite_check_and_unscale_"], _unscale, _unscale_samples,
           dtypes=FLOATS + HALFS),
    OpCase("amp_update_scale", ["aten::_amp_update_scale_"], _update_scale, _update_scale_samples, dtypes=FLOAT),
]


# ---- fused Adam / AdamW ----------------------------------------------------------------------
ADAM_SHAPES = [(7,), (5, 3), (4097,), (), (33, 65), (1,), (9,), (2, 3, 4), (3,), (0,)]


def _adam_samples(dtype):
    def state(amsgrad, seed):
        params = tlist(dtype, seed=seed, shapes=ADAM_SHAPES)
        grads = tlist(dtype, seed=seed + 1, shapes=ADAM_SHAPES)
        m = tlist(dtype, seed=seed + 2, shapes=ADAM_SHAPES)
        v = tlist(dtype, seed=seed + 3, shapes=ADAM_SHAPES, low=0, high=1)
        vmax = tlist(dtype, seed=seed + 4, shapes=ADAM_SHAPES, low=0, high=1) if amsgrad else []
        steps = [torch.tensor(float(3 + i)) for i in range(len(ADAM_SHAPES))]
        return params, grads, m, v, vmax, steps

    for amsgrad in (False, True):
        for maximize in (False, True):
            yield Sample(state(amsgrad, 1), dict(lr=1e-2, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8,
                                                 amsgrad=amsgrad, maximize=maximize),
                         tag=f"amsgrad={amsgrad} maximize={maximize}")
    yield Sample(state(False, 2), dict(lr=torch.tensor(3e-3), beta1=0.8, beta2=0.95, weight_decay=0.0, eps=1e-6,
                                       amsgrad=False, maximize=False), tag="tensor lr")
    yield Sample(state(False, 3), dict(lr=1e-3, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=False,
                                       maximize=False, grad_scale=torch.tensor([4.0]), found_inf=torch.tensor([0.0])),
                 tag="grad_scale")
    yield Sample(state(False, 4), dict(lr=1e-3, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=False,
                                       maximize=False, grad_scale=torch.tensor([4.0]), found_inf=torch.tensor([1.0])),
                 tag="found_inf skips")


def _adam(op):
    def run(params, grads, m, v, vmax, steps, **kw):
        if isinstance(kw["lr"], torch.Tensor):
            F(op, "tensor_lr")(params, grads, m, v, vmax, steps, **kw)
        else:
            op(params, grads, m, v, vmax, steps, **kw)
        return params, grads, m, v, vmax
    return run


CASES += [
    OpCase("fused_adam", ["aten::_fused_adam_", "aten::_fused_adam_.tensor_lr"], _adam(torch.ops.aten._fused_adam_),
           _adam_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-5),
    OpCase("fused_adamw", ["aten::_fused_adamw_", "aten::_fused_adamw_.tensor_lr"],
           _adam(torch.ops.aten._fused_adamw_), _adam_samples, dtypes=FLOATS, atol=1e-5, rtol=1e-5),
    OpCase("fused_adamw_half", [], _adam(torch.ops.aten._fused_adamw_), _adam_samples, dtypes=HALFS),
]
