// Losses: nll_loss / nll_loss2d forward and backward (ignore_index, class weights, all
// reductions), mse_loss, smooth_l1_loss, huber_loss, binary_cross_entropy, multi_margin_loss
// and multilabel_margin_loss with their backward ops. NLL kernels are in kernels/loss.cl; elementwise loss terms run through the
// pointwise engine and are reduced by loss.cl's deterministic two-stage sum. An out-of-range
// target sets the device's sticky error flag: it surfaces as IndexError at the next
// synchronization point (.item(), .cpu(), torch.ocl.synchronize()), or at the op itself with
// TORCH_OCL_SYNC=1.
#include "../aten/Routing.h"
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/ExpandUtils.h>
#include <ATen/TensorUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/LossMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

constexpr int kMaxWG = 256;  // MAX_WG of loss.cl: work-group size of every loss kernel

std::string options(Device& d, at::ScalarType x, at::ScalarType y, at::ScalarType target, const char* op) {
  check_dtype_supported(d, x, op);
  check_dtype_supported(d, y, op);
  const int xk = storage_kind(x, op), yk = storage_kind(y, op);
  return "-DX_KIND=" + std::to_string(xk) + " -DY_KIND=" + std::to_string(yk) +
         " -DTGT_T=" + (target == at::kByte ? "uchar" : "long") + " -DACC=" + (xk == 1 || yk == 1 ? "double" : "float") +
         " -DMAX_WG=" + std::to_string(kMaxWG);
}

// ---- NLL ---------------------------------------------------------------------------------

// The input seen as [N, C, S] (S spatial positions) with element strides.
struct NllGeom {
  int64_t N = 1, C = 1, S = 1, sn = 0, sc = 1, ss = 0;
};

void check_target_dtype(const at::Tensor& target) {
  TORCH_CHECK(target.scalar_type() == at::kLong || target.scalar_type() == at::kByte,
              "expected target dtype to be Long or Byte, but got ", target.scalar_type());
}

// The class weights as the kernels read them (dense, self's dtype), or undefined.
at::Tensor class_weight(const std::optional<at::Tensor>& w, int64_t C, at::ScalarType dtype) {
  if (!w.has_value() || !w->defined()) return at::Tensor();
  TORCH_CHECK(w->dim() == 1 && w->numel() == C, "weight tensor should be defined either for all ", C,
              " classes or no classes but got weight tensor of shape: ", w->sizes());
  TORCH_CHECK(w->scalar_type() == dtype, "expected scalar type ", dtype, " but found ", w->scalar_type());
  return w->contiguous();
}

// Writes the NLL forward of (x as geometry g, dense target) into output / total_weight.
void nll_forward(const at::Tensor& x, const NllGeom& g, const at::Tensor& target, const at::Tensor& weight,
                 int64_t reduction, int64_t ignore_index, bool per_sample, const at::Tensor& output,
                 const at::Tensor& total_weight, const char* op) {
  Device& d = ocl_device(x);
  const std::string opts = options(d, x.scalar_type(), x.scalar_type(), target.scalar_type(), op);
  const Buf wb = weight.defined() ? buf(weight) : Buf{};
  const int64_t NS = g.N * g.S;
  if (per_sample) {
    // reduction='none' on batched input: the CPU reports total_weight 0.
    total_weight.zero_();
    if (NS == 0) return;
    Kernel& k = get_kernel(d, "loss", opts, "nll_fwd_none");
    launch(d, k, Range(static_cast<size_t>(NS)), Range(kMaxWG), buf(x), buf(target), wb, buf(output), NS, g.S, g.C, g.sn,
           g.sc, g.ss, ignore_index, cl_int(weight.defined()), d.error_buf);
    return;
  }
  Kernel& k = get_kernel(d, "loss", opts, "nll_fwd_reduce");
  launch(d, k, Range(kMaxWG), Range(kMaxWG), NS ? buf(x) : Buf{}, NS ? buf(target) : Buf{}, wb, buf(output),
         buf(total_weight), NS, g.S, g.C, g.sn, g.sc, g.ss, ignore_index, cl_int(weight.defined()),
         cl_int(reduction == at::Reduction::Mean), d.error_buf);
}

void nll_backward(const at::Tensor& grad_out, const NllGeom& g, const at::Tensor& target, const at::Tensor& weight,
                  int64_t reduction, int64_t ignore_index, bool per_sample, const at::Tensor& total_weight,
                  const at::Tensor& grad_input, const char* op) {
  Device& d = ocl_device(grad_input);
  const std::string opts = options(d, grad_input.scalar_type(), grad_input.scalar_type(), target.scalar_type(), op);
  const int64_t NCS = g.N * g.C * g.S;
  if (NCS == 0) return;
  const at::Tensor go = grad_out.contiguous();
  const at::Tensor tw = total_weight.to(grad_input.scalar_type());
  Kernel& k = get_kernel(d, "loss", opts, "nll_bwd");
  launch(d, k, Range(static_cast<size_t>(g.C * g.S), static_cast<size_t>(g.N)), Range(kMaxWG, 1), buf(go), buf(target),
         weight.defined() ? buf(weight) : Buf{}, buf(tw), buf(grad_input), g.N, g.S, g.C, ignore_index, cl_int(weight.defined()), cl_int(per_sample),
         cl_int(reduction == at::Reduction::Mean));
}

