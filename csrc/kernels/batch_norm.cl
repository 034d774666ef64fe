// Batch normalization over the channels of contiguous (N, C, HW) data (ops/batch_norm.cpp), in
// three launches each way: per-channel partial statistics in slices of the batch (bn_partial),
// their combination per channel into three coefficients (bn_finalize), and one pass over the
// elements, out = in1 * k1[c] + in2 * k2[c] + k3[c] (bn_affine). A team of T consecutive
// work-items shares a row (n, c) of HW elements and walks it with stride T (rows.clh's teams).
// Channels-last data has its own partial and affine kernels (bn_partial_cl, bn_affine_cl, at the
// end), feeding the same bn_finalize.
#ifndef X_KIND
#define X_KIND 0  // storage kind of input, grad and output: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#include "common.clh"
#include "rows.clh"  // ACC, MAX_WG, ROW_REDUCE, team_reduce
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

// Work-group (c, s) of the C x S grid (group id c * S + s): rows n = n0..n1 of channel c, slice
// s of S. Forward (dy absent): the slice's element count, mean and sum of squared deviations
// from that mean (exact two-pass; the second pass reads the slice again, from the caches).
// Backward: the sums of dy and of dy * (x - mean[c]). part[(c * S + s) * 3 + 0..2].
__kernel void bn_partial(PTR_ARG(X_T, x), PTR_ARG(X_T, dy), PTR_ARG(ACC, mean), PTR_ARG(ACC, part), long N, int C,
                         int HW, int S, int T, int backward) {
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* gp = PTR(X_T, dy);
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const int lid = (int)get_local_id(0), t = lid % T, lane = lid / T, lanes = (int)get_local_size(0) / T;
  const int c = (int)(get_group_id(0) / S), s = (int)(get_group_id(0) % S);
  const long n0 = N * s / S, n1 = N * (s + 1) / S;
  ACC a = 0, b = 0;
  if (backward) {
    const ACC mu = PTR(ACC, mean)[c];
    for (long n = n0 + lane; n < n1; n += lanes) {
      const long row = (n * C + c) * HW;
      for (int h = t; h < HW; h += T) {
        const ACC g = LOAD_X(gp, row + h);
        a += g;
        b += g * (LOAD_X(xp, row + h) - mu);
      }
    }
    const Part p = team_reduce(part3(a, b, 0), OP_SUM, 2, lid, (int)get_local_size(0), 1, red_a, ROW_XCHG);
    if (lid == 0) {
      __global ACC* o = PTR(ACC, part) + (get_group_id(0)) * 3;
      o[0] = p.x, o[1] = p.y, o[2] = 0;
    }
    return;
  }
  const ACC count = (ACC)((n1 - n0) * HW);
  for (long n = n0 + lane; n < n1; n += lanes) {
    const long row = (n * C + c) * HW;
    for (int h = t; h < HW; h += T) a += LOAD_X(xp, row + h);
  }
  const ACC total = team_reduce(part3(a, 0, 0), OP_SUM, 1, lid, (int)get_local_size(0), 1, red_a, ROW_XCHG).x;
  const ACC mu = count > 0 ? total / count : (ACC)0;
  for (long n = n0 + lane; n < n1; n += lanes) {
    const long row = (n * C + c) * HW;
    for (int h = t; h < HW; h += T) {
      const ACC d = LOAD_X(xp, row + h) - mu;
      b += d * d;
    }
  }
  const ACC m2 = team_reduce(part3(b, 0, 0), OP_SUM, 1, lid, (int)get_local_size(0), 1, red_b, ROW_XCHG).x;
  if (lid == 0) {
    __global ACC* o = PTR(ACC, part) + (get_group_id(0)) * 3;
    o[0] = count, o[1] = mu, o[2] = m2;
  }
}

