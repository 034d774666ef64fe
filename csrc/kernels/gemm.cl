// Matrix products for csrc/ops/gemm.cpp: a tiled, register-blocked GEMM with a fused
// out = alpha * A@B + beta * C epilogue (C may broadcast: a bias is C with row stride 0), and
// a matrix-vector kernel for the M==1 / N==1 cases. Every operand is addressed through
// runtime (batch, row, column) strides, so transposed and strided views need no copies and
// one program per (dtype, tile config) serves every layout and shape. gemm_tiled_fwd is the
// GPU fast path for unit-stride aligned float/double operands; gemm_direct_fwd serves CPUs.
#include "common.clh"

// ---- element type plumbing --------------------------------------------------------------
// DTYPE is the storage type; ACC the type products are accumulated in (float for
// float16/bfloat16, which are stored as 16-bit words: no cl_khr_fp16 needed).
#ifndef DTYPE
#define DTYPE float
#endif
#ifndef ACC
#define ACC float
#endif

#if defined(IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(IS_BF16)
#define LOAD(p, i) bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = float_to_bf16(v))
#else
#define LOAD(p, i) ((ACC)((p)[i]))
#define STORE(p, i, v) ((p)[i] = (DTYPE)(v))
#endif

#if defined(IS_INT)
#define MAD(a, b, c) ((a) * (b) + (c))
#else
#define MAD(a, b, c) fma((a), (b), (c))
#endif

// ---- tunables (gemm.cpp picks them per device/dtype/shape class; see gemm_config) --------
#ifndef TILE_M
#define TILE_M 64  // rows of C computed by one work-group
#endif
#ifndef TILE_N
#define TILE_N 64  // columns of C computed by one work-group
#endif
#ifndef TILE_K
#define TILE_K 16  // depth of the A/B tiles staged in local memory per step
#endif
#ifndef WPT_M
#define WPT_M 4  // rows of the micro-tile each work-item accumulates in registers
#endif
#ifndef WPT_N
#define WPT_N 4  // columns of the micro-tile each work-item accumulates in registers
#endif
#ifndef VEC_WIDTH
#define VEC_WIDTH 4  // elements per global load along an operand's unit-stride dimension
#endif
#ifndef GEMV_WG
#define GEMV_WG 128  // work-items reducing one output of the matrix-vector kernel
#endif

#define RTS_M (TILE_M / WPT_M)  // work-group size along M
#define RTS_N (TILE_N / WPT_N)  // work-group size along N
#define NTHREADS (RTS_M * RTS_N)
#define PAD 1                   // local-memory row padding: breaks bank conflicts on stores

#if (TILE_M * TILE_K) % (NTHREADS * VEC_WIDTH) != 0 || (TILE_N * TILE_K) % (NTHREADS * VEC_WIDTH) != 0
#error "each work-item must load a whole number of vectors of each tile"
#endif
#if TILE_K % VEC_WIDTH != 0 || TILE_M % VEC_WIDTH != 0 || TILE_N % VEC_WIDTH != 0
#error "tile sizes must be multiples of VEC_WIDTH"
#endif

// Vector loads of VEC_WIDTH consecutive elements (vloadN only needs element alignment).
#if VEC_WIDTH > 1
#define ACCV CAT(ACC, VEC_WIDTH)
#if defined(IS_HALF)
#define VLOAD(p) CAT(vload_half, VEC_WIDTH)(0, (p))
#elif defined(IS_BF16)
#define VLOAD(p) CAT(CAT(as_float, VEC_WIDTH), _)(CAT(vload, VEC_WIDTH)(0, (p)))
#define as_float4_(u) as_float4(convert_uint4(u) << 16)
#define as_float2_(u) as_float2(convert_uint2(u) << 16)
#define as_float8_(u) as_float8(convert_uint8(u) << 16)
#else
#define VLOAD(p) CAT(convert_, ACCV)(CAT(vload, VEC_WIDTH)(0, (p)))
#endif
#endif

// Stages rows [r0, r0+ROWS) x depth [k0, k0+TILE_K) of an operand into local memory as
// tile[k][r]. The operand element (r, k) lives at p[r*sr + k*sk]; `kcontig` says sk == 1
// (then consecutive work-items read consecutive k, else consecutive r), so the global reads
// of a work-group are coalesced along whichever dimension is contiguous. Out-of-range
// elements are zero, which makes edge tiles exact.
#define STAGE_TILE(ROWS, tile, p, sr, sk, r0, k0, nrows, K, kcontig, tid)                              \
  do {                                                                                                 \
    if (kcontig) {                                                                                     \
      for (int v = tid; v < (ROWS) * TILE_K / VEC_WIDTH; v += NTHREADS) {                              \
        const int kk = (v % (TILE_K / VEC_WIDTH)) * VEC_WIDTH, rr = v / (TILE_K / VEC_WIDTH);          \
        const int r = (r0) + rr, k = (k0) + kk;                                                        \
        STAGE_VEC(tile, p, (long)r * (sr) + k, r < (nrows), k, K, kk, rr, 1, 0);                       \
      }                                                                                                \
    } else {                                                                                           \
      for (int v = tid; v < (ROWS) * TILE_K / VEC_WIDTH; v += NTHREADS) {                              \
        const int rr = (v % ((ROWS) / VEC_WIDTH)) * VEC_WIDTH, kk = v / ((ROWS) / VEC_WIDTH);          \
        const int r = (r0) + rr, k = (k0) + kk;                                                        \
        STAGE_VEC(tile, p, (long)k * (sk) + r, k < (K), r, nrows, kk, rr, 0, 1);                       \
      }                                                                                                \
    }                                                                                                  \
  } while (0)

// One vector of VEC_WIDTH elements along the contiguous dimension (index `c`, limit `climit`)
// starting at p[idx], written to tile[kk + j*dk][rr + j*dr]. Falls back to scalar loads
// (with bounds checks) at the matrix edge or when the unit-stride assumption is only
// nominal (the strided path passes through the same code with a stride of one).
#if VEC_WIDTH > 1
#define STAGE_VEC(tile, p, idx, in_range, c, climit, kk, rr, dk, dr)                                   \
  do {                                                                                                 \
    if ((in_range) && (c) + VEC_WIDTH <= (climit)) {                                                   \
      ACCV x = VLOAD((p) + (idx));                                                                     \
      ACC xs[VEC_WIDTH];                                                                               \
      CAT(unpack, VEC_WIDTH)(x, xs);                                                                 \
      for (int j = 0; j < VEC_WIDTH; ++j) tile[(kk) + j * (dk)][(rr) + j * (dr)] = xs[j];              \
    } else {                                                                                           \
      for (int j = 0; j < VEC_WIDTH; ++j)                                                              \
        tile[(kk) + j * (dk)][(rr) + j * (dr)] =                                                       \
            ((in_range) && (c) + j < (climit)) ? LOAD((p), (idx) + j) : (ACC)0;                        \
    }                                                                                                  \
  } while (0)
