"""Variable: a named, device-resident weight with Keras attributes.

`value` is the device array (a NumPy float32 array on the cpu device). Updates happen in place
(`assign`), so an optimizer or the tape can key on the array's identity.
"""

import numpy as np

from fkeras.backend import devices as _device


class Variable:
    def __init__(self, value, name="variable", trainable=True, path=None, regularizer=None,
                 constraint=None, device=None):
        dev = _device.get_device(device)
        self._device = dev
        self.value = dev.asarray(value).copy() if isinstance(value, np.ndarray) else dev.asarray(value)
        self.name = name
        self.path = path or name
        self.trainable = bool(trainable)
        self.regularizer = regularizer
        self.constraint = constraint

    @property
    def shape(self):
        return tuple(self.value.shape)

    @property
    def dtype(self):
        return "float32" if self._device.dtype == np.float32 else str(self._device.dtype)

    @property
    def ndim(self):
        return len(self.value.shape)

    @property
    def device(self):
        return self._device.name

    def numpy(self):
        """A NumPy copy of the value."""
        return np.array(self._device.to_numpy(self.value), copy=True)

    def assign(self, value):
        value = np.asarray(value)
        if value.shape != self.value.shape:
            raise ValueError(
                f"Cannot assign a value of shape {value.shape} to variable '{self.path}' of "
                f"shape {self.value.shape}."
            )
        self.value[...] = value
        return self

    def assign_add(self, value):
        self.value += np.asarray(value, dtype=self.value.dtype)
        return self

    def assign_sub(self, value):
        self.value -= np.asarray(value, dtype=self.value.dtype)
        return self

    def __array__(self, dtype=None, copy=None):
        a = self._device.to_numpy(self.value)
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}>"
