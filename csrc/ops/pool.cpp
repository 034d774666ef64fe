// Pooling on kernels/pool.cl, reading and writing operands of any strides (channels_last and
// other views in place): max and average pooling in 1-3 dims (ATen runs 1-D pooling through
// the 2-D ops; 2-D runs the 3-D kernels with one depth row), adaptive pooling (windows of
// varying size), max unpooling and fractional max pooling, with their backward ops. ATen's meta
// functions (or the CPU's own checks, for the ops that have none) check the arguments and size
// the outputs, as on the CPU.
#include "../aten/Routing.h"

#include "../aten/OutMeta.h"
#include "../aten/Dims5.h"
#include "../runtime/Launch.h"
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
#include <ATen/ops/adaptive_max_pool3d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool3d_meta.h>
#include <ATen/ops/avg_pool3d_backward_meta.h>
#include <ATen/ops/avg_pool3d_meta.h>
#include <ATen/ops/fractional_max_pool2d_backward_meta.h>
#include <ATen/ops/fractional_max_pool2d_meta.h>
#include <ATen/ops/fractional_max_pool3d_meta.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

namespace torch_ocl {
namespace {

// (C, H, W) -> (1, C, H, W); (N, C, H, W) unchanged.
at::Tensor batched(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(0) : t; }

constexpr int64_t kWideWindow = 256;  // average window size from which the forward uses a work-group per output
constexpr size_t kWideWG = 64;        // WIDE_WG of pool.cl: that work-group's size

// The 3-D range of pool.cl's position4 over a (B, C, H, W) tensor t: (W, H, B * C), or
// (C, W, B * H) when t keeps its channels adjacent (channels_last), in groups of 64 along the
// fastest dimension (more along the next where it is short).
struct Range4 {
  Range global, local;
  cl_int c_fast;
};
Range4 range4(const at::Tensor& t) {
  const int64_t b = t.size(0), c = t.size(1), h = t.size(2), w = t.size(3);
  const bool c_fast = c > 1 && t.stride(1) == 1;
  const size_t n0 = c_fast ? c : w, n1 = c_fast ? w : h, n2 = c_fast ? b * h : b * c;
  const Range l = local_wu(static_cast<int64_t>(n0));
  return {Range(n0, n1, n2), Range(l.sz[0], l.sz[1], 1), c_fast ? 1 : 0};
}

// Build options of pool.cl for values of dtype t.
std::string pool_options(Device& d, at::ScalarType t, const char* op) {
  check_dtype_supported(d, t, op);
  return "-DX_KIND=" + std::to_string(storage_kind(t, op)) + " -DACC=" + (t == at::kDouble ? "double" : "float");
}

// " -DIDX_T=int" (pool.cl's positions and window bounds in 32-bit arithmetic: a GPU divides
// several times faster so) when every index a launch over tensors `ts` forms fits: their
// element counts, and products of two extents (an adaptive window's o * in, a strided
// window's o * s) among their sizes and `geometry` (kernel sizes times dilations, strides,
// paddings, divisors, window volumes); with headroom for the kernels' sums. Else "" (64-bit).
std::string index_option(std::initializer_list<at::Tensor> ts, c10::ArrayRef<int64_t> geometry = {}) {
  constexpr int64_t kLimit = int64_t(1) << 29;
  int64_t extent = 1, count = 0;
  for (const at::Tensor& t : ts) {
    count = std::max(count, t.numel());
    for (int64_t v : t.sizes()) extent = std::max(extent, v);
  }
  for (int64_t v : geometry) extent = std::max(extent, std::abs(v));
  return count < kLimit && extent < kLimit / (extent + 1) ? " -DIDX_T=int" : "";
}

// The four strides of a (B, C, H, W) view, as kernel arguments.
std::array<int64_t, 4> strides4(const at::Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2), t.stride(3)}; }

// adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool2d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size,
                                                                 at::Tensor& out, at::Tensor& indices) {
  OutMeta<at::meta::structured_adaptive_max_pool2d, 2> m(out, indices);
  m.meta(self, output_size);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"adaptive_max_pool2d\" not implemented for '", toString(self.scalar_type()), "'");
  if (out.numel() == 0) return {out, indices};
  const at::Tensor x = batched(self), y = batched(out), yi = batched(indices);
  Device& d = ocl_device(x);
  const std::string opts = pool_options(d, x.scalar_type(), "adaptive_max_pool2d");
  const auto xs = strides4(x), ys = strides4(y), is = strides4(yi);
  // Windows of kWideWindow elements and more: a work-group per output (global pooling of a
  // large map would otherwise leave few work-items each scanning all of it).
  if (x.size(2) * x.size(3) >= kWideWindow * y.size(2) * y.size(3)) {
    Kernel& k = get_kernel(d, "pool", opts + " -DWIDE_WG=" + std::to_string(kWideWG), "adaptive_max_pool2d_fwd_wide");
    launch(d, k, Range(static_cast<size_t>(y.numel()) * kWideWG), Range(kWideWG), buf(x), buf(y), buf(yi),
           x.size(1), x.size(2), x.size(3), y.size(2), y.size(3), xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2],
           ys[3], is[0], is[1], is[2], is[3]);
    return {out, indices};
  }
  Kernel& k = get_kernel(d, "pool", opts + index_option({x, y}), "adaptive_max_pool2d_fwd");
  const Range4 r = range4(y);
  launch(d, k, r.global, r.local, buf(x), buf(y), buf(yi), x.size(1), x.size(2), x.size(3), y.size(2), y.size(3),
         xs[0], xs[1], xs[2], xs[3], ys[0], ys[1], ys[2], ys[3], is[0], is[1], is[2], is[3], r.c_fast);
  return {out, indices};
}

// adaptive_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& adaptive_max_pool2d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_adaptive_max_pool2d_backward> m(grad_input);
  m.meta(grad_output, self, indices);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "\"adaptive_max_pool2d_backward\" not implemented for '", toString(self.scalar_type()),
                              "'");
  TORCH_CHECK(indices.scalar_type() == at::kLong && indices.sizes() == grad_output.sizes(),
              "adaptive_max_pool2d_backward(): expected int64 indices of grad_output's shape ", grad_output.sizes(),
              ", but got ", indices.scalar_type(), " indices of shape ", indices.sizes());
  if (grad_input.numel() == 0) return grad_input;
  const at::Tensor gy = batched(grad_output), gi = batched(grad_input), yi = batched(indices);
  TORCH_CHECK(gy.dim() == 4 && gy.size(0) == gi.size(0) && gy.size(1) == gi.size(1),
              "adaptive_max_pool2d_backward(): grad_output of shape ", grad_output.sizes(),
              " does not match the input of shape ", self.sizes());
  Device& d = ocl_device(gy);
  Kernel& k = get_kernel(d, "pool",
                         pool_options(d, gy.scalar_type(), "adaptive_max_pool2d_backward") + index_option({gy, gi}),
                         "adaptive_max_pool2d_bwd");
  const auto gs = strides4(gy), is = strides4(yi), rs = strides4(gi);
  // Each input element gathers from the windows that contain it; the indices name positions
  // in those windows (as the forward produced them).
  const Range4 r = range4(gi);
  launch(d, k, r.global, r.local, buf(gy), buf(yi), buf(gi), gi.size(1), gi.size(2), gi.size(3), gy.size(2),
         gy.size(3), gs[0], gs[1], gs[2], gs[3], is[0], is[1], is[2], is[3], rs[0], rs[1], rs[2], rs[3], r.c_fast);
  return grad_input;
}


