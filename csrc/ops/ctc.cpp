// CTC loss (F.ctc_loss): _ctc_loss and _ctc_loss_backward, with the IntArrayRef and the Tensor
// lengths. Kernels in kernels/ctc.cl: the alpha recursion per batch element (forward), the beta
// recursion and then one work-group per (t, b) for the gradient (backward). log_probs is read
// through its strides; targets (2-D padded or 1-D concatenated, int64 or int32) are made dense
// int64 on the device, with each element's lengths and label offset in a small [N, 3] table.
// The argument checks and their messages are those of ATen's CPU kernel, in its order.
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include <ATen/TensorUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/tensor.h>
#include <torch/library.h>

#include <algorithm>

namespace torch_ocl {
namespace {

constexpr const char* kChecked = "ctc_loss_allocate_outputs";

// What the kernels need about the batch: [N, 3] int64 on the device (input length, target
// length, label offset), dense int64 targets, and the longest target.
struct CtcBatch {
  at::Tensor meta, targets;
  int64_t max_target_length = 0;
};

// ATen's checks of log_probs, targets and the lengths, then the per-element table.
CtcBatch ctc_batch(const at::Tensor& log_probs, const at::Tensor& targets, at::IntArrayRef input_lengths,
                   at::IntArrayRef target_lengths, int64_t blank) {
  const at::ScalarType t = log_probs.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"ctc_loss\" not implemented for '",
                              c10::toString(t), "'");
  check_dtype_supported(ocl_device(log_probs), t, "ctc_loss");
  TORCH_CHECK(log_probs.numel() > 0, "log_probs tensor must not be empty");
  at::TensorArg lp_arg{log_probs, "log_probs", 1}, tg_arg{targets, "targets", 2};
  at::checkScalarType(kChecked, tg_arg, targets.scalar_type() == at::kLong ? at::kLong : at::kInt);
  at::checkDim(kChecked, lp_arg, 3);
  at::checkDimRange(kChecked, tg_arg, 1, 3);
  const int64_t batch = log_probs.size(1), classes = log_probs.size(2), max_input = log_probs.size(0);
  TORCH_CHECK(0 <= blank && blank < classes, "blank must be in label range");
  TORCH_CHECK(int64_t(input_lengths.size()) == batch, "input_lengths must be of size batch_size");
  TORCH_CHECK(int64_t(target_lengths.size()) == batch, "target_lengths must be of size batch_size");

  CtcBatch r;
  std::vector<int64_t> meta(3 * batch);
  int64_t pos = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = target_lengths[b];
    TORCH_CHECK(len >= 0, "Expected target_lengths to have value at least 0, but got value ", len,
                " (while checking arguments for ", kChecked, ")");
    if (targets.dim() == 1) {
      meta[3 * b + 2] = pos;
      pos += len;
    } else {
      TORCH_CHECK(targets.size(1) >= len, "Expected tensor to have size at least ", len,
                  " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets' (while checking "
                  "arguments for ", kChecked, ")");
      meta[3 * b + 2] = b * targets.size(1);
    }
    meta[3 * b + 1] = len;
    r.max_target_length = std::max(r.max_target_length, len);
  }
  if (targets.dim() == 1) at::checkSize(kChecked, tg_arg, 0, pos);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = input_lengths[b];
    TORCH_CHECK(len >= 0, "Expected input_lengths to have value at least 0, but got value ", len,
                " (while checking arguments for ", kChecked, ")");
    TORCH_CHECK(len <= max_input, "Expected input_lengths to have value at most ", max_input, ", but got value ",
                len, " (while checking arguments for ", kChecked, ")");
    meta[3 * b] = len;
  }
  r.meta = at::tensor(meta, at::kLong).to(log_probs.device());
  r.targets = targets.to(log_probs.device(), at::kLong).contiguous();
  return r;
}

std::string dt_option(const at::Tensor& t) {
  return "-DDT=" + cl_type_name(t.scalar_type());
}

// Work-items per group for a recursion over `states` states (one warp at least, 256 at most).
size_t states_wg(int64_t states) { return std::min<size_t>(256, round_up(size_t(std::max<int64_t>(states, 1)), 32)); }

std::vector<int64_t> host_lengths(const at::Tensor& lengths, const char* what) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false), what, " must be integral");
  at::Tensor h = lengths.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(h.data_ptr<int64_t>(), h.data_ptr<int64_t>() + h.numel());
}

}  // namespace

