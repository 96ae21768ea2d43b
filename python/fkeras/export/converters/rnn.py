"""Recurrent layers as ONNX's LSTM, GRU and RNN ops; Bidirectional as two of them;
TimeDistributed by folding time into the batch.

Keras keeps gates in (input, forget, cell, output) order for LSTM and (update, reset, new)
for GRU, kernels as (features, gates * units); ONNX wants W (1, gates * units, features) with
LSTM gates in (input, output, forget, cell) order (GRU's order is Keras's). Keras's
`reset_after=True` GRU is ONNX's `linear_before_reset=1` with the recurrent bias in Rb.
Sequences are batch-major in Keras and time-major in ONNX (layout 0): a Transpose each side.
`go_backwards` reverses the input and runs forward, so outputs come in processing order as
Keras returns them.
"""

import numpy as np

from fkeras.export.converters.activations import activation_name
from fkeras.export.converters.base import Call, converts, find_converter
from fkeras.layers.rnn.bidirectional import Bidirectional
from fkeras.layers.rnn.gru import GRU
from fkeras.layers.rnn.gru_cell import GRUCell
from fkeras.layers.rnn.lstm import LSTM
from fkeras.layers.rnn.lstm_cell import LSTMCell
from fkeras.layers.rnn.rnn import RNN
from fkeras.layers.rnn.simple_rnn import SimpleRNN
from fkeras.layers.rnn.simple_rnn_cell import SimpleRNNCell
from fkeras.layers.rnn.stacked_rnn_cells import StackedRNNCells
from fkeras.layers.rnn.time_distributed import TimeDistributed
from fkeras.utils import nest

# Keras activation -> (ONNX recurrent activation, alpha, beta).
_RECURRENT_ACTIVATIONS = {
    "sigmoid": ("Sigmoid", 0.0, 0.0),
    "tanh": ("Tanh", 1.0, 1.0),
    "relu": ("Relu", 0.0, 0.0),
    "hard_sigmoid": ("HardSigmoid", 1.0 / 6.0, 0.5),
    "linear": ("Affine", 1.0, 0.0),
    "softsign": ("Softsign", 0.0, 0.0),
    "softplus": ("Softplus", 0.0, 0.0),
    "elu": ("Elu", 1.0, 0.0),
}

_KINDS = {LSTM: "LSTM", GRU: "GRU", SimpleRNN: "RNN",
          LSTMCell: "LSTM", GRUCell: "GRU", SimpleRNNCell: "RNN"}


def _onnx_activation(call, fn):
    name = activation_name(fn)
    if name not in _RECURRENT_ACTIVATIONS:
        raise call.fail(f'the recurrent op has no ONNX form for activation "{name}" '
                        f"(exportable: {', '.join(sorted(_RECURRENT_ACTIVATIONS))})")
    return _RECURRENT_ACTIVATIONS[name]


def _cells_of(call):
    """The objects holding weights and activations: the layer itself, RNN's built-in cell,
    or each built-in cell of a StackedRNNCells."""
    layer = call.layer
    if not isinstance(layer, RNN):
        return [layer]
    cells = layer.cell.cells if isinstance(layer.cell, StackedRNNCells) else [layer.cell]
    for cell in cells:
        if type(cell) not in _KINDS:
            raise call.fail(f"its cell {type(cell).__name__} is not a built-in LSTMCell, "
                            "GRUCell or SimpleRNNCell (or a StackedRNNCells of them)")
    return cells


def _blocks(matrix, order, units):
    """Reorders the gate blocks of the last axis of `matrix` (each `units` wide)."""
    return np.concatenate([matrix[..., g * units:(g + 1) * units] for g in order], axis=-1)


def _weights(kind, cell):
    """ONNX (W, R, B) with a leading num_directions axis of 1."""
    u = int(cell.units)
    kernel = np.asarray(cell.kernel.numpy(), np.float32)
    recurrent = np.asarray(cell.recurrent_kernel.numpy(), np.float32)
    gates = kernel.shape[-1] // u
    bias = np.zeros((gates * u,), np.float32) if cell.bias is None else \
        np.asarray(cell.bias.numpy(), np.float32)
    if kind == "LSTM":
        order = [0, 3, 1, 2]  # Keras i, f, c, o -> ONNX i, o, f, c
        kernel, recurrent, bias = (_blocks(m, order, u) for m in (kernel, recurrent, bias))
    if bias.ndim == 2:  # GRU reset_after: input bias, recurrent bias
        wb, rb = bias[0], bias[1]
    else:
        wb, rb = bias, np.zeros_like(bias)
    w = kernel.T[None]
    r = recurrent.T[None]
    b = np.concatenate([wb, rb])[None]
    return w, r, b


