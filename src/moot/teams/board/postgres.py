"""The task board on PostgreSQL, for workers on many machines sharing one database.

Why PostgreSQL rather than a shared folder: row locks and transactions give the board's
guarantees across machines without relying on a network file system's ``rename``.

- Claims are single ``UPDATE … WHERE status = 'pending'`` statements (``claim_next`` picks its row
  with ``FOR UPDATE SKIP LOCKED``), so of any number of concurrent claims exactly one wins and
  workers never queue behind each other's locks.
- Every write is one transaction: a full disk or a dropped connection rolls it back and leaves the
  previous state, never a half-written task.
- Lease times come from the *database server's* clock, so clock skew between worker machines
  cannot expire a lease early or keep a dead worker's task forever.
- ``submit`` (and anything that puts a task back to pending) sends ``NOTIFY moot_board_new``;
  ``wait_for_work`` ``LISTEN``s on a second connection, so idle workers wake at once without polling.
- The schema is versioned in ``moot_board_migrations``; pending migrations are applied in one
  transaction under an advisory lock, so many workers starting at once migrate exactly once.

Needs the ``postgres`` extra (``psycopg[binary]``).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from moot.errors import ConfigError, MootError
from moot.teams.board.backend import (
    AgentSpec,
    BoardBackend,
    BoardStats,
    LeaseLostError,
    UnknownTaskError,
)
from moot.teams.board.protocol import AWAITING_OWNER
from moot.teams.board.task import TASK_ID_PATTERN, BoardTask, InvalidTaskError, TaskStatus

try:
    import psycopg
    from psycopg import sql
    from psycopg.rows import dict_row
    from psycopg.types.json import Jsonb
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

T = TypeVar("T")

CHANNEL = "moot_board_new"
"""The LISTEN/NOTIFY channel; the payload is the new task's type."""

_NOW = "extract(epoch from clock_timestamp())::float8"
"""The server's clock in epoch seconds: one clock for every machine's leases."""

_LOCK_KEY = 0x6D6F6F74_626F6172  # "mootboar": the advisory lock that serialises migrations

TASK_COLUMNS: tuple[str, ...] = (
    "id", "description", "type", "requirements", "context", "parent_id", "root_id", "depth",
    "priority", "created_by", "created_at", "status", "claimed_by", "claimed_at",
    "lease_expires_at", "attempts", "max_attempts", "subtasks", "result", "error", "finished_at",
)  # fmt: skip
_JSON_COLUMNS = frozenset({"requirements", "context", "subtasks", "result"})
_EDITABLE = ("description", "type", "requirements", "context", "parent_id", "root_id", "depth",
             "priority", "max_attempts", "subtasks", "result", "error")  # fmt: skip
"""What ``update`` writes besides the owner: never the status, attempts or lease (claims own those)."""

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "tasks and agents",
        """
        CREATE TABLE moot_board_tasks (
            seq              bigserial NOT NULL,
            id               text PRIMARY KEY,
            description      text NOT NULL,
            type             text NOT NULL DEFAULT 'general',
            requirements     jsonb NOT NULL DEFAULT '[]',
            context          jsonb NOT NULL DEFAULT '{}',
            parent_id        text,
            root_id          text,
            depth            integer NOT NULL DEFAULT 0,
            priority         integer NOT NULL DEFAULT 0,
            created_by       text NOT NULL DEFAULT 'user',
            created_at       double precision NOT NULL,
            status           text NOT NULL DEFAULT 'pending'
                             CHECK (status IN ('pending', 'active', 'completed', 'failed')),
            claimed_by       text,
            claimed_at       double precision,
            lease_expires_at double precision,
            attempts         integer NOT NULL DEFAULT 0,
            max_attempts     integer NOT NULL DEFAULT 3,
            subtasks         jsonb NOT NULL DEFAULT '[]',
            result           jsonb,
            error            text,
            finished_at      double precision
        );
        CREATE INDEX moot_board_tasks_pending ON moot_board_tasks (priority DESC, created_at, seq)
            WHERE status = 'pending';
        CREATE INDEX moot_board_tasks_leases ON moot_board_tasks (lease_expires_at)
            WHERE status = 'active';
        CREATE INDEX moot_board_tasks_status ON moot_board_tasks (status, created_at, seq);
        CREATE INDEX moot_board_tasks_parent ON moot_board_tasks (parent_id);
        CREATE TABLE moot_board_agents (
            name       text PRIMARY KEY,
            spec       jsonb NOT NULL,
            updated_at double precision NOT NULL DEFAULT extract(epoch from clock_timestamp())
        );
        """,
    ),
)
"""(version, description, SQL), applied in order; append only, never edit a released one."""

