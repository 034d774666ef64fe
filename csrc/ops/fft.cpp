// torch.fft's primitives (_fft_c2c, _fft_r2c, _fft_c2r and their out= forms) for complex64 /
// complex128 (float32 / float64 real sides), so torch.fft.*, stft/istft and their gradients
// run on the device. A multi-dimensional transform is one 1-D pass per dim over a copy laid
// out like the CPU's result (batch dims by stride, transformed dims innermost). A pass of n
// points: n with prime factors up to 13 that fits one work-group (local_plan) in one launch of
// fft_local (kernels/fft.cl), larger such n by the four-step split n = n1 n2 (two launches,
// recursing where n2 does not fit), any
// other n by Bluestein's chirp-z convolution of a 7-smooth size >= 2n - 1. Also here:
// unfold_backward and equal, which torch.istft calls (built from native ops).
#include "../aten/Complex.h"
#include "../runtime/Check.h"
#include "../runtime/Launch.h"
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/real.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace torch_ocl {
namespace {

constexpr size_t kLocalBytes = 32768;  // local memory of one fft_local work-group (G rows of n values)
constexpr size_t kWG = 256;            // fft_local's work-group size (at most)
constexpr int kMaxStages = 16;         // radices packed 4 bits each into a ulong
constexpr int64_t kVPW = 16;           // the largest VPW of kernels/fft.cl: the most values a work-item holds in a pass
constexpr int64_t kMaxPoints = int64_t(1) << 28;  // twiddle indices and Bluestein sizes stay below 2^31

// fft.cl's load and store modes (the *Pairs / kStoreR2CUnpack ones: a real transform of 2h
// points as an h-point complex one).
constexpr cl_int kLoadComplex = 0, kLoadReal = 1, kLoadHermitian = 2, kLoadRealPairs = 3, kLoadHermitianPairs = 4;
constexpr cl_int kStoreComplex = 0, kStoreReal = 1, kStoreR2CUnpack = 2, kStoreRealPairs = 3;

// The device, the complex dtype and fft.cl's build options for one call.
struct Ctx {
  Device& d;
  at::ScalarType ct;  // complex64 or complex128
  std::string opts;
  size_t csize;        // bytes of one complex value
  size_t local_bytes;  // local memory one fft_local work-group may take
  int64_t local_max;   // largest n of one fft_local work-group
  size_t wg;           // fft_local's work-group size (at most)
  // fft.cl's kernel `name` built with VPW = vpw (fft_local's registers per work-item); the
  // other kernels come from the VPW 8 program, which most sizes' fft_local shares.
  Kernel& kernel(const char* name, int vpw = 8) const {
    return get_kernel(d, "fft", opts + " -DVPW=" + std::to_string(vpw), name);
  }
  at::TensorOptions copts() const {
    return at::TensorOptions().dtype(ct).device(at::Device(c10::DeviceType::PrivateUse1, d.index));
  }
};

Ctx make_ctx(const at::Tensor& t, at::ScalarType ct, const char* op) {
  Device& d = ocl_device(t);
  check_complex_supported(d, ct, op);
  const bool dbl = ct == at::kComplexDouble;
  const size_t csize = dbl ? 16 : 8;
  const size_t bytes = std::min<size_t>(kLocalBytes, static_cast<size_t>(d.info.local_mem));
  return Ctx{d,
             ct,
             dbl ? "-DCT=double -DCX=double2 -DCT_IS_DOUBLE=1" : "-DCT=float -DCX=float2",
             csize,
             bytes,
             static_cast<int64_t>(bytes / csize),
             std::min(kWG, d.info.max_work_group)};
}

// The radices of n's Stockham passes (8s first, then 4, 2 and the odd primes), or nothing
// when n has a prime factor above 13.
std::optional<std::vector<int>> radices_of(int64_t n) {
  std::vector<int> r;
  while (n % 8 == 0) r.push_back(8), n /= 8;
  if (n % 4 == 0) r.push_back(4), n /= 4;
  if (n % 2 == 0) r.push_back(2), n /= 2;
  for (int p : {3, 5, 7, 11, 13})
    while (n % p == 0) r.push_back(p), n /= p;
  if (n != 1) return std::nullopt;
  return r;
}

// Device tables kept across calls (as cuFFT's plan cache keeps its plans), so a transform is
// one launch per pass: the twiddles of a size, and for Bluestein the chirp and the transformed
// convolution kernel. Least recently used entries go first; tables above 2^20 values are not
// kept, nor more than 64 MiB in all. The cache is never destroyed: at exit its tensors would be
// freed after the allocator.
constexpr size_t kCacheEntries = 64;
constexpr int64_t kCacheMaxElems = int64_t(1) << 20;
constexpr size_t kCacheMaxBytes = size_t(64) << 20;
enum class Table { twiddles, chirp, bluestein_kernel };

at::Tensor cached_table(const Ctx& c, Table kind, int64_t n, bool inv, const std::function<at::Tensor()>& make) {
  using Key = std::tuple<int, int, int, int64_t, bool>;
  struct Cache {
    std::mutex mu;
    std::list<std::pair<Key, at::Tensor>> lru;  // most recent first
    size_t bytes = 0;
  };
  static Cache* cache = new Cache();
  const Key key{c.d.index, static_cast<int>(c.ct), static_cast<int>(kind), n, inv};
  {
    std::lock_guard<std::mutex> lock(cache->mu);
    for (auto it = cache->lru.begin(); it != cache->lru.end(); ++it)
      if (it->first == key) {
        cache->lru.splice(cache->lru.begin(), cache->lru, it);
        return it->second;
      }
  }
  at::Tensor t = make();  // unlocked: making one table may need others
  if (t.numel() <= kCacheMaxElems) {
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->lru.emplace_front(key, t);
    cache->bytes += t.nbytes();
    while (cache->lru.size() > kCacheEntries || cache->bytes > kCacheMaxBytes) {
      cache->bytes -= cache->lru.back().second.nbytes();
      cache->lru.pop_back();
    }
  }
  return t;
}

// exp(-2 pi i t / n) for t < n.
at::Tensor twiddles(const Ctx& c, int64_t n) {
  return cached_table(c, Table::twiddles, n, false, [&] {
    at::Tensor tw = at::empty({n}, c.copts());
    launch(c.d, c.kernel("fft_twiddles"), Range(static_cast<size_t>(n)), Range(64), buf(tw),
           static_cast<cl_uint>(n));
    return tw;
  });
}

// One fft_local launch: see the kernel's comment for the row addressing.
struct LocalPass {
  int64_t rows = 0, C = 1, n = 0;
  int64_t xs_q = 0, xs_c = 0, xs_e = 1, ys_q = 0, ys_c = 0, ys_e = 1;
  bool x_gfast = false, y_gfast = false, post_tw = false;
  cl_int load = kLoadComplex, store = kStoreComplex;
  int64_t out_n = 0;
};

// The most work-items a work-group of k may have on c's device (a kernel with many registers
// may take fewer than the device's maximum), asked once per kernel.
size_t work_group_limit(const Ctx& c, Kernel& k) {
  static std::mutex mu;
  static std::map<const Kernel*, size_t>* limits = new std::map<const Kernel*, size_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = limits->find(&k);
  if (it != limits->end()) return it->second;
  size_t v = 0;
  OCL_CHECK(clGetKernelWorkGroupInfo(k.k, c.d.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(v), &v, nullptr),
            "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE) for fft_local");
  return (*limits)[&k] = std::max<size_t>(1, v);
}

// How fft_local transforms rows of n points, or nothing where they do not fit one work-group:
// its Stockham radices (4 bits each), T work-items a row (a power of two, one for each
// butterfly of the largest pass where the work-group allows), and the values a work-item holds
// in a pass, VPW: 8 where every pass needs no more, else 16 (on the H200, VPW 8 against 16:
// 64-point rows 41 against 46 us, 2048-point rows 55 against 63).
struct LocalPlan {
  cl_ulong radices = 0;
  cl_uint stages = 0;
  size_t T = 1;
  int vpw = 8;
};
// The plan of n points (radices rad) for work-groups of at most wg work-items.
std::optional<LocalPlan> plan_for(int64_t n, const std::vector<int>& rad, size_t wg) {
  TORCH_INTERNAL_ASSERT(static_cast<int>(rad.size()) <= kMaxStages);
  LocalPlan p;
  int64_t most = 1;  // the most butterflies of one pass
  for (int r : rad) most = std::max<int64_t>(most, n / r);
  while (static_cast<int64_t>(p.T) < most && 2 * p.T <= wg) p.T <<= 1;
  int64_t need = 1;
  for (size_t s = 0; s < rad.size(); ++s) {
    const int64_t R = rad[s], per_item = (n / R + static_cast<int64_t>(p.T) - 1) / static_cast<int64_t>(p.T);
    need = std::max(need, per_item * R);
    p.radices |= static_cast<cl_ulong>(R) << (4 * s);
  }
  if (need > kVPW) return std::nullopt;
  p.stages = static_cast<cl_uint>(rad.size());
  p.vpw = need <= 8 ? 8 : static_cast<int>(kVPW);
  return p;
}
std::optional<LocalPlan> local_plan(const Ctx& c, int64_t n) {
  const auto rad = radices_of(n);
  if (!rad || n > c.local_max) return std::nullopt;
  // T within the work-group limit of the kernel the plan builds (registers can set it below
  // the device's); a smaller limit can change the plan and its kernel, so ask again.
  auto p = plan_for(n, *rad, c.wg);
  while (p) {
    const size_t limit = work_group_limit(c, c.kernel("fft_local", p->vpw));
    if (p->T <= limit) break;
    p = plan_for(n, *rad, limit);
  }
  return p;
}

// plan: local_plan(c, p.n).
void run_local(const Ctx& c, const at::Tensor& x, const at::Tensor& y, const at::Tensor& tw, const LocalPass& p,
               const LocalPlan& plan, bool inv, double scale) {
  if (p.rows == 0) return;
  Kernel& k = c.kernel("fft_local", plan.vpw);
  const size_t T = plan.T, wg = std::min(c.wg, work_group_limit(c, k));
  const size_t by_mem = std::max<size_t>(1, c.local_bytes / (p.n * c.csize));
  const size_t G = std::max<size_t>(1, std::min({wg / T, by_mem, static_cast<size_t>(p.rows)}));
  const size_t groups = static_cast<size_t>((p.rows + G - 1) / G);
  auto go = [&](auto sc) {
    launch(c.d, k, Range(groups * T * G), Range(T * G), buf(x), buf(y), buf(tw), LocalMem{G * p.n * c.csize},
           static_cast<cl_long>(p.rows), static_cast<cl_long>(p.C), static_cast<cl_uint>(p.n),
           static_cast<cl_uint>(T), plan.stages, plan.radices, static_cast<cl_uint>(tw.numel()),
           static_cast<cl_int>(inv), sc, static_cast<cl_long>(p.xs_q), static_cast<cl_long>(p.xs_c),
           static_cast<cl_long>(p.xs_e), static_cast<cl_long>(p.ys_q), static_cast<cl_long>(p.ys_c),
           static_cast<cl_long>(p.ys_e), static_cast<cl_int>(p.x_gfast), static_cast<cl_int>(p.y_gfast), p.load,
           p.store, static_cast<cl_uint>(p.out_n), static_cast<cl_int>(p.post_tw));
  };
  if (c.ct == at::kComplexDouble)
    go(static_cast<cl_double>(scale));
  else
    go(static_cast<cl_float>(scale));
}

void fft_rows(const Ctx& c, const at::Tensor& x, const at::Tensor& y, int64_t n, bool inv, double scale);

// Four-step: the n = n1 n2 points of a row as an (n1, n2) matrix; n1-point transforms of its
// columns times exp(-+2 pi i b k1 / n) (pass 1), then n2-point transforms of its rows, written
// transposed (element k1 + n1 k2).
void four_step(const Ctx& c, const at::Tensor& x, const at::Tensor& y, int64_t n, bool inv, double scale) {
  const int64_t rows = x.size(0);
  // n1: the smallest divisor that leaves n2 fitting one work-group (a short column transform
  // lets a work-group take many columns at once), else the largest one that fits.
  int64_t n1 = 0;
  for (int64_t f = 2; f <= c.local_max && !n1; ++f)
    if (n % f == 0 && local_plan(c, f) && local_plan(c, n / f)) n1 = f;
  if (!n1)
    for (int64_t f = std::min(c.local_max, n / 2); f >= 2 && !n1; --f)
      if (n % f == 0 && local_plan(c, f)) n1 = f;
  const int64_t n2 = n / n1;
  const auto plan1 = local_plan(c, n1), plan2 = local_plan(c, n2);
  const at::Tensor tw = twiddles(c, n);
  at::Tensor tmp = at::empty({rows, n}, c.copts());
  LocalPass p1;
  p1.rows = rows * n2, p1.C = n2, p1.n = n1, p1.out_n = n1;
  p1.xs_q = n, p1.xs_c = 1, p1.xs_e = n2, p1.ys_q = n, p1.ys_c = 1, p1.ys_e = n2;
  p1.x_gfast = p1.y_gfast = p1.post_tw = true;
  run_local(c, x, tmp, tw, p1, *plan1, inv, 1.0);
  if (plan2) {
    LocalPass p2;
    p2.rows = rows * n1, p2.C = n1, p2.n = n2, p2.out_n = n2;
    p2.xs_q = n, p2.xs_c = n2, p2.xs_e = 1, p2.ys_q = n, p2.ys_c = 1, p2.ys_e = n1;
    p2.y_gfast = true;
    run_local(c, tmp, y, tw, p2, *plan2, inv, scale);
  } else {
    at::Tensor z = at::empty({rows * n1, n2}, c.copts());
    fft_rows(c, tmp.view({rows * n1, n2}), z, n2, inv, scale);
    y.view({rows, n2, n1}).copy_(z.view({rows, n1, n2}).transpose(1, 2));
  }
}

// A 2-D grid-stride launch over (elements, rows): dim 1 stays within NVIDIA's 65535 groups.
Range rows_grid(int64_t elems, int64_t rows) {
  return Range(std::min<size_t>(round_up(static_cast<size_t>(elems), 256), 256 * 64),
               static_cast<size_t>(std::min<int64_t>(rows, 4096)));
}

// Bluestein's convolution size: the m >= lo of the form 2^a 3^b 5^c 7^d with the least estimated
// work, m times the summed per-element cost of its passes (a power of two can be almost twice
// lo, but radix 3, 5 and 7 passes cost more per element than radix 8 ones).
int64_t convolution_size(int64_t lo) {
  auto cost = [](int64_t m) {
    double w = 0;
    const auto rad = radices_of(m);  // kept alive: a range-for over *radices_of(m) would dangle
    for (int r : *rad) w += r == 8 ? 1.0 : r == 4 ? 0.8 : r == 2 ? 0.6 : r == 3 ? 0.9 : r == 5 ? 1.2 : 1.6;
    return static_cast<double>(m) * w;
  };
  int64_t best = 1;
  while (best < lo) best <<= 1;
  const int64_t hi = best;
  for (int64_t a = 1; a < hi; a *= 7)
    for (int64_t b = a; b < hi; b *= 5)
      for (int64_t c3 = b; c3 < hi; c3 *= 3)
        for (int64_t m = c3; m < hi; m *= 2)
          if (m >= lo && cost(m) < cost(best)) best = m;
  return best;
}

// Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}) with w_t = exp(-+pi i t^2 / n), the sum a
// cyclic convolution of m >= 2n - 1 points (convolution_size) done by the transforms above.
void bluestein(const Ctx& c, const at::Tensor& x, const at::Tensor& y, int64_t n, bool inv, double scale) {
  const int64_t rows = x.size(0);
  const int64_t m = convolution_size(2 * n - 1);
  const cl_long ln = n, lm = m, lrows = rows;
  const at::Tensor w = cached_table(c, Table::chirp, n, inv, [&] {
    at::Tensor t = at::empty({n}, c.copts());
    launch(c.d, c.kernel("fft_chirp"), grid_stride(n), Range(256), buf(t), static_cast<cl_ulong>(n),
           static_cast<cl_int>(inv));
    return t;
  });
  const at::Tensor bf = cached_table(c, Table::bluestein_kernel, n, inv, [&] {
    at::Tensor b = at::empty({1, m}, c.copts()), t = at::empty({1, m}, c.copts());
    launch(c.d, c.kernel("fft_bluestein_kernel"), grid_stride(m), Range(256), buf(w), buf(b), ln, lm);
    fft_rows(c, b, t, m, false, 1.0);
    return t;
  });
  TORCH_INTERNAL_ASSERT(bf.size(1) == m, "fft: cached Bluestein kernel of ", bf.size(1), " points, expected ", m);
  at::Tensor a = at::empty({rows, m}, c.copts()), af = at::empty({rows, m}, c.copts());
  launch(c.d, c.kernel("fft_bluestein_pre"), rows_grid(m, rows), Range(256, 1), buf(x), buf(w), buf(a), lrows, ln,
         lm);
  fft_rows(c, a, af, m, false, 1.0);
  af.mul_(bf);
  fft_rows(c, af, a, m, true, 1.0);
  const double s = scale / static_cast<double>(m);
  Kernel& post = c.kernel("fft_bluestein_post");
  if (c.ct == at::kComplexDouble)
    launch(c.d, post, rows_grid(n, rows), Range(256, 1), buf(a), buf(w), buf(y), lrows, ln, lm,
           static_cast<cl_double>(s));
  else
    launch(c.d, post, rows_grid(n, rows), Range(256, 1), buf(a), buf(w), buf(y), lrows, ln, lm,
           static_cast<cl_float>(s));
}

// y = the n-point transforms of x's rows, times scale: x and y contiguous (rows, n) complex.
void fft_rows(const Ctx& c, const at::Tensor& x, const at::Tensor& y, int64_t n, bool inv, double scale) {
  if (x.size(0) == 0) return;
  if (const auto plan = local_plan(c, n)) {
    LocalPass p;
    p.rows = x.size(0), p.n = n, p.out_n = n, p.xs_q = n, p.ys_q = n;
    run_local(c, x, y, twiddles(c, n), p, *plan, inv, scale);
  } else if (radices_of(n)) {
    four_step(c, x, y, n, inv, scale);
  } else {
    bluestein(c, x, y, n, inv, scale);
  }
}

// One 1-D pass along dim d of the contiguous tensor src: n-point transforms (n: the signal
// size; src's size along d is n, or n / 2 + 1 for kLoadHermitian), the first out_n outputs of
// each kept. Returns a new contiguous tensor (real for kStoreReal).
at::Tensor fft_pass(const Ctx& c, const at::Tensor& src, int64_t d, int64_t n, cl_int load, cl_int store,
                    int64_t out_n, bool inv, double scale) {
  std::vector<int64_t> out_sizes = src.sizes().vec();
  out_sizes[d] = out_n;
  const at::ScalarType rt = c.ct == at::kComplexDouble ? at::kDouble : at::kFloat;
  at::Tensor out = at::empty(out_sizes, c.copts().dtype(store == kStoreReal ? rt : c.ct));
  if (out.numel() == 0) return out;
  const int64_t in_len = src.size(d);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= src.size(i);
  for (int64_t i = d + 1; i < src.dim(); ++i) inner *= src.size(i);
  LocalPass p;
  p.rows = outer * inner, p.C = inner, p.n = n, p.out_n = out_n;
  p.xs_q = in_len * inner, p.xs_c = 1, p.xs_e = inner;
  p.ys_q = out_n * inner, p.ys_c = 1, p.ys_e = inner;
  p.x_gfast = p.y_gfast = inner > 1;
  p.load = load, p.store = store;
  // A onesided real transform (or its inverse) of even n: an n / 2-point complex one on the
  // real values taken in pairs, untangled (or tangled) with exp(-2 pi i k / n) in the same
  // launch, at half the work.
  const int64_t h = n / 2;
  const bool r2c = load == kLoadReal && store == kStoreComplex && out_n == h + 1;
  const bool c2r = load == kLoadHermitian && store == kStoreReal;
  const auto packed = n % 2 == 0 && (r2c || c2r) ? local_plan(c, h) : std::nullopt;
  if (packed) {
    p.n = h;
    p.load = r2c ? kLoadRealPairs : kLoadHermitianPairs;
    p.store = r2c ? kStoreR2CUnpack : kStoreRealPairs;
    p.out_n = r2c ? h + 1 : h;
    run_local(c, src, out, twiddles(c, n), p, *packed, inv, scale);
    return out;
  }
  if (const auto plan = local_plan(c, n)) {
    run_local(c, src, out, twiddles(c, n), p, *plan, inv, scale);
    return out;
  }
  // Large n: the rows made contiguous and complex, transformed, then trimmed to out_n / real.
  const int64_t rows = outer * inner;
  at::Tensor xs = src.movedim(d, -1).contiguous().view({rows, in_len});
  if (load == kLoadReal) {
    xs = xs.to(c.ct);
  } else if (load == kLoadHermitian) {
    at::Tensor full = at::empty({rows, n}, c.copts());
    launch(c.d, c.kernel("fft_hermitian_fill"), grid_stride(rows * n), Range(256), buf(xs), buf(full),
           static_cast<cl_long>(rows), static_cast<cl_long>(n), static_cast<cl_long>(in_len));
    xs = full;
  }
  at::Tensor ys = at::empty({rows, n}, c.copts());
  fft_rows(c, xs, ys, n, inv, scale);
  at::Tensor res = ys.narrow(1, 0, out_n);
  if (store == kStoreReal) res = at::real(res);
  std::vector<int64_t> moved = out.movedim(d, -1).sizes().vec();
  out.movedim(d, -1).copy_(res.view(moved));
  return out;
}

// The product of sizes[dims] scaled per ATen's fft_norm_mode.
double norm_scale(c10::IntArrayRef sizes, c10::IntArrayRef dims, int64_t normalization) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(sizes[d]);
  switch (static_cast<at::native::fft_norm_mode>(normalization)) {
    case at::native::fft_norm_mode::none: return 1.0;
    case at::native::fft_norm_mode::by_root_n: return 1.0 / std::sqrt(n);
    case at::native::fft_norm_mode::by_n: return 1.0 / n;
  }
  TORCH_CHECK(false, "Unsupported normalization type ", normalization);
}

// Checked transform dims (in range, distinct: the CPU's kernels assume what torch.fft's
// front end guarantees), and the permutation putting the batch dims first (by decreasing
// stride, as the CPU orders its output), then the transformed ones (the last of `dims` last
// when keep_last).
std::vector<int64_t> plan_layout(const at::Tensor& self, c10::IntArrayRef dims, bool keep_last, const char* op) {
  const int64_t nd = self.dim();
  std::vector<bool> is_dim(nd, false);
  for (int64_t d : dims) {
    TORCH_CHECK(d >= 0 && d < nd, op, ": dim ", d, " out of range for a ", nd, "-d tensor");
    TORCH_CHECK(!is_dim[d], op, ": dim ", d, " appears more than once");
    is_dim[d] = true;
  }
  const auto strides = self.strides();
  auto by_stride = [&](int64_t a, int64_t b) { return strides[a] > strides[b]; };
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nd; ++i)
    if (!is_dim[i]) perm.push_back(i);
  std::stable_sort(perm.begin(), perm.end(), by_stride);
  const size_t nb = perm.size();
  perm.insert(perm.end(), dims.begin(), dims.end() - (keep_last ? 1 : 0));
  std::stable_sort(perm.begin() + nb, perm.end(), by_stride);
  if (keep_last) perm.push_back(dims.back());
  return perm;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

// A tensor's values without lazy conjugate / negative bits (kernels read stored values).
at::Tensor resolved(const at::Tensor& t) { return t.resolve_conj().resolve_neg(); }

void check_signal(const at::Tensor& t, c10::IntArrayRef dims, const char* op) {
  for (int64_t d : dims) {
    TORCH_CHECK(t.size(d) > 0, op, ": invalid number of data points (0) along dim ", d);
    TORCH_CHECK(t.size(d) <= kMaxPoints, op, ": ", t.size(d), " points along dim ", d, " are more than ocl's ",
                kMaxPoints);
  }
}

// _fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor
at::Tensor _fft_c2c_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization, bool forward) {
  TORCH_CHECK(self.is_complex(), "Only supports complex dtypes, but found: ", self.scalar_type());
  const auto perm = plan_layout(self, dim, false, "_fft_c2c");
  if (dim.empty()) return self.clone();
  check_signal(self, dim, "_fft_c2c");
  const Ctx c = make_ctx(self, self.scalar_type(), "_fft_c2c");
  const double scale = norm_scale(self.sizes(), dim, normalization);
  at::Tensor x = resolved(self).permute(perm).contiguous();
  const int64_t nd = self.dim(), first = nd - static_cast<int64_t>(dim.size());
  for (int64_t i = nd - 1; i >= first; --i)
    x = fft_pass(c, x, i, x.size(i), kLoadComplex, kStoreComplex, x.size(i), !forward, i == first ? scale : 1.0);
  return x.permute(inverse_perm(perm));
}

