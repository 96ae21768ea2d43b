"""Optimizers: several steps of every optimizer against independent NumPy float64 Keras 3
formulas (on the cpu and reference devices), clipping, weight decay, schedules, constraints,
packing, state order, and parity with real Keras when it is importable."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras
from fkeras import optimizers
from fkeras.optimizers import schedules


class NumpyKeras3:
    """Keras 3's update_step for each optimizer, per variable, in float64."""

    def __init__(self, kind, **hp):
        self.kind, self.hp, self.state, self.t = kind, hp, {}, 0

    def slot(self, i, name, like, init=0.0):
        return self.state.setdefault((i, name), np.full_like(like, init))

    def step(self, params, grads):
        hp, self.t = self.hp, self.t + 1
        t, lr = self.t, hp.get("lr_fn", lambda s: hp["lr"])(self.t - 1)
        grads = self.clip(grads)
        out = []
        for i, (w, g) in enumerate(zip(params, grads)):
            w = w - w * hp.get("wd", 0.0) * lr
            out.append(getattr(self, self.kind)(i, w, g, lr, t))
        return out

    def clip(self, grads):
        hp = self.hp
        if hp.get("clipnorm"):
            c = hp["clipnorm"]
            return [g * c / max(np.linalg.norm(g), c) for g in grads]
        if hp.get("global_clipnorm"):
            c, n = hp["global_clipnorm"], np.sqrt(sum((g * g).sum() for g in grads))
            return [g * c / max(n, c) for g in grads]
        if hp.get("clipvalue"):
            return [np.clip(g, -hp["clipvalue"], hp["clipvalue"]) for g in grads]
        return grads

    def sgd(self, i, w, g, lr, t):
        mu = self.hp.get("momentum", 0.0)
        if mu == 0:
            return w - lr * g
        v = self.state[(i, "v")] = mu * self.slot(i, "v", w) - lr * g
        return w + (mu * v - lr * g if self.hp.get("nesterov") else v)

    def adam(self, i, w, g, lr, t):
        b1, b2, eps = self.hp["b1"], self.hp["b2"], self.hp["eps"]
        m = self.state[(i, "m")] = self.slot(i, "m", w) + (g - self.slot(i, "m", w)) * (1 - b1)
        v = self.state[(i, "v")] = self.slot(i, "v", w) + (g * g - self.slot(i, "v", w)) * (1 - b2)
        if self.hp.get("amsgrad"):
            v = self.state[(i, "vh")] = np.maximum(self.slot(i, "vh", w), v)
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - alpha * m / (np.sqrt(v) + eps)

    def adamax(self, i, w, g, lr, t):
        b1, b2, eps = self.hp["b1"], self.hp["b2"], self.hp["eps"]
        m = self.state[(i, "m")] = self.slot(i, "m", w) + (g - self.slot(i, "m", w)) * (1 - b1)
        u = self.state[(i, "u")] = np.maximum(b2 * self.slot(i, "u", w), np.abs(g))
        return w - lr * m / ((1 - b1 ** t) * (u + eps))

    def nadam(self, i, w, g, lr, t):
        b1, b2, eps = self.hp["b1"], self.hp["b2"], self.hp["eps"]
        if i == 0:
            self.state["prod"] = self.state.get("prod", 1.0) * b1 * (1 - 0.5 * 0.96 ** t)
        u_t, u_t1 = b1 * (1 - 0.5 * 0.96 ** t), b1 * (1 - 0.5 * 0.96 ** (t + 1))
        prod = self.state["prod"]
        m = self.state[(i, "m")] = self.slot(i, "m", w) + (g - self.slot(i, "m", w)) * (1 - b1)
        v = self.state[(i, "v")] = self.slot(i, "v", w) + (g * g - self.slot(i, "v", w)) * (1 - b2)
        m_hat = u_t1 * m / (1 - prod * u_t1) + (1 - u_t) * g / (1 - prod)
        v_hat = v / (1 - b2 ** t)
        return w - m_hat * lr / (np.sqrt(v_hat) + eps)

    def rmsprop(self, i, w, g, lr, t):
        rho, mu, eps = self.hp["rho"], self.hp.get("momentum", 0.0), self.hp["eps"]
        v = self.state[(i, "v")] = rho * self.slot(i, "v", w) + (1 - rho) * g * g
        if self.hp.get("centered"):
            a = self.state[(i, "a")] = rho * self.slot(i, "a", w) + (1 - rho) * g
            denom = v - a * a + eps
        else:
            denom = v + eps
        inc = lr * g / np.sqrt(denom)
        if mu > 0:
            mom = self.state[(i, "mom")] = mu * self.slot(i, "mom", w) + inc
            return w - mom
        return w - inc

    def adagrad(self, i, w, g, lr, t):
        acc = self.state[(i, "a")] = self.slot(i, "a", w, self.hp["init"]) + g * g
        return w - lr * g / np.sqrt(acc + self.hp["eps"])

    def adadelta(self, i, w, g, lr, t):
        rho, eps = self.hp["rho"], self.hp["eps"]
        ag = self.state[(i, "ag")] = rho * self.slot(i, "ag", w) + (1 - rho) * g * g
        delta = -np.sqrt(self.slot(i, "ad", w) + eps) * g / np.sqrt(ag + eps)
        self.state[(i, "ad")] = rho * self.slot(i, "ad", w) + (1 - rho) * delta * delta
        return w + lr * delta


