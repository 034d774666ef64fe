// Sparse COO tensors on ocl (SparsePrivateUse1): creation, metadata, conversion, coalesce,
// arithmetic, zero-preserving unary math, shape ops, sums, sparse @ dense, sparse @ sparse and bmm,
// composed from dense device ops (no kernels of its own) and ATen's device-agnostic sparse
// functions, all registered under a device guard. Only coalesce, sparse * sparse, sparse @ sparse,
// index_select and dense -> sparse read a count back to the host, as on CUDA.
#include <ATen/SparseTensorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesce_native.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_broadcast_to_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_sparse_mask_projection_native.h>
#include <ATen/ops/_sparse_sparse_matmul_native.h>
#include <ATen/ops/_sparse_sum_backward_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/any_native.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/arange_native.h>
#include <ATen/ops/argmax_native.h>
#include <ATen/ops/asin_native.h>
#include <ATen/ops/asinh_native.h>
#include <ATen/ops/atanh_native.h>
#include <ATen/ops/atan_native.h>
#include <ATen/ops/bmm_native.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cat_native.h>
#include <ATen/ops/ceil_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/conj_physical_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/cumsum_native.h>
#include <ATen/ops/deg2rad_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/erf_native.h>
#include <ATen/ops/erfinv_native.h>
#include <ATen/ops/expm1_native.h>
#include <ATen/ops/floor_divide_native.h>
#include <ATen/ops/floor_native.h>
#include <ATen/ops/frac_native.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/index_select_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/isinf_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/isneginf_native.h>
#include <ATen/ops/isposinf_native.h>
#include <ATen/ops/log1p_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/mv_native.h>
#include <ATen/ops/nan_to_num_native.h>
#include <ATen/ops/narrow_copy_native.h>
#include <ATen/ops/native_norm_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/norm_native.h>
#include <ATen/ops/permute_native.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/rad2deg_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/round_native.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/sign_native.h>
#include <ATen/ops/signbit_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sinh_native.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/stack_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/tan_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/trunc_native.h>
#include <ATen/ops/unique_consecutive.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/zeros_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>
#include "sparse.h"
#include <array>

