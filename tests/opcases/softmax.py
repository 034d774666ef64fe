"""Cases for the softmax family (csrc/ops/softmax.cpp): softmax / log_softmax over any dim
(negative dims, non-contiguous and strided rows, rows longer than a work-group caches),
their backward ops through autograd, half_to_float, and _safe_softmax."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make

FWD = ["aten::_softmax.out", "aten::_log_softmax.out"]
BWD = ["aten::_softmax_backward_data.out", "aten::_log_softmax_backward_data.out"]


def _samples(dtype):
    yield Sample((make((), dtype), 0), tag="0-dim")
    yield Sample((make((7,), dtype), 0), tag="1-D")
    yield Sample((make((5, 3), dtype), -1), tag="dim -1")
    yield Sample((make((5, 3), dtype), 0), tag="dim 0")
    yield Sample((make((2, 3, 4), dtype), 1), tag="middle dim")
    yield Sample((make((2, 3, 4), dtype), -3), tag="dim -3")
    yield Sample((make((0, 4), dtype), -1), tag="empty batch")
    yield Sample((make((3, 0), dtype), -1), tag="empty rows")
    yield Sample((make((4, 6), dtype, noncontig=True), -1), tag="noncontig rows")
    yield Sample((make((6, 4), dtype).t(), -1), tag="transposed")
    yield Sample((make((6, 4), dtype).t(), 0), tag="transposed dim 0")
    yield Sample((make((3, 5, 4), dtype).permute(2, 0, 1), 1), tag="permuted (copy path)")
    yield Sample((make((3, 1), dtype).expand(3, 5), -1), tag="expanded")
    yield Sample((make((33, 129), dtype), -1), tag="odd rows")
    yield Sample((make((3, 5000), dtype, low=-20, high=20), -1), tag="long rows (streamed tail)")
    yield Sample((make((2, 3000, 3), dtype), 1), tag="long strided rows")
    yield Sample((make((64, 40), dtype), 0), tag="inner 40")


def _special(dtype):
    inf = float("inf")
    x = torch.tensor([[1.0, -inf, 2.0], [-inf, -inf, -inf], [0.0, inf, 1.0], [1.0, float("nan"), 0.0]], dtype=dtype)
    yield Sample((x, -1), tag="inf/nan rows")


def _half_to_float(fn):
    # The CPU has no half_to_float kernels: the reference widens first (same math).
    def run(x, dim):
        if x.device.type == "cpu":
            return fn(x.float(), dim, False)
        return fn(x, dim, True)
    return run


def _safe_softmax(x, dim):
    return torch.ops.aten._safe_softmax(x, dim)


def _masked_samples(dtype):
    inf = float("inf")
    x = make((4, 6), dtype)
    x[1] = -inf
    x[2, :3] = -inf
    yield Sample((x, -1), tag="fully masked row")
    x = make((3, 4, 5), dtype)
    x[:, 2, :] = -inf
    yield Sample((x, 1), tag="masked, strided dim")


CASES = [
    OpCase("softmax", FWD[:1] + BWD[:1], lambda x, d: torch.softmax(x, d), _samples, dtypes=FLOATS, grad=True),
    OpCase("log_softmax", FWD[1:] + BWD[1:], lambda x, d: torch.log_softmax(x, d), _samples, dtypes=FLOATS,
           grad=True),
    OpCase("softmax_half", FWD, lambda x, d: (torch.softmax(x, d), torch.log_softmax(x, d)),
           lambda dt: (s for s in _samples(dt) if s.tag in ("dim -1", "middle dim", "long rows (streamed tail)")),
           dtypes=HALFS, grad=True, atol=2e-2, rtol=2e-2),
    OpCase("softmax_special", FWD, lambda x, d: (torch.softmax(x, d), torch.log_softmax(x, d)), _special,
           dtypes=FLOATS),
    OpCase("softmax_half_to_float", FWD + BWD,
           lambda x, d: (_half_to_float(torch.ops.aten._softmax)(x, d),
                         _half_to_float(torch.ops.aten._log_softmax)(x, d)),
           lambda dt: (Sample((make((5, 7), torch.float16), -1)), Sample((make((4, 3, 2), torch.float16), 1))),
           dtypes=(torch.float16,), grad=True, atol=1e-3, rtol=1e-3),
    OpCase("softmax_out", FWD, lambda x, d, out: torch.softmax(x, d, out=out),
           lambda dt: (Sample((make((3, 5), dt), -1), {"out": make((2,), dt)}),
                       Sample((make((4, 5), dt), 0), {"out": make((5, 4), dt).t()}),
                       Sample((make((4, 5), dt), 1), {"out": make((4, 10), dt, noncontig=True)})),
           dtypes=FLOATS),
    OpCase("safe_softmax", ["aten::_safe_softmax"] + BWD[:1], _safe_softmax,
           lambda dt: (s for g in (_masked_samples, _samples) for s in g(dt)), dtypes=FLOATS, grad=True),
    OpCase("sdpa_math_softmax", ["aten::_safe_softmax", "aten::_softmax_backward_data.out"],
           lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda dt: [Sample((make((2, 2, 5, 8), dt), make((2, 2, 5, 8), dt), make((2, 2, 5, 8), dt)))],
           dtypes=(torch.float32,), grad=True),
]
