"""Every op registered for PrivateUse1 has a case in tests/cases.py (or a test named below), every
op registered for SparsePrivateUse1 is exercised by a test in tests/test_sparse.py, and every op
registered for SparseCsrPrivateUse1 by one in tests/test_sparse_csr.py."""
import torch

from .cases import all_cases
from .test_sparse import COVERED as SPARSE_COVERED
from .test_sparse_csr import COVERED as CSR_COVERED

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


def registered_ops(key="PrivateUse1"):
    regs = torch._C._dispatch_get_registrations_for_dispatch_key(key)
    return sorted(r for r in regs if r.startswith("aten::"))


def test_every_registered_op_has_a_case():
    covered = set(SPARSE_COVERED) | set(CSR_COVERED)  # dense-layout ops that make sparse tensors
    for c in all_cases():
        covered.update(c.covers)
    missing = [op for op in registered_ops() if op not in covered and op not in COVERED_ELSEWHERE]
    assert not missing, f"ops registered for PrivateUse1 without a case in tests/opcases: {missing}"


def test_cases_name_registered_ops():
    regs = set(registered_ops())
    stale = sorted({op for c in all_cases() for op in c.covers if op not in regs})
    assert not stale, f"cases claim to cover ops that are not registered: {stale}"


def test_every_sparse_op_is_tested():
    missing = [op for op in registered_ops("SparsePrivateUse1") if op not in SPARSE_COVERED and op not in CSR_COVERED]
    assert not missing, f"ops registered for SparsePrivateUse1 that no test in tests/test_sparse.py @covers: {missing}"


def test_sparse_tests_name_registered_ops():
    regs = set(registered_ops("SparsePrivateUse1")) | set(registered_ops())
    stale = sorted(op for op in SPARSE_COVERED if op not in regs)
    assert not stale, f"tests/test_sparse.py claims to cover ops that are not registered: {stale}"


def test_every_compressed_sparse_op_is_tested():
    missing = [op for op in registered_ops("SparseCsrPrivateUse1") if op not in CSR_COVERED]
    assert not missing, f"ops registered for SparseCsrPrivateUse1 that no test in tests/test_sparse_csr.py @covers: {missing}"


def test_compressed_sparse_tests_name_registered_ops():
    regs = set(registered_ops("SparseCsrPrivateUse1")) | set(registered_ops())
    stale = sorted(op for op in CSR_COVERED if op not in regs)
    assert not stale, f"tests/test_sparse_csr.py claims to cover ops that are not registered: {stale}"
