"""What a rematerialized call must replay: the random seeds it drew and the variables it assigned.

`fkeras.remat` runs a function once in the forward pass and again in the backward pass. The
second run must compute the same values, so while the first run is open a *record* frame logs
  - every seed drawn (`fkeras.utils.random.next_seed`, `SeedGenerator.next`: the sources of
    dropout masks and noise), and
  - the value each Variable had before the call first assigned it (BatchNormalization's moving
    statistics, a SpectralNormalization power-iteration vector).
The recomputation opens a *replay* frame: seed draws return the logged seeds in order (the
generators do not advance again), and `restore_assigned` puts the assigned variables back to
their values before the call for its duration, then to their current values (so the state
updates are made once, as without remat).

Frames nest (a remat inside a remat): a draw takes its value from the innermost replay frame
(or the generator when there is none) and is logged in every record frame opened above it.
"""

import threading


class _State(threading.local):
    frames = ()  # innermost last; a tuple so the hooks' check is one attribute read


_STATE = _State()


class Frame:
    """One open record (replay is None) or replay (replay = the logged seeds) frame."""

    __slots__ = ("seeds", "replay", "pos", "assigned")

    def __init__(self, replay=None):
        self.seeds = []
        self.replay = replay
        self.pos = 0
        self.assigned = {}  # id(variable) -> (variable, its value before the first assign)

    def __enter__(self):
        _STATE.frames = _STATE.frames + (self,)
        return self

    def __exit__(self, *exc):
        frames = _STATE.frames
        _STATE.frames = tuple(f for f in frames if f is not self)


def active():
    """Whether any frame is open (the hooks' fast check)."""
    return bool(_STATE.frames)


def draw_seed(draw):
    """A seed: `draw()` normally, the logged one while replaying; logged while recording."""
    frames = _STATE.frames
    if not frames:
        return draw()
    recording = []
    value = None
    for frame in reversed(frames):
        if frame.replay is not None:
            if frame.pos < len(frame.replay):
                value = frame.replay[frame.pos]
                frame.pos += 1
            break
        recording.append(frame)
    if value is None:  # no replay frame, or the recomputation drew more seeds than the run
        value = draw()
    for frame in recording:
        frame.seeds.append(value)
    return value


def note_assign(variable):
    """Called before `variable` is assigned: record frames keep its value before the call."""
    for frame in reversed(_STATE.frames):
        if frame.replay is not None:
            break
        key = id(variable)
        if key not in frame.assigned:
            frame.assigned[key] = (variable, variable._device.copy(variable._value))


class restore_assigned:
    """Context manager for a recomputation: the variables a recorded run assigned hold their
    values from before that run inside, and their current values again after."""

    def __init__(self, assigned):
        self.assigned = list(assigned.values())
        self.current = []

    def __enter__(self):
        from fkeras.engine.variable import WRITES

        WRITES.n += 1
        for variable, before in self.assigned:
            self.current.append(variable._device.copy(variable._value))
            variable._device.copy_into(variable._value, before)
        return self

    def __exit__(self, *exc):
        from fkeras.engine.variable import WRITES

        WRITES.n += 1
        for (variable, _), now in zip(self.assigned, self.current):
            variable._device.copy_into(variable._value, now)
