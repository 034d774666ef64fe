// The fused LSTM and GRU cells that nn.LSTM / nn.GRU / nn.LSTMCell / nn.GRUCell call on every
// non-CPU device (ATen's RNN.cpp picks them for PrivateUse1 as for CUDA), with their backward
// ops. The gate matmuls run before these (native GEMM); each cell, forward or backward, is one
// launch of kernels/rnn.cl (computing in float for 16-bit dtypes, as CUDA's kernels do), plus
// a column sum for the bias gradients. The workspace layouts are private to this file's
// forward/backward pairs: LSTM [i, f, g, o] activated gates, (B, 4H); GRU [r, z, n, hx, hn],
// (B, 5H).
#include "../aten/Routing.h"
#include "../runtime/Launch.h"
#include <ATen/ops/empty.h>
#include <ATen/ops/sum.h>
#include <torch/library.h>

#include <string>

namespace torch_ocl {
namespace {

constexpr size_t kWG = 256;

void check_gates(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& h,
                 int64_t ngates, const char* op) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes(), op,
              ": expected input and hidden gates of the same shape (batch, ", ngates, " * hidden), got ",
              input_gates.sizes(), " and ", hidden_gates.sizes());
  TORCH_CHECK(h.dim() == 2 && h.size(0) == input_gates.size(0) && h.size(1) * ngates == input_gates.size(1), op,
              ": state of shape ", h.sizes(), " does not match gates of shape ", input_gates.sizes());
}

// The cell kernels' build options for dtype t (every tensor of the call must have it).
std::string cell_options(Device& d, at::ScalarType t, const char* op) {
  check_dtype_supported(d, t, op);
  return "-DX_KIND=" + std::to_string(storage_kind(t, op)) + (t == at::kDouble ? " -DACC=double" : "");
}

void check_same_dtype(const at::Tensor& t, at::ScalarType expected, const char* op, const char* name) {
  TORCH_CHECK(t.scalar_type() == expected, op, ": expected ", name, " of dtype ", expected, ", got ",
              t.scalar_type());
}

// An optional bias: (gates, 1 if present, element stride); checked to be (G * H,).
struct Bias {
  at::Tensor t;
  int has = 0;
  int64_t stride = 0;
};
Bias bias_arg(const c10::optional<at::Tensor>& b, const at::Tensor& gates, const char* op, const char* name) {
  Bias r;
  r.t = gates;  // any buffer of the right dtype; the kernel does not read it without the flag
  if (!b.has_value() || !b->defined()) return r;
  TORCH_CHECK(b->dim() == 1 && b->size(0) == gates.size(1), op, ": expected ", name, " of shape (",
              gates.size(1), "), got ", b->sizes());
  check_same_dtype(*b, gates.scalar_type(), op, name);
  r.t = *b, r.has = 1, r.stride = b->stride(0);
  return r;
}

// A forward cell's inputs, checked: gates (B, G * H) and state (B, H) of one dtype, optional
// (G * H,) biases.
struct CellInputs {
  at::ScalarType dtype;
  Bias ib, hb;
};
CellInputs cell_inputs(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& state,
                       const c10::optional<at::Tensor>& input_bias, const c10::optional<at::Tensor>& hidden_bias,
                       int64_t ngates, const char* op) {
  check_gates(input_gates, hidden_gates, state, ngates, op);
  const at::ScalarType t = input_gates.scalar_type();
  check_same_dtype(hidden_gates, t, op, "hidden_gates");
  check_same_dtype(state, t, op, "the state");
  return {t, bias_arg(input_bias, input_gates, op, "input_bias"), bias_arg(hidden_bias, input_gates, op, "hidden_bias")};
}

// _thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_ocl(const at::Tensor& input_gates,
                                                                   const at::Tensor& hidden_gates,
                                                                   const at::Tensor& cx,
                                                                   const c10::optional<at::Tensor>& input_bias,
                                                                   const c10::optional<at::Tensor>& hidden_bias) {
  const char* op = "_thnn_fused_lstm_cell";
  const CellInputs in = cell_inputs(input_gates, hidden_gates, cx, input_bias, hidden_bias, 4, op);
  const at::ScalarType t = in.dtype;
  const Bias &ib = in.ib, &hb = in.hb;
  const int64_t B = cx.size(0), H = cx.size(1);
  at::Tensor hy = at::empty({B, H}, cx.options()), cy = at::empty({B, H}, cx.options());
  at::Tensor ws = at::empty({B, 4 * H}, cx.options());
  if (B * H == 0) return {hy, cy, ws};
  Device& d = ocl_device(cx);
  Kernel& k = get_kernel(d, "rnn", cell_options(d, t, op), "lstm_cell_fwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(input_gates), buf(hidden_gates), buf(cx), buf(ib.t),
         buf(hb.t), buf(hy), buf(cy), buf(ws), B, H, input_gates.stride(0), input_gates.stride(1),
         hidden_gates.stride(0), hidden_gates.stride(1), cx.stride(0), cx.stride(1), cl_int(ib.has), ib.stride,
         cl_int(hb.has), hb.stride);
  return {hy, cy, ws};
}

