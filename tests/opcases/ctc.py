"""Cases for the CTC loss (csrc/ops/ctc.cpp): F.ctc_loss with every reduction, zero_infinity
both ways, padded 2-D and concatenated 1-D targets (int64 and int32), lengths as tensors and as
lists, repeated labels (the recursion's skip rule), a label equal to the blank (forward only),
empty targets, input length 0, inputs too short for their target (an infinite loss, NaN
gradients unless zero_infinity), strided log_probs, a batch wider than one work-group's states,
long inputs; gradients through _ctc_loss_backward; the CPU's argument errors. A target label
outside the classes, and the blank-label gradient: tests/test_edge_semantics.py."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, OpCase, Sample, make


def _ctc(x, targets, input_lengths, target_lengths, **kw):
    return F.ctc_loss(x.log_softmax(2), targets, input_lengths, target_lengths, **kw)


def _labels(shape, classes, seed, low=1):
    return make(shape, torch.int64, low=low, high=classes, seed=seed)


def _samples(dtype):
    T, N, C = 12, 3, 6
    x = make((T, N, C), dtype, seed=1)
    tg = _labels((N, 5), C, 2)
    il, tl = torch.tensor([12, 9, 7]), torch.tensor([5, 3, 0])
    for reduction in ("none", "mean", "sum"):
        for zi in (False, True):
            yield Sample((x, tg, il, tl), dict(reduction=reduction, zero_infinity=zi), tag=f"{reduction} zi={zi}")
    yield Sample((x, tg, (12, 9, 7), (5, 3, 0)), dict(reduction="none"), tag="lengths as lists")
    yield Sample((x, tg.int(), il.int(), tl.int()), dict(reduction="none"), tag="int32 targets and lengths")
    flat = torch.cat([tg[0, :5], tg[1, :3]])
    yield Sample((x, flat, il, tl), dict(reduction="none"), tag="1-D targets")
    yield Sample((x, torch.tensor([[2, 2, 3, 3, 3], [1, 2, 1, 2, 1], [4, 4, 4, 4, 4]]), il, torch.tensor([5, 5, 2])),
                 dict(reduction="none"), tag="repeated labels")
    yield Sample((x, _labels((N, 4), C, 3, low=0), il, torch.tensor([4, 4, 4])), dict(reduction="none", blank=5),
                 tag="blank = C - 1")
    for zi in (False, True):
        # Three labels with a repeat need 4 frames; 2 frames give an infinite loss.
        yield Sample((x, torch.tensor([[1, 1, 2], [1, 2, 3], [2, 3, 4]]), torch.tensor([2, 12, 0]),
                      torch.tensor([3, 3, 0])), dict(reduction="none", zero_infinity=zi), tag=f"too short zi={zi}")
        yield Sample((x, tg, torch.tensor([0, 0, 5]), torch.tensor([0, 2, 1])), dict(reduction="sum", zero_infinity=zi),
                     tag=f"input length 0 zi={zi}")
    # A batch of states wider than one work-group (2 * 150 + 1 > 256), over 400 frames.
    xl = make((400, 2, 9), dtype, seed=4)
    yield Sample((xl, _labels((2, 150), 9, 5), torch.tensor([400, 333]), torch.tensor([150, 97])),
                 dict(reduction="none"), tag="long targets")


def _blank_label_samples(dtype):
    """A target label equal to the blank. The loss is compared; the gradient is not: ATen's CPU
    backward assigns (not adds) the last frame's two end states, so it drops one of them when the
    last label is the blank. tests/test_edge_semantics.py checks this gradient against autograd."""
    x = make((12, 3, 6), dtype, seed=1)
    yield Sample((x, torch.tensor([[0, 2, 0], [3, 0, 3], [1, 1, 1]]), torch.tensor([12, 9, 7]),
                  torch.tensor([3, 3, 2])), dict(reduction="none"), tag="a label equal to the blank")


def _raw_samples(dtype):
    """log_probs passed as they are (no log_softmax in between): strided layouts reach the kernels."""
    T, N, C = 10, 4, 5
    x = make((N, T, C), dtype, low=-4.0, high=-0.1, seed=6).transpose(0, 1)
    tg = _labels((N, 4), C, 7)
    il, tl = torch.tensor([10, 8, 10, 3]), torch.tensor([4, 2, 1, 1])
    yield Sample((x, tg, il, tl), dict(reduction="none"), tag="batch-major log_probs")
    yield Sample((make((T, N, 2 * C), dtype, low=-4.0, high=-0.1, seed=8)[..., ::2], tg, il, tl),
                 dict(reduction="mean"), tag="strided classes")
    yield Sample((make((T, C), dtype, low=-4.0, high=-0.1, seed=9), tg[0], 10, 4), dict(reduction="none"),
                 tag="unbatched")


def _error_samples(dtype):
    T, N, C = 6, 2, 4
    x = make((T, N, C), dtype, seed=10)
    tg = torch.tensor([[1, 2], [3, 3]])
    il, tl = torch.tensor([6, 6]), torch.tensor([2, 2])
    yield Sample((x, tg, torch.tensor([7, 6]), tl), tag="input length past T raises")
    yield Sample((x, tg, torch.tensor([-1, 6]), tl), tag="negative input length raises")
    yield Sample((x, tg, il, torch.tensor([3, 2])), tag="target length past the padded width raises")
    yield Sample((x, tg, il, torch.tensor([-1, 2])), tag="negative target length raises")
    yield Sample((x, torch.tensor([1, 2, 3]), il, tl), tag="1-D targets too short raises")
    yield Sample((x, tg, il, tl), dict(blank=4), tag="blank past the classes raises")
    yield Sample((x, tg.float(), il, tl), tag="float targets raise")
    yield Sample((x, tg[None], il, tl), tag="3-D targets raise")
    yield Sample((x[:, :0], tg[:0], il[:0], tl[:0]), tag="empty batch raises")


def _error_call(x, targets, input_lengths, target_lengths, **kw):
    # Lengths through the IntArrayRef schema, so the lengths checks are the op's, not the composite's.
    return torch.ops.aten._ctc_loss(x.log_softmax(2), targets, input_lengths.tolist(), target_lengths.tolist(),
                                    kw.get("blank", 0))[0]


def _half_samples(dtype):
    yield Sample((make((6, 2, 4), dtype), torch.tensor([[1, 2], [3, 3]]), torch.tensor([6, 6]), torch.tensor([2, 2])),
                 tag="not implemented for 16-bit floats")


CASES = [
    OpCase("ctc_loss", ["aten::_ctc_loss", "aten::_ctc_loss_backward"], _ctc, _samples, dtypes=FLOATS, grad=True,
           atol=1e-4, rtol=1e-4),
    OpCase("ctc_loss_blank_label", ["aten::_ctc_loss"], _ctc, _blank_label_samples, dtypes=FLOATS, atol=1e-4,
           rtol=1e-4),
    OpCase("ctc_loss_raw", ["aten::_ctc_loss", "aten::_ctc_loss_backward"], F.ctc_loss, _raw_samples, dtypes=FLOATS,
           grad=True, atol=1e-4, rtol=1e-4),
    OpCase("ctc_loss_tensor_overloads", ["aten::_ctc_loss.Tensor", "aten::_ctc_loss_backward.Tensor"],
           lambda x, tg, il, tl, blank=0, zero_infinity=False, reduction=None:
           torch.ops.aten._ctc_loss.Tensor(x.log_softmax(2), tg, il, tl, blank, zero_infinity)[0],
           lambda dt: (s for s in _samples(dt) if "lists" not in s.tag),
           dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("ctc_loss_errors", ["aten::_ctc_loss"], _error_call, _error_samples, dtypes=FLOATS),
    OpCase("ctc_loss_16bit", ["aten::_ctc_loss"], _ctc, _half_samples, dtypes=(torch.float16, torch.bfloat16)),
]
