"""Callbacks: hook order, History, EarlyStopping, ModelCheckpoint (atomic under kill -9),
CSVLogger, LearningRateScheduler, ReduceLROnPlateau, TerminateOnNaN, LambdaCallback and
TensorBoard event files read back by tensorboard's EventAccumulator."""

import csv
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import fkeras
from fkeras import callbacks, layers


def small_model(lr=0.05):
    fkeras.utils.set_random_seed(0)
    inp = fkeras.Input((4,))
    out = layers.Dense(1, activation="sigmoid")(layers.Dense(8, activation="relu")(inp))
    model = fkeras.Model(inp, out)
    model.compile(fkeras.optimizers.Adam(lr), "binary_crossentropy", metrics=["accuracy"])
    return model


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype("float32")
    return x, (x.sum(1, keepdims=True) > 0).astype("float32")


class Recorder(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def __getattribute__(self, name):
        if name.startswith("on_") and name not in ("on_batch_begin", "on_batch_end"):
            def hook(*args):
                logs = args[-1]
                self.events.append((name,) + tuple(args[:-1]) + (
                    tuple(sorted(logs)) if logs else (),))
            return hook
        return super().__getattribute__(name)


def test_hook_order():
    model = small_model()
    x, y = data(4)
    rec = Recorder()
    rec.on_train_batch_end = rec.on_train_batch_end  # instance hooks count as overrides
    for hook in ("on_train_batch_begin", "on_test_batch_begin", "on_test_batch_end"):
        setattr(rec, hook, getattr(rec, hook))
    model.fit(x, y, batch_size=2, epochs=2, validation_data=(x[:2], y[:2]), verbose=0,
              callbacks=[rec])
    train_keys = ("accuracy", "loss")
    epoch_keys = ("accuracy", "loss", "val_accuracy", "val_loss")
    per_epoch = lambda e: [  # noqa: E731
        ("on_epoch_begin", e, ()),
        ("on_train_batch_begin", 0, ()), ("on_train_batch_end", 0, train_keys),
        ("on_train_batch_begin", 1, ()), ("on_train_batch_end", 1, train_keys),
        ("on_test_begin", ()),
        ("on_test_batch_begin", 0, ()), ("on_test_batch_end", 0, train_keys),
        ("on_test_end", train_keys),
        ("on_epoch_end", e, epoch_keys)]
    expected = [("on_train_begin", ())] + per_epoch(0) + per_epoch(1) + [
        ("on_train_end", epoch_keys)]
    assert rec.events == expected
    assert rec.params == {"verbose": 0, "epochs": 2, "steps": 2} and rec.model is model


def test_batch_logs_are_running_averages_and_epoch_logs_weighted():
    model = small_model()
    x, y = data(30)
    seen = []
    cb = callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(logs["loss"]))
    hist = model.fit(x, y, batch_size=20, epochs=1, shuffle=False, verbose=0, callbacks=[cb])
    assert np.isclose(seen[-1], hist.history["loss"][0])


def test_early_stopping_restores_best_weights(capsys):
    model = small_model(lr=0.05)
    x, y = data()
    losses = iter([1.0, 0.5, 0.7, 0.8, 0.9, 0.95])
    weights = []

    class FakeVal(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(losses)
            weights.append(self.model.get_weights())

    stop = callbacks.EarlyStopping(patience=2, restore_best_weights=True, verbose=1)
    hist = model.fit(x, y, epochs=6, verbose=0, callbacks=[FakeVal(), stop])
    assert hist.epoch == [0, 1, 2, 3] and stop.stopped_epoch == 3 and stop.best_epoch == 1
    for a, b in zip(model.get_weights(), weights[1]):
        np.testing.assert_array_equal(a, b)
    out = capsys.readouterr().out
    assert "Epoch 4: early stopping" in out
    assert "Restoring model weights from the end of the best epoch: 2." in out
    with pytest.raises(ValueError, match="automatically determine"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.EarlyStopping(monitor="foo")])


def test_early_stopping_accuracy_maximizes():
    stop = callbacks.EarlyStopping(monitor="val_accuracy", patience=0)
    model = small_model()
    x, y = data()
    model.fit(x, y, epochs=1, verbose=0, validation_data=(x, y), callbacks=[stop])
    assert stop.monitor_op(2, 1)  # greater is better


