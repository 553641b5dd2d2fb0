"""Phase 2, a researcher: one sub-question, a fresh context, the code tools and its own budget.

Before the model's first turn the researcher searches the index for its sub-question and puts
the top hits in its task: a 0.5B model that starts from real code locations reports real
locations. The model then either reports at once (evidence sufficient: it stops early) or
calls a tool to look further. Every location it reports is checked against the index, and
the code shown in the evidence is read from the index, never taken from the model's text.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.codeindex import CodeIndex
from moot.models.base import ModelSettings
from moot.runtime import AgentProgress, AgentResult, EventBus, EventType, SubAgent, load_prompt
from moot.runtime.events import BoundEmitter, summarize
from moot.teams.research.citations import file_lines
from moot.teams.research.models import EvidenceBundle, Finding, SubQuestion
from moot.teams.research.relevance import definition
from moot.teams.research.resolve import MAX_CANDIDATES, MAX_RESOLVED, best_at, candidates, is_test_path, resolve, written_definitions, written_names
from moot.teams.research.verifier import unknown_names

SEED_HITS = 3
SNIPPET_CHARS = 500


class ReportedLocation(BaseModel):
    path: str = Field(description="file path as shown in a result")
    start_line: int
    end_line: int
    note: str = Field(default="", description="what this code does for the question, in a few words")


class ResearcherChoice(BaseModel):
    """What a researcher chooses: the definitions that answer its sub-question, from those offered."""

    symbols: list[str] = Field(default_factory=list, max_length=MAX_RESOLVED,
                               description="the functions or classes that answer the question, from the list given")


class ResearcherReport(ResearcherChoice):
    """The researcher's structured report: its choice, and the locations it read with its notes."""

    findings: list[ReportedLocation] = Field(default_factory=list, max_length=5)
    coverage_note: str = Field(default="", description="one sentence: what was found, what is missing")
    sufficient: bool = Field(default=True, description="whether the evidence answers the sub-question")


def report_type(names: list[str], *, notes: bool = True) -> type[ResearcherChoice]:
    """The report schema with ``symbols`` limited to ``names``: under constrained decoding the
    model can only nominate a symbol that its search results really show. ``notes``: the full
    report (locations, a note on each, a coverage note); else only the choice."""
    base = ResearcherReport if notes else ResearcherChoice
    if not names:
        return base
    field_type = list[Literal[tuple(names)]]  # type: ignore[valid-type]
    return create_model(  # type: ignore[call-overload, no-any-return]
        base.__name__,
        __base__=base,
        # Required, at least one: with an optional list the 0.5B researchers nominated nothing
        # on four of six httpx questions (only the definition at the top search hit was
        # resolved). Choosing among names it was shown is the one thing asked of it here.
        symbols=(field_type, Field(min_length=1, max_length=MAX_RESOLVED,
                                   description="the functions or classes that answer the question")),
    )


WRITTEN_SEEDS = 2
"""Definitions of code names the question writes that are shown before the search hits."""
PROSE_SEEDS = 1
"""Search hits in the docs (not the code) among the seeded hits."""
SEARCH_DEPTH = 3
"""How many times the seeded hits' number of search results are read, for code hits below docs."""


