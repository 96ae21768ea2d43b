"""Differentiable cross-process reductions: the ops behind `moments(..., synchronized=True)`
and `BatchNormalization(synchronized=True)` under a DataParallel distribution.

`cross_replica_sum(x)` is the sum of `x` over ranks. Its backward: the job minimizes
sum_r w_r * L_r (w_r: rank r's share of the batch, `_state.GRAD_WEIGHT`), and rank q's
gradients are multiplied by w_q in the optimizer's allreduce, so the cotangent of rank q's
input is sum_r (w_r * g_r) / w_q: with equal shares, the sum of the ranks' cotangents.
"""

import numpy as np

from fkeras.distribution import _state
from fkeras.ops import math as _math
from fkeras.ops import reshape_ops as _reshape
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class CrossReplicaSum(Op):
    name = "cross_replica_sum"

    def output_spec(self, x):
        return su.shape_of(x)

    def forward(self, dev, x):
        out = np.ascontiguousarray(x, dtype=x.dtype).copy()
        if _state.COMM is not None:
            _state.COMM.allreduce_sum(out)
        return out, None

    def backward(self, dev, saved, g, needs):
        comm, w = _state.COMM, _state.GRAD_WEIGHT
        dx = np.array(g, dtype=dev.dtype, copy=True, order="C")
        if comm is not None:
            if w != 1.0:
                dx *= w
            comm.allreduce_sum(dx)
            if w != 1.0:
                dx /= w
        return (dx,)


def cross_replica_sum(x):
    """The sum of `x` over every process of the job (differentiable); `x` itself in one."""
    return apply(_R["cross_replica_sum"], x)


def synchronized_moments(x, axes, keepdims=False):
    """(mean, biased variance) over `axes` of the global batch: the rows of every process.

    Two passes (the sum, then the sum of squared deviations from the global mean), two
    allreduces of one value per channel, plus one for the row count.
    """
    local = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    count = np.array([float(local)])
    if _state.COMM is not None:
        _state.COMM.allreduce_sum(count)
    inv = 1.0 / count[0]
    mean = _math.multiply(cross_replica_sum(_math.sum(x, axis=axes, keepdims=True)), inv)
    centred = _math.subtract(x, mean)
    var = _math.multiply(
        cross_replica_sum(_math.sum(_math.square(centred), axis=axes, keepdims=True)), inv)
    if not keepdims:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        mean, var = _reshape.reshape(mean, shape), _reshape.reshape(var, shape)
    return mean, var
