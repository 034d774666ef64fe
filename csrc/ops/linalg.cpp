// Dense linear algebra: LU with partial pivoting (linalg_lu_factor_ex) and what ATen builds
// on it (lu_solve, lu_unpack, linalg_lu, solve, inv, det, slogdet), triangular solves and
// Cholesky (factor, solve, inverse), in float32 and float64 (the CPU's LAPACK takes no other).
// Factorisations are blocked: a panel of kBlock columns per step by kernels/linalg.cl (one
// work-group per matrix), the trailing update by the device GEMM (baddbmm on strided views).
// Matrices are worked on as (batch, rows, cols) views of any strides; outs of any layout.
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_linalg_check_errors.h>
#include <ATen/ops/_linalg_det_meta.h>
#include <ATen/ops/_linalg_slogdet_meta.h>
#include <ATen/ops/_linalg_solve_ex_meta.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/linalg_cholesky_ex.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/linalg_inv_ex_meta.h>
#include <ATen/ops/linalg_lu_factor_ex.h>
#include <ATen/ops/linalg_lu_factor_ex_meta.h>
#include <ATen/ops/linalg_lu_meta.h>
#include <ATen/ops/linalg_lu_solve.h>
#include <ATen/ops/linalg_lu_solve_meta.h>
#include <ATen/ops/linalg_solve_ex.h>
#include <ATen/ops/lu_unpack.h>
#include <ATen/ops/lu_unpack_meta.h>
#include <ATen/ops/triangular_solve_meta.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/triu.h>
#include <torch/library.h>

#include <vector>

