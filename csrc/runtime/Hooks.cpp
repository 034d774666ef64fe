// PrivateUse1HooksInterface: generators, pointer->device lookup, storage resizing, and
// availability, registered once at load time (the OpenReg pattern).
#include "Allocator.h"
#include "Generator.h"
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/version.h>

namespace torch_ocl {

void grow_storage(const c10::Storage& storage, size_t new_nbytes);  // aten/Minimal.cpp
c10::Allocator* pinned_host_allocator();                             // runtime/HostAllocator.cpp
bool is_pinned_host_ptr(const void* p);                             // runtime/HostAllocator.cpp

namespace {

struct OclHooks final : public at::PrivateUse1HooksInterface {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  at::Generator getNewGenerator(c10::DeviceIndex device_index = -1) const override {
    return new_generator(device_index);
  }
  void init() const override {}
#endif
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device_index = -1) const override {
    return default_generator(device_index);
  }
  at::Device getDeviceFromPtr(void* data) const override {
    int d = device_of_ptr(data);
    TORCH_CHECK(d >= 0, "torch_ocl: pointer ", data, " is not an ocl device pointer");
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(d));
  }
  bool isPinnedPtr(const void* data) const override { return is_pinned_host_ptr(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_host_allocator(); }
  bool hasPrimaryContext(c10::DeviceIndex device_index) const override {
    return device_index >= 0 && device_index < device_count() && peek_device(device_index).initialized();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    grow_storage(storage, newsize);
  }
};

const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new OclHooks());
  return true;
}();

}  // namespace
}  // namespace torch_ocl
