// Scaled dot-product attention: the SDPA backend choice for ocl and the overrideable fused
// forward/backward (kernels/attention.cl). F.scaled_dot_product_attention on ocl tensors
// runs one fused kernel forward and, backward, either the fused mode (a row-term kernel and
// one dK/dV kernel that also adds dQ with float atomics: 5 matrix products) or the split,
// deterministic mode (a separate dQ kernel: 7 products), with O(B*H*L) extra memory (the row
// logsumexp and the softmax-backward row term; a float dQ workspace for 16-bit dtypes in
// fused mode); the L x S matrix is never materialized.
// q/k/v are [B, H, L|S, D] with any strides; float masks broadcast through zero strides.
#include "../aten/Routing.h"
#include "../runtime/Env.h"
#include "../runtime/Generator.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/SDPBackend.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <torch/library.h>

namespace torch_ocl {
namespace {

constexpr int64_t kMaxHeadDim = 256;
// attention_bwd_prep's work-group: PREP_LANES (16) work-items per row, at most PREP_MAX_WG (256).
constexpr size_t kPrepGroup = 256, kPrepRows = kPrepGroup / 16;

// Tile geometry of kernels/attention.cl (its build options; see the tunables there). The
// forward's work-group computes a block_m x block_n score tile per step, each work-item a
// wpt_m x wpt_n micro-tile; the backward's two kernels share one bwd_m x bwd_n tile shape.
struct AttnConfig {
  int head_dim = 0;
  int block_m = 0, block_n = 0, wpt_m = 0, wpt_n = 0;
  int bwd_m = 0, bwd_n = 0, bwd_wpt_m = 0, bwd_wpt_n = 0;
  int prefetch = 1;  // next tile's global loads issued during the current tile's math
  int split_kv = 1;  // forward: separate K and V local tiles (one barrier less per key block)
  int bwd_fused = 1;  // backward: 1 fused (dQ by atomics from the dK/dV kernel), 0 split (BWD=)
  int atomic = 0;     // the fused mode's float atomic add: ATOMIC_ADD in attention.cl (ATOMIC=)
  int softmax_exp = 0;  // SOFTMAX_EXP (EXP=exp|exp2|native): exp(), or base-2 scores and exp2/native_exp2
  int row_reduce = 0;   // ROW_REDUCE (ROWRED=local|ptx|khr|emu): the forward's row max/sum by shuffles
  int p_pad = 4;        // P_PAD (PPAD=): row padding of the P/dS tiles
  int bwd_prefetch = -1;  // BWD_PREFETCH (BWD_PREFETCH=): the backward's own prefetch choice; -1: as PREFETCH
  int dq_vec = -1;        // DQ_VEC_COLS (DQVEC=): fused dQ columns 4*d4+k (float4 K reads) or d4+k*D4; -1: by ATOMIC
  int dq_rows = 4;        // DQ_ROWS (DQROWS=4|8): query rows per work-item of the fused dQ product
  // The tensor-core kernels (attention_mma_*; MMA=off|ptx|emu): 0 off, 1 NVIDIA PTX mma.sync,
  // 2 its emulation (tests). They take float32 with head dimensions up to 64 and no dropout.
  int mma = 0;
  int mma_warps = 4;  // MMA_WARPS: warps per work-group (16 query rows / keys each)
  int mma_n = 32;     // MMA_N: the forward's keys per step
  int mma_bq = 16;    // MMA_BQ: the backward's query rows per step
  int mma_max_regs = 0;  // MMA_MAXRREG: NVIDIA's register cap for the tensor-core program (0: none)
  int mma_fetch = 1;     // MMA_FETCH: the forward's K/V loads issued before its barrier (into registers)
  int mma_bwd_fetch = 1;  // MMA_BWD_FETCH: the backward's next Q/dO rows loaded during the current step
  // GEMM=on|off: float32/float64 attention without dropout through the matrix-product kernels
  // and an L x S score matrix in memory (kernels/attention_gemm.cl; see gemm_path).
  int gemm = 0;
  bool ok = false;