namespace torch_ocl {
namespace {

constexpr int64_t kBlock = 64;       // panel width of the blocked factorisations, diagonal block of the solves
constexpr int64_t kUnblocked = 128;  // matrices of at most this many columns are done by one panel / one solve

// LAPACK's dtypes only; others raise the CPU's NotImplementedError ("lu_cpu" -> "lu_ocl").
void check_lapack_dtype(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, "\"", op,
                              "\" not implemented for '", toString(t.scalar_type()), "'");
  check_dtype_supported(ocl_device(t), t.scalar_type(), op);
}

Kernel& linalg_kernel(Device& d, at::ScalarType t, const char* name) {
  return get_kernel(d, "linalg", t == at::kDouble ? "-DDT=double -DDT_IS_DOUBLE=1" : "-DDT=float", name);
}

// The batch sizes of a (..., r, c) tensor followed by (r, c).
std::vector<int64_t> with_matrix(c10::IntArrayRef batch, int64_t r, int64_t c) {
  std::vector<int64_t> s(batch.begin(), batch.end());
  s.push_back(r);
  s.push_back(c);
  return s;
}
c10::IntArrayRef batch_of(const at::Tensor& t) { return t.sizes().slice(0, t.dim() - 2); }

// An empty tensor like `sizes` stored batched column-major (each matrix Fortran-contiguous),
// the layout of LAPACK and of ATen's linalg outputs.
at::Tensor empty_fortran(c10::IntArrayRef sizes, const at::TensorOptions& opts) {
  return at::empty_strided(sizes, at::native::batched_matrix_contiguous_strides(sizes, /*f_contig=*/true), opts);
}
bool is_fortran(const at::Tensor& t) { return t.mT().is_contiguous(); }

// A work-group size for one matrix of `rows` rows: a power of two in [32, 256].
size_t panel_wg(int64_t rows) {
  size_t w = 32;
  while (static_cast<int64_t>(w) < rows && w < 256) w <<= 1;
  return w;
}

// Solves T X = X in place: T (batch, n, n) lower or upper triangular (unit: ones on the
// diagonal, not read), X (batch, n, k); both views of any strides (a batch stride 0 broadcasts
// T). Blocked: substitution on kBlock-row blocks, the rest of X updated by the GEMM.
void trsm_inplace(Device& d, const at::Tensor& T, const at::Tensor& X, bool lower, bool unit) {
  const int64_t B = X.size(0), n = X.size(1), k = X.size(2);
  if (B == 0 || n == 0 || k == 0) return;
  Kernel& kern = linalg_kernel(d, X.scalar_type(), "trsm_block");
  auto solve_block = [&](int64_t r0, int64_t nb) {
    const at::Tensor t = T.narrow(1, r0, nb).narrow(2, r0, nb), x = X.narrow(1, r0, nb);
    launch(d, kern, Range(static_cast<size_t>(k), static_cast<size_t>(B)), local_wu(k), buf(t), t.stride(0),
           t.stride(1), t.stride(2), buf(x), x.stride(0), x.stride(1), x.stride(2), nb, k, B,
           static_cast<cl_int>(lower), static_cast<cl_int>(unit));
  };
  if (n <= kUnblocked) {
    solve_block(0, n);
    return;
  }
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  for (int64_t s = 0; s < blocks; ++s) {
    const int64_t blk = lower ? s : blocks - 1 - s;
    const int64_t r0 = blk * kBlock, nb = std::min(kBlock, n - r0);
    solve_block(r0, nb);
    const at::Tensor xb = X.narrow(1, r0, nb);
    if (lower && r0 + nb < n) {
      at::Tensor rest = X.narrow(1, r0 + nb, n - r0 - nb);
      at::baddbmm_out(rest, rest, T.narrow(1, r0 + nb, n - r0 - nb).narrow(2, r0, nb), xb, 1, -1);
    } else if (!lower && r0 > 0) {
      at::Tensor rest = X.narrow(1, 0, r0);
      at::baddbmm_out(rest, rest, T.narrow(1, 0, r0).narrow(2, r0, nb), xb, 1, -1);
    }
  }
}

// The interchanges piv[:, j0:j1) applied to the rows of A (batch, rows, ncols) in LAPACK order
// (backwards when reverse), to every column outside [skip0, skip1). piv: (batch, *) contiguous.
void swap_rows(Device& d, const at::Tensor& A, const at::Tensor& piv, int64_t j0, int64_t j1, int64_t skip0,
               int64_t skip1, bool reverse) {
  const int64_t B = A.size(0), cols = A.size(2) - (skip1 - skip0);
  if (B == 0 || cols <= 0 || j1 <= j0) return;
  Kernel& k = linalg_kernel(d, A.scalar_type(), "lu_swap_rows");
  launch(d, k, Range(static_cast<size_t>(cols), static_cast<size_t>(B)), local_wu(cols), buf(A), A.stride(0),
         A.stride(1), A.stride(2), A.size(1), cols, B, skip0, skip1, buf(piv), piv.stride(0), j0, j1,
         static_cast<cl_int>(reverse), d.error_buf);
}

// LU with partial pivoting of A (batch, m, n; any strides, overwritten by L\U), pivots into
// piv (batch, min(m, n)) and info (batch), both int32 and contiguous.
void lu_factor_inplace(Device& d, const at::Tensor& A, const at::Tensor& piv, const at::Tensor& info) {
  info.zero_();
  const int64_t B = A.size(0), m = A.size(1), n = A.size(2), kmin = std::min(m, n);
  if (B == 0 || kmin == 0) return;
  Kernel& panel = linalg_kernel(d, A.scalar_type(), "lu_panel_fwd");
  const size_t wg = panel_wg(m);
  auto factor_panel = [&](int64_t k0, int64_t k1) {
    launch(d, panel, Range(wg * static_cast<size_t>(B)), Range(wg), buf(A), A.stride(0), A.stride(1), A.stride(2),
           m, k0, k1, buf(piv), piv.stride(0), buf(info), LocalMem{wg * A.element_size()},
           LocalMem{wg * sizeof(cl_long)});
  };
  if (n <= kUnblocked) {
    factor_panel(0, n);
    return;
  }
  for (int64_t k0 = 0; k0 < kmin; k0 += kBlock) {
    const int64_t k1 = std::min(k0 + kBlock, kmin), nb = k1 - k0;
    factor_panel(k0, k1);
    swap_rows(d, A, piv, k0, k1, k0, k1, false);
    if (k1 < n) {
      const at::Tensor u12 = A.narrow(1, k0, nb).narrow(2, k1, n - k1);
      trsm_inplace(d, A.narrow(1, k0, nb).narrow(2, k0, nb), u12, /*lower=*/true, /*unit=*/true);
      if (k1 < m) {
        at::Tensor a22 = A.narrow(1, k1, m - k1).narrow(2, k1, n - k1);
        at::baddbmm_out(a22, a22, A.narrow(1, k1, m - k1).narrow(2, k0, nb), u12, 1, -1);
      }
    }
  }
}

// X (batch, n, k) := A^-1 X (adjoint: A^-T X) for A = P L U given by LU (batch, n, n) and
// piv (batch, n) contiguous.
void lu_solve_inplace(Device& d, const at::Tensor& LU, const at::Tensor& piv, const at::Tensor& X, bool adjoint) {
  const int64_t n = X.size(1);
  if (!adjoint) {
    swap_rows(d, X, piv, 0, n, 0, 0, false);
    trsm_inplace(d, LU, X, /*lower=*/true, /*unit=*/true);
    trsm_inplace(d, LU, X, /*lower=*/false, /*unit=*/false);
  } else {
    trsm_inplace(d, LU.mT(), X, /*lower=*/true, /*unit=*/false);
    trsm_inplace(d, LU.mT(), X, /*lower=*/false, /*unit=*/true);
    swap_rows(d, X, piv, 0, n, 0, 0, true);
  }
}

// Cholesky A = L L^T of A (batch, n, n; any strides; the lower triangle is read and
// overwritten by L, the rest is left to the caller to clear), info (batch) int32 contiguous.
void cholesky_inplace(Device& d, const at::Tensor& A, const at::Tensor& info) {
  info.zero_();
  const int64_t B = A.size(0), n = A.size(1);
  if (B == 0 || n == 0) return;
  Kernel& panel = linalg_kernel(d, A.scalar_type(), "chol_panel_fwd");
  const size_t wg = panel_wg(n);
  // Columns [k0, k1) of rows [k0, rows): the kernel walks the columns one by one in one work-group.
  auto factor_panel = [&](int64_t k0, int64_t k1, int64_t rows) {
    launch(d, panel, Range(wg * static_cast<size_t>(B)), Range(wg), buf(A), A.stride(0), A.stride(1), A.stride(2),
           rows, k0, k1, buf(info));
  };
  if (n <= kUnblocked) {
    factor_panel(0, n, n);
    return;
  }
  for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const int64_t k1 = std::min(k0 + kBlock, n), nb = k1 - k0;
    factor_panel(k0, k1, k1);  // the diagonal block L11 only
    if (k1 < n) {
      // L21 = A21 L11^-T, i.e. L11 L21^T = A21^T: every row of L21 is its own substitution, so
      // the triangular solve runs them in parallel (the panel kernel would walk them serially).
      const at::Tensor l21 = A.narrow(1, k1, n - k1).narrow(2, k0, nb);
      trsm_inplace(d, A.narrow(1, k0, nb).narrow(2, k0, nb), l21.mT(), /*lower=*/true, /*unit=*/false);
      at::Tensor a22 = A.narrow(1, k1, n - k1).narrow(2, k1, n - k1);
      at::baddbmm_out(a22, a22, l21, l21.mT(), 1, -1);
    }
  }
}

