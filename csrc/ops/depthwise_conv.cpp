// Depthwise convolutions: see depthwise_conv.h and kernels/depthwise_conv.cl. The forward
// computes four outputs of a row per work-item, the input gradient one element; the weight
// gradient sums each filter's taps over slices of the positions, and the slices' partial sums
// are added after. Work-items run along positions for NCHW tensors and along channels for
// channels-last ones (the forward and input gradient on GPUs only), so that neighbouring
// work-items touch neighbouring memory.
#include "depthwise_conv.h"

#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/ops/empty.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/sum.h>
#include <algorithm>
#include <array>
#include <limits>

namespace torch_ocl {
namespace {

constexpr int64_t kMaxTaps = 64;          // accumulators per weight-gradient work-item
constexpr int64_t kMaxGrid = 65535;       // work-groups along NDRange dims 1 and 2
constexpr int64_t kWeightGroup = 128;     // the kernel's WG
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
constexpr int64_t kOutputsPerItem = 4;    // the forward's OPW

// Whether the kernels serve a convolution over `a` (N, CH, H, W) with weight w (OC, 1, KH, KW) in
// `groups` groups (C input channels): 2-D, groups == C, float32/float64, at most kMaxTaps taps,
// the grid and every index within the kernels' integer types.
bool applies(const at::Tensor& a, const at::Tensor& w, const WindowGeom& g, int64_t groups, int64_t C,
             c10::IntArrayRef in) {
  const at::ScalarType t = a.scalar_type();
  if (g.nd != 2 || a.dim() != 4 || w.dim() != 4 || groups != C || w.size(1) != 1 || w.scalar_type() != t ||
      (t != at::kFloat && t != at::kDouble) || a.numel() == 0 || w.size(0) == 0)
    return false;
  if (g.k[0] * g.k[1] > kMaxTaps || a.size(0) > kMaxGrid || std::max(C, w.size(0)) > kMaxGrid) return false;
  const int64_t plane = std::max(in[0] * in[1], g.out[0] * g.out[1]);
  int64_t reach = plane;
  for (int64_t i = 0; i < 2; ++i) reach += g.pad[i] + g.k[i] * g.dil[i] + g.out[i] * g.stride[i] + in[i];
  return reach < kMaxInt / 4;
}

Kernel& dw_kernel(Device& d, at::ScalarType t, const WindowGeom& g, const char* name) {
  check_dtype_supported(d, t, "convolution");
  const std::string opts = std::string("-DDTYPE=") + (t == at::kDouble ? "double" : "float") +
                           " -DKH=" + std::to_string(g.k[0]) + " -DKW=" + std::to_string(g.k[1]);
  return get_kernel(d, "depthwise_conv", opts, name);
}

// Whether the forward and the input gradient over channels-last tensors run work-items along
// channels (coalesced reads; GPUs) or along positions (CPU devices: PoCL, batch 8,
// channels_last, ms, fwd / dX: 7x7 96ch at 28^2 11.2 / 11.5 along positions, 12.8 / 12.9 along
// channels; 3x3 144ch 4.5 / 4.3 and 4.4 / 4.8). The tuning entry "conv/depthwise"
// ("CHANNELS_INNER=1" or "CHANNELS_INNER=0") overrides the choice, e.g. to test either on any
// device.
bool channels_inner_on(const Device& d) {
  const std::string v = tuning::lookup(d, "conv/depthwise");
  if (v == "CHANNELS_INNER=1") return true;
  if (v == "CHANNELS_INNER=0") return false;
  if (!v.empty()) {
    TORCH_WARN_ONCE("torch_ocl: ignoring tuning entry conv/depthwise '", v, "'");
  }
  return !d.info.is_cpu();
}

// Whether t is channels-last: unit channel stride (over more than one channel).
bool unit_channel_stride(const at::Tensor& t) { return t.stride(1) == 1 && t.size(1) > 1; }

// Whether the forward and the input gradient over `src` run work-items along channels: src is
// channels-last, the device takes that order, and src's plane fits NDRange dim 1.
bool channels_inner(const at::Tensor& src, int64_t plane) {
  return unit_channel_stride(src) && plane <= kMaxGrid && channels_inner_on(ocl_device(src));
}

// The NDRange over (plane, channels, samples), or (channels, plane, samples) for `ci`:
// work-groups of up to 64 work-items along dim 0.
std::pair<Range, Range> plane_grid(int64_t plane, int64_t channels, int64_t samples, bool ci) {
  if (ci) return {Range(channels, plane, samples), Range(local_wu(channels).sz[0], 1, 1)};
  return {Range(plane, channels, samples), Range(local_wu(plane).sz[0], 1, 1)};
}

// out = conv(x, w) + b (b contiguous or undefined) over g, out already shaped.
void run_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const WindowGeom& g,
                 const at::Tensor& out) {
  const int64_t C = x.size(1), OC = w.size(0);
  Device& d = ocl_device(x);
  const int64_t items = g.out[0] * ((g.out[1] + kOutputsPerItem - 1) / kOutputsPerItem);
  const bool ci = channels_inner(x, items);
  const auto [global, local] = plane_grid(items, OC, x.size(0), ci);
  launch(d, dw_kernel(d, x.scalar_type(), g, "depthwise_conv_fwd"), global, local, buf(x), cl_long(x.stride(0)),
         cl_long(x.stride(1)), cl_long(x.stride(2)), cl_long(x.stride(3)), buf(w), cl_long(w.stride(0)),
         cl_long(w.stride(2)), cl_long(w.stride(3)), buf_or_none(b), cl_int(b.defined()), buf(out),
         cl_long(out.stride(0)), cl_long(out.stride(1)), cl_long(out.stride(2)), cl_long(out.stride(3)), cl_int(ci),
         i32(C), i32(OC / C), i32(x.size(2)), i32(x.size(3)), i32(g.out[0]), i32(g.out[1]), i32(g.stride[0]),
         i32(g.stride[1]), i32(g.pad[0]), i32(g.pad[1]), i32(g.dil[0]), i32(g.dil[1]));
}

}  // namespace

