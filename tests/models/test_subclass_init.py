"""Model subclasses: whether an instance is Functional is decided by what reaches
Model.__init__ (Keras 3), not by the arguments of the subclass's own constructor."""

import numpy as np

import fkeras
from fkeras.models.functional import Functional


class TwoPart(fkeras.Model):
    """Two positional constructor arguments that are layers, not (inputs, outputs)."""

    def __init__(self, first, second):
        super().__init__()
        self.first, self.second = first, second

    def call(self, x, training=None):
        return self.second(self.first(x))


class Forwarding(fkeras.Model):
    """Forwards (inputs, outputs) to Model.__init__: a Functional model with its methods."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.extra = fkeras.metrics.Mean(name="extra")

    def predict_step(self, data):
        return super().predict_step(data) + 1.0


def test_two_positional_layers_stay_a_subclassed_model():
    model = TwoPart(fkeras.layers.Dense(3), fkeras.layers.Dense(1))
    assert not isinstance(model, Functional)
    assert model(np.ones((2, 4), "float32")).shape == (2, 1)
    assert len(model.trainable_weights) == 4


def test_forwarded_inputs_outputs_make_a_functional_subclass():
    inp = fkeras.Input((2,))
    model = Forwarding(inp, fkeras.layers.Dense(1, kernel_initializer="ones")(inp))
    assert isinstance(model, Functional) and isinstance(model, Forwarding)
    assert model.extra.name == "extra"
    np.testing.assert_allclose(model.predict(np.ones((1, 2), "float32"), verbose=0), [[3.0]])


def test_no_init_override_with_inputs_outputs_is_functional():
    class Plain(fkeras.Model):
        pass

    inp = fkeras.Input((2,))
    model = Plain(inputs=inp, outputs=fkeras.layers.Dense(1)(inp))
    assert isinstance(model, Functional) and isinstance(model, Plain)
