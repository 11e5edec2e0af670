"""Transfer at scale (issue 17): the fast canonical JSON export and staging use is byte for byte
RFC 8785; activation writes records, history, term rows and the embedding backlog set-wise (COPY
on PostgreSQL, bulk_create elsewhere), BATCH at a time, and the result is exactly what the
row-by-row write paths make; a fault in the middle of an activation leaves the space and the
verified import as they were."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import (
    Import,
    PendingEmbedding,
    Receipt,
    Record,
    RecordRevision,
    RecordTerm,
    Space,
    Subject,
)
from memory.services import derived, hybrid_store, term_store
from memory.services import transfer_load as load
from memory.services.transfer_codec import canonical
from memory.timeutil import parse
from memory.wire.canonical import canonical as reference
from tests.conftest import embedding_writer
from tests.memory.ops.test_transfer import (
    export,
    fresh_target,
    import_and_activate,
    objects,
    stage_all,
)

from .conftest import delete_record, make_candidate, make_profile, make_record, subject_row

# --- canonical JSON ----------------------------------------------------------------------------

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.integers()  # outside the safe range: the reference's error
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def outcome(fn, value):
    try:
        return fn(value)
    except Exception as err:  # noqa: BLE001 (the error's type is what is compared)
        return type(err)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_fast_canonical_is_rfc8785_byte_for_byte(value):
    assert outcome(canonical, value) == outcome(reference, value)


@pytest.mark.parametrize(
    "value",
    [
        {"text": "".join(chr(c) for c in range(0x80)) + "\u2028\u2029\x7f é 中 😀"},
        {"\ue000": 1, "😀": 2, "b": 3},  # UTF-16 order differs from code point order here
        {"z": 1.0, "a": [1e21, -0.0, 5e-7, 0.1]},
        {"n": 2**53, "m": -(2**53)},
        {"ok": [[], {}, True, False, None, "", 0]},
        ("a", "tuple"),
        {"lone": "\ud800"},
    ],
)
def test_fast_canonical_edge_cases(value):
    assert outcome(canonical, value) == outcome(reference, value)


# --- activation ----------------------------------------------------------------------------------

pytestmark = pytest.mark.django_db


@pytest.fixture
def sess(api, admin):
    return api.connect(admin)


@pytest.fixture
def queued_embeddings(settings):
    """A hybrid engine's writer registered (it queues; nothing here embeds)."""
    with embedding_writer(settings, "hybrid/6"):
        yield


@pytest.fixture
def source(space, settings):
    """A space with more records than a few batches, of varied text, history and tombstones."""
    settings.SPOKE_MEMORY_LIMITS = {**settings.SPOKE_MEMORY_LIMITS, "export_chunk_bytes": 4096}
    u1, u2 = subject_row("s1", "u1"), subject_row("s1", "u2")
    texts = [
        "The user prefers green tea in the morning",
        "Straße ＡＢＣ café — running memories 東京 ☂",
        "the and of",  # stop words only: no term rows
        "",  # no text at all
        "tea tea tea, more tea",
        "x" * 250 + " long word dropped",
    ]
    recs = []
    for i in range(17):
        subject = u1 if i % 3 else u2
        rec = make_record(
            subject,
            f"{texts[i % len(texts)]} {i}" if i % 6 != 3 else "",
            context_id="c1" if i % 2 else None,
            revisions=1 + i % 3,
        )
        recs.append(rec)
    delete_record(recs[4])
    delete_record(recs[9])
    make_candidate(u1)
    make_profile(u2)
    return recs


def rows_of(space_id: str) -> dict:
    """Everything activation writes for a space's records, keyed by record_id."""
    out = {}
    # each table read naming the space (a join on the ids alone is a repartition join on Citus)
    subjects = dict(Subject.objects.filter(space_id=space_id).values_list("pk", "subject_id"))
    for r in Record.objects.filter(space_id=space_id):
        fields = {
            f.attname: getattr(r, f.attname)
            for f in Record._meta.concrete_fields
            if f.attname not in ("id", "space_id", "subject_id")
        }
        out[r.record_id] = {
            "subject": subjects[r.subject_id],
            "fields": fields,
            "revisions": list(
                RecordRevision.objects.filter(record=r)
                .order_by("revision")
                .values_list(
                    "revision", "kind", "content", "placement_scope", "placement_context_id"
                )
            ),
            "terms": sorted(
                RecordTerm.objects.filter(record=r).values_list(
                    "subject_id", "term", "tf", "length", "created_ms"
                )
            ),
            # The row-by-row writer's term rows for the stored record: the oracle.
            "expected_terms": sorted(
                (t.subject_id, t.term, t.tf, t.length, t.created_ms)
                for t in term_store.term_rows(r)
            ),
            "pending": list(
                PendingEmbedding.objects.filter(record=r).values_list("revision", flat=True)
            ),
        }
    return out


