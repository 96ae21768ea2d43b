"""Tests of the recurrent kernels (LSTM, GRU, SimpleRNN): reference spec, compiled kernels, checks.

Four families share one harness: ("lstm", None), ("gru", True) (reset_after), ("gru", False)
and ("simple_rnn", None). The reference is checked against Keras's formulas written gate by
gate below and, for its backward, against finite differences; the compiled kernels are checked
against the reference on every ISA.
"""

import itertools
import math

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import rnn as ref
from kernel_testing import assert_close, check_vjp, nans, rand

FAMILIES = [("lstm", None), ("gru", True), ("gru", False), ("simple_rnn", None)]
FAMILY_IDS = ["lstm", "gru_reset_after", "gru", "simple_rnn"]
REC_ACTS = codes.RECURRENT_ACTIVATIONS
REF = ref.KERNELS
CPU = {name: getattr(_C, name) for name in REF}


def gates_of(fam):
    return {"lstm": 4, "gru": 3, "simple_rnn": 1}[fam]


def alloc_cpu(*shape):
    return nans(shape)


def alloc_ref(*shape):
    return np.zeros(shape)


def make_params(rng, fam, ra, N, T, F, U, with_bias=True, dtype=np.float32):
    """Inputs with pre-activations of order one."""
    G = gates_of(fam)
    p = {
        "x": rand(rng, (N, T, F)),
        "h0": rand(rng, (N, U), 0.5),
        "kernel": rand(rng, (F, G * U), 1.0 / math.sqrt(F)),
        "recurrent_kernel": rand(rng, (U, G * U), 1.0 / math.sqrt(U)),
    }
    if fam == "lstm":
        p["c0"] = rand(rng, (N, U), 0.5)
    bias_shape = (2, 3 * U) if (fam == "gru" and ra) else (G * U,)
    p["bias"] = rand(rng, bias_shape, 0.5) if with_bias else None
    return {k: (None if v is None else v.astype(dtype)) for k, v in p.items()}


def forward(fam, ra, kern, p, N, T, F, U, gb, a, rec_a, alloc):
    """Runs <fam>_sequence_forward; returns its outputs and saved state by name."""
    if fam == "lstm":
        out = {"hs": alloc(N, T, U), "h_final": alloc(N, U), "c_final": alloc(N, U),
                   "gates": alloc(N, T, 4 * U), "cs": alloc(N, T, U)}
        kern["lstm_sequence_forward"](*out.values(), p["x"], p["h0"], p["c0"], p["kernel"],
                                      p["recurrent_kernel"], p["bias"], N, T, F, U, gb, a, rec_a)
    elif fam == "gru":
        out = {"hs": alloc(N, T, U), "h_final": alloc(N, U), "gates": alloc(N, T, 3 * U),
                   "hproj": alloc(N, T, U)}
        kern["gru_sequence_forward"](*out.values(), p["x"], p["h0"], p["kernel"],
                                     p["recurrent_kernel"], p["bias"], N, T, F, U, gb, ra, a,
                                     rec_a)
    else:
        out = {"hs": alloc(N, T, U), "h_final": alloc(N, U)}
        kern["simple_rnn_sequence_forward"](*out.values(), p["x"], p["h0"], p["kernel"],
                                            p["recurrent_kernel"], p["bias"], N, T, F, U, gb, a)
    return out


