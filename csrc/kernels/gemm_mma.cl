// float32 matrix products on tensor cores (ops/gemm.cpp runs them when PyTorch's float32
// matmul precision is "high" or "medium", i.e. TF32 is allowed, as cuBLAS does on CUDA):
// out = alpha * A@B + beta * C with the operands, strides, flags and NDRange of gemm.cl's
// gemm_tiled_fwd (unit-stride, 4-aligned rows or columns; the host checks with tiled_flags).
//
// Each warp owns a WARP_M x WARP_N block of the work-group's TILE_M x TILE_N tile and computes
// it as (WARP_M/16) x (WARP_N/8) m16n8k8 products per 8-deep k step (mma.clh). PASSES 1: the
// operands are rounded to tf32 once, when they are staged, and each product is one TF32 mma
// (float32 accumulation); PASSES 3: the 3xTF32 split of mma.clh, near float32 accuracy.
//
// Local tiles: an operand that is k-contiguous in memory is staged row-major ([rows][TILE_K +
// 4]), one that is contiguous along its rows k-major ([TILE_K][rows + 8]); either way the
// global loads are 16-byte vectors stored whole, and the fragment reads of a warp (lanes
// (g, t) read row g, depth t: row-major g * (TILE_K + 4) + t, k-major t * (rows + 8) + g) hit
// 32 distinct banks. Two buffers: the next step's vectors are loaded into registers while the
// current step computes (one barrier per step, as gemm_tiled_fwd). Rows past the matrix are
// clamped (their results are never stored), depth past K reads as zero.
//
// The layouts are compile-time constants: four kernels gemm_mma_<A><B>, each letter k
// (k-contiguous) or r (row-contiguous; for B the rows are its columns n).
//
// MMA 1: NVIDIA PTX (mma.clh). MMA 2, for tests on devices without tensor cores: each lane
// computes the four elements of its C fragments by float FMAs straight from the local tiles
// (no fragments, hence no barriers: mma.clh's emulation, built for the attention kernels,
// puts two in every product, which makes PoCL's build of this program take minutes). It
// runs everything but the fragment loads: staging, tf32 rounding, the C fragment layout, the
// epilogue.
#include "common.clh"
#include "mma.clh"

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef PASSES
#define PASSES 1
#endif

#define NTHREADS (32 * WARPS_M * WARPS_N)
#define WARP_M (TILE_M / WARPS_M)
#define WARP_N (TILE_N / WARPS_N)
#define FM (WARP_M / 16)  // m16 blocks per warp
#define FN (WARP_N / 8)   // n8 blocks per warp
#define LDK (TILE_K + 4)  // row length of a row-major (k-contiguous) tile
#define LDA_R (TILE_M + 8)
#define LDB_R (TILE_N + 8)
// Floats of one buffer of each operand's tile (the larger of its two layouts).
#define A_TILE (TILE_M * LDK > TILE_K * LDA_R ? TILE_M * LDK : TILE_K * LDA_R)
#define B_TILE (TILE_N * LDK > TILE_K * LDB_R ? TILE_N * LDK : TILE_K * LDB_R)
#define A_VECS (TILE_M * TILE_K / (4 * NTHREADS))  // 4-vectors of A each work-item loads per step
#define B_VECS (TILE_N * TILE_K / (4 * NTHREADS))

#if PASSES != 1 && PASSES != 3
#error "PASSES must be 1 (TF32) or 3 (3xTF32)"
#endif
#if WARP_M % 16 || WARP_N % 8 || TILE_K % 16 || A_VECS * 4 * NTHREADS != TILE_M * TILE_K || \
    B_VECS * 4 * NTHREADS != TILE_N * TILE_K || A_VECS < 1 || B_VECS < 1
#error "gemm_mma needs warp blocks of 16x8 multiples, TILE_K a multiple of 16 and whole 4-vectors per work-item"
#endif

#if MMA != 1 && MMA != 2
#error "MMA must be 1 (NVIDIA PTX) or 2 (emulation)"
#endif
#if PASSES == 1
#define STAGE_VALUE(x) round_tf32(x)
#define FRAG(x) ((uint2)(as_uint(x), 0u))
#define MMA_FN mma1
#else
#define STAGE_VALUE(x) (x)
#define FRAG(x) split_tf32(x)
#define MMA_FN mma3
#endif

