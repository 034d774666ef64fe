// Householder QR and what is built on it, in float32 and float64 (the CPU's LAPACK takes no
// other): geqrf (LAPACK's storage and dlarfg's signs, so results match the CPU up to
// rounding), linalg_householder_product (orgqr), ormqr, linalg_qr, linalg_lstsq (the "gels"
// driver, as PyTorch runs it on CUDA) and linalg_matrix_exp (Taylor polynomials with scaling
// and squaring; also float16/bfloat16, computed in float). Factorisations and products with Q
// are blocked: kBlock reflectors per step by kernels/qr.cl (one work-group per matrix), the
// rest of the matrix updated through the compact-WY form I - V T V^T by the device GEMM.
// Matrices are worked on as (batch, rows, cols) views of any strides; outs of any layout.
#include "../aten/OutMeta.h"
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/linalg_qr_meta.h>
#include <ATen/ops/linalg_solve_triangular.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace torch_ocl {
namespace {

constexpr int64_t kBlock = 32;      // reflectors per step of the blocked algorithms (the panel width)
constexpr int64_t kUnblocked = 64;  // at most this many columns (and reflectors): one launch, no GEMM

// LAPACK's dtypes only; others raise the CPU's NotImplementedError ("geqrf_cpu" -> "geqrf_ocl").
void check_lapack_dtype(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, "\"", op,
                              "\" not implemented for '", toString(t.scalar_type()), "'");
  check_dtype_supported(ocl_device(t), t.scalar_type(), op);
}

Kernel& qr_kernel(Device& d, at::ScalarType t, const char* name) {
  return get_kernel(d, "qr", "-DDT=" + cl_type_name(t), name);
}

// Work-group size for one matrix of `rows` rows: a power of two in [32, 256].
size_t qr_wg(int64_t rows) {
  size_t w = 32;
  while (static_cast<int64_t>(w) < rows && w < 256) w <<= 1;
  return w;
}
// Work-items per column in apply_reflector: a power of two covering the rows, at most 32.
cl_int qr_lanes(int64_t rows) {
  cl_int l = 1;
  while (l < rows && l < 32) l <<= 1;
  return l;
}

// An empty tensor like `sizes` stored batched column-major (each matrix Fortran-contiguous).
at::Tensor empty_fortran(c10::IntArrayRef sizes, const at::TensorOptions& opts) {
  return at::empty_strided(sizes, at::native::batched_matrix_contiguous_strides(sizes, /*f_contig=*/true), opts);
}
bool is_fortran(const at::Tensor& t) { return t.mT().is_contiguous(); }
int64_t batch_count(const at::Tensor& t) {
  int64_t b = 1;
  for (int64_t i = 0; i < t.dim() - 2; ++i) b *= t.size(i);
  return b;
}
std::vector<int64_t> with_dims(c10::IntArrayRef batch, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> s(batch.begin(), batch.end());
  s.insert(s.end(), tail);
  return s;
}

// ---- building blocks on (batch, rows, cols) views ------------------------------------------

// Columns [j0, j1) of A (B, m, n) factored by geqrf_panel, each reflector applied to the
// columns up to c_end; tau (B, >= j1) with unit inner stride.
void factor_panel(Device& d, const at::Tensor& A, const at::Tensor& tau, int64_t j0, int64_t j1, int64_t c_end) {
  const int64_t B = A.size(0), m = A.size(1);
  Kernel& k = qr_kernel(d, A.scalar_type(), "geqrf_panel");
  const size_t wg = qr_wg(m - j0), bytes = wg * A.element_size();
  launch(d, k, Range(wg * static_cast<size_t>(B)), Range(wg), buf(A), A.stride(0), A.stride(1), A.stride(2), m, j0,
         j1, c_end, buf(tau), tau.stride(0), qr_lanes(m - j0), LocalMem{bytes}, LocalMem{bytes});
}

// The explicit V (B, m - j0, j1 - j0) of the reflectors in A's columns [j0, j1): unit lower
// trapezoidal, column-major.
at::Tensor form_v(Device& d, const at::Tensor& A, int64_t j0, int64_t j1) {
  const int64_t B = A.size(0), rows = A.size(1) - j0, nb = j1 - j0;
  at::Tensor V = at::empty({B, nb, rows}, A.options()).mT();
  Kernel& k = qr_kernel(d, A.scalar_type(), "qr_form_v");
  launch(d, k, Range(static_cast<size_t>(rows * nb), static_cast<size_t>(B)), local_wu(rows * nb), buf(A),
         A.stride(0), A.stride(1), A.stride(2), j0, j0, rows, nb, buf(V), V.stride(0), V.stride(1), V.stride(2), B);
  return V;
}

