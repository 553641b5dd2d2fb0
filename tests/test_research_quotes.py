"""Source lines that answer a question: Python gathers and ranks, the model picks by number,
moot quotes them verbatim at path:line.

The repository is small and written here; its answer lives in a callee (``next_method``)
and in one ``headers.pop`` line, the kind of behaviour the index alone cannot state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from moot.codeindex import CodeIndex
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent
from moot.runtime import RunStore
from moot.teams.research import ResearchConfig, ResearchTeam
from moot.teams.research.quotes import (
    MAX_PICKED,
    OFFERED_PER_SUB_QUESTION,
    RANKED_MAX,
    RANKED_PER_SUB_QUESTION,
    CodeLine,
    QuotePick,
    candidate_lines,
    chosen,
    grouped,
    pick_type,
    picker_task,
    question_terms,
    quote_section,
)
from moot.teams.research.conditions import asks_how
from moot.teams.research.resolve import resolve
from test_research_support import index_of, write_repo

REDIRECTS = '''"""Following redirects."""

SEE_OTHER = 303


def next_method(method, status):
    """The method to use after a redirect."""
    if status == SEE_OTHER and method != "HEAD":
        method = "GET"
    return method


def build_redirect(request, status):
    """A new request for a redirect."""
    method = next_method(request.method, status)
    headers = dict(request.headers)
    headers.pop("Authorization", None)
    return make_request(
        method=method,
        headers=headers,
    )


def make_request(method, headers):
    return (method, headers)
'''

QUESTION = "What happens to the method and the Authorization header when a request is redirected?"


def make_repo(root: Path) -> Path:
    return write_repo(root, {"web/redirects.py": REDIRECTS})


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CodeIndex]:
    yield from index_of(make_repo(tmp_path / "repo"), tmp_path)


def file_line(root: Path, line: CodeLine) -> str:
    return (root / line.path).read_text().splitlines()[line.line - 1].strip()


def test_candidates_reach_into_callees_and_skip_noise(index: CodeIndex, tmp_path: Path) -> None:
    resolved = resolve(index, ["build_redirect"])
    lines = candidate_lines(index, QUESTION, resolved)
    texts = [c.text for c in lines]
    # the deciding line lives in the callee, not in the nominated function
    assert 'if status == SEE_OTHER and method != "HEAD":' in texts
    assert 'headers.pop("Authorization", None)' in texts
    # arguments handed on unchanged say nothing and are not offered
    assert "method=method," not in texts and "headers=headers," not in texts
    # every candidate is the file's own line at its number
    for c in lines:
        assert file_line(tmp_path / "repo", c) == c.text
    assert len({c.location() for c in lines}) == len(lines)


def test_candidates_need_the_question_to_share_a_word(index: CodeIndex) -> None:
    resolved = resolve(index, ["build_redirect"])
    assert candidate_lines(index, "the and of", resolved) == []
    assert "redirect" in question_terms("Which redirects are followed?")
    assert candidate_lines(index, QUESTION, []) == []


def test_the_pick_schema_admits_only_shown_numbers() -> None:
    schema = pick_type(3)
    assert schema.model_validate({"lines": [1, 3]}).lines == [1, 3]
    for bad in ([], [0], [4], [1, 2, 3] * 3):  # an empty pick too: the 0.5B model answered `{ }`
        with pytest.raises(ValidationError):
            schema.model_validate({"lines": bad})


def test_chosen_keeps_shown_lines_once_in_source_order() -> None:
    lines = [CodeLine(path="a.py", line=n, text=f"x = {n}", symbol="a.f") for n in (12, 5, 9)]
    assert [c.line for c in chosen(lines, QuotePick(lines=[2, 1, 2]))] == [5, 12]
    assert chosen(lines, "not a pick") == []
    assert chosen(lines, QuotePick(lines=[7])) == []
    section = quote_section(chosen(lines, QuotePick(lines=[3])))
    assert section.endswith("- a.py:9 (in `a.f`): `x = 9`")
    assert quote_section([]) == ""


def pick_lines_holding(*fragments: str):
    """The line picker, scripted: the numbers of the shown lines that hold any fragment (those
    marked as conditions under ``conditions`` when the schema asks for them first)."""

    def pick(request: ModelRequest) -> dict:
        task = request.messages[-1].content
        shown = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^(\d+)\. (.*)$", task, re.M)
                 if any(f in m.group(2) for f in fragments)]
        if "conditions" in (request.output.json_schema if request.output else {}).get("properties", {}):
            return {"conditions": [n for n, text in shown if text.startswith("[condition]")],
                    "lines": [n for n, text in shown if not text.startswith("[condition]")]}
        return {"lines": [n for n, _ in shown]}

    return pick


def team_for(tmp_path: Path, model: FunctionModel, **config: object) -> ResearchTeam:
    return ResearchTeam(make_repo(tmp_path / "repo"), model=model, store=RunStore(tmp_path / "runs.db"),
                        db_path=tmp_path / "index.db", config=ResearchConfig(**config))  # type: ignore[arg-type]


def test_the_answer_quotes_the_picked_lines_verbatim(tmp_path: Path) -> None:
    model = FunctionModel(by_agent({
        "single-agent": "`build_redirect` builds the new request.",
        "line-picker": pick_lines_holding("SEE_OTHER", "pop("),
    }))
    team = team_for(tmp_path, model)
    try:
        result = team.ask_sync(QUESTION, mode="single")
    finally:
        team.close()
    # a how-question ("what happens … when"): the condition is a deciding condition, stated in
    # words beside the quoted line; the other picked line is quoted as it is
    assert [c.text for c in result.conditions] == ['if status == SEE_OTHER and method != "HEAD":']
    assert [q.text for q in result.quoted] == ['headers.pop("Authorization", None)']
    for q in [*result.conditions, *result.quoted]:
        assert file_line(tmp_path / "repo", q) == q.text
    [condition], [pop] = result.conditions, result.quoted
    # a condition is quoted with what it does, both verbatim, cited as one range
    assert condition.then == 'method = "GET"' and condition.location() == f"web/redirects.py:{condition.line}-{condition.line + 1}"
    assert (tmp_path / "repo" / "web/redirects.py").read_text().splitlines()[condition.then_line - 1].strip() == condition.then
    assert ('- When `status` equals `SEE_OTHER` and `method` is not `"HEAD"`, it sets `method` to `"GET"`. — '
            f'{condition.location()} (in `web.redirects.next_method`): '
            f'`if status == SEE_OTHER and method != "HEAD":` → `method = "GET"`') in result.answer
    assert f'- {pop.location()} (in `web.redirects.build_redirect`): `headers.pop("Authorization", None)`' in result.answer
    assert "quoted by moot from the files" in result.answer and "How it decides" in result.answer
    assert result.stated_conditions() and result.stated_conditions()[0].startswith("- When `status` equals")
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.results["line-picker"]["status"] == "completed"
    assert "line-picker" in record.usage_by_agent


def test_a_picker_that_breaks_its_schema_adds_nothing(tmp_path: Path) -> None:
    model = FunctionModel(by_agent({"single-agent": "`build_redirect` builds the new request.",
                                    "line-picker": {"lines": []}}))  # refused, asked again, refused
    team = team_for(tmp_path, model)
    try:
        result = team.ask_sync(QUESTION, mode="single")
    finally:
        team.close()
    assert result.quoted == [] and "Lines of the source" not in result.answer
    assert len(model.requests_from("line-picker")) == 2


def test_a_spent_budget_asks_no_picker(tmp_path: Path) -> None:
    model = FunctionModel(by_agent({"single-agent": "`build_redirect` builds the new request."}))
    team = team_for(tmp_path, model, max_calls=1)
    try:
        result = team.ask_sync(QUESTION, mode="single")  # a picker request would fail the test
    finally:
        team.close()
    assert result.quoted == []
    assert result.answer.startswith("`build_redirect` builds the new request.")


# ------------------------------------------------------------------ what the picker reads


def test_the_picker_reads_each_definitions_lines_together_under_one_heading() -> None:
    ranked = [CodeLine(path="a.py", line=9, text="x = 9", symbol="a.f"),
              CodeLine(path="b.py", line=3, text="if y:", then="return 1", then_line=4, symbol="b.g", kind="if"),
              CodeLine(path="a.py", line=2, text="raise E()", symbol="a.f", kind="raise"),
              CodeLine(path="b.py", line=7, text="z = 1", symbol="b.g")]
    shown = grouped(ranked)
    # each definition's lines in the ranking's order, the definitions in the order of their best line
    assert [(c.symbol, c.line) for c in shown] == [("a.f", 9), ("a.f", 2), ("b.g", 3), ("b.g", 7)]
    assert grouped(shown) == shown
    task = picker_task("How does it fail?", shown, how=True)
    assert task.splitlines()[3:] == [
        "In `a.f` (a.py):", "1. `x = 9`", "2. `raise E()`",
        "In `b.g` (b.py):", "3. [condition] `if y:` → `return 1`", "4. `z = 1`", "",
        "Give the numbers of the conditions that decide the answer (marked [condition]), then of any other lines that show it."]
    # the numbers the model answers with are the shown order's (in the ranking's order 1 and 2
    # would be a.py:9 and b.py:3)
    assert [(c.path, c.line) for c in chosen(shown, QuotePick(lines=[1, 2]))] == [("a.py", 2), ("a.py", 9)]


MANY_CHECKS = '"""Limits."""\n\n\ndef check_limits(value):\n    """Check a value against every limit."""\n' + "".join(
    f"    if value == {n}:\n        raise ValueError('limit {n}')\n" for n in range(1, 31)) + "    return value\n"


def test_in_multi_mode_each_picker_is_shown_at_most_twenty_lines(tmp_path: Path) -> None:
    shown: list[int] = []

    def pick(request: ModelRequest) -> dict:
        numbers = re.findall(r"^(\d+)\. ", str(request.messages[-1].content), re.M)
        shown.append(len(numbers))
        return {"conditions": [1], "lines": []}

    plan = {"sub_questions": [{"question": "How does check_limits decide a value fails?"},
                              {"question": "Which limit does check_limits raise for a value?"}]}
    repo = write_repo(tmp_path / "repo", {"lim/limits.py": MANY_CHECKS})
    model = FunctionModel(by_agent({"planner": plan, "synthesizer": "`check_limits` raises for each limit.",
                                    "verifier": {"verdicts": []}, "line-picker": pick, "single-agent": "It raises.",
                                    "researcher": {"symbols": ["lim.limits.check_limits"], "findings": [],
                                                   "coverage_note": "", "sufficient": True}}))
    team = ResearchTeam(repo, model=model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig())
    try:
        team.ask_sync("How does check_limits decide when a value fails?", mode="multi")
        multi = list(shown)
        shown.clear()
        team.ask_sync("How does check_limits decide when a value fails?", mode="single")
    finally:
        team.close()
    assert multi and all(n <= OFFERED_PER_SUB_QUESTION for n in multi)
    assert shown and shown[0] > OFFERED_PER_SUB_QUESTION  # one list, up to forty lines


def test_when_the_ranking_chooses_it_quotes_more_lines_and_the_answer_says_so(tmp_path: Path) -> None:
    # No picker's schema bounds the ranking's choice, so it quotes more than a picker may pick;
    # and the answer names who chose: "chosen by the model" over a ranking's lines was untrue.
    plan = {"sub_questions": [{"question": "How does check_limits decide a value fails?"},
                              {"question": "Which limit does check_limits raise for a value?"}]}
    repo = write_repo(tmp_path / "repo", {"lim/limits.py": MANY_CHECKS})
    model = FunctionModel(by_agent({"planner": plan, "synthesizer": "`check_limits` raises for each limit.",
                                    "verifier": {"verdicts": []}, "single-agent": "It raises.",
                                    "researcher": {"symbols": ["lim.limits.check_limits"], "findings": [],
                                                   "coverage_note": "", "sufficient": True}}))
    team = ResearchTeam(repo, model=model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig(line_choice="ranking"))
    try:
        single = team.ask_sync("How does check_limits decide when a value fails?", mode="single")
        multi = team.ask_sync("How does check_limits decide when a value fails?", mode="multi")
    finally:
        team.close()
    assert not model.requests_from("line-picker")
    assert MAX_PICKED < len([*single.conditions, *single.quoted]) == RANKED_MAX
    # the question as asked (its anchor) and two sub-questions, all over one definition: each
    # list quotes what an earlier one did not lead with
    assert len([*multi.conditions, *multi.quoted]) == 3 * RANKED_PER_SUB_QUESTION
    for result in (single, multi):
        assert "How it decides (conditions chosen by moot's ranking" in result.answer
        assert "chosen by the model" not in result.answer
    lines = quote_section(single.conditions[:1], chosen_by="ranking")
    assert lines.startswith("Lines of the source that answer it (chosen by moot's ranking, quoted by moot")


def test_a_chosen_condition_is_stated_in_words_whatever_the_question_is_worded(tmp_path: Path) -> None:
    # A question can ask how without any of the words `asks_how` reads; such a question's answer
    # quoted the deciding conditions as bare code, with no words and no section.
    question = "What exactly makes check_limits refuse a value?"
    assert not asks_how(question)
    repo = write_repo(tmp_path / "repo", {"lim/limits.py": MANY_CHECKS})
    model = FunctionModel(by_agent({"single-agent": "It raises."}))
    team = ResearchTeam(repo, model=model, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db",
                        config=ResearchConfig(line_choice="ranking"))
    try:
        result = team.ask_sync(question, mode="single")
    finally:
        team.close()
    assert result.conditions and all(c.is_condition() for c in result.conditions)
    assert not any(c.is_condition() for c in result.quoted)
    assert "How it decides (conditions chosen by moot's ranking" in result.answer
    assert "- When `value` equals `1`, it raises `ValueError`." in result.answer


BACKOFF = '''"""Waits."""


class wait_exponential:
    """Wait longer after each attempt."""

    def __init__(self, multiplier=1, low=0, high=10):
        self.multiplier = multiplier
        self.low = low
        self.high = high

    def describe(self):
        return f"waits at least {self.low}"

    def __call__(self, attempt):
        delay = self.multiplier * 2 ** (attempt - 1)
        if delay < self.low:
            return self.low
        return max(self.low, min(delay, self.high))
'''


def test_a_chosen_class_is_read_by_the_methods_that_match_the_question(tmp_path: Path) -> None:
    for built in index_of(write_repo(tmp_path / "repo", {"retry/wait.py": BACKOFF}), tmp_path):
        classes = resolve(built, ["retry.wait.wait_exponential"])
        lines = candidate_lines(built, "How is the delay computed from the attempt and kept between low and high?", classes)
        by_text = {c.text: c for c in lines}
        # what the question asks is in `__call__`, offered as its line (with its condition), not
        # as a line of the class's head, which in a class this short spans the methods too
        assert by_text["return max(self.low, min(delay, self.high))"].symbol == "retry.wait.wait_exponential.__call__"
        assert by_text["if delay < self.low:"].is_condition()
        # two methods, the best for the question: `describe` shares a word, but fewer
        assert {c.symbol for c in lines} >= {"retry.wait.wait_exponential.__call__", "retry.wait.wait_exponential.__init__"}
        assert "retry.wait.wait_exponential.describe" not in {c.symbol for c in lines}


COUNTER = '''class Counter:
    def __init__(self):
        self._spare = None

    def take(self, rows):
        if self._spare is not None:
            number = self._spare
            self._spare = number + 1
            return number
        highest = max(rows)
        number = highest + 1
        self._spare = number + 1
        return number
'''


def test_a_decision_is_offered_for_the_steps_its_words_state(tmp_path: Path) -> None:
    """The way through a definition ends on a `return` that holds none of the question's words;
    the steps before it (stated in its words) do, and so it is offered."""
    for built in index_of(write_repo(tmp_path / "repo", {"ids/counter.py": COUNTER}), tmp_path):
        lines = candidate_lines(built, "How is the highest row used to pick the next one?",
                                resolve(built, ["ids.counter.Counter.take"]))
        by_line = {c.line: c for c in lines}
        assert by_line[13].text == "return number" and by_line[13].kind == "return"
        assert by_line[13].words == ("It sets `highest` to `max(rows)`, sets `number` to `highest + 1`, "
                                     "sets `self._spare` to `number + 1`, then it returns `number`.")
        assert by_line[6].words.endswith("sets `self._spare` to `number + 1`, then it returns `number`.")
        # quoted, the exit says what it returns after; one that states nothing more is quoted alone
        section = quote_section([by_line[11], by_line[13]]).splitlines()
        assert section[1] == "- ids/counter.py:11 (in `ids.counter.Counter.take`): `number = highest + 1`"
        assert section[2].startswith("- ids/counter.py:13 (in `ids.counter.Counter.take`): `return number` — It sets `highest`")
        # a condition quoted among the lines (a question that does not ask how) has its branch's
        # later steps in words: its quote shows only the first
        condition = quote_section([by_line[6]]).splitlines()[1]
        assert condition.endswith("`number = self._spare` — When `self._spare` is not `None`, it sets `number` to "
                                  "`self._spare`, sets `self._spare` to `number + 1`, then it returns `number`.")


STAMPER = '''class Stamper:
    def check(self, value):
        if not value:
            raise ValueError("empty")
        return self.split(value)

    def try_keys(self, value):
        for key in reversed(self.keys):
            if self.matches(key, value):
                return True
        return False

    def describe(self):
        return "a stamper"
'''


def test_a_chosen_methods_siblings_are_read_for_the_questions_words(tmp_path: Path) -> None:
    """How a class decides is often split across its methods: the keys are tried in a sibling
    of the chosen method, and its lines are offered when they hold the question's words."""
    for built in index_of(write_repo(tmp_path / "repo", {"stamps/stamper.py": STAMPER}), tmp_path):
        lines = candidate_lines(built, "In what order are the keys tried when a value is checked?",
                                resolve(built, ["stamps.stamper.Stamper.check"]))
        by_text = {c.text: c for c in lines}
        assert by_text["for key in reversed(self.keys):"].symbol == "stamps.stamper.Stamper.try_keys"
        # a sibling without the question's words is not read
        assert "stamps.stamper.Stamper.describe" not in {c.symbol for c in lines}


