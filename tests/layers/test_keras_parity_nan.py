"""NaN and Inf through layers, against real Keras 3 (skipped without keras): fed inputs with NaN
(and +/-Inf) at random positions, each layer gives NaN, +Inf and -Inf exactly where Keras does.

In particular ReLU(max_value=...), every activation, and recurrent layers with relu or
hard_sigmoid activations (whose clamps once turned a NaN into a finite number).
"""

import numpy as np
import pytest
from keras_parity import keras, to_np

import fkeras
from fkeras import _C, layers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

ACTIVATIONS = ["relu", "sigmoid", "tanh", "elu", "selu", "gelu", "softplus", "softsign",
               "silu", "hard_sigmoid", "exponential", "leaky_relu", "linear", "softmax",
               "log_softmax"]

# name -> builder(layers module) for inputs of shape (2, 5, 6, 3) ("image") or (3, 4, 6) ("seq");
# 19 recurrent units run full vectors and a tail on every ISA.
LAYERS = {
    "relu_max6": ("image", lambda L: L.ReLU(max_value=6.0)),
    "relu_max2.5": ("image", lambda L: L.ReLU(max_value=2.5)),
    "relu_threshold": ("image", lambda L: L.ReLU(threshold=0.5)),
    "relu_slope_max": ("image", lambda L: L.ReLU(negative_slope=0.1, max_value=3.0)),
    "leaky_relu": ("image", lambda L: L.LeakyReLU(negative_slope=0.2)),
    "elu": ("image", lambda L: L.ELU(alpha=0.7)),
    "softmax_layer": ("image", lambda L: L.Softmax()),
    "dense_relu": ("image", lambda L: L.Dense(4, activation="relu")),
    "conv_relu": ("image", lambda L: L.Conv2D(4, 3, padding="same", activation="relu")),
    "maxpool": ("image", lambda L: L.MaxPooling2D(2)),
    "maxpool_same": ("image", lambda L: L.MaxPooling2D(3, strides=2, padding="same")),
    "avgpool": ("image", lambda L: L.AveragePooling2D(2)),
    "global_maxpool": ("image", lambda L: L.GlobalMaxPooling2D()),
    "batchnorm_infer": ("image", lambda L: L.BatchNormalization()),
    "lstm_relu": ("seq", lambda L: L.LSTM(19, activation="relu", return_sequences=True)),
    "lstm_hard_sigmoid": ("seq", lambda L: L.LSTM(19, recurrent_activation="hard_sigmoid",
                                                  return_sequences=True)),
    "lstm_default": ("seq", lambda L: L.LSTM(19, return_sequences=True)),
    "gru_hard_sigmoid": ("seq", lambda L: L.GRU(19, recurrent_activation="hard_sigmoid",
                                                return_sequences=True)),
    "gru_relu": ("seq", lambda L: L.GRU(19, activation="relu", return_sequences=True)),
    "gru_default": ("seq", lambda L: L.GRU(19, return_sequences=True)),
    "simple_rnn_relu": ("seq", lambda L: L.SimpleRNN(19, activation="relu",
                                                     return_sequences=True)),
}
for _name in ACTIVATIONS:
    LAYERS[f"activation_{_name}"] = ("image", lambda L, a=_name: L.Activation(a))

SHAPES = {"image": (2, 5, 6, 3), "seq": (3, 4, 6)}

# Where Keras's torch backend departs from IEEE arithmetic, fkeras keeps the IEEE (and NumPy
# float64) answer: (layer, input value) -> (where, the answer fkeras gives there).
TORCH_QUIRKS = {
    # torch's exact gelu gives NaN at +inf; x * Phi(x) is +inf (Keras on other backends too).
    ("activation_gelu", "inf"): (np.isposinf, np.inf),
}


def _poisoned(kind, value, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(SHAPES[kind]).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=max(1, flat.size // 12), replace=False)] = value
    return x


def _pair(build, x):
    k_in = keras.Input(batch_shape=x.shape)
    f_in = layers.Input(batch_shape=x.shape)
    k_model = keras.Model(k_in, build(keras.layers)(k_in))
    f_model = fkeras.Model(f_in, build(layers)(f_in))
    f_model.set_weights(k_model.get_weights())
    return k_model, f_model


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_non_finite_pattern_matches_keras(name, value):
    kind, build = LAYERS[name]
    x = _poisoned(kind, value, seed=len(name))
    k_model, f_model = _pair(build, x)
    with np.errstate(all="ignore"):
        want = to_np(k_model(x))
    quirk = TORCH_QUIRKS.get((name, {np.inf: "inf", -np.inf: "-inf"}.get(value, "nan")))
    if quirk is not None and keras.backend.backend() == "torch":
        where, answer = quirk
        want = np.where(where(x), answer, want)
    # Recurrent layers run on every ISA (their gate math has a copy per ISA); others on the
    # default one (tests/kernels/test_nan_propagation.py sweeps the ISAs kernel by kernel).
    isas = [i for i in ("scalar", "avx2", "avx512") if _C.isa_supported(i)]
    before = _C.cpu_isa()
    try:
        for isa in isas if kind == "seq" else [before]:
            _C.set_cpu_isa(isa)
            with np.errstate(all="ignore"):
                got = np.asarray(f_model(x))
            assert got.shape == want.shape
            for what, test in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
                g, w = test(got), test(want)
                assert np.array_equal(g, w), (
                    f"{name} ({isa}): {what} at {int((g != w).sum())} of {g.size} elements "
                    f"differs from Keras; first at {tuple(int(i) for i in np.argwhere(g != w)[0])}"
                )
    finally:
        _C.set_cpu_isa(before)
