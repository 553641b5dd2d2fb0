"""JSON-schema validation of structured output, shared by every provider."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator


def validate(value: Any, schema: dict[str, Any]) -> str | None:
    """Return ``None`` when ``value`` matches ``schema``, else a one-line description of the first problem."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path) or "(root)"
    return f"at {where}: {first.message}"
