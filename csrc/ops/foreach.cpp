// The _foreach_* ops used by the foreach optimizers, clip_grad_norm_ and GradScaler: one
// multi-tensor launch (kernels/foreach.cl) per SLOTS tensors (foreach.h) when every tensor
// is a dense floating tensor of one dtype on one device with matching layouts across lists
// (ATen's fast-route rules); anything else takes ATen's per-tensor "slow" implementation, which
// calls the ordinary ops.
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include "foreach.h"
#include <ATen/native/ForeachUtils.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_clamp_max_native.h>
#include <ATen/ops/_foreach_clamp_min_native.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <map>
#include <torch/library.h>

namespace torch_ocl {
namespace multi_tensor {

int slots_for(const Device& d, int lists, size_t per_slot_bytes, size_t fixed_bytes) {
  // Alignment padding between parameters is covered by counting scalars as 8 bytes, plus a margin.
  constexpr size_t kMargin = 32;
  const size_t per_slot = 16 * static_cast<size_t>(lists) + per_slot_bytes;
  const size_t have = d.info.max_parameter_size;
  const size_t used = fixed_bytes + kMargin;
  const size_t fit = have > used ? (have - used) / per_slot : 0;
  const size_t slots = fit / kSlotStep * kSlotStep;
  return static_cast<int>(std::clamp<size_t>(slots, kMinSlots, kMaxSlots));
}

}  // namespace multi_tensor

namespace {
using namespace multi_tensor;
using at::TensorList;
using at::native::check_foreach_api_restrictions;

constexpr size_t kGroup = 256;           // work-items per group (WG in foreach.cl)
constexpr uint32_t kBlockElems = 4096;   // elements each work-group handles

// Bytes of foreach_apply's parameters besides the lists and the Chunk table (the largest of
// the program's kernels): s_arg, s_tensor and four ints, each counted as 8 bytes.
constexpr size_t kApplyFixedBytes = 8 + 16 + 4 * 8;

// The program of one dtype and number of buffer lists for `numels`: SLOTS is the bucket that
// holds them, at most what the device's parameter space holds.
struct Program {
  std::string options;
  int slots;
};
Program program(Device& d, at::ScalarType t, int nlists, const std::vector<int64_t>& numels) {
  const size_t sb = t == at::kDouble ? sizeof(double) : sizeof(float);
  const int most = slots_for(d, nlists, ChunkLayout::per_slot(sb), kApplyFixedBytes);
  const int slots = slot_bucket(count_nonempty(numels), most);
  return {float_type_options(t) + " -DWG=" + std::to_string(kGroup) + " -DSLOTS=" + std::to_string(slots) +
              " -DNLISTS=" + std::to_string(nlists) + ieee_div_sqrt_option(d.info),
          slots};
}

// Must match the OP_* codes of foreach.cl.
enum Op { kAdd = 0, kSub, kMul, kDiv, kMax, kMin, kLerp, kAddcmul, kAddcdiv, kSqrt, kNeg, kZero, kCopy };
enum ScalarSrc { kScalarArg = 0, kScalarList = 1, kScalarTensor = 2 };

bool is_kernel_dtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// ATen's fast-route rules plus: on ocl, a floating dtype the kernels handle, real scalars.
bool fast_ok(at::ArrayRef<TensorList> lists, at::ArrayRef<c10::Scalar> scalars = {}) {
  if (lists[0].empty()) return false;
  const at::Tensor& t0 = lists[0][0];
  if (t0.device().type() != c10::DeviceType::PrivateUse1 || !is_kernel_dtype(t0.scalar_type())) return false;
  for (const auto& s : scalars)
    if (s.isComplex()) return false;
  return at::native::can_use_fast_route(lists, scalars, /*does_op_promote_integer_inputs_to_float=*/false);
}

struct Apply {
  Op op;
  int nin;
  ScalarSrc src = kScalarArg;
  c10::Scalar s = 0;
  std::vector<c10::Scalar> per;  // kScalarList
  at::Tensor s_tensor;           // kScalarTensor (0-dim, on the device)
};

template <typename S>
void run(const Apply& a, TensorList out, TensorList x, TensorList y, TensorList z) {
  const at::Tensor& t0 = out[0];
  Device& d = ocl_device(t0);
  check_dtype_supported(d, t0.scalar_type(), "_foreach op");
  at::Tensor st;
  if (a.src == kScalarTensor) st = a.s_tensor.to(std::is_same_v<S, double> ? at::kDouble : at::kFloat);
  // In place (out is x): the kernel takes x, y, z only, so more tensors fit one launch.
  const bool inplace = out.size() == x.size() && out.data() == x.data();
  const TensorList lists[4] = {out, x, y, z};
  const int first = inplace ? 1 : 0;
  const int nlists = 1 + a.nin - (inplace ? 1 : 0);
  std::vector<int64_t> numels;
  for (const auto& t : out) numels.push_back(t.numel());
  const Program prog = program(d, t0.scalar_type(), nlists, numels);
  Kernel& k = get_kernel(d, "foreach", prog.options, "foreach_apply");
  const S sarg = a.s.to<S>();
  for (auto& c : plan<S>(numels, kBlockElems, prog.slots)) {
    if (a.src == kScalarList)
      for (size_t s = 0; s < c.index.size(); ++s) c.set_scalar(s, a.per[c.index[s]].template to<S>());
    SlotBufs b[4];
    for (int l = 0; l < nlists; ++l) b[l] = slot_bufs(lists[first + l], c);
    for (int l = nlists; l < 4; ++l) b[l] = SlotBufs();  // parameters the program does not have
    const Buf sbuf = st.defined() ? buf(st) : Buf{nullptr, 0};
    launch_groups(d, k, c.groups, kGroup, c.args, b[0], b[1], b[2], b[3], sarg, sbuf, static_cast<cl_int>(a.op),
                  static_cast<cl_int>(a.nin), static_cast<cl_int>(a.src), static_cast<cl_int>(inplace));
  }
}

void apply(const Apply& a, TensorList out, TensorList x, TensorList y = {}, TensorList z = {}) {
  if (out.empty()) return;
  if (out[0].scalar_type() == at::kDouble) run<double>(a, out, x, y, z);
  else run<float>(a, out, x, y, z);
}

std::vector<at::Tensor> empty_like_list(TensorList x) {
  std::vector<at::Tensor> out;
  out.reserve(x.size());
  for (const auto& t : x) out.push_back(at::empty_like(t));
  return out;
}

Apply scalar_list_apply(Op op, int nin, at::ArrayRef<c10::Scalar> scalars) {
  Apply a{op, nin, kScalarList};
  a.per.assign(scalars.begin(), scalars.end());
  return a;
}

}  // namespace

// ---- Scalar, ScalarList and List overloads of binary ops ----------------------------------
// _foreach_<op>.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]  and  _foreach_<op>_.Scalar
// _foreach_<op>.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]  and  _foreach_<op>_.ScalarList
#define FOREACH_SCALAR_OPS(name, slow, OPC)                                                                \
  std::vector<at::Tensor> foreach_##name##_Scalar_ocl(TensorList self, const c10::Scalar& s) {            \
    check_foreach_api_restrictions(self);                                                                 \
    if (!fast_ok({self}, s)) return at::native::foreach_tensor_##slow##_scalar_kernel_slow(self, s);      \
    auto out = empty_like_list(self);                                                                     \
    apply(Apply{OPC, 1, kScalarArg, s}, out, self);                                                       \
    return out;                                                                                           \
  }                                                                                                       \
  void foreach_##name##__Scalar_ocl(TensorList self, const c10::Scalar& s) {                             \
    check_foreach_api_restrictions(self);                                                                 \
    if (!fast_ok({self}, s)) return at::native::foreach_tensor_##slow##_scalar_kernel_slow_(self, s);     \
    apply(Apply{OPC, 1, kScalarArg, s}, self, self);                                                      \
  }                                                                                                       \
  std::vector<at::Tensor> foreach_##name##_ScalarList_ocl(TensorList self, at::ArrayRef<c10::Scalar> s) { \
    check_foreach_api_restrictions(self, s);                                                              \
    if (!fast_ok({self}, s)) return at::native::foreach_tensor_##slow##_scalarlist_kernel_slow(self, s);  \
    auto out = empty_like_list(self);                                                                     \
    apply(scalar_list_apply(OPC, 1, s), out, self);                                                       \
    return out;                                                                                           \
  }                                                                                                       \
  void foreach_##name##__ScalarList_ocl(TensorList self, at::ArrayRef<c10::Scalar> s) {                  \
    check_foreach_api_restrictions(self, s);                                                              \
    if (!fast_ok({self}, s)) return at::native::foreach_tensor_##slow##_scalarlist_kernel_slow_(self, s); \
    apply(scalar_list_apply(OPC, 1, s), self, self);                                                      \
  }

