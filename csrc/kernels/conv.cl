// Convolutions as implicit GEMMs (ops/conv.cpp): the products read the input's windows in
// place, with no column matrix in memory. For group g of a 2-D convolution (1-D: one input
// row; 3-D with DEPTH: the same over depth too, od/kd/SD/PD/DD like the rows),
// out[b, g*M + m, oh, ow] = sum_k A[k, m] * B[k, n] + bias[g*M + m], with
//   m: output channel within the group (M of them), n = (b * OH + oh) * OW + ow,
//   k = (kh * KW + kw) * CG + c: tap-major over the group's CG input channels,
//   A: the weight, packed by the host as [G][K][MP] (MP = M rounded up to 4, zero-padded),
//   B[k, n] = x[b, g*CG + c, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW], zero outside the input.
// Where CG is a multiple of TILE_K, each K step of TILE_K lies within one tap: its window offset
// and bounds check hold for all of the step's loads of a work-item, and the work-items walk the
// taps by counters, without divisions. Other channel counts (3-channel image inputs, small
// groups) take TAP_TABLE: K is padded to KP, a multiple of TILE_K, the weight's padded rows are
// zero, and each k's tap and channel come from a host-built table of int4 entries
// (kh * DH, kw * DW, c * xs_c, kd * DD), so the loads need no divisions either; entries for
// k >= K have row and depth offsets of -2^30, which put every window outside the input (the host
// keeps window origins within +-2^29). The weight gradient reads its columns
// j = ((kd * KH + kh) * KW + kw) * CG + c through the same table. The tiling follows
// gemm.cl's gemm_tiled_fwd: a TILE_M x TILE_N output tile per work-group, WPT_M x WPT_N per
// work-item in 4x4 blocks, the next step's loads in registers while the current one
// computes, two local buffers and one barrier per step.
// The weight gradient (conv2d_bwd_weight) is the same tiling over a different product:
// dW[g*M + m, c, kh, kw] = sum over r = (b, oh, ow) of gy[b, g*M + m, oh, ow] * B[r, (kh, kw, c)],
// K = NB*OH*OW split into slices whose partial sums the host adds.
#include "common.clh"

#ifndef DTYPE
#define DTYPE float  // float or double (storage and accumulation)
#endif
#ifndef TILE_M
#define TILE_M 64  // output channels per work-group
#endif
#ifndef TILE_N
#define TILE_N 64  // output positions per work-group
#endif
#ifndef TILE_K
#define TILE_K 16  // depth of a K step: input channels of one tap
#endif
#ifndef WPT_M
#define WPT_M 8  // output channels per work-item (multiple of 4)
#endif
#ifndef WPT_N
#define WPT_N 4  // output positions per work-item (multiple of 4)
#endif

#ifndef CHANNELS_LAST
#define CHANNELS_LAST 0  // 1: the inputs' channels are unit-stride with 4-aligned strides: read as 4-vectors
#endif

#ifndef TAP_TABLE
#define TAP_TABLE 0  // 1: k's (or the weight gradient's column j's) tap and channel from the table ktab
// (with CHANNELS_LAST: CG a multiple of 4, so a 4-vector of channels lies within one tap)
#endif

#ifndef DEPTH
#define DEPTH 0  // 1: 3-D convolutions (depth arguments read; 0 leaves them unused)
#endif
#if DEPTH
#define IN_DEPTH(id) ((id) >= 0 && (id) < D)
#define AT_DEPTH(id) ((id) * xs_d)
#else
#define IN_DEPTH(id) true
#define AT_DEPTH(id) 0
#endif

#ifndef OUT_VEC
#define OUT_VEC 0  // 1: conv2d_fwd stores runs of 4 output channels as vectors (channels-last outputs)
#endif

