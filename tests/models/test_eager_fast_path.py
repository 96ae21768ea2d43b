"""The eager fast path of `model(x)` (models/eager_fast_path.py): the same outputs, bit for bit,
as the full per-layer path; taken only where eligible; gradients and errors unchanged."""

import numpy as np
import pytest

import fkeras
from fkeras import layers as L
from fkeras.engine.tensor import Tensor
from fkeras.models import Model, Sequential
from fkeras.models import eager_fast_path

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _mlp():
    inp = L.Input((12,))
    h = L.Dense(16, activation="relu")(L.Dense(16, activation="relu")(inp))
    return Model(inp, L.Dense(4, activation="softmax")(h)), _x(1, 12)


def _cnn():
    inp = L.Input((10, 10, 2))
    h = L.Conv2D(4, 3, activation="relu")(inp)
    h = L.Flatten()(L.MaxPooling2D()(L.Conv2D(6, 3, activation="relu")(h)))
    return Model(inp, L.Dense(3, activation="softmax")(L.Dense(8, activation="relu")(h))), \
        _x(1, 10, 10, 2)


def _cnnbn():
    inp = L.Input((8, 8, 1))
    bn = L.BatchNormalization()
    h = L.Activation("relu")(bn(L.Conv2D(4, 3)(inp)))
    model = Model(inp, L.Dense(2)(L.GlobalAveragePooling2D()(h)))
    bn.moving_mean.assign(RNG.standard_normal(4).astype(np.float32))
    bn.moving_variance.assign(RNG.uniform(0.5, 2.0, 4).astype(np.float32))
    return model, _x(2, 8, 8, 1)


def _lstm():
    inp = L.Input((7, 5))
    return Model(inp, L.Dense(1)(L.LSTM(6)(inp))), _x(1, 7, 5)


def _gru_layernorm():
    inp = L.Input((6, 4))
    h = L.LayerNormalization()(L.GRU(5, return_sequences=True)(inp))
    return Model(inp, L.Dense(2)(L.GlobalAveragePooling1D()(h))), _x(3, 6, 4)


def _dropout():
    inp = L.Input((9,))
    return Model(inp, L.Dense(3)(L.Dropout(0.5)(L.Dense(9)(inp)))), _x(4, 9)


def _embedding():
    inp = L.Input((5,), dtype="int32")
    h = L.GlobalAveragePooling1D()(L.Embedding(20, 4)(inp))
    return Model(inp, L.Dense(2)(h)), RNG.integers(0, 20, (2, 5)).astype(np.int32)


def _multi_io():
    a, b = L.Input((4,), name="a"), L.Input((3,), name="b")
    h = L.Concatenate()([L.Dense(5)(a), L.Dense(5)(b)])
    s = L.Add()([L.Dense(2)(h), L.Dense(2)(h)])
    return Model([a, b], {"sum": s, "h": L.Dense(3, name="h")(h)}), [_x(2, 4), _x(2, 3)]


def _nested():
    inner_in = L.Input((6,))
    inner = Model(inner_in, L.Dense(6, activation="tanh")(inner_in))
    seq = Sequential([L.Input((6,)), L.Dense(4, activation="relu")])
    inp = L.Input((6,))
    return Model(inp, L.Dense(2)(seq(inner(inp)))), _x(3, 6)


def _sequential():
    model = Sequential([L.Input((8,)), L.Dense(8, activation="relu"), L.Dropout(0.3),
                        L.Dense(3, activation="sigmoid")])
    return model, _x(2, 8)


def _activity_regularized():
    inp = L.Input((5,))
    h = L.Dense(4, activity_regularizer="l2")(inp)
    return Model(inp, L.Dense(2)(h)), _x(3, 5)


FAST = [_mlp, _cnn, _cnnbn, _lstm, _gru_layernorm, _dropout, _embedding, _multi_io, _nested,
        _sequential, _activity_regularized]