// _foreach_<op>.List(Tensor[] self, Tensor[] other) -> Tensor[]  and  _foreach_<op>_.List
#define FOREACH_LIST_OPS(name, slow, OPC)                                                                 \
  std::vector<at::Tensor> foreach_##name##_List_ocl(TensorList self, TensorList other) {                 \
    check_foreach_api_restrictions(self, other);                                                          \
    if (!fast_ok({self, other})) return at::native::foreach_tensor_##slow##_list_kernel_slow(self, other); \
    auto out = empty_like_list(self);                                                                     \
    apply(Apply{OPC, 2}, out, self, other);                                                               \
    return out;                                                                                           \
  }                                                                                                       \
  void foreach_##name##__List_ocl(TensorList self, TensorList other) {                                   \
    check_foreach_api_restrictions(self, other);                                                          \
    if (!fast_ok({self, other})) return at::native::foreach_tensor_##slow##_list_kernel_slow_(self, other); \
    apply(Apply{OPC, 2}, self, self, other);                                                              \
  }

// _foreach_<op>.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]  and  _foreach_<op>_.List
#define FOREACH_LIST_ALPHA_OPS(name, OPC)                                                                 \
  std::vector<at::Tensor> foreach_##name##_List_ocl(TensorList self, TensorList other, const c10::Scalar& alpha) { \
    check_foreach_api_restrictions(self, other);                                                          \
    if (!fast_ok({self, other}, alpha))                                                                   \
      return at::native::foreach_tensor_##name##_list_kernel_slow(self, other, alpha);                    \
    auto out = empty_like_list(self);                                                                     \
    apply(Apply{OPC, 2, kScalarArg, alpha}, out, self, other);                                            \
    return out;                                                                                           \
  }                                                                                                       \
  void foreach_##name##__List_ocl(TensorList self, TensorList other, const c10::Scalar& alpha) {         \
    check_foreach_api_restrictions(self, other);                                                          \
    if (!fast_ok({self, other}, alpha))                                                                   \
      return at::native::foreach_tensor_##name##_list_kernel_slow_(self, other, alpha);                   \
    apply(Apply{OPC, 2, kScalarArg, alpha}, self, self, other);                                           \
  }