ADAM = {"b1": 0.9, "b2": 0.999, "eps": 1e-7}
# name: (fkeras optimizer factory, NumPy model)
CASES = {
    "sgd": (lambda: optimizers.SGD(0.1), NumpyKeras3("sgd", lr=0.1)),
    "sgd_momentum": (lambda: optimizers.SGD(0.1, momentum=0.9),
                     NumpyKeras3("sgd", lr=0.1, momentum=0.9)),
    "sgd_nesterov_wd": (lambda: optimizers.SGD(0.1, momentum=0.8, nesterov=True,
                                               weight_decay=0.05),
                        NumpyKeras3("sgd", lr=0.1, momentum=0.8, nesterov=True, wd=0.05)),
    "adam": (lambda: optimizers.Adam(0.01), NumpyKeras3("adam", lr=0.01, **ADAM)),
    "adam_eps": (lambda: optimizers.Adam(0.01, epsilon=0.1),
                 NumpyKeras3("adam", lr=0.01, b1=0.9, b2=0.999, eps=0.1)),
    "adam_amsgrad": (lambda: optimizers.Adam(0.01, amsgrad=True),
                     NumpyKeras3("adam", lr=0.01, amsgrad=True, **ADAM)),
    "adamw": (lambda: optimizers.AdamW(0.01), NumpyKeras3("adam", lr=0.01, wd=0.004, **ADAM)),
    "adamax": (lambda: optimizers.Adamax(0.01), NumpyKeras3("adamax", lr=0.01, **ADAM)),
    "nadam": (lambda: optimizers.Nadam(0.01), NumpyKeras3("nadam", lr=0.01, **ADAM)),
    "rmsprop": (lambda: optimizers.RMSprop(0.01),
                NumpyKeras3("rmsprop", lr=0.01, rho=0.9, eps=1e-7)),
    "rmsprop_centered_momentum": (
        lambda: optimizers.RMSprop(0.01, momentum=0.5, centered=True),
        NumpyKeras3("rmsprop", lr=0.01, rho=0.9, eps=1e-7, momentum=0.5, centered=True)),
    "adagrad": (lambda: optimizers.Adagrad(0.1),
                NumpyKeras3("adagrad", lr=0.1, init=0.1, eps=1e-7)),
    "adadelta": (lambda: optimizers.Adadelta(1.0),
                 NumpyKeras3("adadelta", lr=1.0, rho=0.95, eps=1e-7)),
    "clipnorm": (lambda: optimizers.SGD(0.1, clipnorm=1.0),
                 NumpyKeras3("sgd", lr=0.1, clipnorm=1.0)),
    "global_clipnorm": (lambda: optimizers.SGD(0.1, global_clipnorm=1.0),
                        NumpyKeras3("sgd", lr=0.1, global_clipnorm=1.0)),
    "clipvalue": (lambda: optimizers.Adam(0.01, clipvalue=0.5),
                  NumpyKeras3("adam", lr=0.01, clipvalue=0.5, **ADAM)),
    "schedule": (lambda: optimizers.SGD(schedules.ExponentialDecay(0.1, 2, 0.5)),
                 NumpyKeras3("sgd", lr_fn=lambda s: 0.1 * 0.5 ** (s / 2))),
}


