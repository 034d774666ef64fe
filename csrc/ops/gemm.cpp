// Matrix products: mm, addmm, bmm, baddbmm, addmv (and so mv, matmul, linear, einsum), dot,
// vdot, addr. Every product is reduced to one batched problem out = alpha*A@B + beta*C over
// (batch, row, col)-strided 3-D views and run by our tiled kernel (kernels/gemm.cl, any
// strides, fused epilogue: addmm's bias is C with row stride 0) or by CLBlast (row/column-
// major operands with a leading dimension); TORCH_OCL_GEMM=auto|clblast|own picks. Our
// kernels' configuration (which kernel, tile sizes) comes from TORCH_OCL_GEMM_CONFIG, the
// device's tuning file (runtime/Tuning.h, torch_ocl/tune.py) or default_config, in that order.
#include "../aten/Complex.h"
#include "../aten/Routing.h"
#include "gemm.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <clblast_c.h>
#include <torch/library.h>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

namespace torch_ocl {

// ---- configurations: defaults by device, tuning file, TORCH_OCL_GEMM_CONFIG ----------------

// Which kernel of kernels/gemm.cl runs a matrix-matrix product.
enum class GemmKernel {
  Generic,  // gemm_fwd: local-memory tiles, any strides and dtypes
  Tiled,    // gemm_tiled_fwd where the layout allows (float/double, unit-stride aligned), else gemm_fwd
  Direct,   // gemm_direct_fwd: no local memory or barriers (CPU devices)
};

// A configuration = the kernel plus its build options (kernels/gemm.cl's tunables).
struct GemmConfig {
  GemmKernel kernel = GemmKernel::Generic;
  int tile_m = 64, tile_n = 64, tile_k = 16, wpt_m = 4, wpt_n = 4, vec_width = 4;
  int double_buffer = 1;  // gemm_tiled_fwd only
  // gemm_tiled_fwd only: a k-contiguous B (the weight of an nn.Linear forward, x @ W^T) is
  // first transposed into an n-contiguous workspace, so the product runs as NN: the tile
  // loads of a k-contiguous operand are transposed into local memory with scalar stores.
  // 0 never, 1 always, 2 for products of at least kPackMinVolume multiply-adds (the extra
  // launch must be repaid by the faster kernel).
  int pack_b = 0;
  // gemm_tiled_fwd in float32 on NVIDIA sm_80 or later only: >= 2 fills a ring of this many
  // local tiles by cp.async instead of staging the loads in registers (DOUBLE_BUFFER unused).
  int async_stages = 0;
  // gemm_tiled_fwd without ASYNC_STAGES (unused with it): products of at most one work-group
  // per compute unit run gemm_tiled_sliced_fwd instead, SLICE_K groups of work-items per
  // work-group splitting the K steps (see use_slices). 1: never.
  int slice_k = 1;
  // float32 products on tensor cores (kernels/gemm_mma.cl) where PyTorch's float32 matmul
  // precision allows TF32 (tf32_allowed): 0 never, 1 NVIDIA PTX mma.sync (sm_80 or later),
  // 2 its emulation in float FMAs (mma.clh; a stand-in that lets tests run the kernels on
  // devices without tensor cores).
  int mma = 0;
  // 1: one TF32 product (what cuBLAS runs under "high"); 3: the 3xTF32 split (near float32).
  int mma_passes = 1;
  // gemm_mma's work-group tile and warps (TILE_M, TILE_N, WARPS_M, WARPS_N in gemm_mma.cl);
  // 0 keeps the shape class's (mma_tiles).
  int mma_tile_m = 0, mma_tile_n = 0, mma_warps_m = 0, mma_warps_n = 0;
};

// Which class of problem a configuration is chosen for: big tiles only pay off when there
// are enough of them to fill the device.
enum class ShapeClass { Small, Large };

// gemm_mma's work-group tiles by shape class (its TILE_M, TILE_N, WARPS_M, WARPS_N): four
// warps of 64x64 outputs where there are enough tiles to fill the device, four of 32x32
// otherwise. H200, TF32 TFLOP/s of GPTMini large's fc1 forward / dX / dW / attention
// projection / 4096^3, two rounds (bench/RESULTS.md, session 18): 128x128 tiles of 2x2 warps
// 97 / 109 / 114 / 85 / 119, of 2x4 warps 93 / 75 / 83 / 82-85 / 85, 64x128 of 2x2 79 / 74 /
// 76-79 / 66 / 100, 128x64 of 2x2 78 / 71 / 78 / 63 / 94, 64x64 of 2x2 65 / 73 / 80 / 58 / 80.
struct MmaTiles {
  int tile_m, tile_n, warps_m, warps_n;
  int threads() const { return 32 * warps_m * warps_n; }
};
constexpr MmaTiles kMmaLarge{128, 128, 2, 2}, kMmaSmall{64, 64, 2, 2};
MmaTiles mma_tiles(const GemmConfig& c, ShapeClass shape) {
  MmaTiles t = shape == ShapeClass::Large ? kMmaLarge : kMmaSmall;
  if (c.mma_tile_m) t.tile_m = c.mma_tile_m;
  if (c.mma_tile_n) t.tile_n = c.mma_tile_n;
  if (c.mma_warps_m) t.warps_m = c.mma_warps_m;
  if (c.mma_warps_n) t.warps_n = c.mma_warps_n;
  return t;
}

namespace {

const char* kernel_name(GemmKernel k) {
  return k == GemmKernel::Tiled ? "tiled" : k == GemmKernel::Direct ? "direct" : "generic";
}

// "KERNEL=tiled TILE_M=128 TILE_N=128 TILE_K=16 WPT_M=8 WPT_N=8 VEC_WIDTH=4 DOUBLE_BUFFER=1":
// the form tuning files and TORCH_OCL_GEMM_CONFIG use (the latter may also use commas).
std::string config_string(const GemmConfig& c) {
  return std::string("KERNEL=") + kernel_name(c.kernel) + " TILE_M=" + std::to_string(c.tile_m) +
         " TILE_N=" + std::to_string(c.tile_n) + " TILE_K=" + std::to_string(c.tile_k) +
         " WPT_M=" + std::to_string(c.wpt_m) + " WPT_N=" + std::to_string(c.wpt_n) +
         " VEC_WIDTH=" + std::to_string(c.vec_width) + " DOUBLE_BUFFER=" + std::to_string(c.double_buffer) +
         " PACK_B=" + std::to_string(c.pack_b) + " ASYNC_STAGES=" + std::to_string(c.async_stages) +
         " SLICE_K=" + std::to_string(c.slice_k) + " MMA=" + (c.mma == 1 ? "ptx" : c.mma == 2 ? "emu" : "off") +
         " MMA_PASSES=" + std::to_string(c.mma_passes) + " MMA_TILE_M=" + std::to_string(c.mma_tile_m) +
         " MMA_TILE_N=" + std::to_string(c.mma_tile_n) + " MMA_WARPS_M=" + std::to_string(c.mma_warps_m) +
         " MMA_WARPS_N=" + std::to_string(c.mma_warps_n);
}

size_t dtype_bytes(at::ScalarType t) { return c10::elementSize(t); }
size_t acc_bytes(at::ScalarType t) { return t == at::kDouble || t == at::kLong ? 8 : 4; }
// gemm_tiled_fwd exists for the dtypes whose storage and accumulator types agree.
bool has_tiled_kernel(at::ScalarType t) { return t == at::kFloat || t == at::kDouble; }
// Its cp.async path copies 4-byte elements and 16-byte vectors of four: float32 only (other
// dtypes keep register staging under the same configuration).
bool use_async(at::ScalarType t, const GemmConfig& c) { return c.async_stages != 0 && t == at::kFloat; }
// Whether c's program holds its operand packing kernels: gemm_pack_kn for gemm_tiled_fwd
// (PACK_B; PACK_KERNEL in gemm.cl), gemm_pack_panels_m/_n for gemm_direct_fwd (PANEL_KERNELS).
// Not for float16, whose `half` storage has no loads or stores of its own without cl_khr_fp16.
bool has_pack_kernel(at::ScalarType t, const GemmConfig& c) {
  return c.kernel == GemmKernel::Tiled ? has_tiled_kernel(t) : c.kernel == GemmKernel::Direct && t != at::kHalf;
}

// Why `c` cannot run dtype t on d ("" when it can): every kernel the program holds must
// compile (the #error checks of gemm.cl) and fit the device's work-group and local memory.
std::string config_error(const Device& d, at::ScalarType t, const GemmConfig& c, ShapeClass shape) {
  auto pos = [](int v) { return v > 0 && v <= 1024; };
  if (!pos(c.tile_m) || !pos(c.tile_n) || !pos(c.tile_k) || !pos(c.wpt_m) || !pos(c.wpt_n))
    return "tile sizes must be in 1..1024";
  if (c.vec_width != 1 && c.vec_width != 2 && c.vec_width != 4 && c.vec_width != 8) return "VEC_WIDTH must be 1, 2, 4 or 8";
  if (c.double_buffer != 0 && c.double_buffer != 1) return "DOUBLE_BUFFER must be 0 or 1";
  if (c.pack_b < 0 || c.pack_b > 2) return "PACK_B must be 0, 1 or 2";
  if (c.slice_k < 1 || c.slice_k > 8) return "SLICE_K must be in 1..8";
  if (c.async_stages != 0) {
    if (c.async_stages < 2 || c.async_stages > 8) return "ASYNC_STAGES must be 0 or 2..8";
    if (!d.info.nvidia || d.info.nv_sm < 80) return "ASYNC_STAGES needs an NVIDIA GPU of sm_80 or later (cp.async)";
    if (c.tile_k % 8) return "ASYNC_STAGES needs TILE_K a multiple of 8";
  }
  if (c.tile_m % c.wpt_m || c.tile_n % c.wpt_n) return "TILE_M/TILE_N must be multiples of WPT_M/WPT_N";
  if (c.mma_passes != 1 && c.mma_passes != 3) return "MMA_PASSES must be 1 or 3";
  if (c.mma == 1 && (!d.info.nvidia || d.info.nv_sm < 80))
    return "MMA=ptx needs an NVIDIA GPU of sm_80 or later (mma.sync with tf32 operands)";
  if (c.mma) {  // gemm_mma.cl's #error conditions, and the device's limits
    const MmaTiles mt = mma_tiles(c, shape);
    const int threads = mt.threads(), tk = 16;
    if (mt.tile_m < 1 || mt.tile_n < 1 || mt.warps_m < 1 || mt.warps_n < 1 || threads > 1024)
      return "MMA tiles and warps must be positive, with at most 32 warps";
    if (mt.tile_m % (16 * mt.warps_m) || mt.tile_n % (8 * mt.warps_n))
      return "MMA_TILE_M must be a multiple of 16*MMA_WARPS_M, MMA_TILE_N of 8*MMA_WARPS_N";
    if ((mt.tile_m * tk) % (4 * threads) || (mt.tile_n * tk) % (4 * threads) || threads % (tk / 4) ||
        threads % (mt.tile_m / 4) || threads % (mt.tile_n / 4))
      return "MMA tiles must be whole 4-vectors per work-item, and the work-group a multiple of TILE/4";
    if (size_t(threads) > d.info.max_work_group)
      return "MMA work-group of " + std::to_string(threads) + " exceeds the device's " +
             std::to_string(d.info.max_work_group);
    const auto tile = [&](int rows) { return std::max(rows * (tk + 4), tk * (rows + 8)); };  // floats, either layout
    const size_t bytes = size_t(2) * (tile(mt.tile_m) + tile(mt.tile_n)) * 4;
    if (bytes > d.info.local_mem)
      return "MMA tiles need " + std::to_string(bytes) + " bytes of local memory, more than the device's " +
             std::to_string(d.info.local_mem);
  }
  const int64_t threads = int64_t(c.tile_m / c.wpt_m) * (c.tile_n / c.wpt_n);
  if (threads > int64_t(d.info.max_work_group))
    return "work-group of " + std::to_string(threads) + " exceeds the device's " + std::to_string(d.info.max_work_group);
  const int v = c.vec_width;
  if (c.tile_k % v || c.tile_m % v || c.tile_n % v) return "tile sizes must be multiples of VEC_WIDTH";
  if ((c.tile_m * c.tile_k) % (threads * v) || (c.tile_n * c.tile_k) % (threads * v))
    return "each work-item must load whole vectors of each tile (TILE*TILE_K % (work-items*VEC_WIDTH))";
  size_t local = size_t(c.tile_k) * (c.tile_m + c.tile_n + 2) * acc_bytes(t);  // gemm_fwd
  if (c.kernel == GemmKernel::Tiled && has_tiled_kernel(t)) {
    if (c.wpt_m % 4 || c.wpt_n % 4 || c.tile_k % 4) return "the tiled kernel needs WPT_M, WPT_N, TILE_K multiples of 4";
    if ((c.tile_m * c.tile_k) % (threads * 4) || (c.tile_n * c.tile_k) % (threads * 4))
      return "the tiled kernel needs whole 4-vectors of each tile per work-item";
    if (threads % (c.tile_k / 4) || threads % (c.tile_m / 4) || threads % (c.tile_n / 4))
      return "the tiled kernel needs a work-group size that is a multiple of TILE_K/4, TILE_M/4 and TILE_N/4";
    const size_t buffers = use_async(t, c) ? c.async_stages : 1 + c.double_buffer;
    local = std::max(local, buffers * c.tile_k * (c.tile_m + c.tile_n + 8) * dtype_bytes(t));
    if (c.slice_k > 1 && !use_async(t, c)) {  // gemm_tiled_sliced_fwd: SLICE_K times the work-items and tiles
      if (threads * c.slice_k > int64_t(d.info.max_work_group))
        return "SLICE_K=" + std::to_string(c.slice_k) + " makes a work-group of " + std::to_string(threads * c.slice_k) +
               ", more than the device's " + std::to_string(d.info.max_work_group);
      const size_t tiles = c.slice_k * buffers * c.tile_k * (c.tile_m + c.tile_n + 8);
      if (size_t(c.slice_k - 1) * c.tile_m * c.tile_n > tiles)
        return "SLICE_K: the slices' accumulators must fit in their local tiles (raise TILE_K or lower SLICE_K)";
      local = std::max(local, tiles * dtype_bytes(t));
    }
  }
  if (local > d.info.local_mem)
    return std::to_string(local) + " bytes of local memory exceed the device's " + std::to_string(d.info.local_mem);
  return "";
}

// Applies "KEY=value" items (tuning::parse_items) to `c`; "" or an error message.
std::string apply_config(const std::string& text, GemmConfig& c) {
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  if (!tuning::parse_items(text, &items, &err)) return err;
  for (const auto& [key, val] : items) {
    if (key == "MMA") {
      if (val == "off") c.mma = 0;
      else if (val == "ptx") c.mma = 1;
      else if (val == "emu") c.mma = 2;
      else return "MMA must be off, ptx or emu, got '" + val + "'";
      continue;
    }
    if (key == "KERNEL") {
      if (val == "generic") c.kernel = GemmKernel::Generic;
      else if (val == "tiled") c.kernel = GemmKernel::Tiled;
      else if (val == "direct") c.kernel = GemmKernel::Direct;
      else return "KERNEL must be generic, tiled or direct, got '" + val + "'";
      continue;
    }
    int* field = key == "TILE_M" ? &c.tile_m : key == "TILE_N" ? &c.tile_n : key == "TILE_K" ? &c.tile_k
               : key == "WPT_M" ? &c.wpt_m : key == "WPT_N" ? &c.wpt_n : key == "VEC_WIDTH" ? &c.vec_width
               : key == "DOUBLE_BUFFER" ? &c.double_buffer : key == "PACK_B" ? &c.pack_b
               : key == "ASYNC_STAGES" ? &c.async_stages : key == "SLICE_K" ? &c.slice_k
               : key == "MMA_PASSES" ? &c.mma_passes : key == "MMA_TILE_M" ? &c.mma_tile_m
               : key == "MMA_TILE_N" ? &c.mma_tile_n : key == "MMA_WARPS_M" ? &c.mma_warps_m
               : key == "MMA_WARPS_N" ? &c.mma_warps_n : nullptr;
    if (!field) return "unknown key '" + key + "'";
    if (!tuning::parse_int(key, val, field, &err)) return err;
  }
  return "";
}

// Built-in defaults by device type and vendor (a tuning file wins over these).
GemmConfig default_config(const Device& d, at::ScalarType t, ShapeClass shape) {
  const bool gpu = d.info.type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR);
  const auto vendor_has = [&](const char* s) { return d.info.vendor.find(s) != std::string::npos; };
  const bool nvidia = d.info.nvidia, amd = vendor_has("Advanced Micro Devices") || vendor_has("AMD");
  const bool intel = vendor_has("Intel");
  const bool wide = t == at::kDouble || t == at::kLong;
  const bool large = shape == ShapeClass::Large;
  GemmConfig c;  // gemm_fwd 64x64x16, 4x4 per work-item, 256 work-items
  if (!gpu) {
    // CPU devices (PoCL): gemm_direct_fwd in 8-wide vectors, 8 vector accumulators per
    // work-item, 32 work-items per group. With 16-float registers (AVX-512) 2 rows x 32
    // columns: PoCL 3.1 on a 2-core AVX-512 VM, GPTMini small8's products per step, two runs
    // each (ms, wall): 2x32 42.1 / 41.7, 4x16 (32x64 tiles) 53.9 / 55.3, 4x32 (16x64) 50.3 /
    // 41.4, 4x32 (32x128) 52.6 / 40.4; the scalar kernel before them 450. With 8-float
    // registers (AVX2) 4 rows x 16 columns, which loads half as much of B per multiply-add:
    // 2-core AVX2 VM, GFLOP/s of the best of 4 rounds on five of small8's products
    // (bench/RESULTS.md, session 12): 2x32 34-43, 4x16 in 32x64 tiles 55-90.
    if (d.info.native_float_width >= 16) c = {GemmKernel::Direct, 16, 128, 16, 2, 32, 8, 1};
    else c = {GemmKernel::Direct, 32, 64, 16, 4, 16, 8, 1};
  } else if (d.info.max_work_group < 256 || d.info.local_mem < 16 * 1024) {
    c = {GemmKernel::Generic, 32, 32, 16, 4, 4, 2, 1};  // 64 work-items
  } else if (nvidia || amd) {
    // 128x128 tiles with 8x8 accumulators per work-item once there are enough tiles to fill
    // the device (33.8 KiB of local memory double-buffered in float32); 64x64 with 4x4
    // otherwise. H200, driver 580 (bench/RESULTS.md, session 8), one run: per-step GEMM of
    // GPTMini large 34.5 ms against 44.5 for 64x128 tiles with 8x8 (128 work-items: with the
    // current kernel, two-thirds of the 128x128 speed on 8192-row products), GPTMini small
    // 1.20 ms against 1.76.
    if (large && !wide) c = {GemmKernel::Tiled, 128, 128, 16, 8, 8, 4, 1};
    else c = {GemmKernel::Tiled, 64, 64, 16, 4, 4, 4, 1};
    // Small float32 problems on NVIDIA: 8x4 accumulators, 128 work-items per 64x64 tile (the
    // shape of cuBLAS's 64x64x8 kernels for them). H200, device time of GPTMini small's
    // products per step (bench/RESULTS.md, session 11): 1.21 ms with 4x4, 1.14 with 8x4,
    // 1.49 with 8x8; 4x8 1.19, 32x64 tiles 1.23, TILE_K 8 1.20, cp.async stages 1.37-1.50.
    if (nvidia && !large && !wide) c.wpt_m = 8;
    // ... and two slices of K where a product has at most one work-group per unit (SLICE_K,
    // use_slices). H200, wall-clock device time of GPTMini small's products against cuBLAS,
    // two rounds each (bench/RESULTS.md, session 13): 4096x512 @ 512x128 0.88 / 0.91 of
    // cuBLAS -> 1.00 / 0.98, the same + bias 0.88 / 0.87 -> 0.95 / 0.93, 4096x256 @ 256x128
    // 0.83 / 0.88 -> 0.99 / 0.94; SLICE_K=3 and 4 no better than 2 on the whole.
    if (nvidia && !large && !wide) c.slice_k = 2;
    // Same card, bench_step_gemms.py large32 with PACK_B=1 against 0 in one session: the NT
    // products (every nn.Linear forward) 1-16% faster (8192x512x512 150 -> 126 us, the head
    // 1634 -> 1570 us), per-step GEMM 36.55 -> 35.55 ms. Large problems only: in the small
    // class (GPTMini small, host-bound) the packing launch would cost more than it saves,
    // and in the large class only for long products (PACK_B=2, kPackMinVolume).
    if (nvidia && large && !wide) c.pack_b = 2;
    // Tensor cores for float32 where the matmul precision allows TF32 (mma.sync's tf32 form
    // exists from sm_80 on).
    if (nvidia && d.info.nv_sm >= 80 && t == at::kFloat) c.mma = 1;
  } else if (intel) {
    c.kernel = GemmKernel::Tiled;  // 4x4 accumulators: Intel's SIMD16 register file is small
  }
  if (!config_error(d, t, c, shape).empty()) c = {GemmKernel::Generic, 32, 32, 16, 4, 4, 2, 1};
  return c;
}

// The configuration for (device, dtype, shape class): TORCH_OCL_GEMM_CONFIG, else the tuning
// file's "gemm/<dtype>/<small|large>" entry, else default_config. Each is applied on top of
// the default, so a partial override ("TILE_K=8") keeps the other fields. An invalid value
// warns and is ignored.
GemmConfig resolve_config(const Device& d, at::ScalarType t, ShapeClass shape) {
  const GemmConfig dflt = default_config(d, t, shape);
  const std::string key = std::string("gemm/") + tuning::dtype_key(t) + (shape == ShapeClass::Large ? "/large" : "/small");
  GemmConfig c = dflt;
  tuning::apply_override(d, key, "TORCH_OCL_GEMM_CONFIG", env::gemm_config(), "GEMM configuration",
                         [&](const std::string& text) {
                           GemmConfig r = dflt;
                           std::string err = apply_config(text, r);
                           if (err.empty()) err = config_error(d, t, r, shape);
                           if (err.empty()) c = r;
                           return err;
                         });
  return c;
}

// Large tiles once there are at least as many of them as compute units (fewer, bigger
// work-groups then still fill the device); small tiles otherwise, for parallelism. A product
// of at most 64 rows or columns would leave half of every 128x128 tile empty: small tiles
// however many there are. H200 (bench/RESULTS.md, session 23), a 3x3 convolution 64->64 on
// 32x64x56x56, whose forward and weight-gradient products have 64 rows, fwd+bwd: 2,292 us
// with 128x128 tiles, 1,763 with 64x64 (64x128: 1,941).
ShapeClass shape_class(const Device& d, int64_t B, int64_t M, int64_t N) {
  if (std::min(M, N) <= 64) return ShapeClass::Small;
  const int64_t big_tiles = B * ((M + 127) / 128) * ((N + 127) / 128);
  return big_tiles >= int64_t(std::max<cl_uint>(d.info.compute_units, 1)) ? ShapeClass::Large : ShapeClass::Small;
}

// A resolved configuration and its program's build options, cached per (device, dtype,
// shape class) until the tuning generation changes (no parsing or file access per call).
struct ResolvedConfig {
  GemmConfig cfg;
  std::string options;          // the program for cfg
  std::string generic_options;  // the same tiles without gemm_tiled_fwd (== options unless tiled)
  std::string sliced_options;   // gemm_tiled_sliced_fwd's program ("" unless SLICE_K > 1 applies)
  std::string mma_options;      // gemm_mma's program ("" unless float32 with MMA on)
  MmaTiles mma_tiles{};
  uint64_t generation = 0;
  mutable std::atomic<bool> tiled_broken{false};   // the driver failed to build `options`
  mutable std::atomic<bool> sliced_broken{false};  // ... or `sliced_options`
  mutable std::atomic<bool> mma_broken{false};     // ... or `mma_options`
};

// Build options selecting the storage and accumulation types of kernels/gemm.cl.
std::string dtype_options(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "-DDTYPE=float -DACC=float";
    case at::kDouble: return "-DDTYPE=double -DACC=double";
    case at::kHalf: return "-DDTYPE=half -DACC=float -DIS_HALF";
    case at::kBFloat16: return "-DDTYPE=ushort -DACC=float -DIS_BF16";
    case at::kChar: return "-DDTYPE=char -DACC=int -DIS_INT";
    case at::kByte: return "-DDTYPE=uchar -DACC=int -DIS_INT";
    case at::kShort: return "-DDTYPE=short -DACC=int -DIS_INT";
    case at::kInt: return "-DDTYPE=int -DACC=int -DIS_INT";
    case at::kLong: return "-DDTYPE=long -DACC=long -DIS_INT";
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: matrix products are not implemented for dtype ", t);
  }
  return "";
}

