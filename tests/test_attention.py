"""Fused scaled-dot-product attention on ocl (csrc/ops/attention.cpp): forward and backward
against the CPU's math path over causal/masks/shapes/head dims, dropout against a reference
built from the same mask, GQA, that the fused kernel (and nothing else) ran, that
sdpa_kernel(MATH) is honoured, and that memory stays O(B*H*L). The backward has two modes,
split (a dQ kernel; deterministic) and fused (dQ by atomic adds from the dK/dV kernel); the
shape matrix, dropout, GQA, masks and 16-bit/64-bit dtypes run in both. The tensor-core
kernels (MMA=ptx, NVIDIA's default for float32 up to head dimension 64) replace the forward
and the fused backward where they apply; here they run through their emulation (MMA=emu).
A third mode, gemm (GEMM=on, CPU devices' default), runs float32/float64 attention without
dropout as batched matrix products over the L x S scores with two row kernels between them;
every test that is not about it selects the fused kernels (GEMM=off)."""
import contextlib

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from .conftest import requires_ocl

pytestmark = requires_ocl

DEV = "ocl"
# The kernels a forward + backward launches in each backward mode.
MODE_KERNELS = {"split": {"attention_fwd", "attention_bwd_prep", "attention_bwd_dq", "attention_bwd_dkdv"},
                "fused": {"attention_fwd", "attention_bwd_prep", "attention_bwd_dkdv_dq"},
                "gemm": {"attention_gemm_softmax", "attention_gemm_grad"}}
MODES = list(MODE_KERNELS)
FUSED_MODES = ["split", "fused"]
# The tensor-core kernels and the FMA kernels they stand in for.
MMA_ALIAS = {"attention_mma_fwd": "attention_fwd", "attention_mma_bwd": "attention_bwd_dkdv_dq"}


def _launched():
    """Launch counts since the last reset, the tensor-core kernels counted under the names of
    the FMA kernels they replace (so the mode checks hold with either)."""
    counts = {}
    for k, n in torch.ocl._launch_counts().items():
        counts[MMA_ALIAS.get(k, k)] = counts.get(MMA_ALIAS.get(k, k), 0) + n
    return counts
_ATTN_KEYS = [f"attention/{dt}/d{hd}" for dt in ("float32", "float64", "float16", "bfloat16")
              for hd in (32, 64, 128, 256)]


def _default_mode():
    """The mode of the tuning entries in force: the fused backward, or gemm where a variant asks."""
    return "gemm" if "GEMM=on" in _variant[0] else "fused"


def _spec(variant):
    """Tuning text for a variant: the fused kernels unless it selects the GEMM path itself."""
    return variant if "GEMM=" in variant else f"{variant} GEMM=off".strip()


_variant = [""]  # the kernel variant attn_variant() selected (tuning keys), kept by bwd_mode


@pytest.fixture(autouse=True)
def _fused_kernels_by_default():
    """Every test starts with the fused kernels selected (GEMM=off), whatever the device's default."""
    from torch_ocl import _C
    for key in _ATTN_KEYS:
        _C._tuning_set(0, key, _spec(""))
    yield
    for key in _ATTN_KEYS:
        _C._tuning_set(0, key, "")


@contextlib.contextmanager
def bwd_mode(mode):
    """Selects the mode (BWD=split|fused, or GEMM=on for gemm) through the in-process tuning
    entries of every dtype and head-dimension class; None keeps the variant's."""
    from torch_ocl import _C
    if mode is None:
        yield _default_mode()
        return
    text = "GEMM=on" if mode == "gemm" else f"BWD={mode} GEMM=off"
    try:
        for key in _ATTN_KEYS:
            _C._tuning_set(0, key, f"{_variant[0]} {text}".strip())
        yield mode
    finally:
        for key in _ATTN_KEYS:
            _C._tuning_set(0, key, _spec(_variant[0]))


@contextlib.contextmanager
def deterministic(on):
    was, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(on)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn)


def _inputs(B, Hq, Hkv, L, S, D, Dv, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, Hq, L, D, generator=g, dtype=dtype), torch.randn(B, Hkv, S, D, generator=g, dtype=dtype),
            torch.randn(B, Hkv, S, Dv, generator=g, dtype=dtype), torch.randn(B, Hq, L, Dv, generator=g, dtype=dtype))


