"""Metric base class (Keras 3 API: update_state / result / reset_state) and the reducing
metrics Mean, Sum and MeanMetricWrapper.

State lives in float64 NumPy buffers created by `add_variable` (accumulating totals in float64
keeps long epochs exact); `variables` exposes them as fkeras Variables. Metrics compute
outside the gradient tape, in NumPy.
"""

import abc

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine import naming
from fkeras.engine.masking import apply_mask, get_keras_mask
from fkeras.engine.tensor import user_callable
from fkeras.ops.shape_utils import same_rank_shapes
from fkeras.optimizers.state import view_variable


def to_numpy(x):
    if x is None:
        return None
    return _devices.host_array(x)


def squeeze_or_expand(a, b, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank on two arrays (shape_utils.same_rank_shapes)."""
    sa, sb = same_rank_shapes(a.shape, b.shape, expand_rank_1)
    return a.reshape(sa), b.reshape(sb)


class Metric(abc.ABC):
    """Encapsulates metric logic and state.

    Subclasses create state in `__init__` with `add_variable`, and implement `update_state`,
    `result` (and `reset_state` when the state is not all zeros initially).

    Example:
    ```python
    m = fkeras.metrics.Mean()
    m.update_state([1, 3])
    m.result()  # 2.0
    ```
    """

    _direction = None  # "up" or "down": which way is better (EarlyStopping mode='auto')

    def __init__(self, name=None, dtype=None):
        self.name = name or naming.to_snake_case(type(self).__name__)
        self.dtype = dtype or "float32"
        self._state = []

    def _add_state(self, shape=(), initializer="zeros", dtype=None, name=None):
        """A state buffer (float64 NumPy by default, so long totals stay exact) that
        `reset_state` restores to its initial value; fkeras's metrics update it in place."""
        value = np.zeros(shape, dtype=np.float64 if dtype is None else np.dtype(dtype))
        if initializer not in ("zeros", None):
            if isinstance(initializer, str):
                from fkeras import initializers

                initializer = initializers.get(initializer)
            value[...] = initializer if np.isscalar(initializer) else np.asarray(
                initializer(tuple(shape)))
        self._state.append((name or f"variable_{len(self._state)}", value, value.copy()))
        return value

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum",
                     name=None):
        """Creates a state Variable of this metric (Keras 3): updated with `assign`,
        `assign_add`, `assign_sub`; `reset_state` restores its initial value."""
        from fkeras.ops.dtypes import standardize_dtype

        dt = standardize_dtype(dtype or self.dtype)  # Keras: the metric's dtype, float32
        value = self._add_state(tuple(shape), initializer, dt, name)
        return view_variable(value, name or f"variable_{len(self._state) - 1}", "reference",
                             path=f"{self.name}/{name or 'variable'}")

    def add_weight(self, name=None, shape=(), aggregation="sum", initializer="zeros",
                   dtype=None):
        """Keras 2's spelling of `add_variable` (name first)."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype,
                                 aggregation=aggregation, name=name)

    @property
    def variables(self):
        return [view_variable(v, f"{self.name}/{n}", "reference") for n, v, _ in self._state]

    def update_state(self, *args, **kwargs):
        """Accumulates statistics for one batch (subclasses implement it; as in Keras 3 the
        class is not abstract, the call raises)."""
        raise NotImplementedError(f"Metric subclass {type(self).__name__} must implement "
                                  "`update_state()`.")

    def result(self):
        """The metric's current value (subclasses implement it)."""
        raise NotImplementedError(f"Metric subclass {type(self).__name__} must implement "
                                  "`result()`.")

    def reset_state(self):
        for _, value, initial in self._state:
            value[...] = initial

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def stateless_result(self):
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def reduce_to_samplewise(values, sample_weight):
    """Keras's reduce_to_samplewise_values (mean reduction): per-sample values and weights."""
    values = np.asarray(values, dtype=np.float64)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        values, sample_weight = squeeze_or_expand(values, sample_weight)
        w_ndim = sample_weight.ndim
        if values.ndim > w_ndim:
            values = values.mean(axis=tuple(range(w_ndim, values.ndim)))
        sample_weight = np.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if w_ndim > 1:
            sample_weight = sample_weight.mean(axis=tuple(range(1, w_ndim)))
    if values.ndim > 1:
        values = values.mean(axis=tuple(range(1, values.ndim)))
    return values, sample_weight


class Sum(Metric):
    """The weighted sum of the given values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self._add_state((), name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise(to_numpy(values), to_numpy(sample_weight))
        self.total += values.sum()

    def result(self):
        return np.float32(self.total)


class Mean(Metric):
    """The weighted mean of the given values: total / count over everything seen."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self._add_state((), name="total")
        self.count = self._add_state((), name="count")

    def update_state(self, values, sample_weight=None):
        if sample_weight is None and type(values) is np.ndarray and values.ndim <= 1:
            self.total += float(values.sum())  # fast path: per-sample values, no weights
            self.count += values.shape[0] if values.ndim else 1
            return
        values, sample_weight = reduce_to_samplewise(to_numpy(values), to_numpy(sample_weight))
        self.total += values.sum()
        if sample_weight is not None:
            self.count += np.sum(sample_weight)
        else:
            self.count += values.shape[0] if values.ndim >= 1 else 1

    def update_scalar(self, value, weight):
        """Fast path: one value with a weight (the loss trackers: loss x batch size)."""
        self.total += value * weight
        self.count += weight

    def result(self):
        count = float(self.count)
        return np.float32(float(self.total) / count) if count else np.float32(0.0)


class MeanMetricWrapper(Mean):
    """Mean of `fn(y_true, y_pred, **kwargs)` over samples (e.g. an accuracy function)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)
        self._fn = fn
        self._call_fn = user_callable(fn)  # a user's function computes on Tensors
        self._fn_kwargs = kwargs
        direction = getattr(fn, "_direction", None)
        if direction is not None:
            self._direction = direction

    def update_state(self, y_true, y_pred, sample_weight=None):
        # Keras 3: a mask on y_pred zeroes the weight of masked entries ("sum" rule).
        sample_weight = apply_mask(sample_weight, get_keras_mask(y_pred), "sum")
        values = self._call_fn(to_numpy(y_true), to_numpy(y_pred), **self._fn_kwargs)
        Mean.update_state(self, to_numpy(values), sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        return config
