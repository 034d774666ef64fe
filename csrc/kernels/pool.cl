// Pooling kernels on tensors of any strides (channels_last and other views are read in place).
// Adaptive pooling: output o of `out` windows over `in` rows reduces rows
// [floor(o*in/out), ceil((o+1)*in/out)). 2-D adaptive max pooling runs on (B, C, H, W) index
// spaces (position4); the rest on (B, C, D, H, W) ones (position5, in common.clh), 2-D pooling as D = 1.
// Backward kernels gather per input element over the windows that contain it instead of
// scattering per output, so overlapping windows add up in a fixed order, without atomics.
#include "common.clh"

#ifdef X_INT
// Integer values (max_pool3d of integer tensors, avg_pool3d of int64): stored as X_INT,
// compared and summed in long; X_LOWEST (the type's lowest value) starts a max scan.
#define ACC long
#define X_T X_INT
#define LOAD_X(p, i) ((ACC)(p)[i])
#define STORE_X(p, i, v) ((p)[i] = (X_INT)(v))
#define IS_NAN(v) ((v) != (v))  // never true: no integer is NaN
#else
#ifndef X_KIND
#define X_KIND 0  // storage kind of the values: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef ACC
#define ACC float  // compare / accumulate type (double for double tensors, float otherwise)
#endif
#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)
#define IS_NAN(v) isnan(v)
#endif
#ifndef X_LOWEST
#define X_LOWEST (-INFINITY)  // below (or equal to) every value: where a max scan starts
#endif
#ifndef WIDE_WG
#define WIDE_WG 64  // work-group size (a power of two) of adaptive_max_pool2d_fwd_wide
#endif

// First row of window o of `out` windows over `in` rows: floor(o * in / out).
inline IDX_T win_start(IDX_T o, IDX_T out, IDX_T in) { return o * in / out; }
// One past its last row: ceil((o + 1) * in / out).
inline IDX_T win_end(IDX_T o, IDX_T out, IDX_T in) { return ((o + 1) * in + out - 1) / out; }

// The (b, c, h, w) position of this work-item in a (B, C, H, W) index space launched as a 3-D
// range: (W, H, B * C), or, with c_fast (channels_last tensors, so that neighbouring
// work-items touch neighbouring addresses), (C, W, B * H). Returns false past the end (the
// first two dimensions are rounded up to the work-group size).
inline bool position4(IDX_T C, IDX_T H, IDX_T W, int c_fast, IDX_T* b, IDX_T* c, IDX_T* h, IDX_T* w) {
  const IDX_T i0 = get_global_id(0), i1 = get_global_id(1), i2 = get_global_id(2);
  if (c_fast) {
    if (i0 >= C || i1 >= W) return false;
    *c = i0, *w = i1, *h = i2 % H, *b = i2 / H;
  } else {
    if (i0 >= W || i1 >= H) return false;
    *w = i0, *h = i1, *c = i2 % C, *b = i2 / C;
  }
  return true;
}

// One work-item per output element (b, c, oh, ow). The window is scanned row-major; like the
// CPU, a value replaces the running maximum when it is larger or NaN (so ties keep the first
// position and the last NaN wins), and an all -inf window reports its first element. Indices
// are flat h * W + w positions in the plane (increasing in scan order).
__kernel void adaptive_max_pool2d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), PTR_ARG(long, idx), long C,
                                      long H, long W, long OH, long OW, long xs_b, long xs_c, long xs_h, long xs_w,
                                      long os_b, long os_c, long os_h, long os_w, long is_b, long is_c, long is_h,
                                      long is_w, int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  IDX_T b, c, oh, ow;
  if (position4(C, OH, OW, c_fast, &b, &c, &oh, &ow)) {
    const IDX_T h0 = win_start(oh, OH, H), h1 = win_end(oh, OH, H);
    const IDX_T w0 = win_start(ow, OW, W), w1 = win_end(ow, OW, W);
    const IDX_T base = b * xs_b + c * xs_c;
    ACC best = X_LOWEST;
    IDX_T best_i = h0 * W + w0;
    for (IDX_T h = h0; h < h1; ++h) {
      for (IDX_T w = w0; w < w1; ++w) {
        const ACC v = LOAD_X(xp, base + h * xs_h + w * xs_w);
        if (v > best || IS_NAN(v)) {
          best = v;
          best_i = h * W + w;
        }
      }
    }
    STORE_X(PTR(X_T, out), b * os_b + c * os_c + oh * os_h + ow * os_w, best);
    PTR(long, idx)[b * is_b + c * is_c + oh * is_h + ow * is_w] = best_i;
  }
}

// Of two partial results (value, index) of one window, the one the CPU's row-major scan keeps:
// a NaN beats any number and the later NaN beats an earlier one; else the larger value, and
// of equal values the earlier position.
inline bool keeps_first(ACC v1, long i1, ACC v2, long i2) {
  if (IS_NAN(v1) || IS_NAN(v2)) return IS_NAN(v1) && (!IS_NAN(v2) || i1 > i2);
  return v1 > v2 || (v1 == v2 && i1 < i2);
}

