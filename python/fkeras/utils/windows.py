"""Window functions by name, as scipy.signal.get_window computes them (no scipy needed):
symmetric (`periodic=False`) or periodic (the N + 1 symmetric window without its last value,
scipy's `fftbins=True`)."""

import numpy as np


def _cosine_sum(n, coefficients):
    if n == 1:
        return np.ones(1)
    phase = 2.0 * np.pi * np.arange(n) / (n - 1)
    return sum(((-1) ** k) * a * np.cos(k * phase) for k, a in enumerate(coefficients))


def _bartlett(n):
    if n == 1:
        return np.ones(1)
    i = np.arange(n)
    return np.where(i <= (n - 1) / 2.0, 2.0 * i / (n - 1), 2.0 - 2.0 * i / (n - 1))


WINDOWS = {
    "hann": lambda n: _cosine_sum(n, (0.5, 0.5)),
    "hanning": lambda n: _cosine_sum(n, (0.5, 0.5)),
    "hamming": lambda n: _cosine_sum(n, (0.54, 0.46)),
    "blackman": lambda n: _cosine_sum(n, (0.42, 0.5, 0.08)),
    "bartlett": _bartlett,
    "boxcar": np.ones, "box": np.ones, "ones": np.ones, "rectangular": np.ones,
    "rect": np.ones,
}


def check_window_name(window):
    if window not in WINDOWS:
        raise ValueError(f"Unknown window type: {window!r}. fkeras knows "
                         f"{sorted(WINDOWS)} (scipy.signal.get_window's formulas).")


def get_window(window, length, periodic=False):
    """float64 window of `length` samples for a window name."""
    check_window_name(window)
    if periodic:
        return WINDOWS[window](length + 1)[:length]
    return WINDOWS[window](length)
