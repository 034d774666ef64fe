"""Autoload through the `torch.backends` entry point, and the no-driver behaviour, each in a
fresh interpreter (what `import torch` does can only be seen in a new process)."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_py(code, *, env=None, timeout=120):
    """Runs `code` in a fresh interpreter from the repository root; returns the result.
    The repository root goes first on PYTHONPATH so the autoloaded torch_ocl is this
    checkout's copy (an editable install resolves to the same files)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=timeout)


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout


def test_import_torch_alone_registers_ocl():
    out = ok(run_py("""
        import sys, torch
        print(torch.ones(3, device='ocl') * 1)
        print('torch_ocl' in sys.modules, torch.ocl.is_available(), torch.ones(2).ocl().is_ocl)
    """))
    assert "tensor([1., 1., 1.], device='ocl:0')" in out
    assert "True True True" in out


def test_autoload_disabled_shows_no_ocl_device():
    out = ok(run_py("""
        import sys, torch
        print('torch_ocl' in sys.modules, hasattr(torch, 'ocl'),
              torch._C._get_privateuse1_backend_name())
        try:
            torch.device('ocl')
            print('parsed')
        except RuntimeError:
            print('no ocl device type')
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}))
    assert "False False privateuseone" in out
    assert "no ocl device type" in out


def test_import_torch_ocl_first():
    out = ok(run_py("""
        import torch_ocl
        import torch
        x = torch.arange(4.0).to('ocl')
        print(x.device, (x * 2).cpu().tolist(), torch.accelerator.current_accelerator())
    """))
    assert "ocl:0 [0.0, 2.0, 4.0, 6.0] ocl" in out


def test_no_opencl_platform(tmp_path):
    """With the ICD loader pointed at an empty vendor folder: `import torch` still works,
    is_available() is False, and using the device raises a RuntimeError that says what is
    missing and how to install a driver."""
    empty = tmp_path / "vendors"
    empty.mkdir()
    out = ok(run_py("""
        import torch
        print('available', torch.ocl.is_available(), torch.ocl.device_count())
        print('accelerator', torch.accelerator.is_available())
        for make in (lambda: torch.ones(1, device='ocl'), lambda: torch.zeros(2).to('ocl')):
            try:
                make()
                print('NO ERROR')
            except RuntimeError as e:
                print('RuntimeError:', str(e).splitlines()[0])
    """, env={"OCL_ICD_VENDORS": str(empty), "OCL_ICD_FILENAMES": ""}))
    assert "available False 0" in out
    assert "accelerator False" in out
    assert "NO ERROR" not in out
    errors = [line for line in out.splitlines() if line.startswith("RuntimeError:")]
    assert len(errors) == 2, out
    for line in errors:
        assert "not available" in line and "no OpenCL platform" in line, line
        assert "PoCL" in line and "pocl-opencl-icd" in line, line
