"""Nested-structure utilities (`keras.tree`): flatten, map and rebuild lists, tuples, dicts,
namedtuples and their nestings.

The semantics are Keras 3.15's on its default (optree) implementation; the structural work is
`fkeras.utils.nest`'s, the one implementation fkeras uses internally too. Dict values come in
sorted-key order (an `OrderedDict`'s in its own order) and rebuilt dicts keep the original key
order; `None` is a leaf. Two choices differ from Keras 3.15 on purpose, see docs/utils.md:
`map_structure_up_to` treats `None` in `shallow_structure` as a leaf (as its documentation
says; Keras 3.15 raises there), and the torch backend's quirks (rebuilt dicts in sorted-key
order, namedtuple paths by sorted field name) are not reproduced.
"""

import warnings

from fkeras.utils import nest


class MAP_TO_NONE:  # noqa: N801  (Keras's name)
    """Marker for `traverse()`: a `func` returning `MAP_TO_NONE` replaces the subtree by None."""


def is_nested(structure):
    """Whether `structure` is nested: a list, tuple, dict, namedtuple, deque, ...

    Example:
    >>> fkeras.tree.is_nested({"foo": 42})
    True
    >>> fkeras.tree.is_nested(None)
    False

    Args:
        structure: the value to check.

    Returns:
        True for a node (sequence, mapping or namedtuple), False for a leaf.
    """
    return nest.is_nested(structure)


def traverse(func, structure, top_down=True):
    """Calls `func` on every subtree of `structure`, depth-first, and rebuilds it.

    Top-down (the default), a parent is visited before its children: `func(subtree)` returning
    None continues into the subtree, anything else replaces it (and stops the descent).
    Bottom-up, children come first: None keeps the traversed subtree, anything else replaces
    it. Return `MAP_TO_NONE` to replace a subtree by None.

    Example:
    >>> seen = []
    >>> fkeras.tree.traverse(seen.append, [(1, 2), {"a": 3}])
    [(1, 2), {'a': 3}]
    >>> seen
    [[(1, 2), {'a': 3}], (1, 2), 1, 2, {'a': 3}, 3]

    Args:
        func: a callable taking one subtree.
        structure: the structure to traverse.
        top_down: visit parents before their children (True) or after (False).

    Returns:
        The rebuilt structure.
    """
    return nest.traverse(func, structure, top_down=top_down)


def flatten(structure):
    """The leaves of a nested structure, as a list.

    Dict values come in sorted-key order, an `OrderedDict`'s in insertion order; keys that do
    not sort together are ordered by type name first.

    Example:
    >>> fkeras.tree.flatten([[1, 2], {"b": 4, "a": 3}, None])
    [1, 2, 3, 4, None]

    Args:
        structure: an arbitrarily nested structure (a leaf gives a one-item list).

    Returns:
        A list of the leaves.
    """
    return nest.flatten(structure)


def flatten_with_path(structure):
    """The leaves with their paths: `(path, leaf)` pairs in `flatten`'s order.

    A path is the tuple of list/tuple indices and dict keys leading to the leaf.

    Example:
    >>> fkeras.tree.flatten_with_path([{"foo": 42}])
    [((0, 'foo'), 42)]

    Args:
        structure: an arbitrarily nested structure.

    Returns:
        A list of `(path, leaf)` pairs.
    """
    return nest.flatten_with_path(structure)


def map_structure(func, *structures, none_is_leaf=True):
    """Applies `func` to the leaves of one or more structures of the same layout.

    Example:
    >>> fkeras.tree.map_structure(lambda x, y: x * y, [[1], (2, 3)], [[4], (5, 6)])
    [[4], (10, 18)]

    Args:
        func: a callable taking as many arguments as there are structures.
        *structures: the structures, all with the first one's layout.
        none_is_leaf: False: None values are not passed to `func` and stay None (the other
            structures must hold None there too).

    Returns:
        A structure of the first one's layout holding `func`'s results.

    Raises:
        ValueError: no structure is given, or the structures' layouts differ.
    """
    return nest.map_structure(func, *structures, none_is_leaf=none_is_leaf)


