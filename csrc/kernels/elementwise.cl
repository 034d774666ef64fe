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
#endif
