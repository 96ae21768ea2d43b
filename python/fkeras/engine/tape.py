"""GradientTape: records eager op calls and walks them back (iteratively) for gradients.

Arrays are identified by object identity: an op's outputs are new arrays (the registry
guarantees it), variables are updated in place, and the tape holds a reference to every array
it keys on, so no identity is reused while the tape lives. Only calls with at least one input
that needs a gradient are recorded, and `backward` receives a per-input needs mask, so nothing
that cannot reach a watched source is computed.
"""

import threading

import numpy as np

_state = threading.local()


def current_tape():
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


class stop_recording:
    """Context manager: ops inside are not recorded by the active tape."""

    def __enter__(self):
        self._stack = getattr(_state, "stack", None)
        _state.stack = []

    def __exit__(self, *exc):
        _state.stack = self._stack


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

    def __enter__(self):
        stack = getattr(_state, "stack", None)
        if stack is None:
            stack = _state.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.remove(self)

    def watch(self, x):
        """Marks a Variable or array (or a list of them) as a source."""
        from fkeras.engine.variable import Variable

        for item in x if isinstance(x, (list, tuple)) else [x]:
            arr = item.value if isinstance(item, Variable) else item
            self._tracked[id(arr)] = arr

    def maybe_watch_variable(self, var):
        if self.watch_accessed_variables and var.trainable:
            self._tracked[id(var.value)] = var.value

    def record(self, op, dev, arrays, outputs, saved, attrs):
        tracked = self._tracked
        needs = tuple([a is not None and id(a) in tracked for a in arrays])
        if True not in needs:
            return
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        for o in outs:
            tracked[id(o)] = o
        self._entries.append((op, dev, arrays, needs, outs, saved, attrs))

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """d(target)/d(sources); `target` may be a list (their sum is differentiated)."""
        from fkeras.engine.variable import Variable

        if self._used and not self.persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)."
            )
        self._used = True
        targets = target if isinstance(target, (list, tuple)) else [target]
        seeds = output_gradients
        if seeds is not None and not isinstance(seeds, (list, tuple)):
            seeds = [seeds]
        grads = {}
        for i, t in enumerate(targets):
            g = np.ones_like(t) if seeds is None or seeds[i] is None else np.asarray(seeds[i], t.dtype)
            _accumulate(grads, t, g)

        for op, dev, arrays, needs, outs, saved, attrs in reversed(self._entries):
            if len(outs) == 1:
                g = grads.pop(id(outs[0]), None)
                if g is None:
                    continue
                gin = op.backward(dev, saved, g, needs, **attrs)
            else:
                gouts = [grads.pop(id(o), None) for o in outs]
                if all(g is None for g in gouts):
                    continue
                gouts = [np.zeros_like(o) if g is None else g for o, g in zip(outs, gouts)]
                gin = op.backward(dev, saved, gouts, needs, **attrs)
            if not isinstance(gin, (tuple, list)):
                gin = (gin,)
            for a, need, g in zip(arrays, needs, gin):
                if need and g is not None:
                    _accumulate(grads, a, g)

        single = not isinstance(sources, (list, tuple))
        out = []
        for s in [sources] if single else sources:
            arr = s.value if isinstance(s, Variable) else s
            g = grads.get(id(arr))
            if g is None and unconnected_gradients == "zero":
                g = np.zeros_like(arr)
            out.append(g)
        if not self.persistent:
            self._entries = []
        return out[0] if single else out


def _accumulate(grads, array, g):
    key = id(array)
    if getattr(g, "shape", None) != array.shape:
        g = np.asarray(g).reshape(array.shape)
    prev = grads.get(key)
    grads[key] = g if prev is None else prev + g
