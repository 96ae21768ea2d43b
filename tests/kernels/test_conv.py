"""Tests of the conv2d and pooling kernels: reference spec, compiled kernels, argument checks."""

import itertools
import math
import random

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import conv as ref
from fkeras.ops.conv_utils import conv_output_size_and_padding
from kernel_testing import assert_close, check_vjp, nans, rand

# ------------------------------------------------------------------------------------------------
# Problem descriptions
# ------------------------------------------------------------------------------------------------


def conv_problem(N, H, W, C, K, R, S, sh=1, sw=1, dh=1, dw=1, padding="valid", groups=1):
    """The kernels' size/attribute tuple (N, ..., groups) of a Keras-style conv description."""
    P, pt = conv_output_size_and_padding(H, R, sh, dh, padding)
    Q, pl = conv_output_size_and_padding(W, S, sw, dw, padding)
    return {"N": N, "H": H, "W": W, "C": C, "K": K, "R": R, "S": S, "P": P, "Q": Q,
            "stride_h": sh, "stride_w": sw, "dil_h": dh, "dil_w": dw, "pad_top": pt,
            "pad_left": pl, "groups": groups}


def conv_args(c):
    keys = ("N", "H", "W", "C", "K", "R", "S", "P", "Q", "stride_h", "stride_w", "dil_h",
            "dil_w", "pad_top", "pad_left", "groups")
    return tuple(c[k] for k in keys)


