"""Reflection and replication padding (csrc/ops/padding.cpp) through F.pad and the aten ops:
1-D, 2-D and 3-D, batched and unbatched, odd sizes, pads of 0, the largest reflection pads
(size - 1), replication pads larger than the input, negative pads (cropping, down to empty
spatial outputs), size-1 dims, non-contiguous, channels_last, expanded and offset inputs,
empty batches; every dtype the CPU pads (integers forward only: the CPU has no integer
backward), gradients; out= and grad_input= forms with wrongly sized outs; the CPU's errors."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, INTS, OpCase, Sample, make

MODES = ("reflect", "replicate")
OPS = {(m, nd): f"{'reflection' if m == 'reflect' else 'replication'}_pad{nd}d" for m in MODES for nd in (1, 2, 3)}
COVERS = ([f"aten::{op}.out" for op in OPS.values()] + [f"aten::{op}_backward.grad_input" for op in OPS.values()] +
          ["aten::reflection_pad2d", "aten::reflection_pad2d_backward", "aten::replication_pad2d_backward",
           "aten::replication_pad3d_backward"])


def _pad(x, pad, mode):
    return F.pad(x, pad, mode=mode)


# (spatial shape, padding, tag) per dimensionality; every pad valid for both modes.
GEOMS = {
    1: [((7,), (2, 3), "plain"), ((5,), (4, 4), "largest reflection"), ((6,), (0, 0), "zero"),
        ((7,), (-2, 3), "crop left"), ((7,), (3, -4), "crop right"), ((7,), (-3, -3), "crop both"),
        ((1,), (0, 0), "size 1")],
    2: [((5, 7), (2, 3, 1, 4), "plain"), ((4, 5), (4, 3, 3, 2), "largest reflection"),
        ((6, 5), (-2, 3, 2, -3), "crop"), ((4, 6), (-3, -3, 1, 1), "empty width"), ((3, 1), (0, 0, 2, 1), "width 1")],
    3: [((3, 4, 5), (2, 1, 1, 3, 2, 0), "plain"), ((3, 3, 4), (3, 3, 2, 2, 2, 2), "largest reflection"),
        ((4, 5, 3), (-1, 2, 2, -2, -1, 1), "crop"), ((3, 4, 5), (1, 1, 1, 1, -2, -1), "empty depth")],
}


def _samples(dtype, modes=MODES, cpu_grad_bug=False):
    for mode in modes:
        for nd, geoms in GEOMS.items():
            for i, (shape, pad, tag) in enumerate(geoms):
                if mode == "reflect" and tag == "empty depth" and not cpu_grad_bug:
                    continue  # the CPU's reflection_pad3d_backward leaves this grad_input uninitialized
                yield Sample((make((2, 3) + shape, dtype, seed=i), pad, mode), tag=f"{mode} {nd}d {tag}")
                yield Sample((make((3,) + shape, dtype, seed=i), pad, mode), tag=f"{mode} {nd}d {tag} unbatched")
            shape, pad, _ = geoms[0]
            yield Sample((make((2, 3) + shape, dtype, noncontig=True), pad, mode), tag=f"{mode} {nd}d noncontig")
            yield Sample((make((3, 2) + shape, dtype).transpose(0, 1), pad, mode), tag=f"{mode} {nd}d transposed")
            yield Sample((make((1, 3) + shape, dtype).expand((4, 3) + shape), pad, mode), tag=f"{mode} {nd}d expanded")
            yield Sample((make((3, 3) + shape, dtype)[1:], pad, mode), tag=f"{mode} {nd}d offset")
            yield Sample((make((0, 3) + shape, dtype), pad, mode), tag=f"{mode} {nd}d empty batch")
        yield Sample((make((2, 3, 5, 7), dtype).contiguous(memory_format=torch.channels_last), (2, 1, 3, 2), mode),
                     tag=f"{mode} channels_last")
        yield Sample((make((2, 3, 3, 4, 5), dtype).contiguous(memory_format=torch.channels_last_3d),
                      (1, 2, 2, 1, 1, 2), mode), tag=f"{mode} channels_last_3d")
        yield Sample((make((4, 16, 33, 31), dtype, seed=9), (3, 4, 5, 2), mode), tag=f"{mode} large")
    if "replicate" in modes:
        yield Sample((make((2, 3, 2, 3), dtype), (5, 4, 3, 6), "replicate"), tag="replicate pads > size")
        yield Sample((make((2, 1, 1, 1), dtype), (3, 2, 1, 4, 2, 2), "replicate"), tag="replicate 1x1x1")
        yield Sample((make((2, 3, 4), dtype), (-2, 5), "replicate"), tag="replicate crop and pad past size")


def _aten(op, variant=None):
    f = getattr(torch.ops.aten, op)
    return f if variant is None else getattr(f, variant)


def _out_forms(x, g, pad):
    """The out= and grad_input= overloads with wrongly sized outs (resized, as on the CPU), and
    the functional backward ops called directly."""
    nd = len(pad) // 2
    res = []
    for mode in MODES:
        op = OPS[(mode, nd)]
        out = torch.empty(3, dtype=x.dtype, device=x.device)
        res.append(_aten(op, "out")(x, pad, out=out))
        gi = torch.empty(0, dtype=x.dtype, device=x.device)
        res.append(_aten(op + "_backward", "grad_input")(g, x, pad, grad_input=gi))
        res.append(_aten(op + "_backward")(g, x, pad))
    return res


def _out_samples(dtype):
    for nd, (shape, pad, _) in ((nd, GEOMS[nd][0]) for nd in (1, 2, 3)):
        x = make((2, 3) + shape, dtype)
        oshape = tuple(s + pad[2 * (len(shape) - 1 - k)] + pad[2 * (len(shape) - 1 - k) + 1]
                       for k, s in enumerate(shape))
        yield Sample((x, make((2, 3) + oshape, dtype, seed=1), pad), tag=f"{nd}d")
        yield Sample((x[0], make((3,) + oshape, dtype, seed=1), pad), tag=f"{nd}d unbatched")
        yield Sample((make((2, 3) + shape, dtype, noncontig=True), make((2, 3) + oshape, dtype, noncontig=True), pad),
                     tag=f"{nd}d noncontig")


def _float_reference(fn):
    """fn, with the CPU reference computed in float32 and rounded once: the CPU's 16-bit
    backward adds in the 16-bit type (a bfloat16 corner of 12 terms was 12 ulps off the exact
    sum); the device adds in float."""
    def run(*args):
        if args[0].device.type == "cpu" and args[0].dtype in HALFS:
            dt = args[0].dtype
            out = fn(*(a.float() if isinstance(a, torch.Tensor) else a for a in args))
            return [o.to(dt) for o in out]
        return fn(*args)
    return run


def _error_samples(dtype):
    """Inputs the CPU rejects (each raises there and must raise the same type here)."""
    for mode in MODES:
        yield Sample((make((2, 3, 4), dtype), (1, 2, 3), mode), tag=f"{mode} odd padding length")
        yield Sample((make((2, 3, 0), dtype), (1, 1), mode), tag=f"{mode} empty width")
        yield Sample((make((2, 0, 4, 4), dtype), (1, 1, 1, 1), mode), tag=f"{mode} no channels")
        yield Sample((make((0, 4, 4), dtype), (1, 1, 1, 1), mode), tag=f"{mode} unbatched no channels")
        yield Sample((make((2, 3, 4), dtype), (-2, -2), mode), tag=f"{mode} 1d cropped to nothing")
        yield Sample((make((2, 3, 4, 4), dtype), (-2, -2, -3, -1), mode), tag=f"{mode} 2d cropped to nothing")
        yield Sample((make((2, 3, 4, 4, 4), dtype), (-2, -2, -2, -2, -2, -2), mode), tag=f"{mode} 3d cropped")
        yield Sample((make((2, 3, 4, 4), dtype), (-3, -2, 0, 0), mode), tag=f"{mode} 2d negative size")
    for nd in (1, 2, 3):
        yield Sample((make((2, 3) + (4,) * nd, dtype), (4, 1) * nd, "reflect"), tag=f"reflect {nd}d pad == size")
        yield Sample((make((2, 3) + (4,) * nd, dtype), (0, 5) * nd, "reflect"), tag=f"reflect {nd}d right pad > size")
        yield Sample((make((2, 3) + (4,) * nd, dtype), (-2, 5) * nd, "reflect"), tag=f"reflect {nd}d crop + pad > size")
        yield Sample((make((3,) + (1,) * nd, dtype), (1, 0) * nd, "reflect"), tag=f"reflect {nd}d size 1")


def _aten_errors(x, pad, op):
    return _aten(op)(x, pad)


def _aten_error_samples(dtype):
    """Wrong numbers of dims (F.pad checks them itself before the op) and padding lengths."""
    for (mode, nd), op in OPS.items():
        yield Sample((make((4,) * nd, dtype), (1, 1) * nd, op), tag=f"{op} too few dims")
        yield Sample((make((2,) * (nd + 3), dtype), (1, 1) * nd, op), tag=f"{op} too many dims")
        yield Sample((make((2, 3) + (4,) * nd, dtype), (1, 1) * (nd + 1), op), tag=f"{op} long padding")


def _backward_errors(g, x, pad, op):
    return _aten(op + "_backward")(g, x, pad)


def _backward_error_samples(dtype):
    """grad_output of the wrong spatial size or dtype. (Not: a wrong batch or channel count, or
    reflection pads >= size: the CPU does not check them and reads past its buffers, here they
    raise.)"""
    for (mode, nd), op in OPS.items():
        x = make((2, 3) + (4,) * nd, dtype)
        yield Sample((make((2, 3) + (6,) * (nd - 1) + (7,), dtype), x, (1, 1) * nd, op), tag=f"{op} wrong width")
        yield Sample((make((2, 3) + (7,) + (6,) * (nd - 1), dtype), x, (1, 1) * nd, op), tag=f"{op} wrong first dim")
        yield Sample((make((2, 3) + (6,) * nd, torch.float64), x, (1, 1) * nd, op), tag=f"{op} grad dtype")
        yield Sample((make((6,) * nd, dtype), make((4,) * nd, dtype), (1, 1) * nd, op), tag=f"{op} too few dims")
        yield Sample((make((0, 3) + (6,) * nd, dtype), make((0, 3) + (4,) * nd, dtype), (1, 1) * nd, op),
                     tag=f"{op} empty batch")


def _bool_samples(dtype):
    for mode in MODES:
        for nd in (1, 2, 3):
            yield Sample((torch.ones((2, 3) + (4,) * nd, dtype=torch.bool), (1, 1) * nd, mode), tag=f"{mode} {nd}d")
        yield Sample((torch.ones(0, 3, 4, dtype=torch.bool), (1, 1), mode), tag=f"{mode} empty")


def _double_backward(x, pad, mode):
    """Second derivatives: the backward's gradient is the forward again."""
    y = F.pad(x, pad, mode=mode)
    (g,) = torch.autograd.grad(y, x, torch.ones_like(y) * 0.5, create_graph=True)
    return g * x