def _one_op(call, cell, x, states, name):
    """One ONNX recurrent op on the time-major `x`; returns (Y, [state outputs])."""
    b = call.b
    kind = _KINDS[type(cell)]
    w, r, bias = _weights(kind, cell)
    act = _onnx_activation(call, cell.activation)
    if kind == "RNN":
        acts = [act]
    else:
        rec = _onnx_activation(call, cell.recurrent_activation)
        acts = [rec, act] if kind == "GRU" else [rec, act, act]
    inputs = [x, b.const(w, f"{name}/W"), b.const(r, f"{name}/R"), b.const(bias, f"{name}/B")]
    if states:
        inputs += [""] + [b.unsqueeze(s, [0]) for s in states]
    attrs = dict(hidden_size=int(cell.units), activations=[a[0] for a in acts],
                 activation_alpha=[a[1] for a in acts], activation_beta=[a[2] for a in acts])
    if kind == "GRU":
        attrs["linear_before_reset"] = int(getattr(cell, "reset_after", True))
    outs = b.op(kind, inputs, outputs=3 if kind == "LSTM" else 2, hint=name, **attrs)
    return outs[0], outs[1:]


def recurrent(call):
    """Adds the ONNX recurrent op(s) of an LSTM/GRU/SimpleRNN/RNN(cell) call (one per cell of
    a StackedRNNCells, each feeding the next its output sequence).

    Returns:
        The list of output names in Keras's order: [output] (+ every state when
        return_state)."""
    b, layer = call.b, call.layer
    call.refuse_mask()
    if layer.stateful:
        raise call.fail("stateful=True keeps state between calls, which an ONNX graph "
                        "does not")
    cells = _cells_of(call)
    x = b.transpose(call.x, [1, 0, 2])
    if layer.go_backwards:
        x = b.reverse_axis(x, 0)
    given = call.kwargs.get("initial_state")
    given = [] if given is None else nest.flatten(given)
    finals = []
    for i, cell in enumerate(cells):
        count = 2 if _KINDS[type(cell)] == "LSTM" else 1
        states, given = given[:count], given[count:]
        name = layer.name if len(cells) == 1 else f"{layer.name}/cell_{i}"
        y, outs = _one_op(call, cell, x, states, name)
        x = b.squeeze(y, [1])  # (T, N, units): the next cell's input
        finals += outs
    if layer.return_sequences:
        output = b.transpose(x, [1, 0, 2])
    else:
        output = b.squeeze(finals[-len(outs)], [0])  # the last cell's h
    if not layer.return_state:
        return [output]
    return [output] + [b.squeeze(s, [0]) for s in finals]


@converts(LSTM, GRU, SimpleRNN, RNN)
def convert_recurrent(call):
    return recurrent(call)


@converts(Bidirectional)
def convert_bidirectional(call):
    b, layer = call.b, call.layer
    call.refuse_mask()
    states = call.kwargs.get("initial_state")
    fwd_kwargs, bwd_kwargs = {}, {}
    if states is not None:
        states = list(states)
        half = len(states) // 2
        fwd_kwargs["initial_state"], bwd_kwargs["initial_state"] = states[:half], states[half:]
    fwd = recurrent(Call(b, layer.forward_layer, call.inputs, call.in_shapes, [],
                         kwargs=fwd_kwargs, masked=call.masked))
    bwd = recurrent(Call(b, layer.backward_layer, call.inputs, call.in_shapes, [],
                         kwargs=bwd_kwargs, masked=call.masked))
    y, y_rev = fwd[0], bwd[0]
    if layer.return_sequences:
        y_rev = b.reverse_axis(y_rev, 1)
    mode = layer.merge_mode
    if mode == "concat":
        merged = [b.op("Concat", [y, y_rev], axis=-1, hint=layer.name)]
    elif mode == "sum":
        merged = [b.op("Add", [y, y_rev], hint=layer.name)]
    elif mode == "ave":
        merged = [b.op("Mul", [b.op("Add", [y, y_rev]), b.scalar(0.5)], hint=layer.name)]
    elif mode == "mul":
        merged = [b.op("Mul", [y, y_rev], hint=layer.name)]
    else:
        merged = [y, y_rev]
    return merged + (fwd[1:] + bwd[1:] if layer.return_state else [])


@converts(TimeDistributed)
def convert_time_distributed(call):
    b, layer, inner = call.b, call.layer, call.layer.layer
    call.refuse_mask()
    shape = call.shape
    if any(d is None for d in shape[2:]):
        raise call.fail("the per-step input shape must be fully known")
    folded = b.reshape(call.x, [-1] + list(shape[2:]))
    step_in = (None,) + tuple(shape[2:])
    step_out = tuple(inner.compute_output_shape(step_in))
    outs = find_converter(inner)(Call(b, inner, [folded], [step_in], [step_out]))
    if len(outs) != 1:
        raise call.fail("its inner layer has several outputs")
    if any(d is None for d in step_out[1:]):
        raise call.fail("the per-step output shape must be fully known")
    target = b.concat_shape([b.dims(call.x, 0, 2), list(step_out[1:])])
    return [b.op("Reshape", [outs[0], target], hint=layer.name)]
