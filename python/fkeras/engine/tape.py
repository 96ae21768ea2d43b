"""GradientTape: records eager op calls and walks them back (iteratively) for gradients.

Arrays are identified by object identity: an op's outputs are new arrays (the registry
guarantees it), variables are updated in place, and the tape holds a reference to every array
it keys on, so no identity is reused while the tape lives. Only calls with at least one input
that needs a gradient are recorded, and `backward` receives a per-input needs mask, so nothing
that cannot reach a watched source is computed.
"""

import threading

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine import fast_path
from fkeras.engine import tensor as _tensor
from fkeras.engine.variable import Variable
from fkeras.utils import nest

_state = threading.local()


def current_tape():
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


class stop_recording:
    """Context manager: ops inside are not recorded by the active tape."""

    def __enter__(self):
        self._stack = getattr(_state, "stack", None)
        _state.stack = []
        fast_path.enter_slow()

    def __exit__(self, *exc):
        _state.stack = self._stack
        fast_path.exit_slow()


class GradientTape:
    """Records operations for automatic differentiation (tf.GradientTape's API).

    Example:
    ```python
    with fkeras.GradientTape() as tape:
        y = model(x)
        loss = fkeras.ops.mean(fkeras.ops.square(y - t))
    grads = tape.gradient(loss, model.trainable_weights)
    ```
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._entries = []
        self._tracked = {}  # id(array) -> array
        self._used = False
        # fkeras's DataParallel step: on_gradient_ready(i, grad) is called during `gradient`
        # as soon as source i's gradient is final (grad None: the source is unconnected).
        self.on_gradient_ready = None
        self._shared = False  # other tapes are active on this thread: every op goes to all
        # Results of an inner tape's `gradient` while this tape was active, and what was
        # computed from them: the backward that made them was not recorded (no second-order
        # gradients), so differentiating one of them here raises (ValueError: a feature
        # fkeras lacks) instead of returning a silently incomplete gradient.
        self._from_gradient = {}

    def __enter__(self):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self)
        fast_path.enter_slow()  # ops record: no C fast path on this thread
        if len(stack) > 1:
            for tape in stack:
                tape._shared = True
        return self

    def __exit__(self, *exc):
        stack = _state.stack
        stack.remove(self)
        fast_path.exit_slow()
        self._shared = False
        if len(stack) == 1:
            stack[0]._shared = False

    def watch(self, x):
        """Marks a Variable or tensor (or a nested structure of them) as a source."""
        for item in nest.flatten(x):
            arr = _buffer(item)
            if not hasattr(arr, "dtype") or arr.dtype.kind != "f":
                raise ValueError(
                    "`GradientTape.watch` takes floating-point tensors or Variables; received "
                    f"{type(item).__name__} of dtype {getattr(arr, 'dtype', None)}.")
            self._tracked[id(arr)] = arr

    def watch_variable_buffer(self, value):
        """A trainable float Variable's buffer was read by an op: every active tape that
        watches accessed variables watches it."""
        if not self._shared:
            if self.watch_accessed_variables:
                self._tracked[id(value)] = value
            return
        for tape in _state.stack:
            if tape.watch_accessed_variables:
                tape._tracked[id(value)] = value

    def maybe_watch_variable(self, var):
        """Called for the innermost active tape when an op reads `var`: every active tape
        that watches accessed variables watches it (trainable float variables only)."""
        if not var.trainable:
            return
        value = var._value
        if value.dtype.kind != "f":
            return
        if not self._shared:
            if self.watch_accessed_variables:
                self._tracked[id(value)] = value
            return
        for tape in _state.stack:
            if tape.watch_accessed_variables:
                tape._tracked[id(value)] = value

    def watched_variables(self):
        """The buffers this tape watches (sources and recorded results)."""
        return list(self._tracked.values())

    def stop_recording(self):
        """Context manager: ops inside are not recorded (tf.GradientTape.stop_recording)."""
        return stop_recording()

    def reset(self):
        """Forgets everything recorded so far (tf.GradientTape.reset)."""
        self._entries = []
        self._tracked = {}
        self._from_gradient = {}
        self.__dict__.pop("record", None)
        self._used = False

    def record(self, op, dev, arrays, outputs, saved, attrs):
        """Called for the innermost active tape: every active tape records the op call
        (nested and side-by-side tapes each see all the ops run inside them, as in TF)."""
        if self._shared:
            for tape in _state.stack:
                tape._record(op, dev, arrays, outputs, saved, attrs)
            return
        tracked = self._tracked  # one tape (the common case): _record inlined
        needs = tuple([a is not None and id(a) in tracked for a in arrays])
        if True not in needs:
            return
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        for o in outs:
            if o.dtype.kind == "f":
                tracked[id(o)] = o
        self._entries.append((op, dev, arrays, needs, outs, saved, attrs))

    def _record(self, op, dev, arrays, outputs, saved, attrs):
        if self._from_gradient:
            self._mark_from_gradient(op, arrays, outputs)
        tracked = self._tracked
        needs = tuple([a is not None and id(a) in tracked for a in arrays])
        if True not in needs:
            return
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        for o in outs:
            if o.dtype.kind == "f":  # integer and bool results carry no gradient
                tracked[id(o)] = o
        self._entries.append((op, dev, arrays, needs, outs, saved, attrs))

    def _record_after_gradient(self, op, dev, arrays, outputs, saved, attrs):
        """`record` once this tape holds an inner gradient's results (set per instance, so
        the common case pays nothing)."""
        self._mark_from_gradient(op, arrays, outputs)
        GradientTape.record(self, op, dev, arrays, outputs, saved, attrs)

    def _mark_from_gradient(self, op, arrays, outputs):
        if getattr(op, "name", None) == "stop_gradient":
            return
        marked = self._from_gradient
        for a in arrays:
            if a is not None and id(a) in marked:
                for o in (outputs if isinstance(outputs, tuple) else (outputs,)):
                    marked[id(o)] = o
                return

    def _note_inner_gradients(self, grads):
        """The outer tapes active around this `gradient` call keep its results (see
        `_from_gradient`)."""
        for tape in getattr(_state, "stack", ()):
            if tape is self:
                continue
            for g in grads:
                if g is not None:
                    tape._from_gradient[id(g)] = g
            tape.record = tape._record_after_gradient

    def _check_not_second_order(self, targets):
        marked = self._from_gradient
        if marked and any(id(t) in marked for t in targets):
            raise ValueError(
                "GradientTape.gradient: the target depends on the result of another "
                "GradientTape's `gradient` computed inside this tape (a gradient of a "
                "gradient: a Hessian, a gradient penalty, a meta-learning step). fkeras does "
                "not record backward passes, so second-order gradients are not supported; "
                "wrap the inner gradient in `fkeras.ops.stop_gradient` to treat it as a "
                "constant.")

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """Gradients of `target` with respect to `sources`.

        Args:
            target: a tensor, or a nested structure of tensors (their sum is differentiated).
            sources: a Variable or tensor, or a nested structure of them (lists, tuples,
                dicts); the result has the same structure.
            output_gradients: cotangents for the targets (same structure), default ones.
            unconnected_gradients: "none" (None for an unconnected source) or "zero".

        Returns:
            Gradients as Tensors (None where a source does not reach the target).
        """
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError("`unconnected_gradients` must be 'none' or 'zero'. Received: "
                             f"unconnected_gradients={unconnected_gradients!r}")
        if self._used and not self.persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)."
            )
        self._used = True
        targets = [target] if type(target) is np.ndarray else \
            [_buffer(t) for t in _flat(target)[0]]
        seeds = None if output_gradients is None else nest.flatten(output_gradients)
        if seeds is not None and len(seeds) != len(targets):
            raise ValueError(f"`output_gradients` has {len(seeds)} entries for "
                             f"{len(targets)} targets.")
        buffers = None
        if type(sources) is list:  # the built-in step's case: a flat list of Variables
            buffers = [s._value for s in sources if type(s) is Variable]
            if len(buffers) == len(sources):
                nested, keep = False, ()
            else:
                buffers = None
        if buffers is None:
            flat_sources, nested = _flat(sources)
            buffers = [getattr(s, "_value", s) for s in flat_sources]  # Variables', Tensors'
            # Sources may be intermediate results: their gradients stay in `grads` once
            # complete (a Variable's buffer is a leaf: nothing records it as an output).
            keep = {id(b) for s, b in zip(flat_sources, buffers)
                    if not isinstance(s, Variable)}
        grads = {}
        for i, t in enumerate(targets):
            if not hasattr(t, "shape"):
                raise ValueError(f"`GradientTape.gradient` target must be a tensor; received "
                                 f"{type(t).__name__}.")
            if seeds is None or seeds[i] is None:
                g = _ones_like(t)
            elif type(t) is np.ndarray:
                g = np.asarray(_devices.host_value(_buffer(seeds[i])), t.dtype)
            else:
                g = _devices.device_of(t).asarray(_buffer(seeds[i]))
            _accumulate(grads, t, g)
        self._check_not_second_order(targets)

        entries = self._entries
        ready = None if self.on_gradient_ready is None else \
            _ReadySchedule(self.on_gradient_ready, entries, sources)
        _backward(entries, grads, keep, ready)
        out = []
        for arr in buffers:
            g = grads.get(id(arr))
            if g is None and unconnected_gradients == "zero":
                g = _zeros_like(arr)
            out.append(g)
        if not self.persistent:
            self._entries = []
        stack = getattr(_state, "stack", None) or ()
        if len(stack) > 1 or stack and stack[0] is not self:
            self._note_inner_gradients(out)
        if not _tensor._MODE.array:
            out = [None if g is None else _tensor.Tensor(g) for g in out]
        if nested:
            return nest.pack_like(sources, out)
        return out if type(sources) is list else tuple(out) if type(sources) is tuple else out[0]

    def jacobian(self, target, sources, unconnected_gradients="none"):
        """d(target[i]) / d(source) for every element i of `target`, stacked in front of each
        source's shape (tf.GradientTape.jacobian; needs a persistent tape for several calls)."""
        t = _buffer(target)
        flat = nest.flatten(sources)
        rows = [[] for _ in flat]
        persistent, self.persistent = self.persistent, True
        try:
            for i in range(t.size):
                seed = np.zeros(t.shape, t.dtype)
                seed.reshape(-1)[i] = 1
                self._used = False
                gs = self.gradient(target, flat, output_gradients=[seed],
                                   unconnected_gradients=unconnected_gradients)
                for r, g in zip(rows, gs):
                    r.append(None if g is None else _devices.host_array(g))
        finally:
            self.persistent = persistent
        out = []
        for s, r in zip(flat, rows):
            if any(g is None for g in r):
                out.append(None)
                continue
            j = np.stack(r).reshape(t.shape + tuple(np.shape(_buffer(s))))
            out.append(j if _tensor.in_array_mode() else _tensor.Tensor(j))
        return nest.pack_like(sources, out)


