"""Placement on a non-host device, proved on the host emulation of `_C_cuda`
(tests/cuda/emulated_cuda.py): which op runs where, what moves when, where state lives.

The emulated kernels are the cpu kernels, so results equal the cpu run bit for bit except
where the device's own reductions (array_sum: float64 accumulation) round differently."""

import numpy as np
import pytest

import fkeras as keras
from fkeras.ops import device_dispatch

import emulated_cuda
import placement_models as pm
from emulated_cuda import EmulatedArray


@pytest.fixture
def cuda(monkeypatch):
    emulated_cuda.install(monkeypatch)
    device_dispatch.reset_host_op_calls()
    yield keras.backend.get_device("cuda")


def _close(a, b, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-7)


@pytest.mark.parametrize("name", sorted(pm.BUILDERS))
def test_fit_evaluate_predict_equal_the_cpu(cuda, name):
    ref = pm.fit_on("cpu", name)
    got = pm.fit_on("cuda", name)
    same = np.testing.assert_array_equal if name not in pm.DEVICE_REDUCTIONS else _close
    for a, b in zip(ref[0].get_weights(), got[0].get_weights()):
        assert type(b) is np.ndarray
        same(a, b)
    for key in ref[1]:
        _close(ref[1][key], got[1][key])
    _close(ref[2], got[2])
    pm.assert_same_predictions(ref[0], ref[3], got[3], name)


@pytest.mark.parametrize("name", pm.NO_HOST_OPS)
def test_training_step_runs_no_op_on_the_host(cuda, name):
    pm.fit_on("cuda", name, epochs=1)
    assert device_dispatch.host_op_calls() == {}


