"""Grants (docs/protocol.md#grants): the coverage matrix, non-amplification on every dimension, chains, expiry."""

from datetime import timedelta

import pytest

from memory.access import coverage_for
from memory.models import Grant
from memory.timeutil import iso, now
from memory.wire.errors import WireError

pytestmark = pytest.mark.django_db


def cov(persona, space_id="s1"):
    return coverage_for(space_id, persona.principal, now())


def test_grant_receipt_and_wire_shape(api, admin, grant_to):
    persona, grant_id = grant_to(
        capabilities=["records_read", "recall"],
        subject_ids=["u1"],
        context_ids=["c1"],
        shared_access=True,
    )
    grants = api(persona, "memory.grants.list", {"space_id": "s1", "view": "own"}).body["grants"]
    assert len(grants) == 1
    g = grants[0]
    assert g["grant_id"] == grant_id
    assert g["issuer_principal_id"] == admin.id and g["grantee_principal_id"] == persona.id
    assert g["capabilities"] == ["recall", "records_read"]
    assert (g["subject_ids"], g["context_ids"], g["shared_access"]) == (["u1"], ["c1"], True)
    assert g["state"] == "active" and g["effective"] is True and g["revision"] == 1
    assert g["parent_grant_id"] is not None
    assert "expires_at" not in g and "revoked_at" not in g


@pytest.mark.parametrize(
    "grant, capability, subject, scope, context, covered",
    [
        ({"capabilities": ["records_read"]}, "records_read", "u1", "context", "c1", True),
        ({"capabilities": ["records_read"]}, "records_write", "u1", "context", "c1", False),
        (
            {"capabilities": ["records_read"], "subject_ids": ["u1"]},
            "records_read",
            "u2",
            "context",
            "c1",
            False,
        ),
        (
            {"capabilities": ["records_read"], "context_ids": ["c1"]},
            "records_read",
            "u1",
            "context",
            "c2",
            False,
        ),
        (
            {"capabilities": ["records_read"], "context_ids": ["c1"]},
            "records_read",
            "u1",
            "context",
            "c1",
            True,
        ),
        ({"capabilities": ["records_read"]}, "records_read", "u1", "shared", None, False),
        (
            {"capabilities": ["records_read"], "shared_access": True},
            "records_read",
            "u1",
            "shared",
            None,
            True,
        ),
        (
            {"capabilities": ["space_admin"], "shared_access": True},
            "records_write",
            "u1",
            "shared",
            None,
            True,
        ),
    ],
)
def test_coverage_matrix(grant_to, grant, capability, subject, scope, context, covered):
    persona, _ = grant_to(**grant)
    assert cov(persona).covers(capability, subject, scope, context) is covered


def test_expired_grant_covers_nothing(grant_to):
    persona, grant_id = grant_to(
        capabilities=["records_read"], expires_at=iso(now() + timedelta(seconds=60))
    )
    assert cov(persona).covers("records_read", "u1", "context", "c1")
    Grant.objects.filter(pk=grant_id).update(expires_at=now() - timedelta(seconds=1))
    with pytest.raises(WireError) as err:
        cov(persona)
    assert err.value.code == "NOT_FOUND"


def test_revoked_grant_and_revoked_parent_cover_nothing_at_once(api, admin, grant_to):
    middle, middle_id = grant_to(capabilities=["grants_issue", "records_read"])
    leaf, _ = grant_to(capabilities=["grants_issue", "records_read"])  # a sibling holder
    child = api(
        middle,
        "memory.grants.grant",
        {"space_id": "s1", "grantee_principal_id": leaf.id, "capabilities": ["records_read"]},
    )
    child_id = child.receipt["refs"][0]["id"]
    assert Grant.objects.get(pk=child_id).parent_id == middle_id
    revoke = api(
        admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": middle_id, "reason": "left"}
    )
    assert revoke.receipt["refs"] == [{"type": "grant", "id": middle_id, "revision": 2}]
    listed = api(
        admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "include_inactive": True}
    )
    by_id = {g["grant_id"]: g for g in listed.body["grants"]}
    assert by_id[middle_id]["state"] == "revoked" and by_id[middle_id]["effective"] is False
    assert by_id[child_id]["state"] == "active" and by_id[child_id]["effective"] is False
    assert "revoked_at" in by_id[middle_id]
    active_only = api(admin, "memory.grants.list", {"space_id": "s1", "view": "admin"}).body[
        "grants"
    ]
    assert child_id not in {g["grant_id"] for g in active_only}
    assert middle_id not in {g["grant_id"] for g in active_only}
    with pytest.raises(WireError) as err:
        cov(middle)
    assert err.value.code == "NOT_FOUND"  # middle's only grant is revoked: the space is invisible


