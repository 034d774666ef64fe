// Depthwise convolutions for csrc/ops/depthwise_conv.cpp: groups == input channels, each input
// channel c convolved with its own MULT filters (output channels c * MULT .. c * MULT + MULT - 1).
// A product has one input channel, so there is no GEMM to hand it to: each output is a short
// sum over the filter taps, read straight from global memory (neighbouring work-items share
// their windows through the caches). Any stride, padding and dilation; tensors through their
// strides (NCHW, channels-last or views). KH and KW are build options, so the tap loops
// unroll and the weight gradient keeps one accumulator per tap in registers. Channels-last
// tensors of whole channel quads, one filter per channel, take the 4-vector kernels at the end.
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

// ---- Channels-last tensors with one filter per channel, C a multiple of 4 ----
// The host takes these kernels where the tensors' non-channel strides and byte offsets are
// multiples of 4 elements, so a position's 4 channels c..c+3 are one aligned vector load or
// store, and work-items run channel quads fastest (NDRange dim 0), so that neighbouring
// work-items touch neighbouring 16 (32 for double) bytes. Stride and dilation are build options
// here: the tap loops then unroll to exactly the input rows and columns a work-item's outputs
// read, each loaded once (an unused one is dead code), and their offsets are constants.
#ifndef STRIDE_H
#define STRIDE_H 1  // the vector kernels' row stride
#endif
#ifndef STRIDE_W
#define STRIDE_W 1  // column stride
#endif
#ifndef DIL_H
#define DIL_H 1  // row dilation
#endif
#ifndef DIL_W
#define DIL_W 1  // column dilation
#endif
#ifndef TILE_W
#define TILE_W 4  // consecutive output columns per work-item of the vector kernels
#endif
#ifndef TILE_H
#define TILE_H 2  // consecutive output rows per work-item of the vector forward
#endif
#ifndef FILTER_ROWS
#define FILTER_ROWS KH  // filter rows per work-item of the vector weight gradient (its accumulators)
#endif
#define V4 CAT(DTYPE, 4)
// Input columns that TILE_W consecutive outputs read, and input rows that TILE_H rows read.
#define SPAN_W ((TILE_W - 1) * STRIDE_W + (KW - 1) * DIL_W + 1)
#define SPAN_H ((TILE_H - 1) * STRIDE_H + (KH - 1) * DIL_H + 1)
// The vector at element offset `off` from p.
#define V4_AT(p, off) (*(__global const V4*)((p) + (off)))

// in[u] = x row `ih` (row offset within the sample already in X), column iw0 + u, for the
// SPAN_W columns from iw0; columns outside the input are zero.
#define DW_VEC_LOAD_ROW(in, X, iw0)                                                         \
  _Pragma("unroll") for (int u = 0; u < SPAN_W; ++u) {                                      \
    const int iw_ = (iw0) + u;                                                              \
    in[u] = iw_ >= 0 && iw_ < W ? V4_AT(X, iw_ * x_w) : (V4)0;                              \
  }

