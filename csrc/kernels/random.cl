// Random number kernels: distribution fills, Bernoulli with a probability tensor, dropout,
// the Gamma / Dirichlet / Poisson / Binomial samplers, multinomial and the bitonic sort behind
// randperm. Every draw comes from Philox (common.clh): element i of an op uses counter block
// i / EPB of the op's reserved range (the samplers: a stream of its own, see there), so results
// do not depend on the launch geometry. Outputs are dense (the host densifies).
#include "common.clh"

// Storage type of the output (T) and the type its values are computed in (AT: float for
// 16-bit types and float, double for double, long for integer outputs of random_).
#ifndef T
#define T float
#endif
#ifndef AT
#define AT float
#endif
// Elements drawn per Philox block (4 words): 4 for 32-bit draws, 2 for 64-bit ones.
#ifndef EPB
#define EPB 4
#endif
// Work-group size of the reduction/sort kernels (power of two).
#ifndef WG
#define WG 256
#endif

// Store a computed value v into element i of p (T storage).
#if defined(T_IS_HALF)
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#elif defined(T_IS_BF16)
#define STORE(p, i, v) ((p)[i] = float_to_bf16((float)(v)))
#elif defined(T_IS_BOOL)
#define STORE(p, i, v) ((p)[i] = (uchar)((v) != 0))
#else
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

// v rounded to the storage type (what a store followed by a load gives).
#if defined(T_IS_HALF)
#define round_to_storage(v) round_to_half(v)
#elif defined(T_IS_BF16)
#define round_to_storage(v) round_to_bf16(v)
#else
#define round_to_storage(v) (v)
#endif

// Uniform in (0, 1] with 53 random bits from two words.
inline double u64_to_unit(uint hi, uint lo) {
  ulong x = (((ulong)hi << 32) | lo) >> 11;
  return ((double)x + 1.0) * (1.0 / 9007199254740992.0);
}

// EPB uniforms in (0, 1] of type AT for one Philox block.
#if EPB == 4
#define UNIFORMS(r, u) AT u[4] = {(AT)u32_to_unit(r.x), (AT)u32_to_unit(r.y), (AT)u32_to_unit(r.z), (AT)u32_to_unit(r.w)}
#else
#define UNIFORMS(r, u) AT u[2] = {(AT)u64_to_unit(r.x, r.y), (AT)u64_to_unit(r.z, r.w)}
#endif

// Distribution of the fill kernel (runtime argument `dist`, so one program per dtype).
// Parameters a, b: uniform [a, b); normal mean a, std b; exponential rate a; log-normal
// (a, b) of the underlying normal; cauchy median a, scale b; geometric success probability
// a; bernoulli probability a.
#define DIST_UNIFORM 0
#define DIST_NORMAL 1
#define DIST_EXPONENTIAL 2
#define DIST_LOG_NORMAL 3
#define DIST_CAUCHY 4
#define DIST_GEOMETRIC 5
#define DIST_BERNOULLI 6

// Kernels drawing real numbers; not built when AT is an integer type (random_ on integers).
#ifndef AT_IS_INT
__kernel void random_fill(PTR_ARG(T, out), ulong n, ulong seed, ulong offset, AT a, AT b, int dist) {
  __global T* o = PTR(T, out);
  const ulong blk = get_global_id(0);
  const ulong i0 = blk * EPB;
  if (i0 >= n) return;
  uint4 r = philox_block(seed, offset, blk);
  UNIFORMS(r, u);
  AT v[EPB];
  if (dist == DIST_NORMAL || dist == DIST_LOG_NORMAL) {
    // Box-Muller on pairs of uniforms.
    for (int k = 0; k < EPB; k += 2) {
      AT rad = sqrt((AT)-2 * log(u[k]));
      AT th = (AT)(2 * M_PI) * u[k + 1];
      v[k] = a + b * rad * cos(th);
      v[k + 1] = a + b * rad * sin(th);
    }
    if (dist == DIST_LOG_NORMAL)
      for (int k = 0; k < EPB; ++k) v[k] = exp(v[k]);
  } else {
    for (int k = 0; k < EPB; ++k) {
      switch (dist) {
        case DIST_UNIFORM: {
          // u is in (0, 1]; 1 - u is in [0, 1), so the result lies in [a, b).
          AT x = a + (b - a) * ((AT)1 - u[k]);
          v[k] = round_to_storage(x) < b ? x : a;  // rounding up to b (narrow types) wraps to a
          break;
        }
        case DIST_EXPONENTIAL: v[k] = -log(u[k]) / a; break;
        case DIST_CAUCHY: v[k] = a + b * tan((AT)M_PI * (u[k] - (AT)0.5)); break;
        case DIST_GEOMETRIC: {
          AT x = ceil(log(u[k]) / log1p(-a));
          v[k] = x < (AT)1 ? (AT)1 : x;
          break;
        }
        default: v[k] = ((AT)1 - u[k]) < a ? (AT)1 : (AT)0; break;  // bernoulli
      }
    }
  }
  for (int k = 0; k < EPB; ++k)
    if (i0 + k < n) STORE(o, i0 + k, v[k]);
}
#endif  // AT_IS_INT

