"""BackupAndRestore (Keras 3): fault-tolerant training. The model's weights, the optimizer's
state and the epoch counter are written to `backup_dir` (atomically: a temporary file,
fsync, rename); a later `fit` with the same callback restores them and resumes at the epoch
the backup was taken in. The files are fkeras's own (`latest.npz`, `training_metadata.json`),
not Keras's `latest.weights.h5`.
"""

import json
import os
import shutil
import tempfile

import numpy as np

from fkeras.callbacks.callback import Callback


def _atomic_write(path, write):
    """Writes `path` through write(fileobj) into a temporary file, fsyncs, renames."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


class BackupAndRestore(Callback):
    """Backs up the training state so an interrupted `fit` resumes where it stopped.

    Args:
        backup_dir: folder for the backup (created if missing).
        save_freq: "epoch" (at each epoch end), an int (every that many batches; the resumed
            fit restarts the epoch the backup was taken in), or False (only on interruption
            there is nothing to save: no backups).
        double_checkpoint: keep the previous backup as well (`*.bak`), used if the latest
            one cannot be read.
        delete_checkpoint: delete the backup when training finishes.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and save_freq is not False and not (
                isinstance(save_freq, int) and save_freq > 0):
            raise ValueError("Invalid value for argument `save_freq`. Received: "
                             f"save_freq={save_freq}. Expected either 'epoch' or an integer "
                             "value.")
        self.backup_dir = backup_dir
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._weights_path = os.path.join(backup_dir, "latest.npz")
        self._meta_path = os.path.join(backup_dir, "training_metadata.json")
        self._batches_seen = 0
        self._current_epoch = 0

    # ---- state ----
    def _state_arrays(self):
        arrays = {f"w{i}": np.asarray(w) for i, w in enumerate(self.model.get_weights())}
        opt = self.model.optimizer
        if opt is not None and getattr(opt, "built", False):
            for i, v in enumerate(opt.variables):
                arrays[f"o{i}"] = np.asarray(v.numpy())
        return arrays

    def _save(self, epoch):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for p in (self._weights_path, self._meta_path):
                if os.path.exists(p):
                    shutil.copyfile(p, p + ".bak")
        arrays = self._state_arrays()
        _atomic_write(self._weights_path, lambda f: np.savez(f, **arrays))
        meta = json.dumps({"epoch": int(epoch)}).encode()
        _atomic_write(self._meta_path, lambda f: f.write(meta))

    def _load(self, suffix=""):
        with open(self._meta_path + suffix) as f:
            epoch = int(json.load(f)["epoch"])
        with np.load(self._weights_path + suffix) as data:
            weights = [data[f"w{i}"] for i in range(sum(k.startswith("w") for k in data))]
            opt_state = [data[f"o{i}"] for i in range(sum(k.startswith("o") for k in data))]
        return epoch, weights, opt_state

    def on_train_begin(self, logs=None):
        if not os.path.exists(self._meta_path):
            return
        try:
            epoch, weights, opt_state = self._load()
        except (OSError, ValueError, KeyError):
            if not (self.double_checkpoint and os.path.exists(self._meta_path + ".bak")):
                raise
            epoch, weights, opt_state = self._load(".bak")
        self.model.set_weights(weights)
        opt = self.model.optimizer
        if opt_state and opt is not None:
            if not opt.built:
                opt.build(self.model.trainable_variables)
            opt.load_own_variables({str(i): a for i, a in enumerate(opt_state)})
        self.model._initial_epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int) and self.save_freq is not False:
            self._batches_seen += 1
            if self._batches_seen >= self.save_freq:
                self._batches_seen = 0
                self._save(self._current_epoch)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch + 1)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir)
