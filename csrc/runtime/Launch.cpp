#include "Launch.h"

namespace torch_ocl {

Buf buf_ptr(const void* p) {
  if (p == nullptr) return Buf{nullptr, 0};
  BufferRef r = resolve(p);
  return Buf{r.mem, static_cast<cl_ulong>(r.offset)};
}

Buf buf(const at::Tensor& t) {
  if (t.numel() == 0) return Buf{nullptr, 0};
  // An op whose own checks let a tensor of another device through (a CPU target or weight):
  // the error every backend gives for mixed devices, not an allocator lookup failure.
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "Expected all tensors to be on the same device, but found at least two devices, ocl and ", t.device(),
              "!");
  const char* base = static_cast<const char*>(t.storage().data());
  TORCH_CHECK(base != nullptr, "torch_ocl: tensor has no storage");
  return buf_ptr(base + t.storage_offset() * t.itemsize());
}

Device& ocl_device(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "torch_ocl: expected an ocl tensor, got ",
              t.device());
  return get_device(t.device().index() < 0 ? current_device() : t.device().index());
}

namespace detail {
namespace {
// Launch events awaiting their timestamps (TORCH_OCL_PROFILE=1).
std::mutex g_events_mutex;
std::vector<std::pair<Kernel*, cl_event>> g_events;
// Earliest start and latest end of the folded events since the last reset (device clock).
std::mutex g_span_mutex;
cl_ulong g_span_first = ~cl_ulong(0), g_span_last = 0;

// Adds the execution time of each (complete) event to its kernel and releases the events.
void fold_events(std::vector<std::pair<Kernel*, cl_event>>& events) {
  cl_ulong first = ~cl_ulong(0), last = 0;
  for (auto& [k, ev] : events) {
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr) == CL_SUCCESS &&
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) == CL_SUCCESS &&
        end > start) {
      k->device_ns.fetch_add(end - start, std::memory_order_relaxed);
      first = std::min(first, start);
      last = std::max(last, end);
    }
    clReleaseEvent(ev);
  }
  events.clear();
  std::lock_guard<std::mutex> g(g_span_mutex);
  g_span_first = std::min(g_span_first, first);
  g_span_last = std::max(g_span_last, last);
}
}  // namespace

void record_kernel_event(Kernel& k, cl_event ev) {
  std::vector<std::pair<Kernel*, cl_event>> done;
  {
    std::lock_guard<std::mutex> g(g_events_mutex);
    g_events.emplace_back(&k, ev);
    if (g_events.size() < 65536) return;
    done.swap(g_events);
  }
  // A full backlog: wait for it (profiling runs only) so the event count stays bounded.
  for (auto& [kk, e] : done) clWaitForEvents(1, &e);
  fold_events(done);
}

void run_record(Device& d, LaunchRecord& r) {
  Kernel& k = *r.kernel;
  const bool profile = C10_UNLIKELY(env::profile_kernels());
  cl_event ev = nullptr;
  {
    std::lock_guard<std::mutex> lock(d.launch_mutex);
    for (size_t i = 0; i < r.args.size(); ++i) {
      const auto [off, size] = r.args[i];
      const void* p = off == LaunchRecord::kLocalArg ? nullptr : r.bytes.data() + off;
      const cl_int err = clSetKernelArg(k.k, static_cast<cl_uint>(i), size, p);
      if (C10_UNLIKELY(err != CL_SUCCESS)) OCL_CHECK(err, "setting argument " + std::to_string(i) + " of " + k.name);
    }
    OCL_CHECK(clEnqueueNDRangeKernel(d.queue, k.k, r.dims, nullptr, r.global, r.use_local ? r.local : nullptr, 0,
                                     nullptr, profile ? &ev : nullptr),
              "launching kernel " + k.name + " on ocl:" + std::to_string(d.index));
  }
  if (profile) record_kernel_event(k, ev);
}
}  // namespace detail

void submit_launch(Device& d, LaunchRecord&& r) {
  Kernel& k = *r.kernel;
  if (d.submitter)
    d.submitter->push(std::move(r));
  else
    detail::run_record(d, r);
  k.launches.fetch_add(1, std::memory_order_relaxed);
  if (C10_UNLIKELY(env::sync_launches())) {  // TORCH_OCL_SYNC=1 (never with a submission thread)
    OCL_CHECK(clFinish(d.queue), "running kernel " + k.name + " (TORCH_OCL_SYNC=1)");
    check_device_errors(d);
  }
}

namespace {
// TORCH_OCL_PROFILE=1: finishes every initialized device's queue and folds all pending
// launch events into their kernels' times. Nothing to do (and no sync) otherwise.
void drain_kernel_events() {
  if (!env::profile_kernels()) return;
  for (int i = 0; i < device_count(); ++i) {
    Device& d = peek_device(i);
    if (d.initialized()) OCL_CHECK(clFinish(d.queue), "finishing ocl:" + std::to_string(i) + " for kernel times");
  }
  std::vector<std::pair<Kernel*, cl_event>> done;
  {
    std::lock_guard<std::mutex> g(detail::g_events_mutex);
    done.swap(detail::g_events);
  }
  detail::fold_events(done);
}
}  // namespace

std::map<std::string, std::pair<uint64_t, double>> kernel_times() {
  drain_kernel_events();
  std::map<std::string, std::pair<uint64_t, double>> out;
  for (const auto& [name, st] : kernel_stats()) out[name] = {st.launches, double(st.device_ns) * 1e-6};
  return out;
}

double kernel_span_ms() {
  drain_kernel_events();
  std::lock_guard<std::mutex> g(detail::g_span_mutex);
  return detail::g_span_last > detail::g_span_first ? double(detail::g_span_last - detail::g_span_first) * 1e-6 : 0.0;
}

void reset_kernel_stats() {
  drain_kernel_events();  // pending events would otherwise count after the reset
  reset_launch_counts();
  std::lock_guard<std::mutex> g(detail::g_span_mutex);
  detail::g_span_first = ~cl_ulong(0);
  detail::g_span_last = 0;
}

std::string cl_type_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float";
    case at::kDouble: return "double";
    case at::kHalf: return "half";
    case at::kBFloat16: return "ushort";
    case at::kChar: return "char";
    case at::kByte: return "uchar";
    case at::kShort: return "short";
    case at::kInt: return "int";
    case at::kLong: return "long";
    case at::kBool: return "uchar";
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: dtype ", t, " is not supported on the ocl device");
  }
}

void check_dtype_supported(Device& d, at::ScalarType t, const char* op) {
  switch (t) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: case at::kChar: case at::kByte:
    case at::kShort: case at::kInt: case at::kLong: case at::kBool:
      return;
    case at::kDouble:
      TORCH_CHECK_NOT_IMPLEMENTED(d.info.fp64, "torch_ocl: ", op, " on ocl:", d.index, " (", d.info.name,
                                  ") does not support float64: the device has no cl_khr_fp64");
      return;
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: ", op, " is not implemented for dtype ", t, " on ocl");
  }
}

}  // namespace torch_ocl
