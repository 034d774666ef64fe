// Running ATen's meta function of a structured op against a user's out= tensors: the same
// checks and resizing as the generated out= wrappers (dtype and device must match; a wrongly
// sized out is resized, with ATen's warning when it had elements).
#pragma once
#include "TorchCompat.h"
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <array>

namespace torch_ocl {

inline void resize_structured_out(const at::Tensor& out, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                                  const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
              out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
              ", but got ", out.device(), " instead");
  const bool resized = at::native::resize_output(out, sizes);
  if (resized && !strides.empty()) out.as_strided_(sizes, strides);
}

// OutMeta<at::meta::structured_cumsum> m(out); m.meta(self, dim, dtype);
// torch <= 2.11 declares the set_output_* hooks with a trailing DimnameList, 2.13 (which dropped
// named tensors) without: both signatures are provided, without `override`, so the class builds
// against either.
template <class Meta, size_t N = 1>
struct OutMeta final : Meta {
  std::array<at::Tensor, N> outs;
  template <typename... T>
  explicit OutMeta(const T&... o) : outs{o...} {}
  const at::Tensor& maybe_get_output(int64_t i) override { return outs[i]; }
  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides, at::TensorOptions options) {
    resize_structured_out(outs[i], sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options) {
    resize_structured_out(outs[i], sizes, strides, options);
  }
  void set_output_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides, at::TensorOptions options,
                          OCL_DIMNAME_LIST) {
    resize_structured_out(outs[i], sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                              at::TensorOptions options, OCL_DIMNAME_LIST) {
    resize_structured_out(outs[i], sizes, strides, options);
  }
};

}  // namespace torch_ocl
