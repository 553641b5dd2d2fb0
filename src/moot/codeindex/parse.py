"""Turning one file into chunks, symbols and references (tree-sitter for code, windows for text).

Code chunks follow definitions: one per function, class and method, plus one per module.
A class chunk holds the class without its methods' bodies (they are chunks of their own), and
a module chunk holds the top-level code outside definitions plus each definition's first
line, so a word is indexed in the chunk that really says it and BM25 is not skewed by a
class repeating every method.

References are resolved by *name* only: a call to ``x.read()`` is recorded as a call to
``read``, whatever ``x`` is. That is what an index without type inference can know, and it
is stated in docs/codeindex.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

MAX_CHUNK_LINES = 2000
"""Indexed text of one chunk is cut here (a generated 20,000-line function is not prose)."""
TEXT_WINDOW = 50
"""Lines per chunk for docs, config and other text files."""
SKIP_NAMES = frozenset({"self", "cls", "this", "super", "_"})
"""Names so common in every scope that recording their uses only adds noise."""


@dataclass
class Chunk:
    kind: str
    name: str
    start_line: int
    end_line: int
    text: str
    line_map: list[tuple[int, int]] = field(default_factory=list)
    """Where the text skips lines (class and module chunks leave out nested bodies): pairs of
    (index of a text line, its line number in the file) at each jump; empty when contiguous."""


@dataclass
class Symbol:
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    docstring: str


@dataclass(frozen=True)
class Reference:
    name: str
    line: int
    scope: str
    """Qualified name of the enclosing definition, or of the module."""
    is_call: bool


@dataclass
class ParsedFile:
    """Everything the index stores about one file."""

    chunks: list[Chunk] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    docstring: str = ""
    """First line of the module docstring (Python) or leading comment (JS/TS)."""


@lru_cache(maxsize=None)
def _grammar(language: str) -> tuple[tree_sitter.Parser, tree_sitter.Query]:
    if language == "python":
        import tree_sitter_python as grammar

        lang = tree_sitter.Language(grammar.language())
    elif language == "javascript":
        import tree_sitter_javascript as grammar_js

        lang = tree_sitter.Language(grammar_js.language())
    elif language in ("typescript", "tsx"):
        import tree_sitter_typescript as grammar_ts

        lang = tree_sitter.Language(
            grammar_ts.language_tsx() if language == "tsx" else grammar_ts.language_typescript()
        )
    else:  # pragma: no cover - walk.py only sends the languages above
        raise ValueError(f"no grammar for {language}")
    return tree_sitter.Parser(lang), tree_sitter.Query(lang, _query_source(lang))


def _query_source(lang: tree_sitter.Language) -> str:
    """One query for definitions, call targets and identifiers, with the node kinds this grammar has.

    Matching runs in C: walking every node from Python was most of the indexing time.
    """
    known = lambda kind: lang.id_for_node_kind(kind, True) is not None  # noqa: E731
    definitions = [t for t in (*_CLASS_TYPES, *_FUNCTION_TYPES, *_BINDINGS) if known(t)]
    identifiers = [t for t in _IDENTIFIERS if known(t)]
    parts = [f"[{' '.join(f'({t})' for t in definitions)}] @def", f"[{' '.join(f'({t})' for t in identifiers)}] @ref"]
    if known("call"):
        parts.append("(call function: [(identifier) @call (attribute attribute: (identifier) @call)])")
    # A class's private method is called as `this.#name()`: its name is a node of its own kind.
    properties = " ".join(f"({t})" for t in ("property_identifier", "private_property_identifier") if known(t))
    if known("call_expression"):
        parts.append(f"(call_expression function: [(identifier) @call (member_expression property: [{properties}] @call)])")
    if known("new_expression"):
        parts.append(f"(new_expression constructor: [(identifier) @call (member_expression property: [{properties}] @call)])")
    return "\n".join(parts)


def module_name(rel: str, package: str = "") -> str:
    """``pkg/sub/mod.py`` → ``pkg.sub.mod``; ``pkg/__init__.py`` → ``pkg``; ``web/a.ts`` → ``web.a``.

    Python files under a top-level ``src/`` lose it (``src/pkg/mod.py`` → ``pkg.mod``), as imports do.

    ``package`` is the root's own name when the root is itself a Python package (an installed
    package in site-packages), so names read ``httpx._client.Client``, as in an import.
    """
    if package:
        rel = f"{package}/{rel}"
    elif rel.startswith("src/") and rel.endswith((".py", ".pyi")):
        # The src layout: src/moot/config.py is imported as moot.config.
        rel = rel[len("src/"):]
    stem = rel.rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel
    parts = [p for p in stem.split("/") if p]
    if len(parts) > 1 and parts[-1] in ("__init__", "index"):
        parts.pop()
    return ".".join(parts) or stem


def parse(rel: str, language: str, text: str, *, package: str = "") -> ParsedFile:
    """Chunks, symbols and references of one file's text (``package``: see :func:`module_name`)."""
    if language == "text":
        return _parse_text(rel, text)
    return _CodeParser(rel, language, text, package).run()


