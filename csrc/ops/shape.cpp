// Shape ops: cat (up to SLOTS inputs per launch, sized to the device: foreach.h), flip, roll,
// tril/triu (one strided remap kernel), channel_shuffle (a strided copy), and the factories
// arange, linspace, eye and tril_indices/triu_indices. Kernels:
// kernels/shape.cl. stack and repeat are composite in ATen and land on cat / copy_.
#include "../aten/Complex.h"
#include "../aten/Routing.h"
#include "words.h"
#include "../runtime/Launch.h"
#include "foreach.h"
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <torch/library.h>

namespace torch_ocl {
namespace {

constexpr int kMaxDims = 12;   // MAXD in kernels/shape.cl
// cat_fwd's parameters besides the input list and its table: out, three longs and an int.
constexpr size_t kCatFixedBytes = 16 + 4 * 8;
constexpr size_t kWG = 256;  // work-group size of the grid-stride kernels


// ---- cat ------------------------------------------------------------------------------------
// cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& cat_out_ocl(const at::ITensorListRef& tensors_ref, int64_t dim, at::Tensor& out) {
  auto tensors = tensors_ref.materialize();
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // Legacy rule: 1-D empty tensors are skipped when checking shapes.
  auto skipped = [](const at::Tensor& t) { return t.dim() == 1 && t.numel() == 0; };
  const at::Tensor* ref = nullptr;
  for (const at::Tensor& t : tensors)
    if (!skipped(t)) {
      ref = &t;
      break;
    }
  at::native::ResultTypeState st{};
  for (const at::Tensor& t : tensors) st = at::native::update_result_type_state(t, st);
  const at::ScalarType dtype = at::native::result_type(st);
  TORCH_CHECK_TYPE(c10::canCast(dtype, out.scalar_type()),
                   "torch.cat(): input types can't be cast to the desired output type ", out.scalar_type());
  if (ref == nullptr) {
    at::native::resize_output(out, {0});
    return out;
  }
  TORCH_CHECK(ref->dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
  dim = at::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> shape(ref->sizes().begin(), ref->sizes().end());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    if (skipped(t)) continue;
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                t.dim());
    for (int64_t j = 0; j < t.dim(); ++j)
      TORCH_CHECK(j == dim || t.size(j) == ref->size(j), "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", ref->size(j), " but got size ", t.size(j), " for tensor number ", i,
                  " in the list.");
    TORCH_CHECK(t.device() == out.device(), "torch.cat(): all input tensors and out must be on the same device, got ",
                t.device(), " and ", out.device());
    total += t.size(dim);
  }
  shape[dim] = total;
  for (const at::Tensor& t : tensors) at::assert_no_overlap(out, t);
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  Device& d = ocl_device(out);
  check_storable(d, out.scalar_type(), "cat");
  at::Tensor res = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= shape[i];
  for (int64_t i = dim + 1; i < static_cast<int64_t>(shape.size()); ++i) inner *= shape[i];
  // Inputs in out's dtype and contiguous (a copy only where they are not already).
  std::vector<at::Tensor> ins;
  for (const at::Tensor& t : tensors) {
    if (skipped(t) || t.size(dim) == 0) continue;
    ins.push_back(t.to(out.scalar_type()).contiguous());
  }
  // The kernel moves words: 16-byte vectors when every input's span of an outer row (its size
  // along dim times inner), the output row and every buffer offset are whole 16-byte words
  // (its per-word index arithmetic, not memory, bounds the element-wise copy), else elements.
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  int64_t per_word = 1;  // elements per word
  if (16 % isz == 0) {
    const int64_t w = 16 / isz;
    bool whole = (total * inner) % w == 0 && buf(res).offset % 16 == 0;
    for (const at::Tensor& t : ins) whole = whole && (t.size(dim) * inner) % w == 0 && buf(t).offset % 16 == 0;
    if (whole) per_word = w;
  }
  const std::string word = per_word > 1 ? std::string("-DT=uint4") : move_opts(out);
  // Up to `slots` inputs per launch; the table holds each input's end along an outer row.
  const int most = multi_tensor::slots_for(d, 1, sizeof(int64_t), kCatFixedBytes);
  const int slots = multi_tensor::slot_bucket(ins.size(), most);
  Kernel& k = get_kernel(d, "shape", word + " -DSLOTS=" + std::to_string(slots), "cat_fwd");
  multi_tensor::ArgBytes tab;
  tab.bytes.resize(slots * sizeof(int64_t));
  const int64_t row = total * inner / per_word;  // output row, in words
  int64_t start = 0;                             // words of each row filled by earlier launches
  for (size_t b = 0; b < ins.size(); b += slots) {
    const size_t cnt = std::min<size_t>(slots, ins.size() - b);
    multi_tensor::SlotBufs bufs = multi_tensor::null_bufs(slots);
    int64_t acc = 0;
    for (size_t j = 0; j < static_cast<size_t>(slots); ++j) {
      if (j < cnt) {
        acc += ins[b + j].size(dim) * inner / per_word;
        bufs[j] = buf(ins[b + j]);
      }
      tab.put(j * sizeof(int64_t), acc);
    }
    const size_t groups = grid_stride(outer * acc).sz[0] / kWG;
    multi_tensor::launch_groups(d, k, groups, kWG, buf(res), bufs, outer, row, start, static_cast<cl_int>(cnt),
                                tab);
    start += acc;
  }
  if (!res.is_same(out)) out.copy_(res);
  return out;
}

