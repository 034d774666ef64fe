// nn.LSTM, nn.GRU and nn.RNN over whole sequences (aten::lstm.input, gru.input, rnn_tanh.input,
// rnn_relu.input), as cuDNN runs them on CUDA. ATen's composite runs every step of every layer
// as two nn.Linear products and a cell, and autograd records each of them: about 18 launches
// per step forward and backward, each with its own host cost, and a weight gradient summed
// step by step. Here, per layer and direction:
//   forward:  one product for every step's input gates (X W_ihᵀ), then per step one product
//             (h W_hhᵀ) and one cell launch (ops/rnn.h) writing h into the layer's output;
//   backward: per step one cell launch (hy's gradient = the output's plus the recurrent term)
//             and one product (the recurrent term of the step before), then one product each
//             for dW_ih, dW_hh and the layer input's gradient, one sum per bias.
// Registered for AutogradPrivateUse1 (a custom autograd Function) and PrivateUse1 (inference
// mode). Whatever the sequence path does not take goes to ATen's composite, so the results,
// gradients and errors are the CPU's: projections (proj_size), packed sequences (the other
// overloads), inputs other than 3-D, empty sequences or batches, dtypes other than floating
// point or mixed ones, tensors on another device, dropout of 1, forward AD and functorch.
// Double backward (create_graph) recomputes the layers through the composite, which raises
// for dropout between layers in training (the masks are not reproducible).
#include "rnn.h"
#include "../runtime/Launch.h"
#include <ATen/FuncTorchTLS.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gru_native.h>
#include <ATen/ops/lstm_native.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/native_dropout.h>
#include <ATen/ops/native_dropout_backward.h>
#include <ATen/ops/rnn_relu_native.h>
#include <ATen/ops/rnn_tanh_native.h>
#include <ATen/ops/sum.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <vector>

namespace torch_ocl {
namespace {

using torch::autograd::variable_list;

enum class Kind { LSTM, GRU, RNN_TANH, RNN_RELU };

const char* name(Kind k) {
  switch (k) {
    case Kind::LSTM: return "lstm";
    case Kind::GRU: return "gru";
    case Kind::RNN_TANH: return "rnn_tanh";
    default: return "rnn_relu";
  }
}

struct Config {
  Kind kind;
  bool has_biases;
  int64_t layers;
  double dropout;
  bool train;
  bool bidirectional;
  bool batch_first;

