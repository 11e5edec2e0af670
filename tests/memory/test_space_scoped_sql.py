"""Every statement on a space-scoped table names its space (issue 30, docs/scaling.md "Citus
layout"): the 33 ops through the HTTP edge (the suite's `api()`), their jobs run in-process as a
worker runs them, the embedding drain and the sweepers, under engine/2 and hybrid/6 (the served
engines), with every SQL statement recorded (`connection.execute_wrapper`; the import loader's COPY
statements through its `insert_rows`). A statement touching a space-scoped table without an
equality predicate on its `space_id` (or a co-located join to one that has it, or `space_id` in an
INSERT's column list) fails the test, unless it is one of EXCEPTIONS: the genuinely cross-space
reads, each with its reason (the same list is in docs/scaling.md). Not recorded: the job
heartbeat thread's statements (its own connection; `memory.tasks.Heartbeat` names the space in
each) and SQLite's paths (the layout is PostgreSQL's)."""

from __future__ import annotations

import os

import pytest

from memory import tasks
from memory.models import Export, Import, Job, Receipt
from memory.services import transfer_jobs, transfer_load
from memory.services.operators import issue_root_grant
from memory.services.vectors import queue as vector_queue
from tests.conftest import CITUS, embedding_writer, make_persona, make_space, requires_postgres
from tests.space_sql import Recorder, recording, space_scoped_tables, task_counts

pytestmark = [pytest.mark.django_db]

# (phase, table, a text the statement holds) -> why the statement cannot name one space. Phases
# are op names (with a `#variant` where one op has two paths), `job:<kind>`, `drain`,
# `sweep:<what>`. The same list, with the same reasons, is in docs/scaling.md.
EXCEPTIONS: dict[tuple[str, str, str], str] = {
    ("memory.spaces.list", "memory_grant", ""): (
        "spaces.list asks which spaces the caller holds grants in: a read across spaces by"
        " principal (fans out to every shard)"
    ),
    ("memory.spaces.list", "memory_space", ""): (
        "spaces.list reads the rows of the spaces it found (`space_id IN (…)`, one per space)"
    ),
    ("memory.spaces.list", "memory_receipt", ""): (
        "spaces.list counts each listed space's pending receipts (`space_id IN (…)`)"
    ),
    ("memory.receipts.get#by-id", "memory_receipt", '"receipt_id" = %s'): (
        "receipts.get by receipt_id alone: the request names no space and a receipt id carries"
        " none (fans out; the by-key form names its space)"
    ),
    ("memory.records.delete", "memory_importchunk", '"bundle" -> '): (
        "erasure finds the staged imports, into any space, of a bundle exported from this one"
        " that hold the record (docs/protocol.md#content: copies in transit are erased too); each discard"
        " then names its space"
    ),
    ("memory.records.delete", "memory_import", '"bundle" -> '): (
        "the same search's join of the staged imports"
    ),
    ("sweep:jobs", "memory_job", "enqueued_at"): (
        "the job sweeper finds stuck jobs in every space (a periodic scan; each re-queue then"
        " names its space)"
    ),
    ("sweep:jobs", "memory_jobheartbeat", "enqueued_at"): "the job sweeper's scan, its heartbeats",
    ("sweep:jobs", "memory_receipt", "enqueued_at"): "the job sweeper's scan, its receipts",
    ("sweep:exports", "memory_export", "committed_at"): (
        "the export sweeper finds exports past retention in every space (a periodic scan;"
        " each withdrawal then names its space)"
    ),
    ("sweep:imports", "memory_import", '"updated_at" <='): (
        "the import sweeper finds imports abandoned in staging in every space (a periodic scan;"
        " each discard then names its space)"
    ),
    ("drain", "memory_pendingembedding", "DISTINCT"): (
        "the embedding drain asks which spaces have a backlog (one scan; the work is then done"
        " space by space)"
    ),
    ("drain", "memory_pendingembedding", "COUNT("): (
        "the drain's log line and /readyz count the whole backlog"
    ),
    ("drain", "memory_space", ""): (
        "the drain's first run under a model lists the spaces, to queue each one's records"
        " that have no vector of it, space by space"
    ),
}

TEST = "test"  # the test's own set-up and look-ups: not judged

C1 = {"scope": "context", "context_id": "c1"}
TEXTS = [
    "Ada prefers green tea in the morning",
    "Ada is planning a trip to Japan in spring",
    "Ada's sister lives in Lisbon",
    "Ada dislikes loud restaurants",
]


