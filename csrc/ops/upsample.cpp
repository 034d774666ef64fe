// F.interpolate's modes and their backward ops. Nearest and nearest-exact (1, 2 and 3 spatial
// dims) gather each spatial axis in turn (index_select) and scatter back (index_add), source
// indices computed on the host exactly as ATen's UpSample.h does. Linear, bilinear, trilinear,
// bicubic and the antialiased modes (bilinear, bicubic, Lanczos) run kernels/upsample.cl over
// per-axis tap tables built on the host with ATen's formulas (see "Tap tables" below); uint8
// images in 2-D take the CPU's fixed-point separable path (see "uint8" below).
#include "../aten/Routing.h"
#include "../aten/Dims5.h"
#include "../aten/OutMeta.h"
#include "../aten/Pointwise.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_bicubic2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta.h>
// _upsample_lanczos2d_aa is new in torch 2.13; older torches build without it.
#if __has_include(<ATen/ops/_upsample_lanczos2d_aa_meta.h>)
#define TORCH_OCL_HAS_LANCZOS_AA 1
#include <ATen/ops/_upsample_lanczos2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_lanczos2d_aa_meta.h>
#endif
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/upsample_bicubic2d_backward_meta.h>
#include <ATen/ops/upsample_bicubic2d_meta.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_linear1d_backward_meta.h>
#include <ATen/ops/upsample_linear1d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <ATen/ops/upsample_trilinear3d_backward_meta.h>
#include <ATen/ops/upsample_trilinear3d_meta.h>
#include <ATen/ops/zeros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/MathConstants.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace torch_ocl {
namespace {

// ATen's compute_scales_value: 1 / scale when a positive scale factor was given, else in/out.
template <typename T>
T scale_of(c10::optional<double> scale, int64_t in, int64_t out) {
  return (scale.has_value() && *scale > 0.) ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / out;
}

// Nearest: out index o reads input floor(o * scale) (exact for equal sizes and for 2x);
// nearest-exact reads floor((o + 0.5) * scale), the pixel whose centre is nearest. Both in
// ATen's float arithmetic, clamped to the last input index.
at::Tensor nearest_index(int64_t in, int64_t out, c10::optional<double> scale, bool exact, const at::Tensor& like) {
  at::Tensor idx = at::empty({out}, at::TensorOptions().dtype(at::kLong));
  int64_t* p = idx.data_ptr<int64_t>();
  const float s = scale_of<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (exact)
      p[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>((o + 0.5) * s))), in - 1);
    else
      p[o] = out == in ? o : out == 2 * in ? o >> 1 : std::min(static_cast<int64_t>(std::floor(o * s)), in - 1);
  }
  return idx.to(like.device());
}

using Scales = std::initializer_list<c10::optional<double>>;

// out = self gathered along each spatial axis (2, 3, ...) by its nearest source index. `op`
// names the op in the dtype error: floating dtypes and uint8, as on the CPU.
void nearest_forward(const at::Tensor& self, c10::IntArrayRef output_size, Scales scales, bool exact,
                     const at::Tensor& out, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.scalar_type() == at::kByte, "\"", op,
                              "\" not implemented for '", self.scalar_type(), "'");
  if (out.numel() == 0) return;
  at::Tensor t = self;
  int64_t k = 0;
  for (const c10::optional<double>& s : scales) {
    t = t.index_select(2 + k, nearest_index(self.size(2 + k), output_size[k], s, exact, self));
    ++k;
  }
  out.copy_(t);
}

// The adjoint: each spatial axis scattered back (index_add), the last axis first, in the
// gradient's float/double compute type.
void nearest_backward(const at::Tensor& grad_output, c10::IntArrayRef output_size, c10::IntArrayRef input_size,
                      Scales scales, bool exact, const at::Tensor& grad_input) {
  if (grad_input.numel() == 0) return;
  at::Tensor t = grad_output.to(float_or_double(grad_output.scalar_type()));
  const std::vector<c10::optional<double>> s(scales);
  for (int64_t k = static_cast<int64_t>(s.size()) - 1; k >= 0; --k) {
    const int64_t dim = 2 + k;
    std::vector<int64_t> shape = t.sizes().vec();
    shape[dim] = input_size[dim];
    t = at::zeros(shape, t.options()).index_add_(dim, nearest_index(input_size[dim], output_size[k], s[k], exact, t), t);
  }
  grad_input.copy_(t);
}

// upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& upsample_nearest2d_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size,
                                       c10::optional<double> scales_h, c10::optional<double> scales_w,
                                       at::Tensor& out) {
  OutMeta<at::meta::structured_upsample_nearest2d> m(out);
  m.meta(self, output_size, scales_h, scales_w);
  nearest_forward(self, output_size, {scales_h, scales_w}, false, out, "upsample_nearest2d");
  return out;
}

// upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[2] input_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
at::Tensor& upsample_nearest2d_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                                c10::IntArrayRef input_size, c10::optional<double> scales_h,
                                                c10::optional<double> scales_w, at::Tensor& grad_input) {
  OutMeta<at::meta::structured_upsample_nearest2d_backward> m(grad_input);
  m.meta(grad_output, output_size, input_size, scales_h, scales_w);
  nearest_backward(grad_output, output_size, input_size, {scales_h, scales_w}, false, grad_input);
  return grad_input;
}

// The other nearest ops: 1-D and 3-D, and nearest-exact in 1, 2 and 3 dims. ATen's structured
// meta functions check the arguments and size the outputs, as for the 2-D op above.
#define NEAREST_OPS(name, op, EXACT, SCALE_PARAMS, ...)                                                             \
  at::Tensor& name##_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, SCALE_PARAMS, at::Tensor& out) { \
    OutMeta<at::meta::structured_##op> m(out);                                                                      \
    m.meta(self, output_size, __VA_ARGS__);                                                                         \
    nearest_forward(self, output_size, {__VA_ARGS__}, EXACT, out, #op);                                             \
    return out;                                                                                                     \
  }                                                                                                                 \
  at::Tensor& name##_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,                  \
                                      c10::IntArrayRef input_size, SCALE_PARAMS, at::Tensor& grad_input) {          \
    OutMeta<at::meta::structured_##op##_backward> m(grad_input);                                                    \
    m.meta(grad_output, output_size, input_size, __VA_ARGS__);                                                      \
    nearest_backward(grad_output, output_size, input_size, {__VA_ARGS__}, EXACT, grad_input);                       \
    return grad_input;                                                                                              \
  }
#define SCALES_1D c10::optional<double> scales
#define SCALES_2D c10::optional<double> scales_h, c10::optional<double> scales_w
#define SCALES_3D c10::optional<double> scales_d, c10::optional<double> scales_h, c10::optional<double> scales_w
// upsample_nearest1d.out(Tensor self, SymInt[1] output_size, float? scales=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_nearest1d_backward.grad_input(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, float? scales=None, *, Tensor(a!) grad_input) -> Tensor(a!)
NEAREST_OPS(upsample_nearest1d, upsample_nearest1d, false, SCALES_1D, scales)
// upsample_nearest3d.out(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_nearest3d_backward.grad_input(Tensor grad_output, SymInt[3] output_size, SymInt[5] input_size, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
NEAREST_OPS(upsample_nearest3d, upsample_nearest3d, false, SCALES_3D, scales_d, scales_h, scales_w)
// _upsample_nearest_exact{1,2,3}d.out / _backward.grad_input: the same signatures as above.
NEAREST_OPS(upsample_nearest_exact1d, _upsample_nearest_exact1d, true, SCALES_1D, scales)
NEAREST_OPS(upsample_nearest_exact2d, _upsample_nearest_exact2d, true, SCALES_2D, scales_h, scales_w)
NEAREST_OPS(upsample_nearest_exact3d, _upsample_nearest_exact3d, true, SCALES_3D, scales_d, scales_h, scales_w)
#undef NEAREST_OPS
#undef SCALES_1D
#undef SCALES_2D
#undef SCALES_3D

// ---- Tap tables: linear, cubic and antialiased modes in one gather --------------------------
// Each spatial axis is a sparse linear map: destination position p reads the source entries
// [ptr[p], ptr[p + 1]), each a source index and a weight. The tables are built here, on the host,
// with ATen's own index and weight formulas (UpSample.h; the antialiasing filters as the CPU's
// kernels compute them), in float (double for double inputs), so the device sums exactly the
// CPU's terms; kernels/upsample.cl applies all axes in one launch. The backward transposes the
// tables (per input position: the outputs that read it, in output order) and gathers through
// them with the same kernel: deterministic, no atomics. Building the tables costs O(output
// sizes x taps) host work and two small non-blocking uploads per call.
struct Axis {
  std::vector<int64_t> ptr{0}, idx;
  std::vector<double> w;
  void add(int64_t i, double weight) {
    idx.push_back(i);
    w.push_back(weight);
  }
  void next() { ptr.push_back(static_cast<int64_t>(idx.size())); }
};

