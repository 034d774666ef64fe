// Normalization: native_layer_norm (+ backward) and _fused_rms_norm (+ backward), registered
// for PrivateUse1 so F.layer_norm / F.rms_norm do not decompose into batch_norm or a chain
// of pointwise ops. Inputs are made dense ([M, N] row-major, N = prod(normalized_shape));
// kernels live in kernels/norm.cl. Team reductions, vector width, register elements per
// work-item and the backward's grid come from rows::config() (ops/rows.h: device defaults,
// overridable through the tuning entry "norm/rows"), as does SERIAL: CPU devices run the
// serial kernels instead, a work-item per block of whole rows.
// _weight_norm_interface (+ backward) is composed of device reductions (linalg_vector_norm,
// sum) and pointwise kernels (aten/Pointwise.h); it launches nothing from norm.cl.
// native_group_norm (+ backward) takes contiguous NCHW data, or channels-innermost data
// (channels_last, channels_last_3d) in place: see "GroupNorm:" below.
#include "../aten/Routing.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include "rows.h"
#include <ATen/TensorIterator.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/native/group_norm.h>
#include <ATen/native/cpu/mixed_data_type.h>
#include <ATen/FuncTorchTLS.h>
#include <ATen/ops/group_norm_native.h>
#include <ATen/ops/native_group_norm.h>
#include <ATen/ops/native_group_norm_backward.h>
#include <ATen/ops/native_group_norm_native.h>
#include <ATen/ops/native_group_norm_backward_native.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace torch_ocl {
namespace {

constexpr int kMaxWG = rows::kMaxWG;  // MAX_WG of norm.cl (rows.clh)
constexpr int kCols = 32;    // COLS of norm.cl
constexpr int kWbChunk = 4;  // WB_CHUNK of norm.cl
constexpr int64_t kMinRows = 16;     // rows per layer_norm_bwd group at least, when it sums weight/bias grads

bool is_reduced(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

struct Types {
  at::ScalarType x, w, s;
};
// The storage-kind options of norm.cl for t (X_KIND, W_KIND, S_KIND), after checking that the
// device supports each dtype; *dbl says whether any is double (then ACC is double).
std::string kind_options(Device& d, const Types& t, const char* op, bool* dbl) {
  for (auto s : {t.x, t.w, t.s}) check_dtype_supported(d, s, op);
  const int xk = storage_kind(t.x, op), wk = storage_kind(t.w, op), sk = storage_kind(t.s, op);
  *dbl = xk == 1 || wk == 1 || sk == 1;
  return "-DX_KIND=" + std::to_string(xk) + " -DW_KIND=" + std::to_string(wk) + " -DS_KIND=" + std::to_string(sk);
}

// Build options but VEC (norm_forward / norm_backward add it per call), for rows of N elements.
std::string options(Device& d, const Types& t, const rows::Config& rc, int64_t N, const char* op) {
  bool dbl = false;
  const std::string kinds = kind_options(d, t, op, &dbl);
  return kinds + " -DCOLS=" + std::to_string(kCols) + " -DFAN_IN=" + std::to_string(rc.fan_in) +
         " -DWB_CHUNK=" + std::to_string(kWbChunk) + (rc.prefetch ? " -DBWD_PREFETCH=1" : "") +
         (rc.serial ? " -DSERIAL_ROWS=1" : "") +
         rows::options(rc, dbl, rows::reduce_for(rc, rows::team_width(N, rc.items)));
}

// (M, N) of input for normalized_shape, after the same checks as the CPU implementation.
std::pair<int64_t, int64_t> check_inputs(const at::Tensor& input, c10::IntArrayRef normalized_shape,
                                         const at::Tensor& weight, const at::Tensor& bias) {
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(nd >= 1, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
              "element, but got normalized_shape = ", normalized_shape);
  TORCH_CHECK(!weight.defined() || weight.sizes().equals(normalized_shape),
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ", weight.sizes(),
              " and normalized_shape = ", normalized_shape);
  TORCH_CHECK(!bias.defined() || bias.sizes().equals(normalized_shape),
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ", bias.sizes(),
              " and normalized_shape = ", normalized_shape);
  const int64_t axis = input.dim() - nd;
  bool ok = axis >= 0;
  for (int64_t i = 0; ok && i < nd; ++i) ok = input.size(axis + i) == normalized_shape[i];
  TORCH_CHECK(ok, "Given normalized_shape=", normalized_shape, ", expected input with shape [*, ",
              normalized_shape, "], but got input of size", input.sizes());
  int64_t M = 1, N = 1;
  for (int64_t i = 0; i < axis; ++i) M *= input.size(i);
  for (int64_t i = axis; i < input.dim(); ++i) N *= input.size(i);
  return {M, N};
}

// Shape of mean/rstd: input's leading dims, then 1 for each normalized dim.
std::vector<int64_t> stat_shape(const at::Tensor& input, size_t nd) {
  std::vector<int64_t> s(input.sizes().begin(), input.sizes().end());
  for (size_t i = s.size() - nd; i < s.size(); ++i) s[i] = 1;
  return s;
}

// Whether the dense row-major tensors (bufs[i] of ts[i], rows of N elements; undefined ones
// ignored) can be read as aligned 4-element vectors: N % 4 == 0 and 4-element aligned starts.
bool vec_rows(const rows::Config& rc, int64_t N, std::initializer_list<std::pair<const at::Tensor*, Buf>> ts) {
  if (!rc.vec || N % 4 != 0) return false;
  for (const auto& [t, b] : ts)
    if (t->defined() && b.offset % (4 * t->element_size()) != 0) return false;
  return true;
}

// Launches layer_norm_fwd (rms=true: RMSNorm, mean not written).
void norm_forward(Device& d, const std::string& opts, const rows::Config& rc, const at::Tensor& x, const at::Tensor& w,
                  const at::Tensor& b, const at::Tensor& y, const at::Tensor& mean, const at::Tensor& rstd, int64_t M,
                  int64_t N, double eps, bool rms) {
  if (M == 0) return;
  const Buf bx = buf(x), bw = buf_or_none(w), bb = buf_or_none(b), by = buf(y);
  const bool dbl = x.scalar_type() == at::kDouble || (w.defined() && w.scalar_type() == at::kDouble);
  if (rc.serial) {
    const auto [items, per] = rows::serial_split(d, M);
    Kernel& k = get_kernel(d, "norm", opts, "layer_norm_fwd_serial");
    auto go = [&](auto e) {
      launch(d, k, Range(static_cast<size_t>(items)), Range(1), bx, bw, bb, by, buf_or_none(mean), buf(rstd), M, N,
             e, per, cl_int(w.defined()), cl_int(b.defined()), cl_int(rms));
    };
    if (dbl) go(static_cast<double>(eps));
    else go(static_cast<float>(eps));
    return;
  }
  const rows::Split g = rows::split(M, N, rc.items, true, M);  // a team of consecutive work-items per row
  const bool vec = vec_rows(rc, N, {{&x, bx}, {&w, bw}, {&b, bb}, {&y, by}});
  Kernel& k = get_kernel(d, "norm", opts + (vec ? " -DVEC=4" : ""), "layer_norm_fwd");
  auto go = [&](auto e) {
    launch(d, k, Range(g.groups * g.local), Range(g.local), bx, bw, bb, by, buf_or_none(mean), buf(rstd), M, N, e,
           cl_int(g.T), cl_int(w.defined()), cl_int(b.defined()), cl_int(rms));
  };
  if (dbl) go(static_cast<double>(eps));
  else go(static_cast<float>(eps));
}

// grad_input and/or grad_weight/grad_bias of LayerNorm (rms=false) or RMSNorm (rms=true).
// One launch of layer_norm_bwd when a row fits in registers (N <= T * ITEMS): it computes
// grad_input and the weight/bias grads, whose per-group partials the last groups to finish sum
// (a fan-in tree over Device::arrival_counters). Longer rows add layer_norm_bwd_wb, whose last
// row block per column group finishes the column sums.
void norm_backward(Device& d, const std::string& opts, const rows::Config& rc, const at::Tensor& dy, const at::Tensor& x,
                   const at::Tensor& mean, const at::Tensor& rstd, const at::Tensor& w, const at::Tensor& dx,
                   const at::Tensor& dw, const at::Tensor& db, int64_t M, int64_t N, bool rms) {
  if (N == 0) return;
  const bool want_dx = dx.defined() && M > 0, want_wb = dw.defined() || db.defined();
  if (!want_dx && !want_wb) return;
  Buf mean_b = rms ? Buf{} : buf(mean);
  Buf dw_b = dw.defined() ? buf(dw) : Buf{}, db_b = db.defined() ? buf(db) : Buf{};
  const at::ScalarType acc = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  if (rc.serial) {
    // grad_input and each work-item's partial row of the weight/bias grads in one launch, then
    // their sum over the work-items in a second.
    const auto [items, per] = rows::serial_split(d, M);
    at::Tensor part = want_wb ? at::empty({items, 2, N}, x.options().dtype(acc)) : at::Tensor();
    Kernel& k = get_kernel(d, "norm", opts, "layer_norm_bwd_serial");
    launch(d, k, Range(static_cast<size_t>(items)), Range(1), buf(dy), buf(x), mean_b, buf(rstd), buf_or_none(w),
           want_dx ? buf(dx) : Buf{}, want_wb ? buf(part) : Buf{}, M, N, per, cl_int(w.defined()), cl_int(rms),
           cl_int(want_dx), cl_int(want_wb));
    if (!want_wb) return;
    Kernel& f = get_kernel(d, "norm", opts, "layer_norm_wb_serial");
    launch(d, f, Range(static_cast<size_t>((N + 7) / 8)), Range(1), buf(part), dw_b, db_b, items, N,
           cl_int(dw.defined()), cl_int(db.defined()));
    return;
  }
  const int T = rows::team_width(N, rc.items);
  const int64_t lanes = kMaxWG / T, tiles = (M + lanes - 1) / lanes;
  const bool fused_wb = want_wb && N <= int64_t(T) * rc.items;
  if (want_dx || fused_wb) {
    int64_t iters = 1, groups = std::max<int64_t>(tiles, 1);
    at::Tensor part;
    cl_mem counters = nullptr;
    if (fused_wb) {
      // Each group sums at least kMinRows rows (its partial row stays small next to them), and
      // there are groups_per_cu groups per compute unit at most (each keeps 2 * ITEMS loads per
      // item in flight: enough to fill the device's bandwidth), at least 64 and at most
      // fan_in^2, so the fan-in tree has at most two levels.
      const int64_t max_groups = std::min<int64_t>(
          std::max<int64_t>(int64_t(rc.groups_per_cu) * d.info.compute_units, 64), int64_t(rc.fan_in) * rc.fan_in);
      iters = std::max((kMinRows + lanes - 1) / lanes, (tiles + max_groups - 1) / max_groups);
      iters = std::max<int64_t>(iters, 1);
      groups = std::max<int64_t>((tiles + iters - 1) / iters, 1);
      // Partial rows of every level of the fan-in tree, and one counter per team.
      int64_t slots = 0, teams = 0;
      for (int64_t n = groups;;) {
        const int64_t nt = (n + rc.fan_in - 1) / rc.fan_in;
        slots += n;
        teams += nt;
        if (nt == 1) break;
        n = nt;
      }
      counters = d.arrival_counters(static_cast<size_t>(teams));
      TORCH_CHECK(counters, "torch_ocl: layer norm backward needs ", teams, " arrival counters");
      part = at::empty({slots, 2, N}, x.options().dtype(acc));
    }
    const Buf bdy = buf(dy), bx = buf(x), bw = buf_or_none(w), bdx = want_dx ? buf(dx) : Buf{};
    const at::Tensor none;
    const bool vec = vec_rows(rc, N, {{&dy, bdy}, {&x, bx}, {&w, bw}, {want_dx ? &dx : &none, bdx}});
    Kernel& k = get_kernel(d, "norm", opts + (vec ? " -DVEC=4" : ""), "layer_norm_bwd");
    launch(d, k, Range(static_cast<size_t>(groups) * kMaxWG), Range(kMaxWG), bdy, bx, mean_b, buf(rstd), bw, bdx,
           fused_wb ? buf(part) : Buf{}, counters, dw_b,
           db_b, M, N, cl_int(T), cl_int(iters), cl_int(w.defined()), cl_int(rms), cl_int(want_dx),
           cl_int(fused_wb && dw.defined()), cl_int(fused_wb && db.defined()));
  }
  if (!want_wb || fused_wb) return;
  // Row blocks of at least 64 rows (about 256 blocks at most): enough work-groups to fill the
  // device and a short dependent loop per work-item; the partials stay small next to dy and x.
  const int64_t col_groups = (N + kCols - 1) / kCols;
  const int64_t rows_per_block = std::max<int64_t>(64, (M + 255) / 256);
  const int64_t blocks = std::max<int64_t>((M + rows_per_block - 1) / rows_per_block, 1);
  at::Tensor dw_part = at::empty({blocks, N}, x.options().dtype(acc));
  at::Tensor db_part = at::empty({blocks, N}, x.options().dtype(acc));
  cl_mem counters = d.arrival_counters(static_cast<size_t>(col_groups));
  Kernel& k = get_kernel(d, "norm", opts, "layer_norm_bwd_wb");
  // 1-D work-groups (COLS columns x lanes, flattened) along x, one row block per y.
  launch(d, k, Range(static_cast<size_t>(col_groups) * kMaxWG, static_cast<size_t>(blocks)), Range(kMaxWG, 1),
         buf(dy), buf(x), mean_b, buf(rstd), buf(dw_part), buf(db_part), counters, dw_b, db_b, M, N, rows_per_block,
         cl_int(rms), cl_int(dw.defined()), cl_int(db.defined()));
  if (counters) return;
  Kernel& f = get_kernel(d, "norm", opts, "layer_norm_bwd_wb_final");
  launch(d, f, Range(static_cast<size_t>(col_groups) * kMaxWG), Range(kMaxWG), buf(dw_part), buf(db_part), dw_b, db_b,
         N, blocks, cl_int(dw.defined()), cl_int(db.defined()));
}

}  // namespace

// native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_ocl(const at::Tensor& input,
                                                                     c10::IntArrayRef normalized_shape,
                                                                     const std::optional<at::Tensor>& weight_opt,
                                                                     const std::optional<at::Tensor>& bias_opt,
                                                                     double eps) {
  const at::Tensor weight = weight_opt.has_value() && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  const at::Tensor bias = bias_opt.has_value() && bias_opt->defined() ? bias_opt->contiguous() : at::Tensor();
  auto [M, N] = check_inputs(input, normalized_shape, weight, bias);
  Device& d = ocl_device(input);
  const at::Tensor x = input.contiguous();
  const at::ScalarType wt = weight.defined() ? weight.scalar_type() : bias.defined() ? bias.scalar_type() : x.scalar_type();
  // Like the CPU: statistics are float when a 16-bit input meets float parameters.
  const bool mixed = is_reduced(x.scalar_type()) && wt == at::kFloat;
  const Types types{x.scalar_type(), wt, mixed ? at::kFloat : x.scalar_type()};
  const rows::Config rc = rows::config(d, rows::kNorm);
  const std::string opts = options(d, types, rc, N, "native_layer_norm");
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  auto ss = stat_shape(input, normalized_shape.size());
  at::Tensor mean = at::empty(ss, x.options().dtype(types.s));
  at::Tensor rstd = at::empty(ss, x.options().dtype(types.s));
  norm_forward(d, opts, rc, x, weight, bias, y, mean, rstd, M, N, eps, false);
  return {y, mean, rstd};
}