std::string gemm_options(at::ScalarType t, const GemmConfig& cfg) {
  std::string o = dtype_options(t) + " -DTILE_M=" + std::to_string(cfg.tile_m) + " -DTILE_N=" + std::to_string(cfg.tile_n) +
                  " -DTILE_K=" + std::to_string(cfg.tile_k) + " -DWPT_M=" + std::to_string(cfg.wpt_m) +
                  " -DWPT_N=" + std::to_string(cfg.wpt_n) + " -DVEC_WIDTH=" + std::to_string(cfg.vec_width);
  if (cfg.kernel == GemmKernel::Tiled) {
    o += " -DDOUBLE_BUFFER=" + std::to_string(cfg.double_buffer);
    if (use_async(t, cfg)) o += " -DASYNC_STAGES=" + std::to_string(cfg.async_stages);
  } else {
    o += " -DNO_TILED_KERNEL";  // keeps the program (and PoCL's cold build) small
  }
  if (has_pack_kernel(t, cfg)) o += cfg.kernel == GemmKernel::Tiled ? " -DPACK_KERNEL" : " -DPANEL_KERNELS";
  return o;
}

std::shared_ptr<const ResolvedConfig> gemm_config(Device& d, at::ScalarType t, ShapeClass shape) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, std::shared_ptr<const ResolvedConfig>> cache;
  const uint64_t gen = tuning::generation();
  std::lock_guard<std::mutex> g(mutex);
  auto& slot = cache[{d.index, int(t), int(shape)}];
  if (!slot || slot->generation != gen) {
    auto r = std::make_shared<ResolvedConfig>();
    r->cfg = resolve_config(d, t, shape);
    r->options = gemm_options(t, r->cfg);
    GemmConfig generic = r->cfg;
    generic.kernel = GemmKernel::Generic;
    r->generic_options = r->cfg.kernel == GemmKernel::Tiled ? gemm_options(t, generic) : r->options;
    if (r->cfg.kernel == GemmKernel::Tiled && has_tiled_kernel(t) && r->cfg.slice_k > 1 && !use_async(t, r->cfg))
      r->sliced_options = r->options + " -DSLICE_K=" + std::to_string(r->cfg.slice_k);
    if (r->cfg.mma && t == at::kFloat) {
      const MmaTiles mt = mma_tiles(r->cfg, shape);
      r->mma_tiles = mt;
      r->mma_options = "-DMMA=" + std::to_string(r->cfg.mma) + " -DPASSES=" + std::to_string(r->cfg.mma_passes) +
                       " -DTILE_M=" + std::to_string(mt.tile_m) + " -DTILE_N=" + std::to_string(mt.tile_n) +
                       " -DWARPS_M=" + std::to_string(mt.warps_m) + " -DWARPS_N=" + std::to_string(mt.warps_n);
    }
    r->generation = gen;
    slot = std::move(r);
  }
  return slot;
}

