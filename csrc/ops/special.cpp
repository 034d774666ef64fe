// Special functions (torch.special's Bessel, Airy, normal-distribution and zeta functions, the
// orthogonal polynomials, the incomplete gamma functions) and the reparameterized gradients of
// the Gamma and Dirichlet samplers: pointwise ops through the generated engine
// (csrc/aten/Pointwise.h) whose programs start with kernels/special.cl (PointwiseSpec::prelude)
// instead of elementwise.cl, which special.cl includes. Dtypes follow the CPU: the torch.special
// functions take float and double (integers promote to float, 16-bit types raise as on the CPU);
// igamma / igammac also take float16 and bfloat16, computed in float.
#include "../aten/Routing.h"
#include "elementwise.h"
#include "../runtime/Launch.h"
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

PointwiseSpec special_spec(const char* name, const char* expr) {
  PointwiseSpec s;
  s.name = name;
  s.expr = expr;
  s.prelude = "special";
  return s;
}

// The CPU's error for a dtype its kernel is not built for (NotImplementedError naming op and dtype).
void check_float_or_double(const char* op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", op, "\" not implemented for '",
                              c10::toString(t), "'");
}

// out = f(self) with ATen's unary_float_op rules, float and double only.
at::Tensor& float_unary(const at::Tensor& self, at::Tensor& out, const PointwiseSpec& s) {
  at::TensorIterator iter;
  iter.build_unary_float_op(out, self);
  if (!out.defined()) out = iter.output();
  check_float_or_double(s.name.c_str(), iter.common_dtype());
  pointwise(iter, s);
  return out;
}

// out = f(a, b) with ATen's binary_float_op rules, float and double only.
at::Tensor& float_binary(const at::Tensor& a, const at::Tensor& b, at::Tensor& out, const PointwiseSpec& s) {
  at::TensorIterator iter;
  iter.build_binary_float_op(out, a, b);
  if (!out.defined()) out = iter.output();
  check_float_or_double(s.name.c_str(), iter.common_dtype());
  pointwise(iter, s);
  return out;
}

#define SP_UNARY(NAME, EXPR)                                          \
  at::Tensor& NAME##_out_ocl(const at::Tensor& self, at::Tensor& out) { \
    static const PointwiseSpec s = special_spec(#NAME, EXPR);           \
    return float_unary(self, out, s);                                   \
  }
// special_ndtri.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_ndtri, "sp_ndtri(a)")
// special_log_ndtr.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_log_ndtr, "sp_log_ndtr(a)")
// special_erfcx.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_erfcx, "sp_erfcx(a)")
// special_bessel_j0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_bessel_j0, "sp_bessel_j0(a)")
// special_bessel_j1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_bessel_j1, "sp_bessel_j1(a)")
// special_bessel_y0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_bessel_y0, "sp_bessel_y0(a)")
// special_bessel_y1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_bessel_y1, "sp_bessel_y1(a)")
// special_modified_bessel_i0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_modified_bessel_i0, "sp_modified_bessel_i0(a)")
// special_modified_bessel_i1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_modified_bessel_i1, "sp_modified_bessel_i1(a)")
// special_modified_bessel_k0.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_modified_bessel_k0, "sp_modified_bessel_k0(a, 0)")
// special_modified_bessel_k1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_modified_bessel_k1, "sp_modified_bessel_k1(a, 0)")
// special_scaled_modified_bessel_k0.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_scaled_modified_bessel_k0, "sp_modified_bessel_k0(a, 1)")
// special_scaled_modified_bessel_k1.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_scaled_modified_bessel_k1, "sp_modified_bessel_k1(a, 1)")
// special_spherical_bessel_j0.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_spherical_bessel_j0, "sp_spherical_bessel_j0(a)")
// special_airy_ai.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
SP_UNARY(special_airy_ai, "sp_airy_ai(a)")
#undef SP_UNARY

// The polynomials of x and a degree n (any real n, truncated to an integer as the CPU does). The
// x_scalar / n_scalar overloads are CompositeExplicitAutograd: they wrap the scalar and come here.
#define SP_POLYNOMIAL(NAME, FN)                                                                        \
  at::Tensor& NAME##_out_ocl(const at::Tensor& x, const at::Tensor& n, at::Tensor& out) {              \
    static const PointwiseSpec s = special_spec(#NAME, FN "(a, sp_degree(b))");                        \
    return float_binary(x, n, out, s);                                                                 \
  }
