"""The fused LSTM/GRU cells nn.LSTMCell, nn.GRUCell (and ATen's per-step composite) call on
non-CPU devices, and the whole-sequence lstm / gru / rnn_tanh / rnn_relu ops behind nn.LSTM,
nn.GRU and nn.RNN (padded .input and packed .data), forward and backward (the backward ops run through autograd, grad=True).
The modules themselves are compared in tests/test_rnn.py and tests/test_rnn_sequence.py."""
import torch

from ..cases import FLOATS, HALFS, OpCase, Sample, make


def _cell_samples(ngates):
    def samples(dtype):
        for batch, hidden, bias, tag in [(3, 5, True, "bias"), (4, 7, False, "no bias"), (1, 1, True, "1x1"),
                                         (0, 4, True, "empty batch"), (65, 33, True, "large")]:
            args = (make((batch, ngates * hidden), dtype, seed=1, requires_grad=True),
                    make((batch, ngates * hidden), dtype, seed=2, requires_grad=True),
                    make((batch, hidden), dtype, seed=3, requires_grad=True))
            if bias:
                args += (make((ngates * hidden,), dtype, seed=4, requires_grad=True),
                         make((ngates * hidden,), dtype, seed=5, requires_grad=True))
            yield Sample(args, tag=tag)
        yield Sample((make((3, ngates * 3), dtype, noncontig=True, seed=6), make((3, ngates * 3), dtype, seed=7),
                      make((3, 3), dtype, noncontig=True, seed=8)), tag="noncontig")
        yield Sample((make((2, ngates * 4), dtype, seed=9), make((2, ngates * 4), dtype, noncontig=True, seed=10),
                      make((2, 4), dtype, seed=11), make((ngates * 4,), dtype, noncontig=True, seed=12),
                      make((ngates * 4,), dtype, noncontig=True, seed=13)), tag="noncontig biases")
    return samples


# The CPU has no kernel for these ops (its RNNs use unfused cells): on the CPU the cases run
# the cells' definition in ordinary ops, which autograd differentiates. 16-bit inputs are
# computed in float32 and rounded once, as the device's (and CUDA's) fused kernels do.
def _in_float(cell):
    def run(*args):
        dtype = args[0].dtype
        if dtype not in (torch.float16, torch.bfloat16):
            return cell(*args)
        outs = cell(*(a.float() for a in args))
        return tuple(o.to(dtype) for o in outs) if isinstance(outs, tuple) else outs.to(dtype)
    return run


@_in_float
def _lstm_reference(ig, hg, cx, ib=None, hb=None):
    gates = ig + hg if ib is None else ig + hg + ib + hb
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy


@_in_float
def _gru_reference(ig, hg, hx, ib=None, hb=None):
    if ib is not None:
        ig, hg = ig + ib, hg + hb
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n)


def _lstm_cell(*args):
    if args[0].device.type == "cpu":
        return _lstm_reference(*args)
    hy, cy, _ = torch.ops.aten._thnn_fused_lstm_cell(*args)
    return hy, cy


def _lstm_cell_hy_only(*args):
    # The backward with an undefined cell-state gradient.
    return _lstm_cell(*args)[0]


def _lstm_cell_cy_only(*args):
    # The backward with an undefined hidden-state gradient.
    return _lstm_cell(*args)[1]


def _gru_cell(*args):
    if args[0].device.type == "cpu":
        return _gru_reference(*args)
    return torch.ops.aten._thnn_fused_gru_cell(*args)[0]


def _sequence_samples(kind):
    # (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)

    def samples(dtype):
        for T, B, I, H, layers, bidir, batch_first, bias, noncontig, tag in [
                (5, 3, 4, 6, 1, False, False, True, False, "one layer"),
                (4, 2, 3, 5, 2, True, True, True, False, "2 layers, bidirectional, batch_first"),
                (3, 1, 2, 3, 2, False, False, False, False, "no bias, batch of one"),
                (1, 4, 5, 2, 1, True, False, True, False, "one step"),
                (6, 3, 4, 5, 2, True, False, True, True, "noncontig")]:
            D = 2 if bidir else 1
            x = make((B, T, I) if batch_first else (T, B, I), dtype, noncontig=noncontig, seed=1)
            params = []
            for i in range(layers * D):
                width = I if i < D else D * H
                params += [make((gates * H, width), dtype, noncontig=noncontig, seed=10 * i + 2),
                           make((gates * H, H), dtype, seed=10 * i + 3)]
                if bias:
                    params += [make((gates * H,), dtype, noncontig=noncontig, seed=10 * i + 4),
                               make((gates * H,), dtype, seed=10 * i + 5)]
            h = make((layers * D, B, H), dtype, noncontig=noncontig, seed=6)
            hx = [h, make((layers * D, B, H), dtype, seed=7)] if kind == "lstm" else h
            yield Sample((x, hx, params, bias, layers, 0.0, True, bidir, batch_first), tag=tag)
    return samples


