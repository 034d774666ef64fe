// Sorting ops: sort (stable, any dim, descending), topk, the sort-based unique family
// (_unique2, unique_consecutive) and bincount, the binary searches of searchsorted and
// bucketize, the selections from sorted rows (kthvalue, median, nanmedian, mode) and histc.
// Kernels: kernels/sort.cl. The sort moves the sorted dim last and contiguous, then runs a
// stable bitonic network per padded row: local memory for chunks of SORT_LOCAL elements,
// global merge steps for longer rows.
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SortingUtils.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/aminmax.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/any.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/diff.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_copy.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/where.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/topk_meta.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/unique_consecutive.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

constexpr size_t kWG = 256;  // work-group size of the grid-stride kernels


// Element/key options of sort.cl for dtype t (without the local sort geometry).
std::string dtype_opts(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "-DDT_HALF=1";
    case at::kBFloat16: return "-DDT_BF16=1";
    case at::kFloat: return "-DDT=float -DKEY_IS_FLOAT=1";
    case at::kDouble: return "-DDT=double -DKEY_IS_FLOAT=1";
    case at::kBool: return "-DDT=uchar";
    default: return "-DDT=" + cl_type_name(t);
  }
}

at::ScalarType key_dtype(at::ScalarType t) {
  return (t == at::kHalf || t == at::kBFloat16) ? at::kFloat : (t == at::kBool ? at::kByte : t);
}

// Local sort geometry for a key of key_bytes on device d: the largest power-of-two chunk up
// to 4096 whose (key, position) pairs fit in half the local memory, and up to 512
// work-items; both go to the program as SORT_LOCAL / SORT_WG.
struct LocalSortShape {
  int64_t chunk;
  size_t wg;
};
LocalSortShape local_sort_shape(Device& d, size_t key_bytes) {
  int64_t chunk = 4096;
  while (chunk > 64 && static_cast<cl_ulong>(chunk) * (key_bytes + 4) + 1024 > d.info.local_mem) chunk >>= 1;
  size_t wg = std::min<size_t>({512, d.info.max_work_group, static_cast<size_t>(chunk / 2)});
  return {chunk, wg};
}

// Options of every sort.cl program for dtype t on d (one program per dtype and device).
std::string sort_opts(Device& d, at::ScalarType t) {
  const LocalSortShape ls = local_sort_shape(d, c10::elementSize(key_dtype(t)));
  return dtype_opts(t) + " -DSORT_LOCAL=" + std::to_string(ls.chunk) + " -DSORT_WG=" + std::to_string(ls.wg);
}

// Sorts the padded (key, position) rows [rows, p2] in place (positions >= n are padding).
void sort_pairs(Device& d, const std::string& opts, const LocalSortShape& ls, const at::Tensor& keys,
                const at::Tensor& pos, int64_t rows, int64_t p2, int64_t n, bool desc) {
  const int64_t total = rows * p2;
  const size_t groups = static_cast<size_t>((total + ls.chunk - 1) / ls.chunk);
  const cl_int n_i = static_cast<cl_int>(n), p2_i = static_cast<cl_int>(p2), desc_i = desc ? 1 : 0;
  Kernel& local = get_kernel(d, "sort", opts, "sort_local");
  Kernel& step = get_kernel(d, "sort", opts, "sort_global_step");
  launch(d, local, Range(groups * ls.wg), Range(ls.wg), buf(keys), buf(pos), total, n_i, p2_i, desc_i, cl_int(0));
  for (int64_t kk = 2 * ls.chunk; kk <= p2; kk <<= 1) {
    for (int64_t j = kk / 2; j >= ls.chunk; j >>= 1)
      launch(d, step, grid_stride(total / 2), Range(kWG), buf(keys), buf(pos), rows, n_i, p2_i, desc_i,
             static_cast<cl_int>(kk), static_cast<cl_int>(j));
    launch(d, local, Range(groups * ls.wg), Range(ls.wg), buf(keys), buf(pos), total, n_i, p2_i, desc_i,
           static_cast<cl_int>(kk));
  }
}

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// The sorted (key, position) pairs of every row of contiguous x ([rows, n]): rows of p2 in
// keys/pos, the first n_out of each row valid. When only a few leading elements are wanted
// from long rows (topk, kthvalue with a small k), each SORT_LOCAL-chunk is sorted locally and
// only its first n_out survive as candidates for the final sort, which skips most global merge
// passes. sort_rows writes them out as values/indices; kthvalue, median and mode select from them.
struct SortedPairs {
  at::Tensor keys, pos;
  int64_t p2;
};
SortedPairs sorted_pairs(const at::Tensor& x, int64_t rows, int64_t n, bool desc, int64_t n_out, const char* name) {
  TORCH_CHECK_NOT_IMPLEMENTED(n < (int64_t(1) << 30), "torch_ocl: ", name, " of rows longer than 2^30 elements");
  Device& d = ocl_device(x);
  check_dtype_supported(d, x.scalar_type(), name);
  const at::ScalarType kt = key_dtype(x.scalar_type());
  const LocalSortShape ls = local_sort_shape(d, c10::elementSize(kt));
  const std::string opts = sort_opts(d, x.scalar_type());
  const int64_t p2 = next_pow2(n);
  at::Tensor keys = at::empty({rows * p2}, x.options().dtype(kt));
  at::Tensor pos = at::empty({rows * p2}, x.options().dtype(at::kInt));
  launch(d, get_kernel(d, "sort", opts, "sort_init"), grid_stride(rows * p2), Range(kWG), buf(keys), buf(pos), buf(x), rows,
         static_cast<cl_int>(n), static_cast<cl_int>(p2));
  int64_t out_p2 = p2;
  if (p2 > ls.chunk && n_out * 4 <= ls.chunk) {
    const int64_t total = rows * p2;
    const size_t groups = static_cast<size_t>(total / ls.chunk);
    launch(d, get_kernel(d, "sort", opts, "sort_local"), Range(groups * ls.wg), Range(ls.wg), buf(keys), buf(pos),
           total, static_cast<cl_int>(n), static_cast<cl_int>(p2), static_cast<cl_int>(desc), cl_int(-1));
    const int64_t nchunks = p2 / ls.chunk;
    const int64_t cp2 = next_pow2(nchunks * n_out);
    at::Tensor ckeys = at::empty({rows * cp2}, keys.options());
    at::Tensor cpos = at::empty({rows * cp2}, pos.options());
    launch(d, get_kernel(d, "sort", opts, "topk_candidates"), grid_stride(rows * cp2), Range(kWG), buf(ckeys), buf(cpos),
           buf(keys), buf(pos), rows, static_cast<cl_int>(p2), static_cast<cl_int>(n_out),
           static_cast<cl_int>(nchunks), static_cast<cl_int>(cp2));
    keys = ckeys;
    pos = cpos;
    out_p2 = cp2;
  }
  sort_pairs(d, opts, ls, keys, pos, rows, out_p2, n, desc);
  return {keys, pos, out_p2};
}