FOREACH_SCALAR_OPS(add, add, kAdd)
FOREACH_SCALAR_OPS(sub, sub, kSub)
FOREACH_SCALAR_OPS(mul, mul, kMul)
FOREACH_SCALAR_OPS(div, div, kDiv)
FOREACH_SCALAR_OPS(clamp_min, clamp_min, kMax)
FOREACH_SCALAR_OPS(clamp_max, clamp_max, kMin)
FOREACH_SCALAR_OPS(maximum, clamp_min, kMax)
FOREACH_LIST_ALPHA_OPS(add, kAdd)
FOREACH_LIST_ALPHA_OPS(sub, kSub)
FOREACH_LIST_OPS(mul, mul, kMul)
FOREACH_LIST_OPS(div, div, kDiv)
FOREACH_LIST_OPS(clamp_min, clamp_min, kMax)
FOREACH_LIST_OPS(clamp_max, clamp_max, kMin)
FOREACH_LIST_OPS(maximum, clamp_min, kMax)

// ---- Tensor overloads: the scalar is a one-element tensor (read on the device) -------------
namespace {
void check_scalar_tensor(const at::Tensor& other) {
  TORCH_CHECK(other.dim() == 0 && other.numel() == 1, "scalar tensor expected to be 0 dim but it has ", other.dim(),
              " dimensions and ", other.numel(), " elements.");
}
// Apply for `a op (alpha * other)`: on the device when `other` lives there, else as a plain scalar.
Apply tensor_apply(Op op, const at::Tensor& other, const c10::Scalar& alpha) {
  if (other.device().is_cpu()) {
    Apply a{op, 1, kScalarArg};
    a.s = other.item().toDouble() * alpha.toDouble();
    return a;
  }
  Apply a{op, 1, kScalarTensor, alpha};
  a.s_tensor = other;
  return a;
}
bool tensor_fast_ok(TensorList self, const at::Tensor& other) {
  // A scalar of another dtype can change the result dtype (0-dim operands promote): per-tensor path.
  return fast_ok({self}) && other.scalar_type() == self[0].scalar_type() &&
         (other.device().is_cpu() || other.device() == self[0].device());
}
}  // namespace

