"""What the research team offers the model to choose from, and what Python states for it.

From the eval's per-question results (httpx and click, embedded model): the index section said
`ContentDecoder.decode` "is called by `BasicAuth._build_auth_header`" (a ``bytes.decode`` call),
cited callers in files the question was not about, quoted a docstring example
(``…@müller.de:1234/…``) that reads as a citation, resolved ``click.termui.prompt`` to its
first ``@overload`` stub, and listed a module's smallest methods (``__eq__``, ``__repr__``) first
among the symbols a researcher could nominate. The repository here is written by the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.codeindex import CodeIndex
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent
from moot.runtime import RunStore
from moot.teams.research import MultiAgentResult, ResearchConfig, ResearchTeam
from moot.teams.research.quotes import PICKED_PER_SUB_QUESTION, candidate_lines
from moot.teams.research.relevance import rank_symbols
from moot.teams.research.resolve import (
    asks_callers,
    best_at,
    candidates,
    index_section,
    resolve,
    summary_docstring,
    written_chains,
    written_definitions,
    written_names,
)
from moot.models.toolchoice import AFTER_TOOL_RESULTS
from moot.teams.research.synthesizer import without_echoes, without_repeats
from test_research_support import first_lines, first_offered, index_of, write_repo

DECODERS = '''"""Content decoders."""
import zlib

DEFAULT_CHUNK_SIZE = 65536
SUPPORTED_ENCODINGS = ("gzip", "identity")


class Decoder:
    def decode(self, data):
        raise NotImplementedError()

    def __repr__(self):
        return "Decoder()"


class GzipDecoder(Decoder):
    """Decodes gzip bodies."""

    def __init__(self):
        self.decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)

    def decode(self, data):
        try:
            return self.decompressor.decompress(data)
        except zlib.error as exc:
            raise DecodingError(str(exc)) from exc


class DecodingError(Exception):
    """Decoding failed."""


def make_decoder(encoding):
    """The decoder for a Content-Encoding value."""
    return GzipDecoder() if encoding == "gzip" else Decoder()


def decode_all(chunks, encoding):
    decoder = make_decoder(encoding)
    return b"".join(decoder.decode(c) for c in chunks)
'''

AUTH = '''"""Auth headers."""
import base64


def basic_header(user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return "Basic " + token
'''

MESSAGES = '''"""Responses and redirects."""
from typing import overload

from web.decoders import make_decoder


class Response:
    """url = Response("https://user@example.org:8080/path")"""

    def __init__(self, body, encoding):
        self.body = body
        self.decoder = make_decoder(encoding)

    def text(self):
        return self.decoder.decode(self.body)


def redirect_headers(headers, same_origin, upgrade):
    """The headers to send on a redirect."""
    if not same_origin:
        if not upgrade:
            headers.pop("Authorization", None)
    return headers


@overload
def parse(value: int) -> int: ...
@overload
def parse(value: str) -> str: ...
def parse(value):
    """Parse a value."""
    if isinstance(value, str):
        return value.strip()
    return value
'''


def make_repo(root: Path) -> Path:
    return write_repo(root, {"web/decoders.py": DECODERS, "web/auth.py": AUTH, "web/messages.py": MESSAGES})


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CodeIndex]:
    yield from index_of(make_repo(tmp_path / "repo"), tmp_path)


def ask(tmp_path: Path, model: FunctionModel, question: str, *, mode: str) -> MultiAgentResult:
    """The team on a fresh copy of the repository, asked once."""
    team = ResearchTeam(make_repo(tmp_path / "repo"), model=model, store=RunStore(tmp_path / "runs.db"),
                        db_path=tmp_path / "index.db", config=ResearchConfig())
    try:
        return team.ask_sync(question, mode=mode)  # type: ignore[arg-type]
    finally:
        team.close()


def line_of(index: CodeIndex, path: str, text: str) -> int:
    return next(n for n, line in enumerate((index.root / path).read_text().splitlines(), 1) if text in line)


# ------------------------------------------------------------------ callers, checked on the source line


def test_a_method_name_others_share_lists_no_callers_and_says_why(index: CodeIndex) -> None:
    [gzip] = resolve(index, ["web.decoders.GzipDecoder.decode"])
    # `decoder.decode(c)`, `self.decoder.decode(...)` and `.decode("ascii")` on bytes all call "a decode"
    assert gzip.callers == []
    assert "2 definitions in the repository are named `decode`" in gzip.callers_unknown
    statement = gzip.statement()
    assert "auth.py" not in statement and "Its callers are not listed: 2 definitions" in statement


def test_a_constructor_is_called_where_its_class_is(index: CodeIndex) -> None:
    [init] = resolve(index, ["web.decoders.GzipDecoder.__init__"])
    assert [(c.caller, c.location()) for c in init.callers] == [
        ("web.decoders.make_decoder", f"web/decoders.py:{line_of(index, 'web/decoders.py', 'return GzipDecoder()')}")]


def test_a_plain_function_keeps_its_callers(index: CodeIndex) -> None:
    [make] = resolve(index, ["make_decoder"])
    assert {c.caller for c in make.callers} == {"web.decoders.decode_all", "web.messages.Response.__init__"}


def test_an_overloaded_function_resolves_to_its_implementation(index: CodeIndex) -> None:
    [parse] = resolve(index, ["parse"])
    assert parse.start_line == line_of(index, "web/messages.py", "def parse(value):")
    assert parse.docstring == "Parse a value."


def test_a_docstring_example_is_not_quoted_as_a_summary(index: CodeIndex) -> None:
    [response] = resolve(index, ["web.messages.Response"])
    assert response.docstring == ""
    assert "8080" not in index_section([response])
    assert summary_docstring('url = httpx.URL("https://a@b.de:1234/x")') == ""
    assert summary_docstring(">>> parse(1)") == ""
    assert summary_docstring("Parse a value.") == "Parse a value."


# ------------------------------------------------------------------ callers cited only when asked


def test_callers_in_other_files_are_cited_only_when_the_question_asks(index: CodeIndex) -> None:
    [make] = resolve(index, ["make_decoder"])
    asked = index_section([make], question="Which function calls make_decoder?")
    assert "web/messages.py:" in asked and "web/decoders.py:" in asked
    not_asked = index_section([make], question="How are gzip bodies decoded?")
    # the caller in its own file is the code around it; the other file's is counted, not cited
    assert "`web.decoders.decode_all` (web/decoders.py:" in not_asked
    assert "web/messages.py" not in not_asked and "and 1 more" in not_asked
    assert asks_callers("which function calls it?") and asks_callers("Where is parse invoked?")
    assert not asks_callers("How can code that uses httpx be tested?")


# ------------------------------------------------------------------ what is offered first


def test_a_module_hit_offers_its_relevant_definitions_first(index: CodeIndex) -> None:
    question = "How are gzip bodies decoded, and which error is raised?"
    names = candidates(index, [("web/decoders.py", 1, 45)], question=question)
    assert names[0].startswith("web.decoders.GzipDecoder")
    assert names.index("web.decoders.Decoder.__repr__") > names.index("web.decoders.GzipDecoder.decode")
    assert best_at(index, question, "web/decoders.py", 1, 45) == names[0]
    # without a question the old order stays: innermost definitions first
    at = line_of(index, "web/decoders.py", "raise NotImplementedError")
    assert candidates(index, [("web/decoders.py", at - 1, at)]) == ["web.decoders.Decoder.decode", "web.decoders.Decoder"]
    assert rank_symbols(index, "", ["b", "a"]) == ["b", "a"]


def test_a_nested_condition_is_quoted_down_to_what_it_does(index: CodeIndex) -> None:
    [headers] = resolve(index, ["redirect_headers"])
    lines = candidate_lines(index, "What happens to the Authorization header on a redirect?", [headers])
    [condition] = [c for c in lines if c.text == "if not same_origin:"]
    assert condition.quoted() == '`if not same_origin:` → `if not upgrade:` → `headers.pop("Authorization", None)`'
    pop = line_of(index, "web/messages.py", "headers.pop(")
    assert condition.location() == f"web/messages.py:{pop - 2}-{pop}"
    assert lines[0] is condition  # the line that decides comes before the docstring and the return
    assert all(c.text != 'headers.pop("Authorization", None)' for c in lines)  # shown once, with its condition


def test_a_raise_in_the_callee_ranks_above_a_line_that_hands_work_on(index: CodeIndex) -> None:
    resolved = resolve(index, ["decode_all", "web.decoders.GzipDecoder.decode"])
    lines = candidate_lines(index, "Which error is raised when decoding fails?", resolved)
    texts = [c.text for c in lines]
    assert texts.index("except zlib.error as exc:") < texts.index("decoder = make_decoder(encoding)")


def test_a_chosen_definition_offers_its_deciding_lines_without_the_question_words(index: CodeIndex) -> None:
    # "How is a gzip body read?" shares no word with `except zlib.error as exc:`, which decides
    # what happens when it fails; the chosen definition's except and raise are offered anyway
    [gzip] = resolve(index, ["web.decoders.GzipDecoder.decode"])
    texts = [c.text for c in candidate_lines(index, "How is a gzip body read?", [gzip])]
    assert "except zlib.error as exc:" in texts
    # a definition only reached as a callee still needs a word of the question
    [decode_all] = resolve(index, ["decode_all"])
    assert all("NotImplementedError" not in t for t in
               (c.text for c in candidate_lines(index, "How are chunks joined?", [decode_all])))


def test_an_abstract_stub_ranks_below_the_definition_that_does_the_work(index: CodeIndex) -> None:
    question = "How is a body decoded?"
    ranked = rank_symbols(index, question, ["web.decoders.Decoder.decode", "web.decoders.GzipDecoder.decode"])
    assert ranked[0] == "web.decoders.GzipDecoder.decode"  # `raise NotImplementedError()` says nothing


def test_of_two_definitions_using_the_question_words_the_one_that_branches_on_them_ranks_first(tmp_path: Path) -> None:
    # both bodies hold "quill" and a form of "spool"; only `settle` decides on them, and the
    # search (whose order a tie keeps) listed the one that merely reports first
    repo = write_repo(tmp_path / "repo", {"quills.py": (
        "import logging\n\nlogger = logging.getLogger(__name__)\nLIMIT = 40\n\n\n"
        "def report(quill):\n    logger.info('quill spooled: %s', quill)\n\n\n"
        "def settle(quill):\n    if quill.bobbins > LIMIT:\n        quill.spool()\n")})
    with CodeIndex.build(repo, db_path=tmp_path / "index.db") as index:
        names = ["quills.report", "quills.settle"]
        assert rank_symbols(index, "When is a quill spooled?", names) == ["quills.settle", "quills.report"]
        # a question word that no decision holds adds nothing: the search's order stays
        assert rank_symbols(index, "Which logger gets the quill?", names)[0] == "quills.report"


def test_the_module_constants_of_a_chosen_definition_are_offered(index: CodeIndex) -> None:
    # a module's defaults live outside every definition: no body that uses them is read
    [make] = resolve(index, ["make_decoder"])
    lines = candidate_lines(index, "Which encodings are supported, and what is the default chunk size?", [make])
    found = {c.text: c for c in lines}
    assert 'SUPPORTED_ENCODINGS = ("gzip", "identity")' in found and "DEFAULT_CHUNK_SIZE = 65536" in found
    assert found["DEFAULT_CHUNK_SIZE = 65536"].location() == f"web/decoders.py:{line_of(index, 'web/decoders.py', 'DEFAULT_CHUNK')}"
    assert found["DEFAULT_CHUNK_SIZE = 65536"].symbol == "web.decoders"
    assert all(not c.text.startswith("import") for c in lines)


def test_a_researcher_must_choose_at_least_one_offered_symbol() -> None:
    from pydantic import ValidationError

    from moot.teams.research.researcher import report_type

    schema = report_type(["a.f", "a.g"])
    assert schema.model_validate({"symbols": ["a.g"]}).symbols == ["a.g"]
    for bad in ({}, {"symbols": []}, {"symbols": ["a.h"]}):  # the 0.5B researchers answered [] on 4 of 6
        with pytest.raises(ValidationError):
            schema.model_validate(bad)
    assert report_type([]).model_validate({}).symbols == []  # nothing offered, nothing asked


# ------------------------------------------------------------------ the pickers in multi mode


def test_a_later_list_does_not_lead_with_what_an_earlier_list_leads_with() -> None:
    from moot.teams.research.quotes import CodeLine, led_elsewhere

    def line(n: int) -> CodeLine:
        return CodeLine(path="a.py", line=n, text=f"x = {n}", symbol="a.f")

    first, second = [line(1), line(2), line(3)], [line(2), line(1), line(4), line(5)]
    kept = led_elsewhere([first, second], 2)
    assert [c.line for c in kept[0]] == [1, 2, 3]
    assert [c.line for c in kept[1]] == [4, 5]  # 1 and 2 are the first list's first picks
    assert [c.line for c in led_elsewhere([first, second], 1)[1]] == [2, 4, 5]


def test_each_sub_question_picker_may_quote_four_lines(tmp_path: Path) -> None:
    limits: list[int] = []

    def pick(request: ModelRequest) -> dict:
        limits.append(request.output.json_schema["properties"]["lines"]["maxItems"])
        return first_lines(request, PICKED_PER_SUB_QUESTION)

    plan = {"sub_questions": [{"question": "How does the gzip decoder decode a body?"},
                              {"question": "What happens to the Authorization header on a redirect?"}]}
    looping = "Bodies are decoded by `GzipDecoder.decode`. " + "The decoder is made by `make_decoder`, which calls it. " * 30
    model = FunctionModel(by_agent({"planner": plan, "synthesizer": looping,
                                    "verifier": {"verdicts": []}, "line-picker": pick,
                                    **dict.fromkeys(("researcher-1", "researcher-2"), lambda r: {
                                        "symbols": first_offered(r.output.json_schema), "findings": [],
                                        "coverage_note": "", "sufficient": True})}))
    result = ask(tmp_path, model, "How are gzip bodies decoded, and what happens to the Authorization header?", mode="multi")
    assert result.mode == "multi" and limits == [PICKED_PER_SUB_QUESTION] * 2
    # the 0.5B synthesizer's loop is said once (click's prompt answer repeated one sentence 30 times)
    assert result.answer.count("The decoder is made by `make_decoder`, which calls it.") == 1
    assert len(result.quoted) > 2  # more than the two a picker got when eight were shared out
    # what the eval counts as checked statements: the index section's and the quoted lines
    assert result.verified_statements() == min(len(result.resolved), 6) + len(result.quoted) + len(result.conditions)


def test_a_repeated_sentence_is_said_once() -> None:
    loop = "The Abort function is called by prompt, which calls echo. "
    assert without_repeats("It asks. " + loop * 5 + "The Abort function is") == "It asks. " + loop.strip()
    # short items and numbering may recur: only sentences of four words or more are repeats
    assert without_repeats("1. Parse it.\n\n1. Parse it.") == "1. Parse it.\n\n1. Parse it."
    # a repeat the token limit cut right after a code name is a repeat too
    said = "The `knit` function is defined in the file and is called by the `knit` function in `lib/knit.js`."
    assert without_repeats(f"It knits. {said} {said} The `knit` function is defined in the file and is called by the `knit`") \
        == f"It knits. {said}"
    # a short sentence that happens to begin a longer one stays
    assert without_repeats("It returns `x` when it is set. It returns `x`") == "It returns `x` when it is set. It returns `x`"


def test_an_answer_that_gives_back_the_question_or_an_instruction_loses_those_sentences() -> None:
    question = "Which code calls Shelf.put, and when does it refuse an item instead of storing it?"
    echoed = ("The code calls Shelf.put, and when does it refuse an item instead of storing it? "
              "Use the result to answer the original question in words, or call another tool.\n"
              "Shelf.put returns false when the shelf is full (shelf.js:13).")
    assert without_echoes(echoed, question, (AFTER_TOOL_RESULTS,)) == "Shelf.put returns false when the shelf is full (shelf.js:13)."
    # an answer in the question's words is still an answer; a short sentence of the prompt's words stays
    kept = "Shelf.put refuses an item when the shelf is full. Call it again later."
    assert without_echoes(kept, question, (AFTER_TOOL_RESULTS,)) == kept


# ------------------------------------------------------------------ code the question writes


def test_code_names_are_read_from_the_question_by_their_form() -> None:
    assert written_names("Why does semver.satisfies('1.2.4-beta.1', '^1.2.3') return false?") == ["semver.satisfies"]
    # looked up whole, then by its tails, then by the class before the method
    assert written_chains("What does URLSafeTimedSerializer.loads(token) raise?") == [
        ["URLSafeTimedSerializer.loads", "loads", "URLSafeTimedSerializer"]]
    # a fluent chain names each of its parts; a decorator and a call inside it are names too
    assert written_names('If I register every().day.at("10:30").do(job) at 11:00') == ["every", "day", "at", "do"]
    assert written_names("@retry(stop=stop_after_attempt(3)) with reraise and a retry_error_callback") == [
        "retry", "stop_after_attempt", "retry_error_callback"]
    assert written_names("keys from envPrefix, a TTLCache and a CliRunner") == ["envPrefix", "TTLCache", "CliRunner"]
    # prose is not code: a capitalised word, a key written with one-letter names, "e.g.", a
    # plural acronym or one in brackets, a file, a host, an e-mail
    assert written_names("When the Client follows a redirect, e.g. a key like `a[N]=v`") == []
    assert written_names("Which option(s) take URLs or APIs from README.md, setup.py or Node.js, "
                         "https://example.com/x or ann@example.org?") == []
    assert written_names("Does response.json() decode it?") == ["response.json"]  # a call is code
    assert len(written_names(" ".join(f"`name_{n}`" for n in range(300)))) == 12  # a pasted traceback


def test_a_name_the_question_writes_is_resolved_only_where_the_repository_defines_it(index: CodeIndex) -> None:
    question = "Why does web.messages.redirect_headers(h, False, True) keep it, and is a ValueError or Response raised?"
    # the longest tail the index defines; a builtin and a capitalised prose word give nothing
    assert written_definitions(index, question) == ["web.messages.redirect_headers"]
    assert written_definitions(index, "How does `basic_header` encode, and what does make_decoder('gzip') give?") == [
        "web.auth.basic_header", "web.decoders.make_decoder"]
    # a dotted name is the definition whose qualified name ends with it, in its own case; a
    # plain name two classes define is neither, and an unknown method falls back to its class
    assert written_definitions(index, "What does GzipDecoder.decode(data) return?") == ["web.decoders.GzipDecoder.decode"]
    assert written_definitions(index, "What does `decode` return?") == []
    assert written_definitions(index, "What does `MAKE_DECODER` return?") == []
    assert written_definitions(index, "What does GzipDecoder.flush() do?") == ["web.decoders.GzipDecoder"]


def test_single_mode_starts_from_the_function_the_question_calls(tmp_path: Path) -> None:
    tasks: list[str] = []

    def single(request: ModelRequest) -> str:
        tasks.append(str(request.messages[-1].content))
        return "It joins the user and password."

    model = FunctionModel(by_agent({"single-agent": single, "line-picker": lambda r: first_lines(r, 2)}))
    result = ask(tmp_path, model, "What does basic_header('ann', '') send when the password is empty?", mode="single")
    # the definition is shown to the model before any search hit, and resolved first
    assert "web/auth.py:" in tasks[0].split("[2]")[0] and "(named in the question)" in tasks[0]
    assert result.resolved[0].qualified_name == "web.auth.basic_header"
    assert "`web.auth.basic_header` (function) is defined at web/auth.py:" in result.answer


def test_a_researcher_offers_and_resolves_the_code_its_sub_question_writes_first(tmp_path: Path) -> None:
    tasks: list[str] = []

    def research(request: ModelRequest) -> dict:
        tasks.append(str(request.messages[-1].content))
        # the 0.5B model's habit: the first symbol it is offered
        return {"symbols": first_offered(request.output.json_schema), "findings": [], "coverage_note": "",
                "sufficient": True}

    plan = {"sub_questions": [{"question": "What does basic_header('ann', '') put in the header?"},
                              {"question": "How are gzip bodies decoded?"}]}
    model = FunctionModel(by_agent({"planner": plan, "researcher-1": research, "researcher-2": research,
                                    "synthesizer": "It encodes them.",
                                    "verifier": {"verdicts": []}, "line-picker": lambda r: first_lines(r, 2)}))
    result = ask(tmp_path, model, "What does basic_header('ann', '') send, and how are gzip bodies decoded?", mode="multi")
    named = next(t for t in tasks if "basic_header('ann'" in t)
    assert named.index("(named in the question)") < named.index("[2]")  # shown before the search hits
    assert named.split("Symbols in these results: ")[1].startswith("web.auth.basic_header")
    [bundle] = [b for b in result.evidence if "basic_header" in b.sub_question]
    assert bundle.resolved[0].qualified_name == "web.auth.basic_header"
    assert all("(named in the question)" not in t for t in tasks if "gzip bodies" in t and "basic_header" not in t)


def test_a_scripts_callers_are_judged_by_its_own_languages_built_in_methods(tmp_path: Path) -> None:
    from moot.teams.research.resolve import resolve
    from test_research_support import index_of, write_repo

    repo = write_repo(tmp_path / "repo", {
        "lib/queue.js": "export class Queue {\n  remove(id) {\n    return this.items.delete(id);\n  }\n"
                         "  push(item) {\n    this.items.set(item.id, item);\n  }\n}\n",
        "lib/run.js": "import { Queue } from './queue.js';\nexport function drain(queue, done) {\n"
                       "  queue.remove(done.id);\n  queue.push(done.next);\n}\n",
    })
    for index in index_of(repo, tmp_path):
        remove, push = resolve(index, ["lib.queue.Queue.remove", "lib.queue.Queue.push"])
        # `remove` is no method of a script's built-in types: `queue.remove(` is this one's call
        assert [(c.caller, c.line) for c in remove.callers] == [("lib.run.drain", 3)]
        # `push` is an array's too: `queue.push(` alone does not show which one is called
        assert push.callers == [] and push.callers_unknown == "`push` is also a method of the language's built-in types"


def test_a_scripts_own_calls_and_calls_on_global_objects_are_told_apart(tmp_path: Path) -> None:
    from moot.teams.research.resolve import resolve
    from test_research_support import index_of, write_repo

    repo = write_repo(tmp_path / "repo", {
        "lib/cache.js": "export class Cache {\n  push(item) {\n    this.items.unshift(item);\n  }\n"
                        "  refill(items) {\n    for (const item of items) this.push(item);\n  }\n}\n",
        "lib/text.js": "export function parse(text) {\n  return text.split(',');\n}\n"
                       "export function load(raw) {\n  return JSON.parse(raw);\n}\n"
                       "export function read(raw) {\n  return parse(raw);\n}\n",
    })
    for index in index_of(repo, tmp_path):
        push, parse = resolve(index, ["lib.cache.Cache.push", "lib.text.parse"])
        # `this.push(` inside the class is the class's own call, built-in name or not
        assert [(c.caller, c.line) for c in push.callers] == [("lib.cache.Cache.refill", 6)]
        # `JSON.parse(` is the language's; only the plain call is the repository's `parse`
        assert [(c.caller, c.line) for c in parse.callers] == [("lib.text.read", 8)]


def test_multi_mode_keeps_what_the_whole_question_names_when_the_plan_paraphrases_it_away(tmp_path: Path) -> None:
    asked: list[str] = []

    def pick(request: ModelRequest) -> dict:
        asked.append(str(request.messages[-1].content))
        return first_lines(request, 2)

    # the 0.5B planner's paraphrases drop the name the user wrote, and its researchers follow them
    plan = {"sub_questions": [{"question": "How is a body decoded?"},
                              {"question": "What happens to the Authorization header on a redirect?"}]}
    research = {"symbols": ["web.auth.basic_header"], "findings": [], "coverage_note": "", "sufficient": True}
    model = FunctionModel(by_agent({"planner": plan, "synthesizer": "It decodes it.", "verifier": {"verdicts": []},
                                    "line-picker": pick, "researcher-1": research, "researcher-2": research}))
    question = "Which decoder does make_decoder('gzip') give, and what happens to the Authorization header?"
    result = ask(tmp_path, model, question, mode="multi")
    # the definition the question writes leads the index section, as single mode would resolve it
    assert result.resolved[0].qualified_name == "web.decoders.make_decoder"
    assert "`web.decoders.make_decoder` (function) is defined at web/decoders.py:" in result.answer
    # and its lines are offered for the question as the user asked it, beside each sub-question's
    [whole] = [task for task in asked if task.startswith(f"Question: {question}\n")]
    assert "In `web.decoders.make_decoder` (web/decoders.py):" in whole and len(asked) == 3


def test_the_question_is_anchored_on_the_first_search_hit_that_holds_code_not_on_a_docs_section(tmp_path: Path) -> None:
    from moot.teams.research.researcher import question_anchors

    # The README words the question's words more often than the code does, so a section of it
    # leads the search; a section defines nothing, and the run had no anchor from the search.
    repo = write_repo(tmp_path / "repo", {
        "README.md": "# Spool\n\n## Bobbins\n\nWhen the spool bobbin is full, the quill stops. The spool bobbin "
                     "limit decides when a full bobbin stops the quill, and a bobbin limit of 0 means no limit.\n",
        "spool/quill.py": "def knit_bobbin(turns, limit=0):\n"
                          "    if limit and turns >= limit:\n"
                          "        raise ValueError('the bobbin is full')\n"
                          "    return turns + 1\n",
    })
    question = "When does a full bobbin stop the quill, and what does the bobbin limit decide?"
    for index in index_of(repo, tmp_path):
        assert index.search(question, limit=1)[0].kind == "text"  # the docs lead the search
        written, located = question_anchors(index, question)
    assert written == [] and located == ["spool.quill.knit_bobbin"]
