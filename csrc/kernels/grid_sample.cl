// Grid sampling (F.grid_sample) of (N, C, H, W) inputs at (N, OH, OW, 2) grids and of
// (N, C, D, H, W) inputs at (N, OD, OH, OW, 3) grids, forward and backward, any strides.
// One work-item per grid point (and, forward, slice of channels): the point's coordinates and
// weights are computed once and applied to each channel.
// Coordinate math: grid values in [-1, 1] map to pixel positions (align_corners: -1 and 1
// are the corner pixels' centres; else their outer edges); padding "border" clamps a position
// to [0, size - 1], "reflection" mirrors it at the edges (the centres, or the outer edges)
// and clamps; "zeros" reads 0 outside. In 2-D, clamping uses fmin/fmax, so a NaN position
// becomes 0 where a padding mode clamps it, as in the CPU's 2-D kernels (3-D: see below).
// Bicubic uses Keys' cubic convolution with A = -0.75 on the 4x4 taps around the position,
// each tap padded on its own.
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind of input, grid and outputs: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef ACC
#define ACC float  // coordinate / accumulation type (double for double tensors, float otherwise)
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

// Must match GridSamplerInterpolation / GridSamplerPadding (ATen's mode integers).
#define MODE_BILINEAR 0
#define MODE_NEAREST 1
#define MODE_BICUBIC 2
#define PAD_ZEROS 0
#define PAD_BORDER 1
#define PAD_REFLECTION 2

#define CUBIC_A ((ACC)-0.75)

// Grid value c in [-1, 1] -> pixel position along an axis of `size` pixels; *d = d(pos)/d(c).
inline ACC unnormalize(ACC c, long size, int align, __private ACC* d) {
  if (align) {
    *d = (ACC)(size - 1) / 2;
    return (c + 1) * *d;
  }
  *d = (ACC)size / 2;
  return fma(c + 1, *d, (ACC)-0.5);
}

// What clamping makes of a NaN position: 0 (the CPU's 2-D kernels), size - 1 (its 3-D
// forward) or NaN (its 3-D backward; such a position then has no taps inside).
#define NAN_TO_LOW 0
#define NAN_TO_HIGH 1
#define NAN_STAYS 2

// Clamp to [0, size - 1]; *d (d out / d in) is 0 where it clamped (and at the bounds).
inline ACC clip(ACC x, long size, int nan_mode, __private ACC* d) {
  const ACC hi = (ACC)(size - 1);
  *d = (x > 0 && x < hi) ? (ACC)1 : (ACC)0;
  if (isnan(x) && nan_mode != NAN_TO_LOW) return nan_mode == NAN_TO_HIGH ? hi : x;
  return fmin(fmax(x, (ACC)0), hi);
}

// Mirror x into [lo, lo + span] (folding with period 2 * span); *d is +-1.
inline ACC reflect(ACC x, ACC lo, ACC span, __private ACC* d) {
  if (span <= 0) {
    *d = 0;
    return 0;
  }
  const ACC t = x - lo, period = 2 * span;
  const ACC a = fabs(t), e = fmod(a, period), back = period - e;
  const ACC sign = t < 0 ? (ACC)-1 : (ACC)1;
  *d = e <= back ? sign : -sign;
  return fmin(e, back) + lo;
}

// The padding mode applied to position x on an axis of `size` pixels; *d = d(result)/d(x).
inline ACC pad_coord(ACC x, long size, int padding, int align, int nan_mode, __private ACC* d) {
  if (padding == PAD_ZEROS) {
    *d = 1;
    return x;
  }
  ACC dr = 1, dc;
  if (padding == PAD_REFLECTION) {
    x = align ? reflect(x, (ACC)0, (ACC)(size - 1), &dr) : reflect(x, (ACC)-0.5, (ACC)size, &dr);
  }
  x = clip(x, size, nan_mode, &dc);
  *d = dr * dc;
  return x;
}

// Whether integral position p (a float) is a pixel of an axis of `size` (false for NaN).
inline bool inside(ACC p, long size) { return p >= 0 && p <= (ACC)(size - 1); }