// random_ over the integer range [base, base + range) (range == 0 means all 2^64 values);
// with WIDE, 64 random bits per element (EPB must be 2), else 32.
__kernel void random_int(PTR_ARG(T, out), ulong n, ulong seed, ulong offset, ulong range, long base) {
  __global T* o = PTR(T, out);
  const ulong blk = get_global_id(0);
  const ulong i0 = blk * EPB;
  if (i0 >= n) return;
  uint4 r = philox_block(seed, offset, blk);
#ifdef WIDE
  ulong w[2] = {((ulong)r.x << 32) | r.y, ((ulong)r.z << 32) | r.w};
#else
  ulong w[4] = {r.x, r.y, r.z, r.w};
#endif
  for (int k = 0; k < EPB; ++k) {
    if (i0 + k >= n) break;
    ulong x = range == 0 ? w[k] : w[k] % range;
    STORE(o, i0 + k, (AT)(long)((ulong)base + x));
  }
}

#ifndef AT_IS_INT
// out[i] = (uniform < p[i]) for a dense probability tensor p of type PT (the compute type).
#ifndef PT
#define PT AT
#endif
// A probability outside [0, 1] (or NaN) reports the CPU's error.
__kernel void bernoulli_tensor(PTR_ARG(T, out), PTR_ARG(PT, prob), ulong n, ulong seed, ulong offset,
                               __global int* err) {
  __global T* o = PTR(T, out);
  __global const PT* p = PTR(PT, prob);
  const ulong blk = get_global_id(0);
  const ulong i0 = blk * EPB;
  if (i0 >= n) return;
  uint4 r = philox_block(seed, offset, blk);
  UNIFORMS(r, u);
  for (int k = 0; k < EPB; ++k) {
    if (i0 + k >= n) break;
    const AT pk = (AT)p[i0 + k];
    if (!(pk >= (AT)0 && pk <= (AT)1)) report_error(err, ERR_BERNOULLI_P);
    STORE(o, i0 + k, (((AT)1 - u[k]) < pk) ? 1 : 0);
  }
}

// Load element i of a T tensor as AT.
#if defined(T_IS_HALF)
#define LOAD(p, i) ((AT)vload_half((i), (p)))
#elif defined(T_IS_BF16)
#define LOAD(p, i) ((AT)bf16_to_float((p)[i]))
#else
#define LOAD(p, i) ((AT)(p)[i])
#endif

// Dropout: keep each element with probability keep, scaling kept ones by scale; mask is bool.
__kernel void dropout_fwd(PTR_ARG(T, out), PTR_ARG(uchar, mask), PTR_ARG(T, in), ulong n, ulong seed,
                          ulong offset, AT keep, AT scale) {
  __global T* o = PTR(T, out);
  __global uchar* m = PTR(uchar, mask);
  __global const T* x = PTR(T, in);
  const ulong blk = get_global_id(0);
  const ulong i0 = blk * EPB;
  if (i0 >= n) return;
  uint4 r = philox_block(seed, offset, blk);
  UNIFORMS(r, u);
  for (int k = 0; k < EPB; ++k) {
    ulong i = i0 + k;
    if (i >= n) break;
    bool kept = ((AT)1 - u[k]) < keep;
    m[i] = kept;
    STORE(o, i, kept ? LOAD(x, i) * scale : (AT)0);
  }
}

