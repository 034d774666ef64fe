// The adjoint of the sliding-window view (ops/windows.cpp): col2im for convolutions and
// F.fold. v holds one value per (n, c, kernel tap, window) at any strides; each input element
// gathers the values of the (tap, window) pairs whose tap lands on it, taps in increasing
// order, so the sum is deterministic and needs no atomics. Tensors have 1-3 spatial dims,
// seen as 3 (missing ones: size 1). Along one dim, input position a (padded: a + pad) is tap
// t of window w when a + pad = w * stride + t * dil.
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind: 0 float, 1 double, 2 half, 3 bfloat16, 4 INT_T (integers)
#endif
#ifndef ACC
#define ACC float  // accumulation type (double for double tensors, INT_T for integers)
#endif
#ifndef INT_T
#define INT_T int  // X_KIND 4's element type
#endif

#include "storage_kinds.clh"
#define ST_4 INT_T
#define LD_4(p, i) ((ACC)(p)[i])
#define SV_4(p, i, v) ((p)[i] = (INT_T)(v))
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

// Along one dim: the window of tap t that covers padded position p (0 when none does; ok
// says whether one does). Branch-free: the work-items of a warp take the same path.
inline int tap_window(int p, int t, int dil, int stride, int windows, __private int* ok) {
  const int q = p - t * dil;
  const int w = stride == 1 ? q : q / stride;
  *ok = q >= 0 && w * stride == q && w < windows;
  return *ok ? w : 0;
}

// out[n, c, a0, a1, a2] (contiguous, `total` elements) = the sum over taps (t0, t1, t2) of
// v[n, c, t0, t1, t2, w0, w1, w2] with w_i = tap_window(a_i + pad_i, t_i, ...). The host
// checked that every spatial size, tap count, window count, stride, dilation and padding
// fits in an int.
__kernel void window_sum_back(PTR_ARG(X_T, v), PTR_ARG(X_T, out), long total, long C, int I0, int I1, int I2,
                              int K0, int K1, int K2, int O0, int O1, int O2, int S0, int S1, int S2, int D0,
                              int D1, int D2, int P0, int P1, int P2, long vs_n, long vs_c, long vs_k0, long vs_k1,
                              long vs_k2, long vs_o0, long vs_o1, long vs_o2) {
  __global const X_T* vp = PTR(X_T, v);
  __global X_T* op = PTR(X_T, out);
  FOR_EACH(i, total) {
    const int a2 = (int)(i % I2);
    long r = i / I2;
    const int a1 = (int)(r % I1);
    r /= I1;
    const int a0 = (int)(r % I0);
    r /= I0;
    const long base = (r / C) * vs_n + (r % C) * vs_c;
    ACC acc = (ACC)0;
    for (int t0 = 0; t0 < K0; ++t0) {
      int ok0, ok1, ok2;
      const long off0 = base + t0 * vs_k0 + tap_window(a0 + P0, t0, D0, S0, O0, &ok0) * vs_o0;
      for (int t1 = 0; t1 < K1; ++t1) {
        const long off1 = off0 + t1 * vs_k1 + tap_window(a1 + P1, t1, D1, S1, O1, &ok1) * vs_o1;
        for (int t2 = 0; t2 < K2; ++t2) {
          const long off = off1 + t2 * vs_k2 + tap_window(a2 + P2, t2, D2, S2, O2, &ok2) * vs_o2;
          const ACC x = LOAD_X(vp, off);  // in range: an invalid tap reads window 0 (v is not empty)
          acc += ok0 && ok1 && ok2 ? x : (ACC)0;
        }
      }
    }
    STORE_X(op, i, acc);
  }
}

// The same sum for CPU devices: one work-item per output row (n, c, a0, a1), in chunks of
// ROW_CHUNK positions a2 accumulated in private memory. Each valid (t0, t1) and t2 adds a run
// of v (consecutive windows w2) into the chunk: a loop the compiler vectorizes, where the
// per-element kernel's gathers do not (PoCL: 3.5x slower than this).
#define ROW_CHUNK 64
__kernel void window_sum_back_rows(PTR_ARG(X_T, v), PTR_ARG(X_T, out), long rows, long C, int I0, int I1, int I2,
                                   int K0, int K1, int K2, int O0, int O1, int O2, int S0, int S1, int S2, int D0,
                                   int D1, int D2, int P0, int P1, int P2, long vs_n, long vs_c, long vs_k0,
                                   long vs_k1, long vs_k2, long vs_o0, long vs_o1, long vs_o2) {
  __global const X_T* vp = PTR(X_T, v);
  __global X_T* op = PTR(X_T, out);
  FOR_EACH(row, rows) {
    long r = row;
    const int a1 = (int)(r % I1);
    r /= I1;
    const int a0 = (int)(r % I0);
    r /= I0;
    const long base = (r / C) * vs_n + (r % C) * vs_c;
    for (int c0 = 0; c0 < I2; c0 += ROW_CHUNK) {
      const int n = min(ROW_CHUNK, I2 - c0);
      ACC acc[ROW_CHUNK];
      for (int j = 0; j < n; ++j) acc[j] = (ACC)0;
      for (int t0 = 0; t0 < K0; ++t0) {
        int ok0, ok1;
        const long off0 = base + t0 * vs_k0 + tap_window(a0 + P0, t0, D0, S0, O0, &ok0) * vs_o0;
        if (!ok0) continue;
        for (int t1 = 0; t1 < K1; ++t1) {
          const long off1 = off0 + t1 * vs_k1 + tap_window(a1 + P1, t1, D1, S1, O1, &ok1) * vs_o1;
          if (!ok1) continue;
          for (int t2 = 0; t2 < K2; ++t2) {
            // Positions a2 = w2 * S2 + t2 * D2 - P2 of this chunk, for windows w2 in [0, O2).
            const int shift = t2 * D2 - P2;
            if (c0 + n - 1 - shift < 0) continue;  // every window of this tap lies past the chunk
            const int wlo = max(0, c0 - shift + S2 - 1) / S2;        // the first at or after c0
            const int whi = min(O2, (c0 + n - 1 - shift) / S2 + 1);  // one past the last in it
            __global const X_T* src = vp + off1 + t2 * vs_k2;
            if (S2 == 1) {
              for (int w = wlo; w < whi; ++w) acc[w + shift - c0] += LOAD_X(src, w * vs_o2);
            } else {
              for (int w = wlo; w < whi; ++w) acc[w * S2 + shift - c0] += LOAD_X(src, w * vs_o2);
            }
          }
        }
      }
      const long o = row * I2 + c0;
      for (int j = 0; j < n; ++j) STORE_X(op, o + j, acc[j]);
    }
  }
}
