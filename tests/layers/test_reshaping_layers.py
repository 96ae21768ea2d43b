"""Reshape, Flatten, Permute, RepeatVector: the catalogue checks, values against NumPy,
gradients and Keras's error texts."""

import pathlib
import sys

import numpy as np
import pytest
from layer_testing import run_layer_test

import fkeras
from fkeras import layers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("cls,kwargs,in_shape,out_shape", [
    (layers.Reshape, {"target_shape": (4, 6)}, (2, 3, 8), (2, 4, 6)),
    (layers.Reshape, {"target_shape": (-1, 2)}, (2, 3, 8), (2, 12, 2)),
    (layers.Reshape, {"target_shape": (24,)}, (2, 3, 8), (2, 24)),
    (layers.Flatten, {}, (2, 3, 4, 5), (2, 60)),
    (layers.Flatten, {"data_format": "channels_first"}, (2, 3, 4, 5), (2, 60)),
    (layers.Flatten, {}, (2,), (2, 1)),
    (layers.Permute, {"dims": (2, 1)}, (2, 3, 4), (2, 4, 3)),
    (layers.Permute, {"dims": (3, 1, 2)}, (2, 3, 4, 5), (2, 5, 3, 4)),
    (layers.RepeatVector, {"n": 3}, (2, 4), (2, 3, 4)),
])
def test_catalogue_checks(cls, kwargs, in_shape, out_shape):
    run_layer_test(cls, kwargs, input_shape=in_shape, expected_output_shape=out_shape,
                   expected_num_trainable_weights=0, expected_num_non_trainable_weights=0,
                   run_training_check=False)


def test_reshape_zero_dims_and_keras_errors():
    with pytest.raises(ValueError) as info:
        layers.Reshape((-2, 3))
    assert str(info.value) == ("Each dimension in `target_shape` must be a non-negative "
                               "integer, or `-1` for a single unknown dimension. Received: "
                               "target_shape=(-2, 3).")
    with pytest.raises(ValueError) as info:
        layers.Reshape((-1, 5))(fkeras.Input(shape=(4, 3)))
    assert str(info.value) == ("The total size of the tensor must be unchanged, however, the "
                               "input size cannot by divided by the specified dimensions in "
                               "target_shape. Received: input_shape=(4, 3), "
                               "target_shape=(-1, 5)")
    with pytest.raises(ValueError, match="`target_shape` must be a tuple of integers"):
        layers.Reshape("ab")


def test_permute_values_gradient_and_errors():
    x = _x(2, 3, 4, 5)
    np.testing.assert_array_equal(layers.Permute((3, 1, 2))(x), np.transpose(x, (0, 3, 1, 2)))
    fd_check(lambda t: layers.Permute((2, 3, 1))(t), [x.astype(np.float64)], wrt=(0,),
             rng=np.random.default_rng(0))
    assert layers.Permute((2, 1))(fkeras.Input(shape=(None, 7))).shape == (None, 7, None)
    with pytest.raises(ValueError) as info:
        layers.Permute((0, 1))
    assert str(info.value) == ("Invalid permutation argument `dims` for Permute Layer. The set "
                               "of indices in `dims` must be consecutive and start from 1. "
                               "Received dims=(0, 1)")
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        layers.Permute((2, 1))(x)
    layer = layers.Permute((2, 1), name="p")
    assert layers.Permute.from_config(layer.get_config()).dims == (2, 1)


def test_repeat_vector_values_gradient_and_errors():
    x = _x(2, 4)
    np.testing.assert_array_equal(layers.RepeatVector(3)(x), np.repeat(x[:, None, :], 3, 1))
    fd_check(lambda t: layers.RepeatVector(3)(t), [x.astype(np.float64)], wrt=(0,),
             rng=np.random.default_rng(1))
    with pytest.raises(TypeError, match="Expected an integer value for `n`"):
        layers.RepeatVector(2.0)
    with pytest.raises(ValueError) as info:
        layers.RepeatVector(0)
    assert str(info.value) == "Argument `n` should be a positive integer. Received: n=0"
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        layers.RepeatVector(2)(_x(2, 3, 4))


def test_flatten_gradient_channels_first():
    x = _x(2, 3, 2, 2).astype(np.float64)
    fd_check(lambda t: layers.Flatten(data_format="channels_first")(t), [x], wrt=(0,),
             rng=np.random.default_rng(2))


def test_reshaping_layers_in_a_trained_model():
    inp = fkeras.Input(shape=(6,))
    h = layers.RepeatVector(4)(layers.Dense(6)(inp))        # (None, 4, 6)
    h = layers.Permute((2, 1))(h)                          # (None, 6, 4)
    h = layers.Reshape((-1, 8))(h)                         # (None, 3, 8)
    out = layers.Dense(1)(layers.Flatten()(h))
    model = fkeras.Model(inp, out)
    assert model.output_shape == (None, 1)
    model.compile(optimizer="sgd", loss="mse")
    hist = model.fit(_x(8, 6), _x(8, 1), epochs=2, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