#define V4 CAT(DTYPE, 4)
#define RTS_M (TILE_M / WPT_M)
#define RTS_N (TILE_N / WPT_N)
#define NTHREADS (RTS_M * RTS_N)
#define A_VECS (TILE_K * TILE_M / (4 * NTHREADS))  // 4-vectors of A a work-item loads per step
#define B_ROWS (NTHREADS / TILE_N)                 // B rows (depths) loaded side by side
#define B_ELEMS (TILE_K / B_ROWS)                  // B elements a work-item loads per step
#if WPT_M % 4 || WPT_N % 4 || NTHREADS % TILE_N || TILE_K % B_ROWS || A_VECS * 4 * NTHREADS != TILE_K * TILE_M
#error "conv tiles: WPT_M, WPT_N multiples of 4; whole rows of B and whole 4-vectors of A per work-item"
#endif
#if CHANNELS_LAST
// conv2d_fwd's B as 4-vectors of channels: BV_K per position and step, BV_STEP positions side by
// side, BV_N positions per work-item.
#define BV_K (TILE_K / 4)
#define BV_STEP (NTHREADS / BV_K)
#define BV_N (TILE_N / BV_STEP)
#if TILE_K % 4 || NTHREADS % BV_K || TILE_N % BV_STEP
#error "conv tiles: channel 4-vectors must split a step's B evenly"
#endif
#endif
#define LDA (TILE_M + 4)  // local row lengths: 16-byte aligned rows, transposing stores spread over banks
#define LDB (TILE_N + 4)

// acc += the product of local buffer `cur`'s A [TILE_K][LDA] and B [TILE_K][LDB] tiles: per depth,
// this work-item's WPT_M values of A and WPT_N of B (4-wide local reads) and their outer product.
#define CONV_COMPUTE(cur)                                                                       \
  do {                                                                                          \
    __local const DTYPE* al = As + (cur) * (TILE_K * LDA) + ty * 4;                             \
    __local const DTYPE* bl = Bs + (cur) * (TILE_K * LDB) + tx * 4;                             \
    _Pragma("unroll") for (int k = 0; k < TILE_K; ++k) {                                        \
      DTYPE ar[WPT_M], br[WPT_N];                                                               \
      _Pragma("unroll") for (int i = 0; i < WPT_M / 4; ++i) {                                   \
        const V4 v = *(__local const V4*)(al + k * LDA + i * 4 * RTS_M);                        \
        ar[4 * i] = v.s0, ar[4 * i + 1] = v.s1, ar[4 * i + 2] = v.s2, ar[4 * i + 3] = v.s3;     \
      }                                                                                         \
      _Pragma("unroll") for (int j = 0; j < WPT_N / 4; ++j) {                                   \
        const V4 v = *(__local const V4*)(bl + k * LDB + j * 4 * RTS_N);                        \
        br[4 * j] = v.s0, br[4 * j + 1] = v.s1, br[4 * j + 2] = v.s2, br[4 * j + 3] = v.s3;     \
      }                                                                                         \
      _Pragma("unroll") for (int i = 0; i < WPT_M; ++i)                                         \
        _Pragma("unroll") for (int j = 0; j < WPT_N; ++j) acc[i][j] = fma(ar[i], br[j], acc[i][j]); \
    }                                                                                           \
  } while (0)

