"""`moot learn PATH… --kb KB`: learn text files into a knowledge base, with a progress bar.

Every file is checked before the model loads, so a typo or a binary file fails in a second,
not after minutes of learning the files before it. Each file is learned all or nothing, and
its result is printed as soon as it finishes. Without a terminal (a pipe, CI) the progress bar
cannot redraw, so plain timestamped lines on stderr say which file, phase and chunk it is on and
how many facts it has found so far.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

import typer
from rich.markup import escape

from moot.cli._options import model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._output import print_json, stderr, stdout, usage_dict, usage_line
from moot.errors import UsageError
from moot.models.base import Usage


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)


def learn_command(
    paths: list[Path] = typer.Argument(..., help="Text or Markdown files (front matter `published: YYYY-MM-DD` dates them)."),
    kb: str = typer.Option(..., "--kb", help="Knowledge base: a name (kept in the moot home) or a file path."),
    model: list[str] | None = model_option("Model string; default MOOT_MODEL, else the embedded model."),
    budget: str | None = typer.Option(
        None, "--budget", "-b",
        help="Limits per file (default: none; learning makes one call per chunk): calls=N, tokens=N, usd=X, seconds=X."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with per-file reports and usage."),
) -> None:
    """Learn facts from files into a knowledge base (dated facts; later values supersede earlier ones)."""
    from moot.memory import KnowledgeBase
    from moot.memory.store import resolve_path
    from moot.teams.learning.learning import learn, read_document

    file_budget = None
    if budget is not None:
        chosen = parse_budget(budget)
        if not chosen.limits() or any(p.strip() in ("quick", "standard", "deep") for p in budget.split(",")):
            raise UsageError("learning has no preset sizes (it makes one model call per chunk)",
                             fix="give limits per file: --budget calls=N,seconds=X")
        from moot.runtime import Budget

        file_budget = Budget(**chosen.limits())
    model_kwargs = team_model_kwargs(learn, parse_models(model), command="learn")
    documents = [read_document(p) for p in paths]  # refuse bad files before any model work
    started = time.perf_counter()
    kb_path = resolve_path(kb)
    created = not kb_path.exists()
    try:
        with KnowledgeBase.open(kb_path) as knowledge_base:
            reports = asyncio.run(_learn_all(knowledge_base, documents, model_kwargs, budget=file_budget,
                                             show_progress=not as_json, on_report=None if as_json else _print_report))
            summary = knowledge_base.summary()
    except BaseException:
        # A knowledge base this command created and then learned nothing into (the model was
        # unreachable, Ctrl-C before the first file) is removed: an empty file left behind
        # looks like a knowledge base that learned, and found, nothing.
        if created:
            _remove_if_empty(kb_path)
        raise
    total = Usage()
    for report in reports:
        total = total + report.usage
    seconds = time.perf_counter() - started
    if as_json:
        files = []
        for report in reports:
            data = report.to_dict()
            data.pop("facts")
            files.append(data)
        print_json(
            {
                "kb": summary.path,
                "files": files,
                "facts_stored": sum(r.facts_stored for r in reports),
                "kb_facts": summary.facts,
                "kb_current_facts": summary.current_facts,
                "usage": usage_dict(total),
                "seconds": round(seconds, 3),
            }
        )
        return
    stdout.print(
        f"knowledge base {summary.path}: {summary.current_facts} current facts, "
        f"{summary.superseded_facts} superseded, {len(summary.sources)} sources"
    )
    stdout.print(f"[dim]{usage_line(total, seconds)}[/]")


def _print_report(report: Any) -> None:
    """One file's result, printed as soon as the file is learned."""
    if report.unchanged:
        stdout.print(f"[bold]{escape(report.source)}[/]: already learned, unchanged (no model calls)")
        return
    stdout.print(
        f"[bold]{escape(report.source)}[/] ({report.published or 'undated'}): {report.facts_stored} new facts, "
        f"{report.duplicates} already known, {report.superseded} superseded, {report.chunks} chunk(s)"
    )
    if report.summary:
        stdout.print(f"  [dim]{escape(report.summary)}[/]")  # the model's words: text, not markup


def _log(text: str) -> None:
    """A plain progress line on stderr, for a pipe or CI where no bar can redraw."""
    sys.stderr.write(f"[{_dt.datetime.now():%H:%M:%S}] {text}\n")
    sys.stderr.flush()


def _remove_if_empty(path: Path) -> None:
    from moot.memory import KnowledgeBase

    try:
        with KnowledgeBase.open(path) as knowledge_base:
            summary = knowledge_base.summary()
        if summary.facts or summary.episodes or summary.sources:
            return
    except Exception:
        return  # whatever it is now, it is not ours to delete
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)


async def _learn_all(kb: Any, documents: list[Any], model_kwargs: dict[str, Any], *, budget: Any = None,
                     show_progress: bool, on_report: Callable[[Any], None] | None = None,
                     log: bool | None = None) -> list[Any]:
    """Learn each document in turn; ``on_report`` gets each file's report as it finishes.

    With ``log`` (default: stderr is not a terminal) plain lines say which file and phase it is
    on, with the facts found so far, instead of a bar that cannot redraw.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from moot.models.registry import infer_model
    from moot.cli._runs import parent_run
    from moot.teams.learning.learning import LearnProgress, learn

    if log is None:
        log = not stderr.is_terminal
    llm = infer_model(model_kwargs.get("model"))
    extra = {k: v for k, v in model_kwargs.items() if k != "model"}
    reports = []
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not show_progress or log,
        # stdout stays stdout: with a pipe, per-file results must not be routed to the bar's stderr
        redirect_stdout=sys.stdout.isatty(),
    )
    total = len(documents)
    # Several files: one parent run holds each file's run, so `moot runs` shows the command once.
    held = parent_run(f"learn {total} files into {Path(kb.path).name}") if total > 1 else nullcontext(None)
    try:
        with held as parent_run_id, progress:
            files_bar = progress.add_task("files", total=total)
            chunks_bar = progress.add_task("chunks", total=None)
            for number, document in enumerate(documents, 1):
                name = document.path.name
                progress.update(chunks_bar, description=f"learning {name}", completed=0, total=None)
                if log:
                    _log(f"learning {name} ({number}/{total})")
                last_logged: list[tuple[str, int]] = []

                def on_progress(event: LearnProgress, bar: Any = chunks_bar, name: str = name, number: int = number) -> None:
                    progress.update(bar, completed=event.chunks_done, total=event.chunks_total,
                                    description=f"learning {name} · {event.phase} · {event.facts_found} facts")
                    if log and (event.phase, event.chunks_done) not in last_logged:
                        last_logged.append((event.phase, event.chunks_done))
                        _log(f"{name} ({number}/{total}): {event.phase}, chunk {event.chunks_done}/{event.chunks_total}, "
                             f"{event.facts_found} facts so far")

                report = await learn(
                    kb, document.text, source=document.source, published=document.published, model=llm,
                    progress=on_progress, budget=budget, parent_run_id=parent_run_id, **extra,
                )
                report.path = str(document.path)
                reports.append(report)
                progress.advance(files_bar)
                if log:
                    _log(f"{name} ({number}/{total}) done: "
                         + ("unchanged, no model calls" if report.unchanged else
                            f"{report.facts_stored} new facts, {report.duplicates} already known, {report.superseded} superseded"))
                if on_report is not None:
                    on_report(report)
    finally:
        await llm.aclose()
    return reports
