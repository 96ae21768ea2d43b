"""The logs dicts of fit/evaluate/predict, as Keras 3 shapes them.

Every logs dict a callback, History or `evaluate(return_dict=True)` receives goes through
`pythonify_logs`: keys visited in sorted order, a dict value inlined at its key's position
(recursively), values turned into Python floats where they convert. `evaluate()`'s list comes
from `flatten_metrics_in_order`: the names of `model.metrics` present in the logs (the compiled
metrics container expanded to its metrics' own names), then every other key, sorted.
"""

from fkeras.utils.python_utils import pythonify_logs

__all__ = ["flatten_metrics_in_order", "metrics_result_or_logs", "pythonify_logs"]


def metric_names_in_order(model):
    names = []
    for metric in model.metrics:
        if getattr(metric, "_fk_is_compile_metrics", False):
            names.extend(m.name for m in metric.metrics)
        else:
            names.append(metric.name)
    return names


def flatten_metrics_in_order(model, logs):
    """evaluate()'s list: model.metrics names found in `logs`, then the other keys sorted; a
    single value is returned alone."""
    names = metric_names_in_order(model)
    results = [logs[name] for name in names if name in logs]
    results.extend(logs[key] for key in sorted(logs) if key not in names)
    return results[0] if len(results) == 1 else results


def metrics_result_or_logs(model, logs):
    """The model's metric results when a step's logs have the same keys (the built-in steps),
    else the step's own logs (a custom step returning other keys)."""
    metric_logs = model.get_metrics_result()
    if isinstance(logs, dict) and set(logs) == set(metric_logs):
        return metric_logs
    return logs if logs is not None else metric_logs
