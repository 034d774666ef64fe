// Grid sampling (F.grid_sample with 4-D input: grid_sampler_2d and its backward) in every
// interpolation mode (bilinear, nearest, bicubic), padding mode (zeros, border, reflection)
// and align_corners setting, on inputs and grids of any strides (kernels/grid_sample.cl).
// Argument checks are ATen's own (GridSamplerUtils.h), as on the CPU. The backward sums the
// input gradient with float atomics (see the kernel), so its rounding is not reproducible.
#include "../runtime/Launch.h"
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>

namespace torch_ocl {
namespace {

constexpr size_t kWG = 64;            // work-group size (grid points) of grid_sample.cl's kernels
constexpr int64_t kTargetItems = 65536;  // the forward splits channels until about this many work-items

// The interpolation and padding integers ATen passes (GridSamplerInterpolation / GridSamplerPadding).
// The CPU does not check them (an unknown one leaves its output uninitialized); here they raise.
void check_modes(int64_t mode, int64_t padding) {
  TORCH_CHECK(mode >= 0 && mode <= 2, "grid_sampler(): unknown interpolation mode ", mode,
              " (expected 0 bilinear, 1 nearest or 2 bicubic)");
  TORCH_CHECK(padding >= 0 && padding <= 2, "grid_sampler(): unknown padding mode ", padding,
              " (expected 0 zeros, 1 border or 2 reflection)");
}

// Build options of grid_sample.cl for input/grid dtype t.
std::string sample_options(at::ScalarType t) {
  const int kind = t == at::kFloat ? 0 : t == at::kDouble ? 1 : t == at::kHalf ? 2 : 3;
  return "-DX_KIND=" + std::to_string(kind) +
         (t == at::kDouble ? " -DACC=double -DACC_IS_DOUBLE=1" : " -DACC=float");
}

void check_inputs(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding, const char* op) {
  at::native::check_grid_sampler_common(input, grid);
  at::native::check_grid_sampler_2d(input, grid);
  check_modes(mode, padding);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"", op, "\" not implemented for '",
                              toString(input.scalar_type()), "'");
  TORCH_CHECK(grid.scalar_type() == input.scalar_type(), "expected scalar type ", toString(input.scalar_type()),
              " but found ", toString(grid.scalar_type()));
}

// grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
at::Tensor grid_sampler_2d_ocl(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding,
                               bool align_corners) {
  check_inputs(input, grid, mode, padding, "grid_sampler_2d");
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t oh = grid.size(1), ow = grid.size(2);
  at::Tensor out = at::empty({n, c, oh, ow}, input.options());
  if (out.numel() == 0) return out;
  Device& d = ocl_device(input);
  check_dtype_supported(d, input.scalar_type(), "grid_sampler_2d");
  Kernel& k = get_kernel(d, "grid_sample", sample_options(input.scalar_type()), "grid_sampler_2d_fwd");
  // Few grid points: split the channels among more work-items (each recomputes the weights).
  const int64_t points = n * oh * ow;
  const int64_t slices = std::clamp<int64_t>((kTargetItems + points - 1) / points, 1, c);
  const int64_t cps = (c + slices - 1) / slices;
  launch(d, k, Range(static_cast<size_t>(points), static_cast<size_t>((c + cps - 1) / cps)), Range(kWG, 1),
         buf(input), buf(grid), buf(out), points, c, h, w, oh, ow, input.stride(0), input.stride(1), input.stride(2),
         input.stride(3), grid.stride(0), grid.stride(1), grid.stride(2), grid.stride(3), out.stride(0),
         out.stride(1), out.stride(2), out.stride(3), cps, static_cast<cl_int>(mode), static_cast<cl_int>(padding),
         static_cast<cl_int>(align_corners));
  return out;
}

// grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward_ocl(const at::Tensor& grad_output,
                                                                const at::Tensor& input, const at::Tensor& grid,
                                                                int64_t mode, int64_t padding, bool align_corners,
                                                                std::array<bool, 2> output_mask) {
  check_inputs(input, grid, mode, padding, "grid_sampler_2d_backward");
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t oh = grid.size(1), ow = grid.size(2);
  TORCH_CHECK(grad_output.dim() == 4 && grad_output.sizes() == c10::IntArrayRef({n, c, oh, ow}),
              "grid_sampler_2d_backward(): expected grad_output of shape ", c10::IntArrayRef({n, c, oh, ow}),
              ", but got ", grad_output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), "expected scalar type ",
              toString(input.scalar_type()), " but found ", toString(grad_output.scalar_type()));
  const at::ScalarType t = input.scalar_type(), acc = t == at::kDouble ? at::kDouble : at::kFloat;
  const bool want_input = output_mask[0];
  // Like the CPU, the grid's gradient is computed even where output_mask[1] is false.
  at::Tensor grad_grid = at::empty({n, oh, ow, 2}, grid.options());
  at::Tensor gin = want_input ? at::zeros({n, c, h, w}, input.options().dtype(acc)) : at::Tensor();
  const int64_t points = n * oh * ow;
  if (points > 0) {
    Device& d = ocl_device(input);
    check_dtype_supported(d, t, "grid_sampler_2d_backward");
    TORCH_CHECK_NOT_IMPLEMENTED(t != at::kDouble || d.info.has_extension("cl_khr_int64_base_atomics"),
                                "torch_ocl: grid_sampler_2d_backward for float64 needs cl_khr_int64_base_atomics, "
                                "which this device lacks");
    Kernel& k = get_kernel(d, "grid_sample", sample_options(t), "grid_sampler_2d_bwd");
    launch(d, k, Range(static_cast<size_t>(points)), Range(kWG), buf(grad_output), buf(input), buf(grid),
           want_input && gin.numel() > 0 ? buf(gin) : Buf{}, buf(grad_grid), points, c, h, w, oh, ow,
           grad_output.stride(0), grad_output.stride(1), grad_output.stride(2), grad_output.stride(3),
           input.stride(0), input.stride(1), input.stride(2), input.stride(3), grid.stride(0), grid.stride(1),
           grid.stride(2), grid.stride(3), static_cast<cl_int>(mode), static_cast<cl_int>(padding),
           static_cast<cl_int>(align_corners), static_cast<cl_int>(want_input));
  }
  at::Tensor grad_input = !want_input ? at::Tensor() : acc == t ? gin : gin.to(t);
  return {grad_input, grad_grid};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", grid_sampler_2d_ocl);
  m.impl("grid_sampler_2d_backward", grid_sampler_2d_backward_ocl);
}

}  // namespace torch_ocl
