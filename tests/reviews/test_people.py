"""Principals are named by display name everywhere, the `prn_…` id in the tooltip; a display
name is escaped like any other text."""

import pytest

from memory.models import Record
from tests.reviews.conftest import make_user

pytestmark = pytest.mark.django_db


def test_grants_and_record_pages_name_people(mod, moderator, capture, give):
    other, principal = make_user("other")
    principal.display_name = "<b>Grace</b>"
    principal.save()
    give(other, "records_read")
    html = mod.get("/console/s/s1/grants/").content.decode()
    assert f'title="{principal.principal_id}"' in html and "&lt;b&gt;Grace&lt;/b&gt;" in html
    (cid,) = capture("Ada prefers tea.")
    mod.post(
        f"/console/s/s1/candidates/{cid}/review/", {"action": "promote", "idempotency_key": "k"}
    )
    record = Record.objects.get(prov_candidate_id=cid)
    page = mod.get(f"/console/s/s1/records/{record.record_id}/").content.decode()
    assert ">Moderator</span>" in page
    assert f'title="{moderator.principal.principal_id}"' in page