// Sorts each row of contiguous x ([rows, n]) and writes the first n_out of every sorted row
// to contiguous values/indices ([rows, n_out]).
void sort_rows(const at::Tensor& x, int64_t rows, int64_t n, bool desc, int64_t n_out, const at::Tensor& values,
               const at::Tensor& indices, const char* name) {
  if (rows == 0 || n == 0 || n_out == 0) return;
  const SortedPairs sp = sorted_pairs(x, rows, n, desc, n_out, name);
  Device& d = ocl_device(x);
  launch(d, get_kernel(d, "sort", sort_opts(d, x.scalar_type()), "sort_finish"), grid_stride(rows * n_out), Range(kWG),
         buf(values), buf(indices), buf(sp.keys), buf(sp.pos), rows, static_cast<cl_int>(sp.p2),
         static_cast<cl_int>(n_out));
}

// Sorts self along dim, keeping the first n_out of each sorted slice, into values/indices
// (already sized: self's shape with dim -> n_out).
void sort_along(const at::Tensor& self, int64_t dim, bool desc, int64_t n_out, const at::Tensor& values,
                const at::Tensor& indices, const char* name) {
  if (self.numel() == 0 || n_out == 0) return;
  if (self.dim() == 0) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  const int64_t n = self.size(dim);
  at::Tensor x = self.movedim(dim, -1).contiguous();
  const int64_t rows = x.numel() / n;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = n_out;
  auto vt = values.movedim(dim, -1), it = indices.movedim(dim, -1);
  const bool direct = vt.is_contiguous() && it.is_contiguous() && !values.storage().is_alias_of(self.storage());
  at::Tensor v = direct ? vt : at::empty(shape, values.options());
  at::Tensor ix = direct ? it : at::empty(shape, indices.options());
  sort_rows(x, rows, n, desc, n_out, v, ix, name);
  if (!direct) {
    vt.copy_(v);
    it.copy_(ix);
  }
}

// sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> sort_values_stable_ocl(const at::Tensor& self, c10::optional<bool> stable,
                                                            int64_t dim, bool descending, at::Tensor& values,
                                                            at::Tensor& indices) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "sort(): values must have the same dtype as self");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "sort(): indices must be int64");
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  // The network is always stable, so stable=False gets the stable order too.
  sort_along(self, dim, descending, self.dim() == 0 ? 1 : self.size(dim), values, indices, "sort");
  return {values, indices};
}

// topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> topk_values_ocl(const at::Tensor& self, int64_t k, int64_t dim, bool largest,
                                                     bool sorted, at::Tensor& values, at::Tensor& indices) {
  // ATen's checks (k in range, the outs' dtypes and devices) and output sizes, as on the CPU.
  OutMeta<at::meta::structured_topk, 2> m(values, indices);
  m.meta(self, k, dim, largest, sorted);
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (self.dim() == 0) {  // the element itself, for k = 0 too (as the CPU: a 0-dim result)
    values.copy_(self);
    indices.zero_();
    return {values, indices};
  }
  // A full sort of each slice; the first k are the (sorted) answer.
  sort_along(self, dim, largest, k, values, indices, "topk");
  return {values, indices};
}

