"""Calling any RNN cell for one step: a built-in cell runs in array mode, a user-written cell
(a Layer subclass or any object with `call` and `state_size`) in tensor mode, so its Python
operators reach the tape."""

import inspect

import numpy as np

from fkeras.engine.tensor import is_builtin_method, run_user
from fkeras.layers.layer import Layer
from fkeras.utils import nest


def step(cell, inputs, states, training):
    """(output, new states as a list) of one step of `cell`."""
    kwargs = {"training": training} if _takes_training(cell) else {}
    if isinstance(cell, Layer):
        out, new_states = cell._fk_call_direct(inputs, states, **kwargs)
    elif is_builtin_method(type(cell), "call"):
        out, new_states = cell.call(inputs, states, **kwargs)
    else:
        out, new_states = run_user(cell.call, inputs, states, **kwargs)
    if not nest.is_nested(new_states):
        new_states = [new_states]
    return out, list(new_states)


def _takes_training(cell):
    if isinstance(cell, Layer):
        return cell._call_accepts("training")
    try:
        params = inspect.signature(cell.call).parameters
    except (TypeError, ValueError):
        return False
    return "training" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def output_size(cell):
    """The cell's output size: `output_size`, else the first state size."""
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    state = cell.state_size
    return state[0] if isinstance(state, (list, tuple)) else state


def initial_state(cell, batch_size):
    """The cell's zero states (its own `get_initial_state` when it has one; a user-written
    one runs in tensor mode)."""
    fn = getattr(cell, "get_initial_state", None)
    if fn is not None:
        if is_builtin_method(type(cell), "get_initial_state"):
            return fn(batch_size=batch_size)
        return run_user(fn, batch_size=batch_size)
    sizes = cell.state_size
    if isinstance(sizes, int):
        return np.zeros((batch_size, sizes), np.float32)
    return [np.zeros((batch_size, d), np.float32) for d in sizes]


def serialize_cell(cell):
    """A cell's config entry as Keras 3 writes it (module "keras.layers" for built-ins, the
    registered name for registered custom cells), so either library reads it."""
    from fkeras.layers import LAYER_CLASSES, serialize_layer
    from fkeras.saving.object_registration import get_registered_name

    entry = serialize_layer(cell)
    if LAYER_CLASSES.get(entry["class_name"]) is type(cell):
        entry["module"] = "keras.layers"
    else:
        registered = get_registered_name(type(cell))
        entry["module"] = type(cell).__module__
        entry["registered_name"] = registered if ">" in registered else None
    return entry


def deserialize_cell(entry, custom_objects=None):
    """A cell from its entry (written by fkeras or by Keras 3)."""
    from fkeras.layers import deserialize_layer
    from fkeras.saving.config_convert import normalize_layer_entry

    return deserialize_layer(normalize_layer_entry(entry), custom_objects)
