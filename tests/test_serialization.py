"""torch.save / torch.load of ocl tensors, modules and optimizer state: bit-exact, with and
without map_location, with weights_only=True, and views keeping their shared storage."""
import warnings

import pytest
import torch

from .conftest import requires_ocl
from .test_autoload import ok, run_py

pytestmark = requires_ocl

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
          torch.int32, torch.int64, torch.uint8, torch.bool]


def bits(t):
    """The raw bytes of a CPU tensor (NaN payloads and -0.0 included)."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def bit_exact(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride(), (a, b)
    assert torch.equal(bits(a.cpu()), bits(b.cpu()))


def tensors_cpu():
    out = {}
    g = torch.Generator().manual_seed(0)
    for dt in DTYPES:
        if dt.is_floating_point:
            t = torch.randn(3, 5, generator=g, dtype=torch.float64).to(dt)
            t[0, 0], t[0, 1], t[0, 2] = float("nan"), -0.0, float("-inf")
        elif dt == torch.bool:
            t = torch.randint(0, 2, (3, 5), generator=g).bool()
        else:
            info = torch.iinfo(dt)
            t = torch.randint(info.min, info.max, (3, 5), generator=g, dtype=torch.int64).to(dt)
        out[str(dt)] = t
    out["0-dim"] = torch.tensor(2.5)
    out["empty"] = torch.zeros(0, 4)
    out["transposed"] = torch.arange(12.0).reshape(3, 4).t()
    return out


def module_and_optimizer(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a CPU-fallback notice is not what this test checks
        opt.step()
    return model, opt


@pytest.fixture
def checkpoint(tmp_path):
    cpu = tensors_cpu()
    dev = {k: v.to("ocl") for k, v in cpu.items()}
    base = torch.arange(10.0).to("ocl")
    model, opt = module_and_optimizer("ocl")
    obj = {"tensors": dev, "base": base, "view": base[2:7], "strided": base[1::3],
           "model": model.state_dict(), "optim": opt.state_dict()}
    path = tmp_path / "ocl.pt"
    torch.save(obj, path)
    return path, cpu, model, opt


def test_save_load_without_map_location(checkpoint):
    path, cpu, model, opt = checkpoint
    for weights_only in (False, True):
        ld = torch.load(path, weights_only=weights_only)
        for k, t in cpu.items():
            assert ld["tensors"][k].is_ocl, k
            bit_exact(ld["tensors"][k], t)
        for k, v in model.state_dict().items():
            assert ld["model"][k].is_ocl
            bit_exact(ld["model"][k], v)
        moms = [s["momentum_buffer"] for s in opt.state_dict()["state"].values()]
        got = [s["momentum_buffer"] for s in ld["optim"]["state"].values()]
        assert len(got) == len(moms) == 4
        for a, b in zip(got, moms):
            assert a.is_ocl
            bit_exact(a, b)


def test_views_keep_shared_storage(checkpoint):
    path = checkpoint[0]
    ld = torch.load(path, weights_only=True)
    base, view, strided = ld["base"], ld["view"], ld["strided"]
    ptr = base.untyped_storage().data_ptr()
    assert view.untyped_storage().data_ptr() == ptr == strided.untyped_storage().data_ptr()
    assert view.storage_offset() == 2 and strided.storage_offset() == 1 and strided.stride() == (3,)
    view.fill_(-1)
    assert base.cpu().tolist() == [0, 1, -1, -1, -1, -1, -1, 7, 8, 9]
    assert strided.cpu().tolist() == [1, -1, 7]


def test_load_into_modules_and_optimizer(checkpoint):
    path, _, model, opt = checkpoint
    ld = torch.load(path, weights_only=True)
    model2, opt2 = module_and_optimizer("ocl")
    with torch.no_grad():
        for p in model2.parameters():
            p.zero_()
    model2.load_state_dict(ld["model"])
    opt2.load_state_dict(ld["optim"])
    for a, b in zip(model2.parameters(), model.parameters()):
        bit_exact(a, b)
    for a, b in zip(opt2.state_dict()["state"].values(), opt.state_dict()["state"].values()):
        assert a["momentum_buffer"].is_ocl
        bit_exact(a["momentum_buffer"], b["momentum_buffer"])
    # Into a CPU model: load_state_dict copies device -> host.
    cpu_model, _ = module_and_optimizer("cpu")
    cpu_model.load_state_dict(ld["model"])
    for a, b in zip(cpu_model.parameters(), model.parameters()):
        bit_exact(a, b)


def test_map_location_cpu_in_process_without_backend(checkpoint, tmp_path):
    path, cpu, model, opt = checkpoint
    ref = tmp_path / "ref.pt"
    torch.save({"tensors": cpu, "model": {k: v.cpu() for k, v in model.state_dict().items()}}, ref)
    out = ok(run_py(f"""
        import sys, torch
        assert 'torch_ocl' not in sys.modules and not hasattr(torch, 'ocl')
        ref = torch.load({str(ref)!r}, weights_only=True)
        def bits(t):
            return t.contiguous().reshape(-1).view(torch.uint8)
        for weights_only in (True, False):
            ld = torch.load({str(path)!r}, map_location='cpu', weights_only=weights_only)
            same = all(ld['tensors'][k].device.type == 'cpu' and ld['tensors'][k].stride() == t.stride()
                       and torch.equal(bits(ld['tensors'][k]), bits(t)) for k, t in ref['tensors'].items())
            same &= all(torch.equal(bits(ld['model'][k]), bits(v)) for k, v in ref['model'].items())
            same &= ld['view'].untyped_storage().data_ptr() == ld['base'].untyped_storage().data_ptr()
            print('weights_only', weights_only, 'bit-exact', same)
        try:
            torch.load({str(path)!r}, weights_only=True)
            print('NO ERROR')
        except Exception as e:
            print('without map_location:', type(e).__name__)
    """, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}))
    assert "weights_only True bit-exact True" in out
    assert "weights_only False bit-exact True" in out
    assert "NO ERROR" not in out


@pytest.mark.parametrize("map_location", ["ocl", "ocl:0", torch.device("ocl:0"), {"cpu": "ocl:0"}],
                         ids=["str", "str-index", "device", "dict"])
def test_cpu_checkpoint_to_ocl(tmp_path, map_location):
    cpu = tensors_cpu()
    model, _ = module_and_optimizer("cpu")
    base = torch.arange(6.0)
    path = tmp_path / "cpu.pt"
    torch.save({"tensors": cpu, "model": model.state_dict(), "base": base, "view": base[1:4]}, path)
    ld = torch.load(path, map_location=map_location, weights_only=True)
    for k, t in cpu.items():
        assert ld["tensors"][k].device == torch.device("ocl:0"), k
        bit_exact(ld["tensors"][k], t)
    for k, v in model.state_dict().items():
        bit_exact(ld["model"][k], v)
    assert ld["view"].untyped_storage().data_ptr() == ld["base"].untyped_storage().data_ptr()
    assert ld["view"].storage_offset() == 1


def test_ocl_checkpoint_to_cpu_in_process(checkpoint):
    path, cpu, _, _ = checkpoint
    ld = torch.load(path, map_location="cpu", weights_only=True)
    for k, t in cpu.items():
        assert ld["tensors"][k].device.type == "cpu"
        bit_exact(ld["tensors"][k], t)