// special_chebyshev_polynomial_t.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_chebyshev_polynomial_t, "sp_chebyshev_t")
// special_chebyshev_polynomial_u.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_chebyshev_polynomial_u, "sp_chebyshev_u")
// special_chebyshev_polynomial_v.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_chebyshev_polynomial_v, "sp_chebyshev_v")
// special_chebyshev_polynomial_w.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_chebyshev_polynomial_w, "sp_chebyshev_w")
// special_shifted_chebyshev_polynomial_t.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_shifted_chebyshev_polynomial_t, "sp_shifted_chebyshev_t")
// special_shifted_chebyshev_polynomial_u.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_shifted_chebyshev_polynomial_u, "sp_shifted_chebyshev_u")
// special_shifted_chebyshev_polynomial_v.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_shifted_chebyshev_polynomial_v, "sp_shifted_chebyshev_v")
// special_shifted_chebyshev_polynomial_w.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_shifted_chebyshev_polynomial_w, "sp_shifted_chebyshev_w")
// special_hermite_polynomial_h.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_hermite_polynomial_h, "sp_hermite_h")
// special_hermite_polynomial_he.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_hermite_polynomial_he, "sp_hermite_he")
// special_laguerre_polynomial_l.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_laguerre_polynomial_l, "sp_laguerre_l")
// special_legendre_polynomial_p.out(Tensor x, Tensor n, *, Tensor(a!) out) -> Tensor(a!)
SP_POLYNOMIAL(special_legendre_polynomial_p, "sp_legendre_p")
#undef SP_POLYNOMIAL

// special_zeta.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
// Hurwitz zeta(x, q) (elementwise.cl's ew_zeta, which polygamma shares). The self_scalar /
// other_scalar overloads are CompositeExplicitAutograd wrappers of this one.
at::Tensor& special_zeta_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s = special_spec("zeta", "ew_zeta(a, b)");
  return float_binary(self, other, out, s);
}

// igamma / igammac with ATen's binary_op rules: floating types only (16-bit ones computed in float).
at::Tensor& incomplete_gamma(const at::Tensor& self, const at::Tensor& other, at::Tensor& out,
                             const PointwiseSpec& s) {
  at::TensorIterator iter;
  iter.build_binary_op(out, self, other);
  if (!out.defined()) out = iter.output();
  ew::check_kind(s.name.c_str(), iter.common_dtype(), ew::kFloating);
  pointwise(iter, s);
  return out;
}
// igamma.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& igamma_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s = special_spec("igamma", "sp_igamma(a, b)");
  return incomplete_gamma(self, other, out, s);
}
// igammac.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& igammac_out_ocl(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const PointwiseSpec s = special_spec("igammac", "sp_igammac(a, b)");
  return incomplete_gamma(self, other, out, s);
}

