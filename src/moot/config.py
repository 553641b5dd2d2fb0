"""Where moot keeps its files, and which model it uses by default.

Nothing here reads a file on import; every value comes from the environment when asked, so
tests can point moot at a temporary directory by setting ``MOOT_HOME``.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

DEFAULT_MODEL = "local"


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
