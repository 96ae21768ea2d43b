"""F-scores, IoU family, correlations, R2 and the rate-at-constraint metrics: results against
independent float64 references and against real Keras 3 (two batches, sample weights),
configs, errors."""

import numpy as np
import pytest

from fkeras import metrics

rng = np.random.default_rng(11)
N, C = 40, 4
Y_ONEHOT = np.eye(C, dtype="float32")[rng.integers(0, C, N)]
P_PROB = rng.dirichlet(np.ones(C), N).astype("float32")
Y_MULTI = (rng.random((N, C)) > 0.6).astype("float32")
Y_INT = rng.integers(0, C, N)
P_INT = np.where(rng.random(N) < 0.6, Y_INT, rng.integers(0, C, N))
Y_BIN = (rng.random(N) > 0.5).astype("float32")
P_SCORE = np.clip(Y_BIN * 0.3 + rng.random(N) * 0.7, 0, 1).astype("float32")
Y_REG = rng.standard_normal((N, 3)).astype("float32")
P_REG = (Y_REG + 0.5 * rng.standard_normal((N, 3))).astype("float32")
W = rng.uniform(0.2, 2.0, N).astype("float32")
W_INT = rng.integers(0, 3, N).astype("int32")


# ---- float64 references ----

def ref_fbeta(t, p, beta=1.0, average=None, threshold=None):
    pred = (p >= p.max(-1, keepdims=True)) & (np.abs(p) > 1e-9) if threshold is None \
        else p > threshold
    pred, t = pred.astype(float), t.astype(float)
    axis = None if average == "micro" else 0
    tp, fp, fn = (pred * t).sum(axis), (pred * (1 - t)).sum(axis), ((1 - pred) * t).sum(axis)
    eps = 1e-7
    prec, rec = tp / (tp + fp + eps), tp / (tp + fn + eps)
    f = (1 + beta ** 2) * prec * rec / (beta ** 2 * prec + rec + eps)
    if average == "weighted":
        return (f * t.sum(0) / (t.sum() + eps)).sum()
    return f.mean() if average else f


def ref_iou(t, p, n, ids, w=None):
    cm = np.zeros((n, n))
    np.add.at(cm, (t, p), 1 if w is None else w)
    tp = np.diag(cm)
    den = cm.sum(0) + cm.sum(1) - tp
    iou = tp[ids] / den[ids]
    return np.nanmean(np.where(den[ids] > 0, iou, np.nan))


def ref_r2(t, p):
    return np.mean(1 - ((t - p) ** 2).sum(0) / ((t - t.mean(0)) ** 2).sum(0))


def ref_ccc(t, p):
    """Keras 3.15's concordance formula along axis 0 (its covariance centres y_true on
    mean(y_pred))."""
    t, p = t.astype(float), p.astype(float)
    tm, pm = t.mean(0), p.mean(0)
    norm = t.var(0) + p.var(0) + (tm - pm) ** 2
    return np.mean((2 * (t - pm) * (p - pm) / (norm + 1e-7)).mean(0))


def ref_at(t, s, value, kind, n=200):
    th = np.array([0.5]) if n == 1 else \
        np.array([0.0] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1.0])
    pos = s[None, :] > th[:, None]
    t = t.astype(bool)[None, :]
    tp, fp = (pos & t).sum(1), (pos & ~t).sum(1)
    fn, tn = (~pos & t).sum(1), (~pos & ~t).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = np.nan_to_num(tp / (tp + fn))
        spec = np.nan_to_num(tn / (tn + fp))
        prec = np.nan_to_num(tp / (tp + fp))
    constrained, dependent = {"sens_at_spec": (spec, sens), "spec_at_sens": (sens, spec),
                              "prec_at_rec": (sens, prec), "rec_at_prec": (prec, sens)}[kind]
    return np.max(np.where(constrained >= value, dependent, 0.0), initial=0.0)


