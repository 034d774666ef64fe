// The recurrent cells (kernels/rnn.cl) and the fused LSTM and GRU cell ops that nn.LSTMCell /
// nn.GRUCell (and ATen's per-step LSTM/GRU composite, for packed sequences and projections)
// call on every non-CPU device, with their backward ops. The gate matmuls run before these
// (native GEMM); each cell, forward or backward, is one launch (computing in float for 16-bit
// dtypes, as CUDA's kernels do), plus a column sum for the bias gradients. The launches are
// shared with the whole-sequence layers (rnn.h, rnn_sequence.cpp). The workspace layouts are
// private to the forward/backward pairs: LSTM [i, f, g, o] activated gates, (B, 4H); GRU
// [r, z, n, hx, hn], (B, 5H).
#include "rnn.h"
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

// The cell kernels' build options for dtype t (every tensor of the call has it; the ops check
// that the device supports it).
std::string cell_options(at::ScalarType t) {
  return "-DX_KIND=" + std::to_string(storage_kind(t, "rnn")) + (t == at::kDouble ? " -DACC=double" : "");
}

void check_same_dtype(const at::Tensor& t, at::ScalarType expected, const char* op, const char* name) {
  TORCH_CHECK(t.scalar_type() == expected, op, ": expected ", name, " of dtype ", expected, ", got ",
              t.scalar_type());
}

// An optional bias, checked to be (G * H,) of the gates' dtype; undefined when absent.
at::Tensor bias_arg(const c10::optional<at::Tensor>& b, const at::Tensor& gates, const char* op, const char* name) {
  if (!b.has_value() || !b->defined()) return at::Tensor();
  TORCH_CHECK(b->dim() == 1 && b->size(0) == gates.size(1), op, ": expected ", name, " of shape (",
              gates.size(1), "), got ", b->sizes());
  check_same_dtype(*b, gates.scalar_type(), op, name);
  return *b;
}

// A forward cell's inputs, checked: gates (B, G * H) and state (B, H) of one dtype, optional
// (G * H,) biases.
struct CellInputs {
  at::ScalarType dtype;
  at::Tensor ib, hb;
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

// A tensor the kernel does not read (its flag is 0): any buffer of the call's dtype.
const at::Tensor& or_dummy(const at::Tensor& t, const at::Tensor& dummy) { return t.defined() ? t : dummy; }
cl_int has(const at::Tensor& t) { return t.defined() ? 1 : 0; }
int64_t stride_or0(const at::Tensor& t, int d) { return t.defined() ? t.stride(d) : 0; }

}  // namespace

namespace rnn {

void lstm_cell_fwd(const at::Tensor& ig, const at::Tensor& hg, const at::Tensor& cx, const at::Tensor& ib,
                   const at::Tensor& hb, const at::Tensor& hy, const at::Tensor& cy, const at::Tensor& ws) {
  const int64_t B = cx.size(0), H = cx.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(cx);
  Kernel& k = get_kernel(d, "rnn", cell_options(cx.scalar_type()), "lstm_cell_fwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(ig), buf(hg), buf(cx), buf(or_dummy(ib, ig)),
         buf(or_dummy(hb, ig)), buf(hy), buf(cy), buf(ws), B, H, ig.stride(0), ig.stride(1), hg.stride(0),
         hg.stride(1), cx.stride(0), cx.stride(1), has(ib), stride_or0(ib, 0), has(hb), stride_or0(hb, 0),
         hy.stride(0));
}

void lstm_cell_bwd(const at::Tensor& ghy, const at::Tensor& ghy2, const at::Tensor& gcy, const at::Tensor& cx,
                   const at::Tensor& cy, const at::Tensor& ws, const at::Tensor& grad_gates, const at::Tensor& gcx) {
  const int64_t B = cx.size(0), H = cx.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(cx);
  Kernel& k = get_kernel(d, "rnn", cell_options(cx.scalar_type()), "lstm_cell_bwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(or_dummy(ghy, cx)), buf(or_dummy(gcy, cx)), buf(cx),
         buf(cy), buf(ws), buf(grad_gates), buf(gcx), B, H, has(ghy), stride_or0(ghy, 0), stride_or0(ghy, 1),
         has(gcy), stride_or0(gcy, 0), stride_or0(gcy, 1), cx.stride(0), cx.stride(1), cy.stride(0), cy.stride(1),
         ws.stride(0), ws.stride(1), buf(or_dummy(ghy2, cx)), has(ghy2));
}

void gru_cell_fwd(const at::Tensor& ig, const at::Tensor& hg, const at::Tensor& hx, const at::Tensor& ib,
                  const at::Tensor& hb, const at::Tensor& hy, const at::Tensor& ws) {
  const int64_t B = hx.size(0), H = hx.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(hx);
  Kernel& k = get_kernel(d, "rnn", cell_options(hx.scalar_type()), "gru_cell_fwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(ig), buf(hg), buf(hx), buf(or_dummy(ib, ig)),
         buf(or_dummy(hb, ig)), buf(hy), buf(ws), B, H, ig.stride(0), ig.stride(1), hg.stride(0), hg.stride(1),
         hx.stride(0), hx.stride(1), has(ib), stride_or0(ib, 0), has(hb), stride_or0(hb, 0), hy.stride(0));
}

void gru_cell_bwd(const at::Tensor& ghy, const at::Tensor& ghy2, const at::Tensor& ws, const at::Tensor& gig,
                  const at::Tensor& ghg, const at::Tensor& ghx) {
  const int64_t B = ghx.size(0), H = ghx.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(ws);
  Kernel& k = get_kernel(d, "rnn", cell_options(ws.scalar_type()), "gru_cell_bwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(or_dummy(ghy, ws)), buf(ws), buf(gig), buf(ghg), buf(ghx),
         B, H, stride_or0(ghy, 0), stride_or0(ghy, 1), ws.stride(0), ws.stride(1), has(ghy), buf(or_dummy(ghy2, ws)),
         has(ghy2));
}

void rnn_cell_fwd(const at::Tensor& ig, const at::Tensor& hg, const at::Tensor& ib, const at::Tensor& hb,
                  const at::Tensor& hy, bool relu) {
  const int64_t B = hy.size(0), H = hy.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(hy);
  Kernel& k = get_kernel(d, "rnn", cell_options(hy.scalar_type()), "rnn_cell_fwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(ig), buf(hg), buf(or_dummy(ib, ig)), buf(or_dummy(hb, ig)),
         buf(hy), B, H, ig.stride(0), ig.stride(1), hg.stride(0), hg.stride(1), has(ib), stride_or0(ib, 0), has(hb),
         stride_or0(hb, 0), hy.stride(0), cl_int(relu));
}

void rnn_cell_bwd(const at::Tensor& ghy, const at::Tensor& ghy2, const at::Tensor& hy, const at::Tensor& gpre,
                  bool relu) {
  const int64_t B = hy.size(0), H = hy.size(1);
  if (B * H == 0) return;
  Device& d = ocl_device(hy);
  Kernel& k = get_kernel(d, "rnn", cell_options(hy.scalar_type()), "rnn_cell_bwd");
  launch(d, k, grid_stride(B * H, kWG), Range(kWG), buf(or_dummy(ghy, hy)), buf(or_dummy(ghy2, hy)), buf(hy),
         buf(gpre), B, H, has(ghy), stride_or0(ghy, 0), stride_or0(ghy, 1), has(ghy2), hy.stride(0), cl_int(relu));
}

}  // namespace rnn