// Local-size (RTS_N, RTS_M, 1); global (ceil(NB*OH*OW / TILE_N) * RTS_N, ceil(M / TILE_M) * RTS_M, G).
// In-sample input offsets (c * xs_c + ih * xs_h + iw * xs_w) fit in int (the host checks); the
// output has any strides (os_*). Paddings and dilations may be negative: the strided input
// gradient's phases (conv.cpp) walk their taps backwards.
__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void conv2d_fwd(PTR_ARG(DTYPE, x), PTR_ARG(DTYPE, wpack), PTR_ARG(int, ktab), PTR_ARG(DTYPE, bias), PTR_ARG(DTYPE, out),
                int NB, int CG,
                int H, int W, int OH, int OW, int M, int MP, int KH, int KW, int SH, int SW, int PH, int PW, int DH,
                int DW, long xs_b, int xs_c, int xs_h, int xs_w, long os_b, long os_c, long os_h, long os_w,
                int has_bias, int D, int OD, int KD, int SD, int PD, int DD, int xs_d, long os_d) {
  __local V4 As4[2 * TILE_K * LDA / 4];
  __local V4 Bs4[2 * TILE_K * LDB / 4];
  __local DTYPE* As = (__local DTYPE*)As4;
  __local DTYPE* Bs = (__local DTYPE*)Bs4;
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * RTS_N + tx;
  const int n0 = get_group_id(0) * TILE_N, m0 = get_group_id(1) * TILE_M, g = get_group_id(2);
  const int P2 = OH * OW, L = OD * P2, NT = NB * L, K = KD * KH * KW * CG;
  const int KP = TAP_TABLE ? (K + TILE_K - 1) / TILE_K * TILE_K : K;  // wpack's rows per group

  // This work-item's A vectors: depth a_k + j * (NTHREADS / (TILE_M / 4)), columns a_m..a_m+3.
  const int a_m = (tid % (TILE_M / 4)) * 4, a_k = tid / (TILE_M / 4);
  __global const DTYPE* ap = PTR(DTYPE, wpack) + ((long)g * KP + a_k) * MP + min(m0 + a_m, MP - 4);
  const bool a_in = m0 + a_m < MP;
#if CHANNELS_LAST
  // Its B columns b_n + j * BV_STEP, channels b_c..b_c+3 (xs_c is 1): each column's window origin.
  const int b_c = (tid % BV_K) * 4, b_n = tid / BV_K;
  bool n_in[BV_N];
  int id0[BV_N], ih0[BV_N], iw0[BV_N];
  __global const DTYPE* xp[BV_N];
#pragma unroll
  for (int j = 0; j < BV_N; ++j) {
    const int n = n0 + b_n + j * BV_STEP, nb = n < NT ? n / L : 0, pos = n < NT ? n % L : 0;
    const int pp = DEPTH ? pos % P2 : pos;
    n_in[j] = n < NT;
    id0[j] = DEPTH ? (pos / P2) * SD - PD : 0, ih0[j] = (pp / OW) * SH - PH, iw0[j] = (pp % OW) * SW - PW;
    xp[j] = PTR(DTYPE, x) + nb * xs_b + g * CG + (TAP_TABLE ? 0 : b_c);
  }
#if TAP_TABLE
  __global const int* kt = PTR(int, ktab) + 4 * b_c;  // channel quad b_c's entry of the step being loaded
#endif
  V4 rb[BV_N];
#else
  // Its B column n and rows b_k + j * B_ROWS; the window origin of output position n.
  const int b_n = tid % TILE_N, b_k = tid / TILE_N, n = n0 + b_n;
  const bool n_in = n < NT;
  const int nb = n_in ? n / L : 0, pos = n_in ? n % L : 0, pp = DEPTH ? pos % P2 : pos;
  const int id0 = DEPTH ? (pos / P2) * SD - PD : 0, ih0 = (pp / OW) * SH - PH, iw0 = (pp % OW) * SW - PW;
#if TAP_TABLE
  __global const DTYPE* xp = PTR(DTYPE, x) + nb * xs_b + (long)g * CG * xs_c;
  __global const int* kt = PTR(int, ktab) + 4 * b_k;  // row b_k's entry of the step being loaded
#else
  __global const DTYPE* xp = PTR(DTYPE, x) + nb * xs_b + (long)(g * CG + b_k) * xs_c;
#endif
  DTYPE rb[B_ELEMS];
#endif

  DTYPE acc[WPT_M][WPT_N];
#pragma unroll
  for (int i = 0; i < WPT_M; ++i)
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) acc[i][j] = 0;

  V4 ra[A_VECS];
#if !TAP_TABLE
  int kd = 0, kh = 0, kw = 0, c0 = 0;  // the tap and first channel of the step being loaded
#endif
#define CONV_LOAD_STEP()                                                                          \
  do {                                                                                            \
    _Pragma("unroll") for (int j = 0; j < A_VECS; ++j) ra[j] =                                    \
        a_in ? *(__global const V4*)(ap + (long)j * (NTHREADS / (TILE_M / 4)) * MP) : (V4)0;      \
    CONV_LOAD_B();                                                                                \
  } while (0)
#if CHANNELS_LAST
#if TAP_TABLE
#define CONV_LOAD_B()                                                                             \
  const int4 e = vload4(0, kt);                                                                   \
  _Pragma("unroll") for (int j = 0; j < BV_N; ++j) {                                              \
    const int id = id0[j] + e.w, ih = ih0[j] + e.x, iw = iw0[j] + e.y;                            \
    const bool in = n_in[j] && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;            \
    rb[j] = in ? *(__global const V4*)(xp[j] + e.z + AT_DEPTH(id) + ih * xs_h + iw * xs_w) : (V4)0; \
  }