// Kernel `name` of the program built with `options`, or nullptr (after one warning per
// configuration, naming the build error) when the driver rejects that program.
Kernel* kernel_or_null(Device& d, const std::string& options, const std::string& name, std::atomic<bool>& broken,
                       const char* what, const char* instead, const char* stem = "gemm") {
  if (broken.load(std::memory_order_acquire)) return nullptr;
  try {
    return &get_kernel(d, stem, options, name);
  } catch (const c10::Error& e) {
    if (!broken.exchange(true))
      TORCH_WARN("torch_ocl: the ", what, " GEMM kernel failed to build on ", d.info.name, " (",
                 std::string(e.what_without_backtrace()).substr(0, 1500), "); using ", instead);
    return nullptr;
  }
}

// Kernel `name` of rc's program, or nullptr for gemm_tiled_fwd / gemm_tiled_sliced_fwd when
// it cannot be built. A driver that rejects gemm_tiled_fwd must not take every matrix
// product down with it: the program is then built without it (gemm_fwd with the same tiles
// serves every layout); one that rejects the sliced program leaves gemm_tiled_fwd.
Kernel* gemm_kernel(Device& d, const ResolvedConfig& rc, const std::string& name) {
  if (name == "gemm_tiled_sliced_fwd")  // sliced_options is set for tiled configurations only
    return !rc.sliced_options.empty() && !rc.tiled_broken.load(std::memory_order_acquire)
               ? kernel_or_null(d, rc.sliced_options, name, rc.sliced_broken, "sliced", "gemm_tiled_fwd")
               : nullptr;
  if (rc.options != rc.generic_options)
    if (Kernel* k = kernel_or_null(d, rc.options, name, rc.tiled_broken, "tiled", "gemm_fwd with the same tiles"))
      return k;
  if (name == "gemm_tiled_fwd") return nullptr;
  return &get_kernel(d, "gemm", rc.generic_options, name);
}