#define unpack2(x, a) (a[0] = x.s0, a[1] = x.s1)
#define unpack4(x, a) (a[0] = x.s0, a[1] = x.s1, a[2] = x.s2, a[3] = x.s3)
#define unpack8(x, a) \
  (a[0] = x.s0, a[1] = x.s1, a[2] = x.s2, a[3] = x.s3, a[4] = x.s4, a[5] = x.s5, a[6] = x.s6, a[7] = x.s7)
#else
#define STAGE_VEC(tile, p, idx, in_range, c, climit, kk, rr, dk, dr) \
  (tile[kk][rr] = ((in_range) && (c) < (climit)) ? LOAD((p), (idx)) : (ACC)0)
#endif

// The operands every matrix-matrix kernel takes after (M, N, K): A [B,M,K], B [B,K,N], C and
// out [B,M,N], each as buffer + offset and (batch, row, column) strides in elements.
#define GEMM_OPERANDS                                    \
  PTR_ARG(DTYPE, a), long a_sb, long a_sm, long a_sk,     \
      PTR_ARG(DTYPE, b), long b_sb, long b_sk, long b_sn, \
      PTR_ARG(DTYPE, c), long c_sb, long c_sm, long c_sn, \
      PTR_ARG(DTYPE, out), long o_sb, long o_sm, long o_sn

