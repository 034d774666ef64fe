// Symmetric eigendecomposition and SVD for csrc/ops/eigh.cpp by one-sided (Hestenes) Jacobi:
// plane rotations of column pairs of a work matrix W (rows x cols, column-major, one matrix
// after another) until its columns are orthogonal, accumulating them in V (cols x cols).
// SVD: W = A (or A^T for wide A), so W = U S and A = U S V^T. Eigh: W = A + shift I with a
// shift that makes it positive semidefinite, so the same V holds A's eigenvectors.
// Work matrices are contiguous; inputs and outputs are (batch, rows, cols) of any strides.
// Per-matrix state, int flags[4 * b + k]: k = 0 the input had a NaN or inf, 1 converged,
// 2 some pair was rotated in the current sweep, 3 sweeps run.
#include "common.clh"

#ifndef DT
#define DT float  // element type: float or double (the CPU's LAPACK takes no other)
#endif
#ifdef DT_IS_DOUBLE
#define DT4 double4
#define DT_SAFE_MIN DBL_MIN
#define DT_EPS DBL_EPSILON
#define DT_NAN ((double)NAN)
#else
#define DT4 float4
#define DT_SAFE_MIN FLT_MIN
#define DT_EPS FLT_EPSILON
#define DT_NAN NAN
#endif

#define F_NONFINITE 0
#define F_DONE 1
#define F_ROTATED 2
#define F_SWEEPS 3

#define AT(M, i, j) M[(i) * M##_rs + (j) * M##_cs]