// Whether float32 products may round their operands to TF32: PyTorch's float32 matmul
// precision is "high" or "medium" (torch.set_float32_matmul_precision), or TF32 is chosen
// through the per-backend API. PrivateUse1 has no entry of its own there, so ocl follows the
// matmul setting cuBLAS follows (which torch.backends.fp32_precision = "tf32" and the legacy
// calls set too). The C++ getter does not resolve inheritance ("none": ask the parent), so this
// walks it as torch.backends' Python getters do: cuda.matmul, then cuda, then the generic
// setting. "bf16" allows a coarser rounding than TF32's, so it allows TF32 too.
bool tf32_allowed() {
  using at::Float32Backend, at::Float32Op, at::Float32Precision;
  const auto& ctx = at::globalContext();
  for (const auto& [backend, op] : {std::pair{Float32Backend::CUDA, Float32Op::MATMUL},
                                    std::pair{Float32Backend::CUDA, Float32Op::ALL},
                                    std::pair{Float32Backend::GENERIC, Float32Op::ALL}}) {
    // (Newer headers add an internal DEFAULT value, which inherits too: not named here.)
    const Float32Precision p = ctx.float32Precision(backend, op);
    if (p == Float32Precision::IEEE) return false;
    if (p == Float32Precision::TF32 || p == Float32Precision::BF16) return true;
  }
  return false;
}

void check_gemm_dtype(Device& d, at::ScalarType t, const char* op) {
  if (at::isComplexType(t)) {  // through the real products of complex_bmm
    check_complex_supported(d, t, op);
    return;
  }
  check_dtype_supported(d, t, op);
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "\"", op, "\" not implemented for 'Bool' on ocl");
  dtype_options(t);
}

// Launches `k` with alpha/beta converted to the kernel's accumulator type.
template <typename... Args>
void launch_scaled(Device& d, Kernel& k, Range g, Range l, at::ScalarType t, const at::Scalar& alpha,
                   const at::Scalar& beta, const Args&... args) {
  switch (t) {
    case at::kDouble: launch(d, k, g, l, args..., alpha.to<double>(), beta.to<double>()); break;
    case at::kLong: launch(d, k, g, l, args..., alpha.to<int64_t>(), beta.to<int64_t>()); break;
    case at::kChar: case at::kByte: case at::kShort: case at::kInt:
      launch(d, k, g, l, args..., alpha.to<int32_t>(), beta.to<int32_t>()); break;
    default: launch(d, k, g, l, args..., alpha.to<float>(), beta.to<float>()); break;
  }
}

bool same_view(const at::Tensor& x, const at::Tensor& y) {
  return x.data_ptr() == y.data_ptr() && x.sizes().equals(y.sizes()) && x.strides().equals(y.strides());
}

// ---- our kernels ---------------------------------------------------------------------------

// Matrix-vector form (N == 1): out[b, m, 0] = alpha * A[b, m, :] . x[b, :] + beta * C[b, m, 0].
void run_gemv(Device& d, const at::Tensor& out, int64_t o_sb, int64_t o_sm, const at::Tensor& a, int64_t a_sb,
              int64_t a_sm, int64_t a_sk, const at::Tensor& x, int64_t x_sb, int64_t x_sk, const at::Tensor* c,
              int64_t c_sb, int64_t c_sm, int64_t B, int64_t M, int64_t K, const at::Scalar& alpha,
              const at::Scalar& beta) {
  const at::ScalarType t = out.scalar_type();
  // A column-major A (unit m-stride) reads coalesced with one work-item per output.
  const bool cols = a_sm == 1 && a_sk != 1 && M >= 32;
  constexpr int kWG = 128;  // GEMV_WG's default in gemm.cl
  // The same program as the small-shape GEMM of this dtype: one build serves both.
  Kernel& k = *gemm_kernel(d, *gemm_config(d, t, ShapeClass::Small), cols ? "gemv_cols_fwd" : "gemv_rows_fwd");
  Buf cb = c ? buf(*c) : Buf{nullptr, 0};
  Range g = cols ? Range(size_t(M), size_t(B)) : Range(size_t(M) * kWG, size_t(B));
  Range l = cols ? Range(64, 1) : Range(kWG, 1);
  launch_scaled(d, k, g, l, t, alpha, beta, int(M), int(K), buf(a), a_sb, a_sm, a_sk, buf(x), x_sb, x_sk, cb,
                c_sb, c_sm, buf(out), o_sb, o_sm, int(c != nullptr));
}

// Split-K: how many slices of K a single (B == 1) float32 product is cut into. A product
// with few output tiles but a long K -- the weight gradients dW = dY^T X, whose K is the
// number of tokens -- leaves most compute units idle while a handful of work-groups walk
// all of K (GPTMini small's 384x128x4096 is 3 tiles of 128^2 on a 132-unit GPU). Slicing K
// gives every unit work; the partial products then cost one extra pass over S*M*N floats,
// so slices stay at least kMinSliceK deep. GPU-type devices only (a CPU's cores are few).
// TORCH_OCL_GEMM_SPLIT_K=off disables it, =N forces N slices on any device (tests use it).
//
// The slice count is a power of two giving at least kSplitTilesPerCU tiles of 128^2 per
// compute unit (several resident work-groups per unit, so about two waves of the real,
// smaller tiles), preferring counts that divide K into 16-multiples: an uneven split needs
// a second launch for the remainder. Measured on an H200 (bench/bench_step_gemms.py,
// GPTMini large's weight gradients, e.g. 1536x8192x512: 3 slices 437 us, 8 slices 319 us;
// 512x8192x512: 9 uneven slices 162 us, 8 slices 121 us; with session 8's 128x128 tiles:
// 1536x8192x512 8 slices 391 us, 16 slices 316 us).
//
// While the slices' work-groups (small-class tiles, 64x64) would fill at most half of the
// compute units, each is bound by the latency of its K steps rather than by throughput, and
// slices may be half as deep. H200, kernel time of GPTMini small's weight gradients
// (K = 4096): 128x128 8 slices 31.0 us, 16 slices 21.2 us; 256x128 30.2 -> 21.5 us. An
// unsplit product stops there: 4096x512x128 (128 work-groups unsplit) loses 6-7 us in 2
// slices, since the first split adds the reduction launch and a pass over all of out.
// A product that is split already pays those, and more slices only add reads of M*N
// floats each: it keeps doubling down to 128-deep slices while the work-groups stay at
// most two per compute unit (session 11, 8x4 small tiles, us per call, 8 / 16 / 32 slices:
// 128x512 30.5 / 27.5 / 28.1, 512x128 30.7 / 27.8 / 28.0, 384x128 30.3 / 27.4 / 25.1;
// 16 / 32: 128x128 21.9 / 18.3, 256x128 22.1 / 21.6). Large products keep 512
// (512x512x8192: 16 slices 105.5 us, 32 slices 114.3 us).
constexpr int64_t kMinSliceK = 512;
constexpr int64_t kMinSliceKSmall = 256;
constexpr int64_t kMinSliceKSplit = 128;
constexpr int64_t kSplitTilesPerCU = 2;
int64_t split_k_slices(Device& d, at::ScalarType t, int64_t B, int64_t M, int64_t N, int64_t K) {
  if (t != at::kFloat || B != 1) return 1;
  const int64_t mode = env::gemm_split_k();
  if (mode == env::kSplitKOff) return 1;
  if (mode != env::kSplitKAuto) return std::max<int64_t>(1, std::min(mode, K));
  if (!(d.info.type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR))) return 1;
  const int64_t cu = std::max<cl_uint>(d.info.compute_units, 1);
  const int64_t tiles = ((M + 127) / 128) * ((N + 127) / 128);  // large-tile work-groups
  if (tiles >= cu) return 1;
  const GemmConfig sc = gemm_config(d, t, ShapeClass::Small)->cfg;  // a copy: the cache may be replaced
  const int64_t small_groups = ((M + sc.tile_m - 1) / sc.tile_m) * ((N + sc.tile_n - 1) / sc.tile_n);
  // Doubling stops once one wave of kSplitTilesPerCU tiles per unit is at least 90 % full:
  // more slices only add a second, partial wave and a longer reduction (512x8192x2048, 256
  // tiles for 264 slots: 4 slices 378.6 us, 8 slices 384.0, H200, session 9).
  const int64_t slots = kSplitTilesPerCU * cu;
  const auto min_depth = [&](int64_t s) {  // of the slices after doubling s
    const int64_t groups = 2 * s * small_groups;
    if (s >= 2 && groups <= 2 * cu) return kMinSliceKSplit;
    return groups <= cu ? kMinSliceKSmall : kMinSliceK;
  };
  int64_t s = 1;
  while (10 * tiles * s < 9 * slots && K / (2 * s) >= min_depth(s)) s *= 2;
  // More than one wave of kSplitTilesPerCU tiles per unit whose last wave is at most half
  // full: doubling the slices again fills the waves (1536x8192x512: 384 tiles for 264 slots,
  // 391 us; 16 slices, 768 tiles, 316 us).
  const int64_t last = (tiles * s) % slots;
  if (tiles * s > slots && last > 0 && last <= slots / 2 && K / (2 * s) >= kMinSliceK) s *= 2;
  // Back off to the largest count that splits K evenly (one launch), if there is one > 1.
  for (int64_t even = s; even > 1; even /= 2)
    if (K % (16 * even) == 0) return even;
  return s;
}

void run_tiled(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
               const at::Scalar& alpha, const at::Scalar& beta);

