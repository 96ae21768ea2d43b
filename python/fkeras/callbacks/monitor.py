"""Which way is better for a monitored log key (shared by EarlyStopping and ModelCheckpoint)."""

import operator


def direction_of(model, monitor):
    """'min' or 'max' for `monitor` from the model's metrics (Keras 3), else None."""
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if name == "loss" or name.endswith("_loss"):
        return "min"
    for m in getattr(model, "metrics", None) or []:
        for sub in getattr(m, "metrics", None) or [m]:
            if getattr(sub, "name", None) == name and getattr(sub, "_direction", None):
                return "max" if sub._direction == "up" else "min"
    return None


def comparison(mode):
    return operator.lt if mode == "min" else operator.gt
