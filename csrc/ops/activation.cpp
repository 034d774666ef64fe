// Activation functions and their backward ops, through the generated pointwise engine (see
// elementwise.h). The forward formulas and derivatives follow ATen's CPU kernels so that
// results agree at float tolerance; GELU/mish/silu helpers live in kernels/elementwise.cl.
#include "../aten/Routing.h"
#include "elementwise.h"
#include <ATen/Dispatch.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>
#include <limits>

namespace torch_ocl {
using namespace ew;
namespace {

// The functional form of a backward op f(grad, self) without an out= overload: ATen's binary
// iterator allocates the result.
at::Tensor binary_backward(const at::Tensor& grad, const at::Tensor& self, const PointwiseSpec& s, unsigned kinds,
                           const char* op, c10::ArrayRef<c10::Scalar> scalars = {}) {
  at::Tensor out;
  at::TensorIterator iter;
  iter.build_binary_op(out, grad, self);
  check_kind(op, iter.common_dtype(), kinds);
  pointwise(iter, s, scalars);
  return iter.output();
}

// relu(Tensor self) -> Tensor
at::Tensor relu_ocl(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  static const PointwiseSpec s{"relu", "(a > (CT)0 || a != a) ? a : (CT)0"};
  at::Tensor out;
  at::TensorIterator iter;
  iter.build_unary_op(out, self);
  if (!out.defined()) out = iter.output();
  pointwise(iter, s);
  return iter.output();
}
// relu_(Tensor(a!) self) -> Tensor(a!)
at::Tensor& relu__ocl(at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  static const PointwiseSpec s{"relu", "(a > (CT)0 || a != a) ? a : (CT)0"};
  return unary(self, self, s, kFloating | kIntegral);
}

// leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& leaky_relu_out_ocl(const at::Tensor& self, const c10::Scalar& negative_slope, at::Tensor& out) {
  static const PointwiseSpec s{"leaky_relu", "a > (CT)0 ? a : a * s0"};
  check_kind("leaky_relu_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating, {negative_slope});
}

// elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& elu_out_ocl(const at::Tensor& self, const c10::Scalar& alpha, const c10::Scalar& scale,
                        const c10::Scalar& input_scale, at::Tensor& out) {
  static const PointwiseSpec s{"elu", "a <= (CT)0 ? expm1(a * s2) * (s0 * s1) : a * s1"};
  check_kind("elu_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating, {alpha, scale, input_scale});
}

// silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& silu_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec s{"silu", "a / (CTC(1) + exp(-a))"};
  check_kind("silu_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating);
}

// mish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& mish_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec s{"mish", "ew_mish(a)"};
  check_kind("mish_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating);
}

// hardtanh is clamp(self, min_val, max_val) in self's dtype.
const PointwiseSpec kHardtanh{"hardtanh", "EW_CLAMP(a, s0, s1)"};
at::Tensor& hardtanh_impl(const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  return unary(self, out, kHardtanh, kFloating | kIntegral, {lo, hi});
}
// hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
at::Tensor hardtanh_ocl(const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi) {
  at::Tensor out;
  TORCH_CHECK(self.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  at::TensorIterator iter;
  iter.build_unary_op(out, self);
  if (!out.defined()) out = iter.output();
  pointwise(iter, kHardtanh, {lo, hi});
  return iter.output();
}
// hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& hardtanh_out_ocl(const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi, at::Tensor& out) {
  return hardtanh_impl(self, lo, hi, out);
}
// hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
at::Tensor& hardtanh__ocl(at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi) {
  return hardtanh_impl(self, lo, hi, self);
}

// softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& softplus_out_ocl(const at::Tensor& self, const c10::Scalar& beta, const c10::Scalar& threshold,
                             at::Tensor& out) {
  static const PointwiseSpec s{"softplus", "a * s0 > s1 ? a : log1p(exp(a * s0)) / s0"};
  check_kind("softplus_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating, {beta, threshold});
}

// hardsigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& hardsigmoid_out_ocl(const at::Tensor& self, at::Tensor& out) {
  static const PointwiseSpec s{"hardsigmoid", "EW_CLAMP(a + CTC(3), (CT)0, CTC(6)) / CTC(6)"};
  check_kind("hardsigmoid_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating);
}

// hardswish is not a structured op: the functional and in-place forms are registered too.
const PointwiseSpec kHardswish{"hardswish", "a * EW_CLAMP(a + CTC(3), (CT)0, CTC(6)) / CTC(6)"};
// hardswish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& hardswish_out_ocl(const at::Tensor& self, at::Tensor& out) {
  check_kind("hardswish_cpu", self.scalar_type(), kFloating);
  return unary(self, out, kHardswish, kFloating);
}
// hardswish(Tensor self) -> Tensor
at::Tensor hardswish_ocl(const at::Tensor& self) {
  at::Tensor out = at::empty_like(self);
  return hardswish_out_ocl(self, out);
}
// hardswish_(Tensor(a!) self) -> Tensor(a!)
at::Tensor& hardswish__ocl(at::Tensor& self) { return hardswish_out_ocl(self, self); }

// The shrinks' lambd as ATen's kernels use it: in the input's floating dtype (a half input
// compares with half(0.3), not with 0.3), within [0, the dtype's largest value].
c10::Scalar lambd_in(const c10::Scalar& lambd, at::ScalarType t) {
  c10::Scalar r;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "shrink", [&] {
    const double l = lambd.to<double>(), hi = static_cast<double>(std::numeric_limits<scalar_t>::max());
    TORCH_CHECK(l >= 0 && l <= hi, "lambda must be in range [0, ", hi, "] for input dtype ", t, ", but found ", l);
    r = static_cast<double>(lambd.to<scalar_t>());
  });
  return r;
}
// softshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& softshrink_out_ocl(const at::Tensor& self, const c10::Scalar& lambd, at::Tensor& out) {
  // NaN falls through both comparisons to a * 0 (NaN), as on the CPU.
  static const PointwiseSpec s{"softshrink", "a > s0 ? a - s0 : (a < -s0 ? a + s0 : a * (CT)0)"};
  check_kind("softshrink_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating, {lambd_in(lambd, self.scalar_type())});
}
// hardshrink.out(Tensor self, Scalar lambd=0.5, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& hardshrink_out_ocl(const at::Tensor& self, const c10::Scalar& lambd, at::Tensor& out) {
  static const PointwiseSpec s{"hardshrink", "(a >= -s0 && a <= s0) ? (CT)0 : a"};
  check_kind("hardshrink_cpu", self.scalar_type(), kFloating);
  return unary(self, out, s, kFloating, {lambd_in(lambd, self.scalar_type())});
}

