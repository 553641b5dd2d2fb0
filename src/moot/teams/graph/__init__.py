"""The graph reasoning team: a mapper, a skeptic, a placeholder generator, an uncertainty
quantifier and a hypothesizer grow a noisy graph scaffold over your sources in a recursive
loop, keeping at least a quarter of it honestly uncertain (the noise budget).

```python
from moot.teams.graph import GraphTeam
result = GraphTeam(sources=["a.md", "b.md"]).ask_sync("How does X affect Y?")
```

See docs/graph-reasoning.md.
"""

from __future__ import annotations

from moot.teams.graph.evidence import SourceIndex
from moot.teams.graph.export import to_graphml, to_mermaid, write_graph
from moot.teams.graph.quantify import quantify_confidence, quantify_strength
from moot.teams.graph.result import GraphResult, IterationRecord
from moot.teams.graph.scaffold import (
    RELATION_TYPES,
    Edge,
    PathHop,
    EntityNode,
    Evidence,
    EvidenceFeatures,
    Gap,
    NoiseStatus,
    PlaceholderNode,
    Scaffold,
    StructuralHypothesis,
)
from moot.teams.graph.agents import AGENT_NAMES as ROLES
from moot.teams.graph.team import BUDGETS, GraphConfig, GraphTeam
from moot.teams.graph.vocabulary import DEFAULT, FAMILY, Relation, Vocabulary

__all__ = [
    "BUDGETS",
    "DEFAULT",
    "FAMILY",
    "ROLES",
    "RELATION_TYPES",
    "Edge",
    "EntityNode",
    "Evidence",
    "EvidenceFeatures",
    "Gap",
    "GraphConfig",
    "GraphResult",
    "GraphTeam",
    "IterationRecord",
    "NoiseStatus",
    "PathHop",
    "PlaceholderNode",
    "Relation",
    "Scaffold",
    "SourceIndex",
    "StructuralHypothesis",
    "Vocabulary",
    "quantify_confidence",
    "quantify_strength",
    "to_graphml",
    "to_mermaid",
    "write_graph",
]