  size_t fwd_threads() const { return size_t(block_m / wpt_m) * (block_n / wpt_n); }
  size_t bwd_threads() const { return size_t(bwd_m / bwd_wpt_m) * (bwd_n / bwd_wpt_n); }
  // Local memory of the forward kernel / the larger backward kernel / all, in elements of
  // the compute type.
  size_t fwd_elems() const {
    const size_t ld = head_dim + 4;
    return (block_m + block_n * (1 + split_kv)) * ld + block_m * (block_n + p_pad) + block_m * (block_n / wpt_n + 1);
  }
  size_t bwd_elems() const {
    const size_t ld = head_dim + 4;
    const size_t dq = 2 * (bwd_m + bwd_n) * ld + bwd_m * (bwd_n + p_pad);
    const size_t dkdv = 2 * (bwd_m + bwd_n) * ld + 2 * bwd_n * (bwd_m + p_pad) + 2 * bwd_m;
    return std::max(dq, dkdv);
  }
  size_t local_elems() const { return std::max(fwd_elems(), bwd_elems()); }
  // The divisibility rules the kernel's #error checks enforce.
  bool valid() const {
    const int d4 = head_dim / 4;
    auto div = [](int a, int b) { return a > 0 && b > 0 && b % a == 0; };
    return (prefetch == 0 || prefetch == 1) && (split_kv == 0 || split_kv == 1) &&
           (bwd_fused == 0 || bwd_fused == 1) && atomic >= 0 && atomic <= 3 && softmax_exp >= 0 &&
           softmax_exp <= 2 && row_reduce >= 0 && row_reduce <= 3 && bwd_prefetch >= -1 && bwd_prefetch <= 1 &&
           dq_vec >= -1 && dq_vec <= 1 && (dq_rows == 4 || dq_rows == 8) && bwd_m % dq_rows == 0 && p_pad >= 0 &&
           p_pad <= 64 && p_pad % 4 == 0 && head_dim % 4 == 0 && div(wpt_m, block_m) && div(wpt_n, block_n) &&
           mma >= 0 && mma <= 2 && mma_warps >= 1 && mma_warps <= 8 && mma_n >= 8 && mma_n <= 128 &&
           mma_n % 8 == 0 && mma_bq >= 16 && mma_bq <= 64 && mma_bq % 16 == 0 &&
           (mma_max_regs == 0 || (mma_max_regs >= 64 && mma_max_regs <= 255)) && (mma_fetch == 0 || mma_fetch == 1) &&
           (mma_bwd_fetch == 0 || mma_bwd_fetch == 1) && (gemm == 0 || gemm == 1) &&
           block_n % 4 == 0 && div(block_n / wpt_n, d4) && div(bwd_wpt_m, bwd_m) && div(bwd_wpt_n, bwd_n) &&
           bwd_m % 4 == 0 && bwd_n % 4 == 0 && div(bwd_n / bwd_wpt_n, d4) && div(bwd_m / bwd_wpt_m, d4);
  }
  std::string options() const {
    auto o = [](const char* k, int v) { return std::string(" -D") + k + "=" + std::to_string(v); };
    return o("HEAD_DIM", head_dim) + o("BLOCK_M", block_m) + o("BLOCK_N", block_n) + o("WPT_M", wpt_m) +
           o("WPT_N", wpt_n) + o("BWD_BLOCK_M", bwd_m) + o("BWD_BLOCK_N", bwd_n) + o("BWD_WPT_M", bwd_wpt_m) +
           o("BWD_WPT_N", bwd_wpt_n) + o("PREFETCH", prefetch) + o("SPLIT_KV", split_kv) +
           o("SOFTMAX_EXP", softmax_exp) + o("ROW_REDUCE", row_reduce) + o("P_PAD", p_pad) +
           (bwd_prefetch >= 0 ? o("BWD_PREFETCH", bwd_prefetch) : "") + (dq_vec >= 0 ? o("DQ_VEC_COLS", dq_vec) : "") +
           (dq_rows != 4 ? o("DQ_ROWS", dq_rows) : "");
  }
  // The tensor-core program's own options (added to options() with its ROW_REDUCE).
  std::string mma_options() const {
    auto o = [](const char* k, int v) { return std::string(" -D") + k + "=" + std::to_string(v); };
    return o("MMA", mma) + o("MMA_WARPS", mma_warps) + o("MMA_N", mma_n) + o("MMA_BQ", mma_bq) +
           o("MMA_FETCH", mma_fetch) + o("MMA_BWD_FETCH", mma_bwd_fetch) +
           (mma == 1 && mma_max_regs ? " -cl-nv-maxrregcount=" + std::to_string(mma_max_regs) : "");
  }
  // The tensor-core kernels' work-group size, and the rows of a work-group's tile (query rows
  // forward, keys backward: 16 per warp).
  size_t mma_threads() const { return 32 * size_t(mma_warps); }
  size_t mma_rows() const { return 16 * size_t(mma_warps); }
  // Local memory of the tensor-core kernels, in floats.
  size_t mma_elems() const {
    const size_t ld = head_dim + 4, bm = mma_rows();
    // The emulation's exchange arrays: 6 floats per work-item for the products, 1 for the
    // forward's row shuffles.
    const size_t emu = mma == 2 ? 6 * mma_threads() : 0;
    const size_t fwd = std::max<size_t>(4 * mma_n, bm) * ld + emu + (mma == 2 ? mma_threads() : 0);
    const size_t bwd = (bm + 4 * mma_bq) * ld + 2 * bm * (mma_bq + 4) + 2 * mma_bq + emu;
    return std::max(fwd, bwd);
  }
  // With what options() leaves out: the backward mode is a choice of kernel, and the atomic
  // add an option of the fused backward's program only (see AttnPlan).
  std::string describe() const {
    return options() + (bwd_fused ? " BWD=fused" : " BWD=split") + " ATOMIC=" + std::to_string(atomic) +
           (mma ? mma_options() : " MMA=0") + (gemm ? " GEMM=on" : "");
  }
};

// Applies "KEY=VALUE" items (tuning::parse_items; keys as in kernels/attention.cl) to c.
// Returns "" or what is wrong with the text.
std::string apply_tiling(const std::string& text, AttnConfig& c) {
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  if (!tuning::parse_items(text, &items, &err)) return err;
  for (const auto& [key, value] : items) {
    // Named values of the two mode keys; numbers are accepted too.
    if (key == "BWD" && (value == "split" || value == "fused")) {
      c.bwd_fused = value == "fused";
      continue;
    }
    if (key == "ATOMIC" && (value == "cas" || value == "ptx" || value == "ext" || value == "ptx4")) {
      c.atomic = value == "cas" ? 0 : value == "ptx" ? 1 : value == "ext" ? 2 : 3;
      continue;
    }
    if (key == "EXP" && (value == "exp" || value == "exp2" || value == "native")) {
      c.softmax_exp = value == "exp" ? 0 : value == "exp2" ? 1 : 2;
      continue;
    }
    if (key == "MMA" && (value == "off" || value == "ptx" || value == "emu")) {
      c.mma = value == "off" ? 0 : value == "ptx" ? 1 : 2;
      continue;
    }
    if (key == "GEMM" && (value == "on" || value == "off")) {
      c.gemm = value == "on";
      continue;
    }
    if (key == "ROWRED" && (value == "local" || value == "ptx" || value == "khr" || value == "emu")) {
      c.row_reduce = value == "local" ? 0 : value == "ptx" ? 1 : value == "khr" ? 2 : 3;
      continue;
    }
    int* field = key == "BLOCK_M"       ? &c.block_m
                 : key == "BLOCK_N"     ? &c.block_n
                 : key == "WPT_M"       ? &c.wpt_m
                 : key == "WPT_N"       ? &c.wpt_n
                 : key == "BWD_BLOCK_M" ? &c.bwd_m
                 : key == "BWD_BLOCK_N" ? &c.bwd_n
                 : key == "BWD_WPT_M"   ? &c.bwd_wpt_m
                 : key == "BWD_WPT_N"   ? &c.bwd_wpt_n
                 : key == "PREFETCH"    ? &c.prefetch
                 : key == "SPLIT_KV"    ? &c.split_kv
                 : key == "BWD"         ? &c.bwd_fused
                 : key == "ATOMIC"      ? &c.atomic
                 : key == "EXP"         ? &c.softmax_exp
                 : key == "ROWRED"      ? &c.row_reduce
                 : key == "PPAD"        ? &c.p_pad
                 : key == "BWD_PREFETCH" ? &c.bwd_prefetch
                 : key == "DQVEC"       ? &c.dq_vec
                 : key == "DQROWS"      ? &c.dq_rows
                 : key == "MMA"         ? &c.mma
                 : key == "MMA_WARPS"   ? &c.mma_warps
                 : key == "MMA_N"       ? &c.mma_n
                 : key == "MMA_BQ"      ? &c.mma_bq
                 : key == "MMA_MAXRREG" ? &c.mma_max_regs
                 : key == "MMA_FETCH"   ? &c.mma_fetch
                 : key == "MMA_BWD_FETCH" ? &c.mma_bwd_fetch
                 : key == "GEMM"        ? &c.gemm
                                        : nullptr;
    if (!field)
      return "unknown key '" + key +
             "' (BLOCK_M, BLOCK_N, WPT_M, WPT_N, BWD_BLOCK_M, BWD_BLOCK_N, BWD_WPT_M, BWD_WPT_N, PREFETCH, SPLIT_KV, "
             "BWD=fused|split, ATOMIC=cas|ptx|ext|ptx4, EXP=exp|exp2|native, ROWRED=local|ptx|khr|emu, PPAD, "
             "BWD_PREFETCH, DQVEC, DQROWS, MMA=off|ptx|emu, MMA_WARPS, MMA_N, MMA_BQ, MMA_MAXRREG, MMA_FETCH, MMA_BWD_FETCH, GEMM=on|off)";
    if (!tuning::parse_int(key, value, field, &err))
      return key == "BWD" || key == "ATOMIC" || key == "EXP" || key == "ROWRED" || key == "MMA" || key == "GEMM"
                 ? err + " or a mode name"
                                                                                                 : err;
  }
  if (!c.valid()) return "not a valid tiling for head dimension class " + std::to_string(c.head_dim) +
                         " (see the #error rules in kernels/attention.cl)";
  return "";
}

// Overrides of the defaults, first valid one wins: TORCH_OCL_ATTN_CONFIG (every head
// dimension class), then the device's tuning file entry "attention/<dtype>/d<class>"
// (runtime/Tuning.h). Invalid text warns and is ignored.
void apply_overrides(const Device& d, at::ScalarType t, AttnConfig& c) {
  const std::string key = std::string("attention/") + tuning::dtype_key(t) + "/d" + std::to_string(c.head_dim);
  tuning::apply_override(d, key, "TORCH_OCL_ATTN_CONFIG", env::attn_config(), "attention tiling",
                         [&](const std::string& text) {
                           AttnConfig r = c;
                           const std::string err = apply_tiling(text, r);
                           if (err.empty()) c = r;
                           return err;
                         });
}


// The tiles for a head dimension on a device. Defaults are sized for NVIDIA-class GPUs: at
// most 48 KiB of local memory (the most NVIDIA's OpenCL gives a work-group), 64-128
// work-items, <= ~64 accumulator registers per work-item. Where a device has less local
// memory (or for double precision) blocks and micro-tiles are halved together, which keeps
// the work-group shape and the kernel's divisibility rules. CPU devices (PoCL) keep the
// same shapes: every work-item loop there is a vectorizable loop over the micro-tile.
AttnConfig attn_config(const Device& d, int64_t D, int64_t Dv, at::ScalarType t) {
  const int64_t need = std::max<int64_t>({D, Dv, 1});
  AttnConfig c;
  for (int hd : {32, 64, 128, 256})
    if (need <= hd) {
      c.head_dim = hd;
      break;
    }
  if (c.head_dim == 0) return c;
  //                      forward: block_m block_n wpt_m wpt_n    backward: m  n  wpt_m wpt_n
  if (c.head_dim == 32)
    c.block_m = 64, c.block_n = 32, c.wpt_m = 4, c.wpt_n = 4, c.bwd_m = 32, c.bwd_n = 32, c.bwd_wpt_m = 4, c.bwd_wpt_n = 4;
  else if (c.head_dim == 64)
    c.block_m = 64, c.block_n = 32, c.wpt_m = 4, c.wpt_n = 4, c.bwd_m = 32, c.bwd_n = 32, c.bwd_wpt_m = 4, c.bwd_wpt_n = 2;
  else if (c.head_dim == 128)
    c.block_m = 32, c.block_n = 32, c.wpt_m = 2, c.wpt_n = 4, c.bwd_m = 16, c.bwd_n = 16, c.bwd_wpt_m = 2, c.bwd_wpt_n = 2;
  else
    c.block_m = 16, c.block_n = 16, c.wpt_m = 2, c.wpt_n = 2, c.bwd_m = 8, c.bwd_n = 8, c.bwd_wpt_m = 1, c.bwd_wpt_n = 1;
  // CPU devices (PoCL runs a work-group as a loop over its work-items on one core): bigger
  // micro-tiles and fewer work-items. PoCL 3.1, 2-core AVX-512 VM, fwd+bwd ms, one run
  // (bench_attention.py --quick, bench/RESULTS.md session 11): GPTMini small's B=8 H=4 T=128
  // d=32 causal 18.0 -> 11.0; B=1 H=2 d=64 T=256 10.5 -> 6.8 (causal 6.85 -> 4.02), T=512
  // 35.7 -> 27.9 (causal 19.9 -> 14.8).
  if (d.info.is_cpu() && c.head_dim <= 64)
    c.block_m = 64, c.block_n = 64, c.wpt_m = 8, c.wpt_n = 8, c.bwd_wpt_m = 8, c.bwd_wpt_n = 4;
  // NVIDIA (H200, driver 580; bench/RESULTS.md): without the register prefetch fwd+bwd ran
  // 4-9% faster at every T (fewer live registers, more resident work-groups).
  const bool nvidia = d.info.nvidia;
  if (nvidia) c.prefetch = 0;
  // NVIDIA, same card, one run of bench_attention.py --configs (RESULTS.md): base-2 scores
  // with native_exp2 (one ex2.approx per exponential, as CUDA's flash kernels use), the
  // forward's row max/sum by warp shuffles (inline PTX shfl.sync: one barrier and the
  // reduction tile less per key block) and P/dS rows padded by 8 made the forward 9-11%
  // faster at every T (T=1024: 0.850 -> 0.766 ms) and fwd+bwd 2-4%.
  if (nvidia) c.softmax_exp = 2, c.row_reduce = 1, c.p_pad = 8;
  // Backward: fused (dQ by float atomics from the dK/dV kernel, 5 products instead of 7)
  // everywhere; torch.use_deterministic_algorithms(True) selects the split mode per call. On
  // PoCL too, with compare-and-swap atomics, fused ran fwd+bwd 1.5-2.3x faster at T=128-512
  // (bench_attention.py --configs BWD=split BWD=fused).
  c.bwd_fused = 1;
  // Float atomic add: NVIDIA's inline PTX (red.global.add), else cl_ext_float_atomics where
  // listed (float only), else a compare-and-swap loop.
  c.atomic = nvidia ? 1 : (t != at::kDouble && d.info.has_extension("cl_ext_float_atomics")) ? 2 : 0;
  // NVIDIA: the tensor-core kernels (3xTF32 mma.sync, the arithmetic of CUDA's float32
  // memory-efficient attention) for float32 up to head dimension 64. H200, one run of
  // bench_attention.py (B=8, H=8, d=64, fwd+bwd ms, FMA kernels -> these): T=512 0.874 -> 0.528,
  // T=2048 11.2 -> 7.54, T=2048 causal 5.86 -> 4.31 (bench/RESULTS.md). tf32 mma.sync needs
  // sm_80; where the compute capability is unknown they stay off (and a compiler that rejects
  // them anyway costs one warning, then the FMA kernels: see mma_kernel).
  if (nvidia && d.info.nv_sm >= 80 && t == at::kFloat && c.head_dim <= 64) c.mma = 1;
  // CPU devices: the products as GEMMs (gemm_direct_fwd's vector micro-kernel) instead of the
  // fused kernels, whose per-work-item tiles PoCL runs at a fraction of the GEMM's speed.
  // PoCL 3.1, 2-core AVX2 VM, GPTMini small8's attention (B=8 H=4 T=128 d=32 causal), fwd+bwd
  // ms, one run (bench/RESULTS.md, session 12): fused kernels 25.4, the seven products alone 9.1.
  if (d.info.is_cpu()) c.gemm = 1;
  const std::string dflt = c.describe();
  apply_overrides(d, t, c);
  if (t != at::kFloat || c.head_dim > 64) c.mma = 0;  // what the tensor-core kernels take (no warning)
  const std::string requested = c.describe();
  // Shuffles the device cannot run: NVIDIA's PTX elsewhere, the khr functions without the
  // extension. The local-memory row reduction takes their place (and the warning below says so).
  if ((c.row_reduce == 1 && !nvidia) || (c.row_reduce == 2 && !d.info.has_extension("cl_khr_subgroup_shuffle")))
    c.row_reduce = 0;
  const size_t acc = t == at::kDouble ? 8 : 4, limit = d.info.local_mem;
  auto halve = [](int& block, int& wpt) {
    if (wpt % 2 != 0 || (block / 2) % 4 != 0) return false;
    block /= 2, wpt /= 2;
    return true;
  };
  if (c.valid() && c.fwd_elems() * acc > limit) c.split_kv = 0;  // first give up the separate V tile
  while (c.valid() && c.local_elems() * acc > limit) {  // then shrink the kernel that does not fit
    bool shrunk = false;
    if (c.fwd_elems() * acc > limit)
      shrunk = halve(c.block_m, c.wpt_m) || halve(c.block_n, c.wpt_n);
    else
      shrunk = halve(c.bwd_m, c.bwd_wpt_m) || halve(c.bwd_n, c.bwd_wpt_n);
    if (c.bwd_m % c.dq_rows != 0) c.dq_rows = 4;  // DQROWS=8 needs 8 | the backward's query block
    if (!shrunk) break;
  }
  if (c.mma && (c.mma_elems() * 4 > limit || c.mma_threads() > d.info.max_work_group)) c.mma = 0;
  c.ok = c.valid() && c.local_elems() * acc <= limit &&
         std::max(c.fwd_threads(), c.bwd_threads()) <= d.info.max_work_group;
  if (requested != dflt && (!c.ok || c.describe() != requested))
    TORCH_WARN("torch_ocl: the attention tiling", requested, " does not fit ", d.info.name, " (", limit,
                    " bytes of local memory, ", d.info.max_work_group, " work-items) for ", t, "; ",
                    c.ok ? "using" + c.describe() : std::string("using the math path"));
  return c;
}

bool attn_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

std::string attn_options(const Device& d, at::ScalarType t, const AttnConfig& c) {
  std::string o;
  switch (t) {
    case at::kFloat: o = "-DDTYPE=float -DACC=float"; break;
    case at::kDouble: o = "-DDTYPE=double -DACC=double"; break;
    case at::kHalf: o = "-DDTYPE=half -DACC=float -DIS_HALF"; break;
    case at::kBFloat16: o = "-DDTYPE=ushort -DACC=float -DIS_BF16"; break;
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: scaled_dot_product_attention is not implemented for ", t);
  }
  if (!(d.info.type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR))) o += " -DNO_UNROLL";
  if (t == at::kDouble) o += " -DACC_IS_DOUBLE=1";
  return o + c.options();
}

// The build options of the fused backward's program: the common ones plus the atomic add.
// ATOMIC_ADD=0 (the compare-and-swap loop) is the kernel's default, so that choice shares
// the common program.
std::string fused_bwd_options(const Device& d, const AttnConfig& c, const std::string& common) {
  if (c.atomic == 0) return common;
  std::string o = common + " -DATOMIC_ADD=" + std::to_string(c.atomic);
  // atomic_float needs OpenCL C 2.0 or later (without it the kernel falls back to the loop).
  if (c.atomic == 2 && d.info.opencl_version.rfind("OpenCL 3", 0) == 0) o += " -cl-std=CL3.0";
  if (c.atomic == 2 && d.info.opencl_version.rfind("OpenCL 2", 0) == 0) o += " -cl-std=CL2.0";
  return o;
}

// attn_config + its build options, computed once per (device, dtype, head-dimension class):
// the hot path neither parses TORCH_OCL_ATTN_CONFIG nor builds option strings.
struct AttnPlan {
  AttnConfig c;
  std::string options;
  // The fused backward's kernel attention_bwd_dkdv_dq is built with fused_options, which add
  // the atomic-add choice to `options`: inline PTX or OpenCL C 2.0 atomics that a driver
  // rejects then cost that kernel only, not the forward (see fused_bwd_kernel).
  std::string fused_options;
  bool cas_ok = false;    // the compare-and-swap atomic exists (a double one needs 64-bit atomics)
  bool fused_ok = false;  // some atomic add exists for this dtype
  // The tensor-core program (c.mma != 0): options() with the shuffles it needs, the MMA keys
  // and the atomic add of the fused backward.
  std::string mma_options;
  mutable std::atomic<bool> mma_broken{false};  // it failed to build (warned once)
  uint64_t generation = 0;  // tuning::generation() it was derived under
  mutable std::atomic<bool> atomic_broken{false};  // fused_options failed to build (warned once)
};
std::shared_ptr<const AttnPlan> attn_plan(const Device& d, int64_t D, int64_t Dv, at::ScalarType t) {
  static std::mutex mu;
  static std::map<std::tuple<int, int, int>, std::shared_ptr<const AttnPlan>> cache;
  const int64_t need = std::max<int64_t>(D, Dv);
  const int cls = need <= 32 ? 32 : need <= 64 ? 64 : need <= 128 ? 128 : 256;
  const uint64_t gen = tuning::generation();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[std::make_tuple(d.index, cls, int(t))];
  if (!slot || slot->generation != gen) {
    auto p = std::make_shared<AttnPlan>();
    p->c = attn_config(d, D, Dv, t);
    if (p->c.ok) p->options = attn_options(d, t, p->c);
    p->fused_options = fused_bwd_options(d, p->c, p->options);
    p->cas_ok = t != at::kDouble || d.info.has_extension("cl_khr_int64_base_atomics");
    p->fused_ok = p->cas_ok || p->c.atomic == 1 || p->c.atomic == 3;
    if (p->c.ok && p->c.mma) {
      AttnConfig m = p->c;
      m.row_reduce = m.mma == 1 ? 1 : 3;
      m.atomic = m.mma == 1 ? 1 : m.atomic == 2 ? 2 : 0;
      p->mma_options = fused_bwd_options(d, m, attn_options(d, t, m) + m.mma_options());
    }
    p->generation = gen;
    slot = std::move(p);
  }
  return slot;  // callers keep it alive while a retune replaces the slot
}

// _fused_sdp_choice(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> int
// The fused kernel when it can take the problem; math otherwise (which also produces the
// CPU's errors for malformed inputs), and always when sdpa_kernel() excludes OVERRIDEABLE.
int64_t fused_sdp_choice_ocl(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                             std::optional<double> scale, bool enable_gqa) {
  constexpr int64_t kMath = static_cast<int64_t>(at::SDPBackend::math);
  constexpr int64_t kFused = static_cast<int64_t>(at::SDPBackend::overrideable);
  if (!at::globalContext().userEnabledOverrideableSDP()) return kMath;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return kMath;
  if (q.is_nested() || k.is_nested() || v.is_nested()) return kMath;
  const at::ScalarType t = q.scalar_type();
  if (!attn_dtype(t) || k.scalar_type() != t || v.scalar_type() != t) return kMath;
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != v.size(1) || k.size(2) != v.size(2) ||
      k.size(3) != q.size(3))
    return kMath;
  const int64_t Hq = q.size(1), Hkv = k.size(1);
  if (Hkv == 0 || Hq % Hkv != 0 || (Hq != Hkv && !enable_gqa)) return kMath;
  if (mask) {
    const at::Tensor& m = *mask;
    if (m.scalar_type() != at::kBool && m.scalar_type() != t) return kMath;
    if (!at::is_expandable_to(m.sizes(), {q.size(0), Hq, q.size(2), k.size(2)})) return kMath;
  }
  if (dropout_p < 0.0 || dropout_p >= 1.0) return kMath;
  if (std::max(q.size(3), v.size(3)) > kMaxHeadDim) return kMath;
  const Device& d = peek_device(q.device().index() < 0 ? current_device() : q.device().index());
  return attn_plan(d, q.size(3), v.size(3), t)->c.ok ? kFused : kMath;
}

