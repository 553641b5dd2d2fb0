"""`moot index PATH`: index a source tree for search and code research, with a progress bar.

The first run parses everything; later runs re-read only files whose size or time changed and
re-parse only those whose content hash changed, so re-indexing an unchanged tree is quick.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from moot.cli._output import print_json, stderr, stdout


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)


def index_command(
    path: Path = typer.Argument(..., help="The source directory to index (a repository, or an installed package)."),
    db: Path | None = typer.Option(None, "--db", help="Index file; default: one file per root in the moot home."),
    embeddings: bool = typer.Option(
        False, "--embeddings/--no-embeddings", help="Also store semantic vectors (needs the moot\\[embeddings] extra)."
    ),
    rebuild: bool = typer.Option(False, "--rebuild", help="Delete the index file and index from scratch."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with the index's stats."),
    allow_large: bool = typer.Option(
        False, "--allow-large", help="Index / , a home folder or a tree over 25,000 files or 1 GB (refused otherwise)."
    ),
) -> None:
    """Index code (Python, JavaScript, TypeScript) and docs for `moot research` and search; incremental."""
    from moot.codeindex import CodeIndex

    with _progress_bar(enabled=not as_json) as on_progress:
        index = CodeIndex.build(path, db_path=db, embeddings=embeddings, progress=on_progress, rebuild=rebuild,
                                allow_large=allow_large)
    with index:
        stats = index.stats()
        report = index.last_build
    assert report is not None
    if as_json:
        print_json(stats)
        return
    stdout.print(f"[bold]{stats['root']}[/] → {stats['db_path']}")
    stdout.print(
        f"{stats['files']} files, {stats['chunks']} chunks, {stats['symbols']} symbols, "
        f"{stats['references']} references ({_languages(stats['languages'])})"
    )
    stdout.print(
        f"this run: {report.parsed} parsed, {report.unchanged} unchanged, {report.removed} removed"
        + (f", {report.embedded_chunks} chunks embedded" if report.embedded_chunks else "")
        + f" in {report.seconds:.2f}s"
    )
    if stats["skipped"]:
        stdout.print("skipped: " + ", ".join(f"{n} {reason}" for reason, n in stats["skipped"].items()))


def _languages(languages: dict[str, int]) -> str:
    return ", ".join(f"{n} {lang}" for lang, n in languages.items()) or "no files"


class _progress_bar:
    """A rich progress bar fed by ``IndexProgress`` events (silent with --json)."""

    def __init__(self, *, enabled: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("[dim]{task.fields[path]}"),
            console=stderr,
            transient=True,
            disable=not enabled,
        )
        self._bar: Any = None

    def __enter__(self) -> Any:
        self._progress.__enter__()
        self._bar = self._progress.add_task("counting files", total=None, path="")
        return self._update

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)  # type: ignore[arg-type]

    def _update(self, event: Any) -> None:
        description = "counting files" if event.total is None else "indexing"
        self._progress.update(
            self._bar, description=description, completed=event.done, total=event.total, path=event.path[-50:]
        )
