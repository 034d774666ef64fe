"""2-D max and average pooling (and the 1-D forms ATen runs through them): kernel, stride,
padding, dilation, ceil_mode, count_include_pad, divisor_override; unbatched, empty batch and
non-contiguous inputs; windows of only -inf (the index is the window's first input element, as
on the CPU), NaN and ties; indices and gradients. Adaptive max pooling: output sizes that
divide the input or not, larger than it, 1, None entries; channels_last; NaN (the CPU reports
the window's last NaN), ties (its first maximum); out= forms and the CPU's errors. Adaptive
average pooling (nn.AdaptiveAvgPool2d with outputs other than 1x1, interpolate(mode="area")): the
same sizes and layouts, the backward with strided gradients, out= forms and the CPU's errors."""
import torch
import torch.nn.functional as F

from ..cases import FLOAT, FLOATS, HALFS, OpCase, Sample, make

MAX_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1)), "dilation"),
    (dict(kernel_size=3, stride=2, ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), "ceil_mode dilation"),
]
AVG_ARGS = [
    (dict(kernel_size=2), "k2"),
    (dict(kernel_size=3, stride=2, padding=1), "stride/padding"),
    (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), "exclude pad"),
    (dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), ceil_mode=True), "ceil_mode"),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), "ceil_mode exclude pad"),
    (dict(kernel_size=3, stride=2, padding=1, divisor_override=5), "divisor_override"),
]


def _inputs(dtype):
    yield make((2, 3, 9, 8), dtype), ""
    yield make((3, 7, 6), dtype, seed=1), " unbatched"
    yield make((2, 3, 8, 9), dtype, noncontig=True, seed=2), " noncontig"
    yield make((0, 3, 6, 6), dtype), " empty batch"
    yield make((4, 16, 33, 31), dtype, seed=3), " large"
    yield make((2, 5, 9, 8), dtype, seed=6).contiguous(memory_format=torch.channels_last), " channels_last"


def _max_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in MAX_ARGS:
            yield Sample((F.max_pool2d, x), dict(kwargs, return_indices=True), tag=tag + where)
    yield Sample((F.max_pool1d, make((2, 3, 11), dtype, seed=4)), dict(kernel_size=3, stride=2, return_indices=True),
                 tag="1d")
    # An extent past 2^14.5: the kernels' 64-bit index arithmetic (pool.cpp: index_option).
    yield Sample((F.max_pool1d, make((1, 1, 30001), dtype, seed=4)), dict(kernel_size=5, stride=3, padding=2,
                                                                          return_indices=True), tag="1d, 64-bit indices")
    if dtype.is_floating_point:
        inf = torch.full((1, 2, 4, 4), -float("inf"), dtype=dtype)
        yield Sample((F.max_pool2d, inf), dict(kernel_size=3, stride=1, padding=1, return_indices=True), tag="-inf")
        nan = make((1, 2, 4, 4), dtype, seed=5)
        nan[0, 0, 1, 1] = float("nan")
        yield Sample((F.max_pool2d, nan), dict(kernel_size=2, stride=1), tag="NaN")
    yield Sample((F.max_pool2d, torch.ones(1, 2, 4, 4, dtype=dtype)), dict(kernel_size=2, stride=1, return_indices=True),
                 tag="ties")


def _avg_samples(dtype):
    for x, where in _inputs(dtype):
        for kwargs, tag in AVG_ARGS:
            yield Sample((F.avg_pool2d, x), kwargs, tag=tag + where)
    yield Sample((F.avg_pool1d, make((2, 3, 11), dtype, seed=4)), dict(kernel_size=3, stride=2, padding=1), tag="1d")
    yield Sample((F.avg_pool1d, make((1, 1, 30001), dtype, seed=4)), dict(kernel_size=4, stride=3, padding=2),
                 tag="1d, 64-bit indices")


def _pool(f, x, **kwargs):
    return f(x, **kwargs)


ADAPTIVE_SIZES = [(3, 4), (4, 3), (9, 8), (13, 11), (1, 1), (5, None), (None, 2), 5, (2, 8)]


