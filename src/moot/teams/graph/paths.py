"""The answer's path, found in Python: the cheapest walk over the scaffold from the question's
subject to its object, each hop an edge with the sentence that states it.

Edges are walked either way (the hop records whether it went with the edge's direction). A hop
costs 1 plus what the edge lacks in strength, so the fewest hops win and, among those, the
best-supported; a hedged edge costs one more, a provisional one (a placeholder's) two more. The
team asks first for a path through stated links only (``through_placeholders=False``), so a path
through a guess is the answer only where no stated chain joins the two ends.
"""

from __future__ import annotations

import heapq

from moot.teams.graph.scaffold import Edge, PathHop, Scaffold


def _cost(edge: Edge) -> float:
    return 1.0 + (1.0 - edge.strength) + (1.0 if edge.hedged else 0.0) + (2.0 if edge.provisional else 0.0)


def find_path(scaffold: Scaffold, start: str, goal: str, *, through_placeholders: bool = True) -> list[PathHop]:
    """The cheapest path from ``start`` to ``goal`` as hops; empty when there is none (or start is goal)."""
    if start not in scaffold.nodes or goal not in scaffold.nodes or start == goal:
        return []
    adjacent: dict[str, list[tuple[str, Edge, bool]]] = {}
    for edge in scaffold.edges.values():
        if not through_placeholders and edge.provisional:
            continue
        adjacent.setdefault(edge.source, []).append((edge.target, edge, True))
        adjacent.setdefault(edge.target, []).append((edge.source, edge, False))
    best: dict[str, float] = {start: 0.0}
    back: dict[str, tuple[str, Edge, bool]] = {}
    queue: list[tuple[float, str]] = [(0.0, start)]
    while queue:
        cost, node = heapq.heappop(queue)
        if node == goal:
            break
        if cost > best.get(node, float("inf")):
            continue
        for other, edge, forward in sorted(adjacent.get(node, []), key=lambda x: x[1].id):
            total = cost + _cost(edge)
            if total < best.get(other, float("inf")):
                best[other] = total
                back[other] = (node, edge, forward)
                heapq.heappush(queue, (total, other))
    if goal not in back:
        return []
    hops: list[PathHop] = []
    node = goal
    while node != start:
        previous, edge, forward = back[node]
        quote = edge.evidence[0] if edge.evidence else None
        hops.append(PathHop(edge=edge.id, source=previous, target=node, type=edge.type, forward=forward,
                            strength=edge.strength, quote=quote.quote if quote else "", document=quote.source if quote else "",
                            hedged=edge.hedged, provisional=edge.provisional))
        node = previous
    return list(reversed(hops))


def answer_path(scaffold: Scaffold, start: str, goal: str) -> list[PathHop]:
    """The answer's path: through stated links when they join the two ends at all, else through a
    placeholder (a guess is never preferred to a longer chain the sources state)."""
    return find_path(scaffold, start, goal, through_placeholders=False) or find_path(scaffold, start, goal)


def runs_against_links(path: list[PathHop], symmetric: frozenset[str] | set[str]) -> bool:
    """Whether more of a path's hops run against their edges than with them, counting only the hops
    whose direction the sources state (not a symmetric relation's, not a placeholder's guess)."""
    directed = [hop for hop in path if not hop.provisional and hop.type not in symmetric]
    backwards = sum(1 for hop in directed if not hop.forward)
    return backwards > len(directed) - backwards


def component_of(scaffold: Scaffold, start: str) -> set[str]:
    """Every node reachable from ``start`` over any edge, either way."""
    adjacent: dict[str, set[str]] = {}
    for edge in scaffold.edges.values():
        adjacent.setdefault(edge.source, set()).add(edge.target)
        adjacent.setdefault(edge.target, set()).add(edge.source)
    seen, todo = {start}, [start]
    while todo:
        for other in adjacent.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


__all__ = ["answer_path", "component_of", "find_path", "runs_against_links"]