struct Strides4 {
  int64_t b, h, r, d;
};
Strides4 strides4(const at::Tensor& x) { return {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}; }

// The arguments every attention kernel takes first (ATTN_ARGS in attention.cl), as a tuple
// so the three launches share one definition.
struct AttnArgs {
  int L, S, D, Dv, Hq, group;
  Buf q, k, v, mask;
  Strides4 qs, ks, vs, ms;
  int use_mask, causal;
  double scale;
  float dropout_p;
  uint64_t seed, offset;
};

AttnArgs make_args(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask4,
                   bool causal, double scale, double dropout_p, uint64_t seed, uint64_t offset) {
  AttnArgs a;
  a.L = int(q.size(2)), a.S = int(k.size(2)), a.D = int(q.size(3)), a.Dv = int(v.size(3));
  a.Hq = int(q.size(1)), a.group = int(q.size(1) / std::max<int64_t>(k.size(1), 1));
  a.q = buf(q), a.k = buf(k), a.v = buf(v);
  a.qs = strides4(q), a.ks = strides4(k), a.vs = strides4(v);
  a.use_mask = mask4.defined() ? 1 : 0;
  a.mask = mask4.defined() ? buf(mask4) : Buf{nullptr, 0};
  a.ms = mask4.defined() ? strides4(mask4) : Strides4{0, 0, 0, 0};
  a.causal = causal ? 1 : 0;
  a.scale = scale;
  a.dropout_p = float(dropout_p);
  a.seed = seed, a.offset = offset;
  return a;
}

