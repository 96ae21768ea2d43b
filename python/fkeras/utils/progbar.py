"""Progbar: Keras 3's progress bar.

verbose=1 on a terminal redraws one line (`\\r`) with Keras 3's layout and colours:
`  3/10 ━━━━━━━━━━━━━━━━━━━━ 1s 5ms/step - accuracy: 0.5625 - loss: 0.7105`.
Off a terminal (a log file, a pipe) no ANSI codes and no backspaces are written: one plain
line per finished bar (Keras writes both into files; fkeras does not, see
KERAS_SEMANTICS.md 2.10). verbose=2 prints one line per finished bar:
`10/10 - 1s - 5ms/step - accuracy: 0.5625 - loss: 0.7105`.
Values print as %.4f, or %.4e when |v| <= 1e-3 (Keras).
"""

import math
import os
import sys
import time

import numpy as np


def _is_interactive(stream):
    if os.environ.get("FKERAS_PROGBAR_DYNAMIC") is not None:
        return os.environ["FKERAS_PROGBAR_DYNAMIC"] not in ("0", "false", "")
    return bool(getattr(stream, "isatty", None) and stream.isatty()) or "ipykernel" in sys.modules


def format_value(v):
    if isinstance(v, (list, tuple, np.ndarray)) and np.ndim(v) > 0:
        return str(np.asarray(v).tolist())
    v = float(v)
    return f"{v:.4f}" if abs(v) > 1e-3 else f"{v:.4e}"


def format_time_per_unit(seconds, unit="step"):
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/{unit}"
    return f"{seconds * 1e6:.0f}us/{unit}"


def format_eta(eta):
    if eta > 3600:
        return "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
    if eta > 60:
        return "%d:%02d" % (eta // 60, eta % 60)
    return "%ds" % eta


class Progbar:
    """Displays a progress bar.

    Args:
        target: total number of steps expected, None if unknown.
        width: bar width in characters (20, Keras 3).
        verbose: 0 (silent), 1 (bar), 2 (one line at the end).
        interval: minimum seconds between redraws.
        unit_name: "step" or "sample".
        stream: where to write (default sys.stdout at each write).
    """

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step", stream=None):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = None if stateful_metrics is None else set(stateful_metrics)
        self._stream = stream
        self._dynamic = _is_interactive(self.stream)
        self._values = {}
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first = None
        self._prev_width = 0
        self._seen = 0

    @property
    def stream(self):
        if self._stream is not None:
            return self._stream
        from fkeras import config

        return sys.stdout if config.is_interactive_logging_enabled() else _LOG_STREAM

    def update(self, current, values=None, finalize=None):
        """Sets the progress to `current` with `values` [(name, value)] (shown as given)."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or []:
            self._values[k] = v
        self._seen = current
        now = time.time()
        per_unit = self._time_per_unit(current, now)
        if self.verbose == 1:
            if not finalize and (now - self._last_update < self.interval or not self._dynamic):
                return
            self._write_bar(current, per_unit, now, finalize)
        elif self.verbose == 2 and finalize:
            count = self._count(current)
            line = f"{count} - {now - self._start:.0f}s - "
            line += format_time_per_unit(per_unit, self.unit_name) + self._metrics_text()
            self.stream.write(line + "\n")
            self.stream.flush()
        self._last_update = now

    def add(self, n, values=None):
        self.update(self._seen + n, values)

    def _count(self, current):
        if self.target:
            digits = int(math.log10(self.target)) + 1
            return f"%{digits}d/%d" % (current, self.target)
        return "%7d/Unknown" % current

    def _metrics_text(self):
        return "".join(f" - {k}: {format_value(v)}" for k, v in self._values.items())

    def _write_bar(self, current, per_unit, now, finalize):
        color = self._dynamic
        count = self._count(current)
        bar = f"\x1b[1m{count}\x1b[0m " if color else f"{count} "
        if self.target:
            done = int(self.width * min(current / self.target, 1.0))
            if color:
                bar += (f"\x1b[32m{'━' * done}\x1b[0m" if done else "")
                bar += f"\x1b[37m{'━' * (self.width - done)}\x1b[0m"
            else:
                full, empty = _bar_chars(self.stream)
                bar += full * done + empty * (self.width - done)
        if self.target and not finalize:
            when = format_eta(per_unit * (self.target - current))
        else:
            when = f"{now - self._start:.0f}s"
        info = f" \x1b[1m{when}\x1b[0m" if color else f" {when}"
        info += " " + format_time_per_unit(per_unit, self.unit_name) + self._metrics_text()
        plain_width = len(_strip_ansi(bar + info))
        line = bar + info
        if self._dynamic:
            pad = " " * max(self._prev_width - plain_width, 0)
            line = "\r" + line + pad
        if finalize:
            line += "\n"
        self.stream.write(line)
        self.stream.flush()
        self._prev_width = plain_width

    def _time_per_unit(self, current, now):
        if not current:
            return 0.0
        if self._time_after_first is not None and current > 1:
            per = (now - self._time_after_first) / (current - 1)
        else:
            per = (now - self._start) / current
        if current == 1:
            self._time_after_first = now
        return per


class _LogStream:
    """Where bars go when interactive logging is disabled: each finished line becomes one INFO
    record of the `fkeras` logger."""

    def __init__(self):
        self._pending = ""

    def write(self, text):
        import logging

        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            logging.getLogger("fkeras").info(_strip_ansi(line.split("\r")[-1]))

    def flush(self):
        pass

    def isatty(self):
        return False


_LOG_STREAM = _LogStream()


def _bar_chars(stream):
    """'━' and '─' where the stream can encode them, else '=' and '.'."""
    try:
        "━─".encode(getattr(stream, "encoding", None) or "ascii")
        return "━", "─"
    except (UnicodeEncodeError, LookupError):
        return "=", "."


def _strip_ansi(text):
    out, skip = [], False
    for ch in text:
        if ch == "\x1b":
            skip = True
        elif skip:
            skip = ch != "m"
        else:
            out.append(ch)
    return "".join(out)
