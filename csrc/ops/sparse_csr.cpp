// Sparse compressed tensors on ocl (SparseCsrPrivateUse1): CSR and CSC creation, metadata,
// conversions to and from dense and COO, unary math, add, mul (by a scalar, a dense or a CSR
// tensor), sparse_mask, sum (all, or over dims), select, and products of CSR/CSC with dense or
// CSR/CSC matrices. Composed from dense device ops, COO ops and ATen's device-agnostic
// compressed-layout functions, each run under a device guard (OnItsDevice, sparse.h). Unbatched
// (2-D) matrices for the products; BSR and BSC have no registrations, so they raise
// NotImplementedError naming the op.
#include <ATen/SparseCsrTensorImpl.h>
#include <ATen/SparseCsrTensorUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_convert_indices_from_coo_to_csr_native.h>
#include <ATen/ops/_convert_indices_from_csr_to_coo.h>
#include <ATen/ops/_convert_indices_from_csr_to_coo_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors.h>
#include <ATen/ops/_sparse_compressed_tensor_unsafe.h>
#include <ATen/ops/_sparse_csr_sum_native.h>
#include <ATen/ops/_sparse_sparse_matmul.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_csc_native.h>
#include <ATen/ops/_to_sparse_bsc_native.h>
#include <ATen/ops/_to_sparse_bsr_native.h>
#include <ATen/ops/_to_sparse_csr_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/addmm_native.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/asin_native.h>
#include <ATen/ops/asinh_native.h>
#include <ATen/ops/atanh_native.h>
#include <ATen/ops/atan_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/ceil_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/deg2rad_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/erf_native.h>
#include <ATen/ops/erfinv_native.h>
#include <ATen/ops/expm1_native.h>
#include <ATen/ops/fill_native.h>
#include <ATen/ops/floor_native.h>
#include <ATen/ops/frac_native.h>
#include <ATen/ops/isinf_native.h>
#include <ATen/ops/isnan_native.h>
#include <ATen/ops/isneginf_native.h>
#include <ATen/ops/isposinf_native.h>
#include <ATen/ops/log1p_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/normal_native.h>
#include <ATen/ops/rad2deg_native.h>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/round_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/select_native.h>
#include <ATen/ops/sparse_mask_native.h>
#include <ATen/ops/sgn_native.h>
#include <ATen/ops/sign_native.h>
#include <ATen/ops/signbit_native.h>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/sinh_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/tan_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/threshold_backward_native.h>
#include <ATen/ops/trunc_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>
#include "sparse.h"

