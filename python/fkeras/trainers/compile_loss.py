"""The compiled loss: one Loss per model output, loss weights, and per-output trackers.

`loss` may be one loss for every output, a list with one entry per output (a wrong length is
an error, unlike Keras 2/3 which silently train a subset), or a dict keyed by output name
(outputs missing from the dict get no loss; unknown keys are an error).
Total loss = sum_i loss_weight_i * loss_i (the regularization losses are added by the model).
"""

from fkeras import losses as losses_module
from fkeras.backend import devices as _devices
from fkeras.losses.losses import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
)
from fkeras.engine.tensor import call_function, run_builtin
from fkeras.metrics.metric import Mean
from fkeras.ops import math as _math

# Which output activation each crossentropy can be computed from as logits.
_LOGIT_PAIRS = {BinaryCrossentropy: "sigmoid", CategoricalCrossentropy: "softmax",
                SparseCategoricalCrossentropy: "softmax"}


def to_loss_object(identifier):
    """A Loss instance for a loss identifier (functions become their Loss class)."""
    obj = losses_module.get(identifier)
    if obj is None or isinstance(obj, losses_module.Loss):
        return obj
    cls = losses_module.losses.CLASS_OF_FUNCTION.get(obj)
    if cls is not None:
        return cls()
    return losses_module.LossFunctionWrapper(obj, name=getattr(obj, "__name__", "loss"))


def target_kind(loss):
    """How fit checks y against the output for this loss: 'sparse', 'categorical', 'same'
    (same shape) or None (a custom loss: only the sample count is checked)."""
    if loss is None:
        return None
    if isinstance(loss, SparseCategoricalCrossentropy):
        return "sparse"
    if isinstance(loss, CategoricalCrossentropy):
        return "categorical"
    if type(loss).__module__ == "fkeras.losses.losses":
        return "same"
    return None


def _per_output(value, names, what, default=None):
    """A value for every output from a single value, a list or a dict keyed by name."""
    n = len(names)
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(
                f'Unknown entries in {what} dictionary: {unknown}. Only expected the '
                f"following keys: {names}"
            )
        return [value.get(name, default) for name in names]
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"When passing a list as {what}, it should have one entry per model output. "
                f"The model has {n} output(s) {names}, but you passed {what}={list(value)}"
            )
        return list(value)
    return [value] * n


