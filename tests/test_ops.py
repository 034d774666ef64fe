"""Runs every OpCase of tests/cases.py on the device and on the CPU and compares them."""
from typing import NamedTuple

import pytest
import torch

from .cases import TOLERANCES, all_cases

DEVICE = "ocl"
CASES = all_cases()

pytestmark = pytest.mark.skipif(not (hasattr(torch, "ocl") and torch.ocl.is_available()),
                                reason="no OpenCL device")


def _params():
    for case in CASES:
        for dtype in case.dtypes:
            yield pytest.param(case, dtype, id=f"{case.name}-{str(dtype).replace('torch.', '')}")


def to_device_like(t: torch.Tensor, device, requires_grad=False):
    """The same sizes, strides and storage offset as t, on `device`. Returns (view, base)
    where base is the flat leaf (for gradients)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.as_strided(t.detach(), (n,), (1,), 0).clone()
    base = flat.to(device)
    if requires_grad:
        base.requires_grad_(True)
    return base.as_strided(t.size(), t.stride(), t.storage_offset()), base


def convert(obj, device, grad, leaves):
    if isinstance(obj, torch.Tensor):
        g = grad and obj.dtype.is_floating_point
        view, base = to_device_like(obj, device, g)
        if g:
            leaves.append(base)
        return view
    if isinstance(obj, (list, tuple)):
        return type(obj)(convert(o, device, grad, leaves) for o in obj)
    if isinstance(obj, dict):
        return {k: convert(v, device, grad, leaves) for k, v in obj.items()}
    if isinstance(obj, torch.device) and device != "cpu":
        return torch.device(device)
    return obj


def flatten(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [x for o in obj for x in flatten(o)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in flatten(v)]
    return [obj]


def compare(actual, expected, atol, rtol, what):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{what}: expected a tensor, got {type(actual)}"
        assert actual.device.type == DEVICE or expected.device.type != "cpu" or actual.device.type == "cpu", what
        a = actual.detach().cpu()
        assert a.shape == expected.shape, f"{what}: shape {tuple(a.shape)} != {tuple(expected.shape)}"
        assert a.dtype == expected.dtype, f"{what}: dtype {a.dtype} != {expected.dtype}"
        torch.testing.assert_close(a, expected.detach(), atol=atol, rtol=rtol, equal_nan=True, msg=lambda m: f"{what}: {m}")
    elif isinstance(expected, float):
        assert abs(actual - expected) <= atol + rtol * abs(expected), f"{what}: {actual} != {expected}"
    else:
        assert actual == expected, f"{what}: {actual} != {expected}"


class Raised(NamedTuple):
    """What run() returns in place of outputs or gradients when the call raised."""
    type: type
    message: str


def run(case, sample, device, dtype):
    leaves = []
    args = convert(sample.args, device, case.grad, leaves)
    kwargs = convert(sample.kwargs, device, case.grad, leaves)
    try:
        out = case.fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared against the CPU's behaviour
        return Raised(type(e), str(e)), None, None
    outs = flatten(out)
    grads = None
    if case.grad and leaves:
        diff = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad and o.dtype.is_floating_point]
        if diff:
            g = torch.Generator().manual_seed(1)
            gouts = [torch.randn(o.shape, generator=g, dtype=o.dtype).to(o.device) for o in diff]
            try:
                grads = torch.autograd.grad(diff, leaves, gouts, allow_unused=True)
            except RuntimeError as e:  # e.g. a torch without this op's derivative: the CPU raises too
                grads = Raised(type(e), str(e))
    if case.canonicalize is not None:
        out = case.canonicalize(out)
        outs = flatten(out)
    return outs, flatten(args) + flatten(kwargs), grads


@pytest.mark.parametrize("case,dtype", list(_params()))
def test_op(case, dtype):
    atol, rtol = TOLERANCES.get(dtype, (0, 0))
    atol = case.atol if case.atol is not None else atol
    rtol = case.rtol if case.rtol is not None else rtol
    for i, sample in enumerate(case.samples(dtype)):
        what = f"{case.name}[{dtype}] sample {i} {sample.tag}"
        exp_outs, exp_args, exp_grads = run(case, sample, "cpu", dtype)
        before = torch.ocl.fallback_counts()
        act_outs, act_args, act_grads = run(case, sample, DEVICE, dtype)
        fell_back = {k: v for k, v in torch.ocl.fallback_counts().items() if v != before.get(k, 0)}
        # Same guarantee as running the suite with TORCH_OCL_FALLBACK=error: every op a case
        # reaches (forward and backward) runs natively.
        assert not fell_back, f"{what}: ops fell back to the CPU: {sorted(fell_back)}"
        if isinstance(exp_outs, Raised):
            assert isinstance(act_outs, Raised), f"{what}: CPU raised {exp_outs.type.__name__}, ocl did not"
            assert issubclass(act_outs.type, exp_outs.type) or issubclass(exp_outs.type, act_outs.type), \
                f"{what}: CPU raised {exp_outs.type.__name__}, ocl raised {act_outs.type.__name__}"
            continue
        assert not isinstance(act_outs, Raised), \
            f"{what}: ocl raised {act_outs.type.__name__} but the CPU did not: {act_outs.message}"
        assert len(act_outs) == len(exp_outs), f"{what}: {len(act_outs)} outputs, expected {len(exp_outs)}"
        for j, (a, e) in enumerate(zip(act_outs, exp_outs)):
            if j in case.skip_outputs:
                continue
            if case.values_unspecified and isinstance(e, torch.Tensor):
                assert a.shape == e.shape and a.dtype == e.dtype, f"{what}: output {j} shape/dtype"
                continue
            compare(a, e, atol, rtol, f"{what}: output {j}")
        for j, (a, e) in enumerate(zip(act_args, exp_args)):
            if isinstance(e, torch.Tensor) and not case.values_unspecified:
                compare(a, e, atol, rtol, f"{what}: argument {j} after the call")
        if isinstance(exp_grads, Raised):
            assert isinstance(act_grads, Raised), f"{what}: the CPU's backward raised ({exp_grads.message}), ocl's did not"
            continue
        assert not isinstance(act_grads, Raised), f"{what}: ocl's backward raised but the CPU's did not: {act_grads.message}"
        if exp_grads is not None:
            assert act_grads is not None, f"{what}: no gradients on ocl"
            for j, (a, e) in enumerate(zip(act_grads, exp_grads)):
                if e is None:
                    continue
                assert a is not None, f"{what}: gradient {j} missing on ocl"
                compare(a, e, atol * 10, rtol * 10, f"{what}: gradient of input {j}")
