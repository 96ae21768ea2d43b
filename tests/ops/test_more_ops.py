"""The remaining keras.ops families (statistics, predicates, integer ops, composed nn ops,
linalg, and extra arrangement/creation/indexing names): values vs NumPy float64 and real
Keras, gradients where Keras differentiates."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check

R = np.random.default_rng(0)
M = R.standard_normal((4, 6))
NANS = M.copy()
NANS[1, 2] = NANS[3, 0] = np.nan
SQ = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SPD = SQ @ np.swapaxes(SQ, -1, -2)
B = R.standard_normal((2, 3, 2))
X4 = R.standard_normal((2, 4, 6, 8))
Q, K_, V = R.standard_normal((2, 4, 2, 8)), R.standard_normal((2, 5, 2, 8)), R.standard_normal((2, 5, 2, 8))
INTS = np.array([[12, 9, 7], [8, 6, 30]])

# name: (call on an ops module, NumPy float64 reference or None)
CASES = {
    "average": (lambda o: o.average(M, axis=1, weights=np.arange(6.0)),
                lambda: np.average(M, 1, np.arange(6.0))),
    "median": (lambda o: o.median(M, axis=0), lambda: np.median(M, 0)),
    "quantile": (lambda o: o.quantile(M, [0.2, 0.7], axis=1), lambda: np.quantile(M, [0.2, 0.7], 1)),
    "percentile": (lambda o: o.percentile(M, 30.0), lambda: np.percentile(M, 30.0)),
    "ptp": (lambda o: o.ptp(M, axis=1), lambda: np.ptp(M, 1)),
    "nansum": (lambda o: o.nansum(NANS, axis=1), lambda: np.nansum(NANS, 1)),
    "nanmean": (lambda o: o.nanmean(NANS, axis=0), lambda: np.nanmean(NANS, 0)),
    "nanmax": (lambda o: o.nanmax(NANS, axis=1), lambda: np.nanmax(NANS, 1)),
    "nanmin": (lambda o: o.nanmin(NANS), lambda: np.nanmin(NANS)),
    "nanprod": (lambda o: o.nanprod(NANS, axis=1), lambda: np.nanprod(NANS, 1)),
    "nanvar": (lambda o: o.nanvar(NANS, axis=1), lambda: np.nanvar(NANS, 1)),
    "nanstd": (lambda o: o.nanstd(NANS, axis=0), lambda: np.nanstd(NANS, 0)),
    "nanargmax": (lambda o: o.nanargmax(NANS, axis=1), lambda: np.nanargmax(NANS, 1)),
    "nancumsum": (lambda o: o.nancumsum(NANS, axis=1), lambda: np.nancumsum(NANS, 1)),
    "corrcoef": (lambda o: o.corrcoef(M), lambda: np.corrcoef(M)),
    "bincount": (lambda o: o.bincount(np.array([0, 2, 2, 5])), lambda: np.bincount([0, 2, 2, 5])),
    "diff": (lambda o: o.diff(M, n=2, axis=1), lambda: np.diff(M, 2, 1)),
    "isclose": (lambda o: o.isclose(M, M + 1e-7), lambda: np.isclose(M, M + 1e-7)),
    "isin": (lambda o: o.isin(INTS, [7, 8, 30]), lambda: np.isin(INTS, [7, 8, 30])),
    "signbit": (lambda o: o.signbit(M), lambda: np.signbit(M)),
    "erf": (lambda o: o.erf(M), None), "sinc": (lambda o: o.sinc(M), lambda: np.sinc(M)),
    "fmax": (lambda o: o.fmax(NANS, 0.1), lambda: np.fmax(NANS, 0.1)),
    "logaddexp2": (lambda o: o.logaddexp2(M, M.T[:4, :4].sum()),
                   lambda: np.logaddexp2(M, M.T[:4, :4].sum())),
    "heaviside": (lambda o: o.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5),
                  lambda: np.heaviside([-1.0, 0.0, 2.0], 0.5)),
    "nan_to_num": (lambda o: o.nan_to_num(np.array([np.nan, 1.0, -np.inf]), neginf=-9.0),
                   lambda: np.nan_to_num([np.nan, 1.0, -np.inf], neginf=-9.0)),
    "gcd": (lambda o: o.gcd(INTS, np.array([4, 6, 14])), lambda: np.gcd(INTS, [4, 6, 14])),
    "lcm": (lambda o: o.lcm(INTS, np.array([4, 6, 14])), lambda: np.lcm(INTS, [4, 6, 14])),
    "left_shift": (lambda o: o.left_shift(INTS, 2), lambda: np.left_shift(INTS, 2)),
    "right_shift": (lambda o: o.right_shift(INTS, 1), lambda: np.right_shift(INTS, 1)),
    "saturate_cast": (lambda o: o.saturate_cast(np.array([-5.0, 3.7, 300.0]), "uint8"),
                      lambda: np.array([0, 3, 255])),
    "rot90": (lambda o: o.rot90(M, 3), lambda: np.rot90(M, 3)),
    "diag": (lambda o: o.diag(M, -1), lambda: np.diag(M, -1)),
    "diagflat": (lambda o: o.diagflat(M[:2, :2]), lambda: np.diagflat(M[:2, :2])),
    "dstack": (lambda o: o.dstack([M, M]), lambda: np.dstack([M, M])),
    "append": (lambda o: o.append(M, M[:1], axis=0), lambda: np.append(M, M[:1], 0)),
    "kron": (lambda o: o.kron(M[:2, :3], M[:3, :2]), lambda: np.kron(M[:2, :3], M[:3, :2])),
    "cross": (lambda o: o.cross(M[:, :3], M[:, 3:]), lambda: np.cross(M[:, :3], M[:, 3:])),
    "trapezoid": (lambda o: o.trapezoid(M, axis=0), lambda: np.trapezoid(M, axis=0)),
    "searchsorted": (lambda o: o.searchsorted(np.array([1.0, 3.0, 5.0]), np.array([0.0, 3.0, 9.0])),
                     lambda: np.searchsorted([1.0, 3.0, 5.0], [0.0, 3.0, 9.0])),
    "digitize": (lambda o: o.digitize(M, np.array([-1.0, 0.0, 1.0])),
                 lambda: np.digitize(M, [-1.0, 0.0, 1.0])),
    "select": (lambda o: o.select([M > 1, M < -1], [M, -M], 0.5),
               lambda: np.select([M > 1, M < -1], [M, -M], 0.5)),
    "segment_min": (lambda o: o.segment_min(M, np.array([0, 0, 1, 1]), num_segments=2),
                    lambda: np.stack([M[:2].min(0), M[2:].min(0)])),
    "geomspace": (lambda o: o.geomspace(1.0, 1000.0, 4), lambda: np.geomspace(1, 1000, 4)),
    "hamming": (lambda o: o.hamming(7), lambda: np.hamming(7)),
    "vander": (lambda o: o.vander(np.array([1.0, 2.0, 3.0]), 4), lambda: np.vander([1.0, 2, 3], 4)),
    "inv": (lambda o: o.inv(SQ), lambda: np.linalg.inv(SQ)),
    "det": (lambda o: o.det(SQ), lambda: np.linalg.det(SQ)),
    "logdet": (lambda o: o.logdet(SPD), lambda: np.linalg.slogdet(SPD)[1]),
    "solve": (lambda o: o.solve(SQ, B), lambda: np.linalg.solve(SQ, B)),
    "cholesky": (lambda o: o.cholesky(SPD), lambda: np.linalg.cholesky(SPD)),
    "cholesky_inverse": (lambda o: o.cholesky_inverse(np.linalg.cholesky(SPD)),
                         lambda: np.linalg.inv(SPD)),
    "matrix_rank": (lambda o: o.matrix_rank(SQ[0]), lambda: 3),
    "pinv": (lambda o: o.pinv(M), lambda: np.linalg.pinv(M)),
    "dot_product_attention": (lambda o: o.dot_product_attention(Q, K_, V), None),
    "rms_normalization": (lambda o: o.rms_normalization(X4),
                          lambda: X4 / np.sqrt(np.mean(X4 ** 2, -1, keepdims=True) + 1e-7)),
    "depth_to_space": (lambda o: o.depth_to_space(X4, 2), None),
    "space_to_depth": (lambda o: o.space_to_depth(X4, 2), None),
    "psnr": (lambda o: o.psnr(X4, 0.9 * X4, 1.0), None),
    "cdist": (lambda o: o.cdist(M[:2], M[2:]), None),
    "erfinv": (lambda o: o.erfinv(np.tanh(M)), None),
    "i0": (lambda o: o.i0(M), lambda: np.i0(M)),
    "angle": (lambda o: o.angle(M), lambda: np.angle(M)),
    "extract_sequences": (lambda o: o.extract_sequences(M, 3, 2), None),
    "segment_prod": (lambda o: o.segment_prod(M, np.array([0, 0, 2, 2]), num_segments=3),
                     lambda: np.stack([M[:2].prod(0), np.ones(6), M[2:].prod(0)])),
    "nanmedian": (lambda o: o.nanmedian(NANS, axis=1), lambda: np.nanmedian(NANS, 1)),
    "nanquantile": (lambda o: o.nanquantile(NANS, 0.3), lambda: np.nanquantile(NANS, 0.3)),
    "vectorize": (lambda o: o.vectorize(lambda a, b: a * b + 1.0)(M[0], M[:, :1]),
                  lambda: M[0] * M[:, :1] + 1.0),
    "correlate_valid": (lambda o: o.correlate(M[0], M[1, :3]),
                        lambda: np.correlate(M[0], M[1, :3])),
    "correlate_same": (lambda o: o.correlate(M[0], M[1, :4], "same"),
                       lambda: np.correlate(M[0], M[1, :4], "same")),
    "adaptive_average_pool": (lambda o: o.adaptive_average_pool(X4, (3, 4)), None),
    "adaptive_max_pool": (lambda o: o.adaptive_max_pool(X4, 3, data_format="channels_first"),
                          None),
    "correlate_full": (lambda o: o.correlate(M[0], M[1, :3], "full"),
                       lambda: np.correlate(M[0], M[1, :3], "full")),
}
# unfold/fold are compared with torch's im2col/col2im through Keras in test_unfold_fold.
NO_KERAS = {"percentile", "nanargmax", "nanquantile"}  # Keras's torch backend lacks these paths or differs


def _np(x):
    return np.asarray(x[0] if isinstance(x, tuple) else x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values(name):
    call, ref = CASES[name]
    got = _np(call(ops))
    if ref is not None:
        np.testing.assert_allclose(got, ref(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_KERAS))
def test_matches_keras(name):
    keras = pytest.importorskip("keras")
    call, _ = CASES[name]
    theirs = call(keras.ops)
    theirs = keras.ops.convert_to_numpy(theirs[0] if isinstance(theirs, tuple) else theirs)
    ours = _np(call(ops))
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64), rtol=2e-5,
                               atol=2e-5)


GRADS = {
    "quantile": (lambda t: ops.quantile(t, [0.3, 0.8], axis=1), [M]),
    "nanmean": (lambda t: ops.nanmean(t, axis=1), [NANS]),
    "average": (lambda t, w: ops.average(t, axis=1, weights=w), [M, R.uniform(0.5, 1, 6)]),
    "corrcoef": (ops.corrcoef, [M]),
    "erf": (ops.erf, [M]), "sinc": (ops.sinc, [M]),
    "kron": (ops.kron, [M[:2, :3], M[:3, :2]]), "cross": (ops.cross, [M[:, :3], M[:, 3:]]),
    "trapezoid": (lambda t: ops.trapezoid(t, axis=0), [M]),
    "inv": (ops.inv, [SQ]), "det": (ops.det, [SQ]), "solve": (ops.solve, [SQ, B]),
    "slogdet": (lambda t: ops.slogdet(t)[1], [SQ]),
    "solve_triangular": (lambda a, b: ops.solve_triangular(a, b, lower=True), [SQ, B]),
    "cholesky": (lambda t: ops.cholesky(ops.multiply(ops.add(t, ops.swapaxes(t, -1, -2)), 0.5)),
                 [SPD]),
    "dot_product_attention": (lambda q, k, v: ops.dot_product_attention(q, k, v, is_causal=False),
                              [Q, K_, V]),
    "rms_normalization": (ops.rms_normalization, [X4[:, :2]]),
    "space_to_depth": (lambda t: ops.space_to_depth(t, 2), [X4[:1]]),
    "cdist": (ops.cdist, [M[:2], M[2:]]),
    "erfinv": (ops.erfinv, [np.tanh(M)]), "i0": (ops.i0, [M]),
    "extract_sequences": (lambda t: ops.extract_sequences(t, 3, 2), [M]),
    "segment_prod": (lambda t: ops.segment_prod(t, np.array([0, 0, 1, 1])), [M]),
    "vectorize": (ops.vectorize(lambda a, b: ops.sin(a) * b), [M[0], M[:2, :1]]),
    "correlate": (lambda a, v: ops.correlate(a, v, "same"), [M[0], M[1, :3]]),
    "adaptive_average_pool": (lambda t: ops.adaptive_average_pool(t, (3, 4)), [X4[:1]]),
    "unfold": (lambda t: ops.unfold(t, (2, 3), stride=2, padding=1), [X4[:1, :2, :5]]),
    "fold": (lambda t: ops.fold(t, (4, 5), 2), [R.standard_normal((1, 8, 12))]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name):
    fn, inputs = GRADS[name]
    inputs = [np.array(a, copy=True) for a in inputs]
    fd_check(fn, inputs, [i for i, a in enumerate(inputs)], np.random.default_rng(1), tol=2e-6)


def test_forward_only_linalg_is_marked_and_correct():
    for name in ("qr", "svd", "eigh", "eig"):
        assert not ops.REGISTRY[name].differentiable
    q, r = ops.qr(M)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), M, atol=1e-5)
    u, s, vh = ops.svd(M, full_matrices=False)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), M, atol=1e-5)
    w, v = ops.eigh(SPD[0])
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(SPD[0]), rtol=1e-4)
    lu, piv = ops.lu_factor(SQ[0])
    lu = np.asarray(lu)
    low, up = np.tril(lu, -1) + np.eye(3), np.triu(lu)
    perm = np.arange(3)
    for k, p in enumerate(np.asarray(piv)):
        perm[[k, p]] = perm[[p, k]]
    np.testing.assert_allclose(low @ up, SQ[0][perm], atol=1e-5)
    with pytest.raises(ValueError, match="positive definite"):
        ops.cholesky(-np.eye(2))


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2,
                                                             padding=1),
                                    dict(kernel_size=2, dilation=2)])
def test_unfold_fold_match_torch_through_keras(kwargs):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    x = R.random((2, 3, 5, 6)).astype(np.float32)
    cols = ops.unfold(x, **kwargs)
    np.testing.assert_allclose(np.asarray(cols), keras.ops.convert_to_numpy(
        keras.ops.unfold(torch.tensor(x), **kwargs)), rtol=1e-6)
    back = ops.fold(cols, (5, 6), **kwargs)
    np.testing.assert_allclose(np.asarray(back), keras.ops.convert_to_numpy(
        keras.ops.fold(torch.tensor(np.asarray(cols)), (5, 6), **kwargs)), rtol=1e-5, atol=1e-5)
    assert ops.unfold(fkeras.Input((3, 5, 6)), 2).shape == (None, 12, 20)
