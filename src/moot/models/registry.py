"""One string picks a model: ``local``, ``openai:gpt-4o-mini``, ``ollama:llama3.2`` …

This is the only place that knows which provider class a model string means. Everything
above it asks :func:`infer_model` and receives a :class:`Model`, ready-wrapped with retries,
the process-wide concurrency limit and cost accounting. A team that takes a model per role
(``models={"planner": "openai:gpt-4o"}`` beside one default ``model=``) resolves both with
:func:`resolve_models` and picks a role's model with :func:`model_for`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from moot import config
from moot.errors import ConfigError
from moot.models.base import Model

VALID_FORMS = (
    "local, local-1.5b, local:/path/model.gguf, openai:MODEL, anthropic:MODEL, "
    "ollama:MODEL, openai-compatible:http://HOST:PORT/v1#MODEL"
)
OLLAMA_DEFAULT_HOST = "http://localhost:11434"
COMPATIBLE_KEY_ENV = "MOOT_OPENAI_COMPATIBLE_API_KEY"

# What `moot models` lists for a provider whose key is set (any model of theirs works).
SUGGESTED = {
    "openai": "openai:gpt-4o-mini",
    "anthropic": "anthropic:claude-haiku-4-5",
    "ollama": "ollama:llama3.2",
}


_PROVIDERS = ("openai", "anthropic", "ollama", "openai-compatible")
# Bare model names whose provider is plain from the name (a pure guess for the error message only).
_NAME_PREFIXES = (
    (("gpt", "o1", "o3", "o4", "chatgpt", "text-embedding"), "openai"),
    (("claude",), "anthropic"),
    (("llama", "qwen", "mistral", "mixtral", "gemma", "phi", "deepseek", "codellama"), "ollama"),
)


def suggest_model_string(spec: str) -> str | None:
    """A likely meant model string for a wrong one (``gpt-4o`` → ``openai:gpt-4o``,
    ``opnai:gpt-4o`` → ``openai:gpt-4o``), or ``None``. Pure: used only to word an error."""
    spec = spec.strip()
    provider, sep, rest = spec.partition(":")
    if not sep:
        lowered = spec.lower()
        for prefixes, name in _NAME_PREFIXES:
            if lowered.startswith(prefixes):
                return f"{name}:{spec}"
        return None
    if provider not in _PROVIDERS and rest.strip():
        import difflib

        close = difflib.get_close_matches(provider.lower(), _PROVIDERS, n=1, cutoff=0.6)
        if close:
            return f"{close[0]}:{rest.strip()}"
    return None


def _bad(spec: str, why: str) -> ConfigError:
    guess = suggest_model_string(spec)
    hint = f"did you mean `{guess}`? Otherwise use one of: " if guess else "use one of: "
    return ConfigError(f"unknown model string {spec!r} ({why})", fix=f"{hint}{VALID_FORMS}")


def ollama_base_url() -> str:
    """Ollama's OpenAI-compatible root from ``OLLAMA_HOST`` (``host:port`` or a URL)."""
    host = os.environ.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT_HOST
    if "://" not in host:
        host = f"http://{host}"
    host = host.rstrip("/")
    return host if host.endswith("/v1") else f"{host}/v1"


def provider_model(spec: str, **kwargs: Any) -> Model:
    """The bare provider model for ``spec``, without wrappers. ``kwargs`` go to its class
    (``http_client=`` for cassettes and tests, ``timeout_s=`` …)."""
    spec = spec.strip()
    if spec == "local" or spec.startswith("local-") or spec.startswith("local:"):
        from moot.models.local import load_local  # heavy (loads an engine): only when asked

        return load_local(spec)
    provider, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise _bad(spec, "expected PROVIDER:MODEL")
    rest = rest.strip()
    if provider == "openai":
        from moot.models.openai import OPENAI_BASE_URL, OpenAIModel

        base_url = os.environ.get("OPENAI_BASE_URL", "").strip() or OPENAI_BASE_URL
        return OpenAIModel(rest, base_url=base_url, api_key_env="OPENAI_API_KEY", name=spec, **kwargs)
    if provider == "anthropic":
        from moot.models.anthropic import ANTHROPIC_BASE_URL, AnthropicModel

        base_url = os.environ.get("ANTHROPIC_BASE_URL", "").strip() or ANTHROPIC_BASE_URL
        return AnthropicModel(rest, base_url=base_url, name=spec, **kwargs)
    if provider == "ollama":
        from moot.models.openai import OpenAIModel

        return OpenAIModel(
            rest,
            base_url=ollama_base_url(),
            api_key_env=None,
            key_required=False,
            provider="ollama",
            name=spec,
            **kwargs,
        )
    if provider == "openai-compatible":
        from moot.models.openai import OpenAIModel

        url, hash_sign, model = rest.rpartition("#")
        if not hash_sign or not model.strip() or not url:
            raise _bad(spec, "expected openai-compatible:URL#MODEL")
        if not url.startswith(("http://", "https://")):
            raise _bad(spec, f"{url!r} is not an http:// or https:// URL")
        return OpenAIModel(
            model.strip(),
            base_url=url,
            api_key_env=COMPATIBLE_KEY_ENV,
            key_required=False,
            provider="openai-compatible",
            name=spec,
            **kwargs,
        )
    raise _bad(spec, f"no provider named {provider!r}")