// Position p reads source p with weight 1.
Axis identity_axis(int64_t n) {
  Axis a;
  for (int64_t p = 0; p < n; ++p) a.add(p, 1.0), a.next();
  return a;
}

// The adjoint map: source position i reads every destination entry that read i, in
// destination order (a stable counting sort).
Axis transposed(const Axis& a, int64_t src_len) {
  Axis t;
  t.ptr.assign(src_len + 1, 0);
  for (int64_t i : a.idx) ++t.ptr[i + 1];
  for (int64_t i = 0; i < src_len; ++i) t.ptr[i + 1] += t.ptr[i];
  t.idx.resize(a.idx.size());
  t.w.resize(a.w.size());
  std::vector<int64_t> fill(t.ptr.begin(), t.ptr.end() - 1);
  for (size_t p = 0; p + 1 < a.ptr.size(); ++p)
    for (int64_t e = a.ptr[p]; e < a.ptr[p + 1]; ++e) {
      const int64_t k = fill[a.idx[e]]++;
      t.idx[k] = static_cast<int64_t>(p);
      t.w[k] = a.w[e];
    }
  return t;
}

// A weight as the CPU's forward kernels store it for a `stored` tensor: their weight tables
// have the input's dtype, so float16/bfloat16 weights are rounded to it.
template <typename T>
T stored_weight(T v, at::ScalarType stored) {
  if (stored == at::kHalf) return static_cast<float>(c10::Half(static_cast<float>(v)));
  if (stored == at::kBFloat16) return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
  return v;
}

// The CPU's kernels (ATen/native/cpu, built for AVX2 / AVX-512 with FMA) compile UpSample.h's
// formulas with floating-point contraction: some a*b+c are one fused multiply-add there. The
// source index and the cubic coefficients below are UpSample.h's with the fusions the CPU's
// build makes (read off its results: the source index's, and only the middle step of
// cubic_convolution2's) spelled out, so the tables hold the CPU's values to the last bit (a
// separate multiply and add differ by an ulp of the index, ~1e-6 relative in the results).
// The unfused steps stay unfused here because x86-64 builds of this file have no FMA
// instructions to contract them into.
template <typename T>
T source_index(T scale, int64_t dst_index, bool align_corners, bool cubic) {
  if (align_corners) return scale * dst_index;
  const T src = std::fma(scale, static_cast<T>(dst_index) + static_cast<T>(0.5), static_cast<T>(-0.5));
  return (!cubic && src < static_cast<T>(0)) ? static_cast<T>(0) : src;
}
// Keys' cubic convolution: |x| <= 1, and 1 < |x| < 2.
template <typename T>
T cubic1(T x, T A) {
  return ((A + 2) * x - (A + 3)) * x * x + 1;
}
template <typename T>
T cubic2(T x, T A) {
  return std::fma(A * x - 5 * A, x, 8 * A) * x - 4 * A;
}
// The weights of the taps at floor(index) - 1 .. + 2 for fraction t (A = -0.75).
template <typename T>
void cubic_coefficients(T coeffs[4], T t) {
  const T A = -0.75, x2 = 1.0 - t;
  coeffs[0] = cubic2<T>(t + 1.0, A);
  coeffs[1] = cubic1<T>(t, A);
  coeffs[2] = cubic1<T>(x2, A);
  coeffs[3] = cubic2<T>(x2 + 1.0, A);
}

// Linear: two taps (ATen's compute_source_index_and_lambda; equal sizes copy).
template <typename T>
Axis linear_axis(int64_t in, int64_t out, bool align_corners, c10::optional<double> scale, at::ScalarType stored) {
  Axis a;
  const T ratio = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      a.add(o, 1.0);
      a.add(o, 0.0);
    } else {
      const T real = source_index<T>(ratio, o, align_corners, /*cubic=*/false);
      int64_t i0 = 0;
      T l1 = 0;
      at::native::guard_index_and_lambda(real, in, i0, l1);
      l1 = stored_weight(l1, stored);
      a.add(i0, stored_weight(static_cast<T>(1) - l1, stored));
      a.add(i0 + (i0 < in - 1 ? 1 : 0), l1);
    }
    a.next();
  }
  return a;
}

