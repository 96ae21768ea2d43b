"""Optimizer update kernels: the reference against Keras 3's update_step written out here in
float64, the compiled kernels against the reference on every ISA over several steps, real Keras
when it is importable, and bad inputs."""

import os

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import optimizers as ref
from kernel_testing import assert_close


def f32(a):
    return float(np.float32(a))


def nadam_schedule(beta1, step, u_product_prev):
    """Keras 3 Nadam's momentum schedule: (u_t, u_t1, u_product_t) for a 1-based step."""
    u_t = beta1 * (1.0 - 0.5 * 0.96**step)
    u_t1 = beta1 * (1.0 - 0.5 * 0.96 ** (step + 1))
    return u_t, u_t1, u_product_prev * u_t


def grad_scale(step):
    """Gradient sizes per step: tiny ones (g^2 below epsilon) expose where epsilon goes."""
    return (1e-4, 1e-3, 0.3, 3.0, 0.5)[(step - 1) % 5]


# name -> (kind, hyperparameters, slots). wd is Keras's weight_decay (0: none).
CONFIGS = {
    "sgd": ("sgd", {"lr": 0.1, "momentum": 0.0, "nesterov": False, "wd": 0.0}, []),
    "sgd_momentum": (
        "sgd",
        {"lr": 0.1, "momentum": 0.9, "nesterov": False, "wd": 0.0},
        ["velocity"],
    ),
    "sgd_nesterov_wd": (
        "sgd",
        {"lr": 0.1, "momentum": 0.9, "nesterov": True, "wd": 0.01},
        ["velocity"],
    ),
    "adam": ("adam", {"lr": 0.01, "b1": 0.9, "b2": 0.999, "eps": 1e-7, "wd": 0.0}, ["m", "v"]),
    "adam_amsgrad_wd": (
        "adam",
        {"lr": 0.01, "b1": 0.8, "b2": 0.99, "eps": 1e-7, "wd": 0.004},
        ["m", "v", "vhat"],
    ),
    "adamax": ("adamax", {"lr": 0.01, "b1": 0.9, "b2": 0.999, "eps": 1e-7, "wd": 0.0}, ["m", "u"]),
    "adamax_wd": (
        "adamax",
        {"lr": 0.01, "b1": 0.85, "b2": 0.99, "eps": 1e-7, "wd": 0.01},
        ["m", "u"],
    ),
    "nadam": ("nadam", {"lr": 0.01, "b1": 0.9, "b2": 0.999, "eps": 1e-7, "wd": 0.0}, ["m", "v"]),
    "nadam_wd": ("nadam", {"lr": 0.01, "b1": 0.8, "b2": 0.99, "eps": 1e-7, "wd": 0.01}, ["m", "v"]),
    "rmsprop": (
        "rmsprop",
        {"lr": 0.01, "rho": 0.9, "momentum": 0.0, "eps": 1e-7, "centered": False, "wd": 0.0},
        ["velocity"],
    ),
    "rmsprop_momentum": (
        "rmsprop",
        {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "eps": 1e-7, "centered": False, "wd": 0.0},
        ["velocity", "momentum_buf"],
    ),
    "rmsprop_centered_wd": (
        "rmsprop",
        {"lr": 0.01, "rho": 0.8, "momentum": 0.5, "eps": 1e-7, "centered": True, "wd": 0.01},
        ["velocity", "momentum_buf", "average_grad"],
    ),
    "rmsprop_centered": (
        "rmsprop",
        {"lr": 0.01, "rho": 0.9, "momentum": 0.0, "eps": 1e-7, "centered": True, "wd": 0.0},
        ["velocity", "average_grad"],
    ),
    "adagrad": ("adagrad", {"lr": 0.01, "eps": 1e-7, "wd": 0.0}, ["accumulator"]),
    "adagrad_wd": ("adagrad", {"lr": 0.05, "eps": 1e-7, "wd": 0.02}, ["accumulator"]),
    "adadelta": (
        "adadelta",
        {"lr": 1.0, "rho": 0.95, "eps": 1e-7, "wd": 0.0},
        ["accumulated_grad", "accumulated_delta"],
    ),
    "adadelta_wd": (
        "adadelta",
        {"lr": 0.5, "rho": 0.9, "eps": 1e-6, "wd": 0.01},
        ["accumulated_grad", "accumulated_delta"],
    ),
}


