"""Where a researcher starts reading: the code a question writes but the repository does not
define (an option's name, an attribute), and search hits that are code rather than docs.

From the development sets' answers (2026-12-05): asked what an argument parser gives when "the
same option appears more than once … with the duplicate-arguments-array setting turned off", the
three seeded search hits were all sections of the README, so no definition was resolved; asked
how ``qs.parse`` splits a string, the search found the README, two test files and the library's
file as a whole, and the researcher was offered nothing of the library. The repository here is
written by the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.codeindex import CodeIndex
from moot.teams.research.codelines import candidate_lines
from moot.teams.research.models import SubQuestion
from moot.teams.research.researcher import offered_symbols, seed_findings
from moot.teams.research.resolve import resolve, written_chains, written_definitions, written_uses
from test_research_support import index_of, write_repo

PARSER = """'use strict'

function parse (args, options) {
  const configuration = Object.assign({
    'combine-arrays': false,
    'duplicate-arguments-array': true
  }, options.configuration)
  const argv = {}

  function setKey (obj, key, value) {
    if (configuration['duplicate-arguments-array'] === false) {
      obj[key] = value
    } else if (Array.isArray(obj[key])) {
      obj[key].push(value)
    } else if (obj[key] !== undefined) {
      obj[key] = [obj[key], value]
    } else {
      obj[key] = value
    }
  }

  function applyEnvVars (env) {
    const prefix = options.envPrefix
    for (const name of Object.keys(env)) {
      if (name.startsWith(prefix)) setKey(argv, name.slice(prefix.length), env[name])
    }
  }

  for (let i = 0; i < args.length; i++) {
    setKey(argv, args[i], args[i + 1])
  }
  applyEnvVars(options.env || {})
  return argv
}

function splitOnce (text, separator) {
  if (typeof text !== 'string') throw new TypeError('text must be a string')
  const at = text.indexOf(separator)
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)]
}

module.exports = parse
module.exports.splitOnce = splitOnce
"""

README = """# argparse-lite

## Repeated options

When the same option appears more than once its values are collected into an array, unless the
duplicate-arguments-array setting is turned off: then the last value wins.

## Repeated options, again

The same option appearing more than once again: more prose about repeated options appearing.
"""

TEST = """const parse = require('../lib/parser')