class Scenario:
    def __init__(self, api, rec: Recorder, drain: bool) -> None:
        self.api, self.rec, self.drain_after = api, rec, drain
        with rec.phase(TEST):
            self.admin = make_persona("admin")
            self.space = make_space("s1")
            issue_root_grant(self.space, self.admin.principal)
        with rec.phase("connect"):
            self.session = api.connect(self.admin)
        self.seen: set[str] = set()

    def __call__(
        self, op: str, body: dict | None = None, variant: str = "", ok: bool = True, who=None
    ):
        self.seen.add(op)
        with self.rec.phase(op + variant):
            answer = self.api(who or self.admin, op, body or {}, None if who else self.session)
        if ok:
            assert answer.status == 200, (op, answer.body)
        receipt = answer.body.get("receipt")
        if receipt and receipt["status"] == "pending":
            self.run(receipt)
        if self.drain_after and receipt:
            self.drain()
        return answer

    def run(self, receipt: dict) -> Receipt:
        with self.rec.phase(TEST):
            kind = Job.objects.get(pk=receipt["receipt_id"]).kind
        with self.rec.phase(f"job:{kind}"):
            tasks.run_job(receipt["receipt_id"], receipt["space_id"])
        with self.rec.phase(TEST):
            done = Receipt.objects.get(pk=receipt["receipt_id"])
        assert done.status == Receipt.COMMITTED, done.failure
        return done

    def drain(self) -> None:
        vector_queue._caught_up = None  # the first drain of a process queues what has no vector
        with self.rec.phase("drain"):
            tasks.drain_derived()