// out[b] = alpha * A[b] @ B[b] + beta * C[b]   (the C term only when use_c != 0)
// A is M x K, B is K x N, C and out are M x N, each with (batch, row, col) strides.
// NDRange: (ceil(N/TILE_N)*RTS_N, ceil(M/TILE_M)*RTS_M, batch), local (RTS_N, RTS_M, 1).
// A fully-strided operand takes the "not k-contiguous" path with its real strides, so any
// view is accepted; the fast, vectorized path is for unit-stride rows or columns.
__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void gemm_fwd(int M, int N, int K,
              GEMM_OPERANDS,
              int use_c, ACC alpha, ACC beta) {
  __local ACC As[TILE_K][TILE_M + PAD];
  __local ACC Bs[TILE_K][TILE_N + PAD];

  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * RTS_N + tx;
  const int m0 = get_group_id(1) * TILE_M, n0 = get_group_id(0) * TILE_N;
  const long batch = get_global_id(2);

  __global const DTYPE* A = PTR(DTYPE, a) + batch * a_sb;
  __global const DTYPE* B = PTR(DTYPE, b) + batch * b_sb;
  // The vector path reads along the unit-stride dimension; an operand with neither stride
  // equal to one is read element by element through its strides (VEC_WIDTH 1 semantics).
  const bool a_kc = (a_sk == 1), b_nc = (b_sn == 1);
  const bool a_vec = a_kc || a_sm == 1, b_vec = b_nc || b_sk == 1;

  ACC acc[WPT_M][WPT_N];
#pragma unroll
  for (int i = 0; i < WPT_M; ++i)
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) acc[i][j] = (ACC)0;

  for (int k0 = 0; k0 < K; k0 += TILE_K) {
    if (a_vec) {
      STAGE_TILE(TILE_M, As, A, a_sm, a_sk, m0, k0, M, K, a_kc, tid);
    } else {
      for (int e = tid; e < TILE_M * TILE_K; e += NTHREADS) {
        const int rr = e % TILE_M, kk = e / TILE_M, r = m0 + rr, k = k0 + kk;
        As[kk][rr] = (r < M && k < K) ? LOAD(A, (long)r * a_sm + (long)k * a_sk) : (ACC)0;
      }
    }
    // B's "rows" are its columns n (stride b_sn) and its depth is k (stride b_sk).
    if (b_vec) {
      STAGE_TILE(TILE_N, Bs, B, b_sn, b_sk, n0, k0, N, K, !b_nc, tid);
    } else {
      for (int e = tid; e < TILE_N * TILE_K; e += NTHREADS) {
        const int rr = e % TILE_N, kk = e / TILE_N, r = n0 + rr, k = k0 + kk;
        Bs[kk][rr] = (r < N && k < K) ? LOAD(B, (long)r * b_sn + (long)k * b_sk) : (ACC)0;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#pragma unroll
    for (int k = 0; k < TILE_K; ++k) {
      ACC ar[WPT_M], br[WPT_N];
#pragma unroll
      for (int i = 0; i < WPT_M; ++i) ar[i] = As[k][ty + i * RTS_M];
#pragma unroll
      for (int j = 0; j < WPT_N; ++j) br[j] = Bs[k][tx + j * RTS_N];
#pragma unroll
      for (int i = 0; i < WPT_M; ++i)
#pragma unroll
        for (int j = 0; j < WPT_N; ++j) acc[i][j] = MAD(ar[i], br[j], acc[i][j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Epilogue: consecutive work-items own consecutive columns, so row-major stores coalesce.
  __global DTYPE* O = PTR(DTYPE, out) + batch * o_sb;
  __global const DTYPE* C = use_c ? PTR(DTYPE, c) + batch * c_sb : 0;
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) {
    const int m = m0 + ty + i * RTS_M;
    if (m >= M) break;
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) {
      const int n = n0 + tx + j * RTS_N;
      if (n < N) {
        ACC v = alpha * acc[i][j];
        if (use_c) v += beta * LOAD(C, (long)m * c_sm + (long)n * c_sn);
        STORE(O, (long)m * o_sm + (long)n * o_sn, v);
      }
    }
  }
}

// ---- gemm_tiled_fwd: the GPU fast path for float/double with unit-stride operands ---------
// Same product as gemm_fwd for operands whose rows or columns are unit-stride and 4-element
// aligned (the host checks). These things make it faster on GPUs than gemm_fwd:
//  * global loads are 4-wide vectors along the contiguous dimension, issued for the next
//    K-tile before the current tile is computed (the loads are in flight during the FMAs);
//  * the K loop carries one pointer per vector, advanced by a constant, and only a partial
//    last K-tile checks bounds, so a step spends few instructions besides its FMAs and local
//    reads (H200, GPTMini large's products with 128x128 tiles: 39.5 -> 33.9 ms per step);
//  * two local buffers (DOUBLE_BUFFER): the prefetched tile is stored into the idle buffer,
//    so each K step needs one barrier, not two;
//  * a work-item's WPT_M x WPT_N micro-tile is made of 4x4 blocks strided by 4*RTS: its
//    local-memory reads are 4-wide vectors, and the vectors the work-items of a warp read
//    are consecutive (conflict-free) or identical (broadcast).
// A and B tiles are stored k-major ([TILE_K][TILE_M+4], [TILE_K][TILE_N+4]); the +4 keeps
// rows 16-byte aligned and spreads the transposing stores of a k-contiguous operand over
// banks. Out-of-range rows/columns are clamped (their results are never stored) and
// out-of-range k reads as zero, so no edge needs a separate code path. ASYNC_STAGES replaces
// the register staging by cp.async copies on NVIDIA (see there; measured slower on an H200,
// kept as a tunable).
// SLICE_K > 1 (gemm_tiled_sliced_fwd, the program gemm.cpp builds for products of at most one
// work-group per compute unit): the work-group is SLICE_K groups of RTS_M x RTS_N work-items,
// each with its own local tiles, walking its own contiguous share of the K steps; at the end
// the slices' accumulators meet in local memory and slice 0 adds them (in slice order) and
// stores. A product with few tiles is bound by the latency of its chain of K steps, not by
// arithmetic: this shortens the chain SLICE_K times and puts SLICE_K times as many warps on
// each compute unit.
#if !defined(IS_HALF) && !defined(IS_BF16) && !defined(IS_INT) && !defined(NO_TILED_KERNEL)
#ifndef DOUBLE_BUFFER
#define DOUBLE_BUFFER 1  // 1: two local tiles, one barrier per K step; 0: one tile, two barriers
#endif
#ifndef ASYNC_STAGES
#define ASYNC_STAGES 0  // >= 2: a ring of this many local tiles filled by cp.async (see below)
#endif
#ifndef SLICE_K
#define SLICE_K 1  // work-item groups of a work-group that split the K steps among them
#endif
#if SLICE_K > 1 && ASYNC_STAGES
#error "SLICE_K > 1 is for the register-staged pipeline, not ASYNC_STAGES"
#endif
#define V4 CAT(DTYPE, 4)
#if ASYNC_STAGES
#define NBUF ASYNC_STAGES
#else
#define NBUF (DOUBLE_BUFFER ? 2 : 1)
#endif
#define LDA_L (TILE_M + 4)                             // local row length of the A tile
#define LDB_L (TILE_N + 4)                             // local row length of the B tile
#define A_VECS (TILE_M * TILE_K / (4 * NTHREADS))      // 4-vectors of A each work-item loads per K step
#define B_VECS (TILE_N * TILE_K / (4 * NTHREADS))      // 4-vectors of B each work-item loads per K step
#if WPT_M % 4 != 0 || WPT_N % 4 != 0 || TILE_K % 4 != 0 || A_VECS * 4 * NTHREADS != TILE_M * TILE_K || \
    B_VECS * 4 * NTHREADS != TILE_N * TILE_K || A_VECS < 1 || B_VECS < 1
#error "gemm_tiled_fwd needs WPT_M, WPT_N, TILE_K multiples of 4 and whole 4-vectors of each tile per work-item"
#endif

// Global -> registers: gemm_stage.clh. Both layouts are stored k-major: a work-item's first
// vector goes to loc0 = depth * LD + row (VEC_STAGE_SETUP gives its depth and row).
#include "gemm_stage.clh"
#define TILED_SETUP(ROWS, LD, NV, p, kc, sr, sk, r0, nrows, ptr, kk0, loc0)   \
  do {                                                                        \
    int rr0_;                                                                 \
    VEC_STAGE_SETUP(ROWS, NV, p, kc, sr, sk, r0, nrows, tid, ptr, rr0_, kk0); \
    loc0 = (kk0) * (LD) + rr0_;                                               \
  } while (0)

// Registers -> local tile: a k-contiguous vector is transposed into 4 rows of the tile.
#define TILED_STORE(ROWS, NV, tile, LD, kc, loc0, reg)                                           \
  do {                                                                                           \
    if (kc) {                                                                                    \
      _Pragma("unroll") for (int v_ = 0; v_ < NV; ++v_) {                                        \
        __local DTYPE* d_ = (tile) + (loc0) + v_ * KC_RSTEP;                                     \
        d_[0] = reg[v_].s0, d_[LD] = reg[v_].s1, d_[2 * (LD)] = reg[v_].s2, d_[3 * (LD)] = reg[v_].s3; \
      }                                                                                          \
    } else {                                                                                     \
      _Pragma("unroll") for (int v_ = 0; v_ < NV; ++v_)                                          \
        *(__local V4*)((tile) + (loc0) + v_ * RC_KSTEP(ROWS) * (LD)) = reg[v_];                  \
    }                                                                                            \
  } while (0)

// ASYNC_STAGES (NVIDIA sm_80 or later, float32; the host checks): tiles travel from global to
// local memory by PTX cp.async, which holds no registers while the data is in flight, so the
// loads of ASYNC_STAGES - 1 K steps are outstanding while one step computes. An operand
// that is contiguous along its rows (r) is copied in 16-byte vectors straight into the
// k-major tile; a k-contiguous one element by element (4-byte copies), which transposes it on
// the way: a warp's 32 copies are 4 rows x 8 consecutive k (whole 32-byte sectors), landing in
// 32 distinct banks (tile row length = 4 mod 32 words). A copy with a source size of 0 reads
// nothing and zero-fills its destination: that is how k >= K (and a k-contiguous operand's rows
// beyond the matrix) become zeros; row-contiguous vectors are clamped as in TILED_SETUP.
#if ASYNC_STAGES
// (Whole element copies of each tile per work-item follow from the whole 4-vectors checked above.)
#if ASYNC_STAGES < 2 || TILE_K % 8 != 0
#error "ASYNC_STAGES needs at least 2 stages and TILE_K a multiple of 8"
#endif
// __local pointers are offsets in the shared window, the address form cp.async takes.
inline void cp_async16(__local DTYPE* dst, __global const DTYPE* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((uint)(ulong)dst), "l"((ulong)src),
               "r"(src_bytes) : "memory");
}
inline void cp_async4(__local DTYPE* dst, __global const DTYPE* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"((uint)(ulong)dst), "l"((ulong)src),
               "r"(src_bytes) : "memory");
}
#define CP_ASYNC_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_ASYNC_WAIT_(n) asm volatile("cp.async.wait_group " #n ";" ::: "memory")
#define CP_ASYNC_WAIT(n) CP_ASYNC_WAIT_(n)

// Issues this work-item's copies of rows [r0, r0+ROWS) x depth [k0, k0+TILE_K) of an operand
// (element (r, k) at p[r*sr + k*sk]; kc: sk == 1, else sr == 1) into the k-major `tile`.
#define ASYNC_TILE(ROWS, LD, tile, p, kc, sr, sk, r0, nrows, k0, K)                                    \
  do {                                                                                                 \
    if (kc) {                                                                                          \
      _Pragma("unroll") for (int j_ = 0; j_ < (ROWS) * TILE_K / NTHREADS; ++j_) {                      \
        const int e = tid + j_ * NTHREADS, q = e / 32;                                                 \
        const int kk = e % 8 + 8 * (q % (TILE_K / 8)), rr = (e / 8) % 4 + 4 * (q / (TILE_K / 8));      \
        const int r = (r0) + rr, k = (k0) + kk;                                                        \
        const bool in = r < (nrows) && k < (K);                                                        \
        cp_async4((tile) + kk * (LD) + rr, (p) + (in ? (long)r * (sr) + k : 0), in ? 4 : 0);           \
      }                                                                                                \
    } else {                                                                                           \
      _Pragma("unroll") for (int v_ = 0; v_ < (ROWS) * TILE_K / (4 * NTHREADS); ++v_) {                \
        const int v = tid + v_ * NTHREADS;                                                             \
        const int rr = (v % ((ROWS) / 4)) * 4, kk = v / ((ROWS) / 4), k = (k0) + kk;                   \
        const bool in = k < (K);                                                                       \
        cp_async16((tile) + kk * (LD) + rr, (p) + (in ? min((r0) + rr, (nrows) - 4) + (long)k * (sk) : 0), \
                   in ? 16 : 0);                                                                       \
      }                                                                                                \
    }                                                                                                  \
  } while (0)
#endif

// flags: 1 A is k-contiguous (else m-contiguous); 2 B is k-contiguous (else n-contiguous);
// 4 out rows are unit-stride and 4-aligned (vector stores); 8 the same for C (vector loads).
// NDRange and arguments as gemm_fwd.
// SLICE_K > 1: local size (RTS_N, RTS_M * SLICE_K, 1), global size along 1 likewise times SLICE_K.
#if SLICE_K > 1 && (SLICE_K - 1) * TILE_M * TILE_N > SLICE_K * NBUF * TILE_K * (LDA_L + LDB_L)
#error "SLICE_K: the slices' accumulators must fit in their local tiles"
#endif
#if SLICE_K > 1
#define TILED_KERNEL gemm_tiled_sliced_fwd
#else
#define TILED_KERNEL gemm_tiled_fwd
#endif
__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M * SLICE_K, 1)))
void TILED_KERNEL(int M, int N, int K,
                  GEMM_OPERANDS,
                  int use_c, int flags, ACC alpha, ACC beta) {
#if SLICE_K > 1
  // One array: the A tiles of every slice, then their B tiles (the reduction reuses it whole).
  __local V4 tiles4[SLICE_K * NBUF * TILE_K * (LDA_L + LDB_L) / 4];
  const int tx = get_local_id(0), ty = get_local_id(1) % RTS_M, slice = get_local_id(1) / RTS_M;
  __local DTYPE* As = (__local DTYPE*)tiles4 + slice * (NBUF * TILE_K * LDA_L);
  __local DTYPE* Bs = (__local DTYPE*)tiles4 + SLICE_K * (NBUF * TILE_K * LDA_L) + slice * (NBUF * TILE_K * LDB_L);
#else
  __local V4 As4[NBUF * TILE_K * LDA_L / 4];
  __local V4 Bs4[NBUF * TILE_K * LDB_L / 4];
  __local DTYPE* As = (__local DTYPE*)As4;
  __local DTYPE* Bs = (__local DTYPE*)Bs4;
  const int tx = get_local_id(0), ty = get_local_id(1);
#endif
  const int tid = ty * RTS_N + tx;
  const int m0 = get_group_id(1) * TILE_M, n0 = get_group_id(0) * TILE_N;
  const long batch = get_global_id(2);
  __global const DTYPE* A = PTR(DTYPE, a) + batch * a_sb;
  __global const DTYPE* B = PTR(DTYPE, b) + batch * b_sb;
  const bool a_kc = flags & 1, b_kc = flags & 2;

  ACC acc[WPT_M][WPT_N];
#pragma unroll
  for (int i = 0; i < WPT_M; ++i)
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) acc[i][j] = (ACC)0;
#if SLICE_K > 1
  // This slice's steps: [k_base, k_base + steps * TILE_K). Every slice runs the same number
  // of steps (the barriers are the whole work-group's); steps past K load zeros.
  const int steps = ((K + TILE_K - 1) / TILE_K + SLICE_K - 1) / SLICE_K;
  const int k_base = slice * steps * TILE_K;