def wrap_model(model: Model) -> Model:
    """The standard wrapper stack around a provider model.

    Order, outermost first, and why:

    1. ``PricedModel`` prices the response that is finally returned, whichever attempt it
       came from (failed attempts carry no usage to price).
    2. ``RetryModel`` sleeps between attempts *outside* the concurrency limit: a request
       waiting out a Retry-After must not hold a slot that a healthy request could use.
    3. ``ConcurrencyLimitedModel`` holds a process-wide slot only while bytes are in flight.
    """
    from moot.models.concurrency import ConcurrencyLimitedModel
    from moot.models.pricing import PricedModel
    from moot.models.retry import RetryModel

    return PricedModel(RetryModel(ConcurrencyLimitedModel(model)))


_default_override: list[Model] = []
"""Models put in place of the default by :func:`moot.models.testing.use_default_model` (innermost last)."""


def default_model() -> Model | str:
    """What ``model=None`` means: a model put in place by a test, else the configured string."""
    return _default_override[-1] if _default_override else config.default_model_string()


def infer_model(spec: str | Model | None = None, *, wrap: bool = True) -> Model:
    """The model for ``spec``: a model string, a :class:`Model` (returned unchanged), or
    ``None`` for the default (``MOOT_MODEL``, else the embedded model).

    Raises :class:`ConfigError` in one line for an unknown string or a missing key.
    """
    if isinstance(spec, Model):
        return spec
    if spec is None:
        spec = default_model()
        if isinstance(spec, Model):
            return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"model string is empty or not a string: {spec!r}", fix=f"use one of: {VALID_FORMS}")
    model = provider_model(spec)
    return wrap_model(model) if wrap else model


def list_configured() -> list[str]:
    """Model strings usable right now: the embedded model always, others when configured."""
    found = ["local"]
    if os.environ.get("OPENAI_API_KEY", "").strip():
        found.append(SUGGESTED["openai"])
    if os.environ.get("ANTHROPIC_API_KEY", "").strip():
        found.append(SUGGESTED["anthropic"])
    if os.environ.get("OLLAMA_HOST", "").strip():
        found.append(SUGGESTED["ollama"])
    default = config.default_model_string()
    if default not in found:
        found.append(default)
    return found


RoleModels = Mapping[str, "Model | str"]
"""A model per role: ``{"planner": "openai:gpt-4o", "researcher": "local"}``."""


def check_roles(models: RoleModels | None, roles: Sequence[str], *, team: str) -> None:
    """Refuse a role that the team does not have, in one line naming the roles it has."""
    unknown = sorted(set(models or {}) - set(roles))
    if unknown:
        raise ConfigError(
            f"the {team} team has no role {', '.join(repr(r) for r in unknown)}",
            fix=f"use one of: {', '.join(roles)}",
        )


def resolve_models(
    default: Model | str | None,
    models: RoleModels | None = None,
    *,
    roles: Sequence[str] | None = None,
    team: str = "",
) -> tuple[Model, dict[str, Model]]:
    """The one way a team turns its ``model=`` and ``models={role: model}`` into models.

    ``default`` (a model string, a :class:`Model`, or ``None`` for the configured default)
    serves every role without an entry in ``models``. Each distinct model string is resolved
    once through :func:`infer_model`, so roles that name the same string share one model.
    With ``roles``, a role the team does not have is a :class:`ConfigError`. Returns the
    default model and the per-role models; :func:`model_for` picks one.
    """
    if roles is not None:
        check_roles(models, roles, team=team or "this")
    cache: dict[str, Model] = {}

    def one(spec: Model | str | None) -> Model:
        if isinstance(spec, Model):
            return spec
        key = config.default_model_string() if spec is None else spec
        if key not in cache:
            cache[key] = infer_model(spec)
        return cache[key]

    base = one(default)
    return base, {role: one(spec) for role, spec in (models or {}).items()}


def model_for(role: str, default: Model, models: Mapping[str, Model] | None) -> Model:
    """The model of ``role``: its own entry in ``models``, else ``default``."""
    return (models or {}).get(role, default)
