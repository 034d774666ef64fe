"""F.grid_sample on 4-D inputs (grid_sampler_2d and its backward): every interpolation mode x
padding mode x align_corners, grids inside, on the edges of and far outside [-1, 1], NaN and
inf grid values (forward: the CPU turns a NaN position into 0 where padding clamps it),
single-pixel axes, non-contiguous and channels_last inputs and grids, empty batch / channels /
grid, 16-bit dtypes; gradients of input and grid; the backward op called directly with each
output_mask; out=; the CPU's errors. The same for 5-D inputs (grid_sampler_3d; no bicubic),
whose CPU kernels have their own NaN rules (a NaN position clamps to the far edge)."""
import itertools

import torch
import torch.nn.functional as F

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def _grid(shape, dtype, seed, lim=1.3):
    return make(shape, dtype, low=-lim, high=lim, seed=seed)


def _edge_grid(h, w, dtype, align_corners):
    """Positions exactly on pixel centres, on the outer edges (+-1) and just past them."""
    def axis(n):
        centres = [-1 + 2 * k / (n - 1) for k in range(n)] if align_corners and n > 1 else \
            [-1 + (2 * k + 1) / n for k in range(n)]
        return centres + [-1.0, 1.0, 0.0, -1.0 - 1e-3, 1.0 + 1e-3]
    xs, ys = axis(w), axis(h)
    pts = [(x, y) for y in ys for x in xs]
    return torch.tensor(pts, dtype=torch.float64).view(1, len(ys), len(xs), 2).expand(2, -1, -1, -1).to(dtype)


def _all_modes():
    return itertools.product(MODES, PADDINGS, (False, True))


def _samples(dtype):
    x = make((2, 3, 5, 7), dtype)
    g = _grid((2, 4, 6, 2), dtype, 1)
    for mode, pad, ac in _all_modes():
        kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
        tag = f"{mode} {pad} ac={ac}"
        yield Sample((x, g), kw, tag=tag)
        yield Sample((x, _grid((2, 3, 5, 2), dtype, 2, lim=6.0)), kw, tag=tag + " far outside")
        yield Sample((x, _edge_grid(5, 7, dtype, ac)), kw, tag=tag + " edges")
    for mode in MODES:
        for pad in PADDINGS:
            kw = dict(mode=mode, padding_mode=pad, align_corners=False)
            yield Sample((make((2, 3, 5, 7), dtype, seed=3).contiguous(memory_format=torch.channels_last),
                          _grid((2, 6, 4, 2), dtype, 4).transpose(1, 2)), kw, tag=f"{mode} {pad} channels_last")
            yield Sample((make((2, 3, 5, 7), dtype, noncontig=True, seed=5), _grid((2, 4, 6, 4), dtype, 6)[..., ::2]),
                         kw, tag=f"{mode} {pad} noncontig")
            for shape in ((2, 3, 1, 5), (2, 3, 4, 1), (1, 2, 1, 1)):
                for ac in (False, True):
                    yield Sample((make(shape, dtype, seed=7), _grid((shape[0], 3, 4, 2), dtype, 8)),
                                 dict(kw, align_corners=ac), tag=f"{mode} {pad} ac={ac} input {shape}")
        kw = dict(mode=mode, padding_mode="zeros", align_corners=False)
        # One grid (an affine_grid of one theta) and one image shared by the batch: stride 0.
        yield Sample((make((1, 3, 5, 7), dtype, seed=13).expand(2, -1, -1, -1),
                      _grid((1, 4, 6, 2), dtype, 14).expand(2, -1, -1, -1)), kw, tag=f"{mode} expanded")
        yield Sample((make((0, 3, 5, 7), dtype), _grid((0, 4, 6, 2), dtype, 9)), kw, tag=f"{mode} empty batch")
        yield Sample((make((2, 0, 5, 7), dtype), _grid((2, 4, 6, 2), dtype, 9)), kw, tag=f"{mode} no channels")
        yield Sample((make((2, 3, 5, 7), dtype), _grid((2, 0, 6, 2), dtype, 9)), kw, tag=f"{mode} empty grid")
    big = make((4, 16, 33, 31), dtype, seed=10)
    for mode in MODES:
        yield Sample((big, _grid((4, 20, 24, 2), dtype, 11)), dict(mode=mode, padding_mode="reflection",
                                                                  align_corners=False), tag=f"{mode} large")
        yield Sample((big, _grid((4, 1, 2, 2), dtype, 12)), dict(mode=mode, padding_mode="border",
                                                                align_corners=True), tag=f"{mode} few points")


