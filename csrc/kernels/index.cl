// Indexing kernels: index_select, gather/scatter, advanced indexing (index.Tensor /
// index_put), keyed segment reductions (every accumulating scatter: scatter_add,
// scatter_reduce, index_add, index_put(accumulate), embedding backward), and stream
// compaction (flags + exclusive scan) for nonzero / masked_select / masked_scatter.
// Data movement kernels move elements as raw words of the element size (T = uchar, ushort,
// uint or ulong), so one program serves every dtype of that size. Arithmetic kernels see
// the dtype through DT/ACC (see the block below). Shapes and strides are runtime arguments.
#include "common.clh"

// Raw element word for pure data movement.
#ifndef T
#define T uint
#endif
// Most dims a geometry struct describes (must match kMaxDims in ops/index.cpp).
#ifndef MAXD
#define MAXD 12
#endif

// A program is either typed (built with DT / DT_HALF / DT_BF16: the arithmetic kernels) or
// a word program (built with T: every data movement kernel), so each compiles only what it
// serves.
#if defined(DT) || defined(DT_HALF) || defined(DT_BF16)
#define TYPED_PROGRAM 1
#endif

// ---- typed element access for arithmetic kernels -----------------------------------------
#if defined(DT_HALF)
#define DT ushort
#define ACC float
#define LOADV(p, i) vload_half((i), (__global const half*)(p))
#define STOREV(p, i, v) vstore_half_rte((float)(v), (i), (__global half*)(p))
#define DT_IS_FLOAT 1
#elif defined(DT_BF16)
#define DT ushort
#define ACC float
#define LOADV(p, i) bf16_to_float((p)[i])
#define STOREV(p, i, v) ((p)[i] = float_to_bf16((float)(v)))
#define DT_IS_FLOAT 1
#else
#ifndef DT
#define DT float
#define DT_IS_FLOAT 1
#endif
#ifndef ACC
#define ACC float
#endif
#define LOADV(p, i) ((ACC)(p)[i])
#ifdef DT_BOOL
#define STOREV(p, i, v) ((p)[i] = (DT)((v) != 0))
#else
#define STOREV(p, i, v) ((p)[i] = (DT)(v))
#endif
#endif

#ifdef DT_IS_FLOAT
#define IS_NAN(v) isnan(v)
#else
#define IS_NAN(v) 0
#endif

// Index tensors arrive as raw bytes plus idx32 (int32 or int64 elements).
inline long load_index(__global const uchar* p, long j, int idx32) {
  return idx32 ? (long)((__global const int*)p)[j] : ((__global const long*)p)[j];
}
inline void store_index(__global uchar* p, long j, int idx32, long v) {
  if (idx32)
    ((__global int*)p)[j] = (int)v;
  else
    ((__global long*)p)[j] = v;
}

#ifndef TYPED_PROGRAM

// ---- index_select ---------------------------------------------------------------------------
// out[o, j, r] = src[o, idx[j], r] over contiguous [outer, nsrc, inner] -> [outer, nidx, inner].
__kernel void index_select_fwd(PTR_ARG(T, out), PTR_ARG(T, src), PTR_ARG(uchar, idx), int idx32, long outer, long nsrc,
                               long nidx, long inner, __global int* err) {
  __global T* o = PTR(T, out);
  __global const T* s = PTR(T, src);
  __global const uchar* ix = PTR(uchar, idx);
  const long n = outer * nidx * inner;
  // Position arithmetic in 32 bits when it fits (64-bit division is slow on GPUs).
#define INDEX_SELECT_LOOP(I)                                                  \
  for (I i = get_global_id(0); i < (I)n; i += get_global_size(0)) {           \
    const I r = i % (I)inner, q = i / (I)inner;                               \
    const I j = q % (I)nidx, ob = q / (I)nidx;                                \
    const long v = load_index(ix, j, idx32);                                  \
    if (v < 0 || v >= nsrc) {                                                 \
      report_error(err, ERR_INDEX_OUT_OF_RANGE);                              \
      o[i] = (T)0;                                                            \
    } else {                                                                  \
      o[i] = s[((long)ob * nsrc + v) * inner + r];                            \
    }                                                                         \
  }
  if (n < (1L << 31)) {
    INDEX_SELECT_LOOP(uint)
  } else {
    INDEX_SELECT_LOOP(long)
  }
#undef INDEX_SELECT_LOOP
}

