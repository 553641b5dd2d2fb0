"""`moot eval progressive` (run the L1–L12 suite) and `moot eval report RESULTS.json` (re-render).

A progress bar follows levels and answers; at the end a per-level table is printed and the
results JSON, the Markdown report and the chart are written (atomically) to disk.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._output import print_json, require_charts, stderr, stdout
from moot.errors import MootError

_MODES = {"single": ["single"], "multi": ["multi"], "context": ["context"], "both": ["single", "multi"],
          "all": ["single", "multi", "context"]}


def _modes(value: str) -> list[str]:
    """``both``, ``all`` or a comma list such as ``single,multi,context``."""
    if value in _MODES:
        return _MODES[value]
    parts = [p.strip() for p in value.split(",") if p.strip()]
    bad = [p for p in parts if p not in ("single", "multi", "context")]
    if bad or not parts:
        raise MootError(f"unknown mode {(bad or [value])[0]!r}",
                        fix="use --mode single, multi, context, both, all or a list like single,multi,context")
    return list(dict.fromkeys(parts))


def _split_models(values: list[str] | None) -> tuple[str | None, dict[str, str]]:
    """``--model M`` (the default) and ``--model ROLE=M`` (one role), parsed by the CLI's one
    parser and checked against the learning team's roles before any model loads."""
    from moot.cli._options import parse_models
    from moot.teams.learning.team import ROLES

    choice = parse_models(values)
    if unknown := sorted(set(choice.roles) - set(ROLES)):
        raise MootError(f"unknown role {unknown[0]!r} in --model", fix=f"name one of: {', '.join(ROLES)}")
    return choice.default, choice.roles


def register(eval_app: typer.Typer) -> None:
    eval_app.command("progressive")(progressive)
    eval_app.command("report")(report)


