// The caching device allocator. Every block owns a unique range of a PROT_NONE host address
// reservation, so a storage's data pointer is a real, unique address: pointer arithmetic,
// overlap checks and data_ptr() stay meaningful, and any stray host dereference faults
// loudly. resolve() maps such an address back to (cl_mem, byte offset) for kernels.
// Freed blocks return to size-bucketed pools of their device; reuse is safe without events
// because each device has a single in-order queue.
#pragma once
#include "Device.h"
#include <c10/core/Allocator.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
#define TORCH_OCL_HAS_DEVICE_ALLOCATOR 1
#include <c10/core/CachingDeviceAllocator.h>
#endif

namespace torch_ocl {

struct BufferRef {
  cl_mem mem = nullptr;
  size_t offset = 0;  // bytes from the start of mem
};

struct MemoryStats {
  int64_t allocated = 0, allocated_peak = 0, reserved = 0, reserved_peak = 0;
  int64_t requested = 0, requested_peak = 0;
  int64_t num_allocs = 0, num_frees = 0, num_segments = 0, active_blocks = 0;
  int64_t num_alloc_retries = 0, num_ooms = 0, num_device_allocs = 0, num_device_frees = 0;
};

// Maps an address inside a live block to its buffer and offset. Throws if the address
// belongs to no block (a host pointer or a freed block).
BufferRef resolve(const void* ptr);
// Device index of the block holding ptr, or -1.
int device_of_ptr(const void* ptr);

MemoryStats memory_stats(int device);
void reset_peak_stats(int device);
void reset_accumulated_stats(int device);
// Releases every cached (free) block of the device (all devices when device < 0).
void empty_cache(int device = -1);
// Allocates directly on a device (used by resize_ and internal workspaces).
c10::DataPtr allocate_on(int device, size_t nbytes);

c10::Allocator* get_allocator();

}  // namespace torch_ocl
