"""Trainer: compile, the train/test/predict steps and the *_on_batch methods (mixed into
Model). The epoch loops of fit/evaluate/predict are in fkeras/trainers/loops.py.

The built-in steps take flat lists of arrays (model input / output order, checked once per
fit): `train_step(data)` / `test_step(data)` / `predict_step(data)` may be overridden with
Keras's signatures, and the loops then call the override with batches in the user's
structure.
"""

import warnings

import numpy as np

from fkeras import optimizers
from fkeras.backend import devices as _devices
from fkeras.distribution import _state as _dp_state
from fkeras.distribution import data_parallel as _dp
from fkeras.engine.tape import GradientTape
from fkeras.engine import tensor as _tensor_mode
from fkeras.engine.tensor import array_mode_method, builtin_method
from fkeras.metrics.metric import Mean, Metric
from fkeras.trainers import arg_checks
from fkeras.trainers import data_adapter as da
from fkeras.trainers import compute_loss_step as cls_step
from fkeras.trainers import loops
from fkeras.trainers import placement
from fkeras.trainers.compile_loss import CompileLoss
from fkeras.trainers.compile_metrics import CompileMetrics
from fkeras.trainers.logs import flatten_metrics_in_order, pythonify_logs
from fkeras.trainers.step_state import declares_training, get_state
from fkeras.utils import nest


_OWN_METRIC_ATTRS = ("_loss_tracker", "compiled_metrics")


