"""The run store: every run, its events, usage per agent and results, in one SQLite file.

A run's row is written when it starts (status ``running``) and each event is committed as it
happens, so a crash loses at most the final summary, never the run. WAL mode lets a second
process (``moot runs`` in another terminal) read while a run writes.

A run's row names the process that records it (host, pid and the process's start time). When a
store is opened, a ``running`` run whose process on this machine is gone (killed with -9, the
machine's power cut) is settled as ``failed``, with the usage its recorded requests add up to
and a reason that says so: it never stays "running" for ever.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.errors import ConfigError, MootError
from moot.models.base import Usage
from moot.runtime.events import Event

if TYPE_CHECKING:
    from moot.runtime.graph import RunResult

SCHEMA_VERSION = 3
"""1: runs, events, usage per agent, team outputs. 2: ``runs.parent_run_id`` (a run made as
one of several by one command points to the run that holds them). 3: ``runs.owner``, the
process recording a running run (``host:pid:start``)."""

ORPHAN_REASON = ("the process that ran it ended without recording its end (killed, or the machine stopped); "
                 "what it recorded is kept")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    stop_reason TEXT,
    started REAL NOT NULL,
    finished REAL,
    usage TEXT,
    result TEXT,
    graph TEXT,
    budget TEXT,
    parent_run_id TEXT,
    owner TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    type TEXT NOT NULL,
    task_id TEXT,
    agent TEXT,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS agent_usage (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    agent TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (run_id, agent)
);
CREATE TABLE IF NOT EXISTS run_requests (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_outputs (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
"""


@dataclass
class RunRecord:
    """One stored run."""

    id: str
    name: str
    status: str
    stop_reason: str | None
    started: float
    finished: float | None
    usage: Usage = field(default_factory=Usage)
    usage_by_agent: dict[str, Usage] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    """Task results as plain JSON (id → status, agent, output, error, usage, times)."""
    graph: list[dict[str, Any]] = field(default_factory=list)
    budget: dict[str, Any] = field(default_factory=dict)
    parent_run_id: str | None = None
    """The run that holds this one (a board goal, a command that made several runs)."""

    @property
    def duration_s(self) -> float | None:
        return None if self.finished is None else self.finished - self.started

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "started": self.started,
            "finished": self.finished,
            "duration_s": self.duration_s,
            "usage": self.usage.model_dump(),
            "usage_by_agent": {a: u.model_dump() for a, u in self.usage_by_agent.items()},
            "results": self.results,
            "graph": self.graph,
            "budget": self.budget,
            "parent_run_id": self.parent_run_id,
        }


def _chunks(ids: list[str], size: int = 500) -> list[list[str]]:
    """``ids`` in pieces small enough for one SQL ``IN (…)``."""
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks after boot (Linux ``/proc``); ``None`` elsewhere
    or when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the parenthesised name


def process_owner() -> str:
    """This process as a run's owner: ``host:pid:start`` (the start time tells a reused pid apart)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid) or ''}"


def owner_alive(owner: str) -> bool | None:
    """Whether the process named by :func:`process_owner` still runs; ``None`` when this machine
    cannot tell (another host, or no ``/proc``)."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    host, pid, start = parts[0], int(parts[1]), parts[2]
    if host != socket.gethostname() or not start or not os.path.isdir("/proc/self"):
        return None
    return _process_start(pid) == start


