// nn.LSTM, nn.GRU and nn.RNN over whole sequences, padded or packed (aten::lstm / gru /
// rnn_tanh / rnn_relu, .input and .data), as cuDNN runs them on CUDA. ATen's composite runs
// every step of every layer as two nn.Linear products and a cell, and autograd records each of
// them: about 18 launches per step forward and backward, each with its own host cost, and a
// weight gradient summed step by step. Here, per layer and direction, in the packed layout
// (step t = bs[t] rows; a padded input is the case of equal batch sizes):
//   forward:  one product for every step's input gates (X W_ihᵀ), then per step one product
//             (h W_hhᵀ) and one cell launch (ops/rnn.h) writing h into the layer's output;
//   backward: per step one cell launch (hy's gradient = the output's plus the recurrent term)
//             and one product (the recurrent term of the step before), then one product each
//             for dW_ih, dW_hh (on a gather of every step's starting h) and the layer input's
//             gradient, one sum per bias.
// Where a packed batch shrinks, the rows that stop take their final states (forward direction),
// or, going backwards in time, rows that start begin from the initial state (reverse; the
// mixed starting state is copied together, a few launches per distinct length).
// Registered for AutogradPrivateUse1 (a custom autograd Function) and PrivateUse1 (inference
// mode). Whatever the sequence path does not take goes to ATen's composite, so the results,
// gradients and errors are the CPU's: projections (proj_size), inputs other than 3-D (2-D
// packed), empty sequences or batches, malformed batch sizes, dtypes other than floating point
// or mixed ones, tensors on another device, dropout of 1, forward AD and functorch. Double
// backward (create_graph) recomputes the layers through the composite, which raises for dropout
// between layers in training (the masks are not reproducible).
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
#include <ATen/ops/cat.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tensor.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <optional>
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
  std::vector<int64_t> batch_sizes;  // a PackedSequence's (the .data overloads); empty for padded input

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
// undefined for a GRU / nn.RNN. input is (T, B, I) (or batch-first), or a packed (N, I).
bool takes(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
           at::TensorList params) {
  const bool packed = !c.batch_sizes.empty();
  if (input.device().type() != c10::DeviceType::PrivateUse1 || input.layout() != at::kStrided ||
      input.dim() != (packed ? 2 : 3))
    return false;
  const at::ScalarType t = input.scalar_type();
  if (t != at::kFloat && t != at::kDouble && t != at::kHalf && t != at::kBFloat16) return false;
  if (c.layers < 1 || !(c.dropout >= 0 && c.dropout < 1)) return false;
  if (static_cast<int64_t>(params.size()) != c.layers * c.dirs() * c.per_cell()) return false;
  const int64_t T = packed ? static_cast<int64_t>(c.batch_sizes.size()) : input.size(c.batch_first ? 1 : 0);
  const int64_t B = packed ? c.batch_sizes[0] : input.size(c.batch_first ? 0 : 1);
  const int64_t I = input.size(-1);
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

// A PackedSequence's batch sizes, if they describe one for `data` (host int64, positive, never
// growing, summing to its rows); otherwise an empty vector (the composite then checks).
std::vector<int64_t> packed_sizes(const at::Tensor& batch_sizes, const at::Tensor& data) {
  if (!batch_sizes.defined() || batch_sizes.device().type() != c10::DeviceType::CPU ||
      batch_sizes.scalar_type() != at::kLong || batch_sizes.dim() != 1 || batch_sizes.numel() == 0 || data.dim() != 2)
    return {};
  const at::Tensor b = batch_sizes.contiguous();
  std::vector<int64_t> v(b.data_ptr<int64_t>(), b.data_ptr<int64_t>() + b.numel());
  int64_t total = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] <= 0 || (i > 0 && v[i] > v[i - 1])) return {};
    total += v[i];
  }
  if (total != data.size(0)) return {};
  return v;
}

// Forward AD and functorch transforms need the composite's ops.
bool composite_needed_for_autograd(at::TensorList vars) {
  if (at::functorch::functorchTLSAccessor() != nullptr) return true;
  for (const at::Tensor& v : vars)
    if (v._fw_grad(/*level=*/0).defined()) return true;
  return false;
}

