#include "Submit.h"
#include "Device.h"
#include "Env.h"
#include "Launch.h"
#include <chrono>

namespace torch_ocl {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
// How long the submission thread keeps polling after its last record before it sleeps: a
// step's launches arrive a few microseconds apart, and waking a sleeping thread costs a
// futex round trip per launch.
constexpr auto kSpin = std::chrono::microseconds(200);
}  // namespace

bool async_launch_enabled(cl_device_type type) {
  if (env::sync_launches() || env::profile_kernels()) return false;
  const std::string& v = env::async_launch();
  if (v == "0") return false;
  if (v == "1") return true;
  return (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0;
}

Submitter::Submitter(Device& d) : d_(d) {
  // Never joined: the object lives as long as the process (see Device::ensure_initialized),
  // and the thread sleeps on cv_ when idle, so exit does not wait for it.
  thread_ = std::thread([this] { run(); });
  thread_.detach();
}

void Submitter::push(LaunchRecord&& r) {
  bool wake;
  {
    std::lock_guard<std::mutex> lk(mu_);
    pending_.push_back(std::move(r));
    pushed_.fetch_add(1, std::memory_order_release);
    wake = sleeping_.load(std::memory_order_relaxed);
  }
  if (wake) cv_.notify_one();
}

void Submitter::flush() {
  const uint64_t target = pushed_.load(std::memory_order_acquire);
  for (int spins = 0; done_.load(std::memory_order_acquire) < target; ++spins) {
    if (spins < 4096)
      cpu_relax();
    else
      std::this_thread::yield();
  }
  std::string err;
  {
    std::lock_guard<std::mutex> lk(error_mu_);
    err.swap(error_);
  }
  TORCH_CHECK(err.empty(), err, " (an asynchronous launch; TORCH_OCL_SYNC=1 raises it at the op)");
}

void Submitter::submit(LaunchRecord& r) {
  try {
    detail::run_record(d_, r);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lk(error_mu_);
    if (error_.empty()) error_ = e.what();
  }
}

void Submitter::run() {
  std::deque<LaunchRecord> batch;
  for (;;) {
    {
      // Poll for a while without the lock, then sleep until push() wakes us.
      const auto until = std::chrono::steady_clock::now() + kSpin;
      for (int i = 0; pushed_.load(std::memory_order_acquire) == done_.load(std::memory_order_relaxed); ++i) {
        cpu_relax();
        if ((i & 255) == 255 && std::chrono::steady_clock::now() > until) break;
      }
      std::unique_lock<std::mutex> lk(mu_);
      if (pending_.empty()) {
        sleeping_.store(true, std::memory_order_relaxed);
        cv_.wait(lk, [&] { return !pending_.empty(); });
        sleeping_.store(false, std::memory_order_relaxed);
      }
      batch.swap(pending_);
    }
    for (LaunchRecord& r : batch) submit(r);
    done_.fetch_add(batch.size(), std::memory_order_release);
    batch.clear();
  }
}

}  // namespace torch_ocl