// _fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor
at::Tensor _fft_r2c_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "Only supports floating-point dtypes, but found: ", self.scalar_type());
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble,
              "Unsupported dtype ", self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_r2c: expected at least one dim");
  const auto perm = plan_layout(self, dim, true, "_fft_r2c");
  check_signal(self, dim, "_fft_r2c");
  const at::ScalarType ct = c10::toComplexType(self.scalar_type());
  const Ctx c = make_ctx(self, ct, "_fft_r2c");
  const double scale = norm_scale(self.sizes(), dim, normalization);
  at::Tensor x = resolved(self).permute(perm).contiguous();
  const int64_t nd = self.dim(), first = nd - static_cast<int64_t>(dim.size()), n = x.size(nd - 1);
  // The last dim real -> complex (its onesided half, or all of it), then c2c over the rest.
  const int64_t out_n = onesided ? n / 2 + 1 : n;
  x = fft_pass(c, x, nd - 1, n, kLoadReal, kStoreComplex, out_n, false, first == nd - 1 ? scale : 1.0);
  for (int64_t i = nd - 2; i >= first; --i)
    x = fft_pass(c, x, i, x.size(i), kLoadComplex, kStoreComplex, x.size(i), false, i == first ? scale : 1.0);
  return x.permute(inverse_perm(perm));
}

