"""A rerank server speaking both wires memory.services.rerank calls, scoring by token overlap (the
share of the query's distinct lower-case words a text holds: deterministic, on [0, 1], no model),
and misbehaving on purpose by the first segment of the path, `/<mode>/rerank` (text-embeddings-
inference: `{"query", "texts"}` → `[{"index", "score"}]`, sorted best first as TEI answers) or
`/<mode>/v1/rerank` (Cohere/Jina: `{"query", "documents", "top_n"}` → `{"results": [{"index",
"relevance_score"}]}`):

- `ok`: the answer;
- `slow`: the answer after SLOW_S seconds; `trickle`: the answer a few bytes every 0.1 s (~SLOW_S);
- `huge`: a valid answer padded to HUGE_MB MiB without a Content-Length; `hugecl`: with one;
- `garbage` (not JSON), `outofrange` (a score of 7.5), `nan` (a NaN score), `short` (one score
  fewer), `dupindex` (index 0 twice), `error` (HTTP 500): a bad answer.

`GET /last` answers the shape of the last request (its wire, the number of texts, the largest
text's and the query's UTF-8 bytes, the body's bytes, its keys): what the tests check the
request's bounds with. Run: `python -m tests.memory.rerank.rerank_server PORT`; prints `ready`."""

from __future__ import annotations

import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_S = 3.0
HUGE_MB = 4
WORD = re.compile(r"\w+")
LAST: dict[str, Any] = {}


def overlap(query: str, text: str) -> float:
    """The share of the query's distinct words the text holds (rounded: exact in JSON)."""
    wanted = set(WORD.findall(query.lower()))
    if not wanted:
        return 0.0
    return round(len(wanted & set(WORD.findall(text.lower()))) / len(wanted), 6)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # close-delimited answers are allowed

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/last":
            return self.send(json.dumps(LAST).encode())
        return self.send_error(404)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        mode, _, rest = self.path.strip("/").partition("/")
        wire = {"rerank": "tei", "v1/rerank": "cohere"}.get(rest.rstrip("/"))
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            body = json.loads(raw)
            query = body["query"]
            texts = body["texts"] if wire == "tei" else body["documents"]
        except (ValueError, KeyError, TypeError):
            return self.send_error(400 if wire else 404)
        LAST.clear()
        LAST.update(
            wire=wire,
            count=len(texts),
            max_text_bytes=max((len(t.encode()) for t in texts), default=0),
            query_bytes=len(query.encode()),
            body_bytes=len(raw),
            keys=sorted(body),
            top_n=body.get("top_n"),
        )
        try:
            self.respond(mode, str(wire), query, texts)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: that is the point
        return None

    def respond(self, mode: str, wire: str, query: str, texts: list[str]) -> None:
        scored = sorted(
            ((i, overlap(query, t)) for i, t in enumerate(texts)), key=lambda p: (-p[1], p[0])
        )
        items = [{"index": i, "score": s} for i, s in scored]
        if mode == "outofrange":
            items[0]["score"] = 7.5
        elif mode == "nan":
            items[0]["score"] = float("nan")
        elif mode == "short":
            items = items[:-1]
        elif mode == "dupindex":
            for item in items:
                item["index"] = 0
        answer: Any = items
        if wire == "cohere":
            answer = {
                "id": "rerank-test",
                "results": [{"index": x["index"], "relevance_score": x["score"]} for x in items],
                "meta": {"billed_units": {"search_units": 1}},
            }
        data = json.dumps(answer).encode()
        if mode == "error":
            return self.send_error(500)
        if mode == "garbage":
            return self.send(b"<html>not json</html>")
        if mode == "slow":
            time.sleep(SLOW_S)
        if mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            piece = max(1, -(-len(data) // int(SLOW_S / 0.1)))
            for start in range(0, len(data), piece):
                self.wfile.write(data[start : start + piece])
                self.wfile.flush()
                time.sleep(0.1)
            return None
        if mode in ("huge", "hugecl"):
            # A valid answer followed by whitespace: JSON still, only too large.
            pad = HUGE_MB * 1024 * 1024
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "hugecl":
                self.send_header("Content-Length", str(len(data) + pad))
            self.end_headers()
            self.wfile.write(data)
            block = b" " * 65_536
            for _ in range(pad // len(block)):
                self.wfile.write(block)
            return None
        return self.send(data)

    def send(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # quiet
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
