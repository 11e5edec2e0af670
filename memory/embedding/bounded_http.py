"""One bounded POST for the model servers this provider calls (the embeddings server,
memory.embedding.embed; the rerank server, memory.services.rerank): a JSON body out, the 200 body
back, at most `cap` bytes of it, all within `timeout_s` of the start. A watchdog shuts the socket
at the deadline, so no slow header or trickled body outlives it. Any failure raises the caller's
`error` naming its kind only (never the body: it may carry memory content)."""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit


def post(
    url: str, body: bytes, timeout_s: float, cap: int, *, name: str, error: type[Exception]
) -> bytes:
    parts = urlsplit(url)
    deadline = time.monotonic() + timeout_s
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname or "",
            parts.port,
            timeout=timeout_s,
            context=ssl.create_default_context(),
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout_s)

    def cut_off() -> None:
        if conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, cut_off)
    watchdog.daemon = True
    watchdog.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        if response.status != 200:
            raise error(f"{name}: HTTP {response.status}")
        declared = response.getheader("Content-Length") or ""
        if declared.isdigit() and int(declared) > cap:
            raise error(f"{name}: the answer is larger than the byte cap")
        chunks, size = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise error(f"{name}: the answer outlasted the deadline")
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = response.read1(65_536)
            if not chunk:
                break
            size += len(chunk)
            if size > cap:
                raise error(f"{name}: the answer is larger than the byte cap")
            chunks.append(chunk)
    except (OSError, http.client.HTTPException, ValueError) as err:
        if time.monotonic() >= deadline:  # the watchdog shut the socket (RemoteDisconnected…)
            raise error(f"{name}: the answer outlasted the deadline") from None
        raise error(f"{name}: {type(err).__name__}") from None
    finally:
        watchdog.cancel()
        conn.close()
    if time.monotonic() >= deadline:  # cut off by the watchdog: what was read is not the answer
        raise error(f"{name}: the answer outlasted the deadline")
    return b"".join(chunks)
