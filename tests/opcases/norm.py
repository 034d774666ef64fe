"""Cases for normalization (csrc/ops/norm.cpp): layer_norm and rms_norm forward and backward
(grad_input, grad_weight, grad_bias), with and without affine parameters, over one or more
normalized dims, non-contiguous inputs, empty batches and rows longer than a work-group caches."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

LN = ["aten::native_layer_norm", "aten::native_layer_norm_backward"]
RMS = ["aten::_fused_rms_norm", "aten::_fused_rms_norm_backward"]


def _shapes(dtype, affine=True, bias=True):
    cases = [
        ((7,), (7,)),
        ((5, 3), (3,)),
        ((2, 3, 4), (3, 4)),
        ((0, 6), (6,)),
        ((33, 129), (129,)),
        ((3, 5000), (5000,)),  # longer than a work-group keeps in registers
        ((130, 2), (2,)),      # many rows of a tiny team
        ((3, 0), (0,)),        # empty rows: mean 0, rstd NaN (as the CPU)
    ]
    for i, (shape, ns) in enumerate(cases):
        w = make(ns, dtype, seed=10 + i) if affine else None
        b = make(ns, dtype, seed=20 + i) if affine and bias else None
        yield Sample((make(shape, dtype, seed=i), ns, w, b), tag=f"{shape} over {ns}")
    yield Sample((make((4, 6), dtype, noncontig=True), (6,), make((6,), dtype), make((6,), dtype)), tag="noncontig")
    yield Sample((make((6, 4), dtype).t(), (6,), None, None), tag="transposed, no affine")


def _layer_norm(x, ns, w, b):
    return F.layer_norm(x, ns, w, b, eps=1e-5)


def _native_layer_norm(x, ns, w, b):
    return torch.ops.aten.native_layer_norm(x, list(ns), w, b, 1e-5)


def _rms_norm(x, ns, w, b):
    return F.rms_norm(x, ns, w, eps=1e-6)


def _rms_norm_default_eps(x, ns, w, b):
    return F.rms_norm(x, ns, w)


def _mixed(dtype):
    # 16-bit activations with float32 parameters (autocast's layer_norm): float statistics.
    for s in _shapes(dtype):
        x, ns, w, b = s.args
        if w is not None and x.numel() < 5000:
            yield Sample((x, ns, w.float(), b.float() if b is not None else None), tag=s.tag)


CASES = [
    OpCase("layer_norm", LN, _layer_norm, _shapes, dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("layer_norm_no_affine", LN, _layer_norm, lambda dt: _shapes(dt, affine=False), dtypes=(torch.float32,),
           grad=True, atol=1e-4, rtol=1e-4),
    OpCase("layer_norm_weight_only", LN, _layer_norm, lambda dt: _shapes(dt, bias=False), dtypes=(torch.float32,),
           grad=True, atol=1e-4, rtol=1e-4),
    OpCase("native_layer_norm_stats", LN, _native_layer_norm, _shapes, dtypes=FLOATS, grad=True, atol=1e-4,
           rtol=1e-4),
    OpCase("layer_norm_half", LN, _native_layer_norm, lambda dt: (s for s in _shapes(dt) if s.args[0].numel() < 5000),
           dtypes=HALFS, grad=True, atol=3e-2, rtol=3e-2),
    OpCase("layer_norm_mixed", LN, _native_layer_norm, _mixed, dtypes=HALFS, grad=True, atol=3e-2, rtol=3e-2),
    OpCase("rms_norm", RMS, _rms_norm, _shapes, dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("rms_norm_default_eps", RMS, _rms_norm_default_eps,
           lambda dt: (s for s in _shapes(dt, bias=False) if s.args[0].numel() < 5000), dtypes=FLOATS + HALFS,
           grad=True, atol=3e-2, rtol=3e-2),
    OpCase("rms_norm_no_weight", RMS, _rms_norm, lambda dt: _shapes(dt, affine=False), dtypes=(torch.float32,),
           grad=True, atol=1e-4, rtol=1e-4),
]


# ---- weight norm ---------------------------------------------------------------------------
WN = ["aten::_weight_norm_interface", "aten::_weight_norm_interface_backward"]


def _g_for(v, dim, seed, dtype):
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return make(shape, dtype, low=0.5, high=2.0, seed=seed)


def _weight_norm_samples(dtype):
    """torch._weight_norm (which takes the fused op for dim 0 and the last dim, and passes it
    contiguous v and g): ranks 1 to 4, size-1 dims, non-contiguous v, a 1-D g, and the other dims
    (decomposed, so only their pieces run on the device). No empty v: the CPU's kernel divides
    by the empty dim's size (SIGFPE, torch 2.13)."""
    for i, s in enumerate(((5,), (3, 4), (4, 1), (1, 6), (3, 4, 5), (6, 3, 2, 3), (65, 129))):
        v = make(s, dtype, seed=i)
        for dim in sorted({0, len(s) - 1}):
            yield Sample((v, _g_for(v, dim, 10 + i, dtype), dim), tag=f"shape{s} dim {dim}")
    v = make((4, 6), dtype, noncontig=True, seed=3)
    yield Sample((v, _g_for(v, 0, 4, dtype), 0), tag="noncontig v dim 0")
    yield Sample((v.t(), _g_for(v.t(), 1, 5, dtype), 1), tag="transposed v last dim")
    v = make((3, 4, 5), dtype, seed=6)
    yield Sample((v, make((3,), dtype, low=0.5, high=2, seed=7), 0), tag="1-d g")
    yield Sample((v, _g_for(v, 1, 8, dtype), 1), tag="middle dim (decomposed)")
    yield Sample((v, make((), dtype, seed=9), -1), tag="dim -1: whole tensor (decomposed)")