class CompileLoss:
    """Losses per output, with their weights, logits variants and trackers."""

    def __init__(self, loss, loss_weights=None, output_names=None, dict_outputs=False):
        self._loss_spec = loss
        self.dict_outputs = dict_outputs
        self._called = False
        self._weights_spec = loss_weights
        self.output_names = output_names
        self.built = False
        self.model_tracker = None  # the model's "loss" Mean, for Keras 2's compiled_loss call
        if output_names is not None:
            self._build(output_names)

    def _build(self, output_names):
        self.output_names = list(output_names)
        self.losses = [to_loss_object(item)
                       for item in _per_output(self._loss_spec, self.output_names, "loss")]
        if self._weights_spec is None:
            self.weights = [None] * len(self.losses)
        else:
            self.weights = _per_output(self._weights_spec, self.output_names, "loss_weights")
        if all(loss is None for loss in self.losses):
            raise ValueError("No loss to compute: `loss` gives no output a loss.")
        self.trackers = None
        self._tracker_order = []
        self._called = False
        if sum(loss is not None for loss in self.losses) > 1:
            self.trackers = [None if loss is None else Mean(name=f"{name}_loss")
                             for name, loss in zip(self.output_names, self.losses)]
            self._tracker_order = self._order_trackers()
        self.logit_losses = list(self.losses)
        self.built = True

    def build_for(self, n_outputs):
        """For models without named outputs (subclassed): outputs named output_1, ..."""
        if not self.built:
            self._build([f"output_{i + 1}" for i in range(n_outputs)])

    def use_logits(self, recoverable):
        """Picks the outputs whose loss runs from logits: {index: activation}."""
        chosen = {}
        self.logit_losses = list(self.losses)
        for i, act in recoverable.items():
            loss = self.losses[i]
            if loss is not None and _LOGIT_PAIRS.get(type(loss)) == act:
                variant = loss.logits_variant()
                if variant is not None:
                    self.logit_losses[i] = variant
                    chosen[i] = act
        return chosen

    @property
    def kinds(self):
        return [target_kind(loss) for loss in self.losses]

    def _order_trackers(self):
        """Keras 3's order of the per-output trackers: the output order, except for a
        dict-output model compiled with a dict of losses (the dict's key order)."""
        trackers = [t for t in self.trackers if t is not None]
        if isinstance(self._loss_spec, dict) and self.dict_outputs:
            by_name = dict(zip(self.output_names, self.trackers))
            trackers = [by_name[k] for k in self._loss_spec if by_name.get(k) is not None]
        return trackers

    @property
    def metrics(self):
        """The per-output loss trackers, once a step has run (as Keras 3 builds them)."""
        return self._tracker_order if self._called else []

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        """The Keras 2 `self.compiled_loss(y, y_pred, sample_weight, regularization_losses)`
        of a custom `train_step`: targets and predictions in the model's structure (an
        array, a list per output or a dict by output name); the weighted total plus the
        regularization losses, also recorded in the model's "loss" tracker."""
        return run_builtin(self._user_call, y_true, y_pred, sample_weight,
                           regularization_losses)

    def _user_call(self, y_true, y_pred, sample_weight, regularization_losses):
        from fkeras.trainers.data_adapter import to_array

        ys = [None if t is None else to_array(t) for t in self._flatten(y_true)]
        preds = self._flatten(y_pred)
        if len(ys) != len(preds):
            raise ValueError(f"`compiled_loss` received {len(ys)} targets for {len(preds)} "
                             "model outputs.")
        sws = None if sample_weight is None else self._flatten(sample_weight)
        if sws is not None and len(sws) < len(preds):
            sws = [sws[0]] * len(preds)
        if not self.built:
            self.build_for(len(preds))
        batch = len(preds[0]) if preds and getattr(preds[0], "ndim", 0) else 1
        total = self.compute(ys, preds, sws, batch_size=batch)
        for term in regularization_losses or ():
            total = term if total is None else _math.add(total, term)
        if total is None:
            raise ValueError("`compiled_loss` has no loss to compute: `compile()` was given "
                             "no `loss` for any output.")
        tracker = getattr(self, "model_tracker", None)
        if tracker is not None:
            tracker.update_scalar(float(_devices.host_value(total)), batch)
        return total

    def _flatten(self, data):
        if isinstance(data, dict):
            return [data.get(name) for name in self.output_names]
        if isinstance(data, (list, tuple)):
            return list(data)
        return [data]

    def compute(self, ys, preds, sws=None, logits=False, batch_size=None):
        """Total loss (a 0-d array on the tape) over the flat lists ys / preds."""
        table = self.logit_losses if logits else self.losses
        self._called = True
        total = None
        for i, (loss, weight) in enumerate(zip(table, self.weights)):
            if loss is None:
                continue
            # a Loss subclass overriding __call__ is user code: it runs in tensor mode
            value = call_function(loss, ys[i], preds[i], None if sws is None else sws[i])
            if self.trackers is not None:
                # (on a non-host device: the value is read back here, one scalar per output)
                self.trackers[i].update_scalar(float(_devices.host_value(value)),
                                               batch_size or len(preds[i]))
            if weight is not None:
                value = _math.multiply(value, float(weight))
            total = value if total is None else _math.add(total, value)
        return total

    def reset_state(self):
        for t in self.metrics:
            t.reset_state()

    def get_config(self):
        return {"loss": self._loss_spec, "loss_weights": self._weights_spec}
