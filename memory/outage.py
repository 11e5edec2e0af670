"""The database is unreachable: a wire answer for it (docs/protocol.md#errors has none; docs/decisions/index.md
"Database unavailable"). `503 unavailable` with `Retry-After`, lower case like every
dispatch-layer code: it is about the provider's plumbing, not about the request.

Only PostgreSQL connection loss counts: errors without a SQLSTATE (connect refused, the server
closed the connection, using a connection already closed), SQLSTATE class 08 (connection
exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now: a server
stopping or starting), and a statement or idle transaction cut at the web process's bound
(57014, 25P03). A deadlock or serialization failure left on a mutation's last attempt
answers the same `503 unavailable` (`contended`): it is rolled back and changed nothing.
Everything else, including SQLite errors, stays `internal_error`: in this provider those are
bugs."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

from memory.wire.errors import Unavailable, WireError

RETRY_AFTER_S = 1
SHUTDOWN_STATES = {"57P01", "57P02", "57P03"}
# A statement cut at SPOKE_MEMORY_STATEMENT_TIMEOUT_MS (57014) or a transaction ended after idling
# that long (25P03): the request's work was bounded where it ran (spokememory/warm.py).
CUT_SHORT_STATES = {"57014", "25P03"}


def is_outage(exc: BaseException) -> bool:
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    cause = exc.__cause__
    try:
        import psycopg
    except ImportError:  # no PostgreSQL driver: no PostgreSQL outage
        return False
    if not isinstance(cause, psycopg.Error):
        return False
    state = cause.sqlstate
    return (
        state is None
        or state.startswith("08")
        or state in SHUTDOWN_STATES
        or state in CUT_SHORT_STATES
    )


def contended() -> WireError:
    """A mutation that could not be ordered among the space's concurrent writers on its last
    attempt (a deadlock or serialization failure PostgreSQL resolved against it, or gates that
    moved on every attempt): it was rolled back, nothing changed and no key was consumed, so a
    retry, with the same key or without, executes once (docs/decisions/index.md "Database
    unavailable")."""
    err = Unavailable(
        "The space is too busy with concurrent changes to take this one now; nothing was "
        "changed. Retry later."
    )
    err.headers["Retry-After"] = str(RETRY_AFTER_S)
    return err


def unavailable(in_doubt: bool = False) -> WireError:
    """`in_doubt`: the connection went away while COMMIT was in flight, so the provider cannot
    tell whether the mutation took; `details.outcome: "unknown"` says so. A retry with the same
    idempotency key resolves it either way (the original receipt, or a first execution)."""
    if in_doubt:
        err = Unavailable(
            "The database became unreachable while the change was being committed; "
            "retry with the same idempotency key to learn its outcome.",
            outcome="unknown",
        )
    else:
        err = Unavailable("The database is unreachable; retry later.")
    err.headers["Retry-After"] = str(RETRY_AFTER_S)
    return err
