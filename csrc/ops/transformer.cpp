// The inference fast paths of nn.MultiheadAttention and nn.TransformerEncoder(Layer), which
// PyTorch takes on "cpu", "cuda" and the PrivateUse1 backend alike (eval mode, no gradient):
//   _native_multi_head_attention    the attention block (in-projection, attention, out-projection);
//   _transformer_encoder_layer_fwd  a whole encoder layer (ATen's own device-generic composite
//                                   of the above, layer_norm, linear and gelu/relu);
// and, for inputs with a key padding mask, the nested-tensor ("sparsity") path of
// nn.TransformerEncoder: _nested_tensor_from_mask builds a NestedTensor on the device, each
// layer runs on its padded form (with the padding as a key mask: the results are those of the
// dense path) and to_padded_tensor returns to a dense tensor; each conversion is one gather or
// scatter of the real rows. Nested tensors of other shapes take ATen's generic helpers.
// Without these every such call ran on the CPU through the fallback, and the padded encoder
// raised (no NestedTensor copy between devices).
#include "../runtime/Launch.h"
#include <ATen/NestedTensorImpl.h>
#include <ATen/ops/_nested_from_padded_native.h>
#include <ATen/ops/_nested_tensor_from_mask.h>
#include <ATen/ops/_nested_tensor_from_mask_left_aligned_native.h>
#include <ATen/ops/_nested_tensor_from_mask_native.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/index_fill.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/to_padded_tensor_native.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace torch_ocl {
namespace {

// The boolean "masked out" mask broadcastable to (B, H, L, S): mask_type 0 an (L, S) attention
// mask, 1 a (B, S) key padding mask, 2 anything broadcastable. Any nonzero value masks (as on
// the CPU).
at::Tensor attention_mask(const at::Tensor& mask, int64_t mask_type, int64_t B, int64_t L, int64_t S) {
  const at::Tensor m = mask.scalar_type() == at::kBool ? mask : mask.ne(0);
  switch (mask_type) {
    case 0:
      TORCH_CHECK(m.dim() == 2 && m.size(0) == L && m.size(1) == S, "_native_multi_head_attention: expected a (",
                  L, ", ", S, ") attention mask for mask_type 0, got ", m.sizes());
      return m.view({1, 1, L, S});
    case 1:
      TORCH_CHECK(m.dim() == 2 && m.size(0) == B && m.size(1) == S, "_native_multi_head_attention: expected a (",
                  B, ", ", S, ") key padding mask for mask_type 1, got ", m.sizes());
      return m.view({B, 1, 1, S});
    case 2:
      return m;
    default:
      TORCH_CHECK(false, "_native_multi_head_attention: unknown mask_type ", mask_type);
  }
}

// _native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> native_mha_ocl(const at::Tensor& query, const at::Tensor& key,
                                                  const at::Tensor& value, int64_t embed_dim, int64_t num_head,
                                                  const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
                                                  const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                                                  const std::optional<at::Tensor>& mask, bool need_weights,
                                                  bool average_attn_weights, std::optional<int64_t> mask_type) {
  // The CPU's checks, in its words.
  TORCH_CHECK(!query.is_nested(), "_native_multi_head_attention on ocl: nested inputs are not supported");
  TORCH_CHECK(query.dim() == 3, "expected 3-D `query`, got ", query.dim(), "-D tensor");
  TORCH_CHECK(key.dim() == 3, "expected 3-D `key`, got ", key.dim(), "-D tensor");
  TORCH_CHECK(value.dim() == 3, "expected 3-D `value`, got ", value.dim(), "-D tensor");
  TORCH_CHECK(query.size(2) == embed_dim, "passed-in embed_dim ", embed_dim, " didn't match last dim of query ",
              query.size(2));
  TORCH_CHECK(key.size(2) == embed_dim, "passed-in embed_dim ", embed_dim, " didn't match last dim of key ",
              key.size(2));
  TORCH_CHECK(value.size(2) == embed_dim, "passed-in embed_dim ", embed_dim, " didn't match last dim of value ",
              value.size(2));
  TORCH_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
              "expected `query`/`key`/`value` shapes to match");
  TORCH_CHECK(num_head > 0 && embed_dim % num_head == 0, "`embed_dim` must divide evenly by `num_heads`");
  TORCH_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * embed_dim && qkv_weight.size(1) == embed_dim,
              "expected `qkv_weight` to be of shape (", 3 * embed_dim, ", ", embed_dim, "), got ", qkv_weight.sizes());
  TORCH_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == 3 * embed_dim, "expected `qkv_bias` of shape (",
              3 * embed_dim, "), got ", qkv_bias.sizes());
  const bool has_mask = mask.has_value() && mask->defined();
  TORCH_CHECK(!has_mask || mask_type.has_value(), "Mask Type should be defined");
  const int64_t B = query.size(0), L = query.size(1), S = key.size(1), E = embed_dim, H = num_head, D = E / H;

  // In-projection: one product for self-attention, else one per input with its weight rows.
  at::Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    const auto qkv = at::linear(query, qkv_weight, qkv_bias).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    q = at::linear(query, qkv_weight.narrow(0, 0, E), qkv_bias.narrow(0, 0, E));
    k = at::linear(key, qkv_weight.narrow(0, E, E), qkv_bias.narrow(0, E, E));
    v = at::linear(value, qkv_weight.narrow(0, 2 * E, E), qkv_bias.narrow(0, 2 * E, E));
  }
  // (B, len, E) -> (B, H, len, D)
  q = q.view({B, L, H, D}).transpose(1, 2);
  k = k.view({B, S, H, D}).transpose(1, 2);
  v = v.view({B, S, H, D}).transpose(1, 2);

  at::Tensor attn, weights;
  if (!has_mask && !need_weights) {
    attn = at::scaled_dot_product_attention(q, k, v);  // the fused attention kernels
  } else {
    // Explicit scores: the weights are an output, or masked rows must come out as the CPU's
    // (a fully masked row is NaN there, where SDPA gives zeros).
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).mul_(1.0 / std::sqrt(static_cast<double>(D)));
    if (has_mask)
      scores.masked_fill_(attention_mask(*mask, *mask_type, B, L, S), -std::numeric_limits<double>::infinity());
    weights = at::softmax(scores, -1);
    attn = at::matmul(weights, v);
  }
  const at::Tensor out = at::linear(attn.transpose(1, 2).reshape({B, L, E}), proj_weight, proj_bias);
  if (!need_weights) return {out, at::Tensor()};
  return {out, average_attn_weights ? weights.mean(1) : weights};
}

