// Reductions over any set of dims: sum/mean/nansum/prod, amax/amin, aminmax, max/min (+indices),
// argmax/argmin, all/any, norms, var/std(+mean), logsumexp, count_nonzero, renorm. One engine
// (run_reduce) turns (input strides, reduced dims, output strides) into a coalesced geometry and
// launches kernels/reduce.cl; inputs and outputs may have any strides (no copies except when more
// than MAX_DIMS dims survive coalescing). Output shapes, dtypes and argument errors come from
// ATen's own meta functions where the op is structured, so they match the CPU exactly.
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/AccumulateType.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <c10/core/DefaultDtype.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/sum_meta.h>
#include <c10/util/irange.h>
#include <torch/library.h>

#include "../aten/TorchCompat.h"
#include <algorithm>
#include <cmath>

namespace torch_ocl {
namespace {

// Must match the OP_* / MAP_* / FIN_* / MODE_* / KIND_* codes of kernels/reduce.cl.
enum ReduceOp : int { kSum = 0, kProd = 1, kMinMax = 2, kArg = 3, kWelford = 4, kLogSumExp = 5, kAMinMax = 6 };
enum Mode : uint32_t {
  kMapNone = 0, kMapNanToZero = 1, kMapAbs = 2, kMapSquare = 3, kMapPow = 4, kMapNonZero = 5, kMapMask = 7,
  kFinDiv = 8, kFinSqrt = 16, kFinPow = 24,
  kModeMin = 32, kModeValues = 64, kModeStd = 128, kModeMean = 256
};
enum Kind : int { kPlain = 0, kHalfKind = 1, kBF16Kind = 2, kBoolKind = 3 };

constexpr int kMaxDims = 8;        // MAX_DIMS of reduce.cl
constexpr size_t kLocal = 256;     // LOCAL_SIZE of reduce.cl
constexpr size_t kGroupsPerCU = 4; // below this many groups per compute unit, split the reduced range
constexpr uint64_t kMinPerItem = 16;    // do not split below this many elements per work-item
constexpr uint64_t kMaxSerial = 1024;   // longest serial slice per item when splitting anyway (accuracy)
constexpr size_t kStateBytes = 32;      // >= sizeof(State) for every op of reduce.cl

struct Geom {
  cl_uint kdims = 0, rdims = 0;
  cl_ulong ksize[kMaxDims];
  cl_long kin[kMaxDims];
  cl_long kout[kMaxDims];
  cl_long kout2[kMaxDims];
  cl_ulong rsize[kMaxDims];
  cl_long rin[kMaxDims];
};

// What one reduction computes. `val` is the dtype elements are converted to before reducing
// (the dtype= argument; the CPU casts the input to it first), `out`/`out2` the output dtypes.
struct Spec {
  ReduceOp op;
  at::ScalarType val;
  uint32_t mode = 0;      // runtime variant of the op (Mode bits)
  double p0 = 1, p1 = 1;  // exponent (norm p) or correction (var); divisor (mean) or 1/exponent
};

std::string storage_name(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kBFloat16: return "ushort";
    case at::kBool: return "uchar";
    default: return cl_type_name(t);
  }
}
int kind_of(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return kHalfKind;
    case at::kBFloat16: return kBF16Kind;
    case at::kBool: return kBoolKind;
    default: return kPlain;
  }
}
at::ScalarType acc_type(at::ScalarType val) {
  if (val == at::kDouble) return at::kDouble;
  if (at::isFloatingType(val)) return at::kFloat;
  return at::kLong;
}

std::string build_options(const Spec& s, at::ScalarType in, at::ScalarType out, at::ScalarType out2) {
  const at::ScalarType acc = acc_type(s.val);
  std::string o = "-DOP=" + std::to_string(s.op) + " -DIN_T=" + storage_name(in) +
                  " -DIN_KIND=" + std::to_string(kind_of(in)) + " -DACC=" + cl_type_name(acc) +
                  " -DACC_FLOAT=" + (at::isFloatingType(acc) ? "1" : "0") + " -DOUT_T=" + storage_name(out) +
                  " -DOUT_KIND=" + std::to_string(kind_of(out)) + " -DOUT2_T=" + storage_name(out2);
  if (s.val != in) {
    if (s.val == at::kHalf) o += " -DVAL_HALF";
    else if (s.val == at::kBFloat16) o += " -DVAL_BF16";
    else if (s.val == at::kBool) o += " -DVAL_BOOL";
    else if (at::isIntegralType(s.val, false) && s.val != at::kLong) o += " -DVAL_CAST=" + cl_type_name(s.val);
  }
  return o;
}

size_t pow2_ceil(uint64_t n) {
  size_t p = 1;
  while (p < n && p < kLocal) p <<= 1;
  return p;
}
cl_uint log2_exact(size_t p) {
  cl_uint l = 0;
  while ((size_t(1) << l) < p) ++l;
  return l;
}

// Scalar kernel argument of the accumulation type.
template <typename F>
void with_acc_args(at::ScalarType acc, double p0, double p1, F&& f) {
  if (acc == at::kDouble) f(static_cast<cl_double>(p0), static_cast<cl_double>(p1));
  else if (acc == at::kFloat) f(static_cast<cl_float>(p0), static_cast<cl_float>(p1));
  else f(static_cast<cl_long>(p0), static_cast<cl_long>(p1));
}

