"""Learning: content in, facts with temporal metadata out, stored in a knowledge base.

``learn(kb, text, source=…, published=…)`` cuts the text into text units and chunks, asks the
model to label each chunk's units (extraction by selection, :mod:`.selection`), builds the
facts from the source's own sentences, and stores the chunks as episodes with their facts —
all recorded as one :class:`~moot.runtime.TaskGraph` run, so ``moot runs show`` shows what
learning did. ``learn_files`` learns many files side by side through the engine's slots.

A source is learned all or nothing: every model call finishes before anything is written, and
the write is one transaction. Learning is idempotent: a chunk already learned from the same
source costs no call, an unchanged file is recognised by its hash before it is even read into
chunks, and a file that changed has only its new text labelled, while the text it no longer
holds is forgotten with its facts (in the same transaction).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from moot.errors import MootError
from moot.memory import DocumentRecord, Fact, KnowledgeBase, StoredFact
from moot.memory.facts import coerce_date, date_to_text
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
from moot.teams.learning.ingest.chunking import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_CHUNK_UNITS,
    Chunk,
    UnitChunk,
    chunk_units,
    estimate_tokens,
    split_into_chunks,
)
from moot.teams.learning.ask.recall import WHOLE_SOURCES_TOKENS
from moot.teams.learning.ingest.documents import MAX_FILE_BYTES, Document, collect_files, read_document
from moot.teams.learning.ingest.reports import (
    LearningError,
    LearningStopped,
    LearnProgress,
    LearnReport,
    ProgressCallback,
)
from moot.teams.learning.ingest.rewrite import (
    MAX_FACTS_PER_CHUNK,
    SUMMARY_CHARS,
    ExtractedFact,
    ExtractedFacts,
    clean_facts,
    first_sentences,
)
from moot.teams.learning.ingest.selection import (
    build_facts,
    document_names,
    label_schema,
    labels_for,
    numbered_units,
    propose,
)
from moot.text.frontmatter import FrontMatterError, read_front_matter
from moot.text.sentences import split_units

PROMPTS = "moot.teams.learning"
DEFAULT_PARALLEL = 4
"""Model requests at once; the embedded engine has four parallel slots."""

Extraction = Literal["select", "rewrite"]
EXTRACTIONS: tuple[str, ...] = ("select", "rewrite")


def _check_extraction(extraction: str) -> None:
    if extraction not in EXTRACTIONS:
        raise MootError(f"unknown extraction {extraction!r}", fix="use extraction='select' (default) or 'rewrite'")


# --------------------------------------------------------------------------- the agents


def _labeller(model: Model) -> SubAgent:
    return SubAgent(
        "fact-labeller",
        role="labels the sentences of one chunk: what each is about and what it states",
        system_prompt=load_prompt("label_sentences", PROMPTS),
        model=model,
        max_turns=2,
        settings=ModelSettings(max_tokens=24 * DEFAULT_CHUNK_UNITS + 64, temperature=0.0),
    )


def _rewriters(model: Model) -> tuple[SubAgent, SubAgent]:
    extractor = SubAgent(
        "fact-extractor",
        role="extracts facts from one chunk of text",
        system_prompt=load_prompt("extract_facts", PROMPTS),
        model=model,
        output_type=ExtractedFacts,
        max_turns=2,
        settings=ModelSettings(max_tokens=1200, temperature=0.0),
    )
    summariser = SubAgent(
        "source-summariser",
        role="summarises a source in one or two sentences",
        system_prompt=load_prompt("summarise_source", PROMPTS),
        model=model,
        max_turns=1,
        settings=ModelSettings(max_tokens=96, temperature=0.0),
    )
    return extractor, summariser


def _header(source: str, published: date | datetime | None, title: str) -> str:
    lines = [f"Source: {source}"]
    if title and title not in source:
        lines.append(f"Title: {title}")
    if published:
        lines.append(f"Published: {published.isoformat()}")
    return "\n".join(lines)


def _no_context(outputs: dict[str, Any]) -> dict[str, Any]:
    """Reducer for pacing dependencies: wait for the earlier chunk, but do not show it."""
    return {}


# --------------------------------------------------------------------------- one source


@dataclass
class _Plan:
    """What one source needs: its chunks, the tasks for those not learned yet, and what to forget."""

    chunks: list[Any]
    new: list[Any]
    stale: list[int]
    tasks: list[SubAgentTask]
    options: dict[str, Any]


def _plan(
    kb: KnowledgeBase,
    content: str,
    *,
    source: str,
    published: date | datetime | None,
    extraction: str,
    chunk_tokens: int,
    parallel: int,
    title: str,
    provenance: Sequence[str],
    summarise: bool,
    in_file: bool = False,
) -> _Plan:
    # A source is a name and a date: learning the May issue of a newsletter does not forget the
    # March one, while an edited text of the same issue replaces what the issue no longer says. A
    # file is its own source whatever its date (its name is its own: `_source_for`).
    known = {episode.text: episode.id for episode in kb.episodes(source=source)
             if in_file or date_to_text(episode.published) == date_to_text(published)}
    tasks: list[SubAgentTask] = []
    options: dict[str, Any] = {}
    header = _header(source, published, title)
    if extraction == "select":
        units = split_units(content)
        chunks: list[Any] = chunk_units(units, max_tokens=chunk_tokens)
        new = [c for c in chunks if c.text not in known]
        names = document_names(units, exclude=[*provenance, source, source.split(":", 1)[0]])
        anchor = published.date() if isinstance(published, datetime) else published
        for chunk in new:
            chunk_options = propose(chunk.units, document_names=names, published=anchor)
            if not chunk_options:
                continue  # headings only: stored as text, nothing to ask
            task_id = f"chunk-{chunk.index + 1}"
            options[task_id] = chunk_options
            asked = [o for o in chunk_options if o.asked]
            if asked:  # otherwise every unit is stored unlabelled, without a call
                tasks.append(SubAgentTask("fact-labeller", f"{header}\n\n{numbered_units(asked)}", id=task_id,
                                          output_type=label_schema(asked)))
    else:
        chunks = split_into_chunks(content, max_tokens=chunk_tokens)
        new = [c for c in chunks if c.text not in known]
        for position, chunk in enumerate(new):
            tasks.append(SubAgentTask(
                "fact-extractor", f"{header}\n\nText:\n{chunk.text}\n\nList the facts in this text.",
                id=f"chunk-{chunk.index + 1}",
                # Pacing: at most `parallel` chunks of this source at once.
                depends_on=[tasks[position - parallel].id] if position >= parallel else [],  # type: ignore[list-item]
                reducer=_no_context,
            ))
        if summarise and new:
            tasks.append(SubAgentTask("source-summariser", f"Source: {source}\n\nText:\n{chunks[0].text}", id="summary",
                                      on_failure="skip"))
    current = {c.text for c in chunks}
    stale = [episode_id for text, episode_id in known.items() if text not in current]
    return _Plan(chunks, new, stale, tasks, options)


def kept_text(given: str) -> str:
    """The text as the user gave it, front matter and all (a headline is part of what a reader
    reads), to keep beside the passages; ``""`` when the source is too long to be read whole (it is
    read by its best passages, and keeping it twice would only double the file)."""
    return given.strip() if estimate_tokens(given) <= WHOLE_SOURCES_TOKENS else ""


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
    extraction: Extraction = "select",
    title: str = "",
    provenance: Sequence[str] = (),
    document: DocumentRecord | None = None,
    as_given: str | None = None,
) -> LearnReport:
    """Learn facts from ``content`` into ``kb``; returns what was done.

    ``published`` dates every fact (and orders it in time for supersession); ``source`` names
    where the content came from, ``title`` its title and ``provenance`` the publisher and author
    names that are not entities of what it tells; ``as_given`` is the text as the user gave it,
    front matter and all, when ``content`` is only its body (a file read by :func:`learn_file`).
    ``extraction="rewrite"`` uses the earlier extractor (the model writes each fact; kept to
    compare against). Raises
    :class:`LearningError` — with nothing stored — when the content is empty, a model call
    fails or ``budget`` stops extraction.
    """
    _check_extraction(extraction)
    started = time.perf_counter()
    given = as_given if as_given is not None else content or ""
    front = read_front_matter(content or "")
    if front.format != "none":
        # Metadata is provenance, never content: a title, a publisher or a date line is not a fact.
        content, title = front.body, title or front.title
        provenance = (*provenance, *front.provenance_names())
        if published is None:
            try:
                published = front.published
            except FrontMatterError:
                published = None
    source = " ".join(source.split())
    if not source:
        raise MootError("learning needs a source name", fix="pass source='…' (an article title, a URL, a file name)")
    if not content or not content.strip():
        raise LearningError(f"{source}: there is nothing to learn, the content is empty", fix="pass text with some sentences in it")
    published_date = coerce_date(published, what="published date")
    parallel = max(1, parallel)
    as_written = kept_text(given)
    plan = _plan(kb, content, source=source, published=published_date, extraction=extraction,
                 chunk_tokens=chunk_tokens, parallel=parallel, title=title, provenance=provenance, summarise=summarise,
                 in_file=document is not None)

    def report(**fields: Any) -> LearnReport:
        base: dict[str, Any] = dict(
            source=source, published=published_date, chunks=len(plan.chunks), facts_extracted=0, facts_stored=0,
            duplicates=0, superseded=0, dropped=0, model_calls=0, usage=Usage(), seconds=time.perf_counter() - started,
            summary="", summary_from_model=False, extraction=extraction, chunks_learned=len(plan.new),
            forgotten=len(plan.stale),
        )
        return LearnReport(**{**base, **fields})

    if not plan.new and not plan.stale:
        # Learning the same text again would only spend model calls to find the same facts.
        moved = document is not None and kb.document(source=source) != document
        # a file moved, or a source learned before its text was kept
        if moved or kb.source_text(source, published_date) != (as_written or None):
            kb.store_source(source, [], published=published_date, document=document if moved else None,
                            as_written=as_written)
        return report(unchanged=True)

    done = 0
    found = 0

    def report_progress(phase: str) -> None:
        if progress is not None:
            progress(LearnProgress(source, phase, done, len(plan.tasks), found))

    results: dict[str, Any] = {}
    usage = Usage()
    run_id = None
    run_store: RunStore | None = None
    if plan.tasks:
        llm = infer_model(model)
        agents = [_labeller(llm)] if extraction == "select" else list(_rewriters(llm))
        graph = TaskGraph(agents, plan.tasks)

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
                                     parent_run_id=parent_run_id, max_parallel=parallel)
        finally:
            unsubscribe()
        chunk_results = [r for tid, r in result.results.items() if tid.startswith("chunk-")]
        failed = next((r for r in chunk_results if r.status not in ("completed", "fell_back")), None)
        if failed is not None:
            why = failed.error or failed.stop_reason or result.stop_reason
            fix = "raise the budget (or pass budget=None)" if failed.status == "stopped" or result.status == "stopped" else (
                "check the model with `moot models`, then learn the file again"
            )
            raise LearningStopped(f"learning {source} stopped at {failed.id}: {why}; nothing was stored", fix=fix)
        results = result.results
        usage = result.usage
        run_id = result.run_id if record_run else None

    # Everything the model produced is in hand: build the facts, then write them in one transaction.
    passages: list[tuple[str, list[Fact]]] = []
    dropped = 0
    for chunk in plan.new:
        task_id = f"chunk-{chunk.index + 1}"
        task_result = results.get(task_id)
        facts: list[Fact] = []
        if extraction == "select" and task_id in plan.options:
            labels, refused = labels_for(plan.options[task_id], task_result.output if task_result is not None else None)
            facts = build_facts(labels, source=source, published=published_date)
            dropped += refused
        elif task_result is not None:
            facts, lost = clean_facts(task_result.output, chunk, source=source, published=published_date)
            dropped += lost
        passages.append((chunk.text, facts))
    summary_text = ""
    summary_result = results.get("summary")
    if summary_result is not None and summary_result.status == "completed" and isinstance(summary_result.output, str):
        summary_text = first_sentences(summary_result.output)
    from_model = bool(summary_text)
    if not summary_text:
        summary_text = first_sentences(content)

    before = time.time()
    stored = kb.store_source(source, passages, published=published_date, forget=plan.stale, summary=summary_text,
                             document=document, as_written=as_written)
    new_ids = {f.id for f in stored if f.created_at is not None and f.created_at.timestamp() >= before - 1e-3}
    found = sum(len(f) for _, f in passages)
    done = len(plan.tasks)
    if run_id is not None and run_store is not None:
        # The run's page lists what this run stored, not only what its agents answered.
        run_store.record_output(run_id, "learned", {
            "source": source, "published": published_date.isoformat() if published_date else None,
            "summary": summary_text, "facts_extracted": found, "facts_stored": len(new_ids),
            "duplicates": len(stored) - len(new_ids), "dropped": dropped, "forgotten": len(plan.stale),
            "facts": [{**f.to_dict(), "new": f.id in new_ids} for f in stored]})
    report_progress("stored")
    return report(
        facts_extracted=found, facts_stored=len(new_ids), duplicates=len(stored) - len(new_ids),
        superseded=_count_superseded(kb, stored, new_ids), dropped=dropped, model_calls=usage.requests, usage=usage,
        seconds=time.perf_counter() - started, summary=summary_text, summary_from_model=from_model, run_id=run_id,
        facts=stored,
    )


def _count_superseded(kb: KnowledgeBase, stored: list[StoredFact], new_ids: set[int | None]) -> int:
    """Older facts (not from this batch) that a new fact now supersedes."""
    replaced: set[int] = set()
    groups = {(f.entity, f.attribute) for f in stored if f.id in new_ids and f.entity and f.attribute}
    for entity, attribute in groups:
        for older in kb.history(entity, attribute):
            if older.id not in new_ids and older.superseded_by in new_ids and older.id is not None:
                replaced.add(older.id)
    return len(replaced)


# --------------------------------------------------------------------------- files


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source_for(kb: KnowledgeBase, document: Document, path: str) -> str:
    """The document's source name, made unique when another file already holds it in this knowledge base."""
    source = " ".join(document.source.split())
    holder = kb.document(source=source)
    if holder is None or holder.path == path or not Path(holder.path).exists():
        return source  # free, ours, or the file moved: take it
    for suffix in (document.path.name, path):
        candidate = f"{source} ({suffix})"
        other = kb.document(source=candidate)
        if other is None or other.path == path:
            return candidate
    return f"{source} ({path})"


