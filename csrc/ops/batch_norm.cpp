// Batch normalization (nn.BatchNorm1d/2d/3d, F.batch_norm) forward and backward, training and
// evaluation, with the running statistics updated in place: per-channel reductions over every
// dim but 1 (the device's Welford var_mean and sums) and pointwise ops. 16-bit inputs are
// normalized in float; the saved statistics are float for them, as on the CPU.
#include "../aten/Routing.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/var_mean.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

bool has(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Every dim but the channel dim 1.
std::vector<int64_t> reduce_dims(const at::Tensor& input) {
  std::vector<int64_t> dims{0};
  for (int64_t i = 2; i < input.dim(); ++i) dims.push_back(i);
  return dims;
}

// Elements per channel: what the per-channel statistics average over.
double per_channel_count(const at::Tensor& input) { return static_cast<double>(input.numel() / input.size(1)); }

// A per-channel (C,) tensor shaped to broadcast against input: (1, C, 1, ...).
at::Tensor per_channel(const at::Tensor& v, const at::Tensor& input) {
  std::vector<int64_t> shape(input.dim(), 1);
  shape[1] = input.size(1);
  return v.view(shape);
}

void check_bn_args(const at::Tensor& input, const c10::optional<at::Tensor>& weight,
                   const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& running_mean,
                   const c10::optional<at::Tensor>& running_var, bool training) {
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected an input of at least 2 dims, got ", input.sizes());
  TORCH_CHECK(input.numel() > 0, "input tensor must have at least one element, but got input_sizes = ",
              input.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"batch_norm\" not implemented for '",
                              input.scalar_type(), "'");
  const int64_t c = input.size(1);
  for (const auto* t : {&weight, &bias, &running_mean, &running_var})
    if (has(*t))
      TORCH_CHECK((*t)->numel() == c, "batch_norm: expected a per-channel tensor of ", c, " elements, got ",
                  (*t)->sizes());
  TORCH_CHECK(training || (has(running_mean) && has(running_var)),
              "running_mean and running_var must be defined in evaluation mode");
}

// native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_ocl(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  check_bn_args(input, weight, bias, running_mean, running_var, training);
  const at::ScalarType acc = compute_type_for(input.scalar_type());
  const at::Tensor x = input.to(acc);
  at::Tensor mean, invstd;
  if (training) {
    auto [var, m] = at::var_mean(x, reduce_dims(input), /*correction=*/0, /*keepdim=*/false);
    mean = m;
    invstd = (var + eps).rsqrt();
    // Running statistics: the batch's mean, and its unbiased variance.
    const double n = per_channel_count(input);
    if (has(running_mean)) running_mean->mul_(1 - momentum).add_(mean.to(running_mean->scalar_type()), momentum);
    if (has(running_var))
      running_var->mul_(1 - momentum).add_(var.to(running_var->scalar_type()), momentum * n / (n - 1));
  } else {
    mean = running_mean->to(acc);
    invstd = (running_var->to(acc) + eps).rsqrt();
  }
  at::Tensor y = (x - per_channel(mean, input)) * per_channel(invstd, input);
  if (has(weight)) y = y * per_channel(weight->to(acc), input);
  if (has(bias)) y = y + per_channel(bias->to(acc), input);
  y = y.to(input.scalar_type());
  if (!training) {  // the CPU saves nothing in evaluation mode
    const auto opts = input.options().dtype(acc);
    return {y, at::empty({0}, opts), at::empty({0}, opts)};
  }
  return {y, mean, invstd};
}

// native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward_ocl(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var,
    const c10::optional<at::Tensor>& save_mean, const c10::optional<at::Tensor>& save_invstd, bool train,
    double eps, std::array<bool, 3> output_mask) {
  const at::ScalarType acc = compute_type_for(input.scalar_type());
  const auto dims = reduce_dims(input);
  at::Tensor mean, invstd;
  if (train) {
    TORCH_CHECK(has(save_mean) && has(save_invstd), "batch_norm backward in training mode needs the saved statistics");
    mean = save_mean->to(acc);
    invstd = save_invstd->to(acc);
  } else {
    TORCH_CHECK(has(running_mean) && has(running_var), "batch_norm backward in evaluation mode needs the running statistics");
    mean = running_mean->to(acc);
    invstd = (running_var->to(acc) + eps).rsqrt();
  }
  const at::Tensor g = grad_out.to(acc);
  const at::Tensor w = has(weight) ? weight->to(acc) : at::Tensor();
  at::Tensor gi, gw, gb;
  // The per-channel sums of g and g * xhat: for the bias and weight gradients, and for the input
  // gradient with the batch's statistics (in evaluation mode it needs neither).
  const bool batch_stats = output_mask[0] && train;
  const at::Tensor xhat = batch_stats || output_mask[1]
                              ? (input.to(acc) - per_channel(mean, input)) * per_channel(invstd, input)
                              : at::Tensor();
  const at::Tensor sum_g = batch_stats || output_mask[2] ? g.sum(dims) : at::Tensor();
  const at::Tensor sum_gx = xhat.defined() ? (g * xhat).sum(dims) : at::Tensor();
  if (output_mask[0]) {
    at::Tensor scale = has(weight) ? invstd * w : invstd;
    if (train) {
      // d/dx of (x - mean) * invstd with the batch's statistics: the gradient minus its mean
      // and its projection on xhat, per channel.
      const double n = per_channel_count(input);
      gi = (g - per_channel(sum_g / n, input) - xhat * per_channel(sum_gx / n, input)) * per_channel(scale, input);
    } else {
      gi = g * per_channel(scale, input);
    }
    gi = gi.to(input.scalar_type());
  }
  if (output_mask[1]) gw = has(weight) ? sum_gx.to(weight->scalar_type()) : sum_gx;
  if (output_mask[2]) gb = has(weight) ? sum_g.to(weight->scalar_type()) : sum_g;
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "native_batch_norm", native_batch_norm_ocl);
  OCL_IMPL(m, "native_batch_norm_backward", native_batch_norm_backward_ocl);
}

}  // namespace torch_ocl