def test_activation_in_many_batches_equals_row_by_row(
    api, admin, sess, source, run_job_now, monkeypatch, queued_embeddings
):
    monkeypatch.setattr(load, "BATCH", 3)  # 17 records: six record batches
    bundle, chunks = export(api, admin, sess, run_job_now)
    assert bundle["chunk_count"] > 1
    fresh_target(api, admin)
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)

    got, src = rows_of("s2"), rows_of("s1")
    assert set(got) == set(src) and len(got) == 17
    for record_id, row in got.items():
        record = Record.objects.get(space_id="s2", record_id=record_id)
        assert row["subject"] == src[record_id]["subject"]
        assert row["fields"] == src[record_id]["fields"]
        # History: the current revision only, with the current content.
        f = row["fields"]
        assert row["revisions"] == [
            (
                f["revision"],
                f["kind"],
                f["content"],
                f["placement_scope"],
                f["placement_context_id"],
            )
        ]
        assert row["terms"] == row["expected_terms"]
        assert all(subject == record.subject_id for subject, *_ in row["terms"])
        # The embedding backlog: every record with text at its revision, as the writer queues.
        assert row["pending"] == ([f["revision"]] if f["text"] else [])
    assert any(row["terms"] for row in got.values())
    assert any(not row["terms"] for row in got.values())  # tombstones, stop words, empty text
    assert (
        sum(len(r["terms"]) for r in got.values())
        == RecordTerm.objects.filter(space_id="s2").count()
    )

    again, again_chunks = export(api, admin, sess, run_job_now, space_id="s2")
    assert again["chunk_digests"] == bundle["chunk_digests"]
    assert objects(again_chunks) == objects(chunks)


def test_activation_without_a_hybrid_engine_queues_no_embeddings(
    api, admin, sess, source, run_job_now, monkeypatch, settings
):
    settings.SPOKE_MEMORY_ENGINE = "engine/2"  # the writer may be registered; it checks this
    assert not hybrid_store.enabled()
    monkeypatch.setattr(load, "BATCH", 4)
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    assert Record.objects.filter(space_id="s2").count() == 17
    assert not PendingEmbedding.objects.exists()
    assert RecordTerm.objects.filter(space_id="s2").exists()


def test_other_derived_writers_still_see_every_record(
    api, admin, sess, source, run_job_now, monkeypatch
):
    seen: list[tuple[str, int, str]] = []

    def index(records):
        seen.extend((r.record_id, r.revision, r.text) for r in records)

    monkeypatch.setattr(derived, "WRITERS", [*derived.WRITERS, index])
    monkeypatch.setattr(load, "BATCH", 5)
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    seen.clear()
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    stored = Record.objects.filter(space_id="s2").values_list("record_id", "revision", "text")
    assert sorted(seen) == sorted(stored)


def test_reactivation_clears_the_previous_records_derived_rows(
    api, admin, sess, source, run_job_now, queued_embeddings
):
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    first = set(Record.objects.filter(space_id="s2").values_list("pk", flat=True))
    assert PendingEmbedding.objects.filter(record_id__in=first).exists()
    # A second activation into the same space: the backlog rows and term rows of the replaced
    # records go with them (a plain DELETE of the records would violate their foreign keys).
    import_and_activate(api, admin, sess, bundle, chunks, run_job_now)
    second = set(Record.objects.filter(space_id="s2").values_list("pk", flat=True))
    assert first.isdisjoint(second) and len(second) == 17
    assert not PendingEmbedding.objects.filter(record_id__in=first).exists()
    assert not RecordTerm.objects.filter(record_id__in=first).exists()
    assert Space.objects.get(pk="s2").authority_generation == 3


def snapshot(space_id: str) -> dict:
    space = Space.objects.get(pk=space_id)
    return {
        # The revision moves with the activate request itself (a committed mutation).
        "generation": space.authority_generation,
        "records": sorted(
            Record.objects.filter(space_id=space_id).values_list("pk", "record_id", "text")
        ),
        "revisions": RecordRevision.objects.filter(space_id=space_id).count(),
        "terms": sorted(
            RecordTerm.objects.filter(space_id=space_id).values_list("record_id", "term", "tf")
        ),
    }


