// Inclusive scans along one dim of a strided tensor: cumsum, cumprod, cummax/cummin (values and
// indices) and logcumsumexp. Rows (all other dims) are described by a runtime geometry; the op,
// dtypes and tile sizes are build options.
//  scan_rows:     one work-group per (row, block) walks the block in tiles of LOCAL_SIZE * ITEMS
//                 elements: each item scans ITEMS elements in registers, the item totals are
//                 scanned in local memory, and a running carry links the tiles.
//  scan_partials: when there are too few rows to fill the device, each row is cut into blocks
//                 (reduce-then-scan): this reduces every block but the last to one state, and
//                 scan_rows then starts block b from the combined states of blocks 0..b-1.
//  scan_cols:     one work-item per row, serial along the scan dim; adjacent items take adjacent
//                 rows, so loads coalesce when the scan dim is outer (e.g. cumsum over dim 0).
//                 Also for many short rows. With too few rows for the device, the scan dim is cut
//                 into blocks the same way (scan_cols_partials, one item per (row, block)).
// Every op's combine is associative and commutative (cummax/cummin pick the larger (value,
// index) pair, NaN above everything, which is exactly the CPU's serial rule: a later element
// wins ties and every NaN wins), so blocks and local-memory trees may combine in any order.
// Accumulation is in ACC (float for float/half/bfloat16, double, int64 for integers and bool).
#include "common.clh"

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256  // work-items per group of scan_rows/scan_partials (power of two, <= 1024)
#endif
#ifndef ITEMS
#define ITEMS 4  // consecutive elements scanned serially by one item per tile
#endif
#ifndef MAX_DIMS
#define MAX_DIMS 8
#endif

#define SCAN_SUM 0
#define SCAN_PROD 1
#define SCAN_MAX 2  // cummax: values and int64 indices
#define SCAN_MIN 3  // cummin
#define SCAN_LSE 4  // logcumsumexp (floating types only)

#ifndef SCAN_OP
#define SCAN_OP SCAN_SUM
#endif
#ifndef IN_T
#define IN_T float
#endif
#ifndef IN_KIND
#define IN_KIND 0
#endif
#ifndef ACC
#define ACC float
#endif
#ifndef ACC_FLOAT
#define ACC_FLOAT 1  // whether ACC is a floating type (NaN rules apply)
#endif
#ifndef OUT_T
#define OUT_T float
#endif
#ifndef OUT_KIND
#define OUT_KIND 0
#endif

#define KIND_HALF 1
#define KIND_BF16 2
#define KIND_BOOL 3

#if IN_KIND == KIND_HALF
#define LOAD_RAW(p, i) vload_half((i), (__global const half*)(p))
#elif IN_KIND == KIND_BF16
#define LOAD_RAW(p, i) bf16_to_float((p)[i])
#else
#define LOAD_RAW(p, i) ((p)[i])
#endif

// Input -> the scan's dtype (the CPU casts the input to the output dtype first) -> ACC.
#if defined(VAL_HALF)
inline ACC to_val(float x) {
  ushort h;
  vstore_half(x, 0, (__private half*)&h);
  return (ACC)vload_half(0, (__private const half*)&h);
}
#elif defined(VAL_BF16)
inline ACC to_val(float x) { return (ACC)bf16_to_float(float_to_bf16(x)); }
#elif defined(VAL_CAST)
#define to_val(x) ((ACC)(VAL_CAST)(x))
#else
#define to_val(x) ((ACC)(x))
#endif
#define LOAD(p, i) to_val(LOAD_RAW(p, i))

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
#define ACC_LOWEST ((ACC)(-INFINITY))
#define ACC_HIGHEST ((ACC)INFINITY)
#else
#define IS_NAN(x) 0
#define ACC_LOWEST ((ACC)LONG_MIN)
#define ACC_HIGHEST ((ACC)LONG_MAX)
#endif

// ---- the scan's monoid -------------------------------------------------------------------
#if SCAN_OP == SCAN_MAX || SCAN_OP == SCAN_MIN
#define WITH_INDEX 1
typedef struct { ACC v; long i; } State;  // i == -1: identity (no element yet)
#else
#define WITH_INDEX 0
typedef ACC State;
#endif

inline State s_identity(void) {
#if SCAN_OP == SCAN_MAX
  State s = {ACC_LOWEST, -1};
  return s;
#elif SCAN_OP == SCAN_MIN
  State s = {ACC_HIGHEST, -1};
  return s;
#elif SCAN_OP == SCAN_PROD
  return (ACC)1;
#elif SCAN_OP == SCAN_LSE
  return (ACC)(-INFINITY);
#else
  return (ACC)0;
#endif
}

