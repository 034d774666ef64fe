"""The ocl device runtime: tensors and copies, views, resize_/set_, the device module API,
the caching allocator, threads, fork safety, the program caches and the CPU fallback.
Tests that depend on process-wide state (environment variables read once, fork, the disk
cache of a fresh process) run in subprocesses."""
import gc
import os
import shutil
import threading
import warnings

import pytest
import torch

from .conftest import requires_ocl
from .test_autoload import ok, run_py

pytestmark = requires_ocl

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
          torch.int32, torch.int64, torch.uint8, torch.bool]


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        # Values that are exact in every float dtype, with signs and fractions.
        return (torch.randint(-64, 64, shape, generator=g) / 8).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype)


def same(a, b):
    """Bit-exact equality of two CPU tensors (dtype, shape and values)."""
    assert a.device.type == "cpu" and b.device.type == "cpu"
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert torch.equal(a, b)


# ---- tensors, copies, views -------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_round_trips(dtype):
    for shape in [(), (0,), (1,), (7,), (3, 0, 2), (33, 65)]:
        x = sample(shape, dtype)
        d = x.to("ocl")
        assert d.device == torch.device("ocl:0") and d.dtype == dtype and d.shape == x.shape
        same(d.cpu(), x)
        d2 = d.clone()                      # device -> device, dense
        assert d2.untyped_storage().data_ptr() != d.untyped_storage().data_ptr() or d.numel() == 0
        same(d2.cpu(), x)
        e = torch.empty_like(d)
        e.copy_(d)
        same(e.cpu(), x)
    # Non-contiguous on either side and in both directions.
    x = sample((6, 10), dtype, seed=1)
    same(x.t().to("ocl").cpu(), x.t())                         # host view -> device
    d = x.to("ocl")
    same(d.t().cpu(), x.t())                                   # device view -> host
    same(d[:, ::3].contiguous().cpu(), x[:, ::3].contiguous())  # device view -> device
    dst = torch.zeros(10, 6, dtype=dtype, device="ocl").t()   # into a device view
    dst.copy_(x)
    same(dst.cpu(), x)
    dst = torch.zeros(6, 10, dtype=dtype, device="ocl")[:, ::2]
    dst.copy_(d[:, 1::2])                                      # device view -> device view
    same(dst.cpu(), x[:, 1::2])
    host = torch.zeros(10, 6, dtype=dtype).t()
    host.copy_(d)                                              # device -> host view
    same(host, x)
    # Broadcasting copy from a device tensor.
    row = torch.zeros(4, 10, dtype=dtype, device="ocl")
    row.copy_(d[2])
    same(row.cpu(), x[2].expand(4, 10))


def test_copy_size_mismatch_raises():
    for dst, src in [(torch.empty(0, device="ocl"), torch.ones(3)),
                     (torch.empty(2, 3, device="ocl"), torch.ones(4, device="ocl")),
                     (torch.empty(3, device="ocl"), torch.ones(0))]:
        with pytest.raises(RuntimeError):
            dst.copy_(src)
    # Broadcastable empty sources are fine, as on the CPU.
    torch.empty(0, 3, device="ocl").copy_(torch.ones(3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.int64, torch.bool], ids=str)
def test_dtype_conversion_copies(dtype):
    x = sample((5, 7), dtype)
    # host -> device with conversion, device -> device with conversion, device -> host.
    same(x.to("ocl", torch.float32).cpu(), x.to(torch.float32))
    d = x.to("ocl")
    same(d.to(torch.float32).cpu(), x.to(torch.float32))
    same(d.t().to(torch.float64).cpu(), x.t().to(torch.float64))
    same(d.cpu().to(torch.int32), x.to(torch.int32))
    dst = torch.zeros(5, 7, dtype=torch.float32, device="ocl")
    dst.copy_(x)
    same(dst.cpu(), x.to(torch.float32))
    hst = torch.zeros(5, 7, dtype=torch.float32)
    hst.copy_(d)
    same(hst, x.to(torch.float32))


