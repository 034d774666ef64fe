// Sorting kernels: a stable bitonic sort of (key, position) pairs per row (sort, argsort,
// topk), the selections from sorted rows (kthvalue, median, mode), the segment helpers of
// unique / unique_consecutive and bincount, searchsorted, and histc's counting.
// Rows are padded to a power of two P2; positions >= n are padding and order last. Ties are
// broken by the original position, which makes the network stable; NaN orders above every
// number (as on the CPU). A row chunk of SORT_LOCAL elements is sorted in local memory;
// longer rows finish with global merge steps (j >= SORT_LOCAL) interleaved with local merges.
#include "common.clh"

#ifndef SORT_LOCAL
#define SORT_LOCAL 1024  // elements sorted per work-group in local memory (power of two)
#endif
#ifndef SORT_WG
#define SORT_WG 256  // work-items per local sort group
#endif

// Element storage DT and key type KEY (half/bfloat16 keys are floats: exact).
#if defined(DT_HALF)
#define DT ushort
#define KEY float
#define LOADK(p, i) vload_half((i), (__global const half*)(p))
#define STOREK(p, i, v) vstore_half_rte((v), (i), (__global half*)(p))
#define KEY_IS_FLOAT 1
#elif defined(DT_BF16)
#define DT ushort
#define KEY float
#define LOADK(p, i) bf16_to_float((p)[i])
#define STOREK(p, i, v) ((p)[i] = float_to_bf16(v))
#define KEY_IS_FLOAT 1
#else
#ifndef DT
#define DT float
#define KEY_IS_FLOAT 1
#endif
#define KEY DT
#define LOADK(p, i) ((p)[i])
#define STOREK(p, i, v) ((p)[i] = (v))
#endif

#ifdef KEY_IS_FLOAT
#define KEY_NAN(k) isnan(k)
#else
#define KEY_NAN(k) 0
#endif

// True when (ka, ia) must come before (kb, ib) in the output of a row of n elements.
inline bool before(KEY ka, int ia, KEY kb, int ib, int n, int desc) {
  if (ia >= n) return false;
  if (ib >= n) return true;
  const bool na = KEY_NAN(ka), nb = KEY_NAN(kb);
  if (na || nb) {
    if (na && nb) return ia < ib;
    return desc ? na : nb;
  }
  if (ka != kb) return desc ? ka > kb : ka < kb;
  return ia < ib;
}

// keys[r, i] = x[r, i], pos[r, i] = i for i < P2 (padding i >= n).
__kernel void sort_init(PTR_ARG(KEY, keys), PTR_ARG(int, pos), PTR_ARG(DT, x), long rows, int n, int p2) {
  __global KEY* k = PTR(KEY, keys);
  __global int* ps = PTR(int, pos);
  __global const DT* v = PTR(DT, x);
  FOR_EACH(t, rows * p2) {
    long r = t / p2;
    int i = (int)(t % p2);
    k[t] = i < n ? LOADK(v, r * n + i) : (KEY)0;
    ps[t] = i;
  }
}

