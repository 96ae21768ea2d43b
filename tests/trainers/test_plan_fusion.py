"""BatchNormalization + ReLU fusion in the forward plan (trainers/plan_fusion.py): the fused
path is taken where it applies (spies on the fused kernels), gives the unfused pair's results
(fit, predict, eager calls, frozen BN, gradients), and is left alone where it does not apply."""

import numpy as np
import pytest

import fkeras as keras
from fkeras import layers as L
from fkeras.backend import devices
from fkeras.models import compiled_plan
from fkeras.ops import normalization as N
from fkeras.ops.registry import REGISTRY
from fkeras.trainers import forward_plan, plan_fusion
from fusion_testing import kernel_spy

FUSED = ("batchnorm_relu_forward_train", "batchnorm_relu_forward_infer",
         "batchnorm_relu_backward")


@pytest.fixture
def spy(monkeypatch):
    """{kernel name: calls} of the fused kernels on the cpu device (and on its bf16-products
    twin, which mixed_bfloat16 layers run on)."""
    return kernel_spy(monkeypatch, FUSED)


@pytest.fixture
def unfused(monkeypatch):
    """Within the test: plans built with the fusion switched off."""
    def switch(off=True):
        if off:
            monkeypatch.setattr(plan_fusion, "fuse_bn_relu", lambda plan, model: 0)
        else:
            monkeypatch.undo()
    return switch


def cnn_bn(relu="activation", axis=-1, shape=(10, 10, 3), **bn):
    act = L.Activation("relu") if relu == "activation" else L.ReLU()
    keras.utils.set_random_seed(3)
    return keras.Sequential([
        keras.Input(shape), L.Conv2D(6, 3, data_format="channels_last" if axis == -1 else
                                     "channels_first"),
        L.BatchNormalization(axis=axis, **bn), act,
        L.Flatten(), L.Dense(8), L.BatchNormalization(), L.Activation("relu"),
        L.Dense(4, activation="softmax")])


def _data(shape=(10, 10, 3), n=48):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, *shape)).astype(np.float32) * 1.5 + 0.3,
            rng.integers(0, 4, n))


def _fit(model, x, y, epochs=3):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False)
    return model


def _assert_weights_close(a, b, atol=1e-5):
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=0, atol=atol)


@pytest.mark.parametrize("relu", ["activation", "relu_layer"])
@pytest.mark.parametrize("axis", [-1, 1])
def test_fit_fused_equals_unfused(spy, unfused, relu, axis):
    shape = (10, 10, 3) if axis == -1 else (3, 10, 10)
    x, y = _data(shape)
    fused = _fit(cnn_bn(relu, axis, shape), x, y)
    state = fused.__dict__["_fk_step_state"]
    assert state._train_plan.fused_bn_relu == 2  # after the Conv2D and after the Dense
    assert spy["batchnorm_relu_forward_train"] == 2 * 3 * 3  # 2 pairs, 3 steps, 3 epochs
    assert spy["batchnorm_relu_backward"] == 2 * 3 * 3
    unfused()
    plain = _fit(cnn_bn(relu, axis, shape), x, y)
    assert plain.__dict__["_fk_step_state"]._train_plan.fused_bn_relu == 0
    _assert_weights_close(fused, plain)  # moving statistics included
    np.testing.assert_allclose(fused.predict(x, verbose=0), plain.predict(x, verbose=0),
                               atol=1e-6)


def test_inference_paths_run_the_fused_op(spy, unfused, monkeypatch):
    # predict and the eager fast path run a compiled plan where the model lowers to one (BN
    # folded into the Conv2D/Dense, models/compiled_plan.py); without it they run the fused op.
    x, _ = _data()
    compiled = cnn_bn().predict(x, verbose=0)
    monkeypatch.setattr(compiled_plan, "run", lambda model, xs: None)
    model = cnn_bn()
    want = np.asarray(L.Activation("relu")(model.layers[1](model.layers[0](x))))
    got_predict = model.predict(x, verbose=0)
    assert spy["batchnorm_relu_forward_infer"] > 0
    calls = spy["batchnorm_relu_forward_infer"]
    model(x)  # the first call of a signature takes the full path
    calls = spy["batchnorm_relu_forward_infer"]
    got_call = np.asarray(model(x))  # later ones the eager fast path: the same plan
    assert spy["batchnorm_relu_forward_infer"] == calls + 2
    unfused()
    plain = cnn_bn()
    np.testing.assert_allclose(got_predict, plain.predict(x, verbose=0), atol=1e-6)
    np.testing.assert_allclose(got_predict, compiled, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_call, np.asarray(plain(x)), atol=1e-6)
    # the first pair, unfused by hand
    feats = keras.Model(model.inputs, model.layers[2].output)
    np.testing.assert_allclose(np.asarray(feats(x)), want, atol=1e-6)


