"""Learning content into a knowledge base, with function models standing in for the LLM."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from moot.cli import kb_cmd, learn_cmd
from moot.errors import MootError
from moot.memory import KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent
from moot.runtime import RunStore
from learning_support import label_units
from moot.teams.learning import LearningError, LearnProgress, learn, learn_file, read_document, split_into_chunks

ARTICLES = Path(__file__).resolve().parents[1] / "examples" / "learning" / "articles"
_HAS = re.compile(r"(?P<entity>[A-Z][A-Za-z0-9 ]*?) has (?P<value>[\d,.]+) (?P<attribute>[a-z ]+?)(?: on (?P<date>\d{4}-\d{2}-\d{2}))?\.")


def rewrite_llm(request: ModelRequest) -> object:
    """The rewriting extractor's stand-in: extracts 'X has N things.' sentences as JSON facts."""
    body = request.messages[-1].content.split("Text:", 1)[1]
    facts = [
        {
            "content": m.group(0),
            "entity": m.group("entity"),
            "attribute": m.group("attribute"),
            "value": m.group("value"),
            "date": m.group("date") or "",
        }
        for m in _HAS.finditer(body)
    ]
    facts.append({"content": "   ", "entity": "", "attribute": "", "value": ""})  # junk is dropped
    return {"facts": facts}


fake_llm = by_agent({"fact-labeller": label_units, "fact-extractor": rewrite_llm, "source-summariser": "A short test summary."})


def model() -> FunctionModel:
    return FunctionModel(fake_llm)


@pytest.fixture
def kb(tmp_path: Path):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as opened:
        yield opened


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_facts_are_stored_with_source_date_episode_and_summary(kb: KnowledgeBase) -> None:
    text = "In Elmsbrook there are 340 volunteers. Elmsbrook has 12 boats."
    report = run(learn(kb, text, source="Herald", published="2026-01-12", model=model()))
    assert (report.facts_stored, report.dropped, report.chunks, report.model_calls) == (2, 0, 1, 1)
    assert report.extraction == "select" and report.usage.requests == 1
    fact = kb.current("Elmsbrook", "volunteers")
    assert fact is not None and fact.value == "340 volunteers"
    assert fact.content == "In Elmsbrook there are 340 volunteers."  # the source's own sentence
    assert fact.source == "Herald" and fact.source_date == date(2026, 1, 12)
    episode = kb.episode(fact.episode_id)  # type: ignore[arg-type]
    assert episode is not None and "340 volunteers" in episode.text
    assert kb.sources()[0].summary == text  # the first sentences, without a model call
    assert RunStore().get_run(report.run_id).name == "learn Herald"  # type: ignore[arg-type]


def test_later_article_supersedes_earlier_value_whatever_the_order(kb: KnowledgeBase) -> None:
    run(learn(kb, "Elmsbrook has 880 volunteers.", source="May", published=date(2026, 5, 18), model=model()))
    late = run(learn(kb, "Elmsbrook has 340 volunteers.", source="Jan", published=date(2026, 1, 12), model=model()))
    assert late.superseded == 0  # the older article arrives late: it does not replace the newer value
    assert kb.current("Elmsbrook", "volunteers").value == "880 volunteers"  # type: ignore[union-attr]
    newest = run(learn(kb, "Elmsbrook has 1,200 volunteers.", source="July", published="2026-07-06", model=model()))
    assert newest.superseded == 1
    assert [f.value for f in kb.history("Elmsbrook", "volunteers")] == ["340 volunteers", "880 volunteers", "1,200 volunteers"]


def test_relearning_the_same_article_stores_nothing_new(kb: KnowledgeBase) -> None:
    first = run(learn(kb, "Elmsbrook has 3 boats.", source="Herald", published="2026-01-12", model=model()))
    llm = model()
    again = run(learn(kb, "Elmsbrook has 3 boats.", source="Herald", published="2026-01-12", model=llm))
    assert first.facts_stored == 1
    assert again.unchanged and again.facts_stored == 0 and again.model_calls == 0
    assert llm.requests == []  # the same text from the same source costs no model call
    assert kb.count() == 1 and len(kb.episodes()) == 1
    # an edited article is learned again: its new text labelled, the text it no longer holds forgotten
    edited = run(learn(kb, "Elmsbrook has 3 boats. Elmsbrook has 9 kayaks.", source="Herald",
                       published="2026-01-12", model=model()))
    assert not edited.unchanged and (edited.facts_stored, edited.forgotten) == (2, 1)
    assert kb.count() == 2 and len(kb.episodes()) == 1


