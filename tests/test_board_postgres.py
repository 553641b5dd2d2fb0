"""The PostgreSQL board against a real, private PostgreSQL server (see tests/pg_server.py).

Skipped only when the server binaries are missing and ``CI`` is unset; under ``CI`` a server
that cannot start fails the suite, so CI can never pass by skipping these.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from moot.errors import MootError
from moot.teams.board.protocol import AWAITING_OWNER
from moot.teams.board import AgentSpec, BoardTask, LeaseLostError, TaskStatus, UnknownTaskError, open_board

# The shared backend contract (written for every backend), run here against PostgreSQL too.
for _name in ("tests.board_contract", "board_contract"):
    try:
        _found = importlib.util.find_spec(_name)
    except ModuleNotFoundError:
        _found = None
    if _found is not None:
        exec(f"from {_name} import *")  # noqa: S102 - star-import of test functions by design
        break

try:
    import psycopg
except ImportError:
    if os.environ.get("CI"):
        raise  # CI must never pass by skipping the PostgreSQL board
    pytest.skip("the PostgreSQL board needs the driver: pip install 'moot[postgres]'", allow_module_level=True)

from moot.teams.board.postgres import LATEST_VERSION, PostgresBoard, redact_url  # noqa: E402
from pg_server import PrivateServer, ServerUnavailable, _free_port, find_bindir, start_private_server  # noqa: E402

SPAWN = mp.get_context("spawn")  # never fork a process that holds open connections


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PrivateServer]:
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the PostgreSQL server binaries (initdb) are missing: apt-get install postgresql")
        pytest.skip("PostgreSQL server binaries not found: install the Debian package 'postgresql'")
    try:
        server = start_private_server(bindir)
    except ServerUnavailable as exc:
        pytest.fail(f"could not start a private PostgreSQL server from {bindir}: {exc}")
    yield server
    server.stop()


@pytest.fixture
def db_url(pg_server: PrivateServer) -> str:
    """A fresh database per test."""
    return pg_server.create_database()


@pytest.fixture
def board(db_url: str) -> Iterator[PostgresBoard]:
    b = PostgresBoard(db_url)
    b.init()
    yield b
    b.close()


@pytest.fixture
def other_machine(db_url: str, board: PostgresBoard) -> Iterator[PostgresBoard]:
    """A second board object on the same database: another worker machine."""
    b = PostgresBoard(db_url)
    yield b
    b.close()


# --- helpers run in spawned processes (module-level so they can be pickled)


def _proc_claim(url: str, task_id: str, worker: str, ready: Any, go: Any, out: Any) -> None:
    board = PostgresBoard(url)
    board.stats()  # connected before the start signal, so the claims really race
    ready.put(worker)
    go.wait(60)
    task = board.claim(task_id, worker, lease_s=60)
    out.put((worker, task is not None))
    board.close()


def _proc_drain(url: str, worker: str, ready: Any, go: Any, out: Any) -> None:
    board = PostgresBoard(url)
    board.stats()
    ready.put(worker)
    go.wait(60)
    done: list[str] = []
    while (task := board.claim_next(worker, lease_s=60)) is not None:
        board.complete(task.id, worker, {"by": worker})
        done.append(task.id)
    out.put(done)
    board.close()


def _proc_init(url: str, ready: Any, go: Any, out: Any) -> None:
    ready.put(1)
    go.wait(60)
    try:
        board = PostgresBoard(url)
        board.init()
        out.put(board.schema_version())
        board.close()
    except Exception as exc:  # reported to the parent, which asserts on it
        out.put(repr(exc))


def _race(target: Any, args_per_proc: list[tuple[Any, ...]]) -> list[Any]:
    """Start processes, wait until all are connected, release them at once, collect one result each."""
    ready, out, go = SPAWN.Queue(), SPAWN.Queue(), SPAWN.Event()
    procs = [SPAWN.Process(target=target, args=(*args, ready, go, out)) for args in args_per_proc]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    go.set()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return results


# --- schema and connections


def test_init_is_idempotent_and_records_each_migration_once(board: PostgresBoard, db_url: str) -> None:
    board.init()
    PostgresBoard(db_url).init()
    with psycopg.connect(db_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM moot_board_migrations ORDER BY version")]
    assert versions == list(range(1, LATEST_VERSION + 1))


def test_two_processes_initialising_a_fresh_database_at_once_both_succeed(db_url: str) -> None:
    results = _race(_proc_init, [(db_url,), (db_url,), (db_url,)])
    assert results == [LATEST_VERSION] * 3
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM moot_board_migrations").fetchone()[0] == LATEST_VERSION


def test_a_database_migrated_by_a_newer_moot_is_refused_with_the_fix(board: PostgresBoard, db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("INSERT INTO moot_board_migrations (version, description) VALUES (999, 'future')")
    with pytest.raises(MootError) as err:
        PostgresBoard(db_url).init()
    assert "999" in err.value.one_line() and "upgrade moot" in err.value.one_line()


def test_a_fresh_database_is_migrated_on_first_use(db_url: str) -> None:
    b = PostgresBoard(db_url)
    assert b.submit(BoardTask(description="first")).status is TaskStatus.PENDING
    assert b.schema_version() == LATEST_VERSION
    b.close()


def test_unreachable_server_is_one_line_error_without_the_password() -> None:
    url = f"postgresql://moot:s3cret@127.0.0.1:{_free_port()}/nowhere"
    with pytest.raises(MootError) as err:
        PostgresBoard(url).stats()
    line = err.value.one_line()
    assert "\n" not in line and "s3cret" not in line
    assert "cannot connect" in line and "server is running" in line


def test_malformed_url_is_a_one_line_error() -> None:
    with pytest.raises(MootError) as err:
        PostgresBoard("postgresql://moot@127.0.0.1:notaport/db").stats()
    assert "\n" not in err.value.one_line()


def test_location_hides_the_password() -> None:
    assert redact_url("postgresql://u:pw@db.example:5432/board") == "postgresql://u@db.example:5432/board"
    assert "pw" not in redact_url("postgresql://u@h/db?password=pw&sslmode=require")
    assert PostgresBoard("postgresql://u:pw@h/db").location == "postgresql://u@h/db"


def test_open_board_picks_postgres_for_a_url(db_url: str) -> None:
    b = open_board(db_url)
    assert isinstance(b, PostgresBoard)
    b.close()


def test_reconnects_after_the_server_drops_the_connection(board: PostgresBoard, db_url: str) -> None:
    board.submit(BoardTask(id="t1", description="survives"))
    with psycopg.connect(db_url, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'moot-board' AND datname = current_database()"
        ).fetchall()
    assert killed
    assert board.get("t1").description == "survives"


def test_a_write_the_server_rolls_back_to_break_a_deadlock_is_run_again_and_written_once(board: PostgresBoard) -> None:
    # PostgreSQL breaks a deadlock between two workers by rolling one transaction back and expects
    # the client to run it again; a worker that gave up instead left its goal unfinished
    board.submit(BoardTask(id="t1", description="counted"))
    tries: list[int] = []

    def bump(cur):  # type: ignore[no-untyped-def]
        cur.execute("UPDATE moot_board_tasks SET priority = priority + 1 WHERE id = 't1'")
        tries.append(1)
        if len(tries) == 1:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        return len(tries)

    assert board._run(bump) == 2
    assert board.get("t1").priority == 1  # the rolled-back attempt wrote nothing

    def always(cur):  # type: ignore[no-untyped-def]
        raise psycopg.errors.SerializationFailure("could not serialize access")

    with pytest.raises(MootError, match="kept rolling the write back"):
        board._run(always)
    assert board.get("t1").description == "counted"


# --- tasks


def test_submit_and_get_round_trip_every_field(board: PostgresBoard) -> None:
    task = BoardTask(
        id="t.1-a_b", description="Find Python optimisation techniques", type="search_web",
        requirements=["web_search"], context={"original_goal": "optimise", "n": [1, 2.5, None]},
        parent_id="root", root_id="root", depth=2, priority=7, created_by="breakdown_12ab",
        subtasks=["s1", "s2"], max_attempts=5,
    )  # fmt: skip
    board.submit(task)
    assert board.get("t.1-a_b") == task


def test_duplicate_id_is_refused_and_the_first_task_kept(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="dup", description="first"))
    with pytest.raises(MootError, match="already on the board"):
        board.submit(BoardTask(id="dup", description="second"))
    assert board.get("dup").description == "first"


def test_unknown_task_errors(board: PostgresBoard) -> None:
    with pytest.raises(UnknownTaskError):
        board.get("nope")
    with pytest.raises(UnknownTaskError):
        board.complete("nope", "w", 1)


def test_list_orders_pending_by_priority_then_age(board: PostgresBoard) -> None:
    for i, prio in enumerate([0, 5, 0, 9]):
        board.submit(BoardTask(id=f"t{i}", description=f"task {i}", priority=prio, created_at=1000.0 + i))
    assert [t.id for t in board.list(TaskStatus.PENDING)] == ["t3", "t1", "t0", "t2"]
    assert [t.id for t in board.list()] == ["t0", "t1", "t2", "t3"]
    assert len(board.list(limit=2)) == 2
    assert board.claim_next("w", lease_s=30).id == "t3"  # type: ignore[union-attr]


def test_claim_next_only_takes_the_requested_types(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="a", description="search", type="search"))
    board.submit(BoardTask(id="b", description="write", type="file"))
    assert board.claim_next("w", lease_s=30, types=["terminal"]) is None
    assert board.claim_next("w", lease_s=30, types=["file"]).id == "b"  # type: ignore[union-attr]


def test_claim_sets_the_lease_and_counts_the_attempt(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    task = board.claim("t", "w1", lease_s=30)
    assert task is not None and task.status is TaskStatus.ACTIVE and task.claimed_by == "w1"
    assert task.attempts == 1 and task.lease_expires_at > task.claimed_at  # type: ignore[operator]
    assert board.claim("t", "w2", lease_s=30) is None


def test_claim_race_between_threads_has_exactly_one_winner(board: PostgresBoard, db_url: str) -> None:
    board.submit(BoardTask(id="prize", description="one winner"))
    boards = [PostgresBoard(db_url) for _ in range(8)]
    for b in boards:
        b.stats()
    barrier = threading.Barrier(len(boards))
    wins: list[str] = []

    def worker(i: int) -> None:
        barrier.wait()
        if boards[i].claim("prize", f"w{i}", lease_s=30) is not None:
            wins.append(f"w{i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(boards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for b in boards:
        b.close()
    assert len(wins) == 1
    assert board.get("prize").claimed_by == wins[0]


def test_claim_race_between_processes_has_exactly_one_winner(board: PostgresBoard, db_url: str) -> None:
    board.submit(BoardTask(id="prize", description="one winner"))
    results = _race(_proc_claim, [(db_url, "prize", f"p{i}") for i in range(4)])
    winners = [w for w, won in results if won]
    assert len(winners) == 1
    assert board.get("prize").claimed_by == winners[0]


def test_four_worker_processes_complete_200_tasks_exactly_once(board: PostgresBoard, db_url: str) -> None:
    ids = [f"job{i:03d}" for i in range(200)]
    for task_id in ids:
        board.submit(BoardTask(id=task_id, description=f"job {task_id}"))
    results = _race(_proc_drain, [(db_url, f"p{i}") for i in range(4)])
    done = [task_id for batch in results for task_id in batch]
    assert sorted(done) == ids  # every task once, none twice
    assert board.stats().completed == 200
    assert all(t.attempts == 1 for t in board.list(TaskStatus.COMPLETED))


def _proc_echo_worker(url: str, delay_s: float, lease_s: float, out: Any) -> None:
    """A real worker process: the echo agent, a short lease, stops when the board is done."""
    import asyncio

    from moot.teams.board.echo import EchoAgent
    from moot.teams.board.worker import Worker

    worker = Worker(PostgresBoard(url), EchoAgent(delay_s=delay_s), lease_s=lease_s, poll_s=0.05, stop_when_idle=True)
    stats = asyncio.run(worker.run())
    out.put((worker.worker_id, stats.completed_ids))


def test_kill_9_of_one_of_two_worker_processes_loses_nothing(board: PostgresBoard, db_url: str) -> None:
    import signal
    import time

    ids = [board.submit(BoardTask(id=f"kill{i:02d}", description=f"job {i}")).id for i in range(20)]
    out = SPAWN.Queue()
    doomed, survivor = (SPAWN.Process(target=_proc_echo_worker, args=(db_url, 0.5, 2.0, out)) for _ in range(2))
    doomed.start()
    survivor.start()
    marker = f"-{doomed.pid}-"  # worker ids are <type>-<host>-<pid>-<random>
    deadline = time.monotonic() + 120
    victim = None
    while victim is None and time.monotonic() < deadline:
        victim = next((t for t in board.list(TaskStatus.ACTIVE) if marker in (t.claimed_by or "")), None)
        time.sleep(0.02)
    assert victim is not None, "the first worker never claimed a task"
    os.kill(doomed.pid, signal.SIGKILL)  # mid-task: the echo agent takes 0.5 s per task
    doomed.join(30)
    survivor_id, survivor_done = out.get(timeout=120)
    survivor.join(60)
    assert survivor.exitcode == 0 and doomed.exitcode == -signal.SIGKILL
    tasks = {t.id: t for t in board.list()}
    assert all(tasks[i].status is TaskStatus.COMPLETED for i in ids)  # nothing lost
    by_doomed = {i for i in ids if marker in (tasks[i].claimed_by or "")}
    assert sorted(by_doomed | set(survivor_done)) == sorted(ids) and not by_doomed & set(survivor_done)  # none twice
    rescued = tasks[victim.id]
    assert rescued.attempts == 2 and rescued.claimed_by == survivor_id and rescued.result == {"echo": victim.description}
    assert board.stats().pending == board.stats().active == board.stats().failed == 0


def test_two_machines_share_one_board(board: PostgresBoard, other_machine: PostgresBoard) -> None:
    for i in range(4):
        board.submit(BoardTask(id=f"t{i}", description=f"task {i}", created_at=1000.0 + i))
    a = board.claim_next("machine-a", lease_s=30)
    b = other_machine.claim_next("machine-b", lease_s=30)
    assert a is not None and b is not None and a.id != b.id
    with pytest.raises(LeaseLostError):
        other_machine.complete(a.id, "machine-b", "stolen")
    board.complete(a.id, "machine-a", "done")
    assert other_machine.get(a.id).result == "done"
    assert other_machine.stats().model_dump() == board.stats().model_dump()


# --- leases


def test_expired_lease_goes_back_to_pending_and_the_old_worker_loses_it(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    board.claim("t", "slow", lease_s=30)
    assert board.recover_expired() == []  # not expired yet
    recovered = board.recover_expired(now=board.get("t").lease_expires_at + 1)  # type: ignore[operator]
    assert [(t.id, t.status, t.attempts, t.claimed_by) for t in recovered] == [("t", TaskStatus.PENDING, 1, None)]
    again = board.claim("t", "fast", lease_s=30)
    assert again is not None and again.attempts == 2
    with pytest.raises(LeaseLostError):
        board.heartbeat("t", "slow", lease_s=30)
    with pytest.raises(LeaseLostError):
        board.complete("t", "slow", "late result")
    assert board.complete("t", "fast", "ok").result == "ok"


def test_a_task_fails_after_max_attempts_expiries(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x", max_attempts=2))
    for worker in ("w1", "w2"):
        board.claim("t", worker, lease_s=-1)  # already expired
        board.recover_expired()
    task = board.get("t")
    assert task.status is TaskStatus.FAILED and task.attempts == 2
    assert "lease expired" in (task.error or "")


def test_heartbeat_extends_the_lease(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    first = board.claim("t", "w", lease_s=1)
    board.heartbeat("t", "w", lease_s=3600)
    assert board.get("t").lease_expires_at > first.lease_expires_at + 3000  # type: ignore[operator,union-attr]
    assert board.recover_expired(now=first.lease_expires_at + 10) == []  # type: ignore[union-attr]


def test_two_recoverers_at_once_recover_each_task_once(board: PostgresBoard, other_machine: PostgresBoard) -> None:
    for i in range(20):
        board.submit(BoardTask(id=f"t{i}", description="x"))
        board.claim(f"t{i}", "dead", lease_s=-1)
    other_machine.stats()
    barrier = threading.Barrier(2)
    found: list[list[BoardTask]] = [[], []]

    def recover(i: int, b: PostgresBoard) -> None:
        barrier.wait()
        found[i] = b.recover_expired()

    threads = [threading.Thread(target=recover, args=(i, b)) for i, b in enumerate((board, other_machine))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(t.id for batch in found for t in batch) == sorted(f"t{i}" for i in range(20))
    assert board.stats().pending == 20


def test_complete_happens_exactly_once(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    board.claim("t", "w", lease_s=30)
    board.complete("t", "w", {"answer": 42})
    with pytest.raises(LeaseLostError):
        board.complete("t", "w", {"answer": 0})
    assert board.get("t").result == {"answer": 42}


def test_fail_with_retry_returns_to_pending_until_attempts_run_out(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x", max_attempts=2))
    board.claim("t", "w", lease_s=30)
    assert board.fail("t", "w", "flaky", retry=True).status is TaskStatus.PENDING
    board.claim("t", "w", lease_s=30)
    failed = board.fail("t", "w", "still flaky", retry=True)
    assert failed.status is TaskStatus.FAILED and failed.error == "still flaky"
    board.submit(BoardTask(id="u", description="too deep"))
    assert board.fail("u", None, "depth limit").status is TaskStatus.FAILED


def test_release_gives_the_task_back_without_spending_an_attempt(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    board.claim("t", "w", lease_s=30)
    released = board.release("t", "w")
    assert (released.status, released.attempts, released.claimed_by) == (TaskStatus.PENDING, 0, None)
    with pytest.raises(LeaseLostError):
        board.release("t", "w")


def test_update_writes_content_but_keeps_status_attempts_and_lease(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    active = board.claim("t", "w", lease_s=30)
    assert active is not None
    board.heartbeat("t", "w", lease_s=3600)
    stale = active.model_copy(update={"subtasks": ["s1", "s2"], "status": TaskStatus.COMPLETED, "attempts": 0})
    stored = board.update(stale)
    assert stored.subtasks == ["s1", "s2"]
    assert (stored.status, stored.claimed_by, stored.attempts) == (TaskStatus.ACTIVE, "w", 1)
    assert stored.lease_expires_at > active.lease_expires_at + 3000  # type: ignore[operator]


def test_a_parked_parent_holds_no_lease_and_is_never_recovered(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="p", description="big goal", subtasks=["k"]))
    parent = board.claim("p", "w", lease_s=30)
    parked = board.update(parent.model_copy(update={"claimed_by": AWAITING_OWNER}))  # type: ignore[union-attr]
    assert (parked.status, parked.claimed_by, parked.lease_expires_at) == (TaskStatus.ACTIVE, AWAITING_OWNER, None)
    assert board.recover_expired(now=10**12) == []
    assert board.complete("p", AWAITING_OWNER, {"k": 1}).status is TaskStatus.COMPLETED


def test_update_by_a_worker_whose_lease_expired_is_refused(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="t", description="x"))
    task = board.claim("t", "w", lease_s=-1)
    with pytest.raises(LeaseLostError):
        board.update(task.model_copy(update={"subtasks": ["late"]}))  # type: ignore[union-attr]
    assert board.get("t").subtasks == []


# --- atomic writes under a full disk


def test_a_full_disk_during_a_write_leaves_the_previous_state(board: PostgresBoard, db_url: str) -> None:
    """The server raises SQLSTATE 53100 (disk_full) mid-write, as it does when its disk fills."""
    board.submit(BoardTask(id="t", description="x"))
    board.claim("t", "w", lease_s=30)
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(
            "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS"
            " $$BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'"
            " USING ERRCODE = 'disk_full'; END$$;"
            "CREATE TRIGGER disk_is_full AFTER INSERT OR UPDATE ON moot_board_tasks"
            " FOR EACH ROW EXECUTE FUNCTION disk_full()"
        )
        with pytest.raises(MootError) as err:
            board.complete("t", "w", {"big": "result"})
        assert "out of disk space" in err.value.one_line() and "free disk space" in err.value.one_line()
        with pytest.raises(MootError):
            board.submit(BoardTask(id="new", description="lost to the full disk"))
        admin.execute("DROP TRIGGER disk_is_full ON moot_board_tasks")
    task = board.get("t")
    assert (task.status, task.result, task.claimed_by) == (TaskStatus.ACTIVE, None, "w")
    with pytest.raises(UnknownTaskError):
        board.get("new")
    assert board.complete("t", "w", "after space was freed").status is TaskStatus.COMPLETED


# --- LISTEN/NOTIFY


def test_a_submit_wakes_a_waiting_worker(board: PostgresBoard, other_machine: PostgresBoard) -> None:
    board.wait_for_work(0)  # starts listening (nothing pending, so it waits 0 s)
    woke = threading.Event()

    def waiter() -> None:
        board.wait_for_work(600)
        woke.set()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    other_machine.submit(BoardTask(id="new", description="wake up"))
    # Far below the 600 s wait: returning at all means the NOTIFY woke it.
    assert woke.wait(60), "wait_for_work did not wake on NOTIFY"
    assert board.claim_next("w", lease_s=30).id == "new"  # type: ignore[union-attr]


def test_first_wait_returns_at_once_when_work_is_already_pending(board: PostgresBoard, db_url: str) -> None:
    board.submit(BoardTask(id="early", description="submitted before the worker listened"))
    late = PostgresBoard(db_url)
    done = threading.Event()
    thread = threading.Thread(target=lambda: (late.wait_for_work(600), done.set()), daemon=True)
    thread.start()
    assert done.wait(60)
    late.close()


def test_close_during_a_first_wait_does_not_deadlock(board: PostgresBoard, db_url: str) -> None:
    """A goal that settles while a worker starts its first wait closes that worker's board mid-wait.

    The first wait holds the listener's lock while it makes sure the schema exists on the main
    connection; a close that took the two locks in the other order hung forever (a CI run sat
    on it until its time limit).
    """
    late = PostgresBoard(db_url)
    inside, closing = threading.Event(), threading.Event()
    main_lock = late._lock

    class Watched:
        """The main connection's lock, telling when close() has taken it."""

        def __enter__(self) -> None:
            main_lock.acquire()
            if threading.current_thread() is closer:
                closing.set()

        def __exit__(self, *exc: object) -> None:
            main_lock.release()

    ready = late._connection_ready

    def slow_ready() -> None:
        inside.set()  # the waiter now holds the listener's lock ...
        closing.wait(2)  # ... and reaches for the main one once close() holds it (never, in the right order)
        ready()

    late._lock = Watched()  # type: ignore[assignment]
    late._connection_ready = slow_ready  # type: ignore[method-assign]
    waiter = threading.Thread(target=late.wait_for_work, args=(0.1,), daemon=True)
    closer = threading.Thread(target=late.close, daemon=True)
    waiter.start()
    assert inside.wait(60)
    closer.start()
    closer.join(30)
    waiter.join(30)
    assert not closer.is_alive() and not waiter.is_alive(), "close() and the first wait_for_work deadlocked"


