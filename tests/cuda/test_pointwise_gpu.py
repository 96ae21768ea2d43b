"""CUDA pointwise kernels (fkeras._C_cuda) against the CPU kernels (fkeras._C): same names and
arguments, outputs pre-filled with NaN, edge sizes 1, 7, 33, 1000 and larger. Skips without a
GPU (the `cuda` marker, tests/conftest.py)."""

import numpy as np
import pytest
from fkeras import _C

pytestmark = pytest.mark.cuda

SIZES = [1, 7, 33, 1000, 100003]
ROW_SHAPES = [(1, 1), (3, 7), (5, 33), (7, 1000), (2, 1025), (3, 5000), (1000, 10), (2, 100003)]
ALPHA = {4: 0.7, 13: 0.2}


def dev(gpu, a):
    return gpu.DeviceArray.from_host(np.ascontiguousarray(a))


def nan_dev(gpu, shape):
    return gpu.DeviceArray.from_host(np.full(shape, np.nan, np.float32))


def f32(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def close(got, want, rtol=2e-6, atol=1e-6, what=""):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN pattern")
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("code", range(14))
def test_activation(gpu, code):
    rng = np.random.default_rng(code)
    alpha = ALPHA.get(code, 0.0)
    for n in SIZES:
        x = f32(rng, n, 3.0)
        x[::17] = np.nan
        y = nan_dev(gpu, n)
        gpu.activation_forward(y, dev(gpu, x), n, code, alpha)
        want = np.full(n, np.nan, np.float32)
        _C.activation_forward(want, x, n, code, alpha)
        close(y.to_host(), want, what=f"act {code} n={n}")
        dy = f32(rng, n)
        dx = nan_dev(gpu, n)
        gpu.activation_backward(dx, dev(gpu, dy), dev(gpu, x), dev(gpu, want), n, code, alpha)
        want_dx = np.full(n, np.nan, np.float32)
        _C.activation_backward(want_dx, dy, x, want, n, code, alpha)
        close(dx.to_host(), want_dx, rtol=1e-5, atol=1e-6, what=f"act' {code} n={n}")


def test_activation_rejects_bad_code_and_size(gpu):
    x = dev(gpu, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="activation_forward.*'activation'.*14"):
        gpu.activation_forward(x, x, 4, 14, 0.0)
    with pytest.raises(ValueError, match="activation_forward.*'y'.*5 elements, received 4"):
        gpu.activation_forward(x, x, 5, 1, 0.0)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_rows(gpu, kind):
    rng = np.random.default_rng(1)
    fwd, bwd = getattr(_C, f"{kind}_forward"), getattr(_C, f"{kind}_backward")
    for rows, cols in ROW_SHAPES:
        x = f32(rng, (rows, cols), 5.0)
        x[0, 0] = np.nan  # a NaN row, as the CPU
        y = nan_dev(gpu, (rows, cols))
        getattr(gpu, f"{kind}_forward")(y, dev(gpu, x), rows, cols)
        want = np.full((rows, cols), np.nan, np.float32)
        fwd(want, x, rows, cols)
        close(y.to_host(), want, rtol=5e-6, atol=1e-7, what=f"{kind} {rows}x{cols}")
        dy = f32(rng, (rows, cols))
        dx = nan_dev(gpu, (rows, cols))
        getattr(gpu, f"{kind}_backward")(dx, dev(gpu, dy), dev(gpu, want), rows, cols)
        want_dx = np.full((rows, cols), np.nan, np.float32)
        bwd(want_dx, dy, want, rows, cols)
        close(dx.to_host(), want_dx, rtol=1e-5, atol=1e-6, what=f"{kind}' {rows}x{cols}")


def test_crossentropies(gpu):
    rng = np.random.default_rng(2)
    for rows, cols in ROW_SHAPES:
        logits = f32(rng, (rows, cols), 4.0)
        labels = rng.dirichlet(np.ones(cols), rows).astype(np.float32)
        loss, probs = nan_dev(gpu, rows), nan_dev(gpu, (rows, cols))
        gpu.softmax_crossentropy_forward(loss, probs, dev(gpu, logits), dev(gpu, labels), rows,
                                         cols)
        wl, wp = np.full(rows, np.nan, np.float32), np.full((rows, cols), np.nan, np.float32)
        _C.softmax_crossentropy_forward(wl, wp, logits, labels, rows, cols)
        close(loss.to_host(), wl, 1e-5, 1e-5, f"CE loss {rows}x{cols}")
        close(probs.to_host(), wp, 5e-6, 1e-7, f"CE probs {rows}x{cols}")
        dloss = f32(rng, rows)
        d = nan_dev(gpu, (rows, cols))
        gpu.softmax_crossentropy_backward(d, dev(gpu, dloss), dev(gpu, wp), dev(gpu, labels),
                                          rows, cols)
        wd = np.full((rows, cols), np.nan, np.float32)
        _C.softmax_crossentropy_backward(wd, dloss, wp, labels, rows, cols)
        close(d.to_host(), wd, 1e-5, 1e-6, f"CE grad {rows}x{cols}")

        sl = rng.integers(0, cols, rows).astype(np.int64)
        gpu.sparse_softmax_crossentropy_forward(loss, probs, dev(gpu, logits), dev(gpu, sl),
                                                rows, cols)
        _C.sparse_softmax_crossentropy_forward(wl, wp, logits, sl, rows, cols)
        close(loss.to_host(), wl, 1e-5, 1e-5, f"sparse CE {rows}x{cols}")
        gpu.sparse_softmax_crossentropy_backward(d, dev(gpu, dloss), dev(gpu, wp), dev(gpu, sl),
                                                 rows, cols)
        _C.sparse_softmax_crossentropy_backward(wd, dloss, wp, sl, rows, cols)
        close(d.to_host(), wd, 1e-5, 1e-6, f"sparse CE grad {rows}x{cols}")
    bad = dev(gpu, np.array([0, 3], np.int64))
    with pytest.raises(ValueError, match="sparse_softmax_crossentropy_forward.*'labels'.*3"):
        gpu.sparse_softmax_crossentropy_forward(nan_dev(gpu, 2), nan_dev(gpu, (2, 3)),
                                                nan_dev(gpu, (2, 3)), bad, 2, 3)


def test_sigmoid_crossentropy(gpu):
    rng = np.random.default_rng(3)
    for n in SIZES:
        x, z = f32(rng, n, 5.0), rng.uniform(0, 1, n).astype(np.float32)
        loss = nan_dev(gpu, n)
        gpu.sigmoid_crossentropy_forward(loss, dev(gpu, x), dev(gpu, z), n)
        want = np.full(n, np.nan, np.float32)
        _C.sigmoid_crossentropy_forward(want, x, z, n)
        close(loss.to_host(), want, 1e-6, 2e-6, f"sigmoid CE n={n}")
        dl = f32(rng, n)
        d = nan_dev(gpu, n)
        gpu.sigmoid_crossentropy_backward(d, dev(gpu, dl), dev(gpu, x), dev(gpu, z), n)
        _C.sigmoid_crossentropy_backward(want, dl, x, z, n)
        close(d.to_host(), want, 1e-6, 1e-7, f"sigmoid CE grad n={n}")


@pytest.mark.parametrize("seed", [0, 7, 2**33 + 1])
@pytest.mark.parametrize("rate", [0.0, 0.25, 0.5, 1.0])
def test_dropout_bit_equal(gpu, seed, rate):
    rng = np.random.default_rng(4)
    for n in SIZES:
        x = f32(rng, n)
        y, mask = nan_dev(gpu, n), nan_dev(gpu, n)
        gpu.dropout_forward(y, mask, dev(gpu, x), n, rate, seed)
        wy, wm = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
        _C.dropout_forward(wy, wm, x, n, rate, seed)
        np.testing.assert_array_equal(mask.to_host(), wm)
        np.testing.assert_array_equal(y.to_host(), wy)
        dy = f32(rng, n)
        dx = nan_dev(gpu, n)
        gpu.dropout_backward(dx, dev(gpu, dy), mask, n)
        _C.dropout_backward(wy, dy, wm, n)
        np.testing.assert_array_equal(dx.to_host(), wy)


def test_bias_add(gpu):
    rng = np.random.default_rng(5)
    for rows, cols in ROW_SHAPES + [(100003, 3), (4096, 4096)]:
        x, b = f32(rng, (rows, cols)), f32(rng, cols)
        y = nan_dev(gpu, (rows, cols))
        gpu.bias_add_forward(y, dev(gpu, x), dev(gpu, b), rows, cols)
        np.testing.assert_array_equal(y.to_host(), x + b)
        db = nan_dev(gpu, cols)
        gpu.bias_add_backward(db, dev(gpu, x), rows, cols)
        want = np.full(cols, np.nan, np.float32)
        _C.bias_add_backward(want, x, rows, cols)
        close(db.to_host(), want, 1e-6, 1e-6 * np.sqrt(rows), f"db {rows}x{cols}")
        db2 = nan_dev(gpu, cols)
        gpu.bias_add_backward(db2, dev(gpu, x), rows, cols)
        np.testing.assert_array_equal(db2.to_host(), db.to_host())  # deterministic


def test_embedding(gpu):
    rng = np.random.default_rng(6)
    for n, V, D in [(1, 1, 1), (7, 3, 5), (33, 10, 7), (1000, 50, 33), (100003, 1000, 16)]:
        idx = rng.integers(0, V, n).astype(np.int64)
        table = f32(rng, (V, D))
        y = nan_dev(gpu, (n, D))
        gpu.embedding_forward(y, dev(gpu, idx), dev(gpu, table), n, V, D)
        np.testing.assert_array_equal(y.to_host(), table[idx])
        dy = f32(rng, (n, D))
        dt = nan_dev(gpu, (V, D))
        gpu.embedding_backward(dt, dev(gpu, dy), dev(gpu, idx), n, V, D)
        want = np.full((V, D), np.nan, np.float32)
        _C.embedding_backward(want, dy, idx, n, V, D)
        np.testing.assert_array_equal(dt.to_host(), want)  # same additions in the same order
    with pytest.raises(ValueError, match="embedding_forward.*'indices'.*-1 at position 1"):
        gpu.embedding_forward(nan_dev(gpu, (2, 2)), dev(gpu, np.array([0, -1], np.int64)),
                              nan_dev(gpu, (3, 2)), 2, 3, 2)


def _opt_cases(n, rng):
    g = f32(rng, n)
    pos = lambda: np.abs(f32(rng, n)) + 0.5  # noqa: E731
    return [
        ("sgd_update", [f32(rng, n), f32(rng, n)], [g], (0.1, 0.9, True, 0.01)),
        ("adam_update", [f32(rng, n), f32(rng, n), pos(), pos()], [g],
         (0.01, 0.9, 0.999, 1e-7, 3, 0.004)),
        ("adamax_update", [f32(rng, n), f32(rng, n), pos()], [g],
         (0.01, 0.9, 0.999, 1e-7, 4, 0.0)),
        ("nadam_update", [f32(rng, n), f32(rng, n), pos()], [g],
         (0.01, 0.9, 0.999, 1e-7, 5, 0.9, 0.91, 0.6, 0.0)),
        ("rmsprop_update", [f32(rng, n), pos(), f32(rng, n), f32(rng, n) * 0.1], [g],
         (0.01, 0.9, 0.5, 1e-7, True, 0.0)),
        ("adagrad_update", [f32(rng, n), pos()], [g], (0.01, 1e-7, 0.0)),
        ("adadelta_update", [f32(rng, n), pos(), pos()], [g], (0.5, 0.95, 1e-7, 0.001)),
    ]


def test_optimizers(gpu):
    rng = np.random.default_rng(7)
    for n in SIZES:
        for name, bufs, ins, args in _opt_cases(n, rng):
            bufs[0][::13] = np.nan  # NaN params stay NaN
            d = [dev(gpu, b) for b in bufs]
            getattr(gpu, name)(*d, *(dev(gpu, a) for a in ins), n, *args)
            cpu = [b.copy() for b in bufs]
            getattr(_C, name)(*cpu, *ins, n, *args)
            for i, (a, b) in enumerate(zip(d, cpu)):
                close(a.to_host(), b, 2e-6, 1e-7, f"{name} buffer {i} n={n}")
