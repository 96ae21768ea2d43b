"""Recurrent sequence ops: one op call (one kernel call each way) per layer call.

Layouts are Keras's, so weights transfer unchanged: x (N, T, F), kernel (F, G*U),
recurrent_kernel (U, G*U); gates LSTM i, f, c, o (bias (4U,)), GRU z, r, h (bias (2, 3U) with
reset_after, else (3U,)), SimpleRNN (bias (U,)). Each op returns the whole output sequence
hs (N, T, U) in processing order (reversed in time with go_backwards, as Keras returns it) and
the final state(s). An absent initial state is zeros.
"""

import numpy as np

from fkeras.backend import codes
from fkeras.engine import tape as _tape
from fkeras.engine.tape import zero_filled
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

_GATES = {"lstm": 4, "gru": 3, "simple_rnn": 1}


def _nz(g):
    """An incoming gradient, or None when it is missing (the tape passes None: the recurrent
    ops take missing cotangents) or all zeros (the kernels then skip it). On a non-host device
    only missing ones and the tape's zero fills are recognised (reading would copy)."""
    if zero_filled(g):
        return None
    return g if type(g) is not np.ndarray or np.any(g) else None


def _check_shapes(op_name, x, kernel, recurrent_kernel, bias, states, reset_after=False):
    xs, ks, rs = su.shape_of(x), su.shape_of(kernel), su.shape_of(recurrent_kernel)
    G = _GATES[op_name]
    if len(xs) != 3:
        raise ValueError(f"`{op_name}`: inputs must have rank 3 (batch, timesteps, features), "
                         f"received shape {xs}.")
    if len(rs) != 2 or rs[1] != G * rs[0]:
        raise ValueError(f"`{op_name}`: recurrent_kernel must have shape (units, {G} * units), "
                         f"received {rs}.")
    U = rs[0]
    if len(ks) != 2 or ks[1] != G * U or (xs[2] is not None and ks[0] != xs[2]):
        raise ValueError(f"`{op_name}`: kernel must have shape ({xs[2]}, {G * U}), received "
                         f"{ks}.")
    want = (2, G * U) if reset_after else (G * U,)
    if bias is not None and su.shape_of(bias) != want:
        raise ValueError(f"`{op_name}`: bias must have shape {want}, received "
                         f"{su.shape_of(bias)}.")
    for s in states:
        if s is not None and tuple(su.shape_of(s))[1:] != (U,):
            raise ValueError(f"`{op_name}`: initial states must have shape (batch, {U}), "
                             f"received {su.shape_of(s)}.")
    return xs, U


def _inference(dev):
    """Whether a forward on `dev` runs for its outputs only: no tape is active, so nothing
    records the call and its saved state would be dropped unread (host devices; the kernels
    then skip writing that state: for the LSTM, 5 of the 6 floats per unit and step)."""
    return dev.is_host and _tape.current_tape() is None


def _state(dev, s, N, U):
    return dev.zeros((N, U)) if s is None else s


