"""F.interpolate in "nearest" (1-, 2- and 3-D), "nearest-exact" (1-, 2- and 3-D) and "bilinear"
modes and their backward ops: scale factors (integer, fractional, per axis, 1), explicit sizes (up
and down), align_corners both ways, non-contiguous, 16-bit and (nearest) uint8 inputs; gradients. Bilinear
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
]
