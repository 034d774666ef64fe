// Fused cross-entropy with class-index targets (csrc/ops/cross_entropy.cpp). The input is
// addressed as rows of C class scores: row r = n * S + s (S = product of the spatial dims) has
// element c at r_base + c * s_c, r_base = n * s_n + s * s_s, so (N, C), (C,) and (N, C, d1, ...)
// inputs of any collapsible strides are read in place.
// A team of T work-items serves a row; each member keeps up to ITEMS of the row's elements in
// registers, issuing all of its loads before using any (rows of up to T * ITEMS elements).
// Forward: a row held in registers takes its max, then one sum of exp(x - max) (no rescaling);
// a longer row is streamed once with an online (max, sum) update (on GPUs the forward's team is
// only as wide as filling the device takes, so long rows mostly stream through one warp:
// cross_entropy.cpp, forward_team). Either gives logsumexp, the
// loss of the row, and with reduction sum/mean a per-work-group partial; the last work-group to
// finish adds the partials in a fixed order (deterministic, one launch).
// Backward: one pass over each row (registers first, then any streamed tail) writes
// d loss / d x from the saved logsumexp, with no zero fill and no logits-sized intermediate.
// A row's team combines its partial states with warp shuffles (ROW_REDUCE 1-3, teams of
// consecutive work-items) or a local-memory tree (subgroup.clh: team_reduce).
// An out-of-range target sets the device's sticky error flag and counts as ignored.
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind of input, weight, loss and grads: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef TGT_T
#define TGT_T long  // class-index type of the target (long or uchar)
#endif
#ifndef ITEMS
#define ITEMS 32  // row elements each work-item keeps in registers (a multiple of VEC)
#endif
#ifndef CE_STREAM
#define CE_STREAM 0  // forward: 1 streams every row (the host's choice for rows longer than T * ITEMS)
#endif
#ifndef STREAM_VECS
#define STREAM_VECS 4  // forward: 4-element vectors each work-item has in flight per step of a streamed row
#endif
#ifndef SERIAL_ROWS
#define SERIAL_ROWS 0  // 1: the serial kernels of CPU devices (ce_fwd_serial, ce_bwd_serial) instead of the team kernels
#endif
#ifndef FIN_BATCH
#define FIN_BATCH 8  // partials each work-item of a reduction's last work-group requests at once
#endif
#include "rows.clh"  // VEC, ACC, ROW_REDUCE, row teams, register loads
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)
#define LOAD4_X(p, i) CAT(LD4_, X_KIND)(p, i)
#define STORE4_X(p, i, v) CAT(SV4_, X_KIND)(p, i, v)

// flags (one int argument; every branch on them is uniform across the launch)
#define F_HAS_W 1       // class weights given
#define F_SMOOTH 2      // label_smoothing > 0
#define F_SAVE_LSE 4    // forward: store each row's logsumexp in aux[row] (for backward)
#define F_REDUCE 8      // forward: reduction sum or mean (else one loss per row)
#define F_MEAN 16       // reduction mean
#define F_PER_SAMPLE 32 // backward: grad_output holds one value per row (else one scalar)
#define F_COUNTERS 64   // forward: the last work-group finishes (else ce_finish does)

DEFINE_LOAD_REGS(load_regs, X_T, LOAD_X, LOAD4_X)

// exp(d) of d <= 0 (a class score minus a running maximum) as exp2(d * log2(e)): on NVIDIA a
// multiply and the hardware exp2 instead of exp's longer range reduction (the register-held
// [8192, 8192] forward: 60% -> 70% of copy, H200). The product's rounding changes the
// exponent by at most |d| * 2^-24 (relative error of e^d at most |d| * 2^-24), so a term's
// share of the sum's error, e^d * |d| * 2^-24 <= 2^-24 / e, stays below one rounding.
#if ACC_IS_DOUBLE
#define EXP_NEG(d) exp2((d) * M_LOG2E)
#else
#define EXP_NEG(d) exp2((d) * M_LOG2E_F)
#endif

