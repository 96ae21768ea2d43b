"""fkeras.saving: weights on disk (Keras 3's `.weights.h5` layout)."""
