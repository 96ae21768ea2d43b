"""Batch normalization kernels: the reference against NumPy and finite differences, the compiled
kernels against the reference on every ISA, hard numerics, optional arguments, bad inputs."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import batchnorm as ref
from kernel_testing import assert_close, check_vjp, nans, rand

EPS = 1e-3

# (outer, C, inner): rows mode (inner < 16: vectors across columns, with 32-column blocks,
# single vectors and masked tails) and plane mode (inner >= 16: vectors along each run); tails
# of every length class on AVX-512 (16 lanes, two 8-lane float64 halves) and AVX2 (8, 4 + 4).
SHAPES = [
    (1, 1, 1),
    (2, 3, 1),
    (1, 1, 7),
    (7, 5, 1),
    (64 * 8, 17, 1),
    (5, 33, 1),
    (3, 48, 1),
    (6, 13, 1),
    (3, 5, 3),
    (4, 16, 49),
    (2, 3, 16),
    (2, 3, 17),
    (4, 3, 30),
    (3, 2, 100),
    (9, 5000, 1),
    (2, 3, 40000),  # inner split into two pieces
    (131075, 16, 1),  # larger: more row chunks than the cap, several tiles per thread
]


def _data(rng, shape, offset=0.5, scale=2.0):
    C = shape[1]
    x = (rng.standard_normal(shape) * scale + offset).astype(np.float32)
    gamma = rand(rng, (C,)) + np.float32(1.0)
    beta = rand(rng, (C,))
    return x, gamma, beta


def _forward_ref(x, gamma, beta, shape, eps=EPS):
    outer, C, inner = shape
    outs = (np.zeros(shape), np.zeros(C), np.zeros(C), np.zeros(C))
    ref.batchnorm_forward_train(*outs, x, gamma, beta, outer, C, inner, eps)
    return outs


def _forward_c(x, gamma, beta, shape, eps=EPS):
    outer, C, inner = shape
    outs = (nans(shape), nans((C,)), nans((C,)), nans((C,)))
    _C.batchnorm_forward_train(*outs, x, gamma, beta, outer, C, inner, eps)
    return outs


# ---- the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 4, 1), (3, 4, 10), (1, 2, 5)])
def test_reference_forward_matches_numpy(shape):
    rng = np.random.default_rng(1)
    x, gamma, beta = _data(rng, shape)
    y, var, mean, inv_std = _forward_ref(x, gamma, beta, shape)
    # Independent formulation: channels to the front, one row of samples per channel.
    per_channel = np.moveaxis(x.astype(np.float64), 1, 0).reshape(shape[1], -1)
    mu, v = per_channel.mean(axis=1), per_channel.var(axis=1)
    eps = float(np.float32(EPS))
    expected = (x - mu[:, None]) / np.sqrt(v[:, None] + eps) * gamma[:, None] + beta[:, None]
    np.testing.assert_allclose(mean, mu, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, v, rtol=1e-12)
    np.testing.assert_allclose(inv_std, 1 / np.sqrt(v + eps), rtol=1e-12)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)

    y_inf = np.zeros(shape)
    ref.batchnorm_forward_infer(y_inf, x, mu, v, gamma, beta, *shape, EPS)
    np.testing.assert_allclose(y_inf, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3, 1), (3, 4, 6)])
@pytest.mark.parametrize("affine", [True, False])
def test_reference_backward_matches_finite_differences(shape, affine):
    rng = np.random.default_rng(2)
    x, gamma, beta = (a.astype(np.float64) for a in _data(rng, shape))
    C = shape[1]
    inputs = {"x": x, "gamma": gamma, "beta": beta} if affine else {"x": x}

    def f(xs):
        y, _, _, _ = _forward_ref(xs["x"], xs.get("gamma"), xs.get("beta"), shape)
        return {"y": y}

    _, _, mean, inv_std = _forward_ref(x, inputs.get("gamma"), inputs.get("beta"), shape)
    dy = rng.standard_normal(shape)
    dx, dgamma, dbeta = np.zeros(shape), np.zeros(C), np.zeros(C)
    ref.batchnorm_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, inputs.get("gamma"), *shape)
    grads = {"x": dx, "gamma": dgamma, "beta": dbeta} if affine else {"x": dx}
    check_vjp(f, inputs, {"y": dy}, grads, rng=rng)


def test_reference_backward_recentres_a_rounded_mean():
    # With the saved mean off by a little, the backward still gives the exact gradient.
    rng = np.random.default_rng(3)
    shape = (20, 3, 4)
    x, gamma, _ = (a.astype(np.float64) for a in _data(rng, shape))
    _, _, mean, inv_std = _forward_ref(x, gamma, None, shape)
    dy = rng.standard_normal(shape)
    exact = [np.zeros(shape), np.zeros(3), np.zeros(3)]
    shifted = [np.zeros(shape), np.zeros(3), np.zeros(3)]
    ref.batchnorm_backward(*exact, dy, x, mean, inv_std, gamma, *shape)
    ref.batchnorm_backward(*shifted, dy, x, mean + 1e-3, inv_std, gamma, *shape)
    for a, b in zip(exact, shifted):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


# ---- compiled against the reference --------------------------------------------------------


def _check_forward(x, gamma, beta, shape):
    got = _forward_c(x, gamma, beta, shape)
    want = _forward_ref(x, gamma, beta, shape)
    for name, g, w in zip(("y", "var", "mean", "inv_std"), got, want):
        assert_close(
            g, w, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(w).max(initial=0))), name=name
        )
    return got


def _check_backward(dy, x, mean, inv_std, gamma, shape, which=("dx", "dgamma", "dbeta")):
    C = shape[1]
    got = {
        k: nans(shape if k == "dx" else (C,)) if k in which else None
        for k in ("dx", "dgamma", "dbeta")
    }
    want = {"dx": np.zeros(shape), "dgamma": np.zeros(C), "dbeta": np.zeros(C)}
    _C.batchnorm_backward(
        got["dx"], got["dgamma"], got["dbeta"], dy, x, mean, inv_std, gamma, *shape
    )
    ref.batchnorm_backward(
        want["dx"], want["dgamma"], want["dbeta"], dy, x, mean, inv_std, gamma, *shape
    )
    g = np.ones(C) if gamma is None else gamma.astype(np.float64)
    # dx cancels to ~0 for tiny batches: measure its error against its natural scale.
    scales = {
        "dx": float(np.abs(dy).max(initial=0) * np.abs(g * inv_std).max(initial=0)),
        "dgamma": float(np.abs(want["dgamma"]).max(initial=0)),
        "dbeta": float(np.abs(want["dbeta"]).max(initial=0)),
    }
    for k in which:
        assert_close(got[k], want[k], rtol=1e-5, atol=1e-5 * max(scales[k], 1e-3), name=k)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_matches_reference(isa, shape):
    rng = np.random.default_rng(sum(shape))
    x, gamma, beta = _data(rng, shape)
    _, _, mean, inv_std = _check_forward(x, gamma, beta, shape)
    dy = rand(rng, shape)
    _check_backward(dy, x, mean, inv_std, gamma, shape)

    outer, C, inner = shape
    var = (rng.random(C) + 0.5).astype(np.float32)
    y, want = nans(shape), np.zeros(shape)
    _C.batchnorm_forward_infer(y, x, mean, var, gamma, beta, outer, C, inner, EPS)
    ref.batchnorm_forward_infer(want, x, mean, var, gamma, beta, outer, C, inner, EPS)
    assert_close(y, want, rtol=1e-5, atol=1e-5, name="y (infer)")


@pytest.mark.parametrize("shape", [(4096, 24, 1), (8, 24, 100), (40, 3, 5)], ids=str)
def test_hard_numerics_large_mean_small_std(isa, shape):
    # mean 1e4, std 1e-2: naive float32 sums lose the variance entirely, and the float32 saved
    # mean is off by up to 5% of a standard deviation. Checked against float64 on the same data.
    rng = np.random.default_rng(4)
    x = (1e4 + 1e-2 * rng.standard_normal(shape)).astype(np.float32)
    _, C, _ = shape
    gamma, beta = rand(rng, (C,)), rand(rng, (C,))
    y, var, mean, inv_std = _forward_c(x, gamma, beta, shape)
    want = _forward_ref(x, gamma, beta, shape)
    assert_close(var, want[1], rtol=1e-5, atol=0, name="var")
    assert_close(mean, want[2], rtol=1e-7, atol=0, name="mean")
    assert_close(inv_std, want[3], rtol=1e-5, atol=0, name="inv_std")
    assert_close(y, want[0], rtol=1e-5, atol=1e-5 * np.abs(want[0]).max(), name="y")
    _check_backward(rand(rng, shape), x, mean, inv_std, gamma, shape)


@pytest.mark.parametrize("shape", [(7, 5, 1), (3, 4, 20)], ids=str)
def test_optional_gamma_beta_and_outputs(isa, shape):
    rng = np.random.default_rng(5)
    x, gamma, beta = _data(rng, shape)
    for g, b in ((None, None), (gamma, None), (None, beta)):
        _, _, mean, inv_std = _check_forward(x, g, b, shape)
        dy = rand(rng, shape)
        for which in (("dx",), ("dgamma",), ("dbeta",), ("dgamma", "dbeta")):
            _check_backward(dy, x, mean, inv_std, g, shape, which)
    _C.batchnorm_backward(None, None, None, rand(rng, shape), x, mean, inv_std, None, *shape)


def test_results_do_not_depend_on_thread_count():
    # Every tile has its own partial sums, merged in a fixed order: bitwise equal results.
    rng = np.random.default_rng(6)
    cases = [
        (shape, *_data(rng, shape), rand(rng, shape)) for shape in ((20000, 24, 1), (16, 8, 900))
    ]
    before = _C.num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            _C.set_num_threads(threads)
            out = []
            for shape, x, gamma, beta, dy in cases:
                fwd = _forward_c(x, gamma, beta, shape)
                bwd = (nans(shape), nans(shape[1]), nans(shape[1]))
                _C.batchnorm_backward(*bwd, dy, x, fwd[2], fwd[3], gamma, *shape)
                out += [*fwd, *bwd]
            results.append(out)
    finally:
        _C.set_num_threads(before)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_empty_batch_and_no_channels():
    mean, var, inv_std = nans(3), nans(3), nans(3)
    x = np.zeros((0, 3, 4), np.float32)
    _C.batchnorm_forward_train(np.zeros_like(x), var, mean, inv_std, x, None, None, 0, 3, 4, EPS)
    np.testing.assert_array_equal(mean, 0)
    np.testing.assert_array_equal(var, 0)
    assert_close(inv_std, np.full(3, 1 / np.sqrt(np.float32(EPS))), name="inv_std")
    dgamma, dbeta = nans(3), nans(3)
    _C.batchnorm_backward(np.zeros_like(x), dgamma, dbeta, x, x, mean, inv_std, None, 0, 3, 4)
    np.testing.assert_array_equal(dgamma, 0)
    np.testing.assert_array_equal(dbeta, 0)
    e = np.zeros((4, 0, 2), np.float32)
    _C.batchnorm_forward_train(e, nans(0), nans(0), nans(0), e, None, None, 4, 0, 2, EPS)


# ---- bad inputs ----------------------------------------------------------------------------


def _train_args(shape=(4, 3, 2)):
    outer, C, inner = shape
    x = np.ones(shape, np.float32)
    return {
        "y": np.zeros(shape, np.float32),
        "var": np.zeros(C, np.float32),
        "mean": np.zeros(C, np.float32),
        "inv_std": np.zeros(C, np.float32),
        "x": x,
        "gamma": None,
        "beta": None,
        "outer": outer,
        "C": C,
        "inner": inner,
        "epsilon": EPS,
    }


@pytest.mark.parametrize(
    "change, match",
    [
        ({"x": np.ones((4, 3, 2))}, "dtype float32"),
        ({"y": np.zeros((4, 3, 3), np.float32)}, "expected shape"),
        ({"x": np.ones((4, 3, 4), np.float32)[:, :, ::2]}, "C-contiguous"),
        ({"gamma": np.ones(4, np.float32)}, "gamma"),
        ({"outer": -1}, "must be >= 0"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"var": None}, "required"),
    ],
)
def test_forward_train_rejects_bad_inputs(change, match):
    args = _train_args()
    args.update(change)
    with pytest.raises(ValueError, match=match):
        _C.batchnorm_forward_train(**args)


def test_read_only_outputs_are_rejected():
    args = _train_args()
    args["y"].setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        _C.batchnorm_forward_train(**args)
    x = np.ones((4, 3, 2), np.float32)
    c = np.ones(3, np.float32)
    dgamma = np.zeros(3, np.float32)
    dgamma.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        _C.batchnorm_backward(None, dgamma, None, x, x, c, c, None, 4, 3, 2)
    with pytest.raises(ValueError, match="mean"):
        _C.batchnorm_forward_infer(np.zeros_like(x), x, c[:2], c, None, None, 4, 3, 2, EPS)
    with pytest.raises(ValueError, match="dy"):
        _C.batchnorm_backward(None, None, None, x.astype(np.float64), x, c, c, None, 4, 3, 2)
