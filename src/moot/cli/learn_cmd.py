"""`moot learn PATH… --kb KB`: learn files and folders into a knowledge base, side by side.

Every file is checked before the model loads, so a typo or a binary file fails in a second,
not after minutes of learning the files before it. Files are learned ``--parallel`` at a time
through the engine's slots; each is learned all or nothing, and its result is printed as soon
as it finishes. A folder is read recursively (``--include``/``--exclude`` globs), and a re-run
learns only what changed. Without a terminal (a pipe, CI) the progress display cannot redraw,
so plain timestamped lines on stderr say which file, phase and chunk each is on.
"""

from __future__ import annotations

import asyncio
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.markup import escape

from moot.cli._options import model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._progress import log_line
from moot.cli._output import print_json, stderr, stdout, usage_dict, usage_line
from moot.errors import MootError, UsageError
from moot.models.base import Usage


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)


def learn_command(
    paths: list[Path] = typer.Argument(..., help="Text or Markdown files, or folders (read recursively)."),
    kb: str = typer.Option(..., "--kb", help="Knowledge base: a name (kept in the moot home) or a file path."),
    model: list[str] | None = model_option("Model string; default MOOT_MODEL, else the embedded model."),
    budget: str | None = typer.Option(
        None, "--budget", "-b",
        help="Limits per file (default: none; learning makes one call per chunk): calls=N, tokens=N, usd=X, seconds=X."),
    parallel: Optional[int] = typer.Option(
        None, "--parallel", min=1, help="Model requests (and files) at once; default: the model's slots (4 for the embedded engine)."),
    include: list[str] | None = typer.Option(
        None, "--include", help="In folders, learn files whose name matches this glob (repeatable; default *.md *.markdown *.txt *.rst)."),
    exclude: list[str] | None = typer.Option(
        None, "--exclude", help="In folders, skip paths matching this glob (repeatable), e.g. 'drafts/*'."),
    extraction: str = typer.Option(
        "select", "--extraction",
        help="select: the model labels the source's own sentences (default); rewrite: the earlier extractor, for comparison."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with per-file reports and usage."),
) -> None:
    """Learn facts from files and folders into a knowledge base (dated facts; later values supersede earlier ones)."""
    from moot.memory import KnowledgeBase
    from moot.memory.store import resolve_path
    from moot.teams.learning.ingest.learning import EXTRACTIONS, collect_files, learn, read_document

    if extraction not in EXTRACTIONS:
        raise UsageError(f"unknown --extraction {extraction!r}", fix="use --extraction select (default) or rewrite")
    file_budget = None
    if budget is not None:
        chosen = parse_budget(budget)
        if not chosen.limits() or any(p.strip() in ("quick", "standard", "deep") for p in budget.split(",")):
            raise UsageError("learning has no preset sizes (it makes one model call per chunk)",
                             fix="give limits per file: --budget calls=N,seconds=X")
        from moot.runtime import Budget

        file_budget = Budget(**chosen.limits())
    model_kwargs = team_model_kwargs(learn, parse_models(model), command="learn")
    files = collect_files(list(paths), include=include, exclude=exclude)
    for path in files:
        read_document(path)  # refuse bad files before any model work
    started = time.perf_counter()
    held_run: dict[str, str] = {}
    kb_path = resolve_path(kb)
    created = not kb_path.exists()
    try:
        with KnowledgeBase.open(kb_path) as knowledge_base:
            finished: list[Any] = []

            def on_outcome(outcome: Any) -> None:
                finished.append(outcome)
                if not as_json:
                    _print_outcome(outcome)

            try:
                outcomes = asyncio.run(_learn_all(
                    knowledge_base, files, model_kwargs, budget=file_budget, parallel=parallel, extraction=extraction,
                    show_progress=not as_json, on_outcome=on_outcome, held=held_run))
            except KeyboardInterrupt:
                _report_interrupt(held_run, finished, len(files))
                raise typer.Exit(130) from None
            summary = knowledge_base.summary()
    except BaseException:
        # A knowledge base this command created and then learned nothing into (the model was
        # unreachable, Ctrl-C before the first file) is removed: an empty file left behind
        # looks like a knowledge base that learned, and found, nothing.
        if created:
            _remove_if_empty(kb_path)
        raise
    reports = [o.report for o in outcomes if o.report is not None]
    failures = [o for o in outcomes if o.error is not None]
    total = Usage()
    for report in reports:
        total = total + report.usage
    seconds = time.perf_counter() - started
    if created and not reports:
        _remove_if_empty(kb_path)
    if as_json:
        files_json = []
        for outcome in outcomes:
            if outcome.report is not None:
                data = outcome.report.to_dict()
                data.pop("facts")
            else:
                data = {"path": str(outcome.path), "error": outcome.error.message, "fix": outcome.error.fix}  # type: ignore[union-attr]
            files_json.append(data)
        print_json(
            {
                "kb": summary.path,
                "files": files_json,
                "failed": len(failures),
                "facts_stored": sum(r.facts_stored for r in reports),
                "kb_facts": summary.facts,
                "kb_current_facts": summary.current_facts,
                "usage": usage_dict(total),
                "seconds": round(seconds, 3),
            }
        )
    else:
        stdout.print(
            f"knowledge base {summary.path}: {summary.current_facts} current facts, "
            f"{summary.superseded_facts} superseded, {len(summary.sources)} sources"
        )
        stdout.print(f"[dim]{usage_line(total, seconds)}[/]")
    if failures:
        first = failures[0].error
        assert first is not None
        raise typer.Exit(code=getattr(first, "exit_code", 1) or 1)


def _report_interrupt(held: dict[str, str], finished: list[Any], total: int) -> None:
    """Ctrl-C: the run id, what was kept (each file is learned all or nothing) and what was not."""
    from moot.cli import _progress

    _progress.interrupt_reported = True
    learned = [o for o in finished if o.error is None]
    where = f"run {held['run_id'][:12]} cancelled" if "run_id" in held else "learning cancelled"
    stderr.print(f"[yellow]interrupted[/]: {where}: {len(learned)} of {total} file(s) learned and kept; "
                 "a file cut short stored nothing (learn it again: unchanged files cost nothing)", soft_wrap=True)
    for outcome in learned:
        stderr.print(f"  kept: {escape(outcome.report.source)} ({outcome.report.facts_stored} new facts)")
    if "run_id" in held:
        stderr.print(f"[dim]the whole run: moot runs show {held['run_id'][:12]}[/]")


def _print_outcome(outcome: Any) -> None:
    """One file's result, printed as soon as the file is learned (or failed)."""
    if outcome.error is not None:
        fix = f" (fix: {outcome.error.fix})" if outcome.error.fix else ""
        stderr.print(f"[red]error[/]: {escape(outcome.error.message)}{escape(fix)}")
        return
    report = outcome.report
    if report.unchanged:
        stdout.print(f"[bold]{escape(report.source)}[/]: already learned, unchanged (no model calls)")
        return
    changed = f", {report.forgotten} old passage(s) forgotten" if report.forgotten else ""
    stdout.print(
        f"[bold]{escape(report.source)}[/] ({report.published or 'undated'}): {report.facts_stored} new facts, "
        f"{report.duplicates} already known, {report.superseded} superseded, "
        f"{report.chunks_learned}/{report.chunks} chunk(s) learned{changed}"
    )
    if report.summary:
        stdout.print(f"  [dim]{escape(report.summary)}[/]")  # the source's words: text, not markup


_log = log_line


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


def default_parallel(model: Any) -> int:
    """The model's own limit on requests at once (the embedded engine's slots), else 4."""
    try:
        limit = model.describe().get("concurrency_limit")
    except Exception:
        limit = None
    return int(limit) if isinstance(limit, int) and limit > 0 else 4


async def _learn_all(kb: Any, files: list[Path], model_kwargs: dict[str, Any], *, budget: Any = None,
                     parallel: int | None = None, extraction: str = "select", show_progress: bool,
                     on_outcome: Callable[[Any], None] | None = None, log: bool | None = None,
                     held: dict[str, str] | None = None) -> list[Any]:
    """Learn the files side by side; ``on_outcome`` gets each file's outcome as it finishes.

    With ``log`` (default: stderr is not a terminal) plain lines say which file and phase each is
    on, with the facts found so far, instead of a display that cannot redraw.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from moot.cli._runs import parent_run
    from moot.models.registry import infer_model
    from moot.teams.learning.ingest.learning import LearnProgress, learn_files

    if log is None:
        log = not stderr.is_terminal
    if log and show_progress:  # the first line: the files are checked, the model not yet loaded
        _log(f"learn: {len(files)} file(s) into {Path(kb.path).name}, {parallel or 'the model slots'} at a time")
    llm = infer_model(model_kwargs.get("model"))
    extra = {k: v for k, v in model_kwargs.items() if k != "model"}
    width = parallel or default_parallel(llm)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not show_progress or log,
        # stdout stays stdout: with a pipe, per-file results must not be routed to the display's stderr
        redirect_stdout=sys.stdout.isatty(),
    )
    total = len(files)
    numbers = {path: n for n, path in enumerate(files, 1)}
    rows: dict[Path, Any] = {}
    last_logged: dict[Path, tuple[str, int]] = {}
    # Several files: one parent run holds each file's run, so `moot runs` shows the command once.
    held_run = parent_run(f"learn {total} files into {Path(kb.path).name}") if total > 1 else nullcontext(None)
    try:
        with held_run as parent_run_id, progress:
            if parent_run_id is not None and held is not None:
                held["run_id"] = parent_run_id
            files_bar = progress.add_task(f"files ({width} at a time)", total=total)

            def on_progress(path: Path, event: LearnProgress) -> None:
                if path not in rows:
                    rows[path] = progress.add_task(path.name, total=None)
                    if log:
                        _log(f"learning {path.name} ({numbers[path]}/{total})")
                progress.update(rows[path], completed=event.chunks_done, total=event.chunks_total or None,
                                description=f"{path.name} · {event.phase} · {event.facts_found} facts")
                if log and last_logged.get(path) != (event.phase, event.chunks_done):
                    last_logged[path] = (event.phase, event.chunks_done)
                    _log(f"{path.name} ({numbers[path]}/{total}): {event.phase}, chunk {event.chunks_done}/"
                         f"{event.chunks_total}, {event.facts_found} facts so far")

            def on_done(outcome: Any) -> None:
                if outcome.path in rows:
                    progress.remove_task(rows.pop(outcome.path))
                progress.advance(files_bar)
                if log:
                    name = f"{outcome.path.name} ({numbers[outcome.path]}/{total})"
                    if outcome.error is not None:
                        _log(f"{name} failed, nothing stored: {outcome.error.message}")
                    elif outcome.report.unchanged:
                        _log(f"{name} done: unchanged, no model calls")
                    else:
                        r = outcome.report
                        _log(f"{name} done: {r.facts_stored} new facts, {r.duplicates} already known, {r.superseded} superseded")
                if on_outcome is not None:
                    on_outcome(outcome)

            return await learn_files(kb, files, model=llm, parallel=width, progress=on_progress, on_done=on_done,
                                     budget=budget, parent_run_id=parent_run_id, extraction=extraction, **extra)
    finally:
        await llm.aclose()


__all__ = ["default_parallel", "learn_command"]