// Keys' cubic convolution weights of the taps at offsets -1, 0, 1, 2 from floor(pos), t the
// fraction; dw their derivatives by t.
inline void cubic_weights(ACC t, __private ACC* w, __private ACC* dw) {
  const ACC A = CUBIC_A;
  // |s| <= 1: (A + 2)|s|^3 - (A + 3)|s|^2 + 1;  1 < |s| < 2: A|s|^3 - 5A|s|^2 + 8A|s| - 4A
  const ACC s0 = t + 1, s1 = t, s2 = 1 - t, s3 = 2 - t;
  w[0] = ((A * s0 - 5 * A) * s0 + 8 * A) * s0 - 4 * A;
  w[1] = ((A + 2) * s1 - (A + 3)) * s1 * s1 + 1;
  w[2] = ((A + 2) * s2 - (A + 3)) * s2 * s2 + 1;
  w[3] = ((A * s3 - 5 * A) * s3 + 8 * A) * s3 - 4 * A;
  dw[0] = (3 * A * s0 - 10 * A) * s0 + 8 * A;
  dw[1] = (3 * (A + 2) * s1 - 2 * (A + 3)) * s1;
  dw[2] = -(3 * (A + 2) * s2 - 2 * (A + 3)) * s2;
  dw[3] = -((3 * A * s3 - 10 * A) * s3 + 8 * A);
}

// The taps of one grid point: positions (tx, ty) with weights, valid[k] false where tap k is
// outside the input (it reads 0 and receives no gradient). Bilinear and nearest taps carry
// their weight w and its derivatives by the position (dwx, dwy); bicubic taps are the 4x4
// products of per-axis weights cx[i] * cy[j] (derivatives dcx, dcy), tap k = j * 4 + i.
typedef struct {
  int n;            // taps used: 4 bilinear, 1 nearest, 16 bicubic
  long tx[16], ty[16];
  bool valid[16];
  ACC w[4], dwx[4], dwy[4];
  ACC cx[4], cy[4], dcx[4], dcy[4];
  ACC mx, my;       // d(position)/d(grid value) per axis (unnormalize and padding factors)
} Taps;

inline void make_taps(ACC gx, ACC gy, long H, long W, int mode, int padding, int align, __private Taps* tp) {
  ACC ux, uy;
  ACC ix = unnormalize(gx, W, align, &ux), iy = unnormalize(gy, H, align, &uy);
  if (mode == MODE_BICUBIC) {
    // The taps are padded one by one; the position itself is not, so its gradient has only
    // the unnormalize factor.
    const ACC x0 = floor(ix), y0 = floor(iy);
    cubic_weights(ix - x0, tp->cx, tp->dcx);
    cubic_weights(iy - y0, tp->cy, tp->dcy);
    tp->n = 16;
    tp->mx = ux;
    tp->my = uy;
    for (int j = 0; j < 4; ++j) {
      ACC unused;
      const ACC py = pad_coord(y0 - 1 + j, H, padding, align, NAN_TO_LOW, &unused);
      for (int i = 0; i < 4; ++i) {
        const ACC px = pad_coord(x0 - 1 + i, W, padding, align, NAN_TO_LOW, &unused);
        const int k = j * 4 + i;
        tp->valid[k] = inside(px, W) && inside(py, H);
        tp->tx[k] = tp->valid[k] ? (long)px : 0;
        tp->ty[k] = tp->valid[k] ? (long)py : 0;
      }
    }
    return;
  }
  ACC px, py;
  ix = pad_coord(ix, W, padding, align, NAN_TO_LOW, &px);
  iy = pad_coord(iy, H, padding, align, NAN_TO_LOW, &py);
  tp->mx = ux * px;
  tp->my = uy * py;
  if (mode == MODE_NEAREST) {
    const ACC x = rint(ix), y = rint(iy);  // halfway cases to even, like nearbyint
    tp->n = 1;
    tp->valid[0] = inside(x, W) && inside(y, H);
    tp->tx[0] = tp->valid[0] ? (long)x : 0;
    tp->ty[0] = tp->valid[0] ? (long)y : 0;
    tp->w[0] = 1;
    tp->dwx[0] = 0;
    tp->dwy[0] = 0;
    return;
  }
  const ACC x0 = floor(ix), y0 = floor(iy);
  const ACC x1 = x0 + 1, y1 = y0 + 1;
  const ACC fx = ix - x0, fy = iy - y0, bx = x1 - ix, by = y1 - iy;  // distances to the taps
  tp->n = 4;
  // Taps nw, ne, sw, se.
  const ACC xs[4] = {x0, x1, x0, x1}, ys[4] = {y0, y0, y1, y1};
  tp->w[0] = bx * by, tp->w[1] = fx * by, tp->w[2] = bx * fy, tp->w[3] = fx * fy;
  tp->dwx[0] = -by, tp->dwx[1] = by, tp->dwx[2] = -fy, tp->dwx[3] = fy;
  tp->dwy[0] = -bx, tp->dwy[1] = -fx, tp->dwy[2] = bx, tp->dwy[3] = fx;
  for (int k = 0; k < 4; ++k) {
    tp->valid[k] = inside(xs[k], W) && inside(ys[k], H);
    tp->tx[k] = tp->valid[k] ? (long)xs[k] : 0;
    tp->ty[k] = tp->valid[k] ? (long)ys[k] : 0;
  }
}

