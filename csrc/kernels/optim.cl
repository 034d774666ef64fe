// Fused optimizer kernels: Adam/AdamW over up to SLOTS parameters per launch
// (multi_tensor.clh; float parameters use float4 accesses where aligned), and GradScaler's
// scale update. CT is the math type (float for 16-bit
// and float parameters, double for double); bias corrections use BC (double when the
// device has fp64, matching the CPU's host-side double arithmetic).
#include "multi_tensor.clh"

#ifndef BC
#define BC float
#endif

// Bits of `flags`.
#define ADAM_AMSGRAD 1
#define ADAM_MAXIMIZE 2
#define ADAM_DECOUPLED 4   // AdamW
#define ADAM_GRAD_SCALE 8  // grads are divided by *grad_scale (and written back)
#define ADAM_FOUND_INF 16  // skip everything when *found_inf == 1
#define ADAM_LR_TENSOR 32  // lr is *lr_tensor

// Elements per vector access on the aligned path (4: float4 for float parameters; 1: none).
#ifndef VEC_WIDTH
#define VEC_WIDTH 1
#endif
// float4s of each list a work-item keeps in registers on the whole-block path (VEC_WIDTH 4):
// the host sets it to block_elems / (4 * WG); 0 (CPU devices) leaves that path out.
#ifndef VEC_BATCH
#define VEC_BATCH 4
#endif

// One Adam(W) update of p (and gr, m, v, vm) in place; the values may be CT or, on the
// vector path, float4 (scalars broadcast). Same formulas and order as the CPU's fused kernel.
#define ADAM_MATH(p, gr, m, v, vm)                            \
  if (flags & ADAM_MAXIMIZE) gr = -gr;                        \
  if (weight_decay != (CT)0) {                                \
    if (flags & ADAM_DECOUPLED) p = p * decay;                \
    else gr = gr + weight_decay * p;                          \
  }                                                           \
  m = m + ((CT)1 - beta1) * (gr - m);                         \
  v = v * beta2 + ((CT)1 - beta2) * gr * gr;                  \
  if (flags & ADAM_AMSGRAD) vm = (vm < v) ? v : vm;           \
  p = p - step_size * (m / (sqrt((flags & ADAM_AMSGRAD) ? vm : v) / bc2_sqrt + eps));

