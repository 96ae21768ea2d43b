"""Reference recurrent kernels: LSTM, GRU and SimpleRNN (float64 spec of cpp/rnn/).

Signatures and layouts as cpp/include/fkeras/kernels.h: x (N, T, F), kernel (F, G*U),
recurrent_kernel (U, G*U), gates in Keras order (LSTM i, f, c, o; GRU z, r, h). Step s reads
x[:, s] (x[:, T-1-s] with go_backwards) and writes hs[:, s]; saved state is indexed by step.
Written as a plain loop over steps: the spec, not a fast path. Derivatives of activations are
taken from their outputs (activation_math.derivative_from_output), as the compiled kernels do.
"""

import numpy as np

from fkeras.backend.reference import activation_math


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


def _act(z, code):
    return activation_math.forward(z, code)


def _dact(y, code):
    return activation_math.derivative_from_output(y, code)


def _time_index(s, T, go_backwards):
    return T - 1 - s if go_backwards else s


def _write(out, value, *shape):
    if out is not None:
        out.reshape(shape)[...] = np.reshape(value, shape)


# ---------------------------------------------------------------------------------------------
# LSTM
# ---------------------------------------------------------------------------------------------


def _lstm_forward(x, h0, c0, kernel, recurrent_kernel, bias, N, T, F, U, go_backwards, act,
                  rec_act):
    """Returns hs, gates, cs (float64, step order) and the final h, c."""
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, 4 * U), _f64(recurrent_kernel, U, 4 * U)
    b = np.zeros(4 * U) if bias is None else _f64(bias, 4 * U)
    h, c = _f64(h0, N, U), _f64(c0, N, U)
    hs, cs, gates = np.zeros((N, T, U)), np.zeros((N, T, U)), np.zeros((N, T, 4 * U))
    for s in range(T):
        z = x[:, _time_index(s, T, go_backwards)] @ w + h @ rw + b
        i = _act(z[:, :U], rec_act)
        f = _act(z[:, U:2 * U], rec_act)
        g = _act(z[:, 2 * U:3 * U], act)
        o = _act(z[:, 3 * U:], rec_act)
        c = f * c + i * g
        h = o * _act(c, act)
        gates[:, s] = np.concatenate([i, f, g, o], axis=1)
        cs[:, s], hs[:, s] = c, h
    return hs, gates, cs, h, c


def lstm_sequence_forward(hs, h_final, c_final, gates, cs, x, h0, c0, kernel, recurrent_kernel,
                          bias, N, T, F, U, go_backwards, activation, recurrent_activation):
    hs_, gates_, cs_, h, c = _lstm_forward(x, h0, c0, kernel, recurrent_kernel, bias, N, T, F, U,
                                           go_backwards, activation, recurrent_activation)
    _write(hs, hs_, N, T, U)
    _write(h_final, h, N, U)
    _write(c_final, c, N, U)
    _write(gates, gates_, N, T, 4 * U)
    _write(cs, cs_, N, T, U)


def _lstm_backward(dhs, dh_final, dc_final, gates, cs, hs, x, h0, c0, kernel, recurrent_kernel,
                   N, T, F, U, go_backwards, act, rec_act):
    """Returns dx, dh0, dc0, dkernel, drecurrent_kernel, dbias (float64)."""
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, 4 * U), _f64(recurrent_kernel, U, 4 * U)
    gates, cs = _f64(gates, N, T, 4 * U), _f64(cs, N, T, U)
    hs = _f64(hs, N, T, U) if T > 1 else None
    h0, c0 = _f64(h0, N, U), _f64(c0, N, U)
    dh = np.zeros((N, U)) if dh_final is None else _f64(dh_final, N, U).copy()
    dc = np.zeros((N, U)) if dc_final is None else _f64(dc_final, N, U).copy()
    dx, dw = np.zeros((N, T, F)), np.zeros((F, 4 * U))
    drw, db = np.zeros((U, 4 * U)), np.zeros(4 * U)
    for s in reversed(range(T)):
        t = _time_index(s, T, go_backwards)
        if dhs is not None:
            dh = dh + _f64(dhs, N, T, U)[:, s]
        i, f = gates[:, s, :U], gates[:, s, U:2 * U]
        g, o = gates[:, s, 2 * U:3 * U], gates[:, s, 3 * U:]
        h_prev = hs[:, s - 1] if s > 0 else h0
        c_prev = cs[:, s - 1] if s > 0 else c0
        tc = _act(cs[:, s], act)
        dc = dc + dh * o * _dact(tc, act)
        dz = np.concatenate([
            dc * g * _dact(i, rec_act),
            dc * c_prev * _dact(f, rec_act),
            dc * i * _dact(g, act),
            dh * tc * _dact(o, rec_act),
        ], axis=1)
        dx[:, t] = dz @ w.T
        dw += x[:, t].T @ dz
        drw += h_prev.T @ dz
        db += dz.sum(axis=0)
        dh = dz @ rw.T
        dc = dc * f
    return dx, dh, dc, dw, drw, db