// Folds values into a running (max m, sum s of exp(x - m)); -inf values add nothing, a NaN
// or +inf makes s NaN (as log_softmax does). Several values share one rescale.
inline void lse_rescale(ACC* m, ACC* s, ACC vmax) {
  if (!(vmax <= *m)) {  // a new maximum, or NaN
    *s *= EXP_NEG(*m - vmax);
    *m = vmax;
  }
}
inline void lse_add1(ACC* m, ACC* s, ACC a) {
  lse_rescale(m, s, a);
  if (*m != -INFINITY) *s += EXP_NEG(a - *m);
}
inline void lse_add4(ACC* m, ACC* s, ACC a, ACC b, ACC c, ACC d) {
  lse_rescale(m, s, max_nan(max_nan(a, b), max_nan(c, d)));
  if (*m != -INFINITY) *s += (EXP_NEG(a - *m) + EXP_NEG(b - *m)) + (EXP_NEG(c - *m) + EXP_NEG(d - *m));
}
// Label smoothing's running sums: sx += w . v, sw += sum of w.
inline void smooth_add4(ACC* sx, ACC* sw, ACC4 v, ACC4 w) {
  *sx += (w.x * v.x + w.y * v.y) + (w.z * v.z + w.w * v.w);
  *sw += (w.x + w.y) + (w.z + w.w);
}
// Class weights c .. c + 3 (the weight vector's alignment is not checked: scalar loads).
inline ACC4 load_w4(__global const X_T* wp, long c) {
  return (ACC4)(LOAD_X(wp, c), LOAD_X(wp, c + 1), LOAD_X(wp, c + 2), LOAD_X(wp, c + 3));
}

// The class of a target value, or -1 when it is ignored; an out-of-range class reports the
// error (forward only, err != 0) and is treated as ignored.
inline long ce_class(TGT_T raw, long C, long ignore_index, __global int* err) {
  const long t = (long)raw;
  if (t == ignore_index) return -1;
  if (t < 0 || t >= C) {
    if (err) report_error(err, ERR_INDEX_OUT_OF_RANGE);
    return -1;
  }
  return t;
}

// The target class of a row (-1: ignored), its logit *xt and its weight *wt, for the team's
// first member (first) after it loaded the raw target value: these dependent loads are issued
// right after the row's own loads, so that they overlap them rather than follow the reductions.
inline long target_loads(bool first, TGT_T raw, long C, long ignore_index, __global int* err,
                         __global const X_T* xp, long xb, long xs_c, __global const X_T* wp, bool has_w, ACC* xt,
                         ACC* wt) {
  const long t = first ? ce_class(raw, C, ignore_index, err) : -1;
  *xt = t >= 0 ? LOAD_X(xp, xb + t * xs_c) : (ACC)0;
  *wt = t < 0 ? (ACC)0 : has_w ? LOAD_X(wp, t) : (ACC)1;
  return t;
}