// ---- Pooling on (B, C, D, H, W) views: adaptive average (2-D and 3-D), 3-D max / average /
// adaptive max. One work-item per output element forward, per input element backward.

constexpr size_t kPoolWG = 256;  // work-group size of the grid-stride (B, C, D, H, W) kernels

// Build options of pool.cl for values of dtype t, integers included: X_INT with the type's lowest
// value (where a max scan starts) for integer types, else pool_options.
std::string pool_options_any(Device& d, at::ScalarType t, const char* op) {
  if (at::isFloatingType(t)) return pool_options(d, t, op);
  const char* lowest = nullptr;
  switch (t) {
    case at::kByte: lowest = "0"; break;
    case at::kChar: lowest = "CHAR_MIN"; break;
    case at::kShort: lowest = "SHRT_MIN"; break;
    case at::kInt: lowest = "INT_MIN"; break;
    case at::kLong: lowest = "LONG_MIN"; break;
    default: TORCH_CHECK_NOT_IMPLEMENTED(false, "torch_ocl: ", op, " is not implemented for dtype ", t, " on ocl");
  }
  return "-DX_INT=" + cl_type_name(t) + " -DX_LOWEST=" + lowest;
}

// NotImplementedError for a dtype the CPU does not pool either, in the CPU's words.
void check_floating(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t.scalar_type()), "\"", op, "\" not implemented for '",
                              toString(t.scalar_type()), "'");
}

// Adaptive average pooling of x (nd spatial dims) into out, both of the op's own shapes.
void adaptive_avg_pool_fwd(const at::Tensor& self, const at::Tensor& out, int64_t nd, const char* op) {
  if (out.numel() == 0) return;
  const Dims5 x = dims5(self, nd), y = dims5(out, nd);
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "pool", pool_options(d, self.scalar_type(), op) + index_option({self, out}),
                         "adaptive_avg_pool3d_fwd");
  const int64_t n = out.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(out), n, y.size[1], x.size[2], x.size[3],
         x.size[4], y.size[2], y.size[3], y.size[4], x.stride[0], x.stride[1], x.stride[2], x.stride[3], x.stride[4],
         y.stride[0], y.stride[1], y.stride[2], y.stride[3], y.stride[4], y.c_fast);
}

// Its backward: grad_input (of the input's shape) from grad_output.
void adaptive_avg_pool_bwd(const at::Tensor& grad_output, const at::Tensor& grad_input, int64_t nd, const char* op) {
  if (grad_input.numel() == 0) return;
  const Dims5 gy = dims5(grad_output, nd), gi = dims5(grad_input, nd);
  Device& d = ocl_device(grad_output);
  Kernel& k = get_kernel(d, "pool", pool_options(d, grad_output.scalar_type(), op) + index_option({grad_output, grad_input}),
                         "adaptive_avg_pool3d_bwd");
  const int64_t n = grad_input.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(grad_output), buf(grad_input), n, gi.size[1], gi.size[2],
         gi.size[3], gi.size[4], gy.size[2], gy.size[3], gy.size[4], gy.stride[0], gy.stride[1], gy.stride[2],
         gy.stride[3], gy.stride[4], gi.stride[0], gi.stride[1], gi.stride[2], gi.stride[3], gi.stride[4], gi.c_fast);
}

// The CPU's checks of an adaptive average pooling's output sizes (a negative one fails there
// in the output's allocation).
void check_adaptive_sizes(c10::IntArrayRef output_size, int64_t nd, const char* op) {
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == nd, op, ": output_size must be ", nd);
  for (int64_t v : output_size)
    TORCH_CHECK(v >= 0, op, ": elements of output_size must be greater than or equal to 0 but received ",
                output_size);
}

// The checks both adaptive average backward ops share: grad_output has the input's dims,
// batch and channels (the CPU does not check the latter two and then writes out of bounds),
// and its dtype.
void check_adaptive_avg_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t nd,
                                 const char* op) {
  TORCH_CHECK(grad_output.dim() == self.dim(), op, ": Expected dimensions ", self.dim(),
              " for `grad_output` but got dimensions ", grad_output.dim());
  for (int64_t i = 0; i < self.dim() - nd; ++i)
    TORCH_CHECK(grad_output.size(i) == self.size(i), op, ": grad_output of shape ", grad_output.sizes(),
                " does not match the input of shape ", self.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": expected dtype ", self.scalar_type(),
              " for `grad_output` but got dtype ", grad_output.scalar_type());
}

// _adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
at::Tensor _adaptive_avg_pool2d_ocl(const at::Tensor& self, c10::IntArrayRef output_size) {
  check_adaptive_sizes(output_size, 2, "adaptive_avg_pool2d");
  const int64_t ndim = self.dim();
  TORCH_CHECK(ndim == 3 || ndim == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", self.sizes());
  for (int64_t i = ndim - 2; i < ndim; ++i)
    TORCH_CHECK(self.size(i) > 0, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch ",
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", i, " being empty");
  check_floating(self, "adaptive_avg_pool2d");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 2);
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  const auto format = ndim == 4 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  at::Tensor out = at::empty(sizes, self.options().memory_format(format));
  adaptive_avg_pool_fwd(self, out, 2, "adaptive_avg_pool2d");
  return out;
}

// _adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor
at::Tensor _adaptive_avg_pool2d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self) {
  at::native::adaptive_pool_empty_output_check(grad_output, "adaptive_avg_pool2d_backward");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got ",
              self.sizes());
  check_adaptive_avg_backward(grad_output, self, 2, "adaptive_avg_pool2d_backward");
  check_floating(self, "adaptive_avg_pool2d_backward");
  at::Tensor grad_input = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  adaptive_avg_pool_bwd(grad_output, grad_input, 2, "adaptive_avg_pool2d_backward");
  return grad_input;
}

// _adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
at::Tensor _adaptive_avg_pool3d_ocl(const at::Tensor& self, c10::IntArrayRef output_size) {
  check_adaptive_sizes(output_size, 3, "adaptive_avg_pool3d");
  const int64_t ndim = self.dim();
  for (int64_t i = 1; i < ndim; ++i)
    TORCH_CHECK(self.size(i) > 0, "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch ",
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", i, " being empty");
  TORCH_CHECK(ndim == 4 || ndim == 5, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got ", self.sizes());
  check_floating(self, "adaptive_avg_pool3d");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 3);
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  at::Tensor out = at::empty(sizes, self.options());  // contiguous, as on the CPU
  adaptive_avg_pool_fwd(self, out, 3, "adaptive_avg_pool3d");
  return out;
}

// _adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor
at::Tensor _adaptive_avg_pool3d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self) {
  at::native::adaptive_pool_empty_output_check(grad_output, "adaptive_avg_pool3d_backward");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "adaptive_avg_pool3d_backward(): Expected 4D or 5D tensor, but got ",
              self.sizes());
  check_adaptive_avg_backward(grad_output, self, 3, "adaptive_avg_pool3d_backward");
  check_floating(self, "adaptive_avg_pool3d_backward");
  at::Tensor grad_input = at::empty(self.sizes(), self.options());  // contiguous, as on the CPU
  adaptive_avg_pool_bwd(grad_output, grad_input, 3, "adaptive_avg_pool3d_backward");
  return grad_input;
}