// Geometry of a 1-D or 2-D nll_loss input (its own strides; no copy).
NllGeom nll1d_geom(const at::Tensor& self) {
  NllGeom g;
  if (self.dim() == 1) {
    g.C = self.size(0);
    g.sc = self.stride(0);
  } else {
    g.N = self.size(0);
    g.C = self.size(1);
    g.sn = self.stride(0);
    g.sc = self.stride(1);
  }
  return g;
}

void check_nll_inputs(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch_dim || (self.size(0) == target.size(0)), "size mismatch (got input: ", self.sizes(),
              ", target: ", target.sizes(), ")");
  check_target_dtype(target);
}

// Geometry of a 4-D nll_loss2d input [N, C, H, W] (made dense over H, W if needed).
void check_nll2d_inputs(const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of dimension: ",
              target.dim());
  TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got input of dimension: ",
              self.dim());
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "input and target batch or spatial sizes don't match: target ", target.sizes(), ", input ", self.sizes());
  check_target_dtype(target);
}
// [N, C, H, W] as [N, C, S = H*W]; needs H and W to collapse to one stride.
bool nll2d_collapsible(const at::Tensor& x) {
  return x.size(2) == 1 || x.size(3) == 1 || x.stride(2) == x.stride(3) * x.size(3);
}
NllGeom nll2d_geom(const at::Tensor& x) {
  NllGeom g;
  g.N = x.size(0);
  g.C = x.size(1);
  g.S = x.size(2) * x.size(3);
  g.sn = x.stride(0);
  g.sc = x.stride(1);
  g.ss = x.size(3) == 1 ? x.stride(2) : x.stride(3);
  return g;
}
at::Tensor nll2d_addressable(const at::Tensor& x) { return nll2d_collapsible(x) ? x : x.contiguous(); }

// ---- elementwise losses + reduction --------------------------------------------------------

int64_t reduction_checked(int64_t reduction) {
  TORCH_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END, "invalid reduction ", reduction);
  return reduction;
}

// out[] = scale * sum(a) for dense a (deterministic two-stage sum).
void sum_into(const at::Tensor& a, const at::Tensor& out, double scale, const char* op) {
  Device& d = ocl_device(a);
  const std::string opts = options(d, a.scalar_type(), out.scalar_type(), at::kLong, op);
  const int64_t n = a.numel();
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>((n + kMaxWG * 4 - 1) / (kMaxWG * 4),
                                                               4 * static_cast<int64_t>(d.info.compute_units)));
  const at::ScalarType acc = float_or_double(out.scalar_type() == at::kDouble ? at::kDouble : a.scalar_type());
  at::Tensor part = at::empty({parts}, a.options().dtype(acc));
  if (n > 0) {
    Kernel& k1 = get_kernel(d, "loss", opts, "sum_partial");
    launch(d, k1, Range(static_cast<size_t>(parts) * kMaxWG), Range(kMaxWG), buf(a), buf(part), n);
  } else {
    part.zero_();
  }
  Kernel& k2 = get_kernel(d, "loss", opts, "sum_final");
  if (acc == at::kDouble)
    launch(d, k2, Range(kMaxWG), Range(kMaxWG), buf(part), buf(out), parts, scale);
  else
    launch(d, k2, Range(kMaxWG), Range(kMaxWG), buf(part), buf(out), parts, static_cast<float>(scale));
}

void check_floating(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "torch_ocl: ", op,
                              " is not implemented for dtype ", t.scalar_type(), " on ocl");
}

// Computes the elementwise loss `spec` of (a, b[, c]) and reduces it into out.
at::Tensor& elementwise_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, int64_t reduction,
                             const PointwiseSpec& spec, at::Tensor& out, const char* op,
                             c10::ArrayRef<c10::Scalar> scalars = {}) {
  check_floating(a, op);
  reduction_checked(reduction);
  const at::ScalarType dt = a.scalar_type();
  auto build = [&](const at::Tensor& o) {
    at::TensorIteratorConfig cfg;
    cfg.set_check_mem_overlap(true).add_output(o).add_const_input(a).add_const_input(b);
    if (c.defined()) cfg.add_const_input(c);
    return cfg.allow_cpu_scalars(true).promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true).build();
  };
  if (reduction == at::Reduction::None) {
    auto iter = build(out);
    pointwise(iter, spec, scalars);
    return out;
  }
  // Terms are kept in the accumulation type, so 16-bit inputs lose nothing before the sum.
  std::vector<int64_t> shape = at::infer_size(a.sizes(), b.sizes());
  if (c.defined()) shape = at::infer_size(shape, c.sizes());
  at::Tensor terms = at::empty(shape, a.options().dtype(float_or_double(dt)));
  auto iter = build(terms);
  pointwise(iter, spec, scalars);
  at::native::resize_output(out, {});
  const int64_t n = terms.numel();
  const double scale = reduction == at::Reduction::Mean ? (n ? 1.0 / static_cast<double>(n)
                                                             : std::numeric_limits<double>::quiet_NaN())
                                                        : 1.0;
  sum_into(terms, out, scale, op);
  return out;
}

