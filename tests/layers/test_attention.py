"""The attention family without Keras: MultiHeadAttention, GroupQueryAttention, Attention,
AdditiveAttention, EinsumDense, RMSNormalization and Identity against NumPy float64 references
(masks included), gradients against finite differences on the float64 reference device,
dropout in training only, shapes, errors, and the catalogue checks (run_layer_test)."""

import pathlib
import sys

import numpy as np
import pytest
from layer_testing import run_layer_test

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

import fkeras  # noqa: E402
from fkeras import layers  # noqa: E402
from fkeras.engine.variable import Variable  # noqa: E402

_SLOTS = ("kernel", "bias", "scale", "concat_score_weight", "recurrent_kernel")


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _slots(layer):
    """(owner, attribute) of every weight of `layer` and its sub-layers."""
    out = []
    for owner in [layer] + layer._all_layers():
        for name in _SLOTS:
            if isinstance(getattr(owner, name, None), Variable):
                out.append((owner, name))
    return out


def _fd_layer(layer, inputs, call, rng, tol=1e-6):
    """fd_check of call(layer, *inputs) with respect to the inputs and every weight."""
    slots = _slots(layer)
    weights = [np.asarray(getattr(o, n)) for o, n in slots]
    n = len(inputs)

    def fn(*args):
        for (owner, name), w in zip(slots, args[n:]):
            setattr(owner, name, w)
        return call(layer, *args[:n])

    fd_check(fn, list(inputs) + weights, wrt=list(range(n + len(weights))), rng=rng, tol=tol)


def _softmax(s, mask=None):
    if mask is not None:
        s = np.where(mask, s, -1e9)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p if mask is None else np.where(mask, p, 0.0)


def _mha_reference(layer, q, v, mask=None):
    """float64 multi-head attention from the layer's weights (rank-3 inputs)."""
    w = {f"{d}_{n}": np.asarray(getattr(getattr(layer, f"_{d}_dense"), n), np.float64)
         for d in ("query", "key", "value", "output") for n in ("kernel", "bias")}
    qh = np.einsum("btd,dnh->btnh", q, w["query_kernel"]) + w["query_bias"]
    kh = np.einsum("bsd,dnh->bsnh", v, w["key_kernel"]) + w["key_bias"]
    vh = np.einsum("bsd,dnh->bsnh", v, w["value_kernel"]) + w["value_bias"]
    scores = np.einsum("btnh,bsnh->bnts", qh / np.sqrt(layer.key_dim), kh)
    probs = _softmax(scores, None if mask is None else mask[:, None])
    heads = np.einsum("bnts,bsnh->btnh", probs, vh)
    return np.einsum("btnh,nho->bto", heads, w["output_kernel"]) + w["output_bias"], probs


# ---- MultiHeadAttention ----

@pytest.mark.parametrize("masking", ["none", "attention_mask", "causal", "padding"])
def test_mha_matches_numpy_reference(masking):
    rng = np.random.default_rng(0)
    q, v = _rand(rng, 2, 4, 6), _rand(rng, 2, 5, 6)
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, dropout=0.1)
    layer.build(q.shape, v.shape)
    kwargs, mask = {}, None
    if masking == "attention_mask":
        mask = rng.random((2, 4, 5)) > 0.3
        mask[..., 0] = True
        kwargs["attention_mask"] = mask
    elif masking == "causal":
        mask = np.broadcast_to(np.tri(4, 5, dtype=bool), (2, 4, 5))
        kwargs["use_causal_mask"] = True
    elif masking == "padding":
        q_mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool)
        v_mask = np.array([[1, 1, 1, 1, 0], [1, 0, 1, 0, 0]], bool)
        kwargs.update(value_mask=v_mask)
        fkeras.engine.masking.set_keras_mask(q, q_mask)
        mask = q_mask[:, :, None] & v_mask[:, None, :]
    out, scores = layer(q, v, return_attention_scores=True, **kwargs)
    want, want_scores = _mha_reference(layer, q.astype(np.float64), v.astype(np.float64),
                                       mask)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores), want_scores, rtol=1e-5, atol=1e-6)


