"""Compiled inference plans: a model's forward pass as one call into C++ (issue 17 item 4).

A Functional/Sequential model whose every layer has an inference lowering is lowered, once per
(input shapes) signature, into a list of kernel steps over buffers that Python allocates once
(the signature's arena) and run by `fkeras._C.InferencePlan.run` in a single call: Python
allocates, C++ computes. The eager fast path (`model(x)`, models/eager_fast_path.py) and
`predict`'s forward step use it where it applies; anything else keeps the uncompiled plan.

Lowerings (each the kernel the layer's own `call` runs on float32 channels-last data):
Dense (any activation the kernels fuse, or softmax), Conv2D (channels_last), MaxPooling2D and
AveragePooling2D (channels_last), Flatten (channels_last) and Reshape (views: no step),
Dropout (the identity in inference: no step), Activation / ReLU (defaults) / Softmax (last
axis), and BatchNormalization in inference. A BatchNormalization that directly follows a
Dense/Conv2D with a linear activation (whose output feeds nothing else) is folded into that
layer's kernel and bias: w' = w * s, b' = (b - mean) * s + beta with s = gamma /
sqrt(var + epsilon), computed in float64; an Activation/ReLU/Softmax after a linear
Dense/Conv2D (likewise) fuses into its epilogue. Other BatchNormalizations run the inference
kernel. Folding changes rounding only (outputs agree with the uncompiled plan to ~1e-6 of
their scale). A MaxPooling2D with padding 'valid' and strides == pool_size right after a
Conv2D (after its folding and fusion; the conv's output feeding nothing else and not a model
output) joins it in one `conv2d_forward_maxpool2d` step: the convolution's output is never
written, the values are bit for bit those of the two kernels (rows and columns past the last
whole window dropped, as the pooling does). A Dropout (or any other view) between the two, an
overlapping or 'same' pooling, or an activation the conv kernel does not fuse keeps two steps.

A model is not lowered (the uncompiled path runs) when: its class overrides `call`; a layer is
anything else (a nested model included), has a user `call`, an activity regularizer, a
RematScope, LoRA, quantization or a dtype policy other than float32; a node carries call
arguments besides `training=None/False`; a mask travels in the graph; an input is not float32.
A call is compiled when its inputs are C-contiguous float32 arrays.

Weights: the plan reads each variable's buffer in place (optimizers and `assign` update it in
place), and the C++ plan checks on every run that each variable still holds the buffer it was
built on (`Variable._value` is rebound when an optimizer packs its variables): otherwise the
plans of the model are rebuilt. Folded weights are recomputed before a run whenever any
variable was written since they were computed (`engine.variable.WRITES`, bumped by `assign*`,
optimizer updates and the other in-place writers). A model is lowered again when variables
were created since (a layer given LoRA weights after a call no longer lowers). Outputs are
fresh arrays on every call.
"""

import numpy as np

from fkeras.engine import variable as _variable
from fkeras.layers.layer import in_layer_call

_MAX_SIGNATURES = 8
_ARENA, _WEIGHT, _INPUT, _OUTPUT = 0, 1, 2, 3
# fk::PlanOp (cpp/include/fkeras/inference_plan.h)
_DENSE, _CONV2D, _MAXPOOL, _AVGPOOL, _ACT, _SOFTMAX, _BN, _COPY, _CONV2D_MAXPOOL = range(9)
_F32 = np.dtype(np.float32)


class _Op:
    """One lowered layer (shape-independent): kind, input/output tensor ids, attributes."""

    __slots__ = ("kind", "src", "dst", "layer", "code", "alpha", "softmax", "fold", "rank",
                 "pool")

    def __init__(self, kind, src, dst, layer):
        self.kind, self.src, self.dst, self.layer = kind, src, dst, layer
        self.code, self.alpha, self.softmax, self.fold, self.rank = 0, 0.0, False, None, None
        self.pool = None  # a conv's fused MaxPooling2D layer


