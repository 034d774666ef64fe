// Softmax / log-softmax forward and backward along one dimension of any strided tensor.
// A "row" is the C elements along `dim` at a fixed (outer o, inner i) position; element c of
// row r = o*inner + i lives at o*s_o + i*s_i + c*s_c (elements) for each tensor, so inner-dim
// and strided (dim != -1) softmax both read the tensor in place, with no transpose copy.
// A team of T work-items handles one row: each keeps up to ITEMS of the row's elements in
// registers (rows of up to T*ITEMS elements are read once); any longer tail is streamed twice
// with an online (max, sum) update, which stays stable for rows of any length. The team's
// reductions are warp shuffles plus one barrier where its members are adjacent work-items
// (ROW_REDUCE 1-3), else a local-memory tree (subgroup.clh: team_reduce).
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind of the input(s): 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef Y_KIND
#define Y_KIND 0  // storage kind of the output
#endif
#include "rows.clh"  // ITEMS, VEC, ACC, ROW_REDUCE, row teams, register loads
#define X_T CAT(ST_, X_KIND)
#define Y_T CAT(ST_, Y_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_Y(p, i, v) CAT(SV_, Y_KIND)(p, i, v)
#define LOAD4_X(p, i) CAT(LD4_, X_KIND)(p, i)
#define STORE4_Y(p, i, v) CAT(SV4_, Y_KIND)(p, i, v)

#define MODE_SOFTMAX 0
#define MODE_LOG_SOFTMAX 1
#define MODE_SAFE_SOFTMAX 2  // rows that are entirely -inf give 0 instead of NaN

// Stores this work-item's register share r[ITEMS] of a row (r[k] is element COL(t, T, k), those
// below C) at p[base + c * sc]: 4-element vectors on the VEC path (where sc is 1). Uses the
// enclosing kernel's tm, T and C.
#if VEC == 4
#define STORE_SHARE(p, base, sc, r)                                                                \
  do {                                                                                             \
    _Pragma("unroll") for (int j_ = 0; j_ < ITEMS / 4; ++j_) {                                     \
      const long c_ = COL(tm.t, T, 4 * j_);                                                        \
      if (c_ < C) STORE4_Y(p, (base) + c_, ((ACC4)(r[4 * j_], r[4 * j_ + 1], r[4 * j_ + 2], r[4 * j_ + 3]))); \
    }                                                                                              \
  } while (0)
#else
#define STORE_SHARE(p, base, sc, r)                                                                \
  do {                                                                                             \
    _Pragma("unroll") for (int k_ = 0; k_ < ITEMS; ++k_) {                                         \
      const long c_ = COL(tm.t, T, k_);                                                            \
      if (c_ < C) STORE_Y(p, (base) + c_ * (sc), r[k_]);                                           \
    }                                                                                              \
  } while (0)
#endif

DEFINE_LOAD_REGS(load_regs, X_T, LOAD_X, LOAD4_X)

// Folds one element into a running (max, sum of exp(x - max)); -inf elements add nothing.
inline void online_add(ACC* m, ACC* s, ACC v) {
  if (v > *m) {
    *s = *s * exp(*m - v) + (ACC)1;
    *m = v;
  } else if (v != -INFINITY) {
    *s += exp(v - *m);
  }
}

inline Part part1(ACC x) { return part3(x, (ACC)0, (ACC)0); }

// Softmax (mode 0), log-softmax (1) or safe softmax (2) of x into y. A row held in registers
// (C <= T * ITEMS) takes its max, then its sum of exp(x - max) (one exponential per element,
// kept for the output); a longer row merges (max, sum) pairs, streaming its tail twice.
__kernel void softmax_fwd(PTR_ARG(X_T, x), PTR_ARG(Y_T, y), long rows, long inner, long C, long xs_o, long xs_i,
                          long xs_c, long ys_o, long ys_i, long ys_c, int T, int c_fast, int mode) {
  __global X_T* xp = PTR(X_T, x);
  __global Y_T* yp = PTR(Y_T, y);
  __local Part red_a[ROW_RED_SLOTS];
  __local Part red_b[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const Team tm = team_of(rows, T, c_fast);
  long xb = 0, yb = 0;
  if (tm.active) {
    xb = row_base(tm.row, inner, xs_o, xs_i);
    yb = row_base(tm.row, inner, ys_o, ys_i);
  }
  const bool fits = C <= (long)T * ITEMS;  // the same for every work-item

  ACC v[ITEMS];
  load_regs(v, xp, xb, xs_c, C, tm.t, T, tm.active, -INFINITY);
  ACC m = -INFINITY, s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) m = max_nan(m, v[k]);
  if (fits) {
    m = team_reduce(part1(m), OP_MAX, 1, tm.t, T, tm.stride, red_a, ROW_XCHG).x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const ACC e = exp(v[k] - m);  // 0 for padding unless the row is all -inf (NaN, as on the CPU)
      s += e;
      if (mode != MODE_LOG_SOFTMAX) v[k] = e;
    }
    s = team_reduce(part1(s), OP_SUM, 1, tm.t, T, tm.stride, red_b, ROW_XCHG).x;
  } else {
    if (m != -INFINITY) {
#pragma unroll
      for (int k = 0; k < ITEMS; ++k) s += exp(v[k] - m);
    }
    if (tm.active) {
      // The tail beyond the registers, four independent loads in flight per step.
#if VEC == 4
      for (long c = TAIL(tm.t, T); c < C; c += 4L * T) {
        const ACC4 a = LOAD4_X(xp, xb + c);
        online_add(&m, &s, a.s0);
        online_add(&m, &s, a.s1);
        online_add(&m, &s, a.s2);
        online_add(&m, &s, a.s3);
      }
#else
      long c = TAIL(tm.t, T);
      for (; c + 3L * T < C; c += 4L * T) {
        ACC a0 = LOAD_X(xp, xb + c * xs_c), a1 = LOAD_X(xp, xb + (c + T) * xs_c);
        ACC a2 = LOAD_X(xp, xb + (c + 2L * T) * xs_c), a3 = LOAD_X(xp, xb + (c + 3L * T) * xs_c);
        online_add(&m, &s, a0);
        online_add(&m, &s, a1);
        online_add(&m, &s, a2);
        online_add(&m, &s, a3);
      }
      for (; c < C; c += T) online_add(&m, &s, LOAD_X(xp, xb + c * xs_c));
#endif
    }
    const Part p = team_reduce(part3(m, s, (ACC)0), OP_SOFTMAX, 2, tm.t, T, tm.stride, red_a, ROW_XCHG);
    m = p.x;
    s = p.y;
  }
  if (!tm.active) return;

  const bool zero_row = mode == MODE_SAFE_SOFTMAX && m == -INFINITY;
  const ACC inv = (ACC)1 / s;
  const ACC shift = mode == MODE_LOG_SOFTMAX ? m + log(s) : m;
  ACC r[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const ACC e = fits ? v[k] : exp(v[k] - shift);
    r[k] = mode == MODE_LOG_SOFTMAX ? v[k] - shift : (zero_row ? (ACC)0 : e * inv);
  }
  STORE_SHARE(yp, yb, ys_c, r);
