"""HashedCrossing: crosses two or more categorical features into hashed bins (Keras 3)."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import encoding
from fkeras.layers.preprocessing.hash_functions import fingerprint64, fingerprint_cat64

# tf.sparse.cross_hashed's default hash key, the start of every crossed fingerprint.
_HASH_KEY = 0xDECAFCAFFE
_MASK = (1 << 64) - 1


class HashedCrossing(Layer):
    """Hashes the combination of two or more features into `num_bins` bins (Keras 3).

    The inputs (integer or string arrays of equal shape: scalars, `(batch,)` or `(batch, 1)`)
    are crossed element by element as `tf.sparse.cross_hashed` does, which Keras 3.15 calls: a
    running fingerprint starts at the key 0xDECAFCAFFE and absorbs each feature in turn
    (FingerprintCat64) as its FarmHash Fingerprint64 (strings) or its 64-bit value
    (integers); the bin is that fingerprint modulo `num_bins`.

    Args:
        num_bins: the number of bins.
        output_mode: "int" (int64 bins by default) or "one_hot".
        sparse: must be False (fkeras has no sparse tensors).

    Example:
    ```python
    HashedCrossing(num_bins=5)((np.array(["A", "B"]), np.array([101, 101])))   # [1, 4]
    ```
    """

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None,
                 **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise ValueError(f'Layer "{self.name}": `sparse=True` is not supported by fkeras '
                             "(no sparse tensors). Received: sparse=True")
        encoding.check_output_mode(output_mode, ("int", "one_hot"), self.name)
        if isinstance(num_bins, bool) or not isinstance(num_bins, (int, np.integer)) or \
                num_bins < 1:
            raise ValueError(f'Layer "{self.name}": `num_bins` must be a positive integer. '
                             f"Received: num_bins={num_bins}")
        self.num_bins = int(num_bins)
        self.output_mode = output_mode
        self.sparse = False

    def __call__(self, *args, **kwargs):
        inputs = args[0] if args else kwargs.get("inputs")
        self._check_at_least_two_inputs(inputs)
        if isinstance(inputs, tuple):   # the base Layer takes a list as several inputs
            args = (list(inputs),) + tuple(args[1:])
        return super().__call__(*args, **kwargs)

    def call(self, inputs):
        self._check_at_least_two_inputs(inputs)
        shapes = [tuple(x.shape) for x in inputs]
        self._check_shapes(shapes)
        if any(isinstance(x, KerasTensor) for x in inputs):
            dtypes = [str(x.dtype) for x in inputs]
            self._check_dtypes(dtypes)
            return KerasTensor(self.compute_output_shape(shapes), self.dtype)
        arrays = [_devices.host_array(x) for x in inputs]
        self._check_dtypes([a.dtype.kind for a in arrays])
        columns = [_column(a.reshape(-1)) for a in arrays]
        out = np.empty(len(columns[0]), dtype=np.int64)
        for i in range(len(out)):
            fp = _HASH_KEY
            for column in columns:
                fp = fingerprint_cat64(fp, column[i])
            out[i] = fp % self.num_bins
        ids = out.reshape(shapes[0])
        return encoding.encode(ids, self.output_mode, self.num_bins,
                               "int64" if self.output_mode == "int" else self.dtype,
                               self.name).astype(self.dtype)

    def _check_at_least_two_inputs(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("`HashedCrossing` should be called on a list or tuple of inputs. "
                             f"Received: inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError("`HashedCrossing` should be called on at least two inputs. "
                             f"Received: inputs={inputs}")

    def _check_shapes(self, shapes):
        first = shapes[0]
        if len(first) > 2 or (len(first) == 2 and first[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, "
                             f"`(batch_size)` or `(batch_size, 1)`. Received shapes: {shapes}")
        if any(s != first for s in shapes[1:]):
            raise ValueError("All `HashedCrossing` inputs should have equal shape. Received "
                             f"shapes: {shapes}")

    def _check_dtypes(self, kinds):
        ok = all(k in "iuUSO" or k.startswith(("int", "uint", "string")) for k in kinds)
        if not ok:
            raise ValueError("All `HashedCrossing` inputs should have an integer or string "
                             f"dtype. Received dtypes: {kinds}")

    def compute_output_shape(self, input_shape):
        if not (isinstance(input_shape, (list, tuple)) and len(input_shape) == 2
                and all(isinstance(s, (list, tuple)) for s in input_shape)):
            raise ValueError("Expected as input a list/tuple of 2 tensors. Received "
                             f"input_shape={input_shape}")
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if not first:
            return (self.num_bins,)
        if first[-1] != 1:
            return first + (self.num_bins,)
        return first[:-1] + (self.num_bins,)

    def get_config(self):
        return {"num_bins": self.num_bins, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        return cls(**config)


def _column(flat):
    """The per-element feature fingerprints of one input: Fingerprint64 of strings, the
    two's-complement 64-bit value of integers."""
    if flat.dtype.kind in "iu":
        return [int(v) & _MASK for v in flat.tolist()]
    out = []
    for v in flat.tolist():
        if isinstance(v, str):
            v = v.encode("utf-8")
        if not isinstance(v, bytes):
            v = int(v) & _MASK
            out.append(v)
            continue
        out.append(fingerprint64(v))
    return out
