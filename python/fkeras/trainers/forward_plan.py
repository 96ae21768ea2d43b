"""The trainer's forward pass: a Functional model's nodes as a flat plan, and logit recovery.

`ForwardPlan` runs a Functional (or Sequential) model's layers in topological order on a flat
list of input arrays, calling each layer's `call` directly: fit/evaluate/predict check the data
against the model once up front, so the per-call checks of `Layer.__call__` are not repeated
on every batch (the per-step Python overhead is what limits small models).

Logit recovery (why: Keras 3's jax/torch backends clip sigmoid/softmax probabilities to
[1e-7, 1 - 1e-7] before a crossentropy, so a confidently wrong prediction costs at most 16.1
and the gradient vanishes where it matters; the exact loss needs the logits). For each model
output whose loss is binary crossentropy over a sigmoid, or (sparse) categorical
crossentropy over a softmax, with from_logits=False, the plan computes the output layer's
PRE-activation instead of its output, and the loss runs from logits through the fused kernels.
The output layer qualifies when:
- it is an `Activation('sigmoid' | 'softmax')` or `Softmax` layer (the logits are its input),
- or it is one of LOGIT_LAYERS (Dense, Conv*, ...: layers whose `call` applies
  `self.activation` last) with activation sigmoid/softmax; the plan calls it with the
  activation temporarily set to linear,
and its output tensor feeds no other node of the model. Otherwise the loss clips
probabilities like Keras. Metrics always receive probabilities (the activation applied to the
logits outside the gradient tape). Only the built-in train/test steps take this path: a custom
`train_step` that calls `self(x)` gets probabilities and the clipped loss.
"""

from fkeras import activations
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import get_keras_mask, set_keras_mask
from fkeras.layers.layer import cast_int_inputs, in_layer_call, layer_call_scope
from fkeras.trainers import plan_fusion
from fkeras.utils import nest

LOGIT_LAYERS = frozenset((
    "Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
    "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D",
    "DepthwiseConv2D",
))


def output_activation(layer):
    """'sigmoid' / 'softmax' if `layer`'s output is that activation of a recoverable logit."""
    cls = type(layer).__name__
    if cls == "Softmax":
        axis = getattr(layer, "axis", -1)
        return "softmax" if axis in (-1, [-1], (-1,)) else None
    if getattr(layer, "activity_regularizer", None) is not None:
        return None  # the regularizer sees the output, so the output must be computed
    if not layer._fk_builtin_call():
        return None  # a user's `call` (e.g. a Dense subclass): its output is what it returns
    fn = getattr(layer, "activation", None)
    if fn is None or (cls != "Activation" and cls not in LOGIT_LAYERS):
        return None
    name = activations.serialize(fn)
    return name if name in ("sigmoid", "softmax") else None


