"""The API's typed shapes: what every endpoint accepts and answers, so /openapi.json is complete.

Team results that already are pydantic models (a learning :class:`~moot.teams.learning.Answer`,
a :class:`~moot.teams.deliberation.DeliberationResult`, a board task) are answered as they are;
the shapes here cover the run history, background runs and the requests.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TeamName = Literal["research", "learning", "graph", "deliberation", "board", "other"]


class UsageOut(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost_usd: float = 0.0


class RunSummary(BaseModel):
    """One row of the runs list."""

    run_id: str
    name: str
    team: TeamName
    status: str
    """``running``, ``completed``, ``stopped`` (a budget ended it), ``failed``, ``cancelled``, or ``queued``."""
    stop_reason: str | None = None
    started: float
    """Unix seconds."""
    finished: float | None = None
    duration_s: float | None = None
    usage: UsageOut = Field(default_factory=UsageOut)
    parent_run_id: str | None = None
    """The run that holds this one (a board goal holds its agents' calls), if any."""


class RunPage(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunSummary]
    total: int
    """How many runs match the filter in all."""
    offset: int
    limit: int


class ModelCall(BaseModel):
    """One model request and its response inside a span."""

    turn: int = 0
    model: str | None = None
    started: float
    finished: float | None = None
    latency_s: float | None = None
    queue_s: float | None = None
    """Of the latency, time spent waiting (a concurrency slot, an engine slot); ``None`` on
    runs recorded before requests were timed."""
    prompt_s: float | None = None
    """Prompt evaluation, when the engine reports it."""
    generation_s: float | None = None
    """Generation (with the prompt's evaluation when ``prompt_s`` is ``None``)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    finish_reason: str | None = None
    tool_calls: list[str] = Field(default_factory=list)
    messages: list[dict[str, Any]] | None = None
    """The prompt, only when the run recorded content (``--record-content``)."""
    text: str | None = None
    """The response text, only when the run recorded content."""


class ToolCallOut(BaseModel):
    ts: float
    tool: str
    arguments: str | None = None
    result: str | None = None
    error: str | None = None


class Span(BaseModel):
    """One task of a run: an agent's work from start to end, on its agent's lane."""

    task_id: str
    agent: str
    status: str
    started: float
    finished: float | None = None
    depends_on: list[str] = Field(default_factory=list)
    usage: UsageOut = Field(default_factory=UsageOut)
    stop_reason: str | None = None
    error: str | None = None
    model_calls: list[ModelCall] = Field(default_factory=list)
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    failed_tools: int = 0
    """How many of its tool calls failed (the page marks the span, even when the task went on)."""
    waited_s: float = 0.0
    """Its model requests' waiting time, summed."""
    output: Any = None
    """The task's structured output or text, as recorded."""
    child_run_id: str | None = None
    """Set when the span is a run this run holds (drawn on the ``runs held`` lanes)."""
    name: str | None = None
    """That held run's name."""


class KeptResult(BaseModel):
    """Something a run that did not complete kept: a finished task's output, or a finished run it holds."""

    task_id: str
    agent: str
    status: str
    output: Any = None
    child_run_id: str | None = None
    name: str | None = None


class TeamEvent(BaseModel):
    """Something a team announced in its own words (a node added, a debate round)."""

    seq: int
    ts: float
    type: str
    agent: str | None = None
    task_id: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


class BudgetLine(BaseModel):
    """One limit of the run's budget and how much of it the run used."""

    which: str
    """``calls``, ``tokens``, ``cost_usd`` or ``seconds``."""
    limit: float
    used: float


class RunDetail(RunSummary):
    """Everything recorded about one run: its spans on agent lanes, team events, budget, result."""

    lanes: list[str] = Field(default_factory=list)
    """Agents in the order they first started: one timeline lane each."""
    children: list[RunSummary] = Field(default_factory=list)
    """Runs this run holds, oldest first (each has its own page)."""
    spans: list[Span] = Field(default_factory=list)
    team_events: list[TeamEvent] = Field(default_factory=list)
    budget: list[BudgetLine] = Field(default_factory=list)
    budget_events: list[TeamEvent] = Field(default_factory=list)
    """Budget warnings and stops, with their reasons."""
    stop_reason_text: str
    """The stop reason in plain words."""
    usage_by_agent: dict[str, UsageOut] = Field(default_factory=dict)
    output_kind: str | None = None
    """What ``output`` holds: ``graph``, ``deliberation``, ``answer``, ``research`` or none."""
    output: dict[str, Any] | None = None
    """The team's final result (the scaffold, the debates, the answer), when it recorded one."""
    content_recorded: bool = False
    """Whether prompts and responses were recorded for this run."""
    can_cancel: bool = False
    """This server runs it (``DELETE /api/runs/{id}`` cancels it); a run another process runs is
    cancelled where it runs."""
    can_rerun: bool = False
    """The request that started it was recorded (it came over HTTP): ``POST /api/runs/{id}/rerun``
    runs it again with the same inputs."""
    kept: list[KeptResult] = Field(default_factory=list)
    """For a run that was cancelled, stopped or failed: what it kept."""
    timing: dict[str, Any] | None = None
    """Where the model time went: the requests' waiting, prompt and generation seconds, the
    wall time spent only waiting, and ``sentence`` saying it in words."""
    events: int = 0
    """How many events the run recorded."""
    prompt: str | None = None
    mode: str | None = None
    repo: str | None = None
    error: str | None = None
    result: dict[str, Any] | None = None
    """For a run this server started: its result as the start endpoint's team returns it."""


class RunStarted(BaseModel):
    run_id: str
    status: str
    team: TeamName = "research"
    events: str
    """Where to stream its progress (Server-Sent Events)."""
    page: str = ""
    """The run's page in the web UI."""


class Health(BaseModel):
    ok: bool
    version: str
    active_runs: int
    open_streams: int
    queued_runs: int
    max_concurrent: int
    max_queued: int


class CancelledCount(BaseModel):
    cancelled: int


class QueryRequest(BaseModel):
    """A question about a repository."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=4000, description="The question about the code.")
    repo: str = Field(min_length=1, max_length=4096, description="Path of the repository on the server.")
    mode: Literal["auto", "single", "multi"] = Field("auto", description="auto routes by the question's shape.")


class LearnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=60_000, description="The content to learn facts from.")
    source: str = Field("api", min_length=1, max_length=300, description="Where it came from (shown with each fact).")
    published: str | None = Field(None, max_length=40, description="When it was published (ISO date), if known.")


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    mode: Literal["auto", "single", "multi"] = "auto"


class KnowledgeBaseInfo(BaseModel):
    name: str
    facts: int
    current_facts: int
    superseded_facts: int
    episodes: int
    sources: list[str] = Field(default_factory=list)
    entities: list[tuple[str, int]] = Field(default_factory=list)


class FactOut(BaseModel):
    id: int
    content: str
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    source: str | None = None
    source_date: str | None = None
    superseded: bool = False


class FactPage(BaseModel):
    facts: list[FactOut]
    total: int


class GraphRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    sources: list[str] = Field(default_factory=list, max_length=50,
                               description="Files on the server (under a --repo-root) to reason over.")
    kb: str | None = Field(None, max_length=300, description="A knowledge base to reason over instead of files.")
    iterations: int = Field(3, ge=1, le=10)
    vocabulary: Literal["default", "family"] = Field(
        "default", description="What the graph is drawn with: default (organisations, places, substances) or family (people).")


class DeliberationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request: str = Field(min_length=1, max_length=4000, description="What you want advice on.")
    data: str = Field(min_length=1, max_length=4096, description="A folder of exports on the server (under a --repo-root).")
    mode: Literal["quick", "standard", "deep"] = "standard"
    now: str | None = Field(None, max_length=40, description="The time to deliberate at (ISO), default now.")


class BoardTaskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, max_length=4000)
    type: str = Field("general", max_length=80)
    requirements: list[str] = Field(default_factory=list, max_length=20)
    priority: int = 0


class BoardColumns(BaseModel):
    """The board as four columns, newest first in each (each item a board task)."""

    board: str
    counts: dict[str, Any]
    """Tasks per state, and per type (``by_type``)."""
    pending: list[dict[str, Any]] = Field(default_factory=list)
    active: list[dict[str, Any]] = Field(default_factory=list)
    completed: list[dict[str, Any]] = Field(default_factory=list)
    failed: list[dict[str, Any]] = Field(default_factory=list)


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=16_000)
    system: str | None = Field(None, max_length=8000)
    max_tokens: int = Field(512, ge=1, le=8192)
    temperature: float | None = Field(None, ge=0.0, le=2.0)


class ChatReply(BaseModel):
    text: str
    model: str
    usage: UsageOut
    seconds: float


class LearningAnswer(BaseModel):
    """The learning team's answer, as ``moot ask --json`` prints it, with its question and full trace."""

    question: str
    answer: str
    mode: str
    intent: str
    sub_agents: list[str]
    facts_used: list[dict[str, Any]]
    """Each fact with its ``id``, ``content``, ``source`` and ``source_date``."""
    confidence: float
    knows: bool
    answered: bool
    usage: UsageOut
    seconds: float
    run_id: str
    trace: dict[str, Any]
    """Intent and how it was decided, the mode rule, retrieval strategy, facts, sub-agent steps, notes."""
    status: str


class ResearchAnswer(BaseModel):
    """The research team's answer, as ``moot research --json`` prints it."""

    model_config = ConfigDict(extra="allow")

    question: str = ""
    answer: str
    mode: str
    """``single``, ``multi`` or ``baseline``: the mode that ran."""
    requested_mode: str = "auto"
    routing_rule: str = ""
    plan: dict[str, Any] | None = None
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    """One bundle per researcher: its sub-question, findings with file:line locations, tool calls."""
    verification: list[dict[str, Any]] = Field(default_factory=list)
    """The verifier's check of each cited claim."""
    citations: list[str] = Field(default_factory=list)
    """Every ``path:line`` the final answer cites."""
    usage: UsageOut = Field(default_factory=UsageOut)
    usage_by_phase: dict[str, dict[str, float]] = Field(default_factory=dict)
    seconds: float = 0.0
    run_id: str = ""
    status: str = "completed"
    stop_reason: str = ""


class FeedbackRequest(BaseModel):
    """The user's decision about one insight of a deliberation (or, without ``insight_id``, about
    every debate resolution of it)."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["accepted", "rejected"]
    insight_id: str | None = Field(None, max_length=200)


class FeedbackState(BaseModel):
    """The user's decisions about a deliberation's insights: insight id → ``accepted``/``rejected``."""

    run_id: str
    decisions: dict[str, str] = Field(default_factory=dict)
