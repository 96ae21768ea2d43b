"""The rule of the ops written against the device's array namespace (`xp = dev.xp`: NumPy on
the host, fkeras/backend/cuda_xp.py on the GPU): a call runs on a non-host device's buffers
when its inputs are float32 data there (ops/device_dispatch.py); any other call (integer,
bool or float64 device buffers) runs on the host."""

from fkeras.backend.cuda_xp import float32_only  # noqa: F401  (also used by loss_ops)


def float32_native(op, inputs, attrs):
    """`Op.native_on` of the xp-written ops: every input is float32 data or a number."""
    return float32_only(*inputs)
