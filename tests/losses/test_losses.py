"""Losses: every Keras loss against an independent NumPy float64 formula, its gradient against
central finite differences on the float64 reference device (random cotangents), the Keras 3
reductions with sample weights, from_logits / label smoothing, and name resolution."""

import numpy as np
import pytest

import fkeras
from fkeras import losses

EPS = 1e-7


def _clip(p):
    return np.clip(p, EPS, 1 - EPS)


def _logsumexp(x):
    m = x.max(-1, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(-1, keepdims=True)))[..., 0]


# Independent NumPy float64 formulations (Keras 3 definitions), per sample.
def np_mse(t, p):
    return ((t - p) ** 2).mean(-1)


def np_mae(t, p):
    return np.abs(t - p).mean(-1)


def np_mape(t, p):
    return 100 * (np.abs(t - p) / np.maximum(np.abs(t), EPS)).mean(-1)


def np_msle(t, p):
    return ((np.log1p(np.maximum(p, EPS)) - np.log1p(np.maximum(t, EPS))) ** 2).mean(-1)


def np_huber(t, p, delta=1.0):
    e = np.abs(p - t)
    return np.where(e <= delta, 0.5 * e * e, delta * (e - 0.5 * delta)).mean(-1)


def np_log_cosh(t, p):
    return np.log(np.cosh(p - t)).mean(-1)


def np_hinge(t, p):
    t = 2 * t - 1
    return np.maximum(1 - t * p, 0).mean(-1)


def np_squared_hinge(t, p):
    t = 2 * t - 1
    return (np.maximum(1 - t * p, 0) ** 2).mean(-1)


def np_categorical_hinge(t, p):
    pos = (t * p).sum(-1)
    neg = ((1 - t) * p).max(-1)
    return np.maximum(neg - pos + 1, 0)


def np_kld(t, p):
    t, p = np.clip(t, EPS, 1), np.clip(p, EPS, 1)
    return (t * np.log(t / p)).sum(-1)


def np_poisson(t, p):
    return (p - t * np.log(p + EPS)).mean(-1)


def np_cosine(t, p):
    tn = t / np.linalg.norm(t, axis=-1, keepdims=True)
    pn = p / np.linalg.norm(p, axis=-1, keepdims=True)
    return -(tn * pn).sum(-1)


def np_bce(t, p):
    p = _clip(p)
    return -(t * np.log(p) + (1 - t) * np.log(1 - p)).mean(-1)


def np_bce_logits(t, z):
    return (np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))).mean(-1)


def np_cce(t, p):
    q = _clip(p / p.sum(-1, keepdims=True))
    return -(t * np.log(q)).sum(-1)


def np_cce_logits(t, z):
    return -(t * (z - _logsumexp(z)[..., None])).sum(-1)


def np_scce(labels, p):
    return np_cce(np.eye(p.shape[-1])[labels], p)


def np_scce_logits(labels, z):
    return np_cce_logits(np.eye(z.shape[-1])[labels], z)


def _data(kind, rng, shape):
    if kind == "real":
        return rng.standard_normal(shape)
    if kind == "prob":
        return rng.uniform(0.05, 0.95, shape)
    if kind == "binary":
        return (rng.uniform(size=shape) > 0.5).astype(np.float64)
    if kind == "positive":
        return rng.uniform(0.5, 3.0, shape)
    if kind == "onehot":
        return np.eye(shape[-1])[rng.integers(0, shape[-1], shape[:-1])]
    if kind == "simplex":
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(-1, keepdims=True)
    raise ValueError(kind)