def test_large_round_trip():
    """More than 2**24 elements (where float index math and 16 MiB staging limits bite)."""
    n = (1 << 24) + 5
    x = torch.arange(n, dtype=torch.int32)
    d = x.to("ocl")
    d2 = d.clone()
    same(d2.cpu(), x)
    del d2
    # A strided device view of > 2**24 elements through the copy kernel.
    b = (torch.arange(2 * n, dtype=torch.int64) % 251).to(torch.uint8)
    db = b.to("ocl")
    same(db[1::2].contiguous().cpu(), b[1::2])
    same(db[::2].cpu(), b[::2])


def test_pin_memory():
    t = torch.arange(1000.0).pin_memory()
    assert t.is_pinned() and t.device.type == "cpu" and not torch.arange(3.0).is_pinned()
    assert t[10:].is_pinned()
    d = t.to("ocl", non_blocking=True)
    back = torch.empty(1000, pin_memory=True)
    # Where CUDA is available too, torch's factory functions pin through CUDA's host
    # allocator (GetCPUAllocatorMaybePinned asks CUDA first), memory ocl's is_pinned does
    # not own; the copies below must work either way.
    assert back.is_pinned() or torch.cuda.is_available()
    back.copy_(d, non_blocking=True)
    torch.ocl.synchronize()
    same(back, t)
    big = torch.arange((1 << 22) + 3, dtype=torch.int32).pin_memory()   # > 16 MiB: direct DMA
    same(big.to("ocl").cpu(), big)
    del t, back, big
    assert torch.zeros(5).pin_memory().sum().item() == 0


def test_printing():
    x = torch.tensor([[1.5, -2.0], [0.25, 3.0]])
    assert repr(x.to("ocl")) == repr(x)[:-1] + ", device='ocl:0')"
    assert "device='ocl:0', dtype=torch.int32" in repr(torch.arange(3, dtype=torch.int32).to("ocl"))
    assert "True" in repr(torch.tensor([True, False]).to("ocl"))
    assert "e+" in repr(torch.tensor([1e20, 1.0]).to("ocl"))  # scientific format path
    big = torch.arange(2000.0).to("ocl")
    assert "..." in repr(big)                                # summarised path (slices)


def test_views_share_storage():
    x = torch.arange(24.0).reshape(4, 6)
    d = x.to("ocl")
    ptr = d.untyped_storage().data_ptr()
    views = {
        "view": d.view(6, 4), "t": d.t(), "slice": d[1:3, ::2], "select": d[2], "narrow": d.narrow(1, 2, 3),
        "unfold": d.unfold(1, 3, 2), "as_strided": d.as_strided((2, 2), (1, 6), 3), "reshape": d.reshape(24),
        "diagonal": d.diagonal(), "expand": d[:1].expand(3, 6), "flatten": d.flatten(),
    }
    for name, v in views.items():
        assert v.untyped_storage().data_ptr() == ptr, name
        assert v._base is d, name
        same(v.cpu(), getattr(_CpuViews(x), name))
    assert d[1:].data_ptr() == ptr + 6 * 4   # data_ptr arithmetic is meaningful
    # Writes through a view land in the base.
    d[1:3, ::2].fill_(-1)
    x[1:3, ::2] = -1
    same(d.cpu(), x)
    d.t()[0].copy_(torch.full((4,), 7.0))
    x.t()[0] = 7
    same(d.cpu(), x)
    d.unfold(1, 3, 3)[..., 1].zero_()
    x.unfold(1, 3, 3)[..., 1] = 0
    same(d.cpu(), x)


