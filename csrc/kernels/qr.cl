// Householder QR for csrc/ops/qr.cpp: LAPACK geqrf's reflectors (dlarfg's signs), their
// application to other matrices (orgqr / ormqr), the compact-WY T factor of a block of
// reflectors (dlarft) and the Taylor-polynomial terms of the matrix exponential. Matrices are
// (batch, rows, cols) with any strides (batch stride, row stride, column stride). One
// work-group per matrix walks the reflectors; the host's blocked algorithms hand the bulk of
// large factorisations to the device GEMM.
#include "common.clh"

#ifndef DT
#define DT float  // element type: float or double (the CPU's LAPACK takes no other)
#endif

#define AT(M, i, j) M[(i) * M##_rs + (j) * M##_cs]

// ||X[r0:m, c]|| as LAPACK's dlassq keeps it (scale * sqrt(ssq)), so that no square over- or
// underflows: each work-item folds its rows, then a work-group tree folds the pairs. Call from
// every work-item (barriers); the local size must be a power of two. Leaves red_s / red_q in
// use: the caller barriers before writing them again.
inline DT column_norm(__global const DT* X, long X_rs, long X_cs, long c, long r0, long m, __local DT* red_s,
                      __local DT* red_q) {
  const int lid = get_local_id(0), wg = get_local_size(0);
  DT scale = (DT)0, ssq = (DT)1;
  for (long i = r0 + lid; i < m; i += wg) {
    const DT a = fabs(AT(X, i, c));
    if (a != (DT)0) {  // NaN goes on (and spreads), zeros add nothing
      if (scale < a) {
        const DT r = scale / a;
        ssq = (DT)1 + ssq * r * r;
        scale = a;
      } else {
        const DT r = a == scale ? (DT)1 : a / scale;
        ssq += r * r;
      }
    }
  }
  red_s[lid] = scale;
  red_q[lid] = ssq;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = wg / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const DT s1 = red_s[lid], s2 = red_s[lid + s];
      if (s2 > s1) {
        const DT r = s1 / s2;
        red_q[lid] = red_q[lid + s] + red_q[lid] * r * r;
        red_s[lid] = s2;
      } else if (s2 != (DT)0) {
        const DT r = s2 == s1 ? (DT)1 : s2 / s1;
        red_q[lid] += red_q[lid + s] * r * r;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return red_s[0] * sqrt(red_q[0]);
}

// X[j:m, c0:c1) := H X[j:m, c0:c1) for the reflector H = I - t v v^T, v = (1, V[j+1:m, jv]) (the
// unit head implicit, as LAPACK stores it): w = t v^T X, then X -= v w. The work-group is split
// into slots of `lanes` work-items (a power of two dividing the local size): each slot takes one
// column at a time, its lanes stride down the rows, and a tree over the lanes sums the dot.
// Call from every work-item (barriers); V's column jv and X's columns may share a matrix.
inline void apply_reflector(__global const DT* V, long V_rs, long V_cs, long jv, long j, long m, DT t,
                            __global DT* X, long X_rs, long X_cs, long c0, long c1, int lanes, __local DT* red) {
  const int lid = get_local_id(0), wg = get_local_size(0);
  const int lane = lid % lanes, slot = lid / lanes, slots = wg / lanes;
  for (long cc = c0; cc < c1; cc += slots) {
    const long c = cc + slot;
    DT p = (DT)0;
    if (c < c1)
      for (long i = j + lane; i < m; i += lanes) p += (i == j ? (DT)1 : AT(V, i, jv)) * AT(X, i, c);
    red[lid] = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = lanes / 2; s > 0; s >>= 1) {
      if (lane < s) red[lid] += red[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const DT w = t * red[slot * lanes];
    if (c < c1)
      for (long i = j + lane; i < m; i += lanes) AT(X, i, c) -= (i == j ? (DT)1 : AT(V, i, jv)) * w;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // red is read before the next column's writes
  }
}

// Unblocked Householder QR (LAPACK geqr2) of the columns [j0, j1) of one m-row matrix per
// work-group (group id = batch): column j gets dlarfg's reflector (beta = -sign(alpha) *
// ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha - beta); tau = 0 and nothing
// changes when x is already zero), R's diagonal beta, v below it, tau[j]; the reflector is
// then applied to the columns (j, c_end). The host passes c_end = cols for a whole matrix, the
// panel's end for a panel of the blocked algorithm. Local size a power of two; red_s / red_q
// hold one element per work-item.
__kernel void geqrf_panel(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long m, long j0, long j1, long c_end,
                          PTR_ARG(DT, tau), long tau_bs, int lanes, __local DT* red_s, __local DT* red_q) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global DT* A = PTR(DT, a) + b * a_bs;
  __global DT* TAU = PTR(DT, tau) + b * tau_bs;
  for (long j = j0; j < j1; ++j) {
    const DT xnorm = column_norm(A, A_rs, A_cs, j, j + 1, m, red_s, red_q);
    const DT alpha = AT(A, j, j);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // everyone has read red and A[j, j]
    DT t = (DT)0;
    if (xnorm != (DT)0) {
      const DT beta = -copysign(hypot(alpha, xnorm), alpha);
      t = (beta - alpha) / beta;
      const DT r = (DT)1 / (alpha - beta);  // dlarfg scales by the reciprocal
      for (long i = j + 1 + lid; i < m; i += wg) AT(A, i, j) *= r;
      if (lid == 0) AT(A, j, j) = beta;
    }
    if (lid == 0) TAU[j] = t;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (t != (DT)0) apply_reflector(A, A_rs, A_cs, j, j, m, t, A, A_rs, A_cs, j + 1, c_end, lanes, red_q);
  }
}

// X (m x ncols) := Q X (backward = 1: H_{k-1} first) or Q^T X (backward = 0: H_0 first) for
// Q = H_0 ... H_{k-1}, reflector j in V's column j from row j (LAPACK ormqr's unblocked form).
// orgqr = 1 is LAPACK orgqr: X starts as the identity and reflector j only touches the
// columns from j (the earlier ones are still unit columns there). One work-group per matrix;
// red holds one element per work-item.
__kernel void qr_apply(PTR_ARG(DT, v), long v_bs, long V_rs, long V_cs, PTR_ARG(DT, tau), long tau_bs, long k,
                       PTR_ARG(DT, x), long x_bs, long X_rs, long X_cs, long m, long ncols, int backward, int orgqr,
                       int lanes, __local DT* red) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global const DT* V = PTR(DT, v) + b * v_bs;
  __global const DT* TAU = PTR(DT, tau) + b * tau_bs;
  __global DT* X = PTR(DT, x) + b * x_bs;
  if (orgqr) {
    for (long t = lid; t < m * ncols; t += wg) {
      const long i = t % m, c = t / m;
      AT(X, i, c) = i == c ? (DT)1 : (DT)0;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  for (long s = 0; s < k; ++s) {
    const long j = backward ? k - 1 - s : s;
    const DT t = TAU[j];
    if (t != (DT)0) apply_reflector(V, V_rs, V_cs, j, j, m, t, X, X_rs, X_cs, orgqr ? j : 0, ncols, lanes, red);
  }
}

// The explicit V (rows x nb) of a block of reflectors stored LAPACK's way in A's columns
// [c0, c0 + nb) from row r0: below the diagonal copied, ones on it, zeros above (where A holds
// R). Work-item (element, batch); V of any strides.
__kernel void qr_form_v(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long r0, long c0, long rows, long nb,
                        PTR_ARG(DT, v), long v_bs, long V_rs, long V_cs, long batch) {
  const long g = get_global_id(0), b = get_global_id(1);
  if (g >= rows * nb || b >= batch) return;
  const long i = g % rows, c = g / rows;
  __global const DT* A = PTR(DT, a) + b * a_bs;
  __global DT* V = PTR(DT, v) + b * v_bs;
  AT(V, i, c) = i > c ? AT(A, r0 + i, c0 + c) : (i == c ? (DT)1 : (DT)0);
}

// The upper triangular T (nb x nb) of the block reflector H_0 ... H_{nb-1} = I - V T V^T
// (LAPACK dlarft, forward, columnwise) from G = V^T V and tau: T[i, i] = tau_i,
// T[0:i, i] = -tau_i T[0:i, 0:i] G[0:i, i]. The strictly lower part of T is zeroed. One
// work-group per matrix; G and T of any strides.
__kernel void qr_larft(PTR_ARG(DT, g), long g_bs, long G_rs, long G_cs, PTR_ARG(DT, tau), long tau_bs, long nb,
                       PTR_ARG(DT, t), long t_bs, long T_rs, long T_cs) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global const DT* G = PTR(DT, g) + b * g_bs;
  __global const DT* TAU = PTR(DT, tau) + b * tau_bs;
  __global DT* T = PTR(DT, t) + b * t_bs;
  for (long e = lid; e < nb * nb; e += wg) {
    const long r = e % nb, c = e / nb;
    if (r > c) AT(T, r, c) = (DT)0;
  }
  for (long i = 0; i < nb; ++i) {
    const DT ti = TAU[i];
    for (long r = lid; r < i; r += wg) {
      DT s = (DT)0;
      for (long c = r; c < i; ++c) s += AT(T, r, c) * AT(G, c, i);
      AT(T, r, i) = -ti * s;
    }
    if (lid == 0) AT(T, i, i) = ti;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// One term of a Paterson-Stockmeyer evaluation of the matrix exponential's Taylor polynomial:
// out = c0 I + c1 P1 + c2 P2 + c3 P3 + c4 P4 for contiguous (batch, n, n) matrices (a zero
// coefficient skips its matrix, which may then be any of the others). Grid-stride over elements.
__kernel void mexp_lincomb(PTR_ARG(DT, p1), PTR_ARG(DT, p2), PTR_ARG(DT, p3), PTR_ARG(DT, p4), DT c0, DT c1, DT c2,
                           DT c3, DT c4, long n, long total, PTR_ARG(DT, out)) {
  __global const DT* P1 = PTR(DT, p1);
  __global const DT* P2 = PTR(DT, p2);
  __global const DT* P3 = PTR(DT, p3);
  __global const DT* P4 = PTR(DT, p4);
  __global DT* O = PTR(DT, out);
  FOR_EACH(e, total) {
    const long r = e % (n * n);
    DT v = r / n == r % n ? c0 : (DT)0;
    if (c1 != (DT)0) v += c1 * P1[e];
    if (c2 != (DT)0) v += c2 * P2[e];
    if (c3 != (DT)0) v += c3 * P3[e];
    if (c4 != (DT)0) v += c4 * P4[e];
    O[e] = v;
  }
}
