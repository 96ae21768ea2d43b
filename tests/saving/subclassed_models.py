"""Subclassed models for the `.keras` tests, written once against a Keras-like namespace so
the same classes exist in fkeras and (for the interop tests) in real Keras 3.

`define(K, package)` returns {name: class} for K = fkeras or keras; each class is registered
under `package`.
"""


def define(K, package):
    layers = K.layers
    register = K.saving.register_keras_serializable(package=package)

    @register
    class Block(layers.Layer):
        """Sub-layers held in attributes."""

        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.d1 = layers.Dense(units, activation="relu")
            self.d2 = layers.Dense(units)

        def call(self, x):
            return self.d2(self.d1(x))

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    @register
    class Nested(K.Model):
        """Constructor arguments + get_config; layers in attributes, a list, a dict, a
        Sequential and a layer of layers; BatchNormalization's moving statistics."""

        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.block = Block(units)
            self.stack = [layers.Dense(5), layers.Dense(6, activation="tanh")]
            self.heads = {"a": layers.Dense(2)}
            self.sub = K.Sequential([layers.Dense(2)])
            self.bn = layers.BatchNormalization()
            self.out = layers.Dense(1)

        def call(self, x, training=False):
            x = self.block(x)
            for layer in self.stack:
                x = layer(x)
            x = self.bn(x, training=training)
            return self.out(x) + self.sub(x)[:, :1] + self.heads["a"](x)[:, 1:]

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    @register
    class Appended(K.Model):
        """Layers appended to a list after it was assigned; no get_config (auto config)."""

        def __init__(self, units=4, depth=2, **kwargs):
            super().__init__(**kwargs)
            self.blocks = []
            for _ in range(depth):
                self.blocks.append(layers.Dense(units, activation="relu"))
            self.head = layers.Dense(1)

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    @register
    class Outer(K.Model):
        """A subclassed model inside a subclassed model."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = Appended(units=4)
            self.scale = layers.Dense(1, use_bias=False)

        def call(self, x):
            return self.scale(self.inner(x))

    @register
    class OwnBuild(K.Model):
        """Defines build (called with the recorded shape on load)."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(3)

        def build(self, input_shape):
            self.dense.build(input_shape)
            self.bias = self.add_weight(shape=(3,), initializer="ones", name="extra")

        def call(self, x):
            return self.dense(x) * self.bias

    @register
    class NoArgs(K.Model):
        """No constructor arguments at all, no get_config."""

        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    @register
    class ObjectArg(K.Model):
        """Takes a layer: needs get_config/from_config (it has neither)."""

        def __init__(self, layer, **kwargs):
            super().__init__(**kwargs)
            self.layer = layer

        def call(self, x):
            return self.layer(x)

    @register
    class ShortConfig(K.Model):
        """get_config leaves out a required constructor argument."""

        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(units)

        def call(self, x):
            return self.dense(x)

        def get_config(self):
            return {"name": self.name}

    @register
    class Composed(K.Model):
        """Layers passed to the constructor, serialized in get_config and deserialized in
        from_config (the keras-io serialization guide's pattern)."""

        def __init__(self, first_layer, second_layer=None, **kwargs):
            super().__init__(**kwargs)
            self.first_layer = first_layer
            self.second_layer = second_layer if second_layer is not None else \
                layers.Dense(2)

        def call(self, x):
            return self.second_layer(self.first_layer(x))

        def get_config(self):
            return {**super().get_config(),
                    "first_layer": K.saving.serialize_keras_object(self.first_layer),
                    "second_layer": K.saving.serialize_keras_object(self.second_layer)}

        @classmethod
        def from_config(cls, config):
            for key in ("first_layer", "second_layer"):
                config[key] = K.saving.deserialize_keras_object(config[key])
            return cls(**config)

    return {c.__name__: c for c in (Block, Nested, Appended, Outer, OwnBuild, NoArgs,
                                    ObjectArg, ShortConfig, Composed)}
