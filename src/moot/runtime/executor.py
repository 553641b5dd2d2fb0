"""The asyncio scheduler behind :meth:`TaskGraph.run` and :meth:`Run.graph`: one :class:`Execution` per graph."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from moot.models.base import Usage
from moot.runtime.agent import AgentProgress, AgentResult, SubAgent
from moot.runtime.events import BoundEmitter, EventType
from moot.runtime.graph import (
    _USABLE,
    RunCancelled,
    RunResult,
    RunStatus,
    TaskGraph,
    TaskResult,
    generic_fallback_agent,
    isolated,
)
from moot.runtime.reducers import collect

if TYPE_CHECKING:
    from moot.runtime.run import Run


class Execution:
    """The scheduling state of one task graph inside a :class:`~moot.runtime.run.Run`:
    results so far, tasks in flight, and why the graph ended. The run owns the record,
    events, spans and budget; this only decides which task starts when."""

    def __init__(self, graph: TaskGraph, run: Run, *, max_parallel: int | None = None) -> None:
        self.graph = graph
        self.run = run
        self.max_parallel = max_parallel
        self.bus = run.bus
        self.name = run.name
        self.run_id = run.run_id
        self.tracker = run.tracker
        self.emit = BoundEmitter(self.bus, {"run_id": run.run_id})
        self.results = {tid: TaskResult(id=tid, agent=t.agent) for tid, t in graph.tasks.items()}
        self.running: dict[asyncio.Task[AgentResult], str] = {}
        self.progress: dict[str, AgentProgress] = {}
        self.contexts: dict[str, dict[str, Any]] = {}
        self.attempt_agent: dict[str, SubAgent] = {}
        self.failure: str | None = None
        self.started_at = time.time()
        # Scheduling without scans: each task counts its dependencies that have not yet
        # produced a usable result; a task whose count reaches 0 joins ``_ready_ids``.
        self._order = {tid: i for i, tid in enumerate(graph.tasks)}
        self._unmet: dict[str, int] = {}
        self._dependents: dict[str, list[str]] = {tid: [] for tid in graph.tasks}
        self._ready_ids: set[str] = set()
        for tid, t in graph.tasks.items():
            deps = dict.fromkeys(t.depends_on)
            self._unmet[tid] = len(deps)
            for dep in deps:
                self._dependents[dep].append(tid)
            if not deps:
                self._ready_ids.add(tid)
        # Finished jobs arrive through done-callbacks, so a wake-up costs nothing per job
        # still running (``asyncio.wait`` would re-register on all of them every time).
        self._finished: list[asyncio.Task[AgentResult]] = []
        self._wakeup: asyncio.Future[None] | None = None

    # ------------------------------------------------------------------ the run

    async def run_to_end(self) -> RunResult:
        """Run the graph as the whole of its run: start the record, schedule, and finish it."""
        run = self.run
        run.start(self.graph.describe())
        try:
            await self.schedule()
        except asyncio.CancelledError:
            await self.cancel_running("cancelled")
            run.results.update(self.results)
            result = await run.finish("cancelled", "the run was cancelled (Ctrl-C or cancellation); partial results kept",
                                      sink_ids=self.graph.sink_ids)
            raise RunCancelled(result) from None
        except BaseException:
            await self.cancel_running("cancelled")
            run.results.update(self.results)
            await run.finish("failed", "the run crashed inside moot; partial results kept", sink_ids=self.graph.sink_ids)
            raise
        run.results.update(self.results)
        return await run.finish(*self.verdict(), sink_ids=self.graph.sink_ids)

    async def schedule(self) -> None:
        await self._schedule()

    async def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            left = self.tracker.time_left()
            if left is not None and left <= 0:
                self.tracker.deadline_error()  # marks the run stopped: start nothing new
            if self.failure is None and self.tracker.run_stop is None:
                for tid in self._ready():
                    self._start(tid)
            if not self.running:
                return
            if not self._finished:
                self._wakeup = loop.create_future()
                await self._wakeup
            finished, self._finished = self._finished, []
            for job in finished:
                tid = self.running.pop(job, None)
                if tid is None:  # not (or no longer) ours to settle
                    continue
                self._settle(tid, job)
                if self.results[tid].status in _USABLE:
                    self._release_dependents(tid)
            if self.failure is not None:
                await self.cancel_running("cancelled")
                return

    def _job_done(self, job: asyncio.Task[AgentResult]) -> None:
        self._finished.append(job)
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _release_dependents(self, tid: str) -> None:
        """``tid`` has a usable result: its dependents need one dependency less."""
        for dependent in self._dependents[tid]:
            self._unmet[dependent] -= 1
            if self._unmet[dependent] == 0:
                self._ready_ids.add(dependent)

    def _ready(self) -> list[str]:
        """Tasks whose dependencies all have usable results, in the graph's order."""
        if not self._ready_ids:
            return []
        ready = [tid for tid in sorted(self._ready_ids, key=self._order.__getitem__)
                 if self.results[tid].status == "not_started"]
        self._ready_ids.clear()
        if self.max_parallel is not None:
            room = max(0, self.max_parallel - len(self.running))
            self._ready_ids.update(ready[room:])  # they wait for a slot, in the graph's order
            ready = ready[:room]
        return ready

    def _start(self, tid: str, agent: SubAgent | None = None) -> None:
        spec = self.graph.tasks[tid]
        result = self.results[tid]
        if agent is None:  # first attempt (a fallback reuses the context already built)
            result.status = "running"
            result.started_at = time.time()
            if self.emit.active:
                self.emit.emit(EventType.TASK_STARTED, task_id=tid, agent=spec.agent, depends_on=list(spec.depends_on))
            try:
                self.contexts[tid] = self._context_for(tid)
            except Exception as exc:  # a reducer refused to combine: this task fails
                # Another agent would get the same inputs, so a fallback cannot help here.
                self._fail(tid, f"reducer failed: {exc}", final=spec.on_failure == "fallback")
                return
            agent = self.graph.agents[spec.agent]
            if spec.output_type is not None:
                agent = agent.with_output(spec.output_type)
        self.attempt_agent[tid] = agent
        progress = self.progress[tid] = AgentProgress()
        job = asyncio.create_task(
            agent.run(
                spec.task,
                self.contexts[tid] or None,
                budget=self.tracker,
                bus=self.bus,
                progress=progress,
                run_id=self.run_id,
                task_id=tid,
            ),
            name=f"moot task {tid}",
        )
        self.running[job] = tid
        job.add_done_callback(self._job_done)

    def _context_for(self, tid: str) -> dict[str, Any]:
        spec = self.graph.tasks[tid]
        if not spec.depends_on:
            return {}
        outputs = {dep: isolated(self.results[dep].output) for dep in spec.depends_on}
        reduced = (spec.reducer or collect)(outputs)
        if isinstance(reduced, dict):
            return reduced
        return {", ".join(spec.depends_on): reduced}

    def _settle(self, tid: str, job: asyncio.Task[AgentResult]) -> None:
        result = self.results[tid]
        agent = self.attempt_agent[tid]
        is_fallback = agent.name != self.graph.tasks[tid].agent
        if job.cancelled():
            self._fail(tid, "cancelled")
            return
        if job.exception() is not None:
            exc = job.exception()
            self._absorb(result, self.progress[tid])
            self._fail(tid, f"{type(exc).__name__}: {exc}", final=is_fallback)
            return
        outcome = job.result()
        result.usage = result.usage + outcome.usage
        result.turns += outcome.turns
        result.transcript = outcome.transcript
        result.text = outcome.text
        result.stop_reason = outcome.stop_reason
        if outcome.ok or outcome.stop_reason.startswith("budget:"):
            result.output = outcome.output
            result.finished_at = time.time()
            if outcome.ok:
                result.status = "fell_back" if is_fallback else "completed"
            else:
                result.status = "stopped"
                result.error = outcome.detail
            if self.emit.active:  # the payload's model_dump is not free
                self.emit.emit(
                    EventType.TASK_FINISHED,
                    task_id=tid,
                    agent=agent.name,
                    status=result.status,
                    stop_reason=outcome.stop_reason,
                    **result.usage.model_dump(),
                )
            return
        result.output = outcome.output  # partial (max_turns: the last text)
        self._fail(tid, outcome.detail or outcome.stop_reason, final=is_fallback)

    def _absorb(self, result: TaskResult, progress: AgentProgress) -> None:
        result.usage = result.usage + progress.usage
        result.turns += progress.turns
        result.transcript = tuple(progress.messages)
        result.text = progress.last_text

    def _fail(self, tid: str, error: str, *, final: bool = False) -> None:
        spec = self.graph.tasks[tid]
        result = self.results[tid]
        policy = "fail" if final else spec.on_failure
        attempt = self.attempt_agent.get(tid)
        self.emit.emit(
            EventType.TASK_FAILED,
            task_id=tid,
            agent=attempt.name if attempt is not None else spec.agent,
            error=error,
            policy=policy,
        )
        if policy == "fallback":
            result.error = error
            fallback = (
                self.graph.agents[spec.fallback_agent]
                if spec.fallback_agent
                else generic_fallback_agent(self.graph.agents[spec.agent])
            )
            result.fallback_agent = fallback.name
            self._start(tid, fallback)
            return
        result.status = "failed"
        result.finished_at = time.time()
        result.error = error if result.error is None else f"{result.error}; then {error}"
        if policy == "skip":
            for dep in self.graph.dependents(tid):
                skipped = self.results[dep]
                if skipped.status == "not_started":
                    skipped.status = "skipped"
                    skipped.error = f"skipped because task {tid!r} failed"
                    self.emit.emit(EventType.TASK_SKIPPED, task_id=dep, agent=skipped.agent, reason=skipped.error)
            return
        self.failure = f"task {tid!r} (agent {spec.agent!r}) failed: {result.error}"

    async def cancel_running(self, status: str) -> None:
        jobs = dict(self.running)
        self.running.clear()
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)
        for job, tid in jobs.items():
            result = self.results[tid]
            self._absorb(result, self.progress[tid])
            result.output = result.output if result.output is not None else (result.text or None)
            result.status = "cancelled"  # type: ignore[assignment]
            result.finished_at = time.time()
            result.stop_reason = status
            self.emit.emit(EventType.TASK_FAILED, task_id=tid, agent=result.agent, error=status, policy="none",
                           status="cancelled")

    # ------------------------------------------------------------------ the end

    def verdict(self) -> tuple[RunStatus, str]:
        counts: dict[str, int] = {}
        for r in self.results.values():
            counts[r.status] = counts.get(r.status, 0) + 1
        not_started = counts.get("not_started", 0)
        if self.failure is not None:
            return "failed", self.failure + _tail(not_started, "not started")
        if self.tracker.run_stop is not None:
            return "stopped", f"stopped: {self.tracker.run_stop.message}" + _tail(not_started, "not started")
        notes = [f"{n} {status}" for status, n in counts.items() if status in ("failed", "skipped", "fell_back", "stopped")]
        if notes:
            return "completed", f"completed with {', '.join(notes)} task(s)"
        return "completed", f"all {len(self.results)} tasks completed"

    def result(self, status: RunStatus, reason: str, *, own_usage: bool = True) -> RunResult:
        """The graph's outcome; its usage from the tracker (``own_usage``: the tracker is the
        graph's alone) or else summed over its tasks (a graph inside a longer run)."""
        usage = sum((r.usage for r in self.results.values()), Usage())
        by_agent: dict[str, Usage] = {}
        for r in self.results.values():
            if r.usage.requests or r.usage.total_tokens:
                key = r.agent if r.fallback_agent is None else f"{r.agent}+{r.fallback_agent}"
                by_agent[key] = by_agent.get(key, Usage()) + r.usage
        if own_usage and self.tracker.usage_by_agent:
            by_agent = dict(self.tracker.usage_by_agent)
            usage = sum(by_agent.values(), Usage())
        return RunResult(
            run_id=self.run_id,
            name=self.name,
            status=status,
            stop_reason=reason,
            results=self.results,
            usage=usage,
            usage_by_agent=by_agent,
            started_at=self.started_at,
            finished_at=time.time(),
            sink_ids=self.graph.sink_ids,
        )


def _tail(count: int, what: str) -> str:
    return f"; {count} task{'s' if count != 1 else ''} {what}" if count else ""


__all__ = ["Execution"]
