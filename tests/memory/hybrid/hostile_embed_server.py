"""An OpenAI-compatible embeddings server that misbehaves on purpose (issue 38, findings 5-6),
for the tests and `bench/embed_bounds.py`: `POST /<mode>/v1/embeddings` with `{"model",
"input"}` answers, by `<mode>`:

- `ok`: a well-formed answer of dimension 384 (deterministic unit vectors, one per text; no model);
- `dim<N>`: the same of dimension N (e.g. `dim768`);
- `nan`, `short` (one vector fewer), `dupindex` (index 0 twice): a malformed answer;
- `trickle`: the `ok` answer sent a few bytes every TRICKLE_S (each read returns in time; the
  whole takes ~TRICKLE_TOTAL_S);
- `huge`: a valid answer padded to HUGE_MB MiB, without a Content-Length (close-delimited);
- `hugecl`: the same with its Content-Length;
- `bytext`: the mode named by the first text's first word (`trickle what …`), else `ok`.

Run: `python -m tests.memory.hybrid.hostile_embed_server PORT [HUGE_MB]`; prints `ready`."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TRICKLE_S = 0.2
TRICKLE_TOTAL_S = 12.0
HUGE_MB = 64


def vector(text: str, dim: int) -> list[float]:
    seed = hashlib.sha256(text.encode()).digest()
    values = [((seed[i % 32] * (i + 1)) % 251) / 125.0 - 1.0 for i in range(dim)]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


def answer(texts: list[str], dim: int) -> dict:
    return {
        "object": "list",
        "model": "hostile",
        "data": [
            {"object": "embedding", "index": i, "embedding": vector(t, dim)}
            for i, t in enumerate(texts)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # close-delimited answers are allowed

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        mode, _, rest = self.path.strip("/").partition("/")
        if rest.rstrip("/") != "v1/embeddings":
            self.send_error(404)
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            texts = body["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
        except (ValueError, KeyError, TypeError):
            self.send_error(400)
            return
        try:
            self.respond(mode, texts)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: that is the point

    def respond(self, mode: str, texts: list[str]) -> None:
        if mode == "bytext":  # the first text's first word names the mode (a bench's queries)
            word = (texts[0].split() or ["ok"])[0] if texts else "ok"
            mode = word if word in ("trickle", "huge", "hugecl", "nan", "short") else "ok"
        good = answer(texts, 384)
        if mode.startswith("dim") and mode[3:].isdigit():
            return self.send(json.dumps(answer(texts, int(mode[3:]))).encode())
        if mode == "nan":
            good["data"][0]["embedding"][0] = float("nan")
            return self.send(json.dumps(good).encode())  # Python writes NaN, as some servers do
        if mode == "short":
            good["data"] = good["data"][:-1]
            return self.send(json.dumps(good).encode())
        if mode == "dupindex":
            for item in good["data"]:
                item["index"] = 0
            return self.send(json.dumps(good).encode())
        data = json.dumps(good).encode()
        if mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            steps = int(TRICKLE_TOTAL_S / TRICKLE_S)
            piece = max(1, -(-len(data) // steps))
            for start in range(0, len(data), piece):
                self.wfile.write(data[start : start + piece])
                self.wfile.flush()
                time.sleep(TRICKLE_S)
            return None
        if mode in ("huge", "hugecl"):
            pad = HUGE_MB * 1024 * 1024
            head = data[:-1] + b', "padding": "'
            tail = b'"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if mode == "hugecl":
                self.send_header("Content-Length", str(len(head) + pad + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            block = b"x" * 65_536
            for _ in range(pad // len(block)):
                self.wfile.write(block)
            self.wfile.write(tail)
            return None
        return self.send(data)

    def send(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # quiet
        pass


def main() -> None:
    global HUGE_MB
    if len(sys.argv) > 2:
        HUGE_MB = int(sys.argv[2])
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
