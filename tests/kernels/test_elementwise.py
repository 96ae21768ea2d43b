"""Elementwise kernels and fused losses: the reference against independent formulas and finite
differences, then the compiled kernels (fkeras._C) against the reference on every ISA."""

import math

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import activation_math
from fkeras.backend.reference import elementwise as ref
from kernel_testing import assert_close, check_vjp, nans, rand

SIZES = [0, 1, 7, 15, 16, 17, 31, 32, 33, 100, 1000, 100003]
ALL_CODES = list(range(14))
NAMES = {v: k for k, v in codes.ACTIVATION_CODES.items() if k != "silu"}
ALPHA = {codes.ELU: 0.7, codes.LEAKY_RELU: 0.2}
FLT_MIN = float(np.finfo(np.float32).tiny)
# (rows, cols) sweeps for the row kernels: cols = 1, around the 16-lane width, the 512 block,
# and a long row.
ROW_SHAPES = [(1, 1), (5, 1), (3, 7), (4, 15), (4, 16), (4, 17), (3, 31), (3, 32), (3, 33),
              (7, 100), (2, 511), (2, 513), (5, 1000), (2, 100003), (300, 10), (0, 5), (4, 0)]


def code_id(code):
    return NAMES[code]


def f64(a):
    return np.asarray(a, dtype=np.float64)


def run_ref(name, *args):
    ref.KERNELS[name](*args)


# ---- reference activations against independent formulas ------------------------------------------

def _independent(code, x, alpha):
    """act(x) for one float from the math module, written without activation_math."""
    e = math.exp
    if code == codes.LINEAR:
        return x
    if code == codes.RELU:
        return x if x > 0 else 0.0
    if code == codes.SIGMOID:
        return 1.0 / (1.0 + e(-x))
    if code == codes.TANH:
        return math.tanh(x)
    if code == codes.ELU:
        return x if x > 0 else alpha * math.expm1(x)
    if code == codes.SELU:
        return 1.0507009873554805 * (x if x > 0 else 1.6732632423543772 * math.expm1(x))
    if code == codes.GELU:
        return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
    if code == codes.GELU_TANH:
        return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if code == codes.SOFTPLUS:
        return math.log1p(e(x))
    if code == codes.SOFTSIGN:
        return x / (1.0 + abs(x))
    if code == codes.SWISH:
        return x / (1.0 + e(-x))
    if code == codes.HARD_SIGMOID:
        return min(max(x / 6.0 + 0.5, 0.0), 1.0)
    if code == codes.EXPONENTIAL:
        return e(x)
    if code == codes.LEAKY_RELU:
        return x if x > 0 else alpha * x
    raise AssertionError(code)


@pytest.mark.parametrize("code", ALL_CODES, ids=code_id)
def test_reference_activation_matches_independent_formula(code):
    # [-5, 5]: where the plain textbook formulas above keep ~1e-9 relative accuracy.
    x = np.concatenate([np.linspace(-5, 5, 401), [1e-3, -1e-3, 0.37, -2.9, 3.1]])
    alpha = ALPHA.get(code, 0.0)
    want = np.array([_independent(code, float(v), alpha) for v in x])
    assert_close(activation_math.forward(x, code, alpha), want, rtol=1e-8, atol=1e-300)


# Lower tails computed with mpmath at 50 digits: the reference must keep relative accuracy where
# 1 + erf or 1 + tanh cancel in float64.
TAILS = [
    (codes.GELU, -5.0, -1.4332578593959696e-6),
    (codes.GELU, -10.0, -7.6198530241605261e-23),
    (codes.GELU, -13.0, -7.9523137194148436e-38),
    (codes.GELU_TANH, -5.0, -2.291796196629506e-7),
    (codes.GELU_TANH, -10.0, -1.204092348209806e-37),
    (codes.GELU_TANH, -12.0, -1.6359854493534811e-61),
    (codes.SIGMOID, -90.0, 8.1940126239905154e-40),
    (codes.SOFTPLUS, -100.0, 3.7200759760208360e-44),
]


