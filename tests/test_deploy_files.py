"""Issue 45, item 4: the alert rules and the Grafana dashboard in deploy/ are valid and speak of
metrics the provider exposes. With promtool (Debian's `prometheus`, .ci/setup.d/50-prometheus):
`promtool check rules` and `promtool test rules` (each alert fires on a series that should fire
it, and stays quiet on one that should not). Without it, a schema check of the same files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from memory.observability import metrics

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
RULES_TEST = ROOT / "deploy" / "prometheus" / "alerts_test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "spoke-memory.json"
PROMTOOL = shutil.which("promtool")
ALERTS = {
    "SpokeMemoryHigh5xxRate",
    "SpokeMemoryOpP95OverTarget",
    "SpokeMemoryEmbeddingBacklogGrowing",
    "SpokeMemoryReviewPendingTooLong",
    "SpokeMemoryWorkerAbsent",
}


def exposed() -> set[str]:
    """Every sample name the provider can expose: the metrics module's (with their suffixes)
    and the database gauges collect.py yields."""
    names: set[str] = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            base = value._name  # noqa: SLF001
            kind = value._type  # noqa: SLF001
            if kind == "counter":
                names |= {f"{base}_total", f"{base}_created"}
            elif kind == "histogram":
                names |= {f"{base}_bucket", f"{base}_count", f"{base}_sum", f"{base}_created"}
            else:
                names.add(base)
    source = (ROOT / "memory" / "observability" / "collect.py").read_text()
    names |= set(re.findall(r'"(memory_[a-z_]+)"', source))
    return names


def referenced(text: str) -> set[str]:
    return set(re.findall(r"\bmemory_[a-z_]+\b", text))


def test_the_alert_rules_have_the_required_alerts_in_the_rules_schema():
    doc = yaml.safe_load(RULES.read_text())
    rules = [rule for group in doc["groups"] for rule in group["rules"]]
    assert ALERTS <= {rule["alert"] for rule in rules}
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert rule["expr"].strip() and re.fullmatch(r"\d+[smh]", rule["for"]), rule
        assert rule["labels"]["severity"] in {"page", "ticket"}, rule
        assert rule["annotations"]["summary"], rule
    assert referenced(RULES.read_text()) <= exposed()


def test_the_dashboard_loads_and_queries_only_exposed_metrics():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "spoke-memory" and dashboard["panels"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"]
    used = referenced(DASHBOARD.read_text())
    assert used <= exposed(), used - exposed()
    # every metric the issue asks to be seen is on the dashboard
    for name in (
        "memory_operations_total",
        "memory_operation_duration_seconds_bucket",
        "memory_http_requests_in_flight",
        "memory_refusals_total",
        "memory_embedding_backlog",
        "memory_embeddings_drained_total",
        "memory_jobs_queue_depth",
        "memory_jobs_oldest_age_seconds",
        "memory_review_queue_size",
        "memory_review_oldest_pending_age_seconds",
        "memory_recall_results_count_bucket",
        "memory_recall_top_similarity_bucket",
        "memory_db_connections",
        "memory_bytes_total",
    ):
        assert name in used, name


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (.ci/setup.d/50-prometheus)")
def test_promtool_checks_the_rules_and_each_alert_fires_when_it_should():
    check = subprocess.run(  # noqa: S603 - a fixed tool and our own files
        [PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    unit = subprocess.run(  # noqa: S603
        [PROMTOOL, "test", "rules", RULES_TEST.name],
        cwd=RULES_TEST.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert unit.returncode == 0, unit.stdout + unit.stderr


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (.ci/setup.d/50-prometheus)")
def test_promtool_refuses_a_broken_rule(tmp_path):
    broken = tmp_path / "broken.yml"
    text = RULES.read_text().replace("> 0.01", "> > 0.01", 1)
    assert text != RULES.read_text()
    broken.write_text(text)
    check = subprocess.run(  # noqa: S603
        [PROMTOOL, "check", "rules", str(broken)], capture_output=True, text=True, check=False
    )
    assert check.returncode != 0
