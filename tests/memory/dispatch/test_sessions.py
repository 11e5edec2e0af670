"""Sessions and capability negotiation (docs/protocol.md#sessions)."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def connect(api, who, flags):
    import json

    return api.raw("/v1/connect", json.dumps({"capabilities": flags}), token=who.token)


def test_negotiated_is_requested_intersect_served_sorted_unknown_ignored(api, admin):
    answer = connect(api, admin, ["spoke-memory-transfer", "spoke-memory", "x-unknown"])
    session = answer.body["session"]
    assert session["negotiated_capabilities"] == ["spoke-memory", "spoke-memory-transfer"]
    assert session["principal_id"] == admin.id
    assert session["session_id"].startswith("ses_")
    assert session["schema_version"] == 1


def test_sub_flag_needs_core(api, admin):
    session = connect(api, admin, ["spoke-memory-reflection"]).body["session"]
    assert session["negotiated_capabilities"] == []


def test_unserved_flag_is_not_negotiated(api, admin):
    with override_settings(SPOKE_MEMORY_SERVED_CAPABILITIES=["spoke-memory"]):
        session = connect(api, admin, ["spoke-memory", "spoke-memory-transfer"]).body["session"]
    assert session["negotiated_capabilities"] == ["spoke-memory"]


def test_connect_needs_authentication(api):
    import json

    answer = api.raw("/v1/connect", json.dumps({"capabilities": []}))
    assert answer.code == "unauthenticated"


def test_connect_rejects_unknown_members(api, admin):
    import json

    answer = api.raw("/v1/connect", json.dumps({"capabilities": [], "x": 1}), token=admin.token)
    assert answer.code == "invalid_input"


def test_session_negotiation_opens_sub_flag_ops(api, admin):
    session = api.connect(admin)
    answer = api(admin, "memory.describe", {}, session=session)
    assert answer.status == 200


def test_disconnect_without_session_header_is_session_invalid(api, admin):
    answer = api.raw("/v1/disconnect", b"{}", token=admin.token)
    assert answer.code == "session_invalid"