def lstm_sequence_backward(dx, dh0, dc0, dkernel, drecurrent_kernel, dbias, dhs, dh_final,
                           dc_final, gates, cs, hs, x, h0, c0, kernel, recurrent_kernel, N, T, F,
                           U, go_backwards, activation, recurrent_activation):
    dx_, dh, dc, dw, drw, db = _lstm_backward(
        dhs, dh_final, dc_final, gates, cs, hs, x, h0, c0, kernel, recurrent_kernel, N, T, F, U,
        go_backwards, activation, recurrent_activation)
    _write(dx, dx_, N, T, F)
    _write(dh0, dh, N, U)
    _write(dc0, dc, N, U)
    _write(dkernel, dw, F, 4 * U)
    _write(drecurrent_kernel, drw, U, 4 * U)
    _write(dbias, db, 4 * U)


def lstm_cell_forward(h, c, gates, x, h_prev, c_prev, kernel, recurrent_kernel, bias, N, F, U,
                      activation, recurrent_activation):
    hs_, gates_, cs_, _, _ = _lstm_forward(x, h_prev, c_prev, kernel, recurrent_kernel, bias, N,
                                           1, F, U, False, activation, recurrent_activation)
    _write(h, hs_, N, U)
    _write(c, cs_, N, U)
    _write(gates, gates_, N, 4 * U)


def lstm_cell_backward(dx, dh_prev, dc_prev, dkernel, drecurrent_kernel, dbias, dh, dc, gates, c,
                       x, h_prev, c_prev, kernel, recurrent_kernel, N, F, U, activation,
                       recurrent_activation):
    dx_, dh_, dc_, dw, drw, db = _lstm_backward(
        None, dh, dc, gates, c, None, x, h_prev, c_prev, kernel, recurrent_kernel, N, 1, F, U,
        False, activation, recurrent_activation)
    _write(dx, dx_, N, F)
    _write(dh_prev, dh_, N, U)
    _write(dc_prev, dc_, N, U)
    _write(dkernel, dw, F, 4 * U)
    _write(drecurrent_kernel, drw, U, 4 * U)
    _write(dbias, db, 4 * U)


# ---------------------------------------------------------------------------------------------
# GRU
# ---------------------------------------------------------------------------------------------


def _gru_biases(bias, U, reset_after):
    """(input bias (3U), recurrent bias (3U)) in float64; zeros where absent."""
    if bias is None:
        return np.zeros(3 * U), np.zeros(3 * U)
    if reset_after:
        b = _f64(bias, 2, 3 * U)
        return b[0], b[1]
    return _f64(bias, 3 * U), np.zeros(3 * U)


def _gru_forward(x, h0, kernel, recurrent_kernel, bias, N, T, F, U, go_backwards, reset_after,
                 act, rec_act):
    """Returns hs, gates, hproj (float64, step order) and the final h."""
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, 3 * U), _f64(recurrent_kernel, U, 3 * U)
    b_in, b_rec = _gru_biases(bias, U, reset_after)
    h = _f64(h0, N, U)
    hs, hproj, gates = np.zeros((N, T, U)), np.zeros((N, T, U)), np.zeros((N, T, 3 * U))
    for s in range(T):
        xp = x[:, _time_index(s, T, go_backwards)] @ w + b_in
        if reset_after:
            rp = h @ rw + b_rec
            z = _act(xp[:, :U] + rp[:, :U], rec_act)
            r = _act(xp[:, U:2 * U] + rp[:, U:2 * U], rec_act)
            proj = rp[:, 2 * U:]
        else:
            rp = h @ rw[:, :2 * U]
            z = _act(xp[:, :U] + rp[:, :U], rec_act)
            r = _act(xp[:, U:2 * U] + rp[:, U:], rec_act)
            proj = (r * h) @ rw[:, 2 * U:]
        hh = _act(xp[:, 2 * U:] + (r * proj if reset_after else proj), act)
        h = z * h + (1.0 - z) * hh
        gates[:, s] = np.concatenate([z, r, hh], axis=1)
        hproj[:, s], hs[:, s] = proj, h
    return hs, gates, hproj, h


def gru_sequence_forward(hs, h_final, gates, hproj, x, h0, kernel, recurrent_kernel, bias, N, T,
                         F, U, go_backwards, reset_after, activation, recurrent_activation):
    hs_, gates_, hproj_, h = _gru_forward(x, h0, kernel, recurrent_kernel, bias, N, T, F, U,
                                          go_backwards, reset_after, activation,
                                          recurrent_activation)
    _write(hs, hs_, N, T, U)
    _write(h_final, h, N, U)
    _write(gates, gates_, N, T, 3 * U)
    _write(hproj, hproj_, N, T, U)


