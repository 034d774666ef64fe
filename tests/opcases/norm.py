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
