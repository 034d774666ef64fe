// Arithmetic, math, comparison, logical/bitwise and selection ops, all through the generated
// pointwise engine (csrc/aten/Pointwise.h): each op is a one-line OpenCL expression over an
// iterator built like ATen's (same promotion, out= resizing and casting rules); helpers live
// in kernels/elementwise.cl. Activations and their backwards are in activation.cpp.
//
// Integer division by zero (div with rounding, floor_divide, remainder, fmod): a CPU-scalar
// divisor is checked on the host and raises RuntimeError("ZeroDivisionError") like the CPU;
// a zero in a device tensor divisor yields 0 there and sets the device's sticky error flag,
// which raises the same RuntimeError at the next synchronization (.item(), .cpu(), ...).
#include "../aten/Routing.h"
#include "elementwise.h"
#include "../aten/OutMeta.h"
#include <ATen/MemoryOverlap.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/linalg_cross_meta.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/result_type.h>
#include <limits>
#include <torch/library.h>

namespace torch_ocl {
namespace ew {

void check_kind(const char* op, at::ScalarType t, unsigned allowed) {
  const unsigned k = at::isFloatingType(t) ? kFloating : t == at::kBool ? kBoolean : kIntegral;
  TORCH_CHECK_NOT_IMPLEMENTED(allowed & k, "\"", op, "\" not implemented for '", c10::toString(t), "'");
}

at::Tensor& unary(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s, unsigned kinds,
                  c10::ArrayRef<c10::Scalar> scalars) {
  at::TensorIterator iter;
  iter.build_unary_op(out, self);
  if (!out.defined()) out = iter.output();
  check_kind(s.name.c_str(), iter.common_dtype(), kinds);
  pointwise(iter, s, scalars);
  return out;
}

at::Tensor& unary_float(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s,
                        c10::ArrayRef<c10::Scalar> scalars) {
  at::TensorIterator iter;
  iter.build_unary_float_op(out, self);
  if (!out.defined()) out = iter.output();
  pointwise(iter, s, scalars);
  return out;
}

at::Tensor& binary(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, const PointwiseSpec& s, unsigned kinds,
                   c10::ArrayRef<c10::Scalar> scalars, bool float_op) {
  at::TensorIterator iter;
  if (float_op) iter.build_binary_float_op(out, a, b);
  else iter.build_binary_op(out, a, b);
  if (!out.defined()) out = iter.output();  // functional callers pass an undefined out
  check_kind(s.name.c_str(), iter.common_dtype(), kinds);
  pointwise(iter, s, scalars);
  return out;
}

bool is_cpu_scalar_zero(const at::Tensor& t) {
  return t.device().is_cpu() && t.dim() == 0 && t.item().toDouble() == 0.0;
}

}  // namespace ew

using namespace ew;
namespace {

// v rounded to the compute type of a floating dtype t (float for all but double), so that a value
// past float's range is +-inf, as a static_cast on the CPU makes it, not a Scalar overflow error.
double in_compute_type(double v, at::ScalarType t) {
  return t == at::kDouble ? v : static_cast<double>(static_cast<float>(v));
}

// out = the real part of f(self) for a complex self (abs, angle; f's complex form returns
// (value, 0)). out keeps its dtype where the real type casts to it, as on the CPU; a complex
// out gets a zero imaginary part.
at::Tensor& complex_to_real(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s) {
  const at::ScalarType real = c10::toRealValueType(self.scalar_type());
  TORCH_CHECK(at::canCast(real, out.scalar_type()), "result type ", real, " can't be cast to the desired output type ",
              out.scalar_type());
  at::native::resize_output(out, self.sizes());
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(out)
                  .add_const_input(self)
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .build();
  pointwise(iter, s, {}, self.scalar_type());
  return out;
}

// The CPU's dtype rules for complex(real, imag) and polar(abs, angle): two float/double
// tensors of one dtype, and out of the matching complex dtype.
void check_complex_parts(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  auto floating = [](const at::Tensor& t) {
    return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble || t.scalar_type() == at::kHalf;
  };
  TORCH_CHECK(floating(a) && floating(b), "Expected both inputs to be Half, Float or Double tensors but got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ", a.scalar_type(),
              " but got scalar type ", b.scalar_type(), " for second argument");
  const at::ScalarType want = c10::toComplexType(a.scalar_type());
  TORCH_CHECK(out.scalar_type() == want, "Expected object of scalar type ", want, " but got scalar type ",
              out.scalar_type(), " for argument 'out'");
}

at::Tensor& complex_from_parts(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, const PointwiseSpec& s) {
  check_complex_parts(out, a, b);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(out)
                  .add_const_input(a)
                  .add_const_input(b)
                  .check_all_same_dtype(false)
                  .build();
  pointwise(iter, s, {}, out.scalar_type());
  return out;
}

// complex.out(Tensor real, Tensor imag, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& complex_out_ocl(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  // The parts arrive as (value, 0) in the complex compute type.
  static const PointwiseSpec s = with_complex(spec("complex", ""), "(CX)(a.x, b.x)");
  return complex_from_parts(real, imag, out, s);
}

// polar.out(Tensor abs, Tensor angle, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& polar_out_ocl(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  static const PointwiseSpec s = with_complex(spec("polar", ""), "cx_polar(a.x, b.x)");
  return complex_from_parts(abs, angle, out, s);
}

// ---- arithmetic ----------------------------------------------------------------------------

const PointwiseSpec kAdd = with_complex(spec("add", "a + s0 * b"), "a + cx_mul(s0, b)");
const PointwiseSpec kAdd1 = with_complex(spec("add1", "a + b"), "a + b");
const PointwiseSpec kSub = with_complex(spec("sub", "a - s0 * b"), "a - cx_mul(s0, b)");
const PointwiseSpec kSub1 = with_complex(spec("sub1", "a - b"), "a - b");

// add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& add_out_ocl(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  if (!out.defined()) out = iter.output();
  at::native::alpha_check(iter.common_dtype(), alpha);
  if (alpha.equal(1)) pointwise(iter, kAdd1);
  else pointwise(iter, kAdd, {alpha});
  return out;
}

// sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& sub_out_ocl(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha, at::Tensor& out) {
  at::native::sub_check(self, other);
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  if (!out.defined()) out = iter.output();
  at::native::alpha_check(iter.common_dtype(), alpha);
  if (alpha.equal(1)) pointwise(iter, kSub1);
  else pointwise(iter, kSub, {alpha});
  return out;
}

// rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
at::Tensor rsub_tensor_ocl(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::Tensor out;
  return sub_out_ocl(other, self, alpha, out);
}

// mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& mul_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s = with_complex(spec("mul", "a * b"), "cx_mul(a, b)");
  return binary(self, other, out, s, kAnyKind);
}

// div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& div_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s = with_complex(spec("div", "a / b"), "cx_div(a, b)");
  return binary(self, other, out, s, kAnyKind, {}, /*float_op=*/true);
}

// Integer division-like ops: the int spec checks for zero divisors on the device, and a
// CPU-scalar zero divisor raises on the host like the CPU.
at::Tensor& int_or_float_division(const at::Tensor& self, const at::Tensor& other, at::Tensor& out, const char* name,
                                  const PointwiseSpec& fp, const PointwiseSpec& integer) {
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  if (!out.defined()) out = iter.output();
  const at::ScalarType ct = iter.common_dtype();
  check_kind(name, ct, kFloating | kIntegral);
  if (at::isFloatingType(ct)) {
    pointwise(iter, fp);
  } else {
    TORCH_CHECK(!is_cpu_scalar_zero(other), "ZeroDivisionError");
    pointwise(iter, integer);
  }
  return out;
}