def test_grant_needs_grants_issue(api, grant_to, persona_factory):
    reader, _ = grant_to(capabilities=["records_read"])
    other = persona_factory("x")
    answer = api(
        reader,
        "memory.grants.grant",
        {"space_id": "s1", "grantee_principal_id": other.id, "capabilities": ["records_read"]},
    )
    assert (answer.status, answer.code) == (403, "PERMISSION_DENIED")
    assert answer.error["details"]["capability"] == "grants_issue"


@pytest.mark.parametrize(
    "parent, child, dims",
    [
        (
            {"capabilities": ["grants_issue", "records_read"]},
            {"capabilities": ["records_write"]},
            ["capabilities"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "subject_ids": ["u1"]},
            {"capabilities": ["records_read"]},
            ["subject_ids"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "subject_ids": ["u1"]},
            {"capabilities": ["records_read"], "subject_ids": ["u1", "u2"]},
            ["subject_ids"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "context_ids": ["c1"]},
            {"capabilities": ["records_read"], "context_ids": ["c2"]},
            ["context_ids"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"]},
            {"capabilities": ["records_read"], "shared_access": True},
            ["shared_access"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "expires_at": "+3600"},
            {"capabilities": ["records_read"]},
            ["expires_at"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "expires_at": "+3600"},
            {"capabilities": ["records_read"], "expires_at": "+7200"},
            ["expires_at"],
        ),
        (
            {"capabilities": ["grants_issue", "records_read"], "context_ids": ["c1"]},
            {"capabilities": ["records_write"], "shared_access": True},
            ["capabilities", "context_ids", "shared_access"],
        ),
    ],
)
def test_non_amplification_on_each_dimension(api, grant_to, persona_factory, parent, child, dims):
    def resolve(d):
        d = dict(d)
        if "expires_at" in d:
            d["expires_at"] = iso(now() + timedelta(seconds=int(d["expires_at"])))
        return d

    issuer, _ = grant_to(**resolve(parent))
    target = persona_factory("t")
    before = Grant.objects.count()
    answer = api(
        issuer,
        "memory.grants.grant",
        {"space_id": "s1", "grantee_principal_id": target.id, **resolve(child)},
    )
    assert (answer.status, answer.code) == (403, "AMPLIFICATION_DENIED")
    assert answer.error["details"]["exceeds"] == dims
    assert Grant.objects.count() == before


def test_within_coverage_succeeds_and_records_parent(api, grant_to, persona_factory):
    expiry = iso(now() + timedelta(hours=2))
    issuer, parent_id = grant_to(
        capabilities=["grants_issue", "records_read", "recall"],
        subject_ids=["u1", "u2"],
        context_ids=["c1", "c2"],
        shared_access=True,
        expires_at=expiry,
    )
    target = persona_factory("t")
    answer = api(
        issuer,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": target.id,
            "capabilities": ["recall"],
            "subject_ids": ["u1"],
            "context_ids": ["c2"],
            "expires_at": iso(now() + timedelta(hours=1)),
            "parent_grant_id": parent_id,
        },
    )
    assert answer.status == 200, answer.body
    g = Grant.objects.get(pk=answer.receipt["refs"][0]["id"])
    assert g.parent_id == parent_id and g.issuer_id == issuer.id


def test_named_parent_not_held_is_not_found(api, grant_to, persona_factory):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    _, foreign_id = grant_to(capabilities=["grants_issue", "records_read"])
    target = persona_factory("t")
    answer = api(
        issuer,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": target.id,
            "capabilities": ["records_read"],
            "parent_grant_id": foreign_id,
        },
    )
    assert answer.code == "NOT_FOUND"


def test_unknown_grantee_is_not_found(api, admin, space):
    answer = api(
        admin,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": "prn_01HZZZZZZZZZZZZZZZZZZZZZZZ",
            "capabilities": ["records_read"],
        },
    )
    assert (answer.code, answer.error["details"]["resource"]) == ("NOT_FOUND", "principal")


