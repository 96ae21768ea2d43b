"""The built-in steps on a non-host device: each batch uploaded once, metrics on the host.

The forward, the loss, the backward and the optimizer update run on the device (the batch's
inputs, targets and weights are uploaded at the start of the step, once). Metrics and the
loss tracker then read the step's predictions and loss copied back to the host: metric
states are host variables in Keras's order, and reading the loss for the logs needs the value
on the host anyway (one synchronization per step, as any framework's progress bar).
"""

import numpy as np

from fkeras.backend import devices as _devices


def step_device():
    """The current device when it is not the host (the step then moves its batch), else
    None."""
    dev = _devices.get_device()
    return None if dev.is_host else dev


def upload(dev, arrays):
    """A batch's flat list of arrays (None kept) as buffers of `dev`."""
    if arrays is None:
        return None
    return [None if a is None else dev.upload(a) for a in arrays]


def update_metrics(model, state, ys, preds, sws, loss, n):
    """The step's metric update on the host: predictions and loss copied back once, the
    metric functions (fkeras ops on those copies) run on the cpu device."""
    with _devices.device("cpu"):
        model._fk_update_metrics(state, ys, to_host(preds), sws, to_host([loss])[0], n)


def to_host(values):
    """A flat list of buffers copied to the host (host values unchanged)."""
    return [None if v is None else np.asarray(_devices.host_value(v)) for v in values]
