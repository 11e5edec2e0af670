"""A stateful model of retained records (docs/protocol.md#idempotency-§2.8, §3.5, §3.6, §5): random chains of
memory.records.create / .update / .delete / .promote, memory.capture, memory.candidates.review /
.dismiss, subject and context fences and space freezes, all through the real HTTP edge (bearer
token and session, the JSON spelled ASCII-escaped or not, members in any order, integers as N.0),
checked against an in-memory model:

- every answer (success, or the error code and its details) is the one the model predicts, with
  the gates in order: the edge (a number past ±(2**53-1)), the idempotency key, then docs/protocol.md#authorization:
  lookup (NOT_FOUND), op coverage (PERMISSION_DENIED), state gates (frozen, fenced, context
  fenced, tombstoned, consumed), content (cognition, then bytes), revision CAS;
- receipts name the refs and revisions the model expects and move the space revision by one; a
  replay (same key, same payload, however spelled) answers the original receipt and changes
  nothing; the key with another payload is IDEMPOTENCY_KEY_REUSED; an error consumes no key;
- records.list, paged with a random small page_size, yields the model's filtered set (coverage ∩
  subject ∩ selection ∩ provenance ∩ kinds, tombstones on request) exactly once each, newest
  first (ties by record_id, descending), with total_authorized on every page; a cursor survives a
  write elsewhere and is CURSOR_INVALID after a write to what it reads, for another caller or
  another request; candidates.list pages every candidate once, oldest first;
- after every mutating step, every record (tombstones included) reads back exactly as modelled;
  records.get of each, candidates, subjects and the space are read back in their own steps; no
  error or receipt carries memory content and no answer an integer past I-JSON's range.
Each example runs in a fresh space with fresh principals: an admin (root grant), a second writer
(records, capture, review; no admin) and a reader (records_read on context c1 only)."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import rfc8785
from django.conf import settings as django_settings
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from memory.engine.classify import classify
from memory.services.operators import issue_root_grant
from tests.conftest import Api, make_persona, make_space
from tests.memory.ops.capture_world import cognition_entry

pytestmark = pytest.mark.django_db

SUBJECTS = ["u1", "u2"]
GHOST = "ghost"  # never ensured: every op about it is NOT_FOUND (subject)
PLACEMENTS = [("shared", None), ("context", "c1"), ("context", "c2")]
KINDS = ["fact", "note", "plan", "preference", "event", "x_9"]
# docs/protocol.md#ops: labels that are kinds of memory
LABEL_KINDS = {"preference", "fact", "event", "plan"}
KEYS = ["k1", "ключ-🔑", "k" * 200]  # few, so keys meet again: replays and IDEMPOTENCY_KEY_REUSED
CALLERS = ["admin", "admin", "other", "reader"]
STATES = ["pending", "promoted", "fragmented", "dropped", "dismissed"]
INT_MEMBERS = ("expected_revision", "page_size")
LIMIT = django_settings.SPOKE_MEMORY_LIMITS["max_content_bytes"]
POLICY = django_settings.SPOKE_MEMORY_ENGINE
CANARY = "⟪memory-canary⟫"  # content no error message, detail or receipt may ever carry
GATES = [(action, context) for context in (None, "c1", "c2") for action in ("fence", "unfence")]
GATES += [
    ("freeze", None),
    ("unfreeze", None),
    ("unfreeze", None),
]  # a frozen space blocks every step
_spaces = itertools.count()

TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=24)
SHORT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=4)
SAFE = (
    2**53 - 1
)  # I-JSON's exact integer range: the edge refuses any number past it (docs/protocol.md#dispatch gate 3)
JSON_VALUES = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    SHORT,
    st.lists(st.integers(0, 3), max_size=2),
    st.floats(-SAFE, SAFE, allow_nan=False),
)
HUGE = st.floats(SAFE + 1, allow_infinity=False) | st.floats(
    max_value=-SAFE - 1, allow_infinity=False
)
KEY = st.one_of(st.none(), st.sampled_from(KEYS))
# How the JSON is spelled: (ensure_ascii, members in reverse order, integers as N.0).
ENCODING = st.tuples(st.booleans(), st.booleans(), st.booleans())
REV_MODE = st.sampled_from(["right", "right", "right", "stale", "ahead"])


@st.composite
def contents(draw, bad: bool = True, big: bool = False):
    """(content, problem): problem is None, "too_large", "bad_cognition" (docs/protocol.md#content, #cognition-validation) or
    "unstorable" (a number past ±(2**53-1)); `big` adds content of exactly max_content_bytes."""
    modes = (
        ["plain"] * 4
        + ["canary", "empty_cognition", "cognition", "cognition", "structured"]
        + (["at_limit"] if big else [])
    )
    mode = draw(
        st.sampled_from(modes + (["too_large", "bad_cognition", "unstorable"] if bad else []))
    )
    text = draw(TEXT)
    if (
        mode == "unstorable"
    ):  # PostgreSQL's jsonb would read 1e20 back as an integer past I-JSON's range
        return {"text": CANARY + text, "structured": {"n": draw(HUGE)}}, "unstorable"
    if mode == "canary":  # must never come back in an error or a receipt
        return {"text": CANARY + text, "structured": {"note": CANARY}}, None
    if mode == "empty_cognition":  # a present [] is a value of its own, kept as []
        return {"text": text, "cognition": []}, None
    if mode == "cognition":
        return {"text": text, "cognition": [cognition_entry(proposition=text or "p")]}, None
    if mode == "structured":
        return {
            "text": text,
            "structured": draw(st.dictionaries(SHORT, JSON_VALUES, max_size=3)),
        }, None
    if mode == "at_limit":  # exactly max_content_bytes: admitted
        return {"text": "y" * (LIMIT - len('{"text":""}'))}, None
    if mode == "too_large":  # one byte over
        return {
            "text": CANARY + "x" * (LIMIT - len('{"text":""}') - len(CANARY.encode()) + 1)
        }, "too_large"
    if mode == "bad_cognition":
        entry = {"view": "valid_at", "type": "belief", "proposition": CANARY}
        return {"text": CANARY + text, "cognition": [entry]}, "bad_cognition"
    return {"text": text}, None


SELECTIONS = st.one_of(
    st.none(),
    st.none(),
    st.sampled_from([{"mode": "all"}, {"mode": "shared"}]),
    st.builds(
        lambda mode, ids: {"mode": mode, "context_ids": sorted(ids)},
        st.sampled_from(["contexts", "contexts_and_shared"]),
        st.sets(st.sampled_from(["c1", "c2", "c9"]), min_size=1),
    ),
)
PROVENANCE = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "sources": st.sets(st.sampled_from(["capture", "authored", "import"]), min_size=1).map(
                sorted
            ),
            "principal_ids": st.sets(st.sampled_from(["admin", "other", "reader"]), min_size=1).map(
                sorted
            ),
            "source_context_ids": st.sets(st.sampled_from(["c1", "web"]), min_size=1).map(sorted),
        },
    ),
)


def canonical(body: dict) -> bytes:
    """ "The same payload" as docs/protocol.md#idempotency defines it: equal RFC 8785 canonical JSON."""
    return rfc8785.dumps(body)


def encode(body: dict, encoding: tuple[bool, bool, bool]) -> str:
    ascii_only, reverse, floats = encoding
    if floats:
        body = {k: float(v) if k in INT_MEMBERS else v for k, v in body.items()}
    if reverse:
        body = dict(reversed(list(body.items())))
    return json.dumps(body, ensure_ascii=ascii_only)


def placement_wire(p: tuple[str, str | None]) -> dict:
    return {"scope": "shared"} if p[0] == "shared" else {"scope": "context", "context_id": p[1]}


def selected(selection: dict | None, p: tuple[str, str | None]) -> bool:
    mode = (selection or {"mode": "all"})["mode"]
    in_contexts = p[0] == "context" and p[1] in (selection or {}).get("context_ids", [])
    return {
        "all": True,
        "shared": p[0] == "shared",
        "contexts": in_contexts,
        "contexts_and_shared": in_contexts or p[0] == "shared",
    }[mode]


def assert_ijson(node) -> None:
    """What the provider answers it would accept: no integer past ±(2**53-1) (RFC 7493)."""
    if isinstance(node, dict):
        for value in node.values():
            assert_ijson(value)
    elif isinstance(node, list):
        for value in node:
            assert_ijson(value)
    elif isinstance(node, int) and not isinstance(node, bool):
        assert abs(node) <= SAFE, "an answer carries an integer past I-JSON's range"


def edge_error(*problems: str | None) -> tuple | None:
    """A number past ±(2**53-1) anywhere in the body: refused at the edge, before any op gate and
    before the idempotency key is looked at."""
    return (400, "invalid_input", {"reason": "schema"}) if "unstorable" in problems else None


def content_error(problem: str | None, content: dict, **where) -> tuple | None:
    if problem == "bad_cognition":
        return (
            422,
            "INVALID_INPUT",
            {
                "reason": "invalid_cognition_record",
                "field": "content.cognition",
                "index": 0,
                **where,
            },
        )
    if problem == "too_large":
        return 413, "CONTENT_TOO_LARGE", {"limit": LIMIT, "size": len(canonical(content)), **where}
    return None


@dataclass
class MRecord:
    rid: str
    subject: str
    kind: str
    content: dict
    placement: tuple[str, str | None]
    provenance: dict  # the wire provenance, less created_at (learned at the first read)
    extensions: dict
    revision: int = 1
    created_at: str | None = None
    tombstone: dict | None = None

    @property
    def live(self) -> bool:
        return self.tombstone is None


@dataclass
class MCandidate:
    cid: str
    subject: str
    placement: tuple[str, str | None]
    source_context_id: str | None
    proposed: dict
    captured_by: str
    extensions: dict
    classification: dict
    captured_at: str | None = None
    state: str = "pending"
    revision: int = 1
    outcome: dict | None = None
    consumed_by: str | None = None


@dataclass
class MSubject:
    fenced: bool = False
    fenced_contexts: set[str] = field(default_factory=set)
    revision: int = 0


STEPS: dict[str, tuple[int, Callable, st.SearchStrategy]] = {}


def model_step(weight: int, when: Callable = lambda self: True, **arguments):
    """Register a step of the model: `RecordModel.step` draws it with this weight when `when`
    holds, then its arguments from these strategies."""

    def register(fn):
        STEPS[fn.__name__] = (weight, when, st.fixed_dictionaries(arguments))
        return fn

    return register


GRANTS = {
    "other": {
        "capabilities": ["candidates_read", "capture", "records_read", "records_write", "review"],
        "shared_access": True,
    },
    "reader": {"capabilities": ["records_read"], "context_ids": ["c1"]},
}


class RecordModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.api = Api()
        self.space_id = f"rm{next(_spaces)}"
        personas = {name: make_persona(name) for name in ("admin", "other", "reader")}
        issue_root_grant(make_space(self.space_id), personas["admin"].principal)
        self.people = {name: (p, self.api.connect(p)) for name, p in personas.items()}
        self.pid = {name: persona.id for name, persona in personas.items()}
        for name, grant in GRANTS.items():
            self.expect_ok(
                self.send(
                    "admin",
                    "memory.grants.grant",
                    {"space_id": self.space_id, "grantee_principal_id": self.pid[name], **grant},
                )
            )
        self.subjects = {s: MSubject() for s in SUBJECTS}
        for s in SUBJECTS:
            receipt = self.expect_ok(
                self.send(
                    "admin", "memory.subjects.ensure", {"space_id": self.space_id, "subject_id": s}
                )
            )["receipt"]
            self.subjects[s].revision = receipt["refs"][0]["revision"]
        self.space_revision, self.frozen = receipt["space_revision"], False
        # Mutations sent since the last full read of records / of everything else / of each get.
        self.dirty = self.unread = self.ungot = False
        self.records: dict[str, MRecord] = {}
        self.candidates: dict[str, MCandidate] = {}
        self.keys: dict[
            tuple[str, str, str], tuple[bytes, dict]
        ] = {}  # (who, op, key) -> (payload, receipt)
        self.refused: set[tuple[str, str, str]] = (
            set()
        )  # (who, op, key) of requests that answered an error
        self.floor = ""  # the newest created_at read so far: a later record must not read as older

    # -- the wire ----------------------------------------------------------------------------

    def send(self, who: str, op: str, body: dict, encoding=(True, False, False)):
        persona, session = self.people[who]
        answer = self.api.raw(
            f"/v1/ops/{op}", encode(body, encoding), token=persona.token, session=session
        )
        if answer.status != 200 or "receipt" in answer.body:
            self.assert_no_content(answer)
        assert_ijson(answer.body)
        return answer

    @staticmethod
    def assert_no_content(answer) -> None:
        """Errors and receipts never carry memory content (docs/protocol.md#errors, #receipts)."""
        raw = json.dumps(answer.body, ensure_ascii=False)
        assert CANARY not in raw, f"content leaked into {answer.status} {answer.code or 'receipt'}"

    @staticmethod
    def expect_ok(answer) -> dict:
        assert answer.status == 200, answer.body
        return answer.body

    def read_spaces(self) -> list[dict]:
        body = self.expect_ok(self.send("admin", "memory.spaces.list", {}))
        return [s for s in body["spaces"] if s["space_id"] == self.space_id]

    def read_subject(self, subject: str) -> dict:
        return self.expect_ok(
            self.send(
                "admin", "memory.subjects.get", {"space_id": self.space_id, "subject_id": subject}
            )
        )["subject"]

    def mutation(
        self, who: str, op: str, body: dict, key: str | None, encoding, expected: tuple | None
    ):
        """Send a mutation; check the answer against the key table first, then against `expected`
        (None: success, else (status, code, details ⊆)). Returns the receipt of a new commit,
        or None when nothing was (or may be) changed."""
        self.dirty = self.unread = self.ungot = True
        if key is not None:
            body = {**body, "idempotency_key": key}
        answer = self.send(who, op, body, encoding)
        if expected is not None and expected[0] == 400:  # the edge: no key is looked at
            assert (answer.status, answer.code) == expected[:2], (expected, answer.body)
            assert answer.error["details"]["reason"] == expected[2]["reason"]
            event(f"{op}: refused at the edge")
            return None
        payload = canonical({k: v for k, v in body.items() if k != "idempotency_key"})
        stored = self.keys.get((who, op, key)) if key is not None else None
        if stored is not None:
            if stored[0] == payload:
                assert answer.status == 200, answer.body
                assert answer.body["receipt"] == stored[1]
                event(f"{op}: replayed")
            else:
                assert (answer.status, answer.code) == (409, "IDEMPOTENCY_KEY_REUSED"), answer.body
                assert answer.error["details"]["receipt_id"] == stored[1]["receipt_id"]
                event(f"{op}: IDEMPOTENCY_KEY_REUSED")
            return None
        if key is not None and (who, op, key) in self.refused:
            event("a key an error left free, used again")
        if expected is not None:
            if key is not None:
                self.refused.add((who, op, key))
            status, code, details = expected
            assert (answer.status, answer.code) == (status, code), (expected, answer.body)
            got = answer.error.get("details", {})
            assert {k: got.get(k) for k in details} == details, (details, got)
            event(f"{op}: {code}")
            return None
        assert answer.status == 200, answer.body
        receipt = answer.body["receipt"]
        assert (receipt["op"], receipt["status"], receipt["space_id"]) == (
            op,
            "committed",
            self.space_id,
        )
        assert receipt["space_revision"] == self.space_revision + 1
        assert receipt.get("idempotency_key") == key
        self.space_revision += 1
        if key is not None:
            self.keys[(who, op, key)] = (payload, receipt)
        event(f"{op}: committed")
        return receipt

    # -- the model's gates -------------------------------------------------------------------

    def state_gate(self, subject: str, placements) -> tuple | None:
        if self.frozen:
            return 409, "SPACE_FROZEN", {}
        s = self.subjects[subject]
        if s.fenced:
            return 409, "SUBJECT_FENCED", {}
        for scope, context in placements:
            if scope == "context" and context in s.fenced_contexts:
                return 409, "CONTEXT_FENCED", {"context_id": context}
        return None

    def reads(self, who: str, p: tuple[str, str | None]) -> bool:
        return who != "reader" or p == ("context", "c1")

    def record_gate(self, who: str, r: MRecord, placements) -> tuple | None:
        """Steps (a)-(c) of docs/protocol.md#authorization for update/delete/promote of `r`."""
        if not self.reads(who, r.placement):
            return 404, "NOT_FOUND", {"resource": "record"}
        if who == "reader":
            return 403, "PERMISSION_DENIED", {"capability": "records_write"}
        gate = self.state_gate(r.subject, [r.placement, *placements])
        if gate is not None:
            return gate
        if not r.live:
            return 409, "RECORD_TOMBSTONED", {}
        return None

    def revision_for(self, r: MRecord, mode: str) -> int:
        return {"right": r.revision, "stale": max(1, r.revision - 1), "ahead": r.revision + 1}[mode]

    def cas(self, r: MRecord, expected_revision: int) -> tuple | None:
        if expected_revision != r.revision:
            return 409, "REVISION_CONFLICT", {"current_revision": r.revision}
        return None

    def touch(self, subject: str) -> None:
        self.subjects[subject].revision += 1

    def pick(self, table: dict, index: int):
        ids = sorted(table)
        return table[ids[index % len(ids)]]

    # -- reading back ------------------------------------------------------------------------

    def expected_wire(self, r: MRecord) -> dict:
        out = {
            "schema_version": 1,
            "record_id": r.rid,
            "space_id": self.space_id,
            "subject_id": r.subject,
            "kind": r.kind,
            "content": r.content,
            "placement": placement_wire(r.placement),
            "provenance": {**r.provenance, "created_at": r.created_at},
            "revision": r.revision,
            "created_at": r.created_at,
            "extensions": r.extensions,
        }
        return out

    def check_record(self, wire: dict) -> None:
        r = self.records[wire["record_id"]]
        tombstone = wire.get("tombstone")
        body = {k: v for k, v in wire.items() if k not in ("updated_at", "tombstone")}
        assert body == self.expected_wire(r), (body, self.expected_wire(r))
        assert wire["updated_at"] >= wire["created_at"]
        if r.tombstone is None:
            assert tombstone is None
        else:
            assert {k: v for k, v in tombstone.items() if k != "deleted_at"} == r.tombstone
            assert tombstone["deleted_at"] >= wire["created_at"]

    def get_record(self, who: str, r: MRecord) -> None:
        answer = self.send(
            who, "memory.records.get", {"space_id": self.space_id, "record_id": r.rid}
        )
        if self.reads(who, r.placement):
            self.check_record(self.expect_ok(answer)["record"])
        else:
            assert (answer.status, answer.code) == (404, "NOT_FOUND"), answer.body
            assert answer.error["details"]["resource"] == "record"

    def check_candidate(self, wire: dict) -> None:
        c = self.candidates[wire["candidate_id"]]
        scope = {"placement": placement_wire(c.placement)}
        if c.source_context_id is not None:
            scope["source_context_id"] = c.source_context_id
        expected = {
            "schema_version": 1,
            "candidate_id": c.cid,
            "space_id": self.space_id,
            "subject_id": c.subject,
            "capture_scope": scope,
            "proposed": c.proposed,
            "state": c.state,
            "classification": c.classification,
            "captured_by_principal_id": self.pid[c.captured_by],
            "captured_at": c.captured_at,
            "revision": c.revision,
            "extensions": c.extensions,
        }
        if c.outcome is not None:
            expected.update(outcome=c.outcome, consumed_by_principal_id=self.pid[c.consumed_by])
        body = {k: v for k, v in wire.items() if k != "consumed_at"}
        assert body == expected, (body, expected)
        assert ("consumed_at" in wire) == (c.outcome is not None)
        assert wire.get("consumed_at", c.captured_at) >= c.captured_at

    def expected_list(
        self, who: str, subject: str | None, selection, provenance, kinds, tombstoned: bool
    ):
        """The records a list should answer, in order; `provenance` as on the wire (ids)."""

        def keep(r: MRecord) -> bool:
            prov = r.provenance
            return (
                self.reads(who, r.placement)
                and (subject is None or r.subject == subject)
                and selected(selection, r.placement)
                and (
                    not provenance
                    or all(
                        (
                            prov["source"] in provenance.get("sources", [prov["source"]]),
                            prov["author_principal_id"]
                            in provenance.get("principal_ids", [prov["author_principal_id"]]),
                            "source_context_ids" not in provenance
                            or prov.get("source_context_id") in provenance["source_context_ids"],
                        )
                    )
                )
                and (kinds is None or r.kind in kinds)
                and (tombstoned or r.live)
            )

        rows = [r for r in self.records.values() if keep(r)]
        return sorted(rows, key=lambda r: (r.created_at, r.rid), reverse=True)

    def list_request(self, subject, selection, provenance, kinds, tombstoned) -> dict:
        req = {"space_id": self.space_id}
        if subject is not None:
            req["subject_id"] = subject
        if selection is not None:
            req["selection"] = selection
        if provenance is not None:
            req["provenance_filter"] = {
                k: sorted(self.pid[n] for n in v) if k == "principal_ids" else v
                for k, v in provenance.items()
            }
        if kinds is not None:
            req["kinds"] = sorted(kinds)
        if tombstoned:
            req["include_tombstoned"] = True
        return req

    # -- records -----------------------------------------------------------------------------

    def create(
        self, who, subject, kind, content, problem, placement, extensions, key, encoding
    ) -> bool:
        body = {
            "space_id": self.space_id,
            "subject_id": subject,
            "kind": kind,
            "content": content,
            "placement": placement_wire(placement),
        }
        if extensions is not None:
            body["extensions"] = extensions
        if edge_error(problem):
            expected = edge_error(problem)
        elif subject == GHOST:
            expected = (404, "NOT_FOUND", {"resource": "subject"})
        elif who == "reader":
            expected = (403, "PERMISSION_DENIED", {"capability": "records_write"})
        else:
            expected = self.state_gate(subject, [placement]) or content_error(problem, content)
        receipt = self.mutation(who, "memory.records.create", body, key, encoding, expected)
        if receipt is None:
            return False
        [ref] = receipt["refs"]
        assert ref["type"] == "record" and ref["id"].startswith("rec_") and ref["revision"] == 1
        assert ref["id"] not in self.records
        self.records[ref["id"]] = MRecord(
            ref["id"],
            subject,
            kind,
            content,
            placement,
            {"source": "authored", "author_principal_id": self.pid[who]},
            extensions or {},
        )
        self.touch(subject)
        return True

    @rule(data=st.data())
    def step(self, data):
        """One step of the model: which one (by weight, among those that apply), then its
        arguments; both are printed with a failing example. One rule rather than a rule per
        step: Hypothesis's swarm testing switches rules off per example, which at this budget
        left some steps (update, review) almost unexercised in a run."""
        names = [
            name for name, (weight, when, _) in STEPS.items() if when(self) for _ in range(weight)
        ]
        name = data.draw(st.sampled_from(names), label="step")
        getattr(self, name)(**data.draw(STEPS[name][2], label=name))

    @initialize(data=st.data())
    def seed(self, data):
        """A few records (and sometimes a reviewed capture, and a fenced context c2 of u2) to
        start from."""
        for n in range(data.draw(st.integers(0, 4), label="seed records")):
            created = self.create(
                "admin",
                data.draw(st.sampled_from(SUBJECTS), label=f"subject {n}"),
                data.draw(st.sampled_from(KINDS), label=f"kind {n}"),
                *data.draw(contents(bad=False), label=f"content {n}"),
                data.draw(st.sampled_from(PLACEMENTS), label=f"placement {n}"),
                None,
                None,
                (True, False, False),
            )
            assert created
        if data.draw(st.booleans(), label="seed a reviewed capture"):
            # Promoted, or fragmented into two records or more: siblings share created_at, so
            # the lists' tie order (record_id, descending) is exercised. The first item holds
            # cognition, so it is classified `cognition`: not a kind of memory, it makes a `note`.
            first = ({"text": "felt", "cognition": [cognition_entry()]}, None)
            items = [(first, None)] + data.draw(
                st.lists(st.tuples(contents(bad=False), st.none()), max_size=1), label="items"
            )
            self.capture(
                "admin",
                "u1",
                data.draw(st.sampled_from(PLACEMENTS), label="capture placement"),
                "web",
                items,
                None,
                None,
                (True, False, False),
            )
            [cid] = [c.cid for c in self.candidates.values() if c.state == "pending"][:1]
            action = data.draw(st.sampled_from(["promote", "fragment"]), label="review")
            self.review(
                "admin",
                sorted(self.candidates).index(cid),
                action,
                None,
                None,
                [(None, item) for item, _ in items] + [(None, ({"text": "part"}, None))],
                None,
                None,
                (True, False, False),
            )
            assert self.candidates[cid].state != "pending"
        if data.draw(st.booleans(), label="seed a fenced context"):
            self.gate("admin", "u2", ("fence", "c2"), None, (True, False, False))
            assert self.subjects["u2"].fenced_contexts == {"c2"}

    @model_step(
        3,
        who=st.sampled_from(CALLERS),
        subject=st.sampled_from(SUBJECTS * 4 + [GHOST]),
        kind=st.sampled_from(KINDS),
        content=contents(big=True),
        placement=st.sampled_from(PLACEMENTS),
        extensions=st.sampled_from(
            [None, None, {"acme": {"n": 1}}, {"x-y": {"é": [1, "ü"], "": None}}]
        ),
        key=KEY,
        encoding=ENCODING,
    )
    def create_record(self, who, subject, kind, content, placement, extensions, key, encoding):
        self.create(who, subject, kind, *content, placement, extensions, key, encoding)

    @model_step(
        3,
        when=lambda self: self.records,
        who=st.sampled_from(CALLERS),
        pick=st.integers(0, 99),
        change=st.sampled_from(["content", "kind", "both"]),
        kind=st.sampled_from(KINDS),
        content=contents(),
        rev=REV_MODE,
        key=KEY,
        encoding=ENCODING,
    )
    def update(self, who, pick, change, kind, content, rev, key, encoding):
        r = self.pick(self.records, pick)
        content, problem = content
        expected_revision = self.revision_for(r, rev)
        body = {
            "space_id": self.space_id,
            "record_id": r.rid,
            "expected_revision": expected_revision,
        }
        if change != "kind":
            body["content"] = content
        else:
            problem = None
        if change != "content":
            body["kind"] = kind
        expected = (
            edge_error(problem)
            or self.record_gate(who, r, [])
            or content_error(problem, content)
            or self.cas(r, expected_revision)
        )
        receipt = self.mutation(who, "memory.records.update", body, key, encoding, expected)
        if receipt is None:
            return
        r.revision += 1
        assert receipt["refs"] == [{"type": "record", "id": r.rid, "revision": r.revision}]
        if change != "kind":
            r.content = content
        if change != "content":
            r.kind = kind
        self.touch(r.subject)

    @model_step(
        2,
        when=lambda self: self.records,
        who=st.sampled_from(CALLERS),
        pick=st.integers(0, 99),
        captured=st.booleans(),
        rev=REV_MODE,
        reason=st.one_of(st.none(), TEXT),
        key=KEY,
        encoding=ENCODING,
    )
    def delete(self, who, pick, captured, rev, reason, key, encoding):
        """Delete leaves a tombstone and erases the content wherever it was stored: on the record
        and on the candidate it was reviewed from (`captured` prefers such records)."""
        reviewed = {
            rid: r for rid, r in self.records.items() if r.provenance["source"] == "capture"
        }
        r = self.pick(reviewed if captured and reviewed else self.records, pick)
        expected_revision = self.revision_for(r, rev)
        body = {
            "space_id": self.space_id,
            "record_id": r.rid,
            "expected_revision": expected_revision,
        }
        if reason is not None:
            body["reason"] = reason
        expected = self.record_gate(who, r, []) or self.cas(r, expected_revision)
        receipt = self.mutation(who, "memory.records.delete", body, key, encoding, expected)
        if receipt is None:
            return
        r.revision += 1
        r.content = {"text": ""}
        r.tombstone = {
            "deleted_by_principal_id": self.pid[who],
            **({"reason": reason} if reason is not None else {}),
        }
        refs = [{"type": "record", "id": r.rid, "revision": r.revision}]
        # The candidate the record came from holds the same material: erased too, once.
        c = self.candidates.get(r.provenance.get("candidate_id"))
        if c is not None and c.proposed["content"] != {"text": ""}:
            c.proposed = {**c.proposed, "content": {"text": ""}}
            c.revision += 1
            refs.append({"type": "candidate", "id": c.cid, "revision": c.revision})
        assert receipt["refs"] == refs
        self.touch(r.subject)
        event(f"delete: {'with' if len(refs) == 2 else 'without'} a candidate erased")

    @model_step(
        2,
        when=lambda self: self.records,
        who=st.sampled_from(CALLERS),
        pick=st.integers(0, 99),
        to=st.sampled_from(PLACEMENTS),
        into_fence=st.booleans(),
        rev=REV_MODE,
        key=KEY,
        encoding=ENCODING,
    )
    def promote(self, who, pick, to, into_fence, rev, key, encoding):
        """records.promote moves a record to another placement: the content, kind and provenance
        stay, the revision moves (docs/protocol.md#ops); it needs records_write on both placements, and
        neither may be a fenced context (`into_fence` aims at one when the subject has one)."""
        r = self.pick(self.records, pick)
        fenced = sorted(self.subjects[r.subject].fenced_contexts)
        if into_fence and fenced:
            to = ("context", fenced[pick % len(fenced)])
        expected_revision = self.revision_for(r, rev)
        body = {
            "space_id": self.space_id,
            "record_id": r.rid,
            "expected_revision": expected_revision,
            "placement": placement_wire(to),
        }
        expected = self.record_gate(who, r, [to]) or self.cas(r, expected_revision)
        receipt = self.mutation(who, "memory.records.promote", body, key, encoding, expected)
        if receipt is None:
            return
        r.revision += 1
        r.placement = to
        assert receipt["refs"] == [{"type": "record", "id": r.rid, "revision": r.revision}]
        self.touch(r.subject)

    # -- capture and review ------------------------------------------------------------------

    @model_step(
        2,
        who=st.sampled_from(CALLERS),
        subject=st.sampled_from(SUBJECTS * 4 + [GHOST]),
        placement=st.sampled_from(PLACEMENTS),
        source=st.sampled_from([None, None, "c1", "web"]),
        items=st.lists(
            st.tuples(contents(), st.one_of(st.none(), st.sampled_from(KINDS))),
            min_size=1,
            max_size=2,
        ),
        extensions=st.sampled_from([None, {"acme": {"k": "v"}}]),
        key=KEY,
        encoding=ENCODING,
    )
    def capture(self, who, subject, placement, source, items, extensions, key, encoding):
        scope = {"placement": placement_wire(placement)}
        if source is not None:
            scope["source_context_id"] = source
        wire_items = []
        for (content, _), hint in items:
            wire_items.append({"content": content, **({"kind_hint": hint} if hint else {})})
        body = {
            "space_id": self.space_id,
            "subject_id": subject,
            "capture_scope": scope,
            "items": wire_items,
        }
        if extensions is not None:
            body["extensions"] = extensions
        if edge_error(*(problem for (_, problem), _ in items)):
            expected = edge_error("unstorable")
        elif subject == GHOST:
            expected = (404, "NOT_FOUND", {"resource": "subject"})
        elif who == "reader":
            expected = (403, "PERMISSION_DENIED", {"capability": "capture"})
        else:
            expected = self.state_gate(subject, [placement])
            for index, ((content, problem), _) in enumerate(items):
                expected = expected or content_error(problem, content, item_index=index)
        receipt = self.mutation(who, "memory.capture", body, key, encoding, expected)
        if receipt is None:
            return
        refs = receipt["refs"]
        assert [(r["type"], r["revision"]) for r in refs] == [("candidate", 1)] * len(items)
        assert [r["id"] for r in refs] == sorted(r["id"] for r in refs)  # item order
        for ref, ((content, _), hint) in zip(refs, items, strict=True):
            self.candidates[ref["id"]] = MCandidate(
                ref["id"],
                subject,
                placement,
                source,
                {**({"kind": hint} if hint else {}), "content": content},
                who,
                extensions or {},
                classify(content, POLICY),
            )
        # One capture, one instant: learn it from the first candidate, the read-backs check the rest.
        first = self.expect_ok(
            self.send(
                who,
                "memory.candidates.get",
                {"space_id": self.space_id, "candidate_id": refs[0]["id"]},
            )
        )["candidate"]
        for ref in refs:
            self.candidates[ref["id"]].captured_at = first["captured_at"]
        self.check_candidate(first)
        self.touch(subject)

    def review_kind(self, c: MCandidate, chosen: str | None) -> str:
        if chosen is not None:
            return chosen
        if "kind" in c.proposed:
            return c.proposed["kind"]
        label = c.classification["label"]
        return label if label in LABEL_KINDS else "note"

    @model_step(
        2,
        when=lambda self: self.candidates,
        who=st.sampled_from(CALLERS),
        pick=st.integers(0, 99),
        action=st.sampled_from(["promote", "promote", "promote", "fragment", "drop", "dismiss"]),
        kind=st.one_of(st.none(), st.sampled_from(KINDS)),
        override=st.one_of(st.none(), contents()),
        fragments=st.lists(
            st.tuples(st.one_of(st.none(), st.sampled_from(KINDS)), contents()),
            min_size=1,
            max_size=3,
        ),
        reason=st.one_of(st.none(), TEXT),
        key=KEY,
        encoding=ENCODING,
    )
    def review(self, who, pick, action, kind, override, fragments, reason, key, encoding):
        c = self.pick(self.candidates, pick)
        op = "memory.candidates.dismiss" if action == "dismiss" else "memory.candidates.review"
        body = {"space_id": self.space_id, "candidate_id": c.cid}
        items: list[tuple[str, dict]] = []  # (kind, content) of each record the decision makes
        content_gate = None
        problems = []  # of the content the request carries
        if action == "promote":
            decision = {"action": "promote"}
            if kind is not None:
                decision["kind"] = kind
            content = c.proposed["content"]
            if override is not None:
                content, problem = override
                problems.append(problem)
                decision["content_override"] = content
                content_gate = content_error(problem, content)
            items = [(self.review_kind(c, kind), content)]
        elif action == "fragment":
            decision = {"action": "fragment", "fragments": []}
            for index, (fkind, (content, problem)) in enumerate(fragments):
                problems.append(problem)
                decision["fragments"].append(
                    {**({"kind": fkind} if fkind else {}), "content": content}
                )
                content_gate = content_gate or content_error(problem, content, fragment_index=index)
                items.append((self.review_kind(c, fkind), content))
        else:
            decision = {"action": "drop", **({"reason": reason} if reason is not None else {})}
        if action == "dismiss":
            body.update({"reason": reason} if reason is not None else {})
        else:
            body["decision"] = decision
        if action != "dismiss" and edge_error(*problems):
            expected = edge_error("unstorable")
        elif who == "reader":  # no candidates_read nor review: the candidate is invisible
            expected = (404, "NOT_FOUND", {"resource": "candidate"})
        else:
            expected = self.state_gate(c.subject, [c.placement])
            if expected is None and c.state != "pending":
                expected = (409, "CANDIDATE_CONSUMED", {})
            expected = expected or content_gate
        receipt = self.mutation(who, op, body, key, encoding, expected)
        if receipt is None:
            return
        c.state = {
            "promote": "promoted",
            "fragment": "fragmented",
            "drop": "dropped",
            "dismiss": "dismissed",
        }[action]
        c.revision += 1
        c.consumed_by = who
        record_refs = receipt["refs"][1:]
        assert receipt["refs"][0] == {"type": "candidate", "id": c.cid, "revision": c.revision}
        assert [(r["type"], r["revision"]) for r in record_refs] == [("record", 1)] * len(items)
        assert [r["id"] for r in record_refs] == sorted(r["id"] for r in record_refs)
        c.outcome = {"action": action, "record_ids": [r["id"] for r in record_refs]}
        if action in ("drop", "dismiss") and reason is not None:
            c.outcome["reason"] = reason
        provenance = {
            "source": "capture",
            "candidate_id": c.cid,
            "author_principal_id": self.pid[c.captured_by],
            "reviewer_principal_id": self.pid[who],
            "captured_at": c.captured_at,
        }
        if c.source_context_id is not None:
            provenance["source_context_id"] = c.source_context_id
        for ref, (rkind, content) in zip(record_refs, items, strict=True):
            self.records[ref["id"]] = MRecord(
                ref["id"], c.subject, rkind, content, c.placement, provenance, {}
            )
        self.touch(c.subject)

    # -- state gates -------------------------------------------------------------------------

    @model_step(
        2,
        who=st.sampled_from(["admin", "admin", "admin", "other"]),
        subject=st.sampled_from(SUBJECTS),
        gate=st.sampled_from(GATES),
        key=KEY,
        encoding=ENCODING,
    )
    def gate(self, who, subject, gate, key, encoding):
        """Fence or unfence a subject or one of its contexts, freeze or unfreeze the space."""
        action, context = gate
        if action in ("freeze", "unfreeze"):
            op, body = f"memory.spaces.{action}", {"space_id": self.space_id}
        else:
            op, body = (
                "memory.subjects.fence",
                {"space_id": self.space_id, "subject_id": subject, "action": action},
            )
            if context is not None:
                body["context_id"] = context
        if who != "admin":
            expected = (403, "PERMISSION_DENIED", {"capability": "space_admin"})
        elif (
            self.frozen and action != "unfreeze"
        ):  # unfreezing an active space is a committed no-op
            expected = (409, "SPACE_FROZEN", {})
        else:
            expected = None
        receipt = self.mutation(who, op, body, key, encoding, expected)
        if receipt is None:
            return
        if op != "memory.subjects.fence":
            self.frozen = action == "freeze"
            assert receipt["refs"] == [
                {"type": "space", "id": self.space_id, "revision": self.space_revision}
            ]
            return
        s = self.subjects[subject]
        if context is None:
            s.fenced = action == "fence"
        elif action == "fence":
            s.fenced_contexts.add(context)
        else:
            s.fenced_contexts.discard(context)
        self.touch(subject)
        assert receipt["refs"] == [{"type": "subject", "id": subject, "revision": s.revision}]

    # -- replays -----------------------------------------------------------------------------

    @model_step(1, when=lambda self: self.keys, pick=st.integers(0, 99), encoding=ENCODING)
    def replay(self, pick, encoding):
        """The same key and payload, however spelled: the original receipt, nothing executed."""
        who, op, key = sorted(self.keys)[pick % len(self.keys)]
        payload, _ = self.keys[(who, op, key)]
        self.mutation(who, op, json.loads(payload), key, encoding, None)  # the key table decides

    @model_step(
        2,
        when=lambda self: any(op == "memory.records.create" for _, op, _ in self.refused),
        pick=st.integers(0, 99),
        subject=st.sampled_from(SUBJECTS),
        content=contents(bad=False),
        encoding=ENCODING,
    )
    def retry_refused_key(self, pick, subject, content, encoding):
        """A request that answered an error consumed nothing: its key is free for a corrected
        retry (docs/protocol.md#idempotency), which the model predicts like any other create."""
        refused = sorted(k for k in self.refused if k[1] == "memory.records.create")
        who, _, key = refused[pick % len(refused)]
        self.create(who, subject, "note", *content, ("shared", None), None, key, encoding)

    # -- reads -------------------------------------------------------------------------------

    @model_step(
        2,
        when=lambda self: self.records,
        who=st.sampled_from(CALLERS),
        subject=st.sampled_from([None, None, *SUBJECTS]),
        selection=SELECTIONS,
        provenance=PROVENANCE,
        kinds=st.one_of(st.none(), st.none(), st.sets(st.sampled_from(KINDS), min_size=1)),
        tombstoned=st.booleans(),
        page_size=st.integers(1, 4),
        encoding=ENCODING,
    )
    def list_pages(
        self, who, subject, selection, provenance, kinds, tombstoned, page_size, encoding
    ):
        req = self.list_request(subject, selection, provenance, kinds, tombstoned)
        expected = self.expected_list(
            who, subject, selection, req.get("provenance_filter"), kinds, tombstoned
        )
        seen, cursor = [], None
        while True:
            body = {**req, "page_size": page_size, **({"cursor": cursor} if cursor else {})}
            page = self.expect_ok(self.send(who, "memory.records.list", body, encoding))
            assert page["total_authorized"] == len(expected)
            seen += page["records"]
            cursor = page["next_cursor"]
            if cursor is None:
                assert page["records"] or not expected, "an empty last page"
                break
            assert len(page["records"]) == page_size
            assert len(seen) < len(expected), "a cursor past the end"
        assert [r["record_id"] for r in seen] == [r.rid for r in expected]
        for wire in seen:
            self.check_record(wire)
        event(f"list: {len(expected)} records in {max(1, -(-len(expected) // page_size))} pages")

    @model_step(
        2,
        when=lambda self: sum(r.live for r in self.records.values()) >= 2,
        subject=st.sampled_from([None, *SUBJECTS]),
        elsewhere=st.booleans(),
        content=contents(bad=False),
        tombstoned=st.booleans(),
    )
    def cursor_across_a_write(self, subject, elsewhere, content, tombstoned):
        """A cursor is bound to the caller, the request and the revision of what it reads (the
        subject when named, else the space, docs/protocol.md#cursors): a write to another subject leaves a
        subject's cursor valid. (A named subject with fewer than two records lists the space.)"""
        expected = self.expected_list("admin", subject, None, None, None, tombstoned)
        if len(expected) < 2:
            subject = None
            expected = self.expected_list("admin", None, None, None, None, tombstoned)
        if len(expected) < 2:
            return
        others = [s for s in SUBJECTS if s != subject]
        write_subject = others[0] if elsewhere or subject is None else subject
        req = self.list_request(subject, None, None, None, tombstoned)
        first = self.expect_ok(self.send("admin", "memory.records.list", {**req, "page_size": 1}))
        assert [r["record_id"] for r in first["records"]] == [expected[0].rid]
        cursor = first["next_cursor"]
        for who, changed in (
            ("other", req),
            ("admin", {**req, "include_tombstoned": not tombstoned}),
        ):
            answer = self.send(
                who, "memory.records.list", {**changed, "page_size": 1, "cursor": cursor}
            )
            assert (answer.status, answer.code) == (409, "CURSOR_INVALID"), answer.body
        wrote = self.create(
            "admin",
            write_subject,
            "note",
            *content,
            ("shared", None),
            None,
            None,
            (True, False, False),
        )
        answer = self.send(
            "admin", "memory.records.list", {**req, "page_size": 1, "cursor": cursor}
        )
        if wrote and subject in (None, write_subject):
            assert (answer.status, answer.code) == (409, "CURSOR_INVALID"), answer.body
            event("cursor: invalid after a write to what it reads")
        else:
            assert [r["record_id"] for r in self.expect_ok(answer)["records"]] == [expected[1].rid]
            event("cursor: valid across a write elsewhere")

    @model_step(
        1,
        when=lambda self: self.records and self.ungot,
        who=st.sampled_from(["admin", "other", "reader"]),
        absent=st.sampled_from(["rec_01ARZ3NDEKTSV4RRFFQ69G5FAV", "rec_x", "rec_" + "Z" * 64]),
    )
    def get_each(self, who, absent):
        """records.get of every record, tombstones included (docs/protocol.md#ops), as modelled; an id that is
        no record is NOT_FOUND. (Only after a mutation: reads alone change nothing to read.)"""
        self.ungot = False
        for r in list(self.records.values()):
            self.get_record(who, r)
        answer = self.send(
            who, "memory.records.get", {"space_id": self.space_id, "record_id": absent}
        )
        assert (answer.status, answer.code, answer.error["details"]) == (
            404,
            "NOT_FOUND",
            {"resource": "record"},
        )

    @model_step(
        1,
        when=lambda self: self.unread,
        who=st.sampled_from(["admin", "other"]),
        page_size=st.sampled_from([200, 200, 2]),
    )
    def read_back(self, who, page_size) -> None:
        """The space, both subjects, the count of live records and every candidate (paged, oldest
        first, docs/protocol.md#ops), as modelled. (Only after a mutation.)"""
        self.unread = False
        [space] = self.read_spaces()
        assert (space["revision"], space["state"]) == (
            self.space_revision,
            "frozen" if self.frozen else "active",
        )
        for name, s in self.subjects.items():
            wire = self.read_subject(name)
            assert wire["revision"] == s.revision
            assert wire["state"] == ("fenced" if s.fenced else "active")
            assert wire["fenced_context_ids"] == sorted(s.fenced_contexts)
        live = self.expect_ok(
            self.send("admin", "memory.records.list", {"space_id": self.space_id, "page_size": 1})
        )
        assert live["total_authorized"] == sum(r.live for r in self.records.values())
        seen, cursor = [], None
        while True:
            page = self.expect_ok(
                self.send(
                    who,
                    "memory.candidates.list",
                    {
                        "space_id": self.space_id,
                        "states": STATES,
                        "page_size": page_size,
                        **({"cursor": cursor} if cursor else {}),
                    },
                )
            )
            assert page["total_authorized"] == len(self.candidates)
            seen += page["candidates"]
            cursor = page["next_cursor"]
            if cursor is None:
                break
            assert len(page["candidates"]) == page_size and len(seen) < len(self.candidates)
        order = sorted(self.candidates.values(), key=lambda c: (c.captured_at, c.cid))
        assert [c["candidate_id"] for c in seen] == [c.cid for c in order]
        for wire in seen:
            self.check_candidate(wire)

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def every_record_reads_as_modelled(self) -> None:
        """One list of everything, tombstones included: each record exactly as the model holds
        it, newest first. New records' times are learned here, and must not go back in time.
        Run after every step that sent a mutation (reads check what they read themselves)."""
        if not self.dirty:
            return
        self.dirty = False
        answer = self.expect_ok(
            self.send(
                "admin",
                "memory.records.list",
                {"space_id": self.space_id, "include_tombstoned": True, "page_size": 200},
            )
        )
        wires = answer["records"]
        for wire in wires:
            r = self.records.get(wire["record_id"])
            assert r is not None, "a record the model never made"
            if r.created_at is None:
                assert wire["created_at"] >= self.floor, "a later record reads as older"
                r.created_at = wire["created_at"]
        assert all(r.created_at is not None for r in self.records.values()), "a record is missing"
        self.floor = max([self.floor, *(r.created_at for r in self.records.values())])
        expected = self.expected_list("admin", None, None, None, None, True)
        assert [w["record_id"] for w in wires] == [r.rid for r in expected]
        assert answer["total_authorized"] == len(self.records) and answer["next_cursor"] is None
        for wire in wires:
            self.check_record(wire)


# CI's bound (about 30 s on SQLite); SPOKE_RECORD_MODEL_EXAMPLES=300 runs a deeper, slower sweep.
EXAMPLES = int(os.environ.get("SPOKE_RECORD_MODEL_EXAMPLES", "30"))


def test_records_behave_like_the_model():
    run_state_machine_as_test(
        RecordModel,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=20,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
