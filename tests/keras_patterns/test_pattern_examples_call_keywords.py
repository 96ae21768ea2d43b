"""A layer called with its inputs by keyword (keras-io's endpoint-layer recipe:
`self.endpoint(logits=x, targets=y, sample_weight=w)`): Keras 3 binds the keyword named like
`call`'s first parameter as the inputs, eagerly, symbolically and inside a trained subclassed
model; a call missing it is refused."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights

import fkeras

rng = np.random.RandomState(5)
X = rng.standard_normal((32, 3)).astype("float32")
T = rng.standard_normal((32, 2)).astype("float32")
Y = rng.standard_normal((32, 2)).astype("float32")


def shift_layer(lib):
    class Shift(lib.layers.Layer):
        def call(self, logits, targets=None):
            return logits * 2.0 if targets is None else logits + targets

    return Shift()


def keyword_model(lib):
    class KeywordModel(lib.Model):
        def __init__(self):
            super().__init__()
            self.dense = lib.layers.Dense(2)
            self.shift = shift_layer(lib)

        def call(self, inputs):
            return self.shift(logits=self.dense(inputs[0]), targets=inputs[1])

    model = KeywordModel()
    model([X[:2], T[:2]])
    seed_weights(model, seed=6)
    return model


@pytest.mark.parametrize("kwargs", ["logits", "logits_targets"])
def test_eager_call_by_first_argument_name_like_keras(kwargs):
    def run(lib):
        kw = {"logits": X[:4]} if kwargs == "logits" else {"logits": X[:4], "targets": X[:4]}
        return {"out": shift_layer(lib)(**kw)}

    fk, _ = run_both(run)
    np.testing.assert_allclose(fk["out"], 2.0 * X[:4], rtol=1e-6)  # x * 2, or x + x


def test_symbolic_call_by_keywords_builds_a_node_like_keras():
    def run(lib):
        x, t = lib.Input((3,)), lib.Input((3,))
        model = lib.Model([x, t], shift_layer(lib)(logits=x, targets=t))
        return {"n_layers": len(model.layers), "out": model.predict([X, X], verbose=0)}

    fk, _ = run_both(run)
    np.testing.assert_allclose(fk["out"], 2.0 * X, rtol=1e-6)


def test_subclassed_model_calling_layers_by_keyword_trains_like_keras():
    def train(lib):
        model = keyword_model(lib)
        model.compile(lib.optimizers.SGD(0.05), loss="mse")
        history = model.fit([X, T], Y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    run_both(train)


def test_call_without_its_first_argument_is_refused():
    layer = shift_layer(fkeras)
    with pytest.raises(TypeError, match="missing a required argument: 'logits'"):
        layer(inputs=X)
    keras = keras_or_none()
    if keras is not None:
        with pytest.raises(TypeError, match="logits"):
            shift_layer(keras)(inputs=X)
