// Reductions (sum/mean/prod/amax/amin/aminmax/argmax/argmin/all/any/norm/var/logsumexp) over any set of
// dims of a strided tensor. Shapes and strides are runtime arguments (Geom); the op, dtypes and
// work-group size are build options, so one program serves every shape of an (op, dtype) pair.
//
// Work decomposition (chosen by the host, see ops/reduce.cpp): a work-group of LOCAL_SIZE items
// serves P = LOCAL_SIZE / C outputs with C cooperating items each. In row mode the C items of an
// output are adjacent (the reduced elements are contiguous, so their loads coalesce); in column
// mode the P outputs are adjacent (the kept dim is contiguous, e.g. a bias gradient summed over
// dim 0) and no transposing copy is needed. Each item accumulates a strided slice serially
// (compensated for float sums), then the C partial states meet in a local-memory tree.
// When few outputs meet a huge reduced size, dim 1 of the NDRange splits the reduced range into
// chunks whose states go to a workspace; the last group to finish of each output group then
// combines them in a fixed order (one launch; reduce_finish is the fallback second launch).
#include "common.clh"

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256  // work-items per group (power of two)
#endif
#ifndef UNROLL
#define UNROLL 4  // elements loaded per item before accumulating (memory-level parallelism)
#endif
#ifndef MAX_DIMS
#define MAX_DIMS 8  // kept / reduced dims after coalescing (host falls back to a copy beyond)
#endif

// Ops (build option OP). Variants of one op differ only in the runtime `mode` word, so they
// share a program: sum/mean/nansum/norms 0,1,2,p (and count_nonzero via VAL_BOOL) are OP_SUM;
// amax/amin/max/min/norm +-inf/all/any are OP_MINMAX; argmax/argmin/max.dim/min.dim are OP_ARG.
#define OP_SUM 0
#define OP_PROD 1
#define OP_MINMAX 2   // NaN-propagating max (or min with MODE_MIN)
#define OP_ARG 3      // (value, first index); NaN wins; MODE_MIN for argmin, MODE_VALUES for max.dim
#define OP_WELFORD 4  // var/std (+mean): Welford per item, Chan et al. to combine
#define OP_LSE 5      // logsumexp: running (max, scaled sum)
#define OP_AMINMAX 6  // aminmax: NaN-propagating (min, max) in one pass; max is stored through y2

// mode bits 0-2: element map applied before accumulating.
#define MAP_NONE 0
#define MAP_NAN_TO_ZERO 1  // nansum
#define MAP_ABS 2          // norm 1, norm +-inf
#define MAP_SQUARE 3       // norm 2
#define MAP_POW 4          // norm p: |x|^p0
#define MAP_NONZERO 5      // norm 0, all/any
#define MAP_MASK 7
// mode bits 3-4: finalisation of OP_SUM.
#define FIN_NONE 0
#define FIN_DIV 8     // mean: v / p1
#define FIN_SQRT 16   // norm 2
#define FIN_POW 24    // norm p: v^p1 (p1 = 1/p)
#define FIN_MASK 24
#define MODE_MIN 32      // OP_MINMAX / OP_ARG: min instead of max
#define MODE_VALUES 64   // OP_ARG: also store the values
#define MODE_STD 128     // OP_WELFORD: sqrt of the variance
#define MODE_MEAN 256    // OP_WELFORD: also store the mean (through y2)

#define KIND_PLAIN 0
#define KIND_HALF 1   // float16 stored as 16 bits (vload_half / vstore_half)
#define KIND_BF16 2
#define KIND_BOOL 3

#ifndef OP
#define OP OP_SUM
#endif
#ifndef IN_T
#define IN_T float
#endif
#ifndef IN_KIND
#define IN_KIND KIND_PLAIN
#endif
#ifndef ACC
#define ACC float  // accumulation type: float for float/half/bfloat16, double, long for ints
#endif
#ifndef ACC_FLOAT
#define ACC_FLOAT 1
#endif
#ifndef OUT_T
#define OUT_T float
#endif
#ifndef OUT_KIND
#define OUT_KIND KIND_PLAIN
#endif
#ifndef OUT2_T
#define OUT2_T long
#endif

// ---- loading: storage -> value dtype (the reduction's dtype= argument) -> ACC ---------------
#if IN_KIND == KIND_HALF
#define LOAD_RAW(p, i) vload_half((i), (__global const half*)(p))
#elif IN_KIND == KIND_BF16
#define LOAD_RAW(p, i) bf16_to_float((p)[i])
#else
#define LOAD_RAW(p, i) ((p)[i])
#endif