#else
  const int steps = (K + TILE_K - 1) / TILE_K;
  const int k_base = 0;
#endif

// acc += this work-item's share of the product of local tile buffer `cur`: per depth k, its
// WPT_M operands of A and WPT_N of B (TILED_FRAGMENT: 4-wide local reads) and their outer product.
#define TILED_FRAGMENT(k, ar, br)                                                                \
  do {                                                                                           \
    _Pragma("unroll") for (int g = 0; g < WPT_M / 4; ++g) {                                      \
      const V4 x = *(__local const V4*)(al + (k) * LDA_L + g * (4 * RTS_M));                     \
      ar[4 * g] = x.s0, ar[4 * g + 1] = x.s1, ar[4 * g + 2] = x.s2, ar[4 * g + 3] = x.s3;        \
    }                                                                                            \
    _Pragma("unroll") for (int h = 0; h < WPT_N / 4; ++h) {                                      \
      const V4 x = *(__local const V4*)(bl + (k) * LDB_L + h * (4 * RTS_N));                     \
      br[4 * h] = x.s0, br[4 * h + 1] = x.s1, br[4 * h + 2] = x.s2, br[4 * h + 3] = x.s3;        \
    }                                                                                            \
  } while (0)
#define TILED_COMPUTE(cur)                                                                       \
  do {                                                                                           \
    __local const DTYPE* al = As + (cur) * (TILE_K * LDA_L) + ty * 4;                            \
    __local const DTYPE* bl = Bs + (cur) * (TILE_K * LDB_L) + tx * 4;                            \
    _Pragma("unroll") for (int k = 0; k < TILE_K; ++k) {                                         \
      ACC ar[WPT_M], br[WPT_N];                                                                  \
      TILED_FRAGMENT(k, ar, br);                                                                 \
      _Pragma("unroll") for (int i = 0; i < WPT_M; ++i)                                          \
        _Pragma("unroll") for (int j = 0; j < WPT_N; ++j) acc[i][j] = MAD(ar[i], br[j], acc[i][j]); \
    }                                                                                            \
  } while (0)

