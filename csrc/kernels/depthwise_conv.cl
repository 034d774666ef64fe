// Depthwise convolutions for csrc/ops/depthwise_conv.cpp: groups == input channels, each input
// channel c convolved with its own MULT filters (output channels c * MULT .. c * MULT + MULT - 1).
// A product has one input channel, so there is no GEMM to hand it to: each output is a short
// sum over the filter taps, read straight from global memory (neighbouring work-items share
// their windows through the caches). Any stride, padding and dilation; tensors through their
// strides (NCHW, channels-last or views). KH and KW are build options, so the tap loops
// unroll and the weight gradient keeps one accumulator per tap in registers.
#include "common.clh"

#ifndef DTYPE
#define DTYPE float  // float or double (the host declines other dtypes)
#endif
#define ACC DTYPE
#ifndef KH
#define KH 3  // filter rows
#endif
#ifndef KW
#define KW 3  // filter columns
#endif
#ifndef WG
#define WG 128  // work-items of a weight-gradient work-group
#endif

// The geometry every kernel takes: C input channels with MULT filters each, input H x W,
// output OH x OW, stride, padding and dilation per dim.
#define DW_GEOM                                                                                  \
  int C, int MULT, int H, int W, int OH, int OW, int SH, int SW, int PH, int PW, int DH, int DWL
// A tensor's (sample, channel, row, column) strides.
#define DW_STRIDES(t) long t##_n, long t##_c, long t##_h, long t##_w
// The forward and the input gradient run work-items along positions (NDRange dim 0), or along
// channels (`ci`: dims 0 and 1 swapped) for channels-last tensors where the host chooses so
// (GPUs), so that a work-group's reads and writes are consecutive in memory.

// out[n][o][oh][ow] = sum over taps of x[n][o / MULT][oh*SH - PH + kh*DH][ow*SW - PW + kw*DWL] *
// w[o][kh][kw] (+ bias[o]). Each work-item computes OPW consecutive outputs of a row; at unit
// column stride and dilation their windows overlap, and each filter row reads OPW + KW - 1
// inputs once instead of OPW * KW. NDRange (OH * ceil(OW / OPW), C * MULT, N), or for `ci`
// (C * MULT, OH * ceil(OW / OPW), N).
#ifndef OPW
#define OPW 4  // consecutive output columns per work-item of the forward
#endif
__kernel void depthwise_conv_fwd(PTR_ARG(DTYPE, x), DW_STRIDES(x), PTR_ARG(DTYPE, w), long w_o, long w_h, long w_w,
                                 PTR_ARG(DTYPE, bias), int use_bias, PTR_ARG(DTYPE, out), DW_STRIDES(o), int ci,
                                 DW_GEOM) {
  const int per_row = (OW + OPW - 1) / OPW;  // work-items per output row
  const int pos = get_global_id(ci ? 1 : 0), o = get_global_id(ci ? 0 : 1), n = get_global_id(2);
  if (pos >= OH * per_row || o >= C * MULT) return;
  const int oh = pos / per_row, ow0 = (pos - oh * per_row) * OPW;
  __global const DTYPE* X = PTR(DTYPE, x) + n * x_n + (o / MULT) * x_c;
  __global const DTYPE* Wt = PTR(DTYPE, w) + o * w_o;
  const int ih0 = oh * SH - PH, iw0 = ow0 * SW - PW;
  ACC acc[OPW];
#pragma unroll
  for (int j = 0; j < OPW; ++j) acc[j] = use_bias ? (ACC)PTR(DTYPE, bias)[o] : (ACC)0;
  const bool dense = SW == 1 && DWL == 1;
#pragma unroll
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = ih0 + kh * DH;
    if (ih < 0 || ih >= H) continue;
    __global const DTYPE* row = X + ih * x_h;
    if (dense) {
      ACC in[OPW + KW - 1];
#pragma unroll
      for (int i = 0; i < OPW + KW - 1; ++i) in[i] = iw0 + i >= 0 && iw0 + i < W ? (ACC)row[(iw0 + i) * x_w] : (ACC)0;
#pragma unroll
      for (int kw = 0; kw < KW; ++kw) {
        const ACC f = (ACC)Wt[kh * w_h + kw * w_w];
#pragma unroll
        for (int j = 0; j < OPW; ++j) acc[j] += in[j + kw] * f;
      }
    } else {
#pragma unroll
      for (int kw = 0; kw < KW; ++kw) {
        const ACC f = (ACC)Wt[kh * w_h + kw * w_w];
#pragma unroll
        for (int j = 0; j < OPW; ++j) {
          const int iw = iw0 + j * SW + kw * DWL;
          if (iw >= 0 && iw < W) acc[j] += (ACC)row[iw * x_w] * f;
        }
      }
    }
  }
  __global DTYPE* Y = PTR(DTYPE, out) + n * o_n + o * o_c + oh * o_h;
