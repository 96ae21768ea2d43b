"""Attention-family layers against Keras 3 (torch backend) with the same weights: outputs,
attention scores, masks (explicit, causal, padding masks carried by the inputs), gradients
after one SGD step, configs, and a small transformer block trained with fit."""

import numpy as np
import pytest
from keras_parity import keras, randn, to_np

import fkeras
from fkeras import layers

TOL = dict(rtol=1e-5, atol=2e-6)


def _pair(k_layer, f_layer, *build_shapes):
    """Builds both layers and copies Keras's weights into fkeras's."""
    k_layer.build(*build_shapes)
    f_layer.build(*build_shapes)
    f_layer.set_weights(k_layer.get_weights())
    return k_layer, f_layer


def _visible_mask(rng, shape):
    """A random (B, T, S) boolean mask whose rows (and the causal prefix) are never empty:
    Keras's two attention paths disagree on fully masked rows (see docs/layers.md)."""
    m = rng.random(shape) > 0.4
    m[..., 0] = True
    return m


# ---- MultiHeadAttention ----

@pytest.mark.parametrize("kwargs", [
    dict(num_heads=2, key_dim=3),
    dict(num_heads=3, key_dim=2, value_dim=4, output_shape=5),
    dict(num_heads=2, key_dim=4, use_bias=False),
    dict(num_heads=2, key_dim=3, use_gate=True),
    dict(num_heads=2, key_dim=3, output_shape=(2, 3)),
])
@pytest.mark.parametrize("call", ["plain", "mask", "causal", "mask+causal", "key",
                                  "self+causal"])
def test_mha_forward_matches_keras(kwargs, call):
    rng = np.random.default_rng(0)
    q, v, k = randn(2, 5, 6, seed=1), randn(2, 7, 6, seed=2), randn(2, 7, 4, seed=3)
    if call == "key":
        km, fm = _pair(keras.layers.MultiHeadAttention(**kwargs),
                       layers.MultiHeadAttention(**kwargs), q.shape, v.shape, k.shape)
        args = (q, v, k)
    elif call == "self+causal":
        km, fm = _pair(keras.layers.MultiHeadAttention(**kwargs),
                       layers.MultiHeadAttention(**kwargs), q.shape, q.shape)
        args = (q, q)
    else:
        km, fm = _pair(keras.layers.MultiHeadAttention(**kwargs),
                       layers.MultiHeadAttention(**kwargs), q.shape, v.shape)
        args = (q, v)
    extra = {}
    if "mask" in call:
        extra["attention_mask"] = _visible_mask(rng, (2, 5, 7))
    if "causal" in call:
        extra["use_causal_mask"] = True
    ko, ks = km(*args, return_attention_scores=True, **extra)
    fo, fs = fm(*args, return_attention_scores=True, **extra)
    np.testing.assert_allclose(np.asarray(fo), to_np(ko), **TOL)
    np.testing.assert_allclose(np.asarray(fs), to_np(ks), **TOL)
    # Without the scores Keras runs its fused dot_product_attention path: same numbers.
    np.testing.assert_allclose(np.asarray(fm(*args, **extra)), to_np(km(*args, **extra)), **TOL)


@pytest.mark.parametrize("axes", [None, 2, (1, 2)])
def test_mha_attention_axes_match_keras(axes):
    x = randn(2, 3, 4, 6, seed=4)
    km, fm = _pair(keras.layers.MultiHeadAttention(2, 3, attention_axes=axes),
                   layers.MultiHeadAttention(2, 3, attention_axes=axes), x.shape, x.shape)
    ko, ks = km(x, x, return_attention_scores=True)
    fo, fs = fm(x, x, return_attention_scores=True)
    assert fs.shape == tuple(ks.shape)
    np.testing.assert_allclose(np.asarray(fo), to_np(ko), **TOL)
    np.testing.assert_allclose(np.asarray(fs), to_np(ks), **TOL)


