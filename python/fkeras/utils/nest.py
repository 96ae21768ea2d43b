"""Flattening and rebuilding nested structures of lists, tuples and dicts (Keras `tree`)."""


def flatten(structure):
    """Leaves of a nested list/tuple/dict structure, dicts in sorted-key order."""
    out = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(item[k] for k in reversed(sorted(item)))
        else:
            out.append(item)
    return out


def pack_like(structure, flat):
    """Rebuilds `structure`'s shape with the leaves of `flat` (inverse of flatten)."""
    return _build(structure, iter(flat))


def _build(item, it):
    # A module-level recursion, not a closure over itself: a self-referencing closure is a
    # reference cycle that would keep `flat`'s leaves (activations) alive until the next gc.
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        return type(item)(*[_build(x, it) for x in item])
    if isinstance(item, (list, tuple)):
        return type(item)(_build(x, it) for x in item)
    if isinstance(item, dict):
        values = {k: _build(item[k], it) for k in sorted(item)}  # flatten's order
        return {k: values[k] for k in item}
    return next(it)


def map_structure(fn, structure):
    return pack_like(structure, [fn(x) for x in flatten(structure)])


def is_nested(x):
    return isinstance(x, (list, tuple, dict))
