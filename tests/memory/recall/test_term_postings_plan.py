"""engine/2's ranking statement (memory.selectors.lexical) can read the query terms' postings
from the covering index `record_term_lookup_space` alone. The statement names the space as every
statement does (docs/scaling.md); with the index on (subject, term) PostgreSQL had to visit every
posting's heap row to check it (~2,000 heap pages for a LoCoMo question at 20,000 records)."""

import re

import pytest
from django.db import connection

from memory.engine import lexicon
from memory.models import Subject
from memory.selectors import lexical
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db


@requires_postgres
def test_the_postings_index_covers_what_the_ranking_reads(make_record):
    make_record("the blue garden by the sea")
    subject = Subject.objects.get(subject_id="u1")
    terms = lexicon.query_terms("blue garden")
    seen: list[tuple[str, tuple]] = []

    def capture(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        lexical.head(subject.space_id, subject.pk, terms, None, 10)
    sql, _ = seen[0]
    read = set(re.findall(r"\bt\.(\w+)", sql))
    assert {"space_id", "subject_id", "term", "record_id", "tf"} <= read
    # Which index a planner picks over a test database's few rows is its choice (and an
    # index-only scan needs a VACUUM, which a test transaction cannot run); what makes the
    # index-only read possible is an index on the ranges' keys that holds every column read.
    with connection.cursor() as cur:
        cur.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
            "WHERE c.relname = 'record_term_lookup_space'"
        )
        covered = {row[0] for row in cur.fetchall()}
    assert read <= covered, read - covered
