"""keras.remat and keras.RematScope: rematerialization (gradient checkpointing) on the tape.

A call of a rematerialized function `f` inside a GradientTape:
1. runs `f` once with the tape's recording stopped, under a *collector* tape that records
   nothing but notes the buffers `f` reads that need a gradient: the trainable variables it
   reads and any tensor of an enclosing tape it captured (a closure);
2. records ONE tape entry, the `remat` op, whose inputs are `f`'s tensor arguments plus those
   buffers and whose outputs are `f`'s tensor results. None of `f`'s intermediate results are
   kept: the entry holds the inputs, the results and the call itself;
3. in the backward pass re-runs `f` on the same inputs under a fresh tape (same mode, the same
   random seeds, the variables it assigned as they were: engine/replay.py) and takes the input
   and variable gradients for the incoming cotangents from it. Nested rematerialized calls
   inside that recomputation run plainly (their activations live only while it runs).

Outside a tape (inference, `predict`) and on KerasTensors `f` is simply called.

`RematScope(mode)` is Keras 3's: a layer CREATED inside the scope keeps the scope's mode
(`layer._remat_mode`) and applies it on every eager call (`Layer.rematerialized_call`).
"""

import collections
import functools
import threading

import numpy as np

from fkeras.backend.devices import _BUFFER_TYPES
from fkeras.engine import replay as _replay
from fkeras.engine import tape as _tape
from fkeras.engine import tensor as _tensor
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.variable import Variable
from fkeras.ops.registry import REGISTRY, Op, _unaliased, _view
from fkeras.utils import nest

_STATE = threading.local()

RematMode = collections.namedtuple("RematMode",
                                   ["mode", "output_size_threshold", "layer_names"])

_MODES = ("full", "activations", "larger_than", "list_of_layers", None)


class RematScope:
    """A scope whose layers are rematerialized: their activations are recomputed in the
    backward pass instead of kept (keras.RematScope).

    The mode applies to layers CREATED inside the scope (Keras 3 records it in the layer's
    constructor), on each of their eager calls under a GradientTape (the built-in training
    step included).

    Args:
        mode: "full" (every layer), "activations" (the `activation` function of layers that
            have one), "larger_than" (layers whose output has more than
            `output_size_threshold` elements), "list_of_layers" (layers named in
            `layer_names`), or None (off, also inside an enclosing scope).
        output_size_threshold: the element count for "larger_than" (default 1024).
        layer_names: the layer names for "list_of_layers".

    Example:
    ```python
    with fkeras.RematScope(mode="full"):
        model = fkeras.Sequential([fkeras.Input((784,)), Dense(1024, activation="relu"),
                                   Dense(10)])
    model.compile("adam", "sparse_categorical_crossentropy")  # fit recomputes the Dense layers
    ```
    """

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in _MODES:
            raise ValueError(f"Invalid mode '{mode}'. Supported modes are: 'full', "
                             "'activations', 'larger_than', 'list_of_layers', or  None.")
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = layer_names or []
        self._pushed = False

    def __enter__(self):
        _scopes().append(self)
        self._pushed = True
        return self

    def __exit__(self, *exc):
        if self._pushed:
            _scopes().pop()
            self._pushed = False


def _scopes():
    stack = getattr(_STATE, "scopes", None)
    if stack is None:
        stack = _STATE.scopes = []
    return stack


def get_current_remat_mode():
    """The innermost RematScope's settings as a `RematMode`, or None outside any scope."""
    stack = getattr(_STATE, "scopes", None)
    if not stack:
        return None
    scope = stack[-1]
    return RematMode(scope.mode, scope.output_size_threshold, scope.layer_names)


def remat(f):
    """`f` rematerialized: under a GradientTape its intermediate results are not kept but
    recomputed in the backward pass, trading compute for memory (keras.remat).

    Values and gradients are those of `f`; `f` may take and return nested structures of
    tensors, keyword arguments and the variables of layers it calls. Dropout and other random
    draws inside `f` repeat in the recomputation, and the variables `f` assigns
    (BatchNormalization's moving statistics) are updated once.

    Args:
        f: a callable (a function, a layer, a layer's `call`).

    Returns:
        A callable with `f`'s signature.

    Example:
    ```python
    block = fkeras.remat(lambda x: dense2(dense1(x)))
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.mean(block(x) ** 2)     # dense1's output is not kept
    grads = tape.gradient(loss, dense1.trainable_weights + dense2.trainable_weights)
    ```
    """

    @functools.wraps(f, updated=())  # (not f.__dict__: f may be a layer)
    def wrapped(*args, **kwargs):
        tape = _tape.current_tape()
        if tape is None or getattr(_STATE, "recomputing", 0):
            return f(*args, **kwargs)
        leaves = nest.flatten((args, kwargs))
        if any(isinstance(x, KerasTensor) for x in leaves):
            return f(*args, **kwargs)
        return _remat_call(tape, f, args, kwargs, leaves)

    wrapped._fk_remat = True
    return wrapped


