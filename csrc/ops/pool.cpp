// 2-D max and average pooling (nn.MaxPool2d / nn.AvgPool2d, and max_pool1d / avg_pool1d,
// which ATen runs through them) with their backward ops, on the window views of windows.h:
// the padded input's windows reduced by the device's max / sum kernels. Adaptive max pooling
// (nn.AdaptiveMaxPool2d, and adaptive_max_pool1d) has windows of varying size: kernels/pool.cl.
// ATen's structured meta functions do the argument checks and size the outputs, as on the CPU.
#include "windows.h"

#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/max.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <limits>

namespace torch_ocl {
namespace {

// The window geometry of a 2-D pooling of input (.., H, W) into (.., OH, OW) (sizes from the
// meta function). Windows past the right/bottom edge (ceil_mode) get extra padding there.
WindowGeom pool_geom(const at::Tensor& input, const at::Tensor& output, c10::IntArrayRef kernel_size,
                     c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation) {
  WindowGeom g;
  g.nd = 2;
  g.k = per_dim(kernel_size, 2, "pooling", "kernel_size");
  g.stride = stride.empty() ? g.k : per_dim(stride, 2, "pooling", "stride");
  g.pad_lo = per_dim(padding, 2, "pooling", "padding");
  g.dil = per_dim(dilation, 2, "pooling", "dilation");
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t in = input.size(input.dim() - 2 + i);
    g.out.push_back(output.size(output.dim() - 2 + i));
    const int64_t reach = (g.out[i] - 1) * g.stride[i] + g.dil[i] * (g.k[i] - 1) + 1;  // padded extent used
    g.pad_hi.push_back(std::max(g.pad_lo[i], reach - in - g.pad_lo[i]));
  }
  return g;
}

// (C, H, W) -> (1, C, H, W); (N, C, H, W) unchanged.
at::Tensor batched(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(0) : t; }

// The lowest value of t's dtype: max pooling's padding, below (or equal to) every input.
c10::Scalar lowest(at::ScalarType t) {
  if (at::isFloatingType(t)) return -std::numeric_limits<double>::infinity();
  switch (t) {
    case at::kByte: return 0;
    case at::kChar: return std::numeric_limits<int8_t>::lowest();
    case at::kShort: return std::numeric_limits<int16_t>::lowest();
    case at::kInt: return std::numeric_limits<int32_t>::lowest();
    default: return std::numeric_limits<int64_t>::lowest();
  }
}

// max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out_ocl(const at::Tensor& self,
                                                                     c10::IntArrayRef kernel_size,
                                                                     c10::IntArrayRef stride,
                                                                     c10::IntArrayRef padding,
                                                                     c10::IntArrayRef dilation, bool ceil_mode,
                                                                     at::Tensor& out, at::Tensor& indices) {
  OutMeta<at::meta::structured_max_pool2d_with_indices, 2> m(out, indices);
  m.meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"max_pool2d\" not implemented for 'Bool'");
  if (out.numel() == 0) return {out, indices};
  const at::Tensor x = batched(self);
  const WindowGeom g = pool_geom(x, out, kernel_size, stride, padding, dilation);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), l = g.windows();
  // Windows (N, C, taps, L) -> the largest value and its tap (the first of equal ones).
  auto [values, tap] = at::max(window_view(x, g, lowest(x.scalar_type())).reshape({n, c, g.taps(), l}), 2);
  // The tap's position in the (H, W) plane, as the CPU's flat index h * W + w.
  const auto lopts = x.options().dtype(at::kLong);
  const at::Tensor row0 = at::arange(g.out[0], lopts).mul_(g.stride[0]).sub_(g.pad_lo[0]);  // window starts
  const at::Tensor col0 = at::arange(g.out[1], lopts).mul_(g.stride[1]).sub_(g.pad_lo[1]);
  const at::Tensor row = row0.view({1, 1, g.out[0], 1}) +
                         tap.view({n, c, g.out[0], g.out[1]}).div(g.k[1], "floor").mul_(g.dil[0]);
  const at::Tensor col = col0.view({1, 1, 1, g.out[1]}) +
                         tap.view({n, c, g.out[0], g.out[1]}).remainder(g.k[1]).mul_(g.dil[1]);
  at::Tensor index = row * w + col;
  // A window whose largest value is the padding's (all its inputs are the dtype's lowest, e.g.
  // -inf) took a padding tap; the CPU reports the window's first element inside the input.
  const at::Tensor first_row = row0 + (at::where(row0.lt(0), -row0, 0) + (g.dil[0] - 1)).div(g.dil[0], "floor")
                                          .mul_(g.dil[0]);
  const at::Tensor first_col = col0 + (at::where(col0.lt(0), -col0, 0) + (g.dil[1] - 1)).div(g.dil[1], "floor")
                                          .mul_(g.dil[1]);
  const at::Tensor first = first_row.view({1, 1, g.out[0], 1}) * w + first_col.view({1, 1, 1, g.out[1]});
  index = at::where(row.lt(0) | row.ge(h) | col.lt(0) | col.ge(w), first, index);
  out.copy_(values.view(out.sizes()));
  indices.copy_(index.view(indices.sizes()));
  return {out, indices};
}

