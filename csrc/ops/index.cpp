// Indexing ops: index_select, gather, scatter (src / value / reduce), scatter_add,
// scatter_reduce, index_add, advanced indexing (index.Tensor, _index_put_impl_), nonzero,
// masked_select, masked_scatter_, embedding_dense_backward, embedding_bag (with sparse
// gradients: a sparse COO tensor on ocl, see ops/sparse.cpp) and embedding_renorm_.
// Kernels: kernels/index.cl.
// Accumulating scatters sort their target keys (at::sort, stable) and fold each run of equal
// keys in input order: deterministic, and no float atomics. Index errors are reported
// through the device's sticky error flag and raised at the next synchronization point.
#include "../aten/Complex.h"
#include "../aten/Routing.h"
#include "words.h"
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorOperators.h>
#include <ATen/TensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/ScatterGatherChecks.h>
#include <ATen/ops/_embedding_bag_dense_backward.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/embedding_backward.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_copy_meta.h>
#include <ATen/ops/index_put.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/_index_put_impl.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/real.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <c10/util/irange.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <torch/library.h>

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 12;  // MAXD in kernels/index.cl
constexpr size_t kWG = 256;  // work-group size of the grid-stride kernels

// An accumulation of complex `src` into complex `target` as two real ones, since complex sums
// are the sums of their parts: add(part, src_part) on the .real views, then on the .imag ones.
template <class Add>
void add_by_parts(const at::Tensor& target, const at::Tensor& src, Add&& add) {
  at::Tensor re = at::real(target), im = at::imag(target);
  add(re, at::real(src));
  add(im, at::imag(src));
}

// Word program for kernels that move no elements of a tensor (keys, scans, coordinates).
const char* kPlainOpts = "-DT=uint";

// Index tensors are passed as raw bytes plus this flag (int32 or int64 elements).
cl_int idx32(const at::Tensor& index) { return index.scalar_type() == at::kInt ? 1 : 0; }

// Bits of an element that must be nonzero for it to count as nonzero (drops the sign bit of
// floating dtypes, so -0.0 counts as zero).
uint64_t nonzero_mask(at::ScalarType t) {
  switch (t) {
    case at::kHalf: case at::kBFloat16: return 0x7fffu;
    case at::kFloat: return 0x7fffffffu;
    case at::kDouble: return 0x7fffffffffffffffull;
    default: return ~uint64_t(0);
  }
}

// Typed element options of index.cl (DT storage, ACC arithmetic).
std::string typed_opts(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "-DDT_HALF=1";
    case at::kBFloat16: return "-DDT_BF16=1";
    case at::kFloat: return "-DDT=float -DACC=float -DDT_IS_FLOAT=1 -DDT_FLOAT32=1";
    case at::kDouble: return "-DDT=double -DACC=double -DDT_IS_FLOAT=1 -DDT_DOUBLE64=1";
    case at::kInt: return "-DDT=int -DACC=long -DDT_INT32=1";
    case at::kLong: return "-DDT=long -DACC=long -DDT_INT64=1";
    case at::kBool: return "-DDT=uchar -DACC=uint -DDT_BOOL=1";
    default: return "-DDT=" + cl_type_name(t) + " -DACC=long";
  }
}

// Calls f with a Scalar converted to the ACC type of typed_opts(t).
template <typename F>
void with_acc(at::ScalarType t, const c10::Scalar& a, const c10::Scalar& b, F&& f) {
  switch (t) {
    case at::kDouble: f(a.toDouble(), b.toDouble()); break;
    case at::kFloat: case at::kHalf: case at::kBFloat16: f(a.toFloat(), b.toFloat()); break;
    case at::kBool: f(static_cast<cl_uint>(a.toBool()), static_cast<cl_uint>(b.toBool())); break;
    default: f(static_cast<int64_t>(a.toLong()), static_cast<int64_t>(b.toLong())); break;
  }
}

// The element bits of a scalar in dtype t (for raw-word kernels).
uint64_t scalar_bits(const c10::Scalar& v, at::ScalarType t) {
  at::Tensor s = at::scalar_tensor(v, at::TensorOptions().dtype(t));
  uint64_t bits = 0;
  std::memcpy(&bits, s.const_data_ptr(), s.itemsize());
  return bits;
}

at::Tensor on_device_of(const at::Tensor& t, const at::Tensor& like) {
  return t.device() == like.device() ? t : t.to(like.device());
}

// gather/scatter's index on like's device as int64, the type their kernels read (torch also
// takes int32 indices there).
at::Tensor long_index_on_device_of(const at::Tensor& index, const at::Tensor& like) {
  return on_device_of(index, like).to(at::kLong);
}

// Writes `result` into `out` unless it already is out.
void finish_out(const at::Tensor& out, const at::Tensor& result) {
  if (!out.is_same(result)) out.copy_(result);
}

// A tensor to compute into: out itself when contiguous (and not aliasing `inputs`), else a
// fresh contiguous tensor to copy back with finish_out.
at::Tensor dense_target(const at::Tensor& out, std::initializer_list<at::Tensor> inputs = {}) {
  bool ok = out.is_contiguous();
  for (const auto& t : inputs)
    if (t.defined() && t.numel() > 0 && out.numel() > 0 && t.storage().is_alias_of(out.storage())) ok = false;
  return ok ? out : at::empty(out.sizes(), out.options());
}

// Exclusive scan, in place, of a contiguous int64 tensor.
void scan_inplace(Device& d, const at::Tensor& data) {
  const int64_t n = data.numel();
  if (n == 0) return;
  constexpr int64_t kBlock = 1024;  // SCAN_BLOCK
  const int64_t nb = (n + kBlock - 1) / kBlock;
  at::Tensor sums = at::empty({nb}, data.options());
  launch(d, get_kernel(d, "index", kPlainOpts, "scan_blocks"), Range(nb * kWG), Range(kWG), buf(data), n, buf(sums));
  if (nb > 1) {
    scan_inplace(d, sums);
    launch(d, get_kernel(d, "index", kPlainOpts, "scan_add"), grid_stride(n), Range(kWG), buf(data), n, buf(sums));
  }
}

// Positions (exclusive scan of x != 0) for contiguous x, with one extra trailing element
// holding the total.
at::Tensor select_positions(Device& d, const at::Tensor& x) {
  const int64_t n = x.numel();
  at::Tensor pos = at::empty({n + 1}, x.options().dtype(at::kLong));
  launch(d, get_kernel(d, "index", move_opts(x), "nonzero_flags"), grid_stride(n + 1), Range(kWG), buf(pos), buf(x), n,
         static_cast<cl_ulong>(nonzero_mask(x.scalar_type())));
  scan_inplace(d, pos);
  return pos;
}

// ---- accumulating scatter core --------------------------------------------------------------
enum Reduce : int { kSum = 0, kProd = 1, kMean = 2, kAmax = 3, kAmin = 4, kEmbedFreq = 5 };

