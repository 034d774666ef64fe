// Convolutions (conv1d/2d/3d and their transposes, any stride, padding, dilation, groups and
// output_padding): ATen hands non-CPU/CUDA backends convolution_overrideable and
// convolution_backward_overrideable. Both lower to im2col + GEMM on the device:
//   im2col: the padded input's sliding windows, an as_strided view, copied into
//           columns (N, G, C/G * K, L) by the strided copy kernel (K kernel taps, L outputs);
//   GEMM:   weight (G, OC/G, C/G * K) @ columns, one batched product;
//   col2im: the adjoint, each kernel tap's columns added into its strided slice of the padded
//           input (K strided adds).
// A transposed convolution is the adjoint of the convolution with the same weight: its
// forward is that convolution's input gradient and vice versa.
#include "../aten/Routing.h"
#include "windows.h"

#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/sum.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

// A convolution's kernel, stride, padding and dilation per spatial dim (g.out not yet set).
WindowGeom conv_kernel_geom(const at::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                            c10::IntArrayRef dilation) {
  WindowGeom g;
  g.nd = weight.dim() - 2;
  TORCH_CHECK(g.nd >= 1, "convolution: expected a weight with at least 3 dims, got ", weight.sizes());
  g.stride = per_dim(stride, g.nd, "convolution", "stride");
  g.pad = per_dim(padding, g.nd, "convolution", "padding");
  g.dil = per_dim(dilation, g.nd, "convolution", "dilation");
  for (int64_t i = 0; i < g.nd; ++i) {
    TORCH_CHECK(g.stride[i] > 0 && g.dil[i] > 0 && g.pad[i] >= 0, "convolution: invalid stride ", stride,
                ", padding ", padding, " or dilation ", dilation);
    g.k.push_back(weight.size(i + 2));
  }
  return g;
}

// Windows along spatial dim i of an input of size `in` (the padded extent over the dilated
// kernel's, in strides): a convolution's output size, F.unfold's block count.
int64_t windows_along(const WindowGeom& g, int64_t i, int64_t in) {
  return (in + 2 * g.pad[i] - g.dil[i] * (g.k[i] - 1) - 1) / g.stride[i] + 1;
}

// The window geometry of a convolution with `weight` over spatial sizes `in`: g.out windows
// per dim, the output's spatial size.
WindowGeom conv_geom(const at::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                     c10::IntArrayRef dilation, c10::IntArrayRef in) {
  WindowGeom g = conv_kernel_geom(weight, stride, padding, dilation);
  for (int64_t i = 0; i < g.nd; ++i) {
    g.out.push_back(windows_along(g, i, in[i]));
    TORCH_CHECK(g.out[i] > 0, "convolution: input size ", in, " is too small for kernel ", c10::IntArrayRef(g.k),
                " with padding ", padding, " and dilation ", dilation);
  }
  return g;
}

// gy (N, OC, *out) as (N, groups, OC/groups, windows).
at::Tensor by_group(const at::Tensor& gy, int64_t groups) {
  return gy.reshape({gy.size(0), groups, gy.size(1) / groups, c10::multiply_integers(gy.sizes().slice(2))});
}

// x (N, C, *S) -> columns (N, groups, C/groups * taps, windows).
at::Tensor im2col(const at::Tensor& x, const WindowGeom& g, int64_t groups) {
  return window_view(x, g).reshape({x.size(0), groups, x.size(1) / groups * g.taps(), g.windows()});
}

// The adjoint of im2col: columns (N, groups, C/groups * taps, windows) -> (N, C, *in).
at::Tensor col2im(const at::Tensor& cols, const WindowGeom& g, c10::IntArrayRef in, int64_t channels) {
  std::vector<int64_t> view{cols.size(0), channels};
  view.insert(view.end(), g.k.begin(), g.k.end());
  view.insert(view.end(), g.out.begin(), g.out.end());
  return window_sum_back(cols.reshape(view), g, in);
}

// y = conv(x, w): x (N, C, *S), w (OC, C/groups, *k) -> (N, OC, *out).
at::Tensor conv_forward(const at::Tensor& x, const at::Tensor& w, const WindowGeom& g, int64_t groups) {
  const at::Tensor cols = im2col(x, g, groups);
  const int64_t oc = w.size(0);
  at::Tensor y = at::matmul(w.reshape({groups, oc / groups, -1}), cols);  // (N, G, OC/G, L)
  std::vector<int64_t> shape{x.size(0), oc};
  shape.insert(shape.end(), g.out.begin(), g.out.end());
  return y.view(shape);
}