#else
#define CONV_LOAD_B()                                                                             \
  _Pragma("unroll") for (int j = 0; j < BV_N; ++j) {                                              \
    const int id = id0[j] + kd * DD, ih = ih0[j] + kh * DH, iw = iw0[j] + kw * DW;               \
    const bool in = n_in[j] && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;            \
    rb[j] = in ? *(__global const V4*)(xp[j] + c0 + AT_DEPTH(id) + ih * xs_h + iw * xs_w) : (V4)0; \
  }
#endif
#define CONV_STORE_B(buf)                                                                         \
  _Pragma("unroll") for (int j = 0; j < BV_N; ++j) {                                              \
    __local DTYPE* bs = Bs + ((buf) * TILE_K + b_c) * LDB + b_n + j * BV_STEP;                    \
    bs[0] = rb[j].s0, bs[LDB] = rb[j].s1, bs[2 * LDB] = rb[j].s2, bs[3 * LDB] = rb[j].s3;         \
  }
#elif TAP_TABLE
#define CONV_LOAD_B()                                                                             \
  _Pragma("unroll") for (int j = 0; j < B_ELEMS; ++j) {                                           \
    const int4 e = vload4(j * B_ROWS, kt);                                                        \
    const int id = id0 + e.w, ih = ih0 + e.x, iw = iw0 + e.y;                                     \
    const bool in = n_in && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;              \
    rb[j] = in ? xp[e.z + AT_DEPTH(id) + ih * xs_h + iw * xs_w] : 0;                              \
  }
#define CONV_STORE_B(buf)                                                                         \
  _Pragma("unroll") for (int j = 0; j < B_ELEMS; ++j) Bs[((buf) * TILE_K + b_k + j * B_ROWS) * LDB + b_n] = rb[j];
#else
#define CONV_LOAD_B()                                                                             \
  const int id = id0 + kd * DD, ih = ih0 + kh * DH, iw = iw0 + kw * DW;                          \
  const bool in = n_in && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;                 \
  __global const DTYPE* p = xp + (in ? c0 * xs_c + AT_DEPTH(id) + ih * xs_h + iw * xs_w : 0);     \
  _Pragma("unroll") for (int j = 0; j < B_ELEMS; ++j) rb[j] = in ? p[j * B_ROWS * xs_c] : 0;
#define CONV_STORE_B(buf)                                                                         \
  _Pragma("unroll") for (int j = 0; j < B_ELEMS; ++j) Bs[((buf) * TILE_K + b_k + j * B_ROWS) * LDB + b_n] = rb[j];
