// _foreach_* kernels: one launch applies an element-wise op to up to SLOTS tensors of each
// list (multi_tensor.clh), and the per-tensor norms reduce in two launches (partials per
// work-group, then one work-group per tensor). Floating types only; CT is the compute type.
#include "multi_tensor.clh"

// Operation of foreach_apply, by -DOP=<n>. Inputs a (list x), b (list y), c (list z), scalar
// s; NIN is the number of input lists used.
#define OP_ADD 0     // a + s (NIN 1) | a + s * b
#define OP_SUB 1     // a - s | a - s * b
#define OP_MUL 2     // a * s | a * b
#define OP_DIV 3     // a / s | a / b
#define OP_MAX 4     // maximum / clamp_min (NaN propagates)
#define OP_MIN 5     // clamp_max
#define OP_LERP 6    // a + w * (b - a), w = s (NIN 2) or c (NIN 3)
#define OP_ADDCMUL 7 // a + s * b * c
#define OP_ADDCDIV 8 // a + s * b / c
#define OP_SQRT 9
#define OP_NEG 10
#define OP_ZERO 11
#define OP_COPY 12   // a
#ifndef OP
#define OP OP_ADD
#endif
#ifndef NIN
#define NIN 1
#endif
// Where the scalar comes from: 0 kernel argument, 1 the per-tensor Chunk table, 2 the
// kernel argument times element 0 of a device tensor (Tensor overloads).
#ifndef SCALAR_SRC
#define SCALAR_SRC 0
#endif

inline CT nan_max(CT x, CT y) { return (isnan(x) || isnan(y)) ? x + y : (x > y ? x : y); }
inline CT nan_min(CT x, CT y) { return (isnan(x) || isnan(y)) ? x + y : (x < y ? x : y); }
// torch.lerp's two-sided formula (exact at both ends).
inline CT lerp_(CT x, CT y, CT w) { return fabs(w) < (CT)0.5 ? x + w * (y - x) : y - (y - x) * ((CT)1 - w); }

inline CT apply(CT a, CT b, CT c, CT s) {
#if OP == OP_ADD
  return NIN == 1 ? a + s : a + s * b;
#elif OP == OP_SUB
  return NIN == 1 ? a - s : a - s * b;
#elif OP == OP_MUL
  return NIN == 1 ? a * s : a * b;
#elif OP == OP_DIV
  return NIN == 1 ? a / s : a / b;
#elif OP == OP_MAX
  return nan_max(a, NIN == 1 ? s : b);
#elif OP == OP_MIN
  return nan_min(a, NIN == 1 ? s : b);
#elif OP == OP_LERP
  return lerp_(a, b, NIN == 3 ? c : s);
#elif OP == OP_ADDCMUL
  return a + s * b * c;
#elif OP == OP_ADDCDIV
  return a + s * b / c;
#elif OP == OP_SQRT
  return sqrt(a);
#elif OP == OP_NEG
  return -a;
#elif OP == OP_ZERO
  return 0;
#else
  return a;
#endif
}

// Scalar tensor type for SCALAR_SRC 2.
#ifndef ST
#define ST CT
#endif

// out = apply(x, y, z, s); `out` may be the same buffers as x (in-place forms).
__kernel void foreach_apply(SLOT_PTRS(T, out), SLOT_PTRS(T, x), SLOT_PTRS(T, y), SLOT_PTRS(T, z), Chunk c, CT s_arg,
                            PTR_ARG(ST, s_tensor)) {
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  const ulong begin = (ulong)(g - c.block_start[s]) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global T* o = PICK(T, out, s);
  __global const T* xp = PICK(T, x, s);
  __global const T* yp = PICK(T, y, s);
  __global const T* zp = PICK(T, z, s);
#if SCALAR_SRC == 0
  const CT sc = s_arg;
#elif SCALAR_SRC == 1
  const CT sc = c.scalar[s];
#else
  const CT sc = s_arg * (CT)PTR(ST, s_tensor)[0];
#endif
  for (ulong i = begin + get_local_id(0); i < end; i += WG) {
    CT a = (OP == OP_ZERO) ? (CT)0 : LOAD(xp, i);
    CT b = NIN >= 2 ? LOAD(yp, i) : (CT)0;
    CT cc = NIN >= 3 ? LOAD(zp, i) : (CT)0;
    STORE(o, i, apply(a, b, cc, sc));
  }
}

