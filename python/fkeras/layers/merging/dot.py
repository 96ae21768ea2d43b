"""Dot: per-sample dot product of two tensors along one axis each (Keras's batch_dot)."""

import numpy as np

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.merging.base_merge import Merge
from fkeras.ops import shape_utils as su


class Dot(Merge):
    """Computes, per sample, the dot product of x1 and x2 along `axes`.

    For x1 of shape (N, A..., K, B...) and x2 of shape (N, C..., K, D...), the output is
    (N, A..., B..., C..., D...); two rank-2 inputs give (N, 1).

    Args:
        axes: an int, or a list/tuple of two ints (the axis of x1 and the axis of x2); never 0.
        normalize: whether to L2-normalize both inputs along their axis first, making the
            output the cosine similarity.

    Example:
    ```python
    y = Dot(axes=1)([Input(shape=(8,)), Input(shape=(8,))])   # y.shape == (None, 1)
    ```
    """

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for argument `axes`: it should be a list or an "
                                f"int. Received: axes={axes}")
            if len(axes) != 2:
                raise ValueError("Invalid format for argument `axes`: it should contain two "
                                 f"elements. Received: axes={axes}")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError("Invalid format for argument `axes`: list elements should be "
                                 f"integers. Received: axes={axes}")
        self.axes = list(axes) if isinstance(axes, tuple) else axes
        self.normalize = normalize

    def _pair(self, shape1, shape2):
        axes = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        out = []
        for a, shape in zip(axes, (shape1, shape2)):
            rank = len(shape)
            if rank < 2:
                raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs "
                                 f"with shapes {tuple(shape1)} and {tuple(shape2)}.")
            if not -rank <= a < rank:
                raise ValueError(f'Invalid `axes` for layer "{self.name}": axis {a} is out of '
                                 f"range for an input of rank {rank}. Received: axes="
                                 f"{self.axes}, input shapes {tuple(shape1)}, {tuple(shape2)}")
            out.append(a % rank)
        if 0 in out:
            raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not "
                             "batched, add a dummy batch dimension to your inputs using "
                             "keras.ops.expand_dims(x, 0)")
        return out

    def compute_output_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. "
                             f"Received: input_shape={input_shape}")
        shape1, shape2 = list(input_shape[0]), list(input_shape[1])
        a1, a2 = self._pair(shape1, shape2)
        d1, d2 = shape1[a1], shape2[a2]
        if d1 is not None and d2 is not None and d1 != d2:
            raise ValueError(f"Incompatible input shapes: axis values {d1} (at axis {a1}) != "
                             f"{d2} (at axis {a2}). Full input shapes: {tuple(shape1)}, "
                             f"{tuple(shape2)}")
        b1, b2 = shape1[0], shape2[0]
        if b1 is not None and b2 is not None and b1 != b2:
            raise ValueError("Cannot do batch_dot on inputs with different batch sizes. "
                             f"Received inputs with shapes {tuple(shape1)} and {tuple(shape2)}.")
        shape1.pop(a1)
        shape2.pop(a2)
        out = [b1 if b1 is not None else b2] + shape1[1:] + shape2[1:]
        return tuple(out + [1] if len(out) == 1 else out)

    def _merge(self, inputs):
        x1, x2 = inputs
        s1, s2 = su.shape_of(x1), su.shape_of(x2)
        if isinstance(x1, KerasTensor) or isinstance(x2, KerasTensor):
            return KerasTensor(self.compute_output_shape([s1, s2]))
        a1, a2 = self._pair(s1, s2)
        if self.normalize:
            x1 = ops.normalize(x1, axis=a1)
            x2 = ops.normalize(x2, axis=a2)
        return batch_dot(x1, x2, a1, a2, self.compute_output_shape([s1, s2]))

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update({"axes": self.axes, "normalize": self.normalize})
        return config


def batch_dot(x1, x2, a1, a2, out_shape):
    """x1 (N, ...) and x2 (N, ...) contracted over x1's axis a1 and x2's axis a2 (both > 0),
    as one batched matmul: x1 -> (N, M1, K), x2 -> (N, K, M2)."""
    s1, s2 = su.shape_of(x1), su.shape_of(x2)
    n, k = s1[0], s1[a1]
    perm1 = [i for i in range(len(s1)) if i != a1] + [a1]
    perm2 = [0, a2] + [i for i in range(1, len(s2)) if i != a2]
    m1 = int(np.prod([s1[i] for i in perm1[1:-1]]))
    m2 = int(np.prod([s2[i] for i in perm2[2:]]))
    x1 = ops.reshape(ops.transpose(x1, perm1), (n, m1, k))
    x2 = ops.reshape(ops.transpose(x2, perm2), (n, k, m2))
    return ops.reshape(ops.matmul(x1, x2), out_shape)


def dot(inputs, axes=-1, **kwargs):
    """Functional form of `Dot`: `Dot(axes=axes, **kwargs)(inputs)`."""
    return Dot(axes=axes, **kwargs)(inputs)
