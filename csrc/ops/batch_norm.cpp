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

constexpr int kInFlight = 4;  // IN_FLIGHT of kernels/batch_norm.cl

// The batch_norm.cl launches: the statistics, coefficients and affine pass over input viewed
// as contiguous (N, C, HW), or, channels_last, as N * HW rows of C channels; accumulating in `acc`.
struct BnLaunch {
  Device& d;
  at::ScalarType acc;
  std::string opts;
  int64_t N, C, HW;
  bool channels_last;
  int64_t S;  // slices of the batch (channels_last: of the rows) per channel in bn_partial
  rows::Split rows;  // bn_affine's teams over the N * C rows
  int T;             // bn_partial's team width (its reduction spans the whole work-group)
  int64_t XV;        // elements per load: 4-vectors (of positions, channels_last: of channels) where allowed
  int64_t LX;        // channels_last: channel vectors per work-group (LX x kMaxWG / LX work-items)

  // x, and dy where defined, in one layout; their bases matter for the vectors.
  BnLaunch(const at::Tensor& x, const at::Tensor& dy, const char* op)
      : d(ocl_device(x)), acc(compute_type_for(x.scalar_type())), N(x.size(0)), C(x.size(1)),
        HW(x.numel() / std::max<int64_t>(x.size(0) * x.size(1), 1)), channels_last(rows::channels_innermost(x)) {
    check_dtype_supported(d, x.scalar_type(), op);
    const rows::Config rc = rows::config(d, rows::kNorm);
    const bool aligned = vec4_aligned(x) && (!dy.defined() || vec4_aligned(dy));
    XV = aligned && (channels_last ? C : HW) % 4 == 0 ? 4 : 1;
    opts = "-DX_KIND=" + std::to_string(storage_kind(x.scalar_type(), op)) + " -DXVEC=" + std::to_string(XV) +
           rows::options(rc, acc == at::kDouble, rows::reduce_for(rc, rows::kMaxWG));
    T = rows::team_width(HW, static_cast<int>(XV) * kInFlight);
    rows = rows::split(N * C, HW, rc.items, true, N * C);
    // About four work-groups per compute unit in all, each slice at least one sample
    // (channels_last: sixteen rows per lane).
    const int64_t cu = std::max<int64_t>(d.info.compute_units, 1);
    if (channels_last) {
      LX = std::min<int64_t>(std::max<int64_t>(rows::next_pow2((C + XV - 1) / XV), 8), 64);
      const int64_t blocks = (C + LX * XV - 1) / (LX * XV), ly = rows::kMaxWG / LX;
      S = std::max<int64_t>(1, std::min<int64_t>((4 * cu + blocks - 1) / blocks, N * HW / (16 * ly)));
    } else {
      LX = 1;
      S = std::max<int64_t>(1, std::min<int64_t>((4 * cu + C - 1) / std::max<int64_t>(C, 1), N));
    }
  }
  // Per-channel partials of x (dy undefined) or of dy and dy * (x - mean); dy in x's layout.
  at::Tensor partial(const at::Tensor& x, const at::Tensor& dy, const at::Tensor& mean) {
    at::Tensor part = at::empty({S, C, 3}, x.options().dtype(acc));
    if (channels_last) {
      launch(d, get_kernel(d, "batch_norm", opts, "bn_partial_cl"),
             Range(static_cast<size_t>((C + LX * XV - 1) / (LX * XV) * S) * rows::kMaxWG), Range(rows::kMaxWG), buf(x),
             buf_or_none(dy), buf_or_none(mean), buf(part), N * HW, cl_int(C), cl_int(S), cl_int(dy.defined()),
             cl_int(LX));
      return part;
    }
    launch(d, get_kernel(d, "batch_norm", opts, "bn_partial"), Range(static_cast<size_t>(C * S) * rows::kMaxWG),
           Range(rows::kMaxWG), buf(x), buf_or_none(dy), buf_or_none(mean), buf(part), N, cl_int(C), cl_int(HW),
           cl_int(S), cl_int(T), cl_int(dy.defined()));
    return part;
  }
  // bn_finalize in `mode` (0-3, see batch_norm.cl); undefined tensors are absent. The running
  // statistics are updated in mode 0 where given; gw and gb are written where given. Work-groups
  // of FX channels by kMaxWG / FX lanes over the S partials: more lanes the more partials.
  void finalize(int mode, const at::Tensor& part, const at::Tensor& w, const at::Tensor& b, const at::Tensor& rmean,
                const at::Tensor& rvar, const at::Tensor& stat, const at::Tensor& istd, const at::Tensor& coef,
                const at::Tensor& gw, const at::Tensor& gb, double eps, double momentum) {
    const int64_t FX = S >= 64 ? 8 : S >= 8 ? 32 : 64;
    auto go = [&](auto v) {
      using V = decltype(v);
      launch(d, get_kernel(d, "batch_norm", opts, "bn_finalize"),
             Range(static_cast<size_t>((C + FX - 1) / FX) * rows::kMaxWG), Range(rows::kMaxWG),
             buf_or_none(part), buf_or_none(w), buf_or_none(b), buf_or_none(rmean), buf_or_none(rvar),
             buf_or_none(stat), buf_or_none(istd), buf(coef), buf_or_none(gw), buf_or_none(gb), cl_int(C), cl_int(S),
             static_cast<V>(N * HW), static_cast<V>(eps), static_cast<V>(momentum), cl_int(mode),
             cl_int(w.defined()), cl_int(b.defined()), cl_int(mode == 0 && rmean.defined()),
             cl_int(mode == 0 && rvar.defined()), cl_int(gw.defined()), cl_int(gb.defined()), cl_int(FX));
    };
    if (acc == at::kDouble) go(double{});
    else go(float{});
  }
  // out = in1 * k1 + in2 * k2 + k3 per channel (coef [3][C]); all three in x's layout.
  void affine(const at::Tensor& in1, const at::Tensor& in2, const at::Tensor& coef, const at::Tensor& out) {
    if (channels_last) {  // about eight work-groups per compute unit
      const int64_t blocks = (C + LX * XV - 1) / (LX * XV), ly = rows::kMaxWG / LX, R = N * HW;
      const int64_t gy = std::max<int64_t>(1, std::min<int64_t>((8 * std::max<int64_t>(d.info.compute_units, 1) +
                                                                  blocks - 1) / blocks, (R + ly - 1) / ly));
      launch(d, get_kernel(d, "batch_norm", opts, "bn_affine_cl"),
             Range(static_cast<size_t>(blocks * LX), static_cast<size_t>(gy * ly)),
             Range(static_cast<size_t>(LX), static_cast<size_t>(ly)), buf(in1), buf_or_none(in2), buf(coef), buf(out),
             R, cl_int(C), cl_int(in2.defined()));
      return;
    }
    const size_t groups = std::min<size_t>(rows.groups, 65536);
    launch(d, get_kernel(d, "batch_norm", opts, "bn_affine"), Range(groups * rows.local), Range(rows.local), buf(in1),
           buf_or_none(in2), buf(coef), buf(out), N * C, cl_int(C), cl_int(HW), cl_int(rows.T),
           cl_int(in2.defined()));
  }
};