struct KeptDim { int64_t size, in, out, out2; };
struct RedDim { int64_t size, in; };

void run_reduce(const Spec& spec, const at::Tensor& self, at::native::DimMask mask, bool keepdim,
                const at::Tensor& out, const at::Tensor& out2);

// Whether writing `out` could change `self` (same storage and not provably disjoint).
bool may_overlap(const at::Tensor& out, const at::Tensor& self) {
  if (!out.defined() || out.numel() == 0 || self.numel() == 0) return false;
  if (!out.storage().is_alias_of(self.storage())) return false;
  return at::get_overlap_status(out, self) != at::MemOverlapStatus::No;
}

// More dims than the kernel takes survived coalescing: reduce a contiguous copy laid out as
// (kept..., reduced...) into contiguous temporaries, then copy them into the outputs.
void run_reduce_via_copy(const Spec& spec, const at::Tensor& self, at::native::DimMask mask, const at::Tensor& out,
                         const at::Tensor& out2) {
  std::vector<int64_t> perm, kept_sizes;
  int64_t nred = 1;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (!mask[i]) { perm.push_back(i); kept_sizes.push_back(self.size(i)); }
  for (int64_t i = 0; i < self.dim(); ++i)
    if (mask[i]) { perm.push_back(i); nred *= self.size(i); }
  int64_t nout = c10::multiply_integers(kept_sizes);
  at::Tensor flat = self.permute(perm).contiguous().view({nout, nred});
  at::Tensor t1 = out.defined() ? at::empty({nout}, out.options()) : at::Tensor();
  at::Tensor t2 = out2.defined() ? at::empty({nout}, out2.options()) : at::Tensor();
  at::native::DimMask m;
  m.set(1);
  run_reduce(spec, flat, m, false, t1, t2);
  if (out.defined()) out.copy_(t1.view(out.sizes()));
  if (out2.defined()) out2.copy_(t2.view(out2.sizes()));
}

// CPU devices: a float/double sum over one reduced dim with one kept dim, either of them
// unit-stride, by reduce_sum_cols / reduce_sum_rows of kernels/reduce.cl (`opts`: built with
// SUM_VEC), where there are enough work-items to occupy every core; false otherwise (then
// reduce_fwd runs). PoCL, 2-core AVX2 VM (bench/RESULTS.md, session 14), us per call, one
// process: x.sum(0) of 1024x512 floats 1,241 -> 196, x.sum(1) 1,184 -> 220; 1024x128
// 365 -> 62 and 381 -> 83. Four compensated chains per work-item instead of one (session 15,
// alternating processes, three rounds): 1024x512 sum(0) 199-209 -> 110-127, sum(1) 219-230 ->
// 114-135; 1024x128 sum(0) 62-73 -> 39-53.
constexpr int kSumVec = 8;  // SUM_VEC: 8 floats fill an AVX2 register
bool run_sum_vec(const Spec& spec, Device& d, const std::string& opts, const at::Tensor& self, const at::Tensor& out,
                 const KeptDim& kept, const RedDim& red, uint64_t nout, uint64_t nred) {
  const uint64_t cu = std::max<cl_uint>(d.info.compute_units, 1);
  const at::ScalarType acc = acc_type(spec.val);
  if (kept.in == 1 && red.in != 1) {
    const uint64_t items = (nout + kSumVec - 1) / kSumVec;
    if (items < cu) return false;
    Kernel& k = get_kernel(d, "reduce", opts, "reduce_sum_cols");
    with_acc_args(acc, spec.p0, spec.p1, [&](auto p0, auto p1) {
      launch(d, k, Range(items), Range(1), buf(self), buf(out), cl_ulong(nout), cl_ulong(nred), cl_long(red.in),
             cl_long(kept.out), cl_uint(spec.mode), p0, p1);
    });
    return true;
  }
  if (red.in == 1 && nout >= cu) {
    const uint64_t items = std::min<uint64_t>(nout, cu * 8), per_item = (nout + items - 1) / items;
    Kernel& k = get_kernel(d, "reduce", opts, "reduce_sum_rows");
    with_acc_args(acc, spec.p0, spec.p1, [&](auto p0, auto p1) {
      launch(d, k, Range((nout + per_item - 1) / per_item), Range(1), buf(self), buf(out), cl_ulong(nout),
             cl_ulong(nred), cl_ulong(per_item), cl_long(kept.in), cl_long(kept.out), cl_uint(spec.mode), p0, p1);
    });
    return true;
  }
  return false;
}