def _flat(structure):
    """(leaves, nested): a flat list/tuple (the common case) is used as is, without nest."""
    if type(structure) in (list, tuple):
        for item in structure:
            if type(item) in (list, tuple, dict):
                return nest.flatten(structure), True
        return structure, False
    if type(structure) is dict:
        return nest.flatten(structure), True
    return (structure,), False


class _ReadySchedule:
    """When each source's gradient is final during the backward: after the entry that
    first read it in the forward (the last one the backward reaches) has been processed."""

    def __init__(self, callback, entries, sources):
        from fkeras.utils import nest

        first = {}
        for i, (_, _, arrays, needs, _, _, _) in enumerate(entries):
            for a, need in zip(arrays, needs):
                if need:
                    first.setdefault(id(a), i)
        self.callback, self.at, self.buffers = callback, {}, []
        for j, s in enumerate(nest.flatten(sources)):
            arr = _buffer(s)
            self.buffers.append(arr)
            self.at.setdefault(first.get(id(arr)), []).append(j)

    def fire(self, index, grads):
        for j in self.at.pop(index, ()):
            self.callback(j, grads.get(id(self.buffers[j])))


def _buffer(x):
    """The device buffer behind a Variable or Tensor (other values unchanged)."""
    value = getattr(x, "_value", None)
    return x if value is None else value


