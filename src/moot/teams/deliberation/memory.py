"""The design's phase 5: every deliberation is stored, the user says which resolutions they
followed, and later debates of similar conflicts see those decisions.

Similar means: the same conflict type between the same two specialists (in either order).
What changes: the moderator sees the user's past accepted and rejected resolutions as
precedents, and a compromise type the user rejected for a similar conflict (and never accepted)
is taken out of the moderator's choices, so the same kind of compromise is not proposed again.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot import config
from moot.errors import MootError
from moot.teams.deliberation.models import Conflict, DeliberationResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliberations (run_id TEXT PRIMARY KEY, request TEXT, created REAL, result TEXT);
CREATE TABLE IF NOT EXISTS resolutions (run_id TEXT, conflict_id TEXT, insight_id TEXT, type TEXT, pair TEXT,
    resolution TEXT, compromise_type TEXT, accepted_by_agents INTEGER, PRIMARY KEY (run_id, conflict_id));
CREATE TABLE IF NOT EXISTS feedback (run_id TEXT, insight_id TEXT, decision TEXT, created REAL,
    PRIMARY KEY (run_id, insight_id));
"""


def default_path() -> Path:
    """``<moot home>/deliberation.sqlite3`` (``$MOOT_HOME``), beside the run store."""
    return config.home() / "deliberation.sqlite3"


def pair_key(conflict: Conflict) -> str:
    return "|".join(sorted((conflict.agent_a.name, conflict.agent_b.name)))


@dataclass(frozen=True)
class Precedent:
    """A past resolution of a similar conflict and what the user did with it."""

    resolution: str
    compromise_type: str
    decision: str
    """``accepted`` or ``rejected``."""


class FeedbackMemory:
    """Deliberations, their resolutions and the user's decisions, in SQLite."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise MootError(f"the deliberation memory {self.path} cannot be read ({exc})",
                            fix="move the file away; a new one is made on the next run") from None

    def close(self) -> None:
        self._db.close()

    def save(self, result: DeliberationResult) -> None:
        """Store one deliberation and the resolution insight of each debate."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO deliberations VALUES (?, ?, ?, ?)",
                             (result.run_id, result.request, time.time(), json.dumps(result.to_json(), default=str)))
            conflicts = {c.id: c for c in result.conflicts}
            for debate in result.debates:
                c = conflicts[debate.conflict_id]
                r = debate.resolution
                if not r.resolution:
                    continue
                self._db.execute("INSERT OR REPLACE INTO resolutions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 (result.run_id, c.id, f"r-{c.id}", c.type, pair_key(c), r.resolution,
                                  r.compromise_type or "", int(r.accepted)))

    def run_ids(self, prefix: str) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT run_id FROM deliberations WHERE run_id LIKE ?", (prefix + "%",))]

    def insight_ids(self, run_id: str) -> list[str]:
        row = self._db.execute("SELECT result FROM deliberations WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return []
        data = json.loads(row[0])
        return [i["insight_id"] for i in data.get("insights", [])]

    def resolution_ids(self, run_id: str) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT insight_id FROM resolutions WHERE run_id = ?", (run_id,))]

    def record(self, run_prefix: str, decision: str, insight_id: str | None = None) -> tuple[str, list[str]]:
        """Record that the user accepted or rejected an insight (default: every debate resolution of the run)."""
        if decision not in ("accepted", "rejected"):
            raise ValueError(decision)
        matches = self.run_ids(run_prefix)
        if not matches:
            raise MootError(f"no deliberation with run id {run_prefix!r}", fix="use an id that `moot deliberate` printed (or moot runs)")
        if len(matches) > 1:
            raise MootError(f"run id {run_prefix!r} matches {len(matches)} deliberations", fix="give more characters of the id")
        run_id = matches[0]
        if insight_id is None:
            targets = self.resolution_ids(run_id)
            if not targets:
                raise MootError("that deliberation has no debate resolution to accept or reject",
                                fix="name an insight: moot deliberate feedback RUN_ID --accept INSIGHT_ID")
        else:
            known = set(self.insight_ids(run_id)) | set(self.resolution_ids(run_id))
            if insight_id not in known:
                raise MootError(f"no insight {insight_id!r} in that deliberation",
                                fix="use one of: " + ", ".join(sorted(known)))
            targets = [insight_id]
        with self._db:
            for t in targets:
                self._db.execute("INSERT OR REPLACE INTO feedback VALUES (?, ?, ?, ?)", (run_id, t, decision, time.time()))
        return run_id, targets

    def decisions(self, run_id: str) -> dict[str, str]:
        """The user's decisions about one deliberation: insight id → ``accepted`` or ``rejected``."""
        return dict(self._db.execute("SELECT insight_id, decision FROM feedback WHERE run_id = ?", (run_id,)).fetchall())

    def precedents(self, conflict: Conflict, limit: int = 3) -> list[Precedent]:
        """Past resolutions of the same conflict type between the same two specialists that the user decided on."""
        rows = self._db.execute(
            "SELECT r.resolution, r.compromise_type, f.decision FROM resolutions r JOIN feedback f "
            "ON f.run_id = r.run_id AND f.insight_id = r.insight_id WHERE r.type = ? AND r.pair = ? "
            "ORDER BY f.created DESC LIMIT ?", (conflict.type, pair_key(conflict), limit)).fetchall()
        return [Precedent(*row) for row in rows]

    def stats(self) -> dict[str, Any]:
        one = lambda q: self._db.execute(q).fetchone()[0]  # noqa: E731
        return {"deliberations": one("SELECT COUNT(*) FROM deliberations"),
                "accepted": one("SELECT COUNT(*) FROM feedback WHERE decision = 'accepted'"),
                "rejected": one("SELECT COUNT(*) FROM feedback WHERE decision = 'rejected'")}


def allowed_compromise_types(precedents: list[Precedent]) -> list[str]:
    """Every compromise type, minus those the user rejected for a similar conflict and never accepted (at least one stays)."""
    all_types = ["full_merge", "time_split", "priority_override", "conditional"]
    accepted = {p.compromise_type for p in precedents if p.decision == "accepted"}
    rejected = {p.compromise_type for p in precedents if p.decision == "rejected"} - accepted
    allowed = [t for t in all_types if t not in rejected]
    return allowed or all_types


__all__ = ["FeedbackMemory", "Precedent", "allowed_compromise_types", "default_path", "pair_key"]