function checkRepeatedOptions () {
  // the same option appears more than once
  const argv = parse(['--foo', '1', '--foo', '2'], {})
  if (argv.foo.length !== 2) throw new Error('the same option appears more than once')
}
"""


@pytest.fixture
def index(tmp_path: Path) -> Iterator[CodeIndex]:
    repo = write_repo(tmp_path / "repo", {"lib/parser.js": PARSER, "README.md": README, "test/parser.test.js": TEST})
    yield from index_of(repo, tmp_path)


def test_the_index_finds_where_code_writes_a_name(index: CodeIndex) -> None:
    quoted = index.occurrences("duplicate-arguments-array", quoted=True)
    assert [line for _, line in quoted] == [6, 11] and {path for path, _ in quoted} == {"lib/parser.js"}
    # the README says it too, but prose is not code; a word inside a longer name is no use of it
    assert index.occurrences("prefix") == [("lib/parser.js", 23), ("lib/parser.js", 25)]
    assert index.occurrences("arguments") == []


def test_a_setting_the_question_writes_leads_to_the_definition_that_reads_it(index: CodeIndex) -> None:
    question = ("What do I get when the same option appears more than once, like `--foo 1 --foo 2`, "
                "with the duplicate-arguments-array setting turned off?")
    # written as a string in two definitions: the one that uses it, then the one that sets it
    assert written_uses(index, [], question) == ["lib.parser.parse.setKey", "lib.parser.parse"]
    assert written_definitions(index, question)[0] == "lib.parser.parse.setKey"
    # an attribute the repository does not define: the definition whose body reads it
    assert written_definitions(index, "Where is `options.envPrefix` applied?") == ["lib.parser.parse.applyEnvVars"]
    # a name of the repository's own definitions is the definition, not its uses
    assert written_definitions(index, "What does splitOnce('a=b', '=') return?") == ["lib.parser.splitOnce"]
    # a word that only the docs write, or a name used all over, leads nowhere
    assert written_uses(index, ["combineArrays"], "Is step-by-step-parsing done?") == []


def test_a_name_used_in_many_definitions_says_nothing_about_where_to_look(tmp_path: Path) -> None:
    files = {f"lib/m{k}.js": f"function f{k} (o) {{\n  return o.verbose\n}}\n" for k in range(6)}
    with CodeIndex.build(write_repo(tmp_path / "many", files), db_path=tmp_path / "many.db") as many:
        assert len(many.occurrences("verbose")) == 6
        assert written_uses(many, ["verbose"]) == []


def test_seeded_hits_read_the_code_before_more_docs_and_tests(index: CodeIndex) -> None:
    sub = SubQuestion(question="What happens when the same option appears more than once?")
    # the search ranks two README sections and the test first, then the library's file as a whole
    assert [h.path for h in index.search(sub.question, limit=4)] == [
        "README.md", "test/parser.test.js", "README.md", "lib/parser.js"]
    seeded = seed_findings(index, sub, limit=6)
    # one section of the docs; the hits on definitions; the file matched as a whole gives the
    # definition in it that the words match best (not the whole file), after those; the test last
    assert [f.result_summary for f in seeded] == [
        "README.md:8-10 text README.md § Repeated options, again",
        "lib/parser.js:3-34 function lib.parser.parse",
        "lib/parser.js:22-27 function lib.parser.parse.applyEnvVars",
        "lib/parser.js:36-40 function lib.parser.splitOnce (the best match in lib/parser.js, which the search found)",
        "test/parser.test.js:3-7 function test.parser.test.checkRepeatedOptions",
        # a second docs section only fills what the code leaves
        "README.md:1-7 text README.md § argparse-lite",
    ]
    assert [f.file_path for f in seed_findings(index, sub, limit=3)] == ["README.md", "lib/parser.js", "lib/parser.js"]
    # the one-call baseline shows the search's own hits, in its order
    assert [f.file_path for f in seed_findings(index, sub, limit=3, plain=True)] == [
        "README.md", "test/parser.test.js", "README.md"]


def test_a_definition_found_through_a_use_is_not_said_to_be_named(index: CodeIndex) -> None:
    question = "What happens with --dry-run set, or the duplicate-arguments-array setting turned off?"
    written = written_definitions(index, question)
    assert written[0] == "lib.parser.parse.setKey"
    [first, *_] = seed_findings(index, SubQuestion(question=question), written=written)
    assert first.result_summary.endswith("(uses code the question names)")
    named = seed_findings(index, SubQuestion(question="What does splitOnce('a=b', '=') return?"),
                          written=["lib.parser.splitOnce"])
    assert named[0].result_summary.endswith("(named in the question)")


def test_an_option_written_with_its_dashes_is_found_where_the_code_names_it(tmp_path: Path) -> None:
    source = "function cli (parser) {\n  parser.option('--dry-run', 'show what would change')\n}\n"
    with CodeIndex.build(write_repo(tmp_path / "opts", {"lib/cli.js": source}), db_path=tmp_path / "opts.db") as opts:
        assert opts.occurrences("dry-run", quoted=True) == [("lib/cli.js", 2)]
        assert written_definitions(opts, "What does `--dry-run` change?") == ["lib.cli.cli"]
        assert written_chains("What does `--dry-run` change?") == []  # not the names `dry` and `run`
        assert written_definitions(opts, "Is the cli thread-safe?") == []


def test_a_researcher_is_offered_what_the_named_code_calls_before_what_the_search_found(index: CodeIndex) -> None:
    question = "What does parse(['--foo', '1', '--foo', '2'], {}) return for the same option written twice?"
    written = written_definitions(index, question)
    assert written == ["lib.parser.parse"]
    seeded = seed_findings(index, SubQuestion(question=question), written=written)
    offered = offered_symbols(index, question, written, seeded)
    # the function the user named, then the functions it hands the work to, then the rest
    assert offered[:3] == ["lib.parser.parse", "lib.parser.parse.setKey", "lib.parser.parse.applyEnvVars"] or \
        offered[:3] == ["lib.parser.parse", "lib.parser.parse.applyEnvVars", "lib.parser.parse.setKey"]
    assert "lib.parser.splitOnce" not in offered[:3]


def test_a_class_from_elsewhere_that_the_question_names_leads_nowhere(index: CodeIndex) -> None:
    # a builtin exception the repository throws in one place: where it is thrown is no answer
    assert index.occurrences("TypeError") == [("lib/parser.js", 37)]
    assert written_uses(index, ["TypeError"]) == []
    assert written_definitions(index, "Why does my call raise a `TypeError` and not a ValueError?") == []


def test_a_long_function_is_read_by_its_own_lines_after_its_nested_helpers(tmp_path: Path) -> None:
    helpers = "".join(f"  function helper{k} (x) {{\n" + "    x = x + 1\n" * 12 + "    return x\n  }\n" for k in range(10))
    source = ("function run (args, flags) {\n" + helpers
              + "  const next = args[1]\n"
              + "  if (next !== undefined && !flags.bools.includes(args[0])) {\n    return next\n  }\n"
              + "  return true\n}\n")
    with CodeIndex.build(write_repo(tmp_path / "long", {"lib/run.js": source}), db_path=tmp_path / "long.db") as long:
        [run] = resolve(long, ["lib.run.run"])
        assert run.end_line - run.start_line > 140
        decides = source.splitlines().index("  if (next !== undefined && !flags.bools.includes(args[0])) {") + 1
        lines = candidate_lines(long, "When is the next argument taken as the flag's value?", [run])
        # its first 120 lines are all helpers' (definitions of their own); its own `if` comes after
        assert decides in [line.line for line in lines if line.symbol == "lib.run.run"]
