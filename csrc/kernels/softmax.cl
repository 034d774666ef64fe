// Softmax / log-softmax forward and backward along one dimension of any strided tensor.
// A "row" is the C elements along `dim` at a fixed (outer o, inner i) position; element c of
// row r = o*inner + i lives at o*s_o + i*s_i + c*s_c (elements) for each tensor, so inner-dim
// and strided (dim != -1) softmax both read the tensor in place, with no transpose copy.
// A team of T work-items handles one row: each keeps up to ITEMS of the row's elements in
// registers (rows of up to T*ITEMS elements are read once); any longer tail is streamed twice
// with an online (max, sum) update, which stays stable for rows of any length.
#include "common.clh"

#ifndef MAX_WG
#define MAX_WG 256  // largest work-group the host launches (sizes the local reduction arrays)
#endif
#ifndef ITEMS
#define ITEMS 16  // row elements each work-item keeps in registers
#endif
#ifndef X_KIND
#define X_KIND 0  // storage kind of the input(s): 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef Y_KIND
#define Y_KIND 0  // storage kind of the output
#endif
#ifndef ACC
#define ACC float  // accumulation type (double for double tensors, float otherwise)
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define Y_T CAT(ST_, Y_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_Y(p, i, v) CAT(SV_, Y_KIND)(p, i, v)

#define MODE_SOFTMAX 0
#define MODE_LOG_SOFTMAX 1
#define MODE_SAFE_SOFTMAX 2  // rows that are entirely -inf give 0 instead of NaN

// Row geometry shared by the kernels: which row this work-item serves, its member index t in
// the team, and where team member u's slot is in the local arrays. c_fast: the team's members
// are adjacent work-items (dim is the innermost, so adjacent members read adjacent elements);
// otherwise adjacent work-items serve adjacent rows (adjacent inner positions).
typedef struct {
  long row;
  int t, lane, lanes, T;
  int c_fast;
  bool active;
} Team;

inline Team team_of(long rows, int T, int c_fast) {
  Team tm;
  int lid = (int)get_local_id(0);
  tm.lanes = (int)get_local_size(0) / T;
  tm.T = T;
  tm.c_fast = c_fast;
  if (c_fast) {
    tm.t = lid % T;
    tm.lane = lid / T;
  } else {
    tm.lane = lid % tm.lanes;
    tm.t = lid / tm.lanes;
  }
  tm.row = (long)get_group_id(0) * tm.lanes + tm.lane;
  tm.active = tm.row < rows;
  return tm;
}
inline int slot(Team tm, int u) { return tm.c_fast ? tm.lane * tm.T + u : u * tm.lanes + tm.lane; }

inline long row_base(long row, long inner, long s_o, long s_i) {
  if (inner == 1) return row * s_o;  // the hot case: skip the 64-bit division
  long o = row / inner;
  return o * s_o + (row - o * inner) * s_i;
}

// NaN-propagating max (fmax would drop NaNs, but softmax of a row with a NaN is NaN).
inline ACC max_nan(ACC a, ACC b) { return (isnan(a) || a > b) ? a : b; }

// Folds one element into a running (max, sum of exp(x - max)); -inf elements add nothing.
inline void online_add(ACC* m, ACC* s, ACC v) {
  if (v > *m) {
    *s = *s * exp(*m - v) + (ACC)1;
    *m = v;
  } else if (v != -INFINITY) {
    *s += exp(v - *m);
  }
}

// Softmax (mode 0), log-softmax (1) or safe softmax (2) of x into y.
__kernel void softmax_fwd(PTR_ARG(X_T, x), PTR_ARG(Y_T, y), long rows, long inner, long C, long xs_o, long xs_i,
                          long xs_c, long ys_o, long ys_i, long ys_c, int T, int c_fast, int mode) {
  __global X_T* xp = PTR(X_T, x);
  __global Y_T* yp = PTR(Y_T, y);
  __local ACC red_m[MAX_WG];
  __local ACC red_s[MAX_WG];
  Team tm = team_of(rows, T, c_fast);
  long xb = 0, yb = 0;
  if (tm.active) {
    xb = row_base(tm.row, inner, xs_o, xs_i);
    yb = row_base(tm.row, inner, ys_o, ys_i);
  }

  ACC v[ITEMS];
  ACC m = -INFINITY, s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    long c = tm.t + (long)k * T;
    v[k] = (tm.active && c < C) ? LOAD_X(xp, xb + c * xs_c) : -INFINITY;
    m = max_nan(m, v[k]);
  }
  if (m != -INFINITY) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s += exp(v[k] - m);
  }
  if (tm.active) {
    // Long rows: the tail beyond the registers, four independent loads in flight per step.
    long c = tm.t + (long)ITEMS * T;
    for (; c + 3L * T < C; c += 4L * T) {
      ACC a0 = LOAD_X(xp, xb + c * xs_c), a1 = LOAD_X(xp, xb + (c + T) * xs_c);
      ACC a2 = LOAD_X(xp, xb + (c + 2L * T) * xs_c), a3 = LOAD_X(xp, xb + (c + 3L * T) * xs_c);
      online_add(&m, &s, a0);
      online_add(&m, &s, a1);
      online_add(&m, &s, a2);
      online_add(&m, &s, a3);
    }
    for (; c < C; c += T) online_add(&m, &s, LOAD_X(xp, xb + c * xs_c));
  }

  // Combine the team's partial (max, sum) pairs.
  int me = slot(tm, tm.t);
  red_m[me] = m;
  red_s[me] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = T >> 1; h > 0; h >>= 1) {
    if (tm.t < h) {
      int other = slot(tm, tm.t + h);
      ACC m1 = red_m[me], m2 = red_m[other];
      ACC mm = max_nan(m1, m2);
      ACC s1 = m1 == -INFINITY ? (ACC)0 : red_s[me] * exp(m1 - mm);
      ACC s2 = m2 == -INFINITY ? (ACC)0 : red_s[other] * exp(m2 - mm);
      red_m[me] = mm;
      red_s[me] = s1 + s2;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (!tm.active) return;
  m = red_m[slot(tm, 0)];
  s = red_s[slot(tm, 0)];

  const bool zero_row = mode == MODE_SAFE_SOFTMAX && m == -INFINITY;
  const ACC inv = (ACC)1 / s;
  const ACC shift = mode == MODE_LOG_SOFTMAX ? m + log(s) : m;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    long c = tm.t + (long)k * T;
    if (c < C) {
      ACC r = mode == MODE_LOG_SOFTMAX ? v[k] - shift : (zero_row ? (ACC)0 : exp(v[k] - shift) * inv);
      STORE_Y(yp, yb + c * ys_c, r);
    }
  }
#pragma unroll 4
  for (long c = tm.t + (long)ITEMS * T; c < C; c += T) {
    ACC xv = LOAD_X(xp, xb + c * xs_c);
    ACC r = mode == MODE_LOG_SOFTMAX ? xv - shift : (zero_row ? (ACC)0 : exp(xv - shift) * inv);
    STORE_Y(yp, yb + c * ys_c, r);
  }
}