def play(s: Scenario) -> bool:
    """Every op, job and sweeper once; True when the erasure discarded the staged copy."""
    sid = {"space_id": "s1"}
    s("memory.describe")
    s("memory.spaces.list")
    s("memory.subjects.ensure", {**sid, "subject_id": "u1", "idempotency_key": "e-1"})
    s("memory.subjects.ensure", {**sid, "subject_id": "u1", "idempotency_key": "e-1"}, "#replay")
    s("memory.subjects.get", {**sid, "subject_id": "u1"})
    with s.rec.phase(TEST):
        grantee = make_persona("grantee")
    grant = s(
        "memory.grants.grant",
        {**sid, "grantee_principal_id": grantee.id, "capabilities": ["records_read"]},
    ).receipt["refs"][0]["id"]
    s("memory.grants.list", {**sid, "view": "admin", "include_inactive": True})
    s("memory.grants.list", {**sid, "view": "own"}, "#own")
    s("memory.grants.revoke", {**sid, "grant_id": grant})
    records = [
        s(
            "memory.records.create",
            {**sid, "subject_id": "u1", "kind": "note", "content": {"text": t}, "placement": C1},
        ).receipt["refs"][0]["id"]
        for t in TEXTS
    ]
    s("memory.records.get", {**sid, "record_id": records[0]})
    s("memory.records.list", {**sid, "subject_id": "u1", "page_size": 2})
    s("memory.records.list", {**sid}, "#space")
    s(
        "memory.records.update",
        {**sid, "record_id": records[1], "expected_revision": 1, "content": {"text": "Japan!"}},
    )
    s(
        "memory.records.promote",
        {**sid, "record_id": records[2], "expected_revision": 1, "placement": {"scope": "shared"}},
    )
    captured = s(
        "memory.capture",
        {
            **sid,
            "subject_id": "u1",
            "capture_scope": {"placement": C1},
            "items": [{"content": {"text": "Ada likes jazz"}}, {"content": {"text": "noise"}}],
        },
    ).receipt["refs"]
    candidates = [r["id"] for r in captured if r["type"] == "candidate"]
    s("memory.candidates.list", {**sid, "subject_id": "u1"})
    s("memory.candidates.get", {**sid, "candidate_id": candidates[0]})
    s(
        "memory.candidates.review",
        {**sid, "candidate_id": candidates[0], "decision": {"action": "promote"}},
    )
    s("memory.candidates.dismiss", {**sid, "candidate_id": candidates[1]})
    s(
        "memory.profile.update",
        {**sid, "subject_id": "u1", "kind": "preferences", "content": {"text": "tea"}},
    )
    s("memory.profile.get", {**sid, "subject_id": "u1"})
    # a grantee narrowed to one subject: its reads select that subject of the space (issue 40:
    # they joined memory_subject on its id alone, which Citus refuses)
    with s.rec.phase(TEST):
        narrow = make_persona("narrow")
    s(
        "memory.grants.grant",
        {
            **sid,
            "grantee_principal_id": narrow.id,
            "capabilities": ["records_read", "recall", "candidates_read"],
            "subject_ids": ["u1"],
        },
        "#narrow",
    )
    n = {"variant": "#narrow", "who": narrow}
    assert s("memory.records.list", {**sid, "subject_id": "u1"}, **n).body["records"]
    assert s("memory.records.list", {**sid}, "#narrow-space", who=narrow).body["records"]
    s("memory.records.get", {**sid, "record_id": records[0]}, **n)
    s("memory.recall", {**sid, "subject_id": "u1", "query": {"text": "Japan"}}, **n)
    s("memory.candidates.list", {**sid, "subject_id": "u1"}, **n)
    s("memory.recall", {**sid, "subject_id": "u1", "query": {"text": "trip to Japan"}})
    s("memory.reflections.generate", {**sid, "subject_id": "u1"})
    s("memory.reflections.list", {**sid, "subject_id": "u1"})
    s("memory.reflections.state", {**sid, "subject_id": "u1"})
    s("memory.exports.create", {**sid})
    with s.rec.phase(TEST):
        export_id = Receipt.objects.get(op="memory.exports.create").refs[0]["id"]
    first = s("memory.exports.get", {**sid, "export_id": export_id, "ordinal": 0}).body
    bundle = first["bundle"]
    chunks = [first["chunk"]] + [
        s("memory.exports.get", {**sid, "export_id": export_id, "ordinal": n}).body["chunk"]
        for n in range(1, bundle["chunk_count"])
    ]
    # a copy in transit: the bundle staged (not activated) into a second space, which the
    # erasure finds across spaces and discards
    with s.rec.phase(TEST):
        issue_root_grant(make_space("s2"), s.admin.principal)
        held = s.api(
            s.admin,
            "memory.imports.stage",
            {"space_id": "s2", "bundle": bundle, "chunk": chunks[0]},
            s.session,
        )
        assert held.status == 200, held.body
        held_id = held.receipt["refs"][0]["id"]
    s(
        "memory.records.delete",
        {**sid, "record_id": records[3], "expected_revision": 1, "reason": "asked"},
    )
    with s.rec.phase(TEST):
        erased_in_transit = Import.objects.get(space_id="s2", pk=held_id).state == "discarded"
    s("memory.subjects.fence", {**sid, "subject_id": "u1", "action": "fence", "context_id": "c9"})
    s("memory.spaces.freeze", {**sid, "reason": "maintenance"})
    s("memory.spaces.unfreeze", {**sid})
    receipt = s(
        "memory.subjects.ensure", {**sid, "subject_id": "u2", "idempotency_key": "e-2"}
    ).receipt
    s("memory.receipts.get", {"receipt_id": receipt["receipt_id"]}, "#by-id")
    s(
        "memory.receipts.get",
        {**sid, "op": "memory.subjects.ensure", "idempotency_key": "e-2"},
    )
    # the bundle imported into the second space, and one staged import discarded
    s2 = {"space_id": "s2"}
    staged = s("memory.imports.stage", {**s2, "bundle": bundle, "chunk": chunks[0]})
    import_id = staged.receipt["refs"][0]["id"]
    for chunk in chunks[1:]:
        s("memory.imports.stage", {**s2, "import_id": import_id, "chunk": chunk}, "#next")
    s("memory.imports.activate", {**s2, "import_id": import_id})
    s("memory.exports.create", {**s2}, "#s2")
    other = s("memory.imports.stage", {**s2, "bundle": bundle, "chunk": chunks[0]}, "#again")
    other_id = other.receipt["refs"][0]["id"]
    s("memory.imports.discard", {**s2, "import_id": other_id})
    s("memory.recall", {**s2, "subject_id": "u1", "query": {"text": "Japan"}}, "#s2")
    # the periodic work, each sweeper with work to do: a job never delivered and out of
    # attempts, an export past retention, an import abandoned in staging; then the drain
    long_ago = "2000-01-01T00:00:00Z"
    with s.rec.phase(TEST):
        stuck = s.api(s.admin, "memory.exports.create", s2, s.session).receipt["receipt_id"]
        Job.objects.filter(space_id="s2", pk=stuck).update(
            enqueued_at=long_ago, attempts=tasks.MAX_ATTEMPTS
        )
        abandoned = s.api(
            s.admin, "memory.imports.stage", {**s2, "bundle": bundle, "chunk": chunks[0]}, s.session
        ).receipt["refs"][0]["id"]
        # (this bundle's one chunk ends staging at once: back to staging, as one whose later
        # chunks never came)
        Import.objects.filter(space_id="s2", pk=abandoned).update(
            state="staging", updated_at=long_ago
        )
    with s.rec.phase("sweep:jobs"):
        assert tasks.sweep_jobs()["failed"] == 1
    with s.rec.phase(TEST):
        assert Receipt.objects.get(space_id="s2", pk=stuck).status == Receipt.FAILED
        Export.objects.filter(space_id="s2", state=Export.READY).update(committed_at=long_ago)
    with s.rec.phase("sweep:exports"):
        assert transfer_jobs.sweep_exports()["withdrawn"] >= 1
    with s.rec.phase("sweep:imports"):
        assert transfer_jobs.sweep_imports()["discarded"] == 1
    with s.rec.phase(TEST):
        assert Import.objects.get(space_id="s2", pk=abandoned).state == "discarded"
    s.drain()
    return erased_in_transit