def progressive(
    levels: Optional[str] = typer.Option(None, "--levels", help="Levels to run, e.g. L1,L3 (default: all)."),
    mode: str = typer.Option("both", "--mode", help="single, multi, context (one call with all the level's articles), "
                             "both (single and multi), all, or a list like single,multi,context."),
    runs: int = typer.Option(1, "--runs", help="Runs per question; runs differ only by the sampling seed."),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the "
                                              "embedded model); ROLE=MODEL gives one role its own model, e.g. selector=local-1.5b (repeatable)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Also grade with an LLM judge on this model string."),
    judge_votes: int = typer.Option(3, "--judge-votes", help="Judge votes per answer (median score, majority pass)."),
    temperature: Optional[float] = typer.Option(
        None, "--temperature",
        help="Sampling temperature of the answers (default: the team's own, 0, for one run; 0.7 when --runs > 1, "
             "since runs at temperature 0 are identical).",
    ),
    seed: int = typer.Option(0, "--seed", help="Base seed: run N uses seed+N."),
    json_out: Optional[Path] = typer.Option(
        None, "--out", "-o",
        help="Write the full results JSON here (everything the report is rebuilt from; saved after every answer).",
    ),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON summary object on stdout (with "results", "report", "chart" paths).'),
    report_dir: Optional[Path] = typer.Option(None, "--report", help="Folder for progressive.md and progressive.png "
                                              "(default: next to --out, else ./moot-eval-<time>)."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="A folder of level files (default: the bundled suite)."),
    teaching_rounds: int = typer.Option(8, "--teaching-rounds", help="Teaching rounds in L7 (one fact a round at the start: 8 for its 8-question quiz)."),
    # deep by default: the standard 30 s deadline cuts multi-call answers on a slow machine, so
    # the score would measure the machine's load instead of the answers.
    budget: str = typer.Option("deep", "--budget", "-b", help="Budget per question: quick, standard (the team's default) or deep (20 calls, 60 s)."),
    resume: bool = typer.Option(False, "--resume", help="Go on with a stopped run: keep the complete levels of the --out "
                                "file (same options required) and run the rest."),
    extraction: str = typer.Option("select", "--extraction", help="How articles are learned: select (the model labels "
                                   "the source's sentences, default) or rewrite (the earlier extractor, to compare)."),
) -> None:
    """Run the progressive L1–L12 suite on the learning team: each level in a fresh knowledge base."""
    from moot.eval.levels import load_suite

    modes = _modes(mode)
    model_name, role_models = _split_models(model)
    if runs < 1:
        raise MootError(f"--runs must be at least 1 (got {runs})", fix="pass --runs 1 or more")
    if judge_votes < 1:
        raise MootError(f"--judge-votes must be at least 1 (got {judge_votes})", fix="pass --judge-votes 1 or more")
    from moot.cli._options import parse_budget

    if parse_budget(budget).limits():
        raise MootError(f"eval progressive takes a budget preset, not limits (got --budget {budget})",
                        fix="use --budget quick, standard or deep: the results record the preset so runs can be compared")
    budget = parse_budget(budget).preset
    if extraction not in ("select", "rewrite"):
        raise MootError(f"unknown --extraction {extraction!r}", fix="use --extraction select (default) or rewrite")
    require_charts("eval progressive")
    if temperature is not None and not 0 <= temperature <= 2:
        raise MootError(f"--temperature {temperature} is out of range", fix="pass a temperature between 0 and 2")
    wanted = [v for v in (levels or "").split(",") if v.strip()] or None
    suite_levels = load_suite(suite, wanted)  # unknown levels and bad files fail here, before any model loads
    if temperature is None and runs > 1:
        temperature = 0.7
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out_dir = report_dir or (json_out.parent if json_out is not None else Path(f"moot-eval-{stamp}"))
    results_path = json_out or out_dir / "progressive.json"
    earlier = None
    if resume:
        from moot.eval.results import EvalResults

        if json_out is None and report_dir is None:
            raise MootError("--resume needs the results file of the stopped run", fix="pass --out FILE as the stopped run did")
        if not results_path.is_file():
            raise MootError(f"nothing to resume: no results file at {results_path}",
                            fix="pass the --out of the stopped run, or drop --resume")  # fmt: skip
        earlier = EvalResults.load(results_path)
    from moot.cli._runs import parent_run

    with parent_run(f"eval progressive ({','.join(modes)}, {runs} run{'s' if runs != 1 else ''})") as parent_run_id:
        results = asyncio.run(_run(suite_levels, modes, runs, (model_name, role_models), judge, judge_votes, temperature,
                                   seed, results_path, teaching_rounds, budget, earlier, parent_run_id, extraction))  # fmt: skip
    from moot.eval.report import summary_json, write_report

    md, png = write_report(results, out_dir)
    if as_json:
        print_json({**summary_json(results), "results": str(results_path), "report": str(md), "chart": str(png)})
        return
    _print_table(results)
    stdout.print(f"results: {results_path}\nreport:  {md}\nchart:   {png}")