// ---- Nested batches of (length_i, E) sequences <-> padded (B, L, E) tensors -------------------
// ATen's generic helpers go sequence by sequence (a pad, a stack and a masked_select with its
// host read per conversion); nn.TransformerEncoder converts at every layer. Here the nested
// sizes (a host tensor) give the rows of the padded (B * L, E) view holding real tokens, and
// one index_select / index_copy_ moves them.

// The lengths of a nested batch of (length, E) sequences, or an empty vector when it is not
// one (other ranks, or differing feature sizes).
std::vector<int64_t> sequence_lengths(const at::Tensor& nested, int64_t* E) {
  const at::Tensor sizes = at::native::get_nested_tensor_impl(nested)->get_nested_sizes();  // host (B, dims)
  if (sizes.dim() != 2 || sizes.size(1) != 2 || sizes.size(0) == 0) return {};
  const at::Tensor s = sizes.contiguous();
  const int64_t* p = s.data_ptr<int64_t>();
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < s.size(0); ++b) {
    if (p[2 * b + 1] != p[1]) return {};
    lengths.push_back(p[2 * b]);
  }
  *E = p[1];
  return lengths;
}

// Device indices of the real rows of a (B * L, E) padded view: b * L + j for j < lengths[b].
at::Tensor real_rows(const std::vector<int64_t>& lengths, int64_t L, const at::Device& device) {
  std::vector<int64_t> rows;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t j = 0; j < lengths[b]; ++j) rows.push_back(static_cast<int64_t>(b) * L + j);
  return at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The nested batch holding rows `rows` of padded (B, L, E), of the given host sizes (B, 2).
at::Tensor nested_from_rows(const at::Tensor& padded, const at::Tensor& sizes, const at::Tensor& rows) {
  const at::Tensor buffer = padded.reshape({-1, padded.size(2)}).index_select(0, rows).view({-1});
  return at::detail::make_tensor<at::native::NestedTensorImpl>(buffer, sizes);
}

// (B, L, E) filled with `padding`, the nested batch's rows at `rows`.
at::Tensor padded_from_rows(const at::Tensor& nested, int64_t B, int64_t L, int64_t E, const at::Tensor& rows,
                            double padding) {
  const at::Tensor buffer = at::native::get_nested_tensor_impl(nested)->get_buffer().view({-1, E});
  at::Tensor padded = at::full({B * L, E}, padding, buffer.options());
  padded.index_copy_(0, rows, buffer);
  return padded.view({B, L, E});
}

std::vector<int64_t> host_sizes_2d(const std::vector<int64_t>& lengths, int64_t E) {
  std::vector<int64_t> v;
  for (int64_t n : lengths) v.push_back(n), v.push_back(E);
  return v;
}