// out = alpha * a @ b + beta * c for B == 1 in S slices of K: the slices are one batched
// product into a float workspace [S, M, N] (batch strides step along K, so no operand is
// copied), then gemm_splitk_reduce sums them in order and applies the epilogue.
void run_split_k(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
                 const at::Scalar& alpha, const at::Scalar& beta, int64_t S) {
  const int64_t M = out.size(1), N = out.size(2), K = a.size(2);
  // Slice depth, rounded up to a multiple of 16 so that every slice starts 4-element aligned
  // (the batch stride of a k-contiguous operand: gemm_tiled_fwd's vector loads) and on a
  // TILE_K boundary; the last slice may be shorter.
  const int64_t kc = std::min<int64_t>(K, int64_t(round_up(size_t((K + S - 1) / S), 16)));
  const int64_t full = K / kc, rest = K - full * kc;
  at::Tensor ws = at::empty({full + (rest ? 1 : 0), M, N}, out.options());
  const at::Tensor a0 = a.select(0, 0), b0 = b.select(0, 0);
  run_tiled(d, ws.narrow(0, 0, full), a0.as_strided({full, M, kc}, {kc * a0.stride(1), a0.stride(0), a0.stride(1)}),
            b0.as_strided({full, kc, N}, {kc * b0.stride(0), b0.stride(0), b0.stride(1)}), nullptr, 1, 0);
  if (rest)
    run_tiled(d, ws.narrow(0, full, 1), a.narrow(2, full * kc, rest), b.narrow(1, full * kc, rest), nullptr, 1, 0);
  const at::ScalarType t = out.scalar_type();
  Kernel& k = *gemm_kernel(d, *gemm_config(d, t, ShapeClass::Small), "gemm_splitk_reduce");
  launch_scaled(d, k, Range(size_t(N), size_t(M)), Range(), t, alpha, beta, int(ws.size(0)), int(M), int(N),
                buf(ws), c ? buf(*c) : Buf{nullptr, 0}, c ? c->stride(1) : 0, c ? c->stride(2) : 0, buf(out),
                out.stride(1), out.stride(2), int(c != nullptr));
}

// How gemm_tiled_fwd reads an operand of a [B, ., .] product with depth K: rows r (stride sr,
// extent R), depth k (stride sk), batch stride sb, 4-vectors of vec_bytes. 1 = k-contiguous,
// 0 = r-contiguous, -1 = neither (unit stride along neither, or not 4-aligned).
int tiled_layout(int64_t B, int64_t K, size_t vec_bytes, const Buf& x, int64_t R, int64_t sr, int64_t sk,
                 int64_t sb) {
  auto aligned = [&](int64_t other) { return (B == 1 || sb % 4 == 0) && other % 4 == 0 && x.offset % vec_bytes == 0; };
  if ((sk == 1 || K == 1) && K % 4 == 0 && aligned(R == 1 ? 0 : sr)) return 1;
  if ((sr == 1 || R == 1) && R % 4 == 0 && aligned(K == 1 ? 0 : sk)) return 0;
  return -1;
}
int layout_a(const at::Tensor& a, const Buf& ba) {
  return tiled_layout(a.size(0), a.size(2), 4 * a.element_size(), ba, a.size(1), a.stride(1), a.stride(2), a.stride(0));
}
int layout_b(const at::Tensor& b, const Buf& bb) {
  return tiled_layout(b.size(0), b.size(1), 4 * b.element_size(), bb, b.size(2), b.stride(2), b.stride(1), b.stride(0));
}

// gemm_tiled_fwd's layout flags for this problem, or -1 when an operand does not qualify.
// An operand qualifies when its rows or its columns are unit-stride and every 4-vector along
// them is aligned and whole: the contiguous extent, the other strides and the byte offset
// are multiples of 4 elements (so a vector starting inside the matrix ends inside it).
// The Bufs are those of out, a, b and c (already resolved by the caller).
int tiled_flags(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c, const Buf& bo,
                const Buf& ba, const Buf& bb, const Buf& bc) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2);
  const size_t vec_bytes = 4 * out.element_size();
  const int la = layout_a(a, ba), lb = layout_b(b, bb);
  if (la < 0 || lb < 0) return -1;
  auto rows_vec = [&](const at::Tensor& x, const Buf& xb) {
    return (N == 1 || x.stride(2) == 1) && (M == 1 || x.stride(1) % 4 == 0) && (B == 1 || x.stride(0) % 4 == 0) &&
           xb.offset % vec_bytes == 0;
  };
  return la | (lb << 1) | (rows_vec(out, bo) ? 4 : 0) | (c && rows_vec(*c, bc) ? 8 : 0);
}

void run_own(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
             const at::Scalar& alpha, const at::Scalar& beta) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const int64_t c_sb = c ? c->stride(0) : 0, c_sm = c ? c->stride(1) : 0, c_sn = c ? c->stride(2) : 0;
  if (N == 1) {
    run_gemv(d, out, out.stride(0), out.stride(1), a, a.stride(0), a.stride(1), a.stride(2), b, b.stride(0),
             b.stride(1), c, c_sb, c_sm, B, M, K, alpha, beta);
    return;
  }
  if (M == 1) {  // out^T = B^T @ a^T: the rows of B^T are B's columns
    run_gemv(d, out, out.stride(0), out.stride(2), b, b.stride(0), b.stride(2), b.stride(1), a, a.stride(0),
             a.stride(2), c, c_sb, c_sn, B, N, K, alpha, beta);
    return;
  }
  const int64_t slices = split_k_slices(d, out.scalar_type(), B, M, N, K);
  if (slices > 1) {
    run_split_k(d, out, a, b, c, alpha, beta, slices);
    return;
  }
  run_tiled(d, out, a, b, c, alpha, beta);
}

// PACK_B=2 packs B for products of at least this many multiply-adds: the k-contiguous path
// costs ~2 % of the kernel time, the pack ~5 us of launch plus a pass over B. H200, driver
// 580 (bench/RESULTS.md, sessions 9 and 10), device time: 8192x512x512 (2^31, GPTMini
// large's attention projection) 106.7 / 107.1 us packed, 105.4 / 105.6 unpacked;
// 8192x2048x512 (2^33) 399.0 packed, 401.6 unpacked.
constexpr int64_t kPackMinVolume = int64_t(1) << 32;

// Products of at least this many multiply-adds copy an operand that fits no tiled layout
// (run_tiled). At ~11 TFLOP/s (gemm_fwd) against >= 20 (tiled) the copy's launch and pass
// (~5 us plus the operand's bytes at the copy bandwidth) pay for themselves from ~5e7.
constexpr int64_t kDenseMinVolume = int64_t(1) << 26;

// SLICE_K: a product of at most one work-group per compute unit is bound by the latency of
// its chain of K steps (each a round trip to global memory), and its units hold one
// work-group's few warps; gemm_tiled_sliced_fwd gives each work-group SLICE_K chains of
// 1/SLICE_K the length, at least kSliceMinSteps steps each.
constexpr int64_t kSliceMinSteps = 2;
bool use_slices(const Device& d, const GemmConfig& cfg, int64_t groups, int64_t K) {
  const int64_t steps = (K + cfg.tile_k - 1) / cfg.tile_k;
  return cfg.slice_k > 1 && groups <= int64_t(std::max<cl_uint>(d.info.compute_units, 1)) &&
         steps >= kSliceMinSteps * cfg.slice_k;
}

// An operand as GEMM_OPERANDS in gemm.cl takes it: buffer and (batch, row, column) strides.
struct GemmOperand {
  Buf buf;
  int64_t sb, s1, s2;
};
GemmOperand operand(const at::Tensor& x) { return {buf(x), x.stride(0), x.stride(1), x.stride(2)}; }

// gemm_direct_fwd (CPU devices): where its vector loop applies, the operands it would read
// along strided lines are first copied into gemm_pack_panels' k-major panels, as a CPU BLAS
// packs them: B always (its K x WPT_N strip per work-item otherwise strides over rows of N
// elements, whose power-of-two lengths put a strip's lines into few cache sets; a
// k-contiguous B, x @ W^T, would take the scalar loop), A where it is not k-contiguous (then
// each k reads WPT_M elements from another line; a k-contiguous A is read WPT_M rows at a
// time and gains nothing). PoCL, 2-core AVX2 VM, GPTMini small8's 15 products interleaved in
// one process (bench/RESULTS.md, session 14), per-step ms: 77.9 with B packed only when
// k-contiguous (gemm_pack_kn, before), 71.4 with B always, 63.5 with A as above too; another
// run 68.4 as landed against 75.1 with A always.
// Packs them for the [B, M, N] product of a and b, points *oa / *ob at the panels (which *ap /
// *bp keep alive until the launch) and returns gemm_direct_fwd's `packed` flags.
int pack_direct_operands(Device& d, const ResolvedConfig& rc, const at::Tensor& a, const at::Tensor& b,
                         at::Tensor* ap, at::Tensor* bp, GemmOperand* oa, GemmOperand* ob) {
  const int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  const GemmConfig& cfg = rc.cfg;
  const bool vectors =
      cfg.vec_width > 1 && cfg.wpt_n % cfg.vec_width == 0 && has_pack_kernel(a.scalar_type(), cfg) && K > 0;
  const bool pack_b = vectors && M > cfg.wpt_m;
  const bool pack_a = vectors && a.stride(2) != 1 && N > cfg.wpt_n;
  // Operand (r, k) at x[b*s_b + r*s_r + k*s_k] into panels of w rows: [batches, panels * K * w],
  // one batch where x's batch is broadcast (stride 0), then read with batch stride 0.
  auto pack = [&](const at::Tensor& x, int64_t R, int64_t s_r, int64_t s_k, int w, const char* kernel,
                  at::Tensor* dst, GemmOperand* o) {
    const int64_t panels = (R + w - 1) / w, batches = x.stride(0) == 0 ? 1 : B;
    *dst = at::empty({batches, panels * K * w}, x.options());
    launch(d, get_kernel(d, "gemm", rc.options, kernel), Range(size_t(panels), size_t(batches)), Range(1, 1),
           int(R), int(K), int(panels), buf(x), x.stride(0), s_r, s_k, buf(*dst));
    *o = {buf(*dst), batches == 1 ? 0 : dst->stride(0), 0, 0};
  };
  if (pack_a) pack(a, M, a.stride(1), a.stride(2), cfg.wpt_m, "gemm_pack_panels_m", ap, oa);
  if (pack_b) pack(b, N, b.stride(2), b.stride(1), cfg.wpt_n, "gemm_pack_panels_n", bp, ob);
  return (pack_a ? 1 : 0) | (pack_b ? 2 : 0);
}