// The window geometry of a 3-D max or average pooling, from the op's int[3] arguments as the
// CPU reads them (one value for all dims or three; an empty stride is the kernel size), with
// its output size per dim.
struct Pool3d {
  std::array<int, 3> k, s, p, dil;
  std::array<int64_t, 3> out;
  // What the kernels multiply window positions by or sum (index_option): each dim's kernel
  // extent k * dil, stride and padding, the window volume, and `divisor` (avg_pool's override).
  std::vector<int64_t> extents(int64_t divisor = 0) const {
    std::vector<int64_t> v{int64_t(k[0]) * k[1] * k[2], divisor};
    for (int i = 0; i < 3; ++i) v.insert(v.end(), {int64_t(k[i]) * dil[i], s[i], p[i]});
    return v;
  }
};

// Value i of a pooling op's int[N] argument (one value for every dim, or one per dim), as an
// int (the CPU's kernels take ints).
int pick(c10::IntArrayRef v, int i) { return c10::checked_convert<int, int64_t>(v[v.size() == 1 ? 0 : i], "int"); }

Pool3d pool3d_geom(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                   c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode, const char* op) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3, op,
              ": kernel_size must either be a single int, or a tuple of three ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3, op,
              ": stride must either be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3, op,
              ": padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3, op,
              ": dilation must be either a single int, or a tuple of three ints");
  Pool3d g;
  for (int i = 0; i < 3; ++i) {
    g.k[i] = pick(kernel_size, i);
    g.s[i] = stride.empty() ? g.k[i] : pick(stride, i);
    g.p[i] = pick(padding, i);
    g.dil[i] = pick(dilation, i);
  }
  for (int i = 0; i < 3; ++i)
    g.out[i] = at::native::pooling_output_shape<int64_t>(self.size(self.dim() - 3 + i), g.k[i], g.p[i], g.s[i],
                                                         g.dil[i], ceil_mode);
  return g;
}

// The CPU's shape checks of a 3-D max pooling's input (and, given, of its gradient / indices).
void check_max_pool3d(const at::Tensor& self, const Pool3d& g, const char* op) {
  const int64_t nd = self.dim();
  at::native::pool3d_shape_check(self, self.size(nd - 4), g.k[0], g.k[1], g.k[2], g.s[0], g.s[1], g.s[2], g.p[0],
                                 g.p[1], g.p[2], g.dil[0], g.dil[1], g.dil[2], self.size(nd - 3), self.size(nd - 2),
                                 self.size(nd - 1), g.out[0], g.out[1], g.out[2], op);
}

// The range of pool.cl's 2-D kernels (max_pool2d_*, avg_pool2d_*) over t4's (B, C, H, W)
// positions, or nullopt where they do not serve: 3-D pooling, or a grid past kMaxGrid along
// dims 1 and 2 (the flat *_3d kernels take those).
std::optional<Range4> range2d(const at::Tensor& t4, int64_t nd) {
  if (nd != 2) return std::nullopt;
  const Range4 r = range4(t4);
  // Work-items, not groups, against kMaxGrid: conservative whatever the local size.
  constexpr size_t limit = kMaxGrid;
  if (r.global.sz[1] > limit || r.global.sz[2] > limit) return std::nullopt;
  return r;
}

// Their build options: g's 2-D kernel size and stride.
std::string pool_geometry_options(const Pool3d& g) {
  return " -DPOOL_KH=" + std::to_string(g.k[1]) + " -DPOOL_KW=" + std::to_string(g.k[2]) +
         " -DPOOL_SH=" + std::to_string(g.s[1]) + " -DPOOL_SW=" + std::to_string(g.s[2]);
}

// The launches of the max / average pooling kernels, shared by the 2-D and 3-D ops: tensors
// with nd (2 or 3) spatial dims, seen as (B, C, D, H, W) (dims5: a 2-D one has one depth row;
// its geometry one tap, stride 1 and no padding along it, pool2d_geom).
void max_pool_fwd(const at::Tensor& self, const at::Tensor& out, const at::Tensor& indices, const Pool3d& g,
                  int64_t nd, const char* op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  Device& d = ocl_device(self);
  const std::string opts = pool_options_any(d, self.scalar_type(), op) + index_option({self, out}, g.extents());
  // Undilated 2-D windows: max_pool2d_fwd, its kernel size and stride compiled in.
  const at::Tensor x4 = batched(self), y4 = batched(out), yi4 = batched(indices);
  if (const auto r = range2d(y4, nd); r && g.dil[1] == 1 && g.dil[2] == 1) {
    const auto xs = strides4(x4), os = strides4(y4), is = strides4(yi4);
    launch(d, get_kernel(d, "pool", opts + pool_geometry_options(g), "max_pool2d_fwd"), r->global, r->local, buf(x4),
           buf(y4), buf(yi4), x4.size(1), x4.size(2), x4.size(3), y4.size(2), y4.size(3), int64_t{g.p[1]},
           int64_t{g.p[2]}, xs[0], xs[1], xs[2], xs[3], os[0], os[1], os[2], os[3], is[0], is[1], is[2], is[3],
           r->c_fast);
    return;
  }
  const Dims5 x = dims5(self, nd), y = dims5(out, nd), yi = dims5(indices, nd);
  Kernel& k = get_kernel(d, "pool", opts, "max_pool3d_fwd");
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(out), buf(indices), n, y.size[1], x.size[2],
         x.size[3], x.size[4], y.size[2], y.size[3], y.size[4], int64_t{g.k[0]}, int64_t{g.k[1]}, int64_t{g.k[2]},
         int64_t{g.s[0]}, int64_t{g.s[1]}, int64_t{g.s[2]}, int64_t{g.p[0]}, int64_t{g.p[1]}, int64_t{g.p[2]},
         int64_t{g.dil[0]}, int64_t{g.dil[1]}, int64_t{g.dil[2]}, x.stride[0], x.stride[1], x.stride[2], x.stride[3],
         x.stride[4], y.stride[0], y.stride[1], y.stride[2], y.stride[3], y.stride[4], yi.stride[0], yi.stride[1],
         yi.stride[2], yi.stride[3], yi.stride[4], y.c_fast);
}

