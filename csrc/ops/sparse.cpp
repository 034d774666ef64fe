// Sparse COO tensors on ocl (SparsePrivateUse1): creation, metadata, conversion, coalesce,
// arithmetic, sparse_mask and sparse @ dense, composed from dense device ops (no kernels of its
// own) and ATen's device-agnostic sparse functions, all registered under a device guard.
// Only coalesce, sparse * sparse and dense -> sparse read a count back to the host, as on CUDA.
#include <ATen/SparseTensorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesce_native.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_dimI_native.h>
#include <ATen/ops/_dimV_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/add_native.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/div_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/mm_native.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/mul_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/pow_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/sub_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/unique_consecutive.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zero_native.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>
#include <array>

namespace torch_ocl {
namespace {
using at::Tensor;
using at::sparse::alias_into_sparse;
using at::sparse::get_sparse_impl;

// Mixed-device calls reach these kernels (a CPU sparse tensor with an ocl dense one still
// dispatches to SparsePrivateUse1), so every kernel checks its operands' devices first.
void check_same_device(const char* op, std::initializer_list<std::reference_wrapper<const Tensor>> ts) {
  const Tensor& first = ts.begin()->get();
  for (const Tensor& t : ts)
    TORCH_CHECK(t.device() == first.device(), "Expected all tensors to be on the same device, but found at least two "
                "devices, ", first.device(), " and ", t.device(), "! (when checking arguments for ", op, ")");
}

// ATen's generated CPU/CUDA registrations run each kernel under a device guard; a plain m.impl
// does not, and a new SparseTensorImpl puts its placeholder indices and values on the *current*
// device (then asserts its real ones are on that device), so on ocl:1 it would fail. Every
// registration below runs with the current device set to the op's first ocl tensor's, or to
// its ocl device option.
void guard_to(c10::OptionalDeviceGuard& g, const Tensor& t) {
  if (!g.current_device() && t.defined() && t.device().is_privateuseone()) g.reset_device(t.device());
}
void guard_to(c10::OptionalDeviceGuard& g, const std::optional<at::Device>& d) {
  if (!g.current_device() && d.has_value() && d->is_privateuseone()) g.reset_device(*d);
}
template <class T>
void guard_to(c10::OptionalDeviceGuard&, const T&) {}

template <class Fn, Fn fn>
struct OnItsDevice;
template <class R, class... A, R (*fn)(A...)>
struct OnItsDevice<R (*)(A...), fn> {
  static R call(A... args) {
    c10::OptionalDeviceGuard guard;
    (guard_to(guard, args), ...);
    return fn(std::forward<A>(args)...);
  }
};

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
// ATen's dense_to_sparse is nonzero, unique_dim and index: all device ops here. The compressed
// layouts have no ocl kernels.
Tensor _to_sparse_ocl(const Tensor& self, std::optional<at::Layout> layout, at::OptionalIntArrayRef blocksize,
                      std::optional<int64_t> dense_dim) {
  const at::Layout to = layout.value_or(at::kSparse);
  TORCH_CHECK_NOT_IMPLEMENTED(to != at::kSparseCsr && to != at::kSparseCsc && to != at::kSparseBsr &&
                                  to != at::kSparseBsc,
                              "torch_ocl: to_sparse(layout=", to, ") is not supported on ocl; only torch.sparse_coo");
  return at::native::dense_to_sparse(self, layout, blocksize, dense_dim);
}

// _to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor
Tensor _to_sparse_sparse_dim_ocl(const Tensor& self, int64_t sparse_dim) {
  return at::native::dense_to_sparse(self, sparse_dim);
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

}  // namespace

// Registers fn (a function, or its overload of type Sig) to run under OnItsDevice.
#define SPARSE_IMPL(m, name, fn) m.impl(name, &OnItsDevice<decltype(&fn), &fn>::call)
#define SPARSE_IMPL_AS(m, name, Sig, fn) m.impl(name, &OnItsDevice<Sig, &fn>::call)

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
  // Ours: the kernels ATen keeps per device.
  SPARSE_IMPL(m, "_coalesce", _coalesce_ocl);
  SPARSE_IMPL(m, "add.out", add_out_ocl);
  SPARSE_IMPL(m, "mul.out", mul_out_ocl);
  SPARSE_IMPL(m, "sparse_mask", sparse_mask_ocl);
  SPARSE_IMPL(m, "addmm", addmm_ocl);
  SPARSE_IMPL(m, "addmm_", addmm__ocl);
  SPARSE_IMPL(m, "addmm.out", addmm_out_ocl);
}

// Dense inputs that produce sparse tensors dispatch to the dense key.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  SPARSE_IMPL(m, "_to_sparse", _to_sparse_ocl);
  SPARSE_IMPL(m, "_to_sparse.sparse_dim", _to_sparse_sparse_dim_ocl);
}

}  // namespace torch_ocl
