"""Shared set-up of the Keras parity tests (test_keras_parity*.py): with KERAS_BACKEND unset,
picks Keras's torch backend when torch is importable; imports keras, or skips the importing
test module when it is absent; and the helpers every parity module uses.

    from keras_parity import ATOL, RTOL, flat, keras, randn, to_np
"""

import importlib.util
import os

import numpy as np
import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"
keras = pytest.importorskip("keras")

RTOL = ATOL = 1e-5


def to_np(t):
    """A Keras tensor (any backend) as a NumPy array."""
    return np.asarray(keras.ops.convert_to_numpy(t))


def randn(*shape, seed=0):
    """Standard normal float32 values of `shape`."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def quantized_pair(keras_model, fkeras_model, mode="int8"):
    """(keras_model, fkeras_model) after the fkeras model takes the Keras one's float weights
    and both are quantized to `mode` (their warnings silenced)."""
    import warnings

    fkeras_model.set_weights([to_np(w) for w in keras_model.get_weights()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        keras_model.quantize(mode)
        fkeras_model.quantize(mode)
    return keras_model, fkeras_model


def flat(out):
    """A layer's output as a list (a single tensor becomes a one-element list)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def assert_input_gradient_matches(keras_model, fkeras_model, x, g, rtol=1e-5, atol=1e-6):
    """d(sum(model(x) * g))/dx of the Keras model (torch backend: autograd) and of the fkeras
    model (GradientTape with output_gradients=g) agree within float32 summation-order
    rounding (each side sums its products in its own order)."""
    import fkeras
    import torch

    xt = torch.tensor(x, requires_grad=True)
    (keras_model(xt) * torch.tensor(g)).sum().backward()
    xf = fkeras.ops.convert_to_tensor(x)
    with fkeras.GradientTape() as tape:
        tape.watch(xf)
        y = fkeras_model(xf)
    dx = tape.gradient(y, xf, output_gradients=g)
    np.testing.assert_allclose(dx.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
