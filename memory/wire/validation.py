"""Loads the JSON Schemas under `schemas/` once, fills in the published limits and validates.

Conventions (see schemas/README.md): every cross-file reference is `urn:spoke-memory:schema:<Name>`;
a keyword value `{"$limit": name}` is replaced by `limits[name]` from settings. Validation errors
name the path and the broken rule, never the offending value (it may be memory content)."""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any

from django.conf import settings
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from memory.wire.error_codes import BadRequestDetailsErrorsItem as SchemaError

SCHEMA_DIR = Path(__file__).parent / "schemas"
URN = "urn:spoke-memory:schema:"
# An invalid body's first error is what a client gets: finding more costs the reference
# validator time on a body already known to be refused (issue 26: an invalid 1 MB body cost 3.5 s).
MAX_ERRORS = 1
# Keywords that judge a value's size or shape without looking inside it. The reference validator
# applies a schema's keywords in the order they are written, so these go first: an array over
# maxItems is refused before its items are judged one by one, a string over maxLength before its
# pattern runs, a missing or unknown member before the known ones are descended into.
_CHEAP_FIRST = (
    "type",
    "const",
    "enum",
    "maxItems",
    "minItems",
    "maxLength",
    "minLength",
    "maxProperties",
    "minProperties",
    "required",
    "additionalProperties",
)


def _cheap_first(schema: dict[str, Any]) -> dict[str, Any]:
    first = {k: schema[k] for k in _CHEAP_FIRST if k in schema}
    return {**first, **{k: v for k, v in schema.items() if k not in first}}


