"""Shared set-up of the benches: a throwaway database (a SQLite file under var/ by default, or a
PostgreSQL database whose name ends in `_bench`, dropped and created anew), Django configured
on it, migrated, and one principal with a root grant per space."""

from __future__ import annotations

import os
from pathlib import Path

from bench import BROKER_URL

ROOT = Path(__file__).resolve().parents[1]


def fresh_database(url: str | None, name: str) -> str:
    if not url:
        path = ROOT / "var" / f"{name}.sqlite3"
        path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return f"sqlite:///{path}"
    if url.startswith("postgres"):
        import psycopg

        base, _, db = url.rpartition("/")
        if not db.endswith("_bench"):
            raise SystemExit(f"refusing to drop {db!r}: a bench database name must end in _bench")
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}"')
            conn.execute(f'CREATE DATABASE "{db}"')
    return url


def django_on(url: str, engine: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["SPOKE_MEMORY_ENGINE"] = engine
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # The broker the bench's workers listen on (bench._live.product_env): without it this process
    # queued its embedding jobs on the filesystem broker and --worker-embed waited forever.
    os.environ.setdefault("CELERY_BROKER_URL", BROKER_URL)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def space_with_admin(space_id: str):
    from memory.models import Principal, Space
    from memory.services.operators import issue_root_grant
    from memory.timeutil import now

    at = now()
    space = Space.objects.create(
        space_id=space_id, display_name=space_id, created_at=at, updated_at=at
    )
    principal = Principal.objects.create(display_name=f"bench {space_id}", kind="service")
    issue_root_grant(space, principal)
    return principal


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    i = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[i]


def public_url(url: str) -> str:
    """The database URL without its password, for printing the command that made a table."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}"))