const PointwiseSpec kMseSpec{"nn_mse_loss", "(a - b) * (a - b)", at::ScalarType::Undefined, {}, {}};
// The CPU's formula (elementwise.cl's ew_bce): log terms clamped at -100 so that x = 0 or 1
// gives a finite loss; an input or target outside [0, 1] reports the CPU's error.
const PointwiseSpec kBceSpec{"nn_bce_loss", "ew_bce(a, b, err_flag)", at::ScalarType::Undefined, {}, {}, true};
const PointwiseSpec kBceWSpec{"nn_bce_loss_w", "ew_bce(a, b, err_flag) * c", at::ScalarType::Undefined, {}, {}, true};

// grad_input = spec(self, target, grad_output) of an elementwise loss's backward: a = self,
// b = target, c = grad_output, s0 = the reduction's scale (1/numel for Mean), s1.. = `extra`.
at::Tensor& elementwise_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                      int64_t reduction, const PointwiseSpec& spec, at::Tensor& grad_input,
                                      const char* op, std::vector<c10::Scalar> extra = {}) {
  check_floating(self, op);
  const double norm = reduction_checked(reduction) == at::Reduction::Mean ? 1.0 / static_cast<double>(self.numel())
                                                                         : 1.0;
  auto iter = at::TensorIteratorConfig()
                  .set_check_mem_overlap(true)
                  .add_output(grad_input)
                  .add_const_input(self)
                  .add_const_input(target)
                  .add_const_input(grad_output)
                  .promote_inputs_to_common_dtype(true)
                  .cast_common_dtype_to_outputs(true)
                  .build();
  extra.insert(extra.begin(), c10::Scalar(norm));
  pointwise(iter, spec, extra);
  return grad_input;
}

// The CPU's binary iterator for a loss's out: any dtype its result type casts to safely.
void check_loss_out(const at::Tensor& self, const at::Tensor& target, const at::Tensor& out) {
  const at::ScalarType rt = at::result_type(self, target);
  TORCH_CHECK(at::canCast(rt, out.scalar_type()), "result type ", rt, " can't be cast to the desired output type ",
              out.scalar_type());
}

// smooth_l1 (beta; 0 is the L1 loss) and huber (delta > 0) terms and derivatives, as the CPU's.
const PointwiseSpec kSmoothL1Spec{"nn_smooth_l1_loss",
                                  "CT z = fabs(a - b); r0 = z < s0 ? CTC(0.5) * z * z / s0 : z - CTC(0.5) * s0;"};
const PointwiseSpec kSmoothL1BwdSpec{
    "nn_smooth_l1_loss_backward", "CT x = a - b; r0 = x <= -s1 ? -s0 * c : (x >= s1 ? s0 * c : s0 * x * c / s1);"};
const PointwiseSpec kHuberSpec{"nn_huber_loss",
                               "CT z = fabs(a - b); r0 = z < s0 ? CTC(0.5) * z * z : s0 * (z - CTC(0.5) * s0);"};
const PointwiseSpec kHuberBwdSpec{
    "nn_huber_loss_backward", "CT x = a - b; r0 = x <= -s1 ? -s0 * c * s1 : (x >= s1 ? s0 * c * s1 : s0 * x * c);"};

}  // namespace

// nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_output_ocl(const at::Tensor& self, const at::Tensor& target,
                                                                 const std::optional<at::Tensor>& weight_opt,
                                                                 int64_t reduction, int64_t ignore_index,
                                                                 at::Tensor& output, at::Tensor& total_weight) {
  check_nll_inputs(self, target);
  reduction_checked(reduction);
  const NllGeom g = nll1d_geom(self);
  const at::Tensor weight = class_weight(weight_opt, g.C, self.scalar_type());
  const bool per_sample = reduction == at::Reduction::None && self.dim() == 2;
  // ATen's meta function: the outs' dtypes and devices checked, their sizes set, as on the CPU.
  OutMeta<at::meta::structured_nll_loss_forward, 2> m(output, total_weight);
  m.meta(self, target, weight_opt.has_value() && weight_opt->defined() ? at::OptionalTensorRef(*weight_opt)
                                                                     : at::OptionalTensorRef(),
         reduction, ignore_index);
  nll_forward(self, g, target.contiguous(), weight, reduction, ignore_index, per_sample, output, total_weight,
              "nll_loss_forward");
  return {output, total_weight};
}

// nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& nll_loss_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
                                             int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight,
                                             at::Tensor& grad_input) {
  check_nll_inputs(self, target);
  reduction_checked(reduction);
  NllGeom g = nll1d_geom(self);
  const at::Tensor weight = class_weight(weight_opt, g.C, self.scalar_type());
  const bool per_sample = reduction == at::Reduction::None && self.dim() == 2;
  if (per_sample) {
    TORCH_CHECK(grad_output.dim() == 1 && grad_output.size(0) == g.N,
                "Expected a tensor of dimension 1 and tensor.size[0] == ", g.N, " but got: dimension ",
                grad_output.dim(), " and tensor.size[0] == ", grad_output.dim() ? grad_output.size(0) : 0);
  } else {
    TORCH_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1,
                "Expected a single element grad_output tensor, but got: ", grad_output.sizes());
  }
  TORCH_CHECK(total_weight.numel() == 1, "expected total_weight to be a single element tensor, got: ",
              total_weight.sizes(), " (", total_weight.numel(), " elements)");
  at::native::resize_output(grad_input, self.sizes());
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty(self.sizes(), grad_input.options());
  nll_backward(grad_output, g, target.contiguous(), weight, reduction, ignore_index, per_sample, total_weight, gi,
               "nll_loss_backward");
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  return grad_input;
}

// nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_output_ocl(const at::Tensor& self, const at::Tensor& target,
                                                                   const std::optional<at::Tensor>& weight_opt,
                                                                   int64_t reduction, int64_t ignore_index,
                                                                   at::Tensor& output, at::Tensor& total_weight) {
  check_nll2d_inputs(self, target);
  reduction_checked(reduction);
  const at::Tensor x = nll2d_addressable(self);
  const NllGeom g = nll2d_geom(x);
  const at::Tensor weight = class_weight(weight_opt, g.C, self.scalar_type());
  const bool per_sample = reduction == at::Reduction::None;
  if (per_sample) at::native::resize_output(output, target.sizes());
  else at::native::resize_output(output, {});
  at::native::resize_output(total_weight, {});
  at::Tensor out = (!per_sample || output.is_contiguous()) ? output : at::empty(target.sizes(), output.options());
  nll_forward(x, g, target.contiguous(), weight, reduction, ignore_index, per_sample, out, total_weight,
              "nll_loss2d_forward");
  if (!out.is_same(output)) output.copy_(out);
  return {output, total_weight};
}

// nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)
std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward_ocl(const at::Tensor& self, const at::Tensor& target,
                                                          const std::optional<at::Tensor>& weight, int64_t reduction,
                                                          int64_t ignore_index) {
  at::Tensor output = at::empty({0}, self.options()), total_weight = at::empty({}, self.options());
  nll_loss2d_forward_output_ocl(self, target, weight, reduction, ignore_index, output, total_weight);
  return {output, total_weight};
}

// nll_loss2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& nll_loss2d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                               const at::Tensor& target, const std::optional<at::Tensor>& weight_opt,
                                               int64_t reduction, int64_t ignore_index,
                                               const at::Tensor& total_weight, at::Tensor& grad_input) {
  check_nll2d_inputs(self, target);
  reduction_checked(reduction);
  NllGeom g = nll2d_geom(self);
  const at::Tensor weight = class_weight(weight_opt, g.C, self.scalar_type());
  const bool per_sample = reduction == at::Reduction::None;
  if (per_sample) {
    TORCH_CHECK(grad_output.sizes() == target.sizes(), "nll_loss2d_backward: grad_output shape ", grad_output.sizes(),
                " does not match target shape ", target.sizes());
  } else {
    TORCH_CHECK(grad_output.numel() == 1, "Expected a single element grad_output tensor, but got: ",
                grad_output.sizes());
  }
  TORCH_CHECK(total_weight.numel() == 1, "expected total_weight to be a single element tensor, got: ",
              total_weight.sizes(), " (", total_weight.numel(), " elements)");
  at::native::resize_output(grad_input, self.sizes());
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty(self.sizes(), grad_input.options());
  nll_backward(grad_output, g, target.contiguous(), weight, reduction, ignore_index, per_sample, total_weight, gi,
               "nll_loss2d_backward");
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  return grad_input;
}

// nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor
at::Tensor nll_loss2d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                   const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                   const at::Tensor& total_weight) {
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  return nll_loss2d_backward_grad_input_ocl(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                                            grad_input);
}

// mse_loss.out(Tensor self, Tensor target, int reduction=Mean, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& mse_loss_out_ocl(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out) {
  check_loss_out(self, target, out);
  return elementwise_loss(self, target, at::Tensor(), reduction, kMseSpec, out, "mse_loss");
}

// mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& mse_loss_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& target, int64_t reduction, at::Tensor& grad_input) {
  static const PointwiseSpec spec{"nn_mse_loss_backward", "CTC(2) * s0 * (a - b) * c"};
  return elementwise_loss_backward(grad_output, self, target, reduction, spec, grad_input, "mse_loss_backward");
}

// mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor
at::Tensor mse_loss_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                 int64_t reduction) {
  at::Tensor grad_input = at::empty({0}, self.options());
  mse_loss_backward_grad_input_ocl(grad_output, self, target, reduction, grad_input);
  return grad_input;
}

// smooth_l1_loss.out(Tensor self, Tensor target, int reduction=Mean, float beta=1., *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& smooth_l1_loss_out_ocl(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                                   at::Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  check_loss_out(self, target, out);
  return elementwise_loss(self, target, at::Tensor(), reduction, kSmoothL1Spec, out, "smooth_l1_loss", {beta});
}

// smooth_l1_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta, *,
//                                    Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& smooth_l1_loss_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                   const at::Tensor& target, int64_t reduction, double beta,
                                                   at::Tensor& grad_input) {
  return elementwise_loss_backward(grad_output, self, target, reduction, kSmoothL1BwdSpec, grad_input,
                                   "smooth_l1_loss_backward", {beta});
}

