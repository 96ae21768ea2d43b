"""LoRA (Keras 3's `enable_lora`) for a layer whose main weight is one array (Dense's kernel,
Embedding's embeddings, EinsumDense's kernel of any rank): the weight is frozen and the layer
uses weight + (lora_alpha / lora_rank) * A @ B, with A (shape[:-1] + (rank,)) and
B (rank, shape[-1]) trainable.

A subclass names its weight (`_lora_target`), the weight-name stem of A and B
(`_lora_stem`), its constraint/regularizer attributes, and the text Keras raises when a
constraint is set; it calls `_init_lora` in its constructor and `_build_lora` at the end of
`build`, and reads the weight through `_lora_weight()`.
"""

from fkeras import initializers, ops


class LoRAMixin:
    _lora_target = "kernel"
    _lora_stem = "lora_kernel"
    _lora_constraint_error = ("Lora is incompatible with kernel constraints. In order to "
                              "enable lora on this layer, remove the `kernel_constraint` "
                              "argument.")

    def _init_lora(self, lora_rank, lora_alpha):
        if lora_rank is not None and (isinstance(lora_rank, bool)
                                      or not isinstance(lora_rank, int) or lora_rank <= 0):
            raise ValueError(f'Invalid `lora_rank` for layer "{self.name}": expected a positive '
                             f"integer. Received: lora_rank={lora_rank}")
        self.lora_rank = lora_rank
        self.lora_alpha = lora_alpha if lora_alpha is not None else lora_rank
        self.lora_enabled = False

    def _build_lora(self):
        # Keras 3.15's build calls enable_lora(rank) and so resets lora_alpha to the rank; the
        # value the user gave is kept here (docs/layers.md).
        if self.lora_rank:
            self.enable_lora(self.lora_rank, self.lora_alpha)

    def enable_lora(self, rank, lora_alpha=None, a_initializer="he_uniform",
                    b_initializer="zeros"):
        """Freezes the weight and adds the trainable low-rank update A @ B (Keras 3)."""
        target = self._lora_target
        if getattr(self, f"{target}_constraint", None):
            raise ValueError(self._lora_constraint_error)
        if not self.built:
            raise ValueError("Cannot enable lora on a layer that isn't yet built.")
        if self.lora_enabled:
            raise ValueError("lora is already enabled. This can only be done once per layer.")
        weight = getattr(self, target)
        regularizer = getattr(self, f"{target}_regularizer", None)
        weight.trainable = False
        shape = tuple(weight.shape)
        for suffix, shape, init in (("a", shape[:-1] + (rank,), a_initializer),
                                    ("b", (rank, shape[-1]), b_initializer)):
            name = f"{self._lora_stem}_{suffix}"
            setattr(self, name, self.add_weight(shape=shape, initializer=initializers.get(init),
                                                regularizer=regularizer, name=name))
        self.lora_rank = rank
        self.lora_alpha = lora_alpha if lora_alpha is not None else rank
        self.lora_enabled = True

    # A frozen (LoRA) weight stays first in `weights`, as in Keras, but is not trainable.
    @property
    def trainable_weights(self):
        return [w for w in super().trainable_weights if w.trainable]

    @property
    def non_trainable_weights(self):
        frozen = [w for w in self._trainable_weights if not w.trainable] if self.trainable else []
        return frozen + super().non_trainable_weights

    def _lora_weight(self):
        """The weight the layer computes with (updated by A @ B when LoRA is on)."""
        weight = getattr(self, self._lora_target)
        if not self.lora_enabled:
            return weight
        a = getattr(self, f"{self._lora_stem}_a")
        b = getattr(self, f"{self._lora_stem}_b")
        return ops.add(weight, ops.multiply(ops.matmul(a, b), self.lora_alpha / self.lora_rank))

    def _lora_config(self, config):
        if self.lora_rank:
            config["lora_rank"] = self.lora_rank
            config["lora_alpha"] = self.lora_alpha
        return config
