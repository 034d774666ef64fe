// Connectionist temporal classification loss for csrc/ops/ctc.cpp (_ctc_loss and its backward).
// One work-group per batch element runs the forward (alpha) or backward (beta) recursion over
// time; the 2L+1 states of the blank-extended target (blank, l1, blank, l2, ..., blank) are
// strided over its work-items, with a barrier per time step. Log-space sums use the CPU's form
// (the maximum of the terms factored out, 0 when every term is -inf). log_probs is read through
// its strides [T, N, C]; targets are int64, batch element b's labels at meta[b].target_offset.
// DT is float or double (the CPU's ctc takes those only).
#include "common.clh"

#ifndef DT
#define DT float  // element and arithmetic type: float or double
#endif

// Per batch element: input length, target length, offset of its first label in targets.
#define META_INPUT_LEN(b) PTR(long, meta)[3 * (b)]
#define META_TARGET_LEN(b) PTR(long, meta)[3 * (b) + 1]
#define META_TARGET_OFF(b) PTR(long, meta)[3 * (b) + 2]

// log(exp(a) + exp(b) + exp(c)) as the CPU computes it.
inline DT lse3(DT a, DT b, DT c) {
  DT m = fmax(a, fmax(b, c));
  if (m == -INFINITY) m = (DT)0;
  return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

// Label of extended state s: blank for even s, else the ((s - 1) / 2)-th target label. A label
// outside [0, C) raises through the error flag and reads class 0 instead.
inline long ctc_label(__global const long* tg, long s, int blank, long C, __global int* err) {
  if ((s & 1) == 0) return blank;
  const long c = tg[s >> 1];
  if (c < 0 || c >= C) {
    report_error(err, ERR_CTC_TARGET);
    return 0;
  }
  return c;
}

// log_alpha[b, t, s] for t < input length (every s < S2: -inf past 2L) and nll[b] = -log p(target).
// An element with input length 0 has likelihood 1 for an empty target and 0 otherwise.
__kernel void ctc_loss_fwd(PTR_ARG(DT, lp), long st, long sn, long sc, PTR_ARG(long, targets),
                           PTR_ARG(long, meta), PTR_ARG(DT, log_alpha), PTR_ARG(DT, nll), long T, long S2,
                           long C, int blank, __global int* err) {
  const long b = get_group_id(0);
  const long lid = get_local_id(0), lsz = get_local_size(0);
  const long Ti = META_INPUT_LEN(b), L = META_TARGET_LEN(b), S = 2 * L + 1;
  __global const long* tg = PTR(long, targets) + META_TARGET_OFF(b);
  __global const DT* lpb = PTR(DT, lp) + b * sn;
  __global DT* la = PTR(DT, log_alpha) + b * T * S2;
  if (Ti > 0) {
    for (long s = lid; s < S2; s += lsz) {
      DT v = -INFINITY;
      if (s == 0 || (s == 1 && L > 0)) v = lpb[ctc_label(tg, s, blank, C, err) * sc];
      la[s] = v;
    }
  }
  for (long t = 1; t < Ti; ++t) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    __global const DT* prev = la + (t - 1) * S2;
    __global DT* cur = la + t * S2;
    for (long s = lid; s < S2; s += lsz) {
      DT v = -INFINITY;
      if (s < S) {
        const long c = ctc_label(tg, s, blank, C, err);
        const DT a1 = prev[s];
        const DT a2 = s > 0 ? prev[s - 1] : (DT)(-INFINITY);
        const DT a3 = (s > 1 && c != ctc_label(tg, s - 2, blank, C, err)) ? prev[s - 2] : (DT)(-INFINITY);
        v = lse3(a1, a2, a3) + lpb[t * st + c * sc];
      }
      cur[s] = v;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) {
    DT ll;
    if (Ti == 0) {
      ll = L == 0 ? (DT)0 : (DT)(-INFINITY);
    } else {
      __global const DT* last = la + (Ti - 1) * S2;
      ll = L == 0 ? last[0] : lse3(last[2 * L], last[2 * L - 1], (DT)(-INFINITY));
    }
    PTR(DT, nll)[b] = -ll;
  }
}

// log_beta[b, t, s] for t < input length, the mirror image of the forward recursion.
__kernel void ctc_loss_beta(PTR_ARG(DT, lp), long st, long sn, long sc, PTR_ARG(long, targets),
                            PTR_ARG(long, meta), PTR_ARG(DT, log_beta), long T, long S2, long C, int blank,
                            __global int* err) {
  const long b = get_group_id(0);
  const long lid = get_local_id(0), lsz = get_local_size(0);
  const long Ti = META_INPUT_LEN(b), L = META_TARGET_LEN(b), S = 2 * L + 1;
  __global const long* tg = PTR(long, targets) + META_TARGET_OFF(b);
  __global const DT* lpb = PTR(DT, lp) + b * sn;
  __global DT* lb = PTR(DT, log_beta) + b * T * S2;
  if (Ti == 0) return;
  __global DT* end = lb + (Ti - 1) * S2;
  for (long s = lid; s < S2; s += lsz) {
    DT v = -INFINITY;
    if (s == 2 * L || (s == 2 * L - 1 && L > 0)) v = lpb[(Ti - 1) * st + ctc_label(tg, s, blank, C, err) * sc];
    end[s] = v;
  }
  for (long t = Ti - 2; t >= 0; --t) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    __global const DT* next = lb + (t + 1) * S2;
    __global DT* cur = lb + t * S2;
    for (long s = lid; s < S2; s += lsz) {
      DT v = -INFINITY;
      if (s < S) {
        const long c = ctc_label(tg, s, blank, C, err);
        const DT b1 = next[s];
        const DT b2 = s < 2 * L ? next[s + 1] : (DT)(-INFINITY);
        const DT b3 = (s < 2 * L - 1 && c != ctc_label(tg, s + 2, blank, C, err)) ? next[s + 2] : (DT)(-INFINITY);
        v = lse3(b1, b2, b3) + lpb[t * st + c * sc];
      }
      cur[s] = v;
    }
  }
}

