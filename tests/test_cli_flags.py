"""docs/cli.md's conventions table is true (issue #35): every short flag of every command means
the one long option the table gives it, help never prints a type after a flag, --source takes
several files, and `deliberate feedback` is a subcommand of its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from moot.cli.app import app, main, spread_multi_values

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def documented_short_flags() -> dict[str, str]:
    """``{short: long}`` from the rows of the "One meaning per option name" table."""
    section = DOCS.read_text(encoding="utf-8").split("## One meaning per option name", 1)[1].split("\n## ", 1)[0]
    table: dict[str, str] = {}
    for row in re.findall(r"^\| `(--[a-z-]+)[^`]*` / `(-[a-zA-Z])` \|", section, flags=re.M):
        long, short = row
        assert short not in table, f"docs/cli.md gives {short} twice"
        table[short] = long
    return table


def every_option(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    found = [(" ".join(path), p) for p in command.params]
    for name, sub in getattr(command, "commands", {}).items():
        found += every_option(sub, (*path, name))
    return found


def test_every_short_flag_of_every_command_is_the_one_docs_cli_md_gives() -> None:
    table = documented_short_flags()
    assert table["-n"] == "--limit" and table["-m"] == "--model" and len(table) >= 10
    root = typer.main.get_command(app)
    seen: dict[str, set[str]] = {}
    options = every_option(root)
    assert len({where for where, _ in options}) > 30  # every command was walked
    for where, param in options:
        shorts = [o for o in (*param.opts, *param.secondary_opts) if re.fullmatch(r"-[a-zA-Z]", o)]
        long = next((o for o in param.opts if o.startswith("--")), None)
        for short in shorts:
            assert short in table, f"`moot {where}` has {short} ({long}), which docs/cli.md does not list"
            assert table[short] == long, f"`moot {where}`: {short} is {long}, but docs/cli.md says {table[short]}"
            seen.setdefault(short, set()).add(where)
    for short in table:
        if short != "-h":
            assert short in seen, f"docs/cli.md lists {short}, which no command has"


def test_help_prints_no_type_after_a_flag(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    for argv in (["runs", "--help"], ["research", "--help"], ["graph", "--help"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert "--json" in text and "<bool>" not in text, argv
        assert "<int>" in text or "<str>" in text or "<path>" in text  # options that take values still say so


def test_json_given_a_value_is_one_line_naming_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["runs", "--json", "true"])
    assert done.value.code == 2
    assert "--json is a flag" in capsys.readouterr().out  # with --json the error is one JSON object


def test_source_takes_several_files_after_one_flag(tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("x")
    b.write_text("y")
    assert spread_multi_values(["graph", "How?", "--source", str(a), str(b), "--kb", "k"]) == [
        "graph", "How?", "--source", str(a), "--source", str(b), "--kb", "k"]
    # a missing file in the list is still a source (and then refused as missing), the question stays put
    assert spread_multi_values(["graph", "--source", str(a), "missing.md", "What links them?"]) == [
        "graph", "--source", str(a), "--source", "missing.md", "What links them?"]
    assert spread_multi_values(["ask", "Q", "--source", "a.md", "b.md"]) == ["ask", "Q", "--source", "a.md", "b.md"]


def test_graph_reads_every_file_after_one_source_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from moot.cli.graph_cmd import graph_command  # noqa: F401  (the command exists)

    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("The mill drains into the lake.")
    b.write_text("The lake feeds the river.")
    missing = tmp_path / "missing.md"
    with pytest.raises(SystemExit) as done:  # the third file is missing: refused by name, so all three were read as sources
        main(["graph", "How does the mill affect the river?", "--source", str(a), str(b), str(missing),
              "--model", "openai-compatible:http://127.0.0.1:9/v1#m"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "missing.md" in err and "unexpected extra argument" not in err


def test_deliberate_feedback_is_its_own_subcommand(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    with pytest.raises(SystemExit) as done:
        main(["deliberate", "feedback", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "--accept" in text and "--reject" in text and "--data" not in text
    with pytest.raises(SystemExit):
        main(["deliberate", "--help"])
    text = capsys.readouterr().out
    assert "--data" in text and "│ --accept" not in text  # the request's options, without feedback's