def recomputing():
    """True while a rematerialized call recomputes in the backward pass."""
    return bool(getattr(_STATE, "recomputing", 0))


class _Collector(_tape.GradientTape):
    """A tape that records nothing: it notes the trainable variables read (through the tape's
    ordinary watching) and the buffers of enclosing tapes that ops read (captured tensors)."""

    def __init__(self, outer):
        super().__init__()
        self._outer = outer  # the enclosing tapes' tracked dicts
        self.captured = {}

    def record(self, op, dev, arrays, outputs, saved, attrs):
        for a in arrays:
            if a is None:
                continue
            key = id(a)
            for tracked in self._outer:
                if tracked.get(key) is a:
                    self.captured[key] = a
                    break

    _record = record


def _is_tensor(x):
    return type(x) is _tensor.Tensor or isinstance(x, (np.ndarray, Variable)) \
        or type(x) in _BUFFER_TYPES


def _buffer(x):
    value = getattr(x, "_value", None)
    return x if value is None else value


class _Saved:
    __slots__ = ("f", "args", "kwargs", "array_mode", "frame", "arrays", "n_out", "slots")


def _remat_call(tape, f, args, kwargs, leaves):
    # The op's inputs: each distinct tensor argument once, then what `f` read besides.
    arrays, seen = [], set()
    for x in leaves:
        if _is_tensor(x):
            if isinstance(x, Variable):
                tape.maybe_watch_variable(x)
            buf = _buffer(x)
            if id(buf) not in seen:
                seen.add(id(buf))
                arrays.append(buf)
    outer = []
    for t in getattr(_tape._state, "stack", None) or ():
        outer.append(t._tracked)
        outer.extend(getattr(t, "_outer", ()))  # a collector's: the tapes around it
    collector = _Collector(outer)
    with _tape.stop_recording(), _replay.Frame() as frame:
        with collector:
            out = f(*args, **kwargs)
    for buf in list(collector._tracked.values()) + list(collector.captured.values()):
        if id(buf) not in seen:
            seen.add(id(buf))
            arrays.append(buf)
            tape.watch_variable_buffer(buf)  # a variable read inside `f` is read by this call
    flat = nest.flatten(out)
    slots = [i for i, o in enumerate(flat) if _is_tensor(o) and _buffer(o).dtype.kind == "f"]
    if not slots:
        return out
    outs = []
    for i in slots:
        buf = _buffer(flat[i])
        new = _unaliased(buf, arrays) if not isinstance(flat[i], Variable) else _view(buf)
        if new is not buf:
            flat[i] = _rewrap(flat[i], new)
        outs.append(new)
    saved = _Saved()
    saved.f, saved.args, saved.kwargs = f, args, kwargs
    saved.array_mode, saved.frame, saved.arrays = _tensor._MODE.array, frame, arrays
    saved.n_out, saved.slots = len(flat), slots
    from fkeras.backend import devices

    tape.record(REGISTRY["remat"], devices.get_device(), arrays, tuple(outs), saved, {})
    return nest.pack_like(out, flat)


def _rewrap(original, buf):
    """`buf` (a view) in place of an output that was one of the inputs, mask carried over."""
    from fkeras.engine.masking import get_keras_mask, set_keras_mask

    new = buf if _tensor._MODE.array else _tensor.Tensor(buf)
    mask = get_keras_mask(original)
    if mask is not None:
        set_keras_mask(new, mask)
    return new


