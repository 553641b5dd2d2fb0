"""The built-in agent types, as data: what every new board registry starts with.

Both sides need them: the storage backends (folder, PostgreSQL) write them into a new
registry, and the agents (:mod:`moot.teams.board.agents`, ``builtin_agents``, ``breakdown``,
``echo``) are built from them. Keeping them here lets the backends stay free of the agents'
code (and of the runtime and models it pulls in).
"""

from __future__ import annotations

from moot.teams.board.backend import AgentSpec

ECHO_SPEC = AgentSpec(
    name="echo",
    capabilities=["echo"],
    instructions="Completes any task with {'echo': description}; no model. For tests and benchmarks.",
    threshold=0,
)
BREAKDOWN_SPEC = AgentSpec(
    name="breakdown",
    capabilities=["task_decomposition", "planning"],
    instructions="Split goals that have several parts into concrete steps; leave single steps to specialists.",
    tools=[],
    threshold=8,
)
"""The seed's TaskBreakdownAgent: threshold 8, so it only takes genuinely composite work."""
SEARCH_SPEC = AgentSpec(
    name="search",
    capabilities=["research", "document_search"],
    instructions="Search the local documents and knowledge bases with search_documents, then answer from what you found.",
    tools=["search_documents"],
    threshold=6,
)
FILE_SPEC = AgentSpec(
    name="file",
    capabilities=["file_operations"],
    instructions=(
        "Read, write and list files inside the workspace. Input documents are under context/, "
        "deliverables go under results/: use the exact paths from 'workspace files', and list_files "
        "when unsure. Answer with what the files say, not with the path."
    ),
    tools=["read_file", "write_file", "list_files"],
    threshold=6,
)
TERMINAL_SPEC = AgentSpec(
    name="terminal",
    capabilities=["command_execution"],
    instructions="Run one allow-listed read-only command in the workspace with run_command and report its output.",
    tools=["run_command"],
    threshold=6,
)

MODEL_SPECS = (BREAKDOWN_SPEC, SEARCH_SPEC, FILE_SPEC, TERMINAL_SPEC)
"""The model-driven built-ins (``terminal`` is registered but refuses to run unless enabled)."""
BUILTIN_SPECS = (ECHO_SPEC, *MODEL_SPECS)
"""Every built-in type, in the order a new registry lists them."""


def builtin_specs() -> list[AgentSpec]:
    """The agent types present in every new registry: ``echo`` plus the model-driven ones."""
    return list(BUILTIN_SPECS)


__all__ = ["BREAKDOWN_SPEC", "BUILTIN_SPECS", "ECHO_SPEC", "FILE_SPEC", "MODEL_SPECS", "SEARCH_SPEC", "TERMINAL_SPEC",
           "builtin_specs"]