// adaptive_max_pool2d_fwd for large windows: a work-group of WIDE_WG items per output element
// (group g = ((b * C + c) * OH + oh) * OW + ow). Item t scans window elements t, t + WIDE_WG,
// ... in row-major order with the CPU's rule, then the group merges the items' results with
// keeps_first, which gives the same element as one scan of the whole window.
__kernel void adaptive_max_pool2d_fwd_wide(PTR_ARG(X_T, x), PTR_ARG(X_T, out), PTR_ARG(long, idx), long C, long H,
                                           long W, long OH, long OW, long xs_b, long xs_c, long xs_h, long xs_w,
                                           long os_b, long os_c, long os_h, long os_w, long is_b, long is_c,
                                           long is_h, long is_w) {
  __local ACC part_v[WIDE_WG];
  __local long part_i[WIDE_WG];
  const long g = get_group_id(0);
  const int t = (int)get_local_id(0);
  const long ow = g % OW, r = g / OW, oh = r % OH, bc = r / OH, b = bc / C, c = bc - b * C;
  const long h0 = win_start(oh, OH, H), h1 = win_end(oh, OH, H);
  const long w0 = win_start(ow, OW, W), w1 = win_end(ow, OW, W);
  const long ww = w1 - w0, area = (h1 - h0) * ww;
  __global const X_T* xp = PTR(X_T, x) + b * xs_b + c * xs_c;
  ACC best = X_LOWEST;
  long best_i = t < area ? (h0 + t / ww) * W + w0 + t % ww : LONG_MAX;  // an empty share loses every tie
  for (long e = t; e < area; e += WIDE_WG) {
    const long h = h0 + e / ww, w = w0 + e % ww;
    const ACC v = LOAD_X(xp, h * xs_h + w * xs_w);
    if (v > best || IS_NAN(v)) {
      best = v;
      best_i = h * W + w;
    }
  }
  part_v[t] = best;
  part_i[t] = best_i;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = WIDE_WG / 2; step > 0; step >>= 1) {
    if (t < step && !keeps_first(part_v[t], part_i[t], part_v[t + step], part_i[t + step])) {
      part_v[t] = part_v[t + step];
      part_i[t] = part_i[t + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    STORE_X(PTR(X_T, out), b * os_b + c * os_c + oh * os_h + ow * os_w, part_v[0]);
    PTR(long, idx)[b * is_b + c * is_c + oh * is_h + ow * is_w] = part_i[0];
  }
}

// One work-item per input element (b, c, h, w): the sum of grad_out over the windows that
// contain (h, w) and chose it as their maximum, in row-major window order (the order in which
// the CPU's scatter adds them). Window oh contains row h for oh in
// [floor(h*OH/H), ceil((h+1)*OH/H) - 1]. An index that names a position outside its own window
// (never one from the forward) reaches no input element here, where the CPU would add it there.
__kernel void adaptive_max_pool2d_bwd(PTR_ARG(X_T, gout), PTR_ARG(long, idx), PTR_ARG(X_T, gin), long C,
                                      long H, long W, long OH, long OW, long gs_b, long gs_c, long gs_h, long gs_w,
                                      long is_b, long is_c, long is_h, long is_w, long rs_b, long rs_c, long rs_h,
                                      long rs_w, int c_fast) {
  __global const X_T* gp = PTR(X_T, gout);
  __global const long* ip = PTR(long, idx);
  IDX_T b, c, h, w;
  if (position4(C, H, W, c_fast, &b, &c, &h, &w)) {
    const IDX_T oh0 = win_start(h, H, OH), oh1 = win_end(h, H, OH);
    const IDX_T ow0 = win_start(w, W, OW), ow1 = win_end(w, W, OW);
    const IDX_T me = h * W + w;
    ACC s = 0;
    for (IDX_T oh = oh0; oh < oh1; ++oh) {
      for (IDX_T ow = ow0; ow < ow1; ++ow) {
        if (ip[b * is_b + c * is_c + oh * is_h + ow * is_w] == me)
          s += LOAD_X(gp, b * gs_b + c * gs_c + oh * gs_h + ow * gs_w);
      }
    }
    STORE_X(PTR(X_T, gin), b * rs_b + c * rs_c + h * rs_h + w * rs_w, s);
  }
}

// ---- (B, C, D, H, W) index spaces: 3-D pooling, and 2-D pooling as D = 1 ----------------

// Five strides of a (B, C, D, H, W) view, as kernel arguments, and the offset of a position.
#define STRIDES5(s) long s##_b, long s##_c, long s##_d, long s##_h, long s##_w
#define AT5(s, b, c, d, h, w) ((b) * s##_b + (c) * s##_c + (d) * s##_d + (h) * s##_h + (w) * s##_w)

// Adaptive average pooling, one work-item per output element: the window's sum (in ACC) over
// its depth, then its height, then its width, as the CPU divides.
__kernel void adaptive_avg_pool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), long n, long C, long D, long H, long W,
                                      long OD, long OH, long OW, STRIDES5(xs), STRIDES5(os), int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  FOR_EACH(i, n) {
    IDX_T b, c, od, oh, ow;
    position5(i, C, OD, OH, OW, c_fast, &b, &c, &od, &oh, &ow);
    const IDX_T d0 = win_start(od, OD, D), d1 = win_end(od, OD, D);
    const IDX_T h0 = win_start(oh, OH, H), h1 = win_end(oh, OH, H);
    const IDX_T w0 = win_start(ow, OW, W), w1 = win_end(ow, OW, W);
    ACC s = 0;
    for (IDX_T d = d0; d < d1; ++d)
      for (IDX_T h = h0; h < h1; ++h)
        for (IDX_T w = w0; w < w1; ++w) s += LOAD_X(xp, AT5(xs, b, c, d, h, w));
    STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), s / (d1 - d0) / (h1 - h0) / (w1 - w0));
  }
}

