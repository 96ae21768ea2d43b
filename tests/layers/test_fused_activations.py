"""Dense and Conv2D fuse their activation into the kernel: for every activation name the
fused layer must equal the unfused linear layer followed by the activation function (catches
a fused code run with the wrong alpha, e.g. ELU or LeakyReLU), values and gradients."""

import numpy as np
import pytest

import fkeras
from fkeras import activations, layers

NAMES = ["linear", "relu", "sigmoid", "tanh", "elu", "selu", "softplus", "softsign",
         "hard_sigmoid", "exponential", "leaky_relu", "swish", "gelu", "softmax"]


def _pair(cls, name, **kw):
    fused = cls(activation=name, **kw)
    plain = cls(activation=None, **kw)
    return fused, plain


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["dense", "conv2d"])
def test_fused_equals_layer_then_activation(name, kind):
    rng = np.random.default_rng(0)
    if kind == "dense":
        x = rng.standard_normal((4, 3)).astype(np.float32)
        fused, plain = _pair(layers.Dense, name, units=5)
    else:
        x = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
        fused, plain = _pair(layers.Conv2D, name, filters=4, kernel_size=2, padding="same")
    fused.build(x.shape)
    plain.build(x.shape)
    plain.set_weights(fused.get_weights())
    fn = activations.get(name)
    with fkeras.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y_fused = fused(x)
        y_plain = fn(plain(x))
    np.testing.assert_allclose(y_fused, y_plain, rtol=1e-5, atol=1e-6)
    cot = rng.standard_normal(np.shape(y_fused)).astype(np.float32)
    g_fused = tape.gradient(y_fused, [x] + fused.trainable_weights, output_gradients=cot)
    g_plain = tape.gradient(y_plain, [x] + plain.trainable_weights, output_gradients=cot)
    for a, b in zip(g_fused, g_plain):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
