"""Optimizer base class: Keras 3 semantics over packed, flat buffers.

When an optimizer is built on a list of variables it PACKS them: every trainable variable's
`.value` becomes a view into one flat parameter buffer (values copied in, shapes kept;
variables are updated in place, so the views stay valid), and each slot (momentum, velocity,
...) is one flat buffer of the same length. One fused kernel call (`<name>_update` in the
kernel table) then updates every variable at once; per step the gradients are written into
one flat gradient buffer. Variables that differ in device or in weight decay go to separate
groups (one kernel call each).

Step order (Keras 3): gradients unscaled (loss_scale_factor), clipped (clipnorm per variable,
global_clipnorm, or clipvalue), decoupled weight decay and the update (inside the kernel),
constraints applied to the updated variables, EMA, then `iterations += 1`. The learning rate
of a step is the schedule evaluated at `iterations` before the increment.
"""

import contextlib
import re
import warnings

import numpy as np

from fkeras.distribution import _state as _dist
from fkeras.engine import naming
from fkeras.engine.variable import Variable
from fkeras.engine.variable import WRITES as _variable_writes
from fkeras.optimizers import schedules
from fkeras.optimizers.state import ScalarVariable, view_variable


class _Group:
    """Variables packed into one flat buffer, updated by one kernel call."""

    def __init__(self, dev, variables, use_decay):
        self.dev = dev
        self.variables = variables
        self.use_decay = use_decay
        self.sizes = [int(np.prod(v.shape)) for v in variables]
        self.offsets = np.cumsum([0] + self.sizes[:-1]).astype(np.int64)
        self.n = int(sum(self.sizes))
        self.param = dev.empty((self.n,))
        for v, off, size in zip(variables, self.offsets, self.sizes):
            pack(dev, self.param[off:off + size], v)
        self.grad = dev.empty((self.n,))
        self.slots = {}

    def view(self, buf, i):
        off, size = self.offsets[i], self.sizes[i]
        return buf[off:off + size].reshape(self.variables[i].shape)


PER_VARIABLE_MIN_SIZE = 1 << 16  # elements; see Optimizer.build


def pack(dev, view, variable):
    """Copies a variable's value into `view` (its slice of a flat buffer) and makes the
    variable's value that slice, in its own shape."""
    value = variable._value
    value = np.asarray(value, dtype=dev.dtype) if dev.is_host else dev.asarray(value)
    dev.copy_into(view, value.reshape(-1))
    variable._value = view.reshape(variable.shape)


def _is_view(dev, value, view, param):
    """Whether `value` is still `view` of the flat buffer `param` (nothing replaced it)."""
    if dev.is_host:
        return (value.base is param and np.shares_memory(value, view)
                and value.size == view.size)
    return dev.holds(value) and value.size == view.size and value.ptr == view.ptr


@contextlib.contextmanager
def _host_buffers(groups, names, read_only=(), cpu_kernels=False):
    """NumPy code on groups of a non-host device (the rarer step features: loss scaling,
    accumulation, clipping, EMA; NumPy-computing updates): the named buffers ("grad",
    "param" or a slot) are replaced by host copies for the block and copied back after it,
    except those in `read_only`; `cpu_kernels` also makes the group's device the cpu for the
    block (an update that calls kernels between its NumPy)."""
    swapped, devices = [], []
    for g in groups:
        if g.dev.is_host:
            continue
        for name in names:
            buf = getattr(g, name) if name in ("grad", "param") else g.slots[name]
            host = np.array(g.dev.to_numpy(buf), copy=True)
            _set_buffer(g, name, host)
            swapped.append((g, g.dev, name, buf, host))
        if cpu_kernels:
            from fkeras.backend import devices as _devices

            devices.append((g, g.dev))
            g.dev = _devices.get_device("cpu")
    try:
        yield
    finally:
        for g, dev in devices:
            g.dev = dev
        for g, dev, name, buf, host in swapped:
            if name not in read_only:
                dev.copy_into(buf, host)
            _set_buffer(g, name, buf)


