"""Conv2D + MaxPooling2D fusion in the forward plan (trainers/plan_fusion.py fuse_conv_pool):
the fused op is taken where it applies (spies on its kernels), fit gives bit-identical weights
to the unfused pair (FKERAS_FUSE_CONV_POOL=0), fp32 and mixed_bfloat16, inference paths are
unchanged, and every ineligible pair runs unfused."""

import numpy as np
import pytest

import fkeras as keras
from fkeras import layers as L
from fkeras.trainers import forward_plan
from fusion_testing import assert_weights_equal, fit, fit_both, kernel_spy, train_plan

KERNELS = ("conv2d_forward_maxpool2d", "conv2d_maxpool2d_backward")


@pytest.fixture
def spy(monkeypatch):
    """{kernel name: calls} of the fused kernels on the cpu device and its bf16 twin."""
    return kernel_spy(monkeypatch, KERNELS)


def _data(shape=(13, 13, 3), n=48):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, *shape)).astype(np.float32),
            rng.integers(0, 4, n))


def cnn(act="relu", conv=None, pool=None, shape=(13, 13, 3)):
    keras.utils.set_random_seed(3)
    return keras.Sequential([
        keras.Input(shape), L.Conv2D(8, 3, activation="relu"),
        L.Conv2D(16, 3, activation=act, **(conv or {})), L.MaxPooling2D(**(pool or {})),
        L.Flatten(), L.Dense(4, activation="softmax")])


_fit, _assert_weights_equal = fit, assert_weights_equal


def _pairs(model):
    return train_plan(model).fused_conv_pool


def _fit_both(build, x, y, monkeypatch, epochs=2):
    """(fused model, unfused model) after the same fit; the unfused one with the switch off."""
    fused, plain = fit_both(build, x, y, monkeypatch, "FKERAS_FUSE_CONV_POOL", epochs)
    assert _pairs(plain) == 0
    return fused, plain


@pytest.mark.parametrize("act,conv,pool,shape", [
    ("relu", {}, {}, (13, 13, 3)),                                    # odd: last row dropped
    ("linear", {}, {}, (12, 12, 3)),
    ("leaky_relu", {}, {"pool_size": 3}, (13, 14, 3)),
    ("relu", {"strides": 2, "padding": "same"}, {}, (15, 15, 3)),
    ("relu", {"dilation_rate": 2, "padding": "same"}, {"pool_size": (2, 3)}, (11, 13, 3)),
    ("relu", {"use_bias": False}, {"pool_size": 2, "strides": 2}, (13, 13, 3)),
    ("relu", {}, {"padding": "same"}, (14, 14, 3)),  # 'same' windows tile 12 x 12 exactly
], ids=["relu", "linear", "leaky_pool3", "strided_same", "dilated_pool2x3", "no_bias",
        "same_pool_tiles"])
def test_fit_fused_equals_unfused(spy, monkeypatch, act, conv, pool, shape):
    x, y = _data(shape)
    fused, plain = _fit_both(lambda: cnn(act, conv, pool, shape), x, y, monkeypatch)
    assert _pairs(fused) == 1
    assert spy["conv2d_maxpool2d_backward"] == 2 * 3  # 2 epochs x 3 steps
    assert spy["conv2d_forward_maxpool2d"] >= 2 * 3
    _assert_weights_equal(fused, plain)
    np.testing.assert_array_equal(fused.predict(x, verbose=0), plain.predict(x, verbose=0))


def test_mixed_bfloat16_fit_fuses_and_equals_unfused(spy, monkeypatch):
    # The fused forward runs on the bf16 device (bf16 products, the same direct or GEMM path as
    # the unfused conv2d_forward): bit-identical weights.
    x, y = _data()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        fused, plain = _fit_both(cnn, x, y, monkeypatch)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert _pairs(fused) == 1 and spy["conv2d_maxpool2d_backward"] == 2 * 3
    _assert_weights_equal(fused, plain)