class Trainer:
    """Training and evaluation API (Keras 3): compile, fit, evaluate, predict, ..."""

    compiled = False
    run_eagerly = False
    jit_compile = False
    steps_per_execution = 1
    optimizer = None
    compiled_loss = None
    compiled_metrics = None
    stop_training = False
    history = None

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Configures the model for training.

        Args:
            optimizer: name or Optimizer instance. Defaults to "rmsprop".
            loss: a loss (name, function or Loss) for every output, a list with one per
                output, or a dict keyed by output name.
            loss_weights: list or dict of scalar weights per output.
            metrics: list of metrics for every output, list of lists, or dict by output.
            weighted_metrics: metrics that receive the sample weights.
            run_eagerly: accepted and stored (fkeras always runs eagerly).
            steps_per_execution: int >= 1. As in Keras 3, fit/evaluate/predict call the
                batch-level callbacks once per `steps_per_execution` batches (begin with
                the first batch's index, end with the last one's); the steps themselves
                run one batch at a time.
            jit_compile: True, False or "auto" (resolved to False, as Keras 3 does on the
                torch backend); stored as `model.jit_compile`. fkeras has no compiler: its
                steps already run fused native kernels, so True changes nothing.
            auto_scale_loss: accepted and stored; fkeras computes in float32, so no loss
                scaling is needed (Keras only scales under a mixed_float16 policy).

        Example:
        ```python
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
        ```
        """
        if not isinstance(steps_per_execution, int) or isinstance(
                steps_per_execution, bool) or steps_per_execution < 1:
            raise ValueError("`steps_per_execution` must be a positive integer. Received: "
                             f"steps_per_execution={steps_per_execution}")
        if jit_compile not in (True, False, "auto"):
            raise ValueError("`jit_compile` must be True, False or 'auto'. Received: "
                             f"jit_compile={jit_compile}")
        if jit_compile == "auto" or run_eagerly:
            if jit_compile is True:
                warnings.warn("If `run_eagerly` is True, then `jit_compile` cannot also be "
                              "True. Disabling `jit_compile`.", stacklevel=2)
            jit_compile = False
        self.optimizer = optimizers.get(optimizer)
        self.run_eagerly = bool(run_eagerly)
        self.jit_compile = jit_compile
        self.steps_per_execution = steps_per_execution
        self.auto_scale_loss = bool(auto_scale_loss)
        names = self._fk_output_names()
        self.loss = loss
        dict_outputs = isinstance(getattr(self, "_outputs_structure", None), dict)
        self.compiled_loss = None if loss is None else CompileLoss(loss, loss_weights, names,
                                                                   dict_outputs)
        self.compiled_metrics = CompileMetrics(metrics, weighted_metrics, names)
        self._loss_tracker = Mean(name="loss")
        if self.compiled_loss is not None:
            self.compiled_loss.model_tracker = self._loss_tracker
        self._compile_config = {"optimizer": optimizer, "loss": loss,
                                "loss_weights": loss_weights, "metrics": metrics,
                                "weighted_metrics": weighted_metrics,
                                "run_eagerly": self.run_eagerly,
                                "steps_per_execution": steps_per_execution,
                                "jit_compile": jit_compile}
        self.compiled = True
        self.stop_training = False
        self.__dict__.pop("_fk_step_state", None)

    def get_compile_config(self):
        """The arguments `compile` was called with, serialized as Keras 3 writes them in a
        `.keras` file's "compile_config" ({} before `compile`). A model whose `compile`
        takes other arguments overrides this and `compile_from_config`."""
        if not getattr(self, "compiled", False) or not hasattr(self, "_compile_config"):
            return {}
        from fkeras.saving.saving_lib import compile_config

        return compile_config(self)

    def compile_from_config(self, config):
        """Compiles the model from a saved "compile_config" (called by `load_model`; the
        custom objects passed to it are in scope). As Keras 3: a model that overrides
        `compile` but not this method is left uncompiled, with a warning."""
        if type(self).compile is not Trainer.compile:
            warnings.warn(
                "`compile()` was not called as part of model loading because the model's "
                "`compile()` method is custom. All subclassed Models that have `compile()` "
                "overridden should also override `get_compile_config()` and "
                "`compile_from_config(config)`. Alternatively, you can call `compile()` "
                "manually after loading.", stacklevel=2)
            return
        from fkeras.saving.saving_lib import compile_from_config

        self.compile(**compile_from_config(config))
        if self.built and self.optimizer is not None:
            from fkeras.trainers.step_state import get_state

            self.optimizer.build(get_state(self).variables)

    def _fk_output_names(self):
        try:
            return list(self.output_names)
        except (AttributeError, TypeError):
            return None

    def _fk_assert_compiled(self):
        if not self.compiled or self.optimizer is None:
            raise ValueError("You must call `compile()` before using the model.")

    def _fk_assert_loss(self):
        self._fk_assert_compiled()

    def _fk_custom(self, name):
        if getattr(type(self), name) is not getattr(Trainer, name):
            return True
        # An overridden compute_loss runs through Keras's default steps (compute_loss_step).
        return name in ("train_step", "test_step") and cls_step.overrides_compute_loss(self)

    # ---- metrics ----
    @property
    def metrics(self):
        """Keras 3's order: the loss tracker, the compiled-metrics container (when `metrics`
        or `weighted_metrics` were given), the per-output loss trackers (after the first
        step, when several outputs have a loss), then the metrics set as attributes of the
        model."""
        out = []
        if self.compiled:
            out.append(self._loss_tracker)
            cm = self.compiled_metrics
            if cm._metrics_spec or cm._weighted_spec:
                out.append(cm)
            if self.compiled_loss is not None and self.compiled_loss.built:
                out.extend(self.compiled_loss.metrics)
        attrs = self.__dict__
        out.extend(m for name, m in attrs.get("_fk_metric_attrs", {}).items()
                   if attrs.get(name) is m)
        return out

    def __setattr__(self, name, value):
        # Metrics set as attributes join `metrics` (Keras 3 tracks them the same way).
        if isinstance(value, Metric) and name not in _OWN_METRIC_ATTRS:
            self.__dict__.setdefault("_fk_metric_attrs", {})[name] = value
        super().__setattr__(name, value)

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self):
        """{name: value} of every metric (the compiled metrics' dict inlined), as Python
        floats (lists for vector results), in `metrics` order."""
        logs = {}
        for m in self.metrics:
            if getattr(m, "_fk_is_compile_metrics", False):
                if not m.built:
                    continue
                items = m.result().items()
            else:
                items = ((m.name, m.result()),)
            for name, value in items:
                logs[name] = (float(value) if np.ndim(value) == 0
                              else np.asarray(value).tolist())
        return logs

    # ---- steps on flat lists (the loops' fast path) ----
    @array_mode_method
    def _fk_train_step(self, state, xs, ys, sws):
        n = len(xs[0]) if xs and np.ndim(xs[0]) else 1
        if state.needs_build:
            state.build_with(xs)
        dev = placement.step_device() if _devices.NON_HOST else None
        if dev is not None:  # the batch moves once; metrics read host copies (placement.py)
            host_ys, host_sws = ys, sws
            xs, ys, sws = placement.upload(dev, xs, ys, sws)
        with GradientTape() as tape:
            preds = state.forward(xs, training=True)
            loss = state.total_loss(ys, preds, sws, batch_size=n)
            loss = state.add_losses(loss, state.pop_added_losses())
        if _dp_state.COMM is None:  # one process (checked inline: this runs every step)
            grads = tape.gradient(loss, state.variables)
        else:
            reducer = _dp.overlap_allreduce(tape, state.variables, self.optimizer)
            grads = tape.gradient(loss, state.variables)
            if reducer is not None:
                grads = reducer.finish()
        factor = self.optimizer._fk_loss_factor()
        if factor is not None:  # Keras scales the loss for the tape: d(s * loss) = s * d(loss)
            grads = [None if g is None else _devices.device_of(g).scale(g, factor)
                     for g in grads]
        self.optimizer.apply(grads, state.variables)
        if dev is None:
            self._fk_update_metrics(state, ys, preds, sws, loss, n)
        else:
            placement.update_metrics(self, state, host_ys, preds, host_sws, loss, n)

    @array_mode_method
    def _fk_test_step(self, state, xs, ys, sws):
        n = len(xs[0]) if xs and np.ndim(xs[0]) else 1
        if state.needs_build:
            state.build_with(xs)
        dev = placement.step_device() if _devices.NON_HOST else None
        if dev is None:
            preds = state.forward(xs, training=False)
            loss = state.total_loss(ys, preds, sws, batch_size=n)
            loss = state.add_losses(loss, state.pop_added_losses())
        else:  # as in _fk_train_step
            dxs, dys, dsws = placement.upload(dev, xs, ys, sws)
            preds = state.forward(dxs, training=False)
            loss = state.add_losses(state.total_loss(dys, preds, dsws, batch_size=n),
                                    state.pop_added_losses())
            placement.update_metrics(self, state, ys, preds, sws, loss, n)
            return
        self._fk_update_metrics(state, ys, preds, sws, loss, n)

    def _fk_update_metrics(self, state, ys, preds, sws, loss, n):
        self._loss_tracker.update_scalar(float(loss), n)
        cm = self.compiled_metrics
        if not cm.built:
            names = (state.compile_loss.output_names if state.compile_loss is not None
                     else self._fk_output_names() or [f"output_{i + 1}"
                                                      for i in range(len(preds))])
            cm.build(names, ys, state.probabilities(preds))
        if cm.entries:
            cm.update_flat(ys, state.probabilities(preds), sws)

    def _fk_predict_step(self, state, xs):
        dev = placement.step_device() if _devices.NON_HOST else None
        if dev is not None:  # the batch up once, the outputs back once
            xs = placement.upload(dev, xs)
            with _tensor_mode.array_mode():
                return placement.to_host(state.forward(xs, training=False, logits=False))
        if state.plan_ok:  # one call into C++ where the model has a compiled plan
            from fkeras.models import compiled_plan

            outs = compiled_plan.run(self, xs)
            if outs is not None:
                return outs
        mode = _tensor_mode._MODE  # array mode, inline: this runs once per predict batch
        if mode.array:
            return state.forward(xs, training=False, logits=False)
        mode.array = True
        try:
            return state.forward(xs, training=False, logits=False)
        finally:
            mode.array = False

    # ---- Keras's overridable steps ----
    def train_step(self, data):
        """One optimizer step on a batch `(x, y, sample_weight)`; returns the metric logs."""
        if cls_step.overrides_compute_loss(self):
            return cls_step.train_step(self, data)
        state, xs, ys, sws = self._fk_flat_batch(data)
        self._fk_train_step(state, xs, ys, sws)
        return self.get_metrics_result()

    def test_step(self, data):
        if cls_step.overrides_compute_loss(self):
            return cls_step.test_step(self, data)
        state, xs, ys, sws = self._fk_flat_batch(data)
        self._fk_test_step(state, xs, ys, sws)
        return self.get_metrics_result()

    def predict_step(self, data):
        x, _, _ = da.unpack_x_y_sample_weight(data)
        if declares_training(self):
            return self(x, training=False)
        return self(x)

    def _fk_flat_batch(self, data, class_weight=None, method=None):
        x, y, sample_weight = da.unpack_x_y_sample_weight(data)
        state = get_state(self)
        xs = da.check_inputs(self, da.flatten_inputs(self, x))
        ys = da.flatten_targets(self, y)
        if self.compiled_loss is not None and self.compiled_loss.built:
            ys = da.check_targets(self, ys, self.compiled_loss.kinds, xs)
        sws = da.flatten_sample_weight(self, sample_weight, len(ys) if ys else 1)
        if class_weight is not None:
            sws = loops.apply_class_weight(ys, sws, class_weight)
        n = da.num_samples(xs, ys, sws)
        if method is not None:  # train/test_on_batch: an empty batch has no loss to report
            arg_checks.check_not_empty(method, n)
        if not state.plan_ok:
            state.x_template = x
        return state, xs, ys, sws

    @builtin_method
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss (on probabilities, as a custom train_step gets them) plus the
        regularization losses."""
        state = get_state(self)
        ys = [None if t is None else da.to_array(t) for t in nest.flatten(y)]
        preds = nest.flatten(y_pred)
        sws = da.flatten_sample_weight(self, sample_weight, len(preds))
        return state.total_loss(ys, preds, sws, logits=False)

    @builtin_method
    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Updates the loss-free metrics with a batch and returns all metric results."""
        state = get_state(self)
        ys = [None if t is None else da.to_array(t) for t in nest.flatten(y)]
        preds = [_devices.host_array(p) for p in nest.flatten(y_pred)]
        sws = da.flatten_sample_weight(self, sample_weight, len(preds))
        cm = self.compiled_metrics
        with placement.on_host():  # metric states and their arithmetic live on the host
            if not cm.built:
                names = state.compile_loss.output_names if state.compile_loss else [
                    f"output_{i + 1}" for i in range(len(preds))]
                cm.build(names, ys, preds)
            cm.update_flat(ys, preds, sws)
        return self.get_metrics_result()

    # ---- on_batch ----
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """One step on one batch; returns the loss (and metrics) of that batch."""
        self._fk_assert_loss()
        arg_checks.check_data_given("train_on_batch", x)
        arg_checks.check_class_weight(class_weight)
        self.reset_metrics()
        if self._fk_custom("train_step"):
            logs = self.train_step(da.pack_x_y_sample_weight(x, y, sample_weight))
        else:
            state, xs, ys, sws = self._fk_flat_batch((x, y, sample_weight), class_weight,
                                                     method="train_on_batch")
            self._fk_train_step(state, xs, ys, sws)
            logs = self.get_metrics_result()
        return self._fk_format_logs(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Loss (and metrics) of one batch, without updating the weights."""
        self._fk_assert_loss()
        arg_checks.check_data_given("test_on_batch", x)
        self.reset_metrics()
        if self._fk_custom("test_step"):
            logs = self.test_step(da.pack_x_y_sample_weight(x, y, sample_weight))
        else:
            state, xs, ys, sws = self._fk_flat_batch((x, y, sample_weight),
                                                     method="test_on_batch")
            self._fk_test_step(state, xs, ys, sws)
            logs = self.get_metrics_result()
        return self._fk_format_logs(logs, return_dict)

    def predict_on_batch(self, x):
        """The model's outputs on one batch (no batching, no callbacks)."""
        if self._fk_custom("predict_step"):
            return self.predict_step((x,))
        state = get_state(self)
        xs = da.check_inputs(self, da.flatten_inputs(self, x))
        if not state.plan_ok:
            state.x_template = x
        outs = self._fk_predict_step(state, xs)
        return loops.pack_outputs(self, outs)

    def _fk_format_logs(self, logs, return_dict):
        if return_dict:
            return logs
        return flatten_metrics_in_order(self, logs)

    # ---- loops ----
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """Trains the model for a fixed number of epochs; returns a History."""
        self._fk_assert_loss()
        arg_checks.check_fit_args(x, batch_size, epochs, verbose, validation_split,
                                  class_weight, initial_epoch, steps_per_epoch,
                                  validation_steps, validation_batch_size, validation_freq)
        return loops.fit(self, x, y, batch_size, epochs, verbose, callbacks, validation_split,
                         validation_data, shuffle, class_weight, sample_weight, initial_epoch,
                         steps_per_epoch, validation_steps, validation_batch_size,
                         validation_freq)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, **kwargs):
        """Loss and metrics over the data: a scalar (no metrics), a list in `metrics_names`
        order, or a dict with return_dict=True."""
        self._fk_assert_loss()
        arg_checks.check_evaluate_args(x, batch_size, verbose, steps)
        logs = loops.evaluate(self, x, y, batch_size, verbose, sample_weight, steps, callbacks)
        return self._fk_format_logs(pythonify_logs(logs), return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Output predictions for the input samples, in batches (inference mode)."""
        arg_checks.check_predict_args(x, batch_size, verbose, steps)
        return loops.predict(self, x, batch_size, verbose, steps, callbacks)

    # ---- on disk ----
    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the model (architecture, weights, compile config, optimizer state) as a
        Keras 3 `.keras` file, atomically. Needs h5py."""
        from fkeras.saving import saving_lib

        saving_lib.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Saves the weights in Keras 3's `.weights.h5` layout (needs h5py), atomically: a
        temporary file in the same directory, fsynced, then renamed over `filepath`."""
        import os

        from fkeras.saving import file_io, weights_h5

        filepath = os.fspath(filepath)
        if not filepath.endswith(".weights.h5"):
            raise ValueError("The filename must end in `.weights.h5`. Received: "
                             f"filepath={filepath}")
        if not overwrite and os.path.exists(filepath):
            raise ValueError(f"File {filepath} exists and overwrite=False.")
        file_io.atomic_write(filepath, lambda tmp: weights_h5.save_weights(self, tmp))

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """Loads weights saved by `save_weights` (fkeras or Keras 3, `.weights.h5`), or a
        legacy `.h5` / `.hdf5` file (weights-only, as Keras's published application weights,
        or a whole model), by layer order or, with `by_name=True`, by layer name."""
        from fkeras.saving import legacy_h5, weights_h5

        if legacy_h5.is_legacy_h5_path(filepath):
            by_name = kwargs.pop("by_name", False)
            if kwargs:
                raise ValueError(f"Invalid keyword arguments: {kwargs}")
            legacy_h5.load_weights(self, filepath, by_name=by_name,
                                   skip_mismatch=skip_mismatch)
        else:
            weights_h5.load_weights(self, filepath, skip_mismatch=skip_mismatch)
        _dp.broadcast_weights(self)  # DataParallel: every rank holds rank 0's weights
