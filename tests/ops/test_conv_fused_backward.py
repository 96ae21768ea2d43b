"""The conv2d op's backward runs the activation derivative and the bias gradient as one pass
over dy (the bias_activation_backward kernel) instead of activation_backward then
bias_add_backward: the gradients must not change, in float32 and under bf16 products, and a
device without the fused kernel (the cuda table today) keeps the two-pass path."""

import numpy as np
import pytest

import fkeras
from fkeras import _C, ops
from fkeras.backend import devices

FUSED = "bias_activation_backward"
# (input NHWC, kernel (R, S, C, K), strides, padding, activation, data_format)
CASES = [
    ((2, 9, 7, 1), (3, 3, 1, 5), 1, "valid", "relu", "channels_last"),       # C = 1, odd sizes
    ((3, 8, 8, 4), (3, 3, 4, 16), 1, "valid", "relu", "channels_last"),      # direct path sizes
    ((2, 11, 10, 3), (3, 2, 3, 7), (2, 3), "same", "relu", "channels_last"),  # strided, same
    ((2, 6, 6, 32), (3, 3, 32, 33), 1, "same", "leaky_relu", "channels_last"),
    ((1, 5, 13, 2), (1, 3, 2, 1), 1, "valid", "relu", "channels_first"),       # K = 1
    ((2, 7, 7, 3), (3, 3, 3, 8), 1, "valid", "linear", "channels_last"),       # bias only
    ((4, 12, 12, 8), (3, 3, 8, 32), 1, "valid", "relu", "channels_last"),
]


def _ids(c):
    return f"{c[0]}x{c[1]}-s{c[2]}-{c[3]}-{c[4]}-{c[5][9:]}"


def _grads(case, seed, use_bias=True):
    shape, kshape, strides, padding, act, fmt = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if fmt == "channels_first":
        x = np.ascontiguousarray(np.moveaxis(x, -1, 1))
    k = (0.3 * rng.standard_normal(kshape)).astype(np.float32)
    b = (0.1 * rng.standard_normal(kshape[-1])).astype(np.float32) if use_bias else None
    watched = [x, k] + ([b] if use_bias else [])
    with fkeras.GradientTape() as tape:
        tape.watch(watched)
        y = ops.conv2d(x, k, b, strides=strides, padding=padding, data_format=fmt,
                       activation=act, alpha=0.2 if act == "leaky_relu" else 0.0)
    cot = rng.standard_normal(np.shape(y)).astype(np.float32)
    return [np.asarray(g) for g in tape.gradient(y, watched, output_gradients=cot)]


def _unfused(monkeypatch):
    for dev in list(devices._devices.values()):
        if FUSED in dev.kernels:
            monkeypatch.delitem(dev.kernels, FUSED)


@pytest.mark.parametrize("bf16", [False, True])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_fused_backward_gradients_are_bit_identical(case, bf16, monkeypatch):
    if bf16 and not _C.gemm_bf16_native():
        pytest.skip("no avx512_bf16 on this CPU (the flag is a no-op there)")
    scope = devices.bf16_products if bf16 else devices.fp32_products
    with fkeras.device("cpu"), scope():  # the cpu kernels (also when the suite's default differs)
        assert FUSED in devices.get_device().kernels
        fused = _grads(case, seed=3)
        fused_no_bias = _grads(case, seed=4, use_bias=False)
        _unfused(monkeypatch)
        unfused = _grads(case, seed=3)
        unfused_no_bias = _grads(case, seed=4, use_bias=False)
    for a, b in zip(fused + fused_no_bias, unfused + unfused_no_bias):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_fused_backward_matches_the_float64_reference(case):
    with fkeras.device("cpu"):
        got = _grads(case, seed=5)
    with fkeras.device("reference"):
        want = _grads(case, seed=5)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4 * np.abs(w).max())


def test_bf16_flag_without_the_instruction_gives_fp32_gradients():
    # FKERAS_CPU_ISA=avx2 (here: set_cpu_isa) has no VDPBF16PS: bf16 products are exact fp32.
    if not _C.isa_supported("avx2"):
        pytest.skip("no avx2")
    case = CASES[1]
    before = _C.cpu_isa()
    _C.set_cpu_isa("avx2")
    try:
        with fkeras.device("cpu"):
            with devices.bf16_products():
                bf16 = _grads(case, seed=6)
            fp32 = _grads(case, seed=6)
    finally:
        _C.set_cpu_isa(before)
    for a, b in zip(bf16, fp32):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("case", [c for c in CASES if c[5] == "channels_last"], ids=_ids)
def test_bf16_gradients_against_float64_on_rounded_operands(case):
    # Under bf16 products: dz = cot * relu'(y) exact in fp32 (y: the op's own bf16 output), the
    # bias gradient its float32 column sum, dx and dw products of bf16-rounded dz, w and x.
    if not _C.gemm_bf16_native():
        pytest.skip("no avx512_bf16 on this CPU")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels"))
    from bf16_testing import assert_bf16_close, rne

    from fkeras.backend.reference import KERNELS as REF
    from fkeras.ops.conv import normalize_tuple, window_geometry

    shape, kshape, strides, padding, act, _ = case
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    k = (0.3 * rng.standard_normal(kshape)).astype(np.float32)
    b = (0.1 * rng.standard_normal(kshape[-1])).astype(np.float32)
    alpha = 0.2 if act == "leaky_relu" else 0.0
    with fkeras.device("cpu"), devices.bf16_products():
        with fkeras.GradientTape() as tape:
            tape.watch([x, k, b])
            y = ops.conv2d(x, k, b, strides=strides, padding=padding, activation=act,
                           alpha=alpha)
        cot = rng.standard_normal(np.shape(y)).astype(np.float32)
        dx, dk, db = (np.asarray(g) for g in tape.gradient(y, [x, k, b], output_gradients=cot))
    y = np.asarray(y)
    d = {"relu": (y > 0).astype(np.float32),
         "leaky_relu": np.where(y > 0, 1.0, alpha).astype(np.float32)}.get(act, 1.0)
    dz = (cot * d).astype(np.float32)
    np.testing.assert_allclose(db, dz.astype(np.float64).sum(axis=(0, 1, 2)), rtol=1e-6,
                               atol=1e-6 * np.abs(dz).sum(axis=(0, 1, 2)).max())
    st = normalize_tuple(strides, 2, "strides")
    P, pt, Q, pl = window_geometry(shape[1], shape[2], kshape[0], kshape[1], st, (1, 1), padding)
    sizes = (shape[0], shape[1], shape[2], shape[3], kshape[3], kshape[0], kshape[1], P, Q,
             st[0], st[1], 1, 1, pt, pl, 1)
    assert y.shape == (shape[0], P, Q, kshape[3])
    for name, got, fn, a, c in (("dx", dx, REF["conv2d_backward_input"], dz, k),
                                ("dw", dk, REF["conv2d_backward_weight"], dz, x)):
        want, bound = np.empty(got.shape), np.empty(got.shape)
        fn(want, rne(a), rne(c), *sizes)
        fn(bound, np.abs(rne(a)), np.abs(rne(c)), *sizes)
        assert_bf16_close(got, want, bound, name)
