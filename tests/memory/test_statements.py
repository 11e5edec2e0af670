"""Every hand-written statement (memory/statements.py) answers what the ORM query it stands for
answers: the same rows, the same instances field for field, the same effect."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F

from memory import rows, statements
from memory.access import effective_q
from memory.models import (
    ApiToken,
    Grant,
    IdempotencyKey,
    PendingEmbedding,
    Receipt,
    Record,
    RecordRevision,
    RecordTerm,
    Space,
    Subject,
)
from memory.models.principals import hash_token
from memory.timeutil import now

pytestmark = pytest.mark.django_db

postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="a PostgreSQL statement (SQLite takes another path)"
)


def values(obj) -> list:
    return [getattr(obj, f.attname) for f in obj._meta.concrete_fields]


@pytest.fixture
def world(api, admin, grant_to):
    """A subject with a record, a narrow grantee holding several grants, a keyed mutation."""
    assert (
        api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"}).status == 200
    )
    made = api(
        admin,
        "memory.records.create",
        {
            "space_id": "s1",
            "subject_id": "u1",
            "kind": "note",
            "content": {"text": "a note"},
            "placement": {"scope": "shared"},
            "idempotency_key": "k-1",
        },
    )
    assert made.status == 200, made.body
    reader, _ = grant_to(capabilities=["records_read"], subject_ids=["u1"])
    for caps in (["recall"], ["capture"], ["profile_read"]):
        grant_to(reader, capabilities=caps)
    return {"admin": admin, "reader": reader, "record_id": made.receipt["refs"][0]["id"]}


@pytest.mark.parametrize("with_subject", [False, True])
@pytest.mark.parametrize("once", [False, True])
def test_coverage_is_the_orm_effective_grants_with_space_and_subject(world, with_subject, once):
    principal, at = world["reader"].principal, now()
    where = [
        "s1",
        principal.principal_id,
        Grant.ACTIVE,
        False,
        connection.ops.adapt_datetimefield_value(at),
    ]
    params = [*(where if once else []), *(["u1"] if with_subject else []), *where]
    found = rows.fetch(statements.coverage(False, with_subject, once), params)
    orm = list(
        Grant.objects.filter(effective_q(at), space_id="s1", grantee=principal).order_by(
            "created_at", "grant_id"
        )
    )
    g, s, sub = rows.columns(Grant, "g"), rows.columns(Space, "s"), rows.columns(Subject, "sub")
    assert [values(g.build(row)) for row in found] == [values(x) for x in orm]
    assert len(orm) == 4
    carrying = [row for row in found if row[g.width + s.names.index("space_id")] is not None]
    assert len(carrying) == (1 if once else len(orm))
    assert values(s.build(carrying[0], g.width)) == values(Space.objects.get(space_id="s1"))
    if with_subject:
        built = sub.build(carrying[0], g.width + s.width)
        assert values(built) == values(Subject.objects.get(space_id="s1", subject_id="u1"))


def test_coverage_leaves_out_what_the_orm_leaves_out(world):
    """Expired and ancestor-revoked grants: neither answers, as effective_q says."""
    principal, at = world["reader"].principal, now()
    mine = Grant.objects.filter(grantee=principal).order_by("created_at")
    mine.filter(pk=mine[0].pk).update(expires_at=at - timedelta(seconds=1))
    mine.filter(pk=mine[1].pk).update(ancestor_revoked=True)
    where = ["s1", principal.principal_id, Grant.ACTIVE, False]
    params = [*where, connection.ops.adapt_datetimefield_value(at)]
    found = rows.fetch(statements.coverage(), params)
    orm = Grant.objects.filter(effective_q(at), space_id="s1", grantee=principal)
    assert sorted(row[rows.columns(Grant, "g").names.index("grant_id")] for row in found) == sorted(
        orm.values_list("grant_id", flat=True)
    )
    assert len(found) == 2


@pytest.mark.parametrize("lock", [False, True])
def test_placed_is_the_orm_object_with_its_subject(world, lock):
    o, sub = rows.columns(Record, "o"), rows.columns(Subject, "sub")
    found = rows.fetch(statements.placed(Record, "record_id", lock), ["s1", world["record_id"]])
    orm = Record.objects.get(space_id="s1", record_id=world["record_id"])
    assert values(o.build(found[0])) == values(orm)
    assert values(sub.build(found[0], o.width)) == values(orm.subject)
    assert (
        rows.fetch(statements.placed(Record, "record_id", lock), ["s2", world["record_id"]]) == []
    )


def test_token_principal_is_the_orm_principal_of_an_unrevoked_token(world):
    admin = world["admin"]
    wanted = hash_token(admin.token)
    found = rows.fetch(statements.token_principal(), [wanted])
    orm = ApiToken.objects.select_related("principal").get(token_hash=wanted, revoked_at=None)
    assert values(rows.columns(type(orm.principal), "p").build(found[0])) == values(orm.principal)
    assert found[0][-1] == wanted
    ApiToken.objects.filter(token_hash=wanted).update(revoked_at=now())
    assert rows.fetch(statements.token_principal(), [wanted]) == []
    assert not ApiToken.objects.filter(token_hash=wanted, revoked_at=None).exists()


def test_idempotency_key_is_the_orm_key_with_its_receipt(world):
    admin = world["admin"].principal
    params = ["s1", admin.principal_id, "memory.records.create", "k-1"]
    found = rows.fetch(statements.idempotency_key(), params)
    orm = IdempotencyKey.objects.get(
        space_id="s1", principal=admin, op="memory.records.create", key="k-1"
    )
    k, r = rows.columns(IdempotencyKey, "k"), rows.columns(Receipt, "r")
    assert values(k.build(found[0])) == values(orm)
    assert values(r.build(found[0], k.width)) == values(orm.receipt)
    assert rows.fetch(statements.idempotency_key(), [*params[:3], "k-2"]) == []


def test_revision_bumps_do_what_the_orm_update_does(world):
    bumps, at = statements.revision_bumps(), now()
    db_at = connection.ops.adapt_datetimefield_value(at)
    subject = Subject.objects.get(space_id="s1", subject_id="u1")
    row = statements.execute(bumps["subject"], [db_at, "s1", subject.pk])
    assert row is not None
    Subject.objects.filter(pk=subject.pk).update(revision=F("revision") + 1, updated_at=at)
    after = Subject.objects.get(pk=subject.pk)
    assert after.revision == subject.revision + 2 and row[0] == subject.revision + 1
    fenced = row[2] if isinstance(row[2], list) else json.loads(row[2])  # SQLite: JSON text
    assert (row[1], fenced) == (after.state, after.fenced_context_ids)
    space = Space.objects.get(space_id="s1")
    row = statements.execute(bumps["space"], [db_at, space.pk, space.state, False])
    assert row == (space.revision + 1,)
    moved = statements.execute(bumps["space"], [db_at, space.pk, Space.FROZEN, False])
    assert statements.execute(bumps["space"], [db_at, space.pk, space.state, True]) is None
    orm_moved = Space.objects.filter(pk=space.pk, state=Space.FROZEN).update(revision=0)
    assert moved is None and orm_moved == 0
    assert Space.objects.get(pk=space.pk).revision == space.revision + 1


@postgres
def test_commit_tail_inserts_what_the_orm_would_save(world):
    space = Space.objects.get(space_id="s1")
    admin, at = world["admin"].principal, now()
    receipt = Receipt(
        space_id="s1",
        principal=admin,
        op="memory.spaces.unfreeze",
        status=Receipt.COMMITTED,
        payload_digest="d" * 64,
        idempotency_key="k-tail",
        refs=[{"type": "space", "id": "s1", "revision": space.revision + 1}],
        created_at=at,
        completed_at=at,
    )
    key = IdempotencyKey(
        space_id="s1",
        principal=admin,
        op="memory.spaces.unfreeze",
        key="k-tail",
        payload_digest="d" * 64,
        receipt=receipt,
        created_at=at,
    )
    params = [connection.ops.adapt_datetimefield_value(at), space.pk, space.state, False]
    params += statements.insert_values(receipt, skip="space_revision")
    params += statements.insert_values(key, skip="receipt")
    (revision,) = statements.execute(statements.commit_tail(True), params)
    assert revision == space.revision + 1 == Space.objects.get(pk=space.pk).revision
    saved = Receipt.objects.get(receipt_id=receipt.receipt_id)
    receipt.space_revision = revision
    assert values(saved) == values(receipt)
    stored = IdempotencyKey.objects.get(key="k-tail")
    assert values(stored)[1:] == values(key)[1:]  # all but the auto primary key


@postgres
def test_commit_tail_bumps_its_subjects_in_the_same_statement(world):
    """Two subjects, then the space, then the receipt: each bump moves its revision by one as the
    ORM's update would; a subject whose state or fences moved since the body read them stops the
    statement before the space (NULL space_revision, no receipt, the space not bumped)."""
    space = Space.objects.get(space_id="s1")
    Subject.objects.create(space=space, subject_id="u2", fenced_context_ids=["c9"])
    subjects = list(Subject.objects.filter(space=space).order_by("pk"))
    admin, at = world["admin"].principal, now()
    db_at = connection.ops.adapt_datetimefield_value(at)

    def tail(gates):
        receipt = Receipt(
            space_id="s1",
            principal=admin,
            op="memory.records.create",
            status=Receipt.COMMITTED,
            payload_digest="d" * 64,
            refs=[],
            created_at=at,
            completed_at=at,
        )
        params = []
        for s, (state, fenced) in zip(subjects, gates, strict=True):
            params += [db_at, s.space_id, s.pk, state, json.dumps(fenced)]
        params += [db_at, space.pk, space.state, False]
        params += statements.insert_values(receipt, skip="space_revision")
        return receipt, statements.execute(statements.commit_tail(False, len(subjects)), params)

    seen = [(s.state, s.fenced_context_ids) for s in subjects]
    moved = [seen[0], (seen[1][0], [])]  # the second subject's fence moved since
    receipt, row = tail(moved)
    assert row == (None, subjects[0].revision + 1, None)
    assert not Receipt.objects.filter(pk=receipt.receipt_id).exists()
    assert Space.objects.get(pk="s1").revision == space.revision
    moved = [(Subject.FENCED, seen[0][1]), seen[1]]  # the first one's state moved
    receipt, row = tail(moved)
    assert row == (None, None, None)
    receipt, row = tail(seen)
    bumped = subjects[0].revision + 2  # the first call bumped it (its rollback is the caller's)
    assert row == (space.revision + 1, bumped, subjects[1].revision + 1)
    after = {s.pk: s for s in Subject.objects.filter(space=space)}
    assert [after[s.pk].revision for s in subjects] == [bumped, subjects[1].revision + 1]
    assert all(after[s.pk].updated_at == at for s in subjects)
    assert Receipt.objects.get(pk=receipt.receipt_id).space_revision == space.revision + 1
    assert Space.objects.get(pk="s1").revision == space.revision + 1


@postgres
def test_record_with_revision_writes_what_the_orm_writes(world):
    """One statement writes the record row and its revision row as `record.save()` and the
    revision's `save()` (record_store._snapshot) would: compared field by field with a record
    the op made through the same path's ORM twin."""
    from memory.services.record_store import _snapshot

    made = Record.objects.get(record_id=world["record_id"])
    twins = []
    for via_statement in (False, True):
        record = Record.objects.get(pk=made.pk)
        record.pk, record.record_id = None, f"rec_twin_{via_statement}"
        record._state.adding = True
        if via_statement:
            (record.pk,) = statements.execute(
                statements.record_with_revision(), statements.insert_values(record, skip="")
            )
        else:
            record.save(force_insert=True)
            _snapshot(record).save(force_insert=True)
        twins.append(record.pk)
    by_orm, by_sql = (Record.objects.get(pk=pk) for pk in twins)
    skip = {"id", "record_id"}
    fields = [f.attname for f in Record._meta.concrete_fields if f.attname not in skip]
    assert [getattr(by_sql, f) for f in fields] == [getattr(by_orm, f) for f in fields]
    revisions = [
        RecordRevision.objects.filter(record_id=pk).values(
            "space_id",
            "revision",
            "kind",
            "content",
            "placement_scope",
            "placement_context_id",
            "created_at",
        )
        for pk in twins
    ]
    assert list(revisions[1]) == list(revisions[0]) and len(revisions[0]) == 1


