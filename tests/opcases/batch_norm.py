"""Batch normalization through native_batch_norm / native_batch_norm_backward: 1-d (N, C) and
(N, C, L), 2-d and 3-d inputs, training (batch statistics, running statistics updated in place)
and evaluation (running statistics), with and without affine parameters or running statistics,
non-contiguous inputs, 16-bit inputs with float parameters; gradients of input and parameters."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, HALFS, OpCase, Sample, make


def _bn_samples(dtype):
    pdt = torch.float32 if dtype in HALFS else dtype
    for shape, tag in [((4, 3), "(N, C)"), ((4, 3, 5), "(N, C, L)"), ((4, 3, 5, 6), "2-d"), ((2, 3, 2, 3, 4), "3-d"),
                       ((16, 8, 13, 11), "large")]:
        c = shape[1]
        x = make(shape, dtype, seed=1)
        w, b = make((c,), pdt, seed=2, low=0.5, high=2), make((c,), pdt, seed=3)
        for mode in ("train", "eval", "train, no running stats"):
            yield Sample((x, w, b, mode), tag=f"{tag} {mode}")
        yield Sample((x, None, None, "train"), tag=f"{tag} no affine")
    yield Sample((make((4, 3, 6, 5), dtype, noncontig=True, seed=4), make((3,), pdt, seed=2), None, "train"),
                 tag="noncontig")
    yield Sample((make((4, 3, 6, 5), dtype, seed=5).to(memory_format=torch.channels_last), make((3,), pdt, seed=2),
                  make((3,), pdt, seed=3), "train"), tag="channels_last")
    # Channels-innermost inputs, read in place (bn_partial_cl, bn_affine_cl): channels_last and
    # channels_last_3d, an (N, L, C) tensor seen as (N, C, L), two channel blocks with a partial
    # one, many rows; "grad in layout" gives the backward a gradient in the input's layout (an
    # autograd graph's usual case), the others a contiguous one, which it copies.
    # Channel counts that are multiples of 4 take 4-vectors of channels: one block, two blocks
    # with a partial one, many rows.
    cl_inputs = [((4, 70, 5, 6), torch.channels_last, "channels_last, 70 channels"),
                 ((2, 5, 3, 4, 6), torch.channels_last_3d, "channels_last_3d"),
                 ((16, 5, 24, 24), torch.channels_last, "channels_last, many rows"),
                 ((4, 8, 5, 6), torch.channels_last, "channels_last, 8 channels"),
                 ((2, 260, 3, 5), torch.channels_last, "channels_last, 260 channels"),
                 ((16, 12, 24, 24), torch.channels_last, "channels_last, 12 channels, many rows"),
                 ((2, 8, 3, 4, 6), torch.channels_last_3d, "channels_last_3d, 8 channels")]
    for shape, mf, tag in cl_inputs:
        x, c = make(shape, dtype, seed=9).contiguous(memory_format=mf), shape[1]
        w, b = make((c,), pdt, seed=2, low=0.5, high=2), make((c,), pdt, seed=3)
        for mode in ("train", "eval", "train, grad in layout"):
            yield Sample((x, w, b, mode), tag=f"{tag} {mode}")
    # Rows of a multiple of 4 positions take 4-vectors: rows longer than a work-group's loads in
    # flight; a base that is not 4-element aligned reads scalars.
    yield Sample((make((2, 3, 72, 64), dtype, seed=12), make((3,), pdt, seed=2), make((3,), pdt, seed=3), "train"),
                 tag="long rows")
    yield Sample((make((1 + 4 * 3 * 8,), dtype, seed=13)[1:].view(4, 3, 8), make((3,), pdt, seed=2), None, "train"),
                 tag="unaligned base")
    # Channels-last data whose base is not 4-element aligned: scalar channels.
    flat = make((1 + 4 * 8 * 6 * 5,), dtype, seed=11)[1:]
    yield Sample((flat.as_strided((4, 8, 6, 5), (240, 1, 40, 8)), make((8,), pdt, seed=2), make((8,), pdt, seed=3),
                  "train"), tag="channels_last, unaligned base")
    nlc = make((4, 9, 70), dtype, seed=10).transpose(1, 2)
    yield Sample((nlc, make((70,), pdt, seed=2), None, "train"), tag="(N, L, C) as (N, C, L)")
    yield Sample((nlc, None, None, "train, grad in layout"), tag="(N, L, C) as (N, C, L), grad in layout")
    # Many batch slices per channel (kernels/batch_norm.cl merges their statistics), one element
    # per row, and a mean far from zero.
    yield Sample((make((64, 2, 3, 3), dtype, seed=6), make((2,), pdt, seed=2), make((2,), pdt, seed=3), "train"),
                 tag="many slices")
    yield Sample((make((300, 3), dtype, seed=7), None, make((3,), pdt, seed=3), "train"), tag="(N, C), long batch")
    yield Sample((make((8, 3, 7), dtype, seed=8) + 100, make((3,), pdt, seed=2), None, "train"), tag="mean 100")
    if dtype in HALFS:
        yield Sample((x, make((c,), dtype, seed=2, low=0.5, high=2), make((c,), dtype, seed=3), "train"),
                     tag="16-bit parameters and running statistics")


def _bn(x, w, b, mode):
    pdt = w.dtype if w is not None else (torch.float32 if x.dtype in HALFS else x.dtype)
    c = x.shape[1]
    if mode == "train, no running stats":
        return (F.batch_norm(x, None, None, w, b, training=True, momentum=0.1, eps=1e-5),)
    if mode == "train, grad in layout":  # the output seen channels-innermost: its gradient comes back so
        return (F.batch_norm(x, None, None, w, b, training=True, momentum=0.1, eps=1e-5).movedim(1, -1),)
    rm = torch.linspace(-1, 1, c, dtype=pdt, device=x.device)
    rv = torch.linspace(0.5, 2, c, dtype=pdt, device=x.device)
    y = F.batch_norm(x, rm, rv, w, b, training=mode == "train", momentum=0.3, eps=1e-3)
    return y, rm, rv


CASES = [
    OpCase("batch_norm", ["aten::native_batch_norm", "aten::native_batch_norm_backward"], _bn, _bn_samples,
           dtypes=FLOATS, grad=True, atol=1e-4, rtol=1e-4),
    OpCase("batch_norm_half", [], _bn, _bn_samples, dtypes=HALFS),
]