@pytest.mark.parametrize("optimizer", [
    "sgd", "adam", "rmsprop", "adagrad", "adamax", "nadam", "adadelta", "lion",
    lambda: keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True, clipnorm=0.5),
    lambda: keras.optimizers.AdamW(weight_decay=0.01, global_clipnorm=1.0),
    lambda: keras.optimizers.Adam(use_ema=True, ema_overwrite_frequency=3),
    lambda: keras.optimizers.RMSprop(clipvalue=0.1, gradient_accumulation_steps=2),
    lambda: keras.optimizers.Adam(loss_scale_factor=128.0),
], ids=lambda o: o if isinstance(o, str) else None)
def test_optimizers_update_the_device_buffers(cuda, optimizer):
    ref = pm.fit_on("cpu", "mlp", epochs=1, optimizer=optimizer)[0]
    model = pm.fit_on("cuda", "mlp", epochs=1, optimizer=optimizer)[0]
    for a, b in zip(ref.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
    opt = model.optimizer
    for g in opt._groups:
        assert isinstance(g.param, EmulatedArray) and isinstance(g.grad, EmulatedArray)
        assert all(isinstance(s, EmulatedArray) for s in g.slots.values())
    for a, b in zip(ref.optimizer.variables, opt.variables):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_each_batch_moves_once(cuda):
    x, y = pm.data("cnn_bn")
    with keras.device("cuda"):
        model = pm.build("cnn_bn")
        model.fit(x[:16], y[:16], batch_size=16, epochs=1, verbose=0)  # builds, creates state
        EmulatedArray.uploads = EmulatedArray.downloads = EmulatedArray.pinned_calls = 0
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    steps = len(x) // 16
    assert EmulatedArray.uploads == 2 * steps  # x and y of each batch
    assert EmulatedArray.pinned_calls == steps  # together, through the pinned staging buffer
    assert EmulatedArray.downloads == 2 * steps  # the predictions and the loss, for metrics


def test_state_lives_on_the_device(cuda):
    model = pm.fit_on("cuda", "cnn_bn", epochs=1)[0]
    for v in model.variables:
        assert isinstance(v._value, EmulatedArray), v.path
        assert v.device == "cuda"
    weights = model.get_weights()
    assert all(type(w) is np.ndarray for w in weights)
    model.set_weights([w * 0 + 1 for w in weights])
    assert all(np.all(w == 1) for w in model.get_weights())
    assert all(isinstance(v._value, EmulatedArray) for v in model.variables)


def test_save_on_device_load_anywhere(cuda, tmp_path):
    x, _ = pm.data("lstm")
    model = pm.fit_on("cuda", "lstm", epochs=1)[0]
    with keras.device("cuda"):
        expected = model.predict(x, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    on_cpu = keras.models.load_model(path)
    np.testing.assert_array_equal(on_cpu.predict(x, verbose=0), expected)
    assert all(type(v._value) is np.ndarray for v in on_cpu.variables)
    with keras.device("cuda"):
        on_gpu = keras.models.load_model(path)
        np.testing.assert_array_equal(on_gpu.predict(x, verbose=0), expected)
    assert all(isinstance(v._value, EmulatedArray) for v in on_gpu.variables)


def _eager_cases():
    o = keras.ops
    return {
        "dense_relu": lambda x, w: o.relu(o.matmul(x, w)),
        "softmax_last": lambda x, w: o.softmax(o.matmul(x, w)),
        "softmax_axis0_host": lambda x, w: o.softmax(o.matmul(x, w), axis=0),
        "arith_host": lambda x, w: o.sum(o.matmul(x * 2.0 - 1.0, w) ** 2, axis=1),
        "concat_slice_host": lambda x, w: o.concatenate([o.matmul(x, w)[1:], x[:2, :2]], 0),
        "sparse_ce": lambda x, w: keras.losses.sparse_categorical_crossentropy(
            np.array([0, 1, 1, 0]), o.matmul(x, w), from_logits=True),
        "reshape": lambda x, w: o.reshape(o.matmul(x, w), (2, 4)),
    }


@pytest.mark.parametrize("case", sorted(_eager_cases()))
def test_eager_values_and_gradients_equal_the_cpu(cuda, case):
    fn = _eager_cases()[case]
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=(4, 3)).astype(np.float32)
    w0 = rng.normal(size=(3, 2)).astype(np.float32)
    out = {}
    for device in ("cpu", "cuda"):
        with keras.device(device):
            x = keras.ops.convert_to_tensor(x0)
            w = keras.Variable(w0)
            with keras.GradientTape() as tape:
                tape.watch(x)
                y = fn(x, w)
                loss = keras.ops.sum(y * y)
            gx, gw = tape.gradient(loss, [x, w])
            out[device] = (y.numpy(), gx.numpy(), gw.numpy(), y.device)
    for a, b in zip(out["cpu"][:3], out["cuda"][:3]):
        _close(a, b)
    assert out["cuda"][3] == "cuda:0" and out["cpu"][3] == "cpu"


def test_host_tensor_keeps_its_gradient_through_the_upload(cuda):
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 5
    x = keras.ops.convert_to_tensor(x0)  # created on the host
    with keras.device("cuda"):
        w = keras.Variable(np.ones((3, 2), np.float32))
        with keras.GradientTape() as tape:
            tape.watch(x)
            y = keras.ops.sum(keras.ops.matmul(x, w))
        gx = tape.gradient(y, x)
    assert type(gx._value) is np.ndarray  # the host source gets a host gradient
    np.testing.assert_array_equal(gx.numpy(), np.full((2, 3), 2.0, np.float32))


@pytest.mark.parametrize("update, expected", [
    (lambda v: v.assign(np.full((2, 2), 3.0)), 3.0),
    (lambda v: v.assign_add(np.ones((2, 2))), 2.0),
    (lambda v: v.assign_sub(np.float32(0.5)), 0.5),
    (lambda v: v.assign(keras.ops.convert_to_tensor(np.full((2, 2), 4.0))), 4.0),
])
def test_variable_updates_on_the_device(cuda, update, expected):
    with keras.device("cuda"):
        v = keras.Variable(np.ones((2, 2), np.float32))
        buf = v._value
        update(v)
    assert v._value is buf and isinstance(buf, EmulatedArray)
    np.testing.assert_array_equal(v.numpy(), np.full((2, 2), expected, np.float32))
    assert "value=" in repr(v)


def test_scalar_variables_on_the_device(cuda):
    with keras.device("cuda"):
        v = keras.Variable(0.5)
        v.assign(2.0)
        v.assign_add(1.0)
        steps = keras.Variable(0, dtype="int32")
        steps.assign(7)
        steps.assign_add(2)
    assert isinstance(v._value, EmulatedArray) and v._value.shape == ()
    assert float(v) == 3.0 and int(steps) == 9 and steps.dtype == "int32"


def test_assign_add_and_sub_broadcast_on_the_device(cuda):
    with keras.device("cuda"):
        v = keras.Variable(np.ones((2, 3), np.float32))
        buf = v._value
        EmulatedArray.downloads = 0
        v.assign_add(np.arange(3, dtype=np.float32))  # broadcast over the rows
        v.assign_sub(keras.ops.convert_to_tensor(np.full((2, 1), 0.5, np.float32)))
    assert v._value is buf and EmulatedArray.downloads == 0  # computed on the device
    np.testing.assert_array_equal(v.numpy(), np.ones((2, 3)) + np.arange(3) - 0.5)


def test_custom_train_step_on_the_device(cuda):
    class Custom(keras.Model):
        def train_step(self, data):
            x, y = data
            with keras.GradientTape() as tape:
                loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            return {"loss": loss}

    x, y = pm.data("mlp")
    results = []
    for device in ("cpu", "cuda"):
        with keras.device(device):
            keras.utils.set_random_seed(3)
            inp = keras.Input((20,))
            model = Custom(inp, keras.layers.Dense(10)(keras.layers.Dense(16, "relu")(inp)))
            model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
            results.append(model.get_weights())
    for a, b in zip(*results):
        _close(a, b)


def test_emulated_buffers_refuse_numpy():
    a = EmulatedArray.from_host(np.arange(6, dtype=np.float32).reshape(2, 3))
    with pytest.raises(TypeError, match="GPU memory"):
        np.asarray(a)
    v = a[1:]
    v[...] = 7.0
    assert v.block_ptr == a.block_ptr and a.to_host()[1].tolist() == [7.0] * 3
    assert a.reshape(-1).shape == (6,) and a[0].shape == (3,)


def test_default_device_setting(cuda):
    keras.config.set_device("cuda")
    try:
        t = keras.ops.convert_to_tensor(np.ones(3, np.float32))
        assert t.device == "cuda:0" and keras.config.device() == "cuda"
        got = pm.fit_on("cuda", "mlp", epochs=1)[0]
    finally:
        keras.config.set_device("cpu")
    ref = pm.fit_on("cpu", "mlp", epochs=1)[0]
    for a, b in zip(ref.get_weights(), got.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert isinstance(got.variables[0]._value, EmulatedArray)
    assert keras.ops.convert_to_tensor(np.ones(3)).device == "cpu"


def test_main_job_runs_on_the_device(cuda, capsys):
    from fkeras.examples import digits

    args = ["--epochs", "1", "--logdir", "", "--verbose", "0"]
    ref = digits.main(args)
    got = digits.main(args + ["--device", "cuda"])
    assert got["accuracy"] == ref["accuracy"]
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=1e-6)
    assert device_dispatch.host_op_calls() == {}


@pytest.mark.parametrize("value, expected", [("high", "high"), ("medium", "high"),
                                             ("highest", "highest")])
def test_matmul_precision_reaches_the_device_module(monkeypatch, value, expected):
    mod = emulated_cuda.make_module()
    calls = []
    mod.set_matmul_precision = calls.append
    monkeypatch.setattr(keras.config, "_MATMUL_PRECISION", ["highest"])
    from fkeras import _native

    monkeypatch.setattr(_native, "_C_cuda", mod)
    keras.config.set_matmul_precision(value)
    assert keras.config.matmul_precision() == expected and calls == [expected]
    with pytest.raises(ValueError, match="precision must be"):
        keras.config.set_matmul_precision("low")


def test_data_parallel_on_the_device_is_refused(cuda, monkeypatch):
    from fkeras.distribution import _state as dist_state
    from fkeras.trainers import placement

    monkeypatch.setattr(dist_state, "COMM", object())  # what initialize() sets under mpiexec
    assert placement.step_device() is None  # the cpu: DataParallel as before
    with keras.device("cuda"):
        with pytest.raises(RuntimeError, match="DataParallel training over MPI runs on the cpu"):
            placement.step_device()


def test_direct_model_calls_on_the_device(cuda):
    x, _ = pm.data("cnn_bn")
    ref = pm.build("cnn_bn")
    expected = [np.asarray(ref(x[:1])), np.asarray(ref(x[:4], training=True))]
    with keras.device("cuda"):
        model = pm.build("cnn_bn")
        got = [model(x[:1]), model(x[:1]), model(x[:4], training=True)]
        dense = keras.layers.Dense(3, kernel_initializer="ones")
        ints = dense(keras.ops.convert_to_tensor(np.arange(6).reshape(2, 3)))  # int -> float
    for t in got:
        assert isinstance(t, keras.Tensor) and t.device == "cuda:0"
    np.testing.assert_array_equal(np.asarray(got[1]), expected[0])
    np.testing.assert_array_equal(np.asarray(got[2]), expected[1])
    np.testing.assert_array_equal(ints.numpy(), [[3.0] * 3, [12.0] * 3])
    assert device_dispatch.host_op_calls() == {}


def test_without_metrics_only_the_loss_comes_back(cuda):
    x, y = pm.data("mlp")
    with keras.device("cuda"):
        model = pm.build("mlp")
        model.compile(optimizer="adam",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x[:16], y[:16], batch_size=16, epochs=1, verbose=0)
        EmulatedArray.downloads = 0
        history = model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    assert EmulatedArray.downloads == len(x) // 16 and np.isfinite(history.history["loss"][0])
