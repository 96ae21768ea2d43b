"""Plan-level fusion: BatchNormalization followed by ReLU runs as one op, and so does a Conv2D
followed by a non-overlapping 'valid' MaxPooling2D (`fuse_conv_pool`) and a BN + ReLU followed
by such a pool (`fuse_bn_relu_pool`), both at the end.

A ForwardPlan (forward_plan.py) calls each layer's `call` in turn; BN then ReLU costs four
passes over the activation in the forward (BN statistics, BN write, ReLU read + write) and the
backward adds a ReLU pass before BN's two. `fuse_bn_relu` rewrites the plan's steps so that a
BatchNormalization step whose output feeds only an `Activation("relu")` (or a default `ReLU()`)
step runs `batch_norm_relu_train` / `batch_normalization_relu` (ops/normalization.py): the
ReLU happens in BN's write pass and its mask gates the cotangent inside BN's backward passes.
The ReLU step is removed; the BN step produces the ReLU's output tensor.

The pair is fused only when nothing can tell the difference: both steps call the layers' own
`call` directly (no masks in the graph, no activity regularizer, no remat, no nested plan; a
mixed_bfloat16 layer's products scope is kept, and BN has no products), the BN layer is exactly `BatchNormalization` called on one tensor, the BN output
is not a model output and has no other consumer. At run time, a BN configuration other than the
plain training/inference ones (renorm, ghost batches, adjustment, `fused=False`, synchronized
statistics under a distribution) runs the unfused pair. Eager `model(x)` outside the plan,
subclassed models and custom `train_step`s calling `self(x)` are untouched.

Conv2D -> MaxPooling2D (`fuse_conv_pool`): the forward writes the conv output (N, P, Q, K),
the pool reads it, its backward writes the cotangent back at that size and the conv's backward
reads it with y again. The fused step runs `conv2d_maxpool2d` (ops/conv_pool.py): the pool in
the convolution's store (the output is never written; only the pooled values and indices) and
one pass from the pooled cotangent to the conv's dz and bias gradient; bit-identical to the
pair. The same discipline as BN + ReLU: both steps direct calls, the Conv2D exactly `Conv2D`
(channels_last, a linear / relu / leaky_relu (slope >= 0) activation, no LoRA) called on one
tensor, its output not a model output with the pool as its only consumer, the pool exactly
`MaxPooling2D` (channels_last, 'valid', or 'same' where its windows tile the input exactly,
strides == pool_size) called on that tensor. The environment variable
FKERAS_FUSE_CONV_POOL=0 (read when a plan is built) turns it off, for comparisons.

BatchNormalization -> ReLU -> MaxPooling2D (`fuse_bn_relu_pool`, run before `fuse_bn_relu`):
the BN + ReLU pair above still writes its (N, H, W, C) output for the pool to read, and the
pool's backward writes the cotangent back at that size for BN's two backward passes. The fused
step runs `batch_norm_relu_max_pool_train` (ops/bn_relu_pool.py): the pool in BN's write pass
(only the pooled values and indices are written) and BN's backward passes fed from the pooled
cotangent tile by tile; bit-identical to the chain. The BN + ReLU pair as above with BN's kept
axis the last of a rank-4 input, the ReLU's output not a model output with the pool as its
only consumer, the pool as in `fuse_conv_pool`. At run time everything but a plain training
call (inference, a frozen layer, the BN configurations above) runs the BN + ReLU step then the
pool's call. FKERAS_FUSE_BN_POOL=0 (read when a plan is built) turns it off.
"""

import os

from fkeras.backend.devices import bf16_products
from fkeras.layers.layer import Layer

__all__ = ["fuse_bn_relu", "fuse_bn_relu_pool", "fuse_conv_pool"]


def fuse_bn_relu(plan, model):
    """Rewrites `plan.steps` in place, fusing each eligible BN -> ReLU pair (see above).

    Args:
        plan: a ForwardPlan, its steps built from `model._nodes`.
        model: the Functional model of the plan.

    Returns:
        The number of pairs fused.
    """
    return _fuse_pairs(plan, model, _plain_bn_step, _plain_relu_step,
                       lambda s, t: _bn_relu_runner(s.layer, t.fn))


def _switched_off(variable):
    """Whether the environment turns a fusion off (`variable`=0)."""
    return os.environ.get(variable, "1").strip() == "0"


def _fuse_pairs(plan, model, first_ok, second_ok, runner):
    """`_fuse_chain` of two steps."""
    return _fuse_chain(plan, model, first_ok, [second_ok], runner)


