"""Several ocl devices: PoCL exposes two CPU devices with POCL_DEVICES="pthread pthread".
Runs in a fresh process (device discovery happens once per process)."""
import pytest

from .conftest import requires_ocl
from .test_autoload import ok, run_py

pytestmark = requires_ocl

SCRIPT = """
    import torch
    def check(name, cond):
        print(name, 'ok' if cond else 'FAIL')

    m = torch.ocl
    if m.device_count() < 2:  # POCL_DEVICES only splits PoCL; a lone GPU stays one device
        print('SKIP only', m.device_count(), 'device(s):', m.get_device_name())
        raise SystemExit(0)
    check('count', m.device_count() == 2 and torch.accelerator.device_count() == 2)
    check('names', m.get_device_name(1) == m.get_device_properties(1).name)

    # ocl:1 is honoured: the tensor says so and its memory is on device 1's allocator.
    base0, base1 = m.memory_allocated(0), m.memory_allocated(1)
    x1 = torch.full((1000,), 3, dtype=torch.int32, device='ocl:1')      # fill kernel on device 1
    check('device', x1.device == torch.device('ocl:1') and x1.get_device() == 1)
    check('lands on 1', m.memory_allocated(1) >= base1 + 4000 and m.memory_allocated(0) == base0)
    check('values on 1', x1.cpu().tolist() == [3] * 1000)
    check('strided on 1', x1[::7].to(torch.float64).cpu().tolist() == [3.0] * 143)
    check('ocl(1)', torch.arange(4).ocl(1).device == torch.device('ocl:1'))

    # Cross-device copies, dense, strided, with conversion, both directions.
    a = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x0 = a.to('ocl:0')
    y1 = x0.to('ocl:1')
    check('0->1', y1.device.index == 1 and torch.equal(y1.cpu(), a))
    check('1->0', torch.equal(y1.to('ocl:0').cpu(), a))
    check('0->1 strided', torch.equal(x0.t().to('ocl:1').cpu(), a.t()))
    check('0->1 convert', torch.equal(x0.to('ocl:1', torch.int64).cpu(), a.long()))
    dst = torch.zeros(6, 4, device='ocl:1')
    dst.copy_(x0.t())
    check('copy_ into view', torch.equal(dst.cpu(), a.t()))
    z = torch.zeros(4, 6, device='ocl:1')[:, ::2]
    z.copy_(x0[:, 1::2])
    check('view to view', torch.equal(z.cpu(), a[:, 1::2]))

    # The current device.
    check('current 0', m.current_device() == 0)
    with m.device(1):
        check('ctx current', m.current_device() == 1 and torch.accelerator.current_device_index() == 1)
        check('ctx alloc', torch.empty(3, device='ocl').device == torch.device('ocl:1'))
        check('ctx ocl()', torch.zeros(2).ocl().device.index == 1)
        with m.device('ocl:0'):
            check('nested', m.current_device() == 0)
        check('nested restore', m.current_device() == 1)
    check('ctx restore', m.current_device() == 0)
    m.set_device(1)
    check('set_device', m.current_device() == 1 and torch.ones(2, device='ocl').device.index == 1)
    m.synchronize()
    m.set_device(0)
    torch.accelerator.set_device_index(1)
    check('accelerator set', m.current_device() == 1)
    torch.accelerator.set_device_index(0)
    with m.device_of(y1):
        check('device_of', m.current_device() == 1)
    check('generators', len(m.default_generators) == 2 and m.get_rng_state(1).numel() == 16)
    m.synchronize(1)
    del x1, y1, dst, z
    check('freed 1', m.memory_allocated(1) == base1)
    m.empty_cache()
    check('empty 1', m.memory_reserved(1) == 0)
"""


def test_two_devices():
    out = ok(run_py(SCRIPT, env={"POCL_DEVICES": "pthread pthread", "TORCH_OCL_DEVICES": ""}))
    if out.startswith("SKIP"):
        pytest.skip(out.strip())
    lines = [line for line in out.splitlines() if line.endswith((" ok", " FAIL"))]
    assert len(lines) == 26, out
    assert not [line for line in lines if line.endswith("FAIL")], out