def _simplify(jumps: list[tuple[int, int]], start: int) -> list[tuple[int, int]]:
    """Drop jumps that do not jump (the text just goes on), so contiguous chunks have an empty map."""
    out: list[tuple[int, int]] = []
    for index, line in jumps:
        previous_index, previous_line = out[-1] if out else (0, start)
        if line - previous_line != index - previous_index:
            out.append((index, line))
    return out


def line_number(line_map: list[tuple[int, int]] | list[list[int]], start_line: int, index: int) -> int:
    """The file line of text line ``index`` of a chunk (0-based) given its line map."""
    base_index, base_line = 0, start_line
    for jump_index, jump_line in line_map:
        if jump_index > index:
            break
        base_index, base_line = jump_index, jump_line
    return base_line + (index - base_index)


# --- text files -------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$|^\[([^\]]+)\]\s*$")


def _parse_text(rel: str, text: str) -> ParsedFile:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parsed = ParsedFile()
    start = 0
    n = len(lines)
    heading = ""
    while start < n:
        end = min(start + TEXT_WINDOW, n)
        # Markdown headings and TOML/INI sections start a new chunk, so a chunk is one topic.
        for i in range(start + 5, end):
            if _HEADING.match(lines[i]):
                end = i
                break
        window = lines[start:end]
        for line in window:
            m = _HEADING.match(line)
            if m:
                heading = (m.group(2) or m.group(3) or "").strip()
                break
        name = f"{rel} § {heading}" if heading else rel
        parsed.chunks.append(Chunk("text", name, start + 1, end, "\n".join(l.rstrip("\r") for l in window)))
        start = end
    if not parsed.chunks:
        parsed.chunks.append(Chunk("text", rel, 1, 1, ""))
    # Only prose has a first line worth showing in the repo map ("{" is not a summary).
    if rel.lower().endswith((".md", ".markdown", ".rst", ".txt")) or "." not in rel.rsplit("/", 1)[-1]:
        body = lines
        if lines and lines[0].strip() == "---":  # YAML front matter: a title beats "---"
            end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
            title = next((l.split(":", 1)[1].strip().strip("\"'") for l in lines[1:end] if l.lower().startswith("title:")), "")
            body = [title, *lines[end + 1 :]] if title else lines[end + 1 :]
        first = next((l.strip().lstrip("#").strip() for l in body if l.strip()), "")
        parsed.docstring = first[:120]
    return parsed


# --- code files -------------------------------------------------------------------------------

