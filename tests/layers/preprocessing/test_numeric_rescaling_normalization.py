"""Rescaling and Normalization: values against NumPy float64, adapt on every data kind, the
layer catalogue checks, errors, configs, and a Functional model trained with fit."""

import numpy as np
import pytest
from numeric_prep_helpers import fk_model

import fkeras
from fkeras import layers
from layer_testing import run_layer_test


def _data(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3 + 2).astype(np.float32)


@pytest.mark.parametrize("scale,offset,x", [
    (1 / 255.0, 0.0, np.arange(12, dtype=np.uint8).reshape(3, 4)),
    (1 / 127.5, -1.0, np.arange(24, dtype=np.int64).reshape(2, 3, 4)),
    (np.array([1.0, 2.0, 3.0, 4.0], np.float32), 0.5, _data(2, 4)),
    (2.0, np.array([0.0, 1.0, 2.0, 3.0]), _data(3, 2, 4)),
])
def test_rescaling_values(scale, offset, x):
    out = np.asarray(layers.Rescaling(scale, offset)(x))
    assert out.dtype == np.float32
    ref = x.astype(np.float64) * np.asarray(scale, np.float64) + np.asarray(offset, np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_rescaling_catalogue_checks():
    run_layer_test(layers.Rescaling, {"scale": 0.5, "offset": 1.0}, input_shape=(2, 3),
                   expected_output_shape=(2, 3), expected_num_trainable_weights=0,
                   expected_num_non_trainable_weights=0, supports_masking=True,
                   run_training_check=False)


def test_rescaling_array_config_round_trip():
    layer = layers.Rescaling(np.array([0.5, 2.0], np.float32), offset=1.0)
    config = layer.get_config()
    assert config["scale"]["class_name"] == "__numpy__"
    revived = layers.Rescaling.from_config(config)
    x = _data(3, 2)
    np.testing.assert_array_equal(np.asarray(revived(x)), np.asarray(layer(x)))


def test_rescaling_bad_scale():
    with pytest.raises(ValueError, match=r'Layer "rescaling".*`scale`.*Received: scale=\'a\''):
        layers.Rescaling("a")


@pytest.mark.parametrize("axis,shape", [(-1, (40, 3)), (None, (40, 3)), ((1, 2), (30, 2, 3)),
                                        (1, (20, 4, 5)), (-1, (25, 2, 3))])
@pytest.mark.parametrize("invert", [False, True])
def test_normalization_adapt_values(axis, shape, invert):
    x = _data(*shape)
    layer = layers.Normalization(axis=axis, invert=invert)
    layer.adapt(x)
    keep = () if axis is None else tuple(sorted(a % len(shape) for a in np.atleast_1d(axis)))
    reduce = tuple(d for d in range(len(shape)) if d not in keep)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=reduce, keepdims=True), x64.var(axis=reduce, keepdims=True)
    np.testing.assert_allclose(np.asarray(layer.adapt_mean), np.squeeze(mean, reduce),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(layer.adapt_variance), np.squeeze(var, reduce),
                               rtol=1e-6)
    ref = mean + x64 * np.sqrt(var) if invert else (x64 - mean) / np.sqrt(var)
    np.testing.assert_allclose(np.asarray(layer(x)), ref, rtol=1e-5, atol=1e-5)


class _Batches(fkeras.utils.PyDataset):
    def __init__(self, x, size):
        super().__init__()
        self.x, self.size = x, size

    def __len__(self):
        return -(-len(self.x) // self.size)

    def __getitem__(self, i):
        part = self.x[i * self.size:(i + 1) * self.size]
        return part, np.zeros(len(part))


@pytest.mark.parametrize("kind", ["list", "generator", "pydataset", "batch_size", "tuples",
                                  "nested_list"])
def test_normalization_adapt_batched_equals_whole(kind):
    x = _data(103, 3, seed=1) * 1000 + 1e4   # a large offset: naive sums would lose digits
    data = {
        "list": [x[:1], x[1:50], x[50:]],
        "generator": (x[i:i + 10] for i in range(0, 103, 10)),
        "pydataset": _Batches(x, 16),
        "batch_size": x,
        "tuples": [(x[:60], None), (x[60:], None)],
        "nested_list": x.tolist(),
    }[kind]
    layer = layers.Normalization()
    layer.adapt(data, batch_size=7 if kind == "batch_size" else None)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(layer.adapt_mean), x64.mean(0), rtol=1e-7)
    np.testing.assert_allclose(np.asarray(layer.adapt_variance), x64.var(0), rtol=1e-6)


