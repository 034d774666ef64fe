#include "Device.h"
#include "Env.h"
#include "Submit.h"
#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <memory>
#include <pthread.h>
#include <sstream>

namespace torch_ocl {
namespace {

std::once_flag g_discover_once;
std::vector<std::unique_ptr<Device>> g_devices;
std::string g_unavailable;
std::atomic<bool> g_any_init{false};
std::atomic<bool> g_bad_fork{false};
thread_local int t_current_device = 0;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string device_str(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}
std::string platform_str(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}
template <typename T>
T device_val(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof(T), &v, nullptr);
  return v;
}

std::string type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  return "other";
}

bool matches_filter(const DeviceInfo& info) {
  const std::string& f = env::devices_filter();
  if (f.empty()) return true;
  std::stringstream ss(f);
  std::string term;
  const std::string hay = lower(info.platform_name + "\n" + info.vendor + "\n" + info.name);
  while (std::getline(ss, term, ',')) {
    term = lower(term);
    while (!term.empty() && term.front() == ' ') term.erase(term.begin());
    while (!term.empty() && term.back() == ' ') term.pop_back();
    if (term.empty()) continue;
    if (term == type_name(info.type) || hay.find(term) != std::string::npos) return true;
  }
  return false;
}

void child_after_fork() {
  if (g_any_init.load()) g_bad_fork.store(true);
}

void discover() {
  pthread_atfork(nullptr, nullptr, child_after_fork);
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &np);
  if (err != CL_SUCCESS || np == 0) {
    g_unavailable = std::string("no OpenCL platform found (clGetPlatformIDs: ") +
                    cl_error_name(err == CL_SUCCESS ? CL_DEVICE_NOT_FOUND : err) +
                    "). Install an OpenCL driver: your GPU vendor's OpenCL ICD, or PoCL for "
                    "CPUs (Debian/Ubuntu: `apt-get install pocl-opencl-icd ocl-icd-libopencl1`), "
                    "and check that `clinfo -l` lists a device.";
    return;
  }
  std::vector<cl_platform_id> plats(np);
  clGetPlatformIDs(np, plats.data(), nullptr);
  std::vector<std::unique_ptr<Device>> found;
  for (auto p : plats) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ids(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr);
    for (auto id : ids) {
      auto d = std::make_unique<Device>();
      d->platform = p;
      d->id = id;
      auto& in = d->info;
      in.name = device_str(id, CL_DEVICE_NAME);
      in.vendor = device_str(id, CL_DEVICE_VENDOR);
      in.driver_version = device_str(id, CL_DRIVER_VERSION);
      in.opencl_version = device_str(id, CL_DEVICE_VERSION);
      in.platform_name = platform_str(p, CL_PLATFORM_NAME);
      in.platform_version = platform_str(p, CL_PLATFORM_VERSION);
      in.extensions = device_str(id, CL_DEVICE_EXTENSIONS);
      in.type = device_val<cl_device_type>(id, CL_DEVICE_TYPE);
      in.compute_units = device_val<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
      in.global_mem = device_val<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      in.local_mem = device_val<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
      in.max_alloc = device_val<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      in.max_work_group = device_val<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
      in.max_parameter_size = device_val<size_t>(id, CL_DEVICE_MAX_PARAMETER_SIZE);
      in.native_float_width = device_val<cl_uint>(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
      in.fp16 = in.extensions.find("cl_khr_fp16") != std::string::npos;
      in.fp64 = in.extensions.find("cl_khr_fp64") != std::string::npos ||
                device_val<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
      in.fp32_correct_div_sqrt =
          (device_val<cl_device_fp_config>(id, CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      in.nvidia = in.vendor.find("NVIDIA") != std::string::npos;
      if (in.nvidia && in.has_extension("cl_nv_device_attribute_query")) {
        constexpr cl_device_info kMajor = 0x4000, kMinor = 0x4001;  // CL_DEVICE_COMPUTE_CAPABILITY_{MAJOR,MINOR}_NV
        in.nv_sm = int(10 * device_val<cl_uint>(id, kMajor) + device_val<cl_uint>(id, kMinor));
      }
      if (matches_filter(in)) found.push_back(std::move(d));
    }
  }
  auto rank = [](const Device& d) {
    if (d.info.type & CL_DEVICE_TYPE_GPU) return 0;
    if (d.info.type & CL_DEVICE_TYPE_ACCELERATOR) return 1;
    return 2;
  };
  std::stable_sort(found.begin(), found.end(),
                   [&](const auto& a, const auto& b) { return rank(*a) < rank(*b); });
  for (size_t i = 0; i < found.size(); ++i) found[i]->index = static_cast<int>(i);
  g_devices = std::move(found);
  if (g_devices.empty()) {
    g_unavailable = env::devices_filter().empty()
        ? "OpenCL platforms exist but expose no device. Check your driver with `clinfo -l`."
        : "no OpenCL device matches TORCH_OCL_DEVICES='" + env::devices_filter() +
              "'. Unset it or check `clinfo -l` for names.";
  }
}

void ensure_discovered() { std::call_once(g_discover_once, discover); }

}  // namespace

