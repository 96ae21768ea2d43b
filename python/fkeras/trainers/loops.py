"""The epoch and batch loops of fit, evaluate and predict.

fit: data checked and converted once; validation_split takes the last fraction before any
shuffling; each epoch reshuffles (one gather per array, then contiguous batch views); the
epoch logs are the running averages of the epoch's batches (weighted by batch size) and the
validation logs are computed after the epoch with the final weights, prefixed `val_`.
Callbacks fire in Keras's order (on_train_begin, on_epoch_begin, on_train_batch_begin/end...,
on_test_begin, on_test_batch_begin/end..., on_test_end, on_epoch_end, ..., on_train_end).
"""

import math
import warnings

import numpy as np

from fkeras import config as _config
from fkeras.callbacks.callback_list import CallbackList
from fkeras.distribution import data_parallel as _dp
from fkeras.engine.tensor import wrap_structure
from fkeras.trainers import arg_checks
from fkeras.trainers import data_adapter as da
from fkeras.trainers import foreign_data as fd
from fkeras.trainers import py_dataset_adapter as pda
from fkeras.trainers.logs import metrics_result_or_logs, pythonify_logs
from fkeras.trainers.step_state import get_state
from fkeras.utils import nest
from fkeras.utils import random as _random


def apply_class_weight(ys, sws, class_weight):
    if ys is None or len(ys) != 1:
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    w = da.class_weights_to_sample_weight(ys[0], class_weight)
    if sws is not None and sws[0] is not None:
        w = w * np.asarray(sws[0], dtype=np.float32).reshape(len(w))
    return [w]


def pack_outputs(model, outs):
    if len(outs) == 1:  # one output: its array, even for outputs=[y] (as Keras)
        return outs[0]
    structure = getattr(model, "_outputs_structure", None)
    if structure is not None:
        return nest.pack_like(structure, outs)
    return outs[0] if len(outs) == 1 else outs


def user_step(model, method):
    """Whether `method`'s batches ("fit", "fit (validation_data)", "evaluate", "predict") go
    to a step the user wrote: Keras 3 hands such a step its data as given (keras-io's metric
    learning stacks anchor/positive pairs in one array), so only built-in steps check x
    against the model's inputs."""
    name = ("test_step" if "validation" in method else
            {"fit": "train_step", "evaluate": "test_step", "predict": "predict_step"}.get(method))
    step = getattr(type(model), name, None) if name else None
    return step is not None and not step.__qualname__.startswith("Trainer.")


def _array_dataset(model, x, y, sample_weight, class_weight, require_y, check_shapes=True):
    xs = da.check_inputs(model, da.flatten_inputs(model, x), check_shapes)
    ys = da.flatten_targets(model, y)
    if ys is None and require_y:
        raise ValueError(
            "Target data is missing. Your model was compiled with a loss, and therefore "
            "expects target data `y` to be passed to fit/evaluate."
        )
    loss = model.compiled_loss
    if ys is not None and loss is not None and loss.built:
        ys = da.check_targets(model, ys, loss.kinds, xs)
    sws = da.flatten_sample_weight(model, sample_weight, len(ys) if ys else 1)
    if class_weight is not None:
        sws = apply_class_weight(ys, sws, class_weight)
    return da.ArrayDataset(xs, ys, sws)


def make_dataset(model, x, y=None, sample_weight=None, class_weight=None, require_y=True,
                 method="fit"):
    """An ArrayDataset (arrays, lists, dicts; arrays with no samples are refused, `method`
    naming the caller), a PyDatasetAdapter (a PyDataset or a sequence of batches), a
    GeneratorAdapter (a generator) or an IterableDataset (batches: any iterable, a torch
    DataLoader, a tf.data.Dataset)."""
    if fd.kind(x) is not None or fd.is_torch_dataset(x):
        fd.check(x, y, sample_weight, class_weight)
        return da.IterableDataset(x)
    if pda.is_py_dataset(x):
        for value, name in ((y, "y"), (sample_weight, "sample_weights")):
            if value is not None:
                what = "targets" if name == "y" else "sample weights"
                raise ValueError(
                    f"When providing `x` as a PyDataset, `{name}` should not be passed. "
                    f"Instead, the {what} should be included as part of the PyDataset.")
        return pda.PyDatasetAdapter(x, class_weight)
    if not da.is_array_like(x):
        if y is not None:
            raise ValueError("`y` argument is not supported when using a generator or an "
                             "iterable of batches as `x` (yield (x, y) pairs instead).")
        if sample_weight is not None or class_weight is not None:
            raise ValueError("`sample_weight`/`class_weight` are not supported with an "
                             "iterable `x`; yield (x, y, sample_weight) batches instead.")
        if pda.is_generator(x):
            return pda.GeneratorAdapter(x)
        return da.IterableDataset(x)
    data = _array_dataset(model, x, y, sample_weight, class_weight, require_y,
                          check_shapes=not user_step(model, method))
    arg_checks.check_not_empty(method, data.n)
    return data


