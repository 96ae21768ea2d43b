"""AdamW (Keras 3): Adam with decoupled weight decay (default 0.004), applied before the Adam
step: w -= lr * weight_decay * w."""

from fkeras.optimizers.adam import Adam


class AdamW(Adam):
    """Adam with decoupled weight decay.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        weight_decay: Defaults to 0.004.
        beta_1, beta_2, epsilon, amsgrad: as in Adam.
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, name="adamw", **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name,
                         weight_decay=weight_decay, **kwargs)