const PointwiseSpec kDivTruncFp{"div_trunc_fp", "trunc(a / b)"};
const PointwiseSpec kDivTruncInt = spec("div_trunc_int", "EW_CHECKED(b, ew_div_trunc_int(a, b))", {}, {}, true);
const PointwiseSpec kDivFloorFp{"div_floor_fp", "ew_div_floor_fp(a, b)"};
const PointwiseSpec kDivFloorInt = spec("div_floor_int", "EW_CHECKED(b, ew_div_floor_int(a, b))", {}, {}, true);

// div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)
at::Tensor& div_out_mode_ocl(const at::Tensor& self, const at::Tensor& other,
                             std::optional<c10::string_view> rounding_mode, at::Tensor& out) {
  if (!rounding_mode.has_value()) return div_out_ocl(self, other, out);
  if (*rounding_mode == "trunc") return int_or_float_division(self, other, out, "div_trunc", kDivTruncFp, kDivTruncInt);
  if (*rounding_mode == "floor") return int_or_float_division(self, other, out, "div_floor", kDivFloorFp, kDivFloorInt);
  TORCH_CHECK(false, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode,
              "'");
}

// floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& floor_divide_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return int_or_float_division(self, other, out, "div_floor", kDivFloorFp, kDivFloorInt);
}
// floor_divide(Tensor self, Tensor other) -> Tensor
at::Tensor floor_divide_ocl(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out;
  return floor_divide_out_ocl(self, other, out);
}
// floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
at::Tensor& floor_divide__ocl(at::Tensor& self, const at::Tensor& other) {
  return floor_divide_out_ocl(self, other, self);
}

// fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& fmod_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec fp{"fmod_fp", "fmod(a, b)"};
  static const PointwiseSpec integer = spec("fmod_int", "EW_CHECKED(b, ew_fmod_int(a, b))", {}, {}, true);
  return int_or_float_division(self, other, out, "fmod", fp, integer);
}

const PointwiseSpec kRemFp{"remainder_fp", "ew_rem_fp(a, b)"};
const PointwiseSpec kRemInt = spec("remainder_int", "EW_CHECKED(b, ew_rem_int(a, b))", {}, {}, true);

// remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& remainder_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return int_or_float_division(self, other, out, "remainder", kRemFp, kRemInt);
}
// remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
at::Tensor remainder_scalar_tensor_ocl(const c10::Scalar& self, const at::Tensor& other) {
  at::Tensor out;
  return remainder_out_ocl(at::native::wrapped_scalar_tensor(self), other, out);
}

// pow: integers by squaring (negative exponents as on the CPU), floats with pow().
const PointwiseSpec kPowFp{"pow_fp", "pow(a, b)"};
const PointwiseSpec kPowInt{"pow_int", "ew_pow_int(a, b)"};

// pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& pow_tensor_tensor_out_ocl(const at::Tensor& self, const at::Tensor& exponent, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_binary_op(out, self, exponent);
  if (!out.defined()) out = iter.output();
  const at::ScalarType ct = iter.common_dtype();
  check_kind("pow", ct, kFloating | kIntegral);
  pointwise(iter, at::isFloatingType(ct) ? kPowFp : kPowInt);
  return out;
}

// pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& pow_tensor_scalar_out_ocl(const at::Tensor& self, const c10::Scalar& exponent, at::Tensor& out) {
  TORCH_CHECK(!(at::isIntegralType(self.scalar_type(), true) && exponent.isIntegral(true) && exponent.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  const at::ScalarType rt = at::result_type(self, exponent);
  at::TensorIterator iter;
  iter.build_output_borrowing_argument_owning_unary_op(out, self.to(rt));
  check_kind("pow", rt, kFloating | kIntegral);
  if (exponent.equal(0.0) || exponent.equal(false)) {
    static const PointwiseSpec one{"pow_zero", "(CT)1"};
    pointwise(iter, one);
    return out;
  }
  static const PointwiseSpec copy{"pow_one", "a"};
  if (exponent.equal(1.0) || exponent.equal(true)) {
    pointwise(iter, copy);
    return out;
  }
  if (at::isFloatingType(rt)) {
    static const PointwiseSpec sq{"pow_2", "a * a"}, cube{"pow_3", "a * a * a"}, root{"pow_half", "sqrt(a)"},
        rroot{"pow_mhalf", "rsqrt(a)"}, inv{"pow_m1", "CTC(1) / a"}, inv2{"pow_m2", "CTC(1) / (a * a)"},
        general{"pow_scalar_fp", "pow(a, s0)"};
    const double e = exponent.toDouble();
    if (e == 2.0) pointwise(iter, sq);
    else if (e == 3.0) pointwise(iter, cube);
    else if (e == 0.5) pointwise(iter, root);
    else if (e == -0.5) pointwise(iter, rroot);
    else if (e == -1.0) pointwise(iter, inv);
    else if (e == -2.0) pointwise(iter, inv2);
    else pointwise(iter, general, {exponent});
  } else {
    static const PointwiseSpec general{"pow_scalar_int", "ew_pow_int(a, s0)"};
    pointwise(iter, general, {exponent});
  }
  return out;
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& pow_scalar_out_ocl(const c10::Scalar& self, const at::Tensor& exponent, at::Tensor& out) {
  if (self.equal(1.0)) {
    at::TensorIterator iter;
    iter.build_output_borrowing_argument_owning_unary_op(out, exponent.to(at::result_type(self, exponent)));
    static const PointwiseSpec one{"pow_base_one", "(CT)1"};
    pointwise(iter, one);
    return out;
  }
  return pow_tensor_tensor_out_ocl(at::native::wrapped_scalar_tensor(self), exponent, out);
}

// neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& neg_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. "
              "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  static const PointwiseSpec s = with_complex(spec("neg", "-a"), "-a");
  return unary(self, out, s, kFloating | kIntegral);
}

// abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& abs_out_ocl(const at::Tensor& self, at::Tensor& out) {
  if (self.is_complex()) {
    static const PointwiseSpec c = with_complex(spec("abs_complex", ""), "(CX)(cx_abs(a), (CT)0)");
    return complex_to_real(self, out, c);
  }
  static const PointwiseSpec s{"abs", "(a < (CT)0 ? (CT)(-a) : a)"};
  static const PointwiseSpec fp{"abs_fp", "fabs(a)"};
  check_kind("abs", self.scalar_type(), kFloating | kIntegral);
  return unary(self, out, at::isFloatingType(self.scalar_type()) ? fp : s, kFloating | kIntegral);
}

const PointwiseSpec kSign{"sign", "(CT)((a > (CT)0) - (a < (CT)0))"};
const PointwiseSpec kSignBool{"sign_bool", "a"};
// sign.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& sign_out_ocl(const at::Tensor& self, at::Tensor& out) {
  return unary(self, out, self.scalar_type() == at::kBool ? kSignBool : kSign, kAnyKind);
}
// sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)  (real dtypes: sign; complex: z / |z|)
at::Tensor& sgn_out_ocl(const at::Tensor& self, at::Tensor& out) {
  if (!self.is_complex()) return sign_out_ocl(self, out);
  static const PointwiseSpec s = with_complex(spec("sgn", ""), "cx_sgn(a)");
  return unary(self, out, s, kAnyKind);
}

// angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// Real: pi for negative values, 0 otherwise, NaN kept (integers promote to float); complex:
// the argument, as a real tensor.
at::Tensor& angle_out_ocl(const at::Tensor& self, at::Tensor& out) {
  if (self.is_complex()) {
    static const PointwiseSpec c = with_complex(spec("angle_complex", ""), "(CX)(cx_angle(a), (CT)0)");
    return complex_to_real(self, out, c);
  }
  static const PointwiseSpec s{"angle", "isnan(a) ? a : (a < CTC(0) ? (CT)M_PI : CTC(0))"};
  return unary_float(self, out, s);
}
// angle(Tensor self) -> Tensor
at::Tensor angle_ocl(const at::Tensor& self) {
  at::Tensor out;
  if (self.is_complex()) out = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return angle_out_ocl(self, out);
}

// conj_physical.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& conj_physical_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec s = with_complex(spec("conj_physical", "a"), "cx_conj(a)");
  return unary(self, out, s, kAnyKind);
}
// conj_physical_(Tensor(a!) self) -> Tensor(a!)  (ATen's own form calls a CPU/CUDA stub)
at::Tensor& conj_physical__ocl(at::Tensor& self) {
  if (!self.is_complex()) return self;
  return conj_physical_out_ocl(self, self);
}

// ---- float math (integers promote to float) ------------------------------------------------

// VEC_EXPR: the same over 8-element vectors for CPU devices (PointwiseSpec::vec_expr), or "".
#define EW_UNARY_FLOAT_VEC(NAME, EXPR, VEC_EXPR)                                                    \
  /* NAME.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) */                                      \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, at::Tensor& out) {                            \
    static const PointwiseSpec s{#NAME, EXPR, at::ScalarType::Undefined, {}, {}, false, VEC_EXPR}; \
    return unary_float(self, out, s);                                                               \
  }
#define EW_UNARY_FLOAT(NAME, EXPR) EW_UNARY_FLOAT_VEC(NAME, EXPR, "")
// With a complex form (PointwiseSpec::cexpr).
#define EW_UNARY_FLOAT_CX(NAME, EXPR, CEXPR)                                          \
  /* NAME.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) */                        \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, at::Tensor& out) {              \
    static const PointwiseSpec s = with_complex(spec(#NAME, EXPR), CEXPR);            \
    return unary_float(self, out, s);                                                 \
  }
EW_UNARY_FLOAT_CX(exp, "exp(a)", "cx_exp(a)")
EW_UNARY_FLOAT(exp2, "exp2(a)")
EW_UNARY_FLOAT(expm1, "expm1(a)")
EW_UNARY_FLOAT_CX(log, "log(a)", "cx_log(a)")
EW_UNARY_FLOAT(log2, "log2(a)")
EW_UNARY_FLOAT(log10, "log10(a)")
EW_UNARY_FLOAT(log1p, "log1p(a)")
EW_UNARY_FLOAT_CX(sqrt, "sqrt(a)", "cx_sqrt(a)")
EW_UNARY_FLOAT(rsqrt, "rsqrt(a)")
EW_UNARY_FLOAT_CX(reciprocal, "CTC(1) / a", "cx_div((CX)((CT)1, (CT)0), a)")
EW_UNARY_FLOAT_CX(sin, "sin(a)", "cx_sin(a)")
EW_UNARY_FLOAT_CX(cos, "cos(a)", "cx_cos(a)")
EW_UNARY_FLOAT(tan, "tan(a)")
EW_UNARY_FLOAT(asin, "asin(a)")
EW_UNARY_FLOAT(acos, "acos(a)")
EW_UNARY_FLOAT(atan, "atan(a)")
EW_UNARY_FLOAT(asinh, "asinh(a)")
EW_UNARY_FLOAT(acosh, "acosh(a)")
EW_UNARY_FLOAT(atanh, "atanh(a)")
EW_UNARY_FLOAT_CX(sinh, "sinh(a)", "cx_sinh(a)")
EW_UNARY_FLOAT_CX(cosh, "cosh(a)", "cx_cosh(a)")
EW_UNARY_FLOAT_CX(tanh, "ew_tanh(a)", "cx_tanh(a)")
EW_UNARY_FLOAT(sigmoid, "ew_sigmoid(a)")
EW_UNARY_FLOAT_VEC(erf, "erf(a)", "erf(a)")
EW_UNARY_FLOAT_VEC(erfc, "erfc(a)", "erfc(a)")
EW_UNARY_FLOAT(erfinv, "ew_erfinv(a)")
EW_UNARY_FLOAT(lgamma, "lgamma(a)")
EW_UNARY_FLOAT(digamma, "ew_digamma(a)")
EW_UNARY_FLOAT(sinc, "ew_sinc(a)")
EW_UNARY_FLOAT(special_entr, "ew_entr(a)")
EW_UNARY_FLOAT(i0, "ew_i0(a)")
EW_UNARY_FLOAT(special_i0e, "ew_i0e(a)")
EW_UNARY_FLOAT(special_i1, "ew_i1(a)")
EW_UNARY_FLOAT(special_i1e, "ew_i1e(a)")
#undef EW_UNARY_FLOAT
#undef EW_UNARY_FLOAT_VEC
#undef EW_UNARY_FLOAT_CX

// atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& atan2_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"atan2", "atan2(a, b)"};
  return binary(self, other, out, s, kAnyKind, {}, /*float_op=*/true);
}
// copysign.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& copysign_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"copysign", "copysign(a, b)"};
  return binary(self, other, out, s, kAnyKind, {}, /*float_op=*/true);
}
// hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& hypot_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"hypot", "hypot(a, b)"};
  return binary(self, other, out, s, kFloating);
}

// xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& xlogy_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"xlogy", "ew_xlogy(a, b)"};
  return binary(self, other, out, s, kAnyKind, {}, /*float_op=*/true);
}
// special_xlog1py.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& special_xlog1py_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"special_xlog1py", "ew_xlog1py(a, b)"};
  return binary(self, other, out, s, kAnyKind, {}, /*float_op=*/true);
}
// logaddexp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)  (floating only, as on the CPU)
at::Tensor& logaddexp_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"logaddexp", "ew_logaddexp(a, b)"};
  return binary(self, other, out, s, kFloating);
}
// logaddexp2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& logaddexp2_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"logaddexp2", "ew_logaddexp2(a, b)"};
  return binary(self, other, out, s, kFloating);
}
// heaviside.out(Tensor self, Tensor values, *, Tensor(a!) out) -> Tensor(a!)
// values where self is 0, else (self > 0); NaN gives 0. Both operands of one dtype, as on the CPU.
at::Tensor& heaviside_out_ocl(const at::Tensor& self, const at::Tensor& values, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes");
  static const PointwiseSpec s{"heaviside", "(a == (CT)0) ? b : (CT)(a > (CT)0)"};
  return binary(self, values, out, s, kAnyKind);
}

// logit: log(x / (1 - x)), with x clamped to [eps, 1 - eps] when eps is given.
at::Tensor& logit_impl(const at::Tensor& self, std::optional<double> eps, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_unary_float_op(out, self);
  if (!out.defined()) out = iter.output();
  if (eps.has_value() && *eps >= 0) {
    // The CPU's clamp order (x < lo first), which differs from min(max()) when eps > 0.5.
    static const PointwiseSpec s{"logit_eps",
                                 "CT lo = s0, hi = CTC(1) - s0; CT x = a < lo ? lo : (a > hi ? hi : a); r0 = log(x / (CTC(1) - x));"};
    pointwise(iter, s, {*eps});
  } else {
    static const PointwiseSpec s{"logit", "log(a / (CTC(1) - a))"};
    pointwise(iter, s);
  }
  return out;
}
// logit(Tensor self, float? eps=None) -> Tensor
at::Tensor logit_ocl(const at::Tensor& self, std::optional<double> eps) {
  at::Tensor out;
  return logit_impl(self, eps, out);
}
// logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& logit_out_ocl(const at::Tensor& self, std::optional<double> eps, at::Tensor& out) {
  return logit_impl(self, eps, out);
}
// logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)
at::Tensor& logit__ocl(at::Tensor& self, std::optional<double> eps) { return logit_impl(self, eps, self); }