def backward(fam, ra, kern, p, saved, cot, N, T, F, U, gb, a, rec_a, alloc, skip=()):
    """Runs <fam>_sequence_backward with cotangents cot (dhs, dh_final, dc_final; absent = None);
    returns the gradients computed (those not in skip; dbias only with a bias)."""
    G = gates_of(fam)
    shapes = {"dx": (N, T, F), "dh0": (N, U), "dc0": (N, U), "dkernel": (F, G * U),
                  "drecurrent_kernel": (U, G * U),
                  "dbias": (2, 3 * U) if (fam == "gru" and ra) else (G * U,)}
    if fam != "lstm":
        del shapes["dc0"]
    if p["bias"] is None:
        skip = tuple(skip) + ("dbias",)
    g = {k: (None if k in skip else alloc(*s)) for k, s in shapes.items()}
    dhs, dhf, dcf = cot.get("hs"), cot.get("h_final"), cot.get("c_final")
    if fam == "lstm":
        kern["lstm_sequence_backward"](*g.values(), dhs, dhf, dcf, saved["gates"], saved["cs"],
                                       saved["hs"], p["x"], p["h0"], p["c0"], p["kernel"],
                                       p["recurrent_kernel"], N, T, F, U, gb, a, rec_a)
    elif fam == "gru":
        kern["gru_sequence_backward"](*g.values(), dhs, dhf, saved["gates"], saved["hproj"],
                                      saved["hs"], p["x"], p["h0"], p["kernel"],
                                      p["recurrent_kernel"], N, T, F, U, gb, ra, a, rec_a)
    else:
        kern["simple_rnn_sequence_backward"](*g.values(), dhs, dhf, saved["hs"], p["x"], p["h0"],
                                             p["kernel"], p["recurrent_kernel"], N, T, F, U, gb,
                                             a)
    return {k: v for k, v in g.items() if v is not None}


def cotangents(rng, fam, N, T, U, dtype=np.float32):
    cot = {"hs": rand(rng, (N, T, U)), "h_final": rand(rng, (N, U))}
    if fam == "lstm":
        cot["c_final"] = rand(rng, (N, U))
    return {k: v.astype(dtype) for k, v in cot.items()}


def close(actual, expected, name, rtol=1e-5):
    """float32 kernel vs float64 reference; atol scaled by the result's size (sums of products)."""
    scale = max(1.0, float(np.abs(expected).max())) if np.size(expected) else 1.0
    assert_close(actual, expected, rtol=rtol, atol=rtol * scale, name=name)


def compare_family(rng, fam, ra, N, T, F, U, gb, with_bias, a, rec_a, label=""):
    """Compiled forward and backward against the reference (the backward on the same saved
    state, so each pass is checked on its own), with NaN-prefilled outputs."""
    p = make_params(rng, fam, ra, N, T, F, U, with_bias)
    args = (N, T, F, U, gb, a, rec_a)
    saved = forward(fam, ra, CPU, p, *args, alloc_cpu)
    want = forward(fam, ra, REF, p, *args, alloc_ref)
    for k in want:
        close(saved[k], want[k], f"{label} {fam} forward {k}")
    cot = cotangents(rng, fam, N, T, U)
    got = backward(fam, ra, CPU, p, saved, cot, *args, alloc_cpu)
    want = backward(fam, ra, REF, p, saved, cot, *args, alloc_ref)
    for k in want:
        close(got[k], want[k], f"{label} {fam} backward {k}")


# ------------------------------------------------------------------------------------------------
# Keras's formulas, gate by gate: an independent spec for the reference forward
# ------------------------------------------------------------------------------------------------

ACTS = {
    codes.LINEAR: lambda z: z,
    codes.RELU: lambda z: np.maximum(z, 0.0),
    codes.SIGMOID: lambda z: 0.5 * (1.0 + np.tanh(0.5 * z)),
    codes.TANH: np.tanh,
    codes.HARD_SIGMOID: lambda z: np.clip(z / 6.0 + 0.5, 0.0, 1.0),
}


def keras_lstm(x, h, c, W, RW, b, gb, a, rec_a):
    A, RA = ACTS[a], ACTS[rec_a]
    Wi, Wf, Wc, Wo = np.split(W, 4, axis=1)
    Ri, Rf, Rc, Ro = np.split(RW, 4, axis=1)
    bi, bf, bc, bo = np.split(b, 4)
    hs = []
    for xt in np.moveaxis(x[:, ::-1] if gb else x, 1, 0):
        i = RA(xt @ Wi + h @ Ri + bi)
        f = RA(xt @ Wf + h @ Rf + bf)
        o = RA(xt @ Wo + h @ Ro + bo)
        c = f * c + i * A(xt @ Wc + h @ Rc + bc)
        h = o * A(c)
        hs.append(h)
    return {"hs": np.stack(hs, 1), "h_final": h, "c_final": c}