def _set_buffer(group, name, buf):
    if name in ("grad", "param"):
        setattr(group, name, buf)
    else:
        group.slots[name] = buf


class _Segment:
    """One variable's slice of a group (the same attributes as a group, for `_update`)."""

    def __init__(self, group, i):
        self.dev = group.dev
        self.param = group.param[group.offsets[i]:group.offsets[i] + group.sizes[i]]
        self.slots = {name: buf[group.offsets[i]:group.offsets[i] + group.sizes[i]]
                      for name, buf in group.slots.items()}
        self.n = group.sizes[i]
        self.grad = None


class Optimizer:
    """Base class of optimizers (Keras 3 API).

    Args:
        learning_rate: float, or a LearningRateSchedule, or a callable of no argument.
        weight_decay: decoupled weight decay (param -= lr * weight_decay * param), or None.
        clipnorm: clip each variable's gradient to this L2 norm.
        clipvalue: clip gradients elementwise to [-clipvalue, clipvalue].
        global_clipnorm: clip all gradients jointly to this global L2 norm.
        use_ema, ema_momentum, ema_overwrite_frequency: exponential moving average of weights.
        loss_scale_factor: gradients are divided by it before the update.
        gradient_accumulation_steps: int >= 2 or None. Gradients are summed over this many
            calls to `apply`; the Nth call updates the variables with their mean (then
            clipping, weight decay and the update, as Keras 3) and resets the sums.
            `iterations` counts updates (raw calls // N); learning-rate schedules see the
            raw call count; EMA and constraints run on every call, as in Keras 3.
        name: optimizer name.
    """

    # Per-variable slot buffers, as Keras creates them: a list of calls to
    # add_optimizer_variables, each a tuple of names created interleaved (Keras's order of
    # `optimizer.variables`). Subclasses return it from `_slot_calls()`.
    kernel = None
    # The DataParallel sharded update this optimizer's buffers live in (None: private
    # buffers; see fkeras/distribution/sharded_update.py).
    _fk_sharded = None

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.")
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                f"global_clipnorm={global_clipnorm}"
            )
        if gradient_accumulation_steps and not (
                isinstance(gradient_accumulation_steps, int)
                and gradient_accumulation_steps >= 2):
            raise ValueError(
                "`gradient_accumulation_steps` must be an integer >= 2. Received: "
                f"gradient_accumulation_steps={gradient_accumulation_steps}"
            )
        if use_ema and not 0 <= ema_momentum <= 1:
            raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: "
                             f"ema_momentum={ema_momentum}")
        self.name = name or naming.to_snake_case(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps or None
        self.built = False
        self._iterations = ScalarVariable(0, "iteration", dtype=np.int64)
        self._lr_var = None
        self._learning_rate = None
        self._set_learning_rate(learning_rate, initial=True)
        self._exclude_ids, self._exclude_pattern = set(), None
        self._groups = []
        self._trainable_variables = []
        self._known_ids = ()
        self._extra_scalars = []

    # ---- learning rate and step counter ----
    def _set_learning_rate(self, value, initial=False):
        if isinstance(value, schedules.LearningRateSchedule) or (
                callable(value) and not isinstance(value, Variable)):
            self._learning_rate = value
            return
        if isinstance(self._learning_rate, schedules.LearningRateSchedule):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not "
                "settable. If you need the learning rate to be settable, you should "
                "instantiate the optimizer with a float `learning_rate` argument."
            )
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                "Argument `learning_rate` should be float, or an instance of "
                "LearningRateSchedule, or a callable (that takes in the current iteration "
                f"value and returns the corresponding learning rate value). Received instead: "
                f"learning_rate={value}"
            ) from None
        if self._lr_var is None:
            self._lr_var = ScalarVariable(value, "learning_rate", dtype=np.float32)
        else:
            self._lr_var.assign(value)
        self._learning_rate = self._lr_var

    @property
    def learning_rate(self):
        """The current learning rate: a scalar variable (float lr) or the schedule's value."""
        lr = self._learning_rate
        if isinstance(lr, schedules.LearningRateSchedule):
            return lr(int(self._iterations))
        if lr is self._lr_var:
            return lr
        return lr()

    @learning_rate.setter
    def learning_rate(self, value):
        self._set_learning_rate(value)

    def _current_lr(self):
        lr = self._learning_rate
        if lr is self._lr_var:
            return float(lr._value)
        if isinstance(lr, schedules.LearningRateSchedule):
            return float(lr(int(self._iterations._value)))
        return float(lr())

    @property
    def iterations(self):
        """The number of updates: the step counter, divided by gradient_accumulation_steps
        when accumulating (a read-only copy then, as Keras 3 returns a tensor)."""
        if self.gradient_accumulation_steps:
            return ScalarVariable(int(self._iterations._value) //
                                  self.gradient_accumulation_steps, "iteration",
                                  dtype=np.int64)
        return self._iterations

    def _update_count(self):
        """The 1-based index of the coming update (the kernels' bias-correction step)."""
        raw = int(self._iterations._value)
        n = self.gradient_accumulation_steps
        return (raw // n if n else raw) + 1

    # ---- building ----
    def _slot_calls(self):
        return []

    def _slot_init(self, name):
        return 0.0

    def _state_calls(self):
        """Keras 3's creation order: EMA averages, gradient accumulators, then the slots."""
        calls = [("average",)] if self.use_ema else []
        if self.gradient_accumulation_steps:
            calls.append(("gradient_accumulator",))
        return calls + list(self._slot_calls())

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Excludes variables (by object or by name pattern) from weight decay."""
        if self.built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before "
                             "the optimizer is built.")
        self._exclude_ids = {id(v) for v in var_list or []}
        self._exclude_pattern = re.compile("|".join(set(var_names))) if var_names else None

    def _use_weight_decay(self, variable):
        if id(variable) in self._exclude_ids:
            return False
        if self._exclude_pattern is not None and self._exclude_pattern.search(variable.name):
            return False
        return True

    def build(self, variables):
        """Packs `variables` into flat buffers and creates the slots."""
        if self.built:
            return
        variables = list(variables)
        keyed = {}
        for v in variables:
            key = (v._device.name, self.weight_decay is not None and self._use_weight_decay(v))
            keyed.setdefault(key, []).append(v)
        self._groups = [_Group(vs[0]._device, vs, decay) for (_, decay), vs in keyed.items()]
        names = [n for call in self._state_calls() for n in call]
        for g in self._groups:
            for n in names:
                g.slots[n] = g.dev.zeros((g.n,))
                if n == "average":
                    g.slots[n][...] = g.param
                elif self._slot_init(n):
                    g.slots[n][...] = self._slot_init(n)
        self._trainable_variables = variables
        self._known_ids = tuple(id(v) for v in variables)
        self._where = {}
        for gi, g in enumerate(self._groups):
            for i, v in enumerate(g.variables):
                self._where[id(v)] = (gi, i)
        self._single = len(self._groups) == 1 and self._groups[0].variables == variables
        self._constrained = [v for v in variables if v.constraint is not None]
        # Few large variables: per-variable kernel calls beat copying every gradient into the
        # flat buffer; many small ones: one call over the flat buffer wins.
        g0 = self._groups[0] if self._groups else None
        self._per_variable = bool(self._single and g0.n >= PER_VARIABLE_MIN_SIZE)
        self._segments = [_Segment(g0, i) for i in range(len(variables))] \
            if self._per_variable else []
        self._values = [v._value for v in variables]  # references: an id could be reused
        self.built = True

    def _fk_buffers_changed(self):
        """A group's buffers were replaced (DataParallel's sharded update moves them to
        shared memory and back): the per-variable views follow."""
        self._values = [v._value for v in self._trainable_variables]
        if self._per_variable:
            self._segments = [_Segment(self._groups[0], i)
                              for i in range(len(self._trainable_variables))]

    def _ensure_packed(self):
        """Re-points variables whose value is no longer this optimizer's view (another
        optimizer packed them, or the value array was replaced): their current values are
        copied into this optimizer's buffer first, so no update is ever lost."""
        for g in self._groups:
            for v, off, size in zip(g.variables, g.offsets, g.sizes):
                view = g.param[off:off + size]
                if not _is_view(g.dev, v._value, view, g.param):
                    pack(g.dev, view, v)
        self._values = [v._value for v in self._trainable_variables]

    @property
    def variables(self):
        """Optimizer state in Keras 3's order: iterations, learning_rate (float lr), EMA
        averages, each slot call's variables interleaved, extra scalars."""
        out = [self._iterations]
        if self._learning_rate is self._lr_var:
            out.append(self._lr_var)
        if not self.built:
            return out
        for call in self._state_calls():
            for v in self._trainable_variables:
                gi, i = self._where[id(v)]
                g = self._groups[gi]
                for name in call:
                    out.append(view_variable(g.view(g.slots[name], i), f"{name}/{v.name}",
                                             g.dev))
        return out + list(self._extra_scalars)

    # ---- loss scaling ----
    def scale_loss(self, loss):
        """The loss times `loss_scale_factor` (unchanged when it is None), as Keras 3."""
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    def _fk_loss_factor(self):
        """The factor `fit` applies to the loss before differentiating (None: none)."""
        return self.loss_scale_factor

    # ---- applying gradients ----
    def apply_gradients(self, grads_and_vars):
        grads, variables = zip(*grads_and_vars)
        self.apply(grads, variables)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Updates `trainable_variables` (default: those the optimizer was built with)."""
        if len(grads) == 0:
            return
        _variable_writes.n += 1  # the updates write the variables' buffers in place
        if self._fk_sharded is not None and _dist.COMM is None:  # the distribution ended
            from fkeras.distribution import sharded_update

            sharded_update.detach(self)
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    "When passing `grads` without `variables`, the optimizer must already be "
                    "built on a list of variables. Call `optimizer.build(trainable_variables)` "
                    "first."
                )
            trainable_variables = self._trainable_variables
        elif not self.built:
            self.build(trainable_variables)
        same = trainable_variables is self._trainable_variables or (
            tuple(map(id, trainable_variables)) == self._known_ids)
        if not same:
            self._check_variables(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(f"Received {len(grads)} gradients for "
                             f"{len(trainable_variables)} variables.")
        for v, value in zip(self._trainable_variables, self._values):
            if v._value is not value:
                self._ensure_packed()
                break
        if same and self._per_variable and _dist.COMM is None and not (
                self.clipnorm or self.clipvalue or self.global_clipnorm or self.use_ema
                or self.loss_scale_factor is not None or self.gradient_accumulation_steps
                ) and not any(g is None for g in grads):
            self._apply_per_variable(grads)
            return
        missing = self._gather(grads, trainable_variables, same)
        saved = self._save_untouched(missing) if missing else None
        self._apply_flat()
        if saved:
            self._restore_untouched(saved)

    def _check_variables(self, variables):
        for v in variables:
            if id(v) not in self._where:
                raise ValueError(
                    f"Unknown variable: {v}. This optimizer can only be called for the "
                    "variables it was originally built with. When working with a new set of "
                    "variables, you should recreate a new optimizer instance."
                )

    def _gather(self, grads, variables, same):
        """Writes the gradients into the groups' flat buffers; returns the variables that get
        no update (no gradient, or not passed to this call)."""
        missing = [v for v, g in zip(variables, grads) if g is None]
        if same and self._single and not missing:
            g0 = self._groups[0]
            if g0.dev.is_host:
                np.concatenate([np.asarray(g, dtype=g0.dev.dtype).reshape(-1) for g in grads],
                               out=g0.grad)
            else:
                for i, grad in enumerate(grads):
                    g0.dev.copy_into(g0.view(g0.grad, i), g0.dev.asarray(grad))
            return missing
        if len(missing) == len(variables):
            raise ValueError(
                f"No gradients provided for any variable: {[v.path for v in variables]}. "
                "The loss does not depend on these variables on the GradientTape: something "
                "between them and the loss left fkeras's ops (np.asarray, .numpy(), float(), "
                "or NumPy/Python math on converted values), or the tape did not watch the "
                "inputs. Compute the loss with fkeras.ops or operators on tensors.")
        if missing:
            warnings.warn(
                f"Gradients do not exist for variables {[v.path for v in missing]} when "
                "minimizing the loss. If using `model.compile()`, did you forget to provide a "
                "`loss` argument?"
            )
        given = {id(v): g for v, g in zip(variables, grads)}
        for g in self._groups:
            for i, v in enumerate(g.variables):
                grad = given.get(id(v))
                g.view(g.grad, i)[...] = 0.0 if grad is None else grad
        return missing + [v for v in self._trainable_variables if id(v) not in given]

    def _save_untouched(self, variables):
        """Variables without a gradient keep their values and slots (Keras skips them)."""
        saved = []
        for v in variables:
            gi, i = self._where[id(v)]
            g = self._groups[gi]
            bufs = [g.param] + list(g.slots.values())
            saved.append((g, i, [np.array(g.dev.to_numpy(g.view(b, i)), copy=True)
                                 for b in bufs]))
        return saved

    def _restore_untouched(self, saved):
        for g, i, copies in saved:
            for b, c in zip([g.param] + list(g.slots.values()), copies):
                g.view(b, i)[...] = c

    def _apply_flat(self):
        """One step over the already-gathered flat gradients of every group."""
        if _dist.COMM is not None or self._fk_sharded is not None:
            # DataParallel: the global batch's gradient; on one machine a sharded update
            from fkeras.distribution import sharded_update

            sharded = sharded_update.for_step(self)
            if sharded is not None:
                sharded.apply(self)
                return
            _dist.reduce_gradients([g.grad for g in self._groups])
        if self.loss_scale_factor is not None:
            with _host_buffers(self._groups, ("grad",)):
                for g in self._groups:
                    g.grad /= self.loss_scale_factor
        step = self._update_count()
        if self.gradient_accumulation_steps:
            with _host_buffers(self._groups, ("grad", "gradient_accumulator")):
                update = self._accumulate()
            if not update:
                self._after_update(step)
                return
        if self.clipnorm or self.clipvalue or self.global_clipnorm:
            with _host_buffers(self._groups, ("grad",)):
                self._clip()
        lr = self._current_lr()
        self._before_update(step)
        for g in self._groups:
            wd = float(self.weight_decay) if g.use_decay else 0.0
            self._update_on_device(g, lr, step, wd)
        self._after_update(step)

    def _apply_per_variable(self, grads):
        """Large models: one kernel call per variable on views of the flat buffers, reading
        each gradient where the tape left it (no copy into the flat gradient buffer)."""
        lr = self._current_lr()
        step = self._update_count()
        self._before_update(step)
        g0 = self._groups[0]
        wd = float(self.weight_decay) if g0.use_decay else 0.0
        for segment, grad in zip(self._segments, grads):
            if g0.dev.is_host:
                grad = np.asarray(grad)
                if grad.dtype != g0.dev.dtype or not grad.flags.c_contiguous:
                    grad = g0.dev.asarray(grad)
            else:
                grad = g0.dev.asarray(grad)
            segment.grad = grad.reshape(-1)
            self._update_on_device(segment, lr, step, wd)
            segment.grad = None
        self._after_update(step)

    def _accumulate(self):
        """Adds the gradients to the sums; on every Nth call turns the flat gradients into
        the mean over the N calls, resets the sums and returns True (update now)."""
        n = self.gradient_accumulation_steps
        update = (int(self._iterations._value) + 1) % n == 0
        for g in self._groups:
            acc = g.slots["gradient_accumulator"]
            if update:
                g.grad += acc
                g.grad /= n
                acc[...] = 0.0
            else:
                acc += g.grad
        return update

    def _after_update(self, step):
        for v in self._constrained:  # (NumPy code: on a host copy for a non-host device)
            v.assign(v.constraint(v._value if v._device.is_host
                                  else v._device.to_numpy(v._value)))
        if self.use_ema:
            with _host_buffers(self._groups, ("param", "average")):
                self._update_ema(step)
        self._iterations._value += 1

    def _clip(self):
        if self.clipnorm and self.clipnorm > 0:
            for g in self._groups:
                _clip_segments(g, float(self.clipnorm))
        elif self.global_clipnorm and self.global_clipnorm > 0:
            norm = float(np.sqrt(sum(float(np.dot(g.grad, g.grad)) for g in self._groups)))
            if norm > self.global_clipnorm or not np.isfinite(norm):
                # Keras 3: a non-finite global norm (a NaN or inf gradient) makes every
                # gradient NaN, rather than scaling some of them to 0.
                scale = self.global_clipnorm / norm if np.isfinite(norm) else np.nan
                for g in self._groups:
                    g.grad *= scale
        elif self.clipvalue and self.clipvalue > 0:
            for g in self._groups:
                np.clip(g.grad, -self.clipvalue, self.clipvalue, out=g.grad)

    def _before_update(self, step):
        """Hook for per-step scalars (Nadam's momentum-schedule product)."""

    def _update(self, group, lr, step, weight_decay):
        raise NotImplementedError

    # Whether `_update` calls only the device's kernels (the fused `<name>_update`); False for
    # updates that also compute in NumPy (Adafactor's factored moments, Muon's norms).
    native_update = True

    def _update_on_device(self, group, lr, step, weight_decay):
        """`_update`, or, for a NumPy-computing update on a non-host device, `_update` on host
        copies of the group's buffers with the cpu kernels (param and slots copied back)."""
        if self.native_update or group.dev.is_host:
            self._update(group, lr, step, weight_decay)
            return
        names = ("grad", "param", *group.slots)
        with _host_buffers([group], names, read_only=("grad",), cpu_kernels=True):
            self._update(group, lr, step, weight_decay)

    def _update_ema(self, step):
        momentum = self.ema_momentum if step > 1 else 0.0
        for g in self._groups:
            avg = g.slots["average"]
            avg *= momentum
            avg += (1.0 - momentum) * g.param
        freq = self.ema_overwrite_frequency
        if freq and step % freq == 0:
            for g in self._groups:
                g.param[...] = g.slots["average"]

    def finalize_variable_values(self, var_list=None):
        """With use_ema, overwrites the variables with their moving averages."""
        if self.use_ema and self.built:
            _variable_writes.n += 1
            for g in self._groups:
                g.dev.copy_into(g.param, g.slots["average"])

    # ---- state ----
    def save_own_variables(self, store):
        for i, v in enumerate(self.variables):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store):
        variables = self.variables
        if len(store.keys()) != len(variables):
            warnings.warn(
                f"Skipping variable loading for optimizer '{self.name}', because it has "
                f"{len(variables)} variables whereas the saved optimizer has "
                f"{len(store.keys())} variables."
            )
            return
        for i, v in enumerate(variables):
            v.assign(np.asarray(store[str(i)]))

    def get_config(self):
        lr = self._learning_rate
        if isinstance(lr, schedules.LearningRateSchedule):
            lr = schedules.serialize(lr)
        elif lr is self._lr_var:
            lr = float(lr._value)
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"],
                                                            custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _clip_segments(group, clipnorm):
    """Per-variable clip by norm over a flat buffer: g * clipnorm / max(||g||, clipnorm)."""
    g = group.grad
    if min(group.sizes, default=0) > 0:
        sq = np.add.reduceat(g * g, group.offsets)
    else:
        sq = np.array([float(np.dot(group.grad[o:o + s], group.grad[o:o + s]))
                       for o, s in zip(group.offsets, group.sizes)])
    norms = np.sqrt(sq)
    scale = clipnorm / np.maximum(norms, clipnorm)  # NaN for a variable with a NaN gradient
    if not np.all(scale >= 1.0):  # as Keras, that whole variable's gradient becomes NaN
        g *= np.repeat(scale.astype(g.dtype), group.sizes)
