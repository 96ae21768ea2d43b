"""Layer: the base class of every layer and model.

Calling a layer builds it once from the input shape (weights created by `build`), checks the
input against `input_spec`, then either records a Node (on KerasTensors) or computes (on arrays).
Keras 2 attribute semantics are kept (`input_shape`, `output_shape`, `input`, `output`,
`get_input_at(i)`, ...), next to the Keras 3 API.
"""

import inspect
import threading

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.backend.devices import bf16_products, fp32_products, in_bf16_products
from fkeras.engine import naming
from fkeras.engine.input_spec import check_input_spec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import get_keras_mask, set_keras_mask
from fkeras.engine import name_scope as _name_scope
from fkeras.engine.node import Node
from fkeras.layers.layer_dtype import DTypePolicyMixin
from fkeras.layers.layer_nodes import NodeAttributesMixin
from fkeras.engine.remat import get_current_remat_mode, rematerialized_call
from fkeras.engine.stateless import discard_writes, keep_writes
from fkeras.engine.tensor import (_MODE, call_function, is_builtin_method, run_builtin,
                                  run_user)
from fkeras.engine.tensor import wrap, wrap_structure
from fkeras.engine.tracking import track_attribute, track_variables
from fkeras.engine.variable import Variable
from fkeras.ops.registry import in_symbolic_call, symbolic_call_scope
from fkeras.utils import nest

# Keyword arguments every layer accepts (Keras 2's list plus Keras 3's).
_BASE_KWARGS = ("input_shape", "batch_input_shape", "batch_size", "input_dim", "weights",
                "autocast", "dtype_policy", "activity_regularizer")

# How many eager layer calls enclose the current one (per thread). A call at depth 0 is an
# entry call: it first clears the losses its layer (and sub-layers) added on the previous call.
_CALLS = threading.local()


def in_layer_call():
    """True inside an eager layer call (or the trainer's forward plan)."""
    return getattr(_CALLS, "depth", 0) > 0


class layer_call_scope:
    """Marks the enclosed eager calls as nested (no loss clearing): the trainer's forward plan
    runs a model's layers inside one scope, as a model call would. (A class, not a generator
    context manager: it is entered on every training step.)"""

    __slots__ = ("_depth",)

    def __enter__(self):
        self._depth = depth = getattr(_CALLS, "depth", 0)
        _CALLS.depth = depth + 1
        return self

    def __exit__(self, *exc):
        _CALLS.depth = self._depth


