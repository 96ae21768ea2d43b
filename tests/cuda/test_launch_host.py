"""Grid and workspace helpers of fk_cuda/launch.h, compiled for the CPU."""

import pytest

H = pytest.importorskip("fkeras._C_cuda_host")


@pytest.mark.parametrize("n", [1, 7, 33, 255, 256, 257, 1000, 10**6, 2**31 + 5])
@pytest.mark.parametrize("threads", [32, 128, 256, 1024])
def test_launch_config_covers_n(n, threads):
    blocks, t = H.launch_config(n, threads)
    assert t == threads
    cap = H.max_blocks_1d()
    assert blocks == min(-(-n // threads), cap)
    assert blocks >= 1
    if blocks < cap:
        assert blocks * t >= n > (blocks - 1) * t


@pytest.mark.parametrize("n", [0, -5])
def test_launch_config_empty(n):
    assert H.launch_config(n, 256)[0] == 0


def test_launch_config_clamps_threads_and_blocks():
    assert H.launch_config(10, 0) == (10, 1)
    assert H.launch_config(10**6, 4096) == (-(-10**6 // 1024), 1024)
    assert H.launch_config(10**9, 256, 1000) == (1000, 256)


@pytest.mark.parametrize(
    "rows, cols, tr, tc, expected",
    [(1, 1, 16, 16, (1, 1)), (33, 7, 16, 16, (1, 3)), (1000, 1000, 32, 64, (16, 32)),
     (10**6, 5, 8, 8, (1, 65535)), (0, 5, 8, 8, (0, 0)), (5, 5, 0, 8, (0, 0))],
)
def test_launch_config_2d(rows, cols, tr, tc, expected):
    assert H.launch_config_2d(rows, cols, tr, tc) == expected


def test_workspace_layout_aligns_every_buffer():
    offs, total = H.workspace_layout([3, 300, 1, 0, 256])
    assert offs == [0, 256, 768, 1024, 1024]
    assert total == 1280
    for o in offs:
        assert o % 256 == 0
    offs, total = H.workspace_layout([10, 10], align=16)
    assert offs == [0, 16] and total == 32
    assert H.workspace_layout([]) == ([], 0)
    with pytest.raises(ValueError, match="power of two"):
        H.workspace_layout([1], align=24)