def _weight_norm_module(x, weight, g_seed):
    """nn.utils.parametrizations.weight_norm on a Linear layer (dim 0) and on a conv (dim 0)."""
    lin = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False).to(device=x.device, dtype=x.dtype)
    with torch.no_grad():
        lin.weight.copy_(weight)
    lin = torch.nn.utils.parametrizations.weight_norm(lin)
    return lin(x)


def _weight_norm_module_samples(dtype):
    yield Sample((make((5, 4), dtype), make((3, 4), dtype, seed=1), 0), tag="linear")


def _weight_norm_direct(v, g, dim):
    w, norm = torch.ops.aten._weight_norm_interface(v, g, dim)
    gw = make(tuple(v.shape), v.dtype, seed=42).to(v.device)
    return (w, norm) + tuple(torch.ops.aten._weight_norm_interface_backward(gw, v, g, norm, dim))


def _weight_norm_direct_samples(dtype):
    for i, s in enumerate(((3, 4, 5), (7,), (2, 9))):
        v = make(s, dtype, seed=i)
        for dim in sorted({0, len(s) - 1}):
            yield Sample((v, _g_for(v, dim, 20 + i, dtype), dim), tag=f"shape{s} dim {dim}")
    v = make((3, 4, 5), dtype)
    yield Sample((v, _g_for(v, 1, 30, dtype), 1), tag="middle dim raises")


def _weight_norm_out(v, g, dim):
    o0, o1 = torch.empty(1, dtype=v.dtype, device=v.device), torch.empty(0, dtype=torch.float32, device=v.device)
    torch.ops.aten._weight_norm_interface.out(v, g, dim, out0=o0, out1=o1)
    return o0, o1