// T (B, nb, nb) with H_0 ... H_{nb-1} = I - V T V^T for V (B, rows, nb) and tau (B, nb).
at::Tensor form_t(Device& d, const at::Tensor& V, const at::Tensor& tau) {
  const int64_t B = V.size(0), nb = V.size(2);
  const at::Tensor G = at::bmm(V.mT(), V);
  at::Tensor T = at::empty({B, nb, nb}, V.options());
  Kernel& k = qr_kernel(d, V.scalar_type(), "qr_larft");
  launch(d, k, Range(64 * static_cast<size_t>(B)), Range(64), buf(G), G.stride(0), G.stride(1), G.stride(2),
         buf(tau), tau.stride(0), nb, buf(T), T.stride(0), T.stride(1), T.stride(2));
  return T;
}

// X[:, j0:, c0:] := H^T X (qt) or H X for the block reflector H = H_j0 ... H_{j1-1} = I - V T V^T
// of the reflectors in Vs's columns [j0, j1): three GEMMs.
void apply_block(Device& d, const at::Tensor& Vs, const at::Tensor& tau, const at::Tensor& X, int64_t j0,
                 int64_t j1, int64_t c0, bool qt) {
  const int64_t m = X.size(1), p = X.size(2);
  if (c0 >= p) return;
  const at::Tensor V = form_v(d, Vs, j0, j1);
  const at::Tensor T = form_t(d, V, tau.narrow(1, j0, j1 - j0));
  at::Tensor X2 = X.narrow(1, j0, m - j0).narrow(2, c0, p - c0);
  at::Tensor W = at::bmm(V.mT(), X2);
  W = at::bmm(qt ? T.mT() : T, W);
  at::baddbmm_out(X2, X2, V, W, 1, -1);
}

// X (B, m, p) := Q X (backward) or Q^T X by the unblocked kernel, for the k reflectors in V's
// first columns; orgqr: X is first set to the identity (LAPACK orgqr).
void apply_unblocked(Device& d, const at::Tensor& V, const at::Tensor& tau, const at::Tensor& X, int64_t k,
                     bool backward, bool orgqr) {
  const int64_t B = X.size(0), m = X.size(1), p = X.size(2);
  Kernel& kern = qr_kernel(d, X.scalar_type(), "qr_apply");
  const size_t wg = qr_wg(m);
  launch(d, kern, Range(wg * static_cast<size_t>(B)), Range(wg), buf(V), V.stride(0), V.stride(1), V.stride(2),
         buf(tau), tau.stride(0), k, buf(X), X.stride(0), X.stride(1), X.stride(2), m, p,
         static_cast<cl_int>(backward), static_cast<cl_int>(orgqr), qr_lanes(m), LocalMem{wg * X.element_size()});
}

// The one-launch kernel (a work-group per matrix, reflectors applied one after another) for at
// most kUnblocked columns when the reflectors are few too, or the batch alone fills the device;
// else the blocked GEMM path. A single matrix with many reflectors and a few right-hand sides
// (lstsq 8192x256 with 16 of them) took 104 ms in one work-group on an H200, against cuSOLVER's
// 2.7 ms for the whole solve.
constexpr int64_t kBatchFillsDevice = 64;
bool use_unblocked(int64_t cols, int64_t reflectors, int64_t batch) {
  return cols <= kUnblocked && (reflectors <= kUnblocked || batch >= kBatchFillsDevice);
}

// Householder QR in place (LAPACK geqrf) of A (B, m, n; any strides): R on and above the
// diagonal, the reflectors below it; tau (B, min(m, n)) contiguous.
void geqrf_inplace(Device& d, const at::Tensor& A, const at::Tensor& tau) {
  const int64_t B = A.size(0), m = A.size(1), n = A.size(2), k = std::min(m, n);
  if (B == 0 || k == 0) return;
  if (use_unblocked(n, k, B)) {
    factor_panel(d, A, tau, 0, k, n);
    return;
  }
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t j1 = std::min(j0 + kBlock, k);
    factor_panel(d, A, tau, j0, j1, j1);
    apply_block(d, A, tau, A, j0, j1, j1, /*qt=*/true);
  }
}

