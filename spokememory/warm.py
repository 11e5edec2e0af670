"""Per-process caches every request relies on, built once as a web worker loads (wsgi.py, and
the bench server's app factory), before it serves."""


def warm() -> None:
    """The schema catalog (its compiled validators) and the tokenizer's Unicode pattern (~0.4 s
    of CPU). Built lazily instead, every thread of a gthread worker builds them at once on its
    first request (a cache miss does not wait for another thread's build), at that request's
    expense (docs/performance.md "Mixed load")."""
    from memory.engine import lexicon
    from memory.wire.validation import catalog

    catalog()
    lexicon.tokens("warm")
