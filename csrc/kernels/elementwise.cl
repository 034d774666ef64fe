// Prelude of every generated pointwise kernel (see csrc/aten/Pointwise.h): helper functions
// that pointwise expressions call. The kernels themselves are generated per expression.
// The generator defines CT (the compute type) and CT_IS_FP / CT_IS_INT / CT_IS_BOOL /
// CT_IS_DOUBLE / CT_IS_SIGNED before this file; the defaults let it compile on its own.
#ifndef CT
#define CT float
#define CT_IS_FP 1
#define CT_IS_INT 0
#define CT_IS_BOOL 0
#define CT_IS_DOUBLE 0
#define CT_IS_SIGNED 1
#endif
#ifndef CT8
#define EW_VEC8_(t) t##8
#define EW_VEC8(t) EW_VEC8_(t)
#define CT8 EW_VEC8(CT)
#endif
#include "common.clh"

// Sticky error code for integer division by zero (Device.h: kErrZeroDivision).
#ifndef ERR_ZERO_DIVISION
#define ERR_ZERO_DIVISION 3
#endif

// A constant in the compute type.
#define CTC(x) ((CT)(x))
// std::max / std::min: the first operand wins unless the comparison says otherwise, so a NaN
// first operand propagates (clamp semantics).
#define EW_MAX(x, y) ((x) < (y) ? (y) : (x))
#define EW_MIN(x, y) ((y) < (x) ? (y) : (x))
// minimum / maximum: NaN in either operand propagates.
#define EW_MINIMUM(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : EW_MIN(x, y)))
#define EW_MAXIMUM(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : EW_MAX(x, y)))
// fmin / fmax: NaN in one operand is ignored.
#define EW_FMIN(x, y) ((x) != (x) ? (y) : ((y) != (y) ? (x) : EW_MIN(x, y)))
#define EW_FMAX(x, y) ((x) != (x) ? (y) : ((y) != (y) ? (x) : EW_MAX(x, y)))
// clamp with scalar bounds (clamp, clamp_min, clamp_max, hardtanh): a NaN input, then a NaN
// bound, propagates, as on the CPU and CUDA.
#define EW_CLAMP_MIN(x, lo) ((x) != (x) ? (x) : (lo) != (lo) ? (lo) : EW_MAX(x, lo))
#define EW_CLAMP_MAX(x, hi) ((x) != (x) ? (x) : (hi) != (hi) ? (hi) : EW_MIN(x, hi))
#define EW_CLAMP(x, lo, hi) ((x) != (x) ? (x) : (lo) != (lo) ? (lo) : (hi) != (hi) ? (hi) : EW_MIN(EW_MAX(x, lo), hi))
// Integer division by zero reports the sticky error and yields 0 (see the div ops' notes).
#define EW_CHECKED(b, expr) ((b) == (CT)0 ? (report_error(err_flag, ERR_ZERO_DIVISION), (CT)0) : (expr))

#if CT_IS_INT || CT_IS_BOOL
// Truncating division; x / -1 is negation, so INT_MIN / -1 wraps instead of trapping.
inline CT ew_div_trunc_int(CT x, CT y) {
#if CT_IS_SIGNED
  if (y == (CT)-1) return (CT)(-x);
#endif
  return x / y;
}
// Division rounding toward negative infinity.
inline CT ew_div_floor_int(CT x, CT y) {
#if CT_IS_SIGNED
  if (y == (CT)-1) return (CT)(-x);
  CT q = x / y, r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) q -= 1;
  return q;
#else
  return x / y;
#endif
}
// Remainder with the sign of the divisor (Python's %).
inline CT ew_rem_int(CT x, CT y) {
#if CT_IS_SIGNED
  if (y == (CT)-1) return 0;
  CT r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
#else
  return x % y;
#endif
}
// fmod for integers: remainder with the sign of the dividend.
inline CT ew_fmod_int(CT x, CT y) {
#if CT_IS_SIGNED
  if (y == (CT)-1) return 0;
#endif
  return x % y;
}
// Integer power by squaring; negative exponents give 1, +-1 or 0 as on the CPU.
inline CT ew_pow_int(CT base, CT e) {
#if CT_IS_SIGNED
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? (CT)-1 : (CT)1;
    return 0;
  }
