// Batched complex FFTs (csrc/ops/fft.cpp): each row of n complex values (CX: float2 or double2)
// is transformed inside one work-group's local memory by Stockham autosort passes of radix
// 2, 3, 4, 5, 7, 8, 11 or 13 (the plan arrives as an argument, 4 bits a radix), each pass's
// butterflies held in registers between its reads and writes, so a pass works in place and
// the result comes out in natural order with no bit reversal. Larger n run as two (or more)
// such launches (the four-step split n = n1 * n2, fft.cpp), other n by Bluestein's chirp-z
// convolution. Twiddles come from a table exp(-2 pi i t / N) that fft_twiddles computes once
// per size (fft.cpp keeps it) with quadrant/octant reduction, so every twiddle is within an
// ulp or two (no recurrences) and float32 errors grow like log n.
// Sign convention: `inv` = 0 is the forward transform, exp(-2 pi i jk / n); 1 the backward one.
#include "common.clh"

#ifndef CT
#define CT float  // real part type: float or double
#endif
#ifndef CX
#define CX float2  // complex type: (real, imaginary)
#endif
#include "complex.clh"

#ifdef CT_IS_DOUBLE
#define C(x) x
#else
#define C(x) x##f
#endif

// exp(-2 pi i t / N) for 0 <= t < N. The angle is split into quarter turns q and a remainder
// theta in [0, pi/2]; sinpi/cospi only see arguments in [0, 1/4] (the octant), where the
// rounding of rem / N costs at most an ulp of the result.
inline CX unit_root(ulong t, ulong N) {
  const ulong t4 = 4 * t;
  const ulong q = t4 / N, rem = t4 - q * N;
  CT c, s;
  if (2 * rem <= N) {
    const CT a = C(0.5) * ((CT)rem / (CT)N);
    c = cospi(a);
    s = sinpi(a);
  } else {
    const CT a = C(0.5) * ((CT)(N - rem) / (CT)N);
    c = sinpi(a);
    s = cospi(a);
  }
  const CX z = q == 0 ? (CX)(c, s) : q == 1 ? (CX)(-s, c) : q == 2 ? (CX)(-c, -s) : (CX)(s, -c);
  return (CX)(z.x, -z.y);
}

// tw[t] = exp(-2 pi i t / N), t < N.
__kernel void fft_twiddles(PTR_ARG(CX, tw), uint N) {
  const uint t = get_global_id(0);
  if (t < N) PTR(CX, tw)[t] = unit_root(t, N);
}

inline CX tw_load(__global const CX* tw, uint i, int inv) {
  const CX w = tw[i];
  return inv ? (CX)(w.x, -w.y) : w;
}

// i * sg * a for sg = +-1.
inline CX mul_isg(CX a, CT sg) { return sg * (CX)(-a.y, a.x); }

// cos and sin of 2 pi t / R for t = 1 .. (R - 1) / 2, for the odd radices.
__constant CT cos3[1] = {C(-0.5)};
__constant CT sin3[1] = {C(0.86602540378443864676)};
__constant CT cos5[2] = {C(0.3090169943749474241), C(-0.8090169943749474241)};
__constant CT sin5[2] = {C(0.95105651629515357212), C(0.58778525229247312917)};
__constant CT cos7[3] = {C(0.62348980185873353053), C(-0.22252093395631440429), C(-0.90096886790241912624)};
__constant CT sin7[3] = {C(0.78183148246802980871), C(0.97492791218182360702), C(0.43388373911755812048)};
__constant CT cos11[5] = {C(0.84125353283118116886), C(0.41541501300188642553), C(-0.14231483827328514044),
                          C(-0.65486073394528506406), C(-0.95949297361449738989)};
__constant CT sin11[5] = {C(0.54064081745559758211), C(0.90963199535451837141), C(0.98982144188093273238),
                          C(0.75574957435425828377), C(0.28173255684142969771)};
__constant CT cos13[6] = {C(0.8854560256532098959), C(0.56806474673115580251), C(0.12053668025532305335),
                          C(-0.35460488704253562597), C(-0.74851074817110109863), C(-0.97094181742605202716)};
__constant CT sin13[6] = {C(0.46472317204376854566), C(0.82298386589365639458), C(0.9927088740980539928),
                          C(0.93501624268541482344), C(0.66312265824079520238), C(0.23931566428755776715)};

