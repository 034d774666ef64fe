// Pairwise p-norm distances for csrc/ops/distance.cpp: torch.cdist's direct path
// (_cdist_forward / _cdist_backward) and torch.pdist (_pdist_forward / _pdist_backward).
// Rows are dense and row-major ([batch, rows, m]); the host expands broadcast batches first.
// The norm is a build option (P_KIND) with ATen's cases: 0 counts the nonzero differences,
// 1 sums |d|, 2 is the root of the sum of squares, 3 the largest |d| (p = inf), 4 any other p
// as (sum |d|^p)^(1/p). The CPU takes float and double only, and so do these kernels.
#include "common.clh"

#ifndef DT
#define DT float  // element and accumulation type: float or double
#endif
#ifndef P_KIND
#define P_KIND 2  // 0: p = 0, 1: p = 1, 2: p = 2, 3: p = inf, 4: other p (runtime argument)
#endif
#ifndef TS
#define TS 16  // cdist_fwd: a work-group computes TS x TS distances
#endif
#ifndef TK
#define TK 32  // cdist_fwd: columns of both row tiles staged in local memory per step
#endif

// acc folded with one difference d. p = inf: the CPU's cdist skips NaN differences (its max
// keeps the running value when a comparison is false) while its pdist propagates them, hence
// nan_max.
inline DT dist_fold(DT acc, DT d, DT p, int nan_max) {
  const DT a = fabs(d);
#if P_KIND == 0
  return acc + (isnan(a) ? a : (DT)(a != (DT)0));
#elif P_KIND == 1
  return acc + a;
#elif P_KIND == 2
  return acc + a * a;
#elif P_KIND == 3
  return (acc < a || (nan_max && isnan(a))) ? a : acc;
#else
  return acc + pow(a, p);
#endif
}

inline DT dist_finish(DT acc, DT p) {
#if P_KIND == 2
  return sqrt(acc);
#elif P_KIND == 4
  return pow(acc, (DT)1 / p);
#else
  return acc;
#endif
}

// Gradient of dist(x, y) in x's element with difference d = x_k - y_k, times g. The forms
// (and their zero cases) are ATen's per norm; p < 2 other than 1 has its own, which avoids
// |d|^(p-2) at d == 0. p = inf: nan_max (pdist) makes a NaN distance's gradient NaN in every
// element, as the CPU's pdist computes it; its cdist only in the NaN element.
inline DT dist_grad(DT d, DT g, DT dist, DT p, int nan_max) {
  const DT s = isnan(d) ? d : (DT)((d > (DT)0) - (d < (DT)0));  // sign: 0 at 0, NaN at NaN (as ATen's)
#if P_KIND == 1
  return g * s;
#elif P_KIND == 2
  return dist == (DT)0 ? (DT)0 : g * d / dist;
#elif P_KIND == 3
  return (nan_max && isnan(dist)) ? dist : g * s * (DT)(fabs(d) == dist);
#elif P_KIND == 4
  if (p < (DT)2)
    return (dist == (DT)0 || (d == (DT)0 && p < (DT)1)) ? (DT)0 : s * pow(fabs(d), p - 1) * g / pow(dist, p - 1);
  return dist == (DT)0 ? (DT)0 : d * pow(fabs(d), p - 2) * g / pow(dist, p - 1);
#else
  return (DT)0;  // p = 0: the host fills zeros instead
#endif
}

