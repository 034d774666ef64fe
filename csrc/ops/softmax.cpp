// Softmax family: _softmax / _log_softmax (+ half_to_float), their backward ops, and
// _safe_softmax (SDPA's math path). Kernels (kernels/softmax.cl) read and write each tensor
// through (outer, inner, dim) strides, so any dim of any tensor whose non-dim dims collapse
// to one outer and one inner stride runs in place; other layouts go through a dense copy.
// Team reductions, vector width and register elements per work-item come from rows::config()
// (ops/rows.h: device defaults, overridable through the tuning entry "softmax/rows").
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include "rows.h"
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

// Strides (in elements) that address element (o, i, c) of t viewed as [outer, C, inner]
// around `dim`, or nothing if the dims before (or after) `dim` do not collapse to one stride.
struct RowStrides {
  int64_t s_o = 0, s_i = 0, s_c = 0;
};
bool collapse(const at::Tensor& t, int64_t begin, int64_t end, int64_t* stride) {
  *stride = 0;
  int64_t prev_size = -1, prev_stride = 0;
  for (int64_t d = begin; d < end; ++d) {
    if (t.size(d) == 1) continue;
    if (prev_size >= 0 && prev_stride != t.stride(d) * t.size(d)) return false;
    prev_size = t.size(d);
    prev_stride = t.stride(d);
  }
  *stride = prev_size >= 0 ? prev_stride : 0;
  return true;
}
std::optional<RowStrides> row_strides(const at::Tensor& t, int64_t dim) {
  if (t.dim() == 0) return RowStrides{0, 0, 1};
  RowStrides r;
  if (!collapse(t, 0, dim, &r.s_o) || !collapse(t, dim + 1, t.dim(), &r.s_i)) return std::nullopt;
  r.s_c = t.stride(dim);
  return r;
}

// A tensor viewed as [outer, C, inner] around dim, and how the launch splits its rows: rows
// along the innermost dim get a team of consecutive work-items each; otherwise adjacent
// work-items take adjacent inner positions (coalesced) and the team spans dim.
struct Geometry : rows::Split {
  int64_t outer = 1, C = 1, inner = 1;
};
Geometry geometry(const at::Tensor& t, int64_t dim, int items) {
  Geometry g;
  if (t.dim() > 0) {
    for (int64_t d = 0; d < dim; ++d) g.outer *= t.size(d);
    g.C = t.size(dim);
    for (int64_t d = dim + 1; d < t.dim(); ++d) g.inner *= t.size(d);
  }
  static_cast<rows::Split&>(g) = rows::split(g.outer * g.inner, g.C, items, g.inner == 1, g.inner);
  return g;
}

// Build options; the shuffle reductions serve teams of adjacent work-items only (c_fast).
std::string options(int x_kind, int y_kind, const rows::Config& rc, const Geometry& g, bool vec) {
  const bool dbl = x_kind == 1 || y_kind == 1;
  return "-DX_KIND=" + std::to_string(x_kind) + " -DY_KIND=" + std::to_string(y_kind) + " -DVEC=" +
         (vec ? "4" : "1") + rows::options(rc, dbl, g.c_fast ? rows::reduce_for(rc, g.T) : 0);
}

// Whether t's rows (strides r, C elements) can be read as aligned 4-element vectors: dim is
// innermost with stride 1, C and the row stride are multiples of 4, and the first element
// (b: t's buffer and byte offset) is aligned to 4 elements.
bool vec_rows(const at::Tensor& t, const RowStrides& r, const Buf& b, int64_t C, int64_t inner) {
  return inner == 1 && r.s_c == 1 && C % 4 == 0 && r.s_o % 4 == 0 && b.offset % (4 * t.element_size()) == 0;
}

enum Mode : int { kSoftmax = 0, kLogSoftmax = 1, kSafeSoftmax = 2 };

// A tensor the kernel can address along dim: t itself, or a dense copy.
at::Tensor addressable(const at::Tensor& t, int64_t dim, RowStrides* rs) {
  if (auto r = row_strides(t, dim)) {
    *rs = *r;
    return t;
  }
  at::Tensor c = t.contiguous();
  *rs = *row_strides(c, dim);
  return c;
}

// Writes softmax/log-softmax of x along dim into out (already sized like x).
void softmax_forward(const at::Tensor& x, int64_t dim, const at::Tensor& out, Mode mode, const char* op) {
  Device& d = ocl_device(x);
  const int xk = storage_kind(x.scalar_type(), op), yk = storage_kind(out.scalar_type(), op);
  check_dtype_supported(d, x.scalar_type(), op);
  check_dtype_supported(d, out.scalar_type(), op);
  if (x.numel() == 0) return;
  RowStrides xs, ys;
  at::Tensor xin = addressable(x, dim, &xs);
  std::optional<RowStrides> direct = row_strides(out, dim);
  at::Tensor y = direct ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
  ys = direct ? *direct : *row_strides(y, dim);
  const rows::Config rc = rows::config(d, rows::kSoftmax);
  const Geometry g = geometry(x, dim, rc.items);
  const Buf xb = buf(xin), yb = buf(y);
  const bool vec = rc.vec && vec_rows(xin, xs, xb, g.C, g.inner) && vec_rows(y, ys, yb, g.C, g.inner);
  Kernel& k = get_kernel(d, "softmax", options(xk, yk, rc, g, vec), "softmax_fwd");
  launch(d, k, Range(g.groups * g.local), Range(g.local), xb, yb, g.outer * g.inner, g.inner, g.C,
         xs.s_o, xs.s_i, xs.s_c, ys.s_o, ys.s_i, ys.s_c, cl_int(g.T), cl_int(g.c_fast), cl_int(mode));
  if (!direct) out.copy_(y);
}