// One launch over the [B, M, N] problem (M, N > 1) of the configured kernel: gemm_tiled_fwd
// (or gemm_tiled_sliced_fwd) where the layout allows, else gemm_fwd (or gemm_direct_fwd on
// CPU devices).
void run_tiled(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
               const at::Scalar& alpha, const at::Scalar& beta) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const int64_t c_sb = c ? c->stride(0) : 0, c_sm = c ? c->stride(1) : 0, c_sn = c ? c->stride(2) : 0;
  const at::ScalarType t = out.scalar_type();
  const auto rc = gemm_config(d, t, shape_class(d, B, M, N));
  const GemmConfig& cfg = rc->cfg;
  const size_t rts_m = cfg.tile_m / cfg.wpt_m, rts_n = cfg.tile_n / cfg.wpt_n;
  const int64_t groups_n = (N + cfg.tile_n - 1) / cfg.tile_n, groups_m = (M + cfg.tile_m - 1) / cfg.tile_m;
  const Buf ba = buf(a), bb = buf(b), bo = buf(out), cb = c ? buf(*c) : Buf{nullptr, 0};
  GemmOperand oa = operand(a), ob = operand(b);  // gemm_direct_fwd may read panels instead
  // The kernels share their leading arguments (GEMM_OPERANDS in gemm.cl); `slices` groups of
  // work-items per work-group (gemm_tiled_sliced_fwd), else 1.
  auto go_sliced = [&](Kernel& k, size_t slices, auto... extra) {
    launch_scaled(d, k, Range(size_t(groups_n) * rts_n, size_t(groups_m) * rts_m * slices, size_t(B)),
                  Range(rts_n, rts_m * slices, 1), t, alpha, beta, int(M), int(N), int(K), oa.buf, oa.sb, oa.s1,
                  oa.s2, ob.buf, ob.sb, ob.s1, ob.s2, cb, c_sb, c_sm, c_sn, bo, out.stride(0), out.stride(1),
                  out.stride(2), int(c != nullptr), extra...);
  };
  auto go = [&](Kernel& k, auto... extra) { go_sliced(k, 1, extra...); };
  // float32 on tensor cores where TF32 is allowed and the layout qualifies (the operand
  // conditions of gemm_tiled_fwd); one kernel per pair of operand layouts.
  if (t == at::kFloat && !rc->mma_options.empty() && tf32_allowed()) {
    const int flags = tiled_flags(out, a, b, c, bo, ba, bb, cb);
    static const char* const kNames[4] = {"gemm_mma_rr", "gemm_mma_kr", "gemm_mma_rk", "gemm_mma_kk"};
    Kernel* mk = flags >= 0 ? kernel_or_null(d, rc->mma_options, kNames[flags & 3], rc->mma_broken, "tensor-core",
                                             "the float32 kernels", "gemm_mma")
                            : nullptr;
    if (mk) {
      const MmaTiles& mt = rc->mma_tiles;
      const size_t threads = size_t(mt.threads());
      const Range global(size_t((N + mt.tile_n - 1) / mt.tile_n) * threads, size_t((M + mt.tile_m - 1) / mt.tile_m),
                         size_t(B));
      launch_scaled(d, *mk, global, Range(threads, 1, 1), t, alpha, beta, int(M), int(N), int(K), ba, a.stride(0), a.stride(1),
                    a.stride(2), bb, b.stride(0), b.stride(1), b.stride(2), cb, c_sb, c_sm, c_sn, bo, out.stride(0),
                    out.stride(1), out.stride(2), int(c != nullptr), flags);
      return;
    }
  }
  // A k-contiguous B copied into a dense [B, K, N] workspace by gemm_pack_kn (of rc's
  // program), and the product run again on it; false where the pack cannot run here (no
  // pack kernel in the program, or a device without gemm_pack_kn's 32x8 work-group).
  auto pack_b_and_run = [&]() {
    if (!has_pack_kernel(t, cfg) || d.info.max_work_group < 256) return false;
    at::Tensor packed = at::empty({B, K, N}, b.options());
    launch(d, get_kernel(d, "gemm", rc->options, "gemm_pack_kn"),
           Range(size_t((K + 31) / 32) * 32, size_t((N + 31) / 32) * 8, size_t(B)), Range(32, 8, 1), int(K), int(N),
           bb, b.stride(0), b.stride(2), buf(packed));
    run_tiled(d, out, a, packed, c, alpha, beta);
    return true;
  };
  if (cfg.kernel == GemmKernel::Tiled && has_tiled_kernel(t)) {
    const int flags = tiled_flags(out, a, b, c, bo, ba, bb, cb);
    // An operand strided along both its rows and its depth (an expanded gradient such as
    // sum()'s, a view with steps) has no tiled path, and gemm_fwd reads it element by element.
    // A large product copies it densely first, as CUDA's cuBLAS callers do
    // (prepare_matrix_for_cublas): a pass over the operand against a product several times
    // slower (H200: gemm_fwd ~11 TFLOP/s where the tiled kernel runs 20-45).
    if (flags < 0 && B * M * N * K >= kDenseMinVolume) {
      // Always a new buffer (a contiguous operand may fail by its offset alone); a
      // batch-broadcast operand (batch stride 0) is copied once and broadcast again.
      auto dense = [](const at::Tensor& x) {
        if (x.stride(0) == 0) return x.narrow(0, 0, 1).clone(at::MemoryFormat::Contiguous).expand_as(x);
        return x.clone(at::MemoryFormat::Contiguous);
      };
      const bool copy_a = layout_a(a, ba) < 0 && K % 4 == 0, copy_b = layout_b(b, bb) < 0 && N % 4 == 0;
      if (copy_a || copy_b) {
        const at::Tensor da = copy_a ? dense(a) : a, db = copy_b ? dense(b) : b;
        // Only where the copies qualify (the allocator's alignment), so this never recurses twice.
        if (tiled_flags(out, da, db, c, bo, buf(da), buf(db), cb) >= 0) return run_tiled(d, out, da, db, c, alpha, beta);
      }
    }
    Kernel* tk = flags >= 0 ? gemm_kernel(d, *rc, "gemm_tiled_fwd") : nullptr;
    // PACK_B: B k-contiguous (flag 2) becomes a dense [B, K, N] copy, which qualifies for the
    // n-contiguous path when N is a whole number of 4-vectors.
    const bool pack = cfg.pack_b == 1 || (cfg.pack_b == 2 && B * M * N * K >= kPackMinVolume);
    if (tk && pack && (flags & 2) && N % 4 == 0 && pack_b_and_run()) return;
    if (tk && use_slices(d, cfg, B * groups_m * groups_n, K))
      if (Kernel* sk = gemm_kernel(d, *rc, "gemm_tiled_sliced_fwd")) return go_sliced(*sk, size_t(cfg.slice_k), flags);
    if (tk) return go(*tk, flags);
  }
  if (cfg.kernel == GemmKernel::Direct) {
    at::Tensor ap, bp;
    const int packed = pack_direct_operands(d, *rc, a, b, &ap, &bp, &oa, &ob);
    return go(*gemm_kernel(d, *rc, "gemm_direct_fwd"), packed);
  }
  go(*gemm_kernel(d, *rc, "gemm_fwd"));
}

// ---- CLBlast -------------------------------------------------------------------------------

// A (rows x cols) operand as CLBlast sees it: row-major with leading dimension ld, or the
// transpose of a row-major (i.e. column-major) one.
struct BlasLayout {
  bool ok = false;
  bool trans = false;
  size_t ld = 0;
};
BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= std::max<int64_t>(cols, 1)))
    return {true, false, size_t(rows == 1 ? std::max<int64_t>(cols, 1) : sr)};
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= std::max<int64_t>(rows, 1)))
    return {true, true, size_t(cols == 1 ? std::max<int64_t>(rows, 1) : sc)};
  return {};
}

const char* clblast_status_name(CLBlastStatusCode s) {
  switch (s) {
    case CLBlastNotImplemented: return "CLBlastNotImplemented";
    case CLBlastInvalidLocalMemUsage: return "CLBlastInvalidLocalMemUsage";
    case CLBlastNoHalfPrecision: return "CLBlastNoHalfPrecision";
    case CLBlastNoDoublePrecision: return "CLBlastNoDoublePrecision";
    case CLBlastInsufficientMemoryA: return "CLBlastInsufficientMemoryA";
    case CLBlastInsufficientMemoryB: return "CLBlastInsufficientMemoryB";
    case CLBlastInsufficientMemoryC: return "CLBlastInsufficientMemoryC";
    case CLBlastInvalidLeadDimA: return "CLBlastInvalidLeadDimA";
    case CLBlastInvalidLeadDimB: return "CLBlastInvalidLeadDimB";
    case CLBlastInvalidLeadDimC: return "CLBlastInvalidLeadDimC";
    case CLBlastUnknownError: return "CLBlastUnknownError";
    default: return "CLBlast error";
  }
}

