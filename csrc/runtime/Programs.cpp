#include "Programs.h"
#include "Env.h"
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace torch_ocl {

// Defined in the build-generated embedded_kernels.cpp.
const std::map<std::string, std::string>& embedded_kernel_sources();

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}
std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

struct Program {
  cl_program prog = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels;
};

std::mutex g_mutex;  // guards every map below; builds run under it (rare, cached)
std::unordered_map<std::string, std::unique_ptr<Program>> g_programs;  // full key -> program
std::unordered_map<std::string, Kernel*> g_by_stem;                    // short key -> kernel
std::map<std::string, std::string> g_sources;
std::vector<Kernel*> g_all_kernels;
ProgramStats g_stats;

std::string read_file(const std::string& path, bool* ok) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *ok = false;
    return "";
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *ok = true;
  return ss.str();
}

std::string raw_source(const std::string& name) {
  if (!env::kernel_dir().empty()) {
    bool ok = false;
    std::string s = read_file(env::kernel_dir() + "/" + name, &ok);
    TORCH_CHECK(ok, "torch_ocl: TORCH_OCL_KERNEL_DIR is set but ", env::kernel_dir(), "/", name,
                " cannot be read");
    return s;
  }
  const auto& emb = embedded_kernel_sources();
  auto it = emb.find(name);
  TORCH_CHECK(it != emb.end(), "torch_ocl: no embedded kernel source named ", name);
  return it->second;
}

// Textually expands `#include "file"` so embedded sources need no include path.
std::string expand_includes(const std::string& src, int depth = 0) {
  TORCH_CHECK(depth < 8, "torch_ocl: kernel #include nesting too deep");
  std::stringstream in(src), out;
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find("#include \"");
    if (p != std::string::npos && line.find_first_not_of(" \t") == p) {
      auto q = line.find('"', p + 10);
      out << expand_includes(raw_source(line.substr(p + 10, q - p - 10)), depth + 1) << "\n";
    } else {
      out << line << "\n";
    }
  }
  return out.str();
}

// ---- disk cache -------------------------------------------------------------------------
// File layout: "TOCLBIN2" | u64 key length | key | u64 binary length | u64 fnv(binary) | binary
const char kMagic[8] = {'T', 'O', 'C', 'L', 'B', 'I', 'N', '2'};

bool disk_enabled() {
  const auto& dir = env::cache_dir();
  return !(dir.empty() || dir == "0" || dir == "off");
}

void mkdirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0700);
  }
}