def test_mha_fully_masked_query_rows_follow_keras_paths():
    """Keras 3's fused path (no dropout, no returned scores) averages the values over a row
    whose keys are all masked; its explicit path returns zeros for that row."""
    rng = np.random.default_rng(1)
    q, v = _rand(rng, 1, 2, 4), _rand(rng, 1, 3, 4)
    layer = layers.MultiHeadAttention(num_heads=1, key_dim=2, use_bias=False)
    layer.build(q.shape, v.shape)
    mask = np.array([[[True, True, False], [False, False, False]]])
    fused = np.asarray(layer(q, v, attention_mask=mask))
    explicit, scores = layer(q, v, attention_mask=mask, return_attention_scores=True)
    vh = np.einsum("bsd,dnh->bsnh", v, np.asarray(layer.value_dense.kernel))
    mean = np.einsum("bnh,nho->bo", vh.mean(1), np.asarray(layer.output_dense.kernel))
    np.testing.assert_allclose(fused[0, 1], mean[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(explicit)[0, 1], 0.0, atol=1e-7)
    # the fused kernel against the composed ops: equal up to rounding
    np.testing.assert_allclose(np.asarray(explicit)[0, 0], fused[0, 0], rtol=1e-5, atol=1e-6)
    assert np.asarray(scores)[0, 0, 1].sum() == 0.0


@pytest.mark.parametrize("kwargs,call", [
    (dict(num_heads=2, key_dim=3), dict(use_causal_mask=True)),
    (dict(num_heads=2, key_dim=2, value_dim=3, use_gate=True, output_shape=4), {}),
    (dict(num_heads=1, key_dim=2, attention_axes=(1, 2)), {}),
])
def test_mha_gradients_match_finite_differences(kwargs, call):
    rng = np.random.default_rng(2)
    rank4 = "attention_axes" in kwargs
    q = _rand(rng, 2, 2, 3, 4) if rank4 else _rand(rng, 2, 3, 4)
    v = _rand(rng, 2, 2, 3, 4) if rank4 else _rand(rng, 2, 4, 4)
    layer = layers.MultiHeadAttention(**kwargs)
    layer.build(q.shape, v.shape)
    _fd_layer(layer, [q, v], lambda lay, a, b: lay(a, b, **call), rng)


def test_mha_dropout_only_in_training_and_seeded():
    rng = np.random.default_rng(3)
    x = _rand(rng, 2, 5, 4)
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=2, dropout=0.5, seed=7)
    infer = [np.asarray(layer(x, x)) for _ in range(2)]
    np.testing.assert_array_equal(infer[0], infer[1])
    np.testing.assert_array_equal(np.asarray(layer(x, x, training=False)), infer[0])
    train = np.asarray(layer(x, x, training=True))
    assert not np.allclose(train, infer[0])
    other = layers.MultiHeadAttention(num_heads=2, key_dim=2, dropout=0.5, seed=7)
    other.build(x.shape, x.shape)
    other.set_weights(layer.get_weights())
    np.testing.assert_array_equal(np.asarray(other(x, x, training=True)), train)


def test_mha_symbolic_shapes_and_output_mask():
    q, v = layers.Input((4, 6)), layers.Input((7, 5))
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, output_shape=(2, 3))
    out, scores = layer(q, v, return_attention_scores=True)
    assert out.shape == (None, 4, 2, 3) and scores.shape == (None, 2, 4, 7)
    assert layer.compute_output_shape((None, 4, 6), (None, 7, 5)) == (None, 4, 2, 3)
    assert [w.shape for w in layer.weights] == [(6, 2, 3), (2, 3), (5, 2, 3), (2, 3),
                                               (5, 2, 3), (2, 3), (2, 3, 2, 3), (2, 3)]
    ids = layers.Input((4,), dtype="int32")
    h = layers.Embedding(9, 6, mask_zero=True)(ids)
    y = layers.MultiHeadAttention(2, 3)(h, h)
    assert fkeras.engine.masking.get_keras_mask(y) is not None


@pytest.mark.parametrize("kwargs,message", [
    (dict(num_heads=0, key_dim=2), "num_heads"),
    (dict(num_heads=2, key_dim=2.5), "key_dim"),
    (dict(num_heads=2, key_dim=2, value_dim=-1), "value_dim"),
    (dict(num_heads=2, key_dim=2, attention_axes="x"), "attention_axes"),
])
def test_mha_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        layers.MultiHeadAttention(**kwargs)


def test_mha_value_key_shape_mismatch_raises():
    layer = layers.MultiHeadAttention(2, 2)
    with pytest.raises(ValueError, match="value` and `key`"):
        layer.build((None, 3, 4), (None, 5, 4), (None, 6, 4))


