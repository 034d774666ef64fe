// Error checking for OpenCL calls. OCL_CHECK(expr, what) raises a c10::Error that names the
// call, the error code's symbolic name, what was being done and where; allocation failures
// surface as torch.OutOfMemoryError so callers can catch them like CUDA's.
#pragma once
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <c10/util/Exception.h>
#include <string>

namespace torch_ocl {

const char* cl_error_name(cl_int err);

[[noreturn]] void throw_cl_error(cl_int err, const char* call, const std::string& what,
                                 const char* file, int line);

}  // namespace torch_ocl

#define OCL_CHECK(expr, what)                                                          \
  do {                                                                                 \
    cl_int _ocl_err = (expr);                                                          \
    if (C10_UNLIKELY(_ocl_err != CL_SUCCESS))                                          \
      ::torch_ocl::throw_cl_error(_ocl_err, #expr, (what), __FILE__, __LINE__);       \
  } while (0)