ENGINES = ["engine/2", "hybrid/6"]


@pytest.mark.postgres
@requires_postgres
@pytest.mark.parametrize("engine", ENGINES)
def test_every_statement_on_a_space_scoped_table_names_its_space(
    api, settings, monkeypatch, engine
):
    if engine.startswith("hybrid"):
        from memory.embedding import embed

        if embed.unavailable(embed.INT8_NAME):
            pytest.skip("the semantic extra is not installed")
    rec = Recorder()
    original = transfer_load.insert_rows

    def copy_rows(model, names, rows):  # the loader's COPY bypasses the cursor wrapper
        cols = ", ".join(model._meta.get_field(n).column for n in names)
        rec.record(f"COPY {model._meta.db_table} ({cols}) FROM STDIN")
        return original(model, names, rows)

    monkeypatch.setattr(transfer_load, "insert_rows", copy_rows)
    with embedding_writer(settings, engine), recording(rec):
        s = Scenario(api, rec, drain=engine.startswith("hybrid"))
        assert play(s), "the erasure left the staged copy of the erased record"
    from memory.wire.validation import catalog

    assert s.seen == set(catalog().ops), sorted(set(catalog().ops) - s.seen)
    labels = {st.label for st in rec.statements}
    assert {"job:export.create", "job:import.verify", "job:import.activate"} <= labels
    bad = rec.violations(EXCEPTIONS, skip={TEST})
    tally: dict[str, int] = {}
    for b in bad:
        for table in b.unnamed:
            tally[f"{b.label} {table}"] = tally.get(f"{b.label} {table}", 0) + 1
    print(f"{len(bad)} of {len(rec.statements)} statements name no space")
    print("\n".join(f"{n:4} {k}" for k, n in sorted(tally.items())))
    report = "\n".join(f"[{b.label}] {b.unnamed} {b.apart}: {b.sql[:3000]}" for b in bad)
    assert not bad, f"{len(bad)} statements name no space:\n{report}"
    if CITUS:
        check_plans(rec, engine)


def check_plans(rec: Recorder, engine: str) -> None:
    """On the Citus leg: EXPLAIN every recorded statement; each one naming its space is a router
    plan (`Task Count: 1`, one shard group), only the documented exceptions fan out, and no
    statement is refused. With SPOKE_MEMORY_CITUS_PLANS set, the per-phase table is appended to
    that file (bench/citus.sh)."""
    counted = task_counts([st for st in rec.statements if st.label != TEST])
    refused = [(st.label, st.unnamed, st.sql[:500]) for st, n, _ in counted if n < 0]
    assert not refused, refused
    spread = [(st.label, n, st.sql[:500]) for st, n, _ in counted if not st.unnamed and n > 1]
    assert not spread, spread
    phases: dict[str, list[tuple[int, int]]] = {}
    for st, n, steps in counted:
        phases.setdefault(st.label, []).append((n, steps))
    print(f"{len(counted)} statements explained under {engine}")
    path = os.environ.get("SPOKE_MEMORY_CITUS_PLANS")
    if path:
        with open(path, "a") as out:
            out.write(f"\n### {engine}: {len(counted)} statements explained\n\n")
            out.write(
                "| phase | statements | router (Task Count 1) | of which in steps"
                " (distributed subplans) | fan-out (Task Count) |\n"
            )
            out.write("|---|---|---|---|---|\n")
            for label in sorted(phases):
                ns = phases[label]
                fans = sorted({n for n, _ in ns if n > 1})
                steps = [k for n, k in ns if n <= 1 and k]
                out.write(
                    f"| `{label}` | {len(ns)} | {sum(1 for n, _ in ns if n <= 1)} |"
                    f" {f'{len(steps)} ({max(steps)} subplans at most)' if steps else '-'} |"
                    f" {', '.join(map(str, fans)) if fans else '-'} |\n"
                )


