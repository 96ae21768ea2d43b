"""Nested structures: fkeras's one implementation of Keras 3's `keras.tree` semantics.

`fkeras.tree` is the public face of this module; fkeras's own code calls it as `nest`.

Nodes are the types Keras's default tree implementation (optree, used on the JAX, TensorFlow
and NumPy backends) treats as nodes, matched on the exact type:
- `list`, `tuple`, `collections.deque` (children in order, rebuilt with the same `maxlen`);
- namedtuples (a tuple subclass with `_fields`, `_make`, `_asdict`) and struct sequences
  (`time.struct_time`, `os.stat_result`, ...): children in order, rebuilt as the same type;
- `dict` and `collections.defaultdict`: children in sorted-key order, rebuilt with the
  original key order; `collections.OrderedDict`: children in insertion order. Keys that do not
  sort together are sorted by (type name, key), then left in insertion order.
Everything else is a leaf, `None` included (except in `map_structure(..., none_is_leaf=False)`,
where `None` is a node without children), and so are subclasses of list and dict.

Structure mismatches raise ValueError with Keras's texts (on its optree implementation).
"""

import collections

_LIST, _TUPLE, _DEQUE, _NAMEDTUPLE, _STRUCTSEQ, _DICT, _ODICT, _NONE = range(8)
_KINDS = {list: _LIST, tuple: _TUPLE, collections.deque: _DEQUE, dict: _DICT,
          collections.defaultdict: _DICT, collections.OrderedDict: _ODICT, type(None): None}


def _is_namedtuple_type(t):
    fields = getattr(t, "_fields", None)
    return (isinstance(fields, tuple) and all(type(f) is str for f in fields)
            and callable(getattr(t, "_make", None)) and callable(getattr(t, "_asdict", None)))