def test_model_checkpoint_best_only(tmp_path):
    pytest.importorskip("h5py")
    model = small_model()
    x, y = data()
    vals = iter([0.5, 0.7, 0.4])

    class FakeVal(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(vals)

    path = str(tmp_path / "ck_{epoch:02d}_{val_loss:.2f}.weights.h5")
    ck = callbacks.ModelCheckpoint(path, save_best_only=True, save_weights_only=True)
    model.fit(x, y, epochs=3, verbose=0, callbacks=[FakeVal(), ck])
    assert sorted(os.listdir(tmp_path)) == ["ck_01_0.50.weights.h5", "ck_03_0.40.weights.h5"]
    model.load_weights(tmp_path / "ck_03_0.40.weights.h5")
    with pytest.raises(ValueError, match=r"must end in `.weights.h5`"):
        callbacks.ModelCheckpoint(tmp_path / "w.h5", save_weights_only=True)


CHILD = """
import os, sys, time
import numpy as np
import fkeras
from fkeras import layers
from fkeras.saving import weights_h5

path, marker = sys.argv[1], sys.argv[2]
original = weights_h5.save_weights
calls = []

def interrupted_save(model, filepath, overwrite=True):
    calls.append(filepath)
    if len(calls) == 1:
        return original(model, filepath, overwrite)
    with open(filepath, "wb") as f:  # half a file, then the process is killed
        f.write(b"\\x89HDF\\r\\n\\x1a\\n" + b"\\0" * 64)
        f.flush()
        os.fsync(f.fileno())
    open(marker, "w").close()
    time.sleep(120)

weights_h5.save_weights = interrupted_save
inp = fkeras.Input((4,))
model = fkeras.Model(inp, layers.Dense(3)(inp))
model.compile("sgd", "mse")
ck = fkeras.callbacks.ModelCheckpoint(path, save_weights_only=True)
model.fit(np.ones((8, 4)), np.ones((8, 3)), epochs=3, verbose=0, callbacks=[ck])
"""


CHILD_FULL = """
import os, sys, time
import numpy as np
import fkeras
from fkeras import layers
from fkeras.saving import saving_lib

path, marker = sys.argv[1], sys.argv[2]
original = saving_lib.write_archive
calls = []

def interrupted_write(tmp, *args):
    calls.append(tmp)
    if len(calls) == 1:
        return original(tmp, *args)
    with open(tmp, "wb") as f:  # half an archive, then the process is killed
        f.write(b"PK\\x03\\x04" + b"\\0" * 64)
        f.flush()
        os.fsync(f.fileno())
    open(marker, "w").close()
    time.sleep(120)

saving_lib.write_archive = interrupted_write
inp = fkeras.Input((4,))
model = fkeras.Model(inp, layers.Dense(3)(inp))
model.compile("sgd", "mse")
ck = fkeras.callbacks.ModelCheckpoint(path)
model.fit(np.ones((8, 4)), np.ones((8, 3)), epochs=3, verbose=0, callbacks=[ck])
"""


def _kill_during_second_save(tmp_path, child, path):
    marker = tmp_path / "writing"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(child))
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(marker)])
    try:
        deadline = time.time() + 60
        while not marker.exists():
            assert proc.poll() is None, "the child exited early"
            assert time.time() < deadline, "the child never reached the second save"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_checkpoint_survives_kill_9(tmp_path):
    pytest.importorskip("h5py")
    path = tmp_path / "ck.weights.h5"
    _kill_during_second_save(tmp_path, CHILD, path)
    inp = fkeras.Input((4,))
    model = fkeras.Model(inp, layers.Dense(3)(inp))
    model.load_weights(path)  # the first checkpoint, intact
    assert all(np.isfinite(w).all() for w in model.get_weights())


def test_full_model_checkpoint_survives_kill_9(tmp_path):
    pytest.importorskip("h5py")
    path = tmp_path / "ck.keras"
    _kill_during_second_save(tmp_path, CHILD_FULL, path)
    model = fkeras.models.load_model(path)  # the first checkpoint, intact
    assert int(model.optimizer.iterations) == 1  # saved after epoch 1 (one batch)
    assert all(np.isfinite(w).all() for w in model.get_weights())


def test_csv_logger(tmp_path):
    model = small_model()
    x, y = data()
    path = tmp_path / "log.csv"
    model.fit(x, y, epochs=2, validation_data=(x, y), verbose=0,
              callbacks=[callbacks.CSVLogger(path)])
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "accuracy", "loss", "val_accuracy", "val_loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1"]
    hist_loss = float(rows[2][2])
    model.fit(x, y, epochs=1, verbose=0, callbacks=[callbacks.CSVLogger(path, append=True)])
    rows2 = list(csv.reader(open(path)))
    assert len(rows2) == 4 and rows2[3][0] == "0" and hist_loss > 0


