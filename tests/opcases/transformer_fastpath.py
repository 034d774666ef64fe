"""The inference fast paths of nn.MultiheadAttention and nn.TransformerEncoder (csrc/ops/
transformer.cpp): _native_multi_head_attention with every mask type, need_weights and
averaging; _transformer_encoder_layer_fwd (relu/gelu, norm first or last, masks); the nested
tensors of a padded encoder (built from a mask and padded back). The modules themselves are
compared in tests/test_transformer_fastpath.py."""
import torch

from ..cases import FLOATS, OpCase, Sample, make as _make


def make(shape, dtype, seed=0):
    # Weights and inputs in [-0.5, 0.5]: the attention scores stay moderate, so float32
    # rounding does not decide near-one-hot softmax rows.
    return _make(shape, dtype, low=-0.5, high=0.5, seed=seed)


def _mha_args(dtype, B, L, S, E, seed, cross=False):
    q = make((B, L, E), dtype, seed=seed)
    k = make((B, S, E), dtype, seed=seed + 1) if cross else q
    v = make((B, S, E), dtype, seed=seed + 2) if cross else q
    return (q, k, v, E, 2, make((3 * E, E), dtype, seed=seed + 3), make((3 * E,), dtype, seed=seed + 4),
            make((E, E), dtype, seed=seed + 5), make((E,), dtype, seed=seed + 6))


def _mha_samples(dtype):
    B, L, E = 3, 5, 8
    causal = torch.ones(L, L, dtype=torch.bool).triu(1)
    padding = torch.zeros(B, L, dtype=torch.bool)
    padding[0, 3:] = True
    padding[2, 1:] = True
    for need, avg in ((True, True), (True, False), (False, True)):
        tag = f"need_weights={need} average={avg}"
        yield Sample(_mha_args(dtype, B, L, L, E, 0) + (None, need, avg, None), tag="no mask, " + tag)
        yield Sample(_mha_args(dtype, B, L, L, E, 1) + (causal, need, avg, 0), tag="attention mask, " + tag)
        yield Sample(_mha_args(dtype, B, L, L, E, 2) + (padding, need, avg, 1), tag="padding mask, " + tag)
        merged = causal.view(1, 1, L, L) | padding.view(B, 1, 1, L)
        yield Sample(_mha_args(dtype, B, L, L, E, 3) + (merged.expand(B, 2, L, L), need, avg, 2), tag="merged, " + tag)
    yield Sample(_mha_args(dtype, B, L, L, E, 4, cross=True) + (None, True, True, None), tag="distinct q, k, v")
    yield Sample(_mha_args(dtype, B, L, 7, E, 9, cross=True) + (None, True, True, None),
                 tag="key length != query length raises (as on the CPU)")
    yield Sample(_mha_args(dtype, B, L, L, E, 5) + (padding.to(dtype) * 3, True, True, 1), tag="float mask: nonzero masks")
    full = torch.zeros(B, L, dtype=torch.bool)
    full[1] = True
    yield Sample(_mha_args(dtype, B, L, L, E, 6) + (full, True, True, 1), tag="a fully masked sequence (NaN)")
    yield Sample(_mha_args(dtype, 2, 4, 4, 6, 7) + (None, True, True, None), tag="embed_dim % heads raises")
    yield Sample(_mha_args(dtype, B, L, L, E, 8) + (padding, True, True, None), tag="mask without a type raises")


def _mha(*args):
    args = list(args)
    if args[3] == 6:  # embed_dim 6 with 4 heads: not divisible
        args[4] = 4
    return torch._native_multi_head_attention(*args)


def _layer_args(dtype, B, L, E, F, seed, use_gelu, norm_first, mask, mask_type):
    return (make((B, L, E), dtype, seed=seed), E, 2, make((3 * E, E), dtype, seed=seed + 1),
            make((3 * E,), dtype, seed=seed + 2), make((E, E), dtype, seed=seed + 3), make((E,), dtype, seed=seed + 4),
            use_gelu, norm_first, 1e-5, make((E,), dtype, seed=seed + 5), make((E,), dtype, seed=seed + 6),
            make((E,), dtype, seed=seed + 7), make((E,), dtype, seed=seed + 8), make((F, E), dtype, seed=seed + 9),
            make((F,), dtype, seed=seed + 10), make((E, F), dtype, seed=seed + 11), make((E,), dtype, seed=seed + 12),
            mask, mask_type)


def _layer_samples(dtype):
    B, L, E, F = 2, 6, 8, 16
    padding = torch.zeros(B, L, dtype=torch.bool)
    padding[1, 4:] = True
    for i, (gelu, first) in enumerate(((False, False), (True, False), (False, True), (True, True))):
        yield Sample(_layer_args(dtype, B, L, E, F, 10 * i, gelu, first, None, None), tag=f"gelu={gelu} norm_first={first}")
    yield Sample(_layer_args(dtype, B, L, E, F, 50, False, False, padding, 1), tag="padding mask")
    causal = torch.ones(L, L, dtype=torch.bool).triu(1).expand(B, 2, L, L)
    yield Sample(_layer_args(dtype, B, L, E, F, 60, True, False, causal, 2), tag="merged mask")


def _nested_round_trip(t, keep):
    n = torch._nested_tensor_from_mask(t, keep)
    return n.to_padded_tensor(0.0, t.size()), torch._nested_tensor_from_mask_left_aligned(t, keep)


def _nested_samples(dtype):
    keep = torch.tensor([[True, True, True, False], [True, False, False, False], [True] * 4])
    yield Sample((make((3, 4, 5), dtype), keep), tag="left aligned")
    yield Sample((make((3, 4, 5), dtype), torch.tensor([[True, False, True, False]] * 3)), tag="gaps raise")


CASES = [
    OpCase("native_multi_head_attention", ["aten::_native_multi_head_attention"], _mha, _mha_samples, dtypes=FLOATS,
           atol=1e-4, rtol=1e-4),
    OpCase("transformer_encoder_layer_fwd", ["aten::_transformer_encoder_layer_fwd"],
           torch._transformer_encoder_layer_fwd, _layer_samples, dtypes=FLOATS, atol=1e-4, rtol=1e-4),
    OpCase("nested_tensor_from_mask", ["aten::_nested_tensor_from_mask", "aten::_nested_from_padded",
                                       "aten::_nested_tensor_from_mask_left_aligned"],
           _nested_round_trip, _nested_samples, dtypes=FLOATS),
]
