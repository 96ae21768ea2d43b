"""Models and data for the placement tests: the same table fits on the cpu and on the cuda
device (emulated in CI, the real GPU in the `cuda` tests)."""

import numpy as np

import fkeras as keras

L = keras.layers


def mlp():
    return keras.Sequential([keras.Input((20,)), L.Dense(32, activation="relu"),
                             L.Dropout(0.25), L.Dense(32, activation="gelu"), L.Dense(10)])


def cnn():
    return keras.Sequential([keras.Input((12, 12, 1)), L.Conv2D(8, 3, activation="relu"),
                             L.MaxPooling2D(), L.Conv2D(8, 3, activation="relu"),
                             L.Flatten(), L.Dropout(0.25), L.Dense(10)])


def cnn_bn():
    return keras.Sequential([keras.Input((12, 12, 2)), L.Conv2D(8, 3, padding="same"),
                             L.BatchNormalization(), L.ReLU(), L.AveragePooling2D(),
                             L.Conv2D(8, 3, use_bias=False), L.BatchNormalization(),
                             L.Activation("relu"), L.Flatten(), L.Dense(10)])


def lstm():
    return keras.Sequential([keras.Input((9, 6)), L.LSTM(12, return_sequences=True),
                             L.LSTM(8), L.Dense(10)])


def gru():
    return keras.Sequential([keras.Input((9, 6)), L.GRU(12, return_sequences=True),
                             L.SimpleRNN(8, go_backwards=True), L.Dense(10)])


def attention():
    inp = keras.Input((10, 16))
    h = L.MultiHeadAttention(2, 8)(inp, inp)
    h = L.LayerNormalization()(h)
    h = L.Flatten()(h)
    return keras.Model(inp, L.Dense(10)(h))


def embedding():
    inp = keras.Input((12,), dtype="int64")
    h = L.Embedding(50, 8)(inp)
    h = L.LSTM(8)(h)
    return keras.Model(inp, L.Dense(10)(h))


def residual():  # an Add layer and a global average (dev.xp's add and mean)
    inp = keras.Input((10, 10, 3))
    h = L.Conv2D(3, 3, padding="same", activation="relu")(inp)
    h = L.Add()([inp, h])
    h = L.GlobalAveragePooling2D()(h)
    return keras.Model(inp, L.Dense(10)(h))


INPUTS = {"mlp": ((20,), "float32"), "cnn": ((12, 12, 1), "float32"),
          "cnn_bn": ((12, 12, 2), "float32"), "lstm": ((9, 6), "float32"),
          "gru": ((9, 6), "float32"), "attention": ((10, 16), "float32"),
          "embedding": ((12,), "int64"), "residual": ((10, 10, 3), "float32")}
BUILDERS = {"mlp": mlp, "cnn": cnn, "cnn_bn": cnn_bn, "lstm": lstm, "gru": gru,
            "attention": attention, "embedding": embedding, "residual": residual}
# The models whose training step runs with no op on the host (the bench_fit workloads' layers).
NO_HOST_OPS = ("mlp", "cnn", "cnn_bn", "lstm", "gru", "attention", "embedding", "residual")
# Models with a reduction the device accumulates in float64 (dev.xp's mean): equal to the cpu
# run within float32 rounding, not bit for bit.
DEVICE_REDUCTIONS = ("residual",)


def data(name, n=64, seed=0):
    rng = np.random.default_rng(seed)
    shape, dtype = INPUTS[name]
    if dtype == "int64":
        x = rng.integers(0, 50, (n,) + shape).astype(np.int64)
    else:
        x = rng.normal(size=(n,) + shape).astype(np.float32)
    return x, rng.integers(0, 10, n).astype(np.int64)


def build(name, optimizer="adam", seed=7):
    keras.utils.set_random_seed(seed)
    model = BUILDERS[name]()
    opt = keras.optimizers.get(optimizer) if isinstance(optimizer, str) else optimizer()
    model.compile(optimizer=opt,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def fit_on(device, name, epochs=2, batch_size=16, optimizer="adam", **fit_kwargs):
    """(model, history, evaluate result, predictions) of a model built and fit on `device`."""
    x, y = data(name)
    with keras.device(device):
        model = build(name, optimizer)
        history = model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0,
                            shuffle=False, **fit_kwargs)
        result = model.evaluate(x, y, batch_size=batch_size, verbose=0)
        preds = model.predict(x, batch_size=batch_size, verbose=0)
    return model, history.history, result, preds


def assert_same_predictions(ref_model, ref, got, name=None):
    """The cpu run's predictions `ref` against a device run's `got` (of model `name`): bit for
    bit, or within float32 rounding where the device reduces in float64 (DEVICE_REDUCTIONS) or
    the cpu's predict ran a compiled plan with BatchNormalization folded into the preceding
    layer (models/compiled_plan.py; the device runs the uncompiled plan)."""
    from fkeras.models import compiled_plan

    if name in DEVICE_REDUCTIONS or compiled_plan.state_of(ref_model).folded:
        np.testing.assert_allclose(ref, got, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(ref, got)
