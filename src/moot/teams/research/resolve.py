"""Facts about code taken from the index, never from the model: definitions, callers, callees.

The 0.5B model cannot write a correct account of code from memory, but it can choose which
symbols matter. The researchers (and the single agent's draft) *nominate* symbols, from a
closed list of the names their search results show; this module resolves each against the
index and writes the relationship statements itself ("`check` is defined at
pkg/rules.py:3-5 … called by `app.run` at pkg/app.py:8"), so where a thing is defined and
who calls it comes from the symbol graph.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from moot.codeindex import CodeIndex
from moot.codeindex.walk import is_declaration, language_of
from moot.teams.research.relevance import definition, first_defined, rank_symbols

MAX_CANDIDATES = 24
"""Symbol names a researcher may choose from (its search results' definitions and calls)."""
MAX_RESOLVED = 4
"""Symbols resolved per researcher: the synthesizer's context is small and shared."""
LOCATION_SYMBOLS = 12
"""Definitions read at one evidence location before ranking (a module hit holds many)."""


class CallSite(BaseModel):
    """One place that calls a symbol."""

    caller: str
    """The calling definition's qualified name (or the module, for a call at module level)."""
    path: str
    line: int

    def location(self) -> str:
        return f"{self.path}:{self.line}"


class ResolvedSymbol(BaseModel):
    """A definition as the index knows it."""

    name: str
    qualified_name: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    callers: list[CallSite] = Field(default_factory=list)
    callers_unknown: str = ""
    """Why no callers are listed although calls of the name exist: by name alone they cannot be
    told apart from calls of something else (a ``decode`` of ``bytes``, one of six ``flush``
    methods). Empty when the callers are the calls found."""
    callees: list[str] = Field(default_factory=list)

    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}" if self.end_line > self.start_line else f"{self.path}:{self.start_line}"

    def statement(self, max_callers: int = 3, max_callees: int = 5, *, all_callers: bool = True) -> str:
        """One sentence written from the index, citing path:line for every place it names.

        ``all_callers=False`` (the question does not ask who calls it) cites only the callers
        in the definition's own file, the code around it, and counts the others: on the eval a
        caller in an unrelated file was the commonest citation outside the question's files."""
        text = f"`{self.qualified_name}` ({self.kind}) is defined at {self.location()}"
        if self.signature:
            text += f" as `{_short(self.signature, 140)}`"
        text += "."
        if self.docstring:
            text += f" Its docstring: \"{_short(self.docstring, 160).rstrip('.')}.\""
        shown_callers = self.callers if all_callers else [c for c in self.callers if c.path == self.path]
        elsewhere = len(self.callers) - len(shown_callers)
        if shown_callers:
            shown = ", ".join(f"`{c.caller}` ({c.location()})" for c in shown_callers[:max_callers])
            more = max(0, len(shown_callers) - max_callers) + elsewhere
            text += f" It is called by {shown}" + (f" and {more} more" if more else "") + "."
        elif elsewhere:
            text += f" It is called from {elsewhere} place{'s' if elsewhere > 1 else ''} in other files."
        elif self.callers_unknown:
            text += f" Its callers are not listed: {self.callers_unknown}."
        else:
            text += " No call of it was found in the repository."
        if self.callees:
            text += " It calls " + ", ".join(f"`{c}`" for c in self.callees[:max_callees]) + "."
        return text


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_BUILTIN_METHODS = frozenset(
    name for kind in (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, object, io.BytesIO,
                      io.StringIO, io.TextIOWrapper)
    for name in dir(kind)
)
"""Method names of Python's own types: a call ``x.decode()`` may be ``bytes.decode``, so by
name alone it is no evidence of a call of the repository's ``decode``."""
_SCRIPT_BUILTIN_METHODS = frozenset("""
    at concat copyWithin entries every fill filter find findIndex findLast findLastIndex flat flatMap forEach
    includes indexOf join keys lastIndexOf map pop push reduce reduceRight reverse shift slice some sort splice
    toLocaleString toReversed toSorted toSpliced toString unshift values with
    charAt charCodeAt codePointAt endsWith localeCompare match matchAll padEnd padStart repeat replace
    replaceAll split startsWith substring toLowerCase toUpperCase trim trimEnd trimStart
    add clear delete get has set
    then catch finally
    hasOwnProperty isPrototypeOf propertyIsEnumerable valueOf
    exec test
    addEventListener removeEventListener dispatchEvent
    on once off emit write end pipe close destroy
    getTime toISOString toJSON
    apply bind call
""".split())
"""The same for scripts: methods of JavaScript's arrays, strings, maps and sets, promises,
objects, regular expressions, dates, events and functions, and of Node's event emitters and
streams (``x.add()`` may be ``Set.add``, ``x.on()`` an emitter's)."""
_SCRIPT_GLOBALS = "JSON|Math|Object|Array|Promise|Number|String|Reflect|Symbol|Date|console|process|Buffer|globalThis"
"""A script's global objects: ``JSON.parse(`` calls the language's ``parse``, never the repository's."""