Reduce parse_reduce(c10::string_view r, bool two) {
  if (two) {
    if (r == "sum") return kSum;
    if (r == "prod") return kProd;
    if (r == "mean") return kMean;
    if (r == "amax") return kAmax;
    if (r == "amin") return kAmin;
    TORCH_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", r);
  }
  if (r == "add") return kSum;
  if (r == "multiply") return kProd;
  TORCH_CHECK(false, "reduce argument must be either add or multiply.");
}

// True when a sum into dst may use atomics: like CUDA, unless torch's deterministic
// algorithms are on, for the dtypes with an atomic add on this device.
bool atomic_sum_ok(Device& d, at::ScalarType t) {
  if (at::globalContext().deterministicAlgorithms()) return false;
  const bool int64_atomics = d.info.has_extension("cl_khr_int64_base_atomics");
  return t == at::kFloat || t == at::kInt || ((t == at::kDouble || t == at::kLong) && int64_atomics);
}

// dst[key + w*dst_wstride] (op)= src[srcoff + w*src_wstride] over units sorted by key (or, for
// a sum onto dst with atomic_ok, straight from the unsorted keys with atomic adds).
void segment_reduce(Device& d, const at::Tensor& dst, const at::Tensor& src, const at::Tensor& keys,
                    const at::Tensor& srcoff, int64_t w_size, int64_t dst_wstride, int64_t src_wstride, Reduce op,
                    bool include_self, const c10::Scalar& alpha = 1, const c10::Scalar& value = 0,
                    bool atomic_ok = false) {
  const int64_t m = keys.numel();
  if (m == 0 || w_size == 0) return;
  if (atomic_ok && op == kSum && include_self && atomic_sum_ok(d, dst.scalar_type())) {
    Kernel& k = get_kernel(d, "index", typed_opts(dst.scalar_type()), "atomic_accumulate");
    const at::Tensor& s = src.defined() && src.numel() > 0 ? src : dst;
    with_acc(dst.scalar_type(), alpha, value, [&](auto a, auto v) {
      launch(d, k, Range(w_size, m), local_wu(w_size), buf(dst), buf(s), buf(keys), buf(srcoff), m, w_size, dst_wstride,
             src_wstride, a, v);
    });
    return;
  }
  auto sorted = at::sort(keys, /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor& skeys = std::get<0>(sorted);
  const at::Tensor& perm = std::get<1>(sorted);
  Kernel& k = get_kernel(d, "index", typed_opts(dst.scalar_type()), "segment_reduce");
  const at::Tensor& s = src.defined() && src.numel() > 0 ? src : dst;
  with_acc(dst.scalar_type(), alpha, value, [&](auto a, auto v) {
    launch(d, k, Range(w_size, m), local_wu(w_size), buf(dst), buf(s), buf(skeys), buf(perm), buf(srcoff), m, w_size,
           dst_wstride, src_wstride, static_cast<cl_int>(op), static_cast<cl_int>(include_self), a, v);
  });
}

// ---- gather / scatter -----------------------------------------------------------------------
struct ScatterGeom {
  int64_t ndim, dim, dim_size;
  int64_t size[kMaxDims], idx_stride[kMaxDims], a_stride[kMaxDims], b_stride[kMaxDims];
};

// Geometry over index's shape; a: the tensor indexed along dim, b: the other (may be undefined).
ScatterGeom scatter_geom(const at::Tensor& index, int64_t dim, const at::Tensor& a, const at::Tensor& b) {
  ScatterGeom g{};
  const int64_t nd = std::max<int64_t>(index.dim(), 1);
  TORCH_CHECK_NOT_IMPLEMENTED(nd <= kMaxDims, "torch_ocl: gather/scatter supports at most ", kMaxDims, " dims");
  g.ndim = nd;
  g.dim = dim;
  g.dim_size = a.dim() == 0 ? 1 : a.size(dim);
  for (int64_t i = 0; i < nd; ++i) {
    const bool scalar = index.dim() == 0;
    g.size[i] = scalar ? 1 : index.size(i);
    g.idx_stride[i] = scalar ? 0 : index.stride(i);
    g.a_stride[i] = a.dim() == 0 ? 0 : a.stride(i);
    g.b_stride[i] = (!b.defined() || b.dim() == 0) ? 0 : b.stride(i);
  }
  if (a.dim() == 0) g.a_stride[0] = 1;  // the only valid index is 0
  return g;
}

// gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& gather_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index_in, bool sparse_grad,
                           at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::native::scatter_gather_dtype_check("gather", self, index_in, std::nullopt);
  at::native::gather_shape_check(self, dim, index_in);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "gather(): Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, index_in.sizes());
  const int64_t n = index_in.numel();
  if (n == 0) return out;
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "gather");
  at::Tensor index = long_index_on_device_of(index_in, self);
  ScatterGeom g = scatter_geom(index, dim, self, out);
  launch(d, get_kernel(d, "index", move_opts(self), "gather_fwd"), grid_stride(n), Range(kWG), buf(out), buf(self), buf(index),
         n, g, d.error_buf);
  return out;
}

// Shared body of the scatter family: out = self; then scatter src (or value) along dim.
void scatter_impl(const at::Tensor& self, int64_t dim, const at::Tensor& index_in, const at::Tensor& src,
                  const c10::optional<c10::Scalar>& value, c10::optional<Reduce> reduce, bool include_self,
                  const at::Tensor& out, const char* name) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::native::scatter_gather_dtype_check(name, self, index_in, src.defined() ? c10::optional<at::Tensor>(src)
                                                                              : c10::optional<at::Tensor>());
  at::native::scatter_shape_check(self, dim, index_in, src.defined() ? c10::optional<at::Tensor>(src)
                                                                     : c10::optional<at::Tensor>());
  at::native::resize_output(const_cast<at::Tensor&>(out), self.sizes());
  if (!out.is_same(self)) {
    at::assert_no_overlap(out, self);
    out.copy_(self);
  }
  const int64_t n = index_in.numel();
  if (n == 0 || self.numel() == 0) return;
  at::assert_no_internal_overlap(out);
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), name);
  at::Tensor index = long_index_on_device_of(index_in, self);
  at::Tensor s = src;
  if (s.defined()) {
    s = on_device_of(s, self);
    if (s.storage().is_alias_of(out.storage())) s = s.clone();
  }
  if (reduce && out.is_complex()) {
    // Only scatter_add reaches here with complex values (its registration takes them).
    TORCH_INTERNAL_ASSERT(*reduce == kSum && s.defined() && !value.has_value(), name, ": complex reduction");
    add_by_parts(out, s, [&](at::Tensor& part, const at::Tensor& src_part) {
      scatter_impl(part, dim, index, src_part, std::nullopt, reduce, include_self, part, name);
    });
    return;
  }
  ScatterGeom g = scatter_geom(index, dim, out, s);
  if (!reduce) {
    uint64_t bits = value ? scalar_bits(*value, out.scalar_type()) : 0;
    const at::Tensor& sb = s.defined() ? s : out;
    launch(d, get_kernel(d, "index", move_opts(out), "scatter_fwd"), grid_stride(n), Range(kWG), buf(out), buf(sb),
           buf(index), n, g, static_cast<cl_int>(value.has_value()), static_cast<cl_ulong>(bits), d.error_buf);
    return;
  }
  at::Tensor keys = at::empty({n}, index.options().dtype(at::kLong));
  at::Tensor srcoff = at::empty({n}, keys.options());
  launch(d, get_kernel(d, "index", kPlainOpts, "scatter_keys"), grid_stride(n), Range(kWG), buf(keys), buf(srcoff), buf(index), n, g,
         static_cast<cl_int>(value.has_value()), d.error_buf);
  segment_reduce(d, out, s, keys, srcoff, 1, 0, 0, *reduce, include_self, 1, value.value_or(0), /*atomic_ok=*/true);
}

// scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_src_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                at::Tensor& out) {
  scatter_impl(self, dim, index, src, std::nullopt, std::nullopt, true, out, "scatter");
  return out;
}
// scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_value_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                  const c10::Scalar& value, at::Tensor& out) {
  scatter_impl(self, dim, index, at::Tensor(), value, std::nullopt, true, out, "scatter");
  return out;
}
// scatter.reduce_out(Tensor self, int dim, Tensor index, Tensor src, *, str reduce, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_reduce_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce, at::Tensor& out) {
  scatter_impl(self, dim, index, src, std::nullopt, parse_reduce(reduce, false), true, out, "scatter");
  return out;
}
// scatter.value_reduce_out(Tensor self, int dim, Tensor index, Scalar value, *, str reduce, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_value_reduce_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                         const c10::Scalar& value, c10::string_view reduce, at::Tensor& out) {
  scatter_impl(self, dim, index, at::Tensor(), value, parse_reduce(reduce, false), true, out, "scatter");
  return out;
}
// scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_add_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                at::Tensor& out) {
  scatter_impl(self, dim, index, src, std::nullopt, kSum, true, out, "scatter_add");
  return out;
}
// scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True, Tensor(a!) out) -> Tensor(a!)
at::Tensor& scatter_reduce_two_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                       const at::Tensor& src, c10::string_view reduce, bool include_self,
                                       at::Tensor& out) {
  scatter_impl(self, dim, index, src, std::nullopt, parse_reduce(reduce, true), include_self, out, "scatter_reduce");
  return out;
}

// ---- index_select / index_add ------------------------------------------------------------
void check_index_vector(const at::Tensor& index, const char* name) {
  TORCH_CHECK_INDEX(index.dim() <= 1, name, "(): Index is supposed to be a vector");
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, name,
                    "(): Expected dtype int32/int64 for index");
}

// index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& index_select_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index_in, at::Tensor& out) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_index_vector(index_in, "index_select");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "index_select(): self and result must have the same scalar type");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  const int64_t nidx = index_in.numel();
  TORCH_CHECK(self.dim() > 0 || nidx == 1, "index_select(): Index to scalar can have only 1 value, got ", nidx,
              " value(s)");
  if (self.dim() > 0) shape[dim] = nidx;
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  at::assert_no_overlap(out, self);
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "index_select");
  at::Tensor src = self.contiguous();
  at::Tensor index = on_device_of(index_in, self).contiguous();
  const int64_t nsrc = self.dim() == 0 ? 1 : self.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= self.size(i);
  for (int64_t i = dim + 1; i < self.dim(); ++i) inner *= self.size(i);
  at::Tensor res = dense_target(out, {self, index});
  launch(d, get_kernel(d, "index", move_opts(self), "index_select_fwd"), grid_stride(out.numel()), Range(kWG),
         buf(res), buf(src), buf(index), idx32(index), outer, nsrc, nidx, inner, d.error_buf);
  finish_out(out, res);
  return out;
}

// index_select(Tensor self, int dim, Tensor index) -> Tensor
at::Tensor index_select_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return index_select_out_ocl(self, dim, index, out);
}

// out = self with source's slices along dim reduced into the slices `index` names: index_add
// (op kSum, scaled by alpha) and index_reduce (prod, mean, amax, amin, with or without self's
// values). One key per (outer, index entry) and segment_reduce, as scatter does.
at::Tensor& index_accumulate(const at::Tensor& self, int64_t dim, const at::Tensor& index_in,
                             const at::Tensor& source_in, Reduce op, bool include_self, const c10::Scalar& alpha,
                             at::Tensor& out, const char* name) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_index_vector(index_in, name);
  const int64_t nidx = index_in.numel();
  TORCH_CHECK(self.dim() == 0 || source_in.dim() == 0 || self.dim() == source_in.dim(),
              name, "_(): self and source must have same number of dimensions");
  TORCH_CHECK(source_in.dim() == 0 ? nidx == 1 : source_in.size(dim) == nidx,
              name, "_(): Number of indices (", nidx, ") should be equal to source.size(dim) (",
              source_in.dim() == 0 ? 1 : source_in.size(dim), ")");
  for (int64_t i = 0; i < self.dim() && source_in.dim() > 0; ++i)
    if (i != dim)
      TORCH_CHECK(self.size(i) == source_in.size(i), name, "_(): self and source must have the same size at dim ", i);
  TORCH_CHECK(self.scalar_type() == source_in.scalar_type(),
              name, "_(): self (", self.scalar_type(), ") and source (", source_in.scalar_type(),
              ") must have the same scalar type");
  at::native::resize_output(out, self.sizes());
  if (!out.is_same(self)) {
    at::assert_no_overlap(out, self);
    out.copy_(self);
  }
  if (nidx == 0 || out.numel() == 0) return out;
  Device& d = ocl_device(self);
  check_dtype_supported(d, self.scalar_type(), name);
  at::Tensor source = on_device_of(source_in, self).contiguous();
  if (source.storage().is_alias_of(out.storage())) source = source.clone();
  at::Tensor index = on_device_of(index_in, self).contiguous();
  at::Tensor res = out.is_contiguous() ? out : out.contiguous();
  const int64_t nout = self.dim() == 0 ? 1 : self.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= self.size(i);
  for (int64_t i = dim + 1; i < self.dim(); ++i) inner *= self.size(i);
  const int64_t units = outer * nidx;
  at::Tensor keys = at::empty({units}, index.options().dtype(at::kLong));
  at::Tensor srcoff = at::empty({units}, keys.options());
  launch(d, get_kernel(d, "index", kPlainOpts, "index_add_keys"), grid_stride(units), Range(kWG), buf(keys),
         buf(srcoff), buf(index), idx32(index), outer, nout, nidx, inner, d.error_buf);
  segment_reduce(d, res, source, keys, srcoff, inner, 1, 1, op, include_self, alpha, 0, /*atomic_ok=*/true);
  finish_out(out, res);
  return out;
}

// index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& index_add_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              const c10::Scalar& alpha, at::Tensor& out) {
  return index_accumulate(self, dim, index, source, kSum, true, alpha, out, "index_add");
}

// index_reduce.out(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True, Tensor(a!) out) -> Tensor(a!)
at::Tensor& index_reduce_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                                 const at::Tensor& source, c10::string_view reduce, bool include_self,
                                 at::Tensor& out) {
  TORCH_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  return index_accumulate(self, dim, index, source, parse_reduce(reduce, true), include_self, 1, out, "index_reduce");
}