class _Folded:
    """A Dense/Conv2D kernel and bias with a following BatchNormalization folded in."""

    def __init__(self, layer, bn):
        self.layer, self.bn = layer, bn
        k = layer.kernel._value
        self.kernel = np.empty(k.shape, np.float32)
        self.bias = np.empty(k.shape[-1], np.float32)
        self.refresh()

    def refresh(self):
        bn = self.bn
        var = bn.moving_variance._value.astype(np.float64)
        scale = 1.0 / np.sqrt(var + bn.epsilon)
        if bn.gamma is not None:
            scale = scale * bn.gamma._value
        shift = -bn.moving_mean._value * scale
        if bn.beta is not None:
            shift = shift + bn.beta._value
        if self.layer.bias is not None:
            shift = shift + self.layer.bias._value * scale
        np.multiply(self.layer.kernel._value, scale, out=self.kernel, casting="unsafe")
        self.bias[...] = shift


class _Compiled:
    """Per model graph: the lowered ops (None: not lowerable), folded weights, the plans."""

    def __init__(self, model):
        self.nodes_ref = model._nodes
        self.created = _variable.WRITES.created  # variables made since: lowered again
        self.model = model
        self.plans = {}
        self.folded = []
        self.gen = -1
        self.taken = 0  # compiled runs (tests check the path is used)
        self.ops = _lower(model)
        if self.ops is not None:
            self.folded = [op.fold for op in self.ops if op.fold is not None]
            self.gen = _variable.WRITES.n
            self.loss_lists = [layer._losses for layer in [model, *model._all_layers()]]


def state_of(model):
    """The model's compiled state (rebuilt when its graph changes or variables were created
    since: a layer given new weights, e.g. LoRA, may no longer lower)."""
    state = model.__dict__.get("_fk_compiled")
    if state is None or state.nodes_ref is not model._nodes or (
            state.created != _variable.WRITES.created):
        state = model.__dict__["_fk_compiled"] = _Compiled(model)
    return state


def run(model, xs):
    """The model's outputs (a flat list of fresh float32 arrays) on the list of input arrays
    `xs`, computed by the compiled plan; None when the model or these inputs do not qualify
    (the caller then runs the uncompiled path)."""
    state = state_of(model)
    if state.ops is None:
        return None
    signature = []
    for x in xs:
        if type(x) is not np.ndarray or x.dtype != _F32 or not x.flags.c_contiguous:
            return None
        signature.append(x.shape)
    signature = tuple(signature)
    plan = state.plans.get(signature)
    if plan is None:
        if signature in state.plans:
            return None
        plan = _plan_for(state, signature)
        if plan is None:
            return None
    if state.folded and state.gen != _variable.WRITES.n:
        for f in state.folded:
            f.refresh()
        state.gen = _variable.WRITES.n
    for losses in state.loss_lists:
        if losses:  # a previous call's losses (none of these layers adds any)
            if not in_layer_call():
                state.model._clear_losses()
            break
    outs = _run_plan(plan, xs)
    if outs is None:  # a variable's buffer was replaced: rebuild once
        state.plans.clear()
        plan = _plan_for(state, signature)
        if plan is None:
            return None
        outs = _run_plan(plan, xs)
        if outs is None:
            return None
    state.taken += 1
    return outs


def _run_plan(plan, xs):
    runner, shapes, order = plan
    outs = [np.empty(shape, np.float32) for shape in shapes]
    if order is None:
        ok = runner.run(*xs, *outs)
    else:
        ok = runner.run(*xs, *[outs[i] for i in order])
    return outs if ok else None


def _plan_for(state, signature):
    if len(state.plans) >= _MAX_SIGNATURES:
        state.plans.clear()
    try:
        plan = _build(state.model, state.ops, signature)
    except _Unsupported:
        plan = None
    if plan is None:
        state.plans[signature] = None  # remembered: this signature takes the uncompiled path
        return None
    state.plans[signature] = plan
    return plan