def keras_gru(x, h, W, RW, b, gb, reset_after, a, rec_a):
    A, RA = ACTS[a], ACTS[rec_a]
    Wz, Wr, Wh = np.split(W, 3, axis=1)
    Rz, Rr, Rh = np.split(RW, 3, axis=1)
    if reset_after:
        (bz, br, bh), (rbz, rbr, rbh) = np.split(b[0], 3), np.split(b[1], 3)
    else:
        (bz, br, bh), (rbz, rbr, rbh) = np.split(b, 3), (0.0, 0.0, 0.0)
    hs = []
    for xt in np.moveaxis(x[:, ::-1] if gb else x, 1, 0):
        z = RA(xt @ Wz + bz + h @ Rz + rbz)
        r = RA(xt @ Wr + br + h @ Rr + rbr)
        if reset_after:
            hh = A(xt @ Wh + bh + r * (h @ Rh + rbh))
        else:
            hh = A(xt @ Wh + bh + (r * h) @ Rh)
        h = z * h + (1.0 - z) * hh
        hs.append(h)
    return {"hs": np.stack(hs, 1), "h_final": h}


def keras_simple_rnn(x, h, W, RW, b, gb, a):
    hs = []
    for xt in np.moveaxis(x[:, ::-1] if gb else x, 1, 0):
        h = ACTS[a](xt @ W + h @ RW + b)
        hs.append(h)
    return {"hs": np.stack(hs, 1), "h_final": h}


def keras_formula(fam, ra, p, gb, a, rec_a):
    q = {k: (None if v is None else v.astype(np.float64)) for k, v in p.items()}
    G, U = gates_of(fam), q["h0"].shape[1]
    b = q["bias"] if q["bias"] is not None else np.zeros((2, 3 * U) if ra else G * U)
    if fam == "lstm":
        return keras_lstm(q["x"], q["h0"], q["c0"], q["kernel"], q["recurrent_kernel"], b, gb, a,
                          rec_a)
    if fam == "gru":
        return keras_gru(q["x"], q["h0"], q["kernel"], q["recurrent_kernel"], b, gb, ra, a, rec_a)
    return keras_simple_rnn(q["x"], q["h0"], q["kernel"], q["recurrent_kernel"], b, gb, a)


ACT_PAIRS = [(codes.TANH, codes.SIGMOID), (codes.RELU, codes.HARD_SIGMOID),
             (codes.LINEAR, codes.TANH), (codes.SIGMOID, codes.RELU)]


def test_kernel_names():
    assert set(REF) == {
        f"{fam}_{kind}_{pass_}"
        for fam in ("lstm", "gru", "simple_rnn")
        for kind in ("sequence", "cell")
        for pass_ in ("forward", "backward")
    }


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
@pytest.mark.parametrize("gb", [False, True])
@pytest.mark.parametrize("acts", ACT_PAIRS)
def test_reference_forward_matches_keras_formulas(fam, ra, gb, acts):
    rng = np.random.default_rng(1)
    N, T, F, U = 3, 4, 5, 6
    for with_bias in (True, False):
        p = make_params(rng, fam, ra, N, T, F, U, with_bias)
        got = forward(fam, ra, REF, p, N, T, F, U, gb, *acts, alloc_ref)
        want = keras_formula(fam, ra, p, gb, *acts)
        for k, v in want.items():
            assert_close(got[k], v, rtol=1e-12, atol=1e-12, name=f"{fam} {k}")


