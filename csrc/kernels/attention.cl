// Fused scaled-dot-product attention for csrc/ops/attention.cpp, flash-attention style: the
// L x S score matrix only ever exists one tile at a time. The forward keeps an online
// softmax (running max m and sum l per query row) and saves the row logsumexp; the backward
// (FlashAttention-2 structure) recomputes the probabilities from it: one kernel per query
// block for dQ (and the bias gradient), one per key block for dK/dV that also sums over the
// query heads of a GQA group. Both are deterministic (no atomics). The fused backward
// (attention_bwd_dkdv_dq) instead adds dQ from the dK/dV pass with float atomic adds
// (FlashAttention-2): 5 matrix products instead of 7, not bitwise reproducible.
//
// Every product is computed like a register-blocked GEMM. A work-group owns a tile of the
// score matrix; each work-item holds an WPT_M x WPT_N micro-tile of it in registers, its rows
// r = ty + a*RM and columns c = tx + b*RN (interleaved, so the work-items of a warp read
// consecutive local rows: no bank conflicts). Operands live in local memory as [row][dim]
// tiles of float4 (row stride HEAD_DIM + 4 scalars), so every local read is a float4 along
// the contraction dimension and serves WPT_M or WPT_N multiply-adds. The second product
// (O += P V, dQ += dS K, dV += P^T dO, dK += dS^T Q) keeps the same rows per work-item and
// splits the head dimension among the work-items of a row in float4 columns tx + g*RN.
//
// Operands are [B, H, rows, dim] with runtime strides; masks broadcast through 0 strides.
// Dropout keeps (b, h, i, j) iff its Philox word (seed, offset, element (b,h,i,j) of the
// virtual [B,Hq,L,S] matrix) maps to a uniform > p, so the backward regenerates the mask.
#include "common.clh"

#ifndef DTYPE
#define DTYPE float  // storage type of q, k, v, mask, out and the gradients
#endif
#ifndef ACC
#define ACC float  // compute type (float for float16/bfloat16 storage)
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64  // head dimension the tiles are sized for (D and Dv at most this; multiple of 4)
#endif
// ---- tunables (attn_config() in attention.cpp picks them per device; TORCH_OCL_ATTN_CONFIG) --
#ifndef BLOCK_M
#define BLOCK_M 64  // forward: query rows per work-group
#endif
#ifndef BLOCK_N
#define BLOCK_N 32  // forward: keys per step of the online softmax
#endif
#ifndef WPT_M
#define WPT_M 4  // forward: query rows of the score micro-tile of one work-item
#endif
#ifndef WPT_N
#define WPT_N 4  // forward: key columns of the score micro-tile of one work-item
#endif
#ifndef BWD_BLOCK_M
#define BWD_BLOCK_M 32  // backward: query rows per tile (the dQ kernel's work-group rows)
#endif
#ifndef BWD_BLOCK_N
#define BWD_BLOCK_N 32  // backward: keys per tile (the dK/dV kernel's work-group keys)
#endif
#ifndef BWD_WPT_M
#define BWD_WPT_M 4  // backward: query rows of the micro-tile of one work-item
#endif
#ifndef BWD_WPT_N
#define BWD_WPT_N 2  // backward: keys of the micro-tile of one work-item
#endif
#ifndef PREFETCH
#define PREFETCH 1  // 1: load the next tile into registers during the current tile's math
#endif
#ifndef BWD_PREFETCH
#define BWD_PREFETCH PREFETCH  // the same for the backward kernels (the next Q/dO or K/V tile)
#endif
#ifndef SPLIT_KV
#define SPLIT_KV 0  // forward: 1 gives V its own local tile (one barrier less per key block)
#endif
#ifndef SOFTMAX_EXP
#define SOFTMAX_EXP 0  // 0: exp(); 1: exp2() with log2(e) folded into the score scale; 2: native_exp2() (float; exp2 for double)
#endif
#ifndef ROW_REDUCE
#define ROW_REDUCE 0  // forward row max/sum over the F_RN work-items of a row: 0 local memory, 1 NVIDIA PTX shfl.sync, 2 cl_khr_subgroup_shuffle, 3 shuffle emulated in local memory (tests)
#endif
#ifndef P_PAD
#define P_PAD 4  // row padding of the P/dS tiles (multiple of 4); 8 makes the scalar P/dS stores of 4 rows x 8 lanes conflict-free
#endif
#ifndef ACC_IS_DOUBLE
#define ACC_IS_DOUBLE 0  // 1 when ACC is double (set by the host with -DACC=double)
#endif
#ifndef MMA
#define MMA 0  // 0: the FMA kernels; 1/2: the tensor-core kernels attention_mma_* instead (mma.clh: 1 NVIDIA PTX, 2 emulation)
#endif

#define ACC4 CAT(ACC, 4)

#define D4 (HEAD_DIM / 4)  // float4 columns of a head-dimension row
#define LD4 (D4 + 1)       // local row stride in float4s: consecutive rows start 4 banks apart

#define F_RM (BLOCK_M / WPT_M)  // forward: work-items along the query rows
#define F_RN (BLOCK_N / WPT_N)  // forward: work-items along the keys (they share a row)
#define F_NT (F_RM * F_RN)      // forward work-group size
#define F_DV4 (D4 / F_RN)       // forward: float4 columns of O per work-item
#define F_LP (BLOCK_N + P_PAD)  // forward: row stride of the probability tile

#define B_RQ (BWD_BLOCK_M / BWD_WPT_M)  // backward: work-items along the queries
#define B_RK (BWD_BLOCK_N / BWD_WPT_N)  // backward: work-items along the keys
#define B_NT (B_RQ * B_RK)              // backward work-group size (both kernels)
#define B_DQ4 (D4 / B_RK)               // dQ kernel: float4 columns of dQ per work-item
#define B_DK4 (D4 / B_RQ)               // dK/dV kernel: float4 columns of dK and dV per work-item
#define B_LQ (BWD_BLOCK_N + P_PAD)      // dQ kernel: row stride of the dS tile [query][key]
#define B_LK (BWD_BLOCK_M + P_PAD)      // dK/dV kernel: row stride of the P, dS tiles [key][query]

#if HEAD_DIM % 4 != 0
#error "HEAD_DIM must be a multiple of 4"
#endif
#if P_PAD % 4 != 0 || P_PAD < 0
#error "P_PAD must be a multiple of 4"
#endif
#if BLOCK_M % WPT_M != 0 || BLOCK_N % WPT_N != 0 || BLOCK_N % 4 != 0 || D4 % F_RN != 0
#error "forward tiles: WPT_M | BLOCK_M, WPT_N | BLOCK_N, 4 | BLOCK_N and BLOCK_N/WPT_N | HEAD_DIM/4"
#endif
#if BWD_BLOCK_M % BWD_WPT_M != 0 || BWD_BLOCK_N % BWD_WPT_N != 0 || BWD_BLOCK_M % 4 != 0 || \
    BWD_BLOCK_N % 4 != 0 || D4 % B_RK != 0 || D4 % B_RQ != 0
#error "backward tiles: BWD_WPT_* | BWD_BLOCK_*, 4 | BWD_BLOCK_*, BWD_BLOCK_*/BWD_WPT_* | HEAD_DIM/4"
#endif

#if defined(IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define VLOAD4(p) vload_half4(0, (p))
#define VSTORE4(v, p) vstore_half4_rte((v), 0, (p))
#elif defined(IS_BF16)
#define LOAD(p, i) bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = float_to_bf16(v))
#define VLOAD4(p) as_float4(convert_uint4(vload4(0, (p))) << 16)
#define VSTORE4(v, p) \
  vstore4((ushort4)(float_to_bf16((v).s0), float_to_bf16((v).s1), float_to_bf16((v).s2), float_to_bf16((v).s3)), 0, (p))
#else
#define LOAD(p, i) ((ACC)((p)[i]))
#define STORE(p, i, v) ((p)[i] = (DTYPE)(v))
#define VLOAD4(p) vload4(0, (p))
#define VSTORE4(v, p) vstore4((v), 0, (p))
#endif

#define NEG_INF ((ACC)(-INFINITY))
#define ZERO4 ((ACC4)((ACC)0))

// The softmax exponential. With SOFTMAX_EXP scores are kept in base 2: the score scale (and
// an additive mask) are multiplied by log2(e) once, so every exponential is an exp2 (one
// MUFU.EX2 on NVIDIA, where exp() is a multi-instruction accurate routine). The logsumexp the
// forward saves stays natural-log (the backward converts it).
#if SOFTMAX_EXP == 0
#define EXPF(x) exp(x)
#define LOGF(x) log(x)
#define SM_LOG2E 1
#define SM_LN2 1
#else
#if SOFTMAX_EXP == 2 && !ACC_IS_DOUBLE
#define EXPF(x) native_exp2(x)
#else
#define EXPF(x) exp2(x)
#endif
#define LOGF(x) log2(x)
#if ACC_IS_DOUBLE
#define SM_LOG2E 1.4426950408889634
#define SM_LN2 0.6931471805599453
#else
#define SM_LOG2E 1.4426950408889634f
#define SM_LN2 0.6931471805599453f
#endif
#endif

// Row reductions of the forward across the F_RN work-items that share a row (consecutive
// local ids, tx = lid % F_RN) by butterfly shuffles: no local round trip and no barrier. Every
// lane ends with the same bits (each step combines x_i and x_(i^m) commutatively). Where the
// shape does not allow it (F_RN not a power of two within a warp, a partial warp) or the
// extension is missing, the local-memory reduction stands in.
#if !MMA && ROW_REDUCE == 1 && ((F_RN & (F_RN - 1)) != 0 || F_RN > 32 || F_NT % 32 != 0)
#undef ROW_REDUCE
#define ROW_REDUCE 0
#endif
#if !MMA && ROW_REDUCE != 0 && (F_RN & (F_RN - 1)) != 0
#undef ROW_REDUCE
#define ROW_REDUCE 0
#endif
#include "subgroup.clh"  // ROW_XOR; it also falls back to 0 where mode 2 lacks cl_khr_subgroup_shuffle

// Full unrolling of the per-work-item loops keeps the micro-tiles in registers on GPUs.
// CPU devices (NO_UNROLL, set by the host) vectorize across work-items instead, and there
// the unrolled bodies only multiply compile time.
#ifdef NO_UNROLL
#define UNROLL
#else
#define UNROLL _Pragma("unroll")
#endif