// _nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True) -> Tensor
// t (B, L, E), mask (B, L) true on real tokens, left-aligned. One host read of the mask.
at::Tensor nested_from_mask_ocl(const at::Tensor& t, const at::Tensor& mask, bool mask_check) {
  if (t.dim() != 3 || mask.dim() != 2 || mask.scalar_type() != at::kBool || mask.size(0) != t.size(0) ||
      mask.size(1) != t.size(1) || t.size(0) == 0)
    return at::native::NestedTensor_nested_tensor_from_mask(t, mask, mask_check);  // its checks and errors
  const int64_t B = t.size(0), L = t.size(1), E = t.size(2);
  const at::Tensor m = mask.to(at::kCPU).contiguous();
  const bool* p = m.data_ptr<bool>();
  std::vector<int64_t> lengths(B);
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = 0;
    while (n < L && p[b * L + n]) ++n;
    if (mask_check)
      for (int64_t j = n; j < L; ++j) TORCH_CHECK(!p[b * L + j], "Mask must be left-aligned without gaps");
    lengths[b] = n;
  }
  const at::Tensor sizes = at::tensor(host_sizes_2d(lengths, E), at::TensorOptions().dtype(at::kLong)).view({B, 2});
  return nested_from_rows(t, sizes, real_rows(lengths, L, t.device()));
}

// to_padded_tensor(Tensor self, float padding, SymInt[]? output_size=None) -> Tensor
at::Tensor to_padded_ocl(const at::Tensor& self, double padding, at::OptionalIntArrayRef output_size) {
  int64_t E = 0;
  const std::vector<int64_t> lengths = sequence_lengths(self, &E);
  if (lengths.empty()) return at::native::NestedTensor_to_padded_tensor_generic(self, padding, output_size);
  const int64_t B = static_cast<int64_t>(lengths.size());
  int64_t L = *std::max_element(lengths.begin(), lengths.end());
  if (output_size.has_value()) {
    const auto os = *output_size;
    TORCH_CHECK(os.size() == 3 && os[0] >= B && os[1] >= L && os[2] >= E,
                "Value in output_size is less than NestedTensor padded size. Truncation is not supported.");
    if (os[0] != B || os[2] != E)  // padding whole sequences or features too: the generic path
      return at::native::NestedTensor_to_padded_tensor_generic(self, padding, output_size);
    L = os[1];
  }
  return padded_from_rows(self, B, L, E, real_rows(lengths, L, self.device()), padding);
}

// _transformer_encoder_layer_fwd of a NestedTensor (nn.TransformerEncoder with a key padding
// mask): the layer on the padded batch with the padding as a key mask (the results of the
// dense path), then back to nested.
at::Tensor encoder_layer_nested_ocl(const at::Tensor& src, int64_t embed_dim, int64_t num_heads,
                                    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
                                    const at::Tensor& proj_weight, const at::Tensor& proj_bias, bool use_gelu,
                                    bool norm_first, double eps, const at::Tensor& norm_weight_1,
                                    const at::Tensor& norm_bias_1, const at::Tensor& norm_weight_2,
                                    const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
                                    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2,
                                    const at::Tensor& ffn_bias_2, const std::optional<at::Tensor>& mask,
                                    std::optional<int64_t> mask_type) {
  TORCH_CHECK(!(mask.has_value() && mask->defined()),
              "_transformer_encoder_layer_fwd: a mask with a nested input is not supported (as on the CPU)");
  int64_t E = 0;
  const std::vector<int64_t> lengths = sequence_lengths(src, &E);
  TORCH_CHECK(!lengths.empty(), "_transformer_encoder_layer_fwd: expected a nested batch of (length, ", embed_dim,
              ") sequences");
  const int64_t B = static_cast<int64_t>(lengths.size());
  const int64_t L = *std::max_element(lengths.begin(), lengths.end());
  const at::Tensor rows = real_rows(lengths, L, src.device());
  const at::Tensor padded = padded_from_rows(src, B, L, E, rows, 0.0);
  // The key mask: true on padding, every position but the real rows.
  const at::Tensor key_mask =
      at::ones({B * L}, src.options().dtype(at::kBool)).index_fill_(0, rows, false).view({B, L});
  const at::Tensor out = at::native::transformer_encoder_layer_forward(
      padded, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps,
      norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
      key_mask, /*mask_type=*/1);
  return nested_from_rows(out, at::native::get_nested_tensor_impl(src)->get_nested_sizes(), rows);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_native_multi_head_attention", native_mha_ocl);
  // ATen's dense composite (layer_norm, _native_multi_head_attention above, linear, gelu/relu).
  m.impl("_transformer_encoder_layer_fwd", at::native::transformer_encoder_layer_forward);
  // Nested batches from a mask by one gather (above); the other two are ATen's device-generic helpers.
  m.impl("_nested_tensor_from_mask", nested_from_mask_ocl);
  m.impl("_nested_tensor_from_mask_left_aligned", at::native::NestedTensor_nested_tensor_from_mask_left_aligned);
  m.impl("_nested_from_padded", at::native::nested_from_padded_generic);
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_transformer_encoder_layer_fwd", encoder_layer_nested_ocl);
  m.impl("to_padded_tensor", to_padded_ocl);
  // Copies between devices (.cpu(), .to("ocl")). Other nested-tensor ops (unbind and printing
  // included) are not registered for ocl and raise the dispatcher's NotImplementedError.
  m.impl("_to_copy", at::native::_to_copy_nested);
  m.impl("empty_like", at::native::empty_like_nested);
  m.impl("copy_", at::native::copy_nested_);
}

}  // namespace torch_ocl