// Work-group sum of a, b and c over the local size (a power of two); red holds 3 x wg.
// Every work-item gets the totals. Contains barriers: call from all items.
inline void group_sum3(__local DT* red, __private DT* a, __private DT* b, __private DT* c) {
  const int lid = get_local_id(0), wg = get_local_size(0);
  red[lid] = *a;
  red[wg + lid] = *b;
  red[2 * wg + lid] = *c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = wg / 2; s > 0; s >>= 1) {
    if (lid < s) {
      red[lid] += red[lid + s];
      red[wg + lid] += red[wg + lid + s];
      red[2 * wg + lid] += red[2 * wg + lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *a = red[0];
  *b = red[wg];
  *c = red[2 * wg];
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Work-group max of m (NaN-free) and or of bad; red holds 2 x wg. Every item gets them.
inline void group_max_or(__local DT* red, __private DT* m, __private int* bad) {
  const int lid = get_local_id(0), wg = get_local_size(0);
  red[lid] = *m;
  red[wg + lid] = (DT)*bad;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = wg / 2; s > 0; s >>= 1) {
    if (lid < s) {
      red[lid] = fmax(red[lid], red[lid + s]);
      red[wg + lid] = fmax(red[wg + lid], red[wg + lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *m = red[0];
  *bad = red[wg] != (DT)0;
  barrier(CLK_LOCAL_MEM_FENCE);
}

// The power-of-two exponent that scales a matrix of largest |entry| amax into [1, 2): exact
// scaling, so sums of squares neither overflow nor underflow. 0 for a zero matrix.
inline int scale_exponent(DT amax) { return amax > (DT)0 ? ilogb(amax) : 0; }

// A prep kernel's common step, from each work-item's max |entry| m and non-finite flag bad:
// the matrix's scale exponent (stored in *expo and returned; 0 for a non-finite matrix, which
// is marked done) and its four flags reset.
inline int start_matrix(__local DT* red, DT m, int bad, __global int* expo, __global int* F) {
  group_max_or(red, &m, &bad);
  const int e = bad ? 0 : scale_exponent(m);
  if (get_local_id(0) == 0) {
    *expo = e;
    F[F_NONFINITE] = bad;
    F[F_DONE] = bad;
    F[F_ROTATED] = 0;
    F[F_SWEEPS] = 0;
  }
  return e;
}

// 1 / ||x|| for a column of n entries near unit norm (products of rotations drift from it by
// some eps per rotation; the outputs are normalized).
inline DT inv_norm(__global const DT* x, long n) {
  DT acc = (DT)0;
  for (long i = 0; i < n; ++i) acc += x[i] * x[i];
  return acc > (DT)0 ? (DT)1 / sqrt(acc) : (DT)1;
}

// ---- eigh ---------------------------------------------------------------------------------

// One work-group per matrix (group 0 = batch). From the triangle of A named by `upper` (the
// other one is never read): S = the symmetric matrix scaled by 2^-e (e = expo[b]),
// W = S + shift I with shift = max(0, -Gershgorin's lower bound), so W is positive
// semidefinite (its singular vectors are then its eigenvectors, with no +-lambda ambiguity),
// and V = I. S, W, V: n x n column-major. red: 2 x wg.
__kernel void eigh_prep(PTR_ARG(DT, a), long a_bs, long A_rs, long A_cs, long n, int upper, PTR_ARG(DT, s),
                        PTR_ARG(DT, w), PTR_ARG(DT, v), PTR_ARG(int, expo), PTR_ARG(int, flags),
                        __local DT* red) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global const DT* A = PTR(DT, a) + b * a_bs;
  __global DT* S = PTR(DT, s) + b * n * n;
  __global DT* W = PTR(DT, w) + b * n * n;
  __global DT* V = PTR(DT, v) + b * n * n;
  DT m = (DT)0;
  int bad = 0;
  for (long t = lid; t < n * n; t += wg) {
    const long i = t % n, j = t / n;
    if (upper ? i <= j : i >= j) {
      const DT x = AT(A, i, j);
      bad |= !isfinite(x);
      if (isfinite(x)) m = fmax(m, fabs(x));
    }
  }
  const int e = start_matrix(red, m, bad, PTR(int, expo) + b, PTR(int, flags) + 4 * b);
  // Gershgorin: every eigenvalue is at least min_i (s_ii - sum_{j != i} |s_ij|).
  DT lo = (DT)INFINITY;
  for (long i = lid; i < n; i += wg) {
    DT r = (DT)0, d = (DT)0;
    for (long j = 0; j < n; ++j) {
      const DT x = ldexp((upper ? i <= j : i >= j) ? AT(A, i, j) : AT(A, j, i), -e);
      if (j == i)
        d = x;
      else
        r += fabs(x);
    }
    lo = fmin(lo, d - r);
  }
  DT neg = -lo;
  int unused = 0;
  group_max_or(red, &neg, &unused);
  const DT shift = neg > (DT)0 && isfinite(neg) ? neg : (DT)0;
  for (long t = lid; t < n * n; t += wg) {
    const long i = t % n, j = t / n;
    const DT x = ldexp((upper ? i <= j : i >= j) ? AT(A, i, j) : AT(A, j, i), -e);
    S[t] = x;
    W[t] = i == j ? x + shift : x;
    V[t] = i == j ? (DT)1 : (DT)0;
  }
}

// lam[b, j] = v_j . R[:, j] / v_j . v_j * 2^e (R = S V, by the GEMM): the Rayleigh quotients
// of S's eigenvectors, A's eigenvalues (unsorted); NaN for a matrix with a NaN or inf.
// Work-item j + n * b.
__kernel void eigh_values(PTR_ARG(DT, v), PTR_ARG(DT, r), long n, long batch, PTR_ARG(int, expo),
                          PTR_ARG(int, flags), PTR_ARG(DT, lam)) {
  const long j = get_global_id(0) % n, b = get_global_id(0) / n;
  if (b >= batch) return;
  __global const DT* V = PTR(DT, v) + b * n * n + j * n;
  __global const DT* R = PTR(DT, r) + b * n * n + j * n;
  DT acc = (DT)0, nrm = (DT)0;
  for (long i = 0; i < n; ++i) {
    acc += V[i] * R[i];
    nrm += V[i] * V[i];
  }
  PTR(DT, lam)[b * n + j] = PTR(int, flags)[4 * b + F_NONFINITE] ? DT_NAN : ldexp(acc / nrm, PTR(int, expo)[b]);
}

// Eigenvalues ascending (ties by position, NaN last, as a stable sort) into vals (batch, n)
// contiguous, and with compute_v the matching columns of V into vecs (any strides; NaN for a
// matrix with a NaN or inf). Work-item j + n * b.
__kernel void eigh_sort(PTR_ARG(DT, lam), long n, long batch, PTR_ARG(DT, v), PTR_ARG(int, flags),
                        PTR_ARG(DT, vals), PTR_ARG(DT, vecs), long vecs_bs, long X_rs, long X_cs, int compute_v) {
  const long j = get_global_id(0) % n, b = get_global_id(0) / n;
  if (b >= batch) return;
  __global const DT* L = PTR(DT, lam) + b * n;
  const DT key = L[j];
  long rank = 0;
  for (long i = 0; i < n; ++i) {
    const DT x = L[i];
    const int less = x < key || (isnan(key) && !isnan(x));
    const int same = x == key || (isnan(x) && isnan(key));
    rank += less || (same && i < j);
  }
  PTR(DT, vals)[b * n + rank] = key;
  if (!compute_v) return;
  const int bad = PTR(int, flags)[4 * b + F_NONFINITE];
  __global const DT* Vj = PTR(DT, v) + b * n * n + j * n;
  __global DT* X = PTR(DT, vecs) + b * vecs_bs;
  const DT f = inv_norm(Vj, n);
  for (long i = 0; i < n; ++i) AT(X, i, rank) = bad ? DT_NAN : Vj[i] * f;
}

// ---- SVD ----------------------------------------------------------------------------------

// One work-group per matrix: W = T * 2^-e (T: rows x cols, the tall orientation of A, any
// strides; e = expo[b] scales its largest |entry| into [1, 2)), V = I (cols x cols) when
// has_v. Flags as above. red: 2 x wg.
__kernel void svd_prep(PTR_ARG(DT, t), long t_bs, long T_rs, long T_cs, long rows, long cols, PTR_ARG(DT, w),
                       PTR_ARG(DT, v), int has_v, PTR_ARG(int, expo), PTR_ARG(int, flags), __local DT* red) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global const DT* T = PTR(DT, t) + b * t_bs;
  __global DT* W = PTR(DT, w) + b * rows * cols;
  DT m = (DT)0;
  int bad = 0;
  for (long k = lid; k < rows * cols; k += wg) {
    const DT x = AT(T, k % rows, k / rows);
    bad |= !isfinite(x);
    if (isfinite(x)) m = fmax(m, fabs(x));
  }
  const int e = start_matrix(red, m, bad, PTR(int, expo) + b, PTR(int, flags) + 4 * b);
  for (long k = lid; k < rows * cols; k += wg) W[k] = ldexp(AT(T, k % rows, k / rows), -e);
  if (has_v) {
    __global DT* V = PTR(DT, v) + b * cols * cols;
    for (long k = lid; k < cols * cols; k += wg) V[k] = k % cols == k / cols ? (DT)1 : (DT)0;
  }
}

// sig[b, j] = ||W[:, j]|| (scaled units; two passes, so no square underflows).
// Work-item j + cols * b.
__kernel void svd_values(PTR_ARG(DT, w), long rows, long cols, long batch, PTR_ARG(DT, sig)) {
  const long j = get_global_id(0) % cols, b = get_global_id(0) / cols;
  if (b >= batch) return;
  __global const DT* Wj = PTR(DT, w) + b * rows * cols + j * rows;
  DT m = (DT)0;
  for (long i = 0; i < rows; ++i) m = fmax(m, fabs(Wj[i]));
  DT acc = (DT)0;
  if (m > (DT)0)
    for (long i = 0; i < rows; ++i) {
      const DT x = Wj[i] / m;
      acc += x * x;
    }
  PTR(DT, sig)[b * cols + j] = m * sqrt(acc);
}

// Columns whose norm (scaled units, the largest |entry| of W in [1, 2)) is at most this are
// taken as zero: below it the rotations' sums of squares lose their relative accuracy.
#define SVD_TINY (sqrt(DT_SAFE_MIN) / DT_EPS)

// Singular values descending (ties by position, NaN first, as a stable descending sort):
// S (batch, cols) contiguous gets sig * 2^e, sorted (batch, cols) the scaled ones. With
// has_uv, column j of V (normalized) goes to column rank of short (cols x cols, any strides) and
// W[:, j] / sig_j to column rank of tall (rows x >= cols, any strides), zeros for a column
// taken as zero (svd_complete replaces them). NaN outputs for a matrix with a NaN or inf.
// Work-item j + cols * b.
__kernel void svd_sort(PTR_ARG(DT, sig), long rows, long cols, long batch, PTR_ARG(DT, w), PTR_ARG(DT, v),
                       PTR_ARG(int, expo), PTR_ARG(int, flags), PTR_ARG(DT, s_out), PTR_ARG(DT, sorted),
                       PTR_ARG(DT, shrt), long shrt_bs, long X_rs, long X_cs, PTR_ARG(DT, tall), long tall_bs,
                       long Y_rs, long Y_cs, int has_uv) {
  const long j = get_global_id(0) % cols, b = get_global_id(0) / cols;
  if (b >= batch) return;
  __global const DT* G = PTR(DT, sig) + b * cols;
  const DT key = G[j];
  long rank = 0;
  for (long i = 0; i < cols; ++i) {
    const DT x = G[i];
    const int greater = x > key || (isnan(x) && !isnan(key));
    const int same = x == key || (isnan(x) && isnan(key));
    rank += greater || (same && i < j);
  }
  const int bad = PTR(int, flags)[4 * b + F_NONFINITE];
  PTR(DT, s_out)[b * cols + rank] = bad ? DT_NAN : ldexp(key, PTR(int, expo)[b]);
  PTR(DT, sorted)[b * cols + rank] = bad ? DT_NAN : key;
  if (!has_uv) return;
  __global const DT* Vj = PTR(DT, v) + b * cols * cols + j * cols;
  __global DT* X = PTR(DT, shrt) + b * shrt_bs;
  const DT f = inv_norm(Vj, cols);
  for (long i = 0; i < cols; ++i) AT(X, i, rank) = bad ? DT_NAN : Vj[i] * f;
  __global const DT* Wj = PTR(DT, w) + b * rows * cols + j * rows;
  __global DT* Y = PTR(DT, tall) + b * tall_bs;
  const int zero = !(key > SVD_TINY);
  for (long i = 0; i < rows; ++i) AT(Y, i, rank) = bad ? DT_NAN : zero ? (DT)0 : Wj[i] / key;
}

// The number of sorted singular values (scaled units) above SVD_TINY: the columns of the tall
// factor that are W's normalized columns; the rest are completed.
inline long good_columns(__global const DT* sorted, long cols) {
  long r = 0;
  while (r < cols && sorted[r] > SVD_TINY) ++r;
  return r;
}

// One work-group per matrix: the Householder QR H_0 ... H_{r-1} of the first r columns of the
// tall factor U (rows x >= cols, any strides; orthonormal columns, r = good_columns), the
// reflectors below the diagonal of h (rows x cols column-major, unit leading entries
// implied), their scales in tau. Nothing to do when U needs no completion (r == ucols) or the
// matrix had a NaN or inf. red: 3 x wg.
__kernel void svd_complete_qr(PTR_ARG(DT, u), long u_bs, long U_rs, long U_cs, long rows, long cols, long ucols,
                              PTR_ARG(DT, sorted), PTR_ARG(int, flags), PTR_ARG(DT, h), PTR_ARG(DT, tau),
                              __local DT* red) {
  const long b = get_group_id(0);
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global const DT* U = PTR(DT, u) + b * u_bs;
  __global DT* H = PTR(DT, h) + b * rows * cols;
  __global DT* Tau = PTR(DT, tau) + b * cols;
  const long r = good_columns(PTR(DT, sorted) + b * cols, cols);
  if (PTR(int, flags)[4 * b + F_NONFINITE] || r == ucols) return;
  for (long t = lid; t < rows * r; t += wg) H[t] = AT(U, t % rows, t / rows);
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long j = 0; j < r; ++j) {
    __global DT* Hj = H + j * rows;
    DT ss = (DT)0, u1 = (DT)0, u2 = (DT)0;
    for (long i = j + lid; i < rows; i += wg) ss += Hj[i] * Hj[i];
    group_sum3(red, &ss, &u1, &u2);
    const DT nrm = sqrt(ss), alpha = Hj[j];
    const DT beta = alpha >= (DT)0 ? -nrm : nrm;
    const int skip = nrm == (DT)0;
    const DT scale = skip ? (DT)0 : (DT)1 / (alpha - beta);
    const DT tj = skip ? (DT)0 : (beta - alpha) / beta;
    barrier(CLK_GLOBAL_MEM_FENCE);  // everyone has read H[j, j]
    for (long i = j + 1 + lid; i < rows; i += wg) Hj[i] *= scale;
    if (lid == 0) {
      Tau[j] = tj;
      if (!skip) Hj[j] = beta;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    // H_j = I - tau v v^T (v = (1, H[j+1:, j])) applied to the columns after j, one per item.
    for (long c = j + 1 + lid; c < r; c += wg) {
      __global DT* Hc = H + c * rows;
      DT d = Hc[j];
      for (long i = j + 1; i < rows; ++i) d += Hj[i] * Hc[i];
      d *= tj;
      Hc[j] -= d;
      for (long i = j + 1; i < rows; ++i) Hc[i] -= d * Hj[i];
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// Column c in [r, ucols) of the tall factor U = H_0 ... H_{r-1} e_c (svd_complete_qr's
// reflectors): orthonormal, and orthogonal to U's first r columns. NaN columns from cols on
// for a matrix with a NaN or inf. Work-item c + ucols * b.
__kernel void svd_complete_cols(PTR_ARG(DT, u), long u_bs, long U_rs, long U_cs, long rows, long cols, long ucols,
                                long batch, PTR_ARG(DT, sorted), PTR_ARG(int, flags), PTR_ARG(DT, h),
                                PTR_ARG(DT, tau)) {
  const long c = get_global_id(0) % ucols, b = get_global_id(0) / ucols;
  if (b >= batch) return;
  __global DT* U = PTR(DT, u) + b * u_bs;
  if (PTR(int, flags)[4 * b + F_NONFINITE]) {
    if (c >= cols)
      for (long i = 0; i < rows; ++i) AT(U, i, c) = DT_NAN;
    return;
  }
  const long r = good_columns(PTR(DT, sorted) + b * cols, cols);
  if (c < r) return;
  __global const DT* H = PTR(DT, h) + b * rows * cols;
  __global const DT* Tau = PTR(DT, tau) + b * cols;
  for (long i = 0; i < rows; ++i) AT(U, i, c) = i == c ? (DT)1 : (DT)0;
  for (long j = r - 1; j >= 0; --j) {
    __global const DT* Hj = H + j * rows;
    DT d = AT(U, j, c);
    for (long i = j + 1; i < rows; ++i) d += Hj[i] * AT(U, i, c);
    d *= Tau[j];
    AT(U, j, c) -= d;
    for (long i = j + 1; i < rows; ++i) AT(U, i, c) -= d * Hj[i];
  }
}

// ---- the Jacobi rotations -----------------------------------------------------------------

// Over the entries lane, lane + lanes, ... of two columns x, y of n (in fours, then the rest):
// the sums of x.x, y.y and x.y (or x.y alone); and the rotation [x, y] <- [x - s (y + r x),
// y + s (x - r y)].
// Fours are one vector load (CPU devices compute them in SIMD); neighbouring lanes still read
// neighbouring addresses.
inline void dots3(__global const DT* x, __global const DT* y, long n, long lane, long lanes, __private DT* xx,
                  __private DT* yy, __private DT* xy) {
  DT4 a = (DT4)0, b = (DT4)0, c = (DT4)0;
  const long n4 = n / 4;
  for (long i = lane; i < n4; i += lanes) {
    const DT4 u = vload4(i, x), v = vload4(i, y);
    a += u * u;
    b += v * v;
    c += u * v;
  }
  DT sa = (a.x + a.y) + (a.z + a.w), sb = (b.x + b.y) + (b.z + b.w), sc = (c.x + c.y) + (c.z + c.w);
  for (long i = 4 * n4 + lane; i < n; i += lanes) {
    const DT u = x[i], v = y[i];
    sa += u * u;
    sb += v * v;
    sc += u * v;
  }
  *xx = sa;
  *yy = sb;
  *xy = sc;
}

inline DT dot1(__global const DT* x, __global const DT* y, long n, long lane, long lanes) {
  DT4 c = (DT4)0;
  const long n4 = n / 4;
  for (long i = lane; i < n4; i += lanes) c += vload4(i, x) * vload4(i, y);
  DT sc = (c.x + c.y) + (c.z + c.w);
  for (long i = 4 * n4 + lane; i < n; i += lanes) sc += x[i] * y[i];
  return sc;
}

inline void rotate2(__global DT* x, __global DT* y, long n, long lane, long lanes, DT s, DT r) {
  const long n4 = n / 4;
  for (long i = lane; i < n4; i += lanes) {
    const DT4 u = vload4(i, x), v = vload4(i, y);
    vstore4(u - s * (v + r * u), i, x);
    vstore4(v + s * (u - r * v), i, y);
  }
  for (long i = 4 * n4 + lane; i < n; i += lanes) {
    const DT u = x[i], v = y[i];
    x[i] = u - s * (v + r * u);
    y[i] = v + s * (u - r * v);
  }
}

// Start of sweep `sweep` of the multi-group mode: a matrix whose previous sweep rotated
// nothing has converged. Work-item b.
__kernel void jacobi_begin(PTR_ARG(int, flags), long batch, int sweep) {
  const long b = get_global_id(0);
  if (b >= batch) return;
  __global int* F = PTR(int, flags) + 4 * b;
  if (sweep > 0 && !F[F_ROTATED]) F[F_DONE] = 1;
  F[F_ROTATED] = 0;
  F[F_SWEEPS] += !F[F_DONE];
}

// First column of block k of `nb` near-equal blocks of `cols` columns.
inline long block_start(long k, long cols, long nb) { return k * cols / nb; }

// Positions (x, y) among a group's columns of pair k of inner round u, or x = -1 for none.
// Round-robin (the circle method: P2 - 1 rounds of P2 / 2 disjoint pairs meet every pair of
// P2 positions once) over csize columns; or, cross, every (k, ni + (k + u) % nj): the first
// ni columns against the next nj (ni <= nj: nj rounds of ni disjoint pairs, each pair once).
inline void pair_of(int cross, long u, long k, long csize, long P2, long ni, long nj, __private long* x,
                    __private long* y) {
  if (cross) {
    *x = k;
    *y = ni + (k + u) % nj;
    return;
  }
  if (k == 0) {
    *x = u;
    *y = P2 - 1;
  } else {
    *x = (u + k) % (P2 - 1);
    *y = (u - k + P2 - 1) % (P2 - 1);
  }
  if (*x >= csize || *y >= csize) *x = -1;
}

// The column of W at position l of a group's columns: c0 + l, or (cross) block I's ni columns
// from I0, then block J's from J0.
inline long column_of(long l, int cross, long c0, long I0, long J0, long ni) {
  return cross ? (l < ni ? I0 + l : J0 + l - ni) : c0 + l;
}

// Rotations of column pairs of W (rows x cols) and V (cols x cols, when has_v), one
// work-group per set of columns (group g + groups * b):
// mode 0: all columns, sweeps (every pair, in round-robin rounds of disjoint pairs) until one
//         rotates nothing or max_sweeps ran;
// mode 1: group g takes block g of nb: one sweep over the pairs inside it;
// mode 2: group g takes the g-th block pair of round `round` of the circle method over P
//         (nb rounded up to even) blocks: one sweep over the pairs across the two blocks.
// Pair (p, q) is rotated when |w_p.w_q| > tol ||w_p|| ||w_q|| and both norms exceed SVD_TINY,
// by the angle that makes them orthogonal (Rutishauser's formulas). Each pair's dot products
// are summed by `lanes` work-items, which then rotate its columns. The squared column norms
// are kept in nrm and updated by the rotations (||w_p'||^2 = ||w_p||^2 - t w_p.w_q, t = tan of
// the angle), so a round mostly needs w_p.w_q alone; a norm is summed afresh at the start of
// a sweep or launch and after shrinking fourfold (cancellation). red: 3 x wg; tau, sn: one
// entry per pair of a round, pq two; nrm: one per column of the group.
__kernel void jacobi_rotate(PTR_ARG(DT, w), long rows, long cols, PTR_ARG(DT, v), int has_v, PTR_ARG(int, flags),
                            int mode, long groups, long nb, long P, long round, int max_sweeps, DT tol,
                            __local DT* red, __local DT* tau, __local DT* sn, __local int* pq, __local DT* nrm,
                            __local int* any) {
  const long g = get_group_id(0) % groups, b = get_group_id(0) / groups;
  const int lid = get_local_id(0), wg = get_local_size(0);
  __global int* F = PTR(int, flags) + 4 * b;
  if (F[F_DONE]) return;
  __global DT* W = PTR(DT, w) + b * rows * cols;
  __global DT* V = PTR(DT, v) + (has_v ? b * cols * cols : 0);
  const DT tiny2 = SVD_TINY * SVD_TINY;

  // The columns of this group.
  int cross = 0;
  long c0 = 0, csize = cols, I0 = 0, J0 = 0, ni = 0, nj = 0;
  if (mode == 1) {
    c0 = block_start(g, cols, nb);
    csize = block_start(g + 1, cols, nb) - c0;
  } else if (mode == 2) {
    long x, y;
    if (g == 0) {
      x = round;
      y = P - 1;
    } else {
      x = (round + g) % (P - 1);
      y = (round - g + P - 1) % (P - 1);
    }
    if (x >= nb || y >= nb) return;  // the dummy block of an odd count
    const long xs = block_start(x, cols, nb), xn = block_start(x + 1, cols, nb) - xs;
    const long ys = block_start(y, cols, nb), yn = block_start(y + 1, cols, nb) - ys;
    cross = 1;
    // The smaller block gives the pairs of a round, the larger one the rounds.
    if (xn <= yn) {
      I0 = xs, ni = xn, J0 = ys, nj = yn;
    } else {
      I0 = ys, ni = yn, J0 = xs, nj = xn;
    }
    csize = ni + nj;
  }
  const long P2 = csize + (csize & 1);
  const long nrounds = cross ? nj : P2 - 1, npairs = cross ? ni : P2 / 2;
  if (nrounds <= 0 || npairs <= 0) return;
  // Work-items per pair for the dot products: a power of two, no more than rows need.
  long pp = 1;
  while (pp < npairs) pp <<= 1;
  long lanes = wg / pp > 1 ? wg / pp : 1;
  while (lanes > 1 && lanes / 2 >= (rows + 3) / 4) lanes >>= 1;
  const long slots = wg / lanes, lane = lid % lanes;
  const int sweeps = mode == 0 ? max_sweeps : 1;

  for (int sweep = 0; sweep < sweeps; ++sweep) {
    if (lid == 0) *any = 0;
    for (long l = lid; l < csize; l += wg) nrm[l] = (DT)-1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long u = 0; u < nrounds; ++u) {
      for (long k0 = 0; k0 < npairs; k0 += slots) {
        const long k = k0 + lid / lanes;
        long x = -1, y = -1, p = -1, q = -1;
        if (k < npairs) pair_of(cross, u, k, csize, P2, ni, nj, &x, &y);
        DT aa = (DT)0, bb = (DT)0, ab = (DT)0;
        int fresh = 0;
        if (x >= 0) {
          p = column_of(x, cross, c0, I0, J0, ni);
          q = column_of(y, cross, c0, I0, J0, ni);
          fresh = nrm[x] < (DT)0 || nrm[y] < (DT)0;
          if (fresh)
            dots3(W + p * rows, W + q * rows, rows, lane, lanes, &aa, &bb, &ab);
          else
            ab = dot1(W + p * rows, W + q * rows, rows, lane, lanes);
        }
        red[lid] = aa;
        red[wg + lid] = bb;
        red[2 * wg + lid] = ab;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (long s = lanes / 2; s > 0; s >>= 1) {
          if (lane < s) {
            red[lid] += red[lid + s];
            red[wg + lid] += red[wg + lid + s];
            red[2 * wg + lid] += red[2 * wg + lid + s];
          }
          barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lane == 0 && k < npairs) {
          DT c = (DT)1, s = (DT)0;
          if (x >= 0) {
            aa = nrm[x] < (DT)0 ? red[lid] : nrm[x];
            bb = nrm[y] < (DT)0 ? red[wg + lid] : nrm[y];
            ab = red[2 * wg + lid];
            if (aa > tiny2 && bb > tiny2 && fabs(ab) > tol * sqrt(aa) * sqrt(bb)) {
              const DT zeta = (bb - aa) / ((DT)2 * ab);
              const DT t = copysign((DT)1, zeta) / (fabs(zeta) + hypot((DT)1, zeta));
              c = (DT)1 / sqrt((DT)1 + t * t);
              s = c * t;
              *any = 1;
              const DT na = aa - t * ab, nb2 = bb + t * ab;
              aa = na < (DT)0.25 * aa ? (DT)-1 : na;
              bb = nb2 < (DT)0.25 * bb ? (DT)-1 : nb2;
            }
            nrm[x] = aa;
            nrm[y] = bb;
          }
          tau[k] = s / ((DT)1 + c);
          sn[k] = s;
          pq[2 * k] = (int)p;
          pq[2 * k + 1] = (int)q;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      // [w_p, w_q] <- [c w_p - s w_q, s w_p + c w_q], and the same for V's columns, in
      // Rutishauser's form with tau = s / (1 + c) (c = 1 - s tau): c itself rounds to 1 for
      // small angles, and 1 and s would lengthen both columns by sqrt(1 + s^2) every time.
      for (long k0 = 0; k0 < npairs; k0 += slots) {
        const long k = k0 + lid / lanes;
        if (k >= npairs || sn[k] == (DT)0) continue;
        const long p = pq[2 * k], q = pq[2 * k + 1];
        rotate2(W + p * rows, W + q * rows, rows, lane, lanes, sn[k], tau[k]);
        if (has_v) rotate2(V + p * cols, V + q * cols, cols, lane, lanes, sn[k], tau[k]);
      }
      barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
    const int rotated = *any;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mode != 0) {
      if (rotated && lid == 0) atomic_or((volatile __global int*)(F + F_ROTATED), 1);
      return;
    }
    if (lid == 0) F[F_SWEEPS] = sweep + 1;
    if (!rotated) break;
  }
}