#endif
#define CONV_STORE_STEP(buf)                                                                      \
  do {                                                                                            \
    _Pragma("unroll") for (int j = 0; j < A_VECS; ++j)                                            \
        As4[((buf) * TILE_K + a_k + j * (NTHREADS / (TILE_M / 4))) * (LDA / 4) + a_m / 4] = ra[j]; \
    CONV_STORE_B(buf);                                                                            \
  } while (0)

  const int steps = KP / TILE_K;
  CONV_LOAD_STEP();
  CONV_STORE_STEP(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 0; t < steps; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < steps;
    if (more) {  // the next step: the next TILE_K channels, or the next tap
      ap += TILE_K * MP;
#if TAP_TABLE
      kt += 4 * TILE_K;
#else
      c0 += TILE_K;
      if (c0 == CG) {
        c0 = 0;
        if (++kw == KW) {
          kw = 0;
          if (++kh == KH) kh = 0, ++kd;
        }
      }
#endif
      CONV_LOAD_STEP();
    }
    CONV_COMPUTE(cur);
    if (more) CONV_STORE_STEP(cur ^ 1);  // the other buffer was last read before the previous barrier
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Epilogue: column n = n0 + j*4*RTS_N + tx*4 + jj of output row m = m0 + i*4*RTS_M + ty*4 + ii.
  __global DTYPE* op = PTR(DTYPE, out);
  long col_off[WPT_N];  // each column's offset in out (batch and position), -1 past the end
#pragma unroll
  for (int j = 0; j < WPT_N; ++j) {
    const int nj = n0 + (j / 4) * 4 * RTS_N + tx * 4 + j % 4, p = nj % L, pp = DEPTH ? p % P2 : p;
    const long at_d = DEPTH ? (p / P2) * os_d : 0;
    col_off[j] = nj < NT ? (nj / L) * os_b + at_d + (pp / OW) * os_h + (pp % OW) * os_w : -1;
  }
#if OUT_VEC
  // Output channels unit-stride, M a multiple of 4 and the other strides 4-aligned (the host
  // checks): each run of 4 channels is stored as one vector.
#pragma unroll
  for (int i = 0; i < WPT_M; i += 4) {
    const int m = m0 + (i / 4) * 4 * RTS_M + ty * 4;
    if (m >= M) continue;
    const int oc = g * M + m;
    const V4 bv = has_bias ? *(__global const V4*)(PTR(DTYPE, bias) + oc) : (V4)0;
#pragma unroll
    for (int j = 0; j < WPT_N; ++j)
      if (col_off[j] >= 0)
        *(__global V4*)(op + col_off[j] + oc) = (V4)(acc[i][j], acc[i + 1][j], acc[i + 2][j], acc[i + 3][j]) + bv;
  }
#else
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) {
    const int m = m0 + (i / 4) * 4 * RTS_M + ty * 4 + i % 4;
    if (m >= M) continue;
    const int oc = g * M + m;
    const DTYPE bv = has_bias ? PTR(DTYPE, bias)[oc] : 0;
#pragma unroll
    for (int j = 0; j < WPT_N; ++j)
      if (col_off[j] >= 0) op[col_off[j] + oc * os_c] = acc[i][j] + bv;
  }
#endif
}

// The weight gradient, slice z % S of K for group z / S: ws[z][m][j] = sum over the slice's
// positions r = (b, oh, ow) of gy[b, g*M + m, oh, ow] * x[b, g*CG + c, ih, iw], j = (kh * KW + kw)
// * CG + c (where CG is a multiple of TILE_N a column tile lies within one tap; otherwise
// TAP_TABLE gives each column its tap and channel, and the grid covers ceil(J / TILE_N) tiles,
// storing only columns below J). Work-item tid
// loads, per K step, position tid % TILE_K of A's and B's rows (coalesced along the positions)
// for every RQ-th column. Local-size (RTS_N, RTS_M, 1); global (J / TILE_N * RTS_N,
// ceil(M / TILE_M) * RTS_M, G * S); `chunk` positions per slice, a multiple of TILE_K.
// With CHANNELS_LAST (gy's and x's channels unit-stride, M a multiple of 4), each work-item
// instead loads 4-vectors of channels: A's columns a_c..a_c+3 of rows a_r + j * AV_STEP, B's
// likewise, AV_R and XV_R rows of each per step.
#define RQ (NTHREADS / TILE_K)  // columns of A and B loaded side by side
#if NTHREADS % TILE_K || TILE_M % RQ || TILE_N % RQ
#error "conv2d_bwd_weight: the work-items must split each step's A and B rows evenly"
#endif
#if CHANNELS_LAST
#define AV_STEP (NTHREADS / (TILE_M / 4))
#define AV_R (TILE_K / AV_STEP)
#define XV_STEP (NTHREADS / (TILE_N / 4))
#define XV_R (TILE_K / XV_STEP)
#if NTHREADS % (TILE_M / 4) || NTHREADS % (TILE_N / 4) || TILE_K % AV_STEP || TILE_K % XV_STEP
#error "conv2d_bwd_weight: channel 4-vectors must split each step's A and B rows evenly"
#endif
#endif
__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void conv2d_bwd_weight(PTR_ARG(DTYPE, gy), PTR_ARG(DTYPE, x), PTR_ARG(int, ktab), PTR_ARG(DTYPE, ws), int NB, int CG,
                       int H, int W, int OH, int OW, int M, int KH, int KW, int SH, int SW, int PH, int PW, int DH,
                       int DW, long gs_b, int gs_c, int gs_h, int gs_w, long xs_b, int xs_c, int xs_h, int xs_w, int S,
                       int chunk, int D, int OD, int KD, int SD, int PD, int DD, int gs_d, int xs_d) {
  __local V4 As4[2 * TILE_K * LDA / 4];
  __local V4 Bs4[2 * TILE_K * LDB / 4];
  __local DTYPE* As = (__local DTYPE*)As4;
  __local DTYPE* Bs = (__local DTYPE*)Bs4;
  const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * RTS_N + tx;
  const int j0 = get_group_id(0) * TILE_N, m0 = get_group_id(1) * TILE_M;
  const int g = get_group_id(2) / S, s = get_group_id(2) % S;
  const int P2 = OH * OW, L = OD * P2, J = KD * KH * KW * CG, tap = j0 / CG, c0 = j0 % CG;
  // The tap's offset from a window origin.
  const int dd = (tap / (KH * KW)) * DD - PD, dh = (tap / KW % KH) * DH - PH, dw = (tap % KW) * DW - PW;
  const int r_first = s * chunk, r_end = min(r_first + chunk, NB * L), rl = tid % TILE_K, q = tid / TILE_K;
  __global const DTYPE* gp = PTR(DTYPE, gy) + (long)(g * M + m0 + q) * gs_c;
#if TAP_TABLE
  __global const DTYPE* xp = PTR(DTYPE, x) + (long)g * CG * xs_c;
  __global const int* jt = PTR(int, ktab) + 4 * (j0 + q);  // column j0 + q's entry
#else
  __global const DTYPE* xp = PTR(DTYPE, x) + (long)(g * CG + c0 + q) * xs_c;
#endif

  DTYPE acc[WPT_M][WPT_N];
#pragma unroll
  for (int i = 0; i < WPT_M; ++i)
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) acc[i][j] = 0;

  // Position r's batch, depth, row and column; whether it is in the slice; its offset in gy.
