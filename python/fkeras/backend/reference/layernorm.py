"""Reference layer normalization kernels (float64 spec of cpp/layernorm/; signatures as kernels.h).

x is viewed as (rows, D): each row is normalized over its D values.

Numerics that the compiled kernels follow:
- The variance is the biased row variance, from a two-pass sum; rstd = 1 / sqrt(var + epsilon)
  (epsilon as given, a float64).
- rms_scaling (Keras 3's deprecated flag): y = x * rstd * gamma, uncentred, with rstd still taken
  from the centred variance.
- An empty row (D == 0) saves mean 0 and rstd 1 / sqrt(epsilon); zero rows give zero dgamma and
  dbeta.
- The backward centres x on its exact row mean: it subtracts the saved mean, then the mean of
  what is left (a saved mean rounded to float32 then changes nothing).
"""

import numpy as np


def _rows(a, rows, D):
    return np.asarray(a, dtype=np.float64).reshape(rows, D)


def layer_norm_forward(y, mean, rstd, x, gamma, beta, rows, D, epsilon, rms_scaling=False):
    if D == 0:
        mean.reshape(rows)[...] = 0.0
        rstd.reshape(rows)[...] = 1.0 / np.sqrt(float(epsilon))
        return
    x64 = _rows(x, rows, D)
    mu = x64.mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(np.square(x64 - mu).mean(axis=1, keepdims=True) + float(epsilon))
    z = (x64 if rms_scaling else x64 - mu) * inv
    if gamma is not None:
        z = z * np.asarray(gamma, np.float64).reshape(1, D)
    if beta is not None:
        z = z + np.asarray(beta, np.float64).reshape(1, D)
    y.reshape(rows, D)[...] = z
    mean.reshape(rows)[...] = mu[:, 0]
    rstd.reshape(rows)[...] = inv[:, 0]


def layer_norm_backward(dx, dgamma, dbeta, dy, x, mean, rstd, gamma, rows, D,
                        rms_scaling=False):
    if D == 0:
        return
    dy64 = _rows(dy, rows, D)
    xc = _rows(x, rows, D) - np.asarray(mean, np.float64).reshape(rows, 1)
    xc = xc - xc.mean(axis=1, keepdims=True)
    inv = np.asarray(rstd, np.float64).reshape(rows, 1)
    xhat = xc * inv
    z = _rows(x, rows, D) * inv if rms_scaling else xhat
    if dgamma is not None:
        dgamma.reshape(D)[...] = (dy64 * z).sum(axis=0)
    if dbeta is not None:
        dbeta.reshape(D)[...] = dy64.sum(axis=0)
    if dx is not None:
        dz = dy64 if gamma is None else dy64 * np.asarray(gamma, np.float64).reshape(1, D)
        if rms_scaling:
            x64 = _rows(x, rows, D)
            out = inv * dz - xc * inv**3 * (dz * x64).mean(axis=1, keepdims=True)
        else:
            out = inv * (dz - dz.mean(axis=1, keepdims=True)
                         - xhat * (dz * xhat).mean(axis=1, keepdims=True))
        dx.reshape(rows, D)[...] = out


KERNELS = {
    "layer_norm_forward": layer_norm_forward,
    "layer_norm_backward": layer_norm_backward,
}
