// Reflection and replication padding (F.pad modes "reflect" / "replicate", nn.ReflectionPad*d
// and nn.ReplicationPad*d): reflection_pad{1,2,3}d, replication_pad{1,2,3}d and their backward
// ops, batched or not, any strides (kernels/padding.cl reads and writes through strides).
// Negative pads crop. Argument checks are ATen's meta functions where the op is structured and
// the CPU's own checks otherwise. The forward copies element bits (every dtype the CPU pads);
// the backward gathers per input element (deterministic, no atomics).
#include "../aten/Routing.h"
#include "../aten/Dims5.h"
#include "../aten/OutMeta.h"
#include "../runtime/Launch.h"
#include <ATen/native/Padding.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/reflection_pad1d_backward_meta.h>
#include <ATen/ops/reflection_pad1d_meta.h>
#include <ATen/ops/reflection_pad3d_backward_meta.h>
#include <ATen/ops/reflection_pad3d_meta.h>
#include <ATen/ops/replication_pad1d_backward_meta.h>
#include <ATen/ops/replication_pad1d_meta.h>
#include <ATen/ops/replication_pad2d_meta.h>
#include <ATen/ops/replication_pad3d_meta.h>
#include <torch/library.h>

#include <array>
#include <sstream>
#include <vector>

namespace torch_ocl {
namespace {

constexpr size_t kWG = 256;  // work-group size of padding.cl's grid-stride kernels

// The left pads (before the first element) along D, H, W; padding lists (W, H, D) pairs.
std::array<int64_t, 3> left_pads(c10::IntArrayRef padding, int nd) {
  std::array<int64_t, 3> p{0, 0, 0};
  for (int k = 0; k < nd; ++k) p[2 - k] = padding[2 * k];
  return p;
}

// out = x padded; out has the padded sizes (checked by the caller).
void pad_forward(const at::Tensor& x, c10::IntArrayRef padding, int nd, bool reflect, const at::Tensor& out,
                 const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(x.scalar_type() != at::kBool, "\"", op, "\" not implemented for 'Bool'");
  if (out.numel() == 0) return;
  Device& d = ocl_device(x);
  check_dtype_supported(d, x.scalar_type(), op);
  const char* elem = nullptr;
  switch (x.element_size()) {
    case 1: elem = "uchar"; break;
    case 2: elem = "ushort"; break;
    case 4: elem = "uint"; break;
    case 8: elem = "ulong"; break;
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: ", op, " is not implemented for dtype ", x.scalar_type());
  }
  const Dims5 gx = dims5(x, nd), go = dims5(out, nd);
  const std::array<int64_t, 3> p = left_pads(padding, nd);
  const int64_t total = out.numel();
  Kernel& k = get_kernel(d, "padding", std::string("-DELEM=") + elem, "pad_fwd");
  launch(d, k, grid_stride(total, kWG), Range(kWG), buf(x), buf(out), total, gx.size[1], gx.size[2], gx.size[3],
         gx.size[4], go.size[2], go.size[3], go.size[4], p[0], p[1], p[2], gx.stride[0], gx.stride[1], gx.stride[2],
         gx.stride[3], gx.stride[4], go.stride[0], go.stride[1], go.stride[2], go.stride[3], go.stride[4],
         cl_int(reflect));
}

// The CPU's check that grad_output and the input share a dtype (its kernels' message).
void check_same_dtype(const at::Tensor& grad_output, const at::Tensor& self) {
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "expected scalar type ", grad_output.scalar_type(),
              " but found ", self.scalar_type());
}

// grad_input (self's sizes) = the sum of grad_output over the positions that read each element.
void pad_backward(const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef padding, int nd,
                  bool reflect, const at::Tensor& grad_input, const char* op) {
  check_same_dtype(grad_output, self);
  if (grad_input.numel() == 0) return;
  if (grad_output.numel() == 0) {  // everything cropped away
    grad_input.zero_();
    return;
  }
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"", op, "\" not implemented for '", toString(t), "'");
  Device& d = ocl_device(self);
  check_dtype_supported(d, t, op);
  const Dims5 gy = dims5(grad_output, nd), gx = dims5(grad_input, nd);
  const std::array<int64_t, 3> p = left_pads(padding, nd);
  const int64_t total = grad_input.numel();
  const std::string opts =
      "-DX_KIND=" + std::to_string(storage_kind(t, op)) + (t == at::kDouble ? " -DACC=double" : " -DACC=float");
  Kernel& k = get_kernel(d, "padding", opts, "pad_bwd");
  launch(d, k, grid_stride(total, kWG), Range(kWG), buf(grad_output), buf(grad_input), total, gx.size[1], gx.size[2],
         gx.size[3], gx.size[4], gy.size[2], gy.size[3], gy.size[4], p[0], p[1], p[2], gy.stride[0], gy.stride[1],
         gy.stride[2], gy.stride[3], gy.stride[4], gx.stride[0], gx.stride[1], gx.stride[2], gx.stride[3],
         gx.stride[4], cl_int(reflect));
}