// ---- remap: flip / roll / tril / triu ----------------------------------------------------
struct RemapGeom {
  int64_t ndim, tri, diag;
  int64_t size[kMaxDims], in_stride[kMaxDims], out_stride[kMaxDims], shift[kMaxDims], flip[kMaxDims];
};

RemapGeom remap_geom(const at::Tensor& in, const at::Tensor& out) {
  TORCH_CHECK_NOT_IMPLEMENTED(in.dim() <= kMaxDims, "torch_ocl: at most ", kMaxDims, " dims supported here");
  RemapGeom g{};
  g.ndim = std::max<int64_t>(in.dim(), 1);
  for (int64_t i = 0; i < g.ndim; ++i) {
    g.size[i] = in.dim() == 0 ? 1 : in.size(i);
    g.in_stride[i] = in.dim() == 0 ? 0 : in.stride(i);
    g.out_stride[i] = out.dim() == 0 ? 0 : out.stride(i);
  }
  return g;
}

void run_remap(const at::Tensor& out, const at::Tensor& in, const RemapGeom& g, const char* name) {
  const int64_t n = in.numel();
  if (n == 0) return;
  Device& d = ocl_device(in);
  check_storable(d, in.scalar_type(), name);
  launch(d, get_kernel(d, "shape", move_opts(in), "remap_fwd"), grid_stride(n), Range(kWG), buf(out), buf(in), n, g);
}

// flip(Tensor self, int[] dims) -> Tensor
at::Tensor flip_ocl(const at::Tensor& self, at::IntArrayRef dims) {
  at::Tensor out = at::empty(self.sizes(), self.options());
  RemapGeom g = remap_geom(self, out);
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  std::vector<bool> seen(nd, false);
  for (int64_t d : dims) {
    int64_t w = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!seen[w], "dims has duplicates, original flip dims size=", dims.size(), ", but unique flip dims size=",
                dims.size() - 1);
    seen[w] = true;
    g.flip[w] = 1;
  }
  run_remap(out, self, g, "flip");
  return out;
}

// roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor
at::Tensor roll_ocl(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, "`shifts` required to be of length 1 when `dims` is empty");
    at::Tensor flat = self.contiguous().view({-1});
    return roll_ocl(flat, shifts, {0}).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  at::Tensor out = at::empty(self.sizes(), self.options());
  RemapGeom g = remap_geom(self, out);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t w = at::maybe_wrap_dim(dims[i], self.dim());
    const int64_t sz = g.size[w];
    if (sz == 0) continue;
    // out[c] = in[(c - shift) mod size], accumulated over repeated dims.
    int64_t s = ((g.shift[w] - shifts[i]) % sz + sz) % sz;
    g.shift[w] = s;
  }
  run_remap(out, self, g, "roll");
  return out;
}

void tri_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out, int tri, const char* name) {
  TORCH_CHECK(self.dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), name, ": expected out to have dtype ", self.scalar_type());
  if (!out.is_same(self)) {
    at::native::resize_output(out, self.sizes());
    at::assert_no_overlap(out, self);
  }
  if (self.numel() == 0) return;
  RemapGeom g = remap_geom(self, out);
  g.tri = tri;
  g.diag = diagonal;
  run_remap(out, self, g, name);
}

// tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& tril_out_ocl(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  tri_out(self, diagonal, out, 1, "tril");
  return out;
}
// triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& triu_out_ocl(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  tri_out(self, diagonal, out, 2, "triu");
  return out;
}

// ---- factories ----------------------------------------------------------------------------
std::string typed_opts(at::ScalarType t, bool int_acc_double = false) {
  switch (t) {
    case at::kHalf: return "-DDT_HALF=1";
    case at::kBFloat16: return "-DDT_BF16=1";
    case at::kFloat: return "-DDT=float -DACC=float";
    case at::kDouble: return "-DDT=double -DACC=double";
    case at::kBool: return "-DDT=uchar -DACC=long";
    default: return "-DDT=" + cl_type_name(t) + (int_acc_double ? " -DACC=double" : " -DACC=long");
  }
}

// arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& arange_start_out_ocl(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                                 at::Tensor& out) {
  const at::ScalarType t = out.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "\"arange\" not implemented for 'Bool'");
  const bool integral = at::isIntegralType(t, /*includeBool=*/false);
  const double xs = start.toDouble(), xe = end.toDouble(), xst = step.toDouble();
  TORCH_CHECK(xst != 0, "step must be nonzero");
  // Integer outputs step by the step truncated to an integer (as on the CPU): 0.5 is no step.
  TORCH_CHECK_VALUE(!integral || step.toLong() != 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(xs) && std::isfinite(xe), "unsupported range: ", start, " -> ", end);
  TORCH_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), "upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (t == at::kLong) {
    const int64_t s = start.toLong(), e = end.toLong(), st = step.toLong();
    const int64_t sgn = (st > 0) - (st < 0);
    size_d = static_cast<double>((e - s + st - sgn) / st);  // exact: the rounding is in the numerator
  } else {
    size_d = std::ceil((xe - xs) / xst);
  }
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  const int64_t size = static_cast<int64_t>(size_d);
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return out;
  Device& d = ocl_device(out);
  check_dtype_supported(d, t, "arange");
  Kernel& k = get_kernel(d, "shape", typed_opts(t), "arange_fwd");
  const int64_t stride = out.stride(0);
  if (t == at::kDouble) {
    launch(d, k, grid_stride(size), Range(kWG), buf(out), size, stride, xs, xst);
  } else if (integral) {
    launch(d, k, grid_stride(size), Range(kWG), buf(out), size, stride, static_cast<int64_t>(start.toLong()),
           static_cast<int64_t>(step.toLong()));
  } else {
    launch(d, k, grid_stride(size), Range(kWG), buf(out), size, stride, static_cast<float>(xs), static_cast<float>(xst));
  }
  return out;
}

// linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& linspace_out_ocl(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (out.numel() != steps) out.resize_({steps});
  if (steps == 0) return out;
  const at::ScalarType t = out.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "\"linspace\" not implemented for 'Bool'");
  Device& d = ocl_device(out);
  check_dtype_supported(d, t, "linspace");
  if (steps == 1) return out.fill_(start);
  const bool integral = at::isIntegralType(t, /*includeBool=*/true);
  // Integer outputs step in double (truncated on store), like ATen; the endpoints are first
  // converted to the output dtype (so -3 is 253 for uint8, as on the CPU).
  const bool use_double = t == at::kDouble || (integral && d.info.fp64);
  Kernel& k = get_kernel(d, "shape", typed_opts(t, use_double), "linspace_fwd");
  const int64_t stride = out.stride(0);
  auto in_dtype = [&](const c10::Scalar& v) { return at::scalar_tensor(v, at::TensorOptions().dtype(t)).item(); };
  const c10::Scalar s0 = in_dtype(start), e0 = in_dtype(end);
  if (use_double) {
    const double s = s0.toDouble(), e = e0.toDouble();
    const double st = (e - s) / static_cast<double>(steps - 1);
    launch(d, k, grid_stride(steps), Range(kWG), buf(out), steps, stride, s, e, st);
  } else if (integral) {
    const int64_t s = s0.toLong(), e = e0.toLong();
    const int64_t st = (e - s) / (steps - 1);
    launch(d, k, grid_stride(steps), Range(kWG), buf(out), steps, stride, s, e, st);
  } else {
    // float16/bfloat16 step in the storage type, as ATen computes it (c10's arithmetic rounds
    // e - s, steps - 1 and the quotient); the kernel rounds its products likewise.
    const auto reduced_step = [&](auto zero) {
      using R = decltype(zero);
      return static_cast<float>((e0.to<R>() - s0.to<R>()) / (steps - 1));
    };
    const float s = s0.toFloat(), e = e0.toFloat();
    const float st = t == at::kHalf       ? reduced_step(at::Half(0))
                     : t == at::kBFloat16 ? reduced_step(at::BFloat16(0))
                                          : (e - s) / static_cast<float>(steps - 1);
    launch(d, k, grid_stride(steps), Range(kWG), buf(out), steps, stride, s, e, st);
  }
  return out;
}

// eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& eye_m_out_ocl(int64_t n, int64_t m, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  out.resize_({n, m});
  if (out.numel() == 0) return out;
  Device& d = ocl_device(out);
  check_dtype_supported(d, out.scalar_type(), "eye");
  at::Tensor one = at::scalar_tensor(1, at::TensorOptions().dtype(out.scalar_type()));
  uint64_t bits = 0;
  std::memcpy(&bits, one.const_data_ptr(), one.itemsize());
  launch(d, get_kernel(d, "shape", move_opts(out), "eye_fwd"), grid_stride(n * m), Range(kWG), buf(out), n, m, out.stride(0),
         out.stride(1), static_cast<cl_ulong>(bits));
  return out;
}

// eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& eye_out_ocl(int64_t n, at::Tensor& out) { return eye_m_out_ocl(n, n, out); }

// ---- tril_indices / triu_indices ----------------------------------------------------------
// Pairs in rows 0 .. r - 1 (tri_before of shape.cl, on the host for the total).
int64_t tri_ramp(int64_t x, int64_t cols) {
  if (x <= 1) return 0;
  const int64_t k = x - 1;
  return k <= cols ? k * (k + 1) / 2 : cols * (cols + 1) / 2 + (k - cols) * cols;
}
int64_t tri_before(int64_t r, int64_t cols, int64_t offset, bool upper) {
  if (!upper) return tri_ramp(offset + r + 1, cols) - tri_ramp(offset + 1, cols);
  const int64_t k = cols - offset;
  return tri_ramp(k + 1, cols) - tri_ramp(k - r + 1, cols);
}

at::Tensor tri_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype_opt,
                       std::optional<at::Layout> layout, std::optional<at::Device> device, bool upper) {
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  if (layout.has_value())
    TORCH_CHECK(*layout == at::kStrided, "only support layout=torch.strided, got", *layout);
  const at::ScalarType dtype = dtype_opt.value_or(at::kLong);
  const char* op = upper ? "triu_indices" : "tril_indices";
  TORCH_CHECK_NOT_IMPLEMENTED(dtype == at::kLong || dtype == at::kInt, "\"", op, "\" not implemented for '",
                              at::toString(dtype), "'");
  // Beyond these bounds every row is full or empty: the same pairs, and no overflow below.
  offset = std::clamp<int64_t>(offset, -row - 1, col + 1);
  const int64_t n = tri_before(row, col, offset, upper);
  at::Tensor out = at::empty({2, n}, at::TensorOptions().dtype(dtype).device(device));
  if (n == 0) return out;
  Device& d = ocl_device(out);
  launch(d, get_kernel(d, "shape", move_opts(out), "tri_indices_fwd"), grid_stride(n), Range(kWG), buf(out), n, row,
         col, offset, static_cast<cl_int>(upper));
  return out;
}

// tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
at::Tensor tril_indices_ocl(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                            std::optional<at::Layout> layout, std::optional<at::Device> device,
                            std::optional<bool> /*pin_memory*/) {
  return tri_indices(row, col, offset, dtype, layout, device, false);
}
// triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
at::Tensor triu_indices_ocl(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                            std::optional<at::Layout> layout, std::optional<at::Device> device,
                            std::optional<bool> /*pin_memory*/) {
  return tri_indices(row, col, offset, dtype, layout, device, true);
}

// channel_shuffle(Tensor self, SymInt groups) -> Tensor
// (ShuffleNet's F.channel_shuffle: channel g * (C / groups) + i moves to i * groups + g.) One
// strided copy from the input seen as (N, groups, C / groups, ...) into the output seen as
// (N, C / groups, groups, ...), in the input's suggested memory format, as on the CPU.
at::Tensor channel_shuffle_ocl(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes ",
              self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  at::Tensor out = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  if (out.numel() == 0) return out;
  std::vector<int64_t> split{self.size(0), groups, c / groups}, swapped{self.size(0), c / groups, groups};
  for (int64_t k = 2; k < self.dim(); ++k) {
    split.push_back(self.size(k));
    swapped.push_back(self.size(k));
  }
  // Splitting one dim is a view of any strides.
  out.view(swapped).copy_(self.view(split).transpose(1, 2));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "channel_shuffle", channel_shuffle_ocl);
  m.impl("cat.out", cat_out_ocl);  // data movement: complex too
  m.impl("flip", flip_ocl);  // data movement: complex too
  m.impl("roll", roll_ocl);  // data movement: complex too
  m.impl("tril.out", tril_out_ocl);  // data movement: complex too
  m.impl("triu.out", triu_out_ocl);  // data movement: complex too
  OCL_IMPL(m, "arange.start_out", arange_start_out_ocl);
  OCL_IMPL(m, "linspace.out", linspace_out_ocl);
  OCL_IMPL(m, "eye.out", eye_out_ocl);
  OCL_IMPL(m, "eye.m_out", eye_m_out_ocl);
  OCL_IMPL(m, "tril_indices", tril_indices_ocl);
  OCL_IMPL(m, "triu_indices", triu_indices_ocl);
}

}  // namespace torch_ocl