async def _run(levels: list[Any], modes: list[str], runs: int, models: tuple[str | None, dict[str, str]],
               judge: str | None, votes: int,
               temperature: float | None, seed: int, results_path: Path, teaching_rounds: int, budget: str,
               resume: Any = None, parent_run_id: str | None = None, extraction: str = "select") -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from moot.eval.judge import LLMJudge
    from moot.eval.runner import RunProgress, check_resumable, run_progressive
    from moot.models.registry import infer_model
    from moot.teams.learning.eval_adapter import learning_team_factory

    model, role_refs = models
    llm = infer_model(model)
    role_llms = {role: infer_model(ref) for role, ref in role_refs.items()}
    judge_llm = infer_model(judge) if judge else None
    # The extraction is part of the agent's name, so results (and a resumed run) say which learned the articles.
    agent_name = "learning team" if extraction == "select" else f"learning team ({extraction} extraction)"
    settings = {"agent_name": agent_name, "model_name": model or llm.name, "temperature": temperature,
                "judge_model": judge, "budget": budget,
                "role_models": {role: ref for role, ref in role_refs.items()} or None}
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=stderr, transient=True)  # fmt: skip
    # Without a terminal (a background run, CI) the bar cannot redraw: log one line per step instead.
    log = not stderr.is_terminal
    try:
        if resume is not None:  # before the progress bar and any model call: a refusal is one clean line
            check_resumable(resume, modes=modes, runs=runs, base_seed=seed, judge_votes=votes if judge_llm else None, **settings)
        with bar:
            levels_bar = bar.add_task("levels", total=len(levels))
            answers_bar = bar.add_task("answers", total=None)
            started: list[str] = []

            def on_progress(event: RunProgress) -> None:
                if log and event.kind in ("level", "kept", "learn", "question", "done"):
                    stderr.print(f"[{_dt.datetime.now():%H:%M:%S}] {event.kind} {event.level} {event.done}/{event.total} {event.text}")
                if event.kind == "level":
                    if started:
                        bar.advance(levels_bar)
                    started.append(event.level)
                    bar.update(levels_bar, description=f"levels · {event.level} {event.text}")
                    bar.update(answers_bar, description="learning", completed=0, total=event.total)
                elif event.kind == "kept":
                    bar.advance(levels_bar)
                elif event.kind == "learn":
                    bar.update(answers_bar, description=f"learning {event.done}/{event.total} {Path(event.text).name}")
                elif event.kind == "question":
                    bar.update(answers_bar, description=f"answers · {event.text}", completed=event.done, total=event.total)
                elif event.kind == "done":
                    bar.update(levels_bar, completed=len(levels))

            return await run_progressive(
                levels, learning_team_factory(llm, temperature=temperature, teaching_rounds=teaching_rounds, budget=budget,
                                              models=role_llms, parent_run_id=parent_run_id, extraction=extraction),
                modes=modes, runs=runs, base_seed=seed, judge=LLMJudge(judge_llm, votes=votes) if judge_llm else None,
                progress=on_progress, save_to=results_path, resume=resume, **settings,
            )  # fmt: skip
    finally:
        await llm.aclose()
        for role_llm in role_llms.values():
            await role_llm.aclose()
        if judge_llm is not None:
            await judge_llm.aclose()


def _print_table(results: Any) -> None:
    from rich.table import Table

    from moot.eval.report import stage_counts, summarise_level, unlearned

    table = Table(title=f"progressive · {results.model} · {results.runs} run(s) · {results.seconds / 60:.1f} min")
    for column in ("level", "single pass", "multi pass", "context pass", "Δ", "teaching", "calls/q", "s/q"):
        table.add_column(column)
    for level in results.levels:
        s = summarise_level(level)
        single, multi, teach = s.modes.get("single"), s.modes.get("multi"), s.modes.get("teaching")
        cost = multi or single
        table.add_row(
            f"{s.level} {s.name}",
            f"{single.pass_rate:.0%}" if single else "–",
            f"{multi.pass_rate:.0%}" if multi else "–",
            f"{s.modes['context'].pass_rate:.0%}" if "context" in s.modes else "–",
            f"{s.delta * 100:+.0f}" if s.delta is not None else "–",
            f"{teach.pass_rate:.0%}" if teach else (s.teaching or "–"),
            f"{cost.calls_per_question:.1f}" if cost else "–",
            f"{cost.seconds_per_question:.1f}" if cost else "–",
        )
    stdout.print(table)
    counts = stage_counts(results)["all"]
    if counts:
        stdout.print("failed answers by stage: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for line in unlearned(results):
        stdout.print(f"not learned (answered without it): {line}", markup=False)


def report(
    results_file: Path = typer.Argument(..., help="A results JSON written by `moot eval progressive`."),
    out: Optional[Path] = typer.Option(None, "--report", help="Folder for the Markdown and PNG (default: next to the JSON)."),
    old_out: Optional[str] = typer.Option(None, "--out", hidden=True),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Re-render the Markdown report and chart from a progressive results JSON."""
    from moot.eval.report import summary_json, write_report
    from moot.eval.results import EvalResults

    if old_out is not None:
        raise MootError("the report folder is --report (as in `moot eval progressive`)", fix=f"use --report {old_out}")
    require_charts("eval report")

    results = EvalResults.load(results_file)
    md, png = write_report(results, out or results_file.parent)
    if as_json:
        print_json({**summary_json(results), "report": str(md), "chart": str(png)})
        return
    _print_table(results)
    stdout.print(f"report: {md}\nchart:  {png}")
