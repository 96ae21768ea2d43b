"""The Functional API's graph engine, statement by statement (issue 2, item 3)."""

import numpy as np
import pytest

import fkeras as keras
from fkeras.engine.keras_tensor import KerasHistory, KerasTensor
from fkeras.engine.node import Node
from fkeras.layers import Activation, Dense, Input, InputLayer
from fkeras.models import Model, Sequential


def test_weights_empty_before_first_call_then_kernel_and_bias():
    d = Dense(20)
    assert d.weights == []
    d(Input(shape=(10,)))
    kernel, bias = d.weights
    assert kernel.shape == (10, 20) and bias.shape == (20,)
    assert kernel.name == "kernel" and bias.name == "bias"


def test_activation_has_no_weights():
    a = Activation("relu")
    assert a.weights == []
    a(Input(shape=(3,)))
    assert a.weights == []


def test_nodes_and_input_shape_appear_with_the_first_call():
    d1, d2 = Dense(20), Dense(1)
    assert d1._inbound_nodes == [] and d1._outbound_nodes == []
    assert not hasattr(d1, "input_shape")
    with pytest.raises(AttributeError, match="has never been called and thus has no defined input shape"):
        d1.input_shape
    x = Input(shape=(10,))
    d2(d1(x))
    assert hasattr(d1, "input_shape")
    assert isinstance(d1._inbound_nodes[0], Node) and isinstance(d1._outbound_nodes[0], Node)
    assert d1._outbound_nodes[0] is d2._inbound_nodes[0]
    assert d1.input_shape == (None, 10)
    assert d2.input_shape == (None, 20)
    assert d1.output_shape == (None, 20)


def test_input_is_a_function_returning_a_keras_tensor_with_history():
    x = Input(shape=(10,))
    assert isinstance(x, KerasTensor)
    layer, node_index, tensor_index = x._keras_history
    assert isinstance(layer, InputLayer) and (node_index, tensor_index) == (0, 0)
    assert isinstance(x._keras_history, KerasHistory)
    assert x.shape == (None, 10)
    assert Input(batch_shape=(100, 10)).shape == (100, 10)
    assert Input(shape=5).shape == (None, 5)
    with pytest.raises(ValueError, match="either a `shape` or a `batch_shape`"):
        Input()


def test_article_model_from_lists_or_single_tensors():
    x = Input(shape=(10,))
    dense1, dense2 = Dense(20), Dense(1)
    y = Activation("sigmoid")(dense2(dense1(x)))
    assert y._keras_history.layer.name == "activation"
    for model in (Model(inputs=[x], outputs=[y]), Model(inputs=x, outputs=y), Model(x, y)):
        assert [lyr.name for lyr in model.layers] == ["input_layer", "dense", "dense_1", "activation"]
        assert model.count_params() == 10 * 20 + 20 + 20 + 1
    data = np.random.default_rng(0).standard_normal((7, 10)).astype(np.float32)
    out = Model(x, y).predict(data)
    d1, d2 = Model(x, y).layers[1:3]
    k1, b1 = d1.get_weights()
    k2, b2 = d2.get_weights()
    expect = 1 / (1 + np.exp(-((data.astype(np.float64) @ k1 + b1) @ k2 + b2)))
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-6)


def test_multi_input_multi_output():
    a, b = Input(shape=(4,), name="a"), Input(shape=(3,), name="b")
    h = keras.layers.Dense(5)(a) + keras.layers.Dense(5)(b)
    o1, o2 = Dense(1, name="o1")(h), Dense(2, name="o2")(h)
    model = Model([a, b], [o1, o2])
    assert model.input_names == ["a", "b"] and model.output_names == ["o1", "o2"]
    xa, xb = np.ones((6, 4), np.float32), np.ones((6, 3), np.float32)
    y1, y2 = model.predict([xa, xb])
    assert y1.shape == (6, 1) and y2.shape == (6, 2)
    by_name = model.predict({"a": xa, "b": xb})
    np.testing.assert_allclose(by_name[0], y1)


def test_shared_layer_has_two_nodes_and_accessors():
    shared = Dense(8)
    a, b = Input(shape=(4,)), Input(shape=(6,))
    with pytest.raises(ValueError):
        shared(a), shared(b)  # the second call breaks the built kernel's input spec
    shared2 = Dense(8)
    c, d = Input(shape=(4,)), Input(shape=(4,))
    oc, od = shared2(c), shared2(d)
    assert len(shared2._inbound_nodes) == 2
    assert shared2.get_output_at(0) is oc and shared2.get_output_at(1) is od
    assert shared2.get_input_shape_at(1) == (None, 4)
    assert shared2.input_shape == (None, 4)  # identical shapes: defined
    with pytest.raises(ValueError, match="Asked to get output at node 5, but the layer has only 2 inbound nodes"):
        shared2.get_output_at(5)


def test_input_shape_ill_defined_for_differing_nodes():
    act = Activation("relu")
    act(Input(shape=(3,)))
    act(Input(shape=(5,)))
    with pytest.raises(AttributeError, match="has multiple inbound nodes, with different input shapes"):
        act.input_shape
    assert act.get_input_shape_at(0) == (None, 3) and act.get_input_shape_at(1) == (None, 5)


