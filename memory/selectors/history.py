"""A record's revision history as a caller may read it (the console's record page; there is no
op for it). Visibility is the op's, per revision: the record must be one `memory.records.get`
answers the caller, and each stored revision is shown only when a `records_read` grant covers
the subject and *that revision's* placement, since a record promoted from c2 to c1 keeps its
c2 revisions, which a reader of c1 alone never could read (issue 26 item 3)."""

from datetime import datetime

from memory.access import access_record, coverage_for
from memory.models import Principal, RecordRevision

# the capability memory.records.get reads a record with (memory.ops.records.READ)
READ = "records_read"


def readable_revisions(
    principal: Principal, space_id: str, record_id: str, at: datetime
) -> list[RecordRevision]:
    """Newest first. NOT_FOUND (a WireError) when the record itself is not readable."""
    cov = coverage_for(space_id, principal, at)
    record = access_record(cov, record_id, [READ])
    subject_id = record.subject.subject_id
    return [
        r
        for r in RecordRevision.objects.filter(space_id=record.space_id, record=record).order_by(
            "-revision"
        )
        if cov.covers(READ, subject_id, r.placement_scope, r.placement_context_id)
    ]