// _foreach_mul.Tensor(Tensor[] self, Tensor other) -> Tensor[]
std::vector<at::Tensor> foreach_mul_Tensor_ocl(TensorList self, const at::Tensor& other) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other)) return at::native::foreach_tensor_mul_tensor_kernel_slow(self, other);
  auto out = empty_like_list(self);
  apply(tensor_apply(kMul, other, 1), out, self);
  return out;
}
// _foreach_mul_.Tensor(Tensor(a!)[] self, Tensor other) -> ()
void foreach_mul__Tensor_ocl(TensorList self, const at::Tensor& other) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other)) return at::native::foreach_tensor_mul_tensor_kernel_slow_(self, other);
  apply(tensor_apply(kMul, other, 1), self, self);
}
// _foreach_div.Tensor(Tensor[] self, Tensor other) -> Tensor[]
std::vector<at::Tensor> foreach_div_Tensor_ocl(TensorList self, const at::Tensor& other) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other)) return at::native::foreach_tensor_div_tensor_kernel_slow(self, other);
  auto out = empty_like_list(self);
  apply(tensor_apply(kDiv, other, 1), out, self);
  return out;
}
// _foreach_div_.Tensor(Tensor(a!)[] self, Tensor other) -> ()
void foreach_div__Tensor_ocl(TensorList self, const at::Tensor& other) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other)) return at::native::foreach_tensor_div_tensor_kernel_slow_(self, other);
  apply(tensor_apply(kDiv, other, 1), self, self);
}
// _foreach_add.Tensor(Tensor[] self, Tensor other, *, Scalar alpha=1) -> Tensor[]
std::vector<at::Tensor> foreach_add_Tensor_ocl(TensorList self, const at::Tensor& other, const c10::Scalar& alpha) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other) || alpha.isComplex())
    return at::native::foreach_tensor_add_tensor_kernel_slow(self, other, alpha);
  auto out = empty_like_list(self);
  apply(tensor_apply(kAdd, other, alpha), out, self);
  return out;
}
// _foreach_add_.Tensor(Tensor(a!)[] self, Tensor other, *, Scalar alpha=1) -> ()
void foreach_add__Tensor_ocl(TensorList self, const at::Tensor& other, const c10::Scalar& alpha) {
  check_foreach_api_restrictions(self);
  check_scalar_tensor(other);
  if (!tensor_fast_ok(self, other) || alpha.isComplex())
    return at::native::foreach_tensor_add_tensor_kernel_slow_(self, other, alpha);
  apply(tensor_apply(kAdd, other, alpha), self, self);
}