@pytest.mark.parametrize("code,x,want", TAILS)
def test_reference_activation_tails(code, x, want):
    got = float(activation_math.forward(np.array([x]), code)[0])
    assert abs(got - want) <= 1e-12 * abs(want), (got, want)


def _away_from_kinks(rng, n, code):
    x = rng.standard_normal(n) * 2.0
    if code in (codes.RELU, codes.LEAKY_RELU, codes.ELU, codes.SELU):
        x = np.where(np.abs(x) < 1e-2, 0.5, x)
    if code == codes.HARD_SIGMOID:
        x = np.where(np.abs(np.abs(x) - 3.0) < 1e-2, 1.0, x)
    return x


@pytest.mark.parametrize("code", ALL_CODES, ids=code_id)
def test_reference_activation_backward_vjp(code):
    rng = np.random.default_rng(code)
    n = 40
    x = _away_from_kinks(rng, n, code)
    alpha = ALPHA.get(code, 0.0)
    dy = rng.standard_normal(n)

    def f(xs):
        y = np.empty(n)
        ref.activation_forward(y, xs["x"], n, code, alpha)
        return {"y": y}

    y = f({"x": x})["y"]
    dx = np.empty(n)
    ref.activation_backward(dx, dy, x, y, n, code, alpha)
    check_vjp(f, {"x": x}, {"y": dy}, {"x": dx}, rng=rng)


# ---- compiled activations against the reference --------------------------------------------------

def _activation_input(rng, n, code):
    x = rand(rng, n, 3.0)
    if code == codes.EXPONENTIAL:
        x = np.clip(x, -80, 80)
    return x


@pytest.mark.parametrize("code", ALL_CODES, ids=code_id)
def test_activation_forward_backward_sizes(isa, code):
    rng = np.random.default_rng(100 + code)
    alpha = ALPHA.get(code, 0.0)
    for n in SIZES:
        x = _activation_input(rng, n, code)
        y = nans(n)
        _C.activation_forward(y, x, n, code, alpha)
        want = np.empty(n)
        ref.activation_forward(want, x, n, code, alpha)
        assert_close(y, want, rtol=1e-6, atol=1e-37, name=f"{NAMES[code]} y, n={n}")

        dy = rand(rng, n)
        dx = nans(n)
        _C.activation_backward(dx, dy, x, y, n, code, alpha)
        want_dx = np.empty(n)
        ref.activation_backward(want_dx, dy, x, y, n, code, alpha)
        # atol: derivatives cross zero (gelu, swish) and sigmoid/tanh read y's float32 rounding.
        assert_close(dx, want_dx, rtol=1e-5, atol=1e-6, name=f"{NAMES[code]} dx, n={n}")


def _wide_inputs():
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 80, -80, 87.3, -87.3, 88.72, -88.72,
               89, -89, 100, -100, 104, -104, 1e4, -1e4, 1e20, -1e20, 3e38, -3e38]
    x = np.concatenate([np.linspace(-120, 120, 48001), rng.standard_normal(4000) * 4, special])
    return x.astype(np.float32)


WIDE_X = _wide_inputs()


@pytest.mark.parametrize("code", ALL_CODES, ids=code_id)
def test_activation_forward_accuracy_wide_range(isa, code):
    """1e-6 relative to float64 over +-120 and the float32 extremes; saturation exact."""
    x = WIDE_X
    n = x.size
    alpha = ALPHA.get(code, 0.0)
    y = nans(n)
    _C.activation_forward(y, x, n, code, alpha)
    want = np.empty(n)
    with np.errstate(over="ignore"):
        ref.activation_forward(want, x, n, code, alpha)
        want32 = want.astype(np.float32)
    assert not np.isnan(y).any(), "NaN from finite input"
    np.testing.assert_array_equal(np.isinf(y), np.isinf(want32), err_msg="overflow pattern")
    np.testing.assert_array_equal(np.sign(y[np.isinf(y)]), np.sign(want32[np.isinf(want32)]))
    fin = np.isfinite(want32)
    # Results below FLT_MIN (subnormal in float32) are compared to within FLT_MIN.
    assert_close(y[fin], want[fin], rtol=1e-6, atol=FLT_MIN, name=NAMES[code])


