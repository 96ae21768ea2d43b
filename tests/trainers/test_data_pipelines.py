"""Pipelines into fit/evaluate/predict as Keras 3 takes them: Python generators (infinite with
steps_per_epoch, finite), dicts of named inputs, a torch DataLoader (with torch installed) and
a tf.data.Dataset (recognised by class name and module: a stand-in class exercises the path
without TensorFlow; the real one is tested when TensorFlow is installed). Results must equal
the same batches given as arrays."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from fidelity_models import run_with_timeout

import fkeras

X = np.random.default_rng(0).normal(size=(24, 3)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")


def linear(seed=3):
    fkeras.utils.set_random_seed(seed)
    inp = fkeras.Input((3,))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))
    model.compile("sgd", "mse", metrics=["mae"])
    return model


def reference(epochs=2, batch_size=6):
    model = linear()
    history = model.fit(X, Y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
    return model, history.history


def assert_same_model(model, ref):
    for a, b in zip(model.get_weights(), ref.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def batches(batch_size=6, forever=False):
    while True:
        for i in range(0, len(X), batch_size):
            yield X[i:i + batch_size], Y[i:i + batch_size]
        if not forever:
            return


def test_infinite_generator_with_steps_per_epoch_equals_arrays():
    ref, ref_hist = reference()
    model = linear()
    hist = model.fit(batches(forever=True), steps_per_epoch=4, epochs=2, shuffle=False,
                     verbose=0).history
    assert_same_model(model, ref)
    np.testing.assert_allclose(hist["loss"], ref_hist["loss"], rtol=1e-6)
    got = model.predict(batches(), verbose=0)
    np.testing.assert_allclose(got, ref.predict(X, verbose=0), rtol=1e-6)
    np.testing.assert_allclose(model.evaluate(batches(), verbose=0), ref.evaluate(X, Y, verbose=0),
                               rtol=1e-6)


def test_finite_generator_one_epoch_equals_arrays():
    ref, _ = reference(epochs=1)
    model = linear()
    model.fit(batches(), epochs=1, shuffle=False, verbose=0)
    assert_same_model(model, ref)


def two_inputs():
    a, b = fkeras.Input((2,), name="a"), fkeras.Input((1,), name="b")
    x = fkeras.layers.Concatenate()([a, b])
    model = fkeras.Model({"a": a, "b": b}, fkeras.layers.Dense(1, name="out")(x))
    model.compile("sgd", "mse")
    return model


class NamedInputs(fkeras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        s = slice(6 * i, 6 * i + 6)
        return {"b": X[s, 2:], "a": X[s, :2]}, {"out": Y[s]}


@pytest.mark.parametrize("kind", ["arrays", "generator", "pydataset", "pydataset_processes"])
def test_dicts_of_named_inputs(kind):
    fkeras.utils.set_random_seed(1)
    model = two_inputs()
    data = {"arrays": lambda: ({"a": X[:, :2], "b": X[:, 2:]},),
            "generator": lambda: ((NamedInputs()[i] for i in range(4)),),
            "pydataset": lambda: (NamedInputs(workers=2),),
            "pydataset_processes": lambda: (NamedInputs(workers=2, use_multiprocessing=True),),
            }[kind]()
    kwargs = {"batch_size": 6} if kind == "arrays" else {}
    y = (Y,) if kind == "arrays" else ()
    run_with_timeout(lambda: model.fit(*data, *y, shuffle=False, verbose=0, **kwargs))
    fkeras.utils.set_random_seed(1)
    ref = two_inputs()
    ref.fit({"a": X[:, :2], "b": X[:, 2:]}, Y, batch_size=6, shuffle=False, verbose=0)
    assert_same_model(model, ref)
    pred_data = NamedInputs(workers=3, use_multiprocessing=True) if "pydataset" in kind else (
        {"a": X[:, :2], "b": X[:, 2:]})
    np.testing.assert_allclose(run_with_timeout(lambda: model.predict(pred_data, verbose=0)),
                               ref.predict({"a": X[:, :2], "b": X[:, 2:]}, verbose=0),
                               rtol=1e-6)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def loader(torch, batch_size=6, **kwargs):
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.from_numpy(X), torch.from_numpy(Y))
    return DataLoader(data, batch_size=batch_size, **kwargs)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_torch_dataloader_equals_arrays(torch, num_workers):
    ref, ref_hist = reference()
    model = linear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hist = run_with_timeout(lambda: model.fit(
            loader(torch, num_workers=num_workers), epochs=2, verbose=0).history)
    assert any("provided as a torch DataLoader" in str(w.message) for w in caught)
    assert_same_model(model, ref)
    np.testing.assert_allclose(hist["loss"], ref_hist["loss"], rtol=1e-6)
    got = run_with_timeout(lambda: model.predict(loader(torch, num_workers=num_workers),
                                                 verbose=0))
    np.testing.assert_allclose(got, ref.predict(X, verbose=0), rtol=1e-6)


def test_torch_tensors_with_grad_and_errors(torch):
    model = linear()
    x = torch.from_numpy(X).requires_grad_(True)
    np.testing.assert_allclose(model.predict([x.detach().numpy()], verbose=0),
                               model.predict(iter([x]), verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model.fit(loader(torch), Y)
    with pytest.raises(ValueError, match="`class_weight` is not supported for torch"):
        model.fit(loader(torch), class_weight={0: 1.0})
    from torch.utils.data import TensorDataset

    with pytest.raises(ValueError, match="wrap it in a `torch.utils.data.DataLoader"):
        model.fit(TensorDataset(torch.from_numpy(X), torch.from_numpy(Y)))


class FakeTensor:
    """Stands in for a TensorFlow eager tensor: `.numpy()` and a tensorflow module."""

    def __init__(self, value):
        self._value = value

    def numpy(self):
        return self._value


FakeTensor.__module__ = "tensorflow.python.framework.ops"


class DatasetV2:
    """Stands in for tf.data.Dataset (same class name and module), re-iterable, no length."""

    def __iter__(self):
        for x, y in batches():
            yield FakeTensor(x), FakeTensor(y)


DatasetV2.__module__ = "tensorflow.python.data.ops.dataset_ops"


def test_tf_dataset_path_by_duck_typing():
    ref, _ = reference()
    model = linear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(DatasetV2(), epochs=2, verbose=0)
    assert any("provided as a tf.data.Dataset" in str(w.message) for w in caught)
    assert_same_model(model, ref)
    with pytest.raises(ValueError, match="`sample_weights` should not be passed"):
        model.fit(DatasetV2(), sample_weight=np.ones(24))


def test_real_tf_data_dataset():
    tf = pytest.importorskip("tensorflow")
    ref, _ = reference()
    model = linear()
    model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(6), epochs=2, verbose=0)
    assert_same_model(model, ref)


def test_generators_never_import_torch_or_tensorflow():
    code = ("import sys, numpy as np, fkeras\n"
            "inp = fkeras.Input((3,)); m = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))\n"
            "m.compile('sgd', 'mse')\n"
            "g = ((np.ones((2, 3), 'float32'), np.ones((2, 1), 'float32')) for _ in range(3))\n"
            "m.fit(g, verbose=0)\n"
            "assert 'torch' not in sys.modules and 'tensorflow' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
