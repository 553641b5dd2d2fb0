"""MCP tool servers for moot's agents (issue #36): a real MCP server written with the SDK
(tests/mcp_test_server.py), started over stdio or reached over HTTP, called by agents on
scripted models through the runtime's tool path."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot.errors import ConfigError
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, ScriptedModel, tool_call
from moot.runtime import Budget, RunStore, SubAgent, SubAgentTask, TaskGraph
from moot.runtime.mcp import MCPToolServer, merge_servers, servers_from_config
from mcp_test_server import wait_for_port

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "mcp_test_server.py")]


def server(**options: Any) -> MCPToolServer:
    return MCPToolServer("tests", command=SERVER + options.pop("args", []), **options)


def tool_messages(result: Any) -> list[str]:
    return [str(m.content) for m in result.transcript if type(m).__name__ == "ToolResultMessage"]


def test_an_agent_lists_converts_and_calls_the_servers_tools_with_their_schemas() -> None:
    seen: list[ModelRequest] = []
    script = iter([tool_call("add", a=2, b=3), tool_call("add", a="two", b=3), "The sum is 5."])

    def model(request: ModelRequest) -> Any:
        seen.append(request)
        return next(script)

    agent = SubAgent("adder", "adds", "Use the tools.", tools=[server(args=["--only", "add,hang"])], model=FunctionModel(model))
    result = asyncio.run(agent.run("What is 2 + 3?"))
    assert result.ok and result.output == "The sum is 5."
    tools = {t.name: t for t in seen[0].tools}
    assert set(tools) == {"add", "hang"}  # --only: the two tools this server has
    assert tools["add"].description == "Add two integers."
    assert tools["add"].parameters["properties"]["a"]["type"] == "integer"
    assert tools["add"].parameters["required"] == ["a", "b"]
    first, second = tool_messages(result)
    assert first == "5"
    # the schema is checked here, before anything is sent: the model reads what to fix
    assert second.startswith("error: invalid arguments for tool 'add': a: 'two' is not of type 'integer'")


def test_a_hanging_tool_fails_within_its_timeout_and_the_run_finishes(tmp_path: Path) -> None:
    tools = server(args=["--only", "add,hang"], timeout_s=2)
    model = ScriptedModel([tool_call("hang", topic="rivers"), tool_call("add", a=1, b=1), "Done: 2."])
    agent = SubAgent("worker", "looks things up", "Use the tools.", tools=[tools], model=model)
    store = RunStore(tmp_path / "runs.db")
    graph = TaskGraph([agent], [SubAgentTask("worker", "Look up rivers, then add 1 and 1.", id="look")])
    result = graph.run_sync(budget=Budget(deadline_s=120), store=store, name="hang test")
    assert result.status == "completed" and result.output == "Done: 2."
    hang, add = tool_messages(result.results["look"])
    assert hang == "error: tool 'hang' did not finish within 2 s" and add == "2"
    calls = [e.payload for e in store.events(result.run_id) if e.type.value == "tool_call"]
    assert [(c["tool"], c["ok"], c["server"]) for c in calls] == [("hang", False, "mcp:tests"), ("add", True, "mcp:tests")]


def test_a_hanging_tool_without_its_own_timeout_ends_at_the_runs_deadline(tmp_path: Path) -> None:
    model = ScriptedModel([tool_call("hang"), "never reached"])
    agent = SubAgent("worker", "looks things up", "Use the tools.", tools=[server(args=["--only", "add,hang"], timeout_s=None)],
                     model=model)
    graph = TaskGraph([agent], [SubAgentTask("worker", "Look it up.", id="look")])
    result = graph.run_sync(budget=Budget(deadline_s=10), store=RunStore(tmp_path / "runs.db"), name="deadline")
    assert result.status == "stopped" and "deadline" in result.stop_reason  # finished, not hung
    (hang,) = tool_messages(result.results["look"])
    assert hang.startswith("error: tool 'hang' did not finish within")


def test_tools_are_listed_once_per_run_for_every_agent_of_that_run() -> None:
    tools = server(args=["--only", "add,hang"])
    model = ScriptedModel(by_agent={"a": [tool_call("add", a=1, b=2), "3"], "b": [tool_call("add", a=2, b=2), "4"]})
    agents = [SubAgent("a", "adds", "Add.", tools=[tools], model=model), SubAgent("b", "adds", "Add.", tools=[tools], model=model)]
    graph = TaskGraph(agents, [SubAgentTask("a", "1+2"), SubAgentTask("b", "2+2")])
    assert graph.run_sync(budget=Budget(max_calls=10)).status == "completed"
    assert tools.list_calls == 1
    model.by_agent.update({"a": [tool_call("add", a=1, b=2), "3"], "b": ["4"]})
    graph.run_sync(budget=Budget(max_calls=10))
    assert tools.list_calls == 2  # a new run lists again (the server's tools may have changed)


def test_name_filters_and_a_prefix_choose_what_the_model_sees() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> Any:
        seen.append(request)
        return "ok"

    only = SubAgent("x", "", "", tools=[server(include=["a*", "b*"], exclude=["big"])], model=FunctionModel(model))
    asyncio.run(only.run("hi"))
    assert [t.name for t in seen[-1].tools] == ["add"]
    prefixed = SubAgent("x", "", "", tools=[server(include=["add"], prefix="calc")], model=FunctionModel(model))
    asyncio.run(prefixed.run("hi"))
    assert [t.name for t in seen[-1].tools] == ["calc_add"]


def test_results_are_cut_at_the_size_limit() -> None:
    model = ScriptedModel([tool_call("big", n=50_000), "ok"])
    agent = SubAgent("x", "", "", tools=[server(max_result_chars=1000)], model=model)
    (text,) = tool_messages(asyncio.run(agent.run("go")))
    assert text.startswith("x" * 1000) and text.endswith("[cut: 49000 more characters]")


def test_a_server_that_dies_gives_a_clear_error_and_is_started_again_for_the_next_call() -> None:
    model = ScriptedModel([tool_call("crash"), tool_call("add", a=20, b=22), tool_call("fail", reason="no such row"), "42"])
    agent = SubAgent("x", "", "", tools=[server()], model=model)
    crash, add, fail = tool_messages(asyncio.run(agent.run("go")))
    assert crash.startswith("error: tool 'crash' raised MCPServerError: MCP server 'tests'")
    assert "stopped answering" in crash and "crashing on purpose" in crash  # its stderr says why
    assert add == "42"
    assert fail.startswith("error: tool 'fail'") and "no such row" in fail


def test_a_server_that_cannot_start_leaves_the_agent_running_without_its_tools(tmp_path: Path) -> None:
    broken = MCPToolServer("broken", command=[sys.executable, "-c", "import sys; print('no config file', file=sys.stderr); sys.exit(3)"])
    missing = MCPToolServer("missing", command=["moot-no-such-server-binary"])
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> Any:
        seen.append(request)
        return "answered without tools"

    agent = SubAgent("x", "", "", tools=[broken, missing], model=FunctionModel(model))
    store = RunStore(tmp_path / "runs.db")
    result = TaskGraph([agent], [SubAgentTask("x", "go")]).run_sync(store=store, budget=Budget(deadline_s=60))
    assert result.status == "completed" and seen[0].tools == ()
    failures = {e.payload["tool"]: e.payload["error"] for e in store.events(result.run_id) if e.type.value == "tool_call"}
    assert "could not be started" in failures["broken:list_tools"] and "no config file" in failures["broken:list_tools"]
    assert "could not be started" in failures["missing:list_tools"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_reached_by_url_over_streamable_http() -> None:
    port = _free_port()
    proc = subprocess.Popen([*SERVER, "--http", str(port)], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        remote = MCPToolServer.parse(f"calc=http://127.0.0.1:{port}/mcp", include=["add"])
        agent = SubAgent("x", "", "", tools=[remote], model=ScriptedModel([tool_call("add", a=40, b=2), "42"]))
        result = asyncio.run(agent.run("go"))
        assert tool_messages(result) == ["42"] and result.output == "42"
    finally:
        proc.terminate()
        proc.wait(10)


def test_server_specs_from_the_command_line_and_moot_toml() -> None:
    cli = MCPToolServer.parse("notes=python notes_server.py --db 'my notes.db'")
    assert cli.command == ["python", "notes_server.py", "--db", "my notes.db"]
    assert MCPToolServer.parse("search=https://tools.example/mcp").url == "https://tools.example/mcp"
    table = {"fs": "npx -y @modelcontextprotocol/server-filesystem .",
             "notes": {"command": "python notes.py", "tools": ["read_*"], "timeout_s": 5}}
    fs, notes = servers_from_config(table)
    assert fs.command[:2] == ["npx", "-y"] and notes.include == ["read_*"] and notes.timeout_s == 5
    merged = merge_servers([fs, notes], [cli])
    assert [s.name for s in merged] == ["fs", "notes"] and merged[1].command[0] == "python"
    for bad, words in [("nameonly", "NAME=COMMAND"), ("=cmd", "NAME=COMMAND"), ("bad name=cmd", "short identifier"),
                       ("x=ftp://host/mcp", None)]:
        if words is None:
            assert MCPToolServer.parse(bad).command == ["ftp://host/mcp"]  # not a URL: taken as a command
            continue
        with pytest.raises(ConfigError, match=words):
            MCPToolServer.parse(bad)
    with pytest.raises(ConfigError, match="unknown key 'timeout'"):
        servers_from_config({"x": {"command": "a", "timeout": 3}})


def test_mcp_servers_table_in_moot_toml_and_the_cli_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_cli_conventions import moot, one_error_line

    from moot.cli._options import mcp_servers

    config = tmp_path / "moot.toml"
    config.write_text('model = "local"\n\n[mcp.servers]\nscratch = "python scratch.py"\n\n'
                      '[mcp.servers.search]\nurl = "http://127.0.0.1:9000/mcp"\ntools = ["search"]\n')
    monkeypatch.setenv("MOOT_CONFIG", str(config))
    servers = mcp_servers(["scratch=python other.py"])
    assert [(s.name, s.describe()) for s in servers] == [("scratch", "python other.py"),
                                                         ("search", "http://127.0.0.1:9000/mcp")]
    home = tmp_path / "home"
    shown = moot("config", "--json", home=home, env={"MOOT_CONFIG": str(config)})
    assert shown.returncode == 0, shown.stderr  # the table is not taken for an unknown setting
    config.write_text('[mcp]\nservers = "x"\n')
    result = moot("research", "Where?", "--repo", str(tmp_path), home=home, env={"MOOT_CONFIG": str(config)})
    assert result.returncode == 2 and "[mcp.servers]" in one_error_line(result)
    result = moot("graph", "Why?", "--source", str(config), "--mcp", "oops", home=home)
    assert result.returncode == 2 and "NAME=COMMAND" in one_error_line(result)


def test_the_graph_teams_mapper_skeptic_and_hypothesizer_use_a_tool_server_and_behave_as_before_without(tmp_path: Path) -> None:
    from test_graph_support import GraphScript, make_sources

    from moot.teams.graph import GraphConfig, GraphTeam

    class Thinking(GraphScript):
        """Each tool-using agent writes one thought first (a scratchpad call), then answers as before."""

        def __init__(self) -> None:
            super().__init__()
            self.tools_seen: dict[str, set[str]] = {}

        async def __call__(self, request: ModelRequest) -> Any:
            self.tools_seen.setdefault(request.agent or "", set()).update(t.name for t in request.tools)
            if request.tools and type(request.messages[-1]).__name__ != "ToolResultMessage":
                return tool_call("add", a=len(request.messages), b=1)
            return await super().__call__(request)

    sources = make_sources(tmp_path / "src")
    plain_script, tool_script = GraphScript(), Thinking()
    question = "How does the Ostby mill affect Lake Mira?"
    plain = GraphTeam(sources, model=FunctionModel(plain_script), config=GraphConfig(iterations=2, max_calls=40)).ask_sync(question)
    scratch = server(args=["--only", "add"])
    store = RunStore(tmp_path / "runs.db")
    with_tools = GraphTeam(sources, model=FunctionModel(tool_script), store=store, tools=[scratch],
                           config=GraphConfig(iterations=2, max_calls=60)).ask_sync(question)
    assert {a for a, names in tool_script.tools_seen.items() if "add" in names} == {"mapper", "skeptic", "hypothesizer"}
    assert not tool_script.tools_seen.get("quantifier") and not tool_script.tools_seen.get("placeholder")
    # the scratchpad changes nothing the agents decide: the same graph as without it
    assert sorted(n.label for n in with_tools.scaffold.entities()) == sorted(n.label for n in plain.scaffold.entities())
    assert len(with_tools.scaffold.edges) == len(plain.scaffold.edges)
    calls = [e.payload for e in store.events(with_tools.run_id) if e.type.value == "tool_call"]
    assert calls and all(c["server"] == "mcp:tests" and c["ok"] for c in calls)
    assert scratch.list_calls == 1  # one listing for the whole run
    # without a tool server no graph agent is offered a tool, and each keeps its two turns
    from moot.teams.graph import agents as ag

    from moot.teams.graph.vocabulary import DEFAULT

    mapper = ag.mapper_agent("local", ["a", "b", "c"], DEFAULT)
    assert mapper.max_turns == 2 and mapper.tools == ()
