"""Every constructor (and a few options) against the structure digests recorded from Keras 3.15
(keras_structures.json, written by make_keras_structures.py): layer names and order, weight
shapes and order, parameter count, output shape, model name. Runs without Keras installed.
Configurations over SNAPSHOT_PARAMS_LIMIT parameters build only with FKERAS_TEST_LARGE_APPS=1."""

import importlib
import json
import os

import pytest

import fkeras
from app_structure import digest, structure
from app_table import SNAPSHOT, SNAPSHOT_PARAMS_LIMIT, config_id, large_enabled
from fkeras.layers import OpLayer

with open(os.path.join(os.path.dirname(__file__), "keras_structures.json")) as _f:
    RECORDED = json.load(_f)


def test_every_configuration_is_recorded():
    assert RECORDED["keras_version"].startswith("3.")
    assert sorted(RECORDED["configs"]) == sorted(config_id(e) for e in SNAPSHOT)


@pytest.mark.parametrize("entry", SNAPSHOT, ids=config_id)
def test_structure_equals_recorded_keras(entry):
    module, fn, kwargs = entry
    expected = RECORDED["configs"][config_id(entry)]
    if expected["params"] > SNAPSHOT_PARAMS_LIMIT and not large_enabled():
        pytest.skip(f"{expected['params']:,} parameters: set FKERAS_TEST_LARGE_APPS=1")
    fkeras.utils.clear_session()
    model = getattr(importlib.import_module(f"fkeras.applications.{module}"), fn)(
        weights=None, **kwargs)
    # OpLayers: see docs/applications.md ("Raw ops in `model.layers`").
    got = digest(structure(model, skip=(OpLayer,)))
    assert got == expected


def test_nasnet_mobile_is_the_builder_with_its_settings():
    from app_table import NASNET_MOBILE

    fkeras.utils.clear_session()
    mobile = structure(fkeras.applications.NASNetMobile(weights=None))
    fkeras.utils.clear_session()
    built = structure(fkeras.applications.nasnet.NASNet(weights=None, **NASNET_MOBILE))
    assert mobile == built
