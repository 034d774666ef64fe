// Winograd F(2x2, 3x3) convolutions for csrc/ops/winograd.cpp: 3x3 filters at stride 1 as
// 16 independent matrix products in a 4x4 transform domain, 16 multiplications per 2x2
// outputs where the direct form needs 36 (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2015). The products run on the GEMM (gemm.cpp, through at::bmm); these
// kernels are the linear transforms around them, each a pass over memory:
//   forward and input gradient: y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//     (d a 4x4 input patch, g a 3x3 filter, y a 2x2 output tile);
//   weight gradient, the transposed algorithm F(3x3, 2x2): dw = Gᵀ [ (A e Aᵀ) ⊙ (Bᵀ d B) ] G
//     (e a 2x2 tile of the output gradient, d the 4x4 input patch under it, dw 3x3),
// with, along one axis,
//   Bᵀ d = (d0 - d2, d1 + d2, d2 - d1, d1 - d3)      G g = (g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2)
//   Aᵀ m = (m0 + m1 + m2, m1 - m2 - m3)              A e = (e0, e0 + e1, e0 - e1, -e1)
//   Gᵀ m = (m0 + (m1 + m2) / 2, (m1 - m2) / 2, (m1 + m2) / 2 + m3).
// Transformed tiles are stored [slice][16][channel][tile] (tile innermost, for NCHW tensors) or
// [slice][16][tile][channel] (channel innermost, `ci`, for channels-last ones): element xi of the
// transform domain is one channel x tile plane, the operand of product xi. Work-items run along
// the innermost dimension, so the planes are written, and the tensors read, in coalesced runs.
// Tiles number t = (n * TP + tp) * TQ + tq over the 2x2 output tiles of every sample, and slice s
// holds tiles [s * TS, (s + 1) * TS); tiles past T are zero. All arithmetic is float32.
#include "common.clh"

// One axis of each transform over 4 values; a 4x4 transform applies it to the columns, then
// to the rows.
#define WG_BT(a, b, c, d, o0, o1, o2, o3) (o0 = (a) - (c), o1 = (b) + (c), o2 = (c) - (b), o3 = (b) - (d))
#define WG_AT(a, b, c, d, o0, o1) (o0 = (a) + (b) + (c), o1 = (b) - (c) - (d))
#define WG_GT(a, b, c, d, o0, o1, o2) \
  (o0 = (a) + 0.5f * ((b) + (c)), o1 = 0.5f * ((b) - (c)), o2 = 0.5f * ((b) + (c)) + (d))

// The tile a work-item transforms: slot t over S * TS slots and channel ch (global ids 0 and 1,
// swapped for `ci`); `valid` says t < T; (n, tp, tq) its sample and tile position. Element xi
// goes to D[xi * plane].
#define WG_TILE_PROLOGUE                                                                         \
  const int slot = get_global_id(ci ? 1 : 0), ch = get_global_id(ci ? 0 : 1);                  \
  if (slot >= S * TS || ch >= CH) return;                                                       \
  const int s_ = slot / TS, tl = slot - s_ * TS;                                                \
  const long plane = (long)CH * TS;                                                             \
  __global float* D = PTR(float, dst) + s_ * 16 * plane + (ci ? (long)tl * CH + ch : (long)ch * TS + tl); \
  const bool valid = slot < T;                                                                  \
  const int n = slot / (TP * TQ), tp = (slot / TQ) % TP, tq = slot % TQ

// src (N, CH, H, W) with strides (s_n, s_c, s_h, s_w): per 2x2 output tile (tp, tq), the 4x4
// patch at rows 2 tp - pad_h + i, columns 2 tq - pad_w + j (zero outside the image), as
// Bᵀ d B. The forward's and the weight gradient's input transform; pads may be negative (the
// input gradient's padding is 2 - pad).
__kernel void winograd_input_tf(PTR_ARG(float, src), int CH, int H, int W, long s_n, long s_c, long s_h, long s_w,
                                int pad_h, int pad_w, int TP, int TQ, int T, int TS, int S, int ci,
                                PTR_ARG(float, dst)) {
  WG_TILE_PROLOGUE;
  float d[4][4];
  const int h0 = 2 * tp - pad_h, w0 = 2 * tq - pad_w;
  __global const float* X = PTR(float, src) + n * s_n + ch * s_c;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int h = h0 + i, w = w0 + j;
      d[i][j] = valid && h >= 0 && h < H && w >= 0 && w < W ? X[h * s_h + w * s_w] : 0.0f;
    }
  float c[4][4];
#pragma unroll
  for (int j = 0; j < 4; ++j) WG_BT(d[0][j], d[1][j], d[2][j], d[3][j], c[0][j], c[1][j], c[2][j], c[3][j]);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float v0, v1, v2, v3;
    WG_BT(c[i][0], c[i][1], c[i][2], c[i][3], v0, v1, v2, v3);
    D[(4 * i) * plane] = v0, D[(4 * i + 1) * plane] = v1, D[(4 * i + 2) * plane] = v2, D[(4 * i + 3) * plane] = v3;
  }
}

// gy (N, CH, P, Q) with strides: per tile, the 2x2 output-gradient tile e at rows 2 tp + i,
// columns 2 tq + j (zero past P, Q), as A e Aᵀ. The weight gradient's other operand.
__kernel void winograd_grad_tf(PTR_ARG(float, src), int CH, int P, int Q, long s_n, long s_c, long s_h, long s_w,
                               int TP, int TQ, int T, int TS, int S, int ci, PTR_ARG(float, dst)) {
  WG_TILE_PROLOGUE;
  float e[2][2];
  __global const float* G = PTR(float, src) + n * s_n + ch * s_c;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int p = 2 * tp + i, q = 2 * tq + j;
      e[i][j] = valid && p < P && q < Q ? G[p * s_h + q * s_w] : 0.0f;
    }
  float c[4][2];