// The samplers' gradients, built like the CPU's: an output of the first input's shape, the
// inputs broadcast to it, one dtype for all (float or double). Computed in double wherever the
// device has it, as on the CPU: their asymptotic expansions cancel badly in float (the Dirichlet
// one by up to 10 % against the double result).
at::Tensor sampler_grad(std::initializer_list<at::Tensor> inputs, const PointwiseSpec& s, const char* op) {
  const at::Tensor& first = *inputs.begin();
  at::Tensor ret = at::empty(first.sizes(), first.options());
  at::TensorIteratorConfig config;
  config.add_output(ret);
  for (const at::Tensor& t : inputs) config.add_const_input(t);
  auto iter = config.build();
  const at::ScalarType t = first.scalar_type();  // all operands share it (the iterator checked)
  check_float_or_double(op, t);
  if (iter.numel() == 0) return iter.output();
  pointwise(iter, s, {}, ocl_device(ret).info.fp64 ? at::kDouble : t);
  return iter.output();
}
// _standard_gamma_grad(Tensor self, Tensor output) -> Tensor
// d(sample)/d(alpha) of a standard Gamma draw `output` for concentration `self`.
at::Tensor _standard_gamma_grad_ocl(const at::Tensor& self, const at::Tensor& output) {
  static const PointwiseSpec s = special_spec("standard_gamma_grad", "sp_standard_gamma_grad(a, b)");
  return sampler_grad({self, output}, s, "_standard_gamma_grad");
}
// _dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor
at::Tensor _dirichlet_grad_ocl(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& total) {
  static const PointwiseSpec s = special_spec("dirichlet_grad", "sp_dirichlet_grad(a, b, c)");
  return sampler_grad({x, alpha, total}, s, "_dirichlet_grad");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "special_ndtri.out", special_ndtri_out_ocl);
  OCL_IMPL(m, "special_log_ndtr.out", special_log_ndtr_out_ocl);
  OCL_IMPL(m, "special_erfcx.out", special_erfcx_out_ocl);
  OCL_IMPL(m, "special_bessel_j0.out", special_bessel_j0_out_ocl);
  OCL_IMPL(m, "special_bessel_j1.out", special_bessel_j1_out_ocl);
  OCL_IMPL(m, "special_bessel_y0.out", special_bessel_y0_out_ocl);
  OCL_IMPL(m, "special_bessel_y1.out", special_bessel_y1_out_ocl);
  OCL_IMPL(m, "special_modified_bessel_i0.out", special_modified_bessel_i0_out_ocl);
  OCL_IMPL(m, "special_modified_bessel_i1.out", special_modified_bessel_i1_out_ocl);
  OCL_IMPL(m, "special_modified_bessel_k0.out", special_modified_bessel_k0_out_ocl);
  OCL_IMPL(m, "special_modified_bessel_k1.out", special_modified_bessel_k1_out_ocl);
  OCL_IMPL(m, "special_scaled_modified_bessel_k0.out", special_scaled_modified_bessel_k0_out_ocl);
  OCL_IMPL(m, "special_scaled_modified_bessel_k1.out", special_scaled_modified_bessel_k1_out_ocl);
  OCL_IMPL(m, "special_spherical_bessel_j0.out", special_spherical_bessel_j0_out_ocl);
  OCL_IMPL(m, "special_airy_ai.out", special_airy_ai_out_ocl);
  OCL_IMPL(m, "special_chebyshev_polynomial_t.out", special_chebyshev_polynomial_t_out_ocl);
  OCL_IMPL(m, "special_chebyshev_polynomial_u.out", special_chebyshev_polynomial_u_out_ocl);
  OCL_IMPL(m, "special_chebyshev_polynomial_v.out", special_chebyshev_polynomial_v_out_ocl);
  OCL_IMPL(m, "special_chebyshev_polynomial_w.out", special_chebyshev_polynomial_w_out_ocl);
  OCL_IMPL(m, "special_shifted_chebyshev_polynomial_t.out", special_shifted_chebyshev_polynomial_t_out_ocl);
  OCL_IMPL(m, "special_shifted_chebyshev_polynomial_u.out", special_shifted_chebyshev_polynomial_u_out_ocl);
  OCL_IMPL(m, "special_shifted_chebyshev_polynomial_v.out", special_shifted_chebyshev_polynomial_v_out_ocl);
  OCL_IMPL(m, "special_shifted_chebyshev_polynomial_w.out", special_shifted_chebyshev_polynomial_w_out_ocl);
  OCL_IMPL(m, "special_hermite_polynomial_h.out", special_hermite_polynomial_h_out_ocl);
  OCL_IMPL(m, "special_hermite_polynomial_he.out", special_hermite_polynomial_he_out_ocl);
  OCL_IMPL(m, "special_laguerre_polynomial_l.out", special_laguerre_polynomial_l_out_ocl);
  OCL_IMPL(m, "special_legendre_polynomial_p.out", special_legendre_polynomial_p_out_ocl);
  OCL_IMPL(m, "special_zeta.out", special_zeta_out_ocl);
  OCL_IMPL(m, "igamma.out", igamma_out_ocl);
  OCL_IMPL(m, "igammac.out", igammac_out_ocl);
  OCL_IMPL(m, "_standard_gamma_grad", _standard_gamma_grad_ocl);
  OCL_IMPL(m, "_dirichlet_grad", _dirichlet_grad_ocl);
}

}  // namespace torch_ocl
