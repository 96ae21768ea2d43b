"""CategoryEncoding and Discretization without Keras: encodings against NumPy, shapes (eager,
symbolic, compute_output_shape), adapt, configs, errors, and a model trained with fit."""

import json

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.layers.preprocessing import quantile_summary


def _one_hot(ids, depth):
    return (np.asarray(ids)[..., None] == np.arange(depth)).astype(np.float32)


@pytest.mark.parametrize("mode,ids,expected", [
    ("one_hot", [0, 1, 3], _one_hot([0, 1, 3], 4)),
    ("one_hot", [[0], [2]], _one_hot([0, 2], 4)),
    ("one_hot", [[0, 1], [3, 3]], _one_hot([[0, 1], [3, 3]], 4)),
    ("one_hot", 2, _one_hot([2], 4)),
    ("multi_hot", [0, 1, 3], [1, 1, 0, 1]),
    ("multi_hot", [[0, 1], [3, 3]], [[1, 1, 0, 0], [0, 0, 0, 1]]),
    ("multi_hot", [[[0, 1], [2, 2]]], [[[1, 0, 1, 0], [0, 1, 1, 0]]]),
    ("count", [[0, 1], [3, 3]], [[1, 1, 0, 0], [0, 0, 0, 2]]),
    ("count", 2, [0, 0, 1, 0]),
    ("count", [[0, -1], [2, 3]], [[1, 0, 0, 0], [0, 0, 1, 1]]),
    ("multi_hot", [[0.0, 1.7], [2.0, 3.0]], [[1, 1, 0, 0], [0, 0, 1, 1]]),
])
def test_category_encoding_values(mode, ids, expected):
    layer = layers.CategoryEncoding(4, output_mode=mode)
    out = np.asarray(layer(np.asarray(ids)))
    np.testing.assert_array_equal(out, np.asarray(expected, np.float32))
    assert out.dtype == np.float32
    assert layer.compute_output_shape(np.shape(ids)) == out.shape


def test_category_encoding_count_weights_and_symbolic():
    layer = layers.CategoryEncoding(4, output_mode="count")
    out = layer(np.array([[0, 1, 1], [3, 3, 2]]),
                count_weights=np.array([[0.5, 1, 2], [1, 1, 3]], np.float32))
    np.testing.assert_array_equal(np.asarray(out), [[0.5, 3, 0, 0], [0, 0, 3, 2]])
    inputs = fkeras.Input(shape=(3,), dtype="int32")
    assert tuple(layer(inputs).shape) == (None, 4)
    assert tuple(layers.CategoryEncoding(5, output_mode="one_hot")(
        fkeras.Input(shape=(1,), dtype="int32")).shape) == (None, 5)


@pytest.mark.parametrize("kwargs,call,match", [
    ({"num_tokens": None}, None, r"num_tokens must be set"),
    ({"num_tokens": 0}, None, r"`num_tokens` must be >= 1. Received: num_tokens=0"),
    ({"num_tokens": 3, "output_mode": "int"}, None, r"invalid value for argument `output_mode`"),
    ({"num_tokens": 3, "sparse": True}, None, r"`sparse=True` is not supported"),
    ({"num_tokens": 3}, np.array([[0, 3]]), r'Layer "category_encoding": input values must be '
                                            r"in the range \[0, 3\).*value of 3"),
])
def test_category_encoding_errors(kwargs, call, match):
    with pytest.raises(ValueError, match=match):
        layers.CategoryEncoding(**kwargs)(call if call is not None else np.zeros(2, int))


def test_category_encoding_count_weights_only_in_count_mode():
    with pytest.raises(ValueError, match=r"`count_weights` is not used when `output_mode` is "
                                         r"not `'count'`"):
        layers.CategoryEncoding(3)(np.array([[1]]), count_weights=np.array([[1.0]]))


@pytest.mark.parametrize("mode,dtype", [("int", np.int32), ("one_hot", np.float32),
                                        ("multi_hot", np.float32), ("count", np.float32)])
def test_discretization_values(mode, dtype):
    x = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.nan]], np.float32)
    ids = np.array([[0, 1, 1, 2, 3, 3, 3]])
    out = np.asarray(layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode=mode)(x))
    assert out.dtype == dtype
    expected = {"int": ids, "one_hot": _one_hot(ids, 4),
                "multi_hot": (np.bincount(ids[0], minlength=4) > 0)[None],
                "count": np.bincount(ids[0], minlength=4)[None]}[mode]
    np.testing.assert_array_equal(out, expected)