namespace torch_ocl {
namespace {
using at::Tensor;
using sparse::check_same_device;
using at::sparse::alias_into_sparse;
using at::sparse::get_sparse_impl;

// The row of each entry of a sparse tensor in its dense counterpart viewed as
// [prod(sizes[:sparse_dim]), *dense sizes]: the entries' indices flattened row-major (int64 [nnz]).
Tensor flat_keys(const Tensor& indices, at::IntArrayRef sizes) {
  const int64_t sparse_dim = indices.size(0);
  if (sparse_dim == 1) return indices.select(0, 0);
  Tensor keys = at::zeros({indices.size(1)}, indices.options().dtype(at::kLong));
  for (int64_t d = 0; d < sparse_dim; ++d) keys.mul_(sizes[d]).add_(indices.select(0, d));
  return keys;
}

// The shape [prod(sizes[:sparse_dim]), *sizes[sparse_dim:]] that flat_keys index into.
std::vector<int64_t> flat_shape(at::IntArrayRef sizes, int64_t sparse_dim) {
  std::vector<int64_t> shape{1};
  for (int64_t d = 0; d < sparse_dim; ++d) shape[0] *= sizes[d];
  shape.insert(shape.end(), sizes.begin() + sparse_dim, sizes.end());
  return shape;
}

// Makes `out` the sparse tensor (indices, values) of the given sizes, in out's dtype.
Tensor& set_sparse(Tensor& out, int64_t sparse_dim, at::IntArrayRef sizes, const Tensor& indices,
                   const Tensor& values, bool coalesced) {
  get_sparse_impl(out)->raw_resize_(sparse_dim, values.dim() - 1, sizes);
  alias_into_sparse(out, indices, values.to(out.scalar_type()));
  return out._coalesced_(coalesced);
}

// Values of coalesced sparse t at the flat keys `keys` (zeros where t has no entry), and a
// bool mask of the keys t has. A binary search of t's sorted keys: no host read.
std::pair<Tensor, Tensor> values_at(const Tensor& t, const Tensor& keys) {
  TORCH_INTERNAL_ASSERT(t.is_coalesced() && t._nnz() > 0);
  const Tensor t_keys = flat_keys(t._indices(), t.sizes()).contiguous();
  const Tensor pos = at::searchsorted(t_keys, keys).clamp_max_(t._nnz() - 1);
  const Tensor found = t_keys.index_select(0, pos).eq(keys);
  const Tensor vals = t._values().index_select(0, pos);
  std::vector<int64_t> mask_shape(vals.dim(), 1);
  mask_shape[0] = found.numel();
  return {at::where(found.view(mask_shape), vals, at::zeros({}, vals.options())), found};
}

// Dense t's values at the entries of sparse s (same sizes): [nnz, *dense sizes].
Tensor dense_values_at(const Tensor& t, const Tensor& s) {
  return t.reshape(flat_shape(t.sizes(), s.sparse_dim())).index_select(0, flat_keys(s._indices(), s.sizes()));
}

// ---- coalesce ---------------------------------------------------------------------------------
// _coalesce(Tensor self) -> Tensor
// Sorts the flat keys (stable), finds the runs of equal keys (unique_consecutive: the one host
// read, of the number of distinct entries), and sums each run's values in input order with
// index_add_ (deterministic, no atomics).
Tensor _coalesce_ocl(const Tensor& self) {
  if (self._nnz() < 2) return self.clone()._coalesced_(true);
  const Tensor indices = self._indices(), values = self._values();
  const auto [sorted, perm] = at::sort(flat_keys(indices, self.sizes()), /*stable=*/true, 0, false);
  const auto [uniq, run_of, counts] = at::unique_consecutive(sorted, /*return_inverse=*/true, /*return_counts=*/true);
  const int64_t n = uniq.size(0);
  const Tensor firsts = perm.index_select(0, counts.cumsum(0).sub_(counts));
  const Tensor sorted_values = values.index_select(0, perm);
  Tensor new_values = sorted_values;
  if (n < self._nnz()) {
    std::vector<int64_t> shape = values.sizes().vec();
    shape[0] = n;
    new_values = at::zeros(shape, values.options()).index_add_(0, run_of, sorted_values);
  }
  return at::_sparse_coo_tensor_with_dims_and_tensors(self.sparse_dim(), self.dense_dim(), self.sizes(),
                                                      indices.index_select(1, firsts), new_values, self.options(),
                                                      /*is_coalesced=*/true);
}

// ---- add --------------------------------------------------------------------------------------
// dense + alpha * sparse into dense out: index_add_ of the (uncoalesced) values into the flat
// rows, so no coalesce and no host read; duplicates are summed in input order.
Tensor& add_dense_sparse(const Tensor& dense, const Tensor& sparse, const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(sparse.is_sparse() && !out.is_sparse(), "add: expected a dense 'out' for dense + sparse, got 'other' ",
              sparse.layout(), " and 'out' ", out.layout());
  check_same_device("add", {dense, sparse, out});
  TORCH_CHECK(dense.sizes().equals(sparse.sizes()),
              "add: expected 'self' and 'other' to have same size, but self has size ", dense.sizes(),
              " while other has size ", sparse.sizes(),
              " (FYI: dense-sparse addition does not currently support broadcasting)");
  const auto common = at::promoteTypes(dense.scalar_type(), sparse.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in add operation");
  if (!out.sizes().equals(dense.sizes())) out.resize_(dense.sizes());
  // Accumulate into out itself when it can be viewed flat; else into a fresh buffer.
  const bool direct = out.scalar_type() == common && out.is_contiguous();
  Tensor work = direct ? out : at::empty(dense.sizes(), dense.options().dtype(common));
  if (!work.is_same(dense)) work.copy_(dense);
  if (sparse._nnz() > 0 && work.numel() > 0)
    work.view(flat_shape(work.sizes(), sparse.sparse_dim()))
        .index_add_(0, flat_keys(sparse._indices(), sparse.sizes()), sparse._values().to(common), alpha);
  if (!direct) out.copy_(work);
  return out;
}

// add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
// sparse + sparse concatenates the entries (as CUDA does: no host read), so the result is
// uncoalesced; it is coalesced only when its nnz outgrows its numel, so repeated accumulation
// (momentum buffers, .grad) stays bounded, as on the CPU.
Tensor& add_out_ocl(const Tensor& self, const Tensor& other, const c10::Scalar& alpha, Tensor& out) {
  if (!self.is_sparse()) return add_dense_sparse(self, other, alpha, out);
  TORCH_CHECK(other.is_sparse(), "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  TORCH_CHECK(out.is_sparse(), "add: expected a sparse 'out' for sparse + sparse, got ", out.layout());
  check_same_device("add", {self, other, out});
  TORCH_CHECK(self.sizes().equals(other.sizes()), "add: expected sizes of 'self' and 'other' to match, but ",
              self.sizes(), " != ", other.sizes());
  const auto common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in add operation");
  if (other._nnz() == 0) return at::native::copy_sparse_(out, self);
  const Tensor scaled = at::mul(other._values().to(common), alpha);
  if (self._nnz() == 0)
    return set_sparse(out, other.sparse_dim(), other.sizes(), other._indices(), scaled, other.is_coalesced());
  TORCH_CHECK(at::sparse::is_same_density(self, other),
              "add: expected 'self' and 'other' to have same density, but 'self' has ", self.sparse_dim(),
              " sparse dimensions while 'other' has ", other.sparse_dim(), " sparse dimensions");
  const Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  const Tensor values = at::cat({self._values().to(common), scaled}, 0);
  set_sparse(out, self.sparse_dim(), self.sizes(), indices, values, values.size(0) < 2);
  if (out._nnz() > out.numel()) {
    const Tensor c = out.coalesce();
    alias_into_sparse(out, c._indices(), c._values());
  }
  return out;
}

// ---- mul --------------------------------------------------------------------------------------
// Sparse s times dense d (a 0-dim scalar, or d of s's sizes): s's entries with their values
// scaled, in out.
Tensor& mul_sparse_dense(const Tensor& s, const Tensor& d, Tensor& out) {
  Tensor values;
  if (d.dim() == 0) {
    values = at::mul(s._values(), d);
  } else {
    check_same_device("mul", {s, d});
    TORCH_CHECK_NOT_IMPLEMENTED(d.sizes().equals(s.sizes()), "torch_ocl: mul of a sparse tensor of size ", s.sizes(),
                                " and a dense tensor of size ", d.sizes(),
                                " (broadcasting) is not supported on ocl; only equal sizes or a 0-dim dense tensor");
    values = at::mul(s._values(), dense_values_at(d, s));
  }
  return set_sparse(out, s.sparse_dim(), s.sizes(), s._indices(), values, s.is_coalesced());
}

// mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
// sparse * sparse keeps the entries both have: a binary search of other's keys for each of
// self's, then nonzero() of the matches (a host read of the result's nnz).
Tensor& mul_out_ocl(const Tensor& self, const Tensor& other, Tensor& out) {
  TORCH_CHECK(out.is_sparse(), "mul: expected a sparse 'out', got ", out.layout());
  if (!other.is_sparse()) return mul_sparse_dense(self, other, out);
  if (!self.is_sparse()) return mul_sparse_dense(other, self, out);
  check_same_device("mul", {self, other, out});
  TORCH_CHECK(self.sizes().equals(other.sizes()), "mul: expected 'self' and 'other' to have same sizes when both are "
              "sparse, but ", self.sizes(), " != ", other.sizes());
  TORCH_CHECK(at::sparse::is_same_density(self, other), "mul: expected 'self' and 'other' to have the same sparse and "
              "dense dims, got ", self.sparse_dim(), "/", self.dense_dim(), " and ", other.sparse_dim(), "/",
              other.dense_dim());
  const auto common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in mul operation");
  if (self._nnz() == 0 || other._nnz() == 0) {
    at::native::resize_as_sparse_(out, self);
    return out.zero_();
  }
  const Tensor a = self.coalesce(), b = other.coalesce();
  const auto [b_values, found] = values_at(b, flat_keys(a._indices(), a.sizes()));
  const Tensor keep = at::nonzero(found).squeeze(1);
  const Tensor values = at::mul(a._values().to(common), b_values.to(common)).index_select(0, keep);
  return set_sparse(out, a.sparse_dim(), a.sizes(), a._indices().index_select(1, keep), values, true);
}

// ---- sparse_mask ------------------------------------------------------------------------------
// sparse_mask(Tensor self, Tensor mask) -> Tensor
// self's values at mask's entries (zero where a sparse self has none), on mask's indices.
Tensor sparse_mask_ocl(const Tensor& self, const Tensor& mask) {
  check_same_device("sparse_mask", {self, mask});
  TORCH_CHECK(mask.sizes().equals(self.sizes()), "sparse_mask(): operands have incompatible sizes; self has size ",
              self.sizes(), " but mask has size ", mask.sizes());
  if (self.is_same(mask)) return self;
  if (mask.numel() == 0 || mask._nnz() == 0) return mask.clone().to(self.device(), self.scalar_type());
  Tensor values;
  if (!self.is_sparse()) {
    values = dense_values_at(self, mask);
  } else {
    TORCH_CHECK(self.sparse_dim() == mask.sparse_dim(), "sparse_mask(): the number of sparse dimensions in `self` ",
                "should match that of the `mask`. Got `self.sparse_dim() == ", self.sparse_dim(),
                "` != `mask.sparse_dim() == ", mask.sparse_dim(), "`.");
    if (self._nnz() == 0) {
      Tensor res = mask.to(self.device(), self.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      res._values().zero_();
      return res;
    }
    values = values_at(self.coalesce(), flat_keys(mask._indices(), mask.sizes())).first;
  }
  Tensor out = at::empty({0}, self.options().layout(at::kSparse));
  return set_sparse(out, mask.sparse_dim(), mask.sizes(), mask._indices(), values, mask.is_coalesced());
}

// _sparse_mask_projection(Tensor self, Tensor mask, bool accumulate_matches=False) -> Tensor
// self on its own entries, kept where mask has an entry too and zeroed elsewhere; with
// accumulate_matches, scaled by how many entries mask has there. A binary search of mask's sorted
// keys (no coalesce, no host read). The backward of sparse @ sparse uses it.
Tensor _sparse_mask_projection_ocl(const Tensor& self, const Tensor& mask, bool accumulate_matches) {
  check_same_device("_sparse_mask_projection", {self, mask});
  TORCH_CHECK(mask.sizes().equals(self.sizes()), "_sparse_mask_projection(): operands have incompatible sizes; self "
              "has size ", self.sizes(), " but mask has size ", mask.sizes());
  Tensor values;
  if (self.numel() == 0 || self._nnz() == 0 || mask._nnz() == 0) {
    values = at::zeros_like(self._values());
  } else {
    TORCH_CHECK(self.sparse_dim() == mask.sparse_dim(), "_sparse_mask_projection(): the number of sparse dimensions "
                "of self and mask differ: ", self.sparse_dim(), " and ", mask.sparse_dim());
    const Tensor mask_keys = std::get<0>(at::sort(flat_keys(mask._indices(), mask.sizes()), false, 0, false));
    const Tensor keys = flat_keys(self._indices(), self.sizes()).contiguous();
    Tensor matches = at::searchsorted(mask_keys, keys, false, /*right=*/true).sub_(at::searchsorted(mask_keys, keys));
    if (!accumulate_matches) matches = matches.clamp_max_(1);
    std::vector<int64_t> shape(self._values().dim(), 1);
    shape[0] = matches.numel();
    values = self._values().mul(matches.view(shape).to(self.scalar_type()));
  }
  Tensor out = at::empty({0}, self.options());
  return set_sparse(out, self.sparse_dim(), self.sizes(), self._indices().clone(), values, self.is_coalesced());
}

// ---- addmm ------------------------------------------------------------------------------------
// out = beta * t + alpha * (sparse @ dense) for t of exactly [rows, cols]: each entry's row of
// dense, scaled by its value, index_add_-ed into its output row.
Tensor& addmm_into(Tensor& out, const Tensor& t, const Tensor& sparse, const Tensor& dense, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  TORCH_CHECK_NOT_IMPLEMENTED(sparse.is_sparse() && !dense.is_sparse() && !t.is_sparse() && !out.is_sparse(),
                              "torch_ocl: addmm on ocl takes a sparse COO mat1 with dense self, mat2 and out");
  check_same_device("addmm", {t, sparse, dense, out});
  TORCH_CHECK(sparse.sparse_dim() == 2, "addmm: matrices expected, got ", sparse.sparse_dim(), "D tensor");
  TORCH_CHECK(sparse.dense_dim() == 0, "addmm: scalar values expected, got ", sparse.dense_dim(), "D values");
  TORCH_CHECK(dense.dim() == 2, "addmm: matrices expected, got ", dense.dim(), "D tensor");
  const int64_t rows = sparse.size(0), inner = sparse.size(1), cols = dense.size(1);
  TORCH_CHECK(dense.size(0) == inner, "addmm: Argument #3 (dense): Expected dim 0 size ", inner, ", got ",
              dense.size(0));
  TORCH_CHECK(t.size(0) == rows, "addmm: Argument #1 (t): Expected dim 0 size ", rows, ", got ", t.size(0));
  TORCH_CHECK(t.size(1) == cols, "addmm: Argument #1 (t): Expected dim 1 size ", cols, ", got ", t.size(1));
  TORCH_CHECK(sparse.scalar_type() == dense.scalar_type() && t.scalar_type() == dense.scalar_type() &&
                  out.scalar_type() == dense.scalar_type(),
              "addmm: expected self, mat1, mat2 and out to have the same dtype, but got ", t.scalar_type(), ", ",
              sparse.scalar_type(), ", ", dense.scalar_type(), " and ", out.scalar_type());
  // beta == 0 ignores t (NaN included), as on the CPU, which multiplies t by beta when the sparse
  // matrix has no entries.
  Tensor work = beta.equal(0) && sparse._nnz() > 0 ? at::zeros({rows, cols}, dense.options()) : at::mul(t, beta);
  if (sparse._nnz() > 0 && cols > 0) {
    const Tensor idx = sparse._indices();
    const Tensor terms = dense.index_select(0, idx.select(0, 1)).mul_(sparse._values().unsqueeze(1));
    work.index_add_(0, idx.select(0, 0), terms, alpha);
  }
  if (!out.sizes().equals(work.sizes())) out.resize_(work.sizes());
  return out.copy_(work);
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
Tensor& addmm_out_ocl(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                      const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm: matrices expected, got ", mat1.dim(), "D and ", mat2.dim(),
              "D tensors");
  const std::array<int64_t, 2> shape{mat1.size(0), mat2.size(1)};
  return addmm_into(out, self.expand(at::IntArrayRef(shape)), mat1, mat2, beta, alpha);
}

// addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
Tensor addmm_ocl(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                 const c10::Scalar& alpha) {
  Tensor out = at::empty({0}, self.options());
  return addmm_out_ocl(self, mat1, mat2, beta, alpha, out);
}

// addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)
// In place does not broadcast self, as on the CPU.
Tensor& addmm__ocl(Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                   const c10::Scalar& alpha) {
  TORCH_CHECK(self.dim() == 2, "addmm: matrices expected, got ", self.dim(), "D tensor");
  return addmm_into(self, self, mat1, mat2, beta, alpha);
}

// ---- dense -> sparse (dense-layout overloads, registered for PrivateUse1) ----------------------
// _to_sparse(Tensor self, *, Layout? layout=None, int[1]? blocksize=None, int? dense_dim=None) -> Tensor
// ATen's dense_to_sparse is nonzero, unique_dim and index: all device ops here; for CSR and CSC
// it goes through _to_sparse_csr/_to_sparse_csc (sparse_csr.cpp). The blocked layouts have no ocl
// kernels.
Tensor _to_sparse_ocl(const Tensor& self, std::optional<at::Layout> layout, at::OptionalIntArrayRef blocksize,
                      std::optional<int64_t> dense_dim) {
  const at::Layout to = layout.value_or(at::kSparse);
  TORCH_CHECK_NOT_IMPLEMENTED(to != at::kSparseBsr && to != at::kSparseBsc, "torch_ocl: to_sparse(layout=", to,
                              ") is not supported on ocl; only torch.sparse_coo, torch.sparse_csr and torch.sparse_csc");
  return at::native::dense_to_sparse(self, layout, blocksize, dense_dim);
}

// _to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor
Tensor _to_sparse_sparse_dim_ocl(const Tensor& self, int64_t sparse_dim) {
  return at::native::dense_to_sparse(self, sparse_dim);
}

// ---- shared: runs laid end to end ----------------------------------------------------------------
// For runs of lengths `counts` (int64 [n]) laid end to end over `total` slots: the run each slot
// belongs to and its position within that run (both int64 [total]). Empty runs own no slot.
std::pair<Tensor, Tensor> expand_runs(const Tensor& counts, int64_t total) {
  const Tensor ends = counts.cumsum(0);
  const Tensor slots = at::arange(total, counts.options());
  const Tensor owner = at::searchsorted(ends, slots, /*out_int32=*/false, /*right=*/true);
  return {owner, slots.sub((ends.sub(counts)).index_select(0, owner))};
}

// The row of each entry in the dense tensor viewed flat over the sparse dims `dims` only.
Tensor flat_keys_over(const Tensor& indices, at::IntArrayRef sizes, const std::vector<int64_t>& dims) {
  Tensor keys = at::zeros({indices.size(1)}, indices.options().dtype(at::kLong));
  for (int64_t d : dims) keys.mul_(sizes[d]).add_(indices.select(0, d));
  return keys;
}

// ---- index_select -----------------------------------------------------------------------------
// index_select(Tensor self, int dim, Tensor index) -> Tensor
// Along a sparse dim: every entry is repeated once per position of index that names its
// coordinate (a binary search of the sorted index), so the result's nnz is a host read, as on
// CUDA; the same read carries the bounds check. Along a dense dim: the values' index_select
// (after a bounds check read back, so a bad index raises the CPU's error here).
Tensor index_select_ocl(const Tensor& self, int64_t dim, const Tensor& index) {
  check_same_device("index_select", {self, index});
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() == 1 && index.scalar_type() == at::kLong && index.layout() == at::kStrided,
                    "index_select() argument index must be 1-D strided (non-sparse) long-tensor.");
  const int64_t size = self.size(dim), sparse_dim = self.sparse_dim(), n = index.size(0);
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[dim] = n;
  if (dim >= sparse_dim) {  // no wrapping of negative indices here, as on the CPU
    const int64_t vdim = dim - sparse_dim + 1;
    if (n > 0) {  // one host read for the bounds, so the error is the CPU's and is raised here
      const Tensor bad = index.lt(0).logical_or_(index.ge(size));
      const Tensor first_bad = index.index_select(0, bad.to(at::kInt).argmax().reshape({1}));
      const Tensor packed = at::cat({bad.any().to(at::kLong).reshape({1}), first_bad}).cpu();
      const int64_t* p = packed.const_data_ptr<int64_t>();
      TORCH_CHECK(p[0] == 0, "index ", p[1], " is out of bounds for dimension ", vdim, " with size ", size);
    }
    const Tensor values = self._values().index_select(vdim, index);
    Tensor out = at::empty({0}, self.options());
    return set_sparse(out, sparse_dim, sizes, self._indices().clone(), values, self.is_coalesced());
  }
  const Tensor wrapped = at::where(index.lt(0), index.add(size), index);
  const Tensor indices = self._indices(), values = self._values();
  Tensor counts, lo;
  int64_t total = 0;
  if (n > 0) {
    const Tensor bad = wrapped.lt(0).logical_or_(wrapped.ge(size));
    const auto [sorted, perm] = at::sort(wrapped, /*stable=*/true, 0, false);
    const Tensor key = indices.select(0, dim).contiguous();
    lo = at::searchsorted(sorted, key);
    counts = at::searchsorted(sorted, key, false, /*right=*/true).sub_(lo);
    const Tensor first_bad = index.index_select(0, bad.to(at::kInt).argmax().reshape({1}));
    const Tensor packed = at::cat({bad.any().to(at::kLong).reshape({1}), first_bad, counts.sum().reshape({1})}).cpu();
    const int64_t* p = packed.const_data_ptr<int64_t>();
    TORCH_CHECK_INDEX(p[0] == 0, "index_select(): index contains ", p[1], " that is out of range for tensor of size ",
                      self.sizes(), " at dimension ", dim);
    total = p[2];
    if (total > 0) {
      const auto [owner, pos] = expand_runs(counts, total);
      Tensor new_indices = indices.index_select(1, owner);
      new_indices.select(0, dim).copy_(perm.index_select(0, lo.index_select(0, owner).add_(pos)));
      Tensor out = at::empty({0}, self.options());
      return set_sparse(out, sparse_dim, sizes, new_indices, values.index_select(0, owner), total < 2);
    }
  }
  std::vector<int64_t> vshape = values.sizes().vec();
  vshape[0] = 0;
  Tensor out = at::empty({0}, self.options());
  return set_sparse(out, sparse_dim, sizes, at::empty({sparse_dim, 0}, indices.options()),
                    at::empty(vshape, values.options()), true);
}

// ---- the backward of torch.sparse.sum ----------------------------------------------------------
// _sparse_sum_backward(Tensor grad, Tensor self, int[] dim) -> Tensor
// As ATen's CPU kernel: the gradient has self's (coalesced) entries; each takes grad's value at
// its kept sparse coordinates (a binary search of grad's sorted keys, zero where grad has none),
// broadcast over the summed dense dims.
Tensor _sparse_sum_backward_ocl(const Tensor& grad_, const Tensor& input_, at::IntArrayRef dims_to_sum) {
  check_same_device("_sparse_sum_backward", {grad_, input_});
  const Tensor input = input_.coalesce();
  const int64_t input_dim = input.dim(), sparse_dim = input.sparse_dim();
  std::vector<bool> summed(input_dim, false);
  for (int64_t d : dims_to_sum) summed[at::maybe_wrap_dim(d, input_dim)] = true;
  std::vector<int64_t> kept_sparse, summed_dense;  // summed_dense: dims of the values (1 + dense dim)
  int64_t n_summed_sparse = 0;
  for (int64_t d = 0; d < input_dim; ++d) {
    if (summed[d]) {
      if (d < sparse_dim) ++n_summed_sparse;
      else summed_dense.push_back(d + 1 - sparse_dim);
    } else if (d < sparse_dim) {
      kept_sparse.push_back(d);
    }
  }
  const Tensor indices = input._indices(), values = input._values();
  const auto make = [&](const Tensor& grad_values, const at::TensorOptions& opts) {
    return at::_sparse_coo_tensor_with_dims_and_tensors(sparse_dim, input.dense_dim(), input.sizes(), indices.clone(),
                                                        grad_values, opts, /*is_coalesced=*/true);
  };
  if (n_summed_sparse == sparse_dim) {
    TORCH_CHECK(!grad_.is_sparse(), "_sparse_sum_backward_cpu: expected grad_ Tensor to be dense since all sparse dims "
                "are summed");
    Tensor g = grad_;
    for (int64_t d : summed_dense) g = g.unsqueeze(d - 1);  // grad has no nnz dim
    return make(g.expand(values.sizes()).contiguous(), input.options().dtype(grad_.dtype()));
  }
  TORCH_CHECK(grad_.is_sparse(), "_sparse_sum_backward_cpu: expected grad_ Tensor to be sparse, but got dense");
  const Tensor grad = grad_.coalesce();
  Tensor gv;  // grad's values at input's entries: [nnz, *grad dense sizes]
  if (n_summed_sparse == 0) {
    gv = grad._values();
  } else if (grad._nnz() == 0) {  // no entries at all, as on the CPU
    std::vector<int64_t> shape = values.sizes().vec();
    shape[0] = 0;
    return at::_sparse_coo_tensor_with_dims_and_tensors(sparse_dim, input.dense_dim(), input.sizes(),
                                                        at::empty({sparse_dim, 0}, indices.options()),
                                                        at::empty(shape, grad._values().options()), grad.options(),
                                                        /*is_coalesced=*/true);
  } else {
    gv = values_at(grad, flat_keys_over(indices, input.sizes(), kept_sparse)).first;
  }
  for (int64_t d : summed_dense) gv = gv.unsqueeze(d);
  return make(gv.expand(values.sizes()).contiguous(), grad.options());
}

// ---- sparse @ sparse ----------------------------------------------------------------------------
// _sparse_sparse_matmul(Tensor self, Tensor other) -> Tensor
// Every entry (i, k) of self meets the run of other's row k (other coalesced: its rows sorted);
// the products, laid end to end (their count is a host read, as on CUDA), are coalesced into
// the result (a second read), which keeps every (i, j) that some product reaches.
Tensor _sparse_sparse_matmul_ocl(const Tensor& mat1, const Tensor& mat2) {
  check_same_device("_sparse_sparse_matmul", {mat1, mat2});
  TORCH_CHECK(mat1.dim() == 2, "sparse_sparse_matmul: expected a 2-D self, got ", mat1.dim(), "-D");
  TORCH_CHECK(mat2.dim() == 2, "sparse_sparse_matmul: expected a 2-D other, got ", mat2.dim(), "-D");
  TORCH_CHECK(mat1.dense_dim() == 0, "sparse_sparse_matmul_cpu: scalar values expected, got ", mat1.dense_dim(),
              "D values");
  TORCH_CHECK(mat2.dense_dim() == 0, "sparse_sparse_matmul_cpu: scalar values expected, got ", mat2.dense_dim(),
              "D values");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(), "mat1 dtype ", mat1.scalar_type(), " does not match mat2 dtype ",
              mat2.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(mat1.scalar_type() == at::kFloat || mat1.scalar_type() == at::kDouble,
                              "\"sparse_matmul\" not implemented for '", c10::toString(mat1.scalar_type()), "'");
  const std::array<int64_t, 2> sizes{mat1.size(0), mat2.size(1)};
  Tensor out = at::empty({0}, mat1.options());
  const auto empty_result = [&] {
    return set_sparse(out, 2, sizes, at::empty({2, 0}, mat1._indices().options()),
                      at::empty({0}, mat1._values().options()), true);
  };
  if (mat1._nnz() == 0 || mat2._nnz() == 0) return empty_result();
  const Tensor a = mat1.coalesce(), b = mat2.coalesce();
  const Tensor b_rows = b._indices().select(0, 0).contiguous(), k = a._indices().select(0, 1).contiguous();
  const Tensor lo = at::searchsorted(b_rows, k);
  const Tensor counts = at::searchsorted(b_rows, k, false, /*right=*/true).sub_(lo);
  const int64_t total = counts.sum().item<int64_t>();
  if (total == 0) return empty_result();
  const auto [owner, pos] = expand_runs(counts, total);
  const Tensor from_b = lo.index_select(0, owner).add_(pos);
  const Tensor indices = at::stack({a._indices().select(0, 0).index_select(0, owner),
                                    b._indices().select(0, 1).index_select(0, from_b)});
  const Tensor values = a._values().index_select(0, owner).mul_(b._values().index_select(0, from_b));
  set_sparse(out, 2, sizes, indices, values, false);
  return out.coalesce();
}

// ---- bmm ----------------------------------------------------------------------------------------
// bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
// A 3-D sparse self (batch, rows, inner) times a dense batch: each entry's row of its batch's
// mat2 matrix, scaled by its value, index_add_-ed into its output row.
Tensor& bmm_out_ocl(const Tensor& self, const Tensor& mat2, Tensor& out) {
  TORCH_CHECK(!mat2.is_sparse(), "bmm_sparse: Tensor 'mat2' must be dense");
  check_same_device("bmm", {self, mat2, out});
  TORCH_CHECK(self.dense_dim() == 0, "bmm_sparse: Tensor 'self' must have 0 dense dims, but has ", self.dense_dim());
  TORCH_CHECK(self.sparse_dim() == 3, "bmm_sparse: Tensor 'self' must have 3 sparse dims, but has ",
              self.sparse_dim());
  TORCH_CHECK(mat2.dim() == 3, "bmm_sparse: Tensor 'mat2' must have 3 dims, but has ", mat2.dim());
  TORCH_CHECK(self.size(0) == mat2.size(0), "bmm_sparse: 'self.size(0)' and 'mat2.size(0)' must match");
  TORCH_CHECK(self.size(2) == mat2.size(1), "bmm_sparse: 'self.size(2)' and 'mat2.size(1)' must match");
  const auto dtype = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(dtype, /*includeBool=*/false) || dtype == at::kFloat ||
                                  dtype == at::kDouble,
                              "\"bmm_sparse_dense\" not implemented for '", c10::toString(dtype), "'");
  TORCH_CHECK(mat2.scalar_type() == dtype && out.scalar_type() == dtype, "expected scalar type ", dtype,
              " but found ", mat2.scalar_type() != dtype ? mat2.scalar_type() : out.scalar_type());
  const int64_t B = self.size(0), I = self.size(1), J = self.size(2), K = mat2.size(2);
  Tensor work = at::zeros({B, I, K}, mat2.options());
  if (self._nnz() > 0 && K > 0) {
    const Tensor idx = self._indices();
    const Tensor rows_in = idx.select(0, 0).mul(J).add_(idx.select(0, 2));
    const Tensor rows_out = idx.select(0, 0).mul(I).add_(idx.select(0, 1));
    const Tensor terms = mat2.reshape({B * J, K}).index_select(0, rows_in).mul_(self._values().unsqueeze(1));
    work.view({B * I, K}).index_add_(0, rows_out, terms);
  }
  if (!out.sizes().equals(work.sizes())) out.resize_(work.sizes());
  return out.copy_(work);
}

// bmm(Tensor self, Tensor mat2) -> Tensor
Tensor bmm_ocl(const Tensor& self, const Tensor& mat2) {
  Tensor out = at::empty({0}, mat2.options());
  return bmm_out_ocl(self, mat2, out);
}

// The overloads of ATen's functions that the schemas below take.
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using BinaryFn_ = Tensor& (*)(Tensor&, const Tensor&);
using BinaryOutFn = Tensor& (*)(const Tensor&, const Tensor&, Tensor&);
using ModeFn = Tensor (*)(const Tensor&, const Tensor&, std::optional<c10::string_view>);
using ModeFn_ = Tensor& (*)(Tensor&, const Tensor&, std::optional<c10::string_view>);
using ModeOutFn = Tensor& (*)(const Tensor&, const Tensor&, std::optional<c10::string_view>, Tensor&);
using ToSparseFn = Tensor (*)(const Tensor&, std::optional<at::Layout>, at::OptionalIntArrayRef,
                              std::optional<int64_t>);
using ToSparseDimFn = Tensor (*)(const Tensor&, int64_t);
using NormFn = Tensor (*)(const Tensor&, const c10::Scalar&);
using NormDimFn = Tensor (*)(const Tensor&, const std::optional<c10::Scalar>&, at::IntArrayRef, bool,
                             std::optional<at::ScalarType>);

}  // namespace

#define SPARSE_UNARY(m, op)                                    \
  SPARSE_IMPL(m, #op, at::native::op##_sparse);                \
  SPARSE_IMPL(m, #op "_", at::native::op##_sparse_);           \
  SPARSE_IMPL(m, #op ".out", at::native::op##_sparse_out)

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  // ATen's own, device-agnostic: metadata of the SparseTensorImpl, creation, clone and copy
  // (which copy indices and values with .to()), and wrappers that redispatch to an .out op.
  SPARSE_IMPL(m, "_sparse_coo_tensor_with_dims_and_tensors", at::native::new_with_dims_and_tensor_sparse_symint);
  SPARSE_IMPL(m, "_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
  SPARSE_IMPL(m, "empty.memory_format", at::native::empty_sparse_symint);
  SPARSE_IMPL(m, "empty_like", at::native::empty_like_sparse_coo);
  SPARSE_IMPL(m, "sparse_dim", at::native::sparse_dim_sparse);
  SPARSE_IMPL(m, "dense_dim", at::native::dense_dim_sparse);
  SPARSE_IMPL(m, "_dimI", at::native::sparse_dim_sparse);
  SPARSE_IMPL(m, "_dimV", at::native::dense_dim_sparse);
  SPARSE_IMPL(m, "_nnz", at::native::_nnz_sparse);
  SPARSE_IMPL(m, "_indices", at::native::_indices_sparse);
  SPARSE_IMPL(m, "_values", at::native::_values_sparse);
  SPARSE_IMPL(m, "indices", at::native::indices_sparse);
  SPARSE_IMPL(m, "values", at::native::values_sparse);
  SPARSE_IMPL(m, "is_coalesced", at::native::is_coalesced_sparse);
  SPARSE_IMPL(m, "_coalesced_", at::native::_coalesced_sparse_);
  SPARSE_IMPL(m, "sparse_resize_", at::native::sparse_resize_);
  SPARSE_IMPL(m, "sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
  SPARSE_IMPL(m, "resize_as_sparse_", at::native::resize_as_sparse_);
  SPARSE_IMPL(m, "clone", at::native::clone_sparse);
  SPARSE_IMPL(m, "copy_", at::native::copy_sparse_wrapper_);
  SPARSE_IMPL(m, "copy_sparse_to_sparse_", at::native::copy_sparse_);
  SPARSE_IMPL(m, "zero_", at::native::zero_sparse_);
  SPARSE_IMPL(m, "zeros.out", at::native::zeros_sparse_out);
  SPARSE_IMPL(m, "_to_dense", at::native::sparse_to_dense);  // zeros + add_(dense, sparse)
  SPARSE_IMPL_AS(m, "_to_sparse", ToSparseFn, at::native::sparse_coo_to_sparse);
  SPARSE_IMPL_AS(m, "_to_sparse.sparse_dim", ToSparseDimFn, at::native::sparse_coo_to_sparse);
  SPARSE_IMPL(m, "add.Tensor", at::native::add_sparse);
  SPARSE_IMPL(m, "add_.Tensor", at::native::add_sparse_);
  SPARSE_IMPL(m, "sub.Tensor", at::native::sub_sparse);
  SPARSE_IMPL(m, "sub_.Tensor", at::native::sub_sparse_);
  SPARSE_IMPL(m, "sub.out", at::native::sub_out_sparse);
  SPARSE_IMPL(m, "mul.Tensor", at::native::mul_sparse);
  SPARSE_IMPL(m, "mul_.Tensor", at::native::mul_sparse_);
  SPARSE_IMPL_AS(m, "div.Tensor", BinaryFn, at::native::div_sparse);
  SPARSE_IMPL_AS(m, "div_.Tensor", BinaryFn_, at::native::div_sparse_);
  SPARSE_IMPL_AS(m, "div.out", BinaryOutFn, at::native::div_out_sparse_zerodim);
  SPARSE_IMPL_AS(m, "div.Tensor_mode", ModeFn, at::native::div_sparse);
  SPARSE_IMPL_AS(m, "div_.Tensor_mode", ModeFn_, at::native::div_sparse_);
  SPARSE_IMPL_AS(m, "div.out_mode", ModeOutFn, at::native::div_out_sparse_zerodim);
  SPARSE_IMPL(m, "neg", at::native::neg_sparse);
  SPARSE_IMPL(m, "neg_", at::native::neg_sparse_);
  SPARSE_IMPL(m, "neg.out", at::native::neg_out_sparse);
  SPARSE_IMPL(m, "pow.Tensor_Scalar", at::native::pow_sparse_scalar);
  SPARSE_IMPL(m, "pow.Tensor_Scalar_out", at::native::pow_out_sparse_scalar);
  SPARSE_IMPL(m, "sum", at::native::sum_coo);
  SPARSE_IMPL(m, "sum.dim_IntList", at::native::sum_sparse_coo);
  SPARSE_IMPL(m, "mm", at::native::_sparse_mm);
  SPARSE_IMPL(m, "mm.out", at::native::_sparse_mm_out);
  // Zero-preserving unary math: ATen applies the dense op to the values of the coalesced input.
  SPARSE_UNARY(m, abs);
  SPARSE_UNARY(m, asin);
  SPARSE_UNARY(m, atan);
  SPARSE_UNARY(m, asinh);
  SPARSE_UNARY(m, atanh);
  SPARSE_UNARY(m, ceil);
  SPARSE_UNARY(m, deg2rad);
  SPARSE_UNARY(m, rad2deg);
  SPARSE_UNARY(m, erf);
  SPARSE_UNARY(m, erfinv);
  SPARSE_UNARY(m, expm1);
  SPARSE_UNARY(m, floor);
  SPARSE_UNARY(m, frac);
  SPARSE_UNARY(m, log1p);
  SPARSE_UNARY(m, round);
  SPARSE_UNARY(m, sign);
  SPARSE_UNARY(m, sgn);
  SPARSE_UNARY(m, sin);
  SPARSE_UNARY(m, sinh);
  SPARSE_UNARY(m, sqrt);
  SPARSE_UNARY(m, tan);
  SPARSE_UNARY(m, tanh);
  SPARSE_UNARY(m, trunc);
  SPARSE_IMPL(m, "relu", at::native::relu_sparse);
  SPARSE_IMPL(m, "relu_", at::native::relu_sparse_);
  SPARSE_IMPL(m, "threshold_backward", at::native::threshold_backward_sparse);
  SPARSE_IMPL(m, "threshold_backward.grad_input", at::native::threshold_backward_sparse_out);
  SPARSE_IMPL(m, "signbit", at::native::signbit_sparse);
  SPARSE_IMPL(m, "signbit.out", at::native::signbit_sparse_out);
  SPARSE_IMPL(m, "isneginf", at::native::isneginf_sparse);
  SPARSE_IMPL(m, "isneginf.out", at::native::isneginf_sparse_out);
  SPARSE_IMPL(m, "isposinf", at::native::isposinf_sparse);
  SPARSE_IMPL(m, "isposinf.out", at::native::isposinf_sparse_out);
  SPARSE_IMPL(m, "isnan", at::native::isnan_sparse);
  SPARSE_IMPL(m, "isinf", at::native::isinf_sparse);
  SPARSE_IMPL(m, "nan_to_num", at::native::nan_to_num_sparse);
  SPARSE_IMPL(m, "nan_to_num_", at::native::nan_to_num_sparse_);
  SPARSE_IMPL(m, "nan_to_num.out", at::native::nan_to_num_sparse_out);
  SPARSE_IMPL(m, "conj_physical.out", at::native::conj_physical_out_sparse);
  SPARSE_IMPL(m, "floor_divide", at::native::floor_divide_sparse);
  SPARSE_IMPL(m, "floor_divide_.Tensor", at::native::floor_divide_sparse_);
  SPARSE_IMPL(m, "floor_divide.out", at::native::floor_divide_out_sparse_zerodim);
  // Shapes, reductions and products composed of the ops above.
  SPARSE_IMPL(m, "cat", at::native::cat_sparse);
  SPARSE_IMPL(m, "unsqueeze", at::native::unsqueeze_sparse);
  SPARSE_IMPL(m, "permute", at::native::permute_sparse_coo);
  SPARSE_IMPL(m, "narrow_copy", at::native::narrow_copy_sparse);
  SPARSE_IMPL(m, "_sparse_broadcast_to", at::native::sparse_broadcast_to);
  SPARSE_IMPL(m, "any", at::native::any_sparse);
  SPARSE_IMPL_AS(m, "native_norm", NormFn, at::native::norm_sparse);
  SPARSE_IMPL_AS(m, "native_norm.ScalarOpt_dim_dtype", NormDimFn, at::native::norm_sparse);
  SPARSE_IMPL(m, "norm.ScalarOpt_dim_dtype", at::native::sparse_dtype_norm);
  SPARSE_IMPL(m, "norm.ScalarOpt_dim", at::native::sparse_norm);
  SPARSE_IMPL(m, "mv", at::native::mv_sparse);
  // Ours: the kernels ATen keeps per device.
  SPARSE_IMPL(m, "_coalesce", _coalesce_ocl);
  SPARSE_IMPL(m, "add.out", add_out_ocl);
  SPARSE_IMPL(m, "mul.out", mul_out_ocl);
  SPARSE_IMPL(m, "sparse_mask", sparse_mask_ocl);
  SPARSE_IMPL(m, "_sparse_mask_projection", _sparse_mask_projection_ocl);
  SPARSE_IMPL(m, "addmm", addmm_ocl);
  SPARSE_IMPL(m, "addmm_", addmm__ocl);
  SPARSE_IMPL(m, "addmm.out", addmm_out_ocl);
  SPARSE_IMPL(m, "index_select", index_select_ocl);
  SPARSE_IMPL(m, "_sparse_sum_backward", _sparse_sum_backward_ocl);
  SPARSE_IMPL(m, "_sparse_sparse_matmul", _sparse_sparse_matmul_ocl);
  SPARSE_IMPL(m, "bmm", bmm_ocl);
  SPARSE_IMPL(m, "bmm.out", bmm_out_ocl);
}

// Dense inputs that produce sparse tensors dispatch to the dense key.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  SPARSE_IMPL(m, "_to_sparse", _to_sparse_ocl);
  SPARSE_IMPL(m, "_to_sparse.sparse_dim", _to_sparse_sparse_dim_ocl);
}

}  // namespace torch_ocl