// Its backward, one work-item per input element: the sum of grad_out / window size over the
// windows that contain it (window od contains row d for od in [floor(d*OD/D), ceil((d+1)*OD/D))).
__kernel void adaptive_avg_pool3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(X_T, gin), long n, long C, long D, long H, long W,
                                      long OD, long OH, long OW, STRIDES5(gs), STRIDES5(rs), int c_fast) {
  __global const X_T* gp = PTR(X_T, gout);
  FOR_EACH(i, n) {
    IDX_T b, c, d, h, w;
    position5(i, C, D, H, W, c_fast, &b, &c, &d, &h, &w);
    ACC s = 0;
    for (IDX_T od = win_start(d, D, OD); od < win_end(d, D, OD); ++od) {
      const IDX_T kd = win_end(od, OD, D) - win_start(od, OD, D);
      for (IDX_T oh = win_start(h, H, OH); oh < win_end(h, H, OH); ++oh) {
        const IDX_T kh = win_end(oh, OH, H) - win_start(oh, OH, H);
        for (IDX_T ow = win_start(w, W, OW); ow < win_end(w, W, OW); ++ow) {
          const IDX_T kw = win_end(ow, OW, W) - win_start(ow, OW, W);
          s += LOAD_X(gp, AT5(gs, b, c, od, oh, ow)) / kd / kh / kw;
        }
      }
    }
    STORE_X(PTR(X_T, gin), AT5(rs, b, c, d, h, w), s);
  }
}

// The largest value of a window of the (b, c) volume starting at `plane` (strides ps_d, ps_h,
// ps_w), scanned depth, row, column with steps (dd, dh, dw): a value replaces the running
// maximum when larger or NaN (ties keep the first, the last NaN wins; a window of the dtype's
// lowest values reports its first element). Returns its flat (d * H + h) * W + w index.
inline IDX_T window_max(__global const X_T* plane, long ps_d, long ps_h, long ps_w, IDX_T d0, IDX_T d1, IDX_T dd, IDX_T h0,
                       IDX_T h1, IDX_T dh, IDX_T w0, IDX_T w1, IDX_T dw, IDX_T H, IDX_T W, __private ACC* best) {
  ACC m = X_LOWEST;
  IDX_T at = (d0 * H + h0) * W + w0;
  for (IDX_T d = d0; d < d1; d += dd) {
    for (IDX_T h = h0; h < h1; h += dh) {
      for (IDX_T w = w0; w < w1; w += dw) {
        const ACC v = LOAD_X(plane, d * ps_d + h * ps_h + w * ps_w);
        if (v > m || IS_NAN(v)) {
          m = v;
          at = (d * H + h) * W + w;
        }
      }
    }
  }
  *best = m;
  return at;
}

// Adaptive max pooling, one work-item per output element, with the CPU's scan rule (see
// adaptive_max_pool2d_fwd); indices are flat (d * H + h) * W + w positions in the volume.
__kernel void adaptive_max_pool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), PTR_ARG(long, idx), long n, long C, long D,
                                      long H, long W, long OD, long OH, long OW, STRIDES5(xs), STRIDES5(os),
                                      STRIDES5(is), int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  FOR_EACH(i, n) {
    IDX_T b, c, od, oh, ow;
    position5(i, C, OD, OH, OW, c_fast, &b, &c, &od, &oh, &ow);
    const IDX_T d0 = win_start(od, OD, D), d1 = win_end(od, OD, D);
    const IDX_T h0 = win_start(oh, OH, H), h1 = win_end(oh, OH, H);
    const IDX_T w0 = win_start(ow, OW, W), w1 = win_end(ow, OW, W);
    ACC best;
    const IDX_T best_i = window_max(xp + b * xs_b + c * xs_c, xs_d, xs_h, xs_w, d0, d1, 1, h0, h1, 1, w0, w1, 1, H, W,
                                   &best);
    STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), best);
    PTR(long, idx)[AT5(is, b, c, od, oh, ow)] = best_i;
  }
}