def test_frozen_batch_norm_trains_the_rest_identically(unfused):
    # trainable=False: BN normalizes with its moving statistics even in training; the fused
    # inference op's backward (ReLU mask from y, then BN's) feeds the Conv2D's gradients.
    x, y = _data()

    def build():
        model = cnn_bn()
        model.layers[1].trainable = False
        return _fit(model, x, y, epochs=2)

    fused = build()
    unfused()
    _assert_weights_close(fused, build())


@pytest.mark.parametrize("case", ["model_output", "two_consumers", "relu6", "leaky",
                                  "activity_regularizer", "renorm", "fused_false",
                                  "bn_subclass"])
def test_not_fused_or_fallback_where_it_does_not_apply(spy, unfused, case):
    x, y = _data()

    class MyBN(L.BatchNormalization):
        pass

    def build():
        keras.utils.set_random_seed(5)
        inp = keras.Input((10, 10, 3))
        h = L.Conv2D(4, 3)(inp)
        bn = {"renorm": dict(renorm=True), "fused_false": dict(fused=False)}.get(case, {})
        b = (MyBN() if case == "bn_subclass" else L.BatchNormalization(**bn))(h)
        act = {"relu6": L.ReLU(max_value=6.0), "leaky": L.ReLU(negative_slope=0.1),
               "activity_regularizer": L.Activation("relu", activity_regularizer="l2")}.get(
                   case, L.Activation("relu"))
        r = act(b)
        out = L.Dense(4, activation="softmax")(L.Flatten()(r))
        if case == "model_output":
            return keras.Model(inp, [out, b])
        if case == "two_consumers":
            out = L.Dense(4, activation="softmax")(L.Flatten()(L.Add()([r, b])))
        return keras.Model(inp, out)

    def fit(model):
        if case == "model_output":
            model.compile(optimizer="adam", loss=["sparse_categorical_crossentropy", None])
            model.fit(x, (y, np.zeros((len(x), 8, 8, 4), np.float32)), batch_size=16,
                      epochs=2, verbose=0, shuffle=False)
            return model
        return _fit(model, x, y, epochs=2)

    got = fit(build())
    fused_pairs = got.__dict__["_fk_step_state"]._train_plan.fused_bn_relu
    if case in ("renorm", "fused_false"):
        assert fused_pairs == 1  # fused in the plan, the unfused pair at run time
    else:
        assert fused_pairs == 0
    assert spy["batchnorm_relu_forward_train"] == 0
    unfused()
    _assert_weights_close(got, fit(build()))


def test_remat_layers_are_not_fused(unfused):
    x, y = _data()

    def build():
        with keras.RematScope(mode="full"):
            return _fit(cnn_bn(), x, y, epochs=1)

    got = build()
    assert got.__dict__["_fk_step_state"]._train_plan.fused_bn_relu == 0
    unfused()
    _assert_weights_close(got, build())


def test_masked_graph_is_not_fused():
    inp = keras.Input((5,), dtype="int64")
    h = L.Embedding(10, 4, mask_zero=True)(inp)
    h = L.Activation("relu")(L.BatchNormalization()(L.Dense(6)(h)))
    model = keras.Model(inp, L.GlobalAveragePooling1D()(h))
    assert forward_plan.get_plan(model).fused_bn_relu == 0


