"""Core layers: Dense, EinsumDense, Embedding, Masking and the layers that are the identity at
inference (Dropout and the noise layers, ActivityRegularization, Identity)."""

import numpy as np

from fkeras.export.converters.activations import emit_activation
from fkeras.export.converters.base import converts
from fkeras.layers.core.dense import Dense
from fkeras.layers.core.einsum_dense import EinsumDense
from fkeras.layers.core.embedding import Embedding
from fkeras.layers.core.identity import Identity
from fkeras.layers.core.masking import Masking
from fkeras.layers.regularization.activity_regularization import ActivityRegularization
from fkeras.layers.regularization.dropout import Dropout
from fkeras.layers.regularization.noise import AlphaDropout, GaussianDropout, GaussianNoise
from fkeras.layers.regularization.spatial_dropout import (
    SpatialDropout1D,
    SpatialDropout2D,
    SpatialDropout3D,
)


def _effective(layer, variable):
    """The weight a LoRA-enabled layer uses (weight + scaled A @ B), else the variable."""
    if getattr(layer, "lora_enabled", False):
        return np.asarray(layer._lora_weight(), np.float32)
    return np.asarray(variable.numpy(), np.float32)


def _refuse_quantized(layer):
    if getattr(layer, "quantization_mode", None):  # its weight holds int8 codes
        raise ValueError(f'Layer "{layer.name}" is quantized ({layer.dtype_policy.name}): '
                         "fkeras does not export int8 layers to ONNX.")


@converts(Dense)
def convert_dense(call):
    b, layer = call.b, call.layer
    _refuse_quantized(layer)
    y = b.op("MatMul", [call.x, b.const(_effective(layer, layer.kernel), f"{layer.name}/kernel")],
             hint=layer.name)
    if layer.bias is not None:
        y = b.op("Add", [y, b.const(call.weight(layer.bias), f"{layer.name}/bias")])
    return [emit_activation(b, layer.activation, y, layer)]


@converts(EinsumDense)
def convert_einsum_dense(call):
    b, layer = call.b, call.layer
    _refuse_quantized(layer)
    kernel = b.const(_effective(layer, layer.kernel), f"{layer.name}/kernel")
    y = b.op("Einsum", [call.x, kernel], equation=layer.equation.replace(" ", ""),
             hint=layer.name)
    if layer.bias is not None:
        y = b.op("Add", [y, b.const(call.weight(layer.bias), f"{layer.name}/bias")])
    return [emit_activation(b, layer.activation, y, layer)]


@converts(Embedding)
def convert_embedding(call):
    b, layer = call.b, call.layer
    _refuse_quantized(layer)
    table = b.const(_effective(layer, layer.embeddings), f"{layer.name}/embeddings")
    indices = b.op("Cast", [call.x], to=7)  # int64 (float inputs are truncated, as Keras casts)
    return [b.op("Gather", [table, indices], axis=0, hint=layer.name)]


@converts(Masking)
def convert_masking(call):
    # Steps whose features all equal mask_value become zeros (the mask itself is not exported:
    # a consumer that would use it refuses to export).
    b, x = call.b, call.x
    differs = b.op("Not", [b.op("Equal", [x, b.scalar(float(call.layer.mask_value))])])
    keep = b.reduce("ReduceMax", b.op("Cast", [differs], to=1), [-1], keepdims=1)
    return [b.op("Mul", [x, keep])]


@converts(Dropout, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D, GaussianNoise,
          GaussianDropout, AlphaDropout, ActivityRegularization, Identity)
def convert_identity(call):
    return [call.b.op("Identity", [call.x], hint=call.layer.name)]
