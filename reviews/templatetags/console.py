"""Template helpers. Nothing here marks content safe: `pretty` returns a plain string, so
autoescape still applies to it."""

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html

from memory.timeutil import iso, parse
from reviews import people
from reviews.console import new_key

register = template.Library()


@register.simple_tag
def idempotency_field() -> str:
    """A hidden field with a fresh key, rendered with the form: a double submit reuses it."""
    return format_html('<input type="hidden" name="idempotency_key" value="{}">', new_key())


@register.simple_tag
def poll_while(pending: object, url: str) -> str:
    """htmx attributes that make an element re-fetch itself (outerHTML) every 2 s while
    `pending`; the answer for finished work renders without them, so the polling stops."""
    if not pending:
        return ""
    return format_html('hx-get="{}" hx-trigger="every 2s" hx-swap="outerHTML"', url)


@register.filter
def gist(text: object) -> str:
    """A memory's first words (reviews/words.py), escaped by the template like any text."""
    from reviews.words import gist as first_words

    return first_words(text if isinstance(text, str) else None)


@register.filter
def percent(value: Any) -> str:
    """0.0834 -> "8%"."""
    try:
        return f"{round(float(value) * 100)}%"
    except (TypeError, ValueError):
        return ""


@register.filter
def pending(receipt: Any) -> bool:
    return bool(receipt.get("status") == "pending")


@register.filter
def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.simple_tag(takes_context=True)
def who(context: template.Context, principal_id: str | None, name: str | None = None) -> str:
    """A principal by display name, its `prn_…` id in the tooltip (and copyable on select).
    The name is the view's (`principal_names` in the context, `people.named`: one query per
    page), else read here, once per id per render."""
    if not principal_id:
        return "—"
    if name is None:
        name = (context.get("principal_names") or {}).get(principal_id)
    if name is None:
        render = context.render_context
        known: dict[str, str] | None = render.get("principal_names")
        if known is None:
            known = render["principal_names"] = {}
        if principal_id not in known:
            known.update(people.names([principal_id]))
            known.setdefault(principal_id, principal_id)
        name = known[principal_id]
    # The id: in the tooltip, and shown (selected, and copied where the browser allows) by a
    # click on the name (static/reviews/console.js).
    return format_html(
        '<span class="who-name" title="{}" data-id="{}" tabindex="0" role="button">{}</span>'
        '<code class="who-id" hidden>{}</code>',
        principal_id,
        principal_id,
        name or principal_id,
        principal_id,
    )


def _ago(seconds: float) -> str:
    future, seconds = seconds < 0, abs(seconds)
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = int(seconds // size)
            text = f"{n} {unit}{'s' if n != 1 else ''}"
            return f"in {text}" if future else f"{text} ago"
    return "just now"


@register.simple_tag
def when(value: str | datetime | None) -> str:
    """A wire time as relative text, the exact time (UTC) on hover."""
    if not value:
        return "—"
    try:
        at = parse(value) if isinstance(value, str) else value
    except ValueError:
        return format_html("<time>{}</time>", value)
    exact = iso(at)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        exact,
        exact,
        _ago((datetime.now(UTC) - at).total_seconds()),
    )


@register.simple_tag
def querystring_with(query: str, **extra: str) -> str:
    """`query` (a `?a=b` string or "") with `extra` members set (blank ones left out)."""
    params = dict(parse_qsl(query.lstrip("?")))
    params.update({k: v for k, v in extra.items() if v})
    params = {k: v for k, v in params.items() if v}
    return "?" + urlencode(params) if params else ""


@register.simple_tag
def subject_link(space_id: str, subject_id: str | None) -> str:
    """A subject id linking to the subject's page (the Space screen's subject lookup: state,
    fences, reflections, records)."""
    if not subject_id:
        return "—"
    url = reverse("reviews:space", args=[space_id]) + "?" + urlencode({"subject": subject_id})
    return format_html('<a class="subject-link" href="{}"><code>{}</code></a>', url, subject_id)
