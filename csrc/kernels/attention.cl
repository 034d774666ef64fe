// Fused scaled-dot-product attention for csrc/ops/attention.cpp, flash-attention style: the
// L x S score matrix only ever exists one BLK x BLK tile at a time in local memory. The
// forward keeps an online softmax (running max m and sum l per query row) and saves the
// row logsumexp; the backward recomputes the probabilities from it (one kernel for dQ and
// the bias gradient, one for dK/dV that also sums over the query heads of a GQA group).
// Operands are [B, H, rows, dim] with runtime strides; masks broadcast through 0 strides.
// Dropout keeps (b, h, i, j) iff its Philox word (seed, offset, element (b,h,i,j) of the
// virtual [B,Hq,L,S] matrix) maps to a uniform > p, so the backward regenerates the mask.
#include "common.clh"

#ifndef DTYPE
#define DTYPE float  // storage type of q, k, v, mask, out and the gradients
#endif
#ifndef ACC
#define ACC float  // compute type (float for float16/bfloat16 storage)
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64  // head dimension the tiles are sized for (D and Dv at most this)
#endif
#ifndef BLK
#define BLK 32  // query rows and key columns per tile
#endif
#ifndef TPR
#define TPR 8  // work-items sharing one tile row
#endif

#define WG (BLK * TPR)        // work-group size
#define DPT (HEAD_DIM / TPR)  // head-dimension elements each work-item owns
#define SPT (BLK / TPR)       // tile entries each work-item computes per row
#define LDS (HEAD_DIM + 1)    // padded local row: lanes reading a column hit different banks

#if HEAD_DIM % TPR != 0 || BLK % TPR != 0
#error "HEAD_DIM and BLK must be multiples of TPR"
#endif

#if defined(IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(IS_BF16)
#define LOAD(p, i) bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = float_to_bf16(v))
#else
#define LOAD(p, i) ((ACC)((p)[i]))
#define STORE(p, i, v) ((p)[i] = (DTYPE)(v))
#endif

#define NEG_INF ((ACC)(-INFINITY))

// Full unrolling of the per-work-item loops keeps the accumulators in registers on GPUs.
// CPU devices (NO_UNROLL, set by the host) vectorize across work-items instead, and there
// the unrolled bodies only multiply compile time.
#ifdef NO_UNROLL
#define UNROLL
#else
#define UNROLL _Pragma("unroll")
#endif

// Rows [r0, r0+BLK) x [0, HEAD_DIM) of a (rows x dim) matrix with strides (sr, sd) into the
// local tile T, zero-padded past the matrix (padded dims then add nothing to dot products).
#define STAGE(T, P, sr, sd, r0, nrows, dim)                                                    \
  for (int e = lid; e < BLK * HEAD_DIM; e += WG) {                                             \
    const int rr_ = e / HEAD_DIM, dd_ = e % HEAD_DIM, row_ = (r0) + rr_;                       \
    T[rr_][dd_] = (row_ < (nrows) && dd_ < (dim)) ? LOAD(P, (long)row_ * (sr) + (long)dd_ * (sd)) : (ACC)0; \
  }

inline ACC dot_local(__local const ACC* x, __local const ACC* y) {
  ACC s = (ACC)0;
UNROLL
  for (int d = 0; d < HEAD_DIM; ++d) s = fma(x[d], y[d], s);
  return s;
}

// dots[x] = x . y_x for the SPT rows y_x = y + x*TPR*LDS (one work-item's tile columns):
// each x element is read from local memory once for all of them.
inline void dots_local(__local const ACC* x, __local const ACC* y, ACC* dots) {
UNROLL
  for (int u = 0; u < SPT; ++u) dots[u] = (ACC)0;
  for (int d = 0; d < HEAD_DIM; ++d) {
    const ACC xv = x[d];
UNROLL
    for (int u = 0; u < SPT; ++u) dots[u] = fma(xv, y[u * TPR * LDS + d], dots[u]);
  }
}

// Uniform in (0, 1] for element idx of the virtual [B, Hq, L, S] dropout matrix.
inline float dropout_uniform(ulong seed, ulong offset, ulong idx) {
  const uint4 w = philox_block(seed, offset, idx >> 2);
  const uint k = (uint)(idx & 3);
  return u32_to_unit(k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w);
}

// The pre-softmax score of (i, j), or -inf where causal/out of range excludes it.
#define SCORE(dotv, i, j)                                                                       \
  ((j) >= S || (i) >= L || (causal && (j) > (i))                                                \
       ? NEG_INF                                                                                \
       : (dotv) * scale + (use_mask ? LOAD(MK, (long)(i) * m_sl + (long)(j) * m_ss) : (ACC)0))

