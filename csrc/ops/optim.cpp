// Fused optimizer steps and GradScaler's scale update. _fused_adam_/_fused_adamw_ update
// kSlots parameters (with their grads, moments and device step counts) per launch of
// kernels/optim.cl; they never read anything back to the host, so found_inf and a tensor
// lr stay on the device.
#include "../runtime/Launch.h"
#include "foreach.h"
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {
using namespace multi_tensor;
using at::TensorList;

constexpr size_t kGroup = 256;          // WG of fused_adam
constexpr uint32_t kBlockElems = 4096;  // elements per work-group

enum AdamFlags { kAmsgrad = 1, kMaximize = 2, kDecoupled = 4, kGradScale = 8, kFoundInf = 16, kLrTensor = 32 };

at::Tensor scalar_on_device(const at::Tensor& t, const at::Tensor& like, const char* what) {
  TORCH_CHECK(t.numel() == 1, what, " must be a single-element tensor");
  return t.to(like.device(), at::kFloat).reshape({});
}

template <typename S>
void adam_impl(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
               TensorList max_exp_avg_sqs, TensorList steps, double lr, const at::Tensor& lr_tensor, double beta1,
               double beta2, double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled,
               const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const at::Tensor& p0 = params[0];
  Device& d = ocl_device(p0);
  const at::ScalarType t = p0.scalar_type();
  check_dtype_supported(d, t, decoupled ? "_fused_adamw_" : "_fused_adam_");
  int flags = (amsgrad ? kAmsgrad : 0) | (maximize ? kMaximize : 0) | (decoupled ? kDecoupled : 0);
  at::Tensor gs, fi, lrt;
  if (grad_scale && grad_scale->defined()) {
    gs = scalar_on_device(*grad_scale, p0, "grad_scale");
    flags |= kGradScale;
  }
  if (found_inf && found_inf->defined()) {
    fi = scalar_on_device(*found_inf, p0, "found_inf");
    flags |= kFoundInf;
  }
  if (lr_tensor.defined()) {
    lrt = scalar_on_device(lr_tensor, p0, "lr");
    flags |= kLrTensor;
  }
  std::string opts = float_type_options(t) + " -DWG=" + std::to_string(kGroup);
  opts += d.info.fp64 ? " -DBC=double" : " -DBC=float";
  Kernel& k = get_kernel(d, "optim", opts, "fused_adam");
  std::vector<int64_t> numels;
  for (const auto& p : params) numels.push_back(p.numel());
  for (const auto& c : plan<S>(numels, kBlockElems)) {
    SlotBufs pb = slot_bufs(params, c);
    const Buf any = pb[0];
    launch_groups(d, k, c.groups, kGroup, pb, slot_bufs(grads, c), slot_bufs(exp_avgs, c), slot_bufs(exp_avg_sqs, c),
                  amsgrad ? slot_bufs(max_exp_avg_sqs, c) : pb, slot_bufs(steps, c), c.args, static_cast<S>(lr),
                  lrt.defined() ? buf(lrt) : any, static_cast<S>(beta1), static_cast<S>(beta2),
                  static_cast<S>(weight_decay), static_cast<S>(eps), static_cast<cl_int>(flags),
                  gs.defined() ? buf(gs) : any, fi.defined() ? buf(fi) : any);
  }
}

void check_adam_args(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                     TensorList max_exp_avg_sqs, TensorList steps, bool amsgrad) {
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n && steps.size() == n,
              "_fused_adam: all tensor lists must have the same length");
  TORCH_CHECK(!amsgrad || max_exp_avg_sqs.size() == n, "_fused_adam: max_exp_avg_sqs must match params with amsgrad");
  if (n == 0) return;
  const at::Tensor& p0 = params[0];
  TORCH_CHECK(at::isFloatingType(p0.scalar_type()), "_fused_adam: params must be floating point, got ",
              p0.scalar_type());
  auto same = [&](const at::Tensor& a, const at::Tensor& p, const char* what) {
    TORCH_CHECK(a.device() == p0.device(), "_fused_adam: ", what, " must be on ", p0.device(), ", got ", a.device());
    TORCH_CHECK(a.scalar_type() == p0.scalar_type(), "_fused_adam: ", what, " must have dtype ", p0.scalar_type(),
                ", got ", a.scalar_type());
    TORCH_CHECK(a.sizes() == p.sizes() && a.strides() == p.strides(), "_fused_adam: ", what,
                " must have the size and strides of its param");
  };
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& p = params[i];
    TORCH_CHECK(p.device() == p0.device() && p.scalar_type() == p0.scalar_type(),
                "_fused_adam: all params must share a device and dtype");
    TORCH_CHECK(p.is_non_overlapping_and_dense(), "_fused_adam: params must be dense");
    same(grads[i], p, "grads");
    same(exp_avgs[i], p, "exp_avgs");
    same(exp_avg_sqs[i], p, "exp_avg_sqs");
    if (amsgrad) same(max_exp_avg_sqs[i], p, "max_exp_avg_sqs");
    TORCH_CHECK(steps[i].numel() == 1 && steps[i].scalar_type() == at::kFloat && steps[i].device() == p0.device(),
                "_fused_adam: state_steps must be single-element float32 tensors on ", p0.device());
  }
}