// ---- gather / scatter --------------------------------------------------------------------
// Geometry over the index tensor's shape; strides in elements of each operand.
typedef struct {
  long ndim, dim, dim_size;  // dim_size: size of `dim` in the tensor being indexed
  long size[MAXD];
  long idx_stride[MAXD];
  long a_stride[MAXD];  // the indexed tensor (gather: self; scatter: out)
  long b_stride[MAXD];  // the other one (gather: out; scatter: src)
} ScatterGeom;

// Offsets of element p of the index tensor: index, indexed-tensor base without `dim`, other.
inline void scatter_offsets(const ScatterGeom* g, long p, long* io, long* ao, long* bo) {
  long rem = p, i0 = 0, a0 = 0, b0 = 0;
  for (int d = (int)g->ndim - 1; d >= 0; --d) {
    long c = rem % g->size[d];
    rem /= g->size[d];
    i0 += c * g->idx_stride[d];
    b0 += c * g->b_stride[d];
    if (d != g->dim) a0 += c * g->a_stride[d];
  }
  *io = i0;
  *ao = a0;
  *bo = b0;
}

// out[p] = self[p with dim replaced by index[p]]  (a = self, b = out)
__kernel void gather_fwd(PTR_ARG(T, out), PTR_ARG(T, self), PTR_ARG(long, index), long n, ScatterGeom g,
                         __global int* err) {
  __global T* o = PTR(T, out);
  __global const T* s = PTR(T, self);
  __global const long* ix = PTR(long, index);
  FOR_EACH(p, n) {
    long io, ao, bo;
    scatter_offsets(&g, p, &io, &ao, &bo);
    long v = ix[io];
    if (v < 0 || v >= g.dim_size) {
      report_error(err, ERR_INDEX_BOUNDS);
      o[bo] = (T)0;
    } else {
      o[bo] = s[ao + v * g.a_stride[g.dim]];
    }
  }
}

// out[p with dim replaced by index[p]] = src[p] or the scalar word `value` (a = out, b = src).
// Duplicate targets are unspecified (as in ATen); accumulating forms use segment_reduce.
__kernel void scatter_fwd(PTR_ARG(T, out), PTR_ARG(T, src), PTR_ARG(long, index), long n, ScatterGeom g,
                          int use_value, ulong value, __global int* err) {
  __global T* o = PTR(T, out);
  __global const T* s = PTR(T, src);
  __global const long* ix = PTR(long, index);
  FOR_EACH(p, n) {
    long io, ao, bo;
    scatter_offsets(&g, p, &io, &ao, &bo);
    long v = ix[io];
    if (v < 0 || v >= g.dim_size) {
      report_error(err, ERR_INDEX_BOUNDS);
    } else {
      o[ao + v * g.a_stride[g.dim]] = use_value ? (T)value : s[bo];
    }
  }
}

// Keys for an accumulating scatter: key[p] = target element offset in out (-1 when the
// index is out of range), srcoff[p] = offset of the source element (-1: use the scalar).
__kernel void scatter_keys(PTR_ARG(long, keys), PTR_ARG(long, srcoff), PTR_ARG(long, index), long n, ScatterGeom g,
                           int use_value, __global int* err) {
  __global long* k = PTR(long, keys);
  __global long* so = PTR(long, srcoff);
  __global const long* ix = PTR(long, index);
  FOR_EACH(p, n) {
    long io, ao, bo;
    scatter_offsets(&g, p, &io, &ao, &bo);
    long v = ix[io];
    if (v < 0 || v >= g.dim_size) {
      report_error(err, ERR_INDEX_BOUNDS);
      k[p] = -1;
    } else {
      k[p] = ao + v * g.a_stride[g.dim];
    }
    so[p] = use_value ? -1 : bo;
  }
}

