"""A user layer holding a `keras.random.SeedGenerator` (the Keras-for-engineers guide's
MyDropout): the generator's state variable is listed in the layer's (and its model's)
`variables` and `non_trainable_variables`, not in `weights`, as in Keras 3; it counts the
draws, and the seeded stream stays reproducible."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, to_np

import fkeras


def dropout_class(lib):
    class MyDropout(lib.layers.Layer):
        def __init__(self, rate, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate
            self.seed_generator = lib.random.SeedGenerator(1337)

        def call(self, inputs):
            return lib.random.dropout(inputs, self.rate, seed=self.seed_generator)

    return MyDropout


def _describe(lib):
    layer = dropout_class(lib)(0.5)
    model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(3), layer])
    return {
        "layer_variables": [(v.name, str(v.dtype).replace("torch.", ""), tuple(v.shape))
                            for v in layer.variables],
        "layer_weights": len(layer.weights),
        "model_variables": len(model.variables),
        "model_weights": len(model.weights),
        "non_trainable": [v.name for v in model.non_trainable_variables],
        "trainable": len(model.trainable_variables),
        "state": to_np(layer.seed_generator.state).tolist(),
    }


def test_seed_state_is_a_variable_not_a_weight():
    fk = _describe(fkeras)
    assert fk["layer_variables"] == [("seed_generator_state", "int32", (2,))]
    assert fk["state"] == [1337, 0]
    keras = keras_or_none()
    if keras is not None:
        assert fk == _describe(keras)


def test_the_state_counts_draws_and_the_stream_repeats():
    layer = dropout_class(fkeras)(0.5)
    x = np.ones((4, 8), "float32")
    first = [to_np(layer(x)) for _ in range(3)]
    assert layer.seed_generator.state.numpy().tolist() == [1337, 3]
    again = dropout_class(fkeras)(0.5)
    np.testing.assert_array_equal(np.stack([to_np(again(x)) for _ in range(3)]),
                                  np.stack(first))
    assert not np.array_equal(first[0], first[1])


def test_seed_generator_arguments():
    gen = fkeras.random.SeedGenerator(seed=7, name="gen")
    assert gen.get_config() == {"seed": 7, "name": "gen"}
    assert gen.state.path == "gen/seed_generator_state"
    clone = fkeras.random.SeedGenerator.from_config(gen.get_config())
    assert clone.next() == gen.next()
    with pytest.raises(ValueError, match="must be an integer"):
        fkeras.random.SeedGenerator(seed=1.5)
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        fkeras.random.SeedGenerator(seed=1, sead=2)
    big = fkeras.random.SeedGenerator(seed=2**32 + 5)
    assert big.state.numpy().tolist() == [5, 0]