// ---- rounding ------------------------------------------------------------------------------

// Rounding ops are the identity on integers (the CPU copies), unsupported on bool.
#define EW_ROUNDING(NAME, EXPR)                                          \
  /* NAME.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) */           \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, at::Tensor& out) {  \
    static const PointwiseSpec fp{#NAME, EXPR}, integer{#NAME "_int", "a"}; \
    check_kind(#NAME, self.scalar_type(), kFloating | kIntegral);                   \
    return unary(self, out, at::isFloatingType(self.scalar_type()) ? fp : integer, kFloating | kIntegral); \
  }
EW_ROUNDING(floor, "floor(a)")
EW_ROUNDING(ceil, "ceil(a)")
EW_ROUNDING(trunc, "trunc(a)")
EW_ROUNDING(round, "rint(a)")
#undef EW_ROUNDING

// round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)
at::Tensor& round_decimals_out_ocl(const at::Tensor& self, int64_t decimals, at::Tensor& out) {
  if (decimals == 0) return round_out_ocl(self, out);
  check_kind("round", self.scalar_type(), kFloating);
  static const PointwiseSpec s{"round_decimals", "ew_round_decimals(a, s0, (int)s1)"};
  // The power of ten in the compute type, as on the CPU: 10^39 is inf in float, so x * inf / inf
  // gives NaN there rather than an overflow error.
  const double tp = in_compute_type(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)),
                                    self.scalar_type());
  return unary(self, out, s, kFloating, {tp, decimals < 0 ? 1 : 0});
}

// frac.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& frac_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec s{"frac", "a - trunc(a)"};
  return unary(self, out, s, kFloating);
}

// ---- min/max/clamp -------------------------------------------------------------------------

// minimum.out / maximum.out / fmin.out / fmax.out (Tensor self, Tensor other, *, Tensor(a!) out)
at::Tensor& minimum_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"minimum", "EW_MINIMUM(a, b)"};
  return binary(self, other, out, s, kAnyKind);
}
at::Tensor& maximum_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"maximum", "EW_MAXIMUM(a, b)"};
  return binary(self, other, out, s, kAnyKind);
}
at::Tensor& fmin_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"fmin", "EW_FMIN(a, b)"};
  return binary(self, other, out, s, kAnyKind);
}
at::Tensor& fmax_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"fmax", "EW_FMAX(a, b)"};
  return binary(self, other, out, s, kAnyKind);
}

// The clamp result type: self's, or promoted with the bounds when self is not floating.
at::ScalarType clamp_result_type(const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                                 const std::optional<c10::Scalar>& hi, const at::Tensor& out) {
  at::ScalarType rt = self.scalar_type();
  if (!at::isFloatingType(rt)) {
    at::native::ResultTypeState st{};
    st = at::native::update_result_type_state(self, st);
    if (lo) st = at::native::update_result_type_state(*lo, st);
    if (hi) st = at::native::update_result_type_state(*hi, st);
    rt = at::native::result_type(st);
    TORCH_CHECK(rt == self.scalar_type() || !out.defined() || !out.is_same(self), "result type ", rt,
                " can't be cast to the desired output type ", self.dtype());
  }
  return rt;
}

// clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_out_ocl(const at::Tensor& self, const std::optional<c10::Scalar>& min,
                          const std::optional<c10::Scalar>& max, at::Tensor& out) {
  TORCH_CHECK(min.has_value() || max.has_value(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  const at::ScalarType rt = clamp_result_type(self, min, max, out);
  TORCH_CHECK(rt != at::kBool, "\"clamp\" not implemented for 'Bool'");
  TORCH_CHECK(!out.defined() || out.scalar_type() == rt, "Found dtype ", out.scalar_type(), " but expected ", rt);
  at::TensorIterator iter;
  iter.build_output_borrowing_argument_owning_unary_op(out, self.to(rt));
  static const PointwiseSpec both{"clamp", "EW_CLAMP(a, s0, s1)"};
  static const PointwiseSpec lo{"clamp_min_s", "EW_CLAMP_MIN(a, s0)"};
  static const PointwiseSpec hi{"clamp_max_s", "EW_CLAMP_MAX(a, s0)"};
  if (min && max) pointwise(iter, both, {*min, *max});
  else if (min) pointwise(iter, lo, {*min});
  else pointwise(iter, hi, {*max});
  return out;
}
// clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_min_out_ocl(const at::Tensor& self, const c10::Scalar& min, at::Tensor& out) {
  return clamp_out_ocl(self, min, std::nullopt, out);
}
// clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_max_out_ocl(const at::Tensor& self, const c10::Scalar& max, at::Tensor& out) {
  return clamp_out_ocl(self, std::nullopt, max, out);
}

// clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_tensor_out_ocl(const at::Tensor& self, const std::optional<at::Tensor>& min,
                                 const std::optional<at::Tensor>& max, at::Tensor& out) {
  const bool has_min = min.has_value() && min->defined(), has_max = max.has_value() && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true).add_output(out).add_const_input(self);
  if (has_min) config.add_const_input(*min);
  if (has_max) config.add_const_input(*max);
  config.allow_cpu_scalars(true).promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true);
  auto iter = config.build();
  TORCH_CHECK(iter.common_dtype() != at::kBool, "\"clamp\" not implemented for 'Bool'");
  // A NaN bound gives NaN; a NaN input propagates through EW_MAX/EW_MIN.
  static const PointwiseSpec both{"clamp_t", "(b != b || c != c) ? (b != b ? b : c) : EW_MIN(EW_MAX(a, b), c)"};
  static const PointwiseSpec lo{"clamp_min_t", "(b != b) ? b : EW_MAX(a, b)"};
  static const PointwiseSpec hi{"clamp_max_t", "(b != b) ? b : EW_MIN(a, b)"};
  pointwise(iter, has_min && has_max ? both : has_min ? lo : hi);
  return out;
}
// clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_min_tensor_out_ocl(const at::Tensor& self, const at::Tensor& min, at::Tensor& out) {
  return clamp_tensor_out_ocl(self, min, std::nullopt, out);
}
// clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& clamp_max_tensor_out_ocl(const at::Tensor& self, const at::Tensor& max, at::Tensor& out) {
  return clamp_tensor_out_ocl(self, std::nullopt, max, out);
}

// ---- lerp / addcmul / addcdiv --------------------------------------------------------------

// The CPU's two-sided form, exact at both ends: from self while |w| < 0.5, else from end.
const PointwiseSpec kLerpScalar{"lerp_s", "(fabs(s0) < CTC(0.5)) ? a + s0 * (b - a) : b - (b - a) * (CTC(1) - s0)"};
const PointwiseSpec kLerpTensor{"lerp_t", "(fabs(c) < CTC(0.5)) ? a + c * (b - a) : b - (b - a) * (CTC(1) - c)"};

// lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& lerp_scalar_out_ocl(const at::Tensor& self, const at::Tensor& end, const c10::Scalar& weight,
                                at::Tensor& out) {
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  at::TensorIterator iter;
  iter.build_binary_op(out, self, end);
  if (!out.defined()) out = iter.output();
  check_kind("lerp_kernel_scalar", iter.common_dtype(), kFloating);
  pointwise(iter, kLerpScalar, {weight});
  return out;
}
// lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& lerp_tensor_out_ocl(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight,
                                at::Tensor& out) {
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  TORCH_CHECK(self.dtype() == weight.dtype(), "expected dtype ", self.dtype(), " for `weight` but got dtype ",
              weight.dtype());
  at::TensorIterator iter;
  iter.build_ternary_op(out, self, end, weight);
  check_kind("lerp_kernel_tensor", iter.common_dtype(), kFloating);
  pointwise(iter, kLerpTensor);
  return out;
}

// addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& addcmul_out_ocl(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                            const c10::Scalar& value, at::Tensor& out) {
  at::TensorIterator iter;
  iter.build_ternary_op(out, self, t1, t2);
  check_kind("addcmul", iter.common_dtype(), kFloating | kIntegral);
  static const PointwiseSpec s{"addcmul", "a + s0 * b * c"};
  pointwise(iter, s, {value});
  return out;
}
// addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& addcdiv_out_ocl(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                            const c10::Scalar& value, at::Tensor& out) {
  TORCH_CHECK(!(at::isIntegralType(t1.scalar_type(), true) && at::isIntegralType(t2.scalar_type(), true)),
              "Integer division with addcdiv is no longer supported, and in a future  ",
              "release addcdiv will perform a true division of tensor1 and tensor2. ",
              "The historic addcdiv behavior can be implemented as ",
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) ",
              "for integer inputs and as ",
              "(input + value * tensor1 / tensor2) for float inputs. ",
              "The future addcdiv behavior is just the latter implementation: ",
              "(input + value * tensor1 / tensor2), for all dtypes.");
  at::TensorIterator iter;
  iter.build_ternary_op(out, self, t1, t2);
  check_kind("addcdiv", iter.common_dtype(), kFloating);
  static const PointwiseSpec s{"addcdiv", "a + s0 * b / c"};
  pointwise(iter, s, {value});
  return out;
}

// ---- selection -----------------------------------------------------------------------------

const PointwiseSpec kWhere = with_complex(spec("where", "a ? b : c", {at::kBool}), "a ? b : c");

void where_impl(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  TORCH_CHECK(cond.scalar_type() == at::kBool || cond.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", cond.scalar_type());
  const at::ScalarType rt = at::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == rt, "Expected out type to be ", rt, " but got ", out.scalar_type());
  // The iterator borrows its inputs: keep the converted operands alive while it runs.
  const at::Tensor self_rt = self.scalar_type() == rt ? self : self.to(rt);
  const at::Tensor other_rt = other.scalar_type() == rt ? other : other.to(rt);
  // One CPU 0-dim operand rides along as a kernel argument; further ones are copied to the
  // device, as CUDA copies every one (where(mask, tensor(0.), tensor(1.)) is common).
  bool cpu_scalar_taken = false;
  auto on_device = [&](const at::Tensor& t) {
    if (!t.device().is_cpu() || t.dim() != 0 || out.device().is_cpu()) return t;
    if (!cpu_scalar_taken) {
      cpu_scalar_taken = true;
      return t;
    }
    return t.to(out.device());
  };
  const at::Tensor cond_d = on_device(cond), self_d = on_device(self_rt), other_d = on_device(other_rt);
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(out)
                  .add_const_input(cond_d)
                  .add_const_input(self_d)
                  .add_const_input(other_d)
                  .allow_cpu_scalars(true)
                  .check_all_same_dtype(false)
                  .build();
  pointwise(iter, kWhere, {}, rt);
}
// where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
at::Tensor where_self_ocl(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  // The device of whichever operand is not a CPU scalar (this kernel runs because one is ocl).
  const at::Device dev = !cond.device().is_cpu() ? cond.device() : !self.device().is_cpu() ? self.device()
                                                                                           : other.device();
  at::Tensor out = at::empty({0}, self.options().dtype(at::result_type(self, other)).device(dev));
  where_impl(cond, self, other, out);
  return out;
}
// where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& where_self_out_ocl(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other,
                               at::Tensor& out) {
  where_impl(cond, self, other, out);
  return out;
}

at::Tensor& masked_fill_impl(at::Tensor& self, const at::Tensor& mask, const c10::Scalar* value,
                             const at::Tensor* value_t) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  at::assert_no_internal_overlap(self);
  at::assert_no_partial_overlap(self, mask);
  if (self.numel() == 0) return self;
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).check_all_same_dtype(false).resize_outputs(false).add_output(self)
      .add_const_input(self).add_const_input(mask);
  if (value_t) config.add_const_input(*value_t);
  auto iter = config.build();
  const at::ScalarType ct = self.scalar_type();
  if (value_t) {
    static const PointwiseSpec s = spec("masked_fill_t", "b ? c : a", {at::ScalarType::Undefined, at::kBool});
    pointwise(iter, s, {}, ct);
  } else {
    static const PointwiseSpec s = spec("masked_fill_s", "b ? s0 : a", {at::ScalarType::Undefined, at::kBool});
    pointwise(iter, s, {*value}, ct);
  }
  return self;
}
// masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
at::Tensor& masked_fill__scalar_ocl(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  return masked_fill_impl(self, mask, &value, nullptr);
}
// masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)
at::Tensor& masked_fill__tensor_ocl(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (value.device().is_cpu()) {
    const c10::Scalar v = value.item();
    return masked_fill_impl(self, mask, &v, nullptr);
  }
  return masked_fill_impl(self, mask, nullptr, &value);
}

// ---- comparisons and logical ops -----------------------------------------------------------

at::Tensor& compare(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, const PointwiseSpec& s) {
  at::TensorIterator iter;
  iter.build_comparison_op(out, a, b);
  pointwise(iter, s);
  return out;
}

#define EW_COMPARISON(NAME, OP, CEXPR)                                                                  \
  const PointwiseSpec k_##NAME = with_complex(spec(#NAME, "a " OP " b", {}, {at::kBool}), CEXPR);       \
  /* NAME.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!) */                      \
  at::Tensor& NAME##_tensor_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) { \
    return compare(self, other, out, k_##NAME);                                                         \
  }                                                                                                     \
  /* NAME.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!) */                      \
  at::Tensor& NAME##_scalar_out_ocl(const at::Tensor& self, const c10::Scalar& other, at::Tensor& out) { \
    return compare(self, at::native::wrapped_scalar_tensor(other), out, k_##NAME);                      \
  }
EW_COMPARISON(eq, "==", "cx_eq(a, b)")
EW_COMPARISON(ne, "!=", "!cx_eq(a, b)")
// The CPU orders no complex values: these raise NotImplementedError for them.
EW_COMPARISON(lt, "<", "")
EW_COMPARISON(le, "<=", "")
EW_COMPARISON(gt, ">", "")
EW_COMPARISON(ge, ">=", "")
#undef EW_COMPARISON

#define EW_LOGICAL(NAME, EXPR)                                                                       \
  /* NAME.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!) */                          \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {     \
    static const PointwiseSpec s = spec(#NAME, EXPR, {}, {at::kBool});                                      \
    return compare(self, other, out, s);                                                             \
  }
EW_LOGICAL(logical_and, "(a != (CT)0) && (b != (CT)0)")
EW_LOGICAL(logical_or, "(a != (CT)0) || (b != (CT)0)")
EW_LOGICAL(logical_xor, "(a != (CT)0) != (b != (CT)0)")
#undef EW_LOGICAL

// logical_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& logical_not_out_ocl(const at::Tensor& self, at::Tensor& out) {
  auto iter = at::TensorIteratorConfig().check_all_same_dtype(false).add_output(out).add_const_input(self).build();
  static const PointwiseSpec s = spec("logical_not", "a == (CT)0", {}, {at::kBool});
  pointwise(iter, s, {}, self.scalar_type());
  return out;
}