namespace torch_ocl {
namespace {
using at::Tensor;
using sparse::check_same_device;

// ---- index conversions (dense tensors; registered for PrivateUse1) ------------------------------
// _convert_indices_from_coo_to_csr.out(Tensor self, int size, *, bool out_int32=False, Tensor(a!) out) -> Tensor(a!)
// The sorted row of each entry -> the row pointers: pointer i counts the entries before row i,
// a binary search of the rows for 0..size.
Tensor& _convert_indices_from_coo_to_csr_out_ocl(const Tensor& self, int64_t size, bool out_int32, Tensor& out) {
  check_same_device("_convert_indices_from_coo_to_csr", {self, out});
  TORCH_CHECK(self.dim() <= 1, "Input is supposed to be a vector, but got ", self.dim(), " dimensional tensor.");
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() == at::kInt || self.scalar_type() == at::kLong,
                              "\"convert_indices_from_coo_to_csr_cpu\" not implemented for '",
                              c10::toString(self.scalar_type()), "'");
  const Tensor rows = self.reshape({-1}).to(at::kLong).contiguous();
  const Tensor r = at::searchsorted(rows, at::arange(size + 1, rows.options()), out_int32);
  if (!out.sizes().equals(r.sizes())) out.resize_(r.sizes());
  return out.copy_(r);
}

// _convert_indices_from_coo_to_csr(Tensor self, int size, *, bool out_int32=False) -> Tensor
Tensor _convert_indices_from_coo_to_csr_ocl(const Tensor& self, int64_t size, bool out_int32) {
  Tensor out = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return _convert_indices_from_coo_to_csr_out_ocl(self, size, out_int32, out);
}

// _convert_indices_from_csr_to_coo.out(Tensor crow_indices, Tensor col_indices, *, bool out_int32=False, bool transpose=False, Tensor(a!) out) -> Tensor(a!)
// The row of entry k is the last row whose pointer is <= k: a binary search of the pointers.
Tensor& _convert_indices_from_csr_to_coo_out_ocl(const Tensor& crow, const Tensor& col, bool out_int32, bool transpose,
                                                 Tensor& out) {
  check_same_device("_convert_indices_from_csr_to_coo", {crow, col, out});
  TORCH_CHECK(crow.dim() == col.dim(), "crow_indices and col_indices are supposed to have the same dimensionality, "
              "but got ", crow.dim(), " and ", crow.dim(), " dimensional tensors, respectively.");
  TORCH_CHECK_NOT_IMPLEMENTED(crow.dim() <= 1, "torch_ocl: batched sparse compressed indices (",
                              crow.dim(), "-D crow_indices) are not supported on ocl");
  TORCH_CHECK_NOT_IMPLEMENTED(crow.scalar_type() == at::kInt || crow.scalar_type() == at::kLong,
                              "\"convert_indices_from_csr_to_coo_cpu\" not implemented for '",
                              c10::toString(crow.scalar_type()), "'");
  const Tensor pointers = crow.reshape({-1}).to(at::kLong).contiguous(), cols = col.reshape({-1}).to(at::kLong);
  const Tensor rows = at::searchsorted(pointers, at::arange(cols.numel(), pointers.options()), false, /*right=*/true)
                          .sub_(1);
  Tensor r = transpose ? at::stack({cols, rows}) : at::stack({rows, cols});
  if (out_int32) r = r.to(at::kInt);
  if (!out.sizes().equals(r.sizes())) out.resize_(r.sizes());
  return out.copy_(r);
}

// _convert_indices_from_csr_to_coo(Tensor crow_indices, Tensor col_indices, *, bool out_int32=False, bool transpose=False) -> Tensor
Tensor _convert_indices_from_csr_to_coo_ocl(const Tensor& crow, const Tensor& col, bool out_int32, bool transpose) {
  Tensor out = at::empty({0}, crow.options().dtype(out_int32 ? at::kInt : at::kLong));
  return _convert_indices_from_csr_to_coo_out_ocl(crow, col, out_int32, transpose, out);
}

// _to_sparse(Tensor self, *, Layout? layout=None, int[1]? blocksize=None, int? dense_dim=None) -> Tensor
// on the dense key lives in sparse.cpp; these are the compressed targets of dense tensors.
// _to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor
Tensor _to_sparse_csr_dense_ocl(const Tensor& self, std::optional<int64_t> dense_dim) {
  return at::native::dense_to_sparse_csr(self, dense_dim);
}
// _to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor
Tensor _to_sparse_csc_dense_ocl(const Tensor& self, std::optional<int64_t> dense_dim) {
  return at::native::dense_to_sparse_csc(self, dense_dim);
}

// ---- products and sums of compressed matrices ---------------------------------------------------
// The (row, column, value) of each entry of an unbatched CSR or CSC matrix with scalar values.
struct Triples {
  Tensor rows, cols, values;
};
// That compressed m is one matrix (unbatched), with scalar values unless hybrid ones are allowed.
void check_matrix(const Tensor& m, const char* op, bool hybrid) {
  TORCH_CHECK_NOT_IMPLEMENTED(m.dim() == 2 + m.dense_dim() && (hybrid || m.dense_dim() == 0), "torch_ocl: ", op,
                              " of a batched", hybrid ? "" : " or hybrid", " ", m.layout(),
                              " tensor is not supported on ocl; only 2-D matrices", hybrid ? "" : " with scalar values");
}

// With hybrid, values of any dense dims ([nnz, *dense sizes]) are accepted.
Triples triples(const Tensor& m, const char* op, bool hybrid = false) {
  TORCH_CHECK_NOT_IMPLEMENTED(m.layout() == at::kSparseCsr || m.layout() == at::kSparseCsc, "torch_ocl: ", op,
                              " of a ", m.layout(), " tensor is not supported on ocl; only CSR and CSC");
  check_matrix(m, op, hybrid);
  const bool csr = m.layout() == at::kSparseCsr;
  const Tensor compressed = csr ? m.crow_indices() : m.ccol_indices();
  const Tensor plain = csr ? m.col_indices() : m.row_indices();
  const Tensor idx = at::_convert_indices_from_csr_to_coo(compressed, plain, false, /*transpose=*/!csr);
  return {idx.select(0, 0), idx.select(0, 1), m.values()};
}

// An unbatched CSR or CSC matrix with scalar values as a (coalesced) COO matrix.
Tensor as_coo(const Tensor& m, const char* op) {
  check_matrix(m, op, /*hybrid=*/false);
  return m.to_sparse();
}

// Makes compressed `out` the compressed tensor r (of out's layout), its values in out's dtype.
Tensor& set_compressed(Tensor& out, const Tensor& r) {
  const auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(r);
  at::sparse_csr::get_sparse_csr_impl(out)->set_member_tensors(compressed, plain, r.values().to(out.scalar_type()),
                                                               r.sizes());
  return out;
}

// out = beta * t + alpha * (mat1 @ mat2), t of exactly out's shape, mat1 or mat2 (or both) compressed.
// compressed @ compressed goes through COO sparse @ sparse (two host reads of counts); into a
// compressed out (and t) it keeps, as on the CPU, every entry of t and every entry some product
// reaches (zero or not), and when a factor has no entries it is beta * t (no entries at all when
// beta is 0). Any mix of CSR and CSC is served (the CPU's MKL path refuses some of them).
Tensor& addmm_compressed_into(Tensor& out, const Tensor& t, const Tensor& mat1, const Tensor& mat2,
                              const c10::Scalar& beta, const c10::Scalar& alpha) {
  const bool sparse1 = at::sparse_csr::is_sparse_compressed(mat1), sparse2 = at::sparse_csr::is_sparse_compressed(mat2);
  const bool sparse_out = at::sparse_csr::is_sparse_compressed(out);
  // COO operands, a compressed t or out with a dense factor: the CPU raises a RuntimeError too.
  TORCH_CHECK(!out.is_sparse() && !t.is_sparse() && !mat1.is_sparse() && !mat2.is_sparse() &&
                  sparse_out == at::sparse_csr::is_sparse_compressed(t) && (!sparse_out || (sparse1 && sparse2)),
              "addmm: computation on ocl is not implemented for ", t.layout(), " + ", mat1.layout(), " @ ",
              mat2.layout(), " into ", out.layout());
  check_same_device("addmm", {t, mat1, mat2, out});
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm: 2-D matrices expected, got ", mat1.dim(), "D and ",
              mat2.dim(), "D tensors");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  const auto dtype = mat1.scalar_type();
  TORCH_CHECK(mat2.scalar_type() == dtype && t.scalar_type() == dtype && out.scalar_type() == dtype,
              "expected scalar type ", dtype, " but found ",
              mat2.scalar_type() != dtype ? mat2.scalar_type() : t.scalar_type() != dtype ? t.scalar_type()
                                                                                          : out.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(dtype == at::kFloat || dtype == at::kDouble, sparse1 && sparse2
                              ? "\"addmm_out_sparse_csr_impl_mkl_sparse\" not implemented for '"
                              : "\"addmm_out_sparse_csr_impl_mkl\" not implemented for '", c10::toString(dtype), "'");
  const int64_t rows = mat1.size(0), cols = mat2.size(1);
  if (sparse1 && sparse2) {
    const Tensor a = as_coo(mat1, "addmm"), b = as_coo(mat2, "addmm");
    const bool zero = a._nnz() == 0 || b._nnz() == 0;
    if (sparse_out) {
      Tensor sum;
      if (zero) {
        sum = beta.equal(0) ? at::zeros({rows, cols}, a.options()) : at::mul(as_coo(t, "addmm"), beta);
      } else {
        Tensor tc = as_coo(t, "addmm");
        if (beta.equal(0)) {  // t's entries stay, zeroed (NaN included)
          tc = at::_sparse_coo_tensor_with_dims_and_tensors(2, 0, tc.sizes(), tc._indices(),
                                                            at::zeros_like(tc._values()), tc.options(), true);
        } else {
          tc = at::mul(tc, beta);
        }
        sum = at::add(tc, at::_sparse_sparse_matmul(a, b), alpha).coalesce();
      }
      return set_compressed(out, out.layout() == at::kSparseCsr ? sum.to_sparse_csr() : sum.to_sparse_csc());
    }
    Tensor work = beta.equal(0) ? at::zeros({rows, cols}, mat2.options().layout(at::kStrided)) : at::mul(t, beta);
    if (!zero) work = at::add(work, at::_sparse_sparse_matmul(a, b), alpha);
    if (!out.sizes().equals(work.sizes())) out.resize_(work.sizes());
    return out.copy_(work);
  }
  const Triples s = triples(sparse1 ? mat1 : mat2, "addmm");
  const bool any = s.values.numel() > 0;
  // beta == 0 ignores t (NaN included), as on the CPU.
  Tensor work = beta.equal(0) ? at::zeros({rows, cols}, (sparse1 ? mat2 : mat1).options()) : at::mul(t, beta);
  if (any && rows > 0 && cols > 0) {
    if (sparse1) {  // row i of the product gains v * mat2[k, :] for entry (i, k)
      work.index_add_(0, s.rows, mat2.index_select(0, s.cols).mul_(s.values.unsqueeze(1)), alpha);
    } else {  // column j gains v * mat1[:, k] for entry (k, j)
      work.index_add_(1, s.cols, mat1.index_select(1, s.rows).mul_(s.values.unsqueeze(0)), alpha);
    }
  }
  if (!out.sizes().equals(work.sizes())) out.resize_(work.sizes());
  return out.copy_(work);
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
Tensor& addmm_out_ocl(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                      const c10::Scalar& alpha, Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "addmm: 2-D matrices expected, got ", mat1.dim(), "D and ",
              mat2.dim(), "D tensors");
  const std::array<int64_t, 2> shape{mat1.size(0), mat2.size(1)};
  if (at::sparse_csr::is_sparse_compressed(self) || self.is_sparse())
    return addmm_compressed_into(out, self, mat1, mat2, beta, alpha);  // refused there
  if (&self == &out || self.is_same(out)) return addmm_compressed_into(out, self, mat1, mat2, beta, alpha);
  return addmm_compressed_into(out, self.expand(at::IntArrayRef(shape)), mat1, mat2, beta, alpha);
}

// add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
// dense + compressed into dense: index_add_ of the entries into the dense rows. compressed +
// compressed (same layout) into compressed: through COO (concatenate, coalesce: a host read of the
// result's nnz, as for COO) and back.
Tensor& add_out_ocl(const Tensor& self, const Tensor& other, const c10::Scalar& alpha, Tensor& out) {
  check_same_device("add", {self, other, out});
  const bool s_sparse = at::sparse_csr::is_sparse_compressed(self), o_sparse = at::sparse_csr::is_sparse_compressed(other);
  TORCH_CHECK(self.sizes().equals(other.sizes()), "add: expected 'self' and 'other' to have same size, but self has "
              "size ", self.sizes(), " while other has size ", other.sizes(),
              " (FYI: op2-sparse addition does not currently support broadcasting)");
  const auto common = at::promoteTypes(self.scalar_type(), other.scalar_type());
  TORCH_CHECK(at::canCast(common, out.scalar_type()), "Can't convert result type ", common, " to output ",
              out.scalar_type(), " in add operation");
  if (s_sparse && o_sparse) {
    TORCH_CHECK(self.layout() == other.layout() && out.layout() == self.layout(), "add: expected 'self', 'other' and "
                "'out' of one layout, got ", self.layout(), ", ", other.layout(), " and ", out.layout());
    TORCH_CHECK_NOT_IMPLEMENTED(common == at::kFloat || common == at::kDouble,
                                "\"add_out_sparse_csr_impl_mkl\" not implemented for '", c10::toString(common), "'");
    TORCH_CHECK_NOT_IMPLEMENTED(self.dim() == 2, "torch_ocl: add of batched ", self.layout(),
                                " tensors is not supported on ocl");
    const Tensor sum = at::add(self.to_sparse().to(common), other.to_sparse().to(common), alpha).coalesce();
    const Tensor r = self.layout() == at::kSparseCsr ? sum.to_sparse_csr() : sum.to_sparse_csc();
    const auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(r);
    at::sparse_csr::get_sparse_csr_impl(out)->set_member_tensors(compressed, plain, r.values().to(out.scalar_type()),
                                                                 r.sizes());
    return out;
  }
  TORCH_CHECK(!at::sparse_csr::is_sparse_compressed(out) && !out.is_sparse(), "add: expected a dense 'out' when one "
              "operand is dense, got ", out.layout());
  const Tensor& dense = s_sparse ? other : self;
  const Tensor& sparse = s_sparse ? self : other;
  const c10::Scalar dense_scale = s_sparse ? alpha : c10::Scalar(1), sparse_scale = s_sparse ? c10::Scalar(1) : alpha;
  const Triples s = triples(sparse, "add");
  Tensor work = at::mul(dense.to(common), dense_scale);  // a fresh buffer
  if (work.numel() > 0 && s.values.numel() > 0)
    work.view({-1}).index_add_(0, s.rows.mul(sparse.size(1)).add_(s.cols), s.values.to(common), sparse_scale);
  if (!out.sizes().equals(work.sizes())) out.resize_(work.sizes());
  return out.copy_(work);
}

// sparse_mask(Tensor self, Tensor mask) -> Tensor, for a compressed mask
// self's values at mask's entries, in mask's layout and order: a gather from a dense self, or
// COO sparse_mask (a binary search, no host read) for a sparse one. CSR * dense uses it. Hybrid
// masks are served; batched ones are not.
Tensor sparse_mask_ocl(const Tensor& self, const Tensor& mask) {
  TORCH_CHECK(at::sparse_csr::is_sparse_compressed(mask), "sparse_mask_sparse_compressed expects mask to have sparse "
              "compressed layout, got ", mask.layout());
  check_same_device("sparse_mask", {self, mask});
  TORCH_CHECK(mask.sizes().equals(self.sizes()), "sparse_mask(): operands have incompatible sizes; self has size ",
              self.sizes(), " but mask has size ", mask.sizes());
  if (self.is_same(mask)) return self;
  if (!mask.numel() || !mask._nnz()) return mask.clone().to(self.device(), self.scalar_type());
  const Triples s = triples(mask, "sparse_mask", /*hybrid=*/true);
  Tensor values;
  if (self.layout() == at::kStrided) {  // self viewed as [rows * cols, *dense sizes]
    std::vector<int64_t> flat = self.sizes().slice(1).vec();
    flat[0] = -1;
    values = self.reshape(flat).index_select(0, s.rows.mul(self.size(1)).add_(s.cols));
  } else {  // mask's entries, in its order, as an uncoalesced COO mask
    const Tensor entries = at::_sparse_coo_tensor_with_dims_and_tensors(
        2, mask.dense_dim(), mask.sizes(), at::stack({s.rows, s.cols}), s.values, mask.options().layout(at::kSparse),
        false);
    TORCH_CHECK_NOT_IMPLEMENTED(self.dense_dim() == mask.dense_dim(), "torch_ocl: sparse_mask of a ", self.layout(),
                                " self with ", self.dense_dim(), " dense dims and a mask with ", mask.dense_dim(),
                                " is not supported on ocl");
    values = (self.is_sparse() ? self : self.to_sparse(2)).sparse_mask(entries)._values();
  }
  const auto [compressed, plain] = at::sparse_csr::getCompressedPlainIndices(mask);
  return at::_sparse_compressed_tensor_unsafe(compressed.clone(), plain.clone(), values, mask.sizes(),
                                              values.options().layout(mask.layout()));
}

// _sparse_csr_sum.dim_dtype(Tensor self, int[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
// A CSR matrix summed over rows and/or columns, kept as a CSR matrix with a size-1 dim: the
// entries moved to row (or column) 0 and coalesced (a host read of the count, as for COO). As on
// the CPU, a row or column with entries keeps one entry, zero or not.
Tensor _sparse_csr_sum_ocl(const Tensor& self, at::IntArrayRef dims, bool keepdim,
                           std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(keepdim, "reduction operations on CSR tensors with keepdim=False is unsupported");
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"_sparse_csr_sum_cpu\" not implemented for 'Bool'");
  const Triples s = triples(self, "sum");
  std::array<bool, 2> summed{dims.empty(), dims.empty()};  // no dims: all of them, as for sum
  for (int64_t d : dims) {
    d = at::maybe_wrap_dim(d, 2);
    TORCH_CHECK(!summed[d], "dim ", d, " appears multiple times in the list of dims");
    summed[d] = true;
  }
  // Integers sum to int64 even when another integer dtype is asked for, as on the CPU.
  const auto asked = dtype.value_or(self.scalar_type());
  const auto out_type = at::isIntegralType(asked, /*includeBool=*/true) ? at::kLong : asked;
  const std::array<int64_t, 2> sizes{summed[0] ? 1 : self.size(0), summed[1] ? 1 : self.size(1)};
  const Tensor rows = summed[0] ? at::zeros_like(s.rows) : s.rows, cols = summed[1] ? at::zeros_like(s.cols) : s.cols;
  const Tensor coo = at::_sparse_coo_tensor_with_dims_and_tensors(
      2, 0, sizes, at::stack({rows, cols}), s.values.to(out_type), self.options().dtype(out_type).layout(at::kSparse),
      false);
  const Tensor r = coo.coalesce().to_sparse_csr();
  const auto index_type = self.crow_indices().scalar_type();  // int32 indices stay int32, as on the CPU
  if (index_type == at::kLong) return r;
  return at::_sparse_compressed_tensor_unsafe(r.crow_indices().to(index_type), r.col_indices().to(index_type),
                                              r.values(), r.sizes(), r.options());
}

