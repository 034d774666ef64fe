"""torch.autocast("ocl") cast policies and GradScaler on the device."""
import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl
D = "ocl"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_policies(dtype):
    a = torch.randn(4, 8, device=D)
    b = torch.randn(8, 3, device=D)
    w = torch.randn(5, 8, device=D)
    with torch.autocast("ocl", dtype=dtype):
        assert torch.is_autocast_enabled("ocl")
        assert torch.mm(a, b).dtype == dtype
        assert (a @ b).dtype == dtype
        assert torch.nn.functional.linear(a, w).dtype == dtype
        h = torch.mm(a, b)
        assert torch.softmax(h, -1).dtype == torch.float32
        assert torch.log_softmax(h, -1).dtype == torch.float32
        assert torch.nn.functional.layer_norm(h, (3,)).dtype == torch.float32
    assert torch.mm(a, b).dtype == torch.float32


def test_autocast_matches_reference():
    torch.manual_seed(0)
    a = torch.randn(6, 16)
    b = torch.randn(16, 5)
    with torch.autocast("ocl", dtype=torch.bfloat16):
        out = torch.mm(a.to(D), b.to(D))
    ref = torch.mm(a.bfloat16(), b.bfloat16())
    torch.testing.assert_close(out.cpu().float(), ref.float(), atol=0.1, rtol=0.02)


def _scaler_run(inject_inf):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4).to(D)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    scaler = torch.amp.GradScaler("ocl", init_scale=1024.0)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    loss = model(torch.randn(3, 8, device=D)).sum()
    scaler.scale(loss).backward()
    if inject_inf:
        model.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    after = [p.detach().cpu() for p in model.parameters()]
    return before, after, scaler.get_scale()


def test_grad_scaler_skips_inf_step_and_halves_scale():
    before, after, scale = _scaler_run(inject_inf=True)
    assert scale == 512.0
    for b, a in zip(before, after):
        assert torch.equal(b, a)


def test_grad_scaler_clean_step_updates():
    before, after, scale = _scaler_run(inject_inf=False)
    assert scale == 1024.0
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