def _gru_backward(dhs, dh_final, gates, hproj, hs, x, h0, kernel, recurrent_kernel, N, T, F, U,
                  go_backwards, reset_after, act, rec_act):
    """Returns dx, dh0, dkernel, drecurrent_kernel and (dbias_in, dbias_rec) (float64)."""
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, 3 * U), _f64(recurrent_kernel, U, 3 * U)
    gates, hproj = _f64(gates, N, T, 3 * U), _f64(hproj, N, T, U)
    hs = _f64(hs, N, T, U) if T > 1 else None
    h0 = _f64(h0, N, U)
    dh = np.zeros((N, U)) if dh_final is None else _f64(dh_final, N, U).copy()
    dx, dw, drw = np.zeros((N, T, F)), np.zeros((F, 3 * U)), np.zeros((U, 3 * U))
    db_in, db_rec = np.zeros(3 * U), np.zeros(3 * U)
    for s in reversed(range(T)):
        t = _time_index(s, T, go_backwards)
        if dhs is not None:
            dh = dh + _f64(dhs, N, T, U)[:, s]
        z, r, hh = gates[:, s, :U], gates[:, s, U:2 * U], gates[:, s, 2 * U:]
        h_prev = hs[:, s - 1] if s > 0 else h0
        dz = dh * (h_prev - hh) * _dact(z, rec_act)
        dhh = dh * (1.0 - z) * _dact(hh, act)
        dh_prev = dh * z
        if reset_after:
            dr = dhh * hproj[:, s] * _dact(r, rec_act)
            drp = np.concatenate([dz, dr, dhh * r], axis=1)  # recurrent projection
            dh_prev = dh_prev + drp @ rw.T
            drw += h_prev.T @ drp
            db_rec += drp.sum(axis=0)
        else:
            drh = dhh @ rw[:, 2 * U:].T  # gradient of r * h_prev
            dr = drh * h_prev * _dact(r, rec_act)
            dzr = np.concatenate([dz, dr], axis=1)
            dh_prev = dh_prev + drh * r + dzr @ rw[:, :2 * U].T
            drw[:, :2 * U] += h_prev.T @ dzr
            drw[:, 2 * U:] += (r * h_prev).T @ dhh
        dxp = np.concatenate([dz, dr, dhh], axis=1)  # input projection
        dx[:, t] = dxp @ w.T
        dw += x[:, t].T @ dxp
        db_in += dxp.sum(axis=0)
        dh = dh_prev
    return dx, dh, dw, drw, (db_in, db_rec)


def _write_gru_dbias(dbias, db, U, reset_after):
    if dbias is None:
        return
    if reset_after:
        dbias.reshape(2, 3 * U)[...] = np.stack(db)
    else:
        dbias.reshape(3 * U)[...] = db[0]


def gru_sequence_backward(dx, dh0, dkernel, drecurrent_kernel, dbias, dhs, dh_final, gates, hproj,
                          hs, x, h0, kernel, recurrent_kernel, N, T, F, U, go_backwards,
                          reset_after, activation, recurrent_activation):
    dx_, dh, dw, drw, db = _gru_backward(dhs, dh_final, gates, hproj, hs, x, h0, kernel,
                                         recurrent_kernel, N, T, F, U, go_backwards, reset_after,
                                         activation, recurrent_activation)
    _write(dx, dx_, N, T, F)
    _write(dh0, dh, N, U)
    _write(dkernel, dw, F, 3 * U)
    _write(drecurrent_kernel, drw, U, 3 * U)
    _write_gru_dbias(dbias, db, U, reset_after)


def gru_cell_forward(h, gates, hproj, x, h_prev, kernel, recurrent_kernel, bias, N, F, U,
                     reset_after, activation, recurrent_activation):
    hs_, gates_, hproj_, _ = _gru_forward(x, h_prev, kernel, recurrent_kernel, bias, N, 1, F, U,
                                          False, reset_after, activation, recurrent_activation)
    _write(h, hs_, N, U)
    _write(gates, gates_, N, 3 * U)
    _write(hproj, hproj_, N, U)


def gru_cell_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, dh, gates, hproj, x,
                      h_prev, kernel, recurrent_kernel, N, F, U, reset_after, activation,
                      recurrent_activation):
    dx_, dh_, dw, drw, db = _gru_backward(None, dh, gates, hproj, None, x, h_prev, kernel,
                                          recurrent_kernel, N, 1, F, U, False, reset_after,
                                          activation, recurrent_activation)
    _write(dx, dx_, N, F)
    _write(dh_prev, dh_, N, U)
    _write(dkernel, dw, F, 3 * U)
    _write(drecurrent_kernel, drw, U, 3 * U)
    _write_gru_dbias(dbias, db, U, reset_after)


