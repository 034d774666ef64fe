"""3-D pooling. Max and average pooling (nn.MaxPool3d / nn.AvgPool3d): kernel, stride, padding,
dilation, ceil_mode, count_include_pad, divisor_override; unbatched, empty batch, non-contiguous
and channels_last_3d inputs; NaN (the CPU reports a window's last NaN), ties (its first maximum),
windows of only -inf; integer max pooling and int64 average pooling; indices and gradients;
out= forms and the CPU's errors. Adaptive max pooling: as adaptive_max_pool2d. Adaptive average pooling (nn.AdaptiveAvgPool3d with outputs other than 1x1x1,
interpolate(mode="area") of volumes): output sizes that divide the input or not, larger than it,
None entries; unbatched, empty batch, non-contiguous and channels_last_3d inputs; the backward
with strided gradients; out= forms and the CPU's errors."""
import torch
import torch.nn.functional as F

from ..cases import FLOAT, FLOATS, HALFS, INTS, OpCase, Sample, make
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


MAX_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=(3, 2, 2), stride=(2, 1, 3), padding=(1, 0, 1), dilation=(2, 1, 1)), "dilation"),
    (dict(kernel_size=3, stride=2, ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), "ceil_mode dilation"),
    (dict(kernel_size=(1, 3, 3), stride=1, padding=(0, 1, 1)), "2-d window"),
]
AVG_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), "exclude pad"),
    (dict(kernel_size=(3, 2, 2), stride=(2, 3, 1), padding=(1, 0, 1), ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), "ceil_mode exclude pad"),
    (dict(kernel_size=3, stride=2, padding=1, divisor_override=5), "divisor_override"),
    (dict(kernel_size=(2, 3, 1), stride=(1, 2, 2), divisor_override=-3), "negative divisor_override"),
]


# The CPU's channels_last_3d max pooling of 8-bit integers indexes the volume in that 8-bit
# type (RuntimeError past 127 / 255 elements): smaller volumes for those.
def _cl3d_shape(dtype, shape):
    return (2, 3, 3, 5, 6) if dtype.itemsize == 1 else shape


def _inputs(dtype):
    # uint8 from 1: a window of only the dtype's lowest value (0) under dilation and padding gets
    # another index from the CPU's channels_last_3d kernel than from its contiguous one (the
    # window's first element, which ocl reports for both), as windows of only -inf do.
    low = 1 if dtype == torch.uint8 else None
    yield make((2, 3, 7, 8, 9), dtype, low=low), ""
    yield make((3, 6, 7, 5), dtype, low=low, seed=1), " unbatched"
    yield make((2, 3, 6, 8, 7), dtype, low=low, noncontig=True, seed=2), " noncontig"
    yield (make(_cl3d_shape(dtype, (2, 3, 7, 8, 9)), dtype, low=low, seed=3)
           .contiguous(memory_format=torch.channels_last_3d), " channels_last_3d")
    yield make((0, 3, 6, 6, 6), dtype), " empty batch"
    yield make((2, 8, 9, 17, 15), dtype, low=low, seed=4), " large"