// Four consecutive elements d..d+3 of a row (element stride sd), zero past `dim`.
inline ACC4 load4(__global const DTYPE* p, long sd, int d, int dim) {
  if (sd == 1 && d + 4 <= dim) return VLOAD4(p + d);
  ACC4 x = ZERO4;
  if (d < dim) x.s0 = LOAD(p, (long)d * sd);
  if (d + 1 < dim) x.s1 = LOAD(p, (long)(d + 1) * sd);
  if (d + 2 < dim) x.s2 = LOAD(p, (long)(d + 2) * sd);
  if (d + 3 < dim) x.s3 = LOAD(p, (long)(d + 3) * sd);
  return x;
}

// Elements d..d+3 of a unit-stride row, those below `dim` only.
inline void store4(__global DTYPE* p, int d, int dim, ACC4 v) {
  if (d + 4 <= dim) {
    VSTORE4(v, p + d);
  } else {
    if (d < dim) STORE(p, d, v.s0);
    if (d + 1 < dim) STORE(p, d + 1, v.s1);
    if (d + 2 < dim) STORE(p, d + 2, v.s2);
  }
}

// Rows [r0, r0 + nr) x [0, HEAD_DIM) of a (nrows x dim) matrix with strides (sr, sd) into the
// local tile T[nr][LD4], zero past the matrix (padded dims then add nothing to dot products).
// Consecutive work-items read consecutive float4s of a row (coalesced).
inline void stage_rows(__local ACC4* T, int nr, __global const DTYPE* p, long sr, long sd, int r0, int nrows,
                       int dim, int lid, int nthreads) {
  for (int e = lid; e < nr * D4; e += nthreads) {
    const int rr = e / D4, d4 = e % D4, row = r0 + rr;
    T[rr * LD4 + d4] = row < nrows ? load4(p + (long)row * sr, sd, d4 * 4, dim) : ZERO4;
  }
}

// The same copy split in two, so the global loads can be issued a phase early and their
// latency hidden behind arithmetic: fetch_rows loads this work-item's `per` float4s of the
// tile into registers, store_rows writes them to local memory (after the next barrier).
#define FETCH_PER(nr, nthreads) (((nr) * D4 + (nthreads) - 1) / (nthreads))
inline void fetch_rows(ACC4* buf, int per, int nr, __global const DTYPE* p, long sr, long sd, int r0, int nrows,
                       int dim, int lid, int nthreads) {
UNROLL
  for (int x = 0; x < per; ++x) {
    const int e = lid + x * nthreads, rr = e / D4, d4 = e % D4, row = r0 + rr;
    buf[x] = (e < nr * D4 && row < nrows) ? load4(p + (long)row * sr, sd, d4 * 4, dim) : ZERO4;
  }
}
inline void store_rows(__local ACC4* T, const ACC4* buf, int per, int nr, int lid, int nthreads) {
UNROLL
  for (int x = 0; x < per; ++x) {
    const int e = lid + x * nthreads;
    if (e < nr * D4) T[(e / D4) * LD4 + e % D4] = buf[x];
  }
}

inline ACC dot4(ACC4 x, ACC4 y, ACC s) {
  return fma(x.s3, y.s3, fma(x.s2, y.s2, fma(x.s1, y.s1, fma(x.s0, y.s0, s))));
}

// acc[a][b] = sum_d A[ra + a*RA][d] * B[rb + b*RB][d] for a < NA, b < NB, over the HEAD_DIM
// columns of the local tiles A and B ([rows][LD4]). Per float4 step NA + NB local reads feed
// 4*NA*NB multiply-adds.
#define MICRO_DOT(acc, NA, NB, A, ra, RA, B, rb, RB)                                      \
  do {                                                                                    \
    UNROLL for (int a_ = 0; a_ < (NA); ++a_)                                              \
      UNROLL for (int b_ = 0; b_ < (NB); ++b_) acc[a_][b_] = (ACC)0;                      \
    UNROLL for (int d4_ = 0; d4_ < D4; ++d4_) {                                           \
      ACC4 x_[NA], y_[NB];                                                                \
      UNROLL for (int a_ = 0; a_ < (NA); ++a_) x_[a_] = A[((ra) + a_ * (RA)) * LD4 + d4_]; \
      UNROLL for (int b_ = 0; b_ < (NB); ++b_) y_[b_] = B[((rb) + b_ * (RB)) * LD4 + d4_]; \
      UNROLL for (int a_ = 0; a_ < (NA); ++a_)                                            \
        UNROLL for (int b_ = 0; b_ < (NB); ++b_) acc[a_][b_] = dot4(x_[a_], y_[b_], acc[a_][b_]); \
    }                                                                                     \
  } while (0)

// One key/query u (0..3) of a float4 step of MICRO_ACC.
#define MICRO_ACC_STEP(o, NA, NG, p_, comp, V, vrow, vg, RV)                               \
  UNROLL for (int g_ = 0; g_ < (NG); ++g_) {                                              \
    const ACC4 v_ = V[(vrow) * LD4 + (vg) + g_ * (RV)];                                   \
    UNROLL for (int a_ = 0; a_ < (NA); ++a_) o[a_][g_] = fma((ACC4)(p_[a_].comp), v_, o[a_][g_]); \
  }

// o[a][g] += sum_{c < NC} P[rp + a*RP][c] * V[c][vg + g*RV] for a < NA, g < NG (float4
// columns of V): P is a local [rows][LP/4] tile, V a local [NC][LD4] tile. Per float4 step
// NA + 4*NG local reads feed 16*NA*NG multiply-adds.
#define MICRO_ACC(o, NA, NG, P, LP, rp, RP, V, vg, RV, NC)                                \
  do {                                                                                    \
    UNROLL for (int c4_ = 0; c4_ < (NC) / 4; ++c4_) {                                     \
      ACC4 p_[NA];                                                                        \
      UNROLL for (int a_ = 0; a_ < (NA); ++a_) p_[a_] = P[((rp) + a_ * (RP)) * ((LP) / 4) + c4_]; \
      MICRO_ACC_STEP(o, NA, NG, p_, s0, V, c4_ * 4 + 0, vg, RV)                           \
      MICRO_ACC_STEP(o, NA, NG, p_, s1, V, c4_ * 4 + 1, vg, RV)                           \
      MICRO_ACC_STEP(o, NA, NG, p_, s2, V, c4_ * 4 + 2, vg, RV)                           \
      MICRO_ACC_STEP(o, NA, NG, p_, s3, V, c4_ * 4 + 3, vg, RV)                           \
    }                                                                                     \
  } while (0)

// Uniform in (0, 1] for element idx of the virtual [B, Hq, L, S] dropout matrix.
inline float dropout_uniform(ulong seed, ulong offset, ulong idx) {
  const uint4 w = philox_block(seed, offset, idx >> 2);
  const uint k = (uint)(idx & 3);
  return u32_to_unit(k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w);
}

// The pre-softmax score of (i, j), or -inf where causal/out of range excludes it.
#define SCORE(dotv, i, j)                                                                       \
  ((j) >= S || (i) >= L || (causal && (j) > (i))                                                \
       ? NEG_INF                                                                                \
       : (dotv) * qk_scale + (use_mask ? LOAD(MK, (long)(i) * m_sl + (long)(j) * m_ss) * (ACC)SM_LOG2E : (ACC)0))

// A tile that no bound, causal diagonal or mask touches needs only the scaling (`interior`
// is uniform over the work-group, so the branch costs nothing).
#define TILE_SCORE(interior, dotv, i, j) ((interior) ? (dotv) * qk_scale : SCORE(dotv, i, j))
#define INTERIOR(r0, nr, c0, nc) \
  (!use_mask && (r0) + (nr) <= L && (c0) + (nc) <= S && (!causal || (c0) + (nc) - 1 <= (r0)))

// The common argument list: shapes, q/k/v/mask with (batch, head, row, dim) strides,
// the causal flag, scale and dropout state.
#define ATTN_ARGS                                                                               \
  int L, int S, int D, int Dv, int Hq, int group,                                               \
  PTR_ARG(DTYPE, q), long q_sb, long q_sh, long q_sl, long q_sd,                                \
  PTR_ARG(DTYPE, k), long k_sb, long k_sh, long k_ss, long k_sd,                                \
  PTR_ARG(DTYPE, v), long v_sb, long v_sh, long v_ss, long v_sd,                                \
  PTR_ARG(DTYPE, mask), long m_sb, long m_sh, long m_sl, long m_ss, int use_mask,              \
  int causal, ACC scale, float dropout_p, ulong seed, ulong offset

// Base pointers of this (batch, q head) / kv head, and the score scale (base 2 under SOFTMAX_EXP).
#define ATTN_BASES(b, h)                                                                        \
  const int hk = (h) / group;                                                                   \
  const ACC qk_scale = scale * (ACC)SM_LOG2E;                                                   \
  __global const DTYPE* Q = PTR(DTYPE, q) + (long)(b) * q_sb + (long)(h) * q_sh;                \
  __global const DTYPE* K = PTR(DTYPE, k) + (long)(b) * k_sb + (long)hk * k_sh;                 \
  __global const DTYPE* V = PTR(DTYPE, v) + (long)(b) * v_sb + (long)hk * v_sh;                 \
  __global const DTYPE* MK = use_mask ? PTR(DTYPE, mask) + (long)(b) * m_sb + (long)(h) * m_sh : 0; \
  const ulong drop_base = ((ulong)(b) * Hq + (h)) * (ulong)L * (ulong)S

