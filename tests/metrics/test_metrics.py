"""Metrics: the stateful API, the accuracy family, regression metrics, AUC / Precision /
Recall against independent NumPy computations, and Keras 3's 'accuracy' resolution."""

import numpy as np
import pytest

import fkeras
from fkeras import metrics
from fkeras.trainers.compile_metrics import get_metric


def test_mean_accumulates_totals_not_averages_of_averages():
    m = metrics.Mean()
    m.update_state([1.0, 3.0])
    m.update_state([5.0])
    assert np.isclose(m.result(), 3.0)
    m.update_state([10.0], sample_weight=[2.0])
    assert np.isclose(m.result(), (9 + 20) / 5)
    m.reset_state()
    assert m.result() == 0.0
    assert np.isclose(m([2.0, 4.0]), 3.0)  # __call__ updates and returns the result
    assert [v.name for v in m.variables] == ["mean/total", "mean/count"]


def test_sum():
    s = metrics.Sum()
    s.update_state([[1.0, 2.0], [3.0, 4.0]])  # per-sample means 1.5, 3.5
    assert np.isclose(s.result(), 5.0)


def test_accuracy_family():
    y = np.array([[0.0], [1.0], [1.0], [0.0]])
    p = np.array([[0.2], [0.7], [0.4], [0.6]])
    assert np.isclose(metrics.BinaryAccuracy()(y, p), 0.5)
    assert np.isclose(metrics.BinaryAccuracy(threshold=0.3)(y, p), 0.75)
    onehot = np.eye(3)[[0, 2, 1]]
    probs = np.array([[0.8, 0.1, 0.1], [0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    assert np.isclose(metrics.CategoricalAccuracy()(onehot, probs), 2 / 3)
    assert np.isclose(metrics.SparseCategoricalAccuracy()(np.array([0, 2, 1]), probs), 2 / 3)
    assert np.isclose(metrics.SparseCategoricalAccuracy()(np.array([[0], [2], [1]]), probs),
                      2 / 3)
    assert np.isclose(metrics.TopKCategoricalAccuracy(k=2)(onehot, probs), 1.0)
    assert np.isclose(metrics.SparseTopKCategoricalAccuracy(k=1)(np.array([0, 2, 1]), probs),
                      2 / 3)
    assert np.isclose(metrics.Accuracy()([1, 2, 3], [1, 2, 4]), 2 / 3)
    w = metrics.SparseCategoricalAccuracy()
    w.update_state(np.array([0, 2, 1]), probs, sample_weight=[1.0, 1.0, 2.0])
    assert np.isclose(w.result(), 0.5)


def test_regression_metrics():
    rng = np.random.default_rng(0)
    t, p = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    assert np.isclose(metrics.MeanSquaredError()(t, p), ((t - p) ** 2).mean(), rtol=1e-6)
    assert np.isclose(metrics.MeanAbsoluteError()(t, p), np.abs(t - p).mean(), rtol=1e-6)
    assert np.isclose(metrics.RootMeanSquaredError()(t, p), np.sqrt(((t - p) ** 2).mean()),
                      rtol=1e-6)
    assert np.isclose(metrics.get("mse")(t, p).mean(), ((t - p) ** 2).mean(), rtol=1e-6)
    cos = metrics.CosineSimilarity()(t, p)
    tn = t / np.linalg.norm(t, axis=1, keepdims=True)
    pn = p / np.linalg.norm(p, axis=1, keepdims=True)
    assert np.isclose(cos, (tn * pn).sum(1).mean(), rtol=1e-5)


def _exact_roc_auc(y, s):
    """Mann-Whitney: P(score of a positive > score of a negative), ties counted half."""
    pos, neg = s[y == 1], s[y == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


def test_auc_roc_and_pr():
    rng = np.random.default_rng(1)
    y = (rng.uniform(size=400) > 0.6).astype(np.float64)
    s = np.clip(0.35 * y + rng.uniform(0, 0.65, 400), 0, 1)
    auc = metrics.AUC(num_thresholds=1000)
    auc.update_state(y[:200], s[:200])
    auc.update_state(y[200:], s[200:])
    assert abs(float(auc.result()) - _exact_roc_auc(y, s)) < 2e-3
    # PR-AUC against average precision computed directly.
    order = np.argsort(-s)
    tp = np.cumsum(y[order])
    precision, recall = tp / np.arange(1, 401), tp / y.sum()
    ap = np.sum(np.diff(np.concatenate([[0], recall])) * precision)
    pr = metrics.AUC(num_thresholds=1000, curve="PR")
    pr.update_state(y, s)
    assert abs(float(pr.result()) - ap) < 2e-2
    assert np.isclose(metrics.AUC()([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75, atol=1e-6)


def test_precision_recall_and_counts():
    y = np.array([0, 1, 1, 1, 0, 1])
    p = np.array([0.9, 0.2, 0.8, 0.6, 0.1, 0.55])
    tp, fp, fn, tn = 3, 1, 1, 1
    assert np.isclose(metrics.Precision()(y, p), tp / (tp + fp))
    assert np.isclose(metrics.Recall()(y, p), tp / (tp + fn))
    assert metrics.TruePositives()(y, p) == tp and metrics.FalsePositives()(y, p) == fp
    assert metrics.TrueNegatives()(y, p) == tn and metrics.FalseNegatives()(y, p) == fn
    prec = metrics.Precision(thresholds=[0.5, 0.7])
    np.testing.assert_allclose(prec(y, p), [3 / 4, 1 / 2])
    w = metrics.Recall()
    w.update_state(y, p, sample_weight=[1, 2, 1, 1, 1, 1])
    assert np.isclose(w.result(), 3 / 5)
    top = metrics.Precision(top_k=1)
    top.update_state([[0, 1, 1]], [[0.1, 0.5, 0.3]])
    assert np.isclose(top.result(), 1.0)


# y_true shape, y_pred shape -> the accuracy Keras 3 picks (compile_utils rules).
RESOLUTION = [
    ((8, 1), (8, 1), metrics.BinaryAccuracy),
    ((8,), (8, 1), metrics.BinaryAccuracy),
    ((8, 3), (8, 3), metrics.CategoricalAccuracy),
    ((8,), (8, 3), metrics.SparseCategoricalAccuracy),
    ((8, 1), (8, 3), metrics.SparseCategoricalAccuracy),
    ((8, 3), (8, 3), metrics.CategoricalAccuracy),  # multi-label sigmoid: argmax (Keras 3)
]


@pytest.mark.parametrize("y_shape,p_shape,cls", RESOLUTION)
def test_accuracy_resolution(y_shape, p_shape, cls):
    for name in ("accuracy", "acc"):
        m = get_metric(name, np.zeros(y_shape), np.zeros(p_shape))
        assert type(m) is cls and m.name == name


def test_compiled_metric_names_and_direction():
    m = get_metric("mse", np.zeros((2, 1)), np.zeros((2, 1)))
    assert m.name == "mse" and m._direction == "down"
    assert metrics.AUC()._direction == "up"
    assert type(metrics.get("AUC")) is metrics.AUC and type(metrics.get("auc")) is metrics.AUC
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        metrics.get("nope")


def test_metrics_run_outside_the_tape():
    t, p = np.ones((2, 2)), np.zeros((2, 2))
    with fkeras.GradientTape() as tape:
        tape.watch(p)
        metrics.MeanSquaredError()(t, p)
    assert tape._entries == []