// A per-channel parameter or statistic as a contiguous tensor of the accumulation type (itself
// when it is one already), or undefined.
at::Tensor as_acc(const c10::optional<at::Tensor>& t, at::ScalarType acc) {
  return has(t) ? t->to(acc).contiguous() : at::Tensor();
}

// native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
// Training: bn_partial, bn_finalize (saving mean and invstd, updating the running statistics)
// and bn_affine; evaluation: bn_finalize from the running statistics and bn_affine. The output
// keeps the input's memory format, as on the CPU; channels-last inputs are read in place.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_ocl(
    const at::Tensor& input, const c10::optional<at::Tensor>& weight, const c10::optional<at::Tensor>& bias,
    const c10::optional<at::Tensor>& running_mean, const c10::optional<at::Tensor>& running_var, bool training,
    double momentum, double eps) {
  check_bn_args(input, weight, bias, running_mean, running_var, training);
  const at::Tensor x = rows::channels_innermost(input) ? input : input.contiguous();
  BnLaunch L(x, at::Tensor(), "native_batch_norm");
  const auto opts = input.options().dtype(L.acc);
  const at::Tensor w = as_acc(weight, L.acc), b = as_acc(bias, L.acc);
  at::Tensor rm = as_acc(running_mean, L.acc), rv = as_acc(running_var, L.acc);
  at::Tensor mean = at::empty({training ? L.C : 0}, opts), invstd = at::empty({training ? L.C : 0}, opts);
  at::Tensor coef = at::empty({3, L.C}, opts);
  const at::Tensor part = training ? L.partial(x, at::Tensor(), at::Tensor()) : at::Tensor();
  const at::Tensor none;
  L.finalize(training ? 0 : 1, part, w, b, rm, rv, training ? mean : none, training ? invstd : none, coef, none, none,
             eps, momentum);
  if (training) {  // where the running statistics were converted, write them back
    if (rm.defined() && !rm.is_same(*running_mean)) running_mean->copy_(rm);
    if (rv.defined() && !rv.is_same(*running_var)) running_var->copy_(rv);
  }
  at::Tensor y = at::empty_like(x);  // x's layout
  L.affine(x, at::Tensor(), coef, y);
  y = y.contiguous(input.suggest_memory_format());  // an (N, L, C) input's output is contiguous, as on the CPU
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
  TORCH_CHECK(!train || (has(save_mean) && has(save_invstd)),
              "batch_norm backward in training mode needs the saved statistics");
  TORCH_CHECK(train || (has(running_mean) && has(running_var)),
              "batch_norm backward in evaluation mode needs the running statistics");
  TORCH_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(),
              "batch_norm backward: expected grad_out of the input's shape and dtype ", input.sizes(), " ",
              input.scalar_type(), ", got ", grad_out.sizes(), " ", grad_out.scalar_type());
  const at::Tensor x = rows::channels_innermost(input) ? input : input.contiguous();
  const at::Tensor dy = grad_out.strides() == x.strides() ? grad_out : at::empty_like(x).copy_(grad_out);
  BnLaunch L(x, dy, "native_batch_norm_backward");
  const auto opts = input.options().dtype(L.acc);
  const at::Tensor w = as_acc(weight, L.acc);
  // Training: the saved mean and invstd; evaluation: the running mean and variance.
  const at::Tensor mean = train ? as_acc(save_mean, L.acc) : as_acc(running_mean, L.acc);
  const at::Tensor stat2 = train ? as_acc(save_invstd, L.acc) : as_acc(running_var, L.acc);
  at::Tensor gw = output_mask[1] ? at::empty({L.C}, opts) : at::Tensor();
  at::Tensor gb = output_mask[2] ? at::empty({L.C}, opts) : at::Tensor();
  at::Tensor coef = at::empty({3, L.C}, opts);
  const at::Tensor part = L.partial(x, dy, mean), none;
  if (train) L.finalize(2, part, w, none, none, none, mean, stat2, coef, gw, gb, eps, 0);
  else L.finalize(3, part, w, none, mean, stat2, none, none, coef, gw, gb, eps, 0);
  at::Tensor gi;
  if (output_mask[0]) {
    gi = at::empty_like(x);  // x's layout
    L.affine(dy, train ? x : at::Tensor(), coef, gi);
    gi = gi.contiguous(input.suggest_memory_format());
  }
  const at::ScalarType wt = has(weight) ? weight->scalar_type() : L.acc;
  return {gi, gw.defined() ? gw.to(wt) : gw, gb.defined() ? gb.to(wt) : gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "native_batch_norm", native_batch_norm_ocl);
  OCL_IMPL(m, "native_batch_norm_backward", native_batch_norm_backward_ocl);
}

}  // namespace torch_ocl