// huber_loss.out(Tensor self, Tensor target, int reduction=Mean, float delta=1., *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& huber_loss_out_ocl(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                               at::Tensor& out) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  check_loss_out(self, target, out);
  return elementwise_loss(self, target, at::Tensor(), reduction, kHuberSpec, out, "huber_loss", {delta});
}

// huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.) -> Tensor (not a structured op)
at::Tensor huber_loss_ocl(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::result_type(self, target)));
  return huber_loss_out_ocl(self, target, reduction, delta, out);
}

// huber_loss_backward.out(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta, *,
//                         Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& huber_loss_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double delta, at::Tensor& grad_input) {
  return elementwise_loss_backward(grad_output, self, target, reduction, kHuberBwdSpec, grad_input,
                                   "huber_loss_backward", {delta});
}

// The CPU's dtype rule for binary_cross_entropy and its backward: the target (and the out) in
// self's dtype, with its iterator's message (a weight may differ).
void check_dtype_as_self(const at::Tensor& self, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() == self.scalar_type(), "Found dtype ", t.scalar_type(), " but expected ",
              self.scalar_type());
}

// binary_cross_entropy.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, *, Tensor(a!) out) -> Tensor(a!)
// An input or target outside [0, 1] (NaN included) raises the CPU's RuntimeError, at the next
// synchronization point (the device's sticky error flag; at the op with TORCH_OCL_SYNC=1).
at::Tensor& binary_cross_entropy_out_ocl(const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out) {
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. ",
              "Please ensure they have the same size.");
  check_dtype_as_self(self, target);
  check_dtype_as_self(self, out);
  const bool has_w = weight.has_value() && weight->defined();
  return elementwise_loss(self, target, has_w ? *weight : at::Tensor(), reduction, has_w ? kBceWSpec : kBceSpec, out,
                          "binary_cross_entropy");
}

// binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor
at::Tensor binary_cross_entropy_ocl(const at::Tensor& self, const at::Tensor& target,
                                    const std::optional<at::Tensor>& weight, int64_t reduction) {
  at::Tensor out = at::empty({0}, self.options());
  binary_cross_entropy_out_ocl(self, target, weight, reduction, out);
  return out;
}

// binary_cross_entropy_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& binary_cross_entropy_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                         const at::Tensor& target,
                                                         const std::optional<at::Tensor>& weight, int64_t reduction,
                                                         at::Tensor& grad_input) {
  check_floating(self, "binary_cross_entropy_backward");
  check_dtype_as_self(self, target);
  const double norm = reduction_checked(reduction) == at::Reduction::Mean ? 1.0 / static_cast<double>(self.numel()) : 1.0;
  const bool has_w = weight.has_value() && weight->defined();
  at::TensorIteratorConfig cfg;
  cfg.set_check_mem_overlap(true).add_output(grad_input).add_const_input(grad_output).add_const_input(self)
      .add_const_input(target);
  if (has_w) cfg.add_const_input(*weight);
  auto iter = cfg.promote_inputs_to_common_dtype(true).cast_common_dtype_to_outputs(true).build();
  // The CPU's formula: the denominator is clamped at 1e-12 so x = 0 or 1 stays finite.
  static const PointwiseSpec spec{"nn_bce_backward", "s0 * a * (b - c) / fmax(((CT)1 - b) * b, (CT)1e-12)",
                                  at::ScalarType::Undefined, {}, {}};
  static const PointwiseSpec spec_w{"nn_bce_backward_w", "s0 * a * (b - c) / fmax(((CT)1 - b) * b, (CT)1e-12) * d",
                                    at::ScalarType::Undefined, {}, {}};
  pointwise(iter, has_w ? spec_w : spec, {c10::Scalar(norm)});
  return grad_input;
}

// binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor
at::Tensor binary_cross_entropy_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& target, const std::optional<at::Tensor>& weight,
                                             int64_t reduction) {
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  return binary_cross_entropy_backward_grad_input_ocl(grad_output, self, target, weight, reduction, grad_input);
}

// ---- multi_margin_loss / multilabel_margin_loss ----------------------------------------------
// One work-group per sample (loss.cl). The CPU's checks run first, with its messages; the
// target range, which the CPU checks on the host, goes through the device error flag
// (RuntimeError at the next synchronization point). Float and double, as on the CPU.

namespace {

// The CPU dispatches these losses for float and double only.
void check_margin_dtype(const at::Tensor& self, const char* op) {
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t == at::kFloat || t == at::kDouble, "\"", op, "\" not implemented for '", toString(t),
                              "'");
}
// The CPU's message for a tensor of another dtype than expected (its data_ptr<T>() check).
void check_scalar_type(const at::Tensor& t, at::ScalarType expected) {
  TORCH_CHECK(t.scalar_type() == expected, "expected scalar type ", expected, " but found ", t.scalar_type());
}

// A sample row of a margin loss input: nframe rows of dim classes at element strides (sn, sc).
struct MarginGeom {
  int64_t nframe = 1, dim = 1, sn = 0, sc = 0;
};
MarginGeom margin_geom(const at::Tensor& self) {
  MarginGeom g;
  if (self.dim() == 1) {
    g.dim = self.size(0);
    g.sc = self.stride(0);
  } else if (self.dim() == 2) {
    g.nframe = self.size(0);
    g.dim = self.size(1);
    g.sn = self.stride(0);
    g.sc = self.stride(1);
  }
  return g;
}

