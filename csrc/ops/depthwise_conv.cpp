// Depthwise convolutions: see depthwise_conv.h and kernels/depthwise_conv.cl. The forward
// computes four outputs of a row per work-item, the input gradient one element; the weight
// gradient sums each filter's taps over slices of the positions, and the slices' partial sums
// are added after. Work-items run along positions for NCHW tensors and along channels for
// channels-last ones (the forward and input gradient on GPUs only), so that neighbouring
// work-items touch neighbouring memory. Channels-last tensors with one filter per channel and a
// multiple of 4 channels take the *_vec kernels instead: 4-vectors of channels, a block of
// outputs per work-item, the filters packed (KH, KW, C).
#include "depthwise_conv.h"

#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>
#include <algorithm>
#include <array>
#include <limits>

namespace torch_ocl {
namespace {

constexpr int64_t kMaxTaps = 64;          // accumulators per weight-gradient work-item
constexpr int64_t kWeightGroup = 128;     // the kernel's WG
constexpr int64_t kOutputsPerItem = 4;    // the forward's OPW
constexpr int64_t kMaxVectorTaps = 25;    // 4-vector accumulators per vector weight-gradient work-item
constexpr int64_t kMaxVectorSpan = 32;    // input rows or columns the vector kernels unroll over

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

// The choices for channels-last tensors. Defaults by device kind; the tuning entry
// "conv/depthwise" overrides any of them with KEY=VALUE items, e.g. to test either path on any
// device:
//  CHANNELS_INNER=0|1  the scalar forward and input gradient run work-items along channels (1)
//    or along positions (0). GPUs take channels (coalesced reads); CPU devices positions (PoCL,
//    batch 8, channels_last, ms, fwd / dX: 7x7 96ch at 28^2 11.2 / 11.5 along positions, 12.8 /
//    12.9 along channels; 3x3 144ch 4.5 / 4.3 and 4.4 / 4.8).
//  VEC=0|1  the *_vec kernels where they apply (channel_vectors, one filter per channel), on
//    every device by default: aligned 16-byte accesses along channels for GPUs, and on PoCL
//    (2 cores, batch 8, channels_last, ms, fwd / dX / dW, scalar -> vector; exp/s28/helper_dw)
//    3x3 144ch at 28^2 3.72 / 3.89 / 2.40 -> 0.26 / 0.26 / 0.29, stride 2 1.04 / 1.75 / 0.66 ->
//    0.14 / 0.31 / 0.16, 7x7 96ch 11.2 / 11.3 / 8.0 -> 0.54 / 0.55 / 0.78, 5x5 240ch at 14^2
//    3.70 / 3.74 / 2.14 -> 0.22 / 0.23 / 0.30.
//  TILE_W=1..8, TILE_H=1..4  output columns and rows per work-item of depthwise_conv_fwd_vec
//    (TILE_W also the column tile of depthwise_conv_bwd_weight_vec); a taller tile reads its
//    input rows once for all its output rows. CPU devices take 4 x 2 (PoCL: it beat 4 x 1 and
//    8 x 1 by 10-40%, within noise of 4 x 4), GPUs 8 x 1 (H200, batch 32, fwd / dX / dW µs,
//    4 x 2 -> 8 x 1: 3x3 144ch at 56^2 54 / 46 / 64 -> 48 / 48 / 66, stride 2 29 / 67 / 45 ->
//    33 / 43 / 39, 7x7 96ch 78 / 71 / 172 -> 66 / 65 / 117, 5x5 240ch at 14^2 19 / 21 / 35 ->
//    20 / 20 / 27; 4 x 1 and 4 x 4 in between).
//  WEIGHT_ITEMS=64..8192  work-items per compute unit that the vector weight gradient's slices
//    aim for: 1024 on GPUs (fill the device; the kernel sums each work-group's slices; H200 3x3
//    dW 64 µs against 102 at 256 and 83 at 4096), 128 on CPU devices (PoCL, 7x7 and 5x5 dW
//    0.97 / 0.50 at 1024 -> 0.83 / 0.31).
struct DwConfig {
  bool channels_inner = false, vec = true;
  int tile_w = 4, tile_h = 2, weight_items = 1024;
};

DwConfig dw_config(const Device& d) {
  DwConfig c;
  c.channels_inner = !d.info.is_cpu();
  if (d.info.is_cpu()) c.weight_items = 128;
  else c.tile_w = 8, c.tile_h = 1;
  const std::string text = tuning::lookup(d, "conv/depthwise");
  if (text.empty()) return c;
  DwConfig r = c;
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  if (tuning::parse_items(text, &items, &err)) {
    int inner = r.channels_inner, vec = r.vec;
    const struct {
      const char* key;
      int* value;
      int lo, hi;
    } fields[] = {{"CHANNELS_INNER", &inner, 0, 1}, {"VEC", &vec, 0, 1}, {"TILE_W", &r.tile_w, 1, 8},
                  {"TILE_H", &r.tile_h, 1, 4}, {"WEIGHT_ITEMS", &r.weight_items, 64, 8192}};
    for (const auto& [key, value] : items) {
      const auto f = std::find_if(std::begin(fields), std::end(fields), [&](const auto& e) { return key == e.key; });
      if (f == std::end(fields)) err = "unknown key '" + key + "'";
      else if (tuning::parse_int(key, value, f->value, &err) && (*f->value < f->lo || *f->value > f->hi))
        err = key + " must be in " + std::to_string(f->lo) + ".." + std::to_string(f->hi);
      if (!err.empty()) break;
    }
    r.channels_inner = inner, r.vec = vec;
  }
  if (!err.empty()) {
    TORCH_WARN_ONCE("torch_ocl: ignoring tuning entry conv/depthwise '", text, "': ", err);
    return c;
  }
  return r;
}

// Whether the scalar forward and input gradient over `src` run work-items along channels: src
// is channels-last, the configuration takes that order, and src's plane fits NDRange dim 1.
bool channels_inner(const at::Tensor& src, int64_t plane, const DwConfig& cfg) {
  return unit_channel_stride(src) && plane <= kMaxGrid && cfg.channels_inner;
}

// A convolution's filters as the kernels read them: filter o's tap (kh, kw) at element
// off + o * s_o + kh * s_h + kw * s_w of t's data. Strides may be negative (flipped filters).
struct Taps {
  at::Tensor t;
  int64_t off, s_o, s_h, s_w;
  // The buffer with off folded into its byte offset (the kernels then add only strides).
  Buf buffer() const {
    Buf b = buf(t);
    b.offset += static_cast<cl_ulong>(off * t.element_size());
    return b;
  }
};

// w (OC, 1, KH, KW) as it is.
Taps plain_taps(const at::Tensor& w) { return {w, 0, w.stride(0), w.stride(2), w.stride(3)}; }

// w (C, 1, KH, KW) packed (KH, KW, C), for the vector kernels: a tap's 4 channels are one vector.
Taps packed_taps(const at::Tensor& w) {
  const int64_t C = w.size(0), KW = w.size(3);
  at::Tensor p = at::empty({w.size(2), KW, C}, w.options());
  p.copy_(w.select(1, 0).permute({1, 2, 0}));
  return {p, 0, 1, KW * C, C};
}

// The NDRange over (plane, channels, samples), or (channels, plane, samples) for `ci`:
// work-groups of up to 64 work-items along dim 0.
std::pair<Range, Range> plane_grid(int64_t plane, int64_t channels, int64_t samples, bool ci) {
  if (ci) return {Range(channels, plane, samples), Range(local_wu(channels).sz[0], 1, 1)};
  return {Range(plane, channels, samples), Range(local_wu(plane).sz[0], 1, 1)};
}

// The *_vec kernels' program for g's filter, stride and dilation (build options: the loops
// unroll to constant offsets) and `tiles` (their -DTILE_W=.. options).
Kernel& vec_kernel(Device& d, at::ScalarType t, const WindowGeom& g, const std::string& tiles, const char* name) {
  check_dtype_supported(d, t, "convolution");
  std::string opts = std::string("-DDTYPE=") + (t == at::kDouble ? "double" : "float");
  const std::pair<const char*, int64_t> defs[] = {{"KH", g.k[0]},           {"KW", g.k[1]},
                                                  {"STRIDE_H", g.stride[0]}, {"STRIDE_W", g.stride[1]},
                                                  {"DIL_H", g.dil[0]},       {"DIL_W", g.dil[1]}};
  for (const auto& [key, v] : defs) opts += std::string(" -D") + key + "=" + std::to_string(v);
  return get_kernel(d, "depthwise_conv", opts + tiles, name);
}

// Input rows (columns) that `tile` consecutive output rows (columns) of dim i read: the kernels'
// SPAN_H (SPAN_W), unrolled loops whose unused iterations the compiler drops; a wide dilation
// would make them long, so the vector kernels decline spans over kMaxVectorSpan.
int64_t span(const WindowGeom& g, int64_t i, int64_t tile) {
  return (tile - 1) * g.stride[i] + (g.k[i] - 1) * g.dil[i] + 1;
}

// The TILE_H x TILE_W blocks of a sample's outputs (depthwise_conv_fwd_vec's work-items per
// channel quad).
int64_t vec_blocks(const WindowGeom& g, const DwConfig& cfg) {
  return (g.out[0] + cfg.tile_h - 1) / cfg.tile_h * ((g.out[1] + cfg.tile_w - 1) / cfg.tile_w);
}

// Whether depthwise_conv_fwd_vec serves out = conv(x, w) + b over g: the configuration takes
// it, one filter per channel, x and out read and written as 4-vectors of channels (b too), the
// spans within kMaxVectorSpan, and the work-items of a sample within int.
bool forward_vec(const at::Tensor& x, int64_t OC, const at::Tensor& b, const WindowGeom& g, const at::Tensor& out,
                 const DwConfig& cfg) {
  const int64_t C = x.size(1);
  return cfg.vec && OC == C && channel_vectors(x) && channel_vectors(out) &&
         (!b.defined() || vec4_aligned(b)) && span(g, 0, cfg.tile_h) <= kMaxVectorSpan &&
         span(g, 1, cfg.tile_w) <= kMaxVectorSpan && C / 4 * vec_blocks(g, cfg) < kMaxInt;
}

// out = conv(x, w) + b (b contiguous or undefined) over g, out already shaped: by
// depthwise_conv_fwd_vec for `vec` (forward_vec; w packed), else depthwise_conv_fwd.
void run_forward(const at::Tensor& x, const Taps& w, const at::Tensor& b, const WindowGeom& g, const at::Tensor& out,
                 const DwConfig& cfg, bool vec) {
  const int64_t C = x.size(1), OC = out.size(1);
  Device& d = ocl_device(x);
  if (vec) {
    TORCH_INTERNAL_ASSERT(w.s_o == 1, "depthwise_conv_fwd_vec takes packed filters");
    const std::string tiles = " -DTILE_W=" + std::to_string(cfg.tile_w) + " -DTILE_H=" + std::to_string(cfg.tile_h);
    launch(d, vec_kernel(d, x.scalar_type(), g, tiles, "depthwise_conv_fwd_vec"),
           Range(C / 4 * vec_blocks(g, cfg), x.size(0)), Range(64, 1), buf(x), cl_long(x.stride(0)),
           i32(x.stride(2)), i32(x.stride(3)), w.buffer(), i32(w.s_h), i32(w.s_w), buf_or_none(b), cl_int(b.defined()),
           buf(out), cl_long(out.stride(0)), i32(out.stride(2)), i32(out.stride(3)), i32(C), i32(x.size(2)),
           i32(x.size(3)), i32(g.out[0]), i32(g.out[1]), i32(g.pad[0]), i32(g.pad[1]));
    return;
  }
  const int64_t items = g.out[0] * ((g.out[1] + kOutputsPerItem - 1) / kOutputsPerItem);
  const bool ci = channels_inner(x, items, cfg);
  const auto [global, local] = plane_grid(items, OC, x.size(0), ci);
  launch(d, dw_kernel(d, x.scalar_type(), g, "depthwise_conv_fwd"), global, local, buf(x), cl_long(x.stride(0)),
         cl_long(x.stride(1)), cl_long(x.stride(2)), cl_long(x.stride(3)), w.buffer(), cl_long(w.s_o),
         cl_long(w.s_h), cl_long(w.s_w), buf_or_none(b), cl_int(b.defined()), buf(out), cl_long(out.stride(0)),
         cl_long(out.stride(1)), cl_long(out.stride(2)), cl_long(out.stride(3)), cl_int(ci), i32(C), i32(OC / C),
         i32(x.size(2)), i32(x.size(3)), i32(g.out[0]), i32(g.out[1]), i32(g.stride[0]), i32(g.stride[1]),
         i32(g.pad[0]), i32(g.pad[1]), i32(g.dil[0]), i32(g.dil[1]));
}

// The weight gradient by depthwise_conv_bwd_weight_vec (the caller has checked that gy and x
// are channel vectors and that there is one filter per channel), w's shape. A work-item keeps
// FILTER_ROWS * KW 4-vector accumulators: the filter's rows are split over work-items where its
// taps exceed kMaxVectorTaps (registers). Slices of at least two tiles, about cfg.weight_items
// work-items per compute unit; the kernel sums a work-group's slices, so that more slices cost
// few partial sums.
at::Tensor weight_grad_vec(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w, const WindowGeom& g,
                           const DwConfig& cfg) {
  Device& d = ocl_device(x);
  const int64_t C = x.size(1), N = x.size(0), KH = g.k[0], KW = g.k[1], quads = C / 4;
  const int64_t splits = (KH * KW + kMaxVectorTaps - 1) / kMaxVectorTaps, frows = (KH + splits - 1) / splits;
  const int64_t parts = (KH + frows - 1) / frows, cu = std::max<int64_t>(d.info.compute_units, 1);
  const int64_t tiles = N * g.out[0] * ((g.out[1] + cfg.tile_w - 1) / cfg.tile_w);
  // Work-groups of 64: the channel quads' largest power-of-two divisor up to 4 (no idle lanes
  // along channels) by as many slices.
  const int64_t group_quads = std::min<int64_t>(quads & -quads, 4), group_slices = 64 / group_quads;
  int64_t S = std::clamp<int64_t>((cu * cfg.weight_items + quads * parts - 1) / (quads * parts), 1, tiles);
  const int64_t chunk = std::max<int64_t>((tiles + S - 1) / S, 2);
  S = (tiles + chunk - 1) / chunk;
  const int64_t slice_groups = (S + group_slices - 1) / group_slices;
  if (slice_groups > kMaxGrid || slice_groups * group_slices * chunk >= kMaxInt) return {};
  at::Tensor part = at::empty({slice_groups, C, KH, KW}, x.options());
  const std::string opts = " -DTILE_W=" + std::to_string(cfg.tile_w) + " -DFILTER_ROWS=" + std::to_string(frows) +
                           " -DGROUP_QUADS=" + std::to_string(group_quads) +
                           " -DGROUP_SLICES=" + std::to_string(group_slices);
  launch(d, vec_kernel(d, x.scalar_type(), g, opts, "depthwise_conv_bwd_weight_vec"),
         Range(quads, slice_groups * group_slices, parts), Range(group_quads, group_slices, 1), buf(gy),
         cl_long(gy.stride(0)), i32(gy.stride(2)), i32(gy.stride(3)), buf(x), cl_long(x.stride(0)),
         i32(x.stride(2)), i32(x.stride(3)), buf(part), i32(chunk), i32(N), i32(C), i32(x.size(2)), i32(x.size(3)),
         i32(g.out[0]), i32(g.out[1]), i32(g.pad[0]), i32(g.pad[1]));
  const std::array<int64_t, 1> slices{0};
  return at::sum(part, slices).view(w.sizes());
}

}  // namespace

at::Tensor depthwise_conv_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                  const WindowGeom& g, int64_t groups, at::MemoryFormat mf) {
  const int64_t C = x.size(1), OC = w.size(0);
  if (!applies(x, w, g, groups, C, x.sizes().slice(2)) || (bias.defined() && bias.scalar_type() != x.scalar_type()))
    return {};
  at::Tensor y = at::empty({x.size(0), OC, g.out[0], g.out[1]}, x.options().memory_format(mf));
  const at::Tensor b = bias.defined() ? bias.contiguous() : bias;
  const DwConfig cfg = dw_config(ocl_device(x));
  const bool vec = forward_vec(x, OC, b, g, y, cfg);
  run_forward(x, vec ? packed_taps(w) : plain_taps(w), b, g, y, cfg, vec);
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
    // (k - 1) * dilation - pad. A phase that no tap reaches is zero. The phase's flipped taps are
    // a view of the filters through Taps' offset and negative strides (no copy), of w itself or
    // of its packing for the vector forward (the phases of an aligned gx stay aligned; a phase
    // that the vector forward declines reads the packing through the scalar kernel's strides).
    const DwConfig cfg = dw_config(ocl_device(gy));
    const bool pack = cfg.vec && channel_vectors(gy) && channel_vectors(gx);
    const Taps all = pack ? packed_taps(w) : plain_taps(w);
    for (int64_t ph = 0; ph < std::min(g.stride[0], in[0]); ++ph) {
      for (int64_t pw = 0; pw < std::min(g.stride[1], in[1]); ++pw) {
        const int64_t phase[2] = {ph, pw};
        WindowGeom t = g;
        Taps wp = all;
        at::Tensor out = gx;
        bool reached = true;
        for (int64_t i = 0; i < 2; ++i) {
          // The phase's T taps are k0, k0 + S, ..; flipped tap j is k0 + S * (T - 1 - j).
          const int64_t S = g.stride[i], k0 = (phase[i] + g.pad[i]) % S;
          out = out.slice(2 + i, phase[i], in[i], S);
          t.out[i] = out.size(2 + i), t.stride[i] = 1;
          if (S == 1) {
            t.pad[i] = (g.k[i] - 1) * g.dil[i] - g.pad[i];
          } else {
            if (k0 >= g.k[i]) reached = false;
            t.k[i] = (g.k[i] - k0 + S - 1) / S, t.dil[i] = 1, t.pad[i] = t.k[i] - 1 - (phase[i] + g.pad[i] - k0) / S;
          }
          int64_t& s = i == 0 ? wp.s_h : wp.s_w;
          wp.off += (k0 + S * (t.k[i] - 1)) * s, s *= -S;
        }
        if (!reached) {
          out.zero_();
          continue;
        }
        run_forward(gy, wp, at::Tensor(), t, out, cfg, pack && forward_vec(gy, OC, at::Tensor(), t, out, cfg));
      }
    }
    return gx;
  }
  Device& d = ocl_device(gy);
  const bool ci = channels_inner(gy, in[0] * in[1], dw_config(d));
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
  const DwConfig cfg = dw_config(d);
  if (cfg.vec && OC == C && channel_vectors(gy) && channel_vectors(x) && span(g, 1, cfg.tile_w) <= kMaxVectorSpan)
    if (at::Tensor gw = weight_grad_vec(gy, x, w, g, cfg); gw.defined()) return gw;
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
