// The fused recurrent cells' launches (kernels/rnn.cl), shared by the cell ops (rnn.cpp) and
// the whole-sequence LSTM/GRU/RNN (rnn_sequence.cpp). Gate matrices are (B, G * H); hy is written
// through its row stride (unit column stride); cy, the workspaces and the gradients the
// backward cells write are contiguous: LSTM workspace (B, 4H), GRU (B, 5H). An absent optional
// tensor (bias, gradient) is an undefined at::Tensor. Callers check shapes and dtypes.
#pragma once
#include <ATen/core/Tensor.h>

namespace torch_ocl::rnn {

void lstm_cell_fwd(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
                   const at::Tensor& input_bias, const at::Tensor& hidden_bias, const at::Tensor& hy,
                   const at::Tensor& cy, const at::Tensor& workspace);
// hy's gradient is grad_hy (strided) + grad_hy2 (contiguous); either may be undefined.
void lstm_cell_bwd(const at::Tensor& grad_hy, const at::Tensor& grad_hy2, const at::Tensor& grad_cy,
                   const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace,
                   const at::Tensor& grad_gates, const at::Tensor& grad_cx);
void gru_cell_fwd(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
                  const at::Tensor& input_bias, const at::Tensor& hidden_bias, const at::Tensor& hy,
                  const at::Tensor& workspace);
void gru_cell_bwd(const at::Tensor& grad_hy, const at::Tensor& grad_hy2, const at::Tensor& workspace,
                  const at::Tensor& grad_input_gates, const at::Tensor& grad_hidden_gates, const at::Tensor& grad_hx);

// nn.RNN: hy = tanh or relu of (gates + biases), gates (B, H); grad_pre (B, H) from hy's
// gradient and hy.
void rnn_cell_fwd(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& input_bias,
                  const at::Tensor& hidden_bias, const at::Tensor& hy, bool relu);
void rnn_cell_bwd(const at::Tensor& grad_hy, const at::Tensor& grad_hy2, const at::Tensor& hy,
                  const at::Tensor& grad_pre, bool relu);

}  // namespace torch_ocl::rnn