// log_sigmoid = log_sigmoid_forward's output, min(x, 0) - log1p(exp(-|x|)). The CPU also fills a
// buffer with exp(-|x|) for its backward; like CUDA, ocl leaves it empty and the backward
// recomputes it from the input.
const PointwiseSpec kLogSigmoid{"log_sigmoid", "(a < (CT)0 ? a : (CT)0) - log1p(exp(-fabs(a)))"};
// log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out_ocl(const at::Tensor& self, at::Tensor& output,
                                                                 at::Tensor& buffer) {
  check_kind("log_sigmoid_forward", self.scalar_type(), kFloating);
  buffer.resize_({0});
  unary(self, output, kLogSigmoid, kFloating);
  return std::forward_as_tuple(output, buffer);
}
// log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward_ocl(const at::Tensor& self) {
  at::Tensor output = at::empty_like(self), buffer = at::empty({0}, self.options());
  log_sigmoid_forward_out_ocl(self, output, buffer);
  return std::make_tuple(output, buffer);
}

// glu = a * sigmoid(b) for the halves a, b of self along dim. Returns the half length; wraps dim.
int64_t glu_half(const at::Tensor& self, int64_t& dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(dim);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", dim, " is size ", n);
  return n / 2;
}
// glu.out(Tensor self, int dim=-1, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& glu_out_ocl(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  static const PointwiseSpec s{"glu", "a * (CTC(1) / (CTC(1) + exp(-b)))"};
  const int64_t h = glu_half(self, dim);
  check_kind("glu_cpu", self.scalar_type(), kFloating);
  return binary(self.narrow(dim, 0, h), self.narrow(dim, h, h), out, s, kFloating);
}

