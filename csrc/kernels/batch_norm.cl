// Batch normalization over the channels of contiguous (N, C, HW) data (ops/batch_norm.cpp), in
// three launches each way: per-channel partial statistics in slices of the batch (bn_partial),
// their combination per channel into three coefficients (bn_finalize), and one pass over the
// elements, out = in1 * k1[c] + in2 * k2[c] + k3[c] (bn_affine). A team of T consecutive
// work-items shares a row (n, c) of HW elements and walks it with stride T * XVEC (rows.clh's
// teams). Channels-last data has its own partial and affine kernels (bn_partial_cl,
// bn_affine_cl, at the end), feeding the same bn_finalize.
// The passes over the data load XVEC consecutive elements at a time and keep IN_FLIGHT such
// loads outstanding per work-item before they use them: one scalar load at a time per
// work-item leaves a GPU's memory system mostly idle.
#ifndef X_KIND
#define X_KIND 0  // storage kind of input, grad and output: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef XVEC
#define XVEC 1  // elements per load, 4 (aligned 4-vectors; the host checks the vector dimension's length % 4 == 0 and 4-element aligned bases) or 1
#endif
#define IN_FLIGHT 4
#include "common.clh"
#include "rows.clh"  // ACC, MAX_WG, ROW_REDUCE, team_reduce, lanes_reduce
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)
#if XVEC == 4
#define ACCV ACC4
#define LOADV(p, i) CAT(LD4_, X_KIND)(p, i)
#define STOREV(p, i, v) CAT(SV4_, X_KIND)(p, i, v)
#define LOADV_ACC(p, i) vload4(0, (p) + (i))
#define COMP(v, j) ((j) == 0 ? (v).s0 : (j) == 1 ? (v).s1 : (j) == 2 ? (v).s2 : (v).s3)
#elif XVEC == 1
#define ACCV ACC
#define LOADV(p, i) LOAD_X(p, i)
#define STOREV(p, i, v) STORE_X(p, i, v)
#define LOADV_ACC(p, i) ((p)[i])
#define COMP(v, j) (v)
#else
#error "XVEC must be 1 or 4"
#endif

// One Welford step: n elements seen so far (per component), their mean m and sum of squared
// deviations m2, updated with v (one division, shared by the components).
#define WELFORD_STEP(n, m, m2, v)          \
  do {                                     \
    n += 1;                                \
    const ACCV d_ = (v) - (m);             \
    m += d_ * ((ACC)1 / (n));              \
    m2 += d_ * ((v) - (m));                \
  } while (0)

// Work-group (c, s) of the C x S grid (group id c * S + s): rows n = n0..n1 of channel c, slice
// s of S. Forward (dy absent): the slice's element count, mean and sum of squared deviations
// from that mean (Welford's update per component, one pass over x, merged by Chan's formula).
// Backward: the sums of dy and of dy * (x - mean[c]). part[(s * C + c) * 3 + 0..2].
__kernel void bn_partial(PTR_ARG(X_T, x), PTR_ARG(X_T, dy), PTR_ARG(ACC, mean), PTR_ARG(ACC, part), long N, int C,
                         int HW, int S, int T, int backward) {
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* gp = PTR(X_T, dy);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const int lid = (int)get_local_id(0), t = lid % T, lane = lid / T, lanes = (int)get_local_size(0) / T;
  const int c = (int)(get_group_id(0) / S), s = (int)(get_group_id(0) % S), step = T * XVEC;
  const long n0 = N * s / S, n1 = N * (s + 1) / S;
  ACCV a = 0, b = 0;
  ACC n = 0;
  if (backward) {  // a: sum of dy, b: sum of dy * (x - mean)
    const ACC mu = PTR(ACC, mean)[c];
    for (long r = n0 + lane; r < n1; r += lanes) {
      const long row = (r * C + c) * HW;
      for (int h = t * XVEC; h < HW; h += IN_FLIGHT * step) {
        ACCV g[IN_FLIGHT], v[IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; ++u) {
          const int q = h + u * step;
          g[u] = q < HW ? LOADV(gp, row + q) : (ACCV)0;
          v[u] = q < HW ? LOADV(xp, row + q) : (ACCV)mu;
        }
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; ++u) a += g[u], b += g[u] * (v[u] - mu);
      }
    }
  } else {  // per component: n elements seen, a their mean, b their sum of squared deviations
    for (long r = n0 + lane; r < n1; r += lanes) {
      const long row = (r * C + c) * HW;
      for (int h = t * XVEC; h < HW; h += IN_FLIGHT * step) {
        ACCV v[IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; ++u) {
          const int q = h + u * step;
          v[u] = q < HW ? LOADV(xp, row + q) : (ACCV)0;
        }
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; ++u)
          if (h + u * step < HW) WELFORD_STEP(n, a, b, v[u]);
      }
    }
  }
  Part p = backward ? part3(COMP(a, 0), COMP(b, 0), 0) : part3(n, COMP(a, 0), COMP(b, 0));
  for (int j = 1; j < XVEC; ++j)
    p = combine(p, backward ? part3(COMP(a, j), COMP(b, j), 0) : part3(n, COMP(a, j), COMP(b, j)),
                backward ? OP_SUM : OP_WELFORD, 3);
  // One reduction for both directions: a barrier inside a branch, even of a uniform condition,
  // corrupts memory in PoCL's optimized builds.
  p = team_reduce(p, backward ? OP_SUM : OP_WELFORD, 3, lid, (int)get_local_size(0), 1, red, ROW_XCHG);
  if (lid == 0) {
    __global ACC* o = PTR(ACC, part) + ((long)s * C + c) * 3;
    o[0] = p.x, o[1] = p.y, o[2] = p.z;
  }
}