@pytest.mark.parametrize("make", [
    lambda L: L.MultiHeadAttention(2, 3),
    lambda L: L.MultiHeadAttention(2, 3, dropout=0.2),  # Keras's explicit path
    lambda L: L.GroupQueryAttention(head_dim=3, num_query_heads=2, num_key_value_heads=1),
    lambda L: L.GroupQueryAttention(head_dim=3, num_query_heads=2, num_key_value_heads=1,
                                    dropout=0.2),
])
def test_padding_masks_from_embedding_match_keras(make):
    """Query and value masks travel on the tensors (Embedding(mask_zero=True)) in a model;
    padded query rows (all keys masked) follow Keras's path-dependent values."""
    ids = np.array([[3, 5, 2, 0, 0], [7, 1, 0, 0, 0]])
    models = []
    for lib in (keras, fkeras):
        inp = lib.Input((5,), dtype="int32")
        h = lib.layers.Embedding(10, 6, mask_zero=True)(inp)
        out = make(lib.layers)(h, h)
        models.append(lib.Model(inp, out))
    models[1].set_weights(models[0].get_weights())
    want, got = to_np(models[0](ids)), np.asarray(models[1](ids))
    np.testing.assert_allclose(got, want, **TOL)
    mask = fkeras.engine.masking.get_keras_mask(models[1].layers[-1](
        models[1].layers[1](ids), models[1].layers[1](ids)))
    np.testing.assert_array_equal(np.asarray(mask), ids != 0)


def test_mha_gradients_after_one_sgd_step_match_keras():
    q, v = randn(3, 4, 6, seed=5), randn(3, 5, 6, seed=6)
    target = randn(3, 4, 6, seed=7)
    models = []
    for lib in (keras, fkeras):
        qi, vi = lib.Input((4, 6)), lib.Input((5, 6))
        out = lib.layers.MultiHeadAttention(2, 3)(qi, vi, use_causal_mask=False)
        m = lib.Model([qi, vi], out)
        m.compile(optimizer=lib.optimizers.SGD(0.1), loss="mse")
        models.append(m)
    models[1].set_weights(models[0].get_weights())
    for m in models:
        m.train_on_batch([q, v], target)
    for a, b in zip(models[0].get_weights(), models[1].get_weights()):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_mha_config_matches_keras():
    kwargs = dict(num_heads=2, key_dim=3, value_dim=4, dropout=0.1, output_shape=(5,),
                  attention_axes=(1,), use_gate=True, seed=3)
    kc = keras.layers.MultiHeadAttention(**kwargs).get_config()
    fc = layers.MultiHeadAttention(**kwargs).get_config()
    assert set(kc) == set(fc)
    for key in ("num_heads", "key_dim", "value_dim", "dropout", "use_bias", "use_gate",
                "output_shape", "attention_axes", "seed"):
        assert fc[key] == kc[key], key
    # Keras reads fkeras's config and the reverse.
    keras.layers.MultiHeadAttention.from_config({k: v for k, v in fc.items() if k != "dtype"})


# ---- GroupQueryAttention ----

@pytest.mark.parametrize("call", ["plain", "mask", "causal"])
@pytest.mark.parametrize("heads", [(4, 2), (2, 2), (3, 1)])
def test_gqa_forward_matches_keras(heads, call):
    rng = np.random.default_rng(1)
    q, v = randn(2, 5, 6, seed=8), randn(2, 6, 6, seed=9)
    kwargs = dict(head_dim=3, num_query_heads=heads[0], num_key_value_heads=heads[1])
    km, fm = _pair(keras.layers.GroupQueryAttention(**kwargs),
                   layers.GroupQueryAttention(**kwargs), q.shape, v.shape)
    extra = {"mask": dict(attention_mask=_visible_mask(rng, (2, 5, 6))),
             "causal": dict(use_causal_mask=True)}.get(call, {})
    ko, ks = km(q, v, return_attention_scores=True, **extra)
    fo, fs = fm(q, v, return_attention_scores=True, **extra)
    np.testing.assert_allclose(np.asarray(fo), to_np(ko), **TOL)
    np.testing.assert_allclose(np.asarray(fs), to_np(ks), **TOL)
    assert set(fm.get_config()) == set(km.get_config())


# ---- Attention / AdditiveAttention ----

