"""Python-side helpers shared by the trainers and the callbacks."""

import numpy as np


def _to_python(value):
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (list, tuple, str)):
        return value
    if np.ndim(value) == 0:
        try:
            return float(value)
        except (TypeError, ValueError):
            return value
    return value


def pythonify_logs(logs):
    """A flat copy of `logs` (None gives {}): sorted keys, nested dicts inlined, floats."""
    result = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(pythonify_logs(value))
        else:
            result[key] = _to_python(value)
    return result
