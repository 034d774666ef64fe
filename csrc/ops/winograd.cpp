// Winograd F(2x2, 3x3) convolutions: see winograd.h and kernels/winograd.cl. A convolution
// becomes 16 matrix products (one per element of the 4x4 transform domain) between
// transformed tiles and transformed filters, one batched at::bmm on the device's GEMM:
//   forward:         m[xi] (K x T) = U[xi] (K x C) @ V[xi] (C x T), then the output transform;
//   input gradient:  the forward of gy with the filters flipped and their channels swapped,
//                    padding 2 - pad;
//   weight gradient: m[xi] (K x C) = E[xi] (K x T) @ V[xi]ᵀ (T x C), summed over slices of the
//                    tiles (T is long and K x C few tiles), then the 3x3 output transform.
// T counts 2x2 output tiles over the batch. Batches whose transformed operands would exceed
// the chunk size run a chunk of samples at a time.
#include "winograd.h"
#include "windows.h"

#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>

namespace torch_ocl {
namespace {

// Where Winograd serves: both channel counts at least min_channels, 32 on GPUs and 64 on CPU
// devices. H200, batch 32, fwd / dX / dW µs, conv.cl's implicit GEMMs -> Winograd: 3x3 32->32
// at 112^2 416 / 416 / 755 -> 348 / 349 / 565, 64->64 at 56^2 217 / 220 / 269 -> 182 / 192 /
// 222, 128->128 at 28^2 204 / 201 / 278 -> 138 / 138 / 151, 256->256 at 14^2 227 / 227 / 336 ->
// 141 / 141 / 123, 512->512 at 7^2 345 / 342 / 329 -> 140 / 135 / 149. PoCL on a 2-core VM,
// batch 8, fwd + dX + dW ms, im2col -> Winograd: 32->32 at 56^2 17.0 -> 18.2, 64->64 at 28^2
// 11.8 -> 9.7, 128->128 at 14^2 10.1 -> 6.6, 256->256 at 7^2 10.7 -> 7.0.
// The tuning entry "conv/winograd" overrides it:
// ENABLE=0|1, MIN_CHANNELS=n, SLICES=s (the weight gradient's slices of the tiles; 0: auto),
// CHUNK_TILES=t (tiles per chunk of samples; 0: as many as 64 Mi floats of one transformed
// operand hold, less on devices with little memory: samples_per_chunk).
struct WinogradConfig {
  bool enabled = true;
  int min_channels = 32;
  int slices = 0;
  int chunk_tiles = 0;
};

WinogradConfig winograd_config(const Device& d) {
  WinogradConfig c;
  if (d.info.is_cpu()) c.min_channels = 64;
  const std::string text = tuning::lookup(d, "conv/winograd");
  if (text.empty()) return c;
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  WinogradConfig r = c;
  if (tuning::parse_items(text, &items, &err)) {
    for (const auto& [key, value] : items) {
      int v = 0;
      if (!tuning::parse_int(key, value, &v, &err)) break;
      if (key == "ENABLE" && (v == 0 || v == 1)) r.enabled = v == 1;
      else if (key == "MIN_CHANNELS" && v >= 1) r.min_channels = v;
      else if (key == "SLICES" && v >= 0) r.slices = v;
      else if (key == "CHUNK_TILES" && v >= 0) r.chunk_tiles = v;
      else err = "unknown key or value out of range: " + key + "=" + value;
      if (!err.empty()) break;
    }
  }
  if (!err.empty()) {
    TORCH_WARN_ONCE("torch_ocl: ignoring tuning entry conv/winograd '", text, "': ", err);
    return c;
  }
  return r;
}

constexpr int64_t kChunkFloats = int64_t(64) << 20;  // per transformed operand (256 MiB)

// Whether Winograd serves a convolution over `a` (N, CH, *, *) between C input and K output
// channels, and its configuration then. `extents`: its spatial sizes and paddings, which the
// kernels hold in 32 bits, as they do the tiles over the batch (N * TP * TQ).
std::optional<WinogradConfig> usable(const at::Tensor& a, int64_t C, int64_t K,
                                     std::initializer_list<int64_t> extents) {
  if (a.scalar_type() != at::kFloat || a.dim() != 4 || a.numel() == 0 || K == 0) return std::nullopt;
  const WinogradConfig c = winograd_config(ocl_device(a));
  if (!c.enabled || C < c.min_channels || K < c.min_channels) return std::nullopt;
  for (int64_t v : extents)
    if (std::abs(v) >= kMaxInt / 4) return std::nullopt;
  return c;
}

// 2x2 output tiles over a batch of N outputs of P x Q.
int64_t tiles(int64_t N, int64_t P, int64_t Q) { return N * ((P + 1) / 2) * ((Q + 1) / 2); }

// Samples per chunk: a chunk's transformed operands of `channels` rows stay within the chunk
// size, or within half the device's largest allocation and a sixteenth of its memory where
// those are smaller.
int64_t samples_per_chunk(const WinogradConfig& c, const Device& d, int64_t tiles_per_sample, int64_t channels) {
  int64_t floats = kChunkFloats;
  if (d.info.max_alloc > 0) floats = std::min<int64_t>(floats, d.info.max_alloc / 8);
  if (d.info.global_mem > 0) floats = std::min<int64_t>(floats, d.info.global_mem / 64);
  const int64_t tiles = c.chunk_tiles > 0 ? c.chunk_tiles : floats / (16 * std::max<int64_t>(channels, 1));
  return std::max<int64_t>(1, tiles / std::max<int64_t>(tiles_per_sample, 1));
}

Kernel& wg_kernel(Device& d, const char* name) { return get_kernel(d, "winograd", "", name); }

// w (O', I', 3, 3) as the filters of a convolution with O output and I input channels:
// G g Gᵀ into [16][I][O]. The input gradient's filters are w's flipped, channels swapped.
at::Tensor filter_transform(const at::Tensor& w, bool input_grad) {
  const int64_t O = w.size(input_grad ? 1 : 0), I = w.size(input_grad ? 0 : 1);
  at::Tensor u = at::empty({16, I, O}, w.options());
  Device& d = ocl_device(w);
  launch(d, wg_kernel(d, "winograd_filter_tf"), Range(O, I), local_wu(O), buf(w), i32(O), i32(I),
         cl_long(w.stride(input_grad ? 1 : 0)), cl_long(w.stride(input_grad ? 0 : 1)), cl_long(w.stride(2)),
         cl_long(w.stride(3)), cl_int(input_grad), buf(u));
  return u;
}

// src (N, CH, H, W): its tiles' 4x4 input patches (pads pad_h, pad_w) or, for `grad`, its 2x2
// output-gradient tiles, over a TP x TQ tile grid, transformed into [S * 16][CH][TS] or, for
// `ci`, [S * 16][TS][CH].
at::Tensor tile_transform(bool grad, bool ci, const at::Tensor& src, int64_t pad_h, int64_t pad_w, int64_t TP,
                          int64_t TQ, int64_t S, int64_t TS) {
  const int64_t CH = src.size(1), T = src.size(0) * TP * TQ;
  at::Tensor v = ci ? at::empty({S * 16, TS, CH}, src.options()) : at::empty({S * 16, CH, TS}, src.options());
  Device& d = ocl_device(src);
  const Range global = ci ? Range(CH, S * TS) : Range(S * TS, CH), local = local_wu(ci ? CH : S * TS);
  const cl_long sn = src.stride(0), sc = src.stride(1), sh = src.stride(2), sw = src.stride(3);
  if (grad)
    launch(d, wg_kernel(d, "winograd_grad_tf"), global, local, buf(src), i32(CH), i32(src.size(2)), i32(src.size(3)),
           sn, sc, sh, sw, i32(TP), i32(TQ), i32(T), i32(TS), i32(S), cl_int(ci), buf(v));
  else
    launch(d, wg_kernel(d, "winograd_input_tf"), global, local, buf(src), i32(CH), i32(src.size(2)),
           i32(src.size(3)), sn, sc, sh, sw, i32(pad_h), i32(pad_w), i32(TP), i32(TQ), i32(T), i32(TS), i32(S),
           cl_int(ci), buf(v));
  return v;
}

// out (N, O, P, Q) = conv(src (N, CH, H, W), filters u [16][CH][O] (filter_transform), padding
// pad_h, pad_w) + bias: per chunk of samples, the input transform, one batched product and the
// output transform.
void winograd_conv(const WinogradConfig& c, const at::Tensor& src, const at::Tensor& u, int64_t pad_h, int64_t pad_w,
                   const at::Tensor& bias, const at::Tensor& out) {
  const int64_t N = src.size(0), CH = src.size(1), O = out.size(1), P = out.size(2), Q = out.size(3);
  const int64_t TP = (P + 1) / 2, TQ = (Q + 1) / 2;
  // Channels-last sources keep their transformed tiles channel innermost, so that the
  // transforms read them in coalesced runs.
  const bool ci = unit_channel_stride(src);
  Device& d = ocl_device(src);
  const int64_t nb = samples_per_chunk(c, d, TP * TQ, std::max(CH, O));
  Kernel& k = wg_kernel(d, "winograd_output_tf");
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t n = std::min(nb, N - n0), T = n * TP * TQ, ld = (T + 3) / 4 * 4;
    const at::Tensor o = out.narrow(0, n0, n);
    const at::Tensor v = tile_transform(false, ci, src.narrow(0, n0, n), pad_h, pad_w, TP, TQ, 1, ld);
    // The products: [16] O x ld (u's O x CH transposed view times v), or for ci their
    // transposes ld x O (v times u).
    const at::Tensor m = ci ? at::bmm(v, u) : at::bmm(u.transpose(1, 2), v);
    const Range global = ci ? Range(O, T) : Range(T, O);
    launch(d, k, global, local_wu(ci ? O : T), buf(m), i32(O), i32(T), i32(ld), cl_int(ci), i32(TP), i32(TQ),
           i32(P), i32(Q), buf_or_none(bias), cl_int(bias.defined()), buf(o), cl_long(o.stride(0)),
           cl_long(o.stride(1)), cl_long(o.stride(2)), cl_long(o.stride(3)));
  }
}

}  // namespace