// Its backward, one work-item per input element: grad_out summed over the windows that
// contain the element and name it as their maximum.
__kernel void adaptive_max_pool3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(long, idx), PTR_ARG(X_T, gin), long n, long C,
                                      long D, long H, long W, long OD, long OH, long OW, STRIDES5(gs), STRIDES5(is),
                                      STRIDES5(rs), int c_fast) {
  __global const X_T* gp = PTR(X_T, gout);
  __global const long* ip = PTR(long, idx);
  FOR_EACH(i, n) {
    IDX_T b, c, d, h, w;
    position5(i, C, D, H, W, c_fast, &b, &c, &d, &h, &w);
    const IDX_T me = (d * H + h) * W + w;
    ACC s = 0;
    for (IDX_T od = win_start(d, D, OD); od < win_end(d, D, OD); ++od)
      for (IDX_T oh = win_start(h, H, OH); oh < win_end(h, H, OH); ++oh)
        for (IDX_T ow = win_start(w, W, OW); ow < win_end(w, W, OW); ++ow)
          if (ip[AT5(is, b, c, od, oh, ow)] == me) s += LOAD_X(gp, AT5(gs, b, c, od, oh, ow));
    STORE_X(PTR(X_T, gin), AT5(rs, b, c, d, h, w), s);
  }
}

// The geometry of a (dilated, strided, padded) 3-D pooling: kernel size, stride, padding and
// dilation per dim (depth, height, width), as kernel arguments.
#define GEOM3 long kd, long kh, long kw, long sd, long sh, long sw, long pd, long ph, long pw, long dd, long dh, long dw

// First input row of window o that lies inside the input (the window starts at o*s - p and
// steps by dil), and one past its last row, as the CPU's max pooling clips them.
inline IDX_T max_first(IDX_T o, IDX_T s, IDX_T p, IDX_T dil) {
  const IDX_T start = o * s - p;
  return start < 0 ? start + (-start + dil - 1) / dil * dil : start;
}
inline IDX_T max_last(IDX_T o, IDX_T s, IDX_T p, IDX_T k, IDX_T dil, IDX_T in) { return min(o * s - p + (k - 1) * dil + 1, in); }

// Max pooling, one work-item per output element: the window scanned depth, row, column, a
// value replacing the running maximum when larger or NaN (as on the CPU: ties keep the first,
// the last NaN wins; a window of the dtype's lowest values reports its first element).
__kernel void max_pool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), PTR_ARG(long, idx), long n, long C, long D, long H,
                             long W, long OD, long OH, long OW, GEOM3, STRIDES5(xs), STRIDES5(os), STRIDES5(is),
                             int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  FOR_EACH(i, n) {
    IDX_T b, c, od, oh, ow;
    position5(i, C, OD, OH, OW, c_fast, &b, &c, &od, &oh, &ow);
    const IDX_T d0 = max_first(od, sd, pd, dd), d1 = max_last(od, sd, pd, kd, dd, D);
    const IDX_T h0 = max_first(oh, sh, ph, dh), h1 = max_last(oh, sh, ph, kh, dh, H);
    const IDX_T w0 = max_first(ow, sw, pw, dw), w1 = max_last(ow, sw, pw, kw, dw, W);
    ACC best;
    const IDX_T best_i = window_max(xp + b * xs_b + c * xs_c, xs_d, xs_h, xs_w, d0, d1, dd, h0, h1, dh, w0, w1, dw, H, W,
                                   &best);
    STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), best);
    PTR(long, idx)[AT5(is, b, c, od, oh, ow)] = best_i;
  }
}

// Output window along one dim whose tap t reads input row r: o with o*s - p + t*dil == r, or
// -1 when there is none in [0, out).
inline IDX_T tap_window(IDX_T r, IDX_T t, IDX_T s, IDX_T p, IDX_T dil, IDX_T out) {
  const IDX_T q = r + p - t * dil;
  return q >= 0 && q % s == 0 && q / s < out ? q / s : -1;
}

// First and last (inclusive) undilated windows along one dim that contain input row r:
// o*s - p <= r < o*s - p + k, within [0, out).
inline IDX_T first_window(IDX_T r, IDX_T k, IDX_T s, IDX_T p) {
  const IDX_T q = r + p - k + 1;
  return q <= 0 ? 0 : (q + s - 1) / s;
}
inline IDX_T last_window(IDX_T r, IDX_T s, IDX_T p, IDX_T out) { return min((r + p) / s, out - 1); }

