"""The thread pool when the system refuses threads: an address-space limit or a huge thread
count must give fewer threads and a RuntimeWarning (never a hang), and the kernels must still
compute correctly afterwards. Each case runs in a fresh interpreter under a timeout, since a
regression here hangs the process."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("resource")

# The child prints one line "RESULT <running> <num_threads> <warned> <gemm ok> <sum ok>".
CHILD = textwrap.dedent(
    """
    import os, resource, sys, warnings
    import numpy as np
    from fkeras import _C

    mode, requested = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    A = rng.standard_normal((257, 190)).astype(np.float32)
    B = rng.standard_normal((190, 131)).astype(np.float32)
    expected = A.astype(np.float64) @ B  # NumPy's BLAS before the limit: it allocates too
    C = np.empty((257, 131), np.float32)

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if mode != "plain":
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), hard))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mode == "lazy":  # FKERAS_NUM_THREADS set: the first kernel builds the pool
            running = _C.num_threads()
            _C.gemm(C, A, B, 257, 131, 190, False, False, 1.0, 0.0)
            running = _C.num_threads()
        else:
            running = _C.set_num_threads(requested)
        _C.gemm(C, A, B, 257, 131, 190, False, False, 1.0, 0.0)
        total = _C._parallel_sum_for_test(10**6, 1000)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    warned = any(issubclass(w.category, RuntimeWarning) and "refused" in str(w.message)
                 for w in caught)
    gemm_ok = bool(np.allclose(C, expected, rtol=1e-4, atol=1e-3))
    sum_ok = total == 10**6 * (10**6 - 1) // 2
    print("RESULT", running, _C.num_threads(), int(warned), int(gemm_ok), int(sum_ok))
    """
)


def run_child(mode, requested, env_threads=None):
    env = dict(os.environ)
    env.pop("FKERAS_NUM_THREADS", None)
    if env_threads is not None:
        env["FKERAS_NUM_THREADS"] = str(env_threads)
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(requested)], env=env,
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the thread pool hung ({mode}, {requested} threads requested)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT"))
    running, now, warned, gemm_ok, sum_ok = (int(v) for v in line.split()[1:])
    assert gemm_ok and sum_ok, line
    return running, now, warned


# AddressSanitizer's runtime maps memory for every new thread and aborts when that fails.
not_under_asan = pytest.mark.skipif(os.environ.get("FKERAS_SANITIZED") == "1",
                                    reason="ASan aborts when an address-space limit is hit")


@not_under_asan
@pytest.mark.parametrize("requested", [1000, 100000])
def test_set_num_threads_under_an_address_space_limit(requested):
    running, now, warned = run_child("limit", requested)
    assert 1 <= running < requested
    assert now == running
    assert warned


@not_under_asan
def test_lazy_pool_under_an_address_space_limit():
    # No set_num_threads call: the pool is built inside the first kernel (no GIL, no warning
    # possible there); the thread count drops to the threads that started.
    running, now, warned = run_child("lazy", 0, env_threads=1000)
    assert 1 <= running < 1000
    assert now == running


def test_four_thousand_threads():
    running, now, warned = run_child("plain", 4096)
    assert 1 <= running <= 4096
    assert now == running
    assert warned == (running < 4096)