def _fuse_chain(plan, model, first_ok, links, runner):
    """The walk every fusion shares: each step `s` that `first_ok(s)` accepts, followed by a
    chain of steps t1, t2, ... (one per predicate in `links`), where each link's single output
    is not a model output and feeds exactly one single-output node whose step `t` passes
    `link_ok(t, that tensor)`, takes `runner(s, t1, t2, ...)` as its function (inside the
    layer's bf16-products scope when s's direct call runs in one, under mixed_bfloat16) and the
    last step's outputs; t1, t2, ... are removed.
    Steps are matched to nodes by their output tensors, so one fusion may run after another
    removed steps. Returns the number of chains fused."""
    consumers = {}
    for node in model._nodes:
        for t in node.input_tensors:
            consumers.setdefault(id(t), []).append(node)
    step_by_out = {i: st for st in plan.steps for i in st.out_ids}
    outputs = set(plan.output_ids)
    fused, count = set(), 0
    for s in plan.steps:
        if id(s) in fused or not first_ok(s):
            continue
        chain = [s]
        for link_ok in links:
            out = chain[-1].out_ids[0]
            users = consumers.get(out, [])
            if out in outputs or len(users) != 1 or len(users[0].output_tensors) != 1:
                break
            t = step_by_out.get(id(users[0].output_tensors[0]))
            if t is None or t in chain or id(t) in fused or not link_ok(t, out):
                break
            chain.append(t)
        if len(chain) != len(links) + 1:
            continue
        fn = runner(*chain)
        s.fn = _in_products_scope(fn) if s.fn.__func__ is not type(s.layer).call else fn
        s.out_ids = list(chain[-1].out_ids)
        fused.update(id(t) for t in chain[1:])
        count += 1
    if fused:
        plan.steps = [s for s in plan.steps if id(s) not in fused]
    return count


def _in_products_scope(fn):
    """`fn` run in the bf16-products scope (the fused step of a mixed_bfloat16 layer)."""
    def run(inputs, training=None):
        with bf16_products():
            return fn(inputs, training)

    return run


def _direct(s):
    """The step calls its layer's own `call` (plain, or in a mixed_bfloat16 layer's products
    scope), not `__call__` or a sub-plan."""
    if getattr(s.fn, "__self__", None) is not s.layer:
        return False
    func = getattr(s.fn, "__func__", None)
    return func is type(s.layer).call or func is Layer._fk_call_direct


def _plain_bn_step(s):
    from fkeras.layers.normalization.batch_normalization import BatchNormalization

    return (type(s.layer) is BatchNormalization and s.single and len(s.out_ids) == 1
            and not s.logits and not s.cast and _direct(s))


def _plain_relu_step(t, tensor_id):
    from fkeras import activations
    from fkeras.layers.activations.relu import ReLU
    from fkeras.layers.core.activation import Activation

    if not (t.single and t.args == tensor_id and len(t.out_ids) == 1 and not t.logits
            and not t.cast and _direct(t)):
        return False
    layer = t.layer
    if type(layer) is Activation:
        return layer.activation is activations.relu
    if type(layer) is ReLU:
        return (layer.max_value is None and layer.negative_slope == 0
                and layer.threshold == 0)
    return False


def _bn_relu_runner(layer, relu_call):
    """The fused step: `layer.call` followed by `relu_call`, as one op where it applies."""
    from fkeras.ops import normalization

    def run(inputs, training=None):
        if not (training and layer.trainable):
            return normalization.batch_normalization_relu(
                inputs, layer.moving_mean, layer.moving_variance, axis=layer._axes,
                offset=layer.beta, scale=layer.gamma, epsilon=layer.epsilon)
        if not layer._fused_training():
            return relu_call(layer.call(inputs, training=training))
        y, mean, var = normalization.batch_norm_relu_train(
            inputs, layer.gamma, layer.beta, axis=layer._axes, epsilon=layer.epsilon)
        layer._update_moving(layer.moving_mean, mean)
        layer._update_moving(layer.moving_variance, var)
        return y

    return run


# ---- BatchNormalization + ReLU + MaxPooling2D ------------------------------------------------

def fuse_bn_relu_pool(plan, model):
    """Rewrites `plan.steps` in place, fusing each eligible BN -> ReLU -> MaxPooling2D chain
    (see the module docstring); it runs before `fuse_bn_relu`, which then fuses the BN -> ReLU
    pairs left.

    Args:
        plan: a ForwardPlan, its steps built from `model._nodes`.
        model: the Functional model of the plan.

    Returns:
        The number of chains fused (0 when FKERAS_FUSE_BN_POOL=0).
    """
    if _switched_off("FKERAS_FUSE_BN_POOL"):
        return 0
    return _fuse_chain(plan, model, _channels_last_bn_step, [_plain_relu_step, _plain_pool_step],
                       lambda s, r, t: _bn_relu_pool_runner(s.layer, r.fn, t.fn, t.layer))