@pytest.mark.parametrize("cls,kwargs", [
    ("Attention", {}), ("Attention", dict(use_scale=True)),
    ("Attention", dict(score_mode="concat")),
    ("Attention", dict(score_mode="concat", use_scale=True)),
    ("AdditiveAttention", {}), ("AdditiveAttention", dict(use_scale=False)),
])
@pytest.mark.parametrize("call", ["plain", "masks", "causal", "key"])
def test_dot_and_additive_attention_match_keras(cls, kwargs, call):
    q, v, k = randn(2, 4, 3, seed=10), randn(2, 5, 3, seed=11), randn(2, 5, 3, seed=12)
    inputs = [q, v, k] if call == "key" else [q, v]
    kl, fl = getattr(keras.layers, cls)(**kwargs), getattr(layers, cls)(**kwargs)
    kl.build([x.shape for x in inputs])
    fl.build([x.shape for x in inputs])
    weights = [w * 0.7 + 0.1 for w in kl.get_weights()]  # not the initial ones
    kl.set_weights(weights)
    fl.set_weights(weights)
    extra = {}
    if call == "masks":
        extra["mask"] = [np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool),
                         np.array([[1, 0, 1, 1, 0], [1, 1, 1, 0, 0]], bool)]
    if call == "causal":
        extra["use_causal_mask"] = True
    ko, ks = kl(inputs, return_attention_scores=True, **extra)
    fo, fs = fl(inputs, return_attention_scores=True, **extra)
    np.testing.assert_allclose(np.asarray(fo), to_np(ko), **TOL)
    np.testing.assert_allclose(np.asarray(fs), to_np(ks), **TOL)
    assert fl.get_config().keys() == kl.get_config().keys()


# ---- EinsumDense, RMSNormalization, Identity ----

@pytest.mark.parametrize("eq,out,bias,shape", [
    ("ab,bc->ac", 4, "c", (3, 5)),
    ("abc,cd->abd", (None, 4), "d", (2, 3, 5)),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 3, 5)),
    ("abcd,cde->abe", (None, 4), "e", (2, 3, 2, 5)),
    ("abcd,de->abce", (None, None, 4), "e", (2, 3, 2, 5)),
    ("...b,bc->...c", 4, "c", (2, 3, 5)),
    ("ab...,bc->ac...", 4, "c", (2, 5, 3)),
    ("abc,dc->adb", (4, 3), None, (2, 3, 5)),
])
def test_einsum_dense_matches_keras(eq, out, bias, shape):
    x = randn(*shape, seed=13)
    kl = keras.layers.EinsumDense(eq, out, bias_axes=bias, activation="tanh")
    fl = layers.EinsumDense(eq, out, bias_axes=bias, activation="tanh")
    ko = kl(x)
    fl.build(x.shape)
    weights = [w + 0.1 for w in kl.get_weights()]
    kl.set_weights(weights)
    fl.set_weights(weights)
    np.testing.assert_allclose(np.asarray(fl(x)), to_np(kl(x)), **TOL)
    assert tuple(fl.compute_output_shape((None,) + shape[1:])) == tuple(ko.shape[:0]) + \
        (None,) + tuple(ko.shape[1:])
    fc, kc = fl.get_config(), kl.get_config()
    assert {k: fc[k] for k in ("equation", "output_shape", "bias_axes")} == \
        {k: kc[k] for k in ("equation", "output_shape", "bias_axes")}


def test_einsum_dense_initializer_fans_follow_keras():
    """Glorot over the kernel's input and output axes: the same limit as Keras's."""
    layer = layers.EinsumDense("abc,cde->abde", (None, 8, 16), bias_axes="de")
    layer.build((None, 4, 64))
    limit = np.sqrt(6.0 / (64 + 8 * 16))
    w = np.asarray(layer.kernel)
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.9 * limit