// Tap k's value in the plane at xp + base (0 outside the input).
inline ACC tap(__global const X_T* xp, long base, long sh, long sw, __private const Taps* tp, int k) {
  return tp->valid[k] ? LOAD_X(xp, base + tp->ty[k] * sh + tp->tx[k] * sw) : (ACC)0;
}

// The sampled value of one channel. Bicubic blends each tap row along x first, then the rows
// along y.
inline ACC sample(__global const X_T* xp, long base, long sh, long sw, __private const Taps* tp, int mode) {
  ACC r = 0;
  if (mode == MODE_BICUBIC) {
    for (int j = 0; j < 4; ++j) {
      ACC row = 0;
      for (int i = 0; i < 4; ++i) row += tap(xp, base, sh, sw, tp, j * 4 + i) * tp->cx[i];
      r += row * tp->cy[j];
    }
    return r;
  }
  for (int k = 0; k < tp->n; ++k) r += tap(xp, base, sh, sw, tp, k) * tp->w[k];
  return r;
}

// Opens every 2-D kernel: declares output point p's coordinates (n, oh, ow) and its taps tp,
// from the kernel's grid arguments (grid, gs_n, gs_h, gs_w, gs_k) and geometry.
#define POINT_TAPS_2D                                                                    \
  const long ow = p % OW, t_ = p / OW, oh = t_ % OH, n = t_ / OH;                        \
  Taps tp;                                                                               \
  do {                                                                                   \
    __global const X_T* gp_ = PTR(X_T, grid);                                            \
    const long g_ = n * gs_n + oh * gs_h + ow * gs_w;                                    \
    make_taps(LOAD_X(gp_, g_), LOAD_X(gp_, g_ + gs_k), H, W, mode, padding, align, &tp); \
  } while (0)

// out[n, c, oh, ow] = input[n, c] sampled at grid[n, oh, ow]. Range: (points, channel slices);
// slice s covers channels [s * cps, (s + 1) * cps).
__kernel void grid_sampler_2d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, grid), PTR_ARG(X_T, out), long P, long C, long H,
                                  long W, long OH, long OW, long xs_n, long xs_c, long xs_h, long xs_w, long gs_n,
                                  long gs_h, long gs_w, long gs_k, long os_n, long os_c, long os_h, long os_w,
                                  long cps, int mode, int padding, int align) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_2D;
  __global const X_T* xp = PTR(X_T, x);
  const long c0 = get_global_id(1) * cps, c1 = min(C, c0 + cps);
  for (long c = c0; c < c1; ++c)
    STORE_X(PTR(X_T, out), n * os_n + c * os_c + oh * os_h + ow * os_w,
            sample(xp, n * xs_n + c * xs_c, xs_h, xs_w, &tp, mode));
}

// For a deterministic input gradient (torch.use_deterministic_algorithms): the T taps of
// each grid point p (T = 4 bilinear, 1 nearest, 16 bicubic) as weights w[p * T + k] and flat
// plane positions pos[p * T + k] = y * W + x; a tap outside the input gets weight 0 and the
// spare position H * W past the plane (so an infinite gradient cannot reach a real pixel). The
// host sums gradient * weight into those positions with a sorted, deterministic scatter-add.
__kernel void grid_sampler_2d_bwd_taps(PTR_ARG(X_T, grid), PTR_ARG(ACC, wt), PTR_ARG(long, pos), long P, long H,
                                       long W, long OH, long OW, long gs_n, long gs_h, long gs_w, long gs_k, int mode,
                                       int padding, int align) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_2D;
  for (int k = 0; k < tp.n; ++k) {
    const ACC w = mode == MODE_BICUBIC ? tp.cx[k & 3] * tp.cy[k >> 2] : tp.w[k];
    PTR(ACC, wt)[p * tp.n + k] = tp.valid[k] ? w : (ACC)0;
    PTR(long, pos)[p * tp.n + k] = tp.valid[k] ? tp.ty[k] * W + tp.tx[k] : H * W;
  }
}