  int64_t dirs() const { return bidirectional ? 2 : 1; }
  int64_t gates() const { return kind == Kind::LSTM ? 4 : kind == Kind::GRU ? 3 : 1; }
  // Workspace columns per hidden unit (kernels/rnn.cl); nn.RNN's backward reads hy instead.
  int64_t workspace() const { return kind == Kind::LSTM ? 4 : kind == Kind::GRU ? 5 : 0; }
  bool relu() const { return kind == Kind::RNN_RELU; }
  int64_t per_cell() const { return has_biases ? 4 : 2; }  // params of one layer and direction
  bool drops() const { return train && dropout > 0 && layers > 1; }
  // The Function's inputs: input, h0, (c0), params.
  int64_t first_param() const { return kind == Kind::LSTM ? 3 : 2; }
  // Per layer in a trace: the layer's input, its output, the dropout mask, and per direction
  // the cell states (LSTM) and the workspaces.
  int64_t trace_stride() const { return 3 + 2 * dirs(); }
};

struct Weights {
  at::Tensor w_ih, w_hh, b_ih, b_hh;  // biases undefined without has_biases
};
Weights weights(at::TensorList params, const Config& c, int64_t l, int64_t d) {
  const size_t i = static_cast<size_t>((l * c.dirs() + d) * c.per_cell());
  Weights w{params[i], params[i + 1], at::Tensor(), at::Tensor()};
  if (c.has_biases) w.b_ih = params[i + 2], w.b_hh = params[i + 3];
  return w;
}

bool same_kind(const at::Tensor& t, const at::Tensor& like) {
  return t.defined() && t.device() == like.device() && t.scalar_type() == like.scalar_type() &&
         t.layout() == at::kStrided;
}

bool has_shape(const at::Tensor& t, at::IntArrayRef shape) { return t.sizes() == shape; }

// Whether the sequence path takes the call (otherwise ATen's composite runs it). c0 is
// undefined for a GRU.
bool takes(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
           at::TensorList params) {
  if (input.device().type() != c10::DeviceType::PrivateUse1 || input.layout() != at::kStrided ||
      input.dim() != 3)
    return false;
  const at::ScalarType t = input.scalar_type();
  if (t != at::kFloat && t != at::kDouble && t != at::kHalf && t != at::kBFloat16) return false;
  if (c.layers < 1 || !(c.dropout >= 0 && c.dropout < 1)) return false;
  if (static_cast<int64_t>(params.size()) != c.layers * c.dirs() * c.per_cell()) return false;
  const int64_t T = input.size(c.batch_first ? 1 : 0), B = input.size(c.batch_first ? 0 : 1);
  const int64_t I = input.size(2);
  if (T == 0 || B == 0 || I == 0 || !same_kind(h0, input) || h0.dim() != 3) return false;
  const int64_t H = h0.size(2), LD = c.layers * c.dirs();
  if (H == 0 || !has_shape(h0, {LD, B, H})) return false;
  if (c.kind == Kind::LSTM && !(same_kind(c0, input) && has_shape(c0, {LD, B, H}))) return false;
  const int64_t GH = c.gates() * H;
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t d = 0; d < c.dirs(); ++d) {
      const Weights w = weights(params, c, l, d);
      if (!same_kind(w.w_ih, input) || !has_shape(w.w_ih, {GH, l == 0 ? I : c.dirs() * H})) return false;
      if (!same_kind(w.w_hh, input) || !has_shape(w.w_hh, {GH, H})) return false;
      if (c.has_biases && !(same_kind(w.b_ih, input) && has_shape(w.b_ih, {GH}) && same_kind(w.b_hh, input) &&
                            has_shape(w.b_hh, {GH})))
        return false;
    }
  return true;
}

// Forward AD and functorch transforms need the composite's ops.
bool composite_needed_for_autograd(at::TensorList vars) {
  if (at::functorch::functorchTLSAccessor() != nullptr) return true;
  for (const at::Tensor& v : vars)
    if (v._fw_grad(/*level=*/0).defined()) return true;
  return false;
}

struct Result {
  at::Tensor output, hn, cn;  // cn undefined for a GRU
};

// The forward pass over every layer and direction. With trace, appends per layer: the layer's
// input (T, B, I_l) contiguous, its output (T, B, D * H), the dropout mask applied to that
// output (undefined without), then per direction the cell states (T, B, H) (LSTM only) and
// the workspaces (T, B, 4H or 5H; none for nn.RNN). Undefined entries keep the layout fixed.
Result run_forward(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
                   at::TensorList params, std::vector<at::Tensor>* trace) {
  check_dtype_supported(ocl_device(input), input.scalar_type(), name(c.kind));
  const bool lstm = c.kind == Kind::LSTM;
  at::Tensor x = (c.batch_first ? input.transpose(0, 1) : input).contiguous();
  const int64_t T = x.size(0), B = x.size(1), H = h0.size(2), D = c.dirs(), GH = c.gates() * H;
  const auto opts = input.options();
  Result r;
  r.hn = at::empty({c.layers * D, B, H}, opts);
  if (lstm) r.cn = at::empty({c.layers * D, B, H}, opts);
  at::Tensor layer_in = x;
  for (int64_t l = 0; l < c.layers; ++l) {
    at::Tensor out = at::empty({T, B, D * H}, opts);
    std::vector<at::Tensor> per_dir;
    for (int64_t d = 0; d < D; ++d) {
      const Weights w = weights(params, c, l, d);
      const int64_t idx = l * D + d;
      const at::Tensor gx = at::mm(layer_in.view({T * B, layer_in.size(2)}), w.w_ih.t()).view({T, B, GH});
      const at::Tensor hd = out.narrow(2, d * H, H);
      const at::Tensor cs = lstm ? at::empty({T, B, H}, opts) : at::Tensor();
      const at::Tensor ws = c.workspace() ? at::empty({T, B, c.workspace() * H}, opts) : at::Tensor();
      at::Tensor hg = at::empty({B, GH}, opts);
      const at::Tensor w_hh_t = w.w_hh.t();
      at::Tensor h = h0.select(0, idx), cell = lstm ? c0.select(0, idx) : at::Tensor();
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s;
        at::mm_out(hg, h, w_hh_t);
        if (lstm) {
          rnn::lstm_cell_fwd(gx.select(0, t), hg, cell, w.b_ih, w.b_hh, hd.select(0, t), cs.select(0, t),
                             ws.select(0, t));
          cell = cs.select(0, t);
        } else if (c.kind == Kind::GRU) {
          rnn::gru_cell_fwd(gx.select(0, t), hg, h, w.b_ih, w.b_hh, hd.select(0, t), ws.select(0, t));
        } else {
          rnn::rnn_cell_fwd(gx.select(0, t), hg, w.b_ih, w.b_hh, hd.select(0, t), c.relu());
        }
        h = hd.select(0, t);
      }
      r.hn.select(0, idx).copy_(h);
      if (lstm) r.cn.select(0, idx).copy_(cell);
      per_dir.push_back(cs);
      per_dir.push_back(ws);
    }
    at::Tensor mask;
    at::Tensor next = out;
    if (c.drops() && l + 1 < c.layers) std::tie(next, mask) = at::native_dropout(out, c.dropout, true);
    if (trace) {
      trace->insert(trace->end(), {layer_in, out, mask});
      trace->insert(trace->end(), per_dir.begin(), per_dir.end());
    }
    layer_in = next;
  }
  r.output = c.batch_first ? layer_in.transpose(0, 1) : layer_in;
  return r;
}