class _CpuViews:
    def __init__(self, x):
        self.view, self.t, self.slice, self.select = x.view(6, 4), x.t(), x[1:3, ::2], x[2]
        self.narrow, self.unfold = x.narrow(1, 2, 3), x.unfold(1, 3, 2)
        self.as_strided, self.reshape = x.as_strided((2, 2), (1, 6), 3), x.reshape(24)
        self.diagonal, self.expand, self.flatten = x.diagonal(), x[:1].expand(3, 6), x.flatten()


def test_resize_keeps_data():
    x = torch.arange(6, dtype=torch.int64)
    d = x.to("ocl")
    d.resize_(20)
    assert d.shape == (20,)
    same(d[:6].cpu(), x)
    d[6:].fill_(9)
    d.resize_(2, 3)
    same(d.cpu(), x.view(2, 3))
    d.resize_(4, 5)
    same(d.view(-1)[:6].cpu(), x)
    same(d.view(-1)[6:].cpu(), torch.full((14,), 9))
    d.resize_(0)
    assert d.numel() == 0
    e = torch.empty(0, device="ocl")
    e.resize_(3, 4, memory_format=torch.contiguous_format).fill_(1.5)
    same(e.cpu(), torch.full((3, 4), 1.5))
    # Growth through a view's storage keeps what other views see.
    s = torch.arange(8.0).to("ocl")
    v = s[2:4]
    s.resize_(100)
    same(v.cpu(), torch.tensor([2.0, 3.0]))
    # UntypedStorage.resize_ goes through the hooks' resizePrivateUse1Bytes.
    st = torch.arange(4, dtype=torch.int32).to("ocl").untyped_storage()
    st.resize_(64)
    assert st.nbytes() == 64
    same(torch.tensor([], dtype=torch.int32).set_(st.cpu())[:4], torch.arange(4, dtype=torch.int32))


def test_set_():
    src = torch.arange(12.0).to("ocl")
    t = torch.empty(0, device="ocl")
    t.set_(src.untyped_storage())                          # set_.source_Storage
    assert t.untyped_storage().data_ptr() == src.untyped_storage().data_ptr()
    same(t.cpu(), torch.arange(12.0))
    t2 = torch.empty(0, device="ocl")
    t2.set_(src.untyped_storage(), 2, (2, 3), (3, 1))     # set_.source_Storage_storage_offset
    same(t2.cpu(), torch.arange(12.0)[2:].as_strided((2, 3), (3, 1)))
    t2.fill_(0)
    same(src[2:8].cpu(), torch.zeros(6))
    t3 = torch.empty(0, device="ocl")
    t3.set_(src[4:])                                       # set_.source_Tensor
    assert t3.storage_offset() == 4 and t3.shape == (8,)
    same(t3.cpu(), src[4:].cpu())
    t3.set_()                                              # set_()
    assert t3.numel() == 0 and t3.untyped_storage().nbytes() == 0
    # set_ with a storage that must grow.
    s = torch.arange(3.0).to("ocl").untyped_storage()
    t4 = torch.empty(0, device="ocl").set_(s, 0, (5,), (1,))
    assert s.nbytes() >= 20
    same(t4[:3].cpu(), torch.arange(3.0))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
def test_item(dtype):
    x = sample((5,), dtype, seed=3)
    d = x.to("ocl")
    for i in range(5):
        assert d[i].item() == x[i].item()
    assert torch.tensor(x[2].item()).to("ocl").item() == x[2].item()  # 0-dim
    assert type(d[0].item()) is type(x[0].item())
    with pytest.raises(RuntimeError):
        torch.empty(0, dtype=dtype, device="ocl").item()


def test_copy_from_and_resize():
    src = torch.arange(6.0).view(2, 3)
    dst = torch.empty(0, device="ocl")
    out = torch.ops.aten._copy_from_and_resize(src, dst)
    assert out.shape == (2, 3)
    same(dst.cpu(), src)
    back = torch.empty(5)
    torch.ops.aten._copy_from_and_resize(dst.t(), back)
    same(back, src.t())