// Its backward, one work-item per input element: every window that contains the element adds
// its gradient when its index names the element, in window order. Undilated windows containing
// a row form a range per dim (first_window..last_window); dilated ones are found per kernel tap.
__kernel void max_pool3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(long, idx), PTR_ARG(X_T, gin), long n, long C, long D,
                             long H, long W, long OD, long OH, long OW, GEOM3, STRIDES5(gs), STRIDES5(is),
                             STRIDES5(rs), int c_fast) {
  __global const X_T* gp = PTR(X_T, gout);
  __global const long* ip = PTR(long, idx);
  FOR_EACH(i, n) {
    IDX_T b, c, d, h, w;
    position5(i, C, D, H, W, c_fast, &b, &c, &d, &h, &w);
    const IDX_T me = (d * H + h) * W + w;
    ACC s = 0;
    if (dd == 1 && dh == 1 && dw == 1) {
      for (IDX_T od = first_window(d, kd, sd, pd); od <= last_window(d, sd, pd, OD); ++od)
        for (IDX_T oh = first_window(h, kh, sh, ph); oh <= last_window(h, sh, ph, OH); ++oh)
          for (IDX_T ow = first_window(w, kw, sw, pw); ow <= last_window(w, sw, pw, OW); ++ow)
            if (ip[AT5(is, b, c, od, oh, ow)] == me) s += LOAD_X(gp, AT5(gs, b, c, od, oh, ow));
    } else {
      for (IDX_T td = 0; td < kd; ++td) {
        const IDX_T od = tap_window(d, td, sd, pd, dd, OD);
        if (od < 0) continue;
        for (IDX_T th = 0; th < kh; ++th) {
          const IDX_T oh = tap_window(h, th, sh, ph, dh, OH);
          if (oh < 0) continue;
          for (IDX_T tw = 0; tw < kw; ++tw) {
            const IDX_T ow = tap_window(w, tw, sw, pw, dw, OW);
            if (ow >= 0 && ip[AT5(is, b, c, od, oh, ow)] == me) s += LOAD_X(gp, AT5(gs, b, c, od, oh, ow));
          }
        }
      }
    }
    STORE_X(PTR(X_T, gin), AT5(rs, b, c, d, h, w), s);
  }
}

#ifdef POOL_KH
// max_pool3d_fwd for undilated 2-D windows whose kernel size and stride are build options: one
// work-item per output element through position4's 3-D range, the window's taps unrolled.
// The same scan (row-major, a value replacing the maximum when larger or NaN; a window of the
// lowest values reports its first element inside the input).
__kernel void max_pool2d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), PTR_ARG(long, idx), long C, long H, long W, long OH,
                             long OW, long ph, long pw, long xs_b, long xs_c, long xs_h, long xs_w, long os_b,
                             long os_c, long os_h, long os_w, long is_b, long is_c, long is_h, long is_w, int c_fast) {
  IDX_T b, c, oh, ow;
  if (!position4(C, OH, OW, c_fast, &b, &c, &oh, &ow)) return;
  const IDX_T h0 = oh * POOL_SH - ph, w0 = ow * POOL_SW - pw;
  __global const X_T* xp = PTR(X_T, x) + b * xs_b + c * xs_c;
  ACC m = X_LOWEST;
  long at = (long)max(h0, (IDX_T)0) * W + max(w0, (IDX_T)0);
#pragma unroll
  for (int kh = 0; kh < POOL_KH; ++kh) {
    const IDX_T h = h0 + kh;
    if (h < 0 || h >= H) continue;
#pragma unroll
    for (int kw = 0; kw < POOL_KW; ++kw) {
      const IDX_T w = w0 + kw;
      if (w < 0 || w >= W) continue;
      const ACC v = LOAD_X(xp, h * xs_h + w * xs_w);
      if (v > m || IS_NAN(v)) {
        m = v;
        at = (long)h * W + w;
      }
    }
  }
  STORE_X(PTR(X_T, out), b * os_b + c * os_c + oh * os_h + ow * os_w, m);
  PTR(long, idx)[b * is_b + c * is_c + oh * is_h + ow * is_w] = at;
}