#define WGRAD_POS(r)                                                                              \
  const bool r_in = (r) < r_end;                                                                  \
  const int b = r_in ? (r) / L : 0, pos = r_in ? (r) % L : 0, od = DEPTH ? pos / P2 : 0,          \
            oh = (DEPTH ? pos % P2 : pos) / OW, ow = pos % OW
#if DEPTH
#define WGRAD_GY_OFF (b * gs_b + od * gs_d + oh * gs_h + ow * gs_w)
#else
#define WGRAD_GY_OFF (b * gs_b + oh * gs_h + ow * gs_w)
#endif
#if CHANNELS_LAST
  const int a_c = (tid % (TILE_M / 4)) * 4, a_r = tid / (TILE_M / 4);
  const int x_c = (tid % (TILE_N / 4)) * 4, x_r = tid / (TILE_N / 4);
  const bool a_in = m0 + a_c < M;  // M is a multiple of 4
  __global const DTYPE* ga0 = PTR(DTYPE, gy) + g * M + m0 + a_c;
#if TAP_TABLE
  // Columns j0 + x_c .. + 3 lie in one tap (CG is a multiple of 4): its offsets from the table.
  const int4 xe = vload4(0, PTR(int, ktab) + 4 * (j0 + x_c));
  const int xd = xe.w - PD, xh = xe.x - PH, xw = xe.y - PW;
  __global const DTYPE* xa0 = PTR(DTYPE, x) + g * CG + xe.z;
#else
  const int xd = dd, xh = dh, xw = dw;
  __global const DTYPE* xa0 = PTR(DTYPE, x) + g * CG + c0 + x_c;
#endif
  V4 ra[AV_R], rb[XV_R];
#define WGRAD_LOAD_STEP(r0)                                                                       \
  do {                                                                                            \
    _Pragma("unroll") for (int j = 0; j < AV_R; ++j) {                                            \
      WGRAD_POS((r0) + a_r + j * AV_STEP);                                                        \
      ra[j] = r_in && a_in ? *(__global const V4*)(ga0 + WGRAD_GY_OFF) : (V4)0;                   \
    }                                                                                             \
    _Pragma("unroll") for (int j = 0; j < XV_R; ++j) {                                            \
      WGRAD_POS((r0) + x_r + j * XV_STEP);                                                        \
      const int id = od * SD + xd, ih = oh * SH + xh, iw = ow * SW + xw;                          \
      const bool in = r_in && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;             \
      rb[j] = in ? *(__global const V4*)(xa0 + b * xs_b + AT_DEPTH(id) + ih * xs_h + iw * xs_w)       \
                 : (V4)0;                                                                         \
    }                                                                                             \
  } while (0)
