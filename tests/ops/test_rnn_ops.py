"""Recurrent sequence ops: shapes, errors, and gradients of every output with respect to every
input (x, initial states, kernels, bias) on the float64 reference device."""

import numpy as np
import pytest
from op_testing import fd_check

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor

N, T, F, U = 2, 4, 3, 5


def _w(rng, G):
    return rng.standard_normal((F, G * U)) * 0.5, rng.standard_normal((U, G * U)) * 0.5


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("acts", [("tanh", "sigmoid"), ("relu", "hard_sigmoid")])
def test_lstm_gradients(go_backwards, acts):
    rng = np.random.default_rng(0)
    k, rk = _w(rng, 4)
    args = [rng.standard_normal((N, T, F)), rng.standard_normal((N, U)),
            rng.standard_normal((N, U)), k, rk, rng.standard_normal(4 * U)]
    fd_check(lambda *a: ops.lstm(*a, go_backwards=go_backwards, activation=acts[0],
                                 recurrent_activation=acts[1]),
             args, wrt=tuple(range(6)), rng=rng)


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_gru_gradients(reset_after, go_backwards):
    rng = np.random.default_rng(1)
    k, rk = _w(rng, 3)
    bias = rng.standard_normal((2, 3 * U) if reset_after else (3 * U,))
    args = [rng.standard_normal((N, T, F)), rng.standard_normal((N, U)), k, rk, bias]
    fd_check(lambda *a: ops.gru(*a, go_backwards=go_backwards, reset_after=reset_after),
             args, wrt=tuple(range(5)), rng=rng)


@pytest.mark.parametrize("go_backwards", [False, True])
def test_simple_rnn_gradients(go_backwards):
    rng = np.random.default_rng(2)
    k, rk = _w(rng, 1)
    args = [rng.standard_normal((N, T, F)), rng.standard_normal((N, U)), k, rk,
            rng.standard_normal(U)]
    fd_check(lambda *a: ops.simple_rnn(*a, go_backwards=go_backwards), args,
             wrt=tuple(range(5)), rng=rng)


def test_zero_initial_state_and_no_bias():
    rng = np.random.default_rng(3)
    k, rk = _w(rng, 4)
    x = rng.standard_normal((N, T, F))
    fd_check(lambda x_, k_, r_: ops.lstm(x_, None, None, k_, r_, None), [x, k, rk],
             wrt=(0, 1, 2), rng=rng)
    hs0, h0, c0 = ops.lstm(x, None, None, k, rk)
    hs1, h1, c1 = ops.lstm(x, np.zeros((N, U)), np.zeros((N, U)), k, rk, np.zeros(4 * U))
    np.testing.assert_allclose(hs0, hs1)
    np.testing.assert_allclose(h0, hs0[:, -1])
    np.testing.assert_allclose(c0, c1)


def test_symbolic_shapes_and_errors():
    x = KerasTensor((None, None, F))
    hs, h, c = ops.lstm(x, None, None, np.zeros((F, 4 * U)), np.zeros((U, 4 * U)))
    assert (hs.shape, h.shape, c.shape) == ((None, None, U), (None, U), (None, U))
    hs, h = ops.gru(x, None, np.zeros((F, 3 * U)), np.zeros((U, 3 * U)), np.zeros((2, 3 * U)))
    assert (hs.shape, h.shape) == ((None, None, U), (None, U))
    with pytest.raises(ValueError, match=r"bias must have shape \(15,\)"):
        ops.gru(x, None, np.zeros((F, 3 * U)), np.zeros((U, 3 * U)), np.zeros((2, 3 * U)),
                reset_after=False)
    with pytest.raises(ValueError, match=r"kernel must have shape \(3, 20\)"):
        ops.lstm(x, None, None, np.zeros((4, 4 * U)), np.zeros((U, 4 * U)))
    with pytest.raises(ValueError, match="Unsupported recurrent `activation`: 'gelu'"):
        ops.simple_rnn(x, None, np.zeros((F, U)), np.zeros((U, U)), activation="gelu")


@pytest.mark.parametrize("device", ["cpu", "reference"])
def test_lstm_saves_state_only_when_recorded(device):
    # Outside a tape nothing can record the call: the forward saves no gates or cell states
    # (the kernels skip writing them) and its outputs are those of a recorded call, whose
    # gradient still matches finite differences (test_lstm_gradients).
    import fkeras
    from fkeras.backend import devices
    from fkeras.ops.registry import REGISTRY

    rng = np.random.default_rng(4)
    k, rk = _w(rng, 4)
    args = [rng.standard_normal((N, T, F)), rng.standard_normal((N, U)),
            rng.standard_normal((N, U)), k, rk, rng.standard_normal(4 * U)]
    dev = devices.get_device(device)
    arrays = [a.astype(dev.dtype) for a in args]
    op = REGISTRY["lstm"]
    plain, saved = op.forward(dev, *arrays, go_backwards=True)
    assert saved is None
    with fkeras.GradientTape():
        recorded, saved = op.forward(dev, *arrays, go_backwards=True)
    assert saved is not None and saved[0].shape == (N, T, 4 * U)
    for a, b in zip(plain, recorded):
        np.testing.assert_array_equal(a, b)
    with fkeras.device(device):
        x = fkeras.Variable(arrays[0])
        with fkeras.GradientTape() as tape:
            hs, h, c = ops.lstm(x, *arrays[1:], go_backwards=True)
            loss = ops.sum(hs) + ops.sum(c)
        assert tape.gradient(loss, x) is not None
