"""Reference optimizer updates (float64 spec of cpp/optimizers/; signatures as kernels.h).

Keras 3 formulas (keras/src/optimizers/*.py, `update_step`), one call per variable and step.
Each kernel reads and writes `param` and its slot buffers in place; it computes in float64 and
stores the result in the buffers' own dtype. Scalar attributes are rounded to float32 first,
as the C++ `float` arguments are. `step` is the 1-based iteration count (Keras:
`iterations + 1`). Weight decay comes first and is decoupled: param -= param * wd * lr.
"""

import numpy as np


def _f32(a):
    return float(np.float32(a))


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _decay(param, lr, weight_decay):
    p = _f64(param)
    return p - p * _f32(weight_decay) * lr if weight_decay != 0 else p


def _check_step(name, step):
    if step < 1:
        raise ValueError(f"{name}: argument 'step' must be >= 1 (1-based), received {step}")


def sgd_update(param, velocity, grad, n, lr, momentum, nesterov, weight_decay):
    if momentum != 0 and velocity is None:
        raise ValueError("sgd_update: argument 'velocity' is required when momentum != 0")
    lr, momentum = _f32(lr), _f32(momentum)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    if momentum == 0:
        p = p - lr * g
    else:
        v = momentum * _f64(velocity) - lr * g
        p = p + (momentum * v - lr * g if nesterov else v)
        velocity[...] = v
    param[...] = p


def adam_update(param, m, v, vhat, grad, n, lr, beta1, beta2, epsilon, step, weight_decay):
    _check_step("adam_update", step)
    lr, b1, b2, eps = _f32(lr), _f32(beta1), _f32(beta2), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    m_new = _f64(m) + (g - _f64(m)) * (1 - b1)
    v_new = _f64(v) + (g * g - _f64(v)) * (1 - b2)
    v_use = v_new
    if vhat is not None:
        v_use = np.maximum(_f64(vhat), v_new)
        vhat[...] = v_use
    alpha = lr * np.sqrt(1 - b2**step) / (1 - b1**step)
    param[...] = p - m_new * alpha / (np.sqrt(v_use) + eps)
    m[...] = m_new
    v[...] = v_new


def adamax_update(param, m, u, grad, n, lr, beta1, beta2, epsilon, step, weight_decay):
    _check_step("adamax_update", step)
    lr, b1, b2, eps = _f32(lr), _f32(beta1), _f32(beta2), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    m_new = _f64(m) + (g - _f64(m)) * (1 - b1)
    u_new = np.maximum(b2 * _f64(u), np.abs(g))
    param[...] = p - lr * m_new / ((1 - b1**step) * (u_new + eps))
    m[...] = m_new
    u[...] = u_new


def nadam_update(
    param, m, v, grad, n, lr, beta1, beta2, epsilon, step, u_t, u_t1, u_product_t, weight_decay
):
    _check_step("nadam_update", step)
    lr, b1, b2, eps = _f32(lr), _f32(beta1), _f32(beta2), _f32(epsilon)
    u_t, u_t1, u_product_t = _f32(u_t), _f32(u_t1), _f32(u_product_t)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    m_new = _f64(m) + (g - _f64(m)) * (1 - b1)
    v_new = _f64(v) + (g * g - _f64(v)) * (1 - b2)
    m_hat = u_t1 * m_new / (1 - u_product_t * u_t1) + (1 - u_t) * g / (1 - u_product_t)
    v_hat = v_new / (1 - b2**step)
    param[...] = p - m_hat * lr / (np.sqrt(v_hat) + eps)
    m[...] = m_new
    v[...] = v_new


def rmsprop_update(
    param,
    velocity,
    momentum_buf,
    average_grad,
    grad,
    n,
    lr,
    rho,
    momentum,
    epsilon,
    centered,
    weight_decay,
):
    if momentum > 0 and momentum_buf is None:
        raise ValueError("rmsprop_update: argument 'momentum_buf' is required when momentum > 0")
    if centered and average_grad is None:
        raise ValueError("rmsprop_update: argument 'average_grad' is required when centered")
    lr, rho, momentum, eps = _f32(lr), _f32(rho), _f32(momentum), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    vel = rho * _f64(velocity) + (1 - rho) * g * g
    velocity[...] = vel
    if centered:
        avg = rho * _f64(average_grad) + (1 - rho) * g
        average_grad[...] = avg
        denominator = vel - avg * avg + eps
    else:
        denominator = vel + eps
    increment = lr * g / np.sqrt(denominator)
    if momentum > 0:
        increment = momentum * _f64(momentum_buf) + increment
        momentum_buf[...] = increment
    param[...] = p - increment


def adagrad_update(param, accumulator, grad, n, lr, epsilon, weight_decay):
    lr, eps = _f32(lr), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    acc = _f64(accumulator) + g * g
    accumulator[...] = acc
    param[...] = p - lr * g / np.sqrt(acc + eps)


def adadelta_update(
    param, accumulated_grad, accumulated_delta, grad, n, lr, rho, epsilon, weight_decay
):
    lr, rho, eps = _f32(lr), _f32(rho), _f32(epsilon)
    p, g = _decay(param, lr, weight_decay), _f64(grad)
    acc_g = rho * _f64(accumulated_grad) + (1 - rho) * g * g
    delta = -np.sqrt(_f64(accumulated_delta) + eps) * g / np.sqrt(acc_g + eps)
    accumulated_grad[...] = acc_g
    accumulated_delta[...] = rho * _f64(accumulated_delta) + (1 - rho) * delta * delta
    param[...] = p + lr * delta


KERNELS = {
    "sgd_update": sgd_update,
    "adam_update": adam_update,
    "adamax_update": adamax_update,
    "nadam_update": nadam_update,
    "rmsprop_update": rmsprop_update,
    "adagrad_update": adagrad_update,
    "adadelta_update": adadelta_update,
}