def test_record_stream():
    x = torch.ones(4, device="ocl")
    s = torch.accelerator.current_stream()
    assert s.device == torch.device("ocl:0")
    x.record_stream(s)
    x.record_stream(torch.Stream(device="ocl"))
    same(x.cpu(), torch.ones(4))


def test_weight_tying_survives_to():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(5, 3)
            self.head = torch.nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight

    m = Tied()
    w = m.emb.weight.detach().clone()
    m.to("ocl")
    assert m.head.weight is m.emb.weight
    assert m.emb.weight.is_ocl
    same(m.emb.weight.detach().cpu(), w)
    m.ocl()
    assert m.head.weight is m.emb.weight
    # Assigning device data to a CPU parameter keeps the Parameter object.
    p = torch.nn.Parameter(torch.zeros(3))
    p.data = torch.ones(3, device="ocl")
    assert isinstance(p, torch.nn.Parameter) and p.is_ocl
    assert torch._has_compatible_shallow_copy_type(torch.zeros(1), torch.zeros(1, device="ocl"))


def test_data_ptr_maps_back_to_device():
    x = torch.zeros(10, device="ocl")
    assert x.data_ptr() != 0 and x[3:].data_ptr() == x.data_ptr() + 12
    y = torch.zeros(10, device="ocl")
    assert y.data_ptr() != x.data_ptr()
    assert torch.empty(0, device="ocl").data_ptr() == 0


# ---- the device module ------------------------------------------------------------------

def test_device_module_api():
    m = torch.ocl
    assert m.is_available() and m.device_count() >= 1
    assert torch.device("ocl").type == "ocl" and torch._C._get_privateuse1_backend_name() == "ocl"
    assert m.current_device() == 0
    m.set_device(0)
    m.set_device("ocl:0")
    m.set_device(torch.device("ocl", 0))
    with m.device(0) as ctx:
        assert m.current_device() == 0 and ctx.idx == 0
    with m.device_of(torch.zeros(1, device="ocl")):
        assert m.current_device() == 0
    with pytest.raises(IndexError):
        m.set_device(m.device_count())
    m.synchronize()
    m.synchronize(0)
    m.synchronize("ocl:0")

    props = m.get_device_properties(0)
    for field in ("name", "vendor", "driver_version", "opencl_version", "platform_name", "type",
                  "compute_units", "global_mem_size", "local_mem_size", "max_alloc_size",
                  "max_work_group_size", "fp16", "fp64", "total_memory", "multi_processor_count"):
        assert hasattr(props, field), field
    assert props.compute_units >= 1 and props.global_mem_size > 0 and props.local_mem_size > 0
    assert isinstance(props.fp16, bool) and isinstance(props.fp64, bool)
    assert props.name in repr(props)
    assert m.get_device_name() == m.get_device_name(0) == props.name
    assert m.get_device_properties("ocl:0").name == props.name

    # RNG state and seeding (torch.manual_seed reaches the device through manual_seed_all).
    torch.manual_seed(1234)
    assert m.initial_seed() == 1234
    state = m.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu" and state.numel() == 16
    m.manual_seed(7)
    assert m.initial_seed() == 7
    m.set_rng_state(state)
    assert m.initial_seed() == 1234 and torch.equal(m.get_rng_state(0), state)
    m.manual_seed_all(99)
    assert [g.initial_seed() for g in m.default_generators] == [99] * m.device_count()
    m.seed()
    assert len(m.get_rng_state_all()) == m.device_count()
    g = torch.Generator(device="ocl")
    assert g.device.type == "ocl"
    g.manual_seed(3)
    assert g.initial_seed() == 3
    with torch.random.fork_rng(device_type="ocl"):
        m.manual_seed(5)
    assert m.initial_seed() != 5

    # What torch itself calls.
    assert m._is_in_bad_fork() is False
    m._lazy_init()
    assert m._initialized is True and m.is_initialized()
    assert torch.float16 in m.get_amp_supported_dtype() and torch.bfloat16 in m.get_amp_supported_dtype()
    with torch.autocast("ocl", dtype=torch.bfloat16):
        pass
    assert isinstance(m.fallback_counts(), dict)

    # tensor.ocl(), tensor.is_ocl, module.ocl(), storage.ocl()
    t = torch.arange(3).ocl()
    assert t.is_ocl and t.device == torch.device("ocl:0") and not torch.zeros(1).is_ocl
    assert torch.zeros(1).ocl(0).is_ocl and torch.zeros(1).ocl("ocl:0").is_ocl
    lin = torch.nn.Linear(2, 2).ocl()
    assert all(p.is_ocl for p in lin.parameters())
    assert torch.zeros(2).untyped_storage().ocl().is_ocl


