"""The math of the CUDA array namespace kernels (fk_cuda/xp_math.h), run on the CPU.

`fkeras._C_cuda_host` compiles the header the kernels of cuda/kernels/xp.cu call: the broadcast
index maps (with dimension collapsing), the per-element binary/unary functions and the
float64-accumulated reductions. Compared with NumPy (float32 results, float64 references).
"""

import numpy as np
import pytest

H = pytest.importorskip("fkeras._C_cuda_host")
if not hasattr(H, "xp_binary_host"):
    pytest.skip("fkeras._C_cuda_host has no xp family (rebuild)", allow_module_level=True)

from fkeras.backend.cuda_xp import BINARY, REDUCE, UNARY  # noqa: E402

BROADCASTS = [
    ((), ()), ((1,), (7,)), ((7,), ()), ((33,), (33,)), ((4, 1), (1, 5)), ((2, 3, 4), (4,)),
    ((2, 3, 4), (3, 1)), ((5, 1, 6), (1, 7, 1)), ((1, 1, 1), (2, 1, 3)), ((0, 3), (1, 3)),
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)), ((1, 2, 1, 2, 1, 2, 1, 2), (2, 1, 2, 1, 2, 1, 2, 1)),
    ((1000,), (1,)),
]


def _numpy_offsets(out, shapes):
    cols = []
    for s in shapes:
        idx = np.arange(int(np.prod(s)), dtype=np.int64).reshape(s)
        cols.append(np.broadcast_to(idx, out).reshape(-1))
    return np.stack(cols, axis=1) if cols else np.zeros((int(np.prod(out)), 0), np.int64)


@pytest.mark.parametrize("sa, sb", BROADCASTS)
def test_broadcast_offsets_match_numpy(sa, sb):
    out = np.broadcast_shapes(sa, sb)
    got = H.xp_broadcast_offsets(list(out), [list(sa), list(sb)])
    np.testing.assert_array_equal(got, _numpy_offsets(out, [sa, sb]))


@pytest.mark.parametrize("shapes", [[(3, 1, 4), (1, 5, 1), (3, 5, 4)], [(), (6,), (2, 1)],
                                    [(2, 3), (2, 3), (2, 3)]])
def test_three_operand_offsets_match_numpy(shapes):
    out = np.broadcast_shapes(*shapes)
    got = H.xp_broadcast_offsets(list(out), [list(s) for s in shapes])
    np.testing.assert_array_equal(got, _numpy_offsets(out, shapes))


@pytest.mark.parametrize("out, ins, collapsed", [
    ((2, 3, 4), [(2, 3, 4), (2, 3, 4)], (24,)),
    ((2, 3, 4), [(2, 3, 4), (4,)], (6, 4)),
    ((2, 3, 4), [(2, 3, 4), (2, 1, 1)], (2, 12)),
    ((1, 1), [(1, 1), ()], (1,)),
    ((5, 1, 7), [(5, 1, 7), (5, 1, 7)], (35,)),
])
def test_collapsing_merges_contiguous_axes(out, ins, collapsed):
    assert tuple(H.xp_collapsed_shape(list(out), [list(s) for s in ins])) == collapsed


def test_non_broadcastable_shapes_raise():
    with pytest.raises(ValueError, match="broadcast"):
        H.xp_broadcast_offsets([2, 3], [[2, 4]])
    with pytest.raises(ValueError, match="broadcast"):
        H.xp_broadcast_offsets([3], [[2, 3]])  # operand rank above the output's


_NP_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "power": np.power, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}