def _is_structseq_type(t):
    # CPython's struct sequences: direct tuple subclasses with the n_*fields counters that
    # cannot be subclassed further.
    return (t.__bases__ == (tuple,) and not t.__flags__ & (1 << 10)  # Py_TPFLAGS_BASETYPE
            and all(isinstance(getattr(t, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields")))


def _kind_of_type(t):
    kind = _KINDS.get(t, -1)
    if kind == -1:
        kind = None
        if issubclass(t, tuple):
            if _is_namedtuple_type(t):
                kind = _NAMEDTUPLE
            elif _is_structseq_type(t):
                kind = _STRUCTSEQ
        _KINDS[t] = kind
    return kind


def _kind(x, none_is_leaf=True):
    if x is None:
        return None if none_is_leaf else _NONE
    return _kind_of_type(type(x))


def _sorted_keys(d):
    keys = list(d)
    try:
        return sorted(keys)
    except TypeError:
        pass
    try:
        return sorted(keys, key=lambda k: (f"{type(k).__module__}.{type(k).__qualname__}", k))
    except TypeError:
        return keys


def _keys(x, kind):
    """The child keys of a node: indices for sequences, dict keys in flatten order."""
    if kind == _DICT:
        return _sorted_keys(x)
    if kind == _ODICT:
        return list(x)
    return range(0 if kind == _NONE else len(x))


def _children(x, kind):
    if kind == _DICT or kind == _ODICT:
        return [x[k] for k in _keys(x, kind)]
    return [] if kind == _NONE else list(x)


def _rebuild(x, kind, children, keys=None):
    """A node of `x`'s type, shape and key order holding `children` (in flatten order; `keys`:
    the dict's keys in that order, when the caller has them)."""
    if kind == _LIST:
        return children
    if kind == _TUPLE:
        return tuple(children)
    if kind == _DICT:
        by_key = dict(zip(_sorted_keys(x) if keys is None else keys, children))
        if type(x) is dict:
            return {k: by_key[k] for k in x}
        return collections.defaultdict(x.default_factory, ((k, by_key[k]) for k in x))
    if kind == _ODICT:
        return collections.OrderedDict(zip(x, children))
    if kind == _NAMEDTUPLE:
        return type(x)(*children)
    if kind == _STRUCTSEQ:
        return type(x)(children)
    if kind == _DEQUE:
        return collections.deque(children, maxlen=x.maxlen)
    return None  # _NONE


# ------------------------------------------------------------------------------ flattening
def is_nested(structure):
    """Whether `structure` is a node (list, tuple, dict, namedtuple, ...), not a leaf."""
    return _kind(structure) is not None


def flatten(structure):
    """The leaves of `structure` in order, dict values by sorted key (OrderedDict: in order)."""
    out = []
    stack = [structure]
    while stack:
        item = stack.pop()
        kind = _kind_of_type(type(item))
        if kind is None:
            out.append(item)
        elif kind == _DICT or kind == _ODICT:
            stack.extend(reversed(_children(item, kind)))
        else:
            stack.extend(reversed(item))
    return out


def flatten_with_path(structure):
    """`(path, leaf)` pairs in flatten order; a path is the tuple of indices and keys."""
    out = []
    stack = [((), structure)]
    while stack:
        path, item = stack.pop()
        kind = _kind(item)
        if kind is None:
            out.append((path, item))
        else:
            pairs = zip(_keys(item, kind), _children(item, kind))
            stack.extend(reversed([(path + (k,), child) for k, child in pairs]))
    return out


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence`'s items packed into the shape of `structure` (inverse of flatten)."""
    try:
        flat = list(flat_sequence)
    except TypeError:
        raise TypeError("`flat_sequence` must be an iterable (a list of leaves). Received: "
                        f"flat_sequence={flat_sequence!r} of type "
                        f"{type(flat_sequence).__name__}") from None
    it = iter(flat)
    try:
        packed = _build(structure, it)
    except StopIteration:
        raise ValueError(f"Too few leaves for PyTreeSpec; expected: {len(flatten(structure))}, "
                         f"got: {len(flat)}.") from None
    if next(it, it) is not it:
        raise ValueError(f"Too many leaves for PyTreeSpec; expected: {len(flatten(structure))}.")
    return packed


def pack_like(structure, flat):
    """fkeras's name for `pack_sequence_as`."""
    return pack_sequence_as(structure, flat)


def _build(item, it, is_leaf=None):
    # A module-level recursion, not a closure over itself: a self-referencing closure is a
    # reference cycle that would keep the leaves (activations) alive until the next gc.
    if is_leaf is not None and is_leaf(item):
        return next(it)
    kind = _kind_of_type(type(item))
    if kind is None:
        return next(it)
    if kind == _DICT or kind == _ODICT:
        keys = _keys(item, kind)
        return _rebuild(item, kind, [_build(item[k], it, is_leaf) for k in keys], keys)
    return _rebuild(item, kind, [_build(c, it, is_leaf) for c in item])


# ------------------------------------------------------------------------------- matching
_EXPECTED = {_LIST: "list", _TUPLE: "tuple", _DEQUE: "collections.deque",
             _NAMEDTUPLE: "collections.namedtuple", _STRUCTSEQ: "PyStructSequence type",
             _DICT: "dict, collections.OrderedDict, or collections.defaultdict"}
_EXPECTED[_ODICT] = _EXPECTED[_DICT]
_ARITY = {_LIST: "list", _TUPLE: "tuple", _DEQUE: "deque", _NAMEDTUPLE: "namedtuple",
          _STRUCTSEQ: "PyStructSequence"}


def _check_node(x, kind, y):
    """Raises Keras's ValueError when `y` is not a node matching `x` (of node kind `kind`)."""
    if kind == _NONE:
        if y is not None:
            raise ValueError(f"Expected None, got {y!r}.")
        return
    y_kind = _kind(y)
    if kind == _DICT or kind == _ODICT:
        if y_kind != _DICT and y_kind != _ODICT:
            raise ValueError(f"Expected an instance of {_EXPECTED[kind]}, got {y!r}.")
        if set(x) != set(y):
            _raise_key_mismatch(x, kind, y)
        return
    if y_kind != kind:
        raise ValueError(f"Expected an instance of {_EXPECTED[kind]}, got {y!r}.")
    if len(x) != len(y):
        label = "tuple" if kind in (_NAMEDTUPLE, _STRUCTSEQ) else _ARITY[kind]
        raise ValueError(f"{_ARITY[kind]} arity mismatch; expected: {len(x)}, got: {len(y)}; "
                         f"{label}: {y!r}.")
    if kind in (_NAMEDTUPLE, _STRUCTSEQ) and type(x) is not type(y):
        raise ValueError(f"{_ARITY[kind]} type mismatch; expected type: {type(x)!r}, got type: "
                         f"{type(y)!r}; tuple: {y!r}.")


def _raise_key_mismatch(x, kind, y):
    expected, got = _keys(x, kind), _sorted_keys(y)
    missing = [k for k in expected if k not in y]
    extra = [k for k in got if k not in x]
    text = f"dictionary key mismatch; expected key(s): {expected}, got key(s): {got}"
    if missing:
        text += f", missing key(s): {missing}"
    if extra:
        text += f", extra key(s): {extra}"
    label = "OrderedDict" if kind == _ODICT else "dict"
    raise ValueError(f"{text}; {label}: {y!r}.")


def _flatten_up_to(shallow, structure, none_is_leaf=True, out=None):
    """The subtrees of `structure` at the leaves of `shallow`, in flatten order; raises
    Keras's ValueError where `structure` does not have `shallow`'s nodes."""
    out = [] if out is None else out
    kind = _kind(shallow, none_is_leaf)
    if kind is None:
        out.append(structure)
        return out
    _check_node(shallow, kind, structure)
    if kind == _DICT or kind == _ODICT:
        others = [structure[k] for k in _keys(shallow, kind)]
    else:
        others = _children(structure, kind)
    for child, other in zip(_children(shallow, kind), others):
        _flatten_up_to(child, other, none_is_leaf, out)
    return out


_NESTED_MISMATCH = "Structures don't have the same nested structure."


def map_structure(func, *structures, none_is_leaf=True):
    """`func` applied to the leaves of `structures` (the same layout), in a new structure."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    first = structures[0]
    if none_is_leaf:
        leaves = [flatten(first)]
    else:
        leaves = [_flatten_up_to(first, first, none_is_leaf=False)]
    leaves += [_flatten_up_to(first, s, none_is_leaf) for s in structures[1:]]
    results = []
    for args in zip(*leaves):
        if len(structures) > 1 and any(_kind(a, none_is_leaf) is not None for a in args):
            raise ValueError(_NESTED_MISMATCH)
        results.append(func(*args))
    if none_is_leaf:
        return _build(first, iter(results))
    return _build_skipping_none(first, iter(results))


def _build_skipping_none(item, it):
    if item is None:
        return None
    kind = _kind(item)
    if kind is None:
        return next(it)
    return _rebuild(item, kind, [_build_skipping_none(c, it) for c in _children(item, kind)])


def map_structure_up_to(shallow_structure, func, *structures):
    """`func` applied to the subtrees of `structures` at the leaves of `shallow_structure`."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    parts = [_flatten_up_to(shallow_structure, s) for s in structures]
    return _build(shallow_structure, iter([func(*args) for args in zip(*parts)]))


def assert_same_structure(a, b):
    """Raises ValueError unless `a` and `b` have the same nodes (types, lengths, keys)."""
    for x, y in zip(flatten(a), _flatten_up_to(a, b)):
        if is_nested(x) or is_nested(y):
            raise ValueError(_NESTED_MISMATCH)


def traverse(func, structure, top_down=True):
    """Depth-first traversal applying `func` to every subtree (see `fkeras.tree.traverse`)."""
    if top_down:
        ret = func(structure)
        if ret is None:
            return _traverse_children(func, structure, top_down)
    else:
        structure = _traverse_children(func, structure, top_down)
        ret = func(structure)
        if ret is None:
            return structure
    # MAP_TO_NONE is recognised by name, so Keras's own marker works here too.
    if isinstance(ret, type) and ret.__name__ == "MAP_TO_NONE":
        return None
    return ret


def _traverse_children(func, structure, top_down):
    kind = _kind(structure)
    if kind is None:
        return structure
    children = [traverse(func, c, top_down) for c in _children(structure, kind)]
    return _rebuild(structure, kind, children)


def map_with_leaf_test(func, structure, is_leaf):
    """`func` applied to the leaves of `structure`, where `is_leaf(x)` also ends the descent."""
    leaves = []
    stack = [structure]
    while stack:
        item = stack.pop()
        kind = None if is_leaf(item) else _kind(item)
        if kind is None:
            leaves.append(item)
        else:
            stack.extend(reversed(_children(item, kind)))
    return _build(structure, iter([func(x) for x in leaves]), is_leaf)
