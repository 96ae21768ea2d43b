"""EinsumDense int8 quantization (Keras 3's `quantize("int8")`): state, call and gradient
against a NumPy reference written from Keras's formulas, errors, `Model.quantize`, and `.keras`
round trips."""

import warnings

import fkeras
import numpy as np
import pytest
from fkeras import layers

F = np.float32

# (equation, input shape without batch, output_shape, bias_axes, kernel scale shape)
CASES = [
    ("ab,bc->ac", (5,), (4,), "c", (1, 4)),
    ("abc,cd->abd", (3, 5), (3, 4), None, (1, 1, 4)),
    ("abc,cde->abde", (3, 5), (3, 2, 4), "de", (1, 1, 2, 4)),
    ("abcd,cde->abe", (3, 2, 5), (3, 4), "e", (1, 1, 4)),
    ("abcd,de->abce", (3, 2, 5), (3, 2, 4), "e", (1, 1, 1, 4)),
    ("abc,cde->abed", (3, 5), (3, 4, 2), None, (1, 1, 4, 2)),
    ("abc,bcd->ad", (3, 5), (4,), "d", (1, 4)),
    ("...b,bc->...c", (3, 5), (4,), "c", (1, 1, 4)),
]
IDS = [c[0] + ("" if c[3] is None else "-" + c[3]) for c in CASES]


def _layer(equation, in_shape, out_shape, bias_axes, seed=0):
    fkeras.utils.set_random_seed(seed)
    layer = layers.EinsumDense(equation, output_shape=out_shape, bias_axes=bias_axes,
                               activation="relu", bias_initializer="random_normal")
    layer.build((None,) + tuple(in_shape))
    return layer


def _specs(equation, rank):
    """(input, kernel, output) letters, `...` (leading, as in these tests) spelled out."""
    ins, rest = equation.split(",")
    w, out = rest.split("->")
    fill = "XYZ"[:rank - len(ins.replace("...", ""))] if "..." in ins else ""
    return ins.replace("...", fill), w, out.replace("...", fill)


def _over_output(scale, spec, out, shape):
    """A keepdims scale over `spec`'s axes laid over the output's axes (size 1 where the output
    axis is not in `spec`), as Keras broadcasts it."""
    kept = "".join(c for c in spec if c in out)
    s = scale.reshape([shape[spec.index(c)] for c in kept])
    s = np.einsum(f"{kept}->{''.join(c for c in out if c in spec)}", s)
    return s.reshape([shape[spec.index(c)] if c in spec else 1 for c in out])


def _reference(equation, kernel, bias, x):
    """Keras's int8 EinsumDense in float32 NumPy: kernel scaled over its contracted axes,
    inputs over theirs, exact integer einsum, one division by the product of the scales."""
    ins, w, out = _specs(equation, x.ndim)
    k_red = tuple(k for k, c in enumerate(w) if c not in out)
    x_red = tuple(k for k, c in enumerate(ins) if c not in out)
    ks = F(127) / (np.max(np.abs(kernel), axis=k_red, keepdims=True) + F(1e-7))
    kq = np.clip(np.round(kernel * ks), -127, 127).astype(np.int8)
    xs = F(127) / (np.max(np.abs(x), axis=x_red, keepdims=True) + F(1e-7))
    xq = np.clip(np.round(x * xs), -127, 127).astype(np.int8)
    acc = np.einsum(f"{ins},{w}->{out}", xq.astype(np.int64), kq.astype(np.int64)).astype(F)
    ks_out = _over_output(ks, w, out, kernel.shape)
    y = acc / (_over_output(xs, ins, out, x.shape) * ks_out)
    if bias is not None:
        y = y + bias
    return kq, ks_out, np.maximum(y, 0)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_quantize_state_and_call_match_reference(case):
    equation, in_shape, out_shape, bias_axes, scale_shape = case
    layer = _layer(equation, in_shape, out_shape, bias_axes)
    kernel = layer.kernel.numpy().copy()
    bias = None if layer.bias is None else layer.bias.numpy().copy()
    layer.quantize("int8")
    names = [(w.name, w.dtype, w.trainable) for w in layer.weights]
    assert names == ([("bias", "float32", True)] if bias is not None else []) + [
        ("kernel", "int8", False), ("kernel_scale", "float32", False)]
    assert tuple(layer.kernel_scale.shape) == scale_shape
    assert layer.quantization_mode == "int8"
    assert layer.dtype_policy.name == "int8_from_float32"
    x = np.random.default_rng(1).standard_normal((6,) + in_shape).astype(F) * 2
    kq, ks, want = _reference(equation, kernel, bias, x)
    np.testing.assert_array_equal(layer.kernel.numpy(), kq)
    np.testing.assert_array_equal(layer.kernel_scale.numpy(), ks)
    np.testing.assert_array_equal(layer(x).numpy(), want)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_to_inputs_goes_through_dequantized_kernel(case):
    equation, in_shape, out_shape, bias_axes, _ = case
    layer = layers.EinsumDense(equation, output_shape=out_shape, bias_axes=bias_axes)
    layer.build((None,) + tuple(in_shape))
    layer.quantize("int8")
    x = fkeras.ops.convert_to_tensor(
        np.random.default_rng(2).standard_normal((3,) + in_shape).astype(F))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    g = np.random.default_rng(3).standard_normal(tuple(y.shape)).astype(F)
    dx = tape.gradient(y, x, output_gradients=g)
    ins, w, out = _specs(equation, len(in_shape) + 1)
    # the stored scale (laid over the output) back over the kernel's axes, in float64
    kept = "".join(c for c in out if c in w)
    scale = layer.kernel_scale.numpy().astype(np.float64)
    scale = scale.reshape([layer.kernel.shape[w.index(c)] for c in kept])
    scale = np.einsum(f"{kept}->{''.join(c for c in w if c in kept)}", scale)
    scale = scale.reshape([layer.kernel.shape[k] if c in out else 1 for k, c in enumerate(w)])
    float_kernel = layer.kernel.numpy().astype(np.float64) / scale
    want = np.einsum(f"{out},{w}->{ins}", g.astype(np.float64), float_kernel)
    np.testing.assert_allclose(dx.numpy(), want, rtol=1e-5, atol=1e-5)


