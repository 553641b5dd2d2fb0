"""Shared set-up for the research tests: a tiny real repository and a scripted research model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel

APP = '''"""A tiny web app: routes requests to handlers."""


def parse_request(raw):
    """Split a raw request into method and path."""
    method, path = raw.split(" ", 1)
    return method, path


def route_request(method, path):
    """Pick the handler for a path."""
    if path == "/":
        return index_handler
    return not_found


def index_handler():
    return "hello"


def not_found():
    return "404"
'''

STORE = '''"""Keeps sessions in memory."""


class SessionStore:
    """Stores sessions by id."""

    def __init__(self):
        self.sessions = {}

    def save_session(self, sid, data):
        self.sessions[sid] = data

    def load_session(self, sid):
        return self.sessions.get(sid)
'''


def make_repo(root: Path) -> Path:
    return write_repo(root, {"app/server.py": APP, "app/store.py": STORE, 
                             "README.md": "# tiny\nA web app with a session store.\n"})


def user(request: ModelRequest) -> str:
    return str(request.messages[1].content)


class ResearchScript:
    """Answers each phase's request by the calling agent's name (``request.agent``); records what happened."""

    def __init__(self, plan: list[dict[str, Any]], *, synth: str, verdicts: list[dict[str, Any]] | None = None,
                 barrier: asyncio.Barrier | None = None, researcher_tool_loops: int = 0,
                 coverage_note: str = "found the store", finding_note: str = "saves a session",
                 single: str = "Requests are parsed by `parse_request` in app/server.py:4.") -> None:
        self.plan = plan
        self.synth = synth
        self.coverage_note = coverage_note
        self.finding_note = finding_note
        self.single = single
        self.verdicts = verdicts or []
        self.barrier = barrier
        self.researcher_tool_loops = researcher_tool_loops
        self.researcher_tasks: list[str] = []
        self.log: list[tuple[str, str]] = []

    async def __call__(self, request: ModelRequest) -> Any:
        if (request.agent or "").startswith("line-picker"):  # it quotes the first line it is shown
            self.log.append(("line-picker", user(request)))
            return first_lines(request, 1)
        agent = request.agent or ""
        if agent == "planner":
            self.log.append(("planner", ""))
            return {"sub_questions": self.plan}
        if agent.startswith("researcher-"):
            task = user(request)
            self.log.append(("researcher-start", task))
            if len(request.messages) == 2:
                self.researcher_tasks.append(task)
                if self.barrier is not None:  # every researcher must be in flight at once to pass
                    await asyncio.wait_for(self.barrier.wait(), 10)
            if self.researcher_tool_loops:
                from moot.models.testing import tool_call
                return tool_call("search_code", query="session")
            schema = request.output.json_schema if request.output else None
            chosen = {"symbols": first_offered(schema)}
            if "findings" not in (schema or {}).get("properties", {"findings": None}):
                return chosen  # asked only to choose: it writes nothing else
            return {**chosen,
                    "findings": [{"path": "app/store.py", "start_line": 9, "end_line": 10, "note": self.finding_note},
                                 {"path": "app/ghost.py", "start_line": 3, "end_line": 4, "note": "invented"}],
                    "coverage_note": self.coverage_note, "sufficient": True}
        if agent == "synthesizer":
            self.log.append(("synthesizer", user(request)))
            return self.synth
        if agent == "verifier":
            self.log.append(("verifier", user(request)))
            return {"verdicts": self.verdicts}
        if agent == "single-agent":
            self.log.append(("single", user(request)))
            return self.single
        raise AssertionError(f"unexpected request from agent {agent!r}")


def first_lines(request: ModelRequest, count: int) -> dict[str, Any]:
    """The line picker's answer as the 0.5B model gives it: the first ``count`` numbers shown,
    and, when the schema asks for deciding conditions first, the first condition it offers."""
    import re

    shown = [int(n) for n in re.findall(r"^(\d+)\. ", str(request.messages[-1].content), re.M)]
    properties = (request.output.json_schema if request.output else {}).get("properties", {})
    if "conditions" in properties:
        offered = (properties["conditions"].get("items") or {})
        first = (offered.get("enum") or [offered.get("const")])[:1]
        return {"conditions": first, "lines": [n for n in shown[:count] if n not in first]}
    return {"lines": shown[:count]}


def first_offered(schema: dict[str, Any] | None) -> list[str]:
    """The first symbol a researcher's report schema offers (the 0.5B model's habit: it takes
    the first name it is shown); none when the schema offers none."""
    items = ((schema or {}).get("properties", {}).get("symbols") or {}).get("items") or {}
    offered = items.get("enum") or ([items["const"]] if "const" in items else [])
    return list(offered[:1])


def model_for(script: ResearchScript) -> FunctionModel:
    return FunctionModel(script)


PLAN_3 = [
    {"question": "How is a request parsed?", "target_area": "app/server.py", "initial_actions": ["parse_request"],
     "verification_hint": "check the split"},
    {"question": "How is a handler chosen for a path?", "target_area": "app/server.py", "initial_actions": ["route_request"],
     "verification_hint": ""},
    {"question": "Where are sessions kept?", "target_area": "app/store.py", "initial_actions": ["SessionStore"],
     "verification_hint": ""},
]


# --------------------------------------------------------------------------- a fake OpenAI-compatible server

import json  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402

from openai_stub import openai_compatible_server  # noqa: E402


def fake_answer(body: dict[str, Any]) -> str:
    """The research phases answered by the output schema each asks for (what goes over HTTP), as
    JSON text; the synthesizer asks for none."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    if schema == "PlannerOutput":
        return json.dumps({"sub_questions": PLAN_3[:2]})
    if schema == "ResearcherReport":
        schema_body = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        return json.dumps({"symbols": first_offered(schema_body),
                           "findings": [{"path": "app/server.py", "start_line": 4, "end_line": 7, "note": "parses"}],
                           "coverage_note": "found it", "sufficient": True})
    if schema == "VerifierOutput":
        return json.dumps({"verdicts": [{"claim": 1, "status": "VERIFIED", "correction": ""}]})
    return "Requests are split by `parse_request` (app/server.py:4)."


@contextmanager
def fake_openai_server() -> Iterator[str]:
    """A model string for an OpenAI-compatible server on loopback that plays the research phases."""
    with openai_compatible_server(fake_answer) as model:
        yield model


def write_repo(root: Path, files: dict[str, str]) -> Path:
    """A repository under ``root`` with ``files`` (relative path → text)."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def index_of(repo: Path, tmp_path: Path) -> Iterator[Any]:
    """The code index of ``repo`` for a fixture to yield, closed after the test."""
    from moot.codeindex import CodeIndex

    built = CodeIndex.build(repo, db_path=tmp_path / "index.db")
    yield built
    built.close()