async def learn_file(
    kb: KnowledgeBase,
    path: str | Path,
    *,
    source: str | None = None,
    published: date | datetime | str | None = None,
    **options: Any,
) -> LearnReport:
    """Learn a text file; arguments override the file's metadata.

    A file whose bytes are unchanged since this knowledge base learned it costs nothing: it is
    recognised by its hash before it is read into chunks.
    """
    document = read_document(path)
    resolved = str(document.path.resolve())
    # The hash of the bytes learned: a file saved again while it is learned is then seen as changed.
    digest = document.sha256 or file_sha256(document.path)
    name = " ".join(source.split()) if source else _source_for(kb, document, resolved)
    record = kb.document(path=resolved)
    extraction = options.get("extraction", "select")
    if record is not None and record.sha256 == digest and record.source == name and extraction == "select":
        day = coerce_date(published, what="published date") if published is not None else document.published
        if (kept := kept_text(document.given)) and kb.source_text(name, day) is None:
            kb.store_source(name, [], published=day, as_written=kept)  # learned by a moot that kept no text
        learned = LearnReport(
            source=name, published=day,
            chunks=0, facts_extracted=0, facts_stored=0, duplicates=0, superseded=0, dropped=0, model_calls=0,
            usage=Usage(), seconds=0.0, summary="", summary_from_model=False, unchanged=True,
        )
        learned.path = str(document.path)
        return learned
    learned = await learn(
        kb,
        document.text,
        source=name,
        published=published if published is not None else document.published,
        title=document.title,
        provenance=document.provenance,
        document=DocumentRecord(source=name, path=resolved, sha256=digest) if extraction == "select" else None,
        as_given=document.given or None,
        **options,
    )
    learned.path = str(document.path)
    return learned


