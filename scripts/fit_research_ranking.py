"""Fit and check the research team's line ranking offline: which quoted lines would hold the
ground-truth claims, with no model involved.

For every question of a question set, the pool of candidate lines is built the way a run builds
it when the 0.5B model takes the first names it is shown: the question's top search hits, the
first two names offered from them, and the best definition at the top hit, resolved from the
index (``simulated_resolved``). Each candidate has the structural features of
``moot.teams.research.ranking``; a line is *positive* when its quoted text alone makes one of
the question's claims (the eval's own patterns). Then:

* ``--fit``: a pairwise logistic regression (every claim-making line above every other line
  of its question), regularised toward the starting weights by an amount chosen by fitting
  on one fitting set and checking on the other (``cross``: the mean recall of the top 4, 8
  and 16 lines on the held-out set); printed as the weights to put in ``ranking.WEIGHTS``;
* always: for each set, the claim recall of the top K ranked lines (the union of their quoted
  text scored like an answer) for K = 4, 8, 16, with the weights in the code (or ``--weights``).

    python scripts/fit_research_ranking.py --fit --sets httpx,click            # fit, and the fit's own recall
    python scripts/fit_research_ranking.py --sets httpx,click --suite DIR      # check on other packages
    python scripts/fit_research_ranking.py --fit --fit-suite DIR --suite DIR2  # fit on more development data

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from moot.codeindex import CodeIndex
from moot.eval.research import ResearchAnswer, ResearchSet, load_set, score_answer
from moot.teams.research.models import SubQuestion
from moot.teams.research.codelines import candidate_lines
from moot.teams.research.quotes import states_more
from moot.teams.research.ranking import FEATURES, WEIGHTS
from moot.teams.research.researcher import offered_symbols, resolution_order, search_hits, seed_findings
from moot.teams.research.resolve import best_at, resolve, written_definitions

TOP = (4, 8, 16)
REPORT = (*TOP, 10_000)


def simulated_resolved(index: CodeIndex, question: str) -> list[Any]:
    """What a run resolves when the model nominates the first names it is offered: the code the
    question writes first, as a researcher resolves it."""
    written = written_definitions(index, question)
    seeded = seed_findings(index, SubQuestion(question=question), written=written)
    offered = offered_symbols(index, question, written, seeded)
    hits = search_hits(seeded)
    located = [n for f in hits[:1] if f.line_range if (n := best_at(index, question, f.file_path, *f.line_range))]
    return resolve(index, resolution_order(written, offered[:2], located))


def pools(qset: ResearchSet, work: Path) -> list[dict[str, Any]]:
    """Per question: its candidate lines (all of them, ranked by the code's weights) and labels."""
    repo = qset.repo()
    out = []
    with CodeIndex.build(repo, db_path=work / f"{qset.package}.db") as index:
        for q in qset.questions:
            resolved = simulated_resolved(index, q.question)
            lines = candidate_lines(index, q.question, resolved, limit=10_000)
            labels = [1 if _claims(q, [c]) else 0 for c in lines]
            out.append({"set": qset.package, "question": q, "repo": repo, "lines": lines, "labels": labels})
    return out


def _shown_words(line: Any) -> str:
    """A line's words as an answer shows them: a condition's always (a how-question's section,
    ``conditions.statement``), any other decision's as ``quotes.states_more`` shows them."""
    return line.words if line.is_condition() else states_more(line)


def _claims(question: Any, lines: list[Any]) -> list[str]:
    text = "\n".join(f"{c.location()} {c.quoted()} {_shown_words(c)}" for c in lines)
    return score_answer(question, ResearchAnswer(text=text, citations=["-"]), Path("/nonexistent")).claims_made


def recall_at(pool: list[dict[str, Any]], weights: dict[str, float] | None, k: int) -> float:
    """Mean claim recall of the top ``k`` lines per question (ranked by ``weights``)."""
    from moot.teams.research.ranking import rank

    total = 0.0
    for item in pool:
        ranked = rank(item["lines"], weights) if weights is not None else item["lines"]
        made = _claims(item["question"], ranked[:k])
        total += len(made) / max(1, len(item["question"].claims))
    return round(total / max(1, len(pool)), 3)


def fit(pool: list[dict[str, Any]], prior: dict[str, float], l2: float, steps: int = 3000) -> dict[str, float]:
    """Pairwise logistic regression (RankNet): within each question, every line that makes a
    claim should score above every line that does not. The loss is the mean over those pairs
    of log(1 + exp(-(s_pos - s_neg))); ``l2`` pulls the weights toward ``prior`` (the rules
    the team had, translated to these features), so a feature the data says little about keeps
    its prior weight. ``terms`` stays 1: the unit of the scale."""
    import numpy as np

    diffs = []
    for item in pool:
        rows = np.array([[c.features.get(f, 0.0) for f in FEATURES] for c in item["lines"]], dtype=float)
        labels = np.array(item["labels"], dtype=bool)
        if labels.any() and (~labels).any():
            pos, neg = rows[labels], rows[~labels]
            # each question weighs the same, however many pairs it has
            d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, len(FEATURES))
            diffs.append((d, 1.0 / len(d)))
    if not diffs:
        return dict(prior)
    x = np.concatenate([d for d, _ in diffs])
    weight = np.concatenate([np.full(len(d), w) for d, w in diffs]) / len(diffs)
    w0 = np.array([prior.get(f, 0.0) for f in FEATURES])
    w = w0.copy()
    fixed = FEATURES.index("terms")
    for _ in range(steps):
        margin = x @ w
        grad = -(weight * (1 / (1 + np.exp(margin)))) @ x + l2 * (w - w0)
        grad[fixed] = 0.0
        w -= 0.5 * grad
    return {f: round(float(v), 2) for f, v in zip(FEATURES, w)}