@postgres
def test_record_with_revision_and_terms_writes_the_term_rows_write_terms_writes(world):
    """A new record's term rows in its own statement are the rows `term_store.write_terms`
    (the derived-copy writer) writes for it: compared with an ORM twin; a text without a token
    writes the record and no term row."""
    from memory.models import RecordTerm
    from memory.services import term_store

    made = Record.objects.get(record_id=world["record_id"])
    for text in ("Tea, tea and more TEA in Porto — the café's teas", "", "!!! ---"):
        twins = []
        for via_statement in (False, True):
            record = Record.objects.get(pk=made.pk)
            record.pk, record.record_id = None, f"rec_terms_{via_statement}_{len(text)}"
            record.text, record.content = text, {"text": text}
            record._state.adding = True
            if via_statement:
                (record.pk,) = statements.execute(
                    statements.record_with_revision(terms=True),
                    statements.insert_values(record, skip="")
                    + term_store.term_columns(record.text, record.created_at),
                )
            else:
                record.save(force_insert=True)
                term_store.write_terms([record])
            twins.append(record.pk)
        rows = [
            list(
                RecordTerm.objects.filter(record_id=pk)
                .order_by("term")
                .values_list("space_id", "subject_id", "term", "tf", "length", "created_ms")
            )
            for pk in twins
        ]
        assert rows[1] == rows[0], text
        assert bool(rows[0]) == bool(text.strip("!- "))
        assert RecordRevision.objects.filter(record_id=twins[1]).count() == 1


