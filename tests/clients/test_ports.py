"""The availability probe in Python (`spoke_memory_client.MemoryPorts`): an adapter is answered as
the typed `MemoryPort` when its manifest (the provider's own `/v1/manifest`) names the role
`memory-provider` and the `spoke-memory` capability and it has every method of the port; else
None. The TypeScript and Rust probes have their own tests (clients/typescript/test,
clients/rust/tests), run by test_typescript.py and test_rust.py."""

from __future__ import annotations

import pytest
from spoke_memory_client import ConnectionFailed, MemoryClient, MemoryPorts
from spoke_memory_client._ports import PORT_METHODS

from memory.ops.port import InProcessMemoryPort
from memory.services.operators import issue_root_grant
from tests.conftest import make_persona, make_space


@pytest.fixture
def manifest(client) -> dict:
    answer = client.get("/v1/manifest")
    assert answer.status_code == 200
    return answer.json()


class WithManifest(InProcessMemoryPort):
    """An in-process port that carries its host's manifest, as an adapter registry would."""

    def __init__(self, manifest: object) -> None:
        super().__init__()
        self.manifest = manifest


@pytest.mark.django_db
def test_the_in_process_port_with_the_providers_manifest_is_a_memory_port(manifest):
    space = make_space("probe")
    app = make_persona("probe app")
    issue_root_grant(space, app.principal)
    assert MemoryPorts.serves(manifest) and MemoryPorts.serves(manifest["manifest"])
    port = MemoryPorts.as_memory(InProcessMemoryPort(), manifest)
    assert port is not None
    ensured = port.subjects_ensure(app.principal, {"space_id": "probe", "subject_id": "user:p"})
    assert ensured["receipt"]["status"] == "committed"
    assert MemoryPorts.as_memory(WithManifest(manifest)) is not None  # its own manifest
    assert len(PORT_METHODS) == 33


@pytest.mark.django_db
def test_no_port_without_a_memory_manifest_or_without_every_method(manifest):
    inner = manifest["manifest"]
    other_role = {"manifest": {**inner, "role": "search-provider"}}
    no_memory = {"manifest": {**inner, "capabilities": ["spoke-search"]}}
    for wrong in (other_role, no_memory, {}, [], "memory-provider", None):
        assert MemoryPorts.as_memory(InProcessMemoryPort(), wrong) is None, wrong
        assert MemoryPorts.as_memory(WithManifest(wrong)) is None, wrong
    assert MemoryPorts.as_memory(InProcessMemoryPort()) is None, "no manifest at all"

    class Partial:
        def records_get(self, principal, request):  # one method of 33
            return {}

    assert MemoryPorts.as_memory(Partial(), manifest) is None
    assert MemoryPorts.as_memory(object(), manifest) is None


@pytest.mark.django_db(transaction=True)
def test_probe_reads_the_live_manifest_and_answers_a_client(live_server):
    app = make_persona("probe client")
    issue_root_grant(make_space("probe2"), app.principal)
    client = MemoryPorts.probe(live_server.url, app.token, ["spoke-memory"])
    assert isinstance(client, MemoryClient)
    with client:
        assert client.subjects.ensure(space_id="probe2", subject_id="user:q")["receipt"]
    assert MemoryPorts.serves(MemoryPorts.manifest(live_server.url))
    with pytest.raises(ConnectionFailed):
        MemoryPorts.probe("http://127.0.0.1:9", app.token)
