"""The progressive runner: each level in a fresh knowledge base, both modes, N runs, graded.

Per level: a new temporary folder and a new agent (nothing carries over between levels);
the level's articles are learned ONCE, and that knowledge is reused by every mode and run of
the level — so the learning cost is counted once per level, apart from the answering cost.
Then every question is asked in each mode, ``runs`` times (the runs differ only by the
sampling seed), graded by the rubric (and the judge, when given), and every failure is
attributed to a stage while the agent's memory still exists.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.eval.adapter import AgentAnswer, AgentFactory, close_agent, supports_teaching
from moot.eval.analysis import attribute_failure
from moot.eval.judge import LLMJudge
from moot.eval.levels import Level, Question
from moot.eval.results import EvalResults, LearnCost, LevelResult, QuestionRecord
from moot.eval.rubric import grade_question

MODES = ("single", "multi", "context")
"""``context``: one call with all of the level's articles in the prompt — the baseline a user tries first."""


@dataclass
class RunProgress:
    """What the runner is doing, for a progress bar."""

    kind: str
    """``level`` (a level starts), ``kept`` (a level a resumed run already has), ``learn`` (an
    article), ``question`` (an answer graded), ``done``."""
    level: str
    done: int = 0
    total: int = 0
    text: str = ""


def questions_per_level(level: Level, modes: list[str], runs: int, *, teaching: bool = True) -> int:
    """How many answers a level produces (for progress totals)."""
    count = len(level.questions) * len(modes) * runs
    if teaching and level.teaching is not None:
        count += len(level.teaching.quiz) * runs
    return count


def _seed(base: int, run: int) -> int:
    return base + run


async def _call_factory(factory: AgentFactory, folder: Path) -> Any:
    agent = factory(folder)
    if asyncio.iscoroutine(agent):
        agent = await agent
    return agent


def _record(level: Level, question: Question, *, mode: str, run: int, seed: int | None, reply: AgentAnswer | None,
            error: str | None, seconds: float) -> QuestionRecord:
    text = reply.text if reply is not None else ""
    grade = grade_question(text, question)
    score, passed, reason = grade.score, grade.passed, grade.reason
    if error is not None:
        reason = f"the agent failed: {error}"
    elif reply is not None and not reply.complete:
        score, passed, reason = 0.0, False, "no answer: the agent returned a partial result (it gave up)"
    usage = reply.usage if reply is not None else None
    return QuestionRecord(
        level=level.level, question_id=question.id, question=question.question, expected=question.expected,
        mode=mode, run=run, seed=seed, answer=text, score=score, passed=passed, reason=reason,
        input_tokens=usage.input_tokens if usage else 0, output_tokens=usage.output_tokens if usage else 0,
        model_calls=usage.requests if usage else 0,
        seconds=round(reply.seconds if reply is not None and reply.seconds is not None else seconds, 3),
        run_id=reply.run_id if reply is not None else None, error=error,
        trace=reply.trace if reply is not None else None,
    )  # fmt: skip


def _analyse(record: QuestionRecord, level: Level, question: Question, agent: Any, sources: str) -> None:
    if record.passed:
        return
    if record.error is not None:
        record.stage, record.stage_reason = "unknown", f"the agent raised: {record.error}"
        return
    knowledge = None
    run = None
    if callable(getattr(agent, "knowledge_text", None)):
        knowledge = agent.knowledge_text()
    if record.run_id and callable(getattr(agent, "run_details", None)):
        run = agent.run_details(record.run_id)
    verdict = attribute_failure(level=level.level, question=question, answer=record.answer, mode=record.mode,
                                trace=record.trace, run=run, knowledge=knowledge, sources=sources)  # fmt: skip
    record.stage, record.stage_reason = verdict.stage, verdict.reason


async def _judge(record: QuestionRecord, question: Question, judge: LLMJudge | None) -> None:
    if judge is None:
        return
    verdict = await judge.grade(question.question, question.expected, record.answer,
                                expects_unknown=question.rubric.expects_unknown, pass_threshold=question.pass_threshold)  # fmt: skip
    record.judge = verdict.model_dump()