@pytest.mark.parametrize("code", ALL_CODES, ids=code_id)
def test_activation_nan_propagates(isa, code):
    x = np.array([np.nan, 1.0, np.nan, -1.0] * 9, dtype=np.float32)  # 36: vector body and tail
    y = nans(x.size)
    _C.activation_forward(y, x, x.size, code, ALPHA.get(code, 0.0))
    assert np.isnan(y[0::2]).all() and np.isfinite(y[1::2]).all()
    # The backward agrees with the reference on NaN inputs (NaN where the spec gives NaN).
    dy = np.ones_like(x)
    dx, want = nans(x.size), np.empty(x.size)
    _C.activation_backward(dx, dy, x, y, x.size, code, ALPHA.get(code, 0.0))
    ref.activation_backward(want, dy, x, y, x.size, code, ALPHA.get(code, 0.0))
    np.testing.assert_array_equal(np.isnan(dx), np.isnan(want))
    dy[1] = np.nan
    _C.activation_backward(dx, dy, x, y, x.size, code, ALPHA.get(code, 0.0))
    assert np.isnan(dx[1])


def test_activation_in_place(isa):
    x = rand(np.random.default_rng(3), 1000)
    want = np.empty(1000, np.float32)
    _C.activation_forward(want, x, 1000, codes.SWISH, 0.0)
    _C.activation_forward(x, x, 1000, codes.SWISH, 0.0)
    np.testing.assert_array_equal(x, want)


# ---- softmax and log-softmax ---------------------------------------------------------------------

