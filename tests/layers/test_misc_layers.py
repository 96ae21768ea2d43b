"""Wrapper, SpectralNormalization, ReversibleEmbedding, AdaptiveAverage/MaxPooling1D-3D and
Pipeline: catalogue checks, NumPy float64 references, real Keras 3 (torch backend) with copied
weights, gradients, configs and error texts."""

import numpy as np
import pytest

import fkeras
from fkeras import layers
from layer_testing import run_layer_test

R = np.random.default_rng(0)


def _keras():
    return pytest.importorskip("keras")


def _np(keras, t):
    return keras.ops.convert_to_numpy(t)


# ---- adaptive pooling ----

def _adaptive_ref(x, out, reduce, channels_first):
    """float64 reference with Keras 3.15's bins [floor(i L / o), ceil((i + 1) L / o))."""
    if channels_first:
        x = np.moveaxis(x, 1, -1)
    spatial = x.shape[1:-1]
    result = np.zeros((x.shape[0],) + tuple(out) + (x.shape[-1],))
    for cell in np.ndindex(*out):
        index = tuple(slice(i * n // o, -(-(i + 1) * n // o)) for i, n, o in
                      zip(cell, spatial, out))
        region = x[(slice(None),) + index]
        result[(slice(None),) + cell] = reduce(region, axis=tuple(range(1, len(out) + 1)))
    return np.moveaxis(result, -1, 1) if channels_first else result


POOL_CASES = {
    "avg1d": ("AdaptiveAveragePooling1D", 4, "channels_last", (2, 11, 3)),
    "max1d": ("AdaptiveMaxPooling1D", (3,), "channels_last", (2, 10, 2)),
    "avg2d_cf": ("AdaptiveAveragePooling2D", (3, 4), "channels_first", (2, 3, 7, 10)),
    "max2d": ("AdaptiveMaxPooling2D", 3, "channels_last", (2, 8, 5, 2)),
    "avg3d": ("AdaptiveAveragePooling3D", (2, 3, 4), "channels_last", (2, 5, 7, 6, 2)),
    "max3d_cf": ("AdaptiveMaxPooling3D", 2, "channels_first", (1, 2, 5, 4, 3)),
    "upsample": ("AdaptiveAveragePooling2D", (6, 5), "channels_last", (1, 4, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_adaptive_pooling(name):
    cls, size, fmt, shape = POOL_CASES[name]
    layer_cls = getattr(layers, cls)
    rank = len(shape) - 2
    out = (size,) * rank if isinstance(size, int) else tuple(size)
    expected = (shape[0],) + (out + (shape[-1],) if fmt == "channels_last" else
                              (shape[1],) + out)
    run_layer_test(layer_cls, {"output_size": size, "data_format": fmt}, input_shape=shape,
                   expected_output_shape=expected, expected_num_trainable_weights=0,
                   run_training_check=False)
    x = R.standard_normal(shape)
    with fkeras.device("reference"):
        got = np.asarray(layer_cls(size, data_format=fmt)(x))
    reduce = np.mean if "Average" in cls else np.max
    np.testing.assert_allclose(got, _adaptive_ref(x, out, reduce, fmt == "channels_first"),
                               atol=1e-12)


@pytest.mark.parametrize("name", sorted(POOL_CASES))
def test_adaptive_pooling_matches_keras(name):
    keras = _keras()
    cls, size, fmt, shape = POOL_CASES[name]
    x = R.standard_normal(shape).astype("float32")
    f, k = getattr(layers, cls)(size, data_format=fmt), getattr(keras.layers, cls)(size,
                                                                                 data_format=fmt)
    np.testing.assert_allclose(np.asarray(f(x)), _np(keras, k(x)), atol=1e-6)
    assert f.get_config()["output_size"] == k.get_config()["output_size"]
    assert list(f.get_config()) == list(k.get_config())


def test_adaptive_pooling_gradient_goes_to_bins():
    x = R.standard_normal((1, 5, 1))
    with fkeras.device("reference"):
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = layers.AdaptiveAveragePooling1D(2)(x)
        g = np.asarray(tape.gradient(y, x, output_gradients=np.array([[[1.0], [10.0]]])))
    # Bins [0, 3) and [2, 5): sample 2 belongs to both.
    np.testing.assert_allclose(g[0, :, 0], [1 / 3, 1 / 3, 1 / 3 + 10 / 3, 10 / 3, 10 / 3])


POOL_ERRORS = [
    (lambda: layers.AdaptiveAveragePooling1D((2, 2)), ValueError, "length 1"),
    (lambda: layers.AdaptiveMaxPooling2D((2, 2, 2)), TypeError, "integer or"),
    (lambda: layers.AdaptiveMaxPooling3D("a"), TypeError, "integer or"),
    (lambda: layers.AdaptiveAveragePooling2D(0), ValueError, "positive"),
    (lambda: layers.AdaptiveAveragePooling2D(2, data_format="nhwc"), ValueError,
     "Invalid data_format"),
]


@pytest.mark.parametrize("i", range(len(POOL_ERRORS)))
def test_adaptive_pooling_errors(i):
    fn, exc, text = POOL_ERRORS[i]
    with pytest.raises(exc, match=text):
        fn()


# ---- Wrapper ----

class _Doubled(layers.Wrapper):
    def call(self, inputs):
        return self.layer(inputs) * 2.0


def test_wrapper_base():
    w = _Doubled(layers.Dense(3, name="inner"))
    x = R.standard_normal((2, 4)).astype("float32")
    y = np.asarray(w(x))
    np.testing.assert_allclose(y, 2 * np.asarray(w.layer(x)), rtol=1e-6)
    assert [v.name for v in w.weights] == ["kernel", "bias"]
    config = w.get_config()
    assert config["layer"]["class_name"] == "Dense"
    back = _Doubled.from_config(config)
    assert back.layer.units == 3 and back.layer.name == "inner"
    assert w.compute_output_shape((None, 4)) == (None, 3)
    with pytest.raises(ValueError, match="supplied to Wrapper isn't a supported layer"):
        _Doubled("dense")


# ---- SpectralNormalization ----

def _power_iteration(kernel, u, iterations):
    w = kernel.reshape(-1, kernel.shape[-1]).astype(np.float64)
    for _ in range(iterations):
        v = u @ w.T
        v /= np.linalg.norm(v)
        u = v @ w
        u /= np.linalg.norm(u)
    return u, kernel / (v @ w @ u.T)


@pytest.mark.parametrize("inner", ["dense", "conv2d", "embedding"])
def test_spectral_normalization_reference(inner):
    make = {"dense": lambda: layers.Dense(3), "conv2d": lambda: layers.Conv2D(3, 2),
            "embedding": lambda: layers.Embedding(7, 3)}[inner]
    x = {"dense": R.standard_normal((2, 4)), "conv2d": R.standard_normal((2, 5, 5, 2)),
         "embedding": np.array([[1, 2], [3, 6]])}[inner]
    sn = layers.SpectralNormalization(make(), power_iterations=3)
    with fkeras.device("reference"):
        infer = np.asarray(sn(x))
        kernel0, u0 = sn.kernel.numpy().copy(), sn.vector_u.numpy().copy()
        np.testing.assert_allclose(np.asarray(sn(x, training=False)), infer)
        trained = np.asarray(sn(x, training=True))
        u, kernel = _power_iteration(kernel0, u0, 3)
        np.testing.assert_allclose(sn.vector_u.numpy(), u, rtol=1e-10)
        np.testing.assert_allclose(sn.kernel.numpy(), kernel, rtol=1e-10)
        np.testing.assert_allclose(trained, np.asarray(sn.layer(x)))
    # After many iterations sigma is the largest singular value: the spectral norm becomes 1.
    # (A kernel with singular values 3, 1, 0.5, so that the power method converges fast.)
    rows = int(np.prod(sn.kernel.shape[:-1]))
    rng = np.random.default_rng(4)
    a, _ = np.linalg.qr(rng.standard_normal((rows, 3)))
    b, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    sn.kernel.assign((a @ np.diag([3.0, 1.0, 0.5]) @ b).reshape(sn.kernel.shape))
    for _ in range(30):
        with fkeras.device("reference"):
            sn(x, training=True)
    w = sn.kernel.numpy().reshape(-1, sn.kernel.shape[-1])
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1.0) < 1e-6


def test_spectral_normalization_weights_and_config():
    sn = layers.SpectralNormalization(layers.Dense(3), power_iterations=2)
    sn.build((None, 4))
    assert [v.name for v in sn.weights] == ["kernel", "vector_u", "bias"]
    assert [v.name for v in sn.trainable_weights] == ["kernel", "bias"]
    assert [v.name for v in sn.non_trainable_weights] == ["vector_u"]
    assert sn.get_config()["power_iterations"] == 2
    back = layers.SpectralNormalization.from_config(sn.get_config())
    assert back.power_iterations == 2 and isinstance(back.layer, layers.Dense)


SN_ERRORS = [
    (lambda: layers.SpectralNormalization(layers.Dense(2), power_iterations=0),
     "`power_iterations` should be greater than zero"),
    (lambda: layers.SpectralNormalization(layers.ReLU())(np.ones((2, 3), "float32")),
     "has no attribute 'kernel' nor 'embeddings'"),
]


@pytest.mark.parametrize("i", range(len(SN_ERRORS)))
def test_spectral_normalization_errors(i):
    fn, text = SN_ERRORS[i]
    with pytest.raises(ValueError, match=text):
        fn()


@pytest.mark.parametrize("inner", ["dense", "conv2d"])
def test_spectral_normalization_matches_keras(inner):
    keras = _keras()
    x = R.standard_normal((2, 4) if inner == "dense" else (2, 5, 5, 2)).astype("float32")
    pair = []
    for lib in (keras, fkeras):
        w = lib.layers.Dense(3) if inner == "dense" else lib.layers.Conv2D(3, 2)
        sn = lib.layers.SpectralNormalization(w, power_iterations=2)
        sn(x)
        pair.append(sn)
    k, f = pair
    assert [v.name for v in f.weights] == [v.name for v in k.weights]
    f.set_weights([_np(keras, v) for v in k.weights])
    np.testing.assert_allclose(np.asarray(f(x)), _np(keras, k(x)), atol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, training=True)), _np(keras, k(x, training=True)),
                               atol=1e-5)
    np.testing.assert_allclose(f.vector_u.numpy(), _np(keras, k.vector_u), atol=1e-6)
    np.testing.assert_allclose(f.kernel.numpy(), _np(keras, k.kernel), atol=1e-6)
    assert list(f.get_config()) == list(k.get_config())


def test_spectral_normalization_sgd_steps_match_keras():
    """Gradients and updates in fit: the kernel is normalized in the forward pass, then the
    optimizer steps it with the wrapped layer's gradient (Keras 3's semantics)."""
    keras = _keras()
    x = R.standard_normal((8, 5, 5, 2)).astype("float32")
    y = R.standard_normal((8, 4, 4, 3)).astype("float32")
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((5, 5, 2))
        h = lib.layers.SpectralNormalization(lib.layers.Conv2D(3, 2))(inp)
        m = lib.Model(inp, h)
        m.compile(optimizer=lib.optimizers.SGD(0.1), loss="mse")
        models.append(m)
    models[1].set_weights([_np(keras, w) for w in models[0].weights])
    for _ in range(3):
        losses = [float(np.asarray(m.train_on_batch(x, y))) for m in models]
        np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    for a, b in zip(models[1].weights, models[0].weights):
        np.testing.assert_allclose(np.asarray(a), _np(keras, b), atol=1e-5)


# ---- ReversibleEmbedding ----

@pytest.mark.parametrize("tie", [True, False])
@pytest.mark.parametrize("cap", [None, 3.0])
def test_reversible_embedding_reference_and_gradient(tie, cap):
    layer = layers.ReversibleEmbedding(9, 4, tie_weights=tie, logit_soft_cap=cap)
    ids = np.array([[1, 2, 0], [8, 3, 3]])
    h = R.standard_normal((2, 3, 4))
    with fkeras.device("reference"):
        e = np.asarray(layer(ids))
        table = layer.embeddings.numpy()
        np.testing.assert_allclose(e, table[ids])
        kernel = table.T if tie else layer.reverse_embeddings.numpy()
        logits = h @ kernel
        if cap is not None:
            logits = np.tanh(logits / cap) * cap
        with fkeras.GradientTape() as tape:
            tape.watch(h)
            out = layer(h, reverse=True)
        np.testing.assert_allclose(np.asarray(out), logits, rtol=1e-12)
        cot = R.standard_normal(logits.shape)
        gh, gw = tape.gradient(out, [h, layer.trainable_weights[-1]], output_gradients=cot)
        d = cot if cap is None else cot * (1 - np.tanh((h @ kernel) / cap) ** 2)
        np.testing.assert_allclose(np.asarray(gh), d @ kernel.T, rtol=1e-10)
        want = (h.reshape(-1, 4).T @ d.reshape(-1, 9))
        np.testing.assert_allclose(np.asarray(gw), want.T if tie else want, rtol=1e-10)
    assert len(layer.trainable_weights) == (1 if tie else 2)
    assert layer.compute_output_shape((2, 3, 4), reverse=True) == (2, 3, 9)
    assert layer.compute_output_shape((2, 3)) == (2, 3, 4)


def test_reversible_embedding_symbolic_and_mask():
    layer = layers.ReversibleEmbedding(10, 4, mask_zero=True)
    inp = fkeras.Input((5,), dtype="int32")
    h = layer(inp)
    assert tuple(h.shape) == (None, 5, 4) and h._keras_mask is not None
    logits = layer(h, reverse=True)
    assert tuple(logits.shape) == (None, 5, 10)
    model = fkeras.Model(inp, logits)
    ids = np.array([[1, 0, 3, 4, 0]])
    np.testing.assert_allclose(model.predict(ids, verbose=0),
                               np.asarray(layer(np.asarray(layer(ids)), reverse=True)),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="output_dim=4"):
        layer(np.ones((2, 3), "float32"), reverse=True)


@pytest.mark.parametrize("tie", [True, False])
def test_reversible_embedding_matches_keras(tie):
    keras = _keras()
    ids = R.integers(0, 10, (2, 5))
    h = R.standard_normal((2, 5, 4)).astype("float32")
    k = keras.layers.ReversibleEmbedding(10, 4, tie_weights=tie, logit_soft_cap=2.0,
                                         mask_zero=True)
    f = layers.ReversibleEmbedding(10, 4, tie_weights=tie, logit_soft_cap=2.0, mask_zero=True)
    k(ids)
    f(ids)
    assert [v.name for v in f.weights] == [v.name for v in k.weights]
    f.set_weights([_np(keras, w) for w in k.weights])
    np.testing.assert_allclose(np.asarray(f(ids)), _np(keras, k(ids)))
    np.testing.assert_allclose(np.asarray(f(h, reverse=True)), _np(keras, k(h, reverse=True)),
                               atol=1e-6)
    skip = ("name", "dtype", "embeddings_initializer")
    assert {a: b for a, b in f.get_config().items() if a not in skip} == \
        {a: b for a, b in k.get_config().items() if a not in skip}
    assert list(f.get_config()) == list(k.get_config())


# ---- Pipeline ----

def test_pipeline_runs_layers_in_order_with_training():
    d1, d2 = layers.Dense(5), layers.Dense(2)
    p = layers.Pipeline([d1, layers.Dropout(0.5, seed=1), d2])
    x = R.standard_normal((4, 3)).astype("float32")
    infer = np.asarray(p(x, training=False))
    np.testing.assert_allclose(infer, np.asarray(d2(d1(x))), rtol=1e-6)
    assert not np.allclose(np.asarray(p(x)), infer)  # training defaults to True, as Keras
    assert p.layers == [d1, p.layers[1], d2]
    assert len(p.weights) == 4
    assert p.compute_output_shape((None, 3)) == (None, 2)
    config = p.get_config()
    assert list(config) == ["layers", "name"]
    back = layers.Pipeline.from_config(config)
    assert [type(layer).__name__ for layer in back.layers] == ["Dense", "Dropout", "Dense"]
    with pytest.raises(ValueError, match="must contain a `layers` key"):
        layers.Pipeline.from_config({"name": "p"})


def test_pipeline_passes_masks():
    p = layers.Pipeline([layers.Embedding(6, 3, mask_zero=True), layers.LSTM(2)])
    ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    ref_emb, ref_lstm = p.layers
    np.testing.assert_allclose(np.asarray(p(ids)),
                               np.asarray(ref_lstm(ref_emb(ids), mask=ids != 0)), rtol=1e-6)


def test_pipeline_matches_keras():
    keras = _keras()
    x = R.standard_normal((4, 3)).astype("float32")
    k = keras.layers.Pipeline([keras.layers.Dense(5), keras.layers.Dense(2)])
    f = layers.Pipeline([layers.Dense(5), layers.Dense(2)])
    k(x)
    f(x)
    f.set_weights([_np(keras, w) for w in k.weights])
    np.testing.assert_allclose(np.asarray(f(x)), _np(keras, k(x)), atol=1e-6)
    assert list(f.get_config()) == list(k.get_config())
