"""The web page and the run-history API under load: time to first render of the runs list over
10,000 recorded runs and of one run with 1,000 spans (server time and page time, in headless
Chromium), and API latency p50/p99 under 50 concurrent clients on loopback.

    .venv/bin/python bench/web.py --quick      # under a minute
    .venv/bin/python bench/web.py              # more requests per client, three page loads each

The server is a real `moot serve` process over a scratch run store; the page time needs
Debian's chromium and chromium-driver (scripts/setup --tests) and is left out without them.
No peer ships an offline run viewer that can be pointed at the same store, so there is no
side-by-side column; the numbers are absolute. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from moot.models.base import Usage
from moot.runtime import RunStore
from moot.runtime.events import Event, EventType
from moot.runtime.graph import RunResult

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def fill_store(db: Path, runs: int, spans: int) -> str:
    """``runs`` finished runs of every team, and one run with ``spans`` spans on 10 agent lanes."""
    store = RunStore(db)
    names = ["research (multi): how is a request sent", "graph: how does the mill affect the lake", "ask: who won",
             "deliberate (standard): work late tonight?", "learn notes.md", "board goal: write the report"]
    now = time.time() - runs * 2
    rng = random.Random(7)
    for i in range(runs):
        run_id = f"bench{i:08d}"
        started = now + i * 2
        store.start_run(run_id, f"{names[i % len(names)]} #{i}", started=started, budget={"max_calls": 20})
        usage = Usage(input_tokens=rng.randint(100, 9000), output_tokens=rng.randint(10, 900), requests=rng.randint(1, 20))
        store.finish_run(RunResult(run_id=run_id, name="", status="completed" if i % 9 else "stopped",
                                   stop_reason="done" if i % 9 else "budget:calls", results={}, usage=usage,
                                   usage_by_agent={"agent": usage}, started_at=started, finished_at=started + rng.uniform(0.5, 60)))
    big = "benchbigrun0"
    t0 = time.time()
    store.start_run(big, "research (multi): a run with many spans", started=t0, budget={"max_calls": spans * 2})
    seq = 0

    def emit(kind: EventType, ts: float, task: str | None = None, agent: str | None = None, **payload: Any) -> None:
        nonlocal seq
        seq += 1
        store.record_event(Event(type=kind, run_id=big, task_id=task, agent=agent, ts=ts, payload=payload, seq=seq))

    emit(EventType.RUN_STARTED, t0, name="big")
    for n in range(spans):
        agent = f"agent-{n % 10}"
        start = t0 + (n // 10) * 0.5 + rng.uniform(0, 0.2)
        task = f"task-{n}"
        emit(EventType.TASK_STARTED, start, task, agent)
        emit(EventType.MODEL_REQUEST, start + 0.01, task, agent, turn=1, model="bench", estimated_input_tokens=500)
        emit(EventType.MODEL_RESPONSE, start + 0.3, task, agent, turn=1, latency_s=0.29, input_tokens=500, output_tokens=60,
             requests=1, cost_usd=0.0, finish_reason="stop", tool_calls=[])
        emit(EventType.TOOL_CALL, start + 0.32, task, agent, tool="search", arguments='{"q": "x"}', result="3 hits")
        emit(EventType.TASK_FINISHED, start + 0.4, task, agent, status="completed", stop_reason="completed",
             input_tokens=500, output_tokens=60, requests=1, cost_usd=0.0)
    total = Usage(input_tokens=500 * spans, output_tokens=60 * spans, requests=spans)
    store.finish_run(RunResult(run_id=big, name="", status="completed", stop_reason="done", results={}, usage=total,
                               usage_by_agent={}, started_at=t0, finished_at=t0 + spans / 10 * 0.5 + 0.5))
    store.close()
    return big


def timed_get(client: httpx.Client, url: str) -> tuple[float, Any]:
    t = time.perf_counter()
    r = client.get(url)
    r.raise_for_status()
    return (time.perf_counter() - t) * 1000, r.json()


async def load(base: str, urls: list[str], clients: int, per_client: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0

    async def client(n: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=base, timeout=60) as c:
            await c.get("/api/health")  # open the connection first: a browser tab keeps one open
            await ready.wait()
            for i in range(per_client):
                url = urls[(n + i) % len(urls)]
                t = time.perf_counter()
                r = await c.get(url)
                latencies.append((time.perf_counter() - t) * 1000)
                errors += r.status_code != 200

    ready = asyncio.Event()
    tasks = [asyncio.create_task(client(n)) for n in range(clients)]
    await asyncio.sleep(0.5)
    t0 = time.perf_counter()
    ready.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    latencies.sort()
    return {"clients": clients, "requests": len(latencies), "errors": errors, "p50_ms": round(statistics.median(latencies), 1),
            "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
            "requests_per_s": round(len(latencies) / wall, 1)}


def page_times(base: str, big: str, repeats: int) -> dict[str, Any] | None:
    from web_support import Browser, browser_missing

    try:
        if browser_missing() is not None:
            return None
    except AssertionError:
        return None
    out: dict[str, list[float]] = {"runs_list_ms": [], "run_1000_spans_ms": []}
    with Browser() as b:
        for _ in range(repeats):
            for key, fragment, view in (("runs_list_ms", "#/", "runs"), ("run_1000_spans_ms", f"#/runs/{big}", "run")):
                b.driver.get("about:blank")
                b.driver.get(f"{base}/{fragment}")
                at = b.wait_for(f"return window.__mootRendered && window.__mootRendered.view === '{view}' && "
                                "window.__mootRendered.at", 60)
                out[key].append(at)
    return {k: round(statistics.median(v), 1) for k, v in out.items()} | {"page_loads": repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests per client, one page load each (under a minute)")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--spans", type=int, default=1_000)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args()
    per_client = 20 if args.quick else 100
    with tempfile.TemporaryDirectory(prefix="moot-bench-web-") as tmp:
        db = Path(tmp) / "runs.db"
        t = time.perf_counter()
        big = fill_store(db, args.runs, args.spans)
        fill_s = time.perf_counter() - t
        from web_support import Serve

        with Serve(db, env={"MOOT_HOME": str(Path(tmp) / "home")}) as server, httpx.Client(base_url=server.url, timeout=60) as c:
            list_ms, page = timed_get(c, "/api/runs?limit=50")
            assert page["total"] == args.runs + 1
            detail_ms, run = timed_get(c, f"/api/runs/{big}")
            assert len(run["spans"]) == args.spans
            filtered_ms, _ = timed_get(c, "/api/runs?limit=50&team=graph&q=mill")
            deep_ms, _ = timed_get(c, f"/api/runs?limit=50&offset={args.runs - 50}")
            loaded = asyncio.run(load(server.url, ["/api/runs?limit=50", "/api/runs?limit=50&team=learning",
                                                   "/api/runs/bench00000042", "/api/health"], args.clients, per_client))
            pages = page_times(server.url, big, 1 if args.quick else 3)
    result = {
        "bench": "web", "quick": args.quick, "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "runs": args.runs, "spans": args.spans, "fill_store_s": round(fill_s, 1),
        "server_ms": {"runs_list_first_page": round(list_ms, 1), "runs_list_filtered": round(filtered_ms, 1),
                      "runs_list_last_page": round(deep_ms, 1), "run_1000_spans": round(detail_ms, 1)},
        "page_ms": pages, "load": loaded,
    }
    print(f"server: runs list {list_ms:.0f} ms, run with {args.spans} spans {detail_ms:.0f} ms; "
          f"page: {pages}; {args.clients} clients: p50 {loaded['p50_ms']} ms, p99 {loaded['p99_ms']} ms", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