def test_reference_softmax_matches_independent_formula():
    x = np.random.default_rng(0).standard_normal((6, 9)) * 3
    e = np.exp(x)
    y, ly = np.empty_like(x), np.empty_like(x)
    ref.softmax_forward(y, x, 6, 9)
    ref.log_softmax_forward(ly, x, 6, 9)
    assert_close(y, e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=0)
    assert_close(ly, np.log(e / e.sum(axis=1, keepdims=True)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_reference_softmax_vjp(kind):
    rng = np.random.default_rng(1)
    rows, cols = 4, 7
    x = rng.standard_normal((rows, cols))
    dy = rng.standard_normal((rows, cols))

    def f(xs):
        y = np.empty((rows, cols))
        run_ref(f"{kind}_forward", y, xs["x"], rows, cols)
        return {"y": y}

    y = f({"x": x})["y"]
    dx = np.empty((rows, cols))
    run_ref(f"{kind}_backward", dx, dy, y, rows, cols)
    check_vjp(f, {"x": x}, {"y": dy}, {"x": dx}, rng=rng)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_shapes(isa, kind):
    rng = np.random.default_rng(2)
    for rows, cols in ROW_SHAPES:
        for scale in (1.0, 40.0):  # 40: logits up to ~+-200, exp would overflow unshifted
            x = rand(rng, (rows, cols), scale)
            y = nans((rows, cols))
            getattr(_C, f"{kind}_forward")(y, x, rows, cols)
            want = np.empty((rows, cols))
            run_ref(f"{kind}_forward", want, x, rows, cols)
            assert_close(y, want, rtol=1e-5, atol=1e-6 if kind == "log_softmax" else 1e-12,
                         name=f"{kind} {rows}x{cols}")
            dy = rand(rng, (rows, cols))
            dx = nans((rows, cols))
            getattr(_C, f"{kind}_backward")(dx, dy, y, rows, cols)
            want_dx = np.empty((rows, cols))
            run_ref(f"{kind}_backward", want_dx, dy, y, rows, cols)
            assert_close(dx, want_dx, rtol=1e-5, atol=1e-6, name=f"d{kind} {rows}x{cols}")


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_in_place(isa, kind):
    x = rand(np.random.default_rng(9), (3, 1100), 5.0)
    want = nans((3, 1100))
    getattr(_C, f"{kind}_forward")(want, x, 3, 1100)
    getattr(_C, f"{kind}_forward")(x, x, 3, 1100)
    np.testing.assert_array_equal(x, want)


def test_softmax_nan_row(isa):
    x = rand(np.random.default_rng(4), (3, 40))
    x[1, 17] = np.nan
    y = nans((3, 40))
    _C.softmax_forward(y, x, 3, 40)
    assert np.isnan(y[1]).all() and np.isfinite(y[[0, 2]]).all()
    _C.log_softmax_forward(y, x, 3, 40)
    assert np.isnan(y[1]).all() and np.isfinite(y[[0, 2]]).all()


# ---- bias add ------------------------------------------------------------------------------------

def test_reference_bias_add_vjp():
    rng = np.random.default_rng(5)
    x, b, dy = rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal((5, 3))

    def f(xs):
        y = np.empty((5, 3))
        ref.bias_add_forward(y, xs["x"], xs["b"], 5, 3)
        return {"y": y}

    db = np.empty(3)
    ref.bias_add_backward(db, dy, 5, 3)
    check_vjp(f, {"x": x, "b": b}, {"y": dy}, {"x": dy, "b": db}, rng=rng)


@pytest.mark.parametrize("rows,cols", [(0, 4), (4, 0), (1, 1), (7, 33), (100003, 3),
                                       (5000, 33), (40, 3000), (3, 100003)])
def test_bias_add(isa, rows, cols):
    rng = np.random.default_rng(6)
    x, b = rand(rng, (rows, cols)), rand(rng, cols)
    y = nans((rows, cols))
    _C.bias_add_forward(y, x, b, rows, cols)
    np.testing.assert_array_equal(y, x + b)
    dy = rand(rng, (rows, cols))
    db = nans(cols)
    _C.bias_add_backward(db, dy, rows, cols)
    want = np.empty(cols)
    ref.bias_add_backward(want, dy, rows, cols)
    assert_close(db, want, rtol=1e-5, atol=1e-5)


def test_bias_add_backward_thread_independent():
    dy = rand(np.random.default_rng(8), (20000, 7))
    before = _C.num_threads()
    out = []
    try:
        for t in (1, 2, 3):
            _C.set_num_threads(t)
            db = nans(7)
            _C.bias_add_backward(db, dy, 20000, 7)
            out.append(db)
    finally:
        _C.set_num_threads(before)
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[0], out[2])


# ---- dropout -------------------------------------------------------------------------------------

def _splitmix64_python(z):
    m = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_reference_splitmix64_matches_python_ints():
    assert _splitmix64_python(0) == 0xE220A8397B1DCDAF  # the published first splitmix64 output
    seeds = [0, 1, 12345, (1 << 64) - 1, 0x9E3779B97F4A7C15]
    got = ref.splitmix64(np.array(seeds, dtype=np.uint64))
    assert [int(v) for v in got] == [_splitmix64_python(s) for s in seeds]
    u = ref.dropout_uniform(5, -3)
    want = [(_splitmix64_python((-3 + i) & ((1 << 64) - 1)) >> 40) / 2.0**24 for i in range(5)]
    assert list(u) == want


def _dropout(n, rate, seed, impl):
    x = rand(np.random.default_rng(n), n)
    y, mask = nans(n), nans(n)
    impl(y, mask, x, n, rate, seed)
    return x, y, mask


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.5, 0.9, 0.999, 1.0])
def test_dropout_matches_reference_exactly(isa, rate):
    for seed in (0, 42, -7, 2**63 - 1):
        for n in SIZES:
            _, y, mask = _dropout(n, rate, seed, _C.dropout_forward)
            _, y_ref, mask_ref = _dropout(n, rate, seed, ref.dropout_forward)
            np.testing.assert_array_equal(mask, mask_ref)
            np.testing.assert_array_equal(y, y_ref)
            with np.errstate(divide="ignore"):
                scale = np.float32(1) / (np.float32(1) - np.float32(rate))
            assert set(np.unique(mask)) <= {0.0, scale}
    dy = rand(np.random.default_rng(1), 1000)
    dx = nans(1000)
    _C.dropout_backward(dx, dy, mask[:1000], 1000)
    np.testing.assert_array_equal(dx, dy * mask[:1000])


