"""`moot eval graph --family N`: the graph team on reasoning-gym's family_relationships, the
relation named by a path in Python over the drawn family, beside one call with the item's text."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Optional

from moot.cli._output import stdout, write_json_file
from moot.cli._progress import progress_line


class FamilyTeam:
    """The graph team with the ``family`` vocabulary; :func:`moot.eval.family.kinship` answers."""

    name = "team"

    def __init__(self, model: Any, store: Any, iterations: int | None, models: dict[str, Any] | None = None) -> None:
        self.model, self.store, self.iterations, self.models = model, store, iterations, models or {}
        self.parent_run_id: str | None = None

    async def answer(self, case: Any) -> Any:
        from moot.eval.family import Family, FamilyAnswer, kinship
        from moot.teams.graph import EntityNode, GraphConfig, GraphTeam

        # the relation is Python's: the quantifier, skeptic and hypothesizer change no person or link.
        # The family vocabulary is asked plainly, one call of one generated token per question (a
        # person's sex, each relation both ways round for each pair), so the calls allowed are more
        # than quick's 20 while the tokens stay about those of the listed choices.
        config = GraphConfig.preset("quick", vocabulary="family", iterations=self.iterations or 2, quantify=False,
                                    challenge=False, hypotheses=False, max_calls=80)
        with tempfile.TemporaryDirectory(prefix="moot-family-") as tmp:
            story = Path(tmp) / "story.md"
            story.write_text(case.story + "\n", encoding="utf-8")
            team = GraphTeam([story], model=self.model, store=self.store, config=config, **self.models)
            try:
                result = await team.ask(case.question, parent_run_id=self.parent_run_id)
            finally:
                team.close()
        s = result.scaffold
        family = Family()
        for node in s.nodes.values():
            if isinstance(node, EntityNode):
                family.add_person(node.label, node.entity_type)
        for e in s.edges.values():
            if e.provisional:
                continue
            if e.type == "married_to":
                family.marry(s.label_of(e.source), s.label_of(e.target))
            elif e.type == "parent_of":
                family.parent(s.label_of(e.source), s.label_of(e.target))
        word = None
        if s.subject and s.object:
            word = kinship(family, s.label_of(s.subject), s.label_of(s.object))
        note = f"{s.label_of(s.subject) if s.subject else '?'} → {s.label_of(s.object) if s.object else '?'}; " \
               f"{len(family.sex)} people, {len(family.spouse) // 2} couples, {sum(len(p) for p in family.parents.values())} parent links"
        return FamilyAnswer(word, usage=result.usage, seconds=result.seconds, note=note, run_id=result.run_id)


def run_family(n: int, seed: int, chosen: list[str], resolved: Any, store: Any, iterations: int | None,
               team_models: dict[str, Any], json_out: Optional[Path], as_json: bool) -> None:
    from moot.cli._runs import parent_run
    from moot.eval.family import OneCallFamily, family_cases, is_correct, summarise_family

    cases = family_cases(n, seed)
    runners: dict[str, Any] = {"team": FamilyTeam(resolved, store, iterations, team_models), "one-call": OneCallFamily(resolved)}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    with parent_run(f"eval graph family ({n} questions)") as runners["team"].parent_run_id:
        for case in cases:
            for name in chosen:
                got = asyncio.run(runners[name].answer(case))
                row = {"index": case.index, "question": case.question, "gold": case.answer, "answer": got.answer,
                       "correct": is_correct(case, got.answer), "calls": got.usage.requests, "tokens": got.usage.total_tokens,
                       "seconds": round(got.seconds, 2), "note": got.note, "run_id": got.run_id}
                rows[name].append(row)
                if json_out is not None:  # kept after every question, so a stopped eval keeps what it measured
                    write_json_file(json_out, {"model": getattr(resolved, "name", str(resolved)), "seed": seed,
                                               "partial": True, "questions": rows})
                progress_line("eval graph", f"{name:>8} #{case.index}: {got.answer or '—'} (gold {case.answer}) "
                              f"{'✓' if row['correct'] else '✗'} · {row['calls']} calls")
    summary = {name: summarise_family(r) for name, r in rows.items()}
    report = {"model": getattr(resolved, "name", str(resolved)), "seed": seed, "summary": summary, "questions": rows}
    from moot.cli.eval_graph_cmd import save_report

    if save_report(report, json_out, as_json):
        return
    for name, sm in summary.items():
        stdout.print(f"{name}: {sm['correct']}/{sm['questions']} correct ({sm['accuracy']}), {sm['calls']} calls, "
                     f"{sm['tokens']} tokens, {sm['seconds']} s")
    if json_out is not None:
        stdout.print(f"results: {json_out}")
