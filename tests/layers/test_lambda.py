"""Lambda: shape inference by running the function symbolically, explicit output shapes,
arguments, gradients, and serialization (named functions, lambdas behind safe mode)."""

import numpy as np
import pytest

import fkeras
from fkeras import layers, ops


@fkeras.saving.register_keras_serializable(package="test_lambda")
def double_plus(x, offset=0.0):
    return ops.add(ops.multiply(x, 2.0), offset)


def test_inferred_shape_and_values():
    y = layers.Lambda(lambda t: ops.sum(t, axis=-1))(fkeras.Input(shape=(4, 3)))
    assert y.shape == (None, 4)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(layers.Lambda(double_plus, arguments={"offset": 1.0})(x),
                               2 * x + 1)


def test_explicit_output_shape_skips_the_function():
    def numpy_only(t):
        return np.asarray(t)[:, :2]

    layer = layers.Lambda(numpy_only, output_shape=(2,))
    assert layer(fkeras.Input(shape=(5,))).shape == (None, 2)
    assert layers.Lambda(numpy_only, output_shape=lambda s: (s[0], 2)).compute_output_shape(
        (None, 5)) == (None, 2)
    with pytest.raises(NotImplementedError, match="specify the `output_shape` argument"):
        layers.Lambda(numpy_only).compute_output_shape((None, 5))


def test_multiple_inputs_and_outputs_in_a_model():
    a, b = fkeras.Input(shape=(3,)), fkeras.Input(shape=(3,))
    s, d = layers.Lambda(lambda ts: [ops.add(ts[0], ts[1]), ops.subtract(ts[0], ts[1])])([a, b])
    model = fkeras.Model([a, b], [s, d])
    x1, x2 = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    out = model.predict([x1, x2], verbose=0)
    np.testing.assert_allclose(out[0], 3.0)
    np.testing.assert_allclose(out[1], -1.0)


def test_gradient_through_lambda():
    x = np.array([[1.0, -2.0]], np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layers.Lambda(lambda t: ops.square(t))(x)
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=np.ones_like(x)), 2 * x)


def test_config_round_trips():
    layer = layers.Lambda(double_plus, output_shape=(4,), arguments={"offset": 3.0}, name="l")
    config = layer.get_config()
    assert config["function"]["config"] == "test_lambda>double_plus"
    clone = layers.Lambda.from_config(config)
    assert clone.function is double_plus and clone.arguments == {"offset": 3.0}

    scale = 3.0
    config = layers.Lambda(lambda t: ops.multiply(t, scale)).get_config()
    with pytest.raises(ValueError, match="Requested the deserialization of a `Lambda` layer"):
        layers.Lambda.from_config(config)
    clone = layers.Lambda.from_config(config, safe_mode=False)
    np.testing.assert_allclose(clone(np.ones((1, 2), np.float32)), 3.0)


def split_halves(x):
    return [x[:, :2], x[:, 2:]]


@pytest.mark.parametrize("kwargs,in_shape,out_shape", [
    ({"function": double_plus}, (3, 4), (3, 4)),
    ({"function": double_plus, "arguments": {"offset": 2.0}}, (3, 4), (3, 4)),
    ({"function": double_plus, "output_shape": (4,)}, (3, 4), (3, 4)),
    ({"function": double_plus, "mask": None}, (2, 3, 4), (2, 3, 4)),
])
def test_catalogue_checks(kwargs, in_shape, out_shape):
    from layer_testing import run_layer_test

    run_layer_test(layers.Lambda, kwargs, input_shape=in_shape, expected_output_shape=out_shape,
                   expected_num_trainable_weights=0, run_training_check=False)


def test_output_shape_forms():
    x = fkeras.Input(shape=(5,))
    # A list (or tuple) of shapes for several outputs; the batch dimension is prepended.
    for shapes in ([(2,), (3,)], ((2,), (3,))):
        a, b = layers.Lambda(split_halves, output_shape=shapes)(x)
        assert (a.shape, b.shape) == ((None, 2), (None, 3))
    # A callable receives the full input shape (batch included) and returns the full shape.
    layer = layers.Lambda(double_plus, output_shape=lambda s: s[:-1] + (s[-1],))
    assert layer(x).shape == (None, 5)
    assert layer.compute_output_shape((7, 5)) == (7, 5)
    # Inferred shapes for several outputs.
    a, b = layers.Lambda(split_halves)(x)
    assert (a.shape, b.shape) == ((None, 2), (None, 3))
    # Config: a tuple output_shape survives JSON as a tuple.
    import json

    config = json.loads(json.dumps(layers.Lambda(double_plus, output_shape=(4,)).get_config()))
    assert layers.Lambda.from_config(config).compute_output_shape((None, 4)) == (None, 4)


def test_arguments_mask_and_training_are_passed():
    seen = {}

    def fn(x, scale=1.0, mask=None, training=None):
        seen.update(mask=mask, training=training)
        return ops.multiply(x, scale)

    x = np.ones((2, 3), np.float32)
    y = layers.Lambda(fn, arguments={"scale": 4.0})(x, mask=np.ones((2,), bool), training=True)
    np.testing.assert_allclose(y, 4.0)
    assert seen["training"] is True and seen["mask"] is not None
    assert layers.Lambda(fn, mask=lambda inputs, mask: mask).supports_masking
    assert layers.Lambda(fn, mask=lambda inputs, mask: "m").compute_mask(x, None) == "m"
    with pytest.raises(ValueError, match="`function` must be callable"):
        layers.Lambda(3)
