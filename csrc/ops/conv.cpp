// Convolutions (conv1d/2d/3d and their transposes, any stride, padding, dilation, groups and
// output_padding): ATen hands non-CPU/CUDA backends convolution_overrideable and
// convolution_backward_overrideable. Both lower to im2col + GEMM on the device:
//   im2col: the padded input's sliding windows, an as_strided view, copied into
//           columns (N, G, C/G * K, L) by the strided copy kernel (K kernel taps, L outputs);
//   GEMM:   weight (G, OC/G, C/G * K) @ columns, one batched product;
//   col2im: the adjoint, each kernel tap's columns added into its strided slice of the padded
//           input (K strided adds).
// A transposed convolution is the adjoint of the convolution with the same weight: its
// forward is that convolution's input gradient and vice versa.
// On GPUs, float convolutions skip the columns: kernels/conv.cl's implicit GEMMs read the
// windows in place for the forward, the input gradient (per phase of the stride) and the weight
// gradient of 1-, 2- and 3-D layers, channels-last inputs as 4-vectors of channels where groups
// have a multiple of 16 input channels, and other channel counts (an image's 3) through a table
// of taps. Before those: 3x3 stride-1 float32 layers take Winograd's algorithm
// (winograd.h) and depthwise layers their own kernels (depthwise_conv.h; every device).
// Outputs and gradients take the memory format the CPU gives them: channels-last when the input
// or the weight is.
#include "../aten/Routing.h"
#include "../runtime/Tuning.h"
#include "windows.h"
#include "depthwise_conv.h"
#include "winograd.h"

#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <c10/util/accumulate.h>
#include <optional>
#include <torch/library.h>

