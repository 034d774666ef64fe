"""F.interpolate in "nearest" (1-, 2- and 3-D), "nearest-exact" (1-, 2- and 3-D), "linear",
"bilinear", "trilinear", "bicubic" and antialiased "bilinear" / "bicubic" modes (and the Lanczos
antialiased op, called directly) with their backward ops: scale factors (integer, fractional, per
axis, 1, recomputed or not), explicit sizes (up and down, 1, equal), align_corners both ways, size-1
axes, empty batches, non-contiguous and channels-last inputs, 16-bit and (nearest) uint8 inputs;
gradients; out= forms; the CPU's errors. uint8 bilinear / bicubic / antialiased / Lanczos (the
CPU's fixed-point path) must match bit for bit."""
import torch
import torch.nn.functional as F

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make

SIZES = [
    (dict(scale_factor=2), "x2"),
    (dict(scale_factor=3), "x3"),
    (dict(scale_factor=(1.7, 0.6)), "fractional per axis"),
    (dict(size=(7, 5)), "size up"),
    (dict(size=(2, 2)), "size down"),
    (dict(scale_factor=1), "x1"),
]


def _samples(mode):
    def samples(dtype):
        for kwargs, tag in SIZES:
            for ac in ((None,) if mode == "nearest" else (False, True)):
                extra = {} if ac is None else {"align_corners": ac}
                yield Sample((make((2, 3, 5, 4), dtype),), dict(kwargs, mode=mode, **extra), tag=f"{tag} {extra}")
        yield Sample((make((2, 3, 4, 5), dtype, noncontig=True, seed=1),), dict(scale_factor=2, mode=mode),
                     tag="noncontig")
        yield Sample((make((4, 8, 33, 31), dtype, seed=2),), dict(size=(64, 47), mode=mode), tag="large")
    return samples


def _interpolate(x, **kwargs):
    return F.interpolate(x, **kwargs)


# Nearest in 1, 2 and 3 spatial dims, "nearest" and "nearest-exact": per-axis fractional factors,
# sizes up and down, 2x, non-contiguous and channels-last-3d inputs.
def _nearest_nd_samples(mode, nd):
    def samples(dtype):
        shape = {1: (2, 3, 7), 2: (2, 3, 5, 4), 3: (1, 2, 3, 4, 5)}[nd]
        for kwargs, tag in [(dict(scale_factor=2), "x2"), (dict(scale_factor=(1.7, 0.6, 2.5)[:nd]), "fractional"),
                            (dict(size=(3, 2, 2)[:nd]), "size down"), (dict(size=(11, 9, 6)[:nd]), "size up"),
                            (dict(scale_factor=1), "x1")]:
            yield Sample((make(shape, dtype),), dict(kwargs, mode=mode), tag=tag)
        yield Sample((make(shape, dtype, noncontig=True, seed=1),), dict(scale_factor=1.5, mode=mode), tag="noncontig")
        if nd == 3:
            x = make((2, 3, 4, 5, 6), dtype, seed=2).contiguous(memory_format=torch.channels_last_3d)
            yield Sample((x,), dict(size=(5, 3, 8), mode=mode), tag="channels_last_3d")
    return samples


