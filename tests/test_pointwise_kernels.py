"""The generated pointwise kernels (csrc/aten/Pointwise.cpp) by the layout that selects them:
pw_vec for dense aligned operands (on CPU devices with the 8-wide vector form of GELU, its
backward, erf and erfc), pw_contig, pw_rows on CPU devices (a work-item per row of the
innermost dimension) and pw_strided32 elsewhere. Each against the CPU over lengths around the
vector widths, views with zero, transposed and sliced strides, in-place and out= forms."""
import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl

pytestmark = requires_ocl

DEV = "ocl"
IS_CPU_DEVICE = torch.ocl.get_device_properties(0).type == "cpu" if torch.ocl.is_available() else False


def launched(fn):
    torch.ocl.synchronize()
    torch.ocl._reset_launch_counts()
    out = fn()
    torch.ocl.synchronize()
    return out, {k for k, v in torch.ocl._launch_counts().items() if v}


def randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype) * 3


VECTOR_FORMS = {
    "gelu": lambda x, y: F.gelu(x),
    "gelu_backward": lambda x, y: torch.ops.aten.gelu_backward(y, x),
    "erf": lambda x, y: torch.erf(x),
    "erfc": lambda x, y: torch.erfc(x),
}


@pytest.mark.parametrize("name", list(VECTOR_FORMS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_vector_forms_match_cpu(name, dtype):
    # Lengths below, at and around the 8-wide vectors (the tail runs the scalar form) and the
    # work-items' groups of four vectors (the last n / 8 % 4 vectors go one by one), and values
    # out to where erf saturates.
    fn = VECTOR_FORMS[name]
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    for n in (1, 7, 8, 9, 32, 63, 1037, 4099):
        x, y = randn(n, dtype=dtype), randn(n, dtype=dtype, seed=1)
        x[: min(n, 3)] = torch.tensor([0.0, -9.0, 9.0], dtype=dtype)[: min(n, 3)]
        got, kernels = launched(lambda: fn(x.to(DEV), y.to(DEV)))
        torch.testing.assert_close(got.cpu(), fn(x, y), atol=tol, rtol=tol)
        if n >= 4:
            assert kernels == {"pw_vec"}, kernels


def test_vector_form_keeps_lanes_for_other_dtypes_and_layouts():
    # float16 storage (float compute), a sliced view and a broadcast operand take the other kernels.
    x = randn(1037)
    torch.testing.assert_close(F.gelu(x.half().to(DEV)).cpu().float(), F.gelu(x.half().float()), atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(F.gelu(x.to(DEV)[1::2]).cpu(), F.gelu(x[1::2]), atol=1e-6, rtol=1e-6)
    g = torch.full((1,), 2.0)
    got = torch.ops.aten.gelu_backward(g.to(DEV).expand(1037), x.to(DEV))
    torch.testing.assert_close(got.cpu(), torch.ops.aten.gelu_backward(g.expand(1037), x), atol=1e-6, rtol=1e-6)


def test_gelu_out_and_inplace():
    x = randn(3, 257)
    out = torch.empty(3, 257, device=DEV)
    torch.ops.aten.gelu.out(x.to(DEV), out=out)
    torch.testing.assert_close(out.cpu(), F.gelu(x), atol=1e-6, rtol=1e-6)
    y = x.to(DEV)
    torch.erf_(y)
    torch.testing.assert_close(y.cpu(), torch.erf(x), atol=1e-6, rtol=1e-6)


# (label, shape, view) views that are not dense: the row kernel on CPU devices where the
# innermost dimension has at least 4 elements, the per-element kernel otherwise.
STRIDED = [
    ("head transpose", (8, 40, 3, 4, 32), lambda t: t[:, :, 0].transpose(1, 2)),
    ("matrix transpose", (37, 45), lambda t: t.t()),
    ("sliced rows", (9, 70), lambda t: t[:, 3:60]),
    ("step slices", (6, 11, 20), lambda t: t[::2, :, 1::3]),
    ("short inner", (300, 3, 5), lambda t: t[:, :, :3]),
    ("permute 4-d", (3, 5, 7, 9), lambda t: t.permute(2, 0, 3, 1)),
]


@pytest.mark.parametrize("label,shape,view", STRIDED, ids=[s[0] for s in STRIDED])
def test_strided_copies_and_math(label, shape, view):
    x = randn(*shape)
    v = view(x)
    got, kernels = launched(lambda: view(x.to(DEV)).contiguous())
    assert torch.equal(got.cpu(), v.contiguous())
    if IS_CPU_DEVICE:
        assert kernels <= {"pw_rows", "pw_strided32"}, kernels
    # Math with a broadcast (zero-stride) operand, and an in-place update through the view.
    b = randn(v.shape[-1], seed=2)
    torch.testing.assert_close((view(x.to(DEV)) * b.to(DEV) + 1).cpu(), v * b + 1, atol=1e-6, rtol=1e-6)
    base = x.to(DEV)
    view(base).mul_(2).add_(b.to(DEV))
    ref = x.clone()
    view(ref).mul_(2).add_(b)
    assert torch.equal(base.cpu(), ref)


def test_row_kernel_on_cpu_devices():
    # GPTMini's q/k/v copies out of the fused projection: one pw_rows launch on a CPU device
    # (the per-element kernel divides by every dimension for every element).
    x = torch.randn(2, 16, 3, 4, 8, device=DEV)
    _, kernels = launched(lambda: x[:, :, 1].transpose(1, 2).contiguous())
    assert kernels == ({"pw_rows"} if IS_CPU_DEVICE else {"pw_strided32"}), kernels
    # An innermost dimension of 2 or 3 elements stays with the per-element kernel.
    y = torch.randn(50, 3, 4, device=DEV)
    _, kernels = launched(lambda: y[:, :, :3].contiguous())
    assert kernels == {"pw_strided32"}, kernels


def test_empty_and_zero_dim():
    assert F.gelu(torch.empty(0, 5, device=DEV)).shape == (0, 5)
    x = torch.tensor(0.7)
    torch.testing.assert_close(F.gelu(x.to(DEV)).cpu(), F.gelu(x))
    torch.testing.assert_close(torch.erf(x.to(DEV)).cpu(), torch.erf(x))
