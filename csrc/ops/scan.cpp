// cumsum / cumprod along one dim, any strides (kernels/scan.cl). Output shape and dtype checks
// come from ATen's structured meta functions; the input is converted to the output dtype on
// load (as the CPU casts it first) and accumulated in float/double/int64.
#include "../runtime/Launch.h"
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "../aten/TorchCompat.h"
#include <algorithm>

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 8;     // MAX_DIMS of scan.cl
constexpr size_t kLocal = 256;  // LOCAL_SIZE of scan.cl
// Column kernel (one item per row) when the scan dim is not contiguous and there are at least
// this many rows to spread over the device.
constexpr int64_t kMinRowsForColumns = 256;

struct ScanGeom {
  cl_uint kdims = 0, pad = 0;
  cl_ulong ksize[kMaxDims];
  cl_long kin[kMaxDims];
  cl_long kout[kMaxDims];
  cl_ulong len = 1;
  cl_long sin = 0, sout = 0;
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
  if (out.numel() == 0 || self.numel() == 0 || !out.storage().is_alias_of(self.storage())) return false;
  const bool same_elements = out.data_ptr() == self.data_ptr() && out.strides() == self.strides() &&
                             out.itemsize() == self.itemsize();
  return !same_elements && at::get_overlap_status(out, self) != at::MemOverlapStatus::No;
}

void run_scan(bool prod, const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  if (out.numel() == 0) return;
  if (needs_temp(out, self)) {
    at::Tensor tmp = at::empty(out.sizes(), out.options());
    run_scan(prod, self, dim, tmp);
    out.copy_(tmp);
    return;
  }
  Device& d = ocl_device(self);
  const at::ScalarType in = self.scalar_type(), val = out.scalar_type();
  check_dtype_supported(d, in, prod ? "cumprod" : "cumsum");
  check_dtype_supported(d, val, prod ? "cumprod" : "cumsum");
  ScanGeom g;
  struct Dim { int64_t size, in, out; };
  std::vector<Dim> rows;
  for (int64_t i = self.dim() - 1; i >= 0; --i) {
    if (i == dim) {
      g.len = self.size(i);
      g.sin = self.stride(i);
      g.sout = out.stride(i);
    } else if (self.size(i) != 1) {
      rows.push_back({self.size(i), self.stride(i), out.stride(i)});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Dim& a, const Dim& b) { return a.in < b.in; });
  std::vector<Dim> merged;
  for (const auto& r : rows) {
    if (!merged.empty() && r.in == merged.back().in * merged.back().size &&
        r.out == merged.back().out * merged.back().size) {
      merged.back().size *= r.size;
      continue;
    }
    merged.push_back(r);
  }
  if (merged.empty()) merged.push_back({1, 0, 0});
  if (merged.size() > size_t(kMaxDims)) {
    // Rare (> 8 non-mergeable dims): scan a contiguous copy with the scan dim last.
    at::Tensor src = self.movedim(dim, -1).contiguous();
    at::Tensor tmp = at::empty(src.sizes(), out.options());
    run_scan(prod, src, src.dim() - 1, tmp);
    out.copy_(tmp.movedim(-1, dim));
    return;
  }
  g.kdims = static_cast<cl_uint>(merged.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    g.ksize[i] = merged[i].size;
    g.kin[i] = merged[i].in;
    g.kout[i] = merged[i].out;
  }
  const int64_t nrows = out.numel() / std::max<int64_t>(1, static_cast<int64_t>(g.len));

  const at::ScalarType acc = val == at::kDouble ? at::kDouble : at::isFloatingType(val) ? at::kFloat : at::kLong;
  std::string opts = "-DIN_T=" + storage_name(in) + " -DIN_KIND=" + std::to_string(kind_of(in)) +
                     " -DACC=" + cl_type_name(acc) + " -DOUT_T=" + storage_name(val) +
                     " -DOUT_KIND=" + std::to_string(kind_of(val)) + (prod ? " -DSCAN_PROD" : "");
  if (val != in) {
    if (val == at::kHalf) opts += " -DVAL_HALF";
    else if (val == at::kBFloat16) opts += " -DVAL_BF16";
    else if (at::isIntegralType(val, true) && val != at::kLong) opts += " -DVAL_CAST=" + cl_type_name(val);
  }
  Buf bx = buf(self), by = buf(out);
  const bool columns = g.sin != 1 && nrows >= kMinRowsForColumns;
  if (columns) {
    Kernel& k = get_kernel(d, "scan", opts, "scan_cols");
    launch(d, k, Range(static_cast<size_t>(nrows)), Range(kLocal), bx, by, g, cl_ulong(nrows));
  } else {
    Kernel& k = get_kernel(d, "scan", opts, "scan_rows");
    launch(d, k, Range(static_cast<size_t>(nrows) * kLocal), Range(kLocal), bx, by, g);
  }
}

// Checks and resizes a user-supplied out tensor like ATen's generated structured out= wrappers.
// torch <= 2.11 declares the set_output_* hooks with a trailing DimnameList, 2.13 (which dropped
// named tensors) without: both signatures are provided, without `override`, so the class builds
// against either.
template <class Meta>
struct OutMeta final : Meta {
  at::Tensor out;
  explicit OutMeta(const at::Tensor& o) : out(o) {}
  const at::Tensor& maybe_get_output(int64_t) override { return out; }
  void set_output_strided(int64_t, c10::IntArrayRef sizes, c10::IntArrayRef strides, at::TensorOptions options) {
    resize(sizes, strides, options);
  }
  void set_output_raw_strided(int64_t, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options) {
    resize(sizes, strides, options);
  }
  void set_output_strided(int64_t, c10::IntArrayRef sizes, c10::IntArrayRef strides, at::TensorOptions options,
                          OCL_DIMNAME_LIST) {
    resize(sizes, strides, options);
  }
  void set_output_raw_strided(int64_t, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options, OCL_DIMNAME_LIST) {
    resize(sizes, strides, options);
  }
  void resize(c10::IntArrayRef sizes, c10::IntArrayRef strides, const at::TensorOptions& options) {
    TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                out.dtype(), " instead");
    TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
                ", but got ", out.device(), " instead");
    if (at::native::resize_output(out, sizes) && !strides.empty()) out.as_strided_(sizes, strides);
  }
};

// cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cumsum_out_ocl(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  OutMeta<at::meta::structured_cumsum> m(out);
  m.meta(self, dim, dtype);
  run_scan(false, self, self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim()), out);
  return out;
}

// cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cumprod_out_ocl(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                            at::Tensor& out) {
  OutMeta<at::meta::structured_cumprod> m(out);
  m.meta(self, dim, dtype);
  run_scan(true, self, self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim()), out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum.out", cumsum_out_ocl);
  m.impl("cumprod.out", cumprod_out_ocl);
}

}  // namespace torch_ocl