// Keys for index_add over contiguous out [outer, nout, inner] and src [outer, nidx, inner]:
// unit (o, j) targets the out slice (o, idx[j]) of `inner` elements.
__kernel void index_add_keys(PTR_ARG(long, keys), PTR_ARG(long, srcoff), PTR_ARG(uchar, idx), int idx32, long outer, long nout,
                             long nidx, long inner, __global int* err) {
  __global long* k = PTR(long, keys);
  __global long* so = PTR(long, srcoff);
  __global const uchar* ix = PTR(uchar, idx);
  FOR_EACH(u, outer * nidx) {
    long j = u % nidx, o = u / nidx;
    long v = load_index(ix, j, idx32);
    if (v < 0 || v >= nout) {
      report_error(err, ERR_INDEX_BOUNDS);
      k[u] = -1;
    } else {
      k[u] = (o * nout + v) * inner;
    }
    so[u] = u * inner;
  }
}

// Keys for embedding backward: unit p (one index) targets row idx[p] of a contiguous
// [num_weights, dim] gradient; rows equal to padding_idx are skipped (key -1).
__kernel void embedding_keys(PTR_ARG(long, keys), PTR_ARG(long, srcoff), PTR_ARG(uchar, idx), int idx32, long n, long num_weights,
                             long padding_idx, long dim, __global int* err) {
  __global long* k = PTR(long, keys);
  __global long* so = PTR(long, srcoff);
  __global const uchar* ix = PTR(uchar, idx);
  FOR_EACH(p, n) {
    long v = load_index(ix, p, idx32);
    if (v < 0 || v >= num_weights) {
      report_error(err, ERR_INDEX_OUT_OF_RANGE);
      k[p] = -1;
    } else {
      k[p] = v == padding_idx ? -1 : v * dim;
    }
    so[p] = p * dim;
  }
}

// ---- advanced indexing (index.Tensor, index_put) ----------------------------------------
// The result is [pre..., broadcast index shape (m)..., fold..., w] contiguous. A unit u is
// one (pre, m, fold) position; its base offset in self is the sum of the pre and fold
// coordinates times self's strides plus, for each index tensor k, idx[k][m] * idx_stride[k]
// (negative indices wrap once). Element w of the unit is at base + w * wstride.
typedef struct {
  long npre, nidx, nfold, mnumel, w_size, wstride;
  long pre_size[MAXD];
  long pre_stride[MAXD];
  long idx_size[MAXD];
  long idx_stride[MAXD];
  long fold_size[MAXD];
  long fold_stride[MAXD];
} IndexGeom;

// Self offset of unit u (or -1 when an index is out of range).
inline long index_unit_offset(const IndexGeom* g, __global const long* ix, long u) {
  long off = 0, rem = u;
  for (int d = (int)g->nfold - 1; d >= 0; --d) {
    off += (rem % g->fold_size[d]) * g->fold_stride[d];
    rem /= g->fold_size[d];
  }
  long mi = rem % g->mnumel;
  rem /= g->mnumel;
  for (int d = (int)g->npre - 1; d >= 0; --d) {
    off += (rem % g->pre_size[d]) * g->pre_stride[d];
    rem /= g->pre_size[d];
  }
  for (int k = 0; k < (int)g->nidx; ++k) {
    long v = ix[k * g->mnumel + mi];
    if (v < 0) v += g->idx_size[k];
    if (v < 0 || v >= g->idx_size[k]) return -1;
    off += v * g->idx_stride[k];
  }
  return off;
}

// out[u, w] = self[unit(u) + w*wstride]; launched over (w, u).
__kernel void index_fwd(PTR_ARG(T, out), PTR_ARG(T, self), PTR_ARG(long, idx), long units, IndexGeom g,
                        __global int* err) {
  const long w = get_global_id(0), u = get_global_id(1);
  if (w >= g.w_size || u >= units) return;
  long off = index_unit_offset(&g, PTR(long, idx), u);
  __global T* o = PTR(T, out);
  if (off < 0) {
    report_error(err, ERR_INDEX_OUT_OF_RANGE);
    o[u * g.w_size + w] = (T)0;
  } else {
    o[u * g.w_size + w] = PTR(T, self)[off + w * g.wstride];
  }
}