// In-place DFT of v[0..R) for an odd prime R: y_k = sum_r v_r exp(sg 2 pi i rk / R), pairing
// r with R - r (sums times cosines, differences times sines).
inline void dft_odd(__private CX* v, const uint R, __constant const CT* ct, __constant const CT* st, CT sg) {
  const uint h = (R - 1) / 2;
  CX s[6], d[6];
  CX y0 = v[0];
  for (uint r = 1; r <= h; ++r) {
    s[r - 1] = v[r] + v[R - r];
    d[r - 1] = v[r] - v[R - r];
    y0 += s[r - 1];
  }
  const CX x0 = v[0];
  for (uint k = 1; k <= h; ++k) {
    CX a = x0, b = (CX)(C(0.0), C(0.0));
    for (uint r = 1; r <= h; ++r) {
      const uint t = (r * k) % R;
      const CT c = t <= h ? ct[t - 1] : ct[R - t - 1];
      const CT sn = t <= h ? st[t - 1] : -st[R - t - 1];
      a += c * s[r - 1];
      b += sn * d[r - 1];
    }
    const CX ib = mul_isg(b, sg);
    v[k] = a + ib;
    v[R - k] = a - ib;
  }
  v[0] = y0;
}

inline void dft4(__private CX* v, CT sg) {
  const CX a = v[0] + v[2], b = v[0] - v[2], c = v[1] + v[3], d = mul_isg(v[1] - v[3], sg);
  v[0] = a + c;
  v[1] = b + d;
  v[2] = a - c;
  v[3] = b - d;
}

// Radix 8 as two radix-4 DFTs (even and odd inputs) joined by exp(sg 2 pi i k / 8).
inline void dft8(__private CX* v, CT sg) {
  CX e[4], o[4];
  for (int i = 0; i < 4; ++i) {
    e[i] = v[2 * i];
    o[i] = v[2 * i + 1];
  }
  dft4(e, sg);
  dft4(o, sg);
  const CT h = C(0.7071067811865475244);
  const CX o1 = h * (CX)(o[1].x - sg * o[1].y, o[1].y + sg * o[1].x);
  const CX o2 = mul_isg(o[2], sg);
  const CX o3 = h * (CX)(-o[3].x - sg * o[3].y, -o[3].y + sg * o[3].x);
  v[0] = e[0] + o[0];
  v[4] = e[0] - o[0];
  v[1] = e[1] + o1;
  v[5] = e[1] - o1;
  v[2] = e[2] + o2;
  v[6] = e[2] - o2;
  v[3] = e[3] + o3;
  v[7] = e[3] - o3;
}

inline void dft(__private CX* v, const uint R, CT sg) {
  if (R == 2) {
    const CX a = v[0];
    v[0] = a + v[1];
    v[1] = a - v[1];
  } else if (R == 4) {
    dft4(v, sg);
  } else if (R == 8) {
    dft8(v, sg);
  } else if (R == 3) {
    dft_odd(v, 3, cos3, sin3, sg);
  } else if (R == 5) {
    dft_odd(v, 5, cos5, sin5, sg);
  } else if (R == 7) {
    dft_odd(v, 7, cos7, sin7, sg);
  } else if (R == 11) {
    dft_odd(v, 11, cos11, sin11, sg);
  } else {
    dft_odd(v, 13, cos13, sin13, sg);
  }
}

