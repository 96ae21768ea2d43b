"""conv2d forward and both backwards with bf16 products (fkeras._C.set_gemm_bf16): the float64
reference on bf16-rounded operands, on the direct convolution's shapes (under the flag its
VDPBF16PS variant, cpp/conv/direct_avx512_bf16.cpp, forced with FKERAS_CONV_DIRECT=1, or the
im2col + bf16 GEMM path with =0), its pair edges (odd tap runs: C = 1 or 3, odd output widths
for the backward-weight pixel pairs), grouped, strided, dilated and pointwise convolutions, both
backward-input forms, 1 and 2 threads; far from the unrounded result; Inf where the reference
has it and nowhere else; and bit-identical fp32 where the bf16 path is not native.
"""

import numpy as np
import pytest
from bf16_testing import (NATIVE, assert_bf16_close, assert_far, bf16, low_bits, needs_native,
                          rne, threads)
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import conv as ref
from kernel_testing import nans, rand
from test_conv import DIRECT, conv_args, conv_problem, shapes

CASES = DIRECT[::2] + [
    conv_problem(2, 9, 11, 16, 32, 5, 5, padding="same"),
    conv_problem(1, 12, 13, 16, 32, 3, 3, 1, 1, 2, 2, "same"),      # dilated
    conv_problem(2, 13, 12, 8, 48, 3, 3, 2, 2, padding="same"),      # strided
    conv_problem(1, 8, 8, 5, 16, 1, 1),                              # pointwise
    conv_problem(2, 7, 9, 8, 12, 3, 3, padding="same", groups=2),    # grouped
    conv_problem(4, 26, 26, 32, 64, 3, 3),                           # the benchmark CNN's conv2
    conv_problem(3, 28, 28, 1, 32, 3, 3),                            # conv1: odd run, C = 1
    conv_problem(2, 9, 7, 3, 16, 5, 5, padding="same"),              # odd run, odd Q
    conv_problem(1, 11, 9, 1, 48, 2, 3, padding="same"),             # even filter, odd Q
    conv_problem(2, 13, 12, 3, 32, 3, 3, 2, 2, padding="same"),      # strided, odd C
    conv_problem(1, 12, 13, 3, 16, 3, 3, 1, 1, 2, 2, "same"),        # dilated, odd C
    conv_problem(1, 10, 11, 16, 32, 3, 3, 1, 1, 1, 2, "same"),       # column dilation only
    conv_problem(2, 7, 9, 32, 80, 3, 3),                             # NV 4 + 1 blocks, odd Q
]


def case_id(c):
    return "x".join(str(c[k]) for k in ("N", "H", "W", "C", "K", "R", "S")) + \
        f"_s{c['stride_h']}_d{c['dil_h']}_g{c['groups']}"


@pytest.fixture(params=["auto", "direct=1", "direct=0", "gather", "col2im"])
def conv_env(request, monkeypatch):
    """The kernels' path switches (read at each call): FKERAS_CONV_DIRECT=1 forces the bf16
    direct convolution wherever it applies, =0 the im2col + bf16 GEMM path."""
    if request.param.startswith("direct="):
        monkeypatch.setenv("FKERAS_CONV_DIRECT", request.param[-1])
    elif request.param != "auto":
        monkeypatch.setenv("FKERAS_CONV_BACKWARD_INPUT", request.param)
    return request.param


def rounded_refs(fn, a, b, *args):
    """(reference on rounded operands, its bound on absolute values, unrounded reference)."""
    out = []
    for u, v in ((rne(a), rne(b)), (np.abs(rne(a)), np.abs(rne(b))), (a, b)):
        want = np.empty(args[0])
        fn(want, u, v, *args[1:])
        out.append(want)
    return out


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("c", CASES, ids=case_id)
def test_conv_bf16_matches_rounded_reference(c, n_threads, conv_env):
    with threads(n_threads):
        _check_three_convolutions(c, np.random.default_rng(c["K"] * 100 + c["C"]), far=True)


