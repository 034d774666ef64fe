"""F.interpolate in "nearest" and "bilinear" modes (upsample_nearest2d / upsample_bilinear2d and
their backward): scale factors (integer, fractional, per axis, 1), explicit sizes (up and down),
align_corners both ways, non-contiguous, 16-bit and (nearest) uint8 inputs; gradients. Bilinear
on uint8 (the CPU's fixed-point path) is not implemented: a clear NotImplementedError."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

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


CASES = [
    OpCase("upsample_nearest2d", ["aten::upsample_nearest2d.out", "aten::upsample_nearest2d_backward.grad_input"],
           _interpolate, _samples("nearest"), dtypes=FLOATS + HALFS + (torch.uint8,), grad=True),
    OpCase("upsample_bilinear2d", ["aten::upsample_bilinear2d.out", "aten::upsample_bilinear2d_backward.grad_input"],
           _interpolate, _samples("bilinear"), dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    # 16-bit outputs one rounding apart where the blend lands near a tie (the CPU's summation order
    # differs), and their gradients accumulate in a different order.
    OpCase("upsample_bilinear2d_half", [], _interpolate, _samples("bilinear"), dtypes=HALFS, grad=True, atol=1e-2,
           rtol=1e-2),
]