// _to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor, for a compressed self
// CSR <-> CSC: ATen's flip uses a per-device stub, so this goes through COO (whose coalesce reads
// the nnz back, as for COO).
Tensor _to_sparse_csr_compressed_ocl(const Tensor& self, std::optional<int64_t> dense_dim) {
  if (self.layout() == at::kSparseCsr) return at::native::sparse_compressed_to_sparse_csr(self, dense_dim);
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kSparseCsc && self.dim() == 2, "torch_ocl: to_sparse_csr of a ",
                              self.dim(), "-D ", self.layout(), " tensor is not supported on ocl");
  return self.to_sparse().to_sparse_csr(dense_dim);
}
// _to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor, for a compressed self
Tensor _to_sparse_csc_compressed_ocl(const Tensor& self, std::optional<int64_t> dense_dim) {
  if (self.layout() == at::kSparseCsc) return at::native::sparse_compressed_to_sparse_csc(self, dense_dim);
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kSparseCsr && self.dim() == 2, "torch_ocl: to_sparse_csc of a ",
                              self.dim(), "-D ", self.layout(), " tensor is not supported on ocl");
  return self.to_sparse().to_sparse_csc(dense_dim);
}

// _to_sparse(Tensor self, *, Layout? layout=None, int[1]? blocksize=None, int? dense_dim=None) -> Tensor,
// for a compressed self. ATen's flips CSR <-> CSC with a per-device stub (flatten_indices), so
// those two go through the functions above; the rest is ATen's.
using ToSparseFn = Tensor (*)(const Tensor&, std::optional<at::Layout>, at::OptionalIntArrayRef,
                              std::optional<int64_t>);