def _nonfinite_samples(dtype, grad=False):
    """NaN and +-inf grid values next to finite far-away ones."""
    nan, inf = float("nan"), float("inf")
    pts = [(nan, 0.0), (0.0, nan), (0.0, inf), (-inf, 0.5), (3.0, -7.0), (1.0, 1.0), (-1.0, -1.0), (1e4, 0.0),
           (-1e4, 0.3)]
    if not grad:
        pts += [(nan, nan), (inf, -inf)]
    g = torch.tensor(pts, dtype=torch.float64).view(1, 1, len(pts), 2).to(dtype)
    x = make((1, 2, 3, 4), dtype)
    for mode, pad, ac in _all_modes():
        # The CPU's bilinear backward crashes (SIGSEGV, torch 2.13) on a non-finite position with
        # border or reflection padding: those are compared forward only.
        if grad and mode == "bilinear" and pad != "zeros":
            continue
        yield Sample((x, g), dict(mode=mode, padding_mode=pad, align_corners=ac), tag=f"{mode} {pad} ac={ac}")


def _grid_sample(x, g, **kwargs):
    return F.grid_sample(x, g, **kwargs)


def _grid_sample_opmath(x, g, **kwargs):
    """16-bit inputs against a reference computed in float and rounded once: the CPU's own
    16-bit grid_sample rounds its intermediates (positions, weights) to the 16-bit type, which
    moves bfloat16 results by several units in the last place (0.04 at values near 3) and
    shifts the taps of positions on pixel boundaries; the device computes in float (as CUDA's
    kernels do in their opmath type)."""
    if x.device.type == "cpu":
        return F.grid_sample(x.float(), g.float(), **kwargs).to(x.dtype)
    return F.grid_sample(x, g, **kwargs)


def _backward(gy, x, g, mode, pad, ac, mask):
    return torch.ops.aten.grid_sampler_2d_backward(gy, x, g, mode, pad, ac, mask)


def _backward_samples(dtype):
    x, g, gy = make((2, 3, 5, 7), dtype), _grid((2, 4, 6, 2), dtype, 1), make((2, 3, 4, 6), dtype, seed=2)
    for mode, pad in itertools.product(range(3), range(3)):
        for mask in ([True, True], [True, False], [False, True]):
            yield Sample((gy, x, g, mode, pad, True, mask), tag=f"mode {mode} padding {pad} mask {mask}")


def _deterministic_backward(gy, x, g, mode, pad, ac, mask):
    """The backward under torch.use_deterministic_algorithms: the input gradient by a sorted
    scatter-add instead of atomics."""
    op = torch.ops.aten.grid_sampler_3d_backward if x.dim() == 5 else torch.ops.aten.grid_sampler_2d_backward
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        return op(gy, x, g, mode, pad, ac, mask)
    finally:
        torch.use_deterministic_algorithms(before)


def _deterministic_backward_opmath(gy, x, g, mode, pad, ac, mask):
    """16-bit: against the float computation rounded once (see _grid_sample_opmath)."""
    if x.device.type == "cpu":
        outs = _deterministic_backward(gy.float(), x.float(), g.float(), mode, pad, ac, mask)
        return tuple(o if o is None else o.to(x.dtype) for o in outs)
    return _deterministic_backward(gy, x, g, mode, pad, ac, mask)


def _deterministic_samples(dtype):
    yield from _backward_samples(dtype)
    # Many grid points on few pixels, and a non-finite position.
    x, gy = make((2, 3, 3, 4), dtype), make((2, 3, 8, 9), dtype, seed=3)
    g = _grid((2, 8, 9, 2), dtype, 4, lim=0.4)
    g[0, 1, 1, 0] = float("nan")
    for mode, pad in itertools.product(range(3), range(3)):
        if mode == 0 and pad != 0:
            continue  # the CPU's bilinear backward crashes on a NaN position there
        yield Sample((gy, x, g, mode, pad, False, [True, True]), tag=f"crowded mode {mode} padding {pad}")
    x3, g3, gy3 = make((2, 3, 4, 5, 6), dtype), _grid((2, 2, 3, 4, 3), dtype, 1), make((2, 3, 2, 3, 4), dtype, seed=2)
    for mode, pad in itertools.product(range(2), range(3)):
        yield Sample((gy3, x3, g3, mode, pad, True, [True, False]), tag=f"3-d mode {mode} padding {pad}")


def _out(x, g):
    out = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten.grid_sampler_2d.out(x, g, 0, 1, False, out=out)
    return out


