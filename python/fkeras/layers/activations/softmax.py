"""Softmax: exp(x) / sum(exp(x)) along one axis or several, with an optional call mask."""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.ops import math as fmath
from fkeras.ops import shape_utils as su

_LARGE_NEGATIVE = -1e9  # Keras 3's fill value for masked logits (float32)


class Softmax(Layer):
    """Softmax activation layer.

    Args:
        axis: int or list of ints, the axis (axes) normalized over (default -1).

    Call arguments:
        inputs: the logits.
        mask: optional, broadcastable to `inputs` (aligned on the right, no more dimensions);
            1/True keeps a position, 0/False masks it (its logit is replaced by -1e9 and its
            output set to 0, as Keras 3 does). A non-boolean mask means `mask > 0.5`.

    Example:
    ```python
    y = Softmax()(np.array([[1.0, 2.0, 1.0]]))   # [[0.2119, 0.5761, 0.2119]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        if not axes or any(isinstance(a, bool) or not isinstance(a, (int, np.integer))
                           for a in axes):
            raise ValueError(f'Invalid `axis` for layer "{self.name}": expected an int or a '
                             f"list of ints. Received: axis={axis}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.supports_masking = True
        self.built = True

    def _axes(self, rank):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f'Invalid `axis` for layer "{self.name}": axis {a} is out of '
                                 f"range for an input of rank {rank}. Received: "
                                 f"axis={self.axis}")
        return sorted({a % rank for a in axes})

    def call(self, inputs, mask=None):
        shape = su.shape_of(inputs)
        axes = self._axes(len(shape))
        if mask is not None:
            mask = self._check_mask(mask, shape)
            inputs = fmath.where(mask, inputs, _LARGE_NEGATIVE)
        if len(axes) == 1:
            out = ops.softmax(inputs, axis=axes[0])
        elif isinstance(inputs, KerasTensor):
            out = KerasTensor(shape, inputs.dtype)
        else:
            out = _softmax_over_axes(inputs, axes, shape)
        if mask is not None:
            out = fmath.where(mask, out, 0.0)
        return out

    @staticmethod
    def _check_mask(mask, shape):
        mshape = su.shape_of(mask)
        if len(mshape) > len(shape):
            raise ValueError("The `mask` must be broadcastable to `inputs` and must not have more "
                             f"dimensions. Received: inputs.shape={tuple(shape)}, "
                             f"mask.shape={tuple(mshape)}")
        for m, i in zip(mshape[::-1], shape[::-1]):
            if m is not None and i is not None and m not in (1, i):
                raise ValueError("The `mask` must be broadcastable to `inputs`. Each mask "
                                 "dimension must be 1 or match the corresponding input "
                                 f"dimension. Received: inputs.shape={tuple(shape)}, "
                                 f"mask.shape={tuple(mshape)}")
        if isinstance(mask, KerasTensor):
            return mask
        mask = _devices.host_array(mask)
        return mask if mask.dtype == bool else mask > 0.5

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


def _softmax_over_axes(x, axes, shape):
    """Softmax over several axes: move them last, merge them, softmax, undo."""
    rank = len(shape)
    rest = [i for i in range(rank) if i not in axes]
    perm = rest + list(axes)
    moved = ops.transpose(x, perm)
    lead = tuple(shape[i] for i in rest)
    flat = ops.reshape(moved, lead + (int(np.prod([shape[a] for a in axes])),))
    out = ops.reshape(ops.softmax(flat, axis=-1), tuple(shape[i] for i in perm))
    return ops.transpose(out, tuple(np.argsort(perm)))