def initial_state(name, n, rng, dtype):
    kind, _, slots = CONFIGS[name]
    state = {"param": rng.standard_normal(n).astype(dtype)}
    for s in slots:
        state[s] = np.zeros(n, dtype)
    if kind == "adagrad":
        state["accumulator"][:] = 0.1  # Keras's initial_accumulator_value
    state["u_product"] = 1.0  # Nadam's running product, kept by the caller
    return state


def kernel_step(kernels, name, state, grad, step):
    """Calls one update kernel (from _C or the reference table) in its kernels.h order."""
    kind, h, _ = CONFIGS[name]
    s, n, k = state.get, grad.size, kernels[kind + "_update"]
    if kind == "sgd":
        k(s("param"), s("velocity"), grad, n, h["lr"], h["momentum"], h["nesterov"], h["wd"])
    elif kind == "adam":
        k(
            s("param"),
            s("m"),
            s("v"),
            s("vhat"),
            grad,
            n,
            h["lr"],
            h["b1"],
            h["b2"],
            h["eps"],
            step,
            h["wd"],
        )
    elif kind == "adamax":
        k(s("param"), s("m"), s("u"), grad, n, h["lr"], h["b1"], h["b2"], h["eps"], step, h["wd"])
    elif kind == "nadam":
        u_t, u_t1, prod = nadam_schedule(h["b1"], step, state["u_product"])
        state["u_product"] = prod
        k(
            s("param"),
            s("m"),
            s("v"),
            grad,
            n,
            h["lr"],
            h["b1"],
            h["b2"],
            h["eps"],
            step,
            u_t,
            u_t1,
            prod,
            h["wd"],
        )
    elif kind == "rmsprop":
        k(
            s("param"),
            s("velocity"),
            s("momentum_buf"),
            s("average_grad"),
            grad,
            n,
            h["lr"],
            h["rho"],
            h["momentum"],
            h["eps"],
            h["centered"],
            h["wd"],
        )
    elif kind == "adagrad":
        k(s("param"), s("accumulator"), grad, n, h["lr"], h["eps"], h["wd"])
    elif kind == "adadelta":
        k(
            s("param"),
            s("accumulated_grad"),
            s("accumulated_delta"),
            grad,
            n,
            h["lr"],
            h["rho"],
            h["eps"],
            h["wd"],
        )


def keras_formula_step(name, st, g, step):
    """Keras 3's update_step (keras/src/optimizers/<kind>.py) in float64, written out in the
    same shape as the Keras source; hyperparameters rounded to float32 as the kernels take
    them. Updates the dict `st` of float64 arrays."""
    kind, h, _ = CONFIGS[name]
    h = {k: (f32(v) if isinstance(v, float) else v) for k, v in h.items()}
    lr, var = h["lr"], st["param"]
    if h["wd"]:
        var = var - var * h["wd"] * lr  # BaseOptimizer._apply_weight_decay, before the step
    if kind == "sgd":
        if h["momentum"] != 0:
            m = st["velocity"] * h["momentum"] - g * lr
            st["velocity"] = m
            var = var + (m * h["momentum"] - g * lr if h["nesterov"] else m)
        else:
            var = var - g * lr
    elif kind in ("adam", "adamax", "nadam"):
        b1, b2 = h["b1"], h["b2"]
        st["m"] = st["m"] + (g - st["m"]) * (1 - b1)
        if kind == "adam":
            st["v"] = st["v"] + (g * g - st["v"]) * (1 - b2)
            v = st["v"]
            if "vhat" in st:
                st["vhat"] = np.maximum(st["vhat"], v)
                v = st["vhat"]
            alpha = lr * np.sqrt(1 - b2**step) / (1 - b1**step)
            var = var - st["m"] * alpha / (np.sqrt(v) + h["eps"])
        elif kind == "adamax":
            st["u"] = np.maximum(b2 * st["u"], np.abs(g))
            var = var - lr * st["m"] / ((1 - b1**step) * (st["u"] + h["eps"]))
        else:
            # The schedule is the caller's (in float64 from the unrounded beta_1), as in Keras's
            # _backend_update_step; the kernel receives it rounded to float32.
            raw_b1 = CONFIGS[name][1]["b1"]
            u_t, u_t1, prod = (f32(a) for a in nadam_schedule(raw_b1, step, st["u_product"]))
            st["u_product"] = st["u_product"] * raw_b1 * (1.0 - 0.5 * 0.96**step)
            st["v"] = st["v"] + (g * g - st["v"]) * (1 - b2)
            m_hat = u_t1 * st["m"] / (1 - prod * u_t1) + (1 - u_t) * g / (1 - prod)
            v_hat = st["v"] / (1 - b2**step)
            var = var - m_hat * lr / (np.sqrt(v_hat) + h["eps"])
    elif kind == "rmsprop":
        rho = h["rho"]
        st["velocity"] = rho * st["velocity"] + (1 - rho) * g * g
        if h["centered"]:
            st["average_grad"] = rho * st["average_grad"] + (1 - rho) * g
            denominator = st["velocity"] - st["average_grad"] ** 2 + h["eps"]
        else:
            denominator = st["velocity"] + h["eps"]
        increment = lr * g / np.sqrt(denominator)
        if h["momentum"] > 0:
            st["momentum_buf"] = h["momentum"] * st["momentum_buf"] + increment
            increment = st["momentum_buf"]
        var = var - increment
    elif kind == "adagrad":
        st["accumulator"] = st["accumulator"] + g * g
        var = var - lr * g / np.sqrt(st["accumulator"] + h["eps"])
    elif kind == "adadelta":
        rho, eps = h["rho"], h["eps"]
        st["accumulated_grad"] = rho * st["accumulated_grad"] + (1 - rho) * g * g
        delta_var = (
            -np.sqrt(st["accumulated_delta"] + eps) * g / np.sqrt(st["accumulated_grad"] + eps)
        )
        st["accumulated_delta"] = rho * st["accumulated_delta"] + (1 - rho) * delta_var**2
        var = var + lr * delta_var
    st["param"] = var