// ---- lerp ----------------------------------------------------------------------------------
// _foreach_lerp.Scalar(Tensor[] self, Tensor[] tensors1, Scalar weight) -> Tensor[]
std::vector<at::Tensor> foreach_lerp_Scalar_ocl(TensorList self, TensorList end, const c10::Scalar& w) {
  check_foreach_api_restrictions(self, end);
  if (!fast_ok({self, end}, w)) return at::native::foreach_tensor_lerp_list_kernel_slow(self, end, w);
  auto out = empty_like_list(self);
  apply(Apply{kLerp, 2, kScalarArg, w}, out, self, end);
  return out;
}
// _foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) -> ()
void foreach_lerp__Scalar_ocl(TensorList self, TensorList end, const c10::Scalar& w) {
  check_foreach_api_restrictions(self, end);
  if (!fast_ok({self, end}, w)) return at::native::foreach_tensor_lerp_list_kernel_slow_(self, end, w);
  apply(Apply{kLerp, 2, kScalarArg, w}, self, self, end);
}
// _foreach_lerp.ScalarList(Tensor[] self, Tensor[] tensors1, Scalar[] weight) -> Tensor[]
std::vector<at::Tensor> foreach_lerp_ScalarList_ocl(TensorList self, TensorList end, at::ArrayRef<c10::Scalar> w) {
  check_foreach_api_restrictions(self, end, w);
  if (!fast_ok({self, end}, w)) return at::native::foreach_tensor_lerp_scalarlist_kernel_slow(self, end, w);
  auto out = empty_like_list(self);
  apply(scalar_list_apply(kLerp, 2, w), out, self, end);
  return out;
}
// _foreach_lerp_.ScalarList(Tensor(a!)[] self, Tensor[] tensors1, Scalar[] weight) -> ()
void foreach_lerp__ScalarList_ocl(TensorList self, TensorList end, at::ArrayRef<c10::Scalar> w) {
  check_foreach_api_restrictions(self, end, w);
  if (!fast_ok({self, end}, w)) return at::native::foreach_tensor_lerp_scalarlist_kernel_slow_(self, end, w);
  apply(scalar_list_apply(kLerp, 2, w), self, self, end);
}
// _foreach_lerp.List(Tensor[] self, Tensor[] tensors1, Tensor[] weights) -> Tensor[]
std::vector<at::Tensor> foreach_lerp_List_ocl(TensorList self, TensorList end, TensorList w) {
  check_foreach_api_restrictions(self, end, w);
  if (!fast_ok({self, end, w})) return at::native::foreach_tensor_ternary_lerp_slow(self, end, w);
  auto out = empty_like_list(self);
  apply(Apply{kLerp, 3}, out, self, end, w);
  return out;
}
// _foreach_lerp_.List(Tensor(a!)[] self, Tensor[] tensors1, Tensor[] weights) -> ()
void foreach_lerp__List_ocl(TensorList self, TensorList end, TensorList w) {
  check_foreach_api_restrictions(self, end, w);
  if (!fast_ok({self, end, w})) return at::native::foreach_tensor_ternary_lerp_slow_(self, end, w);
  apply(Apply{kLerp, 3}, self, self, end, w);
}

