"""The folder board's claim order: which pending task to claim next, without listing pending/.

A claim used to list and sort the whole pending folder, so its cost grew with the backlog
(8 workers: 159 claims/s at 200 pending, 22/s at 3,000). Now each process keeps its own
:class:`ClaimOrder`, a heap of pending task ids in claim order (priority first, then age), kept
current from a **change log**: whoever puts a task into ``pending/`` (a submit, a retry, a
recovered lease, an update) appends its id to ``tasks/.pending.log`` afterwards. Before a claim a
process reads the log's new lines and (re)reads only those tasks; a claim costs the same with
3,000 tasks waiting as with 20.

The log is advice, never the truth: the claim itself is still the one rename of
``pending/<id>.json`` (the folder is the truth), so a stale entry costs one failed ``lstat``.
What the log cannot know (a file a person dropped in by hand, a writer killed between its rename
and its log line, a log rotated away) is found by a full listing of the folder, done when the
order runs dry and at least every :data:`FULL_SCAN_S` seconds. Appends are single ``write`` calls
on an ``O_APPEND`` descriptor, so concurrent writers never interleave within a line on a local
filesystem; the log is replaced by a fresh one past :data:`ROTATE_BYTES`.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

LOG_NAME = ".pending.log"
"""The change log, beside the status folders in ``tasks/`` (hidden)."""
ROTATE_BYTES = 1 << 20
"""A log longer than this is moved aside (``.pending.log.old``) and a new one begun."""
FULL_SCAN_S = 2.0
"""The longest a process goes without listing ``pending/`` itself (hand-dropped files)."""

SortKey = tuple[int, float, str]
"""``(-priority, created_at, id)``: the order claims take tasks in (the same as ``list``)."""


def note_pending(log: Path, task_id: str, key: tuple[int, float, str] | None = None) -> None:
    """Tell every process's claim order that ``pending/<task_id>.json`` is new or rewritten.

    ``key``: its priority, creation time and type, when the writer knows them; readers then
    place it without reading the file (a line without them makes readers read it). Called after
    the file is in place; a failure to log costs only the wait for the next full listing, so it
    is never an error."""
    try:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        line = task_id if key is None else f"{task_id}\t{key[0]}\t{key[1]!r}\t{key[2]}"
        os.write(fd, f"{line}\n".encode())
        size = os.fstat(fd).st_size
    except OSError:
        return
    finally:
        os.close(fd)
    if size > ROTATE_BYTES:
        try:  # readers see a new inode and list the folder once; nothing is lost
            os.replace(log, log.with_name(log.name + ".old"))
        except OSError:
            pass


_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def _parse_log(data: bytes) -> dict[str, tuple[SortKey, str] | None]:
    """The tasks named by log lines, each with its place when the line gives a sound one (a line
    that does not is read as "look at the file"); a later line for a task wins."""
    found: dict[str, tuple[SortKey, str] | None] = {}
    for raw in data.split(b"\n"):
        parts = raw.decode("utf-8", "replace").split("\t")
        task_id = parts[0].strip()
        if not _ID.match(task_id):
            continue
        entry: tuple[SortKey, str] | None = None
        if len(parts) == 4:
            try:
                priority, created = int(parts[1]), float(parts[2])
            except ValueError:
                priority, created = 0, math.nan
            if math.isfinite(created) and abs(priority) <= 1_000_000 and len(parts[3]) <= 200:
                entry = ((-priority, created, task_id), parts[3])
        found.pop(task_id, None)
        found[task_id] = entry
    return found


class ClaimOrder:
    """One process's view of ``pending/`` in claim order (see the module docstring)."""

    def __init__(self, pending: Path, log: Path, read: Callable[[str], tuple[SortKey, str] | None]) -> None:
        self.pending = pending
        self.log = log
        self._read = read
        """``read(task_id)`` → the task's sort key and type, or ``None`` when it is gone or not a
        task (the board quarantines junk on the way)."""
        self._heap: list[SortKey] = []
        self._keys: dict[str, SortKey] = {}
        """The live entry of each known task (heap entries that differ are stale)."""
        self._types: dict[str, str] = {}
        self._log: tuple[int, int] | None = None
        """(inode, offset) of the change log read so far."""
        self._listed_at = -1e9
        self.listings = 0
        """Full listings of ``pending/`` so far (for tests and the benchmark)."""

    # ------------------------------------------------------------------ keeping current

    def refresh(self, *, full: bool = False) -> None:
        """Take in the log's new lines, or list the folder when a listing is due (or ``full``)."""
        log = self.log
        try:
            st = os.stat(log, follow_symlinks=False)
            identity = (st.st_ino, st.st_size)
        except OSError:
            identity = None
        due = time.monotonic() - self._listed_at >= FULL_SCAN_S
        if full or due or identity is None or self._log is None or identity[0] != self._log[0] or identity[1] < self._log[1]:
            self._list(identity)
            return
        if identity[1] > self._log[1]:
            self._read_log(log, identity[0])

    def _read_log(self, log: Path, inode: int) -> None:
        assert self._log is not None
        try:
            with open(log, "rb") as handle:
                if os.fstat(handle.fileno()).st_ino != inode:
                    self._list(None)
                    return
                handle.seek(self._log[1])
                data = handle.read(ROTATE_BYTES * 2)
        except OSError:
            self._list(None)
            return
        end = data.rfind(b"\n") + 1  # a line being written is taken next time
        self._log = (inode, self._log[1] + end)
        for task_id, entry in _parse_log(data[:end]).items():
            if entry is None:
                self._take(task_id)
            else:
                self._place(task_id, *entry)

    def _logged(self) -> dict[str, tuple[SortKey, str] | None]:
        """Every task the log files name, with the place its last line gives it."""
        found: dict[str, tuple[SortKey, str] | None] = {}
        for path in (self.log.with_name(self.log.name + ".old"), self.log):
            try:
                with open(path, "rb") as handle:
                    data = handle.read(ROTATE_BYTES * 2)
            except OSError:
                continue
            found.update(_parse_log(data[: data.rfind(b"\n") + 1]))
        return found

    def _list(self, identity: tuple[int, int] | None) -> None:
        """Every task in the folder: new ones placed (from the log when it knows them, else read),
        vanished ones forgotten. The log's position is taken *before* the listing, so a task
        added meanwhile is taken in again, never missed."""
        self.listings += 1
        self._listed_at = time.monotonic()
        self._log = identity
        try:
            with os.scandir(self.pending) as entries:
                present = {e.name[: -len(".json")] for e in entries if e.name.endswith(".json") and not e.name.startswith(".")}
        except FileNotFoundError:
            present = set()
        for task_id in [t for t in self._keys if t not in present]:
            self._forget(task_id)
        unknown = [t for t in present if t not in self._keys]
        logged = self._logged() if len(unknown) > 8 else {}  # a worker's start: one file, not thousands
        for task_id in unknown:
            entry = logged.get(task_id)
            if entry is None:
                self._take(task_id)
            else:
                self._place(task_id, *entry)
        if len(self._heap) > 2 * len(self._keys) + 64:  # drop stale entries now and then
            self._heap = sorted(self._keys.values())

    def _place(self, task_id: str, key: SortKey, task_type: str) -> None:
        self._types[task_id] = task_type
        if self._keys.get(task_id) != key:
            self._keys[task_id] = key
            heapq.heappush(self._heap, key)

    def _take(self, task_id: str) -> None:
        found = self._read(task_id)
        if found is None:
            self._forget(task_id)
            return
        self._place(task_id, *found)

    def _forget(self, task_id: str) -> None:
        self._keys.pop(task_id, None)
        self._types.pop(task_id, None)

    # ------------------------------------------------------------------ taking

    def next(self, types: list[str] | None = None) -> str | None:
        """The id of the first known task (of one of ``types``), taken out of the order; ``None``
        when none is known. A task passed over for its type stays in the order."""
        passed: list[SortKey] = []
        found: str | None = None
        while self._heap:
            key = heapq.heappop(self._heap)
            task_id = key[2]
            if self._keys.get(task_id) != key:
                continue  # stale: claimed, rewritten or gone since
            if types and self._types.get(task_id) not in types:
                passed.append(key)
                continue
            del self._keys[task_id]
            self._types.pop(task_id, None)
            found = task_id
            break
        for key in passed:
            heapq.heappush(self._heap, key)
        return found

    def peek(self, limit: int) -> list[str]:
        """The first ``limit`` known ids in claim order (nothing is taken out; stale entries met
        on the way are dropped)."""
        live: list[SortKey] = []
        seen: set[str] = set()
        while self._heap and len(live) < limit:
            key = heapq.heappop(self._heap)
            if self._keys.get(key[2]) == key and key[2] not in seen:
                seen.add(key[2])
                live.append(key)
        for key in live:
            heapq.heappush(self._heap, key)
        return [key[2] for key in live]

    def drop(self, task_id: str) -> None:
        """Forget a task (claimed, or found gone)."""
        self._forget(task_id)

    def __len__(self) -> int:
        return len(self._keys)


__all__ = ["FULL_SCAN_S", "LOG_NAME", "ClaimOrder", "note_pending"]