@postgres
def test_unnest_insert_writes_the_rows_bulk_create_writes(world):
    """The term rows of a text, and an upsert of the embedding backlog (a second revision of a
    record already queued replaces its revision), as bulk_create writes them."""
    from memory.services import term_store

    record = Record.objects.get(record_id=world["record_id"])
    text = "tea and more tea in porto"
    rows = term_store.term_values(text, record.created_at)
    RecordTerm.objects.filter(record_id=record.pk).delete()
    columns = [
        [record.space_id] * len(rows),
        [record.pk] * len(rows),
        [record.subject_id] * len(rows),
        *(list(c) for c in zip(*rows, strict=True)),
    ]
    sql = statements.unnest_insert(RecordTerm, tuple(term_store.TERM_FIELDS))
    statements.execute(sql, columns)
    stored = list(
        RecordTerm.objects.filter(record_id=record.pk)
        .order_by("term")
        .values_list("space_id", "record_id", "subject_id", "term", "tf", "length", "created_ms")
    )
    record.text = text
    assert stored == [
        (t.space_id, t.record_id, t.subject_id, t.term, t.tf, t.length, t.created_ms)
        for t in term_store.term_rows(record)
    ]
    PendingEmbedding.objects.filter(record_id=record.pk).delete()
    upsert = statements.unnest_insert(
        PendingEmbedding, ("space_id", "record_id", "revision"), ("record", "space"), ("revision",)
    )
    for revision in (1, 2):
        statements.execute(upsert, [[record.space_id], [record.pk], [revision]])
        assert list(
            PendingEmbedding.objects.filter(record_id=record.pk).values_list("space_id", "revision")
        ) == [(record.space_id, revision)]