// native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward_ocl(
    const at::Tensor& grad_out, const at::Tensor& input, c10::IntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt, const std::optional<at::Tensor>& bias_opt,
    std::array<bool, 3> output_mask) {
  const at::Tensor weight = weight_opt.has_value() && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  const at::Tensor bias = bias_opt.has_value() && bias_opt->defined() ? bias_opt->contiguous() : at::Tensor();
  auto [M, N] = check_inputs(input, normalized_shape, weight, bias);
  Device& d = ocl_device(input);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const at::Tensor mu = mean.contiguous(), rs = rstd.contiguous();
  const at::ScalarType wt = weight.defined() ? weight.scalar_type() : bias.defined() ? bias.scalar_type() : x.scalar_type();
  const Types types{x.scalar_type(), wt, rs.scalar_type()};
  const rows::Config rc = rows::backward(rows::config(d, rows::kNorm));
  const std::string opts = options(d, types, rc, N, "native_layer_norm_backward");
  at::Tensor dx, dw, db;
  if (output_mask[0]) dx = at::empty_like(x, at::MemoryFormat::Contiguous);
  if (output_mask[1] && weight.defined()) dw = at::empty_like(weight, at::MemoryFormat::Contiguous);
  if (output_mask[2] && (bias.defined() || weight.defined()))
    db = at::empty_like(bias.defined() ? bias : weight, at::MemoryFormat::Contiguous);
  norm_backward(d, opts, rc, dy, x, mu, rs, weight, dx, dw, db, M, N, false);
  return {dx, dw, db};
}