def _validation_dataset(model, validation_data):
    batches = isinstance(validation_data, list) and all(
        isinstance(item, tuple) for item in validation_data)
    if isinstance(validation_data, (tuple, list)) and not batches:
        if len(validation_data) not in (2, 3):
            raise ValueError(
                "When passing validation_data, it must contain 2 (x_val, y_val) or 3 (x_val, "
                "y_val, val_sample_weights) items, however it contains "
                f"{len(validation_data)} items"
            )
        return make_dataset(model, *validation_data, method="fit (validation_data)")
    return make_dataset(model, validation_data, method="fit (validation_data)")


class _Batches:
    """Batches of one epoch as flat (xs, ys, sws), from arrays or an iterable."""

    def __init__(self, model, data, batch_size, shuffle=False, steps=None, class_weight=None,
                 require_y=False, method=None):
        self.model, self.data = model, data
        self.check_shapes = method is None or not user_step(model, method)
        if batch_size is None:  # Keras 3: enough samples per batch for `steps` batches
            n = getattr(data, "n", 0)
            batch_size = max(1, math.ceil(n / steps)) if steps and n else 32
        self.batch_size, self.shuffle, self.steps = batch_size, shuffle, steps
        self.class_weight = class_weight
        self.require_y = require_y
        self._persistent = None
        if isinstance(data, da.ArrayDataset):
            self.num_batches = data.num_batches(batch_size)
        elif isinstance(data, pda.ADAPTERS):
            self.num_batches = data.num_batches
        else:
            self.num_batches = data.num_batches()
        cap = _config.max_steps_per_epoch()
        if cap and cap < (steps if steps is not None else self.num_batches):
            warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=3)
            self.steps = steps = cap
        self.target = steps if steps is not None else self.num_batches

    def _array_iter(self):
        return self.data.batches(self.batch_size, self.shuffle, _random.global_rng())

    def _iterable_iter(self, state):
        if self.steps is None:
            items = self.data.iterator(persistent=False)
        else:
            items = self.data.iterator(persistent=True)
        for item in items:
            yield self._flatten_item(item, state)

    def _flatten_item(self, item, state):
        x, y, sw = da.unpack_x_y_sample_weight(item)
        xs = da.check_inputs(self.model, da.flatten_inputs(self.model, x), self.check_shapes)
        ys = da.flatten_targets(self.model, y)
        if ys is None and self.require_y:
            raise ValueError(
                "Target data is missing. Your model was compiled with a loss, and therefore "
                "expects target data `y` to be passed to fit/evaluate: the batches must be "
                "(x, y) or (x, y, sample_weight) tuples.")
        loss = self.model.compiled_loss
        if ys is not None and loss is not None and loss.built:
            ys = da.check_targets(self.model, ys, loss.kinds, xs)
        sws = da.flatten_sample_weight(self.model, sw, len(ys) if ys else 1)
        if not state.plan_ok:
            state.x_template = x
        return xs, ys, sws

    def epoch(self, state):
        """Yields (step, (xs, ys, sws)) for one epoch; warns when data runs out early."""
        if isinstance(self.data, pda.ADAPTERS):
            items = self.data.epoch(self.steps, self.shuffle)
            try:
                for step, item in items:
                    yield step, self._flatten_item(item, state)
            finally:
                items.close()
            return
        if isinstance(self.data, da.ArrayDataset):
            if self.steps is None:
                yield from enumerate(self._array_iter())
                return
            source = self._persistent or self._array_iter()
        else:
            source = self._iterable_iter(state)
        for step in range(self.steps if self.steps is not None else 1 << 62):
            try:
                batch = next(source)
            except StopIteration:
                if self.steps is not None:
                    da.ran_out_of_data_warning(self.steps)
                    self._persistent = None
                    self.model.stop_training = isinstance(self.data, da.IterableDataset)
                return
            if isinstance(self.data, da.ArrayDataset):
                self._persistent = source
            yield step, batch


def executions(model, steps):
    """Groups (step, batch) pairs into Keras 3's executions of `steps_per_execution` batches:
    (begin_step, end_step, batches), end_step = begin_step + steps_per_execution - 1 even for
    a short last group (as Keras's EpochIterator reports it)."""
    n = getattr(model, "steps_per_execution", 1) or 1
    if n == 1:
        for step, batch in steps:
            yield step, step, (batch,)
        return
    group, begin = [], 0
    for step, batch in steps:
        if not group:
            begin = step
        group.append(batch)
        if len(group) == n:
            yield begin, begin + n - 1, group
            group = []
    if group:
        yield begin, begin + n - 1, group


