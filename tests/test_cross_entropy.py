"""Fused cross-entropy (csrc/ops/cross_entropy.cpp): values and input gradients against the
CPU for every option the fused kernels serve (dtypes, strides, spatial and no-batch inputs,
weights, ignore_index, label smoothing, reductions, empty batches, uint8 targets), the
dispatch paths (autograd, no_grad, inference_mode), double backward, the composite fallbacks
(probability targets, weights that require grad) and the CPU's errors for bad input."""
import pytest
import torch
import torch.nn.functional as F

from .cases import make

pytestmark = pytest.mark.skipif(not (hasattr(torch, "ocl") and torch.ocl.is_available()),
                                reason="no OpenCL device")

TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-10, 1e-10), torch.float16: (2e-3, 2e-3),
       torch.bfloat16: (1.6e-2, 1.6e-2)}


def _target(shape, C, ignore=None, seed=0, dtype=torch.int64):
    t = make(shape, torch.int64, low=0, high=C, seed=seed)
    if ignore is not None and t.numel():
        t.view(-1)[::3] = ignore
    return t.to(dtype)


def _launches(name):
    """Launches of kernel `name`, or of its serial form (CPU devices' default)."""
    counts = torch.ocl._launch_counts()
    return counts.get(name, 0) + counts.get(name + "_serial", 0)


def _check(x, t, w=None, dtype=None, grad=True, gout_seed=1, **kw):
    """Compares F.cross_entropy(x, t, w, **kw) and its input gradient on ocl and on the CPU.
    x keeps its strides on the device (a strided CPU view is rebuilt on the same layout)."""
    dtype = dtype or x.dtype
    atol, rtol = TOL[dtype]
    xd = _like_on_device(x)
    xc = x.detach().clone().requires_grad_(grad)
    xd.requires_grad_(grad)
    wd = None if w is None else w.to("ocl")
    before = _launches("ce_fwd")
    ref = F.cross_entropy(xc, t, weight=w, **kw)
    out = F.cross_entropy(xd, t.to("ocl"), weight=wd, **kw)
    if x.numel():
        assert _launches("ce_fwd") == before + 1, "the fused forward did not run"
    torch.testing.assert_close(out.cpu(), ref.detach(), atol=atol, rtol=rtol, equal_nan=True)
    if grad:
        g = torch.randn(ref.shape, generator=torch.Generator().manual_seed(gout_seed), dtype=torch.float64).to(dtype)
        (gc,) = torch.autograd.grad(ref, xc, g)
        (gd,) = torch.autograd.grad(out, xd, g.to("ocl"))
        assert gd.shape == gc.shape and gd.dtype == gc.dtype
        torch.testing.assert_close(gd.cpu(), gc, atol=atol * 5, rtol=rtol * 5, equal_nan=True)


def _like_on_device(x):
    """x's values on ocl with x's sizes, strides and storage offset (a leaf when x is dense)."""
    if x.is_contiguous():
        return x.detach().to("ocl")
    n = x.untyped_storage().nbytes() // x.element_size()
    base = torch.as_strided(x.detach(), (n,), (1,), 0).to("ocl")
    return base.as_strided(x.size(), x.stride(), x.storage_offset()).detach()


@pytest.fixture(params=["SERIAL=0", "SERIAL=1"], ids=["teams", "serial"])
def kernels(request):
    """Runs a test with the team kernels (GPUs' default) and with the serial ones (CPU devices')."""
    import torch_ocl._C as C

    C._tuning_set(0, "cross_entropy/rows", request.param)
    yield request.param
    C._tuning_set(0, "cross_entropy/rows", "")


both_kernels = pytest.mark.usefixtures("kernels")


@both_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_options(dtype, reduction):
    w = make((7,), dtype, low=0.2, high=2.0, seed=5)
    x = make((9, 7), dtype)
    _check(x, _target((9,), 7), reduction=reduction)
    _check(x, _target((9,), 7, ignore=-100), w, reduction=reduction)
    _check(x, _target((9,), 7, ignore=3), reduction=reduction, ignore_index=3, label_smoothing=0.2)
    _check(x, _target((9,), 7, ignore=-100), w, reduction=reduction, label_smoothing=0.15)


