"""fkeras.tree: fixed expectations (no Keras needed), then the same functions against Keras
3.15's keras.tree on many structures.

The parity reference is Keras's default tree implementation (optree, the one Keras uses on
JAX/TensorFlow/NumPy), swapped into `keras.src.tree.tree_api`: with the torch backend the
public `keras.tree` runs torch's pytree, whose rebuilt dicts come in sorted-key order and
whose namedtuple paths follow sorted field names; fkeras does not follow those quirks.
"""

import collections
import os
import re
import time
import warnings

import numpy as np
import pytest

from fkeras import tree

Point = collections.namedtuple("Point", ["y", "x"])
OtherPoint = collections.namedtuple("Point", ["y", "x"])  # same name, another type
Triple = collections.namedtuple("Triple", ["a", "b", "c"])
OD, DD, DQ = collections.OrderedDict, collections.defaultdict, collections.deque


class ListSub(list):
    pass


class DictSub(dict):
    pass


def _dd(*pairs):
    return DD(int, pairs)


STRUCTURES = {
    "leaf": 1, "none": None, "str": "abc", "array": np.arange(3.0), "set": {1, 2},
    "empty_list": [], "empty_tuple": (), "empty_dict": {}, "list_of_none": [None],
    "nested": [1, [2, (3,)], (4, [5, 6])],
    "dict_unsorted": {"b": None, "a": (1, 2), "c": [3]},
    "dict_int_keys": {10: "x", 2: "y", 7: "z"},
    "dict_mixed_keys": {1: "a", "b": 2, 0: "c", 1.5: "d"},
    "dict_object_keys": {"k": {}},  # filled below: keys that cannot be sorted
    "ordered_dict": OD([("b", 1), ("a", [2, 3])]),
    "defaultdict": _dd(("b", 1), ("a", 2)),
    "deque": DQ([1, [2, 3]], maxlen=4),
    "namedtuple": Point(y=[1, 2], x={"c": 3, "a": 4}),
    "empty_namedtuple": collections.namedtuple("Empty", [])(),
    "struct_seq": time.gmtime(0),
    "subclasses_are_leaves": [ListSub([1, 2]), DictSub(a=1)],
    "deep": {"z": [{"y": (None, Point(1, (2, [3])))}], "a": OD([("q", DQ([4]))])},
    "shapes": [(None, 3), {"a": (2,), "b": [4, [5]]}, (), None, 5, (1.0,), (True, 2)],
}
_o1, _o2 = object(), object()
STRUCTURES["dict_object_keys"] = {_o1: 1, _o2: [2]}