# ---- the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
def test_reference_matches_keras_formulas(name):
    rng = np.random.default_rng(0)
    state = initial_state(name, 50, rng, np.float64)
    expected = {k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in state.items()}
    for step in range(1, 6):
        g = rng.standard_normal(50) * grad_scale(step)
        kernel_step(ref.KERNELS, name, state, g, step)
        keras_formula_step(name, expected, g, step)
        for k in CONFIGS[name][2] + ["param"]:
            np.testing.assert_allclose(
                state[k], expected[k], rtol=1e-10, atol=1e-14, err_msg=f"{name}: {k} at step {step}"
            )


# ---- compiled against the reference --------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
def test_compiled_matches_reference(isa, name):
    for n in (1, 7, 16, 17, 1000, 100003):
        rng = np.random.default_rng(n)
        state = initial_state(name, n, rng, np.float32)
        for step in range(1, 5):
            g = (rng.standard_normal(n) * grad_scale(step)).astype(np.float32)
            before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in state.items()}
            kernel_step(vars(_C), name, state, g, step)
            kernel_step(ref.KERNELS, name, before, g, step)
            for k in CONFIGS[name][2] + ["param"]:
                scale = max(float(np.abs(before[k]).max()), 1e-30)
                assert_close(
                    state[k],
                    before[k],
                    rtol=1e-5,
                    atol=1e-6 * scale,
                    name=f"{name} n={n} step {step}: {k}",
                )


def test_first_adam_step_is_minus_lr_times_sign(isa):
    n = 37
    grad = np.where(np.arange(n) % 3 == 0, -2.0, 0.5).astype(np.float32)
    param, m, v = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    _C.adam_update(param, m, v, None, grad, n, 0.1, 0.9, 0.999, 1e-7, 1, 0.0)
    assert_close(param, -0.1 * np.sign(grad), rtol=1e-5)
    assert_close(m, 0.1 * grad, rtol=1e-6)
    assert_close(v, 0.001 * grad * grad, rtol=1e-4)


# ---- real Keras ----------------------------------------------------------------------------


def _keras_optimizer(keras, name):
    kind, h, _ = CONFIGS[name]
    wd = h["wd"] or None
    O = keras.optimizers
    if kind == "sgd":
        return O.SGD(h["lr"], momentum=h["momentum"], nesterov=h["nesterov"], weight_decay=wd)
    if kind == "adam":
        return O.Adam(
            h["lr"],
            h["b1"],
            h["b2"],
            h["eps"],
            amsgrad=name.startswith("adam_ams"),
            weight_decay=wd,
        )
    if kind == "adamax":
        return O.Adamax(h["lr"], h["b1"], h["b2"], h["eps"], weight_decay=wd)
    if kind == "nadam":
        return O.Nadam(h["lr"], h["b1"], h["b2"], h["eps"], weight_decay=wd)
    if kind == "rmsprop":
        return O.RMSprop(h["lr"], h["rho"], h["momentum"], h["eps"], h["centered"], weight_decay=wd)
    if kind == "adagrad":
        return O.Adagrad(h["lr"], 0.1, h["eps"], weight_decay=wd)
    return O.Adadelta(h["lr"], h["rho"], h["eps"], weight_decay=wd)


