// Registration of kernels that take real dtypes only. `OCL_IMPL(m, "op.overload", fn)`
// registers fn like m.impl does, behind a check: a call with a complex tensor, scalar or
// requested dtype among its arguments goes to the CPU fallback instead (csrc/aten/Fallback.cpp:
// counted, warned about once, an error under TORCH_OCL_FALLBACK=error), so complex64/complex128
// tensors work with every op the CPU supports for them, and a real kernel never runs over
// complex data. Kernels that take complex dtypes themselves (Complex.h) register with m.impl.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/boxing/impl/boxing.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Scalar.h>
#include <torch/library.h>
#include <optional>
#include <string>

namespace torch_ocl {

// The boxed CPU fallback every op without a native kernel runs through (Fallback.cpp), and
// the same for a routed call (its warning names the reason).
void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
void ocl_cpu_fallback_complex(const c10::OperatorHandle& op, torch::jit::Stack* stack);

namespace routing {
// A complex tensor, or one with a lazy conjugate/negative bit: the math-bit fallbacks resolve
// those before any kernel, except for the few ops ATen lets through (mm, bmm, addmm, dot,
// linalg_solve_triangular, ...), whose kernels here read stored values.
inline bool complex_arg(const at::Tensor& t) { return t.defined() && (t.is_complex() || t.is_conj() || t.is_neg()); }
inline bool complex_arg(const std::optional<at::Tensor>& t) { return t.has_value() && complex_arg(*t); }
inline bool complex_arg(const c10::Scalar& s) { return s.isComplex(); }
inline bool complex_arg(const std::optional<c10::Scalar>& s) { return s.has_value() && s->isComplex(); }
inline bool complex_arg(at::ScalarType t) { return at::isComplexType(t); }
inline bool complex_arg(const std::optional<at::ScalarType>& t) { return t.has_value() && at::isComplexType(*t); }
inline bool complex_arg(at::TensorList l) {
  for (const auto& t : l)
    if (complex_arg(t)) return true;
  return false;
}
inline bool complex_arg(const at::ITensorListRef& l) {
  for (const auto& t : l)
    if (complex_arg(t)) return true;
  return false;
}
inline bool complex_arg(const c10::List<std::optional<at::Tensor>>& l) {
  for (const auto& t : l)
    if (complex_arg(static_cast<std::optional<at::Tensor>>(t))) return true;
  return false;
}
inline bool complex_arg(c10::ArrayRef<c10::Scalar> l) {
  for (const auto& s : l)
    if (s.isComplex()) return true;
  return false;
}
template <class T>
bool complex_arg(const T&) {
  return false;
}

// Tag: one instantiation (and one operator handle) per registration.
template <class FnPtr, FnPtr fn, int Tag>
struct RealOnly;
template <class R, class... A, R (*fn)(A...), int Tag>
struct RealOnly<R (*)(A...), fn, Tag> {
  static inline std::optional<c10::OperatorHandle> op;
  static R call(A... args) {
    if ((complex_arg(args) || ...))
      return c10::impl::BoxedKernelWrapper<R(A...)>::call(c10::BoxedKernel::makeFromFunction<&ocl_cpu_fallback_complex>(),
                                                          *op, c10::DispatchKeySet(), args...);
    return fn(std::forward<A>(args)...);
  }
};

template <class FnPtr, FnPtr fn, int Tag>
void impl_real_only(torch::Library& m, const char* name) {
  using W = RealOnly<FnPtr, fn, Tag>;
  const std::string full(name);
  const auto dot = full.find('.');
  W::op = c10::Dispatcher::singleton().findSchemaOrThrow(
      ("aten::" + full.substr(0, dot)).c_str(), dot == std::string::npos ? "" : full.substr(dot + 1).c_str());
  m.impl(name, TORCH_FN(W::call));
}
}  // namespace routing

}  // namespace torch_ocl

#define OCL_IMPL(m, name, fn) ::torch_ocl::routing::impl_real_only<decltype(&fn), &fn, __COUNTER__>(m, name)