def seed_findings(index: CodeIndex, sub: SubQuestion, limit: int = SEED_HITS, *, written: Sequence[str] = (),
                  plain: bool = False) -> list[Finding]:
    """The first :data:`WRITTEN_SEEDS` of ``written`` (the definitions of the code names the
    sub-question writes, :func:`~moot.teams.research.resolve.written_definitions`), then the top
    search hits for the sub-question (and its first actions), as findings: ``limit`` in all.
    Of the hits, one section of the docs at most (more only when nothing else is found); a whole
    file's hit gives the definition in it that best matches the sub-question, after the hits on
    definitions; hits in test files come last. ``plain``: the search's hits in its own order (a
    whole file's hit only first), as the one-call baseline shows them.
    A written definition that the question does not name but uses code it names
    (:func:`~moot.teams.research.resolve.written_uses`) is labelled so."""
    queries = [sub.question, *sub.initial_actions[:1]]
    found: list[Finding] = []
    seen: set[tuple[str, int]] = set()

    def of_definition(info: Any, tool: str, args: dict[str, Any], why: str) -> Finding:
        seen.add((info.path, info.start_line))
        return Finding(
            tool=tool, args=args, result_summary=f"{info.path}:{info.start_line}-{info.end_line} "
            f"{info.kind} {info.qualified_name} ({why})",
            relevant_code=index.read_file(info.path, info.start_line, min(info.end_line, info.start_line + 12))[:SNIPPET_CHARS],
            file_path=info.path, line_range=(info.start_line, info.end_line),
        )  # fmt: skip

    def of_hit(hit: Any, query: str) -> Finding:
        seen.add((hit.path, hit.start_line))
        return Finding(tool="search_code", args={"query": query}, result_summary=hit.header(),
                       relevant_code=hit.snippet[:SNIPPET_CHARS], file_path=hit.path,
                       line_range=(hit.start_line, hit.end_line))

    named = {part for name in written_names(sub.question) for part in name.split(".")}
    for name in written[:WRITTEN_SEEDS]:
        info = definition(index, name)
        if info is not None:
            why = "named in the question" if info.name in named else "uses code the question names"
            found.append(of_definition(info, "resolve_symbol", {"name": name}, why))
    if plain:
        for query in queries:
            for hit in index.search(_plain(query), limit=limit):
                if (hit.path, hit.start_line) in seen or hit.kind == "module" and found:
                    continue
                found.append(of_hit(hit, query))
        return found[:limit]
    prose = 0
    in_files: list[Finding] = []
    in_tests: list[Finding] = []
    more_prose: list[Finding] = []
    for query in queries:
        for hit in index.search(_plain(query), limit=limit * SEARCH_DEPTH):
            if (hit.path, hit.start_line) in seen:
                continue
            if hit.kind == "module" and (found or in_files):
                # A whole file matched (a CommonJS file of many functions, most often): the
                # definition in it that the sub-question's words match best, after the hits
                # on definitions themselves (its words may match a helper's name, not the code).
                name = best_at(index, sub.question, hit.path, hit.start_line, hit.end_line)
                info = definition(index, name) if name else None
                if info is not None and info.kind != "module" and (info.path, info.start_line) not in seen:
                    finding = of_definition(info, "search_code", {"query": query},
                                            f"the best match in {info.path}, which the search found")
                    (in_tests if is_test_path(info.path) else in_files).append(finding)
                continue
            # One section of the docs first, more only where the code leaves room: a README that
            # words the question's words leads a search for them, and its sections name no
            # definition to read (the three hits for "the same option appears more than once"
            # were all README sections).
            finding = of_hit(hit, query)
            if hit.kind == "text":
                prose += 1
                (found if prose <= PROSE_SEEDS else more_prose).append(finding)
            else:
                (in_tests if is_test_path(hit.path) else found).append(finding)
    return (found + in_files + in_tests + more_prose)[:limit]


def offered_symbols(index: CodeIndex, question: str, written: Sequence[str], seeded: list[Finding]) -> list[str]:
    """The symbols a researcher is offered to nominate, best first: the definitions the question
    writes, then the repository functions they call (best matching first: a user who writes
    ``semver.satisfies(…)`` starts where it hands the work on), then the definitions at the
    seeded hits and what they call, ranked by the question's words."""
    named = list(written[:WRITTEN_SEEDS])
    called = candidates(index, [], question=question, calls_of=named) if named else []
    found = candidates(index, _locations(seeded), question=question)
    return list(dict.fromkeys([*written, *called, *found]))[:MAX_CANDIDATES]


def resolution_order(written: Sequence[str], chosen: Sequence[str], located: Sequence[str]) -> list[str]:
    """The names to resolve, in order: the names the question writes lead (two of them: the
    model's own choices keep room in the four resolved), then the model's choices, then the
    definitions at the reported and searched locations, then the rest of the written names."""
    return [*written[:WRITTEN_SEEDS], *chosen, *located, *written[WRITTEN_SEEDS:]]