// Reduces `self` over the dims set in `mask` into `out` (and `out2`: indices or mean), whose
// shapes are already the reduction's (with or without the kept size-1 dims, per keepdim).
void run_reduce(const Spec& spec, const at::Tensor& self, at::native::DimMask mask, bool keepdim,
                const at::Tensor& out, const at::Tensor& out2) {
  const at::Tensor& shape_src = out.defined() ? out : out2;  // argmax passes only out2
  if (shape_src.numel() == 0) return;
  // Outputs that overlap the input (out= aliasing self) are computed into temporaries first.
  if (may_overlap(out, self) || may_overlap(out2, self)) {
    at::Tensor t1 = out.defined() ? at::empty(out.sizes(), out.options()) : at::Tensor();
    at::Tensor t2 = out2.defined() ? at::empty(out2.sizes(), out2.options()) : at::Tensor();
    run_reduce(spec, self, mask, keepdim, t1, t2);
    if (out.defined()) out.copy_(t1);
    if (out2.defined()) out2.copy_(t2);
    return;
  }
  Device& d = ocl_device(self);
  const char* op_name = "reduction";
  check_dtype_supported(d, self.scalar_type(), op_name);
  check_dtype_supported(d, shape_src.scalar_type(), op_name);
  check_dtype_supported(d, spec.val, op_name);

  // Geometry: walk input dims innermost first, mapping kept dims to output dims.
  const int64_t nd = self.dim();
  std::vector<KeptDim> kept;
  std::vector<RedDim> red;
  int64_t out_dim = keepdim ? nd : 0;
  if (!keepdim)
    for (int64_t i = 0; i < nd; ++i) out_dim += mask[i] ? 0 : 1;
  uint64_t nred = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    const bool reduced = mask[i];
    if (keepdim || !reduced) --out_dim;
    const int64_t sz = self.size(i);
    if (reduced) {
      nred *= static_cast<uint64_t>(sz);
      if (sz != 1) red.push_back({sz, self.stride(i)});
    } else if (sz != 1) {
      kept.push_back({sz, self.stride(i), out.defined() ? out.stride(out_dim) : 0,
                      out2.defined() ? out2.stride(out_dim) : 0});
    }
  }
  // Memory order: innermost input stride first (coalesced loads). Argmax/argmin keep the
  // logical order so the reduction index is the row-major index the CPU returns.
  std::stable_sort(kept.begin(), kept.end(), [](const KeptDim& a, const KeptDim& b) { return a.in < b.in; });
  if (spec.op != kArg)
    std::stable_sort(red.begin(), red.end(), [](const RedDim& a, const RedDim& b) { return a.in < b.in; });
  // Coalesce dims that are one linear run in every operand.
  std::vector<KeptDim> k2;
  for (const auto& k : kept) {
    if (!k2.empty()) {
      KeptDim& p = k2.back();
      if (k.in == p.in * p.size && k.out == p.out * p.size && k.out2 == p.out2 * p.size) {
        p.size *= k.size;
        continue;
      }
    }
    k2.push_back(k);
  }
  std::vector<RedDim> r2;
  for (const auto& r : red) {
    if (!r2.empty() && r.in == r2.back().in * r2.back().size) {
      r2.back().size *= r.size;
      continue;
    }
    r2.push_back(r);
  }
  if (k2.empty()) k2.push_back({1, 0, 0, 0});
  if (r2.empty()) r2.push_back({1, 0});
  if (k2.size() > size_t(kMaxDims) || r2.size() > size_t(kMaxDims) ||
      (r2.size() > 1 && nred >= (uint64_t(1) << 32))) {
    run_reduce_via_copy(spec, self, mask, out, out2);
    return;
  }
  const uint64_t nout = static_cast<uint64_t>(shape_src.numel());

  Geom g;
  g.kdims = static_cast<cl_uint>(k2.size());
  g.rdims = static_cast<cl_uint>(r2.size());
  for (size_t i = 0; i < k2.size(); ++i) {
    g.ksize[i] = k2[i].size; g.kin[i] = k2[i].in; g.kout[i] = k2[i].out; g.kout2[i] = k2[i].out2;
  }
  for (size_t i = 0; i < r2.size(); ++i) { g.rsize[i] = r2[i].size; g.rin[i] = r2[i].in; }

  // Work decomposition: row mode when the reduced elements are contiguous, column mode when
  // the outputs are (then P adjacent outputs share a group and loads coalesce across them).
  bool row_mode;
  if (nred <= 1) row_mode = false;
  else if (r2[0].in == 1) row_mode = true;
  else if (k2[0].in == 1 && nout > 1) row_mode = false;
  else row_mode = r2[0].in <= k2[0].in || nout == 1;
  size_t C, P;
  const bool cpu = d.info.is_cpu();
  if (cpu) {
    // CPU devices: one work-item per output where there are enough of them (a serial loop on
    // one core, no tree to climb; long reductions split over work-groups below), a team per
    // output only for the few; with SUM_LANES below. PoCL, 2-core AVX2 VM, ms per call
    // (bench/RESULTS.md, session 12): row sums of 1024x128 floats 3.03 -> 0.37 (kernel time),
    // column sums of 1024x512 2.13 -> 1.1-1.4 (wall, three runs), the full sum 0.38 -> 0.31.
    P = std::min<size_t>(pow2_ceil(nout), kLocal);
    C = kLocal / P;
  } else if (row_mode) {
    C = pow2_ceil(nred);
    P = kLocal / C;
  } else {
    P = std::min<size_t>(pow2_ceil(nout), 32);
    C = std::min(kLocal / P, pow2_ceil(nred));
    P = kLocal / C;
  }
  const uint64_t groups = (nout + P - 1) / P;
  const uint64_t per_item = (nred + C - 1) / C;
  const uint64_t target = std::max<uint64_t>(1, d.info.compute_units) * kGroupsPerCU;
  uint64_t nsplit = 1;
  if (groups < target && per_item > kMinPerItem)
    nsplit = std::min((target + groups - 1) / groups, per_item / kMinPerItem);
  if (groups < target && per_item > kMaxSerial) nsplit = std::max(nsplit, (per_item + kMaxSerial - 1) / kMaxSerial);
  nsplit = std::max<uint64_t>(nsplit, 1);
  uint64_t chunk = (nred + nsplit - 1) / nsplit;
  chunk = std::max<uint64_t>((chunk + C - 1) / C * C, C);  // nred == 0 (empty dims): one empty chunk
  nsplit = (nred + chunk - 1) / chunk;
  nsplit = std::max<uint64_t>(nsplit, 1);

  // Argmax-style ops store values of the input's dtype (if any) and int64 indices; var_mean
  // stores the mean in the variance's dtype and aminmax the max in the min's. Fixing these keeps
  // one program per input dtype.
  const bool arg = spec.op == kArg;
  const at::ScalarType out_t = arg ? self.scalar_type() : out.scalar_type();
  const at::ScalarType out2_t = spec.op == kWelford || spec.op == kAMinMax ? out_t : at::kLong;
  // CPU devices: independent compensated sums per work-item (SUM_LANES in kernels/reduce.cl),
  // and float/double sums of the input's own type also in vectors (SUM_VEC, see run_sum_vec).
  const at::ScalarType acc = acc_type(spec.val);
  // Not float64 p-norms: PoCL 3.1's double vector pow (seen on an AVX-512 EPYC host) returns
  // wrong values in every lane of a vector that holds a 0, inf or NaN lane; its scalar pow is right.
  const bool double_pow = acc == at::kDouble && (spec.mode & kMapMask) == kMapPow;
  const bool sum_vec = cpu && spec.op == kSum && spec.val == self.scalar_type() && acc == self.scalar_type() &&
                       at::isFloatingType(acc) && !out2.defined() && !double_pow;
  const std::string opts = build_options(spec, self.scalar_type(), out_t, out2_t) + (cpu ? " -DSUM_LANES" : "") +
                           (sum_vec ? " -DSUM_VEC=" + std::to_string(kSumVec) : "");
  if (sum_vec && k2.size() == 1 && r2.size() == 1 && run_sum_vec(spec, d, opts, self, out, k2[0], r2[0], nout, nred))
    return;
  Kernel& k = get_kernel(d, "reduce", opts, "reduce_fwd");
  Buf bx = buf(self), by = out.defined() ? buf(out) : Buf{nullptr, 0}, by2 = out2.defined() ? buf(out2) : Buf{nullptr, 0};
  at::Tensor ws;
  Buf bws{nullptr, 0};
  cl_mem counters = nullptr;
  // Finishing geometry of a split reduction (column layout over the partial states): at least
  // P outputs per group, so the last group of a column can finish all of its outputs.
  size_t fp = std::min<size_t>(pow2_ceil(nout), 32);
  size_t fc = std::min(kLocal / std::max(fp, P), pow2_ceil(nsplit));
  fp = kLocal / fc;
  if (nsplit > 1) {
    ws = at::empty({static_cast<int64_t>(nsplit * nout * kStateBytes)}, self.options().dtype(at::kByte));
    bws = buf(ws);
    // var/std on CPU devices finish in reduce_finish: PoCL 3.1's optimizer miscompiles the
    // Welford combine in reduce_fwd's last-group finish (NaN from 7,937 elements on, where the
    // split starts; the same partials finished by reduce_finish, or the same kernel built
    // with -cl-opt-disable, are right; every other op's in-kernel finish is too).
    counters = cpu && spec.op == kWelford ? nullptr : d.arrival_counters(groups);
  }
  with_acc_args(acc, spec.p0, spec.p1, [&](auto p0, auto p1) {
    launch(d, k, Range(groups * kLocal, nsplit), Range(kLocal, 1), bx, by, by2, bws, counters, g, cl_ulong(nout),
           cl_ulong(nred), cl_ulong(chunk), log2_exact(C), log2_exact(fc), cl_uint(row_mode ? 1 : 0),
           cl_uint(spec.mode), p0, p1);
    if (nsplit > 1 && !counters) {
      Kernel& f = get_kernel(d, "reduce", opts + " -DFINISH", "reduce_finish");
      launch(d, f, Range((nout + fp - 1) / fp * kLocal), Range(kLocal), by, by2, bws, g, cl_ulong(nout),
             cl_ulong(nsplit), log2_exact(fc), cl_uint(spec.mode), p0, p1);
    }
  });
}