#if ASYNC_STAGES
  // Ring of ASYNC_STAGES buffers; one commit group per K step (empty ones past the end keep
  // the count uniform). At step t, groups 0..t must have landed: wait until at most
  // ASYNC_STAGES - 2 are pending, then the barrier publishes every work-item's copies and
  // guarantees that buffer (t - 1) % ASYNC_STAGES, refilled next, is no longer being read.
#define ASYNC_STEP(s)                                                                                   \
  do {                                                                                                  \
    const int b_ = (s) % ASYNC_STAGES, k0_ = (s) * TILE_K;                                              \
    ASYNC_TILE(TILE_M, LDA_L, As + b_ * (TILE_K * LDA_L), A, a_kc, a_sm, a_sk, m0, M, k0_, K);           \
    ASYNC_TILE(TILE_N, LDB_L, Bs + b_ * (TILE_K * LDB_L), B, b_kc, b_sn, b_sk, n0, N, k0_, K);           \
  } while (0)
#pragma unroll
  for (int s = 0; s < ASYNC_STAGES - 1; ++s) {
    if (s < steps) ASYNC_STEP(s);
    CP_ASYNC_COMMIT();
  }
  for (int t = 0; t < steps; ++t) {
    CP_ASYNC_WAIT(ASYNC_STAGES - 2);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t + ASYNC_STAGES - 1 < steps) ASYNC_STEP(t + ASYNC_STAGES - 1);
    CP_ASYNC_COMMIT();
    TILED_COMPUTE(t % ASYNC_STAGES);
  }
#else
  __global const DTYPE* a_ptr[A_VECS];
  __global const DTYPE* b_ptr[B_VECS];
  int a_kk0, b_kk0, a_loc0, b_loc0;
  TILED_SETUP(TILE_M, LDA_L, A_VECS, A, a_kc, a_sm, a_sk, m0, M, a_ptr, a_kk0, a_loc0);
  TILED_SETUP(TILE_N, LDB_L, B_VECS, B, b_kc, b_sn, b_sk, n0, N, b_ptr, b_kk0, b_loc0);
  const long a_adv = TILE_K * (a_kc ? 1 : a_sk), b_adv = TILE_K * (b_kc ? 1 : b_sk);
#if SLICE_K > 1
  VEC_STAGE_ADVANCE(A_VECS, a_ptr, a_adv / TILE_K * k_base);
  VEC_STAGE_ADVANCE(B_VECS, b_ptr, b_adv / TILE_K * k_base);
#endif

  V4 ra[A_VECS], rb[B_VECS];