FAQ = ("---\ntitle: Bicycle questions\nsource: Cycle Club\n---\n\n# Bicycle questions\n\n"
       "## Faults\n\n**The chain slips.**\nThe chain is worn. Replace it.\n\n**The brakes squeal.**\n"
       "The pads are glazed, or the rim is oily.\n\n- Sand the pads.\n- Clean the rim with alcohol.\n")


def test_a_source_is_kept_as_written_and_the_plain_draft_reads_it_so(kb: KnowledgeBase) -> None:
    from moot.teams.learning.ask.recall import recall

    run(learn(kb, FAQ, source="Cycle Club FAQ", model=model()))
    assert kb.source_text("Cycle Club FAQ") == FAQ.strip()  # as given, its headline in the front matter too
    found = recall(kb, "Why do my brakes squeal?")
    assert found.whole
    shown = found.render_documents()
    # each bold question on its own line above its answer, the heading levels and list marks as written;
    # the stored units join them into "**The brakes squeal. ** The pads are glazed" instead
    assert "**The brakes squeal.**\nThe pads are glazed, or the rim is oily." in shown
    assert "## Faults" in shown and "- Sand the pads.\n- Clean the rim with alcohol." in shown
    assert "title: Bicycle questions" in shown
    assert not any("Bicycle questions" in f.content for f in kb.facts())  # metadata, never a fact


def test_the_text_as_written_follows_the_source_and_is_not_kept_when_too_long_to_read_whole(kb: KnowledgeBase) -> None:
    from moot.teams.learning.ask.recall import WHOLE_SOURCES_TOKENS

    run(learn(kb, "Elmsbrook has 3 boats.", source="Herald", model=model()))
    assert kb.source_text("Herald") == "Elmsbrook has 3 boats."
    run(learn(kb, "Elmsbrook has 3 boats.\n\nElmsbrook has 9 kayaks.", source="Herald", model=model()))
    assert kb.source_text("Herald") == "Elmsbrook has 3 boats.\n\nElmsbrook has 9 kayaks."
    long = "\n\n".join(f"Elmsbrook has {n} boats." for n in range(WHOLE_SOURCES_TOKENS))
    run(learn(kb, long, source="Herald", model=model()))
    assert kb.source_text("Herald") is None  # read by its passages; an older text is not left behind


def test_two_issues_of_one_source_are_two_texts_and_an_edited_issue_replaces_its_own(kb: KnowledgeBase) -> None:
    from moot.memory import DocumentRecord
    from moot.teams.learning.ask.recall import recall

    run(learn(kb, "Elmsbrook has 3 boats.", source="Newsletter", published="2026-03-01", model=model()))
    run(learn(kb, "Elmsbrook has 5 kayaks.", source="Newsletter", published="2026-05-01", model=model()))
    assert kb.source_text("Newsletter", "2026-03-01") == "Elmsbrook has 3 boats."
    assert kb.source_text("Newsletter", "2026-05-01") == "Elmsbrook has 5 kayaks."
    shown = recall(kb, "How many boats and kayaks does Elmsbrook have?").render_documents()
    assert "[Newsletter, 2026-03-01]\nElmsbrook has 3 boats." in shown and "[Newsletter, 2026-05-01]\nElmsbrook has 5 kayaks." in shown
    assert {f.value for f in kb.facts()} == {"3 boats", "5 kayaks"}  # the May issue did not forget the March one
    run(learn(kb, "Elmsbrook has 4 boats.", source="Newsletter", published="2026-03-01", model=model()))
    assert {f.value for f in kb.facts()} == {"4 boats", "5 kayaks"}  # the March issue, edited, replaced its own
    # a file is its own source whatever its date: a new date in it replaces the old version
    record = DocumentRecord(source="notes.md", path="/notes.md", sha256="a")
    run(learn(kb, "Elmsbrook has 7 canoes.", source="notes.md", published="2026-01-01", model=model(), document=record))
    run(learn(kb, "Elmsbrook has 8 canoes.", source="notes.md", published="2026-02-01", model=model(), document=record))
    assert [e.text for e in kb.episodes(source="notes.md")] == ["Elmsbrook has 8 canoes."]
    assert (kb.source_text("notes.md", "2026-01-01"), kb.source_text("notes.md", "2026-02-01")) == (None, "Elmsbrook has 8 canoes.")


