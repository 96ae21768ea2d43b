"""The caching allocator's bookkeeping (fk_cuda/caching_allocator.h) on the CPU.

fkeras._C_cuda_host instantiates the same class template as the CUDA allocator, with a
counting malloc/free pair in place of cudaMalloc/cudaFree.
"""

import pytest

H = pytest.importorskip("fkeras._C_cuda_host")

KIB, MIB = 1024, 1024 * 1024


@pytest.fixture
def alloc():
    a = H.HostCachingAllocator()
    yield a
    a.destroy()
    assert a.raw_outstanding() == 0


@pytest.mark.parametrize(
    "nbytes, expected",
    [
        (0, 512), (1, 512), (512, 512), (513, 1024), (1000, 1024), (MIB, MIB),
        (MIB + 1, MIB + MIB // 4), (int(1.3 * MIB), int(1.5 * MIB)), (2 * MIB, 2 * MIB),
        (2 * MIB + 1, 2 * MIB + MIB // 2), (100 * MIB, 112 * MIB), (7 * KIB + 3, 7.5 * KIB),
    ],
)
def test_size_classes(nbytes, expected):
    assert H.size_class(nbytes) == expected


def test_size_class_waste_is_bounded():
    for n in list(range(1, 5000, 37)) + [MIB * k + 17 for k in range(1, 70, 3)]:
        c = H.size_class(n)
        assert c >= n
        assert c - n < 512 or c <= 1.25 * n, n
        assert H.size_class(c) == c  # classes are fixed points


def test_a_freed_block_is_reused_without_a_raw_allocation(alloc):
    p = alloc.allocate(1000)
    assert alloc.block_size(p) == 1024
    alloc.deallocate(p)
    s = alloc.stats()
    assert s["cached_bytes"] == 1024 and s["allocated_bytes"] == 0
    q = alloc.allocate(700)  # same class (1024)
    assert q == p
    s = alloc.stats()
    assert s["raw_alloc_count"] == 1 and s["cache_hits"] == 1 and s["cached_bytes"] == 0


def test_bins_hold_blocks_per_class(alloc):
    ps = [alloc.allocate(n) for n in (100, 200, 3000, 3000, MIB + 5)]
    for p in ps:
        alloc.deallocate(p)
    assert alloc.bin_counts() == {512: 2, 3072: 2, MIB + MIB // 4: 1}


def test_best_fit_reuse_up_to_twice_the_class(alloc):
    big = alloc.allocate(4000)   # class 4096
    alloc.deallocate(big)
    small = alloc.allocate(1500)  # class 1536: 4096 > 2 * 1536, so a new block
    assert small != big
    alloc.deallocate(small)
    mid = alloc.allocate(2500)    # class 2560: 4096 <= 5120 -> reuse the 4096 block
    assert mid == big and alloc.block_size(mid) == 4096
    alloc.deallocate(mid)
    assert alloc.stats()["raw_alloc_count"] == 2


def test_stats_track_allocated_cached_and_peak(alloc):
    a = alloc.allocate(MIB)
    b = alloc.allocate(3 * MIB)
    s = alloc.stats()
    assert s["allocated_bytes"] == MIB + 3 * MIB
    assert s["requested_bytes"] == 4 * MIB
    assert s["live_blocks"] == 2 and s["reserved_bytes"] == 4 * MIB
    alloc.deallocate(b)
    s = alloc.stats()
    assert s["allocated_bytes"] == MIB and s["cached_bytes"] == 3 * MIB
    assert s["peak_allocated_bytes"] == 4 * MIB
    alloc.reset_peak()
    assert alloc.stats()["peak_allocated_bytes"] == MIB
    alloc.deallocate(a)
    alloc.empty_cache()
    s = alloc.stats()
    assert s["reserved_bytes"] == 0 and s["cached_bytes"] == 0
    assert s["raw_free_count"] == s["raw_alloc_count"] == 2
    assert alloc.raw_outstanding() == 0


def test_warm_training_loop_makes_no_raw_allocations(alloc):
    sizes = [4 * 32 * 784, 4 * 784 * 128, 4 * 128, 4 * 32 * 128, 4 * 32 * 10, 4 * 10]
    for step in range(200):
        ps = [alloc.allocate(n) for n in sizes]
        for p in reversed(ps):
            alloc.deallocate(p)
        if step == 0:
            warm = alloc.stats()["raw_alloc_count"]
    s = alloc.stats()
    assert s["raw_alloc_count"] == warm == len(sizes)
    assert s["cache_hits"] == 199 * len(sizes)
    assert s["allocated_bytes"] == 0


def test_fragmentation_stops_growing_once_every_size_was_seen(alloc):
    # 17 request sizes cycling: the first cycle reserves at most one block per (size, slot);
    # later cycles reuse them, so reserved memory and raw calls stay flat.
    sizes = [(i % 17 + 1) * 3000 for i in range(17)]
    bound = sum(H.size_class(n) + H.size_class(2 * n) for n in sizes)
    for i in range(300):
        n = sizes[i % 17]
        ps = [alloc.allocate(n), alloc.allocate(2 * n)]
        for p in ps:
            alloc.deallocate(p)
        if i == 16:
            after_first_cycle = alloc.stats()
    s = alloc.stats()
    assert s["reserved_bytes"] == after_first_cycle["reserved_bytes"] <= bound
    assert s["raw_alloc_count"] == after_first_cycle["raw_alloc_count"] <= 2 * 17
    assert s["allocated_bytes"] == 0


def test_live_blocks_do_not_overlap(alloc):
    ps = [(alloc.allocate(n), n) for n in (1, 511, 512, 5000, MIB + 3)]
    for i, (p, n) in enumerate(ps):
        alloc.write(p, n, i + 1)
    for i, (p, n) in enumerate(ps):
        assert alloc.read_all(p, n, i + 1)
        alloc.deallocate(p)


def test_unknown_pointer_is_an_error(alloc):
    p = alloc.allocate(64)
    with pytest.raises(ValueError, match="unknown pointer"):
        alloc.deallocate(p + 8)
    alloc.deallocate(p)
    with pytest.raises(ValueError, match="unknown pointer"):
        alloc.deallocate(p)  # double free
    alloc.deallocate(0)  # nullptr is ignored


def test_out_of_memory_empties_the_cache_and_retries(alloc):
    p = alloc.allocate(10 * KIB)
    alloc.deallocate(p)
    assert alloc.stats()["cached_bytes"] > 0
    alloc.fail_raw_after(1)  # next raw call succeeds, the one after fails
    q = alloc.allocate(100 * KIB)  # raw succeeds
    alloc.fail_raw_after(0)
    with pytest.raises(MemoryError):
        alloc.allocate(200 * KIB)
    s = alloc.stats()
    assert s["cached_bytes"] == 0  # the cache was given back before failing
    alloc.fail_raw_after(-1)
    alloc.deallocate(q)


def test_destroying_returns_live_and_cached_blocks():
    a = H.HostCachingAllocator()
    a.allocate(1000)  # never freed
    a.deallocate(a.allocate(MIB))
    assert a.raw_outstanding() == 2
    a.destroy()
    assert a.raw_outstanding() == 0


@pytest.mark.parametrize("threads", [2, 8])
def test_thread_safety(alloc, threads):
    bad = alloc.stress(threads=threads, iterations=3000, max_bytes=20000, seed=threads)
    assert bad == 0
    s = alloc.stats()
    assert s["allocated_bytes"] == 0 and s["live_blocks"] == 0
    assert s["alloc_count"] == threads * 3000
    alloc.empty_cache()
    assert alloc.raw_outstanding() == 0