def _max_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in MAX_ARGS:
            yield Sample((F.max_pool3d, x), dict(kwargs, return_indices=True), tag=tag + where)
    yield Sample((F.max_pool3d, make((2, 3, 7, 8, 9), dtype)), dict(kernel_size=2), tag="without indices")
    # Ties everywhere (small integers), row-major and channels_last_3d: the first maximum's index.
    ties = torch.randint(0, 3, _cl3d_shape(dtype, (2, 3, 6, 7, 8)), generator=torch.Generator().manual_seed(7))
    ties = ties.to(dtype)
    for t, where in ((ties, ""), (ties.contiguous(memory_format=torch.channels_last_3d), " channels_last_3d")):
        yield Sample((F.max_pool3d, t), dict(kernel_size=3, stride=2, padding=1, return_indices=True),
                     tag="ties" + where)
    if dtype.is_floating_point:
        inf = torch.full((1, 2, 4, 4, 4), -float("inf"), dtype=dtype)
        inf[0, 1, 2, 2, 2] = 1
        yield Sample((F.max_pool3d, inf), dict(kernel_size=3, stride=1, padding=1, return_indices=True), tag="-inf")
        yield Sample((F.max_pool3d, inf), dict(kernel_size=3, stride=1, padding=1, dilation=2, ceil_mode=True,
                                               return_indices=True), tag="-inf dilation")
        nan = make((2, 3, 6, 7, 8), dtype, seed=8)
        nan[0, 0, 1, 1, 1] = nan[0, 0, 1, 2, 2] = nan[1, 2, 5, 6, 7] = nan[0, 1, 0, 0, 0] = float("nan")
        nan[1, 1, 2:4, 2:5, 1:3] = float("nan")
        for t, where in ((nan, ""), (nan.contiguous(memory_format=torch.channels_last_3d), " channels_last_3d")):
            yield Sample((F.max_pool3d, t), dict(kernel_size=2, return_indices=True), tag="NaN" + where)
            yield Sample((F.max_pool3d, t), dict(kernel_size=3, stride=1, padding=1, return_indices=True),
                         tag="NaN overlap" + where)
    # The CPU's errors.
    x = make((2, 3, 6, 6, 6), dtype)
    yield Sample((F.max_pool3d, x), dict(kernel_size=0), tag="zero kernel raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=2, stride=(0, 1, 1)), tag="zero stride raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=2, padding=2), tag="padding over half the kernel raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=2, padding=-1), tag="negative padding raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=2, dilation=0), tag="zero dilation raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=(7, 2, 2)), tag="kernel larger than input raises")
    yield Sample((F.max_pool3d, x), dict(kernel_size=(2, 2)), tag="2 kernel sizes raises")
    yield Sample((F.max_pool3d, make((6, 6, 6), dtype)), dict(kernel_size=2), tag="3-d raises")
    yield Sample((F.max_pool3d, make((2, 0, 6, 6, 6), dtype)), dict(kernel_size=2), tag="zero channels raises")
    yield Sample((F.max_pool3d, make((3, 6, 6, 6), dtype).contiguous(memory_format=torch.channels_last)),
                 dict(kernel_size=2), tag="channels_last 4-d raises")


def _max_backward(gy, x, indices, kwargs):
    return torch.ops.aten.max_pool3d_with_indices_backward(gy, x, indices=indices, **kwargs)


def _max_backward_samples(dtype):
    x = make((2, 3, 7, 8, 9), dtype)
    args = dict(kernel_size=[3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], dilation=[1, 1, 1], ceil_mode=False)
    idx = F.max_pool3d(x, 3, 2, 1, return_indices=True)[1]
    yield Sample((make((2, 3, 4, 4, 5), dtype, seed=1), x, idx, args), tag="valid")
    yield Sample((make((2, 3, 5, 4, 4), dtype, seed=2).transpose(2, 4), x, idx.transpose(2, 4).contiguous()
                  .transpose(2, 4), args), tag="strided grad and indices")
    yield Sample((make((2, 3, 4, 4, 5), dtype, seed=3), x.contiguous(memory_format=torch.channels_last_3d), idx, args),
                 tag="channels_last_3d input")
    yield Sample((make((3, 4, 4, 5), dtype, seed=4), x[0], idx[0], args), tag="unbatched")
    yield Sample((make((2, 3, 4, 4, 5), dtype, seed=5).long(), x.long(), idx, args), tag="int64 raises")
    yield Sample((make((2, 3, 4, 4), dtype, seed=6), x, idx[..., 0], args), tag="4-d grad of a 5-d input raises")


def _max_out(x, kwargs):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    idx = torch.empty(0, dtype=torch.long, device=x.device)
    torch.ops.aten.max_pool3d_with_indices.out(x, out=out, indices=idx, **kwargs)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten.max_pool3d_with_indices_backward.grad_input(out * 2 + 1, x, indices=idx, grad_input=gi, **kwargs)
    return out, idx, gi


def _max_out_samples(dtype):
    args = dict(kernel_size=[3, 2, 2], stride=[2, 1, 2], padding=[1, 0, 1], dilation=[1, 2, 1], ceil_mode=True)
    yield Sample((make((2, 3, 7, 8, 9), dtype), args), tag="5-d")
    yield Sample((make((3, 7, 8, 9), dtype, seed=1), args), tag="4-d")
    yield Sample((make((2, 3, 7, 8, 9), dtype, seed=2).contiguous(memory_format=torch.channels_last_3d), args),
                 tag="channels_last_3d")


