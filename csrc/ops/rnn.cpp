// The fused LSTM and GRU cells that nn.LSTM / nn.GRU / nn.LSTMCell / nn.GRUCell call on every
// non-CPU device (ATen's RNN.cpp picks them for PrivateUse1 as for CUDA), with their backward
// ops. The gate matmuls run before these (native GEMM); the cell math here is device pointwise
// ops. The workspace layouts are private to this file's forward/backward pairs:
//   LSTM: [i, f, g, o] activated gates, (B, 4H);  GRU: [r, z, n, hx, hn], (B, 5H).
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

void check_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& h,
                 int64_t ngates, const char* op) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes(), op,
              ": expected input and hidden gates of the same shape (batch, ", ngates, " * hidden), got ",
              input_gates.sizes(), " and ", hidden_gates.sizes());
  TORCH_CHECK(h.dim() == 2 && h.size(0) == input_gates.size(0) && h.size(1) * ngates == input_gates.size(1), op,
              ": state of shape ", h.sizes(), " does not match gates of shape ", input_gates.sizes());
}

// input_gates + hidden_gates (+ the two biases, broadcast over the batch).
at::Tensor gate_sum(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                    const c10::optional<at::Tensor>& input_bias, const c10::optional<at::Tensor>& hidden_bias) {
  at::Tensor g = input_gates + hidden_gates;
  if (input_bias.has_value() && input_bias->defined()) g.add_(*input_bias);
  if (hidden_bias.has_value() && hidden_bias->defined()) g.add_(*hidden_bias);
  return g;
}

// _thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_ocl(const at::Tensor& input_gates,
                                                                   const at::Tensor& hidden_gates,
                                                                   const at::Tensor& cx,
                                                                   const c10::optional<at::Tensor>& input_bias,
                                                                   const c10::optional<at::Tensor>& hidden_bias) {
  check_gates(input_gates, hidden_gates, cx, 4, "_thnn_fused_lstm_cell");
  const auto ch = gate_sum(input_gates, hidden_gates, input_bias, hidden_bias).chunk(4, 1);
  const at::Tensor i = ch[0].sigmoid(), f = ch[1].sigmoid(), g = ch[2].tanh(), o = ch[3].sigmoid();
  at::Tensor cy = f * cx + i * g;
  at::Tensor hy = o * cy.tanh();
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

// _thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward_ocl(const c10::optional<at::Tensor>& grad_hy,
                                                                            const c10::optional<at::Tensor>& grad_cy,
                                                                            const at::Tensor& cx, const at::Tensor& cy,
                                                                            const at::Tensor& workspace,
                                                                            bool has_bias) {
  const bool has_ghy = grad_hy.has_value() && grad_hy->defined();
  const bool has_gcy = grad_cy.has_value() && grad_cy->defined();
  if (!has_ghy && !has_gcy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  const auto w = workspace.chunk(4, 1);
  const at::Tensor &i = w[0], &f = w[1], &g = w[2], &o = w[3];
  const at::Tensor tcy = cy.tanh();
  // d loss / d cy: through hy = o * tanh(cy), plus the incoming cell gradient.
  at::Tensor gcy = has_ghy ? *grad_hy * o * (1 - tcy * tcy) : at::zeros_like(cy);
  if (has_gcy) gcy.add_(*grad_cy);
  at::Tensor d_o = has_ghy ? *grad_hy * tcy * o * (1 - o) : at::zeros_like(o);
  at::Tensor d_i = gcy * g * i * (1 - i);
  at::Tensor d_f = gcy * cx * f * (1 - f);
  at::Tensor d_g = gcy * i * (1 - g * g);
  at::Tensor grad_gates = at::cat({d_i, d_f, d_g, d_o}, 1);
  at::Tensor grad_cx = gcy * f;
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

// _thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> fused_gru_cell_ocl(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                      const at::Tensor& hx,
                                                      const c10::optional<at::Tensor>& input_bias,
                                                      const c10::optional<at::Tensor>& hidden_bias) {
  check_gates(input_gates, hidden_gates, hx, 3, "_thnn_fused_gru_cell");
  at::Tensor ig = input_gates, hg = hidden_gates;
  if (input_bias.has_value() && input_bias->defined()) ig = ig + *input_bias;
  if (hidden_bias.has_value() && hidden_bias->defined()) hg = hg + *hidden_bias;
  const auto ic = ig.chunk(3, 1), hc = hg.chunk(3, 1);
  const at::Tensor r = (ic[0] + hc[0]).sigmoid(), z = (ic[1] + hc[1]).sigmoid();
  const at::Tensor& hn = hc[2];
  const at::Tensor n = (ic[2] + r * hn).tanh();
  at::Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hn}, 1)};
}

// _thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward_ocl(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  at::Tensor d_z = grad_hy * (hx - n) * z * (1 - z);
  at::Tensor grad_hx = grad_hy * z;
  at::Tensor d_n = grad_hy * (1 - z) * (1 - n * n);  // d loss / d (in + r * hn)
  at::Tensor d_hn = d_n * r;
  at::Tensor d_r = d_n * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({d_r, d_z, d_n}, 1);
  at::Tensor grad_hidden_gates = at::cat({d_r, d_z, d_hn}, 1);
  at::Tensor grad_input_bias = has_bias ? grad_input_gates.sum(0) : at::Tensor();
  at::Tensor grad_hidden_bias = has_bias ? grad_hidden_gates.sum(0) : at::Tensor();
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_thnn_fused_lstm_cell", fused_lstm_cell_ocl);
  OCL_IMPL(m, "_thnn_fused_lstm_cell_backward_impl", fused_lstm_cell_backward_ocl);
  OCL_IMPL(m, "_thnn_fused_gru_cell", fused_gru_cell_ocl);
  OCL_IMPL(m, "_thnn_fused_gru_cell_backward", fused_gru_cell_backward_ocl);
}

}  // namespace torch_ocl
