// launch(device, kernel, global, local, args...): sets the arguments and enqueues an NDRange
// on the device's in-order queue, holding the device's launch lock (cl_kernel objects are
// shared between threads), or hands both to the device's submission thread (Submit.h; GPUs
// by default). Asynchronous unless TORCH_OCL_SYNC=1.
//
// Argument conventions: a Buf (from buf(tensor)) expands to two kernel arguments,
// `__global T* p, ulong p_off` (byte offset; see GLOBAL_PTR in common.clh); LocalMem
// reserves __local memory; anything else is passed by value (must match the kernel type).
#pragma once
#include "Allocator.h"
#include "Env.h"
#include "Programs.h"
#include "Submit.h"
#include <ATen/core/Tensor.h>
#include <array>

namespace torch_ocl {

struct Buf {
  cl_mem mem;
  cl_ulong offset;  // bytes
};
struct LocalMem {
  size_t bytes;
};

// The buffer and byte offset of t's first element (storage offset included). A tensor with
// no storage bytes yields a null buffer (kernels must not touch it; callers skip numel()==0).
Buf buf(const at::Tensor& t);
// Buffer of a raw device pointer (e.g. TensorIterator::data_ptr).
Buf buf_ptr(const void* p);

// Device of t (which must be an ocl tensor), initialized.
Device& ocl_device(const at::Tensor& t);

struct Range {
  size_t dims = 0;
  std::array<size_t, 3> sz{0, 0, 0};
  // Range() as a local size lets the driver choose the work-group size (never "groups of 1").
  Range() = default;
  Range(size_t x) : dims(1), sz{x, 1, 1} {}
  Range(size_t x, size_t y) : dims(2), sz{x, y, 1} {}
  Range(size_t x, size_t y, size_t z) : dims(3), sz{x, y, z} {}
};
// Round n up to a multiple of m.
inline size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

namespace detail {
inline void set_arg(cl_kernel k, cl_uint& i, const Buf& b, const std::string& name) {
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_mem), &b.mem), "setting a buffer argument of " + name);
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_ulong), &b.offset), "setting an offset argument of " + name);
}
inline void set_arg(cl_kernel k, cl_uint& i, const LocalMem& l, const std::string& name) {
  OCL_CHECK(clSetKernelArg(k, i++, l.bytes, nullptr), "setting a local-memory argument of " + name);
}
inline void set_arg(cl_kernel k, cl_uint& i, const cl_mem& m, const std::string& name) {
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_mem), &m), "setting a buffer argument of " + name);
}
template <typename T>
inline void set_arg(cl_kernel k, cl_uint& i, const T& v, const std::string& name) {
  static_assert(std::is_trivially_copyable<T>::value, "kernel arguments must be trivially copyable");
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(T), &v), "setting argument " + std::to_string(i - 1) + " of " + name);
}
// The same arguments packed for the submission thread.
inline void add_arg(LaunchRecord& r, const Buf& b) {
  r.add(&b.mem, sizeof(cl_mem));
  r.add(&b.offset, sizeof(cl_ulong));
}
inline void add_arg(LaunchRecord& r, const LocalMem& l) { r.add_local(l.bytes); }
inline void add_arg(LaunchRecord& r, const cl_mem& m) { r.add(&m, sizeof(cl_mem)); }
template <typename T>
inline void add_arg(LaunchRecord& r, const T& v) {
  static_assert(std::is_trivially_copyable<T>::value, "kernel arguments must be trivially copyable");
  r.add(&v, sizeof(T));
}
// A record for k over the NDRange (global, local; local == nullptr lets the driver choose).
inline LaunchRecord make_record(Kernel& k, cl_uint dims, const size_t* global, const size_t* local) {
  LaunchRecord r;
  r.kernel = &k;
  r.dims = dims;
  for (cl_uint i = 0; i < dims; ++i) r.global[i] = global[i], r.local[i] = local ? local[i] : 1;
  r.use_local = local != nullptr;
  r.bytes.reserve(256);
  return r;
}
void after_launch(Device& d, Kernel& k);
// TORCH_OCL_PROFILE=1: keeps the launch's event until kernel_times() (or a full backlog)
// folds its execution time into k.device_ns.
void record_kernel_event(Kernel& k, cl_event ev);

// clEnqueueNDRangeKernel of k (arguments already set), timed under TORCH_OCL_PROFILE=1.
// Called with d.launch_mutex held; local == nullptr lets the driver choose.
inline void enqueue_kernel(Device& d, Kernel& k, cl_uint dims, const size_t* global, const size_t* local) {
  const bool profile = C10_UNLIKELY(env::profile_kernels());
  cl_event ev = nullptr;
  OCL_CHECK(clEnqueueNDRangeKernel(d.queue, k.k, dims, nullptr, global, local, 0, nullptr, profile ? &ev : nullptr),
            "launching kernel " + k.name + " on ocl:" + std::to_string(d.index));
  if (profile) record_kernel_event(k, ev);
}
}  // namespace detail

// Enqueues k over `global` work-items in groups of `local` (local.dims == 0 or a zero size
// lets the driver choose). Global sizes are rounded up to the local size.
template <typename... Args>
void launch(Device& d, Kernel& k, Range global, Range local, const Args&... args) {
  std::array<size_t, 3> g = global.sz, l = local.sz;
  bool use_local = true;
  for (size_t i = 0; i < global.dims; ++i) {
    if (g[i] == 0) return;
    if (l[i] == 0) use_local = false;
  }
  if (use_local)
    for (size_t i = 0; i < global.dims; ++i) g[i] = round_up(g[i], l[i]);
  if (d.submitter) {
    LaunchRecord r = detail::make_record(k, static_cast<cl_uint>(global.dims), g.data(), use_local ? l.data() : nullptr);
    r.args.reserve(2 * sizeof...(Args));
    (detail::add_arg(r, args), ...);
    d.submitter->push(std::move(r));
  } else {
    std::lock_guard<std::mutex> lock(d.launch_mutex);
    cl_uint i = 0;
    (detail::set_arg(k.k, i, args, k.name), ...);
    detail::enqueue_kernel(d, k, static_cast<cl_uint>(global.dims), g.data(), use_local ? l.data() : nullptr);
  }
  k.launches.fetch_add(1, std::memory_order_relaxed);
  if (C10_UNLIKELY(env::sync_launches())) detail::after_launch(d, k);
}

// Per kernel name: (launches, device milliseconds) since the last reset_kernel_stats(), the
// times only with TORCH_OCL_PROFILE=1 (which also makes this finish every device's queue).
std::map<std::string, std::pair<uint64_t, double>> kernel_times();
// TORCH_OCL_PROFILE=1: device time from the first kernel's start to the last one's end since
// the last reset (kernel time plus the device's idle gaps between kernels); finishes the queues.
double kernel_span_ms();
// Zeroes the launch counts and kernel times (pending launch events are finished and dropped).
void reset_kernel_stats();

// Build options selecting the element types of common.clh for a dtype, e.g.
// dtype_options(kFloat, "T") -> "-DT=float -DT_IS_FLOAT=1".
std::string cl_type_name(at::ScalarType t);
// Throws NotImplementedError naming `op` if the device cannot run dtype t (fp64 without
// cl_khr_fp64, or a dtype the backend does not store).
void check_dtype_supported(Device& d, at::ScalarType t, const char* op);

}  // namespace torch_ocl
