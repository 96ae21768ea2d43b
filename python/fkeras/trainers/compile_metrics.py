"""The compiled metrics: resolved per output on the first batch (Keras 3's rules).

`metrics` may be a list (applied to every output, as Keras 2 does), a list of lists (one per
output) or a dict keyed by output name. "accuracy"/"acc" become binary accuracy when the output's
last dimension is 1, sparse categorical accuracy when y has a lower rank than the output (or a
last dimension of 1 against several classes), else categorical accuracy; "crossentropy"/"ce"
likewise. Names: the string given, prefixed by the output name for multi-output models
(`out1_accuracy`). `weighted_metrics` receive the sample weights, `metrics` do not.
"""

from fkeras import metrics as metrics_module
from fkeras.engine.tensor import is_builtin_method, run_user
from fkeras.metrics.metric import MeanMetricWrapper, Metric, to_numpy
from fkeras.utils import nest


def is_binary_or_sparse(y_true, y_pred):
    is_binary = y_pred.shape[-1] == 1
    is_sparse = y_true.ndim < y_pred.ndim or (y_true.shape[-1] == 1 and y_pred.shape[-1] > 1)
    return is_binary, is_sparse


def get_metric(identifier, y_true, y_pred):
    """A Metric object for `identifier`, resolving accuracy/crossentropy from shapes."""
    key = str(identifier).lower() if isinstance(identifier, str) else None
    if key in ("accuracy", "acc"):
        binary, sparse = is_binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if binary else
               metrics_module.SparseCategoricalAccuracy if sparse else
               metrics_module.CategoricalAccuracy)
        obj = cls(name=identifier)
    elif key in ("crossentropy", "ce"):
        binary, sparse = is_binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryCrossentropy if binary else
               metrics_module.SparseCategoricalCrossentropy if sparse else
               metrics_module.CategoricalCrossentropy)
        obj = cls(name=identifier)
    else:
        obj = metrics_module.get(identifier)
    if not isinstance(obj, Metric):
        obj = MeanMetricWrapper(obj, name=getattr(obj, "__name__", "metric"))
    if isinstance(identifier, str):
        obj.name = identifier
    return obj


def _per_output(spec, names):
    if spec is None:
        return [[] for _ in names]
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in names]
        if unknown:
            raise ValueError(f"Unknown entries in metrics dictionary: {unknown}. Expected "
                             f"keys: {names}")
        out = []
        for name in names:
            value = spec.get(name) or []
            out.append(list(value) if isinstance(value, (list, tuple)) else [value])
        return out
    if not isinstance(spec, (list, tuple)):
        spec = [spec]
    if spec and all(isinstance(m, (list, tuple)) for m in spec):
        if len(spec) != len(names):
            raise ValueError(f"`metrics` has {len(spec)} lists for {len(names)} outputs.")
        return [list(m) for m in spec]
    return [list(spec) for _ in names]


class CompileMetrics(Metric):
    """The compiled metrics as one Keras 3 `CompileMetrics` container (`model.metrics[1]`,
    named "compile_metrics"): `metrics` lists the metric objects (their own names, such as
    "mae"), `result()` is a dict keyed by the logged names (prefixed by the output name for
    multi-output models, "weighted_" for a weighted metric whose name is taken). Built from
    the first batch's shapes.

    `update_state(y_true, y_pred, sample_weight=None)` takes the model's structures (a Keras 2
    custom `train_step` calls `self.compiled_metrics.update_state(y, y_pred)`); the trainer's
    steps call `update_flat` on flat lists in output order.
    """

    _fk_is_compile_metrics = True

    def __init__(self, metrics=None, weighted_metrics=None, output_names=None):
        super().__init__(name="compile_metrics")
        self._metrics_spec = metrics
        self._weighted_spec = weighted_metrics
        self.output_names = output_names
        self.built = False
        self.entries = []  # (output index, metric, weighted, logged name)

    def build(self, output_names, ys, preds):
        multi = len(output_names) > 1
        self.entries = []
        used = {}
        for weighted, spec in ((False, self._metrics_spec), (True, self._weighted_spec)):
            for i, items in enumerate(_per_output(spec, output_names)):
                if ys is None or i >= len(ys) or ys[i] is None:
                    continue
                prefix = f"{output_names[i]}_" if multi else ""
                for item in items:
                    m = get_metric(item, ys[i], preds[i])
                    self.entries.append((i, m, weighted, _logged_name(used, prefix, m.name,
                                                                      weighted)))
        self.built = True

    @property
    def metrics(self):
        return [m for _, m, _, _ in self.entries]

    @property
    def variables(self):
        return [v for m in self.metrics for v in m.variables]

    def _flatten(self, data):
        names = self.output_names
        if isinstance(data, dict) and names and set(data) <= set(names):
            return [data.get(n) for n in names]
        return list(nest.flatten(data))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Updates every compiled metric from the model's (nested) targets and outputs."""
        ys = [None if t is None else to_numpy(t) for t in self._flatten(y_true)]
        preds = [to_numpy(p) for p in self._flatten(y_pred)]
        sws = None
        if sample_weight is not None:
            sws = [None if w is None else to_numpy(w) for w in self._flatten(sample_weight)]
            if len(sws) < len(ys):
                sws = [sws[0]] * len(ys)
        if not self.built:
            names = self.output_names or [f"output_{i + 1}" for i in range(len(preds))]
            self.build(names if len(names) == len(preds) else [
                f"output_{i + 1}" for i in range(len(preds))], ys, preds)
        self.update_flat(ys, preds, sws)

    def update_flat(self, ys, preds, sws=None):
        for i, m, weighted, _ in self.entries:
            sw = sws[i] if weighted and sws is not None else None
            if is_builtin_method(type(m), "update_state"):
                m.update_state(ys[i], preds[i], sw)
            else:  # a user's Metric subclass computes on Tensors
                run_user(m.update_state, ys[i], preds[i], sw)

    def reset_state(self):
        for _, m, _, _ in self.entries:
            m.reset_state()

    def result(self):
        """{logged name: value} of every compiled metric."""
        return {name: m.result() for _, m, _, name in self.entries}

    def get_config(self):
        return {"metrics": self._metrics_spec, "weighted_metrics": self._weighted_spec}


def _logged_name(used, prefix, name, weighted):
    """Keras 3's log key: `prefix + name`; a repeat gets `_1`, `_2`... (a weighted metric
    first tries `prefix + "weighted_" + name`)."""
    key = prefix + name
    if key in used and weighted:
        key = f"{prefix}weighted_{name}"
    if key in used:
        used[key] += 1
        key = f"{key}_{used[key] - 1}"
    else:
        used[key] = 1
    return key