#if defined(HAVE_ATOMIC_ADD_DOUBLE_CAS) || !defined(ACC_IS_DOUBLE)
inline void atomic_add_acc(__global ACC* p, ACC v) {
#ifdef ACC_IS_DOUBLE
  atomic_add_double_cas(p, v);
#else
  atomic_add_float_cas(p, v);
#endif
}
#else
// No 64-bit atomics: the host never asks the backward kernels for the input gradient then.
inline void atomic_add_acc(__global ACC* p, ACC v) {}
#endif

// The backward of grid_sampler_2d_fwd, one work-item per grid point over all channels:
// gin (dense (N, C, H, W), ACC, zeroed by the host) receives each tap's weight times the
// output gradient (with want_gin); ggrid[n, oh, ow] gets d(loss)/d(grid), the channels' sum
// of the output gradient times the sample's derivative by the position, times the position's
// derivative by the grid value. Several grid points can share input pixels, so gin is summed
// with compare-and-swap atomics: the order of those additions, and so the rounding of gin,
// varies from run to run (the tests compare it at float tolerance). Where that is not wanted
// the host passes want_gin = 0 and sums gin from grid_sampler_2d_bwd_taps instead.
__kernel void grid_sampler_2d_bwd(PTR_ARG(X_T, gout), PTR_ARG(X_T, x), PTR_ARG(X_T, grid), PTR_ARG(ACC, gin),
                                  PTR_ARG(X_T, ggrid), long P, long C, long H, long W, long OH, long OW,
                                  long ys_n, long ys_c, long ys_h, long ys_w, long xs_n, long xs_c, long xs_h,
                                  long xs_w, long gs_n, long gs_h, long gs_w, long gs_k, int mode, int padding,
                                  int align, int want_gin) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_2D;
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* yp = PTR(X_T, gout);
  __global ACC* gi = PTR(ACC, gin);
  // A tap outside the input reads 0 and still adds 0 * derivative to the grid's gradient:
  // NaN where the position is infinite or NaN, as on the CPU.
  ACC gx = 0, gy = 0;
  for (long c = 0; c < C; ++c) {
    const ACC go = LOAD_X(yp, n * ys_n + c * ys_c + oh * ys_h + ow * ys_w);
    const long xb = n * xs_n + c * xs_c, ib = (n * C + c) * H * W;
    if (mode == MODE_BICUBIC) {
      for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 4; ++i) {
          const int k = j * 4 + i;
          if (want_gin && tp.valid[k]) atomic_add_acc(gi + ib + tp.ty[k] * W + tp.tx[k], go * tp.cx[i] * tp.cy[j]);
          const ACC v = tap(xp, xb, xs_h, xs_w, &tp, k) * go;
          gx += v * tp.dcx[i] * tp.cy[j];
          gy += v * tp.cx[i] * tp.dcy[j];
        }
      }
    } else {
      for (int k = 0; k < tp.n; ++k) {
        if (want_gin && tp.valid[k]) atomic_add_acc(gi + ib + tp.ty[k] * W + tp.tx[k], go * tp.w[k]);
        const ACC v = tap(xp, xb, xs_h, xs_w, &tp, k) * go;
        gx += v * tp.dwx[k];
        gy += v * tp.dwy[k];
      }
    }
  }
  STORE_X(PTR(X_T, ggrid), 2 * p, gx * tp.mx);
  STORE_X(PTR(X_T, ggrid), 2 * p + 1, gy * tp.my);
}

// ---- 3-D: (N, C, D, H, W) inputs, (N, OD, OH, OW, 3) grids of (x, y, z) ---------------------
// Trilinear (8 taps) or nearest. The CPU's 3-D kernels are scalar code with other NaN rules
// than its 2-D ones, followed here: a NaN position clamps to size - 1 in the forward and stays
// NaN (no taps) in the backward, and taps outside the input are left out of every sum (an
// infinite position in "zeros" mode gives 0, not NaN).

