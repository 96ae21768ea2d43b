"""StringLookup, IntegerLookup and TextVectorization against Keras 3.15 (torch backend):
every case of `lookup_cases.CASES` (outputs and dtypes for each output_mode, OOV and mask
configuration, adapt on arrays, lists and generators, vocabularies, error types and texts)
against the results Keras recorded in `lookup_golden.json`, and against live Keras when it
can build these layers (it needs TensorFlow)."""

import json

import numpy as np
import pytest

import fkeras
from lookup_cases import CASES, GOLDEN, keras_layers_or_none, run_case

with open(GOLDEN, encoding="utf-8") as _f:
    _GOLDEN = json.load(_f)


def _check(got, want):
    assert set(got) == set(want), (got, want)
    if "error" in want:
        assert got["error"] == want["error"]
        if want["msg"] is not None:
            assert got["msg"].startswith(want["msg"]), (got["msg"], want["msg"])
        return
    if "out" in want:
        assert got["dtype"] == want["dtype"]
        if want["dtype"].startswith("float"):
            np.testing.assert_allclose(np.array(got["out"]), np.array(want["out"]),
                                       rtol=1e-6, atol=1e-6)
        else:
            assert got["out"] == want["out"]
        return
    assert got == want


def test_golden_record_covers_every_case():
    assert _GOLDEN["keras_version"].startswith("3.15")
    assert sorted(_GOLDEN["cases"]) == sorted(c["id"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_keras_record(case):
    _check(run_case(fkeras.layers, case), _GOLDEN["cases"][case["id"]])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_matches_live_keras(case):
    layers = keras_layers_or_none()
    if layers is None:
        pytest.skip("Keras 3 needs TensorFlow for its lookup layers")
    _check(run_case(fkeras.layers, case), run_case(layers, case))