struct Grads {
  at::Tensor input, h0, c0;
  std::vector<at::Tensor> params;
};

// The backward pass. trace is run_forward's (the last layer's output may be the returned
// output, transposed for batch_first); grad_output, grad_hn, grad_cn may be undefined.
// need_input / need_params say which gradients to compute (h0's and c0's always are).
Grads run_backward(const Config& c, const at::Tensor& h0, const at::Tensor& c0, at::TensorList params,
                   const std::vector<at::Tensor>& trace, const at::Tensor& grad_output, const at::Tensor& grad_hn,
                   const at::Tensor& grad_cn, bool need_input, const std::vector<bool>& need_params) {
  const bool lstm = c.kind == Kind::LSTM, gru = c.kind == Kind::GRU;
  const int64_t D = c.dirs(), S = c.trace_stride(), H = h0.size(2), GH = c.gates() * H;
  const at::Tensor& x0 = trace[0];
  const int64_t T = x0.size(0), B = x0.size(1);
  const auto opts = h0.options();
  Grads g;
  g.h0 = at::empty_like(h0, at::MemoryFormat::Contiguous);
  if (lstm) g.c0 = at::empty_like(c0, at::MemoryFormat::Contiguous);
  g.params.resize(params.size());
  at::Tensor d_out;  // gradient of layer l's output, (T, B, D * H), or undefined
  if (grad_output.defined()) d_out = c.batch_first ? grad_output.transpose(0, 1) : grad_output;
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const at::Tensor& x = trace[l * S];
    const at::Tensor out = l + 1 == c.layers && c.batch_first ? trace[l * S + 1].transpose(0, 1) : trace[l * S + 1];
    const int64_t I = x.size(2);
    const at::Tensor xf = x.view({T * B, I});
    const bool need_dx = l > 0 || need_input;
    at::Tensor dx;
    for (int64_t d = 0; d < D; ++d) {
      const Weights w = weights(params, c, l, d);
      const int64_t idx = l * D + d;
      const at::Tensor& cs = trace[l * S + 3 + 2 * d];
      const at::Tensor& ws = trace[l * S + 4 + 2 * d];
      const at::Tensor hd = out.narrow(2, d * H, H);
      const at::Tensor dhd = d_out.defined() ? d_out.narrow(2, d * H, H) : at::Tensor();
      const at::Tensor h_init = h0.select(0, idx);
      const at::Tensor dg = at::empty({T, B, GH}, opts);                         // input gates
      const at::Tensor dgh = gru ? at::empty({T, B, GH}, opts) : dg;             // hidden gates
      const at::Tensor ghx = gru ? at::empty({B, H}, opts) : at::Tensor();       // GRU's direct term
      at::Tensor rec = g.h0.select(0, idx);                                           // recurrent term
      const at::Tensor dcell = lstm ? g.c0.select(0, idx) : at::Tensor();
      at::Tensor rec_in = grad_hn.defined() ? grad_hn.select(0, idx).contiguous() : at::Tensor();
      at::Tensor dcell_in = lstm && grad_cn.defined() ? grad_cn.select(0, idx) : at::Tensor();
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? T - 1 - s : s;  // the forward's steps, last first
        const bool first = d == 0 ? t == 0 : t == T - 1;
        const int64_t prev = d == 0 ? t - 1 : t + 1;
        const at::Tensor ghy = dhd.defined() ? dhd.select(0, t) : at::Tensor();
        if (lstm) {
          const at::Tensor cx = first ? c0.select(0, idx) : cs.select(0, prev);
          rnn::lstm_cell_bwd(ghy, rec_in, dcell_in, cx, cs.select(0, t), ws.select(0, t), dg.select(0, t), dcell);
          at::mm_out(rec, dg.select(0, t), w.w_hh);
          dcell_in = dcell;
        } else if (gru) {
          rnn::gru_cell_bwd(ghy, rec_in, ws.select(0, t), dg.select(0, t), dgh.select(0, t), ghx);
          at::addmm_out(rec, ghx, dgh.select(0, t), w.w_hh);
        } else {
          rnn::rnn_cell_bwd(ghy, rec_in, hd.select(0, t), dg.select(0, t), c.relu());
          at::mm_out(rec, dg.select(0, t), w.w_hh);
        }
        rec_in = rec;
      }
      const size_t p = static_cast<size_t>(idx * c.per_cell());
      const at::Tensor dgf = dg.view({T * B, GH}), dghf = dgh.view({T * B, GH});
      if (need_params[p]) g.params[p] = at::mm(dgf.t(), xf);
      if (need_params[p + 1]) {
        // Σ_t dgh[t]ᵀ h_prev(t): h_prev is h0 for the forward's first step, else the output of
        // the step before it.
        const int64_t first = d == 0 ? 0 : T - 1;
        at::Tensor dw = at::mm(dgh.select(0, first).t(), h_init);
        if (T > 1) {
          const at::Tensor a = dgh.narrow(0, d == 0 ? 1 : 0, T - 1).reshape({(T - 1) * B, GH});
          const at::Tensor hp = hd.narrow(0, d == 0 ? 0 : 1, T - 1).reshape({(T - 1) * B, H});
          dw.addmm_(a.t(), hp);
        }
        g.params[p + 1] = dw;
      }
      if (c.has_biases && (need_params[p + 2] || need_params[p + 3])) {
        g.params[p + 2] = dgf.sum(0);
        g.params[p + 3] = gru ? dghf.sum(0) : g.params[p + 2].clone();
      }
      if (need_dx) dx = d == 0 ? at::mm(dgf, w.w_ih) : dx.addmm_(dgf, w.w_ih);
    }
    if (!need_dx) continue;
    const at::Tensor dxv = dx.view({T, B, I});
    if (l == 0) {
      g.input = c.batch_first ? dxv.transpose(0, 1) : dxv;
    } else {
      const at::Tensor& mask = trace[(l - 1) * S + 2];  // the dropout applied to the layer below's output
      d_out = mask.defined() ? at::native_dropout_backward(dxv, mask, 1.0 / (1.0 - c.dropout)) : dxv;
    }
  }
  return g;
}

