"""Control flow (keras.ops names and signatures): cond, switch, while_loop, fori_loop, scan,
associative_scan, map, vectorized_map, and custom_gradient.

fkeras executes eagerly, so control flow is Python control flow over ops: every op a branch or
a loop body runs is recorded on the active tape, and gradients flow through whichever path ran.
On KerasTensors the branches and bodies run symbolically once (shape inference), as in Keras:
`cond` and `switch` check that every branch gives the same output shapes.
"""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops.registry import Op, apply
from fkeras.utils import nest


def _is_symbolic(*values):
    return any(isinstance(v, KerasTensor) for v in nest.flatten(list(values)))


def _specs(structure):
    return nest.map_structure(
        lambda t: (tuple(t.shape), str(t.dtype)) if hasattr(t, "shape") else t, structure)


def cond(pred, true_fn, false_fn):
    """`true_fn()` if `pred` else `false_fn()` (keras.ops.cond).

    On a symbolic `pred` both branches are traced and must give the same shapes and dtypes.
    """
    if isinstance(pred, KerasTensor):
        t, f = true_fn(), false_fn()
        if _specs(t) != _specs(f):
            raise ValueError("`true_fn` and `false_fn` should return outputs of the same kind "
                             f"of structure. Received:\ntrue_fn: {_specs(t)}\n"
                             f"false_fn: {_specs(f)}")
        return t
    return true_fn() if bool(_devices.host_array(pred)) else false_fn()


