"""Where moot keeps its files, which model it uses by default, and the ``moot.toml`` settings.

Every setting has an environment variable (``MOOT_MODEL``, ``MOOT_HOME`` …) and a key of the
same name in lower case without the prefix in a ``moot.toml`` file (``model = "openai:gpt-4o"``).
The file is looked up in the current directory and its parents (a project's file), else in the
user config directory (``~/.config/moot/moot.toml`` on Linux); ``MOOT_CONFIG`` names one file
instead. The environment always wins over the file.

Nothing here reads a file on import; the functions below read the environment when asked, so
tests can point moot at a temporary directory by setting ``MOOT_HOME``. The CLI calls
:func:`apply_file_settings` once at start, which copies the file's values into the
environment where the environment has none; a Python program can call it too.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional, Union

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from moot.errors import ConfigError

DEFAULT_MODEL = "local"
CONFIG_FILE_NAME = "moot.toml"
CONFIG_ENV = "MOOT_CONFIG"


class Settings(BaseSettings):
    """Every ``MOOT_*`` setting; ``None`` means the built-in default (shown by ``moot config``)."""

    model_config = SettingsConfigDict(env_prefix="MOOT_", extra="forbid", validate_default=False)

    model: Optional[str] = Field(None, description="The default model string (else the embedded model, `local`).")
    home: Optional[Path] = Field(None, description="moot's data folder: knowledge bases, indexes, runs.")
    models_dir: Optional[Path] = Field(None, description="Where assembled model weights are cached (default <home>/models).")
    runs_db: Optional[Path] = Field(None, description="The SQLite run store (default <home>/runs.sqlite3).")
    max_concurrency: Optional[Union[int, str]] = Field(
        None, description="Model requests in flight at once, process-wide: N, or per provider like openai=4,local=2.")
    prices: Optional[Path] = Field(None, description="A JSON price table that updates the built-in one.")
    otel: Optional[bool] = Field(None, description="Send OpenTelemetry spans (needs the otel extra).")
    local_engine: Optional[Literal["shared", "inprocess"]] = Field(
        None, description="The embedded model in one shared engine process (default) or in this process.")
    local_context: Optional[int] = Field(None, ge=512, description="The embedded model's context, in tokens (default 8192).")
    local_slots: Optional[int] = Field(None, ge=1, description="Requests the embedded engine serves at once (default 4).")
    local_threads: Optional[int] = Field(None, ge=1, description="CPU threads of the embedded engine (default: cores, at most 8).")
    local_prompt_cache: Optional[bool] = Field(None, description="Reuse a prompt's shared prefix in the embedded engine (default on).")
    engine_dir: Optional[Path] = Field(None, description="Where the shared engine keeps its socket and lock.")
    engine_idle_s: Optional[float] = Field(None, ge=0, description="Seconds an idle shared engine waits before it exits.")
    board_workspace: Optional[Path] = Field(None, description="The folder the task board's file tools work in.")
    board_terminal: Optional[bool] = Field(None, description="Let task-board agents run commands (off by default).")
    serve_token: Optional[SecretStr] = Field(None, description="Bearer token for `moot serve` on a non-loopback address.")
    openai_compatible_api_key: Optional[SecretStr] = Field(
        None, description="API key sent to openai-compatible:URL#MODEL servers.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment first (it wins), then the values read from moot.toml (passed as init
        # arguments by load_settings, already resolved against the file's folder).
        return (env_settings, init_settings)


SETTING_NAMES: tuple[str, ...] = tuple(Settings.model_fields)
SECTIONS = ("mcp",)
"""Tables of moot.toml that are not ``MOOT_*`` settings: ``[mcp.servers]`` (see :func:`mcp_servers_table`)."""
SECRET_SETTINGS = frozenset({"serve_token", "openai_compatible_api_key"})


def env_name(setting: str) -> str:
    """The environment variable of a setting: ``local_slots`` → ``MOOT_LOCAL_SLOTS``."""
    return "MOOT_" + setting.upper()


def config_file() -> Path | None:
    """The ``moot.toml`` in force: ``$MOOT_CONFIG``, else the nearest one in the current folder
    or a parent, else the user config directory's; ``None`` when there is none."""
    named = os.environ.get(CONFIG_ENV, "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"{CONFIG_ENV} names {path}, which is not a file",
                              fix=f"create it, or unset {CONFIG_ENV}")
        return path
    here = Path.cwd()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE_NAME
        if candidate.is_file():
            return candidate
    user = Path(platformdirs.user_config_dir("moot")) / CONFIG_FILE_NAME
    return user if user.is_file() else None


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings in ``path``, checked: unknown keys and wrong types are one line naming the fix.
    Relative paths are taken from the file's folder."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}", fix=f"fix or remove {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", fix=f"fix the TOML in {path}") from None
    unknown = sorted(set(data) - set(SETTING_NAMES) - set(SECTIONS))
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], SETTING_NAMES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(f"unknown setting {unknown[0]!r} in {path}",
                          fix=f"{hint}known settings: {', '.join(SETTING_NAMES)}")
    data = {k: v for k, v in data.items() if k not in SECTIONS}
    try:
        checked = Settings.model_validate(data)  # types only; the environment is not read here
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']}", fix=f"fix {where} in {path} (see `moot config`)") from None
    values: dict[str, Any] = {}
    for key in data:
        value = getattr(checked, key)
        if isinstance(value, Path) and not value.expanduser().is_absolute():
            value = (path.parent / value).resolve()
        values[key] = value
    return values


