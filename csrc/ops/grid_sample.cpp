// Grid sampling (F.grid_sample: grid_sampler_2d for 4-D input, grid_sampler_3d for 5-D, and
// their backward ops) in every interpolation mode (bilinear, nearest, bicubic; 3-D has no
// bicubic), padding mode (zeros, border, reflection) and align_corners setting, on inputs
// and grids of any strides (kernels/grid_sample.cl).
// Argument checks are ATen's own (GridSamplerUtils.h), as on the CPU. The backward sums the
// input gradient with float atomics (see the kernel), so its rounding is not reproducible,
// unless torch.use_deterministic_algorithms asks for a sorted (deterministic) sum.
#include "../aten/Routing.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/Context.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/GridSamplerUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

namespace torch_ocl {
namespace {

constexpr size_t kWG = 64;               // work-group size (grid points) of grid_sample.cl's kernels
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
  return "-DX_KIND=" + std::to_string(storage_kind(t, "grid_sampler")) +
         (t == at::kDouble ? " -DACC=double -DACC_IS_DOUBLE=1" : " -DACC=float");
}

void check_inputs(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding, bool three,
                  const char* op) {
  at::native::check_grid_sampler_common(input, grid);
  if (three)
    at::native::check_grid_sampler_3d(input, grid, mode);
  else
    at::native::check_grid_sampler_2d(input, grid);
  check_modes(mode, padding);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(input.scalar_type()), "\"", op, "\" not implemented for '",
                              toString(input.scalar_type()), "'");
  TORCH_CHECK(grid.scalar_type() == input.scalar_type(), "expected scalar type ", toString(input.scalar_type()),
              " but found ", toString(grid.scalar_type()));
}

// The shape of the (N, C, [D,] H, W) input sampled at the (N, [OD,] OH, OW, 2 or 3) grid:
// (N, C, [OD,] OH, OW).
std::vector<int64_t> sampled_sizes(const at::Tensor& input, const at::Tensor& grid) {
  std::vector<int64_t> sizes{input.size(0), input.size(1)};
  for (int64_t i = 1; i < grid.dim() - 1; ++i) sizes.push_back(grid.size(i));
  return sizes;
}

// The input sampled at the grid (sampled_sizes).
at::Tensor sample_forward(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding,
                          bool align_corners, bool three, const char* op) {
  check_inputs(input, grid, mode, padding, three, op);
  at::Tensor out = at::empty(sampled_sizes(input, grid), input.options());
  if (out.numel() == 0) return out;
  Device& d = ocl_device(input);
  check_dtype_supported(d, input.scalar_type(), op);
  Kernel& k = get_kernel(d, "grid_sample", sample_options(input.scalar_type()),
                         three ? "grid_sampler_3d_fwd" : "grid_sampler_2d_fwd");
  // Few grid points: split the channels among more work-items (each recomputes the weights).
  const int64_t c = input.size(1), points = out.numel() / c;
  const int64_t slices = std::clamp<int64_t>((kTargetItems + points - 1) / points, 1, c);
  const int64_t cps = (c + slices - 1) / slices;
  const Range global(static_cast<size_t>(points), static_cast<size_t>((c + cps - 1) / cps));
  const auto mode_i = static_cast<cl_int>(mode), pad_i = static_cast<cl_int>(padding);
  const auto align_i = static_cast<cl_int>(align_corners);
  const at::Tensor& x = input;
  if (three)
    launch(d, k, global, Range(kWG, 1), buf(x), buf(grid), buf(out), points, c, x.size(2), x.size(3), x.size(4),
           out.size(2), out.size(3), out.size(4), x.stride(0), x.stride(1), x.stride(2), x.stride(3), x.stride(4),
           grid.stride(0), grid.stride(1), grid.stride(2), grid.stride(3), grid.stride(4), out.stride(0),
           out.stride(1), out.stride(2), out.stride(3), out.stride(4), cps, mode_i, pad_i, align_i);
  else
    launch(d, k, global, Range(kWG, 1), buf(x), buf(grid), buf(out), points, c, x.size(2), x.size(3), out.size(2),
           out.size(3), x.stride(0), x.stride(1), x.stride(2), x.stride(3), grid.stride(0), grid.stride(1),
           grid.stride(2), grid.stride(3), out.stride(0), out.stride(1), out.stride(2), out.stride(3), cps, mode_i,
           pad_i, align_i);
  return out;
}