// Cubic convolution (A = -0.75): four taps around floor(source index), clamped to the axis.
template <typename T>
Axis cubic_axis(int64_t in, int64_t out, bool align_corners, c10::optional<double> scale, at::ScalarType stored) {
  Axis a;
  const T ratio = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    const T real = source_index<T>(ratio, o, align_corners, /*cubic=*/true);
    int64_t i = 0;
    T t = 0;
    at::native::guard_index_and_lambda(real, in, i, t);
    T coeffs[4];
    cubic_coefficients<T>(coeffs, t);
    for (int64_t j = 0; j < 4; ++j)
      a.add(std::max<int64_t>(std::min<int64_t>(i + j - 1, in - 1), 0), stored_weight(coeffs[j], stored));
    a.next();
  }
  return a;
}

// The antialiasing filters (Pillow's): triangle, Keys cubic with a = -0.5, Lanczos-3.
template <typename T>
T filter_linear(T x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}
template <typename T, bool keys = true>
T filter_cubic(T x) {
  constexpr T a = keys ? -0.5 : -0.75;  // -0.75 only for uint8 without antialiasing (as the CPU)
  x = std::abs(x);
  if (x < 1.0) return cubic1(x, a);
  if (x < 2.0) return cubic2(x, a);
  return 0.0;
}
template <typename T>
T sinc(T x) {
  if (x == 0.0) return 1.0;
  x *= c10::pi<T>;
  return std::sin(x) / x;
}
template <typename T>
T filter_lanczos(T x) {
  x = std::abs(x);
  return x < 3.0 ? sinc(x) * sinc(x / static_cast<T>(3.0)) : 0.0;
}

// Antialiased: the filter (of `interp_size` taps at scale 1) widened by the downsampling factor,
// over the source pixels whose centres it covers, weights normalised to sum 1 per output. The
// CPU's forward leaves an axis of unchanged size alone; its backward does not (and sizes its tap
// window with ceilf), so `backward` selects those.
template <typename T>
Axis aa_axis(int64_t in, int64_t out, bool align_corners, c10::optional<double> scale, int interp_size,
             T (*filter)(T), bool backward) {
  if (!backward && in == out) return identity_axis(out);
  Axis a;
  const T s = at::native::area_pixel_compute_scale<T>(in, out, align_corners, scale);
  const T support = (s >= 1.0) ? (interp_size * 0.5) * s : interp_size * 0.5;
  const int64_t max_size = backward ? static_cast<int64_t>(ceilf(support)) * 2 + 1
                                    : static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  std::vector<T> wt(max_size);
  for (int64_t i = 0; i < out; ++i) {
    const T center = s * (i + 0.5);
    const T invscale = (s >= 1.0) ? 1.0 / s : 1.0;
    const int64_t xmin = std::max(static_cast<int64_t>(center - support + 0.5), static_cast<int64_t>(0));
    const int64_t xend = std::min(static_cast<int64_t>(center + support + 0.5), in);
    const int64_t xsize = std::clamp(xend - xmin, static_cast<int64_t>(0), max_size);
    T total = 0.0;
    for (int64_t j = 0; j < xsize; ++j) {
      wt[j] = filter(static_cast<T>((j + xmin - center + 0.5) * invscale));
      total += wt[j];
    }
    for (int64_t j = 0; j < xsize; ++j) a.add(xmin + j, total != 0.0 ? wt[j] / total : wt[j]);
    a.next();
  }
  return a;
}

enum class Mode { Linear, Cubic, AaLinear, AaCubic, AaLanczos };

// The taps of one axis for input dtype t (tables in float, or double for double), forward, or
// backward (weights unrounded: the CPU's backward kernels keep them in float / double).
Axis axis_taps(Mode mode, at::ScalarType t, bool backward, int64_t in, int64_t out, bool align_corners,
               c10::optional<double> scale) {
  const at::ScalarType stored = backward ? float_or_double(t) : t;
  auto build = [&](auto zero) -> Axis {
    using T = decltype(zero);
    switch (mode) {
      case Mode::Linear: return linear_axis<T>(in, out, align_corners, scale, stored);
      case Mode::Cubic: return cubic_axis<T>(in, out, align_corners, scale, stored);
      case Mode::AaLinear: return aa_axis<T>(in, out, align_corners, scale, 2, filter_linear<T>, backward);
      case Mode::AaCubic: return aa_axis<T>(in, out, align_corners, scale, 4, filter_cubic<T>, backward);
      case Mode::AaLanczos: return aa_axis<T>(in, out, align_corners, scale, 6, filter_lanczos<T>, backward);
    }
    return Axis{};
  };
  return t == at::kDouble ? build(0.0) : build(0.0f);
}

