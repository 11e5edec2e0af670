"""Issue 38, findings 5 and 6: an embeddings server's answer is checked (count, each index once,
the model's dimension, finite numbers) before anything is stored or compared, and the whole
exchange is bounded (a deadline from start to last byte, a byte cap), in the recall path (the
web process) and the drain (the worker's); on any breach recall ranks lexically, nothing is
stored and the backlog is kept. Vectors of another dimension than the model's, already stored,
are never mixed into a recall. Against a real local server process that misbehaves on purpose
(hostile_embed_server.py). Every test here failed on the code before (a 768-d answer was stored
and later made recall 500; a trickled or 64 MiB answer was read and used; NaN was stored)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.embedding import embed
from memory.models import Record, RecordEmbedding
from memory.services import hybrid_store
from tests.conftest import free_port

from .conftest import ids, needs_semantic
from .test_embedder import configured
from .test_hybrid_recall import CORPUS, PARAPHRASE

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db


class Hostile:
    """hostile_embed_server.py as a subprocess on a free port; `url(mode)` for a behaviour."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(  # noqa: S603 - our interpreter, our module
            [sys.executable, "-m", "tests.memory.hybrid.hostile_embed_server", str(self.port)],
            cwd=str(ROOT),
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready", "the server did not start"

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def hostile():
    server = Hostile()
    yield server
    server.stop()


def test_a_good_answer_is_used(hostile):
    with configured(url=hostile.url("ok")):
        vectors = embed.embed(["one", "two", "three"])
    assert vectors.shape == (3, 384)


@pytest.mark.parametrize(
    "mode", ["dim768", "dim383", "nan", "short", "dupindex", "trickle", "huge", "hugecl"]
)
def test_a_bad_answer_is_refused_by_the_client(hostile, mode):
    with configured(url=hostile.url(mode), timeout_s=1.0):
        with pytest.raises(embed.EmbedUnavailable):
            embed.embed(["one", "two"])


@needs_semantic
@pytest.mark.parametrize("mode", ["dim768", "nan", "trickle", "huge"])
def test_the_drain_and_recall_refuse_a_bad_answer_and_keep_the_backlog(
    hybrid_engine, hostile, write, recall, mode
):
    with configured(url=hostile.url("ok")):
        first = write(CORPUS[4])  # "The quarterly tax return is due next week"
    assert RecordEmbedding.objects.count() == 1
    with configured(url=hostile.url(mode), timeout_s=1.0):
        second = write("The quarterly rent is due on Monday")  # the drain cannot embed it
        assert hybrid_store.backlog() == 1
        assert RecordEmbedding.objects.count() == 1  # nothing of the bad answer was stored
        assert hybrid_store.drain() == 0
        assert hybrid_store.backlog() == 1
        # the web path: the query cannot be embedded, so recall is lexical, never a 500
        assert set(ids(recall("quarterly"))) == {first, second}
        assert recall(PARAPHRASE)["results"] == []
    with configured(url=hostile.url("ok")):
        assert hybrid_store.drain() == 1
    assert hybrid_store.backlog() == 0
    assert set(RecordEmbedding.objects.values_list("dim", flat=True)) == {384}


@needs_semantic
def test_stored_vectors_of_another_dimension_are_never_mixed(hybrid_engine, write, recall):
    """What a server that changed its dimension left before its answers were checked: one
    record's vector of 768 dimensions under the model's label. Recall uses the model's
    dimension only (before: `cannot reshape array` and a 500 on every recall of the subject)."""
    rid = {text: write(text) for text in CORPUS}
    assert ids(recall(PARAPHRASE, budget={"max_records": 1})) == [rid[CORPUS[0]]]
    odd = RecordEmbedding.objects.get(record=Record.objects.get(record_id=rid[CORPUS[1]]))
    RecordEmbedding.objects.filter(pk=odd.pk).update(dim=768, vector=b"\0\0\x80\x3f" * 768)
    hybrid_store.vectors_changed([odd.record])
    answer = recall(PARAPHRASE, budget={"max_records": 1})
    assert ids(answer) == [rid[CORPUS[0]]]
    assert rid[CORPUS[1]] in ids(recall("sushi"))  # lexically still found


def test_the_dimension_of_a_server_only_model_is_a_setting(hostile):
    with configured(url=hostile.url("ok"), model="some-org/server-only-model"):
        assert embed.dimension() is None
        with pytest.raises(embed.EmbedUnavailable, match="SPOKE_MEMORY_EMBED_DIM"):
            embed.embed(["one"])
    with configured(url=hostile.url("ok"), model="some-org/server-only-model", dim=384):
        assert embed.embed(["one"]).shape == (1, 384)
    with configured(url=hostile.url("ok"), model="some-org/server-only-model", dim=768):
        with pytest.raises(embed.EmbedUnavailable):
            embed.embed(["one"])


def test_the_bundled_model_files_say_384():
    if not embed.available():
        pytest.skip("the bundled model is not installed")
    assert embed.files_dimension(embed.bundled_dir()) == 384
