"""nn.MultiheadAttention and nn.TransformerEncoder in inference (eval mode, no gradient), where
PyTorch takes its fast path on the PrivateUse1 device as on CPU and CUDA: the fused attention
op, the fused encoder layer and, with a key padding mask, nested tensors (csrc/ops/
transformer.cpp). Outputs against the CPU's fast path, with no op falling back to the CPU."""
import pytest
import torch
import torch.nn as nn

from .conftest import requires_ocl

pytestmark = [requires_ocl, pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def _same(module, *inputs, atol=1e-5, rtol=1e-4, **kwargs):
    """Runs module on the CPU and, copied, on ocl under no_grad; compares every output."""
    torch.manual_seed(0)
    ref = module.eval()
    dev = _copy(module).to("ocl").eval()
    to = lambda x: x.to("ocl") if isinstance(x, torch.Tensor) else x  # noqa: E731
    torch.ocl.reset_fallback_counts()
    with torch.no_grad():
        expected = ref(*inputs, **kwargs)
        actual = dev(*(to(x) for x in inputs), **{k: to(v) for k, v in kwargs.items()})
    assert torch.ocl.fallback_counts() == {}
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for a, e in zip(actual, expected):
        if e is None:
            assert a is None
            continue
        torch.testing.assert_close(a.cpu(), e, atol=atol, rtol=rtol, equal_nan=True)


def _copy(module):
    import copy
    return copy.deepcopy(module)


def _padding(B, L, lengths):
    mask = torch.zeros(B, L, dtype=torch.bool)
    for i, n in enumerate(lengths):
        mask[i, n:] = True
    return mask


@pytest.mark.parametrize("need_weights, average", [(False, True), (True, True), (True, False)])
@pytest.mark.parametrize("masks", ["none", "padding", "causal", "both", "causal 3-D"])
def test_multihead_attention(need_weights, average, masks):
    torch.manual_seed(0)
    B, L, E, H = 3, 7, 16, 4
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    x = torch.randn(B, L, E)
    kw = dict(need_weights=need_weights, average_attn_weights=average)
    if masks in ("padding", "both"):
        kw["key_padding_mask"] = _padding(B, L, [7, 4, 1])
    if masks in ("causal", "both"):
        kw["attn_mask"] = torch.ones(L, L, dtype=torch.bool).triu(1)
    if masks == "causal 3-D":
        kw["attn_mask"] = torch.ones(L, L, dtype=torch.bool).triu(1).expand(B * H, L, L)
    _same(mha, x, x, x, **kw)


def test_multihead_attention_fully_masked_row_is_nan_as_on_cpu():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    _same(mha, x, x, x, key_padding_mask=_padding(2, 5, [5, 0]))


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer(activation, norm_first):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, activation=activation, norm_first=norm_first, batch_first=True)
    x = torch.randn(3, 6, 16)
    _same(layer, x, atol=1e-4)
    _same(layer, x, src_key_padding_mask=_padding(3, 6, [6, 3, 5]), atol=1e-4)
    _same(layer, x, src_mask=torch.ones(6, 6, dtype=torch.bool).triu(1), atol=1e-4)


@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("final_norm", [False, True])
def test_encoder_with_padding(nested, final_norm):
    # With a padding mask and enable_nested_tensor, the encoder turns the batch into a nested
    # tensor (no padded rows), runs the layers on it and pads back with zeros.
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
    enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(16) if final_norm else None,
                                enable_nested_tensor=nested)
    x = torch.randn(4, 9, 16)
    _same(enc, x, src_key_padding_mask=_padding(4, 9, [9, 5, 1, 7]), atol=1e-4)
    _same(enc, x, atol=1e-4)  # no mask: the dense fast path


def test_encoder_with_both_masks():
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2)
    x = torch.randn(2, 5, 16)
    _same(enc, x, mask=torch.ones(5, 5, dtype=torch.bool).triu(1), src_key_padding_mask=_padding(2, 5, [5, 3]),
          atol=1e-4)


def test_nested_tensor_copies_between_devices():
    t = torch.randn(3, 4, 5)
    keep = ~_padding(3, 4, [4, 2, 3])
    n = torch._nested_tensor_from_mask(t.to("ocl"), keep.to("ocl"))
    assert n.is_nested and n.device.type == "ocl"
    back = n.cpu()
    assert back.is_nested and back.device.type == "cpu"
    torch.testing.assert_close(back.to_padded_tensor(0.0), torch._nested_tensor_from_mask(t, keep).to_padded_tensor(0.0))
    torch.testing.assert_close(torch._nested_tensor_from_mask(t, keep).to("ocl").to_padded_tensor(0.0).cpu(),
                               back.to_padded_tensor(0.0))


def test_training_mode_unchanged():
    # Gradients take the ordinary (composite) path, as on the CPU.
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, dropout=0.0), 2)
    dev = _copy(enc).to("ocl")
    x = torch.randn(2, 5, 16)
    mask = _padding(2, 5, [5, 3])
    enc(x, src_key_padding_mask=mask).sum().backward()
    dev(x.to("ocl"), src_key_padding_mask=mask.to("ocl")).sum().backward()
    for p, q in zip(enc.parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("lengths", [[4, 2, 3], [4, 0, 1], [1, 1, 1]])
def test_nested_from_mask_and_back(lengths):
    t = torch.randn(3, 4, 5)
    keep = ~_padding(3, 4, lengths)
    n_cpu = torch._nested_tensor_from_mask(t, keep)
    n = torch._nested_tensor_from_mask(t.to("ocl"), keep.to("ocl"))
    for args in [(0.0,), (-2.5,), (1.0, (3, 6, 5)), (0.0, (4, 6, 5)), (0.0, (3, 6, 7))]:
        torch.testing.assert_close(n.to_padded_tensor(*args).cpu(), n_cpu.to_padded_tensor(*args))
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        n_cpu.to_padded_tensor(0.0, (3, max(lengths) - 1, 5))
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        n.to_padded_tensor(0.0, (3, max(lengths) - 1, 5))
    with pytest.raises(RuntimeError, match="left-aligned"):
        gaps = keep.clone()
        gaps[0] = torch.tensor([False, True, False, False])
        torch._nested_tensor_from_mask(t.to("ocl"), gaps.to("ocl"))