// The input gradient of conv_forward: gy (N, OC, *out) -> (N, C, *in).
at::Tensor conv_input_grad(const at::Tensor& gy, const at::Tensor& w, const WindowGeom& g, int64_t groups,
                           c10::IntArrayRef in) {
  const int64_t oc = w.size(0), c = w.size(1) * groups;
  const at::Tensor wt = w.reshape({groups, oc / groups, -1}).transpose(1, 2);  // (G, C/G * taps, OC/G)
  const at::Tensor cols = at::matmul(wt, by_group(gy, groups));
  return col2im(cols, g, in, c);
}

// The weight gradient of conv_forward: sum over the batch of gy @ columns(x)^T, w's shape.
at::Tensor conv_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w, const WindowGeom& g,
                            int64_t groups) {
  const at::Tensor cols = im2col(x, g, groups);
  const at::Tensor gw = at::matmul(by_group(gy, groups), cols.transpose(2, 3));
  return gw.sum(0).view(w.sizes());
}

void check_conv_args(const at::Tensor& input, const at::Tensor& weight, int64_t groups) {
  TORCH_CHECK_NOT_IMPLEMENTED(input.scalar_type() != at::kBool && !at::isComplexType(input.scalar_type()),
                              "\"convolution\" not implemented for '", input.scalar_type(), "'");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  TORCH_CHECK(groups > 0 && input.dim() == weight.dim(), "convolution: expected input with ", weight.dim(),
              " dims for weight of shape ", weight.sizes(), ", got ", input.sizes());
}

// convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
at::Tensor convolution_ocl(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                           bool transposed, c10::IntArrayRef output_padding, int64_t groups) {
  check_conv_args(input, weight, groups);
  at::Tensor y;
  if (!transposed) {
    y = conv_forward(input, weight, conv_geom(weight, stride, padding, dilation, input.sizes().slice(2)), groups);
  } else {
    // The input gradient of the convolution (weight: C_in, OC/G, *k) whose output is `input`:
    // over an output of size `out`, that convolution has input.sizes() windows.
    WindowGeom g = conv_kernel_geom(weight, stride, padding, dilation);
    std::vector<int64_t> out(g.nd);
    for (int64_t i = 0; i < g.nd; ++i) {
      g.out.push_back(input.size(i + 2));
      const int64_t op = output_padding.empty() ? 0 : output_padding.size() == 1 ? output_padding[0]
                                                                                  : output_padding[i];
      TORCH_CHECK(op >= 0 && (op < g.stride[i] || op < g.dil[i]),
                  "output padding must be smaller than either stride or dilation, but got output_padding ",
                  output_padding, ", stride ", stride, " and dilation ", dilation);
      out[i] = (input.size(i + 2) - 1) * g.stride[i] - 2 * g.pad[i] + g.dil[i] * (g.k[i] - 1) + op + 1;
      TORCH_CHECK(out[i] > 0, "convolution: the transposed convolution of input ", input.sizes(),
                  " with these parameters has no output (size ", out[i], " in spatial dim ", i, ")");
    }
    y = conv_input_grad(input, weight, g, groups, out);
  }
  if (bias.has_value() && bias->defined()) {
    std::vector<int64_t> bshape(y.dim(), 1);
    bshape[1] = -1;
    y = y + bias->view(bshape);
  }
  return y.contiguous();
}

// convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_ocl(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  check_conv_args(input, weight, groups);
  (void)output_padding;  // fixed by the shapes of input and grad_output
  // The convolution (not transposed) in play maps `from` to `to`: its windows run over `from`.
  const at::Tensor& from = transposed ? grad_output : input;
  const WindowGeom g = conv_geom(weight, stride, padding, dilation, from.sizes().slice(2));
  at::Tensor gi, gw, gb;
  if (!transposed) {
    if (output_mask[0]) gi = conv_input_grad(grad_output, weight, g, groups, input.sizes().slice(2));
    if (output_mask[1]) gw = conv_weight_grad(grad_output, input, weight, g, groups);
  } else {
    // y = conv_input_grad(x, w): x's gradient is conv_forward(gy, w); w's is the weight gradient
    // of that convolution with the roles of x and gy swapped.
    if (output_mask[0]) gi = conv_forward(grad_output, weight, g, groups);
    if (output_mask[1]) gw = conv_weight_grad(input, grad_output, weight, g, groups);
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t i = 2; i < grad_output.dim(); ++i) dims.push_back(i);
    gb = grad_output.sum(dims);
  }
  return {gi.defined() ? gi.contiguous() : gi, gw.defined() ? gw.contiguous() : gw, gb};
}

