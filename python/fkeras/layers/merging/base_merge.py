"""The shared body of the merging layers: a list of inputs in, one tensor out."""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.ops import shape_utils as su


def elementwise_output_shape(shape1, shape2):
    """Broadcast of two batch-less shapes aligned on the right (Keras's merge rule)."""
    if len(shape1) < len(shape2):
        return elementwise_output_shape(shape2, shape1)
    if not shape2:
        return tuple(shape1)
    out = list(shape1[:-len(shape2)])
    for i, j in zip(shape1[-len(shape2):], shape2):
        if i is None or j is None:
            out.append(None)
        elif i == 1 or j == 1:
            out.append(j if i == 1 else i)
        elif i != j:
            raise ValueError("Inputs have incompatible shapes. "
                             f"Received shapes {tuple(shape1)} and {tuple(shape2)}")
        else:
            out.append(i)
    return tuple(out)


class Merge(Layer):
    """Checks that it is called on a list of tensors; subclasses define `_merge(inputs)`."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            shape = tuple(getattr(inputs, "shape", ()))
            raise ValueError("A merge layer should be called on a list of inputs. "
                             f"Received: input_shape={shape} (not a list of shapes)")
        if len(inputs) < 1:
            raise ValueError("A merge layer should be called on a list of at least 1 input. "
                             "Got 0 inputs.")
        shapes = [tuple(su.shape_of(x)) for x in inputs]
        self._check_shapes(shapes, any(isinstance(x, KerasTensor) for x in inputs))
        return super().__call__(list(inputs), *args, **kwargs)

    def _check_shapes(self, shapes, symbolic):
        """Keras's shape checks, before any computation."""
        self.compute_output_shape(shapes)

    def call(self, inputs):
        return self._merge(list(inputs))

    def compute_output_shape(self, input_shape):
        batch = {s[0] for s in input_shape if s} - {None}
        if len(batch) > 1:
            raise ValueError("Cannot merge tensors with different batch sizes. Received tensors "
                             f"with shapes {[tuple(s) for s in input_shape]}")
        out = tuple(input_shape[0])[1:]
        for shape in input_shape[1:]:
            out = elementwise_output_shape(out, tuple(shape)[1:])
        first_batch = next(iter(batch)) if batch else None
        return (first_batch,) + out

    def compute_mask(self, inputs, mask=None):
        """The OR of the input masks (None when any input has none), as Keras."""
        if mask is None:
            return None
        if not isinstance(mask, (list, tuple)):
            raise ValueError(f"`mask` should be a list. Received: mask={mask}")
        if len(mask) != len(inputs):
            raise ValueError("The lists `inputs` and `mask` should have the same length. "
                             f"Received: inputs of length {len(inputs)}, and mask of length "
                             f"{len(mask)}")
        if any(m is None for m in mask):
            return None
        if any(isinstance(m, KerasTensor) for m in mask):
            return KerasTensor(tuple(mask[0].shape), "bool")
        out = _devices.host_array(mask[0], bool)
        for m in mask[1:]:
            out = np.logical_or(out, np.asarray(m, bool))
        return out

    def _expand_to_same_rank(self, inputs):
        """Lower-rank inputs gain axes at position 1, as Keras does before merging."""
        ranks = [len(x.shape) if isinstance(x, KerasTensor) else len(su.shape_of(x))
                 for x in inputs]
        top = max(ranks)
        out = []
        for x, r in zip(inputs, ranks):
            for _ in range(top - r):
                x = ops.expand_dims(x, 1)
            out.append(x)
        return out


class ElementwiseMerge(Merge):
    """Folds the binary op `_op` left to right over the inputs, brought to one rank first
    (Add, Multiply, Maximum, Minimum; Average divides the sum)."""

    _op = None
    _fk_batch_checked = False

    def _check_shapes(self, shapes, symbolic):
        """As Keras 3: batch sizes must agree when the layer is built (its first call) and in
        every symbolic call; later eager calls broadcast a batch of 1 (keras-io's Perceiver
        adds its (1, latent, dim) latent array to a batch of attention outputs)."""
        if symbolic or not self._fk_batch_checked:
            self.compute_output_shape(shapes)
            self._fk_batch_checked = True
            return
        out = shapes[0][1:]
        for shape in shapes[1:]:
            out = elementwise_output_shape(out, shape[1:])

    def _merge(self, inputs):
        inputs = self._expand_to_same_rank(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._op(out, x)
        return out
