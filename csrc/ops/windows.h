// Sliding windows over the spatial dims of (N, C, *S) tensors, for convolutions and
// F.unfold / F.fold: the padded input's windows as one strided view (no copy), and its
// adjoint, which gathers per-window values back into the input (kernels/windows.cl: one
// launch).
#pragma once
#include <ATen/core/Tensor.h>
#include <vector>

namespace torch_ocl {

struct WindowGeom {
  int64_t nd = 0;                           // spatial dims
  std::vector<int64_t> k, stride, dil;      // kernel size, step and dilation per dim
  std::vector<int64_t> pad;                 // zero padding on both sides
  std::vector<int64_t> out;                 // windows per dim
  int64_t taps() const;                     // prod(k)
  int64_t windows() const;                  // prod(out)
};

// (N, C, *S) padded with zeros by g's paddings, as a (N, C, k..., out...) strided view (of x
// itself where there is no padding).
at::Tensor window_view(const at::Tensor& x, const WindowGeom& g);

// The adjoint of window_view: v (N, C, k..., out...) summed into a zero (N, C, *in) tensor,
// the padding cropped.
at::Tensor window_sum_back(const at::Tensor& v, const WindowGeom& g, c10::IntArrayRef in);

// The values of v (1 or nd of them) per spatial dim, as PyTorch's int[N] arguments expand.
std::vector<int64_t> per_dim(c10::IntArrayRef v, int64_t nd, const char* op, const char* what);

// Whether t (N, C, *S) keeps its channels adjacent: unit channel stride over more than one
// channel (channels-last tensors, whose kernels run work-items along channels).
bool unit_channel_stride(const at::Tensor& t);

// Whether kernels may read and write t (N, C, *S) as 4-vectors of channels: unit channel
// stride, C and the other strides multiples of 4 (but those of dims of size 1, never stepped;
// none negative), the byte offset a multiple of 4 elements (aligned vectors), and a sample's
// span within int (the kernels' in-sample offsets).
bool channel_vectors(const at::Tensor& t);

}  // namespace torch_ocl