namespace torch_ocl {
namespace {

// A convolution's kernel, stride, padding and dilation per spatial dim (g.out not yet set).
WindowGeom conv_kernel_geom(const at::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                            c10::IntArrayRef dilation) {
  WindowGeom g;
  g.nd = weight.dim() - 2;
  TORCH_CHECK(g.nd >= 1, "convolution: expected a weight with at least 3 dims, got ", weight.sizes());
  g.stride = per_dim(stride, g.nd, "convolution", "stride");
  g.pad = per_dim(padding, g.nd, "convolution", "padding");
  g.dil = per_dim(dilation, g.nd, "convolution", "dilation");
  for (int64_t i = 0; i < g.nd; ++i) {
    TORCH_CHECK(g.stride[i] > 0 && g.dil[i] > 0 && g.pad[i] >= 0, "convolution: invalid stride ", stride,
                ", padding ", padding, " or dilation ", dilation);
    g.k.push_back(weight.size(i + 2));
  }
  return g;
}

// Windows along spatial dim i of an input of size `in` (the padded extent over the dilated
// kernel's, in strides): a convolution's output size, F.unfold's block count.
int64_t windows_along(const WindowGeom& g, int64_t i, int64_t in) {
  return (in + 2 * g.pad[i] - g.dil[i] * (g.k[i] - 1) - 1) / g.stride[i] + 1;
}

// The window geometry of a convolution with `weight` over spatial sizes `in`: g.out windows
// per dim, the output's spatial size.
WindowGeom conv_geom(const at::Tensor& weight, c10::IntArrayRef stride, c10::IntArrayRef padding,
                     c10::IntArrayRef dilation, c10::IntArrayRef in) {
  WindowGeom g = conv_kernel_geom(weight, stride, padding, dilation);
  for (int64_t i = 0; i < g.nd; ++i) {
    g.out.push_back(windows_along(g, i, in[i]));
    TORCH_CHECK(g.out[i] > 0, "convolution: input size ", in, " is too small for kernel ", c10::IntArrayRef(g.k),
                " with padding ", padding, " and dilation ", dilation);
  }
  return g;
}

// gy (N, OC, *out) as (N, groups, OC/groups, windows).
at::Tensor by_group(const at::Tensor& gy, int64_t groups) {
  return gy.reshape({gy.size(0), groups, gy.size(1) / groups, c10::multiply_integers(gy.sizes().slice(2))});
}

// x (N, C, *S) -> columns (N, groups, C/groups * taps, windows).
at::Tensor im2col(const at::Tensor& x, const WindowGeom& g, int64_t groups) {
  return window_view(x, g).reshape({x.size(0), groups, x.size(1) / groups * g.taps(), g.windows()});
}

// The adjoint of im2col: columns (N, groups, C/groups * taps, windows) -> (N, C, *in).
at::Tensor col2im(const at::Tensor& cols, const WindowGeom& g, c10::IntArrayRef in, int64_t channels) {
  std::vector<int64_t> view{cols.size(0), channels};
  view.insert(view.end(), g.k.begin(), g.k.end());
  view.insert(view.end(), g.out.begin(), g.out.end());
  return window_sum_back(cols.reshape(view), g, in);
}

// y = conv(x, w): x (N, C, *S), w (OC, C/groups, *k) -> (N, OC, *out).
at::Tensor conv_forward(const at::Tensor& x, const at::Tensor& w, const WindowGeom& g, int64_t groups) {
  const at::Tensor cols = im2col(x, g, groups);
  const int64_t oc = w.size(0);
  at::Tensor y = at::matmul(w.reshape({groups, oc / groups, -1}), cols);  // (N, G, OC/G, L)
  std::vector<int64_t> shape{x.size(0), oc};
  shape.insert(shape.end(), g.out.begin(), g.out.end());
  return y.view(shape);
}

// The implicit-GEMM forward (kernels/conv.cl): whether it serves device d's forward
// convolutions and its tiles. GPUs by default, with 64x64 output tiles of 128 work-items
// (8x4 outputs each) and K steps of 16 input channels, or 128x64 tiles where they pay
// (tiles_for); on CPU devices the columns and gemm_direct_fwd's vector loops are faster. The
// tuning entry "conv/forward" overrides it: "KERNEL=im2col", or "KERNEL=implicit" with any of
// TILE_M, TILE_N, TILE_K, WPT_M, WPT_N (which then hold for every shape).
struct ConvConfig {
  bool implicit = false;
  bool fixed = false;  // the tiles come from the tuning entry
  int tile_m = 64, tile_n = 64, tile_k = 16, wpt_m = 8, wpt_n = 4;
  // Work-groups per compute unit the weight gradient's slices aim for. H200, weight gradient µs
  // for 2 / 4 / 8 / 16: 3x3 64->64 at 32x56^2 400 / 324 / 271 / 278, 128->128 at 28^2
  // 340 / 306 / 272 / 285, 1x1 256->64 159 / 128 / 134 / 138; unsliced ones (512->512 at 7^2)
  // unchanged.
  int slice_groups = 8;
  int threads() const { return (tile_m / wpt_m) * (tile_n / wpt_n); }
};

// What is wrong with c for conv.cl's checks and the device, or "".
std::string conv_config_error(const Device& d, const ConvConfig& c) {
  if (!c.implicit) return "";
  for (int v : {c.tile_m, c.tile_n, c.tile_k, c.wpt_m, c.wpt_n})
    if (v < 1 || v > 256) return "tile sizes must be in 1..256";
  if (c.wpt_m % 4 || c.wpt_n % 4 || c.tile_m % c.wpt_m || c.tile_n % c.wpt_n || c.tile_m % 4)
    return "WPT_M and WPT_N must be multiples of 4 dividing TILE_M and TILE_N";
  const int n = c.threads();
  if (n % c.tile_n || c.tile_k % (n / c.tile_n) || (c.tile_k * c.tile_m) % (4 * n))
    return "each work-item must load whole rows of B and whole 4-vectors of A per step";
  if (static_cast<size_t>(n) > d.info.max_work_group) return "too many work-items for the device";
  return "";
}

ConvConfig conv_config(const Device& d) {
  ConvConfig c;
  c.implicit = !d.info.is_cpu();
  const std::string text = tuning::lookup(d, "conv/forward");
  if (text.empty()) return c;
  std::vector<std::pair<std::string, std::string>> items;
  std::string err;
  ConvConfig r = c;
  if (tuning::parse_items(text, &items, &err)) {
    for (const auto& [key, value] : items) {
      if (key == "KERNEL") {
        if (value != "implicit" && value != "im2col") err = "KERNEL must be implicit or im2col";
        r.implicit = value == "implicit";
        continue;
      }
      if (key == "SLICE_GROUPS") {
        if (!tuning::parse_int(key, value, &r.slice_groups, &err)) break;
        if (r.slice_groups < 1 || r.slice_groups > 64) err = "SLICE_GROUPS must be in 1..64";
        continue;
      }
      int* field = key == "TILE_M" ? &r.tile_m : key == "TILE_N" ? &r.tile_n : key == "TILE_K" ? &r.tile_k
                   : key == "WPT_M" ? &r.wpt_m : key == "WPT_N" ? &r.wpt_n : nullptr;
      if (!field) err = "unknown key '" + key + "'";
      else if (!tuning::parse_int(key, value, field, &err)) break;
      r.fixed = true;
    }
  }
  if (err.empty()) err = conv_config_error(d, r);
  if (!err.empty()) {
    TORCH_WARN_ONCE("torch_ocl: ignoring tuning entry conv/forward '", text, "': ", err);
    return c;
  }
  return r;
}

// The tiles for a product with M output channels per group, depth K and N positions (the
// forward and the input gradient), or with N weight columns (the weight gradient, whose slices
// of the positions multiply its work-groups): cc's where the tuning entry fixed them, else
// 128x64 tiles of 8x8 per work-item where they pay. On an H200 (fwd / input grad / weight
// grad, µs): 3x3 128->128 at 32x28^2 222 / 224 / 395 -> 198 / 198 / 337; they lose where
// M leaves half of each tile idle (64 channels, 1.6x), where fewer than 2.5 tiles per compute
// unit are left (3x3 256->256 at 14^2: 227 -> 273 forward), where K is short (the input
// gradient of 1x1 256->64: 153 -> 185), and for an unsliced weight gradient (3x3 512->512 at
// 7^2, 288 tiles: 322 -> 344); a sliced one gains (256->256: 396 -> 338).
//
// Products of at most 32 rows (grouped layers, narrow outputs, the input gradient of few input
// channels) take 16- or 32-row tiles of 4 rows per work-item instead of leaving most of a 64-row
// tile idle. H200, fwd / input grad / weight grad µs, 64-row tiles against the smaller: 3x3 in
// 32 groups of 8 channels at 32x256x28^2 303 / 310 / 555 -> 157 / 157 / 368 (16 rows); of 4 at
// 32x128x56^2 753 / 769 / 1,078 -> 358 / 359 / 606 (16); 3x3 24->24 at 32x24x56^2 122 / 120 /
// 149 -> 96 / 94 / 109 (32 rows; 16 rows 123 / 123 / 199).
ConvConfig tiles_for(const Device& d, ConvConfig cc, int64_t M, int64_t K, int64_t N, bool weight_grad) {
  const int64_t cu = std::max<int64_t>(d.info.compute_units, 1), tiles = (M / 128) * ((N + 63) / 64);
  if (!cc.fixed && M <= 32) {
    ConvConfig small = cc;
    small.tile_m = M <= 16 ? 16 : 32, small.wpt_m = 4;
    return conv_config_error(d, small).empty() ? small : cc;
  }
  if (cc.fixed || M % 128 != 0) return cc;
  if (weight_grad ? tiles >= 2 * cu : (K < 256 || 2 * tiles < 5 * cu)) return cc;
  ConvConfig big = cc;
  big.tile_m = 128, big.tile_n = 64, big.wpt_m = 8, big.wpt_n = 8;
  return conv_config_error(d, big).empty() ? big : cc;
}

// conv.cl's kernel `name` for dtype t and tiles cc; channels_last: its inputs are read as
// 4-vectors of channels (channel_vectors); out_vec: conv2d_fwd stores 4-vectors of channels.
Kernel& conv_kernel(Device& d, at::ScalarType t, const ConvConfig& cc, const char* name, bool channels_last,
                    bool table, bool depth, bool out_vec = false) {
  check_dtype_supported(d, t, "convolution");
  const std::string opts = std::string("-DDTYPE=") + (t == at::kDouble ? "double" : "float") +
                           " -DTILE_M=" + std::to_string(cc.tile_m) + " -DTILE_N=" + std::to_string(cc.tile_n) +
                           " -DTILE_K=" + std::to_string(cc.tile_k) + " -DWPT_M=" + std::to_string(cc.wpt_m) +
                           " -DWPT_N=" + std::to_string(cc.wpt_n) + " -DCHANNELS_LAST=" + (channels_last ? "1" : "0") +
                           " -DOUT_VEC=" + (out_vec ? "1" : "0") + " -DTAP_TABLE=" + (table ? "1" : "0") +
                           " -DDEPTH=" + (depth ? "1" : "0");
  return get_kernel(d, "conv", opts, name);
}

// A convolution's geometry for conv.cl over three spatial dims (depth, rows, columns); 1-D and
// 2-D convolutions are 3-D ones of one input plane (and row), with a kernel of extent 1 there.
// Paddings and dilations may be negative (the strided input gradient's phases walk their taps
// backwards).
struct Geom {
  std::array<int64_t, 3> in, out, k, stride, pad, dil;
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t windows() const { return out[0] * out[1] * out[2]; }
  // Whether any window reaches along depth (conv.cl's DEPTH); else every depth index is 0.
  bool depth() const { return in[0] != 1 || out[0] != 1 || k[0] != 1 || pad[0] != 0; }
};
Geom geom3(const WindowGeom& g, c10::IntArrayRef in) {
  Geom q{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};
  for (int64_t i = 0, j = 3 - g.nd; i < g.nd; ++i, ++j) {
    q.in[j] = in[i], q.out[j] = g.out[i], q.k[j] = g.k[i];
    q.stride[j] = g.stride[i], q.pad[j] = g.pad[i], q.dil[j] = g.dil[i];
  }
  return q;
}

// t (N, C, *spatial) as (N, C, D, H, W): unit dims in front of 1-D and 2-D spatial dims.
at::Tensor as5d(const at::Tensor& t) {
  at::Tensor r = t;
  while (r.dim() < 5) r = r.unsqueeze(2);
  return r;
}

// conv.cl's TAP_TABLE for channel counts that are not a multiple of the step: entry k < len of
// the product's depth k = ((kd * KH + kh) * KW + kw) * CG + c is (kh * DH, kw * DW, c * xs_c,
// kd * DD); past q.taps() * CG it is (-2^30, 0, 0, -2^30), outside every window. Built on the
// host and uploaded without a sync, as upsample.cpp's tables are.
at::Tensor tap_table(const at::Tensor& like, const Geom& q, int64_t CG, int64_t xs_c, int64_t len) {
  constexpr int32_t kOutside = -(1 << 30);
  at::Tensor t = at::empty({len, 4}, at::TensorOptions().dtype(at::kInt));
  int32_t* e = t.data_ptr<int32_t>();
  for (int64_t k = 0; k < len; ++k, e += 4) {
    if (k >= q.taps() * CG) {
      e[0] = kOutside, e[1] = 0, e[2] = 0, e[3] = kOutside;
      continue;
    }
    const int64_t tap = k / CG, c = k % CG, kw = tap % q.k[2], kh = tap / q.k[2] % q.k[1], kd = tap / (q.k[1] * q.k[2]);
    e[0] = static_cast<int32_t>(kh * q.dil[1]), e[1] = static_cast<int32_t>(kw * q.dil[2]);
    e[2] = static_cast<int32_t>(c * xs_c), e[3] = static_cast<int32_t>(kd * q.dil[0]);
  }
  return t.to(like.device());
}

// Whether `rows` rows of `cols` 4-vectors split evenly over cc's work-items (the channel-vector
// loads of conv.cl: every work-item the same number of whole rows).
bool vectors_split(const ConvConfig& cc, int64_t rows, int64_t cols) {
  const int64_t n = cc.threads(), vecs = cols / 4;
  return cols % 4 == 0 && vecs <= n && n % vecs == 0 && rows % (n / vecs) == 0;
}

// The largest in-sample element offset of t (dims 1..), or -1 when a stride is negative.
int64_t sample_span(const at::Tensor& t) {
  int64_t span = 0;
  for (int64_t i = 1; i < t.dim(); ++i) {
    if (t.stride(i) < 0) return -1;
    span += (t.size(i) - 1) * t.stride(i);
  }
  return span;
}

// A product's depth K over CG channels per tap as conv.cl walks it in steps of `step`: K itself
// where CG is a multiple of the step (each step within one tap), else K rounded up for the tap
// table.
int64_t padded_depth(int64_t K, int64_t CG, int64_t step) {
  return CG % step == 0 ? K : (K + step - 1) / step * step;
}

// A bound on the magnitude of any window index conv.cl forms for q (the host keeps it below
// 2^29, so the tap table's -2^30 stays outside every window without overflow).
int64_t reach(const Geom& q) {
  int64_t r = 0;
  for (int i = 0; i < 3; ++i)
    r += std::abs(q.in[i]) + std::abs(q.out[i] * q.stride[i]) + std::abs(q.pad[i]) + std::abs(q.k[i] * q.dil[i]);
  return r;
}

// The tiles conv2d_fwd would run x5 (N, G * CG, D, H, W) with for M output channels per group, or
// nullopt where it does not apply: float32/float64 on a device whose configuration says so,
// every index within 32 bits. Channel counts that are not a multiple of the K step take the tap
// table (padded_depth).
std::optional<ConvConfig> implicit_forward(const at::Tensor& x5, int64_t CG, int64_t M, int64_t groups,
                                           const Geom& q) {
  const at::ScalarType t = x5.scalar_type();
  if ((t != at::kFloat && t != at::kDouble) || x5.numel() == 0 || M == 0 || CG == 0) return std::nullopt;
  Device& d = ocl_device(x5);
  const int64_t K = q.taps() * CG, positions = x5.size(0) * q.windows();
  const ConvConfig cc = tiles_for(d, conv_config(d), M, K, positions, false);
  if (!cc.implicit) return std::nullopt;
  const int64_t span = sample_span(x5), MP = (M + 3) / 4 * 4, KP = padded_depth(K, CG, cc.tile_k);
  if (span < 0 || span >= kMaxInt || positions >= kMaxInt - cc.tile_n || groups * KP * MP >= kMaxInt ||
      reach(q) >= kMaxInt / 4)
    return std::nullopt;
  return cc;
}

// out5 (N, G * M, OD, OH, OW; any strides) = conv(x5, w) + bias (contiguous) by conv2d_fwd with
// tiles cc. w6 is the weight as a (G, M, CG, KD, KH, KW) view of any strides, packed here as
// [G][KP][MP]: k = ((kd * KH + kh) * KW + kw) * CG + c, output channels contiguous (MP = M
// rounded up to 4, KP = padded_depth, both zero-padded).
void run_conv2d_fwd(const ConvConfig& cc, const at::Tensor& x5, const at::Tensor& w6, const at::Tensor& bias,
                    const Geom& q, const at::Tensor& out5) {
  const int64_t groups = w6.size(0), M = w6.size(1), CG = w6.size(2), K = q.taps() * CG, MP = (M + 3) / 4 * 4;
  const int64_t KP = padded_depth(K, CG, cc.tile_k);
  const at::Tensor wk = w6.permute({0, 3, 4, 5, 2, 1}).reshape({groups, K, M});
  at::Tensor wpack = wk.contiguous();
  if (MP != M || KP != K) {
    wpack = at::zeros({groups, KP, MP}, wk.options());
    wpack.narrow(1, 0, K).narrow(2, 0, M).copy_(wk);
  }
  Device& d = ocl_device(x5);
  const bool table = CG % cc.tile_k != 0;
  const at::Tensor ktab = table ? tap_table(x5, q, CG, x5.stride(1), KP) : at::Tensor();
  // B's rows are channels (TILE_K per step), its columns positions; through the table a 4-vector
  // of channels must lie within one tap.
  const bool cl = (!table || CG % 4 == 0) && channel_vectors(x5) && vectors_split(cc, cc.tile_n, cc.tile_k);
  // Output runs of 4 channels as vectors: unit channel stride, M % 4 == 0, aligned (the bias too).
  const bool out_vec = M % 4 == 0 && channel_vectors(out5) && (!bias.defined() || vec4_aligned(bias));
  Kernel& k = conv_kernel(d, x5.scalar_type(), cc, "conv2d_fwd", cl, table, q.depth(), out_vec);
  const int64_t NB = x5.size(0);
  const size_t rts_m = cc.tile_m / cc.wpt_m, rts_n = cc.tile_n / cc.wpt_n;
  const size_t gn = static_cast<size_t>((NB * q.windows() + cc.tile_n - 1) / cc.tile_n);
  const size_t gm = static_cast<size_t>((M + cc.tile_m - 1) / cc.tile_m);
  launch(d, k, Range(gn * rts_n, gm * rts_m, static_cast<size_t>(groups)), Range(rts_n, rts_m, 1), buf(x5),
         buf(wpack), buf_or_none(ktab), buf_or_none(bias), buf(out5), i32(NB), i32(CG), i32(q.in[1]), i32(q.in[2]),
         i32(q.out[1]), i32(q.out[2]), i32(M), i32(MP), i32(q.k[1]), i32(q.k[2]), i32(q.stride[1]), i32(q.stride[2]),
         i32(q.pad[1]), i32(q.pad[2]), i32(q.dil[1]), i32(q.dil[2]), cl_long(x5.stride(0)), i32(x5.stride(1)),
         i32(x5.stride(3)), i32(x5.stride(4)), cl_long(out5.stride(0)), cl_long(out5.stride(1)),
         cl_long(out5.stride(3)), cl_long(out5.stride(4)), cl_int(bias.defined()), i32(q.in[0]), i32(q.out[0]),
         i32(q.k[0]), i32(q.stride[0]), i32(q.pad[0]), i32(q.dil[0]), i32(x5.stride(2)), cl_long(out5.stride(2)));
}

// y = conv(x, w) + bias in memory format mf by conv2d_fwd where it applies (implicit_forward),
// else undefined.
at::Tensor conv_forward_implicit(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const WindowGeom& g,
                                 int64_t groups, at::MemoryFormat mf) {
  if (bias.defined() && bias.scalar_type() != x.scalar_type()) return {};
  const int64_t OC = w.size(0), CG = x.size(1) / groups, M = OC / groups;
  const Geom q = geom3(g, x.sizes().slice(2));
  const at::Tensor x5 = as5d(x);
  const auto cc = implicit_forward(x5, CG, M, groups, q);
  if (!cc) return {};
  std::vector<int64_t> ys{x.size(0), OC};
  ys.insert(ys.end(), g.out.begin(), g.out.end());
  at::Tensor y = at::empty(ys, x.options().memory_format(mf));
  run_conv2d_fwd(*cc, x5, w.reshape({groups, M, CG, q.k[0], q.k[1], q.k[2]}),
                 bias.defined() ? bias.contiguous() : bias, q, as5d(y));
  return y;
}

// Whether winograd.h serves g's geometry: 2-D, 3x3, stride 1, undilated, one group.
bool winograd_geometry(const WindowGeom& g, int64_t groups) {
  return g.nd == 2 && groups == 1 && g.k == std::vector<int64_t>{3, 3} && g.stride == std::vector<int64_t>{1, 1} &&
         g.dil == std::vector<int64_t>{1, 1};
}

// y = conv(x, w) + bias in memory format mf on the device's own kernels (Winograd, depthwise,
// else conv2d_fwd) where one applies, else undefined.
at::Tensor conv_forward_native(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const WindowGeom& g,
                               int64_t groups, at::MemoryFormat mf) {
  if (winograd_geometry(g, groups))
    if (at::Tensor y = winograd_forward(x, w, bias, g.pad[0], g.pad[1], mf); y.defined()) return y;
  if (at::Tensor y = depthwise_conv_forward(x, w, bias, g, groups, mf); y.defined()) return y;
  return conv_forward_implicit(x, w, bias, g, groups, mf);
}

// The input gradient in memory format mf by conv2d_fwd where it applies, else undefined. Input
// rows ih = ph + SH*i (phase ph of SH) get gradient only from the taps kh = kh0 + SH*t,
// kh0 = (ph + PH) % SH (undilated, or any dilation at stride 1), through grad_output rows
// oh = i + (ph + PH - kh0 * DH) / SH - t * DH, and likewise along depth and columns: per phase
// (pd, ph, pw) a convolution of gy over that subset of taps walked backwards (padding
// -(ph + PH - kh0 * DH) / SH, dilation -DH), channel roles swapped, written into the strided view
// of the phase's positions. No multiply-add is wasted on inserted zeros; a phase no tap reaches
// is zero.
at::Tensor conv_input_grad_implicit(const at::Tensor& gy, const at::Tensor& w, const WindowGeom& g, int64_t groups,
                                    c10::IntArrayRef in, at::MemoryFormat mf) {
  const int64_t M = w.size(0) / groups, CG = w.size(1);
  const Geom q = geom3(g, in);
  for (int i = 0; i < 3; ++i)
    if (q.stride[i] > 1 && q.dil[i] != 1) return {};
  // An image's few input channels: the columns' one deep product and their window sum beat
  // products of 4 useful rows in 16. H200, input gradient µs: 7x7 stride-2 3->64 at 32x3x224^2
  // 936 through the columns, 1,594 here; 3x3 3->64 527 against 1,122.
  if (groups == 1 && CG < 8) return {};
  // Whether conv2d_fwd takes gy at all: the phases only shrink this geometry.
  Geom full{q.out, q.in, q.k, {1, 1, 1}, {}, {}};
  for (int i = 0; i < 3; ++i) full.pad[i] = q.pad[i] + q.k[i] * q.dil[i], full.dil[i] = -q.dil[i];
  const at::Tensor gy5 = as5d(gy);
  const auto cc = implicit_forward(gy5, M, CG, groups, full);
  if (!cc) return {};
  std::vector<int64_t> xs{gy.size(0), groups * CG};
  xs.insert(xs.end(), in.begin(), in.end());
  at::Tensor gi = at::empty(xs, gy.options().memory_format(mf));
  const at::Tensor gi5 = as5d(gi);                                                          // (N, C, D, H, W)
  const at::Tensor w6 = w.reshape({groups, M, CG, q.k[0], q.k[1], q.k[2]}).transpose(1, 2);  // (G, CG, M, *k)
  std::array<int64_t, 3> ph{};  // the phase along depth, rows and columns
  for (ph[0] = 0; ph[0] < std::min(q.stride[0], q.in[0]); ++ph[0]) {
    for (ph[1] = 0; ph[1] < std::min(q.stride[1], q.in[1]); ++ph[1]) {
      for (ph[2] = 0; ph[2] < std::min(q.stride[2], q.in[2]); ++ph[2]) {
        at::Tensor out = gi5, wp = w6;
        Geom p{q.out, {}, {}, {1, 1, 1}, {}, {}};
        bool reached = true;
        for (int i = 0; i < 3; ++i) {
          const int64_t k0 = (ph[i] + q.pad[i]) % q.stride[i];
          reached = reached && k0 < q.k[i];
          out = out.slice(2 + i, ph[i], q.in[i], q.stride[i]);
          wp = wp.slice(3 + i, std::min(k0, q.k[i]), q.k[i], q.stride[i]);
          p.out[i] = out.size(2 + i), p.k[i] = wp.size(3 + i);
          p.pad[i] = -(ph[i] + q.pad[i] - k0 * q.dil[i]) / q.stride[i], p.dil[i] = -q.dil[i];
        }
        if (reached)
          run_conv2d_fwd(*cc, gy5, wp, at::Tensor(), p, out);
        else
          out.zero_();
      }
    }
  }
  return gi;
}

// The input gradient of conv_forward: gy (N, OC, *out) -> (N, C, *in), in memory format mf
// where conv2d_fwd computes it (else as col2im leaves it).
at::Tensor conv_input_grad(const at::Tensor& gy, const at::Tensor& w, const WindowGeom& g, int64_t groups,
                           c10::IntArrayRef in, at::MemoryFormat mf) {
  if (winograd_geometry(g, groups))
    if (at::Tensor gi = winograd_input_grad(gy, w, in[0], in[1], g.pad[0], g.pad[1], mf); gi.defined()) return gi;
  if (at::Tensor gi = depthwise_conv_input_grad(gy, w, g, groups, in, mf); gi.defined()) return gi;
  if (at::Tensor gi = conv_input_grad_implicit(gy, w, g, groups, in, mf); gi.defined()) return gi;
  const int64_t oc = w.size(0), c = w.size(1) * groups;
  const at::Tensor wt = w.reshape({groups, oc / groups, -1}).transpose(1, 2);  // (G, C/G * taps, OC/G)
  const at::Tensor cols = at::matmul(wt, by_group(gy, groups));
  return col2im(cols, g, in, c);
}

// The weight gradient by conv2d_bwd_weight where it applies (float32/float64, every index in 32
// bits; group input channels that are not a multiple of the column tile through the
// tap table), else undefined. The positions (K) are cut into slices, about slice_groups
// work-groups per compute unit in all, whose partial [G][M][taps * CG] sums one reduction adds in
// w's layout.
at::Tensor conv_weight_grad_implicit(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                     const WindowGeom& g, int64_t groups) {
  const at::ScalarType t = x.scalar_type();
  const int64_t OC = w.size(0), CG = w.size(1), M = OC / groups;
  if ((t != at::kFloat && t != at::kDouble) || gy.scalar_type() != t || x.numel() == 0 || gy.numel() == 0) return {};
  Device& d = ocl_device(x);
  ConvConfig cc = tiles_for(d, conv_config(d), M, 0, g.taps() * CG, true);
  // A column tile within one tap saves the table: groups of 16 or 32 input channels take narrower
  // ones (32 or 16 columns, 4 per work-item) unless the tuning entry fixed the tiles.
  for (const int narrow : {32, 16}) {
    if (cc.fixed || CG % cc.tile_n == 0 || CG % narrow != 0 || narrow >= cc.tile_n) continue;
    ConvConfig c = cc;
    c.tile_n = narrow, c.wpt_n = 4;
    if (conv_config_error(d, c).empty()) cc = c;
  }
  if (!cc.implicit) return {};
  const Geom q = geom3(g, x.sizes().slice(2));
  const at::Tensor x5 = as5d(x), gy5 = as5d(gy);
  const int64_t NB = x.size(0), R = NB * q.windows(), J = q.taps() * CG, JP = padded_depth(J, CG, cc.tile_n);
  const int64_t xspan = sample_span(x), gspan = sample_span(gy);
  if (xspan < 0 || gspan < 0 || xspan >= kMaxInt || gspan >= kMaxInt || R >= kMaxInt / 2 || M * JP >= kMaxInt ||
      reach(q) >= kMaxInt / 4)
    return {};
  const bool table = CG % cc.tile_n != 0;
  const at::Tensor ktab = table ? tap_table(x, q, CG, x.stride(1), JP) : at::Tensor();
  // Slices: enough work-groups for about slice_groups per compute unit, each slice at least 16 K
  // steps.
  const int64_t tiles = groups * ((M + cc.tile_m - 1) / cc.tile_m) * (JP / cc.tile_n);
  const int64_t cu = std::max<int64_t>(d.info.compute_units, 1), min_chunk = 16 * cc.tile_k;
  int64_t S = std::max<int64_t>(1, std::min((cc.slice_groups * cu + tiles - 1) / tiles,
                                            (R + min_chunk - 1) / min_chunk));
  const int64_t chunk = ((R + S - 1) / S + cc.tile_k - 1) / cc.tile_k * cc.tile_k;
  S = (R + chunk - 1) / chunk;
  at::Tensor ws = at::empty({groups, S, M, J}, x.options());  // work-group z = g * S + s writes ws[g][s]
  // A's and B's rows are positions (TILE_K per step), their columns channels (through the table,
  // 4-vectors of columns within one tap).
  const bool cl = (!table || CG % 4 == 0) && M % 4 == 0 && channel_vectors(gy5) && channel_vectors(x5) &&
                  vectors_split(cc, cc.tile_k, cc.tile_m) && vectors_split(cc, cc.tile_k, cc.tile_n);
  Kernel& k = conv_kernel(d, t, cc, "conv2d_bwd_weight", cl, table, q.depth());
  const size_t rts_m = cc.tile_m / cc.wpt_m, rts_n = cc.tile_n / cc.wpt_n;
  const size_t gm = static_cast<size_t>((M + cc.tile_m - 1) / cc.tile_m);
  launch(d, k, Range(static_cast<size_t>(JP / cc.tile_n) * rts_n, gm * rts_m, static_cast<size_t>(groups * S)),
         Range(rts_n, rts_m, 1), buf(gy5), buf(x5), buf_or_none(ktab), buf(ws), i32(NB), i32(CG), i32(q.in[1]),
         i32(q.in[2]), i32(q.out[1]), i32(q.out[2]), i32(M), i32(q.k[1]), i32(q.k[2]), i32(q.stride[1]),
         i32(q.stride[2]), i32(q.pad[1]), i32(q.pad[2]), i32(q.dil[1]), i32(q.dil[2]), cl_long(gy5.stride(0)),
         i32(gy5.stride(1)), i32(gy5.stride(3)), i32(gy5.stride(4)), cl_long(x5.stride(0)), i32(x5.stride(1)),
         i32(x5.stride(3)), i32(x5.stride(4)), i32(S), i32(chunk), i32(q.in[0]), i32(q.out[0]), i32(q.k[0]),
         i32(q.stride[0]), i32(q.pad[0]), i32(q.dil[0]), i32(gy5.stride(2)), i32(x5.stride(2)));
  // [G][S][M][KD][KH][KW][CG] summed over the slices into w's (G*M, CG, KD, KH, KW) order.
  const std::array<int64_t, 1> slices{1};
  const at::Tensor dw =
      ws.view({groups, S, M, q.k[0], q.k[1], q.k[2], CG}).permute({0, 1, 2, 6, 3, 4, 5}).sum(slices);
  return dw.reshape(w.sizes());
}

// The weight gradient of conv_forward: sum over the batch of gy @ columns(x)^T, w's shape.
at::Tensor conv_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w, const WindowGeom& g,
                            int64_t groups) {
  if (winograd_geometry(g, groups))
    if (at::Tensor gw = winograd_weight_grad(gy, x, g.pad[0], g.pad[1]); gw.defined()) return gw.view(w.sizes());
  if (at::Tensor gw = depthwise_conv_weight_grad(gy, x, w, g, groups); gw.defined()) return gw;
  if (at::Tensor gw = conv_weight_grad_implicit(gy, x, w, g, groups); gw.defined()) return gw;
  const at::Tensor cols = im2col(x, g, groups);
  const at::Tensor gw = at::matmul(by_group(gy, groups), cols.transpose(2, 3));
  return gw.sum(0).view(w.sizes());
}

// The memory format of a convolution's output and gradients, as on the CPU and CUDA:
// channels-last when the input or the weight suggests it (4-D and 5-D), else contiguous.
at::MemoryFormat conv_memory_format(const at::Tensor& input, const at::Tensor& weight) {
  if (input.dim() != 4 && input.dim() != 5) return at::MemoryFormat::Contiguous;
  const at::MemoryFormat cl = input.dim() == 4 ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::ChannelsLast3d;
  return input.suggest_memory_format() == cl || weight.suggest_memory_format() == cl ? cl
                                                                                       : at::MemoryFormat::Contiguous;
}

void check_conv_args(const at::Tensor& input, const at::Tensor& weight, int64_t groups) {
  TORCH_CHECK_NOT_IMPLEMENTED(input.scalar_type() != at::kBool && !at::isComplexType(input.scalar_type()),
                              "\"convolution\" not implemented for '", input.scalar_type(), "'");
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
              ") and weight type (", weight.scalar_type(), ") should be the same");
  TORCH_CHECK(groups > 0 && input.dim() == weight.dim(), "convolution: expected input with ", weight.dim(),
              " dims for weight of shape ", weight.sizes(), ", got ", input.sizes());
}

// convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
at::Tensor convolution_ocl(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                           bool transposed, c10::IntArrayRef output_padding, int64_t groups) {
  check_conv_args(input, weight, groups);
  const at::MemoryFormat mf = conv_memory_format(input, weight);
  at::Tensor y;
  if (!transposed) {
    const WindowGeom g = conv_geom(weight, stride, padding, dilation, input.sizes().slice(2));
    y = conv_forward_native(input, weight, bias.has_value() ? *bias : at::Tensor(), g, groups, mf);
    if (y.defined()) return y;
    y = conv_forward(input, weight, g, groups);
  } else {
    // The input gradient of the convolution (weight: C_in, OC/G, *k) whose output is `input`:
    // over an output of size `out`, that convolution has input.sizes() windows.
    WindowGeom g = conv_kernel_geom(weight, stride, padding, dilation);
    std::vector<int64_t> out(g.nd);
    for (int64_t i = 0; i < g.nd; ++i) {
      g.out.push_back(input.size(i + 2));
      const int64_t op = output_padding.empty() ? 0 : output_padding.size() == 1 ? output_padding[0]
                                                                                  : output_padding[i];
      TORCH_CHECK(op >= 0 && (op < g.stride[i] || op < g.dil[i]),
                  "output padding must be smaller than either stride or dilation, but got output_padding ",
                  output_padding, ", stride ", stride, " and dilation ", dilation);
      out[i] = (input.size(i + 2) - 1) * g.stride[i] - 2 * g.pad[i] + g.dil[i] * (g.k[i] - 1) + op + 1;
      TORCH_CHECK(out[i] > 0, "convolution: the transposed convolution of input ", input.sizes(),
                  " with these parameters has no output (size ", out[i], " in spatial dim ", i, ")");
    }
    y = conv_input_grad(input, weight, g, groups, out, mf);
  }
  if (bias.has_value() && bias->defined()) {
    std::vector<int64_t> bshape(y.dim(), 1);
    bshape[1] = -1;
    y = y + bias->view(bshape);
  }
  return y.contiguous(mf);
}

// convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_ocl(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  check_conv_args(input, weight, groups);
  const at::MemoryFormat mf = conv_memory_format(input, weight);
  (void)output_padding;  // fixed by the shapes of input and grad_output
  // The convolution (not transposed) in play maps `from` to `to`: its windows run over `from`.
  const at::Tensor& from = transposed ? grad_output : input;
  const WindowGeom g = conv_geom(weight, stride, padding, dilation, from.sizes().slice(2));
  at::Tensor gi, gw, gb;
  if (!transposed) {
    if (output_mask[0]) gi = conv_input_grad(grad_output, weight, g, groups, input.sizes().slice(2), mf);
    if (output_mask[1]) gw = conv_weight_grad(grad_output, input, weight, g, groups);
  } else {
    // y = conv_input_grad(x, w): x's gradient is conv_forward(gy, w); w's is the weight gradient
    // of that convolution with the roles of x and gy swapped.
    if (output_mask[0]) {
      gi = conv_forward_native(grad_output, weight, at::Tensor(), g, groups, mf);
      if (!gi.defined()) gi = conv_forward(grad_output, weight, g, groups);
    }
    if (output_mask[1]) gw = conv_weight_grad(input, grad_output, weight, g, groups);
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t i = 2; i < grad_output.dim(); ++i) dims.push_back(i);
    gb = grad_output.sum(dims);
  }
  return {gi.defined() ? gi.contiguous(mf) : gi, gw.defined() ? gw.contiguous(mf) : gw, gb};
}

