// Fused optimizer steps and GradScaler's scale update. _fused_adam_/_fused_adamw_ update
// up to SLOTS parameters (with their grads, moments and device step counts) per launch of
// kernels/optim.cl; they never read anything back to the host, so found_inf and a tensor
// lr stay on the device.
#include "../aten/Routing.h"
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
static_assert(kBlockElems % (4 * kGroup) == 0, "whole float4 batches per work-item (VEC_BATCH)");
// fused_adam's parameters besides the six lists and the Chunk table: lr, lr_tensor, four CT
// scalars, flags, grad_scale and found_inf (scalars counted as 8 bytes).
constexpr size_t kAdamFixedBytes = 8 + 16 + 4 * 8 + 8 + 16 + 16;
constexpr int kAdamLists = 6;

enum AdamFlags { kAmsgrad = 1, kMaximize = 2, kDecoupled = 4, kGradScale = 8, kFoundInf = 16, kLrTensor = 32 };

// The tensor lists and hyperparameters of one _fused_adam(w)_ call.
struct AdamArgs {
  TensorList params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
  double lr;
  at::Tensor lr_tensor;  // defined: lr lives on the device
  double beta1, beta2, weight_decay, eps;
  bool amsgrad, maximize, decoupled;
  const std::optional<at::Tensor>& grad_scale;
  const std::optional<at::Tensor>& found_inf;
};

at::Tensor scalar_on_device(const at::Tensor& t, const at::Tensor& like, const char* what) {
  TORCH_CHECK(t.numel() == 1, what, " must be a single-element tensor");
  return t.to(like.device(), at::kFloat).reshape({});
}

template <typename S>
void adam_impl(const AdamArgs& a) {
  const at::Tensor& p0 = a.params[0];
  Device& d = ocl_device(p0);
  const at::ScalarType t = p0.scalar_type();
  check_dtype_supported(d, t, a.decoupled ? "_fused_adamw_" : "_fused_adam_");
  int flags = (a.amsgrad ? kAmsgrad : 0) | (a.maximize ? kMaximize : 0) | (a.decoupled ? kDecoupled : 0);
  at::Tensor gs, fi, lrt;
  if (a.grad_scale && a.grad_scale->defined()) {
    gs = scalar_on_device(*a.grad_scale, p0, "grad_scale");
    flags |= kGradScale;
  }
  if (a.found_inf && a.found_inf->defined()) {
    fi = scalar_on_device(*a.found_inf, p0, "found_inf");
    flags |= kFoundInf;
  }
  if (a.lr_tensor.defined()) {
    lrt = scalar_on_device(a.lr_tensor, p0, "lr");
    flags |= kLrTensor;
  }
  std::vector<int64_t> numels;
  for (const auto& p : a.params) numels.push_back(p.numel());
  const int slots =
      slot_bucket(count_nonempty(numels), slots_for(d, kAdamLists, ChunkLayout::per_slot(sizeof(S)), kAdamFixedBytes));
  std::string opts = float_type_options(t) + " -DWG=" + std::to_string(kGroup) + " -DSLOTS=" + std::to_string(slots);
  opts += d.info.fp64 ? " -DBC=double" : " -DBC=float";
  // float4 accesses; on GPUs each work-item's loads of a whole block are issued before the
  // barrier (VEC_BATCH). Not on CPU devices, which keep those arrays in memory across the
  // barrier (PoCL, 2-core AVX2 VM, bench/RESULTS.md session 14: GPTMini small's AdamW step,
  // 0.84 M parameters, three alternating rounds 9.6-9.9 ms with them, 3.0-3.6 without).
  if (t == at::kFloat)
    opts += " -DVEC_WIDTH=4 -DVEC_BATCH=" + std::to_string(d.info.is_cpu() ? 0 : kBlockElems / (4 * kGroup));
  Kernel& k = get_kernel(d, "optim", opts, "fused_adam");
  const Buf none{nullptr, 0};
  for (const auto& c : plan<S>(numels, kBlockElems, slots)) {
    launch_groups(d, k, c.groups, kGroup, c.args, slot_bufs(a.params, c), slot_bufs(a.grads, c),
                  slot_bufs(a.exp_avgs, c), slot_bufs(a.exp_avg_sqs, c),
                  a.amsgrad ? slot_bufs(a.max_exp_avg_sqs, c) : null_bufs(c.slots()), slot_bufs(a.steps, c),
                  static_cast<S>(a.lr), lrt.defined() ? buf(lrt) : none, static_cast<S>(a.beta1),
                  static_cast<S>(a.beta2), static_cast<S>(a.weight_decay), static_cast<S>(a.eps),
                  static_cast<cl_int>(flags), gs.defined() ? buf(gs) : none, fi.defined() ? buf(fi) : none);
  }
}

