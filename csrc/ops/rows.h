// Configuration of the row kernels (kernels/softmax.cl, kernels/norm.cl, kernels/cross_entropy.cl
// on kernels/rows.clh), shared by ops/softmax.cpp, ops/norm.cpp and ops/cross_entropy.cpp: how
// the team of work-items that shares a row reduces (ROW_REDUCE, see kernels/subgroup.clh),
// whether rows are read as 4-element vectors, how many elements each work-item keeps in
// registers, NVIDIA's register cap, and the LayerNorm backward's grid. Each family reads its own
// tuning entry ("softmax/rows", "norm/rows", "cross_entropy/rows"; runtime/Tuning.h), so the
// three can be tuned apart.
#pragma once
#include "../runtime/Tuning.h"
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace torch_ocl::rows {

constexpr int kMaxWG = 256;  // MAX_WG of kernels/rows.clh: the largest work-group a row kernel launches

// Whether x's channels are its innermost dim over a dense row-major rest (channels_last,
// channels_last_3d, or an (N, L, C) tensor seen as (N, C, L)): N * HW rows of C channels, which
// the channels-last kernels of batch_norm.cl and norm.cl (GroupNorm) read in place.
inline bool channels_innermost(const at::Tensor& x) {
  if (x.dim() < 3 || x.is_contiguous()) return false;
  std::vector<int64_t> perm{0};
  for (int64_t i = 2; i < x.dim(); ++i) perm.push_back(i);
  perm.push_back(1);
  return x.permute(perm).is_contiguous();
}

inline int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Team width for rows of C elements: enough work-items for `items` elements each, at most a group.
inline int team_width(int64_t C, int items) {
  return static_cast<int>(std::min<int64_t>(next_pow2((C + items - 1) / items), kMaxWG));
}

// How a launch over `rows` rows of C elements splits them among work-groups. c_fast: a team of
// consecutive work-items per row, kMaxWG / T rows per group. Otherwise adjacent work-items
// serve adjacent rows (`adjacent`: how many rows lie next to each other in memory, so at most
// 32 lanes of them) and the team spans the row with a stride of `lanes` work-items.
struct Split {
  int T = 1, local = 1, c_fast = 1;
  size_t groups = 0;
};
// max_team: the widest team wanted (a power of two; rows longer than T * items stream).
inline Split split(int64_t rows, int64_t C, int items, bool c_fast, int64_t adjacent, int max_team = kMaxWG) {
  Split s;
  const int team = std::min(team_width(C, items), max_team);
  s.c_fast = c_fast ? 1 : 0;
  if (c_fast) {
    s.T = team;
    s.local = kMaxWG;
  } else {
    const int64_t lanes = std::min<int64_t>(next_pow2(adjacent), 32);
    s.T = static_cast<int>(std::min<int64_t>(team, kMaxWG / lanes));
    s.local = static_cast<int>(lanes * s.T);
  }
  const int64_t per_group = s.local / s.T;
  s.groups = static_cast<size_t>((rows + per_group - 1) / per_group);
  return s;
}

// The serial kernels (Config::serial): how many work-items share `rows` rows, in blocks of
// consecutive rows: a few per compute unit, so that the device's threads stay busy to the end,
// at most one per row, at least one. (work-items, rows per work-item).
constexpr int64_t kSerialItemsPerCU = 8;
inline std::pair<int64_t, int64_t> serial_split(const Device& d, int64_t rows) {
  const int64_t items = std::max<int64_t>(std::min<int64_t>(rows, kSerialItemsPerCU * d.info.compute_units), 1);
  return {items, (rows + items - 1) / items};
}

// Defaults: on NVIDIA, warp shuffles by inline PTX (shfl.sync) for teams of at most one warp
// (no barrier at all), the local-memory tree for wider teams and on other devices; 4-element
// vectors where the layout allows; 16 register elements per work-item. Measured on an H200
// (bench/RESULTS.md, two runs): LayerNorm over 512-wide rows (32-wide teams) 82% of copy with
// shuffles against 68% with the tree; softmax over 4096-wide rows (256-wide teams: shuffles,
// one barrier, then 8 partials per work-item) 86-93% with shuffles against 95-98% with the
// tree. BWD_ITEMS=32 ran the LayerNorm backward over 131072 x 512 at 93% of copy against 85%
// with 16, but GPTMini large's 8192 x 512 backward slower (17 calls: 0.64 against 0.48 ms per
// step), so the default stays 16. Text "ROWRED=local|ptx|khr|emu VEC=0|1 ITEMS=4..64 MAXRREG=0|16..255" (and,
// for norm, "BWD_ITEMS=4..64 BWD_MAXRREG=0|16..255 GROUPS_PER_CU=1..64 FAN_IN=4..32 PREFETCH=0|1 SERIAL=0|1"; for
// cross-entropy, "FWD_TEAM=0|32..256 SERIAL=0|1") overrides any of them, from the
// tuning file or in-process through torch_ocl._C._tuning_set(device, key, text) (the tests and
// bench/bench_ops.py --rows do). emu (shuffles emulated through local memory) lets CPU devices
// run the shuffle code paths in tests; ptx needs NVIDIA, khr cl_khr_subgroup_shuffle.
struct Config {
  int row_reduce = 0;     // ROW_REDUCE: 0 local tree, 1 ptx, 2 khr, 3 emu
  int shuffle_team_max = 1 << 30;  // wider teams take the local tree instead of row_reduce (reduce_for)
  int bwd_items = 0;      // norm: BWD_ITEMS, ITEMS of the backward kernels (0: ITEMS)
  int vec = 1;            // 1: VEC=4 where the tensors allow it; 0: scalar always
  int items = 16;         // ITEMS: row elements a work-item keeps in registers
  int groups_per_cu = 4;  // norm: layer_norm_bwd groups per compute unit at most, when it sums weight/bias grads
  int fan_in = 16;        // norm: FAN_IN, partials summed per last arrival (groups <= FAN_IN^2)
  int prefetch = 0;       // norm: BWD_PREFETCH, layer_norm_bwd loads the next rows during the current ones
  int max_regs = 0;       // MAXRREG: NVIDIA's per-work-item register cap for the family's programs (norm: the forward's; 0: the compiler's choice)
  int bwd_max_regs = 0;   // norm: BWD_MAXRREG, the backward kernels' register cap (0: the compiler's choice)
  int fwd_team = 0;       // cross-entropy: FWD_TEAM, the forward's widest team (0: sized to the device, cross_entropy.cpp: forward_team)
  int serial = 0;         // norm, cross-entropy: SERIAL, one work-item per block of whole rows, no teams (CPU devices' default)
};


enum Family { kSoftmax = 0, kNorm = 1, kCrossEntropy = 2 };

// Applies `text` to c; "" or what is wrong with it. The norm family also takes the LayerNorm
// backward's keys, cross-entropy FWD_TEAM.
inline std::string apply(const Device& d, const std::string& text, Family family, Config& c) {
  const bool norm_keys = family == kNorm, ce_keys = family == kCrossEntropy;
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  if (!tuning::parse_items(text, &items, &err)) return err;
  Config r = c;
  for (const auto& [key, value] : items) {
    if (key == "ROWRED") {
      if (value == "local") r.row_reduce = 0;
      else if (value == "ptx" && d.info.nvidia) r.row_reduce = 1;
      else if (value == "khr" && d.info.has_extension("cl_khr_subgroup_shuffle")) r.row_reduce = 2;
      else if (value == "emu") r.row_reduce = 3;
      else return "ROWRED=" + value + " is not local, emu, ptx (NVIDIA) or khr (cl_khr_subgroup_shuffle) here";
      r.shuffle_team_max = 1 << 30;  // a chosen mode serves every team width
      continue;
    }
    int* field = key == "VEC"                           ? &r.vec
                 : key == "ITEMS"                       ? &r.items
                 : key == "MAXRREG"                     ? &r.max_regs
                 : norm_keys && key == "BWD_ITEMS"     ? &r.bwd_items
                 : norm_keys && key == "GROUPS_PER_CU" ? &r.groups_per_cu
                 : norm_keys && key == "FAN_IN"        ? &r.fan_in
                 : norm_keys && key == "PREFETCH"      ? &r.prefetch
                 : norm_keys && key == "BWD_MAXRREG"   ? &r.bwd_max_regs
                 : (norm_keys || ce_keys) && key == "SERIAL" ? &r.serial
                 : ce_keys && key == "FWD_TEAM"        ? &r.fwd_team
                                                        : nullptr;
    if (!field)
      return "unknown key '" + key + "' (ROWRED, VEC, ITEMS, MAXRREG" +
             (norm_keys ? ", BWD_ITEMS, BWD_MAXRREG, GROUPS_PER_CU, FAN_IN, PREFETCH, SERIAL)"
              : ce_keys ? ", FWD_TEAM, SERIAL)" : ")");
    if (!tuning::parse_int(key, value, field, &err)) return err;
  }
  if (r.vec != 0 && r.vec != 1) return "VEC must be 0 or 1";
  if (r.prefetch != 0 && r.prefetch != 1) return "PREFETCH must be 0 or 1";
  if (r.serial != 0 && r.serial != 1) return "SERIAL must be 0 or 1";
  if (r.items < 4 || r.items > 64 || (r.items & (r.items - 1)) != 0) return "ITEMS must be 4, 8, 16, 32 or 64";
  if (r.bwd_items != 0 && (r.bwd_items < 4 || r.bwd_items > 64 || (r.bwd_items & (r.bwd_items - 1)) != 0))
    return "BWD_ITEMS must be 4, 8, 16, 32 or 64";
  if (r.groups_per_cu < 1 || r.groups_per_cu > 64) return "GROUPS_PER_CU must be 1..64";
  if (r.fan_in < 4 || r.fan_in > 32) return "FAN_IN must be 4..32";
  for (const int regs : {r.max_regs, r.bwd_max_regs}) {
    if (regs != 0 && (regs < 16 || regs > 255)) return "MAXRREG and BWD_MAXRREG must be 0 or 16..255";
    if (regs != 0 && !d.info.nvidia) return "MAXRREG and BWD_MAXRREG need NVIDIA's compiler (-cl-nv-maxrregcount)";
  }
  if (r.fwd_team != 0 && (r.fwd_team < 32 || r.fwd_team > kMaxWG || (r.fwd_team & (r.fwd_team - 1)) != 0))
    return "FWD_TEAM must be 0, 32, 64, 128 or 256";
  c = r;
  return "";
}

// The ROW_REDUCE for teams of `team` work-items under c.
inline int reduce_for(const Config& c, int64_t team) { return team > c.shuffle_team_max ? 0 : c.row_reduce; }

// The build options of kernels/rows.clh that every family passes: the accumulation type
// (double when acc_double), MAX_WG, ITEMS and ROW_REDUCE, then NVIDIA's register cap. The cap is
// sized for 32-bit accumulation; kernels accumulating in double hold every element in two
// registers and get twice the cap (at most 255).
inline std::string options(const Config& c, bool acc_double, int row_reduce) {
  std::string o = std::string(" -DACC=") + (acc_double ? "double -DACC_IS_DOUBLE=1" : "float") +
                  " -DMAX_WG=" + std::to_string(kMaxWG) + " -DITEMS=" + std::to_string(c.items) +
                  " -DROW_REDUCE=" + std::to_string(row_reduce);
  if (c.max_regs)
    o += " -cl-nv-maxrregcount=" + std::to_string(std::min(acc_double ? 2 * c.max_regs : c.max_regs, 255));
  return o;
}
// c for the norm backward kernels: BWD_ITEMS in place of ITEMS when set, and BWD_MAXRREG's cap.
inline Config backward(const Config& c) {
  Config b = c;
  if (c.bwd_items) b.items = c.bwd_items;
  b.max_regs = c.bwd_max_regs;
  return b;
}

// The configuration of `family` for device d (tuning entry "softmax/rows", "norm/rows" or
// "cross_entropy/rows"), derived once per device and tuning generation. An invalid entry
// warns and keeps the defaults. Cross-entropy keeps 32 elements per work-item by default, so
// rows of 8192 classes (GPT-2-sized vocabularies) fit a team of 256 in registers.
inline Config config(const Device& d, Family family) {
  static const char* const keys[] = {"softmax/rows", "norm/rows", "cross_entropy/rows"};
  static std::mutex mu;
  static std::unordered_map<int, std::pair<uint64_t, Config>> cache[3];  // device -> (generation, config)
  const uint64_t gen = tuning::generation();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[family][d.index];
  if (slot.first != gen) {
    Config c;
    if (family == kCrossEntropy) c.items = 32;
    if (d.info.nvidia) {
      c.row_reduce = 1;
      c.shuffle_team_max = 32;
      // Cross-entropy's kernels take 88 (forward) and 96 (backward) registers on their own,
      // which leaves room for only two 256-wide work-groups per SM: too few rows in flight to
      // hide a row's load-reduce-reduce chain. Capped at 64 (four groups), [8192, 8192] fp32
      // ran at 65% of copy forward (48% uncapped) and 102% backward (87%), same H200 run;
      // a cap of 48 spilled too much (49% / 47%). bench/RESULTS.md, session 5.
      if (family == kCrossEntropy) c.max_regs = 64;
      // The LayerNorm/RMSNorm forward takes 88 registers: two 256-wide groups per SM. Capped at
      // 80 (three groups, no spills), [131072, 512] fp32 ran at 91.6% of copy against 77.4%
      // uncapped, same H200 run (72: 90.6% with spills; 64: 76.9%). The backward takes 168: one
      // group per SM. Capped at 128 (two groups; 32 bytes of spills) it ran [131072, 512] at 90%
      // of copy against 83%, and GPTMini large's [8192, 512] 23% faster (same run); 96 and 80
      // spilled hundreds of bytes and lost. bench/RESULTS.md, session 7.
      if (family == kNorm) {
        c.max_regs = 80;
        c.bwd_max_regs = 128;
      }
    }
    // CPU devices (PoCL): the LayerNorm/RMSNorm backward with 8 register elements per
    // work-item, i.e. wider teams. Its barriers split it into loops over the work-group whose
    // per-work-item state (the register arrays) PoCL keeps in memory; fewer elements each
    // halved its time. 2-core AVX2 VM, LayerNorm forward + backward, two rounds (bench/RESULTS.md,
    // session 13): [1024, 128] 2.17 / 2.33 ms -> 1.56 / 1.37, [2048, 512] 14.9 / 14.6 -> 8.1.
    if (d.info.is_cpu() && family == kNorm) c.bwd_items = 8;
    // ... and with SERIAL=1 neither: one work-item per block of whole rows, no barrier (norm.cl).
    // Same kind of VM (bench/RESULTS.md, session 15), LayerNorm over [1024, 128], best of three
    // interleaved rounds: forward 0.374 -> 0.093 ms, forward + backward 1.53 -> 0.38 (torch's
    // CPU kernels 0.117 / 0.316); GPTMini small8's step 108-123 -> 100-110 ms.
    if (d.info.is_cpu() && family == kNorm) c.serial = 1;
    // The same for cross-entropy: GPTMini small8's [1024, 256] forward + backward, same VM,
    // three interleaved rounds: 3.84-4.13 -> 0.65-0.93 ms (torch's CPU kernels 0.55-0.59).
    if (d.info.is_cpu() && family == kCrossEntropy) c.serial = 1;
    tuning::apply_override(d, keys[family], "", "", "row kernel configuration",
                           [&](const std::string& text) { return apply(d, text, family, c); });
    slot = {gen, c};
  }
  return slot.second;
}

}  // namespace torch_ocl::rows
