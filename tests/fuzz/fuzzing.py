"""The fuzz loop shared by the test (a short, fixed-seed run) and the command line (long runs).

Each trial draws a kernel's random case (cases.py), an ISA path this CPU supports and a thread
count (1 to 3), runs it with harness.run_case and records failures with their seed, so any
failure can be replayed alone: `python tests/fuzz/run_fuzz.py --kernel K --seed S --trials 1`.
"""

import time

import numpy as np

from fkeras import _C

from cases import GENERATORS
from harness import FuzzFailure, run_case

ISAS = [name for name in ("scalar", "avx2", "avx512") if _C.isa_supported(name)]


def fuzz_kernel(kernel, seed, trials, threads=(1, 2, 3)):
    """Runs `trials` cases of `kernel`; returns (counts by outcome, failures as strings)."""
    isa_before, threads_before = _C.cpu_isa(), _C.num_threads()
    counts, failures = {"ok": 0, "refused": 0, "overflow": 0, "failed": 0}, []
    try:
        for t in range(trials):
            trial_seed = seed * 1_000_003 + t
            rng = np.random.default_rng(trial_seed)
            _C.set_cpu_isa(ISAS[int(rng.integers(len(ISAS)))])
            _C.set_num_threads(int(rng.choice(threads)))
            case = GENERATORS[kernel](rng)
            try:
                counts[run_case(case, rng)] += 1
            except FuzzFailure as e:
                counts["failed"] += 1
                failures.append(f"[{kernel} seed {trial_seed} isa {_C.cpu_isa()} threads "
                                f"{_C.num_threads()}] {e}")
    finally:
        _C.set_cpu_isa(isa_before)
        _C.set_num_threads(threads_before)
    return counts, failures


def fuzz_all(seed, trials_per_kernel, kernels=None, log=None):
    """Fuzzes every kernel (or those named); returns (totals, failures, seconds)."""
    start = time.perf_counter()
    totals, failures = {"ok": 0, "refused": 0, "overflow": 0, "failed": 0}, []
    for i, kernel in enumerate(sorted(kernels or GENERATORS)):
        counts, fails = fuzz_kernel(kernel, seed + i, trials_per_kernel)
        for k, v in counts.items():
            totals[k] += v
        failures += fails
        if log:
            log(f"{kernel:40s} {counts}")
    return totals, failures, time.perf_counter() - start
