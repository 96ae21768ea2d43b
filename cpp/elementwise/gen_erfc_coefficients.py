"""Fits the polynomial g(Y) used by vm_normal() in vmath.h (exact GELU). Needs numpy and mpmath.

erfc(t) = exp(-t^2) g(Y) / (1 + 2t) with Y = (t - 3) / (t + 3): g = (1 + 2t) exp(t^2) erfc(t) is
smooth and bounded on t in [0, inf) (it goes from 1 to 2 / sqrt(pi)), so a degree-10 polynomial in
Y fits it to ~7e-9 relative on t in [0, 15], below float32's rounding. The fit is a weighted least
squares on Chebyshev nodes in Y, reweighted toward the largest relative errors (Lawson's method,
which converges to the minimax fit). Run: python cpp/elementwise/gen_erfc_coefficients.py
"""

import mpmath as mp
import numpy as np

K, DEGREE, T_MAX = 3.0, 10, 15.0
mp.mp.dps = 30


def g_of_t(t):
    t = mp.mpf(t)
    return float((1 + 2 * t) * mp.erfc(t) * mp.exp(t * t))


def fit():
    y_max = (T_MAX - K) / (T_MAX + K)
    nodes = np.cos(np.pi * (np.arange(400) + 0.5) / 400)
    y = -1 + (nodes + 1) / 2 * (y_max + 1)
    t = K * (1 + y) / (1 - y)
    g = np.array([g_of_t(v) for v in t])
    vander = np.vander(y, DEGREE + 1, increasing=True)
    w = 1 / g
    for _ in range(30):
        coef, *_ = np.linalg.lstsq(vander * w[:, None], g * w, rcond=None)
        err = np.abs(vander @ coef - g) / g
        w = w * (1 + 50 * err / err.max())
    return coef


def main():
    coef = fit()
    t = np.linspace(0, T_MAX, 5000)
    g = np.array([g_of_t(v) for v in t])
    rel = np.abs(np.polyval(coef[::-1], (t - K) / (t + K)) - g) / g
    print(f"max relative error on [0, {T_MAX}]: {rel.max():.2e}")
    print("Horner order, highest degree first (float32):")
    for c in coef[::-1]:
        print(f"  {np.float32(c)!r}")


if __name__ == "__main__":
    main()