// Run starts of x (sorted, or as given) -> values, inverse and counts of the runs.
std::tuple<at::Tensor, at::Tensor, at::Tensor> runs_of(const at::Tensor& self, const at::Tensor& x,
                                                       const at::Tensor& perm, bool return_inverse,
                                                       bool return_counts) {
  Device& d = ocl_device(x);
  const std::string opts = sort_opts(d, x.scalar_type());
  const int64_t n = x.numel();
  at::Tensor flags = at::empty({n}, x.options().dtype(at::kBool));
  launch(d, get_kernel(d, "sort", opts, "unique_flags"), grid_stride(n), Range(kWG), buf(flags), buf(x), n);
  at::Tensor starts = at::nonzero(flags).view({-1});  // the one host read: the output size
  const int64_t nu = starts.numel();
  at::Tensor values = at::empty({nu}, x.options());
  at::Tensor counts = at::empty({nu}, x.options().dtype(at::kLong));
  launch(d, get_kernel(d, "sort", opts, "unique_write"), grid_stride(nu), Range(kWG), buf(values), buf(counts), buf(starts),
         buf(x), nu, n);
  at::Tensor inverse = at::empty({0}, x.options().dtype(at::kLong));
  if (return_inverse) {
    inverse = at::empty(self.sizes(), x.options().dtype(at::kLong));
    const at::Tensor& pb = perm.defined() ? perm : starts;
    launch(d, get_kernel(d, "sort", opts, "unique_inverse"), grid_stride(n), Range(kWG), buf(inverse), buf(pb),
           static_cast<cl_int>(perm.defined()), buf(starts), nu, n);
  }
  if (!return_counts) counts = at::empty({0}, counts.options());
  return {values, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> empty_unique(const at::Tensor& self, bool return_inverse) {
  return {at::empty({0}, self.options()),
          at::empty(return_inverse ? self.sizes() : c10::IntArrayRef{0}, self.options().dtype(at::kLong)),
          at::empty({0}, self.options().dtype(at::kLong))};
}

// _unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2_ocl(const at::Tensor& self, bool sorted, bool return_inverse,
                                                           bool return_counts) {
  check_dtype_supported(ocl_device(self), self.scalar_type(), "unique");
  if (self.numel() == 0) return empty_unique(self, return_inverse);
  // Always sorted (sorted=False leaves the order unspecified).
  auto sv = at::sort(self.reshape({-1}), /*stable=*/true, 0, false);
  return runs_of(self, std::get<0>(sv), std::get<1>(sv), return_inverse, return_counts);
}

// unique_consecutive along dim: runs of equal slices (equal element by element, so a slice
// holding NaN starts a run of its own, as at::equal decides on the CPU). The CPU's checks and
// shapes: inverse (size(dim),) and counts always, a zero-size dim only when it is the one chosen.
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive_dim(const at::Tensor& self, int64_t dim_in) {
  const int64_t dim = at::maybe_wrap_dim(dim_in, self.dim(), /*wrap_scalar=*/false);
  const auto long_opts = self.options().dtype(at::kLong);
  if (self.size(dim) == 0) {
    TORCH_CHECK(std::count(self.sizes().begin(), self.sizes().end(), 0) == 1,
                "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    return {at::empty(self.sizes(), self.options()), at::empty({0}, long_opts), at::empty({0}, long_opts)};
  }
  TORCH_CHECK(self.numel() > 0, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  if (self.dim() == 1) return runs_of(self, self.contiguous(), at::Tensor(), true, true);
  const at::Tensor moved = self.movedim(dim, 0);
  const int64_t n = moved.size(0);
  const at::Tensor flat = moved.reshape({n, -1});
  // starts[i]: slice i differs from slice i - 1 (slice 0 always starts a run).
  at::Tensor starts = at::empty({n}, self.options().dtype(at::kBool));
  starts.narrow(0, 0, 1).fill_(true);
  at::Tensor later = starts.narrow(0, 1, n - 1);
  at::any_out(later, at::ne(flat.narrow(0, 1, n - 1), flat.narrow(0, 0, n - 1)), 1);
  at::Tensor first = at::nonzero(starts).view({-1});  // the one host read: the output size
  const int64_t nu = first.numel();
  at::Tensor inverse = at::cumsum(starts, 0).sub_(1);
  at::Tensor counts = at::diff(first, 1, 0, c10::nullopt, at::full({1}, n, long_opts));
  std::vector<int64_t> sizes = moved.sizes().vec();
  sizes[0] = nu;
  at::Tensor values = flat.index_select(0, first).view(sizes).movedim(0, dim);
  return {values, inverse, counts};
}

// unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive_ocl(const at::Tensor& self, bool return_inverse,
                                                                      bool return_counts, c10::optional<int64_t> dim) {
  check_dtype_supported(ocl_device(self), self.scalar_type(), "unique_consecutive");
  if (dim.has_value()) return unique_consecutive_dim(self, *dim);
  if (self.numel() == 0) return empty_unique(self, return_inverse);
  return runs_of(self, self.reshape({-1}).contiguous(), at::Tensor(), return_inverse, return_counts);
}

// unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
// The slices along dim in lexicographic order (a stable sort of each column of the flattened
// slices, last column first, each permuting the order the previous ones left), then
// unique_consecutive_dim's runs, the inverse mapped back to the slices' own order. As on the
// CPU, the output is always sorted and inverse and counts are always computed; its checks and
// empty results are unique_consecutive_dim's. A slice holding NaN equals no other slice.
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_dim_ocl(const at::Tensor& self, int64_t dim_in,
                                                              bool /*sorted*/, bool /*return_inverse*/,
                                                              bool /*return_counts*/) {
  check_dtype_supported(ocl_device(self), self.scalar_type(), "unique_dim");
  const int64_t dim = at::maybe_wrap_dim(dim_in, self.dim(), /*wrap_scalar=*/false);
  if (self.numel() == 0) return unique_consecutive_dim(self, dim);
  const at::Tensor flat = self.movedim(dim, 0).reshape({self.size(dim), -1});
  at::Tensor perm = at::arange(flat.size(0), self.options().dtype(at::kLong));
  for (int64_t k = flat.size(1) - 1; k >= 0; --k) {
    const at::Tensor column = flat.select(1, k).index_select(0, perm);
    perm = perm.index_select(0, std::get<1>(at::sort(column, /*stable=*/true, 0, /*descending=*/false)));
  }
  auto [values, sorted_inverse, counts] = unique_consecutive_dim(self.index_select(dim, perm), dim);
  at::Tensor inverse = at::empty_like(sorted_inverse).index_copy_(0, perm, sorted_inverse);
  return {values, inverse, counts};
}

// bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor
at::Tensor bincount_ocl(const at::Tensor& self, const c10::optional<at::Tensor>& weights_in, int64_t minlength) {
  // The CPU's order: no kernel for a non-integral dtype, then the shape and minlength checks.
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(self.scalar_type(), /*includeBool=*/false),
                              "\"bincount\" not implemented for '", self.scalar_type(), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  const bool has_w = weights_in.has_value() && weights_in->defined();
  if (has_w)
    TORCH_CHECK(weights_in->dim() == 1 && weights_in->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  const at::ScalarType out_t =
      !has_w ? at::kLong : (weights_in->scalar_type() == at::kFloat ? at::kFloat : at::kDouble);
  const int64_t n = self.numel();
  if (n == 0) return at::zeros({minlength}, self.options().dtype(out_t));
  Device& d = ocl_device(self);
  check_dtype_supported(d, out_t, "bincount");
  auto sv = at::sort(self.to(at::kLong), /*stable=*/true, 0, false);
  const at::Tensor& sorted = std::get<0>(sv);
  at::Tensor ends = at::stack({sorted[0], sorted[n - 1]}).cpu();  // the one host read: the output size
  const int64_t lo = ends[0].item<int64_t>(), hi = ends[1].item<int64_t>();
  TORCH_CHECK(lo >= 0, "bincount only supports 1-d non-negative integral inputs.");
  const int64_t nbins = std::max(hi + 1, minlength);
  at::Tensor out = at::empty({nbins}, self.options().dtype(out_t));
  at::Tensor w = has_w ? weights_in->to(self.device(), out_t).contiguous() : out;
  launch(d, get_kernel(d, "sort", sort_opts(d, out_t), "bincount_bins"), grid_stride(nbins), Range(kWG), buf(out), buf(sorted),
         buf(std::get<1>(sv)), buf(w), n, nbins, static_cast<cl_int>(has_w));
  return out;
}

// repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor
// [0]*repeats[0] ++ [1]*repeats[1] ++ ...: output position j holds the first i whose running
// total of repeats exceeds j (a right-sided binary search of the cumulative sum). As on the
// CPU, the total is read to size (or check) the output, with the negativity check in the same
// read.
at::Tensor repeat_interleave_ocl(const at::Tensor& repeats, std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  const at::ScalarType t = repeats.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kLong || t == at::kInt, "\"repeat_interleave\" not implemented for '", t,
                              "'");
  if (repeats.numel() == 0) return at::empty({0}, repeats.options());  // any output_size, as on the CPU
  const at::Tensor cum = repeats.cumsum(0, at::kLong);
  const at::Tensor host = at::stack({at::amin(repeats).to(at::kLong), cum[-1]}).cpu();  // the one host read
  TORCH_CHECK(host[0].item<int64_t>() >= 0, "repeats can not be negative");
  const int64_t total = host[1].item<int64_t>();
  TORCH_CHECK(!output_size.has_value() || *output_size == total, "allocated size does not match required size");
  return at::searchsorted(cum, at::arange(total, cum.options()), /*out_int32=*/t == at::kInt, /*right=*/true);
}

// searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False,
//                         str? side=None, Tensor? sorter=None, Tensor(a!) out) -> Tensor(a!)
// ATen's argument checks and dtype promotion (BucketizationUtils.h), then one binary search per
// value on contiguous operands.
at::Tensor& searchsorted_out_ocl(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32, bool right,
                                 std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter_opt,
                                 at::Tensor& result) {
  const at::Tensor sorter = sorter_opt.has_value() ? *sorter_opt : at::Tensor();
  at::native::searchsorted_pre_check(boundaries, self, result, out_int32, right, side, sorter);
  at::native::resize_output(result, self.sizes());
  if (self.numel() == 0) return result;
  const bool is_right = side.has_value() ? *side == "right" : right;
  at::Tensor in, bd, st;
  at::native::searchsorted_maybe_trim_input_tensors(in, bd, st, self, boundaries, sorter);
  const at::Tensor& input = in.defined() ? in : self;
  const at::Tensor& bounds = bd.defined() ? bd : boundaries;
  const at::Tensor& order = st.defined() ? st : sorter;
  const at::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool && !at::isComplexType(t), "\"searchsorted_out_cpu\" not implemented for '",
                              t, "'");
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, "searchsorted");
  at::Tensor out = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  const int64_t n = input.numel(), len = bounds.size(-1), inner = input.dim() ? input.size(-1) : 1;
  launch(d, get_kernel(d, "sort", sort_opts(d, t), "searchsorted"), grid_stride(n), Range(kWG), buf(out), buf(out),
         buf(bounds), order.defined() ? buf(order) : Buf{nullptr, 0}, buf(input), n, inner, len,
         static_cast<cl_int>(bounds.dim() == 1), static_cast<cl_int>(is_right), static_cast<cl_int>(order.defined()),
         static_cast<cl_int>(out_int32));
  if (!result.is_contiguous()) result.copy_(out);
  return result;
}

