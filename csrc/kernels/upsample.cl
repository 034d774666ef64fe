// Linear, bilinear, trilinear, bicubic and antialiased interpolation (F.interpolate), forward
// and backward, as one separable gather: destination element (n, c, d, h, w) is the sum, over
// the taps of d, then of h, then of w, of the source element at the taps' indices times the
// taps' weights (innermost axis summed first, each partial sum scaled by the outer tap's weight,
// the order of the CPU's kernels: TAP_SUM). The taps arrive from upsample.cpp as per-axis
// tables in CSR form: position p of an axis owns entries [tab[P + p], tab[P + p + 1]), entry e
// reading source index tab[E + e] with weight wts[e]. The backward passes the transposed tables
// (per input position, the outputs that read it), so it gathers too: no atomics, deterministic.
// Tensors of any strides (channels_last, views); 1-D and 2-D ops pass size-1 leading axes.
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind of source and destination: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef ACC
#define ACC float  // weight and accumulation type (double for double tensors, float otherwise)
#endif

#ifndef POS_T
#define POS_T long  // type of the destination-index arithmetic: uint where the host checked it fits
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

// The weighted sum over the taps [lo, hi) of one axis, VALUE(e) the value tap e reads, in the
// CPU's order and roundings (its kernels are built with fused multiply-adds): the first
// product, then one fma per further tap; with `pair` set, two taps as fma(v0, w0, v1 * w1)
// (the CPU's two-tap linear kernels).
#define TAP_SUM(result, lo, hi, VALUE)                                   \
  do {                                                                   \
    if (pair && (hi) - (lo) == 2) {                                      \
      long e = (lo) + 1;                                                 \
      const ACC second = (VALUE) * wt[e];                                \
      e = (lo);                                                          \
      result = fma((VALUE), wt[e], second);                              \
    } else {                                                             \
      long e = (lo);                                                     \
      result = (VALUE) * wt[e];                                          \
      for (e = (lo) + 1; e < (hi); ++e) result = fma((VALUE), wt[e], result); \
    }                                                                    \
  } while (0)

// The sum over one position's W taps of the row at offset `row`.
inline ACC sum_w(__global const X_T* x, __global const long* tb, __global const ACC* wt, long row, long lo, long hi,
                 long e0, long s4, int pair) {
  ACC r = 0;
  if (lo < hi) TAP_SUM(r, lo, hi, LOAD_X(x, row + tb[e0 + e] * s4));
  return r;
}

// The sum over one position's H taps (each a W sum) of the plane at offset `plane`.
inline ACC sum_hw(__global const X_T* x, __global const long* tb, __global const ACC* wt, long plane, long h_lo,
                  long h_hi, long w_lo, long w_hi, long e0, long s3, long s4, int pair) {
  ACC r = 0;
  if (h_lo < h_hi) TAP_SUM(r, h_lo, h_hi, sum_w(x, tb, wt, plane + tb[e0 + e] * s3, w_lo, w_hi, e0, s4, pair));
  return r;
}

// dst (N, C, D, H, W; strides t0..t4) from src (strides s0..s4, spatial sizes implied by the
// tables); pd, ph, pw: where each axis' position pointers start in tab, e0 where the entries'
// source indices start; pair: see TAP_SUM. One destination element per loop step (grid-stride).
// A position without taps (the backward's inputs that no output reads) gets 0.
__kernel void upsample_fwd(PTR_ARG(X_T, src), PTR_ARG(X_T, dst), PTR_ARG(long, tab), PTR_ARG(ACC, wts), long total,
                           long C, long D, long H, long W, long s0, long s1, long s2, long s3, long s4, long t0,
                           long t1, long t2, long t3, long t4, long pd, long ph, long pw, long e0, int pair) {
  __global const X_T* x = PTR(X_T, src);
  __global X_T* y = PTR(X_T, dst);
  __global const long* tb = PTR(long, tab);
  __global const ACC* wt = PTR(ACC, wts);
  FOR_EACH(i, total) {
    POS_T r = (POS_T)i;
    const POS_T w = r % (POS_T)W;
    r /= (POS_T)W;
    const POS_T h = r % (POS_T)H;
    r /= (POS_T)H;
    const POS_T d = r % (POS_T)D;
    r /= (POS_T)D;
    const long c = r % (POS_T)C, n = r / (POS_T)C;
    const long base = n * s0 + c * s1;
    const long w_lo = tb[pw + w], w_hi = tb[pw + w + 1], h_lo = tb[ph + h], h_hi = tb[ph + h + 1];
    const long d_lo = tb[pd + d], d_hi = tb[pd + d + 1];
    ACC acc = 0;
    if (d_lo < d_hi)
      TAP_SUM(acc, d_lo, d_hi, sum_hw(x, tb, wt, base + tb[e0 + e] * s2, h_lo, h_hi, w_lo, w_hi, e0, s3, s4, pair));
    STORE_X(y, n * t0 + c * t1 + (long)d * t2 + (long)h * t3 + (long)w * t4, acc);
  }
}

// uint8, the CPU's fixed-point path (bilinear, bicubic and the antialiased modes): one axis of
// (N, C, H, W) at a time (along_w: W, else H), weights int16 scaled by 2^prec, the sum in int
// from 2^(prec - 1) (rounds half up), shifted back and clamped to [0, 255]. tab holds the axis'
// position pointers, then (from e0) the entries' source indices.
__kernel void upsample_u8_fwd(PTR_ARG(uchar, src), PTR_ARG(uchar, dst), PTR_ARG(long, tab), PTR_ARG(int, wts),
                              long total, long C, long H, long W, long s0, long s1, long s2, long s3, long t0,
                              long t1, long t2, long t3, long e0, int along_w, int prec) {
  __global const uchar* x = PTR(uchar, src);
  __global uchar* y = PTR(uchar, dst);
  __global const long* tb = PTR(long, tab);
  __global const int* wt = PTR(int, wts);
  FOR_EACH(i, total) {
    long r = i;
    const long w = r % W;
    r /= W;
    const long h = r % H;
    r /= H;
    const long c = r % C, n = r / C;
    const long p = along_w ? w : h, step = along_w ? s3 : s2;
    const long base = n * s0 + c * s1 + (along_w ? h * s2 : w * s3);
    int acc = 1 << (prec - 1);
    for (long e = tb[p]; e < tb[p + 1]; ++e) acc += (int)x[base + tb[e0 + e] * step] * wt[e];
    // A negative sum clamps to 0 (spelled out: >> of a negative int is implementation-defined).
    y[n * t0 + c * t1 + h * t2 + w * t3] = (uchar)(acc < 0 ? 0 : min(acc >> prec, 255));
  }
}
