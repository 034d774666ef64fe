// LayerNorm and RMSNorm over the last N elements of dense rows ([M, N], row-major).
// Forward: a team of T consecutive work-items per row; each keeps up to ITEMS elements in
// registers (rows of up to T*ITEMS elements are read once: exact two-pass mean and variance),
// streams any longer tail twice, and merges per-work-item Welford statistics (count, mean, M2)
// with Chan's formula. Team reductions: warp shuffles plus at most one barrier (ROW_REDUCE
// 1-3) or a local-memory tree (subgroup.clh: team_reduce).
// Backward: one launch computes grad_input and, for rows held in registers, the per-group
// partial sums of grad_weight / grad_bias, which the last groups to finish add up in a fixed
// order (deterministic). Longer rows take a second launch for the column sums.
// rms != 0 selects RMSNorm: the mean is taken as 0 and only rstd is saved.
#include "common.clh"

#ifndef COLS
#define COLS 32  // columns per work-group in the grad_weight/grad_bias partial-sum kernel
#endif
#ifndef WB_CHUNK
#define WB_CHUNK 4  // register columns per local-memory pass when a group sums its weight/bias partials
#endif
#ifndef FAN_IN
#define FAN_IN 16  // partial rows summed by the last arrival of each team (weight/bias grads)
#endif
#ifndef BWD_PREFETCH
#define BWD_PREFETCH 0  // 1: layer_norm_bwd loads the next tile's dy and x while it computes the current one
#endif
#ifndef SERIAL_ROWS
#define SERIAL_ROWS 0  // 1: the one-work-item-per-row-block kernels for CPU devices instead of the team kernels
#endif
#ifndef X_KIND
#define X_KIND 0  // storage kind of input/grad/output: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef W_KIND
#define W_KIND 0  // storage kind of weight/bias and their gradients
#endif
#ifndef S_KIND
#define S_KIND 0  // storage kind of the saved mean/rstd
#endif
#include "rows.clh"  // ITEMS, VEC (rows and weight/bias), ACC, ROW_REDUCE, row teams, register loads
#define X_T CAT(ST_, X_KIND)
#define W_T CAT(ST_, W_KIND)
#define S_T CAT(ST_, S_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define LOAD_W(p, i) CAT(LD_, W_KIND)(p, i)
#define LOAD_S(p, i) CAT(LD_, S_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)
#define STORE_W(p, i, v) CAT(SV_, W_KIND)(p, i, v)
#define STORE_S(p, i, v) CAT(SV_, S_KIND)(p, i, v)
#define LOAD4_X(p, i) CAT(LD4_, X_KIND)(p, i)
#define LOAD4_W(p, i) CAT(LD4_, W_KIND)(p, i)
#define STORE4_X(p, i, v) CAT(SV4_, X_KIND)(p, i, v)

#if SERIAL_ROWS
// CPU devices (norm.cpp: rows::Config::serial). One work-item walks a block of whole rows, eight
// elements at a time, with no team and no barrier: PoCL runs such a kernel as a plain loop per
// work-item, where the team kernels below are cut at every barrier into loops over the
// work-group that keep each work-item's register arrays in memory. Rows need no alignment
// (vloadn/vstoren take any element address); a row's last N % 8 elements go one by one.
#define LOAD8_X(p, i) CAT(LD8_, X_KIND)(p, i)
#define LOAD8_W(p, i) CAT(LD8_, W_KIND)(p, i)
#define STORE8_X(p, i, v) CAT(SV8_, X_KIND)(p, i, v)

// layer_norm_fwd of whole rows (same arguments, rows_per_item in place of T): the mean, then the
// sum of squared deviations from it (exact two-pass), then y.
__kernel void layer_norm_fwd_serial(PTR_ARG(X_T, x), PTR_ARG(W_T, w), PTR_ARG(W_T, b), PTR_ARG(X_T, y),
                                    PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd), long M, long N, ACC eps,
                                    long rows_per_item, int has_w, int has_b, int rms) {
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global W_T* bp = PTR(W_T, b);
  __global X_T* yp = PTR(X_T, y);
  SERIAL_ROWS_OF(get_global_id(0), rows_per_item, M, r0, r1);
  const long N8 = N & ~7L;
  for (long row = r0; row < r1; ++row) {
    const long base = row * N;
    ACC mu = 0;
    if (!rms) {
      ACC8 s8 = 0;
      for (long c = 0; c < N8; c += 8) s8 += LOAD8_X(xp, base + c);
      ACC s = sum8(s8);
      for (long c = N8; c < N; ++c) s += LOAD_X(xp, base + c);
      mu = N > 0 ? s / (ACC)N : (ACC)0;  // empty rows: mean 0 (and rstd NaN), as the CPU
    }
    ACC8 q8 = 0;
    for (long c = 0; c < N8; c += 8) {
      const ACC8 d = LOAD8_X(xp, base + c) - mu;
      q8 += d * d;
    }
    ACC m2 = sum8(q8);
    for (long c = N8; c < N; ++c) {
      const ACC d = LOAD_X(xp, base + c) - mu;
      m2 += d * d;
    }
    const ACC rs = (ACC)1 / sqrt(m2 / (ACC)N + eps);
    if (!rms) STORE_S(PTR(S_T, mean), row, mu);
    STORE_S(PTR(S_T, rstd), row, rs);
    for (long c = 0; c < N8; c += 8) {
      ACC8 r = (LOAD8_X(xp, base + c) - mu) * rs;
      if (has_w) r *= LOAD8_W(wp, c);
      if (has_b) r += LOAD8_W(bp, c);
      STORE8_X(yp, base + c, r);
    }
    for (long c = N8; c < N; ++c) {
      ACC r = (LOAD_X(xp, base + c) - mu) * rs;
      if (has_w) r *= LOAD_W(wp, c);
      if (has_b) r += LOAD_W(bp, c);
      STORE_X(yp, base + c, r);
    }
  }
}