def test_the_checker_reads_the_statements_it_judges():
    from tests.space_sql import names_space, table_refs

    def unnamed(sql):
        return [r.table for r in names_space(sql, table_refs(sql))]

    assert unnamed('SELECT 1 FROM "memory_record" WHERE "memory_record"."id" = %s') == [
        "memory_record"
    ]
    assert not unnamed('SELECT 1 FROM "memory_record" WHERE "memory_record"."space_id" = %s')
    assert not unnamed(
        'SELECT 1 FROM "memory_record" o JOIN "memory_subject" sub ON sub."id" = o."subject_id"'
        ' AND sub."space_id" = o."space_id" WHERE o."space_id" = %s AND o."record_id" = %s'
    )
    assert unnamed(
        'SELECT 1 FROM "memory_record" o JOIN "memory_subject" sub ON sub."id" = o."subject_id"'
        ' WHERE o."space_id" = %s'
    ) == ["memory_subject"]
    assert not unnamed('INSERT INTO "memory_recordterm" ("record_id", "space_id") VALUES (%s, %s)')
    assert unnamed('INSERT INTO "memory_recordterm" ("record_id", "term") VALUES (%s, %s)') == [
        "memory_recordterm"
    ]
    assert unnamed('UPDATE "memory_job" SET "state" = %s WHERE "memory_job"."receipt_id" = %s')
    assert not unnamed('SELECT 1 FROM "memory_principal" WHERE "memory_principal"."id" = %s')
    assert unnamed('DELETE FROM "memory_record" WHERE "memory_record"."space_id" IN (%s, %s)')
    assert "memory_principal" not in space_scoped_tables()

    from tests.space_sql import not_colocated

    join = (
        'SELECT 1 FROM "memory_importchunk" INNER JOIN "memory_import"'
        ' ON ("memory_importchunk"."imp_id" = "memory_import"."import_id")'
        """ WHERE "memory_import"."state" = 'staging'"""
    )
    assert not_colocated(join, table_refs(join)) == ["memory_import"]
    join += ' AND "memory_import"."space_id" = ("memory_importchunk"."space_id")'
    assert not not_colocated(join, table_refs(join))
    sub = (
        'SELECT 1 FROM "memory_record" WHERE "memory_record"."space_id" = %s AND'
        ' "memory_record"."subject_id" IN (SELECT U0."id" FROM "memory_subject" U0'
        ' WHERE U0."space_id" = %s)'
    )
    assert not not_colocated(sub, table_refs(sub)) and not unnamed(sub)
    rec = Recorder("sweep:exports")
    rec.record('SELECT 1 FROM "memory_export" WHERE "memory_export"."state" = %s FOR UPDATE')
    exempt = {("sweep:exports", "memory_export", ""): "a scan across spaces"}
    assert rec.violations(exempt), "a fan-out that locks rows is not exempt"
    rec.statements.clear()
    rec.record('SELECT 1 FROM "memory_export" WHERE "memory_export"."state" = %s')
    assert not rec.violations(exempt)


def test_a_job_message_without_its_space_still_runs(api, admin, space):
    """Messages sent before run_job carried the space (a receipt id alone) still run their job:
    the space is looked up from the job row first."""
    sess = api.connect(admin)
    answer = api(admin, "memory.exports.create", {"space_id": "s1"}, sess)
    receipt_id = answer.receipt["receipt_id"]
    assert Job.objects.get(pk=receipt_id).space_id == "s1"
    tasks.run_job(receipt_id)
    done = Receipt.objects.get(pk=receipt_id)
    assert done.status == Receipt.COMMITTED and Job.objects.get(pk=receipt_id).state == Job.DONE
    tasks.run_job(receipt_id, "s1")  # a redelivery does nothing
    assert Receipt.objects.get(pk=receipt_id).completed_at == done.completed_at
    tasks.run_job("rct_unknown")  # an unknown job: nothing
    tasks.run_job(receipt_id, "s2")  # a space that is not the job's: nothing
    assert Job.objects.get(pk=receipt_id).attempts == 1