def _run(case, device, steps=5, shapes=((3, 4), (5,))):
    make, reference = CASES[case]
    reference = NumpyKeras3(reference.kind, **reference.hp)
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s) for s in shapes]
    with fkeras.device(device):
        variables = [fkeras.Variable(w, name=f"w{i}") for i, w in enumerate(init)]
        opt = make()
        params = [w.copy() for w in init]
        for s in range(steps):
            scale = (1e-4, 0.3, 3.0, 0.5, 1.5)[s % 5]
            grads = [rng.standard_normal(w.shape) * scale for w in init]
            opt.apply([g.astype(variables[0].value.dtype) for g in grads], variables)
            params = reference.step(params, grads)
    return [v.numpy() for v in variables], params, opt


@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_match_keras3_formulas(case):
    got, want, opt = _run(case, "cpu")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    assert int(opt.iterations) == 5
    got, want, _ = _run(case, "reference")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", ["adam_amsgrad", "nadam", "rmsprop_centered_momentum",
                                  "sgd_nesterov_wd", "clipnorm"])
def test_large_models_update_per_variable_the_same(case):
    # Above PER_VARIABLE_MIN_SIZE elements the update runs one kernel per variable on views
    # of the flat buffers (clipping still goes through the flat buffer).
    shapes = ((300, 256), (256,), (256, 3))
    got, want, opt = _run(case, "cpu", steps=3, shapes=shapes)
    assert opt._per_variable
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


def test_clipnorm_is_per_variable():
    v1, v2 = fkeras.Variable(np.zeros(2)), fkeras.Variable(np.zeros(2))
    optimizers.SGD(1.0, clipnorm=1.0).apply([np.array([3.0, 4.0]), np.array([0.0, 0.5])],
                                            [v1, v2])
    np.testing.assert_allclose(v1.numpy(), [-0.6, -0.8], rtol=1e-6)
    np.testing.assert_allclose(v2.numpy(), [0.0, -0.5], rtol=1e-6)


def test_only_one_clipping_argument():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and"):
        optimizers.SGD(clipnorm=1.0, clipvalue=1.0)


def test_packing_keeps_values_shapes_and_views():
    a, b = fkeras.Variable(np.arange(6.0).reshape(2, 3)), fkeras.Variable(np.ones(4))
    opt = optimizers.SGD(0.5)
    opt.build([a, b])
    assert a.shape == (2, 3) and b.shape == (4,)
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0).reshape(2, 3))
    assert np.shares_memory(a.value, b.value) is False
    assert a._value.base is not None and a._value.base is b._value.base  # one flat buffer
    opt.apply([np.ones((2, 3)), np.ones(4)])  # grads only: the built variables
    np.testing.assert_allclose(b.numpy(), 0.5)


def test_two_optimizers_sharing_a_variable_lose_no_update():
    v = fkeras.Variable(np.ones(3))
    a, b = optimizers.SGD(0.1), optimizers.SGD(1.0)
    for _ in range(2):
        a.apply([np.ones(3)], [v])  # packs v into a's buffer
        b.apply([np.ones(3)], [v])  # re-packs v into b's buffer from its current value
    np.testing.assert_allclose(v.numpy(), 1 - 2 * (0.1 + 1.0))
    v._value = np.zeros(3, np.float32)  # a replaced value array is picked up too
    a.apply([np.ones(3)], [v])
    np.testing.assert_allclose(v.numpy(), -0.1)


def test_missing_gradient_leaves_variable_and_slots_untouched():
    a, b = fkeras.Variable(np.ones(3)), fkeras.Variable(np.ones(2))
    opt = optimizers.Adam(0.1)
    opt.apply([np.ones(3), np.ones(2)], [a, b])
    before = b.numpy()
    with pytest.warns(UserWarning, match="Gradients do not exist for variables"):
        opt.apply([np.ones(3), None], [a, b])
    np.testing.assert_array_equal(b.numpy(), before)
    with pytest.raises(ValueError, match="Unknown variable"):
        opt.apply([np.ones(1)], [fkeras.Variable(np.ones(1))])