def test_a_source_learned_before_its_text_was_kept_gets_it_without_a_model_call(kb: KnowledgeBase) -> None:
    run(learn(kb, "Elmsbrook has 3 boats.", source="Herald", model=model()))
    kb.store_source("Herald", [], as_written="")  # as a knowledge base of an older moot holds it
    assert kb.source_text("Herald") is None
    llm = model()
    again = run(learn(kb, "Elmsbrook has 3 boats.", source="Herald", model=llm))
    assert again.unchanged and llm.requests == []
    assert kb.source_text("Herald") == "Elmsbrook has 3 boats."


def test_explicit_event_date_orders_the_fact_and_future_dates_are_ignored(kb: KnowledgeBase) -> None:
    run(learn(kb, "Riverwatch has 14 trout on 2026-06-20. Dunmore Depot has 2 scales on 2027-01-01.",
              source="News", published="2026-07-06", model=model()))
    trout = kb.current("Riverwatch", "trout")
    scales = kb.current("Dunmore Depot", "scales")
    assert trout is not None and scales is not None
    # an event date the text states orders the fact by that day, before the publication date
    assert trout.temporal_index < scales.temporal_index
    # a date after publication is a plan, so the fact is ordered by its source date instead
    assert kb.history("Dunmore Depot", "scales")[0].temporal_index == scales.temporal_index


def test_long_document_is_chunked_and_progress_is_reported(kb: KnowledgeBase) -> None:
    paragraphs = [f"The town of Brill{i} has {i + 10} bridges. " + "The river runs slowly past the old mill. " * 6
                  for i in range(12)]
    text = "\n\n".join(paragraphs)
    seen: list[LearnProgress] = []
    llm = model()
    report = run(learn(kb, text, source="Long", published="2026-01-01", model=llm, chunk_tokens=120,
                       parallel=2, progress=seen.append))
    assert report.chunks > 3 and report.chunks_learned == report.chunks
    assert report.model_calls == report.chunks  # one call a chunk, no summary call
    asked = [len([ln for ln in r.messages[-1].content.splitlines() if re.match(r"^\d+\. ", ln)]) for r in llm.requests]
    # each stating sentence labelled once, in chunks a small model can follow; the sentences that
    # state no quantity or date are stored as they are, without being asked about
    assert sum(asked) == 12 and report.facts_extracted == 12 * 7
    assert len(kb.facts(entity="Brill3")) >= 1 and kb.current("Brill3", "bridges").value == "13 bridges"  # type: ignore[union-attr]
    done = [p.chunks_done for p in seen if p.phase == "extracting"]
    assert done == sorted(done) and done[0] == 0 and done[-1] == report.chunks
    assert seen[-1].phase == "stored" and seen[-1].facts_found == report.facts_extracted


def test_the_rewriting_extractor_is_kept_for_comparison(kb: KnowledgeBase) -> None:
    paragraphs = [f"Town{i} has {i + 10} bridges. " + "The river runs slowly past the old mill. " * 6 for i in range(6)]
    text = "\n\n".join(paragraphs)
    chunks = split_into_chunks(text, max_tokens=120)
    assert len(chunks) > 2 and all(c.tokens <= 120 for c in chunks)
    report = run(learn(kb, text, source="Long", published="2026-01-01", model=model(), chunk_tokens=120,
                       extraction="rewrite"))
    assert report.extraction == "rewrite" and report.facts_stored == 6 and report.model_calls == len(chunks) + 1
    assert kb.sources()[0].summary == "A short test summary."


def test_a_failure_mid_way_stores_nothing(kb: KnowledgeBase) -> None:
    def flaky(request: ModelRequest) -> object:
        if "Town5" in request.messages[-1].content:
            raise RuntimeError("the model crashed")
        return fake_llm(request)

    text = "\n\n".join(f"Town{i} has {i} bridges. " + "Filler words about the river. " * 8 for i in range(8))
    with pytest.raises(LearningError, match="nothing was stored"):
        run(learn(kb, text, source="Long", model=FunctionModel(flaky), chunk_tokens=80))
    assert kb.count() == 0 and kb.episodes() == [] and kb.sources() == []


