"""``GraphTeam``: five agents grow a noisy graph scaffold over your sources in a recursive loop.

```python
from moot.teams.graph import GraphTeam
team = GraphTeam(sources=["notes/mill.md", "notes/river.md"], model="local")
result = team.ask_sync("How does the Ostby mill affect Lake Mira?")
print(result.answer, result.noise.current, result.stop_reason)
result.scaffold.path                                   # the answer: hops from subject to object
```

Python proposes and the model chooses. Each iteration: THINK (graph questions from the
scaffold) → ACT (sentences from the sources by FTS5, front matter kept as metadata) →
OBSERVE (Python's candidate phrases; the mapper chooses which are entities and which labels
name one thing) → BUILD (Python's pairs of entities sharing a sentence; the mapper chooses each
pair's relation or its own "no link", in batches (every answer names its item); hedges and unknowns from the text's cues; placeholders
and evidence labels in parallel) → SELF-CORRECT (the skeptic; the noise budget) → RECURSE,
until an iteration adds nothing and the noise budget holds, the iteration limit, or the budget.
The answer is a path from the question's subject to its object, found in Python. Every step is
a task of one recorded run (``moot runs show``); the design's ``nlr.*`` events go on the bus.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from moot.errors import MootError
from moot.models.base import Model
from moot.models.registry import RoleModels, model_for, resolve_models
from moot.runtime import Budget, EventBus, Run, RunStore
from moot.teams.graph import agents as ag
from moot.teams.graph.evidence import SourceIndex
from moot.teams.graph.loop import Loop
from moot.teams.graph.result import GraphResult
from moot.teams.graph.scaffold import DEFAULT_NOISE_BUDGET
from moot.teams.graph.vocabulary import DEFAULT, VOCABULARIES, Vocabulary
from moot.text import phrases

BUDGETS: dict[str, dict[str, Any]] = {
    "quick": {"iterations": 2, "max_calls": 600},
    "standard": {"iterations": 3, "max_calls": 1000},
    "deep": {"iterations": 5, "max_calls": 2000},
}
"""``--budget`` presets: iterations and model calls. Most calls of a vocabulary asked plainly are
one-token questions (about two a second on the embedded model); asked the listed way, the loop's
own limits per iteration bind long before these (a dozen calls an iteration, each a long answer)."""


@dataclass
class GraphConfig:
    """Limits and knobs of one run."""

    iterations: int = 3
    """The iteration limit."""
    noise_budget: float = DEFAULT_NOISE_BUDGET
    """The share of low-confidence elements the graph must keep (0.25: a quarter)."""
    max_calls: int | None = 1000
    """Every model call of the run, one-token questions included (asked plainly: one per candidate,
    two per pair, one per link drawn)."""
    max_tokens: int | None = None
    deadline_s: float | None = None
    questions_per_iteration: int = 2
    """Graph questions (each one retrieval of sentences) per iteration."""
    sentences_per_iteration: int = 40
    """The most sentences read in one iteration (a source this small is read whole in the first)."""
    short_sources: int = 20
    """Sources of at most this many sentences (about one news article) offer the model every candidate
    phrase; longer ones only the salient (:attr:`Vocabulary.min_mentions`): in a short text a thing named
    once may be on the reader's chain, in a set of articles most things named once are not."""
    candidates_per_call: int = 24
    """Candidate phrases the mapper sorts in one call."""
    choice_calls_per_iteration: int = 2
    pairs_per_call: int = 8
    """Pairs of entities the mapper links in one call."""
    plain_questions_per_iteration: int = 160
    """Asked plainly in two steps: the most type questions, and the most link questions, in one
    iteration (a text's pairs are asked together, so a first text with more pairs may pass it), besides
    one relation question per link drawn."""
    link_calls_per_iteration: int = 3
    """Link calls per iteration (in parallel): the call count does not grow with the number of pairs;
    pairs left over wait for the next iteration, those nearest the question first."""
    hypotheses: bool = True
    """Ask the hypothesizer for alternative structures after the loop."""
    quantify: bool = True
    """Ask the quantifier to label evidence (else the evidence kind follows the relation type)."""
    challenge: bool = True
    """Ask the skeptic to challenge confident claims."""
    vocabulary: Vocabulary = field(default_factory=lambda: DEFAULT)
    """The closed sets the mapper chooses from (entity types, relation types)."""

    @classmethod
    def preset(cls, name: str, **changes: Any) -> GraphConfig:
        if name not in BUDGETS:
            raise MootError(f"unknown budget {name!r}", fix="use --budget " + ", ".join(BUDGETS))
        values = {**BUDGETS[name], **{k: v for k, v in changes.items() if v is not None}}
        if isinstance(values.get("vocabulary"), str):
            values["vocabulary"] = vocabulary(values["vocabulary"])
        return cls(**values)