// Work-groups of LX channels by LY lanes (rows.clh's lanes_reduce): lane ly merges the partials
// s = ly, ly + LY, ... of its channel, the lanes combine theirs, and lane 0 finishes the channel,
// so a channel's S partials take S / LY steps, not S. mode 0, training forward: the partials
// merged by Chan's formula into the batch's mean and biased variance; saves mean and invstd,
// updates the running statistics given (momentum; the unbiased variance), k1 = invstd * w,
// k2 = 0, k3 = b - mean * k1. mode 1, evaluation forward: the same coefficients from the
// running statistics (no partials). mode 2, training backward: sums of dy and dy * (x - mean)
// from the partials; grad_weight = their second * invstd, grad_bias = the first, and
// dx = k1 * dy + k2 * x + k3. mode 3, evaluation backward: the same with the running
// statistics, where dx = invstd * w * dy. stat = mean, istd = invstd: read in modes 2 (saved),
// written in mode 0. part[S][C][3], coef[3][C].
__kernel void bn_finalize(PTR_ARG(ACC, part), PTR_ARG(ACC, w), PTR_ARG(ACC, b), PTR_ARG(ACC, rmean),
                          PTR_ARG(ACC, rvar), PTR_ARG(ACC, stat), PTR_ARG(ACC, istd), PTR_ARG(ACC, coef),
                          PTR_ARG(ACC, gw), PTR_ARG(ACC, gb), int C, int S, ACC count, ACC eps, ACC momentum, int mode,
                          int has_w, int has_b, int has_rmean, int has_rvar, int want_gw, int want_gb, int LX) {
  __local Part red[MAX_WG];
  const int LY = (int)get_local_size(0) / LX, ly = (int)get_local_id(0) / LX;
  const int c = (int)get_group_id(0) * LX + (int)get_local_id(0) % LX;
  const int op = mode == 0 ? OP_WELFORD : OP_SUM;
  __global const ACC* pp = PTR(ACC, part);
  Part p = part3(0, 0, 0);
  for (int s = ly; mode != 1 && c < C && s < S; s += IN_FLIGHT * LY) {
    Part q[IN_FLIGHT];
#pragma unroll
    for (int u = 0; u < IN_FLIGHT; ++u) {
      __global const ACC* e = pp + ((long)(s + u * LY) * C + c) * 3;
      q[u] = s + u * LY < S ? part3(e[0], e[1], e[2]) : part3(0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < IN_FLIGHT; ++u) p = combine(p, q[u], op, 3);
  }
  p = lanes_reduce(p, op, 3, red, LX, LY);  // every work-item: it has barriers
  if (ly != 0 || c >= C) return;
  const ACC wc = has_w ? PTR(ACC, w)[c] : (ACC)1, bc = has_b ? PTR(ACC, b)[c] : (ACC)0;
  __global ACC* k = PTR(ACC, coef);
  ACC mean, invstd;
  if (mode == 0) {
    const ACC var = p.z / count;
    mean = p.y;
    invstd = (ACC)1 / sqrt(var + eps);
    PTR(ACC, stat)[c] = mean;
    PTR(ACC, istd)[c] = invstd;
    if (has_rmean) PTR(ACC, rmean)[c] = ((ACC)1 - momentum) * PTR(ACC, rmean)[c] + momentum * mean;
    if (has_rvar)
      PTR(ACC, rvar)[c] = ((ACC)1 - momentum) * PTR(ACC, rvar)[c] + momentum * var * count / (count - (ACC)1);
  } else if (mode == 1 || mode == 3) {
    mean = PTR(ACC, rmean)[c];
    invstd = (ACC)1 / sqrt(PTR(ACC, rvar)[c] + eps);
  } else {
    mean = PTR(ACC, stat)[c];
    invstd = PTR(ACC, istd)[c];
  }
  const ACC k1 = invstd * wc;
  if (mode < 2) {
    k[c] = k1, k[C + c] = 0, k[2 * C + c] = bc - mean * k1;
    return;
  }
  const ACC sum_dy = p.x, sum_dyx = p.y;
  if (want_gw) PTR(ACC, gw)[c] = sum_dyx * invstd;
  if (want_gb) PTR(ACC, gb)[c] = sum_dy;
  if (mode == 3) {
    k[c] = k1, k[C + c] = 0, k[2 * C + c] = 0;
    return;
  }
  const ACC k2 = -k1 * invstd * invstd * sum_dyx / count;
  k[c] = k1, k[C + c] = k2, k[2 * C + c] = -k1 * sum_dy / count - k2 * mean;
}

// out = in1 * k1[c] + in2 * k2[c] + k3[c] over rows (n, c) of HW elements (in2 optional), a team
// of T work-items per row; rows r = n * C + c.
__kernel void bn_affine(PTR_ARG(X_T, in1), PTR_ARG(X_T, in2), PTR_ARG(ACC, coef), PTR_ARG(X_T, out), long rows,
                        int C, int HW, int T, int has_in2) {
  __global const X_T* ap = PTR(X_T, in1);
  __global const X_T* bp = PTR(X_T, in2);
  __global X_T* op = PTR(X_T, out);
  __global const ACC* k = PTR(ACC, coef);
  const int lid = (int)get_local_id(0), t = lid % T, lanes = (int)get_local_size(0) / T, step = T * XVEC;
  for (long r = (long)get_group_id(0) * lanes + lid / T; r < rows; r += (long)get_num_groups(0) * lanes) {
    const int c = (int)(r % C);
    const ACC k1 = k[c], k2 = k[C + c], k3 = k[2 * C + c];
    const long row = r * HW;
    for (int h = t * XVEC; h < HW; h += IN_FLIGHT * step) {
      ACCV v[IN_FLIGHT];
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u) {
        const int q = h + u * step;
        v[u] = q < HW ? LOADV(ap, row + q) * k1 + k3 : (ACCV)0;
        if (has_in2 && q < HW) v[u] += LOADV(bp, row + q) * k2;
      }
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u)
        if (h + u * step < HW) STOREV(op, row + h + u * step, v[u]);
    }
  }
}