// max_pool3d_bwd for undilated 2-D windows whose kernel size and stride are build options
// (POOL_KH, POOL_KW, POOL_SH, POOL_SW), so the window ranges divide by constants, with one
// work-item per input element through position4's 3-D range instead of a flat index divided
// into five coordinates: the divisions were most of max_pool3d_bwd's time on GPUs (H200,
// ResNet's 3x3 stride-2 pooling of 32x64x112^2: 639 us against CUDA's 290). Same sums, in
// the same window order.
__kernel void max_pool2d_bwd(PTR_ARG(X_T, gout), PTR_ARG(long, idx), PTR_ARG(X_T, gin), long C, long H, long W,
                             long OH, long OW, long ph, long pw, long gs_b, long gs_c, long gs_h, long gs_w, long is_b,
                             long is_c, long is_h, long is_w, long rs_b, long rs_c, long rs_h, long rs_w, int c_fast) {
  IDX_T b, c, h, w;
  if (!position4(C, H, W, c_fast, &b, &c, &h, &w)) return;
  const IDX_T oh0 = first_window(h, POOL_KH, POOL_SH, ph), oh1 = last_window(h, POOL_SH, ph, OH);
  const IDX_T ow0 = first_window(w, POOL_KW, POOL_SW, pw), ow1 = last_window(w, POOL_SW, pw, OW);
  const long me = (long)h * W + w;
  __global const X_T* gp = PTR(X_T, gout) + b * gs_b + c * gs_c;
  __global const long* ip = PTR(long, idx) + b * is_b + c * is_c;
  ACC s = 0;
  for (IDX_T oh = oh0; oh <= oh1; ++oh)
    for (IDX_T ow = ow0; ow <= ow1; ++ow)
      if (ip[oh * is_h + ow * is_w] == me) s += LOAD_X(gp, oh * gs_h + ow * gs_w);
  STORE_X(PTR(X_T, gin), b * rs_b + c * rs_c + h * rs_h + w * rs_w, s);
}
#endif

// Average pooling window o along one dim: its rows inside the input, [*lo, *hi); returns its
// extent inside the padded input (the count_include_pad divisor's factor), as the CPU clips.
inline IDX_T avg_range(IDX_T o, IDX_T k, IDX_T s, IDX_T p, IDX_T in, __private IDX_T* lo, __private IDX_T* hi) {
  const IDX_T start = o * s - p, end = min(start + k, in + p);
  *lo = max(start, (IDX_T)0);
  *hi = min(end, in);
  return end - start;
}

// The divisor of average pooling window (od, oh, ow) (its input rows in lo/hi), as the CPU's:
// divisor_override when nonzero, else the window's size in the padded input or in the input.
inline IDX_T avg_divisor(IDX_T padded, IDX_T dd, IDX_T dh, IDX_T dw, int count_include_pad, IDX_T divisor_override) {
  return divisor_override ? divisor_override : count_include_pad ? padded : dd * dh * dw;
}

// Average pooling, one work-item per output element: the window's sum over its divisor (an
// integer quotient truncated, as on the CPU), 0 for a window with no input element.
__kernel void avg_pool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), long n, long C, long D, long H, long W, long OD,
                             long OH, long OW, long kd, long kh, long kw, long sd, long sh, long sw, long pd, long ph,
                             long pw, int count_include_pad, long divisor_override, STRIDES5(xs), STRIDES5(os),
                             int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  FOR_EACH(i, n) {
    IDX_T b, c, od, oh, ow, d0, d1, h0, h1, w0, w1;
    position5(i, C, OD, OH, OW, c_fast, &b, &c, &od, &oh, &ow);
    const IDX_T padded = avg_range(od, kd, sd, pd, D, &d0, &d1) * avg_range(oh, kh, sh, ph, H, &h0, &h1) *
                        avg_range(ow, kw, sw, pw, W, &w0, &w1);
    ACC s = 0;
    for (IDX_T d = d0; d < d1; ++d)
      for (IDX_T h = h0; h < h1; ++h)
        for (IDX_T w = w0; w < w1; ++w) s += LOAD_X(xp, AT5(xs, b, c, d, h, w));
    const bool empty = d0 >= d1 || h0 >= h1 || w0 >= w1;
    const IDX_T div = avg_divisor(padded, d1 - d0, h1 - h0, w1 - w0, count_include_pad, divisor_override);
    STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), empty ? (ACC)0 : s / (ACC)div);
  }
}

// Its backward, one work-item per input element: grad_out / divisor (truncated for integers,
// per window, as the CPU adds it) summed over the windows that contain the element.
__kernel void avg_pool3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(X_T, gin), long n, long C, long D, long H, long W, long OD,
                             long OH, long OW, long kd, long kh, long kw, long sd, long sh, long sw, long pd, long ph,
                             long pw, int count_include_pad, long divisor_override, STRIDES5(gs), STRIDES5(rs),
                             int c_fast) {
  __global const X_T* gp = PTR(X_T, gout);
  FOR_EACH(i, n) {
    IDX_T b, c, d, h, w, lo, hi;
    position5(i, C, D, H, W, c_fast, &b, &c, &d, &h, &w);
    ACC s = 0;
    for (IDX_T od = first_window(d, kd, sd, pd); od <= last_window(d, sd, pd, OD); ++od) {
      const IDX_T pad_d = avg_range(od, kd, sd, pd, D, &lo, &hi), in_d = hi - lo;
      for (IDX_T oh = first_window(h, kh, sh, ph); oh <= last_window(h, sh, ph, OH); ++oh) {
        const IDX_T pad_h = avg_range(oh, kh, sh, ph, H, &lo, &hi), in_h = hi - lo;
        for (IDX_T ow = first_window(w, kw, sw, pw); ow <= last_window(w, sw, pw, OW); ++ow) {
          const IDX_T pad_w = avg_range(ow, kw, sw, pw, W, &lo, &hi), in_w = hi - lo;
          const IDX_T div = avg_divisor(pad_d * pad_h * pad_w, in_d, in_h, in_w, count_include_pad, divisor_override);
          s += LOAD_X(gp, AT5(gs, b, c, od, oh, ow)) / (ACC)div;
        }
      }
    }
    STORE_X(PTR(X_T, gin), AT5(rs, b, c, d, h, w), s);
  }
}