// self[unit(u) + w*wstride] = values[u, w]; duplicates are unspecified (accumulate=False).
__kernel void index_put_fwd(PTR_ARG(T, self), PTR_ARG(T, values), PTR_ARG(long, idx), long units, IndexGeom g,
                            __global int* err) {
  const long w = get_global_id(0), u = get_global_id(1);
  if (w >= g.w_size || u >= units) return;
  long off = index_unit_offset(&g, PTR(long, idx), u);
  if (off < 0) {
    if (w == 0) report_error(err, ERR_INDEX_OUT_OF_RANGE);
  } else {
    PTR(T, self)[off + w * g.wstride] = PTR(T, values)[u * g.w_size + w];
  }
}

// Keys for index_put(accumulate=True): key[u] = unit base offset, srcoff[u] = u * w_size.
__kernel void index_put_keys(PTR_ARG(long, keys), PTR_ARG(long, srcoff), PTR_ARG(long, idx), long units, IndexGeom g,
                             __global int* err) {
  __global long* k = PTR(long, keys);
  __global long* so = PTR(long, srcoff);
  FOR_EACH(u, units) {
    long off = index_unit_offset(&g, PTR(long, idx), u);
    if (off < 0) report_error(err, ERR_INDEX_OUT_OF_RANGE);
    k[u] = off;
    so[u] = u * g.w_size;
  }
}

// ---- stream compaction ---------------------------------------------------------------------
// Elements per work-group of the scan (SCAN_WG work-items, SCAN_BLOCK / SCAN_WG each).
#ifndef SCAN_WG
#define SCAN_WG 256
#endif
#ifndef SCAN_BLOCK
#define SCAN_BLOCK 1024
#endif

// flags[i] = (x[i] != 0) for contiguous x of n elements, tested on the element's bits under
// `mask` (which drops the sign bit of floating dtypes, so -0.0 is zero and NaN is not);
// flags[n] = 0, so the exclusive scan's element n is the total.
// (Not in programs of 16-byte words, T_WIDE: nonzero takes no complex128.)
#ifndef T_WIDE
__kernel void nonzero_flags(PTR_ARG(long, flags), PTR_ARG(T, x), long n, ulong mask) {
  __global long* f = PTR(long, flags);
  __global const T* p = PTR(T, x);
  FOR_EACH(i, n + 1) f[i] = (i < n && (p[i] & (T)mask) != 0) ? 1 : 0;
}
#endif