bool gelu_is_tanh(c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return approximate == "tanh";
}

// gelu.out(Tensor self, *, str approximate="none", Tensor(a!) out) -> Tensor(a!)
at::Tensor& gelu_out_ocl(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  static const PointwiseSpec exact{"gelu", "ew_gelu(a)", at::ScalarType::Undefined, {}, {}, false, "ew_gelu8(a)"},
      tanh_form{"gelu_tanh", "ew_gelu_tanh(a)"};
  check_kind("GeluKernelImpl", self.scalar_type(), kFloating);
  return unary(self, out, gelu_is_tanh(approximate) ? tanh_form : exact, kFloating);
}

// threshold.out(Tensor self, Scalar threshold, Scalar value, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& threshold_out_ocl(const at::Tensor& self, const c10::Scalar& threshold, const c10::Scalar& value,
                              at::Tensor& out) {
  static const PointwiseSpec s{"threshold", "a <= s0 ? s1 : a"};
  return unary(self, out, s, kFloating | kIntegral, {threshold, value});
}

// ---- backward ops (gradient first) ---------------------------------------------------------

// threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, Tensor(a!) grad_input)
at::Tensor& threshold_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& threshold,
                                       at::Tensor& grad_input) {
  static const PointwiseSpec s{"threshold_bwd", "a <= s0 ? (CT)0 : b"};
  return binary(self, grad, grad_input, s, kFloating | kIntegral, {threshold});
}

// sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input)
at::Tensor& sigmoid_backward_out_ocl(const at::Tensor& grad, const at::Tensor& output, at::Tensor& grad_input) {
  static const PointwiseSpec s{"sigmoid_bwd", "a * (CTC(1) - b) * b"};
  return binary(grad, output, grad_input, s, kFloating);
}

// tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input)
at::Tensor& tanh_backward_out_ocl(const at::Tensor& grad, const at::Tensor& output, at::Tensor& grad_input) {
  static const PointwiseSpec s{"tanh_bwd", "a * (CTC(1) - b * b)"};
  return binary(grad, output, grad_input, s, kFloating);
}

// silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input)
at::Tensor& silu_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input) {
  static const PointwiseSpec s{"silu_bwd", "ew_silu_bwd(a, b)"};
  return binary(grad, self, grad_input, s, kFloating);
}

// gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate="none", Tensor(a!) grad_input)
at::Tensor& gelu_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate,
                                  at::Tensor& grad_input) {
  static const PointwiseSpec exact{"gelu_bwd", "ew_gelu_bwd(a, b)", at::ScalarType::Undefined, {}, {}, false, "ew_gelu_bwd8(a, b)"},
      tanh_form{"gelu_tanh_bwd", "ew_gelu_tanh_bwd(a, b)"};
  return binary(grad, self, grad_input, gelu_is_tanh(approximate) ? tanh_form : exact, kFloating);
}

// leaky_relu_backward.grad_input(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result, *,
//                                Tensor(a!) grad_input)
at::Tensor& leaky_relu_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& slope,
                                        bool self_is_result, at::Tensor& grad_input) {
  TORCH_CHECK(!self_is_result || slope.to<double>() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, "
              "please call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
              "do require supporting in-place leakRelu backward calculation with negative slope");
  static const PointwiseSpec s{"leaky_relu_bwd", "a > (CT)0 ? b : b * s0"};
  return binary(self, grad, grad_input, s, kFloating, {slope});
}

