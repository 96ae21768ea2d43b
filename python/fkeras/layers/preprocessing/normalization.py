"""Normalization: (x - mean) / sqrt(variance) per kept axis, mean/variance given or adapted."""

import numpy as np

from fkeras import config as fk_config
from fkeras import ops
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing.adapt_data import iter_batches
from fkeras.layers.preprocessing.moments import StreamingMoments


class Normalization(Layer):
    """Shifts and scales inputs to zero mean and unit variance (Keras 3).

    `call` returns `(x - mean) / max(sqrt(variance), epsilon)` (or, with `invert=True`,
    `mean + x * max(sqrt(variance), epsilon)`), with one mean and variance per index of the
    kept `axis` and broadcast over the others.

    Without `mean`/`variance`, the layer holds them as non-trainable variables `mean`,
    `variance` (shape: the kept axes) and `count` (int32, kept at 0 as in Keras 3), set by
    `adapt()` and saved in `.keras` files.

    Args:
        axis: int, tuple of ints or None: the axes that keep their own statistics (-1, the
            features, by default); None: one scalar mean and variance.
        mean, variance: the statistics to use, given together, broadcast to the kept axes.
        invert: apply the inverse transformation (de-normalize).

    Example:
    ```python
    norm = Normalization()
    norm.adapt(x_train)                        # per-feature mean and variance
    y = fkeras.layers.Dense(1)(norm(fkeras.Input(shape=(8,))))
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = _standardize_axis(axis, self.name)
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)
        self.supports_masking = True
        self._build_input_shape = None
        self.mean = self.variance = None
        if (mean is None) != (variance is None):
            raise ValueError("When setting values directly, both `mean` and `variance` must "
                             f"be set. Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError("When setting values directly, `mean` and `variance` must "
                                 f"have the same shape. Received: mean shape "
                                 f"{np.shape(mean)} and variance shape {np.shape(variance)}")
            if np.ndim(mean) > len(self.axis):
                raise ValueError("The rank of `mean` must be less than or equal to the "
                                 f"number of axes ({len(self.axis)}). Received: mean shape "
                                 f"{np.shape(mean)} for axis {self.axis}")

    def build(self, input_shape):
        shape = tuple(input_shape)
        ndim = len(shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                             f"inputs with ndim={ndim}, while axis={self.axis}")
        self._build_input_shape = shape
        self._keep_axis = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep_axis:
            if shape[d] is None:
                raise ValueError("All `axis` values to be kept must have a known shape. "
                                 f"Received axis={self.axis}, inputs.shape={shape}, with "
                                 f"unknown axis at index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = tuple(shape[d] if d in self._keep_axis else 1
                                      for d in range(ndim))
        self._mean_and_var_shape = tuple(shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape,
                                              initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance",
                                                  shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int32",
                                         initializer="zeros", trainable=False)
        else:
            self.mean = self._given(self.input_mean, "mean")
            self.variance = self._given(self.input_variance, "variance")
        self.built = True

    def _given(self, value, what):
        """The given statistic broadcast to the input's rank (right-aligned on the kept axes)."""
        value = np.asarray(value, dtype=np.float64)
        expanded = [1] * len(self._broadcast_shape)
        for i in range(1, value.ndim + 1):
            expanded[self._keep_axis[-i]] = value.shape[-i]
        try:
            out = np.broadcast_to(value.reshape(expanded), self._broadcast_shape)
        except ValueError:
            raise ValueError(f'Layer "{self.name}": `{what}` of shape {value.shape} cannot be '
                             f"broadcast to the kept axes {self._mean_and_var_shape} of the "
                             f"input shape {self._build_input_shape}.") from None
        return np.ascontiguousarray(out, dtype=np.float32)

    def adapt(self, data, batch_size=None, steps=None):
        """Computes the mean and variance of `data` over the reduced axes (Keras 3).

        The statistics are accumulated in float64 batch by batch and combined exactly
        (Chan et al.'s pairwise update), so a batched dataset gives the statistics of the
        whole data. A call replaces what a previous call computed.

        Args:
            data: a NumPy array (or nested list), a `PyDataset`, or an iterable of batches
                (a list of arrays, a generator); `(x, y)` batches are adapted on `x`.
            batch_size: split an array into batches of this size (same result).
            steps: read at most this many batches.
        """
        if self.input_mean is not None:
            raise ValueError(f'Layer "{self.name}" was given `mean` and `variance`; it cannot '
                             "be adapted.")
        moments = None
        for batch in iter_batches(data, self.name, batch_size, steps):
            if not self.built:
                self._maybe_build([batch.shape])
            self._check_adapt_shape(batch.shape)
            if moments is None:
                moments = StreamingMoments(self._reduce_axis)
            moments.update(batch)
        self.adapt_mean.assign(moments.mean.reshape(self._mean_and_var_shape))
        self.adapt_variance.assign(moments.variance.reshape(self._mean_and_var_shape))
        self.finalize_state()

    def _check_adapt_shape(self, shape):
        built = self._build_input_shape
        if len(shape) != len(built) or any(shape[d] != built[d] for d in self._keep_axis):
            raise ValueError(f'Layer "{self.name}": the layer was built with input_shape='
                             f"{built}, but adapt() is being called with data with an "
                             f"incompatible shape, data.shape={tuple(shape)}")

    def finalize_state(self):
        """Refreshes the broadcast statistics from the variables (after `adapt` or loading;
        `call` also reads the variables directly)."""
        if self.input_mean is not None or not self.built:
            return
        self.mean = np.asarray(self.adapt_mean).reshape(self._broadcast_shape)
        self.variance = np.asarray(self.adapt_variance).reshape(self._broadcast_shape)

    def _statistics(self):
        if self.input_mean is not None:
            return self.mean, self.variance
        return (np.asarray(self.adapt_mean).reshape(self._broadcast_shape),
                np.asarray(self.adapt_variance).reshape(self._broadcast_shape))

    def call(self, inputs):
        mean, variance = self._statistics()
        stddev = np.maximum(np.sqrt(variance), np.float32(fk_config.epsilon()))
        inputs = ops.cast(inputs, self.dtype)
        if self.invert:
            return ops.add(ops.multiply(inputs, stddev), mean)
        return ops.divide(ops.subtract(inputs, mean), stddev)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "axis": self.axis,
            "invert": self.invert,
            "mean": np.array(self.input_mean).tolist(),
            "variance": np.array(self.input_variance).tolist(),
        })
        return config

    def get_build_config(self):
        if self._build_input_shape:
            return {"input_shape": self._build_input_shape}
        return None

    def build_from_config(self, config):
        if config:
            self._maybe_build([tuple(config["input_shape"])])


def _standardize_axis(axis, layer_name):
    if axis is None:
        return ()
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return (int(axis),)
    try:
        axes = tuple(axis)
    except TypeError:
        axes = (axis,)
    if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes):
        raise ValueError(f'Layer "{layer_name}": `axis` must be an int, a tuple of ints or '
                         f"None. Received: axis={axis}")
    return tuple(int(a) for a in axes)