// ---- out= plumbing -------------------------------------------------------------------------

at::native::DimMask mask_of(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  at::DimVector dims = at::native::make_dim_vector(dim, self.dim());
  at::maybe_wrap_dims(dims, self.dim());
  return at::native::make_dim_mask(dims, self.dim());
}
at::native::DimMask mask_of_dim(const at::Tensor& self, int64_t dim) {
  at::native::DimMask m;
  if (self.dim() > 0) m.set(at::maybe_wrap_dim(dim, self.dim()));
  return m;
}
at::native::DimMask mask_all() { return at::native::DimMask().flip(); }

uint64_t reduced_numel(const at::Tensor& self, at::native::DimMask mask) {
  uint64_t n = 1;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (mask[i]) n *= static_cast<uint64_t>(self.size(i));
  return n;
}

// ---- sum / mean / nansum / prod ------------------------------------------------------------

// sum/mean of a complex self into out (sized by the meta function): for a complex out the same
// real reduction of view_as_real(self), whose trailing (re, im) axis stays, into view_as_real(out).
void complex_sum_or_mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out,
                         bool mean) {
  std::vector<int64_t> dims;
  if (dim.has_value() && !dim->empty()) {
    for (int64_t d : *dim) dims.push_back(at::maybe_wrap_dim(d, self.dim()));
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  if (!out.is_complex()) {  // a real dtype= : the CPU reduces the values cast to it (real parts)
    const at::Tensor r = self.to(out.scalar_type());
    if (mean) at::mean_out(out, r, dims, keepdim);
    else at::sum_out(out, r, dims, keepdim);
    return;
  }
  const at::Tensor x = at::view_as_real(self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type()));
  at::Tensor o = at::view_as_real(out);
  if (mean) at::mean_out(o, x, dims, keepdim);
  else at::sum_out(o, x, dims, keepdim);
}

// sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& sum_IntList_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                                std::optional<at::ScalarType> dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_sum_dim_IntList, 1> m(out);
  m.meta(self, dim, keepdim, dtype);
  if (self.is_complex()) {
    complex_sum_or_mean(self, dim, keepdim, out, /*mean=*/false);
    return out;
  }
  Spec s{kSum};
  s.val = out.scalar_type();
  run_reduce(s, self, mask_of(self, dim), keepdim, out, {});
  return out;
}

// mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& mean_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_mean_dim, 1> m(out);
  m.meta(self, dim, keepdim, dtype);
  // The CPU divides a sum in out's dtype in place, which refuses integral and bool outputs.
  TORCH_CHECK(at::isFloatingType(out.scalar_type()) || at::isComplexType(out.scalar_type()), "result type ",
              c10::typeMetaToScalarType(at::get_default_dtype()), " can't be cast to the desired output type ",
              out.scalar_type());
  if (self.is_complex()) {
    complex_sum_or_mean(self, dim, keepdim, out, /*mean=*/true);
    return out;
  }
  auto mask = mask_of(self, dim);
  Spec s{kSum};
  s.val = out.scalar_type();
  s.mode = kFinDiv;
  s.p1 = static_cast<double>(reduced_numel(self, mask));
  run_reduce(s, self, mask, keepdim, out, {});
  return out;
}

at::ScalarType promoted_sum_dtype(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return at::native::get_dtype_from_self(self, dtype, /*promote_integers=*/true);
}

// nansum.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& nansum_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType dt = at::native::get_dtype_from_result(out, dtype);
  TORCH_CHECK(!at::isComplexType(dt), "nansum does not support complex inputs");
  TORCH_CHECK(out.scalar_type() == dt, "Expected out tensor to have dtype ", dt, ", but got ", out.scalar_type(),
              " instead");
  // A floating input summed into an integer result: the CPU has no NaN-skipping kernel for it.
  TORCH_CHECK_NOT_IMPLEMENTED(!at::isFloatingType(self.scalar_type()) || at::isFloatingType(dt),
                              "\"nansum\" not implemented for '", dt, "'");
  auto mask = mask_of(self, dim);
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  Spec s{kSum};
  s.val = dt;
  s.mode = at::isFloatingType(dt) ? kMapNanToZero : kMapNone;
  run_reduce(s, self, mask, keepdim, out, {});
  return out;
}

// nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
at::Tensor nansum_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({0}, self.options().dtype(promoted_sum_dtype(self, dtype)));
  return nansum_out_ocl(self, dim, keepdim, dtype, out);
}

// prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& prod_int_out_ocl(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                             at::Tensor& out) {
  OutMeta<at::meta::structured_prod_dim_int, 1> m(out);
  m.meta(self, dim, keepdim, dtype);
  Spec s{kProd};
  s.val = out.scalar_type();
  run_reduce(s, self, mask_of_dim(self, dim), keepdim, out, {});
  return out;
}

// prod(Tensor self, *, ScalarType? dtype=None) -> Tensor
at::Tensor prod_ocl(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  at::Tensor out = at::empty({}, self.options().dtype(promoted_sum_dtype(self, dtype)));
  Spec s{kProd};
  s.val = out.scalar_type();
  run_reduce(s, self, mask_all(), false, out, {});
  return out;
}

// ---- amax / amin / max / min / argmax / argmin ---------------------------------------------

// amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& amax_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_amax, 1> m(out);
  m.meta(self, dim, keepdim);
  Spec s{kMinMax};
  s.val = self.scalar_type();
  run_reduce(s, self, mask_of(self, dim), keepdim, out, {});
  return out;
}

// amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& amin_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_amin, 1> m(out);
  m.meta(self, dim, keepdim);
  Spec s{kMinMax};
  s.val = self.scalar_type();
  s.mode = kModeMin;
  run_reduce(s, self, mask_of(self, dim), keepdim, out, {});
  return out;
}

void full_minmax(const char* name, bool is_min, const at::Tensor& self, const at::Tensor& out) {
  TORCH_CHECK(self.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0. ",
              "Specify the reduction dim with the 'dim' argument.");
  Spec s{kMinMax};
  s.val = self.scalar_type();
  s.mode = is_min ? kModeMin : 0;
  run_reduce(s, self, mask_all(), false, out, {});
}

// max(Tensor self) -> Tensor
at::Tensor max_ocl(const at::Tensor& self) {
  at::Tensor out = at::empty({}, self.options());
  full_minmax("max", false, self, out);
  return out;
}
// min(Tensor self) -> Tensor
at::Tensor min_ocl(const at::Tensor& self) {
  at::Tensor out = at::empty({}, self.options());
  full_minmax("min", true, self, out);
  return out;
}
// max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& max_unary_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.device() == out.device(), "max: expected out on ", self.device(), ", got ", out.device());
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "max: result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, {});
  full_minmax("max", false, self, out);
  return out;
}
// min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& min_unary_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.device() == out.device(), "min: expected out on ", self.device(), ", got ", out.device());
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "min: result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, {});
  full_minmax("min", true, self, out);
  return out;
}