void max_pool_bwd(const at::Tensor& grad_output, const at::Tensor& indices, const at::Tensor& grad_input,
                  const Pool3d& g, int64_t nd, const char* op) {
  const int64_t n = grad_input.numel();
  if (n == 0) return;
  Device& d = ocl_device(grad_input);
  const std::string opts =
      pool_options(d, grad_input.scalar_type(), op) + index_option({grad_output, grad_input}, g.extents());
  // Undilated 2-D windows: max_pool2d_bwd, its kernel size and stride compiled in.
  const at::Tensor gi4 = batched(grad_input), gy4 = batched(grad_output), yi4 = batched(indices);
  if (const auto r = range2d(gi4, nd); r && g.dil[1] == 1 && g.dil[2] == 1) {
    const auto gs = strides4(gy4), is = strides4(yi4), rs = strides4(gi4);
    Kernel& k = get_kernel(d, "pool", opts + pool_geometry_options(g), "max_pool2d_bwd");
    launch(d, k, r->global, r->local, buf(gy4), buf(yi4), buf(gi4), gi4.size(1), gi4.size(2), gi4.size(3),
           gy4.size(2), gy4.size(3), int64_t{g.p[1]}, int64_t{g.p[2]}, gs[0], gs[1], gs[2], gs[3], is[0], is[1], is[2],
           is[3], rs[0], rs[1], rs[2], rs[3], r->c_fast);
    return;
  }
  const Dims5 gy = dims5(grad_output, nd), yi = dims5(indices, nd), gi = dims5(grad_input, nd);
  Kernel& k = get_kernel(d, "pool", opts, "max_pool3d_bwd");
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(grad_output), buf(indices), buf(grad_input), n,
         gi.size[1], gi.size[2], gi.size[3], gi.size[4], gy.size[2], gy.size[3], gy.size[4], int64_t{g.k[0]},
         int64_t{g.k[1]}, int64_t{g.k[2]}, int64_t{g.s[0]}, int64_t{g.s[1]}, int64_t{g.s[2]}, int64_t{g.p[0]},
         int64_t{g.p[1]}, int64_t{g.p[2]}, int64_t{g.dil[0]}, int64_t{g.dil[1]}, int64_t{g.dil[2]}, gy.stride[0],
         gy.stride[1], gy.stride[2], gy.stride[3], gy.stride[4], yi.stride[0], yi.stride[1], yi.stride[2],
         yi.stride[3], yi.stride[4], gi.stride[0], gi.stride[1], gi.stride[2], gi.stride[3], gi.stride[4], gi.c_fast);
}

void avg_pool_fwd(const at::Tensor& self, const at::Tensor& out, const Pool3d& g, bool count_include_pad,
                  c10::optional<int64_t> divisor_override, int64_t nd, const char* op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  Device& d = ocl_device(self);
  const std::string opts = pool_options_any(d, self.scalar_type(), op) +
                           index_option({self, out}, g.extents(divisor_override.value_or(0)));
  const at::Tensor x4 = batched(self), y4 = batched(out);
  if (const auto r = range2d(y4, nd)) {  // 2-D windows: avg_pool2d_fwd, its kernel size and stride compiled in
    const auto xs = strides4(x4), os = strides4(y4);
    launch(d, get_kernel(d, "pool", opts + pool_geometry_options(g), "avg_pool2d_fwd"), r->global, r->local, buf(x4),
           buf(y4), x4.size(1), x4.size(2), x4.size(3), y4.size(2), y4.size(3), int64_t{g.p[1]}, int64_t{g.p[2]},
           cl_int{count_include_pad}, divisor_override.value_or(0), xs[0], xs[1], xs[2], xs[3], os[0], os[1], os[2],
           os[3], r->c_fast);
    return;
  }
  const Dims5 x = dims5(self, nd), y = dims5(out, nd);
  Kernel& k = get_kernel(d, "pool", opts, "avg_pool3d_fwd");
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(out), n, y.size[1], x.size[2], x.size[3],
         x.size[4], y.size[2], y.size[3], y.size[4], int64_t{g.k[0]}, int64_t{g.k[1]}, int64_t{g.k[2]},
         int64_t{g.s[0]}, int64_t{g.s[1]}, int64_t{g.s[2]}, int64_t{g.p[0]}, int64_t{g.p[1]}, int64_t{g.p[2]},
         cl_int{count_include_pad}, divisor_override.value_or(0), x.stride[0], x.stride[1], x.stride[2],
         x.stride[3], x.stride[4], y.stride[0], y.stride[1], y.stride[2], y.stride[3], y.stride[4], y.c_fast);
}

void avg_pool_bwd(const at::Tensor& grad_output, const at::Tensor& grad_input, const Pool3d& g, bool count_include_pad,
                  c10::optional<int64_t> divisor_override, int64_t nd, const char* op) {
  const int64_t n = grad_input.numel();
  if (n == 0) return;
  Device& d = ocl_device(grad_input);
  const std::string opts = pool_options_any(d, grad_input.scalar_type(), op) +
                           index_option({grad_output, grad_input}, g.extents(divisor_override.value_or(0)));
  const at::Tensor gy4 = batched(grad_output), gi4 = batched(grad_input);
  if (const auto r = range2d(gi4, nd)) {  // 2-D windows: avg_pool2d_bwd, its kernel size and stride compiled in
    const auto gs = strides4(gy4), rs = strides4(gi4);
    launch(d, get_kernel(d, "pool", opts + pool_geometry_options(g), "avg_pool2d_bwd"), r->global, r->local,
           buf(gy4), buf(gi4), gi4.size(1), gi4.size(2), gi4.size(3), gy4.size(2), gy4.size(3), int64_t{g.p[1]},
           int64_t{g.p[2]}, cl_int{count_include_pad}, divisor_override.value_or(0), gs[0], gs[1], gs[2], gs[3],
           rs[0], rs[1], rs[2], rs[3], r->c_fast);
    return;
  }
  const Dims5 gy = dims5(grad_output, nd), gi = dims5(grad_input, nd);
  Kernel& k = get_kernel(d, "pool", opts, "avg_pool3d_bwd");
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(grad_output), buf(grad_input), n, gi.size[1], gi.size[2],
         gi.size[3], gi.size[4], gy.size[2], gy.size[3], gy.size[4], int64_t{g.k[0]}, int64_t{g.k[1]},
         int64_t{g.k[2]}, int64_t{g.s[0]}, int64_t{g.s[1]}, int64_t{g.s[2]}, int64_t{g.p[0]}, int64_t{g.p[1]},
         int64_t{g.p[2]}, cl_int{count_include_pad}, divisor_override.value_or(0), gy.stride[0], gy.stride[1],
         gy.stride[2], gy.stride[3], gy.stride[4], gi.stride[0], gi.stride[1], gi.stride[2], gi.stride[3],
         gi.stride[4], gi.c_fast);
}

