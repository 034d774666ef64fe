// OpenCL platform/device discovery and the per-device runtime state: one context and one
// in-order queue per device, created on first use. Device indices ("ocl:N") list every
// device of every platform, GPUs first, filtered by TORCH_OCL_DEVICES. Discovery never
// creates contexts, so importing torch_ocl stays cheap and fork-safe.
#pragma once
#include "Check.h"
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace torch_ocl {

class Submitter;

struct DeviceInfo {
  std::string name, vendor, driver_version, opencl_version, platform_name, platform_version;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  cl_ulong global_mem = 0, local_mem = 0, max_alloc = 0;
  size_t max_work_group = 0;
  size_t max_parameter_size = 0;  // bytes of kernel arguments a launch may pass
  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: floats per SIMD register (PoCL: 8 with AVX2, 16 with AVX-512).
  cl_uint native_float_width = 1;
  bool fp16 = false, fp64 = false;
  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG: see ieee_div_sqrt_option.
  bool fp32_correct_div_sqrt = false;
  // NVIDIA's driver: inline PTX and the -cl-nv-* build options work. nv_sm is its compute
  // capability as 10 * major + minor (cl_nv_device_attribute_query), 0 where unknown.
  bool nvidia = false;
  int nv_sm = 0;
  std::string extensions;
  // A CPU device (PoCL and the like): a work-group runs as a loop over its work-items on one core.
  bool is_cpu() const { return (type & CL_DEVICE_TYPE_CPU) != 0; }
  // Whether `extensions` lists `name` (a whole entry, not a prefix of a longer one).
  bool has_extension(const std::string& name) const {
    for (size_t at = extensions.find(name); at != std::string::npos; at = extensions.find(name, at + 1)) {
      const size_t end = at + name.size();
      if ((at == 0 || extensions[at - 1] == ' ') && (end == extensions.size() || extensions[end] == ' ')) return true;
    }
    return false;
  }
};

// " -cl-fp32-correctly-rounded-divide-sqrt" where the device offers it, else "". Without it
// OpenCL allows float `/` 2.5 ulp and sqrt 3 ulp of error, and NVIDIA's driver uses that room:
// an int64 true division disagreed with the CPU in the last bit. The programs whose results
// are quotients or roots themselves (the pointwise ops: div, sqrt, floor_divide, remainder...,
// and the foreach ops) take it, to round as the CPU and CUDA do; kernels that only divide once
// per row inside a statistic (softmax, norms, attention) keep the driver's default.
inline const char* ieee_div_sqrt_option(const DeviceInfo& in) {
  return in.fp32_correct_div_sqrt ? " -cl-fp32-correctly-rounded-divide-sqrt" : "";
}

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
  // The deferred-launch thread (Submit.h), or nullptr where launches enqueue on the calling
  // thread. Created with the queue, never destroyed.
  Submitter* submitter = nullptr;
  // Waits until every deferred launch pushed so far is on the queue (and rethrows a failed
  // one). Every direct use of `queue` comes after it: see QueueLock.
  void flush_launches();

  // Arrival counters for kernels whose last work-group to finish combines everyone's partial
  // results (kernels/common.clh: last_group_arrive): at least n zeroed uints, or nullptr when
  // n exceeds kMaxArrivalCounters (the caller then falls back to a separate finishing launch).
  // Contract: a kernel uses counters [0, n) and leaves every counter it used at 0 again (the
  // last arrival resets its counter). The one in-order queue never overlaps kernels, so one
  // buffer serves every launch. Growth enqueues a zero fill on the queue (ordered before the
  // kernels that use it, no host wait); replaced buffers stay alive until the device goes away
  // because another thread may already have enqueued a kernel naming them.
  cl_mem arrival_counters(size_t n);
  static constexpr size_t kMaxArrivalCounters = size_t(1) << 22;

  // Small host -> device writes are enqueued without blocking from a host copy of the data
  // (write_to_device in aten/Minimal.cpp). stage_write keeps the copy with its write's event
  // until the write has completed; completed ones are freed oldest first at the next staged
  // write and after every blocking read. Both hold QueueLock. (Completion callbacks,
  // clSetEventCallback, freed them before: on NVIDIA's driver 580.159 they made blocking reads
  // stop returning in processes sharing the GPU: bench/RESULTS.md, session 10.)
  void stage_write(cl_event ev, void* host_copy);
  void release_completed_writes();

  void ensure_initialized();
  bool initialized() const { return initialized_.load(std::memory_order_acquire); }

 private:
  std::deque<std::pair<cl_event, void*>> staged_writes_;  // oldest first; under launch_mutex
  std::mutex init_mutex_;
  std::atomic<bool> initialized_{false};
  std::mutex counters_mutex_;
  cl_mem counters_ = nullptr;
  size_t counters_n_ = 0;
  std::vector<cl_mem> old_counters_;
};

// A direct use of d.queue (copy, fill, read, marker, CLBlast call): the deferred launches
// queued before it are flushed first, then the launch lock is held.
class QueueLock {
 public:
  explicit QueueLock(Device& d) : lock_((d.flush_launches(), d.launch_mutex)) {}

 private:
  std::lock_guard<std::mutex> lock_;
};

// Device::flush_launches() for every initialized device (at exit); never throws.
void flush_all_launches();

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
enum DeviceErrorCode : int {
  kErrNone = 0,
  kErrIndexOutOfRange = 1,
  kErrInvalidArgument = 2,
  kErrZeroDivision = 3,
  kErrBceInputRange = 4,   // binary_cross_entropy: an input outside [0, 1]
  kErrBceTargetRange = 5,  // ... a target outside [0, 1]
  kErrIndexBounds = 6,     // gather/scatter/index_add out of range: the CPU raises RuntimeError
  kErrBernoulliP = 7,      // bernoulli: a probability outside [0, 1] (or NaN)
  kErrEmbeddingBagIndex = 8,    // embedding_bag: an index outside [0, num_weights)
  kErrEmbeddingBagOffsets = 9,  // embedding_bag: offsets not rising from 0 to at most the index count
  kErrCtcTarget = 10,           // ctc_loss: a target label outside [0, num_classes)
  kErrMarginTarget = 11,        // multi(label)_margin_loss: a target (or is_target) out of range
  kErrPoolMaxIndex = 12,        // max_unpool / fractional_max_pool backward: an index outside the plane
  kErrLuPivots = 13,            // lu_unpack / lu_solve: a pivot outside [1, rows]
  kErrPoissonRate = 14,         // poisson: a rate that is negative or NaN
};

bool in_bad_fork();
// True once any device context exists (for fork safety and torch.ocl._initialized).
bool any_initialized();
// The indices of the devices whose context exists (initializes none).
std::vector<int> initialized_devices();

}  // namespace torch_ocl
