"""After a write to a subject the vector cache compares its live records' (pk, revision) with
what it holds (`memory.selectors.recall.live_revision_numbers`): PostgreSQL reads them from the
index `record_live_revisions` alone and hands them back packed (12 bytes a record), SQLite as
rows. Either way the answer is exactly the ORM's."""

import pytest
from django.db import connection, transaction

from memory.models import Record, Subject
from memory.selectors.recall import live_revision_numbers
from tests.conftest import CITUS, requires_postgres

pytestmark = pytest.mark.django_db


def _orm(subject: Subject) -> dict[int, int]:
    rows = Record.objects.filter(subject=subject, deleted_at__isnull=True)
    return dict(rows.values_list("pk", "revision"))


def test_the_live_revisions_are_the_orms_wide_pks_and_revisions_whole(make_record, ensure_subject):
    ensure_subject("u9")
    assert live_revision_numbers(Subject.objects.get(subject_id="u9")) == {}
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)",
                [Record._meta.db_table, 2**40 + 7],
            )
    made = [make_record(f"note {i}") for i in range(5)]
    make_record("gone", deleted=True)
    make_record("elsewhere", subject_id="u2")
    Record.objects.filter(pk=made[1].pk).update(revision=70_000)
    subject = Subject.objects.get(subject_id="u1")
    got = live_revision_numbers(subject)
    assert got == _orm(subject)
    assert len(got) == 5 and got[made[1].pk] == 70_000
    assert connection.vendor != "postgresql" or min(got) > 2**40


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_the_live_revisions_come_from_their_index_alone(make_record):
    """With a subject of some thousands of records as an import leaves them (its activation
    runs ANALYZE, then VACUUM once it has committed: memory.services.table_stats): on a handful
    of rows, or with no page known all-visible, any index of the subject costs the same."""
    first = make_record("a record of the subject")
    subject = Subject.objects.get(subject_id="u1")
    fields = {
        f.attname: getattr(first, f.attname)
        for f in Record._meta.concrete_fields
        if f.attname not in ("id", "record_id")
    }
    Record.objects.bulk_create(
        [Record(**fields, record_id=f"rec_bulk_{i}") for i in range(3000)], batch_size=1000
    )
    with connection.cursor() as cur:
        cur.execute(f"VACUUM ANALYZE {Record._meta.db_table}")
    seen: list[tuple[str, tuple]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        live_revision_numbers(subject)
    ((sql, params),) = seen
    assert "space_id" in sql
    with transaction.atomic(), connection.cursor() as cur:  # SET LOCAL needs a transaction
        if CITUS:
            cur.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("SET LOCAL enable_bitmapscan = off")
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
    assert "record_live_revisions" in plan, plan
    assert "Index Only Scan" in plan, plan
