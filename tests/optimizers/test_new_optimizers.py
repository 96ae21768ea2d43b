"""Lion, Lamb, Ftrl, Adafactor, Muon, ScheduleFreeAdamW, LossScaleOptimizer: trajectories
against real Keras 3.15 (torch backend), configs, state order, fit, legacy names."""

import numpy as np
import pytest

import fkeras
from fkeras import optimizers

SHAPES = [(3, 4), (5,), (6, 2), (2, 3, 4)]

CASES = [
    ("Lion", {}),
    ("Lion", {"weight_decay": 0.1, "beta_1": 0.8}),
    ("Lamb", {}),
    ("Lamb", {"weight_decay": 0.05, "clipnorm": 0.5}),
    ("Ftrl", {"learning_rate": 0.1}),
    ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01,
              "l2_regularization_strength": 0.02, "l2_shrinkage_regularization_strength": 0.01,
              "beta": 0.1, "learning_rate_power": -0.7}),
    ("Adafactor", {}),
    ("Adafactor", {"learning_rate": 0.1, "weight_decay": 0.01, "relative_step": False}),
    ("Muon", {}),
    ("Muon", {"learning_rate": 0.01, "nesterov": False, "rms_rate": None,
              "adam_lr_ratio": 0.5}),
    ("ScheduleFreeAdamW", {}),
    ("ScheduleFreeAdamW", {"warmup_steps": 3, "weight_decay": 0.01, "global_clipnorm": 1.0}),
    ("Lion", {"schedule": True}),
    ("Lamb", {"schedule": True}),
    ("ScheduleFreeAdamW", {"schedule": True}),
]


def _data(seed=0, steps=5):
    rng = np.random.default_rng(seed)
    w = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    g = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    return w, g


def _make(module, name, kw):
    kw = dict(kw)
    if kw.pop("schedule", False):
        kw["learning_rate"] = module.optimizers.schedules.ExponentialDecay(0.01, 2, 0.5)
    return getattr(module.optimizers, name)(**kw)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_keras(name, kw):
    keras = pytest.importorskip("keras")
    w0, grads = _data()
    kv = [keras.Variable(w.copy(), name=f"v{i}") for i, w in enumerate(w0)]
    fv = [fkeras.Variable(w.copy(), name=f"v{i}") for i, w in enumerate(w0)]
    kopt, fopt = _make(keras, name, kw), _make(fkeras, name, kw)
    for g in grads:
        kopt.apply([keras.ops.convert_to_tensor(x) for x in g], kv)
        fopt.apply(g, fv)
        for a, b in zip(kv, fv):
            np.testing.assert_allclose(b.numpy(), keras.ops.convert_to_numpy(a.value),
                                       rtol=1e-5, atol=1e-6)
    ks = [keras.ops.convert_to_numpy(v.value) for v in kopt.variables]
    fs = [np.asarray(v.numpy()) for v in fopt.variables]
    assert [np.shape(x) for x in ks] == [np.shape(x) for x in fs]
    for a, b in zip(ks, fs):
        np.testing.assert_allclose(np.asarray(b, np.float64), np.asarray(a, np.float64),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", CASES[:12], ids=[f"{n}-{i}" for i, (n, _) in
                                                     enumerate(CASES[:12])])
def test_config_matches_keras(name, kw):
    keras = pytest.importorskip("keras")
    kc = _make(keras, name, kw).get_config()
    fc = _make(fkeras, name, kw).get_config()
    assert set(fc) == set(kc)
    for k in kc:
        if k != "name":
            assert fc[k] == pytest.approx(kc[k]) if isinstance(kc[k], float) else fc[k] == kc[k], k
    round_trip = type(_make(fkeras, name, kw)).from_config(fc).get_config()
    assert round_trip == fc


@pytest.mark.parametrize("name", ["Lion", "Lamb", "Ftrl", "Adafactor", "Muon",
                                  "ScheduleFreeAdamW"])
def test_fit_decreases_loss(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = x @ rng.standard_normal((4, 1)).astype(np.float32)
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(8, activation="relu"),
                               fkeras.layers.Dense(1)])
    lr = {"Ftrl": 0.5, "Adafactor": 0.05}.get(name, 0.01)
    model.compile(optimizer=getattr(optimizers, name)(learning_rate=lr), loss="mse")
    hist = model.fit(x, y, epochs=8, batch_size=16, verbose=0).history["loss"]
    assert hist[-1] < hist[0]


def test_state_save_load_round_trip(tmp_path):
    w0, grads = _data()
    for name in ["Lion", "Lamb", "Ftrl", "Adafactor", "Muon", "ScheduleFreeAdamW"]:
        a, b = getattr(optimizers, name)(), getattr(optimizers, name)()
        va = [fkeras.Variable(w.copy()) for w in w0]
        vb = [fkeras.Variable(w.copy()) for w in w0]
        for g in grads[:3]:
            a.apply(g, va)
        b.build(vb)
        store = {}
        a.save_own_variables(store)
        b.load_own_variables(store)
        for v, u in zip(va, vb):
            u.assign(v.numpy())
        a.apply(grads[3], va)
        b.apply(grads[3], vb)
        for v, u in zip(va, vb):
            np.testing.assert_array_equal(v.numpy(), u.numpy())