// grad[t, b, :] for one (t, b) per work-group: exp(lp) - exp(log sum over the states s of class c
// of alpha * beta, + nll - lp), times grad_out[b]; 0 past the input length and, under
// zero_infinity, for an element whose loss is infinite. Each class's sum is taken by the first
// target position holding it (ascending s, as the CPU adds them), so no two work-items write
// the same class.
__kernel void ctc_loss_bwd(PTR_ARG(DT, lp), long st, long sn, long sc, PTR_ARG(long, targets),
                           PTR_ARG(long, meta), PTR_ARG(DT, log_alpha), PTR_ARG(DT, log_beta), PTR_ARG(DT, nll),
                           PTR_ARG(DT, grad_out), long gos, PTR_ARG(DT, grad), long gt, long gn, long gc, long T,
                           long S2, long C, int blank, int zero_infinity, __global int* err) {
  const long t = get_group_id(0), b = get_group_id(1);
  const long lid = get_local_id(0), lsz = get_local_size(0);
  const long Ti = META_INPUT_LEN(b), L = META_TARGET_LEN(b);
  __global const long* tg = PTR(long, targets) + META_TARGET_OFF(b);
  __global const DT* lpt = PTR(DT, lp) + t * st + b * sn;
  __global DT* g = PTR(DT, grad) + t * gt + b * gn;
  const DT nl = PTR(DT, nll)[b];
  if (t >= Ti || (zero_infinity && nl == INFINITY)) {
    for (long c = lid; c < C; c += lsz) g[c * gc] = (DT)0;
    return;
  }
  const DT go = PTR(DT, grad_out)[b * gos];
  __global const DT* la = PTR(DT, log_alpha) + (b * T + t) * S2;
  __global const DT* lb = PTR(DT, log_beta) + (b * T + t) * S2;
  for (long c = lid; c < C; c += lsz) g[c * gc] = exp(lpt[c * sc]) * go;
  barrier(CLK_GLOBAL_MEM_FENCE);
  // The blank's states (j = -1) and each distinct target label, each summed by one work-item.
  for (long j = lid - 1; j < L; j += lsz) {
    long c;
    DT acc = -INFINITY;
    if (j < 0) {
      c = blank;
      for (long s = 0; s <= 2 * L; ++s) {
        if ((s & 1) && tg[s >> 1] != blank) continue;  // a target may be the blank label itself
        const DT v = la[s] + lb[s];
        if (acc == -INFINITY) {
          acc = v;
        } else {
          const DT m = fmax(acc, v);
          acc = log(exp(acc - m) + exp(v - m)) + m;
        }
      }
    } else {
      c = ctc_label(tg, 2 * j + 1, blank, C, err);
      bool first = true;
      for (long i = 0; i < j && first; ++i) first = tg[i] != tg[j];
      if (!first || c == blank) continue;  // summed by the first holder of c (or with the blanks)
      for (long i = j; i < L; ++i) {
        if (tg[i] != tg[j]) continue;
        const DT v = la[2 * i + 1] + lb[2 * i + 1];
        if (acc == -INFINITY) {
          acc = v;
        } else {
          const DT m = fmax(acc, v);
          acc = log(exp(acc - m) + exp(v - m)) + m;
        }
      }
    }
    const DT l = lpt[c * sc];
    g[c * gc] = (exp(l) - exp(acc + nl - l)) * go;
  }
}