// ---- addcmul / addcdiv ---------------------------------------------------------------------
// _foreach_<op>.Scalar(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, Scalar value=1) -> Tensor[]
// _foreach_<op>.ScalarList(..., Scalar[] scalars) and _foreach_<op>.Tensor(..., Tensor scalars),
// each with its in-place form.
#define FOREACH_POINTWISE_OPS(name, OPC)                                                                   \
  std::vector<at::Tensor> foreach_##name##_Scalar_ocl(TensorList self, TensorList t1, TensorList t2,        \
                                                      const c10::Scalar& v) {                              \
    check_foreach_api_restrictions(self, t1, t2);                                                          \
    if (!fast_ok({self, t1, t2}, v)) return at::native::foreach_tensor_##name##_scalar_slow(self, t1, t2, v); \
    auto out = empty_like_list(self);                                                                      \
    apply(Apply{OPC, 3, kScalarArg, v}, out, self, t1, t2);                                                \
    return out;                                                                                            \
  }                                                                                                        \
  void foreach_##name##__Scalar_ocl(TensorList self, TensorList t1, TensorList t2, const c10::Scalar& v) { \
    check_foreach_api_restrictions(self, t1, t2);                                                          \
    if (!fast_ok({self, t1, t2}, v)) return at::native::foreach_tensor_##name##_scalar_slow_(self, t1, t2, v); \
    apply(Apply{OPC, 3, kScalarArg, v}, self, self, t1, t2);                                               \
  }                                                                                                        \
  std::vector<at::Tensor> foreach_##name##_ScalarList_ocl(TensorList self, TensorList t1, TensorList t2,    \
                                                          at::ArrayRef<c10::Scalar> s) {                   \
    check_foreach_api_restrictions(self, t1, t2, s);                                                       \
    if (!fast_ok({self, t1, t2}, s))                                                                       \
      return at::native::foreach_tensor_##name##_scalarlist_slow(self, t1, t2, s);                         \
    auto out = empty_like_list(self);                                                                      \
    apply(scalar_list_apply(OPC, 3, s), out, self, t1, t2);                                                \
    return out;                                                                                            \
  }                                                                                                        \
  void foreach_##name##__ScalarList_ocl(TensorList self, TensorList t1, TensorList t2,                     \
                                        at::ArrayRef<c10::Scalar> s) {                                     \
    check_foreach_api_restrictions(self, t1, t2, s);                                                       \
    if (!fast_ok({self, t1, t2}, s))                                                                       \
      return at::native::foreach_tensor_##name##_scalarlist_slow_(self, t1, t2, s);                        \
    apply(scalar_list_apply(OPC, 3, s), self, self, t1, t2);                                               \
  }                                                                                                        \
  std::vector<at::Tensor> foreach_##name##_Tensor_ocl(TensorList self, TensorList t1, TensorList t2,        \
                                                      const at::Tensor& scalars) {                         \
    auto s = at::native::convert_tensor_to_scalar_list(scalars, self.size());                              \
    return foreach_##name##_ScalarList_ocl(self, t1, t2, s);                                               \
  }                                                                                                        \
  void foreach_##name##__Tensor_ocl(TensorList self, TensorList t1, TensorList t2, const at::Tensor& scalars) { \
    auto s = at::native::convert_tensor_to_scalar_list(scalars, self.size());                              \
    foreach_##name##__ScalarList_ocl(self, t1, t2, s);                                                     \
  }

FOREACH_POINTWISE_OPS(addcmul, kAddcmul)
FOREACH_POINTWISE_OPS(addcdiv, kAddcdiv)

// ---- unary, zero_, copy_ -------------------------------------------------------------------
// _foreach_<op>(Tensor[] self) -> Tensor[]  and  _foreach_<op>_(Tensor(a!)[] self) -> ()
#define FOREACH_UNARY_OPS(name, OPC)                                          \
  std::vector<at::Tensor> foreach_##name##_ocl(TensorList self) {             \
    check_foreach_api_restrictions(self);                                     \
    if (!fast_ok({self})) return at::native::foreach_tensor_##name##_slow(self); \
    auto out = empty_like_list(self);                                         \
    apply(Apply{OPC, 1}, out, self);                                          \
    return out;                                                               \
  }                                                                           \
  void foreach_##name##__ocl(TensorList self) {                               \
    check_foreach_api_restrictions(self);                                     \
    if (!fast_ok({self})) return at::native::foreach_tensor_##name##_slow_(self); \
    apply(Apply{OPC, 1}, self, self);                                         \
  }

FOREACH_UNARY_OPS(sqrt, kSqrt)
FOREACH_UNARY_OPS(neg, kNeg)

// _foreach_zero_(Tensor(a!)[] self) -> ()
void foreach_zero__ocl(TensorList self) {
  check_foreach_api_restrictions(self);
  if (!fast_ok({self})) return at::native::foreach_tensor_zero_slow_(self);
  apply(Apply{kZero, 1}, self, self);
}

// _foreach_copy_(Tensor(a!)[] self, Tensor[] src, bool non_blocking=False) -> ()
void foreach_copy__ocl(TensorList self, TensorList src, bool non_blocking) {
  check_foreach_api_restrictions(self, src);
  if (!fast_ok({self, src})) return at::native::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);
  apply(Apply{kCopy, 1}, self, src);
}

