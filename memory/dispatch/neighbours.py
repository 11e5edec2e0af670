"""The other processes of this web server (one gunicorn's workers, on one host, sharing its
cores): which principals they served within SPOKE_MEMORY_IN_FLIGHT_WINDOW_S. Shared through one
small file per process in a directory (no round trip per request): each process rewrites its own
at most once a second, and reads the others' at most once a second. The CPU share asks it whether
the host serves another principal too (memory/dispatch/views.py `CpuShare`): a principal's
listing in one worker takes the same cores as another tenant's read in the other."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

STALE_S = 600  # a file not rewritten for this long is a process gone: removed by a reader


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
        self._others: dict[str, float] = {}  # principal → when another process last served it

    def publish(self, seen: Callable[[], dict[str, float]]) -> None:
        """Write this process's principals (`seen()`: principal → the seconds since it last took
        a slot here) with the wall time of that slot, at most once every EVERY_S; a failed write is skipped (the others then see
        this process as serving nobody new, as before the file existed)."""
        at = self._clock()
        with self._lock:
            if at - self._written_at < self.EVERY_S:
                return
            self._written_at = at
        text = "".join(f"{at - ago:.3f} {p}\n" for p, ago in seen().items())
        path = self._dir / f"{self._group}-{self._me}"
        with contextlib.suppress(OSError):
            self._dir.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_text(text)
            os.replace(temporary, path)

    def others(self, principal_id: str, window: float) -> bool:
        """Whether another process of the server served another principal within `window`
        seconds (as of its file's last writing, at most EVERY_S old)."""
        at = self._clock()
        with self._lock:
            due = at - self._read_at >= self.EVERY_S
            if due:
                self._read_at = at
        if due:
            found = self._read(at)
            with self._lock:
                self._others = found
        seen = self._others
        return any(p != principal_id and t >= at - window for p, t in seen.items())

    def _read(self, at: float) -> dict[str, float]:
        found: dict[str, float] = {}
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
                when, _, principal = line.partition(" ")
                try:
                    t = float(when)
                except ValueError:
                    continue
                if principal and t > found.get(principal, float("-inf")):
                    found[principal] = t
        return found
