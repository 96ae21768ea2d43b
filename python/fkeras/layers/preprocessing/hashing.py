"""Hashing: values to bins by a string hash, the same bins as Keras 3 (TensorFlow's ops)."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import encoding
from fkeras.layers.preprocessing.hash_functions import fingerprint64, siphash24


class Hashing(Layer):
    """Hashes strings or integers into `num_bins` bins (Keras 3).

    Each value is turned into its string (integers in decimal, floats first truncated to
    integers, bools as "true"/"false", strings as UTF-8) and hashed: FarmHash Fingerprint64
    without `salt` (`tf.strings.to_hash_bucket_fast`), SipHash-2-4 keyed by `salt` with it
    (`to_hash_bucket_strong`); the bin is the hash modulo the number of bins. With
    `mask_value`, values equal to it go to bin 0 and the others to 1 + hash % (num_bins - 1).
    These are the bins Keras 3.15 computes (it needs TensorFlow for this layer on every
    backend; fkeras does not).

    Args:
        num_bins: the number of bins (the mask bin included).
        mask_value: a value mapped to bin 0, or None.
        salt: None, an int (used for both key words) or a pair of ints: the SipHash key.
        output_mode: "int" (int64 bins by default), "one_hot", "multi_hot" or "count".
        sparse: must be False (fkeras has no sparse tensors).

    Example:
    ```python
    Hashing(num_bins=3)(np.array([["A"], ["B"], ["C"]], dtype=object))   # [[1], [0], [1]]
    ```
    """

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or isinstance(num_bins, bool) or \
                not isinstance(num_bins, (int, np.integer)) or num_bins <= 0:
            raise ValueError("The `num_bins` for `Hashing` cannot be `None` or non-positive "
                             f"values. Received: num_bins={num_bins}.")
        if output_mode == "int" and self.dtype not in ("int32", "int64"):
            raise ValueError("When `output_mode=\"int\"`, `dtype` should be an integer type, "
                             f"'int32' or 'int64'. Received: dtype={kwargs['dtype']}")
        encoding.check_output_mode(output_mode, encoding.OUTPUT_MODES, self.name)
        if sparse:
            raise ValueError(f'Layer "{self.name}": `sparse=True` is not supported by fkeras '
                             "(no sparse tensors). Received: sparse=True")
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.output_mode = output_mode
        self.sparse = False
        self.salt = _salt(salt)
        self.strong_hash = self.salt is not None

    def call(self, inputs):
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), self.dtype)
        values = _devices.host_array(inputs)
        if self.output_mode == "one_hot" and values.ndim and values.shape[-1] == 1:
            values = values.reshape(values.shape[:-1])
        return encoding.encode(self._bins(values), self.output_mode, self.num_bins,
                               self.dtype, self.name)

    def _bins(self, values):
        bins, mask = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = _equal(values, self.mask_value)
        if self.salt is None:
            def hash_fn(data):
                return fingerprint64(data)
        else:
            def hash_fn(data):
                return siphash24(self.salt[0], self.salt[1], data)
        out = hash_strings(values, hash_fn, bins, self.name)
        if mask is not None:
            out = np.where(mask, 0, out + 1)
        return out

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        if not input_shape:
            return (self.num_bins,)
        return input_shape[:-1] + (self.num_bins,)

    def get_config(self):
        config = super().get_config()
        config.update({"num_bins": self.num_bins, "salt": self.salt,
                       "mask_value": self.mask_value, "output_mode": self.output_mode,
                       "sparse": self.sparse})
        return config


def _salt(salt):
    if salt is None:
        return None
    if isinstance(salt, (tuple, list)) and len(salt) == 2 and \
            all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in salt):
        return [int(salt[0]), int(salt[1])]
    if isinstance(salt, (int, np.integer)) and not isinstance(salt, bool):
        return [int(salt), int(salt)]
    raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 "
                     f"integers, or a single integer. Received: salt={salt}.")


def _equal(values, mask_value):
    if values.dtype.kind in "USO":
        target = as_bytes(mask_value)
        return np.vectorize(lambda v: as_bytes(v) == target, otypes=[bool])(values) \
            if values.size else np.zeros(values.shape, bool)
    return values == mask_value


def as_bytes(value):
    """The bytes TensorFlow hashes for one value (see Hashing's docstring)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bool, np.bool_)):
        return b"true" if value else b"false"
    if isinstance(value, (float, np.floating)):
        return str(int(np.float64(value).astype(np.int64))).encode()
    if isinstance(value, (int, np.integer)):
        return str(int(value)).encode()
    raise TypeError(f"Cannot hash a value of type {type(value).__name__}: expected strings, "
                    f"bytes, integers or floats. Received: {value!r}")


def hash_strings(values, hash_fn, bins, layer_name):
    """hash_fn(bytes of each value) % bins as an int64 array of `values`' shape; each distinct
    value is hashed once."""
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat.astype(np.int64)
    if flat.dtype.kind in "USiub" and flat.size:
        # Vectorized distinct values (NumPy's sort), then one hash per distinct value.
        distinct, inverse = np.unique(flat, return_inverse=True)
        table = np.array([hash_fn(as_bytes(v)) % bins for v in distinct.tolist()],
                         dtype=np.int64)
        return table[inverse.reshape(-1)].reshape(values.shape)
    cache = {}
    out = np.empty(flat.shape, dtype=np.int64)
    for i, value in enumerate(flat.tolist()):
        try:
            data = as_bytes(value)
        except TypeError as e:
            raise TypeError(f'Layer "{layer_name}": {e}') from None
        bin_ = cache.get(data)
        if bin_ is None:
            bin_ = cache[data] = hash_fn(data) % bins
        out[i] = bin_
    return out.reshape(values.shape)
