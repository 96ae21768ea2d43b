"""The fast path of an eager `model(x)` call: the trainer's forward plan, in array mode.

A direct call of a Functional or Sequential model normally runs every layer through
`Layer.__call__` in tensor mode: per layer it unwraps and re-wraps Tensors, flattens
structures, checks the input spec, looks for masks, casts integer inputs and clears losses.
On a batch-1 call of a small model this bookkeeping costs more than the kernels (tiny MLP:
70 us per call, of which the plan's layer calls take 13). When a call is *eligible*, the
model's cached `ForwardPlan` runs the same `layer.call`s on bare buffers and only the outputs
are wrapped as Tensors, so the values, output structure, dtypes and losses are the same.

A call is eligible when all of these hold; any other call takes the full path unchanged:
- the caller is in tensor mode (user code), no GradientTape is recording, and the call is
  `model(x)`, `model(x, training=False)` or `model(x, training=None)` (with `mask=None`);
- `x` is one NumPy array / fkeras Tensor, or a flat list/tuple of them, one per model input,
  none carrying a Keras mask;
- the model is a plain Functional graph (its class does not override `call`), every layer's
  call is fkeras's own code (no user layer, no `Lambda`), no mask travels in the graph, no
  layer has a half-precision dtype policy, no output is a model input, and nested models
  satisfy the same;
- the inputs' (shape, dtype) signature was seen before in a full-path call that succeeded
  (so that call built the layers and ran every input check: a bad input always gets the full
  path's error message). Signatures are cached per model (at most `_MAX_SIGNATURES`).

Where the model lowers to a compiled plan (models/compiled_plan.py) and the inputs are
C-contiguous float32 arrays, the forward is that plan's single call into C++ instead.

A layer with an `activity_regularizer` goes through its own `Layer.__call__` inside the plan,
which adds the same losses as the full path; as on the full path, a call from outside any
layer first clears the losses of the previous one.
"""

import numpy as np

from fkeras.engine import tape as _tape
from fkeras.engine.masking import _EAGER as _EAGER_MASKS
from fkeras.engine.tensor import _MODE, Tensor, wrap
from fkeras.models import compiled_plan as _compiled
from fkeras.utils import nest

_MAX_SIGNATURES = 32

# `__call__` overrides that only check or re-arrange arguments before `Layer.__call__`: the
# signature cache already covers what they check.
_PASS_THROUGH_CALLS = frozenset(("Merge.__call__", "MultiHeadAttention.__call__",
                                 "GroupedQueryAttention.__call__", "Sequential.__call__",
                                 "Functional.__call__"))


class _FastState:
    """Per-model cache: the plan, whether the graph qualifies, the signatures seen."""

    __slots__ = ("nodes_ref", "plan", "eligible", "signatures", "single", "n_inputs",
                 "int_inputs", "ranks", "taken", "compiled")

    def __init__(self, model):
        from fkeras.trainers.forward_plan import get_plan

        self.nodes_ref = model._nodes
        self.eligible = graph_eligible(model)
        self.plan = get_plan(model) if self.eligible else None
        self.signatures = set()
        self.n_inputs = len(model._flat_inputs)
        self.single = self.n_inputs == 1
        self.int_inputs = [_is_int_dtype(t.dtype) for t in model._flat_inputs]
        self.ranks = [len(t.shape) for t in model._flat_inputs]
        self.taken = 0  # fast calls made (tests check that the path is used)
        # Whether the model lowers to a compiled plan (which also needs float32 inputs).
        self.compiled = self.eligible and _compiled.state_of(model).ops is not None


def state_of(model):
    """The model's fast-path state (rebuilt when its graph changes)."""
    state = model.__dict__.get("_fk_fast_state")
    if state is None or state.nodes_ref is not model._nodes:
        state = _FastState(model)
        model.__dict__["_fk_fast_state"] = state
    return state


