"""Reference updates (float64) of Lion, Ftrl, Lamb, Adafactor, Muon and ScheduleFreeAdamW.

Signatures as cpp/include/fkeras/kernels.h; Keras 3.15 formulas (torch backend numbers).
"""

import numpy as np

from fkeras.backend.reference.optimizers import _check_step, _decay, _f32, _f64


def lion_update(param, m, grad, n, lr, beta1, beta2, weight_decay):
    lr, b1, b2 = _f32(lr), _f32(beta1), _f32(beta2)
    p, g, mm = _decay(param, lr, weight_decay), _f64(grad), _f64(m)
    param[...] = p - lr * np.sign(mm * b1 + g * (1 - b1))
    m[...] = mm * b2 + g * (1 - b2)


def ftrl_update(param, accumulator, linear, grad, n, lr, learning_rate_power, l1, l2,
                l2_shrinkage, beta, weight_decay):
    lr, power, l1 = _f32(lr), _f32(learning_rate_power), _f32(l1)
    l2 = _f32(l2) + _f32(beta) / (2.0 * lr)
    p, g, acc = _decay(param, lr, weight_decay), _f64(grad), _f64(accumulator)
    new_acc = acc + g * g
    lin = _f64(linear) + g + 2 * _f32(l2_shrinkage) * p - (
        new_acc ** -power - acc ** -power) / lr * p
    quadratic = new_acc ** -power / lr + 2 * l2
    param[...] = (np.clip(lin, -l1, l1) - lin) / quadratic
    linear[...] = lin
    accumulator[...] = new_acc


def lamb_update(param, m, v, grad, n, lr, beta1, beta2, epsilon, step, weight_decay):
    _check_step("lamb_update", step)
    lr, b1, b2, eps = _f32(lr), _f32(beta1), _f32(beta2), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    mm = _f64(m) + (g - _f64(m)) * (1 - b1)
    vv = _f64(v) + (g * g - _f64(v)) * (1 - b2)
    u = mm / (1 - b1 ** step) / (np.sqrt(vv / (1 - b2 ** step)) + eps)
    w_norm, g_norm = np.sqrt(np.sum(p * p)), np.sqrt(np.sum(u * u))
    ratio = w_norm / g_norm if w_norm > 0 and g_norm > 0 else 1.0
    param[...] = p - ratio * lr * u
    m[...] = mm
    v[...] = vv


def adafactor_update(param, v, grad, n, lr, beta_2_decay, epsilon_1, epsilon_2, clip_threshold,
                     step, factored, weight_decay):
    _check_step("adafactor_update", step)
    if n == 0:
        return
    lr = _f32(lr)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    vv = _f64(v)
    if not factored:
        b = 1 - float(step) ** _f32(beta_2_decay)
        vv = b * vv + (1 - b) * (g * g + _f32(epsilon_1))
        v[...] = vv
    u = g / np.sqrt(vv)
    rho = min(lr, 1 / np.sqrt(step))
    alpha = max(_f32(epsilon_2), np.sqrt(np.mean(p * p))) * rho
    param[...] = p - alpha * u / max(1.0, np.sqrt(np.mean(u * u)) / _f32(clip_threshold))


def muon_momentum_update(m, out, grad, n, momentum, nesterov):
    mom, g = _f32(momentum), _f64(grad)
    mm = _f64(m) * mom + g
    m[...] = mm
    out[...] = g + mom * mm if nesterov else mm


def muon_update(param, ortho, n, lr, scale, weight_decay):
    lr = _f32(lr)
    param[...] = _decay(param, lr, weight_decay) - lr * _f64(ortho) * _f32(scale)


def schedule_free_adamw_update(param, z, v, grad, n, lr, beta1, beta2, epsilon, step,
                               warmup_steps, weight_decay):
    _check_step("schedule_free_adamw_update", step)
    lr, b1, b2, eps = _f32(lr), _f32(beta1), _f32(beta2), _f32(epsilon)
    y, g = _decay(param, lr, weight_decay), _f64(grad)
    lr_t = lr * min(step / warmup_steps, 1.0) if warmup_steps > 0 else lr
    vv = _f64(v) + (g * g - _f64(v)) * (1 - b2)
    zz = _f64(z) - lr_t * g / (np.sqrt(vv / (1 - b2 ** step)) + eps)
    w = 1.0 / step
    x_old = (y - (1 - b1) * zz) / b1  # torch backend: the in-place-updated z
    param[...] = (1 - b1) * zz + b1 * ((1 - w) * x_old + w * zz)
    z[...] = zz
    v[...] = vv


KERNELS = {f.__name__: f for f in (lion_update, ftrl_update, lamb_update, adafactor_update,
                                   muon_momentum_update, muon_update,
                                   schedule_free_adamw_update)}