// out[n][oh][ow][c..c+3] = sum over taps of x[n][oh*STRIDE_H - PH + kh*DIL_H][ow*STRIDE_W - PW
// + kw*DIL_W][c..c+3] * w[kh][kw][c..c+3] (+ bias[c..c+3]), for a TILE_H x TILE_W block of
// outputs per work-item: the block's input rows are read once each, and shared by the output
// rows they reach. Tap (kh, kw)'s 4 channels are the vector at w + kh * w_h + kw * w_w + c (the
// host packs the filters (KH, KW, C), or for the input gradient passes a flipped, sliced view of
// that through the strides). x, out: sample stride (long) and row and column strides (a sample
// spans fewer than 2^31 elements: the host checks); channel stride 1. NDRange (C / 4 * ceil(OW /
// TILE_W) * ceil(OH / TILE_H), N), channel quads fastest, then blocks along the row (a sample's
// blocks in one dim, so that only its last work-group has idle lanes).
__kernel void depthwise_conv_fwd_vec(PTR_ARG(DTYPE, x), long x_n, int x_h, int x_w, PTR_ARG(DTYPE, w), int w_h,
                                     int w_w, PTR_ARG(DTYPE, bias), int use_bias, PTR_ARG(DTYPE, out), long o_n,
                                     int o_h, int o_w, int C, int H, int W, int OH, int OW, int PH, int PW) {
  const int quads = C / 4, per_row = (OW + TILE_W - 1) / TILE_W, g = get_global_id(0), n = get_global_id(1);
  const int rest = g / quads, c = (g - rest * quads) * 4, th = rest / per_row, tw = rest - th * per_row;
  const int oh0 = th * TILE_H;
  if (oh0 >= OH) return;
  const int ow0 = tw * TILE_W, ih0 = oh0 * STRIDE_H - PH, iw0 = ow0 * STRIDE_W - PW;
  __global const DTYPE* X = PTR(DTYPE, x) + n * x_n + c;
  __global const DTYPE* Wt = PTR(DTYPE, w) + c;
  const V4 b = use_bias ? V4_AT(PTR(DTYPE, bias), c) : (V4)0;
  V4 acc[TILE_H][TILE_W];
#pragma unroll
  for (int r = 0; r < TILE_H; ++r)
#pragma unroll
    for (int j = 0; j < TILE_W; ++j) acc[r][j] = b;
#pragma unroll
  for (int i = 0; i < SPAN_H; ++i) {
    const int ih = ih0 + i;
    if (ih < 0 || ih >= H) continue;
    V4 in[SPAN_W];
    DW_VEC_LOAD_ROW(in, X + ih * x_h, iw0);
    // Input row i serves output row r through filter row kh where r * STRIDE_H + kh * DIL_H == i
    // (constants once unrolled).
#pragma unroll
    for (int r = 0; r < TILE_H; ++r) {
#pragma unroll
      for (int kh = 0; kh < KH; ++kh) {
        if (r * STRIDE_H + kh * DIL_H != i) continue;
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) {
          const V4 f = V4_AT(Wt, kh * w_h + kw * w_w);
#pragma unroll
          for (int j = 0; j < TILE_W; ++j) acc[r][j] += in[j * STRIDE_W + kw * DIL_W] * f;
        }
      }
    }
  }
  __global DTYPE* Y = PTR(DTYPE, out) + n * o_n + c;
#pragma unroll
  for (int r = 0; r < TILE_H; ++r)
#pragma unroll
    for (int j = 0; j < TILE_W; ++j)
      if (oh0 + r < OH && ow0 + j < OW) *(__global V4*)(Y + (oh0 + r) * o_h + (ow0 + j) * o_w) = acc[r][j];
}

// One tile of the vector weight gradient: output row oh's columns ow0 .. ow0 + n_ - 1 (n_ <=
// TILE_W; the rest of the tile adds nothing, so an infinite input there cannot leak in) add
// gy * the window's input to this work-item's filter rows kh0 .. kh0 + FILTER_ROWS - 1.
#define DW_VEC_WEIGHT_TILE(n_)                                                              \
  do {                                                                                      \
    V4 gv[TILE_W];                                                                          \
    _Pragma("unroll") for (int j = 0; j < TILE_W; ++j) gv[j] =                              \
        j < (n_) ? V4_AT(G, (ow0 + j) * g_w) : (V4)0;                                       \
    const int iw0 = ow0 * STRIDE_W - PW;                                                    \
    _Pragma("unroll") for (int t = 0; t < FILTER_ROWS; ++t) {                               \
      const int ih = ih0 + t * DIL_H;                                                       \
      if (ih < 0 || ih >= H || kh0 + t >= KH) continue;                                     \
      V4 in[SPAN_W];                                                                        \
      DW_VEC_LOAD_ROW(in, X + ih * x_h, iw0);                                               \
      _Pragma("unroll") for (int kw = 0; kw < KW; ++kw)                                     \
        _Pragma("unroll") for (int j = 0; j < TILE_W; ++j)                                  \
          if (j < (n_)) acc[t][kw] += gv[j] * in[j * STRIDE_W + kw * DIL_W];                \
    }                                                                                       \
  } while (0)