// A Stockham pass of radix R over an n-point sequence (m = n / R butterflies), after passes
// whose radices multiply to ns, in place in local memory and in two phases around a barrier.
// stage_compute: the work-item's butterflies j = lt, lt + T, ... (below m; at most VPW / R of
// them, which fft.cpp's plan ensures) read a[j + r m], twiddle them by exp(-+2 pi i r k /
// (ns R)) with k = j mod ns, and transform them in v[b R ..]; after every work-item's reads,
// stage_store writes them to a[(j - k) R + k + r ns]. tstride = N / (ns R) for the N-entry
// twiddle table. VPW: the most values one work-item holds through a pass, 8 or 16 (fft.cpp
// builds the least its plan needs: fewer registers).
#ifndef VPW
#define VPW 16
#endif
inline void stage_compute(__local const CX* a, __private CX* v, uint lt, uint T, uint m, uint ns, const uint R,
                          __global const CX* tw, uint tstride, int inv) {
#pragma unroll
  for (uint b = 0; b < VPW / R; ++b) {
    const uint j = lt + b * T, k = j % ns;
    if (j >= m) break;
    for (uint r = 0; r < R; ++r) v[b * R + r] = a[j + r * m];
    if (k != 0)
      for (uint r = 1; r < R; ++r) v[b * R + r] = cx_mul(v[b * R + r], tw_load(tw, r * k * tstride, inv));
    dft(v + b * R, R, inv ? C(1.0) : C(-1.0));
  }
}
inline void stage_store(__local CX* a, __private const CX* v, uint lt, uint T, uint m, uint ns, const uint R) {
#pragma unroll
  for (uint b = 0; b < VPW / R; ++b) {
    const uint j = lt + b * T, k = j % ns;
    if (j >= m) break;
    for (uint r = 0; r < R; ++r) a[(j - k) * R + k + r * ns] = v[b * R + r];
  }
}

// The radix as a constant in each call, so that the loops unroll and v can live in registers.
#define RADIX_SWITCH(R, F, ...)      \
  switch (R) {                       \
    case 2: F(__VA_ARGS__, 2); break; \
    case 3: F(__VA_ARGS__, 3); break; \
    case 4: F(__VA_ARGS__, 4); break; \
    case 5: F(__VA_ARGS__, 5); break; \
    case 7: F(__VA_ARGS__, 7); break; \
    case 8: F(__VA_ARGS__, 8); break; \
    case 11: F(__VA_ARGS__, 11); break; \
    default: F(__VA_ARGS__, 13); break; \
  }
#define STAGE_COMPUTE(a, v, lt, T, m, ns, tw, tn, inv, R) \
  stage_compute(a, v, lt, T, m, ns, R, tw, (tn) / ((ns) * (R)), inv)
#define STAGE_STORE(a, v, lt, T, m, ns, R) stage_store(a, v, lt, T, m, ns, R)

// Load modes: complex rows; real rows (the imaginary part zero); the onesided half of a
// Hermitian row (element i > n / 2 is conj(x[n - i]), so the imaginary parts of x[0] and, for
// even n, x[n / 2] do not reach the real part of the result); and the two packed forms of a
// real transform of 2n points done as an n-point complex one: a real row's pairs as complex
// values, z_i = x_2i + i x_2i+1, and, for its inverse, the n + 1 onesided frequencies X_k
// folded into Z_k = E_k + i O_k with E_k = X_k + conj(X_{n-k}), O_k = (X_k - conj(X_{n-k}))
// exp(+2 pi i k / 2n) (the imaginary parts of X_0 and X_n dropped, as the CPU drops them).
#define LOAD_COMPLEX 0
#define LOAD_REAL 1
#define LOAD_HERMITIAN 2
#define LOAD_REAL_PAIRS 3
#define LOAD_HERMITIAN_PAIRS 4
// Store modes: complex; only the real parts (into a real tensor); a packed real transform's
// onesided frequencies, X_k = (Z_k + conj(Z_{n-k})) / 2 - i exp(-2 pi i k / 2n) (Z_k -
// conj(Z_{n-k})) / 2 for k <= n (Z_n = Z_0); the complex values as pairs of reals (z_i to
// y_2i, y_2i+1).
#define STORE_COMPLEX 0
#define STORE_REAL 1
#define STORE_R2C_UNPACK 2
#define STORE_REAL_PAIRS 3