// elu_backward.grad_input(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result,
//                         Tensor self_or_result, *, Tensor(a!) grad_input)
at::Tensor& elu_backward_out_ocl(const at::Tensor& grad, const c10::Scalar& alpha, const c10::Scalar& scale,
                                 const c10::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result,
                                 at::Tensor& grad_input) {
  TORCH_CHECK(!is_result || alpha.to<double>() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, "
              "please call out-of-place version instead.");
  // s0 = alpha, s1 = scale, s2 = input_scale; b is the input or (is_result) the output.
  static const PointwiseSpec from_result{"elu_bwd_result", "b <= (CT)0 ? a * s2 * (b + s0 * s1) : a * s1"};
  static const PointwiseSpec from_input{"elu_bwd", "b <= (CT)0 ? a * s2 * (s0 * s1) * exp(b * s2) : a * s1"};
  return binary(grad, self_or_result, grad_input, is_result ? from_result : from_input, kFloating,
                {alpha, scale, input_scale});
}

// mish_backward(Tensor grad_output, Tensor self) -> Tensor
at::Tensor mish_backward_ocl(const at::Tensor& grad, const at::Tensor& self) {
  static const PointwiseSpec s{"mish_bwd", "ew_mish_bwd(a, b)"};
  return binary_backward(grad, self, s, kFloating, "mish_backward");
}

const PointwiseSpec kHardtanhBwd{"hardtanh_bwd", "(b <= s0 || b >= s1) ? (CT)0 : a"};
// hardtanh_backward.grad_input(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val, *,
//                              Tensor(a!) grad_input)
at::Tensor& hardtanh_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lo,
                                      const c10::Scalar& hi, at::Tensor& grad_input) {
  return binary(grad, self, grad_input, kHardtanhBwd, kFloating | kIntegral, {lo, hi});
}
// hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor
at::Tensor hardtanh_backward_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lo,
                                 const c10::Scalar& hi) {
  return binary_backward(grad, self, kHardtanhBwd, kFloating | kIntegral, "hardtanh_backward", {lo, hi});
}

// softplus_backward.grad_input(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold, *,
//                              Tensor(a!) grad_input)
at::Tensor& softplus_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& beta,
                                      const c10::Scalar& threshold, at::Tensor& grad_input) {
  static const PointwiseSpec s{"softplus_bwd", "CT z = exp(b * s0); r0 = (b * s0 > s1) ? a : a * z / (z + CTC(1));"};
  return binary(grad, self, grad_input, s, kFloating, {beta, threshold});
}

// hardsigmoid_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input)
at::Tensor& hardsigmoid_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input) {
  static const PointwiseSpec s{"hardsigmoid_bwd", "(b > CTC(-3) && b < CTC(3)) ? a / CTC(6) : (CT)0"};
  return binary(grad, self, grad_input, s, kFloating);
}

// hardswish_backward(Tensor grad_output, Tensor self) -> Tensor
at::Tensor hardswish_backward_ocl(const at::Tensor& grad, const at::Tensor& self) {
  static const PointwiseSpec s{"hardswish_bwd",
                               "b <= CTC(-3) ? (CT)0 : (b < CTC(3) ? a * (b / CTC(3) + CTC(0.5)) : a)"};
  return binary_backward(grad, self, s, kFloating, "hardswish_backward");
}

// The two shrinks share their backward: the gradient passes outside [-lambd, lambd].
const PointwiseSpec kShrinkBwd{"shrink_bwd", "(b >= -s0 && b <= s0) ? (CT)0 : a"};
// softshrink_backward.grad_input(Tensor grad_output, Tensor self, Scalar lambd, *, Tensor(a!) grad_input)
at::Tensor& softshrink_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lambd,
                                        at::Tensor& grad_input) {
  check_kind("softshrink_backward_cpu", self.scalar_type(), kFloating);
  return binary(grad, self, grad_input, kShrinkBwd, kFloating, {lambd_in(lambd, self.scalar_type())});
}
// hardshrink_backward.grad_input(Tensor grad_out, Tensor self, Scalar lambd, *, Tensor(a!) grad_input)
at::Tensor& hardshrink_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lambd,
                                        at::Tensor& grad_input) {
  check_kind("hardshrink_backward_cpu", self.scalar_type(), kFloating);
  return binary(grad, self, grad_input, kShrinkBwd, kFloating, {lambd_in(lambd, self.scalar_type())});
}

