// Winograd F(2x2, 3x3) convolutions (winograd.cpp, kernels/winograd.cl): 2-D float32
// convolutions with 3x3 filters, stride 1, dilation 1 and one group, at channel counts where
// they beat conv.cl's implicit GEMMs (GPUs) or im2col (CPU devices). conv.cpp asks these first; each returns an
// undefined tensor where it does not apply.
#pragma once
#include <ATen/core/Tensor.h>

namespace torch_ocl {

// y = conv(x, w) + bias (bias may be undefined), x (N, C, H, W), w (K, C, 3, 3), padding
// (pad_h, pad_w), y in memory format mf.
at::Tensor winograd_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, int64_t pad_h,
                            int64_t pad_w, at::MemoryFormat mf);

// The input gradient (N, C, H, W) of that convolution from gy (N, K, P, Q), in memory format mf.
at::Tensor winograd_input_grad(const at::Tensor& gy, const at::Tensor& w, int64_t H, int64_t W, int64_t pad_h,
                               int64_t pad_w, at::MemoryFormat mf);

// The weight gradient (K, C, 3, 3), contiguous, from gy (N, K, P, Q) and x (N, C, H, W).
at::Tensor winograd_weight_grad(const at::Tensor& gy, const at::Tensor& x, int64_t pad_h, int64_t pad_w);

}  // namespace torch_ocl
