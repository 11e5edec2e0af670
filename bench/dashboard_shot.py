"""The Grafana dashboard (deploy/grafana/spoke-memory.json) drawn from a real Prometheus, for the
screenshot in docs/observability.md. Grafana itself is not packaged for Debian, so this draws
the dashboard's own panels (their titles, layout, units and PromQL, unchanged) with matplotlib
from the answers of a Prometheus server (Debian's `prometheus`, .ci/setup.d/50-prometheus) that
scraped a running provider during a short load:

- the product as an operator runs it (bench/_live.py: gunicorn with its own configuration, one
  Celery worker serving its metrics port, the default engine) on the bench database and broker;
- Prometheus on loopback scraping the web server (job `spoke-memory`) and the worker (job
  `spoke-memory-worker`) every 5 s, with deploy/prometheus/alerts.yml loaded;
- DASHBOARD_S (240) seconds of load by DASHBOARD_CLIENTS (4) threads: creates, gets, updates,
  recalls, captures and their reviews, a few exports and reflections (jobs), refused requests
  (a schema error, an unknown record) and a rate limit low enough to refuse some;
- every panel's queries asked over the run with /api/v1/query_range (step 5 s), drawn in the
  dashboard's grid, saved to DASHBOARD_OUT (docs/observability-dashboard.png).

Not part of `python -m bench` (it runs only when named: `python -m bench dashboard_shot`).
Ports: DASHBOARD_PORT (web), +1 (worker metrics), +2 (Prometheus)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import httpx

from bench import DATABASE_URL, ROOT, knob, seed, setup_django, stop

SECONDS = knob("DASHBOARD_S", 240.0)
CLIENTS = knob("DASHBOARD_CLIENTS", 4)
PORT = knob("DASHBOARD_PORT", 8385)
RATE = "1500/min"  # per principal: the load's busiest moments meet it (refusals to show)
DASHBOARD = ROOT / "deploy" / "grafana" / "spoke-memory.json"
OUT = ROOT / "docs" / "observability-dashboard.png"
LOGS = ROOT / "var" / "bench-dashboard"
STEP_S = 5


def prometheus(port: int, web: int, worker: int, folder: Path) -> subprocess.Popen:
    binary = shutil.which("prometheus")
    if binary is None:
        raise SystemExit("no prometheus binary: run .ci/setup.d/50-prometheus (Debian's package)")
    rules = folder / "alerts.yml"
    shutil.copy(ROOT / "deploy" / "prometheus" / "alerts.yml", rules)
    config = folder / "prometheus.yml"
    config.write_text(
        json.dumps(
            {
                "global": {"scrape_interval": "5s", "evaluation_interval": "5s"},
                "rule_files": [str(rules)],
                "scrape_configs": [
                    {
                        "job_name": "spoke-memory",
                        "static_configs": [{"targets": [f"127.0.0.1:{web}"]}],
                    },
                    {
                        "job_name": "spoke-memory-worker",
                        "static_configs": [{"targets": [f"127.0.0.1:{worker}"]}],
                    },
                ],
            }
        )
    )
    with (LOGS / "prometheus.log").open("w") as sink:
        proc = subprocess.Popen(  # noqa: S603 - a fixed binary and arguments
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/-/ready", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise RuntimeError("prometheus did not become ready")


class Load:
    """Client threads sending a mix of ops as the space's admin until `stop` is set."""

    def __init__(self, url: str, space_id: str, token: str) -> None:
        self.url, self.space_id = url, space_id
        self.http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        # a session negotiating every flag: exports and reflections (jobs) need theirs
        from memory.flags import ALL_FLAGS

        session = self.http.post(f"{url}/v1/connect", json={"capabilities": ALL_FLAGS})
        session.raise_for_status()
        self.http.headers["Spoke-Session"] = session.json()["session"]["session_id"]
        self.records: list[tuple[str, int]] = []
        self.pending: list[str] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.sent = 0

    def op(self, name: str, body: dict) -> dict | None:
        answer = self.http.post(f"{self.url}/v1/ops/{name}", json=body)
        with self.lock:
            self.sent += 1
        return answer.json() if answer.status_code == 200 else None

    def run(self, n: int) -> None:
        rng = random.Random(n)
        subject = f"u{n}"
        words = ["tea", "trains", "Lisbon", "piano", "cycling", "deadline", "allergy", "garden"]
        i = 0
        while not self.stop.is_set():
            i += 1
            pick = rng.random()
            text = f"{rng.choice(words)} and {rng.choice(words)}, note {n}-{i}"
            with self.lock:
                known, pending = list(self.records), list(self.pending)
            if pick < 0.25 or not known:
                answer = self.op(
                    "memory.records.create",
                    {"space_id": self.space_id, "subject_id": subject, "kind": "note",
                     "content": {"text": text}, "placement": {"scope": "shared"}},
                )  # fmt: skip
                if answer:
                    with self.lock:
                        self.records.append((answer["receipt"]["refs"][0]["id"], 1))
            elif pick < 0.55:
                query = {"text": f"{rng.choice(words)} {rng.choice(words)}"}
                self.op("memory.recall",
                        {"space_id": self.space_id, "subject_id": subject, "query": query})  # fmt: skip
            elif pick < 0.65:
                answer = self.op(
                    "memory.capture",
                    {"space_id": self.space_id, "subject_id": subject,
                     "capture_scope": {"placement": {"scope": "shared"}},
                     "items": [{"content": {"text": text}}]},
                )  # fmt: skip
                if answer:
                    with self.lock:
                        self.pending.append(answer["receipt"]["refs"][0]["id"])
            elif pick < 0.70 and pending:
                # reviews lag the captures: the queue grows, and its oldest item ages
                candidate = pending[0]
                with self.lock:
                    if candidate in self.pending:
                        self.pending.remove(candidate)
                action = "promote" if rng.random() < 0.7 else "drop"
                self.op("memory.candidates.review",
                        {"space_id": self.space_id, "candidate_id": candidate,
                         "decision": {"action": action}})  # fmt: skip
            elif pick < 0.85:
                record_id, _ = rng.choice(known)
                self.op("memory.records.get", {"space_id": self.space_id, "record_id": record_id})
            elif pick < 0.93:
                record_id, revision = rng.choice(known)
                body = {"space_id": self.space_id, "record_id": record_id,
                        "expected_revision": revision, "content": {"text": text}}  # fmt: skip
                if self.op("memory.records.update", body):
                    with self.lock:
                        if (record_id, revision) in self.records:
                            self.records.remove((record_id, revision))
                            self.records.append((record_id, revision + 1))
            elif pick < 0.96:
                # refused: a schema error, an unknown record
                self.op("memory.records.create", {"space_id": self.space_id})
                self.op("memory.records.get", {"space_id": self.space_id, "record_id": "rec_none"})
            elif pick < 0.97:
                self.op("memory.exports.create", {"space_id": self.space_id})
            elif pick < 0.98:
                self.op("memory.reflections.generate",
                        {"space_id": self.space_id, "subject_id": subject})  # fmt: skip


