"""fkeras.random distributions: moments against the distribution's, seeding, dtypes, symbolic
shapes, and gradients through mean/stddev tensors."""

import numpy as np
import pytest

import fkeras
from fkeras import random as frandom

N = 40000


@pytest.mark.parametrize("fn, kwargs, mean, var", [
    (frandom.normal, {"mean": 1.5, "stddev": 2.0}, 1.5, 4.0),
    (frandom.uniform, {"minval": -1.0, "maxval": 3.0}, 1.0, 16.0 / 12.0),
    # Truncated at 2 sigma: variance 1 - 2*2*phi(2)/(2*Phi(2)-1) = 0.7737.
    (frandom.truncated_normal, {"stddev": 1.0}, 0.0, 0.7737),
    (frandom.gamma, {"alpha": 3.0}, 3.0, 3.0),
    (frandom.beta, {"alpha": 2.0, "beta": 5.0}, 2 / 7, 10 / (49 * 8)),
    (frandom.binomial, {"counts": 10, "probabilities": 0.3}, 3.0, 2.1),
])
def test_moments(fn, kwargs, mean, var):
    x = np.asarray(fn((N,), seed=3, **kwargs), np.float64)
    assert x.dtype == np.float64 and x.shape == (N,)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N)
    assert abs(x.var() - var) < 0.05 * var


def test_truncated_normal_stays_within_two_sigma():
    x = np.asarray(frandom.truncated_normal((N,), mean=1.0, stddev=0.5, seed=0))
    assert x.min() >= 0.0 and x.max() <= 2.0


def test_randint_range_and_dtype():
    x = frandom.randint((1000,), 2, 7, seed=1)
    a = np.asarray(x)
    assert a.dtype == np.int32 and a.min() == 2 and a.max() == 6


def test_seeds_int_repeats_generator_advances():
    a = np.asarray(frandom.normal((5,), seed=42))
    b = np.asarray(frandom.normal((5,), seed=42))
    np.testing.assert_array_equal(a, b)
    gen = frandom.SeedGenerator(7)
    c, d = np.asarray(frandom.normal((5,), seed=gen)), np.asarray(frandom.normal((5,), seed=gen))
    assert not np.array_equal(c, d)
    gen2 = frandom.SeedGenerator(7)
    np.testing.assert_array_equal(np.asarray(frandom.normal((5,), seed=gen2)), c)


def test_results_are_tensors_of_the_float_dtype():
    t = frandom.uniform((2, 3), seed=0)
    assert isinstance(t, fkeras.Tensor) and t.dtype == np.float32


def test_unknown_dimension_gives_a_keras_tensor():
    out = frandom.normal((None, 4))
    assert isinstance(out, fkeras.KerasTensor) and out.shape == (None, 4)


def test_gradient_flows_to_mean_and_stddev():
    mean = fkeras.Variable(np.zeros(3, np.float32))
    std = fkeras.Variable(np.ones(3, np.float32))
    with fkeras.GradientTape() as tape:
        z = frandom.normal((3,), mean=mean, stddev=std, seed=5)
        loss = fkeras.ops.sum(z)
    g_mean, g_std = tape.gradient(loss, [mean, std])
    eps = np.asarray(frandom.normal((3,), seed=5))
    np.testing.assert_allclose(np.asarray(g_mean), np.ones(3))
    np.testing.assert_allclose(np.asarray(g_std), eps, rtol=1e-6)


def test_shuffle_is_a_permutation_and_categorical_follows_probabilities():
    x = np.arange(20.0).reshape(10, 2).astype(np.float32)
    s = np.asarray(frandom.shuffle(x, seed=3))
    assert sorted(map(tuple, s)) == sorted(map(tuple, x)) and not np.array_equal(s, x)
    logits = np.log(np.array([[0.2, 0.8], [0.9, 0.1]], np.float32))
    draws = np.asarray(frandom.categorical(logits, 20000, seed=2))
    assert draws.shape == (2, 20000)
    assert abs(draws[0].mean() - 0.8) < 0.02 and abs(draws[1].mean() - 0.1) < 0.02
