"""Personas and helpers shared by the whole suite: an admin with a root grant, a narrow grantee,
an outsider with no grant in the space, and `api()` to call the wire through the real HTTP edge."""

from __future__ import annotations

import functools
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from memory.models import Principal, Space
from memory.wire.validation import catalog, schema_errors
from tests import factories

# Every request the suite sends is judged by both schema validators (memory/wire/validation.py
# request_errors); a disagreement fails the test. Subprocess servers and workers inherit it.
os.environ["SPOKE_MEMORY_SCHEMA_CROSSCHECK"] = "1"
settings.SPOKE_MEMORY_SCHEMA_CROSSCHECK = True
# The suite serves static files from the source folders (no collectstatic run); the production
# path, hashed names from `collectstatic`, is run by tests/test_first_run.py in a real server.
settings.STORAGES = {
    **settings.STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
settings.WHITENOISE_USE_FINDERS = True
settings.STATIC_ROOT = None
# The engine the suite serves is chosen before Django starts (tests/pytest_env.py): the PostgreSQL
# leg on the installed default (hybrid/6), the SQLite leg on engine/2.

from memory.flags import ALL_FLAGS  # noqa: E402  (re-exported for the tests)


@dataclass
class Persona:
    principal: Principal
    token: str

    @property
    def id(self) -> str:
        return self.principal.principal_id


@dataclass
class Answer:
    status: int
    body: dict
    headers: dict

    @property
    def error(self) -> dict:
        return self.body.get("error", {})

    @property
    def code(self) -> str | None:
        return self.body.get("error", {}).get("code")

    @property
    def receipt(self) -> dict:
        return self.body["receipt"]


OPS_PATH = "/v1/ops/"


@functools.cache
def _answer_validators(op: str):
    cat = catalog()
    spec = cat.ops[op]
    return cat.fast_validator(spec.response), spec.response_validator


@functools.cache
def _error_validators():
    cat = catalog()
    envelope = cat.component_validator("ErrorEnvelope")
    return envelope, {code: cat.validator(e["details"]) for code, e in cat.errors.items()}


def check_answer(op: str, answer: Answer) -> None:
    """Every answer of every API test is checked against the contract (Zulip's
    `validate_api_response_openapi`): a success against the op's answer schema, an error against
    the envelope, the code's status and details schema (memory/wire/schemas/errors.json), and
    the codes the op declares (its schema's `errors`, plus those any op may answer). An op that
    answers an undeclared code fails the test that made it answer."""
    cat = catalog()
    spec = cat.ops.get(op)
    if answer.status == 200 and spec is not None:
        fast, reference = _answer_validators(op)
        if not (
            fast.is_valid(answer.body) if fast is not None else reference.is_valid(answer.body)
        ):
            problems = schema_errors(reference, answer.body)
            raise AssertionError(f"{op} answered 200 outside its answer schema: {problems}")
        return
    envelope, details = _error_validators()
    problems = schema_errors(envelope, answer.body)
    assert not problems, f"{op} answered {answer.status} outside the error envelope: {problems}"
    code = answer.code
    assert code in cat.errors, f"{op} answered an error code outside the table: {code}"
    assert cat.errors[code]["status"] == answer.status, (op, code, answer.status)
    problems = schema_errors(details[code], answer.error.get("details", {}))
    assert not problems, f"{op} answered {code} with details outside its schema: {problems}"
    declared = set(cat.every_op) | set(spec.errors if spec is not None else ())
    assert code in declared, (
        f"{op} answered {code}, which its schema does not declare"
        " (add it to the op's `errors` in memory/wire/schemas/ops/ if the protocol allows it)"
    )


class Api:
    def __init__(self) -> None:
        self.client = Client()

    def raw(
        self,
        path: str,
        data: bytes | str | None = None,
        token: str | None = None,
        session: str | None = None,
        method: str = "post",
        content_type: str = "application/json",
    ) -> Answer:
        headers = {}
        if token is not None:
            headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        if session is not None:
            headers["HTTP_SPOKE_SESSION"] = session
        fn = getattr(self.client, method)
        if method in ("get", "delete"):
            response = fn(path, **headers)
        else:
            response = fn(
                path, data=data if data is not None else b"", content_type=content_type, **headers
            )
        body = (
            json.loads(response.content)
            if response.content and response["Content-Type"].startswith("application/json")
            else {}
        )
        answer = Answer(response.status_code, body, dict(response.headers))
        if path.startswith(OPS_PATH):
            check_answer(path[len(OPS_PATH) :], answer)
        return answer

    def __call__(
        self, who: Persona | None, op: str, body: dict | None = None, session: str | None = None
    ) -> Answer:
        return self.raw(
            f"/v1/ops/{op}",
            json.dumps(body if body is not None else {}),
            token=who.token if who else None,
            session=session,
        )

    def note(
        self, who: Persona, text: str, session: str | None = None, placement: dict | None = None
    ) -> Answer:
        """memory.records.create of a note of subject u1 in space s1 (shared unless `placement`)."""
        body = {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": text},
            "placement": placement or {"scope": "shared"},
        }
        return self(who, "memory.records.create", body, session)

    def connect(self, who: Persona, flags: list[str] | None = None) -> str:
        answer = self.raw(
            "/v1/connect", json.dumps({"capabilities": flags or ALL_FLAGS}), token=who.token
        )
        assert answer.status == 200, answer.body
        return answer.body["session"]["session_id"]


# The Citus leg (tests/citus/run.sh, `make test-citus`): the test database, made beforehand on
# the coordinator and every worker with the extension and the workers added, is migrated and
# distributed (`manage.py spoke citus-setup`) once, and kept (Citus does not propagate CREATE
# DATABASE, so pytest-django cannot make it). Tests marked `single_node` are skipped there.
CITUS = os.environ.get("SPOKE_MEMORY_CITUS") == "1"

if CITUS:

    @pytest.fixture(scope="session")
    def django_db_setup(django_test_environment, django_db_blocker):
        import io

        from django.core.management import call_command
        from django.test.utils import setup_databases

        with django_db_blocker.unblock():
            setup_databases(verbosity=0, interactive=False, keepdb=True)
            call_command("spoke", "citus-setup", "--shard-count", "8", stdout=io.StringIO())
        yield


def backend_waits_for_a_lock(pid: int) -> bool:
    """Whether backend `pid` waits for a lock. On the Citus leg a row lock is waited for on
    the worker holding the shard, by a backend working for `pid` (the same global pid), so
    `citus_stat_activity` is read: it sees every node's backends."""
    if CITUS:
        sql = (
            "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM citus_stat_activity"
            " WHERE global_pid = citus_calculate_gpid("
            "(SELECT nodeid FROM pg_dist_node WHERE groupid = 0), %s)"
        )
    else:
        sql = (
            "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity"
            " WHERE pid = %s"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, [pid])
        return bool(cursor.fetchone()[0])


def any_lock_wait() -> bool:
    """Whether any backend of this database waits for a lock (on the Citus leg, on any node)."""
    view = "citus_stat_activity" if CITUS else "pg_stat_activity"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {view} WHERE datname = current_database()"  # noqa: S608 - one of two view names
            " AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def pytest_collection_modifyitems(config, items):
    if not CITUS:
        return
    for item in items:
        mark = item.get_closest_marker("single_node")
        if mark is not None:
            reason = mark.kwargs.get("reason") or (mark.args[0] if mark.args else "single node")
            item.add_marker(pytest.mark.skip(reason=f"not on Citus: {reason}"))


@pytest.fixture(autouse=True)
def _fresh_vector_cache() -> Iterator[None]:
    """The per-process vector cache is keyed on stored state (subject revision, vector
    generation, model): a rolled-back test leaves keys that a later test's fresh rows repeat
    exactly (SQLite hands the same pks out again), and that test would read another's vectors.
    The lexical head's postings cache (PostgreSQL) likewise: a test database made again resets
    its sequences."""
    from memory.selectors import lexical
    from memory.services import hybrid_store

    hybrid_store._cache.clear()
    lexical.clear_cache()
    yield


@pytest.fixture
def api() -> Api:
    return Api()


def make_persona(name: str, kind: str = "service") -> Persona:
    return Persona(*factories.make_principal(name, kind))


make_space = factories.make_space  # re-exported: many tests import it from here


@pytest.fixture
def space(db) -> Space:
    return make_space("s1")


@pytest.fixture
def admin(space) -> Persona:
    return Persona(*factories.make_admin(space, "admin"))


@pytest.fixture
def outsider(db) -> Persona:
    return make_persona("outsider")


@pytest.fixture
def persona_factory(db):
    return make_persona


@pytest.fixture
def grant_to(api, admin, space):
    """Issue a grant from the admin to a new or given persona; returns (persona, grant_id)."""

    def issue(persona: Persona | None = None, **grant) -> tuple[Persona, str]:
        persona = persona or make_persona("grantee")
        body = {"space_id": space.space_id, "grantee_principal_id": persona.id, **grant}
        answer = api(admin, "memory.grants.grant", body)
        assert answer.status == 200, answer.body
        return persona, answer.receipt["refs"][0]["id"]

    return issue


@pytest.fixture
def ensure_subject(api, admin, space):
    def ensure(subject_id: str = "u1", **extra) -> dict:
        answer = api(
            admin,
            "memory.subjects.ensure",
            {"space_id": space.space_id, "subject_id": subject_id, **extra},
        )
        assert answer.status == 200, answer.body
        return answer.receipt

    return ensure


# The headers of a monitoring system's /readyz request (the health token: tests/pytest_env.py).
OPERATOR_HEALTH = {"HTTP_AUTHORIZATION": "Bearer " + os.environ["SPOKE_MEMORY_HEALTH_TOKEN"]}


def free_port() -> int:
    """A TCP port free on the loopback now, for a server a test starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


requires_postgres = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith(("postgres", "postgresql")),
    reason="needs PostgreSQL (set DATABASE_URL=postgres://...)",
)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, one per session for every browser test (tests/reviews/browser/)."""
    from tests.reviews.browser.conftest import launch_browser

    yield from launch_browser()


@contextmanager
def embedding_writer(settings, engine: str) -> Iterator[None]:
    """A hybrid engine set and its embedding writer registered, as the provider registers it
    at start-up: writes queue their vectors; nothing embeds until a drain is asked for."""
    from memory.services import derived, hybrid_store

    settings.SPOKE_MEMORY_ENGINE = engine
    added = hybrid_store.write_embeddings not in derived.WRITERS
    if added:
        derived.WRITERS.append(hybrid_store.write_embeddings)
    try:
        yield
    finally:
        if added:
            derived.WRITERS.remove(hybrid_store.write_embeddings)