// ---- samplers that take a varying number of draws per element -----------------------------
// (_standard_gamma, _sample_dirichlet, poisson, binomial: rejection methods.) Element i owns
// Philox counter block offset + i (the op reserves one block per element) and takes its k-th
// group of four words from the 128-bit counter (offset + i, k): an unbounded stream of its own,
// independent of the other elements and of the launch geometry. Uniforms have 24 random bits for
// float compute (EPB 4) and 53 for double (EPB 2).

typedef struct {
  ulong seed, ctr;
  uint k, used;
  uint4 w;
  AT spare;  // the second normal of the last Box-Muller pair
  int has_spare;
} Stream;

inline void stream_init(__private Stream* s, ulong seed, ulong offset, ulong i) {
  s->seed = seed;
  s->ctr = offset + i;
  s->k = 0;
  s->used = 4;
  s->has_spare = 0;
}
inline uint stream_word(__private Stream* s) {
  if (s->used == 4) {
    s->w = philox4x32_10((uint4)((uint)s->ctr, (uint)(s->ctr >> 32), s->k, 0u),
                         (uint2)((uint)s->seed, (uint)(s->seed >> 32)));
    s->k += 1;
    s->used = 0;
  }
  const uint u = s->used;
  s->used += 1;
  return u == 0 ? s->w.x : u == 1 ? s->w.y : u == 2 ? s->w.z : s->w.w;
}
// Uniform in (0, 1].
inline AT stream_uniform(__private Stream* s) {
#if EPB == 4
  return (AT)u32_to_unit(stream_word(s));
#else
  const uint hi = stream_word(s);
  return (AT)u64_to_unit(hi, stream_word(s));
#endif
}
// Standard normal (Box-Muller, both values of a pair used).
inline AT stream_normal(__private Stream* s) {
  if (s->has_spare) {
    s->has_spare = 0;
    return s->spare;
  }
  const AT rad = sqrt((AT)-2 * log(stream_uniform(s)));
  const AT th = (AT)(2 * M_PI) * stream_uniform(s);
  s->spare = rad * sin(th);
  s->has_spare = 1;
  return rad * cos(th);
}

// A standard Gamma(alpha) draw by Marsaglia and Tsang's method (ACM TOMS 2000), alpha < 1 boosted
// to alpha + 1 and scaled by u^(1/alpha); as on the CPU, 0 for alpha = 0 and NaN for NaN. With
// want_log its logarithm, which does not underflow for tiny alpha (the Dirichlet sampler).
inline AT sample_gamma(AT alpha, __private Stream* s, int want_log) {
  AT log_scale = 0, scale = 1;
  if (alpha < (AT)1) {
    if (alpha == (AT)0) return want_log ? (AT)(-INFINITY) : (AT)0;
    const AT u = stream_uniform(s);
    if (want_log) log_scale = log(u) / alpha;
    else scale = pow(u, (AT)1 / alpha);
    alpha += (AT)1;
  }
  const AT d = alpha - (AT)1 / (AT)3;
  const AT c = (AT)1 / sqrt((AT)9 * d);
  for (;;) {
    AT x, y;
    do {
      x = stream_normal(s);
      y = (AT)1 + c * x;
    } while (y <= (AT)0);
    const AT v = y * y * y;
    const AT u = stream_uniform(s);
    const AT xx = x * x;
    if (u < (AT)1 - (AT)0.0331 * xx * xx || log(u) < (AT)0.5 * xx + d * ((AT)1 - v + log(v)))
      return want_log ? log_scale + log(d * v) : scale * d * v;
  }
}

