"""The embedding model is a setting (issue 27): an OpenAI-compatible embeddings server (a real
local server process serving the bundled model over that wire format: embed_server.py), the
server being down (lexical recall, no 5xx, backlog kept), the model's identity in describe, and
the start-up refusal of an unknown engine policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from memory.embedding import embed, embed_onnx
from memory.models import Record, RecordEmbedding
from memory.services import hybrid_store
from tests.conftest import OPERATOR_HEALTH, free_port

from .conftest import ids, needs_semantic
from .test_hybrid_recall import CORPUS, PARAPHRASE

ROOT = Path(__file__).resolve().parents[3]


class Server:
    """tests/memory/hybrid/embed_server.py as a subprocess on a free port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - our interpreter, our module
            [sys.executable, "-m", "tests.memory.hybrid.embed_server", str(self.port)],
            cwd=str(ROOT),
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until it listens, or it died ('')
        assert line.strip() == "ready", "the embeddings server did not start"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()


@contextmanager
def configured(**settings):
    embed.configure(embed.Config(**settings))
    try:
        yield
    finally:
        embed.configure()


@needs_semantic
@pytest.mark.django_db
def test_the_server_path_embeds_and_recalls_by_meaning(hybrid_engine, server, write, recall):
    import numpy as np

    # the server runs the bundled model's torch form; hybrid/6 is told that model by name
    with configured(url=server.url, model=embed.BUNDLED_NAME):
        assert embed.identity().source == "server"
        # the bundled model: its files identify it, whoever runs the forward pass
        assert embed.identity().digest == embed.files_digest(embed.bundled_dir())
        rid = {text: write(text) for text in CORPUS}
        assert hybrid_store.backlog() == 0
        answer = recall(PARAPHRASE, budget={"max_records": 3})
        assert ids(answer)[0] == rid[CORPUS[0]]
    stored = RecordEmbedding.objects.get(record=Record.objects.get(record_id=rid[CORPUS[0]]))
    assert stored.model_id == embed.MODEL_ID
    with configured(model=embed.BUNDLED_NAME):
        local = embed.encode_local([CORPUS[0]])[0]
    assert np.allclose(np.frombuffer(stored.vector, dtype="<f4"), local, atol=1e-6)


@needs_semantic
@pytest.mark.django_db
def test_a_server_down_recalls_lexically_and_keeps_the_backlog(
    hybrid_engine, server, write, recall, client
):
    with configured(url=server.url, model=embed.BUNDLED_NAME):
        first = write(CORPUS[0])
        assert hybrid_store.backlog() == 0
        server.stop()
        second = write("The quarterly tax return is due next week")  # the drain cannot embed it
        assert hybrid_store.backlog() == 1
        assert not RecordEmbedding.objects.filter(
            record=Record.objects.get(record_id=second)
        ).exists()
        lexical = recall("quarterly tax return")
        assert ids(lexical) == [second]
        by_meaning = recall(PARAPHRASE)
        assert by_meaning["results"] == [] and by_meaning["total_eligible"] == 0
        assert (
            json.loads(client.get("/readyz", **OPERATOR_HEALTH).content)["embedding_backlog"] == 1
        )
        server.start()
        assert hybrid_store.drain() == 1
        assert hybrid_store.backlog() == 0
        assert ids(recall(PARAPHRASE, budget={"max_records": 1})) == [first]


@needs_semantic
@pytest.mark.django_db
def test_describe_publishes_the_model_identity(hybrid_engine, api, admin, settings, tmp_path):
    answer = api(admin, "memory.describe", {}).body["provider"]
    model = answer["extensions"]["spoke-recall"]["embedding_model"]
    assert model == {
        "name": "all-MiniLM-L6-v2-int8",  # hybrid/6's own model
        "digest": embed.files_digest(embed_onnx.ensure()),
        "source": "local",
    }
    other = copy_of_the_bundled_model(tmp_path)
    with configured(model=str(other)):
        changed = api(admin, "memory.describe", {}).body["provider"]["extensions"]
        assert changed["spoke-recall"]["embedding_model"]["digest"] != model["digest"]
        assert changed["spoke-recall"]["embedding_model"]["name"] == other.name
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    assert api(admin, "memory.describe", {}).body["provider"]["extensions"] == {}


def copy_of_the_bundled_model(tmp_path: Path) -> Path:
    """Another model directory: the bundled files with one configuration value changed that does
    not change the vectors (so its digest, its identity, differs)."""
    import shutil

    target = tmp_path / "minilm-copy"
    shutil.copytree(embed.bundled_dir(), target)
    config = json.loads((target / "config.json").read_text())
    config["spoke_test_note"] = "a copy"
    (target / "config.json").write_text(json.dumps(config))
    return target


def test_a_name_is_not_downloaded_unless_allowed():
    with configured(model="no-such-org/no-such-model"), pytest.raises(LookupError) as err:
        embed.identity()
    assert "SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD" in str(err.value)


def test_an_unknown_engine_policy_refuses_to_start(tmp_path):
    env = {
        **os.environ,
        "SPOKE_MEMORY_ENGINE": "engine/9",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SPOKE_MEMORY_VAR_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(  # noqa: S603 - our interpreter, our manage.py
        [sys.executable, "manage.py", "check"],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and "engine/9" in done.stderr
    assert "engine/2, hybrid/6" in done.stderr  # it says which policies are served


def test_a_retired_engine_policy_refuses_to_start_naming_the_served_ones(tmp_path):
    """A deployment still configured with a retired policy (issue 42) does not start: the message
    says it is retired and names the served ones (each retired one in process, below)."""
    retired = "engine/1"
    env = {
        **os.environ,
        "SPOKE_MEMORY_ENGINE": retired,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SPOKE_MEMORY_VAR_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(  # noqa: S603 - our interpreter, our manage.py
        [sys.executable, "manage.py", "check"],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert f"ImproperlyConfigured: SPOKE_MEMORY_ENGINE={retired} is retired" in done.stderr
    assert "this provider serves engine/2, hybrid/6" in done.stderr


def test_the_registry_refuses_an_unknown_policy_in_process(settings):
    from django.core.exceptions import ImproperlyConfigured

    from memory.services.recall_engines import registry

    settings.SPOKE_MEMORY_ENGINE = "hybrid/9"
    with pytest.raises(ImproperlyConfigured):
        registry.install()
    assert set(registry.policies()) >= {"engine/2", "hybrid/6"}
    assert not set(registry.policies()) & set(registry.RETIRED)
    assert set(registry.RETIRED) == {
        *("engine/1", "hybrid/1", "hybrid/2", "hybrid/3"),  # issue 42
        *("hybrid/4", "hybrid/5"),  # issue 44: hybrid/6 took their place
    }
    for retired in registry.RETIRED:
        settings.SPOKE_MEMORY_ENGINE = retired
        with pytest.raises(ImproperlyConfigured, match=f"{retired} is retired"):
            registry.install()
