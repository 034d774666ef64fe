// Inclusive scans along one dim, any strides (kernels/scan.cl): cumsum, cumprod, cummax/cummin
// (values + int64 indices, through ATen's _cummax_helper/_cummin_helper: the composite cummax
// resizes the outputs and handles 0-dim inputs) and logcumsumexp (through _logcumsumexp).
// Output shape and dtype checks come from ATen's structured meta functions where the op is
// structured; the input is converted to the output dtype on load (as the CPU casts it first) and
// accumulated in float/double/int64.
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/view_as_real.h>
#include <torch/library.h>

#include "../aten/TorchCompat.h"
#include <algorithm>

namespace torch_ocl {
namespace {

// Must match SCAN_* of scan.cl.
enum ScanOp : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kLogSumExp = 4 };
const char* op_name(ScanOp op) {
  static const char* names[] = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"};
  return names[op];
}

constexpr int kMaxDims = 8;     // MAX_DIMS of scan.cl
constexpr size_t kLocal = 256;  // LOCAL_SIZE of scan.cl
constexpr size_t kItems = 4;    // ITEMS of scan.cl
constexpr size_t kTile = kLocal * kItems;
// Column kernel (one item per row) when the scan dim is not contiguous or rows are at most
// kMaxSerialRow long (a work-group per row would idle), and there are at least this many rows.
constexpr int64_t kMinRowsForColumns = 256;
constexpr uint64_t kMaxSerialRow = 32;
// The column kernel cuts the scan dim into up to kMaxColumnBlocks blocks of at least
// kMinColumnChunk elements while there are fewer than kItemsPerCU rows per compute unit.
constexpr uint64_t kItemsPerCU = 2048;
constexpr uint64_t kMinColumnChunk = 32;
constexpr uint64_t kMaxColumnBlocks = 32;
// Rows are cut into blocks (reduce-then-scan, two launches) while there are fewer than this many
// work-groups per compute unit and each block still gets at least two tiles.
constexpr uint64_t kGroupsPerCU = 4;
constexpr uint64_t kMaxBlocks = kLocal;  // blocks per row
constexpr size_t kStateBytes = 16;       // >= sizeof(State) of scan.cl for every op

struct ScanGeom {
  cl_uint kdims = 0, pad = 0;
  cl_ulong ksize[kMaxDims];
  cl_long kin[kMaxDims];
  cl_long kout[kMaxDims];
  cl_long kidx[kMaxDims];
  cl_ulong len = 1;
  cl_long sin = 0, sout = 0, sidx = 0;
};

std::string storage_name(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kBFloat16: return "ushort";
    case at::kBool: return "uchar";
    default: return cl_type_name(t);
  }
}
int kind_of(at::ScalarType t) {
  return t == at::kHalf ? 1 : t == at::kBFloat16 ? 2 : t == at::kBool ? 3 : 0;
}

// Whether writing `out` could change `self` other than element-for-element in place.
bool needs_temp(const at::Tensor& out, const at::Tensor& self) {
  if (!out.defined() || out.numel() == 0 || self.numel() == 0 || !out.storage().is_alias_of(self.storage()))
    return false;
  const bool same_elements = out.data_ptr() == self.data_ptr() && out.strides() == self.strides() &&
                             out.itemsize() == self.itemsize();
  return !same_elements && at::get_overlap_status(out, self) != at::MemOverlapStatus::No;
}

