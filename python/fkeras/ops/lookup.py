"""The embedding lookup op: rows of a table gathered by integer indices."""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class Embedding(Op):
    """y = table[indices]: indices of any shape (integers), table (V, D); y = indices + (D,)."""

    name = "embedding"
    device_native = True

    def output_spec(self, indices, table):
        return su.shape_of(indices) + su.shape_of(table)[1:]

    def forward(self, dev, indices, table):
        V, D = table.shape
        if type(indices) is not np.ndarray:  # a device buffer
            if indices.dtype == np.int64:  # the kernel checks the range on the device
                idx = indices.reshape(-1)
            else:  # no cast kernel on the device: converted on the host
                idx = dev.asarray(self._host_indices(dev.to_numpy(indices), V))
            y = dev.empty((idx.size, D))
            try:
                dev.kernels["embedding_forward"](y, idx, table, idx.size, V, D)
            except ValueError:  # an index out of range: the same message as on the host
                self._host_indices(dev.to_numpy(idx), V)
                raise
            return y.reshape(tuple(indices.shape) + (D,)), (idx, V, D)
        idx = self._host_indices(indices, V)
        y = dev.empty((idx.size, D))
        dev.kernels["embedding_forward"](y, idx, table, idx.size, V, D)
        return y.reshape(np.shape(indices) + (D,)), (idx, V, D)

    @staticmethod
    def _host_indices(indices, V):
        if np.asarray(indices).dtype.kind == "f":
            _check_whole(indices)
        idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= V):
            bad = idx[(idx < 0) | (idx >= V)][0]
            raise ValueError(f"`embedding`: index {bad} is out of range for a table of {V} rows "
                             f"(valid indices are 0 to {V - 1}).")
        return idx

    def backward(self, dev, saved, g, needs):
        idx, V, D = saved
        dtable = None
        if needs[1]:
            dtable = dev.empty((V, D))
            dev.kernels["embedding_backward"](dtable, dev.contiguous(g).reshape(-1, D),
                                              idx, idx.size, V, D)
        return None, dtable


def _check_whole(indices):
    """Float indices (a float Input feeding an Embedding, as Keras allows) must be whole
    numbers: Keras truncates 1.5 to 1 and turns NaN into an arbitrary row."""
    bad = ~np.isfinite(indices) | (indices != np.trunc(indices))
    if bad.any():
        raise ValueError("`embedding`: indices must be whole numbers (integers), received the "
                         f"{np.asarray(indices).dtype} value {indices[bad].flat[0].item()!r}.")


def embedding(indices, table):
    """table[indices] with a gradient for the table (the Embedding layer's op)."""
    return apply(_R["embedding"], indices, table)