def test_dropout_rates_and_seeds(isa):
    n = 100003
    x, y, mask = _dropout(n, 0.0, 5, _C.dropout_forward)
    assert (mask == 1.0).all() and np.array_equal(y, x)
    _, _, mask = _dropout(n, 1.0, 5, _C.dropout_forward)
    assert (mask == 0.0).all()
    for rate in (0.3, 0.999):
        _, _, mask = _dropout(n, rate, 11, _C.dropout_forward)
        keep = np.mean(mask != 0)
        sigma = math.sqrt(rate * (1 - rate) / n)
        assert abs(keep - (1 - rate)) < 5 * sigma, (rate, keep)
    _, _, a = _dropout(n, 0.5, 123, _C.dropout_forward)
    _, _, b = _dropout(n, 0.5, 123, _C.dropout_forward)
    _, _, c = _dropout(n, 0.5, 124, _C.dropout_forward)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.6  # independent masks agree about half the time


def test_dropout_thread_independent():
    before = _C.num_threads()
    try:
        _C.set_num_threads(1)
        _, _, one = _dropout(300001, 0.4, 9, _C.dropout_forward)
        _C.set_num_threads(2)
        _, _, two = _dropout(300001, 0.4, 9, _C.dropout_forward)
    finally:
        _C.set_num_threads(before)
    np.testing.assert_array_equal(one, two)


def test_reference_dropout_vjp():
    rng = np.random.default_rng(12)
    n = 30
    x, dy = rng.standard_normal(n), rng.standard_normal(n)
    mask = np.empty(n)

    def f(xs):
        y = np.empty(n)
        ref.dropout_forward(y, mask, xs["x"], n, 0.4, 3)
        return {"y": y}

    f({"x": x})
    dx = np.empty(n)
    ref.dropout_backward(dx, dy, mask, n)
    check_vjp(f, {"x": x}, {"y": dy}, {"x": dx}, rng=rng)


@pytest.mark.parametrize("rate", [-0.1, 1.5, float("nan")])
def test_dropout_bad_rate(rate):
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="rate"):
        _C.dropout_forward(nans(4), nans(4), x, 4, rate, 0)
    with pytest.raises(ValueError, match="rate"):
        ref.dropout_forward(nans(4), nans(4), x, 4, rate, 0)


# ---- embedding -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n,V,D", [(0, 3, 4), (1, 1, 1), (17, 5, 33), (1000, 50, 16),
                                   (3000, 7, 64), (5, 100003, 3), (20, 10, 0)])
def test_embedding(isa, n, V, D):
    rng = np.random.default_rng(n + V + D)
    idx = rng.integers(0, V, n).astype(np.int64)
    table = rand(rng, (V, D))
    y = nans((n, D))
    _C.embedding_forward(y, idx, table, n, V, D)
    np.testing.assert_array_equal(y, table[idx])
    dy = rand(rng, (n, D))
    dt = nans((V, D))
    _C.embedding_backward(dt, dy, idx, n, V, D)
    want, abs_sum = np.empty((V, D)), np.empty((V, D))
    ref.embedding_backward(want, dy, idx, n, V, D)
    ref.embedding_backward(abs_sum, np.abs(dy), idx, n, V, D)
    # float32 accumulation in index order (as other frameworks): within the recursive-summation
    # bound count * eps * sum |dy| of each table row.
    count = np.bincount(idx, minlength=V)[:, None]
    bound = count * np.finfo(np.float32).eps * abs_sum + 1e-30
    assert (np.abs(dt - want) <= bound).all()


