#include "Allocator.h"
#include <map>
#include <sys/mman.h>
#include <unordered_map>
#include <c10/core/DeviceGuard.h>

namespace torch_ocl {
namespace {

constexpr size_t kMinBlock = 512;
// 1 TiB of address space, never backed: blocks get unique addresses inside it.
constexpr size_t kReservation = size_t(1) << 40;

struct Block {
  cl_mem mem;
  size_t size;       // bucketed size (the cl_mem's size)
  size_t requested;  // bytes asked for by the current user
  uintptr_t va;
  int device;
};

// Rounds a request up to one of 8 buckets per power of two (at most 12.5% waste), so that
// freed blocks match later requests of similar size exactly.
size_t bucket_size(size_t n) {
  if (n <= kMinBlock) return kMinBlock;
  int log2 = 63 - __builtin_clzll(n);
  size_t step = std::max<size_t>(kMinBlock, size_t(1) << std::max(0, log2 - 3));
  return (n + step - 1) / step * step;
}

class OclAllocatorImpl;

class VaSpace {
 public:
  uintptr_t take(size_t size) {
    auto it = free_.find(size);
    if (it != free_.end()) {
      uintptr_t va = it->second;
      free_.erase(it);
      return va;
    }
    if (!base_) {
      void* p = mmap(nullptr, kReservation, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      TORCH_CHECK(p != MAP_FAILED, "torch_ocl: could not reserve host address space for device pointers");
      base_ = reinterpret_cast<uintptr_t>(p);
      next_ = base_;
    }
    TORCH_CHECK_WITH(OutOfMemoryError, next_ + size <= base_ + kReservation,
                     "torch_ocl: device address space (1 TiB) exhausted");
    uintptr_t va = next_;
    next_ += size;
    return va;
  }
  void give_back(uintptr_t va, size_t size) { free_.emplace(size, va); }

 private:
  uintptr_t base_ = 0, next_ = 0;
  std::multimap<size_t, uintptr_t> free_;
};

struct DevicePool {
  std::multimap<size_t, Block*> free_blocks;  // by bucketed size
  MemoryStats stats;
};

void free_block_cb(void* ctx);

#ifdef TORCH_OCL_HAS_DEVICE_ALLOCATOR
using AllocatorBase = c10::DeviceAllocator;
#else
using AllocatorBase = c10::Allocator;
#endif

class OclAllocatorImpl final : public AllocatorBase {
 public:
  c10::DataPtr allocate(size_t n) override { return allocate_on_device(current_device(), n); }

  c10::DataPtr allocate_on_device(int device, size_t n) {
    c10::Device dev(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
    if (n == 0) return c10::DataPtr(nullptr, nullptr, &noop_delete, dev);
    Device& d = get_device(device);
    const size_t size = bucket_size(n);
    std::lock_guard<std::mutex> g(mutex_);
    DevicePool& pool = pool_for(device);
    Block* b = nullptr;
    auto it = pool.free_blocks.find(size);
    if (it != pool.free_blocks.end()) {
      b = it->second;
      pool.free_blocks.erase(it);
    } else {
      b = new_block(d, pool, size, n);
    }
    b->requested = n;
    live_.emplace(b->va, b);
    auto& s = pool.stats;
    s.allocated += b->size;
    s.allocated_peak = std::max(s.allocated_peak, s.allocated);
    s.requested += n;
    s.requested_peak = std::max(s.requested_peak, s.requested);
    s.num_allocs++;
    s.active_blocks++;
    return c10::DataPtr(reinterpret_cast<void*>(b->va), b, &free_block_cb, dev);
  }

  void release(Block* b) {
    // A forked child inherits the parent's blocks but not its threads: the mutex may be
    // held by a thread that no longer exists, and the cl_mem belongs to the parent's
    // driver state. Leak the block rather than risk a deadlock at the child's exit.
    if (C10_UNLIKELY(in_bad_fork())) return;
    std::lock_guard<std::mutex> g(mutex_);
    live_.erase(b->va);
    DevicePool& pool = pool_for(b->device);
    auto& s = pool.stats;
    s.allocated -= b->size;
    s.requested -= b->requested;
    s.num_frees++;
    s.active_blocks--;
    pool.free_blocks.emplace(b->size, b);
  }

  BufferRef resolve(const void* ptr) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(mutex_);
    auto it = live_.upper_bound(p);
    TORCH_CHECK(it != live_.begin(), "torch_ocl: pointer ", ptr, " is not an ocl device pointer");
    --it;
    Block* b = it->second;
    TORCH_CHECK(p < b->va + b->size || (p == b->va + b->size && b->size == 0),
                "torch_ocl: pointer ", ptr, " is not inside a live ocl allocation");
    return BufferRef{b->mem, p - b->va};
  }