#ifdef POOL_KH
// avg_pool3d_fwd and avg_pool3d_bwd for 2-D windows whose kernel size and stride are build
// options, over position4's 3-D range (see max_pool2d_bwd): the same sums in the same order.
__kernel void avg_pool2d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, out), long C, long H, long W, long OH, long OW, long ph,
                             long pw, int count_include_pad, long divisor_override, long xs_b, long xs_c, long xs_h,
                             long xs_w, long os_b, long os_c, long os_h, long os_w, int c_fast) {
  IDX_T b, c, oh, ow, h0, h1, w0, w1;
  if (!position4(C, OH, OW, c_fast, &b, &c, &oh, &ow)) return;
  const IDX_T padded =
      avg_range(oh, POOL_KH, POOL_SH, ph, H, &h0, &h1) * avg_range(ow, POOL_KW, POOL_SW, pw, W, &w0, &w1);
  __global const X_T* xp = PTR(X_T, x) + b * xs_b + c * xs_c;
  ACC s = 0;
  for (IDX_T h = h0; h < h1; ++h)
    for (IDX_T w = w0; w < w1; ++w) s += LOAD_X(xp, h * xs_h + w * xs_w);
  const bool empty = h0 >= h1 || w0 >= w1;
  const IDX_T div = avg_divisor(padded, 1, h1 - h0, w1 - w0, count_include_pad, divisor_override);
  STORE_X(PTR(X_T, out), b * os_b + c * os_c + oh * os_h + ow * os_w, empty ? (ACC)0 : s / (ACC)div);
}

__kernel void avg_pool2d_bwd(PTR_ARG(X_T, gout), PTR_ARG(X_T, gin), long C, long H, long W, long OH, long OW, long ph,
                             long pw, int count_include_pad, long divisor_override, long gs_b, long gs_c, long gs_h,
                             long gs_w, long rs_b, long rs_c, long rs_h, long rs_w, int c_fast) {
  IDX_T b, c, h, w, lo, hi;
  if (!position4(C, H, W, c_fast, &b, &c, &h, &w)) return;
  __global const X_T* gp = PTR(X_T, gout) + b * gs_b + c * gs_c;
  ACC s = 0;
  for (IDX_T oh = first_window(h, POOL_KH, POOL_SH, ph); oh <= last_window(h, POOL_SH, ph, OH); ++oh) {
    const IDX_T pad_h = avg_range(oh, POOL_KH, POOL_SH, ph, H, &lo, &hi), in_h = hi - lo;
    for (IDX_T ow = first_window(w, POOL_KW, POOL_SW, pw); ow <= last_window(w, POOL_SW, pw, OW); ++ow) {
      const IDX_T pad_w = avg_range(ow, POOL_KW, POOL_SW, pw, W, &lo, &hi), in_w = hi - lo;
      const IDX_T div = avg_divisor(pad_h * pad_w, 1, in_h, in_w, count_include_pad, divisor_override);
      s += LOAD_X(gp, oh * gs_h + ow * gs_w) / (ACC)div;
    }
  }
  STORE_X(PTR(X_T, gin), b * rs_b + c * rs_c + h * rs_h + w * rs_w, s);
}
#endif

// Max unpooling, one work-item per input element: its value goes to the output position its
// index names in its (OD, OH, OW) plane (flat (od * OH + oh) * OW + ow); the output was zeroed.
// An index outside the plane sets the device error flag (the CPU's RuntimeError). Indices
// that repeat in a plane (never from max pooling, where a repeat carries the same value) leave
// one of their values, as on the CPU, which does not define which either.
__kernel void max_unpool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(long, idx), PTR_ARG(X_T, out), long n, long C, long D,
                               long H, long W, long OD, long OH, long OW, STRIDES5(xs), STRIDES5(is), STRIDES5(os),
                               int c_fast, __global int* err) {
  __global const X_T* xp = PTR(X_T, x);
  FOR_EACH(i, n) {
    IDX_T b, c, d, h, w;
    position5(i, C, D, H, W, c_fast, &b, &c, &d, &h, &w);
    const long p = PTR(long, idx)[AT5(is, b, c, d, h, w)];  // unchecked input: 64-bit
    if (p < 0 || p >= OD * OH * OW) {
      report_error(err, ERR_POOL_MAX_INDEX);
    } else {
      const long ow = p % OW, oh = p / OW % OH, od = p / (OW * OH);
      STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), LOAD_X(xp, AT5(xs, b, c, d, h, w)));
    }
  }
}