def _adaptive_inputs(dtype):
    yield make((2, 3, 9, 8), dtype), ""
    yield make((3, 9, 8), dtype, seed=1), " unbatched"
    yield make((2, 3, 9, 8), dtype, noncontig=True, seed=2), " noncontig"
    yield make((2, 3, 9, 8), dtype, seed=3).contiguous(memory_format=torch.channels_last), " channels_last"
    yield make((0, 3, 9, 8), dtype), " empty batch"


def _adaptive_max_samples(dtype):
    for x, where in _adaptive_inputs(dtype):
        for size in ADAPTIVE_SIZES:
            yield Sample((F.adaptive_max_pool2d, x), dict(output_size=size, return_indices=True), tag=f"{size}{where}")
    big = make((4, 16, 33, 31), dtype, seed=4)
    yield Sample((F.adaptive_max_pool2d, big), dict(output_size=(7, 5), return_indices=True), tag="large")
    yield Sample((F.adaptive_max_pool2d, big), dict(output_size=(50, 40), return_indices=True), tag="large up")
    yield Sample((F.adaptive_max_pool2d, make((2, 3, 9, 8), dtype)), dict(output_size=(0, 2), return_indices=True),
                 tag="zero output size")
    yield Sample((F.adaptive_max_pool1d, make((2, 3, 11), dtype, seed=5)), dict(output_size=4, return_indices=True),
                 tag="1d")
    yield Sample((F.adaptive_max_pool1d, make((1, 1, 30001), dtype, seed=5)), dict(output_size=7001, return_indices=True),
                 tag="1d, 64-bit indices")
    yield Sample((F.adaptive_max_pool1d, make((3, 11), dtype, seed=6)), dict(output_size=7, return_indices=True),
                 tag="1d unbatched")
    # Ties everywhere (small integers), row-major and channels_last: the first maximum's index.
    ties = torch.randint(0, 3, (2, 3, 9, 8), generator=torch.Generator().manual_seed(7)).to(dtype)
    for t, where in ((ties, ""), (ties.contiguous(memory_format=torch.channels_last), " channels_last")):
        yield Sample((F.adaptive_max_pool2d, t), dict(output_size=(4, 3), return_indices=True), tag="ties" + where)
    yield Sample((F.adaptive_max_pool2d, torch.full((1, 2, 5, 5), -float("inf"), dtype=dtype)),
                 dict(output_size=(2, 3), return_indices=True), tag="-inf")
    nan = make((2, 3, 9, 8), dtype, seed=8)
    nan[0, 0, 1, 1] = nan[0, 0, 2, 3] = nan[1, 2, 8, 7] = nan[0, 1, 0, 0] = float("nan")
    nan[1, 1, 4:6, 2:5] = float("nan")
    for t, where in ((nan, ""), (nan.contiguous(memory_format=torch.channels_last), " channels_last")):
        yield Sample((F.adaptive_max_pool2d, t), dict(output_size=(3, 2), return_indices=True), tag="NaN" + where)
        yield Sample((F.adaptive_max_pool2d, t), dict(output_size=(5, 6), return_indices=True), tag="NaN overlap" + where)
    # Windows of 256+ elements (a work-group per output): global pooling, NaN, ties, all -inf.
    wide = make((2, 3, 40, 50), dtype, seed=9)
    for size in ((1, 1), (2, 3), (3, 1)):
        yield Sample((F.adaptive_max_pool2d, wide), dict(output_size=size, return_indices=True), tag=f"wide {size}")
    yield Sample((F.adaptive_max_pool2d, wide.contiguous(memory_format=torch.channels_last)),
                 dict(output_size=(2, 3), return_indices=True), tag="wide channels_last")
    wide_ties = torch.randint(0, 3, (2, 3, 40, 50), generator=torch.Generator().manual_seed(10)).to(dtype)
    yield Sample((F.adaptive_max_pool2d, wide_ties), dict(output_size=(2, 3), return_indices=True), tag="wide ties")
    wide_nan = wide.clone()
    wide_nan[0, 0, 3, 7] = wide_nan[0, 0, 15, 2] = wide_nan[0, 0, 19, 16] = wide_nan[1, 2, 39, 49] = float("nan")
    wide_nan[1, 1, :, 20:30] = float("nan")
    yield Sample((F.adaptive_max_pool2d, wide_nan), dict(output_size=(2, 3), return_indices=True), tag="wide NaN")
    wide_inf = torch.full((1, 2, 40, 50), -float("inf"), dtype=dtype)
    wide_inf[0, 1, 30, 30] = 1
    yield Sample((F.adaptive_max_pool2d, wide_inf), dict(output_size=(2, 3), return_indices=True), tag="wide -inf")
    # The CPU's errors: a zero-size non-batch dim, 2-d / 5-d input, a negative or too long size.
    yield Sample((F.adaptive_max_pool2d, make((2, 0, 4, 4), dtype)), dict(output_size=2), tag="zero channels raises")
    yield Sample((F.adaptive_max_pool2d, make((3, 4, 0), dtype)), dict(output_size=2), tag="zero width raises")
    yield Sample((F.adaptive_max_pool2d, make((4, 4), dtype)), dict(output_size=2), tag="2-d raises")
    yield Sample((F.adaptive_max_pool2d, make((1, 2, 3, 4, 4), dtype)), dict(output_size=2), tag="5-d raises")
    yield Sample((F.adaptive_max_pool2d, make((2, 3, 4, 4), dtype)), dict(output_size=(-1, 2)), tag="negative raises")
    yield Sample((F.adaptive_max_pool2d, make((2, 3, 4, 4), dtype)), dict(output_size=(2, 2, 2)),
                 tag="3 sizes raises")


