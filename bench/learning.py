"""Learning-team benchmark: what learning costs, extraction by selection beside the rewriting extractor.

Section 1, **extraction** (always): learn two sets of documents into fresh knowledge bases in a
temporary directory, once with each extractor, in the same run and on the same model:

- ``bundled``: the five articles of ``examples/learning/articles`` (``--quick``: the first two);
- ``generated``: 50 short dated documents from a seeded generator (``--quick``: 6), each stating
  a few quantities of named things, in sentences that also point back ("That figure…").

Files are learned side by side through the model's slots (``learn_files``, ``--parallel``). Per
extractor and set: wall seconds, model calls, generated (output) tokens, facts stored, generated
tokens per fact, facts per minute, and **usable facts**: of the facts the documents state
(generated set: the planted quantities; bundled set: the ``must_include`` terms of
``examples/learning/questions.json``), how many a question can find in the stored facts' text.
Ratios new/old close the section.

Section 2, **questions** (``--questions``): ask the bundled questions in single and multi mode
against the knowledge base the selection extractor built from the bundled articles, as before.

There is no peer run: no other learning framework is installed in moot's offline environment.
Run::

    python bench/learning.py --quick       # 2 articles and 6 documents, both extractors (a few minutes)
    python bench/learning.py               # 5 articles and 50 documents, both extractors
    python bench/learning.py --only select # the new extractor alone (e.g. for the README's timing)

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import os
import platform
import random
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

_PLACES = ["Ashby", "Brill", "Corran", "Dunmore", "Elsworth", "Fenwick", "Garrow", "Holt", "Ivel", "Jessop"]
_THINGS = [("Library", "books", "book loans"), ("Harbour", "berths", "berths"), ("Orchard", "trees", "apple trees"),
           ("Museum", "visitors", "visitors"), ("Choir", "singers", "singers"), ("Depot", "vans", "vans")]


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports kilobytes)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def generate_documents(folder: Path, count: int, seed: int = 7) -> list[tuple[Path, list[tuple[str, str]]]]:
    """``count`` dated Markdown notes; each returns with its planted (name, value) pairs."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        place = _PLACES[i % len(_PLACES)]
        thing, unit, _ = _THINGS[(i // len(_PLACES)) % len(_THINGS)]
        name = f"{place} {thing}"
        day = _dt.date(2025, 1, 1) + _dt.timedelta(days=rng.randint(0, 360))
        n1, n2, n3 = rng.randint(12, 900), rng.randint(2, 60), rng.randint(1950, 2020)
        staff = rng.randint(3, 40)
        body = (
            f"The {name} now has {n1} {unit}, the trust said on Monday. That figure is {n2} more than a year ago.\n\n"
            f"The {name} opened in {n3}. It employs {staff} people, most of them part time.\n\n"
            f"Visitors praised the new signs. A spokesperson for the {name} said the work would go on in the spring."
        )
        path = folder / f"note-{i:02d}.md"
        path.write_text(f"---\ntitle: {name} report\nsource: {place} Gazette\npublished: {day.isoformat()}\n---\n\n{body}\n",
                        encoding="utf-8")
        out.append((path, [(name, f"{n1} {unit}"), (name, f"{n2} more"), (name, str(n3)), (name, f"{staff} people")]))
    return out


def _fact_text(kb: Any) -> list[str]:
    return [" ".join([f.content, f.entity, f.value]).lower() for f in kb.facts(include_superseded=True)]


def usable_planted(kb: Any, planted: list[tuple[str, str]]) -> int:
    """Planted (name, value) pairs that one stored fact holds together (its text, entity or value)."""
    texts = _fact_text(kb)
    return sum(any(name.lower() in t and value.lower() in t for t in texts) for name, value in planted)


def usable_questions(kb: Any, items: list[dict[str, Any]]) -> int:
    """Bundled questions whose every ``must_include`` term is in some stored fact's text."""
    texts = _fact_text(kb)
    return sum(all(any(term.lower() in t for t in texts) for term in item.get("must_include", [])) for item in items)


async def bench_extraction(paths: list[Path], extraction: str, model: Any, parallel: int, tmp: Path,
                           usable: Any) -> dict[str, Any]:
    from moot.memory import KnowledgeBase
    from moot.teams.learning import learn_files

    kb_path = tmp / f"{extraction}-{len(paths)}-{time.time_ns()}.sqlite3"
    with KnowledgeBase.open(kb_path) as kb:
        started = time.perf_counter()
        outcomes = await learn_files(kb, paths, model=model, parallel=parallel, extraction=extraction, record_run=False)
        wall = time.perf_counter() - started
        reports = [o.report for o in outcomes if o.report is not None]
        failed = [f"{o.path.name}: {o.error.one_line()}" for o in outcomes if o.error is not None]
        output_tokens = sum(r.usage.output_tokens for r in reports)
        facts = sum(r.facts_stored for r in reports)
        row = {
            "extraction": extraction,
            "files": len(paths),
            "failed": failed,
            "wall_seconds": round(wall, 1),
            "model_calls": sum(r.model_calls for r in reports),
            "input_tokens": sum(r.usage.input_tokens for r in reports),
            "output_tokens": output_tokens,
            "facts_stored": facts,
            "output_tokens_per_fact": round(output_tokens / max(1, facts), 1),
            "facts_per_minute": round(facts / max(1e-9, wall) * 60, 1),
            "usable": usable(kb),
        }
    print(f"  {extraction:7s} {len(paths):2d} files: {row['wall_seconds']:7.1f}s  {row['model_calls']:3d} calls  "
          f"{output_tokens:6d} out tokens  {facts:4d} facts  usable {row['usable']}", file=sys.stderr)
    return row


async def bench_questions(kb: Any, args: argparse.Namespace, model: Any) -> dict[str, Any]:
    """Section 2: ask the bundled questions in single and multi mode and measure each."""
    from moot.teams.learning import LearningTeam

    items = json.loads(QUESTIONS.read_text())["questions"][: 3 if args.quick else None]
    team = LearningTeam(kb, model=model, store=False, budget=args.budget)
    result: dict[str, Any] = {"questions": len(items), "budget": args.budget,
                              "check": "answer contains every must_include term (not the evaluation harness)"}
    for mode in ("single", "multi"):
        rows = []
        for item in items:
            t0 = time.perf_counter()
            answer = await team.ask(item["question"], mode=mode)
            wall = time.perf_counter() - t0
            ok = all(term.lower() in answer.answer.lower() for term in item.get("must_include", []))
            rows.append({"seconds": round(wall, 2), "model_calls": answer.usage.requests, "contains_terms": ok})
            print(f"  [{mode}] {wall:5.1f}s {answer.usage.requests:2d} calls ok={ok}  {item['question'][:60]}", file=sys.stderr)
        result[mode] = {
            "seconds_per_question_median": round(statistics.median(r["seconds"] for r in rows), 2),
            "model_calls_per_question": round(statistics.mean(r["model_calls"] for r in rows), 2),
            "contains_terms": sum(r["contains_terms"] for r in rows),
        }
    return result


def _ratio(new: float, old: float) -> float | None:
    return round(new / old, 2) if old else None


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from moot.memory import KnowledgeBase
    from moot.models.registry import infer_model
    from moot.teams.learning import learn_files

    articles = sorted(ARTICLES.glob("*.md"))[: 2 if args.quick else None]
    items = json.loads(QUESTIONS.read_text())["questions"]
    model = infer_model(args.model)
    extractions = [args.only] if args.only else ["select", "rewrite"]
    started = time.perf_counter()
    sets: dict[str, Any] = {}
    questions = None
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            generated = generate_documents(tmp, 6 if args.quick else args.documents)
            planted = [pair for _, pairs in generated for pair in pairs]
            plan = {
                "bundled": (articles, lambda kb: f"{usable_questions(kb, items)}/{len(items)} questions"),
                "generated": ([p for p, _ in generated], lambda kb: f"{usable_planted(kb, planted)}/{len(planted)} planted facts"),
            }
            for name, (paths, usable) in plan.items():
                print(f"{name}:", file=sys.stderr)
                rows = {e: await bench_extraction(paths, e, model, args.parallel, tmp, usable) for e in extractions}
                if "select" in rows and "rewrite" in rows:
                    new, old = rows["select"], rows["rewrite"]
                    rows["select_over_rewrite"] = {
                        "wall_seconds": _ratio(new["wall_seconds"], old["wall_seconds"]),
                        "output_tokens": _ratio(new["output_tokens"], old["output_tokens"]),
                        "output_tokens_per_fact": _ratio(new["output_tokens_per_fact"], old["output_tokens_per_fact"]),
                        "facts_per_minute": _ratio(new["facts_per_minute"], old["facts_per_minute"]),
                    }
                sets[name] = rows
            if args.questions:
                with KnowledgeBase.open(tmp / "questions.sqlite3") as kb:
                    await learn_files(kb, articles, model=model, parallel=args.parallel, record_run=False)
                    questions = await bench_questions(kb, args, model)
    finally:
        await model.aclose()
    result: dict[str, Any] = {
        "bench": "learning",
        "quick": args.quick,
        "model": args.model or os.environ.get("MOOT_MODEL") or "local",
        "parallel": args.parallel,
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.system()}",
        "python": platform.python_version(),
        "date": _dt.date.today().isoformat(),
        "extraction": sets,
        "seconds_total": round(time.perf_counter() - started, 2),
        "peak_rss_mb": peak_rss_mb(),
    }
    if questions is not None:
        result["questions"] = questions
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 articles and 6 generated documents")
    parser.add_argument("--documents", type=int, default=50, help="generated documents in the full run (default 50)")
    parser.add_argument("--only", choices=["select", "rewrite"], help="run one extractor only")
    parser.add_argument("--parallel", type=int, default=4, help="model requests and files at once (default 4: the engine's slots)")
    parser.add_argument("--questions", action="store_true", help="also ask the bundled questions (section 2)")
    parser.add_argument("--budget", default="standard", choices=["quick", "standard", "deep"],
                        help="LearningTeam budget for each question of section 2")
    parser.add_argument("--model", default=None, help="model string (default: MOOT_MODEL, else local)")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args))))


if __name__ == "__main__":
    main()