// X (batch, n, k) := (L L^T)^-1 X for the Cholesky factor in C (batch, n, n): L = C's lower
// triangle, or L = U^T for upper (U = C's upper triangle).
void cholesky_solve_inplace(Device& d, const at::Tensor& C, const at::Tensor& X, bool upper) {
  const at::Tensor L = upper ? C.mT() : C;
  trsm_inplace(d, L, X, /*lower=*/true, /*unit=*/false);
  trsm_inplace(d, L.mT(), X, /*lower=*/false, /*unit=*/false);
}

// t itself when it is contiguous, else a contiguous temporary (copied back by finish_out).
at::Tensor contiguous_work(const at::Tensor& t) { return t.is_contiguous() ? t : at::empty(t.sizes(), t.options()); }
void finish_out(const at::Tensor& out, const at::Tensor& work) {
  if (!work.is_same(out)) out.copy_(work);
}

// ---- LU -----------------------------------------------------------------------------------

// linalg_lu_factor_ex.out(Tensor A, *, bool pivot=True, bool check_errors=False, Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info) -> (Tensor(a!) LU, Tensor(b!) pivots, Tensor(c!) info)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_factor_ex_out_ocl(const at::Tensor& A, bool pivot,
                                                                              bool check_errors, at::Tensor& LU,
                                                                              at::Tensor& pivots, at::Tensor& info) {
  OutMeta<at::meta::structured_linalg_lu_factor_ex, 3> meta(LU, pivots, info);
  meta.meta(A, pivot, check_errors);
  if (A.numel() == 0) {
    info.zero_();  // one element for a batch of (0, 0) matrices
    return {LU, pivots, info};
  }
  check_lapack_dtype(A, "lu_ocl");
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  Device& d = ocl_device(A);
  const int64_t m = A.size(-2), n = A.size(-1), B = A.numel() / (m * n), k = std::min(m, n);
  at::Tensor work = is_fortran(LU) ? LU : empty_fortran(LU.sizes(), LU.options());
  if (!work.is_same(A)) work.copy_(A);
  at::Tensor piv_w = contiguous_work(pivots), info_w = contiguous_work(info);
  lu_factor_inplace(d, work.mT().view({B, n, m}).mT(), piv_w.view({B, k}), info_w.view({B}));
  finish_out(LU, work);
  finish_out(pivots, piv_w);
  finish_out(info, info_w);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
  return {LU, pivots, info};
}