// F.unfold / F.fold on (N, C, H, W) or unbatched (C, H, W) inputs: the window view and its adjoint.
WindowGeom unfold_geom(c10::IntArrayRef kernel_size, c10::IntArrayRef dilation, c10::IntArrayRef padding,
                       c10::IntArrayRef stride, int64_t h, int64_t w) {
  WindowGeom g;
  g.nd = 2;
  g.k = per_dim(kernel_size, 2, "im2col", "kernel_size");
  g.dil = per_dim(dilation, 2, "im2col", "dilation");
  g.pad = per_dim(padding, 2, "im2col", "padding");
  g.stride = per_dim(stride, 2, "im2col", "stride");
  const int64_t in[2] = {h, w};
  for (int64_t i = 0; i < 2; ++i) g.out.push_back(windows_along(g, i, in[i]));
  return g;
}

// im2col.out(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& im2col_out_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                           c10::IntArrayRef padding, c10::IntArrayRef stride, at::Tensor& out) {
  TORCH_CHECK(kernel_size.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2,
              "im2col: kernel_size, dilation, padding and stride must have 2 elements each");
  at::native::im2col_shape_check(self, at::Tensor(), kernel_size[0], kernel_size[1], dilation[0], dilation[1],
                                 padding[0], padding[1], stride[0], stride[1]);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  const at::Tensor x = self.dim() == 3 ? self.unsqueeze(0) : self;
  const WindowGeom g = unfold_geom(kernel_size, dilation, padding, stride, x.size(2), x.size(3));
  const at::Tensor cols = window_view(x, g).reshape({x.size(0), x.size(1) * g.taps(), g.windows()});
  at::native::resize_output(out, self.dim() == 3 ? cols.sizes().slice(1) : cols.sizes());
  out.copy_(self.dim() == 3 ? cols.squeeze(0) : cols);
  return out;
}

