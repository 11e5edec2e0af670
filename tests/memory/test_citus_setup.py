"""`manage.py spoke citus-setup` and migration 0022 (docs/scaling.md "Moving onto Citus"): the
layout of every table, the order the command distributes them in, its refusal where there is
no cluster, and, on the Citus leg, that it has made every table what the layout says and does
nothing when run again."""

from __future__ import annotations

import io
import os

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memory.services import citus

pytestmark = pytest.mark.django_db
ON_CITUS = os.environ.get("SPOKE_MEMORY_CITUS") == "1"


def test_every_table_has_a_place_in_the_layout():
    plan = citus.layout()
    assert {"memory_principal", "memory_apitoken", "auth_user", "django_content_type"} <= set(
        plan.reference
    )
    assert plan.own_key == {"memory_wiresession": "session_id", "django_session": "session_key"}
    assert {"memory_space", "memory_record", "memory_receipt", "memory_job"} <= set(plan.by_space)
    assert not set(plan.reference) & set(plan.by_space)
    assert citus.ANCHOR in plan.by_space


def test_each_table_comes_after_the_tables_its_foreign_keys_point_at():
    targets = {
        "memory_record": {"memory_subject", "memory_space"},
        "memory_subject": {"memory_space"},
        "memory_space": set(),
        "memory_grant": {"memory_space", "memory_principal"},
        "memory_principal": {"auth_user"},
        "auth_user": set(),
    }
    done = citus.order(sorted(targets), targets)
    assert done[0] == "memory_space"
    for table, pointed in targets.items():
        assert all(done.index(t) < done.index(table) for t in pointed), (table, done)
    with pytest.raises(citus.CitusError, match="cycle"):
        citus.order(["a", "b"], {"a": {"b"}, "b": {"a"}})


@pytest.mark.skipif(ON_CITUS, reason="the Citus leg has a cluster")
def test_without_a_cluster_the_command_refuses_and_changes_nothing():
    with pytest.raises(CommandError, match="Citus extension|PostgreSQL with the Citus"):
        call_command("spoke", "citus-setup", stdout=io.StringIO())


def test_a_bad_shard_count_is_refused():
    with pytest.raises(CommandError, match="between 1 and 4096"):
        call_command("spoke", "citus-setup", "--shard-count", "0", stdout=io.StringIO())


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the composite keys are PostgreSQL's")
def test_space_scoped_keys_hold_the_space():
    """0022: every space-scoped table's primary key holds space_id, and every foreign key
    between two of them is composite; the principals' home space has no constraint."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.conrelid::regclass::text, c.contype, pg_get_constraintdef(c.oid)"
            " FROM pg_constraint c WHERE c.contype IN ('p', 'f')"
            " AND c.conrelid::regclass::text = ANY(%s)",
            [citus.layout().by_space + ["memory_principal"]],
        )
        rows = cur.fetchall()
    for table, kind, definition in rows:
        if table == "memory_principal":
            assert "memory_space" not in definition, definition
        elif kind == "p":
            assert "space_id" in definition, (table, definition)
        elif "REFERENCES memory_" in definition and "memory_principal" not in definition:
            assert "space_id" in definition, (table, definition)
    assert ("memory_record", "p", "PRIMARY KEY (id, space_id)") in rows


@pytest.mark.skipif(not ON_CITUS, reason="needs the Citus leg (tests/citus/run.sh)")
def test_on_citus_every_table_is_placed_and_a_second_run_changes_nothing():
    plan = citus.layout()
    with connection.cursor() as cur:
        held = citus.current(cur)
        cur.execute(
            "SELECT table_name::text FROM citus_tables WHERE distribution_column = 'space_id'"
            " AND colocation_id = (SELECT colocation_id FROM citus_tables"
            " WHERE table_name = 'memory_space'::regclass)"
        )
        colocated = {r[0] for r in cur.fetchall()}
    assert all(held.get(t) == "reference" for t in plan.reference)
    assert colocated == set(plan.by_space)
    out = io.StringIO()
    call_command("spoke", "citus-setup", stdout=out)
    assert '"distributed": []' in out.getvalue() and '"reference": []' in out.getvalue()


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's error codes")
def test_a_duplicate_key_coming_back_as_xx000_is_a_duplicate_key():
    """Through a Citus coordinator, a unique violation raised on a worker by a statement run in
    several steps comes back as SQLSTATE XX000 with PostgreSQL's message: the mutation path
    takes it as the racer's duplicate it is (a replay or a retry), never an internal error.
    Raised here by PostgreSQL itself with that code and message; the Citus leg runs the races."""
    from django.db import IntegrityError, InternalError, transaction

    from memory.models import Space
    from memory.services.mutation import duplicate_key

    def raised(sql: str) -> Exception:
        with pytest.raises(Exception) as info, transaction.atomic():
            with connection.cursor() as cur:
                cur.execute(sql)
        return info.value

    dup = raised(
        "DO $$ BEGIN RAISE EXCEPTION 'duplicate key value violates unique constraint"
        " \"memory_receipt_pkey_102008\"' USING ERRCODE = 'XX000'; END $$"
    )
    assert isinstance(dup, InternalError) and duplicate_key(dup)
    other = raised("DO $$ BEGIN RAISE EXCEPTION 'something else' USING ERRCODE = 'XX000'; END $$")
    assert isinstance(other, InternalError) and not duplicate_key(other)
    Space.objects.create(space_id="dup", display_name="d")
    same = raised("INSERT INTO memory_space SELECT * FROM memory_space")
    assert isinstance(same, IntegrityError) and duplicate_key(same)
    assert getattr(same.__cause__, "sqlstate", None) == "23505"
