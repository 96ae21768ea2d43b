"""Suite-wide fixtures: fresh automatic names for every test."""

import pytest

import fkeras


@pytest.fixture(autouse=True)
def _fresh_names():
    fkeras.utils.clear_session()
    yield
