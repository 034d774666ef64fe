// Complex dtypes on ocl. complex64 and complex128 tensors are stored as OpenCL float2 / double2
// (real, imaginary), the layout of c10::complex. Allocation, copies, fill_ and the views take
// them; any other op takes them only where it says so: the pointwise engine runs a spec's
// complex form (PointwiseSpec::cexpr) and raises NotImplementedError for a spec without one,
// and cl_type_name() (which every other kernel family builds from) keeps raising for them, so
// no real kernel ever runs over complex data by accident.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <string>

namespace torch_ocl {
class Device;

// "float2" for complex64, "double2" for complex128.
std::string cl_complex_type_name(at::ScalarType t);
// Throws NotImplementedError naming `op` unless the device stores t: complex64 everywhere,
// complex128 where the device has cl_khr_fp64, never ComplexHalf.
void check_complex_supported(Device& d, at::ScalarType t, const char* op);
// check_dtype_supported() for real dtypes, check_complex_supported() for complex ones.
void check_storable(Device& d, at::ScalarType t, const char* op);

// t's stored values: an alias of t without its lazy conjugate and negative bits.
inline at::Tensor stored_values(const at::Tensor& t) {
  at::Tensor p = t.alias();
  p._set_conj(false);
  p._set_neg(false);
  return p;
}
}  // namespace torch_ocl
