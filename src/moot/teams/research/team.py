"""``ResearchTeam``: ask a question about a repository, get an answer that cites file:line.

```python
from moot.teams.research import ResearchTeam
team = ResearchTeam("path/to/repo", model="local")
result = team.ask_sync("How does the client send a request?", mode="auto")
print(result.answer, result.mode, result.routing_rule)
```
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from moot.codeindex import CodeIndex
from moot.codeindex.tools import code_tools
from moot.errors import MootError
from moot.models.base import Model, ModelSettings, Usage
from moot.models.registry import RoleModels, model_for, resolve_models
from moot.models.toolchoice import AFTER_TOOL_RESULTS
from moot.runtime import Budget, EventBus, RunStore, SubAgent, load_prompt
from moot.runtime.budget import runs_locally
from moot.teams.research.models import (
    EvidenceBundle,
    Mode,
    MultiAgentResult,
    PhaseUsage,
    ResearchPlan,
    SubQuestion,
    VerificationResult,
)
from moot.teams.research.pipeline import PipelineRun
from moot.teams.research.planner import MAX_SUB_QUESTIONS, derived_sub_questions, planner_agent, to_plan
from moot.teams.research.researcher import question_anchors, render_findings, researcher_agent, resolution_order, search_hits, seed_findings
from moot.teams.research.routing import route
from moot.teams.research.conditions import asks_how, check_conditions, conditions_section
from moot.teams.research.codelines import MAX_CANDIDATES as MAX_LINES
from moot.teams.research.quotes import (
    MAX_PICKED,
    OFFERED_PER_SUB_QUESTION,
    PICKED_PER_SUB_QUESTION,
    RANKED_MAX,
    RANKED_PER_SUB_QUESTION,
    CodeLine,
    candidate_lines,
    chosen,
    condition_numbers,
    grouped,
    led_elsewhere,
    picker_agent,
    picker_task,
    quote_section,
    ranked_choice,
)
from moot.teams.research.resolve import ResolvedSymbol, best_at, index_section, resolve, written_definitions
from moot.teams.research.synthesizer import (
    anchored,
    SYNTHESIS_TOKENS,
    merged_resolved,
    render_evidence,
    sources_line,
    synthesizer_agent,
    whole_sentences,
    without_echoes,
    without_repeats,
)
from moot.teams.research.verifier import (
    MAX_MODEL_CLAIMS,
    apply_model_verdicts,
    check_citations,
    model_task,
    revise,
    split_claims,
    verifier_agent,
)
from moot.teams.research.citations import find_citations, exists

LOCAL_SUB_QUESTIONS = 3
"""The most sub-questions a plan has when the researchers run on this machine's engine
(:attr:`ResearchConfig.max_sub_questions`)."""


@dataclass
class ResearchConfig:
    """Limits per phase (the code-research design: 6–8 turns per researcher, 4–6 for the verifier, 14 for one agent)."""

    researcher_calls: int | None = None
    """Model calls one researcher may make (its own budget; it stops early when it has enough).
    ``None``: 4, or 1 when the researcher's model runs on this machine: it reports at once from
    its seeded search hits (and the code the question names). There the engine allows one tool
    round before the report (``LocalModel.max_tool_rounds``), so a third and fourth call followed
    only a report that broke its schema (httpx, 2026-11-29: 45 s for nothing); and with one call
    instead of two, httpx and click in multi mode took 52 and 58 s a question instead of 71 and
    86, at claim recall 0.46 and 0.58 instead of 0.29 and 0.50 (docs/code-research.md)."""
    researcher_notes: bool | None = None
    """Ask each researcher for notes beside its choice: the locations it read, a note on each, and
    what it found and missed. ``None``: yes, unless the researcher's model runs on this machine,
    where a researcher answers in one call and only chooses the definitions that answer. Over the
    251 researchers of the 2026-12-07 multi runs on the embedded model, 2 reported locations
    survived the check that they exist, and the coverage notes, about a third of each report's
    135 tokens, often said what the code does not do ("… does not handle the case where the value
    is None", of a validator that drops its other rules for None); the synthesizer read them as
    evidence. Generating a report took 9-10 s of a researcher's 16."""
    single_calls: int = 6
    max_calls: int = 40
    """Model calls for the whole run."""
    max_tokens: int | None = None
    """Tokens (prompt and answer) for the whole run; ``None``: no limit."""
    max_cost_usd: float | None = None
    """Dollars for the whole run (priced from the price table); ``None``: no limit."""
    deadline_s: float | None = None
    parallel: bool = True
    """Researchers at the same time (False chains them: only for the benchmark)."""
    verify_with_model: bool | None = None
    """Let the verifier model judge the claims the mechanical checks leave. ``None``: yes, unless
    the verifier's model runs on this machine. On the embedded 0.5B model, in the two httpx answers
    read for this (2026-11-29), its verdicts changed nothing (an empty list; "CORRECTED" five times
    with no correction, which counts as unverifiable) and its two calls took 16-18 s of 94-150;
    the httpx and click sets measured without it are in docs/code-research.md."""
    planner_retry: bool | None = None
    """Ask the planner once more when its plan breaks the schema. ``None``: yes, unless the
    planner's model runs on this machine, whose grammar keeps a plan inside the schema: there a
    plan breaks it only by running out of tokens, and the second try ran out the same way (on the
    second and fourth blind sets, 2026-12-05, 2 of 36 multi answers spent 1,200 tokens and 55–60 s
    on no plan). Without a plan the sub-questions come from the question's own parts."""
    max_sub_questions: int | None = None
    """The most sub-questions a plan may have (each is one researcher and one line picker).
    ``None``: 3 when the researcher's model runs on this machine, else 5. There every sub-question
    beyond the engine's slots waits for one: on the two blind sets of 2026-12-05 the one plan of four
    and the one of five took 126 and 125 s against 45-96 s for plans of two or three, queueing up to
    100 s, at claim recall no better than single mode's. The planner's schema stops at the limit, so
    no fourth sub-question is written and then dropped."""
    quote_lines: bool = True
    """Quote the source lines that answer the question, verbatim from the files (chosen as
    ``line_choice`` says: by the model, one more call, or by the ranking)."""
    line_choice: Literal["model", "ranking"] | None = None
    """Who chooses the quoted lines among the ranked candidates: the model (under a schema that
    admits only the numbers shown; for a how-question, the deciding conditions first), or the
    ranking alone (its first lines, and for a how-question at least its best condition; no call).
    ``None``: the ranking when the line picker's model runs on this machine, else the model. On
    the embedded model, multi mode back to back on three development sets of 12 questions
    (2026-12-07, ``moot eval research --line-choice``), the ranking quoted lines that made more
    claims in less time: sets (q) and (p) and (r) in docs/code-research.md."""

    def fit_to(self, researcher: Any, verifier: Any, planner: Any, picker: Any = None) -> ResearchConfig:
        """This config with its fitted defaults (``None``) decided for the team's models, in one
        place, as :meth:`moot.runtime.Budget.fit_to` decides deadlines: a researcher on a model of
        this machine gets 1 call (4 elsewhere) and only chooses (it writes notes elsewhere), its
        verifier model is not asked, its planner is not asked twice, a plan has at most 3
        sub-questions (5 elsewhere), and the lines quoted are the ranking's when the line
        ``picker``'s model is of this machine (the model's elsewhere, and when none is given)."""
        calls = self.researcher_calls
        if calls is None:
            calls = 1 if runs_locally(researcher) else 4
        verify = self.verify_with_model
        if verify is None:
            verify = not runs_locally(verifier)
        retry = self.planner_retry
        if retry is None:
            retry = not runs_locally(planner)
        most = self.max_sub_questions
        if most is None:
            most = LOCAL_SUB_QUESTIONS if runs_locally(researcher) else MAX_SUB_QUESTIONS
        notes = self.researcher_notes
        if notes is None:
            notes = not runs_locally(researcher)
        choice = self.line_choice
        if choice is None:
            choice = "ranking" if picker is not None and runs_locally(picker) else "model"
        return replace(self, researcher_calls=calls, verify_with_model=verify, planner_retry=retry,
                       max_sub_questions=max(2, min(most, MAX_SUB_QUESTIONS)), researcher_notes=notes,
                       line_choice=choice)


def no_answer(outcome: Any, otherwise: str) -> str:
    """The stand-in for a missing answer, naming why it is missing."""
    if outcome is not None and outcome.stop_reason.startswith("error:"):
        return f"(no answer: the model failed: {outcome.detail or outcome.stop_reason[6:]})"
    if outcome is not None and outcome.stop_reason.startswith("budget:"):
        return f"(no answer: the budget stopped the run: {outcome.detail or outcome.stop_reason})"
    return f"({'no answer: ' + otherwise})"


@dataclass
class Quotes:
    """The chosen lines (by the line picker or the ranking), split for the answer, and what was offered."""

    conditions: list[CodeLine] = field(default_factory=list)
    """The chosen lines where the code decides (stated in words)."""
    lines: list[CodeLine] = field(default_factory=list)
    """The other chosen lines (quoted as they are)."""
    offered: list[CodeLine] = field(default_factory=list)
    """Every candidate shown (a statement's condition may be found among them)."""
    chosen_by: Literal["model", "ranking"] = "model"
    """Who chose them (``ResearchConfig.line_choice``): the answer's sections say so."""

    def all(self) -> list[CodeLine]:
        return sorted([*self.conditions, *self.lines], key=lambda c: (c.path, c.line))


def with_sections(answer: str, *sections: str) -> str:
    return "\n\n".join([answer, *(s for s in sections if s)])


_QUOTES = {"quotes": ["line-picker"]}
"""The line picker's phase, reported when it ran."""


ROLES = ("planner", "researcher", "synthesizer", "line-picker", "verifier", "single-agent", "one-call")
"""The roles a model can be given for (``models={role: model}``)."""


class ResearchTeam:
    """Planner → parallel researchers → synthesizer → verifier over a code index."""

    def __init__(self, repo: str | Path, *, model: Any = None, models: RoleModels | None = None,
                 store: RunStore | None = None, index: CodeIndex | None = None, config: ResearchConfig | None = None,
                 db_path: str | Path | None = None, tools: Sequence[Any] = ()) -> None:
        """``model`` serves every agent; ``models`` gives single roles their own model
        (``{"synthesizer": "openai:gpt-4o"}``; roles: :data:`ROLES`). ``tools`` (MCP tool servers,
        or tools) are given to the researchers and the single agent beside the code tools."""
        self.repo = Path(repo)
        self.tools = list(tools)
        self.store = store
        self._index = index
        self._db_path = db_path
        self.model, self.models = resolve_models(model, models, roles=ROLES, team="research")
        self.config = (config or ResearchConfig()).fit_to(self.model_for("researcher"), self.model_for("verifier"),
                                                           self.model_for("planner"), self.model_for("line-picker"))

    def model_for(self, role: str) -> Model:
        """The model of one role: its own from ``models``, else the team's ``model``."""
        return model_for(role, self.model, self.models)

    # ------------------------------------------------------------------ index

    def index(self, progress: Any = None) -> CodeIndex:
        """The open index for the repository, built (or brought up to date) on first use."""
        if self._index is None:
            if not self.repo.exists():
                raise MootError(f"{self.repo} does not exist", fix="pass --repo with the path of a source folder")
            if not self.repo.is_dir():
                raise MootError(f"{self.repo} is not a folder", fix="pass --repo with the path of a source folder")
            self._index = CodeIndex.build(self.repo, db_path=self._db_path, progress=progress)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    # ------------------------------------------------------------------ asking

    def ask_sync(self, question: str, *, mode: Mode = "auto", **kwargs: Any) -> MultiAgentResult:
        return asyncio.run(self.ask(question, mode=mode, **kwargs))

    async def ask(self, question: str, *, mode: Mode = "auto", bus: EventBus | None = None,
                  run_id: str | None = None, plan: ResearchPlan | None = None,
                  parent_run_id: str | None = None) -> MultiAgentResult:
        """Answer ``question``; ``mode`` is ``single``, ``multi`` or ``auto`` (routed by the question's shape),
        or ``baseline``: the one call a user would try first (the question, the repository map and
        the top search hits in one prompt, no tools, no checks), kept to measure the team against.

        ``plan`` skips the planner and uses these sub-questions (multi mode): to re-run a
        question with an edited plan, or to compare runs on the same plan. ``parent_run_id``
        records the run as one of several that one command made (see ``runtime.Run.child``).
        """
        question = " ".join(question.split())
        if not question:
            raise MootError("the question is empty", fix="pass a question about the code")
        if mode not in ("auto", "single", "multi", "baseline"):
            raise MootError(f"unknown mode {mode!r}", fix="use auto, single, multi or baseline")
        index = self._index if self._index is not None else await asyncio.to_thread(self.index)
        if mode == "auto":
            r = route(question)
            chosen, rule = r.mode, f"{r.rule}: {r.reason}"
        else:
            chosen, rule = mode, "requested"
        cfg = self.config
        run = PipelineRun(f"research ({chosen}): {question[:60]}", Budget(max_calls=cfg.max_calls, max_tokens=cfg.max_tokens,
                                                                 max_cost_usd=cfg.max_cost_usd, deadline_s=cfg.deadline_s),
                          bus, self.store, run_id=run_id, parent_run_id=parent_run_id)
        started = time.perf_counter()
        first = {"multi": "planner", "single": "single-agent", "baseline": "one-call"}[chosen]
        run.start([{"id": first, "agent": first, "depends_on": [], "on_failure": "skip"}])
        try:
            if chosen == "baseline":
                result = await self._baseline(question, index, run, rule)
            elif chosen == "multi":
                result = await self._multi(question, index, run, rule, mode, plan)
            else:
                result = await self._single(question, index, run, rule, mode)
        except asyncio.CancelledError:
            await run.finish("cancelled", "the research run was cancelled; partial results kept")
            raise
        except BaseException:
            await run.finish("failed", "the research run crashed inside moot; partial results kept")
            raise
        status = "stopped" if run.stopped else "completed"
        reason = (run.stop_reason or "stopped by the budget") if run.stopped else f"answered in {chosen} mode"
        answering = run.results.get({"multi": "synthesizer", "single": "single-agent", "baseline": "one-call"}[result.mode])
        if answering is not None and answering.status == "failed":
            # No model answered (unreachable, refusing, broken): that is a failure with its
            # cause, not a budget stop and not an answer.
            status, reason = "failed", f"no answer: {answering.error}"
        recorded = await run.finish(status, reason)
        result.usage = recorded.usage
        result.seconds = round(time.perf_counter() - started, 3)
        result.run_id, result.status, result.stop_reason = run.run_id, status, reason
        return result

    # ------------------------------------------------------------------ one call (the first thing a user tries)

    async def _baseline(self, question: str, index: CodeIndex, run: PipelineRun, rule: str) -> MultiAgentResult:
        repo_map = await asyncio.to_thread(index.read_map, ".")
        # the baseline a user would try first: the search's hits, not the code the question names
        hits = seed_findings(index, SubQuestion(question=question), limit=5, plain=True)
        agent = SubAgent("one-call", "answers from the map and search hits in one call", load_prompt("baseline", __package__),
                         model=self.model_for("one-call"), max_turns=1, settings=ModelSettings(max_tokens=500))
        task = f"Repository map:\n{repo_map[:1500]}\n\nSearch results:\n{render_findings(hits) or 'none'}\n\nQuestion: {question}"
        outcome = await run.step("one-call", agent, task)
        answer = (outcome.text.strip() if outcome else "") or no_answer(outcome, "the budget stopped the run")
        bundle = EvidenceBundle(sub_question=question, findings=hits, coverage_note="the search hits in the prompt",
                                researcher="one-call", stop_reason=outcome.stop_reason if outcome else "not_started")
        return MultiAgentResult(
            question=question, answer=answer, draft_answer=answer, mode="baseline", requested_mode="baseline",
            routing_rule=rule, evidence=[bundle], usage_by_phase=self._phases(run, {"one-call": ["one-call"]}),
        )  # fmt: skip

    # ------------------------------------------------------------------ single agent

    async def _single(self, question: str, index: CodeIndex, run: PipelineRun, rule: str, requested: Mode,
                      note: str = "") -> MultiAgentResult:
        written = written_definitions(index, question)
        seeded = seed_findings(index, SubQuestion(question=question), written=written)
        agent = SubAgent("single-agent", "answers with the code tools in one conversation", load_prompt("single", __package__),
                         tools=[*code_tools(index), *self.tools], model=self.model_for("single-agent"), max_turns=self.config.single_calls,
                         settings=ModelSettings(max_tokens=500))
        outcome = await run.step("single-agent", agent, f"Search results:\n{render_findings(seeded) or 'none'}\n\nQuestion: {question}")
        said = without_echoes(outcome.text.strip() if outcome else "", question, (AFTER_TOOL_RESULTS, agent.instructions()))
        draft = without_repeats(said) or no_answer(outcome, "the budget stopped the run")
        bundle = EvidenceBundle(sub_question=question, findings=seeded, coverage_note="the seeded search hits",
                                researcher="single-agent", stop_reason=outcome.stop_reason if outcome else "not_started",
                                turns=outcome.turns if outcome else 0)
        # The baseline gets the same cheap, model-free help as the pipeline: invented citations
        # are corrected or removed, and evidence locations are listed when it cites nothing.
        verdicts, replace, _ = check_citations(index, split_claims(draft))
        answer = revise(draft, replace)
        # The single agent nominates by naming: the code names its checked answer mentions,
        # then what the top search hits define, resolved from the index like the researchers'.
        named = [n for claim in split_claims(answer) for n in claim.names(code_only=True)]
        located = [n for f in search_hits(seeded)[:2] if f.line_range
                   if (n := best_at(index, question, f.file_path, *f.line_range)) is not None]
        resolved = await asyncio.to_thread(resolve, index, resolution_order(written, named, located))
        bundle.resolved, bundle.nominated = resolved, named
        how = asks_how(question)
        quotes = await self._quote(index, run, [(question, resolved)], after="single-agent", how=how)
        # Every "if / when / unless" statement of the draft rests on a quoted condition, or goes.
        held, removed, for_claims = check_conditions(answer, quotes.all(), quotes.offered)
        answer, verdicts = revise(answer, removed), verdicts + held
        section = index_section(resolved, question=question)
        if not section and not any(exists(index, c) for c in find_citations(answer)):
            section = sources_line([bundle])
        answer = with_sections(answer, section, conditions_section(quotes.conditions, for_claims, chosen_by=quotes.chosen_by),
                               quote_section(quotes.lines, chosen_by=quotes.chosen_by))
        return MultiAgentResult(
            question=question, answer=answer, draft_answer=draft, mode="single", requested_mode=requested,
            routing_rule=rule + (f" ({note})" if note else ""), evidence=[bundle], verification=verdicts, resolved=resolved,
            quoted=quotes.lines, conditions=[*quotes.conditions, *for_claims],
            usage_by_phase=self._phases(run, {"single-agent": ["single-agent"], **_QUOTES}),
        )  # fmt: skip

    # ------------------------------------------------------------------ the pipeline

    async def _multi(self, question: str, index: CodeIndex, run: PipelineRun, rule: str, requested: Mode,
                     given_plan: ResearchPlan | None = None) -> MultiAgentResult:
        cfg = self.config
        if given_plan is not None:
            plan = given_plan.model_copy(update={"note": given_plan.note or "plan given by the caller"})
        else:
            repo_map = await asyncio.to_thread(index.read_map, ".")
            most = cfg.max_sub_questions or MAX_SUB_QUESTIONS
            outcome = await run.step("planner", planner_agent(self.model_for("planner"), repo_map, retry=cfg.planner_retry is not False,
                                                              limit=most, hints=cfg.verify_with_model is not False),
                                     f"Question: {question}")
            plan = to_plan(question, outcome.output if outcome else None, most)
            if len(plan.sub_questions) < 2 and (derived := await asyncio.to_thread(derived_sub_questions, question, index, most=most)):
                # A plan the model could not split is split by the question's own clauses or
                # by what the first search finds, rather than quietly becoming single mode.
                why = plan.note or f"the planner gave {len(plan.sub_questions)} distinct sub-question(s)"
                plan = ResearchPlan(original_question=question, sub_questions=derived,
                                    note=f"{why}; sub-questions derived from the question's parts and the first search")
        if len(plan.sub_questions) < 2:
            # the code-research design: fewer than two sub-questions is a single-agent question
            why = f"{plan.note or f'the planner found {len(plan.sub_questions)} distinct sub-question(s)'}; fell back to single"
            result = await self._single(question, index, run, rule, requested, note=why)
            result.plan = plan
            result.usage_by_phase = self._phases(run, {"planner": ["planner"], "single-agent": ["single-agent"], **_QUOTES})
            return result
        tools = [*code_tools(index), *self.tools]
        calls = cfg.researcher_calls
        assert calls is not None  # decided by ResearchConfig.fit_to when the team was made
        researchers = [researcher_agent(f"researcher-{i}", self.model_for("researcher"), index, tools, sq,
                                        max_turns=calls + 1, budget=Budget(max_calls=calls), notes=cfg.researcher_notes is not False)
                       for i, sq in enumerate(plan.sub_questions, 1)]
        graph = await run.researchers(researchers, parallel=cfg.parallel)
        bundles = []
        for r, sq in zip(researchers, plan.sub_questions):
            out = graph.results[r.name].output
            bundles.append(EvidenceBundle.model_validate(out) if isinstance(out, dict)
                           else EvidenceBundle(sub_question=sq.question, coverage_note=f"researcher {graph.results[r.name].status}",
                                               researcher=r.name, stop_reason=graph.results[r.name].stop_reason or ""))
        resolved = merged_resolved(bundles, index)
        # What the whole question writes or its top search hit finds, found with no model call as
        # single mode finds it: the planner's paraphrases can lose it. It leads (a name the question
        # writes) or follows (a search hit) the researchers' definitions, and is picked from on
        # its own, for the question as the user asked it.
        written, located = await asyncio.to_thread(question_anchors, index, question)
        anchors = await asyncio.to_thread(resolve, index, [*written, *located])
        resolved = anchored(resolved, anchors, set(written), index)
        # The line pickers choose the lines to quote (for a how-question, the deciding conditions
        # first) while the synthesizer writes from the researchers' evidence, as the single agent
        # writes its draft before its lines are picked: moot states each chosen condition in words
        # beside its line itself. Shown the chosen conditions, the 0.5B synthesizer copied them
        # out, spending its answer tokens on what moot's section says anyway. A researcher's
        # definition that another's already has in its other build is not read twice.
        how = asks_how(question)
        kept = {(r.path, r.start_line) for r in resolved}
        asks = [(b.sub_question, own) for b in bundles if (own := [r for r in b.resolved if (r.path, r.start_line) in kept])]
        asks = [(question, anchors), *asks] if anchors else asks or [(question, resolved)]
        after = [r.name for r in researchers]
        try:
            async with asyncio.TaskGroup() as both:  # one failing cancels the other: no call left running
                picking = both.create_task(self._quote(index, run, asks, after=after, how=how, question=question))
                writer = synthesizer_agent(self.model_for("synthesizer"))
                writing = both.create_task(run.step("synthesizer", writer, render_evidence(question, bundles), depends_on=after))
        except ExceptionGroup as failed:  # raised as it was, as one call after the other raised it
            raise failed.exceptions[0] from None
        quotes, outcome = picking.result(), writing.result()
        text = outcome.text.strip() if outcome else ""
        if outcome is not None and outcome.usage.output_tokens >= SYNTHESIS_TOKENS:
            text = whole_sentences(text)  # cut by the token limit: not a half sentence
        text = without_echoes(text, question, (writer.instructions(),))
        draft = without_repeats(text) or no_answer(outcome, "the synthesizer did not answer")
        if not resolved and not any(exists(index, c) for c in find_citations(draft)) and (extra := sources_line(bundles)):
            draft = f"{draft}\n\n{extra}"
        answer, verification, for_claims = await self._verify(draft, index, run, plan, quotes)
        # Written by moot after verification: nothing in these sections is the model's text.
        answer = with_sections(answer, index_section(resolved, question=question),
                               conditions_section(quotes.conditions, for_claims, chosen_by=quotes.chosen_by),
                               quote_section(quotes.lines, chosen_by=quotes.chosen_by))
        return MultiAgentResult(
            question=question, answer=answer, draft_answer=draft, mode="multi", requested_mode=requested, routing_rule=rule,
            plan=plan, evidence=bundles, verification=verification, resolved=resolved[:6], quoted=quotes.lines,
            conditions=[*quotes.conditions, *for_claims],
            usage_by_phase=self._phases(run, {"planner": ["planner"], "researchers": [r.name for r in researchers],
                                              "synthesizer": ["synthesizer"], "verifier": ["verifier"], **_QUOTES}),
        )  # fmt: skip

    async def _quote(self, index: CodeIndex, run: PipelineRun, asks: list[tuple[str, list[ResolvedSymbol]]],
                     *, after: str | list[str], how: bool = False, question: str = "") -> Quotes:
        """The source lines that answer the question: for each (question, resolved definitions)
        Python gathers and ranks the lines of those definitions (and what they call), the model
        picks by number — for a how-question, first the conditions that decide — and moot quotes
        them verbatim with path:line. Multi mode asks once per researcher's sub-question, in
        parallel: one list ranked by the whole question spread its forty lines over every
        researcher's symbols, and the picker's first choices with them. Nothing is added when
        there is nothing to pick from, the budget is spent, or the model gives no valid pick."""
        if not self.config.quote_lines or run.stopped:
            return Quotes()
        # A sub-question's lines are gathered and ranked by its words and the whole question's:
        # the planner's sub-question is a small model's paraphrase, and the words it drops are
        # often the ones the deciding condition reads.
        ranked = [(q, await asyncio.to_thread(candidate_lines, index, q if not question or q == question else f"{q}\n{question}",
                                              resolved)) for q, resolved in asks]
        ranked = [(q, lines) for q, lines in ranked if lines]
        # A picker: up to eight lines from one list, up to four from each sub-question's, so a
        # sub-question's own deciding lines are not cut to two (eight shared by three pickers
        # quoted fewer lines in multi mode than single mode quoted from one). The ranking, when
        # it chooses, quotes more (twelve and six): no picker's schema bounds it.
        by_ranking = self.config.line_choice == "ranking"
        if len(ranked) == 1:
            per_ask = RANKED_MAX if by_ranking else MAX_PICKED
        else:
            per_ask = RANKED_PER_SUB_QUESTION if by_ranking else PICKED_PER_SUB_QUESTION
        kept = led_elsewhere([lines for _, lines in ranked], per_ask)
        ranked = [(q, lines) for (q, _), lines in zip(ranked, kept) if lines]
        depends = [after] if isinstance(after, str) else after
        # Every ranked line stays offered (a synthesizer's "if" sentence is kept when its
        # condition is among them); a picker among several is shown only its first twenty.
        shown = MAX_LINES if len(ranked) == 1 else OFFERED_PER_SUB_QUESTION

        async def pick(n: int, q: str, lines: list[CodeLine]) -> list[CodeLine]:
            if by_ranking:
                return ranked_choice(lines, per_ask, how=how)
            task_id = "line-picker" if len(ranked) == 1 else f"line-picker-{n}"
            lines = grouped(lines[:shown])
            conditions = condition_numbers(lines) if how else None
            # A sub-question's picker is asked the sub-question with the whole question beside it.
            asked = q if not question or q == question else f"{q} (part of: {question})"
            outcome = await run.step(task_id, picker_agent(self.model_for("line-picker"), len(lines), limit=per_ask,
                                                           conditions=conditions),
                                     picker_task(asked, lines, how=how), depends_on=depends)
            return chosen(lines, outcome.output if outcome else None)

        picked = await asyncio.gather(*(pick(n, q, lines) for n, (q, lines) in enumerate(ranked, 1)))
        seen: set[tuple[str, int]] = set()
        out = Quotes(offered=[c for _, lines in ranked for c in lines], chosen_by=self.config.line_choice or "model")
        for line in sorted((c for group in picked for c in group), key=lambda c: (c.path, c.line)):
            if (line.path, line.line) not in seen:
                seen.add((line.path, line.line))
                # Every chosen condition is stated in words, whatever the question's wording:
                # a question can ask how without any of the words `asks_how` reads.
                (out.conditions if line.is_condition() else out.lines).append(line)
        return out

    async def _verify(self, draft: str, index: CodeIndex, run: PipelineRun, plan: ResearchPlan,
                      quotes: Quotes) -> tuple[str, list[VerificationResult], list[CodeLine]]:
        # First every "if / when / unless" statement is held to a quoted condition (or removed).
        held, removed, for_claims = check_conditions(draft, quotes.all(), quotes.offered)
        text = revise(draft, removed)
        claims = split_claims(text)
        verdicts, replace, left = check_citations(index, claims)
        verdicts = held + verdicts
        to_model, rest = left[:MAX_MODEL_CLAIMS], left[MAX_MODEL_CLAIMS:]
        if to_model and self.config.verify_with_model and not run.stopped:
            hints = "; ".join(sq.verification_hint for sq in plan.sub_questions if sq.verification_hint)
            task = model_task(index, to_model) + (f"\nPlanner's hints: {hints[:400]}" if hints else "")
            outcome = await run.step("verifier", verifier_agent(self.model_for("verifier"), code_tools(index)), task,
                                     depends_on=["synthesizer", *(t for t in run.results if t.startswith("line-picker"))])
            model_verdicts, model_replace = apply_model_verdicts(to_model, outcome.output if outcome else None, index)
            verdicts += model_verdicts
            replace.update(model_replace)
        else:
            rest = left
        verdicts += [VerificationResult(claim=c.text, status="UNVERIFIABLE", citation=c.citations[0].text if c.citations else "",
                                        correction="not checked (beyond the verifier's claim limit)") for c in rest]
        return revise(text, replace), verdicts, for_claims

    @staticmethod
    def _phases(run: PipelineRun, phases: dict[str, list[str]]) -> dict[str, PhaseUsage]:
        by_agent = run.usage_by_agent()
        out = {}
        for phase, agents in phases.items():
            if phase == "quotes":
                pickers = [t for t in run.results if t.startswith("line-picker")]
                if pickers:
                    out[phase] = PhaseUsage(phase=phase, usage=by_agent.get("line-picker", Usage()),
                                            seconds=round(max(run.phase_seconds.get(t, 0.0) for t in pickers), 3))
                continue
            usage = sum((by_agent.get(a, Usage()) for a in agents), Usage())
            seconds = run.phase_seconds.get("researchers" if phase == "researchers" else agents[0], 0.0)
            out[phase] = PhaseUsage(phase=phase, usage=usage, seconds=round(seconds, 3))
        return out