at::Tensor winograd_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, int64_t pad_h,
                            int64_t pad_w, at::MemoryFormat mf) {
  const int64_t C = x.size(1), K = w.size(0);
  const int64_t P = x.size(2) + 2 * pad_h - 2, Q = x.size(3) + 2 * pad_w - 2;
  const auto c = usable(x, C, K, {x.size(2), x.size(3), P, Q, pad_h, pad_w, tiles(x.size(0), P, Q)});
  if (!c || (bias.defined() && bias.scalar_type() != at::kFloat)) return {};
  at::Tensor y = at::empty({x.size(0), K, P, Q}, x.options().memory_format(mf));
  winograd_conv(*c, x, filter_transform(w, false), pad_h, pad_w, bias.defined() ? bias.contiguous() : bias, y);
  return y;
}

at::Tensor winograd_input_grad(const at::Tensor& gy, const at::Tensor& w, int64_t H, int64_t W, int64_t pad_h,
                               int64_t pad_w, at::MemoryFormat mf) {
  // gy must be that convolution's output (a transposed convolution's output padding would break it).
  if (gy.dim() != 4 || gy.size(2) != H + 2 * pad_h - 2 || gy.size(3) != W + 2 * pad_w - 2) return {};
  const int64_t K = gy.size(1), C = w.size(1);
  const auto c = usable(gy, K, C, {gy.size(2), gy.size(3), H, W, pad_h, pad_w, tiles(gy.size(0), H, W)});
  if (!c) return {};
  at::Tensor gi = at::empty({gy.size(0), C, H, W}, gy.options().memory_format(mf));
  winograd_conv(*c, gy, filter_transform(w, true), 2 - pad_h, 2 - pad_w, at::Tensor(), gi);
  return gi;
}

