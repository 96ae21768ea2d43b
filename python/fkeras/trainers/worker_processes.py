"""Worker processes for a PyDataset with `use_multiprocessing=True` (Keras 3's process pool).

One pool per pass over the data, started when the pass starts: on Linux the workers are
forked, so they hold the dataset as the main process left it after `on_epoch_end()` (the
dataset need not be picklable, as in Keras); where fork is unavailable they are spawned and
the dataset is pickled to them. Each worker computes `dataset[i]` for the indices it is sent;
the batch comes back pickled. An exception in a worker is raised in the main process with its
own type and the worker's traceback text attached as its cause (an exception that cannot be
pickled becomes a RuntimeError carrying its type, message and traceback). A worker that dies
breaks the pool, which raises at once (`BrokenProcessPool`) instead of waiting.
"""

import multiprocessing
import pickle
import traceback
import warnings

_dataset = None  # the dataset, in a worker process
_JOIN_S = 2.0  # how long a closing pool waits for workers before terminating them


def _init_worker(dataset):
    global _dataset
    _dataset = dataset


def get_batch(index):
    """`dataset[index]`, in a worker process."""
    try:
        return _dataset[index]
    except Exception as e:
        text = traceback.format_exc()
        picklable = True
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:
            picklable = False
        if picklable:
            raise
        raise RuntimeError(f"{type(e).__name__}: {e} (raised in a PyDataset worker process "
                           f"and not picklable)\n\nWorker traceback:\n{text}") from None


def _context():
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def start(dataset, workers):
    """A process pool of `workers` processes holding `dataset`."""
    from concurrent import futures

    return futures.ProcessPoolExecutor(max_workers=int(workers), mp_context=_context(),
                                       initializer=_init_worker, initargs=(dataset,))


def submit(pool, index):
    with warnings.catch_warnings():
        # Python >= 3.12 warns that forking a process with threads may deadlock; fkeras's
        # own kernel threads are dropped in the child (pthread_atfork), as Keras forks too.
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        return pool.submit(get_batch, index)


def stop(pool):
    """Cancels pending batches, lets the workers exit, and terminates any still running
    after `_JOIN_S` seconds (a batch that never ends cannot hold the training up)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    import time

    deadline = time.monotonic() + _JOIN_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(1.0)