// Element x at position i of its row.
inline State s_elem(ACC x, ulong i) {
#if WITH_INDEX
  State s = {x, (long)i};
  return s;
#else
  return x;
#endif
}

inline State s_combine(State a, State b) {
#if SCAN_OP == SCAN_SUM
  return a + b;
#elif SCAN_OP == SCAN_PROD
  return a * b;
#elif SCAN_OP == SCAN_LSE
  // log(exp(a) + exp(b)); NaN propagates; equal infinities return themselves (no inf - inf).
  if (isnan(a) || isnan(b)) return a + b;
  const ACC mx = fmax(a, b), mn = fmin(a, b);
  if (mn == mx && isinf(mn)) return a;
  return mx + log1p(exp(mn - mx));
#else
#if SCAN_OP == SCAN_MAX
#define BEATS(x, y) ((x) > (y))
#else
#define BEATS(x, y) ((x) < (y))
#endif
  const bool an = IS_NAN(a.v), bn = IS_NAN(b.v);
  const bool b_wins = (an || bn) ? (bn && (!an || b.i > a.i)) : (BEATS(b.v, a.v) || (b.v == a.v && b.i > a.i));
  return b_wins ? b : a;
#endif
}

inline void s_store(__global OUT_T* py, long oy, __global long* pi, long oi, State s) {
#if WITH_INDEX
  STORE(py, oy, s.v);
  pi[oi] = s.i;
#else
  STORE(py, oy, s);
#endif
}

// Rows: kept dims (innermost first) with input/output/index strides; the scan dim: length and
// strides. The index strides are unused by ops without indices.
typedef struct {
  uint kdims, pad;
  ulong ksize[MAX_DIMS];
  long kin[MAX_DIMS];
  long kout[MAX_DIMS];
  long kidx[MAX_DIMS];
  ulong len;
  long sin, sout, sidx;
} ScanGeom;

inline void row_offsets(const ScanGeom* g, ulong r, long* in, long* out, long* idx) {
  long a = 0, b = 0, c = 0;
  for (uint d = 0; d < g->kdims; ++d) {
    ulong sz = g->ksize[d];
    ulong ix = r % sz;
    r /= sz;
    a += (long)ix * g->kin[d];
    b += (long)ix * g->kout[d];
    c += (long)ix * g->kidx[d];
  }
  *in = a;
  *out = b;
  *idx = c;
}

// Hillis-Steele step over the item totals, unrolled (straight-line barriers build faster on PoCL).
#define SCAN_STEP(off)                                                 \
  if ((off) < LOCAL_SIZE) {                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                      \
    State t_ = lid >= (off) ? scratch[lid - (off)] : s_identity();     \
    barrier(CLK_LOCAL_MEM_FENCE);                                      \
    scratch[lid] = s_combine(t_, scratch[lid]);                        \
  }

// Tree-combines scratch[0..LOCAL_SIZE) (each item has written its own slot) and returns the
// total to every item; scratch may be rewritten after the call.
#define TREE_STEP(h)                                                              \
  if ((h) < LOCAL_SIZE) {                                                         \
    barrier(CLK_LOCAL_MEM_FENCE);                                                 \
    if (lid < (h)) scratch[lid] = s_combine(scratch[lid], scratch[lid + (h)]);    \
  }
inline State tree_total(__local State* scratch, uint lid) {
  TREE_STEP(512) TREE_STEP(256) TREE_STEP(128) TREE_STEP(64) TREE_STEP(32) TREE_STEP(16) TREE_STEP(8)
  TREE_STEP(4) TREE_STEP(2) TREE_STEP(1)
  barrier(CLK_LOCAL_MEM_FENCE);
  const State t = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return t;
}

