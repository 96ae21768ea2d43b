"""Attention through Einsum/MatMul and Softmax: MultiHeadAttention (its projections are
EinsumDense sub-layers, converted as such) and Attention (Luong dot or concat scores).

Supported masks: `use_causal_mask=True` (a Trilu over the dynamic (T, S) sizes) and an
explicit `attention_mask` tensor; masked scores get -1e9 before the softmax, as Keras does.
Keras masks carried by the inputs (query/value/key masks) are not part of the graph.
"""

import math

import numpy as np

from fkeras.export.converters.base import converts
from fkeras.layers.attention.attention import Attention
from fkeras.layers.attention.multi_head_attention import MultiHeadAttention

_LARGE_NEGATIVE = -1e9


def _causal_mask(b, q, k):
    """The (T, S) boolean mask j <= i from the time axes of q (B, T, ...) and k (B, S, ...)."""
    size = b.op("Concat", [b.dims(q, 1, 2), b.dims(k, 1, 2)], axis=0)
    ones = b.op("ConstantOfShape", [size],
                value=b.numpy_helper.from_array(np.ones(1, np.int64)))
    return b.op("Cast", [b.op("Trilu", [ones], upper=0)], to=9)


def _masked(b, scores, mask):
    return b.op("Where", [mask, scores, b.scalar(_LARGE_NEGATIVE)])


def _combine(b, parts):
    mask = None
    for p in parts:
        mask = p if mask is None else b.op("And", [mask, p])
    return mask


@converts(MultiHeadAttention)
def convert_multi_head_attention(call):
    b, layer, kw = call.b, call.layer, call.kwargs
    call.refuse_mask()
    query = call.args[0]
    value = call.args[1] if len(call.args) > 1 else kw["value"]
    key = kw.get("key") or (call.args[2] if len(call.args) > 2 else value)
    if len(call.shape) != 3 or tuple(layer._attention_axes) != (1,):
        raise call.fail("only rank-3 inputs (batch, time, features) attending over time are "
                        f"exportable; received query shape {call.shape} with attention_axes="
                        f"{layer._attention_axes}")
    if layer._sliding_window is not None:
        raise call.fail("sliding_window has no ONNX conversion")
    for name in ("query_mask", "value_mask", "key_mask"):
        if kw.get(name) is not None:
            raise call.fail(f"`{name}` is not part of the exported graph")
    qs = call.shape
    ks = call.in_shapes[call.inputs.index(key)]
    vs = call.in_shapes[call.inputs.index(value)]

    def project(dense, x, shape):
        out = tuple(dense.compute_output_shape(shape))
        return call.sub(dense, [x], [shape], [out])[0]

    q = project(layer.query_dense, query, qs)
    k = project(layer.key_dense, key, ks)
    v = project(layer.value_dense, value, vs)
    q = b.op("Mul", [q, b.scalar(1.0 / math.sqrt(float(layer._key_dim)))])
    scores = b.op("Einsum", [q, k], equation="btnh,bsnh->bnts", hint=f"{layer.name}/scores")
    parts = []
    if kw.get("use_causal_mask"):
        parts.append(_causal_mask(b, query, value))
    if kw.get("attention_mask") is not None:
        m = b.op("Cast", [kw["attention_mask"]], to=9)
        parts.append(b.unsqueeze(m, [1]))  # (B, T, S) -> (B, 1, T, S): one for every head
    mask = _combine(b, parts)
    if mask is not None:
        scores = _masked(b, scores, mask)
    probs = b.op("Softmax", [scores], axis=-1)
    out = b.op("Einsum", [probs, v], equation="bnts,bsnh->btnh")
    if layer._use_gate:
        gate = project(layer._gate_dense, query, qs)
        out = b.op("Mul", [out, gate])
    heads = tuple(qs[:-1]) + (layer._num_heads, layer._value_dim)
    out = call.sub(layer.output_dense, [out], [heads],
                   [tuple(layer.output_dense.compute_output_shape(heads))])[0]
    return [out, probs] if kw.get("return_attention_scores") else [out]


@converts(Attention)
def convert_attention(call):
    b, layer, kw = call.b, call.layer, call.kwargs
    call.refuse_mask()
    if kw.get("mask") is not None:
        raise call.fail("`mask` is not part of the exported graph")
    inputs = call.args[0]
    q, v = inputs[0], inputs[1]
    k = inputs[2] if len(inputs) > 2 else v
    if layer.score_mode == "dot":
        scores = b.op("MatMul", [q, b.transpose(k, [0, 2, 1])], hint=f"{layer.name}/scores")
        if layer.scale is not None:
            scores = b.op("Mul", [scores, b.const(call.weight(layer.scale), "scale")])
    else:  # concat: weight * sum(tanh(scale * (q[:, :, None] + k[:, None])), -1)
        total = b.op("Add", [b.unsqueeze(q, [2]), b.unsqueeze(k, [1])])
        if layer.scale is not None:
            total = b.op("Mul", [total, b.const(call.weight(layer.scale), "scale")])
        summed = b.reduce("ReduceSum", b.op("Tanh", [total]), [-1], keepdims=0)
        scores = b.op("Mul", [summed, b.const(call.weight(layer.concat_score_weight),
                                              "concat_score_weight")])
    if kw.get("use_causal_mask"):
        scores = _masked(b, scores, b.unsqueeze(_causal_mask(b, q, v), [0]))
    probs = b.op("Softmax", [scores], axis=-1)
    out = b.op("MatMul", [probs, v], hint=layer.name)
    return [out, probs] if kw.get("return_attention_scores") else [out]