def _is_script(path: str) -> bool:
    return language_of(path) in ("javascript", "typescript", "tsx")


def builtin_method(name: str, path: str) -> bool:
    """Whether ``name`` is also a method of the built-in types of the language ``path`` is written in."""
    return name in (_SCRIPT_BUILTIN_METHODS if _is_script(path) else _BUILTIN_METHODS)


_CALLER_SCAN = 40
"""Call sites read before they are checked (the statement shows three)."""


def _call_form(line: str, name: str, *, script: bool = False) -> str:
    """How ``name`` is called on one source line: ``self`` (``self.name(``, ``cls.name(``,
    ``super().name(``; in a script ``this.name(``, ``super.name(``), ``attribute`` (``x.name(``),
    ``plain`` (``name(``) or ``""`` (in a script, a call on a global object is none of them)."""
    if script:
        line = re.sub(rf"\b(?:{_SCRIPT_GLOBALS})\.{re.escape(name)}\s*\(", " ", line)
    if re.search(rf"\b(?:self|cls|super\(\){'|this|super' if script else ''})\.{re.escape(name)}\s*\(", line):
        return "self"
    if re.search(rf"\.{re.escape(name)}\s*\(", line):
        return "attribute"
    if re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", line):
        return "plain"
    return ""


def checked_callers(index: CodeIndex, info: Any) -> tuple[list[CallSite], str]:
    """The call sites that really call this definition, as far as the source shows, and why
    none are listed when calls of the name cannot be told apart.

    The index records calls by name. A function or class defined once is called by every
    plain ``name(`` call; a method is called by ``self.name(`` inside its own class, and by
    ``x.name(`` elsewhere only when no other definition shares the name and it is not a method
    name of the language's built-in types (``decode``, ``join``, ``get``). ``__init__`` runs where the
    class is called. A recursive call is not a caller."""
    name = info.name
    owner = info.qualified_name.rsplit(".", 1)[0] if "." in info.qualified_name else ""
    is_method = info.kind == "method"
    if is_method and name == "__init__":
        cls = owner.rsplit(".", 1)[-1]
        sites = [s for s in _sites(index, cls) if _call_form(s[3], cls, script=_is_script(s[1])) == "plain"]
        return [CallSite(caller=c, path=p, line=n) for c, p, n, _ in sites], ""
    same_name = {i.qualified_name for i in index.resolve_symbol(name)} if "." not in name else set()
    shared = len(same_name) > 1
    builtin = builtin_method(name, info.path)  # only a problem for ``x.name(``: ``self.name(`` is the class's own
    kept: list[CallSite] = []
    skipped = 0
    for caller, path, line, text in _sites(index, name):
        if path == info.path and info.start_line <= line <= info.end_line:
            continue
        form = _call_form(text, name, script=_is_script(path))
        if is_method:
            ok = (form == "self" and (caller.startswith(owner + ".") or not shared and not builtin)) or \
                 (form == "attribute" and not shared and not builtin)
        else:
            ok = (form == "plain" and (not shared or path == info.path)) or (form == "attribute" and not shared and not builtin)
        if ok:
            kept.append(CallSite(caller=caller, path=path, line=line))
        else:
            skipped += 1
    why = ""
    if not kept and skipped:
        why = (f"{len(same_name)} definitions in the repository are named `{name}`" if shared
               else f"`{name}` is also a method of the language's built-in types" if builtin and is_method
               else "the calls found do not name it directly")
    return kept, why


