// Pairwise distances: torch.cdist's direct path (_cdist_forward, _cdist_backward: every p,
// and p = 2 where cdist does not take its matrix-product route) and torch.pdist
// (_pdist_forward, _pdist_backward). Kernels in kernels/distance.cl. Broadcast batch
// dimensions are expanded into dense copies first, as ATen does; float and double only, as
// on the CPU. The argument checks and their messages are ATen's.
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <cmath>

namespace torch_ocl {
namespace {

constexpr size_t kTS = 16;  // TS of distance.cl: cdist_fwd's work-group is kTS x kTS

// P_KIND of distance.cl for the norm p (checked non-negative).
int p_kind(double p) {
  if (p == 0.0) return 0;
  if (p == 1.0) return 1;
  if (p == 2.0) return 2;
  if (std::isinf(p)) return 3;
  return 4;
}

Kernel& distance_kernel(Device& d, at::ScalarType t, double p, const char* name) {
  return get_kernel(d, "distance", "-DDT=" + cl_type_name(t) + " -DP_KIND=" + std::to_string(p_kind(p)), name);
}

// Launches k with `args` and then the norm p in the kernels' DT (double for float64, else float).
template <typename... Args>
void launch_with_p(Device& d, Kernel& k, const Range& global, const Range& local, at::ScalarType t, double p,
                   const Args&... args) {
  if (t == at::kDouble)
    launch(d, k, global, local, args..., p);
  else
    launch(d, k, global, local, args..., static_cast<float>(p));
}

// The dtype rule of ATen's distance kernels: float or double (NotImplementedError otherwise,
// named after the public op).
void check_distance_dtype(Device& d, at::ScalarType t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", op, "\" not implemented for '",
                              c10::toString(t), "'");
  check_dtype_supported(d, t, op);
}

void check_same_dtype(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected scalar type ", a.scalar_type(), " but found ",
              b.scalar_type());
}

// Launches cdist_fwd over dense [batch, r1, m] and [batch, r2, m] operands into out (dense
// [batch, r1, r2]), or pdist's packed pairs of one [r1, m] operand (x2 the same tensor).
void launch_distances(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& out, int64_t batch, double p,
                      bool packed, bool nan_max) {
  Device& d = ocl_device(x1);
  const at::ScalarType t = x1.scalar_type();
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  const Range global(round_up(size_t(r2), kTS), round_up(size_t(r1), kTS), size_t(batch));
  Kernel& k = distance_kernel(d, t, p, "cdist_fwd");
  launch_with_p(d, k, global, Range(kTS, kTS, 1), t, p, buf(x1), buf(x2), buf(out), r1, r2, m, cl_int(packed),
                cl_int(nan_max));
}

// The batch shape both operands broadcast to, and each operand expanded to it as a dense
// [batch, rows, m] tensor (ATen's cdist expands and copies likewise).
struct Batched {
  std::vector<int64_t> batch_shape;
  int64_t batch = 1;
  at::Tensor x1, x2;
  // batch_shape + [rows, cols]: the shape of a result per pair of batches.
  std::vector<int64_t> shape(int64_t rows, int64_t cols) const {
    std::vector<int64_t> r = batch_shape;
    r.push_back(rows);
    r.push_back(cols);
    return r;
  }
};
Batched expand_batches(const at::Tensor& x1, const at::Tensor& x2) {
  Batched b;
  const c10::IntArrayRef b1 = x1.sizes().slice(0, x1.dim() - 2), b2 = x2.sizes().slice(0, x2.dim() - 2);
  b.batch_shape = at::infer_size(b1, b2);
  for (int64_t s : b.batch_shape) b.batch *= s;
  auto dense = [&](const at::Tensor& x) {
    std::vector<int64_t> shape = b.batch_shape;
    shape.push_back(x.size(-2));
    shape.push_back(x.size(-1));
    return x.expand(shape).contiguous().view({b.batch, x.size(-2), x.size(-1)});
  };
  b.x1 = dense(x1);
  b.x2 = dense(x2);
  return b;
}

// _cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor
at::Tensor cdist_forward_ocl(const at::Tensor& x1, const at::Tensor& x2, double p,
                             std::optional<int64_t> compute_mode) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ",
              x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ",
              x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  Device& d = ocl_device(x1);
  check_distance_dtype(d, x1.scalar_type(), "cdist");
  check_same_dtype(x1, x2);
  // The direct computation for every p and mode: for p = 2 it is what mode 2 asks for and at
  // least as accurate as the matrix-product route that modes 0/1 allow.
  Batched b = expand_batches(x1, x2);
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  const std::vector<int64_t> shape = b.shape(r1, r2);
  if (r1 == 0 || r2 == 0 || b.batch == 0) return at::empty(shape, x1.options());
  if (m == 0) return at::zeros(shape, x1.options());
  at::Tensor out = at::empty(shape, x1.options());
  launch_distances(b.x1, b.x2, out, b.batch, p, /*packed=*/false, /*nan_max=*/false);
  return out;
}

