"""A short, fixed-seed fuzz run of every compiled kernel against the float64 reference.

FKERAS_FUZZ_TRIALS=<n> runs n cases per kernel instead (and FKERAS_FUZZ_SEED picks the seed);
tests/fuzz/run_fuzz.py does the same from the command line with a report.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cases import GENERATORS  # noqa: E402
from fuzzing import fuzz_kernel  # noqa: E402

TRIALS = int(os.environ.get("FKERAS_FUZZ_TRIALS", "6"))
SEED = int(os.environ.get("FKERAS_FUZZ_SEED", "20261125"))


@pytest.mark.parametrize("kernel", sorted(GENERATORS))
def test_kernel_fuzz(kernel):
    counts, failures = fuzz_kernel(kernel, SEED + sorted(GENERATORS).index(kernel), TRIALS)
    assert not failures, "\n".join(failures[:5])
    assert counts["ok"] + counts["refused"] + counts["overflow"] == TRIALS


def test_generators_cover_every_kernel():
    from fkeras import _C
    from fkeras.backend.reference import KERNELS

    assert set(GENERATORS) == {k for k in KERNELS if hasattr(_C, k)}
