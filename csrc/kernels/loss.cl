// Losses: negative log-likelihood (nll_loss and nll_loss2d share these kernels: the input is
// addressed as [N, C, S] through strides, S = 1 for nll_loss), the multi-class margin losses
// (multi_margin_loss, multilabel_margin_loss: one work-group per sample) and a deterministic
// two-stage sum used to reduce elementwise and per-sample losses. Out-of-range targets set the
// device's sticky error flag (raised at the next synchronization point).
#include "common.clh"

#ifndef MAX_WG
#define MAX_WG 256  // work-group size of the reduction kernels
#endif
#ifndef X_KIND
#define X_KIND 0  // storage kind of the loss input: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef Y_KIND
#define Y_KIND 0  // storage kind of the reduced output (sum_final)
#endif
#ifndef TGT_T
#define TGT_T long  // class-index type of nll targets (long or uchar)
#endif
#ifndef ACC
#define ACC float  // accumulation type (double for double tensors, float otherwise)
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define Y_T CAT(ST_, Y_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)
#define STORE_Y(p, i, v) CAT(SV_, Y_KIND)(p, i, v)

// Class of sample i, or -1 when it is ignored; an out-of-range class raises the error flag
// and is treated as ignored.
inline long nll_class(__global const TGT_T* tp, long i, long C, long ignore_index, __global int* err) {
  long t = (long)tp[i];
  if (t == ignore_index) return -1;
  if (t < 0 || t >= C) {
    report_error(err, ERR_INDEX_OUT_OF_RANGE);
    return -1;
  }
  return t;
}

// reduction='none': out[n, s] = -w[t] * x[n, t, s] (0 where ignored). out and target are dense.
__kernel void nll_fwd_none(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, out), long NS,
                           long S, long C, long xs_n, long xs_c, long xs_s, long ignore_index, int has_w,
                           __global int* err) {
  const long i = get_global_id(0);
  if (i >= NS) return;
  const long t = nll_class(PTR(TGT_T, target), i, C, ignore_index, err);
  ACC r = 0;
  if (t >= 0) {
    const long n = i / S, s = i - n * S;
    r = -LOAD_X(PTR(X_T, x), n * xs_n + t * xs_c + s * xs_s) * (has_w ? LOAD_X(PTR(X_T, w), t) : (ACC)1);
  }
  STORE_X(PTR(X_T, out), i, r);
}

// reduction='sum'/'mean' in one work-group: out = sum(-w[t] x[n, t, s]) (/ total_weight
// for mean), total_weight = sum(w[t]) over the samples that are not ignored.
__kernel void nll_fwd_reduce(PTR_ARG(X_T, x), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, out),
                             PTR_ARG(X_T, total_weight), long NS, long S, long C, long xs_n, long xs_c, long xs_s,
                             long ignore_index, int has_w, int mean, __global int* err) {
  __local ACC red_l[MAX_WG];
  __local ACC red_w[MAX_WG];
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  ACC sl = 0, sw = 0;
  for (long i = lid; i < NS; i += L) {
    const long t = nll_class(PTR(TGT_T, target), i, C, ignore_index, err);
    if (t < 0) continue;
    const long n = i / S, s = i - n * S;
    const ACC wt = has_w ? LOAD_X(PTR(X_T, w), t) : (ACC)1;
    sl -= LOAD_X(PTR(X_T, x), n * xs_n + t * xs_c + s * xs_s) * wt;
    sw += wt;
  }
  red_l[lid] = sl;
  red_w[lid] = sw;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) {
      red_l[lid] += red_l[lid + h];
      red_w[lid] += red_w[lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    STORE_X(PTR(X_T, out), 0, mean ? red_l[0] / red_w[0] : red_l[0]);
    STORE_X(PTR(X_T, total_weight), 0, red_w[0]);
  }
}

// grad_input[n, c, s] = -w[t] * g for c == t (else 0), with g = grad_out[n, s] (reduction
// 'none' on batched input) or grad_out[] (/ total_weight for mean). Writes every element of
// the dense grad_input, so no separate zero fill is needed. 2-D range: dim 0 runs over the
// C*S elements of sample n = dim 1 (coalesced writes, no 64-bit division when S == 1).
__kernel void nll_bwd(PTR_ARG(X_T, grad_out), PTR_ARG(TGT_T, target), PTR_ARG(X_T, w), PTR_ARG(X_T, total_weight),
                      PTR_ARG(X_T, gx), long N, long S, long C, long ignore_index, int has_w, int per_sample,
                      int mean) {
  const long j = get_global_id(0), n = get_global_id(1);
  if (j >= C * S || n >= N) return;
  const long c = S == 1 ? j : j / S;
  const long ts = n * S + (j - c * S);
  const long t = (long)PTR(TGT_T, target)[ts];
  ACC r = 0;
  if (t == c && t != ignore_index) {
    ACC g = per_sample ? LOAD_X(PTR(X_T, grad_out), ts) : LOAD_X(PTR(X_T, grad_out), 0);
    if (mean) g /= LOAD_X(PTR(X_T, total_weight), 0);
    r = -g * (has_w ? LOAD_X(PTR(X_T, w), t) : (ACC)1);
  }
  STORE_X(PTR(X_T, gx), n * C * S + j, r);
}

