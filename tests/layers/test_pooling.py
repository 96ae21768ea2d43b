"""MaxPooling2D / AveragePooling2D: shapes, values against direct NumPy windows, config,
errors."""

import numpy as np
import pytest
from layer_refs import pool2d_nhwc

import fkeras
from fkeras import layers

POOLS = [(layers.MaxPooling2D, "max"), (layers.AveragePooling2D, "avg")]


@pytest.mark.parametrize("cls,mode", POOLS)
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("pool,strides,side", [(2, None, {"valid": 3, "same": 4}),
                                               (3, 2, {"valid": 3, "same": 4})])
def test_output_shapes(cls, mode, padding, pool, strides, side):
    s = side[padding]
    y = cls(pool, strides, padding)(fkeras.Input(shape=(7, 7, 3)))
    assert y.shape == (None, s, s, 3)
    y = cls(pool, strides, padding, data_format="channels_first")(fkeras.Input(shape=(3, 7, 7)))
    assert y.shape == (None, 3, s, s)


@pytest.mark.parametrize("cls,mode", POOLS)
@pytest.mark.parametrize("pool,strides,padding", [((2, 2), None, "valid"), ((3, 2), (2, 1), "same"),
                                                  ((2, 3), (1, 2), "valid"), (3, 3, "same")])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_forward_matches_numpy(cls, mode, pool, strides, padding, fmt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 8, 3)).astype(np.float32)
    layer = cls(pool, strides, padding, data_format=fmt)
    xin = x if fmt == "channels_last" else np.ascontiguousarray(np.moveaxis(x, -1, 1))
    y = np.asarray(layer(xin))
    want = pool2d_nhwc(x, layer.pool_size, layer.strides, padding, mode)
    if fmt == "channels_first":
        want = np.moveaxis(want, -1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_average_same_divides_by_in_bounds_cells():
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    y = layers.AveragePooling2D(2, padding="same")(x)
    np.testing.assert_allclose(y[0, :, :, 0], [[3.0, 4.5], [7.5, 9.0]])


def test_config_round_trip_and_aliases():
    layer = layers.MaxPooling2D((3, 2), strides=1, padding="same",
                                data_format="channels_first", name="p")
    config = layer.get_config()
    assert config["pool_size"] == (3, 2) and config["strides"] == (1, 1)
    assert layers.MaxPooling2D.from_config(config).get_config() == config
    assert layers.AveragePooling2D(2).get_config()["strides"] == (2, 2)
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.AvgPool2D is layers.AveragePooling2D


def test_errors():
    with pytest.raises(ValueError) as info:
        layers.MaxPooling2D(name="max_pooling2d")(fkeras.Input(shape=(5, 5)))
    assert str(info.value) == ('Input 0 of layer "max_pooling2d" is incompatible with the '
                               "layer: expected ndim=4, found ndim=3. Full shape received: "
                               "(None, 5, 5)")
    with pytest.raises(ValueError, match="The `padding` argument must be"):
        layers.AveragePooling2D(padding="full")
    with pytest.raises(ValueError, match="The `pool_size` argument must be a tuple of 2"):
        layers.AveragePooling2D(pool_size=(2, 2, 2))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.MaxPooling2D(3)(fkeras.Input(shape=(2, 2, 1)))


def test_max_pool_gradient_routes_to_maximum():
    x = np.array([[1.0, 5.0], [3.0, 2.0]], np.float32).reshape(1, 2, 2, 1)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layers.MaxPooling2D()(x)
    g = tape.gradient(y, x, output_gradients=np.full((1, 1, 1, 1), 2.0, np.float32))
    np.testing.assert_array_equal(g.reshape(2, 2), [[0, 2], [0, 0]])
