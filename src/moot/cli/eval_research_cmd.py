"""`moot eval research`: score the code research team on questions about real packages
installed from PyPI (httpx, click), or on a suite of question sets each pinned to a package
version on PyPI or npm (``--suite``: installed into moot's cache by the eval's set-up).

The eval layer knows nothing of teams; this command wires the research team in through the
``ResearchAgent`` adapter protocol of :mod:`moot.eval.research`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._options import MODEL_HELP, budget_option, model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._output import print_json, stderr, stdout, write_json_file
from moot.cli._progress import announce, progress_line
from moot.errors import MootError

_MODES = {"single": ["single"], "multi": ["multi"], "both": ["single", "multi"], "auto": ["auto"],
          "baseline": ["baseline"], "all": ["baseline", "single", "multi"]}


def register(eval_app: typer.Typer) -> None:
    eval_app.command("research")(research_eval)


class TeamAgent:
    """The research team as a :class:`moot.eval.research.ResearchAgent` (one index, one model)."""

    def __init__(self, model: Any, store: Any, *, options: dict[str, Any] | None = None) -> None:
        self.model = model
        self.store = store
        self.options = options or {}
        self.parent_run_id: str | None = None
        """The eval's own run, which holds every answer's run."""
        self.teams: dict[Path, Any] = {}

    async def answer(self, question: str, repo: Path, *, mode: str) -> Any:
        from moot.eval.research import ResearchAnswer
        from moot.teams.research import ResearchTeam

        team = self.teams.get(repo)
        if team is None:
            team = self.teams[repo] = ResearchTeam(repo, model=self.model, store=self.store, **self.options)
            await asyncio.to_thread(team.index)
        result = await team.ask(question, mode=mode, parent_run_id=self.parent_run_id)  # type: ignore[arg-type]
        return ResearchAnswer(text=result.answer, citations=result.citations(), usage=result.usage,
                              seconds=result.seconds, run_id=result.run_id, mode=result.mode,
                              verified=result.verified_statements(),
                              conditions=result.stated_conditions() if result.mode != "baseline" else None)

    def close(self) -> None:
        for team in self.teams.values():
            team.close()


def research_eval(
    mode: str = typer.Option(
        "both", "--mode", help="single, multi, both, auto, baseline (one call with the map and search hits) or all (baseline, single, multi)."
    ),
    question_set: str = typer.Option("httpx", "--set", help="Which installed package to ask about: httpx or click."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="A folder of question sets (one .json per package, pinned to a "
                                         "PyPI or npm version, installed by the eval) or one such file; replaces --set."),
    no_install: bool = typer.Option(False, "--no-install", help="With --suite: fail instead of installing a missing package."),
    repo: Optional[Path] = typer.Option(None, "--repo", help="With --suite naming one .json file: read the package from this "
                                        "folder (e.g. node_modules/qs) instead of installing it."),
    model: Optional[list[str]] = model_option(MODEL_HELP),
    questions: Optional[str] = typer.Option(None, "--questions", help="Only these question ids, e.g. redirects,auth (with --suite: ids of any of its sets)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Also grade with an LLM judge on this model string."),
    judge_votes: int = typer.Option(3, "--judge-votes", help="Judge votes per answer (median score)."),
    budget: str = budget_option(),
    line_choice: Optional[str] = typer.Option(None, "--line-choice", help="Who chooses the quoted lines and conditions: model "
                                              "(the picker) or ranking (the top of moot's own ranking, no call); default: the "
                                              "ranking on a model of this machine, else the model."),
    json_out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the full results JSON here (saved after every answer)."),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object on stdout: {"summary", "results"}.'),
) -> None:
    """Ask the research team questions about an installed package (httpx or click) and score
    coverage, claims, citations and anti-claims, beside the one-call baseline with --mode all."""
    announce("eval research")
    from moot.eval.research import load_set, load_suite, render_table, run_research_eval, run_research_suite
    from moot.models.registry import infer_model
    from moot.runtime import RunStore

    if mode not in _MODES:
        raise MootError(f"unknown mode {mode!r}", fix="use --mode single, multi, both, auto, baseline or all")
    from moot.cli.research_cmd import research_options
    from moot.teams.research import ResearchTeam

    if line_choice not in (None, "model", "ranking"):
        raise MootError(f"unknown line choice {line_choice!r}", fix="use --line-choice model or --line-choice ranking")
    choice = parse_models(model)
    options = research_options(parse_budget(budget), line_choice=line_choice)
    models_kwargs = team_model_kwargs(ResearchTeam, choice, command="eval research")
    options.update({k: v for k, v in models_kwargs.items() if k != "model"})
    sets = load_suite(suite) if suite is not None else None
    if repo is not None:
        if sets is None or len(sets) != 1:
            raise MootError("--repo names the folder of one package", fix="pass --suite with one question-set .json file beside --repo")
        sets = [dataclasses.replace(sets[0], local=str(repo))]
    if sets is not None:
        if questions:  # ids of any of the suite's sets: a package none of them is in is not installed
            wanted = [q.strip() for q in questions.split(",") if q.strip()]
            known = {q.id for one in sets for q in one.questions}
            if unknown := set(wanted) - known:
                raise MootError(f"unknown question id(s): {', '.join(sorted(unknown))}",
                                fix="use ids from the suite's .json files: " + ", ".join(sorted(known)))
            sets = [dataclasses.replace(one, questions=[q for q in one.questions if q.id in wanted]) for one in sets]
            sets = [one for one in sets if one.questions]
        for one in sets:  # the set-up: every package at its pinned version, before any model call
            progress_line("eval research", f"{one.package} {one.version} ({one.registry or 'installed'}): "
                                           f"{one.repo(install=not no_install)}")
    qset = load_set(name=question_set)
    if sets is None and (installed := qset.installed_version()) != qset.version:
        stderr.print(f"[yellow]note:[/] the questions were written for {qset.package} {qset.version}; "
                     f"{installed} is installed, so some claims may no longer hold")
    only = [q.strip() for q in questions.split(",")] if questions and sets is None else None
    if only and (unknown := set(only) - {q.id for q in qset.questions}):
        raise MootError(f"unknown question id(s): {', '.join(sorted(unknown))}",
                        fix="use ids from: " + ", ".join(q.id for q in qset.questions))
    judge_obj = None
    if judge:
        from moot.eval.judge import LLMJudge

        judge_obj = LLMJudge(infer_model(judge), votes=judge_votes)
    agent = TeamAgent(infer_model(choice.default), RunStore(), options=options)

    def on_answer(record: dict[str, Any], so_far: dict[str, Any]) -> None:
        progress_line("eval research", f"{record['mode']:>8} {record['package']:<10} {record['question_id']:<12} overall "
                                       f"{record['overall']:.2f} ({record['seconds']}s, {record['usage']['requests']} calls)")
        if json_out is not None:  # saved after every answer: an interrupted run keeps what it graded
            write_json_file(json_out, so_far)

    from moot.cli._runs import parent_run

    try:
        with parent_run(f"eval research ({suite.name if suite else question_set}, {mode})") as agent.parent_run_id:
            if sets is not None:
                result = asyncio.run(run_research_suite(agent, modes=_MODES[mode], sets=sets, judge=judge_obj,
                                                        on_answer=on_answer, name=str(suite)))
            else:
                result = asyncio.run(run_research_eval(agent, modes=_MODES[mode], questions=qset, only=only,
                                                       judge=judge_obj, on_answer=on_answer))
    finally:
        agent.close()
    if json_out is not None:
        write_json_file(json_out, result)
    if as_json:
        print_json({"summary": result["summary"], "results": str(json_out) if json_out else None})
        return
    stdout.print(render_table(result))
    if json_out is not None:
        stdout.print(f"results: {json_out}")
