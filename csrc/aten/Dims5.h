// Tensors with 1-3 spatial dims seen as (N, C, D, H, W), so that one kernel indexes every
// rank the same way: pooling, padding and resampling use it.
#pragma once
#include <ATen/core/Tensor.h>
#include <array>
#include <cstdint>

namespace torch_ocl {

// Sizes and element strides of t, which has nd (1-3) spatial dims after a channel dim and an
// optional batch dim, as (N, C, D, H, W): absent dims have size 1 and stride 0 (an unbatched
// tensor has N = 1). c_fast: the channels are adjacent (channels_last), so kernels can walk C
// fastest.
struct Dims5 {
  std::array<int64_t, 5> size{1, 1, 1, 1, 1}, stride{0, 0, 0, 0, 0};
  int32_t c_fast = 0;
};

inline Dims5 dims5(const at::Tensor& t, int64_t nd) {
  const int64_t lead = t.dim() - nd;  // 1 (C) or 2 (N, C)
  TORCH_INTERNAL_ASSERT(nd >= 1 && nd <= 3 && (lead == 1 || lead == 2), "dims5: ", t.dim(), "-d tensor, ", nd,
                        " spatial dims");
  Dims5 g;
  for (int64_t k = 0; k < t.dim(); ++k) {
    const int64_t slot = k < lead ? 2 - lead + k : 5 - t.dim() + k;
    g.size[slot] = t.size(k);
    g.stride[slot] = t.stride(k);
  }
  g.c_fast = g.size[1] > 1 && g.stride[1] == 1 ? 1 : 0;
  return g;
}

}  // namespace torch_ocl
