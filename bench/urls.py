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


urlpatterns = [path("bench/floor", floor), path("bench/floor-record", floor_record), *product]