int device_count() noexcept {
  try {
    ensure_discovered();
    return static_cast<int>(g_devices.size());
  } catch (...) {
    return 0;
  }
}

std::string unavailable_reason() {
  ensure_discovered();
  return g_unavailable;
}

Device& peek_device(int idx) {
  ensure_discovered();
  TORCH_CHECK(!g_devices.empty(), "torch_ocl: the 'ocl' device is not available: ", g_unavailable);
  TORCH_CHECK_INDEX(idx >= 0 && idx < static_cast<int>(g_devices.size()), "torch_ocl: invalid device index ocl:", idx,
                    " (", g_devices.size(), " OpenCL device(s) available)");
  return *g_devices[idx];
}

Device& get_device(int idx) {
  TORCH_CHECK(!g_bad_fork.load(),
              "torch_ocl: cannot use the 'ocl' device in a forked subprocess after it was "
              "initialized in the parent. Use the 'spawn' start method "
              "(torch.multiprocessing.set_start_method('spawn')).");
  Device& d = peek_device(idx);
  if (C10_UNLIKELY(!d.initialized())) d.ensure_initialized();
  return d;
}

void Device::ensure_initialized() {
  std::lock_guard<std::mutex> g(init_mutex_);
  if (initialized_.load()) return;
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
  ctx = clCreateContext(props, 1, &id, nullptr, nullptr, &err);
  OCL_CHECK(err, "creating the context for ocl:" + std::to_string(index) + " (" + info.name + ")");
  // Profiling lets torch.Event(enable_timing=True).elapsed_time() read marker timestamps;
  // its cost is a timestamp per command, negligible next to a launch.
  queue = clCreateCommandQueue(ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
  OCL_CHECK(err, "creating the command queue for ocl:" + std::to_string(index));
  error_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), nullptr, &err);
  OCL_CHECK(err, "allocating the device error flag");
  cl_int zero = 0;
  OCL_CHECK(clEnqueueWriteBuffer(queue, error_buf, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr, nullptr),
            "clearing the device error flag");
  if (async_launch_enabled(info.type)) submitter = new Submitter(*this);  // lives as long as the process
  // At exit, let the submission thread finish what was pushed, and the queues run dry, before
  // the driver goes away (registered after the ICD loaded, so it runs before the driver's own
  // exit handlers). Every device: CPU devices have no submission thread but queue too.
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(flush_all_launches); });
  g_any_init.store(true);
  initialized_.store(true, std::memory_order_release);
}

void Device::flush_launches() {
  if (submitter) submitter->flush();
}

void flush_all_launches() {
  if (g_bad_fork.load()) return;  // a forked child has no submission thread
  for (int i = 0; i < device_count(); ++i) {
    Device& d = peek_device(i);
    if (!d.initialized()) continue;
    try {
      d.flush_launches();
      // PoCL compiles a kernel's work-group-size variant on its own thread when the kernel is
      // about to run: a process that ended with kernels still queued could crash inside LLVM
      // as exit tore LLVM down under that thread.
      QueueLock g(d);
      clFinish(d.queue);
    } catch (const std::exception&) {
      // at exit there is nobody left to report a failed launch to
    }
  }
}