def _double_backward_samples(dtype):
    for mode in MODES:
        yield Sample((make((2, 3, 7), dtype), (2, 3), mode), tag=f"{mode} 1d")
        yield Sample((make((2, 3, 4, 5), dtype), (2, 3, 1, 2), mode), tag=f"{mode} 2d")
        yield Sample((make((2, 3, 3, 4, 5), dtype), (1, 2, 2, 1, 1, 2), mode), tag=f"{mode} 3d")


CASES = [
    OpCase("pad_reflect_replicate", COVERS, _pad, _samples, dtypes=FLOATS, grad=True),
    # The CPU's 16-bit backward adds in the 16-bit type; the device adds in float.
    OpCase("pad_reflect_replicate_half", COVERS, _pad, _samples, dtypes=HALFS, grad=True, atol=2e-2, rtol=2e-2),
    OpCase("pad_empty_output", COVERS[:6], lambda x, pad, mode: F.pad(x, pad, mode=mode),
           lambda dt: (s for s in _samples(dt, cpu_grad_bug=True) if "empty" in s.tag), dtypes=FLOATS),
    OpCase("pad_reflect_replicate_int", COVERS[:6] + ["aten::reflection_pad2d"], _pad,
           lambda dt: _samples(dt, cpu_grad_bug=True), dtypes=INTS),
    OpCase("pad_bool_not_implemented", COVERS[:6] + ["aten::reflection_pad2d"], _pad, _bool_samples),
    OpCase("pad_out_forms", COVERS, _float_reference(_out_forms), _out_samples, dtypes=FLOATS + HALFS),
    OpCase("pad_errors", COVERS[:6] + ["aten::reflection_pad2d"], _pad, _error_samples),
    OpCase("pad_aten_errors", COVERS[:6] + ["aten::reflection_pad2d"], _aten_errors, _aten_error_samples),
    OpCase("pad_backward_errors", COVERS[6:], _backward_errors, _backward_error_samples),
    OpCase("pad_double_backward", COVERS, _double_backward, _double_backward_samples, dtypes=FLOATS, grad=True),
]
