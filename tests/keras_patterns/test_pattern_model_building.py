"""Model-building patterns of the Sequential, functional and transfer-learning guides: add/pop,
layer.output feature extractors, freezing layers (a frozen layer keeps its weights through fit;
`trainable = False` recurses into nested models; a frozen BatchNormalization runs in inference
mode), fine-tuning after unfreezing, and weight transfer between equivalent models, against
Keras 3."""

import numpy as np
from patterns_parity import losses_trained, regression_data, run_both, seed_weights

import fkeras


def test_add_pop_and_feature_extractor_like_keras():
    x = np.random.RandomState(71).standard_normal((3, 5)).astype("float32")

    def train(lib):
        model = lib.Sequential([lib.Input((5,))])
        model.add(lib.layers.Dense(4, activation="relu", name="a"))
        model.add(lib.layers.Dense(3, name="b"))
        model.add(lib.layers.Dense(2, name="c"))
        model.pop()
        seed_weights(model, seed=1)
        extractor = lib.Model(model.inputs, [layer.output for layer in model.layers])
        one = lib.Model(model.inputs, model.get_layer(name="a").output)
        return {"n_layers": len(model.layers), "features": extractor(x), "one": one(x)}

    fk, _ = run_both(train)
    assert fk["n_layers"] == 2


def test_frozen_layers_and_fine_tuning_like_keras():
    rng = np.random.RandomState(72)
    x = rng.standard_normal((32, 6)).astype("float32")
    y = rng.randint(0, 2, size=(32, 1)).astype("float32")

    def train(lib):
        base = lib.Sequential([lib.Input((6,)), lib.layers.Dense(5, activation="relu"),
                               lib.layers.BatchNormalization()], name="base")
        inp = lib.Input((6,))
        # No `training=False` on this call: Keras 3 lets fit's training=True override a
        # node's stored training=False (fkeras keeps it, as tf.keras did), so the fine-tuning
        # phase would differ by design.
        out = lib.layers.Dense(1)(base(inp))
        model = lib.Model(inp, out)
        seed_weights(model, seed=2)
        # moving variance must stay positive
        bn = base.layers[1]
        bn.set_weights([w if i < 3 else np.abs(w) + 0.5 for i, w in enumerate(bn.get_weights())])
        base.trainable = False
        frozen = [w.copy() for w in base.get_weights()]
        model.compile(optimizer=lib.optimizers.Adam(1e-2),
                      loss=lib.losses.BinaryCrossentropy(from_logits=True))
        first = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        unchanged = all(np.array_equal(a, b) for a, b in zip(frozen, base.get_weights()))
        counts = (len(model.trainable_weights), len(model.non_trainable_weights))
        base.trainable = True
        model.compile(optimizer=lib.optimizers.Adam(1e-3),
                      loss=lib.losses.BinaryCrossentropy(from_logits=True))
        second = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        return {"frozen_loss": first.history["loss"], "tuned_loss": second.history["loss"],
                "unchanged": float(unchanged), "counts": counts,
                "weights": model.get_weights()}

    fk, _ = run_both(train)
    assert fk["unchanged"] == 1.0
    np.testing.assert_array_equal(fk["counts"], [2, 6])


def test_trainable_false_recurses_into_nested_models():
    inner = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(3),
                               fkeras.layers.Dense(3)])
    model = fkeras.Sequential([fkeras.Input((3,)), inner, fkeras.layers.Dense(1)])
    model.trainable = False
    assert inner.trainable is False and inner.layers[0].trainable is False
    assert model.trainable_weights == [] and len(model.non_trainable_weights) == 6


def test_weight_transfer_between_functional_and_subclassed_like_keras():
    x, y = regression_data(n=16, d_in=5, d_out=2, seed=73)

    def train(lib):
        inp = lib.Input((5,))
        h = lib.layers.Dense(4, activation="relu")(inp)
        functional = lib.Model(inp, lib.layers.Dense(2)(lib.layers.Dropout(0.5)(h)))
        seed_weights(functional, seed=3)

        class Sub(lib.Model):
            def __init__(self):
                super().__init__()
                self.d1 = lib.layers.Dense(4, activation="relu")
                self.d2 = lib.layers.Dense(2)

            def call(self, x, training=None):
                return self.d2(self.d1(x))

        sub = Sub()
        sub(x[:1])
        sub.set_weights(functional.get_weights())
        sub.compile(optimizer="sgd", loss="mse")
        hist = sub.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"before": functional.predict(x, verbose=0), "loss": hist.history["loss"],
                "weights": sub.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])
