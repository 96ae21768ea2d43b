"""max_pool outside a tape (inference) skips the kernel's indices: same values as under a
tape, and the tape's gradient still routes through the recorded indices."""

import numpy as np
import pytest

import fkeras
from fkeras import ops


@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_max_pool_without_tape_matches_tape(fmt, padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 9, 5)).astype("float32")
    x[1, 2, 3, 4] = np.nan
    if fmt == "channels_first":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    eager = np.asarray(ops.max_pool(x, 2, 2, padding, fmt))
    v = fkeras.Variable(x)
    with fkeras.GradientTape() as tape:
        y = ops.max_pool(v, 2, 2, padding, fmt)
        loss = ops.sum(y * y)
    np.testing.assert_array_equal(eager, np.asarray(y))
    g = np.asarray(tape.gradient(loss, v))
    # float64 reference of the gradient: 2 * y at each window's first maximum (NaN windows
    # send NaN to their NaN).
    xl = x if fmt == "channels_last" else x.transpose(0, 2, 3, 1)
    N, H, W, C = xl.shape
    yl = np.asarray(eager, np.float64)
    yl = yl if fmt == "channels_last" else yl.transpose(0, 2, 3, 1)
    want = np.zeros((N, H, W, C))
    pad_h = max(0, (yl.shape[1] - 1) * 2 + 2 - H) // 2 if padding == "same" else 0
    pad_w = max(0, (yl.shape[2] - 1) * 2 + 2 - W) // 2 if padding == "same" else 0
    for n in range(N):
        for p in range(yl.shape[1]):
            for q in range(yl.shape[2]):
                for c in range(C):
                    h0, w0 = p * 2 - pad_h, q * 2 - pad_w
                    win = [(h, w) for h in range(max(h0, 0), min(h0 + 2, H))
                           for w in range(max(w0, 0), min(w0 + 2, W))]
                    vals = np.array([xl[n, h, w, c] for h, w in win], np.float64)
                    k = int(np.argmax(vals))  # first maximum; NaN counts as the largest
                    want[n, win[k][0], win[k][1], c] += 2 * yl[n, p, q, c]
    if fmt == "channels_first":
        want = want.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_max_pool_passes_no_indices_outside_a_tape(monkeypatch):
    from fkeras.backend import devices

    table = devices.get_device("cpu").kernels
    kernel, seen = table["maxpool2d_forward"], []

    def spy(y, indices, *rest):
        seen.append(indices is None)
        return kernel(y, indices, *rest)

    monkeypatch.setitem(table, "maxpool2d_forward", spy)
    x = np.random.default_rng(1).standard_normal((1, 4, 4, 3)).astype("float32")
    with fkeras.device("cpu"):  # the host kernels (also when the suite runs on a device)
        ops.max_pool(x, 2)
        v = fkeras.Variable(x)
        with fkeras.GradientTape():
            ops.max_pool(v, 2)
    assert seen == [True, False]
