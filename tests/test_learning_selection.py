"""Extraction by selection: the model chooses labels for the source's own sentences, Python builds the facts."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import date
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from moot.cli import learn_cmd
from moot.memory import KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent
from moot.teams.learning import collect_files, learn, learn_file, learn_files
from moot.teams.learning.ingest.learning import file_sha256
from moot.teams.learning.ingest.selection import build_facts, label_schema, propose, read_labels
from moot.text import split_units
from learning_support import label_units
from test_learning import ARTICLES, kb, model, run  # noqa: F401 (kb is a fixture)



def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_options_come_from_the_sentence_and_a_pointing_sentence_is_asked_what_it_means() -> None:
    units = split_units("The Harwell Trust has 1,200 members. That number counts everyone since May.\n\n"
                        "Dr. Ada Quill leads the Harwell Trust. She founded it in 2019.")
    options = propose(units, document_names=["Harwell Trust", "Dr. Ada Quill"], published=date(2026, 7, 1))
    assert [o.unit.text for o in options] == [u.text for u in units]
    first, pointer, leader, personal = options
    assert first.entities[0] == "Harwell Trust" and "members" in first.properties and not first.needs_reference
    assert "harwell" not in first.properties  # a name's words are not properties
    assert pointer.references[0] == "1,200 members"  # the most recent amount first
    assert personal.references and all(not re.search(r"\d", r) for r in personal.references)  # "She": names only
    schema = label_schema(options).model_json_schema()
    items = schema["properties"]["labels"]["prefixItems"]
    assert [len(item["prefixItems"]) for item in items] == [2, 3, 2, 3]
    assert "Harwell Trust" in items[0]["prefixItems"][0]["enum"] and "" in items[0]["prefixItems"][0]["enum"]


def test_a_fact_is_the_sentence_itself_plus_the_chosen_reference_and_python_reads_its_value_and_date() -> None:
    units = split_units("By 6 July 2026 the Harwell Trust had 1,200 members. That number counts everyone since May.")
    options = propose(units, document_names=["Harwell Trust"], published=date(2026, 7, 6))
    labels, refused = read_labels({"labels": [["Harwell Trust", "members"], ["Harwell Trust", "", "1,200 members"]]}, options)
    facts = build_facts(labels, source="Gazette", published=date(2026, 7, 6))
    assert refused == 0
    assert facts[0].content == units[0].text and facts[0].value == "1,200 members"
    assert (facts[0].entity, facts[0].attribute) == ("Harwell Trust", "members")
    assert facts[0].temporal_index is not None  # "6 July 2026": the event date, read by the text package
    assert facts[1].content == f"{units[1].text} (refers to: 1,200 members)"
    assert facts[1].attribute == ""  # no property chosen, no quantity: not a supersession key


def test_labels_outside_the_options_or_beyond_the_sentences_are_refused() -> None:
    units = split_units("The Harwell Trust has 1,200 members. It owns 3 boats.")
    options = propose(units, document_names=["Harwell Trust"])
    # a provider that ignores the schema: an invented entity, a word not in the sentence, a fourth item
    labels, refused = read_labels(
        {"labels": [["Harwell Trust", "members"], ["Invented Corp", "submarines", "whatever"], ["Harwell Trust", "boats"]]},
        options,
    )
    assert refused == 4  # invented entity, foreign property, foreign reference, an item beyond the units
    # the refused words are gone, the sentence stays: a fact with no labels rather than none
    assert [(lab.unit.text, lab.entity, lab.property) for lab in labels] == [
        ("The Harwell Trust has 1,200 members.", "Harwell Trust", "members"), ("It owns 3 boats.", "", "")]


def test_a_sentence_the_model_leaves_unlabelled_or_skips_is_still_stored_as_the_sources_text() -> None:
    units = split_units("The mill was built in 1791. A restoration cost 420,000 crowns. It reopened in 2021.")
    options = propose(units, document_names=["Sorrel Mill"], published=date(2024, 5, 20))
    # a small model labels nothing in the first sentence and stops after two items
    labels, refused = read_labels({"labels": [["", ""], ["", "restoration"]]}, options)
    facts = build_facts(labels, source="Trust", published=date(2024, 5, 20))
    assert refused == 0
    assert [f.content.split(" (refers to")[0] for f in facts] == [u.text for u in units]
    assert facts[0].value == "" and facts[1].value == "420,000 crowns" and facts[1].concept == "restoration"


def test_only_units_that_state_a_quantity_a_date_or_point_back_are_asked_and_every_unit_is_stored(kb: KnowledgeBase) -> None:
    llm = model()
    text = ("The Harwell Trust runs the ferry. The ferry carries 40 cars. That number doubled in summer. "
            "Visitors like the view.")
    report = run(learn(kb, text, source="Gazette", published="2026-07-06", model=llm))
    asked = [line for line in llm.requests[0].messages[-1].content.splitlines() if re.match(r"^\d+\. ", line)]
    assert [line.split(". ", 1)[1] for line in asked] == ["The ferry carries 40 cars.", "That number doubled in summer."]
    assert report.facts_stored == 4 and len(llm.requests) == 1
    assert kb.current("Harwell Trust", "cars").value == "40 cars"  # type: ignore[union-attr]
    # a text that states no quantity or date costs no call: its sentences are stored as they are
    quiet = model()
    second = run(learn(kb, "The Harwell Trust owns a boathouse. Members meet there.", source="Notes", model=quiet))
    assert quiet.requests == [] and second.facts_stored == 2 and second.model_calls == 0


def test_two_values_under_one_key_in_one_source_are_not_a_supersession_key() -> None:
    units = split_units("The Harwell Trust received 700,000 euros. Its budget is now 3.1 million euros.")
    options = propose(units, document_names=["Harwell Trust"])
    labels, _ = read_labels({"labels": [["Harwell Trust", "euros"], ["Harwell Trust", "euros"]]}, options)
    facts = build_facts(labels, source="Gazette", published=date(2026, 7, 6))
    assert [f.attribute for f in facts] == ["", ""]  # a noisy label must not make one hide the other


def test_every_stored_fact_is_the_sources_own_text(kb: KnowledgeBase) -> None:
    reports = run(learn_files(kb, sorted(ARTICLES.glob("*.md")), model=model(), record_run=False))
    assert all(o.error is None for o in reports)
    sources = {o.report.source: _flat(o.path.read_text(encoding="utf-8")) for o in reports}  # type: ignore[union-attr]
    facts = kb.facts(include_superseded=True)
    assert len(facts) > 40
    for fact in facts:
        text = re.sub(r" \(refers to: [^)]*\)$", "", fact.content)
        assert _flat(text) in sources[fact.source], fact.content


def test_a_changed_file_relearns_only_its_new_text_and_forgets_what_it_lost(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.md", "---\ntitle: Pier\npublished: 2026-03-01\n---\n\n"
                  "The Ashby Pier has 40 berths.\n\nThe Ashby Pier opened in 1911.\n")
    llm = model()
    first = run(learn_file(kb, path, model=llm))
    assert first.facts_stored == 2 and len(llm.requests) == 1
    again = run(learn_file(kb, path, model=llm))
    assert again.unchanged and len(llm.requests) == 1  # the same bytes: no call, not even chunking
    path.write_text(path.read_text().replace("40 berths", "55 berths"), encoding="utf-8")
    changed = run(learn_file(kb, path, model=llm))
    assert not changed.unchanged and changed.forgotten == 1 and len(llm.requests) == 2
    assert [f.content for f in kb.facts()] == ["The Ashby Pier has 55 berths.", "The Ashby Pier opened in 1911."]
    assert kb.document(path=str(path.resolve())).sha256 == file_sha256(path)  # type: ignore[union-attr]


def test_two_files_with_the_same_title_keep_their_own_text(kb: KnowledgeBase, tmp_path: Path) -> None:
    a = _write(tmp_path / "a" / "README.md", "# Notes\n\nThe Ashby Pier has 40 berths.\n")
    b = _write(tmp_path / "b" / "README.md", "# Notes\n\nThe Ferry Quay has 12 berths.\n")
    first = run(learn_file(kb, a, model=model()))
    second = run(learn_file(kb, b, model=model()))
    assert first.source == "Notes" and second.source != "Notes"
    assert {f.content for f in kb.facts()} == {"The Ashby Pier has 40 berths.", "The Ferry Quay has 12 berths."}


def test_files_are_learned_side_by_side_and_a_failing_file_does_not_stop_the_others(kb: KnowledgeBase, tmp_path: Path) -> None:
    live = 0
    peak = 0

    async def slow_labeller(request: ModelRequest) -> object:
        nonlocal live, peak
        if "Broken" in request.messages[-1].content:
            raise RuntimeError("the model crashed")
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.05)
        live -= 1
        return label_units(request)

    paths = [_write(tmp_path / f"n{i}.md", f"# Note {i}\n\nThe Quay{i} Trust has {i + 2} boats.\n") for i in range(6)]
    paths.insert(3, _write(tmp_path / "broken.md", "# Broken\n\nThe Broken Trust has 1 boat.\n"))
    outcomes = run(learn_files(kb, paths, model=FunctionModel(by_agent({"fact-labeller": slow_labeller})), parallel=3,
                               record_run=False))
    assert [o.path for o in outcomes] == paths
    assert [o.error is not None for o in outcomes] == [False, False, False, True, False, False, False]
    assert "nothing was stored" in outcomes[3].error.message  # type: ignore[union-attr]
    assert peak == 3  # three files at once, never more
    assert kb.count() == 6


def test_a_folder_is_collected_recursively_with_globs(tmp_path: Path) -> None:
    _write(tmp_path / "docs" / "a.md", "A has 1 b.")
    _write(tmp_path / "docs" / "deep" / "b.txt", "B has 2 c.")
    _write(tmp_path / "docs" / "drafts" / "c.md", "C has 3 d.")
    _write(tmp_path / "docs" / ".git" / "d.md", "hidden")
    _write(tmp_path / "docs" / "e.csv", "x,y")
    found = collect_files([tmp_path / "docs"], exclude=["drafts/*"])
    assert [p.relative_to(tmp_path / "docs").as_posix() for p in found] == ["a.md", "deep/b.txt"]
    assert [p.name for p in collect_files([tmp_path / "docs"], include=["*.csv"])] == ["e.csv"]


def test_cli_learns_a_folder_in_parallel_and_a_rerun_costs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import moot.models.registry as registry

    llm = model()
    monkeypatch.setattr(registry, "infer_model", lambda spec=None, **kw: llm)
    app = typer.Typer()
    learn_cmd.register(app)
    app.command("noop")(lambda: None)
    for i in range(5):
        _write(tmp_path / "notes" / f"{i}.md", f"---\npublished: 2026-0{i + 1}-01\n---\n\nThe Ashby Pier has {40 + i} berths.\n")
    kb_file = str(tmp_path / "k.sqlite3")
    runner = CliRunner()
    result = runner.invoke(app, ["learn", str(tmp_path / "notes"), "--kb", kb_file, "--json", "--parallel", "2"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert len(payload["files"]) == 5 and payload["facts_stored"] == 5 and payload["usage"]["requests"] == 5
    with KnowledgeBase.open(kb_file) as opened:
        assert opened.current("Ashby Pier", "berths").value == "44 berths"  # type: ignore[union-attr]
    again = runner.invoke(app, ["learn", str(tmp_path / "notes"), "--kb", kb_file, "--json"])
    assert json.loads(again.stdout)["usage"]["requests"] == 0
    assert all(f["unchanged"] for f in json.loads(again.stdout)["files"])


def test_a_chunks_stored_text_reads_back_as_the_same_units() -> None:
    from moot.teams.learning.ingest.chunking import chunk_units

    text = ("# Booking\n\nThe office opens at 9. It closes at 5.\n\n1. Call the office.\n2. Pay the deposit.\n\n"
            "| Day | Boats |\n|---|---|\n| Mon | 4 |\n| Tue | 6 |\n")
    units = split_units(text)
    back = split_units("\n\n".join(c.text for c in chunk_units(units)))
    assert [(u.kind, u.text, u.header) for u in back] == [(u.kind, u.text, u.header) for u in units]
