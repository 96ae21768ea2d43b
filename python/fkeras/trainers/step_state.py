"""StepState: what a training/test step needs, prepared once per fit/evaluate call.

It fixes the forward function (a ForwardPlan for Functional models, `model(x)` otherwise),
which outputs come back as logits, the trainable variables (in a fixed list, so the
optimizer's packed buffers line up), and the regularized weights. The state is rebuilt when
the model graph, the compiled loss or the set of trainable variables changes.
"""

import inspect
import warnings

from fkeras.engine import tape as _tape
from fkeras.engine.tensor import call_function
from fkeras.engine.masking import get_keras_mask, set_keras_mask
from fkeras.ops import math as _math
from fkeras.trainers import forward_plan
from fkeras.utils import nest


class StepState:
    def __init__(self, model):
        self.model = model
        self.compile_loss = model.compiled_loss
        self.plan_ok = forward_plan.supports_plan(model)
        self.nodes_ref = getattr(model, "_nodes", None)
        self.logits = {}
        if self.plan_ok and self.compile_loss is not None:
            if not self.compile_loss.built:
                self.compile_loss._build(model.output_names)
            self.logits = self.compile_loss.use_logits(forward_plan.recoverable_outputs(model))
        self.needs_build = not self.plan_ok and _unbuilt(model)
        self._collect()
        self._train_plan = forward_plan.get_plan(model, self.logits) if self.plan_ok else None
        self._infer_plan = forward_plan.get_plan(model) if self.plan_ok else None
        self.x_template = None
        self.passes_training = declares_training(model)

    def _collect(self):
        model = self.model
        self.variables = list(model.trainable_variables)
        self.var_ids = tuple(map(id, self.variables))
        self.regularized = [v for v in self.variables if v.regularizer is not None]
        self.layers = model._all_layers() if hasattr(model, "_all_layers") else []

    def build_with(self, xs):
        """Builds a subclassed model's layers with one inference call on a batch (Keras builds
        it symbolically); afterwards its variables are known."""
        with _tape.stop_recording():
            self.forward(xs, training=False)
        self.needs_build = False
        self._collect()

    def valid_for(self, model):
        return (model.compiled_loss is self.compile_loss
                and getattr(model, "_nodes", None) is self.nodes_ref)

    # ---- forward ----
    def forward(self, xs, training, logits=True):
        """Flat list of outputs (logits where chosen, when `logits`)."""
        if self.plan_ok:
            plan = self._train_plan if logits else self._infer_plan
            return plan.run(xs, training=training)
        x = nest.pack_like(self.x_template, xs) if self.x_template is not None else (
            xs[0] if len(xs) == 1 else xs)
        if self.passes_training:
            return nest.flatten(self.model(x, training=training))
        return nest.flatten(self.model(x))  # Keras 3 passes `training` only when declared

    def probabilities(self, preds):
        """Predictions for metrics: logits turned into probabilities (outside the tape)."""
        if not self.logits:
            return preds
        out = list(preds)
        for i, act in self.logits.items():
            out[i] = forward_plan.apply_activation(act, preds[i])
            set_keras_mask(out[i], get_keras_mask(preds[i]))
        return out

    # ---- loss ----
    def total_loss(self, ys, preds, sws, logits=True, batch_size=None):
        """Compiled loss + weight regularization + losses added during the forward."""
        compile_loss = self.compile_loss
        loss = None
        if compile_loss is not None:
            if not compile_loss.built:
                compile_loss.build_for(len(preds))
            loss = compile_loss.compute(ys, preds, sws, logits=logits and bool(self.logits),
                                        batch_size=batch_size)
        for v in self.regularized:
            term = call_function(v.regularizer, v)
            loss = term if loss is None else _math.add(loss, term)
        return loss

    def add_losses(self, loss, added):
        """`loss` plus the losses layers added during the forward; an error if there is none."""
        for extra in added:
            loss = extra if loss is None else _math.add(loss, extra)
        if loss is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()` "
                             "(or add losses with `add_loss`).")
        return loss

    def pop_added_losses(self):
        """Losses layers added (add_loss, activity regularizers) during the forward; removed
        from the layers. Every forward path (the plan, a model call) is an entry call, which
        clears the previous call's losses first, so what is here belongs to this step."""
        added = []
        for layer in self.layers:
            added.extend(layer._losses)
            del layer._losses[:]
        return added


def declares_training(model):
    """Whether `model.call` names a `training` parameter (a `**kwargs` catch-all does not
    count): Keras 3's trainers pass `training` only then."""
    try:
        return "training" in inspect.signature(model.call).parameters
    except (TypeError, ValueError):
        return False


def _unbuilt(model):
    if not model.built:
        return True
    return any(not layer.built for layer in model._all_layers())


def get_state(model):
    """The model's StepState, rebuilt (with a warning for the optimizer) when stale."""
    state = model.__dict__.get("_fk_step_state")
    if state is not None and state.valid_for(model):
        ids = tuple(map(id, model.trainable_variables))
        if ids == state.var_ids:
            return state
    state = StepState(model)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and optimizer.built and optimizer._known_ids != state.var_ids:
        warnings.warn(
            "The set of trainable variables changed since the optimizer was built (was "
            "`trainable` changed after compile?): the optimizer state is rebuilt for the new "
            "set. Call `compile()` again after changing `trainable` to silence this warning.",
            stacklevel=3,
        )
        optimizer.built = False
    model.__dict__["_fk_step_state"] = state
    return state
