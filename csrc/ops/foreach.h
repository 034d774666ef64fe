// Multi-tensor launches shared by the _foreach_* ops (foreach.cpp) and the fused optimizers
// (optim.cpp). OpenCL 1.2 cannot index an array of buffers, so one launch takes up to
// kSlots tensors per list as separate (buffer, offset) kernel arguments, plus a small
// by-value table (ChunkArgs) of their sizes and the first work-group of each: work-group g
// belongs to the slot whose [block_start[s], block_start[s+1]) holds g, and processes
// block_elems consecutive elements of it. Tensors must be non-overlapping and dense; the
// element order is the memory order, identical across lists (the callers check).
#pragma once
#include "../runtime/Launch.h"
#include <ATen/core/Tensor.h>
#include <array>
#include <vector>

namespace torch_ocl {
namespace multi_tensor {

constexpr int kSlots = 8;  // tensors per list per launch; matches SLOTS in foreach.cl / optim.cl

// Matches `Chunk` in the kernels (S = the kernels' scalar type CT: float or double).
template <typename S>
struct ChunkArgs {
  cl_ulong numel[kSlots];
  S scalar[kSlots];  // per-tensor scalars (ScalarList overloads)
  cl_uint block_start[kSlots + 1];
  cl_uint block_elems;
};

template <typename S>
struct Chunk {
  std::vector<size_t> index;  // tensor indices in this launch, slot order
  ChunkArgs<S> args{};
  size_t groups = 0;
};

// Packs the non-empty tensors (by numel) into launches of at most kSlots tensors.
template <typename S>
std::vector<Chunk<S>> plan(const std::vector<int64_t>& numels, uint32_t block_elems) {
  std::vector<Chunk<S>> chunks;
  Chunk<S> cur;
  auto flush = [&] {
    if (cur.index.empty()) return;
    for (size_t s = cur.index.size(); s <= kSlots; ++s) cur.args.block_start[s] = static_cast<cl_uint>(cur.groups);
    cur.args.block_elems = block_elems;
    chunks.push_back(cur);
    cur = Chunk<S>();
  };
  for (size_t i = 0; i < numels.size(); ++i) {
    if (numels[i] == 0) continue;
    const size_t blocks = (static_cast<size_t>(numels[i]) + block_elems - 1) / block_elems;
    TORCH_CHECK(blocks < (size_t(1) << 31), "torch_ocl: tensor too large for a multi-tensor launch");
    if (cur.groups + blocks >= (size_t(1) << 31)) flush();
    const size_t s = cur.index.size();
    cur.args.numel[s] = static_cast<cl_ulong>(numels[i]);
    cur.args.block_start[s] = static_cast<cl_uint>(cur.groups);
    cur.groups += blocks;
    cur.index.push_back(i);
    if (cur.index.size() == kSlots) flush();
  }
  flush();
  return chunks;
}

// One list's kernel arguments for a chunk: slot s gets the buffer of list[index[s]]; unused
// slots repeat a valid buffer (never dereferenced).
using SlotBufs = std::array<Buf, kSlots>;
template <typename S>
SlotBufs slot_bufs(at::TensorList list, const Chunk<S>& c) {
  SlotBufs b;
  for (int s = 0; s < kSlots; ++s) b[s] = buf(list[c.index[std::min<size_t>(s, c.index.size() - 1)]]);
  return b;
}

namespace detail {
inline void set_one(cl_kernel k, cl_uint& i, const SlotBufs& bs, const std::string& name) {
  for (const Buf& b : bs) torch_ocl::detail::set_arg(k, i, b, name);
}
template <typename T>
inline void set_one(cl_kernel k, cl_uint& i, const T& v, const std::string& name) {
  torch_ocl::detail::set_arg(k, i, v, name);
}
}  // namespace detail

// Enqueues `groups` work-groups of `wg` work-items; arguments as launch() plus SlotBufs.
template <typename... Args>
void launch_groups(Device& d, Kernel& k, size_t groups, size_t wg, const Args&... args) {
  if (groups == 0) return;
  const size_t global = groups * wg;
  {
    std::lock_guard<std::mutex> lock(d.launch_mutex);
    cl_uint i = 0;
    (detail::set_one(k.k, i, args, k.name), ...);
    torch_ocl::detail::enqueue_kernel(d, k, 1, &global, &wg);
  }
  k.launches.fetch_add(1, std::memory_order_relaxed);
  if (C10_UNLIKELY(env::sync_launches())) torch_ocl::detail::after_launch(d, k);
}

// "-DT=<storage> -DCT=<compute>" plus T_IS_HALF/T_IS_BF16 for a floating dtype.
inline std::string float_type_options(at::ScalarType t) {
  std::string o = "-DT=" + cl_type_name(t) + (t == at::kDouble ? " -DCT=double" : " -DCT=float");
  if (t == at::kHalf) o += " -DT_IS_HALF";
  if (t == at::kBFloat16) o += " -DT_IS_BF16";
  return o;
}

}  // namespace multi_tensor
}  // namespace torch_ocl