_CLASS_TYPES = {
    "class_definition", "class_declaration", "abstract_class_declaration",
    "interface_declaration", "enum_declaration", "type_alias_declaration",
}
_FUNCTION_TYPES = {"function_definition", "function_declaration", "generator_function_declaration", "method_definition"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
_BINDINGS = ("variable_declarator", "assignment_expression", "pair")
"""Where a JS/TS function value gets a name: ``const f = …``, ``Writer.prototype.parse = function …``
(how code before classes wrote methods), ``exports.f = …``, and ``{ lookup: function … }``."""
_OWNER = re.compile(r"[\w$]+(?:\.[\w$]+)*")
"""An owner written as plain dotted names (``Writer.prototype``); anything else names no owner."""
_IDENTIFIERS = {"identifier", "property_identifier", "private_property_identifier", "type_identifier",
                "shorthand_property_identifier"}
_CALLS = {"call": "function", "call_expression": "function", "new_expression": "constructor"}
_MEMBER_FIELDS = {"attribute": "attribute", "member_expression": "property"}


def function_binding(value: tree_sitter.Node) -> tuple[tree_sitter.Node, str, bool] | None:
    """How the index names a JS/TS function value: ``(name node, owner, method)``, or ``None`` for
    a function value bound to no name (a callback passed to a call).

    The owner is what the name is a member of, ``""`` for none: ``Writer`` for
    ``Writer.prototype.parse = function …`` (a method of ``Writer``, as in a class), ``mustache``
    for ``mustache.render = …``, ``""`` for ``exports.f = …`` or ``module.exports.f = …`` (the
    module itself) and for ``const f = …``; an object literal's key is owned by the name the
    object is bound to. An unnamed ``module.exports = function (…)`` gives the ``module.exports``
    node itself: the parser names that function after its module (``minimist`` for a package's
    ``index.js``), as a user who requires it calls it."""
    parent = value.parent
    if value.type not in _FUNCTION_VALUES or parent is None:
        return None
    if parent.type == "variable_declarator" and parent.child_by_field_name("value") == value:
        name = parent.child_by_field_name("name")
        return (name, "", False) if name is not None and name.type == "identifier" else None
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == value:
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return left, "", False
        if left is None or left.type != "member_expression":
            return None
        name, target = left.child_by_field_name("property"), left.child_by_field_name("object")
        if name is None or name.type != "property_identifier" or target is None:
            return None
        written = target.text.decode("utf-8", errors="replace") if target.text else ""
        if not _OWNER.fullmatch(written):
            return None
        if name.text == b"exports":
            # ``module.exports = function (…)``: the module's own function; unnamed, it is named
            # after the module (the whole ``module.exports`` stands for its name)
            own = value.child_by_field_name("name")
            return (own if own is not None else left), "", False
        return name, _owner(written), written.endswith(".prototype") or written == "this"
    if parent.type == "pair" and parent.child_by_field_name("value") == value:
        key = parent.child_by_field_name("key")
        if key is None or key.type != "property_identifier":
            return None
        holder = parent.parent.parent if parent.parent is not None else None
        owner = ""
        if holder is not None and holder.type in ("variable_declarator", "assignment_expression"):
            bound = holder.child_by_field_name("name" if holder.type == "variable_declarator" else "left")
            text = bound.text.decode("utf-8", errors="replace") if bound is not None and bound.text else ""
            owner = _owner(text) if _OWNER.fullmatch(text) else ""
        return key, owner, False
    return None


def _owner(written: str) -> str:
    """``Writer.prototype`` → ``Writer``; ``this.cache`` → ``cache``; ``module.exports`` → ``""``."""
    parts = [p for p in written.split(".") if p != "prototype"]
    while parts and parts[0] in ("this", "module", "exports"):
        parts.pop(0)
    return ".".join(parts)


def _comment_text(comment: str) -> str:
    """A comment without its markers: ``/** Adds. */`` → ``Adds.``."""
    return re.sub(r"^\s*(#!.*|//+|/\*+)|\*+/\s*$", "", comment)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().strip("*").strip()
        if line and not line.startswith("@"):
            return line[:200]
    return ""


class _CodeParser:
    def __init__(self, rel: str, language: str, text: str, package: str = "") -> None:
        self.rel = rel
        self.language = language
        self.source = text.encode("utf-8", errors="surrogatepass")
        self.lines = [line.rstrip("\r") for line in text.split("\n")]
        if len(self.lines) > 1 and self.lines[-1] == "":
            self.lines.pop()
        self.module = module_name(rel, package)
        self.parsed = ParsedFile()
        self.definition_names: set[int] = set()
        self.top_level: list[tuple[int, int, int]] = []

    def run(self) -> ParsedFile:
        parser, query = _grammar(self.language)
        root = parser.parse(self.source).root_node
        self.parsed.docstring = self._module_doc(root)
        captures = tree_sitter.QueryCursor(query).captures(root)
        scopes = self._definitions(captures.get("def", []))
        self._references(captures.get("ref", []), captures.get("call", []), scopes)
        self._module_chunk()
        return self.parsed

    def _text(self, node: tree_sitter.Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def _module_doc(self, root: tree_sitter.Node) -> str:
        for child in root.named_children:
            if child.type == "comment":
                return _first_line(_comment_text(self._text(child)))
            if child.type == "expression_statement" and child.named_children and child.named_children[0].type == "string":
                return _first_line(self._string_value(child.named_children[0]))
            return ""
        return ""

    def _string_value(self, node: tree_sitter.Node) -> str:
        parts = [self._text(c) for c in node.named_children if c.type == "string_content"]
        return "".join(parts) if parts else self._text(node).strip("\"'")

    def _docstring(self, node: tree_sitter.Node, outer: tree_sitter.Node) -> str:
        body = node.child_by_field_name("body")
        if self.language == "python" and body is not None:
            first = body.named_children[0] if body.named_children else None
            if first is not None and first.type == "expression_statement" and first.named_children:
                value = first.named_children[0]
                if value.type == "string":
                    return _first_line(self._string_value(value))
            return ""
        # JS/TS: the doc comment directly above the definition (or above its export/declaration).
        anchor = outer
        while anchor.parent is not None and anchor.parent.type in ("export_statement", "lexical_declaration", "variable_declaration",
                                                                   "expression_statement"):
            anchor = anchor.parent
        prev = anchor.prev_named_sibling
        if prev is not None and prev.type == "comment" and prev.end_point.row >= anchor.start_point.row - 1:
            return _first_line(_comment_text(self._text(prev)))
        return ""

    def _signature(self, node: tree_sitter.Node, start: tree_sitter.Node) -> str:
        body = node.child_by_field_name("body")
        if node.type == "type_alias_declaration":
            body = None
        end = body.start_byte if body is not None else node.end_byte
        head = self.source[start.start_byte : end].decode("utf-8", errors="replace")
        return " ".join(head.split()).rstrip(" :{=>")[:200]

    def _definitions(self, nodes: list[tree_sitter.Node]) -> list[tuple[int, int, str]]:
        """Define every symbol, innermost scope known from byte ranges; returns (start, end, qualified) scopes."""
        scopes: list[tuple[int, int, str]] = []
        open_: list[tuple[int, str, str]] = []  # (end byte, qualified name, scope kind) of enclosing definitions
        for node in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
            while open_ and open_[-1][0] <= node.start_byte:
                open_.pop()
            scope, scope_kind = (open_[-1][1], open_[-1][2]) if open_ else (self.module, "module")
            kind, name_node, definition, owner = self._definition(node, scope_kind)
            if kind is None or name_node is None:
                continue
            qualified, child_kind = self._define(node, definition, name_node, kind, f"{scope}.{owner}" if owner else scope,
                                                 scope_kind)
            open_.append((node.end_byte, qualified, child_kind))
            scopes.append((node.start_byte, node.end_byte, qualified))
        return scopes

    def _references(
        self, refs: list[tree_sitter.Node], calls: list[tree_sitter.Node], scopes: list[tuple[int, int, str]]
    ) -> None:
        call_starts = {n.start_byte for n in calls}
        open_: list[tuple[int, str]] = []
        pending = iter(scopes)  # already sorted by start byte
        upcoming = next(pending, None)
        source = self.source
        out = self.parsed.references
        for node in sorted(refs, key=lambda n: n.start_byte):
            start = node.start_byte
            if start in self.definition_names:
                continue
            while upcoming is not None and upcoming[0] <= start:
                while open_ and open_[-1][0] <= upcoming[0]:
                    open_.pop()
                open_.append((upcoming[1], upcoming[2]))
                upcoming = next(pending, None)
            while open_ and open_[-1][0] <= start:
                open_.pop()
            name = source[start : node.end_byte].decode("utf-8", errors="replace")
            if len(name) > 1 and name not in SKIP_NAMES:
                out.append(Reference(name, node.start_point.row + 1, open_[-1][1] if open_ else self.module, start in call_starts))

    def _definition(
        self, node: tree_sitter.Node, scope_kind: str
    ) -> tuple[str | None, tree_sitter.Node | None, tree_sitter.Node, str]:
        t = node.type
        if t in _CLASS_TYPES:
            return "class", node.child_by_field_name("name"), node, ""
        if t in _FUNCTION_TYPES:
            kind = "method" if scope_kind == "class" else "function"
            return kind, node.child_by_field_name("name"), node, ""
        if t in _BINDINGS:
            value = node.child_by_field_name({"variable_declarator": "value", "assignment_expression": "right"}.get(t, "value"))
            bound = function_binding(value) if value is not None else None
            if bound is not None:
                name, owner, method = bound
                kind = "method" if scope_kind == "class" or method else "function"
                return kind, name, value, owner
        return None, None, node, ""

    def _define(
        self,
        node: tree_sitter.Node,
        definition: tree_sitter.Node,
        name_node: tree_sitter.Node,
        kind: str,
        scope: str,
        scope_kind: str,
    ) -> tuple[str, str]:
        self.definition_names.add(name_node.start_byte)
        # an unnamed `module.exports = function` (see function_binding) is named after its module
        name = self._text(name_node) if name_node.type != "member_expression" else self.module.rsplit(".", 1)[-1]
        qualified = f"{scope}.{name}"
        # Decorators belong to the definition: the chunk starts at the first one.
        outer = node.parent if node.parent is not None and node.parent.type == "decorated_definition" else node
        start_line = outer.start_point.row + 1
        end_line = node.end_point.row + 1
        if node.type == "variable_declarator" and node.parent is not None:
            start_line = node.parent.start_point.row + 1
        bound = node.type in _BINDINGS
        self.parsed.symbols.append(
            Symbol(
                name=name,
                qualified_name=qualified,
                kind=kind,
                start_line=start_line,
                end_line=end_line,
                signature=self._signature(definition, node if bound else outer),
                docstring=self._docstring(definition, node),
            )
        )
        if scope_kind == "module":
            self.top_level.append((start_line, end_line, definition.start_point.row + 1 if node is definition else start_line))
        nested: list[tuple[int, int, int]] = self._nested_ranges(definition) if kind == "class" else []
        text, line_map = self._chunk_lines(start_line, end_line, nested)
        self.parsed.chunks.append(Chunk(kind, qualified, start_line, end_line, text, line_map))
        return qualified, ("class" if kind == "class" else "function")

    def _nested_ranges(self, class_node: tree_sitter.Node) -> list[tuple[int, int, int]]:
        """Line ranges of the methods in a class body (their bodies are left out of the class chunk)."""
        body = class_node.child_by_field_name("body")
        ranges: list[tuple[int, int]] = []
        for child in body.named_children if body is not None else ():
            target = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
            if target is not None and (target.type in _FUNCTION_TYPES or target.type in _CLASS_TYPES):
                ranges.append((child.start_point.row + 1, child.end_point.row + 1, target.start_point.row + 1))
        return ranges

    def _chunk_lines(
        self, start: int, end: int, holes: list[tuple[int, int, int]]
    ) -> tuple[str, list[tuple[int, int]]]:
        """The text of lines ``start``..``end`` without the holes' bodies, and its line map.

        A hole is (first line, last line, line kept): the nested definition's ``def`` line
        stays, so the outer chunk still says what it contains.
        """
        keep: list[str] = []
        jumps: list[tuple[int, int]] = []
        hole_iter = iter(sorted(holes))
        hole = next(hole_iter, None)
        line = start
        while line <= end and len(keep) < MAX_CHUNK_LINES:
            while hole is not None and hole[1] < line:
                hole = next(hole_iter, None)
            if hole is not None and hole[0] <= line <= hole[1]:
                jumps.append((len(keep), hole[2]))
                keep.append(self._line(hole[2]))
                line = hole[1] + 1
                hole = next(hole_iter, None)
                if line <= end:
                    jumps.append((len(keep), line))
                continue
            keep.append(self._line(line))
            line += 1
        return "\n".join(keep), _simplify(jumps, start)

    def _line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def _module_chunk(self) -> None:
        n = max(len(self.lines), 1)
        text, line_map = self._chunk_lines(1, n, self.top_level)
        self.parsed.chunks.insert(0, Chunk("module", self.module, 1, n, text, line_map))