def test_mha_trains_in_a_functional_model():
    rng = np.random.default_rng(11)
    q, v, y = _rand(rng, 8, 4, 5), _rand(rng, 8, 6, 5), _rand(rng, 8, 4, 5)
    qi, vi = layers.Input((4, 5)), layers.Input((6, 5))
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    model = fkeras.Model([qi, vi], layer(qi, vi))
    model.compile(optimizer=fkeras.optimizers.SGD(0.1), loss="mse")
    before = [np.array(w) for w in layer.trainable_weights]
    losses = model.fit([q, v], y, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    moved = [not np.array_equal(np.array(w), b) for w, b in zip(layer.trainable_weights, before)]
    assert all(moved)


# ---- GroupQueryAttention ----

def test_gqa_matches_numpy_reference_and_gradients():
    rng = np.random.default_rng(4)
    q, v = _rand(rng, 2, 3, 4), _rand(rng, 2, 5, 4)
    layer = layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2)
    out, scores = layer(q, v, return_attention_scores=True, use_causal_mask=True)
    w = [np.asarray(x, np.float64) for x in layer.get_weights()]
    qh = np.einsum("bqm,muh->bquh", q, w[0]) + w[1]
    kh = np.repeat(np.einsum("bkm,mvh->bkvh", v, w[2]) + w[3], 2, axis=2)
    vh = np.repeat(np.einsum("bkm,mvh->bkvh", v, w[4]) + w[5], 2, axis=2)
    probs = _softmax(np.einsum("bquh,bkuh->buqk", qh / np.sqrt(2.0), kh),
                     np.tri(3, 5, dtype=bool)[None, None])
    want = np.einsum("bquh,uhm->bqm", np.einsum("buqk,bkuh->bquh", probs, vh), w[6]) + w[7]
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores), probs, rtol=1e-5, atol=1e-6)
    _fd_layer(layer, [q, v], lambda lay, a, b: lay(a, b), rng)
    with pytest.raises(ValueError, match="divisible"):
        layers.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)
    assert layers.GroupQueryAttention is layers.GroupedQueryAttention


# ---- Attention / AdditiveAttention ----

def _dot_reference(q, v, k, scale, q_mask=None, v_mask=None, causal=False):
    s = scale * np.einsum("btd,bsd->bts", q, k)
    keep = np.ones(s.shape, bool)
    if v_mask is not None:
        keep &= v_mask[:, None, :]
    if causal:
        keep &= np.tri(s.shape[1], s.shape[2], dtype=bool)[None]
    p = _softmax(np.where(keep, s, s - 1e9))
    out = np.einsum("bts,bsd->btd", p, v)
    return out if q_mask is None else out * q_mask[..., None], p


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_numpy_reference(causal):
    rng = np.random.default_rng(5)
    q, v, k = _rand(rng, 2, 3, 4), _rand(rng, 2, 5, 4), _rand(rng, 2, 5, 4)
    q_mask = np.array([[1, 0, 1], [1, 1, 1]], bool)
    v_mask = np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]], bool)
    layer = layers.Attention(use_scale=True)
    layer.build([q.shape, v.shape, k.shape])
    layer.scale.assign(np.float32(0.7))
    out, p = layer([q, v, k], mask=[q_mask, v_mask], return_attention_scores=True,
                   use_causal_mask=causal)
    want, want_p = _dot_reference(q, v, k, 0.7, q_mask, v_mask, causal)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(p), want_p, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls,kwargs", [(layers.Attention, dict(use_scale=True)),
                                        (layers.Attention, dict(score_mode="concat",
                                                                use_scale=True)),
                                        (layers.AdditiveAttention, {})])
def test_attention_gradients_match_finite_differences(cls, kwargs):
    rng = np.random.default_rng(6)
    q, v = _rand(rng, 2, 3, 4), _rand(rng, 2, 4, 4)
    layer = cls(**kwargs)
    layer.build([q.shape, v.shape])
    _fd_layer(layer, [q, v], lambda lay, a, b: lay([a, b], use_causal_mask=True), rng)