template <typename ScaleT, typename... Rest>
void launch_attn(Device& d, Kernel& kern, Range g, Range l, const AttnArgs& a, const Rest&... rest) {
  launch(d, kern, g, l, a.L, a.S, a.D, a.Dv, a.Hq, a.group, a.q, a.qs.b, a.qs.h, a.qs.r, a.qs.d, a.k, a.ks.b,
         a.ks.h, a.ks.r, a.ks.d, a.v, a.vs.b, a.vs.h, a.vs.r, a.vs.d, a.mask, a.ms.b, a.ms.h, a.ms.r, a.ms.d,
         a.use_mask, a.causal, static_cast<ScaleT>(a.scale), a.dropout_p, static_cast<cl_ulong>(a.seed),
         static_cast<cl_ulong>(a.offset), rest...);
}

template <typename... Rest>
void launch_attn_any(Device& d, Kernel& kern, Range g, Range l, at::ScalarType t, const AttnArgs& a,
                     const Rest&... rest) {
  if (t == at::kDouble)
    launch_attn<double>(d, kern, g, l, a, rest...);
  else
    launch_attn<float>(d, kern, g, l, a, rest...);
}

// The additive float mask as a [B, Hq, L, S] view (zero strides where it broadcasts).
// SDPA converts boolean masks to float before the overrideable op; a direct call with a
// boolean mask is rejected rather than silently misread.
at::Tensor mask_view(const std::optional<at::Tensor>& bias, const at::Tensor& q, int64_t S) {
  if (!bias || !bias->defined()) return at::Tensor();
  TORCH_CHECK(bias->scalar_type() == q.scalar_type(),
              "_scaled_dot_product_fused_attention_overrideable: expected attn_bias of dtype ", q.scalar_type(),
              " (boolean masks are converted to float by scaled_dot_product_attention), got ", bias->scalar_type());
  return bias->expand({q.size(0), q.size(1), q.size(2), S});
}

