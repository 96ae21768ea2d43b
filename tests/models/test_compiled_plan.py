"""Compiled inference plans (models/compiled_plan.py): the same outputs as the uncompiled plan
(bit for bit without BatchNormalization folding, within float32 rounding with it), taken by
`model(x)` and `predict` where the model lowers, fallbacks elsewhere, weights re-read after
every write, outputs that never alias the plan's arena, and the C++ plan's own checks."""

import numpy as np
import pytest

import fkeras
from fkeras import _C
from fkeras import layers as L
from fkeras.engine.tensor import array_mode
from fkeras.models import Model, Sequential
from fkeras.models import compiled_plan
from fkeras.trainers.forward_plan import get_plan

RNG = np.random.default_rng(7)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _randomize_bn(model):
    for layer in model.layers:
        if type(layer) is L.BatchNormalization:
            c = layer.moving_mean.shape[0]
            layer.moving_mean.assign(RNG.normal(0, 0.5, c).astype(np.float32))
            layer.moving_variance.assign(RNG.uniform(0.5, 2.0, c).astype(np.float32))
            if layer.gamma is not None:
                layer.gamma.assign(RNG.uniform(0.5, 1.5, c).astype(np.float32))
            if layer.beta is not None:
                layer.beta.assign(RNG.normal(0, 0.5, c).astype(np.float32))
    return model


def _seq(input_shape, *layers):
    inp = L.Input(input_shape)
    h = inp
    for layer in layers:
        h = layer(h)
    return _randomize_bn(Model(inp, h))


# name: (model builder, input shape without batch, folded BatchNormalization?)
LOWERED = {
    "dense_relu": (lambda: _seq((12,), L.Dense(8, activation="relu")), (12,), False),
    "dense_linear_nobias": (lambda: _seq((12,), L.Dense(8, use_bias=False)), (12,), False),
    "dense_sigmoid_tanh_elu": (lambda: _seq((12,), L.Dense(8, activation="sigmoid"),
                                            L.Dense(7, activation="tanh"),
                                            L.Dense(5, activation="elu")), (12,), False),
    "dense_softmax": (lambda: _seq((12,), L.Dense(6, activation="softmax")), (12,), False),
    "dense_rank3": (lambda: _seq((4, 12), L.Dense(6, activation="relu")), (4, 12), False),
    "dense_then_activation": (lambda: _seq((12,), L.Dense(6), L.Activation("leaky_relu")),
                              (12,), False),
    "dense_then_softmax_layer": (lambda: _seq((12,), L.Dense(6), L.Softmax()), (12,), False),
    "activation_alone": (lambda: _seq((12,), L.Activation("tanh"), L.Dense(3)), (12,), False),
    "relu_layer": (lambda: _seq((12,), L.Dense(6), L.Dropout(0.3), L.ReLU()), (12,), False),
    "conv_valid_relu": (lambda: _seq((9, 9, 3), L.Conv2D(4, 3, activation="relu")),
                        (9, 9, 3), False),
    "conv_same_strided": (lambda: _seq((9, 8, 3), L.Conv2D(5, (3, 2), strides=2,
                                                              padding="same")),
                          (9, 8, 3), False),
    "conv_dilated_groups_nobias": (lambda: _seq((10, 10, 4), L.Conv2D(
        6, 3, dilation_rate=2, groups=2, use_bias=False, activation="sigmoid")),
        (10, 10, 4), False),
    "conv_then_activation": (lambda: _seq((8, 8, 2), L.Conv2D(4, 3), L.Activation("relu")),
                             (8, 8, 2), False),
    "maxpool_valid": (lambda: _seq((9, 9, 3), L.MaxPooling2D()), (9, 9, 3), False),
    "maxpool_same_strided": (lambda: _seq((9, 9, 3), L.MaxPooling2D(3, 2, padding="same")),
                             (9, 9, 3), False),
    "avgpool_same": (lambda: _seq((7, 9, 3), L.AveragePooling2D(2, padding="same")),
                     (7, 9, 3), False),
    "flatten_reshape": (lambda: _seq((4, 4, 2), L.Flatten(), L.Reshape((8, -1)),
                                     L.Dense(3)), (4, 4, 2), False),
    "bn_alone": (lambda: _seq((6, 6, 3), L.BatchNormalization()), (6, 6, 3), False),
    "bn_axis1": (lambda: _seq((3, 5, 4), L.BatchNormalization(axis=1)), (3, 5, 4), False),
    "bn_after_pool_no_center": (lambda: _seq((6, 6, 3), L.MaxPooling2D(),
                                             L.BatchNormalization(center=False, scale=False)),
                                (6, 6, 3), False),
    "bn_after_activated_conv": (lambda: _seq((6, 6, 3), L.Conv2D(4, 3, activation="relu"),
                                             L.BatchNormalization()), (6, 6, 3), False),
    "conv_bn_relu_folded": (lambda: _seq((10, 10, 2), L.Conv2D(8, 3), L.BatchNormalization(),
                                         L.Activation("relu"), L.MaxPooling2D(), L.Flatten(),
                                         L.Dense(4, activation="softmax")), (10, 10, 2), True),
    "conv_nobias_bn_folded": (lambda: _seq((7, 7, 3), L.Conv2D(5, 3, use_bias=False),
                                           L.BatchNormalization(scale=False)), (7, 7, 3), True),
    "dense_bn_folded": (lambda: _seq((12,), L.Dense(9), L.BatchNormalization(), L.ReLU()),
                        (12,), True),
    "sequential": (lambda: _randomize_bn(Sequential([L.Input((10,)), L.Dense(8),
                                                     L.BatchNormalization(),
                                                     L.Dense(2, activation="sigmoid")])),
                   (10,), True),
}