// max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out_ocl(const at::Tensor& self,
                                                                     c10::IntArrayRef kernel_size,
                                                                     c10::IntArrayRef stride,
                                                                     c10::IntArrayRef padding,
                                                                     c10::IntArrayRef dilation, bool ceil_mode,
                                                                     at::Tensor& out, at::Tensor& indices) {
  const char* op = "max_pool3d";
  const Pool3d g = pool3d_geom(self, kernel_size, stride, padding, dilation, ceil_mode, op);
  const auto format = self.suggest_memory_format();
  if (format == at::MemoryFormat::ChannelsLast3d) {
    TORCH_CHECK(self.dim() == 5, "non-empty 5D (batch mode) tensor expected for input with channels_last_3d layout");
  } else {
    TORCH_CHECK(format == at::MemoryFormat::Contiguous, "Unsupported memory format. Supports only ChannelsLast3d, ",
                "Contiguous");
    TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  }
  check_max_pool3d(self, g, "max_pool3d_with_indices()");
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"max_pool3d\" not implemented for 'Bool'");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max_pool3d_with_indices: expected out of dtype ",
              self.scalar_type(), ", but got ", out.scalar_type());
  TORCH_CHECK(indices.scalar_type() == at::kLong, "max_pool3d_with_indices: expected indices of dtype Long, but got ",
              indices.scalar_type());
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 3);
  sizes.insert(sizes.end(), g.out.begin(), g.out.end());
  out.resize_(sizes, format);
  indices.resize_(sizes, format);
  if (out.numel() == 0) return {out, indices};
  max_pool_fwd(self, out, indices, g, 3, op);
  return {out, indices};
}

// max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size,
                                                               c10::IntArrayRef stride, c10::IntArrayRef padding,
                                                               c10::IntArrayRef dilation, bool ceil_mode) {
  at::Tensor out = at::empty({0}, self.options()), indices = at::empty({0}, self.options().dtype(at::kLong));
  max_pool3d_with_indices_out_ocl(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices);
  return {out, indices};
}

// max_pool3d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& max_pool3d_with_indices_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                                     c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                     bool ceil_mode, const at::Tensor& indices,
                                                     at::Tensor& grad_input) {
  const char* op = "max_pool3d_with_indices_backward";
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  TORCH_CHECK(grad_output.dim() == self.dim(), "non-empty ", self.dim(),
              "D tensor expected for gradOutput (the input's dims)");
  Pool3d g = pool3d_geom(self, kernel_size, stride, padding, dilation, ceil_mode, op);
  // As on the CPU, the windows are those of grad_output (whose sizes the forward gave).
  for (int i = 0; i < 3; ++i) g.out[i] = grad_output.size(grad_output.dim() - 3 + i);
  check_max_pool3d(self, g, "max_pool3d_with_indices_backward()");
  TORCH_CHECK(grad_output.sizes().slice(0, self.dim() - 3) == self.sizes().slice(0, self.dim() - 3), op,
              ": grad_output of shape ", grad_output.sizes(), " does not match the input of shape ", self.sizes());
  TORCH_CHECK(indices.sizes() == grad_output.sizes() && indices.scalar_type() == at::kLong, op,
              ": expected int64 indices of grad_output's shape ", grad_output.sizes(), ", but got ",
              indices.scalar_type(), " indices of shape ", indices.sizes());
  check_floating(self, "max_pool3d_backward");
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && grad_input.scalar_type() == self.scalar_type(), op,
              ": expected grad_output and grad_input of dtype ", self.scalar_type(), ", but got ",
              grad_output.scalar_type(), " and ", grad_input.scalar_type());
  grad_input.resize_(self.sizes(), self.suggest_memory_format());
  if (grad_input.numel() == 0) return grad_input;
  max_pool_bwd(grad_output, indices, grad_input, g, 3, op);
  return grad_input;
}

// max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor
at::Tensor max_pool3d_with_indices_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                                c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
                                                const at::Tensor& indices) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return max_pool3d_with_indices_backward_out_ocl(grad_output, self, kernel_size, stride, padding, dilation,
                                                  ceil_mode, indices, grad_input);
}

// The CPU's average pooling dtypes: float, double and int64.
void check_avg_pool3d_dtype(const at::Tensor& t, const char* op) {
  const auto st = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(st == at::kFloat || st == at::kDouble || st == at::kLong, "\"", op,
                              "\" not implemented for '", toString(st), "'");
}

// avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& avg_pool3d_out_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               c10::optional<int64_t> divisor_override, at::Tensor& out) {
  OutMeta<at::meta::structured_avg_pool3d> m(out);
  m.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_avg_pool3d_dtype(self, "avg_pool3d");
  if (out.numel() == 0) return out;
  const Pool3d g = pool3d_geom(self, kernel_size, stride, padding, {1}, ceil_mode, "avg_pool3d");
  avg_pool_fwd(self, out, g, count_include_pad, divisor_override, 3, "avg_pool3d");
  return out;
}

// avg_pool3d_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& avg_pool3d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                        c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                        c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                        c10::optional<int64_t> divisor_override, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_avg_pool3d_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_avg_pool3d_dtype(self, "avg_pool3d_backward");
  if (grad_input.numel() == 0) return grad_input;
  const Pool3d g = pool3d_geom(self, kernel_size, stride, padding, {1}, ceil_mode, "avg_pool3d_backward");
  avg_pool_bwd(grad_output, grad_input, g, count_include_pad, divisor_override, 3, "avg_pool3d_backward");
  return grad_input;
}

// ---- 2-D max and average pooling (and the 1-D forms ATen runs through them): the kernels
// of the 3-D ops with one depth row. ATen's meta functions check the arguments and size the
// outputs (memory format included), as on the CPU.

// The geometry of a 2-D pooling whose output is `out`, from the op's int[2] arguments (one
// value or two; an empty stride is the kernel size), as a 3-D one: one tap along the depth.
Pool3d pool2d_geom(const at::Tensor& out, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                   c10::IntArrayRef padding, c10::IntArrayRef dilation) {
  Pool3d g{{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  for (int i = 0; i < 2; ++i) {
    g.k[i + 1] = pick(kernel_size, i);
    g.s[i + 1] = stride.empty() ? g.k[i + 1] : pick(stride, i);
    g.p[i + 1] = pick(padding, i);
    g.dil[i + 1] = pick(dilation, i);
    g.out[i + 1] = out.size(out.dim() - 2 + i);
  }
  return g;
}

// The CPU's 2-D average pooling dtypes: floating types and int64.
void check_avg_pool2d_dtype(const at::Tensor& t, const char* op) {
  const auto st = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(st) || st == at::kLong, "\"", op, "\" not implemented for '",
                              toString(st), "'");
}

// max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out_ocl(const at::Tensor& self,
                                                                     c10::IntArrayRef kernel_size,
                                                                     c10::IntArrayRef stride,
                                                                     c10::IntArrayRef padding,
                                                                     c10::IntArrayRef dilation, bool ceil_mode,
                                                                     at::Tensor& out, at::Tensor& indices) {
  OutMeta<at::meta::structured_max_pool2d_with_indices, 2> m(out, indices);
  m.meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool, "\"max_pool2d\" not implemented for 'Bool'");
  max_pool_fwd(self, out, indices, pool2d_geom(out, kernel_size, stride, padding, dilation), 2, "max_pool2d");
  return {out, indices};
}

// max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& max_pool2d_with_indices_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                     c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                                     c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                     bool ceil_mode, const at::Tensor& indices,
                                                     at::Tensor& grad_input) {
  OutMeta<at::meta::structured_max_pool2d_with_indices_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  check_floating(self, "max_pool2d_backward");
  // Each input element gathers the gradients of the windows whose index names it.
  max_pool_bwd(grad_output, indices, grad_input, pool2d_geom(grad_output, kernel_size, stride, padding, dilation), 2,
               "max_pool2d_backward");
  return grad_input;
}

// avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& avg_pool2d_out_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               c10::optional<int64_t> divisor_override, at::Tensor& out) {
  OutMeta<at::meta::structured_avg_pool2d> m(out);
  m.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_avg_pool2d_dtype(self, "avg_pool2d");
  avg_pool_fwd(self, out, pool2d_geom(out, kernel_size, stride, padding, {1}), count_include_pad, divisor_override, 2,
               "avg_pool2d");
  return out;
}

// avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& avg_pool2d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                        c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                        c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                        c10::optional<int64_t> divisor_override, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_avg_pool2d_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_avg_pool2d_dtype(self, "avg_pool2d_backward");
  avg_pool_bwd(grad_output, grad_input, pool2d_geom(grad_output, kernel_size, stride, padding, {1}),
               count_include_pad, divisor_override, 2, "avg_pool2d_backward");
  return grad_input;
}

// adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool3d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size,
                                                                 at::Tensor& out, at::Tensor& indices) {
  OutMeta<at::meta::structured_adaptive_max_pool3d, 2> m(out, indices);
  m.meta(self, output_size);
  check_floating(self, "adaptive_max_pool3d_cpu");
  if (out.numel() == 0) return {out, indices};
  const Dims5 x = dims5(self, 3), y = dims5(out, 3), yi = dims5(indices, 3);
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "pool", pool_options(d, self.scalar_type(), "adaptive_max_pool3d") + index_option({self, out}),
                         "adaptive_max_pool3d_fwd");
  const int64_t n = out.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(out), buf(indices), n, y.size[1], x.size[2],
         x.size[3], x.size[4], y.size[2], y.size[3], y.size[4], x.stride[0], x.stride[1], x.stride[2], x.stride[3],
         x.stride[4], y.stride[0], y.stride[1], y.stride[2], y.stride[3], y.stride[4], yi.stride[0], yi.stride[1],
         yi.stride[2], yi.stride[3], yi.stride[4], y.c_fast);
  return {out, indices};
}

// adaptive_max_pool3d_backward.grad_input(Tensor grad_output, Tensor self, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& adaptive_max_pool3d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_adaptive_max_pool3d_backward> m(grad_input);
  m.meta(grad_output, self, indices);
  check_floating(self, "adaptive_max_pool3d_backward");
  TORCH_CHECK(indices.scalar_type() == at::kLong && indices.sizes() == grad_output.sizes(),
              "adaptive_max_pool3d_backward(): expected int64 indices of grad_output's shape ", grad_output.sizes(),
              ", but got ", indices.scalar_type(), " indices of shape ", indices.sizes());
  TORCH_CHECK(grad_output.dim() == self.dim() &&
                  grad_output.sizes().slice(0, self.dim() - 3) == self.sizes().slice(0, self.dim() - 3),
              "adaptive_max_pool3d_backward(): grad_output of shape ", grad_output.sizes(),
              " does not match the input of shape ", self.sizes());
  if (grad_input.numel() == 0) return grad_input;
  const Dims5 gy = dims5(grad_output, 3), yi = dims5(indices, 3), gi = dims5(grad_input, 3);
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "pool",
                         pool_options(d, self.scalar_type(), "adaptive_max_pool3d_backward") +
                             index_option({grad_output, grad_input}),
                         "adaptive_max_pool3d_bwd");
  const int64_t n = grad_input.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(grad_output), buf(indices), buf(grad_input), n,
         gi.size[1], gi.size[2], gi.size[3], gi.size[4], gy.size[2], gy.size[3], gy.size[4], gy.stride[0],
         gy.stride[1], gy.stride[2], gy.stride[3], gy.stride[4], yi.stride[0], yi.stride[1], yi.stride[2],
         yi.stride[3], yi.stride[4], gi.stride[0], gi.stride[1], gi.stride[2], gi.stride[3], gi.stride[4], gi.c_fast);
  return grad_input;
}


// Scatters self's values to out (zeroed here) at the positions indices name in each output
// plane; nd (2 or 3) spatial dims. An index outside its plane raises at the next
// synchronization (the device error flag), where the CPU raises at once.
void max_unpool_fwd(const at::Tensor& self, const at::Tensor& indices, at::Tensor& out, int64_t nd, const char* op) {
  out.zero_();
  if (out.numel() == 0 || self.numel() == 0) return;
  const Dims5 x = dims5(self, nd), yi = dims5(indices, nd), y = dims5(out, nd);
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "pool", pool_options(d, self.scalar_type(), op), "max_unpool3d_fwd");
  const int64_t n = self.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(indices), buf(out), n, x.size[1], x.size[2],
         x.size[3], x.size[4], y.size[2], y.size[3], y.size[4], x.stride[0], x.stride[1], x.stride[2], x.stride[3],
         x.stride[4], yi.stride[0], yi.stride[1], yi.stride[2], yi.stride[3], yi.stride[4], y.stride[0], y.stride[1],
         y.stride[2], y.stride[3], y.stride[4], x.c_fast, d.error_buf);
}

// The checks max_unpool2d and max_unpool3d share, as the CPU's: int64 indices of self's shape,
// self of nd + 1 or nd + 2 dims, none of its non-batch dims empty, output sizes >= 0.
void check_max_unpool(const at::Tensor& self, const at::Tensor& indices, c10::IntArrayRef output_size, int64_t nd,
                      const char* op) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == nd, "There should be exactly ", nd,
              " elements in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == nd + 1 || self.dim() == nd + 2, "Input to max_unpooling", nd, "d should be a ", nd + 1,
              "d or ", nd + 2, "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, op, "(): Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  for (int64_t v : output_size)
    TORCH_CHECK(v >= 0, op, "(): output_size must contain non-negative spatial dimensions, but got output_size=",
                output_size);
}

// The output sizes of max unpooling: self's batch and channels, then output_size.
std::vector<int64_t> unpool_sizes(const at::Tensor& self, c10::IntArrayRef output_size, int64_t nd) {
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - nd);
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  return sizes;
}

// max_unpool2d.out(Tensor self, Tensor indices, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& max_unpool2d_out_ocl(const at::Tensor& self, const at::Tensor& indices, c10::IntArrayRef output_size,
                                 at::Tensor& out) {
  check_max_unpool(self, indices, output_size, 2, "max_unpooling2d");
  check_floating(self, "max_unpool2d");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max_unpool2d: expected out of dtype ", self.scalar_type(),
              ", but got ", out.scalar_type());
  // Channels_last in, channels_last out (4-D), as on the CPU.
  out.resize_(unpool_sizes(self, output_size, 2),
              self.dim() == 4 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous);
  max_unpool_fwd(self, indices, out, 2, "max_unpool2d");
  return out;
}

// max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor
at::Tensor max_unpool2d_ocl(const at::Tensor& self, const at::Tensor& indices, c10::IntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return max_unpool2d_out_ocl(self, indices, output_size, out);
}