// Global -> registers: gemm_stage.clh (as gemm_tiled_fwd). Registers -> local tile, rounded to
// tf32 for PASSES 1: a k-contiguous operand's vector v_ is row rr0 + v_*KC_RSTEP of the row-major
// tile, a row-contiguous one's depth kk0 + v_*RC_KSTEP of the k-major tile, so both go whole to
// loc0 + v_ * (a constant), loc0 the place of (rr0, kk0).
#include "gemm_stage.clh"
inline void stage_store(__local float* tile, const int loc0, const bool kc, const int rows, const int ld, const int nv,
                        const float4* reg) {
  _Pragma("unroll") for (int v = 0; v < nv; ++v) {
    const float4 x = (float4)(STAGE_VALUE(reg[v].s0), STAGE_VALUE(reg[v].s1), STAGE_VALUE(reg[v].s2),
                              STAGE_VALUE(reg[v].s3));
    *(__local float4*)(tile + loc0 + v * (kc ? KC_RSTEP * LDK : RC_KSTEP(rows) * ld)) = x;
  }
}

// Element (r, k) of a tile: row-major for a k-contiguous operand, k-major otherwise.
#define TILE_AT(tile, kc, ld, r, k) ((tile)[(kc) ? (r) * LDK + (k) : (k) * (ld) + (r)])