def test_weight_decay_exclusion_and_constraints():
    a = fkeras.Variable(np.ones(2), name="kernel")
    b = fkeras.Variable(np.ones(2), name="bias", constraint=fkeras.constraints.NonNeg())
    opt = optimizers.SGD(1.0, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply([np.zeros(2), np.array([3.0, -1.0])], [a, b])
    np.testing.assert_allclose(a.numpy(), 0.5)  # decayed: 1 - 1 * 0.5
    np.testing.assert_allclose(b.numpy(), [0.0, 2.0])  # not decayed; NonNeg after the update


def test_learning_rate_setting_and_variables_order():
    opt = optimizers.Adam(0.01, amsgrad=True)
    opt.learning_rate = 0.5
    assert float(opt.learning_rate) == 0.5
    a, b = fkeras.Variable(np.ones(2), name="a"), fkeras.Variable(np.ones(3), name="b")
    opt.build([a, b])
    names = [v.name for v in opt.variables]
    assert names == ["iteration", "learning_rate", "momentum/a", "velocity/a", "momentum/b",
                     "velocity/b", "velocity_hat/a", "velocity_hat/b"]
    sched = optimizers.SGD(schedules.PiecewiseConstantDecay([1], [0.1, 0.01]))
    with pytest.raises(TypeError, match="not settable"):
        sched.learning_rate = 0.3
    assert optimizers.Adagrad().get_config()["initial_accumulator_value"] == 0.1


@pytest.mark.parametrize("name", sorted(optimizers.CLASSES))
def test_get_and_config(name):
    opt = optimizers.get(name.lower())
    assert type(opt).__name__ == name
    clone = type(opt).from_config(opt.get_config())
    assert clone.get_config() == opt.get_config()


SCHEDULES = [
    (schedules.ExponentialDecay(0.1, 10, 0.5), lambda s: 0.1 * 0.5 ** (s / 10)),
    (schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True),
     lambda s: 0.1 * 0.5 ** (s // 10)),
    (schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 10 else 0.5 if s <= 20 else 0.1),
    (schedules.InverseTimeDecay(0.1, 5, 0.5), lambda s: 0.1 / (1 + 0.5 * s / 5)),
    (schedules.PolynomialDecay(0.1, 20, 0.01, power=2.0),
     lambda s: (0.1 - 0.01) * (1 - min(s, 20) / 20) ** 2 + 0.01),
    (schedules.CosineDecay(0.1, 20, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + np.cos(np.pi * min(s, 20) / 20)) + 0.1)),
    (schedules.CosineDecay(0.0, 20, warmup_target=0.2, warmup_steps=5),
     lambda s: 0.2 * s / 5 if s < 5 else
     0.2 * 0.5 * (1 + np.cos(np.pi * (min(s, 25) - 5) / 20))),
]


@pytest.mark.parametrize("index", range(len(SCHEDULES)))
def test_schedules(index):
    schedule, formula = SCHEDULES[index]
    for step in (0, 1, 5, 10, 11, 19, 20, 21, 40):
        assert np.isclose(schedule(step), formula(step), rtol=1e-12), step
    clone = type(schedule).from_config(schedule.get_config())
    assert np.isclose(clone(7), schedule(7))


def test_keras_parity():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 defaults to TensorFlow
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(1)
    init = rng.standard_normal((3, 2)).astype(np.float32)
    grads = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(3)]
    pairs = [(optimizers.Adam(0.01), keras.optimizers.Adam(0.01)),
             (optimizers.RMSprop(0.01, momentum=0.3, centered=True),
              keras.optimizers.RMSprop(0.01, momentum=0.3, centered=True)),
             (optimizers.Nadam(0.01), keras.optimizers.Nadam(0.01)),
             (optimizers.SGD(0.1, momentum=0.9, nesterov=True),
              keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True))]
    for ours, theirs in pairs:
        v, kv = fkeras.Variable(init), keras.Variable(init)
        for g in grads:
            ours.apply([g], [v])
            theirs.apply([keras.ops.convert_to_tensor(g)], [kv])
        np.testing.assert_allclose(v.numpy(), keras.ops.convert_to_numpy(kv), rtol=1e-5,
                                   atol=1e-6)


def test_ema_and_loss_scale_factor():
    v = fkeras.Variable(np.zeros(2))
    opt = optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5, loss_scale_factor=2.0)
    w, avg = np.zeros(2), None
    for step in range(3):
        opt.apply([np.full(2, 2.0 * (step + 1))], [v])  # unscaled gradient: step + 1
        w = w - (step + 1)
        avg = w.copy() if avg is None else 0.5 * avg + 0.5 * w
        np.testing.assert_allclose(v.numpy(), w)
    opt.finalize_variable_values([v])
    np.testing.assert_allclose(v.numpy(), avg)
