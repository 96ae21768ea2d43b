"""TensorBoard: event files in Keras 2/3's layout, written through the `tensorboard` package
(`pip install "fkeras[tensorboard]"`); TensorFlow is not needed.

Layout and tags (as Keras 3 writes them):
- `log_dir/train/events.out.tfevents.<time>.<host>.<pid>.<n>.v2`: `epoch_loss`,
  `epoch_<metric>` and `epoch_learning_rate` at step = epoch; with update_freq="batch" (or N)
  `batch_<name>` at the global batch step; the model config under tag `keras` (write_graph);
  weight histograms `<weight path>/histogram` every histogram_freq epochs.
- `log_dir/validation/...`: `epoch_loss`, `epoch_<metric>` at step = epoch, and
  `evaluation_<name>_vs_iterations` at step = the number of training batches seen.
Scalars are TF2 tensor summaries (plugin "scalars"), which TensorBoard and its
EventAccumulator read.
"""

import json
import os
import time

import numpy as np

from fkeras.callbacks.callback import Callback

_INSTALL = ('The TensorBoard callback needs the `tensorboard` package: '
            'pip install "fkeras[tensorboard]"')


def _tensorboard_modules():
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2
        from tensorboard.plugins.histogram.summary_v2 import histogram_pb
        from tensorboard.plugins.scalar.summary_v2 import scalar_pb
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as e:
        raise ImportError(f"{_INSTALL} ({e}).") from e
    return {"event_pb2": event_pb2, "summary_pb2": summary_pb2, "tensor_pb2": tensor_pb2,
            "histogram_pb": histogram_pb, "scalar_pb": scalar_pb,
            "EventFileWriter": EventFileWriter}


class _Writer:
    """One event file (created on first use)."""

    def __init__(self, tb, logdir):
        self._tb = tb
        self._logdir = logdir
        self._writer = None

    def _get(self):
        if self._writer is None:
            self._writer = self._tb["EventFileWriter"](self._logdir, filename_suffix=".v2")
        return self._writer

    def summary(self, summary, step):
        event = self._tb["event_pb2"].Event(wall_time=time.time(), step=int(step),
                                            summary=summary)
        self._get().add_event(event)

    def scalar(self, tag, value, step):
        self.summary(self._tb["scalar_pb"](tag, float(value)), step)

    def flush(self):
        if self._writer is not None:
            self._writer.flush()

    def close(self):
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class TensorBoard(Callback):
    """Writes TensorBoard logs.

    Args:
        log_dir: Defaults to "logs".
        histogram_freq: epochs between weight histograms (0: none).
        write_graph: write the model's config (the Keras graph view).
        write_images, profile_batch, embeddings_freq, embeddings_metadata: accepted for
            compatibility; not written.
        write_steps_per_second: log `steps_per_second` (train/).
        update_freq: "epoch", "batch", or an integer number of batches.

    Example:
    ```python
    model.fit(x, y, epochs=5, callbacks=[fkeras.callbacks.TensorBoard("logs")])
    # tensorboard --logdir logs
    ```
    """

    _fk_rank_zero_only = True  # DataParallel: kept on rank 0 only (CallbackList)

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        self._tb = _tensorboard_modules()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.profile_batch = profile_batch
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._train = _Writer(self._tb, os.path.join(self.log_dir, "train"))
        self._val = _Writer(self._tb, os.path.join(self.log_dir, "validation"))
        self._global_step = 0
        self._epoch_start = None
        self._epoch_steps = 0
        self._in_fit = False

    def on_train_begin(self, logs=None):
        self._global_step = 0
        self._in_fit = True
        if self.write_graph:
            self._write_model_config()

    def _write_model_config(self):
        try:
            config = json.dumps({"class_name": type(self.model).__name__,
                                 "config": self.model.get_config()}, default=str)
        except Exception:  # a model without a config (subclassed) has no graph view
            return
        pb = self._tb["summary_pb2"]
        tensor = self._tb["tensor_pb2"].TensorProto(dtype=7, string_val=[config.encode()])
        tensor.tensor_shape.SetInParent()
        metadata = pb.SummaryMetadata(
            plugin_data=pb.SummaryMetadata.PluginData(plugin_name="graph_keras_model",
                                                      content=b"1"))
        summary = pb.Summary(value=[pb.Summary.Value(tag="keras", tensor=tensor,
                                                     metadata=metadata)])
        self._train.summary(summary, 0)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.time()
        self._epoch_steps = 0

    def on_train_batch_end(self, batch, logs=None):
        self._global_step += 1
        self._epoch_steps += 1
        if self.update_freq != "epoch" and self._global_step % int(self.update_freq) == 0:
            for name, value in (logs or {}).items():
                if np.ndim(value) == 0:
                    self._train.scalar(f"batch_{name}", value, self._global_step)

    def on_test_end(self, logs=None):
        if self._in_fit:
            for name, value in (logs or {}).items():
                self._val.scalar(f"evaluation_{name}_vs_iterations", value, self._global_step)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and "learning_rate" not in train:
            try:
                train["learning_rate"] = float(optimizer.learning_rate)
            except (TypeError, ValueError):
                pass
        if self.write_steps_per_second and self._epoch_start is not None:
            elapsed = max(time.time() - self._epoch_start, 1e-9)
            train["steps_per_second"] = self._epoch_steps / elapsed
        for name, value in train.items():
            if np.ndim(value) == 0:
                self._train.scalar(f"epoch_{name}", value, epoch)
        for name, value in val.items():
            if np.ndim(value) == 0:
                self._val.scalar(f"epoch_{name}", value, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            for w in self.model.weights:
                data = np.asarray(w.numpy(), dtype=np.float64)
                self._train.summary(self._tb["histogram_pb"](f"{w.path}/histogram", data),
                                    epoch)
        self._train.flush()
        self._val.flush()

    def on_train_end(self, logs=None):
        self._in_fit = False
        self._train.close()
        self._val.close()
