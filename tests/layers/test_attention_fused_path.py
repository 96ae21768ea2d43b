"""MultiHeadAttention / GroupQueryAttention on the fused attention kernel: the same outputs,
dropout masks and gradients as the composed path (return_attention_scores=True takes it)."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def _pair(cls, kwargs, q, v):
    a, b = cls(**kwargs), cls(**kwargs)
    a.build(q.shape, v.shape)
    b.build(q.shape, v.shape)
    b.set_weights(a.get_weights())
    return a, b


CONFIGS = [
    (layers.MultiHeadAttention, dict(num_heads=4, key_dim=8)),
    (layers.MultiHeadAttention, dict(num_heads=2, key_dim=6, value_dim=5, dropout=0.3, seed=7)),
    (layers.GroupQueryAttention, dict(head_dim=8, num_query_heads=4, num_key_value_heads=2)),
    (layers.GroupQueryAttention, dict(head_dim=4, num_query_heads=6, num_key_value_heads=3,
                                      dropout=0.4, seed=3)),
]


@pytest.mark.parametrize("cls,kwargs", CONFIGS)
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_path_equals_composed_path(cls, kwargs, training, causal):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 70, 16)).astype(np.float32)
    v = rng.standard_normal((3, 66, 16)).astype(np.float32)
    mask = rng.random((3, 70, 66)) < 0.8
    mask[..., 0] = True  # every row sees a key: both paths agree on fully masked rows then
    fused_layer, composed_layer = _pair(cls, kwargs, q, v)
    fused = fused_layer(q, v, attention_mask=mask, training=training, use_causal_mask=causal)
    composed, _ = composed_layer(q, v, attention_mask=mask, training=training,
                                 use_causal_mask=causal, return_attention_scores=True)
    np.testing.assert_allclose(np.asarray(fused), np.asarray(composed), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls,kwargs", CONFIGS[:3])
def test_fused_path_gradients_equal_composed_path(cls, kwargs):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 9, 16)).astype(np.float32)
    v = rng.standard_normal((2, 11, 16)).astype(np.float32)
    grads = []
    for layer, scores in zip(_pair(cls, kwargs, q, v), (False, True)):
        with fkeras.GradientTape() as tape:
            out = layer(q, v, use_causal_mask=True, training=True,
                        return_attention_scores=scores)
            out = out[0] if scores else out
            loss = fkeras.ops.sum(fkeras.ops.multiply(out, out))
        grads.append([np.asarray(g) for g in tape.gradient(loss, layer.trainable_weights)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_fused_path_trains_inside_fit():
    x = np.random.default_rng(2).standard_normal((16, 12, 8)).astype(np.float32)
    inp = fkeras.Input((12, 8))
    h = layers.MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.1, seed=1)(
        inp, inp, use_causal_mask=True)
    model = fkeras.Model(inp, layers.Dense(1)(layers.GlobalAveragePooling1D()(h)))
    model.compile(optimizer="adam", loss="mse")
    hist = model.fit(x, x.sum((1, 2))[:, None] * 0.1, epochs=3, batch_size=8, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()
