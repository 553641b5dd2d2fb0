"""Research benchmark: multi mode with parallel vs sequential researchers, same plan, same repo.

Seed 001 ran its researchers one after another and estimated that running them in parallel
would take a query from ~60 s to ~20 s. Two measurements, each a side-by-side comparison in
the same process:

1. **Scheduling** (no model): a function model that answers every call after a fixed latency
   (``--latency``, default 0.5 s) plays every phase for a 3-sub-question plan. The ratio
   sequential/parallel of the researchers phase is the pure scheduling gain (ideal: 3.0).
2. **Embedded model** (``local``): the same question, repository and plan, researchers in
   parallel then one after another. The plan comes from the planner in the full run (run
   once, then reused, so both runs research the same sub-questions); ``--quick`` uses a fixed
   two-sub-question plan, two model calls per researcher (a tool call, then the report) and no verifier model call. On 2
   cores the engine's parallel slots share the CPU, so expect far less than the seed's 3x.

Run::

    python bench/research.py --quick        # a tiny repo, one small question (~1 minute on a quiet machine)
    python bench/research.py                # moot's own research team as the repo, the planner's plan
    python bench/research.py --no-embedded  # the scheduling part only

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.teams.research import ResearchConfig, ResearchPlan, ResearchTeam, SubQuestion

TINY = {
    "app/server.py": '"""A tiny web app."""\n\n\ndef parse_request(raw):\n    """Split a raw request."""\n'
                     '    method, path = raw.split(" ", 1)\n    return method, path\n\n\n'
                     'def route_request(method, path):\n    """Pick the handler."""\n'
                     '    return index_handler if path == "/" else not_found\n\n\n'
                     'def index_handler():\n    return "hello"\n\n\ndef not_found():\n    return "404"\n',
    "app/store.py": '"""Sessions in memory."""\n\n\nclass SessionStore:\n    def __init__(self):\n'
                    '        self.sessions = {}\n\n    def save_session(self, sid, data):\n'
                    '        self.sessions[sid] = data\n',
}
QUICK_QUESTION = "How does the app handle a request?"
QUICK_PLAN = [SubQuestion(question="How is a raw request parsed?", target_area="app/server.py"),
              SubQuestion(question="How is a handler chosen for a path?", target_area="app/server.py")]
FULL_QUESTION = "How does the research team answer a question, from the plan to the verified answer?"


def tiny_repo(root: Path) -> Path:
    for rel, text in TINY.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def scripted(latency: float) -> FunctionModel:
    async def answer(request: ModelRequest) -> Any:
        await asyncio.sleep(latency)
        system = str(request.messages[0].content)
        if system.startswith("You plan research"):
            return {"sub_questions": [q.model_dump() for q in QUICK_PLAN] + [{"question": "Where are sessions kept?"}]}
        if system.startswith("You research ONE"):
            # the report must nominate one of the symbols it is offered: the first, as the 0.5B model does
            items = (request.output.json_schema.get("properties", {}).get("symbols") or {}).get("items") or {}
            offered = items.get("enum") or ([items["const"]] if "const" in items else [])
            return {"symbols": offered[:1], "findings": [{"path": "app/server.py", "start_line": 4, "end_line": 7, "note": "parses"}],
                    "coverage_note": "found", "sufficient": True}
        if system.startswith("You check claims"):
            return {"verdicts": [{"claim": 1, "status": "VERIFIED"}]}
        return "Requests are split by `parse_request` (app/server.py:4)."

    return FunctionModel(answer)


async def one(repo: Path, work: Path, model: Any, question: str, *, parallel: bool, plan: ResearchPlan | None,
              config: dict[str, Any]) -> dict[str, Any]:
    # One index file per repository: an index belongs to the root it was built for.
    team = ResearchTeam(repo, model=model, store=RunStore(work / "runs.db"), db_path=work / f"index-{repo.name}.db",
                        config=ResearchConfig(parallel=parallel, **config))
    try:
        started = time.perf_counter()
        result = await team.ask(question, mode="multi", plan=plan)
        seconds = time.perf_counter() - started
    finally:
        team.close()
    phases = {k: v.seconds for k, v in result.usage_by_phase.items()}
    return {"parallel": parallel, "seconds": round(seconds, 2), "phase_seconds": phases,
            "researchers": len(result.evidence), "calls": result.usage.requests, "mode": result.mode,
            "tokens": result.usage.input_tokens + result.usage.output_tokens, "run_id": result.run_id,
            "plan": result.plan}


def ratio(seq: dict[str, Any], par: dict[str, Any], key: str) -> float | None:
    a = seq["phase_seconds"].get("researchers") if key == "researchers" else seq["seconds"]
    b = par["phase_seconds"].get("researchers") if key == "researchers" else par["seconds"]
    return round(a / b, 2) if a and b else None


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median whole-run and researchers-phase seconds over rounds (the mean of the middle
    two for an even count, so two rounds do not report the slower one)."""
    return {"seconds": round(statistics.median(r["seconds"] for r in runs), 2),
            "phase_seconds": {"researchers": round(statistics.median(r["phase_seconds"].get("researchers") or 0 for r in runs), 3)},
            "researchers": runs[0]["researchers"], "calls": runs[0]["calls"], "tokens": runs[0]["tokens"]}