def _adaptive_max_out(x, size):
    """The out= forms with wrongly sized outputs (resized, as on the CPU), then the backward's."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    idx = torch.empty(0, dtype=torch.long, device=x.device)
    torch.ops.aten.adaptive_max_pool2d.out(x, size, out=out, indices=idx)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten.adaptive_max_pool2d_backward.grad_input(out * 2 + 1, x, idx, grad_input=gi)
    return out, idx, gi


def _adaptive_max_out_samples(dtype):
    yield Sample((make((2, 3, 9, 8), dtype), [4, 3]), tag="4-d")
    yield Sample((make((3, 9, 8), dtype, seed=1), [5, 6]), tag="3-d")
    yield Sample((make((2, 3, 9, 8), dtype, seed=2).contiguous(memory_format=torch.channels_last), [4, 5]),
                 tag="channels_last")
    yield Sample((make((2, 3, 4, 4), torch.int64), [2, 2]), tag="int64 raises")


def _adaptive_max_backward_errors(gy, x, idx):
    return torch.ops.aten.adaptive_max_pool2d_backward(gy, x, idx)


def _adaptive_max_backward_error_samples(dtype):
    x = make((2, 3, 6, 6), dtype)
    idx = F.adaptive_max_pool2d(x, 2, return_indices=True)[1]
    yield Sample((make((2, 3, 2, 2), dtype), x, idx), tag="valid")
    yield Sample((make((2, 3, 0, 2), dtype), x, idx[:, :, :0]), tag="empty grad raises")
    yield Sample((make((2, 3, 2, 2), torch.float64 if dtype != torch.float64 else torch.float32), x, idx),
                 tag="dtype raises")
    yield Sample((make((2, 3, 2), dtype), x, idx[0]), tag="3-d grad of a 4-d input raises")


def in_float_on_cpu(f):
    """f, but on the CPU with 16-bit tensor arguments computed in float32 and its outputs rounded
    once to their dtype: the reference for ops whose CPU kernels accumulate in float16 / bfloat16
    (the adaptive average pooling backward ops, 3-D adaptive average pooling), several ulps off
    where ocl accumulates in float."""
    def run(*args, **kwargs):
        lows = [a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype in HALFS]
        if not lows or args[[isinstance(a, torch.Tensor) for a in args].index(True)].device.type != "cpu":
            return f(*args, **kwargs)
        out = f(*[a.float() if isinstance(a, torch.Tensor) and a.dtype in HALFS else a for a in args], **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        outs = tuple(o.to(lows[0]) if o.dtype == torch.float32 else o for o in outs)
        return outs if isinstance(out, tuple) else outs[0]
    return run


def _adaptive_avg_samples(dtype):
    for x, where in _adaptive_inputs(dtype):
        for size in ADAPTIVE_SIZES:
            yield Sample((F.adaptive_avg_pool2d, x), dict(output_size=size), tag=f"{size}{where}")
    big = make((4, 16, 33, 31), dtype, seed=4)
    yield Sample((F.adaptive_avg_pool2d, big), dict(output_size=(7, 7)), tag="large")
    yield Sample((F.adaptive_avg_pool2d, big.contiguous(memory_format=torch.channels_last)),
                 dict(output_size=(7, 7)), tag="large channels_last")
    yield Sample((F.adaptive_avg_pool2d, big), dict(output_size=(50, 40)), tag="large up")
    yield Sample((F.adaptive_avg_pool2d, make((2, 3, 9, 8), dtype)), dict(output_size=(0, 2)), tag="zero output size")
    yield Sample((F.adaptive_avg_pool2d, make((2, 0, 9, 8), dtype)), dict(output_size=(2, 3)), tag="zero channels")
    yield Sample((F.adaptive_avg_pool2d, make((0, 9, 8), dtype)), dict(output_size=(2, 3)),
                 tag="zero channels unbatched")
    yield Sample((F.adaptive_avg_pool1d, make((2, 3, 11), dtype, seed=5)), dict(output_size=4), tag="1d")
    yield Sample((F.adaptive_avg_pool1d, make((1, 1, 30001), dtype, seed=5)), dict(output_size=7001),
                 tag="1d, 64-bit indices")
    yield Sample((F.interpolate, make((2, 3, 9, 8), dtype, seed=6)), dict(size=(4, 5), mode="area"), tag="area")
    yield Sample((F.interpolate, make((2, 3, 9, 8), dtype, seed=7)), dict(scale_factor=2.5, mode="area"),
                 tag="area up")
    nan = make((2, 3, 9, 8), dtype, seed=8)
    nan[0, 0, 1, 1] = float("nan")
    nan[1, 2, 0, 7] = float("inf")
    yield Sample((F.adaptive_avg_pool2d, nan), dict(output_size=(4, 3)), tag="NaN inf")
    # The CPU's errors: an empty spatial dim, 2-d / 5-d input, a negative or too long size.
    yield Sample((F.adaptive_avg_pool2d, make((2, 3, 0, 4), dtype)), dict(output_size=2), tag="zero height raises")
    yield Sample((F.adaptive_avg_pool2d, make((3, 4, 0), dtype)), dict(output_size=2), tag="zero width raises")
    yield Sample((F.adaptive_avg_pool2d, make((4, 4), dtype)), dict(output_size=2), tag="2-d raises")
    yield Sample((F.adaptive_avg_pool2d, make((1, 2, 3, 4, 4), dtype)), dict(output_size=2), tag="5-d raises")
    yield Sample((F.adaptive_avg_pool2d, make((2, 3, 4, 4), dtype)), dict(output_size=(-1, 2)), tag="negative raises")
    yield Sample((F.adaptive_avg_pool2d, make((2, 3, 4, 4), dtype)), dict(output_size=(2, 2, 2)),
                 tag="3 sizes raises")
    yield Sample((F.adaptive_avg_pool2d, make((2, 3, 4, 4), torch.int64)), dict(output_size=(2, 3)),
                 tag="int64 raises")


def _adaptive_avg_out(x, size):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    torch.ops.aten._adaptive_avg_pool2d.out(x, size, out=out)
    gi = torch.empty(3, dtype=x.dtype, device=x.device)
    torch.ops.aten._adaptive_avg_pool2d_backward.out(out * 2 + 1, x, out=gi)
    return out, gi


def _adaptive_avg_out_samples(dtype):
    yield Sample((make((2, 3, 9, 8), dtype), [4, 3]), tag="4-d")
    yield Sample((make((3, 9, 8), dtype, seed=1), [5, 6]), tag="3-d")
    yield Sample((make((2, 3, 9, 8), dtype, seed=2).contiguous(memory_format=torch.channels_last), [4, 5]),
                 tag="channels_last")


def _adaptive_avg_backward(gy, x):
    return torch.ops.aten._adaptive_avg_pool2d_backward(gy, x)


def _adaptive_avg_backward_samples(dtype):
    x = make((2, 3, 9, 8), dtype)
    yield Sample((make((2, 3, 3, 5), dtype, seed=1), x), tag="valid")
    yield Sample((make((2, 5, 3), dtype, seed=2).transpose(1, 2).unsqueeze(1).expand(2, 3, 3, 5), x),
                 tag="strided grad")
    yield Sample((make((2, 3, 4, 6), dtype, seed=3).contiguous(memory_format=torch.channels_last), x),
                 tag="channels_last grad")
    yield Sample((make((2, 3, 4, 6), dtype, seed=4), x.contiguous(memory_format=torch.channels_last)),
                 tag="channels_last input")
    yield Sample((make((3, 11, 13), dtype, seed=5), make((3, 9, 8), dtype)), tag="3-d, grad larger than input")
    yield Sample((make((0, 3, 2, 2), dtype), make((0, 3, 9, 8), dtype)), tag="empty batch")
    yield Sample((make((2, 3, 0, 2), dtype), x), tag="empty grad raises")
    yield Sample((make((2, 3, 2, 2), torch.float64 if dtype != torch.float64 else torch.float32), x),
                 tag="dtype raises")
    yield Sample((make((3, 2, 2), dtype), x), tag="3-d grad of a 4-d input raises")
    yield Sample((make((2, 2), dtype), make((9, 8), dtype)), tag="2-d raises")


CASES = [
    OpCase("max_pool2d", ["aten::max_pool2d_with_indices.out", "aten::max_pool2d_with_indices_backward.grad_input"],
           _pool, _max_samples, dtypes=FLOATS, grad=True),
    OpCase("max_pool2d_other_dtypes", [], _pool, _max_samples, dtypes=HALFS + (torch.int64, torch.int32)),
    OpCase("avg_pool2d", ["aten::avg_pool2d.out", "aten::avg_pool2d_backward.grad_input"], _pool, _avg_samples,
           dtypes=FLOATS, grad=True),
    OpCase("avg_pool2d_other_dtypes", [], _pool, _avg_samples, dtypes=HALFS + (torch.int64, torch.int32)),
    OpCase("adaptive_max_pool2d", ["aten::adaptive_max_pool2d.out", "aten::adaptive_max_pool2d_backward.grad_input"],
           _pool, _adaptive_max_samples, dtypes=FLOATS, grad=True),
    OpCase("adaptive_max_pool2d_half", [], _pool, _adaptive_max_samples, dtypes=HALFS, grad=True),
    OpCase("adaptive_max_pool2d_out", [], _adaptive_max_out, _adaptive_max_out_samples, dtypes=FLOATS + HALFS),
    OpCase("adaptive_max_pool2d_backward_errors", [], _adaptive_max_backward_errors,
           _adaptive_max_backward_error_samples, dtypes=FLOAT),
    OpCase("adaptive_avg_pool2d", ["aten::_adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d_backward"], _pool,
           _adaptive_avg_samples, dtypes=FLOATS + HALFS, grad=True),
    OpCase("adaptive_avg_pool2d_out", [], _adaptive_avg_out, _adaptive_avg_out_samples, dtypes=FLOATS + HALFS),
    OpCase("adaptive_avg_pool2d_backward", [], _adaptive_avg_backward, _adaptive_avg_backward_samples,
           dtypes=FLOATS),
    OpCase("adaptive_avg_pool2d_backward_half", [], in_float_on_cpu(_adaptive_avg_backward),
           _adaptive_avg_backward_samples, dtypes=HALFS),
]