// X (B, m, p) := Q^T X (qt) or Q X for Q = H_0 ... H_{k-1}, the reflectors in the first k = tau.size(1)
// columns of V (B, m, >= k; any strides), tau (B, k) contiguous (LAPACK ormqr, side 'L').
void apply_q_inplace(Device& d, const at::Tensor& V, const at::Tensor& tau, const at::Tensor& X, bool qt) {
  const int64_t B = X.size(0), m = X.size(1), p = X.size(2), k = tau.size(1);
  if (B == 0 || m == 0 || p == 0 || k == 0) return;
  if (use_unblocked(p, k, B)) {
    apply_unblocked(d, V, tau, X, k, !qt, false);
    return;
  }
  const int64_t blocks = (k + kBlock - 1) / kBlock;
  for (int64_t s = 0; s < blocks; ++s) {
    const int64_t j0 = (qt ? s : blocks - 1 - s) * kBlock, j1 = std::min(j0 + kBlock, k);
    apply_block(d, V, tau, X, j0, j1, 0, qt);
  }
}

// Q (B, m, nq) := the first nq columns of H_0 ... H_{k-1} (LAPACK orgqr), k = tau.size(1) <= nq,
// the reflectors in V (B, m, >= k; any strides).
void orgqr_inplace(Device& d, const at::Tensor& V, const at::Tensor& tau, const at::Tensor& Q) {
  const int64_t nq = Q.size(2), k = tau.size(1);
  if (Q.numel() == 0) return;
  if (k > 0 && use_unblocked(nq, k, Q.size(0))) {
    apply_unblocked(d, V, tau, Q, k, /*backward=*/true, /*orgqr=*/true);
    return;
  }
  Q.zero_();
  Q.diagonal(0, 1, 2).fill_(1);
  const int64_t blocks = (k + kBlock - 1) / kBlock;
  for (int64_t s = blocks - 1; s >= 0; --s) {
    const int64_t j0 = s * kBlock, j1 = std::min(j0 + kBlock, k);
    // Columns before j0 are still unit columns on the rows this block touches.
    apply_block(d, V, tau, Q, j0, j1, j0, /*qt=*/false);
  }
}

// geqrf of A (..., m, n): the factored copy (batched column-major, as LAPACK leaves it) and tau.
std::tuple<at::Tensor, at::Tensor> geqrf_work(const at::Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), B = batch_count(A);
  at::Tensor QR = empty_fortran(A.sizes(), A.options());
  QR.copy_(A);
  at::Tensor tau = at::empty(with_dims(A.sizes().slice(0, A.dim() - 2), {k}), A.options());
  if (QR.numel() > 0 && k > 0) geqrf_inplace(ocl_device(A), QR.view({B, m, n}), tau.view({B, k}));
  return {QR, tau};
}

// ---- geqrf, householder_product, ormqr -----------------------------------------------------

// geqrf(Tensor self) -> (Tensor a, Tensor tau)
std::tuple<at::Tensor, at::Tensor> geqrf_ocl(const at::Tensor& self) {
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  check_lapack_dtype(self, "geqrf_ocl");
  return geqrf_work(self);
}

// geqrf.a(Tensor self, *, Tensor(a!) a, Tensor(b!) tau) -> (Tensor(a!) a, Tensor(b!) tau)
std::tuple<at::Tensor&, at::Tensor&> geqrf_a_ocl(const at::Tensor& self, at::Tensor& a, at::Tensor& tau) {
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  at::native::checkSameDevice("torch.geqrf", a, self, "a");
  at::native::checkSameDevice("torch.geqrf", tau, self, "tau");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", a, self, "a");
  at::native::checkLinalgCompatibleDtype("torch.geqrf", tau, self, "tau");
  check_lapack_dtype(self, "geqrf_ocl");
  auto [QR, tau_] = geqrf_work(self);
  at::native::resize_output(a, QR.sizes());
  a.copy_(QR);
  at::native::resize_output(tau, tau_.sizes());
  tau.copy_(tau_);
  return {a, tau};
}

