"""The per-step path of the recurrent layers, composed of fkeras ops (differentiable by the
tape), for what the fused sequence kernels do not do:

- masks (Masking, Embedding(mask_zero=True)): at a masked step the states are carried over
  unchanged and the output repeats the previous output (zeros before the first unmasked step,
  or zeros at every masked step with zero_output_for_mask), as Keras 3's backend `rnn`;
- recurrent_dropout in training, and input dropout with implementation=1: Keras's
  implementation 1, one dropout mask per gate (LSTM 4, GRU 3; SimpleRNN 1) for the inputs and
  one per gate for the previous output h, each drawn once per call and shared by every step.

The input projection of every step is one matmul per gate block before the loop; each step
then costs one recurrent matmul per gate block plus the gate arithmetic.
"""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices


def _cols(w, g, U):
    """Columns [g*U, (g+1)*U) of a (rows, G*U) weight, or of a (G*U,) bias."""
    if len(w.shape) == 1:
        return ops.getitem(w, slice(g * U, (g + 1) * U))
    return ops.getitem(w, (slice(None), slice(g * U, (g + 1) * U)))


def project_inputs(x, kernel, bias, G, U, input_masks):
    """(N, T, G*U): x @ kernel + bias, gate block g from x * input_masks[g] when masks are
    given (masks (N, 1, F), one per gate)."""
    N, T, F = x.shape

    def project(inputs, k):  # (N*T, F) @ k as one 2-D GEMM
        return ops.reshape(ops.matmul(ops.reshape(inputs, (N * T, F)), k), (N, T, -1))

    if input_masks is None:
        z = project(x, kernel)
        return z if bias is None else ops.add(z, bias)
    blocks = []
    for g in range(G):
        zg = project(ops.multiply(x, input_masks[g]), _cols(kernel, g, U))
        blocks.append(zg if bias is None else ops.add(zg, _cols(bias, g, U)))
    return ops.concatenate(blocks, axis=-1)


def _recurrent(h, rk_blocks, rec_masks):
    """[h_g @ R_g] for each gate block, h_g = h * rec_masks[g] when masks are given."""
    return [ops.matmul(h if rec_masks is None else ops.multiply(h, rec_masks[g]), r)
            for g, r in enumerate(rk_blocks)]


def lstm_step(layer, zx, states, rk_blocks, rec_masks):
    U, act, rec = layer.units, layer.activation, layer.recurrent_activation
    h, c = states
    rz = _recurrent(h, rk_blocks, rec_masks)
    z = [ops.add(_cols(zx, g, U), rz[g]) for g in range(4)]
    i, f, o = rec(z[0]), rec(z[1]), rec(z[3])
    c = ops.add(ops.multiply(f, c), ops.multiply(i, act(z[2])))
    h = ops.multiply(o, act(c))
    return h, [h, c]


def gru_step(layer, zx, states, rk_blocks, rec_masks, rec_bias):
    U, act, rec = layer.units, layer.activation, layer.recurrent_activation
    (h,) = states
    xz, xr, xh = (_cols(zx, g, U) for g in range(3))
    hm = [h if rec_masks is None else ops.multiply(h, rec_masks[g]) for g in range(3)]
    rz, rr = ops.matmul(hm[0], rk_blocks[0]), ops.matmul(hm[1], rk_blocks[1])
    if rec_bias is not None:
        rz, rr = ops.add(rz, rec_bias[0]), ops.add(rr, rec_bias[1])
    z, r = rec(ops.add(xz, rz)), rec(ops.add(xr, rr))
    if layer.reset_after:
        rh = ops.matmul(hm[2], rk_blocks[2])
        if rec_bias is not None:
            rh = ops.add(rh, rec_bias[2])
        hh = act(ops.add(xh, ops.multiply(r, rh)))
    else:
        hh = act(ops.add(xh, ops.matmul(ops.multiply(r, hm[2]), rk_blocks[2])))
    h = ops.add(ops.multiply(z, h), ops.multiply(ops.subtract(1.0, z), hh))
    return h, [h]


def simple_rnn_step(layer, zx, states, rk_blocks, rec_masks):
    (h,) = states
    h = layer.activation(ops.add(zx, _recurrent(h, rk_blocks, rec_masks)[0]))
    return h, [h]


def _blend(keep, new, old):
    """keep * new + (1 - keep) * old, keep (N, 1) of 0/1 floats."""
    return ops.add(ops.multiply(keep, new), ops.multiply(1.0 - keep, old))


def run_steps(layer, x, states, mask, input_masks, rec_masks):
    """Runs `layer`'s cell over x (N, T, F) step by step.

    Returns (hs (N, T, U) in processing order or None when not return_sequences,
    last output (N, U), final states).
    """
    N, T = x.shape[0], x.shape[1]
    U, G = layer.units, layer.gates
    bias, rec_bias = layer.bias, None
    if layer.gates == 3 and layer.reset_after and bias is not None:
        bias, rb = ops.getitem(bias, 0), ops.getitem(bias, 1)
        rec_bias = [_cols(rb, g, U) for g in range(3)]
    zx = project_inputs(x, layer.kernel, bias, G, U, input_masks)
    rk_blocks = [layer.recurrent_kernel] if G == 1 else \
        [_cols(layer.recurrent_kernel, g, U) for g in range(G)]
    keep = None if mask is None else _devices.host_array(mask, bool)
    prev_out = np.zeros((N, U), np.float32)
    outs = []
    for t in (range(T - 1, -1, -1) if layer.go_backwards else range(T)):
        zt = ops.getitem(zx, (slice(None), t))
        if G == 3:
            out, new_states = gru_step(layer, zt, states, rk_blocks, rec_masks, rec_bias)
        elif G == 4:
            out, new_states = lstm_step(layer, zt, states, rk_blocks, rec_masks)
        else:
            out, new_states = simple_rnn_step(layer, zt, states, rk_blocks, rec_masks)
        if keep is not None:
            k = keep[:, t:t + 1].astype(np.float32)
            new_states = [_blend(k, s1, s0) for s1, s0 in zip(new_states, states)]
            out = ops.multiply(k, out) if layer.zero_output_for_mask else \
                _blend(k, out, prev_out)
        states, prev_out = new_states, out
        if layer.return_sequences:
            outs.append(ops.expand_dims(out, 1))
    hs = ops.concatenate(outs, axis=1) if layer.return_sequences else None
    return hs, prev_out, states