// Scans `self` along `dim` (already wrapped) into `out` (and `indices` for cummax/cummin), both
// of self's shape with any strides.
void run_scan(ScanOp op, const at::Tensor& self, int64_t dim, const at::Tensor& out, const at::Tensor& indices) {
  if (out.numel() == 0) return;
  const bool with_index = op == kMax || op == kMin;
  if (needs_temp(out, self) || (with_index && needs_temp(indices, self))) {
    at::Tensor tmp = at::empty(out.sizes(), out.options());
    at::Tensor tmp_i = with_index ? at::empty(indices.sizes(), indices.options()) : at::Tensor();
    run_scan(op, self, dim, tmp, tmp_i);
    out.copy_(tmp);
    if (with_index) indices.copy_(tmp_i);
    return;
  }
  Device& d = ocl_device(self);
  const at::ScalarType in = self.scalar_type(), val = out.scalar_type();
  check_dtype_supported(d, in, op_name(op));
  check_dtype_supported(d, val, op_name(op));
  ScanGeom g;
  struct Dim { int64_t size, in, out, idx; };
  std::vector<Dim> rows;
  for (int64_t i = self.dim() - 1; i >= 0; --i) {
    const int64_t si = with_index ? indices.stride(i) : 0;
    if (i == dim) {
      g.len = self.size(i);
      g.sin = self.stride(i);
      g.sout = out.stride(i);
      g.sidx = si;
    } else if (self.size(i) != 1) {
      rows.push_back({self.size(i), self.stride(i), out.stride(i), si});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Dim& a, const Dim& b) { return a.in < b.in; });
  std::vector<Dim> merged;
  for (const auto& r : rows) {
    if (!merged.empty()) {
      Dim& p = merged.back();
      if (r.in == p.in * p.size && r.out == p.out * p.size && r.idx == p.idx * p.size) {
        p.size *= r.size;
        continue;
      }
    }
    merged.push_back(r);
  }
  if (merged.empty()) merged.push_back({1, 0, 0, 0});
  if (merged.size() > size_t(kMaxDims)) {
    // Rare (> 8 non-mergeable dims): scan a contiguous copy with the scan dim last.
    at::Tensor src = self.movedim(dim, -1).contiguous();
    at::Tensor tmp = at::empty(src.sizes(), out.options());
    at::Tensor tmp_i = with_index ? at::empty(src.sizes(), indices.options()) : at::Tensor();
    run_scan(op, src, src.dim() - 1, tmp, tmp_i);
    out.copy_(tmp.movedim(-1, dim));
    if (with_index) indices.copy_(tmp_i.movedim(-1, dim));
    return;
  }
  g.kdims = static_cast<cl_uint>(merged.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    g.ksize[i] = merged[i].size;
    g.kin[i] = merged[i].in;
    g.kout[i] = merged[i].out;
    g.kidx[i] = merged[i].idx;
  }
  const uint64_t nrows = static_cast<uint64_t>(out.numel()) / std::max<uint64_t>(1, g.len);

  const at::ScalarType acc = val == at::kDouble ? at::kDouble : at::isFloatingType(val) ? at::kFloat : at::kLong;
  std::string opts = "-DSCAN_OP=" + std::to_string(op) + " -DIN_T=" + storage_name(in) +
                     " -DIN_KIND=" + std::to_string(kind_of(in)) + " -DACC=" + cl_type_name(acc) +
                     " -DACC_FLOAT=" + (acc == at::kLong ? "0" : "1") + " -DOUT_T=" + storage_name(val) +
                     " -DOUT_KIND=" + std::to_string(kind_of(val));
  if (val != in) {
    if (val == at::kHalf) opts += " -DVAL_HALF";
    else if (val == at::kBFloat16) opts += " -DVAL_BF16";
    else if (at::isIntegralType(val, true) && val != at::kLong) opts += " -DVAL_CAST=" + cl_type_name(val);
  }
  Buf bx = buf(self), by = buf(out), bi = with_index ? buf(indices) : Buf{nullptr, 0};
  const uint64_t cus = std::max<uint64_t>(1, d.info.compute_units);
  at::Tensor ws;
  Buf bws{nullptr, 0};
  if (nrows >= uint64_t(kMinRowsForColumns) && (g.sin != 1 || g.len <= kMaxSerialRow)) {
    // One item per (row, block); blocks only while the rows alone leave the device idle.
    uint64_t nblocks = 1;
    const uint64_t target = cus * kItemsPerCU;
    if (nrows < target && g.len >= 2 * kMinColumnChunk)
      nblocks = std::min<uint64_t>({(target + nrows - 1) / nrows, g.len / kMinColumnChunk, kMaxColumnBlocks});
    const uint64_t chunk = (g.len + nblocks - 1) / nblocks;
    nblocks = (g.len + chunk - 1) / chunk;
    if (nblocks > 1) {
      ws = at::empty({static_cast<int64_t>(nrows * nblocks * kStateBytes)}, self.options().dtype(at::kByte));
      bws = buf(ws);
      Kernel& p = get_kernel(d, "scan", opts, "scan_cols_partials");
      launch(d, p, Range(static_cast<size_t>(nrows), static_cast<size_t>(nblocks - 1)), Range(kLocal, 1), bx, bws,
             g, cl_ulong(nrows), cl_ulong(chunk));
    }
    Kernel& k = get_kernel(d, "scan", opts, "scan_cols");
    launch(d, k, Range(static_cast<size_t>(nrows), static_cast<size_t>(nblocks)), Range(kLocal, 1), bx, by, bi, bws,
           g, cl_ulong(nrows), cl_ulong(chunk));
    return;
  }
  // Few long rows: cut each into blocks so that the device fills up.
  uint64_t nblocks = 1;
  const uint64_t target = cus * kGroupsPerCU;
  if (nrows < target && g.len >= 2 * 2 * kTile)
    nblocks = std::min<uint64_t>({(target + nrows - 1) / nrows, g.len / (2 * kTile), kMaxBlocks});
  uint64_t chunk = (g.len + nblocks - 1) / nblocks;
  chunk = (chunk + kTile - 1) / kTile * kTile;
  nblocks = (g.len + chunk - 1) / chunk;
  if (nblocks > 1) {
    ws = at::empty({static_cast<int64_t>(nrows * nblocks * kStateBytes)}, self.options().dtype(at::kByte));
    bws = buf(ws);
    Kernel& p = get_kernel(d, "scan", opts, "scan_partials");
    launch(d, p, Range(static_cast<size_t>(nrows * (nblocks - 1)) * kLocal), Range(kLocal), bx, bws, g,
           cl_ulong(nblocks), cl_ulong(chunk));
  }
  Kernel& k = get_kernel(d, "scan", opts, "scan_rows");
  launch(d, k, Range(static_cast<size_t>(nrows * nblocks) * kLocal), Range(kLocal), bx, by, bi, bws, g,
         cl_ulong(nblocks), cl_ulong(chunk));
}

