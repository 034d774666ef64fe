"""Cases for fused scaled-dot-product attention (csrc/ops/attention.cpp), run through
F.scaled_dot_product_attention with gradients and compared against the CPU's math path.
The device copies keep the samples' strides, so transposed (B, L, H, D)-style q/k/v views
reach the kernels as they would from a model. More shapes live in tests/test_attention.py."""
import torch
import torch.nn.functional as F

from ..cases import FLOATS, OpCase, Sample, make

SDPA_OPS = ["aten::_fused_sdp_choice", "aten::_scaled_dot_product_fused_attention_overrideable",
            "aten::_scaled_dot_product_fused_attention_overrideable_backward"]


def _sdpa(q, k, v, mask=None, **kw):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)


def _qkv(dtype, B, Hq, Hkv, L, S, D, Dv=None, seed=0):
    Dv = Dv or D
    return (make((B, Hq, L, D), dtype, low=-1, high=1, seed=seed),
            make((B, Hkv, S, D), dtype, low=-1, high=1, seed=seed + 1),
            make((B, Hkv, S, Dv), dtype, low=-1, high=1, seed=seed + 2))


def _samples(dtype):
    yield Sample(_qkv(dtype, 2, 3, 3, 17, 17, 16), tag="plain")
    if dtype == torch.float64:
        # One head-dim class only: every class is another kernel build (slow on PoCL).
        q, k, v = _qkv(dtype, 2, 2, 2, 13, 29, 16, 12)
        yield Sample((q, k, v, make((2, 1, 13, 29), dtype)), dict(), tag="float mask, Dv != D")
        yield Sample(_qkv(dtype, 1, 4, 2, 20, 9, 16), dict(is_causal=True, enable_gqa=True), tag="causal GQA")
        return
    yield Sample(_qkv(dtype, 2, 2, 2, 33, 21, 32), dict(is_causal=True), tag="causal L>S")
    yield Sample(_qkv(dtype, 1, 2, 2, 19, 40, 64), dict(is_causal=True), tag="causal L<S")
    q, k, v = _qkv(dtype, 2, 2, 2, 13, 29, 24, 40)
    yield Sample((q, k, v, make((2, 1, 13, 29), dtype)), tag="float mask [B,1,L,S] (with grad), Dv != D")
    yield Sample((q, k, v, make((13, 29), torch.bool)), tag="bool mask [L,S]")
    yield Sample(_qkv(dtype, 1, 4, 2, 9, 11, 128), dict(enable_gqa=True, scale=0.3), tag="GQA, scale")
    # (B, L, H, D) memory viewed as (B, H, L, D), as a model's q/k/v arrive.
    q, k, v = (make((2, 7, 3, 32), dtype, low=-1, high=1, seed=s).transpose(1, 2) for s in range(3))
    yield Sample((q, k, v), dict(is_causal=True), tag="transposed views")
    yield Sample(_qkv(dtype, 1, 1, 1, 1, 1, 8), tag="L=S=1")


CASES = [
    OpCase("scaled_dot_product_attention", SDPA_OPS, _sdpa, _samples, dtypes=FLOATS, grad=True, rtol=1e-5),
]