async def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--no-embedded", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="timed runs per setting (default: 1 quick, 2 full)")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 2)
    out: dict[str, Any] = {"bench": "research", "quick": args.quick, "cpus": os.cpu_count(),
                           "python": platform.python_version(), "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = tiny_repo(work / "tiny")
        model = scripted(args.latency)
        plan = ResearchPlan(original_question=QUICK_QUESTION, sub_questions=[*QUICK_PLAN, SubQuestion(question="Where are sessions kept?")])
        seq = await one(repo, work, model, QUICK_QUESTION, parallel=False, plan=plan, config={})
        par = await one(repo, work, model, QUICK_QUESTION, parallel=True, plan=plan, config={})
        out["scripted"] = {"latency_s": args.latency, "researchers": par["researchers"],
                           "sequential_s": seq["seconds"], "parallel_s": par["seconds"],
                           "researchers_sequential_s": seq["phase_seconds"]["researchers"],
                           "researchers_parallel_s": par["phase_seconds"]["researchers"],
                           "researchers_ratio": ratio(seq, par, "researchers"), "total_ratio": ratio(seq, par, "total")}
        print(json.dumps({"scripted": out["scripted"]}), file=sys.stderr)
        if not args.no_embedded:
            from moot.models.registry import infer_model
            local = infer_model("local")
            if args.quick:
                question, repo_e, config = QUICK_QUESTION, repo, {"researcher_calls": 2, "verify_with_model": False}
                plan_e: ResearchPlan | None = ResearchPlan(original_question=question, sub_questions=QUICK_PLAN)
            else:
                question, config = FULL_QUESTION, {}
                repo_e = Path(__file__).resolve().parent.parent / "src" / "moot" / "teams" / "research"
                first = await one(repo_e, work, local, question, parallel=True, plan=None, config=config)
                plan_e = first["plan"] if first["plan"] and len(first["plan"].sub_questions) >= 2 else ResearchPlan(
                    original_question=question, sub_questions=[
                        SubQuestion(question="How does the planner split a question?", target_area="planner.py"),
                        SubQuestion(question="How do researchers gather evidence?", target_area="researcher.py"),
                        SubQuestion(question="How is the answer verified?", target_area="verifier.py")])
                out["embedded_planner_run"] = {k: v for k, v in first.items() if k != "plan"}
            # A discarded warm-up run loads the weights and fills the engine's prompt cache, so
            # every timed run starts from the same state; then the two orders alternate.
            warm = await one(repo_e, work, local, question, parallel=True, plan=plan_e, config=config)
            print(json.dumps({"embedded_warmup_s": warm["seconds"]}), file=sys.stderr)
            runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
            for _ in range(args.rounds):
                for parallel in (False, True):
                    r = await one(repo_e, work, local, question, parallel=parallel, plan=plan_e, config=config)
                    runs[parallel].append(r)
                    print(json.dumps({"embedded": {k: v for k, v in r.items() if k != "plan"}}), file=sys.stderr)
            par_e, seq_e = _medians(runs[True]), _medians(runs[False])
            out["embedded"] = {"question": question, "researchers": par_e["researchers"], "rounds": args.rounds,
                               "sub_questions": [q.question for q in plan_e.sub_questions] if plan_e else [],
                               "warmup_s": warm["seconds"],
                               "parallel_s": par_e["seconds"], "sequential_s": seq_e["seconds"],
                               "parallel_runs_s": [r["seconds"] for r in runs[True]],
                               "sequential_runs_s": [r["seconds"] for r in runs[False]],
                               "researchers_parallel_s": par_e["phase_seconds"].get("researchers"),
                               "researchers_sequential_s": seq_e["phase_seconds"].get("researchers"),
                               "researchers_ratio": ratio(seq_e, par_e, "researchers"),
                               "total_ratio": ratio(seq_e, par_e, "total"),
                               "calls": [par_e["calls"], seq_e["calls"]], "tokens": [par_e["tokens"], seq_e["tokens"]]}
            await local.aclose() if hasattr(local, "aclose") else None
    out["load_after"] = os.getloadavg()[0]
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), default=str))
