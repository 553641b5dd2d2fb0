"""Code index benchmark: indexing throughput, re-index time, search latency, bounded memory.

What it measures, each index in a fresh temporary file:

1. **Index** a real installed package (``openai``, about 2,000 files; ``--quick``: ``rich``,
   100 files; ``--package NAME`` for another): files/s and MB/s of source read, chunks,
   symbols, references, index file size.
2. **Re-index unchanged**: the same tree again (every file skipped by size and time).
3. **Re-index touched**: every file's time changed, content not (every file read and hashed,
   none parsed): the cost of a ``git checkout`` that rewrites files without changing them.
4. **Search**: 200 lexical queries (p50/p95/p99 ms), half identifiers from the index
   (``read_file`` style), half two-word phrases made of identifier parts. The baseline beside
   it, in the same run, is what a tool without an index does: a Python regex scan of every
   file for the query's words (20 queries, p50 ms) — the ratio is the point of an index.
5. **resolve_symbol**: 200 lookups (p50/p99 ms), with callers, callees and references.
6. **Ranking** (openai and rich only): questions whose answering definition is known, written
   by hand; hit@1, hit@5 and mean reciprocal rank of the first hit whose qualified name
   contains the expected text (top 20 looked at), plus each question's rank.
7. ``--files N`` (not in ``--quick``): a synthetic tree of N small Python files (50,000 for
   the issue's bad-input case) indexed in a child process, reporting its wall time, files/s
   and peak RSS, to show memory stays bounded (one batch at a time, never the whole tree).

Run::

    python bench/codeindex.py --quick             # rich, under a minute
    python bench/codeindex.py                     # openai
    python bench/codeindex.py --files 50000       # plus the 50,000-file tree (a few minutes)

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from moot.codeindex import CodeIndex  # noqa: E402
from moot.codeindex.terms import identifier_parts  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def package_root(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name!r} is not installed as a package directory")
    return Path(list(spec.submodule_search_locations)[0])


def queries(idx: CodeIndex, n: int, rng: random.Random) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(idx.db_path)
    names = [r[0] for r in conn.execute("SELECT DISTINCT name FROM symbols WHERE length(name) > 3 ORDER BY name")]
    conn.close()
    picked = rng.sample(names, min(n, len(names)))
    out: list[str] = []
    for i, name in enumerate(picked):
        if i % 2 == 0:
            out.append(name)
        else:
            parts = identifier_parts(name) + identifier_parts(rng.choice(names))
            out.append(" ".join(parts[:3]))
    return out


RANKING_CASES: dict[str, dict[str, str]] = {
    "openai": {
        "how are retries handled": "retr",
        "api key from environment variable": "openai._client.OpenAI.__init__",
        "Stream": "openai._streaming.Stream",
        "retry request after rate limit": "retr",
        "parse json response into pydantic model": "_parse",
        "upload a file in parts": "upload",
        "OpenAI": "openai._client.OpenAI",
        "max_retries": "max_retries",
        "sse decoder": "SSEDecoder",
        "should retry": "_should_retry",
    },
    "rich": {
        "Console": "rich.console.Console",
        "progress bar": "ProgressBar",
        "render markdown": "rich.markdown",
        "table column width": "rich.table",
        "syntax highlighting": "rich.syntax",
        "pretty print traceback": "rich.traceback",
        "live display refresh": "rich.live",
        "export html": "export_html",
        "measure text width": "measure",
        "emoji": "rich.emoji",
    },
}


def ranking(idx: CodeIndex, cases: dict[str, str]) -> dict:
    ranks: dict[str, int | None] = {}
    for question, expected in cases.items():
        hits = idx.search(question, mode="lexical", limit=20)
        ranks[question] = next((i + 1 for i, h in enumerate(hits) if expected in h.name), None)
    found = [r for r in ranks.values() if r is not None]
    return {
        "questions": len(cases),
        "hit_at_1": sum(r == 1 for r in found),
        "hit_at_5": sum(r <= 5 for r in found),
        "mrr": round(sum(1 / r for r in found) / len(cases), 3),
        "ranks": ranks,
    }


def scan_baseline(root: Path, query: str) -> int:
    """What a search without an index costs: read every file and look for the query's words."""
    words = [re.escape(w) for w in re.findall(r"\w+", query.lower()) if len(w) > 2] or [re.escape(query)]
    pattern = re.compile("|".join(words), re.IGNORECASE)
    found = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith((".py", ".pyi", ".md", ".txt", ".toml")):
                try:
                    text = Path(dirpath, name).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                found += len(pattern.findall(text))
    return found


def decisions_timing(idx: CodeIndex, db: Path, limit: int = 200) -> dict:
    """The control flow of up to ``limit`` functions, file by file, as ranking a question's
    candidates reads it: each file's syntax tree kept for its next definition (as moot does),
    beside the same reads with the tree parsed anew for every definition (as before the tree
    was kept)."""
    import sqlite3

    from moot.codeindex import flow

    with sqlite3.connect(db) as conn:
        spans = conn.execute(
            "SELECT f.path, s.start_line, s.end_line FROM symbols s JOIN files f ON f.id = s.file_id "
            "WHERE s.kind IN ('function', 'method') ORDER BY f.path, s.start_line LIMIT ?", (limit,)).fetchall()

    def timed(anew: bool) -> float:
        flow._parsed.cache_clear()
        started = time.perf_counter()
        for path, start, end in spans:
            if anew:
                flow._parsed.cache_clear()
            idx.decisions(path, start, end)
        return time.perf_counter() - started

    anew_s, kept_s = timed(anew=True), timed(anew=False)
    return {"functions": len(spans), "files": len({p for p, _, _ in spans}), "kept_ms": ms(kept_s),
            "anew_ms": ms(anew_s), "speedup": round(anew_s / kept_s, 1) if kept_s else None}