at::Tensor empty_positions(const at::Tensor& like, bool out_int32) {
  return at::empty({0}, like.options().dtype(out_int32 ? at::kInt : at::kLong));
}

// searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None,
//                     Tensor? sorter=None) -> Tensor
at::Tensor searchsorted_ocl(const at::Tensor& boundaries, const at::Tensor& self, bool out_int32, bool right,
                            std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  at::Tensor result = empty_positions(self, out_int32);
  return searchsorted_out_ocl(boundaries, self, out_int32, right, side, sorter, result);
}

// searchsorted.Scalar(...) / Scalar_out: the value as a wrapped-number tensor (binary-op promotion).
at::Tensor searchsorted_scalar_ocl(const at::Tensor& boundaries, const c10::Scalar& self, bool out_int32, bool right,
                                   std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  return searchsorted_ocl(boundaries, at::native::searchsorted_scalar_tensor(self, boundaries.device()), out_int32,
                          right, side, sorter);
}
at::Tensor& searchsorted_scalar_out_ocl(const at::Tensor& boundaries, const c10::Scalar& self, bool out_int32,
                                        bool right, std::optional<c10::string_view> side,
                                        const std::optional<at::Tensor>& sorter, at::Tensor& result) {
  return searchsorted_out_ocl(boundaries, at::native::searchsorted_scalar_tensor(self, boundaries.device()),
                              out_int32, right, side, sorter, result);
}

