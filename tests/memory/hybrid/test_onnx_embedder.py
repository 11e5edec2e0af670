"""The int8 ONNX form of the bundled model (`all-MiniLM-L6-v2-int8`, hybrid/6's embedder; issue
27): its vectors against the torch model's, one vector per text whatever it is batched with, the
export byte-for-byte deterministic (so the identity survives a re-export), several processes
using it first at once exporting it once, and an install without ONNX Runtime falling back to
engine/2 by default and refusing hybrid/6 at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.embedding import embed, embed_onnx

from .conftest import needs_semantic
from .test_embedder import configured
from .test_hybrid_recall import CORPUS, PARAPHRASE

ROOT = Path(__file__).resolve().parents[3]

needs_onnx = pytest.mark.skipif(
    not (embed.installed() and embed_onnx.installed()),
    reason="the semantic extra without onnxruntime/onnx (pip install '.[semantic]')",
)
pytestmark = [needs_semantic, needs_onnx]

# Short and long, questions and statements, other scripts, an empty text and one past the
# model's 256 tokens (truncated alike by both forms).
TEXTS = [
    *CORPUS,
    PARAPHRASE,
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: That's great! I painted a sunrise over the lake last week, my favourite so far.",
    "What did Caroline research after the support group?",
    "When did Melanie run the charity race?",
    "Straße und Brücke: my German lessons are going well",
    "東京に行きたい",
    "Café au lait with croissants is my Sunday ritual",
    "ok",
    "",
    "The meeting moved to 9:30 on Tuesday, room B-12; bring the Q3 figures. " * 40,
]


def cosines(a, b):
    import numpy as np

    return np.sum(np.asarray(a) * np.asarray(b), axis=1)


def test_int8_vectors_are_close_to_the_torch_models():
    import numpy as np

    with configured(model=embed.BUNDLED_NAME):
        assert embed.identity().name == "all-MiniLM-L6-v2"
        torch_vectors = embed.embed(TEXTS)
    with configured(model=embed.INT8_NAME):
        assert embed.identity().name == "all-MiniLM-L6-v2-int8"
        int8 = embed.embed(TEXTS)
        assert int8.shape == torch_vectors.shape == (len(TEXTS), embed.DIM)
        assert int8.dtype == np.float32
        assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
        # one forward pass per text: a text's vector does not depend on its batch
        alone = np.stack([embed.embed([t])[0] for t in TEXTS[:6]])
        assert alone.tobytes() == int8[:6].tobytes()
    close = cosines(torch_vectors, int8)
    # Measured on 1,500 LoCoMo turns and questions: min 0.977, mean 0.993; held-out recall@10
    # level with the torch model's (docs/recall-quality.md "The int8 ONNX form"). The texts of
    # a token or two ("ok", "") are the farthest (~0.97-0.98): quantization noise weighs most
    # where there is least to average.
    assert close.min() >= 0.97, close
    assert np.median(close) >= 0.99, close
    assert close.mean() >= 0.99, close


def test_the_export_is_deterministic_and_the_identity_survives_a_reexport(tmp_path):
    with configured(model=embed.INT8_NAME):
        cached = embed.model_dir()
        first = embed.identity()
    assert cached is not None and (cached / embed_onnx.MODEL_FILE).is_file()
    again = tmp_path / "again"
    embed_onnx.run_export(again)
    for name in ("model.onnx", "tokenizer.json", "recipe.json"):
        assert (again / name).read_bytes() == (cached / name).read_bytes(), name
    assert sorted(p.name for p in again.iterdir()) == sorted(p.name for p in cached.iterdir())
    assert embed.files_digest(again) == first.digest
    recipe = json.loads((again / "recipe.json").read_text())
    assert recipe["source"]["digest"] == embed.files_digest(embed.bundled_dir())
    assert recipe["max_seq_length"] == 256
    # the identity is read again from the files, not remembered
    with configured(model=embed.INT8_NAME):
        assert embed.identity() == first
        assert embed.identity().key == f"all-MiniLM-L6-v2-int8@{first.digest[7:23]}"


FIRST_USE = """
import json, logging, sys
from pathlib import Path
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
from memory.embedding import embed, embed_onnx
sys.stdin.readline()  # all start together
directory = embed_onnx.ensure(Path(sys.argv[1]))
vector = embed_onnx.encode(directory, ["a puppy"])[0]
print(json.dumps({"dir": str(directory), "digest": embed.files_digest(directory),
                  "vector": vector.tobytes().hex()}))