def _avg_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in AVG_ARGS:
            yield Sample((F.avg_pool3d, x), kwargs, tag=tag + where)
    x = make((2, 3, 6, 6, 6), dtype)
    yield Sample((F.avg_pool3d, x), dict(kernel_size=(7, 2, 2)), tag="kernel larger than input raises")
    yield Sample((F.avg_pool3d, x), dict(kernel_size=2, divisor_override=0), tag="zero divisor_override raises")
    yield Sample((F.avg_pool3d, x), dict(kernel_size=2, padding=2), tag="padding over half the kernel raises")
    yield Sample((F.avg_pool3d, x), dict(kernel_size=2, stride=0), tag="zero stride raises")
    yield Sample((F.avg_pool3d, make((6, 6, 6), dtype)), dict(kernel_size=2), tag="3-d raises")


def _avg_backward(gy, x, kwargs):
    return torch.ops.aten.avg_pool3d_backward(gy, x, **kwargs)


def _avg_backward_samples(dtype):
    x = make((2, 3, 7, 8, 9), dtype)
    for cip, div in ((True, None), (False, None), (True, 7)):
        args = dict(kernel_size=[3, 3, 2], stride=[2, 2, 2], padding=[1, 1, 1], ceil_mode=True, count_include_pad=cip,
                    divisor_override=div)
        yield Sample((make((2, 3, 4, 4, 6), dtype, seed=1) * 20, x, args), tag=f"cip={cip} divisor={div}")
        yield Sample((make((2, 3, 6, 4, 4), dtype, seed=2).transpose(2, 4) * 20, x, args),
                     tag=f"strided grad cip={cip} divisor={div}")
    yield Sample((make((3, 4, 4, 6), dtype, seed=3), x[0], args), tag="unbatched")


def _avg_out(x, kwargs):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    torch.ops.aten.avg_pool3d.out(x, out=out, **kwargs)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten.avg_pool3d_backward.grad_input(out * 2 + 1, x, grad_input=gi, **kwargs)
    return out, gi


def _avg_out_samples(dtype):
    args = dict(kernel_size=[3, 2, 2], stride=[2, 1, 2], padding=[1, 0, 1], ceil_mode=True, count_include_pad=False,
                divisor_override=None)
    yield Sample((make((2, 3, 7, 8, 9), dtype), args), tag="5-d")
    yield Sample((make((3, 7, 8, 9), dtype, seed=1), args), tag="4-d")
    yield Sample((make((2, 3, 7, 8, 9), dtype, seed=2).contiguous(memory_format=torch.channels_last_3d), args),
                 tag="channels_last_3d")


def _avg_unsupported_samples(dtype):
    yield Sample((F.avg_pool3d, make((2, 3, 6, 6, 6), dtype)), dict(kernel_size=2), tag="raises")
    yield Sample((F.avg_pool3d, make((2, 3, 6, 6, 6), dtype).contiguous(memory_format=torch.channels_last_3d)),
                 dict(kernel_size=2), tag="channels_last_3d raises")


def _adaptive_max_samples(dtype):
    for x, where in _adaptive_inputs(dtype):
        for size in ADAPTIVE_SIZES:
            yield Sample((F.adaptive_max_pool3d, x), dict(output_size=size, return_indices=True), tag=f"{size}{where}")
    yield Sample((F.adaptive_max_pool3d, make((2, 3, 5, 7, 6), dtype)), dict(output_size=(0, 2, 2),
                 return_indices=True), tag="zero output size")
    ties = torch.randint(0, 3, (2, 3, 5, 7, 6), generator=torch.Generator().manual_seed(7)).to(dtype)
    for t, where in ((ties, ""), (ties.contiguous(memory_format=torch.channels_last_3d), " channels_last_3d")):
        yield Sample((F.adaptive_max_pool3d, t), dict(output_size=(2, 4, 3), return_indices=True), tag="ties" + where)
    yield Sample((F.adaptive_max_pool3d, torch.full((1, 2, 3, 5, 5), -float("inf"), dtype=dtype)),
                 dict(output_size=(2, 2, 3), return_indices=True), tag="-inf")
    nan = make((2, 3, 5, 7, 6), dtype, seed=8)
    nan[0, 0, 1, 1, 1] = nan[0, 0, 1, 2, 3] = nan[1, 2, 4, 6, 5] = nan[0, 1, 0, 0, 0] = float("nan")
    nan[1, 1, 1:3, 4:6, 2:5] = float("nan")
    for t, where in ((nan, ""), (nan.contiguous(memory_format=torch.channels_last_3d), " channels_last_3d")):
        yield Sample((F.adaptive_max_pool3d, t), dict(output_size=(2, 3, 2), return_indices=True), tag="NaN" + where)
        yield Sample((F.adaptive_max_pool3d, t), dict(output_size=(3, 5, 4), return_indices=True),
                     tag="NaN overlap" + where)
    # The CPU's errors: an empty non-batch dim, 3-d / 6-d input, a negative or too long size.
    yield Sample((F.adaptive_max_pool3d, make((2, 0, 5, 4, 4), dtype)), dict(output_size=2), tag="zero channels raises")
    yield Sample((F.adaptive_max_pool3d, make((4, 4, 4), dtype)), dict(output_size=2), tag="3-d raises")
    yield Sample((F.adaptive_max_pool3d, make((1, 1, 2, 3, 4, 4), dtype)), dict(output_size=2), tag="6-d raises")
    yield Sample((F.adaptive_max_pool3d, make((2, 3, 4, 4, 4), dtype)), dict(output_size=(-1, 2, 2)),
                 tag="negative raises")
    yield Sample((F.adaptive_max_pool3d, make((2, 3, 4, 4, 4), torch.int64)), dict(output_size=2),
                 tag="int64 raises")