// Adds the partials ws[2k] (loss) and ws[2k + 1] (weight) of k < nparts in a fixed order and
// stores the reduced loss (sum, or sum / total weight for mean) and aux[rows] = total weight.
// Partials written by other work-groups of the same launch are read through volatile loads
// (see last_group_arrive in common.clh).
inline void ce_finish_parts(__global const ACC* ws, long nparts, __global X_T* out, __global ACC* aux, long rows,
                            int flags, __local ACC* ra, __local ACC* rb) {
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  volatile __global const ACC* w = (volatile __global const ACC*)ws;
  // Work-item lid adds partials lid, lid + L, ... in that order, FIN_BATCH of them requested
  // at a time (volatile loads stay in program order: loaded one by one between the additions,
  // each would wait for the previous one).
  ACC a = 0, b = 0;
  for (long k0 = lid; k0 < nparts; k0 += (long)FIN_BATCH * L) {
    ACC pa[FIN_BATCH], pb[FIN_BATCH];
#pragma unroll
    for (int j = 0; j < FIN_BATCH; ++j) {
      const long k = k0 + (long)j * L;
      pa[j] = k < nparts ? w[2 * k] : (ACC)0;  // + 0 leaves a sum's bits unchanged
      pb[j] = k < nparts ? w[2 * k + 1] : (ACC)0;
    }
#pragma unroll
    for (int j = 0; j < FIN_BATCH; ++j) a += pa[j], b += pb[j];
  }
  ra[lid] = a;
  rb[lid] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) {
      ra[lid] += ra[lid + h];
      rb[lid] += rb[lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    STORE_X(out, 0, (flags & F_MEAN) ? ra[0] / rb[0] : ra[0]);
    if (flags & F_SAVE_LSE) aux[rows] = rb[0];
  }
}

#if SERIAL_ROWS
// CPU devices (rows::Config::serial, as norm.cl): one work-item walks a block of whole rows
// with no team and no barrier, eight classes at a time where they are unit-stride (exp8f:
// PoCL's own vector exp goes element by element). Forward: the row's max, then the sum of
// exp(x - max) (with label smoothing's sums), so a row holding NaN or +inf, or only -inf,
// gives NaN as log_softmax does. Reductions: each work-item adds its rows' losses and weights
// in order into ws[2 item], [2 item + 1] for ce_finish (one work-item: the result itself).
#define LOAD8_X(p, i) CAT(LD8_, X_KIND)(p, i)
#define STORE8_X(p, i, v) CAT(SV8_, X_KIND)(p, i, v)
#if ACC_IS_DOUBLE
#define EXP8(v) exp(v)
#else
#define EXP8(v) exp8f(v)
#endif
inline ACC max8_nan(ACC8 v) {
  return max_nan(max_nan(max_nan(v.s0, v.s1), max_nan(v.s2, v.s3)), max_nan(max_nan(v.s4, v.s5), max_nan(v.s6, v.s7)));
}

// Arguments as ce_fwd, rows_per_item in place of the team's geometry.
__kernel void ce_fwd_serial(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, out),
                            PTR_ARG(ACC, aux), PTR_ARG(ACC, ws), long rows, long S, long C, long xs_n, long xs_s,
                            long xs_c, long ignore_index, ACC eps, long rows_per_item, int flags,
                            __global int* err) {
  const bool has_w = (flags & F_HAS_W) != 0, smooth = (flags & F_SMOOTH) != 0;
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* wp = PTR(X_T, w);
  const long item = get_global_id(0);
  SERIAL_ROWS_OF(item, rows_per_item, rows, r0, r1);
  const long C8 = xs_c == 1 ? (C & ~7L) : 0;  // classes read as vectors
  ACC loss_sum = 0, weight_sum = 0;
  for (long row = r0; row < r1; ++row) {
    const long xb = row_base(row, S, xs_n, xs_s);
    ACC xt, wt;
    const long t = target_loads(true, PTR(TGT_T, target)[row], C, ignore_index, err, xp, xb, xs_c, wp, has_w, &xt,
                                &wt);
    ACC8 m8 = -INFINITY;
    for (long c = 0; c < C8; c += 8) {
      const ACC8 v = LOAD8_X(xp, xb + c);
      m8 = select(v, m8, (m8 >= v) | isnan(m8));  // max_nan lane by lane
    }
    ACC m = max8_nan(m8);
    for (long c = C8; c < C; ++c) m = max_nan(m, LOAD_X(xp, xb + c * xs_c));
    ACC8 s8 = 0, sx8 = 0, sw8 = 0;
    for (long c = 0; c < C8; c += 8) {
      const ACC8 v = LOAD8_X(xp, xb + c);
      s8 += EXP8(v - m);
      if (smooth) {
        const ACC8 wc = has_w ? LOAD8_X(wp, c) : (ACC8)1;
        sx8 += wc * v;
        sw8 += wc;
      }
    }
    ACC s = sum8(s8), sx = sum8(sx8), sw = sum8(sw8);
    for (long c = C8; c < C; ++c) {
      const ACC v = LOAD_X(xp, xb + c * xs_c);
      s += exp(v - m);
      if (smooth) {
        const ACC wc = has_w ? LOAD_X(wp, c) : (ACC)1;
        sx += wc * v;
        sw += wc;
      }
    }
    const ACC lse = m + log(s);
    if (flags & F_SAVE_LSE) PTR(ACC, aux)[row] = lse;
    ACC loss = 0;
    if (t >= 0) {
      loss = wt * (lse - xt);
      if (smooth) loss = ((ACC)1 - eps) * loss + eps / (ACC)C * (lse * (has_w ? sw : (ACC)C) - sx);
    }
    if (smooth && has_w && row == 0 && (flags & F_SAVE_LSE)) PTR(ACC, aux)[rows + 1] = sw;
    if (!(flags & F_REDUCE)) STORE_X(PTR(X_T, out), row, loss);
    loss_sum += loss;
    weight_sum += wt;
  }
  if (!(flags & F_REDUCE)) return;
  if (get_global_size(0) == 1) {
    STORE_X(PTR(X_T, out), 0, (flags & F_MEAN) ? loss_sum / weight_sum : loss_sum);
    if (flags & F_SAVE_LSE) PTR(ACC, aux)[rows] = weight_sum;
    return;
  }
  PTR(ACC, ws)[2 * item] = loss_sum;
  PTR(ACC, ws)[2 * item + 1] = weight_sum;
}