std::vector<at::Tensor> function_inputs(const Config& c, const at::Tensor& input, const at::Tensor& h0,
                                        const at::Tensor& c0, at::TensorList params) {
  std::vector<at::Tensor> v{input, h0};
  if (c.kind == Kind::LSTM) v.push_back(c0);
  v.insert(v.end(), params.begin(), params.end());
  return v;
}

using GruOut = std::tuple<at::Tensor, at::Tensor>;
using GruFn = GruOut (*)(const at::Tensor&, const at::Tensor&, at::TensorList, bool, int64_t, double, bool, bool, bool);

// ATen's composite of a one-state kind (GRU, nn.RNN).
GruFn composite(Kind k) {
  return k == Kind::GRU ? GruFn(&at::native::gru)
                        : k == Kind::RNN_TANH ? GruFn(&at::native::rnn_tanh) : GruFn(&at::native::rnn_relu);
}

// The autograd node: saves the Function's inputs and run_forward's trace (the last layer's
// output as the returned output, so that modifying it in place is caught).
struct RnnFunction : public torch::autograd::Function<RnnFunction> {
  static variable_list forward(torch::autograd::AutogradContext* ctx, at::TensorList vars, const Config& c) {
    at::AutoDispatchBelowADInplaceOrView below;
    const bool lstm = c.kind == Kind::LSTM;
    const at::Tensor& input = vars[0];
    const at::Tensor& h0 = vars[1];
    const at::Tensor c0 = lstm ? vars[2] : at::Tensor();
    const at::TensorList params = vars.slice(static_cast<size_t>(c.first_param()));
    std::vector<at::Tensor> trace;
    Result r = run_forward(c, input, h0, c0, params, &trace);
    trace[(c.layers - 1) * c.trace_stride() + 1] = r.output;
    std::vector<at::Tensor> saved(vars.begin(), vars.end());
    saved.insert(saved.end(), trace.begin(), trace.end());
    ctx->save_for_backward(saved);
    ctx->set_materialize_grads(false);
    ctx->saved_data["kind"] = static_cast<int64_t>(c.kind);
    ctx->saved_data["has_biases"] = c.has_biases;
    ctx->saved_data["layers"] = c.layers;
    ctx->saved_data["dropout"] = c.dropout;
    ctx->saved_data["train"] = c.train;
    ctx->saved_data["bidirectional"] = c.bidirectional;
    ctx->saved_data["batch_first"] = c.batch_first;
    if (lstm) return {r.output, r.hn, r.cn};
    return {r.output, r.hn};
  }