#define TILED_LOAD_STEP(k1, full)                                            \
  do {                                                                       \
    VEC_STAGE_LOAD(V4, TILE_M, A_VECS, a_kc, a_ptr, a_kk0, k1, K, full, ra); \
    VEC_STAGE_LOAD(V4, TILE_N, B_VECS, b_kc, b_ptr, b_kk0, k1, K, full, rb); \
  } while (0)
  if (k_base + TILE_K <= K)
    TILED_LOAD_STEP(k_base, 1);
  else
    TILED_LOAD_STEP(k_base, 0);
  TILED_STORE(TILE_M, A_VECS, As, LDA_L, a_kc, a_loc0, ra);
  TILED_STORE(TILE_N, B_VECS, Bs, LDB_L, b_kc, b_loc0, rb);
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int t = 0; t < steps; ++t) {
    const int cur = DOUBLE_BUFFER ? (t & 1) : 0;
    const bool more = t + 1 < steps;
    if (more) {  // the next step's loads run while this step computes
      const int k1 = k_base + (t + 1) * TILE_K;
      VEC_STAGE_ADVANCE(A_VECS, a_ptr, a_adv);
      VEC_STAGE_ADVANCE(B_VECS, b_ptr, b_adv);
      if (k1 + TILE_K <= K)  // every step but a partial last one: no bounds checks
        TILED_LOAD_STEP(k1, 1);
      else
        TILED_LOAD_STEP(k1, 0);
    }
    TILED_COMPUTE(cur);
#if DOUBLE_BUFFER
    if (more) {  // the other buffer was last read before the previous barrier
      TILED_STORE(TILE_M, A_VECS, As + (cur ^ 1) * (TILE_K * LDA_L), LDA_L, a_kc, a_loc0, ra);
      TILED_STORE(TILE_N, B_VECS, Bs + (cur ^ 1) * (TILE_K * LDB_L), LDB_L, b_kc, b_loc0, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
    if (more) {
      TILED_STORE(TILE_M, A_VECS, As, LDA_L, a_kc, a_loc0, ra);
      TILED_STORE(TILE_N, B_VECS, Bs, LDB_L, b_kc, b_loc0, rb);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
  }
#endif

#if SLICE_K > 1
  // The loop ended on a barrier: the tiles are free. Slices 1.. park their accumulators there
  // (element (i, j) of work-item tid at (i*WPT_N + j)*NTHREADS + tid: consecutive work-items,
  // consecutive words), slice 0 adds them in slice order.
  __local ACC* red = (__local ACC*)tiles4;
  if (slice > 0) {
    __local ACC* r = red + (slice - 1) * (TILE_M * TILE_N) + tid;
#pragma unroll
    for (int i = 0; i < WPT_M; ++i)
#pragma unroll
      for (int j = 0; j < WPT_N; ++j) r[(i * WPT_N + j) * NTHREADS] = acc[i][j];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (slice > 0) return;
  for (int s = 1; s < SLICE_K; ++s) {
    __local const ACC* r = red + (s - 1) * (TILE_M * TILE_N) + tid;
#pragma unroll
    for (int i = 0; i < WPT_M; ++i)
#pragma unroll
      for (int j = 0; j < WPT_N; ++j) acc[i][j] += r[(i * WPT_N + j) * NTHREADS];
  }
#endif

  // Epilogue: row m = m0 + 4*RTS_M*g + 4*ty + i, column n = n0 + 4*RTS_N*h + 4*tx + j.
  __global DTYPE* O = PTR(DTYPE, out) + batch * o_sb;
  __global const DTYPE* C = use_c ? PTR(DTYPE, c) + batch * c_sb : 0;
  const bool o_vec = flags & 4, c_vec = flags & 8;
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) {
    const int m = m0 + (i / 4) * (4 * RTS_M) + ty * 4 + (i % 4);
    if (m >= M) continue;
#pragma unroll
    for (int h = 0; h < WPT_N / 4; ++h) {
      const int n = n0 + h * (4 * RTS_N) + tx * 4;
      V4 v = (V4)(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]) * alpha;
      if (o_vec && n + 3 < N) {
        if (use_c) {
          if (c_vec)
            v += beta * *(__global const V4*)(C + (long)m * c_sm + n);
          else
            v += beta * (V4)(C[(long)m * c_sm + (long)n * c_sn], C[(long)m * c_sm + (long)(n + 1) * c_sn],
                             C[(long)m * c_sm + (long)(n + 2) * c_sn], C[(long)m * c_sm + (long)(n + 3) * c_sn]);
        }
        *(__global V4*)(O + (long)m * o_sm + n) = v;
      } else {
        ACC vs[4] = {v.s0, v.s1, v.s2, v.s3};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (n + j < N) {
            ACC x = vs[j];
            if (use_c) x += beta * C[(long)m * c_sm + (long)(n + j) * c_sn];
            O[(long)m * o_sm + (long)(n + j) * o_sn] = x;
          }
        }
      }
    }
  }
}
#endif

