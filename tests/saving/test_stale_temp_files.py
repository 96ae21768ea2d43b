"""Temporary files of killed saves are removed by the next save to the same path: a real
save killed with SIGKILL mid-write, and left-over names of the exact pattern; other files,
other targets' temp files and a live process's temp file are kept."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fkeras
from fkeras.saving import file_io

pytest.importorskip("h5py")

KILLED_SAVE = textwrap.dedent("""
    import sys, time
    import fkeras
    from fkeras.saving import saving_lib

    def slow(path, *args):
        with open(path, "wb") as f:
            f.write(b"PK" + bytes(1 << 20))
            f.flush()
            print("writing", flush=True)
            time.sleep(60)

    saving_lib.write_archive = slow
    inp = fkeras.Input((4,))
    fkeras.Model(inp, fkeras.layers.Dense(2)(inp)).save(sys.argv[1])
""")


def model():
    inp = fkeras.Input((4,))
    return fkeras.Model(inp, fkeras.layers.Dense(2)(inp))


def test_a_save_killed_mid_write_is_cleaned_up_by_the_next_save(tmp_path):
    target = tmp_path / "m.keras"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_SAVE, str(target)],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout.readline().strip() == "writing"
        leftover = tmp_path / f".m.keras.tmp{proc.pid}.keras"
        assert leftover.exists()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert leftover.exists() and not target.exists()
    m = model()
    m.save(target)
    assert sorted(os.listdir(tmp_path)) == ["m.keras"]
    np.testing.assert_array_equal(fkeras.models.load_model(target).weights[0].numpy(),
                                  m.weights[0].numpy())


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_our_pattern_for_that_target_is_removed(tmp_path):
    dead = _dead_pid()
    live = os.getppid()  # exists while this test runs
    keep = ["m.keras", f".other.keras.tmp{dead}.keras", f".m.keras.tmp{dead}.keras.bak",
            f"m.keras.tmp{dead}.keras", f".m.keras.tmp{live}.keras", ".m.keras.tmpX.keras",
            "notes.txt", f".m.weights.h5.tmp{dead}.weights.h5"]
    stale = [f".m.keras.tmp{dead}.keras", f".m.keras.tmp{os.getpid()}.keras"]
    for name in keep + stale:
        (tmp_path / name).write_bytes(b"x")
    removed = file_io.remove_stale_temp_files(tmp_path / "m.keras")
    assert sorted(os.path.basename(p) for p in removed) == sorted(stale)
    assert sorted(os.listdir(tmp_path)) == sorted(keep)


def test_save_weights_cleans_its_own_pattern(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f".m.weights.h5.tmp{dead}.weights.h5"
    stale.write_bytes(b"x" * 100)
    model().save_weights(tmp_path / "m.weights.h5")
    assert sorted(os.listdir(tmp_path)) == ["m.weights.h5"]
