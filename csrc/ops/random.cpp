// Random ops on the device: distribution fills (normal_, uniform_, random_, bernoulli_,
// exponential_, ...), dropout, the Gamma / Dirichlet / Poisson / Binomial samplers, multinomial
// and randperm, all drawn from the device's Philox generator (runtime/Generator.h) and never
// from the CPU generator. Argument checks and
// the Tensor-parameter variants come from ATen's DistributionTemplates, so errors match the
// CPU; kernels write dense memory, and non-dense outputs are filled through a temporary.
#include "../aten/Routing.h"
#include "../aten/Pointwise.h"
#include "../runtime/Generator.h"
#include "../runtime/Launch.h"
#include <ATen/native/DistributionTemplates.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>
#include <cmath>
#include <limits>

namespace torch_ocl {
namespace {

constexpr size_t kGroup = 256;  // work-group size of the element-wise random kernels
constexpr int kRedGroup = 256;  // WG of the multinomial / sort kernels

enum Dist { kUniform = 0, kNormal, kExponential, kLogNormal, kCauchy, kGeometric, kBernoulli };

bool is_64bit_compute(at::ScalarType t) { return t == at::kDouble; }

// Elements per Philox block (four 32-bit words): two 64-bit draws for double compute or `wide`
// integers, else four 32-bit ones. Host launch sizes and the kernels' EPB both come from here.
int epb_for(const std::string& compute, bool wide) { return (wide || compute == "double") ? 2 : 4; }

// -DT=<storage> and the T_IS_* flags for an output dtype, then -DAT=<compute type> and
// -DEPB=<elements per Philox block>.
std::string type_options(at::ScalarType t, const char* compute, bool wide = false) {
  std::string o = "-DT=" + cl_type_name(t);
  if (t == at::kHalf) o += " -DT_IS_HALF";
  if (t == at::kBFloat16) o += " -DT_IS_BF16";
  if (t == at::kBool) o += " -DT_IS_BOOL";
  o += std::string(" -DAT=") + compute;
  if (std::string(compute) == "long") o += " -DAT_IS_INT";
  o += " -DEPB=" + std::to_string(epb_for(compute, wide));
  return o + " -DWG=" + std::to_string(kRedGroup);
}
std::string type_options(at::ScalarType t) { return type_options(t, is_64bit_compute(t) ? "double" : "float"); }
int elems_per_block(at::ScalarType t) { return epb_for(is_64bit_compute(t) ? "double" : "float", false); }

// Runs fill(dense) on self directly when its elements occupy one dense block of memory
// (the order of i.i.d. draws is irrelevant), else on a contiguous temporary copied back.
template <typename F>
void fill_dense(const at::Tensor& self, F&& fill) {
  if (self.numel() == 0) return;
  if (self.is_non_overlapping_and_dense()) {
    fill(self);
    return;
  }
  at::Tensor tmp = at::empty(self.sizes(), self.options());
  fill(tmp);
  copy_on_device(self, tmp);
}

void launch_dist(const at::Tensor& self, Dist dist, double a, double b, const std::optional<at::Generator>& gen,
                 const char* op) {
  Device& d = ocl_device(self);
  check_dtype_supported(d, self.scalar_type(), op);
  fill_dense(self, [&](const at::Tensor& out) {
    const at::ScalarType t = out.scalar_type();
    const uint64_t n = out.numel();
    const int epb = elems_per_block(t);
    const uint64_t blocks = (n + epb - 1) / epb;
    Kernel& k = get_kernel(d, "random", type_options(t), "random_fill");
    PhiloxState s = philox_reserve(gen, out.device().index(), blocks);
    if (is_64bit_compute(t))
      launch(d, k, Range(blocks), Range(kGroup), buf(out), n, s.seed, s.offset, a, b, static_cast<cl_int>(dist));
    else
      launch(d, k, Range(blocks), Range(kGroup), buf(out), n, s.seed, s.offset, static_cast<float>(a),
             static_cast<float>(b), static_cast<cl_int>(dist));
  });
}

void require_floating(const at::Tensor& self, const char* kernel) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"", kernel, "\" not implemented for '",
                              at::toString(self.scalar_type()), "'");
}

