"""Int8 quantization with the activation quantizer a user chooses (the customizing-quantization
guide): a restricted-range AbsMaxQuantizer, a user-written Quantizer subclass (percentile
scale), and weight-only int8 (`activation_quantizer=None`), on Dense; outputs and input
gradients against Keras 3 (torch), `.keras` round trip."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, tape, to_np

import fkeras


def percentile_quantizer_class(lib):
    class PercentileQuantizer(lib.quantizers.Quantizer):
        def __init__(self, percentile=99.0, value_range=(-127, 127), epsilon=1e-7,
                     output_dtype="int8"):
            super().__init__(output_dtype=output_dtype)
            self.percentile, self.value_range, self.epsilon = percentile, value_range, epsilon

        def __call__(self, x, axis, to_numpy=False):
            ops = lib.ops
            max_val = ops.quantile(ops.abs(x), self.percentile / 100, axis=axis, keepdims=True)
            scale = ops.divide(self.value_range[1], ops.add(max_val, self.epsilon))
            scale = ops.cast(scale, "float32")
            codes = ops.clip(ops.round(ops.multiply(x, scale)), *self.value_range)
            return ops.cast(codes, self.output_dtype), scale

        def get_config(self):
            return {"percentile": self.percentile, "value_range": self.value_range,
                    "epsilon": self.epsilon, "output_dtype": self.output_dtype}

    return PercentileQuantizer


def _config(lib, kind):
    q = lib.quantizers
    if kind == "range":
        return q.Int8QuantizationConfig(
            weight_quantizer=q.AbsMaxQuantizer(value_range=(-100, 100), axis=0),
            activation_quantizer=q.AbsMaxQuantizer(value_range=(-100, 100), axis=-1))
    if kind == "percentile":
        return q.Int8QuantizationConfig(
            weight_quantizer=q.AbsMaxQuantizer(axis=0),
            activation_quantizer=percentile_quantizer_class(lib)(percentile=90.0))
    return q.Int8QuantizationConfig(activation_quantizer=None)


def _run(lib, kind, x):
    model = lib.Sequential([lib.Input((6,)), lib.layers.Dense(5, activation="relu"),
                            lib.layers.Dense(3)])
    rng = np.random.RandomState(0)
    model.set_weights([(rng.standard_normal(w.shape) * 0.5).astype("float32")
                       for w in model.get_weights()])
    model.quantize(config=_config(lib, kind))
    xv = lib.Variable(x)
    with tape(lib) as t:
        y = model(xv)
        weights = lib.ops.convert_to_tensor(np.linspace(-1, 1, 3).astype("float32"))
        loss = lib.ops.sum(lib.ops.multiply(y, weights))
    grad = t.gradient(loss, [xv])[0]
    return model, to_np(y), to_np(grad)


X = np.random.RandomState(1).standard_normal((7, 6)).astype("float32")


@pytest.mark.parametrize("kind", ["range", "percentile", "weight_only"])
def test_int8_dense_with_a_chosen_activation_quantizer(kind):
    model, y, grad = _run(fkeras, kind, X)
    dense = model.layers[0]
    assert dense.kernel.dtype == "int8"
    if kind == "range":
        assert np.abs(dense.kernel.numpy()).max() <= 100
    assert (dense.inputs_quantizer is None) == (kind == "weight_only")
    # NumPy float64 reference of the first layer: Keras's int8 steps.
    w = dense.kernel.numpy().astype(np.float64)
    s = dense.kernel_scale.numpy().astype(np.float64)
    if kind == "weight_only":
        ref = (X.astype(np.float64) @ w) / s
    else:
        codes, scale = dense.inputs_quantizer(X, axis=-1)
        ref = (to_np(codes) @ w) / (s * to_np(scale))
    ref = np.maximum(ref + dense.bias.numpy(), 0)
    np.testing.assert_allclose(to_np(dense(X)), ref, rtol=1e-5, atol=1e-6)
    keras = keras_or_none()
    if keras is not None:
        _, k_y, k_grad = _run(keras, kind, X)
        np.testing.assert_allclose(y, k_y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad, k_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["range", "weight_only"])
def test_chosen_activation_quantizer_survives_a_keras_file(tmp_path, kind):
    model, y, _ = _run(fkeras, kind, X)
    model.save(tmp_path / "q.keras")
    restored = fkeras.models.load_model(tmp_path / "q.keras")
    assert (restored.layers[0].inputs_quantizer is None) == (kind == "weight_only")
    np.testing.assert_array_equal(to_np(restored(X)), y)
    keras = keras_or_none()
    if keras is not None:
        k_model = keras.models.load_model(tmp_path / "q.keras")
        np.testing.assert_allclose(to_np(k_model(X)), y, rtol=1e-5, atol=1e-6)


def test_einsum_dense_still_refuses_a_custom_activation_quantizer():
    layer = fkeras.layers.EinsumDense("ab,bc->ac", output_shape=3)
    layer.build((None, 4))
    with pytest.raises(ValueError, match="default AbsMaxQuantizer"):
        layer.quantize(config=_config(fkeras, "range"))