// layer_norm_bwd of whole rows: per row, the sums of g = dy * w and of g * xhat, then grad_input
// (same formula as layer_norm_bwd). With want_wb, the work-item also adds dy * xhat and dy of
// its rows into its own partial row part[item] = (dw[N], db[N]), which layer_norm_wb_serial sums
// over the work-items in order (deterministic).
__kernel void layer_norm_bwd_serial(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd),
                                    PTR_ARG(W_T, w), PTR_ARG(X_T, dx), PTR_ARG(ACC, part), long M, long N,
                                    long rows_per_item, int has_w, int rms, int want_dx, int want_wb) {
  __global X_T* dyp = PTR(X_T, dy);
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global X_T* dxp = PTR(X_T, dx);
  const long item = get_global_id(0);
  SERIAL_ROWS_OF(item, rows_per_item, M, r0, r1);
  const long N8 = N & ~7L;
  __global ACC* pw = want_wb ? PTR(ACC, part) + item * 2 * N : 0;
  __global ACC* pb = want_wb ? pw + N : 0;
  if (want_wb)
    for (long c = 0; c < 2 * N; ++c) pw[c] = 0;
  const ACC inv_n = (ACC)1 / (ACC)N;
  for (long row = r0; row < r1; ++row) {
    const long base = row * N;
    const ACC mu = rms ? (ACC)0 : LOAD_S(PTR(S_T, mean), row);
    const ACC rs = LOAD_S(PTR(S_T, rstd), row);
    ACC8 a8 = 0, b8 = 0;
    for (long c = 0; c < N8; c += 8) {
      ACC8 g = LOAD8_X(dyp, base + c);
      if (has_w) g *= LOAD8_W(wp, c);
      a8 += g;
      b8 += g * ((LOAD8_X(xp, base + c) - mu) * rs);
    }
    ACC a = sum8(a8), bsum = sum8(b8);
    for (long c = N8; c < N; ++c) {
      const ACC g = LOAD_X(dyp, base + c) * (has_w ? LOAD_W(wp, c) : (ACC)1);
      a += g;
      bsum += g * ((LOAD_X(xp, base + c) - mu) * rs);
    }
    const ACC mean_g = rms ? (ACC)0 : a * inv_n, mean_gx = bsum * inv_n;
    for (long c = 0; c < N8; c += 8) {
      const ACC8 d = LOAD8_X(dyp, base + c), xh = (LOAD8_X(xp, base + c) - mu) * rs;
      if (want_dx) STORE8_X(dxp, base + c, rs * ((has_w ? d * LOAD8_W(wp, c) : d) - mean_g - xh * mean_gx));
      if (want_wb) {
        vstore8(vload8(0, pw + c) + d * xh, 0, pw + c);
        vstore8(vload8(0, pb + c) + d, 0, pb + c);
      }
    }
    for (long c = N8; c < N; ++c) {
      const ACC d = LOAD_X(dyp, base + c), xh = (LOAD_X(xp, base + c) - mu) * rs;
      if (want_dx) STORE_X(dxp, base + c, rs * ((has_w ? d * LOAD_W(wp, c) : d) - mean_g - xh * mean_gx));
      if (want_wb) {
        pw[c] += d * xh;
        pb[c] += d;
      }
    }
  }
}

// grad_weight / grad_bias from layer_norm_bwd_serial's `items` partial rows: one work-item per
// eight columns, the partials added in order.
__kernel void layer_norm_wb_serial(PTR_ARG(ACC, part), PTR_ARG(W_T, dw), PTR_ARG(W_T, db), long items, long N,
                                   int want_w, int want_b) {
  __global const ACC* pp = PTR(ACC, part);
  const long c0 = get_global_id(0) * 8;
  if (c0 >= N) return;
  ACC sw[8] = {0}, sb[8] = {0};
  const int n = (int)min(8L, N - c0);
  for (long i = 0; i < items; ++i) {
    __global const ACC* p = pp + i * 2 * N + c0;
    for (int j = 0; j < n; ++j) {
      sw[j] += p[j];
      sb[j] += p[N + j];
    }
  }
  for (int j = 0; j < n; ++j) {
    if (want_w) STORE_W(PTR(W_T, dw), c0 + j, sw[j]);
    if (want_b) STORE_W(PTR(W_T, db), c0 + j, sb[j]);
  }
}

#else  // the team kernels (GPUs)
DEFINE_LOAD_REGS(load_x_regs, X_T, LOAD_X, LOAD4_X)
DEFINE_LOAD_REGS(load_w_regs, W_T, LOAD_W, LOAD4_W)

// Member t's register elements v of a row into p + base.
inline void store_x_regs(const ACC* v, __global X_T* p, long base, long N, int t, int T) {
#if VEC == 4
#pragma unroll
  for (int j = 0; j < ITEMS / 4; ++j) {
    const long c = COL(t, T, 4 * j);
    if (c < N) STORE4_X(p, base + c, ((ACC4)(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3])));
  }
#else
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long c = COL(t, T, k);
    if (c < N) STORE_X(p, base + c, v[k]);
  }
#endif
}