// The CPU's argument checks of linalg.householder_product (BatchLinearAlgebra.cpp).
void check_householder(const at::Tensor& input, const at::Tensor& tau) {
  TORCH_CHECK(input.dim() >= 2, "torch.linalg.householder_product: input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1),
              "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1),
              "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1,
              "torch.linalg.householder_product: Expected tau to have one dimension less than input, but got "
              "tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    const auto expected = input.sizes().slice(0, input.dim() - 2), actual = tau.sizes().slice(0, tau.dim() - 1);
    TORCH_CHECK(actual.equals(expected),
                "torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                "input.shape[:-2], but got ",
                actual);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), "torch.linalg.householder_product: tau dtype ",
              tau.scalar_type(), " does not match input dtype ", input.scalar_type());
  at::native::checkSameDevice("torch.linalg.householder_product", tau, input, "tau");
}

at::Tensor householder_work(const at::Tensor& input, const at::Tensor& tau) {
  check_lapack_dtype(input, "orgqr_ocl");
  const int64_t m = input.size(-2), n = input.size(-1), k = tau.size(-1), B = batch_count(input);
  at::Tensor Q = empty_fortran(input.sizes(), input.options());
  if (Q.numel() > 0)
    orgqr_inplace(ocl_device(input), input.reshape({B, m, n}), tau.reshape({B, k}).contiguous(), Q.view({B, m, n}));
  return Q;
}

// linalg_householder_product(Tensor input, Tensor tau) -> Tensor
at::Tensor linalg_householder_product_ocl(const at::Tensor& input, const at::Tensor& tau) {
  check_householder(input, tau);
  return householder_work(input, tau);
}

// linalg_householder_product.out(Tensor input, Tensor tau, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& linalg_householder_product_out_ocl(const at::Tensor& input, const at::Tensor& tau, at::Tensor& out) {
  check_householder(input, tau);
  at::native::checkSameDevice("torch.linalg.householder_product", out, input);
  at::native::checkLinalgCompatibleDtype("torch.linalg.householder_product", out, input);
  const at::Tensor Q = householder_work(input, tau);
  at::native::resize_output(out, Q.sizes());
  out.copy_(Q);
  return out;
}