// The input gradient of sample_forward, deterministically: the taps of every grid point
// (grid_sampler_*_bwd_taps: weights and flat positions, T per point) times the output gradient,
// summed per position by scatter_add_, whose deterministic mode sorts by position (the CPU's
// order: grid points, then taps). Outside taps point one past the plane, then cut off.
at::Tensor gather_input_grad(Device& d, const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& grid,
                             int64_t mode, int64_t padding, bool align_corners, bool three) {
  const at::ScalarType acc = float_or_double(input.scalar_type());
  const int64_t n = input.size(0), c = input.size(1), plane = input[0][0].numel();
  const int64_t points = grid.numel() / grid.size(-1), per_n = points / n;
  const int64_t taps = mode == 1 ? 1 : three ? 8 : mode == 2 ? 16 : 4;
  at::Tensor wt = at::empty({n, per_n * taps}, input.options().dtype(acc));
  at::Tensor pos = at::empty({n, per_n * taps}, input.options().dtype(at::kLong));
  Kernel& k = get_kernel(d, "grid_sample", sample_options(input.scalar_type()),
                         three ? "grid_sampler_3d_bwd_taps" : "grid_sampler_2d_bwd_taps");
  const auto mode_i = static_cast<cl_int>(mode), pad_i = static_cast<cl_int>(padding);
  const auto align_i = static_cast<cl_int>(align_corners);
  const at::Tensor& g = grid;
  if (three)
    launch(d, k, Range(static_cast<size_t>(points)), Range(kWG), buf(g), buf(wt), buf(pos), points, input.size(2),
           input.size(3), input.size(4), g.size(1), g.size(2), g.size(3), g.stride(0), g.stride(1), g.stride(2),
           g.stride(3), g.stride(4), mode_i, pad_i, align_i);
  else
    launch(d, k, Range(static_cast<size_t>(points)), Range(kWG), buf(g), buf(wt), buf(pos), points, input.size(2),
           input.size(3), g.size(1), g.size(2), g.stride(0), g.stride(1), g.stride(2), g.stride(3), mode_i, pad_i,
           align_i);
  // (N, C, points, 1) * (N, 1, points, T) -> (N, C, points * T)
  const at::Tensor contrib = (grad_output.reshape({n, c, per_n, 1}).to(acc) * wt.view({n, 1, per_n, taps}))
                                 .reshape({n, c, per_n * taps});
  at::Tensor sums = at::zeros({n, c, plane + 1}, input.options().dtype(acc));
  sums.scatter_add_(2, pos.view({n, 1, per_n * taps}).expand({n, c, per_n * taps}), contrib);
  return sums.narrow(2, 0, plane).reshape(input.sizes());
}

