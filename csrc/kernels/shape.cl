// Shape kernels: cat (many inputs per launch), a strided remapping copy that serves flip,
// roll, tril and triu, and the range factories (arange, linspace, eye).
// Data movement kernels move elements as raw words of the element size (T = uchar, ushort,
// uint or ulong); the factories compute in ACC and store through DT.
#include "common.clh"

#ifndef T
#define T uint
#endif
#ifndef MAXD
#define MAXD 12  // must match kMaxDims in ops/shape.cpp
#endif
#ifndef CAT_N
#define CAT_N 8  // inputs per cat launch (must match kCatInputs in ops/shape.cpp)
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

#define FOR_EACH(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))

#ifndef TYPED_PROGRAM
// ---- cat ------------------------------------------------------------------------------------
// Output viewed as contiguous [outer, total, inner]; this launch fills positions
// [start, start + end[CAT_N-1]) along the cat dim from up to CAT_N contiguous inputs, input k
// covering [end[k-1], end[k]) of that range (empty inputs have end[k] == end[k-1]).
typedef struct {
  long end[CAT_N];
} CatTable;

#define CAT_ARGS(k) , PTR_ARG(T, in##k)
__kernel void cat_fwd(PTR_ARG(T, out) CAT_ARGS(0) CAT_ARGS(1) CAT_ARGS(2) CAT_ARGS(3) CAT_ARGS(4) CAT_ARGS(5)
                          CAT_ARGS(6) CAT_ARGS(7),
                      long outer, long total, long inner, long start, CatTable tab) {
  __global T* o = PTR(T, out);
  const long span = tab.end[CAT_N - 1] * inner;
  long ends[CAT_N];  // input boundaries in elements of one outer row
  for (int k = 0; k < CAT_N; ++k) ends[k] = tab.end[k] * inner;
  // Position arithmetic in 32 bits when it fits (64-bit division is slow on GPUs).
#define CAT_LOOP(I)                                                                       \
  for (I i = get_global_id(0); i < (I)(outer * span); i += get_global_size(0)) {          \
    const I ob = i / (I)span;                                                             \
    const long r = (long)(i - ob * (I)span);                                              \
    int k = 0;                                                                            \
    while (k < CAT_N - 1 && r >= ends[k]) ++k;                                            \
    const long lo = k == 0 ? 0 : ends[k - 1];                                             \
    const long len = ends[k] - lo;                                                        \
    __global const T* src;                                                                \
    switch (k) {                                                                          \
      case 0: src = PTR(T, in0); break;                                                   \
      case 1: src = PTR(T, in1); break;                                                   \
      case 2: src = PTR(T, in2); break;                                                   \
      case 3: src = PTR(T, in3); break;                                                   \
      case 4: src = PTR(T, in4); break;                                                   \
      case 5: src = PTR(T, in5); break;                                                   \
      case 6: src = PTR(T, in6); break;                                                   \
      default: src = PTR(T, in7); break;                                                  \
    }                                                                                     \
    o[(long)ob * total * inner + start * inner + r] = src[(long)ob * len + (r - lo)];     \
  }
  if (outer * total * inner < (1L << 31)) {
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
#endif  // !TYPED_PROGRAM

#ifdef TYPED_PROGRAM
// ---- factories ----------------------------------------------------------------------------
// out[i * stride] = start + i * step.
__kernel void arange_fwd(PTR_ARG(DT, out), long n, long stride, ACC start, ACC step) {
  FOR_EACH(i, n) STOREV(PTR(DT, out), i * stride, start + (ACC)i * step);
}

// out[i * stride]: from start for the first half and back from end for the second half,
// so both endpoints are exact (as ATen's linspace).
__kernel void linspace_fwd(PTR_ARG(DT, out), long n, long stride, ACC start, ACC end, ACC step) {
  const long half_n = n / 2;
  FOR_EACH(i, n) {
    ACC v = i < half_n ? start + step * (ACC)i : end - step * (ACC)(n - i - 1);
    STOREV(PTR(DT, out), i * stride, v);
  }
}
#endif  // TYPED_PROGRAM
