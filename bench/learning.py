"""Learning-team benchmark: what learning (and, later, asking) costs on the embedded model.

Section 1, **learning** (here): learn the bundled articles (``examples/learning/articles``;
``--quick``: the first two) into a fresh knowledge base in a temporary directory, one article
at a time, and report per article: seconds, model calls, tokens, chunks, facts stored and
superseded; then the means, the knowledge base's totals and the peak RSS.

Section 2, **questions** (to be added by the question-answering engineer): ask the bundled
questions (``examples/learning/questions.json``) against the knowledge base section 1 built,
in single-agent and multi-agent mode, and report seconds and model calls per question. Fill in
:func:`bench_questions`; it receives the open knowledge base and the parsed arguments and
returns a dict that goes under ``"questions"`` in the result.

There is no peer run: no other learning framework is installed in moot's offline environment.
Run::

    python bench/learning.py --quick       # 2 articles, about a minute on 2 cores
    python bench/learning.py               # all articles, for docs/benchmarks.md

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


async def bench_questions(kb: Any, args: argparse.Namespace, model: Any) -> dict[str, Any] | None:
    """Section 2 (QUESTIONS — to be filled in by the question-answering engineer).

    Ask ``examples/learning/questions.json`` in single and multi mode against ``kb`` and return
    e.g. ``{"single": {...}, "multi": {...}}`` with seconds and model calls per question.
    Returning ``None`` leaves the section out of the result.
    """
    return None


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from moot.memory import KnowledgeBase
    from moot.models.registry import infer_model

    paths = sorted(ARTICLES.glob("*.md"))[: 2 if args.quick else None]
    model = infer_model(args.model)
    started = time.perf_counter()
    try:
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
        "learning": learning,
        "seconds_total": round(time.perf_counter() - started, 2),
        "peak_rss_mb": peak_rss_mb(),
    }
    if questions is not None:
        result["questions"] = questions
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="learn only the first two articles")
    parser.add_argument("--model", default=None, help="model string (default: MOOT_MODEL, else local)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args))))


if __name__ == "__main__":
    main()
