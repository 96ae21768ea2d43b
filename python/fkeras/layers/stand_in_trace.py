"""Output shapes of a user-written layer whose `call` cannot run on KerasTensors.

Keras 3 (jax, torch) infers a layer's symbolic outputs by running `call` on stand-in tensors
whose unknown dimensions get sample sizes, so a `call` may use `ops.shape(x)[0]` as a value
(`ops.tile(mask, [batch, 1, 1])`, keras-io's miniature GPT). fkeras runs `call` on
KerasTensors, where that batch size is None; when that fails for a layer defined outside
fkeras, `trace_output_spec` runs `call` twice on zeros with two sample sizes for every unknown
dimension (nothing recorded on a tape, variable writes dropped, as under Keras's
StatelessScope) and keeps a dimension only where both runs agree.
"""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tape import stop_recording
from fkeras.engine.tensor import _MODE, run_user, wrap_structure
from fkeras.engine.stateless import discard_writes
from fkeras.ops.registry import outside_symbolic_call
from fkeras.utils import nest

# (batch axis, other axes) sample sizes of the two runs: small batches keep the runs cheap,
# larger sizes elsewhere leave room for kernels and strides along unknown time/space axes.
_SIZES = ((2, 83), (3, 89))
# Tried when those fail: Keras traces on torch's "meta" device, where a lookup past the end
# of a table only shapes its output, so a positional embedding of 16 rows indexed by
# `arange(sequence_length)` traces at length 83; fkeras's stand-ins hold real values, and
# shorter unknown axes keep such lookups in range.
_SMALL_SIZES = ((2, 7), (3, 11))


def _stand_in(value, sizes):
    if not isinstance(value, KerasTensor):
        return value
    batch, other = sizes
    shape = tuple((batch if i == 0 else other) if d is None else d
                  for i, d in enumerate(value.shape))
    return np.zeros(shape, dtype=value.dtype)


def _run(layer, args, kwargs, sizes):
    args, kwargs = nest.map_structure(lambda v: _stand_in(v, sizes), (args, kwargs))
    with outside_symbolic_call(), stop_recording(), discard_writes():
        if _MODE.array:
            return run_user(layer.call, *args, **kwargs)
        return layer.call(*wrap_structure(args), **wrap_structure(kwargs))


def trace_output_spec(layer, args, kwargs):
    """KerasTensors for `layer.call(*args, **kwargs)` from two stand-in runs; raises what the
    first run raises."""
    sizes = _SIZES
    try:
        first = _run(layer, args, kwargs, sizes[0])
    except Exception:
        sizes = _SMALL_SIZES
        try:
            first = _run(layer, args, kwargs, sizes[0])
        except Exception:
            first = _run(layer, args, kwargs, _SIZES[0])  # raises the first error again
    second = nest.flatten(_run(layer, args, kwargs, sizes[1]))
    seconds = iter(second)

    def spec(a):
        a, b = np.asarray(a), np.asarray(next(seconds))
        shape = tuple(p if p == q else None for p, q in zip(a.shape, b.shape))
        return KerasTensor(shape, str(a.dtype))

    return nest.map_structure(spec, first)