// Stage 1 of a deterministic sum of n dense elements: one partial sum per work-group.
__kernel void sum_partial(PTR_ARG(X_T, a), PTR_ARG(ACC, part), long n) {
  __local ACC red[MAX_WG];
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  ACC s = 0;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) s += LOAD_X(PTR(X_T, a), i);
  red[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) PTR(ACC, part)[get_group_id(0)] = red[0];
}

// Stage 2 (one work-group): out[] = scale * sum(part[0..parts)).
__kernel void sum_final(PTR_ARG(ACC, part), PTR_ARG(Y_T, out), long parts, ACC scale) {
  __local ACC red[MAX_WG];
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  ACC s = 0;
  for (long i = lid; i < parts; i += L) s += PTR(ACC, part)[i];
  red[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) STORE_Y(PTR(Y_T, out), 0, red[0] * scale);
}

// ---- multi_margin_loss / multilabel_margin_loss -------------------------------------------
// One work-group (a power of two, at most MAX_WG work-items, along dimension 0) per sample
// n = get_global_id(1); the input row is x[n * sn + c * sc], c < dim. Per-sample results go
// to out[n * ys] (reduction 'none'), or to an ACC buffer that sum_partial/sum_final reduce.

// The sum of v over the work-group, in every work-item (red: MAX_WG local slots).
inline ACC group_sum(ACC v, __local ACC* red) {
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // red is free again
  return r;
}

