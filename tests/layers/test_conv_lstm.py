"""ConvLSTM1D/2D/3D: catalogue checks, outputs and gradients against a NumPy float64 step
loop, against real Keras 3 (torch backend) with copied weights, configs and error texts."""

import numpy as np
import pytest

import fkeras
from fkeras import layers
from layer_testing import run_layer_test

R = np.random.default_rng(0)

# name: (class, kwargs, input shape, expected output shape(s))
CASES = {
    "1d": ("ConvLSTM1D", dict(filters=4, kernel_size=2, strides=2), (2, 4, 9, 3), (2, 4, 4)),
    "1d_seq_same": ("ConvLSTM1D", dict(filters=2, kernel_size=3, padding="same",
                                       return_sequences=True), (2, 3, 6, 2), (2, 3, 6, 2)),
    "2d_same_seq": ("ConvLSTM2D", dict(filters=5, kernel_size=3, padding="same",
                                       return_sequences=True), (2, 4, 6, 6, 3),
                    (2, 4, 6, 6, 5)),
    "2d_state": ("ConvLSTM2D", dict(filters=3, kernel_size=(2, 3), return_state=True),
                 (2, 3, 5, 6, 2), [(2, 4, 4, 3)] * 3),
    "2d_channels_first_back": ("ConvLSTM2D", dict(filters=5, kernel_size=3,
                                                  data_format="channels_first",
                                                  go_backwards=True, return_sequences=True),
                               (2, 4, 3, 6, 6), (2, 4, 5, 4, 4)),
    "2d_dilated_nobias": ("ConvLSTM2D", dict(filters=2, kernel_size=3, dilation_rate=2,
                                             padding="same", use_bias=False),
                          (2, 4, 7, 7, 3), (2, 7, 7, 2)),
    "2d_relu_hard_sigmoid": ("ConvLSTM2D", dict(filters=2, kernel_size=2, activation="relu",
                                                recurrent_activation="hard_sigmoid",
                                                unit_forget_bias=False), (1, 3, 4, 4, 2),
                             (1, 3, 3, 2)),
    "3d": ("ConvLSTM3D", dict(filters=3, kernel_size=2, return_state=True),
           (2, 3, 4, 5, 4, 2), [(2, 3, 4, 3, 3)] * 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_catalogue_checks(name):
    cls, kwargs, shape, expected = CASES[name]
    n_weights = 3 if kwargs.get("use_bias", True) else 2
    run_layer_test(getattr(layers, cls), kwargs, input_shape=shape,
                   expected_output_shape=expected, expected_num_trainable_weights=n_weights,
                   expected_num_non_trainable_weights=0, supports_masking=True)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _conv2d_same(x, w):
    """(N, H, W, C) * (R, S, C, K), stride 1, 'same' (TensorFlow's split), float64."""
    R_, S, _, K = w.shape
    ph, pw = R_ - 1, S - 1
    xp = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    N, H, W, _ = x.shape
    out = np.zeros((N, H, W, K))
    for r in range(R_):
        for s in range(S):
            out += np.einsum("nhwc,ck->nhwk", xp[:, r:r + H, s:s + W], w[r, s])
    return out


def _reference(x, kernel, rec, bias):
    """ConvLSTM2D with 'same' padding, stride 1, channels_last, return_sequences, float64."""
    N, T = x.shape[:2]
    F = rec.shape[-2]
    h = np.zeros(x.shape[:1] + x.shape[2:4] + (F,))
    c = np.zeros_like(h)
    outs = []
    for t in range(T):
        z = _conv2d_same(x[:, t], kernel) + bias + _conv2d_same(h, rec)
        i, f, g, o = (z[..., k * F:(k + 1) * F] for k in range(4))
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs, 1)


def test_matches_float64_reference_on_reference_device():
    x = R.standard_normal((2, 3, 5, 5, 2))
    layer = layers.ConvLSTM2D(3, 3, padding="same", return_sequences=True)
    with fkeras.device("reference"):
        layer.build(x.shape)
        kernel, rec, bias = (R.standard_normal(w.shape) * 0.5 for w in layer.get_weights())
        layer.set_weights([kernel, rec, bias])
        y = np.asarray(layer(x))
    np.testing.assert_allclose(y, _reference(x, kernel, rec, bias), atol=1e-5)


def test_input_and_weight_gradients_vs_finite_differences():
    """Tape gradients (input and every weight) against central differences, float64, with a
    random cotangent and a random direction per argument."""
    layer = layers.ConvLSTM2D(2, 2, padding="same", return_sequences=True)
    rng = np.random.default_rng(1)
    with fkeras.device("reference"):
        xs = rng.standard_normal((2, 3, 4, 4, 2))
        layer.build(xs.shape)
        layer.set_weights([w + 0.1 for w in layer.get_weights()])
        with fkeras.GradientTape() as tape:
            tape.watch(xs)
            y = layer(xs)
        cot = rng.standard_normal(np.shape(y))
        grads = tape.gradient(y, [xs] + layer.trainable_weights, output_gradients=cot)
        eps = 1e-6
        v = rng.standard_normal(xs.shape)
        numeric = (np.sum(cot * np.asarray(layer(xs + eps * v)))
                   - np.sum(cot * np.asarray(layer(xs - eps * v)))) / (2 * eps)
        np.testing.assert_allclose(np.sum(np.asarray(grads[0]) * v), numeric, rtol=1e-6)
        for w, g in zip(layer.trainable_weights, grads[1:]):
            v = rng.standard_normal(w.shape)
            base = np.array(w.numpy(), np.float64)
            vals = []
            for sign in (1, -1):
                w.assign(base + sign * eps * v)
                vals.append(float(np.sum(cot * np.asarray(layer(xs)))))
            w.assign(base)
            numeric = (vals[0] - vals[1]) / (2 * eps)
            np.testing.assert_allclose(float(np.sum(np.asarray(g) * v)), numeric, rtol=1e-6)


def test_mask_keeps_states_and_repeats_output():
    x = R.standard_normal((2, 4, 3, 3, 2)).astype("float32")
    layer = layers.ConvLSTM2D(2, 2, return_sequences=True)
    mask = np.array([[1, 0, 1, 1], [1, 1, 0, 0]], bool)
    y = np.asarray(layer(x, mask=mask))
    np.testing.assert_array_equal(y[0, 1], y[0, 0])
    np.testing.assert_array_equal(y[1, 3], y[1, 1])
    full = np.asarray(layer(x[1:2, :2]))
    np.testing.assert_allclose(y[1, 3], full[0, -1], atol=1e-6)


def test_stateful_carries_states():
    x = R.standard_normal((2, 4, 3, 3, 2)).astype("float32")
    a = layers.ConvLSTM2D(2, 2, stateful=True)
    b = layers.ConvLSTM2D(2, 2)
    a.build(x.shape)
    b.build(x.shape)
    b.set_weights(a.get_weights())
    a(x[:, :2])
    y = np.asarray(a(x[:, 2:]))
    np.testing.assert_allclose(y, np.asarray(b(x)), atol=1e-6)
    a.reset_state()
    np.testing.assert_allclose(np.asarray(a(x)), np.asarray(b(x)), atol=1e-6)


def test_dropout_only_in_training_and_seeded():
    x = R.standard_normal((2, 3, 4, 4, 2)).astype("float32")
    layer = layers.ConvLSTM2D(2, 2, dropout=0.5, recurrent_dropout=0.3, seed=3)
    plain = np.asarray(layer(x))
    np.testing.assert_array_equal(np.asarray(layer(x, training=False)), plain)
    assert not np.allclose(np.asarray(layer(x, training=True)), plain)


ERRORS = [
    (lambda: layers.ConvLSTM2D(0, 3), "filters"),
    (lambda: layers.ConvLSTM2D(2, 3, padding="causal"), "padding"),
    (lambda: layers.ConvLSTM2D(2, 3, strides=2, dilation_rate=2), "strides > 1"),
    (lambda: layers.ConvLSTM2D(2, 3, dropout=1.5), "dropout"),
    (lambda: layers.ConvLSTM2D(2, 3)(np.ones((1, 2, 4, 4), "float32")), "expected ndim=5"),
    (lambda: layers.ConvLSTM2D(2, 3)(fkeras.Input((3, None, 4, 2))), "static input shapes"),
    (lambda: layers.ConvLSTM2D(2, 3, stateful=True)(fkeras.Input((3, 4, 4, 2))),
     "batch size must be static"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, text = ERRORS[i]
    with pytest.raises(ValueError, match=text):
        fn()


# ---- against real Keras ----

@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_match_keras(name):
    keras = pytest.importorskip("keras")
    cls, kwargs, shape, _ = CASES[name]
    x = R.standard_normal(shape).astype("float32")
    k = getattr(keras.layers, cls)(**kwargs)
    f = getattr(layers, cls)(**kwargs)
    yk = k(x)
    f.build(x.shape)
    assert [tuple(w.shape) for w in f.weights] == [tuple(w.shape) for w in k.weights]
    assert [w.name for w in f.weights] == [w.name for w in k.weights]
    f.set_weights([keras.ops.convert_to_numpy(w) for w in k.weights])
    yf = f(x)
    yk = yk if isinstance(yk, (list, tuple)) else [yk]
    yf = yf if isinstance(yf, (list, tuple)) else [yf]
    for a, b in zip(yf, yk):
        np.testing.assert_allclose(np.asarray(a), keras.ops.convert_to_numpy(b), atol=2e-6)
    assert tuple(map(tuple, [f.compute_output_shape(shape)] if not kwargs.get("return_state")
                     else f.compute_output_shape(shape))) == \
        tuple(map(tuple, [k.compute_output_shape(shape)] if not kwargs.get("return_state")
                  else k.compute_output_shape(shape)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_keys_match_keras(name):
    keras = pytest.importorskip("keras")
    cls, kwargs, _, _ = CASES[name]
    ck = getattr(keras.layers, cls)(**kwargs).get_config()
    cf = getattr(layers, cls)(**kwargs).get_config()
    assert list(cf) == list(ck)
    for key in ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
                "activation", "recurrent_activation", "unit_forget_bias", "return_state",
                "return_sequences", "go_backwards", "unroll", "dropout"):
        assert cf[key] == ck[key], key
    back = getattr(keras.layers, cls).from_config({k: v for k, v in cf.items() if k != "dtype"})
    assert back.filters == cf["filters"]


def test_one_sgd_step_matches_keras():
    keras = pytest.importorskip("keras")
    x = R.standard_normal((4, 3, 5, 5, 2)).astype("float32")
    y = R.standard_normal((4, 5, 5, 3)).astype("float32")
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((3, 5, 5, 2))
        out = lib.layers.ConvLSTM2D(3, 3, padding="same", go_backwards=True)(inp)
        m = lib.Model(inp, out)
        m.compile(optimizer=lib.optimizers.SGD(0.5), loss="mse")
        models.append(m)
    models[1].set_weights([keras.ops.convert_to_numpy(w) for w in models[0].weights])
    for m in models:
        m.train_on_batch(x, y)
    for a, b in zip(models[1].get_weights(), models[0].get_weights()):
        np.testing.assert_allclose(np.asarray(a), keras.ops.convert_to_numpy(b), atol=2e-6)
