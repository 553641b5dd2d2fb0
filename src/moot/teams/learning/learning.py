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
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timezone
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from moot.errors import MootError
from moot.memory import Fact, KnowledgeBase, StoredFact
from moot.memory.facts import coerce_date, normalise_key
from moot.models.base import Model, ModelSettings, Usage
from moot.runtime import Budget, Event, EventBus, EventType, RunStore, SubAgent, SubAgentTask, TaskGraph
from moot.teams.learning.chunking import DEFAULT_CHUNK_TOKENS, Chunk, split_into_chunks

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files above this are refused: at ~30 tokens/s a 5 MB file would take days on the embedded model."""
DEFAULT_PARALLEL = 4
"""Chunks extracted at once; the embedded engine has four parallel slots."""
MAX_FACTS_PER_CHUNK = 16
SUMMARY_CHARS = 300


class ExtractedFact(BaseModel):
    """One fact as the extraction model writes it (the output schema, so keep it small)."""

    content: str = Field(description="One short sentence that makes sense on its own.")
    entity: str = Field(description="What the fact is about.")
    attribute: str = Field(description="Which property of the entity.")
    value: str = Field(description="The value, with its unit.")
    concept: str = Field(default="", description="The topic in one or two words.")
    date: str = Field(default="", description="YYYY-MM-DD when the text says when it happened, else empty.")
    confidence: float | None = Field(default=None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list, max_length=5)


class ExtractedFacts(BaseModel):
    """The extraction model's whole answer for one chunk."""

    facts: list[ExtractedFact] = Field(max_length=MAX_FACTS_PER_CHUNK)


@dataclass(frozen=True)
class LearnProgress:
    """What ``progress`` is called with: once before extraction, after each chunk, once at the end."""

    source: str
    phase: str
    """``extracting`` or ``stored``."""
    chunks_done: int
    chunks_total: int
    facts_found: int


@dataclass
class LearnReport:
    """What learning one source did."""

    source: str
    published: date | datetime | None
    chunks: int
    facts_extracted: int
    """Clean facts the model produced (before duplicates were merged)."""
    facts_stored: int
    """New facts written to the knowledge base."""
    duplicates: int
    """Facts the knowledge base already held (merged, not stored twice)."""
    superseded: int
    """Facts already in the knowledge base whose value a new fact replaced."""
    dropped: int
    """Extracted items thrown away as empty or unusable."""
    model_calls: int
    usage: Usage
    seconds: float
    summary: str
    summary_from_model: bool
    run_id: str | None = None
    path: str | None = None
    facts: list[StoredFact] = field(default_factory=list, repr=False)
    unchanged: bool = False
    """True when this exact text was already learned from this source: nothing was asked or stored."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["published"] = self.published.isoformat() if self.published else None
        data["usage"] = self.usage.model_dump()
        data["facts"] = [f.to_dict() for f in self.facts]
        data["seconds"] = round(self.seconds, 3)
        return data


class LearningError(MootError):
    """Learning a source failed; nothing from it was stored."""


class LearningStopped(LearningError):
    """A model call failed or the budget stopped extraction: a runtime failure (the CLI exits 1)."""

    exit_code = 1


ProgressCallback = Callable[[LearnProgress], None]


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """A prompt of the learning team, kept as data in ``prompts/<name>.md``."""
    return resources.files("moot.teams.learning").joinpath("prompts", f"{name}.md").read_text("utf-8").strip()


# --------------------------------------------------------------------------- cleaning


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _epoch_us(day: date) -> int:
    moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return int(moment.timestamp()) * 1_000_000


def _event_date(raw: str, chunk_text: str, published: date | datetime | None) -> date | None:
    """An event date the model gave, if believable.

    A small model fills date fields eagerly, so a date counts only when it is a real ISO date,
    its year appears in the chunk, and it is not after the publication date (a future date is
    a plan, and ordering a plan after later reports would make it wrongly "newest").
    """
    raw = raw.strip()
    if not _ISO_DATE.match(raw):
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError:
        return None
    if str(day.year) not in chunk_text:
        return None
    limit = published.date() if isinstance(published, datetime) else published
    if limit is not None and day > limit:
        return None
    return day


def clean_facts(
    extracted: ExtractedFacts | dict[str, Any] | None,
    chunk: Chunk,
    *,
    source: str,
    published: date | datetime | None,
    episode_id: int | None = None,
) -> tuple[list[Fact], int]:
    """Turn the model's answer for one chunk into :class:`Fact` objects; returns (facts, dropped).

    Drops items without a statement, collapses whitespace, falls back to the content as the
    value, fills a missing concept with the entity, and removes repeats within the chunk.
    """
    if extracted is None:
        return [], 0
    if isinstance(extracted, dict):
        extracted = ExtractedFacts.model_validate(extracted)
    facts: list[Fact] = []
    seen: set[tuple[str, str, str, str]] = set()
    dropped = 0
    for item in extracted.facts:
        content = " ".join(item.content.split())
        entity = " ".join(item.entity.split()).strip(" .,:;")
        attribute = " ".join(item.attribute.split()).strip(" .,:;")
        value = " ".join(item.value.split()).strip(" ,;")
        if len(content) < 3 or not re.search(r"[A-Za-z0-9]", content):
            dropped += 1
            continue
        if content[-1] not in ".!?":
            content += "."
        key = (content.lower(), normalise_key(entity), normalise_key(attribute), normalise_key(value))
        if key in seen:
            dropped += 1
            continue
        seen.add(key)
        event = _event_date(item.date, chunk.text, published)
        confidence = item.confidence if item.confidence is not None else 0.8
        facts.append(
            Fact(
                content,
                concept=" ".join(item.concept.split()) or entity,
                entity=entity,
                attribute=attribute,
                value=value,
                confidence=min(1.0, max(0.0, confidence)),
                tags=tuple(t for t in item.tags if t.strip()),
                source=source,
                source_date=published,
                temporal_index=_epoch_us(event) if event else None,
                episode_id=episode_id,
            )
        )
    return facts, dropped


def first_sentences(text: str, limit: int = SUMMARY_CHARS) -> str:
    """A summary without a model: the first sentences (headings and front matter skipped)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    flat = " ".join(" ".join(lines).split())
    sentences = re.split(r"(?<=[.!?])\s+", flat)
    out = ""
    for sentence in sentences:
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out[:limit]


