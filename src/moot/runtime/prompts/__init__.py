"""Prompts of the runtime's built-in agents, kept as Markdown data files next to this module."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from moot.errors import ConfigError


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``, without surrounding whitespace."""
    resource = resources.files(__package__).joinpath(f"{name}.md")
    if not resource.is_file():
        raise ConfigError(f"no built-in prompt named {name!r}", fix="check the prompt name")
    return resource.read_text(encoding="utf-8").strip()


__all__ = ["load_prompt"]