# name, kwargs, y_true, y_pred, float64 reference (unweighted, one batch)
CASES = [
    ("F1Score", {}, Y_ONEHOT, P_PROB, lambda t, p: ref_fbeta(t, p)),
    ("F1Score", {"average": "macro", "threshold": 0.3}, Y_MULTI, P_PROB,
     lambda t, p: ref_fbeta(t, p, average="macro", threshold=0.3)),
    ("F1Score", {"average": "micro"}, Y_ONEHOT, P_PROB,
     lambda t, p: ref_fbeta(t, p, average="micro")),
    ("FBetaScore", {"beta": 2.0, "average": "weighted"}, Y_ONEHOT, P_PROB,
     lambda t, p: ref_fbeta(t, p, 2.0, "weighted")),
    ("IoU", {"num_classes": C, "target_class_ids": [0, 2]}, Y_INT, P_INT,
     lambda t, p: ref_iou(t, p, C, [0, 2])),
    ("MeanIoU", {"num_classes": C}, Y_INT, P_INT, lambda t, p: ref_iou(t, p, C, list(range(C)))),
    ("MeanIoU", {"num_classes": C, "ignore_class": 1}, Y_INT, P_INT,
     lambda t, p: ref_iou(t[t != 1], p[t != 1], C, list(range(C)))),
    ("BinaryIoU", {"threshold": 0.4}, Y_BIN, P_SCORE,
     lambda t, p: ref_iou(t.astype(int), (p >= 0.4).astype(int), 2, [0, 1])),
    ("OneHotIoU", {"num_classes": C, "target_class_ids": [1, 3]}, Y_ONEHOT, P_PROB,
     lambda t, p: ref_iou(t.argmax(-1), p.argmax(-1), C, [1, 3])),
    ("OneHotMeanIoU", {"num_classes": C}, Y_ONEHOT, P_PROB,
     lambda t, p: ref_iou(t.argmax(-1), p.argmax(-1), C, list(range(C)))),
    ("R2Score", {}, Y_REG, P_REG, ref_r2),
    ("PearsonCorrelation", {"axis": 0}, Y_REG, P_REG,
     lambda t, p: np.mean([np.corrcoef(t[:, j], p[:, j])[0, 1] for j in range(3)])),
    ("ConcordanceCorrelation", {"axis": 0}, Y_REG, P_REG, lambda t, p: ref_ccc(t, p)),
    ("SensitivityAtSpecificity", {"specificity": 0.6}, Y_BIN, P_SCORE,
     lambda t, p: ref_at(t, p, 0.6, "sens_at_spec")),
    ("SpecificityAtSensitivity", {"sensitivity": 0.8}, Y_BIN, P_SCORE,
     lambda t, p: ref_at(t, p, 0.8, "spec_at_sens")),
    ("PrecisionAtRecall", {"recall": 0.7}, Y_BIN, P_SCORE,
     lambda t, p: ref_at(t, p, 0.7, "prec_at_rec")),
    ("RecallAtPrecision", {"precision": 0.75}, Y_BIN, P_SCORE,
     lambda t, p: ref_at(t, p, 0.75, "rec_at_prec")),
    ("PrecisionAtRecall", {"recall": 0.5, "num_thresholds": 1}, Y_BIN, P_SCORE,
     lambda t, p: ref_at(t, p, 0.5, "prec_at_rec", n=1)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_against_float64_reference(name, kw, yt, yp, ref):
    m = getattr(metrics, name)(**kw)
    m.update_state(yt, yp)
    np.testing.assert_allclose(np.asarray(m.result(), np.float64), ref(yt, yp), rtol=1e-5,
                               atol=1e-6)
    m.reset_state()
    m.update_state(yt[:5], yp[:5])
    np.testing.assert_allclose(np.asarray(m.result(), np.float64), ref(yt[:5], yp[:5]),
                               rtol=1e-5, atol=1e-6)


def _weights(name):
    return W_INT if "IoU" in name else W


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_against_keras(name, kw, yt, yp, ref):
    keras = pytest.importorskip("keras")
    km, fm = getattr(keras.metrics, name)(**kw), getattr(metrics, name)(**kw)
    # Keras numbers a default name again when a class is instantiated twice (io_u_1)
    k_config, f_config = km.get_config(), fm.get_config()
    assert k_config.pop("name").startswith(f_config.pop("name"))
    assert f_config == k_config
    half = N // 2
    w = None if "Correlation" in name else _weights(name)  # per-column values: no weights
    for m in (km, fm):
        m.update_state(yt[:half], yp[:half])
        m.update_state(yt[half:], yp[half:], sample_weight=None if w is None else w[half:])
    np.testing.assert_allclose(np.asarray(fm.result(), np.float64),
                               np.asarray(km.result(), np.float64), rtol=2e-5, atol=2e-6)
    restored = type(fm).from_config(fm.get_config())
    assert restored.get_config() == fm.get_config()


@pytest.mark.parametrize("call,match", [
    (lambda: metrics.FBetaScore(average="mean"), "Invalid `average`"),
    (lambda: metrics.FBetaScore(beta=2), "should be a Python float"),
    (lambda: metrics.FBetaScore(beta=-1.0), "should be > 0"),
    (lambda: metrics.F1Score(threshold=1.5), "0 < threshold <= 1"),
    (lambda: metrics.IoU(3, [0, 3]), "out of range"),
    (lambda: metrics.R2Score(class_aggregation="median"), "class_aggregation"),
    (lambda: metrics.R2Score(num_regressors=-1), "num_regressors"),
    (lambda: metrics.PrecisionAtRecall(1.5), "`recall` must be in the range"),
    (lambda: metrics.SensitivityAtSpecificity(0.5, num_thresholds=0), "num_thresholds"),
    (lambda: metrics.F1Score().update_state(np.ones(3), np.ones(3)), "expects 2D inputs"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_lookup_and_functions():
    assert isinstance(metrics.get("F1Score"), metrics.F1Score)
    assert metrics.get("pearson_correlation") is metrics.pearson_correlation
    m = metrics.deserialize(metrics.serialize(metrics.MeanIoU(3, ignore_class=0)))
    assert isinstance(m, metrics.MeanIoU) and m.ignore_class == 0
    np.testing.assert_allclose(metrics.huber(np.zeros((2, 2)), np.full((2, 2), 2.0)), [1.5, 1.5])


def test_in_compile_and_fit():
    import fkeras

    x = rng.standard_normal((32, 5)).astype("float32")
    y = np.eye(3, dtype="float32")[rng.integers(0, 3, 32)]
    model = fkeras.Sequential([fkeras.Input((5,)), fkeras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "categorical_crossentropy",
                  metrics=[metrics.F1Score(average="macro"), metrics.OneHotMeanIoU(3)])
    logs = model.fit(x, y, epochs=1, batch_size=8, verbose=0).history
    assert set(logs) == {"loss", "f1_score", "one_hot_mean_io_u"}
    assert all(np.isfinite(v[0]) for v in logs.values())