def _check_three_convolutions(c, rng, far):
    """Forward and both backwards under bf16 products against the float64 references on
    bf16-rounded operands (and, with `far`, measurably away from the unrounded ones)."""
    xs, ws, ys = shapes(c)
    x, w, dy = low_bits(rand(rng, xs)), low_bits(rand(rng, ws)), low_bits(rand(rng, ys))
    args = conv_args(c)
    y, dx, dw = nans(ys), nans(xs), nans(ws)
    with bf16():
        _C.conv2d_forward(y, x, w, None, *args, codes.LINEAR, 0.0)
        _C.conv2d_backward_input(dx, dy, w, *args)
        _C.conv2d_backward_weight(dw, dy, x, *args)

    def fwd(out, a, b, *rest):
        ref.conv2d_forward(out, a, b, None, *rest, codes.LINEAR, 0.0)

    for name, got, fn, a, b, shape in (("y", y, fwd, x, w, ys),
                                       ("dx", dx, ref.conv2d_backward_input, dy, w, xs),
                                       ("dw", dw, ref.conv2d_backward_weight, dy, x, ws)):
        want, bound, unrounded = rounded_refs(fn, a, b, shape, *args)
        assert_bf16_close(got, want, bound, name)
        if far:
            assert_far(got, unrounded, bound, name)


@needs_native
@pytest.mark.parametrize("activation", [codes.RELU, codes.TANH])
def test_conv_bf16_bias_and_activation_stay_fp32(activation):
    c = DIRECT[2]
    rng = np.random.default_rng(activation)
    xs, ws, ys = shapes(c)
    x, w, b = low_bits(rand(rng, xs)), low_bits(rand(rng, ws, 0.3)), low_bits(rand(rng, (c["K"],)))
    args = conv_args(c)
    y = nans(ys)
    with bf16():
        _C.conv2d_forward(y, x, w, b, *args, activation, 0.0)
    want, bound = np.empty(ys), np.empty(ys)
    ref.conv2d_forward(want, rne(x), rne(w), b, *args, activation, 0.0)
    ref.conv2d_forward(bound, np.abs(rne(x)), np.abs(rne(w)), np.abs(b), *args, codes.LINEAR, 0.0)
    assert_bf16_close(y, want, bound, "y", slack=2.0**-21 * (np.abs(want) + 1.0))