// PACK_B of gemm.cpp: dst[b][k][n] = src[b*s_sb + n*s_sn + k] for a k-contiguous operand,
// into a dense [batch][K][N] workspace. 32x32 tiles pass through local memory so that the
// reads (along k) and the writes (along n) are both coalesced; the +1 column keeps the
// transposed local reads free of bank conflicts. Elements are copied as stored.
// NDRange (ceil(K/32)*32, ceil(N/32)*8, batch), local (32, 8, 1). Part of the tiled programs
// that can read the workspace (PACK_KERNEL: gemm.cpp's has_pack_kernel).
#ifdef PACK_KERNEL
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void gemm_pack_kn(int K, int N, PTR_ARG(DTYPE, src), long s_sb, long s_sn, PTR_ARG(DTYPE, dst)) {
  __local DTYPE tile[32][33];
  const int k0 = get_group_id(0) * 32, n0 = get_group_id(1) * 32;
  const int tx = get_local_id(0), ty = get_local_id(1);
  const long batch = get_global_id(2);
  __global const DTYPE* S = PTR(DTYPE, src) + batch * s_sb;
  __global DTYPE* D = PTR(DTYPE, dst) + batch * (long)K * N;
  for (int j = ty; j < 32; j += 8) {
    const int n = n0 + j, k = k0 + tx;
    if (n < N && k < K) tile[j][tx] = S[(long)n * s_sn + k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = ty; j < 32; j += 8) {
    const int k = k0 + j, n = n0 + tx;
    if (k < K && n < N) D[(long)k * N + n] = tile[tx][j];
  }
}
#endif

#ifdef PANEL_KERNELS
// gemm_direct_fwd's packed operands (gemm.cpp, CPU devices): rows [0, R) x depth [0, K) of
// an operand whose element (r, k) is at src[b*s_b + r*s_r + k*s_k], copied into panels of W
// rows (W = WPT_M for A, WPT_N for B), each k-major: dst[b][p][k][j] = element (p*W + j, k),
// zero for rows r >= R. A work-item's micro-tile then reads one contiguous stream per
// operand: no cache sets shared by the rows of a power-of-two stride, no edge columns. One
// work-item copies one panel, along whichever side is contiguous (few, long work-items: a CPU
// device pays per work-group). NDRange (panels, batch), local (1, 1).
// The copies' own loops stay scalar (loop vectorization would turn the strided side into gathers).
#ifdef __clang__
#define NO_VECTORIZE _Pragma("clang loop vectorize(disable)")
#else
#define NO_VECTORIZE
#endif
#define PANEL_ROW_VEC(W) ((W) == 2 || (W) == 4 || (W) == 8 || (W) == 16)
#if PANEL_ROW_VEC(WPT_M)
#define PANEL_ROW_M(d, s) CAT(vstore, WPT_M)(CAT(vload, WPT_M)(0, (s)), 0, (d))
#else
#define PANEL_ROW_M(d, s) for (int j = 0; j < WPT_M; ++j) (d)[j] = (s)[j]
#endif
#if PANEL_ROW_VEC(WPT_N)
#define PANEL_ROW_N(d, s) CAT(vstore, WPT_N)(CAT(vload, WPT_N)(0, (s)), 0, (d))
#else
#define PANEL_ROW_N(d, s) for (int j = 0; j < WPT_N; ++j) (d)[j] = (s)[j]
#endif
#define PACK_PANELS(NAME, W, ROW)                                                                 \
  __kernel void NAME(int R, int K, int panels, PTR_ARG(DTYPE, src), long s_b, long s_r, long s_k, \
                     PTR_ARG(DTYPE, dst)) {                                                       \
    const int p = get_global_id(0), rows = min(W, R - p * (W));                                   \
    const long batch = get_global_id(1);                                                          \
    __global const DTYPE* S = PTR(DTYPE, src) + batch * s_b + (long)p * (W) * s_r;                \
    __global DTYPE* D = PTR(DTYPE, dst) + (batch * panels + p) * (long)K * (W);                   \
    if (rows == (W) && s_r == 1) {                                                                \
      NO_VECTORIZE for (int k = 0; k < K; ++k)                                                    \
        ROW(D + (long)k * (W), S + (long)k * s_k);                                                \
    } else if (rows == (W) && s_k == 1) {                                                         \
      for (int j = 0; j < (W); ++j)                                                               \
        NO_VECTORIZE for (int k = 0; k < K; ++k)                                                  \
          D[(long)k * (W) + j] = S[(long)j * s_r + k];                                            \
    } else {                                                                                      \
      for (int k = 0; k < K; ++k)                                                                 \
        NO_VECTORIZE for (int j = 0; j < (W); ++j)                                                \
          D[(long)k * (W) + j] = j < rows ? S[(long)j * s_r + (long)k * s_k] : (DTYPE)0;          \
    }                                                                                             \
  }
PACK_PANELS(gemm_pack_panels_m, WPT_M, PANEL_ROW_M)
PACK_PANELS(gemm_pack_panels_n, WPT_N, PANEL_ROW_N)
#endif

// The same product for CPU OpenCL devices (PoCL and the like), where local-memory tiles and
// barriers cost more than they save and a work-group runs as a loop over its work-items on
// one core. Each work-item computes WPT_M consecutive rows by WPT_N consecutive columns
// straight from global memory (the caches do the staging). Where B's rows are unit-stride
// and the work-item's columns are whole, its K loop is the register-blocked form of a CPU
// BLAS micro-kernel in explicit vectors: per k, WPT_N / VEC_WIDTH vector loads of B's row k,
// then one scalar of A per row broadcast into as many vector multiply-adds. (The K loop keeps
// the compiler from vectorizing across work-items, so without explicit vectors it would run
// scalar: PoCL, 2-core AVX-512 VM, GPTMini small8's products 11-17 GFLOP/s before.) Other
// layouts and the right edge take the scalar loop, with clamped (always in-range) loads;
// out-of-range results are simply not stored. gemm.cpp's pack_direct_operands packs B (and a strided
// A) into panels first (`packed`), which the vector loop reads as contiguous streams; whole
// rows of unit-stride output vectors are stored as vectors.
// NDRange (ceil(N/TILE_N)*RTS_N, ceil(M/TILE_M)*RTS_M, batch), local (RTS_N, RTS_M, 1).
#if VEC_WIDTH > 1 && WPT_N % VEC_WIDTH == 0
#define DIRECT_VECTORS (WPT_N / VEC_WIDTH)
#else
#define DIRECT_VECTORS 0
#endif
// Vector stores of the accumulators where storage and accumulator types agree.
#if DIRECT_VECTORS && !defined(IS_HALF) && !defined(IS_BF16) && !defined(IS_INT)
#define DIRECT_VECTOR_STORES 1
#else
#define DIRECT_VECTOR_STORES 0
#endif
__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void gemm_direct_fwd(int M, int N, int K,
                     GEMM_OPERANDS,
                     int use_c, int packed, ACC alpha, ACC beta) {
  const int m0 = get_group_id(1) * TILE_M + get_local_id(1) * WPT_M;
  const int n0 = get_group_id(0) * TILE_N + get_local_id(0) * WPT_N;
  if (m0 >= M || n0 >= N) return;  // no barriers below
  const long batch = get_global_id(2);
  __global const DTYPE* A = PTR(DTYPE, a) + batch * a_sb;
  __global const DTYPE* B = PTR(DTYPE, b) + batch * b_sb;
  // packed & 1: A is in gemm_pack_panels' WPT_M-row panels, packed & 2: B in WPT_N-column
  // panels (a_sb / b_sb step over a batch's panels). The micro-tile then starts a panel
  // (m0, n0 are multiples of WPT_M, WPT_N), whose rows are k-major and zero past the edge.
  long a_k = a_sk, b_k = b_sk, b_n = b_sn;
  if (packed & 1) A += (long)(m0 / WPT_M) * K * WPT_M, a_k = WPT_M;
  if (packed & 2) B += (long)(n0 / WPT_N) * K * WPT_N - n0, b_k = WPT_N, b_n = 1;
  long arow[WPT_M];
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) arow[i] = packed & 1 ? i : (long)min(m0 + i, M - 1) * a_sm;
  ACC acc[WPT_M][WPT_N];
#if DIRECT_VECTORS
  if (b_n == 1 && (n0 + WPT_N <= N || (packed & 2))) {
    ACCV vacc[WPT_M][DIRECT_VECTORS];
#pragma unroll
    for (int i = 0; i < WPT_M; ++i)
#pragma unroll
      for (int v = 0; v < DIRECT_VECTORS; ++v) vacc[i][v] = (ACCV)0;
    __global const DTYPE* brow = B + n0;
    for (int k = 0; k < K; ++k, brow += b_k) {
      ACCV bv[DIRECT_VECTORS];
#pragma unroll
      for (int v = 0; v < DIRECT_VECTORS; ++v) bv[v] = VLOAD(brow + v * VEC_WIDTH);
#pragma unroll
      for (int i = 0; i < WPT_M; ++i) {
        const ACCV x = (ACCV)(LOAD(A, arow[i] + (long)k * a_k));
#pragma unroll
        for (int v = 0; v < DIRECT_VECTORS; ++v) vacc[i][v] = MAD(x, bv[v], vacc[i][v]);
      }
    }
#if DIRECT_VECTOR_STORES
    // Whole rows of unit-stride vectors: the epilogue in vectors too.
    if (o_sn == 1 && n0 + WPT_N <= N && (!use_c || c_sn == 1)) {
      __global DTYPE* O = PTR(DTYPE, out) + batch * o_sb + n0;
      __global const DTYPE* C = PTR(DTYPE, c) + batch * c_sb + n0;
#pragma unroll
      for (int i = 0; i < WPT_M; ++i) {
        const int m = m0 + i;
        if (m >= M) break;
#pragma unroll
        for (int v = 0; v < DIRECT_VECTORS; ++v) {
          ACCV r = alpha * vacc[i][v];
          if (use_c) r += beta * VLOAD(C + (long)m * c_sm + v * VEC_WIDTH);
          CAT(vstore, VEC_WIDTH)(r, 0, O + (long)m * o_sm + v * VEC_WIDTH);
        }
      }
      return;
    }
#endif
#pragma unroll
    for (int i = 0; i < WPT_M; ++i)
#pragma unroll
      for (int v = 0; v < DIRECT_VECTORS; ++v) CAT(unpack, VEC_WIDTH)(vacc[i][v], (acc[i] + v * VEC_WIDTH));
  } else
#endif
  {
    long bcol[WPT_N];
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) bcol[j] = (long)min(n0 + j, N - 1) * b_n;
#pragma unroll
    for (int i = 0; i < WPT_M; ++i)
#pragma unroll
      for (int j = 0; j < WPT_N; ++j) acc[i][j] = (ACC)0;
    for (int k = 0; k < K; ++k) {
      ACC ar[WPT_M], br[WPT_N];
#pragma unroll
      for (int i = 0; i < WPT_M; ++i) ar[i] = LOAD(A, arow[i] + (long)k * a_k);
#pragma unroll
      for (int j = 0; j < WPT_N; ++j) br[j] = LOAD(B, bcol[j] + (long)k * b_k);
#pragma unroll
      for (int i = 0; i < WPT_M; ++i)
#pragma unroll
        for (int j = 0; j < WPT_N; ++j) acc[i][j] = MAD(ar[i], br[j], acc[i][j]);
    }
  }
  __global DTYPE* O = PTR(DTYPE, out) + batch * o_sb;
  __global const DTYPE* C = use_c ? PTR(DTYPE, c) + batch * c_sb : 0;