def test_torch_accelerator():
    acc = torch.accelerator
    assert acc.current_accelerator() == torch.device("ocl")
    assert acc.is_available() and acc.device_count() == torch.ocl.device_count()
    assert acc.current_device_index() == 0
    acc.set_device_index(0)
    acc.synchronize()
    x = torch.ones(1000, device="ocl")
    assert acc.memory_allocated() == torch.ocl.memory_allocated() >= 4000
    assert acc.memory_stats()["allocated_bytes.all.current"] == torch.ocl.memory_allocated()
    assert acc.max_memory_allocated() >= acc.memory_allocated()
    free, total = acc.get_memory_info()
    assert 0 < free <= total == torch.ocl.get_device_properties().total_memory
    ev = torch.Event(device="ocl")
    ev.record()
    ev.synchronize()
    assert ev.query()
    t0, t1 = torch.Event(device="ocl", enable_timing=True), torch.Event(device="ocl", enable_timing=True)
    t0.record()
    x.fill_(2.0)
    t1.record()
    t1.synchronize()
    assert 0.0 <= t0.elapsed_time(t1) < 60_000.0  # milliseconds
    s = torch.Stream(device="ocl")
    assert s.query() in (True, False)
    s.synchronize()
    del x
    acc.empty_cache()


# ---- allocator --------------------------------------------------------------------------

def test_memory_stats_return_to_baseline():
    torch.ocl.synchronize()
    gc.collect()
    base = torch.ocl.memory_stats()
    base_alloc = torch.ocl.memory_allocated()
    xs = [torch.empty(n, device="ocl") for n in (1, 100, 4096, 1 << 20, 3 << 18)]
    assert torch.ocl.memory_allocated() >= base_alloc + 4 * (1 + 100 + 4096 + (1 << 20) + (3 << 18))
    assert torch.ocl.max_memory_allocated() >= torch.ocl.memory_allocated()
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()
    del xs
    assert torch.ocl.memory_allocated() == base_alloc
    after = torch.ocl.memory_stats()
    assert after["active.all.current"] == base["active.all.current"]
    assert after["requested_bytes.all.current"] == base["requested_bytes.all.current"]
    # A freed block is reused for the next request of the same bucket (no new segment).
    y = torch.empty(1 << 20, device="ocl")
    segs = torch.ocl.memory_stats()["segment.all.current"]
    del y
    y = torch.empty(1 << 20, device="ocl")
    assert torch.ocl.memory_stats()["segment.all.current"] == segs
    del y
    torch.ocl.reset_peak_memory_stats()
    assert torch.ocl.max_memory_allocated() == torch.ocl.memory_allocated()


def test_empty_cache_releases():
    x = torch.empty(4 << 20, device="ocl")
    del x
    reserved = torch.ocl.memory_reserved()
    assert reserved >= 16 << 20
    torch.ocl.empty_cache()
    assert torch.ocl.memory_reserved() <= reserved - (16 << 20)
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()