NESTING = """var defaults = {
    maxNesting: 5,
    separator: ';',
    keepEmpty: false
};

function spreadLevels(text, opts) {
    var options = opts || defaults;
    if (options.maxNesting > 0) {
        return split(text, options);
    }
    return text;
}

module.exports = spreadLevels;
"""


def test_the_entries_of_a_defaults_object_written_over_several_lines_are_offered(tmp_path: Path) -> None:
    """A module's defaults object holds its defaults one entry a line, below the line that
    names it: each entry is offered like the assignment itself, and the literal ends where its
    brackets close."""
    for built in index_of(write_repo(tmp_path / "repo", {"lib/spread.js": NESTING}), tmp_path):
        lines = candidate_lines(built, "How deep may the nesting go by default, and what separator is used?",
                                resolve(built, ["spreadLevels"]))
        by_text = {c.text: c for c in lines}
        assert by_text["maxNesting: 5,"].line == 2 and by_text["maxNesting: 5,"].symbol == by_text["var defaults = {"].symbol
        assert "separator: ';'," in by_text


def test_a_sub_questions_lines_are_gathered_by_the_whole_questions_words_too(tmp_path: Path) -> None:
    shown: list[str] = []

    def pick(request: ModelRequest) -> dict:
        shown.append(str(request.messages[-1].content))
        return {"lines": [1]}

    # The planner's paraphrase drops the words the deciding line reads ("Authorization", "header").
    plan = {"sub_questions": [{"question": "Which function builds the new request?"},
                              {"question": "Where is the new request made?"}]}
    model = FunctionModel(by_agent({"planner": plan, "synthesizer": "`build_redirect` builds it.",
                                    "verifier": {"verdicts": []}, "line-picker": pick,
                                    "researcher": {"symbols": ["web.redirects.build_redirect"], "findings": [],
                                                   "coverage_note": "", "sufficient": True}}))
    team = ResearchTeam(make_repo(tmp_path / "repo"), model=model, store=RunStore(tmp_path / "runs.db"),
                        db_path=tmp_path / "index.db", config=ResearchConfig())
    try:
        result = team.ask_sync("Is the Authorization header kept on the new request of a redirect?", mode="multi")
    finally:
        team.close()
    assert shown and any('headers.pop("Authorization", None)' in task for task in shown)
    assert "web/redirects.py:" in result.answer
