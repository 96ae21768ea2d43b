"""Fixtures for kernel tests: run each test on every ISA path this CPU supports."""

import pytest

from fkeras import _C

ISAS = [name for name in ("scalar", "avx2", "avx512") if _C.isa_supported(name)]


@pytest.fixture(params=ISAS)
def isa(request):
    """Switches the compiled kernels to one ISA for the test, then restores the default."""
    before = _C.cpu_isa()
    _C.set_cpu_isa(request.param)
    try:
        yield request.param
    finally:
        _C.set_cpu_isa(before)
