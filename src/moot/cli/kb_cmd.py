"""`moot kb stats|facts|consolidate --kb KB`: look into a knowledge base and tidy it."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from moot.cli._output import print_json, stdout

kb_app = typer.Typer(help="Inspect and tidy a knowledge base: stats, facts, consolidate.", no_args_is_help=True)

_KB_HELP = "Knowledge base: a name (kept in the moot home) or a file path."


def register(app: typer.Typer) -> None:
    app.add_typer(kb_app, name="kb")


def _open(kb: str):  # type: ignore[no-untyped-def]
    from pathlib import Path

    from moot.errors import MootError
    from moot.memory import KnowledgeBase
    from moot.memory.store import resolve_path

    path = resolve_path(kb)
    if not Path(path).exists():
        # Reading must not create an empty knowledge base by accident (a typo in --kb).
        raise MootError(f"knowledge base {kb!r} does not exist ({path})", fix="check --kb, or create it with `moot learn FILE --kb NAME`")
    return KnowledgeBase.open(kb)


@kb_app.command("stats")
def stats(
    kb: str = typer.Option(..., "--kb", help=_KB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Counts, main entities and concepts, sources with their summaries, and the date range."""
    with _open(kb) as knowledge_base:
        summary = knowledge_base.summary()
        sources = knowledge_base.sources()
        conflicts = knowledge_base.conflicts()
    if as_json:
        data = summary.to_dict()
        data["sources"] = [
            {
                "source": s.source,
                "facts": s.facts,
                "episodes": s.episodes,
                "first_date": s.first_date.isoformat() if s.first_date else None,
                "last_date": s.last_date.isoformat() if s.last_date else None,
                "summary": s.summary,
            }
            for s in sources
        ]
        data["conflicts"] = [[f.to_dict() for f in group] for group in conflicts]
        print_json(data)
        return
    stdout.print(f"[bold]{summary.path}[/]")
    stdout.print(
        f"{summary.facts} facts ({summary.current_facts} current, {summary.superseded_facts} superseded), "
        f"{summary.episodes} episodes, {summary.supersedes_links} SUPERSEDES links, {len(conflicts)} conflicts"
    )
    if summary.earliest or summary.latest:
        stdout.print(f"dates: {summary.earliest} … {summary.latest}")
    if summary.entities:
        stdout.print("entities: " + ", ".join(f"{name} ({n})" for name, n in summary.entities[:10]))
    table = Table(title="sources", title_justify="left")
    for column in ("source", "date", "facts", "summary"):
        table.add_column(column, justify="right" if column == "facts" else "left")
    for s in sources:
        table.add_row(s.source, str(s.last_date or s.first_date or "-"), str(s.facts), s.summary)
    if sources:
        stdout.print(table)


@kb_app.command("facts")
def facts(
    kb: str = typer.Option(..., "--kb", help=_KB_HELP),
    entity: str | None = typer.Option(None, "--entity", "-e", help="Only facts about this entity."),
    include_all: bool = typer.Option(False, "--all", help="Include superseded facts (marked)."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="At most this many facts."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """List facts, oldest first; with --all, superseded values too (marked)."""
    with _open(kb) as knowledge_base:
        found = knowledge_base.facts(entity=entity, include_superseded=include_all, limit=limit)
    if as_json:
        print_json({"facts": [f.to_dict() for f in found], "count": len(found)})
        return
    if not found:
        stdout.print("no facts" + (f" about {entity!r}" if entity else ""))
        return
    table = Table(title=f"{len(found)} facts", title_justify="left")
    for column in ("id", "date", "entity", "attribute", "value", "statement", "source"):
        # fold, not truncate: a clipped value or "superseded" mark would mislead
        table.add_column(column, justify="right" if column == "id" else "left", overflow="fold")
    for f in found:
        style = "dim" if not f.is_current else ""
        mark = f" (superseded by {f.superseded_by})" if not f.is_current else ""
        table.add_row(
            str(f.id),
            str(f.source_date or "-"),
            f.entity,
            f.attribute,
            Text(f.value + mark, style="yellow" if mark else ""),
            Text(f.content, style=style),
            f.source,
        )
    stdout.print(table)


@kb_app.command("consolidate")
def consolidate_command(
    kb: str = typer.Option(..., "--kb", help=_KB_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would change; change nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Merge near-duplicate facts and prune weak superseded ones (one transaction)."""
    from moot.memory import consolidate

    with _open(kb) as knowledge_base:
        report = consolidate(knowledge_base, dry_run=dry_run)
    if as_json:
        data = report.to_dict()
        data["dry_run"] = dry_run
        print_json(data)
        return
    stdout.print(("dry run: " if dry_run else "") + report.describe())