@both_kernels
@pytest.mark.parametrize("C", [1, 3, 1000, 8193])
def test_class_counts(C):
    x = make((5, C), torch.float32, low=-8, high=8)
    _check(x, _target((5,), C, ignore=-100))
    _check(x, _target((5,), C), reduction="none", label_smoothing=0.3)
    if C % 4 == 0:  # the float4 path with weights
        _check(x, _target((5,), C), make((C,), torch.float32, low=0.5, high=1.5), label_smoothing=0.1)


@both_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_vector_rows(dtype):
    # C % 4 == 0 with rows aligned to 4 elements (vector loads and stores), and a row offset
    # that is not (scalar path) from the same data.
    x = make((6, 68), dtype)
    t = _target((6,), 64)
    _check(x[:, 4:], t, label_smoothing=0.1)
    _check(x[:, 1:65], t, reduction="none")
    if dtype == torch.float32:
        _check(make((3, 1024), dtype, low=-30, high=30), _target((3,), 1024, ignore=-100), reduction="sum")


@both_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("C", [9, 65])
def test_rows_at_any_alignment(dtype, C):
    # Rows of C % 8 != 0 elements start at every alignment, ignored rows (zeroed gradients)
    # among them: no 8-wide load or store may assume a vector-aligned address (built with
    # PoCL's optimizer: test_optimized_rows_at_any_alignment).
    x = make((7, C), dtype)
    _check(x, _target((7,), C, ignore=-100))
    _check(x, _target((7,), C, ignore=-100), reduction="none", label_smoothing=0.1)


OPTIMIZED_ALIGNMENT_CHECK = r"""
import torch, torch.nn.functional as F
g = torch.Generator().manual_seed(0)

def check(fn, inputs, dtype):
    # ocl in `dtype` against the CPU in float32 on the same (rounded) inputs
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=3e-2, rtol=2e-2)
    ref_in = [v.float().requires_grad_() if v.is_floating_point() else v for v in inputs]
    dev_in = [v.to("ocl").requires_grad_(v.is_floating_point()) for v in inputs]
    ref, out = fn(*ref_in), fn(*dev_in)
    gy = torch.randn(ref.shape, generator=g).to(dtype)
    diff_ref = [v for v in ref_in if v.requires_grad]
    diff_dev = [v for v in dev_in if v.requires_grad]
    gc, gd = torch.autograd.grad(ref, diff_ref, gy.float()), torch.autograd.grad(out, diff_dev, gy.to("ocl"))
    torch.testing.assert_close(out.cpu().float(), ref.detach(), **tol)
    for u, r in zip(gd, gc):
        torch.testing.assert_close(u.cpu().float(), r, **tol)

for dtype in (torch.float16, torch.bfloat16, torch.float32):
    for C in (9, 65):
        x = torch.randn(7, C, generator=g).to(dtype)
        t = torch.randint(0, C, (7,), generator=g)
        t[::3] = -100
        for red in ("mean", "none"):
            check(lambda v, tt: F.cross_entropy(v, tt, reduction=red), [x, t], dtype)
        w = torch.randn(C, generator=g).to(dtype)  # LayerNorm and RMSNorm rows at every alignment
        check(lambda v, ww: F.layer_norm(v, (C,), ww, ww), [x, w], dtype)
        check(lambda v, ww: F.rms_norm(v, (C,), ww), [x, w], dtype)
print("ok")
"""


