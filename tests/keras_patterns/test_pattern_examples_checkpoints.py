"""`model.load_weights("best.keras")` after a `ModelCheckpoint("best.keras",
save_best_only=True)` (keras-io's 3D image classification): Keras 3 loads the weights of a
whole-model `.keras` file into an existing model, across libraries too."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, regression_data, run_both, seed_weights

import fkeras

X, Y = regression_data(n=32, d_in=4, d_out=2, seed=41)


def small_model(lib, units=2):
    inputs = lib.Input((4,))
    x = lib.layers.Dense(5, activation="relu")(inputs)
    model = lib.Model(inputs, lib.layers.Dense(units)(x))
    seed_weights(model, seed=9)
    return model


def test_load_weights_from_checkpointed_keras_file_like_keras(tmp_path):
    def train(lib):
        path = str(tmp_path / f"{lib.__name__}_best.keras")
        model = small_model(lib)
        model.compile(lib.optimizers.SGD(0.05), loss="mse")
        checkpoint = lib.callbacks.ModelCheckpoint(path, monitor="val_loss",
                                                   save_best_only=True)
        model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                  validation_data=(X, Y), callbacks=[checkpoint])
        fresh = small_model(lib)
        before = fresh.predict(X, verbose=0)
        fresh.load_weights(path)
        after = fresh.predict(X, verbose=0)
        assert not np.allclose(before, after)
        np.testing.assert_allclose(after, model.predict(X, verbose=0), rtol=1e-6, atol=1e-6)
        return {"weights": fresh.get_weights()}

    run_both(train)


@pytest.mark.parametrize("writer", ["fkeras", "keras"])
def test_load_weights_from_keras_file_across_libraries(tmp_path, writer):
    keras = keras_or_none()
    if keras is None:
        pytest.skip("needs keras (torch backend)")
    libs = {"fkeras": fkeras, "keras": keras}
    src = small_model(libs[writer])
    src.set_weights([w + 0.5 for w in src.get_weights()])
    path = str(tmp_path / "model.keras")
    src.save(path)
    reader = libs["keras" if writer == "fkeras" else "fkeras"]
    dst = small_model(reader)
    dst.load_weights(path)
    for a, b in zip(dst.get_weights(), src.get_weights()):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_load_weights_from_keras_file_checks_shapes(tmp_path):
    path = str(tmp_path / "model.keras")
    saved = small_model(fkeras)
    saved.set_weights([w + 0.5 for w in saved.get_weights()])
    saved.save(path)
    other = small_model(fkeras, units=3)
    kept = [w.copy() for w in other.get_weights()]
    with pytest.raises(ValueError):
        other.load_weights(path)
    for a, b in zip(other.get_weights(), kept):  # all or nothing
        np.testing.assert_array_equal(a, b)
    with pytest.warns(UserWarning, match="Skipping loading weights"):
        other.load_weights(path, skip_mismatch=True)
    np.testing.assert_array_equal(other.get_weights()[0], saved.get_weights()[0])  # matched
    np.testing.assert_array_equal(other.get_weights()[2], kept[2])  # mismatched: kept
