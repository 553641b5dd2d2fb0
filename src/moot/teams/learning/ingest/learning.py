"""Learning: content in, facts with temporal metadata out, stored in a knowledge base.

``learn(kb, text, source=…, published=…)`` cuts the text into chunks a small model can read
whole, runs one fact-extraction task per chunk (structured output, so the answer is valid JSON
of the right shape) plus one summary task as a :class:`~moot.runtime.TaskGraph` — so
``moot runs show`` shows what learning did — cleans what comes back, and stores the chunks as
episodes and the facts linked to them. Supersession (a later value replacing an earlier one)
is the knowledge base's job; learning gives every fact the source's date so it can do it.

A source is learned all or nothing: every model call finishes before anything is written, so
a failure or a budget stop mid-way leaves the knowledge base as it was.
"""

from __future__ import annotations

import asyncio
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase, StoredFact
from moot.memory.facts import coerce_date
from moot.models.base import Model, ModelSettings, Usage
from moot.models.registry import infer_model
from moot.runtime import (
    Budget,
    Event,
    EventBus,
    EventType,
    RunStore,
    SubAgent,
    SubAgentTask,
    TaskGraph,
    load_prompt,
)
from moot.teams.learning.chunking import DEFAULT_CHUNK_TOKENS, Chunk, split_into_chunks
from moot.teams.learning.documents import MAX_FILE_BYTES, Document, read_document
from moot.teams.learning.extraction import (
    MAX_FACTS_PER_CHUNK,
    SUMMARY_CHARS,
    ExtractedFact,
    ExtractedFacts,
    clean_facts,
    first_sentences,
)
from moot.teams.learning.reports import LearningError, LearningStopped, LearnProgress, LearnReport, ProgressCallback

DEFAULT_PARALLEL = 4
"""Chunks extracted at once; the embedded engine has four parallel slots."""


# --------------------------------------------------------------------------- learning


def _agents(model: Model) -> tuple[SubAgent, SubAgent]:
    extractor = SubAgent(
        "fact-extractor",
        role="extracts facts from one chunk of text",
        system_prompt=load_prompt("extract_facts", __package__),
        model=model,
        output_type=ExtractedFacts,
        max_turns=2,
        settings=ModelSettings(max_tokens=1200, temperature=0.0),
    )
    summariser = SubAgent(
        "source-summariser",
        role="summarises a source in one or two sentences",
        system_prompt=load_prompt("summarise_source", __package__),
        model=model,
        max_turns=1,
        settings=ModelSettings(max_tokens=96, temperature=0.0),
    )
    return extractor, summariser


def _chunk_task(chunk: Chunk, source: str, published: date | datetime | None) -> str:
    when = f", published {published.isoformat()}" if published else ""
    return f"Source: {source}{when}\n\nText:\n{chunk.text}\n\nList the facts in this text."


def _no_context(outputs: dict[str, Any]) -> dict[str, Any]:
    """Reducer for pacing dependencies: wait for the earlier chunk, but do not show it."""
    return {}