// _ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> _ctc_loss_ocl(const at::Tensor& log_probs, const at::Tensor& targets,
                                                 at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                                 int64_t blank, bool zero_infinity) {
  (void)zero_infinity;  // the loss stays inf here; ctc_loss zeroes it, the backward zeroes its gradient
  CtcBatch cb = ctc_batch(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  const int64_t S2 = 2 * cb.max_target_length + 1;
  at::Tensor nll = at::empty({N}, log_probs.options());
  at::Tensor log_alpha = at::empty({N, T, S2}, log_probs.options());
  Device& d = ocl_device(log_probs);
  const size_t wg = states_wg(S2);
  launch(d, get_kernel(d, "ctc", dt_option(log_probs), "ctc_loss_fwd"), Range(N * wg), Range(wg), buf(log_probs),
         log_probs.stride(0), log_probs.stride(1), log_probs.stride(2), buf(cb.targets), buf(cb.meta), buf(log_alpha),
         buf(nll), T, S2, C, cl_int(blank), d.error_buf);
  return {nll, log_alpha};
}

// _ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> _ctc_loss_tensor_ocl(const at::Tensor& log_probs, const at::Tensor& targets,
                                                        const at::Tensor& input_lengths,
                                                        const at::Tensor& target_lengths, int64_t blank,
                                                        bool zero_infinity) {
  const std::vector<int64_t> il = host_lengths(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = host_lengths(target_lengths, "target_lengths");
  return _ctc_loss_ocl(log_probs, targets, il, tl, blank, zero_infinity);
}

// _ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor
at::Tensor _ctc_loss_backward_ocl(const at::Tensor& grad_out, const at::Tensor& log_probs, const at::Tensor& targets,
                                  at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                                  const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha, int64_t blank,
                                  bool zero_infinity) {
  CtcBatch cb = ctc_batch(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t T = log_probs.size(0), N = log_probs.size(1), C = log_probs.size(2);
  const int64_t S2 = 2 * cb.max_target_length + 1;
  TORCH_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == N && log_alpha.size(1) == T && log_alpha.size(2) == S2,
              "ctc_loss_backward: log_alpha must have shape [", N, ", ", T, ", ", S2, "], got ", log_alpha.sizes());
  TORCH_CHECK(neg_log_likelihood.numel() == N && grad_out.numel() == N,
              "ctc_loss_backward: expected grad and neg_log_likelihood with ", N, " elements");
  const at::Tensor la = log_alpha.to(log_probs.scalar_type()).contiguous();
  const at::Tensor nll = neg_log_likelihood.to(log_probs.scalar_type()).contiguous();
  const at::Tensor go = grad_out.to(log_probs.scalar_type()).reshape({N});
  at::Tensor log_beta = at::empty({N, T, S2}, log_probs.options());
  at::Tensor grad = at::empty({T, N, C}, log_probs.options());
  Device& d = ocl_device(log_probs);
  const std::string opts = dt_option(log_probs);
  const size_t wg = states_wg(S2);
  launch(d, get_kernel(d, "ctc", opts, "ctc_loss_beta"), Range(N * wg), Range(wg), buf(log_probs),
         log_probs.stride(0), log_probs.stride(1), log_probs.stride(2), buf(cb.targets), buf(cb.meta), buf(log_beta),
         T, S2, C, cl_int(blank), d.error_buf);
  const size_t gwg = std::min<size_t>(256, round_up(size_t(std::max(C, cb.max_target_length + 1)), 32));
  launch(d, get_kernel(d, "ctc", opts, "ctc_loss_bwd"), Range(T * gwg, N), Range(gwg, 1), buf(log_probs),
         log_probs.stride(0), log_probs.stride(1), log_probs.stride(2), buf(cb.targets), buf(cb.meta), buf(la),
         buf(log_beta), buf(nll), buf(go), go.stride(0), buf(grad), grad.stride(0), grad.stride(1), grad.stride(2), T,
         S2, C, cl_int(blank), cl_int(zero_infinity), d.error_buf);
  return grad;
}

// _ctc_loss_backward.Tensor(Tensor grad, Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor
at::Tensor _ctc_loss_backward_tensor_ocl(const at::Tensor& grad_out, const at::Tensor& log_probs,
                                         const at::Tensor& targets, const at::Tensor& input_lengths,
                                         const at::Tensor& target_lengths, const at::Tensor& neg_log_likelihood,
                                         const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const std::vector<int64_t> il = host_lengths(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = host_lengths(target_lengths, "target_lengths");
  return _ctc_loss_backward_ocl(grad_out, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank,
                                zero_infinity);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_ctc_loss", _ctc_loss_ocl);
  OCL_IMPL(m, "_ctc_loss.Tensor", _ctc_loss_tensor_ocl);
  OCL_IMPL(m, "_ctc_loss_backward", _ctc_loss_backward_ocl);
  OCL_IMPL(m, "_ctc_loss_backward.Tensor", _ctc_loss_backward_tensor_ocl);
}

}  // namespace torch_ocl
