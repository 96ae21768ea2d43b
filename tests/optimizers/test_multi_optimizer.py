"""MultiOptimizer / OptimizerMap: dispatch by path, state order, errors, parity with Keras."""

import numpy as np
import pytest

import fkeras
from fkeras import optimizers


def _vars(module):
    rng = np.random.default_rng(0)
    names = ["encoder_kernel", "encoder_bias", "decoder_kernel"]
    shapes = [(3, 2), (2,), (2, 2)]
    return [module.Variable(rng.standard_normal(s).astype(np.float32), name=n)
            for n, s in zip(names, shapes)]


def _multi(module):
    o = module.optimizers
    return o.MultiOptimizer(o.OptimizerMap(o.SGD(0.1), {"encoder.*": o.Adam(0.01)}))


def test_optimizer_map_lookup_and_errors():
    sgd, adam, lion = optimizers.SGD(), optimizers.Adam(), optimizers.Lion()
    m = optimizers.OptimizerMap(sgd)
    m["encoder/.*"] = adam
    m["encoder/layer_0/dense"] = lion
    assert m["encoder/layer_0/dense"] is lion
    m2 = optimizers.OptimizerMap(sgd, {"encoder/.*": adam})
    assert m2["encoder/x"] is adam and m2["decoder"] is sgd
    with pytest.raises(ValueError, match="already exists"):
        m2["encoder/.*"] = lion
    with pytest.raises(ValueError, match="LossScaleOptimizer"):
        m2["x"] = optimizers.LossScaleOptimizer(optimizers.SGD())
    with pytest.raises(TypeError, match="default_optimizer"):
        optimizers.OptimizerMap("sgd")


def test_multi_optimizer_matches_keras():
    keras = pytest.importorskip("keras")
    kv, fv = _vars(keras), _vars(fkeras)
    ko, fo = _multi(keras), _multi(fkeras)
    rng = np.random.default_rng(1)
    for _ in range(3):
        grads = [rng.standard_normal(v.shape).astype(np.float32) for v in fv]
        ko.apply([keras.ops.convert_to_tensor(g) for g in grads], kv)
        fo.apply(grads, fv)
    for a, b in zip(kv, fv):
        np.testing.assert_allclose(b.numpy(), keras.ops.convert_to_numpy(a.value), rtol=1e-5,
                                   atol=1e-6)
    ks = [keras.ops.convert_to_numpy(v.value) for v in ko.variables]
    fs = [np.asarray(v.numpy()) for v in fo.variables]
    assert len(ks) == len(fs)
    for a, b in zip(ks, fs):
        np.testing.assert_allclose(np.asarray(b, np.float64), a, rtol=1e-5, atol=1e-6)
    assert int(fo.iterations) == 3
    with pytest.raises(AttributeError, match="MultiOptimizer"):
        fo.learning_rate


def test_multi_optimizer_config_round_trip():
    opt = _multi(fkeras)
    again = optimizers.deserialize(optimizers.serialize(opt))
    assert isinstance(again, optimizers.MultiOptimizer)
    assert again.get_config() == opt.get_config()


def test_multi_optimizer_in_fit():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(4, name="enc"),
                               fkeras.layers.Dense(1, name="dec")])
    o = optimizers
    model.compile(optimizer=o.MultiOptimizer(o.OptimizerMap(o.SGD(0.05), {"enc/.*": o.Adam(0.01)})),
                  loss="mse")
    hist = model.fit(x, y, epochs=5, batch_size=8, verbose=0).history["loss"]
    assert hist[-1] < hist[0]
