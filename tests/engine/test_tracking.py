"""Sub-layers in lists, tuples and dicts of user layers are tracked (Keras 3's tracker), and
layers record the shape they were built with (get_build_config / build_from_config)."""

import copy
import pickle

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.engine.tracking import TrackedDict, TrackedList

X = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")


class Holder(layers.Layer):
    def __init__(self, how, **kwargs):
        super().__init__(**kwargs)
        if how == "list":
            self.items = [layers.Dense(2), layers.Dense(2)]
        elif how == "appended":
            self.items = []
            self.items.append(layers.Dense(2))
            self.items.extend([layers.Dense(2)])
        elif how == "tuple":
            self.items = (layers.Dense(2), layers.Dense(2))
        elif how == "dict":
            self.items = {"a": layers.Dense(2)}
            self.items["b"] = layers.Dense(2)
        elif how == "nested":
            self.items = [[layers.Dense(2)], {"x": (layers.Dense(2),)}]

    def call(self, x):
        for layer in self._flat():
            x = layer(x)
        return x

    def _flat(self):
        out, stack = [], [self.items]
        while stack:
            item = stack.pop(0)
            if isinstance(item, layers.Layer):
                out.append(item)
            elif isinstance(item, dict):
                stack[:0] = list(item.values())
            else:
                stack[:0] = list(item)
        return out


@pytest.mark.parametrize("how", ["list", "appended", "tuple", "dict", "nested"])
def test_layers_in_containers_are_sub_layers(how):
    holder = Holder(how)
    out = holder(X)
    inner = holder._flat()
    assert holder.layers == inner
    assert len(holder.trainable_weights) == 4
    # the weights are the ones the call used: a float64 reference from them
    ref = X.astype(np.float64)
    for layer in inner:
        kernel, bias = (np.asarray(w, np.float64) for w in layer.weights)
        ref = ref @ kernel + bias
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-6)


def test_removing_a_layer_untracks_it():
    holder = Holder("list")
    holder(X)
    first = holder.items.pop(0)
    assert first not in holder.layers and len(holder.weights) == 2
    holder.items.append(first)
    assert holder.layers[-1] is first
    del holder.items[-1]
    assert len(holder.weights) == 2
    holder = Holder("dict")
    holder.items.pop("a")
    assert len(holder.layers) == 1


def test_plain_data_and_fkeras_layers_are_left_alone():
    holder = Holder("list")
    holder.sizes = [3, 4]
    holder.options = {"k": 1}
    assert type(holder.sizes) is list and type(holder.options) is dict
    assert type(holder.items) is TrackedList
    holder.heads = {}
    assert type(holder.heads) is TrackedDict
    dense = layers.Dense(2)
    dense.extra = [layers.Dense(1)]  # an fkeras layer: not wrapped, not tracked
    assert type(dense.extra) is list and dense.layers == []


def test_copies_of_tracked_containers_are_plain():
    holder = Holder("list")
    assert type(copy.copy(holder.items)) is list
    assert type(copy.deepcopy(holder.items)) is list
    assert type(pickle.loads(pickle.dumps(TrackedList([1, 2])))) is list
    assert pickle.loads(pickle.dumps(TrackedDict({"a": 1}))) == {"a": 1}


def test_training_updates_layers_held_in_a_list():
    class Stack(fkeras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = [layers.Dense(4) for _ in range(2)]  # linear: all get gradients
            self.head = layers.Dense(1)

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    model = Stack()
    model.compile(optimizer="sgd", loss="mse")
    model(X)
    before = [np.array(w) for w in model.blocks[0].weights]
    model.train_on_batch(X, np.ones((2, 1), "float32"))
    assert len(model.trainable_weights) == 6
    assert not np.array_equal(np.asarray(model.blocks[0].weights[0]), before[0])


# ---- build config ----
class OwnBuild(layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 2))

    def call(self, x):
        return fkeras.ops.matmul(x, self.w)


BUILDS = {
    "dense_call": (lambda: layers.Dense(2), lambda l: l(X), (2, 3)),
    "dense_build": (lambda: layers.Dense(2), lambda l: l.build((None, 3)), (None, 3)),
    "own_build_call": (OwnBuild, lambda l: l(X), (2, 3)),
    "own_build_explicit": (OwnBuild, lambda l: l.build((5, 3)), (5, 3)),
    "symbolic": (lambda: layers.Dense(2), lambda l: l(fkeras.Input((3,))), (None, 3)),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_build_config_records_the_first_build_and_rebuilds(name):
    make, build, shape = BUILDS[name]
    layer = make()
    assert layer.get_build_config() is None
    build(layer)
    config = layer.get_build_config()
    assert config == {"input_shape": shape}
    fresh = make()
    fresh.build_from_config(config)
    assert fresh.built
    assert [tuple(w.shape) for w in fresh.weights] == [tuple(w.shape) for w in layer.weights]