def _operands(sa, sb, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    if a.size > 3:
        a.reshape(-1)[:3] = [np.nan, 0.0, -0.0]
    if b.size > 3:
        b.reshape(-1)[1:3] = [np.nan, 0.0]
    return a, b


@pytest.mark.parametrize("name", sorted(_NP_BINARY))
@pytest.mark.parametrize("sa, sb", BROADCASTS[:9])
def test_binary_equals_numpy_float32(name, sa, sb):
    a, b = _operands(sa, sb, len(sa) * 7 + len(sb))
    if name == "power":
        a = np.abs(a) + np.float32(0.5)  # real results (NaN inputs kept where present)
    out = np.broadcast_shapes(sa, sb)
    with np.errstate(all="ignore"):
        want = _NP_BINARY[name](a, b).astype(np.float32)
        got = H.xp_binary_host(a, b, BINARY[name], list(out))
    if name == "power":  # powf vs NumPy's float32 power: within 1 ulp of the float64 value
        ref = np.power(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(got, ref, rtol=2e-7, equal_nan=True)
    else:  # one correctly rounded float32 operation: bit-equal, NaN where NumPy has NaN
        np.testing.assert_array_equal(got, want)


def test_first_is_a_broadcast_copy():
    a = np.arange(3, dtype=np.float32).reshape(3, 1)
    got = H.xp_binary_host(a, np.zeros((), np.float32), BINARY["first"], [3, 4])
    np.testing.assert_array_equal(got, np.broadcast_to(a, (3, 4)))


_NP_UNARY = {"negative": np.negative, "abs": np.abs, "square": np.square, "sqrt": np.sqrt,
             "exp": np.exp, "log": np.log, "sign": np.sign}


@pytest.mark.parametrize("name", sorted(_NP_UNARY))
@pytest.mark.parametrize("n", [1, 7, 33, 1000])
def test_unary_matches_numpy(name, n):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[: min(n, 3)] = [np.nan, 0.0, -0.0][: min(n, 3)]
    with np.errstate(all="ignore"):
        got = H.xp_unary_host(x, UNARY[name])
        ref = _NP_UNARY[name](x.astype(np.float64))
        want = _NP_UNARY[name](x)
    if name in ("exp", "log"):  # libm expf/logf (CUDA: <= 2 ulp): within a few ulp of float64
        np.testing.assert_allclose(got, ref, rtol=3e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def test_where_selects_with_broadcasting():
    rng = np.random.default_rng(3)
    cond = (rng.random((4, 1)) > 0.5).astype(np.float32)
    x = rng.standard_normal((1, 5)).astype(np.float32)
    y = rng.standard_normal(()).astype(np.float32)
    got = H.xp_where_host(cond, x, y, [4, 5])
    np.testing.assert_array_equal(got, np.where(cond != 0, x, y))


REDUCTIONS = [((7,), (0,)), ((33, 5), (0,)), ((33, 5), (1,)), ((4, 5, 6), (0, 2)),
              ((4, 5, 6), (1,)), ((2, 3, 4, 5), (1, 3)), ((1000,), (0,)), ((3, 1, 4), (1,)),
              ((3, 0, 4), (1,)), ((3, 4), ()), ((2, 3, 4), (0, 1, 2))]


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape, axes", REDUCTIONS)
def test_reduce_matches_numpy_float64(name, shape, axes):
    rng = np.random.default_rng(len(shape) * 11 + sum(axes))
    x = (rng.standard_normal(shape) * 4 + 1).astype(np.float32)
    n_red = int(np.prod([shape[a] for a in axes])) if axes else 1
    if n_red == 0 and name in ("max", "min"):
        pytest.skip("max/min of an empty axis raises before the kernel")
    got = H.xp_reduce_host(x, REDUCE[name], list(axes))
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.float64), axis=tuple(axes))
    # float64 accumulation, one rounding: the float32 rounding of the float64 result
    np.testing.assert_array_equal(got, np.asarray(ref, np.float32).reshape(-1))


@pytest.mark.parametrize("name", ["max", "min", "sum", "mean"])
def test_reduce_propagates_nan(name):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    got = H.xp_reduce_host(x, REDUCE[name], [1])
    assert np.isnan(got[0]) and not np.isnan(got[1])
    got = H.xp_reduce_host(x, REDUCE[name], [0])
    assert np.isnan(got[1]) and not np.isnan(got[0]) and not np.isnan(got[2])


def test_codes_are_checked():
    a = np.zeros(3, np.float32)
    with pytest.raises(ValueError):
        H.xp_binary_host(a, a, len(BINARY), [3])
    with pytest.raises(ValueError):
        H.xp_unary_host(a, -1)
    with pytest.raises(ValueError):
        H.xp_reduce_host(a, len(REDUCE), [0])


PLANS = [  # (shape, axes, kind, chunks > 1)
    ((1000,), (0,), "rows", False), ((1 << 20,), (0,), "rows", True),
    ((3, 100000), (1,), "rows", True), ((4096, 64), (1,), "rows", False),
    ((100000, 3), (0,), "columns", True), ((64, 4096), (0,), "columns", False),
    ((640, 4096), (0,), "columns", True), ((8, 70, 70, 16), (1, 2), "columns", True),
    ((64, 70000), (0,), "columns", False), ((33, 7), (1,), "columns", False),
    ((8, 7, 7, 16), (1, 2), "columns", False), ((5, 0, 3), (1,), "columns", False),
]


@pytest.mark.parametrize("shape, axes, kind, chunked", PLANS)
def test_reduce_plan_covers_the_range(shape, axes, kind, chunked):
    got_kind, chunks, chunk_len = H.xp_reduce_plan(list(shape), list(axes))
    n_red = int(np.prod([shape[a] for a in axes]))
    assert got_kind == kind and (chunks > 1) == chunked
    assert 1 <= chunks <= 65535
    if n_red:  # chunks tile [0, n_red) with no empty chunk
        assert chunks * chunk_len >= n_red and (chunks - 1) * chunk_len < n_red


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape, axes", [(p[0], p[1]) for p in PLANS if 0 not in p[0]])
def test_reduce_in_the_kernels_order_matches_float64(name, shape, axes):
    x = (np.random.default_rng(sum(shape)).standard_normal(shape) * 4 + 1).astype(np.float32)
    got = H.xp_reduce_host(x, REDUCE[name], list(axes))
    ref = getattr(np, name)(x.astype(np.float64), axis=tuple(axes))
    # float64 accumulation in any order: within one float32 rounding of NumPy's float64
    np.testing.assert_allclose(got, np.asarray(ref, np.float32).reshape(-1), rtol=1.2e-7)


def _random_broadcast_case(seed):
    rng = np.random.default_rng(seed)
    out = tuple(int(d) for d in rng.integers(1, 5, rng.integers(0, 9)))
    shapes = []
    for _ in range(int(rng.integers(1, 4))):
        rank = int(rng.integers(0, len(out) + 1))
        tail = out[len(out) - rank:]
        shapes.append(tuple(1 if rng.random() < 0.4 else d for d in tail))
    return out, shapes


@pytest.mark.parametrize("seed", range(60))
def test_random_broadcast_maps_match_numpy(seed):
    out, shapes = _random_broadcast_case(seed)
    out = np.broadcast_shapes(out, *shapes)  # the operands may not cover every output axis
    got = H.xp_broadcast_offsets(list(out), [list(s) for s in shapes])
    np.testing.assert_array_equal(got, _numpy_offsets(out, shapes))


@pytest.mark.parametrize("seed", range(60))
def test_random_reductions_match_float64(seed):
    rng = np.random.default_rng(1000 + seed)
    shape = tuple(int(d) for d in rng.integers(1, 6, rng.integers(1, 7)))
    axes = tuple(i for i in range(len(shape)) if rng.random() < 0.5)
    name = ["sum", "mean", "max", "min"][seed % 4]
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    got = H.xp_reduce_host(x, REDUCE[name], list(axes))
    ref = getattr(np, name)(x.astype(np.float64), axis=axes)
    np.testing.assert_allclose(got, np.asarray(ref, np.float32).reshape(-1), rtol=1.2e-7,
                               atol=1e-6)