#pragma unroll
  for (int j = 0; j < 2; ++j)
    c[0][j] = e[0][j], c[1][j] = e[0][j] + e[1][j], c[2][j] = e[0][j] - e[1][j], c[3][j] = -e[1][j];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    D[(4 * i) * plane] = c[i][0], D[(4 * i + 1) * plane] = c[i][0] + c[i][1];
    D[(4 * i + 2) * plane] = c[i][0] - c[i][1], D[(4 * i + 3) * plane] = -c[i][1];
  }
}

// w (O, I, 3, 3) with strides (s_o, s_i, s_r, s_s), read flipped (w[o][i][2 - r][2 - s]) when
// `flip`: G g Gᵀ into dst [16][I][O] (O innermost), the transform-domain products' A operand
// as O x I matrices with unit row stride. NDRange (O, I).
__kernel void winograd_filter_tf(PTR_ARG(float, w), int O, int I, long s_o, long s_i, long s_r, long s_s, int flip,
                                 PTR_ARG(float, dst)) {
  const int o = get_global_id(0), i = get_global_id(1);
  if (o >= O || i >= I) return;
  __global const float* Wp = PTR(float, w) + o * s_o + i * s_i;
  float g[3][3];
#pragma unroll
  for (int r = 0; r < 3; ++r)
#pragma unroll
    for (int s = 0; s < 3; ++s) g[r][s] = Wp[(flip ? 2 - r : r) * s_r + (flip ? 2 - s : s) * s_s];
  float c[4][3];
#pragma unroll
  for (int s = 0; s < 3; ++s) {
    c[0][s] = g[0][s], c[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
    c[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]), c[3][s] = g[2][s];
  }
  const long plane = (long)I * O;
  __global float* D = PTR(float, dst) + (long)i * O + o;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    D[(4 * r) * plane] = c[r][0];
    D[(4 * r + 1) * plane] = 0.5f * (c[r][0] + c[r][1] + c[r][2]);
    D[(4 * r + 2) * plane] = 0.5f * (c[r][0] - c[r][1] + c[r][2]);
    D[(4 * r + 3) * plane] = c[r][2];
  }
}

// m [16][O][ld] (the products, tile innermost) or [16][ld][O] (channel innermost, `ci`) -> out
// (N, O, P, Q) with strides: per tile Aᵀ m A (+ bias[o] when use_bias), the 2x2 outputs that lie
// within P x Q. NDRange (T, O), or (O, T) for `ci`.
__kernel void winograd_output_tf(PTR_ARG(float, m), int O, int T, int ld, int ci, int TP, int TQ, int P, int Q,
                                 PTR_ARG(float, bias), int use_bias, PTR_ARG(float, out), long o_n, long o_c,
                                 long o_h, long o_w) {
  const int t = get_global_id(ci ? 1 : 0), o = get_global_id(ci ? 0 : 1);
  if (t >= T || o >= O) return;
  const long plane = (long)O * ld;
  __global const float* Mp = PTR(float, m) + (ci ? (long)t * O + o : (long)o * ld + t);
  float c[2][4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    WG_AT(Mp[j * plane], Mp[(4 + j) * plane], Mp[(8 + j) * plane], Mp[(12 + j) * plane], c[0][j], c[1][j]);
  const float b = use_bias ? PTR(float, bias)[o] : 0.0f;
  const int n = t / (TP * TQ), p0 = 2 * ((t / TQ) % TP), q0 = 2 * (t % TQ);
  __global float* Y = PTR(float, out) + n * o_n + o * o_c;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float y0, y1;
    WG_AT(c[i][0], c[i][1], c[i][2], c[i][3], y0, y1);
    if (p0 + i < P) {
      Y[(p0 + i) * o_h + q0 * o_w] = y0 + b;
      if (q0 + 1 < Q) Y[(p0 + i) * o_h + (q0 + 1) * o_w] = y1 + b;
    }
  }
}

// m [S][16][O][I] (each slice's products) -> dw (O, I, 3, 3) with strides: Gᵀ (sum over the
// slices of m) G, the slices added in order. NDRange (I, O).
__kernel void winograd_weight_tf(PTR_ARG(float, m), int O, int I, int S, PTR_ARG(float, dw), long s_o, long s_i,
                                 long s_r, long s_s) {
  const int i = get_global_id(0), o = get_global_id(1);
  if (i >= I || o >= O) return;
  const long plane = (long)O * I;
  __global const float* Mp = PTR(float, m) + (long)o * I + i;
  float a[16];
#pragma unroll
  for (int x = 0; x < 16; ++x) a[x] = Mp[x * plane];
  for (int s = 1; s < S; ++s) {
#pragma unroll
    for (int x = 0; x < 16; ++x) a[x] += Mp[(s * 16 + x) * plane];
  }
  float c[3][4];
#pragma unroll
  for (int j = 0; j < 4; ++j) WG_GT(a[j], a[4 + j], a[8 + j], a[12 + j], c[0][j], c[1][j], c[2][j]);
  __global float* Dp = PTR(float, dw) + o * s_o + i * s_i;
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    float v0, v1, v2;
    WG_GT(c[r][0], c[r][1], c[r][2], c[r][3], v0, v1, v2);
    Dp[r * s_r] = v0, Dp[r * s_r + s_s] = v1, Dp[r * s_r + 2 * s_s] = v2;
  }
}
