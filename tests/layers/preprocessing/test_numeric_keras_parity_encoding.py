"""CategoryEncoding and Discretization against real Keras 3 (torch backend; skipped without
keras): outputs for every mode and input rank, adapted bin boundaries (Keras's adapt needs
TensorFlow, so its own update_state/finalize_state steps are the reference), configs, and
`.keras` files both ways."""

import numpy as np
import pytest
from numeric_prep_helpers import predict

from keras_parity import keras, to_np  # noqa: I001  (path set by numeric_prep_helpers)

import fkeras
from fkeras import layers

IDS = [np.array([0, 1, 3]), np.array([[0, 1], [3, 3]]), np.array([[0], [2]]), np.array(2),
       np.array([[[0, 1], [2, 2]]]), np.array([[0, -1], [2, 3]]),
       np.array([[0.0, 1.7], [2.0, 3.0]]), np.array([[0, 1], [2, 3]], np.uint8)]


@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
@pytest.mark.parametrize("ids", IDS, ids=[str(i) for i in range(len(IDS))])
def test_category_encoding_matches_keras(mode, ids):
    out = np.asarray(layers.CategoryEncoding(4, output_mode=mode)(ids))
    ref = to_np(keras.layers.CategoryEncoding(4, output_mode=mode)(ids))
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_array_equal(out, ref)


def test_category_encoding_count_weights_match_keras():
    ids = np.array([[0, 1, 1], [3, 3, 2]])
    w = np.array([[0.5, 1, 2], [1, 1, 3]], np.float32)
    np.testing.assert_array_equal(
        np.asarray(layers.CategoryEncoding(4, output_mode="count")(ids, count_weights=w)),
        to_np(keras.layers.CategoryEncoding(4, output_mode="count")(ids, count_weights=w)))


def _keras_boundaries(batches, **kwargs):
    layer = keras.layers.Discretization(**kwargs)
    layer.reset_state()
    for batch in batches:
        layer.update_state(batch)
    layer.finalize_state()
    return layer.bin_boundaries


@pytest.mark.parametrize("n,num_bins,epsilon", [(1000, 4, 0.01), (37, 5, 0.01),
                                                (5000, 10, 0.001), (3, 4, 0.01),
                                                (200, 3, 0.1), (1, 2, 0.01)])
@pytest.mark.parametrize("batch", [None, 64])
def test_discretization_adapt_equals_keras(n, num_bins, epsilon, batch):
    x = (np.random.default_rng(n).standard_normal((n, 2)) * 3).astype(np.float32)
    layer = layers.Discretization(num_bins=num_bins, epsilon=epsilon)
    layer.adapt(x, batch_size=batch)
    batches = [x] if batch is None else [x[i:i + batch] for i in range(0, n, batch)]
    assert layer.bin_boundaries == _keras_boundaries(batches, num_bins=num_bins,
                                                     epsilon=epsilon)


@pytest.mark.parametrize("mode", ["int", "one_hot", "multi_hot", "count"])
@pytest.mark.parametrize("x", [np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.nan]], np.float32),
                               np.array([0.1, 0.2, 2.5], np.float32),
                               np.array([[1], [3], [-4]], np.int64)])
def test_discretization_outputs_match_keras(mode, x):
    bins = [0.0, 0.1, 1.0, 2.0]
    out = np.asarray(layers.Discretization(bin_boundaries=bins, output_mode=mode)(x))
    ref = to_np(keras.layers.Discretization(bin_boundaries=bins, output_mode=mode)(x))
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("cls,kwargs", [
    ("CategoryEncoding", {"num_tokens": 5, "output_mode": "count"}),
    ("Discretization", {"bin_boundaries": [0.0, 1.0], "output_mode": "one_hot"}),
    ("Discretization", {"num_bins": 3, "epsilon": 0.05}),
])
def test_encoding_configs_match_keras(cls, kwargs):
    f_config = getattr(layers, cls)(**kwargs).get_config()
    k_config = getattr(keras.layers, cls)(**kwargs).get_config()
    assert set(f_config) == set(k_config)
    for key in set(k_config) - {"name", "dtype"}:
        assert f_config[key] == k_config[key], key


def test_encoding_keras_files_both_ways(tmp_path):
    x = np.linspace(-3, 3, 12, dtype=np.float32)[:, None]
    disc = layers.Discretization(num_bins=4)
    disc.adapt(x)
    inputs = fkeras.Input(shape=(1,))
    f_model = fkeras.Model(inputs, layers.Dense(2)(layers.CategoryEncoding(
        4, output_mode="one_hot")(disc(inputs))))
    f_model.save(tmp_path / "f.keras")
    k_loaded = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(predict(k_loaded, x), predict(f_model, x), rtol=1e-6)
    k_disc = keras.layers.Discretization(bin_boundaries=[-1.0, 0.5, 2.0],
                                         output_mode="multi_hot")
    k_in = keras.Input(shape=(1,))
    k_model = keras.Model(k_in, keras.layers.Dense(2)(k_disc(k_in)))
    k_model.save(tmp_path / "k.keras")
    f_loaded = fkeras.saving.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(predict(f_loaded, x), predict(k_model, x), rtol=1e-6)
