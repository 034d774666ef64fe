// Attention through the matrix-product kernels (ops/attention.cpp, GEMM=on: CPU devices'
// default): the products run as batched GEMMs over an L x S score matrix held in memory, and
// these two kernels do the row work between them. float32 and float64 (DTYPE); no dropout.
//
// A launch covers `rows` consecutive rows of the [B, Hq, L] query rows, starting at `row0`
// (row R = (b * Hq + h) * L + i); each row's S scores lie contiguous in `p` at (R - row0) * S.
// One work-item per row: on a CPU device that is a loop over the row in 4-wide vectors, the
// mask read as vectors too where its key stride is one.
#include "common.clh"

#ifndef DTYPE
#define DTYPE float
#endif
#define DTYPE4 CAT(DTYPE, 4)
#define NEG_INF ((DTYPE)(-INFINITY))

// Scores and mask of row R as the pre-softmax values x = s * scale + mask.
#define ROW_SETUP                                                                                \
  const int r = get_global_id(0);                                                                \
  if (r >= rows) return;                                                                         \
  const long R = row0 + r;                                                                       \
  const int i = (int)(R % L);                                                                    \
  const long bh = R / L;                                                                         \
  __global DTYPE* P = PTR(DTYPE, p) + (long)r * S;                                               \
  __global const DTYPE* MK = use_mask ? PTR(DTYPE, mask) + (bh / Hq) * m_sb + (bh % Hq) * m_sh + (long)i * m_sl : 0; \
  /* keys past the causal diagonal (top-left aligned: j > i) are excluded */                    \
  const int n = causal ? min(S, i + 1) : S;                                                      \
  const int n4 = (use_mask && m_ss != 1) ? 0 : n & ~3

#define MASK_ARGS PTR_ARG(DTYPE, mask), long m_sb, long m_sh, long m_sl, long m_ss, int use_mask

// The pre-softmax value x = s * scale + mask of key j, from the scores row P (the vector form
// for keys j..j+3 below n4, where the mask, if any, has a unit key stride).
#define SCORE1(j) (P[j] * scale + (use_mask ? MK[(long)(j) * m_ss] : (DTYPE)0))
#define SCORE4(j) (vload4(0, P + (j)) * scale + (use_mask ? vload4(0, MK + (j)) : (DTYPE4)0))

// In place, scores -> probabilities: P = softmax(s * scale + mask) per row (0 where excluded,
// a row with nothing left all 0); lse[R] = log sum exp of the row (-inf for such a row).
__kernel void attention_gemm_softmax(int rows, long row0, int L, int S, int Hq, int causal, DTYPE scale,
                                     PTR_ARG(DTYPE, p), MASK_ARGS, PTR_ARG(DTYPE, lse)) {
  ROW_SETUP;
  DTYPE mx = NEG_INF;
  DTYPE4 mx4 = (DTYPE4)NEG_INF;
  for (int j = 0; j < n4; j += 4) {
    const DTYPE4 x = SCORE4(j);
    vstore4(x, 0, P + j);
    mx4 = fmax(mx4, x);
  }
  for (int j = n4; j < n; ++j) {
    const DTYPE x = SCORE1(j);
    P[j] = x;
    mx = fmax(mx, x);
  }
  mx = fmax(mx, fmax(fmax(mx4.s0, mx4.s1), fmax(mx4.s2, mx4.s3)));
  DTYPE sum = 0;
  if (mx != NEG_INF) {
    DTYPE4 sum4 = (DTYPE4)0;
    for (int j = 0; j < n4; j += 4) {
      const DTYPE4 e = exp(vload4(0, P + j) - mx);  // exp(-inf) = 0 for masked keys
      vstore4(e, 0, P + j);
      sum4 += e;
    }
    for (int j = n4; j < n; ++j) {
      const DTYPE e = exp(P[j] - mx);
      P[j] = e;
      sum += e;
    }
    sum += (sum4.s0 + sum4.s1) + (sum4.s2 + sum4.s3);
  }
  int j0 = 0;  // keys from j0 on are 0: all of them in a row with nothing left
  if (sum > (DTYPE)0) {
    const DTYPE inv = (DTYPE)1 / sum;
    for (int j = 0; j < n4; j += 4) vstore4(vload4(0, P + j) * inv, 0, P + j);
    for (int j = n4; j < n; ++j) P[j] *= inv;
    j0 = n;
  }
  for (int j = j0; j < S; ++j) P[j] = 0;
  PTR(DTYPE, lse)[R] = sum > (DTYPE)0 ? mx + log(sum) : NEG_INF;
}

// The softmax backward between the products: with s the recomputed scores QK^T of the row and
// dp = dO_i . v_j, writes P = exp(s * scale + mask - lse) over s and scale * dS over dp, where
// dS = P * (dp - delta) and delta = dO_i . O_i; the unscaled dS also to dbias (row R at R * S)
// when want_dbias.
__kernel void attention_gemm_grad(int rows, long row0, int L, int S, int Hq, int causal, DTYPE scale,
                                  PTR_ARG(DTYPE, p), PTR_ARG(DTYPE, dp), MASK_ARGS, PTR_ARG(DTYPE, lse),
                                  int Dv, PTR_ARG(DTYPE, go), long g_sb, long g_sh, long g_sl, long g_sd,
                                  PTR_ARG(DTYPE, o), long o_sb, long o_sh, long o_sl, long o_sd,
                                  PTR_ARG(DTYPE, dbias), int want_dbias) {
  ROW_SETUP;
  __global DTYPE* DP = PTR(DTYPE, dp) + (long)r * S;
  __global DTYPE* DB = want_dbias ? PTR(DTYPE, dbias) + R * S : 0;
  const long b = bh / Hq, h = bh % Hq;
  __global const DTYPE* GO = PTR(DTYPE, go) + b * g_sb + h * g_sh + (long)i * g_sl;
  __global const DTYPE* O = PTR(DTYPE, o) + b * o_sb + h * o_sh + (long)i * o_sl;
  DTYPE delta = 0;
  for (int d = 0; d < Dv; ++d) delta += GO[(long)d * g_sd] * O[(long)d * o_sd];
  const DTYPE ls = PTR(DTYPE, lse)[R];
  const int m = ls == NEG_INF ? 0 : n;  // a row with nothing left has P = 0 throughout
  const int m4 = min(n4, m);
  for (int j = 0; j < m4; j += 4) {
    const DTYPE4 pr = exp(SCORE4(j) - ls);
    // 0 where P is (a masked key), whatever dp holds
    const DTYPE4 ds = select(pr * (vload4(0, DP + j) - delta), (DTYPE4)0, pr == (DTYPE4)0);
    vstore4(pr, 0, P + j);
    vstore4(ds * scale, 0, DP + j);
    if (want_dbias) vstore4(ds, 0, DB + j);
  }
  for (int j = m4; j < m; ++j) {
    const DTYPE x = SCORE1(j);
    const DTYPE pr = x == NEG_INF ? (DTYPE)0 : exp(x - ls);
    const DTYPE ds = pr == (DTYPE)0 ? (DTYPE)0 : pr * (DP[j] - delta);
    P[j] = pr;
    DP[j] = ds * scale;
    if (want_dbias) DB[j] = ds;
  }
  for (int j = m; j < S; ++j) {
    P[j] = 0;
    DP[j] = 0;
    if (want_dbias) DB[j] = 0;
  }
}
