"""The `fkeras.distribution` API in one process (no MPI needed): Keras 3's names, the no-op
single-process path, argument errors, and the sharding rules with a stand-in communicator."""

import subprocess
import sys

import numpy as np
import pytest

import fkeras
from fkeras import distribution as dist
from fkeras.distribution import _state
from fkeras.distribution import data_parallel as dp


@pytest.fixture(autouse=True)
def _no_distribution():
    yield
    dist.set_distribution(None)


class FakeComm:
    """Rank `rank` of `size`: collectives as if every rank held the same values."""

    def __init__(self, rank, size):
        self.rank, self.size = rank, size

    def allreduce_sum(self, array):
        array *= self.size
        return array

    def allgather(self, obj):
        return [obj] * self.size


@pytest.fixture
def two_ranks(request):
    saved = _state.COMM, _state.GRAD_WEIGHT
    _state.COMM = FakeComm(getattr(request, "param", 1), 2)
    yield _state.COMM
    _state.COMM, _state.GRAD_WEIGHT = saved


def test_single_process_api():
    dist.initialize()  # no launcher: a no-op
    assert dist.list_devices() == ["cpu:0"] and dist.get_device_count() == 1
    assert (dist.process_rank(), dist.num_processes(), dist.is_rank_zero()) == (0, 1, True)
    strategy = dist.DataParallel()
    assert strategy.num_model_replicas == 1 and strategy.batch_dim_name == "batch"
    assert dist.distribution() is None
    with strategy.scope():
        assert dist.distribution() is strategy
    dist.set_distribution(strategy)
    assert dist.distribution() is strategy and _state.COMM is None  # one process: no comm


def test_import_does_not_load_mpi4py():
    code = "import sys, fkeras; fkeras.distribution.initialize(); print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={k: v for k, v in __import__("os").environ.items()
                                          if not k.startswith(("PMI_", "PMIX_", "OMPI_"))})
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("call, message", [
    (lambda: dist.set_distribution("data"), "expected a DataParallel instance"),
    (lambda: dist.DeviceMesh((2,), ["batch"]), "Shape does not match the number of devices"),
    (lambda: dist.DeviceMesh((1,), ["a", "b"]), "Shape and axis_names should have same size"),
    (lambda: dist.DataParallel(device_mesh="mesh"), "Expect `mesh` to be an instance"),
    (lambda: dist.DataParallel(devices=["cpu:0", "cpu:1"]), "the job has 1 processes"),
    (lambda: dist.list_devices("gpu"), "only `device_type='cpu'`"),
])
def test_argument_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_batch_size_must_divide(two_ranks):
    dp.check_batch_size(32)
    with pytest.raises(ValueError, match=r"batch_size=33` is the global batch and must be "
                                         r"divisible by the number of processes \(2\)"):
        dp.check_batch_size(33)


def _epoch(sizes):
    start, out = 0, []
    for step, m in enumerate(sizes):
        rows = np.arange(start, start + m, dtype=np.float32)[:, None]
        out.append((step, ([rows], [rows[:, 0]], None)))
        start += m
    return out


@pytest.mark.parametrize("two_ranks", [0, 1], indirect=True)
def test_training_shards_are_disjoint_and_weighted(two_ranks):
    rank = two_ranks.rank
    got, weights = [], []
    for step, (xs, ys, sws) in dp.shard(iter(_epoch([4, 4, 3])), training=True):
        got.append((step, xs[0][:, 0].tolist()))
        np.testing.assert_array_equal(xs[0][:, 0], ys[0])
        weights.append(_state.GRAD_WEIGHT)
    with pytest.warns(UserWarning, match="skipping a training batch of 1 rows"):
        assert list(dp.shard(iter(_epoch([1])), training=True)) == []
    expected = [[(0, [0, 1]), (1, [4, 5]), (2, [8])], [(0, [2, 3]), (1, [6, 7]), (2, [9, 10])]]
    assert got == expected[rank]
    assert weights == [0.5, 0.5, [1 / 3, 2 / 3][rank]]
    assert _state.GRAD_WEIGHT == 0.5  # reset after the epoch (train_on_batch, custom loops)


@pytest.mark.parametrize("two_ranks", [0, 1], indirect=True)
def test_inference_shards_keep_every_row(two_ranks):
    parts = [b for _, b in dp.shard(iter(_epoch([3, 1])), training=False)]
    assert parts[0][0][0][:, 0].tolist() == [[0], [1, 2]][two_ranks.rank]
    assert (parts[1] is None) == (two_ranks.rank == 0)  # the 1-row batch goes to rank 1


def test_metric_states_are_summed(two_ranks):
    m = fkeras.metrics.Mean()
    m.update_state([1.0, 3.0])
    dp.reduce_metrics([m])
    assert float(m.result()) == 2.0 and m._state[0][1] == 8.0 and m._state[1][1] == 4.0