// The gradients of sample_forward: of the input (where output_mask[0]; else undefined) and of
// the grid (always, like the CPU, which computes it even where output_mask[1] is false).
std::tuple<at::Tensor, at::Tensor> sample_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                   const at::Tensor& grid, int64_t mode, int64_t padding,
                                                   bool align_corners, std::array<bool, 2> output_mask,
                                                   bool three, const char* op) {
  check_inputs(input, grid, mode, padding, three, op);
  const int64_t c = input.size(1);
  const std::vector<int64_t> out_sizes = sampled_sizes(input, grid);
  TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(out_sizes), op, "(): expected grad_output of shape ",
              c10::IntArrayRef(out_sizes), ", but got ", grad_output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), "expected scalar type ",
              toString(input.scalar_type()), " but found ", toString(grad_output.scalar_type()));
  const at::ScalarType t = input.scalar_type(), acc = float_or_double(t);
  const bool want_input = output_mask[0];
  at::Tensor grad_grid = at::empty(grid.sizes(), grid.options());
  at::Tensor gin = want_input ? at::zeros(input.sizes(), input.options().dtype(acc)) : at::Tensor();
  const int64_t points = grid.numel() / grid.size(-1);
  if (points > 0) {
    Device& d = ocl_device(input);
    check_dtype_supported(d, t, op);
    // The input gradient by atomic adds in the backward kernel (fast; the summation order
    // varies), or, for torch.use_deterministic_algorithms and devices without 64-bit atomics
    // for double, by a sorted scatter-add of the taps' weights (deterministic).
    const bool atomic_gin = want_input && gin.numel() > 0 && !at::globalContext().deterministicAlgorithms() &&
                            (t != at::kDouble || d.info.has_extension("cl_khr_int64_base_atomics"));
    if (want_input && gin.numel() > 0 && !atomic_gin)
      gin = gather_input_grad(d, grad_output, input, grid, mode, padding, align_corners, three);
    Kernel& k = get_kernel(d, "grid_sample", sample_options(t), three ? "grid_sampler_3d_bwd" : "grid_sampler_2d_bwd");
    const Buf gin_buf = atomic_gin ? buf(gin) : Buf{};
    const auto mode_i = static_cast<cl_int>(mode), pad_i = static_cast<cl_int>(padding);
    const auto align_i = static_cast<cl_int>(align_corners), want_i = static_cast<cl_int>(atomic_gin);
    const at::Tensor &x = input, &gy = grad_output;
    if (three)
      launch(d, k, Range(static_cast<size_t>(points)), Range(kWG), buf(gy), buf(x), buf(grid), gin_buf,
             buf(grad_grid), points, c, x.size(2), x.size(3), x.size(4), grid.size(1), grid.size(2), grid.size(3),
             gy.stride(0), gy.stride(1), gy.stride(2), gy.stride(3), gy.stride(4), x.stride(0), x.stride(1),
             x.stride(2), x.stride(3), x.stride(4), grid.stride(0), grid.stride(1), grid.stride(2), grid.stride(3),
             grid.stride(4), mode_i, pad_i, align_i, want_i);
    else
      launch(d, k, Range(static_cast<size_t>(points)), Range(kWG), buf(gy), buf(x), buf(grid), gin_buf,
             buf(grad_grid), points, c, x.size(2), x.size(3), grid.size(1), grid.size(2), gy.stride(0), gy.stride(1),
             gy.stride(2), gy.stride(3), x.stride(0), x.stride(1), x.stride(2), x.stride(3), grid.stride(0),
             grid.stride(1), grid.stride(2), grid.stride(3), mode_i, pad_i, align_i, want_i);
  }
  at::Tensor grad_input = !want_input ? at::Tensor() : acc == t ? gin : gin.to(t);
  return {grad_input, grad_grid};
}

// grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
at::Tensor grid_sampler_2d_ocl(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding,
                               bool align_corners) {
  return sample_forward(input, grid, mode, padding, align_corners, false, "grid_sampler_2d");
}

// grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> grid_sampler_2d_backward_ocl(const at::Tensor& grad_output,
                                                                const at::Tensor& input, const at::Tensor& grid,
                                                                int64_t mode, int64_t padding, bool align_corners,
                                                                std::array<bool, 2> output_mask) {
  return sample_backward(grad_output, input, grid, mode, padding, align_corners, output_mask, false,
                         "grid_sampler_2d_backward");
}

// grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor
at::Tensor grid_sampler_3d_ocl(const at::Tensor& input, const at::Tensor& grid, int64_t mode, int64_t padding,
                               bool align_corners) {
  return sample_forward(input, grid, mode, padding, align_corners, true, "grid_sampler_3d");
}

// grid_sampler_3d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> grid_sampler_3d_backward_ocl(const at::Tensor& grad_output,
                                                                const at::Tensor& input, const at::Tensor& grid,
                                                                int64_t mode, int64_t padding, bool align_corners,
                                                                std::array<bool, 2> output_mask) {
  return sample_backward(grad_output, input, grid, mode, padding, align_corners, output_mask, true,
                         "grid_sampler_3d_backward");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "grid_sampler_2d", grid_sampler_2d_ocl);
  OCL_IMPL(m, "grid_sampler_2d_backward", grid_sampler_2d_backward_ocl);
  OCL_IMPL(m, "grid_sampler_3d", grid_sampler_3d_ocl);
  OCL_IMPL(m, "grid_sampler_3d_backward", grid_sampler_3d_backward_ocl);
}

}  // namespace torch_ocl