// linalg_lu_solve.out(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& linalg_lu_solve_out_ocl(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B, bool left,
                                    bool adjoint, at::Tensor& out) {
  OutMeta<at::meta::structured_linalg_lu_solve> meta(out);
  meta.meta(LU, pivots, B, left, adjoint);
  if (out.numel() == 0) return out;
  check_lapack_dtype(LU, "linalg.lu_solve_ocl");
  Device& d = ocl_device(LU);
  const int64_t n = LU.size(-1);
  const c10::IntArrayRef batch = batch_of(out);
  // Right-hand sides as columns: X A = B is A^T X^T = B^T.
  const at::Tensor rhs = left ? B : B.mT();
  const int64_t k = rhs.size(-1);
  at::Tensor X = at::empty(with_matrix(batch, n, k), out.options());
  X.copy_(rhs.expand(X.sizes()));
  const int64_t nb = X.numel() / (n * k);
  at::Tensor LU3 = LU.expand(with_matrix(batch, n, n)).reshape({nb, n, n});
  std::vector<int64_t> pb(batch.begin(), batch.end());
  pb.push_back(n);
  at::Tensor piv2 = pivots.expand(pb).reshape({nb, n}).contiguous();
  lu_solve_inplace(d, LU3, piv2, X.view({nb, n, k}), left ? adjoint : !adjoint);
  out.copy_(left ? X : X.mT());
  return out;
}