# ------------------------------------------------------------------------------------------------
# Reference backward against finite differences (float64, random cotangents)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
@pytest.mark.parametrize("gb,with_bias,acts", [
    (False, True, (codes.TANH, codes.SIGMOID)),
    (True, True, (codes.TANH, codes.SIGMOID)),
    (False, False, (codes.SIGMOID, codes.TANH)),
    (True, True, (codes.RELU, codes.HARD_SIGMOID)),
    (False, True, (codes.LINEAR, codes.SIGMOID)),
])
def test_reference_sequence_backward_finite_differences(fam, ra, gb, with_bias, acts):
    rng = np.random.default_rng(2)
    N, T, F, U = 2, 3, 3, 4
    p = make_params(rng, fam, ra, N, T, F, U, with_bias, dtype=np.float64)
    inputs = {k: v for k, v in p.items() if v is not None}
    args = (N, T, F, U, gb, *acts)

    def f(xs):
        return forward(fam, ra, REF, {**p, **xs}, *args, alloc_ref)

    saved = f(inputs)
    cot = cotangents(rng, fam, N, T, U, dtype=np.float64)
    grads = backward(fam, ra, REF, p, saved, cot, *args, alloc_ref)
    names = {"dx": "x", "dh0": "h0", "dc0": "c0", "dkernel": "kernel",
             "drecurrent_kernel": "recurrent_kernel", "dbias": "bias"}
    assert set(grads) == {g for g, name in names.items() if name in inputs}
    check_vjp(f, inputs, cot, {names[g]: v for g, v in grads.items()}, rng=rng)


def cell_forward(fam, ra, kern, p, N, F, U, a, rec_a, alloc):
    """Runs <fam>_cell_forward on x (N, F) = p["x"][:, 0]; returns outputs by name."""
    x = np.ascontiguousarray(p["x"][:, 0])
    if fam == "lstm":
        out = {"h": alloc(N, U), "c": alloc(N, U), "gates": alloc(N, 4 * U)}
        kern["lstm_cell_forward"](*out.values(), x, p["h0"], p["c0"], p["kernel"],
                                  p["recurrent_kernel"], p["bias"], N, F, U, a, rec_a)
    elif fam == "gru":
        out = {"h": alloc(N, U), "gates": alloc(N, 3 * U), "hproj": alloc(N, U)}
        kern["gru_cell_forward"](*out.values(), x, p["h0"], p["kernel"], p["recurrent_kernel"],
                                 p["bias"], N, F, U, ra, a, rec_a)
    else:
        out = {"h": alloc(N, U)}
        kern["simple_rnn_cell_forward"](*out.values(), x, p["h0"], p["kernel"],
                                        p["recurrent_kernel"], p["bias"], N, F, U, a)
    return out