"""


def test_processes_starting_together_export_once_and_read_the_same_files(tmp_path):
    root = tmp_path / "models"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(  # noqa: S603 - our interpreter
            [sys.executable, "-c", FIRST_USE, str(root)],
            cwd=str(ROOT),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    answers = [json.loads(out) for out, _ in outs]
    assert len({json.dumps(a, sort_keys=True) for a in answers}) == 1  # same dir, digest, vector
    logs = "".join(err for _, err in outs)
    assert logs.count("exported all-MiniLM-L6-v2-int8 in") == 1
    # the finished directory only (no temporary one left), and it is the same install's form
    assert sorted(p.name for p in root.iterdir() if not p.name.endswith(".lock")) == [
        Path(answers[0]["dir"]).name
    ]
    with configured(model=embed.INT8_NAME):
        assert answers[0]["digest"] == embed.identity().digest


WITHOUT_ORT = """
import importlib.util
import sys
# ONNX Runtime and onnx not installed: not found, and not importable
for name in ("onnxruntime", "onnx"):
    sys.modules[name] = None
real = importlib.util.find_spec
def find(name, package=None):
    return None if name.split(".")[0] in ("onnxruntime", "onnx") else real(name, package)
importlib.util.find_spec = find
from memory.embedding import embed
print("default", embed.default_engine())
import os
if os.environ.get("SPOKE_MEMORY_ENGINE"):
    import django
    django.setup()
"""


def test_without_onnxruntime_the_default_is_engine2_and_hybrid6_refuses_to_start(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SPOKE_MEMORY_VAR_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "spokememory.settings",
    }
    env.pop("SPOKE_MEMORY_ENGINE", None)
    default = subprocess.run(  # noqa: S603 - our interpreter
        [sys.executable, "-c", WITHOUT_ORT],
        cwd=str(ROOT),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert default.returncode == 0, default.stderr
    assert "default engine/2" in default.stdout
    refused = subprocess.run(  # noqa: S603 - our interpreter
        [sys.executable, "-c", WITHOUT_ORT],
        cwd=str(ROOT),
        env={**env, "SPOKE_MEMORY_ENGINE": "hybrid/6"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr
    assert "SPOKE_MEMORY_ENGINE=hybrid/6 needs onnxruntime, onnx" in refused.stderr


def test_with_the_whole_extra_the_default_is_hybrid6():
    assert embed.default_engine() == "hybrid/6"


def test_prepare_embedder_makes_the_int8_form_ready_and_prints_its_identity(settings):
    """`make run` runs it before the web server and the worker start."""
    from io import StringIO

    from django.core.management import call_command

    settings.SPOKE_MEMORY_ENGINE = "hybrid/6"
    out = StringIO()
    call_command("spoke", "prepare-embedder", stdout=out)
    said = json.loads(out.getvalue())
    assert said["engine_policy_version"] == "hybrid/6"
    with configured(model=embed.INT8_NAME):
        assert said["embedding_model"] == embed.identity().wire()
    settings.SPOKE_MEMORY_ENGINE = "engine/2"
    out = StringIO()
    call_command("spoke", "prepare-embedder", stdout=out)
    assert json.loads(out.getvalue()) == {
        "engine_policy_version": "engine/2",
        "embedding_model": None,
    }


def test_embedding_a_query_reads_no_model_file_again(monkeypatch):
    """The int8 form's directory is found without hashing the bundled model on every call (it
    did: ~100 ms of sha256 per query, ten times the forward pass)."""
    with configured(model=embed.INT8_NAME):
        embed.embed(["first"])
        embed.identity()  # read once per model and configuration
        hashed = []
        real = embed.files_digest
        monkeypatch.setattr(embed, "files_digest", lambda d: hashed.append(d) or real(d))
        for text in ("a puppy", "a dog", "a cat"):
            embed.embed([text])
        embed.identity()
        assert hashed == []