// y = (x - mean) * rstd * w + b per row; saves mean (unless rms) and rstd. A row held in
// registers (N <= T * ITEMS) takes its mean, then the sum of squared deviations from it (exact
// two-pass); a longer row merges per-work-item Welford statistics.
__kernel void layer_norm_fwd(PTR_ARG(X_T, x), PTR_ARG(W_T, w), PTR_ARG(W_T, b), PTR_ARG(X_T, y),
                             PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd), long M, long N, ACC eps, int T, int has_w,
                             int has_b, int rms) {
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global W_T* bp = PTR(W_T, b);
  __global X_T* yp = PTR(X_T, y);
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const int lid = (int)get_local_id(0);
  const int t = lid % T, lane = lid / T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lane;
  const bool active = row < M;
  const long base = active ? row * N : 0;
  const bool fits = N <= (long)T * ITEMS;  // the same for every work-item

  ACC v[ITEMS], wv[ITEMS], bv[ITEMS];
  load_x_regs(v, xp, base, 1, N, t, T, active, (ACC)0);
  ACC mu = 0, m2 = 0;
  if (fits) {
    if (!rms) {
      ACC s = 0;
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) s += v[k];
      const ACC total = team_reduce(part3(s, 0, 0), OP_SUM, 1, t, T, 1, red_a, ROW_XCHG).x;
      mu = N > 0 ? total / (ACC)N : (ACC)0;  // empty rows: mean 0 (and rstd NaN), as the CPU
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const ACC d = COL(t, T, k) < N ? v[k] - mu : (ACC)0;
      m2 += d * d;
    }
    m2 = team_reduce(part3(m2, 0, 0), OP_SUM, 1, t, T, 1, red_b, ROW_XCHG).x;
  } else {
    // This work-item's statistics: exact two-pass over the registers, then Welford on the tail.
    ACC n = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      n += (active && COL(t, T, k) < N) ? (ACC)1 : (ACC)0;
      mu += v[k];
    }
    mu = (rms || n == 0) ? (ACC)0 : mu / n;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const ACC d = (active && COL(t, T, k) < N) ? v[k] - mu : (ACC)0;
      m2 += d * d;
    }
    if (active)
      for (long c0 = TAIL(t, T); c0 < N; c0 += (long)VEC * T)
        for (int e = 0; e < VEC; ++e) {
          const ACC xv = LOAD_X(xp, base + c0 + e);
          n += 1;
          if (rms) {
            m2 += xv * xv;
          } else {
            const ACC d = xv - mu;
            mu += d / n;
            m2 += d * (xv - mu);
          }
        }
    const Part p = team_reduce(part3(n, mu, m2), OP_WELFORD, 3, t, T, 1, red_a, ROW_XCHG);
    mu = p.y;
    m2 = p.z;
  }
  if (!active) return;
  // The weight and bias columns are shared by every row, so mostly cache hits: loaded only
  // now, they hold no registers during the reductions (88 registers instead of 102 on NVIDIA).
  if (has_w) load_w_regs(wv, wp, 0, 1, N, t, T, true, (ACC)0);
  if (has_b) load_w_regs(bv, bp, 0, 1, N, t, T, true, (ACC)0);
  const ACC rstd_v = (ACC)1 / sqrt(m2 / (ACC)N + eps);
  if (t == 0) {
    if (!rms) STORE_S(PTR(S_T, mean), row, mu);
    STORE_S(PTR(S_T, rstd), row, rstd_v);
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    ACC r = (v[k] - mu) * rstd_v;
    if (has_w) r *= wv[k];
    if (has_b) r += bv[k];
    v[k] = r;
  }
  store_x_regs(v, yp, base, N, t, T);
  for (long c0 = TAIL(t, T); c0 < N; c0 += (long)VEC * T)
    for (int e = 0; e < VEC; ++e) {
      const long c = c0 + e;
      ACC r = (LOAD_X(xp, base + c) - mu) * rstd_v;
      if (has_w) r *= LOAD_W(wp, c);
      if (has_b) r += LOAD_W(bp, c);
      STORE_X(yp, base + c, r);
    }
}

// Backward of LayerNorm / RMSNorm in one launch. grad_input of each row: with g = dy * w and
// xhat = (x - mean) * rstd, dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) (RMSNorm: no
// mean(g) term, mean = 0). A group of L = local_size / T lanes (one row each) x T items walks
// `iters` tiles of L consecutive rows, so it owns rows [group * iters * L, ... + iters * L).
// With want_w / want_b (requires N <= T * ITEMS: every column of a row sits in registers), each
// item also sums dy * xhat and dy of its columns over its rows; the group adds its lanes in
// order into a partial row part[group] = (dw[N], db[N]), and the partials are summed by a
// fan-in tree of last arrivals (last_group_arrive): of each team of FAN_IN consecutive
// partials the last group to finish writes their sum to the next level, until one team is
// left, whose last group writes grad_weight / grad_bias. Every sum has a fixed order, so the
// result does not depend on which group arrives last.
__kernel void layer_norm_bwd(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd),
                             PTR_ARG(W_T, w), PTR_ARG(X_T, dx), PTR_ARG(ACC, part), __global uint* counters,
                             PTR_ARG(W_T, dw), PTR_ARG(W_T, db), long M, long N, int T, int iters, int has_w, int rms,
                             int want_dx, int want_w, int want_b) {
  __global X_T* dyp = PTR(X_T, dy);
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global X_T* dxp = PTR(X_T, dx);
  __local ACC wb_a[MAX_WG * WB_CHUNK];  // the weight/bias partials' exchange
  __local ACC wb_b[MAX_WG * WB_CHUNK];
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  __local uint last_flag;
  const int lid = (int)get_local_id(0), wg = (int)get_local_size(0);
  const int t = lid % T, lane = lid / T, L = wg / T;
  const bool wb = want_w || want_b;
  const ACC inv_n = (ACC)1 / (ACC)N;

  ACC pw[ITEMS], pb[ITEMS];  // this item's column sums over its rows (wb only)
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) pw[k] = pb[k] = 0;
  ACC wv[ITEMS];  // this item's weight columns: the same in every row
  if (has_w) load_w_regs(wv, wp, 0, 1, N, t, T, true, (ACC)0);

  const long row0 = (long)get_group_id(0) * iters * L + lane;  // this lane's row of tile 0
#if BWD_PREFETCH
  ACC gn[ITEMS], xn[ITEMS];  // the next tile's dy and x, loaded while this tile computes
  load_x_regs(gn, dyp, row0 * N, 1, N, t, T, row0 < M, (ACC)0);
  load_x_regs(xn, xp, row0 * N, 1, N, t, T, row0 < M, (ACC)0);
#endif
  for (int it = 0; it < iters; ++it) {
    const long row = row0 + (long)it * L;
    const bool active = row < M;
    const long base = active ? row * N : 0;
    const ACC mu = (active && !rms) ? LOAD_S(PTR(S_T, mean), row) : (ACC)0;
    const ACC rs = active ? LOAD_S(PTR(S_T, rstd), row) : (ACC)0;
    ACC g[ITEMS], xh[ITEMS];  // dy and x for now (0 outside the row)
#if BWD_PREFETCH
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) g[k] = gn[k], xh[k] = xn[k];
    if (it + 1 < iters) {
      const long next = row + L;
      load_x_regs(gn, dyp, next * N, 1, N, t, T, next < M, (ACC)0);
      load_x_regs(xn, xp, next * N, 1, N, t, T, next < M, (ACC)0);
    }
