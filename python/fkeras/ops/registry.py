"""The ops registry: every differentiable op as output_spec + forward + backward side by side.

An op is a small class:
- `output_spec(*inputs, **attrs)`: the output shape(s) from input KerasTensors (symbolic mode);
  returns a shape tuple, a KerasTensor, or a list of those for several outputs;
- `forward(dev, *arrays, **attrs) -> (outputs, saved)`: computes on device arrays through
  `dev.kernels` (and NumPy for structural work on the cpu/reference devices);
- `backward(dev, saved, grads, needs, **attrs)`: one gradient per positional input (None where
  `needs[i]` is False or the input is not differentiable); `grads` holds one cotangent per output
  (zeros filled in for outputs that received none).

`apply(op, *inputs, **attrs)` runs an op: symbolically when any input is a KerasTensor (shape
inference, and a graph node when called outside a layer), eagerly otherwise (recorded on the
active GradientTape when an input needs a gradient). Positional inputs are tensors (or None for
an absent optional input); keyword attributes are plain Python values.
"""

import abc
import threading

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine import fast_path
from fkeras.engine import tape as _tape
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import _MODE, Tensor, wrap_outputs
from fkeras.engine.variable import Variable
from fkeras.ops import device_dispatch as _device_dispatch

REGISTRY = {}
_scope = threading.local()


class Op(abc.ABC):
    name = None
    n_outputs = 1
    differentiable = True  # False: never recorded on a tape (comparisons, argmax, ...)
    # True: forward and backward use only the device's kernels and buffer protocol, so the
    # op runs on a non-host device's buffers (else on the host: ops/device_dispatch.py).
    device_native = False
    # True: a multi-output op whose backward takes None for an output that received no
    # gradient (and skips its work). Otherwise the tape fills such outputs' cotangents with
    # zeros first, which costs a pass over them (the LSTM's unused hs: 1.6 MB per step).
    takes_missing_cotangents = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            REGISTRY[cls.name] = cls()

    @abc.abstractmethod
    def output_spec(self, *inputs, **attrs):
        """Output shape(s) from input KerasTensors."""

    @abc.abstractmethod
    def forward(self, dev, *inputs, **attrs):
        """(outputs, saved) computed on device arrays."""

    def native_on(self, inputs, attrs):
        """Whether this call (its inputs, as passed, and attributes) runs on a non-host
        device's buffers; the default is `device_native`. Ops native for some calls only (a
        layout, an axis) say which."""
        return self.device_native

    def backward(self, dev, saved, grads, needs, **attrs):
        """One gradient per positional input; ops that are not differentiable keep this."""
        raise TypeError(f"The op `{self.name}` is not differentiable: it has no gradient.")


# ---- symbolic scope: inside a layer's call on KerasTensors, ops create no graph nodes ----

class symbolic_call_scope:
    """Marks that a layer is computing its outputs symbolically (nested calls add no nodes)."""

    def __enter__(self):
        _scope.depth = getattr(_scope, "depth", 0) + 1

    def __exit__(self, *exc):
        _scope.depth -= 1


def in_symbolic_call():
    return getattr(_scope, "depth", 0) > 0


class outside_symbolic_call:
    """Lifts the symbolic scope for a block that builds a graph of its own (a Sequential
    model built the first time it is called inside another layer's symbolic call)."""

    def __enter__(self):
        self._depth = getattr(_scope, "depth", 0)
        _scope.depth = 0

    def __exit__(self, *exc):
        _scope.depth = self._depth


# ---- running ops ----

def _to_array(dev, x):
    if x is None:
        return None
    if type(x) is np.ndarray and x.dtype == dev.dtype and x.flags.c_contiguous:
        return x
    if type(x) is Tensor:
        x = x._value
        if type(x) is np.ndarray and x.dtype == dev.dtype and x.flags.c_contiguous:
            return x
    if isinstance(x, Variable):
        x = x._value
        if type(x) is np.ndarray:
            return x
    if not isinstance(x, np.ndarray) and hasattr(x, "to_host"):
        x = x.to_host()  # a buffer of a non-host device used on the host: copied here
    if isinstance(x, np.ndarray) and x.dtype.kind in "iubc":
        return x  # integer data (indices, labels) stays integer; complex stays complex
    return dev.asarray(x)