// _fused_rms_norm(Tensor input, int[] normalized_shape, Tensor? weight, float? eps) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> _fused_rms_norm_ocl(const at::Tensor& input, c10::IntArrayRef normalized_shape,
                                                       const std::optional<at::Tensor>& weight_opt,
                                                       std::optional<double> eps_opt) {
  const at::Tensor weight = weight_opt.has_value() && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  auto [M, N] = check_inputs(input, normalized_shape, weight, at::Tensor());
  Device& d = ocl_device(input);
  const at::Tensor x = input.contiguous();
  const at::ScalarType wt = weight.defined() ? weight.scalar_type() : x.scalar_type();
  // rstd is kept in the accumulation type (float for 16-bit inputs), like the composite.
  const at::ScalarType st = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const Types types{x.scalar_type(), wt, st};
  const rows::Config rc = rows::config(d, rows::kNorm);
  const std::string opts = options(d, types, rc, N, "_fused_rms_norm");
  // Default eps: the machine epsilon of the accumulation type, as the CPU composite uses.
  const double eps = eps_opt.has_value() ? *eps_opt
                     : st == at::kDouble ? std::numeric_limits<double>::epsilon()
                                         : static_cast<double>(std::numeric_limits<float>::epsilon());
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  at::Tensor rstd = at::empty(stat_shape(input, normalized_shape.size()), x.options().dtype(st));
  norm_forward(d, opts, rc, x, weight, at::Tensor(), y, at::Tensor(), rstd, M, N, eps, true);
  return {y, rstd};
}

