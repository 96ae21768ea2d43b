"""BatchNormalization + ReLU + MaxPooling2D fusion in the forward plan (trainers/plan_fusion.py
fuse_bn_relu_pool): the fused op is taken where it applies (spies on its kernels), fit gives
bit-identical weights and moving statistics to the unfused chain (FKERAS_FUSE_BN_POOL=0), fp32
and mixed_bfloat16, inference paths are unchanged, and every ineligible chain runs unfused (the
BN + ReLU pair still fused where it applies)."""

import numpy as np
import pytest

import fkeras as keras
from fkeras import layers as L
from fkeras.trainers import forward_plan
from fusion_testing import assert_weights_equal, fit, fit_both, kernel_spy, train_plan

KERNELS = ("batchnorm_relu_maxpool_forward_train", "batchnorm_relu_maxpool_backward")


@pytest.fixture
def spy(monkeypatch):
    """{kernel name: calls} of the fused kernels on the cpu device and its bf16 twin."""
    return kernel_spy(monkeypatch, KERNELS)


def _data(shape=(13, 13, 3), n=48):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, *shape)).astype(np.float32) * 2.0 + 0.5,
            rng.integers(0, 4, n))


def cnn_bn(bn=None, pool=None, relu=None, shape=(13, 13, 3)):
    """Conv2D -> BN -> ReLU -> MaxPooling2D -> Dense, as the benchmark's CNN+BN block."""
    keras.utils.set_random_seed(3)
    return keras.Sequential([
        keras.Input(shape), L.Conv2D(8, 3), L.BatchNormalization(**(bn or {})),
        relu or L.Activation("relu"), L.MaxPooling2D(**(pool or {})), L.Flatten(),
        L.Dense(4, activation="softmax")])


_fit, _plan = fit, train_plan


def _fit_both(build, x, y, monkeypatch, epochs=2):
    """(fused model, unfused model) after the same fit; the unfused one with the switch off."""
    fused, plain = fit_both(build, x, y, monkeypatch, "FKERAS_FUSE_BN_POOL", epochs)
    assert _plan(plain).fused_bn_relu_pool == 0
    return fused, plain


def _assert_weights_equal(a, b):
    # get_weights holds gamma, beta and the moving mean and variance of every BN.
    names = [w.path for w in a.weights]
    assert any("moving_mean" in n for n in names) and any("moving_variance" in n for n in names)
    assert_weights_equal(a, b)


@pytest.mark.parametrize("bn,pool,relu,shape", [
    ({}, {}, None, (13, 13, 3)),                                 # odd: last row/column dropped
    ({}, {}, L.ReLU(), (12, 12, 3)),
    ({"center": False, "scale": False}, {"pool_size": 3}, None, (13, 14, 3)),
    ({"momentum": 0.5, "epsilon": 1e-2}, {"pool_size": (2, 3)}, None, (11, 13, 3)),
    ({"axis": 3}, {"pool_size": 2, "strides": 2}, None, (9, 9, 3)),
], ids=["relu", "ReLU_layer", "no_affine_pool3", "momentum_pool2x3", "axis3"])
def test_fit_fused_equals_unfused(spy, monkeypatch, bn, pool, relu, shape):
    x, y = _data(shape)
    fused, plain = _fit_both(lambda: cnn_bn(bn, pool, relu, shape), x, y, monkeypatch)
    plan = _plan(fused)
    assert plan.fused_bn_relu_pool == 1 and plan.fused_bn_relu == 0
    assert _plan(plain).fused_bn_relu == 1  # the switch leaves the BN + ReLU pair fused
    assert spy["batchnorm_relu_maxpool_backward"] == 2 * 3  # 2 epochs x 3 steps
    assert spy["batchnorm_relu_maxpool_forward_train"] == 2 * 3
    _assert_weights_equal(fused, plain)
    np.testing.assert_array_equal(fused.predict(x, verbose=0), plain.predict(x, verbose=0))


def test_benchmark_model_fuses_the_second_block(spy, monkeypatch):
    # bench's CNN+BN: Conv -> BN -> ReLU -> Conv -> BN -> ReLU -> MaxPool: the first BN + ReLU
    # stays a pair, the second BN + ReLU + pool is one op.
    x, y = _data((14, 14, 1))

    def build():
        keras.utils.set_random_seed(11)
        return keras.Sequential([
            keras.Input((14, 14, 1)), L.Conv2D(8, 3), L.BatchNormalization(),
            L.Activation("relu"), L.Conv2D(16, 3), L.BatchNormalization(), L.Activation("relu"),
            L.MaxPooling2D(), L.Flatten(), L.Dense(16, activation="relu"),
            L.Dense(4, activation="softmax")])

    fused, plain = _fit_both(build, x, y, monkeypatch)
    plan = _plan(fused)
    assert plan.fused_bn_relu_pool == 1 and plan.fused_bn_relu == 1
    assert spy["batchnorm_relu_maxpool_backward"] == 2 * 3
    _assert_weights_equal(fused, plain)