// The minimum of v over the work-group, in every work-item.
inline long group_min(long v, __local long* red) {
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) red[lid] = min(red[lid], red[lid + h]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// multi_margin_loss: out[n] = sum over c != t of w[t] * max(0, margin - x[t] + x[c])^p / dim,
// t = target[n] (p is 1 or 2). A target outside [0, dim) raises the error flag (and writes 0).
// Every work-item reaches the group sum: no early return and no `continue` before a barrier
// (PoCL's optimized builds of that form never finished).
__kernel void multi_margin_fwd(PTR_ARG(X_T, x), PTR_ARG(long, target), PTR_ARG(X_T, w), PTR_ARG(Y_T, out), long dim,
                               long sn, long sc, long ys, int has_w, int p, ACC margin, __global int* err) {
  __local ACC red[MAX_WG];
  const long n = get_global_id(1);
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  __global const X_T* xp = PTR(X_T, x) + n * sn;
  const long t = PTR(long, target)[n];
  const bool valid = t >= 0 && t < dim;  // the same for the whole group
  const ACC xt = valid ? LOAD_X(xp, t * sc) : (ACC)0;
  const ACC wt = valid && has_w ? LOAD_X(PTR(X_T, w), t) : (ACC)1;
  ACC s = 0;
  for (long c = valid ? lid : dim; c < dim; c += L) {
    const ACC z = margin - xt + LOAD_X(xp, c * sc);
    if (c != t && z > 0) s += (p == 1 ? z : z * z) * wt;
  }
  s = group_sum(s, red);
  if (lid == 0) {
    if (!valid) report_error(err, ERR_MARGIN_TARGET);
    STORE_Y(PTR(Y_T, out), n * ys, valid ? s / (ACC)dim : (ACC)0);
  }
}

// Its gradient into the dense gx[n, c]: h_c = g * w[t] (p = 1) or 2 g z_c * w[t] (p = 2) where
// z_c = margin - x[t] + x[c] > 0 (else 0), gx[n, t] = -sum h_c; all times grad_out[n * gos]
// (gos = 0: one grad_out for every sample). g = 1 / dim, or 1 / (N * dim) for 'mean'. Like the
// forward, every work-item reaches the group sum.
__kernel void multi_margin_bwd(PTR_ARG(X_T, grad_out), PTR_ARG(X_T, x), PTR_ARG(long, target), PTR_ARG(X_T, w),
                               PTR_ARG(X_T, gx), long dim, long sn, long sc, long gos, int has_w, int p, ACC margin,
                               ACC g, __global int* err) {
  __local ACC red[MAX_WG];
  const long n = get_global_id(1);
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  __global const X_T* xp = PTR(X_T, x) + n * sn;
  __global X_T* gp = PTR(X_T, gx) + n * dim;
  const long t = PTR(long, target)[n];
  const bool valid = t >= 0 && t < dim;
  const ACC xt = valid ? LOAD_X(xp, t * sc) : (ACC)0;
  const ACC wt = valid && has_w ? LOAD_X(PTR(X_T, w), t) : (ACC)1;
  const ACC go = LOAD_X(PTR(X_T, grad_out), n * gos);
  ACC s = 0;
  for (long c = valid ? lid : dim; c < dim; c += L) {
    const ACC z = margin - xt + LOAD_X(xp, c * sc);
    const ACC h = c != t && z > 0 ? (p == 1 ? g : 2 * g * z) * wt : (ACC)0;
    if (c != t) STORE_X(gp, c, h * go);
    s += h;
  }
  s = group_sum(s, red);
  if (lid == 0) {
    if (valid)
      STORE_X(gp, t, -s * go);
    else
      report_error(err, ERR_MARGIN_TARGET);
  }
}

// The number K of leading targets of row tp (the targets before the first -1; dim if none),
// raising the error flag for a target outside [-1, dim). Call from every work-item.
inline long multilabel_count(__global const long* tp, long dim, __local long* redl, __global int* err) {
  long first = dim;
  for (long j = get_local_id(0); j < dim; j += get_local_size(0)) {
    const long v = tp[j];
    if (v < -1 || v >= dim) report_error(err, ERR_MARGIN_TARGET);
    if (v < 0) first = min(first, j);
  }
  return group_min(first, redl);
}

// multilabel_margin_loss: with targets t_0..t_{K-1} (row n of target), is_target[n, c] = 1 where
// c is one of them, and out[n] = sum over j < K and non-target c of max(0, 1 - x[t_j] + x[c]),
// over dim. is_target is dense.
__kernel void multilabel_margin_fwd(PTR_ARG(X_T, x), PTR_ARG(long, target), PTR_ARG(Y_T, out),
                                    PTR_ARG(X_T, is_target), long dim, long sn, long sc, long ys, __global int* err) {
  __local ACC red[MAX_WG];
  __local long redl[MAX_WG];
  const long n = get_global_id(1);
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  __global const X_T* xp = PTR(X_T, x) + n * sn;
  __global const long* tp = PTR(long, target) + n * dim;
  const long K = multilabel_count(tp, dim, redl, err);
  ACC s = 0;
  for (long c = lid; c < dim; c += L) {
    int hit = 0;
    for (long j = 0; j < K; ++j) hit |= tp[j] == c;
    STORE_X(PTR(X_T, is_target), n * dim + c, hit ? 1 : 0);
    if (hit) continue;
    const ACC xc = LOAD_X(xp, c * sc);
    for (long j = 0; j < K; ++j) {
      const long tj = tp[j];
      if (tj >= dim) continue;  // reported
      const ACC z = (ACC)1 - LOAD_X(xp, tj * sc) + xc;
      if (z > 0) s += z;
    }
  }
  s = group_sum(s, red);
  if (lid == 0) STORE_Y(PTR(Y_T, out), n * ys, s / (ACC)dim);
}

// Its gradient into the dense gx[n, c], gathered per element: + g for every (target j,
// non-target c) pair with 1 - x[t_j] + x[c] > 0, - g for every such pair whose target is c
// (once per occurrence of c among the targets); all times grad_out[n * gos]. "Non-target"
// reads the given is_target (dense; entries outside [0, 1] raise the error flag).
__kernel void multilabel_margin_bwd(PTR_ARG(X_T, grad_out), PTR_ARG(X_T, x), PTR_ARG(long, target),
                                    PTR_ARG(X_T, is_target), PTR_ARG(X_T, gx), long dim, long sn, long sc, long gos,
                                    ACC g, __global int* err) {
  __local long redl[MAX_WG];
  const long n = get_global_id(1);
  const int lid = (int)get_local_id(0), L = (int)get_local_size(0);
  __global const X_T* xp = PTR(X_T, x) + n * sn;
  __global const X_T* ip = PTR(X_T, is_target) + n * dim;
  __global const long* tp = PTR(long, target) + n * dim;
  const long K = multilabel_count(tp, dim, redl, err);
  const ACC go = LOAD_X(PTR(X_T, grad_out), n * gos);
  for (long c = lid; c < dim; c += L) {
    const ACC xc = LOAD_X(xp, c * sc), ic = LOAD_X(ip, c);
    if (!(ic >= 0 && ic <= 1)) report_error(err, ERR_MARGIN_TARGET);
    long pos = 0, occ = 0;
    for (long j = 0; j < K; ++j) {
      const long tj = tp[j];
      if (tj >= dim) continue;  // reported
      occ += tj == c;
      if (ic == 0 && (ACC)1 - LOAD_X(xp, tj * sc) + xc > 0) ++pos;
    }
    long neg = 0;
    if (occ > 0)
      for (long c2 = 0; c2 < dim; ++c2)
        if (LOAD_X(ip, c2) == 0 && (ACC)1 - xc + LOAD_X(xp, c2 * sc) > 0) ++neg;
    STORE_X(PTR(X_T, gx), n * dim + c, (ACC)(pos - occ * neg) * g * go);
  }
}