#pragma unroll
  for (int j = 0; j < OPW; ++j)
    if (ow0 + j < OW) Y[(ow0 + j) * o_w] = (DTYPE)acc[j];
}

// gx[n][c][ih][iw] = sum over the channel's MULT outputs o and the taps that reach (ih, iw),
// i.e. oh = (ih + PH - kh*DH) / SH whole and in range (likewise ow), of gy[n][o][oh][ow] *
// w[o][kh][kw]. NDRange (H * W, C, N), or (C, H * W, N) for `ci`. (At stride 1 with one filter
// per channel the host runs the forward over gy with the filters flipped instead.)
__kernel void depthwise_conv_bwd_input(PTR_ARG(DTYPE, gy), DW_STRIDES(g), PTR_ARG(DTYPE, w), long w_o, long w_h,
                                       long w_w, PTR_ARG(DTYPE, gx), DW_STRIDES(i), int ci, DW_GEOM) {
  const int pos = get_global_id(ci ? 1 : 0), c = get_global_id(ci ? 0 : 1), n = get_global_id(2);
  if (pos >= H * W || c >= C) return;
  const int ih = pos / W, iw = pos - ih * W;
  ACC acc = 0;
  // Undilated: the outputs that reach (ih, iw) are the rows oh with 0 <= ih + PH - oh*SH < KH,
  // a range walked directly (about KH / SH of them), likewise the columns.
  const int th = ih + PH, tw = iw + PW;
  const int oh0 = th < KH ? 0 : (th - KH + SH) / SH, oh1 = min(OH - 1, th / SH);
  const int ow0 = tw < KW ? 0 : (tw - KW + SW) / SW, ow1 = min(OW - 1, tw / SW);
  for (int r = 0; r < MULT; ++r) {
    const int o = c * MULT + r;
    __global const DTYPE* G = PTR(DTYPE, gy) + n * g_n + o * g_c;
    __global const DTYPE* Wt = PTR(DTYPE, w) + o * w_o;
    if (DH == 1 && DWL == 1) {
      for (int oh = oh0; oh <= oh1; ++oh)
        for (int ow = ow0; ow <= ow1; ++ow)
          acc += (ACC)G[oh * g_h + ow * g_w] * (ACC)Wt[(th - oh * SH) * w_h + (tw - ow * SW) * w_w];
      continue;
    }
#pragma unroll
    for (int kh = 0; kh < KH; ++kh) {
      const int th = ih + PH - kh * DH;
      if (th < 0 || th % SH != 0 || th / SH >= OH) continue;
#pragma unroll
      for (int kw = 0; kw < KW; ++kw) {
        const int tw = iw + PW - kw * DWL;
        if (tw >= 0 && tw % SW == 0 && tw / SW < OW)
          acc += (ACC)G[(th / SH) * g_h + (tw / SW) * g_w] * (ACC)Wt[kh * w_h + kw * w_w];
      }
    }
  }
  PTR(DTYPE, gx)[n * i_n + c * i_c + ih * i_h + iw * i_w] = (DTYPE)acc;
}

// The weight gradient's products at output position (oh, ow): acc[kh * KW + kw] += g * the
// window tap's input in X (a sample's channel, strides x_h, x_w), taps outside the input skipped.
#define DW_ACCUMULATE_TAPS(acc, g, X, oh, ow)                                               \
  do {                                                                                      \
    const int ih0_ = (oh) * SH - PH, iw0_ = (ow) * SW - PW;                                 \
    _Pragma("unroll") for (int kh = 0; kh < KH; ++kh) {                                     \
      const int ih = ih0_ + kh * DH;                                                        \
      const bool row = ih >= 0 && ih < H;                                                   \
      _Pragma("unroll") for (int kw = 0; kw < KW; ++kw) {                                   \
        const int iw = iw0_ + kw * DWL;                                                     \
        if (row && iw >= 0 && iw < W) acc[kh * KW + kw] += (g) * (ACC)(X)[ih * x_h + iw * x_w]; \
      }                                                                                     \
    }                                                                                       \
  } while (0)

