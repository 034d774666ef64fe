// OpenCL platform/device discovery and the per-device runtime state: one context and one
// in-order queue per device, created on first use. Device indices ("ocl:N") list every
// device of every platform, GPUs first, filtered by TORCH_OCL_DEVICES. Discovery never
// creates contexts, so importing torch_ocl stays cheap and fork-safe.
#pragma once
#include "Check.h"
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace torch_ocl {

struct DeviceInfo {
  std::string name, vendor, driver_version, opencl_version, platform_name, platform_version;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  cl_ulong global_mem = 0, local_mem = 0, max_alloc = 0;
  size_t max_work_group = 0;
  bool fp16 = false, fp64 = false;
  std::string extensions;
};

class Device {
 public:
  int index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  DeviceInfo info;

  // Valid after ensure_initialized().
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  // Sticky device-side error word: kernels that validate indices write a code here
  // (first writer wins); it is read and cleared at synchronization points.
  cl_mem error_buf = nullptr;
  // clSetKernelArg on a shared cl_kernel is not thread-safe, and autograd runs backward on
  // its own thread: every set-args + enqueue sequence on this device holds this lock.
  std::mutex launch_mutex;

  void ensure_initialized();
  bool initialized() const { return initialized_.load(std::memory_order_acquire); }

 private:
  std::mutex init_mutex_;
  std::atomic<bool> initialized_{false};
};

// Number of usable devices; 0 (never throws) when there is no platform or driver.
int device_count() noexcept;
// Why there is no device (empty when there is one).
std::string unavailable_reason();
// The device, its context and queue created on first use. Throws a clear RuntimeError
// when idx is out of range, no driver exists, or this is a forked child.
Device& get_device(int idx);
// Like get_device but does not create the context (for properties).
Device& peek_device(int idx);

// The calling thread's current device (like cudaSetDevice, per thread).
int current_device();
void set_current_device(int idx);

// Wait for all work on the device, then raise any sticky device-side error.
void synchronize(int idx);
// Raise (and clear) the sticky device-side error flag if set; blocking read.
void check_device_errors(Device& d);
// Blocking read of n bytes at (mem, offset) into dst after all queued work, checking the
// sticky error flag in the same round trip (both reads complete together on the in-order
// queue), so a host read costs one wait, not two.
void read_buffer_checked(Device& d, cl_mem mem, size_t offset, size_t n, void* dst, const char* what);
// Sticky error codes written by kernels (see kernels/common.clh).
enum DeviceErrorCode : int { kErrNone = 0, kErrIndexOutOfRange = 1, kErrInvalidArgument = 2, kErrZeroDivision = 3 };

bool in_bad_fork();
// True once any device context exists (for fork safety and torch.ocl._initialized).
bool any_initialized();

}  // namespace torch_ocl