def _sites(index: CodeIndex, name: str) -> list[tuple[str, str, int, str]]:
    out = []
    for caller, path, line in index.call_sites(name, limit=_CALLER_SCAN):
        text = "".join(t for _, t in index.source_lines(path, line, line))
        out.append((caller, path, line, text))
    return out


_CODE_LIKE = re.compile(r"\s=\s|^>>>|^\$|(?<![\w/.])(?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5}:\d")
"""A docstring's first line that is an example (``url = httpx.URL("…@müller.de:1234/…")``), not a
summary: quoted in the answer it would read as a citation of a file that does not exist."""


def summary_docstring(docstring: str) -> str:
    """The docstring's first line when it is prose, else nothing."""
    text = " ".join(docstring.split())
    return "" if not text or _CODE_LIKE.search(text) else text


def resolve(index: CodeIndex, names: Iterable[str], limit: int = MAX_RESOLVED) -> list[ResolvedSymbol]:
    """The definitions of ``names`` (qualified or plain), in order, without repeats.

    A plain name with several definitions resolves to the first the index lists; a name the
    repository does not define is skipped (the model cannot add a symbol by naming it), and so
    is a copy of a definition already resolved (:func:`drop_copies`). Definitions in declaration
    files (``.d.ts``, ``.pyi``) come after all others."""
    out: list[ResolvedSymbol] = []
    seen: set[tuple[str, int]] = set()
    cleaned = list(dict.fromkeys(n for name in names if (n := name.strip().strip("`").removesuffix("()"))))
    infos = {name: definition(index, name) for name in cleaned}  # looked up once
    for name in code_first(index, drop_copies(index, cleaned, infos), infos):
        for info in filter(None, [infos[name]]):
            key = (info.path, info.start_line)
            if key in seen:
                continue
            seen.add(key)
            sites, unknown = checked_callers(index, info)
            out.append(ResolvedSymbol(
                name=info.name, qualified_name=info.qualified_name, kind=info.kind, path=info.path,
                start_line=info.start_line, end_line=info.end_line, signature=info.signature,
                docstring=summary_docstring(info.docstring), callers=sites, callers_unknown=unknown,
                # calls of the repository's own code: `split` or `append` would only be noise
                callees=[c for c in info.callees if index.defined_as(c) is not None][:8],
            ))  # fmt: skip
        if len(out) >= limit:
            break
    return out


_CODE_FORM = re.compile(
    r"`([^`\n]{1,80})`"                                                   # `written in backticks`
    r"|(?<![\w.])@([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"                        # @decorator, not an e-mail
    r"|(?<![\w@/.:-])((?:[A-Za-z_]\w*(?:\([^()\n]{0,60}\))?)?(?:\.[A-Za-z_]\w*(?:\([^()\n]{0,60}\))?)+)(?![\w/@-])"  # a.b, a().b, .until()
    r"|\b([A-Za-z_]\w*)\((?!e?s\))"                                          # call(, not a plural's "(s)"
    r"|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z]\w*|[A-Z]+[a-z0-9]+[A-Z]\w*|[A-Z]{2,}(?!s\b)[a-z]\w*)\b"  # snake_case, camelCase
)
"""Code as a question writes it (formats, not words): backticks, a decorator, a dotted name or
call chain, a call, an identifier that is snake_case or has a capital inside. A capitalised
word alone is not one: sentences start with those. Neither is a plural acronym (``URLs``), a
plural in brackets (``option(s)``), an e-mail, or a host in a URL."""
_CHAIN_PART = re.compile(r"[A-Za-z_]\w*")
_FILE_ENDINGS = frozenset({"md", "rst", "txt", "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "yaml", "yml",
                           "toml", "cfg", "ini", "html", "css", "lock", "com", "org", "net", "io", "dev"})
