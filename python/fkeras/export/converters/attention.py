"""Attention through Einsum/MatMul and Softmax: MultiHeadAttention and GroupedQueryAttention
(their projections are EinsumDense sub-layers, converted as such), Attention (Luong dot or
concat scores) and AdditiveAttention (Bahdanau).

Supported masks: `use_causal_mask=True` (a Trilu over the dynamic (T, S) sizes), the
sliding window (a band from Range), and an explicit `attention_mask` tensor; masked scores
get -1e9 before the softmax, as Keras does.
Keras masks carried by the inputs (query/value/key masks) are not part of the graph.
"""

import math

import numpy as np

from fkeras.export.converters.base import converts
from fkeras.layers.attention.additive_attention import AdditiveAttention
from fkeras.layers.attention.attention import Attention
from fkeras.layers.attention.grouped_query_attention import GroupedQueryAttention
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


def _band_mask(b, q, k, window):
    """The (T, S) boolean mask |i - j| < window (Keras's sliding window)."""
    zero, one = b.const(0, "zero", np.int64), b.const(1, "one", np.int64)
    t = b.op("Range", [zero, b.squeeze(b.dims(q, 1, 2), [0]), one])
    s = b.op("Range", [zero, b.squeeze(b.dims(k, 1, 2), [0]), one])
    distance = b.op("Abs", [b.op("Sub", [b.unsqueeze(t, [1]), b.unsqueeze(s, [0])])])
    return b.op("Less", [distance, b.const(int(window), "window", np.int64)])


def _repeat_heads(b, x, repeats, head_dim):
    """(B, S, H, D) -> (B, S, H * repeats, D), each head repeated in place (ops.repeat)."""
    if repeats == 1:
        return x
    y = b.op("Expand", [b.unsqueeze(x, [3]), b.ints([1, 1, 1, repeats, 1])])
    return b.reshape(y, [0, 0, -1, head_dim])


def heads_attention(call, dense, scale, repeats=1, head_dim=None, window=None, gated=False):
    """Projected multi-head attention shared by MultiHeadAttention and GroupedQueryAttention.

    Args:
        dense: {"query", "key", "value", "gate", "output"}: the EinsumDense sub-layers.
        scale: multiplies the projected query.
        repeats, head_dim: key/value heads are repeated `repeats` times (grouped queries).
        window: the sliding window, or None.
        gated: whether the gate projection multiplies the attention output.
    """
    b, kw = call.b, call.kwargs
    call.refuse_mask()
    query = call.args[0]
    value = call.args[1] if len(call.args) > 1 else kw["value"]
    key = kw.get("key") or (call.args[2] if len(call.args) > 2 else value)
    for name in ("query_mask", "value_mask", "key_mask"):
        if kw.get(name) is not None:
            raise call.fail(f"`{name}` is not part of the exported graph")
    qs = call.shape

    def project(layer, x):
        shape = call.in_shapes[call.inputs.index(x)]
        return call.sub(layer, [x], [shape], [tuple(layer.compute_output_shape(shape))])[0]

    q = b.op("Mul", [project(dense["query"], query), b.scalar(scale)])
    k = _repeat_heads(b, project(dense["key"], key), repeats, head_dim)
    v = _repeat_heads(b, project(dense["value"], value), repeats, head_dim)
    scores = b.op("Einsum", [q, k], equation="btnh,bsnh->bnts",
                  hint=f"{call.layer.name}/scores")
    parts = []
    if kw.get("use_causal_mask"):
        parts.append(_causal_mask(b, query, value))
    if window is not None:
        parts.append(_band_mask(b, query, value, window))
    if kw.get("attention_mask") is not None:
        m = b.op("Cast", [kw["attention_mask"]], to=9)
        parts.append(b.unsqueeze(m, [1]))  # (B, T, S) -> (B, 1, T, S): one for every head
    mask = _combine(b, parts)
    if mask is not None:
        scores = _masked(b, scores, mask)
    probs = b.op("Softmax", [scores], axis=-1)
    out = b.op("Einsum", [probs, v], equation="bnts,bsnh->btnh")
    if gated:
        out = b.op("Mul", [out, project(dense["gate"], query)])
    out_dense = dense["output"]
    heads = tuple(qs[:-1]) + tuple(out_dense.kernel.shape[:2])
    out = call.sub(out_dense, [out], [heads], [tuple(out_dense.compute_output_shape(heads))])[0]
    return [out, probs] if kw.get("return_attention_scores") else [out]


@converts(MultiHeadAttention)
def convert_multi_head_attention(call):
    layer = call.layer
    if len(call.shape) != 3 or tuple(layer._attention_axes) != (1,):
        raise call.fail("only rank-3 inputs (batch, time, features) attending over time are "
                        f"exportable; received query shape {call.shape} with attention_axes="
                        f"{layer._attention_axes}")
    dense = {"query": layer.query_dense, "key": layer.key_dense, "value": layer.value_dense,
             "gate": getattr(layer, "_gate_dense", None), "output": layer.output_dense}
    return heads_attention(call, dense, 1.0 / math.sqrt(float(layer._key_dim)),
                           window=layer._sliding_window, gated=layer._use_gate)


@converts(GroupedQueryAttention)
def convert_grouped_query_attention(call):
    layer = call.layer
    dense = {"query": layer._query_dense, "key": layer._key_dense,
             "value": layer._value_dense, "gate": getattr(layer, "_gate_dense", None),
             "output": layer._output_dense}
    return heads_attention(call, dense, layer._inverse_sqrt_head_dim, layer.num_repeats,
                           layer.head_dim, layer.sliding_window, layer.use_gate)


@converts(Attention, AdditiveAttention)
def convert_attention(call):
    b, layer, kw = call.b, call.layer, call.kwargs
    call.refuse_mask()
    if kw.get("mask") is not None:
        raise call.fail("`mask` is not part of the exported graph")
    inputs = call.args[0]
    q, v = inputs[0], inputs[1]
    k = inputs[2] if len(inputs) > 2 else v
    if isinstance(layer, AdditiveAttention):  # sum(scale * tanh(q[:, :, None] + k[:, None]))
        total = b.op("Tanh", [b.op("Add", [b.unsqueeze(q, [2]), b.unsqueeze(k, [1])])])
        if layer.scale is not None:
            total = b.op("Mul", [total, b.const(call.weight(layer.scale), "scale")])
        scores = b.reduce("ReduceSum", total, [-1], keepdims=0)
    elif layer.score_mode == "dot":
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
