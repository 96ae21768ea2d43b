"""Concatenate and Add: shapes, broadcasting, values, gradients, config, Keras error texts."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def test_concatenate_shapes_values_and_gradient():
    a, b = fkeras.Input(shape=(4, 3)), fkeras.Input(shape=(4, 5))
    assert layers.Concatenate()([a, b]).shape == (None, 4, 8)
    assert layers.Concatenate(axis=1)([fkeras.Input(shape=(2, 3)),
                                       fkeras.Input(shape=(None, 3))]).shape == (None, None, 3)
    assert layers.Concatenate()([a]).shape == (None, 4, 3)  # one input is accepted (K2/K3)
    x1, x2 = np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32)
    np.testing.assert_array_equal(layers.Concatenate()([x1, x2]), np.concatenate([x1, x2], 1))
    with fkeras.GradientTape() as tape:
        tape.watch([x1, x2])
        y = layers.Concatenate()([x1, x2])
    g1, g2 = tape.gradient(y, [x1, x2], output_gradients=np.arange(8, dtype=np.float32)
                           .reshape(2, 4))
    np.testing.assert_array_equal(g2, [[3], [7]])


def test_concatenate_errors_and_config():
    with pytest.raises(ValueError) as info:
        layers.Concatenate()([fkeras.Input(shape=(4, 5)), fkeras.Input(shape=(3, 6))])
    assert str(info.value) == ("A `Concatenate` layer requires inputs with matching shapes "
                               "except for the concatenation axis. Received: "
                               "input_shape=[(None, 4, 5), (None, 3, 6)]")
    with pytest.raises(ValueError, match="A merge layer should be called on a list of inputs"):
        layers.Concatenate()(fkeras.Input(shape=(4,)))
    layer = layers.Concatenate(axis=1, name="c")
    assert layers.Concatenate.from_config(layer.get_config()).axis == 1


def test_add_broadcasts_and_checks():
    assert layers.Add()([fkeras.Input(shape=(4, 1)), fkeras.Input(shape=(4, 5))]).shape == \
        (None, 4, 5)
    assert layers.Add()([fkeras.Input(shape=(4, 5)), fkeras.Input(shape=(5,))]).shape == \
        (None, 4, 5)
    x = [np.full((2, 3), float(i), np.float32) for i in range(1, 4)]
    np.testing.assert_array_equal(layers.Add()(x), np.full((2, 3), 6.0))
    # A lower-rank input gains axes after the batch axis before broadcasting (Keras rule).
    a, b = np.ones((2, 4, 3), np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(layers.Add()([a, b]), a + b[:, None, :])
    with pytest.raises(ValueError) as info:
        layers.Add()([fkeras.Input(shape=(4, 5)), fkeras.Input(shape=(4, 6))])
    assert str(info.value) == ("Inputs have incompatible shapes. Received shapes (4, 5) and "
                               "(4, 6)")
    with pytest.raises(ValueError) as info:
        layers.Add()(fkeras.Input(shape=(4, 5)))
    assert str(info.value) == ("A merge layer should be called on a list of inputs. Received: "
                               "input_shape=(None, 4, 5) (not a list of shapes)")


def test_add_gradient_unbroadcasts():
    a, b = np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch([a, b])
        y = layers.Add()([a, b])
    ga, gb = tape.gradient(y, [a, b], output_gradients=np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(ga, 1.0)
    np.testing.assert_array_equal(gb, [[3], [3]])