#pragma unroll
  for (int i = 0; i < WPT_M; ++i) {
    const int m = m0 + i;
    if (m >= M) break;
#pragma unroll
    for (int j = 0; j < WPT_N; ++j) {
      const int n = n0 + j;
      if (n < N) {
        ACC v = alpha * acc[i][j];
        if (use_c) v += beta * LOAD(C, (long)m * c_sm + (long)n * c_sn);
        STORE(O, (long)m * o_sm + (long)n * o_sn, v);
      }
    }
  }
}

// out[b, m] = alpha * sum_k A[b, m, k] * x[b, k] + beta * C[b, m]
// One work-group of GEMV_WG work-items per output element (m = group 0, batch = group 1):
// they stride over k (coalesced when A's k-stride is 1) and combine in a local tree.
__kernel __attribute__((reqd_work_group_size(GEMV_WG, 1, 1)))
void gemv_rows_fwd(int M, int K,
                   PTR_ARG(DTYPE, a), long a_sb, long a_sm, long a_sk,
                   PTR_ARG(DTYPE, x), long x_sb, long x_sk,
                   PTR_ARG(DTYPE, c), long c_sb, long c_sm,
                   PTR_ARG(DTYPE, out), long o_sb, long o_sm,
                   int use_c, ACC alpha, ACC beta) {
  __local ACC part[GEMV_WG];
  const int lid = get_local_id(0), m = get_group_id(0);
  const long batch = get_group_id(1);
  __global const DTYPE* A = PTR(DTYPE, a) + batch * a_sb + (long)m * a_sm;
  __global const DTYPE* X = PTR(DTYPE, x) + batch * x_sb;
  ACC s = (ACC)0;
  for (int k = lid; k < K; k += GEMV_WG) s = MAD(LOAD(A, (long)k * a_sk), LOAD(X, (long)k * x_sk), s);
  part[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = GEMV_WG / 2; w > 0; w >>= 1) {
    if (lid < w) part[lid] += part[lid + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    ACC v = alpha * part[0];
    if (use_c) v += beta * LOAD(PTR(DTYPE, c) + batch * c_sb, (long)m * c_sm);
    STORE(PTR(DTYPE, out) + batch * o_sb, (long)m * o_sm, v);
  }
}

// Same product, one work-item per output element looping over k: coalesced when A's
// m-stride is 1 (a column-major matrix, e.g. x @ W with x a single row).
__kernel void gemv_cols_fwd(int M, int K,
                            PTR_ARG(DTYPE, a), long a_sb, long a_sm, long a_sk,
                            PTR_ARG(DTYPE, x), long x_sb, long x_sk,
                            PTR_ARG(DTYPE, c), long c_sb, long c_sm,
                            PTR_ARG(DTYPE, out), long o_sb, long o_sm,
                            int use_c, ACC alpha, ACC beta) {
  const int m = get_global_id(0);
  const long batch = get_global_id(1);
  if (m >= M) return;
  __global const DTYPE* A = PTR(DTYPE, a) + batch * a_sb + m * a_sm;
  __global const DTYPE* X = PTR(DTYPE, x) + batch * x_sb;
  ACC s = (ACC)0;
  for (int k = 0; k < K; ++k) s = MAD(LOAD(A, (long)k * a_sk), LOAD(X, (long)k * x_sk), s);
  ACC v = alpha * s;
  if (use_c) v += beta * LOAD(PTR(DTYPE, c) + batch * c_sb, (long)m * c_sm);
  STORE(PTR(DTYPE, out) + batch * o_sb, (long)m * o_sm, v);
}

// Split-K epilogue (gemm.cpp's run_split_k): out = alpha * sum_s ws[s] + beta * C, where
// ws [S, M, N] holds the partial products of S slices of the K dimension (contiguous, in
// the accumulator type). Summed in slice order: deterministic.
__kernel void gemm_splitk_reduce(int S, int M, int N, PTR_ARG(ACC, ws),
                                 PTR_ARG(DTYPE, c), long c_sm, long c_sn,
                                 PTR_ARG(DTYPE, out), long o_sm, long o_sn,
                                 int use_c, ACC alpha, ACC beta) {
  const int n = get_global_id(0), m = get_global_id(1);
  if (m >= M || n >= N) return;
  __global const ACC* W = PTR(ACC, ws) + (long)m * N + n;
  const long slice = (long)M * N;
  ACC sum = (ACC)0;
  for (int s = 0; s < S; ++s) sum += W[s * slice];
  ACC v = alpha * sum;
  if (use_c) v += beta * LOAD(PTR(DTYPE, c), (long)m * c_sm + (long)n * c_sn);
  STORE(PTR(DTYPE, out), (long)m * o_sm + (long)n * o_sn, v);
}