at::Tensor depthwise_conv_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                  const WindowGeom& g, int64_t groups, at::MemoryFormat mf) {
  const int64_t C = x.size(1), OC = w.size(0);
  if (!applies(x, w, g, groups, C, x.sizes().slice(2)) || (bias.defined() && bias.scalar_type() != x.scalar_type()))
    return {};
  at::Tensor y = at::empty({x.size(0), OC, g.out[0], g.out[1]}, x.options().memory_format(mf));
  run_forward(x, w, bias.defined() ? bias.contiguous() : bias, g, y);
  return y;
}

at::Tensor depthwise_conv_input_grad(const at::Tensor& gy, const at::Tensor& w, const WindowGeom& g, int64_t groups,
                                     c10::IntArrayRef in, at::MemoryFormat mf) {
  const int64_t C = groups * w.size(1), OC = w.size(0);
  if (!applies(gy, w, g, groups, C, in) || gy.size(2) != g.out[0] || gy.size(3) != g.out[1]) return {};
  at::Tensor gx = at::empty({gy.size(0), C, in[0], in[1]}, gy.options().memory_format(mf));
  const auto dense_dim = [&](int64_t i) { return g.stride[i] == 1 || g.dil[i] == 1; };
  if (OC == C && dense_dim(0) && dense_dim(1)) {
    // With one filter per channel, the input gradient is the forward over gy with the filters
    // flipped, once per phase of the stride: input rows ih = ph + SH * i take gradient only from
    // the taps kh0 + SH * t, kh0 = (ph + PH) % SH, through gy rows i + base - t, base =
    // (ph + PH - kh0) / SH; flipped, that is a stride-1 forward with padding T - 1 - base over
    // the phase's T taps. At stride 1 there is one phase, every tap, any dilation: padding
    // (k - 1) * dilation - pad. A phase that no tap reaches is zero.
    const std::array<int64_t, 2> taps{2, 3};
    for (int64_t ph = 0; ph < std::min(g.stride[0], in[0]); ++ph) {
      for (int64_t pw = 0; pw < std::min(g.stride[1], in[1]); ++pw) {
        const int64_t phase[2] = {ph, pw};
        WindowGeom t = g;
        at::Tensor wp = w, out = gx;
        bool reached = true;
        for (int64_t i = 0; i < 2; ++i) {
          const int64_t S = g.stride[i], k0 = (phase[i] + g.pad[i]) % S;
          out = out.slice(2 + i, phase[i], in[i], S);
          t.out[i] = out.size(2 + i), t.stride[i] = 1;
          if (S == 1) {
            t.pad[i] = (g.k[i] - 1) * g.dil[i] - g.pad[i];
            continue;
          }
          if (k0 >= g.k[i]) reached = false;
          wp = wp.slice(2 + i, std::min(k0, g.k[i]), g.k[i], S);
          t.k[i] = wp.size(2 + i), t.dil[i] = 1, t.pad[i] = t.k[i] - 1 - (phase[i] + g.pad[i] - k0) / S;
        }
        if (!reached) {
          out.zero_();
          continue;
        }
        run_forward(gy, wp.flip(taps), at::Tensor(), t, out);
      }
    }
    return gx;
  }
  Device& d = ocl_device(gy);
  const bool ci = channels_inner(gy, in[0] * in[1]);
  const auto [global, local] = plane_grid(in[0] * in[1], C, gy.size(0), ci);
  launch(d, dw_kernel(d, gy.scalar_type(), g, "depthwise_conv_bwd_input"), global, local, buf(gy),
         cl_long(gy.stride(0)), cl_long(gy.stride(1)), cl_long(gy.stride(2)), cl_long(gy.stride(3)), buf(w),
         cl_long(w.stride(0)), cl_long(w.stride(2)), cl_long(w.stride(3)), buf(gx), cl_long(gx.stride(0)),
         cl_long(gx.stride(1)), cl_long(gx.stride(2)), cl_long(gx.stride(3)), cl_int(ci), i32(C), i32(OC / C),
         i32(in[0]), i32(in[1]), i32(g.out[0]), i32(g.out[1]), i32(g.stride[0]), i32(g.stride[1]), i32(g.pad[0]),
         i32(g.pad[1]), i32(g.dil[0]), i32(g.dil[1]));
  return gx;
}