// F.unfold / F.fold on (N, C, H, W) or unbatched (C, H, W) inputs: the window view and its adjoint.
WindowGeom unfold_geom(c10::IntArrayRef kernel_size, c10::IntArrayRef dilation, c10::IntArrayRef padding,
                       c10::IntArrayRef stride, int64_t h, int64_t w) {
  WindowGeom g;
  g.nd = 2;
  g.k = per_dim(kernel_size, 2, "im2col", "kernel_size");
  g.dil = per_dim(dilation, 2, "im2col", "dilation");
  g.pad = per_dim(padding, 2, "im2col", "padding");
  g.stride = per_dim(stride, 2, "im2col", "stride");
  const int64_t in[2] = {h, w};
  for (int64_t i = 0; i < 2; ++i) g.out.push_back(windows_along(g, i, in[i]));
  return g;
}

// im2col.out(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& im2col_out_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                           c10::IntArrayRef padding, c10::IntArrayRef stride, at::Tensor& out) {
  TORCH_CHECK(kernel_size.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2,
              "im2col: kernel_size, dilation, padding and stride must have 2 elements each");
  at::native::im2col_shape_check(self, at::Tensor(), kernel_size[0], kernel_size[1], dilation[0], dilation[1],
                                 padding[0], padding[1], stride[0], stride[1]);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  const at::Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  const WindowGeom g = unfold_geom(kernel_size, dilation, padding, stride, x.size(2), x.size(3));
  const at::Tensor cols = window_view(x, g).reshape({x.size(0), x.size(1) * g.taps(), g.windows()});
  at::native::resize_output(out, self.dim() == 3 ? cols.sizes().slice(1) : cols.sizes());
  out.copy_(self.dim() == 3 ? cols.squeeze(0) : cols);
  return out;
}

// col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& col2im_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef dilation, c10::IntArrayRef padding, c10::IntArrayRef stride,
                           at::Tensor& out) {
  TORCH_CHECK(output_size.size() == 2 && kernel_size.size() == 2 && dilation.size() == 2 && padding.size() == 2 &&
                  stride.size() == 2,
              "col2im: output_size, kernel_size, dilation, padding and stride must have 2 elements each");
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel_size[0], kernel_size[1],
                                 dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  const at::Tensor cols = self.dim() == 2 ? self.unsqueeze(0) : self;
  const WindowGeom g = unfold_geom(kernel_size, dilation, padding, stride, output_size[0], output_size[1]);
  const int64_t c = cols.size(1) / g.taps();
  const at::Tensor x = window_sum_back(cols.reshape({cols.size(0), c, g.k[0], g.k[1], g.out[0], g.out[1]}), g,
                                       output_size);
  at::native::resize_output(out, self.dim() == 2 ? x.sizes().slice(1) : x.sizes());
  out.copy_(self.dim() == 2 ? x.squeeze(0) : x);
  return out;
}

// im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
at::Tensor im2col_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                      c10::IntArrayRef padding, c10::IntArrayRef stride) {
  at::Tensor out = at::empty({0}, self.options());
  return im2col_out_ocl(self, kernel_size, dilation, padding, stride, out);
}
// col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
at::Tensor col2im_ocl(const at::Tensor& self, c10::IntArrayRef output_size, c10::IntArrayRef kernel_size,
                      c10::IntArrayRef dilation, c10::IntArrayRef padding, c10::IntArrayRef stride) {
  at::Tensor out = at::empty({0}, self.options());
  return col2im_out_ocl(self, output_size, kernel_size, dilation, padding, stride, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "convolution_overrideable", convolution_ocl);
  OCL_IMPL(m, "convolution_backward_overrideable", convolution_backward_ocl);
  OCL_IMPL(m, "im2col", im2col_ocl);
  OCL_IMPL(m, "im2col.out", im2col_out_ocl);
  OCL_IMPL(m, "col2im", col2im_ocl);
  OCL_IMPL(m, "col2im.out", col2im_out_ocl);
}

}  // namespace torch_ocl