// dist(x1[b, i], x2[b, j]) for every (b, i, j): out[b, i, j] (packed == 0), or for pdist
// (packed != 0, x1 == x2, one batch) only the pairs i < j, at n*i - i*(i+1)/2 + j - i - 1.
// A work-group stages TS rows of each operand TK columns at a time; work-item (tj, ti)
// folds row i0 + ti against row j0 + tj. NDRange (ceil(r2/TS)*TS, ceil(r1/TS)*TS, batch),
// local (TS, TS, 1).
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void cdist_fwd(PTR_ARG(DT, x1), PTR_ARG(DT, x2), PTR_ARG(DT, out), long r1, long r2, long m, int packed,
               int nan_max, DT p) {
  __local DT a[TS][TK + 1];  // +1: work-items of a warp read column c of TS different rows
  __local DT b[TS][TK + 1];
  const int tj = get_local_id(0), ti = get_local_id(1);
  const long j0 = get_group_id(0) * TS, i0 = get_group_id(1) * TS, bt = get_global_id(2);
  // A pdist tile wholly on or below the diagonal stores nothing and skips the K loop (no early
  // return: PoCL's unoptimized builds mishandle one ahead of a barrier, taken or not).
  const long k_end = (packed && j0 + TS - 1 <= i0) ? 0 : m;
  __global const DT* A = PTR(DT, x1) + bt * r1 * m;
  __global const DT* B = PTR(DT, x2) + bt * r2 * m;
  DT acc = 0;
  for (long k0 = 0; k0 < k_end; k0 += TK) {
    for (int e = ti * TS + tj; e < TS * TK; e += TS * TS) {
      const int r = e / TK, c = e % TK;
      const long k = k0 + c;
      a[r][c] = (i0 + r < r1 && k < m) ? A[(i0 + r) * m + k] : (DT)0;
      b[r][c] = (j0 + r < r2 && k < m) ? B[(j0 + r) * m + k] : (DT)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int kn = (int)min((long)TK, m - k0);
    for (int c = 0; c < kn; ++c) acc = dist_fold(acc, a[ti][c] - b[tj][c], p, nan_max);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long i = i0 + ti, j = j0 + tj;
  if (i >= r1 || j >= r2) return;
  if (!packed) {
    PTR(DT, out)[(bt * r1 + i) * r2 + j] = dist_finish(acc, p);
  } else if (i < j) {
    PTR(DT, out)[r1 * i - i * (i + 1) / 2 + j - i - 1] = dist_finish(acc, p);
  }
}

// grad_x1[b, i, k] = sum_j dist_grad(x1[b, i, k] - x2[b, j, k], grad[b, i, j], dist[b, i, j]),
// summed in order of j. One work-item per element of x1 ([batch, r1, m], dense).
__kernel void cdist_bwd(PTR_ARG(DT, grad), PTR_ARG(DT, x1), PTR_ARG(DT, x2), PTR_ARG(DT, dist), PTR_ARG(DT, out),
                        long batch, long r1, long r2, long m, DT p) {
  __global const DT* G = PTR(DT, grad);
  __global const DT* D = PTR(DT, dist);
  __global const DT* X2 = PTR(DT, x2);
  FOR_EACH(e, batch * r1 * m) {
    const long k = e % m, row = e / m, bt = row / r1;  // row = bt * r1 + i
    const DT x = PTR(DT, x1)[e];
    DT acc = 0;
    for (long j = 0; j < r2; ++j)
      acc += dist_grad(x - X2[(bt * r2 + j) * m + k], G[row * r2 + j], D[row * r2 + j], p, 0);
    PTR(DT, out)[e] = acc;
  }
}

// grad_x[i, k] = sum over j != i of dist_grad(x[i, k] - x[j, k], grad[pair], dist[pair]) with
// pair the packed index of (min(i, j), max(i, j)): the gradient is odd in the difference, so
// a pair's term for its second row is the first's negated, as for x - y. x is [n, m], dense.
__kernel void pdist_bwd(PTR_ARG(DT, grad), PTR_ARG(DT, x), PTR_ARG(DT, dist), PTR_ARG(DT, out), long n, long m,
                        DT p) {
  __global const DT* G = PTR(DT, grad);
  __global const DT* D = PTR(DT, dist);
  __global const DT* X = PTR(DT, x);
  FOR_EACH(e, n * m) {
    const long k = e % m, i = e / m;
    const DT xi = X[e];
    DT acc = 0;
    for (long j = 0; j < n; ++j) {
      if (j == i) continue;
      const long lo = min(i, j), hi = max(i, j), q = n * lo - lo * (lo + 1) / 2 + hi - lo - 1;
      acc += dist_grad(xi - X[j * m + k], G[q], D[q], p, 1);
    }
    PTR(DT, out)[e] = acc;
  }
}
