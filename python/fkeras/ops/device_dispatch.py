"""Running ops on a non-host device (the cuda device): native ops on device buffers, every
other op on the host.

`registry.apply` hands a call here when the current device has `is_host = False`:
- an op marked `device_native` (its forward and backward use only the device's kernels and the
  device buffer protocol of `fkeras.backend.devices`) runs on the device's buffers; inputs that
  are host values are uploaded first;
- any other op runs on the cpu device: its inputs are copied to the host, its outputs back to
  the device, and the tape records a `HostOp` whose backward does the same with the
  gradients. The result is the cpu result; the cost is the two copies. `host_op_calls()`
  counts those calls per op (what to port next; tests check the training step of the
  benchmark models makes none).

A host value that the tape records (a watched NumPy-backed Tensor) keeps its gradient chain
through the upload: the copy is recorded as a `Transfer` whose backward downloads.
"""

import collections

import numpy as np

from fkeras.backend import devices as _device
from fkeras.engine import tape as _tape
from fkeras.engine.tensor import _MODE, Tensor, wrap_outputs
from fkeras.engine.variable import Variable

_HOST_CALLS = collections.Counter()


def host_op_calls():
    """{op name: calls} of the ops run on the host for a non-host device since the last
    `reset_host_op_calls()`."""
    return dict(_HOST_CALLS)


def reset_host_op_calls():
    _HOST_CALLS.clear()


def _buffer(x):
    return x._value if isinstance(x, (Tensor, Variable)) else x


class Transfer:
    """The upload of a recorded host buffer: its gradient is the downloaded cotangent."""

    name = "transfer"
    differentiable = True

    def backward(self, dev, saved, g, needs, **attrs):
        return (dev.to_numpy(g),)


class HostOp:
    """`op` computed on the host for device `dev`: the backward downloads the cotangents, runs
    op.backward on the cpu device and uploads the input gradients."""

    __slots__ = ("op",)
    differentiable = True

    def __init__(self, op):
        self.op = op

    @property
    def name(self):
        return self.op.name

    def backward(self, dev, saved, grads, needs, **attrs):
        host = _device.get_device("cpu")
        if isinstance(grads, list):
            grads = [dev.to_numpy(g) for g in grads]
        else:
            grads = dev.to_numpy(grads)
        with _device.device("cpu"):  # ops the backward applies run on the host too
            gin = self.op.backward(host, saved, grads, needs, **attrs)
        if not isinstance(gin, (tuple, list)):
            gin = (gin,)
        return tuple(None if g is None else dev.asarray(g) for g in gin)


class Download:
    """The copy of a non-host device's recorded buffer to the host (an op of the host device
    on it): the cotangent goes back up to that device (`saved`)."""

    name = "download"
    differentiable = True

    def backward(self, dev, saved, g, needs, **attrs):
        return (saved.asarray(g),)


class Convert:
    """A device buffer converted to the device float dtype (no cast kernel: on the host);
    the cotangent goes back in the source's dtype (`saved`)."""

    name = "convert"
    differentiable = True

    def backward(self, dev, saved, g, needs, **attrs):
        return (dev.upload(dev.to_numpy(g).astype(saved)),)


_TRANSFER = Transfer()
_CONVERT = Convert()
DOWNLOAD = Download()


def _placed(dev, value, keep_dtype=False):
    """value on `dev` (as an op input: floats in the device float dtype; `keep_dtype`: an
    op's output, any numeric dtype kept); strings and objects stay on the host."""
    if getattr(value, "dtype", None) is not None and value.dtype.kind in "USOVc":
        return value
    return dev.upload(value) if keep_dtype else dev.asarray(value)


def _device_inputs(tape, dev, inputs):
    """The inputs as buffers of `dev` (uploaded where needed; a recorded host buffer linked to
    its upload), Variable reads watched as in `registry._recorded_inputs`."""
    arrays = []
    for x in inputs:
        if x is None:
            arrays.append(None)
            continue
        if tape is not None and isinstance(x, Variable):
            value = x._value
            if x.trainable and value.dtype.kind == "f":
                tape.watch_variable_buffer(value)
        src = _buffer(x)
        a = _placed(dev, src)
        if tape is not None and a is not src and getattr(src, "dtype", None) is not None \
                and src.dtype.kind == "f":
            if isinstance(src, np.ndarray):
                tape.record(_TRANSFER, dev, [src], a, None, {})
            else:  # a float16/float64 device buffer converted to the device float dtype
                tape.record(_CONVERT, dev, [src], a, src.dtype, {})
        arrays.append(a)
    return arrays


def _fresh(output, arrays):
    # The tape keys on buffer identity: an output is never one of the inputs.
    for a in arrays:
        if output is a:
            return output.reshape(output.shape)
    return output


def apply_on_device(op, dev, inputs, attrs):
    """Runs `op` for the non-host device `dev` (see the module docstring)."""
    tape = _tape.current_tape() if op.differentiable else None
    native = op.native_on(inputs, attrs)
    if not native and tape is None:  # nothing to record: no upload of the inputs
        arrays = [_buffer(x) for x in inputs]
    else:
        arrays = _device_inputs(tape, dev, inputs)
    if native:
        outputs, saved = op.forward(dev, *arrays, **attrs)
        if isinstance(outputs, (tuple, list)):
            outputs = type(outputs)(_fresh(o, arrays) for o in outputs)
        else:
            outputs = _fresh(outputs, arrays)
        recorded = op
    else:
        _HOST_CALLS[op.name] += 1
        host = _device.get_device("cpu")
        from fkeras.ops.registry import _to_array

        host_arrays = [None if a is None else _to_array(host, _device.host_value(a))
                       for a in arrays]
        with _device.device("cpu"):  # ops the forward applies run on the host too
            outputs, saved = op.forward(host, *host_arrays, **attrs)
        if isinstance(outputs, (tuple, list)):
            outputs = type(outputs)(_placed(dev, np.asarray(o), True) for o in outputs)
        else:
            outputs = _placed(dev, np.asarray(outputs), True)
        recorded = HostOp(op)
    if tape is not None:
        tape.record(recorded, dev, arrays, outputs, saved, attrs)
    return outputs if _MODE.array else wrap_outputs(outputs)
