"""A `compute_loss` override without a `training` parameter (keras-io's knowledge distillation:
`compute_loss(self, x, y, y_pred, sample_weight, allow_empty=False)` mixing the student's loss
with a KL term against a frozen teacher): Keras 3 passes `training` only to an override that
names it. Trained against Keras 3."""

import numpy as np
import pytest
from patterns_parity import classification_data, losses_trained, run_both, seed_weights

X, Y = classification_data(n=48, d_in=5, classes=3, seed=21)

SIGNATURES = ["allow_empty", "training", "kwargs"]


def distiller(lib, signature, seen):
    def mixed_loss(self, x, y, y_pred):
        teacher_pred = self.teacher(x, training=False)
        student_loss = self.student_loss_fn(y, y_pred)
        distill = self.distillation_loss_fn(
            lib.ops.softmax(teacher_pred / self.temperature, axis=1),
            lib.ops.softmax(y_pred / self.temperature, axis=1)) * self.temperature ** 2
        return self.alpha * student_loss + (1 - self.alpha) * distill

    class Distiller(lib.Model):
        def __init__(self, student, teacher):
            super().__init__()
            self.student, self.teacher = student, teacher

        def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn,
                    alpha=0.1, temperature=3):
            super().compile(optimizer=optimizer, metrics=metrics)
            self.student_loss_fn = student_loss_fn
            self.distillation_loss_fn = distillation_loss_fn
            self.alpha, self.temperature = alpha, temperature

        def call(self, x):
            return self.student(x)

    if signature == "allow_empty":
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                         allow_empty=False):
            seen.append("none")
            return mixed_loss(self, x, y, y_pred)
    elif signature == "training":
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                         training=True):
            seen.append(bool(training))
            return mixed_loss(self, x, y, y_pred)
    else:
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, **kwargs):
            seen.append(sorted(kwargs) == ["training"])  # Keras: never passed here
            return mixed_loss(self, x, y, y_pred)
    Distiller.compute_loss = compute_loss

    def net(name, units):
        return lib.Sequential([lib.Input((5,)), lib.layers.Dense(units, activation="relu"),
                               lib.layers.Dense(3)], name=name)

    teacher, student = net("teacher", 8), net("student", 4)
    seed_weights(teacher, seed=1)
    seed_weights(student, seed=2)
    teacher.trainable = False  # the loss reaches the teacher through y_true; kept fixed here
    return Distiller(student=student, teacher=teacher)


@pytest.mark.parametrize("signature", SIGNATURES)
def test_compute_loss_override_gets_training_only_when_named_like_keras(signature):
    def train(lib):
        seen = []
        model = distiller(lib, signature, seen)
        model.compile(optimizer=lib.optimizers.Adam(0.01),
                      metrics=[lib.metrics.SparseCategoricalAccuracy()],
                      student_loss_fn=lib.losses.SparseCategoricalCrossentropy(from_logits=True),
                      distillation_loss_fn=lib.losses.KLDivergence(), alpha=0.1,
                      temperature=10)
        history = model.fit(X, Y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        fit_seen = list(seen)
        evaluated = model.evaluate(X, Y, batch_size=16, verbose=0, return_dict=True)
        return {"history": history.history, "evaluate": evaluated,
                "student": model.student.get_weights(), "teacher": model.teacher.get_weights(),
                "seen_in_fit": np.array(fit_seen == fit_seen[:1] * len(fit_seen), float),
                "seen_first": np.array(str(fit_seen[0]) == "True", float),
                "seen_eval": np.array(str(seen[-1]) == "True", float)}

    run_both(train)
