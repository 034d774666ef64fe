// Per-device tuning results for any kernel family: "family/key" -> option string (for
// example "gemm/float32/large" -> "KERNEL=tiled TILE_M=128 ..."). They live in one JSON file
// per device and driver, <tuning dir>/<device>-<driver>.json, written by
// `python -m torch_ocl.tune <family>`. A family asks lookup() and falls back to its own
// vendor defaults on "". The file is read once per device; a missing file means "no
// entries", a corrupt or foreign one is ignored with a warning. generation() changes
// whenever the answers may have changed, so callers can cache what they derive from them.
#pragma once
#include "Device.h"
#include <c10/core/ScalarType.h>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace torch_ocl::tuning {

// The tuned value of `key` for device d, or "" when there is none. In-memory overrides
// (set()) win over the file. `source`, if given, says where the value came from.
std::string lookup(const Device& d, const std::string& key, std::string* source = nullptr);
// Bumped by set(), reload() and set_directory(): cached derived values must be recomputed.
uint64_t generation();

// The dtype part of a key ("float32", "bfloat16", "int64", ...), shared by every family.
const char* dtype_key(c10::ScalarType t);

// Folder of the tuning files (TORCH_OCL_TUNING_DIR, or <TORCH_OCL_CACHE_DIR>/tuning).
std::string directory();
// The file for device d in directory() (it need not exist).
std::string file_path(const Device& d);

// Process-local override of one entry (used by the tuner while it times candidates);
// an empty value removes the override.
void set(const Device& d, const std::string& key, const std::string& value);
// Drops the overrides and forgets the files read so far (they are read again on demand).
void reload();
// Reads tuning files from `dir` from now on ("" restores the default); implies reload().
void set_directory(const std::string& dir);

// ---- option strings: "KEY=value KEY=value" (spaces, commas, semicolons or tabs between) ----

// The items of an option string, in order; on a malformed item returns false and says why in
// *error. Keys and values are not interpreted here.
bool parse_items(const std::string& text, std::vector<std::pair<std::string, std::string>>* items,
                 std::string* error);
// A value that must be a whole integer: true and *out, or false with a message naming `item`.
bool parse_int(const std::string& key, const std::string& value, int* out, std::string* error);

// The override of a kernel family's configuration for device d, first accepted one wins:
// the environment variable `env_name` (its value `env_text`, read once by the caller), then
// the tuning file's entry `key`. `apply(text)` tries one text and returns "" when it applied
// it, else what is wrong with it; a rejected text warns ("ignoring <what> '<text>' from
// <source> ...") and the next source is tried. Returns whether an override was applied.
bool apply_override(const Device& d, const std::string& key, const char* env_name, const std::string& env_text,
                    const char* what, const std::function<std::string(const std::string&)>& apply);

}  // namespace torch_ocl::tuning
