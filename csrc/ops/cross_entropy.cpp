// Fused cross_entropy_loss for class-index targets (kernels/cross_entropy.cl). ATen's
// composite runs log_softmax (a logits-sized intermediate) + nll_loss forward, and backward a
// zero fill + scatter + log_softmax backward; here the forward reads the logits once (saving
// only each row's logsumexp) and the backward reads them once and writes the gradient once.
// Registered for AutogradPrivateUse1 (a custom autograd Function) and PrivateUse1
// (inference_mode / below autograd). Probability targets, weights that require grad, forward
// AD, functorch transforms and inputs the CPU rejects go to ATen's composite, so the results,
// gradients and errors are the CPU's. Team reductions and vector loads come from
// rows_config() (device defaults, overridable through the tuning entry "cross_entropy/rows"),
// as does SERIAL: CPU devices run ce_fwd_serial / ce_bwd_serial, a work-item per block of rows.
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include "rows.h"
#include <ATen/FuncTorchTLS.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>
#include <limits>

namespace torch_ocl {
namespace {

constexpr int kMaxWG = rows::kMaxWG;  // MAX_WG of cross_entropy.cl (rows.clh)

// kernels/cross_entropy.cl flags
enum : int {
  kHasW = 1,
  kSmooth = 2,
  kSaveLse = 4,
  kReduce = 8,
  kMean = 16,
  kPerSample = 32,
  kCounters = 64,
};

// How cross_entropy.cl's row teams reduce and read: rows::config(d, rows::kCrossEntropy), the
// tuning entry "cross_entropy/rows" ("ROWRED=local|ptx|khr|emu VEC=0|1 ITEMS=4..64 MAXRREG=0|16..255
// FWD_TEAM=0|32..256 SERIAL=0|1"; in-process:
// torch_ocl._C._tuning_set(device, "cross_entropy/rows", text), as the tests do). ITEMS: the
// row elements each work-item keeps in registers, which also sizes the teams (at most MAX_WG
// work-items, and for the forward at most forward_team's width): rows of up to T * ITEMS
// classes are read once with every load in flight, longer rows stream once with an online
// (max, sum).
using RowsConfig = rows::Config;
RowsConfig rows_config(const Device& d) { return rows::config(d, rows::kCrossEntropy); }

// The arguments of a call the fused kernels serve, validated as the CPU would.
struct CeCall {
  at::Tensor self, target, weight;  // weight: contiguous or undefined
  int64_t reduction = at::Reduction::Mean, ignore_index = -100;
  double eps = 0;  // label smoothing in effect (the CPU ignores values <= 0)
};

bool same_device(const at::Tensor& a, const at::Tensor& b) { return a.device() == b.device(); }

// The call as the fused path runs it, or nothing when ATen's composite must (it then raises
// the CPU's error for bad input, or computes what the kernels do not: probability targets,
// int32 targets, mixed dtypes, ...).
std::optional<CeCall> fusable(const at::Tensor& self, const at::Tensor& target,
                              const std::optional<at::Tensor>& weight_opt, int64_t reduction,
                              const c10::SymInt& ignore_index, double label_smoothing) {
  const int64_t dim = self.dim();
  if (dim < 1 || self.sizes() == target.sizes() || !same_device(self, target)) return std::nullopt;
  if (storage_kind_or_none(self.scalar_type()) < 0) return std::nullopt;
  if (self.scalar_type() == at::kDouble && !ocl_device(self).info.fp64) return std::nullopt;
  if (target.scalar_type() != at::kLong && target.scalar_type() != at::kByte) return std::nullopt;
  if (reduction < at::Reduction::None || reduction >= at::Reduction::END) return std::nullopt;
  if (label_smoothing > 1.0) return std::nullopt;  // "label_smoothing must be between 0.0 and 1.0"
  const std::optional<int64_t> ignore = ignore_index.maybe_as_int();
  if (!ignore) return std::nullopt;  // symbolic: ATen's composite handles it
  const int64_t C = self.size(dim == 1 ? 0 : 1);
  if (C == 0) return std::nullopt;
  if (dim == 1) {
    if (target.dim() != 0) return std::nullopt;
  } else {
    if (target.dim() != dim - 1 || target.size(0) != self.size(0)) return std::nullopt;
    for (int64_t i = 2; i < dim; ++i)
      if (target.size(i - 1) != self.size(i)) return std::nullopt;
  }
  CeCall c;
  if (weight_opt.has_value() && weight_opt->defined()) {
    const at::Tensor& w = *weight_opt;
    if (w.dim() != 1 || w.numel() != C || w.scalar_type() != self.scalar_type() || !same_device(w, self))
      return std::nullopt;
    c.weight = w.contiguous();
  }
  c.self = self;
  c.target = target.contiguous();
  c.reduction = reduction;
  c.ignore_index = *ignore;
  c.eps = label_smoothing > 0 ? label_smoothing : 0.0;
  return c;
}

// The input as rows: row r = n * S + s, element c at n * sn + s * ss + c * sc (elements).
struct RowGeom {
  int64_t N = 1, C = 1, S = 1, sn = 0, ss = 0, sc = 1;
  int64_t rows() const { return N * S; }
};
// Whether t's spatial dims (2..) collapse to one stride; fills g.
bool row_geom(const at::Tensor& t, RowGeom* g) {
  if (t.dim() == 1) {
    *g = RowGeom{1, t.size(0), 1, 0, 0, t.stride(0)};
    return true;
  }
  g->N = t.size(0);
  g->C = t.size(1);
  g->sn = t.stride(0);
  g->sc = t.stride(1);
  g->S = 1;
  g->ss = 0;
  int64_t prev = -1;
  for (int64_t d = t.dim() - 1; d >= 2; --d) {
    g->S *= t.size(d);
    if (t.size(d) == 1) continue;
    if (prev < 0) {
      g->ss = t.stride(d);
    } else if (t.stride(d) != prev) {
      return false;
    }
    prev = t.stride(d) * t.size(d);
  }
  return true;
}
// self itself, or a dense copy when its spatial dims do not collapse.
at::Tensor addressable(const at::Tensor& self, RowGeom* g) {
  if (row_geom(self, g)) return self;
  at::Tensor x = self.contiguous();
  row_geom(x, g);
  return x;
}

// Work split: a team of T work-items per row, `local / T` rows per work-group. Adjacent
// work-items read adjacent classes, unless the rows are the unit-stride direction and the
// classes are not (a transposed (C, N) input, or class-strided spatial positions).
using Teams = rows::Split;
Teams teams(const RowGeom& g, int items, int max_team = rows::kMaxWG) {
  const int64_t row_stride = g.S == 1 ? g.sn : g.ss;
  return rows::split(g.rows(), g.C, items, g.sc == 1 || row_stride != 1, g.rows(), max_team);
}

// The forward's widest team (FWD_TEAM, else this default). A row longer than T * ITEMS streams
// through its team once with an online (max, sum), so a narrow team loses nothing by the row's
// length; and a team of one warp reduces with shuffles alone, while a 256-wide team of a
// register-held row waits at two barriers, each on its slowest load. On GPUs the team is
// therefore only as wide as it takes for rows x T work-items to fill the device (1024 per
// compute unit), and at least 32 (one warp: a load instruction still reads 512 contiguous
// bytes). [8192, 8192] fp32 on an H200, same run: 32-wide streaming teams 90% of copy, 64-wide
// 81%, 128-wide 71%, the 256-wide register teams 61% (bench/RESULTS.md, session 7). CPU devices
// keep 256.
int forward_team(const Device& d, const RowsConfig& rc, int64_t rows) {
  if (rc.fwd_team) return rc.fwd_team;
  if (d.info.is_cpu()) return rows::kMaxWG;
  const int64_t want = std::max<int64_t>(d.info.compute_units, 1) * 1024;
  return static_cast<int>(std::clamp<int64_t>(rows::next_pow2((want + rows - 1) / rows), 32, rows::kMaxWG));
}

// Whether rows of t (geometry g) can be read as aligned 4-element vectors: class stride 1,
// C % 4 == 0 and every row start aligned to 4 elements.
bool vec4_ok(const at::Tensor& t, const RowGeom& g) {
  if (g.sc != 1 || g.C % 4 != 0) return false;
  if (!vec4_aligned(t)) return false;
  return (g.N == 1 || g.sn % 4 == 0) && (g.S == 1 || g.ss % 4 == 0);
}

// Build options; row_reduce: ROW_REDUCE (0 unless the teams are consecutive work-items);
// SERIAL_ROWS where rc selects the serial kernels (row_reduce and vec4 are then unused).
std::string options(const at::Tensor& self, const at::Tensor& target, int row_reduce, bool vec4, const RowsConfig& rc) {
  const int xk = storage_kind_or_none(self.scalar_type());
  return "-DX_KIND=" + std::to_string(xk) + " -DTGT_T=" + (target.scalar_type() == at::kByte ? "uchar" : "long") +
         " -DVEC=" + (vec4 ? "4" : "1") + (rc.serial ? " -DSERIAL_ROWS=1" : "") +
         rows::options(rc, xk == 1, row_reduce);
}

// Calls f with eps as the kernels' ACC type.
template <typename F>
void with_acc(const at::Tensor& self, double eps, F&& f) {
  if (float_or_double(self.scalar_type()) == at::kDouble)
    f(eps);
  else
    f(static_cast<float>(eps));
}

// The loss (target-shaped for reduction none, else 0-dim). With `aux`, also the state the
// backward needs: per-row logsumexp, the total weight and the class-weight sum.
at::Tensor ce_forward(const CeCall& c, at::Tensor* aux) {
  Device& d = ocl_device(c.self);
  RowGeom g;
  const at::Tensor x = addressable(c.self, &g);
  const int64_t rows = g.rows();
  const bool reduce = c.reduction != at::Reduction::None;
  const bool mean = c.reduction == at::Reduction::Mean;
  at::Tensor loss = at::empty(reduce ? c10::IntArrayRef{} : c.target.sizes(), c.self.options());
  at::Tensor ax;
  if (aux) {
    ax = at::empty({rows + 2}, c.self.options().dtype(float_or_double(c.self.scalar_type())));
    *aux = ax;
  }
  if (rows == 0) {
    if (reduce) loss.fill_(mean ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    if (aux) ax.zero_();
    return loss;
  }
  const RowsConfig rc = rows_config(d);
  int flags = (c.weight.defined() ? kHasW : 0) | (c.eps > 0 ? kSmooth : 0) | (aux ? kSaveLse : 0) |
              (reduce ? kReduce : 0) | (mean ? kMean : 0);
  const Buf wb = c.weight.defined() ? buf(c.weight) : Buf{nullptr, 0};
  const Buf ab = aux ? buf(ax) : Buf{nullptr, 0};
  if (rc.serial) {
    // Blocks of whole rows per work-item; with a reduction over several work-items, their
    // partials go to ce_finish.
    const auto [items, per] = rows::serial_split(d, rows);
    const std::string opts = options(c.self, c.target, 0, false, rc);
    at::Tensor ws;
    if (reduce && items > 1) ws = at::empty({2 * items}, c.self.options().dtype(float_or_double(c.self.scalar_type())));
    const Buf wsb = ws.defined() ? buf(ws) : Buf{nullptr, 0};
    Kernel& kf = get_kernel(d, "cross_entropy", opts, "ce_fwd_serial");
    with_acc(c.self, c.eps, [&](auto eps) {
      launch(d, kf, Range(static_cast<size_t>(items)), Range(1), buf(x), buf(c.target), wb, buf(loss), ab, wsb, rows,
             g.S, g.C, g.sn, g.ss, g.sc, c.ignore_index, eps, per, cl_int(flags), d.error_buf);
    });
    if (ws.defined()) {
      Kernel& kfin = get_kernel(d, "cross_entropy", opts, "ce_finish");
      launch(d, kfin, Range(kMaxWG), Range(kMaxWG), wsb, items, buf(loss), ab, rows, cl_int(flags));
    }
    return loss;
  }
  const Teams k = teams(g, rc.items, forward_team(d, rc, rows));
  at::Tensor ws;
  cl_mem counters = nullptr;
  if (reduce && k.groups > 1) {
    ws = at::empty({static_cast<int64_t>(2 * k.groups)}, c.self.options().dtype(float_or_double(c.self.scalar_type())));
    counters = d.arrival_counters(1);
    if (counters) flags |= kCounters;
  }
  const bool vec4 = rc.vec == 1 && vec4_ok(x, g);
  // Rows that stream get a program without the register-held path, whose ITEMS registers
  // would otherwise size the streaming kernel too (H200: 56 registers instead of 90).
  const bool stream = g.C > int64_t(k.T) * rc.items;
  const std::string opts = options(c.self, c.target, k.c_fast ? rows::reduce_for(rc, k.T) : 0, vec4, rc) +
                           (stream ? " -DCE_STREAM=1" : "");
  Kernel& kf = get_kernel(d, "cross_entropy", opts, "ce_fwd");
  const Buf wsb = ws.defined() ? buf(ws) : Buf{nullptr, 0};
  with_acc(c.self, c.eps, [&](auto eps) {
    launch(d, kf, Range(k.groups * k.local), Range(k.local), buf(x), buf(c.target), wb, buf(loss), ab, wsb, counters,
           rows, g.S, g.C, g.sn, g.ss, g.sc, c.ignore_index, eps, cl_int(k.T), cl_int(k.c_fast), cl_int(flags),
           d.error_buf);
  });
  if (ws.defined() && !counters) {
    Kernel& kfin = get_kernel(d, "cross_entropy", opts, "ce_finish");
    launch(d, kfin, Range(kMaxWG), Range(kMaxWG), wsb, static_cast<int64_t>(k.groups), buf(loss), ab, rows,
           cl_int(flags));
  }
  return loss;
}

// d loss / d self from the forward's aux, in self's layout where it is dense.
at::Tensor ce_backward(const at::Tensor& grad_out, const CeCall& c, const at::Tensor& aux) {
  Device& d = ocl_device(c.self);
  RowGeom g, gg;
  const at::Tensor x = addressable(c.self, &g);
  at::Tensor gx = at::empty_like(c.self);
  if (!row_geom(gx, &gg)) {
    gx = at::empty(c.self.sizes(), c.self.options());
    row_geom(gx, &gg);
  }
  if (gx.numel() == 0) return gx;
  const bool reduce = c.reduction != at::Reduction::None;
  int flags = (c.weight.defined() ? kHasW : 0) | (c.eps > 0 ? kSmooth : 0) |
              (c.reduction == at::Reduction::Mean ? kMean : 0);
  at::Tensor go = grad_out;
  if (!reduce) {
    // One value per row, unless it is one value broadcast (the backward of loss.sum()).
    const bool broadcast = go.numel() > 0 && std::all_of(go.strides().begin(), go.strides().end(),
                                                         [](int64_t s) { return s == 0; });
    if (!broadcast) {
      go = go.contiguous();
      flags |= kPerSample;
    }
  }
  const RowsConfig rc = rows_config(d);
  const Buf wb = c.weight.defined() ? buf(c.weight) : Buf{nullptr, 0};
  if (rc.serial) {
    const auto [items, per] = rows::serial_split(d, g.rows());
    Kernel& kb = get_kernel(d, "cross_entropy", options(c.self, c.target, 0, false, rc), "ce_bwd_serial");
    with_acc(c.self, c.eps, [&](auto eps) {
      launch(d, kb, Range(static_cast<size_t>(items)), Range(1), buf(x), buf(c.target), wb, buf(go), buf(aux),
             buf(gx), g.rows(), g.S, g.C, g.sn, g.ss, g.sc, gg.sn, gg.ss, gg.sc, c.ignore_index, eps, per,
             cl_int(flags));
    });
    return gx;
  }
  const Teams k = teams(g, rc.items);
  const bool vec4 = rc.vec == 1 && vec4_ok(x, g) && vec4_ok(gx, gg);
  // ce_bwd has no team reduction: ROW_REDUCE 0 shares the program of forwards without shuffles.
  Kernel& kb = get_kernel(d, "cross_entropy", options(c.self, c.target, 0, vec4, rc), "ce_bwd");
  with_acc(c.self, c.eps, [&](auto eps) {
    launch(d, kb, Range(k.groups * k.local), Range(k.local), buf(x), buf(c.target), wb, buf(go), buf(aux), buf(gx),
           g.rows(), g.S, g.C, g.sn, g.ss, g.sc, gg.sn, gg.ss, gg.sc, c.ignore_index, eps, cl_int(k.T),
           cl_int(k.c_fast), cl_int(flags));
  });
  return gx;
}

// The autograd node of the fused path. Saves self, target, weight and the forward's aux
// (rows + 2 accumulator values), never a logits-sized intermediate.
struct CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const CeCall& c) {
    at::AutoDispatchBelowADInplaceOrView below;
    at::Tensor aux;
    at::Tensor loss = ce_forward(c, &aux);
    ctx->save_for_backward({self, c.target, c.weight, aux});
    ctx->saved_data["reduction"] = c.reduction;
    ctx->saved_data["ignore_index"] = c.ignore_index;
    ctx->saved_data["eps"] = c.eps;
    return loss;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    CeCall c;
    c.self = saved[0];
    c.target = saved[1];
    c.weight = saved[2];
    c.reduction = ctx->saved_data["reduction"].toInt();
    c.ignore_index = ctx->saved_data["ignore_index"].toInt();
    c.eps = ctx->saved_data["eps"].toDouble();
    at::Tensor gx;
    if (at::GradMode::is_enabled()) {
      // create_graph=True: a gradient that is itself differentiable, from ATen's composite.
      std::optional<at::Tensor> w = c.weight.defined() ? std::optional<at::Tensor>(c.weight) : std::nullopt;
      at::Tensor loss = at::native::cross_entropy_loss_symint(c.self, c.target, w, c.reduction, c.ignore_index, c.eps);
      gx = torch::autograd::grad({loss}, {c.self}, {grads[0]}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    } else {
      gx = ce_backward(grads[0], c, saved[3]);
    }
    return {gx, at::Tensor()};
  }
};

// Forward AD, functorch transforms and weights that require grad need ATen's composite.
bool composite_needed_for_autograd(const at::Tensor& self, const std::optional<at::Tensor>& weight) {
  if (weight.has_value() && weight->defined() && weight->requires_grad()) return true;
  if (self._fw_grad(/*level=*/0).defined()) return true;
  return at::functorch::functorchTLSAccessor() != nullptr;
}

}  // namespace

// cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor
// Below autograd (inference_mode, or redispatched): the fused forward, else the composite.
at::Tensor cross_entropy_loss_ocl(const at::Tensor& self, const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                                  double label_smoothing) {
  if (auto c = fusable(self, target, weight, reduction, ignore_index, label_smoothing)) return ce_forward(*c, nullptr);
  return at::native::cross_entropy_loss_symint(self, target, weight, reduction, std::move(ignore_index),
                                               label_smoothing);
}

// The AutogradPrivateUse1 kernel of cross_entropy_loss: the fused Function when self needs a
// gradient, the fused forward when nothing does, and otherwise ATen's composite with autograd
// recording its ops (no below-autograd guard), exactly as without this override.
at::Tensor cross_entropy_loss_autograd_ocl(const at::Tensor& self, const at::Tensor& target,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           c10::SymInt ignore_index, double label_smoothing) {
  std::optional<CeCall> c;
  if (!composite_needed_for_autograd(self, weight))
    c = fusable(self, target, weight, reduction, ignore_index, label_smoothing);
  if (!c)
    return at::native::cross_entropy_loss_symint(self, target, weight, reduction, std::move(ignore_index),
                                                 label_smoothing);
  if (!(at::GradMode::is_enabled() && self.requires_grad())) {
    at::AutoDispatchBelowADInplaceOrView below;
    return ce_forward(*c, nullptr);
  }
  return CrossEntropyFunction::apply(self, *c);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("cross_entropy_loss", cross_entropy_loss_ocl); }

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("cross_entropy_loss", cross_entropy_loss_autograd_ocl); }

}  // namespace torch_ocl
