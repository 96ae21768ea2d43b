"""Reference batch normalization kernels (float64 spec of cpp/batchnorm/; signatures as kernels.h).

The tensor is viewed as (outer, C, inner): statistics are per channel over outer and inner.
channels_last (N, H, W, C) is (N*H*W, C, 1); channels_first (N, C, H, W) is (N, C, H*W).

Numerics that the compiled kernels follow:
- The variance is the biased batch variance; inv_std = 1 / sqrt(var + epsilon), with epsilon
  rounded to float32 as the C++ `float` argument is.
- An empty batch (outer * inner == 0) gives mean 0 and var 0.
- The backward centres x on its exact batch mean: it subtracts the saved mean, then the mean of
  what is left. With an exact saved mean the second step changes nothing; with a saved mean
  rounded to float32 (mean 1e4, std 1e-2 loses 5% of a standard deviation to that rounding) it
  keeps the gradient exact.
"""

import numpy as np


def _view(a, outer, C, inner):
    return np.asarray(a, dtype=np.float64).reshape(outer, C, inner)


def _channel(a, C):
    return np.asarray(a, dtype=np.float64).reshape(1, C, 1)


def _scale_shift(gamma, beta, C):
    g = np.ones(C) if gamma is None else np.asarray(gamma, np.float64).reshape(C)
    b = np.zeros(C) if beta is None else np.asarray(beta, np.float64).reshape(C)
    return g, b


def batchnorm_forward_train(y, var, mean, inv_std, x, gamma, beta, outer, C, inner, epsilon):
    x64 = _view(x, outer, C, inner)
    if outer * inner == 0:
        mu, v = np.zeros(C), np.zeros(C)
    else:
        mu = x64.mean(axis=(0, 2))
        v = np.square(x64 - mu.reshape(1, C, 1)).mean(axis=(0, 2))
    inv = 1.0 / np.sqrt(v + float(np.float32(epsilon)))
    g, b = _scale_shift(gamma, beta, C)
    out = (x64 - _channel(mu, C)) * _channel(inv * g, C) + _channel(b, C)
    y.reshape(outer, C, inner)[...] = out
    var.reshape(C)[...] = v
    mean.reshape(C)[...] = mu
    inv_std.reshape(C)[...] = inv


def batchnorm_forward_infer(y, x, mean, var, gamma, beta, outer, C, inner, epsilon):
    x64 = _view(x, outer, C, inner)
    g, b = _scale_shift(gamma, beta, C)
    inv = 1.0 / np.sqrt(np.asarray(var, np.float64).reshape(C) + float(np.float32(epsilon)))
    out = (x64 - _channel(mean, C)) * _channel(inv * g, C) + _channel(b, C)
    y.reshape(outer, C, inner)[...] = out


def batchnorm_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, gamma, outer, C, inner):
    n = outer * inner
    dy64 = _view(dy, outer, C, inner)
    if n == 0:
        sum_dy, sum_dy_xhat = np.zeros(C), np.zeros(C)
        xhat = np.zeros((outer, C, inner))
    else:
        xc = _view(x, outer, C, inner) - _channel(mean, C)
        xc = xc - xc.mean(axis=(0, 2), keepdims=True)
        xhat = xc * _channel(inv_std, C)
        sum_dy = dy64.sum(axis=(0, 2))
        sum_dy_xhat = (dy64 * xhat).sum(axis=(0, 2))
    if dgamma is not None:
        dgamma.reshape(C)[...] = sum_dy_xhat
    if dbeta is not None:
        dbeta.reshape(C)[...] = sum_dy
    if dx is not None and n > 0:
        g, _ = _scale_shift(gamma, None, C)
        k = _channel(g * np.asarray(inv_std, np.float64).reshape(C), C)
        out = k * (dy64 - _channel(sum_dy / n, C) - xhat * _channel(sum_dy_xhat / n, C))
        dx.reshape(outer, C, inner)[...] = out


# ---- BatchNormalization + ReLU in one op ----
# The forward saves scale and shift (C), the float32 coefficients of its write pass
# (bn(x) = (x - mean) * scale + shift); the backward gates dy with relu'(bn(x)) recomputed from
# them. Here (float64) the saved values are the exact gamma * inv_std and beta.

