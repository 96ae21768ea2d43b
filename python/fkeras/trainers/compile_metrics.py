"""The compiled metrics: resolved per output on the first batch (Keras 3's rules).

`metrics` may be a list (applied to every output, as Keras 2 does), a list of lists (one per
output) or a dict keyed by output name. "accuracy"/"acc" become binary accuracy when the output's
last dimension is 1, sparse categorical accuracy when y has a lower rank than the output (or a
last dimension of 1 against several classes), else categorical accuracy; "crossentropy"/"ce"
likewise. Names: the string given, prefixed by the output name for multi-output models
(`out1_accuracy`). `weighted_metrics` receive the sample weights, `metrics` do not.
"""

from fkeras import metrics as metrics_module
from fkeras.engine.tensor import is_builtin_function, run_user
from fkeras.metrics.metric import Metric, MeanMetricWrapper


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


class CompileMetrics:
    """Metrics and weighted metrics per output, built from the first batch's shapes."""

    def __init__(self, metrics=None, weighted_metrics=None):
        self._metrics_spec = metrics
        self._weighted_spec = weighted_metrics
        self.built = False
        self.entries = []  # (output index, metric, weighted)

    def build(self, output_names, ys, preds):
        multi = len(output_names) > 1
        self.entries = []
        used = set()
        for weighted, spec in ((False, self._metrics_spec), (True, self._weighted_spec)):
            for i, items in enumerate(_per_output(spec, output_names)):
                if ys is None or i >= len(ys) or ys[i] is None:
                    continue
                for item in items:
                    m = get_metric(item, ys[i], preds[i])
                    if multi:
                        m.name = f"{output_names[i]}_{m.name}"
                    if weighted and m.name in used:
                        m.name = f"weighted_{m.name}"
                    used.add(m.name)
                    self.entries.append((i, m, weighted))
        self.built = True

    @property
    def metrics(self):
        return [m for _, m, _ in self.entries]

    def update_state(self, ys, preds, sws=None):
        for i, m, weighted in self.entries:
            sw = sws[i] if weighted and sws is not None else None
            if is_builtin_function(type(m).update_state):
                m.update_state(ys[i], preds[i], sw)
            else:  # a user's Metric subclass computes on Tensors
                run_user(m.update_state, ys[i], preds[i], sw)

    def reset_state(self):
        for _, m, _ in self.entries:
            m.reset_state()

    def get_config(self):
        return {"metrics": self._metrics_spec, "weighted_metrics": self._weighted_spec}
