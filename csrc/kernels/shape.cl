// Shape kernels: cat (up to SLOTS inputs per launch, slots.clh), a strided remapping copy that serves flip,
// roll, tril and triu, and the range factories (arange, linspace, eye).
// Data movement kernels move elements as raw words of the element size (T = uchar, ushort,
// uint or ulong); the factories compute in ACC and store through DT.
#include "slots.clh"

#ifndef T
#define T uint
#endif
#ifndef MAXD
#define MAXD 12  // must match kMaxDims in ops/shape.cpp
#endif

// Typed programs (DT / DT_HALF / DT_BF16 given) hold the factories; word programs (T) hold
// the movement kernels, so each compiles only what it serves.
#if defined(DT) || defined(DT_HALF) || defined(DT_BF16)
#define TYPED_PROGRAM 1
#endif

#if defined(DT_HALF)
#define DT ushort
#define ACC float
#define STOREV(p, i, v) vstore_half_rte((float)(v), (i), (__global half*)(p))
#elif defined(DT_BF16)
#define DT ushort
#define ACC float
#define STOREV(p, i, v) ((p)[i] = float_to_bf16((float)(v)))
#else
#ifndef DT
#define DT float
#endif
#ifndef ACC
#define ACC float
#endif
#define STOREV(p, i, v) ((p)[i] = (DT)(v))
#endif

#ifndef TYPED_PROGRAM
// ---- cat ------------------------------------------------------------------------------------
// Output viewed as contiguous [outer, row] words (a word: T, one element or a whole vector of
// them; row: the cat dim's size times the inner size, in words); this launch fills words
// [start, start + end[n_in - 1]) of every output row from n_in <= SLOTS non-empty contiguous
// inputs, input k covering [end[k-1], end[k]) of each row's span.
typedef struct {
  long end[SLOTS];
} CatTable;

__kernel void cat_fwd(PTR_ARG(T, out) SLOT_PTRS(T, in), long outer, long row, long start, int n_in, CatTable tab) {
  __global T* o = PTR(T, out);
  const long span = tab.end[n_in - 1];
  // Position arithmetic in 32 bits when it fits (64-bit division is slow on GPUs).
#define CAT_LOOP(I)                                                                       \
  for (I i = get_global_id(0); i < (I)(outer * span); i += get_global_size(0)) {          \
    const I ob = i / (I)span;                                                             \
    const long r = (long)(i - ob * (I)span);                                              \
    int lo = 0, hi = n_in - 1; /* the first input whose end is past r */                  \
    while (lo < hi) {                                                                     \
      const int mid = (lo + hi) >> 1;                                                     \
      if (r < tab.end[mid]) hi = mid;                                                     \
      else lo = mid + 1;                                                                  \
    }                                                                                     \
    const long first = lo == 0 ? 0 : tab.end[lo - 1];                                     \
    __global const T* src;                                                                \
    SLOT_SELECT(src, T, in, lo);                                                          \
    o[(long)ob * row + start + r] = src[(long)ob * (tab.end[lo] - first) + (r - first)];   \
  }
  if (outer * row < (1L << 31)) {
    CAT_LOOP(uint)
  } else {
    CAT_LOOP(long)
  }
#undef CAT_LOOP
}

// ---- strided remap (flip, roll, tril, triu) -----------------------------------------------
// out[c] = in[c'] for every coordinate c of `size`, with c'[d] = c[d] flipped when flip[d]
// and shifted by shift[d] (mod size) otherwise. tri != 0 zeroes the elements of the last
// two dims outside the band: tri = 1 keeps col - row <= diag (tril), tri = 2 keeps >= (triu).
typedef struct {
  long ndim, tri, diag;
  long size[MAXD];
  long in_stride[MAXD];
  long out_stride[MAXD];
  long shift[MAXD];
  long flip[MAXD];
} RemapGeom;