void check_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
              "scaled_dot_product_attention on ocl: expected 4-D query, key and value, got ", q.dim(), "-D, ",
              k.dim(), "-D and ", v.dim(), "-D");
  TORCH_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
              "Expected query, key, and value to have the same dtype");
  TORCH_CHECK(attn_dtype(q.scalar_type()), "scaled_dot_product_attention on ocl: unsupported dtype ",
              q.scalar_type());
  TORCH_CHECK(k.size(1) > 0 && q.size(1) % k.size(1) == 0,
              "number of query heads must be a multiple of the number of key/value heads");
  TORCH_CHECK(std::max(q.size(3), v.size(3)) <= kMaxHeadDim, "scaled_dot_product_attention on ocl: head dimension ",
              std::max(q.size(3), v.size(3)), " is larger than ", kMaxHeadDim);
}

// The fused backward's kernel, or nullptr where only the split mode can run. A driver that
// cannot build the configured atomic add (inline PTX outside NVIDIA's compiler, a missing
// OpenCL C 2.0 feature) gets one warning and the compare-and-swap loop from then on (until a
// tuning change derives a new plan).
Kernel* fused_bwd_kernel(Device& d, const AttnPlan& p) {
  if (p.fused_options != p.options) {
    if (!p.atomic_broken.load(std::memory_order_acquire)) {
      try {
        return &get_kernel(d, "attention", p.fused_options, "attention_bwd_dkdv_dq");
      } catch (const std::exception& e) {
        if (!p.atomic_broken.exchange(true))
          TORCH_WARN("torch_ocl: the attention backward's atomic add ATOMIC=", p.c.atomic, " does not build on ",
                     d.info.name, "; using ", p.cas_ok ? "ATOMIC=cas" : "the split backward", " instead. ",
                     e.what());
      }
    }
    if (!p.cas_ok) return nullptr;
  }
  return &get_kernel(d, "attention", p.options, "attention_bwd_dkdv_dq");
}