def test_embedding_backward_repeated_indices_accumulate(isa):
    idx = np.array([2, 0, 2, 2, 4], dtype=np.int64)
    dy = np.arange(15, dtype=np.float32).reshape(5, 3)
    dt = nans((6, 3))
    _C.embedding_backward(dt, dy, idx, 5, 6, 3)
    want = np.zeros((6, 3), np.float32)
    want[2] = dy[0] + dy[2] + dy[3]
    want[0], want[4] = dy[1], dy[4]
    np.testing.assert_array_equal(dt, want)


def test_reference_embedding_vjp():
    rng = np.random.default_rng(13)
    idx = np.array([1, 3, 1, 0], dtype=np.int64)
    table, dy = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))

    def f(xs):
        y = np.empty((4, 5))
        ref.embedding_forward(y, idx, xs["table"], 4, 4, 5)
        return {"y": y}

    dt = np.empty((4, 5))
    ref.embedding_backward(dt, dy, idx, 4, 4, 5)
    check_vjp(f, {"table": table}, {"y": dy}, {"table": dt}, rng=rng)


@pytest.mark.parametrize("bad", [5, -1])
@pytest.mark.parametrize("impl", [_C, ref], ids=["cpu", "reference"])
def test_embedding_index_out_of_range(impl, bad):
    idx = np.array([0, 4, bad, 1], dtype=np.int64)
    table = np.zeros((5, 2), np.float32)
    with pytest.raises(ValueError, match=f"index {bad} at position 2"):
        impl.embedding_forward(nans((4, 2)), idx, table, 4, 5, 2)
    with pytest.raises(ValueError, match=f"index {bad} at position 2"):
        impl.embedding_backward(nans((5, 2)), np.zeros((4, 2), np.float32), idx, 4, 5, 2)


# ---- fused losses --------------------------------------------------------------------------------

def _soft_labels(rng, rows, cols):
    z = rng.random((rows, cols))
    return z / np.maximum(z.sum(axis=1, keepdims=True), 1e-30)


def test_reference_losses_match_independent_formulas():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((5, 6)) * 2
    z = _soft_labels(rng, 5, 6)
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    loss, probs = np.empty(5), np.empty((5, 6))
    ref.softmax_crossentropy_forward(loss, probs, x, z, 5, 6)
    assert_close(loss, -(z * np.log(p)).sum(axis=1), rtol=1e-12, atol=0)
    assert_close(probs, p, rtol=1e-12, atol=0)
    labels = np.array([0, 5, 2, 2, 1], dtype=np.int64)
    ref.sparse_softmax_crossentropy_forward(loss, probs, x, labels, 5, 6)
    assert_close(loss, -np.log(p[np.arange(5), labels]), rtol=1e-12, atol=0)
    xs, zs = x.ravel(), rng.random(30)
    s = 1 / (1 + np.exp(-xs))
    out = np.empty(30)
    ref.sigmoid_crossentropy_forward(out, xs, zs, 30)
    assert_close(out, -(zs * np.log(s) + (1 - zs) * np.log(1 - s)), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["softmax", "sparse_softmax", "sigmoid"])