def _mask(kind, B, Hq, L, S, dtype, seed=1):
    g = torch.Generator().manual_seed(seed)
    if kind is None:
        return None
    if kind == "bool":
        m = torch.rand(L, S, generator=g) > 0.3
        m[min(1, L - 1)] = False  # a fully masked row: math's safe softmax gives zeros
        return m
    if kind == "float_b1ls":
        return torch.randn(B, 1, L, S, generator=g, dtype=dtype)
    if kind == "float_ls":
        return torch.randn(L, S, generator=g, dtype=dtype)
    raise ValueError(kind)


def _run(q, k, v, go, mask=None, grad_mask=False, **kw):
    """Forward + backward; returns (out, grads) on the CPU."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
    m = None
    if mask is not None:
        m = mask.detach().clone()
        if grad_mask:
            m.requires_grad_(True)
            leaves.append(m)
    out = F.scaled_dot_product_attention(*leaves[:3], attn_mask=m, **kw)
    grads = torch.autograd.grad(out, leaves, go)
    return out.detach().cpu(), [x.cpu() for x in grads]


def _compare(B, Hq, Hkv, L, S, D, Dv=None, causal=False, mask=None, dtype=torch.float32, tol=1e-5, mode=None, **kw):
    Dv = Dv or D
    q, k, v, go = _inputs(B, Hq, Hkv, L, S, D, Dv, dtype)
    m = _mask(mask, B, Hq, L, S, dtype)
    grad_mask = mask is not None and mask.startswith("float")
    exp_out, exp_grads = _run(q, k, v, go, m, grad_mask, is_causal=causal, **kw)
    with bwd_mode(mode) as ran:
        torch.ocl._reset_launch_counts()
        act_out, act_grads = _run(*(t.to(DEV) for t in (q, k, v, go)), None if m is None else m.to(DEV), grad_mask,
                                  is_causal=causal, **kw)
        counts = _launched()
    if ran == "gemm" and (dtype not in (torch.float32, torch.float64) or kw.get("dropout_p")):
        ran = "fused"  # what the GEMM path does not take
    expected = MODE_KERNELS[ran] if L > 0 and S > 0 else {"attention_fwd"} if ran != "gemm" else set()
    assert expected <= set(counts), f"the {ran} backward's kernels did not all run: {counts}"
    torch.testing.assert_close(act_out, exp_out, atol=tol, rtol=tol)
    for i, (a, e) in enumerate(zip(act_grads, exp_grads)):
        torch.testing.assert_close(a, e, atol=10 * tol, rtol=10 * tol, msg=lambda s: f"gradient {i}: {s}")


def _compare_values(B, Hq, Hkv, L, S, D, causal=False, tol=1e-5):
    """Like _compare, whichever kernels run (where an entry leaves the device's defaults)."""
    q, k, v, go = _inputs(B, Hq, Hkv, L, S, D, D)
    exp_out, exp_grads = _run(q, k, v, go, is_causal=causal)
    act_out, act_grads = _run(*(t.to(DEV) for t in (q, k, v, go)), is_causal=causal)
    torch.testing.assert_close(act_out, exp_out, atol=tol, rtol=tol)
    for a, e in zip(act_grads, exp_grads):
        torch.testing.assert_close(a, e, atol=10 * tol, rtol=10 * tol)


# (B, Hq, Hkv, L, S, D, Dv, causal, mask)
MATRIX = [
    (1, 1, 1, 1, 1, 16, None, False, None),
    (2, 3, 3, 17, 17, 16, None, True, None),
    (2, 2, 2, 33, 20, 32, None, True, None),           # causal, L > S (top-left)
    (1, 2, 2, 20, 45, 32, None, False, "float_b1ls"),  # L < S
    (2, 2, 2, 37, 29, 64, None, False, "float_b1ls"),
    (1, 3, 3, 31, 31, 64, None, False, "float_ls"),
    (2, 2, 2, 17, 29, 40, 24, False, "bool"),          # odd D, Dv != D, a fully masked row
    (1, 2, 2, 5, 70, 96, None, True, "bool"),
    (1, 2, 2, 33, 19, 128, None, False, None),
    (1, 1, 1, 9, 11, 256, 200, True, None),
    (1, 1, 1, 300, 300, 64, None, True, None),
    (1, 1, 1, 1, 1000, 64, None, False, None),         # decode-like: one query, many keys
    # Tile boundaries (forward blocks of 64/32 rows, backward of 32/16/8) and padded head dims.
    (1, 2, 2, 63, 63, 64, None, True, None),
    (1, 1, 1, 64, 65, 64, None, False, "float_ls"),
    (1, 1, 1, 65, 64, 80, None, True, None),
    (1, 1, 1, 127, 129, 96, None, False, "bool"),
    (1, 2, 2, 129, 127, 32, None, False, "float_b1ls"),
    (2, 4, 4, 128, 128, 32, None, True, None),         # GPTMini small's shape
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("B,Hq,Hkv,L,S,D,Dv,causal,mask", MATRIX)
def test_matches_math(B, Hq, Hkv, L, S, D, Dv, causal, mask, mode):
    _compare(B, Hq, Hkv, L, S, D, Dv, causal, mask, mode=mode)


def test_long_sequence():
    _compare(1, 1, 1, 2048, 2048, 32, causal=True)


@pytest.mark.parametrize("mode", MODES)
def test_float64(mode):
    _compare(2, 2, 2, 19, 23, 16, causal=True, dtype=torch.float64, tol=1e-10, mode=mode)
    _compare(1, 2, 1, 40, 37, 16, mask="float_b1ls", dtype=torch.float64, tol=1e-10, mode=mode, enable_gqa=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_storage(dtype, mode):
    # 16-bit storage, float compute: compare against float32 math on the same (rounded) inputs.
    # The fused mode adds dQ in a float workspace and converts it at the end.
    B, H, L, S, D = 2, 2, 37, 70, 64
    q, k, v, go = (t.to(dtype) for t in _inputs(B, H, H, L, S, D, D))
    exp_out, exp_grads = _run(*(t.float() for t in (q, k, v, go)), is_causal=True)
    with bwd_mode(mode):
        act_out, act_grads = _run(*(t.to(DEV) for t in (q, k, v, go)), is_causal=True)
    assert act_out.dtype == dtype
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    torch.testing.assert_close(act_out.float(), exp_out, atol=tol, rtol=tol)
    for a, e in zip(act_grads, exp_grads):
        torch.testing.assert_close(a.float(), e, atol=4 * tol, rtol=4 * tol)


@pytest.mark.parametrize("mode", MODES)
def test_strided_head_dim(mode):
    # Head-dim stride != 1 (and an odd storage offset): the kernels' scalar load path.
    B, H, L, S, D = 1, 2, 40, 35, 32
    q, k, v, go = _inputs(B, H, H, L, S, D, D)
    exp_out, exp_grads = _run(q, k, v, go, is_causal=True)

    def strided(t):
        base = torch.zeros(t.numel() * 2 + 1, device=DEV)
        view = base[1:].view(*t.shape[:2], t.shape[3], t.shape[2] * 2)[..., ::2].transpose(-1, -2)
        view.copy_(t)
        assert view.stride(-1) != 1
        return view.requires_grad_(True)  # _run's clone() would make it contiguous

    leaves = [strided(t) for t in (q, k, v)]
    with bwd_mode(mode):
        torch.ocl._reset_launch_counts()
        out = F.scaled_dot_product_attention(*leaves, is_causal=True)
        grads = torch.autograd.grad(out, leaves, go.to(DEV))
        assert MODE_KERNELS[mode] <= set(_launched())
    torch.testing.assert_close(out.detach().cpu(), exp_out, atol=1e-5, rtol=1e-5)
    for a, e in zip((g.cpu() for g in grads), exp_grads):
        torch.testing.assert_close(a, e, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", MODES)
def test_gqa(mode):
    _compare(2, 6, 2, 21, 26, 32, causal=True, enable_gqa=True, mode=mode)
    _compare(1, 4, 1, 70, 33, 64, enable_gqa=True, mode=mode)  # several key blocks, every head of the group
    _compare(1, 4, 2, 65, 97, 128, mask="float_b1ls", enable_gqa=True, mode=mode)  # with the bias gradient


def test_deterministic_algorithms_select_the_split_backward():
    # Even where the fused mode is configured, use_deterministic_algorithms(True) runs the
    # split backward (no atomics): two runs give bitwise equal gradients.
    q, k, v, go = (t.to(DEV) for t in _inputs(1, 2, 2, 70, 90, 64, 64))
    with bwd_mode("fused"):
        with deterministic(True):
            runs = []
            for _ in range(2):
                torch.ocl._reset_launch_counts()
                runs.append(_run(q, k, v, go))
                counts = _launched()
                assert MODE_KERNELS["split"] <= set(counts) and "attention_bwd_dkdv_dq" not in counts, counts
        for a, b in zip(runs[0][1], runs[1][1]):
            assert torch.equal(a, b)
        torch.ocl._reset_launch_counts()
        fused = _run(q, k, v, go)
        assert MODE_KERNELS["fused"] <= set(_launched())
    for a, b in zip(fused[1], runs[0][1]):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_mode_config_keys():
    # BWD=fused|split, ATOMIC=cas and GEMM=on|off parse (with numbers too); an unknown mode warns
    # and is ignored.
    from torch_ocl import _C
    key = "attention/float32/d32"
    try:
        q, k, v, go = _inputs(1, 1, 1, 9, 12, 32, 32)
        exp = _run(q, k, v, go, is_causal=True)
        for spec, mode in (("BWD=fused ATOMIC=cas GEMM=off", "fused"), ("BWD=0 GEMM=0", "split"),
                           ("BWD=1,ATOMIC=0,GEMM=off", "fused"), ("GEMM=on", "gemm"), ("BWD=split GEMM=1", "gemm")):
            _C._tuning_set(0, key, spec)
            torch.ocl._reset_launch_counts()
            act = _run(*(t.to(DEV) for t in (q, k, v, go)), is_causal=True)
            assert MODE_KERNELS[mode] <= set(_launched()), (spec, torch.ocl._launch_counts())
            for a, e in zip([act[0]] + act[1], [exp[0]] + exp[1]):
                torch.testing.assert_close(a, e, atol=1e-4, rtol=1e-4)
        _C._tuning_set(0, key, "BWD=sometimes GEMM=off")
        with pytest.warns(UserWarning, match="ignoring attention tiling"):
            _compare_values(1, 1, 1, 5, 7, 32)  # the device's defaults
    finally:
        _C._tuning_set(0, key, _spec(""))


def test_tiling_override():
    # TORCH_OCL_ATTN_CONFIG (read once per process) retiles the kernels; results do not change.
    # An invalid tiling falls back to the defaults with a warning.
    code = (
        "import torch, torch.nn.functional as F, warnings\n"
        "g = torch.Generator().manual_seed(0)\n"
        "q, k, v, go = (torch.randn(1, 2, 45, 64, generator=g) for _ in range(4))\n"
        "def run(dev):\n"
        "    t = [x.to(dev).requires_grad_(True) for x in (q, k, v)]\n"
        "    o = F.scaled_dot_product_attention(*t, is_causal=True)\n"
        "    return [o] + list(torch.autograd.grad(o, t, go.to(dev)))\n"
        "torch.ocl._reset_launch_counts()\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    got = run('ocl')\n"
        "assert {'attention_fwd', 'attention_mma_fwd', 'attention_gemm_softmax'} & set(torch.ocl._launch_counts())\n"
        "for a, e in zip(got, run('cpu')):\n"
        "    torch.testing.assert_close(a.cpu(), e, atol=1e-4, rtol=1e-4)\n"
        "print('WARNED' if any('TORCH_OCL_ATTN_CONFIG' in str(x.message) for x in w) else 'QUIET')\n")
    import os
    import subprocess
    import sys
    for spec, expect in (("BLOCK_M=32,BLOCK_N=16,WPT_M=2,WPT_N=2,BWD_BLOCK_M=16,BWD_BLOCK_N=16,BWD_WPT_M=2,"
                          "BWD_WPT_N=2,GEMM=off", "QUIET"), ("BLOCK_N=12", "WARNED")):
        env = dict(os.environ, TORCH_OCL_ATTN_CONFIG=spec)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        assert r.stdout.strip().splitlines()[-1] == expect, (spec, r.stdout, r.stderr[-2000:])


def test_unbuildable_atomic_falls_back_to_cas():
    # ATOMIC=ptx is NVIDIA inline assembly: elsewhere its program does not build, which costs
    # the fused backward's kernel only: one warning, then the compare-and-swap loop.
    if "NVIDIA" in torch.ocl.get_device_properties(0).vendor:
        pytest.skip("NVIDIA's compiler builds the PTX atomics")
    from torch_ocl import _C
    key = "attention/float32/d32"
    try:
        _C._tuning_set(0, key, "BWD=fused ATOMIC=ptx GEMM=off")
        with pytest.warns(UserWarning, match="does not build"):
            _compare(1, 2, 2, 33, 40, 32, causal=True, mode=None)
    finally:
        _C._tuning_set(0, key, _spec(""))


@pytest.mark.parametrize("mode", MODES)
def test_scale(mode):
    _compare(1, 2, 2, 12, 15, 32, scale=0.05, mode=mode)
    _compare(1, 2, 2, 12, 15, 32, causal=True, mask=None, scale=1.7, mode=mode)


def test_tuning_file_entry():
    # The device's tuning entry "attention/<dtype>/d<class>" retiles the kernels (here set in
    # process, as torch_ocl.tune does while timing); an invalid entry warns and is ignored.
    from torch_ocl import _C
    key = "attention/float32/d64"
    try:
        _C._tuning_set(0, key, "BLOCK_M=16 BLOCK_N=16 WPT_M=2 WPT_N=2 BWD_BLOCK_M=8 BWD_BLOCK_N=8 BWD_WPT_M=1 BWD_WPT_N=1"
                               " GEMM=off")
        _compare(1, 2, 2, 37, 29, 64, causal=True)
        _C._tuning_set(0, key, "BLOCK_N=12")
        with pytest.warns(UserWarning, match="ignoring attention tiling"):
            _compare_values(1, 1, 1, 5, 7, 64)  # the device's defaults
    finally:
        _C._tuning_set(0, key, _spec(""))


def test_bool_mask_arrives_as_float():
    # The kernel rejects a boolean bias, so a passing run shows SDPA converted it to an
    # additive float mask before the overrideable op.
    q, k, v, _ = _inputs(1, 1, 1, 4, 6, 16, 16)
    m = torch.rand(4, 6) > 0.5
    torch.ocl._reset_launch_counts()
    out = F.scaled_dot_product_attention(q.to(DEV), k.to(DEV), v.to(DEV), attn_mask=m.to(DEV))
    assert _launched().get("attention_fwd") == 1
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v, attn_mask=m), atol=1e-5, rtol=1e-5)
    with pytest.raises(RuntimeError, match="attn_bias"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q.to(DEV), k.to(DEV), v.to(DEV), m.to(DEV))


@pytest.mark.parametrize("mode", FUSED_MODES)
def test_only_fused_kernels_run(mode):
    q, k, v, go = (t.to(DEV) for t in _inputs(2, 4, 4, 64, 64, 32, 32))
    q.requires_grad_(True), k.requires_grad_(True), v.requires_grad_(True)
    with bwd_mode(mode):
        torch.ocl._reset_launch_counts()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.autograd.grad(out, (q, k, v), go)
        counts = _launched()
    assert set(counts) == MODE_KERNELS[mode], counts
    assert all(n == 1 for n in counts.values()), counts


def test_gemm_mode_runs_products_and_two_row_kernels():
    # GEMM=on: seven matrix products (two forward, five backward) and one launch of each row
    # kernel; nothing else (contiguous q/k/v need no copies).
    q, k, v, go = (t.to(DEV) for t in _inputs(2, 4, 4, 64, 64, 32, 32))
    q.requires_grad_(True), k.requires_grad_(True), v.requires_grad_(True)
    with bwd_mode("gemm"):
        torch.ocl._reset_launch_counts()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.autograd.grad(out, (q, k, v), go)
        counts = _launched()
    rows = {name: counts.pop(name, 0) for name in MODE_KERNELS["gemm"]}
    assert all(n == 1 for n in rows.values()), rows
    assert counts and all(name.startswith("gemm") for name in counts), counts


def test_gemm_mode_chunks_the_scores():
    # The (batch, kv head) pairs go in chunks of at most 2^22 scores: eight pairs of 1024 x 1024
    # scores run as two chunks of four, so the forward never holds all 32 MiB of them.
    B, H, T, D = 1, 8, 1024, 16
    q, k, v, go = _inputs(B, H, H, T, T, D, D)
    exp_out, exp_grads = _run(q, k, v, go, is_causal=True)
    leaves = [t.to(DEV).requires_grad_(True) for t in (q, k, v)]
    with bwd_mode("gemm"):
        torch.ocl.synchronize()
        base = torch.ocl.memory_allocated()
        torch.ocl.reset_peak_memory_stats()
        out = F.scaled_dot_product_attention(*leaves, is_causal=True)
        torch.ocl.synchronize()
        fwd_peak = torch.ocl.max_memory_allocated() - base
        grads = torch.autograd.grad(out, leaves, go.to(DEV))
    all_scores = B * H * T * T * 4
    assert fwd_peak < 0.6 * all_scores, f"forward peak {fwd_peak / 2**20:.1f} MiB (all scores: 32 MiB)"
    torch.testing.assert_close(out.detach().cpu(), exp_out, atol=1e-5, rtol=1e-5)
    for a, e in zip(grads, exp_grads):
        torch.testing.assert_close(a.cpu(), e, atol=1e-4, rtol=1e-4)


def test_sdpa_kernel_math_is_honoured():
    q, k, v, _ = (t.to(DEV) for t in _inputs(1, 2, 2, 8, 8, 16, 16))
    assert torch._fused_sdp_choice(q, k, v) == SDPBackend.OVERRIDEABLE.value
    with sdpa_kernel([SDPBackend.MATH]):
        assert torch._fused_sdp_choice(q, k, v) == SDPBackend.MATH.value
        torch.ocl._reset_launch_counts()
        F.scaled_dot_product_attention(q, k, v)
        assert "attention_fwd" not in _launched()
    wide = torch.zeros(1, 2, 8, 300, device=DEV)
    assert torch._fused_sdp_choice(wide, wide, wide) == SDPBackend.MATH.value  # head dim > 256


@pytest.mark.parametrize("mode", MODES)
def test_dropout_matches_same_mask_reference(mode):
    _check_dropout(mode)


def _check_dropout(mode):
    B, H, L, S, D, p = 2, 3, 37, 40, 16, 0.3
    # Reveal the keep mask: q = 0 gives uniform attention 1/S, v = I puts element (i, j)
    # of the dropped-out attention matrix in out[i, j] = keep / (S * (1 - p)).
    torch.manual_seed(5)
    probe = F.scaled_dot_product_attention(torch.zeros(B, H, L, D, device=DEV), torch.zeros(B, H, S, D, device=DEV),
                                           torch.eye(S).expand(B, H, S, S).contiguous().to(DEV), dropout_p=p).cpu()
    keep = (probe * S * (1 - p)).round()
    assert set(keep.unique().tolist()) <= {0.0, 1.0}
    assert abs(keep.mean().item() - (1 - p)) < 0.03  # 4440 Bernoulli draws: ~5 sigma
    # Same seed and shapes give the same Philox stream: compare with math on that mask.
    q, k, v, go = _inputs(B, H, H, L, S, D, 24)
    torch.manual_seed(5)
    with bwd_mode(mode):
        act_out, act_grads = _run(q.to(DEV), k.to(DEV), v.to(DEV), go.to(DEV), dropout_p=p)
    leaves = [t.clone().requires_grad_(True) for t in (q, k, v)]
    attn = torch.softmax(leaves[0] @ leaves[1].transpose(-1, -2) / D ** 0.5, -1) * keep / (1 - p)
    ref = attn @ leaves[2]
    ref_grads = torch.autograd.grad(ref, leaves, go)
    torch.testing.assert_close(act_out, ref.detach(), atol=1e-5, rtol=1e-5)
    for a, e in zip(act_grads, ref_grads):
        torch.testing.assert_close(a, e, atol=1e-4, rtol=1e-4)
    # A different seed draws a different mask.
    torch.manual_seed(6)
    other = F.scaled_dot_product_attention(torch.zeros(B, H, L, D, device=DEV), torch.zeros(B, H, S, D, device=DEV),
                                           torch.eye(S).expand(B, H, S, S).contiguous().to(DEV), dropout_p=p).cpu()
    assert not torch.equal(other, probe)


def _peak_bytes(T, d, backward):
    q, k, v, go = (t.to(DEV) for t in _inputs(1, 1, 1, T, T, d, d))
    q.requires_grad_(True), k.requires_grad_(True), v.requires_grad_(True)
    torch.ocl.synchronize()
    base = torch.ocl.memory_allocated()
    torch.ocl.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if backward:
        torch.autograd.grad(out, (q, k, v), go)
    torch.ocl.synchronize()
    return torch.ocl.max_memory_allocated() - base


def test_memory_is_linear_in_sequence_length():
    # Forward at T = 4096: the math path would materialize (several) T x T = 64 MiB matrices.
    T = 4096
    peak = _peak_bytes(T, 64, backward=False)
    assert peak < T * T * 4 / 16, f"forward peak {peak / 2**20:.1f} MiB is not far below the 64 MiB T x T matrix"
    # Forward + backward (smaller T to keep PoCL fast): output, grads and O(T) workspace only.
    T = 1024
    peak = _peak_bytes(T, 64, backward=True)
    assert peak < T * T * 4 / 2, f"fwd+bwd peak {peak / 2**20:.2f} MiB is not far below the 4 MiB T x T matrix"


@pytest.mark.parametrize("mode", FUSED_MODES)  # the GEMM path's gradients are [B, H, T, D]
def test_backward_grads_keep_the_projection_layout(mode):
    # GPTMini's pattern: q, k, v are head-inner views of one [B, T, 3C] projection. The
    # gradients come back in that [B, T, H, D] memory order, so the transpose/view backward
    # is free and split's backward (cat) reads them in place: no copy kernels.
    B, T, H, D = 2, 40, 4, 16
    qkv = torch.randn(B, T, 3 * H * D, device="ocl", requires_grad=True)
    q, k, v = (x.view(B, T, H, D).transpose(1, 2) for x in qkv.split(H * D, dim=2))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    go = torch.randn_like(out)
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    with bwd_mode(mode):
        out.backward(go)
    torch.ocl.synchronize()
    launched = torch.ocl._launch_counts()
    assert not [k for k in launched if k.startswith("pw_")], launched
    ref = qkv.detach().cpu().requires_grad_()
    rq, rk, rv = (x.view(B, T, H, D).transpose(1, 2) for x in ref.split(H * D, dim=2))
    F.scaled_dot_product_attention(rq, rk, rv, is_causal=True).backward(go.cpu())
    torch.testing.assert_close(qkv.grad.cpu(), ref.grad, atol=1e-5, rtol=1e-5)


# Kernel variants selected by TORCH_OCL_ATTN_CONFIG keys (bench/bench_attention.py compares
# them on a GPU): base-2 softmax (EXP=exp2|native), the forward's row reductions by shuffles
# (ROWRED=ptx on NVIDIA, khr with cl_khr_subgroup_shuffle, emu: the same data flow through
# local memory, which any device runs), the P/dS tile padding (PPAD), the fused dQ column
# layout (DQVEC) and rows per work-item (DQROWS), the backward prefetch (BWD_PREFETCH). A shuffle the device
# lacks falls back to the local reduction with a warning, so on PoCL the ptx/khr entries run
# the other keys only (each entry is a new program: a few seconds of PoCL compile time).
VARIANTS = ["EXP=exp2 DQROWS=8", "EXP=native PPAD=8 ROWRED=ptx", "ROWRED=emu DQVEC=1 DQROWS=8 BWD_PREFETCH=0", "EXP=exp2 ROWRED=emu SPLIT_KV=0", "ROWRED=khr"]


@contextlib.contextmanager
def attn_variant(spec):
    from torch_ocl import _C
    try:
        _variant[0] = spec
        for key in _ATTN_KEYS:
            _C._tuning_set(0, key, _spec(spec))
        yield
    finally:
        _variant[0] = ""
        for key in _ATTN_KEYS:
            _C._tuning_set(0, key, _spec(""))


@pytest.mark.parametrize("spec", VARIANTS)
def test_variants_match_math(spec):
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*attention tiling.*")
        with attn_variant(spec):
            for B, Hq, Hkv, L, S, D, Dv, causal, mask in (
                    (2, 2, 2, 33, 20, 32, None, True, None),           # causal, L > S
                    (2, 2, 2, 37, 29, 64, None, False, "float_b1ls"),  # mask and its gradient
                    (2, 2, 2, 17, 29, 40, 24, False, "bool")):         # odd D, a fully masked row
                _compare(B, Hq, Hkv, L, S, D, Dv, causal, mask)
            _compare(1, 4, 2, 70, 33, 64, enable_gqa=True)
            _check_dropout(None)
            if "EXP" in spec:  # the base-2 constants in double precision
                _compare(2, 2, 2, 19, 23, 16, causal=True, dtype=torch.float64, tol=1e-10)
            if spec == VARIANTS[1]:  # head dimension class 128 (one more program per variant)
                _compare(1, 1, 1, 65, 64, 80, causal=True)
                _compare(1, 2, 2, 5, 70, 96, None, True, "bool")
            for mode in MODES:
                _compare(2, 2, 2, 37, 29, 64, None, False, "float_b1ls", mode=mode)


# NVIDIA inline assembly elsewhere: ROWRED=ptx gets the local row reduction, MMA=ptx (which
# does not build) the FMA kernels; each with a warning.
@pytest.mark.parametrize("spec,warning", [("ROWRED=ptx", "ROW_REDUCE=1"), ("MMA=ptx", "tensor-core attention kernels")])
def test_nvidia_only_variant_falls_back(spec, warning):
    if "NVIDIA" in torch.ocl.get_device_properties(0).vendor:
        pytest.skip("NVIDIA's compiler builds the PTX")
    with attn_variant(spec):
        with pytest.warns(UserWarning, match=warning):
            _compare(1, 2, 2, 33, 40, 32, causal=True)


# ---- The tensor-core kernels (attention_mma_*), through their emulation on devices without
# tensor cores: the fragment bookkeeping, masks, bounds and the fused dQ of the PTX kernels.
MMA_CASES = [
    (1, 1, 1, 1, 1, 16, None, False, None),
    (2, 3, 3, 17, 17, 16, None, True, None),
    (2, 2, 2, 33, 20, 32, None, True, None),           # causal, L > S (top-left)
    (1, 2, 2, 20, 45, 32, None, False, "float_b1ls"),  # L < S, the bias gradient
    (2, 2, 2, 37, 29, 64, None, False, "float_b1ls"),
    (1, 3, 3, 31, 31, 64, None, False, "float_ls"),
    (2, 2, 2, 17, 29, 40, 24, False, "bool"),          # odd D, Dv != D, a fully masked row
    (1, 1, 1, 1, 200, 64, None, False, None),          # one query, several key blocks
    (1, 2, 2, 65, 64, 64, None, True, None),           # tile boundaries
]


@pytest.mark.parametrize("B,Hq,Hkv,L,S,D,Dv,causal,mask", MMA_CASES)
def test_mma_emulation_matches_math(B, Hq, Hkv, L, S, D, Dv, causal, mask):
    with attn_variant("MMA=emu"):
        _compare(B, Hq, Hkv, L, S, D, Dv, causal, mask)
        counts = torch.ocl._launch_counts()
    assert {"attention_mma_fwd", "attention_mma_bwd"} <= set(counts), counts


def test_mma_emulation_gqa_and_other_tiles():
    for spec in ("MMA=emu", "MMA=emu MMA_N=16 MMA_WARPS=2 MMA_FETCH=0 MMA_BWD_FETCH=0"):
        with attn_variant(spec):
            _compare(1, 4, 2, 70, 33, 64, enable_gqa=True)
            _compare(2, 6, 2, 21, 26, 32, causal=True, enable_gqa=True)
            assert "attention_mma_bwd" in torch.ocl._launch_counts()


def test_mma_emulation_strided_head_dim():
    # The tensor-core kernels stage q, k and v through the same strided loads (head-dim stride
    # != 1); on NVIDIA they run test_strided_head_dim by default.
    with attn_variant("MMA=emu"):
        test_strided_head_dim("fused")
        counts = torch.ocl._launch_counts()
    assert {"attention_mma_fwd", "attention_mma_bwd"} <= set(counts), counts


def test_mma_leaves_the_rest_to_the_fma_kernels():
    # Dropout, float64, head dimensions above 64 and deterministic mode run the FMA kernels.
    with attn_variant("MMA=emu"):
        _check_dropout(None)
        torch.ocl._reset_launch_counts()
        _compare(1, 2, 2, 19, 23, 16, causal=True, dtype=torch.float64, tol=1e-10)
        _compare(1, 1, 1, 65, 64, 80, causal=True)
        assert not [k for k in torch.ocl._launch_counts() if "mma" in k], torch.ocl._launch_counts()
        q, k, v, go = _inputs(1, 2, 2, 33, 40, 32, 32)
        exp = _run(q, k, v, go, is_causal=True)
        with deterministic(True):
            torch.ocl._reset_launch_counts()
            act = _run(*(t.to(DEV) for t in (q, k, v, go)), is_causal=True)
            counts = torch.ocl._launch_counts()
        assert "attention_mma_fwd" in counts and "attention_bwd_dq" in counts and "attention_mma_bwd" not in counts
        for a, e in zip([act[0]] + act[1], [exp[0]] + exp[1]):
            torch.testing.assert_close(a, e, atol=1e-4, rtol=1e-4)
