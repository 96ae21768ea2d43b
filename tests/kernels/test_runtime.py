"""The runtime under the kernels: the thread pool (fk::parallel_for), its behaviour across
fork(), thread-count and ISA controls."""

import os
import signal
import time

import numpy as np
import pytest
from fkeras import _C


@pytest.fixture
def restore_threads():
    before = _C.num_threads()
    yield
    _C.set_num_threads(before)


@pytest.mark.parametrize("n,grain", [(0, 1), (1, 1), (7, 3), (1000, 1), (1000, 7), (100000, 4096),
                                     (12345, 100000)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_parallel_sum_is_exact(restore_threads, n, grain, threads):
    _C.set_num_threads(threads)
    assert _C.num_threads() == threads
    assert _C._parallel_sum_for_test(n, grain) == n * (n - 1) // 2


def test_set_num_threads_rejects_non_positive(restore_threads):
    for bad in (0, -1):
        with pytest.raises(ValueError):
            _C.set_num_threads(bad)


def gemm_ok():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((150, 200)).astype(np.float32)
    B = rng.standard_normal((200, 170)).astype(np.float32)
    C = np.empty((150, 170), np.float32)
    _C.gemm(C, A, B, 150, 170, 200, False, False, 1.0, 0.0)
    return np.allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_pool_works_in_a_forked_child(restore_threads):
    _C.set_num_threads(2)
    n = 200000
    assert _C._parallel_sum_for_test(n, 1000) == n * (n - 1) // 2  # the parent's pool is live
    assert gemm_ok()
    pid = os.fork()
    if pid == 0:  # the child: its pool threads do not exist; it must build a new pool
        ok = False
        try:
            ok = _C._parallel_sum_for_test(n, 1000) == n * (n - 1) // 2 and gemm_ok()
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60.0
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung in the thread pool")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert _C._parallel_sum_for_test(n, 1000) == n * (n - 1) // 2  # and the parent's still works


def test_cpu_isa_round_trip():
    before = _C.cpu_isa()
    assert before in ("avx512", "avx2", "scalar")
    try:
        for name in ("scalar", "avx2", "avx512"):
            if _C.isa_supported(name):
                _C.set_cpu_isa(name)
                assert _C.cpu_isa() == name
    finally:
        _C.set_cpu_isa(before)
    assert _C.cpu_isa() == before
    assert _C.isa_supported("scalar")


def test_unknown_isa_raises():
    with pytest.raises(ValueError):
        _C.set_cpu_isa("sse9")
    with pytest.raises(ValueError):
        _C.isa_supported("neon")



_FAULTS = """
import resource, numpy as np
import fkeras._C

def step():  # like a training step: activations kept, gradients made and dropped, mixed sizes
    acts = [np.ones(n, np.float32) for n in (1_400_000, 2_400_000, 600_000, 150_000)]
    grads = []
    for a in reversed(acts):
        g = np.empty_like(a)
        g[:] = 1.0
        grads.append(g)
        tmp = np.empty_like(a)
        tmp[:] = 2.0
        del tmp
    del acts, grads

for _ in range(2):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(os.uname().sysname != "Linux", reason="the malloc policy is glibc's")
@pytest.mark.skipif(os.environ.get("FKERAS_SANITIZED") == "1",
                    reason="AddressSanitizer replaces glibc's malloc (tools/sanitize.sh)")
def test_large_blocks_are_reused_without_page_faults():
    # Loading fkeras._C sets glibc's malloc to keep large freed blocks (allocator.cpp):
    # arrays allocated again every training step must not page-fault (and be zeroed by the OS)
    # every time. FKERAS_MALLOC_TUNING=0 keeps glibc's defaults, which fault on this pattern
    # (measured: ~23000 faults over the 5 steps, against 0 with the policy).
    import subprocess
    import sys

    def faults(**env):
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                              "GLIBC_TUNABLES", "FKERAS_MALLOC_TUNING")}
        out = subprocess.run([sys.executable, "-c", _FAULTS], env=dict(clean, **env),
                             capture_output=True, text=True, check=True)
        return int(out.stdout.strip().splitlines()[-1])

    tuned, default = faults(), faults(FKERAS_MALLOC_TUNING="0")
    assert tuned < 1000, (tuned, default)
    assert default > 5000, (tuned, default)


_PINNING = """
import os, sys
import fkeras._C as C
C.set_num_threads(int(sys.argv[1]))  # starts the pool while the process may use every CPU
cpus = sorted(os.sched_getaffinity(0))
caller = cpus[-1]
os.sched_setaffinity(0, {caller})  # this thread only: the caller's CPU is now known
for _ in range(200):  # enough regions for every worker to join some
    assert C._parallel_sum_for_test(100000, 100) == 100000 * 99999 // 2
workers = []
for tid in sorted(int(t) for t in os.listdir("/proc/self/task")):
    with open(f"/proc/self/task/{tid}/comm") as f:
        if f.read().strip() == "fkeras-worker":
            workers.append(sorted(os.sched_getaffinity(tid)))
print(repr((cpus, caller, workers)))
"""


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="pinning needs a process that may use two CPUs or more")
@pytest.mark.parametrize("threads", [2, 3])
def test_workers_pinned_beside_the_caller_on_request(threads):
    # FKERAS_PIN_THREADS=always: each worker that joined a region runs pinned to one CPU after
    # the caller's (threadpool.cpp: the guest scheduler of 2-vCPU VMs may keep a woken worker
    # on the caller's CPU). =1 pins a worker found on the caller's CPU, and unpins it when it is
    # preempted there (a busy machine). Unset or 0: the workers keep the whole CPU set.
    import ast
    import subprocess
    import sys

    def run(**env):
        clean = {k: v for k, v in os.environ.items() if k != "FKERAS_PIN_THREADS"}
        out = subprocess.run([sys.executable, "-c", _PINNING, str(threads)],
                             env=dict(clean, **env), capture_output=True, text=True, check=True)
        return ast.literal_eval(out.stdout.strip().splitlines()[-1])

    cpus, caller, workers = run(FKERAS_PIN_THREADS="always")
    assert len(workers) == threads - 1
    at = cpus.index(caller)
    # A worker pins itself when it joins a region; one that joined none keeps the full set.
    joined = [w for w in workers if len(w) == 1]
    assert joined, workers
    # Worker i goes to the (i + 1)-th CPU after the caller's (more workers than other CPUs:
    # round the CPU set again).
    expected = [cpus[(at + 1 + i) % len(cpus)] for i in range(threads - 1)]
    for i, w in enumerate(workers):
        assert w == cpus or w == [expected[i]], (cpus, caller, workers)
    if threads == 2:
        assert workers == [[cpus[(at + 1) % len(cpus)]]], (cpus, caller, workers)
    cpus, caller, workers = run(FKERAS_PIN_THREADS="1")
    at = cpus.index(caller)
    expected = [cpus[(at + 1 + i) % len(cpus)] for i in range(threads - 1)]
    for i, w in enumerate(workers):
        assert w == cpus or w == [expected[i]], (cpus, caller, workers)
    for env in ({}, {"FKERAS_PIN_THREADS": "0"}):
        cpus, caller, workers = run(**env)
        assert workers == [cpus] * (threads - 1), (env, cpus, caller, workers)
