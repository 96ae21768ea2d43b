"""Keras 3's "mixed_bfloat16" dtype policy: float32 variables, the layers' products from
bfloat16-rounded operands with float32 accumulation (on CPUs with AVX512_BF16; exact float32
elsewhere), forward and backward; policy attributes, configs and files as Keras 3."""

import numpy as np
import pytest

import fkeras
from fkeras import _native, layers, ops
from fkeras.ops.dtypes import round_to_bfloat16

NATIVE = bool(getattr(_native._C, "gemm_bf16_native", lambda: False)())
needs_bf16 = pytest.mark.skipif(not NATIVE, reason="no AVX512_BF16 here: products stay fp32")

RNG = np.random.default_rng(11)


@pytest.fixture
def mixed_policy():
    fkeras.config.set_dtype_policy("mixed_bfloat16")
    yield
    fkeras.config.set_dtype_policy("float32")


def _rounded64(x):
    return round_to_bfloat16(np.asarray(x, np.float32)).astype(np.float64)


def _data(*shape):
    # Values with low mantissa bits set, so bfloat16 rounding changes every product.
    return (RNG.standard_normal(shape) * (1 + 2.0 ** -12)).astype(np.float32)


LAYERS = {
    "Dense": lambda **kw: layers.Dense(3, **kw),
    "Conv2D": lambda **kw: layers.Conv2D(4, 3, **kw),
    "LSTM": lambda **kw: layers.LSTM(5, **kw),
    "BatchNormalization": lambda **kw: layers.BatchNormalization(**kw),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_policy_attributes(name, mixed_policy):
    for layer in (LAYERS[name](), LAYERS[name](dtype="mixed_bfloat16"),
                  LAYERS[name](dtype=fkeras.DTypePolicy("mixed_bfloat16"))):
        assert (layer.dtype, layer.variable_dtype, layer.compute_dtype) == \
            ("float32", "float32", "bfloat16")
        assert layer.dtype_policy == fkeras.DTypePolicy("mixed_bfloat16")
        config = layer.get_config()
        assert config["dtype"]["config"] == {"name": "mixed_bfloat16"}
        assert type(layer).from_config(config).compute_dtype == "bfloat16"
    plain = LAYERS[name](dtype="float32")
    assert plain.compute_dtype == "float32" and plain.get_config()["dtype"] == "float32"


@pytest.mark.parametrize("name", ["mixed_float16", "float16", "bfloat16", "float64"])
def test_other_policies_are_refused(name):
    with pytest.raises(ValueError, match="no float16 or float64 kernels"):
        fkeras.config.set_dtype_policy(name)
    assert fkeras.config.dtype_policy().name == "float32"


def test_variables_stay_float32(mixed_policy):
    model = fkeras.Sequential([fkeras.Input((4,)), layers.Dense(3), layers.Dense(1)])
    assert all(w.dtype == "float32" for w in model.weights)
    assert np.asarray(model(np.ones((2, 4), np.float32))).dtype == np.float32


@needs_bf16
def test_dense_forward_and_backward_use_bfloat16_products():
    x, w = _data(16, 40), _data(40, 8)
    layer = layers.Dense(8, use_bias=False, dtype="mixed_bfloat16")
    layer.build((None, 40))
    layer.kernel.assign(w)
    g = _data(16, 8)
    xt = fkeras.ops.convert_to_tensor(x)
    with fkeras.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt)
    dx, dw = tape.gradient(y, [xt, layer.kernel], output_gradients=g)
    cases = [(y, _rounded64(x) @ _rounded64(w), x.astype(np.float64) @ w),
             (dx, _rounded64(g) @ _rounded64(w).T, g.astype(np.float64) @ w.T),
             (dw, _rounded64(x).T @ _rounded64(g), x.astype(np.float64).T @ g)]
    for got, rounded, exact in cases:
        got = np.asarray(got, np.float64)
        err = np.abs(got - rounded).max()
        assert err <= 1e-5 * np.abs(rounded).max(), err
        assert np.abs(got - exact).max() > 50 * err  # the bf16 path was taken


