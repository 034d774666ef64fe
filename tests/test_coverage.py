"""Every op registered for PrivateUse1 has a case in tests/cases.py."""
import torch

from .cases import all_cases

# Registrations exercised by the runtime tests rather than by an OpCase, with where.
COVERED_ELSEWHERE = {
    "aten::empty.memory_format": "every case (device tensors are created with it)",
    "aten::empty_strided": "every case (to_device_like)",
    "aten::_copy_from": "every case (host<->device copies); tests/test_runtime.py round trips",
    "aten::_copy_from_and_resize": "tests/test_runtime.py::test_copy_from_and_resize",
    "aten::as_strided": "every case (to_device_like builds views with it)",
    "aten::_local_scalar_dense": "tests/test_runtime.py::test_item",
    "aten::_has_compatible_shallow_copy_type": "tests/test_runtime.py::test_weight_tying_survives_to",
    "aten::record_stream": "tests/test_runtime.py::test_record_stream",
    "aten::set_.source_Storage": "tests/test_runtime.py::test_set_",
    "aten::set_.source_Storage_storage_offset": "tests/test_runtime.py::test_set_ and torch.load",
    "aten::set_.source_Tensor": "tests/test_runtime.py::test_set_",
    "aten::set_": "tests/test_runtime.py::test_set_",
    "aten::resize_": "tests/test_runtime.py::test_resize_keeps_data",
}


def registered_ops():
    regs = torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
    return sorted(r for r in regs if r.startswith("aten::"))


def test_every_registered_op_has_a_case():
    covered = set()
    for c in all_cases():
        covered.update(c.covers)
    missing = [op for op in registered_ops() if op not in covered and op not in COVERED_ELSEWHERE]
    assert not missing, f"ops registered for PrivateUse1 without a case in tests/opcases: {missing}"


def test_cases_name_registered_ops():
    regs = set(registered_ops())
    stale = sorted({op for c in all_cases() for op in c.covers if op not in regs})
    assert not stale, f"cases claim to cover ops that are not registered: {stale}"