// dst = src mapped through the spatial axes' taps (one Axis per spatial dim of dst, in order).
// pair: two-tap axes as the CPU's non-separable kernels sum them (kernels/upsample.cl, TAP_SUM).
void gather_taps(const at::Tensor& src, const at::Tensor& dst, std::vector<Axis> axes, bool pair, const char* op) {
  if (dst.numel() == 0) return;
  Device& d = ocl_device(dst);
  const at::ScalarType t = dst.scalar_type(), acc = float_or_double(t);
  check_dtype_supported(d, t, op);
  while (axes.size() < 3) axes.insert(axes.begin(), identity_axis(1));
  // One int64 table: the three axes' position pointers (into one shared entry numbering),
  // then every entry's source index; the weights in a second (float / double) table.
  std::vector<int64_t> tab;
  std::array<int64_t, 3> ptr_at{};
  int64_t nnz = 0;
  for (size_t k = 0; k < 3; ++k) {
    ptr_at[k] = static_cast<int64_t>(tab.size());
    for (int64_t v : axes[k].ptr) tab.push_back(nnz + v);
    nnz += static_cast<int64_t>(axes[k].idx.size());
  }
  const int64_t entries_at = static_cast<int64_t>(tab.size());
  for (const Axis& a : axes) tab.insert(tab.end(), a.idx.begin(), a.idx.end());
  at::Tensor tab_h = at::empty({static_cast<int64_t>(tab.size())}, at::TensorOptions().dtype(at::kLong));
  std::copy(tab.begin(), tab.end(), tab_h.data_ptr<int64_t>());
  at::Tensor wts_h = at::empty({std::max<int64_t>(nnz, 1)}, at::TensorOptions().dtype(at::kDouble));
  double* wp = wts_h.data_ptr<double>();
  for (const Axis& a : axes) wp = std::copy(a.w.begin(), a.w.end(), wp);
  const at::Tensor tab_d = tab_h.to(dst.device()), wts_d = wts_h.to(acc).to(dst.device());

  const int64_t nd = dst.dim() - 2;
  const Dims5 sg = dims5(src, nd), tg = dims5(dst, nd);
  const auto &size = tg.size, &ss = sg.stride, &ts = tg.stride;
  const int64_t total = dst.numel();
  // 32-bit division where the destination's indices fit (far cheaper than 64-bit on CPUs and GPUs).
  const std::string opts = "-DX_KIND=" + std::to_string(storage_kind(t, op)) +
                           (t == at::kDouble ? " -DACC=double" : " -DACC=float") +
                           (total < (int64_t(1) << 31) ? " -DPOS_T=uint" : "");
  Kernel& k = get_kernel(d, "upsample", opts, "upsample_fwd");
  launch(d, k, grid_stride(total), Range(256), buf(src), buf(dst), buf(tab_d), buf(wts_d), total, size[1], size[2],
         size[3], size[4], ss[0], ss[1], ss[2], ss[3], ss[4], ts[0], ts[1], ts[2], ts[3], ts[4], ptr_at[0], ptr_at[1],
         ptr_at[2], entries_at, static_cast<cl_int>(pair));
}

bool aa_mode(Mode mode) { return mode != Mode::Linear && mode != Mode::Cubic; }

// The CPU's dtypes: floating for linear and cubic; float and double (no 16-bit) antialiased
// (and uint8 in 2-D: uint8_forward).
void check_dtype(const at::Tensor& t, Mode mode, const char* op) {
  const at::ScalarType s = t.scalar_type();
  const bool ok = aa_mode(mode) ? (s == at::kFloat || s == at::kDouble) : at::isFloatingType(s);
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "\"", op, "\" not implemented for '", s, "'");
}

// ---- uint8: the CPU's fixed-point separable path -------------------------------------------
// Bilinear, bicubic and the antialiased modes take uint8 images (torchvision's resize). The CPU
// resamples W, then H (each only where its size changes), through a uint8 tensor, with integer
// weights: the double weights times 2^precision rounded half away from zero to int16, precision
// the largest (below 22) that keeps the axis' biggest weight under 2^15; each output is
// (2^(precision - 1) + sum) >> precision clamped to [0, 255]. Without antialiasing its weights
// come from the filters too (cubic with A = -0.75), over the taps inside the axis, with the
// weights of taps outside added to the border taps.
template <typename T>
T filter_cubic_a75(T x) {
  return filter_cubic<T, false>(x);
}