// Writes the softmax/log-softmax backward of (grad, output) along dim into grad_input.
void softmax_backward(const at::Tensor& grad, const at::Tensor& output, int64_t dim, const at::Tensor& grad_input,
                      Mode mode, const char* op) {
  Device& d = ocl_device(grad);
  TORCH_CHECK(grad.sizes() == output.sizes(), op, ": grad_output and output must have the same shape, got ",
              grad.sizes(), " and ", output.sizes());
  TORCH_CHECK(grad.scalar_type() == output.scalar_type(), op,
              ": grad_output and output must have the same dtype");
  const int xk = storage_kind(grad.scalar_type(), op), yk = storage_kind(grad_input.scalar_type(), op);
  check_dtype_supported(d, grad.scalar_type(), op);
  check_dtype_supported(d, grad_input.scalar_type(), op);
  if (grad.numel() == 0) return;
  RowStrides gs, ys, xs;
  at::Tensor gin = addressable(grad, dim, &gs);
  at::Tensor yin = addressable(output, dim, &ys);
  std::optional<RowStrides> direct = row_strides(grad_input, dim);
  at::Tensor gx = direct ? grad_input : at::empty_like(grad_input, at::MemoryFormat::Contiguous);
  xs = direct ? *direct : *row_strides(gx, dim);
  const rows::Config rc = rows::config(d, rows::kSoftmax);
  const Geometry g = geometry(grad, dim, rc.items);
  const Buf gb = buf(gin), yb = buf(yin), xb = buf(gx);
  const bool vec = rc.vec && vec_rows(gin, gs, gb, g.C, g.inner) && vec_rows(yin, ys, yb, g.C, g.inner) &&
                   vec_rows(gx, xs, xb, g.C, g.inner);
  Kernel& k = get_kernel(d, "softmax", options(xk, yk, rc, g, vec), "softmax_bwd");
  launch(d, k, Range(g.groups * g.local), Range(g.local), gb, yb, xb, g.outer * g.inner, g.inner,
         g.C, gs.s_o, gs.s_i, gs.s_c, ys.s_o, ys.s_i, ys.s_c, xs.s_o, xs.s_i, xs.s_c, cl_int(g.T),
         cl_int(g.c_fast), cl_int(mode));
  if (!direct) grad_input.copy_(gx);
}

at::Tensor& softmax_out_common(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out, Mode mode,
                               const char* op) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  if (half_to_float)
    TORCH_CHECK(self.scalar_type() == at::kHalf, op, ": conversion is supported for Half type only");
  const at::ScalarType out_type = half_to_float ? at::kFloat : self.scalar_type();
  TORCH_CHECK(out.scalar_type() == out_type, op, ": expected out dtype ", out_type, " but got ", out.scalar_type());
  TORCH_CHECK(out.device() == self.device(), op, ": out must be on the same device as self");
  at::native::resize_output(out, self.sizes());
  softmax_forward(self, wrapped, out, mode, op);
  return out;
}

at::Tensor& softmax_backward_out_common(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                        at::ScalarType input_dtype, at::Tensor& grad_input, Mode mode,
                                        const char* op) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, grad.dim());
  TORCH_CHECK(grad_input.scalar_type() == input_dtype, op, ": expected grad_input dtype ", input_dtype,
              " but got ", grad_input.scalar_type());
  at::native::resize_output(grad_input, grad.sizes());
  softmax_backward(grad, output, wrapped, grad_input, mode, op);
  return grad_input;
}

}  // namespace

// _softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _softmax_out_ocl(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return softmax_out_common(self, dim, half_to_float, out, kSoftmax, "_softmax");
}

// _log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _log_softmax_out_ocl(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return softmax_out_common(self, dim, half_to_float, out, kLogSoftmax, "_log_softmax");
}

// _softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& _softmax_backward_data_out_ocl(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                           at::ScalarType input_dtype, at::Tensor& grad_input) {
  return softmax_backward_out_common(grad, output, dim, input_dtype, grad_input, kSoftmax, "_softmax_backward_data");
}

// _log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _log_softmax_backward_data_out_ocl(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                               at::ScalarType input_dtype, at::Tensor& out) {
  return softmax_backward_out_common(grad, output, dim, input_dtype, out, kLogSoftmax, "_log_softmax_backward_data");
}

// _safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
// Like softmax, but rows whose elements are all -inf (fully masked attention rows) give 0.
at::Tensor _safe_softmax_ocl(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  const at::ScalarType out_type = dtype.value_or(self.scalar_type());
  // The kernel converts while it reads, so only a dtype it cannot store needs a cast first.
  const bool widen = (self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16) && out_type == at::kFloat;
  at::Tensor x = (out_type == self.scalar_type() || widen) ? self : self.to(out_type);
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(out_type));
  softmax_forward(x, wrapped, out, kSafeSoftmax, "_safe_softmax");
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_softmax.out", _softmax_out_ocl);
  OCL_IMPL(m, "_log_softmax.out", _log_softmax_out_ocl);
  OCL_IMPL(m, "_softmax_backward_data.out", _softmax_backward_data_out_ocl);
  OCL_IMPL(m, "_log_softmax_backward_data.out", _log_softmax_backward_data_out_ocl);
  OCL_IMPL(m, "_safe_softmax", _safe_softmax_ocl);
}

}  // namespace torch_ocl
