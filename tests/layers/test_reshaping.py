"""Reshape and Flatten: shapes (with -1 and unknown dims), values, data formats, errors."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


@pytest.mark.parametrize("in_shape,target,out", [
    ((32, 28, 3), (-1, 3), (None, 896, 3)),
    ((None, 6), (-1, 3), (None, None, 3)),
    ((4, 6), (2, 12), (None, 2, 12)),
    ((4, 6), (3, -1, 2), (None, 3, 4, 2)),
])
def test_reshape_shapes(in_shape, target, out):
    layer = layers.Reshape(target)
    assert layer(fkeras.Input(shape=in_shape)).shape == out
    assert layer.compute_output_shape((None,) + in_shape) == out


def test_reshape_values_and_config():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = layers.Reshape((-1, 2))(x)
    np.testing.assert_array_equal(y, x.reshape(2, 6, 2))
    layer = layers.Reshape((2, -1), name="r")
    assert layers.Reshape.from_config(layer.get_config()).target_shape == (2, -1)


def test_reshape_errors():
    with pytest.raises(ValueError) as info:
        layers.Reshape((5, 5))(fkeras.Input(shape=(32, 28, 3)))
    assert str(info.value) == ("The total size of the tensor must be unchanged. Received: "
                               "input_shape=(32, 28, 3), target_shape=(5, 5)")
    with pytest.raises(ValueError) as info:
        layers.Reshape((-1, -1))
    assert str(info.value) == ("There must be at most one unknown dimension (-1) in "
                               "`target_shape`. Received: target_shape=(-1, -1).")
    with pytest.raises(ValueError, match="cannot by divided"):
        layers.Reshape((-1, 5))(fkeras.Input(shape=(4, 3)))


def test_flatten_shapes():
    assert layers.Flatten()(fkeras.Input(shape=(32, 28, 3))).shape == (None, 2688)
    assert layers.Flatten()(fkeras.Input(shape=(None, 3))).shape == (None, None)
    assert layers.Flatten()(fkeras.Input(shape=(5,))).shape == (None, 5)


def test_flatten_channels_first_uses_channels_last_order():
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(layers.Flatten(data_format="channels_first")(x),
                                  [[0, 4, 1, 5, 2, 6, 3, 7]])
    np.testing.assert_array_equal(layers.Flatten(data_format="channels_last")(x),
                                  [np.arange(8)])


def test_flatten_config_and_default_format():
    layer = layers.Flatten(data_format="channels_first", name="f")
    assert layers.Flatten.from_config(layer.get_config()).data_format == "channels_first"
    assert layers.Flatten().data_format == fkeras.config.image_data_format()


def test_reshape_gradient():
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layers.Reshape((3, 2))(x)
    g = tape.gradient(y, x, output_gradients=np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    np.testing.assert_array_equal(g, x)