def test_expiry_in_the_past_is_invalid_input(api, admin, persona_factory, space):
    target = persona_factory("t")
    answer = api(
        admin,
        "memory.grants.grant",
        {
            "space_id": "s1",
            "grantee_principal_id": target.id,
            "capabilities": ["records_read"],
            "expires_at": "2020-01-01T00:00:00Z",
        },
    )
    assert (answer.status, answer.code) == (422, "INVALID_INPUT")


def test_revoke_rules(api, admin, grant_to):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    bystander, _ = grant_to(capabilities=["records_read"])
    _, target_id = grant_to(capabilities=["records_read"])
    denied = api(bystander, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id})
    assert denied.code == "PERMISSION_DENIED"
    missing = api(
        admin,
        "memory.grants.revoke",
        {"space_id": "s1", "grant_id": "grt_01HZZZZZZZZZZZZZZZZZZZZZZZ"},
    )
    assert missing.code == "NOT_FOUND"
    assert (
        api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id}).status == 200
    )
    again = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": target_id})
    assert (again.status, again.code) == (409, "GRANT_REVOKED")


def test_issuer_can_revoke_what_it_issued(api, grant_to, persona_factory):
    issuer, _ = grant_to(capabilities=["grants_issue", "records_read"])
    target = persona_factory("t")
    made = api(
        issuer,
        "memory.grants.grant",
        {"space_id": "s1", "grantee_principal_id": target.id, "capabilities": ["records_read"]},
    )
    gid = made.receipt["refs"][0]["id"]
    assert api(issuer, "memory.grants.revoke", {"space_id": "s1", "grant_id": gid}).status == 200


def test_admin_view_needs_space_admin_own_view_does_not(api, grant_to):
    reader, _ = grant_to(capabilities=["records_read"])
    assert (
        api(reader, "memory.grants.list", {"space_id": "s1", "view": "admin"}).code
        == "PERMISSION_DENIED"
    )
    assert (
        len(api(reader, "memory.grants.list", {"space_id": "s1", "view": "own"}).body["grants"])
        == 1
    )