// _standard_gamma: out = max(tiny, draw) with tiny the dtype's smallest normal (as the CPU: a
// NaN draw gives tiny too).
__kernel void standard_gamma(PTR_ARG(T, out_), PTR_ARG(T, alpha_), ulong n, ulong seed, ulong offset, AT tiny) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  __global T* out = PTR(T, out_);
  __global const T* alpha = PTR(T, alpha_);
  Stream s;
  stream_init(&s, seed, offset, i);
  const AT r = sample_gamma(LOAD(alpha, i), &s, 0);
  STORE(out, i, tiny < r ? r : tiny);
}
// _sample_dirichlet's first step: log Gamma(alpha_i) draws, at least log_tiny (the log of the
// smallest normal double, which the CPU's double draws are clamped to; NaN goes there too). The
// host normalizes them with a softmax over the last dimension.
__kernel void dirichlet_log_gamma(PTR_ARG(T, out_), PTR_ARG(T, alpha_), ulong n, ulong seed, ulong offset,
                                  AT log_tiny) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  __global T* out = PTR(T, out_);
  __global const T* alpha = PTR(T, alpha_);
  Stream s;
  stream_init(&s, seed, offset, i);
  const AT r = sample_gamma(LOAD(alpha, i), &s, 1);
  STORE(out, i, log_tiny < r ? r : log_tiny);
}

// Log probability mass functions evaluated without cancellation (Loader, "Fast and accurate
// computation of binomial probabilities", 2000), so that the rejection tests below keep their
// accuracy in float: stirlerr(k) = log(k!) - log(sqrt(2 pi k) (k/e)^k), and
// bd0(x, m) = x log(x / m) + m - x summed as a series where x is near m.
inline AT stirlerr(AT k) {
  if (k < (AT)16) return lgamma(k + (AT)1) - (k + (AT)0.5) * log(k) + k - (AT)0.91893853320467274178;
  const AT z = (AT)1 / k, z2 = z * z;
  return z * ((AT)1 / (AT)12 - z2 * ((AT)1 / (AT)360 - z2 * ((AT)1 / (AT)1260 - z2 / (AT)1680)));
}
inline AT bd0(AT x, AT m) {
  if (x == (AT)0) return m;
  if (fabs(x - m) < (AT)0.1 * (x + m)) {
    const AT v = (x - m) / (x + m), v2 = v * v;
    AT sum = (x - m) * v, ej = (AT)2 * x * v;
    for (int j = 1; j < 200; ++j) {
      ej *= v2;
      const AT next = sum + ej / (AT)(2 * j + 1);
      if (next == sum) break;
      sum = next;
    }
    return sum;
  }
  return x * log(x / m) + m - x;
}
#define LOG_2PI 1.83787706640934548356
// log(lambda^k e^-lambda / k!) for an integer k >= 0.
inline AT poisson_log_pmf(AT k, AT lambda) {
  if (k == (AT)0) return -lambda;
  return -stirlerr(k) - bd0(k, lambda) - (AT)0.5 * ((AT)LOG_2PI + log(k));
}
// log(C(n, k) p^k (1-p)^(n-k)) for 0 <= k <= n.
inline AT binomial_log_pmf(AT k, AT n, AT p) {
  if (k == (AT)0) return n * log1p(-p);
  if (k == n) return n * log(p);
  const AT lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n * p) - bd0(n - k, n * ((AT)1 - p));
  return lc - (AT)0.5 * ((AT)LOG_2PI + log(k) + log1p(-k / n));
}

// Poisson(lambda): the product of uniforms below 10 (count until it drops under e^-lambda), else
// Hormann's transformed rejection with squeeze, PTRS ("The transformed rejection method for
// generating Poisson random variables", 1993).
inline AT sample_poisson(AT lambda, __private Stream* s) {
  if (lambda == (AT)0) return 0;
  if (isinf(lambda)) return lambda;
  if (lambda < (AT)10) {
    const AT enlam = exp(-lambda);
    AT x = 0, prod = 1;
    for (;;) {
      prod *= (AT)1 - stream_uniform(s);  // [0, 1)
      if (prod > enlam) x += (AT)1;
      else return x;
    }
  }
  const AT slam = sqrt(lambda);
  const AT b = (AT)0.931 + (AT)2.53 * slam;
  const AT a = (AT)-0.059 + (AT)0.02483 * b;
  const AT log_invalpha = log((AT)1.1239 + (AT)1.1328 / (b - (AT)3.4));
  const AT vr = (AT)0.9277 - (AT)3.6224 / (b - (AT)2);
  for (;;) {
    const AT u = (AT)0.5 - stream_uniform(s);  // [-0.5, 0.5)
    const AT v = (AT)1 - stream_uniform(s);    // [0, 1)
    const AT us = (AT)0.5 - fabs(u);
    const AT k = floor(((AT)2 * a / us + b) * u + lambda + (AT)0.43);
    if (us >= (AT)0.07 && v <= vr) return k;
    if (k < (AT)0 || (us < (AT)0.013 && v > us)) continue;
    if (log(v) + log_invalpha - log(a / (us * us) + b) <= poisson_log_pmf(k, lambda)) return k;
  }
}
// A rate that is negative or NaN reports the CPU's error ("invalid Poisson rate").
__kernel void poisson(PTR_ARG(T, out_), PTR_ARG(T, rate_), ulong n, ulong seed, ulong offset, __global int* err) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  __global T* out = PTR(T, out_);
  __global const T* rate = PTR(T, rate_);
  const AT lambda = LOAD(rate, i);
  if (!(lambda >= (AT)0)) {
    report_error(err, ERR_POISSON_RATE);
    STORE(out, i, (AT)0);
    return;
  }
  Stream s;
  stream_init(&s, seed, offset, i);
  STORE(out, i, sample_poisson(lambda, &s));
}