#if defined(VAL_HALF)
inline ACC to_val(float x) {
  ushort h;
  vstore_half(x, 0, (__private half*)&h);
  return (ACC)vload_half(0, (__private const half*)&h);
}
#elif defined(VAL_BF16)
inline ACC to_val(float x) { return (ACC)bf16_to_float(float_to_bf16(x)); }
#elif defined(VAL_BOOL)
#define to_val(x) ((ACC)((x) != 0))
#elif defined(VAL_CAST)
#define to_val(x) ((ACC)(VAL_CAST)(x))
#else
#define to_val(x) ((ACC)(x))
#endif
#define LOAD(p, i) to_val(LOAD_RAW(p, i))

// ---- storing -----------------------------------------------------------------------------
#if OUT_KIND == KIND_HALF
#define STORE(p, i, v) vstore_half((float)(v), (i), (__global half*)(p))
#elif OUT_KIND == KIND_BF16
#define STORE(p, i, v) ((p)[i] = float_to_bf16((float)(v)))
#elif OUT_KIND == KIND_BOOL
#define STORE(p, i, v) ((p)[i] = (OUT_T)((v) != 0))
#else
#define STORE(p, i, v) ((p)[i] = (OUT_T)(v))
#endif

#if ACC_FLOAT
#define IS_NAN(x) isnan(x)
#else
#define IS_NAN(x) 0
#endif

// ---- per-op state --------------------------------------------------------------------------
#if OP == OP_ARG
typedef struct { ACC v; long i; } State;  // i < 0: no element yet
#elif OP == OP_WELFORD
typedef struct { ACC mean; ACC m2; long n; } State;
#elif OP == OP_LSE
typedef struct { ACC m; ACC s; } State;
#elif OP == OP_AMINMAX
typedef struct { ACC lo; ACC hi; } State;
#else
typedef struct { ACC v; } State;
#endif

#if ACC_FLOAT
#define ACC_LOWEST (-INFINITY)
#define ACC_HIGHEST INFINITY
#else
#define ACC_LOWEST LONG_MIN
#define ACC_HIGHEST LONG_MAX
#endif

inline State s_init(uint mode) {
  State s;
#if OP == OP_ARG
  s.v = 0;
  s.i = -1;
#elif OP == OP_WELFORD
  s.mean = 0;
  s.m2 = 0;
  s.n = 0;
#elif OP == OP_LSE
  s.m = -INFINITY;
  s.s = 0;
#elif OP == OP_PROD
  s.v = 1;
#elif OP == OP_AMINMAX
  s.lo = ACC_HIGHEST;
  s.hi = ACC_LOWEST;
#elif OP == OP_MINMAX
  s.v = (mode & MODE_MIN) ? ACC_HIGHEST : ACC_LOWEST;
#else
  s.v = 0;
#endif
  return s;
}

// Element map applied before accumulation (norms take |x|^p etc.). `mode` is uniform across
// the NDRange, so the switch costs no divergence.
inline ACC s_map(ACC x, uint mode, ACC p0) {
  switch (mode & MAP_MASK) {
    case MAP_NAN_TO_ZERO: return IS_NAN(x) ? (ACC)0 : x;
#if ACC_FLOAT
    case MAP_ABS: return fabs(x);
    case MAP_SQUARE: return x * x;
    case MAP_POW: return pow(fabs(x), p0);
#endif
    case MAP_NONZERO: return (ACC)(x != 0);
    default: return x;
  }
}

// NaN-propagating max (min with is_min): the CPU's amax/amin semantics.
inline ACC nan_pick(ACC a, ACC b, bool is_min) {
  if (IS_NAN(a)) return a;
  return (IS_NAN(b) || (is_min ? b < a : b > a)) ? b : a;
}

// Whether (va, ia) wins over (vb, ib) for argmax/argmin; ties and NaNs go to the lower index.
inline bool arg_better(ACC va, long ia, ACC vb, long ib, bool is_min) {
  bool na = IS_NAN(va), nb = IS_NAN(vb);
  if (na || nb) return na && (!nb || ia < ib);
  return (is_min ? va < vb : va > vb) || (va == vb && ia < ib);
}