// The padded sizes of self (nd spatial dims) after the CPU's checks of ops without a meta
// function (reflection_pad2d, and the 2-D / 3-D backward ops: `backward`), with its messages.
std::vector<int64_t> padded_sizes(const at::Tensor& self, c10::IntArrayRef padding, int nd, bool reflect,
                                  bool backward) {
  if (backward) {
    // The CPU's backward ops index the input's dims first: too few is its IndexError.
    const int64_t first = self.dim() == nd + 2 ? 2 : 1;
    for (int k = 0; k < nd; ++k) (void)self.size(first + k);
  }
  if (nd == 2)
    at::native::padding::check_valid_input<2>(self, padding);
  else
    at::native::padding::check_valid_input<3>(self, padding);
  static const char* const kNames[3] = {"D", "H", "W"};
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  bool any_positive = false, any_negative = false;
  for (int k = 0; k < nd; ++k) {  // k-th padding pair: dim W, H, D
    const int64_t dim = self.dim() - 1 - k, in = self.size(dim), lo = padding[2 * k], hi = padding[2 * k + 1];
    TORCH_CHECK(!reflect || (lo < in && hi < in), "Argument #", 4 + 2 * k,
                ": Padding size should be less than the corresponding input dimension, but got: padding (", lo,
                ", ", hi, ") at dimension ", dim, " of input ", self.sizes());
    sizes[dim] = in + lo + hi;
    any_positive |= sizes[dim] >= 1;
    any_negative |= sizes[dim] < 0;
  }
  if (!any_positive || any_negative) {
    std::ostringstream in, out;
    for (int k = nd - 1; k >= 0; --k) {
      const int64_t dim = self.dim() - 1 - k;
      in << (k == nd - 1 ? "" : ", ") << kNames[3 - 1 - k] << ": " << self.size(dim);
      out << " " << kNames[3 - 1 - k] << ": " << sizes[dim];
    }
    TORCH_CHECK(false, "input (", in.str(), ") is too small. Calculated output", out.str());
  }
  return sizes;
}

// The backward ops without a meta function: grad_output must have the padded sizes.
void check_backward(const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef padding, int nd,
                    bool reflect) {
  const std::vector<int64_t> expected = padded_sizes(self, padding, nd, reflect, true);
  static const char* const kNames[3] = {"depth", "height", "width"};
  TORCH_CHECK(grad_output.dim() == self.dim(), "gradOutput must have ", self.dim(), " dims, but got ",
              grad_output.sizes());
  for (int64_t k = grad_output.dim() - 1; k >= 0; --k) {
    const int64_t spatial = k - (self.dim() - nd);  // 0..nd-1, or negative for N, C
    TORCH_CHECK(grad_output.size(k) == expected[k], "gradOutput ",
                spatial >= 0 ? kNames[3 - nd + spatial] : (k == self.dim() - nd - 1 ? "channels" : "batch size"),
                " unexpected. Expected: ", expected[k], ", Got: ", grad_output.size(k));
  }
}

// A functional backward op's grad_input: self's sizes and memory format.
at::Tensor grad_input_like(const at::Tensor& self) {
  return at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
}

// grad_input= of a backward op without a meta function: dtype as self's, resized to self's sizes.
void resize_grad_input(const at::Tensor& grad_input, const at::Tensor& self) {
  TORCH_CHECK(grad_input.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", grad_input.scalar_type());
  at::native::resize_output(grad_input, self.sizes());
}

}  // namespace

// reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& reflection_pad1d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  OutMeta<at::meta::structured_reflection_pad1d> m(out);
  m.meta(self, padding);
  pad_forward(self, padding, 1, true, out, "reflection_pad1d");
  return out;
}

// reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& reflection_pad2d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  const std::vector<int64_t> sizes = padded_sizes(self, padding, 2, true, false);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(), " but found ",
              out.scalar_type());
  at::native::resize_output(out, sizes);
  pad_forward(self, padding, 2, true, out, "reflection_pad2d");
  return out;
}

// reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor
at::Tensor reflection_pad2d_ocl(const at::Tensor& self, c10::IntArrayRef padding) {
  const std::vector<int64_t> sizes = padded_sizes(self, padding, 2, true, false);
  at::Tensor out = at::empty(sizes, self.options().memory_format(self.suggest_memory_format()));
  pad_forward(self, padding, 2, true, out, "reflection_pad2d");
  return out;
}

// reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& reflection_pad3d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  OutMeta<at::meta::structured_reflection_pad3d> m(out);
  m.meta(self, padding);
  pad_forward(self, padding, 3, true, out, "reflection_pad3d");
  return out;
}

// replication_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& replication_pad1d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  OutMeta<at::meta::structured_replication_pad1d> m(out);
  m.meta(self, padding);
  pad_forward(self, padding, 1, false, out, "replication_pad1d");
  return out;
}

// replication_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& replication_pad2d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  OutMeta<at::meta::structured_replication_pad2d> m(out);
  m.meta(self, padding);
  pad_forward(self, padding, 2, false, out, "replication_pad2d");
  return out;
}

// replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& replication_pad3d_out_ocl(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  OutMeta<at::meta::structured_replication_pad3d> m(out);
  m.meta(self, padding);
  pad_forward(self, padding, 3, false, out, "replication_pad3d");
  return out;
}

// reflection_pad1d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[2] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& reflection_pad1d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef padding, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_reflection_pad1d_backward> m(grad_input);
  m.meta(grad_output, self, padding);
  pad_backward(grad_output, self, padding, 1, true, grad_input, "reflection_pad1d_backward");
  return grad_input;
}

// reflection_pad2d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[4] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& reflection_pad2d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward(grad_output, self, padding, 2, true);
  resize_grad_input(grad_input, self);
  pad_backward(grad_output, self, padding, 2, true, grad_input, "reflection_pad2d_backward");
  return grad_input;
}

// reflection_pad2d_backward(Tensor grad_output, Tensor self, SymInt[4] padding) -> Tensor
at::Tensor reflection_pad2d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                         c10::IntArrayRef padding) {
  check_backward(grad_output, self, padding, 2, true);
  at::Tensor grad_input = grad_input_like(self);
  pad_backward(grad_output, self, padding, 2, true, grad_input, "reflection_pad2d_backward");
  return grad_input;
}

// reflection_pad3d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[6] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& reflection_pad3d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef padding, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_reflection_pad3d_backward> m(grad_input);
  m.meta(grad_output, self, padding);
  pad_backward(grad_output, self, padding, 3, true, grad_input, "reflection_pad3d_backward");
  return grad_input;
}

// replication_pad1d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[2] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& replication_pad1d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                      c10::IntArrayRef padding, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_replication_pad1d_backward> m(grad_input);
  m.meta(grad_output, self, padding);
  pad_backward(grad_output, self, padding, 1, false, grad_input, "replication_pad1d_backward");
  return grad_input;
}

// replication_pad2d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[4] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& replication_pad2d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                      c10::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward(grad_output, self, padding, 2, false);
  resize_grad_input(grad_input, self);
  pad_backward(grad_output, self, padding, 2, false, grad_input, "replication_pad2d_backward");
  return grad_input;
}

// replication_pad2d_backward(Tensor grad_output, Tensor self, SymInt[4] padding) -> Tensor
at::Tensor replication_pad2d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                          c10::IntArrayRef padding) {
  check_backward(grad_output, self, padding, 2, false);
  at::Tensor grad_input = grad_input_like(self);
  pad_backward(grad_output, self, padding, 2, false, grad_input, "replication_pad2d_backward");
  return grad_input;
}

// replication_pad3d_backward.grad_input(Tensor grad_output, Tensor self, SymInt[6] padding, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& replication_pad3d_backward_grad_input_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                      c10::IntArrayRef padding, at::Tensor& grad_input) {
  check_backward(grad_output, self, padding, 3, false);
  resize_grad_input(grad_input, self);
  pad_backward(grad_output, self, padding, 3, false, grad_input, "replication_pad3d_backward");
  return grad_input;
}

// replication_pad3d_backward(Tensor grad_output, Tensor self, SymInt[6] padding) -> Tensor
at::Tensor replication_pad3d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                          c10::IntArrayRef padding) {
  check_backward(grad_output, self, padding, 3, false);
  at::Tensor grad_input = grad_input_like(self);
  pad_backward(grad_output, self, padding, 3, false, grad_input, "replication_pad3d_backward");
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "reflection_pad1d.out", reflection_pad1d_out_ocl);
  OCL_IMPL(m, "reflection_pad2d.out", reflection_pad2d_out_ocl);
  OCL_IMPL(m, "reflection_pad2d", reflection_pad2d_ocl);
  OCL_IMPL(m, "reflection_pad3d.out", reflection_pad3d_out_ocl);
  OCL_IMPL(m, "replication_pad1d.out", replication_pad1d_out_ocl);
  OCL_IMPL(m, "replication_pad2d.out", replication_pad2d_out_ocl);
  OCL_IMPL(m, "replication_pad3d.out", replication_pad3d_out_ocl);
  OCL_IMPL(m, "reflection_pad1d_backward.grad_input", reflection_pad1d_backward_grad_input_ocl);
  OCL_IMPL(m, "reflection_pad2d_backward.grad_input", reflection_pad2d_backward_grad_input_ocl);
  OCL_IMPL(m, "reflection_pad2d_backward", reflection_pad2d_backward_ocl);
  OCL_IMPL(m, "reflection_pad3d_backward.grad_input", reflection_pad3d_backward_grad_input_ocl);
  OCL_IMPL(m, "replication_pad1d_backward.grad_input", replication_pad1d_backward_grad_input_ocl);
  OCL_IMPL(m, "replication_pad2d_backward.grad_input", replication_pad2d_backward_grad_input_ocl);
  OCL_IMPL(m, "replication_pad2d_backward", replication_pad2d_backward_ocl);
  OCL_IMPL(m, "replication_pad3d_backward.grad_input", replication_pad3d_backward_grad_input_ocl);
  OCL_IMPL(m, "replication_pad3d_backward", replication_pad3d_backward_ocl);
}

}  // namespace torch_ocl
