"""The rerank stage before the cut (docs/recall.md#reranking): the engine ranks a pool (the first
`pool(max_records)` records) and the configured reranker re-scores it before the budget cuts the
answer to `max_records`. Two plug-ins, off unless one is configured:

- a rerank server, `SPOKE_MEMORY_RERANK_URL`, on one of two wires (`SPOKE_MEMORY_RERANK_WIRE`, or
  read from the URL's path): `tei`, text-embeddings-inference's `POST /rerank` (`{"query",
  "texts", "truncate": true, "raw_scores": false}` → `[{"index", "score"}]`), or `cohere`, the
  Cohere/Jina-compatible `POST /v1/rerank` (`{"model", "query", "documents", "top_n"}` →
  `{"results": [{"index", "relevance_score"}]}`); `SPOKE_MEMORY_RERANK_MODEL` is then the model
  name the request carries;
- else a local cross-encoder directory, `SPOKE_MEMORY_RERANK_MODEL` (sentence-transformers'
  CrossEncoder, loaded from the folder with the hub switched off).

Bounded: the pool (`SPOKE_MEMORY_RERANK_POOL`, or `max_records` when more), each text and the
query cut to `SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES` UTF-8 bytes, the server's whole exchange to
`SPOKE_MEMORY_RERANK_TIMEOUT_S` from connecting to the last byte and its answer to
`SPOKE_MEMORY_RERANK_MAX_ANSWER_BYTES`. An answer is used only when it scores every text once, each
score a finite number on [0, 1]; anything else (down, slow, too large, garbage, a model that does
not load) answers the engine's ranking unchanged, with one warning line that names the failure,
never a text or the query.

A reranked result's `score` is the reranker's relevance on [0, 1] (order follows it; ties keep
the engine's order); the rest of the engine's result (hybrid/6's match) is kept. The
reranker's identity (`identity()`) is pinned by reflections beside the embedding model's."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from django.conf import settings

from memory.embedding import bounded_http, embed
from memory.engine.rank import Ranked

log = logging.getLogger("memory.rerank")
T = TypeVar("T")
_lock = threading.Lock()  # a CrossEncoder is not safe to call from two threads at once


class RerankUnavailable(Exception):  # noqa: N818 - a state: recall answers unreranked
    """The reranker could not answer, or answered badly. The message never holds content."""


def configured() -> str:
    """ "server", "local" or "" (no reranker)."""
    if settings.SPOKE_MEMORY_RERANK_URL:
        return "server"
    return "local" if settings.SPOKE_MEMORY_RERANK_MODEL else ""


def pool(max_records: int, text: str) -> int:
    """How deep the engine must rank: the rerank pool when a reranker is configured and the query
    is not blank (never less than `max_records`), else `max_records`."""
    if not configured() or not text.strip():
        return max_records
    return max(int(settings.SPOKE_MEMORY_RERANK_POOL), max_records)


def wire() -> str:
    """The server's wire: the setting, else `cohere` for a URL ending in /v1/rerank or
    /v2/rerank, else `tei`."""
    if settings.SPOKE_MEMORY_RERANK_WIRE:
        return str(settings.SPOKE_MEMORY_RERANK_WIRE)
    path = urlsplit(settings.SPOKE_MEMORY_RERANK_URL).path.rstrip("/")
    return "cohere" if path.endswith(("/v1/rerank", "/v2/rerank")) else "tei"


def endpoint() -> str:
    """The URL posted to: the setting when its path ends in `rerank`, else the wire's path
    appended (`/rerank` or `/v1/rerank`)."""
    url = settings.SPOKE_MEMORY_RERANK_URL.rstrip("/")
    if urlsplit(url).path.endswith("rerank"):
        return str(url)
    return url + ("/v1/rerank" if wire() == "cohere" else "/rerank")


def identity() -> dict[str, str] | None:
    """Which reranker ranks (None: none), in the shape of the embedding model's identity
    ({name, digest, source}): a server by a digest of its wire, URL and model name (the URL
    itself is not published: it may name an internal host); a local cross-encoder by its folder
    name and the digest of its files (memory.embedding.embed.files_digest)."""
    kind = configured()
    if kind == "server":
        model = settings.SPOKE_MEMORY_RERANK_MODEL
        said = f"rerank\0{wire()}\0{endpoint()}\0{model}".encode()
        name = model or wire()
        return {
            "name": name,
            "digest": "sha256:" + hashlib.sha256(said).hexdigest(),
            "source": "server",
        }
    if kind == "local":
        directory = Path(settings.SPOKE_MEMORY_RERANK_MODEL)
        try:
            digest = _folder_digest(str(directory.resolve()))
        except OSError:
            digest = "sha256:unreadable"
        return {"name": directory.name, "digest": digest, "source": "local"}
    return None


@lru_cache(maxsize=4)
def _folder_digest(directory: str) -> str:
    return embed.files_digest(Path(directory))


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, on a character boundary."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    return raw[:limit].decode(errors="ignore")


def reorder(text: str, head: list[Ranked], rows: list[T]) -> tuple[list[Ranked], list[T]]:
    """The pool `head` (with its records `rows`, whose `.text` is scored) in the reranker's order,
    each score the reranker's; unchanged when no reranker is configured, the query is blank, or
    the reranker fails (logged, without content)."""
    kind = configured()
    if not kind or not text.strip() or not head:
        return head, rows
    limit = int(settings.SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES)
    texts = [clip(str(getattr(row, "text", "") or ""), limit) for row in rows]
    started = time.monotonic()
    try:
        scores = _server(clip(text, limit), texts) if kind == "server" else _local(text, texts)
    except RerankUnavailable as err:
        log.warning(
            "rerank: %s; answering unreranked (%d candidates, %.0f ms)",
            err,
            len(texts),
            (time.monotonic() - started) * 1000,
        )
        return head, rows
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return (
        # replace(): the reranker's score on the engine's result (hybrid/6's match kept)
        [replace(head[i], score=round(scores[i], 6)) for i in order],
        [rows[i] for i in order],
    )


def checked(answer: object, count: int, wire_name: str) -> list[float]:
    """The scores of a server's answer in the texts' order: every index once, every score a
    finite number on [0, 1]; else RerankUnavailable."""
    if wire_name == "cohere":
        items = answer.get("results") if isinstance(answer, dict) else None
        key = "relevance_score"
    else:
        items, key = answer, "score"
    if not isinstance(items, list) or len(items) != count:
        raise RerankUnavailable(f"rerank server ({wire_name}): wrong number of scores")
    scores: list[float | None] = [None] * count
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get(key) if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or scores[index] is not None:
            raise RerankUnavailable(f"rerank server ({wire_name}): bad index")
        if not isinstance(score, int | float) or isinstance(score, bool):
            raise RerankUnavailable(f"rerank server ({wire_name}): a score is not a number")
        if not math.isfinite(score) or not 0 <= score <= 1:
            raise RerankUnavailable(f"rerank server ({wire_name}): a score is not on [0, 1]")
        scores[index] = float(score)
    return [s for s in scores if s is not None]  # all: `count` distinct indexes in range


def request_body(query: str, texts: Sequence[str], wire_name: str) -> bytes:
    if wire_name == "cohere":
        body: dict[str, Any] = {"query": query, "documents": list(texts), "top_n": len(texts)}
        if settings.SPOKE_MEMORY_RERANK_MODEL:
            body["model"] = settings.SPOKE_MEMORY_RERANK_MODEL
    else:
        body = {"query": query, "texts": list(texts), "truncate": True, "raw_scores": False}
    return json.dumps(body).encode()


def _server(query: str, texts: list[str]) -> list[float]:
    name = wire()
    raw = post(
        endpoint(),
        request_body(query, texts, name),
        float(settings.SPOKE_MEMORY_RERANK_TIMEOUT_S),
        int(settings.SPOKE_MEMORY_RERANK_MAX_ANSWER_BYTES),
    )
    try:
        answer = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise RerankUnavailable(f"rerank server ({name}): {type(err).__name__}") from None
    return checked(answer, len(texts), name)


def post(url: str, body: bytes, timeout_s: float, cap: int) -> bytes:
    """POST `body` to the rerank server, bounded in time and bytes (memory.embedding.bounded_http);
    any failure raises RerankUnavailable naming its kind only."""
    return bounded_http.post(
        url, body, timeout_s, cap, name="rerank server", error=RerankUnavailable
    )


@lru_cache(maxsize=2)
def _cross_encoder(directory: str) -> Any:
    # Offline before sentence-transformers / transformers are imported (they read these then):
    # a cross-encoder is a folder here, never a download.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import CrossEncoder

    return CrossEncoder(directory, device="cpu", local_files_only=True)


def _local(query: str, texts: list[str]) -> list[float]:
    """The local cross-encoder's relevance of each (query, text) pair (its own activation: a
    sigmoid for a one-label model), bounded by the pool, the byte cut and the model's own token
    limit."""
    directory = Path(settings.SPOKE_MEMORY_RERANK_MODEL)
    if not directory.is_dir():
        raise RerankUnavailable("cross-encoder: SPOKE_MEMORY_RERANK_MODEL is not a directory")
    limit = int(settings.SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES)
    try:
        with _lock:
            model = _cross_encoder(str(directory.resolve()))
            raw = model.predict(
                [(clip(query, limit), t) for t in texts],
                batch_size=16,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        scores = [float(s) for s in raw.reshape(len(texts), -1)[:, 0]]
    except Exception as err:  # a model that does not load or run: the unreranked answer
        raise RerankUnavailable(f"cross-encoder: {type(err).__name__}") from None
    if not all(math.isfinite(s) and 0 <= s <= 1 for s in scores):
        raise RerankUnavailable("cross-encoder: a score is not on [0, 1]")
    return scores
