"""The other processes of this web server (one gunicorn's workers, on one host, sharing its
cores): which principals they served within SPOKE_MEMORY_IN_FLIGHT_WINDOW_S, and each one's
weight there (how many requests it holds at once, `InFlight.weights`). Shared through one
small file per process in a directory (no round trip per request): each process rewrites its own
at most once a second, and reads the others' at most once a second. The CPU share asks it whether
the host serves another principal too (memory/dispatch/views.py `CpuShare`): a principal's
listing in one worker takes the same cores as another tenant's read in the other."""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

STALE_S = 600  # a file not rewritten for this long is a process gone: removed by a reader

# What a process says of a principal: a time (when it was last served, or the seconds since), its
# weight, whether it had two requests in flight at once, the spaces it was answered in.
Seen = tuple[float, float, bool, frozenset[str]]


class Neighbours:
    EVERY_S = 1.0  # how often a process writes its own file and reads the others'

    def __init__(
        self, directory: Path, group: str, me: str, clock: Callable[[], float] = time.time
    ) -> None:
        self._dir = directory
        self._group = group  # the server's processes share it (gunicorn's master's pid)
        self._me = me
        self._clock = clock
        self._lock = threading.Lock()
        self._written_at = float("-inf")
        self._read_at = float("-inf")
        # principal → when another process last served it, its weight there (summed), whether
        # it had two requests in flight at once in one of them within the window, and the
        # spaces it was answered in there
        self._others: dict[str, Seen] = {}

    def publish(self, seen: Callable[[], dict[str, Seen]]) -> None:
        """Write this process's principals (`seen()`: principal → the seconds since it last took
        a slot here, its weight here, whether it held two at once, and the spaces it was
        answered in, `InFlight.weights`) with the wall time of that slot, at most once every
        EVERY_S; a failed write is skipped (the others then see this process as serving nobody
        new, as before the file existed). A line: `when weight parallel spaces principal`, the
        spaces comma-separated or `-` (space and principal ids hold neither a space nor a
        comma); a line of an earlier release has no spaces field."""
        at = self._clock()
        with self._lock:
            if at - self._written_at < self.EVERY_S:
                return
            self._written_at = at
        text = "".join(
            f"{at - ago:.3f} {w:.3f} {int(par)} {','.join(sorted(sp)) or '-'} {p}\n"
            for p, (ago, w, par, sp) in seen().items()
        )
        path = self._dir / f"{self._group}-{self._me}"
        with contextlib.suppress(OSError):
            self._dir.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_text(text)
            os.replace(temporary, path)

    def others(
        self, principal_id: str, window: float, spaces: frozenset[str] = frozenset()
    ) -> bool:
        """Whether another process of the server served another tenant's principal (answered
        in none of `spaces`, the spaces this principal was answered in) within `window` seconds
        (as of its file's last writing, at most EVERY_S old)."""
        at = self._clock()
        seen = self._current(at)
        return any(
            p != principal_id and t >= at - window and not spaces & theirs
            for p, (t, _, _, theirs) in seen.items()
        )

    def weights(self, window: float) -> dict[str, Seen]:
        """The weight of each principal the other processes served within `window` seconds,
        summed over them, each fading over the window from when that process last served it;
        the seconds since one of them last served it; whether it had two requests in flight at
        once in one of them; the spaces it was answered in there."""
        at = self._clock()
        return {
            p: (w * math.exp(-max(0.0, at - t) / max(1.0, window)), max(0.0, at - t), par, sp)
            for p, (t, w, par, sp) in self._current(at).items()
            if t >= at - window
        }

    def _current(self, at: float) -> dict[str, Seen]:
        """The others' files as last read, read again when that is EVERY_S old."""
        with self._lock:
            due = at - self._read_at >= self.EVERY_S
            if due:
                self._read_at = at
        if due:
            found = self._read(at)
            with self._lock:
                self._others = found
        return self._others

    def _read(self, at: float) -> dict[str, Seen]:
        found: dict[str, Seen] = {}
        try:
            paths = list(self._dir.iterdir())
        except OSError:
            return found
        mine = f"{self._group}-{self._me}"
        for path in paths:
            name = path.name
            if name == mine or name.startswith("."):
                continue
            try:
                if path.stat().st_mtime < at - STALE_S:  # a process gone (or a server's)
                    path.unlink()
                    continue
                if not name.startswith(f"{self._group}-"):
                    continue  # another server's
                text = path.read_text()
            except OSError:
                continue
            for line in text.splitlines():
                fields = line.split(" ")
                if len(fields) == 4:  # an earlier release's line: no spaces
                    fields.insert(3, "-")
                if len(fields) != 5:
                    continue
                when, weight, parallel, named, principal = fields
                try:
                    t, w = float(when), float(weight)
                except ValueError:
                    continue
                spaces = frozenset() if named == "-" else frozenset(named.split(","))
                last, total, par, sp = found.get(
                    principal, (float("-inf"), 0.0, False, frozenset())
                )
                found[principal] = (max(t, last), total + w, par or parallel == "1", sp | spaces)
        return found
