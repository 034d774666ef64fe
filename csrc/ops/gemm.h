// What csrc/ops/gemm.cpp exposes besides its ATen registrations (for the Python bindings).
#pragma once
#include <c10/core/ScalarType.h>
#include <cstdint>
#include <string>

namespace torch_ocl {

// "<small|large>: KERNEL=... TILE_M=..." — the shape class and configuration a B x M x N
// product of dtype t would use on ocl:device now (defaults, tuning file, env override).
std::string gemm_config_for(int device, at::ScalarType t, int64_t B, int64_t M, int64_t N);

}  // namespace torch_ocl