#else
    load_x_regs(g, dyp, base, 1, N, t, T, active, (ACC)0);
    load_x_regs(xh, xp, base, 1, N, t, T, active, (ACC)0);
#endif
    ACC a = 0, bsum = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const ACC d = g[k];
      xh[k] = (xh[k] - mu) * rs;
      g[k] = has_w ? d * wv[k] : d;
      a += g[k];
      bsum += g[k] * xh[k];
      pw[k] += d * xh[k];
      pb[k] += d;
    }
    if (active)
      for (long c0 = TAIL(t, T); c0 < N; c0 += (long)VEC * T)  // rows longer than T * ITEMS (no wb)
        for (int e = 0; e < VEC; ++e) {
          const long c = c0 + e;
          const ACC gv = LOAD_X(dyp, base + c) * (has_w ? LOAD_W(wp, c) : (ACC)1);
          a += gv;
          bsum += gv * (LOAD_X(xp, base + c) - mu) * rs;
        }
    // Alternate arrays: a tile's writes cannot overtake the previous tile's reads.
    const Part p = team_reduce(part3(a, bsum, 0), OP_SUM, 2, t, T, 1, (it & 1) ? red_b : red_a, ROW_XCHG);
    const ACC mean_g = rms ? (ACC)0 : p.x * inv_n;
    const ACC mean_gx = p.y * inv_n;
    if (active && want_dx) {
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) g[k] = rs * (g[k] - mean_g - xh[k] * mean_gx);
      store_x_regs(g, dxp, base, N, t, T);
      for (long c0 = TAIL(t, T); c0 < N; c0 += (long)VEC * T)
        for (int e = 0; e < VEC; ++e) {
          const long c = c0 + e;
          const ACC gv = LOAD_X(dyp, base + c) * (has_w ? LOAD_W(wp, c) : (ACC)1);
          const ACC xv = (LOAD_X(xp, base + c) - mu) * rs;
          STORE_X(dxp, base + c, rs * (gv - mean_g - xv * mean_gx));
        }
    }
  }
  if (!wb) return;

  // This group's partial row: WB_CHUNK register columns at a time go through local memory,
  // then each (chunk, column) pair sums its L lanes in order.
  __global ACC* pp = PTR(ACC, part);
  __global ACC* own = pp + (long)get_group_id(0) * 2 * N;
  for (int k0 = 0; k0 < ITEMS && COL(0, T, k0) < N; k0 += WB_CHUNK) {
#pragma unroll
    for (int j = 0; j < WB_CHUNK; ++j) {
      // Static register indices (a dynamic pw[k0 + j] would spill the arrays to memory).
      ACC vw = 0, vb = 0;
#pragma unroll
      for (int k = 0; k < ITEMS; ++k)
        if (k == k0 + j) {
          vw = pw[k];
          vb = pb[k];
        }
      wb_a[j * wg + lid] = vw;
      wb_b[j * wg + lid] = vb;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int q = lid; q < WB_CHUNK * T; q += wg) {
      const int j = q / T, tq = q % T;
      const long c = COL(tq, T, k0 + j);
      if (k0 + j < ITEMS && c < N) {
        // Lanes in order, 8 loads issued before they are added (latency, not a dependent chain).
        ACC sw = 0, sb = 0;
        for (int l0 = 0; l0 < L; l0 += 8) {
          ACC va[8], vb[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int at = j * wg + min(l0 + u, L - 1) * T + tq;
            va[u] = l0 + u < L ? wb_a[at] : (ACC)0;
            vb[u] = l0 + u < L ? wb_b[at] : (ACC)0;
          }
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            sw += va[u];
            sb += vb[u];
          }
        }
        own[c] = sw;
        own[N + c] = sb;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Fan-in tree over the partial rows: a level's n partials are slots [slot_base, slot_base + n)
  // of `part`, its teams' arrival counters start at counters + cbase.
  ulong s = get_group_id(0), n = get_num_groups(0), slot_base = 0, cbase = 0;
  for (;;) {
    const ulong team = s / FAN_IN, first = team * FAN_IN, nteams = (n + FAN_IN - 1) / FAN_IN;
    const uint cnt = (uint)min((ulong)FAN_IN, n - first);
    if (!last_group_arrive(counters + cbase + team, cnt, &last_flag)) return;
    for (long c = lid; c < N; c += wg) {
      // The team's partials in order; all FAN_IN loads are issued before they are added.
      ACC vw[FAN_IN], vb[FAN_IN];
#pragma unroll
      for (uint i = 0; i < FAN_IN; ++i) {
        volatile __global const ACC* src = pp + (long)(slot_base + first + min(i, cnt - 1)) * 2 * N;
        vw[i] = i < cnt ? src[c] : (ACC)0;
        vb[i] = i < cnt ? src[N + c] : (ACC)0;
      }
      ACC sw = 0, sb = 0;
#pragma unroll
      for (uint i = 0; i < FAN_IN; ++i) {
        sw += vw[i];
        sb += vb[i];
      }
      if (nteams == 1) {
        if (want_w) STORE_W(PTR(W_T, dw), c, sw);
        if (want_b) STORE_W(PTR(W_T, db), c, sb);
      } else {
        __global ACC* dst = pp + (long)(slot_base + n + team) * 2 * N;
        dst[c] = sw;
        dst[N + c] = sb;
      }
    }
    if (nteams == 1) return;
    slot_base += n;
    cbase += nteams;
    s = team;
    n = nteams;
  }
}

// Work-group of COLS columns x local_size / COLS row lanes: adds every lane's (sw, sb) of a
// column in a fixed-order tree; lane 0's slots red_w[lid] / red_b[lid] then hold the sums.
// Call from every work-item (it contains barriers).
inline void lane_tree_sums(__local ACC* red_w, __local ACC* red_b, ACC sw, ACC sb) {
  const int lid = (int)get_local_id(0);
  const int lanes = (int)get_local_size(0) / COLS;
  const int ly = lid / COLS;
  red_w[lid] = sw;
  red_b[lid] = sb;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = lanes >> 1; h > 0; h >>= 1) {
    if (ly < h) {
      red_w[lid] += red_w[lid + h * COLS];
      red_b[lid] += red_b[lid + h * COLS];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Sums the per-block partials of column j (blk * N + j, fixed order: lanes stride over the
// blocks, then a tree over the lanes) into dw / db. The partials may come from other groups
// of the same launch, hence the volatile loads (see last_group_arrive in common.clh).
inline void wb_column_sums(__global const ACC* dw_part, __global const ACC* db_part, __global W_T* dw,
                           __global W_T* db, long N, long blocks, int want_w, int want_b, __local ACC* red_w,
                           __local ACC* red_b) {
  const int lid = (int)get_local_id(0);
  const int lanes = (int)get_local_size(0) / COLS;
  const int cx = lid % COLS, ly = lid / COLS;
  const long j = (long)get_group_id(0) * COLS + cx;
  volatile __global const ACC* vw = dw_part;
  volatile __global const ACC* vb = db_part;
  ACC sw = 0, sb = 0;
  if (j < N)
    for (long k = ly; k < blocks; k += lanes) {
      if (want_w) sw += vw[k * N + j];
      if (want_b) sb += vb[k * N + j];
    }
  lane_tree_sums(red_w, red_b, sw, sb);
  if (ly == 0 && j < N) {
    if (want_w) STORE_W(dw, j, red_w[lid]);
    if (want_b) STORE_W(db, j, red_b[lid]);
  }
  // PoCL 3.1's optimizer takes one work-item's branch for all in the tail of a group that
  // entered through last_group_arrive after a barrier loop (every lane stored); a barrier
  // after the stores leaves that tail empty.
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Weight/bias grads of rows longer than layer_norm_bwd keeps in registers. Group (i, blk) sums
// COLS columns over one block of rows: dw_part[blk, j] = sum dy * xhat, db_part[blk, j] = sum
// dy (work-group = COLS columns x local_size / COLS row lanes). With arrival counters, the
// last block of each column group to finish sums the column partials (wb_column_sums);
// without, layer_norm_bwd_wb_final does in a second launch.
__kernel void layer_norm_bwd_wb(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd),
                                PTR_ARG(ACC, dw_part), PTR_ARG(ACC, db_part), __global uint* counters,
                                PTR_ARG(W_T, dw), PTR_ARG(W_T, db), long M, long N, long rows_per_block, int rms,
                                int want_w, int want_b) {
  __global X_T* dyp = PTR(X_T, dy);
  __global X_T* xp = PTR(X_T, x);
  __global S_T* mp = PTR(S_T, mean);
  __global S_T* rp = PTR(S_T, rstd);
  __local ACC red_w[MAX_WG];
  __local ACC red_b[MAX_WG];
  __local uint last_flag;
  const int lid = (int)get_local_id(0);
  const int lanes = (int)get_local_size(0) / COLS;
  const int cx = lid % COLS, ly = lid / COLS;
  const long j = (long)get_group_id(0) * COLS + cx;
  const long blk = get_group_id(1);
  const long r0 = blk * rows_per_block, r1 = min(M, r0 + rows_per_block);
  ACC sw = 0, sb = 0;
  if (j < N)
    for (long r = r0 + ly; r < r1; r += lanes) {
      ACC d = LOAD_X(dyp, r * N + j);
      ACC mu = rms ? (ACC)0 : LOAD_S(mp, r);
      sw += d * (LOAD_X(xp, r * N + j) - mu) * LOAD_S(rp, r);
      sb += d;
    }
  lane_tree_sums(red_w, red_b, sw, sb);
  if (ly == 0 && j < N) {
    PTR(ACC, dw_part)[blk * N + j] = red_w[lid];
    PTR(ACC, db_part)[blk * N + j] = red_b[lid];
  }
  if (counters == 0) return;
  if (!last_group_arrive(counters + get_group_id(0), (uint)get_num_groups(1), &last_flag)) return;
  wb_column_sums(PTR(ACC, dw_part), PTR(ACC, db_part), PTR(W_T, dw), PTR(W_T, db), N, get_num_groups(1), want_w,
                 want_b, red_w, red_b);
}

// Fallback second launch of layer_norm_bwd_wb (no arrival counters).
__kernel void layer_norm_bwd_wb_final(PTR_ARG(ACC, dw_part), PTR_ARG(ACC, db_part), PTR_ARG(W_T, dw),
                                      PTR_ARG(W_T, db), long N, long blocks, int want_w, int want_b) {
  __local ACC red_w[MAX_WG];
  __local ACC red_b[MAX_WG];
  wb_column_sums(PTR(ACC, dw_part), PTR(ACC, db_part), PTR(W_T, dw), PTR(W_T, db), N, blocks, want_w, want_b, red_w,
                 red_b);
}
#endif  // SERIAL_ROWS

// ---- GroupNorm (norm.cpp: native_group_norm_ocl and its backward) ----------------------------
// The input is contiguous NCHW viewed as N * G rows (n, g) of L = D * HW elements: the group's D
// channels of HW elements each, so element i of row (n, g) belongs to channel g * D + i / HW.
// A team of T consecutive work-items shares a row (as the LayerNorm kernels; T up to the whole
// group) and walks it with stride T, so a warp reads consecutive elements. Rows are re-read
// rather than held in registers: a row is usually at most a few hundred KiB and its second and
// third passes come from the caches. Indices within a row are GN_IDX (the host picks ulong only
// for rows of 2^32 elements or more), so an element's channel is one 32-bit division.
#ifndef GN_IDX
#define GN_IDX uint  // type of indices within a row (and of HW, D, G)
#endif

// y = (x - mean) * rstd * w[c] + b[c] per row (n, g); saves mean and rstd. Exact two-pass
// statistics (the mean, then the squared deviations from it), as the CPU's kernel.
__kernel void group_norm_fwd(PTR_ARG(X_T, x), PTR_ARG(W_T, w), PTR_ARG(W_T, b), PTR_ARG(X_T, y),
                             PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd), long rows, long HW_, long D_, long G_, ACC eps,
                             int T, int has_w, int has_b) {
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global W_T* bp = PTR(W_T, b);
  __global X_T* yp = PTR(X_T, y);
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const GN_IDX HW = (GN_IDX)HW_, D = (GN_IDX)D_, G = (GN_IDX)G_;
  const int lid = (int)get_local_id(0), t = lid % T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lid / T;
  const bool active = row < rows;
  const GN_IDX L = D * HW;
  const long base = active ? row * L : 0;
  const GN_IDX n_mine = active ? L : 0;  // inactive lanes still take part in the reductions

  ACC s = 0;
  for (GN_IDX i = t; i < n_mine; i += T) s += LOAD_X(xp, base + i);
  const ACC mu = team_reduce(part3(s, 0, 0), OP_SUM, 1, t, T, 1, red_a, ROW_XCHG).x / (ACC)L;
  ACC m2 = 0;
  for (GN_IDX i = t; i < n_mine; i += T) {
    const ACC d = LOAD_X(xp, base + i) - mu;
    m2 += d * d;
  }
  m2 = team_reduce(part3(m2, 0, 0), OP_SUM, 1, t, T, 1, red_b, ROW_XCHG).x;
  if (!active) return;
  const ACC r = (ACC)1 / sqrt(m2 / (ACC)L + eps);
  if (t == 0) {
    STORE_S(PTR(S_T, mean), row, mu);
    STORE_S(PTR(S_T, rstd), row, r);
  }
  const GN_IDX c0 = (GN_IDX)(row % G) * D;
  for (GN_IDX i = t; i < L; i += T) {
    const GN_IDX c = c0 + i / HW;
    const ACC scale = has_w ? r * LOAD_W(wp, c) : r;
    ACC v = (LOAD_X(xp, base + i) - mu) * scale;
    if (has_b) v += LOAD_W(bp, c);
    STORE_X(yp, base + i, v);
  }
}

// Backward, first launch: per row (n, c) of HW elements, ds = sum dy * x and db = sum dy, in ACC.
__kernel void group_norm_bwd_sums(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(ACC, ds), PTR_ARG(ACC, db), long rows,
                                  long HW_, int T) {
  __global X_T* dyp = PTR(X_T, dy);
  __global X_T* xp = PTR(X_T, x);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const GN_IDX HW = (GN_IDX)HW_;
  const int lid = (int)get_local_id(0), t = lid % T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lid / T;
  const bool active = row < rows;
  const long base = active ? row * HW : 0;
  ACC sdx = 0, sd = 0;
  for (GN_IDX i = t; i < (active ? HW : 0); i += T) {
    const ACC g = LOAD_X(dyp, base + i);
    sdx += g * LOAD_X(xp, base + i);
    sd += g;
  }
  const Part p = team_reduce(part3(sdx, sd, 0), OP_SUM, 2, t, T, 1, red, ROW_XCHG);
  if (active && t == 0) PTR(ACC, ds)[row] = p.x, PTR(ACC, db)[row] = p.y;
}

// Backward, second launch: grad_input per row (n, g). With g = dy * w and xhat = (x - mean) * rstd,
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)); over the row mean(g) = sum_c db[c] w[c] / L and
// mean(g * xhat) = rstd * (sum_c ds[c] w[c] - mean * sum_c db[c] w[c]) / L, so dx is
// rstd * w[c] * dy + q * (x - mean) + p with q and p per row (x centred: a one-element group
// gives exactly 0, as on the CPU).
__kernel void group_norm_bwd_dx(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd),
                                PTR_ARG(W_T, w), PTR_ARG(ACC, ds), PTR_ARG(ACC, db), PTR_ARG(X_T, dx),
                                long rows, long HW_, long D_, long G_, int T, int has_w) {
  __global X_T* dyp = PTR(X_T, dy);
  __global X_T* xp = PTR(X_T, x);
  __global W_T* wp = PTR(W_T, w);
  __global X_T* dxp = PTR(X_T, dx);
  __global const ACC* dsp = PTR(ACC, ds);
  __global const ACC* dbp = PTR(ACC, db);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const GN_IDX HW = (GN_IDX)HW_, D = (GN_IDX)D_, G = (GN_IDX)G_;
  const int lid = (int)get_local_id(0), t = lid % T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lid / T;
  const bool active = row < rows;
  const GN_IDX c0 = active ? (GN_IDX)(row % G) * D : 0;
  const long sums0 = active ? row * D : 0;  // row (n, g)'s channels in ds/db: n * C + g * D
  ACC sg = 0, bg = 0;
  for (GN_IDX j = t; j < (active ? D : 0); j += T) {
    const ACC wc = has_w ? LOAD_W(wp, c0 + j) : (ACC)1;
    sg += dsp[sums0 + j] * wc;
    bg += dbp[sums0 + j] * wc;
  }
  const Part p = team_reduce(part3(sg, bg, 0), OP_SUM, 2, t, T, 1, red, ROW_XCHG);
  if (!active) return;
  const GN_IDX L = D * HW;
  const long base = row * L;
  const ACC mu = LOAD_S(PTR(S_T, mean), row), r = LOAD_S(PTR(S_T, rstd), row);
  const ACC q = -r * r * r * (p.x - mu * p.y) / (ACC)L;
  const ACC off = -r * p.y / (ACC)L;
  for (GN_IDX i = t; i < L; i += T) {
    const ACC a = has_w ? r * LOAD_W(wp, c0 + i / HW) : r;
    STORE_X(dxp, base + i, a * LOAD_X(dyp, base + i) + q * (LOAD_X(xp, base + i) - mu) + off);
  }
}