// random_ over [base, base + range); range == 0 means the full 64-bit range.
void launch_random_int(const at::Tensor& self, uint64_t range, int64_t base, const std::optional<at::Generator>& gen) {
  Device& d = ocl_device(self);
  check_dtype_supported(d, self.scalar_type(), "random_");
  fill_dense(self, [&](const at::Tensor& out) {
    const at::ScalarType t = out.scalar_type();
    const bool wide = range == 0 || range > (uint64_t(1) << 32);
    const bool int_out = !at::isFloatingType(t);
    const uint64_t n = out.numel();
    const char* compute = int_out ? "long" : t == at::kDouble ? "double" : "float";
    // A float64 output draws 64 bits per element even for a narrow range (EPB 2).
    const int epb = epb_for(compute, wide);
    const uint64_t blocks = (n + epb - 1) / epb;
    std::string opts = type_options(t, compute, wide) + (wide ? " -DWIDE" : "");
    Kernel& k = get_kernel(d, "random", opts, "random_int");
    PhiloxState s = philox_reserve(gen, out.device().index(), blocks);
    launch(d, k, Range(blocks), Range(kGroup), buf(out), n, s.seed, s.offset, range, base);
  });
}

// ---- kernel functors for at::native::templates (RNG is unused: the generator is ours) ----

template <typename RNG>
struct NormalKernel {
  void operator()(const at::TensorBase& self, double mean, double std, std::optional<at::Generator> gen) {
    at::Tensor t(self);
    require_floating(t, "normal_kernel_ocl");
    launch_dist(t, kNormal, mean, std, gen, "normal_");
  }
};
template <typename RNG>
struct UniformKernel {
  void operator()(at::TensorIteratorBase& iter, double from, double to, std::optional<at::Generator> gen) {
    launch_dist(iter.tensor(0), kUniform, from, to, gen, "uniform_");
  }
};
template <typename RNG>
struct ExponentialKernel {
  void operator()(at::TensorIteratorBase& iter, double lambda, std::optional<at::Generator> gen) {
    const at::Tensor& t = iter.tensor(0);
    TORCH_CHECK(at::isFloatingType(t.scalar_type()),
                "Exponential distribution is a continuous probability distribution. dtype must be a floating "
                "point but you specified ", t.dtype());
    launch_dist(t, kExponential, lambda, 0, gen, "exponential_");
  }
};
template <typename RNG>
struct LogNormalKernel {
  void operator()(at::TensorIteratorBase& iter, double mean, double std, std::optional<at::Generator> gen) {
    require_floating(iter.tensor(0), "log_normal_ocl");
    launch_dist(iter.tensor(0), kLogNormal, mean, std, gen, "log_normal_");
  }
};
template <typename RNG>
struct CauchyKernel {
  void operator()(at::TensorIteratorBase& iter, double median, double sigma, std::optional<at::Generator> gen) {
    launch_dist(iter.tensor(0), kCauchy, median, sigma, gen, "cauchy_");
  }
};
template <typename RNG>
struct GeometricKernel {
  void operator()(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
    launch_dist(iter.tensor(0), kGeometric, p, 0, gen, "geometric_");
  }
};
template <typename RNG>
struct BernoulliScalarKernel {
  void operator()(const at::TensorBase& self, double p, std::optional<at::Generator> gen) {
    launch_dist(at::Tensor(self), kBernoulli, p, 0, gen, "bernoulli_");
  }
};
template <typename RNG>
struct BernoulliTensorKernel {
  void operator()(const at::TensorBase& self_, const at::TensorBase& p_, std::optional<at::Generator> gen) {
    at::Tensor self(self_);
    Device& d = ocl_device(self);
    check_dtype_supported(d, self.scalar_type(), "bernoulli_");
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(p_.scalar_type()), "\"bernoulli_tensor_p_\" not implemented for '",
                                p_.scalar_type(), "'");
    const bool dbl = p_.scalar_type() == at::kDouble || self.scalar_type() == at::kDouble;
    const at::ScalarType pt = dbl ? at::kDouble : at::kFloat;
    // Probabilities in self's logical (row-major) order.
    at::Tensor p = at::Tensor(p_).to(self.device(), pt).expand(self.sizes()).contiguous();
    at::Tensor out = self.is_contiguous() ? self : at::empty(self.sizes(), self.options());
    const at::ScalarType t = out.scalar_type();
    const uint64_t n = out.numel();
    const int epb = elems_per_block(pt);
    const uint64_t blocks = (n + epb - 1) / epb;
    // The compute type and block width follow the probability type.
    std::string opts = type_options(t, dbl ? "double" : "float");
    Kernel& k = get_kernel(d, "random", opts, "bernoulli_tensor");
    PhiloxState s = philox_reserve(gen, self.device().index(), blocks);
    launch(d, k, Range(blocks), Range(kGroup), buf(out), buf(p), n, s.seed, s.offset, d.error_buf);
    if (!out.is_same(self)) copy_on_device(self, out);
  }
};
template <typename RNG>
struct RandomKernel {
  // random_(): [0, 2^digits] for floating types, [0, max] for integers.
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    const at::Tensor& t = iter.tensor(0);
    uint64_t range = 0;
    switch (t.scalar_type()) {
      case at::kFloat: range = (uint64_t(1) << 24) + 1; break;
      case at::kDouble: range = (uint64_t(1) << 53) + 1; break;
      case at::kHalf: range = (uint64_t(1) << 11) + 1; break;
      case at::kBFloat16: range = (uint64_t(1) << 8) + 1; break;
      case at::kBool: range = 2; break;
      case at::kByte: range = 256; break;
      case at::kChar: range = 128; break;
      case at::kShort: range = 32768; break;
      case at::kInt: range = uint64_t(1) << 31; break;
      case at::kLong: range = uint64_t(1) << 63; break;
      default: TORCH_CHECK_NOT_IMPLEMENTED(false, "\"random_ocl\" not implemented for '", t.scalar_type(), "'");
    }
    launch_random_int(t, range, 0, gen);
  }
};
template <typename RNG>
struct RandomFromToKernel {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t base, std::optional<at::Generator> gen) {
    launch_random_int(iter.tensor(0), range, base, gen);
  }
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    launch_random_int(iter.tensor(0), 0, std::numeric_limits<int64_t>::lowest(), gen);
  }
};
struct NoRNG {};
using at::native::templates::bernoulli_impl_;

// normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)
at::Tensor& normal__ocl(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl_<NormalKernel, NoRNG>(self, mean, std, gen);
}
// normal.Tensor_float_out(Tensor mean, float std=1., *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& normal_Tensor_float_out_ocl(const at::Tensor& mean, double std, std::optional<at::Generator> gen,
                                        at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalKernel, NoRNG>(out, mean, std, gen);
}
// normal.float_Tensor_out(float mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& normal_float_Tensor_out_ocl(double mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                        at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalKernel, NoRNG>(out, mean, std, gen);
}
// normal.Tensor_Tensor_out(Tensor mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& normal_Tensor_Tensor_out_ocl(const at::Tensor& mean, const at::Tensor& std,
                                         std::optional<at::Generator> gen, at::Tensor& out) {
  return at::native::templates::normal_out_impl<NormalKernel, NoRNG>(out, mean, std, gen);
}
// normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor
at::Tensor normal_Tensor_float_ocl(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalKernel, NoRNG>(mean, std, gen);
}
// normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor
at::Tensor normal_float_Tensor_ocl(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalKernel, NoRNG>(mean, std, gen);
}
// normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor
at::Tensor normal_Tensor_Tensor_ocl(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  return at::native::templates::normal_impl<NormalKernel, NoRNG>(mean, std, gen);
}
// uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)
at::Tensor& uniform__ocl(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  return at::native::templates::uniform_impl_<UniformKernel, NoRNG>(self, from, to, gen);
}
// exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)
at::Tensor& exponential__ocl(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
  return at::native::templates::exponential_impl_<ExponentialKernel, NoRNG>(self, lambd, gen);
}
// log_normal_(Tensor(a!) self, float mean=1., float std=2., *, Generator? generator=None) -> Tensor(a!)
at::Tensor& log_normal__ocl(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  return at::native::templates::log_normal_impl_<LogNormalKernel, NoRNG>(self, mean, std, gen);
}
// cauchy_(Tensor(a!) self, float median=0., float sigma=1., *, Generator? generator=None) -> Tensor(a!)
at::Tensor& cauchy__ocl(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  return at::native::templates::cauchy_impl_<CauchyKernel, NoRNG>(self, median, sigma, gen);
}
// geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& geometric__ocl(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return at::native::templates::geometric_impl_<GeometricKernel, NoRNG>(self, p, gen);
}
// random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& random__ocl(at::Tensor& self, std::optional<at::Generator> gen) {
  return at::native::templates::random_impl<RandomKernel, NoRNG>(self, gen);
}
// random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& random__from_ocl(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                             std::optional<at::Generator> gen) {
  return at::native::templates::random_from_to_impl<RandomFromToKernel, NoRNG>(self, from, to, gen);
}
// random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& random__to_ocl(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random__from_ocl(self, 0, to, gen);
}
// bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& bernoulli__float_ocl(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return bernoulli_impl_<BernoulliScalarKernel, NoRNG>(self, p, gen);
}
// bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)
at::Tensor& bernoulli__Tensor_ocl(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen) {
  return bernoulli_impl_<BernoulliTensorKernel, NoRNG>(self, p, gen);
}
// bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& bernoulli_out_ocl(const at::Tensor& self, std::optional<at::Generator> gen, at::Tensor& out) {
  return at::native::templates::bernoulli_out_impl<BernoulliTensorKernel, NoRNG>(out, self, gen);
}

