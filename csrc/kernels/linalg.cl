// Dense linear algebra for csrc/ops/linalg.cpp: LU with partial pivoting (LAPACK getrf's pivot
// choice and info), row interchanges, triangular solves of diagonal blocks, Cholesky panels,
// pivots to permutations and determinants. Matrices are (batch, rows, cols) with any strides
// (batch stride, row stride, column stride); transposed views are just swapped strides. The
// host runs the blocked algorithms: these kernels do the panels, the device GEMM the rest.
#include "common.clh"

#ifndef DT
#define DT float  // element type: float or double (the CPU's LAPACK takes no other)
#endif
#ifdef DT_IS_DOUBLE
#define DT_SAFE_MIN DBL_MIN  // LAPACK's dlamch('S'): below it 1/x overflows, so divide instead
#else
#define DT_SAFE_MIN FLT_MIN
#endif

#define AT(M, i, j) M[(i) * M##_rs + (j) * M##_cs]

// Right-looking unblocked LU with partial pivoting of the columns [k0, k1) of one matrix per
// work-group (group id 0 = batch), rows [j, m) searched for the pivot of column j. Row swaps
// touch the panel's columns only (lu_swap_rows does the rest). piv[j] = 1-based pivot row,
// info = 1 + the first column whose pivot is exactly zero (kept when already set by an
// earlier panel; the host zeroes it). As LAPACK's getf2: the first row of largest |value|,
// no swap and no scaling at a zero pivot, scaling by the reciprocal unless it would overflow.
// The local size must be a power of two; red_v / red_i hold one entry per work-item.
__kernel void lu_panel_fwd(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long m, long k0, long k1,
                           PTR_ARG(int, piv), long piv_bs, PTR_ARG(int, info), __local DT* red_v,
                           __local long* red_i) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global DT* A = PTR(DT, a) + b * a_bs;
  __global int* P = PTR(int, piv) + b * piv_bs;
  __global int* I = PTR(int, info) + b;
  const long jend = min(k1, m);
  for (long j = k0; j < jend; ++j) {
    DT best = (DT)-1;
    long bi = m;
    for (long i = j + lid; i < m; i += wg) {
      const DT v = fabs(AT(A, i, j));
      if (v > best) {  // rows rise, so a tie keeps the first
        best = v;
        bi = i;
      }
    }
    red_v[lid] = best;
    red_i[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = wg / 2; s > 0; s >>= 1) {
      if (lid < s) {
        const DT v2 = red_v[lid + s];
        const long i2 = red_i[lid + s];
        if (v2 > red_v[lid] || (v2 == red_v[lid] && i2 < red_i[lid])) {
          red_v[lid] = v2;
          red_i[lid] = i2;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const long p = red_i[0] < m ? red_i[0] : j;  // a column of NaNs keeps its diagonal
    const DT pv = AT(A, p, j);
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone has read red_i[0] before the next column's writes
    if (lid == 0) {
      P[j] = (int)(p + 1);
      if (pv == (DT)0 && *I == 0) *I = (int)(j + 1);
    }
    if (pv != (DT)0 && p != j)
      for (long c = k0 + lid; c < k1; c += wg) {
        const DT t = AT(A, j, c);
        AT(A, j, c) = AT(A, p, c);
        AT(A, p, c) = t;
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (pv != (DT)0) {
      const DT r = (DT)1 / pv;
      const int recip = fabs(pv) >= DT_SAFE_MIN;
      for (long i = j + 1 + lid; i < m; i += wg) AT(A, i, j) = recip ? AT(A, i, j) * r : AT(A, i, j) / pv;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    // Rank-1 update of the panel's trailing part, rows fastest (column-major storage).
    const long rows = m - j - 1, cnt = rows * (k1 - j - 1);
    for (long t = lid; t < cnt; t += wg) {
      const long i = j + 1 + t % rows, c = j + 1 + t / rows;
      AT(A, i, c) -= AT(A, i, j) * AT(A, j, c);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// The row interchanges piv[j0..j1) (1-based, LAPACK order; backwards when `reverse`) applied
// to `ncols` columns of a (batch, rows, cols) matrix, skipping the columns [skip0, skip1)
// (the panel, already swapped). Work-item (column, batch). Pivots outside [1, rows] are
// skipped and raise the device error flag (the CPU raises too).
__kernel void lu_swap_rows(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long rows, long ncols, long batch,
                           long skip0, long skip1, PTR_ARG(int, piv), long piv_bs, long j0, long j1, int reverse,
                           __global int* err_flag) {
  const long g = get_global_id(0), b = get_global_id(1);
  if (g >= ncols || b >= batch) return;
  const long c = g < skip0 ? g : g + (skip1 - skip0);
  __global DT* A = PTR(DT, a) + b * a_bs;
  __global const int* P = PTR(int, piv) + b * piv_bs;
  for (long t = 0; t < j1 - j0; ++t) {
    const long j = reverse ? j1 - 1 - t : j0 + t;
    const long p = (long)P[j] - 1;
    if (p < 0 || p >= rows) {
      report_error(err_flag, ERR_LU_PIVOTS);
      continue;
    }
    if (p != j) {
      const DT v = AT(A, j, c);
      AT(A, j, c) = AT(A, p, c);
      AT(A, p, c) = v;
    }
  }
}

// Solves T X = X in place for an n x n triangular T (lower or upper; unit: its diagonal is
// taken as ones and never read) and n x ncols X, by substitution. Work-item (column, batch).
// For the diagonal blocks of the host's blocked solve (n up to a block), or whole small systems.
__kernel void trsm_block(PTR_ARG(DT, t), long t_bs, long T_rs, long T_cs, PTR_ARG(DT, x), long x_bs, long X_rs,
                         long X_cs, long n, long ncols, long batch, int lower, int unit) {
  const long c = get_global_id(0), b = get_global_id(1);
  if (c >= ncols || b >= batch) return;
  __global const DT* T = PTR(DT, t) + b * t_bs;
  __global DT* X = PTR(DT, x) + b * x_bs + c * X_cs;
  for (long s = 0; s < n; ++s) {
    const long i = lower ? s : n - 1 - s;
    DT acc = X[i * X_rs];
    if (lower)
      for (long k = 0; k < i; ++k) acc -= AT(T, i, k) * X[k * X_rs];
    else
      for (long k = i + 1; k < n; ++k) acc -= AT(T, i, k) * X[k * X_rs];
    X[i * X_rs] = unit ? acc : acc / AT(T, i, i);
  }
}

// Right-looking unblocked Cholesky (lower: A = L L^T, reading and writing the lower triangle)
// of the columns [k0, k1) of one matrix per work-group, rows [j, n): the diagonal block and the
// panel below it. For the upper factor the host passes the transposed strides. info = 1 + the
// first column whose pivot is not positive (or NaN), as LAPACK's potrf; a matrix whose info is
// already set (an earlier panel failed) is left alone.
__kernel void chol_panel_fwd(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long n, long k0, long k1,
                             PTR_ARG(int, info)) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global DT* A = PTR(DT, a) + b * a_bs;
  __global int* I = PTR(int, info) + b;
  if (*I != 0) return;
  barrier(CLK_GLOBAL_MEM_FENCE);  // every item has read info before item 0 may write it
  for (long j = k0; j < k1; ++j) {
    const DT d = AT(A, j, j);
    if (!(d > (DT)0)) {
      if (lid == 0) *I = (int)(j + 1);
      return;
    }
    const DT r = sqrt(d);
    barrier(CLK_GLOBAL_MEM_FENCE);  // everyone has read A[j, j]
    if (lid == 0) AT(A, j, j) = r;
    for (long i = j + 1 + lid; i < n; i += wg) AT(A, i, j) = AT(A, i, j) / r;
    barrier(CLK_GLOBAL_MEM_FENCE);
    // A[i, c] -= L[i, j] L[c, j] for the panel's columns c in (j, k1), rows i >= c.
    const long rows = n - j - 1, cnt = rows * (k1 - j - 1);
    for (long t = lid; t < cnt; t += wg) {
      const long i = j + 1 + t % rows, c = j + 1 + t / rows;
      if (i >= c) AT(A, i, c) -= AT(A, i, j) * AT(A, c, j);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// perm[b, :] = the permutation of [0, m) that LAPACK's interchanges piv[b, :k] (1-based) make,
// as ATen's unpack_pivots: row i of P^T A is row perm[i] of A. One work-item per matrix.
__kernel void lu_unpack_pivots(PTR_ARG(int, piv), long piv_bs, long k, PTR_ARG(long, perm), long m, long batch,
                               __global int* err_flag) {
  const long b = get_global_id(0);
  if (b >= batch) return;
  __global const int* P = PTR(int, piv) + b * piv_bs;
  __global long* Q = PTR(long, perm) + b * m;
  for (long i = 0; i < m; ++i) Q[i] = i;
  for (long j = 0; j < k; ++j) {
    const long p = (long)P[j] - 1;
    if (p < 0 || p >= m) {
      report_error(err_flag, ERR_LU_PIVOTS);
      continue;
    }
    const long v = Q[j];
    Q[j] = Q[p];
    Q[p] = v;
  }
}

// From an LU factorisation (n x n, with its pivots): slogdet == 0 writes det = sign(P) *
// prod(diag U) to out0; slogdet == 1 writes sign = sign(P) * prod(sgn(diag U)) to out0 and
// log|det| = sum(log|diag U|) to out1 (a zero pivot gives sign 0 and -inf, as the CPU).
// One work-item per matrix; out0 / out1 are contiguous.
__kernel void lu_det_fwd(PTR_ARG(DT, lu), long lu_bs, long LU_rs, long LU_cs, PTR_ARG(int, piv), long piv_bs,
                         long n, long batch, PTR_ARG(DT, out0), PTR_ARG(DT, out1), int slogdet) {
  const long b = get_global_id(0);
  if (b >= batch) return;
  __global const DT* LU = PTR(DT, lu) + b * lu_bs;
  __global const int* P = PTR(int, piv) + b * piv_bs;
  int odd = 0;
  for (long j = 0; j < n; ++j) odd ^= (long)P[j] != j + 1;
  DT prod = odd ? (DT)-1 : (DT)1, logabs = (DT)0;
  for (long j = 0; j < n; ++j) {
    const DT d = AT(LU, j, j);
    if (slogdet) {
      prod *= (DT)((d > (DT)0) - (d < (DT)0));  // sgn: 0 at 0 and at NaN, as the CPU's
      logabs += log(fabs(d));
    } else {
      prod *= d;
    }
  }
  PTR(DT, out0)[b] = prod;
  if (slogdet) PTR(DT, out1)[b] = logabs;
}