namespace {

at::Tensor opt(const c10::optional<at::Tensor>& t) { return t.has_value() ? *t : at::Tensor(); }

// _thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_ocl(const at::Tensor& input_gates,
                                                                   const at::Tensor& hidden_gates,
                                                                   const at::Tensor& cx,
                                                                   const c10::optional<at::Tensor>& input_bias,
                                                                   const c10::optional<at::Tensor>& hidden_bias) {
  const char* op = "_thnn_fused_lstm_cell";
  const CellInputs in = cell_inputs(input_gates, hidden_gates, cx, input_bias, hidden_bias, 4, op);
  check_dtype_supported(ocl_device(cx), in.dtype, op);
  const int64_t B = cx.size(0), H = cx.size(1);
  at::Tensor hy = at::empty({B, H}, cx.options()), cy = at::empty({B, H}, cx.options());
  at::Tensor ws = at::empty({B, 4 * H}, cx.options());
  rnn::lstm_cell_fwd(input_gates, hidden_gates, cx, in.ib, in.hb, hy, cy, ws);
  return {hy, cy, ws};
}

// _thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward_ocl(const c10::optional<at::Tensor>& grad_hy,
                                                                            const c10::optional<at::Tensor>& grad_cy,
                                                                            const at::Tensor& cx, const at::Tensor& cy,
                                                                            const at::Tensor& workspace,
                                                                            bool has_bias) {
  const char* op = "_thnn_fused_lstm_cell_backward";
  const at::Tensor ghy = opt(grad_hy), gcy = opt(grad_cy);
  if (!ghy.defined() && !gcy.defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
  check_gates(workspace, workspace, cx, 4, op);
  TORCH_CHECK(cy.sizes() == cx.sizes(), op, ": cy of shape ", cy.sizes(), " does not match cx of shape ",
              cx.sizes());
  const at::ScalarType t = cx.scalar_type();
  check_same_dtype(cy, t, op, "cy");
  check_same_dtype(workspace, t, op, "workspace");
  for (const at::Tensor* g : {&ghy, &gcy}) {
    if (!g->defined()) continue;
    TORCH_CHECK(g->sizes() == cx.sizes(), op, ": gradient of shape ", g->sizes(), " does not match state of shape ",
                cx.sizes());
    check_same_dtype(*g, t, op, "the gradients");
  }
  check_dtype_supported(ocl_device(cx), t, op);
  const int64_t B = cx.size(0), H = cx.size(1);
  at::Tensor grad_gates = at::empty({B, 4 * H}, cx.options()), grad_cx = at::empty({B, H}, cx.options());
  rnn::lstm_cell_bwd(ghy, at::Tensor(), gcy, cx, cy, workspace, grad_gates, grad_cx);
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
  check_dtype_supported(ocl_device(hx), in.dtype, op);
  const int64_t B = hx.size(0), H = hx.size(1);
  at::Tensor hy = at::empty({B, H}, hx.options()), ws = at::empty({B, 5 * H}, hx.options());
  rnn::gru_cell_fwd(input_gates, hidden_gates, hx, in.ib, in.hb, hy, ws);
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
  check_dtype_supported(ocl_device(grad_hy), t, op);
  const int64_t B = grad_hy.size(0), H = grad_hy.size(1);
  at::Tensor gig = at::empty({B, 3 * H}, grad_hy.options()), ghg = at::empty({B, 3 * H}, grad_hy.options());
  at::Tensor ghx = at::empty({B, H}, grad_hy.options());
  rnn::gru_cell_bwd(grad_hy, at::Tensor(), workspace, gig, ghg, ghx);
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
