"""fkeras._C_cuda's recurrent kernels against fkeras._C's (needs a GPU and the CUDA GEMM).

Each kernel is called with the CPU kernel's arguments; outputs are pre-filled with NaN on both
sides. Sizes include 1, 7, 33 and 1000; one LSTM sequence runs T = 50 steps.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

LSTM, GRU, SIMPLE = "lstm", "gru", "simple_rnn"
GATES = {LSTM: 4, GRU: 3, SIMPLE: 1}
SHAPES = [(1, 1, 1, 1), (7, 3, 5, 7), (33, 4, 33, 17), (1000, 2, 7, 33), (4, 3, 8, 1000),
          (5, 50, 6, 9)]
ACTS = [(3, 2), (1, 11)]


def _kernels(gpu, name):
    if not hasattr(gpu, name):
        pytest.skip(f"{name} is not in this _C_cuda build (the RNN kernels need the CUDA GEMM)")
    from fkeras import _C

    return getattr(_C, name), getattr(gpu, name)


def _run_both(gpu, name, outs, ins, scalars):
    """Calls the CPU and the GPU kernel; returns ([cpu outputs], [gpu outputs])."""
    cpu, dev = _kernels(gpu, name)
    ins = [None if a is None else np.ascontiguousarray(a, np.float32) for a in ins]
    c_out = [None if s is None else np.full(s, np.nan, np.float32) for s in outs]
    with np.errstate(all="ignore"):
        cpu(*c_out, *ins, *scalars)
    g_out = [None if s is None else gpu.DeviceArray.from_host(np.full(s, np.nan, np.float32))
             for s in outs]
    g_in = [None if a is None else gpu.DeviceArray.from_host(a) for a in ins]
    dev(*g_out, *g_in, *scalars)
    return c_out, [None if g is None else g.to_host() for g in g_out]


def _close(cpu, gpu_out, names, tol=3e-4):
    for c, g, n in zip(cpu, gpu_out, names):
        if c is None:
            continue
        scale = max(1.0, float(np.abs(c).max(initial=0.0)))
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol * scale, err_msg=n)


def _params(rng, kind, N, T, F, U, reset_after=False):
    G = GATES[kind] * U
    p = dict(x=rng.standard_normal((N, T, F)), h0=rng.standard_normal((N, U)),
             c0=rng.standard_normal((N, U)), kernel=rng.standard_normal((F, G)) / np.sqrt(F),
             rk=rng.standard_normal((U, G)) / np.sqrt(U))
    p["bias"] = rng.standard_normal((2, G) if reset_after else (G,)) * 0.3
    return {k: v.astype(np.float32) for k, v in p.items()}


@pytest.mark.parametrize("a, ra", ACTS)
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("N, T, F, U", SHAPES)
def test_lstm_sequence(gpu, N, T, F, U, go_backwards, a, ra):
    rng = np.random.default_rng(N + T + F + U)
    p = _params(rng, LSTM, N, T, F, U)
    outs = [(N, T, U), (N, U), (N, U), (N, T, 4 * U), (N, T, U)]
    ins = [p["x"], p["h0"], p["c0"], p["kernel"], p["rk"], p["bias"]]
    sc = [N, T, F, U, go_backwards, a, ra]
    c, g = _run_both(gpu, "lstm_sequence_forward", outs, ins, sc)
    _close(c, g, ["hs", "h_final", "c_final", "gates", "cs"])
    hs, _, _, gates, cs = c
    dhs, dhf, dcf = (rng.standard_normal(s).astype(np.float32) for s in [(N, T, U), (N, U), (N, U)])
    outs = [(N, T, F), (N, U), (N, U), (F, 4 * U), (U, 4 * U), (4 * U,)]
    ins = [dhs, dhf, dcf, gates, cs, hs, p["x"], p["h0"], p["c0"], p["kernel"], p["rk"]]
    c, g = _run_both(gpu, "lstm_sequence_backward", outs, ins, sc)
    _close(c, g, ["dx", "dh0", "dc0", "dkernel", "drecurrent_kernel", "dbias"])


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("N, T, F, U", SHAPES)
def test_gru_sequence(gpu, N, T, F, U, go_backwards, reset_after):
    rng = np.random.default_rng(N * T + F * U)
    p = _params(rng, GRU, N, T, F, U, reset_after)
    outs = [(N, T, U), (N, U), (N, T, 3 * U), (N, T, U)]
    ins = [p["x"], p["h0"], p["kernel"], p["rk"], p["bias"]]
    sc = [N, T, F, U, go_backwards, reset_after, 3, 2]
    c, g = _run_both(gpu, "gru_sequence_forward", outs, ins, sc)
    _close(c, g, ["hs", "h_final", "gates", "hproj"])
    hs, _, gates, hproj = c
    dhs, dhf = rng.standard_normal((N, T, U)).astype(np.float32), None
    outs = [(N, T, F), (N, U), (F, 3 * U), (U, 3 * U), p["bias"].shape]
    ins = [dhs, dhf, gates, hproj, hs, p["x"], p["h0"], p["kernel"], p["rk"]]
    c, g = _run_both(gpu, "gru_sequence_backward", outs, ins, sc)
    _close(c, g, ["dx", "dh0", "dkernel", "drecurrent_kernel", "dbias"])


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("N, T, F, U", SHAPES)
def test_simple_rnn_sequence(gpu, N, T, F, U, go_backwards):
    rng = np.random.default_rng(N + 3 * U)
    p = _params(rng, SIMPLE, N, T, F, U)
    sc = [N, T, F, U, go_backwards, 3]
    c, g = _run_both(gpu, "simple_rnn_sequence_forward", [(N, T, U), (N, U)],
                     [p["x"], p["h0"], p["kernel"], p["rk"], p["bias"]], sc)
    _close(c, g, ["hs", "h_final"])
    dhs, dhf = rng.standard_normal((N, T, U)).astype(np.float32), rng.standard_normal((N, U))
    outs = [(N, T, F), (N, U), (F, U), (U, U), (U,)]
    ins = [dhs, dhf, c[0], p["x"], p["h0"], p["kernel"], p["rk"]]
    c, g = _run_both(gpu, "simple_rnn_sequence_backward", outs, ins, sc)
    _close(c, g, ["dx", "dh0", "dkernel", "drecurrent_kernel", "dbias"])


@pytest.mark.parametrize("N, F, U", [(1, 1, 1), (7, 5, 7), (33, 33, 17), (1000, 7, 33)])
def test_cells(gpu, N, F, U):
    rng = np.random.default_rng(N + F + U)
    p = _params(rng, LSTM, N, 1, F, U)
    x = p["x"][:, 0]
    c, g = _run_both(gpu, "lstm_cell_forward", [(N, U), (N, U), (N, 4 * U)],
                     [x, p["h0"], p["c0"], p["kernel"], p["rk"], p["bias"]], [N, F, U, 3, 2])
    _close(c, g, ["h", "c", "gates"])
    dh, dc = rng.standard_normal((N, U)), rng.standard_normal((N, U))
    c2, g2 = _run_both(gpu, "lstm_cell_backward",
                       [(N, F), (N, U), (N, U), (F, 4 * U), (U, 4 * U), (4 * U,)],
                       [dh, dc, c[2], c[1], x, p["h0"], p["c0"], p["kernel"], p["rk"]],
                       [N, F, U, 3, 2])
    _close(c2, g2, ["dx", "dh_prev", "dc_prev", "dkernel", "drecurrent_kernel", "dbias"])
    for reset_after in (True, False):
        q = _params(rng, GRU, N, 1, F, U, reset_after)
        xq = q["x"][:, 0]
        c, g = _run_both(gpu, "gru_cell_forward", [(N, U), (N, 3 * U), (N, U)],
                         [xq, q["h0"], q["kernel"], q["rk"], q["bias"]],
                         [N, F, U, reset_after, 3, 2])
        _close(c, g, ["h", "gates", "hproj"])
        c2, g2 = _run_both(gpu, "gru_cell_backward",
                           [(N, F), (N, U), (F, 3 * U), (U, 3 * U), q["bias"].shape],
                           [dh, c[1], c[2], xq, q["h0"], q["kernel"], q["rk"]],
                           [N, F, U, reset_after, 3, 2])
        _close(c2, g2, ["dx", "dh_prev", "dkernel", "drecurrent_kernel", "dbias"])
    s = _params(rng, SIMPLE, N, 1, F, U)
    xs = s["x"][:, 0]
    c, g = _run_both(gpu, "simple_rnn_cell_forward", [(N, U)],
                     [xs, s["h0"], s["kernel"], s["rk"], s["bias"]], [N, F, U, 3])
    _close(c, g, ["h"])
    c2, g2 = _run_both(gpu, "simple_rnn_cell_backward", [(N, F), (N, U), (F, U), (U, U), (U,)],
                       [dh, c[0], xs, s["h0"], s["kernel"], s["rk"]], [N, F, U, 3])
    _close(c2, g2, ["dx", "dh_prev", "dkernel", "drecurrent_kernel", "dbias"])
