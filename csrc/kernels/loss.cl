// Losses: negative log-likelihood (nll_loss and nll_loss2d share these kernels: the input is
// addressed as [N, C, S] through strides, S = 1 for nll_loss) and a deterministic two-stage
// sum used to reduce elementwise losses (mse, binary cross-entropy). Out-of-range targets set
// the device's sticky error flag (IndexError at the next synchronization point).
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
