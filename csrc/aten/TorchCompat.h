// Differences between the torch versions we build against (2.11 on the GPU box, 2.13 in CI).
// Named-tensor dimension lists exist (and the structured-kernel output hooks take them) up to
// torch 2.11; newer headers have neither. 2.11's autocast_mode.h also uses DimnameList
// without including its header and unqualified (its registration macros expect to expand
// inside namespace at): include this first and bring at::DimnameList into scope where
// OCL_HAS_DIMNAMES.
#pragma once
#if __has_include(<ATen/core/Dimname.h>)
#include <ATen/core/Dimname.h>
#define OCL_HAS_DIMNAMES 1
#define OCL_DIMNAME_LIST at::DimnameList
#else
#define OCL_HAS_DIMNAMES 0
namespace torch_ocl { struct NoDimnames {}; }
#define OCL_DIMNAME_LIST torch_ocl::NoDimnames
#endif
