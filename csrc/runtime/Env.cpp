#include "Env.h"
#include <c10/util/Exception.h>
#include <cstdlib>

namespace torch_ocl::env {
namespace {
std::string read(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : std::string(dflt);
}
std::string default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/torch_ocl";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/torch_ocl";
}
}  // namespace

const std::string& devices_filter() { static const std::string v = read("TORCH_OCL_DEVICES", ""); return v; }
bool sync_launches() { static const bool v = read("TORCH_OCL_SYNC", "0") == "1"; return v; }
bool profile_kernels() { static const bool v = read("TORCH_OCL_PROFILE", "0") == "1"; return v; }
const std::string& async_launch() { static const std::string v = read("TORCH_OCL_ASYNC_LAUNCH", ""); return v; }
const std::string& fallback_mode() { static const std::string v = read("TORCH_OCL_FALLBACK", "warn"); return v; }
const std::string& kernel_dir() { static const std::string v = read("TORCH_OCL_KERNEL_DIR", ""); return v; }
const std::string& cache_dir() {
  static const std::string v = read("TORCH_OCL_CACHE_DIR", default_cache_dir().c_str());
  return v;
}
const std::string& extra_build_options() { static const std::string v = read("TORCH_OCL_BUILD_OPTIONS", ""); return v; }
bool print_build_logs() { static const bool v = read("TORCH_OCL_BUILD_LOG", "0") == "1"; return v; }
const std::string& gemm_impl() { static const std::string v = read("TORCH_OCL_GEMM", "auto"); return v; }
const std::string& attn_config() { static const std::string v = read("TORCH_OCL_ATTN_CONFIG", ""); return v; }
int64_t gemm_split_k() {
  static const int64_t v = [] {
    const std::string s = read("TORCH_OCL_GEMM_SPLIT_K", "auto");
    if (s == "auto" || s.empty()) return kSplitKAuto;
    if (s == "off") return kSplitKOff;
    int64_t n = 0;
    try {
      size_t used = 0;
      n = std::stoll(s, &used);
      if (used != s.size()) n = 0;  // "4abc" is not a count
    } catch (const std::exception&) {
    }
    TORCH_CHECK(n >= 1, "torch_ocl: TORCH_OCL_GEMM_SPLIT_K must be auto, off or a positive integer, got '", s, "'");
    return n;
  }();
  return v;
}
const std::string& gemm_config() { static const std::string v = read("TORCH_OCL_GEMM_CONFIG", ""); return v; }
const std::string& tuning_dir() {
  // Tuning results are not a cache: with the binary cache off they stay in the default place.
  static const std::string v = [] {
    const std::string& c = cache_dir();
    const bool off = c.empty() || c == "0" || c == "off";
    return read("TORCH_OCL_TUNING_DIR", ((off ? default_cache_dir() : c) + "/tuning").c_str());
  }();
  return v;
}

}  // namespace torch_ocl::env