// Arithmetic in the input's precision: float16 / bfloat16 results rounded after every operation,
// as c10::Half / c10::BFloat16 arithmetic rounds them on the CPU.
#if defined(X_KIND) && X_KIND == 2
#define ROUND_X(v) round_to_half(v)
#elif defined(X_KIND) && X_KIND == 3
#define ROUND_X(v) round_to_bf16(v)
#else
#define ROUND_X(v) (v)
#endif

// An ACC value the host computed, passed as its bits (a double's, else a float's).
inline ACC acc_from_bits(ulong bits) {
#if defined(X_KIND) && X_KIND == 1
  return as_double(bits);
#else
  return as_float((uint)bits);
#endif
}

// First input row of fractional max pooling window o (of `out` windows of k rows over `in`)
// for the plane's sample u: the CPU's (int)((o + u) * alpha) - (int)(u * alpha) in the input's
// precision, alpha = (in - k) / (out - 1) from the host; the last window ends at the input's end.
inline long frac_start(long o, long out, long in, long k, ACC u, ACC alpha) {
  if (o == out - 1) return in - k;
  return (long)ROUND_X(ROUND_X(ROUND_X((ACC)o) + u) * alpha) - (long)ROUND_X(u * alpha);
}

// Fractional max pooling, one work-item per output element: windows of kd x kh x kw starting
// at frac_start, with the samples of plane (b, c) at samples[b, c, sample_*] (2-D pooling: D = 1,
// kd = 1); the scan rule of max_pool3d_fwd.
__kernel void fractional_max_pool3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, samples), PTR_ARG(X_T, out),
                                        PTR_ARG(long, idx), long n, long C, long D, long H, long W, long OD, long OH,
                                        long OW, long kd, long kh, long kw, ulong alpha_d, ulong alpha_h,
                                        ulong alpha_w, long ss_b, long ss_c, long ss_k, long sample_d, long sample_h,
                                        long sample_w, STRIDES5(xs), STRIDES5(os), STRIDES5(is), int c_fast) {
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* sp = PTR(X_T, samples);
  FOR_EACH(i, n) {
    IDX_T b, c, od, oh, ow;
    position5(i, C, OD, OH, OW, c_fast, &b, &c, &od, &oh, &ow);
    const long s = b * ss_b + c * ss_c;
    const IDX_T d0 = frac_start(od, OD, D, kd, LOAD_X(sp, s + sample_d * ss_k), acc_from_bits(alpha_d));
    const IDX_T h0 = frac_start(oh, OH, H, kh, LOAD_X(sp, s + sample_h * ss_k), acc_from_bits(alpha_h));
    const IDX_T w0 = frac_start(ow, OW, W, kw, LOAD_X(sp, s + sample_w * ss_k), acc_from_bits(alpha_w));
    ACC best;
    const IDX_T best_i = window_max(xp + b * xs_b + c * xs_c, xs_d, xs_h, xs_w, d0, d0 + kd, 1, h0, h0 + kh, 1, w0,
                                   w0 + kw, 1, H, W, &best);
    STORE_X(PTR(X_T, out), AT5(os, b, c, od, oh, ow), best);
    PTR(long, idx)[AT5(is, b, c, od, oh, ow)] = best_i;
  }
}

// Its backward, one work-item per (b, c) plane of the zeroed grad_in: each output's gradient
// added, in output order, to the element its index names, the sum kept in the input's dtype
// (the CPU's order and rounding), without atomics. An index outside the plane sets the device
// error flag (the CPU's assertion).
__kernel void fractional_max_pool3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(long, idx), PTR_ARG(X_T, gin), long planes,
                                        long C, long D, long H, long W, long OD, long OH, long OW, STRIDES5(gs),
                                        STRIDES5(is), STRIDES5(rs), __global int* err) {
  __global const X_T* gp = PTR(X_T, gout);
  __global const long* ip = PTR(long, idx);
  __global X_T* rp = PTR(X_T, gin);
  FOR_EACH(p, planes) {
    const long b = p / C, c = p % C;
    for (long od = 0; od < OD; ++od) {
      for (long oh = 0; oh < OH; ++oh) {
        for (long ow = 0; ow < OW; ++ow) {
          const long q = ip[AT5(is, b, c, od, oh, ow)];
          if (q < 0 || q >= D * H * W) {
            report_error(err, ERR_POOL_MAX_INDEX);
            continue;
          }
          const long at = AT5(rs, b, c, q / (H * W), q / W % H, q % W);
          STORE_X(rp, at, LOAD_X(rp, at) + LOAD_X(gp, AT5(gs, b, c, od, oh, ow)));
        }
      }
    }
  }
}
