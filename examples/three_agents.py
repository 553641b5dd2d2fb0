"""Three sub-agents: two work in parallel, a third weighs both results.

Runs on the embedded model by default (set MOOT_MODEL to use another one), then
`moot runs show <id>` shows the timeline of what happened.
"""

from moot.runtime import Budget, RunStore, SubAgent, SubAgentTask, TaskGraph

pros = SubAgent("pros", "finds advantages", "List two advantages of the topic, one short line each.")
cons = SubAgent("cons", "finds drawbacks", "List two drawbacks of the topic, one short line each.")
judge = SubAgent("judge", "weighs both sides", "Weigh the advantages and drawbacks in two sentences.")

graph = TaskGraph(
    agents=[pros, cons, judge],
    tasks=[
        SubAgentTask("pros", "Topic: working from home."),
        SubAgentTask("cons", "Topic: working from home."),
        SubAgentTask("judge", "Is working from home a good idea?", depends_on=["pros", "cons"]),
    ],
)

if __name__ == "__main__":
    # The preset's deadline fits the model: 600 s on the embedded model, 30 s on a hosted one.
    result = graph.run_sync(budget=Budget.preset("standard"), store=RunStore(), name="three agents")
    print(result.output)
    print(f"\n{result.status}: {result.stop_reason}")
    print(f"run id {result.run_id[:8]} — see it with: moot runs show {result.run_id[:8]}")
    if not result.ok:
        raise SystemExit(1)