@postgres
def test_space_key_share_finds_the_row_the_orm_finds(world):
    assert statements.execute(statements.space_key_share(), ["s1"]) == (1,)
    assert Space.objects.filter(pk="s1").exists()
    assert statements.execute(statements.space_key_share(), ["nope"]) is None
    assert not Space.objects.filter(pk="nope").exists()


def test_ping_answers():
    assert statements.execute(statements.PING) == (1,)


@postgres
def test_a_connection_of_the_provider_compiles_no_statement_with_jit() -> None:
    """PostgreSQL's JIT compiles a statement whose estimated cost passes jit_above_cost (100,000
    by default): ~0.8 s of LLVM for a recall ranking over a large subject, paid per statement,
    where the statement itself runs in milliseconds. Every connection of the provider turns it
    off (web processes, workers, management commands alike)."""
    from django.db import connections

    fresh = connections.create_connection("default")
    try:
        with fresh.cursor() as cursor:
            cursor.execute("SHOW jit")
            assert cursor.fetchone()[0] == "off"
    finally:
        fresh.close()


def test_vector_generation_bump_makes_and_moves_what_the_orm_would(world):
    """The bump adds one to each named subject's generation, making a row at 1 for a subject
    without one, as `get_or_create` then `F("generation") + 1` would; a subject not named keeps
    its generation."""
    from memory.models import VectorGeneration

    s1 = Space.objects.get(space_id="s1")
    u1 = Subject.objects.get(space=s1, subject_id="u1")
    u2 = Subject.objects.create(
        space=s1, subject_id="u2", created_at=u1.created_at, updated_at=u1.updated_at
    )
    u3 = Subject.objects.create(
        space=s1, subject_id="u3", created_at=u1.created_at, updated_at=u1.updated_at
    )
    VectorGeneration.objects.create(space=s1, subject=u3, generation=7)

    def generations() -> dict[int, int]:
        return dict(VectorGeneration.objects.values_list("subject_id", "generation"))

    statements.execute(statements.vector_generation_bump(1), [u1.pk, "s1"])
    assert generations() == {u1.pk: 1, u3.pk: 7}
    statements.execute(statements.vector_generation_bump(2), [u1.pk, "s1", u2.pk, "s1"])
    assert generations() == {u1.pk: 2, u2.pk: 1, u3.pk: 7}
    assert set(VectorGeneration.objects.values_list("space_id", flat=True)) == {"s1"}


@postgres
def test_a_new_principal_can_follow_a_fan_out_in_one_transaction(db) -> None:
    """On a Citus coordinator a write to a reference table (memory_principal) after a
    multi-shard statement ran in parallel in the same transaction is refused; every connection
    of the provider runs multi-shard statements sequentially there (statements.session_settings),
    so the Citus leg passes this; on one node the same transaction simply commits."""
    from memory.models import Principal, Receipt
    from memory.services import operators

    # the test's own transaction is the one transaction; a receipt by id alone reads every shard
    assert not list(Receipt.objects.filter(receipt_id="rcp_none"))
    principal, token = operators.create_principal_with_token("after a fan-out")
    assert token and Principal.objects.filter(pk=principal.pk).exists()
