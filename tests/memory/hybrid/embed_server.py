"""A small OpenAI-compatible embeddings server for the tests: `POST /v1/embeddings` with
`{"model", "input": [texts]}` answers `{"object": "list", "data": [{"object": "embedding",
"index", "embedding": [floats]}], "model"}`, the vectors made by the bundled all-MiniLM-L6-v2
(memory.embedding.embed.encode_local), as text-embeddings-inference, vLLM or Ollama answer.

Run: `python -m tests.memory.hybrid.embed_server PORT`; it prints `ready` once it listens."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/") != "/v1/embeddings":
            self.send_error(404)
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            texts = body["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
        except (ValueError, KeyError, TypeError):
            self.send_error(400)
            return
        from memory.embedding import embed

        vectors = embed.encode_local(texts) if texts else []
        answer = {
            "object": "list",
            "model": body.get("model", ""),
            "data": [
                {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # quiet
        pass


def main() -> None:
    from memory.embedding import embed

    embed.configure(embed.Config())  # the bundled model, whatever the environment says
    embed.encode_local(["warm up"])
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