@pytest.mark.parametrize("name", CONFIGS)
def test_compiled_matches_real_keras(name):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(1)
    n = 64
    state = initial_state(name, n, rng, np.float32)
    variable = keras.Variable(state["param"].copy())
    optimizer = _keras_optimizer(keras, name)
    for step in range(1, 5):
        g = (rng.standard_normal(n) * grad_scale(step)).astype(np.float32)
        optimizer.apply([keras.ops.convert_to_tensor(g)], [variable])
        kernel_step(vars(_C), name, state, g, step)
        # Keras rounds 1 - beta in float64 before casting, the kernels take beta as float32:
        # slot decay rates differ by up to ~1e-5 relative, the parameters far less.
        assert_close(
            state["param"],
            keras.ops.convert_to_numpy(variable),
            rtol=2e-5,
            atol=2e-6,
            name=f"{name} step {step}",
        )


# ---- bad inputs ----------------------------------------------------------------------------


def _adam_args(n=8):
    z = lambda: np.zeros(n, np.float32)
    return {
        "param": z(),
        "m": z(),
        "v": z(),
        "vhat": None,
        "grad": z(),
        "n": n,
        "lr": 0.1,
        "beta1": 0.9,
        "beta2": 0.999,
        "epsilon": 1e-7,
        "step": 1,
        "weight_decay": 0.0,
    }


@pytest.mark.parametrize(
    "change, match",
    [
        ({"param": np.zeros(8)}, "dtype float32"),
        ({"grad": np.zeros(9, np.float32)}, "expected shape"),
        ({"m": np.zeros(16, np.float32)[::2]}, "C-contiguous"),
        ({"vhat": np.zeros(7, np.float32)}, "vhat"),
        ({"v": None}, "required"),
        ({"n": -1}, "must be >= 0"),
        ({"step": 0}, "step"),
    ],
)
def test_adam_rejects_bad_inputs(change, match):
    args = _adam_args()
    args.update(change)
    with pytest.raises(ValueError, match=match):
        _C.adam_update(**args)


def test_read_only_and_missing_slots_are_rejected():
    args = _adam_args()
    args["m"].setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        _C.adam_update(**args)
    z = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="velocity"):
        _C.sgd_update(z.copy(), None, z, 4, 0.1, 0.9, False, 0.0)
    with pytest.raises(ValueError, match="momentum_buf"):
        _C.rmsprop_update(z.copy(), z.copy(), None, None, z, 4, 0.1, 0.9, 0.5, 1e-7, False, 0.0)
    with pytest.raises(ValueError, match="average_grad"):
        _C.rmsprop_update(z.copy(), z.copy(), None, None, z, 4, 0.1, 0.9, 0.0, 1e-7, True, 0.0)
    with pytest.raises(ValueError, match="step"):
        _C.nadam_update(
            z.copy(), z.copy(), z.copy(), z, 4, 0.1, 0.9, 0.999, 1e-7, 0, 0.5, 0.5, 0.5, 0.0
        )
    with pytest.raises(ValueError, match="step"):
        _C.adamax_update(z.copy(), z.copy(), z.copy(), z, 4, 0.1, 0.9, 0.999, 1e-7, -3, 0.0)
    with pytest.raises(ValueError, match="accumulated_delta"):
        _C.adadelta_update(z.copy(), z.copy(), z.astype(np.float64), z, 4, 1.0, 0.95, 1e-7, 0.0)
    with pytest.raises(ValueError, match="accumulator"):
        _C.adagrad_update(z.copy(), z[:3].copy(), z, 4, 0.1, 1e-7, 0.0)


def test_reference_rejects_missing_slots_and_bad_step():
    z = np.zeros(4)
    with pytest.raises(ValueError, match="velocity"):
        ref.sgd_update(z.copy(), None, z, 4, 0.1, 0.9, False, 0.0)
    with pytest.raises(ValueError, match="average_grad"):
        ref.rmsprop_update(z.copy(), z.copy(), None, None, z, 4, 0.1, 0.9, 0.0, 1e-7, True, 0.0)
    with pytest.raises(ValueError, match="step"):
        ref.adam_update(z.copy(), z.copy(), z.copy(), None, z, 4, 0.1, 0.9, 0.999, 1e-7, 0, 0.0)