FileProgress = Callable[[Path, LearnProgress], None]


@dataclass
class FileOutcome:
    """One file of :func:`learn_files`: its report, or the error that stopped it (nothing stored)."""

    path: Path
    report: LearnReport | None = None
    error: MootError | None = None


async def learn_files(
    kb: KnowledgeBase,
    paths: Sequence[str | Path],
    *,
    parallel: int = DEFAULT_PARALLEL,
    progress: FileProgress | None = None,
    on_done: Callable[[FileOutcome], None] | None = None,
    **options: Any,
) -> list[FileOutcome]:
    """Learn many files side by side: at most ``parallel`` files at once, and at most ``parallel``
    model requests at once in all (the model's process-wide limit bounds them further).

    Each file is learned all or nothing; a file that fails (a model error, its budget) is
    reported and the others go on. Outcomes come back in the order of ``paths``.
    """
    parallel = max(1, parallel)
    gate = asyncio.Semaphore(parallel)
    given = options.pop("model", None)
    llm = infer_model(given)

    async def one(path: Path) -> FileOutcome:
        async with gate:
            def forward(event: LearnProgress) -> None:
                if progress is not None:
                    progress(path, event)

            try:
                outcome = FileOutcome(path, report=await learn_file(kb, path, model=llm, progress=forward,
                                                                    parallel=parallel, **options))
            except MootError as exc:
                outcome = FileOutcome(path, error=exc)
        if on_done is not None:
            on_done(outcome)
        return outcome

    try:
        return list(await asyncio.gather(*(one(Path(p)) for p in paths)))
    finally:
        if not isinstance(given, Model):
            await llm.aclose()  # built here from a model string: ours to close


def learn_sync(kb: KnowledgeBase, content: str, **options: Any) -> LearnReport:
    """:func:`learn` from synchronous code."""
    return asyncio.run(learn(kb, content, **options))


__all__ = [  # the learning entry points, and the names that moved to their own modules
    "DEFAULT_PARALLEL",
    "EXTRACTIONS",
    "MAX_FACTS_PER_CHUNK",
    "MAX_FILE_BYTES",
    "SUMMARY_CHARS",
    "Chunk",
    "Document",
    "ExtractedFact",
    "ExtractedFacts",
    "Extraction",
    "FileOutcome",
    "LearnProgress",
    "LearnReport",
    "LearningError",
    "LearningStopped",
    "ProgressCallback",
    "UnitChunk",
    "clean_facts",
    "collect_files",
    "file_sha256",
    "first_sentences",
    "learn",
    "learn_file",
    "learn_files",
    "learn_sync",
    "read_document",
]
