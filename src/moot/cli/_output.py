"""Shared output helpers: one JSON object on stdout for --json, rich text otherwise."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

from moot.models.base import Usage

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(payload: Any) -> None:
    """Print one JSON object on its own line (machine-readable; nothing else goes to stdout)."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "requests": usage.requests,
        "cost_usd": round(usage.cost_usd, 6),
        "cached_input_tokens": usage.cached_input_tokens,
    }


def usage_line(usage: Usage, seconds: float | None = None) -> str:
    """A one-line human summary: tokens in/out, requests, cost, time."""
    parts = [
        f"{usage.input_tokens} in / {usage.output_tokens} out tokens",
        f"{usage.requests} request{'s' if usage.requests != 1 else ''}",
        f"${usage.cost_usd:.4f}",
    ]
    if seconds is not None:
        parts.append(f"{seconds:.2f}s")
    return " · ".join(parts)
