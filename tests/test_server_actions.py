"""The HTTP side of the page's actions on a real `moot serve`: re-run, export, feedback, and the
plain errors a user gets when an action does not apply."""

from __future__ import annotations

from pathlib import Path

import httpx
from test_request_timing import record_two_agents_on_one_slot
from web_support import Serve, record_deliberation_run

from moot.runtime import RunStore


def test_actions_refuse_plainly_what_they_cannot_do(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = record_two_agents_on_one_slot(db, "server-actions")
    store = RunStore(db)
    deliberation = record_deliberation_run(store)
    store.close()
    with Serve(db, env={"MOOT_HOME": str(tmp_path / "home")}) as server:
        refused = httpx.post(f"{server.url}/api/runs/{run_id}/rerun")
        assert refused.status_code == 409 and "not started over HTTP" in refused.json()["detail"]
        assert httpx.post(f"{server.url}/api/runs/nosuchrun/rerun").status_code == 404
        export = httpx.get(f"{server.url}/api/runs/{run_id[:10]}/export")
        assert export.status_code == 200
        assert export.headers["content-disposition"] == f'attachment; filename="moot-run-{run_id[:12]}.json"'
        assert export.json()["run"]["run_id"] == run_id
        assert httpx.get(f"{server.url}/api/runs/nosuchrun/export").status_code == 404
        wrong = httpx.post(f"{server.url}/api/deliberation/runs/{deliberation}/feedback",
                           json={"decision": "accepted", "insight_id": "no-such-insight"})
        assert wrong.status_code == 422 and "use one of" in wrong.json()["detail"]
        assert httpx.post(f"{server.url}/api/deliberation/runs/{run_id}/feedback",
                          json={"decision": "accepted"}).status_code == 404  # not a deliberation
        whole = httpx.post(f"{server.url}/api/deliberation/runs/{deliberation}/feedback", json={"decision": "rejected"})
        assert whole.status_code == 200 and set(whole.json()["decisions"].values()) == {"rejected"}
