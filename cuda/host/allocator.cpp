// allocator.cpp (host): fk_cuda::CachingAllocator (the bookkeeping fkeras._C_cuda uses with
// cudaMalloc/cudaFree) instantiated with malloc/free, and the launch/workspace helpers of
// fk_cuda/launch.h, bound into fkeras._C_cuda_host for tests/cuda/test_allocator_host.py and
// tests/cuda/test_launch_host.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fk_cuda/binders.h"
#include "fk_cuda/caching_allocator.h"
#include "fk_cuda/launch.h"

namespace py = pybind11;

namespace {

// malloc/free counting what is outstanding, so tests can see leaks and raw calls.
struct CountingMalloc {
  std::shared_ptr<std::atomic<int64_t>> outstanding = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<std::atomic<int64_t>> fail_after = std::make_shared<std::atomic<int64_t>>(-1);
  void* allocate(size_t n) {
    if (fail_after->load() == 0) return nullptr;  // simulated out of memory
    if (fail_after->load() > 0) --*fail_after;
    void* p = std::malloc(n);
    if (p) ++*outstanding;
    return p;
  }
  void free(void* p) {
    std::free(p);
    --*outstanding;
  }
};

using HostAllocator = fk_cuda::CachingAllocator<CountingMalloc>;

struct PyHostAllocator {
  CountingMalloc raw;
  std::unique_ptr<HostAllocator> alloc{new HostAllocator(raw)};
};

py::dict stats_dict(const fk_cuda::AllocatorStats& s) {
  py::dict d;
  d["allocated_bytes"] = s.allocated_bytes;
  d["requested_bytes"] = s.requested_bytes;
  d["cached_bytes"] = s.cached_bytes;
  d["reserved_bytes"] = s.reserved_bytes;
  d["peak_allocated_bytes"] = s.peak_allocated_bytes;
  d["raw_alloc_count"] = s.raw_alloc_count;
  d["raw_free_count"] = s.raw_free_count;
  d["alloc_count"] = s.alloc_count;
  d["cache_hits"] = s.cache_hits;
  d["live_blocks"] = s.live_blocks;
  return d;
}

// `threads` threads each do `iterations` allocate / fill with a per-thread byte / verify /
// free rounds on random sizes; returns the number of corrupted blocks seen (0 when blocks
// handed out concurrently never overlap).
int64_t stress(HostAllocator& a, int threads, int iterations, size_t max_bytes, unsigned seed) {
  std::atomic<int64_t> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(seed + t);
      std::uniform_int_distribution<size_t> size(1, max_bytes);
      std::vector<std::pair<unsigned char*, size_t>> held;
      const unsigned char mark = static_cast<unsigned char>(t + 1);
      for (int i = 0; i < iterations; ++i) {
        size_t n = size(rng);
        auto* p = static_cast<unsigned char*>(a.allocate(n));
        std::memset(p, mark, n);
        held.emplace_back(p, n);
        if (held.size() > 4 || (rng() & 1)) {
          auto [q, m] = held.front();
          held.erase(held.begin());
          for (size_t k = 0; k < m; ++k)
            if (q[k] != mark) { ++bad; break; }
          a.deallocate(q);
        }
      }
      for (auto [q, m] : held) {
        for (size_t k = 0; k < m; ++k)
          if (q[k] != mark) { ++bad; break; }
        a.deallocate(q);
      }
    });
  }
  for (auto& th : pool) th.join();
  return bad.load();
}

}  // namespace

FK_BIND_FAMILY(allocator) {
  py::class_<PyHostAllocator>(m, "HostCachingAllocator",
      "fk_cuda::CachingAllocator over malloc/free (the bookkeeping of the CUDA allocator).")
      .def(py::init<>())
      .def("allocate", [](PyHostAllocator& h, size_t n) {
        return reinterpret_cast<uintptr_t>(h.alloc->allocate(n));
      }, py::arg("nbytes"))
      .def("deallocate", [](PyHostAllocator& h, uintptr_t p) {
        h.alloc->deallocate(reinterpret_cast<void*>(p));
      }, py::arg("address"))
      .def("empty_cache", [](PyHostAllocator& h) { h.alloc->empty_cache(); })
      .def("reset_peak", [](PyHostAllocator& h) { h.alloc->reset_peak(); })
      .def("stats", [](PyHostAllocator& h) { return stats_dict(h.alloc->stats()); })
      .def("bin_counts", [](PyHostAllocator& h) { return h.alloc->bin_counts(); })
      .def("block_size", [](PyHostAllocator& h, uintptr_t p) {
        return h.alloc->block_size(reinterpret_cast<void*>(p));
      })
      .def("raw_outstanding", [](PyHostAllocator& h) { return h.raw.outstanding->load(); })
      .def("fail_raw_after", [](PyHostAllocator& h, int64_t n) { h.raw.fail_after->store(n); },
           "Make the raw allocator fail after n more calls (-1: never).")
      .def("write", [](PyHostAllocator&, uintptr_t p, size_t n, int byte) {
        std::memset(reinterpret_cast<void*>(p), byte, n);
      })
      .def("read_all", [](PyHostAllocator&, uintptr_t p, size_t n, int byte) {
        auto* q = reinterpret_cast<const unsigned char*>(p);
        for (size_t k = 0; k < n; ++k)
          if (q[k] != static_cast<unsigned char>(byte)) return false;
        return true;
      }, "True when the n bytes at address all equal byte.")
      .def("destroy", [](PyHostAllocator& h) { h.alloc.reset(new HostAllocator(h.raw)); },
           "Destroys the allocator (returning every block to malloc) and starts a new one.")
      .def("stress", [](PyHostAllocator& h, int threads, int iterations, size_t max_bytes,
                        unsigned seed) {
        py::gil_scoped_release nogil;
        return stress(*h.alloc, threads, iterations, max_bytes, seed);
      }, py::arg("threads"), py::arg("iterations"), py::arg("max_bytes"), py::arg("seed") = 0);
  m.def("size_class", &fk_cuda::size_class, py::arg("nbytes"));
  m.def("launch_config", [](int64_t n, int threads, int64_t max_blocks) {
    auto c = fk_cuda::launch_config(n, threads, max_blocks);
    return py::make_tuple(c.blocks, c.threads);
  }, py::arg("n"), py::arg("threads") = 256, py::arg("max_blocks") = fk_cuda::kMaxBlocks1D);
  m.def("launch_config_2d", [](int64_t rows, int64_t cols, int tr, int tc) {
    auto c = fk_cuda::launch_config_2d(rows, cols, tr, tc);
    return py::make_tuple(c.grid_x, c.grid_y);
  });
  m.def("max_blocks_1d", [] { return fk_cuda::kMaxBlocks1D; });
  m.def("workspace_layout", [](const std::vector<size_t>& sizes, size_t align) {
    if (align == 0 || (align & (align - 1)) != 0)
      throw py::value_error("workspace_layout: align must be a power of two, received " +
                            std::to_string(align));
    fk_cuda::WorkspaceLayout w;
    w.align = align;
    std::vector<size_t> offs;
    for (size_t s : sizes) offs.push_back(w.add(s));
    return py::make_tuple(offs, w.bytes());
  }, py::arg("sizes"), py::arg("align") = 256,
     "Offsets of sub-buffers of the given sizes in one workspace, and its total bytes.");
}
