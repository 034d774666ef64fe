"""The `torch.ocl` device module, in the style of `torch.cuda`.

Devices are created lazily: nothing here touches OpenCL until a tensor is made, a device is
queried by index, or `_lazy_init()` runs.
"""
import contextlib

import threading

import torch

from . import _C

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "device", "device_of",
    "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
    "default_generators", "get_device_name", "get_device_properties", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "memory_stats", "empty_cache", "fallback_counts", "reset_fallback_counts",
    "get_amp_supported_dtype", "is_initialized", "OclDeviceProperties",
]

_initialized = False
_init_lock = threading.Lock()


def is_available() -> bool:
    """True when at least one OpenCL device is usable."""
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def _is_in_bad_fork() -> bool:
    return _C._in_bad_fork()


def is_initialized() -> bool:
    return _initialized


def _lazy_init():
    """Called by torch before the first ocl tensor is made: raises a clear error when no
    device exists or when used in a forked child of an initialized parent."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        if _C._in_bad_fork():
            raise RuntimeError(
                "torch_ocl: cannot re-initialize OpenCL in a forked subprocess. To use the 'ocl' "
                "device with multiprocessing, use the 'spawn' start method.")
        if _C._device_count() == 0:
            raise RuntimeError("torch_ocl: the 'ocl' device is not available: " + _C._unavailable_reason())
        _C._init_device(_C._current_device())
        _initialized = True


def _index(dev=None) -> int:
    if dev is None:
        return _C._current_device()
    if isinstance(dev, int):
        return dev
    if isinstance(dev, str):
        dev = torch.device(dev)
    if isinstance(dev, torch.device):
        if dev.type != "ocl":
            raise ValueError(f"Expected an ocl device, got {dev}")
        return _C._current_device() if dev.index is None else dev.index
    raise TypeError(f"Expected a device index, string or torch.device, got {type(dev).__name__}")


def current_device() -> int:
    return _C._current_device()


def set_device(dev) -> None:
    idx = _index(dev)
    if idx >= 0:
        _C._set_device(idx)


class device:
    """Context manager that changes the current ocl device."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _C._current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C._set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager selecting the device of a tensor (a no-op for non-ocl tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "ocl" else None)


def synchronize(device=None) -> None:
    """Waits for all queued work on the device, then raises any device-side error (such as
    an out-of-range index detected by a kernel)."""
    _lazy_init()
    _C._synchronize(_index(device))


class OclDeviceProperties:
    def __init__(self, d: dict):
        self.__dict__.update(d)
        self.total_memory = d["global_mem_size"]
        self.multi_processor_count = d["compute_units"]

    def __repr__(self):
        return (f"OclDeviceProperties(name='{self.name}', vendor='{self.vendor}', type='{self.type}', "
                f"opencl_version='{self.opencl_version}', driver_version='{self.driver_version}', "
                f"compute_units={self.compute_units}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"fp16={self.fp16}, fp64={self.fp64})")


def get_device_properties(device=None) -> OclDeviceProperties:
    return OclDeviceProperties(_C._get_device_properties(_index(device)))


def get_device_name(device=None) -> str:
    return _C._get_device_properties(_index(device))["name"]


# ---- random ---------------------------------------------------------------------------

class _DefaultGenerators:
    def __len__(self):
        return device_count()

    def __getitem__(self, i):
        if not 0 <= i < device_count():
            raise IndexError(f"ocl:{i} does not exist ({device_count()} device(s))")
        return _C._default_generator(i)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


default_generators = _DefaultGenerators()


def get_rng_state(device="ocl") -> torch.Tensor:
    return default_generators[_index(device)].get_state()


def get_rng_state_all():
    return [g.get_state() for g in default_generators]


def set_rng_state(new_state: torch.Tensor, device="ocl") -> None:
    default_generators[_index(device)].set_state(new_state.clone().cpu())


def set_rng_state_all(new_states) -> None:
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


def manual_seed(seed: int) -> None:
    if is_available():
        default_generators[current_device()].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for g in default_generators:
        g.manual_seed(int(seed))


def seed() -> None:
    if is_available():
        default_generators[current_device()].seed()


def seed_all() -> None:
    s = None
    for g in default_generators:
        if s is None:
            s = g.seed()
        else:
            g.manual_seed(s)


def initial_seed() -> int:
    return default_generators[current_device()].initial_seed()


# ---- memory ---------------------------------------------------------------------------

def memory_stats(device=None) -> dict:
    if not is_available():
        return {}
    return dict(_C._memory_stats(_index(device)))


def memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None) -> None:
    if is_available():
        _C._reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Releases every cached, unused device block back to the driver."""
    if is_available():
        _C._empty_cache(-1)


# ---- fallback, AMP --------------------------------------------------------------------

def fallback_counts() -> dict:
    """How often each op without a native kernel ran on the CPU in this process."""
    return dict(_C._fallback_counts())


def reset_fallback_counts() -> None:
    _C._reset_fallback_counts()


def get_amp_supported_dtype():
    return [torch.float16, torch.bfloat16]


def _program_cache_stats() -> dict:
    return dict(_C._program_cache_stats())


def _launch_counts() -> dict:
    return dict(_C._launch_counts())


def _kernel_times() -> dict:
    """{kernel name: (launches, device ms)} since the last _reset_launch_counts(); device times
    are measured only when the process started with TORCH_OCL_PROFILE=1 (0.0 otherwise)."""
    return {k: tuple(v) for k, v in _C._kernel_times().items()}


def _kernel_span_ms() -> float:
    """With TORCH_OCL_PROFILE=1: device milliseconds from the first kernel's start to the last
    kernel's end since the last _reset_launch_counts() (kernel time plus the idle gaps between
    kernels); finishes every queue. 0.0 otherwise."""
    return _C._kernel_span_ms()


def _reset_launch_counts() -> None:
    _C._reset_launch_counts()


@contextlib.contextmanager
def _no_fallback():
    """Temporarily counts fallbacks; raises if any op fell back inside the block."""
    before = fallback_counts()
    yield
    after = fallback_counts()
    new = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    if new:
        raise AssertionError(f"ops fell back to the CPU: {new}")


