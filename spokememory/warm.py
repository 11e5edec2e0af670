"""Per-process setup a web worker does as it loads (wsgi.py, and the bench server's app factory),
before it serves: the caches every request relies on, and how often its threads take turns."""

import os
import sys

# Python's own default is 5 ms (docs/reliability.md "What another tenant's latency is made of").
SWITCH_INTERVAL_MS = 0.5


def warm() -> None:
    """The schema catalog (its compiled validators) and the tokenizer's Unicode pattern (~0.4 s
    of CPU). Built lazily instead, every thread of a gthread worker builds them at once on its
    first request (a cache miss does not wait for another thread's build), at that request's
    expense (docs/performance.md "Mixed load"). Then `switch_threads()`."""
    from memory.engine import lexicon
    from memory.wire.validation import catalog

    catalog()
    lexicon.tokens("warm")
    warm_encoder()
    switch_threads()
    join_neighbours()


def warm_encoder() -> None:
    """The configured hybrid engine's local encoder (the ONNX or torch session and its
    tokenizer; ~1 s, more when the int8 form is first exported) made as the worker loads, before
    it accepts a request (gunicorn loads the app in each worker before serving), not by the
    first caller's recall (issue 49). Nothing for a lexical engine or an embeddings server; a
    model that cannot load is left to recall, which answers lexically then."""
    import logging

    from memory.engine import embed
    from memory.services import hybrid_store

    log = logging.getLogger("memory.embeddings")
    if not hybrid_store.enabled() or embed.config().url:
        return
    try:
        embed.embed(["warm"])
    except Exception as err:  # noqa: BLE001 - a worker still starts; recall says what is wrong
        log.warning("the encoder could not be made at start (%s)", type(err).__name__)
        return
    log.info("encoder %s ready in worker %d", embed.identity().name, os.getpid())


def join_neighbours() -> None:
    """Tell this web process's in-flight count where the server's other processes say whom they
    serve (memory/dispatch/neighbours.py): one directory under the var dir, the files of one
    server named by its master's pid (gunicorn forks its workers, then they load this)."""
    from django.conf import settings

    from memory.dispatch.neighbours import Neighbours
    from memory.dispatch.views import IN_FLIGHT

    IN_FLIGHT.neighbours = Neighbours(
        settings.VAR_DIR / "run" / "served", group=str(os.getppid()), me=str(os.getpid())
    )


def switch_threads() -> None:
    """The GIL's switch interval: how long a thread that wants the interpreter waits before the
    thread holding it is made to let go. Every request of a gthread worker gives up the GIL at
    each statement, cache call and socket read, and must take it back after; while another
    thread of the process runs Python (another tenant's listing, a refused body being drained),
    each taking-back waits up to the interval. Python's 5 ms made one tenant's 2 ms read take
    20-40 ms beside another tenant's load; SPOKE_MEMORY_SWITCH_INTERVAL_MS (0.5) bounds each wait
    to that. 0 or less keeps Python's own."""
    ms = float(os.environ.get("SPOKE_MEMORY_SWITCH_INTERVAL_MS", SWITCH_INTERVAL_MS))
    if ms > 0:
        sys.setswitchinterval(ms / 1000)