// d loss / d x_c (ce_bwd's formula) of the class score at xp[at].
inline ACC ce_grad1(__global const X_T* xp, long at, __global const X_T* wp, long c, long t, ACC cp, ACC a, ACC b,
                    ACC lse, bool smooth, bool has_w) {
  ACC r = cp * exp(LOAD_X(xp, at) - lse);
  if (c == t) r -= a;
  if (smooth) r -= has_w ? b * LOAD_X(wp, c) : b;
  return r;
}

// Arguments as ce_bwd, rows_per_item in place of the team's geometry; the formula of ce_bwd.
// Vectors (when both x and gx are unit-stride along the classes) leave out the target's -a,
// so its element is written again by the scalar formula.
__kernel void ce_bwd_serial(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, go),
                            PTR_ARG(ACC, aux), PTR_ARG(X_T, gx), long rows, long S, long C, long xs_n, long xs_s,
                            long xs_c, long gs_n, long gs_s, long gs_c, long ignore_index, ACC eps,
                            long rows_per_item, int flags) {
  const bool has_w = (flags & F_HAS_W) != 0, smooth = (flags & F_SMOOTH) != 0;
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* wp = PTR(X_T, w);
  __global X_T* gp = PTR(X_T, gx);
  SERIAL_ROWS_OF(get_global_id(0), rows_per_item, rows, r0, r1);
  const long C8 = xs_c == 1 && gs_c == 1 ? (C & ~7L) : 0;
  for (long row = r0; row < r1; ++row) {
    const long xb = row_base(row, S, xs_n, xs_s), gb = row_base(row, S, gs_n, gs_s);
    const long t = ce_class(PTR(TGT_T, target)[row], C, ignore_index, 0);
    if (t < 0) {  // ignored rows get exact zeros (not 0 * exp(x - lse), which is NaN for x = +inf)
      for (long c = 0; c < C8; c += 8) STORE8_X(gp, gb + c, (ACC8)0);
      for (long c = C8; c < C; ++c) STORE_X(gp, gb + c * gs_c, (ACC)0);
      continue;
    }
    ACC g = LOAD_X(PTR(X_T, go), (flags & F_PER_SAMPLE) ? row : 0);
    if (flags & F_MEAN) g /= PTR(ACC, aux)[rows];
    const ACC a = g * ((ACC)1 - eps) * (has_w ? LOAD_X(wp, t) : (ACC)1);
    const ACC b = smooth ? g * eps / (ACC)C : (ACC)0;
    const ACC cp = smooth ? a + b * (has_w ? PTR(ACC, aux)[rows + 1] : (ACC)C) : a;
    const ACC lse = PTR(ACC, aux)[row];
    for (long c = 0; c < C8; c += 8) {
      ACC8 r = cp * EXP8(LOAD8_X(xp, xb + c) - lse);
      if (smooth) r -= has_w ? b * LOAD8_X(wp, c) : (ACC8)b;
      STORE8_X(gp, gb + c, r);
    }
    if (t < C8) STORE_X(gp, gb + t, ce_grad1(xp, xb + t, wp, t, t, cp, a, b, lse, smooth, has_w));
    for (long c = C8; c < C; ++c)
      STORE_X(gp, gb + c * gs_c, ce_grad1(xp, xb + c * xs_c, wp, c, t, cp, a, b, lse, smooth, has_w));
  }
}
#else  // the team kernels