// _fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
at::Tensor _fft_c2r_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  TORCH_CHECK(self.is_complex(), "Only supports complex dtypes, but found: ", self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_c2r: expected at least one dim");
  const auto perm = plan_layout(self, dim, true, "_fft_c2r");
  const int64_t n = last_dim_size, last = dim.back();
  TORCH_CHECK(n >= 1, "_fft_c2r: invalid last_dim_size ", n);
  TORCH_CHECK(self.size(last) >= n / 2 + 1, "_fft_c2r: expected at least ", n / 2 + 1,
              " onesided complex frequencies for a real signal of size ", n, " along dim ", last, ", but got ",
              self.size(last));
  check_signal(self, dim, "_fft_c2r");
  const Ctx c = make_ctx(self, self.scalar_type(), "_fft_c2r");
  std::vector<int64_t> signal = self.sizes().vec();
  signal[last] = n;
  const double scale = norm_scale(signal, dim, normalization);
  at::Tensor x = resolved(self).narrow(last, 0, n / 2 + 1).permute(perm).contiguous();
  const int64_t nd = self.dim(), first = nd - static_cast<int64_t>(dim.size());
  // c2c over all but the last dim, then the Hermitian last dim complex -> real.
  for (int64_t i = nd - 2; i >= first; --i)
    x = fft_pass(c, x, i, x.size(i), kLoadComplex, kStoreComplex, x.size(i), true, 1.0);
  x = fft_pass(c, x, nd - 1, n, kLoadHermitian, kStoreReal, n, true, scale);
  return x.permute(inverse_perm(perm));
}

