"""Out-of-range indices are checked on the device: the error surfaces at the next
synchronization point (no per-op sync) with the CPU's exception type (IndexError for indexing,
RuntimeError for gather/scatter/index_add), the device stays usable afterwards, and with
TORCH_OCL_SYNC=1 it is raised by the op itself."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from .conftest import requires_ocl

pytestmark = requires_ocl

DEV = "ocl"


def _bad_ops(dev=DEV):
    x = torch.arange(12.0).reshape(3, 4).to(dev)
    bad = torch.tensor([0, 5]).to(dev)
    yield "index_select", lambda: x.index_select(0, bad)
    yield "gather", lambda: torch.gather(x, 1, torch.tensor([[0, 4]]).to(dev))
    yield "gather negative", lambda: torch.gather(x, 0, torch.tensor([[-1, 0, 0, 0]]).to(dev))
    yield "index", lambda: x[bad]
    yield "index negative", lambda: x[torch.tensor([-4]).to(dev)]
    yield "index_put", lambda: x.clone().index_put_((bad,), torch.zeros(2, 4).to(dev))
    yield "index_put accumulate", lambda: x.clone().index_put_((bad,), torch.zeros(2, 4).to(dev), accumulate=True)
    yield "scatter", lambda: x.clone().scatter_(1, torch.tensor([[7]]).to(dev), 1.0)
    yield "scatter_add", lambda: x.clone().scatter_add_(0, torch.tensor([[3]]).to(dev), x[:1, :1].clone())
    yield "scatter_reduce", lambda: x.clone().scatter_reduce_(0, torch.tensor([[-1]]).to(dev), x[:1, :1].clone(), "amax")
    yield "index_add", lambda: x.clone().index_add_(0, bad, torch.ones(2, 4).to(dev))
    yield "index_add negative", lambda: x.clone().index_add_(0, torch.tensor([-1]).to(dev), torch.ones(1, 4).to(dev))
    yield "embedding", lambda: F.embedding(bad, x)


def _cpu_error_type(name):
    try:
        dict(_bad_ops("cpu"))[name]()
    except Exception as e:  # noqa: BLE001 - the CPU's exception is the reference
        return type(e)
    pytest.fail(f"the CPU accepts {name}")


@pytest.mark.parametrize("name", [n for n, _ in _bad_ops("cpu")])
def test_index_error_at_next_sync_then_device_usable(name):
    expected = _cpu_error_type(name)  # IndexError for indexing, RuntimeError for gather/scatter
    op = dict(_bad_ops())[name]
    op()  # enqueued; the kernel flags the error on the device
    with pytest.raises(expected):
        torch.ocl.synchronize()
    # The flag is cleared: the device keeps working and later results are right.
    y = torch.arange(6.0).to(DEV)
    torch.testing.assert_close(y.index_select(0, torch.tensor([5, 0]).to(DEV)).cpu(), torch.tensor([5.0, 0.0]))
    torch.ocl.synchronize()


def test_index_error_surfaces_at_item_and_cpu():
    x = torch.arange(4.0).to(DEV)
    r = x.index_select(0, torch.tensor([9]).to(DEV))
    with pytest.raises(IndexError):
        r.cpu()
    r = x[torch.tensor([1]).to(DEV)]
    assert r.cpu().item() == 1.0
    x.index_select(0, torch.tensor([9]).to(DEV))
    with pytest.raises(IndexError):
        x[0].item()
    assert x[2].item() == 2.0


def test_index_error_raised_immediately_with_sync_env():
    code = textwrap.dedent("""
        import torch
        x = torch.arange(4.0).to("ocl")
        i = torch.tensor([9]).to("ocl")
        try:
            x.index_select(0, i)
        except IndexError:
            print("raised at op")
        else:
            print("not raised")
        print(x.index_select(0, torch.tensor([3]).to("ocl")).item())
    """)
    env = dict(os.environ, TORCH_OCL_SYNC="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[:3] == ["raised", "at", "op"], out.stdout
    assert float(lines[-1]) == 3.0