// d/dx log_sigmoid = 1 - sigmoid(x), computed as max_deriv - sign * z / (1 + z) with z = exp(-|x|)
// (ATen's form: no overflow for large |x|). `buffer` is not read (see log_sigmoid_forward).
const PointwiseSpec kLogSigmoidBwd{
    "log_sigmoid_bwd", "CT z = exp(-fabs(b)); r0 = a * (b < (CT)0 ? CTC(1) - z / (CTC(1) + z) : z / (CTC(1) + z));"};
// log_sigmoid_backward.grad_input(Tensor grad_output, Tensor self, Tensor buffer, *, Tensor(a!) grad_input)
at::Tensor& log_sigmoid_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& buffer,
                                         at::Tensor& grad_input) {
  (void)buffer;
  return binary(grad, self, grad_input, kLogSigmoidBwd, kFloating);
}
// log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor
at::Tensor log_sigmoid_backward_ocl(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& buffer) {
  (void)buffer;
  return binary_backward(grad, self, kLogSigmoidBwd, kFloating, "log_sigmoid_backward");
}

// glu_backward.grad_input(Tensor grad_output, Tensor self, int dim, *, Tensor(a!) grad_input) -> Tensor(a!)
// d/da = sigmoid(b) * g into the first half of grad_input, d/db = (1 - sigmoid(b)) sigmoid(b) a g
// into the second.
at::Tensor& glu_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, int64_t dim, at::Tensor& grad_input) {
  static const PointwiseSpec da{"glu_bwd_a", "b * (CTC(1) / (CTC(1) + exp(-a)))"},
      db{"glu_bwd_b", "CT s = CTC(1) / (CTC(1) + exp(-b)); r0 = (CTC(1) - s) * s * a * c;"};
  const int64_t h = glu_half(self, dim);
  at::native::resize_output(grad_input, self.sizes());
  const at::Tensor a = self.narrow(dim, 0, h), b = self.narrow(dim, h, h);
  // The halves are temporaries: the iterators own them.
  auto build = [&](const at::Tensor& out, std::initializer_list<at::Tensor> inputs) {
    at::TensorIteratorConfig cfg;
    cfg.set_check_mem_overlap(true).add_owned_output(out);
    for (const auto& t : inputs) cfg.add_owned_const_input(t);
    return cfg.promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true).build();
  };
  auto ia = build(grad_input.narrow(dim, 0, h), {b, grad});
  check_kind("glu_backward_cpu", ia.common_dtype(), kFloating);
  auto ib = build(grad_input.narrow(dim, h, h), {a, b, grad});
  pointwise(ia, da);
  pointwise(ib, db);
  return grad_input;
}
// glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor
at::Tensor glu_backward_ocl(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return glu_backward_out_ocl(grad, self, dim, grad_input);
}

// logit_backward.grad_input(Tensor grad_output, Tensor self, float? eps=None, *, Tensor(a!) grad_input)
at::Tensor& logit_backward_out_ocl(const at::Tensor& grad, const at::Tensor& self, std::optional<double> eps,
                                   at::Tensor& grad_input) {
  if (eps.has_value() && *eps >= 0) {
    static const PointwiseSpec s{"logit_bwd_eps", "(b < s0 || b > CTC(1) - s0) ? (CT)0 : a / (b * (CTC(1) - b))"};
    return binary(grad, self, grad_input, s, kFloating, {*eps});
  }
  static const PointwiseSpec s{"logit_bwd", "(b < (CT)0 || b > CTC(1)) ? (CT)NAN : a / (b * (CTC(1) - b))"};
  return binary(grad, self, grad_input, s, kFloating);
}