// Backward, last launch: per channel c (one work-item), over the batch,
// grad_weight = sum_n (ds[n, c] - mean[n, g] * db[n, c]) * rstd[n, g] and grad_bias = sum_n db[n, c].
__kernel void group_norm_bwd_wb(PTR_ARG(ACC, ds_), PTR_ARG(ACC, db_), PTR_ARG(S_T, mean),
                                PTR_ARG(S_T, rstd), PTR_ARG(W_T, dw), PTR_ARG(W_T, dbias), long N, long C_, long D_,
                                int want_w, int want_b) {
  const GN_IDX C = (GN_IDX)C_, D = (GN_IDX)D_, c = (GN_IDX)get_global_id(0);
  if (c >= C) return;
  __global const ACC* ds = PTR(ACC, ds_);
  __global const ACC* db = PTR(ACC, db_);
  ACC sw = 0, sb = 0;
  for (long n = 0; n < N; ++n) {
    const long i = n * C + c, s = n * (C / D) + c / D;
    sw += (ds[i] - LOAD_S(PTR(S_T, mean), s) * db[i]) * LOAD_S(PTR(S_T, rstd), s);
    sb += db[i];
  }
  if (want_w) STORE_W(PTR(W_T, dw), c, sw);
  if (want_b) STORE_W(PTR(W_T, dbias), c, sb);
}

