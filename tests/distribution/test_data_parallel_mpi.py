"""Data parallelism on two real MPI processes (`mpiexec -n 2`, one thread per rank) against
one process: the same weights, metrics, predictions; synchronized batch norm; one writer;
faults end the job with an error in bounded time. Every launch has a timeout."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fkeras

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install 'fkeras[mpi]')")

WORKER = Path(__file__).with_name("mpi_worker.py")
TIMEOUT = 120  # seconds per launch: nothing may hang CI


def _mpiexec():
    here = Path(sys.executable).parent  # the mpich wheel puts mpiexec beside python
    return shutil.which("mpiexec", path=f"{here}{os.pathsep}{os.environ.get('PATH', '')}")


MPIEXEC = _mpiexec()
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec found (pip install mpich)")


def _env(**extra):
    env = dict(os.environ, FKERAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               FKERAS_DIST_TIMEOUT="30")
    env.update(extra)
    # The workers import the fkeras this test imported (a source tree or an install).
    root = str(Path(fkeras.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    for key in list(env):  # a stray launcher variable would make the reference join MPI
        if key.startswith(("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCALNRANKS")):
            del env[key]
    return env


def run(scenario, outdir, ranks, worker=WORKER, **env):
    """Runs `worker` (a script beside this file) on `ranks` processes (1: without mpiexec);
    returns the completed process (the run must end within TIMEOUT)."""
    cmd = [sys.executable, str(WORKER.with_name(Path(worker).name)), scenario, str(outdir)]
    if ranks > 1:
        cmd = [MPIEXEC, "-n", str(ranks)] + cmd
    return subprocess.run(cmd, env=_env(**env), capture_output=True, text=True,
                          timeout=TIMEOUT)


def results(outdir, scenario, ranks):
    out = []
    for r in range(ranks):
        with np.load(Path(outdir) / f"{scenario}_rank{r}_of{ranks}.npz") as f:
            out.append(dict(f))
    return out


def _ok(proc):
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def train_runs(tmp_path_factory):
    one, two = tmp_path_factory.mktemp("one"), tmp_path_factory.mktemp("two")
    p1, p2 = _ok(run("train", one, 1)), _ok(run("train", two, 2))
    return {"one": results(one, "train", 1)[0], "two": results(two, "train", 2),
            "dir_two": two, "stdout_two": p2.stdout, "stdout_one": p1.stdout}


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(b, np.float64), np.asarray(a, np.float64),
                               rtol=rtol, atol=atol)


def _weight_keys(res):
    return sorted((k for k in res if k.startswith("w")), key=lambda k: int(k[1:]))


def _weights(res):
    return [res[k] for k in _weight_keys(res)]


def test_two_ranks_train_like_one(train_runs):
    one, two = train_runs["one"], train_runs["two"]
    assert int(one["steps"]) == 21 and all(int(r["steps"]) == 21 for r in two)
    for rank in two:
        for a, b in zip(_weights(one), _weights(rank)):
            _close(a, b)
    # Every rank holds bit-identical weights (rank 0's broadcast, the same averaged grads).
    for a, b in zip(_weights(two[0]), _weights(two[1])):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("overlap", ["1", "0"])
def test_mpi_allreduce_paths_give_the_same_weights(train_runs, tmp_path, overlap):
    # The default on one machine is the sharded update in shared memory; without it the
    # gradients are allreduced by MPI, bucket by bucket during the backward or in one call.
    _ok(run("train", tmp_path, 2, FKERAS_DIST_SHARDED="0", FKERAS_DIST_OVERLAP=overlap))
    for mpi in results(tmp_path, "train", 2):
        for a, b in zip(_weights(train_runs["two"][0]), _weights(mpi)):
            _close(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("key", ["hist_loss", "hist_accuracy", "hist_val_loss",
                                 "hist_val_accuracy", "evaluate"])
def test_metrics_are_global_on_every_rank(train_runs, key):
    one, two = train_runs["one"], train_runs["two"]
    for rank in two:
        _close(one[key], rank[key])
    np.testing.assert_array_equal(two[0][key], two[1][key])


def test_predict_is_gathered_in_order(train_runs):
    one, two = train_runs["one"], train_runs["two"]
    assert two[0]["predict"].shape == one["predict"].shape == (364, 1)
    for rank in two:
        _close(one["predict"], rank["predict"])


def test_only_rank_zero_prints_and_writes(train_runs):
    d = Path(train_runs["dir_two"])
    assert (d / "ckpt_rank0.weights.h5").exists() and (d / "log_rank0.csv").exists()
    assert not (d / "ckpt_rank1.weights.h5").exists() and not (d / "log_rank1.csv").exists()
    assert not (d / "tb_rank1").exists()
    assert train_runs["stdout_two"].count("19/19") == 0
    assert train_runs["stdout_two"].count("21/21") == 1  # one progress line, from rank 0


def test_synchronized_batch_norm_equals_one_process(tmp_path):
    _ok(run("syncbn", tmp_path, 1))
    _ok(run("syncbn", tmp_path, 2))
    one, two = results(tmp_path, "syncbn", 1)[0], results(tmp_path, "syncbn", 2)
    for rank in two:  # trainable weights and the moving statistics
        for a, b in zip(_weights(one), _weights(rank)):
            _close(a, b, rtol=1e-4, atol=1e-5)


def test_subclassed_model_starts_from_rank_zero_weights(tmp_path):
    _ok(run("subclass", tmp_path, 1))
    _ok(run("subclass", tmp_path, 2))
    one, two = results(tmp_path, "subclass", 1)[0], results(tmp_path, "subclass", 2)
    assert len(_weights(one)) == 4
    for rank in two:
        for a, b in zip(_weights(one), _weights(rank)):
            _close(a, b)


def test_local_batch_norm_keeps_per_rank_statistics(tmp_path):
    _ok(run("localbn", tmp_path, 1))
    _ok(run("localbn", tmp_path, 2))
    one, two = results(tmp_path, "localbn", 1)[0], results(tmp_path, "localbn", 2)
    moving = _weight_keys(one)[-4:]  # moving mean and variance, then the last Dense
    diffs = [np.max(np.abs(one[k] - two[0][k])) for k in moving]
    assert max(diffs) > 1e-4  # per-rank statistics: not the single-process run


@pytest.mark.parametrize("scenario", ["raise", "kill", "hang"])
def test_failing_rank_ends_the_job(tmp_path, scenario):
    start = time.monotonic()
    # Only the hang needs the watchdog; a short timeout could fire first on a loaded machine.
    timeout = 10 if scenario == "hang" else 60
    proc = run(scenario, tmp_path, 2, FKERAS_DIST_TIMEOUT=str(timeout))
    assert proc.returncode != 0
    assert time.monotonic() - start < 45
    if scenario == "raise":
        assert "rank 1 failed on purpose" in proc.stderr
        assert "aborting the job" in proc.stderr
    if scenario == "hang":
        assert "rank 0 waited more than 10 s in the collective" in proc.stderr, proc.stderr
    # The checkpoint rank 0 wrote (atomically) before the failure still loads.
    ckpt = tmp_path / "ckpt.weights.h5"
    assert ckpt.exists()
    sys.path.insert(0, str(WORKER.parent))
    try:
        import mpi_worker
    finally:
        sys.path.pop(0)
    model = mpi_worker.mlp()
    model.load_weights(ckpt)


@pytest.mark.parametrize("scenario, message", [
    ("mismatch", "call fit with different batch_size, steps"),
    ("mismatch_model", "call fit with different weight shapes"),
])
def test_mismatched_ranks_are_refused(tmp_path, scenario, message):
    proc = run(scenario, tmp_path, 2)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr[-3000:]