Tensor _to_sparse_compressed_ocl(const Tensor& self, std::optional<at::Layout> layout,
                                 at::OptionalIntArrayRef blocksize, std::optional<int64_t> dense_dim) {
  const at::Layout to = layout.value_or(at::kSparse);
  if (!blocksize.has_value() && to != self.layout() && (to == at::kSparseCsr || to == at::kSparseCsc))
    return to == at::kSparseCsr ? _to_sparse_csr_compressed_ocl(self, dense_dim)
                                : _to_sparse_csc_compressed_ocl(self, dense_dim);
  return static_cast<ToSparseFn>(at::native::sparse_compressed_to_sparse)(self, layout, blocksize, dense_dim);
}

// _to_sparse_bsr(Tensor self, int[2] blocksize, int? dense_dim=None) -> Tensor (and _bsc): refused,
// rather than left to the CPU fallback.
Tensor _to_sparse_blocked_ocl(const Tensor& self, at::IntArrayRef, std::optional<int64_t>) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: to_sparse_bsr/to_sparse_bsc (_to_sparse_bsr, _to_sparse_bsc) are not "
                              "supported on ocl; only torch.sparse_coo, torch.sparse_csr and torch.sparse_csc");
  return self;
}

using FillFn = Tensor& (*)(Tensor&, const c10::Scalar&);
}  // namespace