def _marks(ids: list[str]) -> str:
    return ",".join("?" * len(ids))


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class RunStore:
    """Runs in SQLite. Safe to open the same file from several stores or processes."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            from moot import config

            path = config.runs_db()
        self.path = Path(path)
        from moot import config

        config.make_parent_folder(self.path, what="the run store", setting="MOOT_RUNS_DB")
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            raise ConfigError(f"cannot open the run store {self.path}: {exc}",
                              fix="set MOOT_RUNS_DB (or `runs_db` in moot.toml) to a file in a folder you can write") from None
        self._db.row_factory = sqlite3.Row
        self._active: set[str] = set()
        with self._lock:
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise MootError(
                    f"the run store {self.path} was written by a newer moot (schema {version})",
                    fix="upgrade moot, or set MOOT_RUNS_DB to another file",
                )
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._migrate()
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        self.settle_orphans()

    def _migrate(self) -> None:
        """Bring an older file up to this schema, inside the opening transaction (all or nothing)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        if "parent_run_id" not in columns:  # schema 1
            self._db.execute("ALTER TABLE runs ADD COLUMN parent_run_id TEXT")
        if "owner" not in columns:  # schema 2
            self._db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
        self._db.execute("CREATE INDEX IF NOT EXISTS runs_by_parent ON runs (parent_run_id)")

    def settle_orphans(self) -> list[str]:
        """Settle as ``failed`` every ``running`` run whose recording process on this machine is
        gone (see the module docstring); returns their ids. Runs another machine or several
        processes record (a board goal's parent) are left alone: nothing here can tell."""
        with self._lock:
            rows = self._db.execute("SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL").fetchall()
        gone = [r["id"] for r in rows if owner_alive(r["owner"]) is False]
        if not gone:
            return []
        used = self._usage_by("e.run_id", "", "e.run_id", gone)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for run_id in gone:
                    self._db.execute(
                        "UPDATE runs SET status = 'failed', stop_reason = ?, usage = ?, "
                        "finished = COALESCE((SELECT MAX(ts) FROM events WHERE run_id = ?), started) "
                        "WHERE id = ? AND status = 'running'",
                        (ORPHAN_REASON, _dumps(used.get(run_id, Usage()).model_dump()), run_id, run_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return gone

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def start_run(
        self,
        run_id: str,
        name: str,
        *,
        graph: list[dict[str, Any]] | None = None,
        budget: dict[str, Any] | None = None,
        started: float | None = None,
        parent_run_id: str | None = None,
    ) -> None:
        """Record a run as ``running`` before any of its work starts."""
        with self._lock:
            self._db.execute(
                "INSERT INTO runs (id, name, status, started, graph, budget, parent_run_id, owner) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                (run_id, name, started or time.time(), _dumps(graph or []), _dumps(budget or {}), parent_run_id,
                 process_owner()),
            )
            self._active.add(run_id)

    def record_event(self, event: Event) -> None:
        """Event-bus subscriber: store one event of an active run (others are ignored)."""
        if event.run_id not in self._active:
            return
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO events (run_id, seq, ts, type, task_id, agent, payload) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    event.run_id,
                    event.seq,
                    event.ts,
                    event.type.value,
                    event.task_id,
                    event.agent,
                    _dumps(event.payload),
                ),
            )

    def finish_run(self, result: RunResult) -> None:
        """Record a run's final status, reason, usage and results, in one transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "UPDATE runs SET status = ?, stop_reason = ?, finished = ?, usage = ?, result = ? WHERE id = ?",
                    (
                        result.status,
                        result.stop_reason,
                        result.finished_at,
                        _dumps(result.usage.model_dump()),
                        _dumps({tid: r.to_dict() for tid, r in result.results.items()}),
                        result.run_id,
                    ),
                )
                self._db.execute("DELETE FROM agent_usage WHERE run_id = ?", (result.run_id,))
                self._db.executemany(
                    "INSERT INTO agent_usage (run_id, agent, input_tokens, output_tokens, requests, cost_usd) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (result.run_id, agent, u.input_tokens, u.output_tokens, u.requests, u.cost_usd)
                        for agent, u in result.usage_by_agent.items()
                    ],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._active.discard(result.run_id)

    def ensure_run(self, run_id: str, name: str, *, budget: dict[str, Any] | None = None) -> bool:
        """Record a parent run as ``running`` unless it exists (several processes may each be
        first to work for it, e.g. board workers on one goal); True when this call made it."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO runs (id, name, status, started, graph, budget) VALUES (?, ?, 'running', ?, '[]', ?)",
                (run_id, name, time.time(), _dumps(budget or {})),
            )
        return cursor.rowcount == 1

    def close_parent(self, run_id: str, status: str, stop_reason: str) -> None:
        """Finish a parent run: its status and reason, and its usage summed over its children."""
        with self._lock:
            rows = self._db.execute(
                "SELECT u.agent, SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.requests), SUM(u.cost_usd) "
                "FROM agent_usage u JOIN runs r ON r.id = u.run_id WHERE r.parent_run_id = ? GROUP BY u.agent",
                (run_id,),
            ).fetchall()
            by_agent = {r[0]: Usage(input_tokens=r[1], output_tokens=r[2], requests=r[3], cost_usd=r[4]) for r in rows}
            total = sum(by_agent.values(), Usage())
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("UPDATE runs SET status = ?, stop_reason = ?, finished = ?, usage = ? WHERE id = ?",
                                 (status, stop_reason, time.time(), _dumps(total.model_dump()), run_id))
                self._db.execute("DELETE FROM agent_usage WHERE run_id = ?", (run_id,))
                self._db.executemany(
                    "INSERT INTO agent_usage (run_id, agent, input_tokens, output_tokens, requests, cost_usd) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(run_id, a, u.input_tokens, u.output_tokens, u.requests, u.cost_usd) for a, u in by_agent.items()],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def children(self, run_id: str) -> list[RunRecord]:
        """The runs that ``run_id`` holds, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM runs WHERE parent_run_id = ? ORDER BY started", (run_id,)).fetchall()
        return [self._record(row, with_details=False) for row in rows]

    def record_output(self, run_id: str, kind: str, data: dict[str, Any]) -> None:
        """Keep a team's final result with its run (``kind``: ``graph``, ``deliberation``, ``answer``…),
        so a run's page can draw what the team produced, not only what its agents returned."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO run_outputs (run_id, kind, data) VALUES (?, ?, ?)",
                             (run_id, kind, _dumps(data)))

    # ------------------------------------------------------------------ reading

    def output(self, run_id: str) -> tuple[str, dict[str, Any]] | None:
        """A run's team result as ``(kind, data)``, if its team recorded one."""
        with self._lock:
            row = self._db.execute("SELECT kind, data FROM run_outputs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else (str(row["kind"]), json.loads(row["data"]))

    def query_runs(self, *, name_prefixes: list[str] | None = None, status: str | None = None,
                   since: float | None = None, until: float | None = None, search: str | None = None,
                   limit: int = 50, offset: int = 0, top_level: bool = False) -> tuple[list[RunRecord], int]:
        """A page of runs, newest first, and how many match in all.

        ``name_prefixes``: runs whose name starts with one of them (a team's runs); ``search``:
        a case-insensitive substring of the name or a prefix of the id; ``top_level``: only runs
        that no other run holds."""
        where: list[str] = ["parent_run_id IS NULL"] if top_level else []
        args: list[Any] = []
        if name_prefixes:
            where.append("(" + " OR ".join("name LIKE ? ESCAPE '\\'" for _ in name_prefixes) + ")")
            args += [_like_escape(p) + "%" for p in name_prefixes]
        if status:
            where.append("status = ?")
            args.append(status)
        if since is not None:
            where.append("started >= ?")
            args.append(since)
        if until is not None:
            where.append("started < ?")
            args.append(until)
        if search:
            where.append("(name LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')")
            args += ["%" + _like_escape(search) + "%", _like_escape(search) + "%"]
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        with self._lock:
            total = self._db.execute(f"SELECT COUNT(*) FROM runs{clause}", args).fetchone()[0]
            # walk the start-time index newest first: a filter's own index (parent_run_id) would
            # make SQLite sort every matching run before it can return the first page
            rows = self._db.execute(f"SELECT * FROM runs INDEXED BY runs_by_start{clause} ORDER BY started DESC LIMIT ? OFFSET ?",
                                    [*args, limit, offset]).fetchall()
        return [self._record(row, with_details=False) for row in rows], int(total)

    def events_after(self, run_id: str, after_seq: int = 0) -> list[Event]:
        """A run's events with ``seq`` above ``after_seq``, in order (a live view polls this)."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM events WHERE run_id = ? AND seq > ? ORDER BY seq",
                                    (run_id, after_seq)).fetchall()
        return [self._event(r) for r in rows]

    def record_request(self, run_id: str, kind: str, data: dict[str, Any]) -> None:
        """Keep what started a run (the HTTP request's team and body), so it can be run again with
        the same inputs. ``run_requests`` holds no foreign key: a server records it before the
        team writes the run's row."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO run_requests (run_id, kind, data) VALUES (?, ?, ?)",
                             (run_id, kind, _dumps(data)))

    def recorded_request(self, *run_ids: str) -> tuple[str, dict[str, Any]] | None:
        """What started the first of ``run_ids`` that has a recorded request, as ``(kind, data)``."""
        with self._lock:
            for run_id in run_ids:
                row = self._db.execute("SELECT kind, data FROM run_requests WHERE run_id = ?", (run_id,)).fetchone()
                if row is not None:
                    return row[0], json.loads(row[1])
        return None

    def usage_so_far(self, run_ids: list[str]) -> dict[str, Usage]:
        """What each run's model requests used until now, from its recorded events: a running
        run's usage (its row holds usage only once it finishes), for a parent's live sums."""
        if not run_ids:
            return {}
        return self._usage_by("e.run_id", "", "e.run_id", run_ids)

    def held_usage_so_far(self, parent_ids: list[str]) -> dict[str, Usage]:
        """What the runs each parent holds used until now, from their recorded events (the runs
        list shows a running parent's sums while its children work)."""
        if not parent_ids:
            return {}
        return self._usage_by("r.parent_run_id", "JOIN runs r ON r.id = e.run_id", "r.parent_run_id", parent_ids)

    def running_usage(self, run_ids: list[str]) -> dict[str, Usage]:
        """What each running run has used until now: its own requests and those of the runs it
        holds (a run's row holds usage only once it ends, a parent's once all its runs ended).
        ``moot runs``, ``moot runs show`` and the page give a running run this."""
        own, held = self.usage_so_far(run_ids), self.held_usage_so_far(run_ids)
        return {rid: own.get(rid, Usage()) + held.get(rid, Usage()) for rid in run_ids if rid in own or rid in held}

    def _usage_by(self, key: str, join: str, column: str, ids: list[str]) -> dict[str, Usage]:
        """The usage of the ``model_response`` events whose ``column`` is one of ``ids``, summed by ``key``."""
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                f"SELECT {key}, SUM(json_extract(e.payload, '$.input_tokens')), SUM(json_extract(e.payload, '$.output_tokens')), "
                "SUM(COALESCE(json_extract(e.payload, '$.requests'), 1)), SUM(json_extract(e.payload, '$.cost_usd')) "
                f"FROM events e {join} WHERE e.type = 'model_response' AND {column} IN ({marks}) GROUP BY {key}", ids).fetchall()
        return {r[0]: Usage(input_tokens=int(r[1] or 0), output_tokens=int(r[2] or 0), requests=int(r[3] or 0),
                            cost_usd=float(r[4] or 0.0)) for r in rows}

    def list_runs(self, limit: int = 20, *, top_level: bool = False) -> list[RunRecord]:
        """The most recent runs first; ``top_level``: only runs that no other run holds."""
        self.settle_orphans()  # a long-lived reader (the page's server) sees a killed run end too
        where = " WHERE parent_run_id IS NULL" if top_level else ""
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM runs{where} ORDER BY started DESC LIMIT ?", (limit,)).fetchall()
        return [self._record(row, with_details=False) for row in rows]

    def resolve_id(self, id_or_prefix: str) -> str:
        """The full id for an id or a unique prefix of one (like git)."""
        prefix = id_or_prefix.strip()
        with self._lock:
            exact = self._db.execute("SELECT id FROM runs WHERE id = ?", (prefix,)).fetchone()
            if exact:
                return str(exact["id"])
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self._db.execute(
                "SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 3", (escaped + "%",)
            ).fetchall()
        if not prefix or not rows:
            raise MootError(f"no run matches {id_or_prefix!r}", fix="list runs with `moot runs`")
        if len(rows) > 1:
            raise MootError(
                f"{id_or_prefix!r} matches several runs ({', '.join(r['id'][:12] for r in rows)}…)",
                fix="give more characters of the run id",
            )
        return str(rows[0]["id"])

    def get_run(self, id_or_prefix: str) -> RunRecord:
        run_id = self.resolve_id(id_or_prefix)
        with self._lock:
            row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            usage_rows = self._db.execute("SELECT * FROM agent_usage WHERE run_id = ?", (run_id,)).fetchall()
        record = self._record(row, with_details=True)
        record.usage_by_agent = {
            r["agent"]: Usage(
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                requests=r["requests"],
                cost_usd=r["cost_usd"],
            )
            for r in usage_rows
        }
        return record

    def events(self, id_or_prefix: str) -> list[Event]:
        run_id = self.resolve_id(id_or_prefix)
        with self._lock:
            rows = self._db.execute("SELECT * FROM events WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [
            Event.from_dict(
                {
                    "seq": r["seq"],
                    "ts": r["ts"],
                    "type": r["type"],
                    "run_id": r["run_id"],
                    "task_id": r["task_id"],
                    "agent": r["agent"],
                    "payload": json.loads(r["payload"]),
                }
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ deleting (`moot runs delete|prune`)

    def _with_held(self, ids: list[str]) -> list[str]:
        """``ids`` and every run they hold, at any depth (caller holds the lock)."""
        found = list(dict.fromkeys(ids))
        seen = set(found)
        frontier = list(found)
        while frontier:
            held: list[str] = []
            for chunk in _chunks(frontier):
                rows = self._db.execute(f"SELECT id FROM runs WHERE parent_run_id IN ({_marks(chunk)})", chunk).fetchall()
                held += [str(r["id"]) for r in rows if str(r["id"]) not in seen]
            seen.update(held)
            found += held
            frontier = held
        return found

    def delete_runs(self, ids: list[str], *, force: bool = False) -> list[str]:
        """Delete runs (full ids) with the runs they hold, their events, usage and outputs, in one
        transaction: all of them or, on any error, none. A run still ``running`` is refused
        unless ``force`` (a run whose process died stays ``running``). Returns the ids deleted."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                doomed = self._with_held(ids)
                for chunk in _chunks(doomed):
                    row = self._db.execute(f"SELECT id FROM runs WHERE status = 'running' AND id IN ({_marks(chunk)})",
                                           chunk).fetchone()
                    if row is not None and not force:
                        raise MootError(f"run {str(row['id'])[:12]} is still running",
                                        fix="wait for it to end, or pass --force if its process died")
                for chunk in _chunks(doomed):
                    for table in ("events", "agent_usage", "run_outputs"):
                        self._db.execute(f"DELETE FROM {table} WHERE run_id IN ({_marks(chunk)})", chunk)
                    self._db.execute(f"DELETE FROM runs WHERE id IN ({_marks(chunk)})", chunk)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return doomed

    def prunable_runs(self, *, before: float | None = None, keep: int | None = None,
                      status: str | None = None) -> list[str]:
        """Ids of finished top-level runs to prune: started before ``before``, and/or all but the
        newest ``keep``, optionally only those with ``status``. Running runs are never listed."""
        where = ["parent_run_id IS NULL", "status != 'running'"]
        args: list[Any] = []
        if status:
            where.append("status = ?")
            args.append(status)
        with self._lock:
            rows = self._db.execute(f"SELECT id, started FROM runs WHERE {' AND '.join(where)} ORDER BY started DESC",
                                    args).fetchall()
        ids = [(str(r["id"]), float(r["started"])) for r in rows]
        chosen = ids[keep:] if keep is not None else ids
        if before is not None:
            chosen = [(i, t) for i, t in chosen if t < before]
        elif keep is None:
            chosen = []
        return [i for i, _ in chosen]

    @staticmethod
    def _event(r: sqlite3.Row) -> Event:
        return Event.from_dict({"seq": r["seq"], "ts": r["ts"], "type": r["type"], "run_id": r["run_id"],
                                "task_id": r["task_id"], "agent": r["agent"], "payload": json.loads(r["payload"])})

    def _record(self, row: sqlite3.Row, *, with_details: bool) -> RunRecord:
        usage = Usage(**json.loads(row["usage"])) if row["usage"] else Usage()
        return RunRecord(
            id=row["id"],
            name=row["name"],
            status=row["status"],
            stop_reason=row["stop_reason"],
            started=row["started"],
            finished=row["finished"],
            usage=usage,
            results=json.loads(row["result"]) if with_details and row["result"] else {},
            graph=json.loads(row["graph"]) if with_details and row["graph"] else [],
            budget=json.loads(row["budget"]) if with_details and row["budget"] else {},
            parent_run_id=row["parent_run_id"],
        )


__all__ = ["SCHEMA_VERSION", "RunRecord", "RunStore"]
