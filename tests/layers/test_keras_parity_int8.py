"""int8 Dense against real Keras 3 (torch backend): same float weights, `quantize("int8")` in
both, then the int8 state, the outputs, the input gradients, and `.keras` files both ways."""


import fkeras
import numpy as np
import pytest
from keras_parity import (assert_input_gradient_matches, keras, quantized_pair, randn,
                          to_np)


def _pair(units=(8, 3), activation="relu", in_dim=6):
    """The same functional MLP in Keras and fkeras, float weights copied, both quantized."""
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((in_dim,))
        x = inp
        for i, u in enumerate(units):
            x = lib.layers.Dense(u, activation=activation if i < len(units) - 1 else None,
                                 name=f"d{i}")(x)
        models.append(lib.Model(inp, x))
    return quantized_pair(*models)


def test_int8_state_equals_keras():
    km, fm = _pair()
    assert [(w.path, str(w.dtype), tuple(w.shape), w.trainable) for w in fm.weights] == [
        (w.path, w.dtype, tuple(w.shape), w.trainable) for w in km.weights]
    for kw, fw in zip(km.weights, fm.weights):
        np.testing.assert_array_equal(fw.numpy(), to_np(kw))
    for kl, fl in zip(km.layers[1:], fm.layers[1:]):
        assert fl.dtype_policy.name == kl.dtype_policy.name
        assert fl.quantization_mode == kl.quantization_mode
        theirs, ours = kl.get_config(), fl.get_config()
        assert {k: ours[k] for k in theirs} == theirs  # fkeras adds activity_regularizer


@pytest.mark.parametrize("batch", [1, 5, 33])
def test_outputs_equal_keras_exactly(batch):
    # Same float32 steps in the same order (scales, round half even, exact int32 sums, the
    # int32 -> float32 cast, one division by kernel_scale * inputs_scale): bit-identical.
    km, fm = _pair()
    x = randn(batch, 6, seed=batch) * 3
    np.testing.assert_array_equal(fm.predict(x, verbose=0), to_np(km(x)))


def test_input_gradient_matches_keras():
    # Both compute g @ (kernel / kernel_scale)^T in float32 GEMMs.
    km, fm = _pair(units=(5,), activation=None)
    assert_input_gradient_matches(km, fm, randn(4, 6, seed=1), randn(4, 5, seed=2))


def test_keras_file_loads_in_fkeras(tmp_path):
    km, _ = _pair()
    path = tmp_path / "keras_int8.keras"
    km.save(path)
    loaded = fkeras.models.load_model(path)
    x = randn(7, 6, seed=3)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), to_np(km(x)))
    assert [w.dtype for w in loaded.weights] == [w.dtype for w in km.weights]


def test_fkeras_file_loads_in_keras(tmp_path):
    km, fm = _pair()
    path = tmp_path / "fkeras_int8.keras"
    fm.save(path)
    loaded = keras.models.load_model(path)
    x = randn(7, 6, seed=4)
    np.testing.assert_array_equal(to_np(loaded(x)), fm.predict(x, verbose=0))
    assert loaded.layers[1].quantization_mode == "int8"


def _embedding_pair():
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((4,), dtype="int32")
        x = lib.layers.Embedding(11, 6, name="emb")(inp)
        models.append(lib.Model(inp, lib.layers.Dense(3, name="d")(x)))
    return quantized_pair(*models)


def test_embedding_int8_equals_keras_both_ways(tmp_path):
    km, fm = _embedding_pair()
    assert [(w.path, str(w.dtype), tuple(w.shape)) for w in fm.weights] == [
        (w.path, w.dtype, tuple(w.shape)) for w in km.weights]
    for kw, fw in zip(km.weights, fm.weights):
        np.testing.assert_array_equal(fw.numpy(), to_np(kw))
    x = np.random.default_rng(5).integers(0, 11, (6, 4)).astype(np.int32)
    np.testing.assert_array_equal(fm.predict(x, verbose=0), to_np(km(x)))
    fm.save(tmp_path / "f.keras")
    np.testing.assert_array_equal(to_np(keras.models.load_model(tmp_path / "f.keras")(x)),
                                  to_np(km(x)))
    km.save(tmp_path / "k.keras")
    np.testing.assert_array_equal(
        fkeras.models.load_model(tmp_path / "k.keras").predict(x, verbose=0), to_np(km(x)))
