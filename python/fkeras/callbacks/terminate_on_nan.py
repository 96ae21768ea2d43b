"""TerminateOnNaN: stops training at the first batch whose loss is NaN or infinite."""

import math

from fkeras.callbacks.callback import Callback


class TerminateOnNaN(Callback):
    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