// ---- norms ---------------------------------------------------------------------------------
namespace {
template <typename S>
void run_norm(TensorList self, int norm, double p, const std::vector<at::Tensor>& out) {
  const at::ScalarType t = self[0].scalar_type();
  Device& d = ocl_device(self[0]);
  std::vector<int64_t> numels;
  for (const auto& x : self) numels.push_back(x.numel());
  const Program prog = program(d, t, 2, numels);  // lists: self, out
  Kernel& k = get_kernel(d, "foreach", prog.options, "foreach_norm");
  auto chunks = plan<S>(numels, kBlockElems, prog.slots);
  size_t most = 0;
  for (const auto& c : chunks) most = std::max(most, c.groups);
  at::Tensor work = at::empty({static_cast<int64_t>(most)}, out[0].options());
  cl_mem counters = d.arrival_counters(prog.slots);
  TORCH_INTERNAL_ASSERT(counters != nullptr, "torch_ocl: no arrival counters for _foreach_norm");
  // One launch per chunk of up to SLOTS tensors (chunks run in queue order, so they share the
  // workspace and the counters).
  for (const auto& c : chunks)
    launch_groups(d, k, c.groups, kGroup, c.args, slot_bufs(self, c), slot_bufs(TensorList(out), c),
                  static_cast<S>(p), buf(work), counters, static_cast<cl_int>(norm));
}
}  // namespace

