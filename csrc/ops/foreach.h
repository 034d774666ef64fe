// Multi-tensor launches shared by the _foreach_* ops (foreach.cpp), the fused optimizers
// (optim.cpp) and cat (shape.cpp). OpenCL 1.2 cannot index an array of buffers, so one launch
// takes up to SLOTS tensors per list as separate (buffer, offset) kernel arguments
// (kernels/slots.clh), plus a small by-value table (Chunk) of their sizes and the first
// work-group of each: work-group g belongs to the slot whose [block_start[s], block_start[s+1])
// holds g, and processes block_elems consecutive elements of it. SLOTS is a build option
// chosen per device and kernel from CL_DEVICE_MAX_PARAMETER_SIZE (slots_for). Tensors must be
// non-overlapping and dense; the element order is the memory order, identical across lists
// (the callers check).
#pragma once
#include "../runtime/Launch.h"
#include <ATen/core/Tensor.h>
#include <cstddef>
#include <algorithm>
#include <cstring>
#include <vector>

namespace torch_ocl {
namespace multi_tensor {

// SLOTS range accepted by kernels/slots.clh: multiples of kSlotStep in [kMinSlots, kMaxSlots].
constexpr int kMinSlots = 8, kMaxSlots = 128, kSlotStep = 8;

// Tensors per list per launch for a kernel with `lists` slot lists whose other parameters
// take at most `fixed_bytes` (count each scalar as 8 bytes, each buffer as 16), and
// `per_slot_bytes` of by-value table per slot: as many as the device's parameter space holds.
int slots_for(const Device& d, int lists, size_t per_slot_bytes, size_t fixed_bytes);

// SLOTS for a launch of `needed` tensors on a kernel whose device maximum is `max_slots`: the
// smallest of 8, 16, 32, 64, 128 that holds them, capped at the maximum. Few tensors then pass
// few arguments (each costs host time at enqueue), and a kernel builds at most five programs.
inline int slot_bucket(size_t needed, int max_slots) {
  int s = kMinSlots;
  while (s < max_slots && static_cast<size_t>(s) < needed) s *= 2;
  return std::min(s, max_slots);
}

// Byte layout of `Chunk` in kernels/multi_tensor.clh for `slots` slots and a CT of
// `scalar_bytes`: ulong numel[SLOTS]; CT scalar[SLOTS]; uint block_start[SLOTS + 1];
// uint block_elems; (8-byte aligned, no padding inside since SLOTS is a multiple of 8).
struct ChunkLayout {
  size_t slots, scalar_bytes;
  constexpr size_t numel_at() const { return 0; }
  constexpr size_t scalar_at() const { return 8 * slots; }
  constexpr size_t block_start_at() const { return scalar_at() + scalar_bytes * slots; }
  constexpr size_t block_elems_at() const { return block_start_at() + 4 * (slots + 1); }
  constexpr size_t bytes() const { return (block_elems_at() + 4 + 7) / 8 * 8; }
  // Table bytes per slot (for slots_for).
  static constexpr size_t per_slot(size_t scalar_bytes) { return 8 + scalar_bytes + 4; }
};
namespace layout_check {
// The kernel's struct written out for fixed sizes: the host compiler's layout must agree
// with ChunkLayout (OpenCL C lays out structs with the same natural alignment).
template <int N, typename S>
struct Mirror {
  cl_ulong numel[N];
  S scalar[N];
  cl_uint block_start[N + 1];
  cl_uint block_elems;
};
template <int N, typename S>
constexpr bool agrees() {
  using M = Mirror<N, S>;
  constexpr ChunkLayout l{N, sizeof(S)};
  return sizeof(M) == l.bytes() && offsetof(M, scalar) == l.scalar_at() &&
         offsetof(M, block_start) == l.block_start_at() && offsetof(M, block_elems) == l.block_elems_at();
}
static_assert(agrees<8, float>() && agrees<8, double>() && agrees<48, float>() && agrees<128, double>(),
              "ChunkLayout must match Chunk in kernels/multi_tensor.clh");
}  // namespace layout_check

// A by-value kernel argument of runtime size (the Chunk table).
struct ArgBytes {
  std::vector<unsigned char> bytes;
  template <typename V>
  void put(size_t at, const V& v) {
    std::memcpy(bytes.data() + at, &v, sizeof(V));
  }
};

// One launch: the tensors it covers and its Chunk table.
template <typename S>
struct Chunk {
  std::vector<size_t> index;  // tensor indices in this launch, slot order
  ChunkLayout layout;
  ArgBytes args;
  size_t groups = 0;
  explicit Chunk(int slots) : layout{static_cast<size_t>(slots), sizeof(S)} { args.bytes.assign(layout.bytes(), 0); }
  size_t slots() const { return layout.slots; }
  void set_scalar(size_t s, S v) { args.put(layout.scalar_at() + s * sizeof(S), v); }
};

// Number of non-empty tensors.
inline size_t count_nonempty(const std::vector<int64_t>& numels) {
  return static_cast<size_t>(std::count_if(numels.begin(), numels.end(), [](int64_t n) { return n != 0; }));
}

// Packs the non-empty tensors (by numel) into launches of at most `slots` tensors.
template <typename S>
std::vector<Chunk<S>> plan(const std::vector<int64_t>& numels, uint32_t block_elems, int slots) {
  std::vector<Chunk<S>> chunks;
  Chunk<S> cur(slots);
  auto flush = [&] {
    if (cur.index.empty()) return;
    for (size_t s = cur.index.size(); s <= cur.slots(); ++s)
      cur.args.put(cur.layout.block_start_at() + 4 * s, static_cast<cl_uint>(cur.groups));
    cur.args.put(cur.layout.block_elems_at(), static_cast<cl_uint>(block_elems));
    chunks.push_back(std::move(cur));
    cur = Chunk<S>(slots);
  };
  for (size_t i = 0; i < numels.size(); ++i) {
    if (numels[i] == 0) continue;
    const size_t blocks = (static_cast<size_t>(numels[i]) + block_elems - 1) / block_elems;
    TORCH_CHECK(blocks < (size_t(1) << 31), "torch_ocl: tensor too large for a multi-tensor launch");
    if (cur.groups + blocks >= (size_t(1) << 31)) flush();
    const size_t s = cur.index.size();
    cur.args.put(cur.layout.numel_at() + 8 * s, static_cast<cl_ulong>(numels[i]));
    cur.args.put(cur.layout.block_start_at() + 4 * s, static_cast<cl_uint>(cur.groups));
    cur.groups += blocks;
    cur.index.push_back(i);
    if (cur.index.size() == cur.slots()) flush();
  }
  flush();
  return chunks;
}

// One list's kernel arguments for a chunk: slot s gets the buffer of list[index[s]]. Unused
// slots get a null buffer (never dereferenced): NVIDIA's enqueue costs ~0.3 us per non-null
// buffer argument, so padding with a real buffer is not free.
using SlotBufs = std::vector<Buf>;
template <typename S>
SlotBufs slot_bufs(at::TensorList list, const Chunk<S>& c) {
  SlotBufs b(c.slots(), Buf{nullptr, 0});
  for (size_t s = 0; s < c.index.size(); ++s) b[s] = buf(list[c.index[s]]);
  return b;
}
// A whole list of null buffers (a list the kernel takes but this launch does not use).
inline SlotBufs null_bufs(size_t slots) { return SlotBufs(slots, Buf{nullptr, 0}); }

namespace detail {
inline void add_one(LaunchRecord& r, const SlotBufs& bs) {
  for (const Buf& b : bs) torch_ocl::detail::add_arg(r, b);
}
inline void add_one(LaunchRecord& r, const ArgBytes& a) { r.add(a.bytes.data(), a.bytes.size()); }
template <typename T>
inline void add_one(LaunchRecord& r, const T& v) {
  torch_ocl::detail::add_arg(r, v);
}
}  // namespace detail

// Enqueues `groups` work-groups of `wg` work-items; arguments as launch() plus SlotBufs and
// ArgBytes.
template <typename... Args>
void launch_groups(Device& d, Kernel& k, size_t groups, size_t wg, const Args&... args) {
  if (groups == 0) return;
  const size_t global = groups * wg;
  LaunchRecord r = torch_ocl::detail::make_record(k, 1, &global, &wg);
  (detail::add_one(r, args), ...);
  submit_launch(d, std::move(r));
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