// _fused_rms_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor rstd, Tensor? weight, bool[2] output_mask) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> _fused_rms_norm_backward_ocl(const at::Tensor& grad_out, const at::Tensor& input,
                                                                c10::IntArrayRef normalized_shape,
                                                                const at::Tensor& rstd,
                                                                const std::optional<at::Tensor>& weight_opt,
                                                                std::array<bool, 2> output_mask) {
  const at::Tensor weight = weight_opt.has_value() && weight_opt->defined() ? weight_opt->contiguous() : at::Tensor();
  auto [M, N] = check_inputs(input, normalized_shape, weight, at::Tensor());
  Device& d = ocl_device(input);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous(), rs = rstd.contiguous();
  const at::ScalarType wt = weight.defined() ? weight.scalar_type() : x.scalar_type();
  const Types types{x.scalar_type(), wt, rs.scalar_type()};
  const rows::Config rc = rows::backward(rows::config(d, rows::kNorm));
  const std::string opts = options(d, types, rc, N, "_fused_rms_norm_backward");
  at::Tensor dx, dw;
  if (output_mask[0]) dx = at::empty_like(x, at::MemoryFormat::Contiguous);
  if (output_mask[1] && weight.defined()) dw = at::empty_like(weight, at::MemoryFormat::Contiguous);
  norm_backward(d, opts, rc, dy, x, at::Tensor(), rs, weight, dx, dw, at::Tensor(), M, N, true);
  return {dx, dw};
}

namespace {

// ---- weight norm ---------------------------------------------------------------------------
// w = v * (g / ||v||), the norm over every dim of v but `dim`. Like the CPU's (and CUDA's)
// fused kernels, only dim 0 and the last dim are served (torch._weight_norm decomposes the
// others); norms are kept in float for 16-bit dtypes, arithmetic in float_or_double.

void check_weight_norm_dim(const at::Tensor& v, int64_t dim) {
  TORCH_CHECK(v.dim() > 0, "weight_norm: expected v with at least one dimension");
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1,
              "weight_norm: the fused kernel supports only dim 0 or the last dim (", v.dim() - 1, "), got ", dim);
}

// v's sizes with every dim but `dim` set to 1 (the shape of g and of the norms).
std::vector<int64_t> weight_norm_shape(const at::Tensor& v, int64_t dim) {
  std::vector<int64_t> shape(v.dim(), 1);
  shape[dim] = v.size(dim);
  return shape;
}

// sqrt(sum(x^2)) over every dim of x but `dim` (keepdim), or |x| when x has no other dim.
at::Tensor norm_except(const at::Tensor& x, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != dim) dims.push_back(i);
  return dims.empty() ? at::abs(x) : at::linalg_vector_norm(x, 2, dims, /*keepdim=*/true);
}

// Runs spec into `out` over inputs broadcast to out's shape, computing in `compute`.
void weight_norm_pointwise(const at::Tensor& out, std::initializer_list<at::Tensor> inputs, const PointwiseSpec& s,
                           at::ScalarType compute) {
  at::TensorIteratorConfig cfg;
  cfg.set_check_mem_overlap(true).check_all_same_dtype(false).add_output(out);
  for (const auto& t : inputs) cfg.add_const_input(t);
  auto iter = cfg.build();
  pointwise(iter, s, {}, compute);
}

void check_weight_norm_floating(const at::Tensor& v, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(v.scalar_type()), "\"", op, "\" not implemented for '",
                              at::toString(v.scalar_type()), "'");
}

// _weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> _weight_norm_interface_ocl(const at::Tensor& v, const at::Tensor& g, int64_t dim) {
  TORCH_CHECK(v.device() == g.device(), "weight_norm: expected v and g to be on the same device, but v is on ",
              v.device(), " and g is on ", g.device());
  check_weight_norm_dim(v, dim);
  check_weight_norm_floating(v, "weight_norm_kernel");
  const std::vector<int64_t> shape = weight_norm_shape(v, dim);
  TORCH_CHECK(g.numel() == v.size(dim), "weight_norm: expected g to have ", v.size(dim), " elements, got ",
              g.numel());
  const at::ScalarType acc = float_or_double(v.scalar_type());
  const at::ScalarType norm_type = is_reduced(g.scalar_type()) ? at::kFloat : g.scalar_type();
  const at::Tensor norm = norm_except(v.to(acc), dim);
  at::Tensor w = at::empty_like(v, at::MemoryFormat::Contiguous);
  static const PointwiseSpec scale{"weight_norm_fwd", "a * (b / c)"};
  weight_norm_pointwise(w, {v, g.reshape(shape), norm}, scale, acc);
  return {w, norm.to(norm_type).reshape(g.sizes())};
}

