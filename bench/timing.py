"""Timing shared by the benchmark scripts (run as `python bench/bench_X.py`, so this module
imports as `timing`)."""

import statistics
import time


def median_seconds(*fns, repeats, per_block=5):
    """Median time of each fn. The fns take turns in blocks of `per_block` timed calls (after one
    warm-up call), with a 50 ms pause between blocks: a busy neighbour slows all of them alike,
    and the OpenMP workers that torch leaves spinning after its calls go back to sleep before
    the next block (timing call by call would charge their spinning to the next fn)."""
    times = [[] for _ in fns]
    for _ in range(-(-repeats // per_block)):
        for fn, ts in zip(fns, times):
            fn()
            for _ in range(per_block):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            time.sleep(0.05)
    medians = [statistics.median(ts) for ts in times]
    return medians[0] if len(fns) == 1 else medians