// ---- norms ------------------------------------------------------------------------------
// NORM: 0 counts non-zeros, 1 sum |x|, 2 sqrt(sum x^2), 3 max |x|, 4 min |x|, 5 (sum |x|^p)^(1/p).
#ifndef NORM
#define NORM 2
#endif
inline CT norm_map(CT v, CT p) {
#if NORM == 0
  return v != (CT)0 ? (CT)1 : (CT)0;
#elif NORM == 2
  return v * v;
#elif NORM == 5
  return pow(fabs(v), p);
#else
  return fabs(v);
#endif
}
inline CT norm_combine(CT x, CT y) {
#if NORM == 3
  return nan_max(x, y);
#elif NORM == 4
  return nan_min(x, y);
#else
  return x + y;
#endif
}
#if NORM == 3
#define NORM_INIT ((CT)0)
#elif NORM == 4
#define NORM_INIT ((CT)INFINITY)
#else
#define NORM_INIT ((CT)0)
#endif
inline CT group_combine(__local CT* sh, CT v) {
  const int lid = get_local_id(0);
  sh[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int st = WG / 2; st > 0; st >>= 1) {
    if (lid < st) sh[lid] = norm_combine(sh[lid], sh[lid + st]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return sh[0];
}

// partial[g] = combination of work-group g's block.
__kernel void foreach_norm_partial(SLOT_PTRS(T, x), Chunk c, CT p, PTR_ARG(CT, partial)) {
  __local CT sh[WG];
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  const ulong begin = (ulong)(g - c.block_start[s]) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global const T* xp = PICK(T, x, s);
  CT acc = NORM_INIT;
  for (ulong i = begin + get_local_id(0); i < end; i += WG) acc = norm_combine(acc, norm_map(LOAD(xp, i), p));
  acc = group_combine(sh, acc);
  if (get_local_id(0) == 0) PTR(CT, partial)[g] = acc;
}

// Work-group s combines slot s's partials into the 0-dim out of slot s (unused slots do nothing).
__kernel void foreach_norm_finish(SLOT_PTRS(CT, out), Chunk c, CT p, PTR_ARG(CT, partial), uint nslots) {
  __local CT sh[WG];
  const uint s = get_group_id(0);
  if (s >= nslots) return;
  __global const CT* part = PTR(CT, partial);
  CT acc = NORM_INIT;
  for (uint i = c.block_start[s] + get_local_id(0); i < c.block_start[s + 1]; i += WG) acc = norm_combine(acc, part[i]);
  acc = group_combine(sh, acc);
  if (get_local_id(0) == 0) {
#if NORM == 2
    acc = sqrt(acc);
#elif NORM == 5
    acc = pow(acc, (CT)1 / p);
#endif
    PICK(CT, out, s)[0] = acc;
  }
}

// _amp_foreach_non_finite_check_and_unscale_: x *= inv_scale; any non-finite x sets found_inf.
__kernel void foreach_unscale(SLOT_PTRS(T, x), Chunk c, PTR_ARG(float, found_inf), PTR_ARG(float, inv_scale)) {
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  const ulong begin = (ulong)(g - c.block_start[s]) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global T* xp = PICK(T, x, s);
  const CT inv = (CT)PTR(float, inv_scale)[0];
  bool bad = false;
  for (ulong i = begin + get_local_id(0); i < end; i += WG) {
    CT v = LOAD(xp, i);
    bad |= !isfinite(v);
    if (inv != (CT)1) STORE(xp, i, v * inv);
  }
  if (bad) PTR(float, found_inf)[0] = 1.0f;  // every writer stores the same value
}