def test_grants_list_pages_with_cursor_and_cursor_breaks_on_change(api, admin, grant_to):
    for _ in range(5):
        grant_to(capabilities=["records_read"])
    first = api(
        admin, "memory.grants.list", {"space_id": "s1", "view": "admin", "page_size": 2}
    ).body
    assert len(first["grants"]) == 2 and first["next_cursor"]
    seen = [g["grant_id"] for g in first["grants"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api(
            admin,
            "memory.grants.list",
            {"space_id": "s1", "view": "admin", "page_size": 2, "cursor": cursor},
        ).body
        seen += [g["grant_id"] for g in page["grants"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 6
    stale = first["next_cursor"]
    grant_to(capabilities=["records_read"])
    answer = api(
        admin,
        "memory.grants.list",
        {"space_id": "s1", "view": "admin", "page_size": 2, "cursor": stale},
    )
    assert (answer.status, answer.code) == (409, "CURSOR_INVALID")
    tampered = api(
        admin,
        "memory.grants.list",
        {"space_id": "s1", "view": "admin", "page_size": 2, "cursor": stale[:-3] + "abc"},
    )
    assert tampered.code == "CURSOR_INVALID"
    other_request = api(
        admin, "memory.grants.list", {"space_id": "s1", "view": "own", "cursor": stale}
    )
    assert other_request.code == "CURSOR_INVALID"


def _chain(api, grant_to, persona_factory, depth):
    """A chain admin → g0 → g1 → … of grants_issue+records_read holders; returns [(persona, id)]."""
    first, first_id = grant_to(capabilities=["grants_issue", "records_read"])
    chain = [(first, first_id)]
    for i in range(depth - 1):
        holder = persona_factory(f"chain{i}")
        answer = api(
            chain[-1][0],
            "memory.grants.grant",
            {
                "space_id": "s1",
                "grantee_principal_id": holder.id,
                "capabilities": ["grants_issue", "records_read"],
            },
        )
        chain.append((holder, answer.receipt["refs"][0]["id"]))
    return chain


def test_revoking_a_middle_grant_cuts_every_generation_below_it_and_nothing_above(
    api, admin, grant_to, persona_factory
):
    chain = _chain(api, grant_to, persona_factory, 4)
    api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": chain[1][1]})
    assert cov(chain[0][0]).grants  # above the cut: untouched
    for persona, grant_id in chain[1:]:
        with pytest.raises(WireError) as err:
            cov(persona)
        assert err.value.code == "NOT_FOUND"
    flags = dict(
        Grant.objects.filter(pk__in=[g for _, g in chain]).values_list(
            "grant_id", "ancestor_revoked"
        )
    )
    assert flags == {chain[0][1]: False, chain[1][1]: False, chain[2][1]: True, chain[3][1]: True}


def test_active_grants_list_fills_its_pages_past_ineffective_rows(
    api, admin, grant_to, persona_factory
):
    chain = _chain(api, grant_to, persona_factory, 4)
    api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": chain[1][1]})
    for _ in range(3):
        grant_to(capabilities=["records_read"])
    effective = api(
        admin,
        "memory.grants.list",
        {"space_id": "s1", "view": "admin", "include_inactive": True, "page_size": 100},
    ).body["grants"]
    want = [g["grant_id"] for g in effective if g["effective"]]
    seen, cursor = [], None
    while True:
        body = {
            "space_id": "s1",
            "view": "admin",
            "page_size": 2,
            **({"cursor": cursor} if cursor else {}),
        }
        page = api(admin, "memory.grants.list", body).body
        assert len(page["grants"]) == 2 or page["next_cursor"] is None
        seen += [g["grant_id"] for g in page["grants"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == want and len(want) == 5  # admin root + chain[0] + three new


def test_a_reads_coverage_is_one_query(grant_to, django_assert_num_queries):
    persona, _ = grant_to(capabilities=["records_read"])
    with django_assert_num_queries(1):
        coverage = cov(persona)
    assert coverage.space.space_id == "s1" and len(coverage.grants) == 1


def _many_grants(api, admin, grant_to, ensure_subject):
    ensure_subject("u1")
    persona, first = grant_to(capabilities=["records_read"], subject_ids=["u1"])
    later = [
        grant_to(persona, capabilities=["recall"], subject_ids=[f"u{i}"])[1] for i in (2, 3, 4)
    ]
    revoked = grant_to(persona, capabilities=["records_write"])[1]
    answer = api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": revoked})
    assert answer.status == 200, answer.body
    return persona, [first, *later]


def test_many_grants_share_one_space_and_subject_in_one_query(
    api, admin, grant_to, ensure_subject, django_assert_num_queries
):
    """With several effective grants the coverage is still one query (only the first grant's
    row carries the space and subject columns): every grant names the space, in issue order,
    and the subject joined in is the one asked for, or None when absent."""
    from memory.models import Space

    persona, grant_ids = _many_grants(api, admin, grant_to, ensure_subject)
    space = Space.objects.get(space_id="s1")
    forms = []
    for subject_id, present in (("u1", True), ("u-absent", False), ("u1", True)):
        with django_assert_num_queries(1) as queries:
            coverage = coverage_for("s1", persona.principal, now(), subject_id=subject_id)
        forms.append("LIMIT 1)" in queries.captured_queries[0]["sql"])
        assert [g.grant_id for g in coverage.grants] == grant_ids  # the revoked one is not
        assert {g.space.space_id for g in coverage.grants} == {"s1"}
        assert coverage.space.revision == space.revision
        assert coverage.space.state == space.state
        loaded_id, loaded = coverage.loaded_subject
        assert loaded_id == subject_id and (loaded is not None) is present
        if present:
            assert loaded.subject_id == "u1" and loaded.space_id == "s1"
    assert coverage.covers("recall", "u3") and not coverage.covers("records_write", "u1")
    # the first read learns that this principal holds many grants here; the next use the form
    # that decodes the space once
    assert forms == [False, True, True]


def test_a_single_grant_keeps_the_plain_coverage_query(grant_to, django_assert_num_queries):
    persona, _ = grant_to(capabilities=["records_read"])
    for _ in range(2):
        with django_assert_num_queries(1) as queries:
            coverage = cov(persona)
        assert "LIMIT 1)" not in queries.captured_queries[0]["sql"]
        assert coverage.space.space_id == "s1" and len(coverage.grants) == 1


def test_coverage_reads_again_when_no_row_carried_the_space(
    api, admin, grant_to, ensure_subject, monkeypatch
):
    """The first grant chosen by the statement's sub-select can be revoked before the share
    lock reads it (a racing revocation); then no row carries the space and the coverage is
    read again with every row joined. Forced here by a sub-select that finds no grant."""
    from memory import access

    persona, grant_ids = _many_grants(api, admin, grant_to, ensure_subject)
    coverage_for("s1", persona.principal, now())  # learns: many grants here
    rendered = access._coverage_sql.__wrapped__
    sqls = []

    def chooses_nothing(share=False, with_subject=False, once=False):
        sql = rendered(share, with_subject, once)
        sql = sql.replace(" LIMIT 1)", " LIMIT 1 OFFSET 1000)") if once else sql
        sqls.append(sql)
        return sql

    monkeypatch.setattr(access, "_coverage_sql", chooses_nothing)
    coverage = coverage_for("s1", persona.principal, now(), subject_id="u1")
    assert len(sqls) == 2 and "OFFSET 1000" in sqls[0] and "OFFSET" not in sqls[1]
    assert [g.grant_id for g in coverage.grants] == grant_ids
    assert coverage.space.space_id == "s1" and coverage.loaded_subject[1].subject_id == "u1"
    assert all(g.space is coverage.space for g in coverage.grants)


@pytest.mark.single_node(
    reason="replays migrations, which move keys and constraints of distributed tables"
)
@pytest.mark.django_db(transaction=True)
def test_migration_marks_grants_below_an_already_revoked_one():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("memory", "0003_merge_0002_recall_lexemes_0002_recordembedding")]
    after = [("memory", "0004_grant_ancestor_revoked")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    Space, Principal, OldGrant = (
        old.get_model("memory", m) for m in ("Space", "Principal", "Grant")
    )
    at = now()
    space = Space.objects.create(space_id="mig", created_at=at, updated_at=at)
    who = Principal.objects.create(principal_id="p-mig", kind="service", created_at=at)
    common = {
        "space": space,
        "grantee": who,
        "issuer": who,
        "capabilities": ["space_admin"],
        "created_at": at,
    }
    root = OldGrant.objects.create(grant_id="g-root", ancestor_ids=[], **common)
    cut = OldGrant.objects.create(
        grant_id="g-cut", parent=root, ancestor_ids=["g-root"], state="revoked", **common
    )
    OldGrant.objects.create(
        grant_id="g-below", parent=cut, ancestor_ids=["g-root", "g-cut"], **common
    )
    OldGrant.objects.create(grant_id="g-side", parent=root, ancestor_ids=["g-root"], **common)
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    try:
        flags = dict(
            Grant.objects.filter(space_id="mig").values_list("grant_id", "ancestor_revoked")
        )
        assert flags == {"g-root": False, "g-cut": False, "g-below": True, "g-side": False}
    finally:
        # Leave the schema as every later test expects it: every migration applied.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def _fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def test_prepared_coverage_query_matches_the_orm_field_for_field(
    api, admin, grant_to, persona_factory
):
    """The one-query coverage (memory/rows.py) returns exactly what the ORM filter does: the same
    grants in the same order, every field converted alike, the space joined in."""
    from memory.access import effective_grants

    chain = _chain(api, grant_to, persona_factory, 3)
    holder = chain[0][0]
    for grant in [
        {"capabilities": ["records_read"], "subject_ids": ["u1"], "context_ids": ["c1"]},
        {
            "capabilities": ["recall"],
            "shared_access": True,
            "expires_at": iso(now() + timedelta(hours=1)),
        },
    ]:
        api(
            admin,
            "memory.grants.grant",
            {"space_id": "s1", "grantee_principal_id": holder.id, **grant},
        )
    expired = api(
        admin,
        "memory.grants.grant",
        {"space_id": "s1", "grantee_principal_id": holder.id, "capabilities": ["records_read"]},
    ).receipt["refs"][0]["id"]
    Grant.objects.filter(pk=expired).update(expires_at=now() - timedelta(seconds=1))
    api(admin, "memory.grants.revoke", {"space_id": "s1", "grant_id": chain[1][1]})
    for persona, _ in [*chain, (admin, None)]:
        at = now()
        orm = list(
            Grant.objects.select_related("space")
            .filter(pk__in=[g.pk for g in effective_grants("s1", persona.principal, at)])
            .order_by("created_at", "grant_id")
        )
        fast = effective_grants("s1", persona.principal, at, with_space=True)
        assert [_fields(g) for g in fast] == [_fields(g) for g in orm]
        assert [_fields(g.space) for g in fast] == [_fields(g.space) for g in orm]
    assert len(effective_grants("s1", holder.principal, now(), with_space=True)) == 3
    assert effective_grants("s1", chain[2][0].principal, now(), with_space=True) == []