def mcp_servers_table() -> dict[str, Any]:
    """The ``[mcp.servers]`` table of the moot.toml in force (``{}`` when there is none): MCP tool
    servers for the agents of ``research``, ``graph``, ``board worker`` and ``moot mcp``."""
    path = config_file()
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        read_config_file(path)  # raises the one-line error
        return {}
    section = data.get("mcp", {})
    if not isinstance(section, dict) or set(section) - {"servers"} or not isinstance(section.get("servers", {}), dict):
        raise ConfigError(f"{path}: [mcp] holds one table, [mcp.servers]",
                          fix='write [mcp.servers] with one line per server: name = "command …" or "http://…/mcp"')
    return dict(section.get("servers", {}))


def _env_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return str(value)


def apply_file_settings() -> Path | None:
    """Copy the ``moot.toml`` values into the environment where it has no value (the
    environment wins). Returns the file used, or ``None``."""
    path = config_file()
    if path is None:
        return None
    for key, value in read_config_file(path).items():
        name = env_name(key)
        if not os.environ.get(name, "").strip():
            os.environ[name] = _env_text(value)
            _FROM_FILE.add(name)
    return path


_FROM_FILE: set[str] = set()
"""Environment variables that :func:`apply_file_settings` set from the file (not the user's)."""


@dataclass(frozen=True)
class EffectiveSetting:
    """One setting as ``moot config`` shows it."""

    name: str
    env: str
    value: Any
    source: str
    """``environment``, the path of the moot.toml, or ``default``."""
    description: str


def effective_settings() -> list[EffectiveSetting]:
    """Every setting with its value and where it came from (a value that
    :func:`apply_file_settings` copied from the file is reported as the file's)."""
    env = {k: v for k, v in os.environ.items() if k not in _FROM_FILE}
    path = config_file()
    from_file = read_config_file(path) if path is not None else {}
    try:
        merged = Settings(**from_file)  # the environment over the file, as pydantic-settings reads them
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{env_name(where)}: {first['msg']}", fix=f"fix {env_name(where)} in the environment") from None
    rows = []
    defaults = {"model": DEFAULT_MODEL, "home": home(), "models_dir": models_dir(), "runs_db": runs_db()}
    for name, field in Settings.model_fields.items():
        if env.get(env_name(name), "").strip():
            source = "environment"
            value = getattr(merged, name)
        elif name in from_file:
            source = str(path)
            value = from_file[name]
        else:
            source = "default"
            value = defaults.get(name)
        if isinstance(value, SecretStr):
            value = "********" if value.get_secret_value() else ""
        rows.append(EffectiveSetting(name=name, env=env_name(name), value=value, source=source,
                                     description=field.description or ""))
    return rows


def home() -> Path:
    """moot's data directory: ``$MOOT_HOME``, else the platform's user data directory."""
    override = os.environ.get("MOOT_HOME")
    path = Path(override).expanduser() if override else Path(platformdirs.user_data_dir("moot"))
    return path


def models_dir() -> Path:
    """Where assembled model weights are cached: ``$MOOT_MODELS_DIR``, else ``<home>/models``."""
    override = os.environ.get("MOOT_MODELS_DIR")
    return Path(override).expanduser() if override else home() / "models"


def runs_db() -> Path:
    """The SQLite run store: ``$MOOT_RUNS_DB``, else ``<home>/runs.sqlite3``."""
    override = os.environ.get("MOOT_RUNS_DB")
    return Path(override).expanduser() if override else home() / "runs.sqlite3"


def default_model_string() -> str:
    """The model used when none is given: ``$MOOT_MODEL``, else the embedded model."""
    return os.environ.get("MOOT_MODEL", "").strip() or DEFAULT_MODEL


def make_parent_folder(path: Path, *, what: str, setting: str) -> None:
    """Create the folder a data file goes in, or fail in one line that names the setting to change
    (``MOOT_HOME=/proc/x`` must not end in a traceback)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder for {what} at {path.parent}: {exc.strerror or exc}",
                          fix=f"set {setting} (or `{setting.removeprefix('MOOT_').lower()}` in moot.toml) to a folder you can write") from None