// Non-antialiased uint8 taps (ATen's _compute_indices_min_size_weights); *wt_max as it tracks it.
Axis u8_plain_axis(int64_t in, int64_t out, bool align_corners, double scale, int interp_size,
                   double (*filter)(double), double* wt_max) {
  Axis a;
  const int64_t support = static_cast<int64_t>(interp_size * 0.5);
  std::vector<double> wt(interp_size);
  for (int64_t i = 0; i < out; ++i) {
    const double real = source_index<double>(scale, i, align_corners, /*cubic=*/interp_size > 2);
    double lambda = 0;
    int64_t index = 0;
    at::native::guard_index_and_lambda(real, in, index, lambda);
    const int64_t lo = index - support + 1, hi = index + support + 1;
    const int64_t first = std::max(lo, static_cast<int64_t>(0));
    const int64_t count =
        std::clamp(std::min(hi, in) - first, static_cast<int64_t>(0), static_cast<int64_t>(interp_size));
    int64_t k = 0;
    for (int64_t j = 0; j < interp_size; ++j) {
      wt[j] = 0.0;
      const double w = filter(static_cast<double>(j + 1 - support) - lambda);
      if (lo + j <= 0)
        k = 0;
      else if (lo + j >= in - 1)
        k = count - 1;
      wt[k] += w;
      *wt_max = std::max(*wt_max, wt[k]);
      ++k;
    }
    for (int64_t j = 0; j < count; ++j) a.add(first + j, wt[j]);
    a.next();
  }
  return a;
}

// One axis' uint8 taps: weights already scaled to integers; *precision their scale's exponent.
Axis u8_axis(Mode mode, int64_t in, int64_t out, bool align_corners, c10::optional<double> scale, int* precision) {
  const double s = at::native::area_pixel_compute_scale<double>(in, out, align_corners, scale);
  double wt_max = 0.0;
  Axis a;
  switch (mode) {
    case Mode::Linear: a = u8_plain_axis(in, out, align_corners, s, 2, filter_linear<double>, &wt_max); break;
    case Mode::Cubic: a = u8_plain_axis(in, out, align_corners, s, 4, filter_cubic_a75<double>, &wt_max); break;
    case Mode::AaLinear: a = aa_axis<double>(in, out, align_corners, scale, 2, filter_linear<double>, false); break;
    case Mode::AaCubic: a = aa_axis<double>(in, out, align_corners, scale, 4, filter_cubic<double>, false); break;
    case Mode::AaLanczos: a = aa_axis<double>(in, out, align_corners, scale, 6, filter_lanczos<double>, false); break;
  }
  if (aa_mode(mode))
    for (double w : a.w) wt_max = std::max(wt_max, w);
  int p = 0;
  for (; p < 22; ++p)
    if (static_cast<int>(0.5 + wt_max * (1 << (p + 1))) >= (1 << 15)) break;
  for (double& w : a.w) {
    const double v = w * (1 << p);
    w = v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v);
  }
  *precision = p;
  return a;
}

// dst = src resampled along W (along_w) or H by one uint8 pass.
void u8_pass(const at::Tensor& src, const at::Tensor& dst, const Axis& a, int precision, bool along_w) {
  Device& d = ocl_device(dst);
  std::vector<int64_t> tab(a.ptr);
  const int64_t entries_at = static_cast<int64_t>(tab.size());
  tab.insert(tab.end(), a.idx.begin(), a.idx.end());
  at::Tensor tab_h = at::empty({static_cast<int64_t>(tab.size())}, at::TensorOptions().dtype(at::kLong));
  std::copy(tab.begin(), tab.end(), tab_h.data_ptr<int64_t>());
  at::Tensor wts_h =
      at::empty({std::max<int64_t>(static_cast<int64_t>(a.w.size()), 1)}, at::TensorOptions().dtype(at::kInt));
  std::transform(a.w.begin(), a.w.end(), wts_h.data_ptr<int32_t>(), [](double w) { return static_cast<int32_t>(w); });
  const at::Tensor tab_d = tab_h.to(dst.device()), wts_d = wts_h.to(dst.device());
  Kernel& k = get_kernel(d, "upsample", "", "upsample_u8_fwd");
  const int64_t total = dst.numel();
  launch(d, k, grid_stride(total), Range(256), buf(src), buf(dst), buf(tab_d), buf(wts_d), total, dst.size(1),
         dst.size(2), dst.size(3), src.stride(0), src.stride(1), src.stride(2), src.stride(3), dst.stride(0),
         dst.stride(1), dst.stride(2), dst.stride(3), entries_at, static_cast<cl_int>(along_w),
         static_cast<cl_int>(precision));
}