def test_reference_losses_vjp(kind):
    rng = np.random.default_rng(15)
    rows, cols = 4, 6
    if kind == "sigmoid":
        n = rows * cols
        x, z, dloss = rng.standard_normal(n) * 2, rng.random(n), rng.standard_normal(n)

        def f(xs):
            loss = np.empty(n)
            ref.sigmoid_crossentropy_forward(loss, xs["x"], z, n)
            return {"loss": loss}

        dx = np.empty(n)
        ref.sigmoid_crossentropy_backward(dx, dloss, x, z, n)
    else:
        x, dloss = rng.standard_normal((rows, cols)) * 2, rng.standard_normal(rows)
        z = (rng.random((rows, cols)) * 2 if kind == "softmax"  # soft labels, sum != 1
             else rng.integers(0, cols, rows).astype(np.int64))
        probs = np.empty((rows, cols))

        def f(xs):
            loss = np.empty(rows)
            run_ref(f"{kind}_crossentropy_forward", loss, probs, xs["x"], z, rows, cols)
            return {"loss": loss}

        f({"x": x})
        dx = np.empty((rows, cols))
        run_ref(f"{kind}_crossentropy_backward", dx, dloss, probs, z, rows, cols)
    check_vjp(f, {"x": x}, {"loss": dloss}, {"x": dx}, rng=rng)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_softmax_crossentropy_shapes(isa, sparse):
    rng = np.random.default_rng(16)
    kind = "sparse_softmax" if sparse else "softmax"
    for rows, cols in ROW_SHAPES:
        if sparse and cols == 0 and rows:
            continue  # no valid label
        for scale in (1.0, 300.0):  # 300: logits far outside exp's range
            x = rand(rng, (rows, cols), scale)
            z = (rng.integers(0, max(cols, 1), rows).astype(np.int64) if sparse
                 else _soft_labels(rng, rows, cols).astype(np.float32))
            loss, probs = nans(rows), nans((rows, cols))
            getattr(_C, f"{kind}_crossentropy_forward")(loss, probs, x, z, rows, cols)
            want_loss, want_probs = np.empty(rows), np.empty((rows, cols))
            run_ref(f"{kind}_crossentropy_forward", want_loss, want_probs, x, z, rows, cols)
            assert_close(probs, want_probs, rtol=1e-5, atol=1e-12, name=f"probs {rows}x{cols}")
            # Loss: relative to the logits' scale (it is a difference of O(scale) terms).
            assert_close(loss, want_loss, rtol=1e-5, atol=1e-6 * scale, name=f"loss {rows}x{cols}")
            dloss = rand(rng, rows)
            d = nans((rows, cols))
            getattr(_C, f"{kind}_crossentropy_backward")(d, dloss, probs, z, rows, cols)
            want_d = np.empty((rows, cols))
            run_ref(f"{kind}_crossentropy_backward", want_d, dloss, probs, z, rows, cols)
            assert_close(d, want_d, rtol=1e-5, atol=1e-6, name=f"dlogits {rows}x{cols}")


def test_sigmoid_crossentropy(isa):
    rng = np.random.default_rng(17)
    for n in SIZES:
        for scale in (1.0, 100.0):
            x, z = rand(rng, n, scale), rng.random(n).astype(np.float32)
            loss = nans(n)
            _C.sigmoid_crossentropy_forward(loss, x, z, n)
            want = np.empty(n)
            ref.sigmoid_crossentropy_forward(want, x, z, n)
            assert_close(loss, want, rtol=1e-5, atol=1e-6 * scale, name=f"loss n={n}")
            dloss = rand(rng, n)
            d = nans(n)
            _C.sigmoid_crossentropy_backward(d, dloss, x, z, n)
            want_d = np.empty(n)
            ref.sigmoid_crossentropy_backward(want_d, dloss, x, z, n)
            assert_close(d, want_d, rtol=1e-5, atol=1e-6, name=f"dlogits n={n}")


def test_losses_nan_propagates(isa):
    x = rand(np.random.default_rng(18), (2, 20))
    x[0, 3] = np.nan
    z = np.full((2, 20), 0.05, np.float32)
    loss, probs = nans(2), nans((2, 20))
    _C.softmax_crossentropy_forward(loss, probs, x, z, 2, 20)
    assert np.isnan(loss[0]) and np.isfinite(loss[1])
    out = nans(40)
    _C.sigmoid_crossentropy_forward(out, x.ravel(), z.ravel(), 40)
    assert np.isnan(out[3]) and np.isfinite(np.delete(out, 3)).all()


