"""Loss base class, Keras 3 reductions and the function wrapper.

A Loss computes per-sample values in `call(y_true, y_pred)` (any fkeras ops: the tape sees
them) and reduces them with the sample weights in one op:
- "sum_over_batch_size" (default) and "mean": sum(loss * w) / number of loss values;
- "sum": sum(loss * w); "mean_with_sample_weight": sum(loss * w) / sum(w);
- "none" / None: the weighted per-sample values.
"""

import abc
import contextvars

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine import naming
from fkeras.engine import tape as _tape
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import apply_mask, get_keras_mask
from fkeras.engine.tensor import is_builtin_method, run_user, user_callable
from fkeras.engine.variable import Variable
from fkeras.losses import loss_ops
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import apply


# The reduction a LossFunctionWrapper asks of the built-in loss functions when there are no
# sample weights: their per-sample op then returns the mean or sum itself, so an unweighted
# loss costs one op instead of two (read by fkeras.losses.losses._apply).
REDUCE_IN_OP = contextvars.ContextVar("fkeras_loss_reduce", default="none")
_UNWEIGHTED = {"sum_over_batch_size": "mean", "mean": "mean", "sum": "sum",
               "mean_with_sample_weight": "mean"}


def standardize_reduction(reduction):
    if reduction not in loss_ops.REDUCTIONS:
        raise ValueError(
            "Invalid value for argument `reduction`. Expected one of "
            f"{set(loss_ops.REDUCTIONS)}. Received: reduction={reduction}"
        )
    return reduction


def _buffer(x):
    """The device buffer of a Tensor or Variable; reading a Variable here is a read the active
    GradientTape watches (as any op's read is), so its gradient is not cut."""
    if isinstance(x, Variable):
        tape = _tape.current_tape()
        if tape is not None:
            tape.maybe_watch_variable(x)
    return x._value


def as_tensor(x):
    """Arrays and KerasTensors pass through; lists and scalars become device arrays."""
    if type(x) is np.ndarray or isinstance(x, KerasTensor) or _devices.is_buffer(x):
        return x
    if _devices.is_buffer(getattr(x, "_value", None)):
        return _buffer(x)
    a = np.asarray(x)
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    return _devices.get_device().asarray(a)


def as_pred(x):
    """Predictions: arrays of the device's float type (integers converted), KerasTensors."""
    if type(x) is np.ndarray and x.dtype.kind == "f" or isinstance(x, KerasTensor):
        return x
    if _devices.is_buffer(getattr(x, "_value", None)):
        return _buffer(x)
    if _devices.is_buffer(x) and x.dtype.kind == "f":
        return x
    return _devices.get_device().asarray(np.asarray(x, dtype=np.float64))


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Weights per-sample loss values and reduces them (one differentiable op)."""
    if sample_weight is not None and not (isinstance(sample_weight, KerasTensor)
                                          or _devices.is_buffer(sample_weight)):
        sample_weight = getattr(sample_weight, "_value", sample_weight)
        if not _devices.is_buffer(sample_weight):
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
    return apply(_R["loss_reduce_weighted"], values, sample_weight, reduction=reduction)


class Loss(abc.ABC):
    """Loss base class: subclasses implement `call(y_true, y_pred)` -> per-sample losses.

    Args:
        name: Optional name for the loss instance.
        reduction: "sum_over_batch_size" (default), "sum", "mean", "mean_with_sample_weight",
            "none" or None.
        dtype: accepted for Keras compatibility (fkeras computes in the device's float type).

    Example:
    ```python
    class MeanSquaredError(fkeras.losses.Loss):
        def call(self, y_true, y_pred):
            return fkeras.ops.mean(fkeras.ops.square(y_pred - y_true), axis=-1)
    ```
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or naming.to_snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self.dtype = dtype or "float32"

    def __call__(self, y_true, y_pred, sample_weight=None):
        sample_weight = apply_mask(sample_weight, get_keras_mask(y_pred), self.reduction)
        if is_builtin_method(type(self), "call"):
            values = self.call(as_tensor(y_true), as_pred(y_pred))
        else:  # a user's Loss subclass computes on Tensors (its operators reach the tape)
            values = run_user(self.call, as_tensor(y_true), as_pred(y_pred))
        return reduce_weighted_values(values, sample_weight, self.reduction)

    def call(self, y_true, y_pred):
        """Per-sample loss values of a batch. Subclasses implement it (or override
        `__call__`, which Keras 3 allows: the class is not abstract)."""
        raise NotImplementedError(f"Loss subclass {type(self).__name__} must implement "
                                  "`call(y_true, y_pred)`.")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class LossFunctionWrapper(Loss):
    """Wraps a per-sample loss function `fn(y_true, y_pred, **kwargs)` into a Loss."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction,
                         dtype=dtype)
        self.fn = fn
        self._call_fn = user_callable(fn)  # a user's function computes on Tensors
        self._fn_kwargs = kwargs

    def __call__(self, y_true, y_pred, sample_weight=None):
        sample_weight = apply_mask(sample_weight, get_keras_mask(y_pred), self.reduction)
        reduce = _UNWEIGHTED.get(self.reduction) if sample_weight is None else None
        if reduce is None or not getattr(self.fn, "_fk_reduce_in_op", False):
            values = self.call(as_tensor(y_true), as_pred(y_pred))
            return reduce_weighted_values(values, sample_weight, self.reduction)
        token = REDUCE_IN_OP.set(reduce)
        try:
            return self.fn(as_tensor(y_true), as_pred(y_pred), **self._fn_kwargs)
        finally:
            REDUCE_IN_OP.reset(token)

    def call(self, y_true, y_pred):
        return self._call_fn(y_true, y_pred, **self._fn_kwargs)

    def logits_variant(self):
        """A from_logits=True copy, for a loss that accepts `from_logits`, else None.

        The trainer uses it when the model's output is a sigmoid/softmax whose pre-activation
        it can compute (see fkeras.trainers.output_logits).
        """
        return None

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        return config

    def __repr__(self):
        return f"<{type(self).__name__}({getattr(self.fn, '__name__', self.fn)}, " \
               f"kwargs={self._fn_kwargs})>"