// ---- prelu ---------------------------------------------------------------------------------
// The composite prelu reshapes the weight to broadcast over the channel dim (dim 1; a single
// weight for 0-D and 1-D inputs), so both kernels see a weight of the input's rank.

// _prelu_kernel(Tensor self, Tensor weight) -> Tensor
at::Tensor _prelu_kernel_ocl(const at::Tensor& self, const at::Tensor& weight) {
  static const PointwiseSpec s{"prelu", "a > (CT)0 ? a : b * a"};
  at::Tensor result = at::empty_like(self);
  auto iter = at::TensorIteratorConfig().add_output(result).add_const_input(self).add_const_input(weight).build();
  check_kind("prelu_cpu", iter.common_dtype(), kFloating);
  pointwise(iter, s);
  return result;
}

// _prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)
// Both gradients in the broadcast shape, as on the CPU: autograd sums the weight's gradient
// down to the weight's shape (a device reduction).
std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward_ocl(const at::Tensor& grad_out, const at::Tensor& self,
                                                              const at::Tensor& weight) {
  static const PointwiseSpec s{"prelu_bwd", "r0 = a > (CT)0 ? c : b * c; r1 = a > (CT)0 ? (CT)0 : a * c;"};
  at::Tensor grad_self = at::empty({0}, self.options()), grad_weight = at::empty({0}, weight.options());
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_self)
                  .add_output(grad_weight)
                  .add_const_input(self)
                  .add_const_input(weight)
                  .add_const_input(grad_out)
                  .build();
  check_kind("prelu_backward_cpu", iter.common_dtype(), kFloating);
  pointwise(iter, s);
  return {grad_self, grad_weight};
}

// ---- rrelu ---------------------------------------------------------------------------------
// Training: every negative (or zero) input x gets a slope r drawn uniformly from [lower, upper)
// by the device generator (uniform_ over the noise tensor, then one pointwise kernel): out = x r,
// noise = r; elsewhere out = x, noise = 1. rrelu_with_noise_backward (composite) then is
// grad * noise. Evaluation: leaky_relu with the slope (lower + upper) / 2.