def map_structure_up_to(shallow_structure, func, *structures):
    """Applies `func` to the subtrees of `structures` at the leaves of `shallow_structure`.

    Deeper parts of `structures` are passed to `func` whole.

    Example:
    >>> fkeras.tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2, 2]])
    [2, 3]

    Args:
        shallow_structure: a structure that is a prefix of every one of `structures`.
        func: a callable taking as many arguments as there are structures.
        *structures: the structures to map.

    Returns:
        A structure of `shallow_structure`'s layout holding `func`'s results.

    Raises:
        ValueError: no structure is given, or one is shallower than `shallow_structure`.
    """
    return nest.map_structure_up_to(shallow_structure, func, *structures)


def assert_same_structure(a, b, check_types=None):
    """Raises ValueError unless `a` and `b` are nested the same way.

    Node types must match (list, tuple, deque and each namedtuple type are all different;
    dict, OrderedDict and defaultdict match when their keys do), and so must lengths and keys.

    Args:
        a: a nested structure.
        b: a nested structure.
        check_types: deprecated and ignored (a DeprecationWarning says so). For a check that
            ignores sequence types, use `assert_same_paths`.

    Raises:
        ValueError: the structures differ.
    """
    if check_types is not None:
        text = "The `check_types` argument is deprecated and no longer has any effect"
        text += (", please remove." if check_types else
                 ". For a looser check, use `fkeras.tree.assert_same_paths()`, which considers "
                 "`list`, `tuple`, `namedtuple` and `deque` as matching")
        warnings.warn(text, DeprecationWarning, stacklevel=2)
    nest.assert_same_structure(a, b)


def assert_same_paths(a, b):
    """Raises ValueError unless `a` and `b` have the same leaf paths (sequence types ignored).

    Example:
    >>> fkeras.tree.assert_same_paths([0, 1], (2, 3))

    Args:
        a: a nested structure.
        b: a nested structure.

    Raises:
        ValueError: the paths differ; the message lists the paths of each side missing in the
            other.
    """
    a_paths = {path for path, _ in nest.flatten_with_path(a)}
    b_paths = {path for path, _ in nest.flatten_with_path(b)}
    if a_paths != b_paths:
        message = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            message += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            message += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(message)


def pack_sequence_as(structure, flat_sequence):
    """Packs a flat sequence into the layout of `structure` (the inverse of `flatten`).

    Example:
    >>> fkeras.tree.pack_sequence_as({"b": None, "a": None}, [1, 2])
    {'b': 2, 'a': 1}

    Args:
        structure: the layout (its leaves are ignored).
        flat_sequence: an iterable of exactly as many items as `structure` has leaves.

    Returns:
        The packed structure.

    Raises:
        TypeError: `flat_sequence` is not iterable.
        ValueError: it has too few or too many items.
    """
    return nest.pack_sequence_as(structure, flat_sequence)


def lists_to_tuples(structure):
    """`structure` with every list replaced by a tuple.

    Args:
        structure: a nested structure.

    Returns:
        The same structure with tuples in place of lists.
    """
    return nest.traverse(_list_to_tuple, structure, top_down=False)


def _list_to_tuple(x):
    return tuple(x) if isinstance(x, list) else None


def map_shape_structure(func, structure):
    """`map_structure` for shapes: a list or tuple of ints and Nones is one leaf.

    Example:
    >>> fkeras.tree.map_shape_structure(lambda s: s[-1], {"x": (None, 3), "y": [(2, 5)]})
    {'x': 3, 'y': [5]}

    Args:
        func: a callable taking one shape (or other leaf).
        structure: a nested structure of shapes.

    Returns:
        The structure with `func` applied to each shape and leaf.
    """
    return nest.map_with_leaf_test(func, structure, _is_shape)


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x)


__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten",
           "flatten_with_path", "is_nested", "lists_to_tuples", "map_shape_structure",
           "map_structure", "map_structure_up_to", "pack_sequence_as", "traverse"]