void adam(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
          TensorList max_exp_avg_sqs, TensorList steps, double lr, const at::Tensor& lr_tensor, double beta1,
          double beta2, double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled,
          const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  check_adam_args(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, amsgrad);
  if (params.empty()) return;
  if (params[0].scalar_type() == at::kDouble)
    adam_impl<double>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, lr_tensor, beta1, beta2,
                      weight_decay, eps, amsgrad, maximize, decoupled, grad_scale, found_inf);
  else
    adam_impl<float>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, lr_tensor, beta1, beta2,
                     weight_decay, eps, amsgrad, maximize, decoupled, grad_scale, found_inf);
}

// A CPU lr is read on the host (free); a device lr stays on the device.
void adam_tensor_lr(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                    TensorList max_exp_avg_sqs, TensorList steps, const at::Tensor& lr, double beta1, double beta2,
                    double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled,
                    const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  if (lr.device().is_cpu())
    return adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr.item<double>(), at::Tensor(), beta1,
                beta2, weight_decay, eps, amsgrad, maximize, decoupled, grad_scale, found_inf);
  adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, 0.0, lr, beta1, beta2, weight_decay, eps, amsgrad,
       maximize, decoupled, grad_scale, found_inf);
}

// _fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()
void fused_adam__ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                     TensorList max_exp_avg_sqs, TensorList steps, double lr, double beta1, double beta2,
                     double weight_decay, double eps, bool amsgrad, bool maximize,
                     const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, at::Tensor(), beta1, beta2, weight_decay, eps,
       amsgrad, maximize, false, grad_scale, found_inf);
}
// _fused_adam_.tensor_lr(... Tensor lr ...) -> ()
void fused_adam__tensor_lr_ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                               TensorList max_exp_avg_sqs, TensorList steps, const at::Tensor& lr, double beta1,
                               double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                               const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  adam_tensor_lr(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
                 amsgrad, maximize, false, grad_scale, found_inf);
}
// _fused_adamw_(...same as _fused_adam_...) -> ()
void fused_adamw__ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                      TensorList max_exp_avg_sqs, TensorList steps, double lr, double beta1, double beta2,
                      double weight_decay, double eps, bool amsgrad, bool maximize,
                      const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  adam(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, at::Tensor(), beta1, beta2, weight_decay, eps,
       amsgrad, maximize, true, grad_scale, found_inf);
}
// _fused_adamw_.tensor_lr(... Tensor lr ...) -> ()
void fused_adamw__tensor_lr_ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                                TensorList max_exp_avg_sqs, TensorList steps, const at::Tensor& lr, double beta1,
                                double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                                const std::optional<at::Tensor>& grad_scale,
                                const std::optional<at::Tensor>& found_inf) {
  adam_tensor_lr(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps,
                 amsgrad, maximize, true, grad_scale, found_inf);
}

// _amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> Tensor(a!)
at::Tensor& amp_update_scale__ocl(at::Tensor& self, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                                  double growth, double backoff, int64_t interval) {
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(self.numel() == 1, "current_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.");
  TORCH_CHECK(self.scalar_type() == at::kFloat, "current_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  TORCH_CHECK(growth_tracker.device() == self.device() && found_inf.device() == self.device(),
              "_amp_update_scale_: all tensors must be on ", self.device());
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "optim", "", "amp_update_scale");
  launch(d, k, Range(1), Range(1), buf(self), buf(growth_tracker), buf(found_inf), static_cast<float>(growth),
         static_cast<float>(backoff), static_cast<cl_int>(interval));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adam_", fused_adam__ocl);
  m.impl("_fused_adam_.tensor_lr", fused_adam__tensor_lr_ocl);
  m.impl("_fused_adamw_", fused_adamw__ocl);
  m.impl("_fused_adamw_.tensor_lr", fused_adamw__tensor_lr_ocl);
  m.impl("_amp_update_scale_", amp_update_scale__ocl);
}

}  // namespace torch_ocl