# name: (fkeras function, NumPy reference, y_true kind, y_pred kind, kwargs)
CASES = {
    "mse": (losses.mean_squared_error, np_mse, "real", "real", {}),
    "mae": (losses.mean_absolute_error, np_mae, "real", "real", {}),
    "mape": (losses.mean_absolute_percentage_error, np_mape, "positive", "real", {}),
    "msle": (losses.mean_squared_logarithmic_error, np_msle, "positive", "positive", {}),
    "huber": (losses.huber, np_huber, "real", "real", {}),
    "huber_delta": (losses.huber, lambda t, p: np_huber(t, p, 0.3), "real", "real",
                    {"delta": 0.3}),
    "log_cosh": (losses.log_cosh, np_log_cosh, "real", "real", {}),
    "hinge": (losses.hinge, np_hinge, "binary", "real", {}),
    "squared_hinge": (losses.squared_hinge, np_squared_hinge, "binary", "real", {}),
    "categorical_hinge": (losses.categorical_hinge, np_categorical_hinge, "onehot", "real", {}),
    "kl_divergence": (losses.kl_divergence, np_kld, "simplex", "simplex", {}),
    "poisson": (losses.poisson, np_poisson, "positive", "positive", {}),
    "cosine_similarity": (losses.cosine_similarity, np_cosine, "real", "real", {}),
    "bce": (losses.binary_crossentropy, np_bce, "binary", "prob", {}),
    "bce_logits": (losses.binary_crossentropy, np_bce_logits, "binary", "real",
                   {"from_logits": True}),
    "cce": (losses.categorical_crossentropy, np_cce, "onehot", "prob", {}),
    "cce_logits": (losses.categorical_crossentropy, np_cce_logits, "onehot", "real",
                   {"from_logits": True}),
}
SHAPES = [(1, 1), (7, 3), (4, 5, 6)]


def _make(case, shape, seed=0):
    rng = np.random.default_rng(seed)
    _, _, tk, pk, _ = CASES[case]
    if case in ("hinge", "squared_hinge", "categorical_hinge", "mae", "huber", "huber_delta"):
        # Keep away from the kinks (|e| = 0, delta; t*p = 1) so finite differences are valid.
        for _ in range(100):
            t, p = _data(tk, rng, shape), _data(pk, rng, shape)
            if case == "mae" and np.abs(p - t).min() > 1e-3:
                return t, p
            if case.startswith("huber"):
                d = CASES[case][4].get("delta", 1.0)
                if np.abs(np.abs(p - t) - d).min() > 1e-3:
                    return t, p
            if case in ("hinge", "squared_hinge") and np.abs(1 - (2 * t - 1) * p).min() > 1e-3:
                return t, p
            if case == "categorical_hinge":
                neg = np.sort((1 - t) * p, -1)
                margin = neg[..., -1] - (t * p).sum(-1) + 1
                if (neg[..., -1] - neg[..., -2]).min() > 1e-3 and np.abs(margin).min() > 1e-3:
                    return t, p
        raise RuntimeError("could not draw data away from kinks")
    return _data(tk, rng, shape), _data(pk, rng, shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_forward_matches_numpy(case, shape):
    fn, ref, _, _, kwargs = CASES[case]
    if case in ("categorical_hinge", "cce", "cce_logits") and shape[-1] == 1:
        pytest.skip("class axis of size 1")
    t, p = _make(case, shape)
    with fkeras.device("reference"):
        got = np.asarray(fn(t, p, **kwargs))
    np.testing.assert_allclose(got, ref(t, p), rtol=1e-10, atol=1e-12)
    got32 = np.asarray(fn(t.astype(np.float32), p.astype(np.float32), **kwargs))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ref(t, p), rtol=2e-5, atol=2e-6)


def _fd_check(f, p, cot, grad, rng, trials=3, eps=1e-6, rtol=1e-6, atol=1e-9):
    for _ in range(trials):
        v = rng.standard_normal(p.shape)
        num = (np.sum(cot * f(p + eps * v)) - np.sum(cot * f(p - eps * v))) / (2 * eps)
        ana = np.sum(grad * v)
        assert abs(num - ana) <= atol + rtol * max(abs(num), abs(ana)), (num, ana)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case):
    fn, _, _, _, kwargs = CASES[case]
    t, p = _make(case, (5, 4), seed=1)
    rng = np.random.default_rng(2)
    cot = rng.standard_normal((5,))
    with fkeras.device("reference"):
        with fkeras.GradientTape() as tape:
            tape.watch(p)
            values = fn(t, p, **kwargs)
        grad = tape.gradient(values, p, output_gradients=cot)
        _fd_check(lambda q: np.asarray(fn(t, q, **kwargs)), p, cot, grad, rng)