def cell_backward(fam, ra, kern, p, saved, dh, dc, N, F, U, a, rec_a, alloc, skip=()):
    G = gates_of(fam)
    x = np.ascontiguousarray(p["x"][:, 0])
    shapes = {"dx": (N, F), "dh_prev": (N, U), "dc_prev": (N, U), "dkernel": (F, G * U),
                  "drecurrent_kernel": (U, G * U),
                  "dbias": (2, 3 * U) if (fam == "gru" and ra) else (G * U,)}
    if fam != "lstm":
        del shapes["dc_prev"]
    if p["bias"] is None:
        skip = tuple(skip) + ("dbias",)
    g = {k: (None if k in skip else alloc(*s)) for k, s in shapes.items()}
    if fam == "lstm":
        kern["lstm_cell_backward"](*g.values(), dh, dc, saved["gates"], saved["c"], x, p["h0"],
                                   p["c0"], p["kernel"], p["recurrent_kernel"], N, F, U, a, rec_a)
    elif fam == "gru":
        kern["gru_cell_backward"](*g.values(), dh, saved["gates"], saved["hproj"], x, p["h0"],
                                  p["kernel"], p["recurrent_kernel"], N, F, U, ra, a, rec_a)
    else:
        kern["simple_rnn_cell_backward"](*g.values(), dh, saved["h"], x, p["h0"], p["kernel"],
                                         p["recurrent_kernel"], N, F, U, a)
    return {k: v for k, v in g.items() if v is not None}


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
@pytest.mark.parametrize("acts", [(codes.TANH, codes.SIGMOID), (codes.RELU, codes.HARD_SIGMOID)])
def test_reference_cell_backward_finite_differences(fam, ra, acts):
    rng = np.random.default_rng(3)
    N, F, U = 3, 4, 5
    p = make_params(rng, fam, ra, N, 1, F, U, dtype=np.float64)
    inputs = {k: v for k, v in p.items() if v is not None}

    def f(xs):
        return cell_forward(fam, ra, REF, {**p, **xs}, N, F, U, *acts, alloc_ref)

    saved = f(inputs)
    cot = {"h": rand(rng, (N, U), dtype=np.float64)}
    if fam == "lstm":
        cot["c"] = rand(rng, (N, U), dtype=np.float64)
    grads = cell_backward(fam, ra, REF, p, saved, cot["h"], cot.get("c"), N, F, U, *acts,
                          alloc_ref)
    names = {"dx": "x", "dh_prev": "h0", "dc_prev": "c0", "dkernel": "kernel",
             "drecurrent_kernel": "recurrent_kernel", "dbias": "bias"}
    # dx is (N, F) for the cell while the input x is (N, 1, F).
    grads["dx"] = grads["dx"].reshape(N, 1, F)
    check_vjp(f, inputs, cot, {names[g]: v for g, v in grads.items()}, rng=rng)


# ------------------------------------------------------------------------------------------------
# Compiled kernels against the reference
# ------------------------------------------------------------------------------------------------