async def learn(
    kb: KnowledgeBase,
    content: str,
    *,
    source: str,
    published: date | datetime | str | None = None,
    model: Model | str | None = None,
    progress: ProgressCallback | None = None,
    budget: Budget | None = None,
    bus: EventBus | None = None,
    store: RunStore | None = None,
    record_run: bool = True,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    parallel: int = DEFAULT_PARALLEL,
    summarise: bool = True,
    parent_run_id: str | None = None,
) -> LearnReport:
    """Extract facts from ``content`` with the model and store them in ``kb``.

    ``published`` dates every fact (and orders it in time for supersession); ``source`` names
    where the content came from. The run is recorded in the run store (``store``, else the
    default one) unless ``record_run=False``, under ``parent_run_id`` when a command learns several
    files. Raises :class:`LearningError` — with nothing
    stored — when the content is empty, or a model call fails, or ``budget`` stops extraction.
    """
    started = time.perf_counter()
    source = " ".join(source.split())
    if not source:
        raise MootError("learning needs a source name", fix="pass source='…' (an article title, a URL, a file name)")
    if not content or not content.strip():
        raise LearningError(f"{source}: there is nothing to learn, the content is empty", fix="pass text with some sentences in it")
    published_date = coerce_date(published, what="published date")
    chunks = split_into_chunks(content, max_tokens=chunk_tokens)
    learned = {episode.text for episode in kb.episodes(source=source)}
    if chunks and all(chunk.text in learned for chunk in chunks):
        # Learning the same text again would only spend model calls to find the same facts.
        return LearnReport(
            source=source, published=published_date, chunks=len(chunks), facts_extracted=0, facts_stored=0,
            duplicates=0, superseded=0, dropped=0, model_calls=0, usage=Usage(),
            seconds=time.perf_counter() - started, summary="", summary_from_model=False, unchanged=True,
        )
    llm = infer_model(model)
    extractor, summariser = _agents(llm)
    parallel = max(1, parallel)
    tasks = [
        SubAgentTask(
            extractor.name,
            _chunk_task(chunk, source, published_date),
            id=f"chunk-{chunk.index + 1}",
            # Pacing: chunk i waits for chunk i-parallel, so at most `parallel` run at once.
            depends_on=[f"chunk-{chunk.index + 1 - parallel}"] if chunk.index >= parallel else [],
            reducer=_no_context,
        )
        for chunk in chunks
    ]
    if summarise:
        opening = "\n\n".join(c.text for c in chunks[:1])
        tasks.append(SubAgentTask(summariser.name, f"Source: {source}\n\nText:\n{opening}", id="summary", on_failure="skip"))
    graph = TaskGraph([extractor, summariser], tasks)

    done = 0
    found = 0

    def report_progress(phase: str) -> None:
        if progress is not None:
            progress(LearnProgress(source, phase, done, len(chunks), found))

    def on_event(event: Event) -> None:
        nonlocal done
        if event.type is EventType.TASK_FINISHED and (event.task_id or "").startswith("chunk-"):
            done += 1
            report_progress("extracting")

    bus = bus or EventBus()
    unsubscribe = bus.subscribe(on_event)
    report_progress("extracting")
    try:
        run_store = (store or RunStore()) if record_run else None
        result = await graph.run(budget=budget, store=run_store, bus=bus, name=f"learn {source}",
                                 parent_run_id=parent_run_id)
    finally:
        unsubscribe()

    chunk_results = [result.results[f"chunk-{c.index + 1}"] for c in chunks]
    if any(r.status not in ("completed", "fell_back") for r in chunk_results):
        failed = next(r for r in chunk_results if r.status not in ("completed", "fell_back"))
        why = failed.error or result.stop_reason
        fix = "raise the budget (or pass budget=None)" if failed.status == "stopped" or result.status == "stopped" else (
            "check the model with `moot models`, then learn the file again"
        )
        raise LearningStopped(f"learning {source} stopped at {failed.id}: {why}; nothing was stored", fix=fix)

    # Everything the model produced is in hand: clean it, then write in as few transactions as possible.
    extracted: list[tuple[Chunk, list[Fact]]] = []
    dropped = 0
    for chunk, task_result in zip(chunks, chunk_results):
        facts, lost = clean_facts(task_result.output, chunk, source=source, published=published_date)
        extracted.append((chunk, facts))
        dropped += lost
    summary_result = result.results.get("summary")
    summary_text = ""
    if summary_result is not None and summary_result.status == "completed" and isinstance(summary_result.output, str):
        summary_text = first_sentences(summary_result.output)
    from_model = bool(summary_text)
    if not summary_text:
        summary_text = first_sentences(content)

    before = time.time()
    stored = _store(kb, extracted, source=source, published=published_date)
    kb.set_source_summary(source, summary_text)
    new_ids = {f.id for f in stored if f.created_at is not None and f.created_at.timestamp() >= before - 1e-3}
    superseded = _count_superseded(kb, stored, new_ids)
    found = sum(len(f) for _, f in extracted)
    done = len(chunks)
    report_progress("stored")
    return LearnReport(
        source=source,
        published=published_date,
        chunks=len(chunks),
        facts_extracted=found,
        facts_stored=len(new_ids),
        duplicates=len(stored) - len(new_ids),
        superseded=superseded,
        dropped=dropped,
        model_calls=result.usage.requests,
        usage=result.usage,
        seconds=time.perf_counter() - started,
        summary=summary_text,
        summary_from_model=from_model,
        run_id=result.run_id if record_run else None,
        facts=stored,
    )


def _store(
    kb: KnowledgeBase, extracted: list[tuple[Chunk, list[Fact]]], *, source: str, published: date | datetime | None
) -> list[StoredFact]:
    """Write the chunks as episodes and all facts in one ``add_facts`` transaction.

    The knowledge base has no transaction spanning several calls, so the episodes are written
    first: if the facts then fail to write, what is left is only raw text without facts (an
    episode is stored once per source and text, so learning again reuses it), never facts.
    """
    batch: list[Fact] = []
    for chunk, facts in extracted:
        if not facts:
            continue
        episode = kb.add_episode(chunk.text, source=source, published=published)
        batch.extend(_with_episode(f, episode.id) for f in facts)
    return kb.add_facts(batch) if batch else []


def _with_episode(fact: Fact, episode_id: int) -> Fact:
    from dataclasses import replace

    return replace(fact, episode_id=episode_id)


def _count_superseded(kb: KnowledgeBase, stored: list[StoredFact], new_ids: set[int | None]) -> int:
    """Older facts (not from this batch) that a new fact now supersedes."""
    replaced: set[int] = set()
    groups = {(f.entity, f.attribute) for f in stored if f.id in new_ids and f.entity and f.attribute}
    for entity, attribute in groups:
        for older in kb.history(entity, attribute):
            if older.id not in new_ids and older.superseded_by in new_ids and older.id is not None:
                replaced.add(older.id)
    return len(replaced)




async def learn_file(
    kb: KnowledgeBase,
    path: str | Path,
    *,
    source: str | None = None,
    published: date | datetime | str | None = None,
    **options: Any,
) -> LearnReport:
    """Learn a text file: :func:`read_document` then :func:`learn`; arguments override the file's metadata."""
    document = read_document(path)
    report = await learn(
        kb,
        document.text,
        source=source or document.source,
        published=published if published is not None else document.published,
        **options,
    )
    report.path = str(document.path)
    return report


def learn_sync(kb: KnowledgeBase, content: str, **options: Any) -> LearnReport:
    """:func:`learn` from synchronous code."""
    return asyncio.run(learn(kb, content, **options))


__all__ = [  # the learning entry points, and the names that moved to their own modules
    "DEFAULT_PARALLEL",
    "MAX_FACTS_PER_CHUNK",
    "MAX_FILE_BYTES",
    "SUMMARY_CHARS",
    "Document",
    "ExtractedFact",
    "ExtractedFacts",
    "LearnProgress",
    "LearnReport",
    "LearningError",
    "LearningStopped",
    "ProgressCallback",
    "clean_facts",
    "first_sentences",
    "learn",
    "learn_file",
    "learn_sync",
    "read_document",
]
