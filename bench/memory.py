"""Memory benchmark: insert, search, retrieve and consolidate on a synthetic knowledge base.

What it measures, on one fresh SQLite file in a temporary directory:

The whole sequence runs once per size, each on its own fresh file: 1 000, 10 000 and 100 000
facts (``--quick``: 1 000 and 10 000; ``--facts N [N ...]`` for other sizes). Per size:

1. **Insert**: N facts in batches of 100 through
   ``add_facts`` (facts per second), plus 200 single ``add_fact`` calls (p50/p95 ms each, one
   transaction per call, as an agent storing facts one by one would see). About a third of the
   facts change an entity's attribute over time, so SUPERSEDES links are built as it goes;
   about 5 % are reworded near-duplicates.
2. **Search**: 200 ``search`` calls (limit 10) with two to four words from the vocabulary:
   p50/p95/p99 ms.
3. **Retrieve**: 200 ``retrieve`` calls with questions worded to trigger every strategy:
   p50/p95/p99 ms overall, p50 per strategy chosen and the count per strategy. Goal (learning
   team issue): retrieve p50 under 10 ms at 100 000 facts.
4. **Consolidate**: one ``consolidate`` pass (seconds, facts merged and pruned).
5. **Storage**: file size in MB (after a WAL checkpoint) and bytes per fact, measured before
   consolidation (``file_mb``) and after it (``file_mb_after_consolidation``).

``--profile`` runs cProfile over the retrieve calls of the largest size and prints the top
functions by cumulative time to stderr.

There is no peer run: no comparable memory library is installed in moot's environment, and
the benchmark must run offline. Run::

    python bench/memory.py --quick     # 1k and 10k facts, under a minute
    python bench/memory.py             # 1k, 10k and 100k facts, for docs/benchmarks.md

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from moot.memory import Fact, KnowledgeBase  # noqa: E402

COUNTRIES = [
    "Norway", "Italy", "Germany", "Japan", "Canada", "Sweden", "Austria", "Switzerland", "France",
    "Finland", "Korea", "China", "Netherlands", "Slovenia", "Czechia", "Poland", "Latvia", "Estonia",
]  # fmt: skip
ATTRIBUTES = ["gold medals", "silver medals", "bronze medals", "team size", "coach", "flag bearer", "ranking"]
SPORTS = [
    "biathlon", "curling", "slalom", "downhill", "luge", "skeleton", "bobsleigh", "ski jumping",
    "speed skating", "figure skating", "ice hockey", "snowboard", "freestyle", "nordic combined",
]  # fmt: skip
VERBS = ["won", "lost", "qualified for", "withdrew from", "dominated", "trained for", "led", "debuted in"]
PLACES = ["Milan", "Cortina", "Bormio", "Livigno", "Predazzo", "Anterselva", "Tesero", "Verona"]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def make_facts(n: int, rng: random.Random) -> list[Fact]:
    entities = [f"{c} {s}" for c in COUNTRIES for s in ("team", "squad", "federation")]
    start = _dt.date(2026, 2, 6)
    facts: list[Fact] = []
    for i in range(n):
        day = start + _dt.timedelta(days=rng.randrange(17))
        roll = rng.random()
        if roll < 0.35:  # attribute updates over time -> supersession chains
            entity = rng.choice(entities)
            attribute = rng.choice(ATTRIBUTES)
            value = str(rng.randrange(40))
            facts.append(
                Fact(
                    f"{entity} {attribute} stood at {value} on {day:%B %d}",
                    entity=entity,
                    attribute=attribute,
                    value=value,
                    concept="standings",
                    source=f"Day report {day}",
                    source_date=day,
                    confidence=round(rng.uniform(0.2, 1.0), 2),
                    tags=("standings",),
                )
            )
        elif roll < 0.40 and facts:  # reworded near-duplicate of an earlier fact
            base = rng.choice(facts)
            facts.append(
                Fact(
                    # Reworded only in case, punctuation and stop words: a duplicate to consolidation.
                    "The " + base.content[0].lower() + base.content[1:] + ".",
                    entity=base.entity,
                    attribute=base.attribute,
                    value=base.value,
                    concept=base.concept,
                    source="Wire service",
                    source_date=base.source_date,
                    confidence=round(rng.uniform(0.3, 0.9), 2),
                )
            )
        else:  # event narrative
            country = rng.choice(COUNTRIES)
            sport = rng.choice(SPORTS)
            facts.append(
                Fact(
                    f"{country} {rng.choice(VERBS)} the {sport} event in {rng.choice(PLACES)} (item {i})",
                    entity=country,
                    concept=sport,
                    source=f"Feature {i % 97}",
                    source_date=day,
                    confidence=round(rng.uniform(0.4, 1.0), 2),
                    tags=(sport,),
                )
            )
    return facts


def questions(rng: random.Random, count: int) -> list[str]:
    makers = [
        lambda: f"How many {rng.choice(SPORTS)} events did teams win?",
        lambda: f"When did the {rng.choice(COUNTRIES)} team {rng.choice(ATTRIBUTES)} change?",
        lambda: f"What about {rng.choice(COUNTRIES)} in {rng.choice(SPORTS)}?",
        lambda: f"{rng.choice(SPORTS)} {rng.choice(PLACES)}",
        lambda: f"which teams {rng.choice(VERBS)} the {rng.choice(SPORTS)} event held in {rng.choice(PLACES)} this season",
        lambda: f"List all {rng.choice(ATTRIBUTES)} of the {rng.choice(COUNTRIES)} squad",
    ]
    return [makers[i % len(makers)]() for i in range(count)]


def run(n: int, seed: int, profile: bool = False) -> dict[str, object]:
    rng = random.Random(seed)
    facts = make_facts(n, rng)
    singles = make_facts(200, random.Random(seed + 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite3"
        with KnowledgeBase.open(path) as kb:
            t0 = time.perf_counter()
            for i in range(0, len(facts), 100):
                kb.add_facts(facts[i : i + 100])
            insert_s = time.perf_counter() - t0

            single_ms = []
            for fact in singles:
                t = time.perf_counter()
                kb.add_fact(fact)
                single_ms.append((time.perf_counter() - t) * 1000)

            summary = kb.summary()
            search_ms = []
            vocab = SPORTS + COUNTRIES + PLACES + ["gold", "medals", "coach", "event"]
            for _ in range(200):
                query = " ".join(rng.sample(vocab, rng.randint(2, 4)))
                t = time.perf_counter()
                kb.search(query, limit=10)
                search_ms.append((time.perf_counter() - t) * 1000)

            kb.database.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size_before = path.stat().st_size
            profiler = None
            if profile:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            retrieve_ms = []
            per_strategy: dict[str, list[float]] = {}
            strategies: Counter[str] = Counter()
            for question in questions(rng, 200):
                t = time.perf_counter()
                result = kb.retrieve(question, limit=20)
                elapsed = (time.perf_counter() - t) * 1000
                retrieve_ms.append(elapsed)
                per_strategy.setdefault(str(result.strategy), []).append(elapsed)
                strategies[str(result.strategy)] += 1
            if profiler is not None:
                import pstats

                profiler.disable()
                print(f"--- cProfile of 200 retrieve calls at {n} facts (cumulative) ---", file=sys.stderr)
                pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
                pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(15)

            t = time.perf_counter()
            report = kb.consolidate()
            consolidate_s = time.perf_counter() - t
            kb.database.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size_after = path.stat().st_size
            total = len(facts) + len(singles)
            return {
                "facts": n,
                "facts_inserted": total,
                "insert_batch_facts_per_s": round(len(facts) / insert_s, 1),
                "insert_single_ms_p50": round(percentile(single_ms, 0.5), 3),
                "insert_single_ms_p95": round(percentile(single_ms, 0.95), 3),
                "supersedes_links": summary.supersedes_links,
                "search_ms_p50": round(percentile(search_ms, 0.5), 3),
                "search_ms_p95": round(percentile(search_ms, 0.95), 3),
                "search_ms_p99": round(percentile(search_ms, 0.99), 3),
                "retrieve_ms_p50": round(percentile(retrieve_ms, 0.5), 3),
                "retrieve_ms_p95": round(percentile(retrieve_ms, 0.95), 3),
                "retrieve_ms_p99": round(percentile(retrieve_ms, 0.99), 3),
                "retrieve_ms_mean": round(statistics.fmean(retrieve_ms), 3),
                "strategies": dict(sorted(strategies.items())),
                "retrieve_ms_p50_by_strategy": {
                    name: round(percentile(samples, 0.5), 3) for name, samples in sorted(per_strategy.items())
                },
                "consolidate_s": round(consolidate_s, 3),
                "consolidate_merged": sum(len(m.removed_ids) for m in report.merged),
                "consolidate_pruned": len(report.pruned),
                "facts_after_consolidation": report.facts_after,
                "file_mb": round(size_before / 1e6, 2),
                "bytes_per_fact": round(size_before / total),
                "file_mb_after_consolidation": round(size_after / 1e6, 2),
                "wall_s": round(time.perf_counter() - t0, 2),
            }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k facts instead of 1k, 10k and 100k (under a minute)")
    parser.add_argument("--facts", type=int, nargs="+", default=None, help="sizes (facts inserted in batches)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile the retrieve calls of the largest size")
    args = parser.parse_args()
    sizes = args.facts or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    started = time.perf_counter()
    runs = []
    for n in sizes:
        row = run(n, args.seed, profile=args.profile and n == max(sizes))
        runs.append(row)
        print(f"--- {n} facts ---")
        for key, value in row.items():
            print(f"{key:>28}: {value}")
    largest = runs[-1]
    goal_ms = 10.0
    result: dict[str, object] = {
        "benchmark": "memory",
        "quick": args.quick,
        "sizes": sizes,
        "retrieve_p50_goal_ms": goal_ms,
        "retrieve_p50_largest_ms": largest["retrieve_ms_p50"],
        "retrieve_goal_ok": largest["retrieve_ms_p50"] < goal_ms,
        "runs": runs,
        "wall_s": round(time.perf_counter() - started, 2),
        "python": platform.python_version(),
        "sqlite": __import__("sqlite3").sqlite_version,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": _dt.date.today().isoformat(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
