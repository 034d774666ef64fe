// Sliding-window views and their adjoint (see windows.h).
#include "windows.h"

#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/zeros.h>

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

std::vector<int64_t> per_dim(c10::IntArrayRef v, int64_t nd, const char* op, const char* what) {
  TORCH_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd, op, ": expected ", what, " of 1 or ", nd,
              " values, got ", v);
  std::vector<int64_t> r(nd);
  for (int64_t i = 0; i < nd; ++i) r[i] = v.size() == 1 ? v[0] : v[i];
  return r;
}

at::Tensor window_view(const at::Tensor& x, const WindowGeom& g, const c10::Scalar& value) {
  std::vector<int64_t> pads;  // constant_pad_nd: last dim first
  for (int64_t i = g.nd - 1; i >= 0; --i) pads.insert(pads.end(), {g.pad_lo[i], g.pad_hi[i]});
  const at::Tensor xp = at::constant_pad_nd(x, pads, value).contiguous();
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

at::Tensor window_sum_back(const at::Tensor& v, const WindowGeom& g, c10::IntArrayRef in) {
  std::vector<int64_t> padded{v.size(0), v.size(1)};
  for (int64_t i = 0; i < g.nd; ++i) padded.push_back(in[i] + g.pad_lo[i] + g.pad_hi[i]);
  at::Tensor xp = at::zeros(padded, v.options());
  std::vector<int64_t> tap(g.nd, 0);
  for (int64_t t = 0; t < g.taps(); ++t) {
    at::Tensor dst = xp, src = v;
    for (int64_t i = 0; i < g.nd; ++i) {
      const int64_t start = tap[i] * g.dil[i];
      dst = dst.slice(i + 2, start, start + g.stride[i] * (g.out[i] - 1) + 1, g.stride[i]);
      src = src.select(2, tap[i]);  // each select drops one tap dim, the next is again dim 2
    }
    dst.add_(src);
    for (int64_t i = g.nd - 1; i >= 0 && ++tap[i] == g.k[i]; --i) tap[i] = 0;
  }
  at::Tensor x = xp;
  for (int64_t i = 0; i < g.nd; ++i) x = x.narrow(i + 2, g.pad_lo[i], in[i]);
  return x;
}

}  // namespace torch_ocl
