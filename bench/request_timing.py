"""Where a request's time goes while another client uses the shared engine.

A second process keeps the machine's shared engine busy (``--busy`` concurrent requests, one
after another, until the measured run ends). Meanwhile this process runs a small graph of
parallel agents on the embedded model with a run store, then reads the run back the way the
page does (``moot.server.history.run_detail``) and reports, for every model request, its
latency and the recorded waiting, prompt and generation, how far their sum is from the latency,
and for the run the wall time spent only waiting. A baseline run with the engine idle (no
busy client of this bench's own: ``idle``; other processes on the machine may still be using
the shared engine, and then it shows) is measured in the same invocation, so the two can be
compared.

    python bench/request_timing.py --quick    # under a minute on 2 cores

Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BUSY_CLIENT = """
import asyncio, sys, time
from moot.models.base import ModelRequest, ModelSettings, UserMessage
from moot.models.registry import infer_model
from moot.models.testing import allow_real_requests

async def main(n, tokens, until):
    model = infer_model("local")
    async def one(i):
        while time.time() < until:
            await model.request(ModelRequest(messages=(UserMessage(content=f"Write a long list of {i + 3} animals and their habitats."),),
                                             settings=ModelSettings(max_tokens=tokens)))
    with allow_real_requests():
        await asyncio.gather(*(one(i) for i in range(n)))

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
"""


def measured_run(db: Path, agents: int, tokens: int) -> dict[str, Any]:
    from moot.models.base import ModelSettings
    from moot.models.registry import infer_model
    from moot.models.testing import allow_real_requests
    from moot.runtime import RunStore, SubAgent, SubAgentTask, TaskGraph
    from moot.server.history import run_detail

    model = infer_model("local")
    names = [f"agent-{i}" for i in range(agents)]
    graph = TaskGraph([SubAgent(n, "answers", "Answer in two sentences.", model=model, settings=ModelSettings(max_tokens=tokens))
                       for n in names],
                      [SubAgentTask(n, f"Name {i + 2} uses of a river.") for i, n in enumerate(names)])
    store = RunStore(db)
    with allow_real_requests():
        run_id = graph.run_sync(store=store, name="timing").run_id
    detail = run_detail(store, run_id)
    store.close()
    calls = []
    for span in detail.spans:
        for c in span.model_calls:
            parts = (c.queue_s or 0) + (c.prompt_s or 0) + (c.generation_s or 0)
            calls.append({"agent": span.agent, "latency_s": c.latency_s, "queue_s": c.queue_s, "prompt_s": c.prompt_s,
                          "generation_s": c.generation_s, "sum_error_pct": round(abs(parts - c.latency_s) / c.latency_s * 100, 3)})
    spans = [{"agent": s.agent, "span_s": round((s.finished or 0) - s.started, 3),
              "calls_s": round(sum(c.latency_s or 0 for c in s.model_calls), 3)} for s in detail.spans]
    timing = detail.timing or {}
    return {"calls": calls, "spans": spans, "wall_s": timing.get("wall_s"), "waiting_wall_s": timing.get("waiting_wall_s"),
            "queue_s": timing.get("queue_s"), "prompt_s": timing.get("prompt_s"), "generation_s": timing.get("generation_s"),
            "sentence": timing.get("sentence")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small run (under a minute)")
    parser.add_argument("--busy", type=int, default=4, help="concurrent requests of the other client")
    args = parser.parse_args()
    agents, tokens, busy_tokens = (3, 24, 96) if args.quick else (4, 64, 192)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="moot-bench-timing-") as tmp:
        idle = measured_run(Path(tmp) / "idle.db", agents, tokens)
        until = time.time() + (25 if args.quick else 120)
        other = subprocess.Popen([sys.executable, "-c", BUSY_CLIENT, str(args.busy), str(busy_tokens), str(until)])
        try:
            time.sleep(4)  # the other client's requests are in the engine's slots
            busy = measured_run(Path(tmp) / "busy.db", agents, tokens)
        finally:
            other.wait(timeout=300)
    worst = max(c["sum_error_pct"] for r in (idle, busy) for c in r["calls"])
    result = {
        "bench": "request_timing", "quick": args.quick, "machine": f"{platform.machine()} {platform.system()}",
        "agents": agents, "max_tokens": tokens, "other_client_concurrent": args.busy,
        "idle": idle, "busy": busy, "worst_sum_error_pct": worst,
        "busy_queue_share": round(busy["queue_s"] / max(1e-9, busy["queue_s"] + busy["prompt_s"] + busy["generation_s"]), 3),
        "idle_queue_share": round(idle["queue_s"] / max(1e-9, idle["queue_s"] + idle["prompt_s"] + idle["generation_s"]), 3),
        "seconds": round(time.time() - started, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
