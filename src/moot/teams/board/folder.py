"""The folder backend: the seed's shared workspace, made crash-safe.

Layout (``docs/task-board.md`` has the full story)::

    DIR/tasks/pending/<id>.json              waiting to be claimed
    DIR/tasks/active/<id>__<worker>.json     claimed; the file's mtime IS the lease expiry
    DIR/tasks/completed/<id>.json            done, with ``result``
    DIR/tasks/failed/<id>.json               failed, with ``error``
    DIR/tasks/failed/<name>.invalid (+ .why) a malformed file, kept raw, with the reason
    DIR/agents/registry.json                 the agent registry
    DIR/context/  DIR/results/<id>.json      shared context; results of root goals

Why these choices:

- **Claim = one rename** pending → active (the seed's idea): of N racing renames exactly one
  finds the source. The worker id is in the active file's *name*, so "is it still mine?" is a
  question about a path, never a read-then-write race on the content.
- **The lease is the active file's mtime**, set into the future. A heartbeat is one
  ``os.utime`` on our own path: it can never recreate a file that a recoverer moved away (a
  content rewrite could), and a missing path means the lease was lost.
- **Every move out of active goes through one protocol** (:meth:`FolderBoard._move`): the new
  record is first written and fsynced to a hidden ``.commit~`` file in the target folder, then
  the active file is renamed to a hidden ``.move~`` marker (the commit point: one rename, so a
  racing recoverer or a second completion loses), then the commit file is renamed into place.
  A crash at any point leaves either the old state or a marker that any worker rolls forward.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.teams.board.backend import (
    AgentSpec,
    BoardBackend,
    BoardStats,
    LeaseLostError,
    UnknownTaskError,
)
from moot.teams.board.claim_order import LOG_NAME, ClaimOrder, note_pending
from moot.teams.board.folder_files import (
    BoardWriteError,
    fsync_dir,
    new_nonce,
    write_new,
    atomic_write,
    clean_leftovers,
    read_regular,
    write_locked,
)
from moot.teams.board.protocol import AWAITING_OWNER
from moot.teams.board.specs import builtin_specs
from moot.teams.board.task import (
    MAX_TASK_BYTES,
    TASK_ID_PATTERN,
    BoardTask,
    InvalidTaskError,
    TaskStatus,
    load_task_json,
    parse_task,
)

WORKER_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]|_(?!_)){0,63}$")
"""Worker ids go into active file names after ``__``, so they may not contain ``__`` themselves."""

SEP = "__"
"""Separates task id and worker id in an active file name (split at the last one)."""

SETTLE_S = 2.0
"""A malformed pending file is left alone this long (a person may still be writing it)."""

_INVALID = ".invalid"
_WHY = ".why"


def _dump(task: BoardTask) -> bytes:
    return task.model_dump_json(indent=2).encode()


def _jsonable(value: Any) -> Any:
    """Results are stored as JSON; anything else is stored as its text."""
    return json.loads(json.dumps(value, default=str))


def _check_worker(worker_id: str) -> None:
    if not WORKER_ID_PATTERN.match(worker_id):
        raise MootError(
            f"worker id {worker_id!r} is not allowed",
            fix="use letters, digits, '.', '-' and single '_' (no '__'), at most 64 characters",
        )


def _check_id(task_id: str) -> None:
    if not TASK_ID_PATTERN.match(task_id):
        raise InvalidTaskError(f"task id {task_id!r} is not allowed (no path characters)")


class FolderBoard(BoardBackend):
    """A board in a folder; any number of worker processes on one filesystem may share it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path).expanduser()
        self.location = str(self.root)
        self.tasks_dir = self.root / "tasks"
        self.dirs = {status: self.tasks_dir / status.value for status in TaskStatus}
        self.pending_log = self.tasks_dir / LOG_NAME
        """The claim orders' change log (see :mod:`~moot.teams.board.claim_order`)."""
        self.registry_path = self.root / "agents" / "registry.json"
        self.results_dir = self.root / "results"
        self._cache: dict[str, tuple[tuple[int, int, int, int], BoardTask]] = {}
        """Parsed files keyed by path, valid while (inode, mtime, ctime, size) match: re-scans stay cheap."""
        self._ready = False
        self._order: ClaimOrder | None = None
        """This process's claim order over pending/ (built on the first claim)."""
        self._order_lock = threading.Lock()
        """A worker with several slots claims from several threads: the order is one structure."""
        self._malformed_since: dict[tuple[str, int], float] = {}
        """When this process first found each malformed file (by path and inode) still malformed."""
        self._cleaned = False

    # ------------------------------------------------------------------ set-up

    def init(self) -> None:
        try:
            for folder in self.dirs.values():
                folder.mkdir(parents=True, exist_ok=True)
            for extra in (self.registry_path.parent, self.root / "context", self.results_dir):
                extra.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BoardWriteError(f"could not create the board in {self.root}: {exc.strerror or exc}") from exc
        self._ready = True
        self.clean_leftovers()
        with self._registry_lock():
            specs = {s.name: s for s in self._read_registry()}
            missing = [s for s in builtin_specs() if s.name not in specs]
            if missing or not self.registry_path.exists():
                for spec in missing:
                    specs[spec.name] = spec
                self._write_registry(list(specs.values()))

    def _require(self) -> None:
        if self._ready:
            return
        if not self.dirs[TaskStatus.PENDING].is_dir():
            raise MootError(f"{self.root} is not a task board", fix=f"run `moot board init {self.root}` first")
        self._ready = True

    # ------------------------------------------------------------------ paths and reading

    def _path(self, status: TaskStatus, task_id: str, worker_id: str | None = None) -> Path:
        name = f"{task_id}{SEP}{worker_id}.json" if status is TaskStatus.ACTIVE else f"{task_id}.json"
        return self.dirs[status] / name

    @staticmethod
    def _split_active(name: str) -> tuple[str, str] | None:
        stem = name[: -len(".json")]
        if SEP not in stem:
            return None
        task_id, worker = stem.rsplit(SEP, 1)
        if not TASK_ID_PATTERN.match(task_id) or not WORKER_ID_PATTERN.match(worker):
            return None
        return task_id, worker

    def _read(self, path: Path, status: TaskStatus, st: os.stat_result | None = None) -> BoardTask:
        """Parse one task file; the folder and the file name are the truth for status and owner."""
        st = st or path.lstat()
        if not stat.S_ISREG(st.st_mode):
            kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode)
                    else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file")
            raise InvalidTaskError(f"{path.name} is {kind}, not a task file")
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)  # a rewrite is a new inode
        cached = self._cache.get(str(path))
        if cached and cached[0] == key:
            return cached[1].model_copy()
        if status is TaskStatus.ACTIVE:
            parts = self._split_active(path.name)
            if parts is None:
                raise InvalidTaskError(f"active file name {path.name!r} is not <id>__<worker>.json")
            expected, worker = parts
        else:
            expected, worker = path.name[: -len(".json")], None
        data = load_task_json(read_regular(path), origin=path.name)
        if "id" not in data and status in (TaskStatus.PENDING, TaskStatus.ACTIVE) and TASK_ID_PATTERN.match(expected):
            data["id"] = expected  # the seed's way: a person drops {"description": …} into pending/
        task = parse_task(data, origin=path.name)
        if task.id != expected:
            raise InvalidTaskError(f"{path.name}: the id inside ({task.id!r}) does not match the file name")
        updates: dict[str, Any] = {"status": status}
        if status is TaskStatus.ACTIVE:
            updates["claimed_by"] = worker
            updates["lease_expires_at"] = None if worker == AWAITING_OWNER else st.st_mtime
        elif status is TaskStatus.PENDING:
            updates.update(claimed_by=None, claimed_at=None, lease_expires_at=None)
        task = task.model_copy(update=updates)
        self._cache[str(path)] = (key, task)
        return task.model_copy()

    def _quarantine(self, path: Path, reason: str) -> None:
        """Move a malformed file to failed/ with its reason; the raw bytes are kept for a person."""
        failed = self.dirs[TaskStatus.FAILED]
        target = failed / f"{path.parent.name}.{path.name}{_INVALID}"
        if target.exists():
            target = failed / f"{path.parent.name}.{path.name}.{new_nonce()}{_INVALID}"
        try:
            os.rename(path, target)
        except FileNotFoundError:
            return  # another worker moved it first
        self._cache.pop(str(path), None)
        why = {"file": f"{path.parent.name}/{path.name}", "reason": reason, "moved_at": time.time()}
        with contextlib.suppress(BoardWriteError):
            atomic_write(target.with_name(target.name + _WHY), json.dumps(why, indent=2).encode())

    def _invalid_as_task(self, path: Path) -> BoardTask:
        """A quarantined file shown as a failed task, so `moot board status` lists it."""
        why_path = path.with_name(path.name + _WHY)
        try:
            why = json.loads(read_regular(why_path, limit=64_000))
            if not isinstance(why, dict):
                raise ValueError("not an object")
        except (OSError, ValueError, InvalidTaskError):
            why = {"file": path.name, "reason": "malformed task file"}
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", path.name[: -len(_INVALID)])[:60]
        try:  # what a person sees of it: never what a link points at, never a FIFO's wait
            raw = read_regular(path, limit=MAX_TASK_BYTES)[:2000].decode("utf-8", "replace")
        except InvalidTaskError as exc:
            raw = f"({exc.message})"
        return BoardTask(
            id=f"invalid-{stem}" if TASK_ID_PATTERN.match(f"invalid-{stem}") else f"invalid-{hashlib.sha1(raw.encode()).hexdigest()[:12]}",
            description=f"malformed task file {why.get('file', path.name)}",
            type="invalid",
            status=TaskStatus.FAILED,
            error=str(why.get("reason")),
            context={"raw": raw.replace("\x00", "\ufffd"), "file": str(why.get("file"))},
            created_at=path.lstat().st_mtime,
        )

    def _scan(self, status: TaskStatus) -> Iterator[BoardTask]:
        """Every valid task in one folder; malformed files are quarantined on the way."""
        folder = self.dirs[status]
        seen: set[str] = set()
        with os.scandir(folder) as entries:
            names = [(e.name, e) for e in entries if not e.name.startswith(".")]
        now = time.time()
        for name, entry in names:
            path = folder / name
            if name.endswith(_INVALID) and status is TaskStatus.FAILED:
                with contextlib.suppress(OSError):
                    yield self._invalid_as_task(path)
                continue
            if not name.endswith(".json"):
                continue
            seen.add(str(path))
            try:
                st = entry.stat(follow_symlinks=False)
                yield self._read(path, status, st)
            except FileNotFoundError:
                continue
            except InvalidTaskError as exc:
                if status is TaskStatus.PENDING and self._settling(path, st, now):
                    continue  # a person may still be writing it; judge it once it has settled
                self._quarantine(path, exc.message)
        prefix = str(folder) + os.sep
        for key in list(self._cache):
            if key.startswith(prefix) and key not in seen:
                self._cache.pop(key, None)

    def _settling(self, path: Path, st: os.stat_result, now: float) -> bool:
        """Whether a malformed pending file may still be being written by a person (then it is
        judged later). Only for 2 s, by its mtime *and* by when this process first found it
        malformed: a file dated in the future, or touched again and again, is not settling."""
        if not stat.S_ISREG(st.st_mode) or not 0 <= now - st.st_mtime < SETTLE_S:
            return False
        key = (str(path), st.st_ino)
        first = self._malformed_since.setdefault(key, time.monotonic())
        if len(self._malformed_since) > 10_000:
            self._malformed_since.clear()
        return time.monotonic() - first < SETTLE_S

    def _find(self, task_id: str) -> tuple[Path, BoardTask] | None:
        for _ in range(3):  # a task may move between folders while we look
            for status in TaskStatus:
                if status is TaskStatus.ACTIVE:
                    with os.scandir(self.dirs[status]) as entries:
                        names = [e.name for e in entries if e.name.startswith(task_id + SEP) and e.name.endswith(".json")]
                    paths = [self.dirs[status] / n for n in names if (self._split_active(n) or ("",))[0] == task_id]
                else:
                    paths = [self._path(status, task_id)]
                for path in paths:
                    try:
                        return path, self._read(path, status)
                    except FileNotFoundError:
                        continue
                    except InvalidTaskError as exc:
                        self._quarantine(path, exc.message)
            self._roll_forward_all()
        return None

    # ------------------------------------------------------------------ the move protocol

    def _move(self, src: Path, final: TaskStatus, record: BoardTask) -> bool:
        """Move the task at ``src`` into ``final`` with content ``record``; False if ``src`` was gone.

        1. write + fsync ``<final>/.commit~<nonce>~<id>`` (invisible to scans);
        2. rename ``src`` → ``active/.move~<final>~<nonce>~<id>``: the commit point;
        3. rename the commit file to ``<final>/<id>.json`` and drop the marker (roll-forward).
        """
        nonce = new_nonce()
        commit = self.dirs[final] / f".commit~{nonce}~{record.id}"
        marker = self.dirs[TaskStatus.ACTIVE] / f".move~{final.value}~{nonce}~{record.id}"
        try:
            # Locked until the move is done: a cleaner never takes a commit record a living
            # mover still needs (the lock dies with the process; see clean_leftovers).
            fd = write_locked(commit, _dump(record))
        except OSError as exc:
            raise BoardWriteError(f"could not write task {record.id}: {exc.strerror or exc}") from exc
        try:
            try:
                os.rename(src, marker)
            except FileNotFoundError:
                with contextlib.suppress(OSError):
                    os.unlink(commit)
                return False
            self._cache.pop(str(src), None)
            self._roll_forward(marker)
            if final is TaskStatus.PENDING:  # back in pending: every claim order takes it in
                note_pending(self.pending_log, record.id, (record.priority, record.created_at, record.type))
            return True
        finally:
            os.close(fd)

    def _roll_forward(self, marker: Path) -> bool:
        """Finish an interrupted move (step 3 of :meth:`_move`); whether this call moved the record."""
        try:
            _, final, nonce, task_id = marker.name.split("~", 3)
            folder = self.dirs[TaskStatus(final)]
        except ValueError:
            return
        commit = folder / f".commit~{nonce}~{task_id}"
        moved = False
        with contextlib.suppress(FileNotFoundError):
            os.rename(commit, folder / f"{task_id}.json")
            moved = True
        fsync_dir(folder)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker)
        fsync_dir(marker.parent)
        return moved

    def _roll_forward_all(self) -> None:
        active = self.dirs[TaskStatus.ACTIVE]
        with os.scandir(active) as entries:
            markers = [active / e.name for e in entries if e.name.startswith(".move~")]
        for marker in markers:
            if self._roll_forward(marker) and marker.name.startswith(f".move~{TaskStatus.PENDING.value}~"):
                note_pending(self.pending_log, marker.name.split("~", 3)[3])  # a crashed mover's task

    # ------------------------------------------------------------------ tasks

    def submit(self, task: BoardTask) -> BoardTask:
        self._require()
        _check_id(task.id)
        if self._find(task.id) is not None:
            raise MootError(f"a task with id {task.id!r} is already on the board", fix="choose another id")
        task = task.model_copy(
            update={"status": TaskStatus.PENDING, "claimed_by": None, "claimed_at": None, "lease_expires_at": None}
        )
        if task.root_id is None and task.parent_id is None:
            task.root_id = task.id
        pending = self.dirs[TaskStatus.PENDING]
        tmp = pending / f".submit~{new_nonce()}~{task.id}"
        try:
            write_new(tmp, _dump(task))
            try:
                os.link(tmp, self._path(TaskStatus.PENDING, task.id))  # fails if it exists: no overwrite
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        except FileExistsError:
            raise MootError(f"a task with id {task.id!r} is already on the board", fix="choose another id") from None
        except OSError as exc:
            raise BoardWriteError(f"could not write task {task.id}: {exc.strerror or exc}") from exc
        fsync_dir(pending)
        note_pending(self.pending_log, task.id, (task.priority, task.created_at, task.type))
        return task

    def get(self, task_id: str) -> BoardTask:
        self._require()
        _check_id(task_id)
        found = self._find(task_id)
        if found is None:
            raise UnknownTaskError(f"no task {task_id!r} on the board at {self.location}")
        return found[1]

    def list(self, status: TaskStatus | None = None, *, limit: int | None = None) -> list[BoardTask]:
        self._require()
        statuses = [status] if status is not None else list(TaskStatus)
        out: list[BoardTask] = []
        for st in statuses:
            tasks = list(self._scan(st))
            if st is TaskStatus.PENDING:
                tasks.sort(key=lambda t: (-t.priority, t.created_at, t.id))
            else:
                tasks.sort(key=lambda t: (t.created_at, t.id))
            out.extend(tasks)
        return out[:limit] if limit is not None else out

    def claim(self, task_id: str, worker_id: str, *, lease_s: float) -> BoardTask | None:
        self._require()
        _check_id(task_id)
        _check_worker(worker_id)
        src = self._path(TaskStatus.PENDING, task_id)
        dst = self._path(TaskStatus.ACTIVE, task_id, worker_id)
        expires = time.time() + lease_s
        try:
            st = src.lstat()
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(st.st_mode):  # never claim (or touch through) a link, FIFO or folder
            try:
                self._read(src, TaskStatus.PENDING, st)
            except InvalidTaskError as exc:
                self._quarantine(src, exc.message)
            return None
        try:
            # Lease first, so the file is never seen in active/ with an expired (past) mtime.
            os.utime(src, (expires, expires), follow_symlinks=False)
            os.rename(src, dst)
        except FileNotFoundError:
            return None
        self._cache.pop(str(src), None)
        try:
            task = self._read(dst, TaskStatus.ACTIVE)
        except InvalidTaskError as exc:
            self._quarantine(dst, exc.message)
            return None
        now = time.time()
        task = task.model_copy(
            update={"attempts": task.attempts + 1, "claimed_by": worker_id, "claimed_at": now, "lease_expires_at": expires}
        )
        try:
            data = _dump(task)
        except (ValueError, RecursionError) as exc:  # readable but not writable: it can never run
            self._quarantine(dst, f"the task cannot be written back: {type(exc).__name__}")
            return None
        try:
            # The claimed record (attempts + 1) need not survive a power cut: without it the file
            # keeps its durable pending content, whose empty claimed_at makes recovery count the
            # attempt. So the folder is not fsynced here (one fsync of two per claim).
            atomic_write(dst, data, mtime=expires, sync_dir=False)
        except BoardWriteError:
            with contextlib.suppress(OSError):
                os.rename(dst, src)  # give it back untouched rather than hold it with a stale count
            raise
        return task

    def claim_next(self, worker_id: str, *, lease_s: float, types: list[str] | None = None) -> BoardTask | None:
        """Claim the first pending task in this process's claim order (see
        :mod:`~moot.teams.board.claim_order`): the cost does not grow with the backlog."""
        self._require()
        order = self._claim_order()
        with self._order_lock:
            order.refresh()
        listed = False
        while True:
            with self._order_lock:
                task_id = order.next(types)
                if task_id is None and not listed:
                    order.refresh(full=True)  # dry: look at the folder itself before saying "none"
                    listed = True
                    continue
            if task_id is None:
                return None
            claimed = self.claim(task_id, worker_id, lease_s=lease_s)
            if claimed is not None:
                return claimed

    def candidates(self, limit: int) -> list[BoardTask]:
        self._require()
        order = self._claim_order()
        for attempt in (1, 2):
            with self._order_lock:
                order.refresh(full=attempt == 2)
                ids = order.peek(limit)
            out: list[BoardTask] = []
            for task_id in ids:
                path = self._path(TaskStatus.PENDING, task_id)
                try:
                    out.append(self._read(path, TaskStatus.PENDING))
                except (FileNotFoundError, InvalidTaskError):
                    with self._order_lock:
                        order.drop(task_id)  # claimed meanwhile (or junk, quarantined by the next listing)
            if out:
                return out
        return []

    def _claim_order(self) -> ClaimOrder:
        with self._order_lock:
            if self._order is None:
                self._order = ClaimOrder(self.dirs[TaskStatus.PENDING], self.pending_log, self._order_entry)
            return self._order

    def _order_entry(self, task_id: str) -> tuple[tuple[int, float, str], str] | None:
        """A pending task's place in the claim order and its type; ``None`` when it is gone or
        malformed (quarantined once it has settled).

        Only the three fields the order needs are taken from the JSON (a full validation of
        3,000 waiting tasks would cost each process seconds); the claim validates the task it
        takes, and quarantines it if it is not one."""
        if not task_id or "/" in task_id or "\x00" in task_id or task_id in (".", ".."):
            return None  # a log line is advice, never a path
        path = self._path(TaskStatus.PENDING, task_id)
        try:
            st = path.lstat()
            cached = self._cache.get(str(path))
            if cached and cached[0] == (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size):
                task = cached[1]
                return (-task.priority, task.created_at, task.id), task.type
            data = json.loads(read_regular(path)) if stat.S_ISREG(st.st_mode) else None
            priority, created, kind = data["priority"], data["created_at"], data.get("type", "")
            if (TASK_ID_PATTERN.match(task_id) and data.get("id", task_id) == task_id and type(priority) is int
                    and isinstance(created, (int, float)) and math.isfinite(created) and isinstance(kind, str)):
                return (-priority, float(created), task_id), kind
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError, InvalidTaskError, RecursionError):
            pass
        try:  # not the usual shape: the full read decides (a hand-written task, or junk to quarantine)
            task = self._read(path, TaskStatus.PENDING, st)
        except FileNotFoundError:
            return None
        except InvalidTaskError as exc:
            if not self._settling(path, st, time.time()):
                self._quarantine(path, exc.message)
            return None
        return (-task.priority, task.created_at, task.id), task.type

    def heartbeat(self, task_id: str, worker_id: str, *, lease_s: float) -> None:
        self._require()
        expires = time.time() + lease_s
        try:
            os.utime(self._path(TaskStatus.ACTIVE, task_id, worker_id), (expires, expires))
        except FileNotFoundError:
            raise LeaseLostError(f"worker {worker_id} no longer holds task {task_id}") from None

    def _held(self, task_id: str, worker_id: str) -> tuple[Path, BoardTask]:
        path = self._path(TaskStatus.ACTIVE, task_id, worker_id)
        try:
            return path, self._read(path, TaskStatus.ACTIVE)
        except FileNotFoundError:
            raise LeaseLostError(f"worker {worker_id} no longer holds task {task_id}") from None

    def complete(self, task_id: str, worker_id: str, result: Any) -> BoardTask:
        self._require()
        path, task = self._held(task_id, worker_id)
        record = task.model_copy(
            update={
                "status": TaskStatus.COMPLETED,
                "result": _jsonable(result),
                "error": None,
                "finished_at": time.time(),
                "lease_expires_at": None,
            }
        )
        if not self._move(path, TaskStatus.COMPLETED, record):
            raise LeaseLostError(f"worker {worker_id} no longer holds task {task_id}")
        if record.parent_id is None:
            summary = {"id": record.id, "description": record.description, "result": record.result,
                       "finished_at": record.finished_at}
            with contextlib.suppress(BoardWriteError):
                atomic_write(self.results_dir / f"{record.id}.json", json.dumps(summary, indent=2, default=str).encode())
        return record

    def fail(self, task_id: str, worker_id: str | None, error: str, *, retry: bool = False) -> BoardTask:
        self._require()
        if worker_id is None:
            found = self._find(task_id)
            if found is None or found[1].status not in (TaskStatus.PENDING, TaskStatus.ACTIVE):
                raise UnknownTaskError(f"no pending or active task {task_id!r} on the board")
            path, task = found
        else:
            path, task = self._held(task_id, worker_id)
        if retry and task.attempts < task.max_attempts:
            record = task.model_copy(update={"status": TaskStatus.PENDING, "error": error, "claimed_by": None,
                                             "claimed_at": None, "lease_expires_at": None})
        else:
            record = task.model_copy(update={"status": TaskStatus.FAILED, "error": error,
                                             "finished_at": time.time(), "lease_expires_at": None})
        if not self._move(path, record.status, record):
            raise LeaseLostError(f"task {task_id} moved while it was being failed")
        return record

    def release(self, task_id: str, worker_id: str) -> BoardTask:
        self._require()
        path, task = self._held(task_id, worker_id)
        record = task.model_copy(update={"status": TaskStatus.PENDING, "attempts": max(task.attempts - 1, 0),
                                         "claimed_by": None, "claimed_at": None, "lease_expires_at": None})
        if not self._move(path, TaskStatus.PENDING, record):
            raise LeaseLostError(f"worker {worker_id} no longer holds task {task_id}")
        return record

    def update(self, task: BoardTask) -> BoardTask:
        """Rewrite a task's fields in place; for an active task, ``claimed_by`` may change owner
        (how a worker parks a parent under :data:`AWAITING_OWNER`)."""
        self._require()
        found = self._find(task.id)
        if found is None:
            raise UnknownTaskError(f"no task {task.id!r} on the board at {self.location}")
        path, current = found
        record = task.model_copy(update={"status": current.status})
        if current.status is TaskStatus.PENDING:
            if not self._move(path, TaskStatus.PENDING, record):
                raise LeaseLostError(f"task {task.id} was claimed while it was being updated")
            return self._read(self._path(TaskStatus.PENDING, task.id), TaskStatus.PENDING)
        if current.status is not TaskStatus.ACTIVE:
            atomic_write(path, _dump(record))
            return record
        owner = current.claimed_by
        st = path.lstat()
        if owner != AWAITING_OWNER and st.st_mtime < time.time():
            raise LeaseLostError(f"the lease of worker {owner} on task {task.id} expired")
        new_owner = record.claimed_by or owner
        atomic_write(path, _dump(record), mtime=st.st_mtime)
        if new_owner != owner:
            _check_worker(new_owner)
            try:
                os.rename(path, self._path(TaskStatus.ACTIVE, task.id, new_owner))
            except FileNotFoundError:
                raise LeaseLostError(f"worker {owner} no longer holds task {task.id}") from None
        return self.get(task.id)

    def recover_expired(self, *, now: float | None = None) -> list[BoardTask]:
        self._require()
        if not self._cleaned:  # a worker's first recovery: what killed writers left goes
            self.clean_leftovers()
        self._roll_forward_all()
        now = time.time() if now is None else now
        active = self.dirs[TaskStatus.ACTIVE]
        recovered: list[BoardTask] = []
        with os.scandir(active) as entries:
            candidates = [(active / e.name, e) for e in entries if e.name.endswith(".json") and not e.name.startswith(".")]
        for path, entry in candidates:
            try:
                if entry.stat(follow_symlinks=False).st_mtime >= now:
                    continue
                task = self._read(path, TaskStatus.ACTIVE)
                if task.claimed_by == AWAITING_OWNER or path.lstat().st_mtime >= now:
                    continue  # parked parents hold no lease; a heartbeat may have just arrived
            except FileNotFoundError:
                continue
            except InvalidTaskError as exc:
                self._quarantine(path, exc.message)
                continue
            worker = task.claimed_by
            if task.claimed_at is None:
                # The worker died between the claiming rename and writing its claim: the
                # attempt happened but was never counted; count it, or the task never fails.
                task = task.model_copy(update={"attempts": task.attempts + 1})
            if task.attempts >= task.max_attempts:
                record = task.model_copy(update={
                    "status": TaskStatus.FAILED, "finished_at": now, "lease_expires_at": None,
                    "error": f"lease expired {task.attempts} times (max_attempts {task.max_attempts}); last worker {worker}"})
            else:
                record = task.model_copy(update={
                    "status": TaskStatus.PENDING, "claimed_by": None, "claimed_at": None, "lease_expires_at": None,
                    "error": f"lease of worker {worker} expired on attempt {task.attempts}"})
            if self._move(path, record.status, record):
                recovered.append(record)
        return recovered

    def clean_leftovers(self) -> list[str]:
        """Roll forward interrupted moves, then remove the hidden files killed writers left
        (``.commit~`` records of moves that never reached their commit point, ``.submit~`` and
        temp files); see :func:`~moot.teams.board.folder_files.clean_leftovers`. Done by ``init``
        and by each process's first lease recovery (a worker's start)."""
        self._cleaned = True
        self._roll_forward_all()
        active = self.dirs[TaskStatus.ACTIVE]
        try:
            with os.scandir(active) as entries:
                markers = {e.name.split("~")[2] for e in entries if e.name.startswith(".move~") and e.name.count("~") >= 3}
        except FileNotFoundError:
            return []
        return clean_leftovers(list(self.dirs.values()) + [self.registry_path.parent, self.results_dir], markers)

    def stats(self) -> BoardStats:
        counts: dict[str, int] = {}
        by_type: dict[str, int] = {}
        for task in self.list():
            counts[task.status.value] = counts.get(task.status.value, 0) + 1
            by_type[task.type] = by_type.get(task.type, 0) + 1
        return BoardStats(**counts, by_type=by_type)

    # ------------------------------------------------------------------ registry

    @contextlib.contextmanager
    def _registry_lock(self) -> Iterator[None]:
        """Read-modify-write of registry.json under an advisory lock: two registrations never clobber."""
        lock_path = self.registry_path.parent / ".registry.lock"
        with open(lock_path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read_registry(self) -> list[AgentSpec]:
        try:
            data = load_task_json(read_regular(self.registry_path, limit=4 * MAX_TASK_BYTES), origin="registry.json")
            return [AgentSpec.model_validate(item) for item in data["active_agents"]]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError, InvalidTaskError):
            # A hand-edited registry must not stop the board: keep it aside for a person, start over.
            with contextlib.suppress(OSError):
                os.replace(self.registry_path, self.registry_path.with_name(f"registry.json.{new_nonce()}{_INVALID}"))
            return []

    def _write_registry(self, specs: list[AgentSpec]) -> None:
        payload = {"active_agents": [s.model_dump(mode="json") for s in specs]}
        atomic_write(self.registry_path, json.dumps(payload, indent=2).encode())

    def agents(self) -> list[AgentSpec]:
        self._require()
        return self._read_registry()

    def register_agent(self, spec: AgentSpec) -> AgentSpec:
        self._require()
        with self._registry_lock():
            specs = [s for s in self._read_registry() if s.name != spec.name]
            specs.append(spec)
            self._write_registry(specs)
        return spec

    def version(self) -> str | None:
        """The four task folders' change times: every submit, claim, move and rewrite renames a
        file into or out of one of them (a heartbeat only touches a file, which is no change)."""
        parts = []
        for status in TaskStatus:
            try:
                st = os.stat(self.dirs[status])
            except FileNotFoundError:
                return None
            parts.append(f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}")
        return "/".join(parts)

    # ------------------------------------------------------------------ waiting

    def wait_for_work(self, timeout_s: float) -> None:
        """Poll the pending folder's mtime (a rename into it changes it) every 50 ms."""
        deadline = time.monotonic() + timeout_s
        pending = self.dirs[TaskStatus.PENDING]
        try:
            before = pending.stat().st_mtime_ns
        except FileNotFoundError:
            time.sleep(timeout_s)
            return
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(0.05, left))
            try:
                if pending.stat().st_mtime_ns != before:
                    return
            except FileNotFoundError:
                return


__all__ = ["BoardWriteError", "FolderBoard", "WORKER_ID_PATTERN", "atomic_write", "builtin_specs"]
