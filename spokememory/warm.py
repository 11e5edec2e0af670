"""Per-process setup a web worker does as it loads (wsgi.py, and the bench server's app factory),
before it serves: the caches every request relies on, and the bound on its SQL."""

import os
from typing import Any


def warm() -> None:
    """The schema catalog (its compiled validators) and the tokenizer's Unicode pattern (~0.4 s
    of CPU). Built lazily instead, every thread of a gthread worker builds them at once on its
    first request (a cache miss does not wait for another thread's build), at that request's
    expense (docs/performance.md#mixed-load). Then numpy's parts recall uses (`warm_ranking()`),
    the encoder (`warm_encoder()`), `bound_statements()`, and `freeze_loaded()` last."""
    from memory.engine import lexicon
    from memory.wire.validation import catalog

    catalog()
    lexicon.tokens("warm")
    warm_ranking()
    warm_encoder()
    bound_statements()
    freeze_loaded()


def freeze_loaded() -> None:
    """Everything the process has made by now (Django, the catalog, the encoder: hundreds of
    thousands of objects that live as long as it) leaves the cyclic collector's view
    (`gc.freeze`): a full collection then walks only what requests made since. A recall that
    reads a subject's vectors makes tens of thousands of objects at once, and each collection
    it set off walked the whole process (issue 49: 40–100 ms of the first recall)."""
    import gc

    gc.freeze()


def warm_ranking() -> None:
    """numpy and the parts of it the lexical head uses, imported now rather than by the first
    recall: `numpy.ma`, which `numpy.unique` imports on its first call (13 ms), and numpy itself
    for an engine without an encoder (issue 49, the first recall after an import)."""
    import numpy  # noqa: F401
    import numpy.ma  # noqa: F401 - imported by numpy.unique's first call otherwise


def warm_encoder() -> None:
    """The configured hybrid engine's local encoder (the ONNX or torch session and its
    tokenizer; ~1 s, more when the int8 form is first exported) made as the worker loads, before
    it accepts a request (gunicorn loads the app in each worker before serving), not by the
    first caller's recall (issue 49). Nothing for a lexical engine or an embeddings server; a
    model that cannot load is left to recall, which answers lexically then."""
    import logging

    from memory.embedding import embed
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


def bound_statements() -> None:
    """Every PostgreSQL connection this web process opens cuts a statement at
    SPOKE_MEMORY_STATEMENT_TIMEOUT_MS and ends a transaction left idle that long
    (statement_timeout, idle_in_transaction_session_timeout): a request's SQL is bounded where it
    runs. Web processes only: a worker's jobs (an activation, an export) may run longer. A
    statement cut short is answered 503 unavailable (memory/outage.py), never a 500."""
    from django.db.backends.signals import connection_created

    connection_created.connect(set_timeouts, dispatch_uid="spoke-memory-statement-timeout")


def set_timeouts(sender: Any, connection: Any, **kwargs: Any) -> None:
    from django.conf import settings

    ms = settings.SPOKE_MEMORY_STATEMENT_TIMEOUT_MS
    if connection.vendor != "postgresql" or ms <= 0:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('statement_timeout', %s, false),"
            " set_config('idle_in_transaction_session_timeout', %s, false)",
            [f"{int(ms)}ms", f"{int(ms)}ms"],
        )
