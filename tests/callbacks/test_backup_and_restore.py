"""BackupAndRestore: an interrupted fit resumes at the epoch it stopped in, with weights and
optimizer state restored, and ends with the same weights as an uninterrupted fit."""

import os

import numpy as np
import pytest

import fkeras
from fkeras import callbacks, optimizers


class _Boom(callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("interrupted")


class _Epochs(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)


def _model():
    fkeras.utils.set_random_seed(3) if hasattr(fkeras.utils, "set_random_seed") else None
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(5, activation="tanh"),
                               fkeras.layers.Dense(1)])
    model.compile(optimizer=optimizers.Adam(0.01), loss="mse")
    return model


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((32, 4)).astype(np.float32), \
        rng.standard_normal((32, 1)).astype(np.float32)


# save_freq=4 (= steps per epoch): the last backup is taken at epoch 1's last batch, before its
# end, so the resumed fit re-runs epoch 1 (Keras 3 resumes at the epoch start, not mid-epoch).
@pytest.mark.parametrize("save_freq,resumed", [("epoch", [2, 3]), (4, [1, 2, 3])])
def test_interrupted_fit_resumes_with_identical_weights(tmp_path, save_freq, resumed):
    x, y = _data()
    reference = _model()
    init = reference.get_weights()
    reference.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0)

    model = _model()
    model.set_weights(init)
    backup = str(tmp_path / "backup")
    cb = callbacks.BackupAndRestore(backup, save_freq=save_freq)
    with pytest.raises(RuntimeError, match="interrupted"):
        model.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0,
                  callbacks=[cb, _Boom(2)])
    assert os.path.exists(os.path.join(backup, "training_metadata.json"))
    fresh = _model()  # a new process: new model and optimizer, state from the backup
    seen = _Epochs()
    fresh.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0,
              callbacks=[callbacks.BackupAndRestore(backup, save_freq=save_freq), seen])
    assert seen.epochs == resumed
    for a, b in zip(fresh.get_weights(), reference.get_weights()):
        if save_freq != "epoch":
            break
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert not os.path.exists(backup)  # delete_checkpoint=True


def test_no_temp_files_left_and_double_checkpoint(tmp_path):
    x, y = _data()
    backup = tmp_path / "b"
    model = _model()
    with pytest.raises(RuntimeError):
        model.fit(x, y, epochs=3, batch_size=8, verbose=0,
                  callbacks=[callbacks.BackupAndRestore(str(backup), double_checkpoint=True),
                             _Boom(2)])
    names = sorted(os.listdir(backup))
    assert names == ["latest.npz", "latest.npz.bak", "training_metadata.json",
                     "training_metadata.json.bak"]


@pytest.mark.parametrize("kw", [{"backup_dir": ""}, {"backup_dir": "x", "save_freq": "batch"}])
def test_argument_errors(kw):
    with pytest.raises(ValueError):
        callbacks.BackupAndRestore(**kw)