def apply_activation(name, logits):
    """Probabilities from logits (for metrics): the activation kernel, no tape involved."""
    from fkeras.backend import codes, devices

    dev = devices.get_device()
    x = dev.asarray(logits)
    y = dev.empty(x.shape)
    if name == "sigmoid":
        dev.kernels["activation_forward"](y, x, x.size, codes.SIGMOID, 0.0)
    else:
        cols = x.shape[-1]
        dev.kernels["softmax_forward"](y, x, x.size // cols if cols else 0, cols)
    return y


def _accepts_training(layer):
    from fkeras.models.functional import _accepts

    return _accepts(layer, "training")


class _Step:
    __slots__ = ("layer", "fn", "single", "args", "kwargs", "out_ids", "logits", "training",
                 "cast")


class ForwardPlan:
    """The nodes of a Functional model, ready to run on a flat list of input arrays.

    Args:
        model: a Functional/Sequential model.
        logit_outputs: {output index: 'sigmoid' | 'softmax'} of outputs to return as logits.
    """

    def __init__(self, model, logit_outputs=None):
        self.model = model
        self.nodes_ref = model._nodes
        self.input_ids = [id(t) for t in model._flat_inputs]
        self.output_ids = [id(t) for t in model._flat_outputs]
        logit_ids = {self.output_ids[i] for i in (logit_outputs or {})}
        # A graph where masks travel (Masking, Embedding(mask_zero=True)) calls each layer
        # through `__call__`, which passes and propagates the masks.
        masked = any(get_keras_mask(t) is not None for node in model._nodes
                     for t in node.output_tensors)
        self.steps = []
        for node in model._nodes:
            if node.is_input:
                continue
            s = _Step()
            s.layer = node.operation
            args, kwargs = node.call_args, node.call_kwargs
            s.single = (len(args) == 1 and isinstance(args[0], KerasTensor) and not kwargs)
            s.args = id(args[0]) if s.single else (list(args), dict(kwargs))
            s.kwargs = kwargs
            s.out_ids = [id(t) for t in node.output_tensors]
            s.logits = len(s.out_ids) == 1 and s.out_ids[0] in logit_ids
            s.training = _accepts_training(s.layer)  # overrides a recorded value (Keras 3)
            # `__call__` also adds the activity-regularizer losses, and runs a user-written
            # `call` in tensor mode (so its operators reach the tape).
            # A layer created in a RematScope goes through `__call__`, which rematerializes.
            direct = (not masked and getattr(s.layer, "activity_regularizer", None) is None
                      and s.layer._fk_builtin_call()
                      and getattr(s.layer, "_remat_mode", None) is None)
            # A "mixed_bfloat16" layer's call runs in its bf16-products scope.
            call = s.layer._fk_call_direct if s.layer._fk_bf16 else s.layer.call
            s.fn = _sub_plan_runner(s.layer) or (call if direct else s.layer)
            s.cast = s.fn is not s.layer and _casts_int_inputs(s.layer, node)
            self.steps.append(s)
        self.fused_bn_relu_pool = plan_fusion.fuse_bn_relu_pool(self, model)  # + MaxPool
        self.fused_bn_relu = plan_fusion.fuse_bn_relu(self, model)  # BN + ReLU: one op
        self.fused_conv_pool = plan_fusion.fuse_conv_pool(self, model)  # Conv2D + MaxPool

    def run(self, xs, training=False):
        """Flat list of output arrays (logits for the requested outputs). `training=None`
        passes no value: each layer uses the one recorded in its node, or its default (as an
        eager `model(x)` call does)."""
        if not in_layer_call():  # an entry call: drop the losses of the previous one
            self.model._clear_losses()
        with layer_call_scope():  # one model call: the layers' losses accumulate, not reset
            return self._run(xs, training)

    def _run(self, xs, training):
        values = dict(zip(self.input_ids, xs))
        for s in self.steps:
            if s.single:
                args, kwargs = (values[s.args],), {}
            else:
                args, kwargs = nest.map_structure(
                    lambda t: values[id(t)] if isinstance(t, KerasTensor) else t, s.args)
            if s.cast:
                args = cast_int_inputs(args, nest.flatten(args[0]))
            if s.training and training is not None:
                kwargs = dict(kwargs, training=training)
            if s.logits:
                out = _pre_activation(s.layer, args, kwargs)
            else:
                out = s.fn(*args, **kwargs)
            if len(s.out_ids) == 1:
                values[s.out_ids[0]] = out
            else:
                for i, v in zip(s.out_ids, nest.flatten(out)):
                    values[i] = v
        return [values[i] for i in self.output_ids]


def _casts_int_inputs(layer, node):
    """Whether a step bypassing `Layer.__call__` must cast integer inputs itself: a float layer
    (or a nested model with float inputs) fed an integer/bool tensor. Decided once from the
    graph's dtypes, so float models pay nothing per step."""
    inputs = nest.flatten(node.call_args[0]) if node.call_args else []
    if not any(isinstance(t, KerasTensor) and _is_int_dtype(t.dtype) for t in inputs):
        return False
    nested = getattr(layer, "_flat_inputs", None)
    if nested is not None and getattr(layer, "_nodes", None) is not None:
        return not any(_is_int_dtype(t.dtype) for t in nested)
    return layer._fk_float_inputs


def _is_int_dtype(dtype):
    return str(dtype).startswith(("int", "uint", "bool"))


def _sub_plan_runner(layer):
    """A nested Functional model runs through its own plan (same shortcuts)."""
    if getattr(layer, "_nodes", None) is None or not hasattr(layer, "_flat_inputs"):
        return None
    plan = get_plan(layer)

    def run(inputs, training=None, **kwargs):
        outs = plan.run(nest.flatten(inputs),
                        training=None if training is None else bool(training))
        return nest.pack_like(layer._outputs_structure, outs)

    return run


def _pre_activation(layer, args, kwargs):
    if type(layer).__name__ in ("Activation", "Softmax"):
        return args[0]
    saved = layer.activation
    layer.activation = activations.linear
    try:
        if getattr(layer, "_remat_mode", None) is None and not layer._fk_bf16:
            out = layer.call(*args, **kwargs)
        else:
            out = layer._fk_policy_call(args, kwargs)
    finally:
        layer.activation = saved
    if getattr(layer, "supports_masking", False):  # Dense passes its input's mask on
        set_keras_mask(out, get_keras_mask(args[0]))
    return out


def get_plan(model, logit_outputs=None):
    """The cached plan of `model` for these logit outputs (rebuilt if the graph changed)."""
    key = tuple(sorted((logit_outputs or {}).items()))
    cache = model.__dict__.setdefault("_fk_plans", {})
    plan = cache.get(key)
    if plan is None or plan.nodes_ref is not model._nodes:
        plan = cache[key] = ForwardPlan(model, logit_outputs)
    return plan


def supports_plan(model):
    return getattr(model, "_nodes", None) is not None and getattr(
        model, "_flat_inputs", None) is not None and type(model).call is _functional_call()


def _functional_call():
    from fkeras.models.functional import Functional

    return Functional.call


def recoverable_outputs(model):
    """{output index: activation name} for outputs whose logits the plan can compute."""
    if not supports_plan(model):
        return {}
    consumers = {}
    for node in model._nodes:
        for t in node.input_tensors:
            consumers[id(t)] = consumers.get(id(t), 0) + 1
    out = {}
    for i, t in enumerate(model._flat_outputs):
        layer = t._keras_history.layer
        act = output_activation(layer)
        if act and not consumers.get(id(t)):
            out[i] = act
    return out

