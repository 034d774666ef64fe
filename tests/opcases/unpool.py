"""Max unpooling (nn.MaxUnpool2d / nn.MaxUnpool3d): the indices of max pooling (overlapping
windows repeat an index, with the same value), output sizes larger than the pooled input,
unbatched, empty batch, non-contiguous and channels_last inputs; gradients (ATen's gather);
out= forms; the CPU's errors, an index outside the output plane included (raised at the next
synchronization on ocl)."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make


def _unpool(op, x, indices, *args):
    out = op(x, indices, *args)
    if out.device.type != "cpu":
        torch.ocl.synchronize()  # an index out of range is reported here
    return out


def _pooled2d(shape, dtype, seed=0, **kwargs):
    y, i = F.max_pool2d(make(shape, dtype, seed=seed), return_indices=True, **kwargs)
    return y, i


def _unpool2d_samples(dtype):
    op = torch.ops.aten.max_unpool2d
    y, i = _pooled2d((2, 3, 9, 8), dtype, kernel_size=2)
    yield Sample((op, y, i, [9, 8]), tag="k2")
    yield Sample((op, y, i, [10, 11]), tag="larger output")
    yield Sample((op, *_pooled2d((2, 3, 9, 8), dtype, 1, kernel_size=3, stride=1, padding=1), [9, 8]),
                 tag="overlapping windows (repeated indices)")
    yield Sample((op, *_pooled2d((3, 9, 8), dtype, 2, kernel_size=3, stride=2), [9, 8]), tag="unbatched")
    yield Sample((op, y.transpose(2, 3), i.transpose(2, 3), [9, 8]), tag="transposed")
    yield Sample((op, y.contiguous(memory_format=torch.channels_last), i.contiguous(memory_format=torch.channels_last),
                  [9, 8]), tag="channels_last")
    yield Sample((op, y.contiguous(memory_format=torch.channels_last), i, [9, 8]), tag="channels_last values")
    yield Sample((op, *_pooled2d((0, 3, 9, 8), dtype, kernel_size=2), [9, 8]), tag="empty batch")
    yield Sample((F.max_unpool2d, y, i, 2), tag="F.max_unpool2d")
    yield Sample((op, *_pooled2d((4, 16, 33, 31), dtype, 3, kernel_size=3, stride=2), [33, 31]), tag="large")
    # The CPU's errors.
    yield Sample((op, y, i, [4, 4]), tag="index past a smaller output raises")
    bad = i.clone()
    bad[1, 2, 3, 3] = -1
    yield Sample((op, y, bad, [9, 8]), tag="negative index raises")
    yield Sample((op, y, i.int(), [9, 8]), tag="int32 indices raises")
    yield Sample((op, y, i[:, :, :2], [9, 8]), tag="indices of another shape raises")
    yield Sample((op, y, i, [9, 8, 1]), tag="3 sizes raises")
    yield Sample((op, y[0, 0], i[0, 0], [9, 8]), tag="2-d raises")
    yield Sample((op, y[:, :0], i[:, :0], [9, 8]), tag="zero channels raises")
    yield Sample((op, y, i, [-1, 8]), tag="negative size raises")
    yield Sample((op, y.long(), i, [9, 8]), tag="int64 raises")


def _pooled3d(shape, dtype, seed=0, **kwargs):
    y, i = F.max_pool3d(make(shape, dtype, seed=seed), return_indices=True, **kwargs)
    return y, i


def _unpool3d_samples(dtype):
    op = torch.ops.aten.max_unpool3d
    st, pad = [2, 2, 2], [0, 0, 0]
    y, i = _pooled3d((2, 3, 5, 7, 6), dtype, kernel_size=2)
    yield Sample((op, y, i, [5, 7, 6], st, pad), tag="k2")
    yield Sample((op, y, i, [6, 8, 9], st, pad), tag="larger output")
    yield Sample((op, *_pooled3d((2, 3, 5, 7, 6), dtype, 1, kernel_size=3, stride=1, padding=1), [5, 7, 6], [1, 1, 1],
                  [1, 1, 1]), tag="overlapping windows (repeated indices)")
    yield Sample((op, *_pooled3d((3, 5, 7, 6), dtype, 2, kernel_size=2), [5, 7, 6], st, pad), tag="unbatched")
    yield Sample((op, y.transpose(2, 4), i.transpose(2, 4), [6, 7, 5], st, pad), tag="transposed")
    yield Sample((op, y.contiguous(memory_format=torch.channels_last_3d),
                  i.contiguous(memory_format=torch.channels_last_3d), [5, 7, 6], st, pad), tag="channels_last_3d")
    yield Sample((op, *_pooled3d((0, 3, 5, 7, 6), dtype, kernel_size=2), [5, 7, 6], st, pad), tag="empty batch")
    yield Sample((F.max_unpool3d, y, i, 2), tag="F.max_unpool3d")
    # The CPU's errors.
    yield Sample((op, y, i, [2, 3, 3], st, pad), tag="index past a smaller output raises")
    bad = i.clone()
    bad[1, 2, 1, 1, 1] = -5
    yield Sample((op, y, bad, [5, 7, 6], st, pad), tag="negative index raises")
    yield Sample((op, y, i.int(), [5, 7, 6], st, pad), tag="int32 indices raises")
    yield Sample((op, y, i[:, :, :1], [5, 7, 6], st, pad), tag="indices of another shape raises")
    yield Sample((op, y, i, [5, 7], st, pad), tag="2 sizes raises")
    yield Sample((op, y, i, [5, 7, 6], [2, 2], pad), tag="2 strides raises")
    yield Sample((op, y, i, [5, 7, 6], [0, 2, 2], pad), tag="zero stride raises")
    yield Sample((op, y, i, [5, 7, 6], st, [0, 0]), tag="2 paddings raises")
    yield Sample((op, y[0, 0], i[0, 0], [5, 7, 6], st, pad), tag="3-d raises")
    yield Sample((op, y[:, :0], i[:, :0], [5, 7, 6], st, pad), tag="zero channels raises")
    yield Sample((op, y, i, [-1, 7, 6], st, pad), tag="negative size raises")
    yield Sample((op, y.long(), i, [5, 7, 6], st, pad), tag="int64 raises")


def _unpool_out(x, indices, size, *args):
    """The out= forms with wrongly sized outputs (resized, as on the CPU)."""
    out = torch.empty(5, dtype=x.dtype, device=x.device)
    if len(size) == 2:
        return torch.ops.aten.max_unpool2d.out(x, indices, size, out=out)
    return torch.ops.aten.max_unpool3d.out(x, indices, size, *args, out=out)


def _unpool_out_samples(dtype):
    yield Sample((*_pooled2d((2, 3, 9, 8), dtype, kernel_size=2), [9, 8]), tag="2-d")
    y, i = _pooled2d((2, 3, 9, 8), dtype, kernel_size=2)
    yield Sample((y.contiguous(memory_format=torch.channels_last), i, [9, 8]), tag="2-d channels_last")
    yield Sample((*_pooled3d((2, 3, 5, 7, 6), dtype, kernel_size=2), [5, 7, 6], [2, 2, 2], [0, 0, 0]), tag="3-d")
    # An empty output takes no values, so no index is checked (as on the CPU). Not in the grad
    # cases: the CPU's gradient (a gather from the empty output) does not check them either.
    yield Sample((y, i + 1000, [0, 8]), tag="2-d empty output")
    yield Sample((*_pooled3d((2, 3, 5, 7, 6), dtype, kernel_size=2), [0, 7, 6], [2, 2, 2], [0, 0, 0]),
                 tag="3-d empty output")


CASES = [
    OpCase("max_unpool2d", ["aten::max_unpool2d", "aten::max_unpool2d.out"], _unpool, _unpool2d_samples,
           dtypes=FLOATS + HALFS, grad=True),
    OpCase("max_unpool3d", ["aten::max_unpool3d", "aten::max_unpool3d.out"], _unpool, _unpool3d_samples,
           dtypes=FLOATS + HALFS, grad=True),
    OpCase("max_unpool_out", [], _unpool_out, _unpool_out_samples, dtypes=FLOATS + HALFS),
]