def test_nested_model_called_as_a_layer():
    inner_in = Input(shape=(4,))
    inner = Model(inner_in, Dense(3, name="inner_dense")(inner_in), name="inner")
    x = Input(shape=(4,))
    y = Dense(2)(inner(x))
    outer = Model(x, y)
    assert inner._inbound_nodes[-1].input_tensors == [x]  # the outer call is a node of `inner`
    assert [lyr.name for lyr in outer.layers][1] == "inner"
    assert outer.count_params() == 4 * 3 + 3 + 3 * 2 + 2
    data = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    k1, b1 = inner.get_weights()
    k2, b2 = outer.layers[2].get_weights()
    np.testing.assert_allclose(outer.predict(data), (data @ k1 + b1) @ k2 + b2, rtol=1e-5, atol=1e-6)


def test_sequential_add_input_shape_deferred_build_and_pop():
    s = Sequential()
    s.add(Dense(20, input_shape=(10,)))
    s.add(Dense(1))
    assert s.output_shape == (None, 1) and len(s.layers) == 2
    deferred = Sequential([Dense(3), Dense(2)])
    assert deferred.weights == [] and not deferred.built
    out = deferred(np.ones((4, 5), np.float32))
    assert out.shape == (4, 2) and deferred.built
    assert deferred.layers[0].get_weights()[0].shape == (5, 3)
    popped = deferred.pop()
    assert popped.name == "dense_3" and deferred.output_shape == (None, 3)
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        Sequential().add(3)
    with pytest.raises(TypeError, match="There are no layers in the model."):
        Sequential().pop()


def test_graph_errors():
    x = Input(shape=(3,))
    other = Input(shape=(3,))
    with pytest.raises(ValueError, match="Graph disconnected: cannot obtain value for tensor"):
        Model(x, Dense(2)(other))
    with pytest.raises(ValueError, match="All `inputs` values must be KerasTensors"):
        Model(np.ones((2, 3)), Dense(2)(x))
    h = Dense(2)(x)
    with pytest.raises(ValueError, match="must come from `fkeras.Input`"):
        Model(h, Dense(2)(h))
    y = Dense(2, name="same")(Dense(2, name="same")(x))
    with pytest.raises(ValueError, match='The name "same" is used 2 times in the model'):
        Model(x, y)


def test_unique_auto_names_and_clear_session():
    assert [Dense(1).name for _ in range(3)] == ["dense", "dense_1", "dense_2"]
    Dense(1, name="dense_9")  # explicit names do not advance the counter
    assert Dense(1).name == "dense_3"
    keras.utils.clear_session()
    assert Dense(1).name == "dense"


def test_get_and_set_weights_in_keras_order():
    x = Input(shape=(3,))
    model = Model(x, Dense(2)(Dense(4)(x)))
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(3, 4), (4,), (4, 2), (2,)]
    new = [np.full(s, i, np.float32) for i, s in enumerate(shapes)]
    model.set_weights(new)
    for got, want in zip(model.get_weights(), new):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was expecting 4 weights"):
        model.set_weights(new[:1])
    with pytest.raises(ValueError, match=r"weight shape \(3, 4\) is not compatible with provided weight shape \(2, 2\)"):
        model.set_weights([np.zeros((2, 2))] + new[1:])


def test_layer_input_spec_error_text():
    d = Dense(4)
    d(Input(shape=(3,)))
    with pytest.raises(ValueError, match='Input 0 of layer "dense" is incompatible with the layer: expected axis -1 of input shape to have value 3'):
        d(Input(shape=(5,)))


def test_ops_on_keras_tensors_infer_shapes_and_join_the_graph():
    x = Input(shape=(4, 6))
    y = keras.ops.reshape(x, (-1, 24))
    assert y.shape == (None, 24)
    z = keras.ops.concatenate([y, y], axis=-1)
    assert z.shape == (None, 48)
    model = Model(x, z)
    out = model.predict(np.arange(48, dtype=np.float32).reshape(2, 4, 6))
    np.testing.assert_array_equal(out[:, :24], out[:, 24:])


def test_unknown_kwargs_rejected():
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to Dense"):
        Dense(3, fused=True)
    with pytest.raises(ValueError, match="expected a positive integer"):
        Dense(0)


def test_keras_tensor_operators_build_graph_nodes():
    """Every Python operator a custom layer's call uses works on symbolic inputs too (a
    Sequential model calls a custom layer on KerasTensors), with NumPy's results."""
    x = keras.Input((3,))
    b = x > 0.0
    outs = [abs(x), +x, x // 2.0, x % 2.0, 2.0 ** x, 7.0 // (x + 3.0), 5.0 % (x + 3.0),
            x < 0.5, x <= 0.25, x > 0.25, x >= 0.5, ~b, b & (x < 1.0), b | (x < 0.0),
            b ^ (x < 1.0)]
    model = keras.Model(x, outs)
    v = np.array([[-1.5, 0.25, 2.0]], "float32")
    refs = [np.abs(v), v, v // 2, v % 2, 2 ** v, 7 // (v + 3), 5 % (v + 3), v < .5, v <= .25,
            v > .25, v >= .5, ~(v > 0), (v > 0) & (v < 1), (v > 0) | (v < 0), (v > 0) ^ (v < 1)]
    for got, ref in zip(model(v), refs):
        assert np.asarray(got).dtype == ref.dtype
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6)
