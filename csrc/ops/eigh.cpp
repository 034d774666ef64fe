// Symmetric eigendecomposition (_linalg_eigh: linalg.eigh / eigvalsh) and SVD (_linalg_svd:
// linalg.svd / svdvals, torch.svd, pinv, matrix_rank, matrix norms, cond) in float32 and
// float64 by one-sided (Hestenes) Jacobi, kernels/eigh.cl. Inputs of any strides; outputs of
// any layout (written in place when their batch dimensions flatten, else copied back).
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <ATen/TensorUtils.h>
#include <ATen/ops/_linalg_eigh_meta.h>
#include <ATen/ops/_linalg_svd_meta.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace torch_ocl {
namespace {

constexpr int64_t kSingleGroupCols = 64;  // matrices of at most this many columns: one work-group each
constexpr int64_t kBlockCols = 32;        // wider ones: column blocks of about this many
// Sweeps at most. Jacobi converges quadratically: float32 needs some 6-10 sweeps, float64
// 8-12, so the cap is reached only by inputs no sweep count would fix (NaN/inf are caught
// before). Results after the cap are returned as they are (no error: raising would need the
// host to wait for the device).
constexpr int kMaxSweeps = 30;

// LAPACK's real dtypes only, as the CPU ("linalg_eigh_cpu" -> "linalg_eigh_ocl"); complex
// inputs never get here (OCL_IMPL sends them to the CPU).
void check_dtype(const at::Tensor& A, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(A.scalar_type() == at::kFloat || A.scalar_type() == at::kDouble, "\"", op,
                              "\" not implemented for '", toString(A.scalar_type()), "'");
  check_dtype_supported(ocl_device(A), A.scalar_type(), op);
}

Kernel& eigh_kernel(Device& d, at::ScalarType t, const char* name) {
  return get_kernel(d, "eigh", t == at::kDouble ? "-DDT=double -DDT_IS_DOUBLE=1" : "-DDT=float", name);
}

size_t next_pow2(int64_t x) {
  size_t p = 1;
  while (static_cast<int64_t>(p) < x) p <<= 1;
  return p;
}

// Work-group size for npairs column pairs of `rows` rows: up to 64 work-items per pair for
// the dot products, 32 to 256 in all (a power of two).
size_t rotate_wg(int64_t npairs, int64_t rows) {
  return std::clamp<size_t>(next_pow2(std::max<int64_t>(npairs, 1) * std::min<int64_t>(rows, 64)), 32, 256);
}

// Orthogonalizes the columns of W (B matrices of rows x cols, column-major, contiguous) by
// Jacobi rotations, accumulated into V (cols x cols, when has_v). flags: (B, 4) int32.
// Up to kSingleGroupCols columns one work-group per matrix runs every sweep in one launch;
// wider matrices are split into column blocks, and a sweep is one launch for the pairs inside
// blocks plus one per round of block pairs (the circle method), a work-group per block pair.
// Converged matrices skip the remaining launches (device-side flags, no host synchronisation).
// Speed: some 5 n^3 multiply-adds per sweep, ~10 sweeps, in scalar-rotation kernels: on PoCL
// (2 CPU cores) n = 256 takes ~40 ms and n = 512 ~0.3-0.4 s in float32, ten times the CPU's
// LAPACK (which reduces to tridiagonal / bidiagonal form with blocked BLAS).
void run_jacobi(Device& d, const at::Tensor& W, int64_t rows, int64_t cols, const at::Tensor& V, bool has_v,
                const at::Tensor& flags, int64_t B) {
  const at::ScalarType t = W.scalar_type();
  Kernel& rot = eigh_kernel(d, t, "jacobi_rotate");
  const size_t es = W.element_size();
  // Columns count as orthogonal below tol (LAPACK's gesvj: sqrt(rows) * eps).
  const double eps = t == at::kDouble ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double tol = eps * std::sqrt(static_cast<double>(std::max<int64_t>(rows, 1)));
  const Buf vbuf = buf(has_v ? V : W);
  // One launch of mode (see jacobi_rotate) over groups work-groups per matrix, each with npairs
  // pairs per round among at most ncols columns.
  auto go = [&](int mode, int64_t groups, int64_t nb, int64_t P, int64_t round, int64_t npairs, int64_t ncols) {
    const size_t wg = rotate_wg(npairs, rows);
    const size_t pairs = static_cast<size_t>(std::max<int64_t>(npairs, 1));
    auto args = [&](auto tol_v) {
      launch(d, rot, Range(wg * static_cast<size_t>(groups * B)), Range(wg), buf(W), rows, cols, vbuf,
             static_cast<cl_int>(has_v), buf(flags), static_cast<cl_int>(mode), groups, nb, P, round,
             static_cast<cl_int>(kMaxSweeps), tol_v, LocalMem{3 * wg * es}, LocalMem{pairs * es},
             LocalMem{pairs * es}, LocalMem{2 * pairs * sizeof(cl_int)},
             LocalMem{static_cast<size_t>(std::max<int64_t>(ncols, 1)) * es}, LocalMem{sizeof(cl_int)});
    };
    if (t == at::kDouble)
      args(tol);
    else
      args(static_cast<float>(tol));
  };
  if (cols <= kSingleGroupCols) {
    go(0, 1, 1, 2, 0, (cols + 1) / 2, cols);
    return;
  }
  const int64_t nb = (cols + kBlockCols - 1) / kBlockCols, P = nb + (nb & 1);
  const int64_t widest = (cols + nb - 1) / nb;
  Kernel& begin = eigh_kernel(d, t, "jacobi_begin");
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    launch(d, begin, Range(static_cast<size_t>(B)), Range(64), buf(flags), B, static_cast<cl_int>(sweep));
    go(1, nb, nb, P, 0, (widest + 1) / 2, widest);
    for (int64_t round = 0; round < P - 1; ++round) go(2, P / 2, nb, P, round, widest, 2 * widest);
  }
}

