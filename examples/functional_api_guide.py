"""The Keras Functional API guide's snippets, run on fkeras: shapes, summaries, predictions.

Run: python examples/functional_api_guide.py
"""

import numpy as np

import fkeras as keras
from fkeras.layers import Activation, Dense, Input
from fkeras.models import Model, Sequential


def section(title):
    print(f"\n=== {title} ===")


def main():
    rng = np.random.default_rng(0)

    section("Layers are built on their first call")
    x = Input(shape=(10,))
    dense1, dense2 = Dense(20), Dense(1)
    print("dense1.weights before the call:", dense1.weights)
    print("hasattr(dense1, 'input_shape') before:", hasattr(dense1, "input_shape"))
    y = Activation("sigmoid")(dense2(dense1(x)))
    print("after: kernel", dense1.weights[0].shape, "bias", dense1.weights[1].shape)
    print("dense1.input_shape:", dense1.input_shape, " dense2.input_shape:", dense2.input_shape)
    print("x.shape:", x.shape, " x._keras_history:", x._keras_history)

    section("Model(inputs=[x], outputs=[y])")
    model = Model(inputs=[x], outputs=[y])
    model.summary()
    preds = model.predict(rng.standard_normal((4, 10)).astype(np.float32))
    print("predict on 4 samples ->", preds.shape, preds.ravel().round(4))

    section("Multi-input, multi-output, shared layers")
    a, b = Input(shape=(16,), name="left"), Input(shape=(16,), name="right")
    shared = Dense(8, activation="relu", name="shared")
    merged = keras.ops.concatenate([shared(a), shared(b)], axis=-1)
    out_main = Dense(1, activation="sigmoid", name="main_output")(merged)
    out_aux = Dense(3, activation="softmax", name="aux_output")(merged)
    two = Model(inputs=[a, b], outputs=[out_main, out_aux], name="two_towers")
    two.summary()
    print("shared layer nodes:", len(shared._inbound_nodes),
          " shapes at nodes:", shared.get_input_shape_at(0), shared.get_input_shape_at(1))
    m, aux = two.predict([np.ones((2, 16), np.float32), np.zeros((2, 16), np.float32)])
    print("outputs:", m.shape, aux.shape, " aux rows sum to", aux.sum(axis=1).round(6))

    section("Models are layers: nesting")
    inner_in = Input(shape=(10,))
    inner = Model(inner_in, Dense(4, activation="tanh")(inner_in), name="encoder")
    z = Input(shape=(10,))
    outer = Model(z, Dense(2)(inner(z)), name="outer")
    outer.summary()

    section("Sequential")
    seq = Sequential([Dense(32, activation="relu", input_shape=(784,)), Dense(10, activation="softmax")])
    seq.summary()
    print("config round trip ->", [type(layer).__name__ for layer in
                                   Sequential.from_config(seq.get_config()).layers])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
