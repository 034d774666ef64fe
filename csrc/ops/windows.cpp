// Sliding-window views and their adjoint (see windows.h).
#include "windows.h"

#include "../runtime/Launch.h"
#include "../runtime/Tuning.h"
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>

#include <array>
#include <string>

namespace torch_ocl {

int64_t WindowGeom::taps() const {
  int64_t p = 1;
  for (int64_t v : k) p *= v;
  return p;
}
int64_t WindowGeom::windows() const {
  int64_t p = 1;
  for (int64_t v : out) p *= v;
  return p;
}

bool unit_channel_stride(const at::Tensor& t) { return t.stride(1) == 1 && t.size(1) > 1; }

bool channel_vectors(const at::Tensor& t) {
  if (t.stride(1) != 1 || t.size(1) % 4 != 0) return false;
  int64_t span = t.size(1);
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i != 1 && t.size(i) > 1 && (t.stride(i) < 0 || t.stride(i) % 4 != 0)) return false;
    if (i > 1) span += (t.size(i) - 1) * t.stride(i);
  }
  return span < kMaxInt && vec4_aligned(t);
}

std::vector<int64_t> per_dim(c10::IntArrayRef v, int64_t nd, const char* op, const char* what) {
  TORCH_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd, op, ": expected ", what, " of 1 or ", nd,
              " values, got ", v);
  std::vector<int64_t> r(nd);
  for (int64_t i = 0; i < nd; ++i) r[i] = v.size() == 1 ? v[0] : v[i];
  return r;
}

at::Tensor window_view(const at::Tensor& x, const WindowGeom& g) {
  std::vector<int64_t> pads;  // constant_pad_nd: last dim first
  bool padded = false;
  for (int64_t i = g.nd - 1; i >= 0; --i) {
    pads.insert(pads.end(), {g.pad[i], g.pad[i]});
    padded |= g.pad[i] != 0;
  }
  // Without padding the windows are a view of x itself, at its own strides (1x1 and unpadded
  // convolutions, F.unfold): no copy.
  const at::Tensor xp = padded ? at::constant_pad_nd(x, pads, 0) : x;
  std::vector<int64_t> sizes{xp.size(0), xp.size(1)}, strides{xp.stride(0), xp.stride(1)};
  for (int64_t i = 0; i < g.nd; ++i) {
    sizes.push_back(g.k[i]);
    strides.push_back(g.dil[i] * xp.stride(i + 2));
  }
  for (int64_t i = 0; i < g.nd; ++i) {
    sizes.push_back(g.out[i]);
    strides.push_back(g.stride[i] * xp.stride(i + 2));
  }
  return xp.as_strided(sizes, strides);
}

namespace {
// Which window_sum_back kernel runs: GPUs take one work-item per element (coalesced), CPUs
// one per row of the last spatial dim (vectorized runs). The tuning entry "windows/sum_back"
// ("KERNEL=elements" or "KERNEL=rows") overrides the choice, e.g. to test either on any device.
bool sum_back_by_rows(const Device& d) {
  const std::string v = tuning::lookup(d, "windows/sum_back");
  if (v == "KERNEL=rows") return true;
  if (v == "KERNEL=elements") return false;
  if (!v.empty()) {
    TORCH_WARN_ONCE("torch_ocl: ignoring tuning entry windows/sum_back '", v, "'");
  }
  return d.info.is_cpu();
}
}  // namespace

at::Tensor window_sum_back(const at::Tensor& v, const WindowGeom& g, c10::IntArrayRef in) {
  TORCH_INTERNAL_ASSERT(g.nd >= 1 && g.nd <= 3 && v.dim() == 2 + 2 * g.nd, "window_sum_back: ", v.sizes(), " for ",
                        g.nd, " spatial dims");
  std::vector<int64_t> sizes{v.size(0), v.size(1)};
  sizes.insert(sizes.end(), in.begin(), in.end());
  at::Tensor x = at::empty(sizes, v.options());
  if (x.numel() == 0) return x;
  if (v.numel() == 0) return x.zero_();  // no windows (the kernels read window 0 of every tap)
  const at::ScalarType t = v.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(t != at::kBool, "torch_ocl: the window sum is not implemented for 'Bool'");
  Device& d = ocl_device(v);
  check_dtype_supported(d, t, "window_sum_back");
  const int kind = storage_kind_or_none(t);
  const std::string opts = kind >= 0 ? "-DX_KIND=" + std::to_string(kind) + (t == at::kDouble ? " -DACC=double" : "")
                                     : "-DX_KIND=4 -DACC=long -DINT_T=" + cl_type_name(t);
  // Dims 0..2 of the kernel's geometry; the first 3 - nd have one position, tap and window.
  std::array<int64_t, 3> isz{1, 1, 1}, k{1, 1, 1}, o{1, 1, 1}, s{1, 1, 1}, dil{1, 1, 1}, p{0, 0, 0},
      ks{0, 0, 0}, os{0, 0, 0};
  for (int64_t i = 0; i < g.nd; ++i) {
    const int64_t j = 3 - g.nd + i;
    isz[j] = in[i], k[j] = g.k[i], o[j] = g.out[i], s[j] = g.stride[i], dil[j] = g.dil[i], p[j] = g.pad[i];
    ks[j] = v.stride(2 + i), os[j] = v.stride(2 + g.nd + i);
  }
  for (const auto* a : {&isz, &k, &o, &s, &dil, &p})
    for (int64_t e : *a)
      TORCH_CHECK(e <= kMaxInt / 4, "window_sum_back: geometry value ", e,
                  " is too large");
  const bool rows = sum_back_by_rows(d);
  const int64_t total = rows ? x.numel() / isz[2] : x.numel();
  constexpr size_t kWG = 256;
  Kernel& kern = get_kernel(d, "windows", opts, rows ? "window_sum_back_rows" : "window_sum_back");
  auto i32 = [](const std::array<int64_t, 3>& a) {
    return std::array<cl_int, 3>{cl_int(a[0]), cl_int(a[1]), cl_int(a[2])};
  };
  const auto I = i32(isz), K = i32(k), O = i32(o), S = i32(s), D = i32(dil), P = i32(p);
  launch(d, kern, grid_stride(total, kWG), Range(kWG), buf(v), buf(x), total, v.size(1), I[0], I[1], I[2], K[0], K[1],
         K[2], O[0], O[1], O[2], S[0], S[1], S[2], D[0], D[1], D[2], P[0], P[1], P[2], v.stride(0), v.stride(1), ks[0],
         ks[1], ks[2], os[0], os[1], os[2]);
  return x;
}

}  // namespace torch_ocl