// Backward of softmax (mode 0/2): gx = y * (gy - sum(gy * y));
// of log-softmax (mode 1):        gx = gy - exp(y) * sum(gy).
// gy and y have storage kind X_KIND, gx has Y_KIND.
__kernel void softmax_bwd(PTR_ARG(X_T, gy), PTR_ARG(X_T, y), PTR_ARG(Y_T, gx), long rows, long inner, long C,
                          long gs_o, long gs_i, long gs_c, long ys_o, long ys_i, long ys_c, long xs_o, long xs_i,
                          long xs_c, int T, int c_fast, int mode) {
  __global X_T* gyp = PTR(X_T, gy);
  __global X_T* yp = PTR(X_T, y);
  __global Y_T* gxp = PTR(Y_T, gx);
  __local ACC red[MAX_WG];
  Team tm = team_of(rows, T, c_fast);
  const bool is_log = mode == MODE_LOG_SOFTMAX;
  long gb = 0, yb = 0, xb = 0;
  if (tm.active) {
    gb = row_base(tm.row, inner, gs_o, gs_i);
    yb = row_base(tm.row, inner, ys_o, ys_i);
    xb = row_base(tm.row, inner, xs_o, xs_i);
  }

  ACC g[ITEMS], o[ITEMS];
  ACC s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    long c = tm.t + (long)k * T;
    bool in = tm.active && c < C;
    g[k] = in ? LOAD_X(gyp, gb + c * gs_c) : (ACC)0;
    o[k] = in ? LOAD_X(yp, yb + c * ys_c) : (ACC)0;
    s += is_log ? g[k] : g[k] * o[k];
  }
  if (tm.active)
#pragma unroll 4
    for (long c = tm.t + (long)ITEMS * T; c < C; c += T) {
      ACC gv = LOAD_X(gyp, gb + c * gs_c);
      s += is_log ? gv : gv * LOAD_X(yp, yb + c * ys_c);
    }

  int me = slot(tm, tm.t);
  red[me] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = T >> 1; h > 0; h >>= 1) {
    if (tm.t < h) red[me] += red[slot(tm, tm.t + h)];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (!tm.active) return;
  s = red[slot(tm, 0)];

#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    long c = tm.t + (long)k * T;
    if (c < C) STORE_Y(gxp, xb + c * xs_c, is_log ? g[k] - exp(o[k]) * s : o[k] * (g[k] - s));
  }
#pragma unroll 4
  for (long c = tm.t + (long)ITEMS * T; c < C; c += T) {
    ACC gv = LOAD_X(gyp, gb + c * gs_c);
    ACC ov = LOAD_X(yp, yb + c * ys_c);
    STORE_Y(gxp, xb + c * xs_c, is_log ? gv - exp(ov) * s : ov * (gv - s));
  }
}