def test_custom_train_step_with_gradient_tape():
    # A custom step calls model(x, training=True) under a GradientTape (no plan): unfused, and
    # it trains like the built-in step, which fuses.
    x, y = _data()

    class Custom(keras.Model):
        def train_step(self, data):
            xb, yb = data
            with keras.GradientTape() as tape:
                pred = self(xb, training=True)
                loss = self.compute_loss(xb, yb, pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

    base = cnn_bn()
    custom = Custom(base.inputs, base.outputs)
    custom.compile(optimizer=keras.optimizers.SGD(0.05),
                   loss="sparse_categorical_crossentropy")
    custom.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    builtin = cnn_bn()
    builtin.compile(optimizer=keras.optimizers.SGD(0.05),
                    loss="sparse_categorical_crossentropy")
    builtin.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    assert builtin.__dict__["_fk_step_state"]._train_plan.fused_bn_relu == 2
    # The custom step's loss clips probabilities (no logits): close, not equal.
    _assert_weights_close(custom, builtin, atol=1e-4)


def test_mixed_bfloat16_fit_fuses_and_equals_unfused(spy, unfused):
    # The direct calls run in the bf16-products scope; BN + ReLU has no products to change.
    x, y = _data()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        fused = _fit(cnn_bn(), x, y, epochs=1)
        assert fused.__dict__["_fk_step_state"]._train_plan.fused_bn_relu == 2
        assert spy["batchnorm_relu_backward"] == 2 * 3
        unfused()
        plain = _fit(cnn_bn(), x, y, epochs=1)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    _assert_weights_close(fused, plain)


# ---- the ops: gradients and the fallback of a device without the fused kernels -------------

@pytest.mark.parametrize("axis", [-1, 1, (1, 3)])
def test_op_gradients_equal_the_pair(axis):
    rng = np.random.default_rng(1)
    x = keras.Variable(rng.standard_normal((6, 5, 4, 7)).astype(np.float32))
    kept = (7,) if axis == -1 else (5,) if axis == 1 else (5, 7)
    gamma = keras.Variable((rng.random(kept) + 0.5).astype(np.float32))
    beta = keras.Variable(rng.standard_normal(kept).astype(np.float32))
    cot = rng.standard_normal((6, 5, 4, 7)).astype(np.float32)

    def grads(fn):
        with keras.GradientTape() as tape:
            y = fn()
            loss = keras.ops.sum(y * cot)
        return [np.asarray(y)] + [np.asarray(g) for g in tape.gradient(loss, [x, gamma, beta])]

    fused = grads(lambda: N.batch_norm_relu_train(x, gamma, beta, axis=axis)[0])
    pair = grads(lambda: keras.ops.relu(N.batch_norm_train(x, gamma, beta, axis=axis)[0]))
    for a, b in zip(fused, pair):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_ops_fall_back_to_the_pair_without_the_fused_kernels():
    cpu = devices.get_device("cpu")
    bare = devices.Device("cpu", np.float32,
                          {k: v for k, v in cpu.kernels.items() if k not in FUSED},
                          cpu.native_kernel_names)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 3, 5)).astype(np.float32)
    gamma = (rng.random(5) + 0.5).astype(np.float32)
    beta = rng.standard_normal(5).astype(np.float32)
    attrs = dict(axis=(-1,), epsilon=1e-3)
    op = REGISTRY["batch_norm_relu_train"]
    cot = [rng.standard_normal(x.shape).astype(np.float32), np.zeros(5, np.float32),
           np.zeros(5, np.float32)]
    results = []
    for dev in (cpu, bare):
        outs, saved = op.forward(dev, x, gamma, beta, **attrs)
        assert saved[0] == ("fused" if dev is cpu else "pair")
        results.append([*outs, *op.backward(dev, saved, cot, (True, True, True), **attrs)])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)

    infer = REGISTRY["batch_norm_relu_infer"]
    mean, var = rng.standard_normal(5).astype(np.float32), (rng.random(5) + 0.5).astype(
        np.float32)
    results = []
    for dev in (cpu, bare):
        y, saved = infer.forward(dev, x, mean, var, beta, gamma, **attrs)
        results.append([y, *infer.backward(dev, saved, cot[0], (True,) * 5, **attrs)])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
