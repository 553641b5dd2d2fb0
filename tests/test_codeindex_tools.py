"""The index as tools: compact outputs, cut notes, and a sandbox that no path can leave."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from moot.codeindex import CodeIndex, PathEscapeError
from moot.codeindex.tools import MAX_OUTPUT_CHARS, code_tools
from moot.models.base import ToolCall
from moot.models.testing import ScriptedModel, tool_call
from moot.runtime import SubAgent
from moot.runtime.tools import run_tool_call
from tests.test_codeindex import write_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "repo")
    outside = tmp_path / "repo-outside"
    (outside / "private").mkdir()
    (outside / "private" / "keys.txt").write_text("top secret\n")
    os.symlink(outside / "private", root / "linked_dir")
    os.symlink(root / "demo" / "storage.py", root / "alias.py")  # a link that stays inside
    (root / "long.md").write_text("".join(f"line number {n}\n" for n in range(1, 401)))
    return root


@pytest.fixture
def index(repo: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    with CodeIndex.build(repo, db_path=tmp_path / "index.sqlite3") as idx:
        yield idx


def call(index: CodeIndex, tool_name: str, /, **arguments: object) -> tuple[str, bool]:
    """Run one tool call the way a sub-agent does: (the text the model reads, whether it is an error)."""
    tools = {t.name: t for t in code_tools(index)}
    outcome = asyncio.run(run_tool_call(tools, ToolCall(id="c1", name=tool_name, arguments=arguments)))
    return outcome.message.content, outcome.message.is_error


ESCAPES = [
    "../repo-outside/private/keys.txt",
    "demo/../../repo-outside/private/keys.txt",
    "/etc/passwd",
    "linked_dir/keys.txt",
    "leak.py",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_read_file_refuses_every_escape(index: CodeIndex, path: str) -> None:
    with pytest.raises(PathEscapeError):
        index.read_file(path)
    text, is_error = call(index, "read_file", path=path)
    assert is_error and "top secret" not in text and "leaked_secret" not in text
    assert "indexed root" in text and "fix:" in text


@pytest.mark.parametrize("path", ["..", "/", "linked_dir", "demo/../.."])
def test_read_map_refuses_escapes(index: CodeIndex, path: str) -> None:
    with pytest.raises(ValueError):  # PathEscapeError is also a ValueError
        index.read_map(path)
    text, is_error = call(index, "read_map", path=path)
    assert is_error and "keys.txt" not in text


def test_a_link_that_stays_inside_the_root_can_be_read(index: CodeIndex) -> None:
    text = index.read_file("alias.py", 6, 7)
    assert text.splitlines() == ["demo/storage.py:6-7 (of 26 lines)", "6| def read_file(path):", '7|     """Read a whole file as text."""']


def test_read_file_numbers_lines_and_says_how_to_read_on(index: CodeIndex) -> None:
    text, is_error = call(index, "read_file", path="long.md")
    lines = text.splitlines()
    assert not is_error
    assert lines[0] == "long.md:1-150 (of 400 lines)"
    assert lines[1] == "  1| line number 1"
    assert lines[-1] == "… cut: 250 more lines; call read_file with start=151"
    more, _ = call(index, "read_file", path="long.md", start=151, end=160)
    assert more.splitlines()[1] == "151| line number 151" and "cut" not in more
    past, is_error = call(index, "read_file", path="long.md", start=999)
    assert is_error and "400 lines" in past


def test_read_file_output_is_cut_by_size_too(tmp_path: Path) -> None:
    root = tmp_path / "wide"
    root.mkdir()
    (root / "wide.py").write_text("".join(f"value_{n} = '{'x' * 200}'\n" for n in range(100)))
    with CodeIndex.build(root, db_path=tmp_path / "w.sqlite3") as idx:
        text, _ = call(idx, "read_file", path="wide.py")
    assert len(text) <= MAX_OUTPUT_CHARS
    last = text.splitlines()[-1]
    assert last.startswith("… cut: ") and "call read_file with start=" in last


@pytest.mark.parametrize("path", ["secret_notes.py", ".env", ".git/config", "node_modules/lib/index.js", "blob.py"])
def test_read_file_reads_only_what_the_index_holds(repo: Path, tmp_path: Path, path: str) -> None:
    (repo / ".env").write_text("API_KEY=sk-very-secret\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[credential]\n  helper = store\n")
    with CodeIndex.build(repo, db_path=tmp_path / "i.sqlite3") as idx:
        text, is_error = call(idx, "read_file", path=path)
    assert is_error and "is not in the index" in text
    assert "hunter2" not in text and "sk-very-secret" not in text and "credential" not in text


def test_read_file_on_a_directory_or_missing_file_names_the_fix(index: CodeIndex) -> None:
    text, is_error = call(index, "read_file", path="demo")
    assert is_error and "read_map" in text
    text, is_error = call(index, "read_file", path="demo/nope.py")
    assert is_error and "does not exist" in text


def test_search_code_output_has_headers_and_numbered_lines(index: CodeIndex) -> None:
    text, is_error = call(index, "search_code", query="read file", mode="lexical")
    assert not is_error
    lines = text.splitlines()
    assert lines[0].endswith("results for 'read file':")
    assert lines[1] == "[1] demo/storage.py:6-9 function demo.storage.read_file"
    assert lines[2] == "6| def read_file(path):"
    nothing, _ = call(index, "search_code", query="zzzqqq")
    assert nothing.startswith("no results for 'zzzqqq'")
    bad, is_error = call(index, "search_code", query="x", mode="fuzzy")
    assert is_error and "mode" in bad


def test_resolve_symbol_output_lists_definition_calls_and_uses(index: CodeIndex) -> None:
    text, _ = call(index, "resolve_symbol", name="read_file")
    assert "demo/storage.py:6-9 function demo.storage.read_file" in text
    assert "  def read_file(path)" in text
    assert "  doc: Read a whole file as text." in text
    assert "  calls: open, read" in text
    called_by = next(line for line in text.splitlines() if line.startswith("  called by:"))
    assert "demo.app.main" in called_by and "demo.storage.ConfigLoader.load" in called_by
    missing, _ = call(index, "resolve_symbol", name="nothing_like_this")
    assert "no definition" in missing and "search_code" in missing


def test_read_map_tool_shows_the_tree(index: CodeIndex) -> None:
    text, is_error = call(index, "read_map")
    assert not is_error and "demo/" in text and "ConfigLoader" in text


def test_a_sub_agent_uses_the_tools_and_a_refused_path_does_not_end_its_run(index: CodeIndex) -> None:
    model = ScriptedModel(
        [
            [tool_call("search_code", query="config loader"), tool_call("read_file", path="../repo-outside/private/keys.txt")],
            tool_call("read_file", path="demo/storage.py", start=12, end=19),
            "ConfigLoader.load is at demo/storage.py:17-19.",
        ]
    )
    agent = SubAgent("researcher", "reads code", "Answer from the code.", tools=code_tools(index), model=model)
    result = asyncio.run(agent.run("Where is the config loaded?"))
    assert result.stop_reason == "completed"
    assert result.output == "ConfigLoader.load is at demo/storage.py:17-19."
    tool_messages = [m for m in model.requests[1].messages if getattr(m, "name", None) in ("search_code", "read_file")]
    assert "demo/storage.py:12-22 class demo.storage.ConfigLoader" in tool_messages[0].content
    assert tool_messages[1].is_error and "top secret" not in tool_messages[1].content
    final_read = [m for m in model.requests[2].messages if getattr(m, "name", None) == "read_file"][-1]
    assert "17|     def load(self, path):" in final_read.content


def test_parallel_researchers_share_one_index(index: CodeIndex) -> None:
    # The research team runs its researchers at once; their tool calls reach the one index
    # from several worker threads at the same time.
    queries = ["read file", "config loader", "render user list", "fetch json document", "parse settings", "api client"]

    def researcher(n: int) -> SubAgent:
        script: list = [[tool_call("search_code", query=q) for q in queries] + [tool_call("read_map"), tool_call("resolve_symbol", name="load")]]
        script.append(f"researcher {n} done")
        return SubAgent(f"r{n}", "reads code", "Answer from the code.", tools=code_tools(index), model=ScriptedModel(script))

    agents = [researcher(n) for n in range(4)]

    async def run_all():  # type: ignore[no-untyped-def]
        return await asyncio.gather(*(a.run("Find the config code.") for a in agents))

    results = asyncio.run(run_all())
    assert [r.output for r in results] == [f"researcher {n} done" for n in range(4)]
    for agent in agents:
        tool_results = [m for m in agent.model.requests[1].messages if getattr(m, "name", None) == "search_code"]  # type: ignore[union-attr]
        assert len(tool_results) == len(queries) and not any(m.is_error for m in tool_results)
        assert "demo/storage.py:6-9 function demo.storage.read_file" in tool_results[0].content


def test_line_count_answers_only_for_indexed_files(index: CodeIndex) -> None:
    assert index.line_count("demo/storage.py") == 26
    assert index.line_count("./demo/storage.py") == 26
    assert index.line_count("long.md") == 400
    for path in ("demo", "secret_notes.py", "../repo-outside/private/keys.txt", "/etc/passwd", "nope.py"):
        assert index.line_count(path) is None, path