// NDRange: nrows * nblocks groups. Group (r, b) scans elements [b * chunk, b * chunk + chunk)
// of row r; with nblocks > 1 it starts from the totals of blocks 0..b-1 (ws[r * nblocks + k],
// written by scan_partials).
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_rows(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), PTR_ARG(long, yi), PTR_ARG(State, ws), ScanGeom g,
               ulong nblocks, ulong chunk) {
  __local State scratch[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const ulong grp = get_group_id(0);
  const ulong r = grp / nblocks, b = grp % nblocks;
  long ib, ob, oi;
  row_offsets(&g, r, &ib, &ob, &oi);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  __global OUT_T* py = PTR(OUT_T, y) + ob;
  __global long* pi = PTR(long, yi) + oi;
  State carry = s_identity();
  if (b > 0) {  // uniform across the group, so the barriers inside are too
    __global const State* w = PTR(State, ws) + r * nblocks;
    State t = s_identity();
    for (ulong k = lid; k < b; k += LOCAL_SIZE) t = s_combine(t, w[k]);
    scratch[lid] = t;
    carry = tree_total(scratch, lid);
  }
  const ulong end = min(g.len, (b + 1) * chunk);
  for (ulong tile = b * chunk; tile < end; tile += (ulong)LOCAL_SIZE * ITEMS) {
    const ulong first = tile + (ulong)lid * ITEMS;
    State v[ITEMS];
    State run = s_identity();
    for (uint k = 0; k < ITEMS; ++k) {
      const ulong i = first + k;
      if (i < end) run = s_combine(run, s_elem(LOAD(px, (long)i * g.sin), i));
      v[k] = run;
    }
    scratch[lid] = run;
    SCAN_STEP(1) SCAN_STEP(2) SCAN_STEP(4) SCAN_STEP(8) SCAN_STEP(16) SCAN_STEP(32) SCAN_STEP(64)
    SCAN_STEP(128) SCAN_STEP(256) SCAN_STEP(512)
    barrier(CLK_LOCAL_MEM_FENCE);
    const State before = s_combine(carry, lid > 0 ? scratch[lid - 1] : s_identity());
    for (uint k = 0; k < ITEMS; ++k) {
      const ulong i = first + k;
      if (i < end) s_store(py, (long)i * g.sout, pi, (long)i * g.sidx, s_combine(before, v[k]));
    }
    carry = s_combine(carry, scratch[LOCAL_SIZE - 1]);
    barrier(CLK_LOCAL_MEM_FENCE);  // scratch is rewritten by the next tile
  }
}

// NDRange: nrows * (nblocks - 1) groups; group (r, b) reduces block b of row r into
// ws[r * nblocks + b] (the last block's total is never needed).
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_partials(PTR_ARG(IN_T, x), PTR_ARG(State, ws), ScanGeom g, ulong nblocks, ulong chunk) {
  __local State scratch[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const ulong grp = get_group_id(0);
  const ulong r = grp / (nblocks - 1), b = grp % (nblocks - 1);
  long ib, ob, oi;
  row_offsets(&g, r, &ib, &ob, &oi);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  const ulong end = min(g.len, (b + 1) * chunk);
  State t = s_identity();
  for (ulong i = b * chunk + lid; i < end; i += LOCAL_SIZE) t = s_combine(t, s_elem(LOAD(px, (long)i * g.sin), i));
  scratch[lid] = t;
  t = tree_total(scratch, lid);
  if (lid == 0) PTR(State, ws)[r * nblocks + b] = t;
}

// NDRange: (nrows, nblocks). Item (r, b) scans elements [b * chunk, b * chunk + chunk) of row
// r serially, starting from the totals of its row's earlier blocks (ws[k * nrows + r], written
// by scan_cols_partials) when nblocks > 1.
__kernel void scan_cols(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), PTR_ARG(long, yi), PTR_ARG(State, ws), ScanGeom g,
                        ulong nrows, ulong chunk) {
  const ulong r = get_global_id(0), b = get_global_id(1);
  if (r >= nrows) return;
  long ib, ob, oi;
  row_offsets(&g, r, &ib, &ob, &oi);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  __global OUT_T* py = PTR(OUT_T, y) + ob;
  __global long* pi = PTR(long, yi) + oi;
  State run = s_identity();
  for (ulong k = 0; k < b; ++k) run = s_combine(run, PTR(State, ws)[k * nrows + r]);
  const ulong end = min(g.len, (b + 1) * chunk);
  for (ulong i = b * chunk; i < end; ++i) {
    run = s_combine(run, s_elem(LOAD(px, (long)i * g.sin), i));
    s_store(py, (long)i * g.sout, pi, (long)i * g.sidx, run);
  }
}

// NDRange: (nrows, nblocks - 1). Item (r, b) reduces block b of row r into ws[b * nrows + r].
__kernel void scan_cols_partials(PTR_ARG(IN_T, x), PTR_ARG(State, ws), ScanGeom g, ulong nrows, ulong chunk) {
  const ulong r = get_global_id(0), b = get_global_id(1);
  if (r >= nrows) return;
  long ib, ob, oi;
  row_offsets(&g, r, &ib, &ob, &oi);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  State t = s_identity();
  const ulong end = min(g.len, (b + 1) * chunk);
  for (ulong i = b * chunk; i < end; ++i) t = s_combine(t, s_elem(LOAD(px, (long)i * g.sin), i));
  PTR(State, ws)[b * nrows + r] = t;
}