# --- agents and stats


def test_agent_registry_adds_and_replaces_specs(board: PostgresBoard, other_machine: PostgresBoard) -> None:
    board.register_agent(AgentSpec(name="search", capabilities=["web_search"]))
    other_machine.register_agent(AgentSpec(name="search", capabilities=["web_search", "research"], threshold=7))
    board.register_agent(AgentSpec(name="file", capabilities=["file_operations"]))
    specs = {s.name: s for s in board.agents()}
    assert {"file", "search", "echo"} <= set(specs)  # echo: a built-in, added by init
    assert specs["search"].capabilities == ["web_search", "research"] and specs["search"].threshold == 7


def test_stats_count_by_status_and_type(board: PostgresBoard) -> None:
    board.submit(BoardTask(id="a", description="x", type="search"))
    board.submit(BoardTask(id="b", description="x", type="search"))
    board.submit(BoardTask(id="c", description="x", type="file"))
    board.claim("a", "w", lease_s=30)
    board.complete("a", "w", None)
    stats = board.stats()
    assert (stats.pending, stats.active, stats.completed, stats.failed) == (2, 0, 1, 0)
    assert stats.by_type == {"search": 2, "file": 1}


@pytest.mark.parametrize(
    "fields",
    [{"attempts": -5}, {"max_attempts": 0}, {"priority": 3_000_000_000}, {"description": "a\x00b"},
     {"context": {"note": "nul\x00inside"}}],
)
def test_out_of_range_or_nul_fields_are_refused_before_the_database(board: PostgresBoard, fields: dict) -> None:
    # Issue #20: the board accepted attempts -5, max_attempts 0, priority 3e9; PostgreSQL then
    # rejected the NUL character with a driver error instead of a plain one.
    from moot.teams.board.task import InvalidTaskError, parse_task

    with pytest.raises(InvalidTaskError):
        board.submit(parse_task({"description": "bad", **fields}))
    assert board.list() == []