def query_range(port: int, expr: str, start: float, end: float) -> list[dict]:
    answer = httpx.get(
        f"http://127.0.0.1:{port}/api/v1/query_range",
        params={"query": expr, "start": start, "end": end, "step": STEP_S},
        timeout=30,
    ).json()
    if answer.get("status") != "success":
        raise RuntimeError(f"{expr}: {answer}")
    return answer["data"]["result"]


def legend(fmt: str, labels: dict[str, str]) -> str:
    if not fmt:
        return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "value"
    out = fmt
    for key, val in labels.items():
        out = out.replace("{{" + key + "}}", val)
    return out


def draw(panels: list[dict], data: dict[int, list[tuple[str, list[dict]]]], path: Path,
         start: float, note: str) -> None:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels) // 8
    plt.style.use("dark_background")
    height = 2.9 * rows + 1.3
    fig = plt.figure(figsize=(16, height), facecolor="#111217")
    grid = fig.add_gridspec(
        rows, 2, hspace=0.6, wspace=0.16, top=1 - 1.3 / height, bottom=0.35 / height,
        left=0.05, right=0.98,
    )  # fmt: skip
    fig.text(0.01, 1 - 0.35 / height, "spoke-memory: deploy/grafana/spoke-memory.json",
             fontsize=14, color="#d8d9da")  # fmt: skip
    fig.text(0.01, 1 - 0.95 / height, textwrap.fill(note, 170), fontsize=10, color="#8e8e8e")
    units = {
        "s": lambda v: f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s",
        "percentunit": lambda v: f"{v * 100:.1f}%",
        "bytes": lambda v: f"{v / 1024:.0f} KiB" if v >= 1024 else f"{v:.0f} B",
        "reqps": lambda v: f"{v:.1f}/s",
        "ops": lambda v: f"{v:.2f}/s",
    }
    for panel in panels:
        pos = panel["gridPos"]
        ax = fig.add_subplot(grid[pos["y"] // 8, pos["x"] // 12])
        ax.set_facecolor("#181b1f")
        ax.set_title(panel["title"], loc="left", fontsize=10, color="#d8d9da")
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
        fmt = units.get(unit, lambda v: f"{v:g}")
        series = data[panel["id"]]
        if panel["type"] == "stat":
            ax.axis("off")
            shown = [
                (legend(fmt_legend, result["metric"]), float(result["values"][-1][1]))
                for fmt_legend, results in series
                for result in results
            ]
            for i, (name, val) in enumerate(shown[:4]):
                ax.text(0.05 + 0.45 * (i % 2), 0.55 - 0.45 * (i // 2), fmt(val), fontsize=26,
                        color="#73bf69", transform=ax.transAxes)  # fmt: skip
                ax.text(0.05 + 0.45 * (i % 2), 0.42 - 0.45 * (i // 2), name, fontsize=9,
                        color="#8e8e8e", transform=ax.transAxes)  # fmt: skip
            if not shown:
                ax.text(0.05, 0.5, "no data", color="#8e8e8e", transform=ax.transAxes)
            continue
        drawn = 0
        for fmt_legend, results in series:
            for result in results[:8]:
                xs = [(float(t) - start) / 60 for t, _ in result["values"]]
                ys = [float(v) for _, v in result["values"]]
                ax.plot(xs, ys, linewidth=1.3, label=legend(fmt_legend, result["metric"])[:40])
                drawn += 1
        if drawn:
            ax.legend(fontsize=7, loc="upper left", framealpha=0.3, ncol=2)
        else:
            ax.text(0.4, 0.5, "no data", color="#8e8e8e", transform=ax.transAxes)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _, f=fmt: f(v)))
        ax.tick_params(labelsize=8, colors="#8e8e8e")
        ax.set_xlabel("minutes into the run", fontsize=8, color="#8e8e8e")
        ax.grid(color="#2c3235", linewidth=0.6)
    fig.savefig(path, dpi=80, facecolor=fig.get_facecolor())
    plt.close(fig)


def main() -> dict:
    from bench import _live

    LOGS.mkdir(parents=True, exist_ok=True)
    out = Path(os.environ.get("DASHBOARD_OUT") or OUT)
    panels = json.loads(DASHBOARD.read_text())["panels"]
    redraw = os.environ.get("DASHBOARD_REDRAW")  # a run's series.json: draw it again, no run
    if redraw:
        saved = json.loads(Path(redraw).read_text())
        series = {int(k): v for k, v in saved["series"].items()}
        draw(panels, series, out, saved["start"], saved["note"])
        return {"out": str(out)}
    setup_django()
    s = seed(f"dash-{int(time.time())}", subjects=CLIENTS)
    env = _live.product_env(DATABASE_URL, SPOKE_MEMORY_RATE=RATE)
    worker_env = {**env, "SPOKE_MEMORY_WORKER_METRICS_PORT": str(PORT + 1)}
    folder = Path(tempfile.mkdtemp(prefix="spoke-dashboard-prom-"))
    worker = _live.Worker(worker_env, LOGS / "worker.log")
    prom = None
    try:
        with _live.web(env, LOGS / "web.log", port=PORT) as url:
            prom = prometheus(PORT + 2, PORT, PORT + 1, folder)
            load = Load(url, s.space_id, s.token)
            threads = [threading.Thread(target=load.run, args=(i,)) for i in range(CLIENTS)]
            start = time.time()
            for t in threads:
                t.start()
            time.sleep(SECONDS)
            load.stop.set()
            for t in threads:
                t.join(60)
            time.sleep(2 * STEP_S)  # the last scrapes
            end = time.time()
            data = {
                p["id"]: [
                    (t.get("legendFormat", ""), query_range(PORT + 2, t["expr"], start, end))
                    for t in p["targets"]
                ]
                for p in panels
            }
    finally:
        worker.stop()
        if prom is not None:
            stop(prom)
        shutil.rmtree(folder, ignore_errors=True)
    load_avg = Path("/proc/loadavg").read_text().split()[:3]
    note = (
        f"Not Grafana: the dashboard's panels and queries drawn with matplotlib from a real "
        f"Prometheus's query_range answers. {SECONDS / 60:.0f} min of load by {CLIENTS} clients "
        f"({load.sent} requests; scraped every 5 s; the 5 m rate windows fill as the run goes), "
        f"load average {' '.join(load_avg)} on 2 cores."
    )
    draw(panels, data, out, start, note)
    series = {str(k): v for k, v in data.items()}
    (LOGS / "series.json").write_text(json.dumps({"start": start, "note": note, "series": series}))
    print(f"wrote {out} ({out.stat().st_size} bytes); {load.sent} requests; load {load_avg}")
    return {"requests": load.sent, "out": str(out), "load": load_avg}


if __name__ == "__main__":
    main()
