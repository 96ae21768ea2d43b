"""fkeras.name_scope prefixes variable paths as Keras 3 does: each case builds the same thing
with fkeras and (when installed) real Keras and compares the paths; the fixed expectations are
Keras 3.15's (torch backend), measured."""

import numpy as np
import pytest

import fkeras
from fkeras.engine.name_scope import current_path


def _paths(variables):
    return [v.path for v in variables]


def case_variable_in_scopes(lib):
    out = []
    with lib.name_scope("a"):
        out.append(lib.Variable(np.ones(2), name="v").path)
        with lib.name_scope("b"):
            out.append(lib.Variable(np.ones(2), name="v").path)
        with lib.name_scope("a"):  # no caller: not deduplicated
            out.append(lib.Variable(np.ones(2), name="v").path)
    out.append(lib.Variable(np.ones(2), name="v").path)
    return out


def case_dense_built_in_scope(lib):
    with lib.name_scope("outer"):
        layer = lib.layers.Dense(2, name="d")
        layer.build((None, 3))
    return _paths(layer.weights) + [layer.path]


def case_created_in_scope_built_outside(lib):
    with lib.name_scope("s"):
        layer = lib.layers.Dense(2, name="d")
    layer.build((None, 3))
    return _paths(layer.weights)


def case_called_in_scope(lib):
    layer = lib.layers.Dense(2, name="d")
    with lib.name_scope("s"):
        layer(np.ones((1, 3), "float32"))
    with lib.name_scope("t"):  # the path is fixed at the first build
        layer(np.ones((1, 3), "float32"))
    return _paths(layer.weights)


def case_layer_built_in_build(lib):
    class Outer(lib.layers.Layer):
        def build(self, shape):
            self.inner = lib.layers.Dense(2, name="inner")
            self.inner.build(shape)
            self.w = self.add_weight(shape=(1,), name="w")
            with lib.name_scope("sub"):  # add_weight restarts from the layer's own path
                self.u = self.add_weight(shape=(1,), name="u")

        def call(self, x):
            return self.inner(x)

    layer = Outer(name="outer_layer")
    layer.build((None, 3))
    return sorted(_paths(layer.weights))


