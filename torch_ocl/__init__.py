"""torch_ocl: OpenCL as a PyTorch device.

`import torch` loads this package through the `torch.backends` entry point (set
TORCH_DEVICE_BACKEND_AUTOLOAD=0 to turn that off); importing it explicitly, before or after
torch, works too. It renames PrivateUse1 to "ocl", registers `torch.ocl`, and adds
`Tensor.ocl()`, `Tensor.is_ocl` and `Module.ocl()`. No OpenCL context is created here.
"""


def _autoload():
    # Defined before `import torch`: torch's autoload may call this while this module is
    # still being initialised (when the user imported torch_ocl first). Importing the
    # package is what registers the backend, so there is nothing left to do.
    pass


import atexit  # noqa: E402

import torch  # noqa: E402

from . import _C  # noqa: E402,F401


def _register():
    if torch._C._get_privateuse1_backend_name() != "ocl":
        torch.utils.rename_privateuse1_backend("ocl")
    if not hasattr(torch, "ocl"):
        from . import ocl as _ocl_module

        torch._register_device_module("ocl", _ocl_module)
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True)


_register()


def _release_autograd_graph_tasks():
    # At exit, before Python finalizes: push one empty backward through the autograd thread
    # of every initialized ocl device. torch's backward() stashes a Python object (the caller's
    # contextvars) in the graph task, and a device thread can still hold the task's last
    # reference after backward() returned; if the interpreter is already finalizing when it
    # lets go, taking the GIL for that decref ends the thread inside a destructor
    # (std::terminate, "terminate called without an active exception"; 1 in 20 scripts whose
    # last statement was an ocl backward). Each thread takes our task only after dropping the
    # previous one, and ours holds no Python object (run_backward is called without the stash).
    # No kernel runs: a view's backward and a leaf's first gradient move no data.
    if _C._in_bad_fork():
        return
    try:
        engine = torch.autograd.Variable._execution_engine
        with torch.enable_grad():  # grad mode may have been left off
            for idx in _C._initialized_devices():
                leaf = torch.empty(1, device=torch.device("ocl", idx), requires_grad=True)
                engine.run_backward(tensors=(leaf.view(1),), grad_tensors=(torch.empty_like(leaf),),
                                    keep_graph=False, create_graph=False, inputs=(), allow_unreachable=True,
                                    accumulate_grad=True)
    except Exception:  # noqa: BLE001 - exit must go on whatever state the device is in
        pass


atexit.register(_release_autograd_graph_tasks)

from .ocl import (  # noqa: E402,F401
    device_count,
    fallback_counts,
    is_available,
    synchronize,
)

__version__ = "0.1.0"