// ---- advanced indexing --------------------------------------------------------------------
struct IndexGeom {
  int64_t npre, nidx, nfold, mnumel, w_size, wstride;
  int64_t pre_size[kMaxDims], pre_stride[kMaxDims];
  int64_t idx_size[kMaxDims], idx_stride[kMaxDims];
  int64_t fold_size[kMaxDims], fold_stride[kMaxDims];
};

struct IndexPlan {
  IndexGeom g{};
  at::Tensor idx;                 // [nidx, mnumel] int64 on the device
  std::vector<int64_t> shape;     // result shape
  int64_t units = 0;              // pre * m * fold positions
};

// Resolves `indices` against self: boolean masks become their nonzero() coordinates, index
// tensors broadcast together, and non-adjacent indexed dims move to the front (as NumPy).
IndexPlan plan_index(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices_in) {
  std::vector<at::Tensor> idx;  // per self dim (undefined: sliced)
  for (const c10::optional<at::Tensor>& o : indices_in) {
    if (!o.has_value() || !o->defined()) {
      idx.emplace_back();
      continue;
    }
    at::Tensor t = *o;
    if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
      const int64_t start = static_cast<int64_t>(idx.size());
      TORCH_CHECK_INDEX(start + t.dim() <= self.dim(), "too many indices for tensor of dimension ", self.dim());
      for (int64_t j = 0; j < t.dim(); ++j)
        TORCH_CHECK_INDEX(t.size(j) == self.size(start + j), "The shape of the mask ", t.sizes(), " at index ", j,
                          " does not match the shape of the indexed tensor ", self.sizes(), " at index ", start + j);
      at::Tensor nz = at::nonzero(on_device_of(t, self));
      for (int64_t j = 0; j < t.dim(); ++j) idx.push_back(nz.select(1, j));
      if (t.dim() == 0) {
        // A 0-dim mask adds a dim of size 0 or 1 (NumPy); handle as unsqueeze + index.
        TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: indexing with a 0-dim boolean mask");
      }
    } else {
      TORCH_CHECK_INDEX(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
                        "tensors used as indices must be long, int, byte or bool tensors");
      idx.push_back(on_device_of(t, self));
    }
  }
  TORCH_CHECK_INDEX(static_cast<int64_t>(idx.size()) <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", idx.size(), ")");
  while (static_cast<int64_t>(idx.size()) < self.dim()) idx.emplace_back();
  // Broadcast shape of the index tensors.
  std::vector<int64_t> pos;
  c10::DimVector bshape;
  bool first = true;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (!idx[i].defined()) continue;
    pos.push_back(static_cast<int64_t>(i));
    if (first) {
      bshape = c10::DimVector(idx[i].sizes().begin(), idx[i].sizes().end());
      first = false;
    } else {
      bshape = at::infer_size_dimvector(bshape, idx[i].sizes());
    }
  }
  TORCH_CHECK(!pos.empty(), "torch_ocl: index with no index tensors");
  bool adjacent = pos.back() - pos.front() + 1 == static_cast<int64_t>(pos.size());
  // Dim order: adjacent -> unchanged; otherwise indexed dims first.
  std::vector<int64_t> order;
  if (adjacent) {
    for (int64_t i = 0; i < self.dim(); ++i) order.push_back(i);
  } else {
    for (int64_t p : pos) order.push_back(p);
    for (int64_t i = 0; i < self.dim(); ++i)
      if (!idx[i].defined()) order.push_back(i);
  }
  const int64_t first_idx = adjacent ? pos.front() : 0;
  const int64_t nidx = static_cast<int64_t>(pos.size());
  IndexPlan p;
  IndexGeom& g = p.g;
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() <= kMaxDims, "torch_ocl: indexing supports at most ", kMaxDims, " dims");
  g.npre = first_idx;
  for (int64_t i = 0; i < first_idx; ++i) {
    g.pre_size[i] = self.size(order[i]);
    g.pre_stride[i] = self.stride(order[i]);
    p.shape.push_back(g.pre_size[i]);
  }
  g.nidx = nidx;
  std::vector<at::Tensor> expanded;
  for (int64_t k = 0; k < nidx; ++k) {
    const int64_t dd = order[first_idx + k];
    g.idx_size[k] = self.size(dd);
    g.idx_stride[k] = self.stride(dd);
    expanded.push_back(idx[dd].to(at::kLong).expand(bshape).reshape({-1}));
  }
  int64_t mnumel = 1;
  for (int64_t s : bshape) {
    mnumel *= s;
    p.shape.push_back(s);
  }
  g.mnumel = mnumel;
  // Post dims: collapse where possible; the last becomes the w slice, the rest fold.
  std::vector<std::pair<int64_t, int64_t>> post;  // (size, stride)
  for (int64_t i = first_idx + nidx; i < self.dim(); ++i) {
    const int64_t dd = order[i];
    p.shape.push_back(self.size(dd));
    if (!post.empty() && post.back().second == self.stride(dd) * self.size(dd)) {
      post.back() = {post.back().first * self.size(dd), self.stride(dd)};
    } else {
      post.emplace_back(self.size(dd), self.stride(dd));
    }
  }
  g.w_size = 1;
  g.wstride = 0;
  if (!post.empty()) {
    g.w_size = post.back().first;
    g.wstride = post.back().second;
    post.pop_back();
  }
  g.nfold = static_cast<int64_t>(post.size());
  int64_t units = mnumel;
  for (int64_t i = 0; i < g.npre; ++i) units *= g.pre_size[i];
  for (size_t i = 0; i < post.size(); ++i) {
    g.fold_size[i] = post[i].first;
    g.fold_stride[i] = post[i].second;
    units *= post[i].first;
  }
  p.units = units;
  if (mnumel > 0) p.idx = nidx == 1 ? expanded[0].contiguous().view({1, mnumel}) : at::stack(expanded).contiguous();
  return p;
}

// index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& index_tensor_out_ocl(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices,
                                 at::Tensor& out) {
  IndexPlan p = plan_index(self, indices);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "index_out: self (", self.scalar_type(), ") and result (",
              out.scalar_type(), ") must have the same scalar type");
  at::native::resize_output(out, p.shape);
  if (out.numel() == 0 || self.numel() == 0) return out;
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "index");
  at::Tensor res = dense_target(out, {self});
  launch(d, get_kernel(d, "index", move_opts(self), "index_fwd"), Range(p.g.w_size, p.units),
         local_wu(p.g.w_size), buf(res), buf(self), buf(p.idx), p.units, p.g,
         d.error_buf);
  finish_out(out, res);
  return out;
}