class _Unsupported(Exception):
    pass


# ---- lowering (once per graph) ----

def _lower(model):
    from fkeras.engine.keras_tensor import KerasTensor
    from fkeras.engine.masking import get_keras_mask
    from fkeras.trainers.forward_plan import supports_plan

    if not supports_plan(model):
        return None
    if any(str(t.dtype) != "float32" for t in model._flat_inputs):
        return None
    input_ids = {id(t) for t in model._flat_inputs}
    if any(id(t) in input_ids for t in model._flat_outputs):
        return None
    ops = []
    for node in model._nodes:
        if node.is_input:
            continue
        args, kwargs = node.call_args, node.call_kwargs
        if len(args) != 1 or not isinstance(args[0], KerasTensor) or len(
                node.output_tensors) != 1:
            return None
        if any(k != "training" or v not in (None, False) for k, v in kwargs.items()):
            return None
        if any(get_keras_mask(t) is not None for t in node.output_tensors):
            return None
        op = _lower_layer(node.operation, id(args[0]), id(node.output_tensors[0]))
        if op is None:
            return None
        for o in op if isinstance(op, list) else [op]:
            o.rank = len(args[0].shape)  # the input's rank
            ops.append(o)
    return _fuse(ops, model)


def _layer_ok(layer):
    from fkeras.layers.layer import Layer

    if type(layer).__call__ is not Layer.__call__ or not layer._fk_builtin_call():
        return False
    if getattr(layer, "activity_regularizer", None) is not None or getattr(
            layer, "_remat_mode", None) is not None or getattr(layer, "_fk_bf16", False):
        return False
    if getattr(layer, "lora_enabled", False) or getattr(layer, "quantization_mode", None):
        return False
    policy = getattr(layer, "dtype_policy", None)
    name = getattr(policy, "name", "float32")
    if name != "float32":
        return False
    for v in layer.weights:
        if type(v._value) is not np.ndarray or v._value.dtype != _F32:
            return False
    return True


def _activation(fn):
    """(code, alpha, softmax) of an activation function, or None if it has no lowering."""
    from fkeras import activations

    code, alpha = activations.fused(fn)
    if code is not None:
        return code, alpha, False
    if activations.serialize(fn) == "softmax":
        return 0, 0.0, True
    return None


def _lower_layer(layer, src, dst):
    from fkeras import layers as L

    if not _layer_ok(layer):
        return None
    cls = type(layer)
    op = _Op(None, src, dst, layer)
    if cls in (L.Dense, L.Conv2D):
        act = _activation(layer.activation)
        if act is None:
            return None
        op.code, op.alpha, op.softmax = act
        if cls is L.Conv2D:
            if layer.data_format != "channels_last" or layer.padding not in ("valid", "same"):
                return None
            if op.softmax:
                return None
            op.kind = "conv"
            if not _conv_fuses(op.code, op.alpha):  # as ops.conv2d: a separate activation
                after = _Op("act", ("pre-activation", dst), dst, layer)
                after.code, after.alpha = op.code, op.alpha
                op.code, op.alpha, op.dst = 0, 0.0, after.src
                return [op, after]
        else:
            op.kind = "dense"
    elif cls in (L.MaxPooling2D, L.AveragePooling2D):
        if layer.data_format != "channels_last" or layer.padding not in ("valid", "same"):
            return None
        op.kind = "maxpool" if cls is L.MaxPooling2D else "avgpool"
    elif cls is L.Flatten:
        if layer.data_format != "channels_last":
            return None
        op.kind = "view"
    elif cls is L.Reshape:
        op.kind = "view"
    elif cls is L.Dropout:
        op.kind = "view"
    elif cls in (L.Activation, L.ReLU, L.Softmax):
        if cls is L.ReLU:
            if layer.max_value is not None or layer.threshold != 0 or layer.negative_slope != 0:
                return None
            from fkeras.backend import codes

            op.code = codes.RELU
        elif cls is L.Softmax:
            if tuple(np.atleast_1d(layer.axis)) != (-1,):
                return None
            op.softmax = True
        else:
            act = _activation(layer.activation)
            if act is None:
                return None
            op.code, op.alpha, op.softmax = act
        op.kind = "act"
    elif cls is L.BatchNormalization:
        axes = getattr(layer, "_axes", None)
        if axes is None or len(axes) != 1:
            return None
        op.kind = "bn"
    else:
        return None
    return op