__kernel void remap_fwd(PTR_ARG(T, out), PTR_ARG(T, in), long n, RemapGeom g) {
  __global T* o = PTR(T, out);
  __global const T* s = PTR(T, in);
  // Coordinate arithmetic in 32 bits when it fits (64-bit division is slow on GPUs).
#define REMAP_LOOP(I)                                                          \
  for (I i = get_global_id(0); i < (I)n; i += get_global_size(0)) {            \
    I rem = i;                                                                 \
    long io = 0, oo = 0, row = 0, col = 0;                                     \
    for (int d = (int)g.ndim - 1; d >= 0; --d) {                               \
      const I sz = (I)g.size[d];                                               \
      const I c = rem % sz;                                                    \
      rem /= sz;                                                               \
      if (d == g.ndim - 1) col = c;                                            \
      if (d == g.ndim - 2) row = c;                                            \
      long cs = g.flip[d] ? (long)(sz - 1 - c) : (long)c + g.shift[d];         \
      if (cs >= (long)sz) cs -= sz;                                            \
      io += cs * g.in_stride[d];                                               \
      oo += (long)c * g.out_stride[d];                                         \
    }                                                                          \
    const bool keep = g.tri == 0 || (g.tri == 1 ? col - row <= g.diag : col - row >= g.diag); \
    o[oo] = keep ? s[io] : (T)0;                                               \
  }
  if (n < (1L << 31)) {
    REMAP_LOOP(uint)
  } else {
    REMAP_LOOP(long)
  }
#undef REMAP_LOOP
}

// out[r, c] = r == c ? one : 0 (one: the bits of 1 in the dtype).
__kernel void eye_fwd(PTR_ARG(T, out), long rows, long cols, long s0, long s1, ulong one) {
  FOR_EACH(i, rows * cols) {
    const long r = i / cols, c = i % cols;
    PTR(T, out)[r * s0 + c * s1] = r == c ? (T)one : (T)0;
  }
}
// ---- tril_indices / triu_indices ------------------------------------------------------------
// The (row, col) pairs of a row x col matrix's lower (tril) or upper triangle, row-major as
// the CPU lists them: out[k] = row, out[n + k] = col of the k-th pair. Row r holds
// clamp(r + offset + 1, 0, col) pairs (tril) or clamp(col - r - offset, 0, col) (triu), so the
// pairs before row r have a closed form (tri_before) and each work-item finds its row by a
// binary search. The host clamps offset to [-row - 1, col + 1] (nothing changes beyond).

// sum of min(m, cols) over m = 1 .. x - 1.
inline long tri_ramp(long x, long cols) {
  if (x <= 1) return 0;
  const long k = x - 1;
  return k <= cols ? k * (k + 1) / 2 : cols * (cols + 1) / 2 + (k - cols) * cols;
}
// Pairs in rows 0 .. r - 1.
inline long tri_before(long r, long cols, long offset, int upper) {
  if (!upper) return tri_ramp(offset + r + 1, cols) - tri_ramp(offset + 1, cols);
  const long k = cols - offset;
  return tri_ramp(k + 1, cols) - tri_ramp(k - r + 1, cols);
}
__kernel void tri_indices_fwd(PTR_ARG(T, out), long n, long rows, long cols, long offset, int upper) {
  __global T* o = PTR(T, out);
  FOR_EACH(k, n) {
    long lo = 0, hi = rows - 1;  // the last row r with tri_before(r) <= k
    while (lo < hi) {
      const long mid = lo + (hi - lo + 1) / 2;
      if (tri_before(mid, cols, offset, upper) <= k) lo = mid;
      else hi = mid - 1;
    }
    const long first = upper ? max(0L, lo + offset) : 0L;
    o[k] = (T)lo;
    o[n + k] = (T)(first + k - tri_before(lo, cols, offset, upper));
  }
}
#endif  // !TYPED_PROGRAM

#ifdef TYPED_PROGRAM
// ---- factories ----------------------------------------------------------------------------
// out[i * stride] = start + i * step.
__kernel void arange_fwd(PTR_ARG(DT, out), long n, long stride, ACC start, ACC step) {
  FOR_EACH(i, n) STOREV(PTR(DT, out), i * stride, start + (ACC)i * step);
}

// RND(x): x rounded to the storage type. ATen computes a float16/bfloat16 linspace in that
// type (c10::Half arithmetic: the index, the product and the sum are each rounded), so these
// programs round where it does; other types compute in ACC.
#if defined(DT_HALF)
#define RND(x) round_to_half(x)
#elif defined(DT_BF16)
#define RND(x) round_to_bf16(x)
#else
#define RND(x) (x)
#endif

// out[i * stride]: from start for the first half and back from end for the second half,
// so both endpoints are exact (as ATen's linspace).
__kernel void linspace_fwd(PTR_ARG(DT, out), long n, long stride, ACC start, ACC end, ACC step) {
  const long half_n = n / 2;
  FOR_EACH(i, n) {
    ACC v = i < half_n ? start + RND(step * RND((ACC)i)) : end - RND(step * RND((ACC)(n - i - 1)));
    STOREV(PTR(DT, out), i * stride, v);
  }
}
#endif  // TYPED_PROGRAM
