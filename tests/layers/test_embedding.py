"""Embedding: lookup values, shapes, gradient to the table, mask, config, errors."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def test_lookup_and_shapes():
    layer = layers.Embedding(10, 4)
    assert layer(fkeras.Input(shape=(6,), dtype="int32")).shape == (None, 6, 4)
    idx = np.array([[1, 9, 0], [3, 3, 2]])
    np.testing.assert_array_equal(layer(idx), layer.embeddings.numpy()[idx])
    table = layer.embeddings.numpy()
    assert np.abs(table).max() <= 0.05  # "uniform": U(-0.05, 0.05)
    np.testing.assert_array_equal(layer(idx.astype(np.float32)), table[idx])


def test_input_length_gives_a_sequential_input_shape():
    model = fkeras.Sequential([layers.Embedding(5, 3, input_length=4), layers.Flatten()])
    assert model.output_shape == (None, 12)
    assert model.predict(np.zeros((2, 4), np.int64), verbose=0).shape == (2, 12)


def test_gradient_scatter_adds_rows():
    layer = layers.Embedding(5, 2)
    idx = np.array([[1, 1, 4]])
    with fkeras.GradientTape() as tape:
        y = layer(idx)
    g = tape.gradient(y, layer.embeddings, output_gradients=np.ones((1, 3, 2), np.float32))
    np.testing.assert_array_equal(g, [[0, 0], [2, 2], [0, 0], [0, 0], [1, 1]])


def test_mask_config_errors():
    layer = layers.Embedding(5, 2, mask_zero=True, name="e")
    np.testing.assert_array_equal(layer.compute_mask(np.array([[0, 3]])), [[False, True]])
    config = layer.get_config()
    assert config["mask_zero"] is True and config["input_dim"] == 5
    assert layers.Embedding.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="Both `input_dim` and `output_dim` should be positive"):
        layers.Embedding(0, 3)
    with pytest.raises(ValueError, match="out of range"):
        layers.Embedding(5, 2)(np.array([[5]]))