def case_sublayer_built_by_call(lib):
    class Outer(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = lib.layers.Dense(2, name="inner")

        def call(self, x):
            return self.inner(x)

    layer = Outer(name="o")
    layer(np.ones((1, 3), "float32"))
    return _paths(layer.weights)


def case_weight_in_init(lib):
    class W(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w0 = self.add_weight(shape=(1,), name="w0")

    with lib.name_scope("outer"):
        layer = W(name="wl")
    return [layer.w0.path, W(name="wl2").w0.path]


def case_sequential(lib):
    seq = lib.Sequential([lib.Input((3,)), lib.layers.Dense(2, name="sd")], name="seq")
    deferred = lib.Sequential([lib.layers.Dense(2, name="sd2")], name="seq2")
    deferred.build((None, 3))
    called = lib.Sequential([lib.layers.Dense(2, name="sd3")], name="seq3")
    called(np.ones((1, 3), "float32"))
    with lib.name_scope("outer"):
        scoped = lib.Sequential([lib.Input((3,)), lib.layers.Dense(2, name="sd4")], name="seq4")
    return [_paths(m.weights) for m in (seq, deferred, called, scoped)]


def case_functional(lib):
    inp = lib.Input((3,))
    model = lib.Model(inp, lib.layers.Dense(2, name="fd")(inp), name="func")
    with lib.name_scope("fs"):
        inp2 = lib.Input((3,))
        out2 = lib.layers.Dense(2, name="fsd")(inp2)
    return [_paths(model.weights), _paths(lib.Model(inp2, out2).weights)]


def case_subclassed_model(lib):
    class Sub(lib.Model):
        def __init__(self):
            super().__init__(name="sub")
            self.d = lib.layers.Dense(2, name="sdd")

        def call(self, x):
            return self.d(x)

    model = Sub()
    model(np.ones((1, 3), "float32"))
    return _paths(model.weights)


def case_batch_norm_in_scope(lib):
    with lib.name_scope("outer"):
        layer = lib.layers.BatchNormalization(name="bn")
        layer.build((None, 3))
    return _paths(layer.weights)


CASES = {
    "variable_in_scopes": (case_variable_in_scopes, ["a/v", "a/b/v", "a/a/v", "v"]),
    "dense_built_in_scope": (case_dense_built_in_scope,
                             ["outer/d/kernel", "outer/d/bias", "outer/d"]),
    "created_in_scope_built_outside": (case_created_in_scope_built_outside,
                                       ["d/kernel", "d/bias"]),
    "called_in_scope": (case_called_in_scope, ["s/d/kernel", "s/d/bias"]),
    "layer_built_in_build": (case_layer_built_in_build,
                             ["outer_layer/inner/bias", "outer_layer/inner/kernel",
                              "outer_layer/u", "outer_layer/w"]),
    "sublayer_built_by_call": (case_sublayer_built_by_call, ["o/inner/kernel", "o/inner/bias"]),
    "weight_in_init": (case_weight_in_init, ["outer/wl/w0", "wl2/w0"]),
    "sequential": (case_sequential, [["seq/sd/kernel", "seq/sd/bias"],
                                     ["seq2/sd2/kernel", "seq2/sd2/bias"],
                                     ["seq3/sd3/kernel", "seq3/sd3/bias"],
                                     ["outer/seq4/sd4/kernel", "outer/seq4/sd4/bias"]]),
    "functional": (case_functional, [["fd/kernel", "fd/bias"], ["fs/fsd/kernel", "fs/fsd/bias"]]),
    "subclassed_model": (case_subclassed_model, ["sub/sdd/kernel", "sub/sdd/bias"]),
    "batch_norm_in_scope": (case_batch_norm_in_scope,
                            ["outer/bn/gamma", "outer/bn/beta", "outer/bn/moving_mean",
                             "outer/bn/moving_variance"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_paths_fixed_expectations(case):
    fn, expected = CASES[case]
    assert fn(fkeras) == expected


@pytest.mark.parametrize("case", list(CASES))
def test_paths_match_keras(case):
    keras = pytest.importorskip("keras")
    fn, _ = CASES[case]
    keras.utils.clear_session()
    assert fn(fkeras) == fn(keras)


def test_current_path_and_override_parent():
    assert current_path() == ""
    with fkeras.name_scope("x"):
        with fkeras.name_scope("y"):
            assert current_path() == "x/y"
            with fkeras.name_scope("z", override_parent="p/q"):
                assert current_path() == "p/q/z"
                assert fkeras.Variable(np.ones(1), name="v").path == "p/q/z/v"
            assert current_path() == "x/y"
    assert current_path() == ""


def test_same_caller_is_deduplicated():
    owner = object()
    with fkeras.name_scope("n", caller=owner):
        with fkeras.name_scope("n", caller=owner):
            assert current_path() == "n"
        with fkeras.name_scope("n", caller=owner, deduplicate=False):
            assert current_path() == "n/n"
    assert current_path() == ""


def test_explicit_path_and_bad_names():
    with fkeras.name_scope("a"):
        assert fkeras.Variable(np.ones(1), name="v", path="given/v").path == "given/v"
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        fkeras.name_scope("a/b")


def test_weights_still_round_trip_through_files(tmp_path):
    """Saved files key on layer structure, not variable paths: a Sequential's weights (now
    "seq/dense/kernel") load into a model built elsewhere."""
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(2)], name="seq")
    model.save_weights(tmp_path / "w.weights.h5")
    model.save(tmp_path / "m.keras")
    inp = fkeras.Input((3,))
    other = fkeras.Model(inp, fkeras.layers.Dense(2)(inp))
    other.load_weights(tmp_path / "w.weights.h5")
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    loaded = fkeras.saving.load_model(tmp_path / "m.keras")
    assert _paths(loaded.weights) == _paths(model.weights) == ["seq/dense/kernel",
                                                                "seq/dense/bias"]