def _channels_last_bn_step(s):
    # The kept axis is the last of a rank-4 input: the pool that must follow takes only those.
    return _plain_bn_step(s) and tuple(s.layer._axes) == (3,)


def _bn_relu_pool_runner(layer, relu_call, pool_call, pool_layer):
    """The fused step: BN (training statistics), ReLU and the pool as one op where it applies;
    otherwise the BN + ReLU step (`_bn_relu_runner`: inference, frozen or non-plain BN) then
    the pool's own call."""
    from fkeras.ops.bn_relu_pool import batch_norm_relu_max_pool_train

    pair = _bn_relu_runner(layer, relu_call)

    def run(inputs, training=None):
        if not (training and layer.trainable and layer._fused_training()):
            return pool_call(pair(inputs, training))
        y, mean, var = batch_norm_relu_max_pool_train(inputs, layer.gamma, layer.beta,
                                                      layer.epsilon, pool_layer.pool_size)
        layer._update_moving(layer.moving_mean, mean)
        layer._update_moving(layer.moving_variance, var)
        return y

    return run


# ---- Conv2D + MaxPooling2D --------------------------------------------------------------------

def fuse_conv_pool(plan, model):
    """Rewrites `plan.steps` in place, fusing each eligible Conv2D -> MaxPooling2D pair (see
    the module docstring); it may run after `fuse_bn_relu` has removed steps.

    Args:
        plan: a ForwardPlan, its steps built from `model._nodes`.
        model: the Functional model of the plan.

    Returns:
        The number of pairs fused (0 when FKERAS_FUSE_CONV_POOL=0).
    """
    if _switched_off("FKERAS_FUSE_CONV_POOL"):
        return 0
    return _fuse_pairs(plan, model, _plain_conv_step, _plain_pool_step,
                       lambda s, t: _conv_pool_runner(s.layer, t.layer, s.fn))


def _conv_activation(layer):
    """(code, alpha) of the Conv2D's activation when conv2d_maxpool2d takes it, else None."""
    from fkeras import activations
    from fkeras.ops.conv_pool import fusable_activation

    code, alpha = activations.fused(layer.activation)
    return (code, alpha) if code is not None and fusable_activation(code, alpha) else None


def _plain_conv_step(s):
    from fkeras.layers.convolutional.conv2d import Conv2D

    layer = s.layer
    return (type(layer) is Conv2D and s.single and len(s.out_ids) == 1 and not s.logits
            and not s.cast and _direct(s) and layer.data_format == "channels_last"
            and layer.padding in ("valid", "same") and not getattr(layer, "lora_enabled", False)
            and _conv_activation(layer) is not None)


def _plain_pool_step(t, tensor_id):
    from fkeras.layers.pooling.max_pooling import MaxPooling2D

    layer = t.layer
    return (type(layer) is MaxPooling2D and t.single and t.args == tensor_id
            and len(t.out_ids) == 1 and not t.logits and not t.cast and _direct(t)
            and layer.data_format == "channels_last"
            and tuple(layer.strides) == tuple(layer.pool_size)
            and (layer.padding == "valid" or _same_pads_nothing(layer, tensor_id)))


def _same_pads_nothing(layer, tensor_id):
    """Whether this 'same' pooling of the tensor `tensor_id` is its 'valid' pooling: windows
    that tile its static height and width exactly (no padding, the same windows)."""
    for node in layer._inbound_nodes:
        inputs = node.input_tensors
        if inputs and id(inputs[0]) == tensor_id:
            h, w = tuple(inputs[0].shape)[1:3]
            ph, pw = layer.pool_size
            return isinstance(h, int) and isinstance(w, int) and h % ph == 0 and w % pw == 0
    return False


def _conv_pool_runner(layer, pool_layer, conv_call):
    """The fused step: `conv_call` (the Conv2D's direct call) then the pool, as one op."""
    from fkeras.ops.conv_pool import conv2d_maxpool2d

    def run(inputs, training=None):
        act = _conv_activation(layer)
        if act is None:  # the activation was changed after the plan was built
            return pool_layer.call(conv_call(inputs))
        return conv2d_maxpool2d(inputs, layer.kernel, layer.bias, layer.strides, layer.padding,
                                layer.dilation_rate, act[0], act[1], pool_layer.pool_size)

    return run