# Linear, bilinear, trilinear and bicubic, antialiased or not: every size and scale form, both
# align_corners settings, size-1 input axes, empty batches, non-contiguous and channels-last
# inputs, and one larger input. No antialiased float output of width 1 and height > 1: the CPU
# (torch 2.13) gives every row the first row's weights there (its vertical pass reads the
# weights of element 0 when the inner dimension has size 1); ocl computes each row's.
def _interp_samples(mode, nd, antialias=False):
    shape = {1: (2, 3, 7), 2: (2, 3, 5, 6), 3: (1, 2, 4, 5, 3)}[nd]
    aa = {"antialias": True} if antialias else {}

    def samples(dtype):
        forms = [(dict(scale_factor=2), "x2"), (dict(scale_factor=(1.7, 0.6, 2.5)[:nd]), "fractional"),
                 (dict(scale_factor=(1.7, 0.6, 2.5)[:nd], recompute_scale_factor=True), "fractional recomputed"),
                 (dict(scale_factor=(0.45, 0.35, 0.7)[:nd]), "fractional down"),
                 (dict(size=(11, 9, 6)[:nd]), "size up"), (dict(size=(3, 2, 2)[:nd]), "size down"),
                 (dict(size=(1, 1, 1)[:nd]), "size 1"), (dict(size=shape[2:]), "same size"),
                 (dict(scale_factor=1), "x1"), (dict(scale_factor=(1.1, 0.5, 1.2)[:nd]), "x1.1 keeps a size")]
        for kwargs, tag in forms:
            for ac in (False, True):
                yield Sample((make(shape, dtype),), dict(kwargs, mode=mode, align_corners=ac, **aa),
                             tag=f"{tag} ac={ac}")
        one = shape[:2] + (1,) + shape[3:]
        yield Sample((make(one, dtype, seed=3),), dict(scale_factor=3, mode=mode, **aa), tag="size-1 axis")
        yield Sample((make(one, dtype, seed=3),), dict(scale_factor=3, mode=mode, align_corners=True, **aa),
                     tag="size-1 axis ac")
        yield Sample((make((0,) + shape[1:], dtype),), dict(scale_factor=2, mode=mode, **aa), tag="empty batch")
        yield Sample((make(shape, dtype, noncontig=True, seed=1),), dict(scale_factor=1.5, mode=mode, **aa),
                     tag="noncontig")
        if nd > 1:
            fmt = torch.channels_last if nd == 2 else torch.channels_last_3d
            x = make((2, 5) + shape[2:], dtype, seed=2).contiguous(memory_format=fmt)
            yield Sample((x,), dict(size=(7, 4, 5)[:nd], mode=mode, **aa), tag="channels_last")
            yield Sample((x,), dict(size=(3, 2, 2)[:nd], mode=mode, align_corners=True, **aa), tag="channels_last down")
        big = {1: (2, 4, 37), 2: (2, 3, 33, 31), 3: (1, 2, 9, 11, 13)}[nd]
        yield Sample((make(big, dtype, seed=4),), dict(size=(64, 47, 6)[:nd], mode=mode, **aa), tag="large up")
        yield Sample((make(big, dtype, seed=4),), dict(size=(8, 5, 4)[:nd], mode=mode, **aa), tag="large down")
    return samples


# uint8 images (torchvision's resize): the 2-D modes, antialiased or not, with 3 and 5 channels
# (the CPU has a vector kernel for up to 4), channels-last and non-contiguous, each axis alone.
# Not (1, 1) outputs: the CPU's vector kernel fails an internal assert on them (torch 2.13).
def _uint8_samples(dtype):
    x3 = make((2, 3, 13, 11), dtype, low=0, high=256)
    x5 = make((1, 5, 9, 14), dtype, low=0, high=256, seed=1)
    forms = [(dict(scale_factor=1.7), "x1.7"), (dict(scale_factor=0.45), "x0.45"), (dict(size=(5, 23)), "size"),
             (dict(size=(13, 4), align_corners=True), "W only ac"), (dict(scale_factor=(2.5, 1)), "H only"),
             (dict(size=(1, 5)), "height 1"), (dict(size=(4, 1)), "width 1"), (dict(size=(13, 11)), "same size")]
    for mode, aa in (("bilinear", False), ("bicubic", False), ("bilinear", True), ("bicubic", True)):
        for kwargs, tag in forms:
            yield Sample((x3,), dict(kwargs, mode=mode, antialias=aa), tag=f"{mode} aa={aa} {tag}")
        yield Sample((x5.contiguous(memory_format=torch.channels_last),), dict(size=(4, 20), mode=mode, antialias=aa),
                     tag=f"{mode} aa={aa} channels_last 5 channels")
        yield Sample((make((2, 3, 9, 7), dtype, low=0, high=256, noncontig=True),),
                     dict(scale_factor=(0.6, 1.9), mode=mode, antialias=aa, align_corners=True),
                     tag=f"{mode} aa={aa} noncontig")
        yield Sample((make((0, 3, 9, 7), dtype),), dict(scale_factor=2, mode=mode, antialias=aa), tag="empty batch")


def _lanczos_uint8_samples(dtype):
    x = make((2, 3, 13, 11), dtype, low=0, high=256)
    yield Sample((x, [5, 4], False), tag="down")
    yield Sample((x, [20, 30], True), tag="up ac")
    yield Sample((x.contiguous(memory_format=torch.channels_last), [13, 4], False, 1.0, 0.4), tag="W only")


def _module(x, **kwargs):
    return torch.nn.Upsample(**kwargs)(x)


def _module_samples(dtype):
    x = make((2, 3, 5, 6), dtype)
    for mode in ("bilinear", "bicubic"):
        yield Sample((x,), dict(scale_factor=1.5, mode=mode), tag=mode)
        yield Sample((x,), dict(size=(4, 9), mode=mode, align_corners=True), tag=f"{mode} size ac")
    yield Sample((make((2, 3, 7), dtype),), dict(scale_factor=2.5, mode="linear"), tag="linear")
    yield Sample((make((1, 2, 3, 4, 5), dtype),), dict(scale_factor=(2, 1.5, 0.5), mode="trilinear"), tag="trilinear")


