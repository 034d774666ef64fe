// _foreach_* kernels: one launch applies an element-wise op to up to SLOTS tensors of each
// list (multi_tensor.clh), and the per-tensor norms reduce in one launch (the last
// work-group of each tensor finishes it). Floating types only; CT is the compute type.
// The op is a runtime argument taken once per work-group, so each dtype builds one program
// per number of buffer lists (NLISTS: out unless in place, then the inputs), which sets how
// many tensors fit one launch; the two-list program also holds the norm kernel, the one-list
// program the unscale kernel.
#include "multi_tensor.clh"

#ifndef NLISTS
#define NLISTS 1
#endif

// Operation of foreach_apply (runtime argument `op`, uniform over the launch, so one program
// per dtype serves every op). Inputs a (list x), b (list y), c (list z), scalar s; `nin` is
// the number of input lists used.
#define OP_ADD 0     // a + s (nin 1) | a + s * b
#define OP_SUB 1     // a - s | a - s * b
#define OP_MUL 2     // a * s | a * b
#define OP_DIV 3     // a / s | a / b
#define OP_MAX 4     // maximum / clamp_min (NaN propagates)
#define OP_MIN 5     // clamp_max
#define OP_LERP 6    // a + w * (b - a), w = s (nin 2) or c (nin 3)
#define OP_ADDCMUL 7 // a + s * b * c
#define OP_ADDCDIV 8 // a + s * b / c
#define OP_SQRT 9
#define OP_NEG 10
#define OP_ZERO 11
#define OP_COPY 12   // a
// Where the scalar comes from (runtime argument `src`): 0 the kernel argument, 1 the
// per-tensor Chunk table, 2 the kernel argument times element 0 of a CT device tensor.
#define SCALAR_ARG 0
#define SCALAR_LIST 1
#define SCALAR_TENSOR 2

inline CT nan_max(CT x, CT y) { return (isnan(x) || isnan(y)) ? x + y : (x > y ? x : y); }
inline CT nan_min(CT x, CT y) { return (isnan(x) || isnan(y)) ? x + y : (x < y ? x : y); }
// torch.lerp's two-sided formula (exact at both ends).
inline CT lerp_(CT x, CT y, CT w) { return fabs(w) < (CT)0.5 ? x + w * (y - x) : y - (y - x) * ((CT)1 - w); }

// One strided loop over this work-group's block per case, so the op switch is taken once.
#define LOOP1(EXPR) for (ulong i = i0; i < end; i += WG) { CT a = LOAD(xp, i); STORE(o, i, (EXPR)); }
#define LOOP2(EXPR) for (ulong i = i0; i < end; i += WG) { CT a = LOAD(xp, i), b = LOAD(yp, i); STORE(o, i, (EXPR)); }
#define LOOP3(EXPR) \
  for (ulong i = i0; i < end; i += WG) { CT a = LOAD(xp, i), b = LOAD(yp, i), c3 = LOAD(zp, i); STORE(o, i, (EXPR)); }

// out = op(x, y, z, s). The lists are l0 .. l<NLISTS-1>: out, x, y, z, or x, y, z when
// `inplace` (out is x).
__kernel void foreach_apply(Chunk c SLOT_PTRS(T, l0)
#if NLISTS > 1
                            SLOT_PTRS(T, l1)
#endif
#if NLISTS > 2
                            SLOT_PTRS(T, l2)
#endif
#if NLISTS > 3
                            SLOT_PTRS(T, l3)
#endif
                            , CT s_arg, PTR_ARG(CT, s_tensor), int op, int nin, int src, int inplace) {
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  const ulong i0 = (ulong)(g - c.block_start[s]) * c.block_elems + get_local_id(0);
  const ulong end = min((ulong)(g - c.block_start[s]) * c.block_elems + c.block_elems, c.numel[s]);
  __global T *p0, *p1 = 0, *p2 = 0, *p3 = 0;
  SLOT_SELECT(p0, T, l0, s);
#if NLISTS > 1
  SLOT_SELECT(p1, T, l1, s);
#endif
#if NLISTS > 2
  SLOT_SELECT(p2, T, l2, s);
#endif
#if NLISTS > 3
  SLOT_SELECT(p3, T, l3, s);
#endif
  __global T* o = p0;
  __global const T* xp = inplace ? p0 : p1;
  __global const T* yp = inplace ? p1 : p2;
  __global const T* zp = inplace ? p2 : p3;
  const CT sc = src == SCALAR_ARG ? s_arg : src == SCALAR_LIST ? c.scalar[s] : s_arg * PTR(CT, s_tensor)[0];
  switch (op) {
    case OP_ADD: if (nin == 1) LOOP1(a + sc) else LOOP2(a + sc * b) break;
    case OP_SUB: if (nin == 1) LOOP1(a - sc) else LOOP2(a - sc * b) break;
    case OP_MUL: if (nin == 1) LOOP1(a * sc) else LOOP2(a * b) break;
    case OP_DIV: if (nin == 1) LOOP1(a / sc) else LOOP2(a / b) break;
    case OP_MAX: if (nin == 1) LOOP1(nan_max(a, sc)) else LOOP2(nan_max(a, b)) break;
    case OP_MIN: if (nin == 1) LOOP1(nan_min(a, sc)) else LOOP2(nan_min(a, b)) break;
    case OP_LERP: if (nin == 2) LOOP2(lerp_(a, b, sc)) else LOOP3(lerp_(a, b, c3)) break;
    case OP_ADDCMUL: LOOP3(a + sc * b * c3) break;
    case OP_ADDCDIV: LOOP3(a + sc * (b / c3)) break;
    case OP_SQRT: LOOP1(sqrt(a)) break;
    case OP_NEG: LOOP1(-a) break;
    case OP_ZERO: for (ulong i = i0; i < end; i += WG) STORE(o, i, (CT)0); break;
    default: LOOP1(a) break;
  }
}

