"""Generates docs/settings.md, the settings reference, from the code that reads the environment.

Every environment variable the provider reads (`env_int("NAME", default)`, `env_bool`,
`env_float`, `env_list` and `os.environ.get("NAME", default)` in spokememory/, memory/ and
reviews/) is listed with its default as the code spells it and one sentence: the sentence in
DESCRIPTIONS below, else the first sentence of the comment right above the line that reads it.
Nothing is imported from the provider: the files are parsed, so the page is the same on every
install.

    python -m tools.settings_doc          # rewrite docs/settings.md
    python -m tools.settings_doc --check  # exit 1 when docs/settings.md is out of date (make lint)
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "settings.md"
SOURCES = ["spokememory", "memory", "reviews"]
READERS = {"env_int", "env_bool", "env_float", "env_list"}
SKIP_PARTS = {"migrations", "tests"}

# Groups, in page order: (title, predicate on the variable's name and file).
GROUPS = [
    ("Deployment: database, broker, cache, web server", "deployment"),
    ("Wire limits (published in `memory.describe`)", "limits"),
    ("The limiter: principals and spaces (not on the wire)", "limiter"),
    ("Recall engine and embeddings", "engine"),
    ("Other provider settings", "provider"),
]
FAIRNESS = {
    "SPOKE_MEMORY_RATE",
    "SPOKE_MEMORY_MAX_IN_FLIGHT",
    "SPOKE_MEMORY_SPACE_RATE",
    "SPOKE_MEMORY_STATEMENT_TIMEOUT_MS",
    "SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS",
    "SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS",
    "SPOKE_MEMORY_LOGIN_WINDOW_S",
    "SPOKE_MEMORY_TRUSTED_PROXY_HEADER",
    "SPOKE_MEMORY_TRUSTED_PROXY_COUNT",
    "SPOKE_MEMORY_MAX_FORM_BYTES",
    "SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES",
}
LIMITS_DICT = "SPOKE_MEMORY_LIMITS"
# Read to pass on to a child process, not a setting.
IGNORED = {"PYTHONPATH"}
# Where the code's default is an expression a reader cannot evaluate, what it comes to.
DEFAULTS = {
    "DATABASE_URL": "SQLite: `$SPOKE_MEMORY_VAR_DIR/spoke-memory.sqlite3`",
    "SPOKE_MEMORY_VAR_DIR": "`var/` in the checkout",
    "STATIC_ROOT": "`$SPOKE_MEMORY_VAR_DIR/staticfiles`",
    "SPOKE_MEMORY_ENGINE": "`default_engine()` (memory/embedding/embed.py)",
    "SPOKE_MEMORY_SERVED_CAPABILITIES": "every flag (`memory.flags.ALL_FLAGS`)",
    "SPOKE_MEMORY_MAX_IN_FLIGHT": "three quarters of `WEB_CONCURRENCY` × `GUNICORN_THREADS` (6)",
    "SPOKE_MEMORY_STATIC_HASHED": "on unless `DEBUG`",
    "CSRF_COOKIE_SECURE": "as `SESSION_COOKIE_SECURE`",
    "ALLOWED_HOSTS": "`localhost,127.0.0.1,[::1],testserver`",
    "SECRET_KEY": "(unset)",
}
ENGINE_PREFIXES = (
    "SPOKE_MEMORY_ENGINE",
    "SPOKE_MEMORY_EMBED",
    "SPOKE_EMBED",
    "SPOKE_MEMORY_RERANK",
)

# One sentence per variable where the code's comment is not one. A variable missing here falls
# back to its comment; write one here when that reads badly.
DESCRIPTIONS = {
    "DATABASE_URL": "The database (dj-database-url syntax); unset: SQLite under SPOKE_MEMORY_VAR_DIR, the embedded default. A server URL with DEBUG off makes the configuration a deployment.",
    "DATABASE_CONN_MAX_AGE": "Seconds a web or worker process keeps its database connection open (SQLite: 0).",
    "DATABASE_DISABLE_SERVER_SIDE_CURSORS": "Set to 1 behind a transaction-mode pooler (pgbouncer), where a server-side cursor cannot outlive its transaction.",
    "CELERY_BROKER_URL": "The Celery broker; unset: a filesystem broker under SPOKE_MEMORY_VAR_DIR (one machine only). Production: a Redis URL.",
    "CELERY_TASK_ALWAYS_EAGER": "Run Celery tasks inline in the web process (tests only; never in production).",
    "SECRET_KEY": "Signs cursors, console sessions and CSRF tokens; the same value on every web and worker host. Unset: var/secret_key, made once for the embedded default and DEBUG only; a deployment refuses to start without it.",
    "DEBUG": "Django's debug mode; off in production.",
    "ALLOWED_HOSTS": "Comma-separated host names the web process answers.",
    "CSRF_TRUSTED_ORIGINS": "Comma-separated origins (scheme://host) trusted for the console's forms behind HTTPS.",
    "STATIC_ROOT": "Where `collectstatic` writes the console's static files.",
    "SESSION_COOKIE_SECURE": "Send the console's session cookie over HTTPS only.",
    "CSRF_COOKIE_SECURE": "Send the CSRF cookie over HTTPS only (default: as SESSION_COOKIE_SECURE).",
    "SECURE_SSL_REDIRECT": "Redirect plain HTTP to HTTPS (the health endpoints excepted).",
    "SECURE_HSTS_SECONDS": "The Strict-Transport-Security max-age; 0: no header.",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "Add includeSubDomains to the HSTS header.",
    "SECURE_HSTS_PRELOAD": "Add preload to the HSTS header.",
    "SECURE_PROXY_SSL_HEADER": "The header a TLS-terminating proxy always sets to `https` (e.g. X-Forwarded-Proto); set it only when that proxy overwrites it.",
    "LOG_LEVEL": "The log level of the root logger (and of `memory`, default INFO).",
    "OTEL_TRACES_EXPORTER": "OpenTelemetry's: `console` or `otlp` turns tracing on (off by default; see observability).",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "OpenTelemetry's: an OTLP/HTTP collector; set, tracing is on with exporter `otlp`.",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "OpenTelemetry's: the OTLP/HTTP endpoint for traces alone; set, tracing is on with exporter `otlp`.",
    "OTEL_SDK_DISABLED": "OpenTelemetry's: `true` keeps tracing off whatever else is set.",
    "OTEL_SERVICE_NAME": "OpenTelemetry's: the `service.name` of every span.",
    "SPOKE_MEMORY_EMBED_DIM": "The model's vector dimension; 0: read from the model's files (a server-only model name needs it set).",
    "SPOKE_MEMORY_EMBED_MAX_BYTES": "The most bytes an embeddings server's answer may have, refused unread past it; 0: 32 bytes a value + 64 KiB.",
    "SPOKE_MEMORY_LOG_FORMAT": "`json`: one JSON object per log line (app, gunicorn, Celery worker); else plain text lines.",
    "SPOKE_MEMORY_METRICS_ALLOW_FROM": "Addresses or CIDR networks whose requests /metrics serves without its token (only without a forwarding header).",
    "SPOKE_MEMORY_TRACES_FILE": "With OTEL_TRACES_EXPORTER=console: the file the JSON spans go to instead of stdout.",
    "SPOKE_MEMORY_WORKER_METRICS_PORT": "Set: a Celery worker serves its metrics on this port (no authentication: keep it private).",
    "SPOKE_MEMORY_WORKER_METRICS_ADDR": "The address a worker's metrics port binds to.",
    "PROMETHEUS_MULTIPROC_DIR": "prometheus_client's shared directory of a server's (or a worker's) processes; unset: a private one made at start. Never one for both.",
    "REDIS_URL": "Redis for Django's cache (request throttle, login limiter) when SPOKE_MEMORY_CACHE_URL is unset.",
    "SPOKE_MEMORY_CACHE_URL": "Redis for Django's cache, shared by every process; unset (and no REDIS_URL): a per-process local-memory cache.",
    "SPOKE_MEMORY_CACHE_TIMEOUT_S": "Socket timeouts of the Redis cache (s): a Redis that stops answering costs a request at most this; the limiter then counts in each process alone for 10 s (logged) and logins answer 503.",
    "SPOKE_MEMORY_CACHE_PREFIX": "Key prefix of the Redis cache.",
    "SPOKE_MEMORY_BROKER_TIMEOUT_S": "Socket timeouts of a Redis broker (s), so a hung Redis cannot hang a publishing request.",
    "SPOKE_MEMORY_VAR_DIR": "Where the embedded default keeps its files (SQLite database, filesystem broker, secret key, exported model).",
    "SPOKE_MEMORY_STATIC_HASHED": "Serve compressed, content-hashed static files (needs `collectstatic`); default on unless DEBUG.",
    "WEB_CONCURRENCY": "gunicorn worker processes.",
    "GUNICORN_THREADS": "Threads per gunicorn process (also the base of SPOKE_MEMORY_MAX_IN_FLIGHT's default).",
    "GUNICORN_TIMEOUT": "Seconds after which a request still running gets its worker killed and restarted.",
    "GUNICORN_GRACEFUL_TIMEOUT": "Seconds a reload or stop waits for requests in flight.",
    "GUNICORN_KEEPALIVE": "Seconds a kept-alive connection waits; set it above the reverse proxy's idle timeout.",
    "GUNICORN_MAX_REQUESTS": "Recycle a worker process after this many requests (jittered by a tenth).",
    "FORWARDED_ALLOW_IPS": "The reverse proxy addresses whose X-Forwarded-* headers gunicorn believes.",
    "GUNICORN_ACCESS_LOG": "Where gunicorn writes one line per request (`-`: stdout); bodies, query strings and headers are never logged.",
    "GUNICORN_LOG_LEVEL": "gunicorn's own log level.",
    "SPOKE_MEMORY_PROVIDER_ID": "This provider's id, published in describe and written into exports.",
    "SPOKE_MEMORY_SERVED_CAPABILITIES": "Comma-separated capability flags this host serves (default: all four).",
    "SPOKE_MEMORY_REQUIRED_PROFILE_KINDS": "Comma-separated profile kinds a reflection needs before it may be generated (default: none).",
    "SPOKE_MEMORY_ENGINE": "The recall engine policy served: hybrid/6 (a calibrated score, docs/recall.md#scores) or engine/2; unset: hybrid/6 with the semantic extra installed, engine/2 without it (or with torch but no ONNX Runtime). An older version is retired: configuring one fails at start-up.",
    "SPOKE_MEMORY_REFLECTION_SYNTHESIZER": "Dotted path of the function that writes a reflection's text from its basis.",
    "SPOKE_MEMORY_EMBED_MODEL": "The embedding model: a sentence-transformers directory or name; empty: the engine's bundled model (hybrid/6: its int8 ONNX form).",
    "SPOKE_MEMORY_EMBED_URL": "An OpenAI-compatible embeddings server to send texts to instead of a local forward pass.",
    "SPOKE_MEMORY_EMBED_ALLOW_DOWNLOAD": "Set to 1 to let a model name be downloaded from the Hugging Face hub (off: nothing is fetched at run time).",
    "SPOKE_MEMORY_EMBED_TIMEOUT_S": "Timeout of a call to SPOKE_MEMORY_EMBED_URL (s); past it recall falls back to lexical.",
    "SPOKE_EMBED_THREADS": "Threads of one local embedding forward pass.",
    "SPOKE_MEMORY_RERANK_URL": "A rerank server (text-embeddings-inference /rerank or Cohere/Jina-compatible /v1/rerank) that re-scores recall's pool before the cut; empty: none (docs/recall.md#reranking).",
    "SPOKE_MEMORY_RERANK_MODEL": "With SPOKE_MEMORY_RERANK_URL, the model name a /v1/rerank request carries; without it, a local sentence-transformers cross-encoder folder that reranks recall's pool.",
    "SPOKE_MEMORY_RERANK_WIRE": "The rerank server's wire, tei or cohere; empty: cohere for a URL ending in /v1/rerank or /v2/rerank, else tei.",
    "SPOKE_MEMORY_POSTINGS_CACHE_MB": "MiB each web process may hold of the query terms' postings (PostgreSQL; kept by the subject's revision, least recently used out first); 0: read them on every recall.",
    "SPOKE_MEMORY_RERANK_POOL": "How many of the engine's records the reranker re-scores (at least max_records) before the budget cuts.",
    "SPOKE_MEMORY_RERANK_TIMEOUT_S": "The whole exchange with the rerank server (s), from connecting to the last byte; past it recall answers unreranked.",
    "SPOKE_MEMORY_RERANK_MAX_TEXT_BYTES": "Each text and the query sent to the reranker are cut to this many UTF-8 bytes.",
    "SPOKE_MEMORY_RERANK_MAX_ANSWER_BYTES": "The most bytes of a rerank server's answer read; a larger one is refused (recall answers unreranked).",
    "SPOKE_MEMORY_MAX_REQUEST_BYTES": "`max_request_bytes`: the largest request body; over it 413 payload_too_large.",
    "SPOKE_MEMORY_MAX_CONTENT_BYTES": "`max_content_bytes`: the largest content object (RFC 8785 bytes); over it CONTENT_TOO_LARGE.",
    "SPOKE_MEMORY_MAX_CAPTURE_ITEMS": "`max_capture_items`: items in one capture, fragments in one review.",
    "SPOKE_MEMORY_MAX_PAGE_SIZE": "`max_page_size`: the largest `page_size` of a list op.",
    "SPOKE_MEMORY_MAX_RECALL_RECORDS": "`max_recall_records`: the most results one recall may ask for.",
    "SPOKE_MEMORY_MAX_RECALL_BYTES": "`max_recall_bytes`: the most content bytes one recall answer may hold.",
    "SPOKE_MEMORY_EXPORT_CHUNK_BYTES": "`export_chunk_bytes`: canonical JSON bytes per export chunk.",
    "SPOKE_MEMORY_EXPORT_RETENTION_S": "`export_retention_s`: a stored export is withdrawn this long after it commits.",
    "SPOKE_MEMORY_MAX_EXTENSIONS_BYTES": "`max_extensions_bytes`: the largest `extensions` map of a request or item.",
    "SPOKE_MEMORY_REFLECTION_MIN_RECORDS": "`reflection_min_records`: records a reflection's basis needs (else INSUFFICIENT_DATA).",
    "SPOKE_MEMORY_IDEMPOTENCY_RETENTION_S": "`idempotency_retention_s`: how long idempotency keys are kept whole (a dedup tombstone answers replays after).",
    "SPOKE_MEMORY_SESSION_TTL_S": "`session_ttl_s`: an unused session expires after this.",
    "SPOKE_MEMORY_MAX_JSON_DEPTH": "`max_json_depth`: how deep a content object or extensions map may nest.",
    "SPOKE_MEMORY_MAX_LIST_ITEMS": "`max_list_items`: items in any id, kind or label list of a request, and cognition entries of a content.",
    "SPOKE_MEMORY_MAX_GRANTS_PER_PRINCIPAL": "`max_grants_per_principal`: grants one principal may hold in one space.",
    "SPOKE_MEMORY_MAX_REQUEST_BYTES_PER_MIN": "`max_request_bytes_per_min`: request body bytes one principal may send per minute, counted before a body is read; 0: no budget.",
    "SPOKE_MEMORY_RATE": "Each principal's request rate in cost units (e.g. 60000/min; a records.get costs 1, a page or a recall by its size, an import chunk by its bytes: memory.ops.base.op_cost); over it 429 rate_limited with Retry-After.",
    "SPOKE_MEMORY_SPACE_RATE": "The same rate for all the principals of one home space together (a space's operators' tokens share one budget); a principal without a home space is a tenant of its own.",
    "SPOKE_MEMORY_MAX_IN_FLIGHT": "Requests of one principal, and of one space's principals together, in flight at once on the whole server (per process without Redis); past it 429 with Retry-After: 1; 0: no cap.",
    "SPOKE_MEMORY_IN_FLIGHT_WINDOW_S": "A principal the process served alone this long (s) may use every thread.",
    "SPOKE_MEMORY_REFUSAL_DELAY_MS": "How long a request over its rate or byte budget waits before its 429 (ms); 0: at once.",
    "SPOKE_MEMORY_SHARED_CPU_SHARE": "CPU seconds per second one principal's requests may use in a web process while another principal is served too; 0: off.",
    "SPOKE_MEMORY_HEAVIER_SHARE": "The heavier principal's own share while it yields to a sequential client (s per s, per process).",
    "SPOKE_MEMORY_REFUSED_BODY_WEIGHT": "A body refused as invalid (400, 413) costs the byte budget this many times its size.",
    "SPOKE_MEMORY_SWITCH_INTERVAL_MS": "The interpreter's GIL switch interval in web processes (ms); 0 or less keeps Python's own 5 ms.",
    "SPOKE_MEMORY_LOGIN_MAX_ATTEMPTS": "Failed console logins per username per window before logins for it are refused.",
    "SPOKE_MEMORY_LOGIN_MAX_ADDRESS_ATTEMPTS": "Failed console logins per client address per window.",
    "SPOKE_MEMORY_LOGIN_WINDOW_S": "The login limiter's window (s).",
    "SPOKE_MEMORY_TRUSTED_PROXY_HEADER": "A proxy header naming the client address (e.g. X-Forwarded-For) for the login limiter; unset: REMOTE_ADDR.",
    "SPOKE_MEMORY_TRUSTED_PROXY_COUNT": "Which entry of that header, counted from its right, is the client.",
    "SPOKE_MEMORY_MAX_FORM_BYTES": "The largest console, login or admin form body.",
    "SPOKE_MEMORY_MAX_IMPORT_UPLOAD_BYTES": "The largest bundle file the console's import page accepts.",
    "SPOKE_MEMORY_IMPORT_STAGING_TTL_S": "An import left in staging with no chunk this long (s) is discarded by the beat sweep.",
    "SPOKE_MEMORY_PAGE_BYTES": "What one list page's items may weigh (JSON bytes); a page reaching it ends early with a next_cursor.",
    "SPOKE_MEMORY_SCHEMA_CROSSCHECK": "Set to 1 to judge every request with both schema validators and fail on a disagreement (the test suite).",
    "SPOKE_MEMORY_JOB_TIMEOUT_S": "Pending work still pending after this long (s) is re-queued, then failed, by the sweeper.",
    "SPOKE_MEMORY_DRAIN_WAKE_MS": "Content writes wake the embedding drain with at most one broker message per this many ms per process; 0: one per write.",
    "SPOKE_MEMORY_SWEEP_INTERVAL_S": "How often beat runs the stuck-job sweeper (s).",
    "SPOKE_MEMORY_EXPORT_SWEEP_INTERVAL_S": "How often beat withdraws expired exports and discards abandoned imports (s).",
    "SPOKE_MEMORY_EXPORT_CHUNK_PAUSE_S": "A Django setting only, no environment variable (the tests' worker settings set it): seconds the export job sleeps between chunks, so a test can stop a worker mid-export.",
    "SPOKE_MEMORY_TOKEN": "The bearer token `manage.py spoke mcp` (stdio) acts with.",
}


@dataclass
class Variable:
    name: str
    default: str
    where: str  # path:line of the first read
    comment: str
    limit: str = ""  # the SPOKE_MEMORY_LIMITS key it sets, if any


def _constants(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        ):
            out[node.targets[0].id] = node.value.value
    return out


def _is_settings_getattr(call: ast.Call) -> bool:
    """`getattr(settings, "SPOKE_MEMORY_X", default)`: a Django setting with no variable."""
    f = call.func
    return (
        isinstance(f, ast.Name)
        and f.id == "getattr"
        and len(call.args) >= 2
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == "settings"
    )


def _is_reader(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in READERS
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "get"
        and isinstance(f.value, ast.Attribute)
        and f.value.attr == "environ"
    )


def _comment_above(lines: list[str], lineno: int) -> str:
    """The comment block right above the statement at `lineno` (1-based), joined."""
    out: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        out.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    return " ".join(out)


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?[.:;])(\s|$)", text)
    return (m.group(1) if m else text).strip()


def _default(node: ast.expr | None) -> str:
    if node is None:
        return "(unset)"
    if isinstance(node, ast.Constant):
        if node.value == "":
            return "(empty)"
        if isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return (
                f"{node.value:,}".replace(",", "_")
                if abs(node.value) >= 10_000
                else str(node.value)
            )
        return str(node.value)
    if isinstance(node, ast.List) and not node.elts:
        return "(empty)"
    return ast.unparse(node)


def scan(root: Path = ROOT) -> dict[str, Variable]:
    found: dict[str, Variable] = {}
    for top in SOURCES:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root)
            if SKIP_PARTS & set(rel.parts):
                continue
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
            consts = _constants(tree)
            lines = text.splitlines()
            # The statement each call sits in (for the comment above it), and the limits keys.
            stmt_of: dict[int, ast.stmt] = {}
            limit_of: dict[int, str] = {}
            for stmt in tree.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == LIMITS_DICT
                    and isinstance(stmt.value, ast.Dict)
                ):
                    for k, v in zip(stmt.value.keys, stmt.value.values, strict=True):
                        if isinstance(k, ast.Constant) and isinstance(v, ast.Call):
                            limit_of[id(v)] = str(k.value)
            # Innermost statements win: walk again, deepest last.
            for stmt in ast.walk(tree):
                if isinstance(stmt, ast.stmt) and not isinstance(
                    stmt, ast.FunctionDef | ast.ClassDef | ast.If | ast.For | ast.With | ast.Try
                ):
                    for sub in ast.walk(stmt):
                        stmt_of[id(sub)] = stmt
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                args = node.args
                if _is_settings_getattr(node):
                    args = node.args[1:]
                elif not _is_reader(node):
                    continue
                arg = args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    name = arg.value
                elif isinstance(arg, ast.Name) and isinstance(consts.get(arg.id), str):
                    name = consts[arg.id]
                else:
                    continue
                if name in IGNORED:
                    continue
                given = args[1] if len(args) > 1 else None
                if isinstance(given, ast.Name) and given.id in consts:
                    given = ast.Constant(consts[given.id])
                default = DEFAULTS.get(name) or _default(given)
                stmt = stmt_of.get(id(node))
                comment = _comment_above(lines, stmt.lineno) if stmt else ""
                where = f"{rel.as_posix()}:{node.lineno}"
                if name in found:
                    var = found[name]
                    if var.default == "(unset)" and default != "(unset)":
                        var.default = default
                    continue
                found[name] = Variable(name, default, where, comment, limit_of.get(id(node), ""))
    return found


def group_of(var: Variable) -> str:
    if var.limit:
        return "limits"
    if var.name in FAIRNESS:
        return "limiter"
    if var.name.startswith(ENGINE_PREFIXES):
        return "engine"
    if var.name.startswith("SPOKE_MEMORY_") and var.name not in {
        "SPOKE_MEMORY_CACHE_URL",
        "SPOKE_MEMORY_CACHE_TIMEOUT_S",
        "SPOKE_MEMORY_CACHE_PREFIX",
        "SPOKE_MEMORY_BROKER_TIMEOUT_S",
        "SPOKE_MEMORY_VAR_DIR",
        "SPOKE_MEMORY_STATIC_HASHED",
    }:
        return "provider"
    return "deployment"


def sentence(var: Variable) -> str:
    text = DESCRIPTIONS.get(var.name) or _first_sentence(var.comment)
    return text or "Not described yet: add a sentence to tools/settings_doc.py DESCRIPTIONS."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(found: dict[str, Variable]) -> str:
    out = [
        "<!-- Generated by `python -m tools.settings_doc` from the code that reads the environment. Do not edit. -->",
        "# Settings reference",
        "",
        "Every environment variable the provider reads, with its default as the code spells it; all",
        "optional (none set: the embedded default of `make run`). What a deployment sets:",
        "[deploy](deployment.md#production-settings); the wire limits are also in `memory.describe`.",
        "Regenerate with `python -m tools.settings_doc` (`make lint` checks it).",
        "",
    ]
    for title, key in GROUPS:
        rows = sorted((v for v in found.values() if group_of(v) == key), key=lambda v: v.name)
        if not rows:
            continue
        anchor = key
        out += [f'## <a id="{anchor}"></a>{title}', ""]
        if key == "limits":
            out += ["| variable | limit | default | what |", "|---|---|---|---|"]
        else:
            out += ["| variable | default | what |", "|---|---|---|"]
        for v in rows:
            default = v.default
            if not default.startswith(("(", "`")) and v.name not in DEFAULTS:
                default = f"`{_cell(default)}`"
            name = f'<a id="{v.name.lower()}"></a>`{v.name}`'
            if key == "limits":
                out.append(f"| {name} | `{v.limit}` | {default} | {_cell(sentence(v))} |")
            else:
                out.append(f"| {name} | {default} | {_cell(sentence(v))} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render(scan())
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python -m tools.settings_doc")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
