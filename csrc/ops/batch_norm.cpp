// Batch normalization (nn.BatchNorm1d/2d/3d, F.batch_norm) forward and backward, training and
// evaluation, with the running statistics updated in place, on kernels/batch_norm.cl: per-channel
// partial statistics over slices of the batch, one small kernel that combines them per channel,
// and one affine pass over the elements, three launches each way. 16-bit inputs are normalized
// in float; the saved statistics are float for them, as on the CPU.
#include "../aten/Routing.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include "rows.h"
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

bool has(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Elements per channel: what the per-channel statistics average over.
double per_channel_count(const at::Tensor& input) { return static_cast<double>(input.numel() / input.size(1)); }

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

// The batch_norm.cl launches: the statistics, coefficients and affine pass over input viewed
// as contiguous (N, C, HW).
struct BnLaunch {
  Device& d;
  std::string opts;
  int64_t N, C, HW;
  int64_t S;  // slices of the batch per channel in bn_partial
  rows::Split rows;  // bn_affine's teams over the N * C rows
  int T;             // bn_partial's team width (its reduction spans the whole work-group)

  BnLaunch(const at::Tensor& x, at::ScalarType acc, const char* op)
      : d(ocl_device(x)), N(x.size(0)), C(x.size(1)), HW(x.numel() / std::max<int64_t>(x.size(0) * x.size(1), 1)) {
    check_dtype_supported(d, x.scalar_type(), op);
    const rows::Config rc = rows::config(d, rows::kNorm);
    opts = "-DX_KIND=" + std::to_string(storage_kind(x.scalar_type(), op)) +
           rows::options(rc, acc == at::kDouble, rows::reduce_for(rc, rows::kMaxWG));
    // About four work-groups per compute unit in all, each slice at least one row.
    const int64_t cu = std::max<int64_t>(d.info.compute_units, 1);
    S = std::max<int64_t>(1, std::min<int64_t>((4 * cu + C - 1) / std::max<int64_t>(C, 1), N));
    T = rows::team_width(HW, 1);
    rows = rows::split(N * C, HW, rc.items, true, N * C);
  }
  // Per-channel partials of x (dy undefined) or of dy and dy * (x - mean).
  at::Tensor partial(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& mean) {
    at::Tensor part = at::empty({C, S, 3}, mean.defined() ? mean.options() : x.options().dtype(acc_of(x)));
    launch(d, get_kernel(d, "batch_norm", opts, "bn_partial"), Range(static_cast<size_t>(C * S) * rows::kMaxWG),
           Range(rows::kMaxWG), buf(x), dy.defined() ? buf(dy) : Buf{}, mean.defined() ? buf(mean) : Buf{}, buf(part),
           N, cl_int(C), cl_int(HW), cl_int(S), cl_int(T), cl_int(dy.defined()));
    return part;
  }
  // out = in1 * k1 + in2 * k2 + k3 per channel (coef [3][C]).
  void affine(const at::Tensor& in1, const at::Tensor& in2, const at::Tensor& coef, const at::Tensor& out) {
    const size_t groups = std::min<size_t>(rows.groups, 65536);
    launch(d, get_kernel(d, "batch_norm", opts, "bn_affine"), Range(groups * rows.local), Range(rows.local), buf(in1),
           in2.defined() ? buf(in2) : Buf{}, buf(coef), buf(out), N * C, cl_int(C), cl_int(HW), cl_int(rows.T),
           cl_int(in2.defined()));
  }
  static at::ScalarType acc_of(const at::Tensor& x) { return compute_type_for(x.scalar_type()); }
};

// A per-channel parameter or statistic as a contiguous tensor of the accumulation type (itself
// when it is one already), or undefined.
at::Tensor as_acc(const c10::optional<at::Tensor>& t, at::ScalarType acc) {
  return has(t) ? t->to(acc).contiguous() : at::Tensor();
}

// native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
// Training: bn_partial, bn_finalize (saving mean and invstd, updating the running statistics)
// and bn_affine; evaluation: bn_finalize from the running statistics and bn_affine. The output
// keeps the input's memory format, as on the CPU.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_ocl(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  check_bn_args(input, weight, bias, running_mean, running_var, training);
  const at::ScalarType acc = compute_type_for(input.scalar_type());
  const at::Tensor x = input.contiguous();
  BnLaunch L(x, acc, "native_batch_norm");
  const auto opts = input.options().dtype(acc);
  const at::Tensor w = as_acc(weight, acc), b = as_acc(bias, acc);
  at::Tensor rm = as_acc(running_mean, acc), rv = as_acc(running_var, acc);
  at::Tensor mean = at::empty({training ? L.C : 0}, opts), invstd = at::empty({training ? L.C : 0}, opts);
  at::Tensor coef = at::empty({3, L.C}, opts);
  const at::Tensor part = training ? L.partial(x, at::Tensor(), at::Tensor()) : at::Tensor();
  auto go = [&](auto v) {
    using T = decltype(v);
    launch(L.d, get_kernel(L.d, "batch_norm", L.opts, "bn_finalize"), Range(static_cast<size_t>(L.C)), Range(),
           part.defined() ? buf(part) : Buf{}, w.defined() ? buf(w) : Buf{}, b.defined() ? buf(b) : Buf{},
           rm.defined() ? buf(rm) : Buf{}, rv.defined() ? buf(rv) : Buf{}, training ? buf(mean) : Buf{},
           training ? buf(invstd) : Buf{}, buf(coef), Buf{}, Buf{}, cl_int(L.C), cl_int(L.S),
           static_cast<T>(per_channel_count(input)), static_cast<T>(eps), static_cast<T>(momentum),
           cl_int(training ? 0 : 1), cl_int(w.defined()), cl_int(b.defined()), cl_int(training && rm.defined()),
           cl_int(training && rv.defined()), cl_int(0), cl_int(0));
  };
  if (acc == at::kDouble) go(double{});
  else go(float{});
  if (training) {  // where the running statistics were converted, write them back
    if (rm.defined() && !rm.is_same(*running_mean)) running_mean->copy_(rm);
    if (rv.defined() && !rv.is_same(*running_var)) running_var->copy_(rv);
  }
  at::Tensor y = at::empty_like(x);
  L.affine(x, at::Tensor(), coef, y);
  y = y.contiguous(input.suggest_memory_format());
  return {y, mean, invstd};
}