  int device_of(const void* ptr) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(mutex_);
    auto it = live_.upper_bound(p);
    if (it == live_.begin()) return -1;
    --it;
    return p < it->second->va + it->second->size ? it->second->device : -1;
  }

  void empty(int device) {
    std::lock_guard<std::mutex> g(mutex_);
    for (auto& [dev, pool] : pools_)
      if (device < 0 || dev == device) release_cached(dev, pool);
  }

  MemoryStats stats(int device) {
    std::lock_guard<std::mutex> g(mutex_);
    return pool_for(device).stats;
  }
  void reset_peak(int device) {
    std::lock_guard<std::mutex> g(mutex_);
    auto& s = pool_for(device).stats;
    s.allocated_peak = s.allocated;
    s.reserved_peak = s.reserved;
    s.requested_peak = s.requested;
  }
  void reset_accumulated(int device) {
    std::lock_guard<std::mutex> g(mutex_);
    auto& s = pool_for(device).stats;
    s.num_allocs = s.num_frees = s.num_alloc_retries = s.num_ooms = 0;
    s.num_device_allocs = s.num_device_frees = 0;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override;

#ifdef TORCH_OCL_HAS_DEVICE_ALLOCATOR
  bool initialized() override { return device_count() > 0; }
  void emptyCache(c10::MempoolId_t) override { empty(-1); }
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    MemoryStats m = stats(device);
    c10::CachingDeviceAllocator::DeviceStats out;
    auto fill = [](c10::CachingAllocator::StatArray& a, int64_t cur, int64_t peak) {
      for (auto& st : a) { st.current = cur; st.peak = peak; }
    };
    fill(out.allocated_bytes, m.allocated, m.allocated_peak);
    fill(out.reserved_bytes, m.reserved, m.reserved_peak);
    fill(out.active_bytes, m.allocated, m.allocated_peak);
    fill(out.requested_bytes, m.requested, m.requested_peak);
    fill(out.allocation, m.active_blocks, m.active_blocks);
    fill(out.segment, m.num_segments, m.num_segments);
    out.num_alloc_retries = m.num_alloc_retries;
    out.num_ooms = m.num_ooms;
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override { reset_accumulated(device); }
  void resetPeakStats(c10::DeviceIndex device) override { reset_peak(device); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    Device& d = peek_device(device);
    MemoryStats m = stats(device);
    return {static_cast<size_t>(d.info.global_mem - std::min<int64_t>(m.reserved, d.info.global_mem)),
            static_cast<size_t>(d.info.global_mem)};
  }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

 private:
  static void noop_delete(void*) {}

  DevicePool& pool_for(int device) { return pools_[device]; }

  // Returns the pool's free blocks to the driver. Deferred launches (Submit.h) may still
  // name them, so those are put on the queue first (OpenCL then defers each release until
  // the queued work using the buffer has finished).
  void release_cached(int device, DevicePool& pool) {
    if (!pool.free_blocks.empty()) peek_device(device).flush_launches();
    for (auto& [size, b] : pool.free_blocks) {
      clReleaseMemObject(b->mem);  // deferred by OpenCL until queued work using it finishes
      va_.give_back(b->va, b->size);
      pool.stats.reserved -= b->size;
      pool.stats.num_segments--;
      pool.stats.num_device_frees++;
      delete b;
    }
    pool.free_blocks.clear();
  }

  // Called with mutex_ held.
  Block* new_block(Device& d, DevicePool& pool, size_t size, size_t requested) {
    auto& s = pool.stats;
    auto oom = [&](const char* why) {
      s.num_ooms++;
      TORCH_CHECK_WITH(OutOfMemoryError, false, "ocl:", d.index, " (", d.info.name,
                       ") out of memory: tried to allocate ", format_bytes(requested), " (", why,
                       "; ", format_bytes(s.allocated), " allocated by tensors, ", format_bytes(s.reserved),
                       " reserved, ", format_bytes(d.info.global_mem), " total, largest single buffer ",
                       format_bytes(d.info.max_alloc), ")");
    };
    if (size > d.info.max_alloc) {
      if (requested > d.info.max_alloc) oom("larger than the device's maximum buffer size");
      size = requested;
    }
    if (static_cast<cl_ulong>(s.reserved) + size > d.info.global_mem) {
      s.num_alloc_retries++;
      release_cached(d.index, pool);
      if (static_cast<cl_ulong>(s.reserved) + size > d.info.global_mem) oom("device memory exhausted");
    }
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (err != CL_SUCCESS) {
      s.num_alloc_retries++;
      release_cached(d.index, pool);
      mem = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
      if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
          err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
        oom(cl_error_name(err));
      OCL_CHECK(err, "allocating " + format_bytes(size) + " on ocl:" + std::to_string(d.index));
    }
    auto* b = new Block{mem, size, requested, va_.take(size), d.index};
    s.reserved += size;
    s.reserved_peak = std::max(s.reserved_peak, s.reserved);
    s.num_segments++;
    s.num_device_allocs++;
    return b;
  }

  static std::string format_bytes(int64_t n) {
    char buf[64];
    if (n >= (int64_t(1) << 30)) snprintf(buf, sizeof buf, "%.2f GiB", n / double(1 << 30));
    else if (n >= (1 << 20)) snprintf(buf, sizeof buf, "%.2f MiB", n / double(1 << 20));
    else snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(n));
    return buf;
  }