def test_a_budget_stop_stores_nothing_and_says_so(kb: KnowledgeBase) -> None:
    from moot.runtime import Budget

    text = "\n\n".join(f"Town{i} has {i} bridges. " + "Filler words about the river. " * 8 for i in range(6))
    with pytest.raises(LearningError) as caught:
        run(learn(kb, text, source="Long", model=model(), chunk_tokens=80, budget=Budget(max_calls=2)))
    assert "budget" in caught.value.one_line() and kb.count() == 0


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.md", b"  \n\n", "empty"),
        ("front-matter-only.md", b"---\npublished: 2026-01-01\n---\n", "empty"),
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "binary"),
        ("latin1.txt", "Caf\u00e9 has 3 tables.".encode("latin-1"), "not UTF-8"),
        ("bad-date.md", b"---\npublished: yesterday\n---\nElmsbrook has 3 boats.", "published: YYYY-MM-DD"),
    ],
)
def test_bad_files_are_refused_in_one_line(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    with pytest.raises(MootError) as caught:
        read_document(_write(tmp_path / name, data))
    line = caught.value.one_line()
    assert message in line and name in line and "fix:" in line and "\n" not in line


def test_huge_and_missing_files_are_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(6 * 1024 * 1024)
    with pytest.raises(MootError, match="over the 5 MB limit"):
        read_document(huge)
    with pytest.raises(MootError, match="no such file"):
        read_document(tmp_path / "missing.md")
    with pytest.raises(MootError, match="is a directory"):
        read_document(tmp_path)


def test_front_matter_and_date_line_conventions(tmp_path: Path) -> None:
    doc = read_document(ARTICLES / "01-launch.md")
    assert doc.published == date(2026, 1, 12) and doc.source.startswith("Elmsbrook Herald: ")
    assert not doc.text.lstrip().startswith("---")
    plain = _write(tmp_path / "note.txt", b"Date: 2026-02-03\n# Pond report\nThe pond has 4 ducks.\n")
    doc = read_document(plain)
    assert (doc.published, doc.source) == (date(2026, 2, 3), "Pond report")
    assert "Date:" not in doc.text


def test_learn_file_uses_the_files_date(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _write(tmp_path / "a.md", b"---\npublished: 2026-03-02\nsource: Herald\n---\nElmsbrook has 610 volunteers.\n")
    report = run(learn_file(kb, path, model=model()))
    assert report.path == str(path) and report.published == date(2026, 3, 2)
    assert kb.current("Elmsbrook", "volunteers").source_date == date(2026, 3, 2)  # type: ignore[union-attr]


def test_learn_file_keeps_the_file_as_given_and_an_unchanged_file_gets_it_without_a_call(kb: KnowledgeBase,
                                                                                         tmp_path: Path) -> None:
    text = "---\npublished: 2026-03-02\nsource: Herald\ntitle: Boats\n---\nElmsbrook has 6 boats.\n"
    path = _write(tmp_path / "a.md", text.encode())
    report = run(learn_file(kb, path, model=model()))
    assert kb.source_text(report.source, "2026-03-02") == text.strip()  # front matter and all, as in the file
    kb.store_source(report.source, [], published="2026-03-02", as_written="")  # as a knowledge base of an older moot
    llm = model()
    again = run(learn_file(kb, path, model=llm))
    assert again.unchanged and llm.requests == []
    assert kb.source_text(report.source, "2026-03-02") == text.strip()


# --------------------------------------------------------------------------- two processes


def _learn_in_process(kb_path: str, prefix: str, count: int) -> None:
    with KnowledgeBase.open(kb_path) as opened:
        for i in range(count):
            text = f"{prefix}town{i} has {i + 1} wells."
            asyncio.run(learn(opened, text, source=f"{prefix}-{i}", published="2026-01-01", model=model(),
                              record_run=False))


def test_two_processes_learning_into_one_kb_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite3")
    KnowledgeBase.open(path).close()
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_learn_in_process, args=(path, p, 15)) for p in ("A", "B")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    with KnowledgeBase.open(path) as opened:
        assert opened.count() == 30
        assert {f.entity for f in opened.facts()} == {f"{p}town{i}" for p in "AB" for i in range(15)}
        assert len(opened.sources()) == 30


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, typer.Typer]:
    import moot.models.registry as registry

    monkeypatch.setattr(registry, "infer_model", lambda spec=None, **kw: model())
    app = typer.Typer()
    learn_cmd.register(app)
    kb_cmd.register(app)
    return CliRunner(), app