# Every N, T, F, U of the sweep appears several times, with go_backwards and bias alternating.
SWEEP = [c for i, c in enumerate(itertools.product([1, 3, 8], [1, 2, 5], [1, 3, 8, 17],
                                                   [1, 4, 16, 33])) if i % 7 == 0]


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_compiled_matches_reference_sweep(isa, fam, ra):
    rng = np.random.default_rng(4)
    for i, (N, T, F, U) in enumerate(SWEEP):
        gb, with_bias = bool(i % 2), bool((i // 2) % 2)
        compare_family(rng, fam, ra, N, T, F, U, gb, with_bias, codes.TANH, codes.SIGMOID,
                       label=f"{isa} N={N} T={T} F={F} U={U} gb={gb} bias={with_bias}")


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_compiled_every_activation_pair(isa, fam, ra):
    # U = 20: one full AVX-512 vector (16) and a scalar tail per gate.
    rng = np.random.default_rng(5)
    rec_acts = REC_ACTS if fam != "simple_rnn" else (codes.SIGMOID,)
    for i, (a, rec_a) in enumerate(itertools.product(REC_ACTS, rec_acts)):
        compare_family(rng, fam, ra, 3, 3, 5, 20, bool(i % 2), True, a, rec_a,
                       label=f"{isa} act={a} rec_act={rec_a}")


@pytest.fixture(params=[2, 5], ids=["2threads", "5threads"])
def threads(request):
    """Several threads (5: more than this machine's cores, so participants get descheduled)."""
    before = _C.num_threads()
    _C.set_num_threads(request.param)
    yield request.param
    _C.set_num_threads(before)


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_compiled_larger_shapes_threaded(isa, fam, ra, threads):
    # Large enough to be cut into several (row, unit) tiles per step, ragged at both edges.
    rng = np.random.default_rng(6)
    for N, T, F, U, gb in [(64, 3, 8, 33, True), (19, 3, 32, 128, False), (40, 3, 8, 50, True)]:
        compare_family(rng, fam, ra, N, T, F, U, gb, True, codes.TANH, codes.SIGMOID,
                       label=f"{isa} N={N} U={U} threads={threads}")


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_optional_outputs_and_cotangents(isa, fam, ra):
    rng = np.random.default_rng(7)
    N, T, F, U, gb = 3, 4, 5, 18, True
    p = make_params(rng, fam, ra, N, T, F, U)
    args = (N, T, F, U, gb, codes.TANH, codes.SIGMOID)
    saved = forward(fam, ra, CPU, p, *args, alloc_cpu)
    cot = cotangents(rng, fam, N, T, U)
    # Absent cotangents are zeros; absent outputs are skipped without disturbing the others.
    for absent in [("hs",), ("h_final",), ("c_final",), ("hs", "h_final", "c_final")]:
        part = {k: v for k, v in cot.items() if k not in absent}
        want = backward(fam, ra, REF, p, saved, part, *args, alloc_ref)
        got = backward(fam, ra, CPU, p, saved, part, *args, alloc_cpu)
        for k in want:
            close(got[k], want[k], f"{fam} without {absent}: {k}")
    want = backward(fam, ra, REF, p, saved, cot, *args, alloc_ref)
    for skip in [("dx",), ("dh0", "dc0"), ("dbias",), ("dx", "dh0", "dc0", "dbias")]:
        got = backward(fam, ra, CPU, p, saved, cot, *args, alloc_cpu, skip=skip)
        assert not set(skip) & set(got)
        for k in got:
            close(got[k], want[k], f"{fam} skipping {skip}: {k}")


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_cells_equal_sequences_of_one_step(isa, fam, ra):
    rng = np.random.default_rng(8)
    N, F, U = 5, 7, 21
    acts = (codes.TANH, codes.HARD_SIGMOID)
    p = make_params(rng, fam, ra, N, 1, F, U)
    seq = forward(fam, ra, CPU, p, N, 1, F, U, False, *acts, alloc_cpu)
    cell = cell_forward(fam, ra, CPU, p, N, F, U, *acts, alloc_cpu)
    cell_ref = cell_forward(fam, ra, REF, p, N, F, U, *acts, alloc_ref)
    pairs = {"h": "hs", "c": "cs", "gates": "gates", "hproj": "hproj"}
    for k, v in cell.items():
        np.testing.assert_array_equal(v, seq[pairs[k]].reshape(v.shape), err_msg=f"{fam} {k}")
        close(v, cell_ref[k], f"{fam} cell forward {k}")
    dh = rand(rng, (N, U))
    dc = rand(rng, (N, U)) if fam == "lstm" else None
    cot = {"h_final": dh} | ({"c_final": dc} if fam == "lstm" else {})
    gseq = backward(fam, ra, CPU, p, seq, cot, N, 1, F, U, False, *acts, alloc_cpu)
    gcell = cell_backward(fam, ra, CPU, p, cell, dh, dc, N, F, U, *acts, alloc_cpu)
    gref = cell_backward(fam, ra, REF, p, cell, dh, dc, N, F, U, *acts, alloc_ref)
    names = {"dx": "dx", "dh_prev": "dh0", "dc_prev": "dc0", "dkernel": "dkernel",
                 "drecurrent_kernel": "drecurrent_kernel", "dbias": "dbias"}
    for k, v in gcell.items():
        np.testing.assert_array_equal(v, gseq[names[k]].reshape(v.shape), err_msg=f"{fam} {k}")
        close(v, gref[k], f"{fam} cell backward {k}")
    if fam == "lstm":  # dc is optional for the cell
        got = cell_backward(fam, ra, CPU, p, cell, dh, None, N, F, U, *acts, alloc_cpu)
        want = cell_backward(fam, ra, REF, p, cell, dh, None, N, F, U, *acts, alloc_ref)
        for k in want:
            close(got[k], want[k], f"lstm cell without dc: {k}")


# (N, T, F, U, go_backwards): one tile, several tiles per step (ragged), T = 0 and T = 1.
INFERENCE_SHAPES = [(3, 5, 4, 20, False), (3, 5, 4, 20, True), (64, 4, 8, 33, True),
                    (19, 6, 32, 128, False), (40, 3, 8, 50, True), (2, 0, 3, 4, False),
                    (5, 1, 7, 21, True)]


@pytest.mark.parametrize("threads", [1, 2, 5], indirect=True)
def test_lstm_inference_forward_equals_saving_forward(isa, threads):
    # Without gates and cs (inference) the outputs are bit for bit those of the forward that
    # saves its state, and that one matches the float64 reference; every thread count.
    rng = np.random.default_rng(11)
    for N, T, F, U, gb in INFERENCE_SHAPES:
        p = make_params(rng, "lstm", None, N, T, F, U, with_bias=bool(T % 2))
        args = (N, T, F, U, gb, codes.TANH, codes.HARD_SIGMOID)
        full = forward("lstm", None, CPU, p, *args, alloc_cpu)
        want = forward("lstm", None, REF, p, *args, alloc_ref)
        out = {"hs": alloc_cpu(N, T, U), "h_final": alloc_cpu(N, U), "c_final": alloc_cpu(N, U)}
        _C.lstm_sequence_forward(*out.values(), None, None, p["x"], p["h0"], p["c0"], p["kernel"],
                                 p["recurrent_kernel"], p["bias"], *args)
        for k, v in out.items():
            np.testing.assert_array_equal(v, full[k], err_msg=f"{isa} N={N} T={T} U={U} {k}")
            close(v, want[k], f"{isa} inference N={N} T={T} U={U} {k}")


def test_lstm_gates_and_cs_go_together():
    rng = np.random.default_rng(12)
    N, T, F, U = 2, 3, 4, 5
    p = make_params(rng, "lstm", None, N, T, F, U)
    for gates, cs, received in [(alloc_cpu(N, T, 4 * U), None, "'gates' an array and 'cs' None"),
                                (None, alloc_cpu(N, T, U), "'gates' None and 'cs' an array")]:
        with pytest.raises(ValueError, match=received):
            _C.lstm_sequence_forward(alloc_cpu(N, T, U), alloc_cpu(N, U), alloc_cpu(N, U),
                                     gates, cs, p["x"], p["h0"],
                                     p["c0"], p["kernel"], p["recurrent_kernel"], p["bias"], N,
                                     T, F, U, False, codes.TANH, codes.SIGMOID)


@pytest.mark.parametrize("fam,ra", FAMILIES, ids=FAMILY_IDS)
def test_empty_sequence(fam, ra):
    rng = np.random.default_rng(9)
    N, T, F, U = 2, 0, 3, 4
    p = make_params(rng, fam, ra, N, T, F, U)
    args = (N, T, F, U, False, codes.TANH, codes.SIGMOID)
    out = forward(fam, ra, CPU, p, *args, alloc_cpu)
    np.testing.assert_array_equal(out["h_final"], p["h0"])
    cot = {k: v for k, v in cotangents(rng, fam, N, T, U).items() if k != "hs"}
    got = backward(fam, ra, CPU, p, out, cot, *args, alloc_cpu)
    np.testing.assert_array_equal(got["dh0"], cot["h_final"])
    for k in ("dkernel", "drecurrent_kernel", "dbias"):
        np.testing.assert_array_equal(got[k], 0.0)


def test_torch_parity():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    N, T, F, U = 4, 6, 5, 7
    x = rand(rng, (N, T, F))
    with torch.no_grad():
        for fam, module in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU),
                            ("simple_rnn", torch.nn.RNN)):
            ra = True if fam == "gru" else None
            p = make_params(rng, fam, ra, N, T, F, U)
            p["x"] = x
            G = gates_of(fam)
            m = module(F, U, batch_first=True)
            # Keras gate blocks -> torch's order (LSTM i f c o = i f g o; GRU z r h -> r z n).
            order = [1, 0, 2] if fam == "gru" else list(range(G))

            def to_torch(w, G=G, order=order):
                blocks = np.split(w, G, axis=-1)
                return torch.from_numpy(np.ascontiguousarray(
                    np.concatenate([blocks[i] for i in order], axis=-1).T))

            m.weight_ih_l0.copy_(to_torch(p["kernel"]))
            m.weight_hh_l0.copy_(to_torch(p["recurrent_kernel"]))
            b = p["bias"].reshape(-1, G * U)
            m.bias_ih_l0.copy_(to_torch(b[0][None])[:, 0])
            m.bias_hh_l0.copy_(to_torch(b[1][None])[:, 0] if fam == "gru" else 0.0)
            h0 = torch.from_numpy(p["h0"])[None]
            state = (h0, torch.from_numpy(p["c0"])[None]) if fam == "lstm" else h0
            want, _ = m(torch.from_numpy(x), state)
            got = forward(fam, ra, CPU, p, N, T, F, U, False, codes.TANH, codes.SIGMOID,
                          alloc_cpu)
            close(got["hs"], want.numpy(), f"{fam} vs torch")