// native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
// bn_partial (the sums of dy and dy * (x - mean)), bn_finalize (grad_weight, grad_bias and the
// input gradient's coefficients) and, for grad_input, bn_affine.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward_ocl(
    const at::Tensor& grad_out, const at::Tensor& input, const c10::optional<at::Tensor>& weight,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var,
    const c10::optional<at::Tensor>& save_mean, const c10::optional<at::Tensor>& save_invstd, bool train,
    double eps, std::array<bool, 3> output_mask) {
  const at::ScalarType acc = compute_type_for(input.scalar_type());
  TORCH_CHECK(!train || (has(save_mean) && has(save_invstd)),
              "batch_norm backward in training mode needs the saved statistics");
  TORCH_CHECK(train || (has(running_mean) && has(running_var)),
              "batch_norm backward in evaluation mode needs the running statistics");
  TORCH_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(),
              "batch_norm backward: expected grad_out of the input's shape and dtype ", input.sizes(), " ",
              input.scalar_type(), ", got ", grad_out.sizes(), " ", grad_out.scalar_type());
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  BnLaunch L(x, acc, "native_batch_norm_backward");
  const auto opts = input.options().dtype(acc);
  const at::Tensor w = as_acc(weight, acc);
  const at::Tensor mean = train ? as_acc(save_mean, acc) : as_acc(running_mean, acc);
  const at::Tensor stat2 = train ? as_acc(save_invstd, acc) : as_acc(running_var, acc);
  at::Tensor gw = output_mask[1] ? at::empty({L.C}, opts) : at::Tensor();
  at::Tensor gb = output_mask[2] ? at::empty({L.C}, opts) : at::Tensor();
  at::Tensor coef = at::empty({3, L.C}, opts);
  const at::Tensor part = L.partial(x, dy, mean);
  auto go = [&](auto v) {
    using T = decltype(v);
    launch(L.d, get_kernel(L.d, "batch_norm", L.opts, "bn_finalize"), Range(static_cast<size_t>(L.C)), Range(),
           buf(part), w.defined() ? buf(w) : Buf{}, Buf{}, train ? Buf{} : buf(mean), train ? Buf{} : buf(stat2),
           train ? buf(mean) : Buf{}, train ? buf(stat2) : Buf{}, buf(coef), gw.defined() ? buf(gw) : Buf{},
           gb.defined() ? buf(gb) : Buf{}, cl_int(L.C), cl_int(L.S), static_cast<T>(per_channel_count(input)),
           static_cast<T>(eps), T(0), cl_int(train ? 2 : 3), cl_int(w.defined()), cl_int(0), cl_int(0), cl_int(0),
           cl_int(gw.defined()), cl_int(gb.defined()));
  };
  if (acc == at::kDouble) go(double{});
  else go(float{});
  at::Tensor gi;
  if (output_mask[0]) {
    gi = at::empty_like(x);
    L.affine(dy, train ? x : at::Tensor(), coef, gi);
    gi = gi.contiguous(input.suggest_memory_format());
  }
  const at::ScalarType wt = has(weight) ? weight->scalar_type() : acc;
  return {gi, gw.defined() ? gw.to(wt) : gw, gb.defined() ? gb.to(wt) : gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "native_batch_norm", native_batch_norm_ocl);
  OCL_IMPL(m, "native_batch_norm_backward", native_batch_norm_backward_ocl);
}

}  // namespace torch_ocl
