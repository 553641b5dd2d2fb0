"""Answers assembled from the index: the failure a new user met, and the checks around it.

The repository is five files the test writes. The question is the kind the code research
team is for: which function does X, in which file is it defined, which function calls it.
Before, the model's half-right draft ("`check_fn` in `caller_file.py` … calls `other_fn` in
`other_file.py`") lost every statement, the right half too, because the verifier took the
``py`` of ``caller_file.py`` for a code name the repository lacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.codeindex import CodeIndex
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.teams.research import ResearchConfig, ResearchTeam
from moot.teams.research.planner import question_parts
from moot.teams.research.resolve import candidates, index_section, resolve
from moot.teams.research.verifier import Claim, check_citations, narrow, split_claims, unknown_names
from test_research_support import index_of, write_repo

RULES = '''"""Rules that values must follow."""


def check_fn(value):
    """Check that a value is positive."""
    return value > 0


def clamp(value, low, high):
    """Keep a value between two bounds."""
    if value < low:
        return low
    return min(value, high)
'''

CALLER = '''"""Runs the checks over a batch."""

from pkg.rules import check_fn


def run(values):
    """Keep the values that pass the check."""
    return [v for v in values if check_fn(v)]
'''

REPORT = '''"""Formats results for people."""


def format_report(items):
    """One line per item."""
    return "\\n".join(str(i) for i in items)
'''

STORE = '''"""Keeps batches."""


class BatchStore:
    """Batches by name."""

    def __init__(self):
        self.batches = {}

    def add(self, name, values):
        self.batches[name] = values
'''

QUESTION = "Which function checks that a value is positive, in which file is it defined, and which function calls it?"
HALF_RIGHT = "`check_fn` in `caller_file.py` checks the value and calls `other_fn` in `other_file.py`."


def make_repo(root: Path) -> Path:
    return write_repo(root, {"pkg/rules.py": RULES, "pkg/caller_file.py": CALLER, "pkg/other_file.py": REPORT,
                             "pkg/store.py": STORE, "README.md": "# checks\nValidates batches of numbers.\n"})


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CodeIndex]:
    yield from index_of(make_repo(tmp_path / "repo"), tmp_path)


# ------------------------------------------------------------------ the verifier's name check


def fix(index: CodeIndex, text: str) -> tuple[str, list[str]]:
    [claim] = split_claims(text)
    verdicts, replace, _ = check_citations(index, [claim])
    return replace.get(claim.text, claim.text), [v.correction for v in verdicts]


def test_the_half_right_draft_is_corrected_not_deleted(index: CodeIndex) -> None:
    fixed, notes = fix(index, HALF_RIGHT)
    assert fixed == "`check_fn` in `pkg/rules.py` checks the value."
    assert notes == ["other_fn is not in the repository: the part naming it was removed; "
                     "check_fn is defined in pkg/rules.py, not in caller_file.py"]


def test_file_names_and_their_extensions_are_not_code_names(index: CodeIndex) -> None:
    assert Claim("`run` in `caller_file.py` calls `check_fn` (see pkg/rules.py).", []).names(code_only=True) == ["run", "check_fn"]
    assert unknown_names(index, "`run` in `caller_file.py` loops over `values`.") == []
    fixed, notes = fix(index, "`run` in `pkg/caller_file.py` keeps the values that pass `check_fn`.")
    assert notes == [] and fixed.startswith("`run` in `pkg/caller_file.py`")


def test_prose_names_of_technologies_are_not_files(index: CodeIndex) -> None:
    fixed, notes = fix(index, "`clamp` keeps a value between bounds, as in Node.js code.")
    assert notes == [] and fixed == "`clamp` keeps a value between bounds, as in Node.js code."


def test_a_file_the_repository_lacks_is_narrowed_away(index: CodeIndex) -> None:
    fixed, notes = fix(index, "`clamp` keeps a value between bounds, and `format_report` lives in `reports/html.py`.")
    assert fixed == "`clamp` keeps a value between bounds."
    assert notes == ["reports/html.py is not a file of the repository: the part naming it was removed"]


def test_a_tool_name_is_not_taken_for_code_and_its_clause_goes(index: CodeIndex) -> None:
    fixed, notes = fix(index, "`BatchStore.add` stores a batch by name, which I found with search_code.")
    assert fixed == "`BatchStore.add` stores a batch by name."
    assert "search_code is one of moot's research tools" in notes[0]


def test_a_statement_with_nothing_true_left_is_removed(index: CodeIndex) -> None:
    fixed, notes = fix(index, "The `validate_all` function in `checks/validators.py` does it.")
    assert fixed == ""
    assert notes == ["validate_all is not in the repository: the statement was removed"]


def test_narrow_keeps_only_what_still_names_code() -> None:
    assert narrow("`a_b` runs first, then `ghost_fn` runs.", ["ghost_fn"]) == "`a_b` runs first."
    assert narrow("It calls `ghost_fn`.", ["ghost_fn"]) is None
    assert narrow("Nothing wrong here with `a_b`.", ["ghost_fn"]) == "Nothing wrong here with `a_b`."


# ------------------------------------------------------------------ resolution from the index


def test_a_resolved_symbol_states_its_definition_and_callers_from_the_index(index: CodeIndex) -> None:
    [check] = resolve(index, ["check_fn"])
    assert (check.qualified_name, check.path, check.start_line, check.end_line) == ("pkg.rules.check_fn", "pkg/rules.py", 4, 6)
    assert [(c.caller, c.location()) for c in check.callers] == [("pkg.caller_file.run", "pkg/caller_file.py:8")]
    assert check.statement() == (
        '`pkg.rules.check_fn` (function) is defined at pkg/rules.py:4-6 as `def check_fn(value)`. '
        'Its docstring: "Check that a value is positive." It is called by `pkg.caller_file.run` (pkg/caller_file.py:8).'
    )
    [run] = resolve(index, ["pkg.caller_file.run"])
    assert run.callees == ["check_fn"]  # the repository's own code; builtins are left out
    assert resolve(index, ["other_fn", ""]) == []  # a name the repository does not define adds nothing


def test_candidates_are_the_definitions_at_the_evidence_and_what_they_call(index: CodeIndex) -> None:
    names = candidates(index, [("pkg/caller_file.py", 7, 9)])
    assert names == ["pkg.caller_file.run", "pkg.rules.check_fn"]


def test_question_parts_split_the_question_by_its_clauses() -> None:
    assert question_parts(QUESTION) == [
        "Which function checks that a value is positive?",
        "in which file is it defined? (about: Which function checks that a value is positive)",
        "which function calls it? (about: Which function checks that a value is positive)",
    ]
    assert question_parts("How is a request parsed?") == []


# ------------------------------------------------------------------ the team, scripted


def _enum(request: ModelRequest) -> list[str]:
    schema = request.output.json_schema if request.output else {}
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "enum" in node and all(isinstance(v, str) for v in node["enum"]):
                found.extend(node["enum"])
            if isinstance(node.get("const"), str):  # a list of one choice is written as a const
                found.append(node["const"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


def scripted(request: ModelRequest) -> Any:
    """The phases told apart by the schema they must fill (or its absence), never by prompt text."""
    schema = request.output.json_schema if request.output else None
    props = set((schema or {}).get("properties", {}))
    if "sub_questions" in props:
        return {"sub_questions": []}  # the planner fails to split it (as the 0.5B model did)
    if "findings" in props:
        chosen = [n for n in _enum(request) if n.endswith("check_fn")]
        return {"symbols": chosen, "findings": [{"path": "pkg/caller_file.py", "start_line": 7, "end_line": 8, "note": "filters values"}],
                "coverage_note": "found the check and its caller", "sufficient": True}
    if "verdicts" in props:
        return {"verdicts": []}
    return HALF_RIGHT


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_the_question_gets_its_definition_and_caller_in_both_modes(mode: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    team = ResearchTeam(repo, model=FunctionModel(scripted), store=RunStore(tmp_path / "runs.db"),
                        db_path=tmp_path / "index.db", config=ResearchConfig())
    try:
        result = team.ask_sync(QUESTION, mode=mode)  # type: ignore[arg-type]
    finally:
        team.close()
    assert result.mode == mode  # multi no longer falls back to single when the planner fails
    assert result.answer.startswith("`check_fn` in `pkg/rules.py` checks the value.")
    assert "other_fn" not in result.answer
    assert ("`pkg.rules.check_fn` (function) is defined at pkg/rules.py:4-6" in result.answer
            and "called by `pkg.caller_file.run` (pkg/caller_file.py:8)" in result.answer)
    assert result.resolved[0].qualified_name == "pkg.rules.check_fn"
    if mode == "multi":
        assert len(result.plan.sub_questions) == 3
        assert all("pkg.rules.check_fn" in b.nominated for b in result.evidence)


def test_the_index_section_is_empty_without_symbols() -> None:
    assert index_section([]) == ""