// The weight gradient's partial sums: work-group (s, o) adds gy[n][o][oh][ow] * x[n][o / MULT]
// [window tap] over the positions [s * chunk, (s + 1) * chunk) of all N * OH * OW, one
// accumulator per tap, and stores part[s][o][kh][kw] (the host sums the slices). NDRange
// (S * WG, C * MULT), local (WG, 1). Every work-item reaches every barrier.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void depthwise_conv_bwd_weight(PTR_ARG(DTYPE, gy), DW_STRIDES(g), PTR_ARG(DTYPE, x), DW_STRIDES(x),
                               PTR_ARG(ACC, part), int N, int chunk, DW_GEOM) {
  __local ACC red[WG];
  const int lid = get_local_id(0), s = get_group_id(0), o = get_global_id(1), OC = get_global_size(1);
  // Positions p = (n * OH + oh) * OW + ow (fewer than 2^31: the host checks), each work-item's
  // stepping by WG: (n, oh, ow) is divided out once and then advanced.
  const int plane = OH * OW, end = min(N * plane, (s + 1) * chunk);
  ACC acc[KH * KW];
#pragma unroll
  for (int t = 0; t < KH * KW; ++t) acc[t] = 0;
  int p = s * chunk + lid, n = p / plane, oh = (p - n * plane) / OW, ow = p - n * plane - oh * OW;
  const int step_h = WG / OW, step_w = WG - step_h * OW;
  for (; p < end; p += WG) {
    const ACC g = PTR(DTYPE, gy)[n * g_n + o * g_c + oh * g_h + ow * g_w];
    __global const DTYPE* X = PTR(DTYPE, x) + n * x_n + (o / MULT) * x_c;
    DW_ACCUMULATE_TAPS(acc, g, X, oh, ow);
    ow += step_w, oh += step_h;
    if (ow >= OW) ow -= OW, ++oh;
    while (oh >= OH) oh -= OH, ++n;
  }
  __global ACC* P = PTR(ACC, part) + ((long)s * OC + o) * (KH * KW);
#pragma unroll
  for (int t = 0; t < KH * KW; ++t) {
    red[lid] = acc[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
      if (lid < step) red[lid] += red[lid + step];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) P[t] = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// The weight gradient for channels-last tensors: work-item o of slice s (NDRange (C * MULT,
// S)) adds its own channel's products over the positions [s * chunk, (s + 1) * chunk), so the
// work-items of a group read consecutive channels of one position and need no group sum; it
// stores part[s][o][kh][kw] like depthwise_conv_bwd_weight.
__kernel void depthwise_conv_bwd_weight_cl(PTR_ARG(DTYPE, gy), DW_STRIDES(g), PTR_ARG(DTYPE, x), DW_STRIDES(x),
                                           PTR_ARG(ACC, part), int N, int chunk, DW_GEOM) {
  const int o = get_global_id(0), s = get_global_id(1), OC = C * MULT;
  if (o >= OC) return;
  const int plane = OH * OW, end = min(N * plane, (s + 1) * chunk);
  ACC acc[KH * KW];
#pragma unroll
  for (int t = 0; t < KH * KW; ++t) acc[t] = 0;
  int p = s * chunk, n = p / plane, oh = (p - n * plane) / OW, ow = p - n * plane - oh * OW;
  __global const DTYPE* G = PTR(DTYPE, gy) + o * g_c;
  __global const DTYPE* Xc = PTR(DTYPE, x) + (o / MULT) * x_c;
  for (; p < end; ++p) {
    const ACC g = G[n * g_n + oh * g_h + ow * g_w];
    __global const DTYPE* X = Xc + n * x_n;
    DW_ACCUMULATE_TAPS(acc, g, X, oh, ow);
    if (++ow == OW) {
      ow = 0;
      if (++oh == OH) oh = 0, ++n;
    }
  }
  __global ACC* P = PTR(ACC, part) + ((long)s * OC + o) * (KH * KW);
#pragma unroll
  for (int t = 0; t < KH * KW; ++t) P[t] = acc[t];
}
