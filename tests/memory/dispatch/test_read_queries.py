"""A read through the whole edge costs a constant, small number of queries: the token, the
caller's coverage (its effective grants joined with their space, one query) and the object.
Recall adds its candidate scan and the hydration of the hits, whatever the subject holds."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def queries(api, who, op, body) -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        answer = api(who, op, body)
    assert answer.status == 200, answer.body
    return [q["sql"] for q in ctx.captured_queries]


@pytest.fixture
def subject_with_records(api, admin, space):
    def make(n: int) -> list[str]:
        api(
            admin,
            "memory.subjects.ensure",
            {"space_id": "s1", "subject_id": "u1", "kind": "acme:user"},
        )
        ids = []
        for i in range(n):
            answer = api.note(admin, f"hello number {i}")
            ids.append(answer.receipt["refs"][-1]["id"])
        return ids

    return make


def test_gets_are_token_coverage_object(api, admin, subject_with_records):
    """records.get: token, coverage, the record with its subject. subjects.get: token, then
    the coverage with the subject joined in (the subject's row is the coverage query's)."""
    record_id = subject_with_records(1)[0]
    for op, body, tables in [
        ("memory.subjects.get", {"space_id": "s1", "subject_id": "u1"}, []),
        (
            "memory.records.get",
            {"space_id": "s1", "record_id": record_id},
            ['"memory_record"', '"memory_subject"'],
        ),
    ]:
        sql = queries(api, admin, op, body)
        assert len(sql) == 2 + len(tables[:1]), (op, sql)
        assert (
            '"memory_apitoken"' in sql[0]
            and '"memory_grant"' in sql[1]
            and '"memory_space"' in sql[1]
        )
        if tables:
            assert all(table in sql[2] for table in tables)
        else:
            assert '"memory_subject"' in sql[1]


def per_request(statements: list[str]) -> list[str]:
    """The statements every recall runs: not the token look-up or the vector load, which the
    process caches (the look-up for a while, the vectors by the subject's generation)."""
    cached = ('SELECT p."principal_id"', "SELECT id, record_id, revision, vector")
    return [q for q in statements if not q.lstrip().startswith(cached)]


def test_recall_query_count_does_not_grow_with_the_subject(api, admin, subject_with_records):
    subject_with_records(2)
    body = {"space_id": "s1", "subject_id": "u1", "query": {"text": "hello number"}}
    few = per_request(queries(api, admin, "memory.recall", body))
    subject_with_records(25)
    many = per_request(queries(api, admin, "memory.recall", body))
    # coverage with the subject in the same query, then the served engine's own statements
    # (hybrid/6 on PostgreSQL: the vector generation, the subject's live ids, the lexical head,
    # the ranked rows; engine/2: the head), then the returned rows
    assert len(few) == len(many) <= 6, many
    assert not any(q.lstrip().startswith('SELECT "memory_subject"') for q in many), many


def test_prepared_token_lookup_returns_the_orm_principal(admin):
    from memory.dispatch.auth import principal_for_header
    from memory.models import ApiToken, Principal

    admin.principal.extensions = {"team": "ops", "n": [1, 2]}
    admin.principal.save()
    fast = principal_for_header(f"Bearer {admin.token}")
    orm = Principal.objects.get(pk=admin.id)
    assert {f.attname: getattr(fast, f.attname) for f in Principal._meta.concrete_fields} == {
        f.attname: getattr(orm, f.attname) for f in Principal._meta.concrete_fields
    }
    ApiToken.objects.filter(principal_id=admin.id).update(revoked_at=orm.created_at)
    with pytest.raises(Exception) as err:
        principal_for_header(f"Bearer {admin.token}")
    assert err.value.code == "unauthenticated"