// _thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward_ocl(const c10::optional<at::Tensor>& grad_hy,
                                                                            const c10::optional<at::Tensor>& grad_cy,
                                                                            const at::Tensor& cx, const at::Tensor& cy,
                                                                            const at::Tensor& workspace,
                                                                            bool has_bias) {
  const char* op = "_thnn_fused_lstm_cell_backward";
  const bool has_ghy = grad_hy.has_value() && grad_hy->defined();
  const bool has_gcy = grad_cy.has_value() && grad_cy->defined();
  if (!has_ghy && !has_gcy) return {at::Tensor(), at::Tensor(), at::Tensor()};
  check_gates(workspace, workspace, cx, 4, op);
  TORCH_CHECK(cy.sizes() == cx.sizes(), op, ": cy of shape ", cy.sizes(), " does not match cx of shape ",
              cx.sizes());
  const at::ScalarType t = cx.scalar_type();
  check_same_dtype(cy, t, op, "cy");
  check_same_dtype(workspace, t, op, "workspace");
  for (const c10::optional<at::Tensor>* g : {&grad_hy, &grad_cy}) {
    if (!g->has_value() || !(*g)->defined()) continue;
    TORCH_CHECK((*g)->sizes() == cx.sizes(), op, ": gradient of shape ", (*g)->sizes(), " does not match state of shape ",
                cx.sizes());
    check_same_dtype(**g, t, op, "the gradients");
  }
  const int64_t B = cx.size(0), H = cx.size(1);
  at::Tensor grad_gates = at::empty({B, 4 * H}, cx.options()), grad_cx = at::empty({B, H}, cx.options());
  if (B * H > 0) {
    const at::Tensor& ghy = has_ghy ? *grad_hy : cx;  // not read without its flag
    const at::Tensor& gcy = has_gcy ? *grad_cy : cx;
    Device& d = ocl_device(cx);
    Kernel& k = get_kernel(d, "rnn", cell_options(d, t, op), "lstm_cell_bwd");
    launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(ghy), buf(gcy), buf(cx), buf(cy), buf(workspace),
           buf(grad_gates), buf(grad_cx), B, H, cl_int(has_ghy), ghy.stride(0), ghy.stride(1), cl_int(has_gcy),
           gcy.stride(0), gcy.stride(1), cx.stride(0), cx.stride(1), cy.stride(0), cy.stride(1), workspace.stride(0),
           workspace.stride(1));
  }
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

// _thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor> fused_gru_cell_ocl(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                                                      const at::Tensor& hx,
                                                      const c10::optional<at::Tensor>& input_bias,
                                                      const c10::optional<at::Tensor>& hidden_bias) {
  const char* op = "_thnn_fused_gru_cell";
  const CellInputs in = cell_inputs(input_gates, hidden_gates, hx, input_bias, hidden_bias, 3, op);
  const at::ScalarType t = in.dtype;
  const Bias &ib = in.ib, &hb = in.hb;
  const int64_t B = hx.size(0), H = hx.size(1);
  at::Tensor hy = at::empty({B, H}, hx.options()), ws = at::empty({B, 5 * H}, hx.options());
  if (B * H == 0) return {hy, ws};
  Device& d = ocl_device(hx);
  Kernel& k = get_kernel(d, "rnn", cell_options(d, t, op), "gru_cell_fwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(input_gates), buf(hidden_gates), buf(hx), buf(ib.t),
         buf(hb.t), buf(hy), buf(ws), B, H, input_gates.stride(0), input_gates.stride(1), hidden_gates.stride(0),
         hidden_gates.stride(1), hx.stride(0), hx.stride(1), cl_int(ib.has), ib.stride, cl_int(hb.has), hb.stride);
  return {hy, ws};
}

// _thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward_ocl(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const char* op = "_thnn_fused_gru_cell_backward";
  TORCH_CHECK(grad_hy.dim() == 2 && workspace.dim() == 2 && workspace.size(0) == grad_hy.size(0) &&
                  workspace.size(1) == 5 * grad_hy.size(1),
              op, ": workspace of shape ", workspace.sizes(), " does not match grad_hy of shape ", grad_hy.sizes());
  const at::ScalarType t = grad_hy.scalar_type();
  check_same_dtype(workspace, t, op, "workspace");
  const int64_t B = grad_hy.size(0), H = grad_hy.size(1);
  at::Tensor gig = at::empty({B, 3 * H}, grad_hy.options()), ghg = at::empty({B, 3 * H}, grad_hy.options());
  at::Tensor ghx = at::empty({B, H}, grad_hy.options());
  if (B * H > 0) {
    Device& d = ocl_device(grad_hy);
    Kernel& k = get_kernel(d, "rnn", cell_options(d, t, op), "gru_cell_bwd");
    launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(grad_hy), buf(workspace), buf(gig), buf(ghg), buf(ghx), B,
           H, grad_hy.stride(0), grad_hy.stride(1), workspace.stride(0), workspace.stride(1));
  }
  at::Tensor gib = has_bias ? gig.sum(0) : at::Tensor();
  at::Tensor ghb = has_bias ? ghg.sum(0) : at::Tensor();
  return {gig, ghg, ghx, gib, ghb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_IMPL(m, "_thnn_fused_lstm_cell", fused_lstm_cell_ocl);
  OCL_IMPL(m, "_thnn_fused_lstm_cell_backward_impl", fused_lstm_cell_backward_ocl);
  OCL_IMPL(m, "_thnn_fused_gru_cell", fused_gru_cell_ocl);
  OCL_IMPL(m, "_thnn_fused_gru_cell_backward", fused_gru_cell_backward_ocl);
}

}  // namespace torch_ocl