// Slices of the tiles: the products are K x C, few work-groups each, and T deep; cutting T
// into S slices gives S times the work-groups and S partial sums that the output transform
// adds. S is the largest power of two up to 16 that keeps the 64x64 tiles of all the products
// within 8 per compute unit, and slices at least 256 tiles deep. H200, weight gradient at batch 32,
// µs for S = 1 / 2 / 4 / 8 / 16: 3x3 64->64 at 56^2 921 / 512 / 326 / 222 / 226, 128->128 at 28^2
// 269 / 163 / 160 / 151 / 152, 256->256 at 14^2 153 / 130 / 123 / 140 / 183, 512->512 at 7^2
// 149 / 151 / 185 / 207 / 277, 32->32 at 112^2 3313 / 1750 / 974 / 575 / 565.
int64_t weight_grad_slices(const WinogradConfig& c, const Device& d, int64_t K, int64_t C, int64_t T) {
  if (c.slices > 0) return std::min<int64_t>(c.slices, T);
  const int64_t cu = std::max<int64_t>(d.info.compute_units, 1);
  const int64_t tiles = 16 * ((K + 63) / 64) * ((C + 63) / 64);
  int64_t S = 1;
  while (S < 16 && 2 * S * tiles <= 8 * cu && T / (2 * S) >= 256) S *= 2;
  return S;
}

