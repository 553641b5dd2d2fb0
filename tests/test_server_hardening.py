"""The server serves only what it should (issue #20): Host names, repositories, credentials, queue.

A real uvicorn server on a loopback port with a function model, as in test_server_api.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from moot.codeindex import CodeIndex
from moot.codeindex.store import default_db_path
from moot.errors import MootError
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.server import ServerSettings
from test_research_support import PLAN_3, ResearchScript, make_repo
from test_server_api import GOOD, Server, SlowScript

GH_TOKEN = "gho_" + "A" * 36
DOCKER_AUTH = '{"auths": {"https://index.docker.io/v1/": {"auth": "dXNlcjpzM2NyZXQ="}}}'


def fake_home(root: Path) -> Path:
    """A home folder with the credential files a real one has, next to ordinary code."""
    (root / ".config" / "gh").mkdir(parents=True)
    (root / ".config" / "gh" / "hosts.yml").write_text(f"github.com:\n    oauth_token: {GH_TOKEN}\n")
    (root / ".docker").mkdir()
    (root / ".docker" / "config.json").write_text(DOCKER_AUTH)
    (root / ".env").write_text("OPENAI_API_KEY=sk-" + "b" * 48 + "\n")
    (root / "deploy.yaml").write_text("key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  abc\n")
    (root / "notes.md").write_text(f"my token is {GH_TOKEN}\n")
    (root / "app.py").write_text("def main():\n    return 'hello'\n")
    return root


def no_roots(tmp_path: Path, script: Any, **kw: Any) -> ServerSettings:
    return ServerSettings(model=FunctionModel(script), store_path=tmp_path / "runs.db", **kw)


def test_the_default_server_refuses_folders_nobody_named(tmp_path: Path) -> None:
    # Issue #20: with no --repo-root the server indexed /etc and a home folder on request.
    home = fake_home(tmp_path / "home")
    with Server(no_roots(tmp_path, ResearchScript(PLAN_3, synth=GOOD))) as srv:
        for repo in ("/etc", str(home), str(tmp_path / "missing")):
            r = httpx.post(f"{srv.url}/api/query", json={"prompt": "What is in here?", "repo": repo}, timeout=30)
            assert r.status_code == 403, (repo, r.text)
            assert "--repo-root" in r.json()["detail"] and "moot index" in r.json()["detail"]
        assert not default_db_path(home.resolve()).exists()  # nothing was indexed


def test_a_repository_indexed_with_moot_index_may_be_asked_about(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    CodeIndex.build(repo).close()  # what `moot index` does: the default index file
    with Server(no_roots(tmp_path, ResearchScript(PLAN_3, synth=GOOD))) as srv:
        r = httpx.post(f"{srv.url}/api/query", json={"prompt": "Where is parse_request?", "repo": str(repo),
                                                     "mode": "single"}, timeout=60)
        assert r.status_code == 200, r.text


def test_credential_files_are_never_indexed(tmp_path: Path) -> None:
    home = fake_home(tmp_path / "home")
    index = CodeIndex.build(home, db_path=tmp_path / "i.db")
    try:
        assert index.stats()["skipped"]["credentials"] == 3  # .env, deploy.yaml, notes.md
        for rel in (".config/gh/hosts.yml", ".docker/config.json", ".env", "deploy.yaml", "notes.md"):
            with pytest.raises(MootError, match="not in the index"):
                index.read_file(rel)
        assert "hello" in index.read_file("app.py")
        for secret in (GH_TOKEN, "dXNlcjpzM2NyZXQ=", "OPENSSH", "oauth_token"):
            assert index.search(secret, mode="lexical") == []
    finally:
        index.close()


def test_evidence_from_a_home_folder_under_a_repo_root_holds_no_credentials(tmp_path: Path) -> None:
    # Issue #20: `.config/gh/hosts.yml` and `.docker/config.json` came back word for word.
    home = fake_home(tmp_path / "home")
    script = ResearchScript(PLAN_3, synth=GOOD)
    with Server(no_roots(tmp_path, script, repo_roots=[tmp_path])) as srv:
        r = httpx.post(f"{srv.url}/api/query", json={"prompt": "What tokens are configured?", "repo": str(home),
                                                     "mode": "multi"}, timeout=60)
        assert r.status_code == 200, r.text
        assert GH_TOKEN not in r.text and "dXNlcjpzM2NyZXQ=" not in r.text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", ""])
def test_requests_for_another_host_name_are_refused(tmp_path: Path, host: str) -> None:
    # Issue #20: `Host: evil.example` was accepted, so a DNS-rebinding page could drive the API.
    repo = make_repo(tmp_path / "repo")
    with Server(no_roots(tmp_path, ResearchScript(PLAN_3, synth=GOOD), repo_roots=[tmp_path])) as srv:
        body = {"prompt": "Where is parse_request?", "repo": str(repo), "mode": "single"}
        r = httpx.post(f"{srv.url}/api/query", json=body, headers={"Host": host})
        assert r.status_code == 400 and "does not answer to Host" in r.json()["detail"]
        assert httpx.get(f"{srv.url}/api/health", headers={"Host": host}).status_code == 400
        for ok in (f"localhost:{srv.port}", f"127.0.0.1:{srv.port}", "localhost"):
            assert httpx.get(f"{srv.url}/api/health", headers={"Host": ok}).status_code == 200


def test_queued_runs_are_bounded_with_429_and_retry_after(tmp_path: Path) -> None:
    # Issue #20: 300 POSTs were all accepted.
    repo = make_repo(tmp_path / "repo")
    gate = threading.Event()
    with Server(no_roots(tmp_path, SlowScript(gate), repo_roots=[tmp_path], max_concurrent=1, max_queued=2,
                         team_options={"db_path": tmp_path / "index.db"})) as srv:
        body = {"prompt": "How does it flow?", "repo": str(repo), "mode": "multi"}
        codes = [httpx.post(f"{srv.url}/api/runs", json=body).status_code for _ in range(3)]
        assert codes == [202, 202, 202]
        refused = httpx.post(f"{srv.url}/api/runs", json=body)
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1 and "--max-queued" in refused.json()["detail"]
        assert httpx.get(f"{srv.url}/api/health").json()["queued_runs"] <= 2
        gate.set()


def test_cancelling_all_queued_runs_sends_no_model_request_for_them(tmp_path: Path) -> None:
    # Issue #20: cancelled one by one oldest first, each queued run got the freed slot and
    # started a model request before its own cancel arrived. DELETE /api/runs cancels at once.
    repo = make_repo(tmp_path / "repo")
    gate = threading.Event()
    script = SlowScript(gate)
    seen: list[str] = []

    async def counting(request: ModelRequest) -> Any:
        seen.append(str(request.messages[-1].content)[:40])
        return await script(request)

    settings = ServerSettings(model=FunctionModel(counting), store_path=tmp_path / "runs.db", repo_roots=[tmp_path],
                              max_concurrent=1, team_options={"db_path": tmp_path / "index.db"})
    with Server(settings) as srv:
        body = {"prompt": "How does it flow?", "repo": str(repo), "mode": "multi"}
        ids = [httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"] for _ in range(5)]
        deadline = time.monotonic() + 30
        while httpx.get(f"{srv.url}/api/runs/{ids[0]}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while not seen:  # the first run's planner has asked its question
            assert time.monotonic() < deadline
            time.sleep(0.05)
        before = len(seen)
        assert httpx.delete(f"{srv.url}/api/runs", params={"status": "all"}).json()["cancelled"] == 5
        statuses = [httpx.get(f"{srv.url}/api/runs/{i}").json()["status"] for i in ids]
        assert statuses == ["cancelled"] * 5
        time.sleep(0.3)
        assert len(seen) <= before + 3  # only the running run's researchers, none from the queue
        assert httpx.get(f"{srv.url}/api/health").json()["active_runs"] == 0


def test_cancelling_runs_one_by_one_oldest_first_starts_none_of_the_queued_ones(tmp_path: Path) -> None:
    # Issue #20: each cancel freed a slot, the next queued run took it and sent its model
    # requests before its own cancel arrived.
    repo = make_repo(tmp_path / "repo")
    gate = threading.Event()
    script = SlowScript(gate)
    seen: list[str] = []

    async def counting(request: ModelRequest) -> Any:
        seen.append(str(request.messages[0].content)[:30])
        return await script(request)

    settings = ServerSettings(model=FunctionModel(counting), store_path=tmp_path / "runs.db", repo_roots=[tmp_path],
                              max_concurrent=1, team_options={"db_path": tmp_path / "index.db"})
    with Server(settings) as srv:
        body = {"prompt": "How does it flow?", "repo": str(repo), "mode": "multi"}
        ids = [httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"] for _ in range(5)]
        deadline = time.monotonic() + 30
        while len(seen) < 4:  # the first run: planner and its three researchers
            assert time.monotonic() < deadline
            time.sleep(0.05)
        before = len(seen)
        assert [httpx.delete(f"{srv.url}/api/runs/{i}").json()["status"] for i in ids] == ["cancelled"] * 5
        time.sleep(0.3)
        assert len(seen) == before


def test_a_queued_run_cancelled_before_it_started_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    gate = threading.Event()
    with Server(no_roots(tmp_path, SlowScript(gate), repo_roots=[tmp_path], max_concurrent=1,
                         team_options={"db_path": tmp_path / "index.db"})) as srv:
        body = {"prompt": "How does it flow?", "repo": str(repo), "mode": "multi"}
        first = httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"]
        second = httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"]
        r = httpx.delete(f"{srv.url}/api/runs/{second}").json()
        assert r["status"] == "cancelled"
        gate.set()
        deadline = time.monotonic() + 30
        while httpx.get(f"{srv.url}/api/runs/{first}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert httpx.get(f"{srv.url}/api/runs/{second}").json()["status"] == "cancelled"