def prepare(model, args, kwargs):
    """(state, buffers, signature, training) for a call that may take the fast path, or None.

    `signature in state.signatures` tells whether it can be taken now; otherwise the caller
    runs the full path and then calls `remember`."""
    if _MODE.array or len(args) != 1 or _tape.current_tape() is not None or getattr(
            model, "_nodes", None) is None:
        return None
    training = None
    if kwargs:
        for key, value in kwargs.items():
            if key == "training" and (value is None or value is False):
                training = value
            elif not (key == "mask" and value is None):
                return None
    state = state_of(model)
    if not state.eligible:
        return None
    inputs = args[0]
    kind = type(inputs)
    if kind is np.ndarray or kind is Tensor:
        if not state.single:
            return None
        inputs = (inputs,)
    elif kind is not list and kind is not tuple or len(inputs) != state.n_inputs:
        return None
    buffers, signature = [], []
    for x in inputs:
        kind = type(x)
        if kind is Tensor:
            if getattr(x, "_keras_mask", None) is not None:
                return None
            x = x._value
            if type(x) is not np.ndarray:
                return None
        elif kind is not np.ndarray:
            return None
        if _EAGER_MASKS and id(x) in _EAGER_MASKS:
            return None
        buffers.append(x)
        signature.append((x.shape, x.dtype))
    return state, buffers, tuple(signature), training


def run(state, buffers, training):
    """The plan's outputs for `buffers`, wrapped as Tensors in the model's output structure
    (the compiled plan's where the model has one, models/compiled_plan.py)."""
    state.taken += 1
    plan = state.plan
    model = plan.model
    outs = _compiled.run(model, buffers) if state.compiled else None
    if outs is None:
        _MODE.array = True
        try:
            outs = plan.run(buffers, training=training)
        finally:
            _MODE.array = False
    if len(outs) == 1 and type(model._outputs_structure) is not list:
        structure = model._outputs_structure
        if not nest.is_nested(structure):
            return wrap(outs[0])
    wrapped, seen = [], {}
    for out in outs:
        t = seen.get(id(out))
        if t is None:
            t = seen[id(out)] = wrap(out)
        wrapped.append(t)
    return nest.pack_like(model._outputs_structure, wrapped)


def remember(state, signature):
    """Records a signature after a successful full-path call (if the input dtypes agree with
    the model's inputs: an integer array for a float input is cast by the first layer on the
    full path, which the plan would not do)."""
    for (shape, dtype), is_int, rank in zip(signature, state.int_inputs, state.ranks):
        if (dtype.kind in "iub") != is_int or dtype.kind not in "iubf":
            return
        if len(shape) != rank:
            return  # the full path fitted a trailing 1, which the plan would not do
    if len(state.signatures) >= _MAX_SIGNATURES:
        state.signatures.clear()
    state.signatures.add(signature)


def graph_eligible(model):
    """Whether every call in `model`'s graph runs the same way through the plan."""
    from fkeras.trainers.forward_plan import get_plan, supports_plan

    if not supports_plan(model):
        return False
    input_ids = {id(t) for t in model._flat_inputs}
    if any(id(t) in input_ids for t in model._flat_outputs):
        return False  # the full path returns such an input as given, not as a Tensor
    plan = get_plan(model)
    for step in plan.steps:
        layer = step.layer
        if not _layer_eligible(layer):
            return False
        nested = getattr(layer, "_nodes", None) is not None and hasattr(layer, "_flat_inputs")
        if nested:
            if not graph_eligible(layer):
                return False
        elif step.fn is layer and getattr(layer, "activity_regularizer", None) is None:
            return False  # the plan calls `__call__` for masks: not taken here
    return True


def _layer_eligible(layer):
    if type(layer).__name__ == "Lambda" or not layer._fk_builtin_call():
        return False
    if "16" in str(getattr(layer, "dtype", "float32")):
        return False  # half-precision policies may get their own call scope
    call = type(layer).__call__
    from fkeras.layers.layer import Layer

    if call is not Layer.__call__ and not (
            getattr(call, "__module__", "").startswith("fkeras.")
            and call.__qualname__ in _PASS_THROUGH_CALLS):
        return False
    return True


def _is_int_dtype(dtype):
    return str(dtype).startswith(("int", "uint", "bool"))
