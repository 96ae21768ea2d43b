"""int8 EinsumDense against real Keras 3 (torch backend), for the equations Keras's layers use:
same float weights, `quantize("int8")` in both, then the int8 state (names, dtypes, shapes,
order, values), the outputs, the input gradients, and `.keras` files both ways."""


import fkeras
import numpy as np
import pytest
from keras_parity import assert_input_gradient_matches, keras, quantized_pair, randn, to_np

# (equation, input shape without batch, output_shape, bias_axes)
CASES = [
    ("ab,bc->ac", (6,), (5,), None),
    ("ab,bc->ac", (6,), (5,), "c"),
    ("abc,cd->abd", (3, 6), (3, 5), None),
    ("abc,cd->abd", (3, 6), (3, 5), "d"),
    ("abc,cde->abde", (3, 6), (3, 2, 5), None),
    ("abc,cde->abde", (3, 6), (3, 2, 5), "de"),
    ("abcd,cde->abe", (3, 2, 4), (3, 5), None),
    ("abcd,cde->abe", (3, 2, 4), (3, 5), "e"),
    ("abcd,de->abce", (3, 2, 4), (3, 2, 5), None),
    ("abcd,de->abce", (3, 2, 4), (3, 2, 5), "e"),
    # transposes on the GEMM view (input, kernel, output) and more contracted than kept axes
    ("abc,cde->abed", (3, 6), (3, 5, 2), "ed"),
    ("abc,dc->abd", (3, 6), (3, 5), "d"),
    ("abc,cd->adb", (3, 6), (5, 3), None),
    ("abc,bcd->ad", (3, 4), (5,), None),
]
IDS = [f"{eq}-{bias}" for eq, _, _, bias in CASES]


def _pair(equation, in_shape, out_shape, bias_axes):
    """The same one-layer model in Keras and fkeras, float weights copied, both quantized."""
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input(in_shape)
        layer = lib.layers.EinsumDense(equation, output_shape=out_shape, bias_axes=bias_axes,
                                       activation="relu", name="ed")
        models.append(lib.Model(inp, layer(inp)))
    km, fm = models
    weights = [to_np(w) for w in km.get_weights()]
    weights = [w + 0.1 if i else w for i, w in enumerate(weights)]  # a non-zero bias
    km.set_weights(weights)
    return quantized_pair(km, fm)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_and_outputs_equal_keras_exactly(case):
    km, fm = _pair(*case)
    assert [(w.path, str(w.dtype), tuple(w.shape), w.trainable) for w in fm.weights] == [
        (w.path, w.dtype, tuple(w.shape), w.trainable) for w in km.weights]
    for kw, fw in zip(km.weights, fm.weights):
        np.testing.assert_array_equal(fw.numpy(), to_np(kw))
    kl, fl = km.layers[1], fm.layers[1]
    assert fl.dtype_policy.name == kl.dtype_policy.name == "int8_from_float32"
    theirs, ours = kl.get_config(), fl.get_config()
    assert {k: ours[k] for k in theirs} == theirs
    # Same float32 steps (scales, round half even, exact int32 sums over the contracted axes,
    # the cast, one division by inputs_scale * kernel_scale, the bias): bit-identical.
    x = randn(7, *case[1], seed=1) * 3
    np.testing.assert_array_equal(fm.predict(x, verbose=0), to_np(km(x)))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_input_gradient_matches_keras(case):
    # Both contract the upstream with the dequantized kernel (kernel / kernel_scale) in float32,
    # Keras by torch.einsum, fkeras by one GEMM.
    km, fm = _pair(*case)
    x = randn(4, *case[1], seed=2)
    g = randn(*tuple(fm.compute_output_shape(x.shape)), seed=3)
    assert_input_gradient_matches(km, fm, x, g)


FILE_CASES = [0, 3, 5, 7, 9, 10, 11, 13]


@pytest.mark.parametrize("case", [CASES[k] for k in FILE_CASES], ids=[IDS[k] for k in FILE_CASES])
def test_keras_files_both_ways(tmp_path, case):
    km, fm = _pair(*case)
    x = randn(5, *case[1], seed=4)
    want = to_np(km(x))
    km.save(tmp_path / "k.keras")
    loaded = fkeras.models.load_model(tmp_path / "k.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), want)
    assert [(w.path, str(w.dtype), tuple(w.shape)) for w in loaded.weights] == [
        (w.path, w.dtype, tuple(w.shape)) for w in km.weights]
    fm.save(tmp_path / "f.keras")
    back = keras.models.load_model(tmp_path / "f.keras")
    assert back.layers[1].quantization_mode == "int8"
    np.testing.assert_array_equal(to_np(back(x)), want)


def test_weights_h5_files_both_ways(tmp_path):
    km, fm = _pair(*CASES[5])
    fm.save_weights(tmp_path / "f.weights.h5")
    km.save_weights(tmp_path / "k.weights.h5")
    km2, fm2 = _pair(*CASES[5])
    for w in km2.weights + fm2.weights:
        w.assign(np.zeros(tuple(w.shape), str(w.dtype)))
    km2.load_weights(tmp_path / "f.weights.h5")
    fm2.load_weights(tmp_path / "k.weights.h5")
    x = randn(3, *CASES[5][1], seed=6)
    np.testing.assert_array_equal(to_np(km2(x)), to_np(km(x)))
    np.testing.assert_array_equal(fm2.predict(x, verbose=0), to_np(km(x)))


@pytest.mark.parametrize("attention", [
    lambda lib: lib.layers.MultiHeadAttention(2, 3, name="mha"),
    lambda lib: lib.layers.GroupQueryAttention(3, 4, 2, name="gqa"),
], ids=["MultiHeadAttention", "GroupQueryAttention"])
def test_attention_projections_quantized_like_keras(attention):
    """Model.quantize reaches the attention layers' EinsumDense projections, as Keras's does."""
    models = []
    for lib in (keras, fkeras):
        q = lib.Input((4, 6))
        models.append(lib.Model(q, attention(lib)(q, q)))
    km, fm = quantized_pair(*models)
    assert [(w.path, str(w.dtype), tuple(w.shape)) for w in fm.weights] == [
        (w.path, w.dtype, tuple(w.shape)) for w in km.weights]
    x = randn(3, 4, 6, seed=5)
    # The attention between the projections is float32 in both, with different summation
    # orders (softmax, two batched products): within float32 rounding.
    np.testing.assert_allclose(fm.predict(x, verbose=0), to_np(km(x)), rtol=1e-5, atol=1e-5)