at::Tensor& copy_to_out(const at::Tensor& result, at::Tensor& out) {
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// _fft_c2c.out(Tensor self, SymInt[] dim, int normalization, bool forward, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _fft_c2c_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization, bool forward,
                             at::Tensor& out) {
  return copy_to_out(_fft_c2c_ocl(self, dim, normalization, forward), out);
}

// _fft_r2c.out(Tensor self, int[] dim, int normalization, bool onesided, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _fft_r2c_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization, bool onesided,
                             at::Tensor& out) {
  return copy_to_out(_fft_r2c_ocl(self, dim, normalization, onesided), out);
}

// _fft_c2r.out(Tensor self, int[] dim, int normalization, SymInt last_dim_size, *, Tensor(a!) out) -> Tensor(a!)
at::Tensor& _fft_c2r_out_ocl(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization,
                             int64_t last_dim_size, at::Tensor& out) {
  return copy_to_out(_fft_c2r_ocl(self, dim, normalization, last_dim_size), out);
}

// ---- The other ops torch.istft needs, built from native ops (no kernels of their own) ------

// unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor
// The adjoint of x.unfold(dim, size, step): overlap-add of the windows (istft's). Taps are taken
// `step` at a time: within such a block no two windows overlap, so each block is one add_ into a
// strided view of the output (ceil(size / step) launches, any dtype add_ takes).
at::Tensor unfold_backward_ocl(const at::Tensor& grad, c10::IntArrayRef input_sizes, int64_t dim, int64_t size,
                               int64_t step) {
  const int64_t nd = static_cast<int64_t>(input_sizes.size());
  dim = c10::maybe_wrap_dim(dim, nd);
  TORCH_CHECK(size >= 0 && step > 0, "unfold_backward: expected size >= 0 and step > 0, got ", size, " and ", step);
  at::Tensor out = at::zeros(input_sizes, grad.options());
  // A 0-d input unfolds as a 1-element 1-d one.
  at::Tensor o = nd == 0 ? out.view({1}) : out;
  const at::Tensor g = nd == 0 ? grad.view({grad.numel() == 0 ? 0 : 1, size}) : grad;
  const int64_t d = nd == 0 ? 0 : dim, frames = g.size(d);
  if (o.numel() == 0 || g.numel() == 0) return out;
  for (int64_t b = 0; b * step < size; ++b) {
    const int64_t w = std::min(step, size - b * step);
    std::vector<int64_t> sizes = o.sizes().vec(), strides = o.strides().vec();
    sizes[d] = frames, strides[d] = step * o.stride(d);
    sizes.push_back(w), strides.push_back(o.stride(d));
    o.as_strided(sizes, strides, o.storage_offset() + b * step * o.stride(d)).add_(g.narrow(-1, b * step, w));
  }
  return out;
}

// equal(Tensor self, Tensor other) -> bool
// Same sizes and equal values (NaN equals nothing), as on the CPU (values compared after type
// promotion). Returning a bool, it reads the answer back: a host synchronization by contract.
bool equal_ocl(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ",
              self.device(), " and ", other.device());
  if (!self.is_same_size(other)) return false;
  return at::eq(self, other).all().item<bool>();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fft_c2c", TORCH_FN(_fft_c2c_ocl));
  m.impl("_fft_c2c.out", TORCH_FN(_fft_c2c_out_ocl));
  m.impl("_fft_r2c", TORCH_FN(_fft_r2c_ocl));
  m.impl("_fft_r2c.out", TORCH_FN(_fft_r2c_out_ocl));
  m.impl("_fft_c2r", TORCH_FN(_fft_c2r_ocl));
  m.impl("_fft_c2r.out", TORCH_FN(_fft_c2r_out_ocl));
  m.impl("unfold_backward", TORCH_FN(unfold_backward_ocl));
  m.impl("equal", TORCH_FN(equal_ocl));
}

}  // namespace torch_ocl