def switch(index, branches, *operands):
    """`branches[index](*operands)`, the index clamped to the valid range (keras.ops.switch)."""
    if not branches:
        raise ValueError("`switch` needs at least one branch.")
    if isinstance(index, KerasTensor):
        outs = [b(*operands) for b in branches]
        for o in outs[1:]:
            if _specs(o) != _specs(outs[0]):
                raise ValueError("All branches of `switch` must return outputs of the same "
                                 f"shapes and dtypes; received {[_specs(o) for o in outs]}.")
        return outs[0]
    i = int(np.clip(int(np.asarray(getattr(index, "_value", index))), 0, len(branches) - 1))
    return branches[i](*operands)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Runs `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (keras.ops.while_loop).

    `loop_vars` is a tuple/list (or a single value); the result has the same structure.
    """
    is_seq = isinstance(loop_vars, (list, tuple))
    state = tuple(loop_vars) if is_seq else (loop_vars,)
    if _is_symbolic(state):
        return loop_vars  # shapes are loop invariants
    i = 0
    while (maximum_iterations is None or i < maximum_iterations) and \
            bool(np.asarray(cond(*state))):
        out = body(*state)
        state = tuple(out) if isinstance(out, (list, tuple)) else (out,)
        i += 1
    if not is_seq:
        return state[0]
    return type(loop_vars)(state) if isinstance(loop_vars, tuple) else list(state)


def fori_loop(lower, upper, body_fun, init_val):
    """`val = body_fun(i, val)` for i in [lower, upper) (keras.ops.fori_loop)."""
    val = init_val
    if _is_symbolic(init_val):
        return body_fun(lower, init_val)
    for i in range(int(np.asarray(lower)), int(np.asarray(upper))):
        val = body_fun(i, val)
    return val


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """`carry, y = f(carry, x)` over the leading axis of `xs` (keras.ops.scan).

    Returns the final carry and the `y`s stacked along a new leading axis.
    """
    from fkeras.ops.arrangement import stack
    from fkeras.ops.reshape_ops import getitem

    if xs is None:
        if length is None:
            raise ValueError("`scan` needs `xs` or `length`.")
        n = int(length)
        items = [None] * n
    else:
        flat = nest.flatten(xs)
        n = int(flat[0].shape[0]) if length is None else int(length)
        items = [nest.pack_like(xs, [getitem(a, i) for a in flat]) for i in range(n)]
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, [None] * n
    for i in order:
        carry, ys[i] = f(carry, items[i])
    if n == 0 or ys[0] is None:
        return carry, None
    flat_ys = [nest.flatten(y) for y in ys]
    stacked = [stack([fy[j] for fy in flat_ys]) for j in range(len(flat_ys[0]))]
    return carry, nest.pack_like(ys[0], stacked)


def associative_scan(f, elems, reverse=False, axis=0):
    """Inclusive scan of `elems` along `axis` with the associative `f` (sequential in fkeras)."""
    from fkeras.ops.arrangement import stack
    from fkeras.ops.reshape_ops import getitem

    flat = nest.flatten(elems)
    n = int(flat[0].shape[axis])
    lead = (slice(None),) * (axis % len(flat[0].shape))
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    acc, outs = None, [None] * n
    for i in order:
        item = nest.pack_like(elems, [getitem(a, lead + (i,)) for a in flat])
        acc = item if acc is None else f(acc, item)
        outs[i] = acc
    flat_outs = [nest.flatten(o) for o in outs]
    stacked = [stack([fo[j] for fo in flat_outs], axis=axis) for j in range(len(flat))]
    return nest.pack_like(elems, stacked)


def map(f, xs):  # noqa: A001
    """`f` applied to each slice of `xs` along its leading axis, results stacked
    (keras.ops.map)."""
    from fkeras.ops.arrangement import stack
    from fkeras.ops.reshape_ops import getitem

    flat = nest.flatten(xs)
    n = int(flat[0].shape[0])
    ys = [f(nest.pack_like(xs, [getitem(a, i) for a in flat])) for i in range(n)]
    flat_ys = [nest.flatten(y) for y in ys]
    if not ys:
        raise ValueError("`map` needs a non-empty leading axis.")
    return nest.pack_like(ys[0], [stack([fy[j] for fy in flat_ys])
                                         for j in range(len(flat_ys[0]))])


def vectorized_map(function, elements):
    """`function` applied to each slice of `elements` along axis 0 (keras.ops.vectorized_map);
    fkeras runs it slice by slice, like `map`."""
    return map(function, elements)


# ---- custom_gradient ----

class CustomGradient(Op):
    """Runs a user function without recording its inner ops; the backward calls the gradient
    function the user returned (Keras 3's `custom_gradient` contract)."""

    name = "custom_gradient"

    def output_spec(self, *inputs, fn=None):
        out, _ = fn(*inputs)
        return [KerasTensor(o.shape, o.dtype) for o in nest.flatten(out)]

    def forward(self, dev, *inputs, fn=None):
        from fkeras.engine.tape import stop_recording
        from fkeras.engine.tensor import tensor_mode, unwrap_structure, wrap_structure

        with stop_recording(), tensor_mode():
            out, grad_fn = fn(*wrap_structure(inputs))
        flat = tuple(np.asarray(unwrap_structure(o)) for o in nest.flatten(out))
        return flat, (grad_fn, len(inputs))

    def backward(self, dev, saved, grads, needs, fn=None):
        from fkeras.engine.tape import stop_recording
        from fkeras.engine.tensor import tensor_mode, unwrap_structure, wrap_structure

        grad_fn, n = saved
        with stop_recording(), tensor_mode():
            upstream = wrap_structure(list(grads) if isinstance(grads, list) else [grads])
            g = grad_fn(*upstream)
        g = list(g) if isinstance(g, (list, tuple)) else [g]
        if len(g) != n:
            raise ValueError(f"`custom_gradient`: the gradient function returned {len(g)} "
                             f"gradients for {n} inputs.")
        return tuple(None if v is None else np.asarray(unwrap_structure(v)) for v in g)


def custom_gradient(f):
    """Decorator: `f(*args)` returns `(outputs, grad_fn)`; `grad_fn(*upstream)` gives one
    gradient per positional argument (keras.ops.custom_gradient).

    Example:
    ```python
    @fkeras.ops.custom_gradient
    def clip_gradient(x):
        def grad(upstream):
            return fkeras.ops.clip(upstream, -1.0, 1.0)
        return x * 1.0, grad
    ```
    """
    import functools

    from fkeras.ops.registry import REGISTRY

    @functools.wraps(f)
    def wrapped(*args):
        out = apply(REGISTRY["custom_gradient"], *args, fn=f)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        return out[0] if len(out) == 1 else tuple(out)

    return wrapped


def vectorize(pyfunc, *, excluded=None, signature=None):
    """`pyfunc` applied elementwise over broadcast tensor arguments (keras.ops.vectorize);
    fkeras runs it element by element through ops, so it stays differentiable."""
    import functools

    if signature is not None:
        raise ValueError("fkeras's `vectorize` supports elementwise functions only "
                         "(signature=None).")
    excluded = set(excluded or ())

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        from fkeras.ops.arrangement import broadcast_to, ravel, stack
        from fkeras.ops.reshape_ops import getitem, reshape

        slots = [i for i in range(len(args)) if i not in excluded]
        shape = np.broadcast_shapes(*[np.shape(getattr(args[i], "_value", args[i]))
                                      for i in slots])
        flat = {i: ravel(broadcast_to(args[i], shape)) for i in slots}
        size = int(np.prod(shape))
        outs = []
        for k in range(size):
            call = [getitem(flat[i], k) if i in flat else a for i, a in enumerate(args)]
            outs.append(pyfunc(*call, **kwargs))
        return reshape(stack(outs), shape)

    return wrapped