def batchnorm_relu_forward_train(y, var, mean, inv_std, scale, shift, x, gamma, beta, outer, C,
                                 inner, epsilon):
    batchnorm_forward_train(y, var, mean, inv_std, x, gamma, beta, outer, C, inner, epsilon)
    np.maximum(y, 0.0, out=y)
    g, b = _scale_shift(gamma, beta, C)
    scale.reshape(C)[...] = g * np.asarray(inv_std, np.float64).reshape(C)
    shift.reshape(C)[...] = b


def batchnorm_relu_forward_infer(y, x, mean, var, gamma, beta, outer, C, inner, epsilon):
    batchnorm_forward_infer(y, x, mean, var, gamma, beta, outer, C, inner, epsilon)
    np.maximum(y, 0.0, out=y)


def batchnorm_relu_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, scale, shift, gamma, outer,
                            C, inner):
    pre = ((_view(x, outer, C, inner) - _channel(mean, C)) * _channel(scale, C)
           + _channel(shift, C))
    gated = _view(dy, outer, C, inner) * (pre > 0)
    batchnorm_backward(dx, dgamma, dbeta, gated, x, mean, inv_std, gamma, outer, C, inner)


# ---- BatchNormalization + ReLU + MaxPooling2D (pool == strides, 'valid') in one op ----
# x (N, H, W, C), channels last; y and positions (N, H // pool_h, W // pool_w, C). By definition
# the composition of the pair's kernels: BN + ReLU above, then the max pool of conv.py, whose
# flat indices are kept as each maximum's position in its window (int8, r * pool_w + s).

def _pool_sizes(name, H, W, pool_h, pool_w):
    if pool_h < 1 or pool_w < 1 or pool_h * pool_w > 128:
        raise ValueError(f"{name}: arguments 'pool_h', 'pool_w' must be >= 1 with "
                         f"pool_h * pool_w <= 128, received ({pool_h}, {pool_w})")
    return H // pool_h, W // pool_w


def batchnorm_relu_maxpool_forward_train(y, positions, var, mean, inv_std, scale, shift, x,
                                         gamma, beta, N, H, W, C, pool_h, pool_w, epsilon):
    from fkeras.backend.reference.conv import maxpool2d_forward

    P, Q = _pool_sizes("batchnorm_relu_maxpool_forward_train", H, W, pool_h, pool_w)
    full = np.zeros((N, H, W, C))
    batchnorm_relu_forward_train(full, var, mean, inv_std, scale, shift, x, gamma, beta,
                                 N * H * W, C, 1, epsilon)
    idx = np.zeros((N, P, Q, C), np.int64)
    maxpool2d_forward(y, idx, full, N, H, W, C, P, Q, pool_h, pool_w, pool_h, pool_w, 0, 0)
    _, h, w, _ = np.unravel_index(idx, (N, H, W, C))
    positions.reshape(N, P, Q, C)[...] = (h % pool_h) * pool_w + w % pool_w


def batchnorm_relu_maxpool_backward(dx, dgamma, dbeta, dy, positions, x, mean, inv_std, scale,
                                    shift, gamma, N, H, W, C, pool_h, pool_w):
    P, Q = _pool_sizes("batchnorm_relu_maxpool_backward", H, W, pool_h, pool_w)
    pos = np.asarray(positions, np.int64).reshape(N, P, Q, C)
    n, p, q, c = np.indices((N, P, Q, C))
    h, w = p * pool_h + pos // pool_w, q * pool_w + pos % pool_w
    full = np.zeros((N, H, W, C))
    full[n, h, w, c] = np.asarray(dy, np.float64).reshape(N, P, Q, C)
    batchnorm_relu_backward(dx, dgamma, dbeta, full, x, mean, inv_std, scale, shift, gamma,
                            N * H * W, C, 1)

KERNELS = {
    "batchnorm_forward_train": batchnorm_forward_train,
    "batchnorm_forward_infer": batchnorm_forward_infer,
    "batchnorm_backward": batchnorm_backward,
    "batchnorm_relu_forward_train": batchnorm_relu_forward_train,
    "batchnorm_relu_forward_infer": batchnorm_relu_forward_infer,
    "batchnorm_relu_backward": batchnorm_relu_backward,
    "batchnorm_relu_maxpool_forward_train": batchnorm_relu_maxpool_forward_train,
    "batchnorm_relu_maxpool_backward": batchnorm_relu_maxpool_backward,
}