#ifndef GROUP_QUADS
#define GROUP_QUADS 4  // channel quads of a vector weight-gradient work-group (dim 0)
#endif
#ifndef GROUP_SLICES
#define GROUP_SLICES 16  // its slices (dim 1), summed in local memory
#endif

// The weight gradient's partial sums over 4-vectors of channels. The positions are tiles of
// TILE_W columns of an output row, N * OH * ceil(OW / TILE_W) of them; work-item (q, s, r) of
// NDRange (C / 4, S rounded up to GROUP_SLICES, ceil(KH / FILTER_ROWS)) adds, over the tiles
// [s * chunk, (s + 1) * chunk), the products of channels 4q..4q+3 for the filter rows kh0 =
// r * FILTER_ROWS ..; a work-group's GROUP_SLICES slices are summed in local memory, and the
// group stores part[group along dim 1][c][kh][kw] (the host sums those). Work-groups
// (GROUP_QUADS, GROUP_SLICES, 1): neighbouring work-items read neighbouring channel quads of one
// position. gy, x: strides as in depthwise_conv_fwd_vec. Every work-item reaches every barrier.
__kernel __attribute__((reqd_work_group_size(GROUP_QUADS, GROUP_SLICES, 1)))
void depthwise_conv_bwd_weight_vec(PTR_ARG(DTYPE, gy), long g_n, int g_h, int g_w, PTR_ARG(DTYPE, x), long x_n,
                                   int x_h, int x_w, PTR_ARG(ACC, part), int chunk, int N, int C, int H, int W,
                                   int OH, int OW, int PH, int PW) {
  __local V4 red[GROUP_SLICES * GROUP_QUADS];
  const int c = get_global_id(0) * 4, s = get_global_id(1), kh0 = get_global_id(2) * FILTER_ROWS;
  const int lq = get_local_id(0), ls = get_local_id(1);
  V4 acc[FILTER_ROWS][KW];
#pragma unroll
  for (int t = 0; t < FILTER_ROWS; ++t)
#pragma unroll
    for (int kw = 0; kw < KW; ++kw) acc[t][kw] = 0;
  // Tiles p = ((n * OH + oh) * per_row + tw) (fewer than 2^31 with the padded slices: the host
  // checks); (n, oh, tw) is divided out once, then advanced.
  const int per_row = (OW + TILE_W - 1) / TILE_W, end = min(N * OH * per_row, (s + 1) * chunk);
  int p = s * chunk, row = p / per_row, tw = p - row * per_row, n = row / OH, oh = row - n * OH;
  for (; p < end; ++p) {
    __global const DTYPE* G = PTR(DTYPE, gy) + n * g_n + oh * g_h + c;
    __global const DTYPE* X = PTR(DTYPE, x) + n * x_n + c;
    const int ih0 = oh * STRIDE_H - PH + kh0 * DIL_H, ow0 = tw * TILE_W;
    if (ow0 + TILE_W <= OW) DW_VEC_WEIGHT_TILE(TILE_W);
    else DW_VEC_WEIGHT_TILE(OW - ow0);
    if (++tw == per_row) {
      tw = 0;
      if (++oh == OH) oh = 0, ++n;
    }
  }
  // Sum the group's slices tap by tap (a tree over dim 1); only slot lq of slice 0 is read
  // after the last barrier, and only its own work-item writes it next.
  __global ACC* P = PTR(ACC, part) + ((long)get_group_id(1) * C + c) * (KH * KW);
#pragma unroll
  for (int t = 0; t < FILTER_ROWS; ++t) {
#pragma unroll
    for (int kw = 0; kw < KW; ++kw) {
      red[ls * GROUP_QUADS + lq] = acc[t][kw];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int step = GROUP_SLICES / 2; step > 0; step >>= 1) {
        if (ls < step) red[ls * GROUP_QUADS + lq] += red[(ls + step) * GROUP_QUADS + lq];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      const int k = (kh0 + t) * KW + kw;
      if (ls == 0 && kh0 + t < KH) {
        const V4 v = red[lq];
        P[k] = v.s0, P[KH * KW + k] = v.s1, P[2 * KH * KW + k] = v.s2, P[3 * KH * KW + k] = v.s3;
      }
    }
  }
}