// max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& max_pool2d_with_indices_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                                     c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                     bool ceil_mode, const at::Tensor& indices,
                                                     at::Tensor& grad_input) {
  OutMeta<at::meta::structured_max_pool2d_with_indices_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  const at::Tensor x = batched(self);
  const int64_t n = x.size(0), c = x.size(1);
  // Each output's gradient goes to the input element its index names (summed where windows
  // overlap on the same maximum).
  at::Tensor gi = at::zeros({n, c, x.size(2) * x.size(3)}, grad_output.options());
  if (grad_output.numel() > 0)
    gi.scatter_add_(2, batched(indices).reshape({n, c, -1}), batched(grad_output).reshape({n, c, -1}));
  grad_input.copy_(gi.view(grad_input.sizes()));
  return grad_input;
}

// The divisor of each average-pooling window (OH, OW), as the CPU computes it: the window
// clipped to the padded input (count_include_pad) or to the input itself, or the override.
at::Tensor avg_divisors(const WindowGeom& g, int64_t h, int64_t w, bool count_include_pad,
                        c10::optional<int64_t> divisor_override, const at::TensorOptions& opts) {
  at::Tensor t = at::empty({g.out[0], g.out[1]}, at::TensorOptions().dtype(at::kDouble));
  double* d = t.data_ptr<double>();
  for (int64_t oh = 0; oh < g.out[0]; ++oh) {
    for (int64_t ow = 0; ow < g.out[1]; ++ow) {
      int64_t hs = oh * g.stride[0] - g.pad_lo[0], ws = ow * g.stride[1] - g.pad_lo[1];
      int64_t he = std::min(hs + g.k[0], h + g.pad_lo[0]), we = std::min(ws + g.k[1], w + g.pad_lo[1]);
      const int64_t padded = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0), ws = std::max<int64_t>(ws, 0);
      he = std::min(he, h), we = std::min(we, w);
      d[oh * g.out[1] + ow] = static_cast<double>(
          divisor_override ? *divisor_override : count_include_pad ? padded : (he - hs) * (we - ws));
    }
  }
  return t.to(opts);
}

// The type window sums and divisors are computed in: float for 16-bit floats (rounded once, at
// the end, as on the CPU), int64 for integers.
at::ScalarType pool_acc_type(at::ScalarType t) {
  if (t == at::kHalf || t == at::kBFloat16) return at::kFloat;
  return at::isFloatingType(t) ? t : at::kLong;
}

// Sum / divisor: true division for floating types, truncating for integers (the CPU's integer
// average pooling).
at::Tensor window_mean(const at::Tensor& sum, const at::Tensor& divisor) {
  return at::isFloatingType(sum.scalar_type()) ? sum / divisor : sum.div(divisor, "trunc");
}

// avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& avg_pool2d_out_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               c10::optional<int64_t> divisor_override, at::Tensor& out) {
  OutMeta<at::meta::structured_avg_pool2d> m(out);
  m.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"avg_pool2d\" not implemented for 'Bool'");
  if (out.numel() == 0) return out;
  const at::Tensor x = batched(self);
  const WindowGeom g = pool_geom(x, out, kernel_size, stride, padding, {1});
  const int64_t n = x.size(0), c = x.size(1);
  const at::ScalarType acc = pool_acc_type(x.scalar_type());
  const at::Tensor sum = window_view(x, g, 0).reshape({n, c, g.taps(), g.out[0], g.out[1]}).sum(2, false, acc);
  const at::Tensor div =
      avg_divisors(g, x.size(2), x.size(3), count_include_pad, divisor_override, sum.options().dtype(acc));
  out.copy_(window_mean(sum, div).view(out.sizes()));
  return out;
}

// avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& avg_pool2d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                        c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                        c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                        c10::optional<int64_t> divisor_override, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_avg_pool2d_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  const at::Tensor x = batched(self), gy = batched(grad_output);
  if (gy.numel() == 0) {
    grad_input.zero_();
    return grad_input;
  }
  const WindowGeom g = pool_geom(x, gy, kernel_size, stride, padding, {1});
  const int64_t n = x.size(0), c = x.size(1);
  const at::ScalarType acc = pool_acc_type(gy.scalar_type());
  const at::Tensor div =
      avg_divisors(g, x.size(2), x.size(3), count_include_pad, divisor_override, gy.options().dtype(acc));
  // Every tap of a window receives the window's gradient over its divisor.
  const at::Tensor share = window_mean(gy.to(acc), div).view({n, c, 1, 1, g.out[0], g.out[1]});
  const at::Tensor gi = window_sum_back(share.expand({n, c, g.k[0], g.k[1], g.out[0], g.out[1]}), g,
                                        {x.size(2), x.size(3)});
  grad_input.copy_(gi.view(grad_input.sizes()));
  return grad_input;
}

constexpr int64_t kWideWindow = 256;  // average window size from which the forward uses a work-group per output
constexpr size_t kWideWG = 64;        // WIDE_WG of pool.cl: that work-group's size

// The 3-D range of pool.cl's position4 over a (B, C, H, W) tensor t: (W, H, B * C), or
// (C, W, B * H) when t keeps its channels adjacent (channels_last), in groups of 64 along the
// fastest dimension (more along the next where it is short).
struct Range4 {
  Range global, local;
  cl_int c_fast;
};
Range4 range4(const at::Tensor& t) {
  const int64_t b = t.size(0), c = t.size(1), h = t.size(2), w = t.size(3);
  const bool c_fast = c > 1 && t.stride(1) == 1;
  const size_t n0 = c_fast ? c : w, n1 = c_fast ? w : h, n2 = c_fast ? b * h : b * c;
  const Range l = local_wu(static_cast<int64_t>(n0));
  return {Range(n0, n1, n2), Range(l.sz[0], l.sz[1], 1), c_fast ? 1 : 0};
}

// Build options of pool.cl for values of dtype t.
std::string pool_options(Device& d, at::ScalarType t, const char* op) {
  check_dtype_supported(d, t, op);
  return "-DX_KIND=" + std::to_string(storage_kind(t, op)) + " -DACC=" + (t == at::kDouble ? "double" : "float");
}

// The four strides of a (B, C, H, W) view, as kernel arguments.
std::array<int64_t, 4> strides4(const at::Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2), t.stride(3)}; }

// adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool2d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size,
                                                                 at::Tensor& out, at::Tensor& indices) {
  OutMeta<at::meta::structured_adaptive_max_pool2d, 2> m(out, indices);
  m.meta(self, output_size);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"adaptive_max_pool2d\" not implemented for '", toString(self.scalar_type()), "'");
  if (out.numel() == 0) return {out, indices};
  const at::Tensor x = batched(self), y = batched(out), yi = batched(indices);
  Device& d = ocl_device(x);
  const std::string opts = pool_options(d, x.scalar_type(), "adaptive_max_pool2d");
  const auto xs = strides4(x), ys = strides4(y), is = strides4(yi);
  // Windows of kWideWindow elements and more: a work-group per output (global pooling of a
  // large map would otherwise leave few work-items each scanning all of it).
  if (x.size(2) * x.size(3) >= kWideWindow * y.size(2) * y.size(3)) {
    Kernel& k = get_kernel(d, "pool", opts + " -DWIDE_WG=" + std::to_string(kWideWG), "adaptive_max_pool2d_fwd_wide");
    launch(d, k, Range(static_cast<size_t>(y.numel()) * kWideWG), Range(kWideWG), buf(x), buf(y), buf(yi),
           x.size(1), x.size(2), x.size(3), y.size(2), y.size(3), xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2],
           ys[3], is[0], is[1], is[2], is[3]);
    return {out, indices};
  }
  Kernel& k = get_kernel(d, "pool", opts, "adaptive_max_pool2d_fwd");
  const Range4 r = range4(y);
  launch(d, k, r.global, r.local, buf(x), buf(y), buf(yi), x.size(1), x.size(2), x.size(3), y.size(2), y.size(3),
         xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2], ys[3], is[0], is[1], is[2], is[3], r.c_fast);
  return {out, indices};
}

// adaptive_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& adaptive_max_pool2d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_adaptive_max_pool2d_backward> m(grad_input);
  m.meta(grad_output, self, indices);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"adaptive_max_pool2d_backward\" not implemented for '", toString(self.scalar_type()),
                              "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong && indices.sizes() == grad_output.sizes(),
              "adaptive_max_pool2d_backward(): expected int64 indices of grad_output's shape ", grad_output.sizes(),
              ", but got ", indices.scalar_type(), " indices of shape ", indices.sizes());
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor gy = batched(grad_output), gi = batched(grad_input), yi = batched(indices);
  TORCH_CHECK(gy.dim() == 4 && gy.size(0) == gi.size(0) && gy.size(1) == gi.size(1),
              "adaptive_max_pool2d_backward(): grad_output of shape ", grad_output.sizes(),
              " does not match the input of shape ", self.sizes());
  Device& d = ocl_device(gy);
  Kernel& k = get_kernel(d, "pool", pool_options(d, gy.scalar_type(), "adaptive_max_pool2d_backward"),
                         "adaptive_max_pool2d_bwd");
  const auto gs = strides4(gy), is = strides4(yi), rs = strides4(gi);
  // Each input element gathers from the windows that contain it; the indices name positions
  // in those windows (as the forward produced them).
  const Range4 r = range4(gi);
  launch(d, k, r.global, r.local, buf(gy), buf(yi), buf(gi), gi.size(1), gi.size(2), gi.size(3), gy.size(2),
         gy.size(3), gs[0], gs[1], gs[2], gs[3], is[0], is[1], is[2], is[3], rs[0], rs[1], rs[2], rs[3], r.c_fast);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices.out", max_pool2d_with_indices_out_ocl);
  m.impl("max_pool2d_with_indices_backward.grad_input", max_pool2d_with_indices_backward_out_ocl);
  m.impl("avg_pool2d.out", avg_pool2d_out_ocl);
  m.impl("avg_pool2d_backward.grad_input", avg_pool2d_backward_out_ocl);
  m.impl("adaptive_max_pool2d.out", adaptive_max_pool2d_out_ocl);
  m.impl("adaptive_max_pool2d_backward.grad_input", adaptive_max_pool2d_backward_out_ocl);
}

}  // namespace torch_ocl