def test_optimized_rows_at_any_alignment():
    # The suite builds PoCL programs unoptimized (conftest); PoCL's optimizer is what turned a
    # vstore_half8 of a zero row into an aligned vector store that faulted. The serial row
    # kernels' 8-wide loads and stores at rows of every alignment, optimized.
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCH_OCL_BUILD_OPTIONS="")
    r = subprocess.run([sys.executable, "-c", OPTIMIZED_ALIGNMENT_CHECK], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr[-3000:]


@both_kernels
def test_strided_inputs():
    t = _target((6,), 5, ignore=-100)
    _check(make((5, 6), torch.float32).t(), t)  # transposed: rows are the unit-stride direction
    _check(make((6, 5), torch.float32, noncontig=True), t, label_smoothing=0.1)
    _check(make((12, 5), torch.float32)[::2], t, reduction="none")
    # spatial: (N, C, d1, ...), class dim 1
    _check(make((2, 4, 3, 5), torch.float32), _target((2, 3, 5), 4, ignore=-100), label_smoothing=0.1)
    _check(make((2, 4, 3, 5), torch.float32).contiguous(memory_format=torch.channels_last),
           _target((2, 3, 5), 4), reduction="none")
    _check(make((2, 5, 4, 3), torch.float32).permute(0, 3, 1, 2), _target((2, 5, 4), 3), reduction="sum")
    _check(make((2, 3, 7), torch.float64), _target((2, 7), 3, ignore=1), ignore_index=1, reduction="none")
    _check(make((2, 3, 2, 2, 3), torch.float32), _target((2, 2, 2, 3), 3), make((3,), torch.float32, low=0.5, high=2))


@both_kernels
def test_no_batch_dim():
    for r in ("mean", "sum", "none"):
        _check(make((6,), torch.float32), torch.tensor(4), reduction=r, label_smoothing=0.1)
        _check(make((6,), torch.float32), torch.tensor(-100), reduction=r)


@both_kernels
def test_uint8_target():
    _check(make((5, 6), torch.float32), _target((5,), 6, dtype=torch.uint8), reduction="none")
    _check(make((5, 6), torch.float32), _target((5,), 6, dtype=torch.uint8), label_smoothing=0.2)


@both_kernels
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_empty_batch(reduction):
    _check(make((0, 5), torch.float32), _target((0,), 5), reduction=reduction)
    _check(make((0, 5, 3), torch.float32), _target((0, 3), 5), reduction=reduction, label_smoothing=0.1)
    _check(make((2, 5, 0), torch.float32), _target((2, 0), 5), reduction=reduction)


@both_kernels
def test_all_ignored():
    x = make((4, 3), torch.float32)
    t = torch.full((4,), -100)
    for r in ("mean", "sum", "none"):
        _check(x, t, reduction=r)
        _check(x, t, reduction=r, label_smoothing=0.1)


@both_kernels
def test_many_rows_reduction_is_deterministic():
    # Thousands of work-groups: the last one to finish adds the partials in a fixed order.
    x = make((3000, 37), torch.float32).to("ocl")
    t = _target((3000,), 37, ignore=-100).to("ocl")
    a = F.cross_entropy(x, t, label_smoothing=0.1)
    b = F.cross_entropy(x, t, label_smoothing=0.1)
    assert torch.equal(a.cpu(), b.cpu())
    _check(x.cpu(), t.cpu(), make((37,), torch.float32, low=0.5, high=2), label_smoothing=0.1)
    _check(x.cpu(), t.cpu(), reduction="sum")


@both_kernels
def test_extreme_values():
    x = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [1e30, -1e30, 0.0], [float("nan"), 0.0, 1.0]])
    _check(x, torch.tensor([0, 1, 0, 2]), reduction="none", grad=False)
    _check(x[[0, 2]], torch.tensor([0, 1]), reduction="none")
    _check(x[[0, 2]], torch.tensor([2, -100]), label_smoothing=0.1)
    # The same in rows of 8-element vectors and a tail: -inf, NaN and +inf in either part.
    x = make((6, 19), torch.float32, low=-5, high=5)
    x[0, 3], x[0, 17] = float("-inf"), float("-inf")
    x[1] = float("-inf")
    x[2, 5], x[3, 18], x[4, 9] = float("nan"), float("nan"), float("inf")
    x[5, 1], x[5, 10] = 1e30, -1e30
    _check(x, torch.tensor([0, 1, 2, 3, 4, 10]), reduction="none", grad=False)
    _check(x[[0, 5]], torch.tensor([17, 1]), reduction="none", label_smoothing=0.1)
    _check(x[[0, 5]], torch.tensor([16, -100]), label_smoothing=0.1)


@both_kernels
def test_out_of_range_target_raises_at_sync():
    x = make((4, 3), torch.float32).to("ocl")
    for t in ([0, 3, 1, 2], [0, -1, 1, 2]):
        with pytest.raises(IndexError):
            F.cross_entropy(x, torch.tensor(t, device="ocl"))
            torch.ocl.synchronize()
    # the device stays usable
    assert torch.isfinite(F.cross_entropy(x, torch.tensor([0, 1, 2, 0], device="ocl"))).item()