# The ops called directly: out= (a wrong-shaped out is resized), non-contiguous gradients into
# the backward ops, and the Lanczos antialiased op (F.interpolate has no such mode).
# torch 2.13 added the Lanczos op; its cases are left out where torch lacks it.
HAS_LANCZOS = hasattr(torch.ops.aten, "_upsample_lanczos2d_aa")
AA_OPS = ("_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa") + (("_upsample_lanczos2d_aa",) if HAS_LANCZOS else ())


def _out(op, x, size, *scales):
    out = torch.empty(3, dtype=x.dtype, device=x.device)
    getattr(torch.ops.aten, op).out(x, size, False, *scales, out=out)
    return out


def _out_samples(dtype):
    x2 = make((2, 3, 5, 6), dtype)
    for op in ("upsample_bilinear2d", "upsample_bicubic2d") + AA_OPS:
        yield Sample((op, x2, [7, 3], None, None), tag=op)
        yield Sample((op, x2, [3, 4], 0.6, 0.7), tag=f"{op} scales")
    yield Sample(("upsample_linear1d", make((2, 3, 7), dtype), [12], None), tag="linear1d")
    yield Sample(("upsample_trilinear3d", make((1, 2, 3, 4, 5), dtype), [4, 4, 4], None, None, None), tag="3d")


def _backward(op, gy, size, in_size, ac, *scales):
    return getattr(torch.ops.aten, op + "_backward")(gy, size, in_size, ac, *scales)


def _backward_samples(dtype):
    gy = make((2, 3, 9, 7), dtype, noncontig=True, seed=5)
    for op in ("upsample_bilinear2d", "upsample_bicubic2d") + AA_OPS:
        for ac in (False, True):
            yield Sample((op, gy, [9, 7], [2, 3, 4, 11], ac, None, None), tag=f"{op} up ac={ac}")
            yield Sample((op, gy, [9, 7], [2, 3, 20, 3], ac, 0.45, 2.4), tag=f"{op} scales ac={ac}")
    yield Sample(("upsample_linear1d", make((2, 3, 9), dtype, noncontig=True), [9], [2, 3, 4], False, None))
    yield Sample(("upsample_trilinear3d", make((1, 2, 3, 4, 5), dtype).transpose(2, 4), [5, 4, 3], [1, 2, 2, 3, 4],
                  True, None, None, None))
    yield Sample(("upsample_bicubic2d", gy, [9, 8], [2, 3, 4, 11], False, None, None), tag="wrong grad size raises")


def _lanczos(x, size, ac, *scales):
    return torch.ops.aten._upsample_lanczos2d_aa(x, size, ac, *scales)


def _lanczos_samples(dtype):
    x = make((2, 3, 11, 9), dtype)
    for ac in (False, True):
        yield Sample((x, [4, 3], ac), tag=f"down ac={ac}")
        yield Sample((x, [15, 20], ac), tag=f"up ac={ac}")
        yield Sample((x, [11, 4], ac, 1.2, 0.4), tag=f"scales keep a size ac={ac}")
    yield Sample((x.contiguous(memory_format=torch.channels_last), [5, 5], False), tag="channels_last")


def _op(op, *args):
    return getattr(torch.ops.aten, op)(*args)


def _error_samples(dtype):
    x3, x4, x5 = make((2, 3, 7), dtype), make((2, 3, 5, 6), dtype), make((1, 2, 3, 4, 5), dtype)
    yield Sample(("upsample_linear1d", x4, [5], False), tag="4-d into linear1d raises")
    yield Sample(("upsample_bicubic2d", x3, [5, 5], False), tag="3-d into bicubic2d raises")
    yield Sample(("upsample_trilinear3d", x4, [5, 5, 5], False), tag="4-d into trilinear3d raises")
    yield Sample(("_upsample_bilinear2d_aa", x5, [5, 5], False), tag="5-d into bilinear2d_aa raises")
    yield Sample(("upsample_bilinear2d", x4, [5], False), tag="one output size raises")
    yield Sample(("upsample_bicubic2d", x4, [0, 5], False), tag="zero output size raises")
    yield Sample(("_upsample_bicubic2d_aa", make((2, 3, 0, 6), dtype), [3, 3], False), tag="empty input axis raises")
    yield Sample(("upsample_linear1d", make((2, 3, 7), torch.int32), [5], False), tag="int32 raises")
    for op in ("_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"):
        yield Sample((op, make((2, 3, 5, 6), torch.float16), [3, 3], False), tag=f"{op} float16 raises")
        yield Sample((op + "_backward", make((2, 3, 3, 3), torch.bfloat16), [3, 3], [2, 3, 5, 6], False),
                     tag=f"{op} backward bfloat16 raises")
    yield Sample(("upsample_trilinear3d", x5, [2, 3, 4], True), tag="valid")


