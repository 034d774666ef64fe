// Tuning files: one small JSON document per device and driver,
//   {"format": 1, "device": "<CL_DEVICE_NAME>", "driver": "<CL_DRIVER_VERSION>",
//    "entries": {"gemm/float32/large": "KERNEL=tiled TILE_M=128 ...", ...}, ...}
// Only "entries" is used here; any other member (the tuner stores its timings) is skipped.
// The parser below is a strict subset of JSON (no trailing commas), enough for these files.
#include "Tuning.h"
#include "Env.h"
#include <c10/util/Exception.h>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace torch_ocl::tuning {
namespace {

// ---- a minimal JSON reader ----------------------------------------------------------------
struct Json {
  const std::string& s;
  size_t i = 0;
  std::string error;

  bool fail(const std::string& what) {
    if (error.empty()) error = what + " at byte " + std::to_string(i);
    return false;
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool string(std::string* out) {
    ws();
    if (i >= s.size() || s[i] != '"') return fail("expected a string");
    ++i;
    std::string v;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c == '\\') {
        if (i >= s.size()) break;
        char e = s[i++];
        switch (e) {
          case '"': case '\\': case '/': v += e; break;
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case 'b': v += '\b'; break;
          case 'f': v += '\f'; break;
          case 'u':  // kept as '?': device names and option strings are ASCII
            if (i + 4 > s.size()) return fail("bad \\u escape");
            i += 4;
            v += '?';
            break;
          default: return fail("bad escape");
        }
      } else {
        v += c;
      }
    }
    if (i >= s.size()) return fail("unterminated string");
    ++i;
    if (out) *out = std::move(v);
    return true;
  }
  // Any value; its text is returned for strings and scalars (objects/arrays are skipped).
  bool value(std::string* out, int depth = 0) {
    ws();
    if (depth > 32) return fail("nested too deeply");
    if (i >= s.size()) return fail("expected a value");
    const char c = s[i];
    if (c == '"') return string(out);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i;
      if (eat(close)) return true;
      do {
        if (c == '{' && (!string(nullptr) || !eat(':'))) return fail("expected \"key\":");
        if (!value(nullptr, depth + 1)) return false;
      } while (eat(','));
      return eat(close) ? true : fail(std::string("expected ',' or '") + close + "'");
    }
    const size_t start = i;
    while (i < s.size() && (isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' || s[i] == '.'))
      ++i;
    if (i == start) return fail("unexpected character");
    if (out) *out = s.substr(start, i - start);
    return true;
  }
  // {"k": <value>, ...}: calls member(key) positioned at each value; member must consume it.
  template <typename F>
  bool object(F member) {
    if (!eat('{')) return fail("expected '{'");
    if (eat('}')) return true;
    do {
      std::string key;
      if (!string(&key) || !eat(':')) return fail("expected \"key\":");
      if (!member(key)) return false;
    } while (eat(','));
    return eat('}') ? true : fail("expected ',' or '}'");
  }
};

struct DeviceEntries {
  bool loaded = false;
  std::map<std::string, std::string> file, overrides;
};

std::mutex g_mutex;
std::map<int, DeviceEntries> g_devices;
std::string g_dir_override;
bool g_dir_overridden = false;
std::atomic<uint64_t> g_generation{1};

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  return out;
}

// Parses the file for d into e.file; a present but unusable file warns and yields nothing.
void load(const Device& d, DeviceEntries& e) {
  e.loaded = true;
  const std::string path = file_path(d);
  std::ifstream f(path, std::ios::binary);
  if (!f) return;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  Json j{text};
  std::string format, device, driver;
  std::map<std::string, std::string> entries;
  bool ok = j.object([&](const std::string& key) {
    if (key == "format") return j.value(&format);
    if (key == "device") return j.string(&device);
    if (key == "driver") return j.string(&driver);
    if (key == "entries")
      return j.object([&](const std::string& k) { return j.string(&entries[k]); });
    return j.value(nullptr);
  });
  if (ok) {
    j.ws();
    if (j.i != text.size()) ok = j.fail("trailing characters");
  }
  std::string why = j.error;
  if (ok && format != "1") why = "unknown format '" + format + "' (expected 1)", ok = false;
  if (ok && (device != d.info.name || driver != d.info.driver_version))
    why = "it was written for '" + device + "' driver '" + driver + "'", ok = false;
  if (!ok) {
    TORCH_WARN("torch_ocl: ignoring the tuning file ", path, " (", why, "); using the built-in defaults. ",
               "Re-run `python -m torch_ocl.tune` or delete the file.");
    return;
  }
  e.file = std::move(entries);
}

}  // namespace