def test_out_of_memory():
    props = torch.ocl.get_device_properties()
    before = torch.ocl.memory_stats()["num_ooms"]
    n = props.global_mem_size * 4
    with pytest.raises(torch.OutOfMemoryError) as info:
        torch.empty(n, dtype=torch.uint8, device="ocl")
    msg = str(info.value)
    assert "out of memory" in msg and "tried to allocate" in msg and "GiB" in msg and "ocl:0" in msg
    assert torch.ocl.memory_stats()["num_ooms"] == before + 1
    # The device stays usable.
    y = torch.full((1000,), 2.5, device="ocl")
    same(y.cpu(), torch.full((1000,), 2.5))


# ---- threads and fork -------------------------------------------------------------------

def test_launches_from_several_threads():
    errors = []
    start = threading.Barrier(4)

    def worker(k):
        try:
            start.wait()
            for i in range(30):
                v = k * 100 + i
                x = torch.full((257, 3), v, dtype=torch.int32, device="ocl")    # fill kernel
                y = x.t().to(torch.float64)                                      # strided convert
                z = y[:, ::2].contiguous()                                        # strided copy
                h = z.cpu()
                if not bool((h == v).all()) or h.shape != (3, 129):
                    errors.append(f"thread {k} iteration {i}: wrong result")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(1, 4)]
    for t in threads:
        t.start()
    worker(0)
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a launching thread hung"
    assert not errors, errors


def test_backward_runs_on_autograd_thread():
    # Autograd's engine runs device backward passes on its own thread.
    x = torch.ones(5, device="ocl", requires_grad=True)
    y = x.to(torch.float64)
    y.backward(torch.full((5,), 3.0, dtype=torch.float64, device="ocl"))
    same(x.grad.cpu(), torch.full((5,), 3.0))


def test_exit_releases_autograd_graph_tasks():
    # torch_ocl's exit hook pushes an empty backward through each initialized device's autograd
    # thread (torch_ocl/__init__.py says why: a graph task released by that thread while Python
    # finalizes aborted 3 in 40 scripts ending in an ocl backward). It initializes no device,
    # launches nothing, and leaves gradients alone; a script ending in a backward exits 0.
    out = ok(run_py("""
        import torch, torch_ocl
        assert torch_ocl._C._initialized_devices() == []
        torch_ocl._release_autograd_graph_tasks()
        assert torch_ocl._C._initialized_devices() == []
        x = torch.ones(3, device="ocl", requires_grad=True)
        (x * 2).sum().backward()
        torch.ocl.synchronize()
        before = torch.ocl.memory_allocated()
        torch_ocl._release_autograd_graph_tasks()
        assert torch_ocl._C._initialized_devices() == [0]
        assert x.grad.tolist() == [2.0, 2.0, 2.0] and torch.ocl.memory_allocated() == before
        torch.set_grad_enabled(False)  # the hook turns grad mode on for its own backward
        torch_ocl._release_autograd_graph_tasks()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        torch.set_grad_enabled(True)
        print("ok")
        (x * 3).sum().backward()
    """))
    assert out.strip().endswith("ok"), out


def test_forked_child_gets_clear_error():
    out = ok(run_py("""
        import multiprocessing as mp, torch

        def child(q):
            msgs = []
            for what, fn in (("new tensor", lambda: torch.ones(1, device='ocl')),
                             ("parent tensor", lambda: x.cpu())):
                try:
                    fn()
                    msgs.append(what + ': NO ERROR')
                except RuntimeError as e:
                    msgs.append(what + ': ' + str(e).splitlines()[0])
            msgs.append('bad fork ' + str(torch.ocl._is_in_bad_fork()))
            q.put(msgs)

        x = torch.full((3,), 2.0, device='ocl')
        print('parent', x.cpu().tolist())
        ctx = mp.get_context('fork')
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        for m in q.get(timeout=60):
            print('child', m)
        p.join(timeout=60)
        print('child exit', p.exitcode)
        y = torch.full((3,), 5.0, device='ocl')
        print('parent after', (y.cpu() + x.cpu()).tolist(), torch.ocl._is_in_bad_fork())
    """, timeout=150))
    assert "parent [2.0, 2.0, 2.0]" in out
    lines = [line for line in out.splitlines() if line.startswith("child ")]
    assert len([line for line in lines if "forked subprocess" in line and "spawn" in line]) == 2, out
    assert "NO ERROR" not in out
    assert "child bad fork True" in out
    assert "child exit 0" in out
    assert "parent after [7.0, 7.0, 7.0] False" in out