// Runs out = alpha*a@b + beta*out (the C term already in out, or beta == 0) through CLBlast.
// out must be row-major with unit column stride; a and b any row/column-major layout.
void run_clblast_rowmajor(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                          const at::Scalar& alpha, const at::Scalar& beta) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  at::Tensor aa = a, bb = b;
  BlasLayout la = blas_layout(M, K, a.stride(1), a.stride(2));
  if (!la.ok) {
    aa = a.contiguous();
    la = blas_layout(M, K, aa.stride(1), aa.stride(2));
  }
  BlasLayout lb = blas_layout(K, N, b.stride(1), b.stride(2));
  if (!lb.ok) {
    bb = b.contiguous();
    lb = blas_layout(K, N, bb.stride(1), bb.stride(2));
  }
  const size_t esz = out.element_size();
  Buf ab = buf(aa), bbuf = buf(bb), ob = buf(out);
  const size_t ldc = size_t(M == 1 ? std::max<int64_t>(N, 1) : out.stride(1));
  const CLBlastTranspose ta = la.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
  const CLBlastTranspose tb = lb.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
  const bool dbl = out.scalar_type() == at::kDouble;
  CLBlastStatusCode s;
  {
    // CLBlast enqueues on our queue (setting arguments of its own kernels): hold the lock.
    QueueLock lock(d);
    if (B == 1) {
      s = dbl ? CLBlastDgemm(CLBlastLayoutRowMajor, ta, tb, M, N, K, alpha.to<double>(), ab.mem, ab.offset / esz,
                             la.ld, bbuf.mem, bbuf.offset / esz, lb.ld, beta.to<double>(), ob.mem, ob.offset / esz,
                             ldc, &d.queue, nullptr)
              : CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, M, N, K, alpha.to<float>(), ab.mem, ab.offset / esz,
                             la.ld, bbuf.mem, bbuf.offset / esz, lb.ld, beta.to<float>(), ob.mem, ob.offset / esz,
                             ldc, &d.queue, nullptr);
    } else {
      s = dbl ? CLBlastDgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, M, N, K, alpha.to<double>(), ab.mem,
                                           ab.offset / esz, la.ld, aa.stride(0), bbuf.mem, bbuf.offset / esz,
                                           lb.ld, bb.stride(0), beta.to<double>(), ob.mem, ob.offset / esz, ldc,
                                           out.stride(0), B, &d.queue, nullptr)
              : CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, M, N, K, alpha.to<float>(), ab.mem,
                                           ab.offset / esz, la.ld, aa.stride(0), bbuf.mem, bbuf.offset / esz,
                                           lb.ld, bb.stride(0), beta.to<float>(), ob.mem, ob.offset / esz, ldc,
                                           out.stride(0), B, &d.queue, nullptr);
    }
  }
  TORCH_CHECK(s == CLBlastSuccess, "torch_ocl: CLBlast ", dbl ? "Dgemm" : "Sgemm", " failed on ocl:", d.index,
              " with ", clblast_status_name(s), " (", int(s), ")");
}

void run_clblast(Device& d, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
                 const at::Scalar& alpha, const at::Scalar& beta) {
  const int64_t M = out.size(1), N = out.size(2);
  // CLBlast computes C = alpha*A@B + beta*C in place: put the C term into out first unless
  // it is already there (in-place addmm_).
  at::Scalar eff_beta = c ? beta : at::Scalar(0.0);
  if (c && !same_view(*c, out)) copy_on_device(out, *c);
  const bool row_major = (N == 1 || out.stride(2) == 1) && (M == 1 || out.stride(1) >= N);
  const bool col_major = (M == 1 || out.stride(1) == 1) && (N == 1 || out.stride(2) >= M);
  if (row_major) {
    run_clblast_rowmajor(d, out, a, b, alpha, eff_beta);
  } else if (col_major) {  // out^T = b^T @ a^T, row-major
    run_clblast_rowmajor(d, out.transpose(1, 2), b.transpose(1, 2), a.transpose(1, 2), alpha, eff_beta);
  } else {
    at::Tensor tmp = out.contiguous();
    run_clblast_rowmajor(d, tmp, a, b, alpha, eff_beta);
    copy_on_device(out, tmp);
  }
}

enum class Impl { Own, CLBlast };

// TORCH_OCL_GEMM=clblast uses CLBlast for float32/float64 matrix-matrix products; `auto`
// and `own` use our kernels everywhere. Measured on an NVIDIA H200 through its OpenCL driver
// (bench/bench_gemm.py, float32, 52 problems: squares 1024..4096 and GPTMini's products in
// all four transpose combinations) our tiled kernel matched or beat CLBlast on all of them
// (geomean 26.0 vs 15.4 TFLOP/s; 43.7 vs 31.2 at 4096^3; cuBLAS 34.1), and on CPU devices
// CLBlast's first-use compilation takes minutes on PoCL; so `auto` picks ours on every
// device. Matrix-vector products (M or N == 1) always use our GEMV kernels.
Impl choose_impl(at::ScalarType t, int64_t M, int64_t N) {
  const std::string& mode = env::gemm_impl();
  TORCH_CHECK(mode == "auto" || mode == "own" || mode == "clblast" || mode.empty(),
              "torch_ocl: TORCH_OCL_GEMM must be auto, clblast or own, got '", mode, "'");
  const bool blas_dtype = t == at::kFloat || t == at::kDouble;
  if (mode == "clblast" && blas_dtype && M > 1 && N > 1) return Impl::CLBlast;
  return Impl::Own;
}

void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
               const at::Scalar& alpha, const at::Scalar& beta);

// a @ b for complex a (B, m, k) and b (B, k, n) of one dtype, either with a lazy conjugate bit
// (no negative bits), as one real product: a's stored values read as a real (B, m, 2k) matrix
// of interleaved (re, im) times the real (B, 2k, 2n) matrix
//   row 2j   = ( Re b_jl,           s_b Im b_jl ) for l = 0..n-1
//   row 2j+1 = (-s_a s_b Im b_jl,   s_a Re b_jl )
// (s = -1 for a conjugated operand) give the product's (re, im) pairs, at the real GEMM's speed
// and 4x its flops, as a complex product has.
at::Tensor complex_bmm(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              a.scalar_type(), " != ", b.scalar_type());
  const int64_t B = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  const double sa = a.is_conj() ? -1 : 1, sb = b.is_conj() ? -1 : 1;
  const at::Tensor ar = at::view_as_real(stored_values(a)).reshape({B, m, 2 * k});
  const at::Tensor bv = at::view_as_real(stored_values(b));
  const at::Tensor re = bv.select(-1, 0), im = bv.select(-1, 1);
  const at::Tensor top = at::stack({re, im.mul(sb)}, -1).reshape({B, k, 1, 2 * n});
  const at::Tensor bottom = at::stack({im.mul(-sa * sb), re.mul(sa)}, -1).reshape({B, k, 1, 2 * n});
  const at::Tensor bp = at::cat({top, bottom}, 2).reshape({B, 2 * k, 2 * n});
  return at::view_as_complex(at::bmm(ar, bp).view({B, m, n, 2}));
}

// out = beta c + alpha (a @ b) where an operand is complex or carries a lazy conjugate or
// negative bit (ATen passes those to mm, addmm, bmm and baddbmm unresolved): the product of the
// values (complex_bmm, or the real product of resolved operands), then the pointwise ops and
// copy_, which read and write the bits.
void gemm_values_into(const at::Tensor& out, const at::Tensor& a0, const at::Tensor& b0, const at::Tensor* c,
                      const at::Scalar& alpha, const at::Scalar& beta) {
  const at::Tensor a = a0.is_neg() ? a0.resolve_neg() : a0, b = b0.is_neg() ? b0.resolve_neg() : b0;
  at::Tensor r;
  if (a.is_complex() || b.is_complex()) {
    r = complex_bmm(a, b);
  } else {
    r = at::empty(out.sizes(), out.options());
    gemm_into(r, a.resolve_conj(), b.resolve_conj(), nullptr, 1, 0);
  }
  if (!(alpha.isIntegral(false) && alpha.toLong() == 1)) r = r.mul(alpha);
  if (c) r = r.add(c->mul(beta));
  out.copy_(r);
}

bool has_math_bits(const at::Tensor& t) { return t.is_complex() || t.is_conj() || t.is_neg(); }

// out = alpha * a @ b + beta * c over 3-D views: out [B,M,N], a [B,M,K], b [B,K,N], c (when
// given and beta != 0) broadcastable-expanded to [B,M,N]. out is written, never read,
// unless it is c itself. Handles empty problems and outputs that overlap an input.
void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c,
               const at::Scalar& alpha, const at::Scalar& beta) {
  if (out.numel() == 0) return;
  if (has_math_bits(out) || has_math_bits(a) || has_math_bits(b) || (c && has_math_bits(*c))) {
    const bool use_c = c != nullptr && !(beta.isComplex() ? beta.toComplexDouble() == 0.0
                                         : beta.isIntegral(false) ? beta.toLong() == 0 : beta.toDouble() == 0.0);
    gemm_values_into(out, a, b, use_c ? c : nullptr, alpha, beta);
    return;
  }
  Device& d = ocl_device(out);
  const bool use_c = c != nullptr && !(beta.isIntegral(false) ? beta.toLong() == 0 : beta.toDouble() == 0.0);
  if (!use_c) c = nullptr;
  auto overlaps = [&](const at::Tensor& x) {
    // get_overlap_status answers TooHard for any non-dense view; different storages
    // never overlap.
    if (x.numel() == 0 || !out.storage().is_alias_of(x.storage())) return false;
    at::MemOverlapStatus s = at::get_overlap_status(out, x);
    return s != at::MemOverlapStatus::No;
  };
  if (overlaps(a) || overlaps(b) || (c && !same_view(*c, out) && overlaps(*c))) {
    at::Tensor tmp = at::empty(out.sizes(), out.options());
    gemm_into(tmp, a, b, c, alpha, beta);
    copy_on_device(out, tmp);
    return;
  }
  const int64_t M = out.size(1), N = out.size(2), K = a.size(2);
  if (choose_impl(out.scalar_type(), M, N) == Impl::CLBlast && K > 0)
    run_clblast(d, out, a, b, c, alpha, beta);
  else
    run_own(d, out, a, b, c, alpha, beta);
}

// ---- argument checks shared by the ops (messages follow the CPU's) ---------------------------

void check_same_device(const at::Tensor& out, std::initializer_list<const at::Tensor*> ts, const char* op) {
  for (const at::Tensor* t : ts)
    TORCH_CHECK(t->device() == out.device(), op, ": expected all tensors to be on the same device, but found ",
                t->device(), " and ", out.device());
}