def _backward(entries, grads, keep=(), ready=None):
    """Walks the recorded entries back, accumulating input gradients into `grads`.

    keep: ids of sources that are intermediate results (their gradients stay in `grads`
    once complete; other gradients are dropped as soon as they are used). ready: a
    DataParallel schedule told when each source's gradient is final.
    """
    if keep:
        def take(key, default=None):
            return grads.get(key) if key in keep else grads.pop(key, default)
    else:
        take = grads.pop  # the built-in step: every source is a leaf
    n = len(entries)
    for j, (op, dev, arrays, needs, outs, saved, attrs) in enumerate(reversed(entries)):
        if ready is not None:
            ready.fire(n - j, grads)
        if len(outs) == 1:
            g = take(id(outs[0]), None)
            if g is None:
                continue
            gin = op.backward(dev, saved, g, needs, **attrs)
        else:
            gouts = [take(id(o), None) for o in outs]
            if all(g is None for g in gouts):
                continue
            if getattr(op, "takes_missing_cotangents", False):
                gin = op.backward(dev, saved, gouts, needs, **attrs)
            else:
                filled = _filled()
                gouts = [_zero_fill(o, filled) if g is None else g for o, g in zip(outs, gouts)]
                try:
                    gin = op.backward(dev, saved, gouts, needs, **attrs)
                finally:
                    filled.clear()
        if not isinstance(gin, (tuple, list)):
            gin = (gin,)
        for a, need, g in zip(arrays, needs, gin):
            if need and g is not None:
                _accumulate(grads, a, g)
    if ready is not None:
        ready.fire(0, grads)
        ready.fire(None, grads)


