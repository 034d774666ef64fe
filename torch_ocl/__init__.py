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

from .ocl import (  # noqa: E402,F401
    device_count,
    fallback_counts,
    is_available,
    synchronize,
)

__version__ = "0.1.0"
