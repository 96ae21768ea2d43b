"""`keras.utils.normalize` inside a loss (keras-io's supervised contrastive learning normalizes
the projected features before their similarity logits): on tensors it is `ops.normalize`, so
the gradient flows; on NumPy arrays it stays NumPy, as in Keras 3."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights

import fkeras

rng = np.random.RandomState(37)
X = rng.standard_normal((32, 6)).astype("float32")
LABELS = rng.randint(0, 3, (32, 1)).astype("int32")


def contrastive_loss(lib, temperature=0.5):
    ops = lib.ops

    class SupCon(lib.losses.Loss):
        def __call__(self, labels, features, sample_weight=None):
            normalized = lib.utils.normalize(features, axis=1, order=2)
            logits = ops.matmul(normalized, ops.transpose(normalized)) / temperature
            labels = ops.expand_dims(ops.squeeze(labels), -1)
            targets = ops.cast(ops.equal(labels, ops.transpose(labels)), logits.dtype)
            targets = targets / ops.sum(targets, 1, keepdims=True)
            return ops.mean(ops.categorical_crossentropy(targets, logits, from_logits=True))

    return SupCon()


def test_normalized_features_in_a_loss_train_like_keras():
    def train(lib):
        inputs = lib.Input((6,))
        model = lib.Model(inputs, lib.layers.Dense(4, activation="relu")(inputs))
        seed_weights(model, seed=4)
        model.compile(lib.optimizers.SGD(0.1), loss=contrastive_loss(lib))
        history = model.fit(X, LABELS, batch_size=16, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    run_both(train)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis, order", [(-1, 2), (0, 2), (1, 1)])
def test_normalize_numpy_input_like_keras(dtype, axis, order):
    x = rng.standard_normal((3, 4)).astype(dtype)
    x[1] = 0.0
    got = fkeras.utils.normalize(x, axis=axis, order=order)
    assert isinstance(got, np.ndarray) and got.dtype == x.dtype
    norm = np.linalg.norm(x, order, axis, keepdims=True)
    np.testing.assert_allclose(got, x / np.where(norm == 0, 1, norm), rtol=1e-6)
    keras = keras_or_none()
    if keras is not None and axis != 0:  # Keras 3's NumPy path fails for axis=0
        np.testing.assert_allclose(got, keras.utils.normalize(x, axis=axis, order=order),
                                   rtol=1e-6)


def test_normalize_tensor_input_is_differentiable():
    v = fkeras.Variable(np.array([[3.0, 4.0]], "float32"))
    with fkeras.GradientTape() as tape:
        out = fkeras.utils.normalize(v)
        loss = fkeras.ops.sum(out * np.array([[1.0, 0.0]], "float32"))
    grad = np.asarray(tape.gradient(loss, v))
    # d(x0 / |x|) / dx = (e0 - x0 x / |x|^2) / |x|
    x = np.array([3.0, 4.0])
    np.testing.assert_allclose(grad[0], (np.array([1.0, 0.0]) - 3.0 * x / 25.0) / 5.0,
                               rtol=1e-5)