// Binomial(n, p) for p <= 1/2: below n p = 10 by counting geometric waiting times until they
// pass n; else Hormann's BTRS ("The generation of binomial random variates", 1993), its
// acceptance test log(v) <= log f(k) - log f(m) taken from the log pmf above.
inline AT binomial_inversion(AT n, AT p, __private Stream* s) {
  const AT logq = log1p(-p);
  AT sum = 0, num = 0;
  for (;;) {
    sum += ceil(log((AT)1 - stream_uniform(s)) / logq);  // a Geometric(p) draw (>= 1)
    if (sum > n) return num;
    num += (AT)1;
  }
}
inline AT binomial_btrs(AT n, AT p, __private Stream* s) {
  const AT spq = sqrt(n * p * ((AT)1 - p));
  const AT b = (AT)1.15 + (AT)2.53 * spq;
  const AT a = (AT)-0.0873 + (AT)0.0248 * b + (AT)0.01 * p;
  const AT c = n * p + (AT)0.5;
  const AT vr = (AT)0.92 - (AT)4.2 / b;
  const AT alpha = ((AT)2.83 + (AT)5.1 / b) * spq;
  const AT m = floor((n + (AT)1) * p);
  const AT log_fm = binomial_log_pmf(m, n, p);
  for (;;) {
    const AT u = (AT)0.5 - stream_uniform(s);  // [-0.5, 0.5)
    AT v = (AT)1 - stream_uniform(s);          // [0, 1)
    const AT us = (AT)0.5 - fabs(u);
    const AT k = floor(((AT)2 * a / us + b) * u + c);
    if (k < (AT)0 || k > n) continue;
    if (us >= (AT)0.07 && v <= vr) return k;
    v = log(v * alpha / (a / (us * us) + b));
    if (v <= binomial_log_pmf(k, n, p) - log_fm) return k;
  }
}
// As the CPU: 0 for n <= 0 or p <= 0, n for p >= 1, NaN for a NaN p or an infinite n (and, where
// the CPU never returns, for a NaN n); p > 1/2 samples the failures.
inline AT sample_binomial(AT n, AT p, __private Stream* s) {
  if (n <= (AT)0 || p <= (AT)0) return 0;
  if (p >= (AT)1) return n;
  if (isnan(p) || isnan(n) || isinf(n)) return (AT)NAN;
  if (p <= (AT)0.5) return n * p >= (AT)10 ? binomial_btrs(n, p, s) : binomial_inversion(n, p, s);
  const AT q = (AT)1 - p;
  return n - (n * q >= (AT)10 ? binomial_btrs(n, q, s) : binomial_inversion(n, q, s));
}
__kernel void binomial(PTR_ARG(T, out_), PTR_ARG(T, count_), PTR_ARG(T, prob_), ulong n, ulong seed,
                       ulong offset) {
  const ulong i = get_global_id(0);
  if (i >= n) return;
  Stream s;
  stream_init(&s, seed, offset, i);
  STORE(PTR(T, out_), i, sample_binomial(LOAD(PTR(T, count_), i), LOAD(PTR(T, prob_), i), &s));
}