// The common argument list: shapes, q/k/v/mask with (batch, head, row, dim) strides,
// the causal flag, scale and dropout state.
#define ATTN_ARGS                                                                               \
  int L, int S, int D, int Dv, int Hq, int group,                                               \
  PTR_ARG(DTYPE, q), long q_sb, long q_sh, long q_sl, long q_sd,                                \
  PTR_ARG(DTYPE, k), long k_sb, long k_sh, long k_ss, long k_sd,                                \
  PTR_ARG(DTYPE, v), long v_sb, long v_sh, long v_ss, long v_sd,                                \
  PTR_ARG(DTYPE, mask), long m_sb, long m_sh, long m_sl, long m_ss, int use_mask,              \
  int causal, ACC scale, float dropout_p, ulong seed, ulong offset

// Base pointers of this (batch, q head) / kv head.
#define ATTN_BASES(b, h)                                                                        \
  const int hk = (h) / group;                                                                   \
  __global const DTYPE* Q = PTR(DTYPE, q) + (long)(b) * q_sb + (long)(h) * q_sh;                \
  __global const DTYPE* K = PTR(DTYPE, k) + (long)(b) * k_sb + (long)hk * k_sh;                 \
  __global const DTYPE* V = PTR(DTYPE, v) + (long)(b) * v_sb + (long)hk * v_sh;                 \
  __global const DTYPE* MK = use_mask ? PTR(DTYPE, mask) + (long)(b) * m_sb + (long)(h) * m_sh : 0; \
  const ulong drop_base = ((ulong)(b) * Hq + (h)) * (ulong)L * (ulong)S

