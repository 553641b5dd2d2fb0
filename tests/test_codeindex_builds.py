"""What a published package ships beside its code: a minified bundle, declaration files, and the
same code twice (CommonJS and ES modules). The index and the research team's resolution read
the code that runs, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.codeindex import CodeIndex
from moot.codeindex.walk import is_declaration, is_minified
from moot.teams.research.relevance import rank_symbols
from moot.teams.research.resolve import candidates, drop_copies, resolve

# Six functions of a small library, written twice: as ES modules, and down-levelled to CommonJS
# (other text, the same names), as npm packages ship them.
ESM = """export function parseLevel(text) {
  if (text === "low") {
    return 1;
  }
  return text === "high" ? 3 : 2;
}

export function stockLevel(mill, day) {
  return parseLevel(mill.reports[day] ?? "low");
}

export function troutCount(lake) {
  return lake.counts.reduce((a, b) => a + b, 0);
}

export function lakeName(lake) {
  return lake.name ?? "Lake Mira";
}

export function millOpen(mill) {
  return mill.open === true;
}

export function summary(mill, lake) {
  return `${lakeName(lake)}: ${troutCount(lake)}`;
}
"""

CJS = """"use strict";
function parseLevel(text) {
  if (text === "low") {
    return 1;
  }
  return text === "high" ? 3 : 2;
}
exports.parseLevel = parseLevel;

function stockLevel(mill, day) {
  var _mill$reports$day;
  return parseLevel((_mill$reports$day = mill.reports[day]) !== null && _mill$reports$day !== void 0 ? _mill$reports$day : "low");
}
exports.stockLevel = stockLevel;

function troutCount(lake) {
  return lake.counts.reduce(function (a, b) { return a + b; }, 0);
}
exports.troutCount = troutCount;

function lakeName(lake) {
  var _lake$name;
  return (_lake$name = lake.name) !== null && _lake$name !== void 0 ? _lake$name : "Lake Mira";
}
exports.lakeName = lakeName;

function millOpen(mill) {
  return mill.open === true;
}
exports.millOpen = millOpen;

function summary(mill, lake) {
  return lakeName(lake) + ": " + troutCount(lake);
}
exports.summary = summary;
"""

DECLARATIONS = """/**
 * The stock level of the Ostby mill on one day, read from the mill's daily stock reports:
 * a low, medium or high stock level, as a number from 1 to 3.
 */