void Device::stage_write(cl_event ev, void* host_copy) {
  staged_writes_.emplace_back(ev, host_copy);
  release_completed_writes();
}

void Device::release_completed_writes() {
  // The queue is in order, so writes complete oldest first: stop at the first one still pending.
  while (!staged_writes_.empty()) {
    auto [ev, host_copy] = staged_writes_.front();
    cl_int status = CL_QUEUED;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr) != CL_SUCCESS)
      return;  // keep the copy: leaking it is safe, freeing memory the driver may read is not
    if (status != CL_COMPLETE && status >= 0) return;  // negative: the write failed, the copy is unused
    clReleaseEvent(ev);
    std::free(host_copy);
    staged_writes_.pop_front();
  }
}

cl_mem Device::arrival_counters(size_t n) {
  if (n > kMaxArrivalCounters) return nullptr;
  std::lock_guard<std::mutex> g(counters_mutex_);
  if (n <= counters_n_) return counters_;
  size_t cap = 4096;
  while (cap < n) cap <<= 1;
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, cap * sizeof(cl_uint), nullptr, &err);
  OCL_CHECK(err, "allocating " + std::to_string(cap) + " arrival counters on ocl:" + std::to_string(index));
  const cl_uint zero = 0;
  {
    QueueLock q(*this);
    err = clEnqueueFillBuffer(queue, m, &zero, sizeof(zero), 0, cap * sizeof(cl_uint), 0, nullptr, nullptr);
  }
  if (err != CL_SUCCESS) clReleaseMemObject(m);
  OCL_CHECK(err, "zeroing the arrival counters on ocl:" + std::to_string(index));
  if (counters_) old_counters_.push_back(counters_);
  counters_ = m;
  counters_n_ = cap;
  return m;
}

int current_device() { return t_current_device; }

void set_current_device(int idx) {
  peek_device(idx);  // validates
  t_current_device = idx;
}

