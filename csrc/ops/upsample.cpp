// 2-D nearest and bilinear upsampling (F.interpolate modes "nearest" and "bilinear") with their
// backward ops. Both are separable: rows then columns are gathered (index_select) and, for
// bilinear, blended with per-row / per-column weights; the backward scatters the same way
// (index_add). Source indices and weights are computed on the host exactly as ATen's
// UpSample.h does (in float, or double for double inputs), so results match the CPU's.
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
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

// Nearest: out index o reads input floor(o * scale) (exact for equal sizes and for 2x).
at::Tensor nearest_index(int64_t in, int64_t out, c10::optional<double> scale, const at::Tensor& like) {
  at::Tensor idx = at::empty({out}, at::TensorOptions().dtype(at::kLong));
  int64_t* p = idx.data_ptr<int64_t>();
  const float s = scale_of<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o)
    p[o] = out == in ? o : out == 2 * in ? o >> 1 : std::min(static_cast<int64_t>(std::floor(o * s)), in - 1);
  return idx.to(like.device());
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
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kByte,
                              "\"upsample_nearest2d\" not implemented for '", self.scalar_type(), "'");
  if (out.numel() == 0) return out;
  const at::Tensor rows = nearest_index(self.size(2), output_size[0], scales_h, self);
  const at::Tensor cols = nearest_index(self.size(3), output_size[1], scales_w, self);
  out.copy_(self.index_select(2, rows).index_select(3, cols));
  return out;
}

// upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[2] input_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& upsample_nearest2d_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                                c10::IntArrayRef input_size, c10::optional<double> scales_h,
                                                c10::optional<double> scales_w, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_upsample_nearest2d_backward> m(grad_input);
  m.meta(grad_output, output_size, input_size, scales_h, scales_w);
  if (grad_input.numel() == 0) return grad_input;
  const at::ScalarType acc = float_or_double(grad_output.scalar_type());
  const at::Tensor g = grad_output.to(acc);
  const at::Tensor rows = nearest_index(input_size[2], output_size[0], scales_h, g);
  const at::Tensor cols = nearest_index(input_size[3], output_size[1], scales_w, g);
  at::Tensor t = at::zeros({g.size(0), g.size(1), g.size(2), input_size[3]}, g.options()).index_add_(3, cols, g);
  grad_input.copy_(at::zeros(input_size, g.options()).index_add_(2, rows, t));
  return grad_input;
}

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
  m.impl("upsample_bilinear2d.out", upsample_bilinear2d_out_ocl);
  m.impl("upsample_bilinear2d_backward.grad_input", upsample_bilinear2d_backward_out_ocl);
}

}  // namespace torch_ocl