CASES += [
    OpCase("weight_norm", WN, torch._weight_norm, _weight_norm_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("weight_norm_module", WN, _weight_norm_module, _weight_norm_module_samples, dtypes=FLOATS, grad=True),
    OpCase("weight_norm_direct", WN, _weight_norm_direct, _weight_norm_direct_samples, dtypes=FLOATS + HALFS),
    OpCase("weight_norm_out", WN, _weight_norm_out,
           lambda dt: (s for s in _weight_norm_direct_samples(dt) if "raises" not in s.tag), dtypes=(torch.float32,)),
]


# ---- group norm (ATen's native_group_norm and backward over norm.cpp's kernel stubs) ----------
def _group_norm_samples(dtype):
    for i, (shape, groups, affine) in enumerate([
            ((2, 6, 5), 3, True), ((3, 8, 4, 4), 2, True), ((2, 4, 3, 2, 2), 4, False), ((1, 6), 6, True),
            ((4, 32, 7, 7), 8, True), ((0, 6, 3), 2, True), ((2, 4, 0), 2, True), ((1, 4, 61, 53), 1, True),
            ((3, 4), 4, True)]):
        w = make((shape[1],), dtype, seed=10 + i) if affine else None
        b = make((shape[1],), dtype, seed=20 + i) if affine else None
        yield Sample((make(shape, dtype, seed=i), groups, w, b), tag=f"{shape} in {groups} groups")
    yield Sample((make((2, 6, 5), dtype, noncontig=True), 2, make((6,), dtype), None), tag="noncontig, no bias")
    yield Sample((make((2, 4, 3, 3), dtype).to(memory_format=torch.channels_last), 2, make((4,), dtype),
                  make((4,), dtype)), tag="channels_last")
    yield Sample((make((2, 6, 17), dtype) + 100, 3, make((6,), dtype), make((6,), dtype)), tag="mean far from 0")
    # Channels-innermost inputs, read in place (norm.cl's group_norm_cl_* kernels): channels_last
    # and channels_last_3d, groups of a non-power-of-two number of channels, several channel
    # blocks with a partial one (70 and 160 channels), many positions per sample (slices merged by
    # Chan's formula), no affine parameters, weight only. "grad in layout" hands the backward a
    # gradient in the input's layout (an autograd graph's usual case; the others get a
    # contiguous one, which it copies). The small ones come first: the 16-bit case keeps only
    # inputs under 1000 elements.
    cl_inputs = [((2, 6, 3, 4), 3, torch.channels_last, "affine"), ((2, 12, 2, 3, 2), 4, torch.channels_last_3d, "affine"),
                 ((2, 6, 5, 3), 2, torch.channels_last, "none"), ((4, 70, 5, 6), 7, torch.channels_last, "affine"),
                 ((2, 160, 4, 4), 32, torch.channels_last, "weight"), ((1, 20, 32, 32), 5, torch.channels_last, "affine"),
                 ((3, 9, 5, 4, 6), 3, torch.channels_last_3d, "affine"), ((2, 96, 9, 9), 1, torch.channels_last, "affine")]
    for i, (shape, groups, mf, params) in enumerate(cl_inputs):
        x, c = make(shape, dtype, seed=30 + i).contiguous(memory_format=mf), shape[1]
        w = make((c,), dtype, seed=40 + i, low=0.5, high=2) if params != "none" else None
        b = make((c,), dtype, seed=50 + i) if params == "affine" else None
        tag = f"{mf} {shape} in {groups} groups, {params}"
        yield Sample((x, groups, w, b), tag=tag)
        yield Sample((x, groups, w, b), {"grad_in_layout": True}, tag=tag + ", grad in layout")
    # (A channels_last mean far from 0 is in test_edge_semantics.py, against a float64 reference:
    # the CPU's channels-last kernel loses digits there that the ocl kernel keeps.)
    if dtype in (torch.float16, torch.bfloat16):
        yield Sample((make((2, 4, 5), dtype), 2, make((4,), torch.float32), make((4,), torch.float32)),
                     tag="float weight and bias (mixed)")
        x = make((2, 6, 3, 4), dtype, seed=61).contiguous(memory_format=torch.channels_last)
        yield Sample((x, 3, make((6,), torch.float32), make((6,), torch.float32)), {"grad_in_layout": True},
                     tag="channels_last, float weight and bias (mixed)")


def _group_norm(x, groups, w, b, grad_in_layout=False):
    y = F.group_norm(x, groups, w, b, eps=1e-5)
    return y.movedim(1, -1) if grad_in_layout else y  # its gradient comes back in x's layout


CASES += [
    OpCase("group_norm", ["aten::native_group_norm", "aten::native_group_norm_backward"], _group_norm, _group_norm_samples, dtypes=FLOATS,
           grad=True, atol=1e-4, rtol=1e-4),
    OpCase("group_norm_half", ["aten::native_group_norm", "aten::native_group_norm_backward"], _group_norm,
           lambda dt: (s for s in _group_norm_samples(dt) if s.args[0].numel() < 1000), dtypes=HALFS, grad=True,
           atol=3e-2, rtol=3e-2),
]