def _uncompiled(model, xs):
    with array_mode():
        return get_plan(model).run(list(xs), training=False)


def _check(got, want, folded):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.float32
        if folded:  # folding changes rounding only: |error| <= 1e-5 of the output's scale
            scale = max(1.0, float(np.abs(w).max()))
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", sorted(LOWERED))
@pytest.mark.parametrize("batch", [1, 5])
def test_lowered_layers_match_uncompiled_plan(name, batch):
    build, shape, folded = LOWERED[name]
    model = build()
    state = compiled_plan.state_of(model)
    assert state.ops is not None, "the model should lower"
    assert bool(state.folded) == folded
    x = _x(batch, *shape)
    got = compiled_plan.run(model, [x])
    assert got is not None and state.taken == 1
    _check(got, _uncompiled(model, [x]), folded)


def test_folded_conv_bn_against_float64_reference():
    model = LOWERED["conv_nobias_bn_folded"][0]()
    conv, bn = model.layers[1], model.layers[2]
    x = _x(3, 7, 7, 3)
    w = conv.kernel.numpy().astype(np.float64)
    x64 = x.astype(np.float64)
    y = np.zeros((3, 5, 5, 5))
    for r in range(3):
        for s in range(3):
            y += np.einsum("nhwc,ck->nhwk", x64[:, r:r + 5, s:s + 5, :], w[r, s])
    mean, var = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    ref = (y - mean) / np.sqrt(var.astype(np.float64) + bn.epsilon) + bn.beta.numpy()
    got = compiled_plan.run(model, [x])[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_multiple_inputs_and_outputs():
    a, b = L.Input((6,)), L.Input((4, 4, 2))
    h = L.Dense(5, activation="relu")(a)
    c = L.Flatten()(L.Conv2D(3, 2)(b))
    out1 = L.Dense(2)(h)
    model = Model([a, b], [c, out1, h, L.Flatten()(b)])  # h is an output and consumed
    xs = [_x(3, 6), _x(3, 4, 4, 2)]
    got = compiled_plan.run(model, xs)
    assert compiled_plan.state_of(model).taken == 1
    _check(got, _uncompiled(model, xs), False)
    eager = model(xs)
    assert isinstance(eager, list) and len(eager) == 4
    for g, e in zip(got, eager):
        np.testing.assert_array_equal(g, np.asarray(e))


def test_output_sharing_a_buffer_with_another_output():
    inp = L.Input((3, 3, 2))
    h = L.Conv2D(2, 2)(inp)
    model = Model(inp, {"map": h, "flat": L.Flatten()(h), "drop": L.Dropout(0.5)(h)})
    x = _x(2, 3, 3, 2)
    got = compiled_plan.run(model, [x])
    _check(got, _uncompiled(model, [x]), False)
    assert len({id(g) for g in got}) == 3


@pytest.mark.parametrize("name", ["dense_relu", "conv_bn_relu_folded", "sequential"])
def test_eager_call_and_predict_take_the_compiled_path(name):
    build, shape, folded = LOWERED[name]
    model = build()
    x = _x(1, *shape)
    want = _uncompiled(model, [x])
    first = model(x)  # full path: records the signature
    state = compiled_plan.state_of(model)
    taken = state.taken
    second = model(x)
    assert state.taken == taken + 1
    _check([np.asarray(second)], want, folded)
    _check([np.asarray(first)], want, folded)
    xs = _x(23, *shape)
    pred = model.predict(xs, batch_size=8, verbose=0)
    assert state.taken >= taken + 1 + 3  # 8 + 8 + 7 rows
    _check([pred], _uncompiled(model, [xs]), folded)


def test_outputs_do_not_alias_between_calls():
    model = LOWERED["conv_bn_relu_folded"][0]()
    x1, x2 = _x(1, 10, 10, 2), _x(1, 10, 10, 2)
    model(x1)
    y1 = model(x1)
    keep = np.array(y1)
    y2 = model(x2)
    np.testing.assert_array_equal(np.asarray(y1), keep)
    assert not np.shares_memory(np.asarray(y1), np.asarray(y2))


def _rebuilt_matches(model, x, folded=True):
    got = compiled_plan.run(model, [x])
    assert got is not None
    _check(got, _uncompiled(model, [x]), folded)
    return got[0]


@pytest.mark.parametrize("write", ["fit", "set_weights", "load_weights", "assign_bn",
                                   "optimizer_apply"])
def test_new_weights_after_a_cached_call(write, tmp_path):
    model = LOWERED["conv_bn_relu_folded"][0]()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    x = _x(4, 10, 10, 2)
    before = _rebuilt_matches(model, x)
    if write == "fit":
        model.fit(_x(16, 10, 10, 2), RNG.integers(0, 4, 16), batch_size=8, epochs=2, verbose=0)
    elif write == "set_weights":
        model.set_weights([w * 1.5 + 0.1 for w in model.get_weights()])
    elif write == "load_weights":
        other = LOWERED["conv_bn_relu_folded"][0]()
        path = str(tmp_path / "w.weights.h5")
        other.save_weights(path)
        model.load_weights(path)
    elif write == "assign_bn":
        bn = model.layers[2]
        bn.moving_variance.assign(bn.moving_variance.numpy() * 3.0)
    else:
        opt = fkeras.optimizers.SGD(0.5)
        opt.apply([np.ones(v.shape, np.float32) for v in model.trainable_variables],
                  model.trainable_variables)
    after = _rebuilt_matches(model, x)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(np.asarray(model(x)), after, rtol=1e-5, atol=1e-6)


def test_plain_model_sees_in_place_and_rebound_weights():
    model = LOWERED["dense_relu"][0]()
    model.compile(optimizer="sgd", loss="mse")
    x = _x(3, 12)
    _rebuilt_matches(model, x, False)
    model.fit(_x(8, 12), _x(8, 8), epochs=1, verbose=0)  # the optimizer packs (rebinds)
    _rebuilt_matches(model, x, False)
    model.layers[1].kernel.assign(model.layers[1].kernel.numpy() + 1.0)
    _rebuilt_matches(model, x, False)


def _custom_layer_model():
    class Twice(L.Layer):
        def call(self, x):
            return x * 2.0

    inp = L.Input((4,))
    return Model(inp, L.Dense(2)(Twice()(inp)))


def _masked_model():
    inp = L.Input((5, 3))
    return Model(inp, L.Dense(2)(L.Masking()(inp)))


def _bf16_model():
    inp = L.Input((4,))
    return Model(inp, L.Dense(3, dtype="mixed_bfloat16")(inp))


def _sub_model():
    inner = _seq((4,), L.Dense(3))
    inp = L.Input((4,))
    return Model(inp, L.Dense(2)(inner(inp)))


def _unsupported_layer():
    inp = L.Input((4, 4, 2))
    return Model(inp, L.GlobalAveragePooling2D()(L.Conv2D(2, 2)(inp)))


def _training_node():
    inp = L.Input((4,))
    return Model(inp, L.Dense(2)(L.Dropout(0.5)(inp, training=True)))


def _activity_regularizer():
    inp = L.Input((4,))
    return Model(inp, L.Dense(2, activity_regularizer="l2")(inp))


def _merge():
    a, b = L.Input((4,)), L.Input((4,))
    return Model([a, b], L.Dense(2)(L.Add()([a, b])))


def _swish_dense():  # an activation the kernels do not fuse and has no lowering here
    inp = L.Input((4,))
    return Model(inp, L.Dense(2, activation="swish")(inp))


FALLBACKS = {
    "custom_layer": (_custom_layer_model, [(2, 4)]),
    "masks": (_masked_model, [(2, 5, 3)]),
    "mixed_bfloat16": (_bf16_model, [(2, 4)]),
    "sub_model": (_sub_model, [(2, 4)]),
    "unsupported_layer": (_unsupported_layer, [(2, 4, 4, 2)]),
    "training_node": (_training_node, [(2, 4)]),
    "activity_regularizer": (_activity_regularizer, [(2, 4)]),
    "merge_layer": (_merge, [(2, 4), (2, 4)]),
    "swish_dense": (_swish_dense, [(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_fallbacks_keep_the_uncompiled_path(name):
    build, shapes = FALLBACKS[name]
    model = build()
    assert compiled_plan.state_of(model).ops is None
    xs = [_x(*s) for s in shapes]
    assert compiled_plan.run(model, xs) is None
    arg = xs[0] if len(xs) == 1 else xs
    y1 = np.asarray(model(arg))
    y2 = np.asarray(model(arg))
    if name != "training_node":  # dropout in training draws a new mask per call
        np.testing.assert_array_equal(y1, y2)
    assert compiled_plan.state_of(model).taken == 0


@pytest.mark.parametrize("x", [
    _x(3, 12).astype(np.float64),               # another dtype
    np.asfortranarray(_x(3, 12)),               # not C-contiguous
    _x(3, 24)[:, ::2],                          # strided
], ids=["float64", "fortran", "strided"])
def test_inputs_the_plan_does_not_take(x):
    model = LOWERED["dense_relu"][0]()
    assert compiled_plan.run(model, [x]) is None
    want = _uncompiled(model, [np.ascontiguousarray(x, np.float32)])[0]
    np.testing.assert_allclose(np.asarray(model(x)), want, rtol=1e-6)
    assert compiled_plan.state_of(model).taken == 0


def test_wrong_feature_size_falls_back_to_the_full_error():
    model = LOWERED["dense_relu"][0]()
    assert compiled_plan.run(model, [_x(2, 11)]) is None
    with pytest.raises(ValueError):
        model(_x(2, 11))


# ---- the C++ plan's own checks ----

def _dense_plan():
    # slots: x (2x3) input, w (3x4), y (2x4) output
    plan = _C.InferencePlan([6, 12, 8], [2, 1, 3], [False, False, False])
    w = _x(3, 4)
    plan.bind(1, w)
    plan.add_step(0, [2, 0, 1, -1, -1, -1], [2, 4, 3, 1])
    return plan, w


def test_cpp_plan_runs_and_checks_calls():
    plan, w = _dense_plan()
    x, y = _x(2, 3), np.empty((2, 4), np.float32)
    assert plan.run(x, y)
    np.testing.assert_allclose(y, np.maximum(x.astype(np.float64) @ w, 0), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="received"):
        plan.run(_x(2, 4), y)  # wrong element count
    with pytest.raises(ValueError):
        plan.run(x.astype(np.float64), y)
    with pytest.raises(ValueError, match="expects 1 inputs and 1 outputs"):
        plan.run(x)
    with pytest.raises(ValueError, match="overlap"):
        buf = np.empty(8, np.float32)
        plan.run(buf[:6], buf)


@pytest.mark.parametrize("step, match", [
    ((0, [2, 0, 1, -1, -1, -1], [2, 4, 4, 1]), "elements"),        # K disagrees with slots
    ((0, [2, 0, 1, -1, -1, -1], [2, 4, 3, 6]), "activation"),      # gelu not fused
    ((0, [0, 2, 1, -1, -1, -1], [2, 4, 3, 1]), "elements|writes"),  # writes the input
    ((99, [2, 0, 1, -1, -1, -1], []), "unknown step"),
    ((0, [2, 0, 7, -1, -1, -1], [2, 4, 3, 1]), "out of range"),
    ((4, [0, 0, -1, -1, -1, -1], [6, 1]), "writes slot"),           # in place on an input
])
def test_cpp_plan_rejects_bad_steps(step, match):
    plan, _ = _dense_plan()
    with pytest.raises(ValueError, match=match):
        plan.add_step(*step)


def test_cpp_plan_rejects_bad_bindings():
    plan = _C.InferencePlan([4, 4], [0, 0], [False, False])
    buf = np.empty(6, np.float32)
    plan.bind(0, buf[:4])
    with pytest.raises(ValueError, match="overlap"):
        plan.bind(1, buf[2:6])
    with pytest.raises(ValueError, match="bound per call"):
        _C.InferencePlan([4], [2], [False]).bind(0, np.empty(4, np.float32))
    with pytest.raises(ValueError, match="already bound"):
        plan.bind(0, np.empty(4, np.float32))


def test_cpp_plan_reports_a_replaced_variable_buffer():
    model = LOWERED["dense_relu"][0]()
    x = _x(2, 12)
    compiled_plan.run(model, [x])
    state = compiled_plan.state_of(model)
    plan = next(p for p in state.plans.values() if p is not None)[0]
    kernel = model.layers[1].kernel
    out = np.empty((2, 8), np.float32)
    assert plan.run(x, out)
    kernel._value = kernel._value.copy() * 2.0  # what an optimizer's packing does
    assert not plan.run(x, out)
    _rebuilt_matches(model, x, False)  # run() rebuilds the plan


def test_enable_lora_after_a_cached_call_leaves_the_compiled_path():
    model = LOWERED["dense_relu"][0]()
    x = _x(2, 12)
    model(x)
    model(x)
    state = compiled_plan.state_of(model)
    assert state.taken == 1
    dense = model.layers[1]
    dense.enable_lora(2)
    dense.lora_kernel_b.assign(_x(2, 8))  # B starts at zero: make LoRA change the output
    assert compiled_plan.run(model, [x]) is None
    np.testing.assert_array_equal(np.asarray(model(x)), _uncompiled(model, [x])[0])
    assert compiled_plan.state_of(model).taken == 0


def test_bn_after_a_shared_or_activated_output_is_not_folded():
    inp = L.Input((6, 6, 2))
    conv = L.Conv2D(3, 3)(inp)
    bn = L.BatchNormalization()
    model = _randomize_bn(Model(inp, [bn(conv), L.Flatten()(conv)]))  # conv feeds two nodes
    state = compiled_plan.state_of(model)
    assert state.ops is not None and not state.folded
    assert [op.kind for op in state.ops] == ["conv", "bn", "view"]
    x = _x(2, 6, 6, 2)
    _check(compiled_plan.run(model, [x]), _uncompiled(model, [x]), False)



# ---- Conv2D + MaxPooling2D fused into one conv2d_forward_maxpool2d step ----

def _fused_ops(model):
    return [op for op in compiled_plan.state_of(model).ops if op.pool is not None]


def _plan_steps(model, signature):
    return compiled_plan.state_of(model).plans[signature][0].num_steps


# name: (model builder, input shape without batch, folded?, plan steps with the fusion)
CONV_POOL = {
    # conv output 9x8 -> pool 2: the last row dropped
    "relu_pool2_odd_rows": (lambda: _seq((11, 10, 3), L.Conv2D(6, 3, activation="relu"),
                                         L.MaxPooling2D()), (11, 10, 3), False, 1),
    # 'same' stride-2 conv: 7x7 -> pool 3: the last row and column dropped
    "leaky_pool3_same_strided": (lambda: _seq((13, 14, 2), L.Conv2D(
        5, 3, strides=2, padding="same", activation="leaky_relu"), L.MaxPooling2D(3)),
        (13, 14, 2), False, 1),
    "linear_nobias_dilated_rect_pool": (lambda: _seq((12, 13, 2), L.Conv2D(
        4, 3, dilation_rate=2, use_bias=False), L.MaxPooling2D((2, 3))), (12, 13, 2), False, 1),
    "groups_explicit_strides": (lambda: _seq((9, 9, 4), L.Conv2D(
        6, 2, groups=2, activation="relu"), L.MaxPooling2D(2, strides=2, padding="valid")),
        (9, 9, 4), False, 1),
    "relu_layer_between": (lambda: _seq((8, 9, 2), L.Conv2D(4, 3), L.ReLU(),
                                        L.MaxPooling2D()), (8, 9, 2), False, 1),
    # the bench's CNN (direct conv path: C=32, K=64)
    "cnn": (lambda: _seq((28, 28, 1), L.Conv2D(32, 3, activation="relu"),
                         L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(), L.Flatten(),
                         L.Dense(16, activation="relu"), L.Dense(10, activation="softmax")),
            (28, 28, 1), False, 5),  # the softmax: its own step
    # Conv2D(linear) -> BN (folded) -> ReLU (fused) -> MaxPooling2D: one step
    "cnnbn": (lambda: _seq((15, 15, 3), L.Conv2D(32, 3), L.BatchNormalization(),
                           L.Activation("relu"), L.MaxPooling2D(), L.Flatten(),
                           L.Dense(5)), (15, 15, 3), True, 2),
}


@pytest.mark.parametrize("name", sorted(CONV_POOL))
@pytest.mark.parametrize("batch", [1, 5])
def test_conv_maxpool_fused_step(name, batch):
    build, shape, folded, steps = CONV_POOL[name]
    model = build()
    fused = _fused_ops(model)
    assert len(fused) == 1 and fused[0].kind == "conv"
    assert not any(op.kind == "maxpool" for op in compiled_plan.state_of(model).ops)
    assert type(fused[0].pool) is L.MaxPooling2D
    x = _x(batch, *shape)
    got = compiled_plan.run(model, [x])
    assert got is not None and compiled_plan.state_of(model).taken == 1
    assert _plan_steps(model, (x.shape,)) == steps
    # The fused kernel's values are conv2d_forward's then maxpool2d_forward's: bit for bit.
    _check(got, _uncompiled(model, [x]), folded)


@pytest.mark.parametrize("isa", [i for i in ("scalar", "avx2", "avx512")
                                 if _C.isa_supported(i)])
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_maxpool_fused_threads_isas_and_nan(threads, isa):
    # scalar: the kernel's temporary + pooling path; avx2/avx512: the direct path's pooling
    before, before_isa = _C.num_threads(), _C.cpu_isa()
    _C.set_num_threads(threads)
    _C.set_cpu_isa(isa)
    try:
        model = CONV_POOL["cnn"][0]()
        x = _x(3, 28, 28, 1)
        x[1, 7, 9, 0] = np.nan  # reaches the windows it touches, as in the uncompiled plan
        got = compiled_plan.run(model, [x])
        want = _uncompiled(model, [x])
        np.testing.assert_array_equal(got[0], want[0])
        assert np.isnan(got[0][1]).all() and not np.isnan(got[0][[0, 2]]).any()
    finally:
        _C.set_num_threads(before)
        _C.set_cpu_isa(before_isa)


def test_conv_maxpool_fused_against_numpy():
    model = CONV_POOL["leaky_pool3_same_strided"][0]()
    conv = model.layers[1]
    x = _x(2, 13, 14, 2)
    w, b = conv.kernel.numpy().astype(np.float64), conv.bias.numpy().astype(np.float64)
    # 'same', stride 2, 3x3 -> 7x7: rows padded 1 above and below, columns 1 on the right
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (0, 1), (0, 0)))
    z = sum(np.einsum("nhwc,ck->nhwk", xp[:, r:r + 13:2, s:s + 13:2], w[r, s])
            for r in range(3) for s in range(3)) + b
    z = np.where(z > 0, z, 0.2 * z)  # leaky_relu's default negative slope
    want = z[:, :6, :6].reshape(2, 2, 3, 2, 3, 5).max(axis=(2, 4))
    got = compiled_plan.run(model, [x])[0]
    assert got.shape == (2, 2, 2, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _conv_used_twice():
    inp = L.Input((8, 8, 2))
    h = L.Conv2D(3, 3, activation="relu")(inp)
    return Model(inp, [L.MaxPooling2D()(h), L.Flatten()(h)])


def _conv_is_output():
    inp = L.Input((8, 8, 2))
    h = L.Conv2D(3, 3, activation="relu")(inp)
    return Model(inp, [h, L.MaxPooling2D()(h)])


# name: (model builder, input shape without batch): lowered, but not fused
CONV_POOL_NOT_FUSED = {
    "overlapping_pool": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                      L.MaxPooling2D(3, strides=2)), (9, 9, 2)),
    "strides_not_pool": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                      L.MaxPooling2D(2, strides=3)), (9, 9, 2)),
    "same_pool_padding": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                       L.MaxPooling2D(2, padding="same")), (9, 9, 2)),
    "average_pool": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                  L.AveragePooling2D()), (9, 9, 2)),
    "activation_not_fused": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="tanh"),
                                          L.MaxPooling2D()), (9, 9, 2)),
    "bn_after_relu_conv": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                        L.BatchNormalization(), L.MaxPooling2D()), (9, 9, 2)),
    "dropout_between": (lambda: _seq((9, 9, 2), L.Conv2D(3, 3, activation="relu"),
                                     L.Dropout(0.2), L.MaxPooling2D()), (9, 9, 2)),
    "conv_used_twice": (_conv_used_twice, (8, 8, 2)),
    "conv_is_output": (_conv_is_output, (8, 8, 2)),
}