  static variable_list backward(torch::autograd::AutogradContext* ctx, variable_list grads) {
    Config c;
    c.kind = static_cast<Kind>(ctx->saved_data["kind"].toInt());
    c.has_biases = ctx->saved_data["has_biases"].toBool();
    c.layers = ctx->saved_data["layers"].toInt();
    c.dropout = ctx->saved_data["dropout"].toDouble();
    c.train = ctx->saved_data["train"].toBool();
    c.bidirectional = ctx->saved_data["bidirectional"].toBool();
    c.batch_first = ctx->saved_data["batch_first"].toBool();
    const bool lstm = c.kind == Kind::LSTM;
    const variable_list saved = ctx->get_saved_variables();
    const size_t n_vars = static_cast<size_t>(c.first_param() + c.layers * c.dirs() * c.per_cell());
    const std::vector<at::Tensor> vars(saved.begin(), saved.begin() + n_vars);
    const std::vector<at::Tensor> trace(saved.begin() + n_vars, saved.end());
    const at::Tensor& h0 = vars[1];
    const at::Tensor c0 = lstm ? vars[2] : at::Tensor();
    const at::TensorList params = at::TensorList(vars).slice(static_cast<size_t>(c.first_param()));
    variable_list result(n_vars + 1);  // the Config's slot stays undefined
    if (at::GradMode::is_enabled()) {
      // create_graph=True: gradients that are themselves differentiable, from ATen's composite.
      TORCH_CHECK_NOT_IMPLEMENTED(!c.drops(), name(c.kind),
                                  ": double backward with dropout between layers in training is not supported "
                                  "on ocl (the dropout masks cannot be reproduced)");
      variable_list outs;
      if (lstm) {
        auto o = at::native::lstm(vars[0], {h0, c0}, params, c.has_biases, c.layers, c.dropout, c.train,
                                  c.bidirectional, c.batch_first);
        outs = {std::get<0>(o), std::get<1>(o), std::get<2>(o)};
      } else {
        auto o = composite(c.kind)(vars[0], h0, params, c.has_biases, c.layers, c.dropout, c.train, c.bidirectional,
                                   c.batch_first);
        outs = {std::get<0>(o), std::get<1>(o)};
      }
      variable_list ys, gys, xs;
      std::vector<size_t> where;
      for (size_t i = 0; i < outs.size(); ++i)
        if (grads[i].defined()) ys.push_back(outs[i]), gys.push_back(grads[i]);
      for (size_t i = 0; i < n_vars; ++i)
        if (ctx->needs_input_grad(i)) xs.push_back(vars[i]), where.push_back(i);
      if (ys.empty() || xs.empty()) return result;
      const variable_list gx = torch::autograd::grad(ys, xs, gys, /*retain_graph=*/true, /*create_graph=*/true,
                                                     /*allow_unused=*/true);
      for (size_t i = 0; i < where.size(); ++i) result[where[i]] = gx[i];
      return result;
    }
    std::vector<bool> need_params;
    for (size_t i = static_cast<size_t>(c.first_param()); i < n_vars; ++i)
      need_params.push_back(ctx->needs_input_grad(i));
    Grads g = run_backward(c, h0, c0, params, trace, grads[0], grads[1], lstm ? grads[2] : at::Tensor(),
                           ctx->needs_input_grad(0), need_params);
    result[0] = g.input;
    result[1] = g.h0;
    if (lstm) result[2] = g.c0;
    for (size_t i = 0; i < g.params.size(); ++i) result[static_cast<size_t>(c.first_param()) + i] = g.params[i];
    return result;
  }
};