L2_GRID = (0.003, 0.01, 0.03, 0.1, 0.3)


def objective(pool: list[dict[str, Any]], weights: dict[str, float]) -> float:
    """Mean claim recall of the top 4, 8 and 16 lines (multi mode's share, single mode's, and
    the lines a picker is shown first)."""
    return sum(recall_at(pool, weights, k) for k in TOP) / len(TOP)


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="httpx,click", help="bundled sets (fitting data)")
    parser.add_argument("--suite", action="append", default=[], help="a suite folder or file: checked, never fitted")
    parser.add_argument("--fit-suite", action="append", default=[],
                        help="a suite folder or file of development data: fitted beside --sets")
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--weights", help="a JSON object of weights to check (and to start a fit from) instead of the code's")
    parser.add_argument("--neutral", action="store_true", help="start the fit from no structure at all (terms 1, the rest 0)")
    parser.add_argument("--l2", type=float, default=None, help="regularisation (default: chosen by cross-checking the fitting sets)")
    args = parser.parse_args()
    weights = json.loads(args.weights) if args.weights else dict(WEIGHTS)
    if args.neutral:
        weights = {name: (1.0 if name == "terms" else 0.0) for name in FEATURES}
    out: dict[str, Any] = {"sets": {}, "suites": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        from moot.eval.research import load_suite

        fitting = [item for name in filter(None, args.sets.split(",")) for item in pools(load_set(name=name), work)]
        for suite in args.fit_suite:
            for qset in load_suite(Path(suite)):
                fitting += pools(qset, work)
        if args.fit:
            names = list(dict.fromkeys(i["set"] for i in fitting))
            # The regularisation is chosen by fitting without one package and checking on it
            # (each in turn): the check packages of --suite are never looked at.
            out["cross"] = {}
            for l2 in L2_GRID:
                held_out = []
                for held in names if len(names) > 1 else []:
                    alone = fit([i for i in fitting if i["set"] != held], weights, l2)
                    held_out.append(objective([i for i in fitting if i["set"] == held], alone))
                out["cross"][str(l2)] = round(sum(held_out) / max(1, len(held_out)), 3)
            out["cross"]["prior"] = round(sum(objective([i for i in fitting if i["set"] == n], weights) for n in names) / len(names), 3)
            # The starting weights are a candidate too (infinite regularisation): a fit that
            # does worse on the held-out package than no fit at all is not taken.
            choice = max([*map(str, L2_GRID), "prior"], key=lambda v: out["cross"][v]) if args.l2 is None else str(args.l2)
            out["l2"] = choice
            out["fits"] = {str(l2): fit(fitting, weights, l2) for l2 in L2_GRID}
            weights = weights if choice == "prior" else fit(fitting, weights, float(choice))
            out["fitted"] = weights
            print(json.dumps({"fitted": weights, "cross": out["cross"], "l2": choice}), file=sys.stderr)
        out["weights"] = weights
        for name in dict.fromkeys(i["set"] for i in fitting):
            part = [item for item in fitting if item["set"] == name]
            out["sets"][name] = {f"top{k}" if k < 10_000 else "all": recall_at(part, weights, k) for k in REPORT}
            out["sets"][name]["positives"] = sum(sum(i["labels"]) for i in part)
            out["sets"][name]["lines"] = sum(len(i["lines"]) for i in part)
        for suite in args.suite:
            for qset in load_suite(Path(suite)):
                part = pools(qset, work)
                out["suites"][f"{qset.package}"] = {f"top{k}" if k < 10_000 else "all": recall_at(part, weights, k) for k in REPORT}
        print(json.dumps(out["sets"] | out["suites"]), file=sys.stderr)
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