// ---- multinomial ------------------------------------------------------------------------
// One work-group per row of a dense (rows, ncat) probability matrix. Validation first: any
// negative/inf/nan entry sets status 1, a zero row sum sets status 2 (the host raises the
// CPU's messages); invalid rows draw nothing.

inline AT group_sum(__local AT* scratch, AT v) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  AT r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// Returns the row sum, or -1 after flagging an invalid row.
inline AT validate_row(__global const T* p, ulong ncat, __local AT* scratch, __global int* status) {
  AT s = 0, bad = 0;
  for (ulong c = get_local_id(0); c < ncat; c += WG) {
    AT v = LOAD(p, c);
    if (!(v >= (AT)0) || isinf(v)) bad = 1;
    s += v;
  }
  bad = group_sum(scratch, bad);
  s = group_sum(scratch, s);
  if (bad > 0 || !(s > 0)) {
    if (get_local_id(0) == 0) atomic_max(status, bad > 0 ? 1 : 2);
    return -1;
  }
  return s;
}

// With replacement: inclusive prefix sums of the row go to cdf (rows, ncat) scratch, then
// every sample binary-searches its uniform draw. Draw j of row r uses Philox element
// r * nsample + j.
__kernel void multinomial_with_replacement(PTR_ARG(long, out_), PTR_ARG(T, prob), PTR_ARG(AT, cdf_),
                                           ulong ncat, ulong nsample, ulong seed, ulong offset,
                                           PTR_ARG(int, status_)) {
  __local AT scratch[WG];
  const ulong row = get_group_id(0);
  const int lid = get_local_id(0);
  __global long* out = PTR(long, out_) + row * nsample;
  __global int* status = PTR(int, status_);
  __global const T* p = PTR(T, prob) + row * ncat;
  __global AT* cdf = PTR(AT, cdf_) + row * ncat;
  const AT total = validate_row(p, ncat, scratch, status);
  if (total < 0) return;
  AT carry = 0;
  for (ulong c0 = 0; c0 < ncat; c0 += WG) {
    AT v = c0 + lid < ncat ? LOAD(p, c0 + lid) : (AT)0;
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Hillis-Steele inclusive scan of the chunk.
    for (int s = 1; s < WG; s <<= 1) {
      AT add = lid >= s ? scratch[lid - s] : (AT)0;
      barrier(CLK_LOCAL_MEM_FENCE);
      scratch[lid] += add;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (c0 + lid < ncat) cdf[c0 + lid] = (carry + scratch[lid]) / total;
    carry += scratch[WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (ulong j = lid; j < nsample; j += WG) {
    ulong e = row * nsample + j;
    uint4 r = philox_block(seed, offset, e / 4);
    uint w = (e % 4 == 0) ? r.x : (e % 4 == 1) ? r.y : (e % 4 == 2) ? r.z : r.w;
    AT u = (AT)1 - (AT)u32_to_unit(w);  // [0, 1)
    // First category whose cdf exceeds u, skipping zero-probability categories.
    ulong lo = 0, hi = ncat - 1;
    while (lo < hi) {
      ulong mid = (lo + hi) / 2;
      if (cdf[mid] > u) hi = mid; else lo = mid + 1;
    }
    while (lo > 0 && LOAD(p, lo) == (AT)0) --lo;  // rounding left u past the last cdf step
    out[j] = (long)lo;
  }
}

// Without replacement (Gumbel/exponential race): category c gets key p[c] / E_c with
// E_c ~ Exp(1); the nsample largest keys, in order, are the draws. Keys live in the keys
// scratch (rows, ncat); each round takes the group's argmax and retires it.
__kernel void multinomial_without_replacement(PTR_ARG(long, out_), PTR_ARG(T, prob), PTR_ARG(AT, keys_),
                                              ulong ncat, ulong nsample, ulong seed, ulong offset,
                                              PTR_ARG(int, status_)) {
  __local AT scratch[WG];
  __local AT best_v[WG];
  __local ulong best_i[WG];
  const ulong row = get_group_id(0);
  const int lid = get_local_id(0);
  __global long* out = PTR(long, out_) + row * nsample;
  __global int* status = PTR(int, status_);
  __global const T* p = PTR(T, prob) + row * ncat;
  __global AT* keys = PTR(AT, keys_) + row * ncat;
  if (validate_row(p, ncat, scratch, status) < 0) return;
  for (ulong c = lid; c < ncat; c += WG) {
    ulong e = row * ncat + c;
    uint4 r = philox_block(seed, offset, e / 4);
    uint w = (e % 4 == 0) ? r.x : (e % 4 == 1) ? r.y : (e % 4 == 2) ? r.z : r.w;
    keys[c] = LOAD(p, c) / -log((AT)u32_to_unit(w));
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (ulong j = 0; j < nsample; ++j) {
    AT bv = -1;
    ulong bi = 0;
    for (ulong c = lid; c < ncat; c += WG) {
      AT k = keys[c];
      if (k > bv) { bv = k; bi = c; }
    }
    best_v[lid] = bv;
    best_i[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) {
        AT ov = best_v[lid + s];
        ulong oi = best_i[lid + s];
        if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) { best_v[lid] = ov; best_i[lid] = oi; }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
      out[j] = (long)best_i[0];
      keys[best_i[0]] = -2;  // below every live key, including zero-probability ones
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  }
}

#endif  // AT_IS_INT

// ---- randperm: sort (random << 32 | index) keys with a bitonic network --------------------
// Keys are unique (the index is in the low word), so the permutation is exact; padding up to
// a power of two uses ~0 keys, which sort last.

__kernel void randperm_keys(PTR_ARG(ulong, keys_), ulong n, ulong npad, ulong seed, ulong offset) {
  __global ulong* keys = PTR(ulong, keys_);
  const ulong i = get_global_id(0);
  if (i >= npad) return;
  if (i >= n) { keys[i] = ~(ulong)0; return; }
  uint4 r = philox_block(seed, offset, i / 4);
  uint w = (i % 4 == 0) ? r.x : (i % 4 == 1) ? r.y : (i % 4 == 2) ? r.z : r.w;
  keys[i] = ((ulong)w << 32) | i;
}

inline void cmp_swap_local(__local ulong* s, uint a, uint b, bool up) {
  ulong x = s[a], y = s[b];
  if ((x > y) == up) { s[a] = y; s[b] = x; }
}

// Sorts each block of 2*WG keys (ascending/descending alternately by block, as the bitonic
// network needs), or, with k_start > 0, finishes merge stage k for strides < 2*WG.
__kernel void bitonic_local(PTR_ARG(ulong, keys_), ulong k_start) {
  __global ulong* keys = PTR(ulong, keys_);
  __local ulong s[2 * WG];
  const uint lid = get_local_id(0);
  const ulong base = get_group_id(0) * 2 * WG;
  s[lid] = keys[base + lid];
  s[lid + WG] = keys[base + lid + WG];
  barrier(CLK_LOCAL_MEM_FENCE);
  ulong k_lo = k_start ? k_start : 2, k_hi = k_start ? k_start : 2 * WG;
  for (ulong k = k_lo; k <= k_hi; k <<= 1) {
    for (ulong j = (k_start ? WG : k / 2); j > 0; j >>= 1) {
      uint a = 2 * lid - (lid & (j - 1));  // first element of this work-item's pair
      bool up = ((base + a) & k) == 0;
      cmp_swap_local(s, a, a + j, up);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  keys[base + lid] = s[lid];
  keys[base + lid + WG] = s[lid + WG];
}

// One compare-exchange step of stride j (>= 2*WG) of merge stage k.
__kernel void bitonic_global(PTR_ARG(ulong, keys_), ulong j, ulong k) {
  __global ulong* keys = PTR(ulong, keys_);
  const ulong t = get_global_id(0);
  const ulong a = 2 * t - (t & (j - 1));
  const bool up = (a & k) == 0;
  ulong x = keys[a], y = keys[a + j];
  if ((x > y) == up) { keys[a] = y; keys[a + j] = x; }
}

__kernel void randperm_out(PTR_ARG(T, out), PTR_ARG(ulong, keys_), ulong n) {
  const ulong i = get_global_id(0);
  if (i < n) STORE(PTR(T, out), i, (AT)(PTR(ulong, keys_)[i] & 0xffffffffu));
}
