"""Template helpers. Nothing here marks content safe: `pretty` returns a plain string, so
autoescape still applies to it."""

import json

from django import template
from django.utils.html import format_html

from reviews.console import new_key

register = template.Library()


@register.simple_tag
def idempotency_field() -> str:
    """A hidden field with a fresh key, rendered with the form: a double submit reuses it."""
    return format_html('<input type="hidden" name="idempotency_key" value="{}">', new_key())


@register.simple_tag
def poll_while(pending, url: str) -> str:
    """htmx attributes that make an element re-fetch itself (outerHTML) every 2 s while
    `pending`; the answer for finished work renders without them, so the polling stops."""
    if not pending:
        return ""
    return format_html('hx-get="{}" hx-trigger="every 2s" hx-swap="outerHTML"', url)


@register.filter
def pending(receipt) -> bool:
    return receipt.get("status") == "pending"


@register.filter
def pretty(value) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def get(mapping, key):
    return mapping.get(key) if hasattr(mapping, "get") else None