def bench_package(name: str, workdir: Path, n_queries: int, rng: random.Random) -> dict:
    root = package_root(name)
    db = workdir / f"{name}.sqlite3"
    started = time.perf_counter()
    idx = CodeIndex.build(root, db_path=db)
    seconds = time.perf_counter() - started
    stats = idx.stats()
    report = idx.last_build
    assert report is not None
    idx.close()

    started = time.perf_counter()
    CodeIndex.build(root, db_path=db).close()
    unchanged_s = time.perf_counter() - started

    # Touch every file in a copy-free way: bump the stored times so each file is read and hashed.
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE files SET mtime_ns = mtime_ns - 1")
    started = time.perf_counter()
    touched = CodeIndex.build(root, db_path=db)
    touched_s = time.perf_counter() - started
    assert touched.last_build is not None and touched.last_build.parsed == 0
    touched_mb = touched.last_build.bytes_read / 1e6

    qs = queries(touched, n_queries, rng)
    latencies = []
    empty = 0
    for q in qs:
        t = time.perf_counter()
        hits = touched.search(q, mode="lexical", limit=10)
        latencies.append(time.perf_counter() - t)
        empty += not hits
    resolve = []
    for q in qs:
        t = time.perf_counter()
        touched.resolve_symbol(q.split()[0])
        resolve.append(time.perf_counter() - t)
    baseline = []
    for q in qs[:20]:
        t = time.perf_counter()
        scan_baseline(root, q)
        baseline.append(time.perf_counter() - t)
    quality = ranking(touched, RANKING_CASES[name]) if name in RANKING_CASES else None
    reads = decisions_timing(touched, db)
    touched.close()
    search_p50 = statistics.median(latencies)
    return {
        "package": name,
        "files": stats["files"],
        "mb": round(report.bytes_read / 1e6, 2),
        "chunks": stats["chunks"],
        "symbols": stats["symbols"],
        "references": stats["references"],
        "index_s": round(seconds, 2),
        "files_per_s": round(stats["files"] / seconds, 1),
        "mb_per_s": round(report.bytes_read / 1e6 / seconds, 2),
        "db_mb": round(stats["db_bytes"] / 1e6, 1),
        "reindex_unchanged_s": round(unchanged_s, 3),
        "reindex_touched_s": round(touched_s, 3),
        "reindex_touched_read_mb": round(touched_mb, 2),
        "search_queries": len(qs),
        "search_empty": empty,
        "search_p50_ms": ms(search_p50),
        "search_p95_ms": ms(percentile(latencies, 95)),
        "search_p99_ms": ms(percentile(latencies, 99)),
        "resolve_p50_ms": ms(statistics.median(resolve)),
        "resolve_p99_ms": ms(percentile(resolve, 99)),
        "scan_baseline_p50_ms": ms(statistics.median(baseline)),
        "search_speedup_vs_scan": round(statistics.median(baseline) / search_p50, 1),
        "ranking": quality,
        "decisions": reads,
    }


SYNTHETIC = '''"""Module {n}: part of a synthetic tree for the 50,000-file benchmark."""


class Handler{n}:
    """Handles requests of kind {n}."""

    def handle(self, request):
        return process_{n}(request) + helper_{m}(request)


def process_{n}(request):
    """Process one request."""
    return len(str(request)) * {n}
'''


def bench_synthetic(n_files: int, workdir: Path) -> dict:
    tree = workdir / "synthetic"
    for i in range(n_files):
        folder = tree / f"pkg{i // 500:03d}" / f"sub{(i // 50) % 10}"
        if i % 50 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(SYNTHETIC.format(n=i, m=(i * 7) % n_files))
    child = (
        "import resource, sys, time, json; sys.path.insert(0, sys.argv[3]);"
        "from moot.codeindex import CodeIndex;"
        "t = time.perf_counter(); idx = CodeIndex.build(sys.argv[1], db_path=sys.argv[2]); s = time.perf_counter() - t;"
        "st = idx.stats();"
        "print(json.dumps({'seconds': s, 'files': st['files'], 'chunks': st['chunks'], 'db_bytes': st['db_bytes'],"
        " 'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", child, str(tree), str(workdir / "synthetic.sqlite3"), str(ROOT / "src")],
        capture_output=True, text=True, check=True,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource, sys; sys.path.insert(0, sys.argv[1]); import moot.codeindex;"
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)", str(ROOT / "src")],
        capture_output=True, text=True, check=True,
    )
    return {
        "files": data["files"],
        "chunks": data["chunks"],
        "index_s": round(data["seconds"], 1),
        "files_per_s": round(data["files"] / data["seconds"], 1),
        "db_mb": round(data["db_bytes"] / 1e6, 1),
        "peak_rss_mb": round(data["peak_rss_mb"], 1),
        "import_rss_mb": round(float(baseline.stdout.strip()), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="index rich (100 files) instead of openai; under a minute")
    parser.add_argument("--package", default=None, help="an installed package to index instead")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--files", type=int, default=0, help="also index a synthetic tree of this many files (e.g. 50000)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    name = args.package or ("rich" if args.quick else "openai")
    with tempfile.TemporaryDirectory(prefix="moot-bench-codeindex-") as tmp:
        result: dict = {
            "benchmark": "codeindex",
            "quick": args.quick,
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()} {os.cpu_count()} cpu, Python {platform.python_version()}",
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }
        result["package"] = bench_package(name, Path(tmp), args.queries, rng)
        print(json.dumps(result["package"]), file=sys.stderr)
        if args.files and not args.quick:
            result["synthetic"] = bench_synthetic(args.files, Path(tmp))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
