"""The pages a new user lands on (issue 14): `/` says what this server runs and links onward;
`/v1/docs` is Swagger UI served from here; every `$ref` of /v1/openapi.json resolves inside the
document, so Swagger UI can show every field."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.django_db


def _refs(node, where: str = "#"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield where, value
            else:
                yield from _refs(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _refs(value, f"{where}/{i}")


def resolve(document: dict, ref: str):
    """A JSON Pointer inside the document itself (RFC 6901); KeyError when it points nowhere."""
    if not ref.startswith("#/"):
        raise KeyError(f"{ref} is not a reference inside the document")
    node = document
    for token in ref[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def test_every_ref_of_the_openapi_document_resolves_inside_it(api):
    doc = api.raw("/v1/openapi.json", method="get").body
    refs = list(_refs(doc))
    assert len(refs) > 100
    unresolved = []
    for where, ref in refs:
        try:
            target = resolve(doc, ref)
        except (KeyError, IndexError, ValueError):
            unresolved.append(f"{where}: {ref}")
            continue
        assert isinstance(target, dict), f"{where}: {ref} is not a schema"
    assert unresolved == []
    # Components are reached too, not only the ops' own request and answer schemas.
    assert any(where.startswith("#/components/") for where, _ in refs)
    # Each op's request and answer is a component with fields a reader can expand.
    recall = resolve(doc, "#/components/schemas/memory.recall.request")
    assert "budget" in recall["properties"]


def test_resolve_says_no_to_a_ref_that_points_nowhere_or_outside():
    doc = {"components": {"schemas": {"A": {"type": "object"}}}}
    assert resolve(doc, "#/components/schemas/A") == {"type": "object"}
    for bad in ("#/components/schemas/B", "urn:spoke-memory:schema:A", "other.json#/A"):
        with pytest.raises(KeyError):
            resolve(doc, bad)


def test_docs_page_is_swagger_ui_from_this_server(api):
    response = api.client.get("/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-openapi-url="/v1/openapi.json"' in html
    scripts = re.findall(r'<script src="([^"]+)"', html)
    styles = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    assert any("swagger-ui-bundle" in s for s in scripts)
    assert any("swagger-ui" in s for s in styles)
    # No CDN: every asset is a path on this server (the network may be closed).
    assert all(url.startswith("/static/") for url in scripts + styles)
    assert "<script>" not in html  # CSP script-src 'self': no inline script
    for url in scripts + styles:
        assert api.client.get(url).status_code == 200, url


def test_landing_page_links_onward_and_names_engine_database_and_broker(api):
    response = api.client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    for link in ("/console/", "/v1/docs", "/v1/openapi.json", "/v1/manifest"):
        assert f'href="{link}"' in html
    assert settings.SPOKE_MEMORY_ENGINE in html
    database = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}[connection.vendor]
    assert database in html
    broker = "Redis" if settings.CELERY_BROKER_URL.startswith("redis") else "filesystem broker"
    assert broker in html


def test_landing_page_names_kinds_never_addresses(api, settings):
    settings.CELERY_BROKER_URL = "redis://:hunter2@cache.internal:6379/3"
    html = api.client.get("/").content.decode()
    assert "Redis" in html
    assert "hunter2" not in html and "cache.internal" not in html
    settings.CELERY_BROKER_URL = "weird+scheme://secret-host/x"
    html = api.client.get("/").content.decode()
    assert "weird+scheme" in html and "secret-host" not in html


def test_landing_page_is_read_only(api):
    answer = api.raw("/", b"{}")
    assert answer.status == 405 and answer.code == "method_not_allowed"
    assert api.client.head("/").status_code == 200