// A (B, r, c) tensor for the kernels to write out through: a view of out when its batch
// dimensions flatten, else a temporary that finish() copies into out.
struct MatOut {
  at::Tensor out, w3;
  bool temp = false;
  MatOut(const at::Tensor& o, int64_t B, int64_t r, int64_t c) : out(o) {
    const std::vector<int64_t> shape{B, r, c};
    auto st = at::detail::computeStride(o.sizes(), o.strides(), c10::IntArrayRef(shape));
    if (st) {
      w3 = o.as_strided(shape, *st);
    } else {
      w3 = at::empty(shape, o.options());
      temp = true;
    }
  }
  void finish() {
    if (temp) out.copy_(w3.view(out.sizes()));
  }
};

// A contiguous (B, c) tensor for out of B * c elements: out itself or a temporary.
struct VecOut {
  at::Tensor out, w2;
  bool temp;
  VecOut(const at::Tensor& o, int64_t B, int64_t c) : out(o), temp(!o.is_contiguous()) {
    w2 = temp ? at::empty({B, c}, o.options()) : o.view({B, c});
  }
  void finish() {
    if (temp) out.copy_(w2.view(out.sizes()));
  }
};

size_t group_wg(int64_t elems) { return std::clamp<size_t>(next_pow2(elems), 64, 256); }

// ---- eigh ---------------------------------------------------------------------------------