#if !MMA  // the FMA kernels; a tensor-core program (MMA) holds attention_mma_* and the prep kernel
// out[b,h,i,:] = softmax(scale * q k^T + mask) (dropped out) @ v; lse[b,h,i] = log sum exp.
// NDRange (ceil(L/BLOCK_M)*F_NT, Hq, B); one work-group per BLOCK_M query rows of one (b, h).
// Per key block: stage K; S = Q K^T (micro-tiles); post per-row partial maxima; stage V while
// the new row maxima are formed, P = exp(S - m) goes to local memory; O = O*corr + P V.
__kernel __attribute__((reqd_work_group_size(F_NT, 1, 1)))
void attention_fwd(ATTN_ARGS, PTR_ARG(DTYPE, out), long o_sb, long o_sh, long o_sl,
                   PTR_ARG(ACC, lse)) {
  __local ACC4 Qs[BLOCK_M * LD4];
  __local ACC4 KVs[BLOCK_N * LD4];           // K (and V unless SPLIT_KV) of the current key block
#if SPLIT_KV
  __local ACC4 Vs[BLOCK_N * LD4];
#else
#define Vs KVs
#endif
  __local ACC4 Ps[BLOCK_M * (F_LP / 4)];     // probabilities [row][key]
#if ROW_REDUCE == 0
  __local ACC Red[BLOCK_M * (F_RN + 1)];     // per-row partials of the F_RN work-items of a row
#elif ROW_REDUCE == 3
  __local ACC RowX[F_NT];                    // the emulated shuffle's exchange
#endif
  __local ACC* Pl = (__local ACC*)Ps;

  const int lid = get_local_id(0), tx = lid % F_RN, ty = lid / F_RN;
  const int h = get_group_id(1), b = get_group_id(2);
  // Last query block first: under a causal mask it has the most key blocks to visit.
  const int i0 = (get_num_groups(0) - 1 - get_group_id(0)) * BLOCK_M;
  ATTN_BASES(b, h);

  stage_rows(Qs, BLOCK_M, Q, q_sl, q_sd, i0, L, D, lid, F_NT);
  ACC4 kv[FETCH_PER(BLOCK_N, F_NT)];  // the next K or V block on its way to local memory
#if PREFETCH
  fetch_rows(kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, K, k_ss, k_sd, 0, S, D, lid, F_NT);
#endif
  ACC m[WPT_M], l[WPT_M];  // running max and this work-item's share of the running sum
  ACC4 o[WPT_M][F_DV4];
UNROLL
  for (int a = 0; a < WPT_M; ++a) {
    m[a] = NEG_INF, l[a] = (ACC)0;
UNROLL
    for (int g = 0; g < F_DV4; ++g) o[a][g] = ZERO4;
  }

  const int jend = causal ? min(S, i0 + BLOCK_M) : S;  // later keys are masked for every row
  for (int j0 = 0; j0 < jend; j0 += BLOCK_N) {
    // KVs was last read before the previous block's second barrier. Without SPLIT_KV it
    // also held V, read until the end of the previous block.
#if !SPLIT_KV
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if !PREFETCH
    fetch_rows(kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, K, k_ss, k_sd, j0, S, D, lid, F_NT);
#endif
    store_rows(KVs, kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, lid, F_NT);  // K
    barrier(CLK_LOCAL_MEM_FENCE);  // K complete; the previous block's reads of Vs, Ps, Red are done
#if PREFETCH
    fetch_rows(kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, V, v_ss, v_sd, j0, S, Dv, lid, F_NT);
#endif
    ACC s[WPT_M][WPT_N];
    MICRO_DOT(s, WPT_M, WPT_N, Qs, ty, F_RM, KVs, tx, F_RN);
    const bool interior = INTERIOR(i0, BLOCK_M, j0, BLOCK_N);
    ACC rmax[WPT_M];  // this work-item's part of each row's maximum over the block
UNROLL
    for (int a = 0; a < WPT_M; ++a) {
      const int r = ty + a * F_RM, i = i0 + r;
      rmax[a] = NEG_INF;
UNROLL
      for (int c = 0; c < WPT_N; ++c) {
        const int j = j0 + tx + c * F_RN;
        s[a][c] = TILE_SCORE(interior, s[a][c], i, j);
        rmax[a] = fmax(rmax[a], s[a][c]);
      }
#if ROW_REDUCE == 0
      Red[r * (F_RN + 1) + tx] = rmax[a];
#else
      for (int u = 1; u < F_RN; u <<= 1) rmax[a] = fmax(rmax[a], ROW_XOR(rmax[a], u));
#endif
    }
    // Partial maxima posted; K no longer needed. With shuffled maxima and V in its own tile
    // nothing needs this barrier (V and P were last read before this block's first one).
#if ROW_REDUCE == 0 || !SPLIT_KV
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#if !PREFETCH
    fetch_rows(kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, V, v_ss, v_sd, j0, S, Dv, lid, F_NT);
#endif
    store_rows(Vs, kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, lid, F_NT);
#if PREFETCH
    if (j0 + BLOCK_N < jend)
      fetch_rows(kv, FETCH_PER(BLOCK_N, F_NT), BLOCK_N, K, k_ss, k_sd, j0 + BLOCK_N, S, D, lid, F_NT);
#endif
UNROLL
    for (int a = 0; a < WPT_M; ++a) {
      const int r = ty + a * F_RM, i = i0 + r;
#if ROW_REDUCE == 0
      ACC mx = m[a];
      for (int u = 0; u < F_RN; ++u) mx = fmax(mx, Red[r * (F_RN + 1) + u]);
#else
      const ACC mx = fmax(m[a], rmax[a]);
#endif
      const ACC corr = mx == NEG_INF ? (ACC)1 : EXPF(m[a] - mx);
      m[a] = mx;
      l[a] *= corr;
UNROLL
      for (int g = 0; g < F_DV4; ++g) o[a][g] *= corr;
UNROLL
      for (int c = 0; c < WPT_N; ++c) {
        const int j = j0 + tx + c * F_RN;
        ACC p = s[a][c] == NEG_INF ? (ACC)0 : EXPF(s[a][c] - mx);
        l[a] += p;
        if (dropout_p > 0.0f && p != (ACC)0 &&
            dropout_uniform(seed, offset, drop_base + (ulong)i * S + j) <= dropout_p)
          p = (ACC)0;
        Pl[r * F_LP + tx + c * F_RN] = p;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // P and V complete
    MICRO_ACC(o, WPT_M, F_DV4, Ps, F_LP, ty, F_RM, Vs, tx, F_RN, BLOCK_N);
  }
#undef Vs

  // Row sums: the F_RN shares of each row (the last reads of Red preceded the last barrier).
#if ROW_REDUCE == 0
UNROLL
  for (int a = 0; a < WPT_M; ++a) Red[(ty + a * F_RM) * (F_RN + 1) + tx] = l[a];
  barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
  for (int a = 0; a < WPT_M; ++a) {
    ACC lt = (ACC)0;
    for (int u = 0; u < F_RN; ++u) lt += Red[(ty + a * F_RM) * (F_RN + 1) + u];
    l[a] = lt;
  }
#else
UNROLL
  for (int a = 0; a < WPT_M; ++a)
    for (int u = 1; u < F_RN; u <<= 1) l[a] += ROW_XOR(l[a], u);
#endif
UNROLL
  for (int a = 0; a < WPT_M; ++a) {
    const int r = ty + a * F_RM, i = i0 + r;
    if (i >= L) continue;
    const ACC lt = l[a];
    const ACC inv = lt > (ACC)0 ? (ACC)1 / (lt * (ACC)(1.0f - dropout_p)) : (ACC)0;
    __global DTYPE* O = PTR(DTYPE, out) + (long)b * o_sb + (long)h * o_sh + (long)i * o_sl;
UNROLL
    for (int g = 0; g < F_DV4; ++g) store4(O, (tx + g * F_RN) * 4, Dv, o[a][g] * inv);
    if (tx == 0) PTR(ACC, lse)[((long)b * Hq + h) * L + i] = lt > (ACC)0 ? (m[a] + LOGF(lt)) * (ACC)SM_LN2 : NEG_INF;
  }
}

#endif  // !MMA

#ifndef PREP_LANES
#define PREP_LANES 16  // attention_bwd_prep: work-items per row (a power of two)
#endif
#ifndef PREP_MAX_WG
#define PREP_MAX_WG 256  // attention_bwd_prep: largest work-group the host launches
#endif

// delta[b,h,i] = sum_d dO[b,h,i,d] * out[b,h,i,d] (the softmax-backward row term; with
// dropout it is still dO . out). With zero_dq it also zeroes row i of the fused backward's
// dQ workspace dqw ([b, h, i, 0..D) at strides w_*, unit head-dimension stride), which saves
// a fill kernel. PREP_LANES work-items share a row, each reading float4 columns
// 4 * (lane + k * PREP_LANES), so a warp's loads cover whole rows (one work-item per row read
// 32 rows 16 bytes at a time); their partial sums meet in a fixed-order local tree.
// NDRange (ceil(L / rows) * local, Hq, B) with rows = local / PREP_LANES.
__kernel void attention_bwd_prep(int L, int Dv, int Hq, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl,
                                 long g_sd, PTR_ARG(DTYPE, out), long o_sb, long o_sh, long o_sl, long o_sd,
                                 PTR_ARG(ACC, delta), int zero_dq, int D, PTR_ARG(ACC, dqw), long w_sb, long w_sh,
                                 long w_sl) {
  __local ACC part[PREP_MAX_WG];
  const int lid = get_local_id(0), lane = lid % PREP_LANES;
  const int i = get_group_id(0) * ((int)get_local_size(0) / PREP_LANES) + lid / PREP_LANES;
  const int h = get_global_id(1), b = get_global_id(2);
  ACC s = (ACC)0;
  if (i < L) {
    __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh + (long)i * g_sl;
    __global const DTYPE* O = PTR(DTYPE, out) + (long)b * o_sb + (long)h * o_sh + (long)i * o_sl;
    for (int d = lane * 4; d < Dv; d += PREP_LANES * 4) s = dot4(load4(G, g_sd, d, Dv), load4(O, o_sd, d, Dv), s);
    if (zero_dq) {
      __global ACC* W = PTR(ACC, dqw) + (long)b * w_sb + (long)h * w_sh + (long)i * w_sl;
      for (int d = lane * 4; d < D; d += PREP_LANES * 4) {
        if (d + 4 <= D) {
          vstore4(ZERO4, 0, W + d);
        } else {
          for (int e = d; e < D; ++e) W[e] = (ACC)0;
        }
      }
    }
  }
  part[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = PREP_LANES / 2; w > 0; w >>= 1) {
    if (lane < w) part[lid] += part[lid + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0 && i < L) PTR(ACC, delta)[((long)b * Hq + h) * L + i] = part[lid];
}

// Shared by both backward kernels: for query row i, key j, the probability p (0 where
// excluded), the dropout factor z (0 or 1/(1-p_drop)) and dS = p * (z * dP - delta_i) with
// dP = dO_i . v_j.
#define BWD_TERMS(interior, sc_dot, dov_dot, i, j, lse_i, delta_i, A_out, dS_out)                \
  do {                                                                                          \
    const ACC s_ = TILE_SCORE(interior, sc_dot, i, j);                                          \
    const ACC p_ = (s_ == NEG_INF || (lse_i) == NEG_INF) ? (ACC)0 : EXPF(s_ - (lse_i) * (ACC)SM_LOG2E); \
    ACC z_ = (ACC)1;                                                                            \
    if (dropout_p > 0.0f)                                                                       \
      z_ = dropout_uniform(seed, offset, drop_base + (ulong)(i) * S + (j)) <= dropout_p          \
               ? (ACC)0 : (ACC)1 / (ACC)(1.0f - dropout_p);                                     \
    A_out = p_ * z_;                                                                            \
    dS_out = p_ == (ACC)0 ? (ACC)0 : p_ * ((dov_dot) * z_ - (delta_i));                         \
  } while (0)

#if !MMA
// dQ (and dBias = dS when requested) for BWD_BLOCK_M query rows of one (b, h); Q and dO
// stay in local memory while K and V stream through. NDRange (ceil(L/BWD_BLOCK_M)*B_NT, Hq, B).
__kernel __attribute__((reqd_work_group_size(B_NT, 1, 1)))
void attention_bwd_dq(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                      PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dq), long dq_sb, long dq_sh,
                      long dq_sl, PTR_ARG(DTYPE, dbias), int want_dbias) {
  __local ACC4 Qs[BWD_BLOCK_M * LD4];
  __local ACC4 Gs[BWD_BLOCK_M * LD4];  // dO rows
  __local ACC4 Ks[BWD_BLOCK_N * LD4];
  __local ACC4 Vs[BWD_BLOCK_N * LD4];
  __local ACC4 dSs[BWD_BLOCK_M * (B_LQ / 4)];  // dS [query][key]
  __local ACC* dSl = (__local ACC*)dSs;

  const int lid = get_local_id(0), tx = lid % B_RK, ty = lid / B_RK;
  const int h = get_group_id(1), b = get_group_id(2);
  const int i0 = (get_num_groups(0) - 1 - get_group_id(0)) * BWD_BLOCK_M;  // most causal work first
  ATTN_BASES(b, h);
  __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh;
  const long rowbase = ((long)b * Hq + h) * L;

  stage_rows(Qs, BWD_BLOCK_M, Q, q_sl, q_sd, i0, L, D, lid, B_NT);
  stage_rows(Gs, BWD_BLOCK_M, G, g_sl, g_sd, i0, L, Dv, lid, B_NT);
  ACC lse_r[BWD_WPT_M], del_r[BWD_WPT_M];
  ACC4 acc[BWD_WPT_M][B_DQ4];
UNROLL
  for (int a = 0; a < BWD_WPT_M; ++a) {
    const int i = i0 + ty + a * B_RQ;
    lse_r[a] = i < L ? PTR(ACC, lse)[rowbase + i] : NEG_INF;
    del_r[a] = i < L ? PTR(ACC, delta)[rowbase + i] : (ACC)0;
UNROLL
    for (int g = 0; g < B_DQ4; ++g) acc[a][g] = ZERO4;
  }

  const int jend = causal ? min(S, i0 + BWD_BLOCK_M) : S;
#define B_PN FETCH_PER(BWD_BLOCK_N, B_NT)
  ACC4 kb[B_PN], vb[B_PN];  // the next K and V blocks on their way to local memory
#define FETCH_KV(j)                                                       \
  do {                                                                    \
    fetch_rows(kb, B_PN, BWD_BLOCK_N, K, k_ss, k_sd, (j), S, D, lid, B_NT);  \
    fetch_rows(vb, B_PN, BWD_BLOCK_N, V, v_ss, v_sd, (j), S, Dv, lid, B_NT); \
  } while (0)
  if (BWD_PREFETCH) FETCH_KV(0);
  for (int j0 = 0; j0 < jend; j0 += BWD_BLOCK_N) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous block's reads of Ks and dSs are done
    if (!BWD_PREFETCH) FETCH_KV(j0);
    store_rows(Ks, kb, B_PN, BWD_BLOCK_N, lid, B_NT);
    store_rows(Vs, vb, B_PN, BWD_BLOCK_N, lid, B_NT);
    barrier(CLK_LOCAL_MEM_FENCE);
    ACC s[BWD_WPT_M][BWD_WPT_N], dp[BWD_WPT_M][BWD_WPT_N];
    MICRO_DOT(s, BWD_WPT_M, BWD_WPT_N, Qs, ty, B_RQ, Ks, tx, B_RK);
    MICRO_DOT(dp, BWD_WPT_M, BWD_WPT_N, Gs, ty, B_RQ, Vs, tx, B_RK);
    const bool interior = INTERIOR(i0, BWD_BLOCK_M, j0, BWD_BLOCK_N);
UNROLL
    for (int a = 0; a < BWD_WPT_M; ++a) {
      const int r = ty + a * B_RQ, i = i0 + r;
UNROLL
      for (int c = 0; c < BWD_WPT_N; ++c) {
        const int cc = tx + c * B_RK, j = j0 + cc;
        ACC pz, ds;
        BWD_TERMS(interior, s[a][c], dp[a][c], i, j, lse_r[a], del_r[a], pz, ds);
        (void)pz;
        dSl[r * B_LQ + cc] = ds;
        if (want_dbias && i < L && j < S) STORE(PTR(DTYPE, dbias), (rowbase + i) * S + j, ds);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // dS complete
    if (BWD_PREFETCH && j0 + BWD_BLOCK_N < jend) FETCH_KV(j0 + BWD_BLOCK_N);
    MICRO_ACC(acc, BWD_WPT_M, B_DQ4, dSs, B_LQ, ty, B_RQ, Ks, tx, B_RK, BWD_BLOCK_N);
  }
#undef B_PN
#undef FETCH_KV
UNROLL
  for (int a = 0; a < BWD_WPT_M; ++a) {
    const int i = i0 + ty + a * B_RQ;
    if (i >= L) continue;
    __global DTYPE* DQ = PTR(DTYPE, dq) + (long)b * dq_sb + (long)h * dq_sh + (long)i * dq_sl;
UNROLL
    for (int g = 0; g < B_DQ4; ++g) store4(DQ, (tx + g * B_RK) * 4, D, acc[a][g] * scale);
  }
}

#endif  // !MMA

// ---- Float atomic add for the fused backward's dQ (ATOMIC_ADD selects the instruction) ----
#ifndef ATOMIC_ADD
#define ATOMIC_ADD 0  // 0 compare-and-swap loop (portable), 1 NVIDIA PTX red.global.add, 2 cl_ext_float_atomics, 3 NVIDIA PTX red.global.v4.f32.add (sm_90) for float4 runs
#endif
// The extension path needs the compiler's feature macro; without it the loop stands in.
#if ATOMIC_ADD == 2 && (ACC_IS_DOUBLE || !defined(__opencl_c_ext_fp32_global_atomic_add))
#undef ATOMIC_ADD
#define ATOMIC_ADD 0
#endif
// A double compare-and-swap needs 64-bit atomics; without them the fused kernel is left out
// (the host then uses the split backward, see attn_bwd_fusable() in attention.cpp).
#if ACC_IS_DOUBLE && ATOMIC_ADD == 0 && !defined(HAVE_ATOMIC_ADD_DOUBLE_CAS)
#define HAVE_ACC_ATOMIC 0
#else
#define HAVE_ACC_ATOMIC 1
#endif

#if HAVE_ACC_ATOMIC
// *p += v as one atomic read-modify-write. Relaxed ordering is enough: the sums are only
// read by later kernels on the in-order queue.
inline void atomic_add_acc(__global ACC* p, ACC v) {
#if (ATOMIC_ADD == 1 || ATOMIC_ADD == 3) && ACC_IS_DOUBLE
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"((ulong)p), "d"(v) : "memory");
#elif ATOMIC_ADD == 1 || ATOMIC_ADD == 3
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"((ulong)p), "f"(v) : "memory");
#elif ATOMIC_ADD == 2
  atomic_fetch_add_explicit((volatile __global atomic_float*)p, v, memory_order_relaxed, memory_scope_device);
#elif ACC_IS_DOUBLE
  atomic_add_double_cas(p, v);
#else
  atomic_add_float_cas(p, v);
#endif
}

// p[k * step] += v.sk for the k with k * step < n (the others lie past the head dimension).
inline void atomic_add_4(__global ACC* p, int step, ACC4 v, int n) {
#if ATOMIC_ADD == 3 && !ACC_IS_DOUBLE
  if (step == 1 && n >= 4 && ((ulong)p & 15) == 0) {
    asm volatile("red.global.v4.f32.add [%0], {%1, %2, %3, %4};" ::"l"((ulong)p), "f"(v.s0), "f"(v.s1), "f"(v.s2),
                 "f"(v.s3)
                 : "memory");
    return;
  }
#endif
  if (n > 0) atomic_add_acc(p, v.s0);
  if (step < n) atomic_add_acc(p + step, v.s1);
  if (2 * step < n) atomic_add_acc(p + 2 * step, v.s2);
  if (3 * step < n) atomic_add_acc(p + 3 * step, v.s3);
}
#endif  // HAVE_ACC_ATOMIC

#if !MMA
// The fused dQ product: a work-item per (4 query rows = one float4 of the dS tile, 4 of the
// head dimension's columns). For scalar atomics the columns are d4 + k*D4 (k = 0..3): the
// work-items of a warp then add to consecutive addresses of a row (coalesced), and read K
// as scalars (consecutive banks). For the float4 atomic (ATOMIC_ADD 3) they are 4*d4 + k:
// one 16-byte atomic per row, K read as a float4. With DQ_ROWS 8 a work-item takes two
// consecutive float4s of rows (8 rows): each K value read then feeds 8 rows instead of 4
// (per key 2 + 4 local reads for 32 multiply-adds instead of 1 + 4 for 16), on half as many
// work-items (the others wait at the next barrier).
#ifndef DQ_ROWS
#define DQ_ROWS 4  // fused dQ product: query rows per work-item (4 or 8)
#endif
#if DQ_ROWS != 4 && DQ_ROWS != 8
#error "DQ_ROWS must be 4 or 8"
#endif
#if BWD_BLOCK_M % DQ_ROWS != 0
#error "DQ_ROWS must divide BWD_BLOCK_M"
#endif
#define DQ_R4 (DQ_ROWS / 4)
#define B_QW ((BWD_BLOCK_M / DQ_ROWS) * D4)
#define B_QPER ((B_QW + B_NT - 1) / B_NT)
#ifndef DQ_VEC_COLS  // 1: columns 4*d4 + k (the float4 atomic's layout), 0: d4 + k*D4
#if ATOMIC_ADD == 3 && !ACC_IS_DOUBLE
#define DQ_VEC_COLS 1
#else
#define DQ_VEC_COLS 0
#endif
#endif
#if DQ_VEC_COLS
#define DQ_STEP 1
#define DQ_COL0(d4) ((d4) * 4)
#else
#define DQ_STEP D4
#define DQ_COL0(d4) (d4)
#endif

// dK, dV for BWD_BLOCK_N keys of one (b, kv head), summed over the `group` query heads that
// share it (GQA) and over all query rows; K and V stay in local memory while Q and dO stream
// through. The micro-tiles are the dQ kernel's, transposed: rows are keys, columns queries.
// With FUSE_DQ the same pass also adds scale * dS K (the dS tile and K are already in local
// memory) into the ACC workspace dqw with atomic adds, and writes dBias = dS, so the
// attention_bwd_dq kernel and its two recomputed products are not needed: 5 products in all.
// Each work-item then owns 4 query rows x 4 columns of the head dimension (see DQ_STEP):
// 16 multiply-adds per float4 of dS and 16 atomics per (query block, key block). The fused
// pass visits the query blocks starting at a different one per key block, so the
// work-groups of a head do not all add to the same dQ rows at once. NDRange (ceil(S/BWD_BLOCK_N)*B_NT, Hkv, B).
inline void bwd_dkdv_body(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                          PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dk), long dk_sb, long dk_sh,
                          long dk_sl, PTR_ARG(DTYPE, dv), long dv_sb, long dv_sh, long dv_sl, PTR_ARG(ACC, dqw),
                          long w_sb, long w_sh, long w_sl, PTR_ARG(DTYPE, dbias), int want_dbias,
                          __local ACC4* Ks, __local ACC4* Vs, __local ACC4* Qs, __local ACC4* Gs, __local ACC4* Ps,
                          __local ACC4* dSs, __local ACC* LSEs, __local ACC* DELs, const int FUSE_DQ) {
  __local ACC* Pl = (__local ACC*)Ps;
  __local ACC* dSl = (__local ACC*)dSs;

  const int lid = get_local_id(0), tx = lid % B_RQ, ty = lid / B_RQ;  // tx: queries, ty: keys
  const int hkv = get_group_id(1), b = get_group_id(2);
  const int j0 = get_group_id(0) * BWD_BLOCK_N;
  {
    // K/V bases do not depend on which query head of the group is used.
    ATTN_BASES(b, hkv * group);
    stage_rows(Ks, BWD_BLOCK_N, K, k_ss, k_sd, j0, S, D, lid, B_NT);
    stage_rows(Vs, BWD_BLOCK_N, V, v_ss, v_sd, j0, S, Dv, lid, B_NT);
    (void)Q; (void)MK; (void)drop_base;
  }
  ACC4 dka[BWD_WPT_N][B_DK4], dva[BWD_WPT_N][B_DK4];
UNROLL
  for (int a = 0; a < BWD_WPT_N; ++a)
UNROLL
    for (int g = 0; g < B_DK4; ++g) dka[a][g] = dva[a][g] = ZERO4;

  // Work list: every (query head g of the group, query block i0 >= istart); the Q/dO/lse/delta
  // of item t+1 are fetched while item t finishes. Item t is list entry (t + rot) % nitems.
  const int istart = causal ? j0 : 0;  // top-left causal: rows i < j never see key j
  const int nblk = L > istart ? (L - istart + BWD_BLOCK_M - 1) / BWD_BLOCK_M : 0, nitems = group * nblk;
  const int rot = FUSE_DQ && nitems > 0 ? (int)(get_group_id(0) % (uint)nitems) : 0;
#define ITEM_HEAD(t) (hkv * group + (((t) + rot) % nitems) / nblk)
#define ITEM_ROW0(t) (istart + ((((t) + rot) % nitems) % nblk) * BWD_BLOCK_M)
#define B_PM FETCH_PER(BWD_BLOCK_M, B_NT)
#define B_PL ((BWD_BLOCK_M + B_NT - 1) / B_NT)
  ACC4 qb[B_PM], gb[B_PM];
  ACC lb[B_PL], db[B_PL];
#define FETCH_ITEM(t)                                                                           \
  do {                                                                                          \
    const int h_ = ITEM_HEAD(t), i0_ = ITEM_ROW0(t);                                            \
    const long rb_ = ((long)b * Hq + h_) * L;                                                   \
    fetch_rows(qb, B_PM, BWD_BLOCK_M, PTR(DTYPE, q) + (long)b * q_sb + (long)h_ * q_sh, q_sl, q_sd, i0_, L, D, \
               lid, B_NT);                                                                      \
    fetch_rows(gb, B_PM, BWD_BLOCK_M, PTR(DTYPE, dout) + (long)b * g_sb + (long)h_ * g_sh, g_sl, g_sd, i0_, L, \
               Dv, lid, B_NT);                                                                  \
    UNROLL for (int x_ = 0; x_ < B_PL; ++x_) {                                                  \
      const int ii_ = i0_ + lid + x_ * B_NT;                                                    \
      lb[x_] = ii_ < L ? PTR(ACC, lse)[rb_ + ii_] : NEG_INF;                                    \
      db[x_] = ii_ < L ? PTR(ACC, delta)[rb_ + ii_] : (ACC)0;                                   \
    }                                                                                           \
  } while (0)
  if (BWD_PREFETCH && nitems > 0) FETCH_ITEM(0);
  for (int t = 0; t < nitems; ++t) {
    const int h = ITEM_HEAD(t), i0 = ITEM_ROW0(t);
    ATTN_BASES(b, h);
    (void)K; (void)V; (void)Q;
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous item's reads of Qs, Gs, Ps, dSs, LSEs are done
    if (!BWD_PREFETCH) FETCH_ITEM(t);
    store_rows(Qs, qb, B_PM, BWD_BLOCK_M, lid, B_NT);
    store_rows(Gs, gb, B_PM, BWD_BLOCK_M, lid, B_NT);
UNROLL
    for (int x = 0; x < B_PL; ++x) {
      const int e = lid + x * B_NT;
      if (e < BWD_BLOCK_M) LSEs[e] = lb[x], DELs[e] = db[x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ACC s[BWD_WPT_N][BWD_WPT_M], dp[BWD_WPT_N][BWD_WPT_M];
    MICRO_DOT(s, BWD_WPT_N, BWD_WPT_M, Ks, ty, B_RK, Qs, tx, B_RQ);
    MICRO_DOT(dp, BWD_WPT_N, BWD_WPT_M, Vs, ty, B_RK, Gs, tx, B_RQ);
    const bool interior = INTERIOR(i0, BWD_BLOCK_M, j0, BWD_BLOCK_N);
UNROLL
    for (int a = 0; a < BWD_WPT_N; ++a) {
      const int r = ty + a * B_RK, j = j0 + r;
UNROLL
      for (int c = 0; c < BWD_WPT_M; ++c) {
        const int cc = tx + c * B_RQ, i = i0 + cc;
        ACC pz, ds;
        BWD_TERMS(interior, s[a][c], dp[a][c], i, j, LSEs[cc], DELs[cc], pz, ds);
        Pl[r * B_LK + cc] = pz;
        dSl[r * B_LK + cc] = ds;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // P and dS complete
    if (BWD_PREFETCH && t + 1 < nitems) FETCH_ITEM(t + 1);
    MICRO_ACC(dva, BWD_WPT_N, B_DK4, Ps, B_LK, ty, B_RK, Gs, tx, B_RQ, BWD_BLOCK_M);
    MICRO_ACC(dka, BWD_WPT_N, B_DK4, dSs, B_LK, ty, B_RK, Qs, tx, B_RQ, BWD_BLOCK_M);
#if HAVE_ACC_ATOMIC
    if (FUSE_DQ) {
      const long rowbase = ((long)b * Hq + h) * L;
      // dBias = dS in row-major order (consecutive work-items: consecutive keys).
      if (want_dbias)
        for (int e = lid; e < BWD_BLOCK_M * BWD_BLOCK_N; e += B_NT) {
          const int r = e / BWD_BLOCK_N, c = e % BWD_BLOCK_N, i = i0 + r, j = j0 + c;
          if (i < L && j < S) STORE(PTR(DTYPE, dbias), (rowbase + i) * S + j, dSl[c * B_LK + r]);
        }
      __global ACC* DQ = PTR(ACC, dqw) + (long)b * w_sb + (long)h * w_sh;
UNROLL
      for (int x = 0; x < B_QPER; ++x) {
        const int e = lid + x * B_NT, qg = e / D4, d4 = e % D4;  // rows i0 + DQ_ROWS*qg + 0..DQ_ROWS-1
        const int col = DQ_COL0(d4);
        if ((B_QW % B_NT == 0 || e < B_QW) && col < D && i0 + qg * DQ_ROWS < L) {
          ACC4 a[DQ_R4][4];  // a[t][u]: row i0 + 4*(DQ_R4*qg + t) + u
UNROLL
          for (int t = 0; t < DQ_R4; ++t) a[t][0] = a[t][1] = a[t][2] = a[t][3] = ZERO4;
UNROLL
          for (int c = 0; c < BWD_BLOCK_N; ++c) {
#if DQ_STEP == 1
            const ACC4 kk = Ks[c * LD4 + d4];
#else
            __local const ACC* kr = (__local const ACC*)(Ks + c * LD4) + col;
            const ACC4 kk = (ACC4)(kr[0], kr[D4], kr[2 * D4], kr[3 * D4]);
#endif
UNROLL
            for (int t = 0; t < DQ_R4; ++t) {
              const ACC4 w = dSs[c * (B_LK / 4) + qg * DQ_R4 + t];
              a[t][0] = fma((ACC4)(w.s0), kk, a[t][0]);
              a[t][1] = fma((ACC4)(w.s1), kk, a[t][1]);
              a[t][2] = fma((ACC4)(w.s2), kk, a[t][2]);
              a[t][3] = fma((ACC4)(w.s3), kk, a[t][3]);
            }
          }
          const int n = D - col;
UNROLL
          for (int t = 0; t < DQ_R4; ++t) {
            const int i = i0 + (qg * DQ_R4 + t) * 4;
            if (i >= L) break;
            __global ACC* row = DQ + (long)i * w_sl + col;
            atomic_add_4(row, DQ_STEP, a[t][0] * scale, n);
            if (i + 1 < L) atomic_add_4(row + w_sl, DQ_STEP, a[t][1] * scale, n);
            if (i + 2 < L) atomic_add_4(row + 2 * w_sl, DQ_STEP, a[t][2] * scale, n);
            if (i + 3 < L) atomic_add_4(row + 3 * w_sl, DQ_STEP, a[t][3] * scale, n);
          }
        }
      }
    }
#endif
  }
#undef FETCH_ITEM
#undef ITEM_HEAD
#undef ITEM_ROW0
#undef B_PM
#undef B_PL
UNROLL
  for (int a = 0; a < BWD_WPT_N; ++a) {
    const int j = j0 + ty + a * B_RK;
    if (j >= S) continue;
    __global DTYPE* DK = PTR(DTYPE, dk) + (long)b * dk_sb + (long)hkv * dk_sh + (long)j * dk_sl;
    __global DTYPE* DV = PTR(DTYPE, dv) + (long)b * dv_sb + (long)hkv * dv_sh + (long)j * dv_sl;
UNROLL
    for (int g = 0; g < B_DK4; ++g) {
      const int d = (tx + g * B_RQ) * 4;
      store4(DK, d, D, dka[a][g] * scale);
      store4(DV, d, Dv, dva[a][g]);
    }
  }
}

#define DKDV_LOCALS                                                                             \
  __local ACC4 Ks[BWD_BLOCK_N * LD4];                                                           \
  __local ACC4 Vs[BWD_BLOCK_N * LD4];                                                           \
  __local ACC4 Qs[BWD_BLOCK_M * LD4];                                                           \
  __local ACC4 Gs[BWD_BLOCK_M * LD4];           /* dO rows */                                   \
  __local ACC4 Ps[BWD_BLOCK_N * (B_LK / 4)];    /* dropped-out probabilities [key][query] */    \
  __local ACC4 dSs[BWD_BLOCK_N * (B_LK / 4)];   /* dS [key][query] */                           \
  __local ACC LSEs[BWD_BLOCK_M], DELs[BWD_BLOCK_M]

// The split (deterministic) backward's dK/dV: attention_bwd_dq computes dQ.
__kernel __attribute__((reqd_work_group_size(B_NT, 1, 1)))
void attention_bwd_dkdv(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                        PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dk), long dk_sb, long dk_sh,
                        long dk_sl, PTR_ARG(DTYPE, dv), long dv_sb, long dv_sh, long dv_sl) {
  DKDV_LOCALS;
  bwd_dkdv_body(L, S, D, Dv, Hq, group, q_base, q_off, q_sb, q_sh, q_sl, q_sd, k_base, k_off, k_sb, k_sh, k_ss, k_sd,
                v_base, v_off, v_sb, v_sh, v_ss, v_sd, mask_base, mask_off, m_sb, m_sh, m_sl, m_ss, use_mask, causal,
                scale, dropout_p, seed, offset, dout_base, dout_off, g_sb, g_sh, g_sl, g_sd, lse_base, lse_off,
                delta_base, delta_off, dk_base, dk_off, dk_sb, dk_sh, dk_sl, dv_base, dv_off, dv_sb, dv_sh, dv_sl, 0,
                0, 0, 0, 0, 0, 0, 0, Ks, Vs, Qs, Gs, Ps, dSs, LSEs, DELs, 0);
}

#if HAVE_ACC_ATOMIC
// The fused backward: dK, dV as above, plus dQ accumulated into the zeroed ACC workspace dqw
// (strides w_*, unit head-dimension stride) and dBias when want_dbias.
__kernel __attribute__((reqd_work_group_size(B_NT, 1, 1)))
void attention_bwd_dkdv_dq(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                           PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dk), long dk_sb, long dk_sh,
                           long dk_sl, PTR_ARG(DTYPE, dv), long dv_sb, long dv_sh, long dv_sl, PTR_ARG(ACC, dqw),
                           long w_sb, long w_sh, long w_sl, PTR_ARG(DTYPE, dbias), int want_dbias) {
  DKDV_LOCALS;
  bwd_dkdv_body(L, S, D, Dv, Hq, group, q_base, q_off, q_sb, q_sh, q_sl, q_sd, k_base, k_off, k_sb, k_sh, k_ss, k_sd,
                v_base, v_off, v_sb, v_sh, v_ss, v_sd, mask_base, mask_off, m_sb, m_sh, m_sl, m_ss, use_mask, causal,
                scale, dropout_p, seed, offset, dout_base, dout_off, g_sb, g_sh, g_sl, g_sd, lse_base, lse_off,
                delta_base, delta_off, dk_base, dk_off, dk_sb, dk_sh, dk_sl, dv_base, dv_off, dv_sb, dv_sh, dv_sl,
                dqw_base, dqw_off, w_sb, w_sh, w_sl, dbias_base, dbias_off, want_dbias, Ks, Vs, Qs, Gs, Ps, dSs, LSEs,
                DELs, 1);
}
#endif
#endif  // !MMA

// ==== Tensor-core kernels (MMA = 1 NVIDIA PTX mma.sync, 2 its emulation; see mma.clh) ========
// The same flash-attention algorithms with every matrix product done by warp-level m16n8k8
// products in 3xTF32 form (float32 accuracy). float storage, head dimensions up to HEAD_DIM
// (a multiple of 8), no dropout: the host runs the FMA program for everything else. A warp
// owns 16 rows of every tile: query rows in the forward, key rows in the backward. Local
// tiles are [row][HEAD_DIM + 4] (the stage_rows layout), which makes every fragment read
// below conflict-free: lanes (g, t) read rows g or 2t and columns t or g. The tiles every
// warp reads as B operands (K, V forward; Q, dO, dS backward) are stored split, as two
// planes of tf32 high and low parts: each value is split once instead of once per warp (the
// split is three instructions, and they, not the tensor cores, bound these kernels).
#if MMA
#include "mma.clh"
#ifndef MMA_WARPS
#define MMA_WARPS 4  // warps per work-group (each owns 16 query rows forward, 16 keys backward)
#endif
#ifndef MMA_N
#define MMA_N 32  // forward: keys per step of the online softmax (a multiple of 8)
#endif
#ifndef MMA_BQ
#define MMA_BQ 16  // backward: query rows per step (a multiple of 16)
#endif
#ifndef MMA_FETCH
#define MMA_FETCH 1  // forward: 1 issues the K/V block's global loads (into registers) before its first barrier
#endif
#ifndef MMA_BWD_FETCH
#define MMA_BWD_FETCH 1  // backward: 1 loads the next step's Q/dO rows (into registers) during the current step
#endif
#if ROW_REDUCE != 1 && ROW_REDUCE != 3
#error "the tensor-core kernels reduce rows by shuffles: ROW_REDUCE 1 (PTX) or 3 (emulation)"
#endif
#if HEAD_DIM % 8 != 0 || MMA_N % 8 != 0 || MMA_BQ % 16 != 0 || ACC_IS_DOUBLE || defined(IS_HALF) || defined(IS_BF16)
#error "the tensor-core kernels need float storage, HEAD_DIM and MMA_N multiples of 8, MMA_BQ of 16"
#endif
#define M_NT (32 * MMA_WARPS)  // work-group size
#define M_BM (16 * MMA_WARPS)  // forward: query rows per work-group; backward: keys per work-group
#define M_KD (HEAD_DIM / 8)    // k-steps (or n-tiles) over the head dimension
#define M_LD (HEAD_DIM + 4)    // row stride of the local tiles, in floats (= 4 * LD4)

// The score of query i and key j from the already scaled product x (base 2 under
// SOFTMAX_EXP), or -inf where a bound or the causal mask excludes it.
#define M_SCORE(x, i, j)                                              \
  ((j) >= S || (i) >= L || (causal && (j) > (i))                      \
       ? NEG_INF                                                      \
       : (x) + (use_mask ? LOAD(MK, (long)(i) * m_sl + (long)(j) * m_ss) * (ACC)SM_LOG2E : (ACC)0))

// A fragment of rows r0 + {0, 8} of the local tile T (row stride M_LD) at k-step kk, times f.
inline void frag_a(uint2* a, __local const float* T, int r0, int kk, int t, float f) {
  __local const float* p = T + r0 * M_LD + 8 * kk + t;
  a[0] = split_tf32(p[0] * f);
  a[1] = split_tf32(p[8 * M_LD] * f);
  a[2] = split_tf32(p[4] * f);
  a[3] = split_tf32(p[8 * M_LD + 4] * f);
}
// B fragment with B[k][n] = T[row0 + n][col0 + k] (a transposed tile: K in Q K^T).
inline void frag_bt(uint2* b, __local const float* T, int row0, int col0, int g, int t) {
  __local const float* p = T + (row0 + g) * M_LD + col0 + t;
  b[0] = split_tf32(p[0]);
  b[1] = split_tf32(p[4]);
}
// B fragment with B[k][n] = T[row0 + k][col0 + n], its k permuted as a C fragment's columns
// (rows 2t and 2t + 1; mma.clh): V in P V, dO in P^T dO.
inline void frag_bp(uint2* b, __local const float* T, int row0, int col0, int g, int t) {
  __local const float* p = T + (row0 + 2 * t) * M_LD + col0 + g;
  b[0] = split_tf32(p[0]);
  b[1] = split_tf32(p[M_LD]);
}
// The same two B fragments from split planes (H: high parts, Lo: low parts; stride M_LD).
inline void frag_bt2(uint2* b, __local const uint* H, __local const uint* Lo, int row0, int col0, int g, int t) {
  const int o = (row0 + g) * M_LD + col0 + t;
  b[0] = (uint2)(H[o], Lo[o]);
  b[1] = (uint2)(H[o + 4], Lo[o + 4]);
}
inline void frag_bp2(uint2* b, __local const uint* H, __local const uint* Lo, int row0, int col0, int g, int t) {
  const int o = (row0 + 2 * t) * M_LD + col0 + g;
  b[0] = (uint2)(H[o], Lo[o]);
  b[1] = (uint2)(H[o + M_LD], Lo[o + M_LD]);
}
// Rows [r0, r0 + nr) x [0, HEAD_DIM) of a matrix (strides sr, sd) as split planes H, Lo
// ([nr][M_LD]), zero past the matrix: stage_rows with the split on the way.
inline void stage_split(__local uint* H, __local uint* Lo, int nr, __global const DTYPE* p, long sr, long sd, int r0,
                        int nrows, int dim, int lid, int nthreads) {
  for (int e = lid; e < nr * D4; e += nthreads) {
    const int rr = e / D4, d4 = e % D4, row = r0 + rr;
    const float4 x = row < nrows ? load4(p + (long)row * sr, sd, d4 * 4, dim) : ZERO4;
    const uint2 a = split_tf32(x.s0), b = split_tf32(x.s1), c = split_tf32(x.s2), d = split_tf32(x.s3);
    vstore4((uint4)(a.x, b.x, c.x, d.x), 0, H + rr * M_LD + 4 * d4);
    vstore4((uint4)(a.y, b.y, c.y, d.y), 0, Lo + rr * M_LD + 4 * d4);
  }
}
// stage_split in two halves (fetch_rows, then this): the loaded rows buf split into H, Lo.
inline void store_split(__local uint* H, __local uint* Lo, const ACC4* buf, int per, int nr, int lid, int nthreads) {
UNROLL
  for (int x = 0; x < per; ++x) {
    const int e = lid + x * nthreads, rr = e / D4, d4 = e % D4;
    if (e < nr * D4) {
      const uint2 a = split_tf32(buf[x].s0), b = split_tf32(buf[x].s1), c = split_tf32(buf[x].s2),
                  d = split_tf32(buf[x].s3);
      vstore4((uint4)(a.x, b.x, c.x, d.x), 0, H + rr * M_LD + 4 * d4);
      vstore4((uint4)(a.y, b.y, c.y, d.y), 0, Lo + rr * M_LD + 4 * d4);
    }
  }
}
// The A fragment of a C fragment c (k permuted, see mma.clh).
inline void frag_ac(uint2* a, const float* c) {
  a[0] = split_tf32(c[0]);
  a[1] = split_tf32(c[2]);
  a[2] = split_tf32(c[1]);
  a[3] = split_tf32(c[3]);
}

// out = softmax(scale q k^T + mask) v and the row logsumexp, as attention_fwd (same NDRange
// with M_BM query rows and M_NT work-items per group). Q is staged once and kept as split A
// fragments (scaled; reading them from local memory per key block instead, re-split, ran the
// forward 29% slower on an H200); per key block K and V are staged as split planes, S = Q K^T
// goes to C fragments, the online softmax runs on them (row max/sum over the 4 lanes of a row
// by shuffles), and P feeds O += P V straight from its registers.
__kernel __attribute__((reqd_work_group_size(M_NT, 1, 1)))
void attention_mma_fwd(ATTN_ARGS, PTR_ARG(DTYPE, out), long o_sb, long o_sh, long o_sl, PTR_ARG(ACC, lse)) {
  // K and V as split planes (4 x MMA_N rows); first the raw Q tile (M_BM rows).
  __local uint4 KVs[(4 * MMA_N > M_BM ? 4 * MMA_N : M_BM) * LD4];
  MMA_SCRATCH_DECL(M_NT);
#if ROW_REDUCE == 3
  __local ACC RowX[M_NT];
#endif
  __local uint* Kh = (__local uint*)KVs;
  __local uint* Klo = Kh + MMA_N * M_LD;
  __local uint* Vh = Klo + MMA_N * M_LD;
  __local uint* Vlo = Vh + MMA_N * M_LD;
  const int lid = get_local_id(0), lane = lid % 32, warp = lid / 32, g = lane >> 2, t = lane & 3;
  const int h = get_group_id(1), b = get_group_id(2);
  const int i0 = (get_num_groups(0) - 1 - get_group_id(0)) * M_BM;  // most causal work first
  const int r0 = warp * 16 + g;  // this lane's rows r0 and r0 + 8 of the block
  ATTN_BASES(b, h);
  (void)drop_base;

  stage_rows((__local ACC4*)KVs, M_BM, Q, q_sl, q_sd, i0, L, D, lid, M_NT);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint2 qa[M_KD][4];
UNROLL
  for (int kk = 0; kk < M_KD; ++kk) frag_a(qa[kk], (__local const float*)KVs, r0, kk, t, qk_scale);

  float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.0f, 0.0f};  // l: this lane's share of the row sums
  float o[M_KD][4];
UNROLL
  for (int n = 0; n < M_KD; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

  const int jend = causal ? min(S, i0 + M_BM) : S;  // later keys are masked for every row
  for (int j0 = 0; j0 < jend; j0 += MMA_N) {
#if MMA_FETCH
    ACC4 kb[FETCH_PER(MMA_N, M_NT)], vb[FETCH_PER(MMA_N, M_NT)];
    fetch_rows(kb, FETCH_PER(MMA_N, M_NT), MMA_N, K, k_ss, k_sd, j0, S, D, lid, M_NT);
    fetch_rows(vb, FETCH_PER(MMA_N, M_NT), MMA_N, V, v_ss, v_sd, j0, S, Dv, lid, M_NT);
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous block's reads of K and V (first: of Q) are done
    store_split(Kh, Klo, kb, FETCH_PER(MMA_N, M_NT), MMA_N, lid, M_NT);
    store_split(Vh, Vlo, vb, FETCH_PER(MMA_N, M_NT), MMA_N, lid, M_NT);
#else
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous block's reads of K and V (first: of Q) are done
    stage_split(Kh, Klo, MMA_N, K, k_ss, k_sd, j0, S, D, lid, M_NT);
    stage_split(Vh, Vlo, MMA_N, V, v_ss, v_sd, j0, S, Dv, lid, M_NT);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    float s[MMA_N / 8][4];
UNROLL
    for (int j = 0; j < MMA_N / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
UNROLL
    for (int kk = 0; kk < M_KD; ++kk)
UNROLL
      for (int j = 0; j < MMA_N / 8; ++j) {
        uint2 kf[2];
        frag_bt2(kf, Kh, Klo, 8 * j, 8 * kk, g, t);
        mma3(s[j], qa[kk], kf MMA_SCRATCH);
      }

    // Scores, the row maxima over the block (rows r0: s[.][0..1], r0 + 8: s[.][2..3]).
    const bool interior = INTERIOR(i0 + warp * 16, 16, j0, MMA_N);
    float mx[2] = {NEG_INF, NEG_INF};
UNROLL
    for (int j = 0; j < MMA_N / 8; ++j)
UNROLL
      for (int e = 0; e < 4; ++e) {
        if (!interior) s[j][e] = M_SCORE(s[j][e], i0 + r0 + 8 * (e >> 1), j0 + 8 * j + 2 * t + (e & 1));
        mx[e >> 1] = fmax(mx[e >> 1], s[j][e]);
      }
UNROLL
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmax(mx[r], ROW_XOR(mx[r], 1));
      mx[r] = fmax(mx[r], ROW_XOR(mx[r], 2));
      const float mn = fmax(m[r], mx[r]);
      const float corr = mn == NEG_INF ? 1.0f : EXPF(m[r] - mn);
      m[r] = mn;
      l[r] *= corr;
UNROLL
      for (int n = 0; n < M_KD; ++n) o[n][2 * r] *= corr, o[n][2 * r + 1] *= corr;
    }
UNROLL
    for (int j = 0; j < MMA_N / 8; ++j)
UNROLL
      for (int e = 0; e < 4; ++e) {
        const float p = s[j][e] == NEG_INF ? 0.0f : EXPF(s[j][e] - m[e >> 1]);
        l[e >> 1] += p;
        s[j][e] = p;
      }
    // O += P V: the k-step j covers keys 8j + {2t, 2t + 1} of this lane's C fragment.
UNROLL
    for (int j = 0; j < MMA_N / 8; ++j) {
      uint2 pa[4];
      frag_ac(pa, s[j]);
UNROLL
      for (int n = 0; n < M_KD; ++n) {
        uint2 vf[2];
        frag_bp2(vf, Vh, Vlo, 8 * j, 8 * n, g, t);
        mma3(o[n], pa, vf MMA_SCRATCH);
      }
    }
  }

UNROLL
  for (int r = 0; r < 2; ++r) {
    l[r] += ROW_XOR(l[r], 1);
    l[r] += ROW_XOR(l[r], 2);
  }
UNROLL
  for (int r = 0; r < 2; ++r) {
    const int i = i0 + r0 + 8 * r;
    if (i >= L) continue;
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    __global DTYPE* O = PTR(DTYPE, out) + (long)b * o_sb + (long)h * o_sh + (long)i * o_sl;
UNROLL
    for (int n = 0; n < M_KD; ++n) {
      const int d = 8 * n + 2 * t;
      if (d + 1 < Dv) {
        vstore2((float2)(o[n][2 * r] * inv, o[n][2 * r + 1] * inv), 0, O + d);
      } else if (d < Dv) {
        O[d] = o[n][2 * r] * inv;
      }
    }
    if (t == 0) PTR(ACC, lse)[((long)b * Hq + h) * L + i] = l[r] > 0.0f ? (m[r] + LOGF(l[r])) * (ACC)SM_LN2 : NEG_INF;
  }
}

// dK, dV for M_BM keys of one (b, kv head) and dQ by atomic adds into the zeroed float
// workspace dqw (attention_bwd_dkdv_dq's contract: same arguments, NDRange
// (ceil(S / M_BM) * M_NT, Hkv, B)), dBias = dS when want_dbias. A warp owns 16 keys. Per
// step of MMA_BQ query rows (of every query head of the GQA group): S^T = K Q^T and
// dP^T = V dO^T into C fragments, P^T and dS^T elementwise, dV += P^T dO and dK += dS^T Q
// from those registers (5 products with the dQ one below). dS^T then goes to local memory
// (split), and each warp adds its share of dQ = dS K (MMA_BQ x HEAD_DIM over the group's
// keys) with float atomics. Q and dO are staged split; K (scaled into its fragments per step)
// stays in local memory for both uses; V stays in registers.
#define MB_QT (MMA_BQ / 8)                // n-tiles (k-steps) over the query rows of a step
#define MB_LS (MMA_BQ + 4)                // row stride of the dS^T tile [key][query]
#define MB_DQT ((MMA_BQ / 16) * M_KD)     // dQ (m, n) tiles of a step
#define MB_DQW ((MB_DQT + MMA_WARPS - 1) / MMA_WARPS)  // ... per warp
#if MMA == 2 && MB_DQT % MMA_WARPS != 0
#error "the emulation's barriers need every warp to make the same dQ products: MMA_WARPS | (MMA_BQ / 16) * HEAD_DIM / 8"
#endif
__kernel __attribute__((reqd_work_group_size(M_NT, 1, 1)))
void attention_mma_bwd(ATTN_ARGS, PTR_ARG(DTYPE, dout), long g_sb, long g_sh, long g_sl, long g_sd,
                       PTR_ARG(ACC, lse), PTR_ARG(ACC, delta), PTR_ARG(DTYPE, dk), long dk_sb, long dk_sh,
                       long dk_sl, PTR_ARG(DTYPE, dv), long dv_sb, long dv_sh, long dv_sl, PTR_ARG(ACC, dqw),
                       long w_sb, long w_sh, long w_sl, PTR_ARG(DTYPE, dbias), int want_dbias) {
  __local ACC4 Ks[M_BM * LD4];
  __local uint4 QGs[4 * MMA_BQ * LD4];  // Q and dO rows, split: Qh | Qlo | Gh | Glo
  __local uint dSh[M_BM * MB_LS], dSlo[M_BM * MB_LS];  // dS^T [key][query], split
  __local float LSEs[MMA_BQ], DELs[MMA_BQ];
  MMA_SCRATCH_DECL(M_NT);
  __local const float* Kl = (__local const float*)Ks;
  __local uint* Qh = (__local uint*)QGs;
  __local uint* Qlo = Qh + MMA_BQ * M_LD;
  __local uint* Gh = Qlo + MMA_BQ * M_LD;
  __local uint* Glo = Gh + MMA_BQ * M_LD;
  const int lid = get_local_id(0), lane = lid % 32, warp = lid / 32, g = lane >> 2, t = lane & 3;
  const int hkv = get_group_id(1), b = get_group_id(2);
  const int j0 = get_group_id(0) * M_BM;
  const int r0 = warp * 16 + g;  // this lane's keys j0 + r0 and j0 + r0 + 8
  float vr[M_KD][4];             // V rows r0, r0 + 8 as A fragments (unsplit)
  {
    ATTN_BASES(b, hkv * group);
    stage_rows(Ks, M_BM, K, k_ss, k_sd, j0, S, D, lid, M_NT);
    (void)Q; (void)MK; (void)drop_base; (void)qk_scale;
UNROLL
    for (int kk = 0; kk < M_KD; ++kk)
UNROLL
      for (int x = 0; x < 4; ++x) {
        const int j = j0 + r0 + 8 * (x & 1), d = 8 * kk + t + 4 * (x >> 1);
        vr[kk][x] = j < S && d < Dv ? LOAD(V, (long)j * v_ss + (long)d * v_sd) : 0.0f;
      }
  }
  float dka[M_KD][4], dva[M_KD][4];
UNROLL
  for (int n = 0; n < M_KD; ++n)
UNROLL
    for (int x = 0; x < 4; ++x) dka[n][x] = dva[n][x] = 0.0f;

  // Work list: every (query head of the group, query block from istart), rotated per key
  // block so the work-groups of a head do not all add to the same dQ rows at once.
  const int istart = causal ? j0 : 0;  // top-left causal: rows i < j never see key j
  const int nblk = L > istart ? (L - istart + MMA_BQ - 1) / MMA_BQ : 0, nitems = group * nblk;
  const int rot = nitems > 0 ? (int)(get_group_id(0) % (uint)nitems) : 0;
#define MB_HEAD(it_) (hkv * group + (((it_) + rot) % nitems) / nblk)
#define MB_ROW0(it_) (istart + ((((it_) + rot) % nitems) % nblk) * MMA_BQ)
#if MMA_BWD_FETCH
#define MB_PER FETCH_PER(MMA_BQ, M_NT)
  ACC4 qb[MB_PER], gb[MB_PER];  // the next step's Q and dO rows on their way to local memory
  float lb = NEG_INF, db = 0.0f;
#define MB_FETCH(it_)                                                                               \
  do {                                                                                              \
    const int h_ = MB_HEAD(it_), i0_ = MB_ROW0(it_);                                                \
    const long rb_ = ((long)b * Hq + h_) * L;                                                       \
    fetch_rows(qb, MB_PER, MMA_BQ, PTR(DTYPE, q) + (long)b * q_sb + (long)h_ * q_sh, q_sl, q_sd, i0_, L, D, lid, \
               M_NT);                                                                               \
    fetch_rows(gb, MB_PER, MMA_BQ, PTR(DTYPE, dout) + (long)b * g_sb + (long)h_ * g_sh, g_sl, g_sd, i0_, L, Dv, \
               lid, M_NT);                                                                          \
    if (lid < MMA_BQ) {                                                                             \
      lb = i0_ + lid < L ? PTR(ACC, lse)[rb_ + i0_ + lid] : NEG_INF;                                \
      db = i0_ + lid < L ? PTR(ACC, delta)[rb_ + i0_ + lid] : 0.0f;                                 \
    }                                                                                               \
  } while (0)
  if (nitems > 0) MB_FETCH(0);
#endif
  for (int it = 0; it < nitems; ++it) {
    const int h = MB_HEAD(it), i0 = MB_ROW0(it);
    ATTN_BASES(b, h);
    (void)K; (void)V; (void)drop_base;
    const long rowbase = ((long)b * Hq + h) * L;
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous step's reads of Qs, Gs, dSt, LSEs are done (first: Ks staged)
#if MMA_BWD_FETCH
    (void)Q;
    store_split(Qh, Qlo, qb, MB_PER, MMA_BQ, lid, M_NT);
    store_split(Gh, Glo, gb, MB_PER, MMA_BQ, lid, M_NT);
    if (lid < MMA_BQ) LSEs[lid] = lb, DELs[lid] = db;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (it + 1 < nitems) MB_FETCH(it + 1);
#else
    __global const DTYPE* G = PTR(DTYPE, dout) + (long)b * g_sb + (long)h * g_sh;
    stage_split(Qh, Qlo, MMA_BQ, Q, q_sl, q_sd, i0, L, D, lid, M_NT);
    stage_split(Gh, Glo, MMA_BQ, G, g_sl, g_sd, i0, L, Dv, lid, M_NT);
    for (int e = lid; e < MMA_BQ; e += M_NT) {
      LSEs[e] = i0 + e < L ? PTR(ACC, lse)[rowbase + i0 + e] : NEG_INF;
      DELs[e] = i0 + e < L ? PTR(ACC, delta)[rowbase + i0 + e] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    // S^T (keys x queries, scaled scores) and dP^T = V dO^T.
    float s[MB_QT][4], dp[MB_QT][4];
UNROLL
    for (int q = 0; q < MB_QT; ++q)
UNROLL
      for (int x = 0; x < 4; ++x) s[q][x] = dp[q][x] = 0.0f;
UNROLL
    for (int kk = 0; kk < M_KD; ++kk) {
      uint2 ka[4], va[4];
      frag_a(ka, Kl, r0, kk, t, qk_scale);
UNROLL
      for (int x = 0; x < 4; ++x) va[x] = split_tf32(vr[kk][x]);
UNROLL
      for (int q = 0; q < MB_QT; ++q) {
        uint2 f[2];
        frag_bt2(f, Qh, Qlo, 8 * q, 8 * kk, g, t);
        mma3(s[q], ka, f MMA_SCRATCH);
        frag_bt2(f, Gh, Glo, 8 * q, 8 * kk, g, t);
        mma3(dp[q], va, f MMA_SCRATCH);
      }
    }
    // P^T into s, dS^T into dp; element (key j0 + r0 + 8(x/2), query i0 + 8q + 2t + x%2).
    const bool interior = INTERIOR(i0, MMA_BQ, j0 + warp * 16, 16);
UNROLL
    for (int q = 0; q < MB_QT; ++q)
UNROLL
      for (int x = 0; x < 4; ++x) {
        const int c = 8 * q + 2 * t + (x & 1), i = i0 + c, j = j0 + r0 + 8 * (x >> 1);
        const float sc = interior ? s[q][x] : M_SCORE(s[q][x], i, j), ls = LSEs[c];
        const float p = (sc == NEG_INF || ls == NEG_INF) ? 0.0f : EXPF(sc - ls * (ACC)SM_LOG2E);
        s[q][x] = p;
        dp[q][x] = p == 0.0f ? 0.0f : p * (dp[q][x] - DELs[c]);
        if (want_dbias && i < L && j < S) STORE(PTR(DTYPE, dbias), (rowbase + i) * S + j, dp[q][x]);
      }
    // dV += P^T dO, dK += dS^T Q (k-step q: queries 8q + {2t, 2t + 1}).
UNROLL
    for (int q = 0; q < MB_QT; ++q) {
      uint2 pa[4], sa[4];
      frag_ac(pa, s[q]);
      frag_ac(sa, dp[q]);
      {  // dS^T for the dQ product, split: sa holds elements 0, 2, 1, 3 of dp[q] (frag_ac)
        const int o = r0 * MB_LS + 8 * q + 2 * t;
        dSh[o] = sa[0].x, dSlo[o] = sa[0].y;
        dSh[o + 1] = sa[2].x, dSlo[o + 1] = sa[2].y;
        dSh[o + 8 * MB_LS] = sa[1].x, dSlo[o + 8 * MB_LS] = sa[1].y;
        dSh[o + 8 * MB_LS + 1] = sa[3].x, dSlo[o + 8 * MB_LS + 1] = sa[3].y;
      }
UNROLL
      for (int n = 0; n < M_KD; ++n) {
        uint2 f[2];
        frag_bp2(f, Gh, Glo, 8 * q, 8 * n, g, t);
        mma3(dva[n], pa, f MMA_SCRATCH);
        frag_bp2(f, Qh, Qlo, 8 * q, 8 * n, g, t);
        mma3(dka[n], sa, f MMA_SCRATCH);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // dS^T complete
    // dQ += scale dS K: tile (mt, nt) of the MMA_BQ x HEAD_DIM product per warp and slot,
    // over the block's keys in k-steps of 8 (keys 8kk + {2t, 2t + 1}: permuted as in frag_bp).
    __global ACC* DQ = PTR(ACC, dqw) + (long)b * w_sb + (long)h * w_sh;
UNROLL
    for (int w = 0; w < MB_DQW; ++w) {
      const int tile = warp + w * MMA_WARPS;
      if (MB_DQT % MMA_WARPS != 0 && tile >= MB_DQT) break;  // uniform per warp
      const int mt = tile / M_KD, nt = tile % M_KD;
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
UNROLL
      for (int kk = 0; kk < M_BM / 8; ++kk) {
        const int o = (8 * kk + 2 * t) * MB_LS + 16 * mt + g;
        uint2 a[4], f[2];
        a[0] = (uint2)(dSh[o], dSlo[o]);
        a[1] = (uint2)(dSh[o + 8], dSlo[o + 8]);
        a[2] = (uint2)(dSh[o + MB_LS], dSlo[o + MB_LS]);
        a[3] = (uint2)(dSh[o + MB_LS + 8], dSlo[o + MB_LS + 8]);
        frag_bp(f, Kl, 8 * kk, 8 * nt, g, t);
        mma3(acc, a, f MMA_SCRATCH);
      }
      const int d = 8 * nt + 2 * t;
UNROLL
      for (int r = 0; r < 2; ++r) {
        const int i = i0 + 16 * mt + g + 8 * r;
        if (i >= L) continue;
        __global ACC* row = DQ + (long)i * w_sl;
        if (d < D) atomic_add_acc(row + d, acc[2 * r] * scale);
        if (d + 1 < D) atomic_add_acc(row + d + 1, acc[2 * r + 1] * scale);
      }
    }
  }
#undef MB_HEAD
#undef MB_ROW0
#if MMA_BWD_FETCH
#undef MB_FETCH
#undef MB_PER
#endif
UNROLL
  for (int r = 0; r < 2; ++r) {
    const int j = j0 + r0 + 8 * r;
    if (j >= S) continue;
    __global DTYPE* DK = PTR(DTYPE, dk) + (long)b * dk_sb + (long)hkv * dk_sh + (long)j * dk_sl;
    __global DTYPE* DV = PTR(DTYPE, dv) + (long)b * dv_sb + (long)hkv * dv_sh + (long)j * dv_sl;
UNROLL
    for (int n = 0; n < M_KD; ++n) {
      const int d = 8 * n + 2 * t;
      if (d < D) DK[d] = dka[n][2 * r] * scale;
      if (d + 1 < D) DK[d + 1] = dka[n][2 * r + 1] * scale;
      if (d < Dv) DV[d] = dva[n][2 * r];
      if (d + 1 < Dv) DV[d + 1] = dva[n][2 * r + 1];
    }
  }
}
#endif  // MMA
