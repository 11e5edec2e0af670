"""Planner statistics are the product's job after its own bulk writes (issue 49): import
activation analyzes the tables it filled before its receipt commits, the embedding drain the
vectors it stored (memory.services.table_stats). On SQLite nothing is analyzed and the same
paths work."""

import pytest
from django.db import connection

from memory.models import PendingEmbedding, Record, RecordEmbedding, RecordRevision, RecordTerm
from memory.services import derived, hybrid_store, table_stats
from tests.conftest import embedding_writer, requires_postgres
from tests.memory.ops.test_transfer import export, fresh_target, import_and_activate

from .conftest import make_record, subject_row

pytestmark = pytest.mark.django_db
# On Citus the coordinator's pg_class holds no rows of a distributed table (each shard has its
# own statistics on its worker): what these tests read, and what table_stats decides from
# (docs/scaling.md, "What remains a plan").
COORDINATOR_COUNTS = pytest.mark.single_node(
    reason="the planner's row counts of a distributed table are the shards', on the workers"
)

N = 70  # past autovacuum's constant threshold (50 rows) on every table activation fills


def believed(model) -> float:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
        )
        return float(cur.fetchone()[0])


def tables_of(seen: list[str], command: str) -> list[str]:
    """The tables the captured `ANALYZE …` / `VACUUM …` statements named, in order."""
    return [sql.split()[-1].strip('"') for sql in seen if sql.startswith(command)]


def analyzed(seen: list[str]) -> list[str]:
    return tables_of(seen, "ANALYZE")


def activate_capturing(api, admin, sess, run_job_now) -> list[str]:
    """Export s1, import it into a fresh s2 and activate it; the statements the import ran."""
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    seen: list[str] = []
    with connection.execute_wrapper(capture(seen)):
        import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    return seen


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


@pytest.fixture
def source(space, settings):
    with embedding_writer(settings, "hybrid/6"):
        u1 = subject_row("s1", "u1")
        for i in range(N):
            make_record(u1, f"the garden note number {i} about tea and rain")
        yield


def capture(seen: list[str]):
    def wrapper(execute, sql, params, many, context):
        seen.append(sql.strip())
        return execute(sql, params, many, context)

    return wrapper


@COORDINATOR_COUNTS
@requires_postgres
def test_activation_analyzes_the_tables_it_filled_before_its_receipt(
    api, admin, sess, source, run_job_now
):
    tables = analyzed(activate_capturing(api, admin, sess, run_job_now))
    for model in (Record, RecordRevision, RecordTerm, PendingEmbedding):
        assert model._meta.db_table in tables, tables
        # ANALYZE inside the activation's transaction counted its own rows as live: the planner
        # now believes what the receipt commits (every row, the tables being this small).
        assert believed(model) == model.objects.count() > 0
    assert tables == sorted(tables)  # always in name order: concurrent activations cannot deadlock


@requires_postgres
def test_a_small_write_analyzes_nothing(space):
    assert table_stats.analyze_grown({Record: table_stats.THRESHOLD - 1}) == []
    assert table_stats.analyze_grown({Record: 0, RecordTerm: 0}) == []


@COORDINATOR_COUNTS
@requires_postgres
def test_a_write_small_beside_what_the_table_holds_analyzes_nothing(space):
    u1 = subject_row("s1", "u1")
    for i in range(N):
        make_record(u1, f"note {i}")
    table_stats.analyze([Record])
    held = believed(Record)
    assert held >= N
    # autovacuum's rule: 50 rows + 10 % of what the planner believes the table holds
    assert table_stats.analyze_grown({Record: int(50 + 0.1 * held) - 1}) == []
    assert table_stats.analyze_grown({Record: int(50 + 0.1 * held) + 1}) == ["memory_record"]


@COORDINATOR_COUNTS
@requires_postgres
def test_the_drain_of_a_big_backlog_analyzes_the_vectors(space, settings):
    with embedding_writer(settings, "hybrid/6"):
        u1 = subject_row("s1", "u1")
        derived.content_written(
            [make_record(u1, f"a remembered fact number {i}") for i in range(N)]
        )
        seen: list[str] = []
        with connection.execute_wrapper(capture(seen)):
            done = hybrid_store.drain_backlog()
    assert done == N
    assert "memory_recordembedding" in analyzed(seen)
    assert believed(RecordEmbedding) == RecordEmbedding.objects.count() == N


def test_nothing_is_analyzed_off_postgresql(space):
    if connection.vendor == "postgresql":
        pytest.skip("SQLite and other databases only")
    assert table_stats.analyze([Record, RecordTerm]) == []
    assert table_stats.analyze_grown({Record: 10_000}) == []
    assert table_stats.believed_rows([Record]) == {}


def test_activation_off_postgresql_still_commits(api, admin, sess, source, run_job_now):
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    assert Record.objects.filter(space_id="s2").count() == N


def all_visible_pages(model) -> int:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT relallvisible FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
        )
        return int(cur.fetchone()[0])


@pytest.mark.single_node(
    reason="relallvisible of a distributed table is the shards', on the workers"
)
@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_activation_vacuums_what_it_filled_once_its_receipt_commits(
    api, admin, sess, source, run_job_now
):
    # A table a bulk write just filled has no page marked all-visible until a VACUUM, so recall's
    # index-only scan of the term rows fetches the heap for every posting (issue 49).
    vacuumed = tables_of(activate_capturing(api, admin, sess, run_job_now), "VACUUM")
    assert "memory_recordterm" in vacuumed and "memory_record" in vacuumed, vacuumed
    assert all_visible_pages(RecordTerm) > 0
    assert Record.objects.filter(space_id="s2").count() == N


@requires_postgres
def test_no_vacuum_runs_inside_an_outer_transaction(space):
    # The suite's own transaction stands for a caller's: on_commit never fires inside it, and a
    # VACUUM there would be an error ("cannot run inside a transaction block").
    seen: list[str] = []
    with connection.execute_wrapper(capture(seen)):
        table_stats.vacuum_after_commit(["memory_recordterm"])
    assert not tables_of(seen, "VACUUM")
