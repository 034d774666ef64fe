// The honest CPU fallback for ops without a native kernel: copies arguments to the host,
// runs the CPU kernel, copies results back; warns once per op, counts every call
// (torch.ocl.fallback_counts()), and raises when TORCH_OCL_FALLBACK=error.
#include "Routing.h"
#include "../runtime/Env.h"
#include <ATen/native/CPUFallback.h>
#include <map>
#include <mutex>
#include <torch/library.h>

namespace torch_ocl {
namespace {
std::mutex g_mutex;
std::map<std::string, int64_t> g_counts;
}  // namespace

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> g(g_mutex);
  return g_counts;
}
void reset_fallback_counts() {
  std::lock_guard<std::mutex> g(g_mutex);
  g_counts.clear();
}

namespace {
// `what` says why the op runs on the CPU ("has no native ocl kernel...").
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, const char* what) {
  const auto& on = op.schema().operator_name();
  const std::string name = on.overload_name.empty() ? on.name : on.name + "." + on.overload_name;
  const std::string& mode = env::fallback_mode();
  TORCH_CHECK_NOT_IMPLEMENTED(mode != "error", "torch_ocl: '", name, "' ", what,
                              ", and TORCH_OCL_FALLBACK=error forbids running it on the CPU. Unset "
                              "TORCH_OCL_FALLBACK to allow the (slow) CPU fallback.");
  bool first = false;
  {
    std::lock_guard<std::mutex> g(g_mutex);
    first = g_counts[name]++ == 0;
  }
  if (first && mode != "silent")
    TORCH_WARN("torch_ocl: '", name, "' ", what, " and runs on the CPU (slow: its tensors are copied to the host "
               "and back). Set TORCH_OCL_FALLBACK=error to make this an error.");
  at::native::cpu_fallback(op, stack);
}
}  // namespace

void ocl_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, "has no native ocl kernel");
}

void ocl_cpu_fallback_complex(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, "has no native ocl kernel for complex dtypes or lazily conjugated/negated tensors");
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&ocl_cpu_fallback>()); }
// autocast("ocl") needs a kernel for every op under AutocastPrivateUse1; ops without a cast
// policy pass through.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

}  // namespace torch_ocl
