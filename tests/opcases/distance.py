"""Cases for pairwise distances (csrc/ops/distance.cpp): torch.cdist's direct path and
torch.pdist, every norm kind (0, 1, 2, inf, p < 1, 1 < p < 2, p > 2), with gradients."""
import torch

from ..cases import FLOATS, OpCase, Sample, make

NORMS = (0.0, 1.0, 2.0, float("inf"), 0.5, 1.5, 3.0)


def _operand(shape, dtype, p, seed, **kw):
    # p = 0 counts nonzero differences: integer-valued inputs make equal elements likely.
    x = make(shape, dtype, seed=seed, **kw)
    return x.round() if p == 0.0 else x


def _cdist_samples(dtype):
    for p in NORMS:
        yield Sample((_operand((5, 7), dtype, p, 1), _operand((6, 7), dtype, p, 2), p), tag=f"p={p}")
        # broadcast batches, rows past one 16x16 tile, columns past one 32-wide step
        yield Sample((_operand((2, 1, 20, 33), dtype, p, 3), _operand((3, 17, 33), dtype, p, 4), p),
                     tag=f"broadcast batch p={p}")
    for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
        # p = 2 with few rows: cdist's direct route under both modes
        yield Sample((make((4, 9), dtype, seed=5), make((3, 9), dtype, seed=6), 2.0), {"compute_mode": mode},
                     tag=mode)
    yield Sample((make((6, 5), dtype, noncontig=True), make((5, 3), dtype).t(), 1.0), tag="strided operands")
    yield Sample((make((3, 0), dtype), make((4, 0), dtype), 1.0), tag="no columns")
    yield Sample((make((0, 3), dtype), make((4, 3), dtype), 3.0), tag="no rows")
    x = make((4, 3), dtype, seed=7)
    x[1, 2] = float("nan")
    for p in NORMS:  # NaN differences: propagated, except by p = inf (the CPU's max skips them)
        yield Sample((x, make((5, 3), dtype, seed=8), p), tag=f"nan p={p}")


def _pdist_samples(dtype):
    for p in NORMS:
        yield Sample((_operand((6, 5), dtype, p, 1), p), tag=f"p={p}")
        yield Sample((_operand((37, 40), dtype, p, 2), p), tag=f"several tiles p={p}")
    yield Sample((make((1, 3), dtype), 2.0), tag="one row")
    yield Sample((make((4, 0), dtype), 2.0), tag="no columns")
    yield Sample((make((5, 3), dtype, noncontig=True), 1.0), tag="strided")
    x = make((4, 3), dtype, seed=9)
    x[2, 0] = float("nan")
    for p in NORMS:  # pdist's p = inf propagates NaN, unlike cdist's
        yield Sample((x, p), tag=f"nan p={p}")


def _cdist(x1, x2, p, compute_mode="donot_use_mm_for_euclid_dist"):
    return torch.cdist(x1, x2, p=p, compute_mode=compute_mode)


CASES = [
    OpCase("cdist", ["aten::_cdist_forward", "aten::_cdist_backward"], _cdist, _cdist_samples, dtypes=FLOATS,
           grad=True),
    OpCase("pdist", ["aten::_pdist_forward", "aten::_pdist_backward"], lambda x, p: torch.pdist(x, p=p),
           _pdist_samples, dtypes=FLOATS, grad=True),
]