// _weight_norm_interface_backward(Tensor grad_w, Tensor saved_v, Tensor saved_g, Tensor saved_norms, int dim) -> (Tensor, Tensor)
// With s = sum(grad_w * v) over the reduced dims: grad_g = s / norm and
// grad_v = (g / norm) * grad_w - (g / norm) * s / norm^2 * v (the CPU's formula).
std::tuple<at::Tensor, at::Tensor> _weight_norm_interface_backward_ocl(const at::Tensor& grad_w,
                                                                       const at::Tensor& saved_v,
                                                                       const at::Tensor& saved_g,
                                                                       const at::Tensor& saved_norms, int64_t dim) {
  TORCH_CHECK(saved_v.is_contiguous(), "saved_v must be contiguous");
  TORCH_CHECK(saved_g.is_contiguous(), "saved_g must be contiguous");
  TORCH_CHECK(saved_norms.is_contiguous(), "saved_norms must be contiguous");
  check_weight_norm_dim(saved_v, dim);
  check_weight_norm_floating(saved_v, "weight_norm_backward_kernel");
  const std::vector<int64_t> shape = weight_norm_shape(saved_v, dim);
  TORCH_CHECK(saved_g.numel() == saved_v.size(dim) && saved_norms.numel() == saved_v.size(dim),
              "weight_norm_backward: expected saved_g and saved_norms to have ", saved_v.size(dim), " elements");
  TORCH_CHECK(grad_w.sizes() == saved_v.sizes(), "weight_norm_backward: expected grad_w of shape ", saved_v.sizes(),
              ", got ", grad_w.sizes());
  const at::ScalarType acc = float_or_double(saved_v.scalar_type());
  const at::Tensor prod = at::mul(grad_w.to(acc), saved_v.to(acc));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < saved_v.dim(); ++i)
    if (i != dim) dims.push_back(i);
  const at::Tensor s = dims.empty() ? prod : at::sum(prod, dims, /*keepdim=*/true);
  const at::Tensor g = saved_g.reshape(shape), norm = saved_norms.reshape(shape);
  at::Tensor grad_v = at::empty_like(saved_v, at::MemoryFormat::Contiguous);
  at::Tensor grad_g = at::empty(shape, saved_g.options());
  static const PointwiseSpec dv{"weight_norm_bwd_v", "CT sa = c / d; CT sb = sa * e / (d * d); r0 = sa * a - sb * b;"};
  static const PointwiseSpec dg{"weight_norm_bwd_g", "a / b"};
  weight_norm_pointwise(grad_v, {grad_w, saved_v, g, norm, s}, dv, acc);
  weight_norm_pointwise(grad_g, {s, norm}, dg, acc);
  return {grad_v, grad_g.reshape(saved_g.sizes())};
}

}  // namespace

