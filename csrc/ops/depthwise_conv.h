// Depthwise convolutions (depthwise_conv.cpp, kernels/depthwise_conv.cl): 2-D float32/float64
// convolutions whose groups are their input channels, one input channel per filter (any channel
// multiplier, stride, padding, dilation; filters of at most 64 taps). conv.cpp asks these before
// its GEMM paths, whose products would have a depth of one channel; each returns an undefined
// tensor where it does not apply.
#pragma once
#include "windows.h"
#include <ATen/core/Tensor.h>

namespace torch_ocl {

// y = conv(x, w) + bias (bias may be undefined), in memory format mf.
at::Tensor depthwise_conv_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                  const WindowGeom& g, int64_t groups, at::MemoryFormat mf);

// The input gradient (N, C, *in) of that convolution from gy, in memory format mf.
at::Tensor depthwise_conv_input_grad(const at::Tensor& gy, const at::Tensor& w, const WindowGeom& g, int64_t groups,
                                     c10::IntArrayRef in, at::MemoryFormat mf);

// The weight gradient, w's shape (contiguous).
at::Tensor depthwise_conv_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                      const WindowGeom& g, int64_t groups);

}  // namespace torch_ocl
