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
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

struct ConvGeom {
  int64_t nd = 0;                        // spatial dims
  std::vector<int64_t> k, stride, pad, dil;
  int64_t taps = 1;                      // prod(k)
};

ConvGeom geom_of(const at::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                 c10::IntArrayRef dilation) {
  ConvGeom g;
  g.nd = weight.dim() - 2;
  TORCH_CHECK(g.nd >= 1, "convolution: expected a weight with at least 3 dims, got ", weight.sizes());
  auto expand = [&](c10::IntArrayRef v, const char* what) {
    TORCH_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == g.nd, "convolution: expected ", what, " of ",
                g.nd, " values, got ", v);
    std::vector<int64_t> r(g.nd);
    for (int64_t i = 0; i < g.nd; ++i) r[i] = v.size() == 1 ? v[0] : v[i];
    return r;
  };
  g.stride = expand(stride, "stride");
  g.pad = expand(padding, "padding");
  g.dil = expand(dilation, "dilation");
  for (int64_t i = 0; i < g.nd; ++i) {
    g.k.push_back(weight.size(i + 2));
    g.taps *= g.k.back();
    TORCH_CHECK(g.stride[i] > 0 && g.dil[i] > 0 && g.pad[i] >= 0, "convolution: invalid stride ", stride,
                ", padding ", padding, " or dilation ", dilation);
  }
  return g;
}

// Output spatial size of the (non-transposed) convolution over spatial sizes `in`.
std::vector<int64_t> conv_out_sizes(const ConvGeom& g, c10::IntArrayRef in) {
  std::vector<int64_t> o(g.nd);
  for (int64_t i = 0; i < g.nd; ++i) {
    o[i] = (in[i] + 2 * g.pad[i] - g.dil[i] * (g.k[i] - 1) - 1) / g.stride[i] + 1;
    TORCH_CHECK(o[i] > 0, "convolution: input size ", in, " is too small for kernel ", c10::IntArrayRef(g.k),
                " with padding ", c10::IntArrayRef(g.pad), " and dilation ", c10::IntArrayRef(g.dil));
  }
  return o;
}