// opts: the build options the binary was compiled with. A binary is still built with them: a
// vendor JIT takes its code-generation options there (NVIDIA's binary is PTX, and ptxas options
// such as -cl-nv-maxrregcount apply when it becomes machine code), so a program loaded from the
// cache must get the options a fresh build got.
bool try_load_binary(Device& d, const std::string& path, const std::string& key, const std::string& opts,
                     cl_program* out) {
  bool ok = false;
  std::string blob = read_file(path, &ok);
  if (!ok) return false;
  auto fail = [&]() {
    g_stats.disk_rejected++;
    unlink(path.c_str());
    return false;
  };
  size_t pos = 0;
  auto take = [&](void* dst, size_t n) {
    if (pos + n > blob.size()) return false;
    memcpy(dst, blob.data() + pos, n);
    pos += n;
    return true;
  };
  char magic[8];
  uint64_t klen = 0, blen = 0, bhash = 0;
  if (!take(magic, 8) || memcmp(magic, kMagic, 8) != 0 || !take(&klen, 8) || klen != key.size() ||
      pos + klen > blob.size() || blob.compare(pos, klen, key) != 0)
    return fail();
  pos += klen;
  if (!take(&blen, 8) || !take(&bhash, 8) || pos + blen != blob.size()) return fail();
  std::string bin = blob.substr(pos);
  if (fnv1a(bin) != bhash) return fail();
  const unsigned char* bptr = reinterpret_cast<const unsigned char*>(bin.data());
  size_t bsize = bin.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(d.ctx, 1, &d.id, &bsize, &bptr, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) return fail();
  if (clBuildProgram(p, 1, &d.id, opts.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(p);
    return fail();
  }
  *out = p;
  return true;
}

void store_binary(Device& d, cl_program p, const std::string& path, const std::string& key) {
  size_t bsize = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(bsize), &bsize, nullptr) != CL_SUCCESS || bsize == 0)
    return;
  std::string bin(bsize, '\0');
  unsigned char* bptr = reinterpret_cast<unsigned char*>(bin.data());
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bptr), &bptr, nullptr) != CL_SUCCESS) return;
  mkdirs(env::cache_dir());
  // Written to a unique temporary name, then renamed over path (atomic): a reader in another
  // process sees no file or a whole one. mkstemp, not the pid: processes in different
  // containers sharing one cache dir can have the same pid.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return;
  FILE* f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(tmp.c_str());
    return;
  }
  const uint64_t klen = key.size(), blen = bin.size(), h = fnv1a(bin);
  bool ok = fwrite(kMagic, 8, 1, f) == 1 && fwrite(&klen, 8, 1, f) == 1 && fwrite(key.data(), 1, klen, f) == klen &&
            fwrite(&blen, 8, 1, f) == 1 && fwrite(&h, 8, 1, f) == 1 && fwrite(bin.data(), 1, blen, f) == blen;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    unlink(tmp.c_str());
    return;
  }
  if (rename(tmp.c_str(), path.c_str()) == 0) g_stats.disk_written++;
  else unlink(tmp.c_str());
}

// CL_PROGRAM_BUILD_LOG, or CL_PROGRAM_BUILD_OPTIONS (the options the driver was given) of p.
std::string build_info(Device& d, cl_program p, cl_program_build_info what = CL_PROGRAM_BUILD_LOG) {
  size_t n = 0;
  clGetProgramBuildInfo(p, d.id, what, 0, nullptr, &n);
  std::string text(n, '\0');
  if (n) clGetProgramBuildInfo(p, d.id, what, n, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}
std::string build_log(Device& d, cl_program p) { return build_info(d, p); }

// Called with g_mutex held.
// label names the program in build logs (a kernel file's stem, or the kernel of a generated source).
Program& program_for(Device& d, const std::string& source, const std::string& options, const std::string& label) {
  std::string opts = options;
  if (!env::extra_build_options().empty()) opts += " " + env::extra_build_options();
  const std::string src_hash = hex64(fnv1a(source));
  const std::string mem_key = std::to_string(d.index) + "|" + src_hash + "|" + opts;
  auto it = g_programs.find(mem_key);
  if (it != g_programs.end()) return *it->second;

  const std::string disk_key = d.info.platform_name + "|" + d.info.name + "|" + d.info.driver_version + "|" +
                               d.info.opencl_version + "|" + src_hash + "|" + hex64(fnv1a(source, 7)) + "|" + opts;
  const std::string path = env::cache_dir() + "/" + hex64(fnv1a(disk_key)) + ".bin";
  cl_program p = nullptr;
  if (disk_enabled() && try_load_binary(d, path, disk_key, opts, &p)) {
    g_stats.loaded_from_disk++;
    if (env::print_build_logs())  // a binary's build runs the vendor's back end (ptxas on NVIDIA) again
      std::fprintf(stderr, "torch_ocl: loaded %s on ocl:%d from the disk cache with options '%s'; build log:\n%s\n",
                   label.c_str(), d.index, build_info(d, p, CL_PROGRAM_BUILD_OPTIONS).c_str(), build_log(d, p).c_str());
  } else {
    const char* s = source.c_str();
    size_t len = source.size();
    cl_int err = CL_SUCCESS;
    p = clCreateProgramWithSource(d.ctx, 1, &s, &len, &err);
    OCL_CHECK(err, "creating an OpenCL program");
    err = clBuildProgram(p, 1, &d.id, opts.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log = build_log(d, p);
      clReleaseProgram(p);
      TORCH_CHECK(false, "torch_ocl: building an OpenCL program failed on ocl:", d.index, " (", d.info.name,
                  ") with ", cl_error_name(err), "\noptions: ", opts, "\nbuild log:\n", log);
    }
    g_stats.built_from_source++;
    if (env::print_build_logs())
      std::fprintf(stderr, "torch_ocl: built %s on ocl:%d with options '%s'; build log:\n%s\n", label.c_str(),
                   d.index, build_info(d, p, CL_PROGRAM_BUILD_OPTIONS).c_str(), build_log(d, p).c_str());
    if (disk_enabled()) store_binary(d, p, path, disk_key);
  }
  auto prog = std::make_unique<Program>();
  prog->prog = p;
  auto& ref = *prog;
  g_programs.emplace(mem_key, std::move(prog));
  return ref;
}

Kernel& kernel_in(Device& d, Program& prog, const std::string& name) {
  auto it = prog.kernels.find(name);
  if (it != prog.kernels.end()) return *it->second;
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(prog.prog, name.c_str(), &err);
  OCL_CHECK(err, "creating kernel " + name + " on ocl:" + std::to_string(d.index));
  auto kern = std::make_unique<Kernel>();
  kern->k = k;
  kern->name = name;
  Kernel& ref = *kern;
  g_all_kernels.push_back(&ref);
  prog.kernels.emplace(name, std::move(kern));
  return ref;
}

}  // namespace