// max_unpool3d.out(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& max_unpool3d_out_ocl(const at::Tensor& self, const at::Tensor& indices, c10::IntArrayRef output_size,
                                 c10::IntArrayRef stride, c10::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a ",
              "tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(output_size.size() == 3, "There should be exactly three elements (depth, height, width) in ",
              "output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3, "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3, "There should be exactly three elements (depth, height, width) in padding, but ",
              "got: ", padding.size(), " elements.");
  check_max_unpool(self, indices, output_size, 3, "max_unpooling3d");
  check_floating(self, "max_unpool3d");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0, "strides should be greater than zero, but got stride: ",
              stride);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max_unpool3d: expected out of dtype ", self.scalar_type(),
              ", but got ", out.scalar_type());
  out.resize_(unpool_sizes(self, output_size, 3));  // contiguous, as on the CPU
  max_unpool_fwd(self, indices, out, 3, "max_unpool3d");
  return out;
}

// max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor
at::Tensor max_unpool3d_ocl(const at::Tensor& self, const at::Tensor& indices, c10::IntArrayRef output_size,
                            c10::IntArrayRef stride, c10::IntArrayRef padding) {
  at::Tensor out = at::empty({0}, self.options());
  return max_unpool3d_out_ocl(self, indices, output_size, stride, padding, out);
}


// alpha = (in - k) / (out - 1) of a fractional pooling dim, computed in T as the CPU computes it
// (T = the input's dtype: float16 / bfloat16 division rounds to them), as the kernel's ACC bits.
template <typename T, typename Acc>
uint64_t frac_alpha_bits_as(int64_t in, int64_t k, int64_t out) {
  const Acc a = out > 1 ? static_cast<Acc>(static_cast<T>(static_cast<T>(in - k) / static_cast<T>(out - 1))) : Acc(0);
  uint64_t bits = 0;
  std::memcpy(&bits, &a, sizeof(Acc));
  return bits;
}
uint64_t frac_alpha_bits(at::ScalarType t, int64_t in, int64_t k, int64_t out) {
  switch (t) {
    case at::kDouble: return frac_alpha_bits_as<double, double>(in, k, out);
    case at::kHalf: return frac_alpha_bits_as<c10::Half, float>(in, k, out);
    case at::kBFloat16: return frac_alpha_bits_as<c10::BFloat16, float>(in, k, out);
    default: return frac_alpha_bits_as<float, float>(in, k, out);
  }
}

// The CPU's checks of fractional max pooling's random samples: (N', C, nd) with N' >= N, the
// input's dtype.
void check_frac_samples(const at::Tensor& self, const at::Tensor& samples, int64_t nd) {
  TORCH_CHECK(samples.dim() == 3, "Expect _random_samples to have 3 dimensions, got ", samples.dim());
  const int64_t n = self.dim() == nd + 2 ? self.size(0) : 1, c = self.size(self.dim() - nd - 1);
  TORCH_CHECK(samples.size(0) >= n, "Expect _random_samples.size(0) no less then input batch size.");
  TORCH_CHECK(samples.size(1) == c, "Expect _random_samples.size(1) equals to input channel size.");
  TORCH_CHECK(samples.size(2) == nd, "Expect _random_samples.size(2) equals to ", nd, "; got ", samples.size(2), ".");
  TORCH_CHECK(samples.scalar_type() == self.scalar_type(), "Expect _random_samples to have the same dtype as input");
}

// Fractional max pooling of self (nd spatial dims) into out / indices (sized by the meta
// function), kernel_size per dim, with the samples of each plane.
void fractional_max_pool_fwd(const at::Tensor& self, c10::IntArrayRef kernel_size, const at::Tensor& samples,
                             const at::Tensor& out, const at::Tensor& indices, int64_t nd, const char* op) {
  check_frac_samples(self, samples, nd);
  check_floating(self, op);
  if (out.numel() == 0) return;
  const Dims5 x = dims5(self, nd), y = dims5(out, nd), yi = dims5(indices, nd);
  // (kd, kh, kw) and the sample each dim uses: 3-D (t, h, w) -> samples 0, 1, 2; 2-D (w, h) -> 0, 1.
  const int64_t kd = nd == 3 ? kernel_size[0] : 1, kh = kernel_size[nd - 2], kw = kernel_size[nd - 1];
  const int64_t sd = 0, sh = 1, sw = nd == 3 ? 2 : 0;
  const at::ScalarType t = self.scalar_type();
  Device& d = ocl_device(self);
  Kernel& k = get_kernel(d, "pool", pool_options(d, t, op), "fractional_max_pool3d_fwd");
  const int64_t n = out.numel();
  launch(d, k, grid_stride(n, kPoolWG), Range(kPoolWG), buf(self), buf(samples), buf(out), buf(indices), n, y.size[1],
         x.size[2], x.size[3], x.size[4], y.size[2], y.size[3], y.size[4], kd, kh, kw,
         frac_alpha_bits(t, x.size[2], kd, y.size[2]), frac_alpha_bits(t, x.size[3], kh, y.size[3]),
         frac_alpha_bits(t, x.size[4], kw, y.size[4]), samples.stride(0), samples.stride(1), samples.stride(2), sd, sh,
         sw, x.stride[0], x.stride[1], x.stride[2], x.stride[3], x.stride[4], y.stride[0], y.stride[1], y.stride[2],
         y.stride[3], y.stride[4], yi.stride[0], yi.stride[1], yi.stride[2], yi.stride[3], yi.stride[4], y.c_fast);
}

// Its backward into grad_input (of self's shape): zeroed, then each plane's gradients added
// at their indices.
void fractional_max_pool_bwd(const at::Tensor& grad_output, const at::Tensor& indices, const at::Tensor& grad_input,
                             int64_t nd, const char* op) {
  check_floating(grad_input, op);
  grad_input.zero_();
  if (grad_input.numel() == 0 || grad_output.numel() == 0) return;
  const Dims5 gy = dims5(grad_output, nd), yi = dims5(indices, nd), gi = dims5(grad_input, nd);
  Device& d = ocl_device(grad_input);
  Kernel& k = get_kernel(d, "pool", pool_options(d, grad_input.scalar_type(), op), "fractional_max_pool3d_bwd");
  const int64_t planes = gi.size[0] * gi.size[1];
  launch(d, k, grid_stride(planes, 64), Range(64), buf(grad_output), buf(indices), buf(grad_input), planes,
         gi.size[1], gi.size[2], gi.size[3], gi.size[4], gy.size[2], gy.size[3], gy.size[4], gy.stride[0],
         gy.stride[1], gy.stride[2], gy.stride[3], gy.stride[4], yi.stride[0], yi.stride[1], yi.stride[2],
         yi.stride[3], yi.stride[4], gi.stride[0], gi.stride[1], gi.stride[2], gi.stride[3], gi.stride[4],
         d.error_buf);
}

// fractional_max_pool2d.output(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> fractional_max_pool2d_out_ocl(const at::Tensor& self,
                                                                   c10::IntArrayRef kernel_size,
                                                                   c10::IntArrayRef output_size,
                                                                   const at::Tensor& random_samples,
                                                                   at::Tensor& output, at::Tensor& indices) {
  OutMeta<at::meta::structured_fractional_max_pool2d, 2> m(output, indices);
  m.meta(self, kernel_size, output_size, random_samples);
  fractional_max_pool_fwd(self, kernel_size, random_samples, output, indices, 2, "fractional_max_pool2d");
  return {output, indices};
}

