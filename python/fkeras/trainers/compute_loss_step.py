"""The train and test steps that fit/evaluate run for a model overriding `compute_loss`.

Keras 3's built-in steps call `self.compute_loss(x, y, y_pred, sample_weight, training)`, so an
override changes what is minimised and reported. fkeras's fast steps run the compiled loss on
flat buffers without calling it; a model with its own `compute_loss` takes these steps instead:
Keras's default steps written with the public API, in tensor mode (the override is user code
and sees Tensors, y_pred as the model returns it: probabilities, never logits).
"""

import inspect

import numpy as np

from fkeras.engine.tape import GradientTape
from fkeras.trainers import data_adapter as da
from fkeras.utils import nest


def overrides_compute_loss(model):
    from fkeras.trainers.trainer import Trainer

    return type(model).compute_loss is not Trainer.compute_loss


def train_step(model, data):
    """One optimizer step minimising `model.compute_loss`; returns the metric logs."""
    x, y, sample_weight = da.unpack_x_y_sample_weight(data)
    with GradientTape() as tape:
        y_pred = model(x, training=True)
        loss = _compute_loss(model, x, y, y_pred, sample_weight, training=True)
    variables = model.trainable_weights
    model.optimizer.apply(tape.gradient(loss, variables), variables)
    return _track(model, x, y, y_pred, sample_weight, loss)


def test_step(model, data):
    """Loss (from `model.compute_loss`) and metrics of one batch; returns the metric logs."""
    x, y, sample_weight = da.unpack_x_y_sample_weight(data)
    y_pred = model(x, training=False)
    loss = _compute_loss(model, x, y, y_pred, sample_weight, training=False)
    return _track(model, x, y, y_pred, sample_weight, loss)


def _compute_loss(model, x, y, y_pred, sample_weight, training):
    """The override called as Keras 3 calls it: `training` is passed only when the override
    names it (the argument came in Keras 3.3; older overrides do not take it)."""
    if _takes_training(type(model)):
        return model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                  training=training)
    return model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)


def _takes_training(cls):
    cached = cls.__dict__.get("_fk_compute_loss_training")
    if cached is None:
        try:
            cached = "training" in inspect.signature(cls.compute_loss).parameters
        except (TypeError, ValueError):
            cached = True
        type.__setattr__(cls, "_fk_compute_loss_training", cached)
    return cached


def _track(model, x, y, y_pred, sample_weight, loss):
    # Keras 3: the loss tracker is weighted by the batch size.
    first = nest.flatten(x)[0]
    n = first.shape[0] if np.ndim(first) else 1
    model._loss_tracker.update_scalar(float(loss), n)
    return model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
