"""A NaN or Inf pixel reaches only the outputs that read it (its interpolation neighbours), as
in Keras's torch backend: the resizing ops are matrix products, which would multiply the bad
pixel by every zero weight (0 * NaN = NaN) and spread it over whole output rows and columns."""

import numpy as np
import pytest

import fkeras

CASES = [
    ("UpSampling2D", dict(size=2, interpolation="bilinear"), (2, 6, 7, 3)),
    ("UpSampling2D", dict(size=(3, 2), interpolation="bilinear"), (1, 5, 5, 2)),
    ("Resizing", dict(height=9, width=11, interpolation="bilinear"), (2, 6, 7, 3)),
    ("Resizing", dict(height=4, width=5, interpolation="bilinear"), (1, 8, 9, 2)),
]


def _poisoned(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x[0, 2, 3, 1] = np.nan  # interior pixels: away from the clamped borders
    x[-1, 3, 2, 0] = np.inf
    return x


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_bad_pixels_stay_local_like_keras(case):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    name, kw, shape = case
    x = _poisoned(shape, 0)
    want = getattr(keras.layers, name)(**kw)(torch.tensor(x)).detach().numpy()
    got = np.asarray(getattr(fkeras.layers, name)(**kw)(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_bad_pixels_stay_local(case):
    name, kw, shape = case
    x = _poisoned(shape, 1)
    layer = getattr(fkeras.layers, name)(**kw)
    got = np.asarray(layer(x))
    clean = np.asarray(layer(np.nan_to_num(x, nan=0.0, posinf=0.0)))
    bad = ~np.isfinite(got)
    assert 0 < bad.sum() < 0.2 * bad.size  # a few neighbours, not whole rows
    np.testing.assert_allclose(got[~bad], clean[~bad], rtol=1e-5, atol=1e-6)