// GroupNorm: ATen's own native_group_norm / native_group_norm_backward (their checks, output
// allocation, mixed-dtype rules and empty-input answers, as on the CPU) call the GroupNormKernel
// and GroupNormBackwardKernel stubs, registered for PrivateUse1 below, which run kernels/norm.cl's
// group_norm kernels on contiguous NCHW data. ATen requires contiguous tensors of non-CPU devices
// (torch 2.11-2.13), so channels-innermost inputs (channels_last, channels_last_3d) skip ATen's
// wrappers: the registered functions repeat their checks and allocations in the input's layout
// and the stubs run the group_norm_cl_* kernels on the data in place. Other layouts pass through
// contiguous copies. Outputs and gradients come back in the CPU's layout. ATen's autograd formula
// copies grad_output and input to contiguous NCHW before the backward on non-CPU devices, so
// F.group_norm (aten::group_norm) has an AutogradPrivateUse1 node of its own for such inputs.
namespace {

// The channels-innermost launches' geometry: LX consecutive channels by LY = kMaxWG / LX lanes of
// positions per work-group, S slices of each sample's positions in the partial-sum kernels (about
// four work-groups per compute unit in all, at least four positions per lane), and GY lanes of
// work-groups over the positions in the element passes (about eight per compute unit).
struct GnClGrid {
  int64_t LX, LY, CB, S, GY;
  GnClGrid(const Device& d, int64_t N, int64_t C, int64_t HxW) {
    LX = std::min<int64_t>(rows::next_pow2(C), 64);
    LY = rows::kMaxWG / LX;
    CB = (C + LX - 1) / LX;
    const int64_t cu = std::max<int64_t>(d.info.compute_units, 1), blocks = std::max<int64_t>(N * CB, 1);
    S = std::max<int64_t>(1, std::min<int64_t>((4 * cu + blocks - 1) / blocks, HxW / (4 * LY)));
    GY = std::max<int64_t>(1, std::min<int64_t>((8 * cu + blocks - 1) / blocks, (HxW + LY - 1) / LY));
  }
  Range part_global(int64_t N) const { return Range(static_cast<size_t>(N * CB * S * rows::kMaxWG)); }
  Range pass_global(int64_t N) const {
    return Range(static_cast<size_t>(CB * LX), static_cast<size_t>(GY * LY), static_cast<size_t>(N));
  }
  Range pass_local() const { return Range(static_cast<size_t>(LX), static_cast<size_t>(LY), 1); }
};

// Build options of the group_norm kernels for teams of T work-items over rows of at most
// max_len elements.
std::string group_norm_options(Device& d, const Types& t, const rows::Config& rc, int T, int64_t max_len,
                               const char* op) {
  bool dbl = false;
  const std::string kinds = kind_options(d, t, op, &dbl);
  // Indices within a row are 32-bit unless a row (or the stride loop past its end) needs more.
  const bool wide = max_len + rows::kMaxWG >= (int64_t(1) << 32);
  return kinds + (wide ? " -DGN_IDX=ulong" : "") + rows::options(rc, dbl, rows::reduce_for(rc, T));
}

// Y (and mean, rstd: [N, group]) from X: GroupNormKernel's signature.
void group_norm_kernel_ocl(const at::Tensor& X, const at::Tensor& gamma, const at::Tensor& beta, int64_t N, int64_t C,
                           int64_t HxW, int64_t group, double eps, at::Tensor& Y, at::Tensor& mean, at::Tensor& rstd) {
  if (X.numel() == 0) {  // rows of no elements (older ATen gets here): the CPU's mean 0, rstd NaN
    mean.zero_();
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  Device& d = ocl_device(X);
  const bool cl = rows::channels_innermost(X);
  TORCH_INTERNAL_ASSERT(cl ? Y.strides() == X.strides() : X.is_contiguous() && Y.is_contiguous());
  const at::ScalarType wt = gamma.defined() ? gamma.scalar_type() : beta.defined() ? beta.scalar_type() : X.scalar_type();
  const Types types{X.scalar_type(), wt, mean.scalar_type()};
  const rows::Config rc = rows::config(d, rows::kNorm);
  const int64_t D = C / group, rows_n = N * group, L = D * HxW;
  if (cl) {  // per-(n, slice, c) partials, per-(n, g) statistics and per-(n, c) coefficients, y
    const GnClGrid grid(d, N, C, HxW);
    const at::ScalarType acc = types.x == at::kDouble || types.w == at::kDouble ? at::kDouble : at::kFloat;
    const at::Tensor part = at::empty({N, grid.S, C, 2}, X.options().dtype(acc));
    const at::Tensor coef = at::empty({3, N, C}, X.options().dtype(acc));
    const rows::Split g = rows::split(rows_n, D * grid.S, rc.items, true, rows_n);
    const std::string opts = group_norm_options(d, types, rc, g.T, L, "native_group_norm");
    launch(d, get_kernel(d, "norm", opts, "group_norm_cl_part"), grid.part_global(N), Range(rows::kMaxWG), buf(X),
           buf(part), HxW, cl_int(C), cl_int(grid.S), cl_int(grid.LX));
    auto stats = [&](auto e) {
      launch(d, get_kernel(d, "norm", opts, "group_norm_cl_stats"), Range(g.groups * g.local), Range(g.local),
             buf(part), buf_or_none(gamma), buf_or_none(beta), buf(mean), buf(rstd), buf(coef), rows_n, HxW,
             cl_int(C), cl_int(D), cl_int(grid.S), e, cl_int(g.T), cl_int(gamma.defined()), cl_int(beta.defined()));
    };
    if (acc == at::kDouble) stats(eps);
    else stats(static_cast<float>(eps));
    launch(d, get_kernel(d, "norm", opts, "group_norm_cl_affine"), grid.pass_global(N), grid.pass_local(), buf(X),
           buf(coef), buf(Y), HxW, cl_int(C));
    return;
  }
  const rows::Split g = rows::split(rows_n, L, rc.items, true, rows_n);
  Kernel& k = get_kernel(d, "norm", group_norm_options(d, types, rc, g.T, L, "native_group_norm"), "group_norm_fwd");
  auto go = [&](auto e) {
    launch(d, k, Range(g.groups * g.local), Range(g.local), buf(X), buf_or_none(gamma), buf_or_none(beta), buf(Y),
           buf(mean), buf(rstd), rows_n, HxW, D, group, e, cl_int(g.T), cl_int(gamma.defined()),
           cl_int(beta.defined()));
  };
  if (types.x == at::kDouble || types.w == at::kDouble) go(eps);
  else go(static_cast<float>(eps));
}

// dX, dgamma, dbeta (each undefined when not wanted): GroupNormBackwardKernel's signature. Per
// (n, c) sums of dy * x and dy first, then dX per (n, g) row and the parameter grads per channel.
void group_norm_backward_kernel_ocl(const at::Tensor& dY, const at::Tensor& X, const at::Tensor& mean,
                                    const at::Tensor& rstd, const at::Tensor& gamma, int64_t N, int64_t C,
                                    int64_t HxW, int64_t group, at::Tensor& dX, at::Tensor& dgamma,
                                    at::Tensor& dbeta) {
  // Empty inputs (older ATen gets here) take the same launches where they have rows: sums over
  // no elements, so grad_bias 0 and grad_weight 0 * rstd, which is NaN for HxW == 0 (the CPU's).
  const bool want_wb = (dgamma.defined() || dbeta.defined()) && C > 0;
  Device& d = ocl_device(X);
  const bool cl = rows::channels_innermost(X) && X.numel() > 0;
  TORCH_INTERNAL_ASSERT(cl ? dY.strides() == X.strides() && (!dX.defined() || dX.strides() == X.strides())
                           : X.is_contiguous() && dY.is_contiguous() && (!dX.defined() || dX.is_contiguous()));
  const at::ScalarType wt = gamma.defined() ? gamma.scalar_type() : dgamma.defined() ? dgamma.scalar_type()
                          : dbeta.defined() ? dbeta.scalar_type() : X.scalar_type();
  const Types types{X.scalar_type(), wt, rstd.scalar_type()};
  const rows::Config rc = rows::backward(rows::config(d, rows::kNorm));
  const at::ScalarType acc = types.x == at::kDouble || types.w == at::kDouble ? at::kDouble : at::kFloat;
  const int64_t D = C / group, L = D * HxW;
  const at::Tensor ds = at::empty({N, C}, X.options().dtype(acc)), db = at::empty({N, C}, X.options().dtype(acc));
  const rows::Split gs = rows::split(N * C, HxW, rc.items, true, N * C);
  if (cl) {  // per-(n, slice, c) partials, then ds/db and dX's (n, c) coefficients per (n, g), then dX
    const GnClGrid grid(d, N, C, HxW);
    const at::Tensor part = at::empty({N, grid.S, C, 2}, X.options().dtype(acc));
    const at::Tensor coef = at::empty({4, N, C}, X.options().dtype(acc));
    const rows::Split g = rows::split(N * group, D, rc.items, true, N * group);
    const std::string opts = group_norm_options(d, types, rc, g.T, L, "native_group_norm_backward");
    launch(d, get_kernel(d, "norm", opts, "group_norm_cl_bwd_part"), grid.part_global(N), Range(rows::kMaxWG),
           buf(dY), buf(X), buf(part), HxW, cl_int(C), cl_int(grid.S), cl_int(grid.LX));
    launch(d, get_kernel(d, "norm", opts, "group_norm_cl_bwd_coef"), Range(g.groups * g.local), Range(g.local),
           buf(part), buf(mean), buf(rstd), buf_or_none(gamma), buf(ds), buf(db), buf(coef), N * group, HxW,
           cl_int(C), cl_int(D), cl_int(grid.S), cl_int(g.T), cl_int(gamma.defined()));
    if (dX.defined())
      launch(d, get_kernel(d, "norm", opts, "group_norm_cl_bwd_dx"), grid.pass_global(N), grid.pass_local(), buf(dY),
             buf(X), buf(coef), buf(dX), HxW, cl_int(C));
  } else if (N * C > 0) {
    Kernel& sums = get_kernel(d, "norm", group_norm_options(d, types, rc, gs.T, L, "native_group_norm_backward"),
                              "group_norm_bwd_sums");
    launch(d, sums, Range(gs.groups * gs.local), Range(gs.local), buf(dY), buf(X), buf(ds), buf(db), N * C, HxW,
           cl_int(gs.T));
  }
  if (dX.defined() && X.numel() > 0 && !cl) {
    const rows::Split gx = rows::split(N * group, L, rc.items, true, N * group);
    Kernel& k = get_kernel(d, "norm", group_norm_options(d, types, rc, gx.T, L, "native_group_norm_backward"),
                           "group_norm_bwd_dx");
    launch(d, k, Range(gx.groups * gx.local), Range(gx.local), buf(dY), buf(X), buf(mean), buf(rstd),
           buf_or_none(gamma), buf(ds), buf(db), buf(dX), N * group, HxW, D, group, cl_int(gx.T),
           cl_int(gamma.defined()));
  }
  if (want_wb) {
    Kernel& k = get_kernel(d, "norm", group_norm_options(d, types, rc, 1, L, "native_group_norm_backward"),
                           "group_norm_bwd_wb");
    launch(d, k, Range(static_cast<size_t>(C)), Range(), buf(ds), buf(db), buf(mean), buf(rstd),
           buf_or_none(dgamma), buf_or_none(dbeta), N, C, D, cl_int(dgamma.defined()), cl_int(dbeta.defined()));
  }
}

}  // namespace

namespace {

// Whether the channels-innermost path takes input: laid out so, non-empty, and N, C, HxW its own.
bool group_norm_in_place(const at::Tensor& input, int64_t N, int64_t C, int64_t HxW) {
  return input.numel() > 0 && rows::channels_innermost(input) && input.size(0) == N && input.size(1) == C &&
         input.numel() == N * C * HxW;
}

// ATen's check_group_norm_inputs (not exported), with its messages.
void check_group_norm_inputs(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, int64_t C,
                             int64_t group) {
  TORCH_CHECK(group > 0, "Expected num groups to be greater than 0, got ", group);
  TORCH_CHECK(C % group == 0, "Expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C),
              "Expected weight to be a vector of size equal to the number of ",
              "channels in input, but got weight of shape ", weight.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "Expected bias to be a vector of size equal to the number of ",
              "channels in input, but got bias of shape ", bias.sizes(), " and input of shape ", input.sizes());
}

}  // namespace

// native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
// Channels-innermost inputs: ATen's checks and allocations (output in the input's layout,
// statistics in the parameters' dtype when mixed), then the stub on the data in place.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_ocl(const at::Tensor& input,
                                                                     const std::optional<at::Tensor>& weight,
                                                                     const std::optional<at::Tensor>& bias, int64_t N,
                                                                     int64_t C, int64_t HxW, int64_t group, double eps) {
  if (!group_norm_in_place(input, N, C, HxW)) {
    auto [y, mean, rstd] = at::native::native_group_norm(input.contiguous(), weight, bias, N, C, HxW, group, eps);
    return {y.contiguous(input.suggest_memory_format()), mean, rstd};
  }
  const at::Tensor gamma = weight.has_value() && weight->defined() ? weight->contiguous() : at::Tensor();
  const at::Tensor beta = bias.has_value() && bias->defined() ? bias->contiguous() : at::Tensor();
  check_group_norm_inputs(input, gamma, beta, C, group);
  const bool mixed = at::native::is_mixed_type(input, gamma, beta);
  if (mixed) at::native::check_mixed_data_type(input, gamma, beta);
  const auto stat_options = input.options().dtype(at::native::param_scalar_type(input, mixed));
  at::Tensor y = at::empty_like(input);  // the input's strides
  at::Tensor mean = at::empty({N, group}, stat_options), rstd = at::empty({N, group}, stat_options);
  group_norm_kernel_ocl(input, gamma, beta, N, C, HxW, group, eps, y, mean, rstd);
  // channels_last(_3d) outputs stay so, as on the CPU; an (N, L, C) input's comes back contiguous.
  return {y.contiguous(input.suggest_memory_format()), mean, rstd};
}