// Elementwise predicates with a bool result.
at::Tensor& predicate(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s) {
  at::TensorIterator iter;
  iter.build_borrowing_unary_force_boolean_op(out, self);
  pointwise(iter, s, {}, self.scalar_type());
  return out;
}
// isnan(Tensor self) -> Tensor
at::Tensor isnan_ocl(const at::Tensor& self) {
  static const PointwiseSpec s = with_complex(spec("isnan", "a != a", {}, {at::kBool}), "cx_isnan(a)");
  at::Tensor out = at::empty_like(self, self.options().dtype(at::kBool));
  return predicate(self, out, s);
}
// isposinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& isposinf_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool, "isposinf does not support non-boolean outputs.");
  static const PointwiseSpec fp = spec("isposinf", "a == (CT)INFINITY", {}, {at::kBool});
  static const PointwiseSpec other = spec("false", "0", {}, {at::kBool});
  return predicate(self, out, at::isFloatingType(self.scalar_type()) ? fp : other);
}
// isneginf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& isneginf_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool, "isneginf does not support non-boolean outputs.");
  static const PointwiseSpec fp = spec("isneginf", "a == (CT)(-INFINITY)", {}, {at::kBool});
  static const PointwiseSpec other = spec("false", "0", {}, {at::kBool});
  return predicate(self, out, at::isFloatingType(self.scalar_type()) ? fp : other);
}

// signbit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// The sign bit: set for -0.0 and negative NaNs too; integers below zero; never for unsigned types.
at::Tensor& signbit_out_ocl(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kBool, "signbit does not support non-boolean outputs.");
  static const PointwiseSpec fp = spec("signbit", "signbit(a) != 0", {}, {at::kBool});
  static const PointwiseSpec neg = spec("signbit_int", "a < (CT)0", {}, {at::kBool});
  static const PointwiseSpec other = spec("false", "0", {}, {at::kBool});
  const at::ScalarType t = self.scalar_type();
  return predicate(self, out, at::isFloatingType(t) ? fp : at::isSignedType(t) ? neg : other);
}

// nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, Tensor(a!) out)
at::Tensor& nan_to_num_out_ocl(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                               std::optional<double> neginf, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(), "nan_to_num: dtype of out: ", out.scalar_type(),
              " should be same as input: ", self.scalar_type());
  at::TensorIterator iter;
  iter.build_unary_op(out, self);
  if (!out.defined()) out = iter.output();
  if (!at::isFloatingType(self.scalar_type())) {
    static const PointwiseSpec copy{"nan_to_num_int", "a"};
    pointwise(iter, copy);
    return out;
  }
  double hi = std::numeric_limits<double>::max();
  switch (self.scalar_type()) {
    case at::kFloat: hi = std::numeric_limits<float>::max(); break;
    case at::kHalf: hi = 65504.0; break;
    case at::kBFloat16: hi = static_cast<double>(std::numeric_limits<c10::BFloat16>::max()); break;
    default: break;
  }
  static const PointwiseSpec s{"nan_to_num", "(a != a) ? s0 : (a == (CT)INFINITY ? s1 : (a == (CT)(-INFINITY) ? s2 : a))"};
  // Replacements beyond the dtype's range become +-inf, as the CPU's static_cast makes them.
  const at::ScalarType t = self.scalar_type();
  pointwise(iter, s, {in_compute_type(nan.value_or(0.0), t), in_compute_type(posinf.value_or(hi), t),
                      in_compute_type(neginf.value_or(-hi), t)});
  return out;
}

// ---- bitwise -------------------------------------------------------------------------------

#define EW_BITWISE(NAME, OP)                                                                                \
  /* NAME.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!) */                          \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {            \
    static const PointwiseSpec s{#NAME, "a " OP " b"};                                                      \
    return binary(self, other, out, s, kIntegral | kBoolean);                                                       \
  }
EW_BITWISE(bitwise_and, "&")
EW_BITWISE(bitwise_or, "|")
EW_BITWISE(bitwise_xor, "^")
#undef EW_BITWISE

// bitwise_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& bitwise_not_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec integer{"bitwise_not", "~a"}, boolean{"bitwise_not_bool", "!a"};
  return unary(self, out, self.scalar_type() == at::kBool ? boolean : integer, kIntegral | kBoolean);
}

// bitwise_left_shift.Tensor_out / bitwise_right_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
at::Tensor& bitwise_left_shift_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"lshift", "ew_shl(a, b)"};
  return binary(self, other, out, s, kIntegral);
}
at::Tensor& bitwise_right_shift_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"rshift", "ew_shr(a, b)"};
  return binary(self, other, out, s, kIntegral);
}
// __lshift__.Tensor / __rshift__.Tensor(Tensor self, Tensor other) -> Tensor
at::Tensor lshift_tensor_ocl(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out;
  return bitwise_left_shift_out_ocl(self, other, out);
}
at::Tensor rshift_tensor_ocl(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out;
  return bitwise_right_shift_out_ocl(self, other, out);
}
// __lshift__.Scalar / __rshift__.Scalar(Tensor self, Scalar other) -> Tensor
at::Tensor lshift_scalar_ocl(const at::Tensor& self, const c10::Scalar& other) {
  return lshift_tensor_ocl(self, at::native::wrapped_scalar_tensor(other));
}
at::Tensor rshift_scalar_ocl(const at::Tensor& self, const c10::Scalar& other) {
  return rshift_tensor_ocl(self, at::native::wrapped_scalar_tensor(other));
}
// __ilshift__.Tensor / __irshift__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
at::Tensor& ilshift_tensor_ocl(at::Tensor& self, const at::Tensor& other) {
  return bitwise_left_shift_out_ocl(self, other, self);
}
at::Tensor& irshift_tensor_ocl(at::Tensor& self, const at::Tensor& other) {
  return bitwise_right_shift_out_ocl(self, other, self);
}
// __ilshift__.Scalar / __irshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
at::Tensor& ilshift_scalar_ocl(at::Tensor& self, const c10::Scalar& other) {
  return bitwise_left_shift_out_ocl(self, at::native::wrapped_scalar_tensor(other), self);
}
at::Tensor& irshift_scalar_ocl(at::Tensor& self, const c10::Scalar& other) {
  return bitwise_right_shift_out_ocl(self, at::native::wrapped_scalar_tensor(other), self);
}

// ---- cross product -------------------------------------------------------------------------

// linalg_cross.out(Tensor self, Tensor other, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)
// Component i of the product is a_j b_k - a_k b_j ((i, j, k) cyclic): one pointwise launch per
// component over the broadcast inputs' slices along dim.
at::Tensor& linalg_cross_out_ocl(const at::Tensor& self, const at::Tensor& other, int64_t dim, at::Tensor& out) {
  OutMeta<at::meta::structured_linalg_cross> meta(out);
  meta.meta(self, other, dim);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(other.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(), " but found ",
              other.scalar_type());
  check_kind("cross", self.scalar_type(), kFloating | kIntegral);
  if (out.numel() == 0) return out;
  const at::Tensor a = self.expand(out.sizes()), b = other.expand(out.sizes());
  // As on the CPU, an out sharing memory with an input raises.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, other);
  static const PointwiseSpec plain{"cross", "a * b - c * d"},
      half{"cross_half", "round_to_half(a * b) - round_to_half(c * d)"},
      bf16{"cross_bf16", "round_to_bf16(a * b) - round_to_bf16(c * d)"};
  const PointwiseSpec& s = self.scalar_type() == at::kHalf ? half : self.scalar_type() == at::kBFloat16 ? bf16 : plain;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    auto iter = at::TensorIteratorConfig()
                    .set_check_mem_overlap(false)
                    .add_owned_output(out.select(dim, i))
                    .add_owned_const_input(a.select(dim, j))
                    .add_owned_const_input(b.select(dim, k))
                    .add_owned_const_input(a.select(dim, k))
                    .add_owned_const_input(b.select(dim, j))
                    .build();
    pointwise(iter, s);
  }
  return out;
}

