// Program and kernel cache. A program is keyed by (device, source hash, options); its built
// kernels are cached with it. Binaries also go to an on-disk cache keyed by device name,
// driver version, source hash and options (TORCH_OCL_CACHE_DIR), so a second process does
// not recompile; an entry that is corrupt or was written for anything else is rebuilt.
#pragma once
#include "Device.h"
#include <atomic>
#include <map>
#include <string>

namespace torch_ocl {

// A built kernel plus a launch counter (used by tests to see which kernels ran).
struct Kernel {
  cl_kernel k = nullptr;
  std::string name;
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> device_ns{0};  // summed execution time (TORCH_OCL_PROFILE=1 only)
};

// Source of csrc/kernels/<stem>.cl (embedded at build time, or read from
// TORCH_OCL_KERNEL_DIR), with `#include "x.clh"` lines expanded.
const std::string& kernel_source(const std::string& stem);

// The named kernel from `source` built with `options` for device d. `source` may be any
// string (generated kernels); the result is cached for the process and on disk.
Kernel& get_kernel_from_source(Device& d, const std::string& source, const std::string& options,
                               const std::string& name);
// The named kernel from kernels/<stem>.cl. Cheap after the first call (keyed on the
// short stem/options/name strings, not on the source text).
Kernel& get_kernel(Device& d, const std::string& stem, const std::string& options, const std::string& name);

// "-DDTYPE=float -DACC=float ..." for the common dtype macros of common.clh.
struct ProgramStats {
  uint64_t built_from_source = 0, loaded_from_disk = 0, disk_rejected = 0, disk_written = 0;
};
ProgramStats program_stats();
// Launches and device time (TORCH_OCL_PROFILE=1 only, folded in by Launch.cpp) per kernel
// name, summed over every device and program variant, since the last reset.
struct KernelStats {
  uint64_t launches = 0, device_ns = 0;
};
std::map<std::string, KernelStats> kernel_stats();
std::map<std::string, uint64_t> launch_counts();
void reset_launch_counts();

}  // namespace torch_ocl
