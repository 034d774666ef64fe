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
#include <limits>

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
// buf(t), or a null buffer when t is undefined (an optional kernel argument the kernel skips).
inline Buf buf_or_none(const at::Tensor& t) { return t.defined() ? buf(t) : Buf{}; }
// Buffer of a raw device pointer (e.g. TensorIterator::data_ptr).
Buf buf_ptr(const void* p);
// Whether t's first element sits on a 4-element boundary of its buffer, as the kernels that read
// aligned 4-vectors need (the buffer itself is aligned far beyond that).
inline bool vec4_aligned(const at::Tensor& t) { return buf(t).offset % (4 * t.element_size()) == 0; }
// A size, stride or index as a kernel's `int` argument (the caller has checked that it fits:
// below kMaxInt, or a fraction of it where the kernel adds or scales such values).
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
inline cl_int i32(int64_t v) { return static_cast<cl_int>(v); }
// Work-groups along NDRange dims 1 and 2 that every device takes (NVIDIA's OpenCL driver runs
// them as CUDA grid dims of at most 65535 blocks); kernels that index those dims stay within it.
constexpr int64_t kMaxGrid = 65535;

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
// Work-group shape for a (w, unit) launch: up to 64 lanes along w (its next power of two),
// the rest of a 64-item group along units (a w of 1 must not leave 31 of every 32 lanes idle).
inline Range local_wu(int64_t w) {
  size_t lw = 1;
  while (static_cast<int64_t>(lw) < w && lw < 64) lw <<= 1;
  return Range(lw, 64 / lw);
}
// Global size of a grid-stride (FOR_EACH in common.clh) launch over n items in work-groups of
// wg: enough groups to cover n, at most max_groups (each work-item then takes several items).
inline Range grid_stride(int64_t n, size_t wg = 256, size_t max_groups = 16384) {
  return Range(std::min(round_up(size_t(std::max<int64_t>(n, 1)), wg), wg * max_groups));
}

namespace detail {
// A launch's arguments, packed into its record in kernel-argument order.
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
// Sets r's arguments on its kernel and enqueues it, holding d.launch_mutex (cl_kernel
// objects are shared between threads); timed under TORCH_OCL_PROFILE=1. Runs on the
// submission thread, or on the caller's where the device has none.
void run_record(Device& d, LaunchRecord& r);
}  // namespace detail

// Every launch ends here: r goes to the device's submission thread where it has one, else
// it is enqueued on this thread; then the launch is counted (and, under TORCH_OCL_SYNC=1,
// finished and checked for device errors).
void submit_launch(Device& d, LaunchRecord&& r);

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
  LaunchRecord r = detail::make_record(k, static_cast<cl_uint>(global.dims), g.data(), use_local ? l.data() : nullptr);
  r.args.reserve(2 * sizeof...(Args));
  (detail::add_arg(r, args), ...);
  submit_launch(d, std::move(r));
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

// The storage kind of kernels/storage_kinds.clh (the X_KIND-style build options) for a
// floating dtype: 0 float, 1 double, 2 half, 3 bfloat16; -1 for any other dtype.
inline int storage_kind_or_none(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kDouble: return 1;
    case at::kHalf: return 2;
    case at::kBFloat16: return 3;
    default: return -1;
  }
}
// The same, raising NotImplementedError naming `op` for any other dtype.
inline int storage_kind(at::ScalarType t, const char* op) {
  const int k = storage_kind_or_none(t);
  TORCH_CHECK_NOT_IMPLEMENTED(k >= 0, "torch_ocl: ", op, " is not implemented for dtype ", t, " on ocl");
  return k;
}

}  // namespace torch_ocl
