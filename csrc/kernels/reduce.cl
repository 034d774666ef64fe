// Reductions (sum/mean/prod/amax/amin/argmax/argmin/all/any/norm/var/logsumexp) over any set of
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
// chunks whose states go to a workspace; reduce_finish then tree-combines them per output.
#include "common.clh"

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256  // work-items per group (power of two)
#endif
#ifndef MAX_DIMS
#define MAX_DIMS 8  // kept / reduced dims after coalescing (host falls back to a copy beyond)
#endif

#define OP_SUM 0      // also mean (divisor p0), count_nonzero (VAL_BOOL)
#define OP_NANSUM 1
#define OP_PROD 2
#define OP_MAX 3
#define OP_MIN 4
#define OP_ARGMAX 5   // (value, first index); NaN counts as the largest
#define OP_ARGMIN 6   // (value, first index); NaN counts as the smallest
#define OP_ALL 7
#define OP_ANY 8
#define OP_NORM 9     // NORM_KIND below
#define OP_WELFORD 10 // var/std (+mean): Welford per item, Chan et al. to combine
#define OP_LSE 11     // logsumexp: running (max, scaled sum)

#define NORM_COUNT 0  // ord 0: number of nonzeros
#define NORM_L1 1
#define NORM_L2 2
#define NORM_LP 3     // sum |x|^p0, then ^p1 (= 1/p)
#define NORM_INF 4
#define NORM_NEGINF 5

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
#ifndef NORM_KIND
#define NORM_KIND NORM_L2
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
#if OP == OP_ARGMAX || OP == OP_ARGMIN
typedef struct { ACC v; long i; } State;  // i < 0: no element yet
#elif OP == OP_WELFORD
typedef struct { ACC mean; ACC m2; long n; } State;
#elif OP == OP_LSE
typedef struct { ACC m; ACC s; } State;
#else
typedef struct { ACC v; } State;
#endif

#if OP == OP_SUM || OP == OP_NANSUM || (OP == OP_NORM && NORM_KIND <= NORM_LP)
#define SUM_LIKE 1
#else
#define SUM_LIKE 0
#endif

#if ACC_FLOAT
#define ACC_LOWEST (-INFINITY)
#define ACC_HIGHEST INFINITY
#else
#define ACC_LOWEST LONG_MIN
#define ACC_HIGHEST LONG_MAX
#endif

inline State s_init(void) {
  State s;
#if OP == OP_ARGMAX || OP == OP_ARGMIN
  s.v = 0;
  s.i = -1;
#elif OP == OP_WELFORD
  s.mean = 0;
  s.m2 = 0;
  s.n = 0;
#elif OP == OP_LSE
  s.m = -INFINITY;
  s.s = 0;
#elif OP == OP_PROD || OP == OP_ALL
  s.v = 1;
#elif OP == OP_MAX
  s.v = ACC_LOWEST;
#elif OP == OP_MIN || (OP == OP_NORM && NORM_KIND == NORM_NEGINF)
  s.v = ACC_HIGHEST;
#else
  s.v = 0;
#endif
  return s;
}

// NaN-propagating max / min (the CPU's amax/amin semantics).
inline ACC nan_max(ACC a, ACC b) { return IS_NAN(a) ? a : (IS_NAN(b) || b > a) ? b : a; }
inline ACC nan_min(ACC a, ACC b) { return IS_NAN(a) ? a : (IS_NAN(b) || b < a) ? b : a; }

// Element map applied before accumulation (norms take |x|^p etc.).
inline ACC s_map(ACC x, ACC p0) {
#if OP == OP_NANSUM
  return IS_NAN(x) ? (ACC)0 : x;
#elif OP == OP_ALL || OP == OP_ANY
  return (ACC)(x != 0);
#elif OP == OP_NORM
#if NORM_KIND == NORM_COUNT
  return (ACC)(x != 0);
#elif NORM_KIND == NORM_L2
  return x * x;
#elif NORM_KIND == NORM_LP
  return pow(fabs(x), p0);
#else
  return fabs(x);
#endif
#else
  return x;
#endif
}

