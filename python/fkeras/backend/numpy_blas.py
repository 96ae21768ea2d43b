"""NumPy's OpenBLAS on one thread for a moment: `with single_threaded(): np.linalg.qr(a)`.

Why: after a threaded call, OpenBLAS's idle threads spin for about 0.1 s before they sleep
(measured here: 10 of the next 50 scheduler ticks on a 512 x 128 QR). fkeras computes with its
own kernels and thread pool; such a spinning thread takes a core from them, so the first calls
after building a model ran 1.5-1.9x slower (the Orthogonal initializer's QR, behind every
LSTM/GRU/SimpleRNN recurrent kernel). Small setup-time products lose little on one thread.

Only NumPy's bundled OpenBLAS (scipy-openblas, found among the loaded libraries) is limited,
and the thread count it had is restored on exit; elsewhere (another BLAS, no /proc) this does
nothing.
"""

import contextlib
import ctypes
import threading

_lock = threading.Lock()
_funcs = []  # [] not looked up yet; [None] none; [(get, set)]


def _threads_api():
    if not _funcs:
        found = None
        try:
            with open("/proc/self/maps") as maps:
                paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
            for path in sorted(paths):
                lib = ctypes.CDLL(path)
                for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "")):
                    get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                    set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                    if get is not None and set_ is not None:
                        get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
                        found = (get, set_)
                        break
                if found:
                    break
        except (OSError, ValueError, IndexError):
            found = None
        _funcs.append(found)
    return _funcs[0]


@contextlib.contextmanager
def single_threaded():
    """Runs the body with NumPy's OpenBLAS on one thread (see the module docstring)."""
    api = _threads_api()
    if api is None:
        yield
        return
    get, set_ = api
    with _lock:
        before = get()
        set_(1)
        try:
            yield
        finally:
            set_(before)
