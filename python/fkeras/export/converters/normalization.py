"""Normalization layers (inference): BatchNormalization folded into one Mul and one Add from
the moving statistics; LayerNormalization, GroupNormalization, RMSNormalization and
UnitNormalization as reductions (ReduceMean/ReduceSum, Sqrt, Div)."""

import numpy as np

from fkeras.export.converters.base import converts
from fkeras.layers.normalization.batch_normalization import BatchNormalization
from fkeras.layers.normalization.group_normalization import GroupNormalization
from fkeras.layers.normalization.layer_normalization import LayerNormalization
from fkeras.layers.normalization.rms_normalization import RMSNormalization
from fkeras.layers.normalization.unit_normalization import UnitNormalization


def _broadcast(values, rank, axes):
    """`values` (the kept axes' sizes, or already full rank) as a rank-`rank` array with 1s on
    the other axes."""
    values = np.asarray(values, np.float64)
    if values.ndim == rank:
        return values
    shape = [1] * rank
    for a, n in zip(sorted(axes), values.shape):
        shape[a] = n
    return values.reshape(shape)


def _positive(axes, rank):
    axes = axes if isinstance(axes, (list, tuple)) else [axes]
    return sorted(int(a) % rank for a in axes)


@converts(BatchNormalization)
def convert_batch_norm(call):
    b, layer, rank = call.b, call.layer, call.rank
    axes = list(layer._axes)
    mean = call.weight(layer.moving_mean, np.float64)
    var = call.weight(layer.moving_variance, np.float64)
    gamma = call.weight(layer.gamma, np.float64) if layer.gamma is not None else 1.0
    beta = call.weight(layer.beta, np.float64) if layer.beta is not None else 0.0
    if getattr(layer, "virtual_batch_size", None) is not None:
        # tf_keras's ghost-batch parameters carry an extra axis 1; inference ignores it.
        mean, var, gamma, beta = (np.squeeze(np.asarray(v), 1) if np.ndim(v) > 1 else v
                                  for v in (mean, var, gamma, beta))
    scale = gamma / np.sqrt(var + layer.epsilon)
    shift = beta - mean * scale
    scale = _broadcast(np.broadcast_to(scale, mean.shape), rank, axes)
    shift = _broadcast(np.broadcast_to(shift, mean.shape), rank, axes)
    y = b.op("Mul", [call.x, b.const(scale, f"{layer.name}/scale")], hint=layer.name)
    return [b.op("Add", [y, b.const(shift, f"{layer.name}/shift")])]


def _normalize(b, x, axes, epsilon, center=True):
    """(x - mean) / sqrt(var + epsilon) over `axes` (without the centring when center=False:
    x / sqrt(var + epsilon))."""
    mean = b.reduce("ReduceMean", x, axes)
    diff = b.op("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.op("Mul", [diff, diff]), axes)
    denom = b.op("Sqrt", [b.op("Add", [var, b.scalar(epsilon)])])
    return b.op("Div", [diff if center else x, denom])


def _affine(call, y, gamma, beta, axes):
    b, layer, rank = call.b, call.layer, call.rank
    if gamma is not None:
        g = _broadcast(call.weight(gamma), rank, axes)
        y = b.op("Mul", [y, b.const(g, f"{layer.name}/gamma")])
    if beta is not None:
        bt = _broadcast(call.weight(beta), rank, axes)
        y = b.op("Add", [y, b.const(bt, f"{layer.name}/beta")])
    return y


@converts(LayerNormalization)
def convert_layer_norm(call):
    layer = call.layer
    axes = list(layer._axes)
    if layer.rms_scaling:
        y = _normalize(call.b, call.x, axes, layer.epsilon, center=False)
        return [_affine(call, y, layer.gamma, None, axes)]
    y = _normalize(call.b, call.x, axes, layer.epsilon)
    return [_affine(call, y, layer.gamma, layer.beta, axes)]


@converts(GroupNormalization)
def convert_group_norm(call):
    b, layer, rank = call.b, call.layer, call.rank
    k, g = layer._axis, layer.groups
    channels = call.shape[k]
    grouped_shape = b.concat_shape([b.dims(call.x, 0, k), [g, channels // g]] +
                                   ([b.dims(call.x, k + 1)] if k + 1 < rank else []))
    grouped = b.op("Reshape", [call.x, grouped_shape])
    norm_axes = [a for a in range(1, rank + 1) if a != k]
    y = _normalize(b, grouped, norm_axes, layer.epsilon)
    y = b.op("Reshape", [y, b.op("Shape", [call.x])])
    return [_affine(call, y, layer.gamma, layer.beta, [k])]


@converts(RMSNormalization)
def convert_rms_norm(call):
    b, layer, rank = call.b, call.layer, call.rank
    axes = _positive(layer.axis, rank)
    mean_square = b.reduce("ReduceMean", b.op("Mul", [call.x, call.x]), axes)
    denom = b.op("Sqrt", [b.op("Add", [mean_square, b.scalar(layer.epsilon)])])
    y = b.op("Div", [call.x, denom])
    scale = _broadcast(call.weight(layer.scale), rank, axes)
    return [b.op("Mul", [y, b.const(scale, f"{layer.name}/scale")])]


@converts(UnitNormalization)
def convert_unit_norm(call):
    # x * min(rsqrt(sum(x^2)), 1 / epsilon) = x / max(sqrt(sum(x^2)), epsilon), epsilon 1e-12.
    b, layer, rank = call.b, call.layer, call.rank
    axes = _positive(layer.axis, rank)
    norm = b.op("Sqrt", [b.reduce("ReduceSum", b.op("Mul", [call.x, call.x]), axes)])
    return [b.op("Div", [call.x, b.op("Max", [norm, b.scalar(1e-12)])])]