class LSTM(Op):
    """(hs, h_final, c_final) of an LSTM over x."""

    name = "lstm"
    device_native = True
    n_outputs = 3
    takes_missing_cotangents = True

    def output_spec(self, x, h0, c0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                    activation=codes.TANH, recurrent_activation=codes.SIGMOID):
        (N, T, _), U = _check_shapes("lstm", x, kernel, recurrent_kernel, bias, (h0, c0))
        return [(N, T, U), (N, U), (N, U)]

    def forward(self, dev, x, h0, c0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                activation=codes.TANH, recurrent_activation=codes.SIGMOID):
        (N, T, F), U = _check_shapes("lstm", x, kernel, recurrent_kernel, bias, (h0, c0))
        h0, c0 = _state(dev, h0, N, U), _state(dev, c0, N, U)
        hs, h, c = dev.empty((N, T, U)), dev.empty((N, U)), dev.empty((N, U))
        if _inference(dev):  # nothing will record this call: save no gates and cell states
            gates = cs = None
        else:
            gates, cs = dev.empty((N, T, 4 * U)), dev.empty((N, T, U))
        dev.kernels["lstm_sequence_forward"](hs, h, c, gates, cs, x, h0, c0, kernel,
                                             recurrent_kernel, bias, N, T, F, U, go_backwards,
                                             activation, recurrent_activation)
        if gates is None:
            return (hs, h, c), None
        return (hs, h, c), (gates, cs, hs, x, h0, c0, kernel, recurrent_kernel, bias is not None)

    def backward(self, dev, saved, grads, needs, go_backwards=False, activation=codes.TANH,
                 recurrent_activation=codes.SIGMOID):
        gates, cs, hs, x, h0, c0, kernel, rk, has_bias = saved
        N, T, F = x.shape
        U = rk.shape[0]
        dx = dev.empty(x.shape) if needs[0] else None
        dh0 = dev.empty((N, U)) if needs[1] else None
        dc0 = dev.empty((N, U)) if needs[2] else None
        dk, drk = dev.empty(kernel.shape), dev.empty(rk.shape)
        db = dev.empty((4 * U,)) if has_bias and needs[5] else None
        dev.kernels["lstm_sequence_backward"](
            dx, dh0, dc0, dk, drk, db, *(_nz(g) for g in grads), gates, cs, hs, x, h0, c0,
            kernel, rk, N, T, F, U, go_backwards, activation, recurrent_activation)
        return dx, dh0, dc0, dk if needs[3] else None, drk if needs[4] else None, db


class GRU(Op):
    """(hs, h_final) of a GRU over x (reset_after: Keras 3's default, cuDNN-compatible form)."""

    name = "gru"
    device_native = True
    n_outputs = 2
    takes_missing_cotangents = True

    def output_spec(self, x, h0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                    reset_after=True, activation=codes.TANH, recurrent_activation=codes.SIGMOID):
        (N, T, _), U = _check_shapes("gru", x, kernel, recurrent_kernel, bias, (h0,),
                                     reset_after)
        return [(N, T, U), (N, U)]

    def forward(self, dev, x, h0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                reset_after=True, activation=codes.TANH, recurrent_activation=codes.SIGMOID):
        (N, T, F), U = _check_shapes("gru", x, kernel, recurrent_kernel, bias, (h0,),
                                     reset_after)
        h0 = _state(dev, h0, N, U)
        hs, h = dev.empty((N, T, U)), dev.empty((N, U))
        gates, hproj = dev.empty((N, T, 3 * U)), dev.empty((N, T, U))
        dev.kernels["gru_sequence_forward"](hs, h, gates, hproj, x, h0, kernel,
                                            recurrent_kernel, bias, N, T, F, U, go_backwards,
                                            reset_after, activation, recurrent_activation)
        return (hs, h), (gates, hproj, hs, x, h0, kernel, recurrent_kernel,
                         None if bias is None else bias.shape)

    def backward(self, dev, saved, grads, needs, go_backwards=False, reset_after=True,
                 activation=codes.TANH, recurrent_activation=codes.SIGMOID):
        gates, hproj, hs, x, h0, kernel, rk, bias_shape = saved
        N, T, F = x.shape
        U = rk.shape[0]
        dx = dev.empty(x.shape) if needs[0] else None
        dh0 = dev.empty((N, U)) if needs[1] else None
        dk, drk = dev.empty(kernel.shape), dev.empty(rk.shape)
        db = dev.empty(bias_shape) if bias_shape is not None and needs[4] else None
        dhs, dh = (_nz(g) for g in grads)
        dev.kernels["gru_sequence_backward"](
            dx, dh0, dk, drk, db, dhs, dh, gates, hproj, hs, x, h0, kernel, rk, N, T, F, U,
            go_backwards, reset_after, activation, recurrent_activation)
        return dx, dh0, dk if needs[2] else None, drk if needs[3] else None, db