Config config(Kind kind, bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional,
              bool batch_first) {
  return Config{kind, has_biases, num_layers, dropout, train, bidirectional, batch_first};
}

// The sequence path for a call it takes, below or above autograd: the Function when a gradient
// is wanted, the bare forward otherwise.
variable_list sequence(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
                       at::TensorList params, bool autograd) {
  const std::vector<at::Tensor> vars = function_inputs(c, input, h0, c0, params);
  bool wants_grad = false;
  if (autograd && at::GradMode::is_enabled())
    for (const at::Tensor& v : vars) wants_grad = wants_grad || v.requires_grad();
  if (wants_grad) return RnnFunction::apply(at::TensorList(vars), c);
  at::AutoDispatchBelowADInplaceOrView below;
  Result r = run_forward(c, input, h0, c0, params, nullptr);
  if (c.kind == Kind::LSTM) return {r.output, r.hn, r.cn};
  return {r.output, r.hn};
}

using LstmOut = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
template <bool Autograd>
LstmOut lstm_ocl(const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
                 int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const Config c = config(Kind::LSTM, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  bool ok = hx.size() == 2 && takes(c, input, hx[0], hx[1], params);
  if (ok && Autograd) ok = !composite_needed_for_autograd(function_inputs(c, input, hx[0], hx[1], params));
  if (!ok) return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  const variable_list o = sequence(c, input, hx[0], hx[1], params, Autograd);
  return {o[0], o[1], o[2]};
}

// gru.input / rnn_tanh.input / rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
template <Kind K, bool Autograd>
GruOut one_state_ocl(const at::Tensor& input, const at::Tensor& hx, at::TensorList params, bool has_biases,
                     int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const Config c = config(K, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  bool ok = takes(c, input, hx, at::Tensor(), params);
  if (ok && Autograd) ok = !composite_needed_for_autograd(function_inputs(c, input, hx, at::Tensor(), params));
  if (!ok) return composite(K)(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  const variable_list o = sequence(c, input, hx, at::Tensor(), params, Autograd);
  return {o[0], o[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("lstm.input", lstm_ocl<false>);
  m.impl("gru.input", one_state_ocl<Kind::GRU, false>);
  m.impl("rnn_tanh.input", one_state_ocl<Kind::RNN_TANH, false>);
  m.impl("rnn_relu.input", one_state_ocl<Kind::RNN_RELU, false>);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("lstm.input", lstm_ocl<true>);
  m.impl("gru.input", one_state_ocl<Kind::GRU, true>);
  m.impl("rnn_tanh.input", one_state_ocl<Kind::RNN_TANH, true>);
  m.impl("rnn_relu.input", one_state_ocl<Kind::RNN_RELU, true>);
}

}  // namespace torch_ocl