// The CPU's cumsum/cumprod/logcumsumexp reject an out= that overlaps itself or partially overlaps
// the input (exact aliasing, i.e. in place, is fine). cummax/cummin accept both on the CPU; they
// go through a temporary here when needed.
void check_out_overlap(const at::Tensor& out, const at::Tensor& self) {
  at::assert_no_internal_overlap(out);
  at::assert_no_partial_overlap(out, self);
}

// A bool result (bool cumsum_, or out= of dtype bool) has no kernel on the CPU either; a bool
// input alone promotes to int64 and is fine.
void check_not_bool(const char* op, const at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(out.scalar_type() != at::kBool, "\"", op, "\" not implemented for 'Bool'");
}

// cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cumsum_out_ocl(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_cumsum> m(out);
  m.meta(self, dim, dtype);
  check_not_bool("cumsum", out);
  check_out_overlap(out, self);
  const int64_t d = self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim());
  if (self.is_complex() || out.is_complex()) {
    // The real and imaginary parts are independent running sums: a real scan of view_as_real
    // (its extra last dim holds the two parts). A real out= takes the real parts, as on the CPU.
    const at::Tensor x = self.scalar_type() == out.scalar_type() ? self : self.to(out.scalar_type());
    if (!out.is_complex()) run_scan(kSum, x, d, out, {});
    else if (self.dim() == 0) out.copy_(x);
    else {
      at::Tensor o = at::view_as_real(out);
      run_scan(kSum, at::view_as_real(x), d, o, {});
    }
    return out;
  }
  run_scan(kSum, self, d, out, {});
  return out;
}

// cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cumprod_out_ocl(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                            at::Tensor& out) {
  OutMeta<at::meta::structured_cumprod> m(out);
  m.meta(self, dim, dtype);
  check_not_bool("cumprod", out);
  check_out_overlap(out, self);
  run_scan(kProd, self, self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim()), out, {});
  return out;
}

// _cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()
// (values and indices already have self's shape; self has at least one dim and one element.)
void cummax_helper_ocl(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  run_scan(kMax, self, at::maybe_wrap_dim(dim, self.dim()), values, indices);
}

// _cummin_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()
void cummin_helper_ocl(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  run_scan(kMin, self, at::maybe_wrap_dim(dim, self.dim()), values, indices);
}

// _logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _logcumsumexp_out_ocl(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"logcumsumexp_out_ocl\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "logcumsumexp: expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(out, self.sizes());
  check_out_overlap(out, self);
  run_scan(kLogSumExp, self, d, out, {});
  return out;
}

// _logcumsumexp(Tensor self, int dim) -> Tensor
at::Tensor _logcumsumexp_ocl(const at::Tensor& self, int64_t dim) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  return _logcumsumexp_out_ocl(self, dim, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum.out", cumsum_out_ocl);  // complex too
  OCL_IMPL(m, "cumprod.out", cumprod_out_ocl);
  OCL_IMPL(m, "_cummax_helper", cummax_helper_ocl);
  OCL_IMPL(m, "_cummin_helper", cummin_helper_ocl);
  OCL_IMPL(m, "_logcumsumexp", _logcumsumexp_ocl);
  OCL_IMPL(m, "_logcumsumexp.out", _logcumsumexp_out_ocl);
}

}  // namespace torch_ocl