// lu_unpack.out(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) P, Tensor(b!) L, Tensor(c!) U)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_unpack_out_ocl(const at::Tensor& LU, const at::Tensor& pivots,
                                                                    bool unpack_data, bool unpack_pivots,
                                                                    at::Tensor& P, at::Tensor& L, at::Tensor& U) {
  OutMeta<at::meta::structured_lu_unpack, 3> meta(P, L, U);
  meta.meta(LU, pivots, unpack_data, unpack_pivots);
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  if (unpack_data) {
    // Which of L and U is written first matters when the other one is LU itself (linalg_lu).
    if (m > n || LU.is_same(L)) {
      at::triu_out(U, m == n ? LU : LU.narrow(-2, 0, n), 0);
      at::tril_out(L, LU, -1);
      L.diagonal(0, -2, -1).fill_(1);
    } else {
      at::tril_out(L, m == n ? LU : LU.narrow(-1, 0, m), -1);
      L.diagonal(0, -2, -1).fill_(1);
      at::triu_out(U, LU, 0);
    }
  }
  if (unpack_pivots && P.numel() > 0) {
    const int64_t B = P.numel() / (m * m);
    TORCH_CHECK(pivots.numel() == B * k, "torch.lu_unpack: expected pivots of shape (*, ", k, ") for ", B,
                " matrices, but got ", pivots.sizes());
    Device& d = ocl_device(LU);
    at::Tensor perm = at::empty(P.sizes().slice(0, P.dim() - 1), pivots.options().dtype(at::kLong));
    const at::Tensor piv = pivots.contiguous();
    Kernel& kern = linalg_kernel(d, at::kFloat, "lu_unpack_pivots");
    launch(d, kern, Range(static_cast<size_t>(B)), Range(64), buf(piv), k, k, buf(perm), m, B, d.error_buf);
    P.zero_();
    P.scatter_(-2, perm.unsqueeze(-2), 1);
  }
  return {P, L, U};
}

// linalg_lu.out(Tensor A, *, bool pivot=True, Tensor(a!) P, Tensor(b!) L, Tensor(c!) U) -> (Tensor(a!) P, Tensor(b!) L, Tensor(c!) U)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_out_ocl(const at::Tensor& A, bool pivot, at::Tensor& P,
                                                                    at::Tensor& L, at::Tensor& U) {
  OutMeta<at::meta::structured_linalg_lu, 3> meta(P, L, U);
  meta.meta(A, pivot);
  // Factor into whichever of L (m > n) and U has A's shape, then split it (as ATen does).
  const bool use_L = A.size(-2) > A.size(-1);
  at::Tensor& LU = use_L ? L : U;
  at::Tensor pivots = at::empty({0}, A.options().dtype(at::kInt)), info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(LU, pivots, info, A, pivot, false);
  at::lu_unpack_out(P, L, U, LU, pivots, true, pivot);
  return {P, L, U};
}

// ---- solve, inverse, determinants (ATen's compositions over lu_factor / lu_solve) ------------

// _linalg_solve_ex.result(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots, Tensor(d!) info) -> (Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots, Tensor(d!) info)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_solve_ex_result_ocl(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors, at::Tensor& result, at::Tensor& LU,
    at::Tensor& pivots, at::Tensor& info) {
  OutMeta<at::meta::structured__linalg_solve_ex, 4> meta(result, LU, pivots, info);
  meta.meta(A, B, left, check_errors);
  // LU is the factorisation of A itself, whatever A's layout: the CPU's (torch 2.13) and
  // what ATen's backward formula (linalg_solve_backward) solves with.
  at::linalg_lu_factor_ex_out(LU, pivots, info, A, true, false);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(LU, B);
  at::Tensor result_ = vector_case ? result.unsqueeze(-1) : result;
  const at::Tensor B_ = vector_case ? B.unsqueeze(-1) : B;
  at::linalg_lu_solve_out(result_, LU, pivots, B_, left, false);
  return {result, LU, pivots, info};
}

// linalg_inv_ex.inverse(Tensor A, *, bool check_errors=False, Tensor(a!) inverse, Tensor(b!) info) -> (Tensor(a!) inverse, Tensor(b!) info)
std::tuple<at::Tensor&, at::Tensor&> linalg_inv_ex_inverse_ocl(const at::Tensor& A, bool check_errors,
                                                                at::Tensor& inverse, at::Tensor& info) {
  OutMeta<at::meta::structured_linalg_inv_ex, 2> meta(inverse, info);
  meta.meta(A, check_errors);
  inverse.zero_();
  inverse.diagonal(0, -2, -1).fill_(1);
  at::linalg_solve_ex_out(inverse, info, A, inverse, true, false);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
  return {inverse, info};
}