def _fuse(ops, model):
    """Folds BatchNormalization into, and fuses activations into, the Dense/Conv2D before."""
    consumers = {}
    for op in ops:
        consumers[op.src] = consumers.get(op.src, 0) + 1
    outputs = {id(t) for t in model._flat_outputs}
    producer = {}
    out = []
    for op in ops:
        prev = producer.get(op.src)
        single = (prev is not None and consumers.get(op.src) == 1 and op.src not in outputs
                  and prev.kind in ("dense", "conv") and prev.code == 0 and not prev.softmax)
        if single and op.kind == "bn" and prev.fold is None and op.layer._axes[0] in (
                -1, op.rank - 1):  # the channel axis the kernel's last axis produces
            prev.fold = _Folded(prev.layer, op.layer)
            prev.dst = op.dst
            producer[op.dst] = prev
            continue
        if single and op.kind == "act":
            if op.softmax and prev.kind == "dense":
                prev.softmax, prev.dst = True, op.dst
                producer[op.dst] = prev
                continue
            if not op.softmax and (prev.kind == "dense" or _conv_fuses(op.code, op.alpha)):
                prev.code, prev.alpha, prev.dst = op.code, op.alpha, op.dst
                producer[op.dst] = prev
                continue
        producer[op.dst] = op
        out.append(op)
    return _fuse_pool(out, consumers, outputs)


def _fuse_pool(ops, consumers, outputs):
    """Fuses a 'valid' MaxPooling2D with strides == pool_size into the Conv2D before it (with
    its folded BatchNormalization and fused activation) when the conv's output feeds nothing
    else and is not a model output: one conv2d_forward_maxpool2d step."""
    producer = {op.dst: op for op in ops}
    out = []
    for op in ops:
        prev = producer.get(op.src)
        if (op.kind == "maxpool" and prev is not None and prev.kind == "conv"
                and prev.pool is None and consumers.get(op.src) == 1 and op.src not in outputs
                and op.layer.padding == "valid"
                and tuple(op.layer.strides) == tuple(op.layer.pool_size)):
            prev.pool, prev.dst = op.layer, op.dst
            producer[op.dst] = prev
            continue
        out.append(op)
    return out


def _conv_fuses(code, alpha):
    from fkeras.ops.conv import FUSED

    return code in FUSED and alpha >= 0.0


# ---- building a plan for one signature ----

class _Builder:
    def __init__(self):
        self.sizes, self.roles, self.index, self.arrays = [], [], [], []
        self.steps = []

    def slot(self, size, role, array=None, index=False):
        self.sizes.append(int(size))
        self.roles.append(role)
        self.index.append(index)
        self.arrays.append(array)
        return len(self.sizes) - 1

    def step(self, op, slots, params, f=0.0):
        slots = list(slots) + [-1] * (6 - len(slots))
        self.steps.append((op, slots, [int(p) for p in params], float(f)))


