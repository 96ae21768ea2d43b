"""Helpers of the plan-fusion tests (test_plan_fusion*.py): a spy on fused kernels, the fit
every test runs, and a fused / unfused pair of fits with a fusion's environment switch."""

import numpy as np

import fkeras as keras
from fkeras.backend import devices


def kernel_spy(monkeypatch, names):
    """{kernel name: calls} of `names` on the cpu device and on its bf16-products twin (which
    mixed_bfloat16 layers run on), counted for the rest of the test."""
    calls = dict.fromkeys(names, 0)
    with devices.bf16_products():
        bf16 = devices.get_device()
    for table in {id(d.kernels): d.kernels for d in (devices.get_device("cpu"), bf16)}.values():
        for name in names:
            def counted(*args, _name=name, _fn=table[name]):
                calls[_name] += 1
                return _fn(*args)
            monkeypatch.setitem(table, name, counted)
    return calls


def fit(model, x, y, epochs=2):
    """Adam(0.01), sparse categorical crossentropy, batches of 16 in order."""
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False)
    return model


def train_plan(model):
    return model.__dict__["_fk_step_state"]._train_plan


def fit_both(build, x, y, monkeypatch, switch, epochs=2):
    """(fused model, unfused model) after the same fit; the unfused one built and fitted with
    the environment switch `switch` set to 0."""
    fused = fit(build(), x, y, epochs)
    monkeypatch.setenv(switch, "0")
    plain = fit(build(), x, y, epochs)
    monkeypatch.delenv(switch)
    return fused, plain


def assert_weights_equal(a, b):
    """Every weight of `a` bit-equal to `b`'s (non-trainable ones included)."""
    names = [w.path for w in a.weights]
    for name, wa, wb in zip(names, a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb, err_msg=name)
