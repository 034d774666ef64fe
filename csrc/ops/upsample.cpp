// Nearest upsampling in 1, 2 and 3 spatial dims, "nearest" and "nearest-exact", and 2-D bilinear
// (F.interpolate), with their backward ops. All are separable: each spatial axis is gathered in
// turn (index_select) and, for bilinear, blended with per-row / per-column weights; the backward
// scatters the same way (index_add). Source indices and weights are computed on the host exactly
// as ATen's UpSample.h does (in float, or double for double inputs), so results match the CPU's.
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <cmath>

namespace torch_ocl {
namespace {

// ATen's compute_scales_value: 1 / scale when a positive scale factor was given, else in/out.
template <typename T>
T scale_of(c10::optional<double> scale, int64_t in, int64_t out) {
  return (scale.has_value() && *scale > 0.) ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / out;
}

// Nearest: out index o reads input floor(o * scale) (exact for equal sizes and for 2x);
// nearest-exact reads floor((o + 0.5) * scale), the pixel whose centre is nearest. Both in
// ATen's float arithmetic, clamped to the last input index.
at::Tensor nearest_index(int64_t in, int64_t out, c10::optional<double> scale, bool exact, const at::Tensor& like) {
  at::Tensor idx = at::empty({out}, at::TensorOptions().dtype(at::kLong));
  int64_t* p = idx.data_ptr<int64_t>();
  const float s = scale_of<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (exact)
      p[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>((o + 0.5) * s))), in - 1);
    else
      p[o] = out == in ? o : out == 2 * in ? o >> 1 : std::min(static_cast<int64_t>(std::floor(o * s)), in - 1);
  }
  return idx.to(like.device());
}

using Scales = std::initializer_list<c10::optional<double>>;

// out = self gathered along each spatial axis (2, 3, ...) by its nearest source index. `op`
// names the op in the dtype error: floating dtypes and uint8, as on the CPU.
void nearest_forward(const at::Tensor& self, c10::IntArrayRef output_size, Scales scales, bool exact,
                     const at::Tensor& out, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kByte, "\"", op,
                              "\" not implemented for '", self.scalar_type(), "'");
  if (out.numel() == 0) return;
  at::Tensor t = self;
  int64_t k = 0;
  for (const c10::optional<double>& s : scales) {
    t = t.index_select(2 + k, nearest_index(self.size(2 + k), output_size[k], s, exact, self));
    ++k;
  }
  out.copy_(t);
}

// The adjoint: each spatial axis scattered back (index_add), the last axis first, in the
// gradient's float/double compute type.
void nearest_backward(const at::Tensor& grad_output, c10::IntArrayRef output_size, c10::IntArrayRef input_size,
                      Scales scales, bool exact, const at::Tensor& grad_input) {
  if (grad_input.numel() == 0) return;
  at::Tensor t = grad_output.to(float_or_double(grad_output.scalar_type()));
  const std::vector<c10::optional<double>> s(scales);
  for (int64_t k = static_cast<int64_t>(s.size()) - 1; k >= 0; --k) {
    const int64_t dim = 2 + k;
    std::vector<int64_t> shape = t.sizes().vec();
    shape[dim] = input_size[dim];
    t = at::zeros(shape, t.options()).index_add_(dim, nearest_index(input_size[dim], output_size[k], s[k], exact, t), t);
  }
  grad_input.copy_(t);
}

// Bilinear along one axis: the two source indices of each output position and their weights.
struct Taps {
  at::Tensor i0, i1, w0, w1;
};
template <typename T>
Taps linear_taps(int64_t in, int64_t out, bool align_corners, c10::optional<double> scale, const at::Tensor& like,
                 at::ScalarType wt) {
  at::Tensor i0 = at::empty({out}, at::TensorOptions().dtype(at::kLong)), i1 = at::empty_like(i0);
  at::Tensor w0 = at::empty({out}, at::TensorOptions().dtype(c10::CppTypeToScalarType<T>::value)),
             w1 = at::empty_like(w0);
  const T s = align_corners ? (out > 1 ? static_cast<T>(in - 1) / (out - 1) : T(0)) : scale_of<T>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    T src = align_corners ? s * o : s * (o + static_cast<T>(0.5)) - static_cast<T>(0.5);
    if (!align_corners && src < T(0)) src = T(0);
    const int64_t i = static_cast<int64_t>(src);
    const T l1 = src - i;
    i0.data_ptr<int64_t>()[o] = i;
    i1.data_ptr<int64_t>()[o] = i + (i < in - 1 ? 1 : 0);
    w0.data_ptr<T>()[o] = T(1) - l1;
    w1.data_ptr<T>()[o] = l1;
  }
  const auto dev = like.device();
  return {i0.to(dev), i1.to(dev), w0.to(dev, wt), w1.to(dev, wt)};
}