// bucketize.Tensor_out(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor(a!) out):
// searchsorted with 1-D boundaries.
at::Tensor& bucketize_out_ocl(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                              at::Tensor& result) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted_out_ocl(boundaries, self, out_int32, right, std::nullopt, std::nullopt, result);
}
at::Tensor bucketize_ocl(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  at::Tensor result = empty_positions(self, out_int32);
  return bucketize_out_ocl(self, boundaries, out_int32, right, result);
}
at::Tensor bucketize_scalar_ocl(const c10::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  return bucketize_ocl(at::native::searchsorted_scalar_tensor(self, boundaries.device()), boundaries, out_int32, right);
}

// ---- kthvalue, median, nanmedian, mode: a sort of each slice, then a selection kernel --------

// Which sorted position kthvalue_fwd picks (its `which`).
enum class Pick : cl_int { Kth = 0, Median = 1, NanMedian = 2 };

// Picks one sorted position of every slice of self along dim (self.size(dim) > 0) into
// values/indices: self's shape with dim -> 1 (views of the caller's outs, any strides).
void select_along(const at::Tensor& self, int64_t dim, Pick which, int64_t k, const at::Tensor& values,
                  const at::Tensor& indices, const char* name) {
  if (values.numel() == 0) return;
  if (self.dim() == 0) {
    values.copy_(self);
    indices.zero_();
    return;
  }
  const int64_t n = self.size(dim);
  const at::Tensor x = self.movedim(dim, -1).contiguous();
  const int64_t rows = x.numel() / n;
  // Only the first k of a kthvalue row matter (topk's candidate path when k is small).
  const SortedPairs sp = sorted_pairs(x, rows, n, false, which == Pick::Kth ? k : n, name);
  const at::Tensor vt = values.movedim(dim, -1), it = indices.movedim(dim, -1);
  const bool direct = vt.is_contiguous() && it.is_contiguous();
  const at::Tensor v = direct ? vt : at::empty(vt.sizes(), values.options());
  const at::Tensor ix = direct ? it : at::empty(it.sizes(), indices.options());
  Device& d = ocl_device(self);
  launch(d, get_kernel(d, "sort", sort_opts(d, self.scalar_type()), "kthvalue_fwd"), grid_stride(rows), Range(kWG), buf(v),
         buf(ix), buf(sp.keys), buf(sp.pos), rows, static_cast<cl_int>(sp.p2), static_cast<cl_int>(n),
         static_cast<cl_int>(k), static_cast<cl_int>(which));
  if (!direct) {
    vt.copy_(v);
    it.copy_(ix);
  }
}

// self's sizes with dim -> 1 (keepdim) or dim removed; a 0-dim self gives a 0-dim result.
std::vector<int64_t> reduced_shape(const at::Tensor& self, int64_t dim, bool keepdim) {
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() == 0) return shape;
  if (keepdim) shape[dim] = 1;
  else shape.erase(shape.begin() + dim);
  return shape;
}

