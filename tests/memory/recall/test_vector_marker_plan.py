"""The hybrid engines check a subject's stored vectors on every recall
(`memory.selectors.recall.vector_marker`: the subject's vector generation, which every store and
erasure of its vectors moves). The statement names the space as every statement does
(docs/scaling.md); PostgreSQL must answer it by one probe of the generation's unique index, never
by reading the subject's vectors (counting them cost 1.8 ms of each recall at 20,000 vectors)."""

import pytest
from django.db import connection

from memory.models import Subject
from memory.selectors.recall import vector_marker
from tests.conftest import CITUS, requires_postgres

pytestmark = pytest.mark.django_db


@requires_postgres
def test_the_subject_vector_check_is_one_probe_of_the_generation_index(make_record):
    make_record("a record of the subject")
    subject = Subject.objects.get(subject_id="u1")
    seen: list[tuple[str, tuple]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        assert vector_marker(subject) == 0
    ((sql, params),) = seen
    assert "space_id" in sql
    with connection.cursor() as cur:
        # Whatever the statistics of a test database, only an index path may be chosen: it must
        # be the generation's own index, and the vectors' table is not read at all.
        if CITUS:  # the worker plans the shard's statement: the settings must reach it
            cur.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("SET LOCAL enable_bitmapscan = off")
        cur.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cur.fetchall())
    assert "memory_recordembedding" not in plan, plan
    if CITUS:
        # One shard's task. A shard's primary key is (space_id, id) since the composite keys
        # (migration 0022), so on a shard with a handful of rows the planner may price it level
        # with the (subject, space) index and pick either (seen in one Citus run of two); with a
        # space's real row count the unique index is the cheaper. Either is an index probe of
        # this table in this space; the plain-PostgreSQL leg holds the strict check.
        assert "Task Count: 1" in plan, plan
        assert "vector_generation_subject" in plan or "memory_vectorgeneration_pkey" in plan, plan
    else:
        assert "vector_generation_subject" in plan, plan