def test_inference_paths_unchanged(monkeypatch):
    # training=False through the plan (eager model(x), evaluate) and predict: the unfused
    # model's outputs, bit for bit.
    x, y = _data()
    model = _fit(cnn(), x, y, 1)
    monkeypatch.setenv("FKERAS_FUSE_CONV_POOL", "0")
    plain = _fit(cnn(), x, y, 1)
    assert forward_plan.get_plan(plain).fused_conv_pool == 0
    monkeypatch.delenv("FKERAS_FUSE_CONV_POOL")
    np.testing.assert_array_equal(model.predict(x, verbose=0), plain.predict(x, verbose=0))
    np.testing.assert_array_equal(np.asarray(model(x)), np.asarray(plain(x)))
    np.testing.assert_array_equal(np.asarray(model(x, training=False)),
                                  np.asarray(plain(x, training=False)))
    assert model.evaluate(x, y, verbose=0) == plain.evaluate(x, y, verbose=0)


@pytest.mark.parametrize("case", ["overlapping_pool", "same_pool", "two_consumers",
                                  "channels_first", "tanh", "model_output", "conv_subclass",
                                  "activity_regularizer", "average_pool"])
def test_not_fused_where_it_does_not_apply(spy, monkeypatch, case):
    x, y = _data()

    class MyConv(L.Conv2D):
        pass

    def build():
        keras.utils.set_random_seed(5)
        fmt = "channels_first" if case == "channels_first" else "channels_last"
        inp = keras.Input((13, 13, 3))
        h = L.Conv2D(8, 3, activation="relu")(inp)
        if fmt == "channels_first":
            h = L.Permute((3, 1, 2))(h)
        conv_cls = MyConv if case == "conv_subclass" else L.Conv2D
        kw = {"activity_regularizer": "l2"} if case == "activity_regularizer" else {}
        c = conv_cls(16, 3, activation="tanh" if case == "tanh" else "relu", data_format=fmt,
                     **kw)(h)
        pool = {"overlapping_pool": dict(pool_size=3, strides=2),
                "same_pool": dict(padding="same")}.get(case, {})
        pool_cls = L.AveragePooling2D if case == "average_pool" else L.MaxPooling2D
        p = pool_cls(data_format=fmt, **pool)(c)
        out = L.Dense(4, activation="softmax")(L.Flatten()(p))
        if case == "model_output":
            return keras.Model(inp, [out, c])
        if case == "two_consumers":
            out = L.Add()([out, L.Dense(4, activation="softmax")(L.Flatten()(c))])
        return keras.Model(inp, out)

    def fit(model):
        if case == "model_output":
            model.compile(optimizer="adam", loss=["sparse_categorical_crossentropy", None])
            model.fit(x, (y, np.zeros((len(x), 9, 9, 16), np.float32)), batch_size=16,
                      epochs=1, verbose=0, shuffle=False)
            return model
        return _fit(model, x, y, 1)

    got = fit(build())
    assert _pairs(got) == 0
    assert spy["conv2d_maxpool2d_backward"] == 0
    monkeypatch.setenv("FKERAS_FUSE_CONV_POOL", "0")
    _assert_weights_equal(got, fit(build()))


def test_fused_with_batch_norm_relu_in_the_same_plan(monkeypatch):
    # Both rewrites in one plan: fuse_conv_pool matches steps by their outputs after
    # fuse_bn_relu removed the ReLU steps.
    x, y = _data()

    def build():
        keras.utils.set_random_seed(7)
        return keras.Sequential([
            keras.Input((13, 13, 3)), L.Conv2D(8, 3), L.BatchNormalization(),
            L.Activation("relu"), L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(),
            L.Flatten(), L.Dense(4, activation="softmax")])

    fused, plain = _fit_both(build, x, y, monkeypatch)
    plan = fused.__dict__["_fk_step_state"]._train_plan
    assert plan.fused_bn_relu == 1 and plan.fused_conv_pool == 1
    _assert_weights_equal(fused, plain)