def _out_samples(dtype):
    yield Sample((make((2, 3, 5, 7), dtype), _grid((2, 4, 6, 2), dtype, 1)), tag="resized out")


def _error_samples(dtype):
    x = make((2, 3, 5, 7), dtype)
    kw = dict(align_corners=False)
    yield Sample((x, _grid((1, 4, 6, 2), dtype, 1)), kw, tag="batch mismatch raises")
    yield Sample((x, _grid((2, 4, 6, 3), dtype, 1)), kw, tag="last dim 3 raises")
    yield Sample((make((2, 3, 0, 7), dtype), _grid((2, 4, 6, 2), dtype, 1)), kw, tag="empty height raises")
    yield Sample((x, _grid((2, 4, 6, 2), torch.float64, 1)), kw, tag="dtype mismatch raises")
    yield Sample((make((2, 3, 5, 7), torch.int64), make((2, 4, 6, 2), torch.int64)), kw, tag="int64 raises")
    yield Sample((x, _grid((2, 4, 6, 2), dtype, 1)), dict(kw, mode="bicubic"), tag="valid")


MODES_3D = ("bilinear", "nearest")


def _samples_3d(dtype):
    x = make((2, 3, 4, 5, 6), dtype)
    for mode, pad, ac in itertools.product(MODES_3D, PADDINGS, (False, True)):
        kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
        tag = f"{mode} {pad} ac={ac}"
        yield Sample((x, _grid((2, 3, 4, 5, 3), dtype, 1)), kw, tag=tag)
        yield Sample((x, _grid((2, 2, 3, 4, 3), dtype, 2, lim=6.0)), kw, tag=tag + " far outside")
    for mode, pad in itertools.product(MODES_3D, PADDINGS):
        kw = dict(mode=mode, padding_mode=pad, align_corners=False)
        yield Sample((make((2, 3, 4, 5, 6), dtype, seed=3).contiguous(memory_format=torch.channels_last_3d),
                      _grid((2, 4, 3, 5, 3), dtype, 4).transpose(1, 2)), kw, tag=f"{mode} {pad} channels_last_3d")
        yield Sample((make((2, 3, 4, 5, 6), dtype, noncontig=True, seed=5),
                      _grid((2, 3, 4, 5, 6), dtype, 6)[..., ::2]), kw, tag=f"{mode} {pad} noncontig")
        for shape in ((1, 2, 1, 3, 4), (1, 2, 3, 1, 1)):
            for ac in (False, True):
                yield Sample((make(shape, dtype, seed=7), _grid((1, 2, 3, 4, 3), dtype, 8)), dict(kw, align_corners=ac),
                             tag=f"{mode} {pad} ac={ac} input {shape}")
    kw = dict(mode="bilinear", padding_mode="zeros", align_corners=False)
    yield Sample((make((0, 3, 4, 5, 6), dtype), _grid((0, 2, 3, 4, 3), dtype, 9)), kw, tag="empty batch")
    yield Sample((make((2, 0, 4, 5, 6), dtype), _grid((2, 2, 3, 4, 3), dtype, 9)), kw, tag="no channels")
    yield Sample((make((2, 3, 4, 5, 6), dtype), _grid((2, 2, 0, 4, 3), dtype, 9)), kw, tag="empty grid")
    yield Sample((make((2, 16, 9, 11, 10), dtype, seed=10), _grid((2, 7, 8, 9, 3), dtype, 11)),
                 dict(kw, padding_mode="reflection"), tag="large")


def _nonfinite_samples_3d(dtype):
    nan, inf = float("nan"), float("inf")
    pts = [(nan, 0.0, 0.0), (0.0, inf, 0.0), (-inf, 0.5, 0.0), (0.0, 0.0, nan), (0.1, -inf, 0.2), (3.0, -7.0, 0.0),
           (0.2, 0.3, -0.4), (1e4, 0.0, -1e4), (nan, nan, inf)]
    g = torch.tensor(pts, dtype=torch.float64).view(1, 1, 1, len(pts), 3).to(dtype)
    x = make((1, 2, 2, 3, 4), dtype)
    for mode, pad, ac in itertools.product(MODES_3D, PADDINGS, (False, True)):
        yield Sample((x, g), dict(mode=mode, padding_mode=pad, align_corners=ac), tag=f"{mode} {pad} ac={ac}")


def _backward_3d(gy, x, g, mode, pad, ac, mask):
    return torch.ops.aten.grid_sampler_3d_backward(gy, x, g, mode, pad, ac, mask)