# ------------------------------------------------------------------------------------------------
# Argument checks
# ------------------------------------------------------------------------------------------------


def lstm_forward_args(N=2, T=3, F=4, U=5):
    rng = np.random.default_rng(11)
    p = make_params(rng, "lstm", None, N, T, F, U)
    out = [nans((N, T, U)), nans((N, U)), nans((N, U)), nans((N, T, 4 * U)), nans((N, T, U))]
    return out + [p["x"], p["h0"], p["c0"], p["kernel"], p["recurrent_kernel"], p["bias"],
                  N, T, F, U, False, codes.TANH, codes.SIGMOID]


def test_bad_inputs_raise_value_error():
    args = lstm_forward_args()
    _C.lstm_sequence_forward(*args)  # the unaltered arguments are fine

    def expect(i, value, match):
        bad = list(args)
        bad[i] = value
        with pytest.raises(ValueError, match=match):
            _C.lstm_sequence_forward(*bad)

    expect(0, nans((2, 3, 6)), "'hs' expected shape")
    expect(5, args[5].astype(np.float64), "'x' expected dtype float32")
    expect(8, np.asfortranarray(np.ones((4, 20), np.float32)), "'kernel' must be C-contiguous")
    expect(8, None, "'kernel' is required")
    expect(10, np.ones(21, np.float32), "'bias' expected shape")
    ro = nans((2, 5))
    ro.setflags(write=False)
    expect(1, ro, "'h_final' is an output and must be writable")
    expect(16, codes.GELU, "'activation' must be linear, relu, sigmoid, tanh or hard_sigmoid")
    expect(17, codes.SWISH, "'recurrent_activation' must be")
    expect(17, 99, "not a known activation code")
    expect(11, -1, "size 'N' must be >= 0")
    # GRU: the bias shape follows reset_after; SimpleRNN: its single activation is checked.
    rng = np.random.default_rng(12)
    p = make_params(rng, "gru", False, 2, 3, 4, 5)
    out = [nans((2, 3, 5)), nans((2, 5)), nans((2, 3, 15)), nans((2, 3, 5))]
    with pytest.raises(ValueError, match="'bias' expected shape \\(2, 15\\)"):
        _C.gru_sequence_forward(*out, p["x"], p["h0"], p["kernel"], p["recurrent_kernel"],
                                p["bias"], 2, 3, 4, 5, False, True, codes.TANH, codes.SIGMOID)
    p = make_params(rng, "simple_rnn", None, 2, 3, 4, 5)
    with pytest.raises(ValueError, match="'activation' must be"):
        _C.simple_rnn_sequence_forward(nans((2, 3, 5)), nans((2, 5)), p["x"], p["h0"],
                                       p["kernel"], p["recurrent_kernel"], p["bias"], 2, 3, 4, 5,
                                       False, codes.ELU)
