"""One short end-to-end research run on the embedded model over a tiny real repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.runtime import RunStore
from moot.teams.research import ResearchConfig, ResearchTeam
from moot.teams.research.citations import exists, find_citations
from test_research_support import make_repo

pytestmark = pytest.mark.embedded  # run by -m embedded, left out by -m "not embedded"


def test_embedded_model_answer_cites_a_real_location(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "repo")
    team = ResearchTeam(repo, model=local_model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig(single_calls=2))
    try:
        result = team.ask_sync("Where is parse_request defined?")
        index = team.index()
        cited = find_citations(result.answer)
        assert result.mode == "single" and result.routing_rule.startswith("symbol-lookup")
        assert cited, result.answer
        assert all(exists(index, c) for c in cited), result.answer  # invented ones were corrected or removed
        assert any(c.path == "app/server.py" and c.start <= 4 <= c.end or c.start == 4 for c in cited), result.answer
        assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "completed"
    finally:
        team.close()


def test_embedded_model_answers_where_a_function_is_defined_and_who_calls_it(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    """The question a new user asked of a five-file repository, which used to come back empty."""
    from test_research_resolve import QUESTION
    from test_research_resolve import make_repo as make_checks_repo

    repo = make_checks_repo(tmp_path / "repo")
    team = ResearchTeam(repo, model=local_model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig(single_calls=2, researcher_calls=2))
    try:
        for mode in ("single", "multi"):
            result = team.ask_sync(QUESTION, mode=mode)  # type: ignore[arg-type]
            assert result.mode == mode, result.routing_rule
            assert "`pkg.rules.check_fn` (function) is defined at pkg/rules.py:4-6" in result.answer, result.answer
            assert "called by `pkg.caller_file.run` (pkg/caller_file.py:8)" in result.answer, result.answer
            assert all(exists(team.index(), c) for c in find_citations(result.answer)), result.answer
    finally:
        team.close()


LIMITS_TS = """export const ARRAY_LIMIT = 20;

export function isArrayIndex(segment: string, index: number, options: ParseOptions): boolean {
  if (!options.parseArrays) {
    return false;
  }
  if (String(index) !== segment) {
    return false;
  }
  return index >= 0 && index < options.arrayLimit;
}
"""

PARSE_TS = """import { isArrayIndex } from "./limits";

export function parseSegment(segment: string, options: ParseOptions): object {
  const index = parseInt(segment, 10);
  if (isArrayIndex(segment, index, options)) {
    return [];
  }
  return {};
}
"""


def test_embedded_model_answers_how_from_the_deciding_conditions(tmp_path: Path, local_model) -> None:  # type: ignore[no-untyped-def]
    """A how-question about TypeScript: the answer states the deciding conditions in words
    beside the line quoted verbatim from the file, and keeps no "when" it cannot show."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "limits.ts").write_text(LIMITS_TS)
    (repo / "src" / "parse.ts").write_text(PARSE_TS)
    team = ResearchTeam(repo, model=local_model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig(single_calls=2))
    try:
        result = team.ask_sync("How does isArrayIndex decide whether a segment is an array index?", mode="single")
    finally:
        team.close()
    assert result.conditions, result.answer
    assert "How it decides" in result.answer, result.answer
    for condition in result.conditions:  # the function's own conditions or its caller's, each verbatim
        lines = (repo / condition.path).read_text().splitlines()
        assert condition.path.startswith("src/") and lines[condition.line - 1].strip() == condition.text
        assert condition.words and f"{condition.words} — {condition.location()}" in result.answer
    for verdict in result.verification:  # a removed "when" statement is not in the answer
        if verdict.method == "condition" and verdict.status == "CORRECTED":
            assert verdict.claim not in result.answer
