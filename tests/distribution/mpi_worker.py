"""One process of the data-parallel tests: `python mpi_worker.py SCENARIO OUTDIR`, run under
`mpiexec -n 2` or alone (the single-process reference). Each rank saves what it computed to
OUTDIR/<scenario>_rank<r>_of<n>.npz; faults are checked from the exit status and stderr.

Scenarios:
  train     an MLP, SGD, global batch 16 on 327 training rows (20 full steps, an uneven last
            batch of 7 rows), validation_split, evaluate and predict; writers named by rank.
  syncbn    BatchNormalization(synchronized=True) between two Dense layers, 20 SGD steps.
  localbn   the same with synchronized=False (per-rank statistics: must differ from one
            process).
  subclass  a subclassed Model (built on its first batch), rank 1 seeded differently: rank
            0's initial weights are broadcast, so both match one process.
  raise     rank 1 raises in a callback after the first epoch.
  kill      rank 1 is killed (SIGKILL) during the second epoch; rank 0 checkpoints each epoch.
  hang      rank 1 stops answering (sleeps) during the second epoch: rank 0's watchdog
            (FKERAS_DIST_TIMEOUT seconds) aborts the job.
  mismatch  rank 1 passes another batch size.
  mismatch_model  rank 1 builds a wider hidden layer.
"""

import os
import signal
import sys
import time

import numpy as np

import fkeras
from fkeras import layers

N_ROWS, BATCH = 364, 16  # training rows after validation_split=0.1: 327 = 20 * 16 + 7


def data(seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N_ROWS, 6)).astype("float32")
    y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype("float32")
    return x, y


def mlp(bn=None, width=8):
    inputs = fkeras.Input(shape=(6,))
    h = layers.Dense(width, activation="relu" if bn is None else None)(inputs)
    if bn is not None:
        h = layers.BatchNormalization(momentum=0.8, synchronized=bn)(h)
        h = layers.Activation("relu")(h)
    outputs = layers.Dense(1, activation="sigmoid")(h)
    model = fkeras.Model(inputs, outputs)
    model.compile(optimizer=fkeras.optimizers.SGD(learning_rate=0.1),
                  loss="binary_crossentropy", metrics=["accuracy"])
    return model


class TwoDense(fkeras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(8, activation="relu")
        self.out = layers.Dense(1, activation="sigmoid")

    def call(self, x, training=None):
        return self.out(self.hidden(x))


def writers(outdir, rank):
    cbs = [fkeras.callbacks.ModelCheckpoint(
               os.path.join(outdir, f"ckpt_rank{rank}.weights.h5"), save_weights_only=True),
           fkeras.callbacks.CSVLogger(os.path.join(outdir, f"log_rank{rank}.csv"))]
    try:
        cbs.append(fkeras.callbacks.TensorBoard(os.path.join(outdir, f"tb_rank{rank}")))
    except ImportError:
        pass
    return cbs


class _At(fkeras.callbacks.Callback):
    """Calls `action` on rank `rank` at the end of batch `batch` of epoch `epoch`."""

    def __init__(self, rank, epoch, batch, action):
        super().__init__()
        self.rank, self.epoch, self.batch, self.action = rank, epoch, batch, action
        self.current = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.current = epoch

    def on_train_batch_end(self, batch, logs=None):
        if fkeras.distribution.process_rank() == self.rank and (
                self.current, batch) == (self.epoch, self.batch):
            self.action()


def _raise():
    raise RuntimeError("rank 1 failed on purpose")


def main(scenario, outdir):
    fkeras.distribution.initialize()
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    rank, size = fkeras.distribution.process_rank(), fkeras.distribution.num_processes()
    fkeras.utils.set_random_seed(7)
    x, y = data()
    out = {}
    if scenario == "train":
        model = mlp()
        hist = model.fit(x, y, batch_size=BATCH, epochs=1, validation_split=0.1, verbose=2,
                         callbacks=writers(outdir, rank))
        out.update({f"hist_{k}": np.array(v) for k, v in hist.history.items()})
        out["evaluate"] = np.array(model.evaluate(x, y, batch_size=BATCH, verbose=0))
        out["predict"] = model.predict(x, batch_size=BATCH, verbose=0)
        out["steps"] = np.array(int(model.optimizer.iterations.numpy()))
    elif scenario in ("syncbn", "localbn"):
        model = mlp(bn=scenario == "syncbn")
        n = BATCH * 20  # 20 full steps
        model.fit(x[:n], y[:n], batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    elif scenario == "subclass":
        fkeras.utils.set_random_seed(7 + rank)
        model = TwoDense()
        model.compile(optimizer=fkeras.optimizers.SGD(learning_rate=0.1),
                      loss="binary_crossentropy")
        # No shuffle: one process builds the model after drawing the epoch's permutation.
        model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    elif scenario in ("raise", "kill", "hang"):
        model = mlp()
        action = {"raise": _raise, "kill": lambda: os.kill(os.getpid(), signal.SIGKILL),
                  "hang": lambda: time.sleep(600)}[scenario]
        cbs = [fkeras.callbacks.ModelCheckpoint(os.path.join(outdir, "ckpt.weights.h5"),
                                                save_weights_only=True),
               _At(1, 1, 3, action)]
        model.fit(x, y, batch_size=BATCH, epochs=4, verbose=0, callbacks=cbs)
    elif scenario == "mismatch":
        model = mlp()
        model.fit(x, y, batch_size=BATCH * (1 + rank), epochs=1, verbose=0)
    elif scenario == "mismatch_model":
        model = mlp(width=8 + rank)
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    for i, w in enumerate(model.weights):
        out[f"w{i}"] = np.asarray(w.numpy())
    np.savez(os.path.join(outdir, f"{scenario}_rank{rank}_of{size}.npz"), **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
