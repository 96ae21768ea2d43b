"""A custom layer that uses the batch size read with `ops.shape` as a value (keras-io's
miniature GPT builds its causal mask with `ops.tile(mask, [batch, 1, 1])`): Keras 3 infers
the symbolic output on stand-in sizes, so the layer works in a Functional model on `Input`
and trains like Keras 3."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights

import fkeras

rng = np.random.RandomState(17)
X = rng.standard_normal((24, 5, 4)).astype("float32")
Y = rng.standard_normal((24, 5, 4)).astype("float32")


def causal_layer(lib):
    ops = lib.ops

    class CausalMix(lib.layers.Layer):
        """out[b, i] = mean of x[b, :i + 1] (a causal mask tiled to the batch), then Dense."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = lib.layers.Dense(4)

        def call(self, inputs):
            shape = ops.shape(inputs)
            batch, steps = shape[0], shape[1]
            mask = ops.cast(ops.arange(steps)[:, None] >= ops.arange(steps)[None, :], "float32")
            mask = mask / ops.sum(mask, axis=1, keepdims=True)
            reps = ops.concatenate([ops.expand_dims(batch, -1),
                                    ops.convert_to_tensor([1, 1])], 0)
            mask = ops.tile(ops.reshape(mask, (1, steps, steps)), reps)
            return self.dense(ops.matmul(mask, inputs))

    return CausalMix()


def causal_model(lib):
    inputs = lib.Input((5, 4))
    model = lib.Model(inputs, causal_layer(lib)(inputs))
    seed_weights(model, seed=8)
    return model


def test_batch_size_as_value_in_custom_layer_trains_like_keras():
    def train(lib):
        model = causal_model(lib)
        model.compile(lib.optimizers.SGD(0.1), loss="mse")
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "predict": model.predict(X[:3], verbose=0),
                "shape": np.array([-1 if d is None else d for d in model.output.shape])}

    fk, _ = run_both(train)
    np.testing.assert_array_equal(fk["shape"], [-1, 5, 4])


def test_unknown_time_axis_stays_unknown():
    x = fkeras.Input((None, 4))
    out = causal_layer(fkeras)(x)
    assert out.shape == (None, None, 4)
    keras = keras_or_none()
    if keras is not None:
        assert causal_layer(keras)(keras.Input((None, 4))).shape == out.shape


def test_a_call_that_fails_on_stand_ins_too_raises_its_keras_tensor_error():
    class Broken(fkeras.layers.Layer):
        def call(self, inputs):
            n = fkeras.ops.shape(inputs)[0]
            if n is None:
                raise RuntimeError("symbolic failure")
            raise ZeroDivisionError("stand-in failure")

    with pytest.raises(RuntimeError, match="symbolic failure"):
        Broken()(fkeras.Input((3,)))