def test_learning_rate_scheduler():
    model = small_model()
    x, y = data()
    sched = callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    hist = model.fit(x, y, epochs=3, verbose=0, callbacks=[sched])
    np.testing.assert_allclose(hist.history["learning_rate"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    # Keras 2 scripts read "lr": the same values under both keys, in history only.
    assert hist.history["lr"] == hist.history["learning_rate"]
    bad = callbacks.LearningRateScheduler(lambda epoch: "fast")
    with pytest.raises(ValueError, match="should be a float"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[bad])


def test_reduce_lr_on_plateau_with_cooldown():
    model = small_model(lr=1.0)
    x, y = data()
    vals = iter([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5])
    lrs = []

    class FakeVal(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(vals)

    class Spy(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            lrs.append(round(logs["learning_rate"], 6))

    plateau = callbacks.ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_lr=0.2)
    model.fit(x, y, epochs=8, verbose=0, callbacks=[FakeVal(), plateau, Spy()])
    # Keras 3 decrements the cooldown before testing it: epoch 1 reduces to 0.5, epoch 2 is
    # in cooldown, epoch 3 reduces to 0.25, epoch 4 cooldown, epoch 5 reduces to
    # max(0.125, min_lr=0.2); the rate is logged before the reduction of its epoch.
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2]
    np.testing.assert_allclose(model.history.history["lr"], lrs, rtol=1e-6)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        callbacks.ReduceLROnPlateau(factor=1.5)


def test_history_has_no_lr_key_without_a_learning_rate_callback():
    model = small_model()
    x, y = data()
    hist = model.fit(x, y, epochs=1, verbose=0)
    assert "lr" not in hist.history and "learning_rate" not in hist.history


def test_terminate_on_nan(capsys):
    model = small_model()
    x, y = data()
    nan_at = callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: logs.update(loss=float("nan")) if b == 1 else None)
    batches = []
    count = callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: batches.append(b))
    model.fit(x, y, batch_size=4, epochs=3, verbose=0,
              callbacks=[nan_at, callbacks.TerminateOnNaN(), count])
    assert batches == [0, 1] and "Batch 1: Invalid loss" in capsys.readouterr().out


def test_lambda_callback_and_stop_training():
    model = small_model()
    x, y = data()
    events = []
    cb = callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("begin"),
        on_epoch_end=lambda epoch, logs: setattr(model, "stop_training", epoch == 1),
        on_train_end=lambda logs: events.append("end"))
    hist = model.fit(x, y, epochs=5, verbose=0, callbacks=[cb])
    assert hist.epoch == [0, 1] and events == ["begin", "end"]


def test_tensorboard_without_the_package(monkeypatch):
    for name in [m for m in sys.modules if m == "tensorboard" or m.startswith("tensorboard.")]:
        monkeypatch.setitem(sys.modules, name, None)  # cached submodules would still import
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(ImportError, match='pip install "fkeras\\[tensorboard\\]"'):
        callbacks.TensorBoard("logs")


def test_tensorboard_event_files(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    model = small_model()
    x, y = data()
    hist = model.fit(x, y, epochs=3, batch_size=10, validation_data=(x, y), verbose=0,
                     callbacks=[callbacks.TensorBoard(tmp_path, histogram_freq=1)])
    assert sorted(os.listdir(tmp_path)) == ["train", "validation"]
    assert os.listdir(tmp_path / "train")[0].startswith("events.out.tfevents.")

    def scalars(sub):
        acc = EventAccumulator(str(tmp_path / sub), size_guidance={"tensors": 0})
        acc.Reload()
        return {tag: [(e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
                      for e in acc.Tensors(tag)] if tag.startswith(("epoch_", "evaluation_"))
                else None for tag in acc.Tags()["tensors"]}

    train, val = scalars("train"), scalars("validation")
    for tag, key in [("epoch_loss", "loss"), ("epoch_accuracy", "accuracy")]:
        assert [s for s, _ in train[tag]] == [0, 1, 2]
        np.testing.assert_allclose([v for _, v in train[tag]], hist.history[key], rtol=1e-6)
        np.testing.assert_allclose([v for _, v in val[tag]], hist.history["val_" + key],
                                   rtol=1e-6)
    np.testing.assert_allclose([v for _, v in train["epoch_learning_rate"]], 0.05, rtol=1e-6)
    assert [s for s, _ in val["evaluation_loss_vs_iterations"]] == [4, 8, 12]
    assert "keras" in train and any(t.endswith("/histogram") for t in train)