// out[b,h,i,:] = softmax(scale * q k^T + mask) (dropped out) @ v; lse[b,h,i] = log sum exp.
// NDRange (ceil(L/BLK)*WG, Hq, B); one work-group per BLK query rows of one (b, h).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void attention_fwd(ATTN_ARGS, PTR_ARG(DTYPE, out), long o_sb, long o_sh, long o_sl,
                   PTR_ARG(ACC, lse)) {
  __local ACC Qs[BLK][LDS];
  __local ACC KV[BLK][LDS];  // K, then V, of the current key block
  __local ACC Sc[BLK][BLK + 1];
  __local ACC Pd[BLK][BLK + 1];
  __local ACC Ps[BLK][TPR];

  const int lid = get_local_id(0), t = lid % TPR, r = lid / TPR;
  const int h = get_group_id(1), b = get_group_id(2);
  const int i0 = get_group_id(0) * BLK, i = i0 + r;
  ATTN_BASES(b, h);

  STAGE(Qs, Q, q_sl, q_sd, i0, L, D);
  ACC m = NEG_INF, l = (ACC)0, acc[DPT];
UNROLL
  for (int x = 0; x < DPT; ++x) acc[x] = (ACC)0;

  const int jend = causal ? min(S, i0 + BLK) : S;
  for (int j0 = 0; j0 < jend; j0 += BLK) {
    barrier(CLK_LOCAL_MEM_FENCE);  // previous block's KV / Pd reads are done
    STAGE(KV, K, k_ss, k_sd, j0, S, D);
    barrier(CLK_LOCAL_MEM_FENCE);
    ACC dots[SPT];
    dots_local(&Qs[r][0], &KV[t][0], dots);
UNROLL
    for (int x = 0; x < SPT; ++x) {
      const int c = t + x * TPR, j = j0 + c;
      Sc[r][c] = SCORE(dots[x], i, j);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // scores complete; K no longer needed
    ACC mx = m;
    for (int c = 0; c < BLK; ++c) mx = fmax(mx, Sc[r][c]);
    ACC psum = (ACC)0;
UNROLL
    for (int x = 0; x < SPT; ++x) {
      const int c = t + x * TPR, j = j0 + c;
      const ACC s = Sc[r][c];
      ACC p = s == NEG_INF ? (ACC)0 : exp(s - mx);
      psum += p;
      if (dropout_p > 0.0f && p != (ACC)0 && dropout_uniform(seed, offset, drop_base + (ulong)i * S + j) <= dropout_p)
        p = (ACC)0;
      Pd[r][c] = p;
    }
    Ps[r][t] = psum;
    STAGE(KV, V, v_ss, v_sd, j0, S, Dv);
    barrier(CLK_LOCAL_MEM_FENCE);
    const ACC corr = mx == NEG_INF ? (ACC)1 : exp(m - mx);
    ACC rs = (ACC)0;
    for (int u = 0; u < TPR; ++u) rs += Ps[r][u];
    l = l * corr + rs;
    m = mx;
UNROLL
    for (int x = 0; x < DPT; ++x) acc[x] *= corr;
    for (int c = 0; c < BLK; ++c) {
      const ACC p = Pd[r][c];
UNROLL
      for (int x = 0; x < DPT; ++x) acc[x] = fma(p, KV[c][t + x * TPR], acc[x]);
    }
  }

  if (i < L) {
    const ACC inv = l > (ACC)0 ? (ACC)1 / (l * (ACC)(1.0f - dropout_p)) : (ACC)0;
    __global DTYPE* O = PTR(DTYPE, out) + (long)b * o_sb + (long)h * o_sh + (long)i * o_sl;
UNROLL
    for (int x = 0; x < DPT; ++x) {
      const int d = t + x * TPR;
      if (d < Dv) STORE(O, d, acc[x] * inv);
    }
    if (t == 0) PTR(ACC, lse)[((long)b * Hq + h) * L + i] = l > (ACC)0 ? m + log(l) : NEG_INF;
  }
}

// delta[b,h,i] = sum_d dO[b,h,i,d] * out[b,h,i,d] (the softmax-backward row term; with
// dropout it is still dO . out). One work-item per row.
__kernel void attention_bwd_prep(int L, int Dv, int Hq, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl,
                                 long g_sd, PTR_ARG(DTYPE, out), long o_sb, long o_sh, long o_sl, long o_sd,
                                 PTR_ARG(ACC, delta)) {
  const int i = get_global_id(0), h = get_global_id(1), b = get_global_id(2);
  if (i >= L) return;
  __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh + (long)i * g_sl;
  __global const DTYPE* O = PTR(DTYPE, out) + (long)b * o_sb + (long)h * o_sh + (long)i * o_sl;
  ACC s = (ACC)0;
  for (int d = 0; d < Dv; ++d) s = fma(LOAD(G, (long)d * g_sd), LOAD(O, (long)d * o_sd), s);
  PTR(ACC, delta)[((long)b * Hq + h) * L + i] = s;
}

// Shared by both backward kernels: for query row i, key j (tile coordinates rr, c), the
// probability p (0 where excluded), the dropout factor z (0 or 1/(1-p_drop)) and
// dS = p * (z * dO_i.v_j - delta_i), with the dO_i.v_j dot product from local tiles.
#define BWD_TERMS(sc_dot, dov_dot, i, j, lse_i, delta_i, A_out, dS_out)                          \
  do {                                                                                          \
    const ACC s_ = SCORE(sc_dot, i, j);                                                         \
    const ACC p_ = (s_ == NEG_INF || (lse_i) == NEG_INF) ? (ACC)0 : exp(s_ - (lse_i));          \
    ACC z_ = (ACC)1;                                                                            \
    if (dropout_p > 0.0f)                                                                       \
      z_ = dropout_uniform(seed, offset, drop_base + (ulong)(i) * S + (j)) <= dropout_p          \
               ? (ACC)0 : (ACC)1 / (ACC)(1.0f - dropout_p);                                     \
    A_out = p_ * z_;                                                                            \
    dS_out = p_ == (ACC)0 ? (ACC)0 : p_ * ((dov_dot) * z_ - (delta_i));                         \
  } while (0)

// dQ (and dBias = dS when requested) for BLK query rows of one (b, h).
// NDRange (ceil(L/BLK)*WG, Hq, B).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void attention_bwd_dq(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                      PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dq),
                      PTR_ARG(DTYPE, dbias), int want_dbias) {
  __local ACC Qs[BLK][LDS];
  __local ACC Gs[BLK][LDS];  // dO rows
  __local ACC Ks[BLK][LDS];
  __local ACC Vs[BLK][LDS];
  __local ACC dSl[BLK][BLK + 1];

  const int lid = get_local_id(0), t = lid % TPR, r = lid / TPR;
  const int h = get_group_id(1), b = get_group_id(2);
  const int i0 = get_group_id(0) * BLK, i = i0 + r;
  ATTN_BASES(b, h);
  __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh;
  const long row = ((long)b * Hq + h) * L + i;
  const ACC lse_i = i < L ? PTR(ACC, lse)[row] : NEG_INF;
  const ACC delta_i = i < L ? PTR(ACC, delta)[row] : (ACC)0;

  STAGE(Qs, Q, q_sl, q_sd, i0, L, D);
  STAGE(Gs, G, g_sl, g_sd, i0, L, Dv);
  ACC acc[DPT];
UNROLL
  for (int x = 0; x < DPT; ++x) acc[x] = (ACC)0;

  const int jend = causal ? min(S, i0 + BLK) : S;
  for (int j0 = 0; j0 < jend; j0 += BLK) {
    barrier(CLK_LOCAL_MEM_FENCE);
    STAGE(Ks, K, k_ss, k_sd, j0, S, D);
    STAGE(Vs, V, v_ss, v_sd, j0, S, Dv);
    barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
    for (int x = 0; x < SPT; ++x) {
      const int c = t + x * TPR, j = j0 + c;
      ACC a, ds;
      BWD_TERMS(dot_local(&Qs[r][0], &Ks[c][0]), dot_local(&Gs[r][0], &Vs[c][0]), i, j, lse_i, delta_i, a, ds);
      dSl[r][c] = ds;
      if (want_dbias && i < L && j < S)
        STORE(PTR(DTYPE, dbias), (((long)b * Hq + h) * L + i) * S + j, ds);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int c = 0; c < BLK; ++c) {
      const ACC ds = dSl[r][c];
UNROLL
      for (int x = 0; x < DPT; ++x) acc[x] = fma(ds, Ks[c][t + x * TPR], acc[x]);
    }
  }
  if (i < L) {
    __global DTYPE* DQ = PTR(DTYPE, dq) + row * D;
UNROLL
    for (int x = 0; x < DPT; ++x) {
      const int d = t + x * TPR;
      if (d < D) STORE(DQ, d, acc[x] * scale);
    }
  }
}

