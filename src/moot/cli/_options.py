"""Options that mean the same on every command: ``--budget``, ``--model`` (with ``ROLE=MODEL``),
``--json`` and ``--out``.

Each is parsed here once, so a script can rely on one meaning per option name:

- ``--budget PRESET[,LIMIT=VALUE…]``: the run's limits. ``PRESET`` is ``quick``, ``standard`` or
  ``deep`` (the team's own sizes); limits are ``calls=N``, ``tokens=N``, ``usd=X`` and
  ``seconds=X`` and override the preset's. ``--budget calls=8`` keeps the team's standard
  preset and changes its calls.
- ``--model MODEL`` sets the model of every role; ``--model ROLE=MODEL`` (repeatable) sets one
  role's model. Parsed into ``(default, {role: model})``.
- ``--json`` prints one JSON object on stdout; ``--out FILE`` writes a file.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import typer

from moot.errors import UsageError

BUDGET_PRESETS = ("quick", "standard", "deep")
_LIMITS = {"calls": "max_calls", "tokens": "max_tokens", "usd": "max_cost_usd", "seconds": "deadline_s"}
BUDGET_HELP = (
    "The run's limits: quick, standard or deep (the team's own sizes), and/or "
    "calls=N, tokens=N, usd=X, seconds=X, comma-separated (e.g. deep,seconds=300)."
)
MODEL_HELP = (
    "Model string for every role (default: $MOOT_MODEL, else the embedded model); "
    "ROLE=MODEL sets one role's model (repeatable)."
)


@dataclass(frozen=True)
class BudgetChoice:
    """What ``--budget`` said: a preset name and limits that override it (``None``: not given)."""

    preset: str = "standard"
    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    deadline_s: float | None = None
    text: str = "standard"
    """The option as given, for messages and reports."""

    def limits(self) -> dict[str, Any]:
        """The limits that were given, as ``Budget`` field names."""
        return {k: v for k, v in (("max_calls", self.max_calls), ("max_tokens", self.max_tokens),
                                  ("max_cost_usd", self.max_cost_usd), ("deadline_s", self.deadline_s)) if v is not None}

    def budget(self, model: Any = None) -> Any:
        """A :class:`moot.runtime.Budget`: the runtime's preset, its deadline fitted to ``model``
        (a model string, a model, or ``None`` for the default: a model running on this machine
        gets longer), then the limits that were given, which always win."""
        from moot.models.registry import default_model
        from moot.runtime import Budget

        fitted = Budget.preset(self.preset, model=model if model is not None else default_model())
        return fitted.override(**self.limits())

    def scaled(self, standard: dict[str, Any]) -> dict[str, Any]:
        """Limits for a team that has one size (``standard``): quick halves, deep doubles its
        calls and seconds; then the given limits apply."""
        factor = {"quick": 0.5, "standard": 1.0, "deep": 2.0}[self.preset]
        out: dict[str, Any] = {}
        for key, value in standard.items():
            if value is None:
                out[key] = None
            elif key == "max_calls":
                out[key] = max(1, math.ceil(value * factor))
            elif key in ("deadline_s", "max_tokens", "max_cost_usd"):
                out[key] = type(value)(value * factor)
            else:
                out[key] = value
        return {**out, **self.limits()}


def parse_budget(text: str | None, *, default: str = "standard") -> BudgetChoice:
    """Parse ``--budget``; a mistake is one :class:`UsageError` line naming the fix."""
    raw = (text or default).strip()
    preset = default
    limits: dict[str, Any] = {}
    fix = "use --budget quick, standard or deep, and/or calls=N,tokens=N,usd=X,seconds=X (e.g. --budget deep,seconds=300)"
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        if "=" not in part:
            if part not in BUDGET_PRESETS:
                raise UsageError(f"unknown budget {part!r}", fix=fix)
            preset = part
            continue
        key, _, value = (s.strip() for s in part.partition("="))
        if key not in _LIMITS:
            raise UsageError(f"unknown budget limit {key!r} in --budget {raw!r}", fix=fix)
        try:
            number: float | int = int(value) if key in ("calls", "tokens") else float(value)
        except ValueError:
            raise UsageError(f"budget limit {key}={value!r} is not a number", fix=fix) from None
        if number <= 0:
            raise UsageError(f"budget limit {key}={value} must be above 0", fix=fix)
        limits[_LIMITS[key]] = number
    return BudgetChoice(preset=preset, text=raw, **limits)


def budget_option(default: str = "standard", help: str = BUDGET_HELP) -> Any:
    """The ``--budget`` option (``-b``), the same on every command that runs a team."""
    return typer.Option(default, "--budget", "-b", help=help)


@dataclass(frozen=True)
class ModelChoice:
    """What ``--model`` said: one model for every role, and models for single roles."""

    default: str | None = None
    roles: dict[str, str] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        return {"default": self.default, "roles": dict(self.roles)}


def parse_models(values: list[str] | str | None) -> ModelChoice:
    """``--model MODEL`` and ``--model ROLE=MODEL`` (each repeatable) → ``(default, {role: model})``.

    A role name is letters, digits, ``_`` and ``-``; a model string never has ``=`` before its
    first ``:`` so ``openai-compatible:http://h/v1?a=b#m`` stays a model string.
    """
    if values is None:
        return ModelChoice()
    if isinstance(values, str):
        values = [values]
    default: str | None = None
    roles: dict[str, str] = {}
    for value in values:
        value = value.strip()
        head, eq, tail = value.partition("=")
        if eq and ":" not in head and head:
            role = head.strip()
            if not role.replace("_", "").replace("-", "").isalnum():
                raise UsageError(f"bad role name {role!r} in --model {value!r}", fix="use --model ROLE=MODEL, e.g. --model synthesizer=openai:gpt-4o")
            if not tail.strip():
                raise UsageError(f"no model after {role}= in --model {value!r}", fix=f"use --model {role}=MODEL")
            if role in roles and roles[role] != tail.strip():
                raise UsageError(f"--model gives role {role!r} two models", fix=f"pass --model {role}=MODEL once")
            roles[role] = tail.strip()
        else:
            if default is not None and default != value:
                raise UsageError(f"--model given twice without a role ({default!r} and {value!r})",
                                 fix="give one default model, and ROLE=MODEL for the others")
            default = value
    return ModelChoice(default=default, roles=roles)


def model_option(help: str = MODEL_HELP) -> Any:
    """The ``--model``/``-m`` option of team commands (repeatable, ``ROLE=MODEL`` allowed)."""
    return typer.Option(None, "--model", "-m", help=help)


def team_model_kwargs(target: Callable[..., Any], choice: ModelChoice, *, command: str) -> dict[str, Any]:
    """The model keyword arguments for a team's constructor or function: ``model=`` always, and
    ``models={role: model}`` when roles were given. A team that does not take ``models`` yet
    refuses roles in one line instead of silently using the default for them."""
    kwargs: dict[str, Any] = {"model": choice.default}
    if choice.roles:
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if "models" not in params:
            raise UsageError(f"`moot {command}` takes one model for every role", fix="pass --model MODEL without ROLE=")
        kwargs["models"] = dict(choice.roles)
    return kwargs


MCP_HELP = (
    "An MCP tool server for the agents: NAME=COMMAND (stdio) or NAME=URL (streamable HTTP), repeatable; "
    "added to the servers of [mcp.servers] in moot.toml."
)


def mcp_option(help: str = MCP_HELP) -> Any:
    """The ``--mcp NAME=COMMAND|URL`` option of the commands whose agents use tools. The help is
    escaped for the help screen's markup, which would otherwise swallow ``[mcp.servers]``."""
    from rich.markup import escape

    return typer.Option(None, "--mcp", help=escape(help))


def mcp_servers(values: list[str] | None) -> list[Any]:
    """The MCP tool servers for a command: ``[mcp.servers]`` of moot.toml, then ``--mcp`` (which
    replaces a server of the same name)."""
    from moot import config
    from moot.runtime.mcp import MCPToolServer, merge_servers, servers_from_config

    given = [MCPToolServer.parse(v) for v in values or ()]
    return merge_servers(servers_from_config(config.mcp_servers_table()), given)


def json_option(help: str = "Print one JSON object on stdout.") -> Any:
    return typer.Option(False, "--json", help=help)


__all__ = [
    "BUDGET_HELP", "BUDGET_PRESETS", "MCP_HELP", "MODEL_HELP", "BudgetChoice", "ModelChoice", "budget_option", "json_option",
    "mcp_option", "mcp_servers", "model_option", "parse_budget", "parse_models", "team_model_kwargs",
]