// _cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor
// The gradient in x1 at the broadcast batch shape (autograd sums it down to x1's own).
at::Tensor cdist_backward_ocl(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2, double p,
                              const at::Tensor& cdist) {
  TORCH_CHECK(x1.dim() >= 2 && x2.dim() >= 2 && x1.size(-1) == x2.size(-1),
              "_cdist_backward: x1 and x2 must be at least 2-D with the same number of columns, got ", x1.sizes(),
              " and ", x2.sizes());
  Device& d = ocl_device(x1);
  check_distance_dtype(d, x1.scalar_type(), "_cdist_backward");
  check_same_dtype(x1, x2);
  Batched b = expand_batches(x1, x2);
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  const std::vector<int64_t> shape = b.shape(r1, m);
  const std::vector<int64_t> dist_shape = {b.batch, r1, r2};
  TORCH_CHECK(grad.numel() == b.batch * r1 * r2 && cdist.numel() == grad.numel(),
              "_cdist_backward: grad and cdist must have ", b.batch * r1 * r2, " elements, got ", grad.numel(),
              " and ", cdist.numel());
  if (p == 0.0 || grad.numel() == 0 || b.x1.numel() == 0 || b.x2.numel() == 0) return at::zeros(shape, x1.options());
  check_same_dtype(x1, grad);
  check_same_dtype(x1, cdist);
  const at::Tensor g = grad.contiguous().view(dist_shape), dist = cdist.contiguous().view(dist_shape);
  at::Tensor out = at::empty(shape, x1.options());
  const int64_t n = b.batch * r1 * m;
  Kernel& k = distance_kernel(d, x1.scalar_type(), p, "cdist_bwd");
  launch_with_p(d, k, grid_stride(n), Range(256), x1.scalar_type(), p, buf(g), buf(b.x1), buf(b.x2), buf(dist),
                buf(out), b.batch, r1, r2, m);
  return out;
}

void check_pdist_input(const at::Tensor& self, const char* op) {
  TORCH_CHECK(self.dim() == 2, op, " only supports 2D tensors, got: ", self.dim(), "D");
}

// _pdist_forward(Tensor self, float p=2) -> Tensor
at::Tensor pdist_forward_ocl(const at::Tensor& self, double p) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  check_pdist_input(self, "_pdist_forward");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  Device& d = ocl_device(self);
  check_distance_dtype(d, self.scalar_type(), "pdist");
  const int64_t n = self.size(0), m = self.size(1);
  at::Tensor out = at::empty({n > 1 ? n * (n - 1) / 2 : 0}, self.options());
  if (out.numel() == 0) return out;
  if (m == 0) return out.zero_();
  // p = inf: the CPU's pdist lets a NaN difference through its max, unlike its cdist.
  launch_distances(self, self, out, 1, p, /*packed=*/true, /*nan_max=*/true);
  return out;
}

// _pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor
at::Tensor pdist_backward_ocl(const at::Tensor& grad, const at::Tensor& self, double p, const at::Tensor& pdist) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  TORCH_CHECK(pdist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  check_pdist_input(self, "_pdist_backward");
  Device& d = ocl_device(self);
  check_distance_dtype(d, self.scalar_type(), "_pdist_backward");
  const int64_t n = self.size(0), m = self.size(1), pairs = n > 1 ? n * (n - 1) / 2 : 0;
  at::Tensor out = at::empty_like(self);
  if (p == 0.0 || grad.numel() == 0 || self.numel() == 0) return out.zero_();
  TORCH_CHECK(grad.numel() == pairs && pdist.numel() == pairs, "_pdist_backward: grad and pdist must have ", pairs,
              " elements, got ", grad.numel(), " and ", pdist.numel());
  check_same_dtype(self, grad);
  check_same_dtype(self, pdist);
  const at::Tensor g = grad.contiguous();
  Kernel& k = distance_kernel(d, self.scalar_type(), p, "pdist_bwd");
  launch_with_p(d, k, grid_stride(n * m), Range(256), self.scalar_type(), p, buf(g), buf(self), buf(pdist), buf(out), n,
                m);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_cdist_forward", cdist_forward_ocl);
  OCL_IMPL(m, "_cdist_backward", cdist_backward_ocl);
  OCL_IMPL(m, "_pdist_forward", pdist_forward_ocl);
  OCL_IMPL(m, "_pdist_backward", pdist_backward_ocl);
}

}  // namespace torch_ocl
