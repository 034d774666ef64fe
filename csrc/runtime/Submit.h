// Deferred kernel submission: a per-device thread that sets kernel arguments and calls
// clEnqueueNDRangeKernel, so the thread running the op only packs the arguments (~0.2 us)
// instead of paying the driver's enqueue cost (NVIDIA: 4-5 us per launch plus ~0.3 us per
// buffer argument; bench/RESULTS.md). Host-bound steps (many small kernels) get that time
// back; the device sees the same kernels in the same order.
//
// Ordering: every other use of the device's queue (copies, fills, reads, markers, CLBlast,
// finish) first calls Device::flush_launches() (QueueLock does it), which waits until the
// records this process pushed so far are enqueued. Launches of one host thread therefore
// keep their order relative to everything else that thread does; launches of different
// threads interleave as they did under the launch lock. A memory object must not be
// released while a pending record names it: the allocator flushes before clReleaseMemObject.
//
// An enqueue that fails on the submission thread is reported by the next flush (the next
// host read, copy or synchronize), as CUDA reports asynchronous launch errors.
//
// On by default for GPU and accelerator devices; TORCH_OCL_ASYNC_LAUNCH=0 turns it off,
// =1 also turns it on for CPU devices (tests). TORCH_OCL_SYNC=1 and TORCH_OCL_PROFILE=1
// keep launches on the calling thread.
#pragma once
#include "Check.h"
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace torch_ocl {

class Device;
struct Kernel;

// One pending launch: the kernel, its NDRange and its arguments as bytes.
struct LaunchRecord {
  Kernel* kernel = nullptr;
  cl_uint dims = 1;
  size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  bool use_local = true;
  static constexpr uint32_t kLocalArg = UINT32_MAX;  // offset of a __local argument (no bytes)
  std::vector<std::pair<uint32_t, uint32_t>> args;    // (offset into bytes or kLocalArg, size)
  std::vector<unsigned char> bytes;

  void add(const void* p, size_t n) {
    args.emplace_back(static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(n));
    const auto* c = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  }
  void add_local(size_t n) { args.emplace_back(kLocalArg, static_cast<uint32_t>(n)); }
};

class Submitter {
 public:
  explicit Submitter(Device& d);
  void push(LaunchRecord&& r);
  // Waits until every record pushed before the call is enqueued; rethrows a failed enqueue.
  void flush();

 private:
  void run();
  void submit(LaunchRecord& r);

  Device& d_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<LaunchRecord> pending_;
  std::atomic<uint64_t> pushed_{0}, done_{0};
  std::atomic<bool> sleeping_{false};
  std::mutex error_mu_;
  std::string error_;  // the first failed enqueue since the last flush
  std::thread thread_;
};

// Whether devices of this type submit launches from a separate thread (TORCH_OCL_ASYNC_LAUNCH,
// TORCH_OCL_SYNC, TORCH_OCL_PROFILE; see above).
bool async_launch_enabled(cl_device_type type);

}  // namespace torch_ocl