@pytest.mark.parametrize("two_ranks", [1], indirect=True)
def test_dropout_masks_differ_by_rank_generators_stay_in_step(two_ranks):
    fkeras.utils.set_random_seed(3)
    x = np.ones((64, 32), "float32")
    on_rank1 = np.asarray(fkeras.random.dropout(x, 0.5))
    after1 = fkeras.utils.random.global_rng().integers(1 << 30)
    _state.COMM = None
    fkeras.utils.set_random_seed(3)
    on_rank0 = np.asarray(fkeras.random.dropout(x, 0.5))
    after0 = fkeras.utils.random.global_rng().integers(1 << 30)
    assert after0 == after1  # the same stream: shuffles agree across ranks
    assert not np.array_equal(on_rank0, on_rank1)
    np.testing.assert_array_equal(np.asarray(fkeras.random.dropout(x, 0.5, seed=5)),
                                  np.asarray(fkeras.random.dropout(x, 0.5, seed=5)))


def test_tape_reports_each_gradient_when_final():
    inputs = fkeras.Input((3,))
    h = fkeras.layers.Dense(4, activation="tanh")(inputs)
    model = fkeras.Model(inputs, fkeras.layers.Dense(2)(h))
    unused = fkeras.Variable(np.ones(3, "float32"))
    sources = model.trainable_variables + [unused]
    x = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    reported = []
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.sum(fkeras.ops.square(model(x)))
    tape.on_gradient_ready = lambda j, g: reported.append(
        (j, None if g is None else np.array(g)))
    grads = tape.gradient(loss, sources)
    order = [j for j, _ in reported]
    assert sorted(order) == list(range(5))
    assert order.index(2) < order.index(0) and order.index(3) < order.index(1)  # last layer first
    for j, g in reported:
        if j == 4:
            assert g is None and grads[4] is None
        else:
            np.testing.assert_array_equal(g, np.asarray(grads[j]))


@pytest.mark.parametrize("bucket_mb, mode, bucketed", [
    ("4", None, False),  # 15k parameters: one bucket, nothing to overlap
    ("0.01", None, True),  # ~2.6k-element buckets: several
    ("4", "1", True),  # forced
    ("0.01", "0", False),  # off
])
def test_bucketing_only_where_there_is_something_to_overlap(monkeypatch, bucket_mb, mode,
                                                            bucketed):
    from fkeras.distribution import bucketing

    class Comm(FakeComm):
        def iallreduce_sum(self, array):
            raise AssertionError("not called here")

    monkeypatch.setenv("FKERAS_DIST_BUCKET_MB", bucket_mb)
    if mode is None:
        monkeypatch.delenv("FKERAS_DIST_OVERLAP", raising=False)
    else:
        monkeypatch.setenv("FKERAS_DIST_OVERLAP", mode)
    variables = [fkeras.Variable(np.zeros(s, np.float32)) for s in ((100, 120), (120,), (3000,))]
    monkeypatch.setattr(_state, "COMM", Comm(0, 2))
    reducer = bucketing.reducer_for(variables)
    assert (reducer is not None) == bucketed
    if mode is None:
        assert len(bucketing._cache[tuple(map(id, variables))].buckets) == (
            2 if bucketed else 1)
    bucketing._cache.clear()


@pytest.mark.parametrize("n, size", [(83, 2), (6, 2), (1 << 20, 2), (1001, 3), (0, 2)])
def test_slices_cover_the_buffer_on_cache_lines(n, size):
    from fkeras.distribution import sharded_update

    bounds = sharded_update._bounds(n, size, 4)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    for (lo, hi), (lo2, _) in zip(bounds, bounds[1:]):
        assert lo <= hi == lo2 and lo2 % 16 == 0
    if n >= 16 * size * 4:  # large buffers: near-equal shares
        assert max(hi - lo for lo, hi in bounds) - min(hi - lo for lo, hi in bounds) < 32


class _OwnUpdate(fkeras.optimizers.Adam):
    def _update(self, g, lr, step, weight_decay):  # not known to be elementwise
        super()._update(g, lr, step, weight_decay)


@pytest.mark.parametrize("make, expected", [
    (lambda: fkeras.optimizers.Adam(), True),
    (lambda: fkeras.optimizers.AdamW(weight_decay=0.1), True),
    (lambda: fkeras.optimizers.SGD(momentum=0.9), True),
    (lambda: fkeras.optimizers.Ftrl(), True),
    (lambda: fkeras.optimizers.Adam(clipvalue=0.5), True),
    (lambda: fkeras.optimizers.Adam(clipnorm=1.0), False),
    (lambda: fkeras.optimizers.Adam(global_clipnorm=1.0), False),
    (lambda: fkeras.optimizers.Adam(use_ema=True), False),
    (lambda: fkeras.optimizers.Adam(gradient_accumulation_steps=2), False),
    (lambda: fkeras.optimizers.Lamb(), False),
    (lambda: fkeras.optimizers.Adafactor(), False),
    (lambda: _OwnUpdate(), False),
])
def test_sharded_update_only_for_elementwise_updates(make, expected):
    from fkeras.distribution import sharded_update

    opt = make()
    opt.build([fkeras.Variable(np.zeros((3, 5), np.float32)),
               fkeras.Variable(np.zeros((5,), np.float32))])
    assert sharded_update.eligible(opt) is expected
    assert not sharded_update.wanted(opt)  # no distribution: never
