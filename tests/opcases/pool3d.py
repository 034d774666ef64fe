"""3-D pooling. Adaptive average pooling (nn.AdaptiveAvgPool3d with outputs other than 1x1x1,
interpolate(mode="area") of volumes): output sizes that divide the input or not, larger than it,
None entries; unbatched, empty batch, non-contiguous and channels_last_3d inputs; the backward
with strided gradients; out= forms and the CPU's errors."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make
from .pool import in_float_on_cpu


def _pool(f, x, **kwargs):
    return f(x, **kwargs)


ADAPTIVE_SIZES = [(2, 3, 4), (5, 4, 3), (4, 7, 6), (7, 9, 8), (1, 1, 1), (3, None, 2), 3, (1, 5, 1)]


def _adaptive_inputs(dtype):
    yield make((2, 3, 5, 7, 6), dtype), ""
    yield make((3, 5, 7, 6), dtype, seed=1), " unbatched"
    yield make((2, 3, 5, 7, 6), dtype, noncontig=True, seed=2), " noncontig"
    yield make((2, 3, 5, 7, 6), dtype, seed=3).contiguous(memory_format=torch.channels_last_3d), " channels_last_3d"
    yield make((0, 3, 5, 7, 6), dtype), " empty batch"


def _adaptive_avg_samples(dtype):
    for x, where in _adaptive_inputs(dtype):
        for size in ADAPTIVE_SIZES:
            yield Sample((F.adaptive_avg_pool3d, x), dict(output_size=size), tag=f"{size}{where}")
    yield Sample((F.adaptive_avg_pool3d, make((2, 8, 9, 17, 15), dtype, seed=4)), dict(output_size=(2, 7, 7)),
                 tag="large")
    yield Sample((F.adaptive_avg_pool3d, make((2, 3, 5, 7, 6), dtype)), dict(output_size=(0, 2, 2)),
                 tag="zero output size")
    yield Sample((F.interpolate, make((2, 3, 5, 7, 6), dtype, seed=5)), dict(size=(2, 3, 4), mode="area"), tag="area")
    nan = make((2, 3, 5, 7, 6), dtype, seed=6)
    nan[0, 0, 1, 1, 1] = float("nan")
    nan[1, 2, 4, 6, 5] = float("inf")
    yield Sample((F.adaptive_avg_pool3d, nan), dict(output_size=(2, 3, 4)), tag="NaN inf")
    # The CPU's errors: an empty non-batch dim, 3-d / 6-d input, a negative or too long size.
    yield Sample((F.adaptive_avg_pool3d, make((2, 0, 5, 4, 4), dtype)), dict(output_size=2), tag="zero channels raises")
    yield Sample((F.adaptive_avg_pool3d, make((2, 3, 5, 0, 4), dtype)), dict(output_size=2), tag="zero height raises")
    yield Sample((F.adaptive_avg_pool3d, make((4, 4, 4), dtype)), dict(output_size=2), tag="3-d raises")
    yield Sample((F.adaptive_avg_pool3d, make((1, 1, 2, 3, 4, 4), dtype)), dict(output_size=2), tag="6-d raises")
    yield Sample((F.adaptive_avg_pool3d, make((2, 3, 4, 4, 4), dtype)), dict(output_size=(-1, 2, 2)),
                 tag="negative raises")
    yield Sample((F.adaptive_avg_pool3d, make((2, 3, 4, 4, 4), torch.int64)), dict(output_size=(2, 3, 2)),
                 tag="int64 raises")


def _adaptive_avg_out(x, size):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    torch.ops.aten._adaptive_avg_pool3d.out(x, size, out=out)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten._adaptive_avg_pool3d_backward.out(out * 2 + 1, x, out=gi)
    return out, gi


def _adaptive_avg_out_samples(dtype):
    yield Sample((make((2, 3, 5, 7, 6), dtype), [2, 4, 3]), tag="5-d")
    yield Sample((make((3, 5, 7, 6), dtype, seed=1), [6, 5, 6]), tag="4-d")
    yield Sample((make((2, 3, 5, 7, 6), dtype, seed=2).contiguous(memory_format=torch.channels_last_3d), [3, 4, 5]),
                 tag="channels_last_3d")


def _adaptive_avg_backward(gy, x):
    return torch.ops.aten._adaptive_avg_pool3d_backward(gy, x)


def _adaptive_avg_backward_samples(dtype):
    x = make((2, 3, 5, 7, 6), dtype)
    yield Sample((make((2, 3, 2, 3, 5), dtype, seed=1), x), tag="valid")
    yield Sample((make((2, 5, 3), dtype, seed=2).transpose(1, 2)[:, None, None].expand(2, 3, 2, 3, 5), x),
                 tag="strided grad")
    yield Sample((make((2, 3, 2, 4, 6), dtype, seed=3).contiguous(memory_format=torch.channels_last_3d), x),
                 tag="channels_last_3d grad")
    yield Sample((make((2, 3, 2, 4, 6), dtype, seed=4), x.contiguous(memory_format=torch.channels_last_3d)),
                 tag="channels_last_3d input")
    yield Sample((make((3, 6, 9, 8), dtype, seed=5), make((3, 5, 7, 6), dtype)), tag="4-d, grad larger than input")
    yield Sample((make((0, 3, 2, 2, 2), dtype), make((0, 3, 5, 7, 6), dtype)), tag="empty batch")
    yield Sample((make((2, 3, 0, 2, 2), dtype), x), tag="empty grad raises")
    yield Sample((make((2, 3, 2, 2, 2), torch.float64 if dtype != torch.float64 else torch.float32), x),
                 tag="dtype raises")
    yield Sample((make((3, 2, 2, 2), dtype), x), tag="4-d grad of a 5-d input raises")


CASES = [
    OpCase("adaptive_avg_pool3d", ["aten::_adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d_backward"], _pool,
           _adaptive_avg_samples, dtypes=FLOATS, grad=True),
    OpCase("adaptive_avg_pool3d_out", [], _adaptive_avg_out, _adaptive_avg_out_samples, dtypes=FLOATS),
    OpCase("adaptive_avg_pool3d_backward", [], _adaptive_avg_backward, _adaptive_avg_backward_samples,
           dtypes=FLOATS),
    # The CPU's 3-D forward and its backward accumulate in float16 / bfloat16: the reference is
    # the CPU in float32, rounded once.
    OpCase("adaptive_avg_pool3d_half", [], in_float_on_cpu(_pool), _adaptive_avg_samples, dtypes=HALFS, grad=True),
    OpCase("adaptive_avg_pool3d_out_half", [], in_float_on_cpu(_adaptive_avg_out), _adaptive_avg_out_samples,
           dtypes=HALFS),
    OpCase("adaptive_avg_pool3d_backward_half", [], in_float_on_cpu(_adaptive_avg_backward),
           _adaptive_avg_backward_samples, dtypes=HALFS),
]