"""The last part of a dotted word that makes it a file or a host (``setup.py``, ``Node.js``,
``example.com``), unless it is called (``response.json()``)."""
MAX_WRITTEN = 12
"""Names read from one question (a pasted traceback names hundreds)."""


def written_chains(question: str) -> list[list[str]]:
    """The code names a question writes, in order: one list per name of the ways to look it up,
    best first. A dotted name is looked up by its whole self, then its shorter tails, then the
    class written before its last part (``URLSafeTimedSerializer.loads``: ``…loads``, ``loads``,
    ``URLSafeTimedSerializer``); a fluent chain (``every().day.at("10:30")``) gives each part;
    JavaScript's ``Writer.prototype.parse`` is looked up as ``Writer.parse``.
    A name of one letter (``a[N]=v``) is no name; a file or host name (``setup.py``) is none."""
    out: list[list[str]] = []
    seen: set[str] = set()

    def add(ways: list[str]) -> None:
        ways = [w for w in dict.fromkeys(w.strip(".") for w in ways) if w and len(w.rsplit(".", 1)[-1]) >= 2]
        if ways and ways[0] not in seen:
            seen.add(ways[0])
            out.append(ways)

    for m in _CODE_FORM.finditer(question):
        if len(out) >= MAX_WRITTEN:
            break
        text = next(g for g in m.groups() if g is not None)
        if _KEBAB.fullmatch(text.strip()):  # `--dry-run`: one hyphenated name (written_uses), not two
            continue
        for chain in re.findall(r"[A-Za-z_][\w.]*(?:\([^()]*\))?(?:\.[A-Za-z_]\w*(?:\([^()]*\))?)*", text)[:3]:
            parts = [p.group() for p in _CHAIN_PART.finditer(re.sub(r"\([^()]*\)", "", chain))]
            # JavaScript's `Writer.prototype.parse` is the method `parse` of `Writer`, which the
            # index names `Writer.parse`: looked up as written, only `parse` was left, of two definitions
            parts = [p for k, p in enumerate(parts) if not (p == "prototype" and 0 < k < len(parts) - 1)] or parts
            if len(parts) > 1 and parts[-1].lower() in _FILE_ENDINGS and not chain.endswith(")"):
                continue
            if re.search(r"\)\.", chain):  # a fluent chain, every().day.at(): each part is a name
                for part in parts:
                    add([part])
            else:  # a qualified name, or a call of one
                add([".".join(parts[k:]) for k in range(len(parts))]
                    + [".".join(parts[k:-1]) for k in range(len(parts) - 1) if parts[-2][:1].isupper()])
    return out[:MAX_WRITTEN]


def written_names(question: str) -> list[str]:
    """The code names a question writes (:func:`written_chains`), each as written."""
    return [ways[0] for ways in written_chains(question)]


def _written_definition(index: CodeIndex, name: str) -> Any | None:
    """The definition a name written as code means, in its own case: for a dotted name one whose
    qualified name ends with it (the index's looser lookups would take any definition of its
    last part); for a plain name its only definition (two builds of one function count as one).
    A plain name several definitions share is none of them: which one a user means is not written."""
    infos = index.resolve_symbol(name)
    if "." in name:
        infos = [i for i in infos if i.qualified_name == name or i.qualified_name.endswith("." + name)]
    else:
        infos = [i for i in infos if i.name == name]
        # The two builds of one function (CommonJS and ES modules) are one definition.
        by_name = {i.qualified_name: i for i in infos}
        if len(drop_copies(index, list(by_name), by_name)) > 1:
            return None
    return first_defined(infos)


_TEST_PATH = re.compile(r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)(?:test_[^/]*|tests?\.py|conftest\.py)$|_test\.\w+$"
                        r"|\.(?:test|spec)\.[\w.]+$")


def is_test_path(path: str) -> bool:
    """Whether a file is a test, by the conventions of test runners: it shows how the code is
    used, not how it works."""
    return bool(_TEST_PATH.search(path))