// ---- GroupNorm over channels-innermost data (channels_last, channels_last_3d) ----------------
// Element (n, hw, c) at (n * HW + hw) * C + c: N * HW rows of C channels, group g = c / D. The
// element passes run on work-groups of LX consecutive channels (so a row's channels are read
// coalesced) by LY lanes of rows. Per (n, g) statistics come from per-(n, slice, channel)
// partials, merged by a team per row (n, g) as in the kernels above (row = n * G + g, the
// index of the saved mean and rstd); per (n, c) coefficients then drive a pass over the elements.
// Forward: group_norm_cl_part, group_norm_cl_stats, group_norm_cl_affine. Backward:
// group_norm_cl_bwd_part, group_norm_cl_bwd_coef, group_norm_cl_bwd_dx, then group_norm_bwd_wb
// on the (n, c) sums that group_norm_cl_bwd_coef writes. Every barrier is reached
// unconditionally: PoCL's optimized builds mis-compile barriers inside branches, even of
// uniform conditions.

// The element block of (1-D) work-group (n * CB + cb) * S + s, CB = ceil(C / LX): sample n,
// channel c = cb * LX + local id % LX, positions [HW * s / S, HW * (s + 1) / S) in lanes of LY.
typedef struct {
  long n, r0, r1;
  int c, s, ly, LY;
} GnBlock;

