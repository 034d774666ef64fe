// Page-locked host memory for pin_memory() / DataLoader(pin_memory=True): each block is an
// OpenCL buffer allocated with CL_MEM_ALLOC_HOST_PTR on the current device's context and
// mapped once for its lifetime. Drivers back such buffers with pinned pages, so transfers
// to and from them are DMA without a bounce copy. Mapping and unmapping go through a
// separate queue per device so that pinning never waits for queued kernels.
#include "Device.h"
#include <c10/core/Allocator.h>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace torch_ocl {
namespace {

struct PinnedBlock {
  cl_mem mem;
  void* host;  // the mapped address (the DataPtr's data)
  size_t size;
  int device;
};

class PinnedHostAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) return c10::DataPtr(nullptr, nullptr, &noop_delete, cpu);
    Device& d = get_device(current_device());
    cl_command_queue q = map_queue(d);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, nullptr, &err);
    if (err != CL_SUCCESS)
      TORCH_CHECK_WITH(OutOfMemoryError, false, "torch_ocl: could not allocate ", n, " bytes of pinned host memory for ocl:",
                       d.index, " (", cl_error_name(err), "; largest single buffer ", d.info.max_alloc, " bytes)");
    void* p = clEnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      clReleaseMemObject(mem);
      OCL_CHECK(err, "mapping pinned host memory");
    }
    auto* b = new PinnedBlock{mem, p, n, d.index};
    {
      std::lock_guard<std::mutex> g(mutex_);
      live_.emplace(reinterpret_cast<uintptr_t>(p), b);
    }
    return c10::DataPtr(p, b, &delete_block, cpu);
  }

  bool is_pinned(const void* ptr) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(mutex_);
    auto it = live_.upper_bound(p);
    if (it == live_.begin()) return false;
    --it;
    return p < it->first + it->second->size;
  }

  // Freeing needs no wait for device work: copies from a host pointer either block
  // (device -> host, large uploads) or stage a private copy first (aten/Minimal.cpp), so no
  // queued command refers to the block. OpenCL defers the release until the unmap is done.
  void release(PinnedBlock* b) {
    // In a forked child the parent's OpenCL state is unusable: leak instead.
    if (in_bad_fork()) return;
    cl_command_queue q = nullptr;
    {
      std::lock_guard<std::mutex> g(mutex_);
      live_.erase(reinterpret_cast<uintptr_t>(b->host));
      q = queues_[b->device];
    }
    clEnqueueUnmapMemObject(q, b->mem, b->host, 0, nullptr, nullptr);
    clFlush(q);
    clReleaseMemObject(b->mem);
    delete b;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

 private:
  static void noop_delete(void*) {}
  static void delete_block(void* ctx);  // defined after g_pinned

  cl_command_queue map_queue(Device& d) {
    std::lock_guard<std::mutex> g(mutex_);
    auto& q = queues_[d.index];
    if (!q) {
      cl_int err = CL_SUCCESS;
      q = clCreateCommandQueue(d.ctx, d.id, 0, &err);
      OCL_CHECK(err, "creating the pinned-memory queue for ocl:" + std::to_string(d.index));
    }
    return q;
  }

  std::mutex mutex_;
  std::map<uintptr_t, PinnedBlock*> live_;
  std::unordered_map<int, cl_command_queue> queues_;
};

PinnedHostAllocator g_pinned;

void PinnedHostAllocator::delete_block(void* ctx) { g_pinned.release(static_cast<PinnedBlock*>(ctx)); }

}  // namespace

c10::Allocator* pinned_host_allocator() { return &g_pinned; }
bool is_pinned_host_ptr(const void* p) { return p != nullptr && g_pinned.is_pinned(p); }

}  // namespace torch_ocl