def fit(model, x, y, batch_size, epochs, verbose, callbacks, validation_split,
        validation_data, shuffle, class_weight, sample_weight, initial_epoch, steps_per_epoch,
        validation_steps, validation_batch_size, validation_freq):
    max_epochs = _config.max_epochs()
    if max_epochs and max_epochs < epochs:
        warnings.warn(f"Limiting epochs to {max_epochs}", stacklevel=3)
        epochs = max_epochs
    state = get_state(model)
    train = make_dataset(model, x, y, sample_weight, class_weight,
                         require_y=model.compiled_loss is not None)
    _keep_input_structure(state, train, x)
    if shuffle:
        fd.warn_shuffle_ignored(x)
    val = None
    if validation_data is not None:
        val = _validation_dataset(model, validation_data)
    elif validation_split:
        if not isinstance(train, da.ArrayDataset):
            raise ValueError("Argument `validation_split` is only supported for tensors or "
                             "NumPy arrays.Found incompatible type in the input: "
                             f"{[type(x)]}")
        train, val = train.split(validation_split)
    if isinstance(train, pda.ADAPTERS):
        shuffle = pda.start_epochs(model, train, shuffle, steps_per_epoch, training=True)
    batches = _Batches(model, train, batch_size, shuffle, steps_per_epoch,
                       require_y=model.compiled_loss is not None, method="fit")
    if not model.optimizer.built and not state.needs_build:
        model.optimizer.build(state.variables)
    _dp.check_batch_size(batches.batch_size if isinstance(train, da.ArrayDataset) else None)
    _dp.start_fit(model, state, batches)
    cbs = callbacks if isinstance(callbacks, CallbackList) else CallbackList(
        callbacks, add_history=True, add_progbar=verbose != 0, model=model,
        verbose=verbose, epochs=epochs, steps=batches.target)
    custom = model._fk_custom("train_step")
    begin, end = cbs.wants("on_train_batch_begin"), cbs.wants("on_train_batch_end")
    model.stop_training = False
    cbs.on_train_begin()
    # BackupAndRestore sets the epoch a restored fit resumes at.
    initial_epoch = model.__dict__.pop("_initial_epoch", None) or initial_epoch
    epoch_logs, logs = {}, {}  # a fit that runs no step reports no logs (Keras 3)
    try:  # a pass left open by steps_per_epoch ends with the fit (its workers stop)
        for epoch in range(initial_epoch, epochs):
            model.reset_metrics()
            cbs.on_epoch_begin(epoch)
            for first, last, group in executions(model, _dp.shard(batches.epoch(state), True)):
                if begin:
                    cbs.on_train_batch_begin(first)
                for xs, ys, sws in group:
                    if custom:
                        logs = model.train_step(_structured(model, state, xs, ys, sws))
                        if not model.built:
                            _mark_built(model, xs)
                    else:
                        model._fk_train_step(state, xs, ys, sws)
                        logs = model.get_metrics_result() if end else None
                if end:
                    cbs.on_train_batch_end(last, logs)
                if model.stop_training:
                    break
            epoch_logs = _global_logs(model, logs)
            if val is not None and _should_validate(epoch, validation_freq):
                val_logs = pythonify_logs(_run_evaluate(
                    model, val, validation_batch_size or batch_size, validation_steps, cbs))
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, epoch_logs)
            if model.stop_training:
                break
    finally:
        _finish(train)
        _finish(val)  # validation passes continue across epochs too
    if getattr(model.optimizer, "use_ema", False):
        model.optimizer.finalize_variable_values(state.variables)
    cbs.on_train_end(epoch_logs)
    return cbs._history


def _mark_built(model, xs):
    """Keras 3 builds a model before a custom `train_step` runs by calling it symbolically;
    fkeras runs the step itself: once that built every sublayer, the model counts as built
    too (so `count_params` and `summary` work after `fit`, as in Keras)."""
    if all(layer.built for layer in model._all_layers()):
        if len(xs) == 1 and hasattr(xs[0], "shape"):
            model._fk_record_build_shape(tuple(xs[0].shape))
        model.built = True


def _keep_input_structure(state, data, x):
    """A model run by calling it (no forward plan) gets each batch of array data in the
    structure of `x` (a dict stays a dict), as Keras passes it to `call`."""
    if isinstance(data, da.ArrayDataset) and not state.plan_ok:
        state.x_template = x


def _finish(data):
    """Ends a PyDataset pass left open by `steps` (its worker threads or processes stop)."""
    if isinstance(data, pda.PyDatasetAdapter):
        data.close()