// col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& col2im_out_ocl(const at::Tensor& self, c10::IntArrayRef output_size, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef dilation, c10::IntArrayRef padding, c10::IntArrayRef stride,
                           at::Tensor& out) {
  TORCH_CHECK(output_size.size() == 2 && kernel_size.size() == 2 && dilation.size() == 2 && padding.size() == 2 &&
                  stride.size() == 2,
              "col2im: output_size, kernel_size, dilation, padding and stride must have 2 elements each");
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel_size[0], kernel_size[1],
                                 dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  const at::Tensor cols = self.dim() == 2 ? self.unsqueeze(0) : self;
  const WindowGeom g = unfold_geom(kernel_size, dilation, padding, stride, output_size[0], output_size[1]);
  const int64_t c = cols.size(1) / g.taps();
  const at::Tensor x = window_sum_back(cols.reshape({cols.size(0), c, g.k[0], g.k[1], g.out[0], g.out[1]}), g,
                                       output_size);
  at::native::resize_output(out, self.dim() == 2 ? x.sizes().slice(1) : x.sizes());
  out.copy_(self.dim() == 2 ? x.squeeze(0) : x);
  return out;
}

// im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
at::Tensor im2col_ocl(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                      c10::IntArrayRef padding, c10::IntArrayRef stride) {
  at::Tensor out = at::empty({0}, self.options());
  return im2col_out_ocl(self, kernel_size, dilation, padding, stride, out);
}
// col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
at::Tensor col2im_ocl(const at::Tensor& self, c10::IntArrayRef output_size, c10::IntArrayRef kernel_size,
                      c10::IntArrayRef dilation, c10::IntArrayRef padding, c10::IntArrayRef stride) {
  at::Tensor out = at::empty({0}, self.options());
  return col2im_out_ocl(self, output_size, kernel_size, dilation, padding, stride, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "convolution_overrideable", convolution_ocl);
  OCL_IMPL(m, "convolution_backward_overrideable", convolution_backward_ocl);
  OCL_IMPL(m, "im2col", im2col_ocl);
  OCL_IMPL(m, "im2col.out", im2col_out_ocl);
  OCL_IMPL(m, "col2im", col2im_ocl);
  OCL_IMPL(m, "col2im.out", col2im_out_ocl);
}

}  // namespace torch_ocl
