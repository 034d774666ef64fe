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
#include <string>

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

}  // namespace torch_ocl::tuning
