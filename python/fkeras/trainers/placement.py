"""The built-in steps on a non-host device: each batch uploaded once, metrics on the host.

The forward, the loss, the backward and the optimizer update run on the device (the batch's
inputs, targets and weights are uploaded at the start of the step, once). Metrics and the
loss tracker then read the step's predictions and loss copied back to the host: metric
states are host variables in Keras's order, and reading the loss for the logs needs the value
on the host anyway (one synchronization per step, as any framework's progress bar).
"""

import contextlib

import numpy as np

from fkeras.backend import devices as _devices


def step_device():
    """The current device when it is not the host (the step then moves its batch), else
    None."""
    dev = _devices.get_device()
    if dev.is_host:
        return None
    from fkeras.distribution import _state as _dist

    if _dist.COMM is not None:
        raise RuntimeError(
            f"DataParallel training over MPI runs on the cpu device; the current device is "
            f"'{dev.name}'. Run the distributed fit outside `fkeras.device(\"{dev.name}\")` "
            "(GPU data parallelism, over NCCL, is not implemented).")
    return dev


def upload(dev, *lists):
    """A batch's flat lists of arrays (xs, ys, sws; None lists and items kept) as buffers of
    `dev`, all in one transfer."""
    flat = [a for arrays in lists if arrays is not None for a in arrays]
    moved = iter(dev.upload_batch(flat))
    out = [None if arrays is None else [next(moved) for _ in arrays] for arrays in lists]
    return out[0] if len(lists) == 1 else out


def on_host():
    """A cpu device scope when the current device is not the host (else no scope)."""
    if _devices.get_device().is_host:
        return contextlib.nullcontext()
    return _devices.device("cpu")


def update_metrics(model, state, ys, preds, sws, loss, n):
    """The step's metric update on the host: predictions (when a metric reads them) and the
    loss copied back once, the metric functions (fkeras ops on those copies) run on the cpu
    device."""
    cm = model.compiled_metrics
    if not cm.built or cm.entries:
        preds = to_host(preds)
    with on_host():
        model._fk_update_metrics(state, ys, preds, sws, to_host([loss])[0], n)


def to_host(values):
    """A flat list of buffers copied to the host (host values unchanged), their Keras masks
    carried along (a masked output's metrics skip its masked steps)."""
    from fkeras.engine.masking import get_keras_mask, set_keras_mask

    out = []
    for v in values:
        host = None if v is None else np.asarray(_devices.host_value(v))
        mask = None if v is None else get_keras_mask(v)
        if mask is not None and host is not v:
            set_keras_mask(host, _devices.host_array(mask))
        out.append(host)
    return out