def _adaptive_max_out(x, size):
    """The out= forms with wrongly sized outputs (resized, as on the CPU), then the backward's."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    idx = torch.empty(0, dtype=torch.long, device=x.device)
    torch.ops.aten.adaptive_max_pool3d.out(x, size, out=out, indices=idx)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten.adaptive_max_pool3d_backward.grad_input(out * 2 + 1, x, idx, grad_input=gi)
    return out, idx, gi


def _adaptive_max_backward(gy, x, idx):
    return torch.ops.aten.adaptive_max_pool3d_backward(gy, x, idx)


def _adaptive_max_backward_samples(dtype):
    x = make((2, 3, 5, 7, 6), dtype)
    idx = F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True)[1]
    yield Sample((make((2, 3, 2, 3, 4), dtype, seed=1), x, idx), tag="valid")
    yield Sample((make((2, 3, 4, 3, 2), dtype, seed=2).transpose(2, 4), x, idx), tag="strided grad")
    yield Sample((make((2, 3, 2, 3, 4), dtype, seed=3), x.contiguous(memory_format=torch.channels_last_3d), idx),
                 tag="channels_last_3d input")
    yield Sample((make((2, 3, 0, 3, 4), dtype), x, idx[:, :, :0]), tag="empty grad raises")
    yield Sample((make((2, 3, 2, 3, 4), torch.float64 if dtype != torch.float64 else torch.float32), x, idx),
                 tag="dtype raises")


CASES = [
    OpCase("max_pool3d", ["aten::max_pool3d_with_indices", "aten::max_pool3d_with_indices_backward"], _pool,
           _max_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("max_pool3d_ints", [], _pool, _max_samples, dtypes=INTS),
    OpCase("max_pool3d_backward", [], _max_backward, _max_backward_samples, dtypes=FLOATS),
    # The CPU adds overlapping windows' gradients in float16 / bfloat16: the reference is the CPU
    # in float32, rounded once.
    OpCase("max_pool3d_backward_half", [], in_float_on_cpu(_max_backward), _max_backward_samples, dtypes=HALFS),
    OpCase("max_pool3d_out", ["aten::max_pool3d_with_indices.out", "aten::max_pool3d_with_indices_backward.grad_input"],
           _max_out, _max_out_samples, dtypes=FLOATS + HALFS),
    OpCase("avg_pool3d", ["aten::avg_pool3d.out", "aten::avg_pool3d_backward.grad_input"], _pool, _avg_samples,
           dtypes=FLOATS, grad=True),
    OpCase("avg_pool3d_int64", [], _pool, _avg_samples, dtypes=(torch.int64,)),
    OpCase("avg_pool3d_backward", [], _avg_backward, _avg_backward_samples, dtypes=FLOATS + (torch.int64,)),
    OpCase("avg_pool3d_out", [], _avg_out, _avg_out_samples, dtypes=FLOATS + (torch.int64,)),
    OpCase("avg_pool3d_unsupported", [], _pool, _avg_unsupported_samples, dtypes=HALFS + (torch.int32, torch.bool)),
    OpCase("adaptive_max_pool3d", ["aten::adaptive_max_pool3d.out", "aten::adaptive_max_pool3d_backward.grad_input"],
           _pool, _adaptive_max_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("adaptive_max_pool3d_out", [], _adaptive_max_out, _adaptive_avg_out_samples, dtypes=FLOATS + HALFS),
    OpCase("adaptive_max_pool3d_backward", [], _adaptive_max_backward, _adaptive_max_backward_samples, dtypes=FLOAT),
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
