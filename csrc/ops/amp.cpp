// Autocast cast policies for the ocl device (torch.autocast("ocl")): the same op lists the
// CUDA backend uses, from ATen/autocast_mode.h. Matmul-like ops run in the autocast dtype
// (lower_precision_fp), numerically sensitive ones in float32 (fp32 / fp32_set_opt_dtype),
// and mixed-input ops in the widest input type (promote). Every other op passes through
// (the AutocastPrivateUse1 fallthrough in csrc/aten/Fallback.cpp).
#include "../aten/TorchCompat.h"  // before autocast_mode.h (torch 2.11)
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {
using at::Tensor;
#if OCL_HAS_DIMNAMES
using at::DimnameList;  // torch 2.11's norm.names_ScalarOpt_dim entry names it unqualified
#endif
using c10::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;
using namespace at::autocast;

#define OCL_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define OCL_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define OCL_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define OCL_FP32_APPEND_DTYPE(FUNC, REGISTER_NAME, REGISTER_SIGNATURE, REDISPATCH_SIGNATURE, POLICY) \
  KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE(FUNC, REGISTER_NAME, REGISTER_SIGNATURE, REDISPATCH_SIGNATURE, POLICY)
#define OCL_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(OCL_LOWER_PRECISION_FP)
  AT_FORALL_FP32(OCL_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(OCL_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(OCL_FP32_APPEND_DTYPE)
  AT_FORALL_PROMOTE(OCL_PROMOTE)
  // Whole-sequence recurrent layers (ops/rnn_sequence.cpp) in the autocast dtype, as CUDA runs
  // its cuDNN RNN (_cudnn_rnn is on CUDA's lower_precision_fp list; these ops never reach it).
  KERNEL_PRIVATEUSEONE(lstm, input, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(gru, input, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(rnn_tanh, input, lower_precision_fp)
  KERNEL_PRIVATEUSEONE(rnn_relu, input, lower_precision_fp)
}

}  // namespace
}  // namespace torch_ocl