def shapes(c):
    x = (c["N"], c["H"], c["W"], c["C"])
    w = (c["R"], c["S"], c["C"] // c["groups"], c["K"])
    y = (c["N"], c["P"], c["Q"], c["K"])
    return x, w, y


def pool_problem(N, H, W, C, R, S, sh, sw, padding):
    P, pt = conv_output_size_and_padding(H, R, sh, 1, padding)
    Q, pl = conv_output_size_and_padding(W, S, sw, 1, padding)
    return {"N": N, "H": H, "W": W, "C": C, "P": P, "Q": Q, "R": R, "S": S, "stride_h": sh,
            "stride_w": sw, "pad_top": pt, "pad_left": pl}


def pool_args(c):
    keys = ("N", "H", "W", "C", "P", "Q", "R", "S", "stride_h", "stride_w", "pad_top", "pad_left")
    return tuple(c[k] for k in keys)


# ------------------------------------------------------------------------------------------------
# Padding arithmetic (fkeras.ops.conv_utils)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 4, 5, 7, 8, 9, 28])
@pytest.mark.parametrize("k,stride,dil", [(1, 1, 1), (2, 1, 1), (3, 1, 1), (3, 2, 1), (3, 1, 2),
                                          (5, 3, 1), (2, 2, 2), (4, 3, 2)])
def test_output_size_and_padding(size, k, stride, dil):
    eff = (k - 1) * dil + 1
    # valid: every window start that fits, counted by brute force.
    starts = [s for s in range(0, size, stride) if s + eff <= size]
    assert conv_output_size_and_padding(size, k, stride, dil, "valid") == (len(starts), 0)
    # same: TensorFlow's rule; the odd element of padding goes after.
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + eff - size, 0)
    got_out, pad_before = conv_output_size_and_padding(size, k, stride, dil, "SAME")
    assert (got_out, pad_before) == (out, total // 2)
    assert pad_before <= total - pad_before <= pad_before + 1
    # the last window ends inside the padded input
    assert (out - 1) * stride + eff <= pad_before + size + (total - pad_before)


def test_output_size_and_padding_rejects_bad_arguments():
    with pytest.raises(ValueError, match="padding"):
        conv_output_size_and_padding(5, 3, 1, 1, "full")
    with pytest.raises(ValueError, match="stride"):
        conv_output_size_and_padding(5, 3, 0, 1, "same")


# ------------------------------------------------------------------------------------------------
# The reference against independent formulations
# ------------------------------------------------------------------------------------------------


def direct_conv(x, w, c):
    """The convolution as its definition, one output element at a time (tiny shapes only)."""
    N, P, Q, K, C, G = c["N"], c["P"], c["Q"], c["K"], c["C"], c["groups"]
    Cg, Kg = C // G, K // G
    y = np.zeros((N, P, Q, K))
    for n, p, q, k in itertools.product(range(N), range(P), range(Q), range(K)):
        g = k // Kg
        for r, s, ci in itertools.product(range(c["R"]), range(c["S"]), range(Cg)):
            h = p * c["stride_h"] + r * c["dil_h"] - c["pad_top"]
            v = q * c["stride_w"] + s * c["dil_w"] - c["pad_left"]
            if 0 <= h < c["H"] and 0 <= v < c["W"]:
                y[n, p, q, k] += x[n, h, v, g * Cg + ci] * w[r, s, ci, k]
    return y


REF_CASES = [
    conv_problem(2, 5, 4, 4, 4, 3, 2),
    conv_problem(1, 6, 5, 4, 6, 3, 3, 2, 1, 1, 1, "same"),
    conv_problem(2, 7, 5, 4, 4, 2, 3, 1, 2, 2, 1, "same", groups=2),
    conv_problem(1, 5, 6, 3, 6, 3, 2, 3, 2, 1, 2, "valid", groups=3),
    conv_problem(1, 4, 4, 2, 2, 1, 1, 2, 2),
]


@pytest.mark.parametrize("c", REF_CASES)
def test_reference_conv_matches_direct_definition(c):
    rng = np.random.default_rng(0)
    xs, ws, ys = shapes(c)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(c["K"])
    y = np.empty(ys)
    ref.conv2d_forward(y, x, w, b, *conv_args(c), codes.TANH, 0.0)
    np.testing.assert_allclose(y, np.tanh(direct_conv(x, w, c) + b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", REF_CASES)
def test_reference_conv_backward_matches_finite_differences(c):
    rng = np.random.default_rng(1)
    xs, ws, ys = shapes(c)
    inputs = {"x": rng.standard_normal(xs), "w": rng.standard_normal(ws)}
    dy = rng.standard_normal(ys)

    def f(v):
        y = np.empty(ys)
        ref.conv2d_forward(y, v["x"], v["w"], None, *conv_args(c), codes.LINEAR, 0.0)
        return {"y": y}

    dx, dw = np.empty(xs), np.empty(ws)
    ref.conv2d_backward_input(dx, dy, inputs["w"], *conv_args(c))
    ref.conv2d_backward_weight(dw, dy, inputs["x"], *conv_args(c))
    check_vjp(f, inputs, {"y": dy}, {"x": dx, "w": dw}, rng=rng)


def naive_pool(x, c, kind):
    """Pooling one window at a time over its in-bounds elements (np.argmax: first max wins)."""
    N, C, P, Q = c["N"], c["C"], c["P"], c["Q"]
    y, idx = np.zeros((N, P, Q, C)), np.zeros((N, P, Q, C), np.int64)
    for n, p, q in itertools.product(range(N), range(P), range(Q)):
        h0, w0 = p * c["stride_h"] - c["pad_top"], q * c["stride_w"] - c["pad_left"]
        hs = [h for h in range(h0, h0 + c["R"]) if 0 <= h < c["H"]]
        ws = [v for v in range(w0, w0 + c["S"]) if 0 <= v < c["W"]]
        cells = [(h, v) for h in hs for v in ws]
        win = np.stack([x[n, h, v] for h, v in cells])  # (cells, C), row-major window order
        if kind == "avg":
            y[n, p, q] = win.mean(axis=0)
            continue
        best = np.argmax(win, axis=0)
        y[n, p, q] = win[best, np.arange(C)]
        for ch in range(C):
            h, v = cells[best[ch]]
            idx[n, p, q, ch] = ((n * c["H"] + h) * c["W"] + v) * C + ch
    return y, idx


POOL_CASES = [
    pool_problem(2, 5, 5, 3, 2, 2, 2, 2, "valid"),
    pool_problem(2, 5, 7, 3, 3, 3, 2, 2, "same"),
    pool_problem(1, 4, 5, 2, 3, 2, 1, 1, "same"),
    pool_problem(1, 7, 4, 4, 3, 3, 3, 2, "same"),
    pool_problem(1, 1, 1, 2, 2, 2, 2, 2, "same"),
]


@pytest.mark.parametrize("c", POOL_CASES)
def test_reference_pooling_matches_naive_windows(c):
    rng = np.random.default_rng(2)
    # Few distinct values: many ties; negative values: a zero from the padding would win.
    x = rng.integers(-4, 0, size=(c["N"], c["H"], c["W"], c["C"])).astype(np.float64)
    x.flat[3 % x.size] = np.nan
    want_y, want_idx = naive_pool(x, c, "max")
    y, idx = np.empty(want_y.shape), np.empty(want_y.shape, np.int64)
    ref.maxpool2d_forward(y, idx, x, *pool_args(c))
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(y, want_y)
    x[np.isnan(x)] = 0.5
    want_avg, _ = naive_pool(x, c, "avg")
    ref.avgpool2d_forward(y, x, *pool_args(c))
    np.testing.assert_allclose(y, want_avg, rtol=1e-12)


@pytest.mark.parametrize("c", POOL_CASES)
def test_reference_pooling_backward_matches_finite_differences(c):
    rng = np.random.default_rng(3)
    xs, ys = (c["N"], c["H"], c["W"], c["C"]), (c["N"], c["P"], c["Q"], c["C"])
    # Distinct, well separated values: the argmax does not move under the small perturbations.
    x = rng.permutation(np.prod(xs)).reshape(xs).astype(np.float64)
    dy = rng.standard_normal(ys)

    def f(v):
        y, yi, idx = np.empty(ys), np.empty(ys), np.empty(ys, np.int64)
        ref.maxpool2d_forward(y, idx, v["x"], *pool_args(c))
        ref.avgpool2d_forward(yi, v["x"], *pool_args(c))
        return {"max": y, "avg": yi}

    y, idx = np.empty(ys), np.empty(ys, np.int64)
    ref.maxpool2d_forward(y, idx, x, *pool_args(c))
    dmax, davg = np.empty(xs), np.empty(xs)
    ref.maxpool2d_backward(dmax, dy, idx, c["N"], c["H"], c["W"], c["C"], c["P"], c["Q"])
    ref.avgpool2d_backward(davg, dy, *pool_args(c))
    check_vjp(f, {"x": x}, {"max": dy}, {"x": dmax}, eps=1e-3, rng=rng)
    check_vjp(f, {"x": x}, {"avg": dy}, {"x": davg}, eps=1e-3, rng=rng)


# ------------------------------------------------------------------------------------------------
# Compiled kernels against the reference
# ------------------------------------------------------------------------------------------------


def _sweep_cases():
    picks = random.Random(20240611)
    cases = [
        conv_problem(1, 1, 1, 1, 1, 1, 1),
        conv_problem(2, 5, 4, 8, 16, 1, 1),  # pointwise: a GEMM on the NHWC data
        conv_problem(2, 5, 5, 8, 4, 1, 1, groups=2),  # pointwise, grouped
        conv_problem(2, 7, 8, 8, 8, 1, 1, 2, 2),  # strided 1x1: phases without taps
        conv_problem(1, 9, 7, 16, 16, 3, 3, padding="same", groups=16),  # depthwise
        conv_problem(2, 8, 9, 4, 8, 3, 3, 1, 1, 2, 2, "same", groups=4),  # depthwise x2
        conv_problem(1, 4, 5, 3, 4, 5, 5, padding="same"),  # window larger than the input
        conv_problem(2, 4, 4, 3, 5, 5, 3, padding="valid"),  # empty output
        conv_problem(3, 9, 9, 17, 17, 2, 2, 3, 3, 1, 1, "same"),  # stride > window
        conv_problem(1, 9, 8, 3, 16, 5, 2, 2, 3, 2, 1, "same"),
    ]
    for _ in range(90):
        C = picks.choice([1, 3, 4, 8, 16, 17])
        K = picks.choice([1, 3, 4, 8, 16, 17])
        groups = picks.choice([1, 1, 2, C])
        if groups == C:
            K = C * picks.choice([1, 2])
        if C % groups or K % groups:
            groups = 1
        cases.append(conv_problem(
            N=picks.choice([1, 2, 3]), H=picks.choice([1, 4, 5, 7, 8, 9]),
            W=picks.choice([1, 4, 5, 7, 8, 9]), C=C, K=K, R=picks.choice([1, 2, 3, 5]),
            S=picks.choice([1, 2, 3, 5]), sh=picks.randint(1, 3), sw=picks.randint(1, 3),
            dh=picks.randint(1, 2), dw=picks.randint(1, 2),
            padding=picks.choice(["valid", "same"]), groups=groups))
    return cases


SWEEP = _sweep_cases()


def _case_id(c):
    return ("N{N}_{H}x{W}_C{C}K{K}_{R}x{S}_s{stride_h}{stride_w}_d{dil_h}{dil_w}"
            "_p{pad_top}{pad_left}_g{groups}").format(**c)


def _tolerance(c):
    # Float32 sums of R*S*C/groups (forward, dw: also N*P*Q) products: absolute error grows
    # like the square root of the reduction length times the terms' size.
    return 1e-5 * math.sqrt(max(1, c["R"] * c["S"] * max(c["C"] // c["groups"], c["K"])))


def run_conv(c, rng, bias=True, activation=codes.LINEAR, alpha=0.0, scale=1.0):
    """Runs the three compiled conv kernels on NaN-filled outputs; compares with the reference."""
    xs, ws, ys = shapes(c)
    x, w, dy = rand(rng, xs, scale), rand(rng, ws, scale), rand(rng, ys)
    b = rand(rng, (c["K"],)) if bias else None
    args = conv_args(c)
    tol = _tolerance(c)

    y, want = nans(ys), np.empty(ys)
    _C.conv2d_forward(y, x, w, b, *args, activation, alpha)
    ref.conv2d_forward(want, x, w, b, *args, activation, alpha)
    assert_close(y, want, rtol=1e-5, atol=tol, name="y")

    dx, want = nans(xs), np.empty(xs)
    _C.conv2d_backward_input(dx, dy, w, *args)
    ref.conv2d_backward_input(want, dy, w, *args)
    assert_close(dx, want, rtol=1e-5, atol=tol, name="dx")

    dw, want = nans(ws), np.empty(ws)
    _C.conv2d_backward_weight(dw, dy, x, *args)
    ref.conv2d_backward_weight(want, dy, x, *args)
    dw_tol = 1e-5 * math.sqrt(max(1, c["N"] * c["P"] * c["Q"]))
    assert_close(dw, want, rtol=1e-5, atol=dw_tol, name="dw")


@pytest.fixture(params=["auto", "gather", "col2im"])
def input_grad_form(request, monkeypatch):
    """conv2d_backward_input picks a gather or a col2im form by a cost estimate; the kernel reads
    FKERAS_CONV_BACKWARD_INPUT at each call, so every shape can test both."""
    if request.param != "auto":
        monkeypatch.setenv("FKERAS_CONV_BACKWARD_INPUT", request.param)
        # The GEMM forms only run where the direct convolution is off (it would take over the
        # shapes it serves, see direct.cpp).
        monkeypatch.setenv("FKERAS_CONV_DIRECT", "0")
    return request.param


@pytest.fixture(params=["gemm", "direct"])
def conv_path(request, monkeypatch):
    """conv2d_forward and conv2d_backward_input choose between a direct convolution (AVX2 and
    AVX-512, groups == 1; backward-input stride 1) and the im2col + GEMM path by shape; the
    kernels read FKERAS_CONV_DIRECT at each call: 0 never takes the direct path, 1 takes it
    wherever it applies (also strides and dilations in the forward)."""
    monkeypatch.setenv("FKERAS_CONV_DIRECT", "0" if request.param == "gemm" else "1")
    return request.param


@pytest.mark.parametrize("c", SWEEP, ids=_case_id)
def test_conv_matches_reference(c, isa, input_grad_form):
    rng = np.random.default_rng(SWEEP.index(c))
    run_conv(c, rng, bias=SWEEP.index(c) % 2 == 0)


FUSED = [code for code in range(14) if code not in (codes.GELU, codes.GELU_TANH, codes.SWISH)]


@pytest.mark.parametrize("activation", FUSED)
def test_conv_fused_activations(activation, isa):
    rng = np.random.default_rng(activation)
    alpha = 0.3 if activation in (codes.ELU, codes.LEAKY_RELU) else 0.0
    for c in (conv_problem(2, 5, 7, 4, 8, 3, 3, padding="same"),
              conv_problem(1, 6, 6, 4, 6, 1, 1, groups=2)):
        run_conv(c, rng, bias=True, activation=activation, alpha=alpha, scale=0.4)
    run_conv(conv_problem(1, 5, 5, 3, 3, 2, 2, 2, 2, groups=3), rng, bias=False,
             activation=activation, alpha=alpha, scale=0.4)


@pytest.mark.parametrize("c", SWEEP[::3], ids=_case_id)
def test_conv_matches_reference_direct_forced(c, isa):
    # The general sweep (strides, dilations, groups, tiny images) with the direct path taken
    # wherever it applies; input_grad_form runs the same shapes with it off.
    mp = pytest.MonkeyPatch()
    mp.setenv("FKERAS_CONV_DIRECT", "1")
    try:
        run_conv(c, np.random.default_rng(SWEEP.index(c)), bias=SWEEP.index(c) % 2 == 1)
    finally:
        mp.undo()


def _direct_cases():
    # The direct kernel's blocks: 16 (AVX-512) or 8 (AVX2) channels per vector, up to 4 (2)
    # vectors per block, 6..24 (6..14) pixels per block: K = 16..80 hits every narrower last
    # block; Q from 1 to 30 hits short rows, exact multiples and overlapped tails; C = 32 with
    # K >= 48 splits the filter rows (partial sums through y).
    cases = []
    for K, C, (H, W), padding in [
        (16, 1, (9, 9), "same"), (32, 1, (28, 28), "valid"), (48, 3, (11, 7), "same"),
        (64, 32, (10, 13), "same"), (80, 32, (7, 30), "valid"), (16, 32, (5, 3), "same"),
        (32, 3, (1, 1), "same"), (64, 3, (3, 3), "valid"), (48, 32, (12, 26), "same"),
        (80, 1, (4, 25), "same"), (16, 3, (30, 5), "valid"), (32, 32, (6, 15), "same"),
    ]:
        cases.append(conv_problem(1, H, W, C, K, 3, 3, padding=padding))
    cases += [
        conv_problem(2, 9, 11, 16, 32, 5, 5, padding="same"),
        conv_problem(2, 9, 11, 32, 16, 2, 3, padding="same"),  # even filter: pads differ
        conv_problem(1, 12, 13, 16, 32, 3, 3, 1, 1, 2, 2, "same"),  # dilated
        conv_problem(2, 13, 12, 8, 48, 3, 3, 2, 2, padding="same"),  # strided (forward only)
        conv_problem(1, 8, 8, 5, 16, 1, 1),  # pointwise
        # Narrow filters (K below the vector width, a filter row's run S*C at least one
        # vector): the dot-product kernel, vector runs plus a scalar tail, 1..8 pixel blocks.
        conv_problem(2, 9, 11, 32, 1, 3, 3, padding="same"),
        conv_problem(2, 10, 7, 17, 3, 3, 3, padding="valid"),  # run 51: a 3-float tail
        conv_problem(1, 12, 13, 16, 7, 3, 3, 2, 2, padding="same"),  # strided
        conv_problem(1, 12, 13, 24, 15, 3, 3, 1, 1, 2, 1, "same"),  # row dilation
        conv_problem(2, 6, 9, 8, 2, 5, 5, padding="same"),
    ]
    return cases


DIRECT = _direct_cases()


@pytest.mark.parametrize("c", DIRECT, ids=_case_id)
def test_conv_direct_and_gemm_paths(c, isa, conv_path):
    rng = np.random.default_rng(DIRECT.index(c))
    run_conv(c, rng, bias=DIRECT.index(c) % 3 != 2, activation=codes.RELU)


@pytest.mark.parametrize("activation", FUSED)
def test_conv_direct_fused_activations(activation, isa, conv_path):
    rng = np.random.default_rng(activation)
    alpha = 0.3 if activation in (codes.ELU, codes.LEAKY_RELU) else 0.0
    run_conv(conv_problem(2, 6, 9, 3, 32, 3, 3, padding="same"), rng, activation=activation,
             alpha=alpha, scale=0.4)


@pytest.mark.parametrize("threads", [1, 3])
def test_conv_direct_thread_counts(threads, conv_path):
    # Tasks of output rows (forward, dx) and per-slice partial filters summed at the end (dw):
    # one slice, and several with a remainder.
    before = _C.num_threads()
    _C.set_num_threads(threads)
    try:
        run_conv(conv_problem(5, 11, 9, 3, 32, 3, 3, padding="same"), np.random.default_rng(3))
        run_conv(conv_problem(1, 7, 6, 16, 16, 3, 3), np.random.default_rng(4))
        run_conv(conv_problem(5, 11, 9, 32, 3, 3, 3, padding="same"),  # narrow: (K, T) slices
                 np.random.default_rng(5))
    finally:
        _C.set_num_threads(before)


@pytest.mark.parametrize("c", [conv_problem(1, 14, 16, 48, 32, 3, 3, padding="same"),
                               conv_problem(2, 15, 14, 64, 128, 3, 3, padding="same"),
                               conv_problem(1, 7, 7, 64, 64, 3, 3, padding="same")],
                         ids=["C48_Q16", "C64_K128_Q14", "C64_Q7"])
def test_conv_wide_channels_automatic_choice(c, isa, monkeypatch):
    # Past C = 32 (forward) and K = 64 (backward-input) the direct path is chosen for rows of
    # >= 14 columns and filters within 1 MB, the GEMM path for 7-column rows: both sides.
    monkeypatch.delenv("FKERAS_CONV_DIRECT", raising=False)
    run_conv(c, np.random.default_rng(c["C"] + c["Q"]), activation=codes.RELU, scale=0.5)


@pytest.mark.parametrize("c", [conv_problem(64, 28, 28, 1, 32, 3, 3),
                               conv_problem(64, 26, 26, 32, 64, 3, 3)], ids=["conv1", "conv2"])
def test_conv_cnn_shapes(c, isa, conv_path):
    # The benchmark CNN's two convolutions, exactly.
    run_conv(c, np.random.default_rng(c["C"]), activation=codes.RELU)


def test_conv_larger_shape(isa, input_grad_form):
    run_conv(conv_problem(4, 28, 28, 16, 32, 3, 3, padding="same"), np.random.default_rng(7))


@pytest.mark.parametrize("C,multiplier,stride", [(24, 1, 1), (24, 2, 2), (72, 1, 2), (128, 1, 1),
                                                (32, 1, 1), (59, 1, 2)])
def test_depthwise_larger_shape(isa, C, multiplier, stride):
    # Register blocks of 64 channels, then 32, 16 and 8: 72 = 64 + 8, 128 = 2 x 64, 32 = one
    # 32 block, 59 = 32 + 16 + 8 and 3 channels of the plain loop.
    c = conv_problem(3, 15, 16, C, C * multiplier, 3, 3, stride, stride, padding="same",
                     groups=C)
    run_conv(c, np.random.default_rng(multiplier), activation=codes.RELU)


@pytest.mark.parametrize("threads", [1, 3])
def test_conv_thread_counts(threads, input_grad_form):
    before = _C.num_threads()
    _C.set_num_threads(threads)
    try:
        run_conv(conv_problem(3, 20, 17, 8, 12, 3, 3, 2, 1, 1, 2, "same"),
                 np.random.default_rng(8))
        run_conv(conv_problem(2, 16, 16, 8, 8, 1, 1), np.random.default_rng(9))
    finally:
        _C.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("c", [
    conv_problem(4, 28, 28, 16, 32, 3, 3),                      # L = 144 > Kg: transposed GEMM
    conv_problem(4, 24, 23, 2, 48, 3, 3, padding="same"),       # L = 18 < Kg: direct GEMM
    conv_problem(3, 21, 22, 8, 12, 3, 3, 1, 2, groups=2),       # per group: L = 36 > Kg = 6
    conv_problem(3, 19, 20, 8, 40, 2, 2, 2, 2, groups=2),       # per group: L = 16 < Kg = 20
], ids=["transposed", "direct", "groups-transposed", "groups-direct"])
def test_conv_backward_weight_orientations(isa, threads, c):
    # conv2d_backward_weight computes dw or dw^T by shape, serially (few blocks) or in slices
    # summed at the end (many blocks; more with 3 threads): every combination against the
    # reference.
    before = _C.num_threads()
    _C.set_num_threads(threads)
    try:
        run_conv(c, np.random.default_rng(threads))
    finally:
        _C.set_num_threads(before)


POOL_SWEEP = [
    pool_problem(N, H, W, C, R, S, sh, sw, padding)
    for (N, H, W, C, R, S, sh, sw, padding) in [
        (1, 1, 1, 1, 1, 1, 1, 1, "valid"),
        (2, 4, 4, 3, 2, 2, 2, 2, "valid"),
        (2, 5, 5, 17, 2, 2, 2, 2, "same"),
        (3, 7, 9, 16, 3, 3, 2, 2, "same"),
        (1, 9, 8, 8, 3, 3, 1, 1, "same"),
        (2, 8, 7, 4, 3, 2, 3, 2, "valid"),
        (1, 5, 9, 33, 5, 3, 1, 3, "same"),
        (2, 1, 5, 3, 2, 3, 2, 1, "same"),
        (4, 28, 28, 32, 2, 2, 2, 2, "valid"),
    ]
]


def _pool_id(c):
    return "N{N}_{H}x{W}_C{C}_{R}x{S}_s{stride_h}{stride_w}_p{pad_top}{pad_left}".format(**c)


@pytest.mark.parametrize("c", POOL_SWEEP, ids=_pool_id)
def test_pooling_matches_reference(c, isa):
    rng = np.random.default_rng(c["H"] * 100 + c["C"])
    xs, ys = (c["N"], c["H"], c["W"], c["C"]), (c["N"], c["P"], c["Q"], c["C"])
    # Integers: ties everywhere (the first maximum must win); all negative: padding never wins.
    x = rng.integers(-3, 0, size=xs).astype(np.float32)
    x.flat[rng.integers(0, x.size)] = np.nan
    dy = rand(rng, ys)
    y, idx = nans(ys), np.full(ys, -7, np.int64)
    want_y, want_idx = np.empty(ys), np.empty(ys, np.int64)
    _C.maxpool2d_forward(y, idx, x, *pool_args(c))
    ref.maxpool2d_forward(want_y, want_idx, x, *pool_args(c))
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(y, want_y.astype(np.float32))

    small = (c["N"], c["H"], c["W"], c["C"], c["P"], c["Q"])
    dx, want = nans(xs), np.empty(xs)
    _C.maxpool2d_backward(dx, dy, idx, *small)
    ref.maxpool2d_backward(want, dy, want_idx, *small)
    assert_close(dx, want, name="maxpool dx")

    x = rand(rng, xs)
    y, want = nans(ys), np.empty(ys)
    _C.avgpool2d_forward(y, x, *pool_args(c))
    ref.avgpool2d_forward(want, x, *pool_args(c))
    assert_close(y, want, name="avgpool y")
    dx, want = nans(xs), np.empty(xs)
    _C.avgpool2d_backward(dx, dy, *pool_args(c))
    ref.avgpool2d_backward(want, dy, *pool_args(c))
    assert_close(dx, want, name="avgpool dx")


def test_avgpool_same_counts_only_in_bounds(isa):
    c = pool_problem(1, 5, 5, 3, 3, 3, 2, 2, "same")
    ys = (1, c["P"], c["Q"], 3)
    y = nans(ys)
    _C.avgpool2d_forward(y, np.ones((1, 5, 5, 3), np.float32), *pool_args(c))
    np.testing.assert_array_equal(y, np.ones(ys, np.float32))  # a padded zero would pull it down
    # A corner window of 'same' 3x3 stride 2 over 5x5 sees 2x2 input elements: dy / 4 each.
    dx = nans((1, 5, 5, 3))
    dy = np.zeros(ys, np.float32)
    dy[0, 0, 0, :] = 1.0
    _C.avgpool2d_backward(dx, dy, *pool_args(c))
    assert c["pad_top"] == 1 and c["pad_left"] == 1
    np.testing.assert_array_equal(dx[0, :2, :2], np.full((2, 2, 3), 0.25, np.float32))
    assert np.count_nonzero(dx) == 12


def test_maxpool_padding_never_wins_and_first_max_wins(isa):
    c = pool_problem(1, 3, 3, 1, 2, 2, 1, 1, "same")  # pads bottom/right only
    x = np.full((1, 3, 3, 1), -5.0, np.float32)  # all tied, all below the padding's zero
    y, idx = nans((1, 3, 3, 1)), np.zeros((1, 3, 3, 1), np.int64)
    _C.maxpool2d_forward(y, idx, x, *pool_args(c))
    np.testing.assert_array_equal(y, x)
    # each window's first element (its top-left) is the winner
    np.testing.assert_array_equal(idx.ravel(), np.arange(9))


@pytest.mark.parametrize("C", [16, 40, 7])
def test_maxpool_channel_blocks_keep_the_first_nan_and_first_max(C, isa):
    # The max pool keeps 16 channels' maxima and winning cells in registers (pool_impl.h):
    # several NaNs and ties per window, in the blocks and in the one-channel tail, give the
    # reference's indices (first NaN wins, else the first maximum).
    c = pool_problem(2, 7, 8, C, 3, 2, 2, 2, "valid")
    rng = np.random.default_rng(C)
    x = rng.integers(-2, 1, size=(2, 7, 8, C)).astype(np.float32)
    x[rng.random(x.shape) < 0.15] = np.nan
    ys = (2, c["P"], c["Q"], C)
    y, idx = nans(ys), np.full(ys, -7, np.int64)
    want_y, want_idx = np.empty(ys), np.empty(ys, np.int64)
    _C.maxpool2d_forward(y, idx, x, *pool_args(c))
    ref.maxpool2d_forward(want_y, want_idx, x, *pool_args(c))
    assert np.isnan(want_y).any() and not np.isnan(want_y).all()
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(y, want_y.astype(np.float32))


# ------------------------------------------------------------------------------------------------
# Argument checks
# ------------------------------------------------------------------------------------------------


def _conv_buffers(c):
    xs, ws, ys = shapes(c)
    return np.zeros(ys, np.float32), np.zeros(xs, np.float32), np.zeros(ws, np.float32)


def test_conv_rejects_bad_arguments():
    c = conv_problem(2, 5, 5, 4, 6, 3, 3, padding="same", groups=2)
    args = conv_args(c)
    y, x, w = _conv_buffers(c)
    _C.conv2d_forward(y, x, w, None, *args, 0, 0.0)  # the good call works
    with pytest.raises(ValueError, match="dtype"):
        _C.conv2d_forward(y, x.astype(np.float64), w, None, *args, 0, 0.0)
    with pytest.raises(ValueError, match="'w'"):
        _C.conv2d_forward(y, x, np.zeros((3, 3, 4, 6), np.float32), None, *args, 0, 0.0)
    with pytest.raises(ValueError, match="bias"):
        _C.conv2d_forward(y, x, w, np.zeros(5, np.float32), *args, 0, 0.0)
    with pytest.raises(ValueError, match="contiguous"):
        _C.conv2d_forward(y, np.asfortranarray(x), w, None, *args, 0, 0.0)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _C.conv2d_forward(y, x, w, None, *args, 0, 0.0)
    y.flags.writeable = True
    with pytest.raises(ValueError, match="gelu"):
        _C.conv2d_forward(y, x, w, None, *args, codes.GELU, 0.0)
    bad = dict(c, groups=4)  # divides C = 4 but not K = 6
    with pytest.raises(ValueError, match="groups"):
        _C.conv2d_forward(y, x, w, None, *conv_args(bad), 0, 0.0)
    with pytest.raises(ValueError, match="groups"):
        _C.conv2d_backward_input(x, y, w, *conv_args(dict(c, groups=0)))
    with pytest.raises(ValueError, match="groups"):
        _C.conv2d_backward_weight(w, y, x, *conv_args(dict(c, groups=3)))
    with pytest.raises(ValueError, match="stride"):
        _C.conv2d_backward_input(x, y, w, *conv_args(dict(c, stride_h=0)))
    with pytest.raises(ValueError, match="pad_top"):
        _C.conv2d_backward_weight(w, y, x, *conv_args(dict(c, pad_top=-1)))
    with pytest.raises(ValueError, match="'dy'"):
        _C.conv2d_backward_weight(w, y[:1], x, *args)
    with pytest.raises(ValueError, match="groups"):
        ref.conv2d_forward(y, x, w, None, *conv_args(bad), 0, 0.0)


def test_pooling_rejects_bad_arguments():
    c = pool_problem(2, 4, 4, 3, 2, 2, 2, 2, "valid")
    xs, ys = (2, 4, 4, 3), (2, 2, 2, 3)
    x, y, idx = np.zeros(xs, np.float32), np.zeros(ys, np.float32), np.zeros(ys, np.int64)
    with pytest.raises(ValueError, match="int64"):
        _C.maxpool2d_forward(y, idx.astype(np.int32), x, *pool_args(c))
    with pytest.raises(ValueError, match="'x'"):
        _C.avgpool2d_forward(y, np.zeros((2, 4, 5, 3), np.float32), *pool_args(c))
    with pytest.raises(ValueError, match="padding"):  # window (0, 0) entirely in padding
        _C.maxpool2d_forward(y, idx, x, *pool_args(dict(c, pad_top=2)))
    with pytest.raises(ValueError, match="padding"):
        ref.maxpool2d_forward(y, idx, x, *pool_args(dict(c, pad_left=2)))
    idx.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        _C.maxpool2d_forward(y, idx, x, *pool_args(c))
    for bad in (96, -1):  # 96 == N*H*W*C: out of range
        idx = np.zeros(ys, np.int64)
        idx[0, 1, 0, 2] = bad
        with pytest.raises(ValueError, match="indices"):
            _C.maxpool2d_backward(x, y, idx, 2, 4, 4, 3, 2, 2)
    idx = np.ones(ys, np.int64)  # in range, but image 1's entries point into image 0
    with pytest.raises(ValueError, match="own image"):
        _C.maxpool2d_backward(x, y, idx, 2, 4, 4, 3, 2, 2)
    # With few images the channels are split between tasks: an index into another channel of
    # its own image is then rejected too.
    xs1, ys1 = (1, 4, 4, 64), (1, 2, 2, 64)
    idx = np.arange(64, dtype=np.int64)[None, None, None, :].repeat(2, 1).repeat(2, 2)
    idx[0, 1, 1, 40] = 3
    before = _C.num_threads()
    _C.set_num_threads(2)
    try:
        with pytest.raises(ValueError, match="own image"):
            _C.maxpool2d_backward(np.zeros(xs1, np.float32), np.zeros(ys1, np.float32), idx,
                                  1, 4, 4, 64, 2, 2)
    finally:
        _C.set_num_threads(before)
