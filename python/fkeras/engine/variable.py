"""Variable: a named, device-resident state buffer with Keras 3's `KerasVariable` surface.

`_value` is the device buffer (a NumPy array on the cpu device). fkeras code reads and updates
it in place, so optimizers (which pack variables as views of one flat buffer) and the tape (which
keys on buffer identity) stay valid. User code sees `value` as a Tensor, uses every operator of
a tensor on the Variable itself (`v * 2`, `x @ v`, `v[0]`), and changes it only through
`assign`, `assign_add` and `assign_sub`. Reading a trainable float Variable inside a
GradientTape (through any op or operator, or `.value`) watches it.
"""

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine import name_scope as _name_scope
from fkeras.engine import replay as _replay
from fkeras.engine import stateless as _stateless
from fkeras.engine.operators import TensorOperators

_AGGREGATIONS = (None, "none", "mean", "sum", "only_first_replica")


class _Writes:
    """Counts for compiled inference plans (models/compiled_plan.py): `n` of writes into
    variables' buffers (`assign*`, optimizer updates, EMA swaps, replays: folded weights are
    recomputed when it moved), `created` of variables made (a layer that gains weights, e.g.
    `enable_lora`, may need another lowering)."""

    __slots__ = ("n", "created")

    def __init__(self):
        self.n = 0
        self.created = 0


WRITES = _Writes()


def _auto_name():
    # Keras's automatic names (`variable`, `variable_1`, ...), restarted by clear_session().
    from fkeras.engine import naming

    return naming.unique_name("variable")