// A kernel of the tensor-core program, or nullptr where the plan has none or it does not
// build here (one warning; the FMA kernels from then on, until a tuning change).
Kernel* mma_kernel(Device& d, const AttnPlan& p, const char* name) {
  if (!p.c.mma || p.mma_broken.load(std::memory_order_acquire)) return nullptr;
  try {
    return &get_kernel(d, "attention", p.mma_options, name);
  } catch (const std::exception& e) {
    if (!p.mma_broken.exchange(true))
      TORCH_WARN("torch_ocl: the tensor-core attention kernels (MMA=", p.c.mma, ") do not build on ", d.info.name,
                 "; using the FMA kernels instead. ", e.what());
  }
  return nullptr;
}

std::shared_ptr<const AttnPlan> checked_plan(const Device& d, const at::Tensor& q, const at::Tensor& v) {
  std::shared_ptr<const AttnPlan> p = attn_plan(d, q.size(3), v.size(3), q.scalar_type());
  TORCH_CHECK(p->c.ok, "scaled_dot_product_attention on ocl: no attention tiling for head dimension ",
              std::max(q.size(3), v.size(3)), " and ", q.scalar_type(), " fits this device's ", d.info.local_mem,
              " bytes of local memory");
  return p;
}

// ---- GEMM=on: the products as batched GEMMs over the score matrix -----------------------------
// Query heads sharing a key/value head (GQA) are stacked, so every product is a bmm over the
// B * Hkv (batch, kv head) pairs: Q as [B*Hkv, group*L, D], K [B*Hkv, S, D], V [B*Hkv, S, Dv]
// (reshape: views where the layout allows, else one copy). The pairs go in chunks whose scores
// take at most kGemmChunkElems elements (the backward holds two such buffers).
constexpr int64_t kGemmChunkElems = int64_t(1) << 22;
// A pair with more scores than this stays with the fused kernels (O(L) memory); up to it a
// chunk of one pair may hold 4x the budget above.
constexpr int64_t kGemmMaxPairElems = int64_t(1) << 24;

bool gemm_path(const AttnPlan& p, const at::Tensor& q, const at::Tensor& k, double dropout_p) {
  const at::ScalarType t = q.scalar_type();
  if (!p.c.gemm || dropout_p != 0.0 || (t != at::kFloat && t != at::kDouble)) return false;
  const int64_t group = q.size(1) / k.size(1);
  return group * q.size(2) * k.size(2) <= kGemmMaxPairElems;
}

std::string gemm_rows_options(at::ScalarType t) {
  return t == at::kDouble ? "-DDTYPE=double" : "-DDTYPE=float";
}

struct MaskArgs {
  Buf mask{nullptr, 0};
  Strides4 s{0, 0, 0, 0};
  int use = 0;
};
MaskArgs mask_args(const at::Tensor& mask4) {
  MaskArgs m;
  if (mask4.defined()) m.mask = buf(mask4), m.s = strides4(mask4), m.use = 1;
  return m;
}

// q/k/v as the (batch, kv head) pairs the products batch over, and the pairs per chunk.
struct GemmPairs {
  int64_t B, Hq, Hkv, L, S, D, Dv, pairs, gL, chunk;
  at::Tensor q3, k3, v3;
  GemmPairs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)
      : B(q.size(0)), Hq(q.size(1)), Hkv(k.size(1)), L(q.size(2)), S(k.size(2)), D(q.size(3)), Dv(v.size(3)),
        pairs(B * Hkv), gL(Hq / Hkv * L),
        chunk(std::max<int64_t>(1, kGemmChunkElems / std::max<int64_t>(gL * S, 1))),
        q3(q.reshape({pairs, gL, D})), k3(k.reshape({pairs, S, D})), v3(v.reshape({pairs, S, Dv})) {}
  // A score buffer for the largest chunk.
  at::Tensor scores() const { return at::empty({std::min(chunk, pairs), gL, S}, q3.options()); }
};

// One of attention_gemm.cl's row kernels over the rows of pairs [n0, n0 + nc): their common
// arguments (the scale in the kernel's DTYPE), then `rest`.
template <typename... Rest>
void launch_rows(Device& d, Kernel& kern, const GemmPairs& g, int64_t n0, int64_t nc, bool causal, double scale,
                 const Rest&... rest) {
  const int rows = int(nc * g.gL);
  if (rows == 0) return;
  auto go = [&](auto sc) {
    launch(d, kern, Range(size_t(rows)), Range(), rows, cl_long(n0 * g.gL), int(g.L), int(g.S), int(g.Hq),
           int(causal), sc, rest...);
  };
  if (g.q3.scalar_type() == at::kDouble) go(scale);
  else go(float(scale));
}

// out = softmax(scale * Q K^T + mask) V, returned in [B, Hq, L, Dv] memory (the products'
// [B*Hkv, group*L, Dv] output as it comes), and lse.
at::Tensor gemm_forward(Device& d, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                        const at::Tensor& mask4, bool causal, double scale, const at::Tensor& lse) {
  const GemmPairs g(q, k, v);
  at::Tensor out3 = at::empty({g.pairs, g.gL, g.Dv}, q.options());
  at::Tensor scores = g.scores();
  Kernel& kern = get_kernel(d, "attention_gemm", gemm_rows_options(q.scalar_type()), "attention_gemm_softmax");
  const MaskArgs m = mask_args(mask4);
  for (int64_t n0 = 0; n0 < g.pairs; n0 += g.chunk) {
    const int64_t nc = std::min(g.chunk, g.pairs - n0);
    at::Tensor sc = scores.narrow(0, 0, nc), oc = out3.narrow(0, n0, nc);
    at::bmm_out(sc, g.q3.narrow(0, n0, nc), g.k3.narrow(0, n0, nc).transpose(1, 2));
    launch_rows(d, kern, g, n0, nc, causal, scale, buf(sc), m.mask, m.s.b, m.s.h, m.s.r, m.s.d, m.use, buf(lse));
    at::bmm_out(oc, sc, g.v3.narrow(0, n0, nc));
  }
  return out3.view({g.B, g.Hq, g.L, g.Dv});
}

