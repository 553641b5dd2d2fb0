"""`moot kb list` and `moot kb stats|facts|consolidate --kb KB`: find, look into and tidy knowledge bases."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.markup import escape
from rich.text import Text

from moot.cli._output import print_json, stdout
from moot.cli._output import print_table

kb_app = typer.Typer(help="Knowledge bases: list them, inspect one (stats, facts) and tidy it (consolidate).", no_args_is_help=True)

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


@kb_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object: {"folder", "knowledge_bases": [{"name", "path", "facts", …}]}.'),
) -> None:
    """The named knowledge bases in the moot home (what `--kb NAME` finds), with their facts and sources."""
    from moot import config
    from moot.memory import KnowledgeBase

    folder = config.home() / "kb"
    rows = []
    for path in sorted(folder.glob("*.sqlite3")) if folder.is_dir() else []:
        row: dict[str, object] = {"name": path.stem, "path": str(path), "bytes": path.stat().st_size}
        try:
            with KnowledgeBase.open(path) as knowledge_base:
                summary = knowledge_base.summary(top=0)
            row.update(facts=summary.facts, current_facts=summary.current_facts, sources=len(summary.sources),
                       earliest=str(summary.earliest) if summary.earliest else None,
                       latest=str(summary.latest) if summary.latest else None, error=None)
        except Exception as exc:  # one damaged file must not hide the others
            row.update(facts=None, current_facts=None, sources=None, earliest=None, latest=None,
                       error=getattr(exc, "message", None) or str(exc))
        rows.append(row)
    if as_json:
        print_json({"folder": str(folder), "knowledge_bases": rows})
        return
    if not rows:
        stdout.print(f"no knowledge bases in {folder} — create one with `moot learn FILE --kb NAME`")
        return
    table = Table(title=f"knowledge bases in {folder}", title_justify="left")
    for column in ("name", "facts", "current", "sources", "dates", "size"):
        table.add_column(column, justify="right" if column in ("facts", "current", "sources", "size") else "left")
    for row in rows:
        if row["error"]:
            table.add_row(str(row["name"]), Text(f"unreadable: {row['error']}", style="red"), "", "", "", f"{int(row['bytes']) // 1024} KiB")  # type: ignore[call-overload]
            continue
        dates = f"{row['earliest']} … {row['latest']}" if row["earliest"] else "-"
        table.add_row(str(row["name"]), str(row["facts"]), str(row["current_facts"]), str(row["sources"]), dates,
                      f"{int(row['bytes']) // 1024} KiB")  # type: ignore[call-overload]
    print_table(table)


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
        stdout.print("entities: " + ", ".join(f"{escape(name)} ({n})" for name, n in summary.entities[:10]))
    table = Table(title="sources", title_justify="left")
    for column in ("source", "date", "facts", "summary"):
        table.add_column(column, justify="right" if column == "facts" else "left")
    for s in sources:
        table.add_row(Text(s.source), str(s.last_date or s.first_date or "-"), str(s.facts), Text(s.summary or ""))
    if sources:
        print_table(table)


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
            Text(f.entity),
            Text(f.attribute),
            Text(f.value + mark, style="yellow" if mark else ""),
            Text(f.content, style=style),
            Text(f.source),
        )
    print_table(table)


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
