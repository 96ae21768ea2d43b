"""keras.ops crossentropy functions (nn namespace): binary_crossentropy (elementwise),
categorical_crossentropy and sparse_categorical_crossentropy (reduced over the class axis).

Unlike the `keras.losses` functions these take no label smoothing and do not average the
binary loss over the last axis, as in Keras 3. Probabilities are clipped to
[epsilon, 1 - epsilon]; logits go through the stable forms. Differentiable in `output`.
"""

from fkeras import config as _config
from fkeras.ops import math as _m
from fkeras.ops.elementwise import _float_input, log1p


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary crossentropy between `target` and `output` (keras.ops)."""
    t = _float_input(target)
    if from_logits:
        # max(x, 0) - x * t + log(1 + exp(-|x|))
        x = output
        return _m.add(_m.subtract(_m.maximum(x, 0.0), _m.multiply(x, t)),
                      log1p(_m.exp(_m.negative(_m.absolute(x)))))
    eps = _config.epsilon()
    p = _m.clip(output, eps, 1.0 - eps)
    return _m.negative(_m.add(_m.multiply(t, _m.log(p)),
                              _m.multiply(_m.subtract(1.0, t), _m.log(_m.subtract(1.0, p)))))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Crossentropy between one-hot `target` and `output` over `axis` (keras.ops)."""
    from fkeras.losses import losses

    return losses.categorical_crossentropy(target, output, from_logits=from_logits, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Crossentropy between integer `target` and `output` over `axis` (keras.ops)."""
    from fkeras.losses import losses

    return losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits,
                                                  axis=axis)