def _build(model, ops, signature):
    """(fkeras._C.InferencePlan, output shapes) for inputs of these shapes, or None."""
    from fkeras import _C
    from fkeras.ops.conv import window_geometry
    from fkeras.layers.reshaping.reshape import reshape_output_shape

    b = _Builder()
    shapes, slot_of = {}, {}
    for t, shape in zip(model._flat_inputs, signature):
        want = tuple(t.shape)
        if len(shape) != len(want) or any(w is not None and w != s
                                          for w, s in zip(want, shape)):
            return None
        shapes[id(t)] = shape
        slot_of[id(t)] = b.slot(np.prod(shape), _INPUT)
    consumers = {}
    for op in ops:
        consumers[op.src] = consumers.get(op.src, 0) + 1
    outputs = {id(t) for t in model._flat_outputs}
    remaining = {}  # slot -> uses still to come
    for tid, s in slot_of.items():
        remaining[s] = consumers.get(tid, 0)
    holds_output = set()
    weight_slots = {}
    watched = []

    def weight(array, owner=None):
        key = id(array)
        if key not in weight_slots:
            weight_slots[key] = b.slot(array.size, _WEIGHT, array)
            if owner is not None:
                watched.append((owner, array))
        return weight_slots[key]

    def new_slot(tid, shape):
        s = b.slot(np.prod(shape), _ARENA)
        slot_of[tid], shapes[tid] = s, shape
        remaining[s] = consumers.get(tid, 0)
        if tid in outputs:
            holds_output.add(s)
        return s

    for op in ops:
        x_shape = shapes[op.src]
        xs = slot_of[op.src]
        remaining[xs] -= 1
        kind = op.kind
        if kind == "view":
            out_shape = _view_shape(op.layer, x_shape, reshape_output_shape)
            if out_shape is None:
                return None
            slot_of[op.dst], shapes[op.dst] = xs, out_shape
            remaining[xs] += consumers.get(op.dst, 0)
            if op.dst in outputs:
                holds_output.add(xs)
            continue
        if kind == "dense":
            layer = op.layer
            kernel, bias = _kernel_bias(op)
            K, N = kernel.shape
            if len(x_shape) < 2 or x_shape[-1] != K:
                return None
            out_shape = x_shape[:-1] + (N,)
            M = int(np.prod(x_shape[:-1]))
            ys = new_slot(op.dst, out_shape)
            b.step(_DENSE, [ys, xs, weight(kernel, None if op.fold else layer.kernel),
                            -1 if bias is None else weight(
                                bias, None if op.fold else layer.bias)],
                   [M, N, K, op.code], op.alpha)
            if op.softmax:
                b.step(_SOFTMAX, [ys, ys], [M, N])
            continue
        if kind == "conv":
            layer = op.layer
            kernel, bias = _kernel_bias(op)
            if len(x_shape) != 4:
                return None
            n, H, W, C = x_shape
            R, S, Cg, K = kernel.shape
            if Cg == 0 or C % Cg:
                return None
            P, pt, Q, pl = window_geometry(H, W, R, S, layer.strides, layer.dilation_rate,
                                           layer.padding)
            if P <= 0 or Q <= 0:
                return None
            params = [n, H, W, C, K, R, S, P, Q, layer.strides[0], layer.strides[1],
                      layer.dilation_rate[0], layer.dilation_rate[1], pt, pl, C // Cg, op.code]
            if op.pool is None:
                code, out_shape = _CONV2D, (n, P, Q, K)
            else:  # 'valid', stride == pool: the rows and columns past the last window dropped
                ph, pw = op.pool.pool_size
                if P // ph <= 0 or Q // pw <= 0:
                    return None
                code, out_shape = _CONV2D_MAXPOOL, (n, P // ph, Q // pw, K)
                params += [ph, pw]
            ys = new_slot(op.dst, out_shape)
            b.step(code, [ys, xs, weight(kernel, None if op.fold else layer.kernel),
                          -1 if bias is None else weight(
                              bias, None if op.fold else layer.bias)], params, op.alpha)
            continue
        if kind in ("maxpool", "avgpool"):
            layer = op.layer
            if len(x_shape) != 4:
                return None
            n, H, W, C = x_shape
            R, S = layer.pool_size
            P, pt, Q, pl = window_geometry(H, W, R, S, layer.strides, (1, 1), layer.padding)
            if P <= 0 or Q <= 0:
                return None
            ys = new_slot(op.dst, (n, P, Q, C))
            params = [n, H, W, C, P, Q, R, S, layer.strides[0], layer.strides[1], pt, pl]
            if kind == "maxpool":
                idx = b.slot(n * P * Q * C, _ARENA, index=True)
                b.step(_MAXPOOL, [ys, xs, -1, -1, idx], params)
            else:
                b.step(_AVGPOOL, [ys, xs], params)
            continue
        if kind == "act":
            in_place = (b.roles[xs] == _ARENA and remaining[xs] == 0
                        and xs not in holds_output)
            if in_place:
                ys = slot_of[op.dst] = xs
                shapes[op.dst] = x_shape
                remaining[xs] += consumers.get(op.dst, 0)
                if op.dst in outputs:
                    holds_output.add(xs)
            else:
                ys = new_slot(op.dst, x_shape)
            if op.softmax:
                if len(x_shape) < 1 or x_shape[-1] == 0:
                    return None
                cols = x_shape[-1]
                b.step(_SOFTMAX, [ys, xs], [int(np.prod(x_shape)) // cols, cols])
            else:
                b.step(_ACT, [ys, xs], [int(np.prod(x_shape)), op.code], op.alpha)
            continue
        if kind == "bn":
            layer = op.layer
            axis = layer._axes[0] % len(x_shape)
            C = x_shape[axis]
            outer, inner = int(np.prod(x_shape[:axis])), int(np.prod(x_shape[axis + 1:]))
            ys = new_slot(op.dst, x_shape)
            vs = [weight(v._value, v) for v in (layer.moving_mean, layer.moving_variance)]
            gb = [-1 if v is None else weight(v._value, v) for v in (layer.gamma, layer.beta)]
            b.step(_BN, [ys, xs] + vs + gb, [outer, C, inner], layer.epsilon)
            continue
        raise _Unsupported(kind)
    # Outputs: a slot a step wrote becomes the (fresh, per call) output buffer; anything else
    # (an input's view, a buffer two outputs share) is copied into one at the end.
    out_shapes, out_slots = [], []
    for t in model._flat_outputs:
        s, shape = slot_of[id(t)], shapes[id(t)]
        out_shapes.append(shape)
        if b.roles[s] == _ARENA and not b.index[s]:
            b.roles[s] = _OUTPUT
        else:
            o = b.slot(np.prod(shape), _OUTPUT)
            b.step(_COPY, [o, s], [int(np.prod(shape))])
            s = o
        out_slots.append(s)
    plan = _C.InferencePlan(b.sizes, b.roles, b.index)
    for s, (role, array) in enumerate(zip(b.roles, b.arrays)):
        if role == _WEIGHT:
            plan.bind(s, array)
        elif role == _ARENA:
            plan.bind(s, np.empty(b.sizes[s], np.int64 if b.index[s] else np.float32))
    for owner, array in watched:
        plan.watch(owner, array)
    for op, slots, params, f in b.steps:
        plan.add_step(op, slots, params, f)
    # The C++ plan takes the outputs in ascending slot order.
    order = sorted(range(len(out_slots)), key=out_slots.__getitem__)
    return plan, out_shapes, None if order == list(range(len(order))) else order


def _kernel_bias(op):
    if op.fold is not None:
        return op.fold.kernel, op.fold.bias
    layer = op.layer
    return layer.kernel._value, None if layer.bias is None else layer.bias._value


def _view_shape(layer, shape, reshape_output_shape):
    from fkeras import layers as L

    cls = type(layer)
    if cls is L.Dropout:
        return shape
    if cls is L.Flatten:
        return (shape[0], int(np.prod(shape[1:])))
    try:
        return (shape[0],) + tuple(reshape_output_shape(shape[1:], layer.target_shape))
    except ValueError:
        return None
