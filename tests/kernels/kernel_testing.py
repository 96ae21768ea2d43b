"""Shared helpers for kernel tests: NaN-filled outputs, random data, gradient checks."""

import numpy as np


def nans(shape, dtype=np.float32):
    """An output buffer pre-filled with NaN: a kernel that skips an element is caught."""
    return np.full(shape, np.nan, dtype=dtype)


def rand(rng, shape, scale=1.0, dtype=np.float32):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def assert_close(actual, expected, rtol=1e-5, atol=1e-5, name="output"):
    """allclose with a message that gives the worst element; NaN anywhere fails."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    assert np.isfinite(actual).all(), f"{name}: non-finite values in the result"
    err = np.abs(actual - expected)
    tol = atol + rtol * np.abs(expected)
    if not (err <= tol).all():
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        raise AssertionError(
            f"{name}: max error {err[i]:.3g} at {i}: got {actual[i]!r}, expected {expected[i]!r} "
            f"(rtol={rtol}, atol={atol})"
        )


def check_vjp(f, inputs, cotangents, grads, eps=1e-6, rtol=1e-5, atol=1e-8, rng=None, trials=3):
    """Checks a hand-written backward against central finite differences.

    f(inputs) -> dict of outputs (float64 arrays); inputs: dict of float64 arrays;
    cotangents: dict (random, never all-ones) for some outputs; grads: dict of the claimed
    d<sum_o <cot_o, out_o>>/d input for some inputs. For random directions v, compares
    <grad, v> with (L(x + eps v) - L(x - eps v)) / (2 eps), where L = sum_o <cot_o, f(x)_o>.
    """
    rng = rng or np.random.default_rng(0)

    def objective(xs):
        outs = f(xs)
        return sum(float(np.sum(np.asarray(outs[k], np.float64) * c)) for k, c in cotangents.items())

    for name, g in grads.items():
        for _ in range(trials):
            v = rng.standard_normal(inputs[name].shape)
            plus = {k: (a + eps * v if k == name else a) for k, a in inputs.items()}
            minus = {k: (a - eps * v if k == name else a) for k, a in inputs.items()}
            numeric = (objective(plus) - objective(minus)) / (2 * eps)
            analytic = float(np.sum(np.asarray(g, np.float64) * v))
            assert abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic)), (
                f"gradient of input '{name}': finite differences give {numeric!r}, "
                f"the backward gives {analytic!r}"
            )
