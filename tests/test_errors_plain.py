"""Errors that used to mislead (issue #20), as a user meets them: exit codes, one plain line.

- an unreachable model: `moot research` said "(no answer: the budget stopped the run)" and
  exited 0, and the API said the run completed;
- a knowledge base damaged inside: sqlite3 tracebacks from `kb stats`, `kb facts`,
  `kb consolidate` and `ask`;
- `moot learn` with an unreachable model left an empty new knowledge-base file.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from moot.errors import ModelConnectionError
from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.server import ServerSettings
from moot.teams.research import ResearchTeam
from test_research_support import make_repo
from test_server_api import Server

MOOT = [sys.executable, "-m", "moot"]


def moot(*args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3")}
    env.pop("MOOT_MODEL", None)
    env.pop("MOOT_BLOCK_REAL_REQUESTS", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=timeout)


def closed_port_model() -> str:
    """A model string for a loopback port nothing listens on: an unreachable server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"openai-compatible:http://127.0.0.1:{port}/v1#m"


def unreachable(request: ModelRequest) -> str:
    raise ModelConnectionError("cannot connect to http://127.0.0.1:9/v1 for openai-compatible:…#m",
                                fix="start the server or fix the URL")


@pytest.mark.parametrize("mode", ["single", "multi"])
async def test_research_with_an_unreachable_model_fails_with_the_cause(tmp_path: Path, mode: str) -> None:
    team = ResearchTeam(make_repo(tmp_path / "repo"), model=FunctionModel(unreachable), db_path=tmp_path / "i.db")
    try:
        result = await team.ask("Where is parse_request defined?", mode=mode)  # type: ignore[arg-type]
    finally:
        team.close()
    assert result.status == "failed"
    assert "cannot connect" in result.stop_reason
    assert "budget" not in result.answer and "cannot connect" in result.answer


def test_moot_research_with_an_unreachable_model_says_so_and_exits_1(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    out = moot("research", "Where is parse_request defined?", "--repo", str(repo), "--mode", "single",
               "--model", closed_port_model(), home=tmp_path / "home")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "cannot connect" in out.stderr and "budget" not in out.stderr + out.stdout
    assert "Traceback" not in out.stderr


def test_an_api_run_with_an_unreachable_model_is_failed_with_the_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    settings = ServerSettings(model=FunctionModel(unreachable), store_path=tmp_path / "runs.db", repo_roots=[tmp_path],
                              team_options={"db_path": tmp_path / "index.db"})
    with Server(settings) as srv:
        run_id = httpx.post(f"{srv.url}/api/runs", json={"prompt": "Where is parse_request?", "repo": str(repo),
                                                         "mode": "single"}).json()["run_id"]
        deadline = time.monotonic() + 30
        while (status := httpx.get(f"{srv.url}/api/runs/{run_id}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert status["status"] == "failed" and "cannot connect" in (status["error"] or "")
        sync = httpx.post(f"{srv.url}/api/query", json={"prompt": "Where is parse_request?", "repo": str(repo),
                                                        "mode": "single"}, timeout=30)
        assert sync.status_code == 502 and "cannot connect" in sync.json()["detail"]


def damaged_kb(path: Path) -> Path:
    """A knowledge base with facts whose inside (not its header page) was overwritten."""
    with KnowledgeBase.open(path) as kb:
        kb.add_facts(Fact(f"Team {i} won {i} medals.", entity=f"Team {i}", attribute="medals", value=str(i),
                          source="games") for i in range(400))
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    for start in range(len(data) // 2 // page * page, len(data) - page, 2 * page):
        data[start:start + page] = b"\xa5" * page
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    "args",
    [("kb", "stats"), ("kb", "facts"), ("kb", "consolidate"), ("ask", "How many medals did Team 3 win?")],
    ids=["kb stats", "kb facts", "kb consolidate", "ask"],
)
def test_a_damaged_knowledge_base_is_one_plain_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    kb = damaged_kb(tmp_path / "olympics.sqlite3")
    if args[0] == "kb":
        command = [*args, "--kb", str(kb)]
    else:
        command = [*args, "--kb", str(kb), "--model", closed_port_model(), "--mode", "single"]
    out = moot(*command, home=tmp_path / "home")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "sqlite3." not in out.stderr
    # a piped command's progress lines are timestamped; the error is one line besides them
    lines = [line for line in out.stderr.splitlines() if line.strip() and not re.match(r"\[\d\d:\d\d:\d\d\] ", line)]
    assert len(lines) == 1 and "is damaged" in lines[0] and ".recover" in lines[0]


def test_moot_learn_with_an_unreachable_model_leaves_no_empty_kb(tmp_path: Path) -> None:
    article = tmp_path / "article.md"
    article.write_text("---\npublished: 2024-08-01\n---\nNorway won 12 gold medals at the games.\n")
    kb = tmp_path / "new.sqlite3"
    out = moot("learn", str(article), "--kb", str(kb), "--model", closed_port_model(), home=tmp_path / "home")
    assert out.returncode == 1, out.stdout + out.stderr  # the model failed: a runtime failure, not a usage mistake
    assert "cannot connect" in out.stderr and "Traceback" not in out.stderr
    assert not kb.exists() and not Path(f"{kb}-wal").exists()


def test_moot_learn_failing_on_an_existing_kb_keeps_it(tmp_path: Path) -> None:
    kb = tmp_path / "kept.sqlite3"
    with KnowledgeBase.open(kb) as base:
        base.add_fact(Fact("Norway won 11 gold medals.", entity="Norway", attribute="gold medals", value="11"))
    article = tmp_path / "article.md"
    article.write_text("Norway won 12 gold medals at the games.\n")
    out = moot("learn", str(article), "--kb", str(kb), "--model", closed_port_model(), home=tmp_path / "home")
    assert out.returncode == 1
    with KnowledgeBase.open(kb) as base:
        assert base.count() == 1


def test_moot_ask_on_a_dead_endpoint_keeps_the_facts_and_exits_1(tmp_path: Path) -> None:
    kb = tmp_path / "games.sqlite3"
    with KnowledgeBase.open(kb) as base:
        base.add_fact(Fact("Norway won 12 gold medals.", entity="Norway", attribute="gold medals", value="12", source="games"))
    out = moot("ask", "How many gold medals did Norway win?", "--kb", str(kb), "--model", closed_port_model(),
               "--mode", "single", home=tmp_path / "home")
    assert out.returncode == 1, out.stdout + out.stderr  # a degraded answer is not a success
    assert "“Norway won 12 gold medals.” (games)" in out.stdout  # the most relevant passage, with its source
    assert "no complete answer" in out.stderr and "Traceback" not in out.stderr