// native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> native_dropout_ocl(const at::Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0) return {input, at::empty_like(input)};
  if (train.has_value() && !*train)
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  Device& d = ocl_device(input);
  const at::ScalarType t = input.scalar_type();
  // The CPU scales an integer input by a float factor in place: its cast error, not "not implemented".
  TORCH_CHECK(at::isFloatingType(t), "result type Float can't be cast to the desired output type ", t);
  check_dtype_supported(d, t, "native_dropout");
  at::Tensor x = input.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.options());
  at::Tensor mask = at::empty(x.sizes(), x.options().dtype(at::kBool));
  const double keep = 1.0 - p;
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  const uint64_t n = x.numel();
  const int epb = elems_per_block(t);
  const uint64_t blocks = (n + epb - 1) / epb;
  Kernel& k = get_kernel(d, "random", type_options(t), "dropout_fwd");
  PhiloxState s = philox_reserve(std::nullopt, input.device().index(), blocks);
  if (is_64bit_compute(t))
    launch(d, k, Range(blocks), Range(kGroup), buf(out), buf(mask), buf(x), n, s.seed, s.offset, keep, scale);
  else
    launch(d, k, Range(blocks), Range(kGroup), buf(out), buf(mask), buf(x), n, s.seed, s.offset,
           static_cast<float>(keep), static_cast<float>(scale));
  return {out, mask};
}

// native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
at::Tensor native_dropout_backward_ocl(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  at::Tensor out;
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(grad)
                  .add_const_input(mask)
                  .check_all_same_dtype(false)
                  .declare_static_dtype(grad.scalar_type())
                  .build();
  PointwiseSpec spec{"dropout_bwd", "b ? a * s0 : (CT)0", compute_type_for(grad.scalar_type()),
                     {at::ScalarType::Undefined, at::kBool}, {}};
  pointwise(iter, spec, {c10::Scalar(scale)});
  return iter.output();
}

// ---- samplers: rejection methods with a Philox stream per element (random.cl: Stream) --------

// One counter block per element (each element's stream), a work-item per element.
void launch_sampler(Device& d, const char* name, at::ScalarType t, const at::Tensor& out, const at::Tensor& in,
                    const std::optional<at::Generator>& gen, double extra) {
  const uint64_t n = out.numel();
  Kernel& k = get_kernel(d, "random", type_options(t), name);
  PhiloxState s = philox_reserve(gen, out.device().index(), n);
  if (is_64bit_compute(t))
    launch(d, k, Range(n), Range(kGroup), buf(out), buf(in), n, s.seed, s.offset, extra);
  else
    launch(d, k, Range(n), Range(kGroup), buf(out), buf(in), n, s.seed, s.offset, static_cast<float>(extra));
}