typedef struct {
  int n;  // 8 trilinear, 1 nearest; tap k has x side k & 1, y side (k >> 1) & 1, z side k >> 2
  long tx[8], ty[8], tz[8];
  bool valid[8];
  ACC w[8], dwx[8], dwy[8], dwz[8];
  ACC mx, my, mz;
} Taps3;

inline void make_taps3(ACC gx, ACC gy, ACC gz, long D, long H, long W, int mode, int padding, int align,
                       int nan_mode, __private Taps3* tp) {
  ACC ux, uy, uz, px, py, pz;
  const ACC ix = pad_coord(unnormalize(gx, W, align, &ux), W, padding, align, nan_mode, &px);
  const ACC iy = pad_coord(unnormalize(gy, H, align, &uy), H, padding, align, nan_mode, &py);
  const ACC iz = pad_coord(unnormalize(gz, D, align, &uz), D, padding, align, nan_mode, &pz);
  tp->mx = ux * px;
  tp->my = uy * py;
  tp->mz = uz * pz;
  if (mode == MODE_NEAREST) {
    const ACC x = rint(ix), y = rint(iy), z = rint(iz);
    tp->n = 1;
    tp->valid[0] = inside(x, W) && inside(y, H) && inside(z, D);
    tp->tx[0] = tp->valid[0] ? (long)x : 0;
    tp->ty[0] = tp->valid[0] ? (long)y : 0;
    tp->tz[0] = tp->valid[0] ? (long)z : 0;
    tp->w[0] = 1;
    tp->dwx[0] = tp->dwy[0] = tp->dwz[0] = 0;
    return;
  }
  const ACC x0 = floor(ix), y0 = floor(iy), z0 = floor(iz);
  // Distances to the far (index 0) and near (index 1) side along each axis: the weight of a
  // tap on side s is the distance to the other side.
  const ACC ax[2] = {x0 + 1 - ix, ix - x0}, ay[2] = {y0 + 1 - iy, iy - y0}, az[2] = {z0 + 1 - iz, iz - z0};
  tp->n = 8;
  for (int k = 0; k < 8; ++k) {
    const int sx = k & 1, sy = (k >> 1) & 1, sz = k >> 2;
    const ACC x = x0 + sx, y = y0 + sy, z = z0 + sz;
    tp->w[k] = ax[sx] * ay[sy] * az[sz];
    tp->dwx[k] = (sx ? (ACC)1 : (ACC)-1) * ay[sy] * az[sz];
    tp->dwy[k] = (sy ? (ACC)1 : (ACC)-1) * ax[sx] * az[sz];
    tp->dwz[k] = (sz ? (ACC)1 : (ACC)-1) * ax[sx] * ay[sy];
    tp->valid[k] = inside(x, W) && inside(y, H) && inside(z, D);
    tp->tx[k] = tp->valid[k] ? (long)x : 0;
    tp->ty[k] = tp->valid[k] ? (long)y : 0;
    tp->tz[k] = tp->valid[k] ? (long)z : 0;
  }
}

// Input strides (d, h, w) of one channel's volume.
typedef struct {
  long d, h, w;
} Strides3;

inline long tap3_offset(__private const Taps3* tp, int k, Strides3 s) {
  return tp->tz[k] * s.d + tp->ty[k] * s.h + tp->tx[k] * s.w;
}

// The same for the 3-D kernels (coordinates n, od, oh, ow; taps tp), NaN positions by nan_mode.
#define POINT_TAPS_3D(nan_mode)                                                                             \
  const long ow = p % OW, t_ = p / OW, oh = t_ % OH, t2_ = t_ / OH, od = t2_ % OD, n = t2_ / OD;            \
  Taps3 tp;                                                                                                 \
  do {                                                                                                      \
    __global const X_T* gp_ = PTR(X_T, grid);                                                               \
    const long g_ = n * gs_n + od * gs_d + oh * gs_h + ow * gs_w;                                           \
    make_taps3(LOAD_X(gp_, g_), LOAD_X(gp_, g_ + gs_k), LOAD_X(gp_, g_ + 2 * gs_k), D, H, W, mode, padding, \
               align, nan_mode, &tp);                                                                       \
  } while (0)