@pytest.mark.parametrize("from_logits", [False, True])
def test_sparse_categorical_crossentropy(from_logits):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, (6,))
    p = _data("real" if from_logits else "simplex", rng, (6, 4))
    ref = np_scce_logits if from_logits else np_scce
    with fkeras.device("reference"):
        for lab in (labels, labels[:, None], labels.astype(np.float64)):
            got = losses.sparse_categorical_crossentropy(lab, p, from_logits=from_logits)
            np.testing.assert_allclose(got, ref(labels, p), rtol=1e-10)
        with fkeras.GradientTape() as tape:
            tape.watch(p)
            values = losses.sparse_categorical_crossentropy(labels, p, from_logits=from_logits)
        cot = rng.standard_normal(6)
        grad = tape.gradient(values, p, output_gradients=cot)
        _fd_check(lambda q: np.asarray(losses.sparse_categorical_crossentropy(
            labels, q, from_logits=from_logits)), p, cot, grad, rng)


def test_sparse_categorical_crossentropy_errors():
    with pytest.raises(ValueError, match="labels must be in"):
        losses.sparse_categorical_crossentropy(np.array([0, 5]), np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="same shape up until the last dimension"):
        losses.sparse_categorical_crossentropy(np.eye(3)[[0, 1]], np.full((2, 3), 1 / 3))


def test_shape_mismatch_is_an_error_not_a_broadcast():
    with pytest.raises(ValueError, match=r"target.shape=\(4, 3\), output.shape=\(4, 1\)"):
        losses.mean_squared_error(np.zeros((4, 3)), np.zeros((4, 1)))
    # (N,) against (N, 1) is the one reshape every Keras generation allows.
    np.testing.assert_allclose(losses.mean_squared_error(np.ones(4), np.zeros((4, 1))), 1.0)


def test_clipping_and_logits_values():
    # Keras 3 (jax/torch) values on probabilities: p=0 with y=1 gives -log(1e-7) = 16.118.
    assert np.isclose(losses.binary_crossentropy([[1.0]], [[0.0]])[0], 16.1181, atol=1e-3)
    assert np.isclose(losses.categorical_crossentropy([[1.0, 0.0]], [[0.0, 1.0]])[0], 16.1181,
                      atol=1e-3)
    # Un-normalized probabilities are normalized first: [1, 1] gives log 2.
    assert np.isclose(losses.categorical_crossentropy([[1.0, 0.0]], [[1.0, 1.0]])[0],
                      np.log(2), rtol=1e-6)
    # From logits: exact, -100 with y=1 gives 100.
    assert np.isclose(losses.binary_crossentropy([[1.0]], [[-100.0]], from_logits=True)[0],
                      100.0, rtol=1e-6)


def test_label_smoothing():
    rng = np.random.default_rng(4)
    t, z = _data("binary", rng, (5, 3)), rng.standard_normal((5, 3))
    with fkeras.device("reference"):
        got = losses.binary_crossentropy(t, z, from_logits=True, label_smoothing=0.2)
        np.testing.assert_allclose(got, np_bce_logits(t * 0.8 + 0.1, z), rtol=1e-10)
        t2 = _data("onehot", rng, (5, 4))
        got = losses.categorical_crossentropy(t2, z[:, :3].repeat(2, 1)[:, :4], from_logits=True,
                                              label_smoothing=0.1)
        np.testing.assert_allclose(got, np_cce_logits(t2 * 0.9 + 0.025,
                                                      z[:, :3].repeat(2, 1)[:, :4]), rtol=1e-10)


def test_huber_value_from_the_semantics_notes():
    assert np.isclose(float(losses.Huber()(np.array([[0.0]]), np.array([[3.0]]))), 2.5)