#define WGRAD_STORE_STEP(buf)                                                                     \
  do {                                                                                            \
    _Pragma("unroll") for (int j = 0; j < AV_R; ++j)                                              \
        As4[(((buf) * TILE_K + a_r + j * AV_STEP) * LDA + a_c) / 4] = ra[j];                      \
    _Pragma("unroll") for (int j = 0; j < XV_R; ++j)                                              \
        Bs4[(((buf) * TILE_K + x_r + j * XV_STEP) * LDB + x_c) / 4] = rb[j];                      \
  } while (0)
#else
  DTYPE ra[TILE_M / RQ], rb[TILE_N / RQ];
#if TAP_TABLE
  // Each of the work-item's columns q + i * RQ has its own tap and channel.
#define WGRAD_LOAD_X()                                                                            \
  const int id0 = od * SD - PD, ih0 = oh * SH - PH, iw0 = ow * SW - PW;                           \
  __global const DTYPE* xb = xp + b * xs_b;                                                       \
  _Pragma("unroll") for (int i = 0; i < TILE_N / RQ; ++i) {                                       \
    const int4 e = vload4(i * RQ, jt);                                                            \
    const int id = id0 + e.w, ih = ih0 + e.x, iw = iw0 + e.y;                                     \
    const bool in = r_in && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;              \
    rb[i] = in ? xb[e.z + AT_DEPTH(id) + ih * xs_h + iw * xs_w] : 0;                              \
  }
#else
#define WGRAD_LOAD_X()                                                                            \
  const int id = od * SD + dd, ih = oh * SH + dh, iw = ow * SW + dw;                              \
  const bool in = r_in && IN_DEPTH(id) && ih >= 0 && ih < H && iw >= 0 && iw < W;                 \
  __global const DTYPE* xb = xp + b * xs_b + (in ? AT_DEPTH(id) + ih * xs_h + iw * xs_w : 0);     \
  _Pragma("unroll") for (int i = 0; i < TILE_N / RQ; ++i) rb[i] = in ? xb[i * RQ * xs_c] : 0;
#endif
#define WGRAD_LOAD_STEP(r0)                                                                       \
  do {                                                                                            \
    WGRAD_POS((r0) + rl);                                                                         \
    __global const DTYPE* ga = gp + WGRAD_GY_OFF;                                                 \
    _Pragma("unroll") for (int i = 0; i < TILE_M / RQ; ++i) ra[i] =                               \
        r_in && m0 + q + i * RQ < M ? ga[(long)i * RQ * gs_c] : 0;                                \
    WGRAD_LOAD_X();                                                                               \
  } while (0)
#define WGRAD_STORE_STEP(buf)                                                                     \
  do {                                                                                            \
    _Pragma("unroll") for (int i = 0; i < TILE_M / RQ; ++i)                                       \
        As[((buf) * TILE_K + rl) * LDA + q + i * RQ] = ra[i];                                     \
    _Pragma("unroll") for (int i = 0; i < TILE_N / RQ; ++i)                                       \
        Bs[((buf) * TILE_K + rl) * LDB + q + i * RQ] = rb[i];                                     \
  } while (0)
#endif

  const int steps = (r_end - r_first + TILE_K - 1) / TILE_K;
  WGRAD_LOAD_STEP(r_first);
  WGRAD_STORE_STEP(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 0; t < steps; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < steps;
    if (more) WGRAD_LOAD_STEP(r_first + (t + 1) * TILE_K);
    CONV_COMPUTE(cur);
    if (more) WGRAD_STORE_STEP(cur ^ 1);
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  __global DTYPE* out = PTR(DTYPE, ws) + (long)get_group_id(2) * M * J;
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) {
    const int m = m0 + (i / 4) * 4 * RTS_M + ty * 4 + i % 4;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) {
      const int col = j0 + (j / 4) * 4 * RTS_N + tx * 4 + j % 4;
      if (!TAP_TABLE || col < J) out[(long)m * J + col] = acc[i][j];
    }
  }
}
