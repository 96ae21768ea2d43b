"""The workflow of the keras-io guide "8-bit Integer Quantization in Keras" (its first two
sections) with `import fkeras as keras`: train a small functional model, quantize it in place
to int8, compare with the float outputs, save to `.keras`, reload, compare again."""

import warnings

import fkeras as keras
import numpy as np
from fkeras import layers


def test_guide_quantize_save_reload(tmp_path):
    rng = np.random.default_rng(0)
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(10,))
    hidden = layers.Dense(32, activation="relu")(inputs)
    model = keras.Model(inputs, layers.Dense(1, name="target")(hidden))
    model.compile(optimizer="adam", loss="mse")
    model.fit(rng.random((256, 10)).astype("float32"), rng.random((256, 1)).astype("float32"),
              epochs=1, batch_size=32, verbose=0)
    x_eval = rng.random((32, 10)).astype("float32")
    y_fp32 = model(x_eval)
    float_path = tmp_path / "fp32.keras"
    model.save(float_path)

    with warnings.catch_warnings(record=True):  # Keras warns for the InputLayer too
        warnings.simplefilter("always")
        model.quantize("int8")
    y_int8 = model(x_eval)
    mse = float(keras.ops.mean(keras.ops.square(y_fp32 - y_int8)))
    scale = float(keras.ops.mean(keras.ops.square(y_fp32)))
    assert 0.0 < mse < 1e-3 * scale  # close, not identical: the kernel really is int8
    assert model.get_layer("target").kernel.dtype == "int8"

    path = tmp_path / "int8.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    y_reloaded = reloaded(x_eval)
    assert float(keras.ops.mean(keras.ops.square(y_int8 - y_reloaded))) == 0.0
    # The int8 weights take about a quarter of the float ones' bytes.
    int8_bytes = sum(w.numpy().nbytes for w in reloaded.weights)
    float_bytes = sum(w.numpy().nbytes for w in keras.saving.load_model(float_path).weights)
    assert int8_bytes < 0.45 * float_bytes
