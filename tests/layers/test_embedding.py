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
    with pytest.raises(ValueError, match=r"`input_dim` must be a positive integer. Received: "
                                         r"input_dim=0 \(of type int\)"):
        layers.Embedding(0, 3)
    with pytest.raises(ValueError, match="`output_dim` must be a positive integer"):
        layers.Embedding(3, -1)
    with pytest.raises(ValueError, match="out of range"):
        layers.Embedding(5, 2)(np.array([[5]]))


def test_lora_freezes_the_table_and_trains_a_b():
    fkeras.utils.set_random_seed(0)
    layer = layers.Embedding(6, 4, lora_rank=2, lora_alpha=4)
    ids = np.array([[1, 2, 5], [0, 3, 3]])
    out0 = np.asarray(layer(ids))
    np.testing.assert_allclose(out0, np.asarray(layer.embeddings)[ids], rtol=1e-6)  # B = 0
    assert [w.name for w in layer.weights] == ["embeddings", "lora_embeddings_a",
                                               "lora_embeddings_b"]
    assert [w.name for w in layer.trainable_weights] == ["lora_embeddings_a",
                                                         "lora_embeddings_b"]
    table = np.array(layer.embeddings)
    inputs = fkeras.Input((3,), dtype="int32")
    model = fkeras.Model(inputs, layer(inputs))
    model.compile(optimizer=fkeras.optimizers.SGD(0.5), loss="mse")
    model.train_on_batch(ids, np.ones((2, 3, 4), np.float32))
    np.testing.assert_array_equal(np.array(layer.embeddings), table)  # frozen
    a, b = np.array(layer.lora_embeddings_a), np.array(layer.lora_embeddings_b)
    assert np.abs(b).sum() > 0
    np.testing.assert_allclose(np.asarray(layer(ids)), (table + 2.0 * a @ b)[ids], rtol=1e-5,
                               atol=1e-6)
    config = layer.get_config()
    assert config["lora_rank"] == 2 and config["lora_alpha"] == 4
    with pytest.raises(ValueError, match="Lora is incompatible with embedding constraints"):
        layers.Embedding(3, 2, lora_rank=1, embeddings_constraint="non_neg").build((None, 2))


def test_same_as_keras_with_lora():
    keras = pytest.importorskip("keras")
    ids = np.array([[1, 2, 5], [0, 3, 3]], dtype="int32")
    k_layer = keras.layers.Embedding(6, 4, lora_rank=2)
    k_layer.build((None, 3))
    k_layer.lora_embeddings_b.assign(np.random.default_rng(1).standard_normal((2, 4)))
    f_layer = layers.Embedding(6, 4, lora_rank=2)
    f_layer.build((None, 3))
    f_layer.set_weights([np.asarray(keras.ops.convert_to_numpy(w)) for w in k_layer.weights])
    np.testing.assert_allclose(np.asarray(f_layer(ids)),
                               keras.ops.convert_to_numpy(k_layer(ids)), rtol=1e-5, atol=1e-6)
    assert set(f_layer.get_config()) == set(k_layer.get_config())
