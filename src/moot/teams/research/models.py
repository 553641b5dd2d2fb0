"""The contracts between the research phases (the code-research design's names), as pydantic models.

Each phase consumes the previous phase's typed output; nothing is shared or mutated between
agents, so researchers running in parallel cannot interfere with each other.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.models.base import Usage
from moot.teams.research.quotes import CodeLine
from moot.teams.research.resolve import ResolvedSymbol

Mode = Literal["auto", "single", "multi", "baseline"]
Status = Literal["VERIFIED", "CORRECTED", "UNVERIFIABLE"]


class SubQuestion(BaseModel):
    """One part of the question, scoped to one subsystem."""

    question: str = Field(description="the sub-question, one sentence")
    target_area: str = Field(default="", description="folder or file most likely to hold the answer")
    initial_actions: list[str] = Field(default_factory=list, description="1-2 search queries or symbol names to try first")
    verification_hint: str = Field(default="", description="what the verifier should check for this part")


class ResearchPlan(BaseModel):
    """The planner's decomposition of the question."""

    original_question: str
    sub_questions: list[SubQuestion] = Field(default_factory=list)
    note: str = ""
    """Why the plan looks as it does (e.g. the planner failed and the question was kept whole)."""


class Finding(BaseModel):
    """One piece of evidence: where it is and what it shows."""

    tool: str
    """``search_code``, ``resolve_symbol``, ``read_file`` or ``report`` (the researcher's own claim)."""
    args: dict[str, Any] = Field(default_factory=dict)
    result_summary: str = ""
    relevant_code: str = ""
    """A few numbered lines of the code, read from the index (not from the model's memory)."""
    file_path: str
    line_range: tuple[int, int] | None = None

    def location(self) -> str:
        if self.line_range is None:
            return self.file_path
        start, end = self.line_range
        return f"{self.file_path}:{start}" if start == end else f"{self.file_path}:{start}-{end}"


class EvidenceBundle(BaseModel):
    """What one researcher gathered for one sub-question."""

    sub_question: str
    findings: list[Finding] = Field(default_factory=list)
    coverage_note: str = ""
    """What was and was not found."""
    researcher: str = ""
    stop_reason: str = ""
    turns: int = 0
    resolved: list[ResolvedSymbol] = Field(default_factory=list)
    """The symbols this evidence is about, resolved from the index (definition, callers, callees)."""
    nominated: list[str] = Field(default_factory=list)
    """The symbols the researcher chose, from the names its search results showed."""


class VerificationResult(BaseModel):
    """The verdict on one claim of the answer."""

    claim: str
    status: Status
    correction: str = ""
    citation: str = ""
    """The ``path:line`` the claim cited, when it cited one."""
    method: Literal["citation", "name", "condition", "model"] = "citation"
    """``citation``: its ``path:line`` checked against the index; ``name``: it names code that is
    nowhere in the repository (removed); ``condition``: an "if / when / unless" statement held
    to the conditions quoted from the code; ``model``: judged by the verifier agent."""


class PhaseUsage(BaseModel):
    """Usage of one phase (tokens, calls, cost) and its wall time."""

    phase: str
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0


class MultiAgentResult(BaseModel):
    """Everything a research run produced."""

    question: str
    answer: str
    mode: Literal["single", "multi", "baseline"]
    requested_mode: Mode = "auto"
    routing_rule: str = ""
    """Which rule chose the mode (for ``auto``), or ``requested`` when the caller chose it."""
    plan: ResearchPlan | None = None
    evidence: list[EvidenceBundle] = Field(default_factory=list)
    verification: list[VerificationResult] = Field(default_factory=list)
    draft_answer: str = ""
    """The synthesizer's answer before the verifier revised it (same as ``answer`` when nothing changed)."""
    resolved: list[ResolvedSymbol] = Field(default_factory=list)
    """The symbols the answer's index section states facts about (from the symbol graph)."""
    quoted: list[CodeLine] = Field(default_factory=list)
    """Source lines that answer the question: picked by the model, quoted verbatim by moot."""
    conditions: list[CodeLine] = Field(default_factory=list)
    """For a how-question, the deciding conditions the answer states in words beside the quoted
    line: chosen by the model among those read from the code's control flow, or quoted for a
    statement of the answer that rests on one (``quoted`` holds the other lines)."""
    usage: Usage = Field(default_factory=Usage)
    usage_by_phase: dict[str, PhaseUsage] = Field(default_factory=dict)
    seconds: float = 0.0
    run_id: str = ""
    status: str = "completed"
    stop_reason: str = ""

    def verified_statements(self) -> int:
        """Statements of the answer that were checked against the code: each written by moot from
        the index, each line quoted from the files, each claim the verifier found VERIFIED."""
        from moot.teams.research.resolve import INDEX_SECTION_LIMIT

        return (min(len(self.resolved), INDEX_SECTION_LIMIT) + len(self.quoted) + len(self.conditions)
                + sum(1 for v in self.verification if v.status == "VERIFIED" and v.method != "condition"))

    def stated_conditions(self) -> list[str]:
        """The deciding conditions as the answer states them (words, location, quoted line)."""
        from moot.teams.research.conditions import statement

        return [statement(c) for c in self.conditions]

    def citations(self) -> list[str]:
        """Every ``path:line`` the final answer cites."""
        from moot.teams.research.citations import find_citations

        return [c.text for c in find_citations(self.answer)]

    def to_json(self) -> dict[str, Any]:
        """The CLI's and the API's JSON shape."""
        data = self.model_dump(mode="json")
        data["usage_by_phase"] = {k: {**v["usage"], "seconds": v["seconds"]} for k, v in data["usage_by_phase"].items()}
        data["citations"] = self.citations()
        return data
