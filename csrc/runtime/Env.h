// Every TORCH_OCL_* environment variable is read here, once, so the README table and the
// code cannot drift apart. Values are read at first use and cached for the process.
#pragma once
#include <cstdint>
#include <string>

namespace torch_ocl::env {

// TORCH_OCL_DEVICES: comma-separated filters on platform/vendor/device name or type.
const std::string& devices_filter();
// TORCH_OCL_SYNC=1: clFinish after every launch so errors point at the launch.
bool sync_launches();
// TORCH_OCL_PROFILE=1: time every kernel on the device (torch.ocl._kernel_times()).
bool profile_kernels();
// TORCH_OCL_ASYNC_LAUNCH=0|1: launches from a per-device submission thread ("" or another
// value: the device type decides; runtime/Submit.h).
const std::string& async_launch();
// TORCH_OCL_FALLBACK=warn|error|silent: what the CPU fallback does.
const std::string& fallback_mode();
// TORCH_OCL_KERNEL_DIR: read .cl sources from this folder instead of the embedded copies.
const std::string& kernel_dir();
// TORCH_OCL_CACHE_DIR: on-disk program binary cache; "0" or "off" disables it.
const std::string& cache_dir();
// TORCH_OCL_BUILD_OPTIONS: extra options appended to every clBuildProgram.
const std::string& extra_build_options();
// TORCH_OCL_BUILD_LOG=1: print every program's build log to stderr after building it from
// source (with TORCH_OCL_BUILD_OPTIONS=-cl-nv-verbose, NVIDIA's per-kernel registers and spills).
bool print_build_logs();
// TORCH_OCL_GEMM=auto|clblast|own: which GEMM implementation to use.
const std::string& gemm_impl();
// TORCH_OCL_GEMM_SPLIT_K=auto|off|N: split-K slicing of long-K products (N forces N slices).
// Parsed once; an invalid value raises (at every call) naming the variable.
constexpr int64_t kSplitKAuto = 0, kSplitKOff = -1;
int64_t gemm_split_k();
// TORCH_OCL_ATTN_CONFIG="BLOCK_M=64,BLOCK_N=32,...": attention tile overrides (ops/attention.cpp).
const std::string& attn_config();
// TORCH_OCL_GEMM_CONFIG: "TILE_M=128,TILE_N=128,..." overriding the GEMM configuration.
const std::string& gemm_config();
// TORCH_OCL_TUNING_DIR: folder of the per-device tuning files (default <cache dir>/tuning).
const std::string& tuning_dir();

}  // namespace torch_ocl::env