class Layer(DTypePolicyMixin, NodeAttributesMixin):
    """Base class of layers.

    Subclasses create weights in `build(input_shape)` with `add_weight`, compute in
    `call(inputs, ...)` with `fkeras.ops`, and describe themselves in `get_config`.

    A layer that computes in floating point sets the class attribute `_fk_float_inputs =
    True`: integer and bool arrays reaching it (uint8 images, int64 data) are cast to its
    compute dtype before `call`, as Keras's type promotion makes them float there. Other
    layers (Embedding, reshaping, merging, Lambda) receive integers as they are.
    """

    _fk_float_inputs = False
    _remat_mode = None  # the RematScope mode this layer was created in (engine/remat.py)
    _parent_path = None  # the name-scope path around this layer's first scope (name_scope.py)
    _path = None  # the path where the layer was built (`path`)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if inspect.isfunction(build) and not getattr(build, "_fk_in_scope", False):
            cls.build = _build_in_name_scope(build)

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        unknown = set(kwargs) - set(_BASE_KWARGS)
        if unknown:
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                f"{ {k: kwargs[k] for k in sorted(unknown)} }"
            )
        self.name = name or naming.unique_name(naming.to_snake_case(type(self).__name__))
        mode = get_current_remat_mode()
        if mode is not None and mode.mode is not None:
            self._remat_mode = mode
        self._trainable = bool(trainable)
        self._fk_set_dtype_policy(dtype)
        self.built = False
        self.input_spec = None
        # Keras 3: a layer that defines its own compute_mask supports masking by default.
        self.supports_masking = type(self).compute_mask is not Layer.compute_mask
        self._inbound_nodes = []
        self._outbound_nodes = []
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._layers = []
        self._seed_generators = []
        self._losses = []
        if kwargs.get("activity_regularizer") is not None:
            from fkeras import regularizers

            self.activity_regularizer = regularizers.get(kwargs["activity_regularizer"])
        else:
            self.activity_regularizer = None
        self._initial_weights = kwargs.get("weights")
        batch_input_shape = kwargs.get("batch_input_shape")
        if batch_input_shape is None and kwargs.get("input_shape") is not None:
            batch_input_shape = (kwargs.get("batch_size"),) + tuple(kwargs["input_shape"])
        if batch_input_shape is None and kwargs.get("input_dim") is not None:
            batch_input_shape = (kwargs.get("batch_size"), kwargs["input_dim"])
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)

    # ---- sub-layers and variables are tracked when assigned as attributes ----
    def __setattr__(self, name, value):
        if isinstance(value, Layer) and name not in ("_outer",) and hasattr(self, "_layers"):
            if value not in self._layers:
                self._layers.append(value)
        elif isinstance(value, (list, tuple, dict)) and hasattr(self, "_layers"):
            value = track_attribute(self, name, value)  # a user layer's lists of layers
        if isinstance(value, (Variable, list, tuple, dict)) and \
                hasattr(self, "_trainable_weights"):
            track_variables(self, name, value)  # a user layer's `self.w = Variable(...)`
        elif getattr(type(value), "_fk_seed_generator", False) and \
                hasattr(self, "_seed_generators"):
            if not any(value is g for g in self._seed_generators):
                self._seed_generators.append(value)
        super().__setattr__(name, value)

    # ---- building ----
    def build(self, input_shape):
        """Creates the weights from the full input shape (batch dimension included)."""
        self._fk_record_build_shape(input_shape)
        self.built = True

    def _fk_record_build_shape(self, input_shape):
        """Remembers the shape the layer was built with, for `get_build_config` (Keras 3
        records the arguments of every `build` call)."""
        self.__dict__["_build_shapes_dict"] = {"input_shape": input_shape}

    _K3_WEIGHT_ARGS = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer",
                       "constraint", "aggregation", "overwrite_with_gradient", "name")
    _K2_WEIGHT_ARGS = ("name", "shape", "dtype", "initializer", "regularizer", "trainable",
                       "constraint")

    def add_weight(self, *args, **kwargs):
        """Creates a weight of this layer: Keras 3's `add_weight(shape, initializer, dtype,
        trainable, autocast, regularizer, constraint, aggregation, overwrite_with_gradient,
        name)`; Keras 2's positional order (`add_weight("kernel", shape, ...)`, name first)
        is accepted too."""
        order = self._K2_WEIGHT_ARGS if args and isinstance(args[0], str) else \
            self._K3_WEIGHT_ARGS
        if len(args) > len(order):
            raise TypeError(f"add_weight() takes at most {len(order)} positional arguments")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"add_weight() got multiple values for argument '{key}'")
            kwargs[key] = value
        return self._add_weight(**kwargs)

    def _add_weight(self, shape=None, initializer=None, dtype=None, trainable=True,
                    autocast=True, regularizer=None, constraint=None, aggregation="none",
                    overwrite_with_gradient=False, name=None, **kwargs):
        from fkeras import constraints, initializers, regularizers

        unknown = set(kwargs) - {"use_resource", "synchronization", "partitioner",
                                 "caching_device", "experimental_autocast"}
        if unknown:
            raise TypeError(f"add_weight() got unexpected keyword arguments {sorted(unknown)}")
        shape = tuple(int(d) for d in (shape or ()))
        init = initializers.get(initializer if initializer is not None else
                                ("zeros" if not shape else "glorot_uniform"))
        name = name or f"variable_{len(self.weights)}"
        with _name_scope.name_scope(self.name, caller=self):  # path: <scopes>/<layer>/<name>
            var = Variable(init(shape, dtype=dtype or "float32"), dtype=dtype, name=name,
                           trainable=trainable, regularizer=regularizers.get(regularizer),
                           constraint=constraints.get(constraint), aggregation=aggregation)
        var.overwrite_with_gradient = bool(overwrite_with_gradient)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(var)
        return var

    def _maybe_build(self, shapes):
        if self.built:
            return
        check_input_spec(self.input_spec, shapes, self.name)
        input_shape = shapes[0] if len(shapes) == 1 else list(shapes)
        self._fk_record_build_shape(input_shape)
        with keep_writes():  # a nested layer built inside a symbolic call sets its weights
            self.build(input_shape)
            self.built = True
            if self._initial_weights is not None:
                self.set_weights(self._initial_weights)
                self._initial_weights = None

    # ---- calling ----
    def call(self, inputs, *args, **kwargs):
        return inputs

    def __call__(self, *args, **kwargs):
        if not args:
            first = self._first_call_arg()
            if first not in kwargs:
                raise TypeError(f'Layer "{self.name}" was called without inputs: missing a '
                                f"required argument: '{first}' (the first argument of `call`).")
            kwargs = dict(kwargs)
            args = (kwargs.pop(first),)
        inputs = args[0]
        if "training" in kwargs and not self._call_accepts("training"):
            kwargs = {k: v for k, v in kwargs.items() if k != "training"}  # Keras drops it
        flat = nest.flatten(inputs)
        if any(isinstance(t, KerasTensor) for t in flat):
            return self._symbolic_call(args, kwargs, flat)
        return self._eager_call(args, kwargs, flat)

    def _eager_call(self, args, kwargs, flat):
        # fkeras's own layers compute in array mode (bare buffers, no wrapper per op); a
        # user-written `call` runs in tensor mode, so its Python operators reach the tape.
        if self._fk_builtin_call():
            return run_builtin(self._eager_call_body, *args, **kwargs)
        if _MODE.array:
            return run_user(self._eager_call_body, *args, **kwargs)
        return self._eager_call_body(*wrap_structure(args), **wrap_structure(kwargs))

    def _fk_builtin_call(self):
        """Whether this layer's `call` is fkeras's own code (cached per class)."""
        return is_builtin_method(type(self), "call")

    def _fk_call_direct(self, *args, **kwargs):
        """`self.call(...)` from fkeras code, without `__call__`'s checks; a user-written
        `call` still runs in tensor mode."""
        if self._fk_bf16:
            with bf16_products():
                return self._fk_call_direct_plain(*args, **kwargs)
        return self._fk_call_direct_plain(*args, **kwargs)

    def _fk_policy_call(self, args, kwargs):
        # `call` under the layer's dtype policy (bf16 products; a float32 layer called inside
        # a bf16 one goes back to float32) and RematScope mode; the recomputation of a
        # rematerialized call runs under the same policy.
        call = self.call
        if self._fk_bf16 or in_bf16_products():
            plain = call
            scope = bf16_products if self._fk_bf16 else fp32_products

            def call(*a, **k):
                with scope():
                    return plain(*a, **k)
        if self._remat_mode is not None:  # created inside a RematScope
            call = self.rematerialized_call(call, *args, **kwargs)
        return call(*args, **kwargs)

    def _fk_call_direct_plain(self, *args, **kwargs):
        if self._fk_builtin_call():
            return self.call(*args, **kwargs)
        return run_user(self.call, *args, **kwargs)

    def _eager_call_body(self, *args, **kwargs):
        flat = nest.flatten(args[0])
        shapes = [tuple(np.shape(t)) for t in flat]
        self._maybe_build(shapes)
        check_input_spec(self.input_spec, shapes, self.name)
        call_kwargs, previous_mask = self._populate_mask(args, kwargs)
        if self._fk_float_inputs:
            args = cast_int_inputs(args, flat, self.name)
        depth = getattr(_CALLS, "depth", 0)
        if depth == 0:  # an entry call: drop the losses of the previous one
            self._clear_losses()
        _CALLS.depth = depth + 1  # inline layer_call_scope: this runs on every eager call
        names = _name_scope._STATE.stack  # inline name_scope(self.name, caller=self)
        scope = self.__dict__.get("_fk_call_scope")
        if scope is None or scope.name != self.name:
            scope = self._make_call_scope()
        pushed = not (names and names[-1].caller is self and names[-1].name == self.name)
        if pushed:
            names.append(scope)
        try:
            if self._remat_mode is None and not self._fk_bf16 and not in_bf16_products():
                outputs = self.call(*args, **call_kwargs)
            else:
                outputs = self._fk_policy_call(args, call_kwargs)
        finally:
            _CALLS.depth = depth
            if pushed:
                names.pop()
        self._set_mask_metadata(args[0], outputs, previous_mask)
        if self.activity_regularizer is not None:
            self._add_activity_losses(outputs)
        return outputs

    def _add_activity_losses(self, outputs):
        """Keras 3: activity_regularizer(output) / batch size per output, added to the losses."""
        from fkeras import ops

        for out in nest.flatten(outputs):
            loss = call_function(self.activity_regularizer, out)
            if isinstance(loss, float) and loss == 0.0:
                continue
            batch = np.shape(out)[0] if np.ndim(out) else 1
            self.add_loss(ops.divide(loss, float(batch)) if batch else loss)

    def _clear_losses(self):
        """Drops the losses added by the previous call (this layer and its sub-layers)."""
        del self._losses[:]
        for layer in self._layers:
            layer._clear_losses()

    # ---- name scopes (Keras 3: build, calls and add_weight run in the layer's scope) ----
    @property
    def path(self):
        """The name-scope path where the layer was built ("outer/dense"); None before."""
        return self._path

    def _open_name_scope(self):
        """`name_scope(self.name, caller=self)`, remembering the path around the first one."""
        if self._parent_path is None:
            self._parent_path = _name_scope.current_path()
        return _name_scope.name_scope(self.name, caller=self)

    def _make_call_scope(self):
        scope = self.__dict__["_fk_call_scope"] = self._open_name_scope()  # reused per call
        return scope

    def rematerialized_call(self, layer_call, *args, **kwargs):
        """`layer_call` wrapped for rematerialization as this layer's RematScope mode asks
        (Keras 3's hook; `layer_call` itself when the mode does not select this call)."""
        return rematerialized_call(self, layer_call, args, kwargs)

    # ---- masking (Keras 3 semantics) ----
    def compute_mask(self, inputs, previous_mask=None):
        """The output mask(s) of a call; the default passes the input mask through."""
        return previous_mask

    def _call_accepts(self, arg):
        """Whether `call` takes the keyword `arg` (cached per class)."""
        cache = type(self).__dict__.get("_fk_call_args")
        if cache is None:
            try:
                params = inspect.signature(self.call).parameters
                cache = frozenset(params) | (
                    {"*"} if any(p.kind == p.VAR_KEYWORD for p in params.values()) else set())
            except (TypeError, ValueError):
                cache = frozenset()
            type.__setattr__(type(self), "_fk_call_args", cache)
        return arg in cache or "*" in cache

    def _first_call_arg(self):
        """Name of `call`'s first parameter (cached per class): Keras 3 lets a layer be
        called with its inputs by that name, `layer(logits=x, targets=y)`."""
        cache = type(self).__dict__.get("_fk_first_call_arg")
        if cache is None:
            cache = "inputs"
            try:
                params = list(inspect.signature(self.call).parameters.values())
            except (TypeError, ValueError):
                params = []
            if params and params[0].kind == params[0].POSITIONAL_OR_KEYWORD:
                cache = params[0].name
            type.__setattr__(type(self), "_fk_first_call_arg", cache)
        return cache

    def _populate_mask(self, args, kwargs):
        """(call kwargs, previous mask). As Keras 3: an explicit `mask=` wins; otherwise when
        `call` takes `mask` and the call has a single tensor argument, the mask attached to it
        is passed; the previous mask is the explicit one or the first input's."""
        explicit = kwargs.get("mask")
        if explicit is not None:
            return kwargs, explicit
        previous = _mask_of(args[0])
        if previous is None or "mask" in kwargs and kwargs["mask"] is not None:
            return kwargs, previous
        others = [v for k, v in kwargs.items() if k != "mask"] + list(args[1:])
        if self._call_accepts("mask") and not any(
                _is_tensor(t) for t in nest.flatten(others)):
            kwargs = dict(kwargs, mask=previous)
        return kwargs, previous

    def _set_mask_metadata(self, inputs, outputs, previous_mask):
        """Attaches compute_mask's output mask(s) to the outputs (supporting layers only)."""
        if not self.supports_masking:
            return
        flat_out = nest.flatten(outputs)
        if all(get_keras_mask(t) is not None for t in flat_out):
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        flat_masks = nest.flatten(masks) if isinstance(masks, (list, tuple)) else [masks]
        for t, m in zip(flat_out, flat_masks):
            if m is not None and get_keras_mask(t) is None:
                set_keras_mask(t, m)

    def _symbolic_call(self, args, kwargs, flat):
        for t in flat:
            if not isinstance(t, KerasTensor):
                raise ValueError(
                    f'Layer "{self.name}" was called on a mix of symbolic and concrete inputs: '
                    f"{type(t).__name__}. Call it on KerasTensors (from `Input`) or on arrays."
                )
        shapes = [t.shape for t in flat]
        self._maybe_build(shapes)
        check_input_spec(self.input_spec, shapes, self.name)
        kwargs = {k: v for k, v in kwargs.items() if not (k == "training" and v is None)}
        call_kwargs, previous_mask = self._populate_mask(args, kwargs)
        with symbolic_call_scope(), self._open_name_scope(), discard_writes():
            try:
                outputs = self.call(*args, **call_kwargs)
            except Exception:
                if self._fk_builtin_call():
                    raise
                outputs = self._fk_stand_in_outputs(args, call_kwargs)
        # Fresh tensors for the outputs, so a layer returning its input keeps both histories;
        # a mask the call attached (a nested model's) stays with them.
        outputs = nest.map_structure(_fresh_output(self.name), outputs)
        self._set_mask_metadata(args[0], outputs, previous_mask)
        if not in_symbolic_call():
            Node(self, args, kwargs, outputs)
        return outputs

    def _fk_stand_in_outputs(self, args, kwargs):
        """A user `call` that failed on KerasTensors, traced on stand-in values as Keras 3
        does (layers/stand_in_trace.py); the KerasTensor error is raised if that fails too."""
        import sys

        from fkeras.layers.stand_in_trace import trace_output_spec

        error = sys.exc_info()[1]
        try:
            return trace_output_spec(self, args, kwargs)
        except Exception:
            raise error from None

    def _record_call(self, inputs, outputs):
        """Records a node for outputs computed outside `call` (used by OpLayer)."""
        Node(self, inputs, {}, outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        """Output shape(s) for an input shape, by running `call` symbolically."""
        if isinstance(input_shape, list) and input_shape and isinstance(input_shape[0], (tuple, list)):
            inputs = [KerasTensor(s) for s in input_shape]
        else:
            inputs = KerasTensor(input_shape)
        self._maybe_build([t.shape for t in nest.flatten(inputs)])
        with symbolic_call_scope(), discard_writes():
            out = self.call(inputs)
        return nest.map_structure(lambda t: t.shape, out)

    def compute_output_spec(self, *args, **kwargs):
        with symbolic_call_scope():
            return self(*args, **kwargs)

    # ---- weights ----
    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._layers:
            layer.trainable = value

    @property
    def layers(self):
        return list(self._layers)

    def _all_layers(self):
        seen, out = set(), []
        stack = list(reversed(self._layers))
        while stack:
            layer = stack.pop()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            out.append(layer)
            stack.extend(reversed(layer._layers))
        return out

    @property
    def trainable_weights(self):
        if not self._trainable:
            return []
        out = list(self._trainable_weights)
        for layer in self._layers:
            out.extend(w for w in layer.trainable_weights if not any(w is o for o in out))
        return out

    @property
    def non_trainable_weights(self):
        if not self._trainable:
            out = list(self._trainable_weights) + list(self._non_trainable_weights)
            for layer in self._layers:
                out.extend(w for w in layer.weights if not any(w is o for o in out))
            return out
        out = list(self._non_trainable_weights)
        for layer in self._layers:
            out.extend(w for w in layer.non_trainable_weights if not any(w is o for o in out))
        return out

    @property
    def weights(self):
        """This layer's trainable then non-trainable weights, then each sub-layer's `weights`
        in order (Keras: a model's weights concatenate `layer.weights` over its layers, so a
        BatchNormalization's moving statistics follow its gamma and beta)."""
        out = list(self._trainable_weights) + list(self._non_trainable_weights)
        for layer in self._layers:
            out.extend(w for w in layer.weights if not any(w is o for o in out))
        return out

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        """`non_trainable_weights` plus the states of the SeedGenerators held by this layer
        and its sub-layers (Keras 3)."""
        if not self._trainable:
            return self.variables
        return self.non_trainable_weights + self._fk_seed_states()

    @property
    def variables(self):
        """`weights` plus the states of the SeedGenerators held by this layer and its
        sub-layers (Keras 3 lists them in `variables`, not in `weights`)."""
        return self.weights + self._fk_seed_states()

    def _fk_seed_states(self):
        states, seen, stack = [], set(), [self]
        while stack:
            layer = stack.pop()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            for gen in layer.__dict__.get("_seed_generators", ()):
                if not any(gen.state is s for s in states):
                    states.append(gen.state)
            stack.extend(reversed(layer._layers))
        return states

    def get_weights(self):
        return [w.numpy() for w in self.weights]

    def save_own_variables(self, store):
        """Writes this layer's own variables (not its sub-layers') into the dict `store`
        under "0", "1", ...: trainable then non-trainable (Keras 3). `model.save` and
        `save_weights` call a user override and write whatever keys it stores."""
        for i, v in enumerate(self._trainable_weights + self._non_trainable_weights):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store):
        """Assigns this layer's own variables from `store` (as `save_own_variables` wrote
        it); a user override receives the saved arrays under the keys it wrote."""
        own = self._trainable_weights + self._non_trainable_weights
        if len(store) != len(own):
            raise ValueError(
                f"Layer '{self.name}' expected {len(own)} variables, but received "
                f"{len(store)} variables during loading. Expected: {[v.name for v in own]}")
        for i, v in enumerate(own):
            v.assign(store[str(i)])

    def set_weights(self, weights):
        params = self.weights
        weights = list(weights)
        if len(params) != len(weights):
            raise ValueError(
                f'You called `set_weights(weights)` on layer "{self.name}" with a weight list '
                f"of length {len(weights)}, but the layer was expecting {len(params)} weights."
            )
        arrays = [np.asarray(w) for w in weights]
        for p, w in zip(params, arrays):
            if tuple(p.shape) != w.shape:
                raise ValueError(
                    f"Layer {self.name} weight shape {tuple(p.shape)} is not compatible with "
                    f"provided weight shape {w.shape}."
                )
        for p, w in zip(params, arrays):
            p.assign(w)

    def count_params(self):
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on layer '{self.name}', but the layer isn't "
                "built. You can build it manually via: `layer.build(input_shape)`."
            )
        return int(sum(int(np.prod(w.shape)) for w in self.weights))

    @property
    def losses(self):
        """Regularization and added losses of this layer and its sub-layers: Tensors in user
        code (Keras 3), device buffers inside fkeras."""
        out = []
        for w in self._trainable_weights + self._non_trainable_weights:
            if w.regularizer is not None:
                out.append(call_function(w.regularizer, w))
        for layer in self._layers:
            out.extend(layer.losses)
        out.extend(self._losses)
        return out if _MODE.array else [wrap(t) for t in out]  # Tensors for user code

    def add_loss(self, loss):
        self._losses.append(loss)

    # ---- config ----
    def get_config(self):
        policy = self._fk_policy
        if policy is not None:  # Keras 3 writes the policy's serialized form
            from fkeras.dtype_policies import serialize

            policy = serialize(policy)
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": self.dtype if policy is None else policy}
        if hasattr(self, "_batch_input_shape"):
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        """The input shape the layer was built with, as `{"input_shape": shape}` (None when
        it was never built); `build_from_config` builds from it (Keras 3)."""
        recorded = self.__dict__.get("_build_shapes_dict")
        if recorded is not None:
            return dict(recorded)
        if self._inbound_nodes:
            return {"input_shape": self._inbound_nodes[0].input_shapes}
        return None

    def build_from_config(self, config):
        """Builds the layer's state from `get_build_config()`'s dict: `build(input_shape)`,
        or `build(**shapes_dict)` for a layer built from several arguments (Keras 3)."""
        if not config:
            return
        if "input_shape" in config:
            self.build(config["input_shape"])
        elif "shapes_dict" in config:
            self.build(**config["shapes_dict"])
        self.built = True

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _cast_int_array(x):
    if type(x) in _devices._BUFFER_TYPES and x.dtype.kind in "iub":  # no cast kernel there
        dev = _devices.device_of(x)
        return dev.asarray(dev.to_numpy(x).astype(np.float32))
    if isinstance(x, np.ndarray) and x.dtype.kind in "iub":
        out = x.astype(np.float32)
        mask = get_keras_mask(x)
        if mask is not None:
            set_keras_mask(out, mask)
        return out
    return x