#if VEC == 4
  for (long c = TAIL(tm.t, T); c < C; c += 4L * T) {
    const ACC4 a = LOAD4_X(xp, xb + c);
    const ACC4 o = mode == MODE_LOG_SOFTMAX ? a - shift : (zero_row ? (ACC4)(0) : exp(a - shift) * inv);
    STORE4_Y(yp, yb + c, o);
  }
#else
#pragma unroll 4
  for (long c = TAIL(tm.t, T); c < C; c += T) {
    ACC xv = LOAD_X(xp, xb + c * xs_c);
    ACC o = mode == MODE_LOG_SOFTMAX ? xv - shift : (zero_row ? (ACC)0 : exp(xv - shift) * inv);
    STORE_Y(yp, yb + c * ys_c, o);
  }
#endif
}

// Backward of softmax (mode 0/2): gx = y * (gy - sum(gy * y));
// of log-softmax (mode 1):        gx = gy - exp(y) * sum(gy).
// gy and y have storage kind X_KIND, gx has Y_KIND (gx uses the strides xs_*).
__kernel void softmax_bwd(PTR_ARG(X_T, gy), PTR_ARG(X_T, y), PTR_ARG(Y_T, gx), long rows, long inner, long C,
                          long gs_o, long gs_i, long gs_c, long ys_o, long ys_i, long ys_c, long xs_o, long xs_i,
                          long xs_c, int T, int c_fast, int mode) {
  __global X_T* gyp = PTR(X_T, gy);
  __global X_T* yp = PTR(X_T, y);
  __global Y_T* gxp = PTR(Y_T, gx);
  __local Part red[ROW_RED_SLOTS];
  ROW_XCHG_DECL;
  const Team tm = team_of(rows, T, c_fast);
  const bool is_log = mode == MODE_LOG_SOFTMAX;
  long gb = 0, yb = 0, xb = 0;
  if (tm.active) {
    gb = row_base(tm.row, inner, gs_o, gs_i);
    yb = row_base(tm.row, inner, ys_o, ys_i);
    xb = row_base(tm.row, inner, xs_o, xs_i);
  }

  ACC g[ITEMS], o[ITEMS];
  load_regs(g, gyp, gb, gs_c, C, tm.t, T, tm.active, (ACC)0);
  load_regs(o, yp, yb, ys_c, C, tm.t, T, tm.active, (ACC)0);
  ACC s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) s += is_log ? g[k] : g[k] * o[k];
  if (tm.active) {
#if VEC == 4
    for (long c = TAIL(tm.t, T); c < C; c += 4L * T) {
      const ACC4 gv = LOAD4_X(gyp, gb + c);
      const ACC4 p = is_log ? gv : gv * LOAD4_X(yp, yb + c);
      s += ((p.s0 + p.s1) + p.s2) + p.s3;
    }
#else
#pragma unroll 4
    for (long c = TAIL(tm.t, T); c < C; c += T) {
      ACC gv = LOAD_X(gyp, gb + c * gs_c);
      s += is_log ? gv : gv * LOAD_X(yp, yb + c * ys_c);
    }
#endif
  }
  s = team_reduce(part1(s), OP_SUM, 1, tm.t, T, tm.stride, red, ROW_XCHG).x;
  if (!tm.active) return;

  ACC r[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) r[k] = is_log ? g[k] - exp(o[k]) * s : o[k] * (g[k] - s);
  STORE_SHARE(gxp, xb, xs_c, r);
#if VEC == 4
  for (long c = TAIL(tm.t, T); c < C; c += 4L * T) {
    const ACC4 gv = LOAD4_X(gyp, gb + c), ov = LOAD4_X(yp, yb + c);
    STORE4_Y(gxp, xb + c, is_log ? gv - exp(ov) * s : ov * (gv - s));
  }
#else
#pragma unroll 4
  for (long c = TAIL(tm.t, T); c < C; c += T) {
    ACC gv = LOAD_X(gyp, gb + c * gs_c);
    ACC ov = LOAD_X(yp, yb + c * ys_c);
    STORE_Y(gxp, xb + c * xs_c, is_log ? gv - exp(ov) * s : ov * (gv - s));
  }
#endif
}
