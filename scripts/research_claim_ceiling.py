"""What bounds the research team's claim recall, with no model: the pool of lines a run offers
against the question's relevant files.

For every question of the sets given, three shares of its ground-truth claims (the eval's own
patterns):

* ``pool``: made by the candidate lines a run builds when the model nominates the first names it
  is offered (``fit_research_ranking.simulated_resolved``, words shown as an answer shows them);
* ``window``: made within some ``--window`` consecutive lines (default 3) of one of the question's
  relevant files, read raw — code, comments and docstrings alike;
* ``either``: made by one or the other.

    python scripts/research_claim_ceiling.py --sets httpx,click --suite examples/blind-research-2026-12-06-i

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_research_ranking import _claims, simulated_resolved  # noqa: E402

from moot.codeindex import CodeIndex  # noqa: E402
from moot.eval.research import _any, load_set, load_suite  # noqa: E402
from moot.teams.research.codelines import candidate_lines  # noqa: E402


def window_claims(question: object, repo: Path, width: int) -> set[str]:
    """The claims some ``width`` consecutive lines of a relevant file make."""
    made: set[str] = set()
    for relevant in question.relevant_paths:  # type: ignore[attr-defined]
        path = next((p for p in (repo / relevant, repo.parent / relevant) if p.is_file()), None)
        if path is None:
            continue
        lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
        for claim in question.claims:  # type: ignore[attr-defined]
            if claim["text"] in made:
                continue
            if any(all(_any(group, " ".join(lines[i:i + width])) for group in claim["all"]) for i in range(len(lines))):
                made.add(claim["text"])
    return made


def main() -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="", help="bundled sets, e.g. httpx,click")
    parser.add_argument("--suite", action="append", default=[], help="a suite folder or file")
    parser.add_argument("--window", type=int, default=3)
    args = parser.parse_args()
    sets = [load_set(name=n) for n in filter(None, args.sets.split(","))]
    for suite in args.suite:
        sets += load_suite(Path(suite))
    totals = {"claims": 0, "pool": 0, "window": 0, "either": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for qset in sets:
            repo = Path(qset.repo())
            with CodeIndex.build(repo, db_path=Path(tmp) / f"{qset.package}.db") as index:
                for q in qset.questions:
                    pool = set(_claims(q, candidate_lines(index, q.question, simulated_resolved(index, q.question), limit=10_000)))
                    window = window_claims(q, repo, args.window)
                    totals["claims"] += len(q.claims)
                    totals["pool"] += len(pool)
                    totals["window"] += len(window)
                    totals["either"] += len(pool | window)
    n = max(1, totals["claims"])
    out = {**totals, **{f"{k}_share": round(totals[k] / n, 3) for k in ("pool", "window", "either")}}
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
