"""Losses on soft targets that are themselves model outputs (keras-io's knowledge distillation:
`KLDivergence()(softmax(teacher / T), softmax(student / T))` with a trainable teacher): as in
Keras 3, every loss is differentiable in y_true as well as y_pred, so the gradient reaches the
model that produced the targets. Gradients against Keras 3 (torch autograd) and, without
Keras, central differences."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, losses_trained, run_both, seed_weights, to_np

import fkeras
from test_pattern_examples_distillation import X, Y, distiller

rng = np.random.RandomState(31)


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


PROBS_T = _softmax(rng.standard_normal((6, 4))).astype("float32")
PROBS_P = _softmax(rng.standard_normal((6, 4))).astype("float32")
REAL_T = (rng.standard_normal((6, 4)) + 3.0).astype("float32")
REAL_P = (rng.standard_normal((6, 4)) + 3.0).astype("float32")
BINARY_T = rng.randint(0, 2, (6, 4)).astype("float32")
WEIGHTS = rng.random_sample(6).astype("float32")

CASES = {  # name: (loss class name, kwargs, y_true, y_pred)
    "kl_divergence": ("KLDivergence", {}, PROBS_T, PROBS_P),
    "categorical_crossentropy": ("CategoricalCrossentropy", {}, PROBS_T, PROBS_P),
    "categorical_crossentropy_logits": ("CategoricalCrossentropy", {"from_logits": True},
                                        PROBS_T, REAL_P),
    "categorical_crossentropy_smoothing": ("CategoricalCrossentropy",
                                           {"label_smoothing": 0.1}, PROBS_T, PROBS_P),
    "binary_crossentropy": ("BinaryCrossentropy", {}, PROBS_T, PROBS_P),
    "binary_crossentropy_logits": ("BinaryCrossentropy", {"from_logits": True},
                                   PROBS_T, REAL_P - 3.0),
    "poisson": ("Poisson", {}, REAL_T, REAL_P),
    "cosine_similarity": ("CosineSimilarity", {}, REAL_T - 3.0, REAL_P - 3.0),
    "categorical_hinge": ("CategoricalHinge", {}, PROBS_T, REAL_P - 3.0),
    "hinge": ("Hinge", {}, REAL_T - 3.0, REAL_P - 3.0),
    "hinge_binary_labels": ("Hinge", {}, BINARY_T, 0.3 * (REAL_P - 3.0)),
    "squared_hinge": ("SquaredHinge", {}, REAL_T - 3.0, REAL_P - 3.0),
    "mean_absolute_percentage_error": ("MeanAbsolutePercentageError", {}, REAL_T, REAL_P),
    "mean_squared_logarithmic_error": ("MeanSquaredLogarithmicError", {}, REAL_T, REAL_P),
    "mean_squared_error": ("MeanSquaredError", {}, REAL_T, REAL_P),
    "huber": ("Huber", {}, REAL_T, REAL_P),
    "log_cosh": ("LogCosh", {}, REAL_T, REAL_P),
}


def _fkeras_grads(name, kwargs, t, p):
    vt, vp = fkeras.Variable(t), fkeras.Variable(p)
    with fkeras.GradientTape() as tape:
        loss = getattr(fkeras.losses, name)(**kwargs)(vt, vp, sample_weight=WEIGHTS)
    return [to_np(g) for g in tape.gradient(loss, [vt, vp])]


def _keras_grads(keras, name, kwargs, t, p):
    import torch

    vt, vp = keras.Variable(t), keras.Variable(p)
    loss = getattr(keras.losses, name)(**kwargs)(vt, vp, sample_weight=WEIGHTS)
    return [to_np(g) for g in torch.autograd.grad(loss, [vt.value, vp.value])]


def _central_differences(name, kwargs, t, p, which, h=1e-2):
    loss = getattr(fkeras.losses, name)(**kwargs)
    base = [t.astype(np.float64), p.astype(np.float64)]
    grad = np.zeros_like(base[which])
    for i in np.ndindex(grad.shape):
        values = []
        for sign in (1.0, -1.0):
            args = [b.copy() for b in base]
            args[which][i] += sign * h
            values.append(float(to_np(loss(args[0].astype("float32"), args[1].astype("float32"),
                                           sample_weight=WEIGHTS))))
        grad[i] = (values[0] - values[1]) / (2 * h)
    return grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_gradient_reaches_y_true_like_keras(case):
    name, kwargs, t, p = CASES[case]
    gt, gp = _fkeras_grads(name, kwargs, t, p)
    assert np.abs(gt).sum() > 0, "no gradient reached y_true"
    keras = keras_or_none()
    if keras is not None:
        kt, kp = _keras_grads(keras, name, kwargs, t, p)
        np.testing.assert_allclose(gt, kt, rtol=2e-4, atol=1e-6, err_msg="d/dy_true")
        np.testing.assert_allclose(gp, kp, rtol=2e-4, atol=1e-6, err_msg="d/dy_pred")
    elif "hinge" not in case:  # hinge's kinks and the binary-label switch defeat differences
        np.testing.assert_allclose(gt, _central_differences(name, kwargs, t, p, 0),
                                   rtol=3e-2, atol=3e-3)


def test_distillation_trains_the_teacher_through_soft_targets_like_keras():
    """The keras-io Distiller with its teacher left trainable: Keras's KL term reaches the
    teacher's weights, so they change during distillation."""

    def train(lib):
        model = distiller(lib, "allow_empty", [])
        model.teacher.trainable = True
        model.compile(optimizer=lib.optimizers.SGD(0.5), metrics=[],
                      student_loss_fn=lib.losses.SparseCategoricalCrossentropy(from_logits=True),
                      distillation_loss_fn=lib.losses.KLDivergence(), alpha=0.1,
                      temperature=10)
        before = [w.copy() for w in model.teacher.get_weights()]
        history = model.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        moved = max(np.abs(a - b).max() for a, b in zip(model.teacher.get_weights(), before))
        assert moved > 1e-4, "the teacher did not train"
        return {"loss": history.history["loss"], "teacher": model.teacher.get_weights(),
                "student": model.student.get_weights()}

    run_both(train)