class Remat(Op):
    """The tape entry of a rematerialized call (see the module docstring); not an op users
    apply: `remat` records it directly."""

    name = "remat"

    def output_spec(self, *inputs, **attrs):
        raise TypeError("The `remat` entry is recorded by `fkeras.remat`; it is not applied.")

    def forward(self, dev, *inputs, **attrs):
        raise TypeError("The `remat` entry is recorded by `fkeras.remat`; it is not applied.")

    def backward(self, dev, saved, grads, needs):
        grads = grads if isinstance(grads, list) else [grads]
        sources = [a for a, need in zip(saved.arrays, needs) if need]
        inner = _tape.GradientTape(watch_accessed_variables=False)
        _STATE.recomputing = getattr(_STATE, "recomputing", 0) + 1
        try:
            with _tape.stop_recording(), _tensor._ModeScope(saved.array_mode), \
                    _replay.Frame(saved.frame.seeds), \
                    _replay.restore_assigned(saved.frame.assigned):
                with inner:
                    for s in sources:
                        inner.watch(s)
                    out = saved.f(*saved.args, **saved.kwargs)
        finally:
            _STATE.recomputing -= 1
        flat = nest.flatten(out)
        if len(flat) != saved.n_out:
            raise ValueError(f"`remat`: the recomputation of {_name(saved.f)} returned "
                             f"{len(flat)} values where the first run returned "
                             f"{saved.n_out}.")
        targets, cotangents = [], []
        for i, g in zip(saved.slots, grads):
            if g is not None:
                targets.append(_buffer(flat[i]))
                cotangents.append(g)
        if not targets:
            return (None,) * len(needs)
        with _tensor.array_mode():
            gs = iter(inner.gradient(targets, sources, output_gradients=cotangents))
        return tuple(next(gs) if need else None for need in needs)


def _name(f):
    return getattr(f, "__qualname__", None) or type(f).__name__


def rematerialized_call(layer, layer_call, args, kwargs):
    """`layer_call` as `layer`'s RematScope mode wants it (Keras 3's rules): "full" every call,
    "list_of_layers" when the layer's name is listed, "larger_than" when the call's output
    has more than the threshold's elements (the full shape, batch included), "activations"
    the layer's `activation` function alone (swapped in for the call)."""
    mode = layer._remat_mode
    kind = None if mode is None else mode.mode
    if kind == "full":
        return remat(layer_call)
    if kind == "list_of_layers":
        return remat(layer_call) if layer.name in mode.layer_names else layer_call
    if kind == "larger_than":
        size = _output_size(layer, layer_call, args, kwargs)
        return remat(layer_call) if size and size > mode.output_size_threshold else layer_call
    if kind == "activations" and getattr(layer, "activation", None) is not None:
        @functools.wraps(layer_call)
        def call_with_remat_activation(*a, **k):
            original = layer.activation
            layer.activation = remat(original)
            try:
                return layer_call(*a, **k)
            finally:
                layer.activation = original

        return call_with_remat_activation
    return layer_call


def _output_size(layer, layer_call, args, kwargs):
    """Elements in the output of `layer_call(*args, **kwargs)`, from a symbolic run on the
    arguments' shapes (cached per layer and input shapes)."""
    from fkeras.ops.registry import symbolic_call_scope

    leaves = nest.flatten((args, kwargs))
    key = tuple(tuple(np.shape(x)) if _is_tensor(x) else None for x in leaves)
    cache = layer.__dict__.setdefault("_fk_remat_sizes", {})
    size = cache.get(key)
    if size is None:
        from fkeras.layers.layer import Layer

        if type(layer).compute_output_shape is not Layer.compute_output_shape and \
                len(args) == 1 and _is_tensor(args[0]):
            # As Keras: a layer's own compute_output_shape answers without running `call`.
            shapes = _shape_list(layer.compute_output_shape(tuple(np.shape(args[0]))))
        else:
            specs = [KerasTensor(np.shape(x), str(_buffer(x).dtype)) if _is_tensor(x) else x
                     for x in leaves]
            a, k = nest.pack_like((args, kwargs), specs)
            with symbolic_call_scope(), _tensor.array_mode():
                out = layer_call(*a, **k)
            shapes = [o.shape for o in nest.flatten(out) if isinstance(o, KerasTensor)]
        size = sum(int(np.prod([d or 1 for d in s])) for s in shapes)
        cache[key] = size
    return size


def _shape_list(shape):
    """[shape, ...] from compute_output_shape's answer (one shape or a structure of them)."""
    if isinstance(shape, (tuple, list)) and all(d is None or isinstance(d, (int, np.integer))
                                               for d in shape):
        return [shape]
    items = shape.values() if isinstance(shape, dict) else shape
    return [s for item in items for s in _shape_list(item)]