@pytest.mark.parametrize("make_args", [
    lambda: (torch.randn(3, 4), torch.tensor([0, 1])),                              # batch mismatch
    lambda: (torch.randn(3, 4), torch.tensor([0, 1, 1], dtype=torch.int32)),        # target dtype
    lambda: (torch.randn(3, 4), torch.tensor([0, 1, 1]), torch.ones(3)),            # weight size
    lambda: (torch.randn(3, 4), torch.tensor([0, 1, 1]), torch.ones(4, dtype=torch.float64)),  # weight dtype
    lambda: (torch.randn(3, 4, 5), torch.tensor([0, 1, 1])),                        # spatial target
    lambda: (torch.randn(3, 4, 5, 6), torch.zeros(3, 5, 7, dtype=torch.long)),
    lambda: (torch.randn(()), torch.zeros((), dtype=torch.long)),                   # 0-dim input
    lambda: (torch.randn(3, 4), torch.tensor([0.0, 1.0, 1.0])),                    # float class targets
])
def test_bad_input_raises_like_cpu(make_args):
    args = make_args()
    with pytest.raises(Exception) as cpu:
        F.cross_entropy(*args)
    with pytest.raises(Exception) as dev:
        F.cross_entropy(*(a.to("ocl") for a in args))
        torch.ocl.synchronize()
    assert dev.type is cpu.type, f"CPU raised {cpu.type.__name__}, ocl raised {dev.type.__name__}: {dev.value}"


def test_label_smoothing_range_like_cpu():
    x, t = torch.randn(3, 4), torch.tensor([0, 1, 2])
    with pytest.raises(RuntimeError):
        F.cross_entropy(x.to("ocl"), t.to("ocl"), label_smoothing=1.5)
    # the CPU ignores a negative label smoothing for class targets
    _check(x, t, label_smoothing=-0.5)
    _check(x, t, label_smoothing=1.0)


def test_dispatch_paths():
    x = make((6, 5), torch.float32)
    t = _target((6,), 5, ignore=-100)
    ref = F.cross_entropy(x, t, label_smoothing=0.1)
    xd, td = x.to("ocl"), t.to("ocl")
    torch.ocl._reset_launch_counts()
    with torch.no_grad():
        a = F.cross_entropy(xd.requires_grad_(), td, label_smoothing=0.1)
    with torch.inference_mode():
        b = F.cross_entropy(x.to("ocl"), td, label_smoothing=0.1)
        assert b.is_inference()
    assert _launches("ce_fwd") == 2 and _launches("softmax_fwd") == 0, torch.ocl._launch_counts()
    assert a.grad_fn is None and not a.requires_grad
    torch.testing.assert_close(a.cpu(), ref)
    torch.testing.assert_close(b.cpu(), ref)
    c = F.cross_entropy(xd, td)
    assert "NllLoss" not in type(c.grad_fn).__name__


def test_inference_mode_fallback_to_composite():
    # probability targets under inference_mode: the PrivateUse1 kernel runs ATen's composite.
    x, p = make((4, 5), torch.float32), torch.softmax(make((4, 5), torch.float32, seed=1), 1)
    with torch.inference_mode():
        out = F.cross_entropy(x.to("ocl"), p.to("ocl"), label_smoothing=0.1)
    torch.testing.assert_close(out.cpu(), F.cross_entropy(x, p, label_smoothing=0.1))


def test_double_backward():
    # float32: the composite's programs are the ones the rest of the suite builds anyway.
    x = make((5, 6), torch.float32)
    t = _target((5,), 6, ignore=-100)
    w = make((6,), torch.float32, low=0.5, high=2)
    for kw in ({}, {"weight": w, "label_smoothing": 0.2, "reduction": "sum"}, {"reduction": "none"}):
        res = []
        for dev in ("cpu", "ocl"):
            xd = x.to(dev).requires_grad_()
            kwd = {k: (v.to(dev) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
            loss = F.cross_entropy(xd, t.to(dev), **kwd)
            gout = torch.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).reshape(loss.shape).to(dev)
            (g,) = torch.autograd.grad(loss, xd, gout, create_graph=True)
            (gg,) = torch.autograd.grad((g * g.detach().cos()).sum(), xd)
            res.append((loss.detach().cpu(), g.detach().cpu(), gg.cpu()))
        for a, b in zip(res[1], res[0]):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_probability_targets_and_weight_grad_use_composite():
    x = make((4, 5), torch.float32)
    p = torch.softmax(make((4, 5), torch.float32, seed=1), 1)
    w = make((5,), torch.float32, low=0.5, high=2)
    grads = []
    for dev in ("cpu", "ocl"):
        xd = x.to(dev).requires_grad_()
        wd = w.to(dev).requires_grad_()
        loss = F.cross_entropy(xd, p.to(dev), weight=wd, label_smoothing=0.1)
        grads.append((loss.detach().cpu(),) + tuple(g.cpu() for g in torch.autograd.grad(loss, (xd, wd))))
    for a, b in zip(grads[1], grads[0]):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    # class targets with a weight that requires grad: the CPU's nll_loss refuses it; so does ocl.
    t = _target((4,), 5)
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="not differentiable"):
            F.cross_entropy(x.to(dev).requires_grad_(), t.to(dev), weight=w.to(dev).requires_grad_())