// The CPU's error for a sampler it builds for float and double only.
void require_float_or_double(at::ScalarType t, const char* kernel) {
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", kernel, "\" not implemented for '",
                              at::toString(t), "'");
}

// _standard_gamma(Tensor self, Generator? generator=None) -> Tensor
// Gamma(self, 1) draws, at least the dtype's smallest normal number (as on the CPU).
at::Tensor _standard_gamma_ocl(const at::Tensor& self, std::optional<at::Generator> gen) {
  const at::ScalarType t = self.scalar_type();
  require_float_or_double(t, "gamma");
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, "_standard_gamma");
  const double tiny = t == at::kDouble ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  launch_sampler(d, "standard_gamma", t, out, self.contiguous(), gen, tiny);
  return out;
}

// _sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor
// Gamma(alpha_i) draws normalized over the last dimension. The CPU draws them in double so that
// tiny concentrations do not underflow; here they are drawn as logarithms (clamped, like the
// CPU's draws, at the smallest normal double) and normalized by a softmax, then clamped into
// [smallest normal, largest value below 1] of the dtype as on the CPU (NaN goes to the bottom).
at::Tensor _sample_dirichlet_ocl(const at::Tensor& self, std::optional<at::Generator> gen) {
  const at::ScalarType t = self.scalar_type();
  require_float_or_double(t, "dirichlet");
  at::Tensor logs = at::empty(self.sizes(), self.options());
  if (logs.numel() == 0) return logs;
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, "_sample_dirichlet");
  launch_sampler(d, "dirichlet_log_gamma", t, logs, self.contiguous(), gen,
                 std::log(std::numeric_limits<double>::min()));
  at::Tensor out = at::_softmax(logs, -1, false);
  const bool dbl = t == at::kDouble;
  const double lo = dbl ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  const double hi = dbl ? std::nextafter(1.0, 0.0) : static_cast<double>(std::nextafter(1.0f, 0.0f));
  static const PointwiseSpec clamp{"dirichlet_clamp", "CT w = (s0 < a) ? a : s0; r0 = (w < s1) ? w : s1;"};
  auto iter = make_unary_iter(out, out);
  pointwise(iter, clamp, {lo, hi});
  return out;
}

// poisson(Tensor self, Generator? generator=None) -> Tensor
// A negative or NaN rate raises the CPU's error at the next synchronization (device error flag).
at::Tensor poisson_ocl(const at::Tensor& self, std::optional<at::Generator> gen) {
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"poisson\" not implemented for '", at::toString(t), "'");
  at::Tensor out = at::empty(self.sizes(), self.options());
  const uint64_t n = out.numel();
  if (n == 0) return out;
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, "poisson");
  const at::Tensor rate = self.contiguous();
  Kernel& k = get_kernel(d, "random", type_options(t), "poisson");
  PhiloxState s = philox_reserve(gen, self.device().index(), n);
  launch(d, k, Range(n), Range(kGroup), buf(out), buf(rate), n, s.seed, s.offset, d.error_buf);
  return out;
}

// binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor
// Built like the CPU's: an output of count's shape, count and prob broadcast to it (an output
// resized to their broadcast shape with ATen's warning), one dtype for both.
at::Tensor binomial_ocl(const at::Tensor& count, const at::Tensor& prob, std::optional<at::Generator> gen) {
  TORCH_CHECK_VALUE(at::isFloatingType(prob.scalar_type()),
                    "binomial only supports floating-point dtypes for prob, got: ", prob.scalar_type());
  TORCH_CHECK_VALUE(at::isFloatingType(count.scalar_type()),
                    "binomial only supports floating-point dtypes for count, got: ", count.scalar_type());
  at::Tensor ret = at::empty(count.sizes(), count.options());
  auto iter = at::TensorIteratorConfig().add_output(ret).add_const_input(count).add_const_input(prob).build();
  const at::ScalarType t = count.scalar_type();
  require_float_or_double(t, "binomial");
  at::Tensor out = iter.output();
  const uint64_t n = out.numel();
  if (n == 0) return out;
  Device& d = ocl_device(out);
  check_dtype_supported(d, t, "binomial");
  const at::Tensor c = count.expand(out.sizes()).contiguous(), p = prob.expand(out.sizes()).contiguous();
  at::Tensor dense = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  Kernel& k = get_kernel(d, "random", type_options(t), "binomial");
  PhiloxState s = philox_reserve(gen, out.device().index(), n);
  launch(d, k, Range(n), Range(kGroup), buf(dense), buf(c), buf(p), n, s.seed, s.offset);
  if (!dense.is_same(out)) copy_on_device(out, dense);
  return out;
}