ANCHOR_HITS = 1
"""Search hits of the whole question (those on code, not on the docs) whose best-matching
definition anchors a multi-mode run."""


def question_anchors(index: CodeIndex, question: str) -> tuple[list[str], list[str]]:
    """What the whole question points at, found with no model call: the definitions of the
    code names it writes, and the definition at its top search hit that best matches it — what
    single mode resolves before its model speaks. Multi mode's researchers work from the planner's
    sub-questions, a small model's paraphrases, which can drop the very names the question wrote
    (a question that named an option and the function it is passed to was researched in another
    file altogether). Returns (written, located) qualified names."""
    written = written_definitions(index, question)
    seeded = seed_findings(index, SubQuestion(question=question), written=written)
    # The top hits that hold a definition: a section of the docs, which often leads a search for
    # a question's words, holds none (it was the top hit of 46 of 156 blind questions).
    # (lazily: each hit's best definition is read from its code, and only the first is needed)
    located = list(islice((n for f in search_hits(seeded) if f.line_range
                           if (n := best_at(index, question, f.file_path, *f.line_range)) is not None), ANCHOR_HITS))
    return written[:WRITTEN_SEEDS], [n for n in located if n not in written[:WRITTEN_SEEDS]]


def search_hits(findings: list[Finding]) -> list[Finding]:
    """The findings that a search gave (not the definitions the question named)."""
    return [f for f in findings if f.tool == "search_code"]


def _plain(query: str) -> str:
    # initial actions often look like "search_code('file watcher')": keep the words only
    for junk in ("search_code", "resolve_symbol", "read_file", "(", ")", "'", '"', "mode=", "semantic", "lexical"):
        query = query.replace(junk, " ")
    return " ".join(query.split())[:200] or "main"


def render_findings(findings: list[Finding]) -> str:
    return "\n".join(f"[{n}] {f.result_summary or f.location()}\n{f.relevant_code}" for n, f in enumerate(findings, 1))


def grounded_note(index: CodeIndex, note: str) -> str | None:
    """The researcher's own words, or None when they name code that is nowhere in the repository.

    The 0.5B researcher sometimes wrote its tool's description as its finding ("the `read_map`
    function returns a summary of each file"), and the synthesizer answered with it."""
    return None if unknown_names(index, note) else note


def checked_findings(index: CodeIndex, report: ResearcherReport) -> tuple[list[Finding], int]:
    """The reported locations that exist in the index, with their code; and how many did not."""
    kept, dropped = [], 0
    for loc in report.findings:
        path = loc.path.strip().strip("`").lstrip("./")
        lines = file_lines(index, path)
        if lines is None or not 1 <= loc.start_line <= lines:
            dropped += 1
            continue
        end = min(max(loc.end_line, loc.start_line), lines, loc.start_line + 40)
        code = index.read_file(path, loc.start_line, min(end, loc.start_line + 12))
        kept.append(Finding(
            tool="report", args={}, result_summary=grounded_note(index, loc.note[:200]) or "", relevant_code=code[:SNIPPET_CHARS],
            file_path=path, line_range=(loc.start_line, end),
        ))  # fmt: skip
    return kept, dropped