def _fill_limits(node: Any, limits: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if set(node) == {"$limit"}:
            return limits[node["$limit"]]
        return _cheap_first({k: _fill_limits(v, limits) for k, v in node.items()})
    if isinstance(node, list):
        return [_fill_limits(v, limits) for v in node]
    return node


@dataclass
class OpSpec:
    op: str
    flag: str
    mutating: bool
    summary: str
    request: dict[str, Any]
    response: dict[str, Any]
    request_validator: Draft202012Validator = field(repr=False)
    response_validator: Draft202012Validator = field(repr=False)
    request_fast: Any = field(default=None, repr=False)
    # The operations-layer codes this op may answer (its schema's `errors`); any op may also
    # answer the codes of `Catalog.every_op`.
    errors: list[str] = field(default_factory=list)
    # Where in a request each named component sits (see `component_paths`), filled lazily.
    paths: dict[str, list[tuple[str, ...]]] = field(default_factory=dict, repr=False)


@dataclass
class Catalog:
    components: dict[str, dict[str, Any]]
    ops: dict[str, OpSpec]
    endpoints: dict[str, dict[str, Any]]
    registry: Registry = field(repr=False)
    # schemas/errors.json: code -> {name, status, layer, when, details}; the codes of every op
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    every_op: list[str] = field(default_factory=list)
    _fast_registry: Any = field(default=None, repr=False)

    def validator(self, schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator(schema, registry=self.registry)

    def component_validator(self, name: str) -> Draft202012Validator:
        return self.validator({"$ref": URN + name})

    def fast_validator(self, schema: dict[str, Any]) -> Any:
        """A compiled (jsonschema-rs) validator of `schema` over the same component files, or None
        when jsonschema-rs is not installed. It only answers valid/invalid: the errors a client
        sees always come from the reference validator (`schema_errors`)."""
        if self._fast_registry is None:
            try:
                import jsonschema_rs
            except ImportError:  # pragma: no cover - the reference implementation serves alone
                return None
            self._fast_registry = jsonschema_rs.Registry(
                [(URN + name, schema) for name, schema in self.components.items()]
            )
        import jsonschema_rs

        return jsonschema_rs.validator_for(schema, registry=self._fast_registry)


def _walk_paths(
    schema: Any,
    target: str,
    components: dict[str, Any],
    path: tuple[str, ...],
    seen: frozenset[str],
) -> list[tuple[str, ...]]:
    if not isinstance(schema, dict):
        return []
    found: list[tuple[str, ...]] = []
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(URN):
        name = ref[len(URN) :]
        if name == target:
            return [path]
        if name not in seen:
            found += _walk_paths(components.get(name), target, components, path, seen | {name})
    for key, sub in schema.get("properties", {}).items():
        found += _walk_paths(sub, target, components, (*path, key), seen)
    if "items" in schema:
        found += _walk_paths(schema["items"], target, components, (*path, "*"), seen)
    for keyword in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(keyword, []):
            found += _walk_paths(sub, target, components, path, seen)
    return sorted(set(found))


def component_paths(spec: OpSpec, name: str) -> list[tuple[str, ...]]:
    """Every place a request of this op may hold the component `name` (e.g. Content,
    Extensions), as member paths with `*` for any array index: read from the op's schema, so a
    new op or member is covered without a list to keep."""
    if name not in spec.paths:
        spec.paths[name] = _walk_paths(spec.request, name, catalog().components, (), frozenset())
    return spec.paths[name]


def values_at(body: Any, path: tuple[str, ...], pointer: str = "") -> Iterator[tuple[str, Any]]:
    """(JSON pointer, value) of each value of `body` at a `component_paths` path."""
    if not path:
        yield pointer or "/", body
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(body, list):
            for index, item in enumerate(body):
                yield from values_at(item, rest, f"{pointer}/{index}")
    elif isinstance(body, dict) and head in body:
        yield from values_at(body[head], rest, f"{pointer}/{head}")


def _read(path: Path, limits: dict[str, Any]) -> dict[str, Any]:
    filled: dict[str, Any] = _fill_limits(json.loads(path.read_text(encoding="utf-8")), limits)
    return filled


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    limits = settings.SPOKE_MEMORY_LIMITS
    components: dict[str, dict[str, Any]] = {}
    for path in sorted((SCHEMA_DIR / "components").glob("*.json")):
        schema = _read(path, limits)
        components[path.stem] = schema
    registry: Registry = Registry().with_resources(
        (URN + name, Resource.from_contents(schema, default_specification=DRAFT202012))
        for name, schema in components.items()
    )
    ops: dict[str, OpSpec] = {}
    for path in sorted((SCHEMA_DIR / "ops").glob("*.json")):
        doc = _read(path, limits)
        ops[doc["op"]] = OpSpec(
            op=doc["op"],
            flag=doc["flag"],
            mutating=doc["mutating"],
            summary=doc.get("summary", ""),
            request=doc["request"],
            response=doc["response"],
            request_validator=Draft202012Validator(doc["request"], registry=registry),
            response_validator=Draft202012Validator(doc["response"], registry=registry),
            errors=doc.get("errors", []),
        )
    endpoints = {
        p.stem: _read(p, limits) for p in sorted((SCHEMA_DIR / "endpoints").glob("*.json"))
    }
    table = _read(SCHEMA_DIR / "errors.json", limits)
    cat = Catalog(
        components=components,
        ops=ops,
        endpoints=endpoints,
        registry=registry,
        errors=table["errors"],
        every_op=table["every_op"],
    )
    for spec in ops.values():
        spec.request_fast = cat.fast_validator(spec.request)
    return cat


def _path(error: ValidationError) -> str:
    return "/" + "/".join(str(p) for p in error.absolute_path)


def _message(error: ValidationError) -> str:
    v, value = error.validator, error.validator_value
    if v in ("required", "additionalProperties", "unevaluatedProperties"):
        # names members (keys), not values; a body of a million unknown members names a few
        return error.message if len(error.message) <= 300 else error.message[:297] + "..."
    if v == "type":
        return f"must be of type {value}"
    if v in ("oneOf", "anyOf"):
        return "matches none of the allowed shapes"
    if v in ("enum", "const"):
        return f"must be one of {json.dumps(value if v == 'enum' else [value])}"
    if v == "propertyNames":
        return "has a member name that is not allowed"
    if v == "not":
        return "is not allowed here"
    if isinstance(value, (int, float, str, bool)):
        return f"violates {v} {json.dumps(value)}"
    return f"violates {v}"


class ValidatorsDisagree(AssertionError):
    """SPOKE_MEMORY_SCHEMA_CROSSCHECK found an instance the two validators judge differently."""


def request_errors(spec: OpSpec, body: Any) -> list[SchemaError]:
    """The request-schema errors of an op's body: its first error, judged by the compiled
    validator (~50x faster than the reference one on a large import chunk, and it stops at the
    first error where the reference one first walks every valid item before it). The reference
    validator judges alone when jsonschema-rs is not installed. With
    SPOKE_MEMORY_SCHEMA_CROSSCHECK (the test suite sets it) both judge every body and a
    disagreement on validity is a failure."""
    fast, check = spec.request_fast, settings.SPOKE_MEMORY_SCHEMA_CROSSCHECK
    if fast is None:
        return schema_errors(spec.request_validator, body)
    valid = fast.is_valid(body)
    if check and valid != (not schema_errors(spec.request_validator, body)):
        raise ValidatorsDisagree(f"jsonschema-rs and jsonschema disagree on a {spec.op} request")
    return [] if valid else fast_errors(fast, body)


def fast_errors(fast: Any, instance: Any) -> list[SchemaError]:
    """The compiled validator's first error, worded as `_message` words the reference one's:
    the path and the broken rule, never the offending value. jsonschema-rs hands the failing
    value back as a Python copy, which for a 100,000-item array costs more than the validation:
    it judges a copy whose arrays stop one item past max_list_items (every array a request may
    hold is bounded by at most that, so an over-long one stays over-long), and the whole body
    only when the first error lies past such a cut (an import chunk's objects)."""
    import jsonschema_rs

    cut = settings.SPOKE_MEMORY_LIMITS["max_list_items"] + 1
    pruned = _pruned(instance, cut)
    target = instance if fast.is_valid(pruned) else pruned
    try:
        fast.validate(target)  # raises the first error only (iter_errors finds them all)
    except jsonschema_rs.ValidationError as error:
        path = "/" + "/".join(str(p) for p in error.instance_path)
        return [{"path": path, "message": _fast_message(error.kind)}]
    return []  # pragma: no cover - is_valid said otherwise


def _pruned(node: Any, cut: int) -> Any:
    """`node` with every array cut to its first `cut` items (a copy of the containers only)."""
    if not isinstance(node, (dict, list)):
        return node
    root: Any = {} if isinstance(node, dict) else []
    stack = [(node, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source[:cut])
        for key, value in items:
            if isinstance(value, (dict, list)):
                copy: Any = {} if isinstance(value, dict) else []
                stack.append((value, copy))
                value = copy
            if isinstance(target, dict):
                target[key] = value
            else:
                target.append(value)
    return root


def _fast_message(kind: Any) -> str:
    name, value = kind.name, kind.value
    if name == "required":
        return f"{json.dumps(value)} is a required property"
    if name in ("additionalProperties", "unevaluatedProperties"):
        names = ", ".join(json.dumps(v) for v in list(value)[:5])
        more = ", ..." if len(value) > 5 else ""
        return f"Additional properties are not allowed ({names}{more} unexpected)"
    if name == "type":
        types = list(value) if isinstance(value, list) else [value]
        return f"must be of type {types[0] if len(types) == 1 else types}"
    if name in ("oneOf", "anyOf"):
        return "matches none of the allowed shapes"
    if name == "enum":
        return f"must be one of {json.dumps(value)}"
    if name == "const":
        return f"must be one of {json.dumps([value])}"
    if name == "propertyNames":
        return "has a member name that is not allowed"
    if name == "not":
        return "is not allowed here"
    if isinstance(value, (int, float, str, bool)):
        return f"violates {name} {json.dumps(value)}"
    return f"violates {name}"


def schema_errors(validator: Draft202012Validator, instance: Any) -> list[SchemaError]:
    errors = sorted(
        islice(validator.iter_errors(instance), MAX_ERRORS), key=lambda e: list(e.absolute_path)
    )
    return [{"path": _path(e), "message": _message(e)} for e in errors]