// det (slogdet == false: out0 = det) or (out0 = sign, out1 = log|det|) from an LU factorisation.
void lu_det(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& out0, const at::Tensor* out1) {
  const int64_t B = out0.numel(), n = LU.size(-1);
  if (B == 0) return;
  Device& d = ocl_device(LU);
  const at::Tensor lu3 = LU.reshape({B, n, n}), piv = pivots.reshape({B, n}).contiguous();
  at::Tensor w0 = contiguous_work(out0), w1 = out1 ? contiguous_work(*out1) : w0;
  Kernel& k = linalg_kernel(d, LU.scalar_type(), "lu_det_fwd");
  launch(d, k, Range(static_cast<size_t>(B)), Range(64), buf(lu3), lu3.stride(0), lu3.stride(1), lu3.stride(2),
         buf(piv), n, n, B, buf(w0), buf(w1), static_cast<cl_int>(out1 != nullptr));
  finish_out(out0, w0);
  if (out1) finish_out(*out1, w1);
}

// _linalg_det.result(Tensor A, *, Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots) -> (Tensor(a!) result, Tensor(b!) LU, Tensor(c!) pivots)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_det_result_ocl(const at::Tensor& A, at::Tensor& result,
                                                                        at::Tensor& LU, at::Tensor& pivots) {
  OutMeta<at::meta::structured__linalg_det, 3> meta(result, LU, pivots);
  meta.meta(A);
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  // det(A^T) = det(A), and a row-major A is a column-major A^T (ATen's choice; its backward relies on it).
  at::linalg_lu_factor_ex_out(LU, pivots, info, A.is_contiguous() ? A.mT() : A, true, false);
  lu_det(LU, pivots, result, nullptr);
  return {result, LU, pivots};
}

// _linalg_slogdet.sign(Tensor A, *, Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) pivots) -> (Tensor(a!) sign, Tensor(b!) logabsdet, Tensor(c!) LU, Tensor(d!) pivots)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_slogdet_sign_ocl(const at::Tensor& A,
                                                                                      at::Tensor& sign,
                                                                                      at::Tensor& logabsdet,
                                                                                      at::Tensor& LU,
                                                                                      at::Tensor& pivots) {
  OutMeta<at::meta::structured__linalg_slogdet, 4> meta(sign, logabsdet, LU, pivots);
  meta.meta(A);
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(LU, pivots, info, A.is_contiguous() ? A.mT() : A, true, false);
  lu_det(LU, pivots, sign, &logabsdet);
  return {sign, logabsdet, LU, pivots};
}

// ---- triangular solves --------------------------------------------------------------------

// linalg_solve_triangular.out(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False, Tensor(a!) out) -> Tensor(a!)
at::Tensor& linalg_solve_triangular_out_ocl(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                            bool unitriangular, at::Tensor& out) {
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  // As on the CPU: the result has A's dtype (B is converted), an out of another dtype raises.
  TORCH_CHECK(out.scalar_type() == A.scalar_type(), "expected scalar type ", A.scalar_type(), " but found ",
              out.scalar_type());
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, nullptr);
  const std::vector<int64_t> shape = B_.sizes().vec();
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  check_lapack_dtype(A, "triangular_solve_ocl");
  Device& d = ocl_device(A);
  // X A = B is A^T X^T = B^T (and A^T is lower where A is upper).
  const at::Tensor rhs = left ? B_ : B_.mT(), T = left ? A_ : A_.mT();
  const int64_t n = rhs.size(-2), k = rhs.size(-1), nb = out.numel() / (n * k);
  at::Tensor X = at::empty(rhs.sizes(), A.options());
  X.copy_(rhs);
  trsm_inplace(d, T.reshape({nb, n, n}), X.view({nb, n, k}), left ? !upper : upper, unitriangular);
  out.copy_(left ? X : X.mT());
  return out;
}

// linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> Tensor
at::Tensor linalg_solve_triangular_ocl(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                                       bool unitriangular) {
  at::Tensor out = at::empty({0}, A.options());
  linalg_solve_triangular_out_ocl(A, B, upper, left, unitriangular, out);
  return out;
}

// triangular_solve.X(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *, Tensor(a!) X, Tensor(b!) M) -> (Tensor(a!) solution, Tensor(b!) cloned_coefficient)
std::tuple<at::Tensor&, at::Tensor&> triangular_solve_X_ocl(const at::Tensor& self, const at::Tensor& A, bool upper,
                                                            bool transpose, bool unitriangular, at::Tensor& X,
                                                            at::Tensor& M) {
  TORCH_WARN_ONCE("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be "
                  "removed in a future PyTorch release.");
  OutMeta<at::meta::structured_triangular_solve, 2> meta(X, M);
  meta.meta(self, A, upper, transpose, unitriangular);
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(self, A, "triangular_solve");
  M.copy_(A_);
  if (X.numel() == 0) return {X, M};
  check_lapack_dtype(A, "triangular_solve_ocl");
  Device& d = ocl_device(A);
  const int64_t n = B_.size(-2), k = B_.size(-1), nb = X.numel() / (n * k);
  at::Tensor W = B_.clone(at::MemoryFormat::Contiguous);
  const at::Tensor T = (transpose ? A_.mT() : A_).reshape({nb, n, n});
  trsm_inplace(d, T, W.view({nb, n, k}), transpose ? upper : !upper, unitriangular);
  X.copy_(W);
  return {X, M};
}

// ---- Cholesky -------------------------------------------------------------------------------

// linalg_cholesky_ex.L(Tensor self, *, bool upper=False, bool check_errors=False, Tensor(a!) L, Tensor(b!) info) -> (Tensor(a!) L, Tensor(b!) info)
std::tuple<at::Tensor&, at::Tensor&> linalg_cholesky_ex_L_ocl(const at::Tensor& A, bool upper, bool check_errors,
                                                              at::Tensor& L, at::Tensor& info) {
  OutMeta<at::meta::structured_linalg_cholesky_ex, 2> meta(L, info);
  meta.meta(A, upper, check_errors);
  if (L.numel() == 0) {
    info.zero_();
    return {L, info};
  }
  check_lapack_dtype(A, "cholesky_ocl");
  Device& d = ocl_device(A);
  const int64_t n = A.size(-1), B = A.numel() / (n * n);
  at::Tensor work = is_fortran(L) ? L : empty_fortran(L.sizes(), L.options());
  if (!work.is_same(A)) work.copy_(A);
  at::Tensor info_w = contiguous_work(info);
  const at::Tensor W = work.mT().view({B, n, n}).mT();
  // The upper factor U (A = U^T U) is the lower factor of A^T: the same kernels on the transposed view.
  cholesky_inplace(d, upper ? W.mT() : W, info_w.view({B}));
  if (upper)
    work.triu_();
  else
    work.tril_();
  finish_out(L, work);
  finish_out(info, info_w);
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
  return {L, info};
}

// cholesky(Tensor self, bool upper=False) -> Tensor
at::Tensor cholesky_ocl(const at::Tensor& self, bool upper) {
  TORCH_WARN_ONCE("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.");
  if (self.numel() == 0) return at::empty_like(self, at::MemoryFormat::Contiguous);
  at::native::squareCheckInputs(self, "cholesky");
  auto [L, info] = at::linalg_cholesky_ex(self, upper, false);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return L;
}

// cholesky.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cholesky_out_ocl(const at::Tensor& self, bool upper, at::Tensor& out) {
  at::Tensor L = cholesky_ocl(self, upper);
  at::native::resize_output(out, L.sizes());
  out.copy_(L);
  return out;
}