void uint8_forward(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners,
                   const std::vector<c10::optional<double>>& scales, Mode mode, const at::Tensor& out) {
  if (out.numel() == 0) return;
  const bool along_w = self.size(3) != output_size[1], along_h = self.size(2) != output_size[0];
  if (!along_w && !along_h) {
    out.copy_(self);
    return;
  }
  at::Tensor cur = self;
  int precision = 0;
  if (along_w) {
    const at::Tensor dst =
        along_h ? at::empty({self.size(0), self.size(1), self.size(2), output_size[1]}, self.options()) : out;
    const Axis a = u8_axis(mode, self.size(3), output_size[1], align_corners, scales[1], &precision);
    u8_pass(cur, dst, a, precision, true);
    cur = dst;
  }
  if (along_h) {
    const Axis a = u8_axis(mode, self.size(2), output_size[0], align_corners, scales[0], &precision);
    u8_pass(cur, out, a, precision, false);
  }
}

void interp_forward(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners, Scales scales,
                    Mode mode, const at::Tensor& out, const char* op) {
  if (self.scalar_type() == at::kByte && scales.size() == 2)
    return uint8_forward(self, output_size, align_corners, std::vector<c10::optional<double>>(scales), mode, out);
  check_dtype(self, mode, op);
  std::vector<Axis> axes;
  int64_t k = 0;
  for (const c10::optional<double>& s : scales) {
    axes.push_back(axis_taps(mode, self.scalar_type(), false, self.size(2 + k), output_size[k], align_corners, s));
    ++k;
  }
  gather_taps(self, out, std::move(axes), /*pair=*/mode == Mode::Linear, op);
}

void interp_backward(const at::Tensor& grad_output, c10::IntArrayRef output_size, c10::IntArrayRef input_size,
                     bool align_corners, Scales scales, Mode mode, const at::Tensor& grad_input, const char* op) {
  check_dtype(grad_output, mode, op);
  std::vector<Axis> axes;
  int64_t k = 0;
  for (const c10::optional<double>& s : scales) {
    const int64_t in = input_size[2 + k];
    axes.push_back(
        transposed(axis_taps(mode, grad_output.scalar_type(), true, in, output_size[k], align_corners, s), in));
    ++k;
  }
  gather_taps(grad_output, grad_input, std::move(axes), /*pair=*/false, op);
}