// ---- channels-last data ----------------------------------------------------------------------
// Rows of C channels (row r = n * HW + hw, element r * C + c: channels_last, or an (N, L, C)
// tensor seen as (N, C, L)). Work-groups of LX x LY work-items: LX consecutive channel vectors
// of XVEC channels, so a row's channels are read coalesced, by LY lanes of rows (LY a power of
// two; rows.clh's lanes_reduce combines over them).

// bn_partial for channels-last data: work-group cb * S + s (1-D, LX * LY work-items) takes
// channel vectors cb * LX.. and rows R * s / S .. R * (s + 1) / S; the same partials as
// bn_partial, part[(s * C + c) * 3 + 0..2]. Forward: each lane's count, mean and squared
// deviations by Welford's update (one pass over x), merged over the lanes by Chan's formula.
__kernel void bn_partial_cl(PTR_ARG(X_T, x), PTR_ARG(X_T, dy), PTR_ARG(ACC, mean), PTR_ARG(ACC, part), long R, int C,
                            int S, int backward, int LX) {
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* gp = PTR(X_T, dy);
  __local Part red[MAX_WG];
  const int LY = (int)get_local_size(0) / LX, ly = (int)get_local_id(0) / LX, s = (int)get_group_id(0) % S;
  const int c = ((int)(get_group_id(0) / S) * LX + (int)get_local_id(0) % LX) * XVEC;  // first channel
  const bool in = c < C;
  const long r0 = R * s / S, r1 = R * (s + 1) / S;
  ACCV a = 0, b = 0;
  ACC n = 0;
  if (backward) {  // a: sum of dy, b: sum of dy * (x - mean)
    const ACCV mu = in ? LOADV_ACC(PTR(ACC, mean), c) : (ACCV)0;
    for (long r = r0 + ly; in && r < r1; r += IN_FLIGHT * LY) {
      ACCV g[IN_FLIGHT], v[IN_FLIGHT];
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u) {
        const long q = r + u * LY;
        g[u] = q < r1 ? LOADV(gp, q * C + c) : (ACCV)0;
        v[u] = q < r1 ? LOADV(xp, q * C + c) : mu;
      }
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u) a += g[u], b += g[u] * (v[u] - mu);
    }
  } else {  // n rows seen, a: their mean, b: their sum of squared deviations
    for (long r = r0 + ly; in && r < r1; r += IN_FLIGHT * LY) {
      ACCV v[IN_FLIGHT];
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u) {
        const long q = r + u * LY;
        v[u] = q < r1 ? LOADV(xp, q * C + c) : (ACCV)0;
      }
#pragma unroll
      for (int u = 0; u < IN_FLIGHT; ++u)
        if (r + u * LY < r1) WELFORD_STEP(n, a, b, v[u]);
    }
  }
  // Every barrier (in lanes_reduce) is reached unconditionally: PoCL's optimized builds corrupt
  // memory with barriers inside the branch of a uniform condition.
  for (int j = 0; j < XVEC; ++j) {
    const Part p = lanes_reduce(backward ? part3(COMP(a, j), COMP(b, j), 0) : part3(n, COMP(a, j), COMP(b, j)),
                                backward ? OP_SUM : OP_WELFORD, 3, red, LX, LY);
    if (ly == 0 && in) {
      __global ACC* o = PTR(ACC, part) + ((long)s * C + c + j) * 3;
      o[0] = p.x, o[1] = p.y, o[2] = p.z;
    }
  }
}

