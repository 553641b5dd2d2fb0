"""A user's own files, pointed at `moot learn` and `moot index`: unusual input, as a person meets it.

Scripted models stand in for the LLM; errors are checked as a person sees them (exit status, one
plain line naming the fix, no traceback) and for what must not be lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from learning_support import label_units
from moot.cli import kb_cmd, learn_cmd
from moot.memory import Fact, KnowledgeBase
from moot.models.testing import FunctionModel, by_agent
from moot.text import sentences
from moot.text.sentences import split_sentences, split_units


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["MOOT_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=120)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def model() -> FunctionModel:
    return FunctionModel(by_agent({"fact-labeller": label_units}))


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, typer.Typer]:
    import moot.models.registry as registry

    monkeypatch.setattr(registry, "infer_model", lambda spec=None, **kw: model())
    app = typer.Typer()
    learn_cmd.register(app)
    kb_cmd.register(app)  # two commands: `learn` stays a subcommand name
    return CliRunner(), app


# --------------------------------------------------------------------------- moot learn


@pytest.mark.parametrize("published", ["2026-13-45", "2026-02-30", "2026-01-01 25:00:00"])
def test_front_matter_date_that_yaml_cannot_build_is_a_one_line_error(tmp_path: Path, published: str) -> None:
    # PyYAML turns these into a ValueError, not a YAMLError: it escaped as a traceback.
    note = tmp_path / "note.md"
    note.write_text(f"---\ntitle: Harbour\npublished: {published}\n---\nThe harbour has 12 boats.\n")
    kb = tmp_path / "kb.sqlite3"
    line = one_line_error(moot("learn", str(note), "--kb", str(kb), home=tmp_path / "home"))
    assert f"note.md: published date published: '{published}' is not a date" in line
    assert "fix: write the date as published: YYYY-MM-DD" in line
    assert not kb.exists()


def test_a_kb_path_under_a_file_names_the_kb_path_not_the_home_setting(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("The harbour has 12 boats.\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    line = one_line_error(moot("learn", str(note), "--kb", str(notes / "kb.sqlite3"), home=tmp_path / "home"))
    assert f"cannot create the folder for the knowledge base at {notes}" in line
    assert "fix: pass --kb a name, or a file path in a folder you can write" in line and "MOOT_HOME" not in line
    assert notes.read_text() == "mine\n"


@pytest.mark.parametrize(("encoding", "name"), [("utf-16", "utf-16"), ("utf-32", "utf-32")])
def test_utf16_text_is_named_with_its_iconv_command_not_called_binary(tmp_path: Path, encoding: str, name: str) -> None:
    # Windows editors save "Unicode" text as UTF-16 with a byte-order mark; its NUL bytes read as binary.
    note = tmp_path / "notes.txt"
    note.write_bytes("The harbour has 12 boats.\n".encode(encoding))
    line = one_line_error(moot("learn", str(note), "--kb", str(tmp_path / "kb.sqlite3"), home=tmp_path / "home"))
    assert "binary" not in line
    assert f"notes.txt is {name.upper()} text, not UTF-8" in line
    assert f"iconv -f {name} -t utf-8 notes.txt > notes.utf8.txt" in line


@pytest.mark.parametrize("exclude", ["drafts", "drafts/", "./drafts", "drafts/*", "old"])
def test_exclude_a_folder_by_its_name_leaves_out_everything_in_it(
    cli: tuple[CliRunner, typer.Typer], tmp_path: Path, exclude: str
) -> None:
    runner, app = cli
    notes = tmp_path / "notes"
    (notes / "drafts" / "old").mkdir(parents=True)
    (notes / "keep.md").write_text("The harbour has 12 boats.\n")
    (notes / "drafts" / "idea.md").write_text("The harbour has 99 boats.\n")
    (notes / "drafts" / "old" / "older.md").write_text("The harbour has 77 boats.\n")
    result = runner.invoke(app, ["learn", str(notes), "--kb", str(tmp_path / "kb.sqlite3"), "--exclude", exclude, "--json"])
    assert result.exit_code == 0, result.output
    learned = [Path(f["path"]).name for f in json.loads(result.stdout.strip().splitlines()[-1])["files"]]
    assert "older.md" not in learned and "keep.md" in learned
    if exclude != "old":
        assert learned == ["keep.md"]  # the drafts folder, at any depth below it, is left out


def test_a_link_that_leads_out_of_a_learned_folder_is_not_followed(cli: tuple[CliRunner, typer.Typer], tmp_path: Path) -> None:
    runner, app = cli
    notes, private = tmp_path / "notes", tmp_path / "private"
    (notes / "sub").mkdir(parents=True)
    private.mkdir()
    (private / "diary.md").write_text("The harbour master owes 4,000 euros.\n")
    (notes / "keep.md").write_text("The harbour has 12 boats.\n")
    (notes / "sub" / "inside.md").symlink_to(notes / "keep.md")  # a link that stays in the folder is read
    (notes / "diary.md").symlink_to(private / "diary.md")
    (notes / "away").symlink_to(private, target_is_directory=True)
    result = runner.invoke(app, ["learn", str(notes), "--kb", str(tmp_path / "kb.sqlite3"), "--json"])
    assert result.exit_code == 0, result.output
    learned = sorted(Path(f["path"]).name for f in json.loads(result.stdout.strip().splitlines()[-1])["files"])
    assert learned == ["inside.md", "keep.md"]
    direct = runner.invoke(app, ["learn", str(notes / "diary.md"), "--kb", str(tmp_path / "kb2.sqlite3"), "--json"])
    assert direct.exit_code == 0, direct.output  # a file the user names is read as named


def test_a_file_saved_again_while_it_is_learned_is_learned_again_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.teams.learning.ingest import learning

    note = tmp_path / "note.md"
    note.write_text("The harbour has 12 boats.\n")
    read = learning.read_document

    def read_then_saved(path: str | Path):  # type: ignore[no-untyped-def]
        document = read(path)
        note.write_text("The harbour has 12 boats.\n\nThe marina has 40 berths.\n")  # the editor saves meanwhile
        return document

    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        monkeypatch.setattr(learning, "read_document", read_then_saved)
        asyncio.run(learning.learn_file(kb, note, model=model(), record_run=False))
        monkeypatch.setattr(learning, "read_document", read)
        again = asyncio.run(learning.learn_file(kb, note, model=model(), record_run=False))
        assert not again.unchanged  # before: the saved text's hash was recorded with the old text
        assert any("40 berths" in fact.content for fact in kb.facts())


def test_a_long_paragraph_is_segmented_a_window_at_a_time_and_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # pysbd's time grows with the square of its input: a 300 KB text export without blank lines
    # (one paragraph) took minutes before `moot learn` even started.
    seen: list[int] = []
    segmenter = sentences._segmenter()

    class Counting:
        def segment(self, text: str) -> list[str]:
            seen.append(len(text))
            return segmenter.segment(text)

    monkeypatch.setattr(sentences, "_segmenter", lambda: Counting())
    lines = [f"Line {n} says the harbour had {n} boats on Dr. Smith's count." for n in range(400)]
    units = split_units("\n".join(lines))  # hard-wrapped, no blank line: one paragraph of 24,000 characters
    assert max(seen) <= 2000
    assert [u.text for u in units] == lines
    endless = "and more words " * 1000  # 15,000 characters and no sentence end
    pieces = split_sentences(endless)
    assert " ".join(pieces) == endless.strip() and max(len(p) for p in pieces) <= 2000


# --------------------------------------------------------------------------- moot index / research


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "good.py").write_text('def good():\n    """Good."""\n    return 1\n')
    (repo / "broken.py").write_text("def f(:\n  pass\n")  # a syntax error is indexed as text, not fatal
    return repo


def test_rebuild_never_deletes_a_file_that_is_not_a_code_index(small_repo: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\n")
    kb_file = tmp_path / "marrow.sqlite3"
    with KnowledgeBase.open(kb_file) as kb:
        kb.add_fact(Fact("The harbour has 12 boats.", source="Herald"))
    kb_bytes = kb_file.read_bytes()
    home = tmp_path / "home"
    for db, kind in ((notes, "it is not a SQLite file"), (kb_file, "it is another SQLite database")):
        plain = one_line_error(moot("index", str(small_repo), "--db", str(db), home=home))
        assert f"{db} is not a moot code index ({kind}" in plain and "--rebuild" not in plain  # no destructive advice
        assert "fix: pass --db the path of a new file" in plain
        rebuilt = one_line_error(moot("index", str(small_repo), "--db", str(db), "--rebuild", home=home))
        assert f"--rebuild would delete {db}, which is not a moot code index" in rebuilt
    assert notes.read_text() == "my precious notes\n"
    assert kb_file.read_bytes() == kb_bytes
    with KnowledgeBase.open(kb_file) as kb:
        assert [f.content for f in kb.facts()] == ["The harbour has 12 boats."]


def test_a_damaged_index_at_db_names_a_rebuild_of_that_file(small_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "chosen.sqlite3"
    home = tmp_path / "home"
    assert moot("index", str(small_repo), "--db", str(db), home=home).returncode == 0
    with db.open("r+b") as handle:  # damage the pages after the header
        handle.seek(100)
        handle.write(b"\xff" * 8000)
    line = one_line_error(moot("index", str(small_repo), "--db", str(db), home=home))
    # before: the fix named `moot index REPO --rebuild`, which rebuilt the default index, not this one
    assert f"fix: rebuild it: moot index {small_repo.resolve()} --db {db} --rebuild" in line
    fixed = moot("index", str(small_repo), "--db", str(db), "--rebuild", "--json", home=home)
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["files"] == 2
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == ("moot-code-index",)


@pytest.mark.parametrize("command", [["research"], ["graph"], ["board", "worker"], ["mcp", "serve"]])
def test_help_shows_the_config_table_its_mcp_servers_are_added_to(tmp_path: Path, command: list[str]) -> None:
    # rich read "[mcp.servers]" as markup and printed "added to  of moot.toml"
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    done = subprocess.run([sys.executable, "-m", "moot", *command, "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0
    assert "[mcp.servers]" in " ".join(done.stdout.split())