const std::string& kernel_source(const std::string& stem) {
  std::lock_guard<std::mutex> g(g_mutex);
  auto it = g_sources.find(stem);
  if (it != g_sources.end()) return it->second;
  std::string name = stem.find('.') == std::string::npos ? stem + ".cl" : stem;
  return g_sources.emplace(stem, expand_includes(raw_source(name))).first->second;
}

Kernel& get_kernel_from_source(Device& d, const std::string& source, const std::string& options,
                               const std::string& name) {
  std::lock_guard<std::mutex> g(g_mutex);
  return kernel_in(d, program_for(d, source, options, name), name);
}

Kernel& get_kernel(Device& d, const std::string& stem, const std::string& options, const std::string& name) {
  std::string key;
  key.reserve(stem.size() + options.size() + name.size() + 8);
  key += std::to_string(d.index);
  key += '|';
  key += stem;
  key += '|';
  key += options;
  key += '|';
  key += name;
  {
    std::lock_guard<std::mutex> g(g_mutex);
    auto it = g_by_stem.find(key);
    if (it != g_by_stem.end()) return *it->second;
  }
  const std::string& src = kernel_source(stem);
  std::lock_guard<std::mutex> g(g_mutex);
  Kernel& k = kernel_in(d, program_for(d, src, options, stem), name);
  g_by_stem.emplace(key, &k);
  return k;
}

ProgramStats program_stats() {
  std::lock_guard<std::mutex> g(g_mutex);
  return g_stats;
}

std::map<std::string, KernelStats> kernel_stats() {
  std::lock_guard<std::mutex> g(g_mutex);
  std::map<std::string, KernelStats> out;
  for (Kernel* k : g_all_kernels) {
    const uint64_t n = k->launches.load();
    if (!n) continue;
    KernelStats& e = out[k->name];
    e.launches += n;
    e.device_ns += k->device_ns.load();
  }
  return out;
}

std::map<std::string, uint64_t> launch_counts() {
  std::map<std::string, uint64_t> out;
  for (const auto& [name, st] : kernel_stats()) out[name] = st.launches;
  return out;
}

void reset_launch_counts() {
  std::lock_guard<std::mutex> g(g_mutex);
  for (Kernel* k : g_all_kernels) k->launches.store(0), k->device_ns.store(0);
}

}  // namespace torch_ocl