@pytest.mark.parametrize("name", sorted(CONV_POOL_NOT_FUSED))
def test_conv_maxpool_not_fused(name):
    build, shape = CONV_POOL_NOT_FUSED[name]
    model = build()
    state = compiled_plan.state_of(model)
    assert state.ops is not None and not _fused_ops(model)
    assert any(op.kind in ("maxpool", "avgpool") for op in state.ops)
    x = _x(3, *shape)
    got = compiled_plan.run(model, [x])
    assert got is not None and state.taken == 1
    _check(got, _uncompiled(model, [x]), False)


def test_conv_maxpool_pool_larger_than_conv_output_falls_back():
    model = _seq((4, 4, 1), L.Conv2D(2, 3), L.MaxPooling2D(2))  # conv 2x2, pool 2: 1x1
    x = _x(2, 4, 4, 1)
    _check(compiled_plan.run(model, [x]), _uncompiled(model, [x]), False)
    model = _seq((None, None, 1), L.Conv2D(2, 3), L.MaxPooling2D(2))
    assert compiled_plan.run(model, [_x(2, 3, 5, 1)]) is None  # conv 1x3: no whole window


def _conv_pool_plan():
    # slots: x (1, 6, 6, 2) input, w (3, 3, 2, 4), y (1, 2, 2, 4) output
    plan = _C.InferencePlan([72, 72, 16], [2, 1, 3], [False, False, False])
    w = _x(3, 3, 2, 4)
    plan.bind(1, w)
    return plan, w