// bn_affine for channels-last data: out = in1 * k1[c] + in2 * k2[c] + k3[c], work-item
// (channel vector, lane) walking the rows with the grid's stride.
__kernel void bn_affine_cl(PTR_ARG(X_T, in1), PTR_ARG(X_T, in2), PTR_ARG(ACC, coef), PTR_ARG(X_T, out), long R,
                           int C, int has_in2) {
  const int c = (int)get_global_id(0) * XVEC;
  if (c >= C) return;
  __global const X_T* ap = PTR(X_T, in1);
  __global const X_T* bp = PTR(X_T, in2);
  __global X_T* op = PTR(X_T, out);
  __global const ACC* k = PTR(ACC, coef);
  const ACCV k1 = LOADV_ACC(k, c), k2 = LOADV_ACC(k, C + c), k3 = LOADV_ACC(k, 2 * C + c);
  const long step = (long)get_global_size(1);
  for (long r = get_global_id(1); r < R; r += IN_FLIGHT * step) {
    ACCV v[IN_FLIGHT];
#pragma unroll
    for (int u = 0; u < IN_FLIGHT; ++u) {
      const long q = r + u * step;
      v[u] = q < R ? LOADV(ap, q * C + c) * k1 + k3 : (ACCV)0;
      if (has_in2 && q < R) v[u] += LOADV(bp, q * C + c) * k2;
    }
#pragma unroll
    for (int u = 0; u < IN_FLIGHT; ++u)
      if (r + u * step < R) STOREV(op, (r + u * step) * C + c, v[u]);
  }
}