// One Adam(W) step for every element of the chunk's tensors; steps[s] already holds the
// incremented step count of slot s. max_sq is only read with ADAM_AMSGRAD (else null).
__kernel void fused_adam(Chunk c SLOT_PTRS(T, param) SLOT_PTRS(T, grad) SLOT_PTRS(T, exp_avg)
                             SLOT_PTRS(T, exp_avg_sq) SLOT_PTRS(T, max_sq) SLOT_PTRS(float, steps),
                         CT lr_arg, PTR_ARG(float, lr_tensor), CT beta1, CT beta2, CT weight_decay, CT eps, int flags,
                         PTR_ARG(float, grad_scale), PTR_ARG(float, found_inf)) {
  const uint g = get_group_id(0);
  const int s = chunk_slot(&c, g);
  ulong begin = (ulong)(g - c.block_start[s]) * c.block_elems;
  const ulong end = min(begin + c.block_elems, c.numel[s]);
  __global T *pp, *gp, *mp, *vp, *vmp = 0;
  SLOT_SELECT(pp, T, param, s);
  SLOT_SELECT(gp, T, grad, s);
  SLOT_SELECT(mp, T, exp_avg, s);
  SLOT_SELECT(vp, T, exp_avg_sq, s);
  if (flags & ADAM_AMSGRAD) SLOT_SELECT(vmp, T, max_sq, s);
  __global float* stp;
  SLOT_SELECT(stp, float, steps, s);
  const uint lid = get_local_id(0);
  // The slot's step-dependent factors, computed once per work-group (two pows in double per
  // work-item dominated small parameters on CPU devices).
  __local CT factors[3];
  if (lid == 0) {
    const BC step = (BC)stp[0];
    const BC lr = (flags & ADAM_LR_TENSOR) ? (BC)PTR(float, lr_tensor)[0] : (BC)lr_arg;
    const BC bc1 = (BC)1 - pow((BC)beta1, step);
    const BC bc2 = (BC)1 - pow((BC)beta2, step);
    factors[0] = (CT)(lr / bc1);                       // step size
    factors[1] = (CT)sqrt(bc2);                        // sqrt of the second bias correction
    factors[2] = (CT)((BC)1 - lr * (BC)weight_decay);  // decoupled decay
  }
#if VEC_WIDTH == 4
  // float4 accesses when every list is 16-byte aligned at this block (block starts are
  // multiples of 4 elements, so it is the tensors' own alignment); the tail is scalar.
  const size_t addr_bits = (size_t)(pp + begin) | (size_t)(gp + begin) | (size_t)(mp + begin) |
                           (size_t)(vp + begin) | (vmp ? (size_t)(vmp + begin) : 0);
  const bool aligned = (addr_bits & 15) == 0;
  __global float4* p4 = (__global float4*)(pp + begin);
  __global float4* g4 = (__global float4*)(gp + begin);
  __global float4* m4 = (__global float4*)(mp + begin);
  __global float4* v4 = (__global float4*)(vp + begin);
  __global float4* vm4 = vmp ? (__global float4*)(vmp + begin) : 0;  // amsgrad only
  // A whole aligned block: each work-item loads its VEC_BATCH float4s of every list before the
  // barrier, so all of its loads are in flight at once and overlap work-item 0's factors.
#if VEC_BATCH > 0
  const bool batch = aligned && end - begin == (ulong)VEC_BATCH * 4 * WG;
  float4 P[VEC_BATCH], G[VEC_BATCH], M[VEC_BATCH], V[VEC_BATCH], VM[VEC_BATCH];
  if (batch) {
#pragma unroll
    for (int j = 0; j < VEC_BATCH; ++j) {
      const uint e = lid + (uint)j * WG;
      P[j] = p4[e];
      G[j] = g4[e];
      M[j] = m4[e];
      V[j] = v4[e];
      VM[j] = (flags & ADAM_AMSGRAD) ? vm4[e] : (float4)0;
    }
  }
#endif
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((flags & ADAM_FOUND_INF) && PTR(float, found_inf)[0] == 1.0f) return;  // after the barrier
  const CT step_size = factors[0], bc2_sqrt = factors[1], decay = factors[2];
  const bool scaled = (flags & ADAM_GRAD_SCALE) != 0;
  const CT scale = scaled ? (CT)PTR(float, grad_scale)[0] : (CT)1;
#if VEC_WIDTH == 4
#if VEC_BATCH > 0
  if (batch) {
#pragma unroll
    for (int j = 0; j < VEC_BATCH; ++j) {
      const uint e = lid + (uint)j * WG;
      float4 p = P[j], gr = G[j], m = M[j], v = V[j], vm = VM[j];
      if (scaled) {
        gr = gr / scale;
        g4[e] = gr;
      }
      ADAM_MATH(p, gr, m, v, vm)
      if (flags & ADAM_AMSGRAD) vm4[e] = vm;
      p4[e] = p;
      m4[e] = m;
      v4[e] = v;
    }
    return;
  }
#endif
  if (aligned) {
    const uint nvec = (uint)((end - begin) / 4);
    for (uint j = lid; j < nvec; j += WG) {
      float4 p = p4[j], gr = g4[j], m = m4[j], v = v4[j], vm = (float4)0;
      if (scaled) {
        gr = gr / scale;
        g4[j] = gr;
      }
      if (flags & ADAM_AMSGRAD) vm = vm4[j];
      ADAM_MATH(p, gr, m, v, vm)
      if (flags & ADAM_AMSGRAD) vm4[j] = vm;
      p4[j] = p;
      m4[j] = m;
      v4[j] = v;
    }
    begin += (ulong)nvec * 4;
  }
#endif
  for (ulong i = begin + lid; i < end; i += WG) {
    CT p = LOAD(pp, i), gr = LOAD(gp, i), m = LOAD(mp, i), v = LOAD(vp, i), vm = (CT)0;
    if (scaled) {
      gr = gr / scale;
      STORE(gp, i, gr);
    }
    if (flags & ADAM_AMSGRAD) vm = LOAD(vmp, i);
    ADAM_MATH(p, gr, m, v, vm)
    if (flags & ADAM_AMSGRAD) STORE(vmp, i, vm);
    STORE(pp, i, p);
    STORE(mp, i, m);
    STORE(vp, i, v);
  }
}

// GradScaler's update (one work-item): back off on overflow, else grow every `interval`
// clean steps (keeping the old scale if the grown one is not finite).
__kernel void amp_update_scale(PTR_ARG(float, scale_), PTR_ARG(int, tracker_), PTR_ARG(float, found_inf_),
                               float growth, float backoff, int interval) {
  __global float* scale = PTR(float, scale_);
  __global int* tracker = PTR(int, tracker_);
  if (PTR(float, found_inf_)[0] != 0.0f) {
    scale[0] = scale[0] * backoff;
    tracker[0] = 0;
    return;
  }
  const int ok = tracker[0] + 1;
  if (ok == interval) {
    const float grown = scale[0] * growth;
    if (isfinite(grown)) scale[0] = grown;
    tracker[0] = 0;
  } else {
    tracker[0] = ok;
  }
}