# ---- program caches ---------------------------------------------------------------------

_CACHE_PROBE = """
    import torch
    x = torch.full((1000,), 3, dtype=torch.int16, device='ocl')
    y = x[::3].to(torch.float32)
    print('result', y.cpu().tolist() == [3.0] * 334)
    print('stats', torch.ocl._program_cache_stats())
"""


def _stats(out):
    line = [line for line in out.splitlines() if line.startswith("stats ")][-1]
    return eval(line[6:], {})  # noqa: S307 - a dict printed by the child


@pytest.fixture(scope="module")
def cache_runs(tmp_path_factory):
    """Three fresh processes sharing one TORCH_OCL_CACHE_DIR: a cold start, a warm start,
    and a start after every cache file was corrupted."""
    cache = tmp_path_factory.mktemp("ocl_cache")
    env = {"TORCH_OCL_CACHE_DIR": str(cache)}
    cold = ok(run_py(_CACHE_PROBE, env=env))
    warm = ok(run_py(_CACHE_PROBE, env=env))
    files = sorted(p for p in cache.iterdir() if p.suffix == ".bin")
    for p in files:
        blob = bytearray(p.read_bytes())
        for i in range(len(blob) // 2, min(len(blob), len(blob) // 2 + 64)):
            blob[i] ^= 0x5A
        p.write_bytes(bytes(blob))
    corrupt = ok(run_py(_CACHE_PROBE, env=env))
    return cache, files, cold, warm, corrupt


def test_second_process_hits_disk_cache(cache_runs):
    cache, files, cold, warm, _ = cache_runs
    assert "result True" in cold and "result True" in warm
    c, w = _stats(cold), _stats(warm)
    assert c["built_from_source"] >= 1 and c["disk_written"] == c["built_from_source"]
    assert len(files) == c["disk_written"]
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)
    assert w["built_from_source"] == 0 and w["loaded_from_disk"] == c["built_from_source"]


def test_corrupt_cache_file_is_rebuilt(cache_runs):
    _, files, cold, _, corrupt = cache_runs
    assert "result True" in corrupt
    s = _stats(corrupt)
    assert s["disk_rejected"] == len(files) and s["built_from_source"] == len(files)
    assert s["loaded_from_disk"] == 0 and s["disk_written"] == len(files)