class SimpleRNN(Op):
    """(hs, h_final) of h_t = act(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)."""

    name = "simple_rnn"
    device_native = True
    n_outputs = 2
    takes_missing_cotangents = True

    def output_spec(self, x, h0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                    activation=codes.TANH):
        (N, T, _), U = _check_shapes("simple_rnn", x, kernel, recurrent_kernel, bias, (h0,))
        return [(N, T, U), (N, U)]

    def forward(self, dev, x, h0, kernel, recurrent_kernel, bias=None, go_backwards=False,
                activation=codes.TANH):
        (N, T, F), U = _check_shapes("simple_rnn", x, kernel, recurrent_kernel, bias, (h0,))
        h0 = _state(dev, h0, N, U)
        hs, h = dev.empty((N, T, U)), dev.empty((N, U))
        dev.kernels["simple_rnn_sequence_forward"](hs, h, x, h0, kernel, recurrent_kernel, bias,
                                                   N, T, F, U, go_backwards, activation)
        return (hs, h), (hs, x, h0, kernel, recurrent_kernel, bias is not None)

    def backward(self, dev, saved, grads, needs, go_backwards=False, activation=codes.TANH):
        hs, x, h0, kernel, rk, has_bias = saved
        N, T, F = x.shape
        U = rk.shape[0]
        dx = dev.empty(x.shape) if needs[0] else None
        dh0 = dev.empty((N, U)) if needs[1] else None
        dk, drk = dev.empty(kernel.shape), dev.empty(rk.shape)
        db = dev.empty((U,)) if has_bias and needs[4] else None
        dhs, dh = (_nz(g) for g in grads)
        dev.kernels["simple_rnn_sequence_backward"](
            dx, dh0, dk, drk, db, dhs, dh, hs, x, h0, kernel, rk, N, T, F, U, go_backwards,
            activation)
        return dx, dh0, dk if needs[2] else None, drk if needs[3] else None, db


# ---- public functions ----

def recurrent_code(activation, argument="activation"):
    """The kernel code of a recurrent activation given by name or code; ValueError otherwise."""
    code = activation
    if isinstance(activation, str):
        code = codes.ACTIVATION_CODES.get(activation)
    elif activation is None:
        code = codes.LINEAR
    if code not in codes.RECURRENT_ACTIVATIONS:
        names = [n for n, c in codes.ACTIVATION_CODES.items() if c in codes.RECURRENT_ACTIVATIONS]
        raise ValueError(f"Unsupported recurrent `{argument}`: {activation!r}. The recurrent "
                         f"kernels support {names}.")
    return int(code)


def lstm(inputs, initial_h, initial_c, kernel, recurrent_kernel, bias=None, go_backwards=False,
         activation="tanh", recurrent_activation="sigmoid"):
    """LSTM over a whole sequence: returns (hs (N, T, U), h_final (N, U), c_final (N, U)).

    Args:
        inputs: (N, T, F). initial_h, initial_c: (N, U) or None (zeros).
        kernel: (F, 4U), recurrent_kernel: (U, 4U), bias: (4U,) or None; gates i, f, c, o.
        go_backwards: process time in reverse; hs is returned in processing order.
        activation, recurrent_activation: names or codes (linear, relu, sigmoid, tanh,
            hard_sigmoid).
    """
    return apply(_R["lstm"], inputs, initial_h, initial_c, kernel, recurrent_kernel, bias,
                 go_backwards=bool(go_backwards), activation=recurrent_code(activation),
                 recurrent_activation=recurrent_code(recurrent_activation,
                                                     "recurrent_activation"))


def gru(inputs, initial_h, kernel, recurrent_kernel, bias=None, go_backwards=False,
        reset_after=True, activation="tanh", recurrent_activation="sigmoid"):
    """GRU over a whole sequence: returns (hs (N, T, U), h_final (N, U)); gates z, r, h."""
    return apply(_R["gru"], inputs, initial_h, kernel, recurrent_kernel, bias,
                 go_backwards=bool(go_backwards), reset_after=bool(reset_after),
                 activation=recurrent_code(activation),
                 recurrent_activation=recurrent_code(recurrent_activation,
                                                     "recurrent_activation"))


def simple_rnn(inputs, initial_h, kernel, recurrent_kernel, bias=None, go_backwards=False,
               activation="tanh"):
    """SimpleRNN over a whole sequence: returns (hs (N, T, U), h_final (N, U))."""
    return apply(_R["simple_rnn"], inputs, initial_h, kernel, recurrent_kernel, bias,
                 go_backwards=bool(go_backwards), activation=recurrent_code(activation))