// The interpolating ops and their backward ops: ATen's structured meta functions check the
// arguments and size the outputs, as on the CPU.
#define INTERP_OPS(name, op, MODE, SCALE_PARAMS, ...)                                                                \
  at::Tensor& name##_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners, SCALE_PARAMS, \
                             at::Tensor& out) {                                                                      \
    OutMeta<at::meta::structured_##op> m(out);                                                                       \
    m.meta(self, output_size, align_corners, __VA_ARGS__);                                                           \
    interp_forward(self, output_size, align_corners, {__VA_ARGS__}, MODE, out, #op);                                 \
    return out;                                                                                                      \
  }                                                                                                                  \
  at::Tensor& name##_backward_out_ocl(const at::Tensor& grad_output, c10::IntArrayRef output_size,                   \
                                      c10::IntArrayRef input_size, bool align_corners, SCALE_PARAMS,                 \
                                      at::Tensor& grad_input) {                                                      \
    OutMeta<at::meta::structured_##op##_backward> m(grad_input);                                                     \
    m.meta(grad_output, output_size, input_size, align_corners, __VA_ARGS__);                                        \
    interp_backward(grad_output, output_size, input_size, align_corners, {__VA_ARGS__}, MODE, grad_input,            \
                    #op "_backward");                                                                                \
    return grad_input;                                                                                               \
  }
#define SCALES_1D c10::optional<double> scales
#define SCALES_2D c10::optional<double> scales_h, c10::optional<double> scales_w
#define SCALES_3D c10::optional<double> scales_d, c10::optional<double> scales_h, c10::optional<double> scales_w
// upsample_linear1d.out(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_linear1d_backward.grad_input(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, bool align_corners, float? scales=None, *, Tensor(a!) grad_input) -> Tensor(a!)
INTERP_OPS(upsample_linear1d, upsample_linear1d, Mode::Linear, SCALES_1D, scales)
// upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_bilinear2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
INTERP_OPS(upsample_bilinear2d, upsample_bilinear2d, Mode::Linear, SCALES_2D, scales_h, scales_w)
// upsample_trilinear3d.out(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_trilinear3d_backward.grad_input(Tensor grad_output, SymInt[3] output_size, SymInt[5] input_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
INTERP_OPS(upsample_trilinear3d, upsample_trilinear3d, Mode::Linear, SCALES_3D, scales_d, scales_h, scales_w)
// upsample_bicubic2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// upsample_bicubic2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, bool align_corners, float? scales_h=None, float? scales_w=None, *, Tensor(a!) grad_input) -> Tensor(a!)
INTERP_OPS(upsample_bicubic2d, upsample_bicubic2d, Mode::Cubic, SCALES_2D, scales_h, scales_w)
// _upsample_bilinear2d_aa.out / _upsample_bilinear2d_aa_backward.grad_input: bilinear2d's signatures.
INTERP_OPS(upsample_bilinear2d_aa, _upsample_bilinear2d_aa, Mode::AaLinear, SCALES_2D, scales_h, scales_w)
// _upsample_bicubic2d_aa.out / _upsample_bicubic2d_aa_backward.grad_input: the same signatures.
INTERP_OPS(upsample_bicubic2d_aa, _upsample_bicubic2d_aa, Mode::AaCubic, SCALES_2D, scales_h, scales_w)
#ifdef TORCH_OCL_HAS_LANCZOS_AA
// _upsample_lanczos2d_aa.out / _upsample_lanczos2d_aa_backward.grad_input: the same signatures.
INTERP_OPS(upsample_lanczos2d_aa, _upsample_lanczos2d_aa, Mode::AaLanczos, SCALES_2D, scales_h, scales_w)
#endif
#undef INTERP_OPS
#undef SCALES_1D
#undef SCALES_2D
#undef SCALES_3D

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "upsample_nearest2d.out", upsample_nearest2d_out_ocl);
  OCL_IMPL(m, "upsample_nearest2d_backward.grad_input", upsample_nearest2d_backward_out_ocl);
  OCL_IMPL(m, "upsample_nearest1d.out", upsample_nearest1d_out_ocl);
  OCL_IMPL(m, "upsample_nearest1d_backward.grad_input", upsample_nearest1d_backward_out_ocl);
  OCL_IMPL(m, "upsample_nearest3d.out", upsample_nearest3d_out_ocl);
  OCL_IMPL(m, "upsample_nearest3d_backward.grad_input", upsample_nearest3d_backward_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact1d.out", upsample_nearest_exact1d_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact1d_backward.grad_input", upsample_nearest_exact1d_backward_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact2d.out", upsample_nearest_exact2d_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact2d_backward.grad_input", upsample_nearest_exact2d_backward_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact3d.out", upsample_nearest_exact3d_out_ocl);
  OCL_IMPL(m, "_upsample_nearest_exact3d_backward.grad_input", upsample_nearest_exact3d_backward_out_ocl);
  OCL_IMPL(m, "upsample_bilinear2d.out", upsample_bilinear2d_out_ocl);
  OCL_IMPL(m, "upsample_bilinear2d_backward.grad_input", upsample_bilinear2d_backward_out_ocl);
  OCL_IMPL(m, "upsample_linear1d.out", upsample_linear1d_out_ocl);
  OCL_IMPL(m, "upsample_linear1d_backward.grad_input", upsample_linear1d_backward_out_ocl);
  OCL_IMPL(m, "upsample_trilinear3d.out", upsample_trilinear3d_out_ocl);
  OCL_IMPL(m, "upsample_trilinear3d_backward.grad_input", upsample_trilinear3d_backward_out_ocl);
  OCL_IMPL(m, "upsample_bicubic2d.out", upsample_bicubic2d_out_ocl);
  OCL_IMPL(m, "upsample_bicubic2d_backward.grad_input", upsample_bicubic2d_backward_out_ocl);
  OCL_IMPL(m, "_upsample_bilinear2d_aa.out", upsample_bilinear2d_aa_out_ocl);
  OCL_IMPL(m, "_upsample_bilinear2d_aa_backward.grad_input", upsample_bilinear2d_aa_backward_out_ocl);
  OCL_IMPL(m, "_upsample_bicubic2d_aa.out", upsample_bicubic2d_aa_out_ocl);
  OCL_IMPL(m, "_upsample_bicubic2d_aa_backward.grad_input", upsample_bicubic2d_aa_backward_out_ocl);
#ifdef TORCH_OCL_HAS_LANCZOS_AA
  OCL_IMPL(m, "_upsample_lanczos2d_aa.out", upsample_lanczos2d_aa_out_ocl);
  OCL_IMPL(m, "_upsample_lanczos2d_aa_backward.grad_input", upsample_lanczos2d_aa_backward_out_ocl);
#endif
}

}  // namespace torch_ocl