@needs_bf16
@pytest.mark.parametrize("name", ["Conv2D", "LSTM"])
def test_conv_and_lstm_compute_in_bfloat16(name):
    x = _data(2, 6, 6, 3) if name == "Conv2D" else _data(2, 7, 3)
    plain, mixed = LAYERS[name](), LAYERS[name](dtype="mixed_bfloat16")
    plain.build(x.shape)
    mixed.build(x.shape)
    mixed.set_weights(plain.get_weights())
    a, b = np.asarray(plain(x)), np.asarray(mixed(x))
    diff = np.abs(a - b).max()
    assert 0 < diff <= 2e-2 * max(1.0, np.abs(a).max())  # bfloat16-sized, not zero


def test_fit_under_the_policy_matches_float32_accuracy():
    from fkeras.examples import digits

    base = digits.main(["--epochs", "6", "--verbose", "0", "--logdir", ""])
    mixed = digits.main(["--epochs", "6", "--verbose", "0", "--logdir", "",
                         "--dtype-policy", "mixed_bfloat16"])
    assert abs(mixed["accuracy"] - base["accuracy"]) <= 0.01
    assert fkeras.config.dtype_policy().name == "float32"  # restored


def test_cast_to_bfloat16_rounds_to_nearest_even():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 2 ** -7 + 2 ** -9, -3.0 - 2 ** -7, 3.4e38, np.nan,
                  np.inf], np.float32)
    got = np.asarray(ops.cast(x, "bfloat16"))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 1.0, 1 + 2 ** -7, -3.0, np.inf, np.nan, np.inf])
    assert ops.cast(fkeras.Input((3,)), "bfloat16").shape == (None, 3)
    t = ops.convert_to_tensor(x[:4])
    with fkeras.GradientTape() as tape:
        tape.watch(t)
        y = ops.sum(ops.cast(t, "bfloat16") * 2.0)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, t)), [2.0] * 4)


def test_keras_files_keep_the_policy(tmp_path, mixed_policy):
    model = fkeras.Sequential([fkeras.Input((4,)), layers.Dense(3), layers.Dense(1)])
    path = str(tmp_path / "m.keras")
    model.save(path)
    fkeras.config.set_dtype_policy("float32")
    loaded = fkeras.saving.load_model(path)
    assert [layer.compute_dtype for layer in loaded.layers] == ["bfloat16", "bfloat16"]
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(model(x)))


def test_keras_mixed_policy_file_loads(tmp_path):
    keras = pytest.importorskip("keras")
    kmodel = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, dtype="mixed_bfloat16"),
                               keras.layers.Dense(1)])
    path = str(tmp_path / "k.keras")
    kmodel.save(path)
    loaded = fkeras.saving.load_model(path)
    assert [layer.compute_dtype for layer in loaded.layers] == ["bfloat16", "float32"]
    x = _data(5, 4)
    np.testing.assert_allclose(np.asarray(loaded(x)),
                               np.asarray(kmodel(x).float().detach().numpy()),
                               rtol=2e-2, atol=2e-2)


class _Outer(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = layers.Dense(6, use_bias=False, dtype="float32")

    def call(self, x):
        return self.inner(x)


@needs_bf16
def test_a_float32_layer_inside_a_bf16_layer_computes_in_float32():
    x = _data(4, 40)
    outer = _Outer(dtype="mixed_bfloat16")
    out = np.asarray(outer(x), np.float64)
    w = np.asarray(outer.inner.kernel.numpy(), np.float64)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    inner_bf16 = layers.Dense(6, use_bias=False, dtype="mixed_bfloat16")
    inner_bf16.build((None, 40))
    inner_bf16.kernel.assign(w.astype(np.float32))
    assert np.abs(np.asarray(inner_bf16(x)) - out).max() > 1e-3  # that one does round