LATEST_VERSION = MIGRATIONS[-1][0]
ROLLBACK_RETRIES = 5
"""Times a transaction the server rolled back (deadlock, serialization failure) is run again."""

_FIX_CONNECT = "check the URL (postgresql://USER[:PASSWORD]@HOST:PORT/DATABASE) and that the server is running and reachable"


def redact_url(url: str) -> str:
    """The URL without its password (in the user part or a ``password=`` parameter), for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostport = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}@{hostport}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


def _jsonable(value: Any, what: str) -> Any:
    """JSON for a jsonb column; like the folder board, anything else is stored as its text."""
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(value, fallback=str)
    except Exception as exc:  # pydantic raises several types for unserialisable values
        raise InvalidTaskError(f"the task's {what} cannot be stored as JSON: {_first_line(exc)}") from None


def _row_to_task(row: dict[str, Any]) -> BoardTask:
    return BoardTask.model_validate({name: row[name] for name in TASK_COLUMNS})


class PostgresBoard(BoardBackend):
    """A board in one PostgreSQL database; one object per worker (it holds the connections).

    Safe to share between threads (calls are serialised on a lock) but not between processes:
    create one per process.
    """

    def __init__(self, url: str, *, connect_timeout_s: float = 10.0) -> None:
        if psycopg is None:
            raise ConfigError(
                "the PostgreSQL board needs the psycopg driver",
                fix="pip install 'moot[postgres]' (psycopg[binary]==3.3.9)",
            )
        self.url = url
        self.location = redact_url(url)
        self._connect_timeout_s = connect_timeout_s
        self._conn: psycopg.Connection[Any] | None = None
        self._listener: psycopg.Connection[Any] | None = None
        self._lock = threading.RLock()
        self._listen_lock = threading.Lock()

    # --- connections

    def _open(self) -> psycopg.Connection[Any]:
        try:
            kwargs: dict[str, Any] = {"autocommit": True, "application_name": "moot-board"}
            if "connect_timeout" not in self.url:
                kwargs["connect_timeout"] = max(1, round(self._connect_timeout_s))
            return psycopg.connect(self.url, **kwargs)
        except psycopg.Error as exc:
            raise MootError(
                f"cannot connect to the board database {self.location}: {_first_line(exc)}", fix=_FIX_CONNECT
            ) from None

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            conn = self._open()
            self._conn = conn
            version = self._schema_version(conn)
            if version < LATEST_VERSION:
                self._migrate(conn)
        return self._conn

    def _run(self, fn: Callable[[psycopg.Cursor[dict[str, Any]]], T]) -> T:
        """Run ``fn`` in one transaction; reconnect and retry once if the connection had dropped, and
        run it again (up to :data:`ROLLBACK_RETRIES` times) when the server rolled it back to break a
        deadlock or a serialization conflict between workers, as PostgreSQL asks of its clients:
        nothing of the rolled-back attempt was written."""
        with self._lock:
            attempt, rolled_back = 1, 0
            while True:
                conn = self._connection()
                try:
                    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
                        return fn(cur)
                except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure, psycopg.errors.TransactionRollback) as exc:
                    rolled_back += 1
                    if rolled_back > ROLLBACK_RETRIES:
                        raise MootError(f"the board database {self.location} kept rolling the write back: {_first_line(exc)}",
                                        fix="retry; if it persists, fewer workers on one board") from None
                    time.sleep(random.uniform(0.01, 0.05) * rolled_back)  # jittered: the two sides do not meet again
                    continue
                except psycopg.errors.DiskFull as exc:
                    raise MootError(
                        f"the board database {self.location} is out of disk space; the write was rolled back"
                        f" (nothing half-written): {_first_line(exc)}",
                        fix="free disk space on the database server, then retry",
                    ) from None
                except psycopg.DataError as exc:
                    raise InvalidTaskError(f"the database rejected a value: {_first_line(exc)}") from None
                except psycopg.OperationalError as exc:
                    if attempt == 1 and (conn.closed or conn.broken):
                        self._conn = None  # dropped (server restart, idle timeout): reconnect once
                        attempt = 2
                        continue
                    raise MootError(
                        f"the board database {self.location} failed: {_first_line(exc)}", fix=_FIX_CONNECT
                    ) from None

    # --- schema

    @staticmethod
    def _schema_version(conn: psycopg.Connection[Any]) -> int:
        row = conn.execute("SELECT to_regclass('moot_board_migrations') IS NOT NULL").fetchone()
        if not row or not row[0]:
            return 0
        row = conn.execute("SELECT coalesce(max(version), 0) FROM moot_board_migrations").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            # Two workers starting on a fresh database: the second waits here, then sees version N.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS moot_board_migrations ("
                " version integer PRIMARY KEY, description text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            current = self._schema_version(conn)
            if current > LATEST_VERSION:
                raise MootError(
                    f"the board database {self.location} has schema version {current}, newer than this"
                    f" moot understands ({LATEST_VERSION})",
                    fix="upgrade moot on this machine to the version the other workers run",
                )
            for version, description, statements in MIGRATIONS:
                if version > current:
                    conn.execute(statements)  # type: ignore[call-overload]
                    conn.execute(
                        "INSERT INTO moot_board_migrations (version, description) VALUES (%s, %s)",
                        (version, description),
                    )

    def init(self) -> None:
        """Apply migrations and add the built-in agent specs that are missing (never replacing one)."""
        from moot.teams.board.specs import builtin_specs  # one list of built-ins for both backends

        with self._lock:
            conn = self._connection()
            try:
                self._migrate(conn)
            except psycopg.Error as exc:
                raise MootError(f"cannot migrate the board database {self.location}: {_first_line(exc)}",
                                fix="check that the database user may create tables") from None
        specs = builtin_specs()

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> None:
            for spec in specs:
                cur.execute(
                    "INSERT INTO moot_board_agents (name, spec) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                    (spec.name, Jsonb(spec.model_dump(mode="json"))),
                )

        self._run(run)

    def schema_version(self) -> int:
        """The applied migration version (for `moot board status`)."""
        with self._lock:
            return self._schema_version(self._connection())

    # --- helpers run inside a transaction

    @staticmethod
    def _cols(prefix: str = "") -> sql.Composable:
        return sql.SQL(", ").join(sql.SQL(prefix) + sql.Identifier(c) for c in TASK_COLUMNS)

    def _select(self, where: str) -> sql.Composed:
        return sql.SQL("SELECT {} FROM moot_board_tasks WHERE ").format(self._cols()) + sql.SQL(where)  # type: ignore[arg-type]

    def _returning(self, statement: str) -> sql.Composed:
        return sql.SQL(statement).format(cols=self._cols())  # type: ignore[arg-type]

    def _why_not(self, cur: psycopg.Cursor[dict[str, Any]], task_id: str, worker_id: str | None) -> MootError:
        """The error for a lease check that matched no row: unknown task, or the lease is gone."""
        cur.execute("SELECT status, claimed_by FROM moot_board_tasks WHERE id = %s", (task_id,))
        row = cur.fetchone()
        if row is None:
            return UnknownTaskError(f"no task {task_id!r} on the board {self.location}")
        holder = f"held by {row['claimed_by']}" if row["status"] == "active" else row["status"]
        return LeaseLostError(f"worker {worker_id} no longer holds task {task_id} (it is {holder})")

    @staticmethod
    def _notify(cur: psycopg.Cursor[dict[str, Any]], payload: str) -> None:
        cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload[:200]))

    # --- tasks

    def submit(self, task: BoardTask) -> BoardTask:
        if not TASK_ID_PATTERN.match(task.id or ""):  # a model_construct'ed task skipped the model's check
            raise InvalidTaskError(f"task id {task.id!r} is not allowed (letters, digits, _ . - only)")
        data = task.model_dump(mode="json")
        data.update(status=TaskStatus.PENDING.value, claimed_by=None, claimed_at=None, lease_expires_at=None)
        if data["root_id"] is None and data["parent_id"] is None:
            data["root_id"] = task.id  # a root task is its own root: budgets are counted per root
        values = [Jsonb(_jsonable(data[c], c)) if c in _JSON_COLUMNS and data[c] is not None else data[c]
                  for c in TASK_COLUMNS]  # fmt: skip
        statement = sql.SQL("INSERT INTO moot_board_tasks ({cols}) VALUES ({vals}) RETURNING {cols}").format(
            cols=self._cols(), vals=sql.SQL(", ").join(sql.Placeholder() * len(TASK_COLUMNS))
        )

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask:
            try:
                cur.execute(statement, values)
            except psycopg.errors.UniqueViolation:
                raise MootError(
                    f"a task with id {task.id!r} is already on the board",
                    fix="submit it with another id, or leave the id out to get a fresh one",
                ) from None
            row = cur.fetchone()
            assert row is not None
            self._notify(cur, task.type)  # delivered on commit, never for a rolled-back task
            return _row_to_task(row)

        return self._run(run)

    def get(self, task_id: str) -> BoardTask:
        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask:
            cur.execute(self._select("id = %s"), (task_id,))
            row = cur.fetchone()
            if row is None:
                raise UnknownTaskError(f"no task {task_id!r} on the board {self.location}")
            return _row_to_task(row)

        return self._run(run)

    def list(self, status: TaskStatus | None = None, *, limit: int | None = None) -> list[BoardTask]:
        if status is None:
            where, params = "TRUE ORDER BY created_at, seq", []
        elif TaskStatus(status) is TaskStatus.PENDING:
            where, params = "status = 'pending' ORDER BY priority DESC, created_at, seq", []
        else:
            where, params = "status = %s ORDER BY created_at, seq", [TaskStatus(status).value]
        if limit is not None:
            where += " LIMIT %s"
            params.append(max(0, int(limit)))

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> list[BoardTask]:
            cur.execute(self._select(where), params)
            return [_row_to_task(row) for row in cur.fetchall()]

        return self._run(run)

    def version(self) -> str | None:
        """Rows and the sum of their row versions (``xmin`` changes with every insert and update)."""

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> str:
            cur.execute("SELECT count(*) AS n, coalesce(sum(xmin::text::bigint), 0) AS v FROM moot_board_tasks")
            row = cur.fetchone() or {"n": 0, "v": 0}
            return f"{row['n']}:{row['v']}"

        return self._run(run)

    def claim(self, task_id: str, worker_id: str, *, lease_s: float) -> BoardTask | None:
        statement = self._returning(
            f"UPDATE moot_board_tasks SET status = 'active', claimed_by = %s, claimed_at = {_NOW},"
            f" lease_expires_at = {_NOW} + %s, attempts = attempts + 1"
            " WHERE id = %s AND status = 'pending' RETURNING {cols}"
        )

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask | None:
            # Concurrent claimers block on the row lock; the losers re-check status and match nothing.
            cur.execute(statement, (worker_id, float(lease_s), task_id))
            row = cur.fetchone()
            if row is not None:
                return _row_to_task(row)
            cur.execute("SELECT 1 FROM moot_board_tasks WHERE id = %s", (task_id,))
            if cur.fetchone() is None:
                raise UnknownTaskError(f"no task {task_id!r} on the board {self.location}")
            return None

        return self._run(run)

    def claim_next(self, worker_id: str, *, lease_s: float, types: list[str] | None = None) -> BoardTask | None:
        type_filter = "AND type = ANY(%(types)s)" if types is not None else ""
        statement = sql.SQL(
            "WITH next AS (SELECT id FROM moot_board_tasks"
            f" WHERE status = 'pending' {type_filter}"
            " ORDER BY priority DESC, created_at, seq FOR UPDATE SKIP LOCKED LIMIT 1)"
            f" UPDATE moot_board_tasks t SET status = 'active', claimed_by = %(worker)s, claimed_at = {_NOW},"
            f" lease_expires_at = {_NOW} + %(lease)s, attempts = t.attempts + 1"
            " FROM next WHERE t.id = next.id RETURNING {cols}"
        ).format(cols=self._cols("t."))
        params = {"worker": worker_id, "lease": float(lease_s), "types": list(types or [])}

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask | None:
            # SKIP LOCKED: a row another worker is claiming right now is passed over, not waited for.
            cur.execute(statement, params)
            row = cur.fetchone()
            return _row_to_task(row) if row is not None else None

        return self._run(run)

    def _held(self, task_id: str, worker_id: str, assignments: str, params: tuple[Any, ...],
              *, notify: bool = False) -> BoardTask:  # fmt: skip
        """Update a task only while ``worker_id`` holds its lease; else the precise error."""
        statement = self._returning(
            f"UPDATE moot_board_tasks SET {assignments}"
            " WHERE id = %s AND claimed_by = %s AND status = 'active' RETURNING {cols}"
        )

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask:
            cur.execute(statement, (*params, task_id, worker_id))
            row = cur.fetchone()
            if row is None:
                raise self._why_not(cur, task_id, worker_id)
            task = _row_to_task(row)
            if notify and task.status is TaskStatus.PENDING:
                self._notify(cur, task.type)
            return task

        return self._run(run)

    def heartbeat(self, task_id: str, worker_id: str, *, lease_s: float) -> None:
        self._held(task_id, worker_id, f"lease_expires_at = {_NOW} + %s", (float(lease_s),))

    def complete(self, task_id: str, worker_id: str, result: Any) -> BoardTask:
        value = _jsonable(result, "result")
        return self._held(
            task_id,
            worker_id,
            f"status = 'completed', result = %s, error = NULL, lease_expires_at = NULL, finished_at = {_NOW}",
            (Jsonb(value) if value is not None else None,),
        )

    def fail(self, task_id: str, worker_id: str | None, error: str, *, retry: bool = False) -> BoardTask:
        again = "(%(retry)s AND attempts < max_attempts)"
        assignments = (
            f"status = CASE WHEN {again} THEN 'pending' ELSE 'failed' END, error = %(error)s,"
            f" claimed_by = CASE WHEN {again} THEN NULL ELSE claimed_by END,"
            f" claimed_at = CASE WHEN {again} THEN NULL ELSE claimed_at END, lease_expires_at = NULL,"
            f" finished_at = CASE WHEN {again} THEN NULL ELSE {_NOW} END"
        )
        # Without a worker (a budget or depth stop, an operator): any task not yet finished.
        guard = "status IN ('pending', 'active')" if worker_id is None else (
            "status = 'active' AND claimed_by = %(worker)s")  # fmt: skip
        statement = self._returning(f"UPDATE moot_board_tasks SET {assignments} WHERE id = %(id)s AND {guard}"
                                    " RETURNING {cols}")  # fmt: skip
        params = {"retry": retry, "error": error, "id": task_id, "worker": worker_id}

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask:
            cur.execute(statement, params)
            row = cur.fetchone()
            if row is None:
                if worker_id is not None:
                    raise self._why_not(cur, task_id, worker_id)
                task = self._get_in(cur, task_id)
                raise MootError(f"task {task_id} is already {task.status.value}; it cannot fail now",
                                fix="fail only pending or active tasks")  # fmt: skip
            task = _row_to_task(row)
            if task.status is TaskStatus.PENDING:
                self._notify(cur, task.type)
            return task

        return self._run(run)

    def _get_in(self, cur: psycopg.Cursor[dict[str, Any]], task_id: str) -> BoardTask:
        cur.execute(self._select("id = %s"), (task_id,))
        row = cur.fetchone()
        if row is None:
            raise UnknownTaskError(f"no task {task_id!r} on the board {self.location}")
        return _row_to_task(row)

    def release(self, task_id: str, worker_id: str) -> BoardTask:
        # Stepping back is not a failure: the claim's attempt is given back too.
        return self._held(
            task_id,
            worker_id,
            "status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL,"
            " attempts = greatest(attempts - 1, 0)",
            (),
            notify=True,
        )

    def update(self, task: BoardTask) -> BoardTask:
        """Write a task's content in place, keeping its status, attempts and lease.

        For an active task ``claimed_by`` may change owner: that is how a worker parks a parent under
        :data:`AWAITING_OWNER` (which holds no lease, so it is never recovered). An active task whose
        lease already expired is refused with :class:`LeaseLostError`, as every lease-holder write is.
        """
        data = task.model_dump(mode="json")
        values = [Jsonb(_jsonable(data[c], c)) if c in _JSON_COLUMNS and data[c] is not None else data[c]
                  for c in _EDITABLE]  # fmt: skip
        assignments = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in _EDITABLE)
        statement = sql.SQL(
            "UPDATE moot_board_tasks SET {}, claimed_by = %s, lease_expires_at = %s WHERE id = %s RETURNING {}"
        ).format(assignments, self._cols())

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardTask:
            # The row lock makes a concurrent claim wait for this write instead of being overwritten.
            cur.execute(self._select("id = %s FOR UPDATE"), (task.id,))
            row = cur.fetchone()
            if row is None:
                raise UnknownTaskError(f"no task {task.id!r} on the board {self.location}")
            current = _row_to_task(row)
            owner, lease = current.claimed_by, current.lease_expires_at
            if current.status is TaskStatus.ACTIVE:
                cur.execute(f"SELECT {_NOW} AS now")
                now = cur.fetchone()["now"]  # type: ignore[index]
                if owner != AWAITING_OWNER and lease is not None and lease < now:
                    raise LeaseLostError(f"the lease of worker {owner} on task {task.id} expired")
                owner = task.claimed_by or owner
                if owner == AWAITING_OWNER:
                    lease = None
            cur.execute(statement, [*values, owner, lease, task.id])
            return _row_to_task(cur.fetchone())  # type: ignore[arg-type]

        return self._run(run)

    def recover_expired(self, *, now: float | None = None) -> list[BoardTask]:
        clock = "%(now)s::float8" if now is not None else _NOW
        spent = "attempts >= max_attempts"
        statement = self._returning(
            "UPDATE moot_board_tasks SET"
            f" status = CASE WHEN {spent} THEN 'failed' ELSE 'pending' END,"
            f" error = CASE WHEN {spent} THEN format('lease expired %%s times (max_attempts %%s); last worker %%s',"
            " attempts, max_attempts, claimed_by)"
            " ELSE format('lease of worker %%s expired on attempt %%s', claimed_by, attempts) END,"
            f" claimed_by = CASE WHEN {spent} THEN claimed_by END,"
            f" claimed_at = CASE WHEN {spent} THEN claimed_at END,"
            f" finished_at = CASE WHEN {spent} THEN {clock} END, lease_expires_at = NULL"
            f" WHERE status = 'active' AND lease_expires_at < {clock} RETURNING {{cols}}"
        )

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> list[BoardTask]:
            # One statement: two recoverers on two machines never recover the same task twice.
            cur.execute(statement, {"now": now})
            tasks = [_row_to_task(row) for row in cur.fetchall()]
            if any(t.status is TaskStatus.PENDING for t in tasks):
                self._notify(cur, "recovered")
            return tasks

        return self._run(run)

    def stats(self) -> BoardStats:
        def run(cur: psycopg.Cursor[dict[str, Any]]) -> BoardStats:
            cur.execute("SELECT status, type, count(*) AS n FROM moot_board_tasks GROUP BY status, type")
            stats = BoardStats()
            for row in cur.fetchall():
                setattr(stats, row["status"], getattr(stats, row["status"]) + row["n"])
                stats.by_type[row["type"]] = stats.by_type.get(row["type"], 0) + row["n"]
            return stats

        return self._run(run)

    # --- agents

    def agents(self) -> list[AgentSpec]:
        def run(cur: psycopg.Cursor[dict[str, Any]]) -> list[AgentSpec]:
            cur.execute("SELECT spec FROM moot_board_agents ORDER BY name")
            return [AgentSpec.model_validate(row["spec"]) for row in cur.fetchall()]

        return self._run(run)

    def register_agent(self, spec: AgentSpec) -> AgentSpec:
        if spec.created_at is None:
            import time

            spec = spec.model_copy(update={"created_at": time.time()})

        def run(cur: psycopg.Cursor[dict[str, Any]]) -> AgentSpec:
            cur.execute(
                "INSERT INTO moot_board_agents (name, spec) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE"
                f" SET spec = excluded.spec, updated_at = {_NOW}",
                (spec.name, Jsonb(spec.model_dump(mode="json"))),
            )
            return spec

        return self._run(run)

    # --- waiting for work

    def wait_for_work(self, timeout_s: float) -> None:
        """Block until a NOTIFY on ``moot_board_new`` or the timeout, on a dedicated connection.

        The first call starts listening and returns at once if work is already pending, so a task
        submitted between the caller's last empty ``claim_next`` and the ``LISTEN`` is not missed.
        """
        with self._listen_lock:
            conn = self._listener
            if conn is None or conn.closed or conn.broken:
                conn = self._listener = self._open()
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                self._connection_ready()
                row = conn.execute("SELECT EXISTS (SELECT 1 FROM moot_board_tasks WHERE status = 'pending')").fetchone()
                if row and row[0]:
                    return
            try:
                woke = False
                for _ in conn.notifies(timeout=max(0.0, float(timeout_s)), stop_after=1):
                    woke = True
                    break
                if woke:  # a burst of submits wakes the worker once, not once per task
                    for _ in conn.notifies(timeout=0):
                        pass
            except psycopg.OperationalError:
                self._listener = None  # reopened on the next call; return now so the caller polls

    def _connection_ready(self) -> None:
        with self._lock:
            self._connection()  # make sure the schema exists before the listener queries it

    def close(self) -> None:
        # The same lock order as wait_for_work (listener first, then the main connection): the
        # other order deadlocked a close() that met a worker's first wait halfway.
        with self._listen_lock, self._lock:
            for conn in (self._conn, self._listener):
                if conn is not None and not conn.closed:
                    conn.close()
            self._conn = self._listener = None

    def __enter__(self) -> PostgresBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresBoard({self.location!r})"


__all__ = ["CHANNEL", "LATEST_VERSION", "MIGRATIONS", "PostgresBoard", "redact_url"]