// _linalg_eigh.eigenvalues(Tensor A, str UPLO="L", bool compute_v=True, *, Tensor(a!) eigenvalues, Tensor(b!) eigenvectors) -> (Tensor(a!) eigenvalues, Tensor(b!) eigenvectors)
std::tuple<at::Tensor&, at::Tensor&> linalg_eigh_eigenvalues_ocl(const at::Tensor& A, c10::string_view uplo,
                                                                 bool compute_v, at::Tensor& L, at::Tensor& V) {
  OutMeta<at::meta::structured__linalg_eigh, 2> meta(L, V);
  meta.meta(A, uplo, compute_v);
  if (A.numel() == 0) return {L, V};
  check_dtype(A, "linalg_eigh_ocl");
  Device& d = ocl_device(A);
  const at::ScalarType t = A.scalar_type();
  const bool upper = std::toupper(static_cast<unsigned char>(uplo[0])) == 'U';
  const int64_t n = A.size(-1), B = A.numel() / (n * n);
  const at::Tensor A3 = A.reshape({B, n, n});
  const auto opts = A.options();
  // S: the symmetric matrix (scaled); W: S shifted, rotated to orthogonal columns; Vw: the rotations.
  at::Tensor S = at::empty({B, n, n}, opts), W = at::empty({B, n, n}, opts), Vw = at::empty({B, n, n}, opts);
  at::Tensor expo = at::empty({B}, opts.dtype(at::kInt)), flags = at::empty({B, 4}, opts.dtype(at::kInt));
  const size_t wg = group_wg(n * n), es = A.element_size();
  launch(d, eigh_kernel(d, t, "eigh_prep"), Range(wg * static_cast<size_t>(B)), Range(wg), buf(A3), A3.stride(0),
         A3.stride(1), A3.stride(2), n, static_cast<cl_int>(upper), buf(S), buf(W), buf(Vw), buf(expo), buf(flags),
         LocalMem{2 * wg * es});
  run_jacobi(d, W, n, n, Vw, true, flags, B);
  // Eigenvalues as Rayleigh quotients v^T S v (accurate to eps ||A||, unlike norms of the
  // shifted W's columns): R = S V column-major is (V^T S) row-major (S is symmetric).
  const std::vector<int64_t> cm{n * n, 1, n};
  const at::Tensor R = at::bmm(Vw.as_strided({B, n, n}, cm).mT(), S);
  at::Tensor lam = at::empty({B, n}, opts);
  const Range items(static_cast<size_t>(n * B)), local(64);
  launch(d, eigh_kernel(d, t, "eigh_values"), items, local, buf(Vw), buf(R), n, B, buf(expo), buf(flags),
         buf(lam));
  VecOut vals(L, B, n);
  std::optional<MatOut> vecs;
  if (compute_v) vecs.emplace(V, B, n, n);
  const at::Tensor& X = compute_v ? vecs->w3 : Vw;
  launch(d, eigh_kernel(d, t, "eigh_sort"), items, local, buf(lam), n, B, buf(Vw), buf(flags), buf(vals.w2),
         buf(X), X.stride(0), X.stride(1), X.stride(2), static_cast<cl_int>(compute_v));
  vals.finish();
  if (vecs) vecs->finish();
  return {L, V};
}

// ---- SVD ----------------------------------------------------------------------------------