def _recorded_inputs(tape, dev, inputs):
    """The device buffers of `inputs` for an op the tape records: a Variable read is watched
    (tf.GradientTape's rule), a converted float buffer is linked to its source."""
    arrays = []
    tracked = None if tape._shared or not tape.watch_accessed_variables else tape._tracked
    for x in inputs:
        if isinstance(x, Variable):
            value = x._value
            if x.trainable and value.dtype.kind == "f":
                if tracked is not None:  # one tape: watch_variable_buffer inlined
                    tracked[id(value)] = value
                else:
                    tape.watch_variable_buffer(value)
            if type(value) is not np.ndarray and not dev.holds(value):
                a = _to_array(dev, value)  # a variable of another device: copied here
                _link_conversion(tape, dev, value, a)
                arrays.append(a)
                continue
            arrays.append(value)
            continue
        a = _to_array(dev, x)
        if a is not x and a is not None:
            _link_conversion(tape, dev, x, a)
        arrays.append(a)
    return arrays


def _link_conversion(tape, dev, x, a):
    """Records, as a cast, a conversion `_to_array` made of a recorded float buffer (a
    float16/float64 value to the device dtype, a strided view to a contiguous copy), so the
    tape's chain from a source to this op is never cut."""
    t = type(x)
    src = x._value if t is Tensor else x if t is np.ndarray or _device.is_buffer(x) else None
    if src is None or a is src or src.dtype.kind != "f":
        return
    if type(src) is not np.ndarray:  # a buffer of a non-host device, copied to the host
        tape.record(_device_dispatch.DOWNLOAD, dev, [src], a, _device.device_of(src), {})
    else:
        tape.record(REGISTRY["cast"], dev, [src], a, src.dtype, {"dtype": a.dtype})


def _spec_to_tensor(spec):
    if isinstance(spec, KerasTensor):
        return KerasTensor(spec.shape, spec.dtype)
    return KerasTensor(spec)


def _apply_python(op, *inputs, **attrs):
    """Runs `op` on `inputs`: symbolically on KerasTensors, eagerly on arrays."""
    for x in inputs:
        if isinstance(x, KerasTensor):
            return _apply_symbolic(op, inputs, attrs)
    dev = _device.get_device()
    if not dev.is_host:
        return _device_dispatch.apply_on_device(op, dev, inputs, attrs)
    tape = _tape.current_tape()
    if tape is not None and op.differentiable:
        arrays = _recorded_inputs(tape, dev, inputs)
    else:
        tape = None
        arrays = [_to_array(dev, x) for x in inputs]
    outputs, saved = op.forward(dev, *arrays, **attrs)
    outputs = _no_aliasing(outputs, arrays)
    if tape is not None:
        tape.record(op, dev, arrays, outputs, saved, attrs)
    return outputs if _MODE.array else wrap_outputs(outputs)


# The C fast path in front (engine/fast_path.py): plain buffers outside a tape run the op's
# forward on the cpu device directly; every other call runs the function above.
apply = fast_path.apply_function(_apply_python, _device.get_device("cpu"))


def _no_aliasing(outputs, arrays):
    # The tape keys on array identity: an output must never be one of the inputs, and must be
    # an array (NumPy arithmetic on 0-d arrays returns scalars, which the next op would copy).
    if isinstance(outputs, tuple):
        return tuple(_unaliased(o, arrays) for o in outputs)
    return _unaliased(outputs, arrays)


def _unaliased(output, arrays):
    if isinstance(output, np.generic):
        return np.asarray(output)
    for a in arrays:
        if output is a:
            return _view(output)
    return output


def _view(buf):
    """A new buffer object over the same memory (NumPy's view; a reshape for device buffers)."""
    return buf.view() if type(buf) is np.ndarray else buf.reshape(buf.shape)


def _apply_symbolic(op, inputs, attrs):
    specs = op.output_spec(*inputs, **attrs)
    if isinstance(specs, list):
        outputs = [_spec_to_tensor(s) for s in specs]
    else:
        outputs = _spec_to_tensor(specs)
    connected = any(isinstance(x, KerasTensor) and x._keras_history is not None for x in inputs)
    if connected and not in_symbolic_call():
        # A raw op in a functional graph becomes a node of an OpLayer (Keras 3 does the same).
        from fkeras.layers.op_layer import OpLayer

        return OpLayer(op, attrs)._record_call(inputs, outputs)
    return outputs
