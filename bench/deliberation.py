"""Deliberation team benchmark: wall time per mode, the critical path of the parallel
coordinators against the sum of their calls, and calls per insight (the design's "API efficiency").

Two measurements; the last line of output is one JSON object:

1. **Scheduling** (no model): a function model that answers every call after a fixed latency
   (0.25 s) plays every agent on ``examples/deliberation/sleep-vs-deadline``; per mode the wall
   time against the sum of every call's time (what the run would take one call after another),
   their ratio, and calls per insight.
2. **Embedded model** (not with ``--quick``): each mode on ``local`` over the same folder with the
   deadline lifted (the design's 15/30/60 s are for a hosted model): wall time, calls, tokens,
   the specialists' phase (parallel) against the sum of its calls, insights and calls per insight.

Run::

    python bench/deliberation.py --quick    # 1 only (~10 s)
    python bench/deliberation.py            # also 2 (many minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from moot.runtime import EventBus, RunStore  # noqa: E402
from moot.teams.deliberation import DeliberationTeam  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "deliberation" / "sleep-vs-deadline"
REQUEST = "I have the Q4 report due at 9am tomorrow and feel wiped out. Should I keep working tonight?"
NOW = "2026-11-24T20:00"


def _timed_run(model: Any, mode: str, store: RunStore, deadline_s: float | None = None) -> dict[str, Any]:
    bus = EventBus()
    spans: dict[str, list[float]] = {}
    bus.subscribe(lambda e: spans.setdefault(e.task_id, []).append(e.ts)
                  if e.task_id and e.type.value in ("task_started", "task_finished", "task_failed") else None)
    team = DeliberationTeam(EXAMPLE, model=model, mode=mode, store=store, deadline_s=deadline_s)
    t0 = time.perf_counter()
    result = asyncio.run(team.deliberate(REQUEST, now=NOW, bus=bus))
    wall = time.perf_counter() - t0
    steps = {k: v[-1] - v[0] for k, v in spans.items() if len(v) >= 2}
    specialist_steps = {k: s for k, s in steps.items() if k.count(".") == 1 and k.split(".")[0] in ("health", "work", "lifestyle")}
    phase = [spans[k] for k in specialist_steps]
    phase_wall = (max(v[-1] for v in phase) - min(v[0] for v in phase)) if phase else 0.0
    insights = len([i for i in result.insights if i.agent != "moderator"])
    return {
        "mode": mode, "status": result.status, "wall_s": round(wall, 2), "sum_of_calls_s": round(sum(steps.values()), 2),
        "parallel_speedup": round(sum(steps.values()) / wall, 2) if wall else None,
        "specialists": len(specialist_steps), "specialist_phase_wall_s": round(phase_wall, 2),
        "specialist_phase_sum_s": round(sum(specialist_steps.values()), 2),
        "calls": result.usage.requests, "tokens": result.usage.input_tokens + result.usage.output_tokens,
        "insights": insights, "calls_per_insight": round(result.usage.requests / insights, 2) if insights else None,
        "conflicts": len(result.conflicts), "debates": len(result.debates), "votes": len(result.votes),
        "stop_reason": result.stop_reason,
    }


def scheduling(latency: float = 0.25) -> list[dict[str, Any]]:
    from deliberation_support import Deliberators
    from moot.models.testing import FunctionModel

    class Slow(Deliberators):
        async def __call__(self, request: Any) -> Any:
            await asyncio.sleep(latency)
            return await super().__call__(request)

    store = RunStore(Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-deliberation-{os.getpid()}.db")
    return [_timed_run(FunctionModel(Slow()), mode, store) for mode in ("quick", "standard", "deep")]


def embedded() -> list[dict[str, Any]]:
    from moot.models.registry import infer_model

    model = infer_model("local")
    store = RunStore(Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-deliberation-local-{os.getpid()}.db")
    return [_timed_run(model, mode, store, deadline_s=1800) for mode in ("quick", "standard", "deep")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="scheduling only, no model (< 1 minute)")
    args = parser.parse_args()
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                           "scheduling_latency_s": 0.25, "scheduling": scheduling()}
    print(json.dumps({"scheduling": out["scheduling"]}), file=sys.stderr)
    if not args.quick:
        out["embedded"] = embedded()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