def cast_int_inputs(args, flat, layer_name=None):
    """`args` with the integer/bool arrays of `args[0]` (flattened as `flat`) cast to float32;
    the same tuple when there are none (the common case costs one pass over `flat`). Arrays
    that are not numbers (strings, objects, complex) raise a ValueError naming the layer."""
    cast = False
    for i, t in enumerate(flat):
        if (isinstance(t, np.ndarray) or type(t) in _devices._BUFFER_TYPES) \
                and t.dtype.kind != "f":
            if t.dtype.kind not in "iub":
                raise ValueError(
                    f'Input {i} of layer "{layer_name}" has dtype {t.dtype}, which this layer '
                    "cannot compute with: expected floating-point, integer or bool data. Full "
                    f"shape received: {t.shape}"
                )
            cast = True
    if not cast:
        return args
    return (nest.map_structure(_cast_int_array, args[0]),) + tuple(args[1:])


def _fresh_output(layer_name):
    def fresh(t):
        out = KerasTensor(t.shape, t.dtype, name=f"{layer_name}/out")
        mask = get_keras_mask(t)
        if mask is not None:
            set_keras_mask(out, mask)
        return out
    return fresh


def _mask_of(inputs):
    """The mask of a tensor, or the masks of a list of tensors (None when none has one)."""
    if isinstance(inputs, (list, tuple)):
        masks = [get_keras_mask(t) for t in inputs]
        return masks if any(m is not None for m in masks) else None
    return get_keras_mask(inputs)


def _is_tensor(x):
    return isinstance(x, (KerasTensor, np.ndarray)) or hasattr(x, "__array__") and \
        not isinstance(x, (bool, int, float, str))


def _build_in_name_scope(build):
    """A subclass's `build`, run in the layer's name scope (Keras 3 wraps every `build`): its
    weights, and the layers it builds, get the layer's path; the layer is built after it."""
    import functools

    @functools.wraps(build)
    def build_in_scope(self, *args, **kwargs):
        if len(args) == 1 and not kwargs or set(kwargs) == {"input_shape"} and not args:
            self._fk_record_build_shape(args[0] if args else kwargs["input_shape"])
        with self._open_name_scope():
            self._path = _name_scope.current_path()
            result = build(self, *args, **kwargs)
        # Keras 3: a `build` called by hand builds the layer, so the first call does not run
        # it again (which would create a second set of weights and drop values set since).
        self.built = True
        return result

    build_in_scope._fk_in_scope = True
    return build_in_scope