def test_a_fault_mid_activation_loses_nothing(api, admin, sess, source, run_job_now, monkeypatch):
    monkeypatch.setattr(load, "BATCH", 3)
    bundle, chunks = export(api, admin, sess, run_job_now)
    fresh_target(api, admin)
    old = make_record(subject_row("s2", "old"), "kept until an activation commits")
    derived.content_written([old])
    import_id, final = stage_all(api, admin, sess, bundle, chunks)
    assert run_job_now(final["receipt_id"]).status == "committed"
    before = snapshot("s2")
    assert before["terms"]

    calls = {"n": 0}
    real = load.insert_rows

    def failing(model, names, rows):
        calls["n"] += 1
        if calls["n"] == 7:  # records, history and terms of two batches went in already
            raise RuntimeError("the database went away")
        return real(model, names, rows)

    monkeypatch.setattr(load, "insert_rows", failing)
    answer = api(admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess)
    receipt = run_job_now(answer.receipt["receipt_id"])
    assert calls["n"] == 7
    assert receipt.status == "failed" and receipt.failure["code"] == "internal_error"
    assert snapshot("s2") == before  # nothing of the half-done activation, nothing of ours lost
    imp = Import.objects.get(pk=import_id)
    assert imp.state == "verified"  # the acknowledged, verified import can be activated again
    assert "database" not in json.dumps(imp.failure)  # no internals in the stored failure

    monkeypatch.setattr(load, "insert_rows", real)
    again = api(admin, "memory.imports.activate", {"space_id": "s2", "import_id": import_id}, sess)
    assert run_job_now(again.receipt["receipt_id"]).status == "committed"
    assert Receipt.objects.get(pk=again.receipt["receipt_id"]).status == "committed"
    assert not Record.objects.filter(space_id="s2", record_id=old.record_id).exists()
    reexport, re_chunks = export(api, admin, sess, run_job_now, space_id="s2")
    assert reexport["chunk_digests"] == bundle["chunk_digests"]


def test_term_values_are_term_rows(source):
    for record in Record.objects.filter(space_id="s1"):
        rows = term_store.term_rows(record)
        values = (
            term_store.term_values(record.text, record.created_at)
            if record.deleted_at is None
            else []
        )
        assert values == [(t.term, t.tf, t.length, t.created_ms) for t in rows]


# --- verification memory ---------------------------------------------------------------------


def test_a_bundle_with_nothing_referring_to_records_keeps_no_record_index(
    api, admin, sess, source, run_job_now
):
    from memory.services.transfer_verify import BundleChecker

    _bundle, chunks = export(api, admin, sess, run_job_now)
    records_only = [o for o in objects(chunks) if o["type"] in ("subject", "record")]
    declared = {"subject": 2, "record": 17, "candidate": 0, "profile_document": 0, "reflection": 0}
    checker = BundleChecker(declared)
    for n, obj in enumerate(records_only):
        checker.check(f"object {n}", obj)
    assert checker.counts == declared and checker.records == {} and checker.provenance == {}
    # With a candidate declared, the index is kept (its outcome may name records).
    full = BundleChecker({**declared, "candidate": 1})
    for n, obj in enumerate(records_only):
        full.check(f"object {n}", obj)
    assert len(full.records) == 17


def test_a_candidate_in_a_bundle_declaring_none_rejects(api, admin, sess, source, run_job_now):
    from tests.memory.ops.test_transfer import resigned, verify

    bundle, chunks = export(api, admin, sess, run_job_now)
    assert bundle["object_counts"]["candidate"] == 1
    bundle, chunks = resigned(
        {**bundle, "object_counts": {**bundle["object_counts"], "candidate": 0}}, chunks
    )
    fresh_target(api, admin)
    import_id, receipt = verify(api, admin, sess, bundle, chunks)
    assert receipt.status == "failed" and receipt.failure["code"] == "INVALID_INPUT"
    assert receipt.failure["message"] == "The objects do not match the bundle's object_counts."
    imp = Import.objects.get(pk=import_id)
    assert imp.state == "rejected" and not Record.objects.filter(space_id="s2").exists()


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-05T01:02:03.456Z",  # the form every export writes: the C parser
        "0001-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "2026-12-05T01:02:03Z",  # any other form: memory.timeutil.parse
        "2026-12-05T03:02:03.456789+02:00",
    ],
)
def test_activation_reads_times_as_parse_does(value):
    fast, reference = load._time(value), parse(value)
    assert fast == reference and fast.utcoffset() == reference.utcoffset()
    assert fast.microsecond == reference.microsecond and str(fast) == str(reference)