@pytest.mark.parametrize("bad", [3, -2])
@pytest.mark.parametrize("impl", [_C, ref], ids=["cpu", "reference"])
def test_sparse_labels_out_of_range(impl, bad):
    labels = np.array([0, bad], dtype=np.int64)
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=f"index {bad} at position 1"):
        impl.sparse_softmax_crossentropy_forward(nans(2), nans((2, 3)), x, labels, 2, 3)
    with pytest.raises(ValueError, match=f"index {bad} at position 1"):
        impl.sparse_softmax_crossentropy_backward(nans((2, 3)), np.ones(2, np.float32), x,
                                                  labels, 2, 3)


# ---- argument validation -------------------------------------------------------------------------

def _f32(*shape):
    return np.zeros(shape, np.float32)


def _calls():
    """(name, call builder): each builder takes a dict of overrides and calls the kernel."""
    def act(o):
        _C.activation_forward(o.get("y", _f32(8)), o.get("x", _f32(8)), 8, o.get("code", 1), 0.0)

    def soft(o):
        _C.softmax_forward(o.get("y", _f32(2, 4)), o.get("x", _f32(2, 4)), 2, 4)

    def drop(o):
        _C.dropout_forward(o.get("y", _f32(8)), _f32(8), o.get("x", _f32(8)), 8, 0.5, 1)

    def emb(o):
        _C.embedding_forward(o.get("y", _f32(3, 2)), np.zeros(3, np.int64),
                             o.get("x", _f32(4, 2)), 3, 4, 2)

    def xent(o):
        _C.sparse_softmax_crossentropy_forward(_f32(2), o.get("y", _f32(2, 3)),
                                               o.get("x", _f32(2, 3)), np.zeros(2, np.int64), 2, 3)

    def bias(o):
        _C.bias_add_forward(o.get("y", _f32(2, 3)), o.get("x", _f32(2, 3)), _f32(3), 2, 3)

    return {"activation": (act, (8,)), "softmax": (soft, (2, 4)), "dropout": (drop, (8,)),
            "embedding": (emb, None), "sparse_xent": (xent, (2, 3)), "bias_add": (bias, (2, 3))}


CALLS = _calls()


@pytest.mark.parametrize("name", list(CALLS))
def test_bad_arguments_raise(name):
    call, shape = CALLS[name]
    call({})  # the defaults are valid
    out_shape = {"embedding": (3, 2)}.get(name, shape)
    in_shape = {"embedding": (4, 2)}.get(name, shape)
    with pytest.raises(ValueError, match="dtype"):
        call({"x": np.zeros(in_shape, np.float64)})
    with pytest.raises(ValueError, match="shape"):
        call({"x": _f32(int(np.prod(in_shape)) + 1)})
    with pytest.raises(ValueError, match="contiguous"):
        call({"x": np.zeros((2 * in_shape[0], *in_shape[1:]), np.float32)[::2]})
    ro = _f32(*out_shape)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        call({"y": ro})
    with pytest.raises(ValueError, match="int64"):
        _C.embedding_forward(_f32(3, 2), np.zeros(3, np.int32), _f32(4, 2), 3, 4, 2)


def test_bad_activation_code_and_sizes():
    with pytest.raises(ValueError, match="activation"):
        _C.activation_forward(_f32(4), _f32(4), 4, 14, 0.0)
    with pytest.raises(ValueError, match="activation"):
        _C.activation_backward(_f32(4), _f32(4), _f32(4), _f32(4), 4, -1, 0.0)
    with pytest.raises(ValueError, match="'n'"):
        _C.activation_forward(_f32(0), _f32(0), -1, 1, 0.0)


def test_every_reference_kernel_is_compiled():
    missing = [name for name in ref.KERNELS if not hasattr(_C, name)]
    assert not missing, missing