at::Tensor winograd_weight_grad(const at::Tensor& gy, const at::Tensor& x, int64_t pad_h, int64_t pad_w) {
  const int64_t N = x.size(0), C = x.size(1), K = gy.size(1), P = gy.size(2), Q = gy.size(3);
  const auto c = usable(x, C, K, {x.size(2), x.size(3), P, Q, pad_h, pad_w, tiles(N, P, Q)});
  if (!c || gy.scalar_type() != at::kFloat || gy.dim() != 4 || P != x.size(2) + 2 * pad_h - 2 ||
      Q != x.size(3) + 2 * pad_w - 2)
    return {};
  const int64_t TP = (P + 1) / 2, TQ = (Q + 1) / 2;
  Device& d = ocl_device(x);
  const int64_t nb = samples_per_chunk(*c, d, TP * TQ, std::max(C, K));
  // Per chunk: its slice count and depth (a multiple of 16, the GEMM's K step).
  std::vector<std::pair<int64_t, int64_t>> plan;
  int64_t total = 0;
  for (int64_t n0 = 0; n0 < N; n0 += nb) {
    const int64_t T = std::min(nb, N - n0) * TP * TQ;
    int64_t S = weight_grad_slices(*c, d, K, C, T);
    const int64_t TS = ((T + S - 1) / S + 15) / 16 * 16;
    S = (T + TS - 1) / TS;
    plan.emplace_back(S, TS);
    total += S;
  }
  at::Tensor m = at::empty({total * 16, K, C}, x.options());
  const bool ci = unit_channel_stride(x);  // as in winograd_conv
  int64_t s0 = 0, n0 = 0;
  for (const auto& [S, TS] : plan) {
    const int64_t n = std::min(nb, N - n0);
    const at::Tensor e = tile_transform(true, ci, gy.narrow(0, n0, n), 0, 0, TP, TQ, S, TS);
    const at::Tensor v = tile_transform(false, ci, x.narrow(0, n0, n), pad_h, pad_w, TP, TQ, S, TS);
    at::Tensor part = m.narrow(0, s0 * 16, S * 16);
    at::bmm_out(part, ci ? e.transpose(1, 2) : e, ci ? v : v.transpose(1, 2));  // K x TS times TS x C
    s0 += S, n0 += n;
  }
  at::Tensor dw = at::empty({K, C, 3, 3}, x.options());
  launch(d, wg_kernel(d, "winograd_weight_tf"), Range(C, K), local_wu(C), buf(m), i32(K), i32(C), i32(total),
         buf(dw), cl_long(dw.stride(0)), cl_long(dw.stride(1)), cl_long(dw.stride(2)), cl_long(dw.stride(3)));
  return dw;
}

}  // namespace torch_ocl