class Variable(TensorOperators):
    """A mutable tensor that holds model state (keras.Variable).

    Args:
        initializer: initial value (array-like or Tensor), or an initializer (name or callable
            `(shape, dtype) -> array`) together with `shape`.
        shape: the shape, when `initializer` is an initializer.
        dtype: the dtype; floating values default to float32, Python ints to int32, other
            arrays keep theirs.
        trainable: whether gradients are taken with respect to it (default True).
        name: the name (no "/").
        path: the full path; by default the name under the open `name_scope`s ("a/b/name"),
            as Keras 3 names it.

    Example:
    ```python
    v = fkeras.Variable(np.ones((2, 3)), name="w")
    v.assign_add(1.0)
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.sum(v * v)
    tape.gradient(loss, v)              # 2 * v
    ```
    """

    def __init__(self, initializer=None, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, path=None,
                 regularizer=None, constraint=None, device=None, value=None):
        if value is not None:  # fkeras's earlier keyword for the initial value
            initializer = value
        if name is None:
            name = _auto_name()
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name}")
        if aggregation not in _AGGREGATIONS:
            raise ValueError("Invalid value for argument `aggregation`. Expected one of "
                             "`None`, `'none'`, `'mean'`, `'sum'`, `'only_first_replica'`. "
                             f"Received: aggregation={aggregation}")
        dev = _device.get_device(device)
        self._device = dev
        self._value = _initial_value(dev, initializer, shape, dtype)
        WRITES.created += 1
        self.name = name
        self.path = path or _name_scope.join(name)  # under the open name scopes
        self.trainable = bool(trainable)
        self.regularizer = regularizer
        self.constraint = constraint
        self.aggregation = aggregation or "none"
        self.synchronization = synchronization
        self.autocast = autocast
        self.overwrite_with_gradient = False

    # ---- attributes ----
    @property
    def value(self):
        """The current value: a Tensor in user code (watched by an active GradientTape when
        trainable), the device buffer itself in fkeras's internal code."""
        from fkeras.engine import tape as _tape
        from fkeras.engine.tensor import _MODE, Tensor

        if _MODE.array:
            return self._value
        tape = _tape.current_tape()
        if tape is not None:
            tape.maybe_watch_variable(self)
        return Tensor(self._value)

    @property
    def shape(self):
        return tuple(self._value.shape)

    @property
    def dtype(self):
        return str(self._value.dtype)

    @property
    def ndim(self):
        return len(self._value.shape)

    @property
    def device(self):
        return self._device.name

    def numpy(self):
        """A NumPy copy of the value."""
        return np.array(self._device.to_numpy(self._value), copy=True)

    # ---- updates (in place: the buffer's identity never changes) ----
    def assign(self, value):
        """Stores `value` (same shape; cast to this variable's dtype); returns the new value."""
        if _stateless.discarding():
            return self._discarded_write(value, "assign")
        arr = _as_array(value, self)
        if arr.shape != self._value.shape:
            raise ValueError(
                "The shape of the target variable and the shape of the target value in "
                "`variable.assign(value)` must match. "
                f"variable.shape={self.shape}, Received: value.shape={arr.shape}. "
                f"Target variable: {self!r}")
        if _replay.active():
            _replay.note_assign(self)
        WRITES.n += 1
        self._device.copy_into(self._value, arr)
        return self._result()

    def assign_add(self, value):
        """Adds `value` (broadcast to this variable's shape) in place; returns the new value."""
        return self._update(np.add, value, "assign_add")

    def assign_sub(self, value):
        """Subtracts `value` (broadcast to this variable's shape) in place."""
        return self._update(np.subtract, value, "assign_sub")

    def _update(self, ufunc, value, what):
        if _stateless.discarding():
            return self._discarded_write(value, what)
        arr = _as_array(value, self)
        try:
            out = np.broadcast_shapes(self._value.shape, arr.shape)
        except ValueError:
            out = None
        if out != self._value.shape:
            raise ValueError(f"`{what}` on variable '{self.path}' of shape {self.shape}: "
                             f"cannot broadcast a value of shape {arr.shape} to it.")
        if _replay.active():
            _replay.note_assign(self)
        WRITES.n += 1
        dev = self._device
        if dev.is_host:
            ufunc(self._value, arr, out=self._value, casting="unsafe")
        elif self._value.dtype == np.float32:  # the device's broadcasting kernel (dev.xp)
            xp = dev.xp
            value = dev.asarray(arr, np.float32)  # (casting="unsafe", as on the host)
            dev.copy_into(self._value, getattr(xp, ufunc.__name__)(self._value, value))
        else:  # integer state: computed on the host, stored back (float32-only kernels)
            host = dev.to_numpy(self._value)
            ufunc(host, dev.to_numpy(arr), out=host, casting="unsafe")
            dev.copy_into(self._value, host)
        return self._result()

    def _discarded_write(self, value, what):
        """A write inside a symbolic call (engine/stateless.py): shapes checked where known,
        nothing stored; returns the variable's current value."""
        shape = getattr(value, "shape", None)
        if shape is not None and None not in tuple(shape):
            shape = tuple(shape)
            fits = (shape == tuple(self.shape) if what == "assign" else
                    _broadcasts_to(shape, tuple(self.shape)))
            if not fits:
                raise ValueError(f"`{what}` on variable '{self.path}' of shape {self.shape}: "
                                 f"a value of shape {shape} does not fit it.")
        return self._result()

    def _result(self):
        from fkeras.engine.tensor import _MODE, Tensor

        return self._value if _MODE.array else Tensor(self._value)

    # ---- Python protocols ----
    def __array__(self, dtype=None, copy=None):
        from fkeras.engine.tensor import as_numpy

        return as_numpy(self._device.to_numpy(self._value), dtype, copy)

    def __pos__(self):
        return self.value

    def __bool__(self):
        raise TypeError("A Keras Variable cannot be used as a boolean.")

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __index__(self):
        if self._value.dtype.kind not in "iu":
            raise TypeError(f"Only integer variables can be used as an index; variable "
                            f"'{self.path}' has dtype {self.dtype}.")
        return int(self._scalar())

    def _scalar(self):
        if self._value.ndim != 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars. Got: "
                            f"shape={self.shape}")
        return self._device.to_numpy(self._value)[()]

    def __len__(self):
        raise TypeError("object of type 'Variable' has no len()")

    def __iter__(self):
        # keras.Variable iterates over its first axis (Python's sequence protocol on
        # __getitem__); a 0-d variable is not iterable.
        if not self._value.shape:
            raise TypeError(f"Cannot iterate over the 0-d variable '{self.path}'.")
        return iter(self.value)

    def __repr__(self):
        return (f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}, "
                f"value={self._device.to_numpy(self._value)}>")

    __hash__ = None  # as keras.Variable (== is elementwise)


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _as_array(value, var):
    from fkeras.engine.keras_tensor import KerasTensor

    if isinstance(value, KerasTensor):
        raise ValueError("A KerasTensor is symbolic: it's a placeholder for a shape and a "
                         "dtype. It doesn't have any actual numerical value, so it cannot be "
                         f"assigned to variable '{var.path}'.")
    buf = getattr(value, "_value", None)
    arr = value if buf is None else buf
    if var._device.holds(arr) and not var._device.is_host:
        return arr  # a buffer of the variable's own device: copied there
    arr = np.asarray(_device.host_value(arr))
    if arr.dtype.kind in "USO":
        raise ValueError(f"Cannot assign a value of dtype {arr.dtype} to variable "
                         f"'{var.path}' of dtype {var.dtype}.")
    return arr


def _initial_value(dev, initializer, shape, dtype):
    if isinstance(initializer, str) or (callable(initializer) and not hasattr(
            initializer, "__array__") and not isinstance(initializer, Variable)):
        if shape is None:
            raise ValueError("When creating a Variable from an initializer, the `shape` "
                             "argument should be specified. Received: "
                             f"initializer={initializer} and shape=None")
        from fkeras import initializers

        init = initializers.get(initializer)
        initializer = init(tuple(shape), dtype=dtype or "float32")
    buf = getattr(initializer, "_value", None)
    arr = np.asarray(_device.host_value(initializer if buf is None else buf))
    if dtype is not None:
        from fkeras.ops.dtypes import standardize_dtype

        target = np.dtype(standardize_dtype(dtype))
    elif arr.dtype.kind == "f":
        target = np.dtype(dev.dtype)
    elif isinstance(initializer, (bool, int)) or arr.dtype == np.int64 and arr.ndim == 0:
        target = np.dtype(np.bool_) if isinstance(initializer, bool) else np.dtype(np.int32)
    else:
        target = arr.dtype
    if not dev.is_host:
        return dev.upload(np.array(arr, dtype=target, copy=True))
    if target.kind == "f" and target == np.dtype(np.float32):
        return np.array(dev.asarray(arr), copy=True)
    return np.array(arr, dtype=target, copy=True)