// n-point transforms of `rows` rows, G = local size / T rows per work-group, T work-items a
// row. Row r = (q, c) with q = r / C, c = r % C; its element i is x[q xs_q + c xs_c + i xs_e]
// (strides in elements of x's dtype: CT for LOAD_REAL), and its output element k goes to
// y[q ys_q + c ys_c + k ys_e] for k < out_n, times `scale` and, with post_tw, times
// exp(-+2 pi i c k / tn) (the four-step twiddle). x_gfast / y_gfast: walk the group's rows
// fastest when loading / storing (rows of neighbouring c lie next to each other, so a column
// transform still reads whole cache lines). tn: entries of the twiddle table (a multiple of n;
// 2n for the packed modes, whose twiddles exp(-2 pi i k / 2n) it also holds). lbuf holds G n
// values; n <= VPW T. Loads and stores are unrolled over the VPW (+ 1) elements a work-item
// may move, so they are all in flight at once.
__kernel void fft_local(PTR_ARG(CX, x), PTR_ARG(CX, y), PTR_ARG(CX, tw), __local CX* lbuf, long rows, long C,
                        uint n, uint T, uint nst, ulong radices, uint tn, int inv, CT scale, long xs_q, long xs_c,
                        long xs_e, long ys_q, long ys_c, long ys_e, int x_gfast, int y_gfast, int load_mode,
                        int store_mode, uint out_n, int post_tw) {
  __global const CX* xc = PTR(CX, x);
  __global const CT* xr = (__global const CT*)xc;
  __global CX* yc = PTR(CX, y);
  __global CT* yr = (__global CT*)yc;
  __global const CX* twp = PTR(CX, tw);
  const uint wg = get_local_size(0), lid = get_local_id(0), G = wg / T, lt = lid % T, lg = lid / T;
  const long row0 = (long)get_group_id(0) * G;

  // Each work-item keeps to one row (g) for loading and storing, so it computes that row's
  // offset once; x_gfast / y_gfast put neighbouring work-items on neighbouring rows.
  {
    const uint g = x_gfast ? lid % G : lg, i0 = x_gfast ? lid / G : lt;
    const long r = row0 + g;
    __local CX* dst = lbuf + g * n;
    const long q = r / C, c = r - q * C, base = q * xs_q + c * xs_c;
#define EACH_I _Pragma("unroll") for (uint e = 0, i = i0; e < VPW; ++e, i += T) if (i < n)
    if (r >= rows) {
      EACH_I dst[i] = (CX)(C(0.0), C(0.0));
    } else if (load_mode == LOAD_REAL) {
      EACH_I dst[i] = (CX)(xr[base + i * xs_e], C(0.0));
    } else if (load_mode == LOAD_REAL_PAIRS) {
      EACH_I dst[i] = (CX)(xr[base + 2 * i * xs_e], xr[base + (2 * i + 1) * xs_e]);
    } else if (load_mode == LOAD_HERMITIAN_PAIRS) {
      EACH_I {
        CX xa = xc[base + i * xs_e], xb = xc[base + (n - i) * xs_e];
        if (i == 0) xa.y = xb.y = C(0.0);
        const CX ev = xa + cx_conj(xb), od = cx_mul(xa - cx_conj(xb), cx_conj(twp[i]));
        dst[i] = (CX)(ev.x - od.y, ev.y + od.x);
      }
    } else if (load_mode == LOAD_HERMITIAN) {
      EACH_I {
        const CX v = xc[base + (2 * i > n ? n - i : i) * xs_e];
        dst[i] = 2 * i > n ? cx_conj(v) : v;
      }
    } else {
      EACH_I dst[i] = xc[base + i * xs_e];
    }
#undef EACH_I
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  __local CX* a = lbuf + lg * n;
  uint ns = 1;
  for (uint s = 0; s < nst; ++s) {
    const uint R = (uint)(radices >> (4 * s)) & 15u, m = n / R;
    CX v[VPW];
    RADIX_SWITCH(R, STAGE_COMPUTE, a, v, lt, T, m, ns, twp, tn, inv)
    barrier(CLK_LOCAL_MEM_FENCE);
    RADIX_SWITCH(R, STAGE_STORE, a, v, lt, T, m, ns)
    barrier(CLK_LOCAL_MEM_FENCE);
    ns *= R;
  }

  const uint g = y_gfast ? lid % G : lg, k0 = y_gfast ? lid / G : lt;
  const long r = row0 + g;
  if (r >= rows) return;
  const long q = r / C, c = r - q * C, base = q * ys_q + c * ys_c;
  __local const CX* src = lbuf + g * n;
#define EACH_K _Pragma("unroll") for (uint e = 0, k = k0; e <= VPW; ++e, k += T) if (k < out_n)
#define OUT_V(k) (scale * (post_tw ? cx_mul(src[k], tw_load(twp, (uint)c * (k), inv)) : src[k]))  // c k < tn
  if (store_mode == STORE_R2C_UNPACK) {
    EACH_K {
      const CX za = src[k == n ? 0 : k], zb = cx_conj(src[k == 0 ? 0 : n - k]);
      const CX ev = za + zb, d = za - zb, od = (CX)(d.y, -d.x);  // 2 E_k, 2 O_k = -i (za - zb)
      yc[base + k * ys_e] = (C(0.5) * scale) * (ev + cx_mul(twp[k], od));
    }
  } else if (store_mode == STORE_REAL) {
    EACH_K yr[base + k * ys_e] = OUT_V(k).x;
  } else if (store_mode == STORE_REAL_PAIRS) {
    EACH_K {
      const CX v = OUT_V(k);
      yr[base + 2 * k * ys_e] = v.x;
      yr[base + (2 * k + 1) * ys_e] = v.y;
    }
  } else {
    EACH_K yc[base + k * ys_e] = OUT_V(k);
  }
#undef OUT_V
#undef EACH_K
}

// w[k] = exp(-+2 pi i k^2 / (2 n)) (forward / backward) for k < n: Bluestein's chirp, with k^2
// reduced mod 2n exactly in integers.
__kernel void fft_chirp(PTR_ARG(CX, w), ulong n, int inv) {
  __global CX* wp = PTR(CX, w);
  FOR_EACH(k, (long)n) {
    const CX z = unit_root(((ulong)k * (ulong)k) % (2 * n), 2 * n);
    wp[k] = inv ? cx_conj(z) : z;
  }
}

// The convolution kernel of Bluestein's algorithm, m >= 2n - 1 points: b[t] = conj(w[t]) for
// t < n, b[m - t] = conj(w[t]) for 0 < t < n, zero between.
__kernel void fft_bluestein_kernel(PTR_ARG(CX, w), PTR_ARG(CX, b), long n, long m) {
  __global const CX* wp = PTR(CX, w);
  __global CX* bp = PTR(CX, b);
  FOR_EACH(t, m) {
    const long u = t < n ? t : m - t < n ? m - t : -1;
    bp[t] = u >= 0 ? cx_conj(wp[u]) : (CX)(C(0.0), C(0.0));
  }
}

// Rows r (dim 1) and elements (dim 0), both grid-stride: a[r, j] = x[r, j] w[j] for j < n, zero
// up to m (x rows of n values, a rows of m, both contiguous).
__kernel void fft_bluestein_pre(PTR_ARG(CX, x), PTR_ARG(CX, w), PTR_ARG(CX, a), long rows, long n, long m) {
  __global const CX* xp = PTR(CX, x);
  __global const CX* wp = PTR(CX, w);
  __global CX* ap = PTR(CX, a);
  for (long r = get_global_id(1); r < rows; r += get_global_size(1))
    for (long j = get_global_id(0); j < m; j += get_global_size(0))
      ap[r * m + j] = j < n ? cx_mul(xp[r * n + j], wp[j]) : (CX)(C(0.0), C(0.0));
}

// y[r, k] = scale w[k] c[r, k] for k < n (c rows of m values, y rows of n).
__kernel void fft_bluestein_post(PTR_ARG(CX, c), PTR_ARG(CX, w), PTR_ARG(CX, y), long rows, long n, long m,
                                 CT scale) {
  __global const CX* cp = PTR(CX, c);
  __global const CX* wp = PTR(CX, w);
  __global CX* yp = PTR(CX, y);
  for (long r = get_global_id(1); r < rows; r += get_global_size(1))
    for (long k = get_global_id(0); k < n; k += get_global_size(0))
      yp[r * n + k] = scale * cx_mul(cp[r * m + k], wp[k]);
}

// The full n-point Hermitian rows from their onesided halves (x rows of xs elements, the
// first n / 2 + 1 of them used): y[r, i] = x[r, i] for i <= n / 2, else conj(x[r, n - i]).
__kernel void fft_hermitian_fill(PTR_ARG(CX, x), PTR_ARG(CX, y), long rows, long n, long xs) {
  __global const CX* xp = PTR(CX, x);
  __global CX* yp = PTR(CX, y);
  FOR_EACH(e, rows * n) {
    const long r = e / n, i = e - r * n;
    yp[e] = 2 * i <= n ? xp[r * xs + i] : cx_conj(xp[r * xs + n - i]);
  }
}