def _signature(value):
    """Types and values of a structure, exactly (repr alone hides list vs ListSub...)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.tolist())
    if isinstance(value, dict):
        return (type(value), [(k, _signature(v)) for k, v in value.items()],
                getattr(value, "default_factory", None))
    if isinstance(value, (list, tuple, DQ)):
        return (type(value), [_signature(v) for v in value], getattr(value, "maxlen", None))
    return (type(value), value) if not callable(value) else (type(value),)


def _outcome(fn, *args, **kwargs):
    try:
        return "ok", _signature(fn(*args, **kwargs))
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


# ---------------------------------------------------------------- fixed expectations
def test_flatten_orders_dicts_by_sorted_key_ordered_dicts_by_insertion():
    assert tree.flatten(STRUCTURES["dict_unsorted"]) == [1, 2, None, 3]
    assert tree.flatten(STRUCTURES["ordered_dict"]) == [1, 2, 3]
    assert tree.flatten(STRUCTURES["defaultdict"]) == [2, 1]
    assert tree.flatten(STRUCTURES["dict_mixed_keys"]) == ["d", "c", "a", 2]  # float, int, str
    assert tree.flatten(STRUCTURES["dict_object_keys"]) == [1, 2]  # insertion order
    assert tree.flatten(None) == [None] and tree.flatten([None, [None]]) == [None, None]
    assert tree.flatten(STRUCTURES["subclasses_are_leaves"]) == [[1, 2], {"a": 1}]
    assert tree.flatten(time.gmtime(0))[:3] == [1970, 1, 1]


def test_flatten_with_path():
    assert tree.flatten_with_path(STRUCTURES["namedtuple"]) == [
        ((0, 0), 1), ((0, 1), 2), ((1, "a"), 4), ((1, "c"), 3)]
    assert tree.flatten_with_path(5) == [((), 5)]
    assert tree.flatten_with_path(DQ([1, [2]])) == [((0,), 1), ((1, 0), 2)]


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_pack_sequence_as_inverts_flatten(name):
    s = STRUCTURES[name]
    flat = tree.flatten(s)
    assert _signature(tree.pack_sequence_as(s, flat)) == _signature(s)


def test_pack_sequence_as_keeps_key_order_and_types():
    assert list(tree.pack_sequence_as({"b": 0, "a": 0}, [1, 2]).items()) == [("b", 2), ("a", 1)]
    packed = tree.pack_sequence_as(_dd(("b", 0), ("a", 0)), [1, 2])
    assert type(packed) is DD and packed.default_factory is int and list(packed) == ["b", "a"]
    assert tree.pack_sequence_as(DQ([0, 0], maxlen=3), [1, 2]).maxlen == 3
    assert tree.pack_sequence_as(Point(0, [0]), [1, 2]) == Point(1, [2])


@pytest.mark.parametrize("structure,flat,error,text", [
    ([1, [2, 3]], [1, 2], ValueError, "Too few leaves for PyTreeSpec; expected: 3, got: 2."),
    ([1, [2, 3]], [1, 2, 3, 4], ValueError, "Too many leaves for PyTreeSpec; expected: 3."),
    (None, [], ValueError, "Too few leaves for PyTreeSpec; expected: 1, got: 0."),
    ([1], 5, TypeError, "`flat_sequence` must be an iterable"),
])
def test_pack_sequence_as_errors(structure, flat, error, text):
    with pytest.raises(error, match=re.escape(text)):
        tree.pack_sequence_as(structure, flat)


def test_map_structure():
    assert tree.map_structure(lambda v: v * 2, Point(1, 2)) == Point(2, 4)
    out = tree.map_structure(lambda a, b: (a, b), {"a": 1, "b": 2}, OD([("b", 3), ("a", 4)]))
    assert out == {"a": (1, 4), "b": (2, 3)} and type(out) is dict
    assert tree.map_structure(lambda v: 5, [None, 1], none_is_leaf=False) == [None, 5]
    assert tree.map_structure(lambda v: 5, None, none_is_leaf=False) is None
    assert tree.map_structure(lambda v: 5, [None, 1]) == [5, 5]
    assert tree.map_structure(lambda a, b: (a, b), [None], [1]) == [(None, 1)]


@pytest.mark.parametrize("structures,kwargs,text", [
    (([1, 2], [1, 2, 3]), {}, "list arity mismatch; expected: 2, got: 3; list: [1, 2, 3]."),
    (((1, 2), [1, 2]), {}, "Expected an instance of tuple, got [1, 2]."),
    (({"a": 1}, [1]), {}, "Expected an instance of dict, collections.OrderedDict, or "
                          "collections.defaultdict, got [1]."),
    (({"a": 1}, {"b": 1}), {}, "dictionary key mismatch; expected key(s): ['a'], got key(s): "
                               "['b'], missing key(s): ['a'], extra key(s): ['b']; dict: "
                               "{'b': 1}."),
    ((OD([("z", 1), ("b", 2)]), {"z": 1}), {},
     "dictionary key mismatch; expected key(s): ['z', 'b'], got key(s): ['z'], missing key(s): "
     "['b']; OrderedDict: {'z': 1}."),
    ((Point(1, 2), (1, 2)), {}, "Expected an instance of collections.namedtuple, got (1, 2)."),
    ((Point(1, 2), Triple(1, 2, 3)), {},
     "namedtuple arity mismatch; expected: 2, got: 3; tuple: Triple(a=1, b=2, c=3)."),
    ((DQ([1]), DQ([1, 2])), {}, "deque arity mismatch; expected: 1, got: 2; deque: "
                                "deque([1, 2])."),
    (([1, 2], [1, [2]]), {}, "Structures don't have the same nested structure."),
    (([1, [2]], [1, 2]), {}, "Expected an instance of list, got 2."),
    (([None], [1]), {"none_is_leaf": False}, "Expected None, got 1."),
    (([1], [None]), {"none_is_leaf": False}, "Structures don't have the same nested structure."),
    ((), {}, "Must provide at least one structure"),
])
def test_map_structure_mismatch_errors(structures, kwargs, text):
    with pytest.raises(ValueError) as info:
        tree.map_structure(lambda *a: a, *structures, **kwargs)
    assert str(info.value) == text


def test_namedtuple_types_with_the_same_name_differ():
    with pytest.raises(ValueError, match="namedtuple type mismatch; expected type: "):
        tree.assert_same_structure(Point(0, 1), OtherPoint(2, 3))
    tree.assert_same_paths(Point(0, 1), OtherPoint(2, 3))


def test_map_structure_up_to():
    assert tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2, 2]]) == [2, 3]
    assert tree.map_structure_up_to([None, [None, None]], str, [[1, 1], [2, 2]]) == \
        ["[1, 1]", ["2", "2"]]
    assert tree.map_structure_up_to({"a": 0}, lambda a, b: (a, b), {"a": [1]}, {"a": 2}) == \
        {"a": ([1], 2)}
    with pytest.raises(ValueError, match="Expected an instance of list, got 2."):
        tree.map_structure_up_to([None, [None]], str, [[1], 2])
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        tree.map_structure_up_to([None], str)


def test_assert_same_structure_and_paths():
    tree.assert_same_structure([(0, 1)], [(2, 3)])
    tree.assert_same_structure({"a": 1, "b": 2}, OD([("b", 1), ("a", 2)]))
    tree.assert_same_structure([None], [1])
    with pytest.raises(ValueError, match="Expected an instance of list, got \\(2, 3\\)."):
        tree.assert_same_structure([0, 1], (2, 3))
    with pytest.warns(DeprecationWarning, match="please remove"):
        tree.assert_same_structure([1], [2], check_types=True)
    with pytest.warns(DeprecationWarning, match="assert_same_paths"):
        tree.assert_same_structure([1], [2], check_types=False)
    tree.assert_same_paths([0, 1], (2, 3))
    with pytest.raises(ValueError) as info:
        tree.assert_same_paths([0, [1]], [0, 1])
    assert str(info.value) == ("`a` and `b` don't have the same paths.\nPaths in `a` missing "
                               "in `b`:\n{(1, 0)}\nPaths in `b` missing in `a`:\n{(1,)}")


def test_traverse():
    seen = []
    s = [(1, 2), [3], {"b": [4], "a": 5}]
    assert tree.traverse(seen.append, s) == s
    assert seen == [s, (1, 2), 1, 2, [3], 3, s[2], 5, [4], 4]
    seen.clear()
    tree.traverse(seen.append, s, top_down=False)
    assert seen == [1, 2, (1, 2), 3, [3], 5, 4, [4], s[2], s]
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if isinstance(x, tuple) else None, s) == \
        [None, [3], {"b": [4], "a": 5}]
    replaced = tree.traverse(lambda x: "X" if x == 3 else None, {"b": 3, "a": 4}, top_down=False)
    assert list(replaced.items()) == [("b", "X"), ("a", 4)]
    with pytest.raises(TypeError, match="not callable"):
        tree.traverse(3, [1])


def test_lists_to_tuples_and_map_shape_structure():
    assert tree.lists_to_tuples([1, [2, {"a": [3]}], (4, [5]), DQ([[6]])]) == \
        (1, (2, {"a": (3,)}), (4, (5,)), DQ([(6,)]))
    out = tree.map_shape_structure(lambda s: ("S", s), STRUCTURES["shapes"])
    assert out == [("S", (None, 3)), {"a": ("S", (2,)), "b": [("S", 4), ("S", [5])]},
                   ("S", ()), ("S", None), ("S", 5), (("S", 1.0),), ("S", (True, 2))]


def test_is_nested():
    nested = ["empty_list", "empty_tuple", "empty_dict", "nested", "ordered_dict", "defaultdict",
              "deque", "namedtuple", "struct_seq", "empty_namedtuple"]
    for name in nested:
        assert tree.is_nested(STRUCTURES[name]), name
    for name in ["leaf", "none", "str", "array", "set"]:
        assert not tree.is_nested(STRUCTURES[name]), name
    assert not tree.is_nested(ListSub([1])) and not tree.is_nested(os.environ)


# ------------------------------------------------------------------ parity with Keras
@pytest.fixture
def keras_tree(monkeypatch):
    pytest.importorskip("keras")
    optree_impl = pytest.importorskip("keras.src.tree.optree_impl")
    from keras.src.tree import tree_api

    monkeypatch.setattr(tree_api, "tree_impl", optree_impl)
    return tree_api


def _recorder():
    seen = []

    def func(x):
        seen.append(_signature(x))
        return None

    return seen, func


SINGLE = {
    "flatten": lambda t, s: t.flatten(s),
    "flatten_with_path": lambda t, s: t.flatten_with_path(s),
    "is_nested": lambda t, s: t.is_nested(s),
    "pack": lambda t, s: t.pack_sequence_as(s, [("v", i) for i in range(len(t.flatten(s)))]),
    "pack_short": lambda t, s: t.pack_sequence_as(s, t.flatten(s)[1:]),
    "map": lambda t, s: t.map_structure(lambda x: ("m", x), s),
    "map_none_not_leaf": lambda t, s: t.map_structure(lambda x: ("m", x), s, none_is_leaf=False),
    "map_twice": lambda t, s: t.map_structure(lambda a, b: (a, b), s, s),
    "lists_to_tuples": lambda t, s: t.lists_to_tuples(s),
    "map_shape": lambda t, s: t.map_shape_structure(lambda x: ("s", x), s),
    "traverse_down": lambda t, s: (lambda r: (t.traverse(r[1], s), r[0]))(_recorder()),
    "traverse_up": lambda t, s: (lambda r: (t.traverse(r[1], s, top_down=False), r[0]))(
        _recorder()),
    "traverse_replace": lambda t, s: t.traverse(
        lambda x: t.MAP_TO_NONE if x == 2 else ("L", x) if isinstance(x, list) else None, s),
    "same_as_self": lambda t, s: t.assert_same_structure(s, s),
    "same_paths_as_self": lambda t, s: t.assert_same_paths(s, s),
}


@pytest.mark.parametrize("fn", sorted(SINGLE))
@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_single_structure_functions_match_keras(keras_tree, fn, name):
    s = STRUCTURES[name]
    assert _outcome(SINGLE[fn], tree, s) == _outcome(SINGLE[fn], keras_tree, s)


PAIRS = {
    "list_len": ([1, 2], [1, 2, 3]), "list_tuple": ([1, 2], (1, 2)), "tuple_list": ((), []),
    "deeper": ([1, 2], [1, [2]]), "shallower": ([1, [2]], [1, 2]),
    "leaf_vs_list": (1, [2]), "list_vs_leaf": ([1], 2), "none_vs_list": (None, [1]),
    "list_vs_none": ([1], None), "none_vs_leaf": ([None], [1]), "leaf_vs_none": ([1], [None]),
    "dict_keys": ({"a": 1}, {"b": 1}), "dict_missing": ({"a": 1, "b": 2}, {"a": 1}),
    "dict_extra": ({"a": 1}, {"a": 1, "b": 2}), "dict_int_str": ({1: 1}, {"1": 1}),
    "dict_odict": ({"a": 1, "b": 2}, OD([("b", 3), ("a", 4)])),
    "odict_dict": (OD([("b", 3), ("a", 4)]), {"a": 1, "b": 2}),
    "odict_keys": (OD([("z", 1), ("b", 2)]), {"a": 1, "z": 2}),
    "dd_dict": (_dd(("a", 1)), {"a": 2}), "dict_dd_keys": ({"z": 1, "b": 2}, _dd(("a", 1))),
    "dict_list": ({"a": 1}, [1]), "dict_subclass": ({"a": 1}, DictSub(a=1)),
    "nt_nt": (Point(1, 2), OtherPoint(3, 4)), "nt_tuple": (Point(1, 2), (3, 4)),
    "nt_arity": (Point(1, 2), Triple(1, 2, 3)), "deque_list": (DQ([1]), [1]),
    "deque_len": (DQ([1]), DQ([1, 2])), "deque_maxlen": (DQ([1], maxlen=2), DQ([1], maxlen=3)),
    "structseq_tuple": (time.gmtime(0), tuple(range(9))),
    "tuple_structseq": (tuple(range(9)), time.gmtime(0)),
    "structseq_other": (time.gmtime(0), os.times()),
    "nested_ok": ({"b": [1, (2, None)], "a": Point(3, {"k": 4})},
                  {"a": Point(5, {"k": 6}), "b": [7, (8, 9)]}),
    "nested_bad": ([1, (2, 3)], [[1], (2,)]),
    "list_str": ([1], "ab"),
}
PAIR_FNS = {
    "map": lambda t, a, b: t.map_structure(lambda x, y: (x, y), a, b),
    "map_none_not_leaf": lambda t, a, b: t.map_structure(lambda x, y: (x, y), a, b,
                                                         none_is_leaf=False),
    "same_structure": lambda t, a, b: t.assert_same_structure(a, b),
    "same_paths": lambda t, a, b: t.assert_same_paths(a, b),
    "up_to": lambda t, a, b: t.map_structure_up_to(t.map_structure(lambda x: 0, a), repr, b),
}


@pytest.mark.parametrize("fn", sorted(PAIR_FNS))
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_two_structure_functions_match_keras(keras_tree, fn, name):
    a, b = PAIRS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(PAIR_FNS[fn], tree, a, b) == _outcome(PAIR_FNS[fn], keras_tree, a, b)


def test_three_structures_and_docstring_examples_match_keras(keras_tree):
    cases = [
        lambda t: t.map_structure(lambda a, b, c: a + b + c, [1, {"a": 2}], [3, {"a": 4}],
                                  [5, {"a": 6}]),
        lambda t: t.map_structure(lambda a, b, c: 0, [1], [2], [3, 4]),
        lambda t: t.map_structure_up_to([1, [1, 1]], lambda a, b: (a, b), [[1, 1], [2, 2]],
                                        [3, [4, 5]]),
        lambda t: t.map_structure_up_to((1, 1), lambda a: a, [[1, 1], [2, 2]]),
        lambda t: t.pack_sequence_as({"key3": {"c": ("alpha", "beta"), "a": "gamma"},
                                      "key1": {"e": "val1", "d": "val2"}},
                                     ["val2", "val1", 3.0, 1.0, 2.0]),
        lambda t: t.pack_sequence_as([1, 2], iter([5, 6])),
        lambda t: t.pack_sequence_as([1, 2], {"a": 1, "b": 2}),
        lambda t: t.flatten({100: "world!", 6: "Hello"}),
    ]
    for case in cases:
        assert _outcome(case, tree) == _outcome(case, keras_tree)


def test_keras_public_names_and_signatures(keras_tree):
    import inspect

    import keras

    names = sorted(n for n in dir(keras.tree) if not n.startswith("_"))
    assert names == sorted(tree.__all__)
    for name in names:
        theirs = getattr(keras.tree, name)
        if inspect.isfunction(theirs):
            assert inspect.signature(getattr(tree, name)) == inspect.signature(theirs), name
    # Keras's MAP_TO_NONE marker works with fkeras's traverse (it is recognised by name).
    assert tree.traverse(lambda x: keras.tree.MAP_TO_NONE if x == 1 else None, [1, 2]) == \
        [None, 2]


def test_map_structure_up_to_none_shallow_leaves_is_a_documented_difference(keras_tree):
    # Keras 3.15's docstring example; its optree implementation raises on the None leaves.
    assert tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2]]) == [2, 2]
    with pytest.raises(ValueError, match="Structures don't have the same nested structure."):
        keras_tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2]])