def test_dtype_policy_and_config_build_int8_layer():
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(3, 2, 4), bias_axes="de",
                               dtype="int8_from_float32")
    layer.build((None, 3, 5))
    assert [(w.name, w.dtype, tuple(w.shape)) for w in layer.weights] == [
        ("bias", "float32", (2, 4)), ("kernel", "int8", (5, 2, 4)),
        ("kernel_scale", "float32", (1, 1, 2, 4))]
    clone = layers.EinsumDense.from_config(layer.get_config())
    assert clone.dtype_policy == layer.dtype_policy
    config = fkeras.quantizers.Int8QuantizationConfig()
    layer = layers.EinsumDense("ab,bc->ac", output_shape=4, quantization_config=config)
    layer.build((None, 5))
    layer.quantize("int8", config=config)
    assert layer.get_config()["quantization_config"]["class_name"] == \
        "Int8QuantizationConfig"


def _built(**kwargs):
    layer = layers.EinsumDense("abc,cd->abd", output_shape=(3, 4), **kwargs)
    layer.build((None, 3, 5))
    return layer


def _quantized():
    layer = _built()
    layer.quantize("int8")
    return layer


@pytest.mark.parametrize("call,error,match", [
    (lambda: layers.EinsumDense("ab,bc->ac", 3).quantize("int8"), ValueError,
     "isn't yet built"),
    (lambda: _built().quantize("int3"), ValueError, "Invalid quantization mode"),
    (lambda: _built().quantize("int4"), ValueError, "only 'int8'"),
    (lambda: _built().quantize("float8"), ValueError, "only 'int8'"),
    (lambda: _quantized().quantize("int8"), ValueError, "already quantized"),
    (lambda: _built(lora_rank=2).quantize("int8"), ValueError, "LoRA"),
    (lambda: _quantized().enable_lora(2), ValueError, "LoRA"),
    (lambda: layers.EinsumDense("ab,bc->ac", 3, dtype="int4_from_float32"),
     ValueError, "only 'int8'"),
    (lambda: layers.EinsumDense("ab,bc->ac", 3, gptq_unpacked_column_size=4),
     ValueError, "gptq_unpacked_column_size"),
    (lambda: _built().quantize("int8", config=fkeras.quantizers.Int8QuantizationConfig(
        activation_quantizer=fkeras.quantizers.AbsMaxQuantizer(value_range=(-100, 100)))),
     ValueError, "default AbsMaxQuantizer"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_subclass_is_refused_unless_type_check_false():
    class MyEinsumDense(layers.EinsumDense):
        pass

    layer = MyEinsumDense("ab,bc->ac", 3)
    layer.build((None, 4))
    with pytest.raises(NotImplementedError, match="does not have a `quantize`"):
        layer.quantize("int8")
    layer.quantize("int8", type_check=False)
    assert layer.quantization_mode == "int8"


def _model():
    fkeras.utils.set_random_seed(0)
    inp = layers.Input((3, 5))
    x = layers.EinsumDense("abc,cde->abde", output_shape=(3, 2, 4), bias_axes="de")(inp)
    x = layers.Reshape((3, 8))(x)
    return fkeras.Model(inp, layers.EinsumDense("abc,cd->abd", output_shape=(3, 2))(x))


def test_model_quantize_reaches_einsum_dense_and_fit_keeps_kernel(tmp_path):
    model = _model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.quantize("int8")
    assert not [w for w in caught if "EinsumDense" in str(w.message)]
    assert [getattr(lyr, "quantization_mode", None) for lyr in model.layers] == [
        None, "int8", None, "int8"]
    x = np.random.default_rng(4).standard_normal((6, 3, 5)).astype(F)
    before = model.predict(x, verbose=0)
    model.save(tmp_path / "q.keras")
    loaded = fkeras.models.load_model(tmp_path / "q.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), before)
    assert [(w.path, w.dtype) for w in loaded.weights] == [(w.path, w.dtype)
                                                           for w in model.weights]
    kernel = model.layers[1].kernel.numpy().copy()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.ones((6, 3, 2), F), epochs=1, verbose=0)
    np.testing.assert_array_equal(model.layers[1].kernel.numpy(), kernel)
    assert np.any(model.predict(x, verbose=0) != before)  # the biases trained


def test_onnx_export_refuses_quantized_einsum_dense(tmp_path):
    pytest.importorskip("onnx")
    model = _model()
    _quiet(model.quantize, "int8")
    with pytest.raises(ValueError, match="int8_from_float32"):
        model.export(tmp_path / "m.onnx", format="onnx", verbose=False)