#endif
  CT r = 1;
  while (e) {
    if (e & 1) r *= base;
    e >>= 1;
    base *= base;
  }
  return r;
}
// Shifts with the CPU's out-of-range rules: a left shift by a negative or too large count is
// 0; a right shift by one keeps only the sign (all ones for negative signed values, else 0).
#define EW_BITS ((CT)(sizeof(CT) * 8))
inline CT ew_shl(CT x, CT y) {
  if (y < 0 || y >= EW_BITS) return 0;
  return (CT)(x << y);
}
inline CT ew_shr(CT x, CT y) {
  if (y < 0 || y >= EW_BITS) {
#if CT_IS_SIGNED
    return x < 0 ? (CT)-1 : (CT)0;
#else
    return 0;
#endif
  }
  return (CT)(x >> y);
}
#endif

#if CT_IS_FP
// Division rounding toward negative infinity, computed from fmod so that the quotient of
// exactly representable results is exact (as on the CPU).
inline CT ew_div_floor_fp(CT x, CT y) {
  if (y == 0) return x / y;
  CT m = fmod(x, y);
  CT q = (x - m) / y;
  if (m != 0 && ((y < 0) != (m < 0))) q -= 1;
  if (q == 0) return copysign(CTC(0), x / y);
  CT fq = floor(q);
  if (q - fq > CTC(0.5)) fq += 1;
  return fq;
}
// Remainder with the sign of the divisor.
inline CT ew_rem_fp(CT x, CT y) {
  CT m = fmod(x, y);
  if (m != 0 && ((y < 0) != (m < 0))) m += y;
  return m;
}
// Inverse error function: M. Giles' single-precision polynomial ("Approximating the erfinv
// function", GPU Computing Gems, 2011) refined by Newton steps on erf in the compute type.
inline CT ew_erfinv(CT y) {
  if (y != y || y < -1 || y > 1) return (CT)NAN;
  if (y == 1) return (CT)INFINITY;
  if (y == -1) return (CT)(-INFINITY);
  // w from y in the compute type: a double y within 2^-24 of +-1 rounds to +-1 in float,
  // where w (and the Newton steps after it) would be infinite.
  float x = (float)y;
  float w = (float)(-log((CTC(1) - y) * (CTC(1) + y))), p;
  if (w < 5.0f) {
    w -= 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  CT r = (CT)(p * x);
  if (fabs(y) > CTC(0.9)) {
    // The tail: Newton on log(erfc(|r|)) = log(1 - |y|), nearly quadratic in r, where erf(r) - y
    // would lose the residual (erf(r) is within ulps of 1) and the polynomial, taken past its
    // float range for a double y, starts up to ~7 % off.
    const CT lq = log(CTC(1) - fabs(y));
    CT a = fabs(r);
    for (int it = 0; it < 3; ++it) {
      const CT e = erfc(a);
      a += (log(e) - lq) * e / (CTC(1.1283791670955126) * exp(-a * a));
    }
    return copysign(a, y);
  }
  // Newton on erf(r) = y: erf'(r) = 2/sqrt(pi) exp(-r^2).
  for (int it = 0; it < 2; ++it) r -= (erf(r) - y) / (CTC(1.1283791670955126) * exp(-r * r));
  return r;
}
// torch.round(x, decimals): round half to even at 10^-decimals; `tp` = 10^|decimals|.
inline CT ew_round_decimals(CT x, CT tp, int negative) {
  return negative ? rint(x / tp) * tp : rint(x * tp) / tp;
}
// binary_cross_entropy's term for input x and target y, the CPU's formula (log terms clamped
// at -100, so x = 0 or 1 stays finite); x or y outside [0, 1] (or NaN) reports the CPU's error.
inline CT ew_bce(CT x, CT y, __global int* err) {
  if (!(x >= (CT)0 && x <= (CT)1)) report_error(err, ERR_BCE_INPUT_RANGE);
  if (!(y >= (CT)0 && y <= (CT)1)) report_error(err, ERR_BCE_TARGET_RANGE);
  return (y - (CT)1) * fmax(log1p(-x), (CT)-100) - y * fmax(log(x), (CT)-100);
}
// tanh, exactly +-1 past the point where it rounds there (|x| > 9.01 in float, 19.06 in
// double): PoCL 3.1's float tanh stops one ulp short (tanh(inf) = 0.99999994), so 1 + tanh(u)
// never reached 0 and tanh-GELU of -1000 was -3e-5 instead of -0.
#if CT_IS_DOUBLE
#define EW_TANH_ONE CTC(19.1)
#else
#define EW_TANH_ONE CTC(9.1)
#endif
inline CT ew_tanh(CT x) { return fabs(x) > EW_TANH_ONE ? copysign(CTC(1), x) : tanh(x); }
// GELU and its derivative, exact (erf) and tanh-approximated forms.
#define EW_SQRT1_2 CTC(0.70710678118654752440)
#define EW_SQRT_2_PI CTC(0.79788456080286535588)  // sqrt(2 / pi)
#define EW_INV_SQRT_2PI CTC(0.39894228040143267794)
#define EW_GELU_KAPPA CTC(0.044715)
inline CT ew_gelu(CT x) { return x * CTC(0.5) * (CTC(1) + erf(x * EW_SQRT1_2)); }
#if CT_IS_FP && !CT_IS_DOUBLE
// The same over 8 floats (PointwiseSpec::vec_expr: CPU devices), without the device's erf and
// exp, which PoCL does not vectorize: Phi(x) = erfc(-x/sqrt(2)) / 2 from Numerical Recipes'
// erfcc (erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2), fractional error < 1.2e-7 for z >= 0)
// taken at |x| and reflected, and common.clh's exp8f. Against a float64 reference over
// [-16, 16] the largest absolute error is 3.8e-7 for GELU and 2.0e-7 for its derivative (erf's
// form: 4.5e-7, 1.3e-7); PoCL, 2-core AVX2 VM, ns per element: GELU 5.7 -> 2.5, its backward
// 6.4 -> 4.7 (bench/RESULTS.md, session 14).
// Phi(x), the standard normal CDF; *zz = x^2 / 2.
inline float8 ew_phi8(float8 x, float8* zz) {
  const float8 z = fabs(x) * EW_SQRT1_2;
  *zz = z * z;
  const float8 t = 1.0f / fma(0.5f, z, 1.0f);
  float8 p = 0.17087277f;
  p = fma(p, t, -0.82215223f);
  p = fma(p, t, 1.48851587f);
  p = fma(p, t, -1.13520398f);
  p = fma(p, t, 0.27886807f);
  p = fma(p, t, -0.18628806f);
  p = fma(p, t, 0.09678418f);
  p = fma(p, t, 0.37409196f);
  p = fma(p, t, 1.00002368f);
  p = fma(p, t, -1.26551223f);
  const float8 half_erfc = 0.5f * t * exp8f(p - *zz);
  return select(half_erfc, 1.0f - half_erfc, x >= 0.0f);
}
inline float8 ew_gelu8(float8 x) {
  float8 zz;
  return x * ew_phi8(x, &zz);
}
inline float8 ew_gelu_bwd8(float8 g, float8 x) {
  float8 zz;
  const float8 cdf = ew_phi8(x, &zz);
  return g * fma(x, exp8f(-zz) * EW_INV_SQRT_2PI, cdf);
}
#elif CT_IS_FP
// The same over 8 doubles, with the device's vector erf and exp.
inline CT8 ew_gelu8(CT8 x) { return x * CTC(0.5) * (CTC(1) + erf(x * EW_SQRT1_2)); }
inline CT8 ew_gelu_bwd8(CT8 g, CT8 x) {
  const CT8 cdf = CTC(0.5) * (CTC(1) + erf(x * EW_SQRT1_2));
  const CT8 pdf = exp(CTC(-0.5) * x * x) * EW_INV_SQRT_2PI;
  return g * (cdf + x * pdf);
}
#endif
inline CT ew_gelu_tanh(CT x) {
  return CTC(0.5) * x * (CTC(1) + ew_tanh(EW_SQRT_2_PI * (x + EW_GELU_KAPPA * x * x * x)));
}
inline CT ew_gelu_bwd(CT g, CT x) {
  CT cdf = CTC(0.5) * (CTC(1) + erf(x * EW_SQRT1_2));
  CT pdf = exp(CTC(-0.5) * x * x) * EW_INV_SQRT_2PI;
  return g * (cdf + x * pdf);
}
// 1 - tanh(u)^2 as 1 / cosh(u)^2: exact zero where tanh saturates (tanh may be an ulp short).
inline CT ew_sech2(CT u) {
  CT c = cosh(u);
  return CTC(1) / (c * c);
}
inline CT ew_gelu_tanh_bwd(CT g, CT x) {
  CT x2 = x * x;
  CT u = EW_SQRT_2_PI * (x + EW_GELU_KAPPA * x2 * x);
  CT dinner = EW_SQRT_2_PI * (CTC(1) + CTC(3) * EW_GELU_KAPPA * x2);
  return g * (CTC(0.5) * (CTC(1) + ew_tanh(u)) + CTC(0.5) * x * ew_sech2(u) * dinner);
}
inline CT ew_sigmoid(CT x) { return CTC(1) / (CTC(1) + exp(-x)); }
// log(1 + exp(x)) without overflow for large x.
inline CT ew_softplus1(CT x) { return x > CTC(20) ? x : log1p(exp(x)); }
inline CT ew_mish(CT x) { return x * tanh(ew_softplus1(x)); }
inline CT ew_mish_bwd(CT g, CT x) {
  CT sp = ew_softplus1(x);
  return g * (tanh(sp) + x * ew_sigmoid(x) * ew_sech2(sp));
}
inline CT ew_silu_bwd(CT g, CT x) {
  CT s = ew_sigmoid(x);
  return g * s * (CTC(1) + x * (CTC(1) - s));
}
// digamma (psi), the logarithmic derivative of the gamma function: +-inf at +-0 (the sign
// opposite to zero's), NaN at the negative integers, reflection psi(x) = psi(1 - x) - pi / tan(pi x)
// below 0, the recurrence psi(x) = psi(x + 1) - 1/x up
// to 10, then the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k) (Bernoulli numbers).
inline CT ew_digamma_pos(CT x) {
  CT r = CTC(0);
  while (x < CTC(10)) {
    r -= CTC(1) / x;
    x += CTC(1);
  }
  if (x == CTC(10)) return r + CTC(2.25175258906672110764);  // psi(10)
  const CT z = CTC(1) / (x * x);
  // B2/2, B4/4, ..., B14/14 in Horner form, highest power first.
  CT y = CTC(8.33333333333333333333E-2);
  y = y * z - CTC(2.10927960927960927961E-2);
  y = y * z + CTC(7.57575757575757575758E-3);
  y = y * z - CTC(4.16666666666666666667E-3);
  y = y * z + CTC(3.96825396825396825397E-3);
  y = y * z - CTC(8.33333333333333333333E-3);
  y = y * z + CTC(8.33333333333333333333E-2);
  return r + log(x) - CTC(0.5) / x - (x >= CTC(1e17) ? CTC(0) : z * y);
}
inline CT ew_digamma(CT x) {
  if (x == CTC(0)) return copysign((CT)INFINITY, -x);
  if (x < CTC(0)) {
    const CT frac = x - trunc(x);
    if (frac == CTC(0)) return (CT)NAN;
    // tan has period pi: the fraction moved into [-1/2, 1/2] keeps pi * r exact enough near the
    // poles in float (ATen computes this term in double).
    const CT r = frac - rint(frac);
    return ew_digamma_pos(CTC(1) - x) - CTC(3.14159265358979323846) / tan(CTC(3.14159265358979323846) * r);
  }
  return ew_digamma_pos(x);
}
// sin(pi x) / (pi x), 1 at 0 (the CPU's order: the product, then the quotient).
inline CT ew_sinc(CT x) {
  if (x == CTC(0)) return CTC(1);
  const CT p = CTC(3.14159265358979323846) * x;
  return sin(p) / p;
}
// -x log x: NaN stays NaN, 0 at 0, -inf below 0.
inline CT ew_entr(CT x) {
  if (isnan(x)) return x;
  return x > CTC(0) ? -x * log(x) : x == CTC(0) ? CTC(0) : (CT)(-INFINITY);
}
// x log y and x log1p(y): NaN where y is NaN, else 0 where x is 0 (whatever y is).
inline CT ew_xlogy(CT x, CT y) { return isnan(y) ? y : x == CTC(0) ? CTC(0) : x * log(y); }
inline CT ew_xlog1py(CT x, CT y) { return isnan(y) ? y : x == CTC(0) ? CTC(0) : x * log1p(y); }
// log(e^a + e^b) and log2(2^a + 2^b) as the CPU computes them: equal infinities give
// themselves, else the larger plus log1p of the smaller's share.
inline CT ew_logaddexp(CT a, CT b) {
  if (isinf(a) && a == b) return a;
  return EW_MAX(a, b) + log1p(exp(-fabs(a - b)));
}
inline CT ew_logaddexp2(CT a, CT b) {
  if (isinf(a) && a == b) return a;
  return EW_MAX(a, b) + log1p(exp2(-fabs(a - b))) * CTC(1.4426950408889634);  // 1 / ln 2
}
// trigamma (psi'): reflection below 1/2, psi'(x) = psi'(x + 1) + 1/x^2 six times, then the
// asymptotic series 1/x + 1/(2x^2) + sum B_2k / x^(2k+1) (the CPU's evaluation order).
inline CT ew_trigamma(CT x) {
  const CT pi = CTC(3.14159265358979323846);
  CT sign = CTC(1), result = CTC(0);
  if (x < CTC(0.5)) {
    sign = CTC(-1);
    const CT s = sin(pi * x);
    result -= (pi * pi) / (s * s);
    x = CTC(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += CTC(1) / (x * x);
    x += CTC(1);
  }
  const CT ixx = CTC(1) / (x * x);
  result += (CTC(1) + CTC(1) / (CTC(2) * x) +
             ixx * (CTC(1) / CTC(6) - ixx * (CTC(1) / CTC(30) - ixx * (CTC(1) / CTC(42))))) / x;
  return sign * result;
}
// Hurwitz zeta(x, q) = sum_k (k + q)^-x (x > 1), as Cephes evaluates it: direct terms until
// k + q > 9 (at least 9 of them), then the Euler-Maclaurin tail with the Bernoulli-number
// coefficients 12, -720, ... (2k)! / B_2k.
inline CT ew_zeta(CT x, CT q) {
  const CT machep = CTC(1.11022302462515654042E-16);
  const CT A[12] = {CTC(12.0), CTC(-720.0), CTC(30240.0), CTC(-1209600.0), CTC(47900160.0),
                    CTC(-1.8924375803183791606e9), CTC(7.47242496e10), CTC(-2.950130727918164224e12),
                    CTC(1.1646782814350067249e14), CTC(-4.5979787224074726105e15),
                    CTC(1.8152105401943546773e17), CTC(-7.1661652561756670113e18)};
  if (x == CTC(1)) return (CT)INFINITY;
  if (x < CTC(1)) return (CT)NAN;
  if (q <= CTC(0)) {
    if (q == floor(q)) return (CT)INFINITY;
    if (x != floor(x)) return (CT)NAN;
  }
  CT s = pow(q, -x), a = q, b = CTC(0);
  int i = 0;
  while (i < 9 || a <= CTC(9)) {
    i += 1;
    a += CTC(1);
    b = pow(a, -x);
    s += b;
    // b == 0 at a finite a: every later term underflows too (in float, where the CPU sums in
    // double; going on, the tail's growing coefficients would reach inf * 0). As on the CPU, an
    // infinite x or q still ends in NaN.
    if ((b == CTC(0) && !isinf(a) && !isinf(x)) || (-machep * s < b && b < machep * s)) return s;
  }
  const CT w = a;
  s += b * w / (x - CTC(1));
  s -= CTC(0.5) * b;
  a = CTC(1);
  CT k = CTC(0);
  for (int j = 0; j < 12; ++j) {
    a *= x + k;
    b /= w;
    CT t = a * b / A[j];
    s = s + t;
    t = fabs(t / s);
    if (t < machep) return s;
    k += CTC(1);
    a *= x + k;
    b /= w;
    k += CTC(1);  // the next coefficient starts at x + 2j (Cephes's second increment)
  }
  return s;
}
// polygamma(n, x) for n >= 2: (-1)^(n+1) n! zeta(n + 1, x).
inline CT ew_polygamma(CT x, CT n) {
  return (fmod(n, CTC(2)) != CTC(0) ? CTC(1) : CTC(-1)) * exp(lgamma(n + CTC(1))) * ew_zeta(n + CTC(1), x);
}
// nextafter for float16 / bfloat16 values (exact in float): one step of the 16-bit pattern
// towards b; NaN if either is NaN, b if they are equal, the smallest subnormal (with b's sign)
// from zero.
inline ushort ew_step16(ushort u, float a, float b) {
  if (a == 0.0f) return b > 0.0f ? (ushort)0x0001 : (ushort)0x8001;
  return ((a < b) == (a > 0.0f)) ? (ushort)(u + 1) : (ushort)(u - 1);
}
inline float ew_nextafter_half(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  ushort u;
  vstore_half(a, 0, (__private half*)&u);
  u = ew_step16(u, a, b);
  return vload_half(0, (__private const half*)&u);
}
inline float ew_nextafter_bf16(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  return bf16_to_float(ew_step16(float_to_bf16(a), a, b));
}
// Modified Bessel functions of the first kind I0, I1 and their exponentially scaled forms
// I0e(x) = exp(-|x|) I0(x), I1e(x) = exp(-|x|) I1(x), from Cephes's Chebyshev expansions:
// of exp(-x) I(x) on [0, 8] (argument x/2 - 2) and of exp(-x) sqrt(x) I(x) on (8, inf)
// (argument 32/x - 2). I1 is odd, I0 even.
__constant CT ew_i0_a[30] = {
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15,  -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11,  -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8,  6.04699502254191894932E-8,  -2.67079385394061173391E-7,
    1.11738753912010371815E-6,   -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5,  1.88502885095841655729E-4,  -5.76375574538582365885E-4,
    1.63947561694133579842E-3,   -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2,  4.93052842396707084878E-2,  -9.49010970480476444210E-2,
    1.71620901522208775349E-1,   -3.04682672343198398683E-1, 6.76795274409476084995E-1};
__constant CT ew_i0_b[25] = {
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17,  -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15,  3.81168066935262242075E-15,  -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14,  3.85277838274214270114E-13,
    7.18012445138366623367E-13,  -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11,  4.94060238822496958910E-10,
    3.39623202570838634515E-9,   2.26666899049817806459E-8,   2.04891858946906374183E-7,
    2.89137052083475648297E-6,   6.88975834691682398426E-5,   3.36911647825569408990E-3,
    8.04490411014108831608E-1};
__constant CT ew_i1_a[29] = {
    2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
    3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
    9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
    -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
    4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
    -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
    2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
    -1.76416518357834055153E-1,  2.52587186443633654823E-1};
__constant CT ew_i1_b[25] = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
    3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};
// Clenshaw's recurrence for sum' c[i] T_i(x/2), coefficients highest order first.
inline CT ew_chbevl(CT x, __constant CT* c, int n) {
  CT b0 = c[0], b1 = CTC(0), b2 = CTC(0);
  for (int i = 1; i < n; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + c[i];
  }
  return CTC(0.5) * (b0 - b2);
}
// exp(-|x|) I0(x).
inline CT ew_i0e(CT x) {
  x = fabs(x);
  if (x <= CTC(8)) return ew_chbevl(x / CTC(2) - CTC(2), ew_i0_a, 30);
  return ew_chbevl(CTC(32) / x - CTC(2), ew_i0_b, 25) / sqrt(x);
}
inline CT ew_i0(CT x) { return exp(fabs(x)) * ew_i0e(x); }
// exp(-|x|) I1(x).
inline CT ew_i1e(CT x) {
  const CT z = fabs(x);
  const CT r = z <= CTC(8) ? ew_chbevl(z / CTC(2) - CTC(2), ew_i1_a, 29) * z
                           : ew_chbevl(CTC(32) / z - CTC(2), ew_i1_b, 25) / sqrt(z);
  return x < CTC(0) ? -r : r;
}
inline CT ew_i1(CT x) { return exp(fabs(x)) * ew_i1e(x); }
#endif