def test_saved_input_modified_in_place_is_detected():
    x = make((3, 4), torch.float32).to("ocl").requires_grad_()
    y = x * 1
    loss = F.cross_entropy(y, torch.tensor([0, 1, 2], device="ocl"))
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.fixture
def rows_mode():
    """Sets the cross-entropy row configuration (tuning entry "cross_entropy/rows") of the team
    kernels (SERIAL=0, which CPU devices otherwise replace by the serial ones) for one test."""
    import torch_ocl._C as C

    yield lambda text: C._tuning_set(0, "cross_entropy/rows", f"{text} SERIAL=0")
    C._tuning_set(0, "cross_entropy/rows", "")


@pytest.mark.parametrize("mode", ["", "ROWRED=emu", "VEC=0 ITEMS=4"])
def test_row_modes(rows_mode, mode):
    # emu: the warp-shuffle team reductions (NVIDIA's default) emulated through local memory;
    # VEC=0 ITEMS=4: the scalar loads where the vector path would run, in wider teams.
    rows_mode(mode)
    w = make((1024,), torch.float32, low=0.5, high=2)
    for C in (3, 40, 1024):  # teams of 1, 4 and 64 work-items
        x = make((7, C), torch.float32, low=-10, high=10)
        _check(x, _target((7,), C, ignore=-100), None if C != 1024 else w, label_smoothing=0.1)
        _check(x, _target((7,), C), reduction="none")
    _check(make((3, 8192), torch.float32), _target((3,), 8192), reduction="sum")  # a team of 256
    if mode != "ROWRED=emu":  # (the emulation's reductions do not depend on the dtype: one program less)
        _check(make((2, 64), torch.bfloat16), _target((2,), 64), dtype=torch.bfloat16, label_smoothing=0.2)
    _check(make((2, 5, 3, 4), torch.float32), _target((2, 3, 4), 5))  # spatial rows: the local tree
    _check(make((600, 9), torch.float32), _target((600,), 9, ignore=-100))  # several groups


@pytest.mark.parametrize("mode", ["FWD_TEAM=32", "FWD_TEAM=32 ROWRED=emu ITEMS=8"])
def test_streamed_forward(rows_mode, mode):
    # Rows longer than FWD_TEAM * ITEMS stream through their team once with an online (max, sum):
    # on GPUs the forward's default for many rows of a large vocabulary.
    rows_mode(mode)
    for C in (1028, 4096, 2051):  # vector steps and a remainder; vector steps only; scalar loads
        w = make((C,), torch.float32, low=0.5, high=2, seed=C)
        x = make((9, C), torch.float32, low=-20, high=20)
        _check(x, _target((9,), C, ignore=-100), w, label_smoothing=0.1)
        _check(x, _target((9,), C), reduction="none")
    # A maximum that grows in every step (a rescale each time), -inf entries, and rows whose
    # scores are all -inf (NaN, as on the CPU) or hold a NaN or +inf.
    x = torch.arange(4096, dtype=torch.float32).repeat(5, 1) / 64
    x[1, ::3] = float("-inf")
    x[2] = float("-inf")
    x[3, 2000] = float("nan")
    x[4, 3000] = float("inf")
    _check(x, torch.tensor([5, 7, 0, 1, 2]), reduction="none", grad=False)
    _check(x[:2], torch.tensor([4095, 1]), label_smoothing=0.2)
