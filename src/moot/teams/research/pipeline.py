"""One research run: the phases are steps of one :class:`~moot.runtime.Run`, on one budget.

The planner, synthesizer and verifier are single agent calls of the run. The researchers are
a :class:`~moot.runtime.TaskGraph` run *inside* the same run (``Run.graph``): same run id,
same event bus, same :class:`~moot.runtime.BudgetTracker`, so ``moot runs show ID`` draws
their bars on one time axis next to the other phases, and the question's budget is one
tracker across every phase (never rebuilt from what is left).
"""

from __future__ import annotations

import time

from moot.runtime import Run, RunResult, SubAgent, SubAgentTask, TaskGraph


class PipelineRun(Run):
    """A research run: planner, synthesizer and verifier are steps; the researchers one inner graph."""

    @property
    def phase_seconds(self) -> dict[str, float]:
        return self.step_seconds

    async def researchers(self, agents: list[SubAgent], *, parallel: bool) -> RunResult:
        """Run the researchers as a task graph inside this run (all at once, or one at a time
        when ``parallel`` is off: only for the benchmark). A failed researcher skips nothing:
        the synthesizer works with the others' evidence."""
        tasks = [SubAgentTask(a.name, a.name, on_failure="skip") for a in agents]
        t0 = time.perf_counter()
        result = await self.graph(TaskGraph(agents, tasks), max_parallel=None if parallel else 1)
        self.step_seconds["researchers"] = time.perf_counter() - t0
        return result
