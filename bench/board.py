"""Task-board throughput and recovery: claims/s and completed tasks/s with 1, 2, 4, 8 worker
processes running the echo agent, on the folder backend (and PostgreSQL with --db URL or
MOOT_BENCH_PG), checking that every task completed exactly once; and the time to recover a
task whose worker was killed with SIGKILL. With --backlog, claims/s of 8 worker processes
taking the same number of tasks from boards of different sizes (does a claim cost more when more
tasks wait?).

    .venv/bin/python bench/board.py --quick
    .venv/bin/python bench/board.py --db postgresql://localhost/moot_bench
    .venv/bin/python bench/board.py --backlog 200,3000 --db postgresql://localhost/moot_bench

--db must name a scratch database: every measurement empties its moot_board_tasks table.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import signal
import sys
import tempfile
import time
import uuid
from typing import Any

from moot.teams.board import BoardTask, TaskStatus, open_board
from moot.teams.board.echo import EchoAgent
from moot.teams.board.worker import Worker

CTX = mp.get_context("fork")
READY = CTX.Value("i", 0)
"""Claimers that finished their start (forked children share it)."""


def _claimer(location: str, budget: Any, start: Any, queue: Any) -> None:
    """Claim until the board is empty, or until ``budget`` (a shared count of claims left) runs out."""
    board = open_board(location)
    worker = f"claim-{os.getpid()}"
    got: list[str] = []
    # A worker's start, outside the clock: what it reads before its first claim (a whole listing of
    # pending/ for the folder board, its change log for the claim order; a connection for PostgreSQL).
    w0 = time.perf_counter()
    if hasattr(board, "candidates"):
        board.candidates(1)
    else:  # a moot from before the claim order
        board.list(TaskStatus.PENDING, limit=1)
    warmup = time.perf_counter() - w0
    with READY.get_lock():
        READY.value += 1
    start.wait()
    t0 = time.perf_counter()
    while True:
        if budget is not None:
            with budget.get_lock():
                if budget.value <= 0:
                    break
                budget.value -= 1
        task = board.claim_next(worker, lease_s=300)
        if task is None:
            break
        got.append(task.id)
    queue.put((got, time.perf_counter() - t0, warmup))


def _worker(location: str, start: Any, queue: Any) -> None:
    board = open_board(location)
    worker = Worker(board, EchoAgent(), lease_s=30, poll_s=0.02, stop_when_idle=True)
    start.wait()
    stats = asyncio.run(worker.run())
    queue.put(stats.completed_ids)


def _fresh(location: str | None) -> tuple[Any, str]:
    if location is None:
        path = tempfile.mkdtemp(prefix="moot-board-bench-")
        board = open_board(path)
    else:
        board = open_board(location)
    board.init()
    if location is not None:
        # One database holds one board: empty it, or the previous measurement's tasks (claimed with
        # a 300 s lease by the claim runs) keep --until-idle workers waiting and inflate the counts.
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("TRUNCATE moot_board_tasks")
    return board, board.location if location is None else location


def _fill(board: Any, n: int) -> list[str]:
    prefix = f"b{uuid.uuid4().hex[:6]}"
    return [board.submit(BoardTask(id=f"{prefix}-{i:05d}", description=f"job {i}")).id for i in range(n)]


def _spawn(target: Any, args: tuple[Any, ...], n: int) -> tuple[list[Any], Any, Any]:
    start, queue = CTX.Event(), CTX.Queue()
    with READY.get_lock():
        READY.value = 0
    procs = [CTX.Process(target=target, args=(*args, start, queue)) for _ in range(n)]
    for p in procs:
        p.start()
    return procs, start, queue


def _race(procs: list[Any], start: Any, queue: Any) -> tuple[list[Any], float]:
    """Start the spawned children together and time them until each has reported: (reports, seconds)."""
    time.sleep(0.3)  # let the children import and open the board before the clock starts
    deadline = time.monotonic() + 120
    while 0 < READY.value < len(procs) and time.monotonic() < deadline:
        time.sleep(0.01)  # claimers: every one has read what it reads at its start
    t0 = time.perf_counter()
    start.set()
    results = [queue.get(timeout=600) for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    return results, wall


def measure_claims(location: str | None, n_procs: int, n_tasks: int, claims: int | None = None) -> dict[str, Any]:
    """Claims/s of ``n_procs`` processes on a board of ``n_tasks``: all of them, or only the first
    ``claims`` (so the backlog stays about ``n_tasks`` for the whole measurement)."""
    board, loc = _fresh(location)
    ids = _fill(board, n_tasks)
    budget = CTX.Value("i", claims) if claims is not None else None
    results, wall = _race(*_spawn(_claimer, (loc, budget), n_procs))
    claimed = [tid for got, _, _ in results for tid in got]
    warmup = max(w for _, _, w in results)
    if claims is None:
        ok = sorted(claimed) == sorted(ids)
    else:
        ok = len(claimed) == len(set(claimed)) == min(claims, n_tasks) and set(claimed) <= set(ids)
    return {"procs": n_procs, "tasks": n_tasks, "claims_per_s": round(len(claimed) / wall, 1), "exactly_once": ok,
            "start_s": round(warmup, 3)}


def measure_completions(location: str | None, n_procs: int, n_tasks: int) -> dict[str, Any]:
    board, loc = _fresh(location)
    ids = _fill(board, n_tasks)
    results, wall = _race(*_spawn(_worker, (loc,), n_procs))
    done = [tid for got in results for tid in got]
    stored = {t.id: t for t in board.list(TaskStatus.COMPLETED) if t.id in set(ids)}
    ok = sorted(done) == sorted(ids) and len(stored) == len(ids) and all(t.attempts == 1 for t in stored.values())
    return {"procs": n_procs, "tasks": n_tasks, "completed_per_s": round(len(done) / wall, 1), "exactly_once": ok}


def _doomed(location: str, lease_s: float) -> None:
    board = open_board(location)
    asyncio.run(Worker(board, EchoAgent(delay_s=3600), lease_s=lease_s, poll_s=0.02).run())


def measure_recovery(location: str | None, lease_s: float) -> dict[str, Any]:
    board, loc = _fresh(location)
    task_id = _fill(board, 1)[0]
    proc = CTX.Process(target=_doomed, args=(loc, lease_s))
    proc.start()
    # wait until the claim is recorded (attempts 1), not only until the file moved: a worker killed
    # between its claim's rename and its attempts write is recovered without a counted attempt
    while (t := board.get(task_id)).status is not TaskStatus.ACTIVE or t.attempts < 1:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.perf_counter()
    proc.join()
    rescuer = Worker(open_board(loc), EchoAgent(), lease_s=lease_s, poll_s=0.02, stop_when_idle=True,
                     recover_every_s=0.05)
    asyncio.run(rescuer.run())
    seconds = time.perf_counter() - killed
    task = board.get(task_id)
    return {"lease_s": lease_s, "recovered_in_s": round(seconds, 3), "beyond_lease_s": round(seconds - lease_s, 3),
            "completed": task.status is TaskStatus.COMPLETED, "attempts": task.attempts}


def run_backend(location: str | None, counts: list[int], n_tasks: int, lease_s: float) -> dict[str, Any]:
    claims = [measure_claims(location, n, n_tasks) for n in counts]
    completions = [measure_completions(location, n, n_tasks) for n in counts]
    return {"claims": claims, "completions": completions, "recovery": measure_recovery(location, lease_s),
            "all_exactly_once": all(r["exactly_once"] for r in claims + completions)}


def run_backlog(location: str | None, sizes: list[int], procs: int, repeat: int, claims: int) -> dict[str, Any]:
    """Claims/s of ``procs`` claimers taking ``claims`` tasks from boards of each size (the median of
    ``repeat`` runs; the sizes alternate, so a busy moment of the machine hits all of them alike)."""
    runs: dict[int, list[dict[str, Any]]] = {size: [] for size in sizes}
    for _ in range(repeat):
        for size in sizes:
            runs[size].append(measure_claims(location, procs, size, claims))
    rows = []
    for size in sizes:
        rates = sorted(r["claims_per_s"] for r in runs[size])
        starts = sorted(r["start_s"] for r in runs[size])
        rows.append({"pending": size, "procs": procs, "claims": claims, "claims_per_s": rates[len(rates) // 2],
                     "runs": rates, "start_s": starts[len(starts) // 2],
                     "exactly_once": all(r["exactly_once"] for r in runs[size])})
    base = rows[0]["claims_per_s"]
    for row in rows:
        row["over_smallest"] = round(row["claims_per_s"] / base, 2) if base else None
    return {"backlog": rows, "all_exactly_once": all(r["exactly_once"] for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 tasks per run (under a minute)")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--db", default=os.environ.get("MOOT_BENCH_PG"), help="also run on this PostgreSQL board")
    parser.add_argument("--lease", type=float, default=1.0, help="lease for the recovery measurement")
    parser.add_argument("--backlog", default=None,
                        help="only claims/s against backlog: pending sizes, e.g. 200,3000 (8 processes)")
    parser.add_argument("--procs", type=int, default=8, help="claimer processes for --backlog")
    parser.add_argument("--repeat", type=int, default=5, help="runs per size for --backlog (the median is kept)")
    parser.add_argument("--claims", type=int, default=200,
                        help="claims per --backlog run: the backlog stays about its size while they are measured")
    args = parser.parse_args()
    if args.backlog:
        sizes = [int(x) for x in args.backlog.split(",")]
        result: dict[str, Any] = {
            "bench": "board-backlog", "procs": args.procs, "sizes": sizes, "repeat": args.repeat,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "date": time.strftime("%Y-%m-%d"),
        }
        result["claims"] = args.claims
        result["folder"] = run_backlog(None, sizes, args.procs, args.repeat, args.claims)
        print(f"folder: {json.dumps(result['folder'])}", file=sys.stderr)
        if args.db:
            result["postgres"] = run_backlog(args.db, sizes, args.procs, args.repeat, args.claims)
            print(f"postgres: {json.dumps(result['postgres'])}", file=sys.stderr)
            result["postgres_over_folder"] = [
                round(p["claims_per_s"] / f["claims_per_s"], 2)
                for p, f in zip(result["postgres"]["backlog"], result["folder"]["backlog"], strict=True)]
        print(json.dumps(result))
        return
    n_tasks = args.tasks or (200 if args.quick else 1000)
    counts = [1, 2, 4, 8]
    out: dict[str, Any] = {
        "bench": "board", "quick": args.quick, "tasks_per_run": n_tasks, "procs": counts,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "date": time.strftime("%Y-%m-%d"),
    }
    out["folder"] = run_backend(None, counts, n_tasks, args.lease)
    print(f"folder: {json.dumps(out['folder'])}", file=sys.stderr)
    if args.db:
        out["postgres"] = run_backend(args.db, counts, n_tasks, args.lease)
        for kind in ("claims", "completions"):
            key = "claims_per_s" if kind == "claims" else "completed_per_s"
            out[f"{kind}_postgres_over_folder"] = [
                round(p[key] / f[key], 2) for p, f in zip(out["postgres"][kind], out["folder"][kind], strict=True)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
