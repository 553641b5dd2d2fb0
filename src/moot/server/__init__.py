"""The HTTP API (`moot serve`): research queries, background runs and their progress over SSE.

See docs/code-research.md for the endpoints, curl examples and the security rules.
"""

from __future__ import annotations

from moot.server.app import ServerSettings, create_app
from moot.server.runs import RunManager

__all__ = ["RunManager", "ServerSettings", "create_app"]
