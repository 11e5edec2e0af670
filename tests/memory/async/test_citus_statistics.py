"""Planner statistics after a bulk write on a Citus cluster (memory.services.table_stats with
memory.services.citus.shard_rows): the coordinator's `pg_class` holds no rows of a distributed
table (its shell's `reltuples` stays 0 or -1 whatever the shards hold), so the decision to ANALYZE
reads the shards' own statistics on the workers — the shard holding the space the caller wrote.
Before, every bulk write of 50 rows or more analyzed every shard of what it wrote, however much
the space's shard already held. These run on the Citus leg only (tests/citus/run.sh)."""

import pytest
from django.db import connection

from memory.models import Record
from memory.services import table_stats
from tests.conftest import CITUS
from tests.memory.ops.test_transfer import export, fresh_target, import_and_activate

from .conftest import make_record, subject_row

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not CITUS, reason="needs the Citus leg (tests/citus/run.sh)"),
]

HELD = 200  # rows of s1 in its shard once analyzed: autovacuum's rule then asks 50 + 20 rows


def coordinator_reltuples(table: str) -> float:
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
        return float(cur.fetchone()[0])


@pytest.fixture
def held(space):
    u1 = subject_row("s1", "u1")
    for i in range(HELD):
        make_record(u1, f"note {i}")
    assert table_stats.analyze([Record]) == ["memory_record"]


def test_the_rows_believed_are_the_spaces_shards_not_the_coordinators(held):
    assert coordinator_reltuples("memory_record") <= 0  # the shell: what was read before
    assert table_stats.believed_rows([Record], "s1") == {"memory_record": HELD}


def test_a_write_small_beside_the_spaces_shard_analyzes_nothing(held):
    # Before: the coordinator's 0 made any 50 rows "grown", and every shard was analyzed.
    assert table_stats.analyze_grown({Record: 55}, "s1") == []
    assert table_stats.analyze_grown({Record: 50 + HELD // 10 - 1}, "s1") == []
    assert table_stats.analyze_grown({Record: 50 + HELD // 10 + 1}, "s1") == ["memory_record"]


def test_a_write_of_unknown_spaces_counts_the_least_a_shard_holds(held):
    # s1's rows sit in one of the 8 shards; a write naming no space may have gone to an empty one
    assert table_stats.believed_rows([Record]) == {"memory_record": 0.0}
    assert table_stats.analyze_grown({Record: 55}) == ["memory_record"]


def test_activation_analyzes_the_shard_it_filled_before_its_receipt(api, admin, held, run_job_now):
    sess = api.connect(admin)
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    # s2's shard was empty (or held others' rows, never s2's): the import crossed its threshold,
    # and ANALYZE inside the activation's transaction counted the rows it commits
    assert Record.objects.filter(space_id="s2").count() == HELD
    assert table_stats.believed_rows([Record], "s2")["memory_record"] >= HELD