// Forward. aux (ACC): [0, rows) logsumexp per row, [rows] total weight of the non-ignored rows
// (reductions), [rows + 1] sum of the class weights (label smoothing with weights). With
// reduction none, out[row] is the row's loss; else out[0] is the reduced loss and ws holds
// one (loss, weight) pair per work-group.
__kernel void ce_fwd(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, out), PTR_ARG(ACC, aux),
                     PTR_ARG(ACC, ws), __global uint* counters, long rows, long S, long C, long xs_n, long xs_s,
                     long xs_c, long ignore_index, ACC eps, int T, int c_fast, int flags, __global int* err) {
  ROW_XCHG_DECL;
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  __local ACC red_l[MAX_WG];
  __local ACC red_w[MAX_WG];
  __local uint last_flag;
  const Team tm = team_of(rows, T, c_fast);
  const bool has_w = (flags & F_HAS_W) != 0, smooth = (flags & F_SMOOTH) != 0;
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* wp = PTR(X_T, w);
  const long xb = tm.active ? row_base(tm.row, S, xs_n, xs_s) : 0;
  const bool first = tm.active && tm.t == 0;  // the member that finishes the row
  const TGT_T traw = first ? PTR(TGT_T, target)[tm.row] : (TGT_T)0;
  long tcls;
  ACC xt, wt;

  // The row's (max, sum of exp(x - max)) and, for label smoothing, sum of w_c * x_c and of
  // w_c, combined over the team in a fixed order (every member gets the same bits).
  Part ms, xw = part3((ACC)0, (ACC)0, (ACC)0);
  if (!CE_STREAM && C <= (long)T * ITEMS) {  // the same for every work-item: the row fits the registers
    ACC v[ITEMS];
    load_regs(v, xp, xb, xs_c, C, tm.t, T, tm.active, -INFINITY);
    tcls = target_loads(first, traw, C, ignore_index, err, xp, xb, xs_c, wp, has_w, &xt, &wt);
    ACC m = -INFINITY, s = 0, sx = 0, sw = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) m = max_nan(m, v[k]);
    m = team_reduce(part3(m, (ACC)0, (ACC)0), OP_MAX, 1, tm.t, T, tm.stride, red_a, ROW_XCHG).x;
    // exp(-inf - m) = 0 for padding; a row of -inf only gives NaN (lse - x_t is NaN either way)
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s += EXP_NEG(v[k] - m);
    if (smooth) {
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) {
        const long c = COL(tm.t, T, k);
        if (tm.active && c < C) {
          const ACC wc = has_w ? LOAD_X(wp, c) : (ACC)1;
          sx += wc * v[k];
          sw += wc;
        }
      }
    }
    const Part p = team_reduce(part3(s, sx, sw), OP_SUM, smooth ? 3 : 1, tm.t, T, tm.stride, red_b, ROW_XCHG);
    ms = part3(m, p.x, (ACC)0);
    xw = part3(p.y, p.z, (ACC)0);
  } else {
    // A longer row: one streamed pass with an online (max, sum) update.
    tcls = target_loads(first, traw, C, ignore_index, err, xp, xb, xs_c, wp, has_w, &xt, &wt);
    ACC m = -INFINITY, s = 0, sx = 0, sw = 0;
    if (tm.active) {
#if VEC == 4
      // STREAM_VECS vector loads in flight per step, and one rescale for all of them.
      const long nv = C >> 2;
      long j = tm.t;
      for (; j + (STREAM_VECS - 1) * (long)T < nv; j += (long)STREAM_VECS * T) {
        ACC4 a[STREAM_VECS];
#pragma unroll
        for (int u = 0; u < STREAM_VECS; ++u) a[u] = LOAD4_X(xp, xb + 4 * (j + (long)u * T));
        ACC mx = -INFINITY;
#pragma unroll
        for (int u = 0; u < STREAM_VECS; ++u) mx = max_nan(mx, max_nan(max_nan(a[u].x, a[u].y), max_nan(a[u].z, a[u].w)));
        lse_rescale(&m, &s, mx);
        if (m != -INFINITY) {
#pragma unroll
          for (int u = 0; u < STREAM_VECS; ++u) {
            const ACC4 e = EXP_NEG(a[u] - m);
            s += (e.x + e.y) + (e.z + e.w);
          }
        }
        if (smooth) {
#pragma unroll
          for (int u = 0; u < STREAM_VECS; ++u)
            smooth_add4(&sx, &sw, a[u], has_w ? load_w4(wp, 4 * (j + (long)u * T)) : (ACC4)(1));
        }
      }
      for (; j < nv; j += T) {  // the rest, a vector at a time
        const ACC4 v0 = LOAD4_X(xp, xb + 4 * j);
        lse_add4(&m, &s, v0.x, v0.y, v0.z, v0.w);
        if (smooth) smooth_add4(&sx, &sw, v0, has_w ? load_w4(wp, 4 * j) : (ACC4)(1));
      }
#else
      long c = tm.t;
      for (; c + 3L * T < C; c += 4L * T) {  // four independent loads in flight per step
        const ACC a0 = LOAD_X(xp, xb + c * xs_c), a1 = LOAD_X(xp, xb + (c + T) * xs_c);
        const ACC a2 = LOAD_X(xp, xb + (c + 2L * T) * xs_c), a3 = LOAD_X(xp, xb + (c + 3L * T) * xs_c);
        lse_add4(&m, &s, a0, a1, a2, a3);
        if (smooth) {
          const ACC w0 = has_w ? LOAD_X(wp, c) : (ACC)1, w1 = has_w ? LOAD_X(wp, c + T) : (ACC)1;
          const ACC w2 = has_w ? LOAD_X(wp, c + 2L * T) : (ACC)1, w3 = has_w ? LOAD_X(wp, c + 3L * T) : (ACC)1;
          sx += (w0 * a0 + w1 * a1) + (w2 * a2 + w3 * a3);
          sw += (w0 + w1) + (w2 + w3);
        }
      }
      for (; c < C; c += T) {
        const ACC a0 = LOAD_X(xp, xb + c * xs_c);
        lse_add1(&m, &s, a0);
        if (smooth) {
          const ACC w0 = has_w ? LOAD_X(wp, c) : (ACC)1;
          sx += w0 * a0;
          sw += w0;
        }
      }
#endif
    }
    ms = team_reduce(part3(m, s, (ACC)0), OP_SOFTMAX, 2, tm.t, T, tm.stride, red_a, ROW_XCHG);
    if (smooth) xw = team_reduce(part3(sx, sw, (ACC)0), OP_SUM, 2, tm.t, T, tm.stride, red_b, ROW_XCHG);
  }

  // The team's first member finishes the row.
  ACC loss = 0;
  if (first) {
    const ACC lse = ms.x + log(ms.y);
    if (flags & F_SAVE_LSE) PTR(ACC, aux)[tm.row] = lse;
    if (tcls >= 0) {
      loss = wt * (lse - xt);
      if (smooth) {
        // -sum_c w_c * log_softmax_c = lse * sum_c w_c - sum_c w_c * x_c
        const ACC wsum = has_w ? xw.y : (ACC)C;
        loss = ((ACC)1 - eps) * loss + eps / (ACC)C * (lse * wsum - xw.x);
      }
    }
    if (smooth && has_w && tm.row == 0 && (flags & F_SAVE_LSE)) PTR(ACC, aux)[rows + 1] = xw.y;
    if (!(flags & F_REDUCE)) STORE_X(PTR(X_T, out), tm.row, loss);
  }
  if (!(flags & F_REDUCE)) return;

  // Reduction: the group's rows in a fixed order, then across groups.
  const int lid = (int)get_local_id(0);
  if (tm.t == 0) {
    red_l[tm.lane] = loss;
    red_w[tm.lane] = wt;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = tm.lanes >> 1; h > 0; h >>= 1) {
    if (lid < h) {
      red_l[lid] += red_l[lid + h];
      red_w[lid] += red_w[lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long ngroups = (long)get_num_groups(0);
  if (ngroups == 1) {
    // The sole partial is the total: the same bits ce_finish_parts would produce.
    if (lid == 0) {
      STORE_X(PTR(X_T, out), 0, (flags & F_MEAN) ? red_l[0] / red_w[0] : red_l[0]);
      if (flags & F_SAVE_LSE) PTR(ACC, aux)[rows] = red_w[0];
    }
    return;
  }
  if (lid == 0) {
    const long g = (long)get_group_id(0);
    PTR(ACC, ws)[2 * g] = red_l[0];
    PTR(ACC, ws)[2 * g + 1] = red_w[0];
  }
  if (!(flags & F_COUNTERS)) return;  // ce_finish adds the partials
  if (!last_group_arrive(counters, (uint)ngroups, &last_flag)) return;
  ce_finish_parts(PTR(ACC, ws), ngroups, PTR(X_T, out), PTR(ACC, aux), rows, flags, red_l, red_w);
}

#endif  // SERIAL_ROWS

// One work-group: the reduction of ce_fwd's partials when arrival counters are unavailable, or of ce_fwd_serial's.
__kernel void ce_finish(PTR_ARG(ACC, ws), long nparts, PTR_ARG(X_T, out), PTR_ARG(ACC, aux), long rows, int flags) {
  __local ACC ra[MAX_WG];
  __local ACC rb[MAX_WG];
  ce_finish_parts(PTR(ACC, ws), nparts, PTR(X_T, out), PTR(ACC, aux), rows, flags, ra, rb);
}

#if !SERIAL_ROWS
// Backward: with p_c = exp(x_c - lse), g the row's grad_output (/ total weight for mean),
//   d loss / d x_c = g * ((1 - eps) * w_t * (p_c - [c == t]) + eps / C * (p_c * sum_k w_k - w_c))
//                  = cp * p_c - [c == t] * a - b * w_c,
// a = g (1 - eps) w_t, b = g eps / C, cp = a + b * sum_k w_k (w = 1 without weights).
// Ignored rows get 0. gx is addressed with its own strides (gs_*).
__kernel void ce_bwd(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, go), PTR_ARG(ACC, aux),
                     PTR_ARG(X_T, gx), long rows, long S, long C, long xs_n, long xs_s, long xs_c, long gs_n,
                     long gs_s, long gs_c, long ignore_index, ACC eps, int T, int c_fast, int flags) {
  const Team tm = team_of(rows, T, c_fast);
  if (!tm.active) return;  // no barriers below
  const bool has_w = (flags & F_HAS_W) != 0, smooth = (flags & F_SMOOTH) != 0;
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* wp = PTR(X_T, w);
  __global X_T* gp = PTR(X_T, gx);
  const long xb = row_base(tm.row, S, xs_n, xs_s), gb = row_base(tm.row, S, gs_n, gs_s);
  // The register part of the row is requested first, so it is in flight during the row's
  // scalar loads (target, grad_output, logsumexp, target weight).
  ACC v[ITEMS];
  load_regs(v, xp, xb, xs_c, C, tm.t, T, true, (ACC)0);
  const long t = ce_class(PTR(TGT_T, target)[tm.row], C, ignore_index, 0);
  const bool valid = t >= 0;
  ACC a = 0, b = 0, cp = 0, lse = 0;
  if (valid) {
    ACC g = LOAD_X(PTR(X_T, go), (flags & F_PER_SAMPLE) ? tm.row : 0);
    if (flags & F_MEAN) g /= PTR(ACC, aux)[rows];
    const ACC wt = has_w ? LOAD_X(wp, t) : (ACC)1;
    a = g * ((ACC)1 - eps) * wt;
    b = smooth ? g * eps / (ACC)C : (ACC)0;
    cp = smooth ? a + b * (has_w ? PTR(ACC, aux)[rows + 1] : (ACC)C) : a;  // aux[rows + 1]: smoothing only
    lse = PTR(ACC, aux)[tm.row];
  }
  // Ignored rows get exact zeros (not 0 * exp(x - lse), which is NaN for x = +inf).
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long c = COL(tm.t, T, k);
    ACC r = cp * exp(v[k] - lse);
    if (c == t) r -= a;
    if (smooth && c < C) r -= has_w ? b * LOAD_X(wp, c) : b;
    v[k] = valid ? r : (ACC)0;
  }
#if VEC == 4
#pragma unroll
  for (int j = 0; j < ITEMS / 4; ++j) {
    const long c = COL(tm.t, T, 4 * j);
    if (c < C) STORE4_X(gp, gb + c, ((ACC4)(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3])));
  }
  // The tail of a row longer than T * ITEMS.
  if (!valid) {
    for (long c = TAIL(tm.t, T); c < C; c += 4L * T) STORE4_X(gp, gb + c, (ACC4)(0));
    return;
  }