def test_mixed_bfloat16_fit_fuses_and_equals_unfused(spy, monkeypatch):
    # Under mixed_bfloat16 BN computes in float32 (its input is the conv's float32 output,
    # bf16 being only the products' format): the same op and bits as the chain.
    x, y = _data()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        fused, plain = _fit_both(cnn_bn, x, y, monkeypatch)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert _plan(fused).fused_bn_relu_pool == 1
    assert spy["batchnorm_relu_maxpool_backward"] == 2 * 3
    _assert_weights_equal(fused, plain)


def test_inference_paths_unchanged(spy, monkeypatch):
    # training=False through the plan (eager model(x), evaluate), predict and a frozen BN: the
    # unfused model's outputs, bit for bit, and no fused kernel runs.
    x, y = _data()
    model = _fit(cnn_bn(), x, y, 1)
    calls = dict(spy)
    monkeypatch.setenv("FKERAS_FUSE_BN_POOL", "0")
    plain = _fit(cnn_bn(), x, y, 1)
    assert forward_plan.get_plan(plain).fused_bn_relu_pool == 0
    monkeypatch.delenv("FKERAS_FUSE_BN_POOL")
    np.testing.assert_array_equal(model.predict(x, verbose=0), plain.predict(x, verbose=0))
    np.testing.assert_array_equal(np.asarray(model(x)), np.asarray(plain(x)))
    np.testing.assert_array_equal(np.asarray(model(x, training=False)),
                                  np.asarray(plain(x, training=False)))
    assert model.evaluate(x, y, verbose=0) == plain.evaluate(x, y, verbose=0)
    assert spy == calls
    for m in (model, plain):  # a frozen BN: inference statistics inside fit
        m.layers[1].trainable = False
        _fit(m, x, y, 1)
    assert spy == calls
    _assert_weights_equal(model, plain)


@pytest.mark.parametrize("case", ["overlapping_pool", "same_pool", "bn_output_used_twice",
                                  "relu_output_used_twice", "channels_first", "relu6",
                                  "relu_is_output", "bn_subclass", "activity_regularizer",
                                  "average_pool", "virtual_batch"])
def test_not_fused_where_it_does_not_apply(spy, monkeypatch, case):
    x, y = _data()

    class MyBN(L.BatchNormalization):
        pass

    def build():
        keras.utils.set_random_seed(5)
        fmt = "channels_first" if case == "channels_first" else "channels_last"
        inp = keras.Input((13, 13, 3))
        h = L.Conv2D(8, 3, data_format=fmt)(L.Permute((3, 1, 2))(inp)
                                           if fmt == "channels_first" else inp)
        bn_cls = MyBN if case == "bn_subclass" else L.BatchNormalization
        kw = {"activity_regularizer": "l2"} if case == "activity_regularizer" else {}
        if case == "virtual_batch":
            kw["virtual_batch_size"] = 8
        b = bn_cls(axis=1 if fmt == "channels_first" else -1, **kw)(h)
        r = (L.ReLU(max_value=6.0) if case == "relu6" else L.Activation("relu"))(b)
        pool = {"overlapping_pool": dict(pool_size=3, strides=2),
                "same_pool": dict(padding="same")}.get(case, {})
        pool_cls = L.AveragePooling2D if case == "average_pool" else L.MaxPooling2D
        p = pool_cls(data_format=fmt, **pool)(r)
        out = L.Dense(4, activation="softmax")(L.Flatten()(p))
        extra = {"bn_output_used_twice": b, "relu_output_used_twice": r}.get(case)
        if extra is not None:
            out = L.Add()([out, L.Dense(4, activation="softmax")(L.Flatten()(extra))])
        if case == "relu_is_output":
            return keras.Model(inp, [out, r])
        return keras.Model(inp, out)

    def fit(model):
        if case == "relu_is_output":
            model.compile(optimizer="adam", loss=["sparse_categorical_crossentropy", None])
            model.fit(x, (y, np.zeros((len(x), 11, 11, 8), np.float32)), batch_size=16,
                      epochs=1, verbose=0, shuffle=False)
            return model
        return _fit(model, x, y, 1)

    got = fit(build())
    if case != "virtual_batch":  # ghost batches: fused in the plan, unfused at run time
        assert _plan(got).fused_bn_relu_pool == 0
    assert spy["batchnorm_relu_maxpool_backward"] == 0
    assert spy["batchnorm_relu_maxpool_forward_train"] == 0
    monkeypatch.setenv("FKERAS_FUSE_BN_POOL", "0")
    _assert_weights_equal(got, fit(build()))
