"""Other people's clients: /v1/openapi.json names every component once (its own key as title),
and openapi-python-client (the common Python generator) builds a client from it that calls
memory.describe and a mutating op against a live server (issue 18, "Other people's clients")."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from memory.wire.openapi import document

GENERATOR = shutil.which("openapi-python-client") or str(
    Path(sys.executable).parent / "openapi-python-client"
)


def test_every_component_has_a_unique_title():
    schemas = document()["components"]["schemas"]
    titles = [s.get("title") for s in schemas.values()]
    assert all(t is not None for t in titles)
    assert len(set(titles)) == len(titles)
    assert all(schemas[name]["title"] == name for name in schemas)


def test_aliases_are_copies_under_their_own_title():
    schemas = document()["components"]["schemas"]
    create = schemas["memory.records.create.response"]
    assert "$ref" not in create and create["properties"] == schemas["ReceiptResponse"]["properties"]
    assert schemas["Receipt"]["properties"] == schemas["MemoryReceipt"]["properties"]
    fragments = schemas["ReviewDecision"]["oneOf"][1]["properties"]["fragments"]
    assert fragments["items"] == {"$ref": "#/components/schemas/ReviewFragment"}


@pytest.mark.skipif(not Path(GENERATOR).exists(), reason="openapi-python-client not installed")
def test_a_generated_client_calls_the_live_server(live_server, admin, tmp_path, monkeypatch):
    spec = httpx.get(f"{live_server.url}/v1/openapi.json").json()
    (tmp_path / "openapi.json").write_text(json.dumps(spec))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(  # noqa: S603 (the generator from the test extra, fixed arguments)
        [
            GENERATOR,
            "generate",
            "--path",
            str(tmp_path / "openapi.json"),
            "--output-path",
            str(tmp_path / "generated" / "spoke_generated"),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    monkeypatch.syspath_prepend(str(tmp_path / "generated"))
    client_mod = importlib.import_module("spoke_generated.client")
    describe = importlib.import_module("spoke_generated.api.spoke_memory.memory_describe")
    ensure = importlib.import_module("spoke_generated.api.spoke_memory.memory_subjects_ensure")
    models = importlib.import_module("spoke_generated.models")

    client = client_mod.AuthenticatedClient(base_url=live_server.url, token=admin.token)
    with client:
        described = describe.sync(client=client, body=models.MemoryDescribeRequest())
        assert isinstance(described, models.MemoryDescribeResponse)
        assert described.provider.protocol_version == "1"
        body = models.MemorySubjectsEnsureRequest(space_id="s1", subject_id="u1")
        ensured = ensure.sync(client=client, body=body)
        assert isinstance(ensured, models.MemorySubjectsEnsureResponse)
        assert ensured.receipt.status == "committed"
        assert ensured.receipt.refs[0].id == "u1"
        refused = ensure.sync(
            client=client, body=models.MemorySubjectsEnsureRequest(space_id="s9", subject_id="u1")
        )
        assert isinstance(refused, models.ErrorEnvelope)
        assert refused.error.code == "NOT_FOUND"
    for name in list(sys.modules):
        if name.startswith("spoke_generated"):
            del sys.modules[name]