inline State s_combine(State a, State b, uint mode) {
#if OP == OP_ARG
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  return arg_better(b.v, b.i, a.v, a.i, (mode & MODE_MIN) != 0) ? b : a;
#elif OP == OP_WELFORD
  long n = a.n + b.n;
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  State r;
  ACC delta = b.mean - a.mean;
  ACC fb = (ACC)b.n / (ACC)n;
  r.mean = a.mean + delta * fb;
  r.m2 = a.m2 + b.m2 + delta * delta * (ACC)a.n * fb;
  r.n = n;
  return r;
#elif OP == OP_LSE
  if (isnan(a.m)) return a;  // a NaN element makes m NaN (sticky)
  if (isnan(b.m)) return b;
  if (b.m > a.m) {
    State t = a;
    a = b;
    b = t;
  }
  if (b.m == -INFINITY) return a;  // b holds no finite mass (or a is +inf and b empty)
  a.s += b.s * (b.m == a.m ? (ACC)1 : exp(b.m - a.m));
  return a;
#elif OP == OP_AMINMAX
  State r;
  r.lo = nan_pick(a.lo, b.lo, true);
  r.hi = nan_pick(a.hi, b.hi, false);
  return r;
#else
  State r;
#if OP == OP_SUM
  r.v = a.v + b.v;
#elif OP == OP_PROD
  r.v = a.v * b.v;
#else
  r.v = nan_pick(a.v, b.v, (mode & MODE_MIN) != 0);
#endif
  return r;
#endif
}

// Adds element x (already mapped) with reduction index idx to a serial state.
inline State s_add(State s, ACC x, long idx, uint mode) {
#if OP == OP_ARG
  if (s.i < 0 || arg_better(x, idx, s.v, s.i, (mode & MODE_MIN) != 0)) {
    s.v = x;
    s.i = idx;
  }
  return s;
#elif OP == OP_WELFORD
  s.n += 1;
  ACC delta = x - s.mean;
  s.mean += delta / (ACC)s.n;
  s.m2 += delta * (x - s.mean);
  return s;
#elif OP == OP_LSE
  if (x == -INFINITY) return s;
  if (isnan(x)) {
    s.m = x;
    return s;
  }
  if (x > s.m) {
    s.s = s.s * exp(s.m - x) + (ACC)1;
    s.m = x;
  } else {
    s.s += (x == s.m) ? (ACC)1 : exp(x - s.m);  // x == m covers m == +inf
  }
  return s;
#elif OP == OP_AMINMAX
  State e;
  e.lo = x;
  e.hi = x;
  return s_combine(s, e, mode);
#else
  State e;
  e.v = x;
  return s_combine(s, e, mode);
#endif
}

// Final value(s) of an output. p0: exponent (norm p) or correction (var); p1: divisor (mean)
// or 1/exponent (norm p).
inline void s_store(State s, __global OUT_T* y, long oy, __global OUT2_T* y2, long oy2, uint mode, ACC p0, ACC p1) {
#if OP == OP_ARG
  if (mode & MODE_VALUES) STORE(y, oy, s.v);
  y2[oy2] = s.i;
#elif OP == OP_WELFORD
  ACC dof = (ACC)s.n - p0;
  ACC var = s.m2 / (dof > 0 ? dof : (ACC)0);
  if (mode & MODE_STD) var = sqrt(var);
  STORE(y, oy, var);
  if (mode & MODE_MEAN) {
    __global OUT_T* ym = (__global OUT_T*)y2;
    STORE(ym, oy2, s.n > 0 ? s.mean : (ACC)NAN);
  }
#elif OP == OP_LSE
  STORE(y, oy, s.m == -INFINITY ? s.m : s.m + log(s.s));
#elif OP == OP_AMINMAX
  STORE(y, oy, s.lo);
  __global OUT_T* yh = (__global OUT_T*)y2;
  STORE(yh, oy2, s.hi);
#elif OP == OP_SUM && ACC_FLOAT
  ACC v = s.v;
  switch (mode & FIN_MASK) {
    case FIN_DIV: v = v / p1; break;
    case FIN_SQRT: v = sqrt(v); break;
    case FIN_POW: v = pow(v, p1); break;
    default: break;
  }
  STORE(y, oy, v);
#elif OP == OP_MINMAX
  // all/any reduce (x != 0) with min/max: an empty reduction leaves +-inf, i.e. true/false.
  STORE(y, oy, (mode & MAP_MASK) == MAP_NONZERO ? (ACC)(s.v > 0) : s.v);
#else
  STORE(y, oy, s.v);
#endif
}