// Whether (va, ia) wins over (vb, ib) for argmax/argmin; ties and NaNs go to the lower index.
inline bool arg_better(ACC va, long ia, ACC vb, long ib) {
  bool na = IS_NAN(va), nb = IS_NAN(vb);
  if (na || nb) return na && (!nb || ia < ib);
#if OP == OP_ARGMAX
  return va > vb || (va == vb && ia < ib);
#else
  return va < vb || (va == vb && ia < ib);
#endif
}

inline State s_combine(State a, State b) {
#if OP == OP_ARGMAX || OP == OP_ARGMIN
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  return arg_better(b.v, b.i, a.v, a.i) ? b : a;
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
#else
  State r;
#if SUM_LIKE
  r.v = a.v + b.v;
#elif OP == OP_PROD
  r.v = a.v * b.v;
#elif OP == OP_MAX || (OP == OP_NORM && NORM_KIND == NORM_INF)
  r.v = nan_max(a.v, b.v);
#elif OP == OP_MIN || (OP == OP_NORM && NORM_KIND == NORM_NEGINF)
  r.v = nan_min(a.v, b.v);
#elif OP == OP_ALL
  r.v = (a.v != 0 && b.v != 0);
#elif OP == OP_ANY
  r.v = (a.v != 0 || b.v != 0);
#endif
  return r;
#endif
}

// Adds element x (already mapped) with reduction index idx to a serial state.
inline State s_add(State s, ACC x, long idx) {
#if OP == OP_ARGMAX || OP == OP_ARGMIN
  if (s.i < 0 || arg_better(x, idx, s.v, s.i)) {
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
    s.s += (x == s.m) ? (ACC)1 : exp(x - s.m);  // x == m covers m == +inf; NaN makes s NaN
  }
  return s;
#else
  State e;
  e.v = x;
  return s_combine(s, e);
#endif
}

// Final value(s) of an output. p0/p1: divisor (mean), correction (var), exponents (norm).
inline void s_store(State s, __global OUT_T* y, long oy, __global OUT2_T* y2, long oy2, ACC p0, ACC p1) {
#if OP == OP_ARGMAX || OP == OP_ARGMIN
  if (p0 != 0) STORE(y, oy, s.v);  // max.dim also wants the values; argmax only the index
  y2[oy2] = s.i;
#elif OP == OP_WELFORD
  // p0: correction; p1: 1 for std, 2 to also write the mean (through y2, of y's dtype).
  ACC dof = (ACC)s.n - p0;
  ACC var = s.m2 / (dof > 0 ? dof : (ACC)0);
  int flags = (int)p1;
  if (flags & 1) var = sqrt(var);
  STORE(y, oy, var);
  if (flags & 2) {
    __global OUT_T* ym = (__global OUT_T*)y2;
    STORE(ym, oy2, s.n > 0 ? s.mean : (ACC)NAN);
  }
#elif OP == OP_LSE
  STORE(y, oy, s.m == -INFINITY ? s.m : s.m + log(s.s));
#elif OP == OP_SUM && ACC_FLOAT
  STORE(y, oy, s.v / p0);
#elif OP == OP_NORM && NORM_KIND == NORM_L2
  STORE(y, oy, sqrt(s.v));
#elif OP == OP_NORM && NORM_KIND == NORM_LP
  STORE(y, oy, pow(s.v, p1));
#else
  STORE(y, oy, s.v);
#endif
}

// Compensated (Kahan) summation step. An infinite partial sum resets the compensation, which
// would otherwise turn inf into NaN (inf - inf).
#define KAHAN_ADD(sum, comp, v)                      \
  do {                                               \
    ACC y_ = (v) - (comp);                           \
    ACC t_ = (sum) + y_;                             \
    (comp) = isinf(t_) ? (ACC)0 : (t_ - (sum)) - y_; \
    (sum) = t_;                                      \
  } while (0)

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
    scratch[SIDX(coop, slot)] = s_combine(scratch[SIDX(coop, slot)], scratch[SIDX(coop + (h), slot)]);