def test_normalization_adapt_steps():
    x = _data(40, 2)
    layer = layers.Normalization()
    layer.adapt([x[:10], x[10:20], x[20:]], steps=2)
    np.testing.assert_allclose(np.asarray(layer.adapt_mean), x[:20].astype(np.float64).mean(0),
                               rtol=1e-6)


def test_normalization_given_mean_variance():
    layer = layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0])
    out = np.asarray(layer(np.array([[3.0, 2.0]], np.float32)))
    np.testing.assert_allclose(out, [[1.0, 0.0]])
    assert layer.weights == []
    scalar = layers.Normalization(mean=3.0, variance=2.0)
    np.testing.assert_allclose(np.asarray(scalar(np.array([[1.0], [3.0]], np.float32))),
                               [[-2 / np.sqrt(2)], [0.0]], rtol=1e-6)


def test_normalization_weights_and_catalogue_checks():
    layer = layers.Normalization()
    layer.build((None, 4))
    assert [w.name for w in layer.non_trainable_weights] == ["mean", "variance", "count"]
    assert [str(w.dtype) for w in layer.weights] == ["float32", "float32", "int32"]
    run_layer_test(layers.Normalization, {"axis": -1}, input_shape=(3, 4),
                   expected_output_shape=(3, 4), expected_num_trainable_weights=0,
                   expected_num_non_trainable_weights=3, supports_masking=True,
                   run_training_check=False)
    run_layer_test(layers.Normalization, {"mean": [1.0, 2.0], "variance": [1.0, 2.0]},
                   input_shape=(3, 2), expected_output_shape=(3, 2),
                   expected_num_non_trainable_weights=0, run_training_check=False)


@pytest.mark.parametrize("kwargs,match", [
    ({"mean": 1.0}, r"both `mean` and `variance` must be set. Received: mean=1.0 and "
                    r"variance=None"),
    ({"mean": [1.0, 2.0], "variance": [1.0]}, r"`mean` and `variance` must have the same "
                                              r"shape"),
    ({"mean": [[1.0]], "variance": [[1.0]]}, r"rank of `mean` must be less than or equal to "
                                             r"the number of axes \(1\)"),
    ({"axis": "x"}, r'Layer "normalization": `axis` must be an int'),
])
def test_normalization_constructor_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Normalization(**kwargs)


def test_normalization_adapt_errors():
    layer = layers.Normalization()
    layer.build((None, 3))
    with pytest.raises(ValueError,
                       match=r"built with input_shape=\(None, 3\).*data.shape=\(4, 2\)"):
        layer.adapt(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"empty iterable"):
        layer.adapt([])
    with pytest.raises(TypeError, match=r"unsupported data type"):
        layer.adapt({"a": np.zeros(3)})
    with pytest.raises(ValueError, match=r"`steps` in adapt\(\) must be a positive integer"):
        layer.adapt(np.zeros((4, 3)), steps=0)
    with pytest.raises(ValueError, match=r"axis` values must be in the range"):
        layers.Normalization(axis=3).build((None, 3))
    with pytest.raises(ValueError, match=r"unknown axis at index 1"):
        layers.Normalization().build((None, None))
    with pytest.raises(ValueError, match=r"cannot be adapted"):
        layers.Normalization(mean=1.0, variance=1.0).adapt(np.zeros((2, 1)))


def test_normalization_symbolic_and_fit():
    x = _data(256, 4, seed=3) * np.array([1, 10, 100, 1000], np.float32)
    y = (x / np.array([1, 10, 100, 1000], np.float32)).sum(axis=1, keepdims=True)
    norm = layers.Normalization()
    norm.adapt(x)
    inputs = fkeras.Input(shape=(4,))
    normed = norm(inputs)
    assert tuple(normed.shape) == (None, 4)
    model = fkeras.Model(inputs, layers.Dense(1)(normed))
    model.compile(optimizer=fkeras.optimizers.Adam(0.05), loss="mse")
    history = model.fit(x, y, epochs=30, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.05 * history.history["loss"][0]
    assert np.asarray(norm.count) == 0   # statistics untouched by training
    np.testing.assert_allclose(np.asarray(norm.adapt_mean), x.astype(np.float64).mean(0),
                               rtol=1e-6)


def test_normalization_keras_file_round_trip(tmp_path):
    x = _data(20, 3)
    norm = layers.Normalization(axis=None)
    norm.adapt(x)
    model = fk_model(norm, (3,), dense=True)
    model.save(tmp_path / "m.keras")
    loaded = fkeras.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert np.asarray(loaded.layers[1].adapt_mean) == np.asarray(norm.adapt_mean)