def test_loss_scale_optimizer_skips_and_rescales():
    v = fkeras.Variable(np.ones((3,), np.float32))
    opt = optimizers.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=8.0,
                                        dynamic_growth_steps=2)
    opt.apply([np.array([8.0, 16.0, 8.0], np.float32)], [v])
    np.testing.assert_allclose(v.numpy(), [0.9, 0.8, 0.9], rtol=1e-6)
    assert float(opt.dynamic_scale) == 8.0 and int(opt.step_counter) == 1
    opt.apply([np.array([np.inf, 0.0, 0.0], np.float32)], [v])
    np.testing.assert_allclose(v.numpy(), [0.9, 0.8, 0.9], rtol=1e-6)  # skipped
    assert float(opt.dynamic_scale) == 4.0 and int(opt.step_counter) == 0
    opt.apply([np.zeros(3, np.float32)], [v])
    opt.apply([np.zeros(3, np.float32)], [v])
    assert float(opt.dynamic_scale) == 8.0
    assert int(opt.iterations) == 3
    assert [x.name for x in opt.variables][:4] == ["iteration", "learning_rate",
                                                  "step_counter", "dynamic_scale"]


def test_loss_scale_optimizer_matches_keras():
    keras = pytest.importorskip("keras")
    w0, grads = _data(steps=6)
    grads[2][1][0] = np.nan
    kv = [keras.Variable(w.copy()) for w in w0]
    fv = [fkeras.Variable(w.copy()) for w in w0]
    ko = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(), initial_scale=4.0,
                                             dynamic_growth_steps=2)
    fo = optimizers.LossScaleOptimizer(optimizers.Adam(), initial_scale=4.0,
                                       dynamic_growth_steps=2)
    for g in grads:
        ko.apply([keras.ops.convert_to_tensor(x) for x in g], kv)
        fo.apply(g, fv)
        assert float(fo.dynamic_scale) == float(keras.ops.convert_to_numpy(ko.dynamic_scale.value))
    for a, b in zip(kv, fv):
        np.testing.assert_allclose(b.numpy(), keras.ops.convert_to_numpy(a.value), rtol=1e-5,
                                   atol=1e-6)
    assert fo.get_config().keys() == ko.get_config().keys()
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        optimizers.LossScaleOptimizer(optimizers.SGD(), clipnorm=1.0)


@pytest.mark.parametrize("name", ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"])
def test_legacy_names_raise_import_error(name):
    with pytest.raises(ImportError, match="not supported in Keras 3"):
        getattr(optimizers.legacy, name)()


@pytest.mark.parametrize("kw,match", [
    ({"beta_1": 0.0}, "beta_1"),
])
def test_lion_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        optimizers.Lion(**kw)


@pytest.mark.parametrize("kw", [{"initial_accumulator_value": -1.0},
                                {"learning_rate_power": 0.5},
                                {"l1_regularization_strength": -0.1}])
def test_ftrl_errors(kw):
    with pytest.raises(ValueError, match=list(kw)[0]):
        optimizers.Ftrl(**kw)


def test_loss_scale_optimizer_serialization_round_trip():
    opt = optimizers.LossScaleOptimizer(optimizers.Lion(0.01), initial_scale=64.0)
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert isinstance(again, optimizers.LossScaleOptimizer)
    assert isinstance(again.inner_optimizer, optimizers.Lion)
    assert again.get_config() == opt.get_config()


@pytest.mark.parametrize("name", ["Lion", "Lamb", "Ftrl", "Adafactor", "Muon",
                                  "ScheduleFreeAdamW"])
def test_keras_file_round_trip_with_real_keras(tmp_path, name):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(3),
                               fkeras.layers.Dense(2)])
    model.compile(optimizer=getattr(optimizers, name)(), loss="mse")
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    kmodel = keras.saving.load_model(path)
    assert type(kmodel.optimizer).__name__ == name
    ours = [np.asarray(v.numpy()) for v in model.optimizer.variables]
    theirs = [keras.ops.convert_to_numpy(v.value) for v in kmodel.optimizer.variables]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a, np.float64).reshape(np.shape(b)), b,
                                   rtol=1e-6)
    path2 = str(tmp_path / "k.keras")
    kmodel.save(path2)
    back = fkeras.saving.load_model(path2)
    for a, b in zip(theirs, [np.asarray(v.numpy()) for v in back.optimizer.variables]):
        np.testing.assert_allclose(np.asarray(b, np.float64).reshape(np.shape(a)), a,
                                   rtol=1e-6)


@pytest.mark.parametrize("wrap", ["lso", "factor"])
def test_fit_with_loss_scaling_equals_plain_fit(wrap):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = rng.standard_normal((32, 1)).astype(np.float32)
    weights = None
    results = []
    for kind in ("plain", wrap):
        model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(1)])
        if weights is None:
            weights = model.get_weights()
        model.set_weights(weights)
        if kind == "plain":
            opt = optimizers.SGD(0.1)
        elif kind == "lso":
            opt = optimizers.LossScaleOptimizer(optimizers.SGD(0.1), initial_scale=1024.0)
        else:
            opt = optimizers.SGD(0.1, loss_scale_factor=64.0)
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
        results.append(model.get_weights())
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