// Compensated (Kahan) summation step in type T (ACC, or a vector of it: the conditional then
// selects per lane). An infinite partial sum resets the compensation, which would otherwise
// turn inf into NaN (inf - inf).
#define KAHAN_ADD_T(T, sum, comp, v)               \
  do {                                             \
    T y_ = (v) - (comp);                           \
    T t_ = (sum) + y_;                             \
    (comp) = isinf(t_) ? (T)0 : (t_ - (sum)) - y_; \
    (sum) = t_;                                    \
  } while (0)
#define KAHAN_ADD(sum, comp, v) KAHAN_ADD_T(ACC, sum, comp, v)

// ---- geometry ------------------------------------------------------------------------------
// Kept dims (innermost first): size, input stride, output strides; reduced dims: size, input
// stride (innermost first, so for argmax the index is the row-major index). Strides are in
// elements. The host always provides at least one kept and one reduced dim.
typedef struct {
  uint kdims, rdims;
  ulong ksize[MAX_DIMS];
  long kin[MAX_DIMS];
  long kout[MAX_DIMS];
  long kout2[MAX_DIMS];
  ulong rsize[MAX_DIMS];
  long rin[MAX_DIMS];
} Geom;

// Offsets of output o in the input and the two outputs.
inline void kept_offsets(const Geom* g, ulong o, long* in, long* out, long* out2) {
  long a = 0, b = 0, c = 0;
  for (uint d = 0; d < g->kdims; ++d) {
    ulong sz = g->ksize[d];
    ulong ix = o % sz;
    o /= sz;
    a += (long)ix * g->kin[d];
    b += (long)ix * g->kout[d];
    c += (long)ix * g->kout2[d];
  }
  *in = a;
  *out = b;
  *out2 = c;
}

// Input offset of reduction index r (32-bit arithmetic: the host guarantees nred < 2^32).
inline long reduced_offset(const Geom* g, uint r) {
  long off = 0;
  for (uint d = 0; d < g->rdims; ++d) {
    uint sz = (uint)g->rsize[d];
    uint ix = r % sz;
    r /= sz;
    off += (long)ix * g->rin[d];
  }
  return off;
}

// Combines the C states of each of the P outputs of this group; the result for output slot
// `slot` ends up in scratch[SIDX(0, slot)]. Unrolled over the compile-time LOCAL_SIZE (straight-line
// barriers compile much faster on PoCL than a barrier inside a loop); C <= LOCAL_SIZE at run time.
#define SIDX(coop, slot) (row_mode ? (slot) * C + (coop) : (coop) * P + (slot))
#define TREE_STEP(h)                                                                              \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
  if ((h) < C && coop < (h))                                                                      \
    scratch[SIDX(coop, slot)] = s_combine(scratch[SIDX(coop, slot)], scratch[SIDX(coop + (h), slot)], mode);