void check_adam_args(const AdamArgs& a) {
  const size_t n = a.params.size();
  TORCH_CHECK(a.grads.size() == n && a.exp_avgs.size() == n && a.exp_avg_sqs.size() == n && a.steps.size() == n,
              "_fused_adam: all tensor lists must have the same length");
  TORCH_CHECK(!a.amsgrad || a.max_exp_avg_sqs.size() == n,
              "_fused_adam: max_exp_avg_sqs must match params with amsgrad");
  if (n == 0) return;
  const at::Tensor& p0 = a.params[0];
  TORCH_CHECK(at::isFloatingType(p0.scalar_type()), "_fused_adam: params must be floating point, got ",
              p0.scalar_type());
  auto same = [&](const at::Tensor& x, const at::Tensor& p, const char* what) {
    TORCH_CHECK(x.device() == p0.device(), "_fused_adam: ", what, " must be on ", p0.device(), ", got ", x.device());
    TORCH_CHECK(x.scalar_type() == p0.scalar_type(), "_fused_adam: ", what, " must have dtype ", p0.scalar_type(),
                ", got ", x.scalar_type());
    TORCH_CHECK(x.sizes() == p.sizes() && x.strides() == p.strides(), "_fused_adam: ", what,
                " must have the size and strides of its param");
  };
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& p = a.params[i];
    TORCH_CHECK(p.device() == p0.device() && p.scalar_type() == p0.scalar_type(),
                "_fused_adam: all params must share a device and dtype");
    TORCH_CHECK(p.is_non_overlapping_and_dense(), "_fused_adam: params must be dense");
    same(a.grads[i], p, "grads");
    same(a.exp_avgs[i], p, "exp_avgs");
    same(a.exp_avg_sqs[i], p, "exp_avg_sqs");
    if (a.amsgrad) same(a.max_exp_avg_sqs[i], p, "max_exp_avg_sqs");
    const at::Tensor& st = a.steps[i];
    TORCH_CHECK(st.numel() == 1 && st.scalar_type() == at::kFloat && st.device() == p0.device(),
                "_fused_adam: state_steps must be single-element float32 tensors on ", p0.device());
  }
}

void adam(const AdamArgs& a) {
  check_adam_args(a);
  if (a.params.empty()) return;
  if (a.params[0].scalar_type() == at::kDouble) adam_impl<double>(a);
  else adam_impl<float>(a);
}

// _fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()
// _fused_adamw_(...the same...) -> ()   (kDecoupledDecay: AdamW)
template <bool kDecoupledDecay>
void fused_adam__ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                     TensorList max_exp_avg_sqs, TensorList steps, double lr, double beta1, double beta2,
                     double weight_decay, double eps, bool amsgrad, bool maximize,
                     const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  adam(AdamArgs{self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, at::Tensor(), beta1, beta2,
                weight_decay, eps, amsgrad, maximize, kDecoupledDecay, grad_scale, found_inf});
}
// _fused_adam_.tensor_lr(... Tensor lr ...) -> ()  and  _fused_adamw_.tensor_lr
// A CPU lr is read on the host (free); a device lr stays on the device.
template <bool kDecoupledDecay>
void fused_adam__tensor_lr_ocl(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                               TensorList max_exp_avg_sqs, TensorList steps, const at::Tensor& lr, double beta1,
                               double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                               const std::optional<at::Tensor>& grad_scale,
                               const std::optional<at::Tensor>& found_inf) {
  const bool host_lr = lr.device().is_cpu();
  adam(AdamArgs{self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, host_lr ? lr.item<double>() : 0.0,
                host_lr ? at::Tensor() : lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, kDecoupledDecay,
                grad_scale, found_inf});
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
  OCL_IMPL(m, "_fused_adam_", fused_adam__ocl<false>);
  OCL_IMPL(m, "_fused_adam_.tensor_lr", fused_adam__tensor_lr_ocl<false>);
  OCL_IMPL(m, "_fused_adamw_", fused_adam__ocl<true>);
  OCL_IMPL(m, "_fused_adamw_.tensor_lr", fused_adam__tensor_lr_ocl<true>);
  OCL_IMPL(m, "_amp_update_scale_", amp_update_scale__ocl);
}

}  // namespace torch_ocl