// The time steps of a batch in the packed layout every pass works in: step t is bs[t] rows
// starting at row off[t], the batch sorted by decreasing length (bs never grows; bs[0] = B). A
// padded (T, B, .) input is the uniform case, bs[t] = B; a PackedSequence gives its
// batch_sizes.
struct Steps {
  std::vector<int64_t> bs, off;
  explicit Steps(std::vector<int64_t> sizes) : bs(std::move(sizes)) {
    int64_t o = 0;
    for (int64_t n : bs) off.push_back(o), o += n;
  }
  int64_t T() const { return static_cast<int64_t>(bs.size()); }
  int64_t B() const { return bs[0]; }
  int64_t N() const { return off.back() + bs.back(); }
  int64_t next(int64_t t) const { return t + 1 < T() ? bs[t + 1] : 0; }  // rows going on past t
  bool uniform() const { return bs.front() == bs.back(); }
};

Steps steps_of(const Config& c, const at::Tensor& input) {
  if (!c.batch_sizes.empty()) return Steps(c.batch_sizes);
  const int64_t T = input.size(c.batch_first ? 1 : 0), B = input.size(c.batch_first ? 0 : 1);
  return Steps(std::vector<int64_t>(static_cast<size_t>(T), B));
}

// The state a step starts from, rows [0, bs[t]) (h, or c of an LSTM): states (N, H) holds every
// step's, init (B, H) the initial one. Forward direction: the step before's first rows (or the
// initial state at t = 0). Reverse: rows going on past t come from step t + 1, the rest start
// there from the initial state; where both occur they are copied into scratch.
at::Tensor state_before(const Steps& st, int64_t d, int64_t t, const at::Tensor& states, const at::Tensor& init,
                        const at::Tensor& scratch) {
  const int64_t n = st.bs[t];
  if (d == 0) return t == 0 ? init.narrow(0, 0, n) : states.narrow(0, st.off[t - 1], n);
  const int64_t m = st.next(t);
  if (m == n) return states.narrow(0, st.off[t + 1], n);
  if (m == 0) return init.narrow(0, 0, n);
  scratch.narrow(0, 0, m).copy_(states.narrow(0, st.off[t + 1], m));
  scratch.narrow(0, m, n - m).copy_(init.narrow(0, m, n - m));
  return scratch.narrow(0, 0, n);
}

// The packed (N, H) matrix of every step's starting h (state_before for all t at once), gathered
// from the initial state and the layer's outputs: dW_hh's right-hand side.
at::Tensor states_before(const Steps& st, int64_t d, const at::Tensor& states, const at::Tensor& init) {
  const int64_t B = st.B();
  std::vector<int64_t> rows;  // into cat(init, states): init row b is b, states row r is B + r
  rows.reserve(static_cast<size_t>(st.N()));
  for (int64_t t = 0; t < st.T(); ++t)
    for (int64_t b = 0; b < st.bs[t]; ++b) {
      if (d == 0)
        rows.push_back(t == 0 ? b : B + st.off[t - 1] + b);
      else
        rows.push_back(b < st.next(t) ? B + st.off[t + 1] + b : b);
    }
  const at::Tensor index = at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(states.device());
  return at::cat({init, states}).index_select(0, index);
}

struct Result {
  at::Tensor output, hn, cn;  // cn undefined for a GRU / nn.RNN
};

// The layer input in the packed layout, (N, I) contiguous.
at::Tensor packed_input(const Config& c, const at::Tensor& input, const Steps& st) {
  if (!c.batch_sizes.empty()) return input.contiguous();
  return (c.batch_first ? input.transpose(0, 1) : input).contiguous().view({st.N(), input.size(2)});
}

// The returned output of the packed (N, D * H) last-layer output: (T, B, D * H) (transposed
// for batch_first) for a padded input, itself for a packed one; and back.
at::Tensor output_of(const Config& c, const Steps& st, const at::Tensor& out) {
  if (!c.batch_sizes.empty()) return out;
  const at::Tensor tb = out.view({st.T(), st.B(), out.size(1)});
  return c.batch_first ? tb.transpose(0, 1) : tb;
}
at::Tensor packed_of(const Config& c, const Steps& st, const at::Tensor& output) {
  if (!c.batch_sizes.empty()) return output;
  return (c.batch_first ? output.transpose(0, 1) : output).reshape({st.N(), output.size(-1)});
}

