"""Gradient clipping with NaN and Inf gradients (clipnorm, global_clipnorm, clipvalue): the
variables after one SGD step are NaN / +-Inf exactly where Keras 3 puts them (skipped without
keras). Keras turns a whole variable (clipnorm) or every variable (global_clipnorm) NaN when a
norm is not finite; clipvalue keeps NaN elementwise."""

import numpy as np
import pytest

import fkeras
from fkeras import optimizers

CLIPS = [{"clipnorm": 1.0}, {"global_clipnorm": 1.0}, {"clipvalue": 0.5}, {}]
POISONS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}


def _grads(poison):
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal((4, 3)).astype(np.float32),
             rng.standard_normal(5).astype(np.float32),
             rng.standard_normal(2).astype(np.float32)]
    grads[0][1, 2] = grads[0][3, 0] = POISONS[poison]  # the last variable stays finite
    grads[1][4] = POISONS[poison]
    return grads


def _keras_step(keras, clip, grads, init):
    variables = [keras.Variable(w) for w in init]
    grads = [keras.ops.convert_to_tensor(g) for g in grads]
    keras.optimizers.SGD(0.1, **clip).apply_gradients(zip(grads, variables))
    return [np.asarray(keras.ops.convert_to_numpy(v)) for v in variables]


def _fkeras_step(clip, grads, init):
    variables = [fkeras.Variable(w) for w in init]
    optimizers.SGD(0.1, **clip).apply(grads, variables)
    return [v.numpy() for v in variables]


@pytest.mark.parametrize("poison", list(POISONS))
@pytest.mark.parametrize("clip", CLIPS, ids=lambda c: next(iter(c), "none"))
def test_non_finite_gradients_match_keras(clip, poison):
    keras = pytest.importorskip("keras")
    grads = _grads(poison)
    init = [np.ones_like(g) for g in grads]
    with np.errstate(all="ignore"):
        want = _keras_step(keras, clip, grads, init)
        got = _fkeras_step(clip, grads, init)
    for i, (g, w) in enumerate(zip(got, want)):
        for what, test in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
            assert np.array_equal(test(g), test(w)), (
                f"variable {i}: {what} pattern {test(g).astype(int).tolist()} != Keras's "
                f"{test(w).astype(int).tolist()}"
            )


def test_nan_gradient_makes_its_variable_nan_under_clipnorm():
    # Without keras too: the per-variable norm is NaN, so the whole variable is.
    grads = _grads("nan")
    got = _fkeras_step({"clipnorm": 1.0}, grads, [np.ones_like(g) for g in grads])
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all() and np.isfinite(got[2]).all()
    got = _fkeras_step({"global_clipnorm": 1.0}, grads, [np.ones_like(g) for g in grads])
    assert all(np.isnan(v).all() for v in got)
