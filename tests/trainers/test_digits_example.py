"""The main job's example (fkeras/examples/digits.py, run by examples/train_digits.py): its
model is a Functional CNN with BatchNormalization, and a short training run in-process learns
the bundled digits."""

import os
import runpy

import numpy as np

import fkeras
from fkeras.examples import digits


def test_the_example_model_learns_the_digits():
    fkeras.utils.set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = digits.load_digits()
    assert x_train.shape == (1437, 8, 8, 1) and x_test.shape == (360, 8, 8, 1)
    model = digits.compile_model(digits.build_model())
    kinds = {type(layer).__name__ for layer in model.layers}
    assert {"Conv2D", "BatchNormalization", "MaxPooling2D", "Dense"} <= kinds
    assert isinstance(model, fkeras.models.Functional)
    history = model.fit(x_train, y_train, batch_size=32, epochs=3, validation_split=0.1,
                        verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert accuracy >= 0.9, accuracy
    assert np.isfinite(loss)


def test_the_example_script_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_digits.py")
    monkeypatch.setattr("sys.argv", ["train_digits.py", "--epochs", "1", "--verbose", "2",
                                     "--logdir", str(tmp_path / "logs")])
    runpy.run_path(script, run_name="__main__")
    out = capsys.readouterr().out
    assert 'Model: "digits_cnn"' in out and "Total params" in out
    assert "Epoch 1/1" in out or "loss:" in out
    assert "Test loss:" in out and "test accuracy:" in out
    assert ("TensorBoard logs:" in out) or (digits.TENSORBOARD_HINT in out)


def test_set_random_seed_repeats_the_cnn_run_bit_for_bit():
    """Initializers, shuffling and Dropout's masks all follow the seed."""
    (x, y), _ = digits.load_digits()

    def run():
        fkeras.utils.set_random_seed(7)
        model = digits.compile_model(digits.build_model())
        model.fit(x[:256], y[:256], batch_size=32, epochs=2, validation_split=0.25, verbose=0)
        return model.get_weights()

    first, second = run(), run()
    assert len(first) == len(second) > 0
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_without_tensorboard_the_example_says_how_to_install_it(monkeypatch, capsys):
    import sys

    for name in [m for m in sys.modules if m == "tensorboard" or m.startswith("tensorboard.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    assert digits.tensorboard_callbacks("logs") == []
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [digits.TENSORBOARD_HINT] and "pip install" in out[0]