CASES = [
    OpCase("upsample_nearest2d", ["aten::upsample_nearest2d.out", "aten::upsample_nearest2d_backward.grad_input"],
           _interpolate, _samples("nearest"), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_nearest1d", ["aten::upsample_nearest1d.out", "aten::upsample_nearest1d_backward.grad_input"],
           _interpolate, _nearest_nd_samples("nearest", 1), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_nearest3d", ["aten::upsample_nearest3d.out", "aten::upsample_nearest3d_backward.grad_input"],
           _interpolate, _nearest_nd_samples("nearest", 3), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_nearest_exact1d", ["aten::_upsample_nearest_exact1d.out",
                                        "aten::_upsample_nearest_exact1d_backward.grad_input"],
           _interpolate, _nearest_nd_samples("nearest-exact", 1), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_nearest_exact2d", ["aten::_upsample_nearest_exact2d.out",
                                        "aten::_upsample_nearest_exact2d_backward.grad_input"],
           _interpolate, _nearest_nd_samples("nearest-exact", 2), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_nearest_exact3d", ["aten::_upsample_nearest_exact3d.out",
                                        "aten::_upsample_nearest_exact3d_backward.grad_input"],
           _interpolate, _nearest_nd_samples("nearest-exact", 3), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_bilinear2d", ["aten::upsample_bilinear2d.out", "aten::upsample_bilinear2d_backward.grad_input"],
           _interpolate, _samples("bilinear"), dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    # 16-bit outputs one rounding apart where the blend lands near a tie (the CPU's summation order
    # differs), and their gradients accumulate in a different order.
    OpCase("upsample_bilinear2d_half", [], _interpolate, _samples("bilinear"), dtypes=HALFS, grad=True, atol=1e-2,
           rtol=1e-2),
    OpCase("upsample_bilinear2d_forms", [], _interpolate, _interp_samples("bilinear", 2), dtypes=FLOATS, grad=True,
           atol=2e-5, rtol=2e-5),
    OpCase("upsample_linear1d", ["aten::upsample_linear1d.out", "aten::upsample_linear1d_backward.grad_input"],
           _interpolate, _interp_samples("linear", 1), dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("upsample_trilinear3d", ["aten::upsample_trilinear3d.out",
                                    "aten::upsample_trilinear3d_backward.grad_input"],
           _interpolate, _interp_samples("trilinear", 3), dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("upsample_bicubic2d", ["aten::upsample_bicubic2d.out", "aten::upsample_bicubic2d_backward.grad_input"],
           _interpolate, _interp_samples("bicubic", 2), dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("upsample_bilinear2d_aa", ["aten::_upsample_bilinear2d_aa.out",
                                      "aten::_upsample_bilinear2d_aa_backward.grad_input"],
           _interpolate, _interp_samples("bilinear", 2, antialias=True), dtypes=FLOATS, grad=True, atol=2e-5,
           rtol=2e-5),
    OpCase("upsample_bicubic2d_aa", ["aten::_upsample_bicubic2d_aa.out",
                                     "aten::_upsample_bicubic2d_aa_backward.grad_input"],
           _interpolate, _interp_samples("bicubic", 2, antialias=True), dtypes=FLOATS, grad=True, atol=2e-5,
           rtol=2e-5),
    # 16-bit: the CPU rounds its weights to the input's dtype (so does the device) but sums in
    # another order, and accumulates gradients in another order.
    OpCase("upsample_linear_modes_half", [], _interpolate, lambda dt: [
        s for mode, nd in (("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2))
        for s in _interp_samples(mode, nd)(dt)], dtypes=HALFS, grad=True, atol=1e-2, rtol=1e-2),
    OpCase("upsample_uint8", [], _interpolate, _uint8_samples, dtypes=(torch.uint8,)),
    OpCase("upsample_module", [], _module, _module_samples, dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("upsample_interp_out", [], _out, _out_samples, dtypes=FLOATS, atol=2e-5, rtol=2e-5),
    OpCase("upsample_interp_backward", [], _backward, _backward_samples, dtypes=FLOATS, atol=2e-5, rtol=2e-5),
    OpCase("upsample_interp_errors", [], _op, _error_samples, dtypes=FLOAT),
]
if HAS_LANCZOS:
    CASES += [
        OpCase("upsample_lanczos2d_aa", ["aten::_upsample_lanczos2d_aa.out",
                                         "aten::_upsample_lanczos2d_aa_backward.grad_input"],
               _lanczos, _lanczos_samples, dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
        OpCase("upsample_lanczos2d_aa_uint8", [], _lanczos, _lanczos_uint8_samples, dtypes=(torch.uint8,)),
    ]