# ---------------------------------------------------------------------------------------------
# SimpleRNN
# ---------------------------------------------------------------------------------------------


def _simple_rnn_forward(x, h0, kernel, recurrent_kernel, bias, N, T, F, U, go_backwards, act):
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, U), _f64(recurrent_kernel, U, U)
    b = np.zeros(U) if bias is None else _f64(bias, U)
    h = _f64(h0, N, U)
    hs = np.zeros((N, T, U))
    for s in range(T):
        h = _act(x[:, _time_index(s, T, go_backwards)] @ w + h @ rw + b, act)
        hs[:, s] = h
    return hs, h


def simple_rnn_sequence_forward(hs, h_final, x, h0, kernel, recurrent_kernel, bias, N, T, F, U,
                                go_backwards, activation):
    hs_, h = _simple_rnn_forward(x, h0, kernel, recurrent_kernel, bias, N, T, F, U, go_backwards,
                                 activation)
    _write(hs, hs_, N, T, U)
    _write(h_final, h, N, U)


def _simple_rnn_backward(dhs, dh_final, hs, x, h0, kernel, recurrent_kernel, N, T, F, U,
                         go_backwards, act):
    x = _f64(x, N, T, F)
    w, rw = _f64(kernel, F, U), _f64(recurrent_kernel, U, U)
    hs, h0 = _f64(hs, N, T, U), _f64(h0, N, U)
    dh = np.zeros((N, U)) if dh_final is None else _f64(dh_final, N, U).copy()
    dx, dw, drw, db = np.zeros((N, T, F)), np.zeros((F, U)), np.zeros((U, U)), np.zeros(U)
    for s in reversed(range(T)):
        t = _time_index(s, T, go_backwards)
        if dhs is not None:
            dh = dh + _f64(dhs, N, T, U)[:, s]
        dz = dh * _dact(hs[:, s], act)
        h_prev = hs[:, s - 1] if s > 0 else h0
        dx[:, t] = dz @ w.T
        dw += x[:, t].T @ dz
        drw += h_prev.T @ dz
        db += dz.sum(axis=0)
        dh = dz @ rw.T
    return dx, dh, dw, drw, db


def simple_rnn_sequence_backward(dx, dh0, dkernel, drecurrent_kernel, dbias, dhs, dh_final, hs, x,
                                 h0, kernel, recurrent_kernel, N, T, F, U, go_backwards,
                                 activation):
    dx_, dh, dw, drw, db = _simple_rnn_backward(dhs, dh_final, hs, x, h0, kernel,
                                                recurrent_kernel, N, T, F, U, go_backwards,
                                                activation)
    _write(dx, dx_, N, T, F)
    _write(dh0, dh, N, U)
    _write(dkernel, dw, F, U)
    _write(drecurrent_kernel, drw, U, U)
    _write(dbias, db, U)


def simple_rnn_cell_forward(h, x, h_prev, kernel, recurrent_kernel, bias, N, F, U, activation):
    hs_, _ = _simple_rnn_forward(x, h_prev, kernel, recurrent_kernel, bias, N, 1, F, U, False,
                                 activation)
    _write(h, hs_, N, U)


def simple_rnn_cell_backward(dx, dh_prev, dkernel, drecurrent_kernel, dbias, dh, h, x, h_prev,
                             kernel, recurrent_kernel, N, F, U, activation):
    dx_, dh_, dw, drw, db = _simple_rnn_backward(None, dh, h, x, h_prev, kernel,
                                                 recurrent_kernel, N, 1, F, U, False, activation)
    _write(dx, dx_, N, F)
    _write(dh_prev, dh_, N, U)
    _write(dkernel, dw, F, U)
    _write(drecurrent_kernel, drw, U, U)
    _write(dbias, db, U)


KERNELS = {
    "lstm_sequence_forward": lstm_sequence_forward,
    "lstm_sequence_backward": lstm_sequence_backward,
    "lstm_cell_forward": lstm_cell_forward,
    "lstm_cell_backward": lstm_cell_backward,
    "gru_sequence_forward": gru_sequence_forward,
    "gru_sequence_backward": gru_sequence_backward,
    "gru_cell_forward": gru_cell_forward,
    "gru_cell_backward": gru_cell_backward,
    "simple_rnn_sequence_forward": simple_rnn_sequence_forward,
    "simple_rnn_sequence_backward": simple_rnn_sequence_backward,
    "simple_rnn_cell_forward": simple_rnn_cell_forward,
    "simple_rnn_cell_backward": simple_rnn_cell_backward,
}