// In-place exclusive scan of each SCAN_BLOCK-element block; block totals go to sums.
__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1))) void scan_blocks(PTR_ARG(long, data), long n,
                                                                                PTR_ARG(long, sums)) {
  __local long part[SCAN_WG];
  __global long* a = PTR(long, data);
  const int lid = get_local_id(0);
  const long base = (long)get_group_id(0) * SCAN_BLOCK;
  const int per = SCAN_BLOCK / SCAN_WG;
  const long mine = base + (long)lid * per;
  long vals[SCAN_BLOCK / SCAN_WG];
  long tot = 0;
  for (int j = 0; j < per; ++j) {
    long i = mine + j;
    vals[j] = i < n ? a[i] : 0;
    tot += vals[j];
  }
  part[lid] = tot;
  barrier(CLK_LOCAL_MEM_FENCE);
  // Hillis-Steele inclusive scan of the per-item totals.
  for (int off = 1; off < SCAN_WG; off <<= 1) {
    long add = lid >= off ? part[lid - off] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    part[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  long run = part[lid] - tot;
  for (int j = 0; j < per; ++j) {
    long i = mine + j;
    if (i < n) a[i] = run;
    run += vals[j];
  }
  if (lid == SCAN_WG - 1) PTR(long, sums)[get_group_id(0)] = part[lid];
}

// data[i] += offsets[block of i] (offsets: the exclusive scan of the block totals).
__kernel void scan_add(PTR_ARG(long, data), long n, PTR_ARG(long, offsets)) {
  __global long* a = PTR(long, data);
  __global const long* o = PTR(long, offsets);
  FOR_EACH(i, n) a[i] += o[i / SCAN_BLOCK];
}

typedef struct {
  long ndim;
  long size[MAXD];
} Shape;

// out[pos[i], :] = coordinates of element i (contiguous in `shape`) where flags say so.
__kernel void nonzero_write(PTR_ARG(long, out), PTR_ARG(long, pos), long n, long limit, Shape s) {
  __global long* o = PTR(long, out);
  __global const long* ps = PTR(long, pos);
  FOR_EACH(i, n) {
    long p = ps[i];
    if (ps[i + 1] == p || p >= limit) continue;
    long rem = i;
    for (int d = (int)s.ndim - 1; d >= 0; --d) {
      o[p * s.ndim + d] = rem % s.size[d];
      rem /= s.size[d];
    }
  }
}

// out[pos[i]] = x[i] where selected (masked_select over contiguous broadcast operands).
__kernel void compact_write(PTR_ARG(T, out), PTR_ARG(T, x), PTR_ARG(long, pos), long n) {
  __global T* o = PTR(T, out);
  __global const T* v = PTR(T, x);
  __global const long* ps = PTR(long, pos);
  FOR_EACH(i, n) {
    long p = ps[i];
    if (ps[i + 1] != p) o[p] = v[i];
  }
}

// self[i] = source[pos[i]] where selected (masked_scatter_; contiguous self and source).
__kernel void expand_write(PTR_ARG(T, self), PTR_ARG(T, source), PTR_ARG(long, pos), long n, long nsource,
                           __global int* err) {
  __global T* o = PTR(T, self);
  __global const T* v = PTR(T, source);
  __global const long* ps = PTR(long, pos);
  FOR_EACH(i, n) {
    long p = ps[i];
    if (ps[i + 1] == p) continue;
    if (p >= nsource) report_error(err, ERR_INVALID_ARGUMENT);
    else o[i] = v[p];
  }
}
// ---- embedding_renorm_ ----------------------------------------------------------------------
// Flags the rows that the indices reference (flags[r] = 1; flags start zeroed); an index
// outside [-num_weights, num_weights) raises the error flag (negative ones wrap, as self[i]
// does on the CPU).
__kernel void embedding_renorm_mark(PTR_ARG(int, flags), PTR_ARG(uchar, idx), int idx32, long n, long num_weights,
                                    __global int* err) {
  __global int* f = PTR(int, flags);
  __global const uchar* ix = PTR(uchar, idx);
  FOR_EACH(p, n) {
    long r = load_index(ix, p, idx32);
    if (r < -num_weights || r >= num_weights) {
      report_error(err, ERR_INDEX_OUT_OF_RANGE);
      continue;
    }
    f[r < 0 ? r + num_weights : r] = 1;
  }
}

#endif  // !TYPED_PROGRAM

#ifdef TYPED_PROGRAM
// Reduction codes of segment_reduce.
#define RED_SUM 0
#define RED_PROD 1
#define RED_MEAN 2
#define RED_AMAX 3
#define RED_AMIN 4
#define RED_EMBED_FREQ 5  // sum of terms each scaled by 1/segment length

// Accumulating scatter over units sorted by target key. skeys/perm come from a stable sort
// of keys, so each run of equal keys lists its units in their original order: the thread at
// the start of a run folds them in that order (deterministic, no atomics, same order as a
// sequential CPU loop). Element w of unit u reads src[srcoff[u] + w*src_wstride] (or the
// scalar `value` when srcoff is -1) and lands on dst[key + w*dst_wstride].
__kernel void segment_reduce(PTR_ARG(DT, dst), PTR_ARG(DT, src), PTR_ARG(long, skeys), PTR_ARG(long, perm),
                             PTR_ARG(long, srcoff), long m, long w_size, long dst_wstride, long src_wstride, int op,
                             int include_self, ACC alpha, ACC value) {
  __global DT* d = PTR(DT, dst);
  __global const DT* s = PTR(DT, src);
  __global const long* sk = PTR(long, skeys);
  __global const long* pm = PTR(long, perm);
  __global const long* so = PTR(long, srcoff);
  const long w = get_global_id(0);
  const long q = get_global_id(1);
  if (w >= w_size || q >= m) return;
  const long key = sk[q];
  if (key < 0 || (q > 0 && sk[q - 1] == key)) return;
  long end = q + 1;
  while (end < m && sk[end] == key) ++end;
  const long target = key + w * dst_wstride;
  const ACC freq = (op == RED_EMBED_FREQ) ? (ACC)(1.0f / (float)(end - q)) : (ACC)1;
  ACC acc;
  long first;
  if (include_self) {
    acc = LOADV(d, target);
    first = q;
  } else {
    long off = so[pm[q]];
    ACC v = off < 0 ? value : LOADV(s, off + w * src_wstride);
    acc = op == RED_SUM ? v * alpha : (op == RED_EMBED_FREQ ? v * freq : v);
    first = q + 1;
  }
  for (long j = first; j < end; ++j) {
    long off = so[pm[j]];
    ACC v = off < 0 ? value : LOADV(s, off + w * src_wstride);
    switch (op) {
      case RED_SUM: acc += v * alpha; break;
      case RED_MEAN: acc += v; break;
      case RED_EMBED_FREQ: acc += v * freq; break;
      case RED_PROD: acc *= v; break;
      case RED_AMAX: acc = (IS_NAN(v) || v > acc) ? v : acc; break;
      case RED_AMIN: acc = (IS_NAN(v) || v < acc) ? v : acc; break;
    }
  }
  if (op == RED_MEAN) {
    long cnt = (end - q) + (include_self ? 1 : 0);
#ifdef DT_IS_FLOAT
    acc = acc / (ACC)cnt;
#else
    // Floor division, as ATen's integer scatter_reduce mean.
    ACC qd = acc / (ACC)cnt;
    if ((acc % (ACC)cnt != 0) && ((acc < 0) != ((ACC)cnt < 0))) qd -= 1;
    acc = qd;
#endif
  }
  STOREV(d, target, acc);
}

// ---- atomic accumulation (non-deterministic order; used unless torch's deterministic
// algorithms are on): dst[key + w*dst_wstride] += alpha * src[...] straight from the
// unsorted keys. Defined for the dtypes that have an atomic add here.
#if defined(DT_FLOAT32) || defined(DT_DOUBLE64) || defined(DT_INT32) || defined(DT_INT64)
#if defined(DT_DOUBLE64) || defined(DT_INT64)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
inline void atomic_add_dt(__global DT* p, ACC v) {
#if defined(DT_FLOAT32)
  atomic_add_float_cas(p, v);
#elif defined(DT_DOUBLE64)
  atomic_add_double_cas(p, v);
#elif defined(DT_INT32)
  atomic_add((volatile __global int*)p, (int)v);
#else
  atom_add((volatile __global long*)p, (long)v);
#endif
}

__kernel void atomic_accumulate(PTR_ARG(DT, dst), PTR_ARG(DT, src), PTR_ARG(long, keys), PTR_ARG(long, srcoff), long m,
                                long w_size, long dst_wstride, long src_wstride, ACC alpha, ACC value) {
  const long w = get_global_id(0), u = get_global_id(1);
  if (w >= w_size || u >= m) return;
  const long key = PTR(long, keys)[u];
  if (key < 0) return;
  const long off = PTR(long, srcoff)[u];
  const ACC v = off < 0 ? value : LOADV(PTR(DT, src), off + w * src_wstride);
  atomic_add_dt(PTR(DT, dst) + key + w * dst_wstride, v * alpha);
}
#endif

// ---- embedding_bag ---------------------------------------------------------------------------
// Bag b holds entries [offsets[b], offsets[b + 1]) of the indices (the last bag ends at n
// unless include_last_offset made the final offset its end: then nbags == noffsets - 1).
// Entries equal to padding_idx are skipped. Offsets that do not start at 0, fall, or pass n
// raise the error flag (and are clamped so nothing is read out of bounds).
inline void bag_range(__global const uchar* offs, int off32, long b, long nbags, long noffsets, long n, long* lo,
                      long* hi, __global int* err) {
  const long o0 = load_index(offs, b, off32);
  const long o1 = b + 1 < noffsets ? load_index(offs, b + 1, off32) : n;
  if ((b == 0 && o0 != 0) || o1 < o0 || o1 > n) report_error(err, ERR_EMBEDDING_BAG_OFFSETS);
  *lo = clamp(o0, 0L, n);
  *hi = clamp(o1, *lo, n);
}

// out[b, d] = sum (mode 0; times per_sample_weights[i] where given), mean (1) or max (2) of
// weight[idx[i], d] over bag b's entries; 0 for a bag with none. Work-item (d, b); the d == 0
// item also writes bag_size[b] (entries counted) and offset2bag for the bag's entries. Max:
// the first entry, then any larger value (a NaN first stays, as on the CPU); max_idx[b, d] is
// the row it came from, -1 for an empty bag. Aux outputs are in the indices' dtype.
__kernel void embedding_bag_fwd(PTR_ARG(DT, out), PTR_ARG(DT, weight), long ws0, long ws1, PTR_ARG(uchar, idx),
                                PTR_ARG(uchar, offsets), int idx32, int off32, PTR_ARG(DT, psw), int has_psw,
                                PTR_ARG(uchar, offset2bag), PTR_ARG(uchar, bag_size), PTR_ARG(uchar, max_idx), long n,
                                long nbags, long noffsets, long num_weights, long dim, int mode, long padding_idx,
                                __global int* err) {
  const long d = get_global_id(0), b = get_global_id(1);
  if (d >= dim || b >= nbags) return;
  __global const uchar* ix = PTR(uchar, idx);
  __global const DT* W = PTR(DT, weight);
  long lo, hi;
  bag_range(PTR(uchar, offsets), off32, b, nbags, noffsets, n, &lo, &hi, err);
  ACC acc = 0;
  long cnt = 0, arg = -1;
  for (long i = lo; i < hi; ++i) {
    const long r = load_index(ix, i, idx32);
    if (d == 0) store_index(PTR(uchar, offset2bag), i, idx32, b);
    if (r < 0 || r >= num_weights) {
      report_error(err, ERR_EMBEDDING_BAG_INDEX);
      continue;
    }
    if (r == padding_idx) continue;
    const ACC v = LOADV(W, r * ws0 + d * ws1);
    if (mode == 2) {
      if (cnt == 0 || v > acc) acc = v, arg = r;
    } else {
      acc += has_psw ? v * LOADV(PTR(DT, psw), i) : v;
    }
    ++cnt;
  }
  if (mode == 1 && cnt > 0) acc /= (ACC)cnt;
  STOREV(PTR(DT, out), b * dim + d, acc);
  if (d == 0) store_index(PTR(uchar, bag_size), b, idx32, cnt);
  if (mode == 2) store_index(PTR(uchar, max_idx), b * dim + d, idx32, arg);
}

// Rows of the sum/mean gradient per entry: rows[i, d] = grad[bag, d] times per_sample_weights[i]
// (sum) or / bag_size[bag] (mean), 0 for an entry in no bag. embedding_dense_backward then
// sums the rows by index (deterministically, skipping padding_idx).
__kernel void embedding_bag_bwd_rows(PTR_ARG(DT, rows), PTR_ARG(DT, grad), PTR_ARG(uchar, offset2bag),
                                     PTR_ARG(uchar, bag_size), int idx32, PTR_ARG(DT, psw), int has_psw, long n,
                                     long dim, int mode) {
  FOR_EACH(e, n * dim) {
    const long i = e / dim, d = e - i * dim;
    const long b = load_index(PTR(uchar, offset2bag), i, idx32);
    ACC v = 0;
    if (b >= 0) {
      v = LOADV(PTR(DT, grad), b * dim + d);
      if (has_psw) v *= LOADV(PTR(DT, psw), i);
      if (mode == 1) v /= (ACC)load_index(PTR(uchar, bag_size), b, idx32);
    }
    STOREV(PTR(DT, rows), e, v);
  }
}

// Gradient of the per-sample weights (mode sum): out[i] = grad[bag(i)] . weight[idx[i]], 0
// for padding entries and entries in no bag.
__kernel void embedding_bag_psw_bwd(PTR_ARG(DT, out), PTR_ARG(DT, grad), PTR_ARG(DT, weight), long ws0, long ws1,
                                    PTR_ARG(uchar, idx), PTR_ARG(uchar, offset2bag), int idx32, long n, long dim,
                                    long num_weights, long padding_idx) {
  FOR_EACH(i, n) {
    const long b = load_index(PTR(uchar, offset2bag), i, idx32), r = load_index(PTR(uchar, idx), i, idx32);
    ACC acc = 0;
    if (b >= 0 && r >= 0 && r < num_weights && r != padding_idx)
      for (long d = 0; d < dim; ++d)
        acc += LOADV(PTR(DT, grad), b * dim + d) * LOADV(PTR(DT, weight), r * ws0 + d * ws1);
    STOREV(PTR(DT, out), i, acc);
  }
}

// embedding_renorm_: work-group p takes index p's row r if it is the first to claim the row
// (atomic exchange of flags[r] back to 0: each referenced row is renormalised exactly once),
// computes the row's norm of order p (pkind: 0 count of nonzeros, 1 sum |x|, 2 sqrt(sum x^2),
// 3 max |x|, 4 min |x|, 5 (sum |x|^p)^(1/p)) and, where it exceeds max_norm, scales the row by
// max_norm / (norm + 1e-7). As on the CPU, a 16-bit row's norm is rounded to its dtype first;
// `thr` is the largest ACC value not above max_norm, so norm > thr is norm > max_norm exactly.
// Floating programs only (the typed programs of integer dtypes serve the scatters).
#ifdef DT_IS_FLOAT
#ifndef RENORM_WG
#define RENORM_WG 64  // work-group size of embedding_renorm_rows (a power of two)
#endif
#ifdef DT_DOUBLE64
#define RENORM_EPS 1e-7
#else
#define RENORM_EPS 1e-7f
#endif
__kernel __attribute__((reqd_work_group_size(RENORM_WG, 1, 1))) void embedding_renorm_rows(
    PTR_ARG(DT, self), long s0, long s1, long dim, PTR_ARG(int, flags), PTR_ARG(uchar, idx), int idx32,
    long num_weights, ACC max_norm, ACC thr, ACC p, int pkind) {
  __local ACC part[RENORM_WG];
  __local int claimed;
  __local long row;
  const int lid = get_local_id(0);
  const long pos = get_group_id(0);
  if (lid == 0) {
    long r = load_index(PTR(uchar, idx), pos, idx32);
    claimed = 0;
    if (r >= -num_weights && r < num_weights) {
      r = r < 0 ? r + num_weights : r;
      claimed = atomic_xchg((volatile __global int*)(PTR(int, flags) + r), 0) == 1;
    }
    row = r;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!claimed) return;  // uniform over the group
  __global DT* x = PTR(DT, self) + row * s0;
  ACC acc = pkind == 3 ? (ACC)0 : pkind == 4 ? (ACC)INFINITY : (ACC)0;
  for (long j = lid; j < dim; j += RENORM_WG) {
    const ACC a = fabs(LOADV(x, j * s1));
    switch (pkind) {
      case 0: acc += a != (ACC)0 ? (ACC)1 : (ACC)0; break;
      case 1: acc += a; break;
      case 2: acc += a * a; break;
      case 3: acc = (a > acc || isnan(a)) ? a : acc; break;
      case 4: acc = (a < acc || isnan(a)) ? a : acc; break;
      default: acc += pow(a, p); break;
    }
  }
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = RENORM_WG / 2; w > 0; w >>= 1) {
    if (lid < w) {
      const ACC o = part[lid + w], m = part[lid];
      part[lid] = pkind == 3 ? ((o > m || isnan(o)) ? o : m) : pkind == 4 ? ((o < m || isnan(o)) ? o : m) : m + o;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ACC norm = part[0];
  if (pkind == 2) norm = sqrt(norm);
  else if (pkind == 5) norm = pow(norm, (ACC)1 / p);
#if defined(DT_HALF)
  norm = round_to_half(norm);
#elif defined(DT_BF16)
  norm = round_to_bf16(norm);
#endif
  if (!(norm > thr)) return;
  const ACC scale = max_norm / (norm + RENORM_EPS);
  for (long j = lid; j < dim; j += RENORM_WG) STOREV(x, j * s1, LOADV(x, j * s1) * scale);
}
#endif  // DT_IS_FLOAT
#endif  // TYPED_PROGRAM