// _linalg_svd.U(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None, Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh) -> (Tensor(a!) U, Tensor(b!) S, Tensor(c!) Vh)
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_svd_U_ocl(const at::Tensor& A, bool full_matrices,
                                                                   bool compute_uv,
                                                                   std::optional<c10::string_view> driver,
                                                                   at::Tensor& U, at::Tensor& S, at::Tensor& Vh) {
  OutMeta<at::meta::structured__linalg_svd, 3> meta(U, S, Vh);
  meta.meta(A, full_matrices, compute_uv, driver);
  if (A.numel() == 0) {
    // As ATen: the identity is an SVD of an empty matrix (e.g. 3 x 0 with full_matrices).
    if (compute_uv && full_matrices) {
      for (at::Tensor* X : {&U, &Vh})
        if (X->numel() != 0) {
          X->zero_();
          X->diagonal(0, -2, -1).fill_(1);
        }
    }
    return {U, S, Vh};
  }
  // ATen's _linalg_svd_out raises this for every device but CUDA with cuSOLVER.
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  check_dtype(A, "linalg_svd_ocl");
  Device& d = ocl_device(A);
  const at::ScalarType t = A.scalar_type();
  const int64_t m = A.size(-2), n = A.size(-1), B = A.numel() / (m * n);
  // Work on the tall orientation T (rows >= cols): A = U S V^T, or A^T for a wide A.
  const bool wide = m < n;
  const int64_t rows = std::max(m, n), cols = std::min(m, n);
  const at::Tensor A3 = A.reshape({B, m, n});
  const at::Tensor T = wide ? A3.mT() : A3;
  const auto opts = A.options();
  at::Tensor W = at::empty({B, rows * cols}, opts);
  at::Tensor Vw = compute_uv ? at::empty({B, cols * cols}, opts) : W;
  at::Tensor expo = at::empty({B}, opts.dtype(at::kInt)), flags = at::empty({B, 4}, opts.dtype(at::kInt));
  const size_t wg = group_wg(rows * cols), es = A.element_size();
  launch(d, eigh_kernel(d, t, "svd_prep"), Range(wg * static_cast<size_t>(B)), Range(wg), buf(T), T.stride(0),
         T.stride(1), T.stride(2), rows, cols, buf(W), buf(Vw), static_cast<cl_int>(compute_uv), buf(expo),
         buf(flags), LocalMem{2 * wg * es});
  run_jacobi(d, W, rows, cols, Vw, compute_uv, flags, B);
  at::Tensor sig = at::empty({B, cols}, opts), sorted = at::empty({B, cols}, opts);
  const Range items(static_cast<size_t>(cols * B)), local(64);
  launch(d, eigh_kernel(d, t, "svd_values"), items, local, buf(W), rows, cols, B, buf(sig));
  VecOut svals(S, B, cols);
  // The tall side's factor (U, or Vh^T for a wide A) and the short side's (Vh^T, or U).
  std::optional<MatOut> uo, vo;
  at::Tensor tall = W.view({B, rows, cols}), shrt = tall;
  const int64_t ucols = full_matrices ? rows : cols;
  if (compute_uv) {
    uo.emplace(U, B, m, U.size(-1));
    vo.emplace(Vh, B, Vh.size(-2), n);
    tall = wide ? vo->w3.mT() : uo->w3;
    shrt = wide ? uo->w3 : vo->w3.mT();
  }
  launch(d, eigh_kernel(d, t, "svd_sort"), items, local, buf(sig), rows, cols, B, buf(W), buf(Vw),
         buf(expo), buf(flags), buf(svals.w2), buf(sorted), buf(shrt), shrt.stride(0), shrt.stride(1),
         shrt.stride(2), buf(tall), tall.stride(0), tall.stride(1), tall.stride(2), static_cast<cl_int>(compute_uv));
  if (compute_uv) {
    // Columns of the tall factor for zero singular values and, with full_matrices, the rest.
    at::Tensor H = at::empty({B, rows * cols}, opts), tau = at::empty({B, cols}, opts);
    const size_t cwg = group_wg(rows);
    launch(d, eigh_kernel(d, t, "svd_complete_qr"), Range(cwg * static_cast<size_t>(B)), Range(cwg), buf(tall),
           tall.stride(0), tall.stride(1), tall.stride(2), rows, cols, ucols, buf(sorted), buf(flags), buf(H),
           buf(tau), LocalMem{3 * cwg * es});
    launch(d, eigh_kernel(d, t, "svd_complete_cols"), Range(static_cast<size_t>(ucols * B)), Range(64),
           buf(tall), tall.stride(0), tall.stride(1), tall.stride(2), rows, cols, ucols, B, buf(sorted), buf(flags),
           buf(H), buf(tau));
  }
  svals.finish();
  if (uo) uo->finish();
  if (vo) vo->finish();
  return {U, S, Vh};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_linalg_eigh.eigenvalues", linalg_eigh_eigenvalues_ocl);
  OCL_IMPL(m, "_linalg_svd.U", linalg_svd_U_ocl);
}

}  // namespace torch_ocl