@needs_native
@pytest.mark.parametrize("direct", ["0", "1"])
@pytest.mark.parametrize("activation,alpha", [(codes.RELU, 0.0), (codes.LEAKY_RELU, 0.2)])
@pytest.mark.parametrize("c", [CASES[-8], CASES[-7], CASES[-6], CASES[-1]], ids=case_id)
def test_conv_bf16_fused_activation_is_the_activation_kernel(c, activation, alpha, direct,
                                                             monkeypatch):
    # The bf16 row kernel applies relu / leaky relu in its last store: bit for bit the linear
    # convolution followed by the activation kernel, NaN and -0.0 included (a NaN input, a
    # zero filter column for exact zeros), on both paths (direct and im2col + GEMM).
    monkeypatch.setenv("FKERAS_CONV_DIRECT", direct)
    rng = np.random.default_rng(activation)
    xs, ws, ys = shapes(c)
    x, w, b = low_bits(rand(rng, xs)), low_bits(rand(rng, ws)), low_bits(rand(rng, (c["K"],)))
    x[0, c["H"] // 2, c["W"] // 2, 0] = np.nan
    w[..., 1] = 0.0
    b[1] = -0.0
    args = conv_args(c)
    fused, plain = nans(ys), nans(ys)
    with bf16():
        _C.conv2d_forward(fused, x, w, b, *args, activation, alpha)
        _C.conv2d_forward(plain, x, w, b, *args, codes.LINEAR, 0.0)
    want = nans(ys)
    _C.activation_forward(want, plain, plain.size, activation, alpha)
    assert np.isnan(want).any() and (want < 0).any() == (activation == codes.LEAKY_RELU)
    np.testing.assert_array_equal(fused.view(np.uint32), want.view(np.uint32))


NON_FINITE = [conv_problem(2, 9, 8, 1, 32, 3, 3),                     # odd run, even Q
              conv_problem(1, 6, 5, 1, 16, 3, 3),                     # odd run, odd Q = 3
              conv_problem(1, 7, 9, 3, 16, 3, 3, padding="same"),     # odd run, odd Q = 9
              conv_problem(1, 8, 8, 16, 32, 3, 3, padding="same")]    # even run


@needs_native
@pytest.mark.parametrize("direct", ["0", "1"])
@pytest.mark.parametrize("c", NON_FINITE, ids=case_id)
def test_conv_bf16_non_finite_input_only_where_reached(c, direct, monkeypatch):
    # An Inf in the last input column (the value after an odd tap run, and the partner of an
    # odd output width's last pixel) and one in dy: every output is the reference's,
    # non-finite exactly where it is. A kernel that multiplied its zero pair partners by the
    # input would put NaN next to the Inf (checked: both bf16 guards removed fail 3 cases).
    monkeypatch.setenv("FKERAS_CONV_DIRECT", direct)
    rng = np.random.default_rng(7)
    xs, ws, ys = shapes(c)
    x, w, dy = low_bits(rand(rng, xs)), low_bits(rand(rng, ws)), low_bits(rand(rng, ys))
    x[0, c["H"] // 2, -1, 0] = np.inf
    args = conv_args(c)
    y, dx, dw = nans(ys), nans(xs), nans(ws)
    with bf16():
        _C.conv2d_forward(y, x, w, None, *args, codes.LINEAR, 0.0)
        _C.conv2d_backward_weight(dw, dy, x, *args)
    x_inf, dy_inf = x, dy.copy()
    dy_inf[0, c["P"] // 2, -1, 1] = np.inf
    with bf16():
        _C.conv2d_backward_input(dx, dy_inf, w, *args)

    def fwd(out, a, b, *rest):
        ref.conv2d_forward(out, a, b, None, *rest, codes.LINEAR, 0.0)

    for name, got, fn, a, b, shape in (("y", y, fwd, x_inf, w, ys),
                                       ("dx", dx, ref.conv2d_backward_input, dy_inf, w, xs),
                                       ("dw", dw, ref.conv2d_backward_weight, dy, x_inf, ws)):
        want = np.empty(shape)
        bound = np.empty(shape)
        fn(want, rne(a), rne(b), *args)
        fn(bound, np.abs(rne(a)), np.abs(rne(b)), *args)
        finite = np.isfinite(want)
        assert not finite.all(), f"{name}: the case does not reach the Inf"
        np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=name)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        assert_bf16_close(got[finite], want[finite], bound[finite], name)


@pytest.mark.parametrize("isa_name", [i for i in ("avx2", "avx512") if _C.isa_supported(i)
                                      and not (i == "avx512" and NATIVE)])
@pytest.mark.parametrize("c", CASES[:3] + CASES[-3:-1], ids=case_id)
def test_conv_flag_without_native_is_bit_identical_fp32(c, isa_name):
    # Including the direct convolution's shapes: without VDPBF16PS the flag changes no path.
    rng = np.random.default_rng(1)
    xs, ws, ys = shapes(c)
    x, w, dy, b = rand(rng, xs), rand(rng, ws), rand(rng, ys), rand(rng, (c["K"],))
    args = conv_args(c)
    before = _C.cpu_isa()
    outs = []
    try:
        _C.set_cpu_isa(isa_name)
        for flag in (False, True):
            y, dx, dw = nans(ys), nans(xs), nans(ws)
            with bf16(flag):
                _C.conv2d_forward(y, x, w, b, *args, codes.RELU, 0.0)
                _C.conv2d_backward_input(dx, dy, w, *args)
                _C.conv2d_backward_weight(dw, dy, x, *args)
            outs.append((y, dx, dw))
    finally:
        _C.set_cpu_isa(before)
    for plain, flagged in zip(*outs):
        np.testing.assert_array_equal(flagged, plain)


def _random_cases(n, seed=20261126):
    # Shapes around the bf16 direct kernel's edges: K a multiple of 16 (1..5 vectors) or not
    # (GEMM path), C from 1 (odd tap runs) to 40, filters 1..5 (even ones too), strides and
    # dilations 1..2, 'same' or 'valid', output widths odd and even.
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < n:
        K = int(rng.choice([16, 32, 48, 64, 80, 24]))
        C = int(rng.choice([1, 2, 3, 5, 16, 17, 32, 40]))
        R, S = (int(v) for v in rng.integers(1, 6, 2))
        sh, dh = (int(v) for v in rng.integers(1, 3, 2))
        H, W = (int(v) for v in rng.integers(1, 14, 2))
        padding = str(rng.choice(["same", "valid"]))
        c = conv_problem(int(rng.integers(1, 3)), H, W, C, K, R, S, sh, sh, dh, dh, padding)
        if c["P"] > 0 and c["Q"] > 0:
            cases.append(c)
    return cases


@needs_native
@pytest.mark.parametrize("direct", ["0", "1"])
@pytest.mark.parametrize("c", _random_cases(24), ids=case_id)
def test_conv_bf16_random_shapes(c, direct, monkeypatch):
    monkeypatch.setenv("FKERAS_CONV_DIRECT", direct)
    _check_three_convolutions(c, np.random.default_rng(c["K"] * 7 + c["C"] * 3 + c["R"]),
                              far=False)