@pytest.mark.parametrize("axis", [-1, [1, 2], [2]])
def test_rms_normalization_matches_keras(axis):
    x = randn(2, 3, 4, seed=14)
    kl, fl = keras.layers.RMSNormalization(axis=axis, epsilon=1e-5), \
        layers.RMSNormalization(axis=axis, epsilon=1e-5)
    kl.build(x.shape)
    fl.build(x.shape)
    weights = [w * 1.5 - 0.2 for w in kl.get_weights()]
    kl.set_weights(weights)
    fl.set_weights(weights)
    np.testing.assert_allclose(np.asarray(fl(x)), to_np(kl(x)), **TOL)
    fc, kc = fl.get_config(), kl.get_config()
    assert {k: fc[k] for k in ("axis", "epsilon")} == {k: kc[k] for k in ("axis", "epsilon")}
    assert set(fc) == set(kc)


def test_mask_propagation_matches_keras():
    """Which of the new layers pass a mask on (it changes attention downstream)."""
    ids = np.array([[3, 5, 0]])
    for make in (lambda L: L.Identity(), lambda L: L.RMSNormalization(),
                 lambda L: L.EinsumDense("abc,cd->abd", (None, 4))):
        got = []
        for lib in (keras, fkeras):
            h = lib.layers.Embedding(10, 4, mask_zero=True)(lib.Input((3,), dtype="int32"))
            got.append(getattr(make(lib.layers)(h), "_keras_mask", None) is not None)
        assert got[0] == got[1], make


def test_identity_matches_keras():
    x = randn(2, 3, seed=15)
    np.testing.assert_array_equal(np.asarray(layers.Identity()(x)),
                                  to_np(keras.layers.Identity()(x)))


# ---- a transformer block trained with fit ----

def _transformer_block(lib, seq=6, dim=8, heads=2, ff=16):
    L = lib.layers
    inp = lib.Input((seq, dim))
    att = L.MultiHeadAttention(heads, dim // heads, dropout=0.0)(inp, inp, use_causal_mask=True)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([inp, att]))
    f = L.Dense(ff, activation="relu")(h)
    f = L.Dense(dim)(f)
    h = L.LayerNormalization(epsilon=1e-6)(L.Add()([h, f]))
    out = L.Dense(1)(L.GlobalAveragePooling1D()(h))
    return lib.Model(inp, out)


def test_transformer_block_fit_matches_keras():
    x, y = randn(32, 6, 8, seed=16), randn(32, 1, seed=17)
    keras.utils.set_random_seed(3)  # the same initial weights whatever ran before
    k_model, f_model = _transformer_block(keras), _transformer_block(fkeras)
    f_model.set_weights(k_model.get_weights())
    losses = []
    for lib, model in ((keras, k_model), (fkeras, f_model)):
        model.compile(optimizer=lib.optimizers.Adam(1e-2), loss="mse")
        hist = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses.append(hist.history["loss"])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4, atol=1e-4)
    assert losses[1][-1] < losses[1][0]
    for kw, fw in zip(k_model.weights, f_model.weights):
        if "key" in fw.path and "bias" in fw.path:
            continue  # zero gradient in exact arithmetic: Adam steps on rounding noise
        # Adam divides by sqrt(v): small gradients (query/key) amplify float32 rounding.
        np.testing.assert_allclose(np.asarray(fw), to_np(kw), rtol=1e-3, atol=1e-3,
                                   err_msg=fw.path)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("cls,kwargs", [
    ("MultiHeadAttention", dict(num_heads=2, key_dim=3, sliding_window=2)),
    ("GroupQueryAttention", dict(head_dim=3, num_query_heads=2, num_key_value_heads=1,
                                 sliding_window=3)),
])
def test_sliding_window_matches_keras(cls, kwargs, causal):
    x = randn(2, 6, 4, seed=18)
    kl, fl = _pair(getattr(keras.layers, cls)(**kwargs), getattr(layers, cls)(**kwargs),
                   x.shape, x.shape)
    for scores in (False, True):
        want = kl(x, x, use_causal_mask=causal, return_attention_scores=scores)
        got = fl(x, x, use_causal_mask=causal, return_attention_scores=scores)
        for g, w in zip(got if scores else [got], want if scores else [want]):
            np.testing.assert_allclose(np.asarray(g), to_np(w), **TOL)
    assert fl.get_config()["sliding_window"] == kwargs["sliding_window"]
    with pytest.raises(ValueError, match="sliding_window"):
        getattr(layers, cls)(**{**kwargs, "sliding_window": 0})
