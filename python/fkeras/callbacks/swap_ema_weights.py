"""SwapEMAWeights (Keras 3): evaluate/predict (and optionally checkpoint) with the
optimizer's exponential moving averages of the weights (`use_ema=True`)."""

from fkeras.callbacks.callback import Callback


class SwapEMAWeights(Callback):
    """Swaps the model's weights with the optimizer's EMA weights around evaluation.

    Args:
        swap_on_epoch: also hold the EMA weights between epochs (from `on_epoch_end` to the
            next `on_epoch_begin`), so callbacks such as ModelCheckpoint see them; after the
            last epoch the averages are set to the weights, so both copies are the EMA.

    Departure: Keras 3.15's `on_predict_end` never swaps back (its test is inverted); here
    predict swaps back as evaluate does.
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizers(self):
        opt = self.model.optimizer
        opt = getattr(opt, "inner_optimizer", opt)
        opts = list(getattr(opt, "optimizers", [opt]))
        ema = [o for o in opts if getattr(o, "use_ema", False)]
        if not ema:
            raise ValueError("SwapEMAWeights must be used with `use_ema=True` in the "
                             f"optimizer. Received: use_ema=False (optimizer {opt.name!r})")
        return [o for o in ema if o.built]

    def _swap(self):
        from fkeras.engine.variable import WRITES

        WRITES.n += 1
        for opt in self._optimizers():
            opt._ensure_packed()
            for g in opt._groups:
                tmp = g.dev.copy(g.param)
                g.param[...] = g.slots["average"]
                g.slots["average"][...] = tmp

    def _finalize(self):
        for opt in self._optimizers():
            for g in opt._groups:
                g.slots["average"][...] = g.param

    def _to_ema(self):
        if not self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = True

    def _from_ema(self):
        if self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._from_ema()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._to_ema()
            if epoch == self.params["epochs"] - 1:
                self._finalize()

    def on_test_begin(self, logs=None):
        self._to_ema()

    def on_test_end(self, logs=None):
        self._from_ema()

    def on_predict_begin(self, logs=None):
        self._to_ema()

    def on_predict_end(self, logs=None):
        self._from_ema()