_KEBAB = re.compile(r"(?<![\w-])-{0,2}([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])")
"""A hyphenated lower-case token (``duplicate-arguments-array``): in code, an option's or a
setting's name, which the code writes as a string."""
USE_DEFINITIONS = 4
"""A written name used in more definitions than this says nothing about where to look."""
USES_PER_NAME = 2
"""Definitions taken for one written name."""
USE_LINES = 100
"""A written name on more lines than this is written all over the code."""


def written_uses(index: CodeIndex, names: Iterable[str], question: str = "") -> list[str]:
    """The definitions that use code the question writes but the repository does not define:
    an attribute, an option or a setting (``includePrerelease``, ``cancel_after``, and a
    hyphenated name the code holds as a string, ``duplicate-arguments-array``). Of each, the
    definitions whose bodies write it, most uses first, then the shortest (the innermost
    definition around each use; tests are not counted); none when it is used in more than
    :data:`USE_DEFINITIONS`, and none for a capitalised name (``ValueError``)."""
    # A capitalised name the repository does not define is a class from elsewhere (a builtin
    # exception, another library's type): where the code uses it says nothing about the question.
    wanted = [(last, False) for name in names if not (last := name.rsplit(".", 1)[-1])[:1].isupper()]
    wanted += [(token, True) for token in _KEBAB.findall(question)]
    out: list[str] = []
    for token, quoted in dict.fromkeys(wanted):
        if len(token) < 3:
            continue
        counts: dict[str, int] = {}
        found = index.occurrences(token, quoted=quoted, limit=USE_LINES, skip=is_test_path)
        if len(found) >= USE_LINES:  # written all over the code
            continue
        for path, line in found:
            inner = index.symbols_in(path, line, line, limit=1)
            if inner:
                counts[inner[0]] = counts.get(inner[0], 0) + 1
        if not counts or len(counts) > USE_DEFINITIONS:
            continue
        infos = {name: definition(index, name) for name in counts}
        ranked = sorted((n for n in counts if infos[n] is not None),
                        key=lambda n: (-counts[n], infos[n].end_line - infos[n].start_line))
        out.extend(n for n in ranked[:USES_PER_NAME] if n not in out)
    return out


def written_definitions(index: CodeIndex, question: str, limit: int = MAX_RESOLVED) -> list[str]:
    """The definitions of the code names the question writes (:func:`written_chains`), as
    qualified names, in the question's order: a user who writes ``semver.satisfies(...)`` or
    ``@retry(stop=stop_after_attempt(3))`` has named where to start, whatever a search for the
    question's words finds. Each name gives the first of its ways to look it up that the index
    defines (:func:`_written_definition`); a name the repository does not define gives the
    definitions that use it (:func:`written_uses`), after those the question names."""
    infos: dict[str, Any] = {}  # each name's definition, looked up once
    undefined: list[str] = []
    for ways in written_chains(question):
        info = next(filter(None, (_written_definition(index, way) for way in ways)), None)
        if info is None:
            if not index.resolve_symbol(ways[0].rsplit(".", 1)[-1]):
                undefined.append(ways[0])
        else:
            infos.setdefault(info.qualified_name, info)
    for name in written_uses(index, undefined, question):
        info = infos.get(name) or definition(index, name)
        # A declaration "uses" a name only in a doc comment or a type: not where the code does.
        if name not in infos and info is not None and not is_declaration(info.path):
            infos[name] = info
    return code_first(index, list(infos), infos)[:limit]


def declared(index: CodeIndex, name: str, infos: Mapping[str, Any] | None = None) -> bool:
    """Whether ``name`` means a definition in a declaration file (``.d.ts``, ``.pyi``)."""
    info = infos[name] if infos is not None and name in infos else definition(index, name)
    return info is not None and is_declaration(info.path)


def code_first(index: CodeIndex, names: list[str], infos: Mapping[str, Any] | None = None) -> list[str]:
    """``names`` with those :func:`declared` after the others: a declaration holds no logic to
    quote, and the places are few."""
    flags = {name: declared(index, name, infos) for name in names}
    return [n for n in names if not flags[n]] + [n for n in names if flags[n]]