inline void tree(__local State* scratch, uint coop, uint slot, uint C, uint P, uint row_mode) {
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

#ifndef FINISH
// Stage 1. NDRange: (groups * LOCAL_SIZE, nsplit). Group g serves outputs [g*P, g*P+P);
// dim 1 picks the chunk [split*chunk, split*chunk+chunk) of the reduced range. With nsplit == 1
// the outputs are written directly, otherwise states go to ws[split * nout + o].
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void reduce_fwd(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), PTR_ARG(OUT2_T, y2), PTR_ARG(State, ws), Geom g, ulong nout,
                ulong nred, ulong chunk, uint coop_log2, uint row_mode, ACC p0, ACC p1) {
  __local State scratch[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const uint C = 1u << coop_log2, P = LOCAL_SIZE >> coop_log2;
  const uint coop = row_mode ? (lid & (C - 1)) : (lid / P);
  const uint slot = row_mode ? (lid >> coop_log2) : (lid & (P - 1));
  const ulong o = (ulong)get_group_id(0) * P + slot;
  const ulong split = get_group_id(1), nsplit = get_num_groups(1);
  const ulong begin = split * chunk;
  const ulong end = min(nred, begin + chunk);

  State s = s_init();
  long oy = 0, oy2 = 0;
  if (o < nout) {
    __global const IN_T* px = PTR(IN_T, x);
    long base;
    kept_offsets(&g, o, &base, &oy, &oy2);
    px += base;
#if SUM_LIKE && ACC_FLOAT
    ACC comp = 0;  // Kahan compensation: keeps a long serial slice at float rounding
#endif
    if (g.rdims == 1) {
      const long st = g.rin[0];
      long off = (long)(begin + coop) * st;
      const long step = (long)C * st;
      for (ulong r = begin + coop; r < end; r += C, off += step) {
        ACC v = s_map(LOAD(px, off), p0);
#if SUM_LIKE && ACC_FLOAT
        KAHAN_ADD(s.v, comp, v);
#else
        s = s_add(s, v, (long)r);
#endif
      }
    } else {
      for (ulong r = begin + coop; r < end; r += C) {
        ACC v = s_map(LOAD(px, reduced_offset(&g, (uint)r)), p0);
#if SUM_LIKE && ACC_FLOAT
        KAHAN_ADD(s.v, comp, v);
#else
        s = s_add(s, v, (long)r);
#endif
      }
    }
  }
  scratch[lid] = s;
  tree(scratch, coop, slot, C, P, row_mode);
  if (coop == 0 && o < nout) {
    s = scratch[SIDX(0, slot)];
    if (nsplit == 1)
      s_store(s, PTR(OUT_T, y), oy, PTR(OUT2_T, y2), oy2, p0, p1);
    else
      PTR(State, ws)[split * nout + o] = s;
  }
}

#else
// Stage 2 (built separately with -DFINISH, only needed for split reductions): combines the nsplit partial states of each output (ws[k * nout + o]) and stores.
// Column layout: the P outputs of a group are adjacent, C items split the partials.
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void reduce_finish(PTR_ARG(OUT_T, y), PTR_ARG(OUT2_T, y2), PTR_ARG(State, ws), Geom g, ulong nout, ulong nsplit,
                   uint coop_log2, ACC p0, ACC p1) {
  __local State scratch[LOCAL_SIZE];
  const uint row_mode = 0;
  const uint lid = get_local_id(0);
  const uint C = 1u << coop_log2, P = LOCAL_SIZE >> coop_log2;
  const uint coop = lid / P, slot = lid & (P - 1);
  const ulong o = (ulong)get_group_id(0) * P + slot;
  State s = s_init();
  if (o < nout) {
    __global const State* w = PTR(State, ws);
    for (ulong k = coop; k < nsplit; k += C) s = s_combine(s, w[k * nout + o]);
  }
  scratch[lid] = s;
  tree(scratch, coop, slot, C, P, row_mode);
  if (coop == 0 && o < nout) {
    long in, oy, oy2;
    kept_offsets(&g, o, &in, &oy, &oy2);
    s_store(scratch[SIDX(0, slot)], PTR(OUT_T, y), oy, PTR(OUT2_T, y2), oy2, p0, p1);
  }
}
#endif
