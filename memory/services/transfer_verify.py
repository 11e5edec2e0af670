"""Import verification of a bundle's objects (docs/protocol.md#ops): each object as strictly as a write of it,
with the write path's own validators, so a bundle can only make a space that writes could have
made. In the order the objects come (subject, record, candidate, profile_document, reflection,
then id), one pass:

- the wire schema of its type (ExportObject, after format translation);
- order: strictly increasing keys (no repeats);
- content: record content and a candidate's proposed content through
  memory.services.content.check_content (cognition records §6.2, then the byte budget §2.8),
  profile content through check_profile_content; a tombstoned record's content is exactly
  {"text": ""};
- filters and selections as a request's: a pinned cognition filter through the admission grammar
  (memory.engine.cognition.grammar_error), a pinned selection through check_selection;
- references: every object's subject is in the bundle; a candidate's outcome record_ids name
  records of the bundle of the same subject; a record's provenance candidate, when the bundle holds
  it, is of the same subject; a reflection's basis names records of the bundle of its subject at
  revisions they reached, profile documents of its subject likewise, pins the same cognition
  filter as the reflection, and its state_digest is the digest of that basis.

A failure is a WireError whose code is the write's (INVALID_INPUT, CONTENT_TOO_LARGE) and whose
message says where (chunk, object) and what, never the content."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from memory.engine import transfer as policy
from memory.engine.cognition import grammar_error
from memory.engine.reflect import basis_digest
from memory.selectors.selection import check_selection
from memory.services.content import check_content, check_profile_content
from memory.wire.errors import WireError
from memory.wire.validation import URN, catalog

ERASED = {"text": ""}
COUNTS_MISMATCH = "The objects do not match the bundle's object_counts."


@lru_cache(maxsize=1)
def object_validator() -> Any:
    """A validator of ExportObject built from the same schema files as the edge: the compiled
    one (~100x faster per object) when jsonschema-rs is installed, else the reference one."""
    cat = catalog()
    schema = {"$ref": URN + "ExportObject"}
    return cat.fast_validator(schema) or cat.validator(schema)


def reject(message: str, code: str = "INVALID_INPUT") -> WireError:
    return WireError.of(code, message)


class BundleChecker:
    """`declared`: the bundle's object_counts. A bundle that declares no candidates and no
    reflections has nothing that refers to its records, so the record index (the only part of
    the checker that grows with the bundle, ~170 bytes a record) is not kept; a candidate or
    reflection appearing in it anyway rejects at once, with the message the final count check
    would give."""

    def __init__(self, declared: dict[str, int] | None = None) -> None:
        self.referring = declared is None or any(
            declared.get(t, 0) for t in ("candidate", "reflection")
        )
        self.validator = object_validator()
        self.counts = policy.empty_counts()
        self.previous: tuple[Any, ...] | None = None
        self.subjects: set[str] = set()
        self.records: dict[str, tuple[str, int]] = {}  # record_id -> (subject_id, revision)
        self.provenance: dict[str, set[str]] = {}  # candidate_id -> subjects of its records
        self.profiles: dict[tuple[str, str], int] = {}  # (subject_id, kind) -> revision

    def check(self, where: str, obj: dict[str, Any]) -> None:
        if not self.validator.is_valid(obj):
            raise reject(f"{where}: does not match its schema.")
        key = policy.object_key(obj)
        if self.previous is not None and key <= self.previous:
            raise reject(f"{where}: out of order or repeated.")
        self.previous = key
        if not self.referring and obj["type"] in ("candidate", "reflection"):
            raise reject(COUNTS_MISMATCH)
        data = obj["data"]
        if obj["type"] != "subject" and data["subject_id"] not in self.subjects:
            raise reject(f"{where}: names a subject that is not in the bundle.")
        try:
            getattr(self, "_" + obj["type"])(where, data)
        except WireError as err:
            if err.message.startswith(where):
                raise
            raise reject(f"{where}: {err.message}", err.code) from None
        self.counts[obj["type"]] += 1

    def _subject(self, where: str, data: dict[str, Any]) -> None:
        self.subjects.add(data["subject_id"])

    def _record(self, where: str, data: dict[str, Any]) -> None:
        check_content(data["content"], "content")
        if "tombstone" in data and data["content"] != ERASED:
            raise reject(f'{where}: a tombstoned record\'s content is not {{"text": ""}}.')
        if not self.referring:
            return
        self.records[data["record_id"]] = (data["subject_id"], data["revision"])
        candidate_id = data["provenance"].get("candidate_id")
        if candidate_id is not None:
            self.provenance.setdefault(candidate_id, set()).add(data["subject_id"])

    def _candidate(self, where: str, data: dict[str, Any]) -> None:
        check_content(data["proposed"]["content"], "proposed.content")
        subject_id = data["subject_id"]
        for record_id in (data.get("outcome") or {}).get("record_ids", []):
            held = self.records.get(record_id)
            if held is None or held[0] != subject_id:
                raise reject(f"{where}: its outcome names a record that is not in the bundle.")
        # Records come before candidates: the records naming this one as their origin were seen.
        if self.provenance.get(data["candidate_id"], {subject_id}) != {subject_id}:
            raise reject(f"{where}: a record of another subject names it as its origin.")

    def _profile_document(self, where: str, data: dict[str, Any]) -> None:
        check_profile_content(data["content"])
        self.profiles[(data["subject_id"], data["kind"])] = data["revision"]

    def _reflection(self, where: str, data: dict[str, Any]) -> None:
        basis, subject_id = data["basis"], data["subject_id"]
        check_selection(basis["selection"])
        pinned = basis.get("cognition_filter")
        if pinned != data.get("cognition_filter"):
            raise reject(f"{where}: its basis pins another cognition filter than it names.")
        if pinned is not None and grammar_error(pinned) is not None:
            raise reject(f"{where}: its cognition filter is not one this provider supports.")
        for ref in basis["record_refs"]:
            held = self.records.get(ref["record_id"])
            if held is None or held[0] != subject_id or held[1] < ref["revision"]:
                raise reject(f"{where}: its basis names a record revision not in the bundle.")
        for ref in basis["profile_refs"]:
            revision = self.profiles.get((subject_id, ref["kind"]))
            if revision is None or revision < ref["revision"]:
                raise reject(
                    f"{where}: its basis names a profile document revision not in the bundle."
                )
        if basis_digest(basis) != basis["state_digest"]:
            raise reject(f"{where}: its state_digest is not the digest of its basis.")