#pragma unroll 2
  for (long c = TAIL(tm.t, T); c < C; c += 4L * T) {
    ACC4 r = cp * exp(LOAD4_X(xp, xb + c) - lse);
    if (smooth) r -= b * (has_w ? load_w4(wp, c) : (ACC4)(1));
    const long d = t - c;
    if (d == 0) r.x -= a;
    else if (d == 1) r.y -= a;
    else if (d == 2) r.z -= a;
    else if (d == 3) r.w -= a;
    STORE4_X(gp, gb + c, r);
  }
#else
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long c = COL(tm.t, T, k);
    if (c < C) STORE_X(gp, gb + c * gs_c, v[k]);
  }
  // The tail of a row longer than T * ITEMS.
  if (!valid) {
    for (long c = TAIL(tm.t, T); c < C; c += T) STORE_X(gp, gb + c * gs_c, (ACC)0);
    return;
  }
#pragma unroll 4
  for (long c = TAIL(tm.t, T); c < C; c += T) {
    ACC r = cp * exp(LOAD_X(xp, xb + c * xs_c) - lse);
    if (c == t) r -= a;
    if (smooth) r -= has_w ? b * LOAD_X(wp, c) : b;
    STORE_X(gp, gb + c * gs_c, r);
  }
#endif
}
#endif  // !SERIAL_ROWS
