"""Issue 26 item 8: a principal with 2,000 self-issued grants took 1.1-1.5 s per records.list
and slowed other tenants, because each grant was an OR in every query it made. A principal now
holds at most `limits.max_grants_per_principal` effective grants in a space (memory.grants.grant
answers 422 INVALID_INPUT `too_many_grants`; an operator's root grant is refused likewise), and
the coverage filter merges grants, so its size does not grow with their count. The load itself
is measured in bench/grant_flood.py (docs/reliability.md)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import Grant
from tests.conftest import make_persona
from tests.hostile.conftest import census

pytestmark = pytest.mark.django_db

LIMIT = 8


@pytest.fixture
def small_limit(settings):
    settings.SPOKE_MEMORY_LIMITS = {
        **settings.SPOKE_MEMORY_LIMITS,
        "max_grants_per_principal": LIMIT,
    }


def grant(api, who, grantee_id: str, **extra):
    body = {"space_id": "s1", "grantee_principal_id": grantee_id, "capabilities": ["records_read"]}
    return api(who, "memory.grants.grant", {**body, **extra})


def test_describe_publishes_max_grants_per_principal(api, admin):
    limits = api(admin, "memory.describe", {}).body["provider"]["limits"]
    assert limits["max_grants_per_principal"] == 64


def test_a_grant_past_the_bound_is_refused_and_stores_nothing(api, admin, small_limit):
    grantee = make_persona("grantee")
    for i in range(LIMIT):
        assert grant(api, admin, grantee.id, subject_ids=[f"u{i}"]).status == 200
    before = census()
    answer = grant(api, admin, grantee.id, subject_ids=["u-last"], idempotency_key="k1")
    assert (answer.status, answer.code) == (422, "INVALID_INPUT"), answer.body
    details = answer.error["details"]
    assert details["reason"] == "too_many_grants"
    assert details["field"] == "grantee_principal_id"
    assert (details["limit"], details["held"]) == (LIMIT, LIMIT)
    assert census() == before
    # a revoked grant makes room; the refused key was not consumed
    first = Grant.objects.filter(grantee=grantee.principal).order_by("created_at").first()
    assert first is not None
    revoked = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": first.grant_id})
    assert revoked.status == 200, revoked.body
    answer = grant(api, admin, grantee.id, subject_ids=["u-last"], idempotency_key="k1")
    assert answer.status == 200, answer.body


def test_self_issued_grants_are_bounded_too(api, admin, small_limit):
    """The finding: a principal issuing grants to itself from its own grants_issue grant."""
    issuer = make_persona("issuer")
    assert grant(api, admin, issuer.id, capabilities=["grants_issue", "records_read"]).status == 200
    codes = [grant(api, issuer, issuer.id).code for _ in range(LIMIT)]
    assert codes == [None] * (LIMIT - 1) + ["INVALID_INPUT"]
    assert Grant.objects.filter(grantee=issuer.principal, state=Grant.ACTIVE).count() == LIMIT


def test_an_operators_root_grant_past_the_bound_is_refused(api, admin, space, small_limit):
    for _ in range(LIMIT - 1):  # the admin holds its root grant already
        assert grant(api, admin, admin.id).status == 200
    before = census()
    with pytest.raises(CommandError, match="max_grants_per_principal"):
        call_command("spoke", "root-grant", "s1", admin.id, stdout=StringIO())
    assert census() == before


def _list_sql(api, who) -> str:
    with CaptureQueriesContext(connection) as queries:
        answer = api(who, "memory.records.list", {"space_id": "s1"})
    assert answer.status == 200, answer.body
    (sql,) = [q["sql"] for q in queries.captured_queries if "placement_scope" in q["sql"]][:1]
    return sql


def test_the_coverage_filter_does_not_grow_with_the_grant_count(api, admin, ensure_subject):
    """Many grants of one shape (each naming its own subject) are one term of the filter; a
    reader with 2 and one with 60 such grants run a query of the same shape, and read exactly
    the records their grants cover."""
    for i in range(60):
        ensure_subject(f"u{i}")
        created = api(
            admin,
            "memory.records.create",
            {
                "space_id": "s1",
                "subject_id": f"u{i}",
                "kind": "fact",
                "content": {"text": f"record {i}"},
                "placement": {"scope": "context", "context_id": "c1"},
            },
        )
        assert created.status == 200, created.body
    few, many = make_persona("few"), make_persona("many")
    for who, n in ((few, 2), (many, 60)):
        for i in range(n):
            assert (
                grant(api, admin, who.id, subject_ids=[f"u{i}"], context_ids=["c1"]).status == 200
            )
    few_sql, many_sql = _list_sql(api, few), _list_sql(api, many)
    assert few_sql.count(" OR ") == many_sql.count(" OR ")
    listed = api(many, "memory.records.list", {"space_id": "s1", "page_size": 200}).body
    assert listed["total_authorized"] == 60
    listed = api(few, "memory.records.list", {"space_id": "s1", "page_size": 200}).body
    assert sorted(r["subject_id"] for r in listed["records"]) == ["u0", "u1"]
