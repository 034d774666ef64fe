// Inclusive scans (cumsum, cumprod) along one dim of a strided tensor. Rows (all other dims)
// are described by a runtime geometry; the op and dtypes are build options.
//  scan_rows: one work-group per row walks it in tiles of LOCAL_SIZE * ITEMS elements: each
//             item scans ITEMS elements in registers, the item totals are scanned in local
//             memory, and a running carry links the tiles. For scans along a contiguous dim.
//  scan_cols: one work-item per row, serial along the scan dim; adjacent items take adjacent
//             rows, so loads coalesce when the scan dim is outer (e.g. cumsum over dim 0).
// Accumulation is in ACC (float for float/half/bfloat16, double, int64 for integers).
#include "common.clh"

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 256  // work-items per group of scan_rows (power of two, <= 1024)
#endif
#ifndef ITEMS
#define ITEMS 4  // consecutive elements scanned serially by one item per tile
#endif
#ifndef MAX_DIMS
#define MAX_DIMS 8
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

#ifdef SCAN_PROD
#define IDENTITY ((ACC)1)
#define OP(a, b) ((a) * (b))
#else
#define IDENTITY ((ACC)0)
#define OP(a, b) ((a) + (b))
#endif

// Rows: kept dims (innermost first) with input/output strides; the scan dim: length and strides.
typedef struct {
  uint kdims, pad;
  ulong ksize[MAX_DIMS];
  long kin[MAX_DIMS];
  long kout[MAX_DIMS];
  ulong len;
  long sin, sout;
} ScanGeom;

inline void row_offsets(const ScanGeom* g, ulong r, long* in, long* out) {
  long a = 0, b = 0;
  for (uint d = 0; d < g->kdims; ++d) {
    ulong sz = g->ksize[d];
    ulong ix = r % sz;
    r /= sz;
    a += (long)ix * g->kin[d];
    b += (long)ix * g->kout[d];
  }
  *in = a;
  *out = b;
}

// Hillis-Steele step over the item totals, unrolled (straight-line barriers build faster on PoCL).
#define SCAN_STEP(off)                                          \
  if ((off) < LOCAL_SIZE) {                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                               \
    ACC t_ = lid >= (off) ? scratch[lid - (off)] : IDENTITY;    \
    barrier(CLK_LOCAL_MEM_FENCE);                               \
    scratch[lid] = OP(scratch[lid], t_);                        \
  }

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_rows(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), ScanGeom g) {
  __local ACC scratch[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  long ib, ob;
  row_offsets(&g, get_group_id(0), &ib, &ob);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  __global OUT_T* py = PTR(OUT_T, y) + ob;
  ACC carry = IDENTITY;
  for (ulong tile = 0; tile < g.len; tile += (ulong)LOCAL_SIZE * ITEMS) {
    const ulong first = tile + (ulong)lid * ITEMS;
    ACC v[ITEMS];
    ACC run = IDENTITY;
    for (uint k = 0; k < ITEMS; ++k) {
      ulong i = first + k;
      ACC e = i < g.len ? LOAD(px, (long)i * g.sin) : IDENTITY;
      run = OP(run, e);
      v[k] = run;
    }
    scratch[lid] = run;
    SCAN_STEP(1) SCAN_STEP(2) SCAN_STEP(4) SCAN_STEP(8) SCAN_STEP(16) SCAN_STEP(32) SCAN_STEP(64)
    SCAN_STEP(128) SCAN_STEP(256) SCAN_STEP(512)
    barrier(CLK_LOCAL_MEM_FENCE);
    const ACC before = OP(carry, lid > 0 ? scratch[lid - 1] : IDENTITY);
    for (uint k = 0; k < ITEMS; ++k) {
      ulong i = first + k;
      if (i < g.len) STORE(py, (long)i * g.sout, OP(before, v[k]));
    }
    carry = OP(carry, scratch[LOCAL_SIZE - 1]);
    barrier(CLK_LOCAL_MEM_FENCE);  // scratch is rewritten by the next tile
  }
}

__kernel void scan_cols(PTR_ARG(IN_T, x), PTR_ARG(OUT_T, y), ScanGeom g, ulong nrows) {
  const ulong r = get_global_id(0);
  if (r >= nrows) return;
  long ib, ob;
  row_offsets(&g, r, &ib, &ob);
  __global const IN_T* px = PTR(IN_T, x) + ib;
  __global OUT_T* py = PTR(OUT_T, y) + ob;
  ACC run = IDENTITY;
  for (ulong i = 0; i < g.len; ++i) {
    run = OP(run, LOAD(px, (long)i * g.sin));
    STORE(py, (long)i * g.sout, run);
  }
}
