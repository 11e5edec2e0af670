"""Server-made identifiers (docs/protocol.md#identifiers): `<prefix>_<ULID>`."""

from ulid import ULID

PREFIXES = {
    "grant": "grt",
    "record": "rec",
    "candidate": "cnd",
    "reflection": "rfl",
    "receipt": "rct",
    "export": "exp",
    "import": "imp",
    "session": "ses",
    "principal": "prn",
}


def new_id(kind: str) -> str:
    return f"{PREFIXES[kind]}_{ULID()}"


# Named callables for model field defaults (migrations cannot serialize lambdas).
def new_principal_id() -> str:
    return new_id("principal")


def new_session_id() -> str:
    return new_id("session")


def new_grant_id() -> str:
    return new_id("grant")


def new_receipt_id() -> str:
    return new_id("receipt")


def new_export_id() -> str:
    return new_id("export")


def new_import_id() -> str:
    return new_id("import")