def _packed_samples(kind):
    # (data, batch_sizes as a list, hx, params, has_biases, num_layers, dropout, train, bidirectional)
    def samples(dtype):
        for lengths, layers, bidir, bias, tag in [([5, 3, 3, 1], 1, False, True, "one layer"),
                                                  ([4, 4, 2], 2, True, True, "2 layers, bidirectional"),
                                                  ([3, 1], 2, False, False, "no bias")]:
            gates = {"lstm": 4, "gru": 3}.get(kind, 1)
            D, I, H = (2 if bidir else 1), 4, 5
            bs = [sum(1 for n in lengths if n > t) for t in range(max(lengths))]
            data = make((sum(bs), I), dtype, seed=1)
            params = []
            for i in range(layers * D):
                width = I if i < D else D * H
                params += [make((gates * H, width), dtype, seed=10 * i + 2), make((gates * H, H), dtype, seed=10 * i + 3)]
                if bias:
                    params += [make((gates * H,), dtype, seed=10 * i + 4), make((gates * H,), dtype, seed=10 * i + 5)]
            h = make((layers * D, len(lengths), H), dtype, seed=6)
            hx = [h, make((layers * D, len(lengths), H), dtype, seed=7)] if kind == "lstm" else h
            yield Sample((data, bs, hx, params, bias, layers, 0.0, True, bidir), tag=tag)
    return samples


def _packed_op(op):
    def run(data, bs, *rest):
        return op(data, torch.tensor(bs), *rest)  # batch_sizes stay on the host, as PackedSequence keeps them
    return run


CASES = [
    OpCase("lstm_packed", ["aten::lstm.data"], _packed_op(torch.lstm), _packed_samples("lstm"), dtypes=FLOATS, grad=True),
    OpCase("gru_packed", ["aten::gru.data"], _packed_op(torch.gru), _packed_samples("gru"), dtypes=FLOATS, grad=True),
    OpCase("rnn_tanh_packed", ["aten::rnn_tanh.data"], _packed_op(torch.rnn_tanh), _packed_samples("rnn_tanh"),
           dtypes=FLOATS, grad=True),
    OpCase("rnn_relu_packed", ["aten::rnn_relu.data"], _packed_op(torch.rnn_relu), _packed_samples("rnn_relu"),
           dtypes=FLOATS, grad=True),
    OpCase("lstm_sequence", ["aten::lstm.input"], torch.lstm, _sequence_samples("lstm"), dtypes=FLOATS, grad=True),
    OpCase("gru_sequence", ["aten::gru.input"], torch.gru, _sequence_samples("gru"), dtypes=FLOATS, grad=True),
    OpCase("rnn_tanh_sequence", ["aten::rnn_tanh.input"], torch.rnn_tanh, _sequence_samples("rnn_tanh"),
           dtypes=FLOATS, grad=True),
    OpCase("rnn_relu_sequence", ["aten::rnn_relu.input"], torch.rnn_relu, _sequence_samples("rnn_relu"),
           dtypes=FLOATS, grad=True),
    OpCase("fused_lstm_cell", ["aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_lstm_cell_backward_impl"],
           _lstm_cell, _cell_samples(4), dtypes=FLOATS + HALFS, grad=True),
    OpCase("fused_lstm_cell_hy_only", [], _lstm_cell_hy_only, _cell_samples(4), dtypes=FLOATS, grad=True),
    OpCase("fused_lstm_cell_cy_only", [], _lstm_cell_cy_only, _cell_samples(4), dtypes=FLOATS, grad=True),
    OpCase("fused_gru_cell", ["aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward"], _gru_cell,
           _cell_samples(3), dtypes=FLOATS + HALFS, grad=True),
]
