"""Focal crossentropies, Dice, Tversky, Circle, generalized crossentropy: values against NumPy
float64 references, gradients against finite differences (eager, with a GradientTape) and
inside `fit` (array mode), configs and values against real Keras 3 where installed."""

import numpy as np
import pytest

import fkeras
from fkeras import losses

EPS = 1e-7
rng = np.random.default_rng(7)
Y_BIN = (rng.random((6, 4)) > 0.5).astype("float32")
P_BIN = rng.uniform(0.05, 0.95, (6, 4)).astype("float32")
Z = rng.standard_normal((6, 4)).astype("float32")
Y_CAT = np.eye(4, dtype="float32")[rng.integers(0, 4, 6)]
P_CAT = rng.dirichlet(np.ones(4), 6).astype("float32")
LABELS = np.array([0, 1, 0, 2, 1, 3], "int32")
EMB = rng.standard_normal((6, 5)).astype("float32")
EMB /= np.linalg.norm(EMB, axis=1, keepdims=True)


# ---- float64 references (the published formulas) ----

def np_bfce(t, p, balance=False, alpha=0.25, gamma=2.0, smooth=0.0, logits=False):
    t, p = t.astype(np.float64), p.astype(np.float64)
    t = t * (1 - smooth) + 0.5 * smooth
    p = 1 / (1 + np.exp(-p)) if logits else p
    pc = np.clip(p, EPS, 1 - EPS)
    bce = -(t * np.log(pc) + (1 - t) * np.log(1 - pc))
    pt = t * p + (1 - t) * (1 - p)
    v = (1 - pt) ** gamma * bce
    if balance:
        v *= t * alpha + (1 - t) * (1 - alpha)
    return v.mean(-1)


def np_cfce(t, p, alpha=0.25, gamma=2.0, smooth=0.0, logits=False):
    t, p = t.astype(np.float64), p.astype(np.float64)
    t = t * (1 - smooth) + smooth / t.shape[-1]
    if logits:
        p = np.exp(p - p.max(-1, keepdims=True))
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return (alpha * (1 - p) ** gamma * -t * np.log(p)).sum(-1)


def np_dice(t, p, axis=None):
    t, p = t.astype(np.float64), p.astype(np.float64)
    return 1 - 2 * (t * p).sum(axis) / (t.sum(axis) + p.sum(axis) + EPS)


def np_tversky(t, p, alpha=0.5, beta=0.5, axis=None):
    t, p = t.astype(np.float64), p.astype(np.float64)
    tp = (t * p).sum(axis)
    return 1 - tp / (tp + alpha * ((1 - p) * t).sum(axis) + beta * (p * (1 - t)).sum(axis)
                     + EPS)


def np_circle(labels, emb, remove_diagonal=True, gamma=80.0, margin=0.4):
    e = emb.astype(np.float64)
    d = np.maximum(1 - e @ e.T, 0)
    pos = labels[:, None] == labels[None, :]
    neg = ~pos
    if remove_diagonal:
        pos &= ~np.eye(len(labels), dtype=bool)
    pw = np.maximum((margin + d) * pos, 0)
    nw = np.maximum((1 + margin - d) * neg, 0)
    pl = np.where(pos, -gamma * pw * (margin - d), -np.inf)
    nl = np.where(neg, gamma * nw * (1 - margin - d), -np.inf)

    def lse(x):
        m = np.max(x, 1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            return (np.log(np.exp(x - m).sum(1, keepdims=True)) + m)[:, 0]

    return np.logaddexp(0, lse(pl) + lse(nl))


def np_gce(labels, p, q=0.5):
    return (1 - p.astype(np.float64)[np.arange(len(labels)), labels] ** q) / q


# name, kwargs (fkeras & Keras), y_true, y_pred, reference(per-sample values)
CASES = [
    ("BinaryFocalCrossentropy", {}, Y_BIN, P_BIN, lambda t, p: np_bfce(t, p)),
    ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5,
                                 "label_smoothing": 0.1}, Y_BIN, P_BIN,
     lambda t, p: np_bfce(t, p, True, 0.4, 1.5, 0.1)),
    ("BinaryFocalCrossentropy", {"from_logits": True}, Y_BIN, Z,
     lambda t, p: np_bfce(t, p, logits=True)),
    ("CategoricalFocalCrossentropy", {}, Y_CAT, P_CAT, lambda t, p: np_cfce(t, p)),
    ("CategoricalFocalCrossentropy", {"from_logits": True, "label_smoothing": 0.2,
                                      "gamma": 3.0, "alpha": 0.5}, Y_CAT, Z,
     lambda t, p: np_cfce(t, p, 0.5, 3.0, 0.2, True)),
    ("Dice", {}, Y_BIN, P_BIN, np_dice),
    ("Dice", {"axis": 1}, Y_BIN, P_BIN, lambda t, p: np_dice(t, p, 1)),
    ("Tversky", {"alpha": 0.3, "beta": 0.7}, Y_BIN, P_BIN,
     lambda t, p: np_tversky(t, p, 0.3, 0.7)),
    ("Tversky", {"axis": -1}, Y_BIN, P_BIN, lambda t, p: np_tversky(t, p, axis=-1)),
    ("Circle", {"gamma": 10.0}, LABELS, EMB, lambda t, p: np_circle(t, p, gamma=10.0)),
    ("Circle", {"remove_diagonal": False, "gamma": 5.0, "margin": 0.25}, LABELS, EMB,
     lambda t, p: np_circle(t, p, False, 5.0, 0.25)),
    ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, LABELS, P_CAT,
     lambda t, p: np_gce(t, p, 0.7)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def _reduced(name, values):
    values = np.asarray(values, np.float64)
    if name == "Circle":  # Keras masks the per-sample losses to the positive ones
        return values[values > 0].mean() if (values > 0).any() else 0.0
    return values.mean()


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_value_against_float64_reference(name, kw, yt, yp, ref):
    got = float(np.asarray(getattr(losses, name)(**kw)(yt, yp)))
    np.testing.assert_allclose(got, _reduced(name, ref(yt, yp)), rtol=2e-5, atol=1e-6)