# --------------------------------------------------------------------------- learning


def _agents(model: Model) -> tuple[SubAgent, SubAgent]:
    extractor = SubAgent(
        "fact-extractor",
        role="extracts facts from one chunk of text",
        system_prompt=load_prompt("extract_facts"),
        model=model,
        output_type=ExtractedFacts,
        max_turns=2,
        settings=ModelSettings(max_tokens=1200, temperature=0.0),
    )
    summariser = SubAgent(
        "source-summariser",
        role="summarises a source in one or two sentences",
        system_prompt=load_prompt("summarise_source"),
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


def _resolve_model(model: Model | str | None) -> Model:
    if isinstance(model, Model):
        return model
    from moot.models.registry import infer_model

    return infer_model(model)


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
    llm = _resolve_model(model)
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


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class Document:
    """A text file read for learning: its body, and the source and date it declares."""

    path: Path
    text: str
    """The body, without front matter."""
    source: str
    published: date | datetime | None


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
_DATE_LINE = re.compile(r"\A\s*(?:date|published)\s*:\s*(\S+)\s*(?:\n|\Z)", re.I)
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


def read_document(path: str | Path) -> Document:
    """Read a UTF-8 text file and its metadata, refusing what cannot be learned.

    The convention (used by ``examples/learning/articles``): optional front matter between
    ``---`` lines with ``published: YYYY-MM-DD`` (or ``date:``), ``source:`` and ``title:``;
    or, without front matter, a first line ``Date: YYYY-MM-DD``. The source is ``source``,
    else ``title``, else the first ``# heading``, else the file name.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise MootError(f"{path}: no such file", fix="check the path (learn takes text or Markdown files)")
    if path.is_dir():
        raise MootError(f"{path} is a directory", fix="pass the files inside it, e.g. " + str(path / "*.md"))
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise MootError(
            f"{path} is {size / 1e6:.1f} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MB limit for one file",
            fix="split it into smaller files (one article or chapter each) and learn those",
        )
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise MootError(f"{path} is a binary file, not text", fix="convert it to UTF-8 text (e.g. Markdown or .txt) first")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MootError(
            f"{path} is not UTF-8 text (invalid byte at position {exc.start})",
            fix=f"convert it to UTF-8, e.g. iconv -f latin1 -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}",
        ) from None
    text = text.replace("\r\n", "\n")
    meta: dict[str, str] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("\"'")
        text = text[match.end():]
    else:
        line = _DATE_LINE.match(text)
        if line:
            meta["published"] = line.group(1)
            text = text[line.end():]
    if not text.strip():
        raise MootError(f"{path} is empty: there is nothing to learn", fix="pass a file with some text in it")
    heading = _HEADING.search(text)
    source = meta.get("source") or meta.get("title") or (heading.group(1) if heading else "") or path.name
    if meta.get("source") and meta.get("title"):
        source = f"{meta['source']}: {meta['title']}"
    raw_date = meta.get("published") or meta.get("date")
    try:
        published = coerce_date(raw_date, what="published date") if raw_date else None
    except MootError as exc:
        raise MootError(f"{path}: {exc.message}", fix="write the date as published: YYYY-MM-DD") from None
    return Document(path=path, text=text, source=source, published=published)


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
