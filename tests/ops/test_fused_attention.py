"""ops.dot_product_attention on the fused attention kernel (ops/attention.py): values against
the composed ops (flash_attention=False) and a float64 NumPy reference, masks in every
broadcastable form, grouped heads, gradients through the tape on both devices, symbolic
shapes, errors, and Keras 3 (torch backend) parity."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from op_testing import fd_check

R = np.random.default_rng(0)


def qkv(B=2, T=5, S=6, N=4, K=2, H=3, Hv=3, rng=R):
    return (rng.standard_normal((B, T, N, H)).astype(np.float32),
            rng.standard_normal((B, S, K, H)).astype(np.float32),
            rng.standard_normal((B, S, K, Hv)).astype(np.float32))


def numpy_attention(q, k, v, mask=None, causal=False, scale=None):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, 2), np.repeat(v, g, 2)
    s = np.einsum("btnh,bsnh->bnts", q, k) * (scale or 1 / np.sqrt(q.shape[-1]))
    keep = np.ones(s.shape, bool)
    if causal:
        keep &= np.tri(s.shape[2], s.shape[3], dtype=bool)
    if mask is not None:
        keep &= np.asarray(mask, bool)
    s = np.where(keep, s, -0.7 * np.finfo(np.float32).max)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, v)


MASKS = {
    "none": None,
    "2d (T, S)": R.random((5, 6)) < 0.7,
    "3d (1, T, S)": R.random((1, 5, 6)) < 0.7,
    "4d (B, 1, T, S)": R.random((2, 1, 5, 6)) < 0.7,
    "4d (B, N, T, S)": R.random((2, 4, 5, 6)) < 0.7,
    "key padding (B, 1, 1, S)": np.arange(6)[None, None, None] < np.array([3, 6])[:, None,
                                                                               None, None],
    "fully masked row": np.array([[True] * 6] * 2 + [[False] * 6] + [[True] * 6] * 2),
}


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("causal", [False, True])
def test_fused_matches_composed_and_numpy(mask_name, causal):
    q, k, v = qkv()
    mask = MASKS[mask_name]
    fused = np.asarray(ops.dot_product_attention(q, k, v, mask=mask, is_causal=causal))
    composed = np.asarray(ops.dot_product_attention(q, k, v, mask=mask, is_causal=causal,
                                                    flash_attention=False))
    want = numpy_attention(q, k, v, mask, causal)
    np.testing.assert_allclose(fused, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused, composed, rtol=1e-5, atol=1e-6)


def test_flash_attention_true_uses_the_kernel_and_refuses_what_it_cannot_fuse():
    q, k, v = qkv()
    out = ops.dot_product_attention(q, k, v, flash_attention=True, scale=0.3)
    np.testing.assert_allclose(np.asarray(out), numpy_attention(q, k, v, scale=0.3), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="does not take `bias`"):
        ops.dot_product_attention(q, k, v, bias=np.zeros((2, 4, 5, 6)), flash_attention=True)
    with pytest.raises(ValueError, match="attn_logits_soft_cap"):
        ops.dot_product_attention(q, k, v, attn_logits_soft_cap=5.0, flash_attention=True)


def test_mask_that_does_not_broadcast_is_a_clear_error():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="argument `mask` of shape .* does not broadcast"):
        ops.dot_product_attention(q, k, v, mask=np.ones((3, 1, 5, 6), bool))


@pytest.mark.parametrize("causal,mask_name", [(False, "none"), (True, "4d (B, N, T, S)"),
                                              (False, "key padding (B, 1, 1, S)")])
def test_gradients_through_the_tape_match_finite_differences(causal, mask_name):
    q, k, v = qkv(rng=np.random.default_rng(3))
    mask = MASKS[mask_name]
    fd_check(lambda a, b, c: ops.dot_product_attention(a, b, c, mask=mask, is_causal=causal),
             [q, k, v], [0, 1, 2], np.random.default_rng(1), tol=2e-6)


def test_cpu_gradients_match_the_composed_path():
    q, k, v = qkv(rng=np.random.default_rng(4))
    mask = MASKS["4d (B, 1, T, S)"]
    grads = []
    for flash in (None, False):
        xs = [fkeras.Variable(a) for a in (q, k, v)]
        with fkeras.GradientTape() as tape:
            out = ops.dot_product_attention(*xs, mask=mask, is_causal=True,
                                            flash_attention=flash)
            loss = ops.sum(ops.multiply(out, np.linspace(-1, 1, out.size).reshape(out.shape)))
        grads.append([np.asarray(g) for g in tape.gradient(loss, xs)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_symbolic_shapes():
    out = ops.dot_product_attention(KerasTensor((None, 7, 4, 8)), KerasTensor((None, 9, 2, 8)),
                                    KerasTensor((None, 9, 2, 5)))
    assert out.shape == (None, 7, 4, 5)


def test_matches_keras_with_mask_and_causal():
    keras = pytest.importorskip("keras")
    q, k, v = qkv(N=2, K=2)
    mask = MASKS["4d (B, 1, T, S)"]
    want = keras.ops.convert_to_numpy(
        keras.ops.dot_product_attention(q, k, v, mask=mask, is_causal=True))
    got = np.asarray(ops.dot_product_attention(q, k, v, mask=mask, is_causal=True))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