export interface StockReport {
  /** The day of the mill's stock report. */
  day: string;
  /** The stock level the mill reports that day. */
  level: string;
}
export declare function stockLevel(mill: Mill, day: string): number;
/** A mill and its daily stock level reports. */
export interface Mill {
  reports: Record<string, string>;
  open: boolean;
}
"""

# One line of 3,000 characters: a browser build.
MINIFIED = "!function(e){" + ";".join(f"function f{i}(a){{return a+{i}}}" for i in range(120)) + "}(this);\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "stock-levels"
    (root / "dist" / "esm").mkdir(parents=True)
    (root / "dist" / "cjs").mkdir(parents=True)
    (root / "dist" / "browser").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "stock-levels", "main": "dist/cjs/index.js", "module": "dist/esm/index.js"}')
    (root / "dist" / "esm" / "index.js").write_text(ESM)
    (root / "dist" / "cjs" / "index.js").write_text(CJS)
    (root / "dist" / "index.d.ts").write_text(DECLARATIONS)
    (root / "dist" / "browser" / "stock.umd.js").write_text(MINIFIED)
    (root / "dist" / "browser" / "stock.min.js").write_text("function a(){return 1}\n")
    return root


@pytest.fixture
def index(package: Path, tmp_path: Path) -> CodeIndex:
    return CodeIndex.build(package, db_path=tmp_path / "index.sqlite")


def test_minified_builds_are_left_out_and_counted(index: CodeIndex) -> None:
    assert index.stats()["skipped"] == {"minified": 2}
    assert not any(path.startswith("dist/browser/") for path in index.file_paths())
    assert "dist/esm/index.js" in index.file_paths()


def test_minified_is_a_format_test_of_scripts_only() -> None:
    assert is_minified("dist/app.min.js", "function a(){}\n")
    assert is_minified("dist/app.js", MINIFIED)
    assert not is_minified("dist/app.js", ESM)
    # A readable build that carries its source map inline, one base64 line of 40 kB.
    assert not is_minified("dist/app.js", ESM + "//# sourceMappingURL=data:application/json;base64," + "QUJD" * 10_000 + "\n")
    assert not is_minified("data/table.sql", MINIFIED)  # other languages are never minified this way
    assert is_declaration("dist/index.d.ts") and is_declaration("pkg/stubs.pyi")
    assert not is_declaration("dist/index.ts")


def test_search_puts_the_code_that_runs_ahead_of_its_declaration(index: CodeIndex) -> None:
    # The declaration's doc comment words the query better than the code does.
    hits = index.search("stock level of the mill from its daily stock reports", limit=20)
    assert hits[0].name.endswith(".stockLevel") and not hits[0].path.endswith(".d.ts")
    declared = [n for n, hit in enumerate(hits) if hit.path == "dist/index.d.ts"]
    code = [n for n, hit in enumerate(hits) if hit.path != "dist/index.d.ts"]
    assert declared and max(code) < min(declared)  # still found, after the code


def test_search_shows_a_function_shipped_in_two_builds_once(index: CodeIndex) -> None:
    hits = index.search("stockLevel", limit=10)
    assert [hit.name.rsplit(".", 1)[-1] for hit in hits if hit.kind == "function"].count("stockLevel") == 1
    assert index.twin_files("dist/esm/index.js", "dist/cjs/index.js")
    assert not index.twin_files("dist/esm/index.js", "dist/index.d.ts")


def test_sibling_modules_of_one_interface_are_not_twins(tmp_path: Path) -> None:
    # A base class and one implementation share most method names, as two builds do, but they
    # are two pieces of code: the implementation must stay findable.
    methods = ["open", "close", "read", "write", "flush", "seek", "tell", "execute"]
    root = tmp_path / "backends"
    root.mkdir()
    (root / "base.py").write_text("class Backend:\n" + "".join(
        f"    def {m}(self, *args):\n        raise NotImplementedError\n\n" for m in methods))
    (root / "sqlite.py").write_text("from base import Backend\n\n\nclass SqliteBackend(Backend):\n" + "".join(
        f"    def {m}(self, *args):\n        return self.connection.{m}(*args)\n\n" for m in methods))
    index = CodeIndex.build(root, db_path=tmp_path / "backends.sqlite")
    assert not index.twin_files("base.py", "sqlite.py")
    assert {hit.path for hit in index.search("execute", limit=10) if hit.name.endswith(".execute")} == {"base.py", "sqlite.py"}
    assert len(resolve(index, ["base.Backend.execute", "sqlite.SqliteBackend.execute"])) == 2


def test_a_stub_that_outranks_its_module_leaves_the_module_first(tmp_path: Path) -> None:
    root = tmp_path / "ledger"
    root.mkdir()
    names = ["load", "dump", "merge", "split", "close", "open"]
    (root / "ledger.pyi").write_text("".join(
        f'def {n}(path: str) -> None:\n    """{n.title()} the ledger of the Ostby mill from a file on disk."""\n    ...\n'
        for n in names))
    (root / "ledger.py").write_text("".join(f"def {n}(path):\n    return open(path).read()\n\n" for n in names))
    index = CodeIndex.build(root, db_path=tmp_path / "ledger.sqlite")
    assert not index.twin_files("ledger.py", "ledger.pyi")
    hits = [hit for hit in index.search("load the ledger of the mill from a file", limit=20) if hit.name.endswith(".load")]
    assert [hit.path for hit in hits] == ["ledger.py", "ledger.pyi"]


def test_files_sharing_a_few_names_are_not_twins(tmp_path: Path) -> None:
    root = tmp_path / "two-tools"
    root.mkdir()
    (root / "reader.py").write_text("".join(f"def read_{n}(x):\n    return x + {n}\n\n" for n in range(6))
                                    + "def close(handle):\n    handle.close()\n")
    (root / "writer.py").write_text("".join(f"def write_{n}(x):\n    return x - {n}\n\n" for n in range(6))
                                    + "def close(handle):\n    handle.flush()\n    handle.close()\n")
    index = CodeIndex.build(root, db_path=tmp_path / "two.sqlite")
    assert not index.twin_files("reader.py", "writer.py")
    assert [hit.path for hit in index.search("close", limit=5) if hit.name.endswith("close")] == ["reader.py", "writer.py"]
    assert drop_copies(index, ["reader.close", "writer.close"]) == ["reader.close", "writer.close"]


def test_research_resolves_one_build_of_a_function(index: CodeIndex) -> None:
    names = ["dist.esm.stockLevel", "dist.cjs.stockLevel", "dist.cjs.troutCount"]
    assert drop_copies(index, names) == ["dist.esm.stockLevel", "dist.cjs.troutCount"]
    resolved = resolve(index, names)
    assert [r.qualified_name for r in resolved] == ["dist.esm.stockLevel", "dist.cjs.troutCount"]
    offered = candidates(index, [("dist/esm/index.js", 1, 30), ("dist/cjs/index.js", 1, 40)], question="stock level")
    assert len({name.rsplit(".", 1)[-1] for name in offered}) == len(offered)


def test_a_declaration_ranks_below_the_function_it_declares(index: CodeIndex) -> None:
    ranked = rank_symbols(index, "stock level of the mill from its daily stock reports",
                          ["dist.index.d.StockReport", "dist.esm.stockLevel"])
    assert ranked[0] == "dist.esm.stockLevel"


def test_two_researchers_resolving_the_two_builds_give_one_definition(index: CodeIndex) -> None:
    from moot.teams.research.models import EvidenceBundle
    from moot.teams.research.synthesizer import merged_resolved

    first = EvidenceBundle(sub_question="how is the stock level read?", resolved=resolve(index, ["dist.esm.stockLevel"]))
    second = EvidenceBundle(sub_question="what reads the reports?",
                            resolved=resolve(index, ["dist.cjs.stockLevel", "dist.cjs.millOpen"]))
    assert len(merged_resolved([first, second])) == 3  # without the index: by location only
    merged = merged_resolved([first, second], index)
    assert [r.qualified_name for r in merged] == ["dist.esm.stockLevel", "dist.cjs.millOpen"]


def test_a_named_declaration_is_resolved_after_the_code_that_runs(index: CodeIndex) -> None:
    # The model named the declared interface first; the functions found in the code still lead.
    names = ["dist.index.d.StockReport", "dist.esm.stockLevel", "dist.esm.troutCount"]
    assert [r.qualified_name for r in resolve(index, names)] == [
        "dist.esm.stockLevel", "dist.esm.troutCount", "dist.index.d.StockReport"]
    assert [r.qualified_name for r in resolve(index, names, limit=2)] == ["dist.esm.stockLevel", "dist.esm.troutCount"]


def test_a_name_the_question_writes_is_found_although_both_builds_define_it(index: CodeIndex) -> None:
    from moot.teams.research.resolve import written_definitions

    # `troutCount` is defined in both builds: one definition, not an ambiguous name.
    assert written_definitions(index, "What does `troutCount()` add up?") == ["dist.cjs.troutCount"]  # by path


def test_a_declaration_is_not_taken_for_code_that_uses_a_written_option(tmp_path: Path) -> None:
    from moot.teams.research.resolve import written_definitions

    root = tmp_path / "gauge"
    root.mkdir()
    (root / "index.d.ts").write_text("/** Options of a gauge. */\nexport interface GaugeOptions {\n"
                                     "  /** Round readings to whole centimetres. */\n  roundReadings: boolean;\n}\n")
    (root / "index.js").write_text("export function readGauge(level, options) {\n"
                                   "  if (options.roundReadings) {\n    return Math.round(level);\n  }\n  return level;\n}\n")
    index = CodeIndex.build(root, db_path=tmp_path / "gauge.sqlite")
    assert written_definitions(index, "What does `roundReadings` change when a gauge is read?") == ["index.readGauge"]


def test_search_reads_deep_enough_to_find_code_below_many_declarations(tmp_path: Path) -> None:
    root = tmp_path / "levels"
    root.mkdir()
    # Thirty documented interfaces that word the query, and one function that does the work.
    (root / "types.d.ts").write_text("".join(
        f"/** The stock level of mill {n}, from its daily stock reports. */\nexport interface MillStock{n} {{\n"
        f"  level: number;\n}}\n" for n in range(30)))
    (root / "stock.js").write_text("export function stockLevel(reports, day) {\n  return reports[day] || 0;\n}\n")
    index = CodeIndex.build(root, db_path=tmp_path / "levels.sqlite")
    hits = index.search("stock level of the mill from its daily stock reports", limit=5)
    assert hits[0].path == "stock.js"


def test_a_prototype_method_the_question_writes_is_the_method_of_its_constructor(tmp_path: Path) -> None:
    from moot.teams.research.resolve import written_definitions

    root = tmp_path / "bobbin"
    root.mkdir()
    (root / "bobbin.js").write_text(
        "function Spindle () {\n  this.cache = {};\n}\n\n"
        "Spindle.prototype.spool = function spool (thread) {\n  return this.cache[thread];\n};\n\n"
        "function spool (thread) {\n  return new Spindle().spool(thread);\n}\n\nmodule.exports = { spool: spool };\n")
    index = CodeIndex.build(root, db_path=tmp_path / "bobbin.sqlite")
    # `spool` alone is two definitions; written as JavaScript writes a method, it is one of them
    assert written_definitions(index, "Which code calls Spindle.prototype.spool, and when does it read the cache?") == [
        "bobbin.Spindle.spool"]