#define CSR_UNARY(m, op)                                   \
  SPARSE_IMPL(m, #op, at::native::op##_sparse_csr);           \
  SPARSE_IMPL(m, #op "_", at::native::op##_sparse_csr_);      \
  SPARSE_IMPL(m, #op ".out", at::native::op##_sparse_csr_out)

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  // ATen's own, device-agnostic: metadata, creation, copies and conversions (composed of the
  // index conversions below and dense device ops), values-wise math, and wrappers that
  // redispatch to addmm.out / add.out.
  SPARSE_IMPL(m, "sparse_dim", at::native::sparse_dim_sparse_csr);
  SPARSE_IMPL(m, "dense_dim", at::native::dense_dim_sparse_csr);
  SPARSE_IMPL(m, "_nnz", at::native::_nnz_sparse_csr);
  SPARSE_IMPL(m, "values", at::native::values_sparse_csr);
  SPARSE_IMPL(m, "crow_indices", at::native::crow_indices_sparse_csr);
  SPARSE_IMPL(m, "col_indices", at::native::col_indices_sparse_csr);
  SPARSE_IMPL(m, "ccol_indices", at::native::ccol_indices_sparse_csr);
  SPARSE_IMPL(m, "row_indices", at::native::row_indices_sparse_csr);
  SPARSE_IMPL(m, "empty.memory_format", at::native::empty_sparse_compressed);
  SPARSE_IMPL(m, "empty_like", at::native::empty_like_sparse_csr);
  SPARSE_IMPL(m, "resize_", at::native::resize_sparse_csr_);
  SPARSE_IMPL(m, "resize_as_sparse_", at::native::resize_as_sparse_compressed_);
  SPARSE_IMPL(m, "clone", at::native::clone_sparse_compressed);
  SPARSE_IMPL(m, "copy_", at::native::copy_sparse_compressed_);
  SPARSE_IMPL(m, "zero_", at::native::zero_sparse_csr_);
  SPARSE_IMPL_AS(m, "fill_.Scalar", FillFn, at::native::fill_sparse_csr_);
  SPARSE_IMPL(m, "normal_", at::native::normal_sparse_csr_);
  SPARSE_IMPL(m, "_to_dense", at::native::sparse_compressed_to_dense);
  SPARSE_IMPL(m, "_to_sparse", _to_sparse_compressed_ocl);
  SPARSE_IMPL_AS(m, "_to_sparse.sparse_dim", Tensor (*)(const Tensor&, int64_t), at::native::sparse_compressed_to_sparse);
  SPARSE_IMPL(m, "_to_sparse_csr", _to_sparse_csr_compressed_ocl);
  SPARSE_IMPL(m, "_to_sparse_csc", _to_sparse_csc_compressed_ocl);
  CSR_UNARY(m, abs);
  CSR_UNARY(m, asin);
  CSR_UNARY(m, atan);
  CSR_UNARY(m, asinh);
  CSR_UNARY(m, atanh);
  CSR_UNARY(m, ceil);
  CSR_UNARY(m, deg2rad);
  CSR_UNARY(m, rad2deg);
  CSR_UNARY(m, erf);
  CSR_UNARY(m, erfinv);
  CSR_UNARY(m, expm1);
  CSR_UNARY(m, floor);
  CSR_UNARY(m, frac);
  CSR_UNARY(m, log1p);
  CSR_UNARY(m, neg);
  CSR_UNARY(m, round);
  CSR_UNARY(m, sgn);
  CSR_UNARY(m, sign);
  CSR_UNARY(m, sin);
  CSR_UNARY(m, sinh);
  CSR_UNARY(m, sqrt);
  CSR_UNARY(m, tan);
  CSR_UNARY(m, tanh);
  CSR_UNARY(m, trunc);
  SPARSE_IMPL(m, "relu", at::native::relu_sparse_csr);
  SPARSE_IMPL(m, "relu_", at::native::relu_sparse_csr_);
  SPARSE_IMPL(m, "threshold_backward", at::native::threshold_backward_sparse_compressed);
  SPARSE_IMPL(m, "threshold_backward.grad_input", at::native::threshold_backward_sparse_compressed_out);
  SPARSE_IMPL(m, "signbit", at::native::signbit_sparse_csr);
  SPARSE_IMPL(m, "signbit.out", at::native::signbit_sparse_csr_out);
  SPARSE_IMPL(m, "isposinf", at::native::isposinf_sparse_csr);
  SPARSE_IMPL(m, "isposinf.out", at::native::isposinf_sparse_csr_out);
  SPARSE_IMPL(m, "isneginf", at::native::isneginf_sparse_csr);
  SPARSE_IMPL(m, "isneginf.out", at::native::isneginf_sparse_csr_out);
  SPARSE_IMPL(m, "isnan", at::native::isnan_sparse_csr);
  SPARSE_IMPL(m, "isinf", at::native::isinf_sparse_csr);
  SPARSE_IMPL(m, "mul.Tensor", at::native::mul_sparse_csr);
  SPARSE_IMPL(m, "mul_.Tensor", at::native::mul_sparse_csr_);
  SPARSE_IMPL(m, "mul.out", at::native::mul_out_sparse_csr);
  SPARSE_IMPL(m, "mul.Scalar", at::native::mul_scalar_sparse_csr);
  SPARSE_IMPL(m, "mul_.Scalar", at::native::mul__scalar_sparse_csr);
  SPARSE_IMPL(m, "add.Tensor", at::native::add_sparse_csr);
  SPARSE_IMPL(m, "add_.Tensor", at::native::add_sparse_csr_);
  SPARSE_IMPL(m, "sum", at::native::sum_csr);
  SPARSE_IMPL(m, "sum.dim_IntList", at::native::sum_sparse_compressed);
  SPARSE_IMPL(m, "select.int", at::native::select_sparse_csr);
  SPARSE_IMPL(m, "addmm", at::native::addmm_sparse_compressed_dense);
  SPARSE_IMPL(m, "mm", at::native::_sparse_csr_mm);
  // Ours.
  SPARSE_IMPL(m, "add.out", add_out_ocl);
  SPARSE_IMPL(m, "addmm.out", addmm_out_ocl);
  SPARSE_IMPL(m, "sparse_mask", sparse_mask_ocl);
  SPARSE_IMPL(m, "_sparse_csr_sum.dim_dtype", _sparse_csr_sum_ocl);
}

// COO -> compressed (ATen's, through _convert_indices_from_coo_to_csr).
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  SPARSE_IMPL(m, "_to_sparse_csr", at::native::coo_to_sparse_csr);
  SPARSE_IMPL(m, "_to_sparse_csc", at::native::coo_to_sparse_csc);
}

// Dense -> compressed, and the index conversions the layouts are built from.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  SPARSE_IMPL(m, "_to_sparse_csr", _to_sparse_csr_dense_ocl);
  SPARSE_IMPL(m, "_to_sparse_csc", _to_sparse_csc_dense_ocl);
  SPARSE_IMPL(m, "_to_sparse_bsr", _to_sparse_blocked_ocl);
  SPARSE_IMPL(m, "_to_sparse_bsc", _to_sparse_blocked_ocl);
  SPARSE_IMPL(m, "_convert_indices_from_coo_to_csr", _convert_indices_from_coo_to_csr_ocl);
  SPARSE_IMPL(m, "_convert_indices_from_coo_to_csr.out", _convert_indices_from_coo_to_csr_out_ocl);
  SPARSE_IMPL(m, "_convert_indices_from_csr_to_coo", _convert_indices_from_csr_to_coo_ocl);
  SPARSE_IMPL(m, "_convert_indices_from_csr_to_coo.out", _convert_indices_from_csr_to_coo_out_ocl);
}

}  // namespace torch_ocl