int64_t prod(c10::IntArrayRef v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// x (N, C, *S) -> columns (N, groups, C/groups * taps, prod(out)).
at::Tensor im2col(const at::Tensor& x, const ConvGeom& g, c10::IntArrayRef out, int64_t groups) {
  std::vector<int64_t> pads;
  for (int64_t i = g.nd - 1; i >= 0; --i) pads.insert(pads.end(), {g.pad[i], g.pad[i]});
  const at::Tensor xp = at::constant_pad_nd(x, pads, 0).contiguous();
  std::vector<int64_t> sizes{xp.size(0), xp.size(1)}, strides{xp.stride(0), xp.stride(1)};
  for (int64_t i = 0; i < g.nd; ++i) {
    sizes.push_back(g.k[i]);
    strides.push_back(g.dil[i] * xp.stride(i + 2));
  }
  for (int64_t i = 0; i < g.nd; ++i) {
    sizes.push_back(out[i]);
    strides.push_back(g.stride[i] * xp.stride(i + 2));
  }
  return xp.as_strided(sizes, strides).reshape({x.size(0), groups, x.size(1) / groups * g.taps, prod(out)});
}

// The adjoint of im2col: columns (N, groups, C/groups * taps, prod(out)) -> (N, C, *in).
at::Tensor col2im(const at::Tensor& cols, const ConvGeom& g, c10::IntArrayRef in, c10::IntArrayRef out,
                  int64_t channels) {
  const int64_t n = cols.size(0);
  std::vector<int64_t> padded{n, channels}, view{n, channels};
  for (int64_t i = 0; i < g.nd; ++i) padded.push_back(in[i] + 2 * g.pad[i]);
  view.insert(view.end(), g.k.begin(), g.k.end());
  view.insert(view.end(), out.begin(), out.end());
  at::Tensor xp = at::zeros(padded, cols.options());
  const at::Tensor c = cols.reshape(view);
  std::vector<int64_t> tap(g.nd, 0);
  for (int64_t t = 0; t < g.taps; ++t) {
    at::Tensor dst = xp, src = c;
    for (int64_t i = 0; i < g.nd; ++i) {
      const int64_t start = tap[i] * g.dil[i];
      dst = dst.slice(i + 2, start, start + g.stride[i] * (out[i] - 1) + 1, g.stride[i]);
      src = src.select(2, tap[i]);  // each select drops one tap dim, the next is again dim 2
    }
    dst.add_(src);
    for (int64_t i = g.nd - 1; i >= 0 && ++tap[i] == g.k[i]; --i) tap[i] = 0;
  }
  at::Tensor x = xp;
  for (int64_t i = 0; i < g.nd; ++i) x = x.narrow(i + 2, g.pad[i], in[i]);
  return x;
}

// y = conv(x, w): x (N, C, *S), w (OC, C/groups, *k) -> (N, OC, *out).
at::Tensor conv_forward(const at::Tensor& x, const at::Tensor& w, const ConvGeom& g, int64_t groups) {
  const auto out = conv_out_sizes(g, x.sizes().slice(2));
  const at::Tensor cols = im2col(x, g, out, groups);
  const int64_t oc = w.size(0);
  at::Tensor y = at::matmul(w.reshape({groups, oc / groups, -1}), cols);  // (N, G, OC/G, L)
  std::vector<int64_t> shape{x.size(0), oc};
  shape.insert(shape.end(), out.begin(), out.end());
  return y.view(shape);
}

// The input gradient of conv_forward: gy (N, OC, *out) -> (N, C, *in).
at::Tensor conv_input_grad(const at::Tensor& gy, const at::Tensor& w, const ConvGeom& g, int64_t groups,
                           c10::IntArrayRef in) {
  const int64_t oc = w.size(0), c = w.size(1) * groups;
  const at::Tensor wt = w.reshape({groups, oc / groups, -1}).transpose(1, 2);  // (G, C/G * taps, OC/G)
  const at::Tensor cols = at::matmul(wt, gy.reshape({gy.size(0), groups, oc / groups, prod(gy.sizes().slice(2))}));
  return col2im(cols, g, in, gy.sizes().slice(2), c);
}

// The weight gradient of conv_forward: sum over the batch of gy @ columns(x)^T, w's shape.
at::Tensor conv_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w, const ConvGeom& g,
                            int64_t groups) {
  const int64_t oc = w.size(0);
  const at::Tensor cols = im2col(x, g, gy.sizes().slice(2), groups);
  const at::Tensor gw =
      at::matmul(gy.reshape({gy.size(0), groups, oc / groups, prod(gy.sizes().slice(2))}), cols.transpose(2, 3));
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
  const ConvGeom g = geom_of(weight, stride, padding, dilation);
  at::Tensor y;
  if (!transposed) {
    y = conv_forward(input, weight, g, groups);
  } else {
    // The input gradient of the convolution (weight: C_in, OC/G, *k) whose output is `input`.
    std::vector<int64_t> out(g.nd);
    for (int64_t i = 0; i < g.nd; ++i) {
      const int64_t op = output_padding.empty() ? 0 : output_padding.size() == 1 ? output_padding[0]
                                                                                  : output_padding[i];
      TORCH_CHECK(op >= 0 && (op < g.stride[i] || op < g.dil[i]),
                  "output padding must be smaller than either stride or dilation, but got output_padding ",
                  output_padding, ", stride ", stride, " and dilation ", dilation);
      out[i] = (input.size(i + 2) - 1) * g.stride[i] - 2 * g.pad[i] + g.dil[i] * (g.k[i] - 1) + op + 1;
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
  const ConvGeom g = geom_of(weight, stride, padding, dilation);
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", convolution_ocl);
  m.impl("convolution_backward_overrideable", convolution_backward_ocl);
}

}  // namespace torch_ocl
