"""Dense int8 quantization (Keras 3's `quantize("int8")`): state, call and gradient against a
NumPy reference written from Keras's formulas, errors, and `.keras` round trips."""

import warnings

import fkeras
import numpy as np
import pytest
from fkeras import layers


def _model(units=(6, 3), activation="relu", seed=0, use_bias=True):
    fkeras.utils.set_random_seed(seed)
    inp = layers.Input((5,))
    x = inp
    for u in units:
        x = layers.Dense(u, activation=activation, use_bias=use_bias)(x)
    return fkeras.Model(inp, x)


def _quantize_ref(kernel, x):
    """Keras's int8 Dense product in float32 NumPy: kernel per column, x per row."""
    f = np.float32
    ks = f(127) / (np.max(np.abs(kernel), axis=0) + f(1e-7))
    kq = np.clip(np.round(kernel * ks), -127, 127).astype(np.int8)
    xs = f(127) / (np.max(np.abs(x), axis=-1, keepdims=True) + f(1e-7))
    xq = np.clip(np.round(x * xs), -127, 127).astype(np.int8)
    acc = xq.astype(np.int64) @ kq.astype(np.int64)
    return kq, ks, acc.astype(np.float32) / (ks * xs)


def _quiet_quantize(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.quantize(*args, **kwargs)


def test_quantize_state_matches_keras_layout():
    model = _model()
    dense = model.layers[1]
    float_kernel = dense.kernel.numpy().copy()
    _quiet_quantize(model, "int8")
    assert dense.quantization_mode == "int8"
    assert dense.dtype_policy.name == "int8_from_float32"
    assert (dense.dtype, dense.compute_dtype) == ("float32", "float32")
    assert [(w.path, w.dtype, tuple(w.shape), w.trainable) for w in dense.weights] == [
        ("dense/bias", "float32", (6,), True), ("dense/kernel", "int8", (5, 6), False),
        ("dense/kernel_scale", "float32", (6,), False)]
    assert [w.path for w in dense.trainable_weights] == ["dense/bias"]
    kq, ks, _ = _quantize_ref(float_kernel, np.zeros((1, 5), np.float32))
    np.testing.assert_array_equal(dense.kernel.numpy(), kq)
    np.testing.assert_array_equal(dense.kernel_scale.numpy(), ks)
    assert dense.kernel is dense._kernel


@pytest.mark.parametrize("batch_shape", [(7,), (2, 3)])
def test_call_matches_reference(batch_shape):
    model = _model(units=(6,), activation="relu")
    dense = model.layers[1]
    kernel, bias = dense.kernel.numpy().copy(), dense.bias.numpy() + 0.25
    dense.bias.assign(bias)
    _quiet_quantize(model, "int8")
    x = np.random.default_rng(1).standard_normal(batch_shape + (5,)).astype(np.float32)
    _, _, prod = _quantize_ref(kernel, x.reshape(-1, 5))
    want = np.maximum(prod + bias, 0).reshape(batch_shape + (6,))
    np.testing.assert_array_equal(dense(x).numpy(), want)
    np.testing.assert_array_equal(model.predict(x.reshape(-1, 5), verbose=0),
                                  want.reshape(-1, 6))


def test_gradient_to_inputs_goes_through_dequantized_kernel():
    model = _model(units=(4,), activation=None)
    dense = model.layers[1]
    _quiet_quantize(model, "int8")
    x = fkeras.ops.convert_to_tensor(np.random.default_rng(2).standard_normal((3, 5)),
                                     dtype="float32")
    g = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = dense(x)
    dx, db = tape.gradient(y, [x, dense.bias], output_gradients=g)
    float_kernel = dense.kernel.numpy().astype(np.float64) / dense.kernel_scale.numpy()
    np.testing.assert_allclose(dx.numpy(), g.astype(np.float64) @ float_kernel.T, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(db.numpy(), g.sum(0), rtol=1e-5)


def test_fit_trains_bias_and_leaves_int8_kernel():
    model = _model(units=(4,), activation=None)
    _quiet_quantize(model, "int8")
    dense = model.layers[1]
    kernel = dense.kernel.numpy().copy()
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.standard_normal((16, 5)).astype(np.float32),
              rng.standard_normal((16, 4)).astype(np.float32), epochs=1, verbose=0)
    np.testing.assert_array_equal(dense.kernel.numpy(), kernel)
    assert np.any(dense.bias.numpy() != 0)


def test_dtype_policy_argument_builds_int8_layer():
    dense = layers.Dense(3, dtype="int8_from_float32")
    dense.build((None, 4))
    assert [(w.name, w.dtype) for w in dense.weights] == [
        ("bias", "float32"), ("kernel", "int8"), ("kernel_scale", "float32")]
    assert dense.quantization_mode == "int8"
    clone = layers.Dense.from_config(dense.get_config())
    assert clone.dtype_policy == dense.dtype_policy


def _built_einsum():
    layer = layers.EinsumDense("ab,bc->ac", output_shape=3)
    layer.build((None, 4))
    return layer


@pytest.mark.parametrize("call,error,match", [
    (lambda: layers.Dense(3).quantize("int8"), ValueError, "isn't yet built"),
    (lambda: _built().quantize("int3"), ValueError, "Invalid quantization mode"),
    (lambda: _built().quantize("int4"), ValueError, "only 'int8'"),
    (lambda: _built().quantize("float8"), ValueError, "only 'int8'"),
    (lambda: _built().quantize(), ValueError, "either `mode` or `config`"),
    (lambda: _twice(), ValueError, "already quantized with dtype_policy='int8_from_float32'"),
    (lambda: _built(lora_rank=2).quantize("int8"), ValueError, "LoRA"),
    (lambda: _quantized().enable_lora(2), ValueError, "LoRA"),
    (lambda: layers.Dense(3, dtype="int4_from_float32"), ValueError, "only 'int8'"),
    (lambda: _built_einsum().quantize("int8", config=fkeras.quantizers.Int8QuantizationConfig(
        activation_quantizer=fkeras.quantizers.AbsMaxQuantizer(value_range=(-100, 100)))),
     ValueError, "default AbsMaxQuantizer"),  # Dense takes any (test_pattern_guides2_int8_*)
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def _built(**kwargs):
    dense = layers.Dense(3, **kwargs)
    dense.build((None, 4))
    return dense


def _quantized():
    dense = _built()
    dense.quantize("int8")
    return dense


def _twice():
    _quantized().quantize("int8")


def test_subclass_is_refused_unless_type_check_false():
    class MyDense(layers.Dense):
        pass

    dense = MyDense(3)
    dense.build((None, 4))
    with pytest.raises(NotImplementedError, match="does not have a `quantize`"):
        dense.quantize("int8")
    dense.quantize("int8", type_check=False)
    assert dense.quantization_mode == "int8"


def test_model_quantize_filters_and_warnings():
    model = _model(units=(6, 3))
    last = model.layers[2]
    model.quantize("int8", filters=[f"^{last.name}$"])
    assert [getattr(lyr, "quantization_mode", None) for lyr in model.layers] == [
        None, None, "int8"]
    model = _model(units=(6, 3))
    with pytest.warns(UserWarning, match="InputLayer does not have a `quantize`"):
        model.quantize("int8")
    assert [getattr(lyr, "quantization_mode", None) for lyr in model.layers] == [
        None, "int8", "int8"]
    with pytest.raises(ValueError, match="filters"):
        model.quantize("int8", filters=3)


def test_keras_file_round_trip(tmp_path):
    model = _model()
    _quiet_quantize(model, "int8")
    x = np.random.default_rng(4).standard_normal((6, 5)).astype(np.float32)
    path = tmp_path / "q.keras"
    model.save(path)
    loaded = fkeras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert [(w.path, w.dtype) for w in loaded.weights] == [(w.path, w.dtype)
                                                           for w in model.weights]
    assert loaded.layers[1].dtype_policy.name == "int8_from_float32"


@pytest.mark.parametrize("embedding", [False, True])
def test_onnx_export_refuses_quantized_layers(tmp_path, embedding):
    pytest.importorskip("onnx")
    if embedding:
        inp = layers.Input((3,), dtype="int32")
        model = fkeras.Model(inp, layers.Embedding(5, 2)(inp))
    else:
        model = _model(units=(3,))
    _quiet_quantize(model, "int8")
    with pytest.raises(ValueError, match="int8_from_float32"):
        model.export(tmp_path / "m.onnx", format="onnx", verbose=False)


def test_embedding_int8_rows_and_scale():
    emb = layers.Embedding(7, 5)
    emb.build(None)
    table = emb.embeddings.numpy().copy()
    emb.quantize("int8")
    scale = np.float32(127) / (np.max(np.abs(table), axis=-1) + np.float32(1e-7))
    codes = np.clip(np.round(table * scale[:, None]), -127, 127).astype(np.int8)
    np.testing.assert_array_equal(emb.embeddings.numpy(), codes)
    np.testing.assert_array_equal(emb.embeddings_scale.numpy(), scale)
    assert [(w.name, w.dtype, w.trainable) for w in emb.weights] == [
        ("embeddings", "int8", False), ("embeddings_scale", "float32", False)]
    idx = np.array([[0, 6, 3]], np.int32)
    np.testing.assert_array_equal(emb(idx).numpy(),
                                  codes[idx].astype(np.float32) / scale[idx][..., None])
    with pytest.raises(ValueError, match="already quantized"):
        emb.quantize("int8")


def test_quantizer_base_config_round_trip_and_abstract_config():
    q = fkeras.quantizers.Quantizer(output_dtype="int8")
    assert q.get_config() == {"output_dtype": "int8"}
    assert fkeras.quantizers.Quantizer.from_config(q.get_config()).output_dtype == "int8"
    with pytest.raises(TypeError):  # a config must name its mode
        fkeras.quantizers.QuantizationConfig()
    assert not hasattr(fkeras.quantizers, "Int4QuantizationConfig")  # absent, documented