def _backward_samples_3d(dtype):
    x, g, gy = make((2, 3, 4, 5, 6), dtype), _grid((2, 2, 3, 4, 3), dtype, 1), make((2, 3, 2, 3, 4), dtype, seed=2)
    for mode, pad in itertools.product(range(2), range(3)):
        for mask in ([True, True], [True, False], [False, True]):
            yield Sample((gy, x, g, mode, pad, False, mask), tag=f"mode {mode} padding {pad} mask {mask}")


def _error_samples_3d(dtype):
    x = make((2, 3, 4, 5, 6), dtype)
    kw = dict(align_corners=False)
    yield Sample((x, _grid((2, 2, 3, 4, 3), dtype, 1)), dict(kw, mode="bicubic"), tag="bicubic raises")
    yield Sample((x, _grid((2, 2, 3, 4, 2), dtype, 1)), kw, tag="last dim 2 raises")
    yield Sample((x, _grid((1, 2, 3, 4, 3), dtype, 1)), kw, tag="batch mismatch raises")
    yield Sample((make((2, 3, 4, 0, 6), dtype), _grid((2, 2, 3, 4, 3), dtype, 1)), kw, tag="empty height raises")
    yield Sample((make((3, 5, 7), dtype), _grid((3, 4, 2), dtype, 1)), kw, tag="3-d input raises")
    yield Sample((x, _grid((2, 2, 3, 4, 3), torch.float64, 1)), kw, tag="dtype mismatch raises")


def _direct_2d_3d_mismatch(x, g):
    """grid_sampler_2d called with 5-d tensors (and 3d with 4-d ones) raises, as on the CPU."""
    op = torch.ops.aten.grid_sampler_2d if x.dim() == 5 else torch.ops.aten.grid_sampler_3d
    return op(x, g, 0, 0, False)


def _direct_mismatch_samples(dtype):
    yield Sample((make((2, 3, 4, 5, 6), dtype), _grid((2, 2, 3, 4, 3), dtype, 1)), tag="5-d to 2d raises")
    yield Sample((make((2, 3, 5, 6), dtype), _grid((2, 3, 4, 2), dtype, 1)), tag="4-d to 3d raises")


CASES = [
    OpCase("grid_sampler_2d", ["aten::grid_sampler_2d", "aten::grid_sampler_2d_backward"], _grid_sample, _samples,
           dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("grid_sampler_2d_half", [], _grid_sample_opmath, _samples, dtypes=HALFS, grad=True),
    OpCase("grid_sampler_2d_nonfinite", [], _grid_sample, _nonfinite_samples, dtypes=FLOATS),
    OpCase("grid_sampler_2d_nonfinite_grad", [], _grid_sample, lambda dt: _nonfinite_samples(dt, grad=True),
           dtypes=FLOATS, grad=True),
    OpCase("grid_sampler_2d_backward_mask", [], _backward, _backward_samples, dtypes=FLOATS, atol=2e-4,
           rtol=2e-4),
    OpCase("grid_sampler_2d_out", [], _out, _out_samples, dtypes=FLOAT),
    OpCase("grid_sampler_deterministic_backward", [], _deterministic_backward, _deterministic_samples,
           dtypes=FLOATS, atol=2e-4, rtol=2e-4),
    OpCase("grid_sampler_deterministic_backward_half", [], _deterministic_backward_opmath, _deterministic_samples,
           dtypes=HALFS),
    OpCase("grid_sampler_2d_errors", [], _grid_sample, _error_samples, dtypes=FLOAT),
    OpCase("grid_sampler_3d", ["aten::grid_sampler_3d", "aten::grid_sampler_3d_backward"], _grid_sample,
           _samples_3d, dtypes=FLOATS, grad=True, atol=2e-5, rtol=2e-5),
    OpCase("grid_sampler_3d_half", [], _grid_sample_opmath, _samples_3d, dtypes=HALFS, grad=True),
    OpCase("grid_sampler_3d_nonfinite", [], _grid_sample, _nonfinite_samples_3d, dtypes=FLOATS, grad=True),
    OpCase("grid_sampler_3d_backward_mask", [], _backward_3d, _backward_samples_3d, dtypes=FLOATS, atol=2e-4,
           rtol=2e-4),
    OpCase("grid_sampler_3d_errors", [], _grid_sample, _error_samples_3d, dtypes=FLOAT),
    OpCase("grid_sampler_direct_dim_errors", [], _direct_2d_3d_mismatch, _direct_mismatch_samples, dtypes=FLOAT),
]