// _index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, bool unsafe=False) -> Tensor(a!)
at::Tensor& index_put_impl_ocl(at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices,
                               const at::Tensor& values_in, bool accumulate, bool unsafe) {
  at::assert_no_internal_overlap(self);
  TORCH_CHECK(values_in.scalar_type() == self.scalar_type(), "Index put requires the source and destination dtypes match, got ",
              self.scalar_type(), " for the destination and ", values_in.scalar_type(), " for the source.");
  IndexPlan p = plan_index(self, indices);
  TORCH_CHECK(at::is_expandable_to(values_in.sizes(), p.shape), "shape mismatch: value tensor of shape ",
              values_in.sizes(), " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(p.shape));
  if (p.units == 0 || p.g.w_size == 0 || self.numel() == 0) return self;
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "index_put_");
  if (accumulate && self.is_complex()) {
    add_by_parts(self, on_device_of(values_in, self), [&](at::Tensor& part, const at::Tensor& values_part) {
      at::_index_put_impl_(part, indices, values_part, /*accumulate=*/true, unsafe);
    });
    return self;
  }
  at::Tensor values = on_device_of(values_in, self).expand(p.shape).contiguous();
  if (values.storage().is_alias_of(self.storage())) values = values.clone();
  if (!accumulate) {
    launch(d, get_kernel(d, "index", move_opts(self), "index_put_fwd"), Range(p.g.w_size, p.units),
           local_wu(p.g.w_size), buf(self), buf(values), buf(p.idx), p.units, p.g,
           d.error_buf);
    return self;
  }
  at::Tensor keys = at::empty({p.units}, self.options().dtype(at::kLong));
  at::Tensor srcoff = at::empty({p.units}, keys.options());
  launch(d, get_kernel(d, "index", kPlainOpts, "index_put_keys"), grid_stride(p.units), Range(kWG), buf(keys), buf(srcoff),
         buf(p.idx), p.units, p.g, d.error_buf);
  segment_reduce(d, self, values, keys, srcoff, p.g.w_size, p.g.wstride, 1, kSum, true, 1, 0, /*atomic_ok=*/true);
  return self;
}

// ---- index_copy / index_fill / take / put_: advanced indexing along one dim --------------

// The index_put_ indices that select `index` along dim (every earlier dim taken whole).
c10::List<c10::optional<at::Tensor>> along_dim(int64_t dim, const at::Tensor& index) {
  c10::List<c10::optional<at::Tensor>> indices;
  for (int64_t i = 0; i < dim; ++i) indices.push_back(c10::nullopt);
  indices.push_back(index);
  return indices;
}

// index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& index_copy_out_ocl(const at::Tensor& self, int64_t dim, const at::Tensor& index_in,
                               const at::Tensor& source, at::Tensor& out) {
  OutMeta<at::meta::structured_index_copy> m(out);
  dim = m.meta(self, dim, index_in, source).dim;  // the CPU's checks; resizes out
  if (!out.is_same(self)) {
    at::assert_no_overlap(out, self);
    out.copy_(self);
  }
  if (index_in.numel() == 0) return out;
  at::Tensor target = out.dim() == 0 ? out.view({1}) : out;
  // index_copy does not wrap negative indices (index_put_ would): send them past the end,
  // where the kernel reports the CPU's IndexError.
  const int64_t size = target.size(dim);
  at::Tensor index = on_device_of(index_in, out).reshape({-1});
  index = at::where(index.lt(0), size, index);
  at::index_put_(target, along_dim(dim, index), source, /*accumulate=*/false);
  return out;
}

void index_fill_impl(at::Tensor& self, int64_t dim, const at::Tensor& index_in, const at::Tensor& value) {
  TORCH_CHECK_INDEX(index_in.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index_in.dim() <= 1, "Index has to be a vector/scalar");
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(at::has_internal_overlap(self) != at::MemOverlap::Yes,
              "torch_ocl: index_fill_ on an expanded tensor (deprecated on the CPU) is not supported; clone() it first");
  if (index_in.numel() == 0 || self.numel() == 0) return;  // the CPU checks no index then either
  at::Tensor target = self.dim() == 0 ? self.view({1}) : self;
  at::Tensor v = on_device_of(value, self).to(self.scalar_type());
  at::index_put_(target, along_dim(dim, on_device_of(index_in, self).reshape({-1})), v, /*accumulate=*/false);
}
// index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)
at::Tensor& index_fill_scalar_ocl(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value) {
  index_fill_impl(self, dim, index, at::scalar_tensor(value, self.options().device(at::kCPU)));
  return self;
}
// index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)
at::Tensor& index_fill_tensor_ocl(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  index_fill_impl(self, dim, index, value);
  return self;
}

void check_take_put_index(const at::Tensor& self, const at::Tensor& index, const char* op, const char* empty_msg) {
  TORCH_CHECK(index.scalar_type() == at::kLong, op, "(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0), op, "(): ", empty_msg);
}
// take.out(Tensor self, Tensor index, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& take_out_ocl(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  check_take_put_index(self, index, "take", "tried to take from an empty tensor");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and out.dtype = ", out.scalar_type());
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, index);
  at::assert_no_overlap(out, self);
  at::native::resize_output(out, index.sizes());
  if (index.numel() == 0) return out;
  // Flat positions into self in its logical (row-major) order; negatives wrap, as on the CPU.
  at::Tensor flat_index = on_device_of(index, self).reshape({-1});
  finish_out(out, at::index(self.reshape({-1}), {c10::optional<at::Tensor>(flat_index)}).view(index.sizes()));
  return out;
}
// take(Tensor self, Tensor index) -> Tensor
at::Tensor take_ocl(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return take_out_ocl(self, index, out);
}
// put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)
at::Tensor& put_ocl(at::Tensor& self, const at::Tensor& index, const at::Tensor& source, bool accumulate) {
  check_take_put_index(self, index, "put_", "Tried to put elements into an empty tensor");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK_INDEX(source.numel() == index.numel(),
                    "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
                    source.numel(), ", index.numel() = ", index.numel());
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);
  at::assert_no_overlap(self, source);
  if (index.numel() == 0) return self;
  // Flat positions in self's logical order: a non-contiguous self goes through a contiguous copy.
  at::Tensor dense = self.is_contiguous() ? self : self.contiguous();
  at::Tensor flat = dense.view({-1});
  at::index_put_(flat, {c10::optional<at::Tensor>(on_device_of(index, self).reshape({-1}))},
                 on_device_of(source, self).reshape({-1}), accumulate);
  finish_out(self, dense);
  return self;
}

// ---- nonzero / masked ops ---------------------------------------------------------------
struct ShapeArg {
  int64_t ndim;
  int64_t size[kMaxDims];
};

ShapeArg shape_arg(const at::Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(t.dim() <= kMaxDims, "torch_ocl: nonzero supports at most ", kMaxDims, " dims");
  ShapeArg s{};
  s.ndim = t.dim();
  for (int64_t i = 0; i < t.dim(); ++i) s.size[i] = t.size(i);
  return s;
}

// Writes the coordinates of self's nonzero elements into out ([count or size, ndim]).
void nonzero_into(Device& d, const at::Tensor& x, const at::Tensor& pos, const at::Tensor& out, int64_t limit) {
  const int64_t n = x.numel();
  if (n == 0 || out.numel() == 0) return;
  launch(d, get_kernel(d, "index", kPlainOpts, "nonzero_write"), grid_stride(n), Range(kWG), buf(out), buf(pos), n, limit,
         shape_arg(x));
}

// nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& nonzero_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "nonzero");
  at::Tensor x = (self.is_complex() ? self.ne(0) : self).contiguous();  // complex: either part nonzero
  const int64_t n = x.numel();
  int64_t count = 0;
  at::Tensor pos;
  if (n > 0) {
    pos = select_positions(d, x);
    count = pos[n].item<int64_t>();  // the one host read: the output size depends on the data
  }
  at::native::resize_output(out, {count, self.dim()});
  if (count == 0) return out;
  at::Tensor res = dense_target(out, {self});
  nonzero_into(d, x, pos, res, count);
  finish_out(out, res);
  return out;
}

// nonzero(Tensor self) -> Tensor
at::Tensor nonzero_ocl(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return nonzero_out_ocl(self, out);
}

// nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor
at::Tensor nonzero_static_ocl(const at::Tensor& self, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  at::Tensor out = at::full({size, self.dim()}, fill_value, self.options().dtype(at::kLong));
  if (self.numel() == 0 || out.numel() == 0) return out;
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "nonzero_static");
  at::Tensor x = (self.is_complex() ? self.ne(0) : self).contiguous();  // complex: either part nonzero
  nonzero_into(d, x, select_positions(d, x), out, size);
  return out;
}

// masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& masked_select_out_ocl(const at::Tensor& self, const at::Tensor& mask_in, at::Tensor& out) {
  TORCH_CHECK(mask_in.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "masked_select(): self and result must have the same scalar type");
  at::Tensor mask = on_device_of(mask_in, self);
  auto [s, m] = at::expand_outplace(self, mask);
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "masked_select");
  at::Tensor sc = s->contiguous(), mc = m->contiguous();
  const int64_t n = sc.numel();
  int64_t count = 0;
  at::Tensor pos;
  if (n > 0) {
    pos = select_positions(d, mc);
    count = pos[n].item<int64_t>();  // the one host read
  }
  at::native::resize_output(out, {count});
  if (count == 0) return out;
  at::Tensor res = dense_target(out, {self, mask});
  launch(d, get_kernel(d, "index", move_opts(self), "compact_write"), grid_stride(n), Range(kWG), buf(res), buf(sc), buf(pos),
         n);
  finish_out(out, res);
  return out;
}

// masked_select(Tensor self, Tensor mask) -> Tensor
at::Tensor masked_select_ocl(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = at::empty({0}, self.options());
  return masked_select_out_ocl(self, mask, out);
}

// masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)
at::Tensor& masked_scatter__ocl(at::Tensor& self, const at::Tensor& mask_in, const at::Tensor& source_in) {
  TORCH_CHECK(mask_in.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask_in.scalar_type());
  TORCH_CHECK(self.scalar_type() == source_in.scalar_type(),
              "masked_scatter_: expected self and source to have same dtypes but got", self.scalar_type(), " and ",
              source_in.scalar_type());
  at::assert_no_internal_overlap(self);
  if (self.numel() == 0) return self;
  Device& d = ocl_device(self);
  check_storable(d, self.scalar_type(), "masked_scatter_");
  at::Tensor mask = on_device_of(mask_in, self).expand(self.sizes()).contiguous();
  at::Tensor source = on_device_of(source_in, self).contiguous();
  if (source.numel() > 0 && source.storage().is_alias_of(self.storage())) source = source.clone();
  at::Tensor res = self.is_contiguous() ? self : self.contiguous();
  at::Tensor pos = select_positions(d, mask);
  const int64_t n = res.numel();
  const at::Tensor& sb = source.numel() > 0 ? source : res;
  launch(d, get_kernel(d, "index", move_opts(self), "expand_write"), grid_stride(n), Range(kWG), buf(res), buf(sb), buf(pos), n,
         source.numel(), d.error_buf);
  finish_out(self, res);
  return self;
}

// ---- embedding backward ----------------------------------------------------------------
// embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor
at::Tensor embedding_dense_backward_ocl(const at::Tensor& grad_output, const at::Tensor& indices_in,
                                        int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  TORCH_CHECK(indices_in.scalar_type() == at::kLong || indices_in.scalar_type() == at::kInt,
              "embedding_backward: Expected indices to have type Long or Int");
  const int64_t dim = grad_output.size(-1);
  at::Tensor grad_weight = at::zeros({num_weights, dim}, grad_output.options());
  at::Tensor indices = on_device_of(indices_in, grad_output).reshape({-1}).contiguous();
  const int64_t n = indices.numel();
  if (n == 0 || dim == 0 || num_weights == 0) return grad_weight;
  Device& d = ocl_device(grad_output);
  check_dtype_supported(d, grad_output.scalar_type(), "embedding_dense_backward");
  at::Tensor grad = grad_output.reshape({n, dim}).contiguous();
  at::Tensor keys = at::empty({n}, indices.options().dtype(at::kLong));
  at::Tensor srcoff = at::empty({n}, keys.options());
  launch(d, get_kernel(d, "index", kPlainOpts, "embedding_keys"), grid_stride(n), Range(kWG), buf(keys),
         buf(srcoff), buf(indices), idx32(indices), n, num_weights, padding_idx, dim, d.error_buf);
  segment_reduce(d, grad_weight, grad, keys, srcoff, dim, 1, 1, scale_grad_by_freq ? kEmbedFreq : kSum, false);
  return grad_weight;
}

// ---- embedding_bag ---------------------------------------------------------------------------
// Modes as ATen numbers them.
constexpr int64_t kBagSum = 0, kBagMean = 1, kBagMax = 2;