// max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> max_dim_max_ocl(const at::Tensor& self, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  OutMeta<at::meta::structured_max_dim, 2> m(values, indices);
  auto pre = m.meta(self, dim, keepdim);
  Spec s{kArg};
  s.val = self.scalar_type();
  s.mode = kModeValues;
  run_reduce(s, self, mask_of_dim(self, pre.dim), keepdim, values, indices);
  return {values, indices};
}

// min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> min_dim_min_ocl(const at::Tensor& self, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  OutMeta<at::meta::structured_min_dim, 2> m(values, indices);
  auto pre = m.meta(self, dim, keepdim);
  Spec s{kArg};
  s.val = self.scalar_type();
  s.mode = kModeValues | kModeMin;
  run_reduce(s, self, mask_of_dim(self, pre.dim), keepdim, values, indices);
  return {values, indices};
}

// aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)
std::tuple<at::Tensor&, at::Tensor&> aminmax_out_ocl(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                     at::Tensor& min, at::Tensor& max) {
  OutMeta<at::meta::structured_aminmax, 2> m(min, max);
  m.meta(self, dim, keepdim);
  at::assert_no_partial_overlap(min, self);  // as the CPU's reduction does
  at::assert_no_partial_overlap(max, self);
  Spec s{kAMinMax};
  s.val = self.scalar_type();
  run_reduce(s, self, dim ? mask_of_dim(self, *dim) : mask_all(), keepdim, min, max);
  return {min, max};
}

void arg_reduce(bool is_min, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, const at::Tensor& out) {
  Spec s{kArg};
  s.val = self.scalar_type();
  s.mode = is_min ? kModeMin : 0;  // indices only
  run_reduce(s, self, dim ? mask_of_dim(self, *dim) : mask_all(), keepdim, {}, out);
}

// argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& argmax_out_ocl(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_argmax, 1> m(out);
  m.meta(self, dim, keepdim);
  arg_reduce(false, self, dim, keepdim, out);
  return out;
}

// argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& argmin_out_ocl(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_argmin, 1> m(out);
  m.meta(self, dim, keepdim);
  arg_reduce(true, self, dim, keepdim, out);
  return out;
}

// ---- all / any -----------------------------------------------------------------------------

// all = min over (x != 0), any = max over (x != 0).
void bool_reduce(bool is_all, const at::Tensor& self, at::native::DimMask mask, bool keepdim, const at::Tensor& out) {
  Spec s{kMinMax};
  s.val = self.scalar_type();
  s.mode = kMapNonZero | (is_all ? kModeMin : 0);
  run_reduce(s, self, mask, keepdim, out, {});
}

// all.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& all_out_ocl(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_all_dim, 1> m(out);
  m.meta(self, dim, keepdim);
  bool_reduce(true, self, mask_of_dim(self, dim), keepdim, out);
  return out;
}
// all.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& all_dims_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_all_dims, 1> m(out);
  m.meta(self, dim, keepdim);
  bool_reduce(true, self, mask_of(self, dim), keepdim, out);
  return out;
}
// all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& all_all_out_ocl(const at::Tensor& self, at::Tensor& out) {
  OutMeta<at::meta::structured_all, 1> m(out);
  m.meta(self);
  bool_reduce(true, self, mask_all(), false, out);
  return out;
}
// any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& any_out_ocl(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_any_dim, 1> m(out);
  m.meta(self, dim, keepdim);
  bool_reduce(false, self, mask_of_dim(self, dim), keepdim, out);
  return out;
}
// any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& any_dims_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_any_dims, 1> m(out);
  m.meta(self, dim, keepdim);
  bool_reduce(false, self, mask_of(self, dim), keepdim, out);
  return out;
}
// any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& any_all_out_ocl(const at::Tensor& self, at::Tensor& out) {
  OutMeta<at::meta::structured_any, 1> m(out);
  m.meta(self);
  bool_reduce(false, self, mask_all(), false, out);
  return out;
}

// count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor
at::Tensor count_nonzero_dim_IntList_ocl(const at::Tensor& self, c10::IntArrayRef dims) {
  auto mask = at::native::make_dim_mask(dims, self.dim());
  at::Tensor out = at::empty(at::native::shape_from_dim_mask(self, mask, false), self.options().dtype(at::kLong));
  Spec s{kSum};
  s.val = at::kBool;  // counts (x != 0) in int64
  run_reduce(s, self, mask, false, out, {});
  return out;
}

// ---- norms ---------------------------------------------------------------------------------

void vector_norm(const at::Tensor& self, double ord, at::native::DimMask mask, bool keepdim, const at::Tensor& out) {
  Spec s{kSum};
  s.val = out.scalar_type();
  if (ord == 0) s.mode = kMapNonZero;
  else if (ord == 1) s.mode = kMapAbs;
  else if (ord == 2) s.mode = kMapSquare | kFinSqrt;
  else if (std::isinf(ord)) {
    s.op = kMinMax;
    s.mode = kMapAbs | (ord < 0 ? kModeMin : 0);
  } else {
    s.mode = kMapPow | kFinPow;
    s.p0 = ord;
    s.p1 = 1.0 / ord;
  }
  run_reduce(s, self, mask, keepdim, out, {});
}

// linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& linalg_vector_norm_out_ocl(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                                       bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_linalg_vector_norm, 1> m(out);
  m.meta(self, ord, dim, keepdim, dtype);
  if (self.is_complex()) {
    // Every vector norm depends on the magnitudes only: the real norm of |x| (dtype, complex
    // for a complex input (the meta checked), sets the precision of |x|).
    const at::Tensor x = dtype.has_value() && *dtype != self.scalar_type() ? self.to(*dtype) : self;
    vector_norm(at::abs(x), ord.toDouble(), mask_of(self, dim), keepdim, out);
    return out;
  }
  vector_norm(self, ord.toDouble(), mask_of(self, dim), keepdim, out);
  return out;
}

// norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& norm_out_ocl(const at::Tensor& self, const std::optional<at::Scalar>& p, c10::IntArrayRef dim,
                         bool keepdim, at::Tensor& out) {
  OutMeta<at::meta::structured_norm_ScalarOpt_dim, 1> m(out);
  m.meta(self, p.has_value() ? at::OptionalScalarRef(&p.value()) : at::OptionalScalarRef(), dim, keepdim);
  vector_norm(self, p.has_value() ? p->toDouble() : 2.0, mask_of(self, dim), keepdim, out);
  return out;
}

// norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)
at::Tensor& norm_dtype_out_ocl(const at::Tensor& self, const std::optional<at::Scalar>& p, c10::IntArrayRef dim,
                               bool keepdim, at::ScalarType dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_norm_ScalarOpt_dim_dtype, 1> m(out);
  m.meta(self, p.has_value() ? at::OptionalScalarRef(&p.value()) : at::OptionalScalarRef(), dim, keepdim, dtype);
  vector_norm(self, p.has_value() ? p->toDouble() : 2.0, mask_of(self, dim), keepdim, out);
  return out;
}

// ---- var / std -----------------------------------------------------------------------------

void check_var_input(const at::Tensor& self, const char* name) {
  TORCH_CHECK(self.layout() == at::Layout::Strided, name, " only supports strided layout, got: ", self.layout());
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), name, " only supports floating point dtypes on ocl, got ",
              self.scalar_type());
}

void var_std(bool is_std, const at::Tensor& self, at::OptionalIntArrayRef dim,
             const std::optional<at::Scalar>& correction, bool keepdim, const at::Tensor& out,
             const at::Tensor& mean_out) {
  auto mask = mask_of(self, dim);
  Spec s{kWelford};
  s.val = self.scalar_type();
  s.p0 = correction.has_value() ? correction->toDouble() : 1.0;
  s.mode = (is_std ? kModeStd : 0) | (mean_out.defined() ? kModeMean : 0);
  run_reduce(s, self, mask, keepdim, out, mean_out);
}

at::DimVector var_shape(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return at::native::shape_from_dim_mask(self, mask_of(self, dim), keepdim);
}

// var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
at::Tensor var_correction_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                              const std::optional<at::Scalar>& correction, bool keepdim) {
  check_var_input(self, "std and var");
  at::Tensor out = at::empty(var_shape(self, dim, keepdim), self.options());
  var_std(false, self, dim, correction, keepdim, out, {});
  return out;
}
// std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
at::Tensor std_correction_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                              const std::optional<at::Scalar>& correction, bool keepdim) {
  check_var_input(self, "std and var");
  at::Tensor out = at::empty(var_shape(self, dim, keepdim), self.options());
  var_std(true, self, dim, correction, keepdim, out, {});
  return out;
}
at::Tensor& var_std_out(bool is_std, const at::Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  check_var_input(self, "std and var");
  // Any floating out the result casts to, as on the CPU (computed in self's dtype, then cast).
  TORCH_CHECK(at::canCast(self.scalar_type(), out.scalar_type()), "result type ", self.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, var_shape(self, dim, keepdim));
  if (out.scalar_type() == self.scalar_type()) {
    var_std(is_std, self, dim, correction, keepdim, out, {});
  } else {
    at::Tensor tmp = at::empty(out.sizes(), self.options());
    var_std(is_std, self, dim, correction, keepdim, tmp, {});
    out.copy_(tmp);
  }
  return out;
}
// var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& var_correction_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                   const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return var_std_out(false, self, dim, correction, keepdim, out);
}
// std.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& std_correction_out_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                   const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return var_std_out(true, self, dim, correction, keepdim, out);
}
std::tuple<at::Tensor, at::Tensor> var_std_mean(bool is_std, const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                const std::optional<at::Scalar>& correction, bool keepdim) {
  check_var_input(self, "std_mean and var_mean");
  auto shape = var_shape(self, dim, keepdim);
  at::Tensor out = at::empty(shape, self.options()), mean = at::empty(shape, self.options());
  var_std(is_std, self, dim, correction, keepdim, out, mean);
  return {out, mean};
}
// var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> var_mean_correction_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                           const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_std_mean(false, self, dim, correction, keepdim);
}
// std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> std_mean_correction_ocl(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                           const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_std_mean(true, self, dim, correction, keepdim);
}

// ---- logsumexp -----------------------------------------------------------------------------

// logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& logsumexp_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(out.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ", out.scalar_type());
  auto mask = mask_of(self, dim);
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  Spec s{kLogSumExp};
  s.val = out.scalar_type();
  run_reduce(s, self, mask, keepdim, out, {});
  return out;
}

// logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
at::Tensor logsumexp_ocl(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim) {
  const at::ScalarType dt = at::isIntegralType(self.scalar_type(), /*includeBool=*/true)
                                ? c10::typeMetaToScalarType(at::get_default_dtype())
                                : self.scalar_type();
  at::Tensor out = at::empty({0}, self.options().dtype(dt));
  return logsumexp_out_ocl(self, dim, keepdim, out);
}

// ---- renorm --------------------------------------------------------------------------------
// renorm.out(Tensor self, Scalar p, int dim, Scalar maxnorm, *, Tensor(a!) out) -> Tensor(a!)
// Each slice along dim whose p-norm exceeds maxnorm is scaled by maxnorm / (norm + 1e-7): the
// norms by linalg_vector_norm (in float for 16-bit dtypes, as CUDA and the CPU do), the scale
// factors by one pointwise kernel in the norms' dtype, then out = self * factor (mul.out).
// renorm and renorm_ come from ATen's structured wrappers around this.
at::Tensor& renorm_out_ocl(const at::Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm,
                           at::Tensor& out) {
  OutMeta<at::meta::structured_renorm> meta(out);
  meta.meta(self, p, dim, maxnorm);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> reduce_dims;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != dim) reduce_dims.push_back(i);
  const at::ScalarType dtype = self.scalar_type();
  const at::ScalarType acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
  at::Tensor norm = acc != dtype ? at::linalg_vector_norm(self, p.toDouble(), reduce_dims, true, acc)
                                 : at::linalg_vector_norm(self, p.toDouble(), reduce_dims, true);
  if (norm.numel() > 0) {
    at::TensorIteratorConfig cfg;
    cfg.set_check_mem_overlap(false).add_output(norm).add_const_input(norm);
    auto iter = cfg.build();
    static const PointwiseSpec factor{"renorm_factor", "a > s0 ? s0 / (a + CTC(1e-7)) : CTC(1)"};
    pointwise(iter, factor, {maxnorm});
  }
  return at::mul_out(out, self, norm);
}

// trace(Tensor self) -> Tensor
// The sum of the main diagonal (a strided view): dtype as sum's (int64 for integers).
at::Tensor trace_ocl(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"trace\" not implemented for 'Bool'");
  return at::sum(self.diagonal());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // sum and mean take complex tensors (complex_sum_or_mean).
  m.impl("sum.IntList_out", sum_IntList_out_ocl);
  m.impl("mean.out", mean_out_ocl);
  OCL_IMPL(m, "nansum", nansum_ocl);
  OCL_IMPL(m, "nansum.out", nansum_out_ocl);
  OCL_IMPL(m, "prod", prod_ocl);
  OCL_IMPL(m, "trace", trace_ocl);
  OCL_IMPL(m, "prod.int_out", prod_int_out_ocl);
  OCL_IMPL(m, "amax.out", amax_out_ocl);
  OCL_IMPL(m, "amin.out", amin_out_ocl);
  OCL_IMPL(m, "max", max_ocl);
  OCL_IMPL(m, "min", min_ocl);
  OCL_IMPL(m, "max.unary_out", max_unary_out_ocl);
  OCL_IMPL(m, "min.unary_out", min_unary_out_ocl);
  OCL_IMPL(m, "max.dim_max", max_dim_max_ocl);
  OCL_IMPL(m, "min.dim_min", min_dim_min_ocl);
  OCL_IMPL(m, "aminmax.out", aminmax_out_ocl);
  OCL_IMPL(m, "argmax.out", argmax_out_ocl);
  OCL_IMPL(m, "argmin.out", argmin_out_ocl);
  OCL_IMPL(m, "all.out", all_out_ocl);
  OCL_IMPL(m, "all.dims_out", all_dims_out_ocl);
  OCL_IMPL(m, "all.all_out", all_all_out_ocl);
  OCL_IMPL(m, "any.out", any_out_ocl);
  OCL_IMPL(m, "any.dims_out", any_dims_out_ocl);
  OCL_IMPL(m, "any.all_out", any_all_out_ocl);
  OCL_IMPL(m, "count_nonzero.dim_IntList", count_nonzero_dim_IntList_ocl);
  m.impl("linalg_vector_norm.out", linalg_vector_norm_out_ocl);  // complex too (the norm of |x|)
  OCL_IMPL(m, "norm.out", norm_out_ocl);
  OCL_IMPL(m, "norm.dtype_out", norm_dtype_out_ocl);
  OCL_IMPL(m, "var.correction", var_correction_ocl);
  OCL_IMPL(m, "std.correction", std_correction_ocl);
  OCL_IMPL(m, "var.correction_out", var_correction_out_ocl);
  OCL_IMPL(m, "std.correction_out", std_correction_out_ocl);
  OCL_IMPL(m, "var_mean.correction", var_mean_correction_ocl);
  OCL_IMPL(m, "std_mean.correction", std_mean_correction_ocl);
  OCL_IMPL(m, "logsumexp", logsumexp_ocl);
  OCL_IMPL(m, "logsumexp.out", logsumexp_out_ocl);
  OCL_IMPL(m, "renorm.out", renorm_out_ocl);
}

}  // namespace torch_ocl