inline GnBlock gn_block(long HW, int C, int S, int LX) {
  GnBlock k;
  const long wg = (long)get_group_id(0), CB = (C + LX - 1) / LX;
  k.s = (int)(wg % S);
  k.n = wg / S / CB;
  k.c = (int)(wg / S % CB) * LX + (int)get_local_id(0) % LX;
  k.LY = (int)get_local_size(0) / LX;
  k.ly = (int)get_local_id(0) / LX;
  k.r0 = HW * k.s / S;
  k.r1 = HW * (k.s + 1) / S;
  return k;
}

// Forward, first launch: per (n, s, c) the mean and the sum of squared deviations from it over
// the block's positions (exact two-pass), part[2 * ((n * S + s) * C + c) + 0, 1].
__kernel void group_norm_cl_part(PTR_ARG(X_T, x), PTR_ARG(ACC, part), long HW, int C, int S, int LX) {
  __global const X_T* xp = PTR(X_T, x);
  __local Part red[MAX_WG];
  const GnBlock k = gn_block(HW, C, S, LX);
  const bool in = k.c < C;
  const long base = k.n * HW;
  ACC a = 0;
  for (long r = k.r0 + k.ly; in && r < k.r1; r += k.LY) a += LOAD_X(xp, (base + r) * C + k.c);
  const ACC count = (ACC)(k.r1 - k.r0), total = lanes_sum(a, 0, red, LX, k.LY).x;
  const ACC mu = count > 0 ? total / count : (ACC)0;
  ACC m2 = 0;
  for (long r = k.r0 + k.ly; in && r < k.r1; r += k.LY) {
    const ACC d = LOAD_X(xp, (base + r) * C + k.c) - mu;
    m2 += d * d;
  }
  m2 = lanes_sum(m2, 0, red, LX, k.LY).x;
  if (k.ly == 0 && in) {
    __global ACC* o = PTR(ACC, part) + 2 * ((k.n * S + k.s) * C + k.c);
    o[0] = mu, o[1] = m2;
  }
}

// Forward, second launch: per row (n, g), a team of T merges the group's D * S partials (Chan's
// formula; slice s holds HW * (s + 1) / S - HW * s / S positions), saves mean and rstd, and
// writes y's coefficients of the group's channels, coef = [scale | mean | b] (each N * C, scale
// rstd * w[c]): y = (x - mean) * scale + b, x centred as in group_norm_fwd (x * scale + shift
// loses digits when the mean is far from 0).
__kernel void group_norm_cl_stats(PTR_ARG(ACC, part), PTR_ARG(W_T, w), PTR_ARG(W_T, b), PTR_ARG(S_T, mean),
                                  PTR_ARG(S_T, rstd), PTR_ARG(ACC, coef), long rows, long HW, int C, int D, int S,
                                  ACC eps, int T, int has_w, int has_b) {
  __global const ACC* pp = PTR(ACC, part);
  __global W_T* wp = PTR(W_T, w);
  __global W_T* bp = PTR(W_T, b);
  __global ACC* kp = PTR(ACC, coef);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const int lid = (int)get_local_id(0), t = lid % T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lid / T;
  const bool active = row < rows;
  const int G = C / D;
  const long n = active ? row / G : 0;
  const int c0 = active ? (int)(row % G) * D : 0;
  Part st = part3(0, 0, 0);
  for (long e = t; e < (active ? (long)D * S : 0); e += T) {
    const int s = (int)(e / D), c = c0 + (int)(e % D);
    __global const ACC* q = pp + 2 * ((n * S + s) * C + c);
    st = combine(st, part3((ACC)(HW * (s + 1) / S - HW * s / S), q[0], q[1]), OP_WELFORD, 3);
  }
  st = team_reduce(st, OP_WELFORD, 3, t, T, 1, red, ROW_XCHG);
  if (!active) return;
  const ACC mu = st.y, r = (ACC)1 / sqrt(st.z / st.x + eps);
  if (t == 0) {
    STORE_S(PTR(S_T, mean), row, mu);
    STORE_S(PTR(S_T, rstd), row, r);
  }
  const long NC = rows * D;
  for (int j = t; j < D; j += T) {
    const int c = c0 + j;
    const ACC scale = has_w ? r * LOAD_W(wp, c) : r;
    kp[n * C + c] = scale;
    kp[NC + n * C + c] = mu;
    kp[2 * NC + n * C + c] = has_b ? LOAD_W(bp, c) : (ACC)0;
  }
}