Taps taps_for(const at::Tensor& like, int64_t in, int64_t out, bool align_corners, c10::optional<double> scale) {
  const at::ScalarType acc = float_or_double(like.scalar_type());
  return acc == at::kDouble ? linear_taps<double>(in, out, align_corners, scale, like, acc)
                            : linear_taps<float>(in, out, align_corners, scale, like, acc);
}

// Weights shaped to broadcast along `dim` of a 4-d tensor.
at::Tensor along(const at::Tensor& w, int64_t dim) { return dim == 2 ? w.view({1, 1, -1, 1}) : w.view({1, 1, 1, -1}); }

// upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& upsample_nearest2d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size,
                                       c10::optional<double> scales_h, c10::optional<double> scales_w,
                                       at::Tensor& out) {
  OutMeta<at::meta::structured_upsample_nearest2d> m(out);
  m.meta(self, output_size, scales_h, scales_w);
  nearest_forward(self, output_size, {scales_h, scales_w}, false, out, "upsample_nearest2d");
  return out;
}

// upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[2] input_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& upsample_nearest2d_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                                c10::IntArrayRef input_size, c10::optional<double> scales_h,
                                                c10::optional<double> scales_w, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_upsample_nearest2d_backward> m(grad_input);
  m.meta(grad_output, output_size, input_size, scales_h, scales_w);
  nearest_backward(grad_output, output_size, input_size, {scales_h, scales_w}, false, grad_input);
  return grad_input;
}

// The other nearest ops: 1-D and 3-D, and nearest-exact in 1, 2 and 3 dims. ATen's structured
// meta functions check the arguments and size the outputs, as for the 2-D op above.
#define NEAREST_OPS(name, op, EXACT, SCALE_PARAMS, ...)                                                             \
  at::Tensor& name##_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, SCALE_PARAMS, at::Tensor& out) { \
    OutMeta<at::meta::structured_##op> m(out);                                                                      \
    m.meta(self, output_size, __VA_ARGS__);                                                                         \
    nearest_forward(self, output_size, {__VA_ARGS__}, EXACT, out, #op);                                             \
    return out;                                                                                                     \
  }                                                                                                                 \
  at::Tensor& name##_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,                  \
                                      c10::IntArrayRef input_size, SCALE_PARAMS, at::Tensor& grad_input) {          \
    OutMeta<at::meta::structured_##op##_backward> m(grad_input);                                                    \
    m.meta(grad_output, output_size, input_size, __VA_ARGS__);                                                      \
    nearest_backward(grad_output, output_size, input_size, {__VA_ARGS__}, EXACT, grad_input);                       \
    return grad_input;                                                                                              \
  }
#define SCALES_1D c10::optional<double> scales
#define SCALES_2D c10::optional<double> scales_h, c10::optional<double> scales_w
#define SCALES_3D c10::optional<double> scales_d, c10::optional<double> scales_h, c10::optional<double> scales_w
// upsample_nearest1d.out(Tensor self, SymInt[1] output_size, float? scales=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_nearest1d_backward.grad_input(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, float? scales=None, *, Tensor(a!) grad_input) -> Tensor(a!)
NEAREST_OPS(upsample_nearest1d, upsample_nearest1d, false, SCALES_1D, scales)
// upsample_nearest3d.out(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_nearest3d_backward.grad_input(Tensor grad_output, SymInt[3] output_size, SymInt[5] input_size, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
NEAREST_OPS(upsample_nearest3d, upsample_nearest3d, false, SCALES_3D, scales_d, scales_h, scales_w)
// _upsample_nearest_exact{1,2,3}d.out / _backward.grad_input: the same signatures as above.
NEAREST_OPS(upsample_nearest_exact1d, _upsample_nearest_exact1d, true, SCALES_1D, scales)
NEAREST_OPS(upsample_nearest_exact2d, _upsample_nearest_exact2d, true, SCALES_2D, scales_h, scales_w)
NEAREST_OPS(upsample_nearest_exact3d, _upsample_nearest_exact3d, true, SCALES_3D, scales_d, scales_h, scales_w)
#undef NEAREST_OPS
#undef SCALES_1D
#undef SCALES_2D
#undef SCALES_3D

// upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& upsample_bilinear2d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners,
                                        c10::optional<double> scales_h, c10::optional<double> scales_w,
                                        at::Tensor& out) {
  OutMeta<at::meta::structured_upsample_bilinear2d> m(out);
  m.meta(self, output_size, align_corners, scales_h, scales_w);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"upsample_bilinear2d\" not implemented for '",
                              self.scalar_type(), "'");
  if (out.numel() == 0) return out;
  const at::Tensor x = self.to(float_or_double(self.scalar_type()));
  const Taps h = taps_for(x, self.size(2), output_size[0], align_corners, scales_h);
  const Taps w = taps_for(x, self.size(3), output_size[1], align_corners, scales_w);
  const at::Tensor t = x.index_select(2, h.i0) * along(h.w0, 2) + x.index_select(2, h.i1) * along(h.w1, 2);
  out.copy_(t.index_select(3, w.i0) * along(w.w0, 3) + t.index_select(3, w.i1) * along(w.w1, 3));
  return out;
}

// upsample_bilinear2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[2] input_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& upsample_bilinear2d_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                                 c10::IntArrayRef input_size, bool align_corners,
                                                 c10::optional<double> scales_h, c10::optional<double> scales_w,
                                                 at::Tensor& grad_input) {
  OutMeta<at::meta::structured_upsample_bilinear2d_backward> m(grad_input);
  m.meta(grad_output, output_size, input_size, align_corners, scales_h, scales_w);
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor g = grad_output.to(float_or_double(grad_output.scalar_type()));
  const Taps h = taps_for(g, input_size[2], output_size[0], align_corners, scales_h);
  const Taps w = taps_for(g, input_size[3], output_size[1], align_corners, scales_w);
  // The adjoint of the forward's two blends: columns first, then rows.
  at::Tensor t = at::zeros({g.size(0), g.size(1), g.size(2), input_size[3]}, g.options());
  t.index_add_(3, w.i0, g * along(w.w0, 3)).index_add_(3, w.i1, g * along(w.w1, 3));
  at::Tensor gi = at::zeros(input_size, g.options());
  gi.index_add_(2, h.i0, t * along(h.w0, 2)).index_add_(2, h.i1, t * along(h.w1, 2));
  grad_input.copy_(gi);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest2d.out", upsample_nearest2d_out_ocl);
  m.impl("upsample_nearest2d_backward.grad_input", upsample_nearest2d_backward_out_ocl);
  m.impl("upsample_nearest1d.out", upsample_nearest1d_out_ocl);
  m.impl("upsample_nearest1d_backward.grad_input", upsample_nearest1d_backward_out_ocl);
  m.impl("upsample_nearest3d.out", upsample_nearest3d_out_ocl);
  m.impl("upsample_nearest3d_backward.grad_input", upsample_nearest3d_backward_out_ocl);
  m.impl("_upsample_nearest_exact1d.out", upsample_nearest_exact1d_out_ocl);
  m.impl("_upsample_nearest_exact1d_backward.grad_input", upsample_nearest_exact1d_backward_out_ocl);
  m.impl("_upsample_nearest_exact2d.out", upsample_nearest_exact2d_out_ocl);
  m.impl("_upsample_nearest_exact2d_backward.grad_input", upsample_nearest_exact2d_backward_out_ocl);
  m.impl("_upsample_nearest_exact3d.out", upsample_nearest_exact3d_out_ocl);
  m.impl("_upsample_nearest_exact3d_backward.grad_input", upsample_nearest_exact3d_backward_out_ocl);
  m.impl("upsample_bilinear2d.out", upsample_bilinear2d_out_ocl);
  m.impl("upsample_bilinear2d_backward.grad_input", upsample_bilinear2d_backward_out_ocl);
}

}  // namespace torch_ocl
