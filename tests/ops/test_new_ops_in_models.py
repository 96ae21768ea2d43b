"""The new ops on KerasTensors: symbolic shapes with an unknown batch, graph nodes in
functional models, and training through a custom layer that uses them."""

import numpy as np

import fkeras
from fkeras import layers, ops

X = np.random.default_rng(0).random((3, 4, 6)).astype(np.float32)


def test_functional_model_of_raw_ops():
    inp = fkeras.Input((4, 6))
    values, _ = ops.top_k(inp, 2)
    outs = [ops.einsum("btd,bsd->bts", inp, inp),
            ops.stack([ops.sin(inp), ops.log1p(ops.abs(inp))], axis=1), values,
            ops.one_hot(ops.argmax(inp, axis=-1), 6), ops.cumsum(inp, axis=1),
            ops.norm(inp, axis=-1), ops.split(inp, 2, axis=-1)[1],
            ops.logsumexp(inp, axis=1), ops.relu6(ops.tile(inp, (1, 1, 2)))]
    model = fkeras.Model(inp, outs)
    assert [tuple(t.shape) for t in model.outputs] == [
        (None, 4, 4), (None, 2, 4, 6), (None, 4, 2), (None, 4, 6), (None, 4, 6), (None, 4),
        (None, 4, 3), (None, 6), (None, 4, 12)]
    got = model.predict(X, verbose=0)
    np.testing.assert_allclose(got[0], np.einsum("btd,bsd->bts", X, X), rtol=1e-5)
    np.testing.assert_allclose(got[4], np.cumsum(X, 1), rtol=1e-6)
    np.testing.assert_allclose(got[7], np.log(np.exp(X).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(got[8], np.clip(np.tile(X, (1, 1, 2)), 0, 6), rtol=1e-6)


class Mixer(layers.Layer):
    """A user layer written with the new ops (tensor mode)."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 5), initializer="glorot_uniform")

    def call(self, x):
        h = ops.einsum("btd,de->bte", x, self.w)
        h = fkeras.activations.mish(h) + ops.cumsum(h, axis=1) * 0.1
        return ops.logsumexp(h, axis=1)


def test_training_through_a_layer_built_from_new_ops():
    inp = fkeras.Input((4, 6))
    model = fkeras.Model(inp, layers.Dense(1)(Mixer()(inp)))
    model.compile(optimizer=fkeras.optimizers.Adam(0.05), loss="mse")
    y = X.sum(axis=(1, 2))[:, None]
    first = model.evaluate(X, y, verbose=0)
    model.fit(X, y, epochs=30, verbose=0)
    assert model.evaluate(X, y, verbose=0) < 0.5 * first
