"""Models and data shared by the Keras-fidelity tests: built the same way with fkeras or
Keras (`lib`), so a test can run one scenario on both libraries and compare."""

import threading

import numpy as np


def run_with_timeout(fn, seconds=60):
    """Runs `fn()` in a daemon thread; fails (instead of hanging the suite) after `seconds`."""
    result, error = [], []

    def target():
        try:
            result.append(fn())
        except BaseException as e:  # re-raised in the test's thread
            error.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise AssertionError(f"timed out after {seconds} s (a hang)")
    if error:
        raise error[0]
    return result[0]


def two_output_data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype("float32")
    y = {"priority": rng.standard_normal((n, 1)).astype("float32"),
         "department": rng.random((n, 4)).astype("float32")}
    return x, y


def two_output_model(lib, kind):
    """The functional-API guide's shape: outputs `priority` (1) and `department` (4), as a
    dict ("dict") or a list [priority, department] ("list")."""
    inp = lib.Input((3,), name="inp")
    p = lib.layers.Dense(1, name="priority")(inp)
    d = lib.layers.Dense(4, name="department")(inp)
    return lib.Model(inp, {"priority": p, "department": d} if kind == "dict" else [p, d])


def targets(y, kind):
    return y if kind == "dict" else [y["priority"], y["department"]]


LOSS_ORDERS = {
    "pd": {"priority": "mse", "department": "categorical_crossentropy"},
    "dp": {"department": "categorical_crossentropy", "priority": "mse"},
}
METRICS = {"priority": ["mae"], "department": ["accuracy"]}
