"""Optimizers on the device match the CPU: AdamW fused / foreach / default paths over 20
steps (amsgrad, maximize, weight decay, tensor lr), clip_grad_norm_, and GradScaler."""
import copy

import pytest
import torch

from .conftest import requires_ocl

pytestmark = requires_ocl
D = "ocl"


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 33), torch.nn.GELU(), torch.nn.Linear(33, 5))


def _grads(step, params):
    g = torch.Generator().manual_seed(step)
    return [torch.randn(p.shape, generator=g) for p in params]


def _run(device, steps, opt_kwargs, clip=None):
    model = copy.deepcopy(_model()).to(device)
    params = list(model.parameters())
    kw = dict(opt_kwargs)
    if isinstance(kw.get("lr"), torch.Tensor) and kw.get("fused"):
        kw["lr"] = kw["lr"].to(device)
    opt = torch.optim.AdamW(params, **kw)
    norms = []
    for s in range(steps):
        for p, g in zip(params, _grads(s, params)):
            p.grad = g.to(device)
        if clip is not None:
            norms.append(float(torch.nn.utils.clip_grad_norm_(params, clip)))
        opt.step()
    return [p.detach().cpu() for p in params], norms


CONFIGS = {
    "plain": dict(lr=1e-2),
    "weight_decay": dict(lr=1e-2, weight_decay=0.1, betas=(0.8, 0.95)),
    "amsgrad": dict(lr=1e-2, amsgrad=True, weight_decay=0.01),
    "maximize": dict(lr=1e-2, maximize=True),
    "tensor_lr": dict(lr=torch.tensor(3e-3), weight_decay=0.05),
}


@pytest.mark.parametrize("path", ["fused", "foreach", "default"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_adamw_matches_cpu(path, config):
    kw = dict(CONFIGS[config])
    if path == "fused":
        kw["fused"] = True
    elif path == "foreach":
        kw["foreach"] = True
        if isinstance(kw["lr"], torch.Tensor):
            pytest.skip("foreach AdamW with a tensor lr requires capturable=True")
    ref, _ = _run("cpu", 20, dict(CONFIGS[config], foreach=False))
    got, _ = _run(D, 20, kw)
    for a, e in zip(got, ref):
        torch.testing.assert_close(a, e, rtol=1e-6, atol=1e-6)


def test_fused_adamw_no_fallback():
    torch.ocl.reset_fallback_counts()
    _run(D, 2, dict(lr=1e-2, fused=True, weight_decay=0.1))
    counts = {k: v for k, v in torch.ocl.fallback_counts().items() if "adam" in k or "foreach" in k}
    assert not counts, counts


def test_clip_grad_norm_matches_cpu():
    ref, ref_norms = _run("cpu", 5, dict(lr=1e-2, foreach=False), clip=1.0)
    got, norms = _run(D, 5, dict(lr=1e-2, foreach=True), clip=1.0)
    assert norms == pytest.approx(ref_norms, rel=1e-5)
    for a, e in zip(got, ref):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fused", [True, False])
def test_grad_scaler_skips_injected_inf(fused):
    results = {}
    for device in ("cpu", D):
        model = copy.deepcopy(_model()).to(device)
        params = list(model.parameters())
        opt = torch.optim.AdamW(params, lr=1e-2, fused=fused if device == D else None,
                                foreach=None if (fused and device == D) else False)
        scaler = torch.amp.GradScaler(device, init_scale=256.0, growth_interval=2)
        scales = []
        for s in range(6):
            opt.zero_grad()
            loss = sum((p * g.to(device)).sum() for p, g in zip(params, _grads(s, params)))
            scaler.scale(loss).backward()
            if s == 2:
                params[0].grad[0, 0] = float("inf")
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        results[device] = ([p.detach().cpu() for p in params], scales)
    assert results[D][1] == results["cpu"][1]
    assert results[D][1][2] == results[D][1][1] / 2
    for a, e in zip(results[D][0], results["cpu"][0]):
        torch.testing.assert_close(a, e, rtol=1e-6, atol=1e-6)
