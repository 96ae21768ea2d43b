"""Sample weights meet the loss values as in Keras 3: a trailing 1 dropped or added where the
ranks differ by one, then broadcast both ways (a loss reduced over all axes, Dice's or
Tversky's, times per-sample weights gives per-sample values), for every reduction; values,
shapes and gradients against real Keras (torch backend) and central differences."""

import numpy as np
import pytest

import fkeras
from tests.ops.op_testing import fd_check

RNG = np.random.default_rng(11)
B = 5

# (loss, kwargs, y_true, y_pred, sample_weight)
CASES = [
    ("Dice", {}, (RNG.random((B, 4)) > 0.5), RNG.random((B, 4)), RNG.random(B)),
    ("Tversky", {"alpha": 0.2, "beta": 0.8}, (RNG.random((B, 4)) > 0.5), RNG.random((B, 4)),
     RNG.random((B, 1))),
    ("MeanSquaredError", {}, RNG.random((B, 1)), RNG.random((B, 1)), RNG.random(B)),
    ("MeanSquaredError", {}, RNG.random((B, 3, 1)), RNG.random((B, 3, 1)), RNG.random((B, 3))),
    ("MeanAbsoluteError", {}, RNG.random((B, 3)), RNG.random((B, 3)), RNG.random((B, 1))),
    ("MeanAbsoluteError", {}, RNG.random((B, 2, 3)), RNG.random((B, 2, 3)),
     RNG.random((B, 2, 1))),
]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean_with_sample_weight", "none"]


def _f32(a):
    return np.asarray(a, np.float32)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{np.shape(c[4])}")
def test_matches_keras(case, reduction):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    name, kw, yt, yp, sw = case
    yt, yp, sw = _f32(yt), _f32(yp), _f32(sw)
    kl = getattr(keras.losses, name)(reduction=reduction, **kw)
    fl = getattr(fkeras.losses, name)(reduction=reduction, **kw)
    ypt = torch.tensor(yp, requires_grad=True)
    kv = kl(torch.tensor(yt), ypt, torch.tensor(sw))
    cot = RNG.standard_normal(tuple(kv.shape)).astype(np.float32)
    (kg,) = torch.autograd.grad((kv * torch.tensor(cot)).sum(), [ypt])
    ypv = fkeras.Variable(yp)
    with fkeras.GradientTape() as tape:
        fv = fl(yt, ypv, sw)
        total = fkeras.ops.sum(fv * cot)
    fg = tape.gradient(total, ypv)
    assert np.shape(fv) == tuple(kv.shape)
    np.testing.assert_allclose(np.asarray(fv), kv.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(fg), kg.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{np.shape(c[4])}")
def test_gradient_matches_finite_differences(case, reduction):
    name, kw, yt, yp, sw = case
    loss = getattr(fkeras.losses, name)(reduction=reduction, **kw)
    fd_check(lambda p: loss(np.asarray(yt, np.float64), p, np.asarray(sw, np.float64)),
             [np.asarray(yp, np.float64)], [0], np.random.default_rng(3), eps=1e-6, tol=1e-5)


def test_scalar_loss_times_per_sample_weights_is_their_mean():
    yt, yp, sw = _f32(CASES[0][2]), _f32(CASES[0][3]), _f32(CASES[0][4])
    dice = fkeras.losses.Dice()
    np.testing.assert_allclose(float(dice(yt, yp, sw)), float(dice(yt, yp)) * sw.mean(),
                               rtol=1e-6)
    per_sample = fkeras.losses.Dice(reduction="none")(yt, yp, sw)
    np.testing.assert_allclose(np.asarray(per_sample), float(dice(yt, yp)) * sw, rtol=1e-6)