// multinomial.out(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
at::Tensor& multinomial_out_ocl(const at::Tensor& self, int64_t n_sample, bool replacement,
                                std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(result.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(result.scalar_type() == at::kLong, "multinomial expects Long tensor out, got: ", result.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t ncat = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= ncat, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(ncat <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0);
  if (self.dim() == 1) at::native::resize_output(result, {n_sample});
  else at::native::resize_output(result, {rows, n_sample});
  if (result.numel() == 0) return result;
  TORCH_CHECK(ncat > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  Device& d = ocl_device(self);
  const at::ScalarType t = self.scalar_type();
  check_dtype_supported(d, t, "multinomial");
  at::Tensor p = self.contiguous();
  at::Tensor out = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  const at::ScalarType acc = t == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor scratch = at::empty({rows, ncat}, self.options().dtype(acc));
  at::Tensor status = at::zeros({1}, self.options().dtype(at::kInt));
  const uint64_t draws = replacement ? rows * n_sample : rows * ncat;
  PhiloxState s = philox_reserve(gen, self.device().index(), (draws + 3) / 4);
  std::string opts = type_options(t);
  const char* name = replacement ? "multinomial_with_replacement" : "multinomial_without_replacement";
  Kernel& k = get_kernel(d, "random", opts, name);
  launch(d, k, Range(rows * kRedGroup), Range(kRedGroup), buf(out), buf(p), buf(scratch),
         static_cast<uint64_t>(ncat), static_cast<uint64_t>(n_sample), s.seed, s.offset, buf(status));
  // Like the CPU (and CUDA) implementations, invalid distributions are an error at the call:
  // this reads one int back.
  const int code = status.item<int>();
  TORCH_CHECK(code != 1, "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(code != 2, "invalid multinomial distribution (sum of probabilities <= 0)");
  if (!out.is_same(result)) copy_on_device(result, out);
  return result;
}

// multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor
at::Tensor multinomial_ocl(const at::Tensor& self, int64_t n_sample, bool replacement,
                           std::optional<at::Generator> gen) {
  at::Tensor result = at::empty({0}, self.options().dtype(at::kLong));
  multinomial_out_ocl(self, n_sample, replacement, gen, result);
  return result;
}

// randperm.generator_out(SymInt n, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)
at::Tensor& randperm_generator_out_ocl(int64_t n, std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  const at::ScalarType t = result.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "\"randperm\" not implemented for 'Bool'");
  int64_t max_n = std::numeric_limits<int64_t>::max();
  switch (t) {
    case at::kHalf: max_n = (int64_t(1) << 11) + 1; break;
    case at::kBFloat16: max_n = (int64_t(1) << 8) + 1; break;
    case at::kFloat: max_n = (int64_t(1) << 24) + 1; break;
    case at::kDouble: max_n = (int64_t(1) << 53) + 1; break;
    case at::kByte: max_n = 256; break;
    case at::kChar: max_n = 128; break;
    case at::kShort: max_n = 32768; break;
    case at::kInt: max_n = int64_t(1) << 31; break;
    case at::kBool: max_n = 2; break;
    default: break;
  }
  TORCH_CHECK(n <= max_n, "n is too large for result tensor type: '", result.toString(), "'");
  TORCH_CHECK(n < (int64_t(1) << 32), "torch_ocl: randperm supports n < 2^32, got ", n);
  at::native::resize_output(result, {n});
  if (n == 0) return result;
  Device& d = ocl_device(result);
  check_dtype_supported(d, t, "randperm");
  const uint64_t local_n = 2 * kRedGroup;
  uint64_t npad = local_n;
  while (npad < static_cast<uint64_t>(n)) npad <<= 1;
  at::Tensor keys = at::empty({static_cast<int64_t>(npad)}, result.options().dtype(at::kLong));
  const Buf kb = buf(keys);
  // Every randperm kernel comes from the program of the output dtype.
  const std::string wg = type_options(t, at::isFloatingType(t) ? (t == at::kDouble ? "double" : "float") : "long");
  PhiloxState s = philox_reserve(gen, result.device().index(), (n + 3) / 4);
  launch(d, get_kernel(d, "random", wg, "randperm_keys"), Range(npad), Range(kGroup), kb, static_cast<uint64_t>(n),
         npad, s.seed, s.offset);
  Kernel& local = get_kernel(d, "random", wg, "bitonic_local");
  Kernel& global = get_kernel(d, "random", wg, "bitonic_global");
  const size_t groups = npad / local_n;
  launch(d, local, Range(groups * kRedGroup), Range(kRedGroup), kb, uint64_t(0));
  for (uint64_t k = 2 * local_n; k <= npad; k <<= 1) {
    for (uint64_t j = k / 2; j >= local_n; j >>= 1)
      launch(d, global, Range(npad / 2), Range(kGroup), kb, j, k);
    launch(d, local, Range(groups * kRedGroup), Range(kRedGroup), kb, k);
  }
  at::Tensor out = result.is_contiguous() ? result : at::empty({n}, result.options());
  launch(d, get_kernel(d, "random", wg, "randperm_out"), Range(n), Range(kGroup), buf(out), kb,
         static_cast<uint64_t>(n));
  if (!out.is_same(result)) copy_on_device(result, out);
  return result;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("normal_", normal__ocl);    // ATen's normal_impl_ draws a complex tensor through view_as_real
  OCL_IMPL(m, "normal.Tensor_float", normal_Tensor_float_ocl);
  OCL_IMPL(m, "normal.float_Tensor", normal_float_Tensor_ocl);
  OCL_IMPL(m, "normal.Tensor_Tensor", normal_Tensor_Tensor_ocl);
  OCL_IMPL(m, "normal.Tensor_float_out", normal_Tensor_float_out_ocl);
  OCL_IMPL(m, "normal.float_Tensor_out", normal_float_Tensor_out_ocl);
  OCL_IMPL(m, "normal.Tensor_Tensor_out", normal_Tensor_Tensor_out_ocl);
  m.impl("uniform_", uniform__ocl);  // and uniform_impl_ likewise
  OCL_IMPL(m, "exponential_", exponential__ocl);
  OCL_IMPL(m, "log_normal_", log_normal__ocl);
  OCL_IMPL(m, "cauchy_", cauchy__ocl);
  OCL_IMPL(m, "geometric_", geometric__ocl);
  OCL_IMPL(m, "random_", random__ocl);
  OCL_IMPL(m, "random_.from", random__from_ocl);
  OCL_IMPL(m, "random_.to", random__to_ocl);
  OCL_IMPL(m, "bernoulli_.float", bernoulli__float_ocl);
  OCL_IMPL(m, "bernoulli_.Tensor", bernoulli__Tensor_ocl);
  OCL_IMPL(m, "bernoulli.out", bernoulli_out_ocl);
  OCL_IMPL(m, "native_dropout", native_dropout_ocl);
  OCL_IMPL(m, "native_dropout_backward", native_dropout_backward_ocl);
  OCL_IMPL(m, "multinomial", multinomial_ocl);
  OCL_IMPL(m, "multinomial.out", multinomial_out_ocl);
  OCL_IMPL(m, "randperm.generator_out", randperm_generator_out_ocl);
  OCL_IMPL(m, "_standard_gamma", _standard_gamma_ocl);
  OCL_IMPL(m, "_sample_dirichlet", _sample_dirichlet_ocl);
  OCL_IMPL(m, "poisson", poisson_ocl);
  OCL_IMPL(m, "binomial", binomial_ocl);
}

}  // namespace torch_ocl