REDUCTIONS = {
    "sum_over_batch_size": lambda v, w: (v * w).sum() / v.size,
    "mean": lambda v, w: (v * w).sum() / v.size,
    "sum": lambda v, w: (v * w).sum(),
    "mean_with_sample_weight": lambda v, w: (v * w).sum() / w.sum(),
    "none": lambda v, w: v * w,
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
def test_reductions_and_sample_weight(reduction, weighted):
    rng = np.random.default_rng(5)
    t, p = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    w = rng.uniform(0.1, 2.0, 6) if weighted else None
    expected = REDUCTIONS[reduction](np_mse(t, p), np.ones(6) if w is None else w)
    loss = losses.MeanSquaredError(reduction=reduction)
    with fkeras.device("reference"):
        got = loss(t, p, sample_weight=w)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        cot = rng.standard_normal(np.shape(expected))
        with fkeras.GradientTape() as tape:
            tape.watch(p)
            value = loss(t, p, sample_weight=w)
        grad = tape.gradient(value, p, output_gradients=cot)
        _fd_check(lambda q: np.asarray(loss(t, q, sample_weight=w)), p, cot, grad, rng)


def test_sum_over_batch_size_divides_by_batch_not_weights():
    # Keras 2/3: weights [1, 0] on losses [1, 9] give 0.5 (Keras 1 gave 1.0).
    loss = losses.MeanAbsoluteError()
    got = loss(np.array([[0.0], [0.0]]), np.array([[1.0], [9.0]]), sample_weight=[1.0, 0.0])
    assert np.isclose(float(got), 0.5)


def test_ignore_class():
    labels = np.array([0, 2, 1, 2])
    p = np.full((4, 3), 1 / 3)
    loss = losses.SparseCategoricalCrossentropy(ignore_class=2)
    assert np.isclose(float(loss(labels, p)), np.log(3))


@pytest.mark.parametrize("name,cls", sorted(losses.CLASSES.items()))
def test_classes_and_config_round_trip(name, cls):
    obj = cls()
    clone = cls.from_config(obj.get_config())
    assert type(clone) is cls and clone.get_config() == obj.get_config()
    assert type(losses.get(name)) is cls
    assert type(losses.deserialize(losses.serialize(obj))) is cls


def test_string_names():
    for alias, fn in [("mse", losses.mean_squared_error), ("MAE", losses.mean_absolute_error),
                      ("mape", losses.mean_absolute_percentage_error),
                      ("msle", losses.mean_squared_logarithmic_error),
                      ("kld", losses.kl_divergence), ("binary_crossentropy",
                                                      losses.binary_crossentropy)]:
        assert losses.get(alias) is fn
    with pytest.raises(ValueError, match="Could not interpret loss identifier"):
        losses.get("nope")
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        losses.MeanSquaredError(reduction="avg")


def test_custom_loss_subclass_is_differentiable():
    class Quartic(losses.Loss):
        def call(self, y_true, y_pred):
            d = fkeras.ops.subtract(y_pred, y_true)  # arrays: operators would bypass the tape
            return fkeras.ops.mean(fkeras.ops.square(fkeras.ops.square(d)), -1)

    rng = np.random.default_rng(6)
    t, p = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    with fkeras.device("reference"):
        with fkeras.GradientTape() as tape:
            tape.watch(p)
            value = Quartic()(t, p)
        grad = tape.gradient(value, p)
    np.testing.assert_allclose(grad, 4 * (p - t) ** 3 / 8, rtol=1e-10)


@pytest.mark.parametrize("name", ["MeanSquaredError", "BinaryCrossentropy", "Huber"])
def test_variable_as_prediction_keeps_its_gradient(name):
    """A Variable passed straight to a loss is a watched read (no silent None gradient)."""
    p = np.array([[0.2, 0.7], [0.6, 0.1]], "float32")
    t = np.array([[0.0, 1.0], [1.0, 0.0]], "float32")
    v = fkeras.Variable(p)
    with fkeras.GradientTape() as tape:
        value = getattr(fkeras.losses, name)()(t, v)
    g = tape.gradient(value, v)
    assert g is not None
    h = 1e-3
    d = np.random.default_rng(0).standard_normal(p.shape).astype("float32")
    fd = (float(getattr(fkeras.losses, name)()(t, p + h * d))
          - float(getattr(fkeras.losses, name)()(t, p - h * d))) / (2 * h)
    np.testing.assert_allclose((np.asarray(g) * d).sum(), fd, rtol=1e-2)


def test_an_elementwise_loss_without_a_y_true_gradient_is_refused_at_definition():
    # Every loss gives y_true its gradient (Keras); a non-symmetric one must say how, and one
    # that does not is refused when its class is defined (nothing registered).
    from fkeras.losses import loss_ops
    from fkeras.ops.registry import REGISTRY

    with pytest.raises(TypeError, match="defines `grad_true`"):
        class Incomplete(loss_ops._Elementwise):  # noqa: F841
            name = "loss_incomplete_for_test"

            def value(self, t, p):
                return p

            def grad(self, t, p):
                return p
    assert "loss_incomplete_for_test" not in REGISTRY