// _foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> Tensor[]
std::vector<at::Tensor> foreach_norm_Scalar_ocl(TensorList self, const c10::Scalar& ord,
                                                std::optional<at::ScalarType> dtype) {
  check_foreach_api_restrictions(self);
  const double p = ord.isFloatingPoint() ? ord.toDouble() : static_cast<double>(ord.toLong());
  const bool ok_ord = std::isinf(p) || p >= 0;
  // The infinity norms of an empty tensor have no identity: the per-tensor path raises the CPU's error.
  const bool empty_inf = std::isinf(p) && std::any_of(self.begin(), self.end(), [](const at::Tensor& x) {
    return x.numel() == 0;
  });
  if (!fast_ok({self}) || !ok_ord || empty_inf || (dtype && !is_kernel_dtype(*dtype)))
    return at::native::foreach_tensor_norm_slow(self, ord, dtype);
  const at::ScalarType t = self[0].scalar_type();
  const at::ScalarType acc = t == at::kDouble ? at::kDouble : at::kFloat;
  const at::ScalarType res = dtype.value_or(t);
  int norm = 5;
  if (p == 0) norm = 0;
  else if (p == 1) norm = 1;
  else if (p == 2) norm = 2;
  else if (std::isinf(p)) norm = p > 0 ? 3 : 4;
  std::vector<at::Tensor> out;
  for (const auto& x : self)
    out.push_back(x.numel() == 0 ? at::zeros({}, x.options().dtype(acc)) : at::empty({}, x.options().dtype(acc)));
  if (acc == at::kDouble) run_norm<double>(self, norm, p, out);
  else run_norm<float>(self, norm, p, out);
  if (res != acc)
    for (auto& o : out) o = o.to(res);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define REG_SCALAR(name)                                              \
  OCL_IMPL(m, "_foreach_" #name ".Scalar", foreach_##name##_Scalar_ocl);   \
  OCL_IMPL(m, "_foreach_" #name "_.Scalar", foreach_##name##__Scalar_ocl); \
  OCL_IMPL(m, "_foreach_" #name ".ScalarList", foreach_##name##_ScalarList_ocl); \
  OCL_IMPL(m, "_foreach_" #name "_.ScalarList", foreach_##name##__ScalarList_ocl);
#define REG_LIST(name)                                            \
  OCL_IMPL(m, "_foreach_" #name ".List", foreach_##name##_List_ocl);   \
  OCL_IMPL(m, "_foreach_" #name "_.List", foreach_##name##__List_ocl);
#define REG_TENSOR(name)                                              \
  OCL_IMPL(m, "_foreach_" #name ".Tensor", foreach_##name##_Tensor_ocl);   \
  OCL_IMPL(m, "_foreach_" #name "_.Tensor", foreach_##name##__Tensor_ocl);
  REG_SCALAR(add) REG_LIST(add) REG_TENSOR(add)
  REG_SCALAR(sub) REG_LIST(sub)
  REG_SCALAR(mul) REG_LIST(mul) REG_TENSOR(mul)
  REG_SCALAR(div) REG_LIST(div) REG_TENSOR(div)
  REG_SCALAR(clamp_min) REG_LIST(clamp_min)
  REG_SCALAR(clamp_max) REG_LIST(clamp_max)
  REG_SCALAR(maximum) REG_LIST(maximum)
  REG_SCALAR(lerp) REG_LIST(lerp)
  REG_SCALAR(addcmul) REG_TENSOR(addcmul)
  REG_SCALAR(addcdiv) REG_TENSOR(addcdiv)
#undef REG_SCALAR
#undef REG_LIST
#undef REG_TENSOR
  OCL_IMPL(m, "_foreach_sqrt", foreach_sqrt_ocl);
  OCL_IMPL(m, "_foreach_sqrt_", foreach_sqrt__ocl);
  OCL_IMPL(m, "_foreach_neg", foreach_neg_ocl);
  OCL_IMPL(m, "_foreach_neg_", foreach_neg__ocl);
  OCL_IMPL(m, "_foreach_zero_", foreach_zero__ocl);
  OCL_IMPL(m, "_foreach_copy_", foreach_copy__ocl);
  OCL_IMPL(m, "_foreach_norm.Scalar", foreach_norm_Scalar_ocl);
}

}  // namespace torch_ocl

namespace torch_ocl {
namespace {
using namespace multi_tensor;

// x *= inv_scale for a list of dense tensors of one floating dtype; non-finite values set found_inf.
template <typename S>
void unscale_group(const std::vector<at::Tensor>& xs, const at::Tensor& found_inf, const at::Tensor& inv_scale) {
  Device& d = ocl_device(xs[0]);
  const at::ScalarType t = xs[0].scalar_type();
  check_dtype_supported(d, t, "_amp_foreach_non_finite_check_and_unscale_");
  std::vector<int64_t> numels;
  for (const auto& x : xs) numels.push_back(x.numel());
  const Program prog = program(d, t, 1, numels);
  Kernel& k = get_kernel(d, "foreach", prog.options, "foreach_unscale");
  for (const auto& c : plan<S>(numels, kBlockElems, prog.slots))
    launch_groups(d, k, c.groups, kGroup, c.args, slot_bufs(at::TensorList(xs), c), buf(found_inf), buf(inv_scale));
}
}  // namespace

// _amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()
void amp_foreach_non_finite_check_and_unscale__ocl(at::TensorList self, at::Tensor& found_inf,
                                                   const at::Tensor& inv_scale) {
  TORCH_CHECK(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(inv_scale.scalar_type() == at::kFloat, "inv_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == at::kFloat, "found_inf must be a float tensor.");
  if (self.empty()) return;
  // Group by dtype (mixed-precision models have both); non-dense tensors go through a dense copy.
  std::map<at::ScalarType, std::vector<at::Tensor>> groups;
  std::vector<std::pair<at::Tensor, at::Tensor>> copy_back;
  for (const auto& x : self) {
    TORCH_CHECK(x.device() == found_inf.device() && x.device() == inv_scale.device(),
                "_amp_foreach_non_finite_check_and_unscale_: all tensors must be on ", found_inf.device());
    TORCH_CHECK(is_kernel_dtype(x.scalar_type()), "_amp_foreach_non_finite_check_and_unscale_: expected floating "
                "tensors, got ", x.scalar_type());
    if (x.numel() == 0) continue;
    if (x.is_non_overlapping_and_dense()) {
      groups[x.scalar_type()].push_back(x);
    } else {
      at::Tensor dense = x.contiguous();
      groups[x.scalar_type()].push_back(dense);
      copy_back.emplace_back(x, dense);
    }
  }
  for (const auto& [t, xs] : groups) {
    if (t == at::kDouble) unscale_group<double>(xs, found_inf, inv_scale);
    else unscale_group<float>(xs, found_inf, inv_scale);
  }
  for (auto& [x, dense] : copy_back) x.copy_(dense);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_amp_foreach_non_finite_check_and_unscale_", amp_foreach_non_finite_check_and_unscale__ocl);
}

}  // namespace torch_ocl
