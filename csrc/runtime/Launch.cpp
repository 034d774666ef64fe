#include "Launch.h"

namespace torch_ocl {

Buf buf_ptr(const void* p) {
  if (p == nullptr) return Buf{nullptr, 0};
  BufferRef r = resolve(p);
  return Buf{r.mem, static_cast<cl_ulong>(r.offset)};
}

Buf buf(const at::Tensor& t) {
  if (t.numel() == 0) return Buf{nullptr, 0};
  const char* base = static_cast<const char*>(t.storage().data());
  TORCH_CHECK(base != nullptr, "torch_ocl: tensor has no storage");
  return buf_ptr(base + t.storage_offset() * t.itemsize());
}

Device& ocl_device(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "torch_ocl: expected an ocl tensor, got ",
              t.device());
  return get_device(t.device().index() < 0 ? current_device() : t.device().index());
}

namespace detail {
void after_launch(Device& d, Kernel& k) {
  OCL_CHECK(clFinish(d.queue), "running kernel " + k.name + " (TORCH_OCL_SYNC=1)");
  check_device_errors(d);
}
}  // namespace detail

std::string cl_type_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float";
    case at::kDouble: return "double";
    case at::kHalf: return "half";
    case at::kBFloat16: return "ushort";
    case at::kChar: return "char";
    case at::kByte: return "uchar";
    case at::kShort: return "short";
    case at::kInt: return "int";
    case at::kLong: return "long";
    case at::kBool: return "uchar";
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: dtype ", t, " is not supported on the ocl device");
  }
}

void check_dtype_supported(Device& d, at::ScalarType t, const char* op) {
  switch (t) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: case at::kChar: case at::kByte:
    case at::kShort: case at::kInt: case at::kLong: case at::kBool:
      return;
    case at::kDouble:
      TORCH_CHECK_NOT_IMPLEMENTED(d.info.fp64, "torch_ocl: ", op, " on ocl:", d.index, " (", d.info.name,
                                  ") does not support float64: the device has no cl_khr_fp64");
      return;
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: ", op, " is not implemented for dtype ", t, " on ocl");
  }
}

}  // namespace torch_ocl