// native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
// Channels-innermost inputs are read in place, grad_out too when it has their strides
// (otherwise it is copied into the input's layout).
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward_ocl(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> output_mask) {
  // Parameter grads without a weight: ATen's (and the CPU's) error, from its own function.
  const bool has_w = weight.has_value() && weight->defined();
  if (!group_norm_in_place(input, N, C, HxW) || (!has_w && (output_mask[1] || output_mask[2]))) {
    auto [dx, dw, db] = at::native::native_group_norm_backward(grad_out.contiguous(), input.contiguous(), mean, rstd,
                                                               weight, N, C, HxW, group, output_mask);
    if (dx.defined()) dx = dx.contiguous(input.suggest_memory_format());
    return {dx, dw, db};
  }
  TORCH_CHECK(input.scalar_type() == grad_out.scalar_type(), "Expected scalar types of X and dY are same.");
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "native_group_norm_backward: expected grad_out of the input's shape ",
              input.sizes(), ", got ", grad_out.sizes());
  TORCH_CHECK(mean.numel() == N * group && rstd.numel() == N * group,
              "native_group_norm_backward: expected mean and rstd of N * group = ", N * group, " elements, got ",
              mean.numel(), " and ", rstd.numel());
  const bool mixed = at::native::is_mixed_type(input, mean, rstd);
  if (mixed) at::native::check_mixed_data_type(input, mean, rstd);
  const at::Tensor gamma = weight.has_value() && weight->defined() ? weight->contiguous() : at::Tensor();
  const at::Tensor dy = grad_out.strides() == input.strides() ? grad_out : at::empty_like(input).copy_(grad_out);
  const auto dparam_options = gamma.defined() ? gamma.options() : input.options();
  at::Tensor dx = output_mask[0] ? at::empty_like(input) : at::Tensor();  // the input's strides
  at::Tensor dw = output_mask[1] ? at::empty({C}, dparam_options) : at::Tensor();
  at::Tensor db = output_mask[2] ? at::empty({C}, dparam_options) : at::Tensor();
  group_norm_backward_kernel_ocl(dy, input, mean.contiguous(), rstd.contiguous(), gamma, N, C, HxW, group, dx, dw, db);
  if (dx.defined()) dx = dx.contiguous(input.suggest_memory_format());
  return {dx, dw, db};
}