// An out= of the product's dtype whose elements are distinct memory (an expanded out raises the
// CPU's "more than one element of the written-to tensor refers to a single memory location").
void check_out(const at::Tensor& out, at::ScalarType t) {
  TORCH_CHECK(out.scalar_type() == t, "Expected out tensor to have dtype ", t, ", but got ", out.scalar_type(),
              " instead");
  at::assert_no_internal_overlap(out);
}

void check_int_scalars(at::ScalarType t, const at::Scalar& beta, const at::Scalar& alpha) {
  if (at::isIntegralType(t, true)) {
    TORCH_CHECK(!beta.isFloatingPoint(), "For integral input tensors, argument beta must not be a floating point number.");
    TORCH_CHECK(!alpha.isFloatingPoint(), "For integral input tensors, argument alpha must not be a floating point number.");
  }
}

void check_mm_args(const at::Tensor& m1, const at::Tensor& m2, const char* op) {
  TORCH_CHECK(m1.dim() == 2, "self must be a matrix");
  TORCH_CHECK(m2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x", m1.size(1),
              " and ", m2.size(0), "x", m2.size(1), ")");
  TORCH_CHECK(m1.scalar_type() == m2.scalar_type(), "expected mat1 and mat2 to have the same dtype, but got: ",
              m1.scalar_type(), " != ", m2.scalar_type());
  check_gemm_dtype(ocl_device(m1), m1.scalar_type(), op);
}

void check_bmm_args(const at::Tensor& b1, const at::Tensor& b2) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.size(0) == b2.size(0), "batch1 and batch2 must have same number of batches, got ", b1.size(0),
              " and ", b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), "Expected size for first two dimensions of batch2 tensor to be: [",
              b1.size(0), ", ", b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  TORCH_CHECK(b1.scalar_type() == b2.scalar_type(), "expected scalar type ", b1.scalar_type(),
              " but found ", b2.scalar_type());
  check_gemm_dtype(ocl_device(b1), b1.scalar_type(), "bmm");
}

// self expanded to `shape` as the C term (RuntimeError like the CPU when it cannot be).
at::Tensor expand_bias(const at::Tensor& self, at::IntArrayRef shape, const char* op) {
  TORCH_CHECK(at::is_expandable_to(self.sizes(), shape), op, ": the size of self ", self.sizes(),
              " is not broadcastable to the output size ", shape);
  return self.expand(shape);
}

}  // namespace

// mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& mm_out_ocl(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_mm_args(self, mat2, "mm");
  check_same_device(out, {&self, &mat2}, "mm");
  check_out(out, self.scalar_type());
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  gemm_into(out.unsqueeze(0), self.unsqueeze(0), mat2.unsqueeze(0), nullptr, 1, 0);
  return out;
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& addmm_out_ocl(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  check_mm_args(mat1, mat2, "addmm");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type(), "self and mat2 must have the same dtype, but got ",
              self.scalar_type(), " and ", mat1.scalar_type());
  check_same_device(out, {&self, &mat1, &mat2}, "addmm");
  check_out(out, mat1.scalar_type());
  check_int_scalars(mat1.scalar_type(), beta, alpha);
  const std::vector<int64_t> shape{mat1.size(0), mat2.size(1)};
  at::Tensor c = expand_bias(self, shape, "addmm");
  if (!same_view(c, out)) {
    // resize_output may reallocate out; keep `c` pointing at the caller's self.
    at::native::resize_output(out, shape);
  }
  at::Tensor c3 = c.unsqueeze(0);
  gemm_into(out.unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), &c3, alpha, beta);
  return out;
}

// bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& bmm_out_ocl(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_bmm_args(self, mat2);
  check_same_device(out, {&self, &mat2}, "bmm");
  check_out(out, self.scalar_type());
  at::native::resize_output(out, {self.size(0), self.size(1), mat2.size(2)});
  gemm_into(out, self, mat2, nullptr, 1, 0);
  return out;
}

// baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& baddbmm_out_ocl(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                            const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_bmm_args(batch1, batch2);
  TORCH_CHECK(self.scalar_type() == batch1.scalar_type(), "Input dtypes must be the same, got: input ",
              self.scalar_type(), ", batch1: ", batch1.scalar_type(), ", batch2: ", batch2.scalar_type());
  check_same_device(out, {&self, &batch1, &batch2}, "baddbmm");
  check_out(out, batch1.scalar_type());
  check_int_scalars(batch1.scalar_type(), beta, alpha);
  const std::vector<int64_t> shape{batch1.size(0), batch1.size(1), batch2.size(2)};
  at::Tensor c = expand_bias(self, shape, "baddbmm");
  if (!same_view(c, out)) at::native::resize_output(out, shape);
  gemm_into(out, batch1, batch2, &c, alpha, beta);
  return out;
}

// addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& addmv_out_ocl(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                          const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK((mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1),
              "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.numel(), "), mat (", mat.size(0), "x", mat.size(1), "), vec (",
              vec.size(0), ")");
  TORCH_CHECK(mat.scalar_type() == vec.scalar_type() && self.scalar_type() == mat.scalar_type(),
              "expected scalar type ", mat.scalar_type(), " but found ",
              vec.scalar_type() != mat.scalar_type() ? vec.scalar_type() : self.scalar_type());
  check_gemm_dtype(ocl_device(mat), mat.scalar_type(), "addmv");
  check_same_device(out, {&self, &mat, &vec}, "addmv");
  check_out(out, mat.scalar_type());
  check_int_scalars(mat.scalar_type(), beta, alpha);
  const int64_t M = mat.size(0);
  at::Tensor c = self.dim() == 0 ? self.reshape({1}).expand({M}) : self.expand({M});
  if (!same_view(c, out)) at::native::resize_output(out, {M});
  at::Tensor c3 = c.unsqueeze(1).unsqueeze(0);
  gemm_into(out.unsqueeze(1).unsqueeze(0), mat.unsqueeze(0), vec.unsqueeze(1).unsqueeze(0), &c3, alpha, beta);
  return out;
}

// dot(Tensor self, Tensor tensor) -> Tensor
at::Tensor dot_ocl(const at::Tensor& self, const at::Tensor& tensor) {
  TORCH_CHECK(self.dim() == 1 && tensor.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == tensor.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", tensor.scalar_type());
  TORCH_CHECK(self.numel() == tensor.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", tensor.numel(), "] to have the same number of elements, but got ", self.numel(),
              " and ", tensor.numel(), " elements respectively");
  TORCH_CHECK(self.device() == tensor.device(), "expected all tensors to be on the same device");
  check_gemm_dtype(ocl_device(self), self.scalar_type(), "dot");
  at::Tensor out = at::empty({}, self.options());
  gemm_into(out.view({1, 1, 1}), self.unsqueeze(0).unsqueeze(0), tensor.unsqueeze(1).unsqueeze(0), nullptr, 1, 0);
  return out;
}

// vdot(Tensor self, Tensor other) -> Tensor  (real dtypes only: no conjugation needed)
at::Tensor vdot_ocl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "Expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  return dot_ocl(self, other);
}

// addr.out(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
at::Tensor& addr_out_ocl(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                         const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(vec1.dim() == 1 && vec2.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(),
              "-D");
  TORCH_CHECK(vec1.scalar_type() == vec2.scalar_type() && self.scalar_type() == vec1.scalar_type(),
              "expected scalar type ", vec1.scalar_type(), " but found ",
              vec2.scalar_type() != vec1.scalar_type() ? vec2.scalar_type() : self.scalar_type());
  check_gemm_dtype(ocl_device(vec1), vec1.scalar_type(), "addr");
  check_same_device(out, {&self, &vec1, &vec2}, "addr");
  check_out(out, vec1.scalar_type());
  check_int_scalars(vec1.scalar_type(), beta, alpha);
  const std::vector<int64_t> shape{vec1.size(0), vec2.size(0)};
  at::Tensor c = expand_bias(self, shape, "addr");
  if (!same_view(c, out)) at::native::resize_output(out, shape);
  at::Tensor c3 = c.unsqueeze(0);
  gemm_into(out.unsqueeze(0), vec1.unsqueeze(1).unsqueeze(0), vec2.unsqueeze(0).unsqueeze(0), &c3, alpha, beta);
  return out;
}

// _addmm_activation.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False, Tensor(a!) out) -> Tensor(a!)
// addmm, then relu or (exact, as the CPU's) gelu in place: the feed-forward of the encoder
// layer's inference fast path (ops/transformer.cpp).
at::Tensor& addmm_activation_out_ocl(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                                     const at::Scalar& beta, const at::Scalar& alpha, bool use_gelu, at::Tensor& out) {
  addmm_out_ocl(self, mat1, mat2, beta, alpha, out);
  if (use_gelu)
    at::gelu_(out);
  else
    at::relu_(out);
  return out;
}

std::string gemm_config_for(int device, at::ScalarType t, int64_t B, int64_t M, int64_t N) {
  Device& d = get_device(device);
  const ShapeClass shape = shape_class(d, B, M, N);
  return std::string(shape == ShapeClass::Large ? "large: " : "small: ") + config_string(gemm_config(d, t, shape)->cfg);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // mm/addmm/bmm/baddbmm/addmv are structured: the functional and in-place forms call .out.
  // The four products take complex operands and lazy conjugate/negative bits (gemm_into).
  m.impl("mm.out", mm_out_ocl);
  m.impl("addmm.out", addmm_out_ocl);
  OCL_IMPL(m, "_addmm_activation.out", addmm_activation_out_ocl);
  m.impl("bmm.out", bmm_out_ocl);
  m.impl("baddbmm.out", baddbmm_out_ocl);
  OCL_IMPL(m, "addmv.out", addmv_out_ocl);
  // dot and vdot have only backend kernels; dot.out/vdot.out are composites over them.
  OCL_IMPL(m, "dot", dot_ocl);
  OCL_IMPL(m, "vdot", vdot_ocl);
  // addr's functional/in-place forms are composites calling addr.out.
  OCL_IMPL(m, "addr.out", addr_out_ocl);
}

}  // namespace torch_ocl