@dataclass
class ResearcherAgent(SubAgent):
    """A :class:`SubAgent` whose task is one sub-question and whose output is an EvidenceBundle."""

    index: CodeIndex | None = None
    sub_question: SubQuestion = field(default_factory=lambda: SubQuestion(question=""))

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        # ``context`` is ignored on purpose: a researcher sees only its own sub-question
        # (context isolation is the point of the pipeline), even when run after another.
        assert self.index is not None
        emitter = BoundEmitter(bus, {"run_id": run_id, "task_id": task_id, "agent": self.name})
        started = time.perf_counter()
        written = written_definitions(self.index, self.sub_question.question)
        seeded = seed_findings(self.index, self.sub_question, written=written)
        emitter.emit(EventType.TOOL_CALL, tool="search_code", arguments=summarize(self.sub_question.question),
                     result=f"{len(seeded)} hits (seeded before the first turn)", error=None, ok=True,
                     seconds=round(time.perf_counter() - started, 4))
        sq = self.sub_question
        names = offered_symbols(self.index, sq.question, written, seeded)
        message = (f"Search results:\n{render_findings(seeded) or 'none'}\n\n"
                   + (f"Symbols in these results: {', '.join(names)}\n\n" if names else "")
                   + f"Your question: {sq.question}" + (f"\nLook in: {sq.target_area}" if sq.target_area else ""))
        notes = isinstance(self.output_type, type) and issubclass(self.output_type, ResearcherReport)
        choosing = dataclasses.replace(self, output_type=report_type(names, notes=notes))
        outcome = await SubAgent.run(choosing, message, None, budget=budget, bus=bus, progress=progress,
                                     run_id=run_id, task_id=task_id)
        choice = outcome.output if isinstance(outcome.output, ResearcherChoice) else None
        report = choice if isinstance(choice, ResearcherReport) else None
        reported, dropped = checked_findings(self.index, report) if report else ([], 0)
        findings = _dedupe(reported + seeded)
        # The model's nominations first, then the definition at each reported location and at
        # the top search hit that best matches the sub-question: resolved from the index, so
        # the relationships are the symbol graph's.
        nominated = list(choice.symbols) if choice else []
        located = [n for path, start, end in _locations(reported + search_hits(seeded)[:1])
                   if (n := best_at(self.index, sq.question, path, start, end)) is not None]
        resolved = resolve(self.index, resolution_order(written, nominated, located))
        note = "" if choice else f"no report ({outcome.stop_reason}); the seeded search hits are kept"
        if report:
            own = grounded_note(self.index, report.coverage_note[:300])
            note = own if own is not None else "[the researcher's note named code that is not in the repository; dropped]"
        if dropped:
            note += f" [{dropped} reported location(s) not in the repository were dropped]"
        bundle = EvidenceBundle(sub_question=sq.question, findings=findings, coverage_note=note.strip(),
                                researcher=self.name, stop_reason=outcome.stop_reason, turns=outcome.turns,
                                resolved=resolved, nominated=nominated)
        return AgentResult(agent=self.name, output=bundle.model_dump(mode="json"), text=outcome.text,
                           usage=outcome.usage, transcript=outcome.transcript, stop_reason=outcome.stop_reason,
                           turns=outcome.turns, detail=outcome.detail, budget_scope=outcome.budget_scope)


def _locations(findings: list[Finding]) -> list[tuple[str, int, int]]:
    return [(f.file_path, *f.line_range) for f in findings if f.line_range]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in findings:
        if any(g.file_path == f.file_path and g.line_range and f.line_range
               and g.line_range[0] <= f.line_range[0] <= g.line_range[1] for g in out):
            continue
        out.append(f)
    return out[:6]


REPORT_TOKENS = 250
"""A report's room: five findings with a short note each and the coverage note fit in about 200
tokens. On httpx (2026-11-29) the 0.5B researchers' reports that validated took 85-140 tokens;
the ones that ran on to 400 never validated (cut inside a string), and each cost 18 s of the
slowest researcher, which the whole run waits for."""


CHOICE_TOKENS = 160
"""A choice's room: four qualified names of 15-20 tokens each and the JSON around them."""


def researcher_agent(name: str, model: object, index: CodeIndex, tools: list[Any], sub: SubQuestion,
                     *, max_turns: int, budget: Any, notes: bool = True) -> ResearcherAgent:
    """One researcher. ``notes``: it reports the locations it read with a note on each and what it
    found and missed; else it only chooses the definitions that answer (``researcher_choice``)."""
    return ResearcherAgent(
        name, f"gathers evidence for: {sub.question[:80]}", load_prompt("researcher" if notes else "researcher_choice", __package__),
        tools=tools, model=model, output_type=ResearcherReport if notes else ResearcherChoice, max_turns=max_turns,  # type: ignore[arg-type]
        settings=ModelSettings(max_tokens=REPORT_TOKENS if notes else CHOICE_TOKENS), budget=budget, index=index, sub_question=sub,
    )  # fmt: skip
