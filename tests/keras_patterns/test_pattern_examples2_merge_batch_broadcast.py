"""A batch of 1 broadcast by a merge layer after it is built (keras-io's Perceiver feeds its
latent array as `ops.expand_dims(latent, 0)` into a Functional cross-attention module whose
`Add` meets a batch of attention outputs). Keras 3 checks batch sizes when the layer is
built and in symbolic calls only. Values and training compared with Keras 3 (torch) and
NumPy."""

import numpy as np
import pytest
from patterns_parity import losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(71)
DATA = rng.standard_normal((8, 5, 4)).astype("float32")
Y = rng.randint(0, 3, (8,)).astype("int32")


def cross_module(lib):
    latent_in = lib.Input((2, 4), name="latent_array")
    data_in = lib.Input((5, 4), name="data_array")
    query = lib.layers.Dense(4)(latent_in)
    attended = lib.layers.Attention()([query, data_in, data_in])
    out = lib.layers.Add()([attended, latent_in])
    return lib.Model({"latent_array": latent_in, "data_array": data_in}, out)


def test_latent_of_batch_one_trains_like_keras():
    def train(lib):
        class Latent(lib.Model):
            def __init__(self):
                super().__init__()
                self.latent = self.add_weight(shape=(2, 4), initializer="ones", name="latent")
                self.cross = cross_module(lib)
                self.head = lib.layers.Dense(3)

            def call(self, x):
                inputs = {"latent_array": lib.ops.expand_dims(self.latent, 0), "data_array": x}
                return self.head(lib.ops.mean(self.cross(inputs), axis=1))

        model = Latent()
        model(DATA[:1])
        seed_weights(model, seed=8)
        model.compile(lib.optimizers.SGD(0.2),
                      lib.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(DATA, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    run_both(train)


def test_broadcast_values_and_gradient():
    add = fkeras.layers.Add()
    a = rng.standard_normal((3, 4)).astype("float32")
    b = fkeras.Variable(rng.standard_normal((1, 4)).astype("float32"))
    add([a, a])  # built on equal batches
    cot = rng.standard_normal((3, 4)).astype("float32")
    with fkeras.GradientTape() as t:
        loss = fkeras.ops.sum(add([a, b]) * cot)
    np.testing.assert_allclose(to_np(add([a, b])), a + to_np(b), rtol=1e-6)
    np.testing.assert_allclose(to_np(t.gradient(loss, b)), cot.sum(0, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("case", ["first_call", "symbolic", "not_one"])
def test_batch_checks_kept_where_keras_has_them(case):
    add = fkeras.layers.Add()
    if case == "first_call":
        with pytest.raises(ValueError, match="different batch sizes"):
            add([np.ones((2, 3), "float32"), np.ones((1, 3), "float32")])
    elif case == "symbolic":
        add([np.ones((2, 3), "float32"), np.ones((2, 3), "float32")])
        with pytest.raises(ValueError, match="different batch sizes"):
            add([fkeras.KerasTensor((2, 3)), fkeras.KerasTensor((1, 3))])
    else:
        add([np.ones((2, 3), "float32"), np.ones((2, 3), "float32")])
        with pytest.raises(ValueError):
            add([np.ones((2, 3), "float32"), np.ones((3, 3), "float32")])
