"""Receipt refs (docs/protocol.md#authorization): the typed `{type, id, revision?}` pointers a receipt carries to what
a mutation touched. One function per object type; every op and job builds its refs here."""

from memory.models import Candidate, Grant, ProfileDocument, Record, Space, Subject
from memory.wire import types as t


def space_ref(space: Space) -> t.Ref:
    """The space's revision after this mutation's bump (`mutate()` adds one at commit)."""
    return {"type": "space", "id": space.space_id, "revision": space.revision + 1}


def subject_ref(subject: Subject) -> t.Ref:
    return {"type": "subject", "id": subject.subject_id, "revision": subject.revision}


def grant_ref(grant: Grant) -> t.Ref:
    return {"type": "grant", "id": grant.grant_id, "revision": grant.revision}


def record_ref(record: Record) -> t.Ref:
    return {"type": "record", "id": record.record_id, "revision": record.revision}


def candidate_ref(candidate: Candidate) -> t.Ref:
    return {"type": "candidate", "id": candidate.candidate_id, "revision": candidate.revision}


def profile_ref(doc: ProfileDocument) -> t.Ref:
    return {"type": "profile_document", "id": doc.kind, "revision": doc.revision}


def reflection_ref(reflection_id: str) -> t.Ref:
    return {"type": "reflection", "id": reflection_id}


def export_ref(export_id: str) -> t.Ref:
    return {"type": "export", "id": export_id}


def import_ref(import_id: str) -> t.Ref:
    return {"type": "import", "id": import_id}