namespace {
// Clears the flag and raises the error for a non-zero code read from it.
[[noreturn]] void raise_device_error(Device& d, cl_int code) {
  {
    QueueLock g(d);
    cl_int zero = 0;
    OCL_CHECK(clEnqueueWriteBuffer(d.queue, d.error_buf, CL_TRUE, 0, sizeof(zero), &zero, 0, nullptr, nullptr),
              "clearing the device error flag");
  }
  if (code == kErrIndexOutOfRange)
    TORCH_CHECK_INDEX(false, "index out of range in a kernel on ocl:", d.index,
                      " (reported at the next synchronization point; run with TORCH_OCL_SYNC=1 "
                      "to raise it at the op that caused it)");
  const char* deferred = "; reported at the next synchronization point, run with TORCH_OCL_SYNC=1 to raise it at the op)";
  // Integer division by zero in a kernel: the CPU raises RuntimeError("ZeroDivisionError").
  TORCH_CHECK(code != kErrZeroDivision, "ZeroDivisionError (integer division by zero in a kernel on ocl:", d.index,
              deferred);
  // binary_cross_entropy's range checks, with the CPU's messages.
  TORCH_CHECK(code != kErrBceInputRange, "all elements of input should be between 0 and 1 (found by a kernel on ocl:",
              d.index, deferred);
  // gather/scatter/index_add out of range: the CPU's type (RuntimeError) and message stem.
  TORCH_CHECK(code != kErrIndexBounds, "index is out of bounds (in a gather, scatter or index_add kernel on ocl:",
              d.index, deferred);
  TORCH_CHECK(code != kErrBernoulliP, "Expected p_in >= 0 && p_in <= 1 to be true (found by a kernel on ocl:", d.index,
              deferred);
  // embedding_bag: the CPU raises RuntimeError for both (it checks the offsets on the host).
  TORCH_CHECK(code != kErrEmbeddingBagIndex,
              "embedding_bag: an index is not in the valid range [0, num_weights) (found by a kernel on ocl:", d.index,
              deferred);
  TORCH_CHECK(code != kErrEmbeddingBagOffsets,
              "embedding_bag: offsets[0] has to be 0, the offsets non-decreasing and offsets[-1] at most the number "
              "of indices (found by a kernel on ocl:", d.index, deferred);
  // ctc_loss: the CPU does not check (it reads past the class row); CUDA neither.
  TORCH_CHECK(code != kErrCtcTarget, "ctc_loss: a target label is not in the valid range [0, num_classes) (found by a "
              "kernel on ocl:", d.index, deferred);
  // multi_margin_loss / multilabel_margin_loss: the CPU raises RuntimeError ("target out of range").
  TORCH_CHECK(code != kErrMarginTarget,
              "target out of range (a multi_margin_loss target outside [0, C), a multilabel_margin_loss target "
              "outside [-1, C) or an is_target outside [0, 1]; found by a kernel on ocl:", d.index, deferred);
  // The CPU's RuntimeErrors for indices and pivots that do not come from the op that makes them.
  TORCH_CHECK(code != kErrPoolMaxIndex, "Found an invalid max index (in max_unpool or a fractional_max_pool backward, "
              "by a kernel on ocl:", d.index, deferred);
  TORCH_CHECK(code != kErrLuPivots, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive. Did you "
              "properly pass the result of lu_factor? (found by a kernel on ocl:", d.index, deferred);
  TORCH_CHECK(code != kErrPoissonRate, "invalid Poisson rate, expected rate to be non-negative (found by a kernel on "
              "ocl:", d.index, deferred);
  TORCH_CHECK(code != kErrBceTargetRange, "all elements of target should be between 0 and 1 (found by a kernel on ocl:",
              d.index, deferred);
  TORCH_CHECK_VALUE(false, "invalid argument detected by a kernel on ocl:", d.index, " (code ", code,
                    "; run with TORCH_OCL_SYNC=1 to find the op)");
}
}  // namespace

void check_device_errors(Device& d) {
  cl_int code = 0;
  {
    QueueLock g(d);
    OCL_CHECK(clEnqueueReadBuffer(d.queue, d.error_buf, CL_TRUE, 0, sizeof(code), &code, 0, nullptr, nullptr),
              "reading the device error flag");
    d.release_completed_writes();  // the read waited for every write before it
  }
  if (code != 0) raise_device_error(d, code);
}

void read_buffer_checked(Device& d, cl_mem mem, size_t offset, size_t n, void* dst, const char* what) {
  // Both reads block, the error flag's last. The flag used to be read without blocking into this
  // stack frame, ahead of the blocking data read: on NVIDIA's driver (580.159, H200) that pair
  // now and then never returned (the host spinning in the blocking read with every kernel
  // done, even under TORCH_OCL_SYNC=1; once in every few hundred reads). The second blocking
  // read finds the queue drained, so it costs one round trip.
  if (n) {
    QueueLock g(d);
    OCL_CHECK(clEnqueueReadBuffer(d.queue, mem, CL_TRUE, offset, n, dst, 0, nullptr, nullptr), what);
  }
  check_device_errors(d);
}

void synchronize(int idx) {
  Device& d = get_device(idx);
  // A blocking read on the in-order queue waits for everything queued before it.
  read_buffer_checked(d, nullptr, 0, 0, nullptr, ("synchronizing ocl:" + std::to_string(idx)).c_str());
}

bool in_bad_fork() { return g_bad_fork.load(); }
bool any_initialized() { return g_any_init.load(); }

std::vector<int> initialized_devices() {
  std::vector<int> r;
  if (!g_any_init.load()) return r;  // devices were discovered, if at all, but none initialized
  for (int i = 0; i < device_count(); ++i)
    if (g_devices[i]->initialized()) r.push_back(i);
  return r;
}

}  // namespace torch_ocl
