"""The one prompt loader: every prompt is a Markdown data file in a ``prompts/`` folder.

The runtime's own prompts live next to this module; each team keeps its prompts in
``moot/teams/<team>/prompts/`` and loads them with the same function::

    load_prompt("mapper", package="moot.teams.graph")   # moot/teams/graph/prompts/mapper.md
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from moot.errors import ConfigError

RUNTIME_PACKAGE = "moot.runtime"


@lru_cache(maxsize=None)
def load_prompt(name: str, package: str = RUNTIME_PACKAGE) -> str:
    """The text of ``<package>/prompts/<name>.md``, without surrounding whitespace.

    ``package`` is the dotted name of the package that owns the ``prompts/`` folder (a
    team's package, or the runtime's by default). A missing file is a :class:`ConfigError`
    naming the prompt and the folder.
    """
    try:
        resource = resources.files(package).joinpath("prompts", f"{name}.md")
    except ModuleNotFoundError:
        raise ConfigError(f"no package {package!r} to load prompt {name!r} from", fix="check the package name") from None
    if not resource.is_file():
        raise ConfigError(
            f"no prompt named {name!r} in {package.replace('.', '/')}/prompts/", fix="check the prompt name"
        )
    return resource.read_text(encoding="utf-8").strip()


__all__ = ["load_prompt"]