// The CPU's argument checks of ormqr (BatchLinearAlgebra.cpp, torch 2.13).
void check_ormqr(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left) {
  TORCH_CHECK(input.dim() >= 2, "torch.ormqr: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, "torch.ormqr: other must have at least 2 dimensions.");
  const int64_t side = left ? -2 : -1;
  TORCH_CHECK(other.size(side) >= tau.size(-1), "torch.ormqr: other.shape[", side,
              "] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(other.size(side) == input.size(-2), "torch.ormqr: other.shape[", side,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= input.size(-1), "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  TORCH_CHECK(tau.size(-1) == std::min(other.size(side), input.size(-1)), "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[",
              side, "], input.shape[-1])");
  TORCH_CHECK(input.dim() - tau.dim() == 1,
              "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal to ", tau.dim(),
              " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(input.dim() == other.dim(),
              "torch.ormqr: Expected other to have the same number of dimensions as input, but got other.ndim equal "
              "to ",
              other.dim(), " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    const auto expected = input.sizes().slice(0, input.dim() - 2);
    const auto tau_batch = tau.sizes().slice(0, tau.dim() - 1), other_batch = other.sizes().slice(0, other.dim() - 2);
    TORCH_CHECK(tau_batch.equals(expected),
                "torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but got ", tau_batch);
    TORCH_CHECK(other_batch.equals(expected),
                "torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but got ",
                other_batch);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and tau to have the same dtype, but input has dtype", input.scalar_type(),
              " and tau has dtype ", tau.scalar_type());
  TORCH_CHECK(other.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and other to have the same dtype, but input has dtype", input.scalar_type(),
              " and other has dtype ", other.scalar_type());
  at::native::checkSameDevice("torch.ormqr", tau, input, "tau");
  at::native::checkSameDevice("torch.ormqr", other, input, "other");
}

at::Tensor ormqr_work(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                      bool transpose) {
  check_lapack_dtype(input, "ormqr_ocl");
  at::Tensor X = empty_fortran(other.sizes(), other.options());
  X.copy_(other);
  if (X.numel() == 0) return X;
  const int64_t m = input.size(-2), n = input.size(-1), k = tau.size(-1), B = batch_count(other);
  const at::Tensor X3 = X.view({B, other.size(-2), other.size(-1)});
  // C Q = (Q^T C^T)^T and C Q^T = (Q C^T)^T: the right side is the left side of C^T.
  apply_q_inplace(ocl_device(input), input.reshape({B, m, n}), tau.reshape({B, k}).contiguous(),
                  left ? X3 : X3.mT(), left ? transpose : !transpose);
  return X;
}

// ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor
at::Tensor ormqr_ocl(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                     bool transpose) {
  check_ormqr(input, tau, other, left);
  return ormqr_work(input, tau, other, left, transpose);
}

// ormqr.out(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& ormqr_out_ocl(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                          bool transpose, at::Tensor& out) {
  check_ormqr(input, tau, other, left);
  TORCH_CHECK(out.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and result to have the same dtype, but input has dtype",
              input.scalar_type(), " and result has dtype ", out.scalar_type());
  at::native::checkSameDevice("torch.ormqr", out, input);
  const at::Tensor X = ormqr_work(input, tau, other, left, transpose);
  at::native::resize_output(out, X.sizes());
  out.copy_(X);
  return out;
}

// ---- linalg_qr -----------------------------------------------------------------------------

// linalg_qr.out(Tensor A, str mode="reduced", *, Tensor(a!) Q, Tensor(b!) R) -> (Tensor(a!) Q, Tensor(b!) R)
std::tuple<at::Tensor&, at::Tensor&> linalg_qr_out_ocl(const at::Tensor& A, c10::string_view mode, at::Tensor& Q,
                                                       at::Tensor& R) {
  OutMeta<at::meta::structured_linalg_qr, 2> meta(Q, R);
  meta.meta(A, mode);
  check_lapack_dtype(A, "geqrf_ocl");
  const auto [compute_q, reduced] = at::native::_parse_qr_mode(mode);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), B = batch_count(A);
  auto [QR, tau] = geqrf_work(A);
  at::triu_out(R, QR.narrow(-2, 0, reduced || !compute_q ? k : m), 0);
  if (compute_q) {
    at::Tensor work = is_fortran(Q) ? Q : empty_fortran(Q.sizes(), Q.options());
    if (work.numel() > 0)
      orgqr_inplace(ocl_device(A), QR.view({B, m, n}), tau.view({B, k}), work.view({B, m, reduced ? k : m}));
    if (!work.is_same(Q)) Q.copy_(work);
  }
  return {Q, R};
}

// ---- linalg_lstsq --------------------------------------------------------------------------

// linalg_lstsq.out(Tensor self, Tensor b, float? rcond=None, *, str? driver=None, Tensor(a!) solution, Tensor(b!) residuals, Tensor(c!) rank, Tensor(d!) singular_values) -> (Tensor(a!) solution, Tensor(b!) residuals, Tensor(c!) rank, Tensor(d!) singular_values)
// As PyTorch on CUDA: "gels" is the default and the only driver; A = QR (m >= n) gives
// X = R^-1 (Q^T B)[:n] and, for m > n, residuals = the column sums of (Q^T B)[n:]^2; m < n gives
// the minimum-norm solution X = Q [R^-T B; 0] from A^T = QR. rank and singular_values stay
// empty (gels computes neither) and no rank check is made (a singular R gives inf / nan).
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> linalg_lstsq_out_ocl(
    const at::Tensor& input, const at::Tensor& other, std::optional<double> rcond,
    std::optional<c10::string_view> driver, at::Tensor& solution, at::Tensor& residuals, at::Tensor& rank,
    at::Tensor& singular_values) {
  TORCH_CHECK(input.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  TORCH_CHECK(input.scalar_type() == other.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype ",
              input.scalar_type(), " and other's dtype ", other.scalar_type());
  const int64_t dim_diff = input.dim() - other.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
              "other.dim()) <= 1");
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(input, other);
  const at::Tensor other_2d = vector_case ? other.unsqueeze(-1) : other;
  TORCH_CHECK(input.size(-2) == other_2d.size(-2),
              vector_case ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                          : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  at::native::checkSameDevice("torch.linalg.lstsq", other, input, "other");
  at::native::checkSameDevice("torch.linalg.lstsq", solution, input, "solution");
  at::native::checkSameDevice("torch.linalg.lstsq", residuals, input, "residuals");
  at::native::checkSameDevice("torch.linalg.lstsq", rank, input, "rank");
  at::native::checkSameDevice("torch.linalg.lstsq", singular_values, input, "singular_values");
  const at::ScalarType real_dtype = c10::toRealValueType(input.scalar_type());
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", solution, input, "solution");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", residuals.scalar_type(), real_dtype, "solution");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", rank.scalar_type(), at::kLong, "rank");
  at::native::checkLinalgCompatibleDtype("torch.linalg.lstsq", singular_values.scalar_type(), real_dtype,
                                         "singular_values");
  if (driver.has_value()) {
    std::string name(driver.value());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    TORCH_CHECK(name == "gels", "torch.linalg.lstsq: `driver` other than `gels` is not supported on ocl (as on CUDA)");
  }
  // The CPU's order: the default rcond (which only float and double have) before the dtype dispatch.
  if (!rcond.has_value()) (void)at::native::_get_epsilon(real_dtype);
  check_lapack_dtype(input, "linalg_lstsq_ocl");

  const std::vector<int64_t> batch = at::native::broadcast_batch_size(input, other_2d, input.dim() - 2);
  const int64_t m = input.size(-2), n = input.size(-1), nrhs = other_2d.size(-1), L = std::max(m, n);
  int64_t Bn = 1;
  for (int64_t s : batch) Bn *= s;
  const at::Tensor A = input.expand(with_dims(batch, {m, n}));
  // X holds B, then the solution in its first n rows (as LAPACK's gels leaves it).
  at::Tensor X = empty_fortran(with_dims(batch, {L, nrhs}), input.options());
  X.narrow(-2, 0, m).copy_(other_2d.expand(with_dims(batch, {m, nrhs})));
  const at::Tensor X3 = X.view({Bn, L, nrhs});
  at::Tensor res = at::empty({0}, input.options().dtype(real_dtype));
  Device& d = ocl_device(input);
  if (n == 0) {
    X.zero_();  // LAPACK gels's quick return: no unknowns, zero solution and residuals
  } else if (m >= n) {
    at::Tensor W = empty_fortran(A.sizes(), A.options());
    W.copy_(A);
    const at::Tensor W3 = W.view({Bn, m, n}), tau = at::empty({Bn, n}, A.options());
    geqrf_inplace(d, W3, tau);
    apply_q_inplace(d, W3, tau, X3, /*qt=*/true);
    at::Tensor top = X3.narrow(1, 0, n);
    top.copy_(at::linalg_solve_triangular(W3.narrow(1, 0, n), top, /*upper=*/true));
  } else {
    at::Tensor W = empty_fortran(with_dims(batch, {n, m}), A.options());
    W.copy_(A.mT());
    const at::Tensor W3 = W.view({Bn, n, m}), tau = at::empty({Bn, m}, A.options());
    geqrf_inplace(d, W3, tau);
    at::Tensor top = X3.narrow(1, 0, m);
    top.copy_(at::linalg_solve_triangular(W3.narrow(1, 0, m).mT(), top, /*upper=*/false));
    X3.narrow(1, m, n - m).zero_();
    apply_q_inplace(d, W3, tau, X3, /*qt=*/false);
  }
  if (m > n) {  // rows n: of Q^T B (untouched by the solve)
    const at::Tensor tail = X.narrow(-2, n, m - n);
    res = at::sum(tail * tail, {-2}, false, real_dtype);
  }
  const at::Tensor full = vector_case ? X.squeeze(-1) : X;
  const at::Tensor sol = full.narrow(vector_case ? -1 : -2, 0, n);

  // The outs as the CPU fills them: an empty solution (or one already of the full shape, in
  // LAPACK's layout) takes the result in its own storage, narrowed to the solution's rows, and
  // leaves rank and singular_values alone; any other solution gets a copy, and rank and
  // singular_values are emptied.
  // (The CPU's test of "the full shape" leaves nrhs out for a 2-D b: such a solution is copied.)
  const bool layout_ok = vector_case ? solution.is_contiguous() : (solution.dim() >= 2 && is_fortran(solution));
  const bool full_shape = solution.sizes().equals(full.sizes()) && (vector_case || other.dim() > 2);
  const bool direct =
      solution.scalar_type() == input.scalar_type() && (solution.numel() == 0 || (layout_ok && full_shape));
  if (direct) {
    if (solution.numel() == 0) {
      solution.set_(full);
    } else {
      solution.copy_(full);
    }
    const at::Tensor view = solution.narrow(vector_case ? -1 : -2, 0, n);
    solution.set_(view.storage(), view.storage_offset(), view.sizes(), view.strides());
    if (m > n) {
      at::native::resize_output(residuals, res.sizes());
      residuals.copy_(res);
    }
  } else {
    at::native::resize_output(solution, sol.sizes());
    solution.copy_(sol);
    at::native::resize_output(residuals, res.sizes());
    residuals.copy_(res);
    at::native::resize_output(rank, {0});
    at::native::resize_output(singular_values, {0});
  }
  return {solution, residuals, rank, singular_values};
}

// ---- linalg_matrix_exp ---------------------------------------------------------------------

// Taylor degrees and, per degree, the largest 1-norm for which the truncated series is exact
// to the unit roundoff (Bader, Blanes and Casas, "Computing the matrix exponential with an
// optimized Taylor polynomial approximation", 2019), for float and for double arithmetic.
constexpr int kDegrees[6] = {1, 2, 4, 8, 12, 18};
constexpr double kThetaFloat[6] = {1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                   5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00};
constexpr double kThetaDouble[6] = {2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                    4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00};

// out = c[0] I + sum_{j >= 1} c[j] P[j] (P[j] contiguous (B, n, n); at most 4 of them).
at::Tensor lincomb(Device& d, const std::vector<at::Tensor>& P, const std::vector<double>& c) {
  const at::Tensor& P1 = P[1];
  at::Tensor out = at::empty(P1.sizes(), P1.options());
  const int64_t n = P1.size(-1), total = P1.numel();
  auto p = [&](size_t j) -> const at::Tensor& { return j < P.size() && c[j] != 0 ? P[j] : P1; };
  auto co = [&](size_t j) { return j < c.size() ? c[j] : 0.0; };
  Kernel& k = qr_kernel(d, P1.scalar_type(), "mexp_lincomb");
  if (P1.scalar_type() == at::kDouble)
    launch(d, k, grid_stride(total), Range(256), buf(p(1)), buf(p(2)), buf(p(3)), buf(p(4)), co(0), co(1), co(2),
           co(3), co(4), n, total, buf(out));
  else
    launch(d, k, grid_stride(total), Range(256), buf(p(1)), buf(p(2)), buf(p(3)), buf(p(4)),
           static_cast<float>(co(0)), static_cast<float>(co(1)), static_cast<float>(co(2)),
           static_cast<float>(co(3)), static_cast<float>(co(4)), n, total, buf(out));
  return out;
}

// The Taylor polynomial of degree deg of exp at A (B, n, n contiguous), by Paterson-Stockmeyer:
// with the powers A^1..A^s, p(A) = C_0 + A^s (C_1 + A^s (C_2 + ...)), each C_i a combination
// of I, A, ..., A^(s-1) (the top one also takes A^s when s divides deg). Degree 18 costs 7
// products.
at::Tensor taylor_exp(Device& d, const at::Tensor& A, int deg) {
  std::vector<double> c(deg + 1);
  c[0] = 1;
  for (int i = 1; i <= deg; ++i) c[i] = c[i - 1] / i;
  if (deg == 1) return lincomb(d, {at::Tensor(), A}, {1.0, 1.0});
  const int s = deg <= 4 ? 2 : 4;
  std::vector<at::Tensor> P{at::Tensor(), A};
  for (int j = 2; j <= s; ++j) P.push_back(at::bmm(P[j - 1], A));
  const int r = deg / s, rem = deg % s, top = rem == 0 ? r - 1 : r;
  auto term = [&](int i) {
    std::vector<double> co(s + 1, 0.0);
    for (int j = 0; j < s && i * s + j <= deg; ++j) co[j] = c[i * s + j];
    if (i == top && rem == 0) co[s] = c[deg];
    return lincomb(d, P, co);
  };
  at::Tensor acc = term(top);
  for (int i = top - 1; i >= 0; --i) {
    at::Tensor t = term(i);
    at::baddbmm_out(t, t, P[s], acc);
    acc = t;
  }
  return acc;
}

// linalg_matrix_exp(Tensor self) -> Tensor
// Scaling and squaring: exp(A) = T(A / 2^s)^(2^s) with T the Taylor polynomial of the lowest
// degree whose bound covers A's 1-norm (a single matrix, as the CPU) or of degree 18 with s
// chosen per matrix (a batch). The norms decide the work, so they are read on the host: one
// synchronisation, as on CUDA. float16/bfloat16 are computed in float.
at::Tensor linalg_matrix_exp_ocl(const at::Tensor& a) {
  at::native::squareCheckInputs(a, "linalg.matrix_exp");
  at::native::checkFloatingOrComplex(a, "linalg.matrix_exp");
  const at::ScalarType dt = a.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(dt == at::kFloat || dt == at::kDouble || dt == at::kHalf || dt == at::kBFloat16,
                              "\"linalg_matrix_exp_ocl\" not implemented for '", toString(dt), "'");
  const int64_t n = a.size(-1);
  if (n == 0) return a.clone(at::MemoryFormat::Contiguous);
  if (n == 1) return a.exp();
  const int64_t B = batch_count(a);
  if (B == 0) return at::empty(a.sizes(), a.options());
  const at::ScalarType ct = dt == at::kDouble ? at::kDouble : at::kFloat;
  Device& d = ocl_device(a);
  check_dtype_supported(d, ct, "linalg.matrix_exp");
  const at::Tensor A = a.reshape({B, n, n}).to(ct).contiguous();
  const double* theta = ct == at::kDouble ? kThetaDouble : kThetaFloat;
  // The one host read of the family (as CUDA's matrix_exp makes it too): each matrix's 1-norm
  // picks the degree and the squarings, which a fixed worst case would multiply many times over.
  const at::Tensor norms = A.abs().sum({1}).amax({-1}).to(at::kCPU).to(at::kDouble);
  const double* nrm = norms.data_ptr<double>();

  std::vector<int64_t> s(B, 0);
  std::vector<int64_t> bad;
  int deg = 18;
  for (int64_t b = 0; b < B; ++b) {
    if (!std::isfinite(nrm[b])) {
      bad.push_back(b);
    } else if (nrm[b] > theta[5]) {
      s[b] = static_cast<int64_t>(std::ceil(std::log2(nrm[b] / theta[5])));
    }
  }
  if (B == 1 && bad.empty())
    for (int i = 0; i < 5; ++i)
      if (nrm[0] <= theta[i]) {
        deg = kDegrees[i];
        break;
      }
  const int64_t max_s = *std::max_element(s.begin(), s.end());
  at::Tensor As = A;
  if (max_s > 0) {
    std::vector<double> f(B);
    for (int64_t b = 0; b < B; ++b) f[b] = std::ldexp(1.0, -static_cast<int>(s[b]));
    const at::Tensor fd = at::from_blob(f.data(), {B, 1, 1}, at::TensorOptions().dtype(at::kDouble)).to(A.options());
    As = A * fd;
  }
  at::Tensor R = taylor_exp(d, As, deg);
  for (int64_t k = 0; k < max_s; ++k) {
    at::Tensor sq = at::bmm(R, R);
    std::vector<uint8_t> more(B);
    bool all = true;
    for (int64_t b = 0; b < B; ++b) all &= (more[b] = s[b] > k) != 0;
    if (all) {
      R = sq;
    } else {
      const at::Tensor mask =
          at::from_blob(more.data(), {B, 1, 1}, at::TensorOptions().dtype(at::kBool)).to(a.device());
      R = at::where(mask, sq, R);
    }
  }
  for (int64_t b : bad) R.select(0, b).fill_(std::numeric_limits<double>::quiet_NaN());
  return R.view(a.sizes()).to(dt);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "geqrf", geqrf_ocl);
  OCL_IMPL(m, "geqrf.a", geqrf_a_ocl);
  OCL_IMPL(m, "linalg_householder_product", linalg_householder_product_ocl);
  OCL_IMPL(m, "linalg_householder_product.out", linalg_householder_product_out_ocl);
  OCL_IMPL(m, "ormqr", ormqr_ocl);
  OCL_IMPL(m, "ormqr.out", ormqr_out_ocl);
  OCL_IMPL(m, "linalg_qr.out", linalg_qr_out_ocl);
  OCL_IMPL(m, "linalg_lstsq.out", linalg_lstsq_out_ocl);
  OCL_IMPL(m, "linalg_matrix_exp", linalg_matrix_exp_ocl);
}

}  // namespace torch_ocl
