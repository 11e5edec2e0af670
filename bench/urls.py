"""Bench-only URLconf: the product's URLs plus the floor views, bare Django views doing the same
single-row select that memory.subjects.get and memory.records.get end with. Served only by the bench server
(`gunicorn 'bench:wsgi_app()'`), never by the product's urls."""

import json

from django.http import HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from spokememory.urls import urlpatterns as product


@csrf_exempt
def floor(request):
    from memory.models import Subject

    body = json.loads(request.body)
    subject = Subject.objects.filter(
        space_id=body["space_id"], subject_id=body["subject_id"]
    ).first()
    payload = {"subject": subject.to_wire()} if subject else {"error": {"code": "NOT_FOUND"}}
    return HttpResponse(json.dumps(payload, separators=(",", ":")), content_type="application/json")


@csrf_exempt
def floor_record(request):
    from memory.models import Record

    body = json.loads(request.body)
    record = (
        Record.objects.select_related("subject")
        .filter(space_id=body["space_id"], record_id=body["record_id"])
        .first()
    )
    payload = (
        {"record": record.to_wire(record.subject.subject_id)}
        if record
        else {"error": {"code": "NOT_FOUND"}}
    )
    return HttpResponse(json.dumps(payload, separators=(",", ":")), content_type="application/json")


@csrf_exempt
def floor_write(request):
    """The minimum a correct mutation needs: one durable transaction inserting one record row and
    moving the space revision by one (bench.writes compares memory.records.create with it)."""
    from django.db import transaction
    from django.db.models import F

    from memory.ids import new_id
    from memory.models import Record, Space
    from memory.timeutil import now

    body = json.loads(request.body)
    at = now()
    with transaction.atomic(durable=True):
        record = Record.objects.create(
            space_id=body["space_id"],
            subject_id=body["subject_pk"],
            record_id=new_id("record"),
            kind=body["kind"],
            content=body["content"],
            text=body["content"]["text"],
            placement_scope="shared",
            prov_source="authored",
            prov_author_principal_id=body["principal_id"],
            prov_created_at=at,
            created_at=at,
            updated_at=at,
        )
        Space.objects.filter(pk=body["space_id"]).update(revision=F("revision") + 1)
    payload = {"record_id": record.record_id}
    return HttpResponse(json.dumps(payload, separators=(",", ":")), content_type="application/json")


urlpatterns = [
    path("bench/floor", floor),
    path("bench/floor-record", floor_record),
    path("bench/floor-write", floor_write),
    *product,
]