// out[n, c, od, oh, ow] = input[n, c] sampled at grid[n, od, oh, ow]. Range: (points, channel
// slices), as grid_sampler_2d_fwd.
__kernel void grid_sampler_3d_fwd(PTR_ARG(X_T, x), PTR_ARG(X_T, grid), PTR_ARG(X_T, out), long P, long C, long D,
                                  long H, long W, long OD, long OH, long OW, long xs_n, long xs_c, long xs_d,
                                  long xs_h, long xs_w, long gs_n, long gs_d, long gs_h, long gs_w, long gs_k,
                                  long os_n, long os_c, long os_d, long os_h, long os_w, long cps, int mode,
                                  int padding, int align) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_3D(NAN_TO_HIGH);
  const Strides3 xs = {xs_d, xs_h, xs_w};
  __global const X_T* xp = PTR(X_T, x);
  const long c0 = get_global_id(1) * cps, c1 = min(C, c0 + cps);
  for (long c = c0; c < c1; ++c) {
    const long base = n * xs_n + c * xs_c;
    ACC r = 0;
    for (int k = 0; k < tp.n; ++k)
      if (tp.valid[k]) r += LOAD_X(xp, base + tap3_offset(&tp, k, xs)) * tp.w[k];
    STORE_X(PTR(X_T, out), n * os_n + c * os_c + od * os_d + oh * os_h + ow * os_w, r);
  }
}

// grid_sampler_2d_bwd_taps for 3-D grids (T = 8 trilinear, 1 nearest), positions
// z * H * W + y * W + x, the spare one D * H * W; the backward's NaN rule.
__kernel void grid_sampler_3d_bwd_taps(PTR_ARG(X_T, grid), PTR_ARG(ACC, wt), PTR_ARG(long, pos), long P, long D,
                                       long H, long W, long OD, long OH, long OW, long gs_n, long gs_d, long gs_h,
                                       long gs_w, long gs_k, int mode, int padding, int align) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_3D(NAN_STAYS);
  const Strides3 is = {H * W, W, 1};
  for (int k = 0; k < tp.n; ++k) {
    PTR(ACC, wt)[p * tp.n + k] = tp.valid[k] ? tp.w[k] : (ACC)0;
    PTR(long, pos)[p * tp.n + k] = tp.valid[k] ? tap3_offset(&tp, k, is) : D * H * W;
  }
}

// The backward of grid_sampler_3d_fwd, as grid_sampler_2d_bwd: gin is dense (N, C, D, H, W)
// ACC summed with atomics; ggrid dense (N, OD, OH, OW, 3).
__kernel void grid_sampler_3d_bwd(PTR_ARG(X_T, gout), PTR_ARG(X_T, x), PTR_ARG(X_T, grid), PTR_ARG(ACC, gin),
                                  PTR_ARG(X_T, ggrid), long P, long C, long D, long H, long W, long OD, long OH,
                                  long OW, long ys_n, long ys_c, long ys_d, long ys_h, long ys_w, long xs_n,
                                  long xs_c, long xs_d, long xs_h, long xs_w, long gs_n, long gs_d, long gs_h,
                                  long gs_w, long gs_k, int mode, int padding, int align, int want_gin) {
  const long p = get_global_id(0);
  if (p >= P) return;
  POINT_TAPS_3D(NAN_STAYS);
  const Strides3 xs = {xs_d, xs_h, xs_w}, is = {H * W, W, 1};
  __global const X_T* xp = PTR(X_T, x);
  __global const X_T* yp = PTR(X_T, gout);
  __global ACC* gi = PTR(ACC, gin);
  ACC gx = 0, gy = 0, gz = 0;
  for (long c = 0; c < C; ++c) {
    const ACC go = LOAD_X(yp, n * ys_n + c * ys_c + od * ys_d + oh * ys_h + ow * ys_w);
    const long xb = n * xs_n + c * xs_c, ib = (n * C + c) * D * H * W;
    for (int k = 0; k < tp.n; ++k) {
      if (!tp.valid[k]) continue;
      if (want_gin) atomic_add_acc(gi + ib + tap3_offset(&tp, k, is), go * tp.w[k]);
      const ACC v = LOAD_X(xp, xb + tap3_offset(&tp, k, xs)) * go;
      gx += v * tp.dwx[k];
      gy += v * tp.dwy[k];
      gz += v * tp.dwz[k];
    }
  }
  STORE_X(PTR(X_T, ggrid), 3 * p, gx * tp.mx);
  STORE_X(PTR(X_T, ggrid), 3 * p + 1, gy * tp.my);
  STORE_X(PTR(X_T, ggrid), 3 * p + 2, gz * tp.mz);
}