at::Tensor depthwise_conv_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                      const WindowGeom& g, int64_t groups) {
  const int64_t C = x.size(1), OC = w.size(0), N = x.size(0);
  if (!applies(x, w, g, groups, C, x.sizes().slice(2)) || gy.scalar_type() != x.scalar_type() || gy.dim() != 4 ||
      gy.size(2) != g.out[0] || gy.size(3) != g.out[1])
    return {};
  Device& d = ocl_device(x);
  const int64_t positions = N * g.out[0] * g.out[1], cu = std::max<int64_t>(d.info.compute_units, 1);
  if (positions >= kMaxInt / 2) return {};
  // Slices of the positions. NCHW: a work-group of kWeightGroup work-items along the positions
  // per slice and channel, about four work-groups per compute unit, at least 4 positions per
  // work-item. Channels-last (`ci`): a work-item per channel and slice
  // (depthwise_conv_bwd_weight_cl), about 4 * kWeightGroup work-items per compute unit, at
  // least 16 positions each. PoCL, batch 8, channels_last, ms, the first form -> the second:
  // 3x3 144ch at 28^2 3.95 -> 2.82, stride 2 1.67 -> 0.75, 7x7 96ch 12.8 -> 8.3.
  const bool ci = unit_channel_stride(x);
  int64_t S = ci ? std::min((4 * cu * kWeightGroup + OC - 1) / OC, (positions + 15) / 16)
                 : std::min((4 * cu + OC - 1) / OC, (positions + 4 * kWeightGroup - 1) / (4 * kWeightGroup));
  S = std::clamp<int64_t>(S, 1, kMaxGrid);
  const int64_t chunk = (positions + S - 1) / S;
  S = (positions + chunk - 1) / chunk;
  at::Tensor part = at::empty({S, OC, g.k[0], g.k[1]}, x.options());
  const Range global = ci ? Range(OC, S) : Range(S * kWeightGroup, OC);
  const Range local = ci ? Range(local_wu(OC).sz[0], 1) : Range(kWeightGroup, 1);
  launch(d, dw_kernel(d, x.scalar_type(), g, ci ? "depthwise_conv_bwd_weight_cl" : "depthwise_conv_bwd_weight"),
         global, local, buf(gy),
         cl_long(gy.stride(0)), cl_long(gy.stride(1)), cl_long(gy.stride(2)), cl_long(gy.stride(3)), buf(x),
         cl_long(x.stride(0)), cl_long(x.stride(1)), cl_long(x.stride(2)), cl_long(x.stride(3)), buf(part), i32(N),
         i32(chunk), i32(C), i32(OC / C), i32(x.size(2)), i32(x.size(3)), i32(g.out[0]), i32(g.out[1]),
         i32(g.stride[0]), i32(g.stride[1]), i32(g.pad[0]), i32(g.pad[1]), i32(g.dil[0]), i32(g.dil[1]));
  const std::array<int64_t, 1> slices{0};
  return at::sum(part, slices).view(w.sizes());
}

}  // namespace torch_ocl
