"""The hybrid engines check a subject's stored vectors on every recall
(`memory.selectors.recall.vector_marker`: their count and newest id). The statement names the
space as every statement does (docs/scaling.md); PostgreSQL must answer it from an index alone,
never by reading the vectors' rows (at 20,000 vectors that read cost ~15 ms of each recall)."""

import pytest
from django.db import connection

from memory.models import Subject
from memory.selectors.recall import vector_marker
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db


@requires_postgres
def test_the_subject_vector_check_is_index_only(make_record):
    make_record("a record of the subject")
    subject = Subject.objects.get(subject_id="u1")
    seen: list[tuple[str, tuple]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        assert vector_marker(subject) == (0, 0)
    ((sql, params),) = seen
    with connection.cursor() as cur:
        # Whatever the statistics of a test database, only an index path may be chosen: it must
        # be one that never visits the table.
        cur.execute("SET enable_seqscan = off")
        cur.execute("SET enable_bitmapscan = off")
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
        cur.execute("RESET enable_seqscan")
        cur.execute("RESET enable_bitmapscan")
    assert "Index Only Scan" in plan, plan
    assert "memory_recordembedding" in plan, plan