def _global_logs(model, logs):
    """The logs of an epoch or an evaluation: {} when no step ran, the metric results, or a
    custom step's own last logs (Keras 3); under DataParallel reduced over processes (the
    same on every rank)."""
    if logs == {}:
        return {}
    _dp.reduce_metrics(model.metrics)
    out = metrics_result_or_logs(model, logs)
    if out is logs:  # a custom step's own keys (normalized later, by the callbacks)
        return _dp.reduce_logs(out)
    return dict(out)


def _should_validate(epoch, freq):
    if isinstance(freq, int):
        return (epoch + 1) % freq == 0
    return epoch + 1 in freq


def _structured(model, state, xs, ys, sws):
    """A batch in the structure a custom train_step/test_step expects."""
    inputs = getattr(model, "_inputs_structure", None)
    x = nest.pack_like(inputs, xs) if inputs is not None else (
        nest.pack_like(state.x_template, xs) if state.x_template is not None else
        (xs[0] if len(xs) == 1 else xs))
    y = None if ys is None else (ys[0] if len(ys) == 1 else ys)
    sw = None if sws is None else (sws[0] if len(sws) == 1 else sws)
    # User code gets Tensors (Keras passes backend tensors to train_step).
    return wrap_structure(da.pack_x_y_sample_weight(x, y, sw))


def _run_evaluate(model, data, batch_size, steps, cbs):
    state = get_state(model)
    if isinstance(data, pda.ADAPTERS):
        pda.start_epochs(model, data, False, steps, training=False)
    batches = _Batches(model, data, batch_size, False, steps,
                       require_y=model.compiled_loss is not None, method="evaluate")
    custom = model._fk_custom("test_step")
    begin, end = cbs.wants("on_test_batch_begin"), cbs.wants("on_test_batch_end")
    model.reset_metrics()
    cbs.on_test_begin()
    logs = {}
    for first, last, group in executions(model, _dp.shard(batches.epoch(state), False)):
        if begin:
            cbs.on_test_batch_begin(first)
        for xs, ys, sws in filter(None, group):  # None: this rank's part is empty
            if custom:
                logs = model.test_step(_structured(model, state, xs, ys, sws))
            else:
                model._fk_test_step(state, xs, ys, sws)
                logs = model.get_metrics_result() if end else None
        if end:
            cbs.on_test_batch_end(last, logs)
    logs = _global_logs(model, logs)
    cbs.on_test_end(logs)
    return logs


def evaluate(model, x, y, batch_size, verbose, sample_weight, steps, callbacks):
    data = make_dataset(model, x, y, sample_weight, require_y=model.compiled_loss is not None,
                        method="evaluate")
    _keep_input_structure(get_state(model), data, x)
    batch_size = batch_size or 32
    target = steps if steps is not None else (
        data.num_batches if isinstance(data, pda.ADAPTERS) else data.num_batches(batch_size))
    cbs = callbacks if isinstance(callbacks, CallbackList) else CallbackList(
        callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1,
        steps=target)
    try:
        return _run_evaluate(model, data, batch_size, steps, cbs)
    finally:
        _finish(data)


def predict(model, x, batch_size, verbose, steps, callbacks):
    state = get_state(model)
    data = make_dataset(model, x, require_y=False, method="predict")
    _keep_input_structure(state, data, x)
    if isinstance(data, da.ArrayDataset):
        data = da.ArrayDataset(data.xs)
    batches = _Batches(model, data, batch_size, False, steps, method="predict")
    cbs = callbacks if isinstance(callbacks, CallbackList) else CallbackList(
        callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1,
        steps=batches.target)
    custom = model._fk_custom("predict_step")
    begin, end = cbs.wants("on_predict_batch_begin"), cbs.wants("on_predict_batch_end")
    cbs.on_predict_begin()
    outs = []
    flat = None
    for first, last, group in executions(model, _dp.shard(batches.epoch(state), False)):
        if begin:
            cbs.on_predict_batch_begin(first)
        for batch in group:
            if batch is None:  # this rank's part of the batch is empty (DataParallel)
                outs.append(None)
                continue
            xs = batch[0]
            if custom:
                packed = _structured(model, state, xs, None, None)
                x_batch = da.unpack_x_y_sample_weight(packed)[0]
                flat = [np.asarray(o) for o in nest.flatten(model.predict_step((x_batch,)))]
            else:
                flat = model._fk_predict_step(state, xs)
            outs.append(flat)
        if end:
            cbs.on_predict_batch_end(last, {"outputs": pack_outputs(model, flat)})
    _finish(data)
    cbs.on_predict_end()
    outs = _dp.gather_predictions(outs)
    if not outs:
        raise ValueError("Expected input data to be non-empty.")
    flat = [np.concatenate([o[i] for o in outs], axis=0) for i in range(len(outs[0]))]
    return pack_outputs(model, flat)