async def run_level(
    level: Level,
    factory: AgentFactory,
    *,
    modes: list[str],
    runs: int,
    base_seed: int = 0,
    judge: LLMJudge | None = None,
    progress: Callable[[RunProgress], None] | None = None,
    workdir: Path | None = None,
    result: LevelResult | None = None,
    on_record: Callable[[], None] | None = None,
) -> LevelResult:
    """Run one level in a fresh folder: learn once, then every question, mode and run.

    ``result`` (optional) is filled in place and ``on_record`` called after each answer, so a
    caller can save a level that is interrupted half-way."""
    notify = progress or (lambda _p: None)
    saved = on_record or (lambda: None)
    started = time.perf_counter()
    if result is None:
        result = LevelResult(level=level.level, name=level.name, about=level.about, questions=len(level.questions))
    result.complete = False
    with tempfile.TemporaryDirectory(prefix=f"moot-eval-{level.level}-", dir=workdir) as folder:
        agent = await _call_factory(factory, Path(folder))
        try:
            learn_started = time.perf_counter()
            cost = LearnCost(articles=len(level.articles))
            texts = [level.article_path(article).read_text(encoding="utf-8") for article in level.articles]
            # The level's articles are learned side by side (an agent's model bounds the requests at once).

            async def learn_one(n: int, article: Any, content: str) -> None:
                notify(RunProgress("learn", level.level, n, len(level.articles), article.file))
                try:
                    usage = await agent.learn(content, source=article.source, published=article.published)
                except MootError as exc:
                    # A failed article is reported, and the questions still run on what was learned.
                    cost.error = f"{article.file}: {exc.one_line()}"
                    return
                if usage is not None:
                    cost.input_tokens += usage.input_tokens
                    cost.output_tokens += usage.output_tokens
                    cost.model_calls += usage.requests

            await asyncio.gather(*(learn_one(n, a, t) for n, (a, t) in enumerate(zip(level.articles, texts), 1)))
            cost.seconds = round(time.perf_counter() - learn_started, 3)
            result.learn = cost
            sources = "\n".join(texts)
            total = questions_per_level(level, modes, runs, teaching=supports_teaching(agent))
            done = 0

            async def finish(record: QuestionRecord, question: Question, done: int, label: str) -> int:
                """Analyse, judge, keep and save one graded answer, then report progress; the new count."""
                _analyse(record, level, question, agent, sources)
                await _judge(record, question, judge)
                result.records.append(record)
                saved()
                notify(RunProgress("question", level.level, done + 1, total, label))
                return done + 1

            for run in range(1, runs + 1):
                seed = _seed(base_seed, run)
                for mode in modes:
                    for question in level.questions:
                        t0 = time.perf_counter()
                        reply, error = None, None
                        try:
                            reply = await agent.answer(question.question, mode=mode, seed=seed)
                        except MootError as exc:
                            error = exc.one_line()
                        record = _record(level, question, mode=mode, run=run, seed=seed, reply=reply, error=error,
                                         seconds=time.perf_counter() - t0)  # fmt: skip
                        done = await finish(record, question, done, f"{mode} {question.id}")
                if level.teaching is not None:
                    if not supports_teaching(agent):
                        result.teaching = "not supported"
                        continue
                    quiz = [level.question(qid) for qid in level.teaching.quiz]
                    t0 = time.perf_counter()
                    replies: list[AgentAnswer | None]
                    error = None
                    try:
                        replies = list(await agent.teach_and_quiz(level.teaching.topic, [q.question for q in quiz], seed=seed))
                    except MootError as exc:
                        error, replies = exc.one_line(), []
                    replies += [None] * (len(quiz) - len(replies))
                    each = (time.perf_counter() - t0) / max(1, len(quiz))
                    for question, reply in zip(quiz, replies):
                        record = _record(level, question, mode="teaching", run=run, seed=seed, reply=reply,
                                         error=error if reply is None else None, seconds=each)  # fmt: skip
                        done = await finish(record, question, done, f"teaching {question.id}")
                    result.teaching = "ran"
        finally:
            await close_agent(agent)
    result.seconds = round(time.perf_counter() - started, 3)
    result.complete = True
    return result


_SETTINGS = (  # what must match for a stopped run to be resumed
    "suite", "agent", "model", "modes", "runs", "temperature", "seeds", "budget", "judge_model", "judge_votes",
    "role_models",
)


def _level_number(level: str) -> float:
    digits = "".join(c for c in level if c.isdigit())
    return float(digits) if digits else float("inf")