inline void tree(__local State* scratch, uint coop, uint slot, uint C, uint P, uint row_mode, uint mode) {
#if LOCAL_SIZE > 512
  TREE_STEP(512)
#endif
#if LOCAL_SIZE > 256
  TREE_STEP(256)
#endif
#if LOCAL_SIZE > 128
  TREE_STEP(128)
#endif
  TREE_STEP(64) TREE_STEP(32) TREE_STEP(16) TREE_STEP(8) TREE_STEP(4) TREE_STEP(2) TREE_STEP(1)
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Loads a partial state written by another work-group of this launch (see last_group_arrive in
// common.clh): word by word through a volatile pointer, so no stale L1 line is read.
typedef union { State s; uint w[sizeof(State) / sizeof(uint)]; } StateWords;
inline State ws_load(__global const State* p) {
  volatile __global const uint* q = (volatile __global const uint*)p;
  StateWords u;
  for (uint i = 0; i < sizeof(State) / sizeof(uint); ++i) u.w[i] = q[i];
  return u.s;
}

// Combines the nsplit partial states ws[k * nout + o] of outputs o = o_first + slot (slot <
// nslots) in a fixed order and stores them: column layout, P = LOCAL_SIZE >> coop_log2 slots,
// C = 1 << coop_log2 items per output striding over k, then the local tree. Serves both
// reduce_finish and the last group of a split reduce_fwd, so both give the same bits.
inline void finish_outputs(__local State* scratch, __global const State* w, __global OUT_T* y, __global OUT2_T* y2,
                           const Geom* g, ulong nout, ulong nsplit, ulong o_first, uint nslots, uint coop_log2,
                           uint mode, ACC p0, ACC p1) {
  const uint row_mode = 0;
  const uint lid = get_local_id(0);
  const uint C = 1u << coop_log2, P = LOCAL_SIZE >> coop_log2;
  const uint coop = lid / P, slot = lid & (P - 1);
  const ulong o = o_first + slot;
  const bool valid = slot < nslots && o < nout;
  State s = s_init(mode);
  if (valid)
    for (ulong k = coop; k < nsplit; k += C) s = s_combine(s, ws_load(w + k * nout + o), mode);
  scratch[lid] = s;
  tree(scratch, coop, slot, C, P, row_mode, mode);
  if (coop == 0 && valid) {
    long in, oy, oy2;
    kept_offsets(g, o, &in, &oy, &oy2);
    s_store(scratch[SIDX(0, slot)], y, oy, y2, oy2, mode, p0, p1);
  }
}

#ifndef FINISH
// NDRange: (groups * LOCAL_SIZE, nsplit). Group g serves outputs [g*P, g*P+P); dim 1 picks the
// chunk [split*chunk, split*chunk+chunk) of the reduced range. With nsplit == 1 the outputs are
// written directly. Otherwise states go to ws[split * nout + o] and, when `counters` is given
// (Device::arrival_counters, one per group column), the last of the nsplit groups of a column
// combines them (finish_outputs with C = 1 << fin_log2); without counters reduce_finish does.
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void reduce_fwd(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), PTR_ARG(OUT2_T, y2), PTR_ARG(State, ws), __global uint* counters,
                Geom g, ulong nout, ulong nred, ulong chunk, uint coop_log2, uint fin_log2, uint row_mode, uint mode,
                ACC p0, ACC p1) {
  __local State scratch[LOCAL_SIZE];
  __local uint last_flag;
  const uint lid = get_local_id(0);
  const uint C = 1u << coop_log2, P = LOCAL_SIZE >> coop_log2;
  const uint coop = row_mode ? (lid & (C - 1)) : (lid / P);
  const uint slot = row_mode ? (lid >> coop_log2) : (lid & (P - 1));
  const ulong o = (ulong)get_group_id(0) * P + slot;
  const ulong split = get_group_id(1), nsplit = get_num_groups(1);
  const ulong begin = split * chunk;
  const ulong end = min(nred, begin + chunk);

  State s = s_init(mode);
  long oy = 0, oy2 = 0;
  if (o < nout) {
    __global const IN_T* px = PTR(IN_T, x);
    long base;
    kept_offsets(&g, o, &base, &oy, &oy2);
    px += base;
#if OP == OP_SUM && ACC_FLOAT
    ACC comp = 0;  // Kahan compensation: keeps a long serial slice at float rounding
#endif
    if (g.rdims == 1) {
      const long st = g.rin[0];
      long off = (long)(begin + coop) * st;
      const long step = (long)C * st;
      ulong r = begin + coop;
      // UNROLL loads are issued before they are accumulated, so each item keeps several memory
      // requests in flight; the accumulation order (and argmax's first-index rule) is unchanged.
#if OP == OP_SUM && ACC_FLOAT && defined(SUM_LANES)
      // CPU devices: UNROLL independent compensated sums (a work-item's serial loop runs on one
      // core, where a single Kahan chain is bound by its add latency), folded into the main
      // sum before the remainder.
      ACC lane_sum[UNROLL], lane_comp[UNROLL];
      for (int u = 0; u < UNROLL; ++u) lane_sum[u] = lane_comp[u] = 0;
#endif
      for (; r + (UNROLL - 1) * (ulong)C < end; r += UNROLL * (ulong)C, off += UNROLL * step) {
        ACC v[UNROLL];
        for (int u = 0; u < UNROLL; ++u) v[u] = LOAD(px, off + u * step);
        for (int u = 0; u < UNROLL; ++u) {
          ACC m = s_map(v[u], mode, p0);
#if OP == OP_SUM && ACC_FLOAT && defined(SUM_LANES)
          KAHAN_ADD(lane_sum[u], lane_comp[u], m);
#elif OP == OP_SUM && ACC_FLOAT
          KAHAN_ADD(s.v, comp, m);
#else
          s = s_add(s, m, (long)(r + u * (ulong)C), mode);
#endif
        }
      }
#if OP == OP_SUM && ACC_FLOAT && defined(SUM_LANES)
      for (int u = 0; u < UNROLL; ++u) {
        KAHAN_ADD(s.v, comp, lane_sum[u]);
        KAHAN_ADD(s.v, comp, -lane_comp[u]);
      }
#endif
      for (; r < end; r += C, off += step) {
        ACC v = s_map(LOAD(px, off), mode, p0);
#if OP == OP_SUM && ACC_FLOAT
        KAHAN_ADD(s.v, comp, v);
#else
        s = s_add(s, v, (long)r, mode);
#endif
      }
    } else {
      for (ulong r = begin + coop; r < end; r += C) {
        ACC v = s_map(LOAD(px, reduced_offset(&g, (uint)r)), mode, p0);
#if OP == OP_SUM && ACC_FLOAT
        KAHAN_ADD(s.v, comp, v);
#else
        s = s_add(s, v, (long)r, mode);
#endif
      }
    }
  }
  scratch[lid] = s;
  tree(scratch, coop, slot, C, P, row_mode, mode);
  if (coop == 0 && o < nout) {
    s = scratch[SIDX(0, slot)];
    if (nsplit == 1)
      s_store(s, PTR(OUT_T, y), oy, PTR(OUT2_T, y2), oy2, mode, p0, p1);
    else
      PTR(State, ws)[split * nout + o] = s;
  }
  if (nsplit == 1 || counters == 0) return;
  if (!last_group_arrive(counters + get_group_id(0), (uint)nsplit, &last_flag)) return;
  finish_outputs(scratch, PTR(State, ws), PTR(OUT_T, y), PTR(OUT2_T, y2), &g, nout, nsplit, (ulong)get_group_id(0) * P,
                 P, fin_log2, mode, p0, p1);
}

#if defined(SUM_VEC) && OP == OP_SUM && ACC_FLOAT
// CPU devices (ops/reduce.cpp's run_sum_vec): float/double sums over one strided dim in
// SUM_VEC-wide vectors. A CPU runs a work-item's loop on one core in its vector registers;
// reduce_fwd's scalar compensated chains are bound by the latency of their adds (PoCL,
// 2-core AVX2 VM: ~3 ns per element). Each vector lane is its own compensated sum; the
// operand is the input's own type (IN_T == ACC, no dtype= conversion: the host checks).
// reduce_sum_cols: the kept dim is unit-stride, a work-item sums SUM_VEC adjacent outputs
// walking the reduced dim (a bias gradient: the columns of dY); NDRange ceil(nout/SUM_VEC).
// reduce_sum_rows: the reduced dim is unit-stride, a work-item sums the rows [item*per_item,
// +per_item), each SUM_VEC elements at a time, then its lanes and the tail. Local size 1: a
// CPU device pays per work-group, and its own vectorization across work-items would turn
// these loops into gathers.
#define SUM_CAT_(a, b) a##b
#define SUM_CAT(a, b) SUM_CAT_(a, b)
#define VACC SUM_CAT(ACC, SUM_VEC)
#define VLOADS SUM_CAT(vload, SUM_VEC)
#define VSTORES SUM_CAT(vstore, SUM_VEC)
inline VACC v_map(VACC x, uint mode, ACC p0) {
  switch (mode & MAP_MASK) {
    case MAP_NAN_TO_ZERO: return select(x, (VACC)0, isnan(x));
    case MAP_ABS: return fabs(x);
    case MAP_SQUARE: return x * x;
    case MAP_POW: return pow(fabs(x), (VACC)p0);
    case MAP_NONZERO: return select((VACC)0, (VACC)1, x != (VACC)0);
    default: return x;
  }
}
#define V_KAHAN_ADD(sum, comp, v) KAHAN_ADD_T(VACC, sum, comp, v)
// Independent compensated sums per work-item (interleaved rows or vectors), combined at the
// end in a fixed order: one chain would wait on the latency of its dependent adds.
#define SUM_ILP 4
// (sum, comp) of SUM_ILP vector chains folded into chain 0: sum - comp is their total.
#define V_KAHAN_FOLD(s, c)                               \
  do {                                                   \
    _Pragma("unroll") for (int u_ = 1; u_ < SUM_ILP; ++u_) { \
      V_KAHAN_ADD(s[0], c[0], s[u_]);                   \
      V_KAHAN_ADD(s[0], c[0], -c[u_]);                  \
    }                                                    \
  } while (0)

__kernel void reduce_sum_cols(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), ulong nout, ulong nred, long r_in, long o_out,
                              uint mode, ACC p0, ACC p1) {
  const ulong o0 = get_global_id(0) * SUM_VEC;
  if (o0 >= nout) return;
  __global const ACC* px = PTR(IN_T, x) + o0;
  ACC lanes[SUM_VEC];
  const uint n = (uint)min((ulong)SUM_VEC, nout - o0);
  if (n == SUM_VEC) {
    VACC s[SUM_ILP], c[SUM_ILP];
#pragma unroll
    for (int u = 0; u < SUM_ILP; ++u) s[u] = c[u] = 0;
    ulong r = 0;
    for (; r + SUM_ILP <= nred; r += SUM_ILP)
#pragma unroll
      for (int u = 0; u < SUM_ILP; ++u) V_KAHAN_ADD(s[u], c[u], v_map(VLOADS(0, px + (long)(r + u) * r_in), mode, p0));
    for (; r < nred; ++r) V_KAHAN_ADD(s[0], c[0], v_map(VLOADS(0, px + (long)r * r_in), mode, p0));
    V_KAHAN_FOLD(s, c);
    VSTORES(s[0] - c[0], 0, lanes);
  } else {
    for (uint i = 0; i < n; ++i) {
      ACC s = 0, c = 0;
      for (ulong r = 0; r < nred; ++r) KAHAN_ADD(s, c, s_map(px[(long)r * r_in + i], mode, p0));
      lanes[i] = s - c;
    }
  }
  for (uint i = 0; i < n; ++i) {
    State st;
    st.v = lanes[i];
    s_store(st, PTR(OUT_T, y), (long)(o0 + i) * o_out, 0, 0, mode, p0, p1);
  }
}