// The element passes run 3-D: (channel, lanes of positions, sample), work-item (c, lane, n)
// walking sample n's positions with the grid's stride; coef holds per-(n, c) values, N * C each.

// Forward, last launch: y = (x - mean) * scale + b per (n, c).
__kernel void group_norm_cl_affine(PTR_ARG(X_T, x), PTR_ARG(ACC, coef), PTR_ARG(X_T, y), long HW, int C) {
  const int c = (int)get_global_id(0);
  if (c >= C) return;
  __global const X_T* xp = PTR(X_T, x);
  __global X_T* yp = PTR(X_T, y);
  __global const ACC* kp = PTR(ACC, coef);
  const long n = (long)get_global_id(2), NC = (long)get_global_size(2) * C, nc = n * C + c;
  const ACC scale = kp[nc], mu = kp[NC + nc], shift = kp[2 * NC + nc];
  for (long r = get_global_id(1); r < HW; r += get_global_size(1)) {
    const long i = (n * HW + r) * C + c;
    STORE_X(yp, i, (LOAD_X(xp, i) - mu) * scale + shift);
  }
}

// Backward, first launch: per (n, s, c) the sums of dy * x and dy over the block's positions,
// part[2 * ((n * S + s) * C + c) + 0, 1].
__kernel void group_norm_cl_bwd_part(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(ACC, part), long HW, int C, int S,
                                     int LX) {
  __global const X_T* gp = PTR(X_T, dy);
  __global const X_T* xp = PTR(X_T, x);
  __local Part red[MAX_WG];
  const GnBlock k = gn_block(HW, C, S, LX);
  const bool in = k.c < C;
  const long base = k.n * HW;
  ACC sdx = 0, sd = 0;
  for (long r = k.r0 + k.ly; in && r < k.r1; r += k.LY) {
    const long i = (base + r) * C + k.c;
    const ACC g = LOAD_X(gp, i);
    sdx += g * LOAD_X(xp, i);
    sd += g;
  }
  const Part p = lanes_sum(sdx, sd, red, LX, k.LY);
  if (k.ly == 0 && in) {
    __global ACC* o = PTR(ACC, part) + 2 * ((k.n * S + k.s) * C + k.c);
    o[0] = p.x, o[1] = p.y;
  }
}

// Backward, second launch: per row (n, g), a team sums the partials of each of the group's
// channels into ds[n * C + c] = sum dy * x and db[n * C + c] = sum dy (group_norm_bwd_wb's
// input), then writes grad_input's coefficients (group_norm_bwd_dx's formula): dx = a * dy +
// q * (x - mean) + off, coef = [a | q | mean | off], each N * C.
__kernel void group_norm_cl_bwd_coef(PTR_ARG(ACC, part), PTR_ARG(S_T, mean), PTR_ARG(S_T, rstd), PTR_ARG(W_T, w),
                                     PTR_ARG(ACC, ds), PTR_ARG(ACC, db), PTR_ARG(ACC, coef), long rows, long HW,
                                     int C, int D, int S, int T, int has_w) {
  __global const ACC* pp = PTR(ACC, part);
  __global W_T* wp = PTR(W_T, w);
  __global ACC* dsp = PTR(ACC, ds);
  __global ACC* dbp = PTR(ACC, db);
  __global ACC* kp = PTR(ACC, coef);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const int lid = (int)get_local_id(0), t = lid % T;
  const long row = (long)get_group_id(0) * ((int)get_local_size(0) / T) + lid / T;
  const bool active = row < rows;
  const int G = C / D;
  const long n = active ? row / G : 0;
  const int c0 = active ? (int)(row % G) * D : 0;
  ACC sg = 0, bg = 0;
  for (int j = t; j < (active ? D : 0); j += T) {
    const int c = c0 + j;
    ACC a = 0, b = 0;
    for (int s = 0; s < S; ++s) {
      __global const ACC* q = pp + 2 * ((n * S + s) * C + c);
      a += q[0], b += q[1];
    }
    dsp[n * C + c] = a, dbp[n * C + c] = b;
    const ACC wc = has_w ? LOAD_W(wp, c) : (ACC)1;
    sg += a * wc;
    bg += b * wc;
  }
  const Part p = team_reduce(part3(sg, bg, 0), OP_SUM, 2, t, T, 1, red, ROW_XCHG);
  if (!active) return;
  const ACC L = (ACC)D * (ACC)HW;
  const ACC mu = LOAD_S(PTR(S_T, mean), row), r = LOAD_S(PTR(S_T, rstd), row);
  const ACC q = -r * r * r * (p.x - mu * p.y) / L;
  const ACC off = -r * p.y / L;
  const long NC = rows * D;
  for (int j = t; j < D; j += T) {
    const long nc = n * C + c0 + j;
    kp[nc] = has_w ? r * LOAD_W(wp, c0 + j) : r;
    kp[NC + nc] = q;
    kp[2 * NC + nc] = mu;
    kp[3 * NC + nc] = off;
  }
}

// Backward, third launch: dx = a * dy + q * (x - mean) + off per (n, c).
__kernel void group_norm_cl_bwd_dx(PTR_ARG(X_T, dy), PTR_ARG(X_T, x), PTR_ARG(ACC, coef), PTR_ARG(X_T, dx), long HW,
                                   int C) {
  const int c = (int)get_global_id(0);
  if (c >= C) return;
  __global const X_T* gp = PTR(X_T, dy);
  __global const X_T* xp = PTR(X_T, x);
  __global X_T* op = PTR(X_T, dx);
  __global const ACC* kp = PTR(ACC, coef);
  const long n = (long)get_global_id(2), NC = (long)get_global_size(2) * C, nc = n * C + c;
  const ACC a = kp[nc], q = kp[NC + nc], mu = kp[2 * NC + nc], off = kp[3 * NC + nc];
  for (long r = get_global_id(1); r < HW; r += get_global_size(1)) {
    const long i = (n * HW + r) * C + c;
    STORE_X(op, i, a * LOAD_X(gp, i) + q * (LOAD_X(xp, i) - mu) + off);
  }
}
