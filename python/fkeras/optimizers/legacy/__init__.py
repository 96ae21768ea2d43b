"""fkeras.optimizers.legacy: as in Keras 3, every name raises ImportError when used."""


class LegacyOptimizerWarning:
    """Placeholder for a Keras 2 legacy optimizer: constructing one raises ImportError."""

    def __init__(self, *args, **kwargs):
        raise ImportError(
            "`keras.optimizers.legacy` is not supported in Keras 3. When using `tf.keras`, to "
            "continue using a `tf.keras.optimizers.legacy` optimizer, you can install the "
            "`tf_keras` package (Keras 2) and set the environment variable "
            "`TF_USE_LEGACY_KERAS=True` to configure TensorFlow to use `tf_keras` when "
            "accessing `tf.keras`.")


Adagrad = Adam = Ftrl = Optimizer = RMSprop = SGD = LegacyOptimizerWarning

__all__ = ["Adagrad", "Adam", "Ftrl", "Optimizer", "RMSprop", "SGD"]