// The argument checks of ATen's embedding_bag, with its messages, except those that need the
// offsets' values on the host (offsets[0] == 0, offsets[-1] <= n): the kernel raises the
// device error flag for those instead (a RuntimeError at the next synchronization, as an
// out-of-range index is), so no launch waits for the host.
void check_embedding_bag(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, int64_t mode,
                         const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset) {
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  const at::TensorArg indices_arg(indices, "indices", 1), offsets_arg(offsets, "offsets", 1),
      weight_arg(weight, "weight", 1);
  at::checkScalarTypes("embedding_bag", indices_arg, {at::kLong, at::kInt});
  at::checkScalarTypes("embedding_bag", offsets_arg, {at::kLong, at::kInt});
  at::checkScalarTypes("embedding_bag", weight_arg, {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(indices.dim() == 1, "embedding_bag: indices must be 1-D when offsets are given, got ", indices.dim(),
              "-D (F.embedding_bag flattens 2-D input)");
  TORCH_CHECK(offsets.dim() == 1, "embedding_bag: offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  TORCH_CHECK(mode == kBagSum || mode == kBagMean || mode == kBagMax, "`mode` must be sum, mean, or max.");
  if (per_sample_weights.has_value() && per_sample_weights->defined()) {
    TORCH_CHECK(mode == kBagSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    at::checkSameType("embedding_bag", weight_arg, at::TensorArg(*per_sample_weights, "per_sample_weights", 1));
    TORCH_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->numel() == indices.numel(),
                "embedding_bag: per_sample_weights must be 1-D with one weight per index (", indices.numel(),
                "), got shape ", per_sample_weights->sizes());
  }
  if (include_last_offset)
    TORCH_CHECK(offsets.size(0) >= 1, "include_last_offset: number of offset should be at least 1");
}

// _embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)
// (also _embedding_bag_forward_only). Returns (output [bags, dim], offset2bag [n],
// bag_size [bags], max_indices: [bags, dim] for max, else bag_size's copy); the auxiliary
// outputs are what this backend's backward reads (ATen's CPU kernels leave some empty on
// their fast paths), in the indices' dtype.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embedding_bag_ocl(
    const at::Tensor& weight, const at::Tensor& indices_in, const at::Tensor& offsets_in, bool /*scale_grad_by_freq*/,
    int64_t mode, bool /*sparse*/, const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  check_embedding_bag(weight, indices_in, offsets_in, mode, per_sample_weights, include_last_offset);
  const at::Tensor indices = on_device_of(indices_in, weight).contiguous();
  const at::Tensor offsets = on_device_of(offsets_in, weight).contiguous();
  const bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  const at::Tensor psw = has_psw ? on_device_of(*per_sample_weights, weight).contiguous() : at::Tensor();
  const int64_t n = indices.numel(), noffsets = offsets.numel(), dim = weight.size(1);
  const int64_t nbags = include_last_offset ? noffsets - 1 : noffsets;
  const at::TensorOptions iopt = indices.options();
  at::Tensor out = at::empty({nbags, dim}, weight.options());
  at::Tensor offset2bag = at::full({n}, -1, iopt);
  at::Tensor bag_size = at::zeros({nbags}, iopt);
  at::Tensor max_indices = mode == kBagMax ? at::full({nbags, dim}, -1, iopt) : at::Tensor();
  if (nbags > 0 && dim > 0) {
    Device& d = ocl_device(weight);
    check_dtype_supported(d, weight.scalar_type(), "embedding_bag");
    const Buf none{nullptr, 0};
    const Range local = local_wu(dim);
    launch(d, get_kernel(d, "index", typed_opts(weight.scalar_type()), "embedding_bag_fwd"),
           Range(round_up(size_t(dim), local.sz[0]), round_up(size_t(nbags), local.sz[1])), local, buf(out),
           buf(weight), weight.stride(0), weight.stride(1), buf(indices), buf(offsets), idx32(indices), idx32(offsets),
           has_psw ? buf(psw) : none, cl_int(has_psw), buf(offset2bag), buf(bag_size),
           mode == kBagMax ? buf(max_indices) : none, n, nbags, noffsets, weight.size(0), dim, cl_int(mode),
           padding_idx, d.error_buf);
  } else {
    out.zero_();
  }
  if (mode != kBagMax) max_indices = bag_size.clone();
  return {out, offset2bag, bag_size, max_indices};
}

// The gradient row of every entry for sum/mean bags: its bag's gradient row, times its
// per_sample_weight (sum) or / bag_size[bag] (mean); zero for an entry in no bag ([n, dim]).
at::Tensor embedding_bag_entry_rows(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& offset2bag,
                                    const at::Tensor& bag_size, int64_t mode,
                                    const std::optional<at::Tensor>& per_sample_weights) {
  const int64_t dim = grad.size(-1), n = indices.numel();
  at::Tensor rows = at::empty({n, dim}, grad.options());
  if (n > 0 && dim > 0) {
    Device& d = ocl_device(grad);
    const bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
    const at::Tensor psw = has_psw ? on_device_of(*per_sample_weights, grad).contiguous() : at::Tensor();
    const at::Tensor o2b = on_device_of(offset2bag, grad).to(indices.scalar_type()).contiguous();
    const at::Tensor bs = on_device_of(bag_size, grad).to(indices.scalar_type()).contiguous();
    launch(d, get_kernel(d, "index", typed_opts(grad.scalar_type()), "embedding_bag_bwd_rows"), grid_stride(n * dim),
           Range(kWG), buf(rows), buf(grad), buf(o2b), buf(bs), idx32(indices), has_psw ? buf(psw) : Buf{nullptr, 0},
           cl_int(has_psw), n, dim, cl_int(mode));
  }
  return rows;
}

// _embedding_bag_dense_backward(Tensor grad, Tensor indices, Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor
// Through embedding_dense_backward's deterministic sort-and-sum: sum/mean as one gradient row
// per entry (scale_grad_by_freq divides by each index's count, as documented: ATen's CPU
// kernel divides by another index's count, pytorch/pytorch#190063); max as one element per
// (bag, column) keyed by the row its maximum came from (empty bags on an extra, dropped row).
at::Tensor embedding_bag_dense_backward_ocl(const at::Tensor& grad_in, const at::Tensor& indices_in,
                                            const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                            const at::Tensor& maximum_indices, int64_t num_weights,
                                            bool scale_grad_by_freq, int64_t mode,
                                            const std::optional<at::Tensor>& per_sample_weights, int64_t padding_idx) {
  TORCH_CHECK(mode == kBagSum || mode == kBagMean || mode == kBagMax, "`mode` must be sum, mean, or max.");
  const at::Tensor grad = grad_in.contiguous();
  const int64_t dim = grad.size(-1);
  const at::Tensor indices = on_device_of(indices_in, grad).contiguous();
  if (mode == kBagMax) {
    const int64_t nbags = grad.numel() / std::max<int64_t>(dim, 1), slots = num_weights * dim;
    const at::Tensor mi = on_device_of(maximum_indices, grad).to(at::kLong).reshape({nbags, dim});
    const at::Tensor keys =
        at::where(mi < 0, at::scalar_tensor(slots, mi.options()), mi * dim + at::arange(dim, mi.options()));
    return at::embedding_dense_backward(grad.reshape({nbags * dim, 1}), keys.reshape({-1}), slots + 1, slots, false)
        .narrow(0, 0, slots)
        .view({num_weights, dim});
  }
  const at::Tensor rows = embedding_bag_entry_rows(grad, indices, offset2bag, bag_size, mode, per_sample_weights);
  return at::embedding_dense_backward(rows, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// _embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor
// sparse=True: the entries' gradient rows as a sparse COO gradient, through ATen's composite
// embedding_backward (which drops padding_idx entries and, as on the CPU, refuses
// scale_grad_by_freq); uncoalesced, as the CPU's.
at::Tensor embedding_bag_backward_ocl(const at::Tensor& grad, const at::Tensor& indices, const at::Tensor& /*offsets*/,
                                      const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                      const at::Tensor& maximum_indices, int64_t num_weights, bool scale_grad_by_freq,
                                      int64_t mode, bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                                      int64_t padding_idx) {
  if (!sparse)
    return at::_embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                             scale_grad_by_freq, mode, per_sample_weights, padding_idx);
  TORCH_CHECK(mode == kBagSum || mode == kBagMean, "embedding_bag: sparse gradients are supported for mode='sum' "
              "and 'mean' only (max mode does not support sparse weights)");
  const at::Tensor idx = on_device_of(indices, grad).contiguous();
  const at::Tensor rows =
      embedding_bag_entry_rows(grad.contiguous(), idx, offset2bag, bag_size, mode, per_sample_weights);
  return at::embedding_backward(rows, idx, num_weights, padding_idx, scale_grad_by_freq, /*sparse=*/true);
}

// _embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor
at::Tensor embedding_bag_per_sample_weights_backward_ocl(const at::Tensor& grad_in, const at::Tensor& weight,
                                                         const at::Tensor& indices_in, const at::Tensor& /*offsets*/,
                                                         const at::Tensor& offset2bag, int64_t mode,
                                                         int64_t padding_idx) {
  TORCH_CHECK(mode == kBagSum, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  const at::Tensor grad = grad_in.contiguous();
  const at::Tensor indices = on_device_of(indices_in, grad).contiguous();
  const int64_t n = indices.numel(), dim = weight.size(1);
  at::Tensor out = at::empty({n}, grad.options());
  if (n == 0) return out;
  Device& d = ocl_device(grad);
  const at::Tensor o2b = on_device_of(offset2bag, grad).to(indices.scalar_type()).contiguous();
  launch(d, get_kernel(d, "index", typed_opts(grad.scalar_type()), "embedding_bag_psw_bwd"), grid_stride(n),
         Range(kWG), buf(out), buf(grad), buf(weight), weight.stride(0), weight.stride(1), buf(indices), buf(o2b),
         idx32(indices), n, dim, weight.size(0), padding_idx);
  return out;
}

// ---- embedding_renorm_ ---------------------------------------------------------------------
constexpr size_t kRenormWG = 64;  // RENORM_WG of index.cl

// The largest float not above v (so that, for a float x, x > result exactly when x > v).
float float_at_most(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

// embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)
// Each row referenced by indices (once, however often it appears) whose norm of order
// norm_type exceeds max_norm is scaled by max_norm / (norm + 1e-7), as on the CPU. An index
// out of range raises IndexError at the next synchronization (the CPU raises at once).
at::Tensor& embedding_renorm__ocl(at::Tensor& self, const at::Tensor& indices_in, double max_norm, double norm_type) {
  const at::TensorArg self_arg(self, "self", 1), indices_arg(indices_in, "indices", 2);
  at::checkDim("embedding_renorm_", self_arg, 2);
  at::checkScalarTypes("embedding_renorm_", indices_arg, {at::kLong, at::kInt});
  const at::Tensor indices = on_device_of(indices_in, self).reshape({-1}).contiguous();
  const int64_t n = indices.numel(), num_weights = self.size(0), dim = self.size(1);
  if (n == 0) return self;
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", self.scalar_type());
  Device& d = ocl_device(self);
  check_dtype_supported(d, self.scalar_type(), "embedding_renorm_");
  at::Tensor flags = at::zeros({num_weights}, self.options().dtype(at::kInt));
  launch(d, get_kernel(d, "index", kPlainOpts, "embedding_renorm_mark"), grid_stride(n), Range(kWG),
         buf(flags), buf(indices), idx32(indices), n, num_weights, d.error_buf);
  if (dim == 0 || num_weights == 0) return self;
  const cl_int pkind = norm_type == 0 ? 0 : norm_type == 1 ? 1 : norm_type == 2 ? 2
                       : std::isinf(norm_type) ? (norm_type > 0 ? 3 : 4) : 5;
  Kernel& k = get_kernel(d, "index", typed_opts(self.scalar_type()) + " -DRENORM_WG=" + std::to_string(kRenormWG),
                         "embedding_renorm_rows");
  const Range global(static_cast<size_t>(n) * kRenormWG), local(kRenormWG);
  if (self.scalar_type() == at::kDouble)
    launch(d, k, global, local, buf(self), self.stride(0), self.stride(1), dim, buf(flags), buf(indices),
           idx32(indices), num_weights, max_norm, max_norm, norm_type, pkind);
  else
    launch(d, k, global, local, buf(self), self.stride(0), self.stride(1), dim, buf(flags), buf(indices),
           idx32(indices), num_weights, static_cast<float>(max_norm), float_at_most(max_norm),
           static_cast<float>(norm_type), pkind);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select_ocl);  // data movement: complex too
  m.impl("index_select.out", index_select_out_ocl);  // data movement: complex too
  m.impl("gather.out", gather_out_ocl);  // data movement: complex too
  m.impl("scatter.src_out", scatter_src_out_ocl);  // data movement: complex too
  OCL_IMPL(m, "scatter.value_out", scatter_value_out_ocl);
  OCL_IMPL(m, "scatter.reduce_out", scatter_reduce_out_ocl);
  OCL_IMPL(m, "scatter.value_reduce_out", scatter_value_reduce_out_ocl);
  m.impl("scatter_add.out", scatter_add_out_ocl);  // complex too (by parts)
  OCL_IMPL(m, "scatter_reduce.two_out", scatter_reduce_two_out_ocl);
  OCL_IMPL(m, "index_add.out", index_add_out_ocl);
  OCL_IMPL(m, "index_reduce.out", index_reduce_out_ocl);
  m.impl("index.Tensor_out", index_tensor_out_ocl);  // data movement: complex too
  m.impl("_index_put_impl_", index_put_impl_ocl);  // complex too (accumulate: by parts)
  m.impl("index_copy.out", index_copy_out_ocl);  // complex too (index_put_)
  m.impl("index_fill_.int_Scalar", index_fill_scalar_ocl);  // complex too (index_put_)
  m.impl("index_fill_.int_Tensor", index_fill_tensor_ocl);  // complex too (index_put_)
  m.impl("take", take_ocl);  // complex too (index)
  m.impl("take.out", take_out_ocl);  // complex too (index)
  m.impl("put_", put_ocl);  // complex too (index_put_)
  m.impl("nonzero", nonzero_ocl);  // complex too (!= 0)
  m.impl("nonzero.out", nonzero_out_ocl);  // complex too (!= 0)
  m.impl("nonzero_static", nonzero_static_ocl);  // complex too (!= 0)
  m.impl("masked_select", masked_select_ocl);  // data movement: complex too
  m.impl("masked_select.out", masked_select_out_ocl);  // data movement: complex too
  m.impl("masked_scatter_", masked_scatter__ocl);  // data movement: complex too
  OCL_IMPL(m, "embedding_dense_backward", embedding_dense_backward_ocl);
  OCL_IMPL(m, "_embedding_bag", embedding_bag_ocl);
  OCL_IMPL(m, "_embedding_bag_forward_only", embedding_bag_ocl);
  OCL_IMPL(m, "_embedding_bag_backward", embedding_bag_backward_ocl);
  OCL_IMPL(m, "_embedding_bag_dense_backward", embedding_bag_dense_backward_ocl);
  OCL_IMPL(m, "_embedding_bag_per_sample_weights_backward", embedding_bag_per_sample_weights_backward_ocl);
  OCL_IMPL(m, "embedding_renorm_", embedding_renorm__ocl);
}

}  // namespace torch_ocl
