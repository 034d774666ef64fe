// Word types of the data-movement kernels (kernels/shape.cl, kernels/index.cl: cat, flip, roll,
// tril/triu, index_select, gather, ...): an element of any dtype, complex128 included, moves
// as one raw word of its size, so those kernels never look at the values.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <string>

namespace torch_ocl {

inline const char* word_type(size_t itemsize) {
  switch (itemsize) {
    case 1: return "uchar";
    case 2: return "ushort";
    case 4: return "uint";
    case 8: return "ulong";
    case 16: return "uint4";
    default: TORCH_CHECK(false, "torch_ocl: no word type for ", itemsize, "-byte elements");
  }
}

// Build options of a word program for t's element size; T_WIDE marks the vector word of
// 16-byte elements, for kernels that test a word's value as a scalar.
inline std::string move_opts(const at::Tensor& t) {
  return std::string("-DT=") + word_type(t.itemsize()) + (t.itemsize() == 16 ? " -DT_WIDE=1" : "");
}

}  // namespace torch_ocl