def vocabulary(name: str) -> Vocabulary:
    """A named vocabulary (``default``, ``family``); a one-line error naming the choices otherwise."""
    if name not in VOCABULARIES:
        raise MootError(f"unknown vocabulary {name!r}", fix="use --vocabulary " + " or ".join(VOCABULARIES))
    return VOCABULARIES[name]


class GraphTeam:
    """Mapper, skeptic, placeholder generator, quantifier and hypothesizer over your sources."""

    def __init__(self, sources: Sequence[str | Path] = (), *, kb: str | Path | None = None, model: Any = None,
                 models: RoleModels | None = None, store: RunStore | None = None, config: GraphConfig | None = None,
                 index: SourceIndex | None = None, tools: Sequence[Any] = (),
                 source_root: str | Path | None = None) -> None:
        """``model`` serves every agent; ``models`` gives single roles their own model
        (``{"skeptic": "openai:gpt-4o"}``; roles: :data:`~moot.teams.graph.agents.AGENT_NAMES`).
        ``tools`` (an MCP tool server such as a reasoning scratchpad, or tools) go to the mapper,
        the skeptic and the hypothesizer, as the design has them; without any the team is as before.
        ``source_root``: a folder every source must stay in (the server's ``--repo-root``)."""
        self.sources = [Path(s) for s in sources]
        self.tools = list(tools)
        self.source_root = source_root
        self.kb = kb
        self.config = config or GraphConfig()
        self.store = store
        self._index = index
        self.model, self.models = resolve_models(model, models, roles=ag.AGENT_NAMES, team="graph")

    def model_for(self, role: str) -> Model:
        """The model of one role: its own from ``models``, else the team's ``model``."""
        return model_for(role, self.model, self.models)

    # ------------------------------------------------------------------ sources

    def index(self, progress: Any = None) -> SourceIndex:
        """The sources read into sentences (built on first use)."""
        if self._index is None:
            if not self.sources and self.kb is None:
                raise MootError("no sources given", fix="pass --source FILE (text or Markdown) or --kb NAME")
            index = SourceIndex()
            try:
                for path in self.sources:
                    index.add_file(path, progress, root=self.source_root)
                if self.kb is not None:
                    index.add_knowledge_base(self.kb)
            except BaseException:
                index.close()
                raise
            if index.count() == 0:
                index.close()
                only_meta = [d.name for d in index.documents.values() if d.meta_keys]
                if only_meta:
                    raise MootError(f"the sources hold only front matter ({', '.join(only_meta[:3])}): a title, a publisher "
                                    "and a date are metadata, not text to reason over", fix="pass files with a body of text")
                raise MootError("the sources hold no text", fix="pass text or Markdown files that are not empty")
            self._index = index
            # the loop tags sentences for candidate phrases: the tagger loads here, with the sources,
            # rather than on the event loop inside the question's deadline
            phrases.warm()
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    # ------------------------------------------------------------------ asking

    def ask_sync(self, question: str, **kwargs: Any) -> GraphResult:
        return asyncio.run(self.ask(question, **kwargs))

    async def ask(self, question: str, *, bus: EventBus | None = None, run_id: str | None = None,
                  parent_run_id: str | None = None) -> GraphResult:
        question = " ".join(question.split())
        if not question:
            raise MootError("the question is empty", fix="pass a question about your sources")
        cfg = self.config
        if not 0.0 <= cfg.noise_budget <= 1.0:
            raise MootError(f"noise budget {cfg.noise_budget} is not a share", fix="use --noise-budget between 0 and 1, e.g. 0.25")
        if cfg.iterations < 1:
            raise MootError("the iteration limit must be at least 1", fix="use --iterations 1 or more")
        index = self._index if self._index is not None else await asyncio.to_thread(self.index)
        record = Run(f"graph: {question[:60]}", Budget(max_calls=cfg.max_calls, max_tokens=cfg.max_tokens,
                                                         deadline_s=cfg.deadline_s), bus, self.store, run_id,
                     parent_run_id=parent_run_id)
        result = await Loop(self, question, index, record).run()
        if self.store is not None:  # the run's page draws the scaffold from this
            self.store.record_output(result.run_id, "graph", result.to_json())
        return result


__all__ = ["BUDGETS", "GraphConfig", "GraphTeam", "vocabulary"]