def _loss_and_grad(loss, yt, yp):
    v = fkeras.Variable(yp)
    with fkeras.GradientTape() as tape:
        value = loss(yt, v)
    return float(np.asarray(value)), np.asarray(tape.gradient(value, v), np.float64)


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_gradient_against_finite_differences(name, kw, yt, yp, ref):
    loss = getattr(losses, name)(**kw)
    _, grad = _loss_and_grad(loss, yt, yp)
    assert np.isfinite(grad).all()
    direction = np.random.default_rng(1).standard_normal(yp.shape)
    h = 1e-4 if name != "Circle" else 1e-5

    def f(p):
        return _reduced(name, ref(yt, p))

    fd = (f(yp + h * direction) - f(yp - h * direction)) / (2 * h)
    np.testing.assert_allclose((grad * direction).sum(), fd, rtol=2e-3, atol=2e-5)


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_against_keras(name, kw, yt, yp, ref):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    kl = getattr(keras.losses, name)(**kw)
    fl = getattr(losses, name)(**kw)
    assert fl.get_config() == kl.get_config()
    v = torch.tensor(yp, requires_grad=True)
    k_value = kl(torch.tensor(yt), v)
    k_value.backward()
    f_value, f_grad = _loss_and_grad(fl, yt, yp)
    np.testing.assert_allclose(f_value, float(k_value.detach()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f_grad, v.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name,kw,yt,yp,ref", CASES, ids=IDS)
def test_functions_and_lookup(name, kw, yt, yp, ref):
    cls = getattr(losses, name)
    assert losses.get(name).__class__ is cls
    restored = losses.deserialize(losses.serialize(cls(**kw)))
    assert type(restored) is cls and restored.get_config() == cls(**kw).get_config()


@pytest.mark.parametrize("name", ["BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
                                  "Dice", "Tversky"])
def test_fit_gradient_is_not_cut(name):
    """Inside fit the loss runs on bare buffers: one SGD step (lr 1) must move the weights by
    exactly minus the gradient a GradientTape computes eagerly."""
    x = rng.standard_normal((6, 3)).astype("float32")
    y = Y_CAT if "Categorical" in name else Y_BIN
    model = fkeras.Sequential([fkeras.Input((3,)),
                               fkeras.layers.Dense(4, activation="softmax")])
    loss = getattr(losses, name)()
    with fkeras.GradientTape() as tape:
        value = loss(y, model(x))
    grads = [np.asarray(g) for g in tape.gradient(value, model.trainable_weights)]
    before = [w.numpy().copy() for w in model.trainable_weights]
    model.compile(optimizer=fkeras.optimizers.SGD(1.0), loss=loss)
    model.fit(x, y, batch_size=6, epochs=1, shuffle=False, verbose=0)
    for b, g, w in zip(before, grads, model.trainable_weights):
        assert np.abs(g).max() > 0
        np.testing.assert_allclose(w.numpy(), b - g, rtol=1e-4, atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match=r"q must be in the interval \(0, 1\)"):
        losses.CategoricalGeneralizedCrossEntropy(q=1.5)
    with pytest.raises(ValueError, match="`axis` must be of type `int`"):
        losses.categorical_focal_crossentropy(Y_CAT, P_CAT, axis=True)


def test_logsumexp_of_a_fully_masked_row_has_zero_gradient():
    x = fkeras.Variable(np.array([[1.0, 2.0], [-np.inf, -np.inf]], "float32"))
    with fkeras.GradientTape() as tape:
        y = fkeras.ops.logsumexp(x, axis=1)
        total = fkeras.ops.sum(fkeras.ops.where(np.isfinite(np.asarray(y)), y, 0.0))
    assert np.isneginf(np.asarray(y)[1])
    g = np.asarray(tape.gradient(total, x))
    np.testing.assert_allclose(g[1], 0.0)
    np.testing.assert_allclose(g[0], np.exp([1, 2]) / np.exp([1, 2]).sum(), rtol=1e-6)