// _cholesky_solve_helper(Tensor self, Tensor A, bool upper) -> Tensor
// (cholesky_solve's broadcasting and checks are ATen's composite; self and A come broadcast.)
at::Tensor cholesky_solve_helper_ocl(const at::Tensor& self, const at::Tensor& A, bool upper) {
  at::Tensor X = self.clone(at::MemoryFormat::Contiguous);
  if (X.numel() == 0) return X;
  check_lapack_dtype(self, "cholesky_solve_ocl");
  const int64_t n = X.size(-2), k = X.size(-1), nb = X.numel() / (n * k);
  cholesky_solve_inplace(ocl_device(self), A.reshape({nb, n, n}), X.view({nb, n, k}), upper);
  return X;
}

// cholesky_inverse.out(Tensor self, bool upper=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cholesky_inverse_out_ocl(const at::Tensor& self, bool upper, at::Tensor& out) {
  at::native::squareCheckInputs(self, "cholesky_inverse");
  at::native::checkSameDevice("cholesky_inverse", out, self);
  at::native::checkLinalgCompatibleDtype("cholesky_inverse", out, self);
  const int64_t n = self.size(-1);
  at::Tensor X = at::empty(self.sizes(), self.options());
  X.zero_();
  X.diagonal(0, -2, -1).fill_(1);
  if (X.numel() > 0) {
    check_lapack_dtype(self, "cholesky_inverse_out_ocl");
    const int64_t nb = X.numel() / (n * n);
    cholesky_solve_inplace(ocl_device(self), self.reshape({nb, n, n}), X.view({nb, n, n}), upper);
  }
  at::native::resize_output(out, X.sizes());
  out.copy_(X);
  // LAPACK's potri fails at the first exactly zero diagonal element of the factor: the same
  // info (1-based, 0 for none) and error; reading it needs the host, as on the CPU and CUDA.
  if (self.numel() > 0) {
    const at::Tensor zero = self.diagonal(0, -2, -1) == 0;
    const at::Tensor first = zero.to(at::kInt).argmax(-1) + 1;
    const at::Tensor info = at::where(zero.any(-1), first, at::zeros_like(first)).to(at::kInt).contiguous();
    at::_linalg_check_errors(info, "cholesky_inverse", self.dim() == 2);
  }
  return out;
}

// cholesky_inverse(Tensor self, bool upper=False) -> Tensor
at::Tensor cholesky_inverse_ocl(const at::Tensor& self, bool upper) {
  at::Tensor out = at::empty({0}, self.options());
  cholesky_inverse_out_ocl(self, upper, out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "linalg_lu_factor_ex.out", linalg_lu_factor_ex_out_ocl);
  OCL_IMPL(m, "linalg_lu_solve.out", linalg_lu_solve_out_ocl);
  OCL_IMPL(m, "lu_unpack.out", lu_unpack_out_ocl);
  OCL_IMPL(m, "linalg_lu.out", linalg_lu_out_ocl);
  OCL_IMPL(m, "_linalg_solve_ex.result", linalg_solve_ex_result_ocl);
  OCL_IMPL(m, "linalg_inv_ex.inverse", linalg_inv_ex_inverse_ocl);
  OCL_IMPL(m, "_linalg_det.result", linalg_det_result_ocl);
  OCL_IMPL(m, "_linalg_slogdet.sign", linalg_slogdet_sign_ocl);
  OCL_IMPL(m, "linalg_solve_triangular", linalg_solve_triangular_ocl);
  OCL_IMPL(m, "linalg_solve_triangular.out", linalg_solve_triangular_out_ocl);
  OCL_IMPL(m, "triangular_solve.X", triangular_solve_X_ocl);
  OCL_IMPL(m, "linalg_cholesky_ex.L", linalg_cholesky_ex_L_ocl);
  OCL_IMPL(m, "cholesky", cholesky_ocl);
  OCL_IMPL(m, "cholesky.out", cholesky_out_ocl);
  OCL_IMPL(m, "_cholesky_solve_helper", cholesky_solve_helper_ocl);
  OCL_IMPL(m, "cholesky_inverse", cholesky_inverse_ocl);
  OCL_IMPL(m, "cholesky_inverse.out", cholesky_inverse_out_ocl);
}

}  // namespace torch_ocl
