"""The sharded optimizer update of ranks on one machine (distribution/sharded_update.py) on
two real MPI processes: equal to the MPI-allreduce path and to one process for every
elementwise optimizer with slots, odd parameter counts, an uneven last batch; the whole
optimizer state on every rank; the MPI path where the update is not elementwise; private
buffers again once the distribution is off."""

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install 'fkeras[mpi]')")

from test_data_parallel_mpi import MPIEXEC, _ok, results, run  # noqa: E402

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec found (pip install mpich)")

WORKER = "sharded_worker.py"
SHARDED = ["sgd_momentum", "adam", "adam_amsgrad", "adamw", "adamax", "adagrad", "adadelta",
           "rmsprop", "nadam", "lion", "ftrl", "adam_clipvalue_losscale", "loss_scale", "tiny"]


def _keys(res, prefix):
    return sorted((k for k in res if k[0] == prefix and k[1:].isdigit()), key=lambda k: int(k[1:]))


def _state(res):
    return [res[k] for k in _keys(res, "w") + _keys(res, "o")]


def _three_runs(scenario, tmp_path):
    one, mpi, shm = (tmp_path / d for d in ("one", "mpi", "shm"))
    for d in (one, mpi, shm):
        d.mkdir()
    _ok(run(scenario, one, 1, worker=WORKER))
    _ok(run(scenario, mpi, 2, worker=WORKER, FKERAS_DIST_SHARDED="0"))
    _ok(run(scenario, shm, 2, worker=WORKER))
    return (results(one, scenario, 1)[0], results(mpi, scenario, 2),
            results(shm, scenario, 2))


@pytest.mark.parametrize("scenario", SHARDED)
def test_sharded_update_equals_allreduce_and_one_process(scenario, tmp_path):
    one, mpi, shm = _three_runs(scenario, tmp_path)
    assert all(bool(r["sharded"]) for r in shm) and not any(bool(r["sharded"]) for r in mpi)
    assert int(one["iterations"]) == 18
    assert all(int(r["iterations"]) == 18 for r in mpi + shm)
    for rank in range(2):
        assert len(_state(shm[rank])) == len(_state(one)) >= 8
        # Weights and every optimizer variable (slots included) on each rank.
        for a, b in zip(_state(mpi[rank]), _state(shm[rank])):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
        for a, b in zip(_state(one), _state(shm[rank])):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    for a, b in zip(_state(shm[0]), _state(shm[1])):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("scenario", ["clipnorm", "lamb"])
def test_updates_that_need_whole_variables_take_the_mpi_path(scenario, tmp_path):
    one, mpi, shm = _three_runs(scenario, tmp_path)
    assert not any(bool(r["sharded"]) for r in mpi + shm)
    for rank in range(2):
        for a, b in zip(_state(one), _state(shm[rank])):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_slots_are_private_again_after_the_distribution(tmp_path):
    _ok(run("detach", tmp_path, 2, worker=WORKER))
    r0, r1 = results(tmp_path, "detach", 2)
    assert bool(r0["sharded"]) and all(bool(r[k]) for r in (r0, r1)
                                       for k in ("detached", "detached_at_once"))
    slots = _keys(r0, "o")[2:]
    assert all(not r1[k].any() for k in slots)  # rank 1 zeroed its own slots ...
    assert all(r0[k].any() for k in slots)  # ... rank 0's are untouched
    # The local step trained each rank on its own rows: the weights differ.
    assert max(np.abs(r0[k] - r1[k]).max() for k in _keys(r0, "w")) > 1e-4


def test_no_shared_memory_falls_back_to_mpi(tmp_path):
    _ok(run("adam", tmp_path, 2, worker=WORKER, FKERAS_DIST_SHM_DIR=str(tmp_path / "none")))
    runs = results(tmp_path, "adam", 2)
    assert not any(bool(r["sharded"]) for r in runs)
    for a, b in zip(_state(runs[0]), _state(runs[1])):
        np.testing.assert_array_equal(a, b)