// One work-item per channel. mode 0, training forward: the S partials merged by Chan's formula
// into the batch's mean and biased variance; saves mean and invstd, updates the running
// statistics given (momentum; the unbiased variance), k1 = invstd * w, k2 = 0, k3 = b - mean * k1.
// mode 1, evaluation forward: the same coefficients from the running statistics.
// mode 2, training backward: sums of dy and dy * (x - mean) from the partials; grad_weight =
// their second * invstd, grad_bias = the first, and dx = k1 * dy + k2 * x + k3.
// mode 3, evaluation backward: the same with the running statistics, where dx = invstd * w * dy.
// stat = mean, istd = invstd: read in modes 2 (saved), written in mode 0. coef[3][C].
__kernel void bn_finalize(PTR_ARG(ACC, part), PTR_ARG(ACC, w), PTR_ARG(ACC, b), PTR_ARG(ACC, rmean),
                          PTR_ARG(ACC, rvar), PTR_ARG(ACC, stat), PTR_ARG(ACC, istd), PTR_ARG(ACC, coef),
                          PTR_ARG(ACC, gw), PTR_ARG(ACC, gb), int C, int S, ACC count, ACC eps, ACC momentum, int mode,
                          int has_w, int has_b, int has_rmean, int has_rvar, int want_gw, int want_gb) {
  const int c = (int)get_global_id(0);
  if (c >= C) return;
  __global const ACC* pp = PTR(ACC, part) + (long)c * S * 3;
  const ACC wc = has_w ? PTR(ACC, w)[c] : (ACC)1, bc = has_b ? PTR(ACC, b)[c] : (ACC)0;
  __global ACC* k = PTR(ACC, coef);
  ACC mean, invstd;
  if (mode == 0) {
    ACC n = 0, mu = 0, m2 = 0;
    for (int s = 0; s < S; ++s) {  // Chan's merge, in slice order
      const ACC nb = pp[3 * s], tot = n + nb;
      if (nb > 0) {
        const ACC d = pp[3 * s + 1] - mu, f = nb / tot;
        mu += d * f;
        m2 += pp[3 * s + 2] + d * d * n * f;
        n = tot;
      }
    }
    const ACC var = m2 / count;
    mean = mu;
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
  ACC sum_dy = 0, sum_dyx = 0;
  for (int s = 0; s < S; ++s) sum_dy += pp[3 * s], sum_dyx += pp[3 * s + 1];
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
  const int lid = (int)get_local_id(0), t = lid % T, lanes = (int)get_local_size(0) / T;
  for (long r = (long)get_group_id(0) * lanes + lid / T; r < rows; r += (long)get_num_groups(0) * lanes) {
    const int c = (int)(r % C);
    const ACC k1 = k[c], k2 = k[C + c], k3 = k[2 * C + c];
    const long row = r * HW;
    for (int h = t; h < HW; h += T) {
      ACC v = LOAD_X(ap, row + h) * k1 + k3;
      if (has_in2) v += LOAD_X(bp, row + h) * k2;
      STORE_X(op, row + h, v);
    }
  }
}

// ---- channels-last data ----------------------------------------------------------------------
// Rows of C channels (row r = n * HW + hw, element r * C + c: channels_last, or an (N, L, C)
// tensor seen as (N, C, L)). Work-groups of LX x LY work-items: LX consecutive channels, so a
// row's channels are read coalesced, by LY lanes of rows (LY a power of two; rows.clh's
// lanes_sum adds over them).

// bn_partial for channels-last data: work-group cb * S + s (1-D, LX * LY work-items) takes
// channels cb * LX.. and rows R * s / S .. R * (s + 1) / S; the same partials as bn_partial,
// part[(c * S + s) * 3 + 0..2].
__kernel void bn_partial_cl(PTR_ARG(X_T, x), PTR_ARG(X_T, dy), PTR_ARG(ACC, mean), PTR_ARG(ACC, part), long R, int C,
                            int S, int backward, int LX) {
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* gp = PTR(X_T, dy);
  __local Part red[MAX_WG];
  const int LY = (int)get_local_size(0) / LX, ly = (int)get_local_id(0) / LX, s = (int)get_group_id(0) % S;
  const int c = (int)(get_group_id(0) / S) * LX + (int)get_local_id(0) % LX;
  const bool in = c < C;
  const long r0 = R * s / S, r1 = R * (s + 1) / S;
  // Every barrier (in lanes_sum) is reached unconditionally: PoCL's optimized builds corrupt
  // memory with barriers inside the branch of a uniform condition.
  ACC a = 0, b = 0, mu = 0;
  if (backward) {
    mu = in ? PTR(ACC, mean)[c] : (ACC)0;
    for (long r = r0 + ly; in && r < r1; r += LY) {
      const ACC g = LOAD_X(gp, r * C + c);
      a += g;
      b += g * (LOAD_X(xp, r * C + c) - mu);
    }
  } else {
    for (long r = r0 + ly; in && r < r1; r += LY) a += LOAD_X(xp, r * C + c);
  }
  const ACC count = (ACC)(r1 - r0), sum_a = lanes_sum(a, 0, red, LX, LY).x;
  if (!backward) {
    mu = count > 0 ? sum_a / count : (ACC)0;
    for (long r = r0 + ly; in && r < r1; r += LY) {
      const ACC d = LOAD_X(xp, r * C + c) - mu;
      b += d * d;
    }
  }
  const ACC sum_b = lanes_sum(b, 0, red, LX, LY).x;
  if (ly == 0 && in) {
    __global ACC* o = PTR(ACC, part) + ((long)c * S + s) * 3;
    o[0] = backward ? sum_a : count, o[1] = backward ? sum_b : mu, o[2] = backward ? (ACC)0 : sum_b;
  }
}

// bn_affine for channels-last data: out = in1 * k1[c] + in2 * k2[c] + k3[c], work-item (c, lane)
// walking the rows with the grid's stride.
__kernel void bn_affine_cl(PTR_ARG(X_T, in1), PTR_ARG(X_T, in2), PTR_ARG(ACC, coef), PTR_ARG(X_T, out), long R,
                           int C, int has_in2) {
  const int c = (int)get_global_id(0);
  if (c >= C) return;
  __global const X_T* ap = PTR(X_T, in1);
  __global const X_T* bp = PTR(X_T, in2);
  __global X_T* op = PTR(X_T, out);
  __global const ACC* k = PTR(ACC, coef);
  const ACC k1 = k[c], k2 = k[C + c], k3 = k[2 * C + c];
  for (long r = get_global_id(1); r < R; r += get_global_size(1)) {
    ACC v = LOAD_X(ap, r * C + c) * k1 + k3;
    if (has_in2) v += LOAD_X(bp, r * C + c) * k2;
    STORE_X(op, r * C + c, v);
  }
}