def test_additive_attention_reference_and_errors():
    rng = np.random.default_rng(7)
    q, v = _rand(rng, 1, 2, 3), _rand(rng, 1, 4, 3)
    layer = layers.AdditiveAttention()
    out = np.asarray(layer([q, v]))
    scale = np.asarray(layer.scale, np.float64)
    s = (scale * np.tanh(q[:, :, None, :] + v[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(out, np.einsum("bts,bsd->btd", _softmax(s), v), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="list of inputs"):
        layer(q)
    with pytest.raises(ValueError, match="score_mode"):
        layers.Attention(score_mode="sum")
    assert "score_mode" not in layer.get_config()


def test_attention_dropout_only_in_training():
    rng = np.random.default_rng(8)
    q = _rand(rng, 2, 6, 4)
    layer = layers.Attention(dropout=0.5, seed=1)
    np.testing.assert_array_equal(np.asarray(layer([q, q])), np.asarray(layer([q, q])))
    assert not np.allclose(np.asarray(layer([q, q], training=True)), np.asarray(layer([q, q])))


# ---- EinsumDense ----

@pytest.mark.parametrize("eq,out,bias,shape", [
    ("ab,bc->ac", 3, "c", (2, 4)),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 3, 4)),
    ("abcd,cde->abe", (None, 3), "e", (2, 3, 2, 4)),
    ("abc,dc->adb", (3, 4), "d", (2, 4, 2)),
    ("...b,bc->...c", 3, None, (2, 2, 4)),
    ("abc,cde->abde", (None, 2, 3), "e", (2, 3, 4)),  # bias on part of the produced axes
    ("abc,cde->abde", (None, 2, 3), None, (2, 3, 4)),
])
def test_einsum_dense_values_and_gradients(eq, out, bias, shape):
    """Plain projections run as one fused dense op, the others as matmul + add: both checked
    with a non-zero bias."""
    rng = np.random.default_rng(9)
    x = _rand(rng, *shape)
    layer = layers.EinsumDense(eq, out, bias_axes=bias, activation="tanh")
    layer.build(x.shape)
    if bias:
        layer.bias.assign(rng.standard_normal(layer.bias.shape).astype(np.float32))
    y = np.asarray(layer(x))
    want = np.einsum(eq, x.astype(np.float64), np.asarray(layer.kernel, np.float64))
    if bias:
        want = want + np.asarray(layer.bias)
    np.testing.assert_allclose(y, np.tanh(want), rtol=1e-5, atol=1e-6)
    _fd_layer(layer, [x], lambda lay, a: lay(a), rng)


@pytest.mark.parametrize("eq,message", [
    ("abc,cd", "Invalid einsum equation"),
    ("abc,bc->abc", "not supported"),
    ("aab,bc->ac", "repeats a letter"),
])
def test_einsum_dense_refuses_unsupported_equations(eq, message):
    with pytest.raises(ValueError, match=message):
        layers.EinsumDense(eq, 3)


def test_einsum_dense_shape_errors_and_layer_test():
    with pytest.raises(ValueError, match="do not match at shared dimension"):
        layers.EinsumDense("abc,cd->abd", (5, 2)).build((None, 3, 4))
    with pytest.raises(ValueError, match="Bias dimension 'x'"):
        layers.EinsumDense("ab,bc->ac", 2, bias_axes="x").build((None, 3))
    run_layer_test(layers.EinsumDense, dict(equation="abc,cde->abde", output_shape=(None, 2, 3),
                                            bias_axes="de"),
                   input_shape=(2, 4, 5), expected_output_shape=(2, 4, 2, 3),
                   expected_num_trainable_weights=2)


# ---- RMSNormalization / Identity ----

@pytest.mark.parametrize("axis", [-1, [1, 2]])
def test_rms_normalization_reference_and_gradients(axis):
    rng = np.random.default_rng(10)
    x = _rand(rng, 2, 3, 4)
    layer = layers.RMSNormalization(axis=axis)
    layer.build(x.shape)
    layer.scale.assign(_rand(rng, *layer.scale.shape))
    axes = (2,) if axis == -1 else (1, 2)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 ** 2).mean(axes, keepdims=True) + 1e-6) * np.asarray(layer.scale)
    np.testing.assert_allclose(np.asarray(layer(x)), want, rtol=1e-5, atol=1e-6)
    _fd_layer(layer, [x], lambda lay, a: lay(a), rng)
    run_layer_test(layers.RMSNormalization, dict(axis=axis), input_shape=(2, 3, 4),
                   expected_output_shape=(2, 3, 4), expected_num_trainable_weights=1)


def test_identity_passes_values_and_masks():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ids = layers.Input((3,), dtype="int32")
    h = layers.Embedding(5, 2, mask_zero=True)(ids)
    assert fkeras.engine.masking.get_keras_mask(layers.Identity()(h)) is not None
    np.testing.assert_array_equal(np.asarray(layers.Identity()(x)), x)
    run_layer_test(layers.Identity, {}, input_shape=(2, 3), expected_output_shape=(2, 3),
                   run_training_check=False)


@pytest.mark.parametrize("cls,kwargs,n_weights", [
    (layers.Attention, dict(use_scale=True), 1),
    (layers.Attention, dict(score_mode="concat", use_scale=True), 2),
    (layers.AdditiveAttention, dict(dropout=0.1), 1),
])
def test_attention_run_layer_test(cls, kwargs, n_weights):
    run_layer_test(cls, kwargs, input_shape=[(2, 3, 4), (2, 5, 4)],
                   expected_output_shape=(2, 3, 4), supports_masking=True,
                   expected_num_trainable_weights=n_weights)


@pytest.mark.parametrize("cls", [layers.MultiHeadAttention, layers.GroupQueryAttention])
def test_flash_attention_true_is_refused_naming_the_argument(cls):
    kwargs = {"num_heads": 2, "key_dim": 4} if cls is layers.MultiHeadAttention else {
        "head_dim": 4, "num_query_heads": 2, "num_key_value_heads": 1}
    with pytest.raises(ValueError, match="flash_attention=True"):
        cls(flash_attention=True, **kwargs)
    cls(flash_attention=False, **kwargs)  # accepted, as None
