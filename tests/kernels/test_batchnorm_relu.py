"""BatchNormalization + ReLU kernels (batchnorm_relu_*): the reference against NumPy float64 and
finite differences; the compiled kernels against the reference on every ISA and bit for bit
against the unfused pair (batchnorm_* then activation_*), which the plan fusion relies on; odd
sizes, optional arguments, non-finite cotangents, bad inputs."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import batchnorm as ref
from kernel_testing import assert_close, check_vjp, nans, rand

EPS = 1e-3

# (outer, C, inner): rows mode (inner < 16; 32-column blocks, single vectors, masked tails) and
# plane mode (inner >= 16; runs with tails of every length class on AVX-512 and AVX2).
SHAPES = [
    (1, 1, 1),
    (7, 5, 1),
    (5, 33, 1),
    (6, 13, 1),
    (64 * 8, 17, 1),
    (3, 5, 3),
    (2, 3, 16),
    (2, 3, 17),
    (4, 3, 30),
    (3, 2, 100),
    (9, 5000, 1),
    (2, 3, 40000),
    (64 * 26 * 26, 32, 1),  # the CNN+BN benchmark's first BN (channels last)
]


def _data(rng, shape):
    C = shape[1]
    x = (rng.standard_normal(shape) * 2.0 + 0.5).astype(np.float32)
    gamma = rand(rng, (C,)) + np.float32(1.0)
    beta = rand(rng, (C,))
    return x, gamma, beta


def _relu_forward_c(x, gamma, beta, shape):
    outer, C, inner = shape
    outs = (nans(shape), nans((C,)), nans((C,)), nans((C,)), nans((C,)), nans((C,)))
    _C.batchnorm_relu_forward_train(*outs, x, gamma, beta, outer, C, inner, EPS)
    return outs


def _relu_forward_ref(x, gamma, beta, shape):
    outer, C, inner = shape
    outs = (np.zeros(shape), *(np.zeros(C) for _ in range(5)))
    ref.batchnorm_relu_forward_train(*outs, x, gamma, beta, outer, C, inner, EPS)
    return outs


def _pair_c(x, gamma, beta, dy, shape):
    """The unfused pair on the compiled kernels: forward y and the backward's dx, dgamma, dbeta."""
    outer, C, inner = shape
    bn_y, var, mean, inv_std = nans(shape), nans(C), nans(C), nans(C)
    _C.batchnorm_forward_train(bn_y, var, mean, inv_std, x, gamma, beta, outer, C, inner, EPS)
    y = nans(shape)
    _C.activation_forward(y, bn_y, bn_y.size, codes.RELU, 0.0)
    g = nans(shape)
    _C.activation_backward(g, dy, bn_y, y, bn_y.size, codes.RELU, 0.0)
    grads = (nans(shape), nans(C), nans(C))
    _C.batchnorm_backward(*grads, g, x, mean, inv_std, gamma, outer, C, inner)
    return (y, var, mean, inv_std), grads