// median / nanmedian along dim: the CPU's checks in its order (an empty slice is an IndexError),
// then the lower median of each slice; NaN as the CPU treats it (Pick).
std::tuple<at::Tensor&, at::Tensor&> median_with_indices(const at::Tensor& self, int64_t dim, bool keepdim,
                                                         at::Tensor& values, at::Tensor& indices, bool ignore_nan) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::native::zero_numel_check_dims(self, dim, "median()");
  at::checkDeviceType("median", {values, indices}, self.device().type());
  at::checkScalarType("median", at::TensorArg(indices, "indices", 1), at::kLong);
  at::checkSameType("median", at::TensorArg(values, "values", 0), at::TensorArg(self, "self", 2));
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"", ignore_nan ? "nanmedian" : "median",
                              "\" not implemented for 'Bool'");
  const std::vector<int64_t> shape = reduced_shape(self, dim, keepdim);
  at::native::resize_output(values, shape);
  at::native::resize_output(indices, shape);
  const bool squeezed = !keepdim && self.dim() > 0;
  select_along(self, dim, ignore_nan ? Pick::NanMedian : Pick::Median, 0, squeezed ? values.unsqueeze(dim) : values,
               squeezed ? indices.unsqueeze(dim) : indices, ignore_nan ? "nanmedian" : "median");
  return {values, indices};
}

// median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> median_dim_values_ocl(const at::Tensor& self, int64_t dim, bool keepdim,
                                                           at::Tensor& values, at::Tensor& indices) {
  return median_with_indices(self, dim, keepdim, values, indices, false);
}

// nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_values_ocl(const at::Tensor& self, int64_t dim, bool keepdim,
                                                              at::Tensor& values, at::Tensor& indices) {
  return median_with_indices(self, dim, keepdim, values, indices, true);
}

// The median of all elements (0-dim). An empty input gives NaN converted to self's dtype, made
// on the host as the CPU makes it (for integer dtypes that conversion is the CPU's own value).
at::Tensor median_all(const at::Tensor& self, bool ignore_nan) {
  const char* name = ignore_nan ? "nanmedian" : "median";
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"", name, "\" not implemented for 'Bool'");
  if (self.numel() == 0)
    return at::full({}, std::numeric_limits<float>::quiet_NaN(), at::TensorOptions().dtype(at::kFloat))
        .to(self.scalar_type())
        .to(self.device());
  at::Tensor values = at::empty({1}, self.options());
  at::Tensor indices = at::empty({1}, self.options().dtype(at::kLong));
  select_along(self.reshape({-1}), 0, ignore_nan ? Pick::NanMedian : Pick::Median, 0, values, indices, name);
  return values.squeeze(0);
}

// median(Tensor self) -> Tensor
at::Tensor median_ocl(const at::Tensor& self) { return median_all(self, false); }

// nanmedian(Tensor self) -> Tensor
at::Tensor nanmedian_ocl(const at::Tensor& self) { return median_all(self, true); }

// kthvalue.values(Tensor self, SymInt k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
std::tuple<at::Tensor&, at::Tensor&> kthvalue_values_ocl(const at::Tensor& self, int64_t k, int64_t dim_in,
                                                         bool keepdim, at::Tensor& values, at::Tensor& indices) {
  // The CPU's checks in its order, and its resizing of the outs (SortingUtils.h).
  const int64_t dim = at::maybe_wrap_dim(dim_in, self.dim(), /*wrap_scalar=*/true);
  const int64_t slice = self.dim() == 0 ? 1 : self.size(dim);
  at::native::zero_numel_check_dims(self, dim, "kthvalue()");
  TORCH_CHECK(k >= 1 && k <= slice, "kthvalue(): selected number k out of range for dimension ", dim);
  at::assert_no_overlap(self, values);
  at::native::_reduction_with_indices_allocate_or_resize_output(values, indices, self, dim, keepdim);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"kthvalue\" not implemented for 'Bool'");
  select_along(self, dim, Pick::Kth, k, values, indices, "kthvalue");
  if (!keepdim) {
    values.squeeze_(dim);
    indices.squeeze_(dim);
  }
  return {values, indices};
}

// mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
// The most frequent value of each slice: the smallest among equally frequent ones, and the
// largest index where it occurs (see mode_fwd). ATen's mode.values is CompositeExplicitAutograd
// but refuses devices other than CPU, CUDA and XPU, so it is registered here too.
std::tuple<at::Tensor&, at::Tensor&> mode_values_ocl(const at::Tensor& self, int64_t dim_in, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  TORCH_CHECK(values.device() == self.device() && indices.device() == self.device(), "expected device '",
              self.device(), "' for the values and indices outputs of mode, got '", values.device(), "' and '",
              indices.device(), "'");
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "expected scalar type '", self.scalar_type(), "' but got '",
              values.scalar_type(), "' for values output");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected scalar type '", at::kLong, "' but got '",
              indices.scalar_type(), "' for indices output");
  const int64_t dim = at::maybe_wrap_dim(dim_in, self.dim());
  if (self.dim() == 0) {
    at::native::resize_output(values, {});
    at::native::resize_output(indices, {});
    values.copy_(self);
    indices.zero_();
    return {values, indices};
  }
  at::native::zero_numel_check_dims(self, dim, "mode()");
  at::native::_reduction_with_indices_allocate_or_resize_output(values, indices, self, dim, keepdim);
  if (values.numel() > 0) {
    const int64_t n = self.size(dim);
    const at::Tensor x = self.movedim(dim, -1).contiguous();
    const int64_t rows = x.numel() / n;
    const SortedPairs sp = sorted_pairs(x, rows, n, false, n, "mode");
    // dim has size 1 in the outs: a contiguous out holds the rows in x's order.
    const bool direct = values.is_contiguous() && indices.is_contiguous();
    const at::Tensor v = direct ? values : at::empty(values.sizes(), values.options());
    const at::Tensor ix = direct ? indices : at::empty(indices.sizes(), indices.options());
    Device& d = ocl_device(self);
    // One work-group per row, at most 256 work-items; a power of two for the tree reduction.
    const size_t wg = static_cast<size_t>(
        std::min<int64_t>({256, next_pow2(n), static_cast<int64_t>(d.info.max_work_group)}));
    const size_t groups = static_cast<size_t>(std::min<int64_t>(rows, 65536));
    launch(d, get_kernel(d, "sort", sort_opts(d, self.scalar_type()), "mode_fwd"), Range(groups * wg), Range(wg),
           buf(v), buf(ix), buf(sp.keys), buf(sp.pos), rows, static_cast<cl_int>(sp.p2), static_cast<cl_int>(n),
           LocalMem{wg * sizeof(cl_int)}, LocalMem{wg * sizeof(cl_int)});
    if (!direct) {
      values.copy_(v);
      indices.copy_(ix);
    }
  }
  if (!keepdim) {
    values.squeeze_(dim);
    indices.squeeze_(dim);
  }
  return {values, indices};
}

// mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
std::tuple<at::Tensor, at::Tensor> mode_ocl(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(at::kLong));
  mode_values_ocl(self, dim, keepdim, values, indices);
  return {values, indices};
}

// ---- histc ---------------------------------------------------------------------------------

// histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) -> Tensor(a!)
// The CPU's checks in its order; min == max takes the data's range (one host read), widened by
// 1 each way when that is a single value. The edges are converted to self's dtype as the CPU's
// linspace converts them (overflow is its RuntimeError), and each element's bin is computed with
// the CPU's arithmetic (histc_bin). Counts are exact integers, converted to the dtype at the end.
at::Tensor& histc_out_ocl(const at::Tensor& self, int64_t bins, const c10::Scalar& min, const c10::Scalar& max,
                          at::Tensor& out) {
  TORCH_CHECK(out.device() == self.device(), "histc: expected out on ", self.device(), ", got ", out.device());
  TORCH_CHECK(out.dtype() == self.dtype(), "torch.histogram: input tensor and hist tensor should have the same dtype, "
              "but got input ", self.dtype(), " and hist ", out.dtype());
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double lo = min.to<double>(), hi = max.to<double>();
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo <= hi, "torch.histc: max must be larger than min");
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"histc\" not implemented for '", t, "'");
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, "histc");
  if (lo == hi && self.numel() > 0) {
    auto mm = at::aminmax(self);
    const at::Tensor ends = at::stack({std::get<0>(mm), std::get<1>(mm)}).to(at::kDouble).cpu();  // the host read
    lo = ends[0].item<double>();
    hi = ends[1].item<double>();
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  // The edges in the dtype, passed as the kernel's KEY (float for float16/bfloat16: exact).
  double lo_t = 0, hi_t = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "histc", [&] {
    lo_t = static_cast<double>(c10::Scalar(lo).to<scalar_t>());
    hi_t = static_cast<double>(c10::Scalar(hi).to<scalar_t>());
  });
  at::native::resize_output(out, {bins});
  TORCH_CHECK_NOT_IMPLEMENTED(self.numel() < (int64_t(1) << 32) && bins < (int64_t(1) << 31),
                              "torch_ocl: histc of 2^32 or more elements or 2^31 or more bins");
  at::Tensor counts = at::zeros({bins}, self.options().dtype(at::kInt));
  const int64_t n = self.numel();
  if (n > 0) {
    const at::Tensor x = self.reshape({-1}).contiguous();
    const std::string opts = sort_opts(d, t) + ieee_div_sqrt_option(d.info);
    // Local bins when they fit half the local memory; a few hundred groups so each one's bins
    // are amortized over many elements.
    const bool local_bins = static_cast<cl_ulong>(bins) * 4 <= d.info.local_mem / 2;
    const size_t groups = static_cast<size_t>(std::clamp<int64_t>(n / (kWG * 16), 1, 512));
    Kernel& k = get_kernel(d, "sort", opts, "histc_fwd");
    const LocalMem lh{local_bins ? static_cast<size_t>(bins) * 4 : 4};
    const cl_int bins_i = static_cast<cl_int>(bins), local_i = local_bins ? 1 : 0;
    if (t == at::kDouble)
      launch(d, k, Range(groups * kWG), Range(kWG), buf(counts), buf(x), n, bins_i, lo_t, hi_t, lh, local_i);
    else
      launch(d, k, Range(groups * kWG), Range(kWG), buf(counts), buf(x), n, bins_i, static_cast<float>(lo_t),
             static_cast<float>(hi_t), lh, local_i);
  }
  at::Tensor o = out.is_contiguous() ? out : at::empty({bins}, out.options());
  launch(d, get_kernel(d, "sort", sort_opts(d, t), "histc_finish"), grid_stride(bins), Range(kWG), buf(o), buf(counts),
         static_cast<cl_int>(bins));
  if (!out.is_contiguous()) out.copy_(o);
  return out;
}

// histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor
at::Tensor histc_ocl(const at::Tensor& self, int64_t bins, const c10::Scalar& min, const c10::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  return histc_out_ocl(self, bins, min, max, out);
}

}  // namespace

namespace {

// ---- isin ------------------------------------------------------------------------------------
// Membership by binary search: the test elements sorted once, each element's insertion point
// (searchsorted), then one comparison with the value found there (NaN is in nothing). Both
// sides in their common dtype, as on the CPU.

// The check of out and its sizing (bool, elements' shape).
bool isin_prepare(at::IntArrayRef shape, const at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool, "isin: expected out of dtype Bool, got ", out.scalar_type());
  at::native::resize_output(out, shape);
  return out.numel() > 0;
}

void isin_into(const at::Tensor& elements, const at::Tensor& test_elements, bool invert, const at::Tensor& out) {
  for (const at::Tensor* t : {&elements, &test_elements})
    TORCH_CHECK(t->scalar_type() != at::kBool && !at::isComplexType(t->scalar_type()),
                "Unsupported input type encountered for isin(): ", t->scalar_type());
  if (!isin_prepare(elements.sizes(), out)) return;
  if (test_elements.numel() == 0) {
    out.fill_(invert);
    return;
  }
  const at::ScalarType common = at::promote_types(elements.scalar_type(), test_elements.scalar_type());
  const at::Tensor e = elements.to(common);
  at::Tensor sorted = std::get<0>(at::sort(test_elements.reshape({-1}).to(common)));
  if (at::isFloatingType(common)) {
    // NaN matches nothing, but a NaN in the sorted values breaks the binary search: each
    // becomes the smallest value (a duplicate, so membership is unchanged; all NaN stay NaN).
    sorted = std::get<0>(at::sort(at::where(sorted.isnan(), sorted.select(0, 0), sorted)));
  }
  const at::Tensor at_pos = at::searchsorted(sorted, e.reshape({-1})).clamp_max_(sorted.numel() - 1);
  const at::Tensor hit = sorted.index_select(0, at_pos).view(e.sizes());
  out.copy_(invert ? hit.ne(e) : hit.eq(e));
}

// isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& isin_tt_out_ocl(const at::Tensor& elements, const at::Tensor& test_elements, bool /*assume_unique*/,
                            bool invert, at::Tensor& out) {
  isin_into(elements, test_elements, invert, out);
  return out;
}

// isin.Tensor_Scalar_out(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& isin_ts_out_ocl(const at::Tensor& elements, const at::Scalar& test_element, bool /*assume_unique*/,
                            bool invert, at::Tensor& out) {
  if (!isin_prepare(elements.sizes(), out)) return out;
  out.copy_(invert ? elements.ne(test_element) : elements.eq(test_element));
  return out;
}

// isin.Scalar_Tensor_out(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& isin_st_out_ocl(const at::Scalar& element, const at::Tensor& test_elements, bool /*assume_unique*/,
                            bool invert, at::Tensor& out) {
  isin_into(at::scalar_tensor(element, test_elements.options().dtype(element.type())), test_elements, invert, out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "sort.values_stable", sort_values_stable_ocl);
  OCL_IMPL(m, "topk.values", topk_values_ocl);
  OCL_IMPL(m, "_unique2", unique2_ocl);
  OCL_IMPL(m, "unique_consecutive", unique_consecutive_ocl);
  OCL_IMPL(m, "unique_dim", unique_dim_ocl);
  OCL_IMPL(m, "bincount", bincount_ocl);
  OCL_IMPL(m, "repeat_interleave.Tensor", repeat_interleave_ocl);
  OCL_IMPL(m, "searchsorted.Tensor", searchsorted_ocl);
  OCL_IMPL(m, "searchsorted.Tensor_out", searchsorted_out_ocl);
  OCL_IMPL(m, "searchsorted.Scalar", searchsorted_scalar_ocl);
  OCL_IMPL(m, "searchsorted.Scalar_out", searchsorted_scalar_out_ocl);
  OCL_IMPL(m, "bucketize.Tensor", bucketize_ocl);
  OCL_IMPL(m, "bucketize.Tensor_out", bucketize_out_ocl);
  OCL_IMPL(m, "bucketize.Scalar", bucketize_scalar_ocl);
  OCL_IMPL(m, "median", median_ocl);
  OCL_IMPL(m, "median.dim_values", median_dim_values_ocl);
  OCL_IMPL(m, "nanmedian", nanmedian_ocl);
  OCL_IMPL(m, "nanmedian.dim_values", nanmedian_dim_values_ocl);
  OCL_IMPL(m, "kthvalue.values", kthvalue_values_ocl);
  OCL_IMPL(m, "mode", mode_ocl);
  OCL_IMPL(m, "mode.values", mode_values_ocl);
  OCL_IMPL(m, "histc", histc_ocl);
  OCL_IMPL(m, "histc.out", histc_out_ocl);
  OCL_IMPL(m, "isin.Tensor_Tensor_out", isin_tt_out_ocl);
  OCL_IMPL(m, "isin.Tensor_Scalar_out", isin_ts_out_ocl);
  OCL_IMPL(m, "isin.Scalar_Tensor_out", isin_st_out_ocl);
}

}  // namespace torch_ocl
