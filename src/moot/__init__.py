"""moot: multi-agent language-model teams on one shared runtime, offline by default."""

from __future__ import annotations

__version__ = "0.1.0"
