"""Variable writes inside a layer's `call` (keras-io's PixelCNN re-masks its kernel with
`kernel.assign(kernel * mask)` at the top of `call`; a layer may count its calls with
`assign_add`). Keras 3 computes a Functional model's shapes in a stateless scope, so building
the model writes nothing; every real call (predict, fit, evaluate batches) does. Compared
with Keras 3 (torch) where installed, with fixed expected values otherwise."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(47)
X = rng.standard_normal((10, 4)).astype("float32")
IMAGES = (rng.uniform(size=(8, 6, 6, 1)) > 0.5).astype("float32")


def counter_layer(lib):
    class Counter(lib.layers.Layer):
        def build(self, input_shape):
            self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                         name="calls")
            self.total = self.add_weight(shape=(input_shape[-1],), initializer="zeros",
                                         trainable=False, name="total")

        def call(self, x):
            self.calls.assign_add(1.0)
            self.total.assign(self.total + lib.ops.sum(x, axis=0))
            return x * 2.0

    return Counter()


def test_symbolic_call_writes_nothing_real_calls_do():
    def run(lib):
        counter = counter_layer(lib)
        inputs = lib.Input((4,))
        model = lib.Model(inputs, lib.layers.Dense(2)(counter(inputs)))
        seen = {"built": to_np(counter.calls)}
        model.predict(X, batch_size=4, verbose=0)  # 3 batches
        seen["predict"] = to_np(counter.calls)
        seen["total"] = to_np(counter.total)
        model.compile(lib.optimizers.SGD(0.01), "mse")
        model.fit(X[:8], X[:8, :2], batch_size=4, epochs=1, shuffle=False, verbose=0)
        seen["fit"] = to_np(counter.calls)
        model.evaluate(X[:8], X[:8, :2], batch_size=4, verbose=0)
        seen["evaluate"] = to_np(counter.calls)
        return seen

    fk = run(fkeras)
    assert [float(fk[k]) for k in ("built", "predict", "fit", "evaluate")] == [0, 3, 5, 7]
    np.testing.assert_allclose(fk["total"], X.sum(axis=0), rtol=1e-5)
    keras = keras_or_none()
    if keras is not None:
        kr = run(keras)
        for key in fk:
            np.testing.assert_allclose(fk[key], kr[key], rtol=1e-5, err_msg=key)


def masked_conv(lib, mask_type):
    class MaskedConv(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__()
            self.conv = lib.layers.Conv2D(**kwargs)

        def build(self, input_shape):
            self.conv.build(input_shape)
            kh, kw = self.conv.kernel.shape[:2]
            self.mask = np.zeros(self.conv.kernel.shape, "float32")
            self.mask[: kh // 2] = 1.0
            self.mask[kh // 2, : kw // 2 + (mask_type == "B")] = 1.0

        def call(self, inputs):
            self.conv.kernel.assign(self.conv.kernel * self.mask)
            return self.conv(inputs)

    return MaskedConv(filters=3, kernel_size=3, padding="same", activation="relu")


def test_kernel_masked_by_calls_not_by_model_building():
    layer = masked_conv(fkeras, "A")
    inputs = fkeras.Input((6, 6, 1))
    layer(inputs)
    assert np.abs(to_np(layer.conv.kernel)[2]).sum() > 0  # still as initialized
    layer(IMAGES)
    assert np.abs(to_np(layer.conv.kernel)[2]).sum() == 0
    assert np.abs(to_np(layer.conv.kernel)[1, 1]).sum() == 0  # type A: centre masked too


def test_masked_conv_model_trains_like_keras():
    def train(lib):
        inputs = lib.Input((6, 6, 1))
        x = masked_conv(lib, "A")(inputs)
        x = masked_conv(lib, "B")(x)
        outputs = lib.layers.Conv2D(1, 1, activation="sigmoid")(x)
        model = lib.Model(inputs, outputs)
        initial = seed_weights(model, seed=9)
        unchanged = model.get_weights()  # still the seeded values: nothing masked yet
        model.compile(lib.optimizers.SGD(0.5), "binary_crossentropy")
        history = model.fit(IMAGES, IMAGES, batch_size=4, epochs=4, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"unchanged": [a - b for a, b in zip(unchanged, initial)],
                "loss": history.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train, rtol=1e-4, atol=1e-6)
    assert all(np.all(v == 0) for k, v in fk.items() if k.startswith("unchanged"))


def test_wrong_shape_write_in_symbolic_call_still_raises():
    class BadWrite(fkeras.layers.Layer):
        def build(self, input_shape):
            self.v = self.add_weight(shape=(3,), initializer="zeros")

        def call(self, x):
            self.v.assign(np.zeros((4,), "float32"))
            return x

    with pytest.raises(ValueError, match="shape"):
        BadWrite()(fkeras.Input((2,)))


def test_nested_build_keeps_its_own_writes():
    """fkeras's choice: a nested layer's `build` run inside a symbolic call keeps what it
    assigns (Keras 3 drops it there, and keeps it when the layer is built eagerly)."""
    class Inner(fkeras.layers.Layer):
        def build(self, input_shape):
            self.v = self.add_weight(shape=(input_shape[-1],), initializer="zeros")
            self.v.assign(np.full((input_shape[-1],), 3.0, "float32"))

        def call(self, x):
            return x + self.v

    class Outer(fkeras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def call(self, x):
            return self.inner(x)

    outer = Outer()
    outer(fkeras.Input((4,)))
    np.testing.assert_array_equal(to_np(outer.inner.v), np.full(4, 3.0))