def _accumulate(grads, array, g):
    key = id(array)
    if type(array) is not np.ndarray:  # a buffer of a non-host device
        _accumulate_on_device(grads, key, array, g)
        return
    if getattr(g, "shape", None) != array.shape:
        g = np.asarray(g).reshape(array.shape)
    prev = grads.get(key)
    grads[key] = g if prev is None else prev + g


def _accumulate_on_device(grads, key, array, g):
    dev = _devices.device_of(array)
    g = dev.asarray(g)
    if g.shape != array.shape:
        g = g.reshape(array.shape)
    prev = grads.get(key)
    grads[key] = g if prev is None else dev.add(prev, g)


def _filled():
    filled = getattr(_state, "filled", None)
    if filled is None:
        filled = _state.filled = set()
    return filled


def _zero_fill(o, filled):
    z = _zeros_like(o)
    filled.add(id(z))
    return z


def zero_filled(g):
    """True for a cotangent the tape filled with zeros (an output of a multi-output op that
    received no gradient), during that op's backward: ops may skip its work without reading
    it (on a non-host device, reading would be a copy to the host)."""
    return g is None or id(g) in getattr(_state, "filled", ())


def _ones_like(t):
    return np.ones_like(t) if type(t) is np.ndarray else _devices.device_of(t).ones_like(t)


def _zeros_like(t):
    return np.zeros_like(t) if type(t) is np.ndarray else _devices.device_of(t).zeros_like(t)
