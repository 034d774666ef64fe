// Helpers shared by the elementwise op files (elementwise.cpp, activation.cpp): iterator
// builders that mirror ATen's (same promotion and out= rules) plus dtype-kind checks.
#pragma once
#include "../aten/Pointwise.h"
#include <ATen/ScalarOps.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>

namespace torch_ocl::ew {

// Dtype kinds an op supports (bit set).
enum Kind : unsigned { kFloating = 1, kIntegral = 2, kBoolean = 4, kAnyKind = 7 };

// NotImplementedError ("\"op\" not implemented for 'Long'", as on the CPU) unless t's kind
// is in `allowed`.
void check_kind(const char* op, at::ScalarType t, unsigned allowed);

// A spec with input/output value types and the error flag (see PointwiseSpec).
inline PointwiseSpec spec(const char* name, const char* expr, std::vector<at::ScalarType> in_types = {},
                          std::vector<at::ScalarType> out_types = {}, bool reports_errors = false) {
  PointwiseSpec s;
  s.name = name;
  s.expr = expr;
  s.in_types = std::move(in_types);
  s.out_types = std::move(out_types);
  s.reports_errors = reports_errors;
  return s;
}

// s with a complex form (PointwiseSpec::cexpr): the op then takes complex64/complex128.
inline PointwiseSpec with_complex(PointwiseSpec s, const char* cexpr) {
  s.cexpr = cexpr;
  return s;
}

// out = f(self) with ATen's unary_op rules (out dtype must match), checking the dtype kind.
at::Tensor& unary(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s, unsigned kinds,
                  c10::ArrayRef<c10::Scalar> scalars = {});
// out = f(self) with ATen's unary_float_op rules (integers promote to the default float).
at::Tensor& unary_float(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s,
                        c10::ArrayRef<c10::Scalar> scalars = {});
// out = f(a, b) with ATen's binary_op (or binary_float_op) rules.
at::Tensor& binary(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, const PointwiseSpec& s, unsigned kinds,
                   c10::ArrayRef<c10::Scalar> scalars = {}, bool float_op = false);
// True for a 0-dim CPU tensor (a Python/CPU scalar operand) equal to zero.
bool is_cpu_scalar_zero(const at::Tensor& t);

}  // namespace torch_ocl::ew