# ---- the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4, 1), (3, 4, 10)])
def test_reference_forward_matches_numpy(shape):
    rng = np.random.default_rng(1)
    x, gamma, beta = _data(rng, shape)
    y, var, mean, inv_std, scale, shift = _relu_forward_ref(x, gamma, beta, shape)
    per_channel = np.moveaxis(x.astype(np.float64), 1, 0).reshape(shape[1], -1)
    mu, v = per_channel.mean(axis=1), per_channel.var(axis=1)
    inv = 1 / np.sqrt(v + float(np.float32(EPS)))
    bn = (x - mu[:, None]) * inv[:, None] * gamma[:, None] + beta[:, None]
    np.testing.assert_allclose(y, np.maximum(bn, 0.0), rtol=1e-12, atol=1e-12)
    assert (y == 0).any() and (y > 0).any()
    np.testing.assert_allclose(scale, gamma * inv, rtol=1e-12)
    np.testing.assert_allclose(shift, beta, rtol=1e-12)
    np.testing.assert_allclose((x - mean[:, None]) * scale[:, None] + shift[:, None], bn,
                               rtol=1e-12, atol=1e-12)

    y_inf = np.zeros(shape)
    ref.batchnorm_relu_forward_infer(y_inf, x, mu, v, gamma, beta, *shape, EPS)
    np.testing.assert_allclose(y_inf, np.maximum(bn, 0.0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3, 1), (3, 4, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_reference_backward_matches_finite_differences(shape, affine):
    rng = np.random.default_rng(2)
    x, gamma, beta = (a.astype(np.float64) for a in _data(rng, shape))
    inputs = {"x": x, "gamma": gamma, "beta": beta} if affine else {"x": x}

    def f(xs):
        return {"y": _relu_forward_ref(xs["x"], xs.get("gamma"), xs.get("beta"), shape)[0]}

    y, _, mean, inv_std, scale, shift = _relu_forward_ref(x, inputs.get("gamma"),
                                                          inputs.get("beta"), shape)
    assert (y == 0).any() and (y > 0).any()  # both sides of the kink are exercised
    dy = rng.standard_normal(shape)
    C = shape[1]
    dx, dgamma, dbeta = np.zeros(shape), np.zeros(C), np.zeros(C)
    ref.batchnorm_relu_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, scale, shift,
                                inputs.get("gamma"), *shape)
    grads = {"x": dx, "gamma": dgamma, "beta": dbeta} if affine else {"x": dx}
    check_vjp(f, inputs, {"y": dy}, grads, rng=rng)


# ---- compiled ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_matches_reference(isa, shape):
    rng = np.random.default_rng(sum(shape))
    x, gamma, beta = _data(rng, shape)
    got = _relu_forward_c(x, gamma, beta, shape)
    want = _relu_forward_ref(x, gamma, beta, shape)
    for name, g, w in zip(("y", "var", "mean", "inv_std", "scale", "shift"), got, want):
        assert_close(g, w, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(w).max())), name=name)
    _, _, mean, inv_std, scale, shift = got
    C = shape[1]
    dy = rand(rng, shape)
    dx, dgamma, dbeta = nans(shape), nans(C), nans(C)
    _C.batchnorm_relu_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, scale, shift, gamma,
                               *shape)
    # The reference, given the compiled forward's saved state (so the masks are the same).
    wdx, wdg, wdb = np.zeros(shape), np.zeros(C), np.zeros(C)
    ref.batchnorm_relu_backward(wdx, wdg, wdb, dy, x, mean, inv_std, scale, shift, gamma, *shape)
    dx_scale = float(np.abs(dy).max() * np.abs(gamma * inv_std).max())
    assert_close(dx, wdx, rtol=1e-5, atol=1e-5 * dx_scale, name="dx")
    assert_close(dgamma, wdg, rtol=1e-5, atol=1e-5 * max(1e-3, np.abs(wdg).max()), name="dgamma")
    assert_close(dbeta, wdb, rtol=1e-5, atol=1e-5 * max(1e-3, np.abs(wdb).max()), name="dbeta")

    var = (rng.random(C) + 0.5).astype(np.float32)
    y, wy = nans(shape), np.zeros(shape)
    _C.batchnorm_relu_forward_infer(y, x, mean, var, gamma, beta, *shape, EPS)
    ref.batchnorm_relu_forward_infer(wy, x, mean, var, gamma, beta, *shape, EPS)
    assert_close(y, wy, rtol=1e-5, atol=1e-5, name="y (infer)")


@pytest.mark.parametrize("shape", SHAPES[:-1], ids=str)
def test_compiled_equals_the_unfused_pair_bit_for_bit(isa, shape):
    # The fused backward recomputes the ReLU mask from x with the forward's float32 operations
    # and gates dy by a multiply, as activation_backward does: every output is identical.
    rng = np.random.default_rng(7 + sum(shape))
    x, gamma, beta = _data(rng, shape)
    dy = rand(rng, shape)
    fwd = _relu_forward_c(x, gamma, beta, shape)
    (y, var, mean, inv_std), grads = _pair_c(x, gamma, beta, dy, shape)
    for a, b in zip(fwd[:4], (y, var, mean, inv_std)):
        np.testing.assert_array_equal(a, b)
    C = shape[1]
    got = (nans(shape), nans(C), nans(C))
    _C.batchnorm_relu_backward(*got, dy, x, *fwd[2:4], *fwd[4:6], gamma, *shape)
    for a, b in zip(got, grads):
        np.testing.assert_array_equal(a, b)

    y_inf, y_pair = nans(shape), nans(shape)
    _C.batchnorm_relu_forward_infer(y_inf, x, mean, var, gamma, beta, *shape, EPS)
    _C.batchnorm_forward_infer(y_pair, x, mean, var, gamma, beta, *shape, EPS)
    _C.activation_forward(y_pair, y_pair.copy(), y_pair.size, codes.RELU, 0.0)
    np.testing.assert_array_equal(y_inf, y_pair)


