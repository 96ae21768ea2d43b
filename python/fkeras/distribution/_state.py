"""The one piece of distribution state the hot paths read (no imports, so every module can
import it cheaply): the active communicator, set only while a `DataParallel` distribution over
more than one process is in effect, and the weight of this rank's gradients in the current step.

`COMM is None` is the single-process fast path: one attribute read per optimizer step.
"""

COMM = None  # a fkeras.distribution.comm.Communicator with size > 1, or None
# This rank's share of the current global batch (local rows / global rows): the allreduce sums
# `grad * GRAD_WEIGHT`, the exact gradient of the global mean loss even for an uneven last batch.
GRAD_WEIGHT = 1.0
# True once this step's gradients were reduced during the backward (bucketing.py): the
# optimizer's own allreduce is skipped for one step.
PRE_REDUCED = False


def reduce_gradients(buffers):
    """Replaces each flat gradient buffer by the weighted sum over ranks (the global batch's
    gradient); a no-op without an active communicator or when already reduced."""
    global PRE_REDUCED
    if COMM is None:
        return
    if PRE_REDUCED:
        PRE_REDUCED = False
        return
    for buf in buffers:
        if GRAD_WEIGHT != 1.0:
            buf *= GRAD_WEIGHT
        COMM.allreduce_sum(buf)