// dq, dk, dv as [B, H, T, D] and dbias (when defined): per chunk, P from the recomputed scores
// and lse, dP = dO V^T, dS by the row kernel, then dV = P^T dO, dQ = scale dS K, dK = scale dS^T Q.
std::tuple<at::Tensor, at::Tensor, at::Tensor> gemm_backward(Device& d, const at::Tensor& grad_out,
                                                             const at::Tensor& q, const at::Tensor& k,
                                                             const at::Tensor& v, const at::Tensor& mask4,
                                                             const at::Tensor& out, const at::Tensor& lse,
                                                             bool causal, double scale, const at::Tensor& dbias) {
  const GemmPairs g(q, k, v);
  at::Tensor dq3 = at::empty({g.pairs, g.gL, g.D}, q.options()), dk3 = at::empty({g.pairs, g.S, g.D}, q.options()),
             dv3 = at::empty({g.pairs, g.S, g.Dv}, q.options());
  const at::Tensor go3 = grad_out.reshape({g.pairs, g.gL, g.Dv});
  at::Tensor pbuf = g.scores(), dpbuf = g.scores();
  Kernel& kern = get_kernel(d, "attention_gemm", gemm_rows_options(q.scalar_type()), "attention_gemm_grad");
  const MaskArgs m = mask_args(mask4);
  const Strides4 gs = strides4(grad_out), os = strides4(out);
  const Buf db = dbias.defined() ? buf(dbias) : Buf{nullptr, 0};
  for (int64_t n0 = 0; n0 < g.pairs; n0 += g.chunk) {
    const int64_t nc = std::min(g.chunk, g.pairs - n0);
    at::Tensor pc = pbuf.narrow(0, 0, nc), dpc = dpbuf.narrow(0, 0, nc);
    const at::Tensor qc = g.q3.narrow(0, n0, nc), kc = g.k3.narrow(0, n0, nc), vc = g.v3.narrow(0, n0, nc),
                     goc = go3.narrow(0, n0, nc);
    at::bmm_out(pc, qc, kc.transpose(1, 2));
    at::bmm_out(dpc, goc, vc.transpose(1, 2));
    launch_rows(d, kern, g, n0, nc, causal, scale, buf(pc), buf(dpc), m.mask, m.s.b, m.s.h, m.s.r, m.s.d, m.use,
                buf(lse), int(g.Dv), buf(grad_out), gs.b, gs.h, gs.r, gs.d, buf(out), os.b, os.h, os.r, os.d, db,
                int(dbias.defined()));
    at::Tensor dvc = dv3.narrow(0, n0, nc), dqc = dq3.narrow(0, n0, nc), dkc = dk3.narrow(0, n0, nc);
    at::bmm_out(dvc, pc.transpose(1, 2), goc);
    at::bmm_out(dqc, dpc, kc);
    at::bmm_out(dkc, dpc.transpose(1, 2), qc);
  }
  return {dq3.view({g.B, g.Hq, g.L, g.D}), dk3.view({g.B, g.Hkv, g.S, g.D}), dv3.view({g.B, g.Hkv, g.S, g.Dv})};
}

}  // namespace

// _scaled_dot_product_fused_attention_overrideable(Tensor query, Tensor key, Tensor value, Tensor? attn_bias=None, float dropout_p=0., bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor philox_seed, Tensor philox_offset, Tensor debug_attn_mask)
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
sdpa_overrideable_ocl(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                      const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal,
                      bool return_debug_mask, std::optional<double> scale) {
  check_inputs(q, k, v);
  TORCH_CHECK(!return_debug_mask, "scaled_dot_product_attention on ocl: return_debug_mask is not supported");
  Device& d = ocl_device(q);
  const int64_t B = q.size(0), Hq = q.size(1), L = q.size(2), D = q.size(3), S = k.size(2), Dv = v.size(3);
  const at::ScalarType t = q.scalar_type();
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(D));
  // Output in [B, L, H, Dv] memory viewed as [B, H, L, Dv]: the usual out.transpose(1, 2)
  // .reshape(B, L, H*Dv) that follows is then free.
  at::Tensor out = at::empty({B, L, Hq, Dv}, q.options()).transpose(1, 2);
  at::Tensor lse = at::empty({B, Hq, L}, q.options().dtype(float_or_double(t)));
  at::Tensor seed_t = at::empty({}, at::dtype(at::kLong)), offset_t = at::empty({}, at::dtype(at::kLong));
  PhiloxState ph{0, 0};
  if (dropout_p > 0.0 && B * Hq * L * S > 0)
    ph = philox_reserve(std::nullopt, q.device().index(), uint64_t((B * Hq * L * S + 3) / 4));
  seed_t.fill_(int64_t(ph.seed));
  offset_t.fill_(int64_t(ph.offset));
  if (out.numel() > 0) {
    const std::shared_ptr<const AttnPlan> plan = checked_plan(d, q, v);
    const AttnPlan& p = *plan;
    if (gemm_path(p, q, k, dropout_p))
      return {gemm_forward(d, q, k, v, mask_view(attn_bias, q, S), is_causal, sc, lse), lse, at::Tensor(),
              at::Tensor(), c10::SymInt(L), c10::SymInt(S), seed_t, offset_t, at::Tensor()};
    AttnArgs a = make_args(q, k, v, mask_view(attn_bias, q, S), is_causal, sc, dropout_p, ph.seed, ph.offset);
    Kernel* mma = dropout_p == 0.0 ? mma_kernel(d, p, "attention_mma_fwd") : nullptr;
    Kernel& kern = mma ? *mma : get_kernel(d, "attention", p.options, "attention_fwd");
    const size_t wg = mma ? p.c.mma_threads() : p.c.fwd_threads();
    const size_t rows = mma ? p.c.mma_rows() : p.c.block_m, blocks = (size_t(L) + rows - 1) / rows;
    launch_attn_any(d, kern, Range(blocks * wg, size_t(Hq), size_t(B)), Range(wg, 1, 1), t, a, buf(out),
                    out.stride(0), out.stride(1), out.stride(2), buf(lse));
  }
  return {out, lse, at::Tensor(), at::Tensor(), c10::SymInt(L), c10::SymInt(S), seed_t, offset_t, at::Tensor()};
}