// The forward pass over every layer and direction. With trace, appends per layer: the layer's
// input (N, I_l) contiguous, its output (N, D * H), the dropout mask applied to that output
// (undefined without), then per direction the cell states (N, H) (LSTM only) and the
// workspaces (N, 4H or 5H; none for nn.RNN). Undefined entries keep the layout fixed.
Result run_forward(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
                   at::TensorList params, std::vector<at::Tensor>* trace) {
  check_dtype_supported(ocl_device(input), input.scalar_type(), name(c.kind));
  const bool lstm = c.kind == Kind::LSTM;
  const Steps st = steps_of(c, input);
  const int64_t T = st.T(), B = st.B(), N = st.N(), H = h0.size(2), D = c.dirs(), GH = c.gates() * H;
  const auto opts = input.options();
  Result r;
  r.hn = at::empty({c.layers * D, B, H}, opts);
  if (lstm) r.cn = at::empty({c.layers * D, B, H}, opts);
  at::Tensor layer_in = packed_input(c, input, st);
  for (int64_t l = 0; l < c.layers; ++l) {
    at::Tensor out = at::empty({N, D * H}, opts);
    std::vector<at::Tensor> per_dir;
    for (int64_t d = 0; d < D; ++d) {
      const Weights w = weights(params, c, l, d);
      const int64_t idx = l * D + d;
      const at::Tensor gx = at::mm(layer_in, w.w_ih.t());
      const at::Tensor hd = out.narrow(1, d * H, H);
      const at::Tensor cs = lstm ? at::empty({N, H}, opts) : at::Tensor();
      const at::Tensor ws = c.workspace() ? at::empty({N, c.workspace() * H}, opts) : at::Tensor();
      const at::Tensor hg = at::empty({B, GH}, opts);
      const at::Tensor scratch_h = at::empty({B, H}, opts), scratch_c = lstm ? at::empty({B, H}, opts) : at::Tensor();
      const at::Tensor h_init = h0.select(0, idx), c_init = lstm ? c0.select(0, idx) : at::Tensor();
      const at::Tensor w_hh_t = w.w_hh.t();
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? s : T - 1 - s, n = st.bs[t], o = st.off[t];
        const at::Tensor h = state_before(st, d, t, hd, h_init, scratch_h);
        at::Tensor hg_t = hg.narrow(0, 0, n);
        at::mm_out(hg_t, h, w_hh_t);
        const at::Tensor gx_t = gx.narrow(0, o, n), hy = hd.narrow(0, o, n);
        if (lstm) {
          const at::Tensor cx = state_before(st, d, t, cs, c_init, scratch_c);
          rnn::lstm_cell_fwd(gx_t, hg_t, cx, w.b_ih, w.b_hh, hy, cs.narrow(0, o, n), ws.narrow(0, o, n));
        } else if (c.kind == Kind::GRU) {
          rnn::gru_cell_fwd(gx_t, hg_t, h, w.b_ih, w.b_hh, hy, ws.narrow(0, o, n));
        } else {
          rnn::rnn_cell_fwd(gx_t, hg_t, w.b_ih, w.b_hh, hy, c.relu());
        }
      }
      // Final states: a row's last step is where it stops going on (forward), or t = 0 (reverse).
      for (int64_t t = 0; t < T; ++t) {
        const int64_t m = d == 0 ? st.next(t) : 0, n = d == 0 ? st.bs[t] : (t == 0 ? B : 0);
        if (m == n) continue;
        r.hn.select(0, idx).narrow(0, m, n - m).copy_(hd.narrow(0, st.off[t] + m, n - m));
        if (lstm) r.cn.select(0, idx).narrow(0, m, n - m).copy_(cs.narrow(0, st.off[t] + m, n - m));
      }
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
  r.output = output_of(c, st, layer_in);
  return r;
}

struct Grads {
  at::Tensor input, h0, c0;
  std::vector<at::Tensor> params;
};

// Rows [m, n) of a direction's recurrent gradient (or the cell's) start at the final state's
// gradient (zero without one).
void start_rows(const at::Tensor& buffer, const at::Tensor& final_grad, int64_t m, int64_t n) {
  if (m == n) return;
  at::Tensor rows = buffer.narrow(0, m, n - m);
  if (final_grad.defined())
    rows.copy_(final_grad.narrow(0, m, n - m));
  else
    rows.zero_();
}

// The backward pass. trace is run_forward's (the last layer's output replaced by the returned
// output); grad_output, grad_hn, grad_cn may be undefined. need_input / need_params say which
// gradients to compute (h0's and c0's always are).
Grads run_backward(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
                   at::TensorList params, const std::vector<at::Tensor>& trace, const at::Tensor& grad_output,
                   const at::Tensor& grad_hn, const at::Tensor& grad_cn, bool need_input,
                   const std::vector<bool>& need_params) {
  const bool lstm = c.kind == Kind::LSTM, gru = c.kind == Kind::GRU;
  const Steps st = steps_of(c, input);
  const int64_t T = st.T(), B = st.B(), N = st.N();
  const int64_t D = c.dirs(), S = c.trace_stride(), H = h0.size(2), GH = c.gates() * H;
  const auto opts = h0.options();
  Grads g;
  g.h0 = at::empty_like(h0, at::MemoryFormat::Contiguous);
  if (lstm) g.c0 = at::empty_like(c0, at::MemoryFormat::Contiguous);
  g.params.resize(params.size());
  at::Tensor d_out;  // gradient of layer l's output, (N, D * H), or undefined
  if (grad_output.defined()) d_out = packed_of(c, st, grad_output);
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    const at::Tensor& x = trace[l * S];
    const at::Tensor out = l + 1 == c.layers ? packed_of(c, st, trace[l * S + 1]) : trace[l * S + 1];
    const bool need_dx = l > 0 || need_input;
    at::Tensor dx;
    for (int64_t d = 0; d < D; ++d) {
      const Weights w = weights(params, c, l, d);
      const int64_t idx = l * D + d;
      const at::Tensor& cs = trace[l * S + 3 + 2 * d];
      const at::Tensor& ws = trace[l * S + 4 + 2 * d];
      const at::Tensor hd = out.narrow(1, d * H, H);
      const at::Tensor dhd = d_out.defined() ? d_out.narrow(1, d * H, H) : at::Tensor();
      const at::Tensor h_init = h0.select(0, idx), c_init = lstm ? c0.select(0, idx) : at::Tensor();
      const at::Tensor ghn = grad_hn.defined() ? grad_hn.select(0, idx) : at::Tensor();
      const at::Tensor gcn = lstm && grad_cn.defined() ? grad_cn.select(0, idx) : at::Tensor();
      const at::Tensor dg = at::empty({N, GH}, opts);                        // input gates
      const at::Tensor dgh = gru ? at::empty({N, GH}, opts) : dg;            // hidden gates
      const at::Tensor ghx = gru ? at::empty({B, H}, opts) : at::Tensor();   // GRU's direct term
      const at::Tensor scratch_c = lstm ? at::empty({B, H}, opts) : at::Tensor();
      // The gradients of each step's starting h and c, rows [0, bs[t]): they end as h0's and
      // c0's (every row's first step reads the initial state).
      const at::Tensor rec = g.h0.select(0, idx), dcell = lstm ? g.c0.select(0, idx) : at::Tensor();
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d == 0 ? T - 1 - s : s;  // the forward's steps, last first
        const int64_t n = st.bs[t], o = st.off[t];
        // Rows whose forward pass ended at this step start from the final state's gradient.
        const int64_t m = d == 0 ? st.next(t) : (s == 0 ? 0 : n);
        start_rows(rec, ghn, m, n);
        if (lstm) start_rows(dcell, gcn, m, n);
        const at::Tensor ghy = dhd.defined() ? dhd.narrow(0, o, n) : at::Tensor();
        at::Tensor rec_t = rec.narrow(0, 0, n);  // read by the cell, then overwritten by the product
        if (lstm) {
          const at::Tensor cx = state_before(st, d, t, cs, c_init, scratch_c);
          const at::Tensor dcell_t = dcell.narrow(0, 0, n);
          rnn::lstm_cell_bwd(ghy, rec_t, dcell_t, cx, cs.narrow(0, o, n), ws.narrow(0, o, n), dg.narrow(0, o, n),
                             dcell_t);
          at::mm_out(rec_t, dg.narrow(0, o, n), w.w_hh);
        } else if (gru) {
          const at::Tensor ghx_t = ghx.narrow(0, 0, n);
          rnn::gru_cell_bwd(ghy, rec_t, ws.narrow(0, o, n), dg.narrow(0, o, n), dgh.narrow(0, o, n), ghx_t);
          at::addmm_out(rec_t, ghx_t, dgh.narrow(0, o, n), w.w_hh);
        } else {
          rnn::rnn_cell_bwd(ghy, rec_t, hd.narrow(0, o, n), dg.narrow(0, o, n), c.relu());
          at::mm_out(rec_t, dg.narrow(0, o, n), w.w_hh);
        }
      }
      const size_t p = static_cast<size_t>(idx * c.per_cell());
      if (need_params[p]) g.params[p] = at::mm(dg.t(), x);
      if (need_params[p + 1]) g.params[p + 1] = at::mm(dgh.t(), states_before(st, d, hd, h_init));
      if (c.has_biases && (need_params[p + 2] || need_params[p + 3])) {
        g.params[p + 2] = dg.sum(0);
        g.params[p + 3] = gru ? dgh.sum(0) : g.params[p + 2].clone();
      }
      if (need_dx) dx = d == 0 ? at::mm(dg, w.w_ih) : dx.addmm_(dg, w.w_ih);
    }
    if (!need_dx) continue;
    if (l == 0) {
      g.input = c.batch_sizes.empty() ? output_of(c, st, dx) : dx;
    } else {
      const at::Tensor& mask = trace[(l - 1) * S + 2];  // the dropout applied to the layer below's output
      d_out = mask.defined() ? at::native_dropout_backward(dx, mask, 1.0 / (1.0 - c.dropout)) : dx;
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

using LstmOut = std::tuple<at::Tensor, at::Tensor, at::Tensor>;
using GruOut = std::tuple<at::Tensor, at::Tensor>;

using GruFn = GruOut (*)(const at::Tensor&, const at::Tensor&, at::TensorList, bool, int64_t, double, bool, bool, bool);
using GruPackedFn = GruOut (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&, at::TensorList, bool, int64_t,
                               double, bool, bool);

// ATen's composites of the one-state kinds (GRU, nn.RNN), for padded and packed input.
GruFn composite(Kind k) {
  return k == Kind::GRU ? GruFn(&at::native::gru)
                        : k == Kind::RNN_TANH ? GruFn(&at::native::rnn_tanh) : GruFn(&at::native::rnn_relu);
}
GruPackedFn composite_packed(Kind k) {
  return k == Kind::GRU        ? GruPackedFn(&at::native::gru)
         : k == Kind::RNN_TANH ? GruPackedFn(&at::native::rnn_tanh)
                               : GruPackedFn(&at::native::rnn_relu);
}

// ATen's composite for the call c describes (double backward recomputes through it).
variable_list composite_forward(const Config& c, const at::Tensor& input, const at::Tensor& h0, const at::Tensor& c0,
                                at::TensorList params) {
  const bool packed = !c.batch_sizes.empty();
  const at::Tensor bs = packed ? at::tensor(c.batch_sizes, at::TensorOptions().dtype(at::kLong)) : at::Tensor();
  if (c.kind == Kind::LSTM) {
    const LstmOut o = packed ? at::native::lstm(input, bs, {h0, c0}, params, c.has_biases, c.layers, c.dropout,
                                                c.train, c.bidirectional)
                             : at::native::lstm(input, {h0, c0}, params, c.has_biases, c.layers, c.dropout, c.train,
                                                c.bidirectional, c.batch_first);
    return {std::get<0>(o), std::get<1>(o), std::get<2>(o)};
  }
  const GruOut o = packed ? composite_packed(c.kind)(input, bs, h0, params, c.has_biases, c.layers, c.dropout, c.train,
                                                    c.bidirectional)
                          : composite(c.kind)(input, h0, params, c.has_biases, c.layers, c.dropout, c.train,
                                              c.bidirectional, c.batch_first);
  return {std::get<0>(o), std::get<1>(o)};
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
    ctx->saved_data["batch_sizes"] = c.batch_sizes;
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
    c.batch_sizes = ctx->saved_data["batch_sizes"].toIntVector();
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
      const variable_list outs = composite_forward(c, vars[0], h0, c0, params);
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
    Grads g = run_backward(c, vars[0], h0, c0, params, trace, grads[0], grads[1], lstm ? grads[2] : at::Tensor(),
                           ctx->needs_input_grad(0), need_params);
    result[0] = g.input;
    result[1] = g.h0;
    if (lstm) result[2] = g.c0;
    for (size_t i = 0; i < g.params.size(); ++i) result[static_cast<size_t>(c.first_param()) + i] = g.params[i];
    return result;
  }
};

Config config(Kind kind, bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional,
              bool batch_first, std::vector<int64_t> batch_sizes = {}) {
  return Config{kind, has_biases, num_layers, dropout, train, bidirectional, batch_first, std::move(batch_sizes)};
}

// The sequence path's outputs for a call it takes, below or above autograd (the Function when
// a gradient is wanted, the bare forward otherwise); nullopt sends the caller to ATen's
// composite with its original arguments.
std::optional<variable_list> try_sequence(const Config& c, const at::Tensor& input, const at::Tensor& h0,
                                          const at::Tensor& c0, at::TensorList params, bool autograd) {
  if (!takes(c, input, h0, c0, params)) return std::nullopt;
  const std::vector<at::Tensor> vars = function_inputs(c, input, h0, c0, params);
  if (autograd && composite_needed_for_autograd(vars)) return std::nullopt;
  bool wants_grad = false;
  if (autograd && at::GradMode::is_enabled())
    for (const at::Tensor& v : vars) wants_grad = wants_grad || v.requires_grad();
  if (wants_grad) return RnnFunction::apply(at::TensorList(vars), c);
  at::AutoDispatchBelowADInplaceOrView below;
  Result r = run_forward(c, input, h0, c0, params, nullptr);
  if (c.kind == Kind::LSTM) return variable_list{r.output, r.hn, r.cn};
  return variable_list{r.output, r.hn};
}

// lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
template <bool Autograd>
LstmOut lstm_ocl(const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
                 int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const Config c = config(Kind::LSTM, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  const auto o = hx.size() == 2 ? try_sequence(c, input, hx[0], hx[1], params, Autograd) : std::nullopt;
  if (!o) return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  return {(*o)[0], (*o)[1], (*o)[2]};
}

// gru.input / rnn_tanh.input / rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
template <Kind K, bool Autograd>
GruOut one_state_ocl(const at::Tensor& input, const at::Tensor& hx, at::TensorList params, bool has_biases,
                     int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const Config c = config(K, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  const auto o = try_sequence(c, input, hx, at::Tensor(), params, Autograd);
  if (!o) return composite(K)(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
  return {(*o)[0], (*o)[1]};
}

// lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)
template <bool Autograd>
LstmOut lstm_packed_ocl(const at::Tensor& data, const at::Tensor& batch_sizes, at::TensorList hx, at::TensorList params,
                        bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional) {
  const Config c = config(Kind::LSTM, has_biases, num_layers, dropout, train, bidirectional, false,
                          packed_sizes(batch_sizes, data));
  const auto o = !c.batch_sizes.empty() && hx.size() == 2 ? try_sequence(c, data, hx[0], hx[1], params, Autograd)
                                                          : std::nullopt;
  if (!o) return at::native::lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional);
  return {(*o)[0], (*o)[1], (*o)[2]};
}

// gru.data / rnn_tanh.data / rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)
template <Kind K, bool Autograd>
GruOut one_state_packed_ocl(const at::Tensor& data, const at::Tensor& batch_sizes, const at::Tensor& hx,
                            at::TensorList params, bool has_biases, int64_t num_layers, double dropout, bool train,
                            bool bidirectional) {
  const Config c = config(K, has_biases, num_layers, dropout, train, bidirectional, false,
                          packed_sizes(batch_sizes, data));
  const auto o = !c.batch_sizes.empty() ? try_sequence(c, data, hx, at::Tensor(), params, Autograd) : std::nullopt;
  if (!o)
    return composite_packed(K)(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional);
  return {(*o)[0], (*o)[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("lstm.input", lstm_ocl<false>);
  m.impl("gru.input", one_state_ocl<Kind::GRU, false>);
  m.impl("rnn_tanh.input", one_state_ocl<Kind::RNN_TANH, false>);
  m.impl("rnn_relu.input", one_state_ocl<Kind::RNN_RELU, false>);
  m.impl("lstm.data", lstm_packed_ocl<false>);
  m.impl("gru.data", one_state_packed_ocl<Kind::GRU, false>);
  m.impl("rnn_tanh.data", one_state_packed_ocl<Kind::RNN_TANH, false>);
  m.impl("rnn_relu.data", one_state_packed_ocl<Kind::RNN_RELU, false>);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("lstm.input", lstm_ocl<true>);
  m.impl("gru.input", one_state_ocl<Kind::GRU, true>);
  m.impl("rnn_tanh.input", one_state_ocl<Kind::RNN_TANH, true>);
  m.impl("rnn_relu.input", one_state_ocl<Kind::RNN_RELU, true>);
  m.impl("lstm.data", lstm_packed_ocl<true>);
  m.impl("gru.data", one_state_packed_ocl<Kind::GRU, true>);
  m.impl("rnn_tanh.data", one_state_packed_ocl<Kind::RNN_TANH, true>);
  m.impl("rnn_relu.data", one_state_packed_ocl<Kind::RNN_RELU, true>);
}

}  // namespace torch_ocl