// rrelu_with_noise.out(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& rrelu_with_noise_out_ocl(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                                     const c10::Scalar& upper, bool training, std::optional<at::Generator> gen,
                                     at::Tensor& out) {
  TORCH_CHECK(self.sizes() == noise.sizes(), "noise tensor shape must match self tensor shape. Got self.shape = ",
              self.sizes(), " noise.shape = ", noise.sizes());
  if (!training) {
    const double slope = (lower.toDouble() + upper.toDouble()) / 2;
    return leaky_relu_out_ocl(self, slope, out);
  }
  // The CPU's training kernel takes float, double and bfloat16 (not float16).
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) && self.scalar_type() != at::kHalf,
                              "\"rrelu_with_noise_out_cpu\" not implemented for '", c10::toString(self.scalar_type()),
                              "'");
  TORCH_CHECK(noise.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(), " but found ",
              noise.scalar_type());
  noise.uniform_(lower.toDouble(), upper.toDouble(), gen);
  static const PointwiseSpec s{"rrelu_train", "r0 = a <= (CT)0 ? a * b : a; r1 = a <= (CT)0 ? b : CTC(1);"};
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_output(noise)
                  .add_const_input(self)
                  .add_const_input(noise)
                  .build();
  pointwise(iter, s);
  return out;
}
// rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor
at::Tensor rrelu_with_noise_ocl(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                                const c10::Scalar& upper, bool training, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(self);
  return rrelu_with_noise_out_ocl(self, noise, lower, upper, training, std::move(gen), out);
}
// rrelu_with_noise_(Tensor(a!) self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor(a!)
at::Tensor& rrelu_with_noise__ocl(at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                                  const c10::Scalar& upper, bool training, std::optional<at::Generator> gen) {
  return rrelu_with_noise_out_ocl(self, noise, lower, upper, training, std::move(gen), self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "relu", relu_ocl);
  OCL_IMPL(m, "relu_", relu__ocl);
  OCL_IMPL(m, "leaky_relu.out", leaky_relu_out_ocl);
  OCL_IMPL(m, "elu.out", elu_out_ocl);
  OCL_IMPL(m, "silu.out", silu_out_ocl);
  OCL_IMPL(m, "mish.out", mish_out_ocl);
  OCL_IMPL(m, "hardtanh", hardtanh_ocl);
  OCL_IMPL(m, "hardtanh.out", hardtanh_out_ocl);
  OCL_IMPL(m, "hardtanh_", hardtanh__ocl);
  OCL_IMPL(m, "softplus.out", softplus_out_ocl);
  OCL_IMPL(m, "gelu.out", gelu_out_ocl);
  OCL_IMPL(m, "threshold.out", threshold_out_ocl);
  OCL_IMPL(m, "threshold_backward.grad_input", threshold_backward_out_ocl);
  OCL_IMPL(m, "sigmoid_backward.grad_input", sigmoid_backward_out_ocl);
  OCL_IMPL(m, "tanh_backward.grad_input", tanh_backward_out_ocl);
  OCL_IMPL(m, "silu_backward.grad_input", silu_backward_out_ocl);
  OCL_IMPL(m, "gelu_backward.grad_input", gelu_backward_out_ocl);
  OCL_IMPL(m, "leaky_relu_backward.grad_input", leaky_relu_backward_out_ocl);
  OCL_IMPL(m, "elu_backward.grad_input", elu_backward_out_ocl);
  OCL_IMPL(m, "mish_backward", mish_backward_ocl);
  OCL_IMPL(m, "hardtanh_backward", hardtanh_backward_ocl);
  OCL_IMPL(m, "hardtanh_backward.grad_input", hardtanh_backward_out_ocl);
  OCL_IMPL(m, "softplus_backward.grad_input", softplus_backward_out_ocl);
  OCL_IMPL(m, "logit_backward.grad_input", logit_backward_out_ocl);
  OCL_IMPL(m, "hardsigmoid.out", hardsigmoid_out_ocl);
  OCL_IMPL(m, "hardsigmoid_backward.grad_input", hardsigmoid_backward_out_ocl);
  OCL_IMPL(m, "hardswish", hardswish_ocl);
  OCL_IMPL(m, "hardswish_", hardswish__ocl);
  OCL_IMPL(m, "hardswish.out", hardswish_out_ocl);
  OCL_IMPL(m, "hardswish_backward", hardswish_backward_ocl);
  OCL_IMPL(m, "softshrink.out", softshrink_out_ocl);
  OCL_IMPL(m, "softshrink_backward.grad_input", softshrink_backward_out_ocl);
  OCL_IMPL(m, "hardshrink.out", hardshrink_out_ocl);
  OCL_IMPL(m, "hardshrink_backward.grad_input", hardshrink_backward_out_ocl);
  OCL_IMPL(m, "log_sigmoid_forward", log_sigmoid_forward_ocl);
  OCL_IMPL(m, "log_sigmoid_forward.output", log_sigmoid_forward_out_ocl);
  OCL_IMPL(m, "log_sigmoid_backward", log_sigmoid_backward_ocl);
  OCL_IMPL(m, "log_sigmoid_backward.grad_input", log_sigmoid_backward_out_ocl);
  OCL_IMPL(m, "glu.out", glu_out_ocl);
  OCL_IMPL(m, "glu_backward", glu_backward_ocl);
  OCL_IMPL(m, "glu_backward.grad_input", glu_backward_out_ocl);
  OCL_IMPL(m, "_prelu_kernel", _prelu_kernel_ocl);
  OCL_IMPL(m, "_prelu_kernel_backward", _prelu_kernel_backward_ocl);
  OCL_IMPL(m, "rrelu_with_noise", rrelu_with_noise_ocl);
  OCL_IMPL(m, "rrelu_with_noise_", rrelu_with_noise__ocl);
  OCL_IMPL(m, "rrelu_with_noise.out", rrelu_with_noise_out_ocl);
}

}  // namespace torch_ocl
