"""Learning-team benchmark: what learning (and, later, asking) costs on the embedded model.

Section 1, **learning** (here): learn the bundled articles (``examples/learning/articles``;
``--quick``: the first two) into a fresh knowledge base in a temporary directory, one article
at a time, and report per article: seconds, model calls, tokens, chunks, facts stored and
superseded; then the means, the knowledge base's totals and the peak RSS.

Section 2, **questions**: ask the bundled questions (``examples/learning/questions.json``;
``--quick``: the first three) against the knowledge base section 1 built (or the one given
with ``--kb PATH``, which skips learning), once in ``single`` and once in ``multi`` mode
through :class:`LearningTeam` (``store=False``), and report per mode: seconds per question
(median and mean), model calls and tokens per question, and a sanity count of answers that
contain every term of the question's ``must_include`` (case-insensitive substring match). That
count is NOT the evaluation harness (no rubric, no grader): it only shows that answers are
not empty or off-topic.

There is no peer run: no other learning framework is installed in moot's offline environment.
Run::

    python bench/learning.py --quick       # 2 articles, 3 questions x 2 modes, a few minutes on 2 cores
    python bench/learning.py               # all articles and questions, for docs/benchmarks.md
    python bench/learning.py --kb PATH     # ask only, against an existing knowledge base

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARTICLES = ROOT / "examples" / "learning" / "articles"
QUESTIONS = ROOT / "examples" / "learning" / "questions.json"


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports kilobytes)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def bench_learning(kb: Any, paths: list[Path], model: Any) -> dict[str, Any]:
    """Section 1: learn each article and measure it."""
    from moot.teams.learning import learn_file

    rows = []
    for path in paths:
        report = await learn_file(kb, path, model=model, record_run=False)
        rows.append(
            {
                "article": path.name,
                "seconds": round(report.seconds, 2),
                "model_calls": report.model_calls,
                "input_tokens": report.usage.input_tokens,
                "output_tokens": report.usage.output_tokens,
                "chunks": report.chunks,
                "facts_stored": report.facts_stored,
                "superseded": report.superseded,
                "dropped": report.dropped,
            }
        )
        print(f"  {path.name}: {report.seconds:.1f}s, {report.model_calls} calls, {report.facts_stored} facts", file=sys.stderr)
    summary = kb.summary()
    return {
        "articles": rows,
        "seconds_per_article": round(statistics.mean(r["seconds"] for r in rows), 2),
        "model_calls_per_article": round(statistics.mean(r["model_calls"] for r in rows), 2),
        "facts_per_article": round(statistics.mean(r["facts_stored"] for r in rows), 2),
        "output_tokens_per_second": round(
            sum(r["output_tokens"] for r in rows) / max(1e-9, sum(r["seconds"] for r in rows)), 1
        ),
        "kb_facts": summary.facts,
        "kb_superseded": summary.superseded_facts,
        "kb_conflicts": len(kb.conflicts()),
    }


def contains_all(answer: str, terms: list[str]) -> bool:
    """The sanity check: every ``must_include`` term appears in the answer (case-insensitive)."""
    text = answer.lower()
    return all(term.lower() in text for term in terms)


async def bench_questions(kb: Any, args: argparse.Namespace, model: Any) -> dict[str, Any] | None:
    """Section 2: ask the bundled questions in single and multi mode and measure each."""
    from moot.teams.learning import LearningTeam

    items = json.loads(QUESTIONS.read_text())["questions"][: 3 if args.quick else None]
    team = LearningTeam(kb, model=model, store=False, budget=args.budget)
    result: dict[str, Any] = {"questions": len(items), "budget": args.budget, "check": "answer contains every must_include term (not the evaluation harness)"}
    for mode in ("single", "multi"):
        rows = []
        for item in items:
            t0 = time.perf_counter()
            answer = await team.ask(item["question"], mode=mode)
            wall = time.perf_counter() - t0
            ok = contains_all(answer.answer, item.get("must_include", []))
            rows.append(
                {
                    "kind": item.get("kind"),
                    "seconds": round(wall, 2),
                    "model_calls": answer.usage.requests,
                    "input_tokens": answer.usage.input_tokens,
                    "output_tokens": answer.usage.output_tokens,
                    "sub_agents": len(answer.sub_agents),
                    "mode_used": answer.mode,
                    "knows": answer.knows,
                    "contains_terms": ok,
                    "answer": answer.answer[:160],
                }
            )
            print(f"  [{mode}] {wall:5.1f}s {answer.usage.requests:2d} calls ok={ok}  {item['question'][:60]}", file=sys.stderr)
        result[mode] = {
            "seconds_per_question_median": round(statistics.median(r["seconds"] for r in rows), 2),
            "seconds_per_question_mean": round(statistics.mean(r["seconds"] for r in rows), 2),
            "seconds_total": round(sum(r["seconds"] for r in rows), 2),
            "model_calls_per_question": round(statistics.mean(r["model_calls"] for r in rows), 2),
            "input_tokens_per_question": round(statistics.mean(r["input_tokens"] for r in rows), 1),
            "output_tokens_per_question": round(statistics.mean(r["output_tokens"] for r in rows), 1),
            "contains_terms": sum(r["contains_terms"] for r in rows),
            "per_question": rows,
        }
    s_med = result["single"]["seconds_per_question_median"]
    result["multi_over_single_seconds"] = round(result["multi"]["seconds_per_question_median"] / max(1e-9, s_med), 2)
    result["multi_over_single_calls"] = round(
        result["multi"]["model_calls_per_question"] / max(1e-9, result["single"]["model_calls_per_question"]), 2
    )
    return result


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from moot.memory import KnowledgeBase
    from moot.models.registry import infer_model

    paths = sorted(ARTICLES.glob("*.md"))[: 2 if args.quick else None]
    model = infer_model(args.model)
    started = time.perf_counter()
    try:
        if args.kb:
            if not Path(args.kb).exists():
                raise SystemExit(f"no knowledge base at {args.kb}")
            with KnowledgeBase.open(Path(args.kb)) as kb:
                learning = None
                questions = await bench_questions(kb, args, model)
        else:
            with tempfile.TemporaryDirectory() as tmp, KnowledgeBase.open(Path(tmp) / "bench.sqlite3") as kb:
                learning = await bench_learning(kb, paths, model)
                questions = await bench_questions(kb, args, model)
    finally:
        await model.aclose()
    result: dict[str, Any] = {
        "bench": "learning",
        "quick": args.quick,
        "model": args.model or os.environ.get("MOOT_MODEL") or "local",
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.system()}",
        "python": platform.python_version(),
        "date": _dt.date.today().isoformat(),
        "learning": learning if learning is not None else f"skipped (--kb {args.kb})",
        "seconds_total": round(time.perf_counter() - started, 2),
        "peak_rss_mb": peak_rss_mb(),
    }
    if questions is not None:
        result["questions"] = questions
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="learn only the first two articles; ask three questions")
    parser.add_argument("--budget", default="standard", choices=["quick", "standard", "deep"],
                        help="LearningTeam budget for each question (standard: 10 calls, 30 s deadline)")
    parser.add_argument("--kb", default=None, help="ask against this existing knowledge base file instead of learning")
    parser.add_argument("--model", default=None, help="model string (default: MOOT_MODEL, else local)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args))))


if __name__ == "__main__":
    main()