def test_board_submit_file_with_a_deep_task_is_one_line_on_postgres(db_url: str, tmp_path: Any) -> None:
    # Issue #20: `board submit --db URL --file deep.json` printed a RecursionError traceback.
    import subprocess
    import sys

    PostgresBoard(db_url).init()
    deep = tmp_path / "deep.json"
    deep.write_text('{"description": "deep", "context": {"x": ' + "[" * 1000 + "]" * 1000 + "}}")
    result = subprocess.run([sys.executable, "-m", "moot", "board", "submit", "--postgres", db_url, "--file", str(deep)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "deeper than 32 levels" in result.stderr and "Traceback" not in result.stderr


def test_board_submit_file_with_a_lone_surrogate_is_one_line_on_postgres(db_url: str, tmp_path: Any) -> None:
    # Issue #34: a lone surrogate in `moot board submit --file` printed a traceback on both backends.
    import subprocess
    import sys

    PostgresBoard(db_url).init()
    task = tmp_path / "task.json"
    task.write_text('{"description": "broken \\ud800 text"}')
    result = subprocess.run([sys.executable, "-m", "moot", "board", "submit", "--postgres", db_url, "--file", str(task)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "lone surrogate" in line and "fix:" in line
    assert PostgresBoard(db_url).stats().pending == 0
