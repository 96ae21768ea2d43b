"""Discretization: bucketizes continuous values by bin boundaries, given or adapted."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import encoding, quantile_summary
from fkeras.layers.preprocessing.adapt_data import iter_batches


class Discretization(Layer):
    """Maps each value to the index of its bin (Keras 3).

    With boundaries [b0, ..., bk-1], a value x goes to bin i where b(i-1) <= x < b(i) (bin 0
    below b0, bin k from b(k-1) up; NaN goes to bin k), compared in float32 as Keras's torch
    backend does. "int" outputs int32 bin indices; "one_hot", "multi_hot" and "count" encode
    them (depth = number of bins) in the layer's float dtype.

    `adapt()` computes `num_bins` boundaries at approximate quantiles of the data with Keras 3's
    summary algorithm (error controlled by `epsilon`), so the boundaries equal Keras's for the
    same batches. They are kept in the config (Keras 3 has no variables for them).

    Args:
        bin_boundaries: sorted list of boundaries (or None, to adapt).
        num_bins: the number of bins to adapt (exclusive with `bin_boundaries`).
        epsilon: the quantile approximation error (0.01).
        output_mode: "int", "one_hot", "multi_hot" or "count".
        sparse: must be False (fkeras has no sparse tensors).

    Example:
    ```python
    Discretization(bin_boundaries=[0.0, 1.0])(np.array([[-1.0, 0.5, 2.0]]))   # [[0, 1, 2]]
    ```
    """

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None, **kwargs):
        super().__init__(dtype=dtype, name=name, **kwargs)
        if sparse:
            raise ValueError(f'Layer "{self.name}": `sparse=True` is not supported by fkeras '
                             "(no sparse tensors). Received: sparse=True")
        encoding.check_output_mode(output_mode, encoding.OUTPUT_MODES, self.name)
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. "
                             f"Received: `num_bins={num_bins}` and `bin_boundaries="
                             f"{bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else \
            [float(b) for b in np.asarray(bin_boundaries, dtype=np.float64).reshape(-1)]
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = False
        self.summary = None if self.bin_boundaries is not None else quantile_summary.empty()

    @property
    def output_dtype(self):
        return "int32" if self.output_mode == "int" else self.dtype

    def adapt(self, data, batch_size=None, steps=None):
        """Computes `num_bins` boundaries at approximate quantiles of `data` (all values of
        every batch together; a NumPy array is one batch, as in Keras 3).

        Args:
            data: a NumPy array, a `PyDataset`, or an iterable of batches.
            batch_size: split an array into batches of this size (the summary is then
                merged batch by batch, as Keras does for batched data).
            steps: read at most this many batches.
        """
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        self.reset_state()
        for batch in iter_batches(data, self.name, batch_size, steps):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        batch = np.array(data).astype("float32")
        self.summary = quantile_summary.merge(
            quantile_summary.summarize(batch, self.epsilon), self.summary, self.epsilon)

    def finalize_state(self):
        if self.num_bins is None:
            return
        self.bin_boundaries = quantile_summary.bin_boundaries(self.summary,
                                                              self.num_bins).tolist()

    def reset_state(self):
        if self.num_bins is not None:
            self.summary = quantile_summary.empty()

    def _depth(self):
        return len(self.bin_boundaries) + 1 if self.bin_boundaries is not None \
            else self.num_bins

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can start "
                             "using the `Discretization` layer.")
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), self.output_dtype)
        x = _devices.host_array(inputs)
        x = x.astype(np.float64 if x.dtype.kind in "iub" else np.float32)
        ids = np.digitize(x, np.asarray(self.bin_boundaries, dtype=np.float32))
        return encoding.encode(ids, self.output_mode, self._depth(), self.output_dtype,
                               self.name)

    def compute_output_shape(self, input_shape):
        return encoding.encoded_shape(input_shape, self.output_mode, self._depth())

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype,
                **({"trainable": self.trainable} if not self.trainable else {})}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        boundaries = config.get("bin_boundaries")
        if boundaries is not None and config.get("num_bins") is not None:
            config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = [float(b) for b in boundaries]
            return layer
        return cls(**config)