// Work-group size for rows of dim classes: its next power of two, at most kMaxWG.
size_t row_wg(int64_t dim) {
  size_t l = 1;
  while (static_cast<int64_t>(l) < dim && l < static_cast<size_t>(kMaxWG)) l <<= 1;
  return l;
}

// Sizes a margin loss's output: one loss per sample ([nframe]) when per_sample, else a scalar.
// Returns false when there are no elements to compute, after setting a reduced loss of no
// samples: 0 for 'sum', NaN for 'mean' (the CPU leaves it uninitialized).
bool size_margin_output(const at::Tensor& out, bool per_sample, int64_t nframe, int64_t numel, int64_t reduction) {
  at::native::resize_output(out, per_sample ? c10::IntArrayRef{nframe} : c10::IntArrayRef{});
  if (numel != 0) return true;
  if (reduction != at::Reduction::None)
    out.fill_(reduction == at::Reduction::Mean ? std::numeric_limits<double>::quiet_NaN() : 0.0);
  return false;
}

// Runs per-sample kernel `name` writing per-sample losses: straight into out (reduction 'none')
// or into an ACC buffer summed into out (scaled by 1 / nframe for 'mean'). `launch_rows(k, y, ys)`
// launches k with the per-sample output buffer y and its element stride ys.
template <typename F>
void margin_forward(Device& d, const at::Tensor& self, const MarginGeom& g, int64_t reduction, const at::Tensor& out,
                    const char* name, const char* op, F&& launch_rows) {
  const at::ScalarType t = self.scalar_type();
  if (reduction == at::Reduction::None) {
    Kernel& k = get_kernel(d, "loss", options(d, t, t, at::kLong, op), name);
    launch_rows(k, buf(out), out.dim() ? out.stride(0) : int64_t(0));
    return;
  }
  at::Tensor terms = at::empty({g.nframe}, self.options().dtype(float_or_double(t)));
  Kernel& k = get_kernel(d, "loss", options(d, t, terms.scalar_type(), at::kLong, op), name);
  launch_rows(k, buf(terms), int64_t(1));
  sum_into(terms, out, reduction == at::Reduction::Mean ? 1.0 / static_cast<double>(g.nframe) : 1.0, op);
}

// The CPU's p: an integer 1 or 2 (Scalar::toInt, so 1.5 is 1).
int p_checked(const c10::Scalar& p) {
  const int pi = p.toInt();
  TORCH_CHECK(pi == 1 || pi == 2, "only p == 1 and p == 2 supported");
  return pi;
}

at::Tensor margin_weight(const std::optional<at::Tensor>& weight, const at::Tensor& self) {
  if (!weight.has_value() || !weight->defined()) return at::Tensor();
  check_scalar_type(*weight, self.scalar_type());
  return weight->contiguous();
}

// grad_output of a margin loss's backward: one value for every sample (stride 0), or, for
// reduction 'none' on a grad_output with dims, one per sample: returns its element stride.
int64_t grad_output_stride(const at::Tensor& grad_output, int64_t reduction, int64_t nframe) {
  if (reduction != at::Reduction::None || grad_output.dim() == 0) {
    TORCH_CHECK(grad_output.numel() >= 1, "expected a grad_output with an element, but got: ", grad_output.sizes());
    return 0;
  }
  at::check_dim_size(grad_output, 1, 0, nframe);
  return grad_output.stride(0);
}

}  // namespace

// multi_margin_loss.out(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=Mean, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& multi_margin_loss_out_ocl(const at::Tensor& self, const at::Tensor& target, const c10::Scalar& p,
                                      const c10::Scalar& margin, const std::optional<at::Tensor>& weight,
                                      int64_t reduction, at::Tensor& out) {
  const int pi = p_checked(p);
  int64_t nframe = 0, dim = 0;
  at::native::multi_margin_loss_shape_check(nframe, dim, self.dim(), self, target, weight);
  check_margin_dtype(self, "multi_margin_loss");
  check_scalar_type(target, at::kLong);
  check_scalar_type(out, self.scalar_type());
  const at::Tensor w = margin_weight(weight, self);
  const bool per_sample = reduction == at::Reduction::None && target.dim() > 0;
  if (!size_margin_output(out, per_sample, nframe, self.numel(), reduction)) return out;
  Device& d = ocl_device(self);
  const MarginGeom g = margin_geom(self);
  const at::Tensor tgt = target.contiguous();
  const Buf wb = w.defined() ? buf(w) : Buf{};
  const size_t wg = row_wg(g.dim);
  const cl_int has_w = w.defined(), p_i = pi;
  margin_forward(d, self, g, reduction, out, "multi_margin_fwd", "multi_margin_loss",
                 [&](Kernel& k, const Buf& y, int64_t ys) {
                   if (self.scalar_type() == at::kDouble)
                     launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(self), buf(tgt), wb, y, g.dim, g.sn, g.sc,
                            ys, has_w, p_i, margin.toDouble(), d.error_buf);
                   else
                     launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(self), buf(tgt), wb, y, g.dim, g.sn, g.sc,
                            ys, has_w, p_i, margin.toFloat(), d.error_buf);
                 });
  return out;
}

// multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=Mean) -> Tensor
at::Tensor multi_margin_loss_ocl(const at::Tensor& self, const at::Tensor& target, const c10::Scalar& p,
                                 const c10::Scalar& margin, const std::optional<at::Tensor>& weight,
                                 int64_t reduction) {
  at::Tensor out = at::empty({0}, self.options());
  return multi_margin_loss_out_ocl(self, target, p, margin, weight, reduction, out);
}

// multi_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, Tensor? weight=None, int reduction=Mean, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& multi_margin_loss_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                      const at::Tensor& target, const c10::Scalar& p,
                                                      const c10::Scalar& margin,
                                                      const std::optional<at::Tensor>& weight, int64_t reduction,
                                                      at::Tensor& grad_input) {
  const int pi = p_checked(p);
  int64_t nframe = 0, dim = 0;
  at::native::multi_margin_loss_shape_check(nframe, dim, self.dim(), self, target, weight);
  check_margin_dtype(self, "multi_margin_loss_backward");
  check_scalar_type(target, at::kLong);
  check_scalar_type(grad_output, self.scalar_type());
  check_scalar_type(grad_input, self.scalar_type());
  const at::Tensor w = margin_weight(weight, self);
  at::native::resize_output(grad_input, self.sizes());
  TORCH_CHECK(grad_input.is_contiguous(), "grad_input must be contiguous");
  if (self.numel() == 0) return grad_input;
  const int64_t gos = grad_output_stride(grad_output, reduction, nframe);
  Device& d = ocl_device(self);
  const MarginGeom g = margin_geom(self);
  const at::Tensor tgt = target.contiguous();
  const Buf wb = w.defined() ? buf(w) : Buf{};
  const size_t wg = row_wg(g.dim);
  const cl_int has_w = w.defined(), p_i = pi;
  const double gscale = 1.0 / static_cast<double>(reduction == at::Reduction::Mean ? nframe * dim : dim);
  const at::ScalarType t = self.scalar_type();
  Kernel& k = get_kernel(d, "loss", options(d, t, t, at::kLong, "multi_margin_loss_backward"), "multi_margin_bwd");
  if (t == at::kDouble)
    launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(grad_output), buf(self), buf(tgt), wb, buf(grad_input), g.dim,
           g.sn, g.sc, gos, has_w, p_i, margin.toDouble(), gscale, d.error_buf);
  else
    launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(grad_output), buf(self), buf(tgt), wb, buf(grad_input), g.dim,
           g.sn, g.sc, gos, has_w, p_i, margin.toFloat(), static_cast<float>(gscale), d.error_buf);
  return grad_input;
}

// multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, Tensor? weight=None, int reduction=Mean) -> Tensor
at::Tensor multi_margin_loss_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                          const at::Tensor& target, const c10::Scalar& p, const c10::Scalar& margin,
                                          const std::optional<at::Tensor>& weight, int64_t reduction) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return multi_margin_loss_backward_grad_input_ocl(grad_output, self, target, p, margin, weight, reduction,
                                                   grad_input);
}

// multilabel_margin_loss_forward.output(Tensor self, Tensor target, int reduction, *, Tensor(a!) output, Tensor(b!) is_target) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> multilabel_margin_loss_forward_output_ocl(const at::Tensor& self,
                                                                               const at::Tensor& target,
                                                                               int64_t reduction, at::Tensor& output,
                                                                               at::Tensor& is_target) {
  int64_t nframe = 0, dim = 0;
  at::native::multilabel_margin_loss_shape_check(nframe, dim, self.dim(), self, target);
  check_margin_dtype(self, "multilabel_margin_loss_forward");
  check_scalar_type(target, at::kLong);
  check_scalar_type(output, self.scalar_type());
  check_scalar_type(is_target, self.scalar_type());
  at::native::resize_output(is_target, target.sizes());
  TORCH_CHECK(is_target.is_contiguous(), "is_target must be contiguous");
  // A scalar for 0-D and 1-D inputs, even for reduction 'none' (as on the CPU).
  const bool per_sample = reduction == at::Reduction::None && target.dim() > 1;
  if (!size_margin_output(output, per_sample, nframe, self.numel(), reduction)) return {output, is_target};
  Device& d = ocl_device(self);
  const MarginGeom g = margin_geom(self);
  const at::Tensor tgt = target.contiguous();
  const size_t wg = row_wg(g.dim);
  margin_forward(d, self, g, reduction, output, "multilabel_margin_fwd",
                 "multilabel_margin_loss_forward", [&](Kernel& k, const Buf& y, int64_t ys) {
                   launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(self), buf(tgt), y, buf(is_target), g.dim,
                          g.sn, g.sc, ys, d.error_buf);
                 });
  return {output, is_target};
}

// multilabel_margin_loss_forward(Tensor self, Tensor target, int reduction) -> (Tensor output, Tensor is_target)
std::tuple<at::Tensor, at::Tensor> multilabel_margin_loss_forward_ocl(const at::Tensor& self, const at::Tensor& target,
                                                                      int64_t reduction) {
  at::Tensor output = at::empty({0}, self.options()), is_target = at::empty({0}, self.options());
  multilabel_margin_loss_forward_output_ocl(self, target, reduction, output, is_target);
  return {output, is_target};
}