@pytest.mark.parametrize("shape", [(7, 5, 1), (3, 4, 20)], ids=str)
def test_optional_gamma_beta_and_outputs(isa, shape):
    rng = np.random.default_rng(5)
    x, gamma, beta = _data(rng, shape)
    C = shape[1]
    for g, b in ((None, None), (gamma, None), (None, beta)):
        fwd = _relu_forward_c(x, g, b, shape)
        want = _relu_forward_ref(x, g, b, shape)
        assert_close(fwd[0], want[0], rtol=1e-5, atol=1e-5, name="y")
        dy = rand(rng, shape)
        full = (nans(shape), nans(C), nans(C))
        _C.batchnorm_relu_backward(*full, dy, x, *fwd[2:6], g, *shape)
        for i in range(3):
            part = [None, None, None]
            part[i] = nans(full[i].shape)
            _C.batchnorm_relu_backward(*part, dy, x, *fwd[2:6], g, *shape)
            np.testing.assert_array_equal(part[i], full[i])
        _C.batchnorm_relu_backward(None, None, None, dy, x, *fwd[2:6], g, *shape)


def test_non_finite_cotangents_propagate_as_in_the_pair(isa):
    # An infinite dy where the ReLU is closed: dy * 0 = NaN in the pair, so in the fused op.
    rng = np.random.default_rng(8)
    shape = (40, 3, 5)
    x, gamma, beta = _data(rng, shape)
    dy = rand(rng, shape)
    fwd = _relu_forward_c(x, gamma, beta, shape)
    closed = np.argwhere(fwd[0] == 0)[0]
    dy[tuple(closed)] = np.inf
    _, grads = _pair_c(x, gamma, beta, dy, shape)
    got = (nans(shape), nans(3), nans(3))
    _C.batchnorm_relu_backward(*got, dy, x, *fwd[2:6], gamma, *shape)
    for a, b in zip(got, grads):
        np.testing.assert_array_equal(a, b)  # NaN where the pair gives NaN
    assert np.isnan(got[1][closed[1]])


def test_empty_batch_and_no_channels():
    x = np.zeros((0, 3, 4), np.float32)
    outs = [nans(3) for _ in range(5)]
    gamma = np.array([1.0, 2.0, -1.0], np.float32)
    _C.batchnorm_relu_forward_train(np.zeros_like(x), *outs, x, gamma, None, 0, 3, 4, EPS)
    var, mean, inv_std, scale, shift = outs
    np.testing.assert_array_equal(mean, 0)
    np.testing.assert_array_equal(var, 0)
    assert_close(scale, gamma * inv_std, name="scale")
    np.testing.assert_array_equal(shift, 0)
    dgamma, dbeta = nans(3), nans(3)
    _C.batchnorm_relu_backward(np.zeros_like(x), dgamma, dbeta, x, x, mean, inv_std, scale,
                               shift, None, 0, 3, 4)
    np.testing.assert_array_equal(dgamma, 0)
    np.testing.assert_array_equal(dbeta, 0)
    e = np.zeros((4, 0, 2), np.float32)
    _C.batchnorm_relu_forward_train(e, *(nans(0) for _ in range(5)), e, None, None, 4, 0, 2, EPS)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"x": np.ones((4, 3, 2))}, "dtype float32"),
        ({"scale": np.zeros(4, np.float32)}, "scale"),
        ({"shift": None}, "required"),
        ({"epsilon": -1.0}, "epsilon"),
    ],
)
def test_forward_train_rejects_bad_inputs(change, match):
    shape = (4, 3, 2)
    args = {"y": np.zeros(shape, np.float32), "var": np.zeros(3, np.float32),
            "mean": np.zeros(3, np.float32), "inv_std": np.zeros(3, np.float32),
            "scale": np.zeros(3, np.float32), "shift": np.zeros(3, np.float32),
            "x": np.ones(shape, np.float32), "gamma": None, "beta": None, "outer": 4, "C": 3,
            "inner": 2, "epsilon": EPS}
    args.update(change)
    with pytest.raises(ValueError, match=match):
        _C.batchnorm_relu_forward_train(**args)


def test_backward_rejects_bad_inputs():
    x = np.ones((4, 3, 2), np.float32)
    c = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="shift"):
        _C.batchnorm_relu_backward(None, None, None, x, x, c, c, c, c[:2], None, 4, 3, 2)
    with pytest.raises(ValueError, match="dy"):
        _C.batchnorm_relu_backward(None, None, None, x.astype(np.float64), x, c, c, c, c, None,
                                   4, 3, 2)