#if NLISTS == 2
// ---- norms ------------------------------------------------------------------------------
// Norm kinds (runtime argument `norm`): 0 counts non-zeros, 1 sum |x|, 2 sqrt(sum x^2),
// 3 max |x|, 4 min |x|, 5 (sum |x|^p)^(1/p).
inline CT norm_map(int norm, CT v, CT p) {
  switch (norm) {
    case 0: return v != (CT)0 ? (CT)1 : (CT)0;
    case 2: return v * v;
    case 5: return pow(fabs(v), p);
    default: return fabs(v);
  }
}
inline CT norm_combine(int norm, CT x, CT y) {
  return norm == 3 ? nan_max(x, y) : norm == 4 ? nan_min(x, y) : x + y;
}
inline CT norm_init(int norm) { return norm == 4 ? (CT)INFINITY : (CT)0; }
inline CT group_combine(__local CT* sh, int norm, CT v) {
  const int lid = get_local_id(0);
  sh[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int st = WG / 2; st > 0; st >>= 1) {
    if (lid < st) sh[lid] = norm_combine(norm, sh[lid], sh[lid + st]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return sh[0];
}

// The norm of every slot's tensor in one launch: each work-group reduces its block; a tensor
// of one block is done, otherwise the group stores its partial and the last group of the
// slot to arrive (last_group_arrive, common.clh) combines the slot's partials in a fixed
// order and writes the 0-dim out. counters[s] serves slot s and is left at 0.
__kernel void foreach_norm(Chunk c SLOT_PTRS(T, x) SLOT_PTRS(CT, out), CT p, PTR_ARG(CT, partial),
                           __global uint* counters, int norm) {
  __local CT sh[WG];
  __local uint last_flag;
  const uint g = get_group_id(0), lid = get_local_id(0);
  const int s = chunk_slot(&c, g);
  const uint first = c.block_start[s], nblocks = c.block_start[s + 1] - first;
  const ulong begin = (ulong)(g - first) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global const T* xp;
  SLOT_SELECT(xp, T, x, s);
  __global CT* o;
  SLOT_SELECT(o, CT, out, s);
  CT acc = norm_init(norm);
  if (norm == 2) {
    for (ulong i = begin + lid; i < end; i += WG) { CT v = LOAD(xp, i); acc += v * v; }
  } else {
    for (ulong i = begin + lid; i < end; i += WG) acc = norm_combine(norm, acc, norm_map(norm, LOAD(xp, i), p));
  }
  acc = group_combine(sh, norm, acc);
  if (nblocks > 1) {  // uniform over the group
    if (lid == 0) PTR(CT, partial)[g] = acc;
    if (!last_group_arrive(counters + s, nblocks, &last_flag)) return;
    // Other groups' partials: volatile loads (no stale L1 lines).
    volatile __global const CT* part = (volatile __global const CT*)PTR(CT, partial);
    acc = norm_init(norm);
    for (uint i = first + lid; i < first + nblocks; i += WG) acc = norm_combine(norm, acc, part[i]);
    acc = group_combine(sh, norm, acc);
  }
  if (lid == 0) {
    if (norm == 2) acc = sqrt(acc);
    if (norm == 5) acc = pow(acc, (CT)1 / p);
    o[0] = acc;
  }
}
#endif  // NLISTS == 2

#if NLISTS == 1
// _amp_foreach_non_finite_check_and_unscale_: x *= inv_scale; any non-finite x sets found_inf.
__kernel void foreach_unscale(Chunk c SLOT_PTRS(T, x), PTR_ARG(float, found_inf), PTR_ARG(float, inv_scale)) {
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  const ulong begin = (ulong)(g - c.block_start[s]) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global T* xp;
  SLOT_SELECT(xp, T, x, s);
  const CT inv = (CT)PTR(float, inv_scale)[0];
  bool bad = false;
  for (ulong i = begin + get_local_id(0); i < end; i += WG) {
    CT v = LOAD(xp, i);
    bad |= !isfinite(v);
    if (inv != (CT)1) STORE(xp, i, v * inv);
  }
  if (bad) PTR(float, found_inf)[0] = 1.0f;  // every writer stores the same value
}
#endif  // NLISTS == 1