inline void gemm_mma_body(const bool a_kc, const bool b_kc, int M, int N, int K, __global const float* A, long a_sm,
                          long a_sk, __global const float* B, long b_sk, long b_sn, __global const float* C,
                          long c_sm, long c_sn, __global float* O, long o_sm, long o_sn, int use_c, int flags,
                          float alpha, float beta, __local float* As, __local float* Bs) {
  const int tid = get_local_id(0), lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int wm = (warp / WARPS_N) * WARP_M, wn = (warp % WARPS_N) * WARP_N;
  const int m0 = get_group_id(1) * TILE_M, n0 = get_group_id(0) * TILE_N;

  __global const float* a_ptr[A_VECS];
  __global const float* b_ptr[B_VECS];
  int a_rr0, a_kk0, b_rr0, b_kk0;
  VEC_STAGE_SETUP(TILE_M, A_VECS, A, a_kc, a_sm, a_sk, m0, M, tid, a_ptr, a_rr0, a_kk0);
  VEC_STAGE_SETUP(TILE_N, B_VECS, B, b_kc, b_sn, b_sk, n0, N, tid, b_ptr, b_rr0, b_kk0);
  const int a_loc0 = a_kc ? a_rr0 * LDK + a_kk0 : a_kk0 * LDA_R + a_rr0;
  const int b_loc0 = b_kc ? b_rr0 * LDK + b_kk0 : b_kk0 * LDB_R + b_rr0;
  const long a_adv = TILE_K * (a_kc ? 1 : a_sk), b_adv = TILE_K * (b_kc ? 1 : b_sk);

  float acc[FM][FN][4];
  _Pragma("unroll") for (int i = 0; i < FM; ++i)
    _Pragma("unroll") for (int j = 0; j < FN; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

  const int steps = (K + TILE_K - 1) / TILE_K;
  float4 ra[A_VECS], rb[B_VECS];
  VEC_STAGE_LOAD(float4, TILE_M, A_VECS, a_kc, a_ptr, a_kk0, 0, K, TILE_K <= K, ra);
  VEC_STAGE_LOAD(float4, TILE_N, B_VECS, b_kc, b_ptr, b_kk0, 0, K, TILE_K <= K, rb);
  stage_store(As, a_loc0, a_kc, TILE_M, LDA_R, A_VECS, ra);
  stage_store(Bs, b_loc0, b_kc, TILE_N, LDB_R, B_VECS, rb);
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    const bool more = s + 1 < steps;
    if (more) {  // the next step's loads are in flight while this one computes
      const int k1 = (s + 1) * TILE_K;
      VEC_STAGE_ADVANCE(A_VECS, a_ptr, a_adv);
      VEC_STAGE_ADVANCE(B_VECS, b_ptr, b_adv);
      VEC_STAGE_LOAD(float4, TILE_M, A_VECS, a_kc, a_ptr, a_kk0, k1, K, k1 + TILE_K <= K, ra);
      VEC_STAGE_LOAD(float4, TILE_N, B_VECS, b_kc, b_ptr, b_kk0, k1, K, k1 + TILE_K <= K, rb);
    }
    __local const float* at = As + cur * A_TILE;
    __local const float* bt = Bs + cur * B_TILE;
    _Pragma("unroll") for (int k8 = 0; k8 < TILE_K; k8 += 8) {
#if MMA == 1
      uint2 af[FM][4], bf[FN][2];
      _Pragma("unroll") for (int i = 0; i < FM; ++i) {
        const int r = wm + 16 * i + g;
        af[i][0] = FRAG(TILE_AT(at, a_kc, LDA_R, r, k8 + t));
        af[i][1] = FRAG(TILE_AT(at, a_kc, LDA_R, r + 8, k8 + t));
        af[i][2] = FRAG(TILE_AT(at, a_kc, LDA_R, r, k8 + t + 4));
        af[i][3] = FRAG(TILE_AT(at, a_kc, LDA_R, r + 8, k8 + t + 4));
      }
      _Pragma("unroll") for (int j = 0; j < FN; ++j) {
        const int n = wn + 8 * j + g;
        bf[j][0] = FRAG(TILE_AT(bt, b_kc, LDB_R, n, k8 + t));
        bf[j][1] = FRAG(TILE_AT(bt, b_kc, LDB_R, n, k8 + t + 4));
      }
      _Pragma("unroll") for (int i = 0; i < FM; ++i)
        _Pragma("unroll") for (int j = 0; j < FN; ++j) MMA_FN(acc[i][j], af[i], bf[j]);
#else
      _Pragma("unroll") for (int i = 0; i < FM; ++i)
        _Pragma("unroll") for (int j = 0; j < FN; ++j)
          _Pragma("unroll") for (int e = 0; e < 4; ++e) {
            const int r = wm + 16 * i + g + 8 * (e / 2), n = wn + 8 * j + 2 * t + e % 2;
            float x = acc[i][j][e];
            for (int k = 0; k < 8; ++k)
              x = fma(TILE_AT(at, a_kc, LDA_R, r, k8 + k), TILE_AT(bt, b_kc, LDB_R, n, k8 + k), x);
            acc[i][j][e] = x;
          }
#endif
    }
    if (more) {  // the other buffer was last read before the previous barrier
      stage_store(As + (cur ^ 1) * A_TILE, a_loc0, a_kc, TILE_M, LDA_R, A_VECS, ra);
      stage_store(Bs + (cur ^ 1) * B_TILE, b_loc0, b_kc, TILE_N, LDB_R, B_VECS, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Epilogue: acc[i][j] holds rows m, m + 8 (m = m0 + wm + 16i + g) at columns n, n + 1
  // (n = n0 + wn + 8j + 2t); pairs go out as float2 where out's (and C's) rows allow.
  const bool o_vec = flags & 4, c_vec = flags & 8;
  _Pragma("unroll") for (int i = 0; i < FM; ++i)
    _Pragma("unroll") for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm + 16 * i + g + 8 * h;
      if (m >= M) continue;
      _Pragma("unroll") for (int j = 0; j < FN; ++j) {
        const int n = n0 + wn + 8 * j + 2 * t;
        float2 v = (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]) * alpha;
        if (o_vec && n + 1 < N) {
          if (use_c)
            v += beta * (c_vec ? *(__global const float2*)(C + m * c_sm + n)
                               : (float2)(C[m * c_sm + n * c_sn], C[m * c_sm + (n + 1) * c_sn]));
          *(__global float2*)(O + m * o_sm + n) = v;
        } else {
          _Pragma("unroll") for (int e = 0; e < 2; ++e)
            if (n + e < N) {
              float x = e ? v.s1 : v.s0;
              if (use_c) x += beta * C[m * c_sm + (n + e) * c_sn];
              O[m * o_sm + (n + e) * o_sn] = x;
            }
        }
      }
    }
}

// flags as gemm_tiled_fwd's: 1 A k-contiguous, 2 B k-contiguous (each kernel is for one pair),
// 4 out rows unit-stride and 4-aligned, 8 the same for C.
// NDRange: (ceil(N/TILE_N) * NTHREADS, ceil(M/TILE_M), batch), local (NTHREADS, 1, 1).
#define GEMM_MMA_KERNEL(name, a_kc, b_kc)                                                                        \
  __kernel __attribute__((reqd_work_group_size(NTHREADS, 1, 1))) void name(                                      \
      int M, int N, int K, PTR_ARG(float, a), long a_sb, long a_sm, long a_sk, PTR_ARG(float, b), long b_sb,      \
      long b_sk, long b_sn, PTR_ARG(float, c), long c_sb, long c_sm, long c_sn, PTR_ARG(float, out), long o_sb,   \
      long o_sm, long o_sn, int use_c, int flags, float alpha, float beta) {                                     \
    __local float4 As4[2 * A_TILE / 4];                                                                          \
    __local float4 Bs4[2 * B_TILE / 4];                                                                          \
    const long batch = get_global_id(2);                                                                         \
    gemm_mma_body(a_kc, b_kc, M, N, K, PTR(float, a) + batch * a_sb, a_sm, a_sk, PTR(float, b) + batch * b_sb,   \
                  b_sk, b_sn, use_c ? PTR(float, c) + batch * c_sb : 0, c_sm, c_sn,                              \
                  PTR(float, out) + batch * o_sb, o_sm, o_sn, use_c, flags, alpha, beta, (__local float*)As4,    \
                  (__local float*)Bs4);                                                                          \
  }
GEMM_MMA_KERNEL(gemm_mma_rr, false, false)
GEMM_MMA_KERNEL(gemm_mma_kr, true, false)
GEMM_MMA_KERNEL(gemm_mma_rk, false, true)
GEMM_MMA_KERNEL(gemm_mma_kk, true, true)
