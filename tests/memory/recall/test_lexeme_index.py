"""engine/1's GIN index follows the configured engine (memory.services.recall_engines.
lexeme_index): `migrate` builds it when engine/1 or hybrid/1 is configured and drops it
otherwise. That the answers are the same without it: test_golden's
`test_engine_1_and_hybrid_1_answer_the_same_without_their_index`; that an import round trip and
a fault mid-activation behave the same: the `lexeme_index` fixture on those tests."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from memory.services.recall_engines import lexeme_index
from tests.conftest import requires_postgres

pytestmark = [requires_postgres]


def migrate() -> str:
    out = StringIO()
    call_command("migrate", verbosity=1, interactive=False, stdout=out)
    return out.getvalue()


def indexdef() -> str | None:
    with connection.cursor() as cur:
        cur.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [lexeme_index.NAME])
        row = cur.fetchone()
    return row[0] if row else None


@pytest.mark.django_db(transaction=True)
def test_migrate_drops_the_index_for_engines_that_do_not_read_it_and_builds_it_back(settings):
    """Outside a transaction, as a deployment runs it: CONCURRENTLY, so records stay writable."""
    assert lexeme_index.state() == "valid"  # the suite serves engine/1
    try:
        for engine in ("engine/2", "hybrid/2", "hybrid/3"):
            settings.SPOKE_MEMORY_ENGINE = engine
            said = migrate()
            assert lexeme_index.state() == "absent", engine
            assert said.count(lexeme_index.NAME) == (1 if engine == "engine/2" else 0)
        for engine in ("hybrid/1", "engine/1"):
            settings.SPOKE_MEMORY_ENGINE = engine
            said = migrate()
            assert lexeme_index.state() == "valid", engine
            assert "USING gin (spoke_recall_lexemes(text))" in (indexdef() or "")
            assert said.count(lexeme_index.NAME) == (1 if engine == "hybrid/1" else 0)
    finally:
        settings.SPOKE_MEMORY_ENGINE = "engine/1"
        lexeme_index.reconcile()
        assert lexeme_index.state() == "valid"


@pytest.mark.django_db
def test_an_invalid_index_left_by_a_failed_build_is_rebuilt(settings):
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [lexeme_index.NAME],
        )
    assert lexeme_index.state() == "invalid"
    assert lexeme_index.reconcile() == "rebuilt"
    assert lexeme_index.state() == "valid"
    assert lexeme_index.reconcile() is None


@pytest.mark.django_db
def test_a_flush_leaves_the_index_alone(settings):
    """The suite's transactional tests flush the database and Django sends post_migrate for it;
    the schema did not change, so nothing is built or dropped then."""
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    lexeme_index.after_migrate(sender=None, using="default", verbosity=0)
    assert lexeme_index.state() == "valid"
    lexeme_index.after_migrate(sender=None, using="default", verbosity=0, plan=[])
    assert lexeme_index.state() == "absent"


@pytest.mark.single_node(
    reason="plays `migrate memory 0001` (drops the index and the distributed function in one"
    " transaction); migrations are replayed on one node"
)
@pytest.mark.django_db
def test_a_database_migrated_back_before_the_function_is_left_without_an_index(settings):
    """`migrate memory 0001` unapplies 0002, which drops the function and the index: the
    reconciliation after it then has nothing to build (no error under engine/1)."""
    with connection.cursor() as cur:
        cur.execute(f"DROP INDEX {lexeme_index.NAME}")
        cur.execute("DROP FUNCTION spoke_recall_lexemes(text)")
    assert lexeme_index.reconcile() is None
    assert lexeme_index.state() == "absent"