// ---- gcd, nextafter, frexp, polygamma ------------------------------------------------------

// out = s(self, other) over integers only, as the CPU's kernel `cpu_name` (its error names it).
at::Tensor& integer_binary(const at::Tensor& self, const at::Tensor& other, at::Tensor& out, const PointwiseSpec& s,
                           const char* cpu_name) {
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  check_kind(cpu_name, iter.common_dtype(), kIntegral);
  pointwise(iter, s);
  return out;
}

// Euclid's algorithm on |a|, |b|: leaves gcd(a, b) in y (gcd(0, 0) = 0).
#define EW_EUCLID                                                                        \
  "CT x = a < (CT)0 ? (CT)(-a) : a; CT y = b < (CT)0 ? (CT)(-b) : b; "                   \
  "while (x != (CT)0) { CT t = x; x = (CT)(y % x); y = t; } "

// gcd.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& gcd_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"gcd", EW_EUCLID "r0 = y;"};
  return integer_binary(self, other, out, s, "gcd_cpu");
}

// lcm.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
// |a / gcd(a, b) * b| (0 where the gcd is 0), formed in 64 bits and then narrowed, as the CPU's
// int-promoted arithmetic does for the narrow types.
at::Tensor& lcm_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s{"lcm", EW_EUCLID
                               "long l = y == (CT)0 ? 0L : (long)(a / y) * (long)b; r0 = (CT)(l < 0L ? -l : l);"};
  return integer_binary(self, other, out, s, "lcm_cpu");
}

// nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
// float16 / bfloat16 step their own 16-bit patterns (the compute type is float).
at::Tensor& nextafter_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec plain{"nextafter", "nextafter(a, b)"}, half{"nextafter_half", "ew_nextafter_half(a, b)"},
      bf16{"nextafter_bf16", "ew_nextafter_bf16(a, b)"};
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  const at::ScalarType t = iter.common_dtype();
  check_kind("nextafter_cpu", t, kFloating);
  pointwise(iter, t == at::kHalf ? half : t == at::kBFloat16 ? bf16 : plain);
  return out;
}

// frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) -> (Tensor(a!) mantissa, Tensor(b!) exponent)
std::tuple<at::Tensor&, at::Tensor&> frexp_out_ocl(const at::Tensor& self, at::Tensor& mantissa,
                                                   at::Tensor& exponent) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.dtype() == self.dtype(), "torch.frexp() expects mantissa to have dtype ", self.dtype(),
              " but got ", mantissa.dtype());
  TORCH_CHECK(exponent.dtype() == at::kInt, "torch.frexp() expects exponent to have int dtype but got ",
              exponent.dtype());
  static const PointwiseSpec s = spec("frexp", "int ex; r0 = frexp(a, &ex); r1 = ex;", {},
                                      {at::ScalarType::Undefined, at::kInt});
  auto iter = at::TensorIteratorConfig()
                  .add_output(mantissa)
                  .add_output(exponent)
                  .add_const_input(self)
                  .check_all_same_dtype(false)
                  .set_check_mem_overlap(true)
                  .build();
  pointwise(iter, s, {}, compute_type_for(self.scalar_type()));
  return std::forward_as_tuple(mantissa, exponent);
}

// polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// n = 0 is digamma, n = 1 trigamma, larger n (-1)^(n+1) n! zeta(n + 1, x) (the CPU's forms).
at::Tensor& polygamma_out_ocl(int64_t n, const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  static const PointwiseSpec p0{"polygamma_0", "ew_digamma(a)"}, p1{"polygamma_1", "ew_trigamma(a)"},
      pn{"polygamma_n", "ew_polygamma(a, s0)"};
  if (n == 0) return unary_float(self, out, p0);
  if (n == 1) return unary_float(self, out, p1);
  return unary_float(self, out, pn, {c10::Scalar(static_cast<double>(n))});
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.out", add_out_ocl);
  OCL_IMPL(m, "linalg_cross.out", linalg_cross_out_ocl);
  OCL_IMPL(m, "gcd.out", gcd_out_ocl);
  OCL_IMPL(m, "lcm.out", lcm_out_ocl);
  OCL_IMPL(m, "nextafter.out", nextafter_out_ocl);
  OCL_IMPL(m, "frexp.Tensor_out", frexp_out_ocl);
  OCL_IMPL(m, "polygamma.out", polygamma_out_ocl);
  OCL_IMPL(m, "i0.out", i0_out_ocl);
  OCL_IMPL(m, "special_i0e.out", special_i0e_out_ocl);
  OCL_IMPL(m, "special_i1.out", special_i1_out_ocl);
  OCL_IMPL(m, "special_i1e.out", special_i1e_out_ocl);
  m.impl("sub.out", sub_out_ocl);
  m.impl("rsub.Tensor", rsub_tensor_ocl);
  m.impl("mul.out", mul_out_ocl);
  m.impl("div.out", div_out_ocl);
  OCL_IMPL(m, "div.out_mode", div_out_mode_ocl);
  OCL_IMPL(m, "floor_divide", floor_divide_ocl);
  OCL_IMPL(m, "floor_divide.out", floor_divide_out_ocl);
  OCL_IMPL(m, "floor_divide_.Tensor", floor_divide__ocl);
  OCL_IMPL(m, "fmod.Tensor_out", fmod_out_ocl);
  OCL_IMPL(m, "remainder.Tensor_out", remainder_out_ocl);
  OCL_IMPL(m, "remainder.Scalar_Tensor", remainder_scalar_tensor_ocl);
  OCL_IMPL(m, "pow.Tensor_Tensor_out", pow_tensor_tensor_out_ocl);
  OCL_IMPL(m, "pow.Tensor_Scalar_out", pow_tensor_scalar_out_ocl);
  OCL_IMPL(m, "pow.Scalar_out", pow_scalar_out_ocl);
  m.impl("neg.out", neg_out_ocl);
  m.impl("abs.out", abs_out_ocl);
  OCL_IMPL(m, "sign.out", sign_out_ocl);
  m.impl("sgn.out", sgn_out_ocl);
  m.impl("angle", angle_ocl);
  m.impl("angle.out", angle_out_ocl);
  m.impl("conj_physical.out", conj_physical_out_ocl);
  m.impl("conj_physical_", conj_physical__ocl);
  m.impl("complex.out", complex_out_ocl);
  m.impl("polar.out", polar_out_ocl);
  m.impl("exp.out", exp_out_ocl);
  OCL_IMPL(m, "exp2.out", exp2_out_ocl);
  OCL_IMPL(m, "expm1.out", expm1_out_ocl);
  m.impl("log.out", log_out_ocl);
  OCL_IMPL(m, "log2.out", log2_out_ocl);
  OCL_IMPL(m, "log10.out", log10_out_ocl);
  OCL_IMPL(m, "log1p.out", log1p_out_ocl);
  m.impl("sqrt.out", sqrt_out_ocl);
  OCL_IMPL(m, "rsqrt.out", rsqrt_out_ocl);
  m.impl("reciprocal.out", reciprocal_out_ocl);
  m.impl("sin.out", sin_out_ocl);
  m.impl("cos.out", cos_out_ocl);
  OCL_IMPL(m, "tan.out", tan_out_ocl);
  OCL_IMPL(m, "asin.out", asin_out_ocl);
  OCL_IMPL(m, "acos.out", acos_out_ocl);
  OCL_IMPL(m, "atan.out", atan_out_ocl);
  OCL_IMPL(m, "asinh.out", asinh_out_ocl);
  OCL_IMPL(m, "acosh.out", acosh_out_ocl);
  OCL_IMPL(m, "atanh.out", atanh_out_ocl);
  m.impl("sinh.out", sinh_out_ocl);
  m.impl("cosh.out", cosh_out_ocl);
  m.impl("tanh.out", tanh_out_ocl);
  OCL_IMPL(m, "sigmoid.out", sigmoid_out_ocl);
  OCL_IMPL(m, "erf.out", erf_out_ocl);
  OCL_IMPL(m, "erfc.out", erfc_out_ocl);
  OCL_IMPL(m, "erfinv.out", erfinv_out_ocl);
  OCL_IMPL(m, "lgamma.out", lgamma_out_ocl);
  OCL_IMPL(m, "digamma.out", digamma_out_ocl);
  OCL_IMPL(m, "sinc.out", sinc_out_ocl);
  OCL_IMPL(m, "special_entr.out", special_entr_out_ocl);
  OCL_IMPL(m, "atan2.out", atan2_out_ocl);
  OCL_IMPL(m, "copysign.out", copysign_out_ocl);
  OCL_IMPL(m, "hypot.out", hypot_out_ocl);
  OCL_IMPL(m, "xlogy.OutTensor", xlogy_out_ocl);
  OCL_IMPL(m, "special_xlog1py.out", special_xlog1py_out_ocl);
  OCL_IMPL(m, "logaddexp.out", logaddexp_out_ocl);
  OCL_IMPL(m, "logaddexp2.out", logaddexp2_out_ocl);
  OCL_IMPL(m, "heaviside.out", heaviside_out_ocl);
  OCL_IMPL(m, "logit", logit_ocl);
  OCL_IMPL(m, "logit.out", logit_out_ocl);
  OCL_IMPL(m, "logit_", logit__ocl);
  OCL_IMPL(m, "floor.out", floor_out_ocl);
  OCL_IMPL(m, "ceil.out", ceil_out_ocl);
  OCL_IMPL(m, "trunc.out", trunc_out_ocl);
  OCL_IMPL(m, "round.out", round_out_ocl);
  OCL_IMPL(m, "round.decimals_out", round_decimals_out_ocl);
  OCL_IMPL(m, "frac.out", frac_out_ocl);
  OCL_IMPL(m, "minimum.out", minimum_out_ocl);
  OCL_IMPL(m, "maximum.out", maximum_out_ocl);
  OCL_IMPL(m, "fmin.out", fmin_out_ocl);
  OCL_IMPL(m, "fmax.out", fmax_out_ocl);
  OCL_IMPL(m, "clamp.out", clamp_out_ocl);
  OCL_IMPL(m, "clamp_min.out", clamp_min_out_ocl);
  OCL_IMPL(m, "clamp_max.out", clamp_max_out_ocl);
  OCL_IMPL(m, "clamp.Tensor_out", clamp_tensor_out_ocl);
  OCL_IMPL(m, "clamp_min.Tensor_out", clamp_min_tensor_out_ocl);
  OCL_IMPL(m, "clamp_max.Tensor_out", clamp_max_tensor_out_ocl);
  OCL_IMPL(m, "lerp.Scalar_out", lerp_scalar_out_ocl);
  OCL_IMPL(m, "lerp.Tensor_out", lerp_tensor_out_ocl);
  OCL_IMPL(m, "addcmul.out", addcmul_out_ocl);
  OCL_IMPL(m, "addcdiv.out", addcdiv_out_ocl);
  m.impl("where.self", where_self_ocl);
  m.impl("where.self_out", where_self_out_ocl);
  OCL_IMPL(m, "masked_fill_.Scalar", masked_fill__scalar_ocl);
  OCL_IMPL(m, "masked_fill_.Tensor", masked_fill__tensor_ocl);
  m.impl("eq.Tensor_out", eq_tensor_out_ocl);
  m.impl("eq.Scalar_out", eq_scalar_out_ocl);
  m.impl("ne.Tensor_out", ne_tensor_out_ocl);
  m.impl("ne.Scalar_out", ne_scalar_out_ocl);
  OCL_IMPL(m, "lt.Tensor_out", lt_tensor_out_ocl);
  OCL_IMPL(m, "lt.Scalar_out", lt_scalar_out_ocl);
  OCL_IMPL(m, "le.Tensor_out", le_tensor_out_ocl);
  OCL_IMPL(m, "le.Scalar_out", le_scalar_out_ocl);
  OCL_IMPL(m, "gt.Tensor_out", gt_tensor_out_ocl);
  OCL_IMPL(m, "gt.Scalar_out", gt_scalar_out_ocl);
  OCL_IMPL(m, "ge.Tensor_out", ge_tensor_out_ocl);
  OCL_IMPL(m, "ge.Scalar_out", ge_scalar_out_ocl);
  OCL_IMPL(m, "logical_and.out", logical_and_out_ocl);
  OCL_IMPL(m, "logical_or.out", logical_or_out_ocl);
  OCL_IMPL(m, "logical_xor.out", logical_xor_out_ocl);
  OCL_IMPL(m, "logical_not.out", logical_not_out_ocl);
  m.impl("isnan", isnan_ocl);
  OCL_IMPL(m, "isposinf.out", isposinf_out_ocl);
  OCL_IMPL(m, "isneginf.out", isneginf_out_ocl);
  OCL_IMPL(m, "signbit.out", signbit_out_ocl);
  OCL_IMPL(m, "nan_to_num.out", nan_to_num_out_ocl);
  OCL_IMPL(m, "bitwise_and.Tensor_out", bitwise_and_out_ocl);
  OCL_IMPL(m, "bitwise_or.Tensor_out", bitwise_or_out_ocl);
  OCL_IMPL(m, "bitwise_xor.Tensor_out", bitwise_xor_out_ocl);
  OCL_IMPL(m, "bitwise_not.out", bitwise_not_out_ocl);
  OCL_IMPL(m, "bitwise_left_shift.Tensor_out", bitwise_left_shift_out_ocl);
  OCL_IMPL(m, "bitwise_right_shift.Tensor_out", bitwise_right_shift_out_ocl);
  OCL_IMPL(m, "__lshift__.Tensor", lshift_tensor_ocl);
  OCL_IMPL(m, "__lshift__.Scalar", lshift_scalar_ocl);
  OCL_IMPL(m, "__rshift__.Tensor", rshift_tensor_ocl);
  OCL_IMPL(m, "__rshift__.Scalar", rshift_scalar_ocl);
  OCL_IMPL(m, "__ilshift__.Tensor", ilshift_tensor_ocl);
  OCL_IMPL(m, "__ilshift__.Scalar", ilshift_scalar_ocl);
  OCL_IMPL(m, "__irshift__.Tensor", irshift_tensor_ocl);
  OCL_IMPL(m, "__irshift__.Scalar", irshift_scalar_ocl);
}

}  // namespace torch_ocl