@pytest.fixture(scope="module")
def broken_kernels_run(tmp_path_factory):
    """One fresh process with a deliberately broken kernel source (TORCH_OCL_KERNEL_DIR) and
    TORCH_OCL_FALLBACK=error."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    kdir = tmp_path_factory.mktemp("broken_kernels") / "kernels"
    shutil.copytree(os.path.join(root, "csrc", "kernels"), kdir)
    with open(kdir / "elementwise.cl", "a") as f:
        f.write("\n__kernel void broken_on_purpose(__global float* p) { p[0] = undeclared_symbol_xyz; }\n")
    return ok(run_py("""
        import torch
        e = torch.empty(3, device='ocl')          # no kernel needed
        try:
            torch._foobar(e)
            print('fallback: NO ERROR')
        except NotImplementedError as err:
            print('fallback NotImplementedError:', str(err).splitlines()[0])
        print('counts', torch.ocl.fallback_counts())
        try:
            torch.ones(3, device='ocl')           # the fill kernel needs elementwise.cl
            print('build: NO ERROR')
        except RuntimeError as err:
            print('build RuntimeError:', str(err).replace(chr(10), ' | '))
        print('after', torch.empty(2, device='ocl').shape)
    """, env={"TORCH_OCL_KERNEL_DIR": str(kdir), "TORCH_OCL_CACHE_DIR": "off",
              "TORCH_OCL_FALLBACK": "error"}))


def test_kernel_build_failure_raises_with_build_log(broken_kernels_run):
    out = broken_kernels_run
    assert "build: NO ERROR" not in out
    line = [line for line in out.splitlines() if line.startswith("build RuntimeError:")][0]
    assert "building an OpenCL program failed" in line and "build log" in line
    assert "undeclared_symbol_xyz" in line
    assert "after torch.Size([2])" in out


def test_fallback_error_mode_names_the_op(broken_kernels_run):
    out = broken_kernels_run
    assert "fallback: NO ERROR" not in out
    line = [line for line in out.splitlines() if line.startswith("fallback NotImplementedError:")][0]
    assert "'aten::_foobar'" in line and "TORCH_OCL_FALLBACK=error" in line
    assert "counts {}" in out


def test_fallback_warns_once_and_counts():
    x = torch.arange(4.0).to("ocl")
    before = torch.ocl.fallback_counts().get("aten::_foobar", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = torch._foobar(x)
        z = torch._foobar(x, False)
    msgs = [str(w.message) for w in caught if "_foobar" in str(w.message)]
    if before == 0:
        assert len(msgs) == 1 and "runs on the CPU" in msgs[0] and "TORCH_OCL_FALLBACK" in msgs[0]
    else:
        assert msgs == []
    assert torch.ocl.fallback_counts()["aten::_foobar"] == before + 2
    assert y.is_ocl and z.is_ocl
    same(y.cpu(), torch._foobar(x.cpu()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch._foobar(x)
    assert not [w for w in caught if "_foobar" in str(w.message)]


def test_covered_elsewhere_names_existing_tests():
    """tests/test_coverage.py's COVERED_ELSEWHERE points at tests by name: they must exist."""
    import importlib
    import re

    from .test_coverage import COVERED_ELSEWHERE

    for op, where in COVERED_ELSEWHERE.items():
        for mod, name in re.findall(r"tests/(\w+)\.py::(\w+)", where):
            module = importlib.import_module(f"{__package__}.{mod}")
            assert callable(getattr(module, name, None)), f"{op}: {mod}.py has no {name}"


_ASYNC_SCRIPT = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from models.gpt_mini import GPTMini, GPTMiniConfig
torch.manual_seed(0)
model = GPTMini(GPTMiniConfig(vocab_size=64, d_model=32, n_heads=2, n_layers=2, d_ff=64, max_len=16)).to("ocl")
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
x = torch.randint(0, 64, (4, 16)).to("ocl")
losses = []
for _ in range(3):
    logits, loss = model(x, x)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    losses.append(loss.detach())
print(" ".join(repr(l.item()) for l in losses))
print(repr(sum(p.double().sum().item() for p in model.parameters())))
y = torch.ones(1000, device="ocl")
for _ in range(50):
    y = y * 1.0001  # left queued: the process exits without synchronizing
"""


def test_async_launch_gives_the_same_results():
    # TORCH_OCL_ASYNC_LAUNCH=1 (the GPU default) hands set-args + enqueue to a submission
    # thread (runtime/Submit.h): the same kernels in the same order, so a few training steps
    # give bitwise the same losses and weights as launches on the calling thread, and a
    # process that exits with launches still queued exits cleanly.
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = {}
    for mode in ("0", "1"):
        env = dict(os.environ, TORCH_OCL_ASYNC_LAUNCH=mode)
        r = subprocess.run([sys.executable, "-c", _ASYNC_SCRIPT, root], env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        out[mode] = r.stdout.strip().splitlines()[-2:]
    assert out["0"] == out["1"], out