def candidates(index: CodeIndex, locations: Iterable[tuple[str, int, int]], limit: int = MAX_CANDIDATES,
               *, question: str = "", calls_of: Iterable[str] = ()) -> list[str]:
    """The symbols a researcher may nominate: the definitions at its evidence locations and the
    names those definitions call (and the names that the definitions ``calls_of`` call), as
    qualified names the index can resolve; best first for ``question`` when it is given (the
    small model mostly picks the first names it is shown, so the order is moot's ranking by
    the question's words, see ``relevance``)."""
    out: list[str] = []

    def add(name: str) -> None:
        if name and name not in out:
            out.append(name)

    for info in filter(None, (definition(index, name) for name in calls_of)):
        for callee in info.callees:
            if (qualified := index.defined_as(callee)) is not None and qualified != info.qualified_name:
                add(qualified)

    # The definitions at each location (a whole-module hit holds many: all are ranked, not
    # just the smallest); the two best at each also give the repository functions they call.
    at_locations = [index.symbols_in(path, start, end, limit=LOCATION_SYMBOLS) for path, start, end in locations]
    if question:
        at_locations = [rank_symbols(index, question, names) for names in at_locations]
    else:
        at_locations = [names[:4] for names in at_locations]
    for names in at_locations:
        for name in names:
            add(name)
    for names in at_locations:
        for name in names[:2]:
            for info in filter(None, [definition(index, name)]):
                for callee in info.callees:
                    if (qualified := index.defined_as(callee)) is not None:
                        add(qualified)
    if question:
        out = rank_symbols(index, question, out)
    return drop_copies(index, out[: 2 * limit])[:limit]


def drop_copies(index: CodeIndex, names: Iterable[str], infos: Mapping[str, Any] | None = None) -> list[str]:
    """``names`` without any whose definition is a copy of an earlier one's
    (:meth:`~moot.codeindex.CodeIndex.same_code`: a package's CommonJS and ES-module builds of
    one function), so the two builds do not take two of the few places offered or resolved.
    ``infos``: the names' definitions, where the caller has looked them up already."""
    out: list[str] = []
    kept: list[Any] = []
    for name in names:
        info = infos[name] if infos is not None and name in infos else definition(index, name)
        if info is not None:
            if any(index.same_code(k.path, k.qualified_name, info.path, info.qualified_name) for k in kept):
                continue
            kept.append(info)
        out.append(name)
    return out


def best_at(index: CodeIndex, question: str, path: str, start: int, end: int) -> str | None:
    """The definition at a location that best matches the question (the innermost when tied)."""
    names = index.symbols_in(path, start, end, limit=LOCATION_SYMBOLS)
    ranked = rank_symbols(index, question, names) if question else names
    return ranked[0] if ranked else None


_ASKS_CALLERS = re.compile(r"\b(?:call(?:s|ed|er|ers|ing)?|invok\w*|used by|uses of|usages?|referenc\w*)\b", re.I)


def asks_callers(question: str) -> bool:
    """Whether the question asks who calls or uses something ("which function calls it")."""
    return bool(_ASKS_CALLERS.search(question))


def render_facts(resolved: list[ResolvedSymbol], question: str = "") -> str:
    """The resolved symbols as lines for the synthesizer's evidence (callers in other files
    only when the question asks who calls)."""
    everyone = not question or asks_callers(question)
    return "\n".join(f"- {r.statement(all_callers=everyone)}" for r in resolved)


INDEX_SECTION_LIMIT = 6
"""Symbols stated in an answer's index section."""


def index_section(resolved: list[ResolvedSymbol], limit: int = INDEX_SECTION_LIMIT, *, question: str = "") -> str:
    """The part of the answer that moot writes from the index (not the model). Callers in
    other files are cited only when ``question`` asks who calls (or no question is given)."""
    if not resolved:
        return ""
    everyone = not question or asks_callers(question)
    lines = [f"- {r.statement(all_callers=everyone)}" for r in resolved[:limit]]
    return "From the code index (written by moot from the symbol graph):\n" + "\n".join(lines)


__all__ = [
    "CallSite",
    "ResolvedSymbol",
    "asks_callers",
    "best_at",
    "candidates",
    "checked_callers",
    "index_section",
    "render_facts",
    "resolve",
    "summary_docstring",
]
