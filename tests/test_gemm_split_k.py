"""Split-K matrix products (csrc/ops/gemm.cpp, run_split_k): a long-K product cut into K
slices, computed as one batched product into a workspace and summed by gemm_splitk_reduce
with the alpha/beta/bias epilogue. On GPUs `auto` picks it for few-tile long-K products;
here TORCH_OCL_GEMM_SPLIT_K forces it (read once per process, hence the subprocess)."""
import os
import subprocess
import sys
import textwrap

from .conftest import requires_ocl

pytestmark = requires_ocl

SCRIPT = textwrap.dedent("""
    import torch
    torch.manual_seed(0)
    tol = dict(atol=1e-4, rtol=1e-4)

    def check(name, fn, *cpu_args):
        torch.ocl.synchronize()
        torch.ocl._reset_launch_counts()
        got = fn(*[x.to("ocl") for x in cpu_args]).cpu()
        counts = torch.ocl._launch_counts()
        assert counts.get("gemm_splitk_reduce", 0) == 1, (name, counts)
        torch.testing.assert_close(got, fn(*cpu_args), **tol)

    a, b = torch.randn(37, 1000), torch.randn(1000, 29)  # K = 1000: slices 334, 334, 332
    bias, c = torch.randn(29), torch.randn(37, 29)
    check("mm", torch.mm, a, b)
    check("mm transposed views", lambda x, y: torch.mm(y.t(), x.t()), b.t().contiguous(), a.t().contiguous())
    check("mm strided", lambda x, y: torch.mm(x[:, ::2], y[::2]), a, b)
    check("addmm bias", lambda bb, x, y: torch.addmm(bb, x, y, beta=0.5, alpha=2.0), bias, a, b)
    check("addmm matrix", lambda cc, x, y: torch.addmm(cc, x, y), c, a, b)
    check("linear", torch.nn.functional.linear, a, b.t().contiguous(), bias)
    check("mm out=", lambda x, y: torch.mm(x, y, out=torch.empty(3, device=x.device)), a, b)
    b4, bias4 = torch.randn(1000, 36), torch.randn(36)  # N % 4 == 0 (vector loads in the slices), a transposed out=
    check("mm N%4", torch.mm, a, b4)
    check("addmm bias N%4", lambda bb, x, y: torch.addmm(bb, x, y, beta=0.5, alpha=2.0), bias4, a, b4)
    check("mm N%4 transposed out=",
          lambda x, y: torch.mm(x, y, out=torch.empty(36, 37, device=x.device).t()), a, b4)

    # in place: out is also the C term
    cd = c.to("ocl")
    torch.ocl._reset_launch_counts()
    cd.addmm_(a.to("ocl"), b.to("ocl"), beta=0.25)
    assert torch.ocl._launch_counts().get("gemm_splitk_reduce", 0) == 1
    torch.testing.assert_close(cd.cpu(), c.clone().addmm_(a, b, beta=0.25), **tol)

    # weight-gradient shape through autograd (dW = dY^T X with K = tokens)
    x = torch.randn(600, 24, requires_grad=True)
    lin = torch.nn.Linear(24, 40)
    lin_d = torch.nn.Linear(24, 40).to("ocl")
    lin_d.load_state_dict(lin.state_dict())
    xd = x.detach().to("ocl").requires_grad_()
    lin(x).square().sum().backward()
    lin_d(xd).square().sum().backward()
    torch.testing.assert_close(lin_d.weight.grad.cpu(), lin.weight.grad, **tol)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, **tol)

    # float64 and batched products are never split
    torch.ocl._reset_launch_counts()
    torch.bmm(torch.randn(2, 5, 700, device="ocl"), torch.randn(2, 700, 6, device="ocl"))
    assert "gemm_splitk_reduce" not in torch.ocl._launch_counts()
    print("ok")
""")


def _run(env_value):
    env = dict(os.environ, TORCH_OCL_GEMM_SPLIT_K=env_value)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)


def test_forced_split_k_matches_cpu():
    r = _run("3")
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_bad_split_k_setting_is_a_clear_error():
    r = subprocess.run([sys.executable, "-c", "import torch; a = torch.randn(4, 4, device='ocl'); torch.mm(a, a)"],
                       env=dict(os.environ, TORCH_OCL_GEMM_SPLIT_K="many"), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0 and "TORCH_OCL_GEMM_SPLIT_K must be" in r.stderr, r.stderr