def test_cli_learn_then_stats_facts_and_consolidate(cli: tuple[CliRunner, typer.Typer], tmp_path: Path) -> None:
    runner, app = cli
    old = _write(tmp_path / "jan.md", b"---\npublished: 2026-01-12\nsource: Herald\n---\nElmsbrook has 340 volunteers.\n")
    new = _write(tmp_path / "may.md", b"Date: 2026-05-18\n\nElmsbrook has 880 volunteers.\n")
    kb_file = str(tmp_path / "cli.sqlite3")
    result = runner.invoke(app, ["learn", str(old), str(new), "--kb", kb_file, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert [f["facts_stored"] for f in payload["files"]] == [1, 1]
    assert payload["files"][1]["superseded"] == 1 and payload["usage"]["requests"] == 2

    stats = json.loads(runner.invoke(app, ["kb", "stats", "--kb", kb_file, "--json"]).stdout)
    assert (stats["facts"], stats["current_facts"], stats["superseded_facts"]) == (2, 1, 1)

    listing = runner.invoke(app, ["kb", "facts", "--kb", kb_file, "--all"], env={"COLUMNS": "200"})
    assert "superseded by" in listing.stdout and "880" in listing.stdout
    only_current = json.loads(runner.invoke(app, ["kb", "facts", "--kb", kb_file, "--json", "--entity", "elmsbrook"]).stdout)
    assert [f["value"] for f in only_current["facts"]] == ["880 volunteers"]

    dry = json.loads(runner.invoke(app, ["kb", "consolidate", "--kb", kb_file, "--dry-run", "--json"]).stdout)
    assert dry["dry_run"] is True and dry["facts_before"] == 2


def test_cli_refuses_a_bad_file_before_learning_anything(cli: tuple[CliRunner, typer.Typer], tmp_path: Path) -> None:
    runner, app = cli
    good = _write(tmp_path / "good.md", b"Elmsbrook has 3 boats.\n")
    bad = _write(tmp_path / "bad.bin", b"\x00\x01\x02")
    kb_file = tmp_path / "cli.sqlite3"
    result = runner.invoke(app, ["learn", str(good), str(bad), "--kb", str(kb_file)])
    assert isinstance(result.exception, MootError) and "bad.bin is a binary file" in result.exception.one_line()
    assert not kb_file.exists()


def test_cli_kb_commands_refuse_missing_and_corrupt_kbs(cli: tuple[CliRunner, typer.Typer], tmp_path: Path) -> None:
    runner, app = cli
    missing = runner.invoke(app, ["kb", "stats", "--kb", str(tmp_path / "nope.sqlite3")])
    assert isinstance(missing.exception, MootError) and "does not exist" in str(missing.exception)
    assert not (tmp_path / "nope.sqlite3").exists()
    corrupt = _write(tmp_path / "corrupt.sqlite3", b"this is not sqlite at all" * 100)
    before = corrupt.read_bytes()
    result = runner.invoke(app, ["learn", str(_write(tmp_path / "a.md", b"A has 1 b.")), "--kb", str(corrupt)])
    assert isinstance(result.exception, MootError) and "not a moot knowledge base" in str(result.exception)
    assert corrupt.read_bytes() == before


def test_python_m_moot_learn_reports_a_bad_file_in_one_line(tmp_path: Path) -> None:
    help_text = subprocess.run([sys.executable, "-m", "moot", "--help"], capture_output=True, text=True).stdout
    if "learn" not in help_text:
        pytest.skip("`moot learn` is not registered in moot.cli.app yet")
    empty = _write(tmp_path / "empty.md", b"")
    done = subprocess.run([sys.executable, "-m", "moot", "learn", str(empty), "--kb", str(tmp_path / "k.sqlite3")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "empty.md is empty" in done.stderr and len(done.stderr.strip().splitlines()) == 1