def _load() -> list[float] | None:
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def new_results(*, agent_name: str = "", model_name: str = "", modes: list[str], runs: int, base_seed: int = 0,
                temperature: float | None = None, judge_model: str | None = None, judge_votes: int | None = None,
                budget: str | None = None, role_models: dict[str, str] | None = None) -> EvalResults:
    """An empty results file for these settings, stamped with the time and the machine."""
    return EvalResults(
        role_models=dict(role_models or {}),
        agent=agent_name, model=model_name, modes=modes, runs=runs, temperature=temperature,
        seeds=[_seed(base_seed, r) for r in range(1, runs + 1)], judge_model=judge_model, budget=budget,
        judge_votes=judge_votes, started_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        machine={"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                 "load_at_start": _load()},
        notes=["learning is counted once per level: the knowledge base learned for a level is reused by every mode and run"],
    )  # fmt: skip


def check_resumable(earlier: EvalResults, **settings: Any) -> dict[str, LevelResult]:
    """The complete levels of ``earlier``, once its settings are checked to be these (the
    keyword arguments of :func:`new_results`): a file mixing two models or two seeds would
    report a comparison nobody ran. Raises a one-line MootError naming the first difference."""
    return _same_settings(earlier, new_results(**settings))


def _same_settings(earlier: EvalResults, now: EvalResults) -> dict[str, LevelResult]:
    for name in _SETTINGS:
        if getattr(earlier, name) != getattr(now, name):
            raise MootError(
                f"cannot resume: the results file has {name} {getattr(earlier, name)!r}, this command {getattr(now, name)!r}",
                fix="run with the options of the stopped run, or drop --resume to start a new results file",
            )  # fmt: skip
    return {lv.level: lv for lv in earlier.levels if lv.complete}


async def run_progressive(
    levels: list[Level],
    factory: AgentFactory,
    *,
    modes: list[str] | tuple[str, ...] = MODES,
    runs: int = 1,
    base_seed: int = 0,
    judge: LLMJudge | None = None,
    agent_name: str = "",
    model_name: str = "",
    temperature: float | None = None,
    judge_model: str | None = None,
    budget: str | None = None,
    role_models: dict[str, str] | None = None,
    progress: Callable[[RunProgress], None] | None = None,
    save_to: str | Path | None = None,
    workdir: Path | None = None,
    resume: EvalResults | None = None,
) -> EvalResults:
    """Run the levels and return (and, with ``save_to``, keep saving after each answer) the results.

    ``resume``: the results of an earlier run with the same settings that stopped part-way (a
    crash, a killed job, a reboot). Its complete levels are kept as they are; the others —
    the level it stopped in included — run again from the start, in a fresh knowledge base as
    always. ``seconds`` then counts both runs' time, the lost part of the stopped level included.
    """
    modes = list(modes)
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise MootError(f"unknown mode {', '.join(bad) or '(none)'}", fix="use --mode single, multi, context, both or all")
    if runs < 1:
        raise MootError("--runs must be at least 1", fix="pass --runs 1 or more")
    started = time.perf_counter()
    results = new_results(agent_name=agent_name, model_name=model_name, modes=modes, runs=runs, base_seed=base_seed,
                          temperature=temperature, judge_model=judge_model,
                          judge_votes=judge.votes if judge is not None else None, budget=budget,
                          role_models=role_models)  # fmt: skip
    kept: dict[str, LevelResult] = {}
    earlier = 0.0
    if resume is not None:
        kept, earlier = _same_settings(resume, results), resume.seconds
        again = [lv.level for lv in levels if lv.level not in kept]
        results.started_at, results.machine = resume.started_at, resume.machine
        results.notes = [*resume.notes, f"resumed {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')} "
                         f"(load {', '.join(f'{x:.2f}' for x in _load() or []) or '?'}): "
                         f"kept {', '.join(kept) or 'no level'}; ran {', '.join(again) or 'nothing'}"]  # fmt: skip
        # Completed levels this command did not ask for stay in the file too, in suite order.
        results.levels = sorted(kept.values(), key=lambda lv: _level_number(lv.level))

    def elapsed() -> float:
        return round(earlier + time.perf_counter() - started, 3)

    for level in levels:
        if level.level in kept:
            if progress is not None:
                progress(RunProgress("kept", level.level, 0, 0, f"{level.name}: complete in the results file"))
            continue
        if progress is not None:
            progress(RunProgress("level", level.level, 0, questions_per_level(level, modes, runs), level.name))
        current = LevelResult(level=level.level, name=level.name, about=level.about, questions=len(level.questions),
                              complete=False)  # fmt: skip
        results.levels.append(current)
        results.levels.sort(key=lambda lv: _level_number(lv.level))  # stable: a suite without numbers keeps its order

        def save_partial() -> None:
            results.seconds = elapsed()
            if save_to is not None:
                results.save(save_to)  # every answer: a run killed mid-level keeps what it answered

        await run_level(level, factory, modes=modes, runs=runs, base_seed=base_seed, judge=judge, progress=progress,
                        workdir=workdir, result=current, on_record=save_partial)  # fmt: skip
        results.seconds = elapsed()
        if save_to is not None:
            results.save(save_to)  # a long run that is interrupted keeps its finished levels
    results.seconds = elapsed()
    if save_to is not None:
        results.save(save_to)
    if progress is not None:
        progress(RunProgress("done", "", 0, 0, f"{len(levels)} levels in {results.seconds:.0f}s"))
    return results


__all__ = ["MODES", "RunProgress", "check_resumable", "new_results", "questions_per_level", "run_level", "run_progressive"]
