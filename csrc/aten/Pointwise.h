// The generated pointwise engine. Any op of the form out_j = f(in_0, ..., in_k, scalars) runs
// through one TensorIterator (broadcasting, type promotion, any strides, overlap checks,
// out= resizing) and a kernel generated from a one-line OpenCL expression, cached per
// (name, operand dtypes, compute type, which operands are CPU scalars).
//
// Expressions see the inputs as `a`, `b`, `c`, `d` (converted to their value type, the
// compute type unless overridden), extra scalars as `s0`..`s3` (compute type), and the
// compute type as the macro CT (with CT_IS_FP / CT_IS_INT / CT_IS_BOOL, CT_IS_DOUBLE and
// CT_IS_SIGNED describing it). A single expression gives output 0; a statement block
// assigns `r0`, `r1`, ... (each of compute type unless out_types overrides). Helper
// functions live in kernels/elementwise.cl, which every generated program includes (through the
// spec's prelude, when it has one).
// A spec with reports_errors gets `err_flag` (the device's sticky error word) for
// report_error(err_flag, ERR_...).
//
// Launch paths: contiguous operands whose byte offsets are 4-element aligned take a kernel
// that moves 4 elements per work-item with vector loads/stores; other contiguous operands a
// flat kernel; anything else a strided kernel (32-bit index math when it fits).
#pragma once
#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <string>
#include <vector>

namespace torch_ocl {

struct PointwiseSpec {
  std::string name;  // unique per expression (cache key, kernel name suffix)
  std::string expr;
  at::ScalarType compute = at::ScalarType::Undefined;  // Undefined: iter.common_dtype()
  // Value types the inputs are converted to before `expr` (Undefined = compute type).
  std::vector<at::ScalarType> in_types;
  // Value types of the results r0.. before the store to the outputs (Undefined = compute).
  std::vector<at::ScalarType> out_types;
  // The expression may call report_error(err_flag, code) (e.g. integer division by zero).
  bool reports_errors = false;
  // Optional: `expr` over 8-element vectors (inputs a, b, ... of type CT8) for pw_vec on CPU
  // devices, used where every operand is a tensor stored in a floating compute type. For
  // functions that a CPU driver computes much faster on vectors than lane by lane (PoCL's erf on
  // an AVX2 core: 28 ns per element in scalars, 5.1 in 4-element vectors, 2.6 in 8-element ones).
  std::string vec_expr = {};
  // Optional: the expression for a complex compute type (csrc/aten/Complex.h). Operands and
  // results are then float2 / double2 (real, imaginary); CX names that type, CT its real part
  // type, and kernels/complex.clh's cx_* helpers do the arithmetic. A spec without it raises
  // NotImplementedError when an operand or the compute type is complex.
  std::string cexpr = {};
  // Optional: the kernel source (stem under csrc/kernels) the generated program starts with in
  // place of elementwise.cl; it must include elementwise.cl itself. For helper functions that only
  // a few specs call (kernels/special.cl: the special functions), so that the programs of the
  // common ops, which every pointwise op compiles, stay small.
  std::string prelude = {};
};

// Runs spec over a built iterator. Scalars are passed as compute-type arguments. `compute`,
// when given, overrides spec.compute (for ops whose compute type is only known per call).
// Kernels are cached per (device, spec.name, dtypes, compute type, CPU-scalar operands).
void pointwise(at::TensorIteratorBase& iter, const PointwiseSpec& spec, c10::ArrayRef<c10::Scalar> scalars = {},
               at::ScalarType compute = at::ScalarType::Undefined);

// The type arithmetic happens in for a tensor dtype (float16/bfloat16 compute in float).
at::ScalarType compute_type_for(at::ScalarType t);
// The type sums and saved statistics are kept in: double for double, float for the rest.
inline at::ScalarType float_or_double(at::ScalarType t) { return t == at::kDouble ? at::kDouble : at::kFloat; }

// Convenience builders (allow CPU scalars, promote to a common dtype, cast to outputs).
at::TensorIterator make_unary_iter(const at::Tensor& out, const at::Tensor& a, bool promote_int_to_float = false);
at::TensorIterator make_binary_iter(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                                    bool promote_int_to_float = false);
at::TensorIterator make_nullary_iter(const at::Tensor& out);

// Device-side strided/typed copy of src into dst (same device; broadcasting src).
void copy_on_device(const at::Tensor& dst, const at::Tensor& src);

}  // namespace torch_ocl
