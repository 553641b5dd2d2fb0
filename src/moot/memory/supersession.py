"""SUPERSEDES: which fact about an entity's attribute is current, and what it replaced.

The rule, for the facts that share a normalised entity and attribute:

* facts are ordered by their temporal index (explicit, else from the source date, else from
  when they were learned);
* a fact is superseded by the *first later* fact whose value differs from its own, and a
  SUPERSEDES link goes from that newer fact to it;
* facts with the same temporal index and different values do not supersede each other: that
  is a conflict between sources, and both stay current (:meth:`KnowledgeBase.conflicts`).

Nothing is ever deleted by supersession. Because the links are recomputed for the whole
(entity, attribute) group on every change, the history comes out the same whatever order the
facts were learned in: an older fact that arrives late slots in behind the newer one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from moot.memory.store import now_utc


@dataclass(slots=True)
class _Member:
    id: int
    order: int
    value: str
    superseded_by: int | None


def _successors(members: list[_Member]) -> dict[int, int]:
    """For each member, the id of the first strictly later member with a different value.

    Linear: walking from newest to oldest, keep the earliest later fact (``first``) and the
    earliest later fact whose value differs from ``first``'s (``first_other``). For a fact
    whose value equals ``first``'s, ``first_other`` is by construction its answer.
    """
    result: dict[int, int] = {}
    first: _Member | None = None
    first_other: _Member | None = None
    index = len(members) - 1
    while index >= 0:
        # One block of equal temporal index: none of them is later than another.
        start = index
        while start > 0 and members[start - 1].order == members[index].order:
            start -= 1
        block = members[start : index + 1]
        for member in block:
            if first is not None and first.value != member.value:
                result[member.id] = first.id
            elif first_other is not None:
                result[member.id] = first_other.id
        # The block becomes the earliest "later" facts for everything older than it.
        block_first = block[0]  # members are sorted by (order, id)
        block_other = next((m for m in block if m.value != block_first.value), None)
        if block_other is None and first is not None:
            block_other = first if first.value != block_first.value else first_other
        first, first_other = block_first, block_other
        index = start - 1
    return result


def relink(conn: sqlite3.Connection, entity_key: str, attribute_key: str) -> set[int]:
    """Recompute SUPERSEDES links for one (entity, attribute) group; return the ids whose state changed.

    Must run inside the caller's write transaction.
    """
    if not entity_key or not attribute_key:
        return set()
    members = [
        _Member(*row)
        for row in conn.execute(
            "SELECT id, temporal_index, value_key, superseded_by FROM facts "
            "WHERE entity_key = ? AND attribute_key = ? ORDER BY temporal_index, id",
            (entity_key, attribute_key),
        )
    ]
    if len(members) < 2 and not any(m.superseded_by for m in members):
        return set()
    desired = _successors(members)
    changed: set[int] = set()
    for member in members:
        wanted = desired.get(member.id)
        if wanted != member.superseded_by:
            conn.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (wanted, member.id))
            changed.add(member.id)
    ids = [m.id for m in members]
    placeholders = ",".join("?" * len(ids))
    existing = set(
        conn.execute(f"SELECT newer_id, older_id FROM supersedes WHERE older_id IN ({placeholders})", ids)
    )
    wanted_links = {(newer, older) for older, newer in desired.items()}
    for newer, older in existing - wanted_links:
        conn.execute("DELETE FROM supersedes WHERE newer_id = ? AND older_id = ?", (newer, older))
    stamp = now_utc().isoformat()
    for newer, older in sorted(wanted_links - existing):
        conn.execute(
            "INSERT INTO supersedes (newer_id, older_id, created_at) VALUES (?, ?, ?)", (newer, older, stamp)
        )
    return changed
