"""`moot learn PATH… --kb KB`: learn text files into a knowledge base, with a progress bar.

Every file is checked before the model loads, so a typo or a binary file fails in a second,
not after minutes of learning the files before it. Each file is learned all or nothing.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import typer

from moot.cli._output import print_json, stderr, stdout, usage_dict, usage_line
from moot.models.base import Usage


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)


def learn_command(
    paths: list[Path] = typer.Argument(..., help="Text or Markdown files (front matter `published: YYYY-MM-DD` dates them)."),
    kb: str = typer.Option(..., "--kb", help="Knowledge base: a name (kept in the moot home) or a file path."),
    model: str | None = typer.Option(None, "--model", "-m", help="Model string; default MOOT_MODEL, else the embedded model."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with per-file reports and usage."),
) -> None:
    """Learn facts from files into a knowledge base (dated facts; later values supersede earlier ones)."""
    from moot.memory import KnowledgeBase
    from moot.teams.learning.learning import read_document

    from moot.memory.store import resolve_path

    documents = [read_document(p) for p in paths]  # refuse bad files before any model work
    started = time.perf_counter()
    kb_path = resolve_path(kb)
    created = not kb_path.exists()
    try:
        with KnowledgeBase.open(kb_path) as knowledge_base:
            reports = asyncio.run(_learn_all(knowledge_base, documents, model, show_progress=not as_json))
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
    for report in reports:
        if report.unchanged:
            stdout.print(f"[bold]{report.source}[/]: already learned, unchanged (no model calls)")
            continue
        stdout.print(
            f"[bold]{report.source}[/] ({report.published or 'undated'}): {report.facts_stored} new facts, "
            f"{report.duplicates} already known, {report.superseded} superseded, {report.chunks} chunk(s)"
        )
        if report.summary:
            stdout.print(f"  [dim]{report.summary}[/]")
    stdout.print(
        f"knowledge base {summary.path}: {summary.current_facts} current facts, "
        f"{summary.superseded_facts} superseded, {len(summary.sources)} sources"
    )
    stdout.print(f"[dim]{usage_line(total, seconds)}[/]")


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


async def _learn_all(kb: Any, documents: list[Any], model: str | None, *, show_progress: bool) -> list[Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from moot.models.registry import infer_model
    from moot.teams.learning.learning import LearnProgress, learn

    llm = infer_model(model)
    reports = []
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not show_progress,
    )
    try:
        with progress:
            files_bar = progress.add_task("files", total=len(documents))
            chunks_bar = progress.add_task("chunks", total=None)
            for document in documents:
                name = document.path.name
                progress.update(chunks_bar, description=f"learning {name}", completed=0, total=None)

                def on_progress(event: LearnProgress, bar: Any = chunks_bar) -> None:
                    progress.update(bar, completed=event.chunks_done, total=event.chunks_total)

                report = await learn(
                    kb, document.text, source=document.source, published=document.published, model=llm,
                    progress=on_progress,
                )
                report.path = str(document.path)
                reports.append(report)
                progress.advance(files_bar)
    finally:
        await llm.aclose()
    return reports
