// Reflection and replication padding (ops/padding.cpp), 1-D to 3-D, as one geometry: tensors
// are seen as (N, C, D, H, W) through element strides (missing dims have size 1), so any
// layout (channels_last, transposed, expanded, offset views) is read and written in place.
// Output position o along a dim reads input position src(o - pad): reflection mirrors about
// the edge without repeating it (-1 -> 1), replication clamps to the edge.
// The backward gathers: each input element sums the output gradients that read it (at most 3
// positions per dim for reflection, one range per dim for replication), in output order, so
// the result is deterministic and needs no atomics.
#include "common.clh"

#ifndef ELEM
#define ELEM uint  // pad_fwd's element type: an unsigned integer of the tensor's element size
#endif
#ifndef X_KIND
#define X_KIND 0  // pad_bwd's storage kind: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef ACC
#define ACC float  // pad_bwd's accumulation type (double for double tensors, float otherwise)
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

// The input position read at padded position u = o - pad along a dim of `size` elements.
// The host checked that one reflection suffices (pads < size), so u is in [-(size-1), 2(size-1)].
inline long pad_source(long u, long size, int reflect) {
  if (reflect) {
    if (u < 0) u = -u;
    if (u >= size) u = 2 * (size - 1) - u;
    return u;
  }
  return u < 0 ? 0 : (u >= size ? size - 1 : u);
}

// out[n, c, d, h, w] = x[n, c, src(d - pd), src(h - ph), src(w - pw)] for the `total`
// elements of out (sizes OD, OH, OW per (n, c) pair; C channels). A copy of element bits.
__kernel void pad_fwd(PTR_ARG(ELEM, x), PTR_ARG(ELEM, out), long total, long C, long D, long H, long W, long OD,
                      long OH, long OW, long pd, long ph, long pw, long xs_n, long xs_c, long xs_d, long xs_h,
                      long xs_w, long os_n, long os_c, long os_d, long os_h, long os_w, int reflect) {
  __global const ELEM* xp = PTR(ELEM, x);
  __global ELEM* op = PTR(ELEM, out);
  FOR_EACH(i, total) {
    long n, c, d, h, w;
    position5(i, C, OD, OH, OW, 0, &n, &c, &d, &h, &w);
    const long sd = pad_source(d - pd, D, reflect), sh = pad_source(h - ph, H, reflect),
               sw = pad_source(w - pw, W, reflect);
    op[n * os_n + c * os_c + d * os_d + h * os_h + w * os_w] =
        xp[n * xs_n + c * xs_c + sd * xs_d + sh * xs_h + sw * xs_w];
  }
}

// The output positions along one dim (of osize) that read input position i (of size), as up
// to three inclusive ranges [lo, hi], in increasing order; returns how many. Reflection: the
// padded positions u with source(u) = i are i, -i (i > 0) and 2(size-1) - i (i < size-1), each
// at output u + pad. Replication: the edges take every output clamped onto them.
inline int pad_readers(long i, long pad, long size, long osize, int reflect, __private long* lo, __private long* hi) {
  int n = 0;
  if (reflect) {
    long u[3];
    int m = 0;
    if (i > 0) u[m++] = -i;
    u[m++] = i;
    if (i < size - 1) u[m++] = 2 * (size - 1) - i;
    for (int k = 0; k < m; ++k) {
      const long o = u[k] + pad;
      if (o >= 0 && o < osize) {
        lo[n] = o;
        hi[n] = o;
        ++n;
      }
    }
    return n;
  }
  long a = i == 0 ? 0 : i + pad;                    // first output clamped onto i
  long b = i == size - 1 ? osize - 1 : i + pad;     // last one
  a = max(a, 0L);
  b = min(b, osize - 1);
  if (a <= b) {
    lo[0] = a;
    hi[0] = b;
    n = 1;
  }
  return n;
}

// grad_input[n, c, d, h, w] = the sum of grad_out over the output positions that read it
// (pad_readers per dim), for the `total` elements of grad_input (sizes D, H, W per (n, c)).
// Writes every element, so no zero fill is needed.
__kernel void pad_bwd(PTR_ARG(X_T, gy), PTR_ARG(X_T, gx), long total, long C, long D, long H, long W, long OD,
                      long OH, long OW, long pd, long ph, long pw, long gs_n, long gs_c, long gs_d, long gs_h,
                      long gs_w, long xs_n, long xs_c, long xs_d, long xs_h, long xs_w, int reflect) {
  __global const X_T* gp = PTR(X_T, gy);
  __global X_T* xp = PTR(X_T, gx);
  FOR_EACH(i, total) {
    long n, c, d, h, w;
    position5(i, C, D, H, W, 0, &n, &c, &d, &h, &w);
    long dlo[3], dhi[3], hlo[3], hhi[3], wlo[3], whi[3];
    const int nd = pad_readers(d, pd, D, OD, reflect, dlo, dhi);
    const int nh = pad_readers(h, ph, H, OH, reflect, hlo, hhi);
    const int nw = pad_readers(w, pw, W, OW, reflect, wlo, whi);
    const long base = n * gs_n + c * gs_c;
    ACC s = 0;
    for (int a = 0; a < nd; ++a)
      for (long od = dlo[a]; od <= dhi[a]; ++od)
        for (int b = 0; b < nh; ++b)
          for (long oh = hlo[b]; oh <= hhi[b]; ++oh)
            for (int e = 0; e < nw; ++e)
              for (long ow = wlo[e]; ow <= whi[e]; ++ow) s += LOAD_X(gp, base + od * gs_d + oh * gs_h + ow * gs_w);
    STORE_X(xp, n * xs_n + c * xs_c + d * xs_d + h * xs_h + w * xs_w, s);
  }
}
