"""Confusion-matrix metrics with sample weights of every rank Keras accepts, AUC's
label_weights and multi_label: against real Keras 3 (torch backend) over several updates, and
multi_label against per-label AUCs averaged by hand."""

import numpy as np
import pytest

from fkeras import metrics

RNG = np.random.default_rng(4)
B, C = 9, 4


def _binary(shape):
    return (RNG.random(shape) > 0.5).astype(np.float32)


def _unit(shape):
    return RNG.random(shape).astype(np.float32)


# (metric, kwargs, y_true shape, y_pred shape, sample-weight shape)
CASES = [
    ("Precision", {}, (B, C), (B, C), (B,)),
    ("Recall", {"thresholds": [0.3, 0.6]}, (B, C), (B, C), (B, 1)),
    ("Precision", {"top_k": 2}, (B, C), (B, C), (B,)),
    ("Recall", {"class_id": 1}, (B, C), (B, C), (B,)),
    ("TruePositives", {}, (B, C), (B, C), (B, C)),
    ("FalseNegatives", {"thresholds": 0.7}, (B,), (B,), (B,)),
    ("AUC", {}, (B, 1), (B, 1), (B,)),
    ("AUC", {"curve": "PR"}, (B, C), (B, C), (B,)),
    ("AUC", {"label_weights": [0.1, 0.5, 0.3, 2.0]}, (B, C), (B, C), (B,)),
    ("AUC", {"multi_label": True}, (B, C), (B, C), (B,)),
    ("AUC", {"multi_label": True, "label_weights": [0.1, 0.5, 0.0, 2.0]}, (B, C), (B, C),
     None),
    ("AUC", {"curve": "PR", "multi_label": True, "num_labels": C}, (B, C), (B, C), (B, 1)),
    ("AUC", {"summation_method": "majoring", "multi_label": True}, (B, C), (B, C), None),
    ("PrecisionAtRecall", {"recall": 0.5}, (B, 1), (B, 1), (B,)),
    ("SpecificityAtSensitivity", {"sensitivity": 0.4}, (B, 1), (B, 1), (B,)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
def test_matches_keras_over_updates(case):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    name, kw, yts, yps, sws = case
    km, fm = getattr(keras.metrics, name)(**kw), getattr(metrics, name)(**kw)
    for _ in range(3):
        yt, yp = _binary(yts), _unit(yps)
        sw = None if sws is None else _unit(sws)
        km.update_state(torch.tensor(yt), torch.tensor(yp),
                        None if sw is None else torch.tensor(sw))
        fm.update_state(yt, yp, sw)
        np.testing.assert_allclose(np.asarray(fm.result()), km.result().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_multi_label_is_the_mean_of_label_aucs():
    yt, yp = _binary((50, 3)), _unit((50, 3))
    multi = metrics.AUC(multi_label=True)
    multi.update_state(yt, yp)
    singles = []
    for j in range(3):
        m = metrics.AUC()
        m.update_state(yt[:, j], yp[:, j])
        singles.append(float(m.result()))
    np.testing.assert_allclose(float(multi.result()), np.mean(singles), rtol=1e-6)
    weighted = metrics.AUC(multi_label=True, label_weights=[1.0, 0.0, 3.0])
    weighted.update_state(yt, yp)
    np.testing.assert_allclose(float(weighted.result()),
                               (singles[0] + 3 * singles[2]) / 4, rtol=1e-6)
    multi.reset_state()
    assert float(multi.result()) == 0.0


@pytest.mark.parametrize("call,match", [
    (lambda: metrics.AUC(num_labels=3), "only when `multi_label` is True"),
    (lambda: metrics.AUC(multi_label=True).update_state(np.ones(4), np.ones(4)),
     "rank 2 when `multi_label=True`"),
    (lambda: metrics.AUC(multi_label=True, num_labels=3).update_state(
        np.ones((2, 4)), np.ones((2, 4))), "built for 3 labels"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_config_round_trip():
    m = metrics.AUC(multi_label=True, num_labels=2, label_weights=[0.5, 1.5], curve="PR")
    again = metrics.AUC.from_config(m.get_config())
    assert again.multi_label and again.num_labels == 2 and again.curve == "PR"
    np.testing.assert_array_equal(again.label_weights, [0.5, 1.5])