__kernel void reduce_sum_rows(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), ulong nout, ulong nred, ulong per_item, long o_in,
                              long o_out, uint mode, ACC p0, ACC p1) {
  const ulong begin = get_global_id(0) * per_item, end = min(nout, begin + per_item);
  for (ulong o = begin; o < end; ++o) {
    __global const ACC* px = PTR(IN_T, x) + (long)o * o_in;
    VACC vs[SUM_ILP], vc[SUM_ILP];
#pragma unroll
    for (int u = 0; u < SUM_ILP; ++u) vs[u] = vc[u] = 0;
    ulong r = 0;
    for (; r + SUM_ILP * SUM_VEC <= nred; r += SUM_ILP * SUM_VEC)
#pragma unroll
      for (int u = 0; u < SUM_ILP; ++u) V_KAHAN_ADD(vs[u], vc[u], v_map(VLOADS(0, px + r + u * SUM_VEC), mode, p0));
    for (; r + SUM_VEC <= nred; r += SUM_VEC) V_KAHAN_ADD(vs[0], vc[0], v_map(VLOADS(0, px + r), mode, p0));
    V_KAHAN_FOLD(vs, vc);
    ACC sums[SUM_VEC], comps[SUM_VEC];
    VSTORES(vs[0], 0, sums);
    VSTORES(vc[0], 0, comps);
    State st;
    st.v = 0;
    ACC c = 0;
    for (uint i = 0; i < SUM_VEC; ++i) {
      KAHAN_ADD(st.v, c, sums[i]);
      KAHAN_ADD(st.v, c, -comps[i]);
    }
    for (; r < nred; ++r) KAHAN_ADD(st.v, c, s_map(px[r], mode, p0));
    st.v -= c;
    s_store(st, PTR(OUT_T, y), (long)o * o_out, 0, 0, mode, p0, p1);
  }
}
#endif

#else
// Fallback second stage (built separately with -DFINISH) for split reductions launched without
// arrival counters: combines the nsplit partial states of each output and stores.
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void reduce_finish(PTR_ARG(OUT_T, y), PTR_ARG(OUT2_T, y2), PTR_ARG(State, ws), Geom g, ulong nout, ulong nsplit,
                   uint coop_log2, uint mode, ACC p0, ACC p1) {
  __local State scratch[LOCAL_SIZE];
  const uint P = LOCAL_SIZE >> coop_log2;
  finish_outputs(scratch, PTR(State, ws), PTR(OUT_T, y), PTR(OUT2_T, y2), &g, nout, nsplit,
                 (ulong)get_group_id(0) * P, P, coop_log2, mode, p0, p1);
}
#endif