def test_a_scoped_save_updates_only_the_row_of_its_space(api, admin, space):
    """`SpaceScoped.save()` of a stored row updates WHERE pk AND space_id: a row whose space is
    not the one the instance carries is not touched."""
    from django.db import DatabaseError, transaction

    from memory.models import Subject

    api(admin, "memory.subjects.ensure", {"space_id": "s1", "subject_id": "u1"})
    subject = Subject.objects.get(space_id="s1", subject_id="u1")
    subject.kind = "changed"
    subject.save(update_fields=["kind"])
    assert Subject.objects.get(pk=subject.pk).kind == "changed"
    stray = Subject.objects.get(pk=subject.pk)
    stray.space_id, stray.kind = "elsewhere", "stray"
    with pytest.raises(DatabaseError), transaction.atomic():
        stray.save(update_fields=["kind"])  # no row of this pk in "elsewhere"
    assert Subject.objects.get(pk=subject.pk).kind == "changed"


@pytest.mark.single_node(
    reason="replays migrations, which move keys and constraints of distributed tables"
)
@pytest.mark.django_db(transaction=True)
def test_the_migration_copies_each_parents_space():
    """0017 fills the copied space_id of the rows reachable only through a parent (revisions,
    terms, vectors, backlog, jobs, heartbeats, chunks) from the parent, and drops a heartbeat
    whose receipt is gone."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from memory.timeutil import now

    before = [("memory", "0016_space_activation_pending")]
    after = [("memory", "0017_space_id_everywhere")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    m = {name: old.get_model("memory", name) for name in COPIED + PARENTS}
    at = now()
    try:
        for sid in ("ma", "mb"):
            m["Space"].objects.create(space_id=sid, created_at=at, updated_at=at)
        who = m["Principal"].objects.create(principal_id="p-mig", kind="service", created_at=at)
        for sid in ("ma", "mb"):
            subject = m["Subject"].objects.create(space_id=sid, subject_id="u", created_at=at)
            record = m["Record"].objects.create(
                space_id=sid,
                subject=subject,
                record_id=f"r-{sid}",
                kind="note",
                content={"text": "x"},
                placement_scope="shared",
                prov_source="authored",
                prov_author_principal_id="p",
                prov_created_at=at,
                created_at=at,
                updated_at=at,
            )
            common = {"record": record}
            m["RecordRevision"].objects.create(
                revision=1,
                kind="note",
                content={},
                placement_scope="shared",
                created_at=at,
                **common,
            )
            m["RecordTerm"].objects.create(
                subject=subject, term="x", tf=1, length=1, created_ms=0, **common
            )
            m["RecordEmbedding"].objects.create(
                subject=subject, revision=1, model_id="m", dim=1, vector=b"", **common
            )
            m["PendingEmbedding"].objects.create(revision=1, **common)
            receipt = m["Receipt"].objects.create(
                receipt_id=f"rct-{sid}",
                space_id=sid,
                principal=who,
                op="memory.exports.create",
                status="pending",
                payload_digest="d",
                created_at=at,
            )
            m["Job"].objects.create(receipt=receipt, kind="export.create", enqueued_at=at)
            m["JobHeartbeat"].objects.create(receipt_id=receipt.receipt_id, beat_at=at)
            export = m["Export"].objects.create(
                export_id=f"exp-{sid}", space_id=sid, principal=who, created_at=at
            )
            m["ExportChunk"].objects.create(export=export, ordinal=0, objects_json="[]", digest="d")
            imp = m["Import"].objects.create(
                import_id=f"imp-{sid}",
                space_id=sid,
                principal=who,
                bundle={},
                created_at=at,
                updated_at=at,
            )
            m["ImportChunk"].objects.create(imp=imp, ordinal=0, objects_json="[]", digest="d")
        m["JobHeartbeat"].objects.create(receipt_id="rct-gone", beat_at=at)
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        new = executor.loader.project_state(after).apps
        for name in COPIED:
            rows = sorted(new.get_model("memory", name).objects.values_list("space_id", flat=True))
            assert rows == ["ma", "mb"], name
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


COPIED = [
    "RecordRevision",
    "RecordTerm",
    "RecordEmbedding",
    "PendingEmbedding",
    "Job",
    "JobHeartbeat",
    "ExportChunk",
    "ImportChunk",
]
PARENTS = ["Space", "Principal", "Subject", "Record", "Receipt", "Export", "Import"]
