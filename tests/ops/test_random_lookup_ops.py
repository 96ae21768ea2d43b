"""Dropout (fkeras.random.dropout) and embedding lookup: values, seeding, gradients."""

import numpy as np
import pytest
from op_testing import fd_check

import fkeras
from fkeras import ops
from fkeras.ops.random import dropout as seeded_dropout


def test_dropout_mask_statistics_and_scaling():
    x = np.ones((200, 50), np.float32)
    y = fkeras.random.dropout(x, 0.3, seed=7)
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)


def test_dropout_seeding():
    x = np.ones((10, 10), np.float32)
    a, b = fkeras.random.dropout(x, 0.5, seed=3), fkeras.random.dropout(x, 0.5, seed=3)
    np.testing.assert_array_equal(a, b)  # an int seed repeats
    gen = fkeras.random.SeedGenerator(3)
    c, d = fkeras.random.dropout(x, 0.5, seed=gen), fkeras.random.dropout(x, 0.5, seed=gen)
    assert not np.array_equal(c, d)  # a generator moves on
    gen = fkeras.random.SeedGenerator(3)
    np.testing.assert_array_equal(fkeras.random.dropout(x, 0.5, seed=gen), c)
    fkeras.utils.set_random_seed(11)
    e = fkeras.random.dropout(x, 0.5)
    fkeras.utils.set_random_seed(11)
    np.testing.assert_array_equal(fkeras.random.dropout(x, 0.5), e)


def test_dropout_noise_shape_broadcasts_the_mask():
    x = np.ones((4, 6, 3), np.float32)
    y = fkeras.random.dropout(x, 0.5, noise_shape=(None, 1, None), seed=1)
    assert y.shape == x.shape
    np.testing.assert_array_equal(y, np.broadcast_to(y[:, :1], y.shape))
    with pytest.raises(ValueError, match="noise_shape"):
        fkeras.random.dropout(x, 0.5, noise_shape=(4, 2, 3))


def test_dropout_rate_validation_and_extremes():
    x = np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(fkeras.random.dropout(x, 1.0, seed=0), 0.0)
    np.testing.assert_array_equal(fkeras.random.dropout(x, 0.0, seed=0), x)
    with pytest.raises(ValueError, match="Expected a float value between 0 and 1"):
        fkeras.random.dropout(x, 1.5)


@pytest.mark.parametrize("noise_shape", [None, (3, 1, 4)])
def test_dropout_gradient(noise_shape):
    rng = np.random.default_rng(0)
    fd_check(lambda x_: seeded_dropout(x_, 0.4, noise_shape=noise_shape, seed=5),
             [rng.standard_normal((3, 2, 4))], wrt=(0,), rng=rng)


def test_embedding_values_gradient_and_range_check():
    rng = np.random.default_rng(1)
    table = rng.standard_normal((6, 3))
    idx = np.array([[1, 5, 1], [0, 2, 1]])
    np.testing.assert_allclose(ops.embedding(idx, table.astype(np.float32)), table[idx],
                               rtol=1e-6)
    fd_check(lambda i_, t_: ops.embedding(i_, t_), [idx, table], wrt=(1,), rng=rng)
    with pytest.raises(ValueError, match="index 6 is out of range for a table of 6 rows"):
        ops.embedding(np.array([0, 6]), table)