// _scaled_dot_product_fused_attention_overrideable_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor attn_bias, bool[4] grad_input_mask, Tensor out, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, Tensor philox_seed, Tensor philox_offset, *, float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value, Tensor grad_attn_bias)
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> sdpa_overrideable_backward_ocl(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& lse, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k, int64_t max_q, int64_t max_k,
    double dropout_p, bool is_causal, const at::Tensor& philox_seed, const at::Tensor& philox_offset,
    std::optional<double> scale) {
  // No gradient reached the output (a custom Function dropped it): no gradients, which
  // autograd takes as zeros (as CUDA's attention backward ops do).
  if (!grad_out.defined()) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  check_inputs(q, k, v);
  Device& d = ocl_device(q);
  const int64_t B = q.size(0), Hq = q.size(1), L = q.size(2), D = q.size(3), S = k.size(2), Hkv = k.size(1),
                Dv = v.size(3);
  const at::ScalarType t = q.scalar_type();
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(D));
  // Gradients in their input's memory order: q/k/v that are head-inner views of a
  // [B, T, H, D] projection (the usual transpose(1, 2)) get [B, T, H, D] gradients, so the
  // transpose/view backward that follows is free instead of a copy per operand.
  auto grad_like = [](const at::Tensor& x, int64_t Bn, int64_t H, int64_t T, int64_t Dn) {
    if (x.stride(1) < x.stride(2)) return at::empty({Bn, T, H, Dn}, x.options()).transpose(1, 2);
    return at::empty({Bn, H, T, Dn}, x.options());
  };
  const bool want_dbias = grad_input_mask[3] && attn_bias.defined();
  at::Tensor dbias = want_dbias ? at::zeros({B, Hq, L, S}, q.options()) : at::Tensor();
  uint64_t seed = 0, offset = 0;
  if (dropout_p > 0.0) {
    seed = uint64_t(philox_seed.item<int64_t>());  // CPU tensors: no device synchronization
    offset = uint64_t(philox_offset.item<int64_t>());
  }
  if (B * Hkv == 0 || (L == 0 && S == 0))
    return {grad_like(q, B, Hq, L, D), grad_like(k, B, Hkv, S, D), grad_like(v, B, Hkv, S, Dv), dbias};

  const std::shared_ptr<const AttnPlan> plan = checked_plan(d, q, v);
  const AttnPlan& p = *plan;
  std::optional<at::Tensor> bias_opt;
  if (attn_bias.defined()) bias_opt = attn_bias;
  if (gemm_path(p, q, k, dropout_p)) {
    auto [dq, dk, dv] = gemm_backward(d, grad_out, q, k, v, mask_view(bias_opt, q, S), out, lse, is_causal, sc, dbias);
    return {dq, dk, dv, dbias};
  }
  at::Tensor dq = grad_like(q, B, Hq, L, D);
  at::Tensor dk = grad_like(k, B, Hkv, S, D);
  at::Tensor dv = grad_like(v, B, Hkv, S, Dv);
  const std::string& opts = p.options;
  const size_t wg = p.c.bwd_threads();
  AttnArgs a = make_args(q, k, v, mask_view(bias_opt, q, S), is_causal, sc, dropout_p, seed, offset);
  const Strides4 gs = strides4(grad_out), os = strides4(out);
  at::Tensor delta = at::empty({B, Hq, L}, q.options().dtype(float_or_double(t)));
  // Fused mode unless determinism is asked for (the atomic adds make dQ's summation order
  // vary from run to run) or the device lacks the atomics (double without 64-bit ones).
  const bool nondeterministic_ok = !at::globalContext().deterministicAlgorithms() && S > 0;
  // The tensor-core backward is a fused one (its dQ by atomic adds) without dropout.
  Kernel* mma_kern = p.c.bwd_fused && nondeterministic_ok && dropout_p == 0.0 ? mma_kernel(d, p, "attention_mma_bwd")
                                                                               : nullptr;
  Kernel* fused_kern = mma_kern ? mma_kern
                       : p.c.bwd_fused && p.fused_ok && nondeterministic_ok ? fused_bwd_kernel(d, p)
                                                                            : nullptr;
  const bool fused = fused_kern != nullptr;
  // Its dQ accumulates in ACC: in dq itself for float/double (we allocated it: unit
  // head-dimension stride), else in a float workspace of dq's layout converted at the end.
  at::Tensor dqw;
  if (fused) dqw = t == float_or_double(t) ? dq : at::empty_like(dq, dq.options().dtype(float_or_double(t)));
  const Buf dqw_buf = fused && dqw.numel() > 0 ? buf(dqw) : Buf{nullptr, 0};
  const Strides4 ws = fused ? strides4(dqw) : Strides4{0, 0, 0, 0};
  if (L > 0) {
    Kernel& prep = get_kernel(d, "attention", mma_kern ? p.mma_options : opts, "attention_bwd_prep");
    const size_t prep_groups = (size_t(L) + kPrepRows - 1) / kPrepRows;
    launch(d, prep, Range(prep_groups * kPrepGroup, size_t(Hq), size_t(B)), Range(kPrepGroup, 1, 1), int(L), int(Dv),
           int(Hq), buf(grad_out), gs.b, gs.h, gs.r, gs.d, buf(out), os.b, os.h, os.r, os.d, buf(delta), int(fused),
           int(D), dqw_buf, ws.b, ws.h, ws.r);
    if (!fused) {
      Kernel& kdq = get_kernel(d, "attention", opts, "attention_bwd_dq");
      launch_attn_any(d, kdq, Range(size_t((L + p.c.bwd_m - 1) / p.c.bwd_m) * wg, size_t(Hq), size_t(B)), Range(wg, 1, 1), t,
                      a, buf(grad_out), gs.b, gs.h, gs.r, gs.d, buf(lse), buf(delta), buf(dq), dq.stride(0),
                      dq.stride(1), dq.stride(2), want_dbias ? buf(dbias) : Buf{nullptr, 0}, int(want_dbias));
    }
  }
  if (S > 0) {
    const size_t keys = mma_kern ? p.c.mma_rows() : p.c.bwd_n, kwg = mma_kern ? p.c.mma_threads() : wg;
    const Range g((size_t(S) + keys - 1) / keys * kwg, size_t(Hkv), size_t(B)), l(kwg, 1, 1);
    if (fused) {
      launch_attn_any(d, *fused_kern, g, l, t, a, buf(grad_out), gs.b, gs.h, gs.r, gs.d, buf(lse), buf(delta), buf(dk),
                      dk.stride(0), dk.stride(1), dk.stride(2), buf(dv), dv.stride(0), dv.stride(1), dv.stride(2),
                      dqw_buf, ws.b, ws.h, ws.r, want_dbias ? buf(dbias) : Buf{nullptr, 0}, int(want_dbias));
    } else {
      Kernel& kern = get_kernel(d, "attention", opts, "attention_bwd_dkdv");
      launch_attn_any(d, kern, g, l, t, a, buf(grad_out), gs.b, gs.h, gs.r, gs.d, buf(lse), buf(delta), buf(dk),
                      dk.stride(0), dk.stride(1), dk.stride(2), buf(dv), dv.stride(0), dv.stride(1), dv.stride(2));
    }
  }
  if (fused && !dqw.is_same(dq)) dq.copy_(dqw);
  return {dq, dk, dv, dbias};
}

// _fused_sdp_choice: the Python-visible torch._fused_sdp_choice agrees with the stub.
int64_t fused_sdp_choice_op_ocl(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                                std::optional<double> scale, bool enable_gqa) {
  return fused_sdp_choice_ocl(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_fused_sdp_choice", fused_sdp_choice_op_ocl);
  OCL_IMPL(m, "_scaled_dot_product_fused_attention_overrideable", sdpa_overrideable_ocl);
  OCL_IMPL(m, "_scaled_dot_product_fused_attention_overrideable_backward", sdpa_overrideable_backward_ocl);
}

}  // namespace torch_ocl

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_ocl::fused_sdp_choice_ocl);
}  // namespace at::native