// multilabel_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, Tensor is_target, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& multilabel_margin_loss_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                           const at::Tensor& target, int64_t reduction,
                                                           const at::Tensor& is_target, at::Tensor& grad_input) {
  int64_t nframe = 0, dim = 0;
  at::native::multilabel_margin_loss_shape_check(nframe, dim, self.dim(), self, target);
  at::checkSameSize("multilabel_margin_loss_backward_cpu_template", at::TensorArg(target, "target", 3),
                    at::TensorArg(is_target, "is_target", 5));
  check_margin_dtype(self, "multilabel_margin_loss_backward");
  check_scalar_type(target, at::kLong);
  check_scalar_type(grad_output, self.scalar_type());
  check_scalar_type(is_target, self.scalar_type());
  check_scalar_type(grad_input, self.scalar_type());
  at::native::resize_output(grad_input, self.sizes());
  TORCH_CHECK(grad_input.is_contiguous(), "grad_input must be contiguous");
  if (self.numel() == 0) return grad_input;
  const int64_t gos = grad_output_stride(grad_output, reduction, nframe);
  Device& d = ocl_device(self);
  const MarginGeom g = margin_geom(self);
  const at::Tensor tgt = target.contiguous(), ist = is_target.contiguous();
  const size_t wg = row_wg(g.dim);
  const double gscale = 1.0 / static_cast<double>(reduction == at::Reduction::Mean ? nframe * dim : dim);
  const at::ScalarType t = self.scalar_type();
  Kernel& k =
      get_kernel(d, "loss", options(d, t, t, at::kLong, "multilabel_margin_loss_backward"), "multilabel_margin_bwd");
  if (t == at::kDouble)
    launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(grad_output), buf(self), buf(tgt), buf(ist), buf(grad_input),
           g.dim, g.sn, g.sc, gos, gscale, d.error_buf);
  else
    launch(d, k, Range(wg, g.nframe), Range(wg, 1), buf(grad_output), buf(self), buf(tgt), buf(ist), buf(grad_input),
           g.dim, g.sn, g.sc, gos, static_cast<float>(gscale), d.error_buf);
  return grad_input;
}

// multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, Tensor is_target) -> Tensor
at::Tensor multilabel_margin_loss_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                               const at::Tensor& target, int64_t reduction,
                                               const at::Tensor& is_target) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return multilabel_margin_loss_backward_grad_input_ocl(grad_output, self, target, reduction, is_target, grad_input);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "nll_loss_forward.output", nll_loss_forward_output_ocl);
  OCL_IMPL(m, "nll_loss_backward.grad_input", nll_loss_backward_grad_input_ocl);
  OCL_IMPL(m, "nll_loss2d_forward.output", nll_loss2d_forward_output_ocl);
  OCL_IMPL(m, "nll_loss2d_forward", nll_loss2d_forward_ocl);
  OCL_IMPL(m, "nll_loss2d_backward.grad_input", nll_loss2d_backward_grad_input_ocl);
  OCL_IMPL(m, "nll_loss2d_backward", nll_loss2d_backward_ocl);
  OCL_IMPL(m, "mse_loss.out", mse_loss_out_ocl);
  OCL_IMPL(m, "mse_loss_backward.grad_input", mse_loss_backward_grad_input_ocl);
  OCL_IMPL(m, "mse_loss_backward", mse_loss_backward_ocl);
  OCL_IMPL(m, "smooth_l1_loss.out", smooth_l1_loss_out_ocl);
  OCL_IMPL(m, "smooth_l1_loss_backward.grad_input", smooth_l1_loss_backward_grad_input_ocl);
  OCL_IMPL(m, "huber_loss", huber_loss_ocl);
  OCL_IMPL(m, "huber_loss.out", huber_loss_out_ocl);
  OCL_IMPL(m, "huber_loss_backward.out", huber_loss_backward_out_ocl);
  OCL_IMPL(m, "binary_cross_entropy.out", binary_cross_entropy_out_ocl);
  OCL_IMPL(m, "binary_cross_entropy", binary_cross_entropy_ocl);
  OCL_IMPL(m, "binary_cross_entropy_backward.grad_input", binary_cross_entropy_backward_grad_input_ocl);
  OCL_IMPL(m, "binary_cross_entropy_backward", binary_cross_entropy_backward_ocl);
  OCL_IMPL(m, "multi_margin_loss.out", multi_margin_loss_out_ocl);
  OCL_IMPL(m, "multi_margin_loss", multi_margin_loss_ocl);
  OCL_IMPL(m, "multi_margin_loss_backward.grad_input", multi_margin_loss_backward_grad_input_ocl);
  OCL_IMPL(m, "multi_margin_loss_backward", multi_margin_loss_backward_ocl);
  OCL_IMPL(m, "multilabel_margin_loss_forward.output", multilabel_margin_loss_forward_output_ocl);
  OCL_IMPL(m, "multilabel_margin_loss_forward", multilabel_margin_loss_forward_ocl);
  OCL_IMPL(m, "multilabel_margin_loss_backward.grad_input", multilabel_margin_loss_backward_grad_input_ocl);
  OCL_IMPL(m, "multilabel_margin_loss_backward", multilabel_margin_loss_backward_ocl);
}

}  // namespace torch_ocl