// One work-group per SORT_LOCAL-element chunk of the padded [rows, p2] buffers. Rows are
// aligned to p2, so a chunk holds several whole rows (p2 < SORT_LOCAL) or part of one; the
// direction of each comparison uses the position within its row. merge_k == 0: sort
// completely (stages k = 2 .. min(p2, SORT_LOCAL)); otherwise run the j < SORT_LOCAL steps
// of stage merge_k; merge_k < 0: sort every chunk on its own, ascending (topk's first
// phase). Positions past the buffer (last chunk) act as padding.
__kernel __attribute__((reqd_work_group_size(SORT_WG, 1, 1))) void sort_local(PTR_ARG(KEY, keys), PTR_ARG(int, pos),
                                                                             long total, int n, int p2, int desc,
                                                                             int merge_k) {
  __local KEY lk[SORT_LOCAL];
  __local int lp[SORT_LOCAL];
  const long base = (long)get_group_id(0) * SORT_LOCAL;
  const int valid = (int)min((long)SORT_LOCAL, total - base);
  __global KEY* k = PTR(KEY, keys) + base;
  __global int* ps = PTR(int, pos) + base;
  const int lid = get_local_id(0);
  const int row_mask = merge_k < 0 ? SORT_LOCAL - 1 : p2 - 1;
  const int row_base = (int)(base & row_mask);
  for (int i = lid; i < SORT_LOCAL; i += SORT_WG) {
    lk[i] = i < valid ? k[i] : (KEY)0;
    lp[i] = i < valid ? ps[i] : INT_MAX;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int k_lo = merge_k > 0 ? merge_k : 2;
  const int k_hi = merge_k > 0 ? merge_k : min(p2, SORT_LOCAL);
  for (int kk = k_lo; kk <= k_hi; kk <<= 1) {
    for (int j = min(kk, SORT_LOCAL) >> 1; j > 0; j >>= 1) {
      for (int t = lid; t < SORT_LOCAL / 2; t += SORT_WG) {
        const int i = 2 * j * (t / j) + (t % j);
        const int q = i + j;
        const bool up = (((row_base + i) & row_mask) & kk) == 0;
        KEY a = lk[i], b = lk[q];
        int ia = lp[i], ib = lp[q];
        if (up ? before(b, ib, a, ia, n, desc) : before(a, ia, b, ib, n, desc)) {
          lk[i] = b;
          lk[q] = a;
          lp[i] = ib;
          lp[q] = ia;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (int i = lid; i < valid; i += SORT_WG) {
    k[i] = lk[i];
    ps[i] = lp[i];
  }
}

// One compare-exchange step (stage kk, distance j >= SORT_LOCAL) over all rows.
__kernel void sort_global_step(PTR_ARG(KEY, keys), PTR_ARG(int, pos), long rows, int n, int p2, int desc, int kk,
                               int j) {
  __global KEY* k = PTR(KEY, keys);
  __global int* ps = PTR(int, pos);
  const long half_p2 = p2 / 2;
  FOR_EACH(t, rows * half_p2) {
    const long r = t / half_p2;
    const int tt = (int)(t % half_p2);
    const int i = 2 * j * (tt / j) + (tt % j);
    const long a_at = r * p2 + i, b_at = a_at + j;
    const bool up = (i & kk) == 0;
    KEY a = k[a_at], b = k[b_at];
    int ia = ps[a_at], ib = ps[b_at];
    if (up ? before(b, ib, a, ia, n, desc) : before(a, ia, b, ib, n, desc)) {
      k[a_at] = b;
      k[b_at] = a;
      ps[a_at] = ib;
      ps[b_at] = ia;
    }
  }
}

// topk's second phase: the first k pairs of every sorted SORT_LOCAL-chunk of a row become
// that row's candidates (cand row length cp2; the rest is padding).
__kernel void topk_candidates(PTR_ARG(KEY, ckeys), PTR_ARG(int, cpos), PTR_ARG(KEY, keys), PTR_ARG(int, pos),
                              long rows, int p2, int k, int nchunks, int cp2) {
  FOR_EACH(t, rows * cp2) {
    const long r = t / cp2;
    const int c = (int)(t % cp2);
    const int chunk = c / k, at = c % k;
    if (chunk < nchunks) {
      const long src = r * p2 + (long)chunk * SORT_LOCAL + at;
      PTR(KEY, ckeys)[t] = PTR(KEY, keys)[src];
      PTR(int, cpos)[t] = PTR(int, pos)[src];
    } else {
      PTR(KEY, ckeys)[t] = (KEY)0;
      PTR(int, cpos)[t] = INT_MAX;
    }
  }
}

// values[r, i] = keys[r, i], indices[r, i] = pos[r, i] for the first n_out of each row.
__kernel void sort_finish(PTR_ARG(DT, values), PTR_ARG(long, indices), PTR_ARG(KEY, keys), PTR_ARG(int, pos),
                          long rows, int p2, int n_out) {
  __global DT* v = PTR(DT, values);
  __global long* ix = PTR(long, indices);
  __global const KEY* k = PTR(KEY, keys);
  __global const int* ps = PTR(int, pos);
  FOR_EACH(t, rows * n_out) {
    const long r = t / n_out;
    const long src = r * p2 + t % n_out;
    STOREK(v, t, k[src]);
    ix[t] = ps[src];
  }
}

// ---- unique -------------------------------------------------------------------------------
// flags[i] = 1 where a run of equal values starts in x (sorted, or as given for
// unique_consecutive).
__kernel void unique_flags(PTR_ARG(uchar, flags), PTR_ARG(DT, x), long n) {
  __global uchar* f = PTR(uchar, flags);
  __global const DT* v = PTR(DT, x);
  FOR_EACH(i, n) f[i] = (i == 0 || LOADK(v, i) != LOADK(v, i - 1)) ? 1 : 0;
}

// values[u] = x[starts[u]], counts[u] = run length of u.
__kernel void unique_write(PTR_ARG(DT, values), PTR_ARG(long, counts), PTR_ARG(long, starts), PTR_ARG(DT, x), long nu,
                           long n) {
  __global const long* st = PTR(long, starts);
  FOR_EACH(u, nu) {
    PTR(DT, values)[u] = PTR(DT, x)[st[u]];
    PTR(long, counts)[u] = (u + 1 < nu ? st[u + 1] : n) - st[u];
  }
}

// inverse[perm[i]] = the run containing sorted position i (perm absent: identity).
__kernel void unique_inverse(PTR_ARG(long, inverse), PTR_ARG(long, perm), int has_perm, PTR_ARG(long, starts), long nu,
                             long n) {
  __global const long* st = PTR(long, starts);
  FOR_EACH(i, n) {
    long lo = 0, hi = nu;  // first run start > i
    while (lo < hi) {
      long mid = (lo + hi) / 2;
      if (st[mid] <= i) lo = mid + 1;
      else hi = mid;
    }
    long at = has_perm ? PTR(long, perm)[i] : i;
    PTR(long, inverse)[at] = lo - 1;
  }
}

// ---- bincount ------------------------------------------------------------------------------
inline long lower_bound_long(__global const long* a, long n, long v) {
  long lo = 0, hi = n;
  while (lo < hi) {
    long mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// out[b] = count of b in the sorted input, or the sum of its weights in input order.
__kernel void bincount_bins(PTR_ARG(DT, out), PTR_ARG(long, sorted), PTR_ARG(long, perm), PTR_ARG(DT, weights), long n,
                            long nbins, int has_weights) {
  __global const long* s = PTR(long, sorted);
  FOR_EACH(b, nbins) {
    long lo = lower_bound_long(s, n, b), hi = lower_bound_long(s, n, b + 1);
    if (!has_weights) {
      PTR(DT, out)[b] = (DT)(hi - lo);
    } else {
      KEY acc = 0;
      for (long j = lo; j < hi; ++j) acc += LOADK(PTR(DT, weights), PTR(long, perm)[j]);
      STOREK(PTR(DT, out), b, acc);
    }
  }
}

// searchsorted / bucketize: out[i] = where value i goes in its row of `bd` (len elements; the
// one row for every value when rows_1d, else row i / inner) to keep the row sorted: the first
// position whose element is >= the value (left) or > it (right), read through `sorter` (positions
// within the row) where use_sorter. The tests are ATen's, !(x >= v) and !(x > v), so a NaN value
// goes after every element. The result is written as int (out_int32) or long.
__kernel void searchsorted(PTR_ARG(long, out64), PTR_ARG(int, out32), PTR_ARG(DT, bd), PTR_ARG(long, sorter),
                           PTR_ARG(DT, val), long n, long inner, long len, int rows_1d, int right, int use_sorter,
                           int out_int32) {
  __global const DT* b = PTR(DT, bd);
  __global const long* st = PTR(long, sorter);
  FOR_EACH(i, n) {
    const KEY v = LOADK(PTR(DT, val), i);
    const long row = rows_1d ? 0 : (i / inner) * len;
    long lo = 0, hi = len;
    while (lo < hi) {
      const long mid = lo + ((hi - lo) >> 1);
      const KEY x = LOADK(b, row + (use_sorter ? st[row + mid] : mid));
      if (right ? !(x > v) : !(x >= v)) lo = mid + 1;
      else hi = mid;
    }
    if (out_int32) PTR(int, out32)[i] = (int)lo;
    else PTR(long, out64)[i] = lo;
  }
}

// ---- kthvalue / median / nanmedian ---------------------------------------------------------
// values[r], indices[r] = the pair at one position of row r of the sorted (key, position) pairs
// (rows of p2, the first n valid, ascending, NaN last): position k - 1 (which == 0, kthvalue);
// the lower median, or the first NaN where the row has one (which == 1, median: the CPU returns
// the NaN of the smallest index, which the stable order puts first); the lower median of the
// non-NaN elements, position 0 when all are NaN (which == 2, nanmedian).
__kernel void kthvalue_fwd(PTR_ARG(DT, values), PTR_ARG(long, indices), PTR_ARG(KEY, keys), PTR_ARG(int, pos),
                           long rows, int p2, int n, int k, int which) {
  FOR_EACH(r, rows) {
    __global const KEY* kr = PTR(KEY, keys) + r * p2;
    int at = k - 1;
    if (which != 0) {
      int lo = 0, hi = n;  // the first NaN (n when none)
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (KEY_NAN(kr[mid])) hi = mid;
        else lo = mid + 1;
      }
      if (which == 1) at = lo < n ? lo : (n - 1) / 2;
      else at = lo > 0 ? (lo - 1) / 2 : 0;
    }
    STOREK(PTR(DT, values), r, kr[at]);
    PTR(long, indices)[r] = PTR(int, pos)[r * p2 + at];
  }
}

// ---- mode ----------------------------------------------------------------------------------
// One work-group per row of sorted pairs (a power-of-two local size; best_len / best_at hold one
// entry per work-item). Runs of equal keys are measured where they end: the run's first position
// is a binary search away, the row being sorted. NaN equals nothing, so each NaN is a run of its
// own (the CPU's != test between neighbours). The longest run wins and, among equally long
// ones, the smallest value (the first in ascending order, as the CPU's strict > keeps); its
// last pair gives the value and the index (in the stable order, the largest index of the value).
__kernel void mode_fwd(PTR_ARG(DT, values), PTR_ARG(long, indices), PTR_ARG(KEY, keys), PTR_ARG(int, pos), long rows,
                       int p2, int n, __local int* best_len, __local int* best_at) {
  const int lid = get_local_id(0), lsz = get_local_size(0);
  for (long r = get_group_id(0); r < rows; r += get_num_groups(0)) {
    __global const KEY* kr = PTR(KEY, keys) + r * p2;
    int blen = 0, bat = 0;
    for (int i = lid; i < n; i += lsz) {
      const KEY v = kr[i];
      if (i + 1 < n && kr[i + 1] == v) continue;  // not the end of its run
      int len = 1;
      if (!KEY_NAN(v)) {
        int lo = 0, hi = i;  // the run's first position: the first key not below v
        while (lo < hi) {
          const int mid = (lo + hi) >> 1;
          if (kr[mid] < v) lo = mid + 1;
          else hi = mid;
        }
        len = i - lo + 1;
      }
      if (len > blen) {
        blen = len;
        bat = i;
      }
    }
    best_len[lid] = blen;
    best_at[lid] = bat;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = lsz >> 1; s > 0; s >>= 1) {
      if (lid < s) {
        const int ol = best_len[lid + s], oa = best_at[lid + s];
        if (ol > best_len[lid] || (ol == best_len[lid] && oa < best_at[lid])) {
          best_len[lid] = ol;
          best_at[lid] = oa;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
      const int at = best_at[0];
      STOREK(PTR(DT, values), r, kr[at]);
      PTR(long, indices)[r] = PTR(int, pos)[r * p2 + at];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // best_* are reused by the next row
  }
}

// ---- histc ---------------------------------------------------------------------------------
// v rounded to the element type: the CPU computes a float16 / bfloat16 histogram in that type,
// rounding after every operation.
#if defined(DT_HALF)
#define round_to_dt(v) round_to_half(v)
#elif defined(DT_BF16)
#define round_to_dt(v) round_to_bf16(v)
#else
#define round_to_dt(v) (v)
#endif

// The bin of v among `bins` equal bins of [lo, hi], -1 outside the range (NaN too). The CPU's
// arithmetic, so values at or next to an edge land in the same bin: (v - lo) * bins / (hi - lo)
// in the element type, truncated; the top edge (and anything rounding past it) goes to the last
// bin. float needs the program's correctly rounded division.
inline int histc_bin(KEY v, KEY lo, KEY hi, int bins) {
  if (!(v >= lo && v <= hi)) return -1;
  const KEY q = round_to_dt(round_to_dt(round_to_dt(v - lo) * round_to_dt((KEY)bins)) / round_to_dt(hi - lo));
  if (!(q < (KEY)bins)) return bins - 1;
  return (int)q;
}

// counts[b] += the number of elements of x in bin b. With local_bins, each work-group counts
// into its own copy of the bins in local memory (lh, `bins` entries) and then adds the nonzero
// ones to counts; otherwise straight into counts. Integer atomics: exact in any order.
__kernel void histc_fwd(PTR_ARG(uint, counts), PTR_ARG(DT, x), long n, int bins, KEY lo, KEY hi, __local uint* lh,
                        int local_bins) {
  __global uint* c = PTR(uint, counts);
  const int lid = get_local_id(0), lsz = get_local_size(0);
  if (local_bins) {
    for (int b = lid; b < bins; b += lsz) lh[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  FOR_EACH(i, n) {
    const int b = histc_bin(LOADK(PTR(DT, x), i), lo, hi, bins);
    if (b >= 0) {
      if (local_bins) atomic_inc(&lh[b]);
      else atomic_inc(&c[b]);
    }
  }
  if (local_bins) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < bins; b += lsz)
      if (lh[b] != 0) atomic_add(&c[b], lh[b]);
  }
}

// out[b] = counts[b] in the element type.
__kernel void histc_finish(PTR_ARG(DT, out), PTR_ARG(uint, counts), int bins) {
  FOR_EACH(b, bins) STOREK(PTR(DT, out), b, (KEY)PTR(uint, counts)[b]);
}