namespace {

std::optional<at::Tensor> opt(const at::Tensor& t) { return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt; }

// F.group_norm's autograd node for channels-innermost inputs. ATen's formula for
// native_group_norm passes grad_output and input through .contiguous() on every device but the
// CPU and XPU (full-size copies before the backward); this node hands both over as they are, so
// native_group_norm_backward_ocl reads them in place. create_graph takes ATen's composite.
struct GroupNormFunction : public torch::autograd::Function<GroupNormFunction> {
  // weight and bias as optionals: an undefined Tensor argument is not accepted by apply().
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input,
                            const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                            int64_t group, double eps) {
    at::AutoDispatchBelowADInplaceOrView below;
    const int64_t N = input.size(0), C = input.size(1), HxW = input.numel() / (N * C);
    auto [y, mean, rstd] = at::native_group_norm(input, weight, bias, N, C, HxW, group, eps);
    ctx->save_for_backward({input, weight.value_or(at::Tensor()), bias.value_or(at::Tensor()), mean, rstd});
    ctx->saved_data["group"] = group;
    ctx->saved_data["eps"] = eps;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &input = saved[0], &weight = saved[1], &bias = saved[2];
    const int64_t group = ctx->saved_data["group"].toInt();
    const double eps = ctx->saved_data["eps"].toDouble();
    // needs_input_grad counts the tensor arguments that were given: input, weight, bias.
    const bool need_x = ctx->needs_input_grad(0), need_w = weight.defined() && ctx->needs_input_grad(1);
    const bool need_b = bias.defined() && ctx->needs_input_grad(weight.defined() ? 2 : 1);
    const std::array<bool, 3> mask{need_x, need_w, need_b};
    torch::autograd::variable_list out{at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    if (at::GradMode::is_enabled()) {
      // create_graph=True: a gradient that is itself differentiable, from ATen's composite.
      const at::Tensor y = at::native::group_norm(input, group, opt(weight), opt(bias), eps, true);
      std::vector<at::Tensor> ins;
      for (int i = 0; i < 3; ++i)
        if (mask[i]) ins.push_back(saved[i]);
      if (ins.empty()) return out;
      const auto g = torch::autograd::grad({y}, ins, {grads[0]}, /*retain_graph=*/true, /*create_graph=*/true,
                                           /*allow_unused=*/true);
      for (int i = 0, j = 0; i < 3; ++i)
        if (mask[i]) out[i] = g[j++];
      return out;
    }
    const int64_t N = input.size(0), C = input.size(1), HxW = input.numel() / (N * C);
    auto [dx, dw, db] = at::native_group_norm_backward(grads[0], input, saved[3], saved[4], opt(weight), N, C, HxW,
                                                       group, mask);
    out[0] = dx, out[1] = dw, out[2] = db;
    return out;
  }
};

}  // namespace

// group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor
// The AutogradPrivateUse1 kernel: GroupNormFunction for non-empty channels-innermost inputs
// that need a gradient (and no forward AD or functorch transform); otherwise ATen's composite,
// with autograd recording its ops, exactly as without this override.
at::Tensor group_norm_autograd_ocl(const at::Tensor& input, int64_t num_groups, const std::optional<at::Tensor>& weight,
                                   const std::optional<at::Tensor>& bias, double eps, bool cudnn_enabled) {
  const at::Tensor w = weight.has_value() ? *weight : at::Tensor(), b = bias.has_value() ? *bias : at::Tensor();
  bool node = at::GradMode::is_enabled() && input.numel() > 0 && rows::channels_innermost(input) &&
              at::functorch::functorchTLSAccessor() == nullptr;
  bool grad = false;
  for (const at::Tensor* t : {&input, &w, &b}) {
    if (!t->defined()) continue;
    grad = grad || t->requires_grad();
    node = node && !t->_fw_grad(/*level=*/0).defined();
  }
  if (!(node && grad)) return at::native::group_norm(input, num_groups, weight, bias, eps, cudnn_enabled);
  return GroupNormFunction::apply(input, opt(w), opt(b), num_groups, eps);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { m.impl("group_norm", group_norm_autograd_ocl); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "native_layer_norm", native_layer_norm_ocl);
  OCL_IMPL(m, "native_layer_norm_backward", native_layer_norm_backward_ocl);
  OCL_IMPL(m, "_fused_rms_norm", _fused_rms_norm_ocl);
  OCL_IMPL(m, "_fused_rms_norm_backward", _fused_rms_norm_backward_ocl);
  OCL_IMPL(m, "_weight_norm_interface", _weight_norm_interface_ocl);
  OCL_IMPL(m, "_weight_norm_interface_backward", _weight_norm_interface_backward_ocl);
  OCL_IMPL(m, "native_group_norm", native_group_norm_ocl);
  OCL_IMPL(m, "native_group_norm_backward", native_group_norm_backward_ocl);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(GroupNormKernel, &torch_ocl::group_norm_kernel_ocl);
REGISTER_PRIVATEUSE1_DISPATCH(GroupNormBackwardKernel, &torch_ocl::group_norm_backward_kernel_ocl);
}  // namespace at::native
