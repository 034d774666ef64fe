// What the sparse files (sparse.cpp: COO, sparse_csr.cpp: CSR/CSC) share: the device check of
// their operands and the device guard each registration runs under.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <functional>
#include <initializer_list>
#include <optional>

namespace torch_ocl {
namespace sparse {

// Mixed-device calls reach these kernels (a CPU sparse tensor with an ocl dense one still
// dispatches to the sparse ocl key), so every kernel checks its operands' devices first.
inline void check_same_device(const char* op, std::initializer_list<std::reference_wrapper<const at::Tensor>> ts) {
  const at::Tensor& first = ts.begin()->get();
  for (const at::Tensor& t : ts)
    TORCH_CHECK(t.device() == first.device(), "Expected all tensors to be on the same device, but found at least two "
                "devices, ", first.device(), " and ", t.device(), "! (when checking arguments for ", op, ")");
}

// ATen's generated CPU/CUDA registrations run each kernel under a device guard; a plain m.impl
// does not, and a new SparseTensorImpl or SparseCsrTensorImpl puts its placeholder members on
// the *current* device (then asserts its real ones are on that device), so on ocl:1 it would
// fail. Every sparse registration runs with the current device set to the op's first ocl
// tensor's, or to its ocl device option.
inline void guard_to(c10::OptionalDeviceGuard& g, const at::Tensor& t) {
  if (!g.current_device() && t.defined() && t.device().is_privateuseone()) g.reset_device(t.device());
}
inline void guard_to(c10::OptionalDeviceGuard& g, const std::optional<at::Device>& d) {
  if (!g.current_device() && d.has_value() && d->is_privateuseone()) g.reset_device(*d);
}
template <class T>
void guard_to(c10::OptionalDeviceGuard&, const T&) {}

template <class Fn, Fn fn>
struct OnItsDevice;
template <class R, class... A, R (*fn)(A...)>
struct OnItsDevice<R (*)(A...), fn> {
  static R call(A... args) {
    c10::OptionalDeviceGuard guard;
    (guard_to(guard, args), ...);
    return fn(std::forward<A>(args)...);
  }
};

}  // namespace sparse
}  // namespace torch_ocl

// Registers fn (a function, or its overload of type Sig) to run under OnItsDevice.
#define SPARSE_IMPL(m, name, fn) m.impl(name, &::torch_ocl::sparse::OnItsDevice<decltype(&fn), &fn>::call)
#define SPARSE_IMPL_AS(m, name, Sig, fn) m.impl(name, &::torch_ocl::sparse::OnItsDevice<Sig, &fn>::call)