// fractional_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] output_size, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& fractional_max_pool2d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                   c10::IntArrayRef kernel_size, c10::IntArrayRef output_size,
                                                   const at::Tensor& indices, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_fractional_max_pool2d_backward> m(grad_input);
  m.meta(grad_output, self, kernel_size, output_size, indices);
  TORCH_CHECK(grad_output.sizes() == indices.sizes() && indices.scalar_type() == at::kLong,
              "fractional_max_pool2d_backward(): expected int64 indices of grad_output's shape ", grad_output.sizes(),
              ", but got ", indices.scalar_type(), " indices of shape ", indices.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "fractional_max_pool2d_backward(): expected grad_output ",
              "of dtype ", self.scalar_type(), ", but got ", grad_output.scalar_type());
  fractional_max_pool_bwd(grad_output, indices, grad_input, 2, "fractional_max_pool2d_backward");
  return grad_input;
}

// fractional_max_pool3d.output(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
std::tuple<at::Tensor&, at::Tensor&> fractional_max_pool3d_out_ocl(const at::Tensor& self,
                                                                   c10::IntArrayRef kernel_size,
                                                                   c10::IntArrayRef output_size,
                                                                   const at::Tensor& random_samples,
                                                                   at::Tensor& output, at::Tensor& indices) {
  OutMeta<at::meta::structured_fractional_max_pool3d, 2> m(output, indices);
  m.meta(self, kernel_size, output_size, random_samples);
  fractional_max_pool_fwd(self, kernel_size, random_samples, output, indices, 3, "fractional_max_pool3d");
  return {output, indices};
}

// fractional_max_pool3d_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] output_size, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& fractional_max_pool3d_backward_out_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                                   c10::IntArrayRef kernel_size, c10::IntArrayRef output_size,
                                                   const at::Tensor& indices, at::Tensor& grad_input) {
  const char* op = "fractional_max_pool3d_backward";
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, "(): Expected 4D or 5D tensor, but got: ", self.sizes());
  TORCH_CHECK(output_size.size() == 3, op, "(): output_size must be a tuple of three Ints");
  TORCH_CHECK(grad_output.dim() == self.dim() &&
                  grad_output.sizes().slice(0, self.dim() - 3) == self.sizes().slice(0, self.dim() - 3),
              op, "(): grad_output of shape ", grad_output.sizes(), " does not match the input of shape ",
              self.sizes());
  const char* dims[] = {"time", "height", "width"};
  for (int64_t i = 0; i < 3; ++i)
    TORCH_CHECK(output_size[i] == grad_output.size(self.dim() - 3 + i), "fractional_max_pool3d_backward_out(): ",
                "gradOutput ", dims[i], " unexpected");
  TORCH_CHECK(grad_output.sizes() == indices.sizes() && indices.scalar_type() == at::kLong, op,
              "(): expected int64 indices of grad_output's shape ", grad_output.sizes(), ", but got ",
              indices.scalar_type(), " indices of shape ", indices.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && grad_input.scalar_type() == self.scalar_type(), op,
              "(): expected grad_output and grad_input of dtype ", self.scalar_type(), ", but got ",
              grad_output.scalar_type(), " and ", grad_input.scalar_type());
  grad_input.resize_(self.sizes());
  fractional_max_pool_bwd(grad_output, indices, grad_input, 3, op);
  return grad_input;
}

// fractional_max_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] output_size, Tensor indices) -> Tensor
at::Tensor fractional_max_pool3d_backward_ocl(const at::Tensor& grad_output, const at::Tensor& self,
                                              c10::IntArrayRef kernel_size, c10::IntArrayRef output_size,
                                              const at::Tensor& indices) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return fractional_max_pool3d_backward_out_ocl(grad_output, self, kernel_size, output_size, indices, grad_input);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "max_pool2d_with_indices.out", max_pool2d_with_indices_out_ocl);
  OCL_IMPL(m, "max_pool2d_with_indices_backward.grad_input", max_pool2d_with_indices_backward_out_ocl);
  OCL_IMPL(m, "avg_pool2d.out", avg_pool2d_out_ocl);
  OCL_IMPL(m, "avg_pool2d_backward.grad_input", avg_pool2d_backward_out_ocl);
  OCL_IMPL(m, "adaptive_max_pool2d.out", adaptive_max_pool2d_out_ocl);
  OCL_IMPL(m, "adaptive_max_pool2d_backward.grad_input", adaptive_max_pool2d_backward_out_ocl);
  OCL_IMPL(m, "_adaptive_avg_pool2d", _adaptive_avg_pool2d_ocl);
  OCL_IMPL(m, "_adaptive_avg_pool2d_backward", _adaptive_avg_pool2d_backward_ocl);
  OCL_IMPL(m, "_adaptive_avg_pool3d", _adaptive_avg_pool3d_ocl);
  OCL_IMPL(m, "_adaptive_avg_pool3d_backward", _adaptive_avg_pool3d_backward_ocl);
  OCL_IMPL(m, "max_pool3d_with_indices", max_pool3d_with_indices_ocl);
  OCL_IMPL(m, "max_pool3d_with_indices.out", max_pool3d_with_indices_out_ocl);
  OCL_IMPL(m, "max_pool3d_with_indices_backward", max_pool3d_with_indices_backward_ocl);
  OCL_IMPL(m, "max_pool3d_with_indices_backward.grad_input", max_pool3d_with_indices_backward_out_ocl);
  OCL_IMPL(m, "avg_pool3d.out", avg_pool3d_out_ocl);
  OCL_IMPL(m, "avg_pool3d_backward.grad_input", avg_pool3d_backward_out_ocl);
  OCL_IMPL(m, "adaptive_max_pool3d.out", adaptive_max_pool3d_out_ocl);
  OCL_IMPL(m, "adaptive_max_pool3d_backward.grad_input", adaptive_max_pool3d_backward_out_ocl);
  OCL_IMPL(m, "max_unpool2d", max_unpool2d_ocl);
  OCL_IMPL(m, "max_unpool2d.out", max_unpool2d_out_ocl);
  OCL_IMPL(m, "max_unpool3d", max_unpool3d_ocl);
  OCL_IMPL(m, "max_unpool3d.out", max_unpool3d_out_ocl);
  OCL_IMPL(m, "fractional_max_pool2d.output", fractional_max_pool2d_out_ocl);
  OCL_IMPL(m, "fractional_max_pool2d_backward.grad_input", fractional_max_pool2d_backward_out_ocl);
  OCL_IMPL(m, "fractional_max_pool3d.output", fractional_max_pool3d_out_ocl);
  OCL_IMPL(m, "fractional_max_pool3d_backward", fractional_max_pool3d_backward_ocl);
  OCL_IMPL(m, "fractional_max_pool3d_backward.grad_input", fractional_max_pool3d_backward_out_ocl);
}

}  // namespace torch_ocl