std::string directory() {
  std::lock_guard<std::mutex> g(g_mutex);
  return g_dir_overridden ? g_dir_override : env::tuning_dir();
}

std::string file_path(const Device& d) {
  return directory() + "/" + sanitize(d.info.name) + "-" + sanitize(d.info.driver_version) + ".json";
}

std::string lookup(const Device& d, const std::string& key, std::string* source) {
  std::unique_lock<std::mutex> lk(g_mutex);
  DeviceEntries& e = g_devices[d.index];
  auto o = e.overrides.find(key);
  if (o != e.overrides.end()) {
    if (source) *source = "an in-process tuning override";
    return o->second;
  }
  if (!e.loaded) {
    lk.unlock();  // file_path() takes the lock, and the file is read (and warned about) unlocked
    DeviceEntries fresh;
    load(d, fresh);
    lk.lock();
    DeviceEntries& cur = g_devices[d.index];  // `e` may be gone: reload() can run meanwhile
    if (!cur.loaded) cur.file = std::move(fresh.file), cur.loaded = true;
  }
  const DeviceEntries& cur = g_devices[d.index];
  auto it = cur.file.find(key);
  if (it == cur.file.end()) return std::string();
  std::string value = it->second;
  lk.unlock();  // file_path() takes the lock
  if (source) *source = file_path(d);
  return value;
}

uint64_t generation() { return g_generation.load(std::memory_order_acquire); }

void set(const Device& d, const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> g(g_mutex);
  if (value.empty()) g_devices[d.index].overrides.erase(key);
  else g_devices[d.index].overrides[key] = value;
  g_generation.fetch_add(1, std::memory_order_acq_rel);
}

void reload() {
  std::lock_guard<std::mutex> g(g_mutex);
  g_devices.clear();
  g_generation.fetch_add(1, std::memory_order_acq_rel);
}

void set_directory(const std::string& dir) {
  {
    std::lock_guard<std::mutex> g(g_mutex);
    g_dir_override = dir;
    g_dir_overridden = !dir.empty();
  }
  reload();
}

const char* dtype_key(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat: return "float32";
    case c10::kDouble: return "float64";
    case c10::kHalf: return "float16";
    case c10::kBFloat16: return "bfloat16";
    case c10::kChar: return "int8";
    case c10::kByte: return "uint8";
    case c10::kShort: return "int16";
    case c10::kInt: return "int32";
    case c10::kLong: return "int64";
    default: return "other";
  }
}

bool parse_items(const std::string& text, std::vector<std::pair<std::string, std::string>>* items,
                 std::string* error) {
  std::string s = text;
  for (char& ch : s)
    if (ch == ',' || ch == ';' || ch == '\t' || ch == '\n') ch = ' ';
  std::istringstream in(s);
  std::string item;
  items->clear();
  while (in >> item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "'" + item + "' is not KEY=value";
      return false;
    }
    items->emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return true;
}

bool parse_int(const std::string& key, const std::string& value, int* out, std::string* error) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || x < INT_MIN || x > INT_MAX) {
    *error = "'" + key + "=" + value + "' needs an integer value";
    return false;
  }
  *out = int(x);
  return true;
}

bool apply_override(const Device& d, const std::string& key, const char* env_name, const std::string& env_text,
                    const char* what, const std::function<std::string(const std::string&)>& apply) {
  auto try_apply = [&](const std::string& text, const std::string& source) {
    const std::string err = apply(text);
    if (err.empty()) return true;
    TORCH_WARN("torch_ocl: ignoring ", what, " '", text, "' from ", source, " for ", key, " on ", d.info.name, ": ",
               err);
    return false;
  };
  if (!env_text.empty() && try_apply(env_text, env_name)) return true;
  std::string source;
  const std::string tuned = lookup(d, key, &source);
  return !tuned.empty() && try_apply(tuned, source);
}

}  // namespace torch_ocl::tuning