  std::mutex mutex_;
  std::map<uintptr_t, Block*> live_;
  std::unordered_map<int, DevicePool> pools_;
  VaSpace va_;
};

OclAllocatorImpl g_allocator;

void free_block_cb(void* ctx) { g_allocator.release(static_cast<Block*>(ctx)); }

}  // namespace

void OclAllocatorImpl::copy_data(void* dest, const void* src, std::size_t count) const {
  if (count == 0) return;
  BufferRef s = const_cast<OclAllocatorImpl*>(this)->resolve(src);
  BufferRef t = const_cast<OclAllocatorImpl*>(this)->resolve(dest);
  Device& d = get_device(device_of_ptr(dest));
  QueueLock g(d);
  OCL_CHECK(clEnqueueCopyBuffer(d.queue, s.mem, t.mem, s.offset, t.offset, count, 0, nullptr, nullptr),
            "copying device memory");
}

BufferRef resolve(const void* ptr) { return g_allocator.resolve(ptr); }
int device_of_ptr(const void* ptr) { return g_allocator.device_of(ptr); }
MemoryStats memory_stats(int device) { return g_allocator.stats(device); }
void reset_peak_stats(int device) { g_allocator.reset_peak(device); }
void reset_accumulated_stats(int device) { g_allocator.reset_accumulated(device); }
void empty_cache(int device) { g_allocator.empty(device); }
c10::DataPtr allocate_on(int device, size_t nbytes) { return g_allocator.allocate_on_device(device, nbytes); }
c10::Allocator* get_allocator() { return &g_allocator; }

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);

}  // namespace torch_ocl
