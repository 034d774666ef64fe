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


# ---- multi-tensor launches: many tensors, launch counts, misaligned views ----------------------
def _mixed_shapes(n):
    """n shapes cycling through empty, 0-dim, odd, multi-block and multiple-of-4 sizes."""
    cycle = [(0,), (), (7,), (4097,), (5, 3), (1,), (64,), (33, 65), (2, 0), (4,), (9,), (8195,)]
    return [cycle[i % len(cycle)] for i in range(n)]


def _launches(fn, *names):
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    fn()
    torch.ocl.synchronize()
    counts = torch.ocl._launch_counts()
    return [counts.get(n, 0) for n in names]


# One launch takes at least 24 tensors of a one-list kernel on any device (the spec's minimum
# parameter space, 1024 bytes, holds 24 slots; 16 of a two-list kernel), and 64+ on NVIDIA.
def test_foreach_launch_counts_50_tensors():
    xs = [torch.randn(s).to(D) for s in [(64,)] * 50]
    (n,) = _launches(lambda: torch._foreach_add_(xs, 1.0), "foreach_apply")
    assert 1 <= n <= 3, n
    (n,) = _launches(lambda: torch._foreach_mul_(xs, torch.tensor(0.5, device=D)), "foreach_apply")
    assert 1 <= n <= 3, n
    (n,) = _launches(lambda: torch._foreach_norm(xs), "foreach_norm")  # two lists (x, out): 16+ per launch
    assert 1 <= n <= 4, n
    (n,) = _launches(lambda: torch.stack(torch._foreach_norm(xs)), "cat_fwd")
    assert 1 <= n <= 2, n


def test_fused_adamw_launch_count_50_params():
    ps = [torch.randn(64, device=D) for _ in range(50)]
    state = [[torch.zeros_like(p) for p in ps] for _ in range(3)]
    steps = [torch.tensor(1.0, device=D) for _ in ps]
    (n,) = _launches(lambda: torch._fused_adamw_(ps, *state, [], steps, lr=1e-3, beta1=0.9, beta2=0.99,
                                                 weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False),
                     "fused_adam")
    assert 1 <= n <= 7, n  # 8 parameters per launch where the parameter space is 1024 bytes, 32 on NVIDIA


@pytest.mark.parametrize("n", [5, 300])
def test_foreach_many_tensors_match_cpu(n):
    shapes = _mixed_shapes(n)
    g = torch.Generator().manual_seed(n)
    xs, ys, ws = ([torch.randn(s, generator=g) for s in shapes] for _ in range(3))
    d = lambda ts: [t.to(D) for t in ts]  # noqa: E731
    for got, ref in [(torch._foreach_lerp(d(xs), d(ys), d(ws)), torch._foreach_lerp(xs, ys, ws)),
                     (torch._foreach_norm(d(xs)), torch._foreach_norm(xs)),
                     (torch._foreach_addcmul(d(xs), d(ys), d(ws), 0.5), torch._foreach_addcmul(xs, ys, ws, 0.5))]:
        for a, e in zip(got, ref):
            torch.testing.assert_close(a.cpu(), e, rtol=1e-5, atol=1e-5)
    xd = d(xs)
    torch._foreach_mul_(xd, [0.5 + i for i in range(n)])
    for a, e in zip(xd, torch._foreach_mul(xs, [0.5 + i for i in range(n)])):
        torch.testing.assert_close(a.cpu(), e)


@pytest.mark.parametrize("n", [3, 300])
def test_cat_stack_many_inputs_match_cpu(n):
    g = torch.Generator().manual_seed(n)
    scalars = [torch.randn((), generator=g) for _ in range(n)]
    torch.testing.assert_close(torch.stack([s.to(D) for s in scalars]).cpu(), torch.stack(scalars))
    rows = [torch.randn(3, i % 5, 2, generator=g) for i in range(n)]  # some empty along dim 1
    torch.testing.assert_close(torch.cat([r.to(D) for r in rows], 1).cpu(), torch.cat(rows, 1))
    ints = [torch.randint(0, 100, (i % 4,), generator=g, dtype=torch.int64) for i in range(n)]
    torch.testing.assert_close(torch.cat([t.to(D) for t in ints]).cpu(), torch.cat(ints))


def _adam_state(shapes, dtype, offsets, seed):
    """Params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs as views at element offset
    offsets[k] (list k) into a larger buffer, so some lists are not 16-byte aligned."""
    g = torch.Generator().manual_seed(seed)
    lists = []
    for k, off in enumerate(offsets):
        ts = []
        for s in shapes:
            n = int(torch.Size(s).numel())
            base = torch.rand(n + off, generator=g, dtype=torch.float64).to(dtype) + (0 if k < 3 else 0.1)
            ts.append(base[off:].view(s))
        lists.append(ts)
    return lists


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("offsets", [(0, 0, 0, 0, 0), (1, 1, 1, 1, 1), (0, 3, 0, 0, 2), (2, 2, 2, 2, 0)])
@pytest.mark.parametrize("flags", ["plain", "amsgrad+maximize", "adam+grad_scale", "tensor_lr+found_inf0",
                                   "grad_scale+found_inf1"])
def test_fused_adam_many_misaligned_match_cpu(dtype, offsets, flags):
    """40 parameters of mixed sizes (more than one launch on a 1024-byte parameter space) whose
    lists sit at element offsets `offsets` (params, grads, exp_avgs, exp_avg_sqs, max): the
    float4 path where all are 16-byte aligned, the scalar path and tails elsewhere."""
    shapes = _mixed_shapes(40)
    amsgrad = "amsgrad" in flags
    op = torch.ops.aten._fused_adam_ if flags.startswith("adam") else torch.ops.aten._fused_adamw_
    kw = dict(lr=1e-2, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8, amsgrad=amsgrad, maximize="maximize" in flags)
    if "grad_scale" in flags:
        kw.update(grad_scale=torch.tensor(4.0), found_inf=torch.tensor(0.0))
    if "found_inf" in flags:
        kw.update(found_inf=torch.tensor(float(flags[-1])))  # 1: the step is skipped
    results = {}
    for dev in ("cpu", D):
        lists = _adam_state(shapes, dtype, offsets, 7)
        if dev == D:
            lists = [[_offset_copy(t, off) for t in ts] for ts, off in zip(lists, offsets)]
        p, gr, m, v, vm = lists
        vm = vm if amsgrad else []
        steps = [torch.tensor(float(3 + i), device=dev) for i in range(len(shapes))]
        kd = {k: (x.to(dev) if isinstance(x, torch.Tensor) else x) for k, x in kw.items()}
        if "tensor_lr" in flags:
            op.tensor_lr(p, gr, m, v, vm, steps, **dict(kd, lr=torch.tensor(1e-2, device=dev)))
        else:
            op(p, gr, m, v, vm, steps, **kd)
        results[dev] = [t.cpu() for t in p + gr + m + v + vm]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype != torch.bfloat16 else dict(rtol=2e-2, atol=1e-2)
    for a, e in zip(results[D], results["cpu"]):
        torch.testing.assert_close(a, e, **tol)


def _offset_copy(t, off):
    """t on the device as a view at element offset `off` of a larger storage."""
    base = torch.empty(t.numel() + off, dtype=t.dtype, device=D)
    out = base[off:].view(t.shape)
    out.copy_(t)
    return out