def _slow(model, *args, **kwargs):
    saved = eager_fast_path.prepare
    eager_fast_path.prepare = lambda *a: None
    try:
        return model(*args, **kwargs)
    finally:
        eager_fast_path.prepare = saved


def _assert_same(fast, slow):
    assert type(fast) is type(slow)
    if isinstance(slow, dict):
        assert list(fast) == list(slow)
        fast, slow = list(fast.values()), list(slow.values())
    if isinstance(slow, (list, tuple)):
        assert len(fast) == len(slow)
        for f, s in zip(fast, slow):
            _assert_same(f, s)
        return
    assert type(fast) is Tensor
    assert getattr(fast, "_keras_mask", None) is None
    assert getattr(slow, "_keras_mask", None) is None
    assert fast.dtype == slow.dtype and fast.shape == slow.shape
    np.testing.assert_array_equal(np.asarray(fast), np.asarray(slow))


@pytest.mark.parametrize("build", FAST, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("training", ["absent", None, False])
def test_fast_path_is_taken_and_bit_identical(build, training):
    model, x = build()
    kwargs = {} if training == "absent" else {"training": training}
    slow = _slow(model, x, **kwargs)
    slow_losses = [np.asarray(v) for v in model.losses]
    first = model(x, **kwargs)  # full path: records the input signature
    state = eager_fast_path.state_of(model)
    assert state.taken == 0
    fast = model(x, **kwargs)
    assert state.taken == 1
    _assert_same(first, slow)
    _assert_same(fast, slow)
    fast_losses = [np.asarray(v) for v in model.losses]
    assert len(fast_losses) == len(slow_losses)  # not piled up: each call clears the last one
    for f, s in zip(fast_losses, slow_losses):
        np.testing.assert_array_equal(f, s)


def test_activity_regularizer_losses_are_added_on_the_fast_path():
    model, x = _activity_regularized()
    model(x)
    model(x)
    assert eager_fast_path.state_of(model).taken == 1
    assert len(model.losses) == 1
    out = np.asarray(model.layers[1](x))
    np.testing.assert_allclose(np.asarray(model.losses[0]),
                               0.01 * np.sum(out.astype(np.float64) ** 2) / len(x), rtol=1e-5)


def test_tensor_inputs_and_a_new_batch_size():
    model, x = _mlp()
    t = fkeras.ops.convert_to_tensor(x)
    model(t)
    out = model(t)
    assert eager_fast_path.state_of(model).taken == 1
    _assert_same(out, _slow(model, x))
    x3 = _x(3, 12)
    model(x3)  # a new signature: the full path first
    assert eager_fast_path.state_of(model).taken == 1
    _assert_same(model(x3), _slow(model, x3))
    assert eager_fast_path.state_of(model).taken == 2


def test_float64_inputs_take_the_fast_path_with_the_same_values():
    model, x = _cnn()
    x64 = x.astype(np.float64)
    model(x64)
    out = model(x64)
    assert eager_fast_path.state_of(model).taken == 1
    _assert_same(out, _slow(model, x64))


class _Scale(L.Layer):
    def call(self, inputs):
        return inputs * 2.0


def _lambda_model():
    inp = L.Input((4,))
    return Model(inp, L.Dense(2)(L.Lambda(lambda t: t * 3.0)(inp))), _x(2, 4)


def _user_layer_model():
    inp = L.Input((4,))
    return Model(inp, L.Dense(2)(_Scale()(inp))), _x(2, 4)


def _masked_model():
    inp = L.Input((5,), dtype="int32")
    h = L.LSTM(3)(L.Embedding(10, 4, mask_zero=True)(inp))
    return Model(inp, L.Dense(1)(h)), np.array([[1, 2, 0, 0, 0], [3, 0, 0, 0, 0]], np.int32)


def _identity_output_model():
    inp = L.Input((4,))
    return Model(inp, [inp, L.Dense(2)(inp)]), _x(2, 4)


@pytest.mark.parametrize("build", [_lambda_model, _user_layer_model, _masked_model,
                                   _identity_output_model],
                         ids=lambda f: f.__name__.strip("_"))
def test_ineligible_graphs_take_the_full_path(build):
    model, x = build()
    model(x)
    out = model(x)
    assert not eager_fast_path.state_of(model).eligible
    assert eager_fast_path.state_of(model).taken == 0
    _assert_same_structure_values(out, _slow(model, x))


def _assert_same_structure_values(a, b):
    if isinstance(b, (list, tuple)):
        for u, v in zip(a, b):
            _assert_same_structure_values(u, v)
        return
    assert type(a) is type(b)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("call", [
    lambda m, x: m(x, training=True),
    lambda m, x: m(x, False),  # training given positionally
    lambda m, x: m(x.astype(np.int64)),  # integers for a float input: the first layer casts
    lambda m, x: m(x, mask=np.ones(x.shape[:1], bool)),
], ids=["training_true", "positional_training", "int_for_float", "explicit_mask"])
def test_ineligible_calls_take_the_full_path(call):
    model, x = _dropout()
    call(model, x)
    out = call(model, x)
    assert eager_fast_path.state_of(model).taken == 0
    assert isinstance(out, Tensor)


def test_masked_tensor_input_takes_the_full_path():
    model, x = _mlp()
    model(x)
    t = fkeras.ops.convert_to_tensor(x)
    t._keras_mask = fkeras.ops.convert_to_tensor(np.ones((1,), bool))
    model(t)
    assert eager_fast_path.state_of(model).taken == 0


def test_gradient_tape_takes_the_full_path_and_gradients_are_unchanged():
    model, x = _cnnbn()
    model(x)
    model(x)
    assert eager_fast_path.state_of(model).taken == 1
    grads = []
    for call in (model, lambda v: _slow(model, v)):
        with fkeras.GradientTape() as tape:
            loss = fkeras.ops.sum(fkeras.ops.square(call(x)))
        grads.append([np.asarray(g) for g in tape.gradient(loss, model.trainable_weights)])
    assert eager_fast_path.state_of(model).taken == 1
    for a, b in zip(*grads):
        assert np.any(a != 0)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [
    lambda x: x[:, :5],        # wrong feature size
    lambda x: x[None],         # wrong rank
    lambda x: [x, x],          # wrong input count
], ids=["shape", "rank", "count"])
def test_bad_inputs_get_the_full_path_error_after_fast_calls(bad):
    model, x = _mlp()
    model(x)
    model(x)
    assert eager_fast_path.state_of(model).taken == 1
    with pytest.raises(ValueError) as fast_err:
        model(bad(x))
    with pytest.raises(ValueError) as slow_err:
        _slow(model, bad(x))
    assert str(fast_err.value) == str(slow_err.value)


def test_graph_change_rebuilds_the_state():
    model = Sequential([L.Input((3,)), L.Dense(4)])
    x = _x(2, 3)
    model(x)
    model(x)
    assert eager_fast_path.state_of(model).taken == 1
    model.add(L.Dense(2))
    model(x)
    out = model(x)
    assert out.shape == (2, 2)
    assert eager_fast_path.state_of(model).taken == 1
    _assert_same(out, _slow(model, x))


def test_recorded_training_flag_is_honoured():
    inp = L.Input((6,))
    model = Model(inp, L.Dropout(0.5)(inp, training=True))  # Monte-Carlo dropout
    x = np.ones((4, 6), np.float32)
    model(x)
    out = np.asarray(model(x))
    assert eager_fast_path.state_of(model).taken == 1
    assert np.any(out == 0.0)  # dropout applied, as on the full path
    assert np.array_equal(np.asarray(model(x, training=False)), x)


def test_predict_is_unchanged_by_the_training_none_plan_mode():
    model, x = _sequential()
    np.testing.assert_array_equal(model.predict(x, verbose=0), np.asarray(_slow(model, x)))