// dK, dV for BLK keys of one (b, kv head), summed over the `group` query heads that share
// it (GQA) and over all query rows. NDRange (ceil(S/BLK)*WG, Hkv, B).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void attention_bwd_dkdv(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                        PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dk), PTR_ARG(DTYPE, dv)) {
  __local ACC Qs[BLK][LDS];
  __local ACC Gs[BLK][LDS];
  __local ACC Ks[BLK][LDS];
  __local ACC Vs[BLK][LDS];
  __local ACC Al[BLK][BLK + 1];   // dropped-out probabilities, [query][key]
  __local ACC dSl[BLK][BLK + 1];  // dS, [query][key]
  __local ACC LSEs[BLK], DELs[BLK];

  const int lid = get_local_id(0), t = lid % TPR, c = lid / TPR;  // c: this work-item's key
  const int hkv = get_group_id(1), b = get_group_id(2);
  const int j0 = get_group_id(0) * BLK, j = j0 + c;
  {
    // K/V bases do not depend on which query head of the group is used.
    ATTN_BASES(b, hkv * group);
    STAGE(Ks, K, k_ss, k_sd, j0, S, D);
    STAGE(Vs, V, v_ss, v_sd, j0, S, Dv);
    (void)Q; (void)MK; (void)drop_base;
  }
  ACC dka[DPT], dva[DPT];
UNROLL
  for (int x = 0; x < DPT; ++x) dka[x] = dva[x] = (ACC)0;

  const int istart = causal ? j0 : 0;  // top-left causal: rows i < j never see key j
  for (int g = 0; g < group; ++g) {
    const int h = hkv * group + g;
    ATTN_BASES(b, h);
    (void)K; (void)V;
    __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh;
    const long rowbase = ((long)b * Hq + h) * L;
    for (int i0 = istart; i0 < L; i0 += BLK) {
      barrier(CLK_LOCAL_MEM_FENCE);
      STAGE(Qs, Q, q_sl, q_sd, i0, L, D);
      STAGE(Gs, G, g_sl, g_sd, i0, L, Dv);
      if (lid < BLK) {
        const int ii = i0 + lid;
        LSEs[lid] = ii < L ? PTR(ACC, lse)[rowbase + ii] : NEG_INF;
        DELs[lid] = ii < L ? PTR(ACC, delta)[rowbase + ii] : (ACC)0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
      for (int x = 0; x < SPT; ++x) {
        const int rr = t + x * TPR, i = i0 + rr;
        ACC a, ds;
        BWD_TERMS(dot_local(&Qs[rr][0], &Ks[c][0]), dot_local(&Gs[rr][0], &Vs[c][0]), i, j, LSEs[rr], DELs[rr], a,
                  ds);
        Al[rr][c] = a;
        dSl[rr][c] = ds;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int rr = 0; rr < BLK; ++rr) {
        const ACC ds = dSl[rr][c], a = Al[rr][c];
UNROLL
        for (int x = 0; x < DPT; ++x) {
          dka[x] = fma(ds, Qs[rr][t + x * TPR], dka[x]);
          dva[x] = fma(a, Gs[rr][t + x * TPR], dva[x]);
        }
      }
    }
  }
  if (j < S) {
    const long row = ((long)b * (Hq / group) + hkv) * S + j;
    __global DTYPE* DK = PTR(DTYPE, dk) + row * D;
    __global DTYPE* DV = PTR(DTYPE, dv) + row * Dv;
UNROLL
    for (int x = 0; x < DPT; ++x) {
      const int d = t + x * TPR;
      if (d < D) STORE(DK, d, dka[x] * scale);
      if (d < Dv) STORE(DV, d, dva[x]);
    }
  }
}
