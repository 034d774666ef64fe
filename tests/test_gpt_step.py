"""A GPTMini-style training step runs entirely natively on ocl (issue 4): SDPA and manual
attention, weight tying, dropout, clip_grad_norm_, fused and foreach AdamW; nothing falls
back to the CPU, and (without dropout) the step matches the CPU's."""
import os
import subprocess
import sys

import pytest
import torch

from models.gpt_mini import GPTMini, GPTMiniConfig

pytestmark = pytest.mark.skipif(not (hasattr(torch, "ocl") and torch.ocl.is_available()),
                                reason="no OpenCL device")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _step(model, opt, x, y):
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    return loss.detach(), norm


@pytest.mark.parametrize("attn_impl", ["sdpa", "manual"])
@pytest.mark.parametrize("fused", [True, False])
def test_step_matches_cpu_without_fallback(attn_impl, fused):
    cfg = GPTMiniConfig(vocab_size=61, d_model=32, n_heads=4, n_layers=2, d_ff=64, max_len=24,
                        attn_impl=attn_impl)
    torch.manual_seed(0)
    cpu = GPTMini(cfg)
    dev = GPTMini(cfg)
    dev.load_state_dict(cpu.state_dict())
    dev = dev.to("ocl")
    assert dev.head.weight is dev.wte.weight  # weight tying survives .to("ocl")
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 61, (3, 24), generator=g)
    y = torch.randint(0, 61, (3, 24), generator=g)
    o_cpu = torch.optim.AdamW(cpu.parameters(), lr=1e-3, fused=fused, foreach=None if fused else True)
    o_dev = torch.optim.AdamW(dev.parameters(), lr=1e-3, fused=fused, foreach=None if fused else True)
    before = torch.ocl.fallback_counts()
    for _ in range(3):
        lc, nc = _step(cpu, o_cpu, x, y)
        ld, nd = _step(dev, o_dev, x.to("ocl"), y.to("ocl"))
        assert ld.item() == pytest.approx(lc.item(), rel=1e-5)
        assert nd.item() == pytest.approx(nc.item(), rel=1e-4)
    assert torch.ocl.fallback_counts() == before, "an op of the step fell back to the CPU"


def test_dropout_step_with_fallback_as_error():
    """Dropout > 0 (device RNG), SDPA with dropout and manual attention, under
    TORCH_OCL_FALLBACK=error in a fresh process."""
    code = """
import torch
from models.gpt_mini import GPTMini, GPTMiniConfig
for impl in ("sdpa", "manual"):
    torch.manual_seed(0)
    m = GPTMini(GPTMiniConfig(vocab_size=40, d_model=32, n_heads=2, n_layers=2, d_ff=64,
                              max_len=16, dropout=0.1, attn_impl=impl)).to("ocl")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True)
    x = torch.randint(0, 40, (2, 16), device="ocl")
    for _ in range(2):
        _, loss = m(x, x)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
    assert torch.isfinite(loss).item()
print("ok")
"""
    env = {**os.environ, "TORCH_OCL_FALLBACK": "error", "PYTHONPATH": REPO}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
