"""Layer-norm kernels (last axis, x seen as (rows, D)): the compiled kernels and the reference
spec against an independent NumPy float64 formula on every ISA, ISA and thread-count agreement,
NaN propagation, hard numerics, argument checks, and finite differences through the op."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import layernorm as ref
from kernel_testing import assert_close, nans

EPS = 1e-3
ROWS = [1, 5, 64]
DS = [1, 7, 33, 128, 1000]
# (gamma, beta) present: both, gamma only, beta only, neither.
AFFINE = [(True, True), (True, False), (False, True), (False, False)]


def _numpy_forward(x, g, b, eps, rms):
    x = x.astype(np.float64)
    mu = x.mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + eps)
    z = (x if rms else x - mu) * inv
    y = z * (1.0 if g is None else g.astype(np.float64)) + (0.0 if b is None else b)
    return y, mu[:, 0], inv[:, 0], z


def _numpy_backward(dy, x, g, eps, rms):
    """Gradients by the chain rule written out element-wise, independent of the kernels'
    folded form: dx_i = sum_j dz_j * dz_j/dx_i."""
    x = x.astype(np.float64)
    dy = dy.astype(np.float64)
    n = x.shape[1]
    y, mu, inv, z = _numpy_forward(x, None, None, eps, rms)
    dz = dy * (1.0 if g is None else g.astype(np.float64))
    xc = x - mu[:, None]
    inv = inv[:, None]
    # d inv / d x_i = -inv^3 * xc_i / n ; d mu / d x_i = 1 / n
    d_inv = -(inv**3) * xc / n
    if rms:  # z_j = x_j * inv
        dx = dz * inv + d_inv * (dz * x).sum(axis=1, keepdims=True)
    else:  # z_j = xc_j * inv
        dx = (dz - dz.mean(axis=1, keepdims=True)) * inv + d_inv * (dz * xc).sum(axis=1,
                                                                             keepdims=True)
    return dx, (dy * z).sum(axis=0), dy.sum(axis=0)


def _data(rng, rows, D, affine, offset=3.0, scale=2.0):
    x = (rng.standard_normal((rows, D)) * scale + offset).astype(np.float32)
    g = (rng.standard_normal(D) + 1).astype(np.float32) if affine[0] else None
    b = rng.standard_normal(D).astype(np.float32) if affine[1] else None
    dy = rng.standard_normal((rows, D)).astype(np.float32)
    return x, g, b, dy


def _run(x, g, b, dy, rms, eps=EPS):
    rows, D = x.shape
    y, mean, rstd = nans((rows, D)), nans((rows,)), nans((rows,))
    _C.layer_norm_forward(y, mean, rstd, x, g, b, rows, D, eps, rms)
    dx, dg, db = nans((rows, D)), nans((D,)), nans((D,))
    _C.layer_norm_backward(dx, dg if g is not None else None, db if b is not None else None,
                           dy, x, mean, rstd, g, rows, D, rms)
    return y, mean, rstd, dx, dg, db


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize("D", DS)
@pytest.mark.parametrize("rows", ROWS)
def test_compiled_against_numpy(isa, rows, D, affine, rms):
    rng = np.random.default_rng(rows * 1000 + D)
    x, g, b, dy = _data(rng, rows, D, affine)
    y, mean, rstd, dx, dg, db = _run(x, g, b, dy, rms)
    y64, mu64, inv64, _ = _numpy_forward(x, g, b, EPS, rms)
    dx64, dg64, db64 = _numpy_backward(dy, x, g, EPS, rms)
    assert_close(y, y64, 2e-6, 2e-6, "y")
    assert_close(mean, mu64, 1e-6, 1e-6, "mean")
    assert_close(rstd, inv64, 1e-6, 0, "rstd")
    assert_close(dx, dx64, 1e-5, 1e-5, "dx")
    if g is not None:
        assert_close(dg, dg64, 1e-5, 1e-5 * np.sqrt(rows), "dgamma")
    if b is not None:
        assert_close(db, db64, 1e-6, 1e-5, "dbeta")


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("rows,D", [(5, 7), (64, 33), (3, 1000)])
def test_reference_against_numpy(rows, D, rms):
    rng = np.random.default_rng(7)
    x, g, b, dy = _data(rng, rows, D, (True, True))
    y, mean, rstd = np.empty((rows, D)), np.empty(rows), np.empty(rows)
    ref.layer_norm_forward(y, mean, rstd, x, g, b, rows, D, EPS, rms)
    y64, mu64, inv64, _ = _numpy_forward(x, g, b, EPS, rms)
    np.testing.assert_allclose(y, y64, rtol=1e-12, atol=1e-12)
    dx, dg, db = np.empty((rows, D)), np.empty(D), np.empty(D)
    ref.layer_norm_backward(dx, dg, db, dy, x, mean, rstd, g, rows, D, rms)
    for got, want in zip((dx, dg, db), _numpy_backward(dy, x, g, EPS, rms)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rms", [False, True])
def test_every_isa_agrees(rms):
    rng = np.random.default_rng(3)
    x, g, b, dy = _data(rng, 64, 131, (True, True))
    before = _C.cpu_isa()
    results = {}
    try:
        for name in ("scalar", "avx2", "avx512"):
            if _C.isa_supported(name):
                _C.set_cpu_isa(name)
                results[name] = _run(x, g, b, dy, rms)
    finally:
        _C.set_cpu_isa(before)
    base = results.pop("scalar")
    for name, outs in results.items():
        for label, a, e in zip(("y", "mean", "rstd", "dx", "dgamma", "dbeta"), outs, base):
            assert_close(a, e, 1e-6, 1e-6, f"{name} {label}")


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("rows,D", [(4096, 128), (1000, 33), (300000, 3)])
def test_thread_count_bitwise(rows, D, rms):
    rng = np.random.default_rng(5)
    x, g, b, dy = _data(rng, rows, D, (True, True))
    before = _C.num_threads()
    try:
        _C.set_num_threads(1)
        one = _run(x, g, b, dy, rms)
        _C.set_num_threads(2)
        two = _run(x, g, b, dy, rms)
    finally:
        _C.set_num_threads(before)
    for a, e in zip(one, two):
        assert np.array_equal(a, e)


def test_nan_and_inf_stay_in_their_row(isa):
    rng = np.random.default_rng(11)
    x, g, b, dy = _data(rng, 6, 33, (True, True))
    x[2, 5] = np.nan
    x[4, 0] = np.inf
    y, mean, rstd, dx, dg, db = _run(x, g, b, dy, False)
    for bad in (2, 4):
        assert np.isnan(y[bad]).all() and np.isnan(dx[bad]).all()
    good = [0, 1, 3, 5]
    assert np.isfinite(y[good]).all() and np.isfinite(dx[good]).all()
    assert np.isnan(dg).all()  # every column sees the bad rows' z
    assert np.isfinite(db).all()  # dbeta = sum dy does not depend on x


def test_large_mean_small_spread(isa):
    """mean 1e4, std 1e-2: E[x^2] - E[x]^2 would lose everything; two passes do not."""
    rng = np.random.default_rng(13)
    x = (1e4 + 1e-2 * rng.standard_normal((8, 100))).astype(np.float32)
    dy = rng.standard_normal((8, 100)).astype(np.float32)
    y, mean, rstd, dx, _, _ = _run(x, None, None, dy, False, eps=1e-12)
    y64, _, _, _ = _numpy_forward(x, None, None, 1e-12, False)
    dx64, _, _ = _numpy_backward(dy, x, None, 1e-12, False)
    assert_close(y, y64, 1e-4, 1e-4, "y")
    assert_close(dx, dx64, 1e-4, 1e-4 * float(np.abs(dx64).max()), "dx")


@pytest.mark.parametrize("rows,D", [(0, 5), (3, 0)])
def test_empty(rows, D):
    x = np.zeros((rows, D), np.float32)
    y, mean, rstd = nans((rows, D)), nans((rows,)), nans((rows,))
    _C.layer_norm_forward(y, mean, rstd, x, None, None, rows, D, 0.25, False)
    assert (mean == 0).all() and (rstd == 2).all()
    dg, db = nans((D,)), nans((D,))
    g = np.ones(D, np.float32)
    _C.layer_norm_backward(nans((rows, D)), dg, db, x, x, mean, rstd, g, rows, D, False)
    if rows == 0:
        assert (dg == 0).all() and (db == 0).all()


@pytest.mark.parametrize("case,match", [
    ("short_x", "x"),
    ("gamma_size", "gamma"),
    ("epsilon", "epsilon"),
    ("float64", "x"),
    ("alias", "overlap"),
])
def test_bad_arguments(case, match):
    x = np.ones((4, 8), np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(4, np.float32), np.empty(4, np.float32)
    g, eps = np.ones(8, np.float32), 1e-3
    if case == "short_x":
        x = x[:3]
    elif case == "gamma_size":
        g = np.ones(7, np.float32)
    elif case == "epsilon":
        eps = -1.0
    elif case == "float64":
        x = x.astype(np.float64)
    elif case == "alias":
        y = x
    with pytest.raises(ValueError, match=match):
        _C.layer_norm_forward(y, mean, rstd, x, g, None, 4, 8, eps, False)


# ---- through the op: the kernel path (last axis) against the float64 NumPy path ----

def _op_grads(device, x, g, b, cot, axis, rms):
    import fkeras
    from fkeras.ops.normalization import layer_norm

    with fkeras.device(device):
        dt = np.float64 if device == "reference" else np.float32
        xs = [np.asarray(a, dt) for a in (x, g, b)]
        with fkeras.GradientTape() as tape:
            tape.watch(xs)
            y = layer_norm(xs[0], xs[1], None if rms else xs[2], axis=axis, epsilon=EPS,
                           rms_scaling=rms)
        grads = tape.gradient(y, xs, output_gradients=np.asarray(cot, dt))
    return np.asarray(y), grads


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 33), (5, 128), (4, 1)])
def test_op_kernel_path_matches_numpy_path(shape, rms):
    """The cpu device's kernel path against the reference device's, and that against the op's
    own NumPy path (the same rows seen as (..., 1, D) over two axes, which the kernels do not
    take)."""
    rng = np.random.default_rng(17)
    D = shape[-1]
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    g = (rng.standard_normal(D) + 1).astype(np.float32)
    b = rng.standard_normal(D).astype(np.float32)
    cot = rng.standard_normal(shape)
    y_cpu, gr_cpu = _op_grads("cpu", x, g, b, cot, -1, rms)
    y_ref, gr_ref = _op_grads("reference", x, g, b, cot, -1, rms)
    assert y_cpu.dtype == np.float32
    assert_close(y_cpu, y_ref, 2e-6, 2e-6, "y")
    names = ("dx", "dgamma") if rms else ("dx", "dgamma", "dbeta")
    for name, a, e in zip(names, gr_cpu, gr_ref):
        assert_close(a, e, 1e-5, 1e-5, name)
    # The NumPy branch: the same rows seen as (..., 1, D), normalized over the last two axes.
    x4 = x[..., None, :]
    y_np, gr_np = _op_grads("reference", x4, g.reshape(1, D), b.reshape(1, D),
                            cot[..., None, :], [-2, -1], rms)
    np.testing.assert_allclose(y_np.reshape(shape), y_ref, rtol=1e-12, atol=1e-12)
    for a, e in zip(gr_np[:len(names)], gr_ref):
        np.testing.assert_allclose(np.asarray(a).reshape(np.shape(e)), e, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("rms", [False, True])
def test_op_finite_differences(rms):
    rng = np.random.default_rng(19)
    x = rng.standard_normal((3, 4, 7)) * 2 + 1
    g = rng.standard_normal(7) + 1
    b = rng.standard_normal(7)
    cot = rng.standard_normal(x.shape)
    _, grads = _op_grads("reference", x, g, b, cot, -1, rms)

    def loss(xa, ga, ba):
        y, _ = _op_grads("reference", xa, ga, ba, cot, -1, rms)
        return float(np.sum(y * cot))

    eps = 1e-6
    args = [x, g, b]
    for i, grad in enumerate(grads[:2] if rms else grads):
        v = rng.standard_normal(args[i].shape)
        plus = [a + eps * v if j == i else a for j, a in enumerate(args)]
        minus = [a - eps * v if j == i else a for j, a in enumerate(args)]
        numeric = (loss(*plus) - loss(*minus)) / (2 * eps)
        analytic = float(np.sum(np.asarray(grad) * v))
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(numeric)), (i, numeric, analytic)


@pytest.mark.parametrize("kind", ["int32", "float64", "strided"])
def test_op_kernel_path_takes_any_input_layout(kind):
    """Integer, float64 and non-contiguous inputs reach the kernel as C-contiguous float32."""
    from fkeras import ops

    rng = np.random.default_rng(23)
    base = rng.integers(-5, 6, size=(4, 18))
    x = {"int32": base[:, :9].astype(np.int32), "float64": base[:, :9].astype(np.float64),
         "strided": base.astype(np.float32)[:, ::2]}[kind]
    g = np.arange(1, 10).astype(np.int32 if kind == "int32" else np.float32)
    y = np.asarray(ops.layer_normalization(x, g, axis=-1, epsilon=EPS))
    want, _, _, _ = _numpy_forward(np.asarray(x, np.float64), g, None, EPS, False)
    assert y.dtype == np.float32
    assert_close(y, want, 2e-6, 2e-6, "y")