_CONV_POOL_PARAMS = [1, 6, 6, 2, 4, 3, 3, 4, 4, 1, 1, 1, 1, 0, 0, 1, 1]


def test_cpp_conv_maxpool_step_runs():
    plan, w = _conv_pool_plan()
    plan.add_step(8, [2, 0, 1, -1, -1, -1], _CONV_POOL_PARAMS + [2, 2])
    x, y = _x(1, 6, 6, 2), np.empty((1, 2, 2, 4), np.float32)
    assert plan.run(x, y)
    z = sum(np.einsum("nhwc,ck->nhwk", x[:, r:r + 4, s:s + 4].astype(np.float64), w[r, s])
            for r in range(3) for s in range(3))
    want = np.maximum(z, 0).reshape(1, 2, 2, 2, 2, 4).max(axis=(2, 4))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("params, match", [
    (_CONV_POOL_PARAMS, "takes 19 parameters"),
    (_CONV_POOL_PARAMS + [0, 2], "pool sizes must be >= 1"),
    (_CONV_POOL_PARAMS + [2, 1], "elements"),               # y would be (1, 2, 4, 4)
    (_CONV_POOL_PARAMS[:16] + [6] + [2, 2], "activation"),  # gelu is not fused
])
def test_cpp_conv_maxpool_step_rejects(params, match):
    plan, _ = _conv_pool_plan()
    with pytest.raises(ValueError, match=match):
        plan.add_step(8, [2, 0, 1, -1, -1, -1], params)