def test_discretization_compares_in_float32():
    # 0.1 is not a float32: the boundary is float32(0.1), so float32(0.1) lands above it.
    out = layers.Discretization(bin_boundaries=[0.1])(np.array([np.float32(0.1)]))
    np.testing.assert_array_equal(np.asarray(out), [1])


def test_discretization_adapt_quantiles():
    x = np.random.default_rng(0).standard_normal((4000, 2)).astype(np.float32)
    layer = layers.Discretization(num_bins=4, epsilon=0.001)
    layer.adapt(x)
    assert len(layer.bin_boundaries) == 3
    np.testing.assert_allclose(layer.bin_boundaries, np.quantile(x, [0.25, 0.5, 0.75]),
                               atol=0.01)
    counts = np.bincount(np.asarray(layer(x)).ravel(), minlength=4)
    np.testing.assert_allclose(counts / x.size, 0.25, atol=0.01)
    # Batched data goes through the summary merge; a single batch equals the array.
    batched = layers.Discretization(num_bins=4, epsilon=0.001)
    batched.adapt([x[:1000], x[1000:]])
    np.testing.assert_allclose(batched.bin_boundaries, layer.bin_boundaries, atol=0.02)
    same = layers.Discretization(num_bins=4, epsilon=0.001)
    same.adapt(iter([x]))
    assert same.bin_boundaries == layer.bin_boundaries


def test_quantile_summary_small_data_keeps_values():
    summary = quantile_summary.merge(quantile_summary.summarize(np.array([3.0, 1.0, 2.0],
                                                                         np.float32), 0.01),
                                     quantile_summary.empty(), 0.01)
    np.testing.assert_array_equal(summary, [[1, 2, 3], [1, 1, 1]])
    np.testing.assert_array_equal(quantile_summary.bin_boundaries(summary, 4), [1, 2])


def test_discretization_config_round_trip_after_adapt(tmp_path):
    layer = layers.Discretization(num_bins=3)
    layer.adapt(np.arange(30, dtype=np.float32))
    config = json.loads(json.dumps(layer.get_config()))
    assert set(config) == {"bin_boundaries", "num_bins", "epsilon", "output_mode", "sparse",
                           "name", "dtype"}
    revived = layers.Discretization.from_config(config)
    assert revived.bin_boundaries == layer.bin_boundaries and revived.num_bins == 3
    x = np.linspace(-5, 35, 20, dtype=np.float32)[:, None]
    inputs = fkeras.Input(shape=(1,))
    model = fkeras.Model(inputs, layers.CategoryEncoding(3, output_mode="one_hot")(
        layers.Discretization(num_bins=3).from_config(config)(inputs)))
    model.save(tmp_path / "d.keras")
    loaded = fkeras.saving.load_model(tmp_path / "d.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("kwargs,match", [
    ({}, r"You need to set either `num_bins` or `bin_boundaries`"),
    ({"num_bins": -1}, r"`num_bins` must be greater than or equal to 0"),
    ({"num_bins": 2, "bin_boundaries": [0.0]}, r"Both `num_bins` and `bin_boundaries` should "
                                               r"not be set"),
    ({"num_bins": 2, "output_mode": "binary"}, r"invalid value for argument `output_mode`"),
    ({"num_bins": 2, "output_mode": "count", "sparse": True}, r"`sparse=True` is not "
                                                              r"supported"),
])
def test_discretization_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Discretization(**kwargs)


def test_discretization_use_before_adapt_and_adapt_with_boundaries():
    with pytest.raises(ValueError, match=r"call `adapt\(dataset\)` before"):
        layers.Discretization(num_bins=2)(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"initialized with `bin_boundaries`"):
        layers.Discretization(bin_boundaries=[0.0]).adapt(np.zeros(3, np.float32))


def test_encoded_features_train_with_fit():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (256, 1)).astype(np.float32)
    inputs = fkeras.Input(shape=(1,))
    disc = layers.Discretization(num_bins=8)
    disc.adapt(x)
    # The outer bins: not linear in x, linear in the one-hot bins.
    y = np.isin(np.asarray(disc(x)), [0, 1, 6, 7]).astype(np.float32)
    bins = layers.CategoryEncoding(8, output_mode="one_hot")(disc(inputs))
    model = fkeras.Model(inputs, layers.Dense(1, activation="sigmoid")(bins))
    model.compile(optimizer=fkeras.optimizers.Adam(0.1), loss="binary_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=30, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.98
