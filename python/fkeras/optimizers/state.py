"""Optimizer state variables: scalar counters/rates and views into the flat slot buffers."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.variable import Variable


class ScalarVariable(Variable):
    """A 0-d variable (iterations, learning_rate) usable as a number: float(v), int(v), v * 2."""

    def __init__(self, value, name, dtype=np.float32):
        self._device = _devices.get_device("cpu")
        self._value = np.array(value, dtype=dtype)
        self.name = self.path = name
        self.trainable = False
        self.regularizer = self.constraint = None

    @property
    def dtype(self):
        return str(self._value.dtype)

    def assign(self, value):
        self._value[...] = np.asarray(value)
        return self

    def numpy(self):
        return self._value.copy()

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        return int(self._value)

    def _v(self):
        return self._value[()]

    def __add__(self, o):
        return self._v() + o

    def __radd__(self, o):
        return o + self._v()

    def __sub__(self, o):
        return self._v() - o

    def __rsub__(self, o):
        return o - self._v()

    def __mul__(self, o):
        return self._v() * o

    def __rmul__(self, o):
        return o * self._v()

    def __truediv__(self, o):
        return self._v() / o

    def __rtruediv__(self, o):
        return o / self._v()

    def __eq__(self, o):
        return self._v() == o

    def __lt__(self, o):
        return self._v() < o

    def __le__(self, o):
        return self._v() <= o

    def __gt__(self, o):
        return self._v() > o

    def __ge__(self, o):
        return self._v() >= o

    __hash__ = object.__hash__

    def __repr__(self):
        return f"<Variable path={self.path}, shape=(), value={self._v()}>"


def view_variable(array, name, dev=None, path=None):
    """A non-trainable Variable whose value IS `array` (a view into an optimizer or metric
    buffer)."""
    v = Variable.__new__(Variable)
    v._device = _devices.get_device(dev)
    v._value = array
    v.name = name
    v.path = path or name
    v.trainable = False
    v.regularizer = v.constraint = None
    v.aggregation, v.synchronization, v.autocast = "sum", "auto", True
    v.overwrite_with_gradient = False
    return v
